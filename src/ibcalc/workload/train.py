"""Communication of one training step, per parallel dimension (docs/workload.md, "Training"), and
the layout's memory per GPU (``workload/memory.py``).

Per GPU and per step (M micro-batches of b sequences of s tokens, hidden size h, L layers):

* DP, gradients: all-reduce of ``P_stage x bytes(grad)`` over the ``dp x cp`` ranks holding
  the same weights, ``P_stage`` the parameters per GPU of the pipeline stage holding the most
  (``P / (tp x pp)`` on average, the embedding or output layer beside); with ZeRO-1 a
  reduce-scatter of that plus an all-gather of the updated weights ``P_stage x bytes(param)``
  (2 Psi, as plain DP); with ZeRO-2 the reduce-scatter
  in every micro-batch (its gradients are sharded, so they cannot accumulate); with ZeRO-3/FSDP
  the weights are all-gathered in every micro-batch's forward and backward and gradients
  reduce-scattered each micro-batch (3 Psi per micro-batch), one layer at a time: ``L_stage``
  collectives of each kind of ``1 / L_stage`` of the stage's bytes. Rajbhandari et al., SC'20,
  arXiv:1910.02054, sections 5.2 and 7; Zhao et al., VLDB 2023, arXiv:2304.11277, sections
  3.2-3.3 (FSDP). With expert parallelism (one site, no cp) the routed
  experts ``E`` go over the ``dp / ep`` ranks holding the same experts (``edp-``) and the rest
  over all dp ranks (Megatron-Core's expert-data-parallel group).
* TP (Megatron): 2 all-reduces forward and 2 backward per layer of ``b x s/cp x h x bytes(act)``;
  with sequence parallelism 4 all-gathers and 4 reduce-scatters of the same buffer. Shoeybi et
  al. 2019, arXiv:1909.08053, section 3; Korthikanti et al. 2022, arXiv:2205.05198, section 4.2.
* PP: one send/receive of ``b x s/cp x h x bytes(act) / tp`` forward and one backward in each of
  the ``M + pp - 1`` slots of the 1F1B schedule's critical path (Narayanan et al., SC'21,
  arXiv:2104.04473, sections 2.2 and 4.1 with its scatter/gather optimisation); 1F1B bubble
  ``(pp - 1) / M`` of the compute time. Interleaved over ``v`` model chunks per stage (section
  2.2.2): ``v M + pp - 1`` slots and a bubble of ``(pp - 1) / (v M)``.
* EP: all-to-all dispatch and combine per MoE layer forward, and both again backward, of
  ``b x s/cp x top_k x h x bytes(act)`` per GPU (Lepikhin et al. 2020, GShard, arXiv:2006.16668;
  DeepSeek-V3, arXiv:2412.19437, section 3.2.2).
* CP (all-gather based, Llama 3, arXiv:2407.21783, section 3.3.2): all-gather of K and V per
  layer forward, reduce-scatter of their gradients backward, ``b x s x kv_elements x bytes / tp``.

Overlap (docs/workload.md, "Overlap"): data-parallel collectives run under compute windows; every
other collective sits on the critical path and is exposed in full.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.catalogue.load import find_system
from ibcalc.catalogue.models import MAX_GPU_MEMORY_BYTES, MIN_GPU_MEMORY_BYTES, Catalogue
from ibcalc.cluster.resolve import (
    ResolvedCluster,
    expect_catalogue_and_spec,
    require_collectives,
    resolve_cluster,
)
from ibcalc.cluster.spec import MAX_GPUS, ClusterSpec
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, DType, Protocol
from ibcalc.errors import (
    ClusterError,
    FieldError,
    IbcalcError,
    SizeTooSmallError,
    WorkloadError,
    expect_type,
)
from ibcalc.facade import CollectivePlan, QuickEstimate, cost_parameter_notes
from ibcalc.memo import IdentityMemo
from ibcalc.trusted import trusted
from ibcalc.units import (
    format_count,
    format_near_one,
    format_ratio,
    format_share,
    format_size,
    format_time,
    plural,
)
from ibcalc.workload.memory import (
    Recompute,
    TrainMemory,
    candidate_stages,
    decimal_capacity_note,
    gpu_capacity,
    judge_fit,
    stage_layers,
    train_memory,
)
from ibcalc.workload.model import CheckedSpec, ModelSpec, expect_job
from ibcalc.workload.phases import (
    Phase,
    QuickCost,
    phase_fields,
    quick_cost,
    quick_range,
    sharp_step_notes,
    too_small,
    trusted_phase,
)
from ibcalc.workload.placement import Placement, place_group, place_pipeline, single_domain

__all__ = [
    "DEFAULT_ORDER",
    "DP_LAST",
    "HIERARCHICAL_ONE_SITE",
    "Parallelism",
    "TrainResult",
    "TrainSpec",
    "TrainTotals",
    "compare_layouts",
    "factorisations",
    "fit_cluster",
    "train_step",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Most model chunks per pipeline stage accepted (TrainSpec.virtual_stages)
MAX_VIRTUAL_STAGES = 1024

#: Backward over forward compute: 2 (forward 2 N D FLOPs per token, backward 4 N D; Kaplan et
#: al. 2020, arXiv:2001.08361, section 2.1).
BACKWARD_OVER_FORWARD = 2.0
#: Training FLOPs per parameter per token (forward + backward), same source.
FLOPS_PER_PARAM_TOKEN = 6.0

# enum members as module globals for the layout search's hot paths (engine.types says why)
_ALL_REDUCE, _ALL_TO_ALL = Collective.ALL_REDUCE, Collective.ALL_TO_ALL
_SEND_RECV, _FULL = Collective.SEND_RECV, Recompute.FULL


class Parallelism(CheckedSpec):
    """Parallel degrees: tensor, pipeline, data, expert (carved out of dp) and context."""

    model_config = _FROZEN

    tp: int = Field(default=1, ge=1, le=MAX_GPUS)
    pp: int = Field(default=1, ge=1, le=MAX_GPUS)
    dp: int = Field(default=1, ge=1, le=MAX_GPUS)
    ep: int = Field(default=1, ge=1, le=MAX_GPUS)
    cp: int = Field(default=1, ge=1, le=MAX_GPUS)

    @property
    def world(self) -> int:
        """GPUs in the job: tp x cp x pp x dp (ep reuses dp's ranks)."""
        return self.tp * self.cp * self.pp * self.dp

    @property
    def label(self) -> str:
        """``tp8 pp1 dp16`` (ep and cp when above 1)."""
        parts = [f"tp{self.tp}", f"pp{self.pp}", f"dp{self.dp}"]
        if self.ep > 1:
            parts.append(f"ep{self.ep}")
        if self.cp > 1:
            parts.append(f"cp{self.cp}")
        return " ".join(parts)


class TrainSpec(CheckedSpec):
    """A training job: model, layout, sharding, precisions, batch shape and compute time."""

    model_config = _FROZEN

    model: ModelSpec
    parallel: Parallelism
    zero: int = Field(default=0, ge=0, le=3)
    grad_dtype: DType = DType.BF16
    param_dtype: DType = DType.BF16
    act_dtype: DType = DType.BF16
    micro_batch: int = Field(default=1, ge=1, le=1_000_000)
    seq_len: int | None = Field(default=None, ge=1, le=100_000_000)
    microbatches: int | None = Field(default=None, ge=1, le=1_000_000)
    #: model chunks per pipeline stage: above 1, Megatron's interleaved 1F1B schedule (virtual
    #: pipeline stages; Narayanan et al., SC'21, section 2.2.2). 1,024 bounds the input, not a
    #: model figure: pp x v chunks of at least one layer each outnumber any preset's layers long
    #: before it
    virtual_stages: int = Field(default=1, ge=1, le=MAX_VIRTUAL_STAGES)
    #: sequences per step over all data-parallel ranks: sets M = global_batch / (dp x micro_batch)
    global_batch: int | None = Field(default=None, ge=1, le=1_000_000_000)
    sequence_parallel: bool = False
    hierarchical: bool = False
    #: at least 1 ns (as design files), at most about 11.6 days per step
    backward_s: float | None = Field(default=None, ge=1e-9, le=1e6)
    #: at least 1 GFLOP/s, at most 1 EFLOP/s per GPU
    tflops: float | None = Field(default=None, ge=1e-3, le=1e6)
    #: which activations the backward pass recomputes (workload/memory.py)
    recompute: Recompute = Recompute.SELECTIVE
    #: one GPU's memory in bytes, over the system preset's (None: the preset's, if it states one)
    gpu_memory_bytes: float | None = Field(
        default=None, ge=MIN_GPU_MEMORY_BYTES, le=MAX_GPU_MEMORY_BYTES
    )


class TrainTotals(BaseModel):
    """Per-step totals. Compute-dependent fields are None when no compute time was given."""

    model_config = _FROZEN

    comm_s: float
    exposed_s: float
    #: likely ranges of communication, exposed communication and the step: every phase at the
    #: low end of its range, then every one at the high end (a model slow on one collective of
    #: a cluster is slow on its others), through the same overlap; None where a phase has none
    comm_s_range: tuple[float, float] | None = None
    exposed_s_range: tuple[float, float] | None = None
    step_s_range: tuple[float, float] | None = None
    forward_s: float | None
    backward_s: float | None
    compute_s: float | None
    bubble_fraction: float
    bubble_s: float | None
    step_s: float | None


#: Megatron-LM's default rank order (tensor parallel fastest).
DEFAULT_ORDER = "tp-cp-ep-dp-pp"


class TrainResult(BaseModel):
    """One training step's phases, totals, warnings and assumptions."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: TrainSpec
    nodes: int
    gpus_per_node: int
    sites: int
    #: The WAN between sites: its link, links per site and one-way latency (None on one site)
    wan: str | None = None
    wan_links: int | None = None
    wan_latency_s: float | None = None
    microbatches: int
    seq_len: int | None  # None: neither given nor needed (no tp, pp, ep, cp or --tflops)
    phases: list[Phase]
    totals: TrainTotals
    memory: TrainMemory
    warnings: list[str]
    assumptions: list[str]
    #: How ranks are numbered: Megatron-LM's default, or with data parallelism outermost
    #: (``--use-tp-pp-dp-mapping``) where the default's groups do not place
    rank_order: str = DEFAULT_ORDER


#: The fields :func:`_train_step_in` gives a result (``model_fields_set``): every one but the
#: rank order, left at its default
_RESULT_GIVEN = frozenset(name for name in TrainResult.model_fields if name != "rank_order")


def _gpus_per_node(catalogue: Catalogue, spec: ClusterSpec) -> int:
    if spec.gpus_per_node is not None:
        return spec.gpus_per_node
    if spec.system is not None:
        return find_system(catalogue, spec.system).gpus_per_node
    probe = resolve_cluster(
        catalogue, spec.replace(nodes=None, sites=1, wan=None, wan_links=1, wan_latency_s=None)
    )
    return probe.gpus_per_node


def _training_cluster(catalogue: Catalogue, spec: ClusterSpec) -> ResolvedCluster:
    """``spec`` resolved to cost collectives; one GPU is refused in training's words (it had
    been told 'a collective needs at least 2 GPUs', a collective nobody asked for)."""
    try:
        return resolve_cluster(catalogue, spec)
    except ClusterError:
        if resolve_cluster(catalogue, spec, collectives=False).ranks >= 2:
            raise
        raise WorkloadError(
            "one GPU exchanges nothing, and a training step is costed by what its GPUs "
            "exchange: give 2 GPUs or more ({nodes}, {gpus_per_node}); ibcalc infer and ibcalc "
            "checkpoint take one GPU",
            field="nodes",
        ) from None


def fit_cluster(
    catalogue: Catalogue,
    spec: ClusterSpec,
    *,
    tp: int = 1,
    pp: int = 1,
    dp: int | None = None,
    ep: int = 1,
    cp: int = 1,
) -> tuple[ResolvedCluster, Parallelism]:
    """Resolve ``spec`` for a job of tp x cp x pp x dp GPUs, filling whichever is missing.

    Without ``nodes`` the cluster gets world / GPUs-per-node nodes; without ``dp`` the job gets
    the cluster's GPUs / (tp x cp x pp); with both, they must agree.
    """
    expect_catalogue_and_spec(catalogue, spec)
    # the degrees checked as a layout's are, before any arithmetic with them (tp 0 had raised
    # ZeroDivisionError, dp 0 an error naming nodes: a library user's review)
    checked = Parallelism(tp=tp, pp=pp, dp=1 if dp is None else dp, ep=ep, cp=cp)
    tp, pp, ep, cp = checked.tp, checked.pp, checked.ep, checked.cp
    dp = None if dp is None else checked.dp
    model_par = tp * cp * pp
    filled = False
    if dp is None and spec.nodes is None:
        # neither given: the smallest job of whole nodes
        gpn = _gpus_per_node(catalogue, spec)
        nodes = -(-model_par // gpn)
        if (nodes * gpn) % model_par:
            raise WorkloadError(
                f"tp x cp x pp = {model_par} does not divide {nodes} x {gpn} GPUs; give {{dp}} "
                "or {nodes}",
                field="dp",
            )
        dp = nodes * gpn // model_par
        filled = True
    if dp is not None:
        world = model_par * dp
        if spec.nodes is None:
            gpn = _gpus_per_node(catalogue, spec)
            if world % gpn:
                raise WorkloadError(
                    f"tp x cp x pp x dp = {world} GPUs do not fill whole {gpn}-GPU nodes; "
                    "give {gpus_per_node} or {nodes}",
                    field="dp",
                )
            spec = spec.replace(nodes=world // gpn)
        cluster = _training_cluster(catalogue, spec)
        if cluster.ranks != world:
            raise WorkloadError(
                f"tp x cp x pp x dp = {tp} x {cp} x {pp} x {dp} = {world} GPUs, but the cluster "
                f"has {plural(cluster.nodes, 'node')} x {cluster.gpus_per_node} = "
                f"{cluster.ranks}; "
                "change {dp} or {nodes}",
                field="dp",
            )
    else:
        cluster = _training_cluster(catalogue, spec)
        if cluster.ranks % model_par:
            raise WorkloadError(
                f"{cluster.ranks} GPUs are not a multiple of tp x cp x pp = {tp} x {cp} x {pp} "
                f"= {model_par}",
                field="tp",
            )
        dp = cluster.ranks // model_par
    if filled:
        cluster = dataclasses.replace(
            cluster,
            assumptions=(
                f"dp {dp} assumed: the smallest job of whole nodes ({{dp}}, {{nodes}})",
                *cluster.assumptions,
            ),
        )
    return cluster, Parallelism(tp=tp, pp=pp, dp=dp, ep=ep, cp=cp)


class _Group(NamedTuple):
    """The ranks of one parallel dimension: ``size`` GPUs ``stride`` apart (``name`` for the
    placement's notes); ``across_sites`` when the group spans the sites; ``stages`` for the
    send/receive pair of a pipeline of that many stages (placed by its slowest boundary). A
    named tuple: a layout search looks its groups up in dicts tens of thousands of times."""

    name: str
    size: int
    stride: int
    across_sites: bool = False
    stages: int | None = None
    #: the pipeline's last stage sends to its first (interleaved 1F1B: chunk k pp - 1 to k pp)
    wraps: bool = False
    #: what the notes call the group, where not ``name`` (the field at fault in a refusal)
    label: str | None = None


class _Builder:
    """Collects phases and notes for one step (keeps :func:`train_step` readable)."""

    def __init__(
        self,
        catalogue: Catalogue,
        cluster: ResolvedCluster,
        spec: TrainSpec,
        params: CostParams | None,
        *,
        quick: bool = False,
        shared: _Shared | None = None,
    ) -> None:
        self.cat = catalogue
        self.cluster = cluster
        self.spec = spec
        self.params = params
        self.quick = quick
        #: what a layout search works out once for all its layouts
        self.shared = _Shared() if shared is None else shared
        #: each phase, or the fields of one still to be built, with its compute window
        self.phases: list[tuple[Phase | dict[str, Any], str | None]] = []
        #: ranks in the order tp-pp-dp (data parallelism outermost), not tp-cp-ep-dp-pp
        self.dp_last = False
        self.warnings: list[str] = []
        self.notes: list[str] = []
        #: each all-reduce across the network: its phase, algorithm, protocol and type
        self.reduced_across: list[tuple[str, Algorithm, Protocol, DType]] = []

    def add(
        self,
        group: _Group,
        name: str,
        collective: Collective,
        size_bytes: float,
        *,
        dtype: DType,
        count: int,
        notes: list[str] | None = None,
    ) -> Phase:
        """Cost ``count`` x ``collective`` of ``size_bytes`` over ``group``, exposed in full.

        Built once per search: the layouts of one (tp, pp, dp) that differ in ep alone, and a
        layout priced in both rank orders, share their TP and pipeline phases."""
        key = (group, name, collective, size_bytes, dtype, count, tuple(notes or ()))
        added = self.shared.exposed.get(key)
        if added is None:
            mark = len(self.reduced_across)
            fields = self._fields(
                group,
                name,
                collective,
                size_bytes,
                dtype=dtype,
                count=count,
                window=None,
                notes=notes,
            )
            added = _Added(trusted_phase(fields), tuple(self.reduced_across[mark:]))
            self.shared.exposed[key] = added
        else:
            self.reduced_across += added.across
        self.phases.append((added.phase, None))
        return added.phase

    def add_hidden(
        self,
        group: _Group,
        name: str,
        collective: Collective,
        size_bytes: float,
        *,
        dtype: DType,
        count: int,
        window: str,
        notes: list[str] | None = None,
    ) -> None:
        """As :meth:`add`, for a collective that may hide under the compute ``window``: its
        phase is built by :func:`_apply_overlap`, once the window's exposed time is known."""
        fields = self._fields(
            group,
            name,
            collective,
            size_bytes,
            dtype=dtype,
            count=count,
            window=window,
            notes=notes,
        )
        self.phases.append((fields, window))

    def place(self, group: _Group) -> Placement:
        """Where ``group`` runs: placed once per cluster (:func:`_placed`), looked up at once
        where this search asked before; a group that cannot be placed raises its
        :class:`~ibcalc.errors.WorkloadError` each time it is asked."""
        placed = self.shared.placements.get(group)
        if placed is None:
            cat, cluster = self.cat, self.cluster
            placed = self.shared.placements[group] = _PLACED.get(
                (id(cat), id(cluster), group),
                (cat, cluster),
                functools.partial(_placed, cat, cluster, group),
            )
        if isinstance(placed, WorkloadError):
            raise WorkloadError(placed.template, field=placed.field, value=placed.value)
        return placed

    def _fields(
        self,
        group: _Group,
        name: str,
        collective: Collective,
        size_bytes: float,
        *,
        dtype: DType,
        count: int,
        window: str | None,
        notes: list[str] | None,
    ) -> dict[str, Any]:
        placement = self.place(group)
        costed = None
        if self.quick:
            try:
                costed = self.cost(self._plan(group, placement, collective, dtype), size_bytes)
            except SizeTooSmallError as exc:
                raise too_small(name, exc) from None
        fields = phase_fields(
            placement,
            name,
            collective,
            size_bytes,
            dtype=dtype,
            count=count,
            exposed=window is None,
            overlaps=window,
            params=self.params,
            notes=notes,
            quick=self.quick,
            costed=costed,
        )
        if collective is _ALL_REDUCE and placement.tier != "scale-up":
            # what runs it, in either mode (a search's quick phases keep no estimate, and the
            # SHARP note had gone unsaid there: review CR)
            best = costed[0] if costed is not None else fields["estimate"].best
            self.reduced_across.append((name, best.algorithm, best.protocol, dtype))
        return fields

    def time_s(
        self, group: _Group, collective: Collective, size_bytes: float, dtype: DType
    ) -> float:
        """What nccl-tests would time for one ``collective`` of ``size_bytes`` over ``group``
        (its quick cost, shared by the search; looked up at once where asked before: a MoE
        layout asks it of each pipeline stage that may gate its gradient exchange)."""
        key = (group, collective, size_bytes, dtype)
        time = self.shared.times.get(key)
        if time is None:
            plan = self._plan(group, self.place(group), collective, dtype)
            costed = self.shared.costs.get((id(plan), size_bytes))
            if costed is not None:
                time = costed[0].time_s
            else:
                # the time alone, without its likely range (two thirds of a quick cost): a
                # stage that does not gate the exchange needs no range (a tenth of a search's
                # quick costs); kept for cost() if a phase asks the range after all
                quick = self.shared.quick[(id(plan), size_bytes)] = plan.quick(size_bytes)
                time = quick.time_s
            self.shared.times[key] = time
        return time

    def cost(self, plan: CollectivePlan, size_bytes: float) -> QuickCost:
        """:func:`quick_cost` of ``plan`` at ``size_bytes``, worked out once per search (its
        layouts share many: groups of one shape share a sub-cluster, and so a plan)."""
        key = (id(plan), size_bytes)
        costed = self.shared.costs.get(key)
        if costed is None:
            quick = self.shared.quick.pop(key, None)
            costed = self.shared.costs[key] = (
                quick_cost(plan, size_bytes) if quick is None else quick_range(plan, quick)
            )
        return costed

    def _plan(
        self, group: _Group, placement: Placement, collective: Collective, dtype: DType
    ) -> CollectivePlan:
        key = (group, collective, dtype)
        plan = self.shared.plans.get(key)
        if plan is None:
            plan = self.shared.plans[key] = _plan_on(
                placement.cluster, collective, dtype, self.params
            )
        return plan


def _placed(
    catalogue: Catalogue, cluster: ResolvedCluster, group: _Group
) -> Placement | WorkloadError:
    """Where ``group`` runs on ``cluster``, or the refusal to place it there (returned, for
    :meth:`_Builder.place` to raise)."""
    # the job holds the whole cluster: one that fits in a domain (18 GB200 trays of an NVL72
    # rack) has no group meeting a domain's edge, whatever its shape
    span = cluster.ranks
    try:
        if group.stages is not None:
            return place_pipeline(
                catalogue, cluster, group.stages, group.stride, span=span, wraps=group.wraps
            )
        return place_group(
            catalogue,
            cluster,
            group.name,
            group.size,
            group.stride,
            across_sites=group.across_sites,
            span=span,
            label=group.label,
        )
    except WorkloadError as exc:
        # kept without its traceback, whose frames hold the search that first asked (its
        # layouts' results included) for as long as the memo keeps the refusal: what
        # :meth:`_Builder.place` raises again takes the template, fields and values alone
        return WorkloadError(exc.template, field=exc.field, value=exc.value, others=exc.others)


#: :func:`_placed` by (catalogue, cluster) identity and group: the searches on one cluster (one
#: for each model) place the same groups, and a search asks again of a group it could not place
#: for each layout that has it; the benchmark's 60 searches on 12 clusters place 1,809 (158 of
#: them refused)
_PLACED: IdentityMemo[Placement | WorkloadError] = IdentityMemo(size=8192)

_PLANS: IdentityMemo[CollectivePlan] = IdentityMemo()


def _plan_on(
    cluster: ResolvedCluster, collective: Collective, dtype: DType, params: CostParams | None
) -> CollectivePlan:
    """``CollectivePlan(cluster, collective, dtype=dtype, params=params)``, made once per cluster
    object and parameters object (placements share their sub-clusters between searches)."""
    return _PLANS.get(
        (id(cluster), collective, dtype, id(params)),
        (cluster, params),
        lambda: CollectivePlan(cluster, collective, dtype=dtype, params=params),
    )


class _Flops(NamedTuple):
    """A token's training FLOPs and the compute note's words for them (:func:`_flops`)."""

    per_token: float
    #: what the FLOPs per token count, and why (the note's closing parenthesis)
    counted: str
    why: str
    #: the TFLOP/s rate as the note writes it
    rate: str


#: What --hierarchical says on one site (a single run among its notes, a search once).
HIERARCHICAL_ONE_SITE = "{hierarchical} applies across sites only; one site: flat collectives"


class _Added(NamedTuple):
    """A phase exposed in full (:meth:`_Builder.add`) and what it adds to the all-reduces
    across the network (:attr:`_Builder.reduced_across`)."""

    phase: Phase
    across: tuple[tuple[str, Algorithm, Protocol, DType], ...]


@dataclasses.dataclass
class _Shared:
    """What the layouts of one search (one cluster, one job) work out once: each group's
    placement (or the refusal to place it), the plan of each collective on it, each plan's quick
    cost at each size, each phase exposed in full, the plan of each TP collective inside one
    domain, what follows from the model alone, and the notes layouts share."""

    placements: dict[_Group, Placement | WorkloadError] = dataclasses.field(default_factory=dict)
    plans: dict[tuple[_Group, Collective, DType], CollectivePlan] = dataclasses.field(
        default_factory=dict
    )
    inside: dict[tuple[int, Collective], CollectivePlan] = dataclasses.field(default_factory=dict)
    #: each plan's quick cost at a size, by the plan's identity (``plans`` and ``inside`` keep
    #: every plan alive for the search): equal plans of two groups compare by value, cluster
    #: and all, which a look-up had paid for at every collision of their hashes
    costs: dict[tuple[int, float], QuickCost] = dataclasses.field(default_factory=dict)
    #: each plan's quick numbers at a size :meth:`_Builder.time_s` asked, whose range no phase
    #: has asked yet
    quick: dict[tuple[int, float], QuickEstimate] = dataclasses.field(default_factory=dict)
    #: :meth:`_Builder.time_s` by its arguments
    times: dict[tuple[_Group, Collective, float, DType], float] = dataclasses.field(
        default_factory=dict
    )
    #: each phase exposed in full, by :meth:`_Builder.add`'s arguments; the TP warning of each
    #: such phase (and sequence parallelism's second), by their identities
    exposed: dict[tuple[Any, ...], _Added] = dataclasses.field(default_factory=dict)
    tp_warnings: dict[tuple[int, int], tuple[Phase, Phase | None, str]] = dataclasses.field(
        default_factory=dict
    )
    #: a step's compute and its notes by (tp, pp, cp, sequence length, M) (:func:`_compute`);
    #: the cluster's notes by what bears on them (:func:`_cluster_notes`)
    compute: dict[tuple[int, ...], tuple[float | None, float | None, tuple[str, ...]]] = (
        dataclasses.field(default_factory=dict)
    )
    cluster_notes: dict[tuple[Any, ...], list[str]] = dataclasses.field(default_factory=dict)
    #: of the job's model (one for every layout): its shape warnings, the MoE layers of each
    #: pipeline stage by (pp, virtual stages), and a token's FLOPs by (sequence length, TFLOP/s)
    shape_warnings: list[str] | None = None
    moe_stages: dict[tuple[int, int], list[int]] = dataclasses.field(default_factory=dict)
    flops: dict[tuple[int, float], _Flops] = dataclasses.field(default_factory=dict)
    #: a layout search (:func:`compare_layouts`): one --backward-time for every layout
    search: bool = False


def _per_stage(count: int, pp: int, what: str, notes: list[str]) -> int:
    if count % pp:
        note = (
            f"{count} {what} do not split evenly over {pp} pipeline stages: the busiest stage's "
            f"{math.ceil(count / pp)} are costed"
        )
        if note not in notes:  # TP and CP both ask (the JSON had it twice)
            notes.append(note)
    return math.ceil(count / pp)


def _moe_per_stage(
    model: ModelSpec, pp: int, virtual: int, notes: list[str], shared: _Shared
) -> int:
    """MoE layers of the pipeline stage that holds the most of them. A model's dense layers come
    first (:func:`~ibcalc.workload.memory.stage_layers`, as its memory is counted), so the
    busiest stage is not always ``ceil(moe / pp)``: DeepSeek-V3's 3 dense and 58 MoE layers over
    4 stages are 3 + 13, 16, 16 and 13, and its expert all-to-alls run 16 times a micro-batch,
    not 15 (review BV; at pp 2, 30 and not 29, which no note had said)."""
    count = model.moe_layer_count()
    if pp == 1 or model.layers is None or model.moe_layers is None:
        return _per_stage(count, pp, "MoE layers", notes)
    per_stage = shared.moe_stages.get((pp, virtual))
    if per_stage is None:  # once per pipeline shape of a search
        per_stage = [stage_layers(model, pp, k, virtual)[1] for k in range(pp)]
        shared.moe_stages[(pp, virtual)] = per_stage
    busiest = max(per_stage)
    if busiest * pp != count:
        note = (
            f"{count} MoE layers over {pp} pipeline stages, the model's "
            f"{model.layers - count} dense layers first: the busiest stage's {busiest} are "
            f"costed (stage {per_stage.index(busiest) + 1} of {pp}; each phase is priced on the "
            "stage that holds the most of its layers)"
        )
        if note not in notes:
            notes.append(note)
    return busiest


def _check(spec: TrainSpec, cluster: ResolvedCluster, warnings: list[str], shared: _Shared) -> None:
    par, model = spec.parallel, spec.model
    tp, pp, dp, ep = par.tp, par.pp, par.dp, par.ep
    if par.world != cluster.ranks:
        raise WorkloadError(
            f"the layout {par.label} needs {par.world} GPUs; the cluster has {cluster.ranks}",
            field="dp",
        )
    model.check_stages(pp)
    # refused, not warned of: Megatron-LM refuses it, and --compare leaves such a tp out (a
    # single run had priced tp 128 on Llama 3 70B's 64 heads, each GPU half a head)
    model.check_heads(tp)
    sites = cluster.topology.sites
    # dp in words: derived from the GPUs when not given, a flag would name what the caller
    # never gave ('--dp 3' over 2 sites; a review)
    dp_words = f"the data-parallel degree, dp = {dp} = GPUs / (tp x cp x pp)"
    if dp % sites:
        raise WorkloadError(
            f"{dp_words}, cannot be split over {sites} sites: each site holds dp / sites whole "
            "replicas",
            field="dp",
        )
    model.check_experts(ep)
    if dp % ep:
        raise WorkloadError(
            f"{{ep}} {ep} must divide {dp_words} (expert groups are carved out of the "
            "data-parallel ranks)",
            field="ep",
            value=str(ep),
        )
    if sites > 1 and (dp // sites) % ep:
        # an expert group holds ep data-parallel ranks, and a site only dp / sites of them:
        # placed in one site regardless, its all-to-all had been priced on the site's fabric
        # while crossing the WAN (Mixtral, ep 8 over 8 sites of one node: 2.8 ms a call)
        raise WorkloadError(
            f"{{ep}} {ep} must divide the data-parallel ranks each site holds, dp / sites = "
            f"{dp} / {sites} = {dp // sites}: expert groups stay inside a site, and only "
            "data-parallel groups cross the WAN",
            field="ep",
            value=str(ep),
        )
    warnings.extend(model.tp_warnings(tp))
    if shared.shape_warnings is None:  # the model's, the same for every layout of a search
        shared.shape_warnings = model.shape_warnings()
    warnings.extend(shared.shape_warnings)
    v = spec.virtual_stages
    if v > 1:
        if pp == 1:
            raise WorkloadError(
                f"{{virtual_stages}} {v} interleaves pipeline stages: it needs {{pp}} above 1",
                field="virtual_stages",
                value=str(v),
            )
        layers = model.need("layers", "interleaved pipeline stages")
        if layers % (pp * v):
            # Megatron-LM splits the layers into pp x v model chunks of equal size
            raise WorkloadError(
                f"{{virtual_stages}} {v} with {{pp}} {pp} splits the model into "
                f"{pp * v} chunks of equal layers; its {layers} layers do not divide "
                "into them",
                field="virtual_stages",
                value=str(v),
                others={"pp": str(pp)},
            )


def _microbatches(spec: TrainSpec, notes: list[str]) -> int:
    """M, the micro-batches each data-parallel rank runs per step: ``--microbatches``, else
    ``global_batch / (dp x micro_batch)``, else pp (one per stage, the fewest that fill the
    pipeline once)."""
    par = spec.parallel
    # read once each (a search asks this of every layout; pydantic's loads are not specialised)
    global_batch, micro_batch = spec.global_batch, spec.micro_batch
    if global_batch is not None:
        dp = par.dp
        per_pass = dp * micro_batch
        m, rest = divmod(global_batch, per_pass)
        if rest or m < 1:
            raise WorkloadError(
                f"{{global_batch}} {global_batch:,} is not a multiple of dp x "
                f"{{micro_batch}} = {dp} x {micro_batch} = {per_pass:,} sequences",
                field="global_batch",
                value=f"{global_batch:,}",
            )
        if spec.microbatches is not None and spec.microbatches != m:
            raise WorkloadError(
                f"{{microbatches}} {spec.microbatches} contradicts {{global_batch}} "
                f"{global_batch:,}, which gives {global_batch:,} / ({dp} x "
                f"{micro_batch}) = {plural(m, 'micro-batch')} per step: give one of them",
                field="microbatches",
                value=str(spec.microbatches),
                others={"global_batch": f"{global_batch:,}"},
            )
        notes.append(
            f"{plural(m, 'micro-batch')} per step: {{global_batch}} {global_batch:,} sequences / "
            f"(dp {dp} x {{micro_batch}} {micro_batch})"
        )
        return m
    if spec.microbatches is not None:
        return spec.microbatches
    if par.pp > 1:
        notes.append(
            f"{par.pp} micro-batches per step assumed (= pp; the pipeline bubble, (pp - 1) / M "
            "of compute, shrinks with more; {microbatches} or {global_batch} to change)"
        )
        return par.pp
    return 1


def train_step(
    catalogue: Catalogue,
    cluster: ResolvedCluster,
    spec: TrainSpec,
    *,
    params: CostParams | None = None,
    quick: bool = False,
) -> TrainResult:
    """The communication of one training step of ``spec`` on ``cluster`` (docs/workload.md).

    ``cluster`` must hold exactly tp x cp x pp x dp GPUs (:func:`fit_cluster` makes one).
    Raises :class:`~ibcalc.errors.WorkloadError` naming the field at fault. ``quick`` leaves
    each phase's ``estimate`` None (every number, warning and note is the same; see
    :func:`~ibcalc.workload.phases.build_phase`).
    """
    require_collectives(cluster)
    expect_job(catalogue, spec, TrainSpec)
    result = _train_step(catalogue, cluster, spec, params=params, quick=quick)
    return result.model_copy(
        update={"assumptions": [*result.assumptions, *cost_parameter_notes(params)]}
    )


#: Megatron-LM's rank order with data parallelism outermost (``--use-tp-pp-dp-mapping``:
#: "distributed ranks initialize order is changed from tp-cp-ep-dp-pp to tp-cp-ep-pp-dp").
DP_LAST = "tp-pp-dp"


def _train_step(
    catalogue: Catalogue,
    cluster: ResolvedCluster,
    spec: TrainSpec,
    *,
    params: CostParams | None,
    quick: bool,
    shared: _Shared | None = None,
) -> TrainResult:
    """:func:`train_step` in Megatron-LM's default rank order (tp-cp-ep-dp-pp); where its groups
    straddle the scale-up domains, in the order with data parallelism outermost (tp-pp-dp),
    which Megatron-LM offers for that: tp 8 x pp 9 x dp 2 on two NVL72 racks had been refused
    ('dp groups of 2 ranks 8 apart span 16 ranks, which do not divide the 72-GPU scale-up
    domain') though each pipeline fills one rack. Where a scale-up domain spans several nodes
    (an NVL72 rack) and both orders place, the cheaper is priced: tp 1 pp 8 on two racks was
    1.6-6x cheaper with its pipelines on NVLink (a review). Only without expert, context or
    cross-site parallelism (not tried with them)."""
    par = spec.parallel
    eligible = par.ep == 1 and par.cp == 1 and cluster.topology.sites == 1
    eligible = eligible and par.pp > 1 and par.dp > 1

    def dp_last() -> TrainResult:
        return _train_step_in(
            catalogue, cluster, spec, params=params, quick=quick, shared=shared, dp_last=True
        )

    try:
        default = _train_step_in(
            catalogue, cluster, spec, params=params, quick=quick, shared=shared
        )
    except WorkloadError as exc:
        # where the order moves groups: a placement's refusal
        if exc.field not in ("dp", "pp") or not eligible:
            raise
        try:
            other = dp_last()
        except WorkloadError:
            raise exc from None
        return _in_dp_last(other, f"in the default {DEFAULT_ORDER} order {exc.render(str)}")
    if not eligible or cluster.topology.m <= cluster.gpus_per_node:
        return default
    try:
        other = dp_last()
    except WorkloadError:
        return default
    if _priced_s(other) >= _priced_s(default):
        return default
    return _in_dp_last(
        other,
        f"{format_time(_priced_s(other))} where the default {DEFAULT_ORDER} order takes "
        f"{format_time(_priced_s(default))}",
    )


def _in_dp_last(result: TrainResult, why: str) -> TrainResult:
    """``result`` (priced in the tp-pp-dp order) with the order said first among its
    assumptions, and why it was taken."""
    note = (
        f"ranks ordered {DP_LAST}, data parallelism outermost (Megatron-LM "
        f"--use-tp-pp-dp-mapping): {why}"
    )
    return result.model_copy(
        update={"assumptions": [note, *result.assumptions], "rank_order": DP_LAST}
    )


def _priced_s(result: TrainResult) -> float:
    """What a step is ranked by: its step time where the compute is known, else its exposed
    communication (as ``--compare`` ranks)."""
    totals = result.totals
    return totals.step_s if totals.step_s is not None else totals.exposed_s


def _train_step_in(
    catalogue: Catalogue,
    cluster: ResolvedCluster,
    spec: TrainSpec,
    *,
    params: CostParams | None,
    quick: bool,
    shared: _Shared | None = None,
    dp_last: bool = False,
) -> TrainResult:
    b = _Builder(catalogue, cluster, spec, params, quick=quick, shared=shared)
    b.dp_last = dp_last
    _check(spec, cluster, b.warnings, b.shared)
    par, model = spec.parallel, spec.model
    # the degrees read once (a pydantic model's attribute loads are not specialised: a search
    # reads them hundreds of thousands of times)
    tp, pp, dp, ep, cp = par.tp, par.pp, par.dp, par.ep, par.cp
    v, act_dtype, grad_dtype = spec.virtual_stages, spec.act_dtype, spec.grad_dtype
    sequence_parallel, recompute, tflops = spec.sequence_parallel, spec.recompute, spec.tflops
    sites = cluster.topology.sites
    dp_site = dp // sites
    m = _microbatches(spec, b.notes)
    if v > 1 and m < pp:
        # fewer micro-batches than stages leave the interleaved schedule's warm-up unfilled:
        # its bubble is no longer (pp - 1) / (v M), and Megatron-LM refuses such a step
        raise WorkloadError(
            f"{{virtual_stages}} {v} needs at least pp = {pp} "
            f"micro-batches per step, not {m}: the interleaved schedule runs them in groups "
            "of pp",
            field="virtual_stages",
            value=str(v),
        )
    needs_shape = tp > 1 or pp > 1 or ep > 1 or cp > 1
    seq = spec.seq_len if spec.seq_len is not None else model.seq_len
    known_seq = seq
    if seq is not None:
        b.warnings.extend(model.context_warnings(seq))
    if seq is None:
        if needs_shape or tflops is not None:
            raise WorkloadError(
                "tensor, pipeline, expert or context parallelism (and {tflops}) need the "
                "sequence length ({seq_len})",
                field="seq_len",
            )
        seq = 1
    elif spec.seq_len is None:
        b.notes.append(f"sequence length {seq} from {model.label} ({{seq_len}} to change)")
    if seq % cp:
        raise WorkloadError(
            f"{{seq_len}} {seq} does not split over {{cp}} {cp}",
            field="cp",
            others={"seq_len": str(seq), "cp": str(cp)},
        )
    s_local = seq // cp
    if sequence_parallel and tp > 1 and s_local % tp:
        # Megatron's sequence parallelism splits each rank's sequence over the tp group
        # (Korthikanti et al., arXiv:2205.05198, section 4.2.2)
        raise WorkloadError(
            f"{{seq_len}} {seq} does not split over {{tp}} {tp} for sequence parallelism"
            + (f" ({s_local} tokens per context-parallel rank)" if cp > 1 else ""),
            field="seq_len",
            value=str(seq),
            others={"tp": str(tp)},
        )
    if sequence_parallel and tp == 1:
        b.notes.append(
            "sequence parallelism changes nothing with tp 1: it splits each sequence over the "
            "tp group ({sequence_parallel})"
        )
    act = act_dtype.bytes
    mb = spec.micro_batch
    # full recompute runs each layer's forward again in the backward pass, its collectives with
    # it (Korthikanti et al. 2022, arXiv:2205.05198, section 5: an extra forward pass)
    forwards = 2 if recompute is _FULL else 1

    forward_s, backward_s = _compute(spec, seq=seq, m=m, notes=b.notes, shared=b.shared)
    if tflops is not None:
        system = cluster.system
        peak = system.gpu_peak_tflops if system is not None else None
        if system is not None and peak is not None:
            fp8 = act_dtype.is_fp8 and system.gpu_arch in FP8_ARCHS
            full = recompute is _FULL
            said = _against_peak(tflops, peak, system.id, fp8=fp8, recompute=full)
            (b.warnings if said[0] else b.notes).append(said[1])
        else:
            # said as the memory fit is (a review: 4,000 TFLOP/s on an H20 had passed silently)
            b.notes.append(
                "{tflops} not judged against a GPU peak: "
                + (
                    f"{system.id} states none (a --catalogue file's gpu_peak_tflops gives one)"
                    if system is not None
                    else "no system preset states the GPUs' peak (give --system a preset "
                    "that states one; a --catalogue file's for a node of your own)"
                )
            )
    tp_group = _Group("tp", tp, 1)
    if tp > 1:
        # the innermost group first: when its groups straddle the domains, it is the one to name
        b.place(tp_group)
    _dp_phases(b, sites=sites, dp_site=dp_site, m=m)

    if tp > 1:
        hidden = model.need("hidden", "tensor parallelism")
        layers = _per_stage(model.need("layers", "tensor parallelism"), pp, "layers", b.notes)
        size = float(mb * s_local * hidden * act)
        count = (2 * forwards + 2) * layers * m
        dtype = act_dtype
        if sequence_parallel:
            # Megatron-LM keeps only each rank's shard of a column-parallel linear's input (QKV,
            # FC1) and all-gathers it again in the backward pass for the weight gradient
            # (tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication;
            # Korthikanti et al. 2022, section 4.2.2): 2 more all-gathers a layer, priced
            # exposed as all TP traffic is, though Megatron-LM overlaps them with the GEMM
            gathers = count + 2 * layers * m
            first = b.add(
                tp_group,
                "tp-allgather",
                Collective.ALL_GATHER,
                size,
                dtype=dtype,
                count=gathers,
                notes=[
                    f"{gathers // (layers * m)} a layer: {2 * forwards} in the forward pass"
                    + (" and its recomputation" if forwards > 1 else "")
                    + ", 2 in the backward pass (the reduce-scatters' gradients) and 2 that "
                    "gather the column-parallel inputs again for the weight gradients "
                    "(Megatron-LM keeps only each rank's shard; it overlaps these with the "
                    "GEMM, not credited here)"
                ],
            )
            second = b.add(
                tp_group,
                "tp-reducescatter",
                Collective.REDUCE_SCATTER,
                size,
                dtype=dtype,
                count=count,
            )
            _tp_warning(b, first, size, second)
        else:
            first = b.add(
                tp_group, "tp-allreduce", Collective.ALL_REDUCE, size, dtype=dtype, count=count
            )
            _tp_warning(b, first, size)
    if cp > 1:
        layers = _per_stage(model.need("layers", "context parallelism"), pp, "layers", b.notes)
        kv = model.kv_elements("context parallelism's all-gather of keys and values")
        # each TP rank gathers the keys and values it holds: its share of the KV heads, whole
        # past kv_heads ranks and for a latent (MLA) cache
        size = float(mb * seq * kv * act) / model.kv_split(tp)
        if model.kv_elements_per_layer is not None:
            b.notes.append(
                f"context parallelism with a latent KV cache: the {kv}-element latent per token "
                "is all-gathered whole on every TP rank (an implementation that gathers the "
                "up-projected keys and values moves more)"
            )
        for name, coll, passes in (
            ("cp-allgather-kv", Collective.ALL_GATHER, forwards),
            ("cp-reducescatter-kv", Collective.REDUCE_SCATTER, 1),
        ):
            b.add(
                _Group("cp", cp, tp),
                name,
                coll,
                size,
                dtype=act_dtype,
                count=passes * layers * m,
            )
    if ep > 1:
        hidden = model.need("hidden", "expert parallelism")
        top_k = model.need("top_k", "expert parallelism")
        moe = _moe_per_stage(model, pp, v, b.notes, b.shared)
        tokens = mb * s_local // (tp if sequence_parallel else 1)
        size = float(tokens * top_k * hidden * act)
        if tp > 1 and not sequence_parallel:
            # Megatron-Core's TransformerConfig refuses MoE with tensor parallelism unless
            # sequence parallelism is on: without it every TP rank holds the same tokens
            b.warnings.append(
                f"ep with tp {tp} and no {{sequence_parallel}}: every TP rank dispatches the "
                f"same {tokens} tokens, so the all-to-all is priced at {tp}x the tokens "
                "each needs (Megatron-Core requires sequence parallelism for MoE with TP)"
            )
        b.add(
            _Group("ep", ep, tp * cp),
            "ep-alltoall",
            Collective.ALL_TO_ALL,
            size,
            dtype=act_dtype,
            count=(2 * forwards + 2) * moe * m,
            notes=[
                "dispatch and combine forward, and both again backward"
                + (" and in the recomputed forward" if forwards > 1 else "")
                + ", per MoE layer",
                # review BV: nothing had said the routing was taken as even
                f"routing taken as balanced: each GPU sends {top_k} x its tokens / {ep} to "
                "each expert rank, no capacity factor or imbalance (the busiest rank sets a real "
                "step's time)",
            ],
        )
    if pp > 1:
        hidden = model.need("hidden", "pipeline parallelism")
        size = float(mb * s_local * hidden * act) / tp
        slots = v * m + pp - 1
        if v == 1:
            how = (
                f"activations forward and their gradients backward: 2 x (M + pp - 1) = "
                f"{2 * slots} on the step's critical path, one each way per micro-batch plus "
                f"{pp - 1} each way for the 1F1B fill and drain (the slots the bubble adds)"
            )
        else:
            how = (
                f"activations forward and their gradients backward: 2 x (v x M + pp - 1) = "
                f"{2 * slots} on the step's critical path, one each way per micro-batch and "
                f"model chunk ({v} per stage, interleaved) plus {pp - 1} each way for the "
                "fill and drain"
            )
        b.add(
            _Group(
                "pp",
                2,
                tp * cp * (1 if b.dp_last else dp_site),
                stages=pp,
                wraps=v > 1,
            ),
            "pp-sendrecv",
            Collective.SEND_RECV,
            size,
            dtype=act_dtype,
            count=2 * slots,
            notes=[how],
        )
        if v > 1 and m % pp:
            b.warnings.append(
                f"{{virtual_stages}} {v} with {m} micro-batches per step (at least pp), not a "
                "multiple of "
                f"{{pp}} {pp}: Megatron-LM's interleaved schedule takes micro-batches in "
                "groups of pp (its schedules.py has refused other counts); the bubble is costed "
                "as if they divided"
            )

    phases, comm, exposed, comm_range, exposed_range = _apply_overlap(
        b.phases, _windows(forward_s, backward_s, m)
    )
    # 1F1B: (pp - 1) / M; interleaved, each stage's v chunks shrink the fill and drain v-fold
    bubble = (pp - 1) / (v * m) if pp > 1 else 0.0
    compute = forward_s + backward_s if forward_s is not None and backward_s is not None else None
    bubble_s = bubble * compute if compute is not None else None
    step = compute + (bubble_s or 0.0) + exposed if compute is not None else None
    step_range = (
        None
        if compute is None or exposed_range is None
        else (
            compute + (bubble_s or 0.0) + exposed_range[0],
            compute + (bubble_s or 0.0) + exposed_range[1],
        )
    )
    if compute is None:
        b.notes.append(
            "no compute time given ({backward_s} or {tflops}): nothing is hidden, every "
            "collective counts as exposed"
        )
    elif exposed > compute:
        b.warnings.append(
            f"communication-bound: {format_time(exposed)} of exposed communication per step "
            f"against {format_time(compute)} of compute ({format_ratio(exposed / compute)})"
        )
    if grad_dtype.bytes < 2 and dp * cp < 2:
        b.notes.append(
            f"{{grad_dtype}} {grad_dtype.value} has no effect: dp x cp = 1, no gradient exchange"
        )
    elif grad_dtype.bytes < 2:
        b.notes.append(
            f"{grad_dtype.value} gradients: compressed before the exchange and summed in "
            "higher precision at each hop (1-bit Adam / ZeRO++ style), so the wire carries "
            f"{grad_dtype.bytes} byte per element, priced as an 8-bit integer sum (not "
            "NCCL's own fp8 reduction, whose long rings it penalises; no switch reduction); "
            "quantisation scales and compute ignored"
        )
    memory = _memory(spec, cluster, seq=known_seq, m=m, b=b)
    # built without validating again (ibcalc.trusted): each value is a float, tuple or list of
    # its own where the field is one, as validation would have made it
    totals = trusted(
        TrainTotals,
        {
            "comm_s": comm,
            "exposed_s": exposed,
            "comm_s_range": comm_range,
            "exposed_s_range": exposed_range,
            "step_s_range": step_range,
            "forward_s": forward_s,
            "backward_s": backward_s,
            "compute_s": compute,
            "bubble_fraction": bubble,
            "bubble_s": bubble_s,
            "step_s": step,
        },
    )
    wan = cluster.topology.wan
    return trusted(
        TrainResult,
        {
            "spec": spec,
            "nodes": cluster.nodes,
            "gpus_per_node": cluster.gpus_per_node,
            "sites": sites,
            "wan": wan.link_id if wan is not None else None,
            "wan_links": wan.nics_per_domain if wan is not None else None,
            "wan_latency_s": wan.transport_latency_s if wan is not None else None,
            "microbatches": m,
            "seq_len": known_seq,
            "phases": phases,
            "totals": totals,
            "memory": memory,
            "warnings": b.warnings,
            "assumptions": [
                *b.notes,
                *_cluster_notes(
                    cluster,
                    phases,
                    b.reduced_across,
                    b.params,
                    grad=grad_dtype,
                    shared=b.shared,
                ),
            ],
            "rank_order": DEFAULT_ORDER,
        },
        _RESULT_GIVEN,
    )


def _memory(
    spec: TrainSpec, cluster: ResolvedCluster, *, seq: int | None, m: int, b: _Builder
) -> TrainMemory:
    """The layout's memory per GPU against the GPU's: a warning where it does not fit or is
    tight, a note where the GPU's memory is not known."""
    capacity, source = gpu_capacity(spec.gpu_memory_bytes, cluster.system)
    if (note := decimal_capacity_note(spec.gpu_memory_bytes)) is not None:
        b.notes.append(note)
    memory = train_memory(
        spec,
        seq=seq,
        microbatches=m,
        capacity_bytes=capacity,
        capacity_from=source,
        notes=b.notes,
    )
    if capacity is None and cluster.system is not None:
        memory.largest_bytes = cluster.system.gpu_memory_largest_bytes
    judge_fit(
        memory,
        cluster.system,
        remedies=lambda: _memory_remedies(spec, memory),
        uncounted="CUDA context, NCCL buffers, fragmentation"
        + (", the logits" if spec.model.vocab is None else ""),
        warnings=b.warnings,
        notes=b.notes,
    )
    return memory


_ROOM_RANK = {"unknown": 0, "room": 0, "tight": 1, "out of memory": 2}


def _memory_rank(memory: TrainMemory) -> int:
    """0 with room (or not known), 1 tight, 2 out of memory: the first key of a ranking."""
    return _ROOM_RANK[memory.room]


def _memory_remedies(spec: TrainSpec, memory: TrainMemory) -> str:
    """What would shrink a layout's memory, of what it does not use yet."""
    par = spec.parallel
    more = "more tp or pp"
    if memory.activations_bytes is not None and memory.stage == 0 and par.pp > 1:
        # 1F1B: the first stage holds pp micro-batches of L / pp layers, whatever pp is
        more += " (pp splits the model states, not the first stage's activations)"
    ways = [more]
    if spec.zero < 3 and par.dp * par.cp > 1:
        ways.append("a higher {zero} stage")
    if par.tp > 1 and not spec.sequence_parallel:
        ways.append("{sequence_parallel}")
    if spec.recompute is not Recompute.FULL and memory.activations_bytes is not None:
        ways.append("{recompute} full")
    if spec.micro_batch > 1 and memory.activations_bytes is not None:
        # activations grow with the micro-batch: at 2 they are twice those at 1 (a review: the
        # most direct remedy had not been named, where infer names a smaller --batch)
        ways.append("a smaller {micro_batch} (activations grow with it)")
    if spec.virtual_stages > 1 and memory.activations_bytes is not None and memory.stage == 0:
        # interleaving holds pp (1 + (pp - 1) / (pp v)) micro-batches on the first stage
        ways.append("fewer {virtual_stages}")
    seq = spec.seq_len if spec.seq_len is not None else spec.model.seq_len
    if (
        par.cp == 1
        and seq is not None
        and seq % 2 == 0  # a sequence no cp >= 2 divides cannot be split (32,767 tokens)
        and memory.activations_bytes is not None
        and memory.activations_bytes > memory.total_bytes / 2
    ):
        # long sequences: context parallelism splits them, and their activations, over cp GPUs
        # (Llama 3 trains 128K context with cp 16, arXiv:2407.21783 section 3.3.2)
        ways.append("{cp} (it splits each sequence and its activations)")
    if len(ways) == 1:
        return f"{ways[0]} would shrink it"
    return ", ".join(ways[:-1]) + " or " + ways[-1] + " would shrink it"


def _cluster_notes(
    cluster: ResolvedCluster,
    phases: Sequence[Phase],
    across: Sequence[tuple[str, Algorithm, Protocol, DType]],
    params: CostParams | None,
    *,
    grad: DType,
    shared: _Shared,
) -> list[str]:
    """The cluster's assumptions and what bears on the step's collectives: an all-to-all's
    (a torus's bisection, a partial mesh's pairs) only where a phase is one, a partial mesh's
    send/recv rate where a stage send runs on it (it had shown on a tp-only step, a review).
    The list is the search's (``shared``): read it, do not change it."""
    a2a = any(p.inside_a_node for p in phases if p.collective is _ALL_TO_ALL)
    p2p = any(p.collective is _SEND_RECV and p.tier == "scale-up" for p in phases)
    key = (a2a, p2p, tuple(across))
    said = shared.cluster_notes.get(key)
    if said is None:  # once per search for each set of them (a few)
        notes = [n for n in cluster.assumptions if a2a or n not in cluster.alltoall_notes]
        if p2p:
            notes += cluster.p2p_notes
        said = sharp_step_notes(cluster, notes, across, params, of="of the step", grad=grad)
        shared.cluster_notes[key] = said
    return said


def _compute(
    spec: TrainSpec, *, seq: int, m: int, notes: list[str], shared: _Shared
) -> tuple[float | None, float | None]:
    """Forward and backward compute per step per GPU, from --backward-time or --tflops, and its
    notes (added to ``notes``); once per search for each (tp, pp, cp, sequence length, M): the
    layouts that differ in ep alone, or in their rank order, share them."""
    par = spec.parallel
    key = (par.tp, par.pp, par.cp, seq, m)
    known = shared.compute.get(key)
    if known is None:
        said: list[str] = []
        forward, backward = _compute_times(spec, seq=seq, m=m, notes=said, shared=shared)
        known = shared.compute[key] = (forward, backward, tuple(said))
    notes.extend(known[2])
    return known[0], known[1]


def _compute_times(
    spec: TrainSpec, *, seq: int, m: int, notes: list[str], shared: _Shared
) -> tuple[float | None, float | None]:
    """:func:`_compute`, worked out."""
    model, par = spec.model, spec.parallel
    tp, pp, cp = par.tp, par.pp, par.cp
    full = spec.recompute is Recompute.FULL
    # 1F1B runs at the pace of its busiest stage: with layers that do not split evenly,
    # ceil(layers / pp) of them, not the average (80 over 36 stages: 3, not 2.2)
    busiest = None
    if pp > 1 and model.layers is not None and model.layers % pp:
        busiest = _per_stage(model.layers, pp, "layers", notes)
    if spec.backward_s is not None:
        backward = spec.backward_s
        uneven = ""
        if shared.search and busiest is not None and model.layers is not None:
            # one time for every layout of a search is read as the evenly split step's, as
            # --tflops prices it before this share: unscaled, it had dropped the busiest
            # stage's share that --tflops charges and ranked uneven pipelines ahead (review
            # CN); a single run's time is its own layout's, as measured (review CP)
            backward *= busiest * pp / model.layers
            uneven = (
                f", x {busiest} x {pp}/{model.layers} for the busiest stage's layers "
                f"({busiest} of {model.layers} on {pp} stages; for every layout of the "
                f"search the time given is read as an even split's) = {format_time(backward)}"
            )
        # with full recompute the measured backward holds a forward pass: 2 + 1 of its 3 parts
        forward = backward / (BACKWARD_OVER_FORWARD + (1 if full else 0))
        notes.append(
            f"backward compute {format_time(spec.backward_s, zeros=False)} per step given"
            f"{uneven}; forward taken as "
            + (
                "a third of it (backward ~ 2 x forward FLOPs, and full recompute runs the "
                "forward again): the time given is read as measured with full recompute, so "
                "its forward is shorter than the same time's without; to price turning full "
                "recompute on, give the backward time plus one forward"
                if full
                else "half of it (backward ~ 2 x forward FLOPs)"
            )
        )
        return forward, backward
    if spec.tflops is not None:
        tokens = spec.micro_batch * seq * m
        key = (seq, spec.tflops)
        flops_of = shared.flops.get(key)
        if flops_of is None:  # once a search: every layout's note has the same words
            flops_of = shared.flops[key] = _flops(model, seq, spec.tflops)
        share_text = "/ (tp x pp x cp)"
        stage_share = 1 / pp
        if busiest is not None and model.layers is not None:
            stage_share = busiest / model.layers
            share_text = (
                f"x {busiest}/{model.layers} of the layers (the busiest of {pp} stages) / (tp x cp)"
            )
        flops = flops_of.per_token * tokens * stage_share / (tp * cp)
        total = flops / (spec.tflops * 1e12)
        forward = total / (1 + BACKWARD_OVER_FORWARD)
        backward = total - forward + (forward if full else 0.0)
        notes.append(
            f"compute from {flops_of.counted} x {tokens} tokens per replica {share_text} at "
            f"{flops_of.rate} TFLOP/s per GPU"
            + (", x 8/6 (full recompute runs the forward again in the backward)" if full else "")
            + f" = {format_time(forward + backward)} per step ({flops_of.why})"
        )
        return forward, backward
    return None, None


def _flops(model: ModelSpec, seq: int, tflops: float) -> _Flops:
    """Training FLOPs per token of ``model`` at ``seq`` tokens of context (6 x the parameters a
    token multiplies with, and the attention's products), and the compute note's words for them
    and for the rate ``tflops``."""
    attention = model.attention_flops_per_token(seq)
    matmul = model.matmul_params
    per_token = FLOPS_PER_PARAM_TOKEN * matmul + (attention or 0.0)
    params_part = f"6 x {_about(matmul)} params"
    if matmul < model.flops_params:
        params_part += (
            f" ({_about(model.flops_params)} less the {_about(model.embedding_params)} "
            "input embedding, a lookup)"
        )
    elif not model.embedding_params:
        # a model given by its count alone: the embedding cannot be taken off (a review)
        params_part += " (the input embedding, a lookup, not taken off: give {vocab})"
    if attention is None:
        counted = params_part
        why = (
            "the attention's score and value products not counted: give {layers}, "
            "{heads} and {hidden}"
        )
    else:
        head, rope = model.head_dim_or_derived, model.rope_head_dim
        width = f"({head} + {rope} + {head})" if rope else f"2 x {head}"
        counted = f"({params_part} + {_about(attention)} attention FLOPs) per token"
        why = (
            f"the attention's score and value products, 6 x {model.layers} layers x "
            f"{model.heads} heads x {width} x {seq:,} context, "
            f"{format_share(attention / per_token)} of the total; PaLM's count"
        )
    return _Flops(per_token, counted, why, tflops_text(tflops))


def tflops_text(tflops: float) -> str:
    """A TFLOP/s rate as typed below 10,000, whole and thousands separated from there up
    (1e+06 had been printed)."""
    return f"{tflops:,.0f}" if tflops >= 1e4 else f"{tflops:g}"


#: How far above a catalogue peak --tflops may be before it is called faster than the GPU: the
#: catalogue rounds vendors' figures (NVIDIA's 989.4 TFLOPS for the H100 SXM is 989 there)
PEAK_ROUNDING = 0.005

#: GPU architectures with fp8 tensor cores, which run fp8 matmuls at twice the 16-bit rate
#: (Ada, Hopper and Blackwell; CDNA 3 and 4); Ampere and older have none
FP8_ARCHS = frozenset({"ada", "hopper", "blackwell", "cdna3", "cdna4"})


#: A ``--tflops`` share of the GPU peak below which the note asks whether the rate is in TFLOP/s
_UNDER_PEAK = 0.01


@functools.lru_cache(maxsize=64)
def _against_peak(
    tflops: float, peak: float, system: str, *, fp8: bool, recompute: bool
) -> tuple[bool, str]:
    """``--tflops`` against the GPU's dense 16-bit peak from the catalogue: (whether it is a
    warning, what to say). A rate above the peak (above twice it with fp8 activations on a GPU
    with fp8 tensor cores) prices the compute faster than the GPU runs: the warning says so
    before its first colon (``train --compare`` keeps that part). Below it, the share of the
    peak is the model FLOPs utilisation (MFU) it assumes, which large runs report at about 0.4
    (Llama 3: 38-43 % on H100, arXiv:2407.21783 table 4); with full recompute the rate covers
    8/6 of the model's FLOPs, so the share is the hardware utilisation and the MFU 6/8 of it."""
    share = tflops / peak
    limit = (2 if fp8 else 1) * peak * (1 + PEAK_ROUNDING)
    rate = tflops_text(tflops)
    if tflops > limit:
        times = f"{share:.2f}x" if share < 10 else f"{share:,.0f}x"
        return True, (
            f"{{tflops}} {rate} TFLOP/s per GPU is faster than {system}'s GPUs run: "
            f"{times} their peak, {peak:g} TFLOP/s dense 16-bit"
            + (" (fp8 matmuls run at up to twice it)" if fp8 else "")
        )
    if share > 1 + PEAK_ROUNDING:
        why = "fp8 matmuls run at up to twice it"
    elif share < _UNDER_PEAK:
        why = "under 1 %: is the rate in TFLOP/s?"
    elif recompute:
        why = (
            "its hardware FLOPs utilisation: with full recompute the model FLOPs are 6/8 of "
            f"those run, an MFU of {format_share(share * 6 / 8)}"
        )
    else:
        why = "its MFU"
    against = f"{system}'s GPU peak, {peak:g} TFLOP/s dense 16-bit"
    # as every share prints, and on its side of 1 % as of the peak: 9 TFLOP/s on an H100 had
    # read '1% ... under 1 %', 985 '100%', 9.88 '1.0% ... (under 1 %' (0.999 %)
    part = format_share(share, (_UNDER_PEAK, 1.0))
    return False, f"{{tflops}} {rate} TFLOP/s per GPU is {part} of {against} ({why})"


@functools.lru_cache(maxsize=256)
def _about(count: float) -> str:
    """A parameter count to three significant digits (``45.3B``; cached: a layout search writes
    the same model's counts into every layout's notes)."""
    return format_count(float(f"{count:.3g}"))


#: A pipeline stage's (shared, routed-expert) parameters per GPU and its transformer layers
#: (None without the model's layer count)
_StageShare = tuple[float, float, int | None]


def _stage_shares(spec: TrainSpec) -> tuple[_StageShare, ...]:
    """(shared, routed-expert, layers) of each pipeline stage that may hold the most
    (:func:`~ibcalc.workload.memory.stage_params`; the routed parameters split over ep): the
    first with the input embedding, the last with the output layer, the first of MoE layers."""
    par, model, virtual = spec.parallel, spec.model, spec.virtual_stages
    tp, pp, ep = par.tp, par.pp, par.ep

    def make() -> tuple[_StageShare, ...]:
        stages = candidate_stages(model, tp=tp, pp=pp, ep=ep, virtual=virtual)
        return tuple(
            (shared, routed, None if layers is None else sum(layers))
            for _, layers, shared, routed, _ in stages
        )

    return _STAGE_SHARES.get((id(model), tp, pp, ep, virtual), (model,), make)


#: :func:`_stage_shares`'s values by (model id, tp, pp, ep, virtual stages): a layout search
#: asks for each of a few hundred layouts' several times
_STAGE_SHARES: IdentityMemo[tuple[_StageShare, ...]] = IdentityMemo(size=4096)


def _fullest_stage(
    spec: TrainSpec, *, split_time: Callable[[_StageShare], float] | None = None
) -> _StageShare:
    """The (shared, routed, layers) of the stage whose gradient exchange gates the step (every
    stage exchanges its own at once). Unsplit, every parameter a GPU holds goes over the same dp
    ranks: the stage with the most. Split, the shared ones go over ``dp`` ranks and the routed
    over the ``dp / ep`` holding the same experts, groups on different links: the stage whose
    two exchanges take longest, ``split_time(stage)`` (DeepSeek-V3 on pp 16, dp 8, ep 8:
    stage 0's embedding and dense layers, 360M shared, not stage 1's experts, which need no
    exchange)."""

    def weight(share: _StageShare) -> float:
        return share[0] + share[1] if split_time is None else split_time(share)

    return max(_stage_shares(spec), key=weight, default=(0.0, 0.0, None))


#: What DeepSpeed does with ZeRO-2 or 3 and pipeline parallelism, said where a step pairs them.
_DEEPSPEED_PIPE = (
    "DeepSpeed's pipeline engine refuses ZeRO-2 and 3 with pipeline parallelism "
    "(runtime/pipe/engine.py)"
)


def _zero3_units_note(layers: int | None, units: int, weight_bytes: float) -> str:
    """What ZeRO-3's exchanges per micro-batch are: one per layer of the gating stage, of
    ``weight_bytes / units`` weights each, or the whole stage's where the layers are unknown."""
    if layers is None:
        return (
            "ZeRO-3: without the model's layer count, the stage's weights are priced as one "
            "all-gather forward, one backward and one reduce-scatter per micro-batch, not one a "
            "layer: a collective latency per layer is missing (give {layers})"
        )
    return (
        "ZeRO-3: weights all-gathered and gradients reduce-scattered one layer at a time, as "
        f"ZeRO-3 and FSDP do: per micro-batch {plural(units, 'all-gather')} forward, "
        f"{units} backward and {plural(units, 'reduce-scatter')}, "
        f"{format_size(weight_bytes / units)} of weights each (the stage's "
        f"{format_size(weight_bytes)} split evenly over its "
        + (
            f"{plural(layers, 'layer')}, the embedding and output layer counted in with them)"
            if layers
            else "embedding or output layer alone, no transformer layer)"
        )
    )


def _dp_phases(b: _Builder, *, sites: int, dp_site: int, m: int) -> None:
    """Data-parallel gradient and weight collectives (flat, or within site then across)."""
    spec = b.spec
    par, model = spec.parallel, spec.model
    tp, pp, dp, ep, cp = par.tp, par.pp, par.dp, par.ep, par.cp
    zero, grad_dtype, param_dtype = spec.zero, spec.grad_dtype, spec.param_dtype
    ranks = dp * cp
    if ranks < 2:
        # said, as {hierarchical} on one site is: the title still names what was asked
        if zero:
            b.notes.append(
                # named as the title names it: --fsdp asks for it too (a review: '--zero 3'
                # had been named to one who gave --fsdp)
                f"ZeRO-{zero} has no effect: dp x cp = 1, one replica of every weight, "
                "nothing to shard or gather"
            )
        return
    # expert parallelism shards the routed experts over ep ranks: their gradients and weights
    # are exchanged only among the dp / ep ranks holding the same experts (Megatron-Core's
    # expert-data-parallel group), the shared ones over all dp ranks. The stage with the most
    # to exchange gates the step (every stage exchanges its own at once): with the embedding,
    # stage 0 of Llama-3-8B on tp 2 pp 4 holds 1.13 G, not 1.0 G
    experts = model.expert_params if ep > 1 else None
    split = experts is not None and cp == 1 and sites == 1
    last_bwd = "backward of the last micro-batch"
    first_fwd = "forward of the first micro-batch"
    # (name, collective, bytes per parameter, type, count per step, compute window)
    grad, weights = grad_dtype.bytes, param_dtype.bytes
    # compressed gradients (1 byte) are summed in higher precision at each hop, not by NCCL's own
    # 8-bit reduction: priced as an 8-bit integer sum, without NCCL's penalty on long fp8 rings
    # (fp8 had cost 391 ms where int8's same bytes cost 337 ms) and without switch reductions
    grad_type = DType.INT8 if grad_dtype.bytes < 2 else grad_dtype
    kinds: list[tuple[str, Collective, float, DType, int, str]]
    if zero == 0:
        kinds = [("dp-allreduce", Collective.ALL_REDUCE, grad, grad_type, 1, last_bwd)]
    elif zero == 1:
        kinds = [
            ("dp-reducescatter", Collective.REDUCE_SCATTER, grad, grad_type, 1, last_bwd),
            ("dp-allgather", Collective.ALL_GATHER, weights, param_dtype, 1, first_fwd),
        ]
    elif zero == 2:
        # ZeRO-2 keeps only its shard of the gradients, so it cannot accumulate whole ones over
        # the micro-batches: each backward reduce-scatters (as ZeRO-3 does); ZeRO-1 keeps them
        kinds = [
            ("dp-reducescatter", Collective.REDUCE_SCATTER, grad, grad_type, m, "backward"),
            ("dp-allgather", Collective.ALL_GATHER, weights, param_dtype, 1, first_fwd),
        ]
    else:
        kinds = [
            ("dp-allgather-fwd", Collective.ALL_GATHER, weights, param_dtype, m, "forward"),
            ("dp-allgather-bwd", Collective.ALL_GATHER, weights, param_dtype, m, "backward"),
            ("dp-reducescatter", Collective.REDUCE_SCATTER, grad, grad_type, m, "backward"),
        ]
    if zero >= 2 and m > 1:
        # review BV: a 4x DP cost at pp 2 with ZeRO-3 had gone unremarked, where the common
        # stacks either refuse the pairing or gather once a step
        b.notes.append(
            f"ZeRO-{zero} over {m} micro-batches: the gradients are reduce-scattered"
            + (" and the weights all-gathered" if zero >= 3 else "")
            # ZeRO-3 exchanges one layer at a time, so many times a micro-batch (the units note)
            + (" in every micro-batch" if zero >= 3 else " once per micro-batch")
            + f", {m}x one's data"
            + (f"; {_DEEPSPEED_PIPE}" if pp > 1 else "")
            + (
                # review BX: the weights' clause had been said of ZeRO-2, which gathers none per
                # micro-batch, and named a setting that keeps them within one micro-batch only
                "; an FSDP stack can keep the weights gathered across the micro-batches and "
                "gather them once a step (torchtitan does so under pipeline parallelism: it "
                "does not reshard them after forward)"
                if pp > 1 and zero >= 3
                else ""
            )
        )
    elif zero >= 2 and pp > 1:
        # one micro-batch: priced once, but the pairing is refused all the same (review CF:
        # --compare marked the layout, the one-layout run said nothing)
        b.notes.append(f"ZeRO-{zero} with pipeline parallelism: {_DEEPSPEED_PIPE}")
    # the gradients' group: with context parallelism the dp x cp ranks holding the same weights,
    # so called in the notes ("dp group: 8 GPUs" had been said of dp 4, cp 2)
    label = "dp x cp" if cp > 1 else None
    flat_group = _Group("dp", ranks, tp * (pp if b.dp_last else 1), label=label)
    holders = _Group("edp", dp // ep, tp * ep) if dp // ep > 1 else None

    def units_of(layers: int | None) -> int:
        """The collectives of each ZeRO-3 kind per micro-batch: ZeRO-3 and FSDP gather the
        weights and reduce-scatter the gradients one layer (FSDP unit) at a time (Rajbhandari
        et al., section 7; Zhao et al., VLDB 2023, arXiv:2304.11277, sections 3.2-3.3), so a
        stage of L layers runs L of each, its weights split evenly over them (the embedding
        and output layer counted in with its layers, not as units of their own). One without
        a layer count (or a stage of none), and for ZeRO-1/2, which exchange whole buckets."""
        return max(1, layers) if zero == 3 and layers is not None else 1

    def split_parts(shared: float, routed: float, units: int) -> list[tuple[_Group, str, float]]:
        """Each kind's exchanges, one of ``units``, for a stage of ``shared`` and ``routed``
        parameters per GPU: the shared ones over all dp ranks, the routed over their holders
        (none when each expert shard is on one dp rank; none either for a stage of dense
        layers only)."""
        parts = []
        for name, _, per_param, dtype, _, _ in kinds:
            size = per_param / units
            if shared * size >= dtype.bytes:  # a model of experts alone has nothing shared
                parts.append((flat_group, name, shared * size))
            if holders is not None and routed * size >= dtype.bytes:
                parts.append((holders, "e" + name, routed * size))
        return parts

    by_name = {kind[0]: kind for kind in kinds}

    def split_time(stage: _StageShare) -> float:
        shared, routed, layers = stage
        units = units_of(layers)
        total = 0.0
        for group, name, size in split_parts(shared, routed, units):
            _, coll, _, dtype, count, _ = by_name[name.removeprefix("e")]
            total += count * units * b.time_s(group, coll, size, dtype)
        return total

    shared_params, routed_params, gating_layers = _fullest_stage(
        spec, split_time=split_time if split else None
    )
    units = units_of(gating_layers)
    # what one GPU holds, its shard of the routed experts included (unsplit, all of it goes over
    # every dp rank: 3.04 GB for DeepSeek-V3 on tp 8 pp 16 ep 4 cp 2, not the 11.5 GB of every
    # expert shard, which no GPU holds)
    per_gpu = shared_params + routed_params
    plan = [
        (name, coll, per_gpu * per_param / units, dtype, count * units, window)
        for name, coll, per_param, dtype, count, window in kinds
    ]
    if zero == 3:
        b.notes.append(_zero3_units_note(gating_layers, units, per_gpu * weights))
    hierarchical = spec.hierarchical and sites > 1
    if spec.hierarchical and sites == 1:
        b.notes.append(HIERARCHICAL_ONE_SITE)
    if split:
        assert experts is not None
        peers = dp // ep
        # the gating stage may hold dense layers only (DeepSeek-V3's first on pp 32)
        exchanged = any(
            p[1].startswith("e") for p in split_parts(shared_params, routed_params, units)
        )
        b.notes.append(
            f"MoE: the {_about(experts)} expert parameters ({_about(model.params)} total, "
            f"{_about(model.flops_params)} active, top-{model.top_k} of {model.experts}) are split "
            f"over ep {ep}; "
            + (
                f"their gradients and weights go over the {peers} dp ranks holding the same "
                "experts (the edp- phases"
                + (")" if exchanged else "; the stage that gates the step holds none)")
                if peers > 1
                else "each shard is on one dp rank only, so its gradients need no exchange"
            )
            + f"; the other {_about(model.params - experts)} go over all {dp} dp ranks "
            "(the dp- phases)"
        )
    elif model.is_moe and ep > 1:
        why = model.expert_share_unknown or (
            "not split with context parallelism" if cp > 1 else "not split across sites"
        )
        b.notes.append(
            "MoE: each GPU's gradients, its expert shard's included, are exchanged over all dp "
            "ranks (an upper bound: expert gradients only need the dp / ep ranks holding the "
            f"same experts; {why})"
        )
    if split:
        for group, name, size in split_parts(shared_params, routed_params, units):
            _, coll, _, dtype, count, window = by_name[name.removeprefix("e")]
            b.add_hidden(group, name, coll, size, dtype=dtype, count=count * units, window=window)
        return
    for name, coll, size, dtype, count, window in plan:
        if not hierarchical:
            flat = _Group(
                "dp", ranks, tp * (pp if b.dp_last else 1), across_sites=sites > 1, label=label
            )
            b.add_hidden(flat, name, coll, size, dtype=dtype, count=count, window=window)
            continue
        local = dp_site * cp
        shard = size / local
        wan_stride = b.cluster.topology.m
        # dp-allreduce -> dp-rs@site, dp-ar@wan, dp-ag@site; dp-allgather-fwd -> dp-ag-fwd@wan ...
        tail = name.removeprefix("dp-").removeprefix("allreduce").removeprefix("allgather")
        tail = tail.removeprefix("reducescatter")
        steps: list[tuple[str, str, Collective, float]] = []
        if coll is Collective.ALL_REDUCE:
            steps = [
                ("site", f"dp-rs{tail}@site", Collective.REDUCE_SCATTER, size),
                ("wan", f"dp-ar{tail}@wan", Collective.ALL_REDUCE, shard),
                ("site", f"dp-ag{tail}@site", Collective.ALL_GATHER, size),
            ]
        elif coll is Collective.REDUCE_SCATTER:
            steps = [
                ("site", f"dp-rs{tail}@site", Collective.REDUCE_SCATTER, size),
                ("wan", f"dp-rs{tail}@wan", Collective.REDUCE_SCATTER, shard),
            ]
        else:
            steps = [
                ("wan", f"dp-ag{tail}@wan", Collective.ALL_GATHER, shard),
                ("site", f"dp-ag{tail}@site", Collective.ALL_GATHER, size),
            ]
        for where, step_name, step_coll, step_size in steps:
            if where == "site":
                if local < 2:
                    continue
                site = _Group("dp", local, tp, label=label)
                b.add_hidden(
                    site, step_name, step_coll, step_size, dtype=dtype, count=count, window=window
                )
            else:
                b.add_hidden(
                    _Group("dp", sites, wan_stride, across_sites=True, label=label),
                    step_name,
                    step_coll,
                    step_size,
                    dtype=dtype,
                    count=count,
                    window=window,
                    notes=[
                        f"hierarchical: each GPU exchanges its 1/{local} shard with its "
                        f"counterpart in the other site{'s' if sites > 2 else ''}"
                    ],
                )


def _tp_warning(b: _Builder, phase: Phase, size: float, second: Phase | None = None) -> None:
    """Warn when TP leaves the scale-up domain, with the slowdown against staying inside;
    ``second`` is sequence parallelism's reduce-scatter beside ``phase``'s all-gathers. Said
    once per search for each such phase (:meth:`_Builder.add` builds each once: its identity is
    the search's, kept alive by it)."""
    if b.spec.parallel.tp <= b.cluster.topology.m:
        return
    key = (id(phase), id(second))
    known = b.shared.tp_warnings.get(key)
    if known is None:
        # the entry holds the phases, so that no other phase can take their identities
        known = b.shared.tp_warnings[key] = (phase, second, _tp_crossing(b, phase, size, second))
    b.warnings.append(known[2])


def _tp_crossing(b: _Builder, phase: Phase, size: float, second: Phase | None) -> str:
    """:func:`_tp_warning`'s words."""
    par = b.spec.parallel
    domain = b.cluster.topology.m
    assert phase.collective is not None
    # every TP collective's time a step: the all-gathers' and the reduce-scatters' with
    # sequence parallelism (the all-gathers' alone had been said for both: review BQ)
    both = [phase] if second is None else [phase, second]
    total = sum(p.time_s * p.count for p in both)
    names = " and ".join(p.collective.value for p in both if p.collective is not None)
    if b.cluster.intra is None:
        return (
            f"tp {par.tp} crosses the scale-up domain ({domain} GPU): every TP {names} "
            f"goes over {phase.tier}, {format_time(total)} per step"
        )
    mesh = b.cluster.intra.mesh_gpus
    if mesh is not None and par.tp > mesh:
        # a switchless mesh joins no more GPUs than its own count: there is no domain of tp
        # GPUs to compare with (the what-if had been refused as '--gpus-per-node 8', a flag
        # nobody gave, and the run with it: review BO)
        return (
            f"tp {par.tp} crosses the {domain}-GPU scale-up domain: every TP {names} goes "
            f"over {phase.tier}, {format_time(total)} per step ({b.cluster.intra.id} is a "
            f"switchless mesh of at most {mesh} GPUs, so no {par.tp}-GPU domain of it exists "
            "to compare with); {compare} weighs a tp that fits the domain"
        )
    key = (par.tp, phase.collective)
    plan = b.shared.inside.get(key)
    if plan is None:
        alone = single_domain(b.cat, b.cluster, par.tp)
        plan = b.shared.inside[key] = _plan_on(alone, phase.collective, b.spec.act_dtype, b.params)
    inside, _ = b.cost(plan, size)
    slowdown = phase.time_s / inside.time_s
    # the comparison is a domain of tp GPUs, which the cluster does not have: said so, with
    # --compare for what a tp that fits would cost (a 1.05x had read as 'crossing is free'
    # where, for Llama 3 70B on 16 DGX H100 at a global batch of 512 with sequence
    # parallelism, tp 8 spends 7.1 s a step on TP and tp 16 17.2 s)
    return (
        f"tp {par.tp} crosses the {domain}-GPU scale-up domain: each TP "
        f"{phase.collective.value} of {format_size(size)} takes {format_time(phase.time_s)}, "
        f"against {format_time(inside.time_s)} were the {par.tp} GPUs one "
        f"{b.cluster.intra.id} domain, which none is here ("
        # a crossing the model prices faster (tp 32 of tiny messages on DGX A100) had read
        # '0.80x slower' (a review)
        + (
            f"{format_near_one(slowdown)} slower; "
            if slowdown >= 1
            else f"{format_near_one(1 / slowdown)} faster across; "
        )
        # this collective's own time a step, beside its own inside (the step's TP total here
        # had set the all-gathers and reduce-scatters beside the all-gathers alone: review BR)
        + f"{format_time(phase.time_s * phase.count)} vs "
        f"{format_time(inside.time_s * phase.count)} per step for this collective); "
        "{compare} weighs a tp that fits the domain"
    )


class _Overlap(NamedTuple):
    """A step's phases with their exposed times (:func:`_apply_overlap`), its communication and
    exposed communication, and their likely ranges (None where a phase has none)."""

    phases: list[Phase]
    comm_s: float
    exposed_s: float
    comm_s_range: tuple[float, float] | None
    exposed_s_range: tuple[float, float] | None


def _apply_overlap(
    phases: list[tuple[Phase | dict[str, Any], str | None]], windows: Mapping[str, float]
) -> _Overlap:
    """Build the overlappable phases (given as their fields) with ``exposed_s`` from their
    compute ``windows`` (:func:`_windows`), and sum the step's communication, exposed
    communication and their likely ranges, in one pass over the phases (once a layout of a
    search).

    A window's exposed time is ``max(0, its phases' total - its compute)``, shared among them in
    proportion to their time. Without compute times every phase is exposed in full. The likely
    ranges put every phase at its range's low end, then at its high end, hidden under the same
    windows: a window's exposed part is ``max(0, its phases' total - its compute)``; None when a
    phase has no range.
    """
    busy = _window_busy(
        # Phase.total_s of each overlappable phase (given as its fields)
        (
            (fields["time_s"] * fields["count"], window)
            for fields, window in phases
            if isinstance(fields, dict)
        ),
        windows,
    )
    out: list[Phase] = []
    totals: list[float] = []
    exposed: list[float] = []
    # each phase's total at its range's low and high ends: all, those exposed in full, and those
    # hidden under each window
    lows: list[float] = []
    highs: list[float] = []
    lows_exposed: list[float] = []
    highs_exposed: list[float] = []
    lows_busy: dict[str, float] = {}
    highs_busy: dict[str, float] = {}
    ranged = True
    for phase, window in phases:
        if window is None:
            assert isinstance(phase, Phase)
            built = phase
        else:
            assert isinstance(phase, dict)
            total = phase["time_s"] * phase["count"]
            if window in windows:
                window_busy = busy[window]
                exposed_window = max(0.0, window_busy - windows[window])
                share = total / window_busy if window_busy > 0 else 0.0
                phase["exposed_s"] = exposed_window * share
            else:
                phase["exposed_s"] = total
            built = trusted_phase(phase)
        out.append(built)
        count = built.count
        # Phase.total_s, and Phase.total_s_range without building its tuple
        totals.append(built.time_s * count)
        exposed.append(built.exposed_s)
        span = built.time_s_range
        if span is None:
            ranged = False
        elif ranged:
            low, high = span[0] * count, span[1] * count
            lows.append(low)
            highs.append(high)
            under = built.overlaps
            if under is not None and under in windows:
                lows_busy[under] = lows_busy.get(under, 0.0) + low
                highs_busy[under] = highs_busy.get(under, 0.0) + high
            else:
                lows_exposed.append(low)
                highs_exposed.append(high)
    comm_range = exposed_range = None
    # each sum from 0.0: a step without phases sums to a float, as TrainTotals holds them
    # (built without validation, which had made 0 of the int 0)
    if ranged:
        comm_range = (sum(lows, 0.0), sum(highs, 0.0))
        exposed_range = (
            sum(lows_exposed, 0.0)
            + sum([max(0.0, t - windows[w]) for w, t in lows_busy.items()], 0.0),
            sum(highs_exposed, 0.0)
            + sum([max(0.0, t - windows[w]) for w, t in highs_busy.items()], 0.0),
        )
    return _Overlap(out, sum(totals, 0.0), sum(exposed, 0.0), comm_range, exposed_range)


def _windows(forward_s: float | None, backward_s: float | None, m: int) -> dict[str, float]:
    """The compute each overlap window hides communication under (none without compute)."""
    if forward_s is None or backward_s is None:
        return {}
    return {
        "backward of the last micro-batch": backward_s / m,
        "forward of the first micro-batch": forward_s / m,
        "backward": backward_s,
        "forward": forward_s,
    }


def _window_busy(
    items: Iterable[tuple[float, str | None]], windows: Mapping[str, float]
) -> dict[str, float]:
    """The communication each compute window hides: the summed totals of the (total, window)
    items under it. An item without a window, or whose window has no compute, is under none
    and exposed in full; a window's exposed time is ``max(0, busy - its compute)``."""
    busy: dict[str, float] = {}
    for total, window in items:
        if window is not None and window in windows:
            busy[window] = busy.get(window, 0.0) + total
    return busy


def _divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending."""
    low: list[int] = []
    high: list[int] = []
    d = 1
    while d * d <= n:
        if n % d == 0:
            low.append(d)
            if d * d != n:
                high.append(n // d)
        d += 1
    return low + high[::-1]


def factorisations(world: int, cp: int = 1) -> Iterator[tuple[int, int, int]]:
    """Every (tp, pp, dp) with tp x pp x dp x cp = world, tp fastest-growing last."""
    if world % cp:
        return
    rest = world // cp
    for tp in _divisors(rest):
        for pp in _divisors(rest // tp):
            yield tp, pp, rest // tp // pp


def compare_layouts(
    catalogue: Catalogue,
    cluster: ResolvedCluster,
    spec: TrainSpec,
    *,
    params: CostParams | None = None,
    quick: bool = True,
) -> tuple[list[TrainResult], list[str]]:
    """Every valid (tp, pp, dp[, ep]) layout of ``cluster``'s GPUs, fastest step first.

    Every layout runs the same global batch (sequences per step): ``spec.global_batch``, or by
    default one micro-batch per GPU of the all-data-parallel layout, ``ranks / cp x
    micro_batch`` (then M = tp x pp for every layout), so that steps compare like for like;
    ``spec.microbatches`` is refused (it would give each layout its own batch). Ranked by step
    time (compute, pipeline bubble and exposed communication) when the compute is known, else
    by exposed communication per step.

    Valid: tp divides the attention heads and pp is at most the layers (when known; a stage
    count that does not divide them costs the busiest stage, as :func:`train_step` does), dp
    splits over the sites, ep divides dp and the experts (MoE only; ep = 1 otherwise), the
    global batch splits into whole micro-batches, and the groups tile the scale-up domains.
    Layouts whose memory per GPU (:mod:`ibcalc.workload.memory`) is known not to fit rank after
    every other. Returns the results and the layouts skipped, each with its reason (a tp that
    does not divide the heads, or a pp above the layers, once for every layout with it).

    By default (``quick``, what ``ibcalc train --compare`` runs) each phase is costed without
    building its :class:`~ibcalc.engine.types.Estimate` (``Phase.estimate`` is None): the
    ranking and every number, warning and note are those of ``quick=False``, to the bit, several
    times faster. ``quick=False`` keeps each phase's full estimate (its algorithm, bottleneck
    and explanation), as :func:`train_step` gives it.
    """
    # one GPU, resolved for no collective, is searched too (its one layout runs none)
    expect_type(cluster, ResolvedCluster, "cluster", "resolve_cluster(catalogue, spec) makes one")
    expect_job(catalogue, spec, TrainSpec)
    model = spec.model
    if spec.microbatches is not None:
        raise WorkloadError(
            "a layout comparison holds the sequences per step fixed: give {global_batch}, "
            "not {microbatches} (the same M would give each layout its own batch)",
            field="microbatches",
        )
    if spec.global_batch is None:
        default = cluster.ranks // spec.parallel.cp * spec.micro_batch
        spec = spec.model_copy(update={"global_batch": default})
    results: list[TrainResult] = []
    skipped: list[str] = []
    shared = _Shared(search=True)
    cp = spec.parallel.cp
    # as model_copy counts them; a frozenset, which the layouts' specs share (ibcalc.trusted)
    given = frozenset(spec.model_fields_set | {"parallel", "virtual_stages"})
    not_tried: dict[str, None] = {}  # one line per degree ruled out, in the order met
    for tp, pp, dp in factorisations(cluster.ranks, spec.parallel.cp):
        if model.heads is not None and model.heads % tp:
            not_tried[f"tp {tp}: does not divide the model's {model.heads} attention heads"] = None
            continue
        if model.layers is not None and pp > model.layers:
            not_tried[f"pp {pp}: more stages than the model's {plural(model.layers, 'layer')}"] = (
                None
            )
            continue
        # interleaving applies to the pipelined layouts; one that cannot interleave (layers that
        # do not split into pp x v equal chunks, fewer micro-batches than pp) runs without it,
        # said on its row (it had been left out, and with it every pipelined layout of Llama 3
        # 405B's 126 layers: tp 64 across 8 nodes ranked first)
        virtual = spec.virtual_stages if pp > 1 else 1
        plain = why_plain = ""
        if virtual > 1 and model.layers is not None and model.layers % (pp * virtual):
            why_plain = "layers not in pp x {virtual_stages} equal chunks"
            plain = (
                f"the model's {model.layers} layers do not split into pp x {{virtual_stages}} = "
                f"{pp * virtual} equal chunks"
            )
        elif virtual > 1 and spec.global_batch is not None:
            # the interleaved schedule runs micro-batches in groups of pp (Megatron-LM): with
            # fewer it runs plain 1F1B, as one whose layers do not split
            per_pass = dp * spec.micro_batch
            if spec.global_batch % per_pass == 0 and spec.global_batch // per_pass < pp:
                m = spec.global_batch // per_pass
                why_plain = "fewer micro-batches than pp"
                plain = (
                    f"{plural(m, 'micro-batch')} per step, fewer than the pp = {pp} "
                    "{virtual_stages} needs"
                )
        if plain:
            virtual = 1
        eps = [1]
        if model.is_moe:
            assert model.experts is not None
            eps = [e for e in range(1, dp + 1) if dp % e == 0 and model.experts % e == 0]
        for ep in eps:
            # degrees of the divisor walk, each in range, and the job's validated fields: built
            # without validating them again (ibcalc.trusted; model_construct and model_copy
            # take longer), as model_copy would make it
            par = trusted(Parallelism, {"tp": tp, "pp": pp, "dp": dp, "ep": ep, "cp": cp})
            layout = {**spec.__dict__, "parallel": par, "virtual_stages": virtual}
            try:
                result = _train_step(
                    catalogue,
                    cluster,
                    trusted(TrainSpec, layout, given),
                    params=params,
                    quick=quick,
                    shared=shared,
                )
            except IbcalcError as exc:
                # {field} marks stay for the caller to fill (named_notes)
                why = exc.template if isinstance(exc, FieldError) else str(exc)
                skipped.append(f"{par.label}: {why}")
                continue
            if plain:
                # the kind before the colon: the --compare table keeps that part of a warning
                # (it had read 'not interleaved' with no reason; a review)
                said = f"not interleaved ({why_plain}): {plain}"
                result = result.model_copy(update={"warnings": [said, *result.warnings]})
            if spec.zero >= 2 and pp > 1 and dp * par.cp > 1:
                # a ranking recommends: a layout the commonest stack refuses is marked on its
                # row, not only in the one-layout note (train --compare had ranked them
                # unmarked; review BV's left item), whatever its micro-batches (review CD)
                m = result.microbatches
                said = (
                    f"ZeRO-{spec.zero} with pp, which DeepSpeed's pipeline engine refuses: "
                    + (
                        "priced exchanging "
                        + ("in every" if spec.zero >= 3 else "once per")
                        + f" micro-batch, {m}x one's data"
                        if m > 1
                        else "priced with its one micro-batch"
                    )
                    + (
                        "; an FSDP stack can gather the weights once a step"
                        if spec.zero >= 3 and m > 1
                        else ""
                    )
                )
                result = result.model_copy(update={"warnings": [*result.warnings, said]})
            results.append(result)
    # layouts known not to fit in the GPUs' memory go after every other, and tight ones (where
    # what memory_per_gpu leaves out may not fit) after those with room
    if results and all(r.totals.step_s is not None for r in results):
        results.sort(
            key=lambda r: (
                _memory_rank(r.memory),
                r.totals.step_s,
                r.totals.exposed_s,
                r.totals.comm_s,
            )
        )
    else:
        results.sort(key=lambda r: (_memory_rank(r.memory), r.totals.exposed_s, r.totals.comm_s))
    return results, [*not_tried, *skipped]
