"""engine/kernels.py: every kernel gives its cost function's numbers to the bit.

A plan costs each candidate through a kernel (the size-independent part worked out once); here
every kernel of every plan, physical and in NCCL's tuner view, is held to the ``*_timing``
function it stands for, over clusters that exercise each branch (plugin transports, WAN sites,
one-GPU nodes, PCIe, NVLS, IB SHARP, oversubscription, overlapped chains), sizes around every
threshold and the edges (0, overflow, infinity: the same value or the same error). The chain
kernels of the ring broadcast/reduce give the cost function's single and period, and the plan's
time from them is ``Plan._score``'s. ``benchmarks/engine_identity.py check-quick`` does the
same through the public API on the full identity grid.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.base import Topology
from ibcalc.engine.kernels import _CHAIN_MAKERS, _MAKERS, TimingFunction
from ibcalc.engine.params import CostParams
from ibcalc.engine.plan import Plan
from ibcalc.engine.types import Algorithm, Collective, DType, Protocol

SPECS = [
    ClusterSpec(system="dgx-h100", nodes=1),
    ClusterSpec(system="dgx-h100", nodes=2),
    ClusterSpec(system="dgx-h100", nodes=16, sharp=True),
    ClusterSpec(system="dgx-a100", nodes=5),
    ClusterSpec(system="aws-p5", nodes=16),
    ClusterSpec(system="aws-p5", nodes=2, gpus_per_process=8),
    ClusterSpec(system="gcp-a3-mega", nodes=2),
    ClusterSpec(system="pcie-8gpu", nodes=2, inter="roce-100g"),
    ClusterSpec(system="gb200-nvl72", nodes=36),
    ClusterSpec(system="dgx-h100", nodes=12, oversubscription=3.0, cross_leaf_fraction=0.5),
    ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="wan-100g"),
    ClusterSpec(system="dgx-a100", nodes=8, sites=4, wan="wan-10g", wan_links=2),
    ClusterSpec(gpus_per_node=1, nodes=8, inter="ndr"),
    ClusterSpec(gpus_per_node=1, nodes=3, inter="efa-v2"),
    ClusterSpec(system="alps-gh200", nodes=16),
    ClusterSpec(intra="nvlink4-mesh4", gpus_per_node=4, nodes=2, inter="hdr"),
    # the all-to-all rules of this change: a torus's bisection (2-D, 3-D, a prime count), PCIe
    # GPUs with one NIC and with eight, and the off-rail share of a tapered fabric
    ClusterSpec(intra="tpu-v6e-ici", gpus_per_node=256, nodes=1),
    ClusterSpec(intra="tpu-v6e-ici", gpus_per_node=256, nodes=2, inter="ndr"),
    ClusterSpec(intra="tpu-v5p-ici", gpus_per_node=1021, nodes=1),
    ClusterSpec(intra="pcie4", gpus_per_node=8, nodes=4, inter="ndr", nics_per_node=1),
    ClusterSpec(intra="pcie4", gpus_per_node=8, nodes=4, inter="ndr", nics_per_node=8),
    ClusterSpec(
        system="dgx-h100",
        nodes=48,
        oversubscription=4.0,
        cross_leaf_fraction=0.0,
        unaligned_cross_leaf_fraction=0.875,
    ),
]
SIZES = [1.0, 3.0, 64.0, 1000.0, 4096.0, 65536.0, 65537.0, 2.0**20, 3e6, 2.0**26, 2.0**29, 2.0**34]
#: Sizes at the edges: nothing, the largest finite float (terms overflow), infinity.
EDGES = [0.0, 1e308, float("inf")]


def _outcome(run: Callable[[float], object], size: float) -> object:
    """What ``run(size)`` returns, or the type of what it raises."""
    try:
        return run(size)
    except (ValueError, ArithmeticError) as error:
        return type(error)


def _single(
    function: TimingFunction,
    collective: Collective,
    size_bytes: float,
    *,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> float:
    timing = function(collective, size_bytes, topo, protocol, params)
    assert timing is not None
    return timing.single_s


def _chain(
    function: TimingFunction,
    collective: Collective,
    size_bytes: float,
    *,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> tuple[float, float]:
    timing = function(collective, size_bytes, topo, protocol, params)
    assert timing is not None
    # LL chains overlap (period_s set); LL128 and Simple chains do not (period = single_s)
    assert (timing.period_s is not None) == (protocol is Protocol.LL)
    period = timing.period_s
    return timing.single_s, timing.single_s if period is None else period


#: Every algorithm's base latency made non-zero and distinct (NCCL's are 0 for NVLS, NVLS-tree
#: and CollNet): the kernels must add it where the cost functions do (review CD: they had left
#: it out, 1 MiB NVLS at 500 us of base read 528.8 us in full and 28.82 us quick).
BASES = builtin_cost_params().with_overrides(
    {
        "schema": "ibcalc-cost-params/1",
        "nccl_tuner": {
            "base_latency": {
                "assumed": "a test: every base non-zero",
                "value": {
                    "tree": {"LL": "7.1 us", "LL128": "15.3 us", "Simple": "9.7 us"},
                    "ring": {"LL": "6.2 us", "LL128": "13.9 us", "Simple": "8.8 us"},
                    "collnet": {"Simple": "41 us"},
                    "collnetchain": {"Simple": "43 us"},
                    "nvls": {"Simple": "47 us"},
                    "nvlstree": {"Simple": "53 us"},
                    "pat": {"Simple": "11 us"},
                },
            }
        },
    }
)


@pytest.mark.parametrize("bases", [False, True], ids=["builtin", "every-base"])
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.system}x{s.nodes}")
def test_every_kernel_equals_its_cost_function(
    builtin_catalogue: Catalogue, spec: ClusterSpec, bases: bool
) -> None:
    cluster = resolve_cluster(builtin_catalogue, spec)
    params = BASES if bases else builtin_cost_params()
    checked = 0
    for collective in Collective:
        plan = Plan(collective, cluster.topology, params, dtype=DType.BF16)
        for entry in plan._entries:
            views = [(entry.kernel, params, plan.topo)]
            if entry.tuned:  # NCCL's view of the cluster: no leaf oversubscription
                views.append((entry.tuner_kernel, plan.tuner, plan.tuner_topo))
            for kernel, view, topo in views:
                if kernel is None:
                    continue
                for size in SIZES:
                    timing = entry.function(collective, size, topo, entry.protocol, view)
                    assert timing is not None
                    assert timing.period_s is None
                    assert kernel(size) == timing.single_s, (
                        entry.algorithm,
                        entry.protocol,
                        collective,
                        size,
                    )
                    checked += 1
                cost = partial(
                    _single,
                    entry.function,
                    collective,
                    topo=topo,
                    protocol=entry.protocol,
                    params=view,
                )
                for size in EDGES:
                    expected = _outcome(cost, size)
                    assert _outcome(kernel, size) == expected, (entry.algorithm, size)
    assert checked > 0


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.system}x{s.nodes}")
def test_every_chain_kernel_equals_its_cost_function(
    builtin_catalogue: Catalogue, spec: ClusterSpec
) -> None:
    # the ring chains of broadcast and reduce: (single_s, period_s), from which the plan makes
    # nccl-tests' time as engine.measure.measured_s does
    cluster = resolve_cluster(builtin_catalogue, spec)
    params = builtin_cost_params()
    for collective in (Collective.BROADCAST, Collective.REDUCE):
        plan = Plan(collective, cluster.topology, params)
        chains = [e for e in plan._entries if e.chain is not None]
        assert {e.algorithm for e in chains} == {Algorithm.RING}
        for entry in chains:
            chain = entry.chain
            assert chain is not None
            assert entry.kernel is None
            cost = partial(
                _chain,
                entry.function,
                collective,
                topo=plan.topo,
                protocol=entry.protocol,
                params=params,
            )
            for size in SIZES + EDGES:
                expected = _outcome(cost, size)
                assert _outcome(chain, size) == expected, (entry.protocol, size)
            for size in SIZES:
                scored = plan._score(entry, size)
                assert scored is not None
                assert plan._time(entry, size) == scored.time_s


def test_every_kernel_maker_makes_kernels(builtin_catalogue: Catalogue) -> None:
    # each hand-written kernel stands in for its cost function on some cluster of SPECS, in the
    # physical view and, where NCCL's tuner sees the algorithm, in the tuner's
    params = builtin_cost_params()
    made: set[str] = set()
    tuned: set[str] = set()
    chained: set[str] = set()
    for spec in SPECS:
        topo = resolve_cluster(builtin_catalogue, spec).topology
        for collective in Collective:
            plan = Plan(collective, topo, params, dtype=DType.BF16)
            for entry in plan._entries:
                name = entry.function.__name__
                if entry.kernel is not None:
                    made.add(name)
                if entry.tuner_kernel is not None:
                    tuned.add(name)
                if entry.chain is not None:
                    chained.add(name)
    assert made == {f.__name__ for f in _MAKERS}
    assert tuned >= made - {"rhd_timing", "hierarchical_timing"}
    assert chained == {f.__name__ for f in _CHAIN_MAKERS}


def test_a_chain_kernel_follows_the_parameters(builtin_catalogue: Catalogue) -> None:
    # without the pipeline model the physical view prices a broadcast as NCCL's tuner does (one
    # hop, no overlap): a plain kernel, no chain
    spec = ClusterSpec(system="dgx-h100", nodes=4)
    topo = resolve_cluster(builtin_catalogue, spec).topology
    params = builtin_cost_params()
    flat = params.tuner_view()
    assert not flat.pipeline.model_fill
    for view, has_chain in ((params, True), (flat, False)):
        assert isinstance(view, CostParams)
        plan = Plan(Collective.BROADCAST, topo, view)
        (ring_entry,) = [e for e in plan._entries if e.algorithm is Algorithm.RING][:1]
        assert (ring_entry.chain is not None) is has_chain
        assert (ring_entry.kernel is None) is has_chain


def test_the_hand_written_kernels_are_exercised() -> None:
    # every modelled algorithm has a hand-written kernel; the ring chains of broadcast and reduce
    # have a chain kernel (single and period)
    assert {f.__name__ for f in _MAKERS} == {
        "ring_timing",
        "tree_timing",
        "nvls_tree_timing",
        "sendrecv_timing",
        "pairwise_timing",
        "pxn_timing",
        "nvls_timing",
        "collnet_direct_timing",
        "collnet_chain_timing",
        "rhd_timing",
        "pat_timing",
        "hierarchical_timing",
    }
    assert {f.__name__ for f in _CHAIN_MAKERS} == {"ring_timing"}
