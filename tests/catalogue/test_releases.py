"""catalogue/releases.py: the tuner constants of an NCCL release over NCCL's tuner view.

Expected values are the cells of data/nccl_releases.yaml (NCCL's src/graph/tuning.cc at the tags
named there, docs/model.md#tuner-constants-across-releases) and NCCL's tuner formulas worked by
hand; the measured point is a published nccl-tests row.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import main_error
from ibcalc import ClusterSpec, load_catalogue, resolve_cluster
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.releases import for_release, parse_release, releases
from ibcalc.cli import main
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.errors import FieldError
from ibcalc.facade import estimate_on

US = 1e-6
KiB = 1024
MiB = 2**20


def test_release_numbers() -> None:
    assert parse_release("2.21.5") == (2, 21, 5)
    assert parse_release(" 2.22.3+cuda12.4 ") == (2, 22, 3)
    assert parse_release("2.18.3-1") == (2, 18, 3)
    assert parse_release("2.21") == (2, 21, 999)  # every patch of 2.21
    assert parse_release("v2.18.3-1") == (2, 18, 3)  # NVIDIA/nccl's git tag
    assert parse_release("V2.21.5") == (2, 21, 5)
    assert (
        for_release(builtin_cost_params(), "v2.18.3-1")
        .origins[-1]
        .startswith(
            "NCCL 2.18.3-1: algorithm and protocol chosen with NCCL 2.18.3's tuner constants"
        )
    )
    for bad in ("2", "2.x", "vv2.21.5", "version 2.21.5", "2.21.5.1", "", "2.21 5"):
        with pytest.raises(FieldError, match="is not a release number") as exc:
            parse_release(bad)
        assert exc.value.field == "nccl_version"
    with pytest.raises(FieldError) as exc:
        parse_release("9" * 5000)  # quoted cut to 40 characters
    assert (
        str(exc.value)
        == f"nccl_version '{'9' * 40}...' is not a release number such as 2.21.5 or 2.21"
    )


def test_a_version_that_is_no_release_is_quoted_as_written() -> None:
    """The version is quoted as every echoed value is (textsafe.shown), not with Python's repr,
    which had doubled a backslash ('2\\\\21') and put a text holding a quote in double quotes."""
    said = {"2\\21": "'2\\21'", "2.21'": "'2.21\\''", "1.3\\": "'1.3\\'"}
    for version, quoted in said.items():
        with pytest.raises(FieldError) as exc:
            parse_release(version)
        assert (
            str(exc.value)
            == f"nccl_version {quoted} is not a release number such as 2.21.5 or 2.21"
        )
    # a control character is still written escaped, never sent to the terminal
    with pytest.raises(FieldError) as exc:
        parse_release("2.21\x1b[2J")
    assert str(exc.value).startswith("nccl_version '2.21\\x1b[2J' is not")
    with pytest.raises(FieldError) as exc:
        parse_release("1.3.4\\")
    assert str(exc.value) == "nccl_version '1.3.4\\' is not a release number such as 2.21.5 or 2.21"


@pytest.mark.parametrize("version", ["6.2.0", "7.0", "3.0.0"])
def test_a_version_past_nccl_2_is_refused(version: str) -> None:
    """A ROCm or RCCL package number (6.2.0) had passed as an NCCL 'newer than 2.30.7'; NCCL's
    releases are 2.x, and RCCL reports one too."""
    with pytest.raises(FieldError, match=r"NCCL releases are 2\.x") as exc:
        parse_release(version)
    assert exc.value.field == "nccl_version"
    assert parse_release("2.99") == (2, 99, 999)  # a 2.x past the newest read is still taken


def test_the_read_releases_are_in_order() -> None:
    assert [r.name for r in releases()] == [
        "2.18.3",
        "2.21.5",
        "2.23.4",
        "2.27.5",
        "2.28.3",
        "2.28.9",
    ]


def test_a_release_changes_the_tuner_view_only() -> None:
    base = builtin_cost_params()
    old = for_release(base, "2.20.3")  # between 2.18.3 and 2.21.5: 2.18.3's cells
    tuner, builtin = old.tuner_view().nccl_tuner, base.tuner_view().nccl_tuner
    assert tuner.base_latency_s[Algorithm.TREE][Protocol.SIMPLE] == 0.0  # 8.4 us in 2.30.7
    nvlink, net = tuner.hop_latency_s["nvlink"], tuner.hop_latency_s["net"]
    # 2.18.3: NVLSTree base 23 us + NVLink hop 0, carried as a 23 us hop (2.30.7: 0 + 25 us)
    assert nvlink[Algorithm.NVLS_TREE][Protocol.SIMPLE] == pytest.approx(23 * US)
    assert net[Algorithm.NVLS_TREE][Protocol.SIMPLE] == pytest.approx(19 * US)  # 20.9 us
    assert net[Algorithm.COLLNET_DIRECT][Protocol.SIMPLE] == pytest.approx(10.7 * US)  # 31 us
    assert tuner.ring_ll128_factor == builtin.ring_ll128_factor  # a cell the release keeps
    assert old.nccl_tuner == base.nccl_tuner  # the physical view keeps 2.30.7's
    assert "NCCL 2.18.3's tuner constants" in old.origins[-1]
    newer = for_release(base, "2.23.4").tuner_view().nccl_tuner
    assert newer.pat_factor == pytest.approx(0.85)
    assert newer.base_latency_s[Algorithm.TREE][Protocol.SIMPLE] == pytest.approx(8.4 * US)


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("2.16.5", "older than 2.18.3"),
        ("2.29.2", "unchanged since 2.28.9"),
        ("2.31", "newer than 2.30.7"),
    ],
)
def test_outside_the_table_the_builtin_constants_stay(version: str, words: str) -> None:
    base = builtin_cost_params()
    params = for_release(base, version)
    tuner, builtin = params.tuner_view().nccl_tuner, base.tuner_view().nccl_tuner
    # every constant stays; only the algorithms an older release predates are switched off
    assert dataclasses.replace(tuner, algorithms=builtin.algorithms) == builtin
    assert words in params.origins[-1]


def test_a_release_older_than_the_table_is_said_plainly() -> None:
    """The label had read "NCCL 2.30.7's are used, and held out such runs are predicted
    worse", a sentence to read twice (a review)."""
    label = for_release(builtin_cost_params(), "2.17").origins[-1]
    assert label.startswith(
        "NCCL 2.17 is older than 2.18.3, the oldest release whose tuner constants ibcalc has "
        "read: NCCL 2.30.7's are used; runs of releases this old are predicted worse (held "
        "out: docs/model.md#accuracy-by-nccl-release)"
    )


_COLLNETS = {Algorithm.COLLNET_DIRECT, Algorithm.COLLNET_CHAIN}  # 2.6.4
_SEND_RECV = {Algorithm.PAIRWISE, Algorithm.P2P}  # 2.7.3
_PXN_ON = {Algorithm.PXN, Algorithm.NVLS, Algorithm.NVLS_TREE, Algorithm.PAT}  # 2.12.7 on


@pytest.mark.parametrize(
    ("version", "without"),
    [
        ("2.3", {Algorithm.TREE, *_COLLNETS, *_SEND_RECV, *_PXN_ON}),
        ("2.5.7", {*_COLLNETS, *_SEND_RECV, *_PXN_ON}),
        ("2.6.4", {*_SEND_RECV, *_PXN_ON}),
        ("2.7.2", {*_SEND_RECV, *_PXN_ON}),
        ("2.7.3", _PXN_ON),
        ("2.8.4", _PXN_ON),
        ("2.12.6", _PXN_ON),
        ("2.12.7", {Algorithm.NVLS, Algorithm.NVLS_TREE, Algorithm.PAT}),
        ("2.16.5", {Algorithm.NVLS, Algorithm.NVLS_TREE, Algorithm.PAT}),
        ("2.17", {Algorithm.NVLS_TREE, Algorithm.PAT}),  # every 2.17 patch: 2.17.1 added NVLS
        ("2.18.3", {Algorithm.PAT}),
        ("2.21.5", {Algorithm.PAT}),
        ("2.23.4", set()),
        ("2.31", set()),
    ],
)
def test_a_release_runs_only_the_algorithms_it_has(version: str, without: set[Algorithm]) -> None:
    # trees came with 2.4.2, CollNet with 2.6.4, send/receive (pairwise, p2p) with 2.7.3, PXN
    # with 2.12.7, NVLS with 2.17.1, NVLSTree with 2.18.1, PAT with 2.23.4 (release notes)
    params = for_release(builtin_cost_params(), version)
    algorithms = params.tuner_view().nccl_tuner.algorithms
    assert {a for a, on in algorithms.items() if not on} == without
    assert params.nccl_tuner.algorithms == dict.fromkeys(algorithms, 1)  # physical view: all


def test_a_release_without_pat_never_picks_it_and_refuses_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 4 x p5 with one GPU per node (EFA: no LL128): all-gather of 1 MiB runs PAT on 2.30.7 (and
    # 2.23.4), another algorithm on 2.21.5, which has no PAT; forcing PAT there is refused
    args = ["allgather", "--size", "1MiB", "--system", "aws-p5", "-N", "4", "-g", "1"]
    json_args = [*args, "--format", "json"]
    for version, expected in (("2.30.7", "pat"), ("2.23.4", "pat")):
        main([*json_args, "--nccl-version", version])
        assert json.loads(capsys.readouterr().out)["algorithm"] == expected
    main([*json_args, "--nccl-version", "2.21.5"])
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] != "pat"
    assert all(a["algorithm"] != "pat" for a in out["alternatives"])
    message = main_error([*args, "--algo", "pat", "--nccl-version", "2.21.5"], capsys)
    assert message.startswith("error: pat does not apply to all_gather")
    assert (
        "NCCL 2.21.5 predates pat (first in 2.23.4: NVIDIA/nccl v2.23.4-1 release notes" in message
    )
    assert message.count("\n") == 1


def test_a_release_before_collnet_does_not_pick_sharp(capsys: pytest.CaptureFixture[str]) -> None:
    """2 x DGX H100 with --sharp, all-reduce of 1 MiB: NCCL added network collectives (CollNet)
    in 2.6.4, yet under --nccl-version 2.3.7 (rings only) or 2.5.7 the choice had been
    collnet/Simple, 49.4 us. Before 2.6.4 the choice is what the release has: ring/LL128 on
    2.3.7 (90.6 us), tree/LL128 on 2.5.7 (72.7 us, as without --sharp); forcing CollNet is
    refused."""
    args = ["allreduce", "--size", "1MiB", "--system", "dgx-h100", "-N", "2", "--sharp"]
    for version, algorithm, protocol, time_us in (
        ("2.3.7", "ring", "LL128", 90.6),
        ("2.5.7", "tree", "LL128", 72.7),
        ("2.6.4", "collnet", "Simple", 49.4),
    ):
        main([*args, "--format", "json", "--nccl-version", version])
        out = json.loads(capsys.readouterr().out)
        assert (out["algorithm"], out["protocol"]) == (algorithm, protocol)
        assert out["time_s"] == pytest.approx(time_us * US, abs=0.05 * US)
    message = main_error([*args, "--algo", "collnet", "--nccl-version", "2.5.7"], capsys)
    assert message.startswith("error: collnet does not apply to all_reduce")
    assert "collnet (first in 2.6.4: NVIDIA/nccl v2.6.4-1 release notes" in message


def test_a_release_before_pxn_sends_all_to_all_pairwise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """16 x DGX A100, all-to-all of 64 KiB: NCCL 2.12.12 routes it through PXN, 2.8.4 cannot
    (PXN came with 2.12.7) and sends to each of the 127 peers itself; it had been priced through
    PXN, (15 + 7) messages instead of 127, about 5x too fast. Forcing PXN there is refused."""
    args = ["alltoall", "--size", "64KiB", "--system", "dgx-a100", "-N", "16"]
    main([*args, "--format", "json", "--nccl-version", "2.12.12"])
    assert json.loads(capsys.readouterr().out)["algorithm"] == "pxn"
    main([*args, "--format", "json", "--nccl-version", "2.8.4"])
    old = json.loads(capsys.readouterr().out)
    assert old["algorithm"] == "pairwise"
    assert all(a["algorithm"] != "pxn" for a in old["alternatives"])
    message = main_error([*args, "--algo", "pxn", "--nccl-version", "2.8.4"], capsys)
    assert message.startswith("error: pxn does not apply to alltoall")
    assert (
        "NCCL 2.8.4 predates pxn (first in 2.12.7: NVIDIA/nccl v2.12.7-1 release notes" in message
    )


def test_the_nvls_tree_estimate_moves_by_the_release_cells() -> None:
    # 2 x p5, all-reduce 512 KiB. NCCL's NVLSTree latency is base + NVLink hop +
    # 2 log2(2 nodes) x NET hop: from 2.30.7 (0 + 25 + 2 x 20.9) to 2.18.3 (23 + 0 + 2 x 19) it
    # falls by 5.8 us, to 2.21.5 (0 + 25 + 2 x 14) by 13.8 us; the bandwidth term is the same
    cluster = resolve_cluster(load_catalogue(use_env=False), ClusterSpec(system="aws-p5", nodes=2))
    base = builtin_cost_params()

    def nvls_tree(version: str | None) -> float:
        params = base if version is None else for_release(base, version)
        est = estimate_on(cluster, Collective.ALL_REDUCE, 512 * KiB, params=params)
        (c,) = [c for c in (est.best, *est.alternatives) if c.algorithm is Algorithm.NVLS_TREE]
        assert c.tuner_time_s is not None
        return c.tuner_time_s

    builtin = nvls_tree(None)
    assert nvls_tree("2.18.3") - builtin == pytest.approx(-5.8 * US, abs=1e-9)
    assert nvls_tree("2.21.5") - builtin == pytest.approx(-13.8 * US, abs=1e-9)


def test_nccl_version_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    # 2 x DGX H100 (Intel hosts) all-reduce at 1 MiB: 2.30.7's tuner ranks tree/LL128 first; with
    # 2.21.5's constants (NVLSTree NET hop 14 us instead of 20.9 us, 2 x 6.9 us less) NCCL's tuner
    # ranks NVLS-tree first, and the estimate names the release
    args = ["allreduce", "--size", "1MiB", "--system", "dgx-h100", "-N", "2", "--format", "json"]

    def run(more: list[str]) -> dict[str, Any]:
        main([*args, *more])  # returns normally on success (exit status 0)
        out: dict[str, Any] = json.loads(capsys.readouterr().out)
        return out

    default = run([])
    release = run(["--nccl-version", "2.21.5"])
    assert (default["algorithm"], default["protocol"]) == ("tree", "LL128")
    assert (release["algorithm"], release["protocol"]) == ("nvlstree", "Simple")
    assert any("NCCL 2.21.5's tuner constants" in a for a in release["assumptions"])
    # refused as every option's value is: the option, the value as typed, the command's help
    # ('NCCL version 'two' is not ...' had named no option and ended without the hint)
    see = "(see 'ibcalc allreduce --help')\n"
    message = main_error([*args, "--nccl-version", "two"], capsys)
    assert message == (
        f"error: --nccl-version 'two' is not a release number such as 2.21.5 or 2.21 {see}"
    )
    message = main_error([*args, "--nccl-version", "2.21.5-"], capsys)  # a suffix needs a body
    assert message == (
        f"error: --nccl-version '2.21.5-' is not a release number such as 2.21.5 or 2.21 {see}"
    )
    message = main_error([*args, "--nccl-version", "1.3.4"], capsys)
    assert message == f"error: --nccl-version '1.3.4': ibcalc models NCCL 2.0 and later {see}"


def test_a_sweep_names_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    # 2 x DGX H100 all-reduce 512 KiB - 2 MiB: with 2.21.5's constants NCCL's tuner switches to
    # NVLS-tree at 1 MiB (2.30.7's stays on tree/LL128 there, test above); the table says which
    # release chose
    args = ["sweep", "allreduce", "--system", "dgx-h100", "-N", "2", "-b", "512K", "-e", "2M"]

    def at_1_mib(out: str) -> str:
        (row,) = [line for line in out.splitlines() if line.split()[:1] == ["1048576"]]
        return row

    main([*args, "--nccl-version", "2.21.5"])
    out = capsys.readouterr().out
    assert "> nvlstree/Simple" in at_1_mib(out)
    assert (
        "note: cost parameters: NCCL 2.21.5: algorithm and protocol chosen with NCCL 2.21.5's"
        in (out.replace("\n", " "))
    )
    main(args)
    assert "tree/LL128" in at_1_mib(capsys.readouterr().out).replace("nvlstree", "")


@pytest.mark.parametrize(("version", "said"), [("2.2", False), ("2.3.7", False), ("2.4", True)])
def test_a_release_without_trees_does_not_say_the_tree_halves_traffic(
    version: str, said: bool
) -> None:
    """NCCL added its trees in 2.4.2 (data/nccl_releases.yaml, from the release notes): under
    --nccl-version 2.2 an estimate had said both "without tree" and "2 nodes let NCCL's tree
    halve network traffic" (a QA review). 2.4 stands for its every patch, 2.4.2 among them."""
    from ibcalc.cluster.resolve import TWO_NODE_TREE_NOTE

    cluster = resolve_cluster(load_catalogue(use_env=False), ClusterSpec(inter="ndr"))
    assert TWO_NODE_TREE_NOTE in cluster.assumptions
    params = for_release(builtin_cost_params(), version)
    est = estimate_on(cluster, "allreduce", 1e9, params=params)
    assert (TWO_NODE_TREE_NOTE in est.assumptions) is said
    assert ("without tree" in " ".join(est.assumptions)) is not said


#: Where NCCL's point-to-point send/receive came in (data/nccl_releases.yaml, introduced)
SEND_RECV_ADDED = (
    "(first in 2.7.3: NVIDIA/nccl v2.7.3-1 release notes: point-to-point send/receive "
    "(ncclSend, ncclRecv))"
)


@pytest.mark.parametrize(
    ("command", "algorithm", "protocol", "time_us", "predated"),
    [
        # 2 x DGX A100, 1 MiB: 94.5 us and 65.4 us from 2.7.3 on, as under 2.30.7 between 2.7.3
        # and 2.12.7 (no PXN); before 2.7.3 both had been priced so too
        ("alltoall", "pairwise", "Simple", 94.5, "pairwise"),
        ("sendrecv", "p2p", "Simple", 65.4, "p2p"),
    ],
)
def test_a_release_before_send_recv_refuses_all_to_all_and_send_recv(
    command: str,
    algorithm: str,
    protocol: str,
    time_us: float,
    predated: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """NCCL added point-to-point send/receive (ncclSend, ncclRecv), which nccl-tests' alltoall
    and sendrecv call, in 2.7.3: an estimate under an older release is refused in one line that
    names the release asked and 2.7.3, as a forced algorithm the release predates is; the
    command line and sweep exit 2."""
    args = [command, "--system", "dgx-a100", "-N", "2", "--size", "1MiB"]
    main([*args, "--format", "json", "--nccl-version", "2.7.3"])
    out = json.loads(capsys.readouterr().out)
    assert (out["algorithm"], out["protocol"]) == (algorithm, protocol)
    assert out["time_s"] == pytest.approx(time_us * US, abs=0.05 * US)
    for version in ("2.3.7", "2.7.2", "2.6"):
        message = main_error([*args, "--nccl-version", version], capsys)
        assert message.startswith(f"error: no algorithm applies to {command}")
        assert f"NCCL {version} predates {predated} {SEND_RECV_ADDED}" in message
        assert message.endswith("; applicable: none\n")
        assert message.count("\n") == 1
        # the algorithms of the collective only: not every one the release lacks, nor PXN,
        # which needs the send/receive the release lacks (its 2.12.7 had been named too)
        assert "tree" not in message
        assert "pxn" not in message
        assert "2.12.7" not in message
    message = main_error([*args, "--algo", algorithm, "--nccl-version", "2.7.2"], capsys)
    assert message.startswith(f"error: {algorithm} does not apply to {command}")
    assert f"{predated} {SEND_RECV_ADDED}" in message
    message = main_error(
        ["sweep", command, "--system", "dgx-a100", "-N", "2", "--nccl-version", "2.7.2"], capsys
    )
    assert f"NCCL 2.7.2 predates {predated} {SEND_RECV_ADDED}" in message
    assert message.count("\n") == 1


def test_the_library_refuses_all_to_all_before_send_recv() -> None:
    """for_release, the library's --nccl-version: before 2.7.3 an all-to-all or send/recv
    estimate raises AlgorithmNotApplicableError (a FieldError); 2.7.3 prices pairwise."""
    from ibcalc.errors import AlgorithmNotApplicableError

    cluster = resolve_cluster(
        load_catalogue(use_env=False), ClusterSpec(system="dgx-a100", nodes=2)
    )
    base = builtin_cost_params()
    for collective in (Collective.ALL_TO_ALL, Collective.SEND_RECV):
        with pytest.raises(AlgorithmNotApplicableError) as exc:
            estimate_on(cluster, collective, MiB, params=for_release(base, "2.6.4"))
        assert "NCCL 2.6.4 predates" in str(exc.value)
        assert SEND_RECV_ADDED in str(exc.value)
    est = estimate_on(cluster, Collective.ALL_TO_ALL, MiB, params=for_release(base, "2.7.3"))
    assert (est.best.algorithm, est.best.protocol) == (Algorithm.PAIRWISE, Protocol.SIMPLE)
    assert est.best.time_s == pytest.approx(94.5 * US, abs=0.05 * US)


def test_a_log_stating_a_release_before_send_recv_gets_no_expectation(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """An alltoall_perf log stating NCCL 2.6.4 (which had no ncclSend) cannot be the run it
    says: nccl-check gives its rows no expectation, verdict unknown, and says why (release and
    2.7.3); calibrate has no row to fit and exits 2. 8 x H100 in one node, sweep 20 with its
    version code 22902 (2.29.2) edited to 2604."""
    from pathlib import Path

    sweep = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
    text = (sweep / "20_alltoall_1node_8xH100_intranode.txt").read_text(encoding="utf-8")
    assert "nccl-library=22902" in text
    log = tmp_path / "a2a.txt"
    log.write_text(text.replace("=22902", "=2604"), encoding="utf-8")
    main(["nccl-check", str(log), "--system", "dgx-h100", "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["verdict"] == "unknown"
    assert run["rows"] == []  # no row is judged (sweep 20 as it is: 10 rows, pairwise)
    (note,) = [n for n in run["notes"] if n.startswith("no expectation for any row")]
    assert f"NCCL 2.6.4 predates pairwise {SEND_RECV_ADDED}" in note
    message = main_error(["calibrate", str(log), "--system", "dgx-h100"], capsys)
    assert message.startswith("error: no row left to fit")
    assert f"NCCL 2.6.4 predates pairwise {SEND_RECV_ADDED}" in message


def test_a_forced_algorithm_the_release_predates_is_refused_with_its_own_release(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--algo tree under 2.3: the reason had listed all ten algorithms 2.3 lacks, each with its
    release notes (1,100 characters where tree's clause is the reason); it is tree's alone."""
    args = ["allreduce", "--system", "dgx-h100", "-N", "2", "--size", "1MiB"]
    message = main_error([*args, "--algo", "tree", "--nccl-version", "2.3"], capsys)
    assert message == (
        "error: tree does not apply to all_reduce on this cluster (NCCL 2.3 predates tree "
        "(first in 2.4.2: NVIDIA/nccl v2.4.2-1 release notes: double binary trees for "
        "all-reduce)); applicable: ring; what-ifs NCCL does not implement: hierarchical, rhd\n"
    )
    args = ["alltoall", "--system", "dgx-a100", "-N", "2", "--size", "1MiB"]
    message = main_error([*args, "--algo", "pairwise", "--nccl-version", "2.7.2"], capsys)
    assert message == (
        "error: pairwise does not apply to alltoall on this cluster (NCCL 2.7.2 predates "
        f"pairwise {SEND_RECV_ADDED}); applicable: none\n"
    )


def test_a_forced_algorithm_that_never_runs_the_collective_is_not_blamed_on_the_release(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--algo pat on an all-reduce under 2.21.5 had been refused as 'NCCL 2.21.5 predates pat',
    which says a later release would run it; PAT runs no all-reduce in any release, as the
    refusal under 2.30.7 says. On an all-gather that PAT runs, the release stays the reason."""
    args = ["allreduce", "--system", "dgx-a100", "-N", "2", "--size", "1MiB", "--algo", "pat"]
    plain = main_error(args, capsys)
    assert plain.startswith(
        "error: pat does not apply to all_reduce on this cluster (PAT runs all-gather/"
        "reduce-scatter with one GPU per node on several nodes)"
    )
    assert main_error([*args, "--nccl-version", "2.21.5"], capsys) == plain
    tree = ["alltoall", "--system", "dgx-a100", "-N", "2", "--size", "1MiB", "--algo", "tree"]
    message = main_error([*tree, "--nccl-version", "2.3"], capsys)
    assert message == (
        "error: tree does not apply to alltoall on this cluster (tree runs all-reduce only); "
        "applicable: none\n"
    )
