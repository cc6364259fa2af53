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

from collections.abc import Callable, Sequence
from typing import NoReturn

from ibcalc.engine.base import Timing, Topology, protocols_for
from ibcalc.engine.params import CostParams, release_clauses
from ibcalc.engine.plan import (
    NCCL_ALGORITHMS,
    TIMINGS,
    Plan,
    TimingFunction,
    applies_but_for_dtype,
    dtype_allows,
    plan_for,
    switch_dtypes_words,
)
from ibcalc.engine.types import Algorithm, Collective, Cost, DType, Protocol
from ibcalc.errors import AlgorithmNotApplicableError

__all__ = ["ALGORITHMS", "NCCL_ALGORITHMS", "evaluate", "refuse", "select"]

CostFunction = Callable[[Collective, float, Topology, Protocol, CostParams], Cost | None]


def _costed(timing: TimingFunction) -> CostFunction:
    """The cost function of a ``*_timing`` function: its numbers with their explanation."""

    def cost(
        collective: Collective,
        size_bytes: float,
        topo: Topology,
        protocol: Protocol,
        params: CostParams,
    ) -> Cost | None:
        found = timing(collective, size_bytes, topo, protocol, params)
        return None if found is None else found.cost()

    return cost


#: Every modelled algorithm and its cost function, made from ``engine/plan.py``'s TIMINGS (the
#: plan ranks with their numbers alone and explains only what it returns).
ALGORITHMS: dict[Algorithm, CostFunction] = {a: _costed(f) for a, f in TIMINGS.items()}


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
    plan = plan_for(collective, topo, params, dtype=dtype, algorithms=algorithms)
    return plan.costs(size_bytes)


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
    plan = plan_for(collective, topo, params, dtype=dtype)
    return select_on(plan, size_bytes, algorithm, protocol)


def select_on(
    plan: Plan,
    size_bytes: float,
    algorithm: Algorithm | None = None,
    protocol: Protocol | None = None,
) -> tuple[Cost, list[Cost]]:
    """:func:`select` with a :class:`~ibcalc.engine.plan.Plan` made already."""
    everything = plan.scored(size_bytes)
    pool = everything
    if protocol is not None:
        pool = [c for c in pool if c.timing.protocol is protocol]
    if algorithm is None:
        candidates = [c for c in pool if c.timing.algorithm in NCCL_ALGORITHMS]
    else:
        candidates = [c for c in pool if c.timing.algorithm is algorithm]
    # NCCL's tuner decides with its own estimates; the reported time is the physical one
    candidates.sort(key=lambda c: c.tuner_time_s)
    if not candidates:
        refuse(plan, algorithm, protocol, [c.timing for c in everything])
    best = candidates[0]
    return plan.cost(best), [plan.cost(c) for c in everything if c is not best]


def refuse(
    plan: Plan,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    everything: Sequence[Timing] | None = None,
) -> NoReturn:
    """Raise :class:`AlgorithmNotApplicableError`: ``algorithm`` and ``protocol`` (None: any)
    have no candidate in ``plan`` (``everything``: its candidates at some size)."""
    if everything is None:
        everything = [c.timing for c in plan.scored(1024.0)]
    collective = plan.collective
    if algorithm is None and protocol is not None:
        head = f"protocol {protocol.value} does not apply"
    elif algorithm is None:
        head = "no algorithm applies"
    else:
        proto = f" with protocol {protocol.value}" if protocol is not None else ""
        head = f"{algorithm.value}{proto} does not apply"
    if algorithm is None and protocol is not None:  # a protocol alone: name the protocols
        usable = _usable_protocols(everything)
    else:
        usable = _usable_algorithms(everything)
    enabled = plan.tuner.nccl_tuner
    hardware = protocols_for(plan.topo)

    def why_not(algorithm: Algorithm | None) -> str:
        return _why_not(
            algorithm,
            protocol,
            collective=collective,
            topo=plan.topo,
            dtype=plan.dtype,
            everything=everything,
            params=plan.params,
        )

    if (
        algorithm is not None
        and not enabled.algorithms.get(algorithm, 1)
        and applies_but_for_dtype(algorithm, collective, plan.topo, plan.params)
    ):
        # the NCCL release the constants describe predates it, or a log's NCCL_ALGO rules it
        # out: the override's source says so; of a release's, the clause of this algorithm
        # (every algorithm the release lacks, with its notes, had been listed). Only where it
        # would run otherwise: 'pat does not apply to all_reduce (NCCL 2.21.5 predates pat)'
        # had said that a later release runs it
        source = plan.tuner.provenance["nccl_tuner.algorithms"].text
        reason = release_clauses(source, [algorithm.value]) or source
    elif protocol is not None and not enabled.protocols.get(protocol, 1):
        reason = plan.tuner.provenance["nccl_tuner.protocols"].text
    elif not any(enabled.protocols.get(p, 1) for p in hardware) and (
        algorithm is None or applies_but_for_dtype(algorithm, collective, plan.topo, plan.params)
    ):
        # every protocol the hardware has is switched off (a log's NCCL_PROTO, an override):
        # 'not defined for all_reduce' had been given as the reason
        reason = plan.tuner.provenance["nccl_tuner.protocols"].text
        if enabled.protocols.get(Protocol.LL128, 1) and Protocol.LL128 not in hardware:
            reason += (
                "; LL128, left on, is priced only where NCCL's default allows it, not on this "
                "cluster's paths"
            )
    elif (
        algorithm is None
        and not any(c.algorithm in NCCL_ALGORITHMS for c in everything)
        and (
            narrowed := release_clauses(
                plan.tuner.provenance["nccl_tuner.algorithms"].text,
                [
                    a.value
                    for a in _first_missing(
                        [
                            a
                            for a in sorted(NCCL_ALGORITHMS)
                            if not enabled.algorithms.get(a, 1)
                            and applies_but_for_dtype(a, collective, plan.topo, plan.params)
                        ]
                    )
                ],
            )
        )
    ):
        # every algorithm of NCCL's that runs the collective here is one the release predates
        # (all-to-all and send/recv before point-to-point send/receive): those are the reason,
        # not every algorithm the release lacks, nor why a ring does not run an all-to-all
        reason = narrowed
    elif (
        algorithm is None
        and not any(c.algorithm in NCCL_ALGORITHMS for c in everything)
        and not all(enabled.algorithms.values())
    ):
        # NCCL's choice has nothing left where a release or a log's NCCL_ALGO switched its
        # algorithms off: the switch's source is the reason ('not defined for all_reduce' had
        # been given), and where it leaves one algorithm, why that one does not apply
        reason = plan.tuner.provenance["nccl_tuner.algorithms"].text
        left = [a for a, on in enabled.algorithms.items() if on and a not in _POINT_TO_POINT]
        if len(left) == 1:
            reason += f"; {left[0].value}: {why_not(left[0])}"
    else:
        reason = why_not(algorithm)
    raise AlgorithmNotApplicableError(
        f"{head} to {collective.value} on this cluster ({reason}); applicable: {usable or 'none'}"
    )


#: The algorithms made of NCCL's point-to-point sends and receives, which NCCL_ALGO does not
#: name: what it leaves is said of the others
_POINT_TO_POINT = frozenset({Algorithm.PAIRWISE, Algorithm.PXN, Algorithm.P2P})
#: Point-to-point send/receive itself, which PXN's all-to-all is built on as well
_SEND_RECEIVE = _POINT_TO_POINT - {Algorithm.PXN}


def _first_missing(missing: list[Algorithm]) -> list[Algorithm]:
    """Of the algorithms a release lacks that would run a collective, those it lacks first: a
    release without point-to-point send/receive lacks PXN for that reason too (an all-to-all
    under 2.6.4 had named PXN's 2.12.7 and its notes beside the 2.7.3 that rules it out)."""
    basic = [a for a in missing if a in _SEND_RECEIVE]
    return basic or missing


def _usable_protocols(everything: Sequence[Timing]) -> str:
    """The protocols that apply: NCCL's algorithms', and those only ibcalc's what-ifs run
    named with them ('protocol Simple does not apply ...; applicable: Simple' had been said
    where only hierarchical and rhd run Simple, a review)."""

    def of(nccl: bool) -> list[Protocol]:
        return [
            p
            for p in Protocol
            if any(c.protocol is p and (c.algorithm in NCCL_ALGORITHMS) is nccl for c in everything)
        ]

    nccl = ", ".join(p.value for p in of(True))
    extra = [p.value for p in of(False) if p not in of(True)]
    if not extra:
        return nccl
    what_ifs = sorted({c.algorithm.value for c in everything if c.algorithm not in NCCL_ALGORITHMS})
    lead = nccl or "none of NCCL's"
    return f"{lead}; what-ifs NCCL does not implement ({', '.join(what_ifs)}): {', '.join(extra)}"


def _usable_algorithms(everything: Sequence[Timing]) -> str:
    """The algorithms that apply, NCCL's apart from ibcalc's what-ifs (``--algo hierarchical``,
    ``rhd``): a refusal under ``--nccl-algo collnet`` had called those two 'applicable' as if
    NCCL could run them."""
    names = {c.algorithm for c in everything}
    nccl = ", ".join(sorted(a.value for a in names if a in NCCL_ALGORITHMS))
    what_ifs = ", ".join(sorted(a.value for a in names if a not in NCCL_ALGORITHMS))
    if not what_ifs:
        return nccl
    lead = nccl or "none of NCCL's"
    return f"{lead}; what-ifs NCCL does not implement: {what_ifs}"


def _collnet_why_not(
    algorithm: Algorithm, collective: Collective, topo: Topology, params: CostParams
) -> str:
    """Why CollNet does not apply: the first of the conditions of ``_collnet_ok`` that fails
    (it named all three, which all held when the collective was the reason)."""
    if collective is not Collective.ALL_REDUCE:
        return "CollNet runs all-reduce only"
    if topo.domains < 2:
        return f"CollNet needs several {topo.node}s"
    if topo.out is None or not topo.out.sharp:
        return "CollNet needs IB SHARP, turned on with {sharp} on a fabric that has it"
    if topo.wan is not None:
        return "a SHARP tree does not span sites"
    limit = params.nccl_tuner.collnet_max_local_ranks
    if topo.m > limit:
        return f"CollNet takes at most {limit} GPUs per {topo.node}"
    if algorithm is Algorithm.COLLNET_DIRECT:
        # CollNetDirect's per-GPU heads reach each other over NVLink (innetwork.py)
        return f"CollNet direct needs NVLink inside the {topo.node}; collnetchain runs over PCIe"
    return f"{algorithm.value} is not defined for this cluster"


def _why_not(
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    *,
    collective: Collective,
    topo: Topology,
    dtype: DType,
    everything: Sequence[Timing],
    params: CostParams,
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
            f"LL128 needs NVLink-class paths and, across {topo.node}s, a verbs transport "
            "(IB/RoCE), "
            "not a PCIe-only box or a plugin transport such as EFA or TCPX"
        )
    if algorithm is None and protocol is not None and everything:
        runs = sorted({c.protocol.value for c in everything})
        return f"{collective.value} runs {', '.join(runs)} here"
    if (
        algorithm is not None
        and not dtype_allows(algorithm, collective, dtype, topo.domains)
        and applies_but_for_dtype(algorithm, collective, topo, params)
    ):
        words = switch_dtypes_words(algorithm, topo.domains)
        return f"switch reductions do not take {dtype}: {words}"
    if algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE):
        if topo.up is not None and topo.up.nvls_bw_Bps is None and topo.up.path == "nvlink":
            return (
                # {nvls}, not --no-nvls: a library message names fields, not flags (a review)
                "needs NVLink SHARP: NVSwitch gen 3 or later (H100, B200), with {nvls} not "
                "turned off; this scale-up link or setting has none"
            )
        if topo.up is None or topo.up.nvls_bw_Bps is None:
            return (
                "needs NVLink SHARP: NVSwitch gen 3 or later (H100, B200), not this scale-up link"
            )
        if collective not in (
            Collective.ALL_REDUCE,
            Collective.ALL_GATHER,
            Collective.REDUCE_SCATTER,
        ):
            return "NVLS runs all-reduce, all-gather and reduce-scatter only"
        if algorithm is Algorithm.NVLS_TREE and topo.domains < 2:
            return f"NVLS-tree needs at least two {topo.node}s; use nvls on one {topo.node}"
        if algorithm is Algorithm.NVLS and topo.domains > 1:
            # the reasons in the order the kernel tests them: the first that holds is the one
            if collective is not Collective.ALL_REDUCE:
                return f"NVLS across {topo.node}s runs all-reduce only, through IB SHARP"
            if topo.wan is not None:
                return "a SHARP tree does not span sites"
            return (
                f"NVLS across {topo.node}s needs IB SHARP, turned on with {{sharp}} on a fabric "
                "that has it"
            )
        return "NVLS-tree runs all-reduce only"
    if algorithm in (Algorithm.COLLNET_DIRECT, Algorithm.COLLNET_CHAIN):
        return _collnet_why_not(algorithm, collective, topo, params)
    if algorithm is Algorithm.PAT:
        return (
            f"PAT runs all-gather/reduce-scatter with one GPU per {topo.node} on several "
            f"{topo.node}s"
        )
    if algorithm is Algorithm.TREE:
        return "tree runs all-reduce only"
    if algorithm is Algorithm.HIERARCHICAL:
        return (
            f"hierarchical needs several GPUs per {topo.node} and several {topo.node}s, "
            "all-reduce only"
        )
    if algorithm in (Algorithm.PAIRWISE, Algorithm.PXN):
        return (
            f"all-to-all algorithm; PXN needs several GPUs per {topo.node} that meet over NVLink "
            f"and several {topo.node}s"
        )
    if algorithm is Algorithm.P2P:
        return "p2p is the sendrecv algorithm"
    return f"not defined for {collective.value}"
