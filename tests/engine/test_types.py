"""engine/types.py: collectives, dtypes, tiers, costs and estimates, with nccl-tests' factors.

busbw = algbw x F(n), F worked by hand from nccl-tests' doc/PERFORMANCE.md
(docs/model.md#algbw-and-busbw): all-reduce 2 (n-1)/n; all-gather, reduce-scatter and all-to-all
(n-1)/n; broadcast, reduce and sendrecv 1.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ibcalc.engine.types import (
    Algorithm,
    Collective,
    Cost,
    DType,
    Estimate,
    Protocol,
    ScaleOutTier,
    ScaleUpTier,
    busbw_factor,
)
from ibcalc.errors import UnitError

GB = 1e9


@pytest.mark.parametrize(
    ("collective", "ranks", "factor"),
    [
        (Collective.ALL_REDUCE, 2, 1.0),  # 2 x 1/2
        (Collective.ALL_REDUCE, 8, 1.75),  # 2 x 7/8
        (Collective.ALL_REDUCE, 16, 1.875),  # 2 x 15/16
        (Collective.ALL_GATHER, 8, 0.875),  # 7/8
        (Collective.REDUCE_SCATTER, 4, 0.75),  # 3/4
        (Collective.ALL_TO_ALL, 16, 0.9375),  # 15/16
        (Collective.BROADCAST, 16, 1.0),
        (Collective.REDUCE, 16, 1.0),
        (Collective.SEND_RECV, 16, 1.0),
        (Collective.ALL_REDUCE, 1, 1.0),  # one rank moves nothing: nccl-tests prints algbw
        (Collective.ALL_GATHER, 1, 1.0),
    ],
)
def test_busbw_factor(collective: Collective, ranks: int, factor: float) -> None:
    assert busbw_factor(collective, ranks) == pytest.approx(factor)


def test_collective_names() -> None:
    assert [c.command for c in Collective] == [
        "allreduce",
        "reducescatter",
        "allgather",
        "broadcast",
        "reduce",
        "alltoall",
        "sendrecv",
    ]
    assert Collective.lookup("All-Reduce") is Collective.ALL_REDUCE
    assert Collective.lookup(" all_gather ") is Collective.ALL_GATHER
    assert Collective.lookup("alltoall") is Collective.ALL_TO_ALL
    assert Collective.lookup("allreduse") is None
    # nccl-tests splits the buffer over ranks for these three only
    assert {c for c in Collective if c.per_rank_buffer} == {
        Collective.ALL_GATHER,
        Collective.REDUCE_SCATTER,
        Collective.ALL_TO_ALL,
    }


def test_dtype_sizes_and_spellings() -> None:
    sizes = {"int8": 1, "fp8": 1, "half": 2, "bfloat16": 2, "float": 4, "double": 8}
    assert {name: DType.parse(name).bytes for name in sizes} == sizes
    assert DType.parse(" BF16 ") is DType.BF16
    assert DType.parse("f8e4m3") is DType.FP8_E4M3
    assert {d for d in DType if d.is_fp8} == {DType.FP8, DType.FP8_E4M3, DType.FP8_E5M2}
    assert "float" in DType.names()
    assert "fp32" in DType.names()
    with pytest.raises(ValueError, match="unknown dtype 'fp33'"):
        DType.parse("fp33")
    # the library's error, as estimate_on raises for the same name (it had been a bare
    # ValueError from a public type), and still a ValueError for pydantic validators
    with pytest.raises(UnitError, match="unknown dtype 'foo'"):
        DType.parse("foo")
    with pytest.raises(UnitError, match="unknown dtype 4"):
        DType.parse(4)


def test_scale_out_domain_bandwidth() -> None:
    # 8 NDR NICs at 47 GB/s achievable each = 376 GB/s per domain
    tier = ScaleOutTier(
        link_id="ndr", domains=4, nics_per_domain=8, nic_line_Bps=50 * GB, nic_bw_Bps=47 * GB
    )
    assert tier.domain_bw_Bps == pytest.approx(376 * GB)
    assert (tier.oversubscription, tier.cross_leaf_fraction, tier.sharp) == (1.0, 1.0, False)


@pytest.mark.parametrize(
    "changes",
    [
        {"nics_per_domain": 0},
        {"domains": 0},
        {"nic_bw_Bps": 0.0},
        {"oversubscription": 0.5},  # down:up below 1:1 is not oversubscription
        {"cross_leaf_fraction": 1.5},
        {"transport_latency_s": -1e-6},
        {"colour": "blue"},
    ],
)
def test_scale_out_tier_refuses(changes: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "link_id": "ndr",
        "domains": 2,
        "nics_per_domain": 8,
        "nic_line_Bps": 50 * GB,
        "nic_bw_Bps": 47 * GB,
    }
    with pytest.raises(ValidationError):
        ScaleOutTier.model_validate({**fields, **changes})


@pytest.mark.parametrize(
    "changes", [{"gpus": 0}, {"line_Bps": 0.0}, {"duplex_efficiency": 1.5}, {"path": "pcie"}]
)
def test_scale_up_tier_refuses(changes: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "link_id": "nvlink4",
        "gpus": 8,
        "line_Bps": 450 * GB,
        "bw_Bps": 370 * GB,
    }
    ScaleUpTier.model_validate(fields)  # the base is valid
    with pytest.raises(ValidationError):
        ScaleUpTier.model_validate({**fields, **changes})


def test_cost_times() -> None:
    cost = Cost(
        algorithm=Algorithm.RING,
        protocol=Protocol.SIMPLE,
        latency_s=10e-6,
        transfer_s=1e-3,
        fill_s=2e-6,
        bottleneck="test",
    )
    assert cost.single_s == pytest.approx(1.012e-3)  # 10 us + 1 ms + 2 us
    assert cost.time_s == pytest.approx(1.012e-3)
    assert cost.selection_time_s == pytest.approx(1.012e-3)
    measured = cost.model_copy(update={"measured_s": 0.9e-3, "tuner_time_s": 2e-3})
    assert measured.time_s == pytest.approx(0.9e-3)  # what nccl-tests would report
    assert measured.selection_time_s == pytest.approx(2e-3)  # what NCCL's tuner ranks by
    with pytest.raises(ValidationError):
        Cost(
            algorithm=Algorithm.RING,
            protocol=Protocol.LL,
            latency_s=-1,
            transfer_s=0,
            bottleneck="",
        )


def test_estimate_bandwidths_and_range() -> None:
    best = Cost(
        algorithm=Algorithm.RING,
        protocol=Protocol.SIMPLE,
        latency_s=50e-6,
        transfer_s=9.95e-3,
        bottleneck="test",
    )
    est = Estimate(
        collective=Collective.ALL_REDUCE,
        size_bytes=1.6e9,
        dtype="fp32",
        count=400_000_000,
        nodes=2,
        gpus_per_node=8,
        ranks=16,
        intra="nvlink4",
        inter="ndr",
        nics_per_node=8,
        domains=2,
        best=best,
        alternatives=[],
        assumptions=[],
        time_s_range=(8e-3, 12.5e-3),
    )
    assert est.time_s == pytest.approx(10e-3)
    assert est.algbw_Bps == pytest.approx(160 * GB)  # 1.6e9 B / 10 ms
    assert est.busbw_Bps == pytest.approx(300 * GB)  # 160 x 1.875
    low, high = est.busbw_Bps_range or (0.0, 0.0)
    assert low == pytest.approx(240 * GB)  # 1.6e9 / 12.5 ms x 1.875: the slow end
    assert high == pytest.approx(375 * GB)  # 1.6e9 / 8 ms x 1.875
    assert est.model_copy(update={"time_s_range": None}).busbw_Bps_range is None
