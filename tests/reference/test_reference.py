"""Per published reference group: the model's error stays under the targets of the CSV rows.

Targets: bandwidth regime (>= 64 MiB) median |error| <= 5 % and max <= 20 % of busbw; latency
regime (<= 64 KiB) median <= 10 % of time; mid sizes median <= 12 % of time (issue 9's target).
The rows are ``benchmarks/data/measurements.csv`` (a source per row); the rules mapping rows to
clusters are in ``benchmarks/reference.py``, the fitted constants in ``benchmarks/fits.py`` (fitted
here on every sample, as shipped: these are in-sample figures; the leave-one-source-out figures
for every regime are printed by ``benchmarks/accuracy.py``, and ``tests/reference/test_band.py``
checks the band derived from them). Groups whose NIC count the source does not state are held to
the same targets; where they miss, the reason names the guess.

Groups that miss their target are ``xfail(strict=True)`` with the reason: the miss is known and
explained, and the test fails loudly if the group starts to pass (then the mark must go). (The
one row that had been marked on its own, 2 x p4de all-reduce at 128 MiB, 25 % below, is within
the group's 20 % since the tree's fill runs each stage at its own tier's rate: 19.8 %.)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from accuracy import Result, score
from dataset import load_samples
from fits import fit_all

SAMPLES = load_samples()
MODEL, _ = fit_all(SAMPLES)
RESULTS = score(MODEL, [s for s in SAMPLES if s.key.startswith("measurements.csv")])
#: Median |error| target per regime, and the largest single |error| where one is set.
TARGETS = {"latency": (0.10, None), "mid": (0.12, None), "bandwidth": (0.05, 0.20)}

KNOWN_MISSES = {
    ("bandwidth", "aws-samples/awsome-distributed-training all_reduce 2x8 nccl2.18.5"): (
        "EKS run on the same 2 x p5 as the Slurm table, 2.2x slower at 128 MiB and 1.4x at 1 GiB; "
        "the model (fitted to neither) follows the Slurm run"
    ),
    ("bandwidth", "li-plus/playground sendrecv 1x8"): (
        "the 128 MiB point takes 1211 us against 1423 us for 256 MiB (first size of the sweep); "
        "and point-to-point efficiency is one value fitted on A100 (0.81) and H100 (0.97) sendrecv"
    ),
    ("bandwidth", "Anthony-Hoo/Anthony-Hoo.github.io all_gather 1x2"): (
        "host-staged PCIe: one duplex factor (median of all-reduce, all-gather, all-to-all) "
        "cannot match all three; all-gather is 13-20 % below it"
    ),
    ("bandwidth", "Anthony-Hoo/Anthony-Hoo.github.io alltoall 1x2"): (
        "host-staged PCIe: all-to-all runs 13 % above the shared duplex factor"
    ),
    ("latency", "Anthony-Hoo/Anthony-Hoo.github.io all_reduce 1x2"): (
        "2-rank ring all-reduce costs 2 host-staged hops in the model; measured barely more than "
        "the 1-hop all-gather (12.2 vs 10.5 us): 13 % high"
    ),
    ("latency", "Anthony-Hoo/Anthony-Hoo.github.io broadcast 1x2"): (
        "host-staged PCIe: one per-hop latency fitted on all-reduce, all-gather and broadcast "
        "together; the 2-rank broadcast (11.7 us) then comes out 12 % low: back-to-back "
        "broadcasts on 2 GPUs overlap less than the chain model lets them"
    ),
    ("latency", "NREL/ESIFHPC4 all_gather 16x4 no-nvls nccl2.21.5"): (
        "64-rank ring all-gather takes 564 us at 1 KiB: about 35 us per network step, 7x the "
        "per-hop latency the same system's tree all-reduce shows; not explained by the model"
    ),
    ("latency", "aws-samples/awsome-distributed-training/aws-batch all_reduce 1x8"): (
        "single-node LL ring: NCCL's latency constants give 15.0-15.8 us against 12.9-19.1 us"
    ),
    ("latency", "coreweave/nccl-tests all_reduce 4x8"): (
        "SHARP cluster, 4 nodes: 57-58 us at <= 1 KiB against 35 us from NCCL's tree constants"
    ),
    ("bandwidth", "NREL/ESIFHPC4 all_gather 16x4 no-nvls nccl2.21.5"): (
        "Kestrel (Slingshot 11): the NIC count per node is not stated (4 assumed); busbw "
        "61-95 % above the measured rows, which reach 16-20 GB/s"
    ),
    ("bandwidth", "NREL/ESIFHPC4 all_reduce 16x4 no-nvls nccl2.21.5"): (
        "Kestrel (Slingshot 11): the NIC count per node is not stated (4 assumed); busbw "
        "49-94 % above the measured rows"
    ),
    ("bandwidth", "coreweave/nccl-tests all_reduce 4x8"): (
        "the NIC count is not stated (8 HDR assumed): busbw 21-84 % above the measured rows; "
        "the same README's 8-node CollNetChain rows are within 6 %"
    ),
    ("mid", "Anthony-Hoo/Anthony-Hoo.github.io all_gather 1x2"): (
        "host-staged PCIe: all-gather runs 18-20 % below the duplex factor shared with "
        "all-reduce and all-to-all (as in its bandwidth rows)"
    ),
    ("mid", "NREL/ESIFHPC4 all_gather 16x4 no-nvls nccl2.21.5"): (
        "Kestrel (Slingshot 11): 37-71 % slower than the model at 1 and 16 MiB; its small "
        "all-gathers are slower still (latency group above), not explained by the model"
    ),
    ("mid", "NREL/ESIFHPC4 all_reduce 16x4 no-nvls nccl2.21.5"): (
        "Kestrel (Slingshot 11): 58-74 % slower than the model at 1 and 16 MiB, while its "
        "small all-reduces are within 8 %; the NIC count is not stated"
    ),
    ("mid", "aws-samples/awsome-distributed-training all_reduce 2x8"): (
        "EFA at 1 MiB: 2 x p4de 16 % faster than measured (ring/LL), 2 x p5 30 % slower "
        "(NVLS-tree under EFA's Simple handshake ramp, one fitted factor for both EFA "
        "generations); the 16 MiB rows are within 13 %"
    ),
    ("mid", "aws-samples/awsome-distributed-training/aws-batch all_reduce 1x8"): (
        "1 x p5 at 16 MiB: NVLS 30 % faster than measured (124 us) with the efficiency fitted "
        "on 4-8 GiB rows; 1 MiB (ring/LL) is within 2 %"
    ),
    ("mid", "coreweave/nccl-tests all_reduce 16x8"): (
        "NIC count not stated: 23-60 % faster than measured at 1 and 16 MiB"
    ),
    ("mid", "coreweave/nccl-tests all_reduce 4x8"): (
        "SHARP cluster with no stated NIC count: 51-60 % faster than measured at 1 and 16 MiB"
    ),
}


def _groups() -> list[tuple[str, str]]:
    return sorted({(r.sample.regime, r.sample.label) for r in RESULTS})


def _params() -> list[object]:
    params: list[object] = []
    for regime, group in _groups():
        reason = KNOWN_MISSES.get((regime, group))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(regime, group, marks=marks, id=f"{regime}:{group}"))
    return params


def _results(regime: str, group: str) -> list[Result]:
    return [r for r in RESULTS if r.sample.regime == regime and r.sample.label == group]


@pytest.mark.parametrize(("regime", "group"), _params())
def test_group_within_target(regime: str, group: str) -> None:
    results = _results(regime, group)
    errors = [abs(r.error) for r in results]
    median = statistics.median(errors)
    detail = "; ".join(f"{r.sample.size_bytes:.0f} B {r.error:+.1%}" for r in results)
    median_target, max_target = TARGETS[regime]
    assert median <= median_target, f"median {median:.1%} > {median_target:.0%}: {detail}"
    if max_target is not None:
        assert max(errors) <= max_target, f"max {max(errors):.1%} > {max_target:.0%}: {detail}"


def test_known_misses_are_real_groups() -> None:
    assert set(KNOWN_MISSES) <= set(_groups())
    assert all(_results(regime, group) for regime, group in _groups())


@pytest.mark.parametrize(
    ("regime", "median_target"), [("bandwidth", 0.05), ("latency", 0.10)], ids=str
)
def test_overall_median_meets_target(regime: str, median_target: float) -> None:
    errors = [abs(r.error) for r in RESULTS if r.sample.regime == regime and r.sample.nics_stated]
    assert len(errors) >= 20
    assert statistics.median(errors) <= median_target
