"""Shared options: one source per list, and the cluster options parsed once into a ClusterSpec."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from conftest import main_error
from ibcalc.cli import app
from ibcalc.cli.boundary import FIELD_FLAGS, boundary, guard
from ibcalc.cli.options import (
    ESTIMATE_FIELDS,
    OutputFormat,
    ProtoChoice,
    SweepFormat,
    cluster_options,
)
from ibcalc.cluster.spec import MAX_GPUS, MAX_GPUS_PER_NODE, MAX_NICS_PER_NODE, ClusterSpec
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.render.console import Format

runner = CliRunner()
_MARK = re.compile(r"\{([a-z_]+)\}")


def _commands() -> dict[str, typer.core.TyperCommand]:
    return typer.main.get_command(app).commands  # type: ignore[attr-defined, no-any-return]


def test_choices_come_from_the_library_enums() -> None:
    # --algo is parsed by ibcalc (NCCL's names are taken too); its help lists ibcalc's
    algo = next(p for p in _commands()["allreduce"].params if p.name == "algo")
    assert algo.metavar == "<" + "|".join(["auto", *(a.value for a in Algorithm)]) + ">"
    assert [c.value for c in ProtoChoice] == ["auto", *(p.value for p in Protocol)]
    assert [c.value for c in SweepFormat] == [f.value for f in Format]
    assert [c.value for c in OutputFormat] == ["table", "json"]


def test_one_command_per_collective() -> None:
    commands = _commands()
    for collective in Collective:
        assert collective.command in commands
        assert commands[collective.command].help


#: Fields set through options of their own (the WAN latency from a distance or a round trip).
DERIVED = {"wan_latency_s": ("distance", "rtt")}


def test_cluster_option_defaults_are_the_spec_defaults() -> None:
    params = {p.name: p for p in _commands()["allreduce"].params}
    direct = [field for field in ESTIMATE_FIELDS if field not in DERIVED]
    assert set(direct) <= params.keys()
    for field in direct:
        assert params[field].default == ClusterSpec.model_fields[field].default, field
    for field in set(ESTIMATE_FIELDS) & DERIVED.keys():
        # not given: the field keeps its default (None: the WAN link's own latency)
        assert ClusterSpec.model_fields[field].default is None
        assert [params[name].default for name in DERIVED[field]] == [None, None]


def test_limits_in_help_come_from_the_spec() -> None:
    result = runner.invoke(app, ["allreduce", "--help"], env={"COLUMNS": "200"})
    assert f"(1..{MAX_GPUS})" in result.stdout
    assert f"(1..{MAX_GPUS_PER_NODE})" in result.stdout
    assert f"(1..{MAX_NICS_PER_NODE})" in result.stdout


def test_gap_tp_help_states_the_range_its_refusal_does() -> None:
    """gap's --tp help had stated no range, though --tp 1 is refused as out of range (2..1024)."""
    help_text = runner.invoke(app, ["gap", "--help"], env={"COLUMNS": "200"}).stdout
    refusal = runner.invoke(app, ["gap", "--system", "dgx-h100", "--tp", "1"]).stderr
    assert "Tensor-parallel degree T (2..1024):" in " ".join(help_text.split())
    assert refusal == "error: --tp '1' is out of range (2..1024; see 'ibcalc gap --help')\n"


def _probe() -> typer.Typer:
    probe = typer.Typer()
    seen: list[ClusterSpec] = []

    @probe.command()
    @guard
    @cluster_options("nodes", "sharp", "inter")
    def show(*, cluster: ClusterSpec, tag: str = "x") -> None:
        seen.append(cluster)
        typer.echo(f"{tag} {cluster.model_dump_json()}")

    return probe


def test_cluster_options_build_one_spec() -> None:
    result = runner.invoke(_probe(), ["--nodes", "4", "--sharp", "--fabric", "ndr", "--tag", "y"])
    assert result.exit_code == 0, result.stderr
    tag, spec = result.stdout.split(" ", 1)
    assert tag == "y"
    assert ClusterSpec.model_validate_json(spec) == ClusterSpec(nodes=4, sharp=True, inter="ndr")
    default = runner.invoke(_probe(), [])
    assert ClusterSpec.model_validate_json(default.stdout.split(" ", 1)[1]) == ClusterSpec()


def test_an_option_given_at_its_default_is_given() -> None:
    """`--no-sharp` (the default) is what the user said: set in the spec, so that a command
    that infers the rest (nccl-check's -g) does not take it for an option not given."""
    probe = typer.Typer()
    seen: list[ClusterSpec] = []

    @probe.command()
    @cluster_options("nodes", "sharp")
    def show(*, cluster: ClusterSpec) -> None:
        seen.append(cluster)

    for args, fields in (([], set()), (["--no-sharp"], {"sharp"}), (["--nodes", "2"], {"nodes"})):
        assert runner.invoke(probe, args).exit_code == 0
        assert seen[-1].model_fields_set == fields, args


def test_cluster_option_out_of_range_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    # refused while the options are read (a usage error, which the CLI's boundary words)
    with pytest.raises(typer.Exit), boundary():
        _probe()(["--nodes", "0"], prog_name="probe", standalone_mode=False)
    assert capsys.readouterr().err == (
        f"error: --nodes '0' is out of range (1..{MAX_GPUS}; see 'probe --help')\n"
    )


def test_cluster_options_refuse_what_is_not_a_spec_field() -> None:
    with pytest.raises(ValueError, match="tp"):
        cluster_options("nodes", "tp")


@pytest.mark.parametrize(
    ("spelling", "dtype"), [("half", "fp16"), ("float", "fp32"), ("BF16", "bf16")]
)
def test_dtype_takes_nccl_tests_spellings(spelling: str, dtype: str) -> None:
    result = runner.invoke(
        app, ["allreduce", "--size", "1GB", "--fabric", "ndr", "-d", spelling, "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["dtype"] == dtype


def test_unknown_dtype_suggests_the_closest_or_lists_the_names() -> None:
    # a near miss gets the closest name, as a design file's dtype does (it listed all 22)
    result = runner.invoke(app, ["allreduce", "--size", "1GB", "-d", "fp33"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --dtype 'fp33' is not a known dtype (did you mean fp32? "
        "see 'ibcalc allreduce --help')\n"
    )
    # a width in the name: fp8, not float (fp32; a review)
    result = runner.invoke(app, ["allreduce", "--size", "1GB", "-d", "float8"])
    assert result.stderr == (
        "error: --dtype 'float8' is not a known dtype (did you mean fp8? "
        "see 'ibcalc allreduce --help')\n"
    )
    result = runner.invoke(app, ["allreduce", "--size", "1GB", "-d", "zzz"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --dtype 'zzz' is not a known dtype (use one of ")
    assert "bfloat16" in result.stderr
    assert "fp8_e4m3" in result.stderr


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            found.add(id(body[0].value))
    return found


def test_every_field_mark_the_cli_may_print_has_a_flag() -> None:
    # messages and assumptions name fields as {field}; the CLI fills them from FIELD_FLAGS
    # (design files name them by their YAML keys, so ibcalc/design is not the CLI's to name)
    src = Path(__file__).resolve().parents[2] / "src" / "ibcalc"
    marks: dict[str, str] = {}
    for path in src.rglob("*.py"):
        if "design" in path.relative_to(src).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.JoinedStr):
                parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            elif isinstance(node, ast.Constant):
                parts = [node.value]
            else:
                continue
            for part in parts:
                if isinstance(part, str):
                    marks.update(dict.fromkeys(_MARK.findall(part), path.name))
    assert {"nodes", "inter", "tp_size_bytes", "factor"} <= marks.keys()
    assert {mark: where for mark, where in marks.items() if mark not in FIELD_FLAGS} == {}


def test_check_formats_are_the_renderers() -> None:
    """Every format but 'table' has its renderer; 'table', every other command's name for its
    text output (`check --format table` had been refused as not one of text, json ...), prints
    what 'text' prints."""
    from ibcalc.cli.design import CheckFormat
    from ibcalc.render.check import FORMATS

    assert tuple(f.value for f in CheckFormat if f is not CheckFormat.TABLE) == FORMATS
    design = str(Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml")
    for command in (["check", design], ["design", "show", design]):
        text, table = (
            CliRunner().invoke(app, [*command, "--format", fmt]) for fmt in ("text", "table")
        )
        assert (text.exit_code, table.exit_code) == (0, 0)
        assert table.stdout == text.stdout


#: What each command needs besides the cluster options (the collective commands: --size).
_REQUIRED = {"sweep": ["allreduce"], "train": ["--params", "8B"]}


def _takes(flag: str) -> list[str]:
    return [
        name
        for name, command in _commands().items()
        if any(flag in getattr(p, "opts", []) for p in command.params)
    ]


def test_wan_options_without_sites_are_refused_by_every_command_that_takes_them() -> None:
    # before: `ibcalc allreduce --wan-links 4` without --sites dropped the flag silently
    takers = _takes("--wan-links")
    assert {"allreduce", "sweep", "train"} <= set(takers)
    assert set(_takes("--distance")) == set(takers) == set(_takes("--rtt"))
    for name in takers:
        base = [name, *_REQUIRED.get(name, ["--size", "1GB"]), "--system", "dgx-h100"]
        for extra, line in (
            (
                ["--wan-links", "4"],
                "--wan-links '4' needs several sites: WAN links join sites (give --sites 2 or "
                f"more; see 'ibcalc {name} --help')",
            ),
            (
                ["--rtt", "12ms"],
                "a WAN latency (a distance or round trip between sites) needs several sites "
                "(give --sites 2 or more)",
            ),
            # a WAN id the catalogue lacks is said first, with the closest names (review DH L9)
            (
                ["--wan", "wan-100"],
                "--wan 'wan-100' is not a known link (did you mean wan-100g, wan-10g, wan-1g? "
                f"see 'ibcalc {name} --help')",
            ),
            # ... whatever other WAN option comes with it (review DV)
            (
                ["--wan", "wan-100", "--rtt", "12ms"],
                "--wan 'wan-100' is not a known link (did you mean wan-100g, wan-10g, wan-1g? "
                f"see 'ibcalc {name} --help')",
            ),
            (
                ["--wan", "wan-100g"],
                "--wan 'wan-100g' needs several sites: WAN links join sites (give --sites 2 or "
                f"more; see 'ibcalc {name} --help')",
            ),
        ):
            result = runner.invoke(app, [*base, *extra])
            assert result.exit_code == 2, (name, extra, result.stdout)
            assert result.stdout == ""
            assert result.stderr == f"error: {line}\n", (name, extra)


def test_distance_and_rtt_set_the_wan_latency() -> None:
    base = ["allreduce", "--size", "1GB", "--system", "dgx-h100", "--nodes", "2", "--sites", "2"]
    # 800 km of fibre at 5 us/km: 4 ms one way; a 12 ms round trip: 6 ms one way
    for extra, one_way in ((["--distance", "800km"], "4 ms"), (["--rtt", "12ms"], "6 ms")):
        result = runner.invoke(app, [*base, *extra, "--format", "json"])
        assert result.exit_code == 0, result.stderr
        notes = json.loads(result.stdout)["assumptions"]
        assert any(f"WAN latency {one_way} one way given" in n for n in notes), notes
    both = runner.invoke(app, [*base, "--distance", "800km", "--rtt", "12ms"])
    assert both.exit_code == 2
    assert both.stderr == "error: give --distance or --rtt, not both\n"
    far = runner.invoke(app, [*base, "--rtt", "3s"])
    assert far.exit_code == 2
    assert far.stderr == (
        "error: --rtt '3s' is a WAN latency of 1.5 s one way; at most 1 s is accepted "
        "(see 'ibcalc allreduce --help')\n"
    )


@pytest.mark.parametrize(
    ("given", "line"),
    [
        (["--distance", "800ms"], "--distance '800ms' is a time: give it to --rtt (a round trip"),
        (["--distance", "5s"], "--distance '5s' is a time: give it to --rtt (a round trip"),
        (
            ["--rtt", "800km"],
            "--rtt '800km' is a distance: give it to --distance (the fibre route",
        ),
        # neither kind: the option's own refusal, as before
        (
            ["--distance", "800ft"],
            "--distance '800ft' is not understood (write km, m or mi: 800km, 5000m, 500mi",
        ),
        (["--rtt", "3xs"], "--rtt '3xs' is not understood (use ns, us, ms, s, min or h"),
        # metres or minutes: not sent to --distance as 5 metres; its units name min
        (["--rtt", "5m"], "--rtt '5m' is not understood (use ns, us, ms, s, min or h"),
        (["--rtt", "5 M"], "--rtt '5 M' is not understood (use ns, us, ms, s, min or h"),
        (["--rtt", "5mi"], "--rtt '5mi' is a distance: give it to --distance (the fibre route"),
    ],
)
def test_a_wan_value_of_the_other_option_s_kind_is_sent_to_it(given: list[str], line: str) -> None:
    """train --distance 800ms had been told only the units of a distance; a time given there
    is a round trip's, a distance given to --rtt a fibre route's."""
    base = ["train", "--model", "llama3-70b", "--system", "dgx-h100", "-N", "4", "--sites", "2"]
    result = runner.invoke(app, [*base, "--wan", "wan-100g", *given])
    assert result.exit_code == 2
    assert result.stderr == f"error: {line}; see 'ibcalc train --help')\n"


def test_check_report_formats_are_the_renderers() -> None:
    from ibcalc.cli.logs import CheckFormat
    from ibcalc.render.logs import CHECK_FORMATS

    assert tuple(f.value for f in CheckFormat) == CHECK_FORMATS


@pytest.mark.parametrize(
    ("command", "formats"),
    [
        (["train"], OutputFormat),
        (["infer"], OutputFormat),
        (["checkpoint", "--storage", "aws-s3"], OutputFormat),
        (["calibrate", "x.log"], OutputFormat),
        (["nccl-check", "x.log"], None),
    ],
)
def test_format_choices_come_from_one_list(command: list[str], formats: object) -> None:
    from ibcalc.cli.logs import CheckFormat

    choices = [c.value for c in (formats if formats is not None else CheckFormat)]  # type: ignore[attr-defined]
    result = runner.invoke(app, [*command, "--format", "xml"])
    assert result.exit_code == 2
    listed = ", ".join(f"'{c}'" for c in choices)
    assert f"'xml' is not one of {listed}" in result.stderr


def test_choices_take_any_case() -> None:
    """--algo RING, --proto ll and --format JSON were refused while -d FP32 and --system
    DGX-H100 were taken: every choice is matched without regard to case."""
    result = CliRunner().invoke(
        app, ["allreduce", "-s", "1GB", "--algo", "RING", "--proto", "ll", "--format", "JSON"]
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["algorithm"], data["protocol"]) == ("ring", "LL")
    sweep = CliRunner().invoke(
        app, ["sweep", "allreduce", "-b", "1M", "-e", "1M", "--format", "CSV"]
    )
    assert sweep.exit_code == 0, sweep.stderr
    assert sweep.stdout.startswith("inter,")


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--model", "llama3-8b", "--grad-dtype", "FP32", "--host-cpu", "AMD"],
        ["infer", "--model", "llama3-8b", "--dtype", "FP16", "--kv-dtype", "FP8"],
        ["checkpoint", "--model", "llama3-8b", "--storage", "aws-s3", "--weights-dtype", "FP32"],
        ["links", "--format", "JSON"],
    ],
)
def test_every_choice_takes_any_case(args: list[str]) -> None:
    """train --grad-dtype FP32 and --host-cpu AMD were refused after --algo RING was taken."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr


def test_a_flag_not_given_is_not_named_as_ignored() -> None:
    """`sweep --inter ndr` copied the spec with every default as if given, and printed
    '--cross-leaf 1 ignored: the leaves are not oversubscribed'; a flag that is given still is."""
    args = ["sweep", "allreduce", "--system", "dgx-h100", "-N", "4", "--inter", "ndr"]
    out = CliRunner().invoke(app, [*args, "-b", "1M", "-e", "1M"]).output
    assert "--cross-leaf" not in out
    out = CliRunner().invoke(app, [*args, "--cross-leaf", "0.5", "-b", "1M", "-e", "1M"]).output
    assert "--cross-leaf 0.5 ignored: the leaves are not oversubscribed" in " ".join(out.split())


def test_nccl_check_reports_the_dtype_it_is_given_under_ibcalc_s_name() -> None:
    """`nccl-check --dtype half` printed 'all_gather half' and 'dtype = half [flag]', where every
    other command says fp16."""
    log = (
        Path(__file__).resolve().parents[2]
        / "benchmarks/data/sweeps/12_allgather_2node_8xH100_ib.txt"
    )
    result = runner.invoke(app, ["nccl-check", str(log), "--dtype", "half", "--format", "json"])
    # the log's rows are fp32: the flag contradicts them, an error (review BN), named as fp16
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    (error,) = report["errors"]
    assert error["message"] == "run 1: the rows are fp32's, not fp16's; re-run without --dtype"
    facts = {a["field"]: a["value"] for a in report["runs"][0]["assumptions"]}
    assert facts["dtype"] == "fp16"
    assert "half" not in result.stdout


def test_nccl_check_names_the_logs_dtype_only_when_the_flag_differs() -> None:
    """`--dtype float` on a log of fp32 rows listed 'dtype = fp32 [flag]: given by the caller (the
    log says fp32)', an assumption that assumed nothing; as for -N and -g, the log's value is
    named only where the flag replaces it."""
    log = (
        Path(__file__).resolve().parents[2]
        / "benchmarks/data/sweeps/12_allgather_2node_8xH100_ib.txt"
    )
    same = runner.invoke(app, ["nccl-check", str(log), "--dtype", "float"])
    assert same.exit_code == 0, same.stderr
    assert "dtype =" not in same.stdout
    assert "all_gather fp32" in same.stdout
    other = runner.invoke(app, ["nccl-check", str(log), "--dtype", "bf16"])
    assert "dtype = bf16 [flag]: given by the caller (the log says fp32)" in " ".join(
        other.stdout.split()
    )


@pytest.mark.parametrize(("domain", "domains"), [(None, 1), ("72", 1), ("36", 2), ("4", 18)])
def test_the_json_of_an_estimate_gives_the_scale_up_domains_used(
    domain: str | None, domains: int
) -> None:
    """18 GB200 trays of 4 GPUs: one NVL72 domain, two of 36 or 18 of one tray (72 / size)."""
    args = ["allreduce", "-s", "1G", "--system", "gb200-nvl72", "-N", "18", "--format", "json"]
    if domain is not None:
        args += ["--scale-up-domain", domain]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["ranks"], data["domains"]) == (72, domains)


def test_scale_up_domain_help_lists_the_sizes_gb200_takes() -> None:
    """The help said 'a multiple of 4 up to 72', and 16, 20, 28 ... 68 were refused (they do not
    divide 72): every multiple of 4 up to 72 is accepted exactly when the help lists it."""
    shown = runner.invoke(app, ["allreduce", "--help"], env={"COLUMNS": "200"})
    listed = re.search(r"gb200-nvl72: ([0-9, or]+);", " ".join(shown.stdout.split()))
    assert listed is not None
    sizes = {int(n) for n in re.findall(r"[0-9]+", listed.group(1))}
    assert sizes == {4, 8, 12, 24, 36, 72}  # the multiples of 4 that divide 72
    for size in range(4, 76, 4):
        args = ["allreduce", "-s", "1G", "--system", "gb200-nvl72", "-N", "18"]
        result = runner.invoke(app, [*args, "--scale-up-domain", str(size)])
        assert (result.exit_code == 0) == (size in sizes), (size, result.stderr)


def test_gap_help_states_its_own_lower_bound_of_gpus_per_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """gap's help said 1..1024, then refused -g 1 with '(2..1024)'."""
    result = runner.invoke(app, ["gap", "--help"], env={"COLUMNS": "200"})
    assert f"GPUs per node (2..{MAX_GPUS_PER_NODE})" in result.stdout
    # and every refusal of -g says that range (-g 0 said 1..1024)
    for given in ("1", "0", "-3", str(MAX_GPUS_PER_NODE + 1)):
        assert main_error(["gap", "-g", given, "--system", "dgx-h100"], capsys) == (
            f"error: --gpus-per-node '{given}' is out of range (2..{MAX_GPUS_PER_NODE}; "
            "see 'ibcalc gap --help')\n"
        )
    # the estimate commands keep ClusterSpec's range
    result = runner.invoke(app, ["allreduce", "--help"], env={"COLUMNS": "200"})
    assert f"GPUs per node (1..{MAX_GPUS_PER_NODE})" in result.stdout


@pytest.mark.parametrize(("given", "ratio"), [("2:1", 2.0), ("4:3", 4 / 3), ("2", 2.0)])
def test_oversubscription_takes_the_design_files_ratio_notation(given: str, ratio: float) -> None:
    """--oversubscription 2:1 had been refused ('not a number (write it in digits)') although
    design files take it; 4:3 is 1.333..., the same estimate as the decimal."""
    args = ["allreduce", "-s", "1GB", "--system", "dgx-h100", "-N", "4", "--format", "json"]
    written = runner.invoke(app, [*args, "--oversubscription", given])
    assert written.exit_code == 0, written.output
    decimal = runner.invoke(app, [*args, "--oversubscription", repr(ratio)])
    assert json.loads(written.output)["oversubscription"] == pytest.approx(ratio)
    assert json.loads(written.output)["time_s"] == json.loads(decimal.output)["time_s"]


def test_an_oversubscription_written_up_to_down_gets_the_hint() -> None:
    result = runner.invoke(app, ["allreduce", "-s", "1GB", "--oversubscription", "0.5"])
    assert result.exit_code == 2
    assert "did you mean 2:1?" in result.output


def test_an_oversubscription_of_a_third_is_offered_3_to_1() -> None:
    """0.33 is 1/3 at two decimals; the hint had been 1/0.33 = 3.03:1."""
    args = ["allreduce", "-s", "1GB", "--system", "dgx-h100", "-N", "4"]
    result = runner.invoke(app, [*args, "--oversubscription", "0.33"])
    assert result.exit_code == 2
    assert "--oversubscription '0.33' must be >= 1 (down:up; did you mean 3:1?" in result.output
