"""``--nccl-algo`` and ``--nccl-proto``: NCCL_ALGO's and NCCL_PROTO's syntax on an estimate, as
nccl-check reads them from a log. NCCL chooses among what a setting leaves; one algorithm or
protocol left gives what forcing it with ``--algo`` / ``--proto`` gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from ibcalc.cli import app, main

H100_2 = ["--system", "dgx-h100", "--nodes", "2"]


def _json(*args: str) -> Any:
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_one_protocol_left_is_the_one_forced() -> None:
    """--nccl-proto simple gives --proto simple's estimate to the bit (8 B on 2 x DGX H100:
    NCCL's own choice there is tree/LL) and says where the choice came from."""
    left = _json("allreduce", "--size", "8B", *H100_2, "--nccl-proto", "simple")
    forced = _json("allreduce", "--size", "8B", *H100_2, "--proto", "simple")
    own = _json("allreduce", "--size", "8B", *H100_2)
    assert own["protocol"] == "LL"
    assert left["protocol"] == "Simple"
    assert left["time_s"] == forced["time_s"]
    assert any("--nccl-proto simple leaves NCCL only Simple" in a for a in left["assumptions"])


def test_an_exclusion_leaves_nccls_choice_among_the_rest() -> None:
    """--nccl-algo ^nvls,nvlstree on 2 x DGX H100 at 1 GB: NCCL's own pick is NVLSTree; without
    it the estimate is the pick among the rest, the same as forcing that algorithm."""
    own = _json("allreduce", "--size", "1GB", *H100_2)
    assert own["algorithm"] == "nvlstree"
    rest = _json("allreduce", "--size", "1GB", *H100_2, "--nccl-algo", "^nvls,nvlstree")
    assert rest["algorithm"] not in ("nvls", "nvlstree")
    forced = _json("allreduce", "--size", "1GB", *H100_2, "--algo", rest["algorithm"])
    assert rest["time_s"] == forced["time_s"]
    assert rest["time_s"] > own["time_s"]


def test_a_name_nccl_does_not_list_is_refused_in_one_line() -> None:
    """The setting is quoted as typed, with the command's --help hint, as every refusal of one
    option's value is (it had read '--nccl-algo ring,fast: fast is not a name NCCL lists')."""
    result = CliRunner().invoke(
        app, ["allreduce", "--size", "8B", *H100_2, "--nccl-algo", "ring,fast"]
    )
    assert result.exit_code == 2
    assert result.output == (
        "error: --nccl-algo 'ring,fast': fast is not a name NCCL lists "
        "(see 'ibcalc allreduce --help')\n"
    )
    assert "Traceback" not in result.output
    # also where the setting is not applied (all-to-all and send/recv are point-to-point): a
    # typo is one whatever the collective (review BD: exit 0 there, 2 on the others)
    for command in (["alltoall", "--size", "1M"], ["sweep", "sendrecv", "-b", "1M", "-e", "2M"]):
        typo = CliRunner().invoke(app, [*command, *H100_2, "--nccl-proto", "Simple,foo"])
        assert (typo.exit_code, typo.output.splitlines()) == (
            2,
            [
                "error: --nccl-proto 'Simple,foo': foo is not a name NCCL lists "
                f"(see 'ibcalc {command[0]} --help')"
            ],
        )
    known = CliRunner().invoke(app, ["alltoall", "--size", "1M", *H100_2, "--nccl-proto", "ll"])
    assert known.exit_code == 0
    assert "--nccl-proto ll is not applied: alltoall is made of NCCL's point-to-point" in (
        " ".join(known.output.split())
    )


@pytest.mark.parametrize(
    ("flag", "value", "typo", "near"),
    [
        ("--nccl-algo", "rng", "rng", "Ring"),
        ("--nccl-algo", "^nvlstre", "nvlstre", "NVLSTree"),
        ("--nccl-algo", "allredce:ring", "allredce", "allreduce"),
        ("--nccl-proto", "ll12", "ll12", "LL128"),
    ],
)
def test_a_name_nccl_does_not_list_is_offered_the_closest(
    flag: str, value: str, typo: str, near: str
) -> None:
    """As --algo rng is offered ring; a typo in the setting had been offered nothing."""
    result = CliRunner().invoke(app, ["allreduce", "--size", "8B", *H100_2, flag, value])
    words = f"{typo} is not a name NCCL lists (did you mean {near}?"
    assert result.output == f"error: {flag} '{value}': {words} see 'ibcalc allreduce --help')\n"
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        # a collective's name where an algorithm belongs had been offered itself ('allreduce
        # is not a name NCCL lists (did you mean allreduce?')
        ("--nccl-algo", "allreduce"),
        # a typo in the list had been offered a collective ('reduc': did you mean reduce?)
        ("--nccl-proto", "reduc"),
    ],
)
def test_a_name_in_the_list_is_offered_no_collective(flag: str, value: str) -> None:
    """The list names algorithms or protocols, a prefix collectives: each is offered its own."""
    result = CliRunner().invoke(app, ["allreduce", "--size", "8B", *H100_2, flag, value])
    words = f"{value} is not a name NCCL lists"
    assert result.output == f"error: {flag} '{value}': {words} (see 'ibcalc allreduce --help')\n"
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("command", "value", "name"),
    [("allreduce", "$ALGO", "$ALGO"), ("allreduce", "ring,$x", "$x"), ("alltoall", "$x", "$x")],
)
def test_a_dollar_typed_in_a_setting_is_a_name_like_any_other(
    command: str, value: str, name: str
) -> None:
    """A '$' reached the command line quoted, so no shell expands it: it is a name NCCL does
    not list. It had been refused as a log's job script is read, 'where a shell expanded it,
    the log does not show to what', with no log in sight (all-reduce), or taken as 'not
    applied' (all-to-all), where any other name NCCL does not list is refused."""
    result = CliRunner().invoke(app, [command, "--size", "8B", *H100_2, "--nccl-algo", value])
    words = f"{name} is not a name NCCL lists"
    assert result.output == (
        f"error: --nccl-algo '{value}': {words} (see 'ibcalc {command} --help')\n"
    )
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("allgather:rng", "rng is not a name NCCL lists (did you mean Ring?"),
        ("allgather:rng;allreduce:tree", "rng is not a name NCCL lists (did you mean Ring?"),
        ("allgather:Simple,LL12", "LL12 is not a name NCCL lists (did you mean LL128?"),
    ],
)
def test_a_typo_in_another_collective_s_list_is_refused(value: str, named: str) -> None:
    """A name NCCL does not list is a typo whichever collective's list holds it: an all-reduce
    with '--nccl-algo allgather:rng' had gone on, the setting said to leave all_reduce to NCCL
    (exit 0), where 'allreduce:rng' is refused."""
    flag = "--nccl-proto" if "Simple" in value else "--nccl-algo"
    result = CliRunner().invoke(app, ["allreduce", "--size", "8B", *H100_2, flag, value])
    assert result.output == f"error: {flag} '{value}': {named} see 'ibcalc allreduce --help')\n"
    assert result.exit_code == 2


def test_a_setting_that_names_nothing_is_refused_in_one_line() -> None:
    """'^', ';;;' and '' name no algorithm or protocol: NCCL reads them as no setting, and the
    estimate had been NCCL's own choice, exit 0, without a word (review DH). Empty items beside
    a name are NCCL's syntax and kept ('ll,,' leaves LL)."""
    for flag, value in (("--nccl-algo", "^"), ("--nccl-algo", ";;;"), ("--nccl-proto", "")):
        result = CliRunner().invoke(app, ["allreduce", "--size", "8B", *H100_2, flag, value])
        assert result.exit_code == 2, (flag, value)
        (line,) = result.output.splitlines()
        assert line.startswith(f"error: {flag} '{value}' names nothing: NCCL reads it as no ")
    kept = _json("allreduce", "--size", "8B", *H100_2, "--nccl-proto", "ll,,")
    assert kept["protocol"] == "LL"


def test_a_sweep_takes_the_setting_at_every_size() -> None:
    swept = _json(
        "sweep", "allreduce", "-b", "8", "-e", "1G", "-f", "16", *H100_2, "--nccl-proto", "^LL128"
    )
    (fabric,) = swept  # one entry per fabric swept
    protocols = {r["protocol"] for r in fabric["rows"]}
    assert "LL128" not in protocols
    assert protocols == {"LL", "Simple"}


def test_the_choice_a_setting_leaves_is_not_said_to_be_forced() -> None:
    """--nccl-algo ring had been passed on as a forced algorithm: the notes said '(--algo
    forced)' of a choice the user never forced."""
    result = CliRunner().invoke(
        app, ["allreduce", "--size", "1MiB", *H100_2, "--nccl-algo", "ring"]
    )
    assert result.exit_code == 0
    out = " ".join(result.output.split())
    assert "--algo forced" not in out
    assert "--nccl-algo ring leaves NCCL only Ring" in out
    assert "algorithm ring /" in out


def test_ll128_left_on_where_the_model_does_not_price_it_is_said() -> None:
    """Two PCIe A100s: NCCL, its protocols set, runs LL128 there; the model does not price it.
    --nccl-proto ll128 had been refused as if LL and Simple were the reason alone."""
    result = CliRunner().invoke(
        app, ["allreduce", "--size", "64MiB", "--system", "a100-pcie-pair", "--nccl-proto", "ll128"]
    )
    assert result.exit_code == 2
    assert "LL128, left on, is priced only where NCCL's default allows it" in result.output
    result = CliRunner().invoke(
        app, ["allreduce", "--size", "64MiB", "--system", "a100-pcie-pair", "--nccl-proto", "^ll"]
    )
    assert result.exit_code == 0
    assert "the model prices LL128 only where NCCL's default allows it" in " ".join(
        result.output.split()
    )


def test_the_sharp_what_if_names_the_setting_that_rules_sharp_out() -> None:
    """With SHARP's algorithms or its protocol ruled out by a setting, the --sharp hint had
    blamed the cluster ('CollNet takes at most 8 GPUs ...') on 2 x DGX H100, whose 8-GPU nodes
    and NVLS run SHARP without the setting."""
    algo = CliRunner().invoke(
        app,
        [
            "allreduce",
            "--size",
            "1GB",
            *H100_2,
            "--nccl-algo",
            "^nvls,nvlstree,collnetdirect,collnetchain",
        ],
    )
    out = " ".join(algo.output.split())
    assert "--sharp would not change this all-reduce: --nccl-algo ^nvls" in out
    assert "CollNet takes at most" not in out
    proto = CliRunner().invoke(app, ["allreduce", "--size", "8B", *H100_2, "--nccl-proto", "ll"])
    out = " ".join(proto.output.split())
    assert "--nccl-proto ll rules out LL128, Simple; SHARP runs Simple" in out


def test_the_ll128_note_is_for_hardware_where_the_model_does_not_price_it() -> None:
    """The note had been added on every system (DGX H100 too, where LL128 is priced and
    chosen)."""
    nvlink = CliRunner().invoke(
        app, ["allreduce", "--size", "1MiB", *H100_2, "--nccl-proto", "^ll"]
    )
    assert nvlink.exit_code == 0
    assert "leaves on, even where its default keeps it off" not in " ".join(nvlink.output.split())


def test_the_one_algorithm_a_setting_leaves_is_refused_with_its_own_reason() -> None:
    """--nccl-algo collnetdirect without --sharp: the refusal had named only the algorithms
    the setting rules out, not why CollNet does not apply."""
    args = ["allreduce", "--size", "1GB", *H100_2, "--nccl-algo", "collnetdirect"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "--nccl-algo collnetdirect rules out Ring, Tree" in out
    assert "collnet: CollNet needs IB SHARP, turned on with --sharp" in out


def test_the_sharp_hint_names_the_setting_on_nodes_without_nvls() -> None:
    """4 x DGX A100 with CollNet ruled out: the hint had said 'CollNet takes at most 8 GPUs
    per scale-up domain' of 8-GPU nodes (NVLS, never available on A100, had kept the
    setting from being named)."""
    args = ["allreduce", "--size", "1GB", "--system", "dgx-a100", "--nodes", "4"]
    result = CliRunner().invoke(app, [*args, "--nccl-algo", "^collnetdirect,collnetchain"])
    out = " ".join(result.output.split())
    assert "--sharp would not change this all-reduce: --nccl-algo ^collnetdirect" in out
    assert "CollNet takes at most" not in out


def test_a_refusal_keeps_ibcalcs_what_ifs_apart_from_nccls_algorithms() -> None:
    """--nccl-algo collnet without --sharp leaves NCCL nothing; the refusal had called ibcalc's
    hierarchical and rhd 'applicable' as if NCCL could run them."""
    args = ["allreduce", "--size", "1GB", *H100_2, "--nccl-algo", "collnet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert out.endswith(
        "applicable: none of NCCL's; what-ifs NCCL does not implement: hierarchical, rhd"
    )


def test_a_sweep_says_why_sharp_would_not_change_it_under_a_setting() -> None:
    """A sweep with --nccl-algo ring (every algorithm SHARP brings ruled out), a protocol other
    than Simple, or --algo ring kept the bare 'enable with --sharp' that the estimate at any of
    its sizes replaces with why SHARP would not change it; an exclusion that leaves NVLS keeps
    the hint."""
    sweep = ["sweep", "allreduce", "-b", "1M", "-e", "4M", "--system", "dgx-h100", "-N", "4"]

    def notes(*extra: str) -> str:
        result = CliRunner().invoke(app, [*sweep, *extra])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    ring = notes("--nccl-algo", "ring")
    assert (
        "ndr supports SHARP (CollNet); --sharp would not change this all-reduce: "
        "--nccl-algo ring rules out Tree, NVLS" in ring
    )
    assert "enable with --sharp" not in ring
    assert "LL forced (--proto), and SHARP runs Simple" in notes("--proto", "ll")
    assert "--nccl-proto ll,ll128 rules out Simple; SHARP runs Simple" in notes(
        "--nccl-proto", "ll,ll128"
    )
    assert "--sharp would not change this all-reduce (--algo forced)" in notes("--algo", "ring")
    assert "enable with --sharp" in notes("--nccl-algo", "^collnetdirect,collnetchain")
    assert "enable with --sharp" in notes()


def test_a_sweep_and_its_estimates_give_the_same_reason_sharp_would_not_change_them() -> None:
    """The sweep and the estimate had checked the reasons in another order ('--nccl-algo ring
    rules out ...' against 'LL forced (--proto), and SHARP runs Simple'), and a sweep kept
    'enable with --sharp' where the settings leave only a SHARP algorithm the cluster cannot run
    (DGX A100 has no NVLS; a review)."""

    def said(args: list[str]) -> str:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        out = " ".join(result.output.split())
        return out[out.index("supports SHARP") :].split(" - ")[0].split(" note: ")[0]

    h100 = ["--system", "dgx-h100", "-N", "4"]
    cases = [
        ([*h100, "--proto", "ll", "--nccl-algo", "ring"], "LL forced"),
        (
            [*h100, "--nccl-algo", "tree,nvls", "--nccl-proto", "ll,ll128"],
            "--nccl-proto ll,ll128 rules out Simple; SHARP runs Simple",
        ),
        (
            ["--system", "dgx-a100", "-N", "4", "--nccl-algo", "^collnetdirect,collnetchain"],
            "--nccl-algo ^collnetdirect,collnetchain rules out CollnetDirect, CollnetChain",
        ),
    ]
    for flags, reason in cases:
        sweep = said(["sweep", "allreduce", "-b", "8", "-e", "4G", "-f", "64", *flags])
        assert reason in sweep
        for size in ("8B", "1MB", "4GB"):
            assert said(["allreduce", "--size", size, *flags]) == sweep


def test_a_protocol_refusal_names_the_protocols_only_what_ifs_run_apart() -> None:
    """'protocol Simple does not apply ...; applicable: Simple' had been said where only
    ibcalc's hierarchical and rhd run Simple (--nccl-algo collnet without --sharp)."""
    args = ["allreduce", "--size", "1MB", *H100_2, "--proto", "simple", "--nccl-algo", "collnet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert " ".join(result.output.split()).endswith(
        "applicable: none of NCCL's; what-ifs NCCL does not implement (hierarchical, rhd): Simple"
    )


@pytest.mark.parametrize(
    ("command", "flag", "value", "refusal"),
    [
        # an empty name between two names, refused as '--inter ndr,,hdr' is (NCCL would drop it)
        (
            "allreduce",
            "--nccl-algo",
            "ring,,tree",
            "has an empty name between commas (e.g. --nccl-algo Ring,Tree)",
        ),
        (
            "sweep",
            "--nccl-proto",
            "^ll, ,simple",
            "has an empty name between commas (e.g. --nccl-proto LL128,Simple)",
        ),
        (
            "allreduce",
            "--nccl-algo",
            "allreduce,,allgather:ring",
            "has an empty name between commas (e.g. --nccl-algo Ring,Tree)",
        ),
        # a '^' past a list's start: NCCL reads '^simple' as a name, matching nothing (it had
        # been offered "did you mean Simple?"); its '^' negates a whole list, from its start
        (
            "allreduce",
            "--nccl-proto",
            "ll,^simple",
            "has '^' inside a list: '^' negates the whole list and goes only at its start "
            "(^ll,simple rules out every name in it)",
        ),
        (
            "sweep",
            "--nccl-algo",
            "Ring, ^Tree",
            "has '^' inside a list: '^' negates the whole list and goes only at its start "
            "(^Ring,Tree rules out every name in it)",
        ),
        (
            "allreduce",
            "--nccl-algo",
            "allreduce:ring,^tree;allgather:ring",
            "has '^' inside a list: '^' negates the whole list and goes only at its start "
            "(^ring,tree rules out every name in it)",
        ),
        (
            "allreduce",
            "--nccl-proto",
            "^^simple",
            "has '^' inside a list: '^' negates the whole list and goes only at its start "
            "(^simple rules out every name in it)",
        ),
        # two lists for one collective: NCCL's documentation gives each one, and which of two
        # NCCL keeps has no source here (both had been taken, the last winning unsaid)
        (
            "allreduce",
            "--nccl-algo",
            "allreduce:tree;allreduce:ring",
            "gives allreduce two lists (tree, ring); NCCL's documentation does not say which it "
            "keeps: give one",
        ),
        (
            "allreduce",
            "--nccl-algo",
            "allreduce:tree;ring",
            "gives allreduce two lists (tree, ring); NCCL's documentation does not say which it "
            "keeps: give one",
        ),
        (
            "sweep",
            "--nccl-proto",
            "simple;ll",
            "gives every collective two lists (simple, ll); NCCL's documentation does not say "
            "which it keeps: give one",
        ),
    ],
)
def test_a_setting_with_an_empty_name_a_caret_inside_or_two_lists_for_one_is_refused(
    command: str, flag: str, value: str, refusal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review EK 2: '--nccl-algo ring,,tree' and 'allreduce:tree;allreduce:ring' had been taken
    without a word; 'll,^simple' is refused saying where NCCL reads '^'."""
    argv = ["sweep", "allreduce"] if command == "sweep" else [command, "--size", "8B"]
    with pytest.raises(SystemExit) as info:
        main([*argv, *H100_2, flag, value])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    # a refusal that ends with an example takes the hint inside it, as one parenthetical
    see = f"see 'ibcalc {command} --help')"
    line = f"{refusal[:-1]}; {see}" if refusal.endswith(")") else f"{refusal} ({see}"
    assert err == f"error: {flag} '{value}' {line}\n"


def test_a_list_for_every_collective_and_one_for_a_collective_are_taken() -> None:
    """NCCL's syntax, [^]<algo>[,<algo>...][;<coll>:[^]<algo>...]: a plain list first, then
    lists per collective; a trailing comma is dropped, as NCCL drops it."""
    both = _json("allreduce", "--size", "1GB", *H100_2, "--nccl-algo", "ring;allreduce:tree,")
    assert both["algorithm"] == "tree"
