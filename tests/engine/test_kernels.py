"""engine/kernels.py: every kernel gives its cost function's numbers to the bit.

A plan costs each candidate through a kernel (the size-independent part worked out once); here
every kernel of every plan, physical and in NCCL's tuner view, is held to the ``*_timing``
function it stands for, over clusters that exercise each branch (plugin transports, WAN sites,
one-GPU nodes, PCIe, NVLS, oversubscription, overlapped chains) and sizes around every
threshold. ``benchmarks/engine_identity.py check-quick`` does the same through the public API
on the full identity grid.
"""

from __future__ import annotations

import pytest

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.kernels import _MAKERS
from ibcalc.engine.plan import Plan
from ibcalc.engine.types import Collective, DType

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
]
SIZES = [1.0, 3.0, 64.0, 1000.0, 4096.0, 65536.0, 65537.0, 2.0**20, 3e6, 2.0**26, 2.0**29, 2.0**34]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.system}x{s.nodes}")
def test_every_kernel_equals_its_cost_function(
    builtin_catalogue: Catalogue, spec: ClusterSpec
) -> None:
    cluster = resolve_cluster(builtin_catalogue, spec)
    params = builtin_cost_params()
    checked = 0
    for collective in Collective:
        plan = Plan(collective, cluster.topology, params, dtype=DType.BF16)
        for entry in plan._entries:
            views = [(entry.kernel, params)]
            if entry.tuned:
                views.append((entry.tuner_kernel, plan.tuner))
            for kernel, view in views:
                if kernel is None:
                    continue
                for size in SIZES:
                    timing = entry.function(collective, size, plan.topo, entry.protocol, view)
                    assert timing is not None
                    assert timing.period_s is None
                    assert kernel(size) == timing.single_s, (
                        entry.algorithm,
                        entry.protocol,
                        collective,
                        size,
                    )
                    checked += 1
    assert checked > 0


def test_the_hand_written_kernels_are_exercised() -> None:
    # hand-written kernels stand for the algorithms that dominate estimates and layout searches;
    # the others (CollNet, PAT, RHD, hierarchical, ring broadcast/reduce chains, NVLS with IB
    # SHARP) call their cost function, exact by construction
    assert {f.__name__ for f in _MAKERS} >= {
        "ring_timing",
        "tree_timing",
        "nvls_tree_timing",
        "sendrecv_timing",
        "pairwise_timing",
        "pxn_timing",
        "nvls_timing",
    }
