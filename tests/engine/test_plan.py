"""The costing plan (``engine/plan.py``): the fast choice is the full selection's, to the bit.

``Plan.choose`` works out NCCL's tuner estimate of every candidate and the physical time of the
one picked only; ``select`` builds every cost with its explanation. Over a grid of clusters,
collectives, sizes, dtypes and forced choices both must name the same algorithm and protocol
and the same time (``==``, not approx), and raise for the same forced choices.
"""

from __future__ import annotations

from typing import Any

import pytest

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.plan import Plan, plan_for
from ibcalc.engine.select import ALGORITHMS, evaluate, select
from ibcalc.engine.types import Algorithm, Collective, DType, Protocol
from ibcalc.errors import AlgorithmNotApplicableError

#: One node, IB with and without SHARP, EFA and TCPXO (plugin transports), a PCIe box, WAN
#: sites, a tapered fabric, one GPU per node, one process driving 8 GPUs.
SPECS = {
    "dgx-h100x1": ClusterSpec(system="dgx-h100", nodes=1),
    "dgx-h100x16-sharp": ClusterSpec(system="dgx-h100", nodes=16, sharp=True),
    "dgx-a100x5": ClusterSpec(system="dgx-a100", nodes=5),
    "aws-p5x16": ClusterSpec(system="aws-p5", nodes=16),
    "aws-p5x2-g8": ClusterSpec(system="aws-p5", nodes=2, gpus_per_process=8),
    "gcp-a3-megax2": ClusterSpec(system="gcp-a3-mega", nodes=2),
    "pcie-8gpu": ClusterSpec(system="pcie-8gpu", nodes=1),
    "wan-2sites": ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="wan-100g"),
    "tapered": ClusterSpec(
        system="dgx-h100", nodes=12, oversubscription=3.0, cross_leaf_fraction=0.5
    ),
    "one-gpu-nodes": ClusterSpec(gpus_per_node=1, nodes=8, inter="ndr"),
}
SIZES = [8.0, 100.0, 4096.0, 65536.0, 1e6 + 7, 2.0**24, 3.3e7, 2.0**30, 3e9]


@pytest.fixture(scope="module")
def clusters(builtin_catalogue: Catalogue) -> dict[str, ResolvedCluster]:
    return {name: resolve_cluster(builtin_catalogue, spec) for name, spec in SPECS.items()}


def _full(plan: Plan, size: float, algorithm: Any, protocol: Any) -> tuple[Any, ...]:
    try:
        best, _ = select(
            plan.collective,
            size,
            plan.topo,
            plan.params,
            algorithm=algorithm,
            protocol=protocol,
            dtype=plan.dtype,
        )
    except AlgorithmNotApplicableError:
        return ("refused",)
    return (best.algorithm, best.protocol, best.time_s)


def _fast(plan: Plan, size: float, algorithm: Any, protocol: Any) -> tuple[Any, ...]:
    choice = plan.choose(size, algorithm, protocol)
    if choice is None:
        return ("refused",)
    return (choice.algorithm, choice.protocol, choice.time_s)


@pytest.mark.parametrize("name", list(SPECS))
def test_the_fast_choice_is_selects_choice_to_the_bit(
    name: str, clusters: dict[str, ResolvedCluster]
) -> None:
    topo = clusters[name].topology
    params = builtin_cost_params()
    checked = 0
    for collective in Collective:
        for dtype in (DType.FP32, DType.FP8):
            plan = Plan(collective, topo, params, dtype=dtype)
            for size in SIZES:
                assert _fast(plan, size, None, None) == _full(plan, size, None, None)
                checked += 1
        plan = Plan(collective, topo, params)
        for algorithm in (None, *Algorithm):
            for protocol in (None, *Protocol):
                for size in (8.0, 2.0**20, 3e9):
                    fast = _fast(plan, size, algorithm, protocol)
                    assert fast == _full(plan, size, algorithm, protocol)
                    checked += 1
    assert checked > 1000


def test_the_plan_costs_are_the_cost_functions(clusters: dict[str, ResolvedCluster]) -> None:
    """``evaluate`` (built on the plan) lists every cost function's cost, numbers and words."""
    topo = clusters["aws-p5x16"].topology
    params = builtin_cost_params()
    costs = evaluate(Collective.ALL_REDUCE, 2.0**20, topo, params)
    for cost in costs:
        direct = ALGORITHMS[cost.algorithm](
            Collective.ALL_REDUCE, 2.0**20, topo, cost.protocol, params
        )
        assert direct is not None
        assert direct.terms == cost.terms
        assert direct.single_s == cost.single_s
    assert [c.time_s for c in costs] == sorted(c.time_s for c in costs)


def test_plans_are_cached_per_parameters(
    clusters: dict[str, ResolvedCluster], builtin_catalogue: Catalogue
) -> None:
    topo = clusters["aws-p5x16"].topology
    builtin = builtin_cost_params()
    other = builtin.with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "calibrated": {"simple_transport_factor": {"value": 9.0, "assumed": "a test"}},
        }
    )
    first = plan_for(Collective.ALL_REDUCE, topo, builtin)
    assert plan_for(Collective.ALL_REDUCE, topo, builtin) is first
    # an equal topology built again (a layout search re-resolves its groups) shares the plan
    again = resolve_cluster(builtin_catalogue, SPECS["aws-p5x16"]).topology
    assert again is not topo
    assert plan_for(Collective.ALL_REDUCE, again, builtin) is first
    mine = plan_for(Collective.ALL_REDUCE, topo, other)
    assert mine is not first
    assert mine.params is other
    # 64 MiB Simple over EFA pays the transport latency x simple_transport_factor per network
    # hop (docs/model.md): the override's 9 against the built-in 8 makes the ring slower
    size = 2.0**26
    assert (
        _fast(mine, size, Algorithm.RING, Protocol.SIMPLE)[2]
        > (_fast(first, size, Algorithm.RING, Protocol.SIMPLE)[2])
    )
    assert plan_for(Collective.ALL_REDUCE, topo, builtin) is first


def test_nccl_chooses_as_if_the_fabric_were_not_tapered(builtin_catalogue: Catalogue) -> None:
    """NCCL's topology search rates the node's links and NICs, not the leaves behind them: an
    oversubscribed fabric slows the physical time, not NCCL's estimate, so not its choice (the
    'NCCL's estimate' column had carried the leaf slowdown, and the choice moved with it)."""
    params = builtin_cost_params()
    flat = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4))
    tapered = resolve_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4, oversubscription=4.0)
    )
    assert tapered.topology.leaf_contention == 4.0
    for size in (2.0**20, 1e9):
        best_flat, _ = select(Collective.ALL_REDUCE, size, flat.topology, params)
        best, _ = select(Collective.ALL_REDUCE, size, tapered.topology, params)
        assert (best.algorithm, best.protocol) == (best_flat.algorithm, best_flat.protocol)
        assert best.tuner_time_s == best_flat.tuner_time_s
    # at 1 GB the network term pays the taper: NVLS-tree's tree moves S over 8 NDR NICs
    # (8 x 47 GB/s achievable), 4x slower with 4:1 leaves
    assert best.time_s > 3 * best_flat.time_s
