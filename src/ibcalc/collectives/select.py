"""Evaluate every applicable (algorithm, protocol) and pick the one NCCL's tuner would pick.

NCCL evaluates ``time = latency + bytes / bandwidth`` for every enabled pair and picks the
minimum (cost_models.md 2.1, 2.7). ``select`` ranks candidates by the same estimate as NCCL's
tuner makes it (``Cost.selection_time_s``: NCCL's latency factors, without the measured limits
NCCL does not know about) and reports the physical time of the choice, so a prediction follows
NCCL's decisions, good or bad. A forced algorithm is evaluated over its protocols only, and
refused when it cannot run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ibcalc.collectives.alltoall import pairwise, pxn, sendrecv
from ibcalc.collectives.base import Topology, protocols_for
from ibcalc.collectives.hierarchical import hierarchical
from ibcalc.collectives.innetwork import collnet_chain, collnet_direct, nvls, nvls_tree
from ibcalc.collectives.recursive import pat, rhd
from ibcalc.collectives.ring import ring
from ibcalc.collectives.tree import tree
from ibcalc.errors import AlgorithmNotApplicableError
from ibcalc.models import Algorithm, Collective, Cost, Protocol

__all__ = ["ALGORITHMS", "NCCL_ALGORITHMS", "evaluate", "select"]

CostFunction = Callable[[Collective, float, Topology, Protocol], Cost | None]

#: Every modelled algorithm and its cost function.
ALGORITHMS: dict[Algorithm, CostFunction] = {
    Algorithm.RING: ring,
    Algorithm.TREE: tree,
    Algorithm.NVLS: nvls,
    Algorithm.NVLS_TREE: nvls_tree,
    Algorithm.COLLNET_DIRECT: collnet_direct,
    Algorithm.COLLNET_CHAIN: collnet_chain,
    Algorithm.HIERARCHICAL: hierarchical,
    Algorithm.RHD: rhd,
    Algorithm.PAT: pat,
    Algorithm.PAIRWISE: pairwise,
    Algorithm.PXN: pxn,
    Algorithm.P2P: sendrecv,
}

#: Algorithms NCCL itself can choose; ``auto`` picks among these (the others are what-ifs:
#: a hand-written hierarchical all-reduce, MPI-style recursive halving-doubling).
NCCL_ALGORITHMS: frozenset[Algorithm] = frozenset(
    {
        Algorithm.RING,
        Algorithm.TREE,
        Algorithm.NVLS,
        Algorithm.NVLS_TREE,
        Algorithm.COLLNET_DIRECT,
        Algorithm.COLLNET_CHAIN,
        Algorithm.PAT,
        Algorithm.PAIRWISE,
        Algorithm.PXN,
        Algorithm.P2P,
    }
)


def evaluate(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    algorithms: frozenset[Algorithm] | None = None,
) -> list[Cost]:
    """Every applicable (algorithm, protocol) cost, fastest first."""
    wanted = algorithms if algorithms is not None else frozenset(ALGORITHMS)
    tuner = replace(topo, tuner_view=True)
    costs: list[Cost] = []
    for algorithm, function in ALGORITHMS.items():
        if algorithm not in wanted:
            continue
        for protocol in protocols_for(topo):
            cost = function(collective, size_bytes, topo, protocol)
            if cost is None:
                continue
            seen = function(collective, size_bytes, tuner, protocol)
            if seen is not None and seen.time_s != cost.time_s:
                cost = cost.model_copy(update={"tuner_time_s": seen.time_s})
            costs.append(cost)
    costs.sort(key=lambda c: c.time_s)
    return costs


def select(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    algorithm: Algorithm | None = None,
    protocol: Protocol | None = None,
) -> tuple[Cost, list[Cost]]:
    """Return the chosen cost and the other candidates (fastest first).

    With ``algorithm`` None (``auto``) the fastest of NCCL's algorithms wins and the what-if
    algorithms (hierarchical, rhd) are listed as alternatives. Raises
    :class:`AlgorithmNotApplicableError` when a forced algorithm or protocol cannot run.
    """
    everything = evaluate(collective, size_bytes, topo)
    if protocol is not None:
        everything = [c for c in everything if c.protocol is protocol]
    if algorithm is None:
        candidates = [c for c in everything if c.algorithm in NCCL_ALGORITHMS]
    else:
        candidates = [c for c in everything if c.algorithm is algorithm]
    # NCCL's tuner decides with its own estimates; the reported time is the physical one
    candidates.sort(key=lambda c: c.selection_time_s)
    if not candidates:
        what = algorithm.value if algorithm is not None else "any algorithm"
        proto = f" with protocol {protocol.value}" if protocol is not None else ""
        usable = sorted({c.algorithm.value for c in evaluate(collective, size_bytes, topo)})
        raise AlgorithmNotApplicableError(
            f"{what}{proto} does not apply to {collective.value} on this cluster "
            f"({_why_not(algorithm, collective, topo)}); applicable: {', '.join(usable) or 'none'}"
        )
    best = candidates[0]
    others = [c for c in everything if c is not best]
    return best, others


def _why_not(algorithm: Algorithm | None, collective: Collective, topo: Topology) -> str:
    """A short reason a forced algorithm is refused."""
    if algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE):
        if topo.up is None or topo.up.nvls_bw_Bps is None:
            return (
                "needs NVLink SHARP: NVSwitch gen 3 or later (H100, B200), not this scale-up link"
            )
        if algorithm is Algorithm.NVLS_TREE and topo.domains < 2:
            return "NVLS-tree needs at least two nodes; use nvls on one node"
        if algorithm is Algorithm.NVLS and topo.domains > 1:
            return "NVLS across nodes needs IB SHARP on the scale-out fabric"
        return "NVLS runs all-reduce, all-gather and reduce-scatter only"
    if algorithm in (Algorithm.COLLNET_DIRECT, Algorithm.COLLNET_CHAIN):
        return "CollNet needs several nodes, a SHARP-capable fabric and at most 8 GPUs per node"
    if algorithm is Algorithm.PAT:
        return "PAT runs all-gather/reduce-scatter with one GPU per node on several nodes"
    if algorithm is Algorithm.TREE:
        return "tree runs all-reduce only"
    if algorithm is Algorithm.HIERARCHICAL:
        return "hierarchical needs several GPUs per node and several nodes, all-reduce only"
    if algorithm in (Algorithm.PAIRWISE, Algorithm.PXN):
        return "all-to-all algorithm; PXN needs several GPUs per node and several nodes"
    if algorithm is Algorithm.P2P:
        return "p2p is the sendrecv algorithm"
    return f"not defined for {collective.value}"
