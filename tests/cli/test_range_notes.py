"""Outputs of many estimates say, once, where a likely range reaches down to Simple's per-step
reading past the ranks its handshake count is fitted on (review DM: a layout search's JSON,
``check`` and ``nccl-check`` had moved ranges with no word of it, where sweeps and workload
phases said it), or to an all-to-all's message term held at the per-message cost's fitted
runs. Each test compares with the same run under an override that moves the fit's bound past
every rank count, where no range moves: the note is where, and only where, the ranges differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ibcalc.cli import app as APP

ROOT = Path(__file__).resolve().parents[2]
HINT = "a ring in Simple over efa-v2 exposes its transport latency up to 8 times a hop"
runner = CliRunner()


@pytest.fixture
def unbounded(tmp_path: Path) -> str:
    """A cost-parameter file whose fit bound no cluster here passes: no per-step reading."""
    path = tmp_path / "unbounded.yaml"
    path.write_text(
        "schema: ibcalc-cost-params/1\n"
        "calibrated:\n  simple_fit_ranks: {value: 100000, assumed: a test's bound}\n"
    )
    return str(path)


def _run(*args: str) -> Any:
    result = runner.invoke(APP, list(args))
    assert result.exit_code in (0, 1), result.output
    return result


def test_check_says_once_why_a_requirement_range_reaches_down(unbounded: str) -> None:
    """examples/aws-p5-efa.yaml: 16 x p5, 128 ranks over EFA. Its 1 GB all-gather runs
    ring/Simple and its busbw range reaches up to the per-step reading (232 GB/s against 174
    without it); the file's other requirements (NVLS tree all-reduce, all-to-all, broadcast)
    do not move, and the DGX H100 example (NDR, verbs) has no such note. Both files' all-to-alls
    (128 and 248 ranks) carry their own note, on the message term's extrapolation past 16 GPUs."""
    example = str(ROOT / "examples" / "aws-p5-efa.yaml")
    moved = json.loads(_run("check", example, "--format", "json").stdout)["files"][0]
    kept = json.loads(
        _run("check", example, "--format", "json", "--cost-params", unbounded).stdout
    )["files"][0]
    differ = [
        a["requirement"]
        for a, b in zip(moved["findings"], kept["findings"], strict=True)
        if a["predicted_range"] != b["predicted_range"]
    ]
    assert differ == ["allgather 1 GB: busbw >= 140 GB/s"]
    (note,) = [n for n in moved["notes"] if HINT in n]
    # named by the requirement whose range moved (review DP)
    assert note.startswith(f"allgather 1 GB: {HINT}")
    assert "for 128 ranks that is an extrapolation" in note
    assert "the likely ranges of such requirements reach down" in note
    messages = "alltoall 256 MB: 127 messages a rank at 2.4 us each"
    assert [n[: len(messages)] for n in kept["notes"]] == [messages]
    text = _run("check", example).stdout
    assert text.count(f"note: allgather 1 GB: {HINT}") == 1
    other = str(ROOT / "examples" / "dgx-h100-superpod-su-ndr.yaml")
    notes = json.loads(_run("check", other, "--format", "json").stdout)["files"][0]["notes"]
    assert [n[:45] for n in notes] == ["alltoall 1 GB: 247 messages a rank at 2.4 us "]


_LOG = """\
# nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 268435456 maxBytes 1073741824 step: 2(factor) warmup iters: 1 \
iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
#                                                              out-of-place                  \
     in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     \
time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             \
(us)  (GB/s)  (GB/s)
   268435456        524288     float    none      -1  2895.00   92.72   92.00       0  \
2895.00   92.72   92.00       0
  1073741824       2097152     float    none      -1  4560.00  235.47  233.63       0  \
4560.00  235.47  233.63       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 1.0
#
# Collective test concluded: all_gather_perf
"""


def test_nccl_check_says_once_why_its_expected_ranges_reach_down(
    tmp_path: Path, unbounded: str
) -> None:
    """A 16 x p5 all-gather log (128 ranks: busbw 92.0 GB/s = algbw 92.72 x 127/128): its
    rows' expectations run ring/Simple over EFA past the fit, their busbw ranges reach up to
    the per-step reading, and the run's notes say it once; on 2 x p5 (16 ranks) they do not."""
    log = tmp_path / "ag128.txt"
    log.write_text(_LOG)
    args = ("nccl-check", str(log), "--system", "aws-p5", "-N", "16", "--format", "json")
    (moved,) = json.loads(_run(*args).stdout)["runs"]
    (kept,) = json.loads(_run(*args, "--cost-params", unbounded).stdout)["runs"]
    ranges = [
        (a["expected_busbw_GBps_range"], b["expected_busbw_GBps_range"])
        for a, b in zip(moved["rows"], kept["rows"], strict=True)
    ]
    assert all(a[1] > b[1] for a, b in ranges), ranges
    said = [n for n in moved["notes"] if HINT in n]
    assert len(said) == 1
    assert "for 128 ranks that is an extrapolation" in said[0]
    assert not [n for n in kept["notes"] if HINT in n]
    small = tmp_path / "ag16.txt"
    # 16 ranks: count = size / 4 B / 16, busbw = algbw x 15/16
    small.write_text(
        _LOG.replace("524288", "4194304")
        .replace("2097152", "16777216")
        .replace("92.00", "86.93")
        .replace("233.63", "220.75")
    )
    (two,) = json.loads(
        _run("nccl-check", str(small), "--system", "aws-p5", "-N", "2", "--format", "json").stdout
    )["runs"]
    assert not [n for n in two["notes"] if HINT in n]


def test_a_layout_search_names_the_layouts_whose_ranges_reach_down(unbounded: str) -> None:
    """64 x p5, llama3-8b under ZeRO-3: the layouts whose data-parallel ring runs Simple over
    more than 64 ranks (dp 128 to 512) have ranges that reach down to the per-step reading;
    the search's JSON names exactly those layouts, once, with the span of their rank counts
    (review DM: 6 of 35 layouts had moved with `search_notes` empty)."""
    args = ("train", "--model", "llama3-8b", "--params", "8B", "--system", "aws-p5", "-N", "64",
            "--zero", "3", "--compare", "--format", "json")  # fmt: skip
    moved = json.loads(_run(*args).stdout)
    kept = json.loads(_run(*args, "--cost-params", unbounded).stdout)
    differ = [
        f"#{i}"
        for i, (a, b) in enumerate(zip(moved["layouts"], kept["layouts"], strict=True), start=1)
        if a["comm_s_range"] != b["comm_s_range"]
    ]
    assert len(differ) == 6
    (note,) = [n for n in moved["search_notes"] if HINT in n]
    assert note.startswith(f"layouts {', '.join(differ)}: {HINT}")
    ranks = sorted(
        a["dp"] for a, b in zip(moved["layouts"], kept["layouts"], strict=True)
        if a["comm_s_range"] != b["comm_s_range"]
    )  # fmt: skip
    assert f"for {ranks[0]} to {ranks[-1]} ranks that is an extrapolation" in note
    assert "the likely ranges of such phases reach down" in note
    assert not [n for n in kept["search_notes"] if HINT in n]


def test_a_layout_search_names_the_layouts_whose_messages_are_extrapolated(tmp_path: Path) -> None:
    """DeepSeek-V3 on 32 DGX H100: the 20 layouts whose expert groups hold more than 16 GPUs
    (ep 32 to 256) post 31 to 255 messages a rank at 2.4 us, past the 15 of the largest
    all-to-all the per-message cost is fitted on, so their ranges reach down to the time with
    15; a single run of one says so, and the search had said nothing (its JSON ranges moved).
    Its text and JSON now say it once, with the spans; under an override that moves the fit's
    bound past every group no range moves, no time either, and no such note is given."""
    bound = tmp_path / "bound.yaml"
    bound.write_text(
        "schema: ibcalc-cost-params/1\n"
        "calibrated:\n  per_message_fit_ranks: {value: 100000, assumed: a test's bound}\n"
    )
    args = ("train", "--model", "deepseek-v3", "--system", "dgx-h100", "-N", "32", "--compare")
    moved = json.loads(_run(*args, "--format", "json").stdout)
    kept = json.loads(_run(*args, "--format", "json", "--cost-params", str(bound)).stdout)
    pairs = list(zip(moved["layouts"], kept["layouts"], strict=True))
    assert [a["comm_s"] for a, _ in pairs] == [b["comm_s"] for _, b in pairs]
    differ = [a for a, b in pairs if a["comm_s_range"] != b["comm_s_range"]]
    assert len(differ) == 20
    assert sorted(a["rank"] for a in differ) == sorted(
        a["rank"] for a in moved["layouts"] if a["ep"] > 16
    )
    assert {a["ep"] for a in differ} == {32, 64, 128, 256}
    said = (
        "20 of the 154 layouts (expert groups of 32 to 256 GPUs): their all-to-alls post 31 to "
        "255 messages a rank at 2.4 us each; the per-message cost (calibrated.per_message_latency) "
        "comes from all-to-alls of at most 16 GPUs, so for 32 to 256 ranks this term is an "
        "extrapolation (no published run of more is at hand to say how the cost grows); the "
        "likely ranges of such phases reach down to the time with it held at the 15 messages of "
        "the largest run it rests on"
    )
    assert [n for n in moved["search_notes"] if "per_message_latency" in n] == [said]
    assert not [n for n in kept["search_notes"] if "per_message_latency" in n]
    text = " ".join(_run(*args).stdout.split())
    assert text.count(f"note: {said}") == 1
    # a single run of one such layout says the same of its own group
    one = _run("train", "--model", "deepseek-v3", "--system", "dgx-h100", "-N", "32",
               "--tp", "1", "--pp", "8", "--ep", "32")  # fmt: skip
    assert "31 messages a rank at 2.4 us each" in " ".join(one.stdout.split())
    guide = " ".join((ROOT / "docs" / "workload.md").read_text(encoding="utf-8").split())
    assert (
        "(DeepSeek-V3 on 32 DGX H100: 20 of the 154 layouts, expert groups of 32 to 256 GPUs, "
        "31 to 255 messages a rank at 2.4 us each; tested)"
    ) in guide
