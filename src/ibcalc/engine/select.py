"""Evaluate every applicable (algorithm, protocol) and pick the one NCCL's tuner would pick.

NCCL evaluates ``time = latency + bytes / bandwidth`` for every enabled pair and picks the minimum
(docs/model.md#the-nccl-tuner-model). ``evaluate`` costs every candidate twice: with the physical
parameters and with ``params.tuner_view()``, the values NCCL's own tuner assumes (its latency
factors, without the measured limits NCCL does not know about). ``select`` ranks candidates by the
tuner's estimate (``Cost.selection_time_s``) and reports the physical time of the choice, so a
prediction follows NCCL's decisions, good or bad. A forced algorithm is evaluated over its protocols
only, and refused when it cannot run.
"""

from __future__ import annotations

from collections.abc import Callable

from ibcalc.engine.algorithms.alltoall import pairwise, pxn, sendrecv
from ibcalc.engine.algorithms.hierarchical import hierarchical
from ibcalc.engine.algorithms.innetwork import collnet_chain, collnet_direct, nvls, nvls_tree
from ibcalc.engine.algorithms.recursive import pat, rhd
from ibcalc.engine.algorithms.ring import ring
from ibcalc.engine.algorithms.tree import tree
from ibcalc.engine.base import Topology, protocols_for
from ibcalc.engine.measure import measured
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, DType, Protocol
from ibcalc.errors import AlgorithmNotApplicableError

__all__ = ["ALGORITHMS", "NCCL_ALGORITHMS", "evaluate", "select"]

CostFunction = Callable[[Collective, float, Topology, Protocol, CostParams], Cost | None]

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


#: Element types NVLink SHARP and IB SHARP reduce in the switch (16- and 32-bit floats, 32-bit
#: integers); 8-bit and 64-bit reductions run point-to-point (docs/model.md#applicability:
#: CollNet needs "the datatype/op supported").
_SWITCH_REDUCE_DTYPES = frozenset({DType.FP16, DType.BF16, DType.FP32, DType.INT32, DType.UINT32})
_REDUCTIONS = (Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.REDUCE)
_IN_SWITCH = (
    Algorithm.NVLS,
    Algorithm.NVLS_TREE,
    Algorithm.COLLNET_DIRECT,
    Algorithm.COLLNET_CHAIN,
)


def _dtype_allows(algorithm: Algorithm, collective: Collective, dtype: DType) -> bool:
    return not (
        algorithm in _IN_SWITCH and collective in _REDUCTIONS and dtype not in _SWITCH_REDUCE_DTYPES
    )


def evaluate(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    params: CostParams,
    algorithms: frozenset[Algorithm] | None = None,
    dtype: DType | str = DType.FP32,
) -> list[Cost]:
    """Every applicable (algorithm, protocol) cost, fastest first.

    Each cost is the physical one (``params``); where NCCL's tuner (``params.tuner_view()``)
    estimates another time, that is kept as ``tuner_time_s``. NCCL 2.30.7 multiplies its ring
    estimate of an FP8 reduction on more than 8 ranks by 1024 (``fp8_ring_penalty``), keeping
    long lossy reduction chains as a last resort (docs/model.md#tuner-constants).
    """
    dtype = DType.parse(dtype)
    wanted = algorithms if algorithms is not None else frozenset(ALGORITHMS)
    tuner = params.tuner_view()
    nccl = tuner.nccl_tuner
    fp8_chain = (
        dtype.is_fp8
        and topo.ranks > nccl.fp8_ring_penalty_above_ranks
        and collective in _REDUCTIONS
    )
    costs: list[Cost] = []
    for algorithm, function in ALGORITHMS.items():
        if algorithm not in wanted or not _dtype_allows(algorithm, collective, dtype):
            continue
        for protocol in protocols_for(topo):
            cost = function(collective, size_bytes, topo, protocol, params)
            if cost is None:
                continue
            cost = measured(cost, topo, params)
            seen = function(collective, size_bytes, topo, protocol, tuner)
            tuner_time = seen.time_s if seen is not None else cost.time_s
            if fp8_chain and algorithm is Algorithm.RING:
                tuner_time *= nccl.fp8_ring_penalty
            if tuner_time != cost.time_s:
                cost = cost.model_copy(update={"tuner_time_s": tuner_time})
            costs.append(cost)
    costs.sort(key=lambda c: c.time_s)
    return costs


def select(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    params: CostParams,
    algorithm: Algorithm | None = None,
    protocol: Protocol | None = None,
    dtype: DType | str = DType.FP32,
) -> tuple[Cost, list[Cost]]:
    """Return the chosen cost and the other candidates (fastest first).

    With ``algorithm`` None (``auto``) the candidate NCCL's tuner ranks first wins and the
    what-if algorithms (hierarchical, rhd) are listed as alternatives. Raises
    :class:`AlgorithmNotApplicableError` when a forced algorithm or protocol cannot run.
    """
    dtype = DType.parse(dtype)
    everything = evaluate(collective, size_bytes, topo, params, dtype=dtype)
    pool = everything
    if protocol is not None:
        pool = [c for c in pool if c.protocol is protocol]
    if algorithm is None:
        candidates = [c for c in pool if c.algorithm in NCCL_ALGORITHMS]
    else:
        candidates = [c for c in pool if c.algorithm is algorithm]
    # NCCL's tuner decides with its own estimates; the reported time is the physical one
    candidates.sort(key=lambda c: c.selection_time_s)
    if not candidates:
        what = algorithm.value if algorithm is not None else "any algorithm"
        proto = f" with protocol {protocol.value}" if protocol is not None else ""
        usable = sorted({c.algorithm.value for c in everything})
        reason = _why_not(
            algorithm,
            protocol,
            collective=collective,
            topo=topo,
            dtype=dtype,
            everything=everything,
        )
        raise AlgorithmNotApplicableError(
            f"{what}{proto} does not apply to {collective.value} on this cluster "
            f"({reason}); applicable: {', '.join(usable) or 'none'}"
        )
    best = candidates[0]
    others = [c for c in everything if c is not best]
    return best, others


def _why_not(
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    *,
    collective: Collective,
    topo: Topology,
    dtype: DType,
    everything: list[Cost],
) -> str:
    """A short reason a forced algorithm or protocol is refused."""
    if (
        algorithm is not None
        and protocol is not None
        and any(c.algorithm is algorithm for c in everything)
    ):
        runs = sorted({c.protocol.value for c in everything if c.algorithm is algorithm})
        return f"{algorithm.value} runs {', '.join(runs)} here, not {protocol.value}"
    if protocol is Protocol.LL128 and not topo.ll128_allowed:
        return (
            "LL128 needs NVLink-class paths and, across nodes, a verbs transport (IB/RoCE), "
            "not a PCIe-only box or a plugin transport such as EFA or TCPX"
        )
    if algorithm is not None and not _dtype_allows(algorithm, collective, dtype):
        return f"switch reductions do not take {dtype}; they reduce 16/32-bit types"
    if algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE):
        if topo.up is not None and topo.up.nvls_bw_Bps is None and topo.up.path == "nvlink":
            return (
                "needs NVLink SHARP: NVSwitch gen 3 or later (H100, B200), enabled "
                "(not --no-nvls); this scale-up link or setting has none"
            )
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
