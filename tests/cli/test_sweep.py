"""The library sweep: nccl-tests' size series, sizes skipped as too small, one group per fabric.

Every expected series and skip is worked by hand from nccl-tests' rules: sizes grow by the step
factor from -b while they do not exceed -e; all-to-all runs floor(S / 4 B / ranks) elements per
rank, rounded down to a multiple of 16 bytes, and a size that rounds to 0 is skipped.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import app
from ibcalc.cli.boundary import FIELD_FLAGS
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Algorithm, Collective
from ibcalc.errors import ClusterError, FieldError, SizeTooSmallError
from ibcalc.render.console import _likely_us
from ibcalc.sweep import MAX_SWEEP_SIZES, algorithm_lines, sweep, sweep_fabrics, sweep_sizes
from ibcalc.units import format_number, parse_size

KiB, MiB, GiB = 2**10, 2**20, 2**30
runner = CliRunner()


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load_catalogue(use_env=False)


def test_sizes_8_to_8g_by_16() -> None:
    # -b 8 -e 8G -f 16: 8 x 16^k for k = 0..7; the next, 8 x 16^8 = 2^35, is above 8 x 2^30 = 2^33
    sizes = sweep_sizes(parse_size("8"), parse_size("8G"), 16)
    assert sizes == [8, 128, 2048, 32768, 524288, 8388608, 134217728, 2147483648]


def test_sizes_1m_to_1g_by_2_include_both_ends() -> None:
    # -b 1M -e 1G -f 2: 2^20, 2^21 ... 2^30 is 11 sizes (bare letters are powers of two)
    sizes = sweep_sizes(parse_size("1M"), parse_size("1G"), 2)
    assert len(sizes) == 11
    assert sizes[0] == MiB
    assert sizes[-1] == GiB


def test_sizes_stop_below_a_max_between_steps() -> None:
    assert sweep_sizes(1000, 9999, 10) == [1000]
    assert sweep_sizes(5, 5, 2) == [5]


def test_sizes_step_by_bytes_with_factor_1_as_nccl_tests() -> None:
    """nccl-tests' loop: size = stepfactor > 1 ? size * stepfactor : size + stepbytes, -i
    defaulting to 1 MiB; -i had no flag and -f 1 was refused (a review)."""
    assert sweep_sizes(MiB, 4 * MiB, 1, MiB) == [MiB, 2 * MiB, 3 * MiB, 4 * MiB]
    assert sweep_sizes(MiB, 4 * MiB, 1) == [MiB, 2 * MiB, 3 * MiB, 4 * MiB]  # -i 1M default
    assert sweep_sizes(1000, 4500, 1, 1000) == [1000, 2000, 3000, 4000]
    assert sweep_sizes(MiB, 4 * MiB, 2, 512 * 1024) == [MiB, 2 * MiB, 4 * MiB]  # -f wins
    # exact in whole bytes: no size past -e, and 200 sizes are 200 (a relative slack had added
    # 1 + 151 x 8 GiB to -b 1 -e 1208G and counted 201; a review)
    assert sweep_sizes(1, 1208 * GiB, 1, 8 * GiB)[-1] == 1 + 150 * 8 * GiB
    assert len(sweep_sizes(8 * GiB, 1600 * GiB, 1, 8 * GiB)) == 200
    result = runner.invoke(
        app,
        ["sweep", "allreduce", "-b", "1M", "-e", "3M", "-f", "1", "-i", "1M", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)[0]["rows"]
    assert [r["size_bytes"] for r in rows] == [MiB, 2 * MiB, 3 * MiB]


def test_stepbytes_is_read_whatever_the_factor_and_said_ignored_past_1() -> None:
    """-f 2 ignores -i, as nccl-tests' loop does, so -f 2 -i 0 runs (a review); but text that
    is no size (hello, nan, 10Gb) had been taken without a word (review CU), where every
    other option left unused is refused or said to be ignored."""
    base = ["sweep", "allreduce", "-b", "1K", "-e", "4K", "--system", "dgx-h100"]
    for bad, said in (
        ("hello", "--stepbytes 'hello' is not understood"),
        ("nan", "--stepbytes 'nan' is not a number (NaN; see"),
        ("10Gb", "--stepbytes '10Gb'"),
        ("-1", "--stepbytes '-1' is negative"),
    ):
        result = runner.invoke(app, [*base, "-f", "2", "-i", bad])
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr.startswith(f"error: {said}")
    for given in ("0", "1M"):
        result = runner.invoke(app, [*base, "-f", "2", "-i", given, "--format", "json"])
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)[0]["rows"]
        assert [r["size_bytes"] for r in rows] == [1024, 2048, 4096]
        assert result.stderr == (
            "note: --stepbytes ignored: -f 2 multiplies each size, as nccl-tests does\n"
        )
    plain = runner.invoke(app, [*base, "-f", "2"])
    assert "--stepbytes" not in plain.stderr


def test_sizes_are_capped() -> None:
    # 2^-300 ... 2^0 by 2 would be 301 sizes
    sizes = sweep_sizes(2.0**-300, 1, 2)
    assert len(sizes) == MAX_SWEEP_SIZES == 200
    assert sizes[-1] == 2.0 ** (-300 + 199)


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        (
            (8, 8, 0),
            "factor",
            "--stepfactor must be 1 or more (1 adds --stepbytes each step, as nccl-tests' -f 1)",
        ),
        (
            (MiB, GiB, 1),
            "factor",
            "--stepfactor 1 adds --stepbytes 1 MiB (its default) each step: from --minbytes "
            "1 MiB to --maxbytes 1 GiB is 1,024 sizes; a sweep runs at most 200 (a larger "
            "--stepbytes, or --stepfactor 2 or more)",
        ),
        (
            (MiB, GiB, 1, MiB),
            "step_bytes",
            "--stepbytes 1 MiB from --minbytes 1 MiB to --maxbytes 1 GiB is 1,024 sizes; a sweep "
            "runs at most 200 (a larger --stepbytes, or --stepfactor 2 or more)",
        ),
        ((8, 64, 1, 0.0), "step_bytes", "--stepbytes 0 is not a positive size"),
        ((1 * GiB, 1 * MiB, 2), "max_bytes", "--maxbytes 1 MiB is smaller than --minbytes 1 GiB"),
        ((0, 8, 2), "min_bytes", "--minbytes 0 is not a positive size"),
    ],
)
def test_size_errors_name_their_field(args: tuple[float, ...], field: str, message: str) -> None:
    with pytest.raises(FieldError) as info:
        sweep_sizes(*args)
    assert info.value.field == field
    assert info.value.render(FIELD_FLAGS) == message


@pytest.mark.parametrize(
    ("given", "message"),
    [
        # -e left at 8G (8 GiB): the user is told it is the default, and to give -e
        (
            ["-b", "16G"],
            "--maxbytes 8 GiB (its default) is smaller than --minbytes '16G': give -e",
        ),
        # -b left at 8 (8 B) under a -e of 4 B
        (
            ["-e", "4"],
            "--maxbytes '4' is smaller than --minbytes 8 B (its default): give -b "
            "(see 'ibcalc sweep --help')",
        ),
        # both typed: the library's refusal, each end quoted as typed, as a refusal of one
        # value quotes it (had been '--maxbytes 8 GiB is smaller than --minbytes 16 GiB')
        (
            ["-b", "16G", "-e", "8G"],
            "--maxbytes '8G' is smaller than --minbytes '16G' (see 'ibcalc sweep --help')",
        ),
        (
            ["--minbytes=1GB", "-e1MB"],
            "--maxbytes '1MB' is smaller than --minbytes '1GB' (see 'ibcalc sweep --help')",
        ),
    ],
)
def test_ends_out_of_order_say_which_is_the_default(given: list[str], message: str) -> None:
    """A review: 'sweep allreduce -b 16G' had been told "--maxbytes 8 GiB is smaller than
    --minbytes 16 GiB", a --maxbytes never typed (8G is its default)."""
    result = runner.invoke(app, ["sweep", "allreduce", *given])
    assert result.exit_code == 2
    assert result.stderr == f"error: {message}\n"


def test_sizes_too_small_for_the_ranks_are_skipped_and_listed(cat: Catalogue) -> None:
    # all-gather on 16 x 8 = 128 ranks, fp32: S = 1024 gives 256 elements, 2 per rank, rounded
    # down to 4 (16 bytes) = 0: skipped; S = 2048 gives 4 per rank = 2048 bytes: runs
    cluster = resolve_cluster(cat, ClusterSpec(nodes=16, gpus_per_node=8, inter="ndr"))
    result = sweep(cluster, Collective.ALL_GATHER, sweep_sizes(8, MiB, 2))
    (group,) = result.groups
    assert group.skipped_bytes == [2.0**k for k in range(3, 11)]
    assert result.skipped_bytes == group.skipped_bytes
    assert [e.size_bytes for e in group.estimates] == [2.0**k for k in range(11, 21)]
    assert [row.count for row in group.rows] == [4 * 2**k for k in range(10)]
    # the JSON says which sizes it leaves out (it had dropped them without a word)
    assert group.model_dump(mode="json")["skipped_bytes"] == [2.0**k for k in range(3, 11)]
    # all-to-all does not align to 16 bytes (published 16-rank runs print 64 B): on 128 ranks
    # S = 512 B is one 4-byte element per peer and runs; S = 256 B rounds to 0 and is skipped
    a2a = sweep(cluster, Collective.ALL_TO_ALL, sweep_sizes(8, MiB, 2)).groups[0]
    assert a2a.skipped_bytes == [2.0**k for k in range(3, 9)]
    assert a2a.rows[0].size_bytes == 512


def test_every_size_too_small_is_an_error(cat: Catalogue) -> None:
    cluster = resolve_cluster(cat, ClusterSpec(nodes=16, gpus_per_node=8, inter="ndr"))
    with pytest.raises(SizeTooSmallError):
        sweep(cluster, Collective.ALL_TO_ALL, sweep_sizes(8, 64, 2))


def test_fabrics_share_the_node_and_duplicates_drop(cat: Catalogue) -> None:
    spec = ClusterSpec(nodes=4, system="dgx-h100")
    # ndr400 is an alias of ndr: swept once
    result = sweep_fabrics(
        cat, spec, Collective.ALL_REDUCE, [MiB, GiB], fabrics=["ndr", "hdr", "ndr400"]
    )
    assert [g.label for g in result.groups] == ["ndr", "hdr"]
    for group in result.groups:
        assert (group.nodes, group.gpus_per_node, group.intra) == (4, 8, "nvlink4")
        assert group.nics_per_node == 8
        assert len(group.estimates) == 2
    # HDR (200 Gb/s) moves 1 GiB more slowly than NDR (400 Gb/s) between the same nodes
    ndr, hdr = (g.estimates[-1].time_s for g in result.groups)
    assert hdr > ndr


def test_a_fabric_swept_on_another_preset_s_node_says_so(cat: Catalogue) -> None:
    """--inter ndr,hdr with no node given: hdr runs on the DGX H100 node NDR implies, where
    'allreduce --inter hdr' alone takes the DGX A100 node HDR implies; the hdr group says which
    (review EB 6), the ndr group does not, and a given --system silences it."""

    def notes(spec: ClusterSpec) -> list[list[str]]:
        result = sweep_fabrics(cat, spec, Collective.ALL_REDUCE, [GiB], fabrics=["ndr", "hdr"])
        return [[a for a in g.assumptions if "priced on" in a] for g in result.groups]

    assert notes(ClusterSpec(nodes=4)) == [
        [],
        [
            "priced on dgx-h100's node, the first fabric's; alone, hdr takes dgx-a100's "
            "(sweep it alone, or with --system dgx-a100, for that node)"
        ],
    ]
    assert notes(ClusterSpec(nodes=4, system="dgx-h100")) == [[], []]
    # the link's own id where the fabric is typed otherwise
    result = sweep_fabrics(
        cat, ClusterSpec(nodes=4), Collective.ALL_REDUCE, [GiB], fabrics=["ndr", "HDR"]
    )
    assert "alone, hdr takes dgx-a100's" in result.groups[1].assumptions[0]
    # the node hdr alone implies is the one the single estimate takes
    alone = resolve_cluster(cat, ClusterSpec(nodes=4, inter="hdr"))
    assert alone.system is not None
    assert alone.system.id == "dgx-a100"


def test_several_fabrics_need_several_nodes(cat: Catalogue) -> None:
    with pytest.raises(ClusterError) as info:
        sweep_fabrics(
            cat, ClusterSpec(nodes=1), Collective.ALL_REDUCE, [MiB], fabrics=["ndr", "hdr"]
        )
    assert info.value.field == "inter"
    assert info.value.render(FIELD_FLAGS) == (
        "several --inter fabrics need more than one node (--nodes)"
    )


def test_algorithm_lines_only_for_one_cluster_and_auto(cat: Catalogue) -> None:
    spec = ClusterSpec(nodes=2, system="dgx-h100")
    result = sweep_fabrics(cat, spec, Collective.ALL_REDUCE, sweep_sizes(KiB, GiB, 32))
    lines = algorithm_lines(result)
    chosen = {e.best.algorithm for e in result.groups[0].estimates}
    assert chosen <= lines.keys()
    assert Algorithm.RING in lines
    for algorithm, series in lines.items():
        assert all(e.best.algorithm is algorithm for e in series)
    forced = sweep_fabrics(cat, spec, Collective.ALL_REDUCE, [MiB], algorithm=Algorithm.RING)
    assert algorithm_lines(forced) == {}


def test_algorithm_lines_take_the_sweeps_cost_parameters(cat: Catalogue, tmp_path: Path) -> None:
    """With every latency zeroed by a --cost-params file, the chosen line sat at 0.03 ns while
    the per-algorithm lines of the plot, costed with the built-in parameters, sat at 15-28 us:
    each line is now the sweep's own --algo estimate, with its parameters (here a proxy
    operation of 20 us a channel, the built-in 0.5 us)."""
    from ibcalc.catalogue.cost_params import load_cost_params

    override = tmp_path / "slow-proxy.yaml"
    override.write_text(
        "schema: ibcalc-cost-params/1\ncalibrated:\n  proxy_op_latency:\n    value: 20 us\n"
        "    derived_by: tests/cli/test_sweep.py::test\n    rows: none\n",
        encoding="utf-8",
    )
    params = load_cost_params(override, use_env=False)
    spec = ClusterSpec(nodes=2, system="dgx-h100")
    sizes = sweep_sizes(KiB, GiB, 32)
    result = sweep_fabrics(cat, spec, Collective.ALL_REDUCE, sizes, params=params)
    lines = algorithm_lines(result, params)
    ring = sweep_fabrics(
        cat, spec, Collective.ALL_REDUCE, sizes, algorithm=Algorithm.RING, params=params
    )
    assert [e.time_s for e in lines[Algorithm.RING]] == [e.time_s for e in ring.groups[0].estimates]
    # the built-in parameters price the ring's proxy operations otherwise
    assert [e.time_s for e in algorithm_lines(result)[Algorithm.RING]] != [
        e.time_s for e in ring.groups[0].estimates
    ]


def test_group_json_is_nccl_tests_rows(cat: Catalogue) -> None:
    spec = ClusterSpec(nodes=2, system="dgx-h100")
    result = sweep_fabrics(cat, spec, Collective.ALL_REDUCE, [GiB])
    data = result.groups[0].model_dump(mode="json")
    assert list(data) == [
        "collective",
        "inter",
        "intra",
        "nodes",
        "gpus_per_node",
        "ranks",
        "domains",
        "sites",
        "wan",
        "wan_links",
        "wan_latency_s",
        "nics_per_node",
        "oversubscription",
        "cross_leaf_fraction",
        "neighbour_cross_leaf_fraction",
        "unaligned_cross_leaf_fraction",
        "gpus_per_process",
        "host_pcie",
        "tuner_constants",
        "dtype",
        "rows",
        "skipped_bytes",
        "assumptions",
        "sharp",
    ]
    assert (data["domains"], data["sites"], data["wan"]) == (2, 1, None)
    # what tells two sweeps apart is in the JSON, not only in the assumptions' prose
    assert (data["wan_links"], data["wan_latency_s"], data["host_pcie"]) == (None, None, "pcie5")
    assert (data["oversubscription"], data["gpus_per_process"]) == (1.0, 1)
    wan = ClusterSpec(
        nodes=4, system="dgx-h100", sites=2, wan="wan-100g", wan_links=8, wan_latency_s=4e-3
    )
    far = sweep_fabrics(cat, wan, Collective.ALL_REDUCE, [GiB]).groups[0].model_dump(mode="json")
    assert (far["wan"], far["wan_links"], far["wan_latency_s"]) == ("wan-100g", 8, 4e-3)
    assert far["rows"][0]["time_us"] > 2 * 4e3  # a ring all-reduce crosses the WAN 4 times
    # what the table lists under it (the JSON had none of it): the cluster's notes, SHARP off
    assert data["assumptions"] == result.groups[0].cluster_notes
    assert "ndr supports SHARP (CollNet); enable with {sharp}" in data["assumptions"]
    assert data["sharp"] is False
    (row,) = data["rows"]
    assert row["size_bytes"] == GiB
    assert isinstance(row["size_bytes"], int)
    # all_reduce of 2^30 B in fp32: 2^28 elements; busbw = algbw x 2 (n-1)/n, n = 16
    assert row["count"] == 2**28
    assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"] * 2 * 15 / 16)
    assert row["time_us"] == pytest.approx(GiB / (row["algbw_GBps"] * 1e9) * 1e6)


def test_cli_sweep_json_lists_each_fabric() -> None:
    result = runner.invoke(
        app,
        [
            *("sweep", "all-reduce", "-b", "1M", "-e", "1G", "-f", "32"),
            *("--inter", "ndr,hdr", "-N", "2", "--format", "json"),
        ],
    )
    assert result.exit_code == 0, result.stderr
    groups = json.loads(result.stdout)
    assert [g["inter"] for g in groups] == ["ndr", "hdr"]
    # 1 MiB, 32 MiB and 1 GiB = 1 MiB x 32^2
    assert [[r["size_bytes"] for r in g["rows"]] for g in groups] == [[MiB, 32 * MiB, GiB]] * 2
    # the assumptions name the command's options, as the table's do
    assert "2 nodes assumed (--nodes)" not in groups[0]["assumptions"]  # -N 2 was given
    assert any(n.endswith("enable with --sharp") for n in groups[0]["assumptions"])


def test_cli_sweep_tables_share_one_bar_scale() -> None:
    # ndr and hdr on 2 x DGX H100 at 1 GiB: the hdr bar is as much shorter as its busbw is lower
    # (each table was scaled to its own peak, so both bars were full)
    args = ["sweep", "all-reduce", "-b", "1G", "-e", "1G", "--inter", "ndr,hdr", "-N", "2"]
    table = runner.invoke(app, args, env={"COLUMNS": "120"})
    data = runner.invoke(app, [*args, "--format", "json"])
    assert table.exit_code == 0, table.stderr
    busbw = [g["rows"][0]["busbw_GBps"] for g in json.loads(data.stdout)]
    eighths = {"█": 8, "▉": 7, "▊": 6, "▋": 5, "▌": 4, "▍": 3, "▎": 2, "▏": 1}
    bars = [
        sum(eighths.get(c, 0) for c in line)
        for line in table.stdout.splitlines()
        if line.strip().startswith("1073741824")
    ]
    assert len(bars) == 2
    assert bars[0] == 24 * 8  # the faster fabric fills the bar
    assert bars[1] == pytest.approx(24 * 8 * busbw[1] / busbw[0], abs=1)


def test_bare_size_letters_follow_nccl_tests() -> None:
    assert parse_size("1M") == 2**20
    assert parse_size("1MB") == 10**6
    result = runner.invoke(
        app,
        ["sweep", "allreduce", "-b", "1M", "-e", "1G", "-f", "2", "-N", "1", "--format", "json"],
    )
    assert result.exit_code == 0
    (group,) = json.loads(result.stdout)
    sizes = [row["size_bytes"] for row in group["rows"]]
    assert sizes == [2**20 * 2**i for i in range(11)]  # 1 MiB .. 1 GiB, as all_reduce_perf


def test_the_sweep_names_its_wan_tier(cat: Catalogue) -> None:
    """`sweep allreduce --sites 2` took 258 ms for 1 GB (4.3 ms without sites) under a title
    that named no WAN, and its JSON had no sites or link: both say it now."""
    spec = ClusterSpec(nodes=2, system="dgx-h100", sites=2)
    data = sweep_fabrics(cat, spec, Collective.ALL_REDUCE, [GiB]).groups[0].model_dump(mode="json")
    assert (data["sites"], data["wan"]) == (2, "wan-100g")
    result = runner.invoke(app, ["sweep", "allreduce", "--sites", "2", "-b", "1G", "-e", "1G"])
    assert result.exit_code == 0, result.output
    # two one-node sites: no rank talks over ndr, so the title names none
    assert "(nvlink4 inside, wan-100g between 2 sites)" in result.stdout
    result = runner.invoke(
        app, ["sweep", "allreduce", "--sites", "2", "-N", "4", "-b", "1G", "-e", "1G"]
    )
    assert "(nvlink4 inside, ndr between nodes, wan-100g between 2 sites)" in result.stdout


def test_the_sweep_says_what_it_assumed_of_the_cluster() -> None:
    """`sweep -g 1024` on an 8-GPU preset built a 1,024-GPU NVLink domain with no word on
    screen (the estimate commands list it); the table now ends with the cluster's notes, each
    once over the swept fabrics, flags named."""
    big = runner.invoke(
        app,
        [
            "sweep",
            "allreduce",
            "--system",
            "dgx-h100",
            "-g",
            "1024",
            "-N",
            "1",
            "-b",
            "1G",
            "-e",
            "1G",
        ],
    )
    assert big.exit_code == 0, big.output
    assert (
        "  - 1024 GPUs per node is more than dgx-h100's 8: a 1024-GPU nvlink4 domain is assumed"
        in big.stdout.splitlines()
    )
    two = runner.invoke(
        app, ["sweep", "allreduce", "-N", "4", "--inter", "ndr,roce-400g", "-b", "1G", "-e", "1G"]
    )
    assert two.exit_code == 0, two.output
    lines = two.stdout.splitlines()
    # a note that holds for one of the fabrics names it: the NIC count is roce-400g's (ndr's
    # is the dgx-h100 preset's, whose 8 ports roce-400g keeps), SHARP ndr's (the note had not
    # said whose either was)
    assert (
        lines.count(
            "  - roce-400g: 8 roce-400g NICs per node: dgx-h100's 8 ndr ports (--nics-per-node)"
        )
        == 1
    )
    assert "  - ndr: ndr supports SHARP (CollNet); enable with --sharp" in lines
    # every fabric runs on the first one's node: its note is not ndr's alone (a review)
    assert (
        "  - node shape: dgx-h100 (NVIDIA DGX H100), the preset ndr implies; change with "
        "--system, --gpus-per-node, --intra"
    ) in lines


def test_a_sweep_says_which_sizes_it_skipped_and_offers_sharp_to_all_reduce_only() -> None:
    """-b 1 -e 64 -d fp64 started at 8 B, and an all-to-all over 16 ranks at 64 B, without a
    word of the sizes left out; an all-to-all sweep was told 'ndr supports SHARP'."""
    base = ["--system", "dgx-h100", "-N", "2"]
    out = runner.invoke(app, ["sweep", "allreduce", "-b", "1", "-e", "64", "-d", "fp64", *base])
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    # 1, 2 and 4 B hold no 8-byte element, on any number of ranks (it had said 'on 16 ranks')
    assert (
        "skipped 1 B, 2 B, 4 B: nccl-tests would run 0 bytes of fp64 there (under one 8-byte "
        "element)"
    ) in lines
    # SHARP is offered to all-reduce, and with fp64, which the model takes IB SHARP not to
    # reduce, said as the single estimate says it
    sharp = "  - ndr supports SHARP (CollNet); --sharp would not change this all-reduce: SHARP"
    assert f"{sharp} does not reduce fp64" in lines
    # an all-to-all of S bytes sends S / 16 to each rank: under 16 x 4 B, no fp32 element
    out = runner.invoke(app, ["sweep", "alltoall", "-b", "8", "-e", "64", *base])
    lines = out.stdout.splitlines()
    assert (
        "skipped 8 B, 16 B, 32 B: nccl-tests would run 0 bytes of fp32 there on 16 ranks" in lines
    )
    assert not any("supports SHARP" in line for line in lines)


def test_a_sweep_table_never_cuts_digits_for_its_bar() -> None:
    """At 100 columns a sweep to 1 PiB printed 112589990684262 for 1125899906842624 B, 'fp3' and
    'nvlstree/Simpl': the bar took the room the numbers needed."""
    result = CliRunner().invoke(
        app, ["sweep", "allreduce", "-b", "1T", "-e", "1P", "-f", "32"], env={"COLUMNS": "100"}
    )
    assert result.exit_code == 0
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == [str(2**40), str(2**45), str(2**50)]
    assert {r[1] for r in rows} == {"fp32"}  # the count column gives way first (below)
    assert all(r[-1].endswith("/Simple") or r[-2].endswith("/Simple") for r in rows)


def test_an_80_column_sweep_leaves_out_the_count_rather_than_wrap_every_row() -> None:
    """2 x DGX H100, 8 B to 1 GiB: its figures took 85 columns, so an 80-column terminal wrapped
    every row. The element count (the size over the type's bytes) is left out there, and said so;
    at 160 columns it is printed, and equals size / 4 for fp32."""
    argv = [
        "sweep",
        "allreduce",
        "--system",
        "dgx-h100",
        "-N",
        "2",
        "-b",
        "8",
        "-e",
        "1G",
        "-f",
        "8",
    ]
    narrow = CliRunner().invoke(app, argv, env={"COLUMNS": "80"}).stdout
    assert max(len(line) for line in narrow.splitlines()) <= 80
    rows = [line.split() for line in narrow.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == [str(8**k) for k in range(1, 11)]
    assert {r[1] for r in rows} == {"fp32"}
    assert "the count column (elements) is left out at 80 columns" in " ".join(narrow.split())
    wide = CliRunner().invoke(app, argv, env={"COLUMNS": "160"}).stdout
    rows = [line.split() for line in wide.splitlines() if line.strip()[:1].isdigit()]
    assert [int(r[1]) for r in rows] == [8**k // 4 for k in range(1, 11)]
    assert "count column" not in wide


def test_a_drop_in_time_is_given_with_its_depth_and_a_deep_one_is_called_least_sure() -> None:
    """16 x DGX H100 all-gather: ring/LL to ring/LL128 at 4 MiB takes the time from about 569 us
    to 307 us. The footnote had cited p5's measured 7-9 % drop for it without a word on depth;
    it now gives each drop's depth, worked from the JSON's times, and past 9 % says the times
    before it are the least sure of the sweep."""
    argv = ["sweep", "allgather", "-b", "64K", "-e", "64M", "--system", "dgx-h100", "-N", "16"]
    (group,) = json.loads(CliRunner().invoke(app, [*argv, "--format", "json"]).stdout)
    rows = group["rows"]
    drops = [
        (b["size_bytes"], 1 - b["time_us"] / a["time_us"])
        for a, b in pairwise(rows)
        if b["time_us"] < a["time_us"]
        and (a["algorithm"], a["protocol"])
        != (
            b["algorithm"],
            b["protocol"],
        )
    ]
    assert drops
    out = " ".join(CliRunner().invoke(app, argv, env={"COLUMNS": "100"}).stdout.split())
    for size, drop in drops:
        assert f"at {size} B (" in out or f", {size} B (" in out
        assert f"-{format_number(100 * drop)}%)" in out
    assert max(d for _, d in drops) > 0.09
    assert "the deepest drop a steady published run shows is on EFA" in out
    assert "none is deeper than 9%, so the times just before a deeper one" in out


def test_json_and_csv_rows_carry_the_switch_and_the_drop() -> None:
    """A script reading the sweep had no way to find the table's '>' marks or its footnote's
    drops. Each row now says whether NCCL's tuner switched there (its choice differs from the
    row before) and how far time fell, 1 - t / t_before, worked here from the rows' own times;
    the first row has no row before it."""
    argv = ["sweep", "allgather", "-b", "64K", "-e", "64M", "--system", "dgx-h100", "-N", "16"]
    (group,) = json.loads(runner.invoke(app, [*argv, "--format", "json"]).stdout)
    rows = group["rows"]
    assert rows[0]["switch"] is False
    assert rows[0]["time_drop_fraction"] is None
    for a, b in pairwise(rows):
        changed = (a["algorithm"], a["protocol"]) != (b["algorithm"], b["protocol"])
        assert b["switch"] is changed
        if b["time_us"] < a["time_us"]:
            assert changed  # time falls only where the choice changes
            assert b["time_drop_fraction"] == pytest.approx(1 - b["time_us"] / a["time_us"])
        else:
            assert b["time_drop_fraction"] is None
    assert any(r["time_drop_fraction"] for r in rows)
    csv_lines = runner.invoke(app, [*argv, "--format", "csv"]).stdout.splitlines()
    header = csv_lines[0].split(",")
    cells = [dict(zip(header, line.split(","), strict=True)) for line in csv_lines[1:]]
    # true/false as JSON writes them (Python's True/False had been written; a review)
    assert [c["switch"] for c in cells] == ["true" if r["switch"] else "false" for r in rows]
    for cell, row in zip(cells, rows, strict=True):
        drop = row["time_drop_fraction"]
        assert cell["time_drop_fraction"] == ("" if drop is None else repr(drop))


#: A small all-gather on 4 x DGX H100 (32 ranks), whose sizes below 512 B are skipped
GATHER_ON_32_RANKS = ["sweep", "allgather", "-b", "8", "--system", "dgx-h100", "-N", "4"]


def test_a_csv_sweep_says_on_stderr_what_its_table_says_under_the_rows() -> None:
    """CSV has no room for the notes: an all-gather of 8 B-2 KiB on 32 ranks gave 3 rows of 9
    sizes, and a sweep given only --fabric efa-v2 numbers on an inferred p5 node, with nothing
    on stderr (a review). The skipped sizes and the assumptions go there; stdout stays CSV."""
    gather = runner.invoke(app, [*GATHER_ON_32_RANKS, "-e", "2K", "--format", "csv"])
    assert gather.exit_code == 0, gather.output
    assert len(gather.stdout.splitlines()) == 1 + 3  # 512 B, 1 KiB, 2 KiB
    assert gather.stderr.splitlines()[0] == (
        "skipped 8 B, 16 B, 32 B, 64 B, 128 B, 256 B: nccl-tests would run 0 bytes of fp32 "
        "there on 32 ranks"
    )
    efa = runner.invoke(app, ["sweep", "allreduce", "-b", "8", "-e", "64", "--fabric", "efa-v2"])
    assert "assumptions:" in efa.stdout
    csv_run = runner.invoke(
        app, ["sweep", "allreduce", "-b", "8", "-e", "64", "--fabric", "efa-v2", "--format", "csv"]
    )
    assert csv_run.stdout.startswith("inter,size_bytes,")
    assert "assumption: 2 nodes assumed (--nodes)" in csv_run.stderr.splitlines()
    assert any(
        line.startswith("assumption: node shape: aws-p5") for line in csv_run.stderr.splitlines()
    )


def test_sweep_table_shows_each_size_likely_range() -> None:
    """Every estimate carries its range; the sweep table had none (its JSON had time_us_range).
    Each row's 'likely (us)' cell is the JSON's range, three figures each end."""
    args = [
        "sweep",
        "allreduce",
        "-b",
        "8",
        "-e",
        "8G",
        "-f",
        "16",
        "--system",
        "aws-p5",
        "-N",
        "2",
    ]
    rows = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)[0]["rows"]
    table = CliRunner().invoke(app, args, env={"COLUMNS": "120"}).stdout

    def figure(value: float) -> str:
        return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"

    lines = {line.split()[0]: line.split() for line in table.splitlines() if line[:1] == " "}
    assert "likely" in table
    for row in rows:
        low, high = row["time_us_range"]
        assert low <= row["time_us"] <= high
        cells = lines[f"{row['size_bytes']:.0f}"]
        assert cells[3:5] == [f"{row['time_us']:.2f}", f"{figure(low)}-{figure(high)}"]


def test_sweep_likely_range_never_reads_past_the_time_beside_it() -> None:
    """On a100-pcie-pair a range starts at the time itself from 128 MiB (the band's low end is
    above it there and the range always holds the time): 5350.51 us had read '5351-16214', a
    range the time beside it fell out of. An end that rounds past the time as printed is
    rounded toward it (5350.5088 down to 5350); the others round as before (16213.66 is 16214)."""
    args = ["sweep", "allreduce", "-b", "8", "-e", "16G", "-f", "16", "--system", "a100-pcie-pair"]
    rows = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)[0]["rows"]
    table = CliRunner().invoke(app, args, env={"COLUMNS": "120"}).stdout
    lines = {line.split()[0]: line.split() for line in table.splitlines() if line[:1] == " "}
    row = next(r for r in rows if r["size_bytes"] == 128 * MiB)
    assert row["time_us_range"][0] == row["time_us"] == pytest.approx(5350.5088, abs=1e-4)
    assert lines[str(128 * MiB)][3:5] == ["5350.51", "5350-16214"]
    for row in rows:
        time_cell, range_cell = lines[f"{row['size_bytes']:.0f}"][3:5]
        low, high = (float(end) for end in range_cell.split("-"))
        assert low <= float(time_cell) <= high


def test_sweep_likely_range_rounds_an_end_toward_the_time_only_past_it() -> None:
    """Hand-rounded: each end keeps three figures; only an end that would read past the time
    (printed with two decimals) is rounded toward it, at the same figures."""
    assert _likely_us([21.734, 37.52], 30.0) == "21.7-37.5"
    assert _likely_us([45.26, 129.18], 45.26) == "45.2-129"  # 45.3 would be past 45.26
    assert _likely_us([30.0, 5350.49], 5350.49) == "30.0-5351"  # 5350 would be short of it
    assert _likely_us([4.567, 4.567], 4.567) == "4.57-4.57"  # two decimals: as the time reads
    assert _likely_us([45.2, 45.2], 45.2) == "45.2-45.2"  # 452.00000000000006 is 452 tenths
    assert _likely_us(None, 1.0) == "-"


def test_sweep_rows_carry_the_busbw_range_of_their_time_range() -> None:
    """A single estimate's JSON gives busbw_GBps_range beside time_s_range; a sweep row gave the
    time's range alone. Each row's busbw range is S / t x F(n) at the time range's ends, worked
    here by hand for an all-reduce of 16 ranks (F = 2 x 15 / 16 = 1.875), in JSON and as two CSV
    columns."""
    args = ["sweep", "allreduce", "-b", "1K", "-e", "1G", "-f", "32", "--fabric", "ndr", "-N", "2"]
    rows = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)[0]["rows"]
    assert len(rows) == 5
    for row in rows:
        low_us, high_us = row["time_us_range"]
        size = row["size_bytes"]
        slow, fast = row["busbw_GBps_range"]
        assert slow == pytest.approx(size / (high_us * 1e-6) * 1.875 / 1e9, rel=1e-12)
        assert fast == pytest.approx(size / (low_us * 1e-6) * 1.875 / 1e9, rel=1e-12)
        assert slow <= row["busbw_GBps"] <= fast
    csv_text = CliRunner().invoke(app, [*args, "--format", "csv"]).stdout
    header, *lines = csv_text.splitlines()
    columns = header.split(",")
    assert "busbw_GBps_range_low" in columns
    assert "busbw_GBps_range_high" in columns
    last = dict(zip(columns, lines[-1].split(","), strict=True))
    assert float(last["busbw_GBps_range_low"]) == pytest.approx(rows[-1]["busbw_GBps_range"][0])


def test_a_sweep_says_when_its_busbw_bar_is_left_out() -> None:
    """At 90-100 columns the likely-range column can leave no room for the bar, which then went
    without a word. The note names the width that shows it; at that width the bar is there."""
    args = ["sweep", "allreduce", "--system", "dgx-h100", "-N", "2", "-b", "1G", "-e", "8G"]
    narrow = CliRunner().invoke(app, [*args, "-f", "8"], env={"COLUMNS": "95"}).stdout
    (note,) = (line for line in narrow.splitlines() if "busbw bar is left out" in line)
    assert "busbw bar" not in narrow.split("\n\n")[1].splitlines()[1]
    wide = int(note.split("(")[1].split()[0])
    shown = CliRunner().invoke(app, [*args, "-f", "8"], env={"COLUMNS": str(wide)}).stdout
    assert "busbw bar" in shown
    assert "busbw bar is left out" not in shown
    assert max(len(line) for line in shown.splitlines()) <= wide


def test_the_width_hints_name_where_the_count_and_the_bar_both_show() -> None:
    """A WAN sweep at 100 columns had said the count column returns at 103 and the bar at 101,
    where 103 shows the count and loses the bar again: both take 113 (review BD). Each hint
    now names that width too; at it, both are there, and a narrow bar's scale says 'full'
    (a bare '0.126 GB/s' on its own line had read as one more busbw figure)."""
    args = ["sweep", "allreduce", "--system", "dgx-h100", "--nodes", "2", "--sites", "2"]
    args += ["--wan", "wan-100g", "--rtt", "1s", "-b", "8", "-e", "64G", "-f", "16"]

    def at(width: int) -> str:
        return CliRunner().invoke(app, args, env={"COLUMNS": str(width)}).stdout

    notes = " ".join(" ".join(line.split()) for line in at(100).splitlines() if "left out" in line)
    assert "the count column (elements) is left out at 100 columns (103 or more show it)" in notes
    assert (
        "the busbw bar is left out at 100 columns (101 or more show it, 113 or more with the "
        "count column)"
    ) in notes
    assert "(103 or more show it, 113 or more with the bar)" in " ".join(at(102).split())
    both = at(113)
    assert "left out" not in both
    assert "count" in both
    assert "full 0.126" in both
    assert "full 0.126" in at(102)
    # and no wider than the page at the widths the hints name (review BH: '(full 0.126' was a
    # column too wide at 101 and 113)
    for width in (101, 102, 113, 114):
        assert max(len(line) for line in at(width).splitlines()) <= width, width


def test_a_point_to_point_sweep_does_not_credit_a_tuner() -> None:
    """An all-to-all sweep whose path changes had been footed 'NCCL's tuner changes algorithm or
    protocol at this size'; NCCL does not tune point-to-point work."""
    argv = ["sweep", "alltoall", "--system", "dgx-h100", "-N", "4", "-b", "1KB", "-e", "1GB"]
    out = runner.invoke(app, argv).stdout
    assert "> NCCL's point-to-point rules change algorithm or protocol at this size" in out
    assert "NCCL's tuner changes" not in out


@pytest.mark.parametrize(
    ("given", "words"),
    [
        (["--measured", "m.csv"], "error: --measured needs --plot FILE.png|FILE.svg"),
        (["--plot-time"], "error: --plot-time needs --plot FILE.png|FILE.svg"),
        (
            ["--plot-time", "--measured", "m.csv"],
            "error: --plot-time and --measured need --plot FILE.png|FILE.svg",
        ),
    ],
)
def test_plot_options_without_a_plot_name_what_was_given(given: list[str], words: str) -> None:
    """--measured alone had been told '--plot-time and --measured need --plot'."""
    result = runner.invoke(app, ["sweep", "allreduce", *given])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == words


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((8, 1e9, float("nan")), "factor nan is not a whole number"),
        ((8, 1e9, 2.5), "factor 2.5 is not a whole number"),
        ((8, 1e9, True), "factor True is not a whole number"),
        ((8, float("inf"), 2), "max_bytes inf is not a finite size"),
    ],
)
def test_sweep_sizes_refuses_what_nccl_tests_would_not_run(
    args: tuple[float, float, float], message: str
) -> None:
    """A library user's review: a NaN factor had given one size, 2.5 fractional byte sizes, and
    an infinite maximum had been called smaller than the minimum. nccl-tests' -f is a whole
    number (2.0 is one: 8 B to 1 GB by 2 is 27 sizes, 8 x 2^26 = 536,870,912 the last)."""
    with pytest.raises(FieldError, match=message):
        sweep_sizes(*args)
    assert len(sweep_sizes(8, 1e9, 2.0)) == 27


def test_sweep_sizes_takes_a_whole_factor_of_any_numeric_type() -> None:
    """numpy's int64, Fraction(4) and Decimal(4) are whole numbers (the first cut of the check
    had refused them, 'np.int64(4) is not a whole number': a review); numpy's True is not.
    8 B to 1 GB by 4: 8 x 4^13 = 536,870,912 is the last of 14 sizes."""
    from decimal import Decimal
    from fractions import Fraction

    numpy = pytest.importorskip("numpy")
    for factor in (numpy.int64(4), Fraction(4), Decimal(4), numpy.float64(4.0)):
        assert len(sweep_sizes(8, 1e9, factor)) == 14
    with pytest.raises(FieldError, match="is not a whole number"):
        sweep_sizes(8, 1e9, numpy.bool_(True))


def test_sweep_rows_say_why_their_range_reaches_or_stops_where_it_does(tmp_path: Path) -> None:
    """A row's likely range had reached down to 0.47x its time with nothing saying why (a
    review): rows carry range_covers, range_reaches and range_wire_floor_us as the estimate's
    JSON does, and CSV gets them as plain cells."""
    result = runner.invoke(
        app,
        [
            "sweep",
            "allgather",
            "--system",
            "dgx-h100",
            "-N",
            "64",
            "-b",
            "4MiB",
            "-e",
            "4MiB",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)[0]["rows"]
    assert (row["range_reaches"], row["range_covers"], row["range_wire_floor_us"]) == (
        "ring/LL128",
        None,
        None,
    )
    # one NDR port per node: the ring's busbw cannot pass 50 GB/s; 8 GiB x F(2) = 1 / 50e9 B/s.
    # The shipped verbs band (+0.02) stops short of the wire by itself: a wider one reaches it
    from ibcalc.catalogue.cost_params import builtin_cost_params

    quantiles = {
        regime: {cls: list(q) for cls, q in row.items()}
        for regime, row in builtin_cost_params().error_band.time_error_quantiles.items()
    }
    quantiles["bandwidth"]["verbs"][1] = 0.10
    wide = tmp_path / "wide.yaml"
    wide.write_text(
        yaml.safe_dump(
            {
                "schema": "ibcalc-cost-params/1",
                "error_band": {"time_error_quantiles": {"value": quantiles, "assumed": "a test"}},
            }
        )
    )
    wire = runner.invoke(
        app,
        [
            "sweep",
            "allreduce",
            "-N",
            "2",
            "-g",
            "1",
            "--inter",
            "ndr",
            "-b",
            "8G",
            "-e",
            "8G",
            "--format",
            "csv",
            "--cost-params",
            str(wide),
        ],
    )
    assert wire.exit_code == 0, wire.output
    header, line = wire.stdout.strip().splitlines()
    cells = dict(zip(header.split(","), line.split(","), strict=True))
    assert float(cells["range_wire_floor_us"]) == pytest.approx(2**33 / 50e9 * 1e6, rel=1e-12)
    assert float(cells["time_us_range_low"]) == float(cells["range_wire_floor_us"])
    assert cells["range_reaches"] == ""


def test_an_8_bit_sweep_says_what_its_type_rules_out() -> None:
    """A review: an fp8 all-reduce sweep on 2 x DGX H100 said 'enable with --sharp' and
    nothing of NVLS-tree, which fp8 keeps from running (NVLink SHARP reduces 16-, 32- and
    64-bit types; IB SHARP 16- and 32-bit), as the single estimate says."""
    args = ["sweep", "allreduce", "--system", "dgx-h100", "-N", "2", "-b", "1M", "-e", "1G"]
    fp8 = runner.invoke(app, [*args, "-d", "fp8"])
    assert fp8.exit_code == 0, fp8.output
    out = " ".join(fp8.output.split())
    sharp = "ndr supports SHARP (CollNet); --sharp would not change this all-reduce"
    assert f"{sharp}: SHARP does not reduce fp8" in out
    assert "enable with --sharp" not in out
    nvls = "nvlstree is not offered: NVLink SHARP reduces 16-, 32- and 64-bit types, not 8-bit"
    assert f"{nvls} ones (fp8 given)" in out
    bf16 = runner.invoke(app, [*args, "-d", "bf16"])
    assert "ndr supports SHARP (CollNet); enable with --sharp" in " ".join(bf16.output.split())
    assert "not offered" not in bf16.output


def test_a_wide_all_to_all_sweep_says_its_message_term_is_an_extrapolation() -> None:
    """64 GPUs in one NVL72 domain: 63 messages a rank at 2.4 us (Blackwell at Hopper's clock),
    beyond the 15 of the 16 GPUs the per-message cost is fitted on, said once for the sweep as
    a single estimate says it; 2 x DGX H100 with PXN posts 15 and says nothing."""
    args = ["sweep", "alltoall", "-b", "1K", "-e", "1M", "-f", "32"]
    wide = runner.invoke(app, [*args, "--system", "gb200-nvl72", "-N", "16"])
    assert wide.exit_code == 0, wide.output
    out = " ".join(wide.output.split())
    assert out.count("63 messages a rank at 2.4 us each (151 us of each all-to-all)") == 1
    two = runner.invoke(app, [*args, "--system", "dgx-h100", "-N", "2"])
    assert two.exit_code == 0, two.output
    assert "messages a rank" not in two.output


def test_a_sweep_past_the_gpus_memory_says_from_which_size() -> None:
    """1 GiB to 1 PB by 16 on 2 x DGX H100: nccl-tests runs up to (80 - 4 - 1) / 3 = 25 GiB on
    its 80 GiB GPUs, so 16 GiB runs and 256 GiB does not."""
    result = runner.invoke(app, ["sweep", "allreduce", "-b", "1G", "-e", "1PB", "-f", "16"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert (
        "from 256 GiB up, the sizes are past the about 25.0 GiB nccl-tests runs on dgx-h100's "
        "80.0 GiB GPUs"
    ) in out
    # HGX H200's 141 GiB: (141 - 4 - 1) / 3 = 45.33 GiB, three figures as train prints memory
    h200 = runner.invoke(
        app, ["sweep", "allreduce", "--system", "hgx-h200", "-b", "64G", "-e", "64G"]
    )
    assert h200.exit_code == 0, h200.output
    assert "past the about 45.3 GiB nccl-tests runs on hgx-h200's 141 GiB GPUs" in " ".join(
        h200.output.split()
    )


def test_a_small_fall_at_a_switch_is_said_with_its_digits() -> None:
    """2 x p5 all-reduce: time falls 0.45 % at 512 KiB where NCCL switches, which the note had
    printed as '-0%' (a review); it gives three digits, as the JSON's fraction has them."""
    argv = ["sweep", "allreduce", "-b", "128K", "-e", "1M", "-f", "2", "--system", "aws-p5"]
    argv += ["-N", "2"]
    rows = json.loads(runner.invoke(app, [*argv, "--format", "json"]).stdout)[0]["rows"]
    (i,) = [k for k, r in enumerate(rows) if r["time_drop_fraction"]]
    before, row = rows[i - 1], rows[i]
    assert 0 < row["time_drop_fraction"] < 0.01
    table = runner.invoke(app, argv, env={"COLUMNS": "200"})
    said = (
        f"{row['size_bytes']} B ({before['time_us']:.1f} -> {row['time_us']:.1f} us, "
        f"-{format_number(100 * row['time_drop_fraction'])}%)"
    )
    assert said in " ".join(table.stdout.split())


def test_sweep_json_types_match_the_estimate_json() -> None:
    """A sweep on one node said "inter": "-" where the estimate's JSON says null, and its
    skipped sizes were floats (8.0) beside whole size_bytes (a review)."""
    one_node = ["sweep", "allreduce", "-b", "1M", "-e", "2M", "--system", "h100-pcie-8"]
    one = runner.invoke(app, [*one_node, "--format", "json"])
    assert json.loads(one.stdout)[0]["inter"] is None
    csv_one = runner.invoke(app, [*one_node, "--format", "csv"])
    assert [line.split(",")[0] for line in csv_one.stdout.splitlines()[1:]] == ["", ""]
    single = runner.invoke(
        app, ["allreduce", "--size", "1MB", "--system", "h100-pcie-8", "--format", "json"]
    )
    assert json.loads(single.stdout)["inter"] is None
    gather = runner.invoke(app, [*GATHER_ON_32_RANKS, "-e", "1K", "--format", "json"])
    skipped = json.loads(gather.stdout)[0]["skipped_bytes"]
    assert skipped == [8, 16, 32, 64, 128, 256]
    assert all(type(size) is int for size in skipped)


def test_a_step_in_bytes_is_not_read_where_a_factor_ignores_it() -> None:
    """-f 2 ignores -i, as nccl-tests does; -f 2 -i 0 had been refused for the -i (a review)."""
    args = ["sweep", "allreduce", "-b", "1M", "-e", "4M", "--format", "json"]
    result = runner.invoke(app, [*args, "-f", "2", "-i", "0"])
    assert result.exit_code == 0, result.output
    assert [r["size_bytes"] for r in json.loads(result.stdout)[0]["rows"]] == [
        MiB,
        2 * MiB,
        4 * MiB,
    ]
    assert runner.invoke(app, [*args, "-f", "1", "-i", "0"]).exit_code == 2


def test_the_largest_step_factor_still_reaches_a_second_size() -> None:
    """-f's bound, 2^50, is the widest step a sweep can take: from 1 B to 1 PiB (the sizes' own
    limits) it is a series of two, the first too small for 16 ranks; 2^50 + 1 is refused
    (tests/cli/test_boundary.py, review EK 1)."""
    argv = ["sweep", "allreduce", "-b", "1", "-e", "1PiB", "-f", str(2**50)]
    result = runner.invoke(app, [*argv, "--system", "dgx-h100", "-N", "2", "--format", "csv"])
    assert result.exit_code == 0
    assert sweep_sizes(1, parse_size("1PiB"), 2**50) == [1, 2**50]
    assert [line.split(",")[1] for line in result.stdout.splitlines()[1:]] == [str(2**50)]
