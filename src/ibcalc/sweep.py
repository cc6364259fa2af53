"""Sweeps over message sizes as nccl-tests runs them (``-b``/``-e``/``-f``), on one or more fabrics.

:func:`sweep_sizes` builds nccl-tests' size series; :func:`sweep` estimates a collective at each
size on one resolved cluster, :func:`sweep_fabrics` on the same node shape with each of several
scale-out fabrics. Sizes too small for the rank count (nccl-tests would run 0 bytes) are skipped
and listed in the result, as nccl-tests skips them. :func:`algorithm_lines` adds one series per
algorithm, as ``--algo A`` would report each, for pictures.

The JSON of a sweep group (``model_dump(mode="json")``) is what ``ibcalc sweep --format json``
prints for it: the group's cluster and one row per size in nccl-tests' columns.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from typing import ClassVar, SupportsFloat

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ibcalc.booleans import is_boolean
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ClusterSpec, ResolvedCluster, resolve_cluster, sharp_hint
from ibcalc.defaults import empty_list
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import (
    COST_PARAMETERS_NOTE,
    Algorithm,
    Collective,
    DType,
    Estimate,
    Protocol,
)
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    ClusterError,
    FieldError,
    IbcalcError,
    SizeTooSmallError,
)
from ibcalc.facade import (
    MEASURED_DROP_MAX,
    CollectivePlan,
    by_name,
    cluster_notes,
    parse_dtype,
    simple_extrapolation_notes,
    size_list,
    sweep_memory_notes,
)
from ibcalc.units import GB, as_float, format_size

__all__ = [
    "MAX_SWEEP_SIZES",
    "MEASURED_DROP_MAX",
    "SweepGroup",
    "SweepResult",
    "SweepRow",
    "algorithm_lines",
    "sweep",
    "sweep_fabrics",
    "sweep_sizes",
]

#: Most sizes in one sweep: -b 1 -e 1P -f 2 is 51 sizes, so 200 only stops a runaway series.
MAX_SWEEP_SIZES = 200

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _whole(value: object) -> bool:
    """Whether ``value`` is a whole number of any numeric type, true/false aside."""
    if is_boolean(value) or not isinstance(value, numbers.Number):
        return False
    if isinstance(value, numbers.Integral):
        return True
    if not isinstance(value, SupportsFloat):  # a complex number
        return False
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return False
    return math.isfinite(number) and number.is_integer()


def sweep_sizes(
    min_bytes: float, max_bytes: float, factor: int, step_bytes: float | None = None
) -> list[float]:
    """nccl-tests' size series: ``min_bytes``, times ``factor`` each step, up to ``max_bytes``;
    with ``factor`` 1, plus ``step_bytes`` each step (nccl-tests' ``-f 1 -i N``, ``-i``
    defaulting to 1 MiB there; a ``factor`` of 2 or more ignores ``step_bytes``, as nccl-tests'
    loop does: ``size = stepfactor > 1 ? size * stepfactor : size + stepbytes``).

    ``max_bytes`` is included when the series lands on it (within rounding); at most
    :data:`MAX_SWEEP_SIZES` sizes (a longer linear series is refused). ``-b 8 -e 8G -f 16``
    gives 8 sizes: 8, 128, 2048 ... 2^31; ``-b 1M -e 4M -f 1 -i 1M`` 4: 1, 2, 3 and 4 MiB.
    Raises :class:`~ibcalc.errors.FieldError` naming ``min_bytes``, ``max_bytes``, ``factor``
    or ``step_bytes``.
    """
    if not (math.isfinite(min_bytes) and min_bytes > 0):
        raise FieldError(f"{{min_bytes}} {min_bytes:g} is not a positive size", field="min_bytes")
    if not math.isfinite(max_bytes):
        # inf had been called 'smaller than min_bytes' (a library user's review)
        raise FieldError(f"{{max_bytes}} {max_bytes:g} is not a finite size", field="max_bytes")
    if max_bytes < min_bytes:
        raise FieldError(
            f"{{max_bytes}} {format_size(max_bytes)} is smaller than {{min_bytes}} "
            f"{format_size(min_bytes)}",
            field="max_bytes",
            value=format_size(max_bytes),
            others={"min_bytes": format_size(min_bytes)},
        )
    # nccl-tests' -f is a whole number: NaN had given one size and 2.5 fractional byte sizes
    # any whole number (numpy's int64, Fraction(4), Decimal(4)), not True and not NaN (a review)
    if not _whole(factor):
        raise FieldError(f"{{factor}} {factor!r} is not a whole number", field="factor")
    if factor < 1:
        raise FieldError(
            "{factor} must be 1 or more (1 adds {step_bytes} each step, as nccl-tests' -f 1)",
            field="factor",
        )
    if factor == 1:
        return _linear_sizes(float(min_bytes), float(max_bytes), step_bytes)
    step = as_float(factor)  # a 400-digit factor: one size, not an OverflowError at the first step
    sizes: list[float] = []
    size = float(min_bytes)
    # 1e-12: a series of float products may land a hair above a max it meets exactly
    while size <= max_bytes * (1 + 1e-12) and len(sizes) < MAX_SWEEP_SIZES:
        sizes.append(size)
        size *= step
    return sizes


#: nccl-tests' default ``-i`` (``stepBytes``, src/common.cu): 1 MiB.
DEFAULT_STEP_BYTES = 2**20


def _linear_sizes(min_bytes: float, max_bytes: float, step_bytes: float | None) -> list[float]:
    """``min_bytes``, ``min_bytes + step_bytes``, ... up to ``max_bytes`` (nccl-tests' ``-f 1``)."""
    step = DEFAULT_STEP_BYTES if step_bytes is None else step_bytes
    if not (math.isfinite(step) and step > 0):
        raise FieldError(f"{{step_bytes}} {step:g} is not a positive size", field="step_bytes")
    whole = all(float(v).is_integer() for v in (min_bytes, max_bytes, step))
    if whole:
        # exact in whole bytes: a relative slack had added a size 1 B past -e and counted a
        # 200-size series as 201 (a review)
        count = (int(max_bytes) - int(min_bytes)) // int(step) + 1
    else:
        count = math.floor((max_bytes - min_bytes) / step + 1e-9) + 1
    if count > MAX_SWEEP_SIZES:
        # a runaway series is refused, not cut short unsaid; begun with the value given that
        # makes the steps (a given step, else the factor 1 that adds the default one), each
        # value after its field's mark, so that a caller quotes them as given
        span = (
            f"from {{min_bytes}} {format_size(min_bytes)} to {{max_bytes}} {format_size(max_bytes)}"
        )
        if step_bytes is None:
            head = f"{{factor}} 1 adds {{step_bytes}} {format_size(step)} (its default) each step: "
            field, value = "factor", "1"
        else:
            head = f"{{step_bytes}} {format_size(step)} "
            field, value = "step_bytes", format_size(step)
        raise FieldError(
            f"{head}{span} is {count:,} sizes; a sweep runs at most {MAX_SWEEP_SIZES} (a larger "
            "{step_bytes}, or {factor} 2 or more)",
            field=field,
            value=value,
            others={"min_bytes": format_size(min_bytes), "max_bytes": format_size(max_bytes)},
        )
    return [min_bytes + k * step for k in range(count)]


class SweepRow(BaseModel):
    """One size of a sweep in nccl-tests' columns (its JSON is one row of the output)."""

    model_config = _FROZEN

    estimate: Estimate = Field(exclude=True)
    previous: Estimate | None = Field(
        default=None, exclude=True, description="The sweep's estimate at the size before."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def size_bytes(self) -> int:
        """Size actually run, in bytes (nccl-tests' ``size`` column)."""
        return int(self.estimate.size_bytes)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def count(self) -> int:
        """Elements per rank (nccl-tests' ``count``)."""
        return self.estimate.count

    @computed_field  # type: ignore[prop-decorator]
    @property
    def type(self) -> str:
        """Element type (nccl-tests' ``type``)."""
        return self.estimate.dtype

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_us(self) -> float:
        """Predicted time in microseconds (nccl-tests' ``time``)."""
        return self.estimate.time_s * 1e6

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_us_range(self) -> tuple[float, float] | None:
        """Where a measurement of this size likely falls, microseconds (the error band)."""
        bounds = self.estimate.time_s_range
        return None if bounds is None else (bounds[0] * 1e6, bounds[1] * 1e6)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def range_covers(self) -> str | None:
        """The near ties the likely range was widened over (``Estimate.range_covers``, joined
        by commas; text, so that a CSV cell holds it), or None."""
        return ", ".join(self.estimate.range_covers) or None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def range_reaches(self) -> str | None:
        """The far faster candidate the likely range reaches down to, where NCCL's pick is the
        least sure kind (``Estimate.range_reaches``), or None: a row's range had reached to
        0.47x its time with nothing saying why (a review)."""
        return ", ".join(self.estimate.range_reaches) or None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def range_wire_floor_us(self) -> float | None:
        """The time at the links' line rate, microseconds, where it sets the likely range's low
        end (``Estimate.range_wire_floor_s``), or None."""
        floor = self.estimate.range_wire_floor_s
        return None if floor is None else floor * 1e6

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algbw_GBps(self) -> float:
        """Algorithm bandwidth in GB/s."""
        return self.estimate.algbw_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_GBps(self) -> float:
        """Bus bandwidth in GB/s."""
        return self.estimate.busbw_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_GBps_range(self) -> tuple[float, float] | None:
        """The busbw (GB/s) a measurement of this size likely shows: :attr:`time_us_range`
        inverted, as a single estimate's ``busbw_GBps_range`` is (a sweep row had carried the
        time's range alone)."""
        bounds = self.estimate.busbw_Bps_range
        return None if bounds is None else (bounds[0] / GB, bounds[1] / GB)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algorithm(self) -> Algorithm:
        """The algorithm chosen (or forced) at this size."""
        return self.estimate.best.algorithm

    @computed_field  # type: ignore[prop-decorator]
    @property
    def protocol(self) -> Protocol:
        """The protocol chosen (or forced) at this size."""
        return self.estimate.best.protocol

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_equivalent(self) -> bool:
        """True when busbw is an equivalent figure, not a wire rate."""
        return self.estimate.best.equivalent_busbw

    @computed_field  # type: ignore[prop-decorator]
    @property
    def switch(self) -> bool:
        """True where NCCL's tuner runs another algorithm or protocol than at the size before
        (the table's ``>``)."""
        if self.previous is None:
            return False
        was, now = self.previous.best, self.estimate.best
        return (was.algorithm, was.protocol) != (now.algorithm, now.protocol)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_drop_fraction(self) -> float | None:
        """How much less time this size takes than the size before, as a fraction of that
        time; None where time does not fall. For a fixed algorithm and protocol time never
        falls, so it falls only at a :attr:`switch`; drops deeper than
        :data:`MEASURED_DROP_MAX` have not been measured."""
        if self.previous is None or self.estimate.time_s >= self.previous.time_s:
            return None
        return 1.0 - self.estimate.time_s / self.previous.time_s


class SweepGroup(BaseModel):
    """The sweep of one cluster: an estimate per size that runs, and the sizes skipped.

    Its JSON: the collective, the cluster's links and shape, and one :class:`SweepRow` per size.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    cluster: ResolvedCluster = Field(exclude=True)
    estimates: list[Estimate] = Field(exclude=True, min_length=1)
    skipped: list[float] = Field(
        default_factory=empty_list,
        exclude=True,
        description="Sizes too small for this many ranks (nccl-tests would run 0 bytes).",
    )
    #: What the element type rules out at every size (``CollectivePlan.type_notes``).
    type_notes: list[str] = Field(default_factory=empty_list, exclude=True)
    #: The SHARP hint where SHARP does not reduce the type (``CollectivePlan.sharp_type_note``).
    sharp_note: str | None = Field(default=None, exclude=True)
    #: An all-to-all's message term beyond its fitted rows, once per algorithm the sweep runs
    #: (``facade.message_extrapolation_notes``: the same at every size).
    message_notes: list[str] = Field(default_factory=empty_list, exclude=True)
    #: From which size on the sizes are past what nccl-tests runs on the GPUs' memory
    #: (``facade.sweep_memory_notes``).
    memory_notes: list[str] = Field(default_factory=empty_list, exclude=True)

    @property
    def label(self) -> str:
        """The group's name in tables, CSV and legends: its scale-out link, ``-`` if none."""
        return self.cluster.inter.id if self.cluster.inter is not None else "-"

    @property
    def _first(self) -> Estimate:
        return self.estimates[0]

    @property
    def cluster_notes(self) -> list[str]:
        """What was assumed of the cluster, as it bears on the collective swept, with what
        the element type rules out (:attr:`type_notes`; SHARP's in place of its hint)."""
        notes = cluster_notes(self.cluster, self.collective)
        inter = self.cluster.inter
        if self.sharp_note is not None and inter is not None:
            notes = [self.sharp_note if n == sharp_hint(inter.id) else n for n in notes]
        return [*notes, *self.type_notes, *self.message_notes, *self.memory_notes]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def collective(self) -> Collective:
        """The collective swept."""
        return self._first.collective

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inter(self) -> str | None:
        """The scale-out link, None on one node, as an estimate's JSON has it (its label, in
        tables, CSV and legends, is ``-``; the JSON had said ``"-"`` too, a review)."""
        return self.cluster.inter.id if self.cluster.inter is not None else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def intra(self) -> str | None:
        """The scale-up link."""
        return self._first.intra

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nodes(self) -> int:
        """Nodes in the job."""
        return self._first.nodes

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gpus_per_node(self) -> int:
        """GPUs per node."""
        return self._first.gpus_per_node

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ranks(self) -> int:
        """Ranks (GPUs) in the job."""
        return self._first.ranks

    @computed_field  # type: ignore[prop-decorator]
    @property
    def domains(self) -> int:
        """Scale-up domains (NVLink domains: nodes, or racks such as NVL72) in the job."""
        return self._first.domains

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sites(self) -> int:
        """Sites the nodes are spread over (1: one site, no WAN tier)."""
        return self._first.sites

    @computed_field  # type: ignore[prop-decorator]
    @property
    def wan(self) -> str | None:
        """The WAN link between sites (None with one site)."""
        return self._first.wan

    @computed_field  # type: ignore[prop-decorator]
    @property
    def wan_links(self) -> int | None:
        """WAN links per site (None with one site)."""
        return self._first.wan_links

    @computed_field  # type: ignore[prop-decorator]
    @property
    def wan_latency_s(self) -> float | None:
        """One-way latency of a WAN hop (None with one site)."""
        return self._first.wan_latency_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nics_per_node(self) -> int | None:
        """Scale-out NICs per node the collectives use (None: one scale-up domain, no network)."""
        return self._first.nics_per_node

    @computed_field  # type: ignore[prop-decorator]
    @property
    def oversubscription(self) -> float:
        """Leaf oversubscription ratio (1: none)."""
        return self._first.oversubscription

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cross_leaf_fraction(self) -> float | None:
        """Share of a node's network traffic that crosses leaves (all-to-all); None with no
        scale-out tier."""
        return self._first.cross_leaf_fraction

    @computed_field  # type: ignore[prop-decorator]
    @property
    def neighbour_cross_leaf_fraction(self) -> float | None:
        """The same share for neighbour traffic (ring, tree, SHARP, send/recv)."""
        return self._first.neighbour_cross_leaf_fraction

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unaligned_cross_leaf_fraction(self) -> float | None:
        """The same share for traffic off its rail (all-to-all without PXN)."""
        return self._first.unaligned_cross_leaf_fraction

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gpus_per_process(self) -> int:
        """GPUs one process drives (nccl-tests -g)."""
        return self._first.gpus_per_process

    @computed_field  # type: ignore[prop-decorator]
    @property
    def host_pcie(self) -> str | None:
        """The PCIe link each NIC sits on (given or the preset's; None: not known)."""
        return self._first.host_pcie

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tuner_constants(self) -> str:
        """Where the tuner constants NCCL's choice was ranked with come from."""
        return self._first.tuner_constants

    @computed_field  # type: ignore[prop-decorator]
    @property
    def dtype(self) -> str:
        """Element type."""
        return self._first.dtype

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rows(self) -> list[SweepRow]:
        """One row per size that runs, smallest first."""
        return [
            SweepRow(estimate=est, previous=before)
            for before, est in zip([None, *self.estimates], self.estimates, strict=False)
        ]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def skipped_bytes(self) -> list[int]:
        """Sizes too small for this many ranks, which the rows leave out (nccl-tests would run
        0 bytes; the table says so below it, and the JSON had dropped them without a word; the
        CSV, one row per size, has no place for them). Whole bytes, as the rows' ``size_bytes``
        (they had been floats, 8.0, a review)."""
        return [int(size) for size in self.skipped]

    @property
    def parameter_notes(self) -> list[str]:
        """What was laid over the built-in cost parameters (override files, an NCCL release)."""
        return [a for a in self._first.assumptions if a.startswith(COST_PARAMETERS_NOTE)]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def assumptions(self) -> list[str]:
        """What the table lists under its sweeps: what was assumed of the cluster, then
        :attr:`parameter_notes`."""
        return [*self.cluster_notes, *self.parameter_notes]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sharp(self) -> bool:
        """Whether the network's in-network reduction (SHARP, CollNet) was enabled."""
        return self._first.sharp


class SweepResult(BaseModel):
    """A sweep: the sizes asked for, the choices forced (None: NCCL-like), one group per cluster."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    collective: Collective
    sizes: list[float]
    dtype: DType
    algorithm: Algorithm | None = None
    protocol: Protocol | None = None
    groups: list[SweepGroup] = Field(min_length=1)

    @property
    def skipped_bytes(self) -> list[int]:
        """Sizes skipped as too small in any group (every group has the same rank count)."""
        return sorted({size for group in self.groups for size in group.skipped_bytes})


def _group(
    cluster: ResolvedCluster,
    collective: Collective,
    sizes: Sequence[float],
    *,
    dtype: DType,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    params: CostParams | None = None,
) -> SweepGroup:
    """Estimates at each size on ``cluster``; sizes too small for its ranks are skipped."""
    estimates: list[Estimate] = []
    skipped: list[float] = []
    # a sweep shows the cluster's plain SHARP hint (the gain changes with size): no what-if
    plan = CollectivePlan(
        cluster,
        collective,
        dtype=dtype,
        algorithm=algorithm,
        protocol=protocol,
        params=params,
        sharp_what_if=False,
    )
    largest: SizeTooSmallError | None = None
    for size in sizes:
        try:
            estimates.append(plan.estimate(size))
        except SizeTooSmallError as exc:
            skipped.append(size)
            largest = exc
    if not estimates:
        # why the largest size is too small: one element of the type, or one per rank
        why = f": {largest}" if largest is not None else ""
        raise SizeTooSmallError(f"no size in the sweep is large enough{why}")
    return SweepGroup(
        cluster=cluster,
        estimates=estimates,
        skipped=skipped,
        type_notes=plan.type_notes(),
        sharp_note=plan.sharp_type_note(),
        message_notes=plan.message_notes()
        + simple_extrapolation_notes(cluster.topology, params, collective, estimates),
        memory_notes=sweep_memory_notes(cluster, [e.size_bytes for e in estimates]),
    )


def sweep(
    cluster: ResolvedCluster,
    collective: Collective | str,
    sizes: Sequence[float],
    *,
    dtype: DType | str = DType.FP32,
    algorithm: Algorithm | str | None = None,
    protocol: Protocol | str | None = None,
    params: CostParams | None = None,
) -> SweepResult:
    """Estimate ``collective`` at each of ``sizes`` on one resolved cluster, with the cost
    parameters ``params`` (default: the built-in ones). The collective, algorithm and protocol
    may be given by name, as :func:`~ibcalc.facade.estimate_on` takes them.

    Sizes nccl-tests would round to 0 bytes for this many ranks are skipped (and listed);
    :class:`~ibcalc.errors.SizeTooSmallError` if every size is. A forced ``algorithm`` that
    cannot run raises :class:`~ibcalc.errors.AlgorithmNotApplicableError`.
    """
    collective, algorithm, protocol = by_name(collective, algorithm, protocol)
    sizes = size_list(sizes)
    dt = parse_dtype(dtype)
    group = _group(
        cluster,
        collective,
        sizes,
        dtype=dt,
        algorithm=algorithm,
        protocol=protocol,
        params=params,
    )
    return SweepResult(
        collective=collective,
        sizes=list(sizes),
        dtype=dt,
        algorithm=algorithm,
        protocol=protocol,
        groups=[group],
    )


def sweep_fabrics(
    catalogue: Catalogue,
    spec: ClusterSpec,
    collective: Collective | str,
    sizes: Sequence[float],
    *,
    fabrics: Sequence[str] = (),
    dtype: DType | str = DType.FP32,
    algorithm: Algorithm | str | None = None,
    protocol: Protocol | str | None = None,
    params: CostParams | None = None,
) -> SweepResult:
    """Sweep ``spec`` once per scale-out link of ``fabrics`` (none: ``spec.inter``).

    The first fabric resolves the node (GPUs, scale-up link, system, host PCIe, NIC count as
    given); every other fabric goes into that same node, so the groups differ only in the
    network. Fabrics that resolve to a link already swept are dropped. Several fabrics need more
    than one node (:class:`~ibcalc.errors.ClusterError` naming ``inter``).
    """
    collective, algorithm, protocol = by_name(collective, algorithm, protocol)
    sizes = size_list(sizes)
    if isinstance(fabrics, str):
        # "ndr" read letter by letter had been refused as "unknown link 'n'"
        raise ClusterError(f"fabrics is one name, {fabrics!r}: give a list ([{fabrics!r}])")
    dt = parse_dtype(dtype)
    first = spec.replace(inter=fabrics[0]) if fabrics else spec
    cluster = resolve_cluster(catalogue, first)

    def group(on: ResolvedCluster) -> SweepGroup:
        return _group(
            on, collective, sizes, dtype=dt, algorithm=algorithm, protocol=protocol, params=params
        )

    groups = [group(cluster)]
    if len(fabrics) > 1:
        if cluster.inter is None:
            raise ClusterError(
                "several {inter} fabrics need more than one node ({nodes})", field="inter"
            )
        seen = {cluster.inter.id}
        for fabric in fabrics[1:]:
            other = resolve_cluster(catalogue, _same_node(cluster, fabric))
            assert other.inter is not None  # the node count is the first cluster's, above 1
            if other.inter.id in seen:
                continue
            seen.add(other.inter.id)
            groups.append(group(_said_node(catalogue, spec, cluster, other, fabric)))
    return SweepResult(
        collective=collective,
        sizes=list(sizes),
        dtype=dt,
        algorithm=algorithm,
        protocol=protocol,
        groups=groups,
    )


def _said_node(
    catalogue: Catalogue,
    spec: ClusterSpec,
    first: ResolvedCluster,
    other: ResolvedCluster,
    fabric: str,
) -> ResolvedCluster:
    """``other`` (a fabric swept on ``first``'s node), with an assumption naming the node it
    would have alone where that is another preset: 'sweep --inter ndr,roce-400g,hdr' priced hdr
    on dgx-h100's node and 'allreduce --inter hdr' on dgx-a100's, and only the heading said so
    (review EB 6)."""
    if first.system is None or spec.system is not None or spec.intra is not None:
        return other
    if spec.gpus_per_node is not None:
        return other
    try:
        alone = resolve_cluster(catalogue, spec.replace(inter=fabric)).system
    except IbcalcError:
        # the fabric alone with these flags is no cluster (its preset's node refuses them): the
        # sweep on the first fabric's node stands, and there is no other node to name
        return other
    if alone is None or alone.id == first.system.id:
        return other
    # the link's own id (a fabric typed 'HDR' is hdr), and 'takes', not 'implies': alone, a
    # fabric no preset comes with takes the default node (review EE 8)
    assert other.inter is not None
    note = (
        f"priced on {first.system.id}'s node, the first fabric's; alone, {other.inter.id} takes "
        f"{alone.id}'s (sweep it alone, or with --system {alone.id}, for that node)"
    )
    return dataclasses.replace(other, assumptions=(note, *other.assumptions))


def _same_node(cluster: ResolvedCluster, fabric: str) -> ClusterSpec:
    """The spec of ``cluster``'s resolved node with ``fabric`` as its scale-out link."""
    return cluster.spec.replace(
        nodes=cluster.nodes,
        gpus_per_node=cluster.gpus_per_node,
        intra=cluster.intra.id if cluster.intra else None,
        inter=fabric,
        system=cluster.system.id if cluster.system else None,
        host_pcie=cluster.host_pcie.id if cluster.host_pcie else None,
    )


def algorithm_lines(
    result: SweepResult, params: CostParams | None = None
) -> dict[Algorithm, list[Estimate]]:
    """One series per algorithm the NCCL-like choice weighed, each as ``--algo A`` reports it,
    with the cost parameters the sweep ran with (``params``; default: the built-in ones: a
    ``--cost-params`` sweep had drawn its choice with the file's and the lines without it).

    Only for a single-cluster sweep with the algorithm left to the model (empty otherwise). Sizes
    where an algorithm does not run, or that are too small, are left out of its series.
    """
    if len(result.groups) != 1 or result.algorithm is not None:
        return {}
    group = result.groups[0]
    used = dict.fromkeys(
        cost.algorithm for est in group.estimates for cost in (est.best, *est.alternatives)
    )
    lines: dict[Algorithm, list[Estimate]] = {}
    for algorithm in used:
        series: list[Estimate] = []
        plan = CollectivePlan(
            group.cluster,
            result.collective,
            dtype=result.dtype,
            algorithm=algorithm,
            protocol=result.protocol,
            params=params,
            sharp_what_if=False,
        )
        for size in result.sizes:
            try:
                series.append(plan.estimate(size))
            except (AlgorithmNotApplicableError, SizeTooSmallError):
                continue
        lines[algorithm] = series
    return lines
