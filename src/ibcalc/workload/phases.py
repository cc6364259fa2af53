"""A phase: one kind of collective a workload repeats, costed on the sub-cluster it runs on.

``bytes_per_gpu`` is the collective's buffer in nccl-tests' convention, what ``ibcalc allreduce
--size`` would take: the whole buffer for all-reduce, the total (gathered or scattered) buffer for
all-gather and reduce-scatter, each rank's send buffer for all-to-all and send/receive.
``time_s`` is one occurrence; ``count`` occurrences happen per ``per`` (a training step, a
decode step, a request); ``exposed_s`` is the part of ``time_s x count`` that compute does not
hide, per ``per``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.cluster.resolve import ResolvedCluster, sharp_hint
from ibcalc.defaults import empty_list
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import (
    SIMPLE_PER_STEP_NOTE,
    Algorithm,
    Collective,
    DType,
    Estimate,
    Protocol,
)
from ibcalc.errors import SizeTooSmallError, WorkloadError
from ibcalc.facade import (
    SHARP_ALGORITHMS,
    CollectivePlan,
    QuickEstimate,
    estimate_on,
    message_extrapolation_notes,
    sharp_unused_reason,
    simple_extrapolation_hint,
    simple_per_step_s,
)
from ibcalc.memo import IdentityMemo
from ibcalc.trusted import trusted
from ibcalc.workload.placement import Placement, Tier

__all__ = ["Per", "Phase", "build_phase", "phase_fields", "trusted_phase"]

Per = Literal["step", "token", "request", "checkpoint"]


class Phase(BaseModel):
    """One collective (or storage transfer) a workload repeats ``count`` times per ``per``."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    collective: Collective | None
    bytes_per_gpu: float = Field(ge=0)
    ranks: int = Field(ge=1)
    tier: Tier
    time_s: float = Field(ge=0)
    time_s_range: tuple[float, float] | None = None
    count: int = Field(ge=0)
    per: Per = "step"
    exposed_s: float = Field(ge=0)
    overlaps: str | None = None
    estimate: Estimate | None = None
    assumptions: list[str] = Field(default_factory=empty_list)

    @property
    def inside_a_node(self) -> bool:
        """Whether the group has several GPUs in a node, so that its collective runs on the
        scale-up links too (an ep group of one GPU per node crosses the network alone: a partial
        mesh's all-to-all note had shown for it, a review)."""
        return self.tier == "scale-up" or (
            self.estimate is not None and self.estimate.gpus_per_node > 1
        )

    @property
    def count_per_step(self) -> int:
        """Occurrences per ``per`` (the name the issue uses)."""
        return self.count

    @property
    def total_s(self) -> float:
        """Time of all occurrences per ``per``: ``time_s x count``."""
        return self.time_s * self.count

    @property
    def total_s_range(self) -> tuple[float, float] | None:
        """The error band of :attr:`total_s`, when the estimate has one."""
        if self.time_s_range is None:
            return None
        low, high = self.time_s_range
        return (low * self.count, high * self.count)


def build_phase(
    placement: Placement,
    name: str,
    collective: Collective,
    size_bytes: float,
    *,
    dtype: DType,
    count: int,
    per: Per = "step",
    exposed: bool = True,
    overlaps: str | None = None,
    params: CostParams | None = None,
    notes: list[str] | None = None,
    quick: bool = False,
    plan: CollectivePlan | None = None,
) -> Phase:
    """Cost ``collective`` of ``size_bytes`` of ``dtype`` on ``placement``'s sub-cluster as a
    phase repeated ``count`` times per ``per``, with the estimate's error band.

    ``exposed`` False leaves ``exposed_s`` at 0 for the caller's overlap rule to fill in.
    ``quick`` costs it through :meth:`~ibcalc.facade.CollectivePlan.quick` and leaves
    :attr:`Phase.estimate` None: every number is the same to the bit, several times faster
    (what a layout search ranks by; nothing there shows the estimate). ``plan``: the
    :class:`~ibcalc.facade.CollectivePlan` of these arguments, when the caller keeps one.
    """
    return Phase(
        **phase_fields(
            placement,
            name,
            collective,
            size_bytes,
            dtype=dtype,
            count=count,
            per=per,
            exposed=exposed,
            overlaps=overlaps,
            params=params,
            notes=notes,
            quick=quick,
            plan=plan,
        )
    )


#: The fields of a phase without an estimate, counted as given (``model_fields_set``): every
#: one but the estimate, left at its default
_GIVEN_WITHOUT_ESTIMATE = frozenset(name for name in Phase.model_fields if name != "estimate")


def trusted_phase(fields: dict[str, Any]) -> Phase:
    """``Phase(**fields)`` for :func:`phase_fields`' dict (``exposed_s`` set), without
    validating its values again (:func:`~ibcalc.trusted.trusted`: a layout search builds
    thousands); the dict becomes the phase's. An estimate of None counts as not given."""
    given = None if fields["estimate"] is not None else _GIVEN_WITHOUT_ESTIMATE
    return trusted(Phase, fields, given)


#: a collective's numbers at one size and its time range (:func:`quick_cost`)
QuickCost = tuple[QuickEstimate, tuple[float, float]]


def quick_cost(plan: CollectivePlan, size_bytes: float) -> QuickCost:
    """``plan``'s quick numbers at ``size_bytes`` and their time range."""
    return quick_range(plan, plan.quick(size_bytes))


def quick_range(plan: CollectivePlan, q: QuickEstimate) -> QuickCost:
    """``q``, ``plan``'s quick numbers at one size, with their time range."""
    return q, plan.time_s_range(q)


# enum members as module globals for the layout search's hot paths (engine.types says why)
_SIMPLE, _RING, _ALL_TO_ALL = Protocol.SIMPLE, Algorithm.RING, Collective.ALL_TO_ALL


def too_small(name: str, exc: SizeTooSmallError) -> WorkloadError:
    """A phase whose buffer nccl-tests would round to no bytes, refused naming the phase: the
    size is the workload's, not one the user typed ("size 1 KiB is too small for alltoall of
    bf16 over 1024 ranks" had named no phase: an expert group of 1024 dispatching one decoded
    token of a 512-wide model)."""
    return WorkloadError(f"{name}: each GPU's {str(exc).removeprefix('size ')}")


def phase_fields(
    placement: Placement,
    name: str,
    collective: Collective,
    size_bytes: float,
    *,
    dtype: DType,
    count: int,
    per: Per = "step",
    exposed: bool = True,
    overlaps: str | None = None,
    params: CostParams | None = None,
    notes: list[str] | None = None,
    quick: bool = False,
    plan: CollectivePlan | None = None,
    costed: QuickCost | None = None,
) -> dict[str, Any]:
    """The fields of :func:`build_phase`'s :class:`Phase`, every one in the order the model
    declares them (the estimate None with ``quick``), for a caller that sets ``exposed_s``
    before building it (``exposed_s`` is 0 when ``exposed`` is False; :func:`trusted_phase`).
    With ``quick``, ``costed`` is :func:`quick_cost` of the phase's plan and size when the
    caller has it."""
    if quick:
        cluster = placement.cluster
        if costed is None:
            if plan is None:
                cost = params if params is not None else builtin_cost_params()
                plan = CollectivePlan(cluster, collective, dtype=dtype, params=cost)
            try:
                costed = quick_cost(plan, size_bytes)
            except SizeTooSmallError as exc:
                raise too_small(name, exc) from None
        q, span = costed
        # a ring in Simple alone can take the per-step reading: asked only there (a layout
        # search costs thousands of phases)
        moved = (
            q.protocol is _SIMPLE
            and q.algorithm is _RING
            and simple_per_step_s(
                cluster.topology,
                params if params is not None else builtin_cost_params(),
                collective,
                dtype=dtype,
                size=q.size_bytes,
                choice=(q.time_s, q.algorithm, q.protocol),
            )
            is not None
        )
        extra = _alltoall_notes(placement, collective, params, per_step=moved)
        return {
            "name": name,
            "collective": collective,
            "bytes_per_gpu": q.size_bytes,
            "ranks": cluster.ranks,
            "tier": placement.tier,
            "time_s": q.time_s,
            "time_s_range": span,
            "count": count,
            "per": per,
            "exposed_s": q.time_s * count if exposed else 0.0,
            "overlaps": overlaps,
            "estimate": None,
            "assumptions": [*placement.notes, *(notes or []), *extra],
        }
    try:
        est = estimate_on(
            placement.cluster,
            collective,
            size_bytes,
            dtype=dtype,
            params=params,
            sharp_what_if=False,
        )
    except SizeTooSmallError as exc:
        raise too_small(name, exc) from None
    return {
        "name": name,
        "collective": collective,
        "bytes_per_gpu": est.size_bytes,
        "ranks": est.ranks,
        "tier": placement.tier,
        "time_s": est.time_s,
        "time_s_range": est.time_s_range,
        "count": count,
        "per": per,
        "exposed_s": est.time_s * count if exposed else 0.0,
        "overlaps": overlaps,
        "estimate": est,
        "assumptions": [
            *placement.notes,
            *(notes or []),
            *_alltoall_notes(
                placement,
                collective,
                params,
                per_step=any(a.startswith(SIMPLE_PER_STEP_NOTE) for a in est.assumptions),
            ),
        ],
    }


def _alltoall_notes(
    placement: Placement,
    collective: Collective,
    params: CostParams | None,
    *,
    per_step: bool,
) -> list[str]:
    """A phase's word on a fit it extrapolates: an all-to-all of more ranks than the
    per-message cost's rows (a 64-GPU expert group in one NVL72 domain had priced 2.5x slower
    than over InfiniBand with no such word, a review), a ring in Simple over a plugin transport
    of more ranks than Simple's handshake count's rows (its range had reached lower with no
    word: review DL; said only where ``per_step``, the range moved: review DM)."""
    cost = params if params is not None else builtin_cost_params()
    topo = placement.cluster.topology
    if collective is not _ALL_TO_ALL:
        hint = simple_extrapolation_hint(topo, cost, collective, rows="phases") if per_step else ""
        return [hint] if hint else []
    return message_extrapolation_notes(topo, cost)


#: How a workload's note begins where --sharp changes none of its collectives (a layout search
#: says it once for all its layouts)
SHARP_UNUSED = "SHARP is on, but "


def sharp_step_notes(
    cluster: ResolvedCluster,
    notes: list[str],
    across: Sequence[tuple[str, Algorithm, Protocol, DType]],
    params: CostParams | None,
    *,
    of: str,
    grad: DType | None = None,
) -> list[str]:
    """``notes`` with what SHARP does for a workload whose all-reduces across the network are
    ``across`` (phase, algorithm, protocol, element type), ``of`` naming the workload ("of the
    step"): the cluster's hint to turn it on only where one such all-reduce runs (infer and
    train had offered it for a step of ZeRO's reduce-scatters or tp inside nodes, where the flag
    changes nothing: review CZ), and with ``--sharp`` on, why no phase takes it where none does.
    ``grad`` is the gradients' type where it is not the one priced (fp8 priced as int8)."""
    out = cluster.topology.out
    if out is None or cluster.inter is None:
        return notes
    if not out.sharp:
        hint = sharp_hint(cluster.inter.id)
        if not across:
            return [n for n in notes if n != hint]
        why = _ruled_out(cluster, across, params, grad)
        if why is None:
            # a SHARP algorithm is a candidate: NCCL's tuner decides at the phases' sizes, which
            # would take a second selection for each phase, more than a layout search affords
            return notes
        # the type or the cluster rules SHARP out at every size: the hint had said "enable with
        # --sharp" for int8 gradients and GB200 with --no-nvls, where the flag changes nothing
        # (reviews DA, DB), as the allreduce estimate's what-if says it
        unchanged = (
            f"{cluster.inter.id} supports SHARP (CollNet); {{sharp}} would not change an "
            f"all-reduce {of}: {why}"
        )
        return [unchanged if n == hint else n for n in notes]
    if not across:
        # ZeRO's reduce-scatter and all-gather, or every all-reduce inside a node: the flag
        # changed nothing, and nothing had said so (review CR L4)
        return [
            *notes,
            f"{SHARP_UNUSED}no all-reduce {of} crosses the network: ibcalc prices in-network "
            "reduction (CollNet, NVLS across nodes) for all-reduce only",
        ]
    if any(algorithm in SHARP_ALGORITHMS for _, algorithm, _, _ in across):
        return notes
    # SHARP on and taken by no phase: said, as allreduce says it (the step had read as without
    # --sharp, nothing saying whether the flag was taken: review CN), with what rules SHARP out
    # where something does (int8 gradients, --no-nvls on GB200), not the tuner (review CR)
    reason = _ruled_out(cluster, across, params, grad)
    kept = ", ".join(f"{name} {a.value}/{p.value}" for name, a, p, _ in across)
    return [
        *notes,
        f"{SHARP_UNUSED}no all-reduce {of} runs on it: " + (reason or f"NCCL's tuner keeps {kept}"),
    ]


def _named_type(reason: str | None, grad: DType | None) -> str | None:
    """``reason`` with compressed gradients (fp8, uint8) named as given where SHARP is ruled out
    for the 8-bit integer sum they are priced as (reviews CW, CX)."""
    if reason == f"SHARP does not reduce {DType.INT8.value}" and grad not in (None, DType.INT8):
        assert grad is not None
        return f"SHARP does not reduce {grad.value} gradients, priced as int8"
    return reason


#: what rules SHARP out for a cluster, parameters and element type (a layout search asks it once
#: per layout, of one cluster: a plan and a selection each time, about 150 us, would have cost
#: its 5,281 layouts that reduce across the network about 0.8 s)
_RULED_OUT: IdentityMemo[str | None] = IdentityMemo()


def _ruled_out(
    cluster: ResolvedCluster,
    across: Sequence[tuple[str, Algorithm, Protocol, DType]],
    params: CostParams | None,
    grad: DType | None,
) -> str | None:
    """Why no all-reduce of ``across`` would run on SHARP (on, or turned on) at any size, one
    reason per element type (:func:`~ibcalc.facade.sharp_unused_reason`; fp8 gradients named as
    given), joined; None where one type may run on it. Mixed types had been said to be kept
    off SHARP by the tuner (review DB)."""
    reasons: list[str] = []
    for dtype in sorted({d for *_, d in across}, key=lambda d: d.value):
        reason = _RULED_OUT.get(
            (id(cluster), id(params), dtype),
            (cluster, params),
            functools.partial(sharp_unused_reason, cluster, dtype, params=params),
        )
        if reason is None:
            return None
        named = _named_type(reason, grad)
        if named is not None and named not in reasons:
            reasons.append(named)
    return "; ".join(reasons) or None
