"""A costing plan: what one collective on one topology with one set of parameters needs, once.

``select`` ranks every applicable (algorithm, protocol) by NCCL's tuner view and reports the
physical time of the choice (docs/model.md#the-nccl-tuner-model). Which pairs apply does not depend
on the message size, and neither does the tuner view, so a :class:`Plan` works them out once per
(collective, topology, parameters, dtype). Per size it then runs only the numbers of each cost
function (:class:`~ibcalc.engine.base.Timing`); the words of ``--explain`` (``Cost.terms``, the
bottleneck, the formula) are built only for the costs an estimate returns.

:meth:`Plan.costs` and :meth:`Plan.select` give what :func:`~ibcalc.engine.select.evaluate` and
:func:`~ibcalc.engine.select.select` give (they are built on them); :meth:`Plan.choose` (and
:meth:`Plan.pick`, the same as a tuple) gives only the chosen pair and its time, the same to the
bit, without building any :class:`~ibcalc.engine.types.Cost` or Timing: each candidate's
size-independent numbers are worked out once, in the plan, as a kernel
(:mod:`ibcalc.engine.kernels`), physical and in the tuner's view.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from ibcalc.engine.algorithms.alltoall import pairwise_timing, pxn_timing, sendrecv_timing
from ibcalc.engine.algorithms.hierarchical import hierarchical_timing
from ibcalc.engine.algorithms.innetwork import (
    collnet_chain_timing,
    collnet_direct_timing,
    nvls_timing,
    nvls_tree_timing,
)
from ibcalc.engine.algorithms.recursive import pat_timing, rhd_timing
from ibcalc.engine.algorithms.ring import ring_timing
from ibcalc.engine.algorithms.tree import tree_timing
from ibcalc.engine.base import Timing, Topology, protocols_for
from ibcalc.engine.kernels import ChainKernel, Kernel, chain_kernel_for, kernel_for
from ibcalc.engine.measure import host_period_s, measured, measured_s
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, DType, Protocol
from ibcalc.memo import IdentityMemo

__all__ = [
    "NCCL_ALGORITHMS",
    "TIMINGS",
    "Candidate",
    "Choice",
    "Plan",
    "Scored",
    "plan_for",
    "through_ib_sharp",
]

TimingFunction = Callable[[Collective, float, Topology, Protocol, CostParams], Timing | None]
#: One candidate at one size: the time nccl-tests would report, its algorithm and protocol.
Candidate = tuple[float, Algorithm, Protocol]

#: Every modelled algorithm and the numbers of its cost function, in ranking order (a tie in
#: time goes to the one listed first).
TIMINGS: dict[Algorithm, TimingFunction] = {
    Algorithm.RING: ring_timing,
    Algorithm.TREE: tree_timing,
    Algorithm.NVLS: nvls_timing,
    Algorithm.NVLS_TREE: nvls_tree_timing,
    Algorithm.COLLNET_DIRECT: collnet_direct_timing,
    Algorithm.COLLNET_CHAIN: collnet_chain_timing,
    Algorithm.HIERARCHICAL: hierarchical_timing,
    Algorithm.RHD: rhd_timing,
    Algorithm.PAT: pat_timing,
    # PXN before pairwise: the two tie where latency sets the time (the same messages), and a
    # tie goes to PXN, which NCCL takes wherever it can (NCCL_P2P_PXN_LEVEL's default, 2)
    Algorithm.PXN: pxn_timing,
    Algorithm.PAIRWISE: pairwise_timing,
    Algorithm.P2P: sendrecv_timing,
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

#: Element types NVLink SHARP reduces in the switch: NCCL's ``ncclNvlsSupported``
#: (src/include/device.h, 2.17 to 2.30) takes sums of 32- and 64-bit integers, fp16, bf16, fp32
#: and fp64 (the multimem ``add.u64``/``add.f64`` reductions of src/device/reduce_kernel.h);
#: 8-bit types (fp8 included) run point-to-point.
_NVLS_REDUCE_DTYPES = frozenset(
    {
        DType.FP16,
        DType.BF16,
        DType.FP32,
        DType.FP64,
        DType.INT32,
        DType.UINT32,
        DType.INT64,
        DType.UINT64,
    }
)
#: Element types IB SHARP (CollNet) is taken to reduce: 16- and 32-bit floats and 32-bit
#: integers. NCCL asks the SHARP plugin (``reduceSupport``); which 64-bit types a given plugin
#: and switch take is not modelled, so they run without CollNet (docs/model.md#applicability).
_COLLNET_REDUCE_DTYPES = frozenset({DType.FP16, DType.BF16, DType.FP32, DType.INT32, DType.UINT32})
REDUCTIONS = (Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.REDUCE)
#: The collectives NCCL does not tune (point-to-point work): their paths tie by their times as
#: priced, not by the tuner's estimate
UNTUNED = (Collective.ALL_TO_ALL, Collective.SEND_RECV)
_REDUCE_DTYPES = {
    Algorithm.NVLS: _NVLS_REDUCE_DTYPES,
    Algorithm.NVLS_TREE: _NVLS_REDUCE_DTYPES,
    Algorithm.COLLNET_DIRECT: _COLLNET_REDUCE_DTYPES,
    Algorithm.COLLNET_CHAIN: _COLLNET_REDUCE_DTYPES,
}


def through_ib_sharp(algorithm: Algorithm, domains: int) -> bool:
    """True where the algorithm reduces in IB SHARP: CollNet, and NVLS across domains (NCCL
    runs multi-node NVLS only with CollNet support for the type and op)."""
    return algorithm in (Algorithm.COLLNET_DIRECT, Algorithm.COLLNET_CHAIN) or (
        algorithm is Algorithm.NVLS and domains > 1
    )


def dtype_allows(
    algorithm: Algorithm, collective: Collective, dtype: DType, domains: int = 1
) -> bool:
    """False for an in-switch reduction of a type the switch does not reduce (``domains``: the
    topology's, since NVLS across domains reduces in IB SHARP too: an fp64 all-reduce on
    4 x DGX H100 with SHARP had been priced on NVLS through a SHARP tree CollNet refused)."""
    types = _REDUCE_DTYPES.get(algorithm)
    if types is None or collective not in REDUCTIONS:
        return True
    if through_ib_sharp(algorithm, domains) and dtype not in _COLLNET_REDUCE_DTYPES:
        return False
    return dtype in types


def switch_dtypes_words(algorithm: Algorithm, domains: int = 1) -> str:
    """The types an in-switch algorithm reduces, in words (for a refusal)."""
    if through_ib_sharp(algorithm, domains):
        across = (
            "NVLS across nodes reduces in IB SHARP, which"
            if algorithm is Algorithm.NVLS
            else "IB SHARP (CollNet)"
        )
        return f"{across} is taken to reduce 16- and 32-bit types only"
    return "NVLink SHARP reduces 16-, 32- and 64-bit types, not 8-bit ones"


def applies_but_for_dtype(
    algorithm: Algorithm, collective: Collective, topo: Topology, params: CostParams
) -> bool:
    """True when ``algorithm`` costs ``collective`` on ``topo`` in some protocol, its element
    type aside (a refusal then names the type; otherwise the cluster's reason comes first)."""
    function = TIMINGS.get(algorithm)
    return function is not None and any(
        _applies(function, collective, topo, protocol, params) for protocol in protocols_for(topo)
    )


#: Size at which a plan asks each cost function whether it applies (none depends on the size).
_PROBE_BYTES = 1024.0


@dataclass(frozen=True, slots=True)
class _Entry:
    """One (algorithm, protocol) a plan costs."""

    algorithm: Algorithm
    protocol: Protocol
    function: TimingFunction
    #: NCCL's tuner sees this pair too (its cost function applies with the tuner's values).
    tuned: bool
    #: NCCL's FP8 ring penalty applies to the tuner's estimate.
    penalised: bool
    #: ``function``'s ``single_s`` size by size (engine/kernels.py), physical and in the
    #: tuner's view; None: call ``function``.
    kernel: Kernel | None
    tuner_kernel: Kernel | None
    #: ``function``'s (single_s, period_s) size by size where its operations overlap (a ring
    #: broadcast/reduce chain), physical; None: ``kernel`` or ``function``.
    chain: ChainKernel | None = None


@dataclass(frozen=True, slots=True)
class Scored:
    """One candidate's numbers: its physical timing, what nccl-tests would time and what NCCL's
    tuner estimates (``Cost.time_s`` and ``Cost.selection_time_s``)."""

    timing: Timing
    time_s: float
    tuner_time_s: float


@dataclass(frozen=True, slots=True)
class Choice:
    """The pair :meth:`Plan.choose` picks and the time nccl-tests would report for it."""

    algorithm: Algorithm
    protocol: Protocol
    time_s: float


def tuner_topology(topo: Topology) -> Topology:
    """The cluster as NCCL's tuner sees it: its topology search rates the GPUs' links and NICs,
    not the fabric behind them, so leaf oversubscription does not enter its estimates (it slows
    the physical time only; docs/model.md#how-auto-picks). Nor does a WAN's length: NCCL sees
    the WAN NICs and charges its own per-hop latency, not the fibre's propagation or the round
    trip its buffers wait on (a review: 800 km had changed the pick called NCCL's at 64 KiB,
    1 MiB and 1 GB)."""
    out, wan = topo.out, topo.wan
    if out is not None and out.oversubscription != 1.0:
        out = out.model_copy(update={"oversubscription": 1.0})
    if wan is not None and wan.transport_latency_s > 0:
        wan = wan.model_copy(update={"transport_latency_s": 0.0})
    if out is topo.out and wan is topo.wan:
        return topo
    return dataclasses.replace(topo, out=out, wan=wan)


class Plan:
    """Costing of ``collective`` on ``topo`` with ``params`` for any size (see the module).

    ``algorithms`` limits the pairs costed (None: every modelled algorithm); ``dtype`` drops the
    switch reductions the type does not allow and sets NCCL's FP8 ring penalty.
    """

    __slots__ = (
        "_entries",
        "_host_s",
        "_iterations",
        "_last_pick",
        "_penalty",
        "_pools",
        "collective",
        "dtype",
        "params",
        "topo",
        "tuner",
        "tuner_topo",
    )

    def __init__(
        self,
        collective: Collective,
        topo: Topology,
        params: CostParams,
        *,
        dtype: DType = DType.FP32,
        algorithms: frozenset[Algorithm] | None = None,
    ) -> None:
        self.collective = collective
        self.topo = topo
        self.params = params
        self.dtype = dtype
        #: (size, best tuner time, runner-up's) of the last auto pick: range_candidates' shortcut
        self._last_pick: tuple[float, float, float] | None = None
        self.tuner = tuner = params.tuner_view()
        self.tuner_topo = tuner_topo = tuner_topology(topo)
        nccl = tuner.nccl_tuner
        fp8_chain = (
            dtype.is_fp8
            and topo.ranks > nccl.fp8_ring_penalty_above_ranks
            and collective in REDUCTIONS
        )
        entries: list[_Entry] = []
        # the protocols the hardware has, less those the run's NCCL_PROTO rules out
        protocols = [p for p in protocols_for(topo) if nccl.protocols.get(p, 1)]
        for algorithm, function in TIMINGS.items():
            if algorithms is not None and algorithm not in algorithms:
                continue
            if not dtype_allows(algorithm, collective, dtype, topo.domains):
                continue
            # the NCCL release predates it, or the run's NCCL_ALGO rules it out
            if not nccl.algorithms.get(algorithm, 1):
                continue
            for protocol in protocols:
                if not _applies(function, collective, topo, protocol, params):
                    continue
                tuned = _applies(function, collective, tuner_topo, protocol, tuner)
                kernel = kernel_for(function, collective, topo, protocol, params)
                entries.append(
                    _Entry(
                        algorithm,
                        protocol,
                        function,
                        tuned=tuned,
                        penalised=fp8_chain and algorithm is Algorithm.RING,
                        kernel=kernel,
                        tuner_kernel=(
                            kernel_for(function, collective, tuner_topo, protocol, tuner)
                            if tuned
                            else None
                        ),
                        chain=(
                            chain_kernel_for(function, collective, topo, protocol, params)
                            if kernel is None
                            else None
                        ),
                    )
                )
        self._entries = tuple(entries)
        self._pools: dict[tuple[Algorithm | None, Protocol | None], tuple[_Entry, ...]] = {}
        self._host_s = host_period_s(topo, params)
        self._iterations = params.nccl_runtime.tests_iterations
        self._penalty = tuner.nccl_tuner.fp8_ring_penalty

    def pairs(self) -> tuple[tuple[Algorithm, Protocol], ...]:
        """The (algorithm, protocol) pairs this plan costs, in the order it costs them."""
        return tuple((entry.algorithm, entry.protocol) for entry in self._entries)

    def _score(self, entry: _Entry, size_bytes: float) -> Scored | None:
        topo = self.topo
        timing = entry.function(self.collective, size_bytes, topo, entry.protocol, self.params)
        if timing is None:  # pragma: no cover - applicability does not depend on the size
            return None
        single = timing.single_s
        time = measured_s(single, timing.period_s, topo, self.params)
        if time is None:
            time = single
        seen = (
            entry.function(self.collective, size_bytes, self.tuner_topo, entry.protocol, self.tuner)
            if entry.tuned
            else None
        )
        tuner_time = seen.single_s if seen is not None else time
        if entry.penalised:
            tuner_time *= self.tuner.nccl_tuner.fp8_ring_penalty
        return Scored(timing, time, tuner_time)

    def scored(self, size_bytes: float) -> list[Scored]:
        """Every applicable candidate's numbers at ``size_bytes``, fastest first (a tie keeps
        the :data:`TIMINGS` order)."""
        out = [s for e in self._entries if (s := self._score(e, size_bytes)) is not None]
        out.sort(key=_by_time)
        return out

    def costs(self, size_bytes: float) -> list[Cost]:
        """Every applicable cost at ``size_bytes``, fastest first, as ``select.evaluate``."""
        return [self.cost(s) for s in self.scored(size_bytes)]

    def cost(self, scored: Scored) -> Cost:
        """The full :class:`Cost` of a scored candidate, with its terms and notes."""
        cost = measured(scored.timing.cost(), self.topo, self.params)
        if scored.tuner_time_s != cost.time_s:
            cost = cost.model_copy(update={"tuner_time_s": scored.tuner_time_s})
        return cost

    def choose(
        self,
        size_bytes: float,
        algorithm: Algorithm | None = None,
        protocol: Protocol | None = None,
    ) -> Choice | None:
        """The pair ``select`` would pick at ``size_bytes`` and its time, or None when no
        candidate runs (``select`` says why).

        Only NCCL's tuner estimate is worked out for every candidate; the physical time only
        for the one picked, and for those tied with it (a tie goes to the physically faster,
        then to the one listed first, as ``select``'s two stable sorts do).
        """
        picked = self.pick(size_bytes, algorithm, protocol)
        if picked is None:
            return None
        algo, proto, time = picked
        return Choice(algo, proto, time)

    def pick(
        self,
        size_bytes: float,
        algorithm: Algorithm | None = None,
        protocol: Protocol | None = None,
    ) -> tuple[Algorithm, Protocol, float] | None:
        """:meth:`choose` as a plain (algorithm, protocol, time) tuple, for throughput."""
        pool = self._pools.get((algorithm, protocol))  # inline: pick is the hot path
        if pool is None:
            pool = self._pool(algorithm, protocol)
        best: _Entry | None = None
        best_time: float | None = None
        best_tuner = 0.0
        second = math.inf  # the runner-up's tuner time, for range_candidates
        ties: list[tuple[_Entry, float | None]] | None = None
        for entry in pool:
            time: float | None = None
            if entry.tuned:
                tuner_time = self._tuned(entry, size_bytes)
            else:
                tuner_time = time = self._time(entry, size_bytes)
            if entry.penalised:
                tuner_time *= self._penalty
            if best is None or tuner_time < best_tuner:
                if best is not None:
                    second = best_tuner
                best, best_time, best_tuner, ties = entry, time, tuner_time, None
            else:
                if tuner_time < second:
                    second = tuner_time
                if tuner_time == best_tuner:
                    if ties is None:
                        ties = [(best, best_time)]
                    ties.append((entry, time))
        if algorithm is None and protocol is None:
            self._last_pick = (size_bytes, best_tuner, second)
        if best is None:
            return None
        if ties is None:
            if best_time is None:
                best_time = self._time(best, size_bytes)
            return best.algorithm, best.protocol, best_time
        picked: tuple[float, _Entry] | None = None
        for entry, time in ties:
            if time is None:
                time = self._time(entry, size_bytes)
            if picked is None or time < picked[0]:
                picked = (time, entry)
        assert picked is not None
        time, entry = picked
        return entry.algorithm, entry.protocol, time

    def range_candidates(
        self, size_bytes: float, chosen_s: float, within: float, drop: float
    ) -> list[Candidate]:
        """The candidates (time nccl-tests would report, algorithm, protocol) an estimate's
        likely range covers besides its choice, taking ``chosen_s``, under auto selection
        (nothing forced): those NCCL's tuner ranks within ``within`` (a fraction) of its choice
        at ``size_bytes``, the choice included, which a real run may take instead
        (``reporting.notably_faster``); and the fastest candidate, where the choice is more
        than ``drop`` slower than it (a least sure estimate, facade._estimate's
        ``premature``). Each candidate's time is worked out once.

        NCCL does not tune point-to-point work (all-to-all, send/recv): there the candidates
        tie where their times as priced are within ``within`` of the choice's, as the full
        estimate ranks them (facade._estimate's ``tie_time``; a review found 306 all-to-all and
        send/recv cases where this had ranked them by the tuner's time: 73.8-193 us where the
        estimate gives 73.8-161 us on a tapered fabric)."""
        timed = [(self._time(e, size_bytes), e) for e in self._pool(None, None)]
        if not timed:
            return []
        covered: list[Candidate]
        if self.collective in UNTUNED:
            picked = self.pick(size_bytes)
            chosen = chosen_s if picked is None else picked[2]
            covered = [
                (t, e.algorithm, e.protocol) for t, e in timed if 0 <= t / chosen - 1 < within
            ]
        else:
            last = self._last_pick
            if last is not None and last[0] == size_bytes and last[2] > last[1] * (1 + within):
                covered = []  # the last pick, at this size, had no runner-up that close
            else:
                ranked: list[tuple[float, float, _Entry]] = []
                for t, entry in timed:
                    tuner_time = self._tuned(entry, size_bytes) if entry.tuned else t
                    if entry.penalised:
                        tuner_time *= self._penalty
                    ranked.append((tuner_time, t, entry))
                best = min(r[0] for r in ranked)
                # the same test as the estimate's (facade._estimate): 0 <= t / best - 1 < within
                covered = [
                    (t, e.algorithm, e.protocol) for tt, t, e in ranked if tt / best - 1 < within
                ]
        fastest_s, fastest = min(timed, key=lambda te: te[0])
        if fastest_s < chosen_s * (1 - drop):
            covered.append((fastest_s, fastest.algorithm, fastest.protocol))
        return covered

    def _pool(self, algorithm: Algorithm | None, protocol: Protocol | None) -> tuple[_Entry, ...]:
        """The entries :meth:`choose` ranks for a forced ``algorithm`` and ``protocol``, made
        once per pair."""
        pool = self._pools.get((algorithm, protocol))
        if pool is None:
            pool = self._pools[(algorithm, protocol)] = self._make_pool(algorithm, protocol)
        return pool

    def _make_pool(
        self, algorithm: Algorithm | None, protocol: Protocol | None
    ) -> tuple[_Entry, ...]:
        if algorithm is None:
            entries = [e for e in self._entries if e.algorithm in NCCL_ALGORITHMS]
        else:
            entries = [e for e in self._entries if e.algorithm is algorithm]
        return tuple(e for e in entries if protocol is None or e.protocol is protocol)

    def _tuned(self, entry: _Entry, size_bytes: float) -> float:
        """NCCL's tuner estimate for a tuned ``entry`` (its tuner kernel, else its timing in the
        tuner view), before the FP8 ring penalty."""
        tuner_kernel = entry.tuner_kernel
        if tuner_kernel is not None:
            return tuner_kernel(size_bytes)
        seen = entry.function(
            self.collective, size_bytes, self.tuner_topo, entry.protocol, self.tuner
        )
        assert seen is not None
        return seen.single_s

    def _time(self, entry: _Entry, size_bytes: float) -> float:
        """What nccl-tests would time for ``entry`` (``_score(...).time_s``, from its kernel or,
        for an overlapping chain, its chain kernel's single and period;
        ``engine.measure.measured_s`` inlined)."""
        kernel = entry.kernel
        chain = entry.chain
        if kernel is not None:
            single = period = kernel(size_bytes)
        elif chain is not None:
            single, period = chain(size_bytes)
        else:
            timing = entry.function(
                self.collective, size_bytes, self.topo, entry.protocol, self.params
            )
            assert timing is not None
            single = timing.single_s
            period = timing.period_s if timing.period_s is not None else single
        host = self._host_s
        if host <= 0 and period >= single:
            return single
        k = self._iterations
        return (host + single + (k - 1) * (host if host > period else period)) / k


def _by_time(scored: Scored) -> float:
    return scored.time_s


def _applies(
    function: TimingFunction,
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> bool:
    """Whether ``function`` costs ``protocol`` here (asked once: no cost function's
    applicability depends on the size; a probe that fails keeps the pair, to fail again when
    costed)."""
    try:
        return function(collective, _PROBE_BYTES, topo, protocol, params) is not None
    except ValueError:
        return True


_CACHE: IdentityMemo[Plan] = IdentityMemo()


def plan_for(
    collective: Collective,
    topo: Topology,
    params: CostParams,
    *,
    dtype: DType = DType.FP32,
    algorithms: frozenset[Algorithm] | None = None,
) -> Plan:
    """The :class:`Plan` of these arguments, built once and reused.

    Topologies are matched by value (two equal topologies cost the same), parameters by
    identity (a ``--cost-params`` file gives another object, hence another plan).
    """
    return _CACHE.get(
        (collective, topo, id(params), dtype, algorithms),
        (params,),
        lambda: Plan(collective, topo, params, dtype=dtype, algorithms=algorithms),
    )
