"""engine/types.py: collectives, dtypes, tiers, costs and estimates, with nccl-tests' factors.

busbw = algbw x F(n), F worked by hand from nccl-tests' doc/PERFORMANCE.md
(docs/model.md#algbw-and-busbw): all-reduce 2 (n-1)/n; all-gather, reduce-scatter and all-to-all
(n-1)/n; broadcast, reduce and sendrecv 1.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ibcalc.catalogue.models import Catalogue
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


#: 50 us + 9.95 ms = 10 ms
RING_10MS = Cost(
    algorithm=Algorithm.RING,
    protocol=Protocol.SIMPLE,
    latency_s=50e-6,
    transfer_s=9.95e-3,
    bottleneck="test",
)


def _estimate(best: Cost) -> Estimate:
    """A 1.6 GB fp32 all-reduce on 2 x 8 GPUs (nvlink4, 8 ndr NICs a node) costing ``best``,
    likely 8-12.5 ms."""
    return Estimate(
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


def test_estimate_bandwidths_and_range() -> None:
    est = _estimate(RING_10MS)
    assert est.time_s == pytest.approx(10e-3)
    assert est.algbw_Bps == pytest.approx(160 * GB)  # 1.6e9 B / 10 ms
    assert est.busbw_Bps == pytest.approx(300 * GB)  # 160 x 1.875
    low, high = est.busbw_Bps_range or (0.0, 0.0)
    assert low == pytest.approx(240 * GB)  # 1.6e9 / 12.5 ms x 1.875: the slow end
    assert high == pytest.approx(375 * GB)  # 1.6e9 / 8 ms x 1.875
    assert est.model_copy(update={"time_s_range": None}).busbw_Bps_range is None


def test_results_print_in_one_line_with_their_units() -> None:
    """print(est) and repr(est) in a notebook had given pydantic's repr of every field, about
    16,000 characters for one all-reduce; a Cost's 1,300 (its terms' explanations), a
    ResolvedCluster's 12,000. Each is one line of its figures with their units, three figures
    each; model_dump() keeps the whole. The same 1.6 GB all-reduce on 2 x 8 GPUs as above: 10 ms
    (50 us + 9.95 ms), busbw 1.6e9 / 10 ms x 1.875 = 300 GB/s, likely 8.00-12.5 ms."""
    from ibcalc.engine.types import Term

    term = Term(name="ring steps", seconds=50e-6, detail="2 (16-1) steps x 1.67 us" * 100)
    best = RING_10MS.model_copy(update={"bottleneck": "network: ndr", "terms": (term,)})
    assert repr(term) == str(term) == "Term(ring steps: 50.0 us)"
    assert (
        repr(best)
        == str(best)
        == ("Cost(ring/Simple 10.0 ms: latency 50.0 us + transfer 9.95 ms; network: ndr)")
    )
    # a pipeline fill is a third part; a time nccl-tests reports otherwise (a chain of
    # back-to-back operations) is the one given first: 0.05 + 9.95 + 1 = 11 ms one operation
    chained = best.model_copy(update={"fill_s": 1e-3, "measured_s": 8e-3})
    assert repr(chained) == (
        "Cost(ring/Simple 8.00 ms: one operation 11.0 ms = latency 50.0 us + transfer 9.95 ms "
        "+ fill 1.00 ms; network: ndr)"
    )
    est = _estimate(best).model_copy(
        update={"alternatives": [best], "assumptions": ["node shape: dgx-h100" * 100]}
    )
    line = (
        "all_reduce of 1.6 GB fp32 on 2 x 8 GPUs nvlink4 + 8 x ndr per node: 10.0 ms, busbw "
        "300 GB/s, ring/Simple, likely 8.00-12.5 ms)"
    )
    assert repr(est) == str(est) == f"Estimate({line}"
    # ends in other units keep their own; no range, no 'likely'
    wide = est.model_copy(update={"time_s_range": (900e-6, 12.5e-3)})
    assert repr(wide).endswith("ring/Simple, likely 900 us-12.5 ms)")
    assert repr(est.model_copy(update={"time_s_range": None})).endswith("ring/Simple)")
    from ibcalc.results import EstimateResult

    assert repr(EstimateResult.of(est)) == f"EstimateResult({line}"
    assert len(est.model_dump()["assumptions"][0]) == 2000


def test_a_resolved_cluster_prints_in_one_line(builtin_catalogue: Catalogue) -> None:
    """16 DGX H100 nodes: 8 GPUs on NVLink 4 with NVLS, 8 NDR NICs each."""
    from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster

    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    assert repr(cluster) == (
        "ResolvedCluster(16 x 8 GPUs (dgx-h100) nvlink4 + 8 x ndr per node with NVLS)"
    )
