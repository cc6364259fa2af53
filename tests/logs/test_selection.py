"""NCCL_ALGO and NCCL_PROTO as NCCL reads them (its environment-variable documentation): a list
of what NCCL may use, a leading ^ for what it may not, per collective with ``func:list;...``;
and what nccl-check and calibrate then expect of a published run that sets one."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.releases import for_release
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.errors import AlgorithmNotApplicableError
from ibcalc.facade import estimate_on
from ibcalc.logs import Run, parse_log
from ibcalc.logs.calibrate import calibrate
from ibcalc.logs.check import check_run
from ibcalc.logs.cluster import infer_spec
from ibcalc.logs.env import LogEnvironment, scan_environment
from ibcalc.logs.results import Assumption, RunCheck
from ibcalc.logs.selection import (
    NCCL_ALGO_NAMES,
    NCCL_PROTO_NAMES,
    nccl_selection,
    run_selection,
    with_selection,
)

SWEEPS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
SWEEP_10 = SWEEPS / "10_allreduce_2node_8xH100_ib.txt"
AR = Collective.ALL_REDUCE
ALL_ALGOS = frozenset(NCCL_ALGO_NAMES.values())
COLLNET = Algorithm.COLLNET_DIRECT


@pytest.mark.parametrize(
    ("value", "collective", "allowed"),
    [
        ("Ring", AR, {Algorithm.RING}),
        ("ring,TREE", AR, {Algorithm.RING, Algorithm.TREE}),
        ("^NVLS", AR, ALL_ALGOS - {Algorithm.NVLS}),
        (
            "^nvls_tree,CollNetDirect",
            AR,
            ALL_ALGOS - {Algorithm.NVLS_TREE, COLLNET},
        ),
        ("allreduce:tree,ring;allgather:ring", AR, {Algorithm.TREE, Algorithm.RING}),
        ("allreduce:tree,ring;allgather:ring", Collective.ALL_GATHER, {Algorithm.RING}),
        ("AllReduce:^tree", AR, ALL_ALGOS - {Algorithm.TREE}),
        # a collective the per-collective form does not name keeps every algorithm
        ("allreduce:tree", Collective.REDUCE_SCATTER, None),
        # a prefix may name several collectives
        ("allreduce,allgather:ring;broadcast:tree", Collective.ALL_GATHER, {Algorithm.RING}),
        # NCCL 2.9-2.13 named its one CollNet algorithm CollNet
        ("CollNet,Ring", AR, {COLLNET, Algorithm.RING}),
        # one ^ excludes; '^Tree' after it names no algorithm, so nothing is excluded
        ("^^Tree", AR, ALL_ALGOS),
    ],
)
def test_nccl_algo_as_nccl_reads_it(
    value: str, collective: Collective, allowed: set[Algorithm] | None
) -> None:
    got = nccl_selection(value, NCCL_ALGO_NAMES, collective).allowed
    assert got == (None if allowed is None else frozenset(allowed))


def test_nccl_proto_lists_exclusions_and_unknown_names() -> None:
    assert nccl_selection("Simple", NCCL_PROTO_NAMES, AR).allowed == {Protocol.SIMPLE}
    assert nccl_selection("^LL128", NCCL_PROTO_NAMES, AR).allowed == {
        Protocol.LL,
        Protocol.SIMPLE,
    }
    odd = nccl_selection("LL,Fast", NCCL_PROTO_NAMES, AR)
    assert odd.allowed == {Protocol.LL}
    assert odd.unknown == ("Fast",)


def _sweep_10(setting: str | None) -> tuple[str, Run, LogEnvironment]:
    """Sweep 10 (2 x 4 H100 on NDR200, NCCL 2.22.3, published) with NCCL's 'set by environment'
    line for ``setting`` (``NCCL_PROTO=Simple``) after its version line."""
    text = SWEEP_10.read_text(encoding="utf-8")
    if setting is not None:
        name, value = setting.split("=", 1)
        line = f"host:1:1 [0] NCCL INFO {name} set by environment to {value}"
        text = re.sub(r"(.*NCCL version.*\n)", rf"\1{line}\n", text, count=1)
    (run,) = parse_log(text, source=str(SWEEP_10)).runs
    return text, run, scan_environment(text, 1, run.line_end)


def test_a_run_limited_to_simple_is_expected_at_simples_times() -> None:
    """NCCL_PROTO=Simple had been noted and not applied: the expectation took LL at small
    sizes (23 us at 8 B on sweep 10's cluster), a run limited to Simple then reading slow. Each
    row's expectation is now the Simple estimate of the release the log states, to the bit."""
    catalogue = load_catalogue(use_env=False)
    _, run, env = _sweep_10("NCCL_PROTO=Simple")
    check = check_run(run, catalogue=catalogue, env=env)
    _, plain_run, plain_env = _sweep_10(None)
    plain = check_run(plain_run, catalogue=catalogue, env=plain_env)
    assert {r.protocol for r in plain.rows if r.size_bytes <= 65536} == {"LL"}
    assert {r.protocol for r in check.rows} == {"Simple"}
    cluster = _cluster_of(run, env)
    params = for_release(builtin_cost_params(), "2.22.3")
    for row in check.rows[:: max(1, len(check.rows) // 6)]:
        est = estimate_on(cluster, AR, row.size_bytes, params=params, protocol=Protocol.SIMPLE)
        assert row.expected_time_us == pytest.approx(est.time_s * 1e6, rel=1e-12)
    small = next(r for r in check.rows if r.size_bytes == 8)
    assert (
        small.expected_time_us
        > 2 * next(r for r in plain.rows if r.size_bytes == 8).expected_time_us
    )
    said = [a for a in check.assumptions if a.field == "protocol"]
    assert said
    assert said[0].source == "environment"
    assert "NCCL_PROTO=Simple (line " in said[0].evidence


def test_an_excluded_protocol_and_one_that_leaves_nothing() -> None:
    """^LL128 keeps NCCL's choice among LL and Simple (the published run's expectation has
    LL128 at mid sizes); a list ruling out every protocol leaves no expectation, said so."""
    catalogue = load_catalogue(use_env=False)
    _, plain_run, plain_env = _sweep_10(None)
    plain = check_run(plain_run, catalogue=catalogue, env=plain_env)
    assert "LL128" in {r.protocol for r in plain.rows}
    _, run, env = _sweep_10("NCCL_PROTO=^LL128")
    check = check_run(run, catalogue=catalogue, env=env)
    assert "LL128" not in {r.protocol for r in check.rows}
    assert {r.protocol for r in check.rows} == {"LL", "Simple"}
    _, run, env = _sweep_10("NCCL_PROTO=^Simple,LL,LL128")
    check = check_run(run, catalogue=catalogue, env=env)
    assert check.rows == []
    assert any("leaves NCCL no protocol for all_reduce" in a.evidence for a in check.assumptions)


def test_the_point_to_point_collectives_do_not_take_the_settings() -> None:
    said: list[Assumption] = []
    env = scan_environment("x:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n", 1, 1)
    selection = run_selection(env, Collective.ALL_TO_ALL, builtin_cost_params(), said)
    assert selection.overlay is None
    assert selection.forced is None
    assert "is not applied: alltoall" in said[0].evidence


def test_a_ruled_out_protocol_is_refused_with_the_settings_words() -> None:
    """Forcing a protocol the log's setting rules out names the setting as the reason."""
    said: list[Assumption] = []
    env = scan_environment("x:1:1 [0] NCCL INFO NCCL_PROTO set by environment to ^LL128\n", 1, 1)
    selection = run_selection(env, AR, builtin_cost_params(), said)
    params = with_selection(builtin_cost_params(), selection.overlay)
    assert params.tuner_view().nccl_tuner.protocols[Protocol.LL128] == 0
    assert params.nccl_tuner.protocols[Protocol.LL128] == 1  # the tuner view's only
    _, run, env = _sweep_10(None)
    cluster = _cluster_of(run, env)
    with pytest.raises(AlgorithmNotApplicableError, match=r"NCCL_PROTO=\^LL128 \(line 1\)"):
        estimate_on(cluster, AR, 2**22, params=params, protocol=Protocol.LL128)


def _cluster_of(run: Run, env: LogEnvironment) -> ResolvedCluster:
    catalogue = load_catalogue(use_env=False)
    return resolve_cluster(catalogue, infer_spec(run, catalogue, env=env)[0])


def test_calibrate_fits_a_run_with_the_protocols_it_was_limited_to() -> None:
    """calibrate had fitted every run with NCCL's own choice: a run limited to Simple would
    have had its small sizes' time put down to the network's latency."""
    _, run, env = _sweep_10("NCCL_PROTO=Simple")
    result = calibrate([run], sources=["s10"], envs=[env])
    assert any("protocol = Simple (NCCL_PROTO=Simple (line" in note for note in result.assumptions)
    # the published rows ran with LL at small sizes: against Simple's expectation (over twice
    # LL's at 8 B, above) they read far faster than the same run fitted without the setting
    _, plain_run, plain_env = _sweep_10(None)
    plain = calibrate([plain_run], sources=["s10"], envs=[plain_env])
    assert result.rms_before > 2 * plain.rms_before
    # the override's header says how the run was priced
    from ibcalc.logs.calibrate import write_override

    (written, *_) = write_override(result, Path(tempfile.mkdtemp()) / "c.yaml")
    header = written.read_text(encoding="utf-8")
    assert "# priced with: " in header
    assert "NCCL_PROTO=Simple (line" in header
    assert "tuner_constants = 2.22.3" in header


def test_unknown_collective_prefixes_are_said() -> None:
    got = nccl_selection("alreduce:tree;allgather:ring", NCCL_ALGO_NAMES, AR)
    assert got.allowed is None
    assert got.unknown == ("alreduce",)


def test_a_name_in_another_collective_s_list_is_unknown_too() -> None:
    """'allgather:rng' leaves an all-reduce to NCCL's choice, and names no algorithm NCCL has:
    the name is said whichever collective's list holds it, once, after the prefixes'."""
    got = nccl_selection("allgather:rng,tree;alreduce:rng;allreduce:^Ring", NCCL_ALGO_NAMES, AR)
    assert got.allowed == frozenset(NCCL_ALGO_NAMES.values()) - {Algorithm.RING}
    assert got.unknown == ("alreduce", "rng")
    assert got.unknown_ops == ("alreduce",)


def _sweep(name: str, first_line: str) -> Path:
    """A copy of a published sweep with ``first_line`` before its first line."""
    text = (SWEEPS / name).read_text(encoding="utf-8")
    path = Path(tempfile.mkdtemp()) / name
    path.write_text(first_line + "\n" + text, encoding="utf-8")
    return path


def _checked(name: str, first_line: str) -> RunCheck:
    """nccl-check's judgement of a published sweep with ``first_line`` before its first line."""
    path = _sweep(name, first_line)
    text = path.read_text(encoding="utf-8")
    (run,) = parse_log(text, source=str(path)).runs
    env = scan_environment(text, 1, run.line_end)
    return check_run(run, catalogue=load_catalogue(use_env=False), env=env)


def test_quoted_and_plugin_settings_are_read() -> None:
    """A value quoted on a command line (a per-collective list must be, for its ';') and the
    NCCL_PROTO aws-ofi-nccl sets itself ('NET/OFI Setting NCCL_PROTO to "simple"', in p4d
    logs) had not been read."""
    text = (
        '+ mpirun -x NCCL_ALGO="allreduce:ring;allgather:tree" -x NCCL_DEBUG=INFO\n'
        'x:1:1 [0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"\n'
    )
    env = scan_environment(text, 1, 2)
    assert env.setting("NCCL_ALGO") == "allreduce:ring;allgather:tree"
    assert env.setting("NCCL_PROTO") == "simple"
    # a sentence's full stop after the quotes, srun's list of variables; a line that merely
    # says 'Setting NCCL_X to' outside aws-ofi-nccl's output is no setting
    odd = (
        'x:1:1 [0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple".\n'
        "+ srun --export=ALL,NCCL_ALGO=Ring all_reduce_perf\n"
        "Setting NCCL_IB_HCA to mlx5_9 is not supported\n"
    )
    env = scan_environment(odd, 1, 3)
    assert env.setting("NCCL_PROTO") == "simple"
    assert env.setting("NCCL_ALGO") == "Ring"
    assert env.setting("NCCL_IB_HCA") is None


def test_a_setting_that_leaves_nothing_judges_nothing() -> None:
    """NCCL_PROTO ruling out every protocol: the run had read 'unknown' with a note per row
    and 'no row of 64 MiB or more' (it has rows to 8 GiB), and --min-efficiency passed (exit
    0). Now one note gives the reason and the gate refuses to judge nothing (exit 2)."""
    from typer.testing import CliRunner

    from ibcalc.cli import app

    path = _sweep(
        "10_allreduce_2node_8xH100_ib.txt",
        "h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to ^LL,LL128,Simple",
    )
    result = CliRunner().invoke(app, ["nccl-check", str(path), "--min-efficiency", "0.8"])
    assert result.exit_code == 2
    out = " ".join(result.output.split())  # the report wraps its lines
    assert "no expectation for any row: " in out
    assert "NCCL_PROTO=^LL,LL128,Simple (line 1) rules out LL, LL128, Simple" in out
    assert "no row of 64 MiB or more: bandwidth not judged" not in out
    assert "--min-efficiency would judge nothing" in out
    assert "no expectation for the row" not in out  # one note, not one per row


def test_a_run_with_nothing_to_judge_beside_a_judged_one_is_listed_not_passed_unsaid() -> None:
    """Beside a judged run, one with no expectation had passed the gate unlisted and unsaid;
    it is listed among the runs not judged, with the reason, and said on stderr, as a run that
    could not be checked is."""
    from typer.testing import CliRunner

    from ibcalc.cli import app

    path = _sweep(
        "10_allreduce_2node_8xH100_ib.txt",
        "h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to ^LL,LL128,Simple",
    )
    other = SWEEPS / "11_reducescatter_2node_8xH100_ib.txt"
    args = ["nccl-check", str(path), str(other), "--min-efficiency", "0.5"]
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0
    gate = json.loads(result.stdout)["gate"]
    assert gate["passed"] is True
    (unjudged,) = gate["not_judged_runs"]
    assert unjudged["source"] == str(path)
    assert unjudged["reason"].startswith("no expectation for any row: no algorithm applies")
    text = CliRunner().invoke(app, args)
    assert "run 1 is not judged by --min-efficiency: no expectation for any row" in " ".join(
        text.output.split()
    )


def test_ll128_named_on_pcie_is_said_not_priced() -> None:
    """NCCL runs a protocol NCCL_PROTO names even where its default keeps it off (its
    tuning.cc skips the hardware check for a protocol the setting enables): LL128 on two PCIe
    A100s. The model does not price LL128 there, and says so."""
    check = _checked(
        "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt",
        "h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to ^LL",
    )
    assert {r.protocol for r in check.rows} == {"Simple"}
    assert any(
        "leaves LL128 on, and NCCL, its protocols set, then runs it" in n for n in check.notes
    )


def test_a_setting_an_old_release_makes_moot_is_said_to_change_nothing() -> None:
    """Sweep 05 (NCCL 2.9.9, A100) with NCCL_ALGO=^NVLS: 2.9.9 has no NVLS, so nothing
    changes; the line had said it ruled out nvls and listed nvlstree and pat, which 2.9.9 lacks,
    among 'the rest'."""
    said = _checked(
        "05_allreduce_2node_16xA100-40GB_efa.txt",
        "h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to ^NVLS",
    ).assumptions
    line = next(a.evidence for a in said if a.field == "algorithm")
    assert line == (
        "NCCL_ALGO=^NVLS (line 1) rules out none of the algorithms NCCL has here: no change"
    )


def test_every_protocol_switched_off_is_refused_with_its_source() -> None:
    """An override switching every protocol off had been refused as 'not defined for
    all_reduce'."""
    params = builtin_cost_params().with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "nccl_tuner": {
                "protocols": {"source": "a test", "value": {"LL": 0, "LL128": 0, "Simple": 0}}
            },
        },
        label="test",
    )
    _, run, env = _sweep_10(None)
    with pytest.raises(AlgorithmNotApplicableError, match=r"\(a test\)"):
        estimate_on(_cluster_of(run, env), AR, 2**20, params=params)


def test_ll128_alone_on_pcie_is_not_said_to_be_used() -> None:
    """NCCL_PROTO=LL128 on two PCIe A100s: the setting's line had said 'the expectation uses
    it' beside the note that the expectation leaves LL128 out."""
    check = _checked(
        "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt",
        "h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128",
    )
    said = " ".join(a.evidence for a in check.assumptions if a.field == "protocol")
    assert "leaves NCCL only LL128: the model does not price it here" in said
    assert "the expectation uses it" not in said
    assert check.rows == []


def test_a_protocol_list_on_pcie_says_ll128_is_set_aside() -> None:
    """On two PCIe A100s a list that leaves LL128 on had said 'the expectation chooses among
    the rest' or 'no change' beside the note that the expectation leaves LL128 out."""
    for value, said in (
        ("^LL", "rules out LL: the expectation, LL128 aside, chooses among the rest"),
        ("LL128,Simple", "the expectation, LL128 aside, chooses among the ones left"),
        ("^^LL128", "NCCL may now choose LL128, which the model does not price here"),
    ):
        check = _checked(
            "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt",
            f"h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to {value}",
        )
        lines = " ".join(a.evidence for a in check.assumptions if a.field == "protocol")
        assert said in lines, value
        assert "no change" not in lines


def test_a_shell_export_reaches_the_later_runs_of_the_log() -> None:
    """A log of several runs with one ``export NCCL_PROTO=Simple`` at the top had applied it
    to the first run only (its lines are the first run's); the shell passes an export to every
    later command, so every run takes it until an ``unset`` or another ``export``. A setting
    on one command line (``NCCL_ALGO=Ring ./all_reduce_perf``) stays that command's."""
    text = (
        "$ export NCCL_DEBUG=WARN NCCL_PROTO=Simple; ./prepare NCCL_IB_HCA=mlx5_0\n"
        "# export NCCL_ALGO=Tree\n"
        "NCCL_ALGO=Ring ./all_reduce_perf\n"
        "run 1\n"
        "run 2\n"
        "+ unset NCCL_PROTO\n"
        "$ export NCCL_ALGO=Tree\n"
        "run 3\n"
    )
    first = scan_environment(text, 1, 4)
    assert first.setting("NCCL_PROTO") == "Simple"
    assert first.settings["NCCL_PROTO"].line == 1
    assert first.setting("NCCL_ALGO") == "Ring"  # the command line's, this run only
    assert first.setting("NCCL_IB_HCA") == "mlx5_0"  # on the line, if not exported
    assert set(first.exports) == {"NCCL_DEBUG", "NCCL_PROTO"}
    second = scan_environment(text, 5, 5, first.exports)
    assert second.setting("NCCL_PROTO") == "Simple"
    assert second.setting("NCCL_ALGO") is None  # neither the comment nor the command's own
    assert second.setting("NCCL_IB_HCA") is None
    third = scan_environment(text, 6, 8, second.exports)
    assert third.setting("NCCL_PROTO") is None  # unset before it
    assert third.setting("NCCL_ALGO") == "Tree"
    assert set(third.exports) == {"NCCL_DEBUG", "NCCL_ALGO"}
    # a batch directive is no comment
    directive = scan_environment("#SBATCH --export=ALL,NCCL_ALGO=Ring\n", 1, 1)
    assert directive.setting("NCCL_ALGO") == "Ring"
    # the lines split once, as check_log and calibrate_logs pass them, read as the text does,
    # a range before line 1 or ending before it starts too (a log of 3,000 runs had split its
    # text once a run)
    lines = text.split("\n")
    for start, end in ((1, 4), (0, 4), (5, 5), (6, None), (6, 5), (9, None)):
        for exported in (None, first.exports):
            assert scan_environment(lines, start, end, exported, run_line=start) == (
                scan_environment(text, start, end, exported, run_line=start)
            )


RUN = "./all_reduce_perf -b 8 -e 1G"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # bash -x quotes a value with '^' or ';' (a review: the first run only had read it)
        (["+ export 'NCCL_PROTO=^LL,LL128'", RUN, RUN], ["^LL,LL128", "^LL,LL128"]),
        (['export NCCL_PROTO="a:simple;b:ll"', RUN, RUN], ["a:simple;b:ll"] * 2),
        # dash's trace prints one command per line, its value unquoted
        (["+ export NCCL_PROTO=a:simple;b:ll", RUN, RUN], ["a:simple;b:ll"] * 2),
        # the last export before the run counts, for it and the later runs
        (["+ export NCCL_PROTO=LL", "+ export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # an unset after the run's command on its line reaches the later runs only
        (["export NCCL_PROTO=Simple", f"$ {RUN}; unset NCCL_PROTO", RUN], ["Simple", None]),
        (
            ["export NCCL_PROTO=LL", RUN, "unset NCCL_PROTO; export NCCL_PROTO=Simple", RUN],
            ["LL", "Simple"],
        ),
        (["export NCCL_PROTO=Simple", "unset NCCL_PROTO", RUN, RUN], [None, None]),
        # a batch directive is the whole job's, with or without ALL
        (["#SBATCH --export=ALL,NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["#SBATCH --export=NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["#PBS -v NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # the forms of bash's builtins
        (["export FOO=1 NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["declare -x NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["NCCL_PROTO=Simple", "export NCCL_PROTO", RUN, RUN], ["Simple"] * 2),
        (["export NCCL_PROTO=LL", "NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["export NCCL_PROTO=Simple", RUN, "export -n NCCL_PROTO", RUN], ["Simple", None]),
        (["export NCCL_PROTO=Simple", RUN, "unset -v FOO NCCL_PROTO", RUN], ["Simple", None]),
        # what a later command does not inherit: a subshell's, a function body's, echoed text
        ([f"(export NCCL_PROTO=Simple; {RUN})", RUN], ["Simple", None]),
        (["f() { export NCCL_PROTO=Simple; }", RUN, RUN], [None, None]),
        (["{ export NCCL_PROTO=Simple; }", RUN, RUN], ["Simple"] * 2),
        (['echo "to fix: export NCCL_PROTO=Simple"', RUN, RUN], [None, None]),
        ([f"NCCL_PROTO=Simple {RUN}", RUN], ["Simple", None]),
        # bash -x's '++': a sourced file's or eval's command, in the shell itself (review AZ)
        (["+ source ./nccl_env.sh", "++ export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # 'env | grep NCCL' prints a value whole; an assignment alone is not exported
        (["NCCL_PROTO=a:simple;b:ll", RUN, RUN], ["a:simple;b:ll", None]),
        # SUSE's and Cray EX's root prompt (the line had been read as a comment, review AZ)
        (["nid001234:~ # export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # the run starts inside 'bash -c' (the unset after it had reached it, review AZ)
        (
            ["export NCCL_PROTO=Simple", f"$ bash -c '{RUN}'; unset NCCL_PROTO", RUN],
            ["Simple", None],
        ),
        # review BA: a lone quoted assignment loses its quotes; 'bash -c' with its own setting;
        # a banner naming the binary is not the command; 'TODO: #' is no prompt; past 512
        # words (a line of 2,000 ';') nothing is read
        (["export NCCL_PROTO=LL", 'NCCL_PROTO="Simple"', RUN, RUN], ["Simple"] * 2),
        (
            ["export NCCL_PROTO=LL", f"export A=1; bash -c 'NCCL_PROTO=Simple {RUN}'", RUN],
            ["Simple", "LL"],
        ),
        (
            [f'echo "== all_reduce_perf ==" && export NCCL_PROTO=Simple && {RUN}', RUN],
            ["Simple"] * 2,
        ),
        (["export NCCL_PROTO=Simple", RUN, "TODO: # unset NCCL_PROTO", RUN], ["Simple"] * 2),
        (["export NCCL_A=1 " + ";" * 2000 + " export NCCL_PROTO=Simple", RUN, RUN], [None, None]),
        # review BB: a binary reached through a variable or after a wrapper inside bash -c;
        # the first nccl-tests command of the run's line is the run's; a quoted command's own
        # setting
        (
            ["export NCCL_PROTO=Simple", "$NCCL_TESTS/all_reduce_perf -b 8; unset NCCL_PROTO", RUN],
            ["Simple", None],
        ),
        (
            [
                "export NCCL_PROTO=Simple",
                "$ bash -c 'numactl -N 0 ./all_reduce_perf -b 8'; unset NCCL_PROTO",
                RUN,
            ],
            ["Simple", None],
        ),
        (
            ["export NCCL_PROTO=Simple", f"$ bash -c 'cd build && {RUN}'; unset NCCL_PROTO", RUN],
            ["Simple", None],
        ),
        (
            [
                "export NCCL_PROTO=Simple",
                f"{RUN}; export NCCL_PROTO=LL; ./all_gather_perf -b 8",
                RUN,
            ],
            ["Simple", "LL"],
        ),
        ([f'export A=1; srun bash -c "cd /x && NCCL_PROTO=Simple {RUN}"', RUN], ["Simple", None]),
        # a line over 4 KiB is no command a person typed: only its own settings are read
        (["export NCCL_PROTO=Simple " + "x" * 5000, RUN, RUN], ["Simple", None]),
        # behind a launcher's prefix and a prompt; a comment behind one sets nothing
        (["[1,0]<stdout>:export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["user@host:~/nccl$ export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["0: # export NCCL_PROTO=Simple", RUN, RUN], [None, None]),
        # root prompts end in '#' (the whole line had been read as a comment, review AY)
        (["root@c0ffee:/workspace# export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["[root@Aliyun3 workspace]# export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        ([f"bash-5.1# NCCL_PROTO=Simple {RUN}; unset FOO", RUN], ["Simple", None]),
        (["(base) user@gpu01:~$ export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # ');' closes the subshell the run starts in ('(cd build && ...); unset' had stayed open)
        (
            ["export NCCL_PROTO=Simple", f"$ (cd build && {RUN}); unset NCCL_PROTO", RUN],
            ["Simple", None],
        ),
        ([f"$ (cd build && {RUN}); export NCCL_PROTO=LL", RUN], [None, "LL"]),
        (["x=$(date);export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # compound commands run in the shell itself
        (["if [ -n x ]; then export NCCL_PROTO=Simple; fi", RUN, RUN], ["Simple"] * 2),
        (["for i in 1; do export NCCL_PROTO=Simple; done", RUN, RUN], ["Simple"] * 2),
        (["builtin export NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # a value the shell expands is kept as written: set, to a value the log does not show
        (["export NCCL_PROTO=$PROTO", RUN, RUN], ["$PROTO"] * 2),
        (
            ["export NCCL_PROTO=Simple", RUN, "export NCCL_PROTO=${P:-LL}", RUN],
            ["Simple", "${P:-LL}"],
        ),
        (["export NCCL_PROTO=Simple", f"NCCL_PROTO=$p {RUN}", RUN], ["$p", "Simple"]),
        # 'unset -f' removes a function; 'declare +x' un-exports
        (["export NCCL_PROTO=Simple", RUN, "unset -f NCCL_PROTO", RUN], ["Simple"] * 2),
        (["export NCCL_PROTO=Simple", RUN, "declare +x NCCL_PROTO", RUN], ["Simple", None]),
        # an unbalanced quote: the operators still end the export's command
        (["export NCCL_PROTO=Simple; echo don't", RUN, RUN], ["Simple"] * 2),
        # 'set -a' exports every later assignment, up to 'set +a'; not one before a command
        (["set -a", "NCCL_PROTO=Simple", "set +a", RUN, RUN], ["Simple"] * 2),
        (["set -a; NCCL_PROTO=Simple; set +a", RUN, RUN], ["Simple"] * 2),
        (["+ set -a", "+ NCCL_PROTO=Simple", "+ set +a", RUN, RUN], ["Simple"] * 2),
        (["set -o allexport", "NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["set -euo pipefail -a", "NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["set -a", "set +a", "NCCL_PROTO=Simple", RUN, RUN], ["Simple", None]),
        (["set -euo pipefail", "NCCL_PROTO=Simple", RUN, RUN], ["Simple", None]),
        (["set -a", f"NCCL_PROTO=Simple {RUN}", RUN], ["Simple", None]),
        # what the run's command passes on of the shell's environment (review BF): Slurm's
        # --export=NONE none, a list without ALL its names, env -i none, env -u all but one;
        # the shell keeps its exports for later runs
        (["export NCCL_PROTO=LL", f"srun --export=NONE {RUN}", RUN], [None, "LL"]),
        (["export NCCL_PROTO=LL", f"srun --export=NCCL_ALGO=Tree {RUN}", RUN], [None, "LL"]),
        (["export NCCL_PROTO=LL", f"srun --export=NCCL_PROTO,PATH {RUN}"], ["LL"]),
        (["export NCCL_PROTO=LL", f"srun --export=ALL,NCCL_ALGO=Tree {RUN}"], ["LL"]),
        (["export NCCL_PROTO=LL", f"srun --export ALL {RUN}"], ["LL"]),
        (["export NCCL_PROTO=LL", f"env -i PATH=/bin {RUN}", RUN], [None, "LL"]),
        (["export NCCL_PROTO=LL", f"env -i NCCL_PROTO=Simple {RUN}"], ["Simple"]),
        (["export NCCL_PROTO=LL", f"env -u NCCL_PROTO {RUN}", RUN], [None, "LL"]),
        (["export NCCL_PROTO=LL", f"env --unset=NCCL_PROTO {RUN}"], [None]),
        (
            ["export NCCL_PROTO=LL", f"srun --export=NONE bash -c 'NCCL_PROTO=Simple {RUN}'"],
            ["Simple"],
        ),
        # ... read from the command that runs the binary alone, a later option winning, and
        # with the lines a backslash joins to it (review BG: another command's option, or a
        # comment's, had counted)
        (["export NCCL_PROTO=LL", f"srun {RUN} # --export=NONE would drop it"], ["LL"]),
        (["export NCCL_PROTO=LL", f"echo a; {RUN} | tee o.txt; echo --export=NONE"], ["LL"]),
        (["export NCCL_PROTO=LL", f"srun {RUN} && env -u NCCL_PROTO python post.py"], ["LL"]),
        (["export NCCL_PROTO=LL", f"(env -i true); srun {RUN}"], ["LL"]),
        (["export NCCL_PROTO=LL", f"{RUN} | tee ar.log; sbatch --export=NONE next.sh"], ["LL"]),
        (
            ["export NCCL_PROTO=LL", f"srun --export=ALL hostname && srun --export=NONE {RUN}"],
            [None],
        ),
        (["export NCCL_PROTO=LL", f"srun --export=NONE --export=ALL {RUN}"], ["LL"]),
        (["export NCCL_PROTO=LL", "srun --export=NONE -N 2 \\", f"    {RUN}"], [None]),
        (["export NCCL_PROTO=LL", f"env - {RUN}"], [None]),
        (["export NCCL_PROTO=LL", f"env -u FOO -i {RUN}"], [None]),
        # 'set -a' / 'set +a' with a comment naming NCCL, and assignments 'set -a' exports that
        # do not start the line (review BG)
        (["set -a  # NCCL tuning below", "NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # ('set +a' leaves a name 'set -a' exported exported, as bash does: not this case)
        (["set -a", "set +a  # done with NCCL", "NCCL_PROTO=LL", RUN, RUN], ["LL", None]),
        (["set -a", "A=1; NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["set -a", "declare NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["set -a", "readonly NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        # env's options with an argument, --unset with a space, and a quoted command string
        # read inside; a subshell's assignment alone sets nothing; 'declare +x NAME=V'
        # un-exports; 'A=1 NCCL_X=V' under set -a exports (review BI)
        (["export NCCL_PROTO=LL", f"env --unset NCCL_PROTO mpirun -np 8 {RUN}"], [None]),
        (["export NCCL_PROTO=LL", f"env -C /tmp -u NCCL_PROTO mpirun {RUN}"], [None]),
        (["export NCCL_PROTO=LL", f"srun -N 2 bash -c 'cd /x && env -u NCCL_PROTO {RUN}'"], [None]),
        (["export NCCL_PROTO=LL", f'sh -c "srun --export=NONE {RUN}"'], [None]),
        (["export NCCL_PROTO=LL", f"srun bash -c 'cd /x && {RUN}'"], ["LL"]),
        (["export NCCL_PROTO=LL", "(NCCL_PROTO=Simple)", RUN], ["LL"]),
        (["export NCCL_PROTO=LL", "x=$(NCCL_PROTO=Simple)", RUN], ["LL"]),
        (["(NCCL_PROTO=Simple)", RUN, f"(NCCL_PROTO=Simple {RUN})"], [None, "Simple"]),
        (["set -a", "A=1 NCCL_PROTO=Simple", RUN, RUN], ["Simple"] * 2),
        (["export NCCL_PROTO=LL", "declare +x NCCL_PROTO=Simple", RUN], [None]),
        # a quoted command string narrows what the outer command passed on, never widens it;
        # 'declare +x NAME=V' keeps V as a shell variable; a nested subshell's export ends with
        # it (review BJ)
        (["export NCCL_PROTO=LL", f"env -i bash -c 'srun --export=ALL {RUN}'"], [None]),
        (["export NCCL_PROTO=LL", f"srun --export=NONE bash -c 'srun --export=ALL {RUN}'"], [None]),
        (
            ["export NCCL_PROTO=LL", "declare +x NCCL_PROTO=Simple", "export NCCL_PROTO", RUN],
            ["Simple"],
        ),
        (["export NCCL_PROTO=LL", f"( (export NCCL_PROTO=Simple); {RUN} )"], ["LL"]),
        (["export NCCL_PROTO=LL", f"(export NCCL_PROTO=Simple; ({RUN}))"], ["Simple"]),
        # quoted text sets nothing, -genv in it neither (review BG)
        (["export NCCL_DEBUG=INFO; echo 'hint: mpiexec -genv NCCL_PROTO Simple'", RUN], [None]),
        # MPICH's and Intel MPI's -genv NAME VALUE (and -env) set the command's own
        ([f"mpiexec -n 16 -genv NCCL_PROTO Simple {RUN}"], ["Simple"]),
        ([f"mpiexec -n 16 -env NCCL_PROTO 'LL128' {RUN}", RUN], ["LL128", None]),
    ],
)
def test_what_the_shell_exports_as_each_run_starts(lines: list[str], expected: list[str]) -> None:
    """Each run takes what the shell has exported when its nccl-tests command runs, as bash
    and POSIX shells define export, unset, declare -x and assignments (a review's cases: the
    order of exports and unsets, quoted values, directives, launcher prefixes)."""
    text = "\n".join(lines) + "\n"
    starts = [i for i, line in enumerate(lines, start=1) if "all_reduce_perf -b" in line]
    ends = [*(s - 1 for s in starts[1:]), len(lines)]
    seen: list[str | None] = []
    env: LogEnvironment | None = None
    for first, (start, end) in enumerate(zip(starts, ends, strict=True)):
        begin = 1 if first == 0 else starts[first - 1] + 1
        exported = None if env is None else env.exports
        env = scan_environment(text, begin, end, exported, run_line=start)
        seen.append(env.setting("NCCL_PROTO"))
    assert seen == expected


def test_repeated_lines_read_as_one_copy() -> None:
    """A line repeated, or NCCL's debug text every rank prints, changes nothing read already:
    skipped (review BF: 50 MB of them had taken 12-30 s), the facts those read are the first
    copy's, and a line repeated after others is read again (the unset between two exports)."""
    info = "host{h}:{p}:{p} [0] NCCL INFO NCCL_PROTO set by environment to Simple"
    text = "\n".join(info.format(h=h % 7, p=1000 + h) for h in range(20_000)) + f"\n{RUN}\n"
    env = scan_environment(text, run_line=20_001)
    assert (env.setting("NCCL_PROTO"), env.settings["NCCL_PROTO"].line) == ("Simple", 1)
    repeated = "\n".join(["export NCCL_ALGO=Ring"] * 20_000 + ["unset NCCL_ALGO", RUN]) + "\n"
    assert scan_environment(repeated, run_line=20_002).setting("NCCL_ALGO") is None
    again = ["export NCCL_ALGO=Ring", "unset NCCL_ALGO", "export NCCL_ALGO=Ring", RUN]
    assert scan_environment("\n".join(again) + "\n", run_line=4).setting("NCCL_ALGO") == "Ring"
    # a host's own port list is read from every host (a port missing on one is a fault)
    ports = "host{h}:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB{more}"
    hosts = [ports.format(h=h, more=" [1]mlx5_1:1/IB") for h in range(3)]
    hosts.append(ports.format(h=3, more=""))
    shortfall = scan_environment("\n".join(hosts) + "\n").port_shortfall
    assert shortfall is not None
    assert shortfall.value == "host3 lists 1 network ports where host0 lists 2 (mlx5_1:1 missing)"


@pytest.mark.parametrize(
    "directive",
    [
        *("#SBATCH --export=ALL,", "#SBATCH --export=", "#PBS -v ", "#BSUB -env ", "#$ -v "),
        *("#flux: --env=", "#PJM -x ", "#MSUB -v ", "#COBALT --env "),
    ],
)
def test_a_batch_directive_sets_every_run_of_the_job(directive: str) -> None:
    """A directive's comma list is the whole job's environment: every run takes each of its
    variables (NCCL_ALGO had read 'Ring,NCCL_PROTO=Simple' and the protocol was lost, a review)."""
    text = f"{directive}NCCL_ALGO=Ring,NCCL_PROTO=Simple\n{RUN}\nrow\n{RUN}\n"
    first = scan_environment(text, 1, 3, run_line=2)
    second = scan_environment(text, 4, 4, first.exports, run_line=4)
    for env in (first, second):
        assert (env.setting("NCCL_ALGO"), env.setting("NCCL_PROTO")) == ("Ring", "Simple")
    # a quoted value with a space, beside an export (review BB: it had been cut at the space)
    spaced = scan_environment('export A=1; NCCL_ALGO="Ring, Tree" ./all_reduce_perf -b 8\n')
    assert spaced.setting("NCCL_ALGO") == "Ring, Tree"
    # a lower-case name ends a value too (the job's own variables, review BA)
    proxy = scan_environment("#SBATCH --export=ALL,NCCL_PROTO=Simple,http_proxy=http://p:3128\n")
    assert proxy.setting("NCCL_PROTO") == "Simple"
    # a comma that no 'NAME=' follows is the value's own
    assert scan_environment("mpirun -x NCCL_ALGO=Ring,Tree ./x\n").setting("NCCL_ALGO") == (
        "Ring,Tree"
    )


def test_a_run_starts_where_its_command_line_is() -> None:
    """nccl-check and calibrate take each run's exports at its nccl-tests command: an unset
    after the command on its line reaches the next run only (with no arguments after the name,
    the command line had not been seen, and the run had lost its own setting, review AY)."""
    from ibcalc.logs import read_log
    from ibcalc.logs.calibrate import calibrate_logs
    from ibcalc.logs.check import check_log

    sweep = SWEEP_10.read_text(encoding="utf-8")
    second = (SWEEPS / "11_reducescatter_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    catalogue = load_catalogue(use_env=False)
    for command in (
        "$ ./all_reduce_perf -b 8 -e 8G; unset NCCL_PROTO",
        "$ ./all_reduce_perf; unset NCCL_PROTO",
    ):
        text = f"export NCCL_PROTO=Simple\n{command}\n{sweep}\n{second}"
        checks = check_log(parse_log(text, source="x.log"), text, catalogue=catalogue)
        small = [{r.protocol for r in c.rows if r.size_bytes <= 65536} for c in checks]
        assert small[0] == {"Simple"}
        assert small[1] != {"Simple"}
    path = Path(tempfile.mkdtemp()) / "two.log"
    path.write_text(text, encoding="utf-8")
    late = calibrate_logs([read_log(path)]).rms_before
    path.write_text(f"{command}\n{sweep}\n{second}", encoding="utf-8")
    assert late > calibrate_logs([read_log(path)]).rms_before * 1.05


def test_nccl_check_applies_an_export_to_every_run_after_it() -> None:
    """Two published runs of sweep 10 after one ``export NCCL_PROTO=Simple``: both are expected
    at Simple's times (the second had been expected at NCCL's default, LL at 8 B); after an
    ``unset`` the expectation is the default's again."""
    from ibcalc.logs.check import check_log

    sweep = SWEEP_10.read_text(encoding="utf-8")
    catalogue = load_catalogue(use_env=False)

    def protocols(text: str) -> list[set[str]]:
        checks = check_log(parse_log(text, source="x.log"), text, catalogue=catalogue)
        return [{r.protocol for r in c.rows if r.size_bytes <= 65536} for c in checks]

    exported = "+ export NCCL_PROTO=Simple\n" + sweep + "\n" + sweep
    assert protocols(exported) == [{"Simple"}, {"Simple"}]
    unset = "+ export NCCL_PROTO=Simple\n" + sweep + "\n+ unset NCCL_PROTO\n" + sweep
    assert protocols(unset) == [{"Simple"}, {"LL"}]


def test_calibrate_prices_every_run_after_an_export_with_it() -> None:
    """calibrate reads a log's runs as nccl-check does: an export before sweep 10 reaches
    sweep 11 after it (2 x 4 H100, the same cluster), an unset between them does not; priced
    with Simple at small sizes, where they ran LL, the runs start further from the model."""
    from ibcalc.logs import read_log
    from ibcalc.logs.calibrate import calibrate_logs

    first = SWEEP_10.read_text(encoding="utf-8")
    second = (SWEEPS / "11_reducescatter_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    path = Path(tempfile.mkdtemp()) / "two.log"

    def rms(between: str) -> float:
        path.write_text(f"+ export NCCL_PROTO=Simple\n{first}\n{between}{second}", encoding="utf-8")
        return calibrate_logs([read_log(path)]).rms_before

    both, only_first = rms(""), rms("+ unset NCCL_PROTO\n")
    assert both > only_first * 1.05


def test_a_value_the_shell_expands_leaves_no_expectation_and_says_why() -> None:
    """'for p in LL Simple; do NCCL_PROTO=$p ./all_reduce_perf ...' as a job script shows it:
    the run set NCCL_PROTO to a value the log does not show, so no protocol can be expected
    (it had been judged at NCCL's defaults, dropping the setting, in one version, review AZ)."""
    from ibcalc.logs.check import check_log

    text = "$ for p in LL Simple; do NCCL_PROTO=$p ./all_reduce_perf -b 8 -e 8G; done\n"
    text += SWEEP_10.read_text(encoding="utf-8")
    (check,) = check_log(parse_log(text, source="x.log"), text, catalogue=load_catalogue())
    said = " ".join(a.evidence for a in check.assumptions)
    assert "NCCL_PROTO=$p (line 1): $p is no name NCCL lists; where a shell expanded it" in said
    assert all(r.expected_time_us is None for r in check.rows)
