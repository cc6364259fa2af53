"""Tests of ibcalc.logs: real nccl-tests / rccl-tests logs, synthetic JSON, hostile input.

Every expected number below was read from the fixture text (tests/logs/fixtures, sources in
SOURCES.md) by hand - row counts by counting the table lines, times and bandwidths from the row
named in the comment - never copied from the parser's output.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

from ibcalc.engine.types import Collective
from ibcalc.errors import IbcalcError, LogParseError
from ibcalc.logs import ParsedLog, Run, parse_file, parse_log
from ibcalc.logs.infer import normalize_dtype, version_from_code

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The published sweeps live once in the repository, with the benchmark data (SOURCES.md there).
SWEEPS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"


def fixture(name: str) -> Path:
    """A fixture file; ``sweep_<file>`` names a published sweep in benchmarks/data/sweeps."""
    if name.startswith("sweep_"):
        return SWEEPS / name.removeprefix("sweep_")
    return FIXTURES / name


def load(name: str) -> ParsedLog:
    return parse_file(fixture(name))


def only_run(name: str) -> Run:
    log = load(name)
    assert len(log.runs) == 1
    return log.runs[0]


def text_of(name: str) -> str:
    return fixture(name).read_text(encoding="utf-8")


def inference(run: Run, field: str) -> str:
    found = [i for i in run.inferences if i.field == field]
    assert found, f"no inference for {field}"
    return found[-1].evidence


def has_note(run: Run, *words: str) -> bool:
    return any(all(w in note for w in words) for note in run.notes)


# ---------------------------------------------------- published logs (tests/logs/fixtures)


def test_01_srun_prefixes_debug_noise_and_ambiguous_scatter() -> None:
    run = only_run("01_scatter_2node_16xA100-40GB_p4d_efa_slurm_full_debug_log.txt")
    # 29 table lines, the first three of size 0 (8, 16, 32 B round to 0 per rank)
    assert len(run.rows) == 26
    assert has_note(run, "3 rows of size 0 skipped")
    assert run.rows[0].size_bytes == 64
    assert run.rows[0].count == 1
    assert run.rows[0].oop.time_us == 89.27
    assert run.rows[0].ip is not None
    assert run.rows[0].ip.time_us == 89.52
    assert run.rows[-1].size_bytes == 2147483648
    assert run.rows[-1].oop.time_us == 24982
    assert run.rows[-1].oop.busbw_GBps == 80.59
    assert run.rows[0].root == 0
    assert run.redop == "none"
    assert run.avg_busbw_GBps == 20.2635  # trailer after 16 "Destroy COMPLETE" lines
    assert run.out_of_bounds == 0
    assert not run.truncated
    assert run.ranks == 16
    assert run.ranks_per_node == 8
    assert run.nodes == 2
    assert run.hosts == ["compute-gpu-st-distributed-ml-1", "compute-gpu-st-distributed-ml-2"]
    assert run.gpu_model == "NVIDIA A100-SXM4-40GB"
    assert run.nccl_version == "2.18.3"  # " 0: NCCL version 2.18.3+cuda12.2"
    assert run.library == "nccl"
    assert run.warmup_iters == 5
    assert run.iters == 100
    # no command line: redop none, root 0, size = count x 4 B x 16 fits scatter and gather
    assert run.raw_collective is None
    assert run.collective is None
    coll = next(i for i in run.inferences if i.field == "collective")
    assert coll.value is None
    assert sorted(coll.candidates) == ["gather", "scatter"]


def test_06_no_command_all_reduce_inferred_from_ratio() -> None:
    run = only_run("06_allreduce_2node_16xH100_gcp_a3mega.txt")
    assert len(run.rows) == 31  # 8 B .. 8 GiB
    assert run.rows[0].size_bytes == 8
    assert run.rows[0].oop.time_us == 135.8
    assert run.rows[-1].size_bytes == 8589934592
    assert run.rows[-1].oop.time_us == 47535
    assert run.rows[-1].oop.busbw_GBps == 338.82
    assert run.avg_busbw_GBps == 70.742
    assert run.collective is Collective.ALL_REDUCE
    assert "1.875" in inference(run, "collective")  # busbw/algbw = 2 * 15 / 16
    assert run.ranks == 16
    assert run.ranks_per_node == 8
    assert run.nodes == 2
    assert run.gpu_model == "NVIDIA H100 80GB HBM3"
    assert run.nccl_version is None  # not printed
    assert run.library == "nccl"  # inferred from the device name
    assert "NVIDIA" in inference(run, "library")
    assert run.warmup_iters == 5
    assert run.iters == 20
    assert run.step_factor == 2
    assert run.dtype == "fp32"
    assert run.redop == "sum"


def test_08_int8_wrong_counts_and_truncation() -> None:
    run = only_run("08_allreduce_int8_4node_16xGH200_slingshot_WRONG_truncated.txt")
    assert len(run.rows) == 28  # 1 B .. 128 MiB
    assert run.rows[0].size_bytes == 1
    assert run.rows[-1].size_bytes == 134217728
    assert run.dtype == "int8"
    two_mib = next(r for r in run.rows if r.size_bytes == 2097152)
    assert two_mib.oop.wrong == 18134
    assert two_mib.ip is not None
    assert two_mib.ip.wrong == 9609
    four_mib = next(r for r in run.rows if r.size_bytes == 4194304)
    assert four_mib.ip is not None
    assert four_mib.ip.time_us == 10542.7
    assert four_mib.ip.wrong == 124342
    assert next(r for r in run.rows if r.size_bytes == 33554432).oop.wrong == 951005
    assert has_note(run, "#wrong is non-zero in 6 rows")
    assert run.truncated
    # one row is one size, not a range of it ('268435456-268435456 B': a review)
    text = (SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt").read_text(
        encoding="utf-8"
    )
    row = "2759.0   97.29  182.43      0"
    assert text.count(row) == 1
    one = parse_log(text.replace(row, "2759.0   97.29  182.43      3"), source="07.txt").runs[0]
    assert has_note(one, "#wrong is non-zero in 1 row (268435456 B): those results failed")
    assert run.avg_busbw_GBps is None
    assert has_note(run, "log ends after 28 rows without the 'Avg bus bandwidth' trailer")
    assert run.collective is Collective.ALL_REDUCE
    assert run.ranks == 16
    assert run.ranks_per_node == 4
    assert run.nodes == 4
    assert run.gpu_model == "NVIDIA GH200 120GB"
    assert run.tests_version == "2.17.9"
    assert run.nccl_version == "2.29.2"  # nccl-library=22902
    assert "22902" in inference(run, "nccl_version")


def test_09_six_runs_in_one_session() -> None:
    log = load("09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt")
    assert [r.raw_collective for r in log.runs] == [
        "all_reduce",
        "all_gather",
        "broadcast",
        "reduce",
        "reduce",
        "alltoall",
    ]
    assert [r.avg_busbw_GBps for r in log.runs] == [
        2.05774,
        1.6651,
        5.07658,
        5.23248,
        202818,
        2.06935,
    ]
    assert [len(r.rows) for r in log.runs] == [28, 26, 28, 28, 28, 26]
    assert [r.ranks for r in log.runs] == [2, 2, 2, 2, 1, 2]
    assert [r.gpus_per_process for r in log.runs] == [2, 2, 2, 2, 1, 2]
    assert all(r.gpu_model == "NVIDIA GeForce RTX 2080 Ti" for r in log.runs)
    assert all(not r.truncated for r in log.runs)
    assert [r.line_start for r in log.runs] == [1, 43, 85, 128, 170, 212]  # the prompts
    all_gather = log.runs[1]
    assert has_note(all_gather, "2 rows of size 0 skipped")
    assert all_gather.rows[0].size_bytes == 32
    assert all_gather.rows[0].count == 4
    broadcast = log.runs[2]
    assert broadcast.collective is Collective.BROADCAST
    assert broadcast.rows[0].root == 0
    assert "broadcast_perf" in inference(broadcast, "collective")


def test_09_one_gpu_reduce_in_place_implausible() -> None:
    run = load("09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt").runs[4]
    assert run.collective is Collective.REDUCE
    assert run.ranks == 1
    assert len(run.rows) == 28  # kept, not dropped
    last = run.rows[-1]
    assert last.size_bytes == 1073741824
    assert last.oop.time_us == 4016.0
    assert last.ip is not None
    assert last.ip.time_us == 0.19
    assert last.ip.algbw_GBps == 5706839.35
    assert has_note(run, "in-place time implausible", "28 rows")
    assert not has_note(run, "out-of-place time implausible")


# sweep 06 (2 x p5, 16 ranks) names no collective: it is read from busbw/algbw. Its 16 GiB row
# edited from 486.93 to 486.90 GB/s (259.69 x 1.875 = 486.92) allows only 486.895 / 259.695 -
# 486.905 / 259.685 = 1.87487-1.87496, which had moved the interval all 48 timings share off
# all_reduce's 1.875 and left the run not checked (a review). The tenth of the timings narrowing
# it most is set aside: all_reduce, the row noted.
# sweep 10 (all_reduce, 8 ranks in the device list): its 1 GiB busbw edited from 153.60 to
# 153.58 GB/s (87.77 x 1.75 = 153.5975) allows only 153.575 / 87.775 - 153.585 / 87.765 =
# 1.74965-1.74995, which the 8 GiB row's 1.74991-1.75021 narrows to just below 1.75. Besides the
# row's own note that had also read 'busbw/algbw = 1.7499-1.75 does not match all_reduce with 8
# ranks (expected 1.75)', the words for a rank count or collective the rows contradict.
@pytest.mark.parametrize(
    ("name", "row", "edited", "ranks", "note"),
    [
        (
            "sweep_06_allreduce_2node_16xH100_efa.txt",
            "66154  259.69  486.93",
            "66154  259.69  486.90",
            16,
            "busbw does not match algbw x 2(n-1)/n (1.875 for all_reduce on 16 ranks) in 1 row "
            "(line 2936, out-of-place: 259.69 GB/s x 1.875 = 486.92 GB/s, the log prints 486.9 "
            "GB/s): edited, or pasted from several runs; ibcalc reads the time",
        ),
        (
            "sweep_10_allreduce_2node_8xH100_ib.txt",
            "12234   87.77  153.60",
            "12234   87.77  153.58",
            8,
            "busbw does not match algbw x 2(n-1)/n (1.75 for all_reduce on 8 ranks) in 1 row "
            "(line 405, out-of-place: 87.77 GB/s x 1.75 = 153.6 GB/s, the log prints 153.58 "
            "GB/s): edited, or pasted from several runs; ibcalc reads the time",
        ),
    ],
)
def test_one_busbw_a_hundredth_off_is_that_row_noted_alone(
    name: str, row: str, edited: str, ranks: int, note: str
) -> None:
    assert 486.895 / 259.695 < 486.905 / 259.685 < 1.875
    assert 153.575 / 87.775 < 153.585 / 87.765 < 1.75
    text = text_of(name)
    assert text.count(row) == 1
    run = parse_log(text.replace(row, edited), source="t.txt").runs[0]
    assert run.collective == "all_reduce"
    assert run.ranks == ranks
    assert [n for n in run.notes if "does not match" in n] == [note]


@pytest.mark.parametrize("edited", ["486.90", "486.96"])
def test_one_busbw_edited_either_way_in_a_table_alone_keeps_its_collective(edited: str) -> None:
    # sweep 06's table without its device list (the rank count then read from the ratio too),
    # its 16 GiB busbw edited down (the rows' intervals then share one off 1.875) or up (they
    # share none, which had left every collective 'fitting' and the run not checked: a review)
    text = text_of("sweep_06_allreduce_2node_16xH100_efa.txt")
    rows = [line.rpartition("<stdout>:")[2] for line in text.splitlines()]
    table = "\n".join(r for r in rows if r.strip()[:1].isdigit() or "out-of-place" in r)
    assert table.count("66154  259.69  486.93") == 1
    run = parse_log(table.replace("66154  259.69  486.93", f"66154  259.69  {edited}"), source="t")
    assert (run.runs[0].collective, run.runs[0].ranks) == ("all_reduce", 16)


def test_an_edited_row_leaves_a_large_rank_count_readable() -> None:
    # sweep 19's table alone (128 ranks) with its 32 MiB busbw edited 26.63 -> 31.63: the rows
    # share no interval; setting aside a tenth of them from each side had spread the ratio over
    # 128 and 136 ranks (2 nodes checked; a review): one from each side is as few as fit
    text = text_of("sweep_19_allreduce_16node_128xA100-40GB_net-notstated.txt")
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "out-of-place" in line)
    table = "".join(lines[start:])
    assert table.count("2500.7   13.42   26.63") == 1
    run = parse_log(table.replace("2500.7   13.42   26.63", "2500.7   13.42   31.63"), source="t")
    assert (run.runs[0].collective, run.runs[0].ranks) == ("all_reduce", 128)


def test_a_large_rank_count_is_read_from_the_ratio_of_every_row() -> None:
    # sweep 19 (16 x 8 A100 all_reduce) pasted as its table alone: the ratio every row allows,
    # 1.9839-1.9852, gives n = 2/(2 - r) in 123.9-135.2, 128 the one multiple of 8. Setting
    # rows aside when all agree (for a fallback) had widened it over two multiples of 8 and the
    # run was checked as 2 nodes (a review)
    text = text_of("sweep_19_allreduce_16node_128xA100-40GB_net-notstated.txt")
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "out-of-place" in line)
    run = parse_log("".join(lines[start:]), source="19-table.txt").runs[0]
    assert (run.collective, run.ranks) == ("all_reduce", 128)
    assert 2 / (2 - 1.9839) < 128 < 2 / (2 - 1.9852) < 136
    assert "r = 1.9839-1.9852 over 30 measurements" in inference(run, "ranks")


#: Sweep 08 (2 x 8 A100 all_gather, 16 ranks), row at line 44 as published:
#: 4194304 B = 65536 x 4 B x 16 ranks, 103.2 us, algbw 40.63 = 4194304 / 103.2 / 1e3 (40.643,
#: within the printed time's 0.05 us), busbw 38.09 = 40.63 x 15/16 (38.09).
_ROW_44 = "     4194304         65536     float    none      -1    103.2   40.63   38.09"


@pytest.mark.parametrize(
    ("edit", "note"),
    [
        # the time doubled: 4194304 B / 203.2 us / 1e3 = 20.641 GB/s against the printed 40.63
        (
            _ROW_44.replace("103.2", "203.2"),
            "algbw does not match size / time in 1 row (line 44, out-of-place: 4194304 B in "
            "203.2 us is 20.641 GB/s, the log prints 40.63 GB/s)",
        ),
        # a time of six digits quoted as printed (review DC: 433217 us had read 4.3322e+05):
        # 4194304 B / 433217 us / 1e3 = 0.0096818 GB/s
        (
            _ROW_44.replace("   103.2", "433217"),
            "algbw does not match size / time in 1 row (line 44, out-of-place: 4194304 B in "
            "433217 us is 0.0096818 GB/s, the log prints 40.63 GB/s)",
        ),
        # busbw 28.09 where 40.63 x 0.9375 = 38.091
        (
            _ROW_44.replace("38.09", "28.09"),
            "busbw does not match algbw x (n-1)/n (0.9375 for all_gather on 16 ranks) in 1 row "
            "(line 44, out-of-place: 40.63 GB/s x 0.9375 = 38.091 GB/s, the log prints 28.09 GB/s)",
        ),
        # count 65000: 65000 x 4 x 16 = 4160000 B against the printed 4194304 B
        (
            _ROW_44.replace("    65536", "    65000"),
            "size does not match count x type size x ranks in 1 row (line 44: 65000 x 4 B x 16 "
            "ranks = 4160000 B, the log prints 4194304 B)",
        ),
    ],
    ids=["time", "six-digit-time", "busbw", "count"],
)
def test_a_row_whose_columns_contradict_each_other_is_noted(edit: str, note: str) -> None:
    text = text_of("sweep_08_allgather_2node_16xA100-40GB_net-notstated.txt")
    assert text.count(_ROW_44) == 1
    run = parse_log(text.replace(_ROW_44, edit), source="08.txt").runs[0]
    assert run.ranks == 16  # the device list, not the edited row, gives the rank count
    assert [n for n in run.notes if "does not match" in n] == [
        f"{note}: edited, "
        + (
            "or another rank count or type; ibcalc reads the size"
            if "count" in note
            else "or pasted from several runs; ibcalc reads the time"
        )
    ]


def test_no_published_log_has_columns_that_contradict_each_other() -> None:
    """The three row checks hold on every published log in the repository (and every fixture):
    nccl-tests prints the time to 2, 1 or 0 decimals (below 100 us, below 10,000 us, above) and
    the bandwidths to 2, and the checks allow exactly that rounding."""
    paths = (
        sorted(SWEEPS.glob("*.txt"))
        + sorted(FIXTURES.glob("*.txt"))
        + sorted(FIXTURES.glob("*.json"))
    )
    assert len(paths) > 30
    for path in paths:
        for run in parse_file(path).runs:
            assert not [n for n in run.notes if "does not match" in n], path.name


def test_09_alltoall_in_place_wrong_is_na() -> None:
    run = load("09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt").runs[5]
    assert run.collective is Collective.ALL_TO_ALL
    assert all(r.ip is not None and r.ip.wrong is None for r in run.rows)
    assert all(r.oop.wrong == 0 for r in run.rows)
    assert run.rows[-1].oop.time_us == 116573


def test_10_old_format_and_elided_device_list() -> None:
    run = only_run("10_allreduce_OLD_FORMAT_128rank_A100-80GB_ib_coreweave.txt")
    assert len(run.rows) == 30  # 4 B .. 2 GiB
    first = run.rows[0]
    assert first.size_bytes == 4
    assert first.root is None  # no root column
    assert first.redop == "sum"
    assert first.oop.time_us == 58.20
    assert first.oop.wrong is None
    assert first.oop.max_error == 5e-07
    assert first.ip is not None
    assert first.ip.max_error == 7e-07
    assert run.rows[-1].size_bytes == 2147483648
    assert run.rows[-1].oop.time_us == 95238
    assert run.avg_busbw_GBps == 13.0489
    assert run.warmup_iters == 50
    assert run.iters == 50
    assert run.gpu_model == "NVIDIA A100-SXM4-80GB"
    assert run.collective is Collective.ALL_REDUCE
    # only Rank 0..4 are listed, then "...": ranks come from busbw/algbw = 2 * 127 / 128
    assert run.ranks == 128
    evidence = inference(run, "ranks")
    assert "busbw/algbw" in evidence
    assert "multiple of 8" in evidence
    assert run.ranks_per_node is None
    assert run.nodes is None
    assert has_note(run, "device list elided")
    assert run.line_start == 9  # the "# nThread" line after the kubectl lines


def test_11_indented_log_and_version_from_binary_path() -> None:
    run = only_run("11_allreduce_2node_8xGH200_slingshot_nccltests2.17.1_indented_degraded.txt")
    assert len(run.rows) == 25  # 8 B .. 128 MiB
    assert run.rows[0].oop.time_us == 85.47
    assert run.rows[-1].size_bytes == 134217728
    assert run.rows[-1].oop.time_us == 43293
    assert run.avg_busbw_GBps == 1.58767
    assert run.ranks == 8
    assert run.ranks_per_node == 4
    assert run.nodes == 2
    assert run.tests_version == "2.17.1"
    assert "nccl-tests-2.17.1" in inference(run, "tests_version")
    assert run.collective is Collective.ALL_REDUCE
    assert "Collective test starting" in inference(run, "collective")
    assert run.line_start == 1  # "$ srun ..."
    assert run.line_end == 46  # "# Collective test concluded"


def test_12_newest_format() -> None:
    run = only_run("12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt")
    assert len(run.rows) == 8
    assert run.rows[0].size_bytes == 1048576
    assert run.rows[0].oop.time_us == 339.61
    assert run.rows[0].oop.algbw_GBps == 3.09
    assert run.rows[-1].oop.time_us == 5871.07
    assert run.avg_busbw_GBps == 14.9966
    assert run.tests_version == "2.18.2"
    assert run.nccl_version == "2.30.7"
    assert run.ranks == 2
    assert run.ranks_per_node == 1
    assert run.nodes == 2
    assert run.min_bytes == 1048576
    assert run.max_bytes == 134217728


def test_13_crlf_table_only() -> None:
    run = only_run("13_allgather_16node_64xH100_slingshot_kestrel_table_only_crlf.txt")
    assert len(run.rows) == 23
    assert has_note(run, "7 rows of size 0 skipped")
    assert run.rows[0].size_bytes == 1024
    assert run.rows[0].count == 4
    assert run.rows[-1].size_bytes == 4294967296
    assert run.rows[-1].oop.time_us == 92644
    assert run.rows[-1].ip is not None
    assert run.rows[-1].ip.time_us == 92619
    assert run.collective is Collective.ALL_GATHER
    assert run.ranks == 64  # 1024 B = 4 elements x 4 B x 64 ranks
    assert "x 64" in inference(run, "ranks")
    assert run.ranks_per_node is None
    assert run.gpu_model is None
    assert run.truncated
    assert run.threads is None


# --------------------------------------------------------------------------- sweeps


def test_sweep_01_rccl_single_process() -> None:
    run = only_run("sweep_01_allreduce_1node_8xMI355X_intranode-rccl.txt")
    assert run.library == "rccl"
    assert run.tests_version == "2.17.9"  # "2.17.9-develop:2596ca5f71"
    assert run.nccl_version == "2.27.7"  # rccl-library=22707
    assert run.gpus_per_process == 8
    assert run.ranks == 8
    assert run.ranks_per_node == 8
    assert run.nodes == 1
    assert run.gpu_model == "AMD Radeon Graphics"
    assert len(run.rows) == 29  # 4 B .. 1 GiB
    assert run.rows[-1].oop.time_us == 4667.81
    assert run.avg_busbw_GBps == 105.615
    assert run.line_start == 1  # the docker command line


def test_sweep_03_rccl_version_line_and_ucx_noise() -> None:
    run = only_run("sweep_03_allreduce_2node_16xMI355X_ainic-ethernet-rccl.txt")
    assert run.nccl_version == "2.27.7"  # "RCCL version : 2.27.7-HEAD:96a25b5"
    assert run.library == "rccl"
    assert len(run.rows) == 31  # 16 B .. 16 GiB
    assert run.rows[0].size_bytes == 16
    assert run.rows[-1].size_bytes == 17179869184
    assert run.rows[-1].oop.time_us == 83456.7
    assert run.avg_busbw_GBps == 129.28
    assert run.ranks == 16
    assert run.ranks_per_node == 8
    assert run.hosts == ["Aliyun3", "Aliyun1"]
    assert run.warmup_iters == 5
    assert run.iters == 20


def test_sweep_05_mpirun_prefix_old_format() -> None:
    run = only_run("sweep_05_allreduce_2node_16xA100-40GB_efa.txt")
    assert len(run.rows) == 30  # 8 B .. 4 GiB
    assert run.rows[0].oop.time_us == 179.1
    assert run.rows[0].oop.max_error == 2e-07
    assert run.rows[-1].size_bytes == 4294967296
    assert run.avg_busbw_GBps == 11.2432
    assert run.nccl_version == "2.9.9"
    assert run.gpu_model == "A100-SXM4-40GB"
    assert run.ranks == 16
    assert run.ranks_per_node == 8
    assert run.collective is Collective.ALL_REDUCE


def test_sweep_06_big_log_fast() -> None:
    text = text_of("sweep_06_allreduce_2node_16xH100_efa.txt")
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        log = parse_log(text, source="sweep06")
        best = min(best, time.perf_counter() - start)
    assert best < 5.0  # 2947 lines; a guard against quadratic parsing, not a speed target
    run = log.runs[0]
    assert len(run.rows) == 32  # 8 B .. 16 GiB
    assert run.rows[-1].oop.time_us == 66154
    assert run.avg_busbw_GBps == 124.343
    assert run.nccl_version == "2.20.3"
    assert run.ranks == 16
    assert run.hosts == ["test-nccl-worker-0", "test-nccl-worker-1"]


def test_sweep_08_all_gather_from_count_column() -> None:
    run = only_run("sweep_08_allgather_2node_16xA100-40GB_net-notstated.txt")
    assert run.collective is Collective.ALL_GATHER
    assert run.rows[0].size_bytes == 256
    assert run.rows[0].count == 4
    assert len(run.rows) == 23
    assert has_note(run, "6 rows of size 0 skipped")
    assert run.avg_busbw_GBps == 40.815


def test_sweep_09_alltoall_from_count_column() -> None:
    run = only_run("sweep_09_alltoall_2node_16xA100-40GB_net-notstated.txt")
    assert run.collective is Collective.ALL_TO_ALL
    assert run.rows[0].size_bytes == 64
    assert run.rows[0].count == 1
    assert "count 1 at 64 B" in inference(run, "collective")
    assert len(run.rows) == 25
    assert run.avg_busbw_GBps == 11.5365


def test_sweep_10_row_split_by_nccl_info() -> None:
    run = only_run("sweep_10_allreduce_2node_8xH100_ib.txt")
    assert len(run.rows) == 31  # 8 B .. 8 GiB, every size present
    split = next(r for r in run.rows if r.size_bytes == 2097152)
    assert split.line == 334
    assert split.count == 524288
    assert split.oop.time_us == 87.18  # from line 396
    assert split.ip is not None
    assert split.ip.busbw_GBps == 43.12
    assert has_note(run, "line 334", "line 396")
    assert run.nccl_version == "2.22.3"  # only inside NCCL INFO lines
    assert run.raw_collective == "all_reduce"  # all_reduce_perf_mpi
    assert run.ranks == 8
    assert run.ranks_per_node == 4
    assert run.avg_busbw_GBps == 48.8121


def test_sweep_13_single_process_four_gpus() -> None:
    run = only_run("sweep_13_allreduce_1node_4xH100_intranode.txt")
    assert run.gpus_per_process == 4
    assert run.ranks == 4
    assert run.nodes == 1
    assert run.gpu_model == "NVIDIA H100"
    assert len(run.rows) == 26  # 4 B .. 128 MiB
    assert run.avg_busbw_GBps == 67.3623


def test_sweep_15_old_format_error_values() -> None:
    run = only_run("sweep_15_allreduce_1node_8xA100-40GB_intranode.txt")
    first = run.rows[0]
    assert first.oop.max_error == 0.0  # "0e+00"
    assert first.ip is not None
    assert first.ip.max_error == 1e-07
    assert first.oop.time_us == 17.29
    assert run.rows[-1].size_bytes == 33554432
    assert run.rows[-1].oop.busbw_GBps == 158.41
    assert len(run.rows) == 24
    assert run.avg_busbw_GBps == 21.2687
    assert run.collective is Collective.ALL_REDUCE


def test_sweep_16_old_broadcast_without_redop_column() -> None:
    run = only_run("sweep_16_broadcast_1node_8xA100-40GB_intranode.txt")
    assert run.collective is Collective.BROADCAST
    assert run.rows[0].redop is None
    assert run.rows[0].root == 0
    assert run.rows[0].oop.time_us == 7.78
    assert len(run.rows) == 24
    assert run.avg_busbw_GBps == 23.013


def test_sweep_20_double_and_reduced_max_bytes() -> None:
    run = only_run("sweep_20_alltoall_1node_8xH100_intranode.txt")
    assert run.dtype == "fp64"
    assert len(run.rows) == 10
    assert run.rows[0].size_bytes == 33554432
    assert run.rows[-1].size_bytes == 17179869184
    assert run.rows[0].oop.time_us == 124.79
    assert has_note(run, "maxBytes reduced to 26549638485")
    assert run.max_bytes == 68719476736
    assert run.tests_version == "2.17.8"
    assert run.nccl_version == "2.29.2"
    assert run.avg_busbw_GBps == 313.838
    assert run.collective is Collective.ALL_TO_ALL


def test_sweep_23_linear_step() -> None:
    run = only_run("sweep_23_allreduce_1node_2xA100-PCIE-40GB_pcie.txt")
    assert run.step_bytes == 10485760
    assert run.step_factor is None
    assert len(run.rows) == 103
    assert run.rows[0].size_bytes == 1048576
    assert run.rows[1].size_bytes == 11534336
    assert run.rows[-1].size_bytes == 1070596096
    assert run.rows[-1].oop.time_us == 72437.4
    assert run.nccl_version == "2.16.5"
    assert run.tests_version == "2.17.6"
    assert run.avg_busbw_GBps == 14.6024


def test_sweep_24_no_trailer() -> None:
    run = only_run("sweep_24_allreduce_1node_8xRTX5090_pcie.txt")
    assert run.truncated
    assert len(run.rows) == 25  # 8 B .. 128 MiB
    assert run.rows[-1].oop.time_us == 5355.16
    assert run.gpus_per_process == 8
    assert run.gpu_model == "NVIDIA GeForce RTX 5090"
    assert run.nccl_version == "2.29.7"
    assert run.tests_version == "2.18.2"


def test_sweep_27_command_line_starting_with_bracket() -> None:
    log = load("sweep_27_allreduce_2node_2xL40S_ethernet-ibdisabled.txt")
    assert log.format == "text"
    run = log.runs[0]
    assert run.collective is Collective.ALL_REDUCE
    assert "mpirun" in inference(run, "collective")
    assert len(run.rows) == 31
    assert run.rows[-1].oop.time_us == 1059765
    assert run.nccl_version == "2.27.3"
    assert run.avg_busbw_GBps == 3.98762
    assert run.ranks_per_node == 1
    assert run.nodes == 2
    assert has_note(run, "maxBytes reduced to 15534478677")


# --------------------------------------------------------------------------- JSON (synthetic)


def test_json_surrogate_escapes_are_read_not_crashed_on(tmp_path: Path) -> None:
    """A JSON log whose strings hold "\\ud800" (a lone UTF-16 surrogate, no character) crashed
    nccl-check with a UnicodeEncodeError traceback (exit 1) when the device name, the type or the
    reduction was printed. Lone surrogates are now kept as their escape text; a pair is the
    character it stands for."""
    import subprocess
    import sys

    doc = json.loads((FIXTURES / "synthetic_nested.json").read_text(encoding="utf-8"))
    for device in doc["devices"]:
        device["name"] += "\ud800"
    for row in doc["results"]:
        row["redop"] += "\ud83d\ude00"  # a pair: one character beyond U+FFFF
    path = tmp_path / "surrogates.json"
    path.write_text(json.dumps(doc), encoding="utf-8")  # ensure_ascii: written as escapes
    log = parse_log(path.read_text(encoding="utf-8"), source=str(path))
    run = log.runs[0]
    assert len(run.rows) == 4
    assert run.ranks == 8
    # a real process: its stdout encodes strictly, as a terminal's or a pipe's does
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-m", "ibcalc", "nccl-check", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src, "PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr[-300:]
    assert done.returncode == 0, done.stderr
    assert "\\ud800" in done.stdout  # the device name, its lone surrogate written out


def test_json_nested() -> None:
    log = load("synthetic_nested.json")
    assert log.format == "json"
    run = log.runs[0]
    assert run.collective is Collective.ALL_REDUCE
    assert len(run.rows) == 4
    assert run.rows[0].oop.time_us == 100.0
    assert run.rows[0].ip is not None
    assert run.rows[0].ip.busbw_GBps == 18.63
    assert run.ranks == 8
    assert run.ranks_per_node == 4
    assert run.nodes == 2
    assert run.nccl_version == "2.27.3"
    assert run.tests_version == "2.17.9"
    assert run.warmup_iters == 5
    assert run.avg_busbw_GBps == 26.31


def test_json_flat_pairs_and_inference() -> None:
    run = load("synthetic_flat.json").runs[0]
    assert len(run.rows) == 3
    assert run.rows[0].size_bytes == 65536
    assert run.rows[0].oop.time_us == 40.0
    assert run.rows[0].ip is not None
    assert run.rows[0].ip.time_us == 41.0
    assert run.rows[0].ip.wrong is None  # "N/A"
    assert has_note(run, "1 row of size 0 skipped")
    assert run.collective is Collective.ALL_TO_ALL
    assert run.ranks == 16


def test_json_variants_prefixed_keys() -> None:
    text = (
        '{"test": "reduce_scatter_perf", "nranks": 4, "results": ['
        '{"size": 4096, "count": 256, "dtype": "bfloat16", "op": "sum", "root": -1,'
        ' "oop_time_us": 10.0, "oop_algbw": 0.41, "oop_busbw": 0.31, "oop_wrong": 0,'
        ' "ip_time_us": 11.0, "ip_algbw": 0.37, "ip_busbw": 0.28, "ip_wrong": 0}]}'
    )
    run = parse_log(text, source="x.json").runs[0]
    assert run.collective is Collective.REDUCE_SCATTER
    assert run.ranks == 4
    assert run.dtype == "bf16"
    assert run.rows[0].ip is not None
    assert run.rows[0].ip.time_us == 11.0


# --------------------------------------------------------------------------- robustness


def test_truncated_last_row_is_dropped_with_note() -> None:
    lines = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt").splitlines()
    last_row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("8589934592"))
    cut = [*lines[:last_row], lines[last_row][:60]]
    run = parse_log("\n".join(cut), source="cut").runs[0]
    assert len(run.rows) == 30
    assert run.rows[-1].size_bytes == 4294967296
    assert run.truncated
    assert has_note(run, f"row at line {last_row + 1} incomplete, dropped")
    assert has_note(run, "log ends after 30 rows and an incomplete row without the 'Avg bus")


@pytest.mark.parametrize("keep", [16, 23, 7])
def test_a_row_cut_after_its_first_numbers_is_dropped_with_note(keep: int) -> None:
    """Cut after '  8589934592' (16 characters), '  8589934592     2147' (23) or '  85895'
    (7): one or two numbers, too few for a row's start, had been passed over in silence where
    a row cut later is noted (an SRE's review)."""
    lines = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt").splitlines()
    last_row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("8589934592"))
    cut = [*lines[:last_row], lines[last_row][:keep]]
    assert 1 <= len(cut[-1].split()) <= 2
    run = parse_log("\n".join(cut), source="cut").runs[0]
    assert len(run.rows) == 30
    assert has_note(run, f"row at line {last_row + 1} incomplete, dropped")
    assert has_note(run, "log ends after 30 rows and an incomplete row without the 'Avg bus")


def test_a_stray_number_inside_a_table_is_no_cut_row() -> None:
    """A line '   42' inside a table, rows after it: another program's output, not a row cut
    short; it had been noted 'row at line 30 incomplete, dropped' (a review)."""
    lines = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt").splitlines()
    first = next(i for i, line in enumerate(lines) if line.lstrip().startswith("8 "))
    run = parse_log(
        "\n".join([*lines[: first + 3], "   42", *lines[first + 3 :]]), source="s"
    ).runs[0]
    plain = parse_log("\n".join(lines), source="p").runs[0]
    assert len(run.rows) == len(plain.rows)
    assert not [n for n in run.notes if "incomplete" in n]


def test_table_without_header_uses_standard_layout() -> None:
    lines = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt").splitlines()
    rows = [line for line in lines if line[:1] == " "]
    run = parse_log("\n".join(rows), source="rows").runs[0]
    assert len(run.rows) == 31
    assert has_note(run, "no column header")
    assert run.collective is Collective.ALL_REDUCE
    assert run.ranks == 16  # 2 / (2 - 1.875)


def test_srun_prefix_is_not_taken_from_data() -> None:
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "10: # garbage that is not a row\n"
        "        1024           256     float     sum      -1    12.10    0.08    0.08      0\n"
        " 3:        2048           512     float     sum      -1    11.83    0.17    0.17      0\n"
    )
    run = parse_log(text).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 2048]
    assert run.rows[1].count == 512


def test_rows_mixed_with_other_output() -> None:
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "        1024           256     float     sum      -1    12.10    0.08    0.08      0\n"
        "        2048           512     float     sum      -1host1:1:2 [0] NCCL INFO x\n"
        "        4096          1024     float     sum      -1    11.79    0.35    0.35      0\n"
    )
    run = parse_log(text).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 4096]
    assert has_note(run, "row at line 3 incomplete, dropped")


_TABLE = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
    "        1024           256     float     sum      -1    12.10    0.08    0.08      0\n"
    "{size:>12} {count:>13}     float     sum      -1    11.83    0.17    0.17      0\n"
    "        4096          1024     float     sum      -1    11.79    0.35    0.35      0\n"
)


@pytest.mark.parametrize(
    ("size", "count", "note"),
    [
        ("1e400", "512", "row at line 3: size 1e400 overflows to infinity, not a byte count"),
        ("2048", "1e400", "row at line 3: count 1e400 overflows to infinity, not an element count"),
        ("inf", "512", "row at line 3: size inf is infinite, not a byte count"),
        ("nan", "512", "row at line 3: size nan is not a number, not a byte count"),
        ("-2048", "512", "row at line 3: size -2048 is negative, not a byte count"),
        ("2048.5", "512", "row at line 3: size 2048.5 is not written as an integer"),
        ("2e3", "512", "row at line 3: size 2e3 is not written as an integer"),
        ("1" * 25, "512e0", "row at line 3: size " + "1" * 25 + " has more than 20 digits"),
        # said "has more than 20 digits" before
        ("+2048", "512", "row at line 3: size +2048 has a sign nccl-tests does not print"),
    ],
)
def test_a_row_whose_size_or_count_is_no_count_is_dropped_with_a_note(
    size: str, count: str, note: str
) -> None:
    run = parse_log(_TABLE.format(size=size, count=count)).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 4096]
    about_the_row = [n for n in run.notes if "line 3" in n]
    assert len(about_the_row) == 1
    assert about_the_row[0].startswith(note)
    assert about_the_row[0].endswith("; dropped")


def test_rows_with_a_negative_time_are_dropped_with_one_note_that_says_so() -> None:
    """Two rows with times of -11.8 and -11.9 us: each had been 'malformed, dropped', and a
    table of nothing else 'has no result rows', though the rows are there."""
    negative = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "        1024           256     float     sum      -1    12.10    0.08    0.08      0\n"
        "        2048           512     float     sum      -1   -11.83    0.17    0.17      0\n"
        "        4096          1024     float     sum      -1   -11.90    0.35    0.35      0\n"
        "        8192          2048     float     sum      -1    12.50    0.66    0.66      0\n"
    )
    run = parse_log(negative).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 8192]
    assert [n for n in run.notes if "line 3" in n or "line 4" in n or "lines 3" in n] == [
        "2 rows with a negative time dropped (lines 3-4): a time below 0 is no measurement"
    ]
    only = "".join(line + "\n" for line in negative.splitlines() if "-11." in line or "#" in line)
    with pytest.raises(LogParseError, match="only rows with a negative time \\(2 rows, the first"):
        parse_log(only)


def test_a_time_in_full_width_digits_is_no_number_nccl_tests_prints() -> None:
    """Python's float() reads full-width digits (U+FF11, U+FF12 ...) around an ASCII point,
    '12.10' so written, as 12.1; nccl-tests prints ASCII, and a row so edited had been read as a
    clean one (review EC 8): it is dropped as malformed, with a note."""
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in "12.10")
    assert float(wide) == 12.1
    table = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "        1024           256     float     sum      -1    12.10    0.08    0.08      0\n"
        f"        2048           512     float     sum      -1    {wide}    0.17    0.17      0\n"
        "        4096          1024     float     sum      -1    12.90    0.35    0.35      0\n"
    )
    run = parse_log(table).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 4096]
    assert has_note(run, "row at line 3 malformed, dropped")


def test_a_prefixed_row_whose_size_overflows_is_dropped_with_a_note() -> None:
    table = _TABLE.format(size="1e400", count="512")
    text = "".join(f" 0: {line}\n" for line in table.splitlines())
    run = parse_log(text).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 4096]
    assert has_note(run, "row at line 3: size 1e400 overflows to infinity")


def test_other_output_in_a_table_is_still_passed_over_quietly() -> None:
    noise = "12:00:01 job step started\n5.5 1 % of the job step is done\n"  # 9 fields
    text = _TABLE.format(size="2048", count="512").replace("        4096", noise + "        4096")
    run = parse_log(text).runs[0]
    assert [r.size_bytes for r in run.rows] == [1024, 2048, 4096]
    assert not [n for n in run.notes if "line 4" in n or "line 5" in n]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty input"),
        ("   \n\n\t\n", "empty input"),
        ("\x00\x01\x02ELF", "binary data"),
        ("hello world\nthis is not a log\n", "no nccl-tests result rows"),
        ("# nThread 1 nGpus 1 minBytes 8\n#\n# Using devices\n", "no nccl-tests result rows"),
        ("{", "not valid JSON"),
        # nccl-tests -J output cut short: an open string had read 'not valid JSON (Unterminated
        # string starting at)', json's message without its position; a cut after a value,
        # "Expecting ',' delimiter"
        ('{"results": [{"size": 8, "ti', "bad.log:1: not valid JSON: the text ends inside"),
        ('{"results": [{"size": 8', "bad.log:1: not valid JSON: the text ends inside"),
        ('{"results": [1,, 2]}', "bad.log:1: not valid JSON (Expecting value)"),
        ('{"results": []}', "JSON without nccl-tests results"),
        ('{"a": 1}', "JSON without nccl-tests results"),
        ("[1, 2, 3]", "no nccl-tests result rows"),
        ("[" * 100000, "no nccl-tests result rows"),
        ("{" * 100000, "JSON"),
        ('{"a": 1' + "0" * 5000 + "}", "unreadable JSON"),
        (
            '{"results": [{"size": 1' + "0" * 400 + ', "count": 1, "time": 1, "algbw": 1,'
            ' "busbw": 1}]}',
            "result 1 has no usable size or count",
        ),
        ("        1" + "0" * 30 + "  2  float  sum  -1  1.0  1.0  1.0  0", "no nccl-tests result"),
    ],
)
def test_garbage_raises_one_line_error(text: str, words: str) -> None:
    with pytest.raises(LogParseError) as info:
        parse_log(text, source="bad.log")
    message = str(info.value)
    assert message.startswith("bad.log")
    assert words in message
    assert "\n" not in message
    assert isinstance(info.value, IbcalcError)
    assert isinstance(info.value, ValueError)


def test_parse_file_refuses_non_regular_and_large_files(tmp_path: Path) -> None:
    # in the words design files and every other input use ("not a regular file" and "cannot
    # open" before)
    with pytest.raises(LogParseError, match=r"missing\.txt: no such file$"):
        parse_file(tmp_path / "missing.txt")
    with pytest.raises(LogParseError, match=r"is a directory, not a file$"):
        parse_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(LogParseError, match="not a regular file"):
        parse_file(fifo)
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)
    with pytest.raises(LogParseError, match="larger than 64 MiB"):
        parse_file(big)
    binary = tmp_path / "bin.log"
    binary.write_bytes(b"# nThread 1\x00\x00\xff")
    with pytest.raises(LogParseError, match="binary"):
        parse_file(binary)


def test_nul_bytes_around_a_log_are_taken_away_with_a_note(tmp_path: Path) -> None:
    # a log that a process wrote on after logrotate's copytruncate begins with a run of NUL
    # bytes as long as the text truncated (64 KiB here), and a crash can leave NUL blocks inside
    # one: both had been refused as 'binary data, not an nccl-tests log', naming no cause and
    # checking nothing. The rows are read as in the clean log, lines keep their numbers, and a
    # note says where the NULs were; a file that is no log without them is binary data as before
    text = text_of("sweep_10_allreduce_2node_8xH100_ib.txt").encode("utf-8")
    clean = parse_log(text.decode("utf-8"), source="10.txt").runs[0]
    row = text.index(b"   268435456      67108864")
    rotated = tmp_path / "rotated.log"
    rotated.write_bytes(b"\x00" * 65536 + text[:row] + b"\x00" * 512 + text[row:])
    (run,) = parse_file(rotated).runs
    assert run.rows == clean.rows
    assert run.rows[-6].line == 403
    assert run.notes[0] == (
        "66,048 NUL bytes removed (the first on line 1): a file written on after it was "
        "truncated (logrotate's copytruncate), or blocks a crash left unwritten"
    )
    binary = tmp_path / "bin.log"
    binary.write_bytes(b"\x00" * 65536 + b"# nThread 1\n")
    with pytest.raises(LogParseError, match=r"bin\.log: binary data, not an nccl-tests log$"):
        parse_file(binary)


def test_records_are_frozen_and_round_trip_through_json() -> None:
    log = load("09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt")
    with pytest.raises(ValidationError):
        log.runs[0].ranks = 3  # type: ignore[misc]
    assert ParsedLog.model_validate_json(log.model_dump_json()) == log
    dumped = log.model_dump(mode="json")
    assert dumped["runs"][0]["collective"] == "all_reduce"
    assert dumped["runs"][0]["rows"][0]["oop"]["time_us"] == 12.25


# --------------------------------------------------------------------------- never a traceback

_REAL = [
    "01_scatter_2node_16xA100-40GB_p4d_efa_slurm_full_debug_log.txt",
    "09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt",
    "10_allreduce_OLD_FORMAT_128rank_A100-80GB_ib_coreweave.txt",
    "13_allgather_16node_64xH100_slingshot_kestrel_table_only_crlf.txt",
    "sweep_05_allreduce_2node_16xA100-40GB_efa.txt",
    "sweep_16_broadcast_1node_8xA100-40GB_intranode.txt",
    "sweep_20_alltoall_1node_8xH100_intranode.txt",
    "synthetic_nested.json",
]
_REAL_LINES = {name: text_of(name).split("\n") for name in _REAL}


def _parse_or_error(text: str) -> None:
    try:
        log = parse_log(text, source="fuzz")
    except LogParseError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert "\n" not in message
        assert message.startswith("fuzz")
        return
    assert isinstance(log, ParsedLog)
    assert log.runs
    for run in log.runs:
        assert run.rows


_FRAGMENTS = st.sampled_from(
    [
        "",
        "#",
        "# Avg bus bandwidth    : 1.5",
        "# Out of bounds values : 0 OK",
        "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20",
        "#  Rank  0 Group  0 Pid  1 on host device  0 [0x1] GPU",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "#       size   count   type   time   algbw   busbw  error     time   algbw   busbw  error",
        "           8             2     float     sum      -1    12.25    0.00    0.00      0",
        "           8             2     float     sum      -1    1e999    nan    -1      N/A",
        "        1024           256     float     sum      -1    12.10",
        "   87.18   24.05   42.10      0    85.11   24.64   43.12      0",
        "...",
        " 0: # Collective test starting: scatter_perf",
        "[1,0]<stdout>:# nccl-tests version 2.17.9 nccl-headers=1 nccl-library=99999999",
        "./build/alltoall_perf -g 2",
        "host:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 0 - Init COMPLETE",
        "RCCL version : 9.9",
        "{",
        '{"results": [{"size": -1}]}',
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_random_text_never_crashes(text: str) -> None:
    _parse_or_error(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(_REAL),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["delete", "duplicate", "swap", "cut", "insert", "garble"]),
            st.integers(min_value=0, max_value=10**6),
            st.integers(min_value=0, max_value=200),
            _FRAGMENTS | st.text(max_size=40),
        ),
        max_size=8,
    ),
)
def test_mutated_real_logs_never_crash(name: str, edits: list[tuple[str, int, int, str]]) -> None:
    lines = list(_REAL_LINES[name])
    for action, where, col, fragment in edits:
        if not lines:
            lines = [fragment]
            continue
        i = where % len(lines)
        if action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "swap":
            j = (i + col) % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "cut":
            lines[i] = lines[i][:col]
        elif action == "insert":
            lines.insert(i, fragment)
        else:
            line = lines[i]
            pos = col % (len(line) + 1)
            lines[i] = line[:pos] + fragment + line[pos + len(fragment) :]
    _parse_or_error("\n".join(lines))


_JSON_KEYS = st.sampled_from(
    [
        "results",
        "runs",
        "size",
        "count",
        "type",
        "redop",
        "root",
        "time",
        "algbw",
        "busbw",
        "wrong",
        "in_place",
        "out_of_place",
        "oop_time",
        "placement",
        "collective",
        "nranks",
        "devices",
        "hostname",
        "name",
        "config",
        "nccl_version",
        "avg_busbw",
    ]
)
_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["float", "sum", "none", "N/A", "all_gather_perf", "-1", "1e999", "x"])
)
_JSON_DOCS = st.recursive(
    _JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(_JSON_KEYS, children, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON_DOCS)
def test_random_json_never_crashes(doc: object) -> None:
    _parse_or_error(json.dumps(doc))


def test_run_cut_short_by_the_next_run() -> None:
    first = text_of("12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt").split("\n")
    cut = first[:20]  # lines 1-20: command, header and all 8 rows, no trailer
    second = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt")
    log = parse_log("\n".join(cut) + "\n" + second, source="two")
    assert len(log.runs) == 2
    a, b = log.runs
    assert len(a.rows) == 8
    assert a.truncated
    assert has_note(a, "run ends after 8 rows", "the next run starts at line 21")
    assert len(b.rows) == 31
    assert b.line_start == 21
    assert not b.truncated


def test_error_message_stays_on_one_line_for_odd_sources(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb.log"
    odd.write_text("not a log\n", encoding="utf-8")
    with pytest.raises(LogParseError) as info:
        parse_file(odd)
    assert "\n" not in str(info.value)
    assert "a\\nb.log" in str(info.value)


# --------------------------------------------------------------------------- names and inference


@pytest.mark.parametrize("name", ["scatter", "gather", "hypercube"])
def test_collectives_that_are_not_modelled(name: str) -> None:
    text = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt")
    run = parse_log(f"$ mpirun -np 16 ./build/{name}_perf -b 8 -e 8G\n{text}").runs[0]
    assert run.raw_collective == name
    assert run.collective is None
    assert has_note(run, f"collective {name} is not modelled")
    assert len(run.rows) == 31


def test_starting_line_wins_over_command_line() -> None:
    text = text_of("12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt")
    run = parse_log(text.replace("all_reduce_perf -b 1M", "all_gather_perf -b 1M")).runs[0]
    assert run.collective is Collective.ALL_REDUCE
    assert has_note(run, "command line runs all_gather but the log says all_reduce")


def _without_names(text: str) -> str:
    keep = [
        line
        for line in text.split("\n")
        if "_perf" not in line  # drop the command line and "Collective test starting/concluded"
    ]
    return "\n".join(keep)


def test_two_ranks_all_reduce_vs_sendrecv_from_in_place_column() -> None:
    # 2 ranks: all_reduce and sendrecv both have busbw = algbw and count x 4 B = size
    text = _without_names(text_of("12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt"))
    run = parse_log(text).runs[0]
    assert run.collective is Collective.ALL_REDUCE
    assert "in-place #wrong is checked" in inference(run, "collective")
    lines = text.split("\n")
    na = [
        line[: line.rstrip().rfind(" ")] + "    N/A" if " sum " in line else line for line in lines
    ]
    run = parse_log("\n".join(na)).runs[0]
    assert run.collective is Collective.SEND_RECV
    assert "N/A" in inference(run, "collective")


def test_all_gather_vs_alltoall_stays_ambiguous_without_signals() -> None:
    # sweep 08 (all_gather, 16 ranks) with only its out-of-place columns: counts are 16-byte
    # aligned and there is no in-place #wrong column, so nothing tells all_gather from alltoall
    lines = text_of("sweep_08_allgather_2node_16xA100-40GB_net-notstated.txt").split("\n")
    header = "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    rows = [" ".join(line.split()[:9]) for line in lines if line.startswith(" ")]
    run = parse_log("\n".join([header, *rows])).runs[0]
    assert run.collective is None
    coll = next(i for i in run.inferences if i.field == "collective")
    assert sorted(coll.candidates) == ["all_gather", "alltoall"]
    assert run.ranks == 16  # both print size = count x 4 B x 16


def test_ranks_from_nccl_info_nranks() -> None:
    # the device list of file 10 is elided; an NCCL INFO line stating nranks takes precedence
    text = text_of("10_allreduce_OLD_FORMAT_128rank_A100-80GB_ib_coreweave.txt")
    info = "w0:33:60 [0] NCCL INFO comm 0x1 rank 0 nranks 128 cudaDev 0 - Init COMPLETE"
    marker = "#                                                       out-of-place"
    run = parse_log(text.replace(marker, info + "\n" + marker)).runs[0]
    assert run.ranks == 128
    assert "nranks 128" in inference(run, "ranks")


@pytest.mark.parametrize(
    ("raw", "short"),
    [
        ("float", "fp32"),
        ("half", "fp16"),
        ("bfloat16", "bf16"),
        ("double", "fp64"),
        ("int8", "int8"),
        ("uint8", "uint8"),
        ("int32", "int32"),
        ("int64", "int64"),
        ("f8e4m3", "fp8_e4m3"),
    ],
)
def test_dtype_names(raw: str, short: str) -> None:
    assert normalize_dtype(raw) == short


@pytest.mark.parametrize(
    ("code", "version"),
    [(22902, "2.29.2"), (21605, "2.16.5"), (22707, "2.27.7"), (23007, "2.30.7"), (2804, "2.8.4")],
)
def test_version_codes(code: int, version: str) -> None:
    assert version_from_code(code) == version


@pytest.mark.parametrize(
    ("variant", "note"),
    [
        ("timestamps", "a timestamp before 225 lines removed"),
        ("journal", "a timestamp before 225 lines removed"),
        ("journal-precise", "a timestamp before 225 lines removed"),
        ("colour", "terminal colour codes removed"),
        ("cr", "line ends are CR only: read as lines"),
        ("utf16", "UTF-16 text read as UTF-8"),
        ("sgr0", "terminal colour codes removed"),
        ("bom", None),
    ],
)
def test_what_collectors_add_around_a_log_is_taken_away(
    variant: str, note: str | None, tmp_path: Path
) -> None:
    """`kubectl logs --timestamps`, a launcher's colour codes, CR-only line ends and a UTF-16
    file (PowerShell's `>`) were refused ("no nccl-tests result rows found", "binary data");
    they now read as the plain log, row for row and line for line, with a note."""
    from ibcalc.logs.parse import read_log

    source = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    text = source.read_text()
    if variant == "timestamps":
        data = "".join(f"2024-07-19T12:34:56.123456789Z {line}\n" for line in text.splitlines())
        raw = data.encode()
    elif variant.startswith("journal"):
        # journalctl's syslog form: a clock that moves line by line, then host and process
        fraction = ".{:06d}" if variant == "journal-precise" else ""
        data = "".join(
            f"Jul  9 12:{i // 60:02d}:{i % 60:02d}{fraction.format(i)} gpu-node-07 mpirun[2231]: "
            f"{line}\n"
            for i, line in enumerate(text.splitlines())
        )
        raw = data.encode()
    elif variant == "colour":
        raw = "".join(
            f"\x1b[32m{line}\x1b[0m\n" if line.strip()[:1].isdigit() else line + "\n"
            for line in text.splitlines()
        ).encode()
    elif variant == "cr":
        raw = text.replace("\n", "\r").encode()
    elif variant == "sgr0":  # `tput sgr0` writes a character-set switch before the reset
        raw = "".join(f"\x1b[1m{line}\x1b(B\x1b[m\n" for line in text.splitlines()).encode()
    elif variant == "bom":
        raw = b"\xef\xbb\xbf" + text.encode()
    else:
        raw = text.encode("utf-16")
    path = tmp_path / f"{variant}.txt"
    path.write_bytes(raw)
    (plain,) = parse_file(source).runs
    (run,) = read_log(path).parsed.runs
    assert [(r.size_bytes, r.oop.time_us, r.line) for r in run.rows] == [
        (r.size_bytes, r.oop.time_us, r.line) for r in plain.rows
    ]
    if note is not None:
        assert note in run.notes
    if variant.startswith("journal"):
        assert any("'gpu-node-07 mpirun[2231]:' removed" in n for n in run.notes), run.notes
    # line 1's "Collective test starting" is read (a BOM hid it): the collective's evidence
    assert run.collective is not None
    assert any(i.field == "collective" and "line 1" in i.evidence for i in run.inferences)


def test_a_log_of_more_rows_than_any_sweep_is_refused() -> None:
    """50 MB of one run's rows repeated had nccl-check at 11 GB after 11 minutes: a log may
    hold at most MAX_LOG_ROWS result rows (a -f 2 sweep of 8 B to 16 GiB has 32)."""
    from ibcalc.logs.parse import MAX_LOG_ROWS

    text = (SWEEPS / "12_allgather_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    per_table = len(parse_log(text).runs[0].rows)  # rows of size 0 are not kept
    lines = text.split("\n")
    rows = [i for i, line in enumerate(lines) if line.strip()[:1].isdigit() and "float" in line]
    first, last = rows[0], rows[-1]
    block = lines[first : last + 1]
    assert len(block) == len(rows)  # the table is contiguous

    def repeated(times: int) -> str:
        return "\n".join(lines[:first] + block * times + lines[last + 1 :])

    fits = MAX_LOG_ROWS // per_table
    kept = parse_log(repeated(fits))
    assert sum(len(run.rows) for run in kept.runs) == fits * per_table <= MAX_LOG_ROWS
    with pytest.raises(LogParseError) as err:
        parse_log(repeated(fits + 1), source="big.txt")
    assert str(err.value).startswith(f"big.txt: more than {MAX_LOG_ROWS:,} result rows (line ")
    assert str(err.value).endswith("split the log")


def test_a_log_of_more_runs_than_any_sweep_is_refused() -> None:
    """3,000 runs of one row each (a 3.5 MB log) had nccl-check at 46 s and 69,000 lines of
    report, 10,000 at minutes, under the row cap: a log may hold at most MAX_LOG_RUNS runs (the
    published logs hold at most 6), refused, as too many rows are, at the line where the first
    run too many starts. A run header without rows is no run and does not count."""
    from ibcalc.logs.parse import MAX_LOG_RUNS

    text = (SWEEPS / "15_allreduce_1node_8xA100-40GB_intranode.txt").read_text("utf-8")
    lines_of = text.split("\n")
    rows = [i for i, line in enumerate(lines_of) if line.strip()[:1].isdigit()]
    head, last = lines_of[: rows[0]], lines_of[rows[-1]]  # header; the 32 MiB row
    foot = [line for line in lines_of[rows[-1] + 1 :] if line.strip()]  # the trailer's 3 lines
    block = [*head, last, *foot]
    assert len(block) == 19  # 15 header lines (8 ranks), 1 row, 3 trailer lines

    def runs(count: int, bare: int = 0) -> str:
        return "\n".join(block * count + [*head, *foot] * bare) + "\n"

    kept = parse_log(runs(MAX_LOG_RUNS, bare=5))
    assert len(kept.runs) == MAX_LOG_RUNS
    assert {len(run.rows) for run in kept.runs} == {1}
    assert kept.runs[-1].line_start == (MAX_LOG_RUNS - 1) * len(block) + 1
    with pytest.raises(LogParseError) as err:
        parse_log(runs(MAX_LOG_RUNS + 1), source="many.txt")
    assert str(err.value) == (
        f"many.txt: more than {MAX_LOG_RUNS:,} runs (run {MAX_LOG_RUNS + 1:,} starts at line "
        f"{MAX_LOG_RUNS * len(block) + 1}); nccl-tests prints one run (one result table) per test "
        "it runs: split the log"
    )
    # nccl-tests' JSON (-J) the same: a list of runs, each the nested fixture's 4 rows
    doc = json.loads(fixture("synthetic_nested.json").read_text("utf-8"))
    assert len(parse_log(json.dumps([doc] * MAX_LOG_RUNS)).runs) == MAX_LOG_RUNS
    with pytest.raises(LogParseError) as err:
        parse_log(json.dumps([doc] * (MAX_LOG_RUNS + 1)), source="many.json")
    assert str(err.value).startswith(f"many.json: more than {MAX_LOG_RUNS:,} runs; ")


def test_a_run_that_stopped_before_its_first_row_is_said_with_a_run_kept() -> None:
    """Sweep 10 (420 lines and a blank one) followed, or preceded, by its own first 170 lines: a
    second test that started (header, device list, NCCL's set-up) and ended before its first
    row, as a crash or a hang at the first size leaves it. Its note had stayed among the log's
    notes, which no report prints, so nccl-check showed one healthy-looking run and nothing
    else; it is now among the notes of the run before it (or after it, where none is before)."""
    text = text_of("sweep_10_allreduce_2node_8xH100_ib.txt")
    head = "".join(text.splitlines(keepends=True)[:170])
    after = parse_log(text + head, source="after.txt")
    (run,) = after.runs
    skipped = "run header at lines 422-585 has no result rows; skipped"
    assert after.notes == [skipped]
    assert run.notes[-1] == skipped
    before = parse_log(head + text, source="before.txt")
    (run,) = before.runs
    assert run.line_start == 171
    assert run.notes[0] == "run header at lines 1-164 has no result rows; skipped"


def test_rows_of_another_width_than_the_header_are_named() -> None:
    """A header naming two more columns than its rows gave 'no result rows' beside 31 rows
    plainly there; the error now says why."""
    text = (SWEEPS / "12_allgather_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    header = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
    )
    assert text.count(header) == 1
    edited = text.replace(header, header.replace("\n", "  extra   cols\n"))
    with pytest.raises(LogParseError) as err:
        parse_log(edited, source="wide.txt")
    assert (
        "has no result rows of the 15 columns it names: 31 rows have fewer fields (the first "
        "at line 266)"
    ) in str(err.value)


def test_line_lists_say_which_lines_not_a_range_around_them() -> None:
    """Negative times on lines 17 and 19, zeros on 18 and 20, had read 'lines 17-19' and
    'lines 18-20', each range taking in a row of the other kind; a list of eight had shown five
    without saying there were more."""
    from ibcalc.logs.records import line_list

    assert line_list([12]) == "line 12"
    assert line_list([12, 13, 14, 15]) == "lines 12-15"
    assert line_list([17, 19]) == "lines 17, 19"
    assert line_list([40, 41, 42, 43, 44, 45, 46, 47]) == "lines 40-47"
    assert line_list([40, 42, 44, 46, 48, 50, 52]) == "lines 40, 42, 44, 46, 48 and 2 more lines"
    assert line_list([1, 3, 5, 7, 9, 11, 13], unit="result") == (
        "results 1, 3, 5, 7, 9 and 2 more results"
    )
    assert line_list([3], unit="result") == "result 3"


def test_a_unit_row_nccl_tests_does_not_print_is_noted() -> None:
    """nccl-tests prints (us) and (GB/s); a table whose unit row reads (ms) was converted or
    edited, and had been read as us without a word (an SRE's review)."""
    text = text_of("06_allreduce_2node_16xH100_gcp_a3mega.txt")
    (unit_line,) = [n for n, line in enumerate(text.splitlines(), 1) if "(B)" in line]
    plain = parse_log(text, source="a").runs[0]
    assert not [n for n in plain.notes if "unit row" in n]
    edited = parse_log(text.replace("(us)", "(ms)"), source="b").runs[0]
    assert has_note(edited, f"the unit row at line {unit_line} reads (ms), units nccl-tests does")


def test_a_long_device_list_is_read_whole() -> None:
    """A device list of 131,080 ranks (8 a host) is 131,080 ranks on 16,385 hosts: cutting the
    list at 131,072 to bound the work had left the run priced as 2 x 8 GPUs (review BP), so
    the list is read whole, each host's and GPU's name held once."""
    published = (FIXTURES / "06_allreduce_2node_16xH100_gcp_a3mega.txt").read_text()
    head, rest = published.split("# Using devices\n", 1)
    table = "".join(line for line in rest.splitlines(True) if "Rank " not in line)
    ranks = 131_080
    lines = "".join(
        f"#  Rank {i:6d} Group  0 Pid {i:6d} on host{i // 8} device  {i % 8} [0000:04:00] "
        "NVIDIA H100 80GB HBM3\n"
        for i in range(ranks)
    )
    (run,) = parse_log(f"{head}# Using devices\n{lines}{table}", source="t").runs
    assert (run.ranks, run.devices_listed, run.ranks_per_node) == (ranks, ranks, 8)
    assert (run.nodes, len(run.hosts)) == (ranks // 8, 16_385)


def test_device_names_with_controls_are_shown_escaped(tmp_path: Path) -> None:
    """A host named with U+202E (right-to-left override) and a GPU name holding DEL and the C1
    CSI (U+009B) had reached nccl-check's and calibrate's lines raw, where other text from
    input is escaped (review CU). The run holds the names as read (escaped there, they had been
    escaped twice in notes and held escaped in JSON: review CW); the lines show them escaped."""
    from ibcalc.cli import app

    published = (FIXTURES / "06_allreduce_2node_16xH100_gcp_a3mega.txt").read_text()
    head, rest = published.split("# Using devices\n", 1)
    table = "".join(line for line in rest.splitlines(True) if "Rank " not in line)
    lines = "".join(
        f"#  Rank {i:2d} Group  0 Pid {i:6d} on evil\u202egnp{i // 8} device  {i % 8} "
        "[0000:04:00] NVIDIA H100\x7f\x9b31m\n"
        for i in range(16)
    )
    text = f"{head}# Using devices\n{lines}{table}"
    (run,) = parse_log(text, source="t").runs
    assert run.gpu_model == "NVIDIA H100\x7f\x9b31m"
    assert sorted(run.hosts) == ["evil\u202egnp0", "evil\u202egnp1"]
    runner = CliRunner()
    log = tmp_path / "log.txt"
    log.write_text(text, encoding="utf-8")
    for command in ("nccl-check", "calibrate"):
        result = runner.invoke(app, [command, str(log)], env={"COLUMNS": "300"})
        shown = result.stdout + result.stderr
        assert not any(c in shown for c in "\x7f\x9b\u202e"), command
        assert "evil\\u202egnp0" in shown, command
    check = runner.invoke(app, ["nccl-check", str(log)], env={"COLUMNS": "300"})
    assert "gpu_model = NVIDIA H100\\x7f\\x9b31m [log]" in check.stdout


def test_a_long_json_device_list_is_read_whole() -> None:
    """A JSON log of 100,008 devices (4 a host) and nranks 100,008 is 100,008 ranks: its list
    had been cut at 100,000 unmarked, and the cut count overruled the file's nranks (review
    BP)."""
    data = json.loads((FIXTURES / "synthetic_nested.json").read_text())
    ranks = 100_008
    data["devices"] = [
        {"rank": i, "hostname": f"node-{i // 4}", "device": i % 4, "name": "NVIDIA H100"}
        for i in range(ranks)
    ]
    data["nranks"] = ranks
    (run,) = parse_log(json.dumps(data), source="big.json").runs
    assert (run.ranks, run.ranks_per_node, run.nodes) == (ranks, 4, ranks // 4)


def test_a_log_without_rows_names_the_failure_nccl_tests_printed() -> None:
    """A run that died before its first row (its header, then nccl-tests' 'Test NCCL failure'
    line) had been refused as holding no rows, the log's own reason left out; the refusal now
    quotes the first failure line and its number, on one line (a CRLF log too). A log that
    prints none is refused as before."""
    head = (SWEEPS / "12_allgather_2node_8xH100_ib.txt").read_text().splitlines()[:158]
    failure = "gcn151: Test NCCL failure common.cu:1005 'unhandled system error'"
    text = "\n".join([*head, "#", failure, " .. gcn151 pid 1: Test failure common.cu:891", ""])
    for log in (text, text.replace("\n", "\r\n")):
        with pytest.raises(LogParseError) as info:
            parse_log(log, source="crash.txt")
        assert str(info.value) == (
            "crash.txt: no nccl-tests result rows found (run header at lines 1-158 has no result "
            "rows; skipped): line 160 says \"Test NCCL failure common.cu:1005 'unhandled system "
            "error'\""
        )
    with pytest.raises(LogParseError) as info:
        parse_log("Test CUDA failure common.cu:700 'out of memory'\n", source="oom.txt")
    assert str(info.value) == (
        'oom.txt: no nccl-tests result rows found: line 1 says "Test CUDA failure '
        "common.cu:700 'out of memory'\""
    )
    with pytest.raises(LogParseError) as info:
        parse_log("PING 8.8.8.8 56(84) bytes of data.\n", source="ping.txt")
    assert str(info.value) == "ping.txt: no nccl-tests result rows found"


def test_a_quoted_failure_line_is_escaped_once() -> None:
    """The failure line quoted by a log without rows shows a control character as one escape
    (``\\x07``) and a backslash as itself: repr() of the already escaped text had printed
    ``\\\\x07`` and ``\\\\``."""
    log = "Test NCCL failure common.cu:99 bell\x07 tab\there C:\\dir\n"
    with pytest.raises(LogParseError) as info:
        parse_log(log, source="bell.txt")
    assert str(info.value) == (
        "bell.txt: no nccl-tests result rows found: line 1 says "
        "'Test NCCL failure common.cu:99 bell\\x07 tab\\there C:\\dir'"
    )


def test_a_header_ngpus_the_device_list_contradicts_is_noted() -> None:
    """Sweep 15's one-process-per-GPU log (8 Pids, one rank each) with its header edited to
    nGpus 4 had been priced at 4 GPUs a process without a word. The header still wins (ranks in
    containers may share a Pid), but where a Pid drives a number of ranks that is no multiple of
    nThread x nGpus, which no container gives, a note names both counts and their lines."""
    text = (SWEEPS / "15_allreduce_1node_8xA100-40GB_intranode.txt").read_text(encoding="utf-8")
    edited = parse_log(text.replace("nGpus 1 ", "nGpus 4 ", 1), source="edited.txt").runs[0]
    assert edited.gpus_per_process == 4
    assert (
        "the header's nGpus 4 (line 1) gives each process 4 ranks, but the device list (lines "
        "4-11) shows 8 processes (Pids) for its 8 ranks, Pid 1235813 on a0048 driving 1: "
        "processes in containers may share a Pid, never split one, so one of the two counts is "
        "wrong; the expectation keeps the header's nGpus 4"
    ) in edited.notes
    # containers: all 8 ranks under "Pid 1" with nGpus 4 is two processes of 4; and the
    # published logs as printed (one Pid for 8 GPUs under nGpus 8, sweep 01) say nothing
    shared = text.replace("nGpus 1 ", "nGpus 4 ", 1)
    for pid in range(1235813, 1235821):
        shared = shared.replace(f"Pid {pid} ", "Pid 1 ")
    for run in (
        parse_log(shared, source="shared.txt").runs[0],
        parse_file(SWEEPS / "01_allreduce_1node_8xMI355X_intranode-rccl.txt").runs[0],
        parse_file(SWEEPS / "15_allreduce_1node_8xA100-40GB_intranode.txt").runs[0],
    ):
        assert not [n for n in run.notes if "device list" in n and "nGpus" in n]


def test_lines_a_tool_commented_again_are_read_as_nccl_tests_own() -> None:
    """Sweep 10 with every '#' line made '##' (a tool that comments a pasted log again) had lost
    its device list, header and trailer: the run was priced on a default node as truncated, the
    notes silent on the prefix. The lines are read as nccl-tests' own, with a note naming them."""
    text = (SWEEPS / "10_allreduce_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    plain = parse_log(text, source="plain.txt").runs[0]
    again = parse_log(
        "\n".join("#" + line if line.startswith("#") else line for line in text.split("\n")),
        source="again.txt",
    ).runs[0]
    assert again.notes[0] == (
        "17 lines (of lines 1-420) start '##' where nccl-tests prints '#' (a tool commented the "
        "log again): read as nccl-tests' own '#' lines"
    )
    assert again.model_copy(update={"notes": again.notes[1:]}) == plain
    assert (again.hosts, again.gpus_per_process, again.avg_busbw_GBps) == (
        ["gcn151", "gcn154"],
        1,
        48.8121,
    )
    assert not again.truncated
    assert not [n for n in plain.notes if "##" in n]
