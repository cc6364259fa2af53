"""``--explain``: the derivation of an estimate, term by term, and why NCCL picks it.

:func:`explain` turns an :class:`~ibcalc.engine.types.Estimate` into an :class:`Explanation`: the
chosen cost's terms (each with its time and how it was worked out: the counts, the constants and
where they come from), what nccl-tests' timing does to one operation's time, the error band and
the regime and transport class it was read for, and the candidates NCCL's tuner ranked, with its
own estimate beside this model's. Pure: no I/O (the renderer prints it).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from ibcalc.engine.algorithms.alltoall import ties_pairwise
from ibcalc.engine.band import regime_of
from ibcalc.engine.select import NCCL_ALGORITHMS
from ibcalc.engine.types import SIMPLE_PER_STEP_NOTE, Algorithm, Estimate, Term
from ibcalc.units import format_near_one

__all__ = ["Candidate", "Explanation", "explain"]

#: Algorithms built from point-to-point operations, which NCCL schedules without its tuner.
_POINT_TO_POINT = frozenset({Algorithm.P2P, Algorithm.PAIRWISE, Algorithm.PXN})


class Candidate(BaseModel):
    """One (algorithm, protocol) NCCL's tuner considered."""

    model_config = ConfigDict(frozen=True)

    algorithm: str
    protocol: str
    tuner_time_s: float
    model_time_s: float
    chosen: bool


class Explanation(BaseModel):
    """The derivation of one estimate."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(frozen=True)

    chosen: str
    terms: list[Term]
    single_s: float
    measurement: str
    time_s: float
    time_s_range: tuple[float, float] | None
    #: near ties the range was widened over (``Estimate.range_covers``)
    range_covers: list[str]
    #: the far faster candidate the range reaches down to (``Estimate.range_reaches``)
    range_reaches: list[str]
    #: the time at the links' line rate that set the range's low end (``Estimate``'s)
    range_wire_floor_s: float | None
    regime: str
    transport_class: str
    candidates: list[Candidate]
    why_chosen: str
    #: False for point-to-point work (sendrecv, all-to-all), which NCCL does not run through its
    #: tuner: the ranking is ibcalc's tuner-style stand-in for NCCL's protocol rule there.
    tuned: bool = True
    #: the range reaches down to the time with Simple's handshake count at a step's bytes (an
    #: extrapolation the estimate's assumptions name)
    per_step: bool = False


def explain(est: Estimate) -> Explanation:
    """The derivation of ``est`` (see the module docstring)."""
    best = est.best
    nccl = [c for c in est.alternatives if c.algorithm in NCCL_ALGORITHMS]
    ranked = sorted([best, *nccl], key=lambda c: c.selection_time_s)
    candidates = [
        Candidate(
            algorithm=c.algorithm.value,
            protocol=c.protocol.value,
            tuner_time_s=c.selection_time_s,
            model_time_s=c.time_s,
            chosen=c is best,
        )
        for c in ranked
    ]
    fastest = min([best, *est.alternatives], key=lambda c: c.time_s)
    tuned = best.algorithm not in _POINT_TO_POINT
    one_forced = (est.forced_algorithm is None) != (est.forced_protocol is None)
    forced = est.forced_algorithm is not None or est.forced_protocol is not None
    if one_forced and not (tuned and ranked and ranked[0] is best):
        # one of the two forced, and the choice is the first of the candidates left: a faster
        # one worth naming is among them too (it had named tree/LL128 under --proto simple, a
        # candidate the forced protocol rules out)
        pool = [
            c
            for c in [best, *est.alternatives]
            if c.protocol is (est.forced_protocol or c.protocol)
            and c.algorithm is (est.forced_algorithm or c.algorithm)
        ]
        fastest = min(pool, key=lambda c: c.time_s)
    among = (
        f" among the {est.forced_protocol.value} candidates (--proto forced)"
        if one_forced and est.forced_protocol is not None
        else f" among {best.algorithm.value}'s protocols (--algo forced)"
        if one_forced
        else ""
    )
    if not tuned and (one_forced or (ranked and ranked[0] is best and not forced)):
        # point-to-point work, which NCCL's tuner does not rank: a forced --algo pairwise had
        # read 'ranks first' with no word of the forcing, and --proto simple had credited
        # 'NCCL's tuner' with the pick
        chosen = f"{best.algorithm.value}/{best.protocol.value}"
        # a tie with pairwise had read 'pxn/LL ranks first', as if it were faster
        first = (
            f"{chosen} and pairwise/{best.protocol.value} tie for first{among} by a "
            "tuner-style estimate (base + per-hop latencies + bytes / bandwidth: both post n-1 "
            "messages a rank and move the same bytes over the link that binds), and the tie "
            "goes to PXN, the path NCCL takes where it can"
            # (not under --algo, which leaves pairwise out of the running)
            if est.forced_algorithm is None and ties_pairwise(best, est.alternatives)
            else f"{chosen} ranks first{among} by a tuner-style estimate (base + per-hop "
            "latencies + bytes / bandwidth)"
        )
        why = (
            f"{first}. NCCL does not tune point-to-point "
            "work: it picks LL for small messages per channel and Simple above, by a size "
            "threshold this model does not carry; the ranking stands in for it"
        )
    elif tuned and ranked and ranked[0] is best:
        why = (
            f"NCCL's tuner ranks {best.algorithm.value}/{best.protocol.value} first by its own "
            "estimate (base + per-hop latencies + bytes / its bandwidth"
            + (f"; constants: {est.tuner_constants}" if est.tuner_constants else "")
            + "); this model reports that choice's physical time"
        )
    elif one_forced:
        why = (
            f"NCCL's tuner ranks {best.algorithm.value}/{best.protocol.value} first{among} by "
            "its own estimate; this model reports that choice's physical time"
        )
    else:
        kind = "--algo and --proto" if est.forced_algorithm is not None else "--algo / --proto"
        why = f"{best.algorithm.value}/{best.protocol.value} was forced ({kind})"
    if fastest is not best and fastest.time_s < best.time_s:
        # the decimals that keep it from reading as a tie (0.996 had read '1.00x', a review)
        shown = format_near_one(fastest.time_s / best.time_s)
        why += (
            f"; {fastest.algorithm.value}/{fastest.protocol.value} would take {shown} the time here"
        )
    return Explanation(
        chosen=f"{best.algorithm.value}/{best.protocol.value}",
        terms=list(best.terms),
        single_s=best.single_s,
        measurement=best.measure_note or "one operation's time (no overlap across iterations)",
        time_s=best.time_s,
        time_s_range=est.time_s_range,
        range_covers=list(est.range_covers),
        range_reaches=list(est.range_reaches),
        range_wire_floor_s=est.range_wire_floor_s,
        regime=regime_of(est.size_bytes),
        transport_class=est.transport_class,
        candidates=candidates,
        why_chosen=why,
        tuned=tuned,
        per_step=any(a.startswith(SIMPLE_PER_STEP_NOTE) for a in est.assumptions),
    )
