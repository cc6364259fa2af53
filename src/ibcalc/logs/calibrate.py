"""Calibrate the model to a cluster's own nccl-tests runs, and write the result as overrides.

:func:`calibrate` fits what the logs can determine about the cluster they come from, by least
squares over sizes (the squared log error of the predicted time at each row):

* the per-hop latency of each transport (``transport_latency`` of the scale-out link across
  nodes, of the scale-up link inside one), pinned by the small sizes;
* the achievable efficiency of each link class (``efficiency`` of the network and the scale-up
  link), pinned by the large sizes where that link is the bottleneck;
* the NVLS efficiency of the scale-up link (``nvls_efficiency``), when NVLS runs;
* three constants of the cost model when the runs exercise them: ``calibrated.p2p_efficiency``
  (send/receive inside a node), ``calibrated.alltoall_efficiency`` (all-to-all inside a node
  over NVLink or Infinity Fabric) and ``calibrated.nvls_tree_factor`` (NVLS-tree).

The model is a black box here: each candidate value is applied to a copy of the catalogue (or of
the cost parameters), the cluster is resolved again and the model's time evaluated
(:class:`~ibcalc.facade.CollectivePlan`, numbers only), and each parameter is minimised in turn
over a bounded interval (:func:`~ibcalc.logs.fit.minimize_scalar`, a grid then golden section)
before a joint Levenberg-Marquardt refinement. That keeps working whatever the model's formulas
become. A parameter is *determined* only when moving it moves the fitted rows of its own regime
(a latency those of 64 KiB or less, an efficiency those of 64 MiB or more; by 1 % at least) and
in a way the parameters fitted before it do not already (its sensitivity column less than 0.995
alike any one of theirs, and not, to the same tolerance, a combination of them); every other one
is listed with the reason the logs cannot pin it (a single-node log says nothing about the
network; no size of 64 KiB or less; the large sizes are limited by another link ...). The
uncertainty of each value is the Gauss-Newton standard error ``s^2 (J^T J)^-1`` at the optimum,
with ``s^2`` the residual variance, over the values whose columns there are independent; a value
the fit made move the rows as others do has none, and says why.

Each parameter gets one value, whatever clusters the runs come from: when runs of different
clusters (node preset, GPU, scale-up link, network ...; not the node count) move the same fitted
value, the calibration carries a warning naming them and the values they share.

:func:`write_override` writes what was fitted: link values as a catalogue override file (links
replace whole entries, so each fitted link is copied complete with the new values and their
sources), model constants as a cost-parameter override file next to it
(``NAME.cost-params.yaml``) when there are any. Both start with a header naming the source logs
and the date, are validated by the loaders that will read them (``load_catalogue``,
``load_cost_params``) before they are put in place, and are written atomically; an existing file
is kept unless ``force``, and an input is never written over.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import statistics
import tempfile
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple

import yaml
from pydantic import BaseModel, ConfigDict, computed_field

from ibcalc.catalogue.cost_params import builtin_cost_params, load_cost_params
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import CALIBRATION_DOUBT, Catalogue, Link
from ibcalc.catalogue.releases import (
    for_release,
    for_stated_release,
    older_than_compared,
    oldest_compared,
)
from ibcalc.cluster.resolve import (
    CATALOGUE_OVERRIDES_NOTE,
    ClusterSpec,
    ResolvedCluster,
    catalogue_override_notes,
    resolve_cluster,
)
from ibcalc.engine.params import SCHEMA as COST_PARAMS_SCHEMA
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import COST_PARAMETERS_NOTE, Algorithm, Collective, DType
from ibcalc.errors import (
    FieldError,
    IbcalcError,
    InputFileError,
    OutputError,
    WrongTypeError,
    expect_type,
    fill_fields,
)
from ibcalc.facade import CollectivePlan, as_collective, cost_parameter_notes
from ibcalc.fileio import OutputTarget, check_output, same_file, signals_raise, write_text
from ibcalc.listing import listed
from ibcalc.logs.bandwidth import NOT_BROKEN, names_library_choice
from ibcalc.logs.check import (
    check_run,
    expect_log_arguments,
    no_expectation_reason,
    release_params,
)
from ibcalc.logs.cluster import (
    check_rank_count,
    gpus_per_process_said,
    gpus_per_process_words,
    infer_spec,
    resolve_log_cluster,
    with_header_gpus_per_process,
)
from ibcalc.logs.env import LogEnvironment, scan_environment
from ibcalc.logs.expect import catalogue_with_link, predict
from ibcalc.logs.fit import minimize_scalar
from ibcalc.logs.infer import unknown_collective_reason
from ibcalc.logs.parse import LogInput
from ibcalc.logs.records import Row, Run, line_list, run_measurements
from ibcalc.logs.results import (
    BANDWIDTH_MIN_BYTES,
    BANDWIDTH_TOLERANCE,
    GIVEN,
    IMPLAUSIBLE_SPEEDUP,
    LATENCY_MAX_BYTES,
    MIN_PLAUSIBLE_TIME_US,
    Assumption,
    RunCheck,
    eff_pct,
    implausibly_fast,
    named_cause,
)
from ibcalc.logs.selection import run_selection, with_selection
from ibcalc.textsafe import printable
from ibcalc.units import NS_BELOW_S, format_size, format_time, format_us, plural

__all__ = [
    "SIGNIFICANT_ERRORS",
    "Calibration",
    "FittedParameter",
    "RunFit",
    "Undetermined",
    "apply_calibration",
    "calibrate",
    "calibrate_logs",
    "changed",
    "check_override_target",
    "cost_params_path",
    "significant",
    "verdict_text",
    "write_override",
    "written",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: A parameter is determined when moving it changes some fitted row's time by this much.
_SENSITIVITY = 0.01
#: Sensitivity columns this alike (cosine) cannot be told apart.
_COLLINEAR = 0.995
#: Sweeps of bounded 1-D searches before the joint refinement (they only find the basin).
_SWEEPS = 2
#: Where the derivation of a fitted cost constant is recorded (``derived_by`` in the file).
_DERIVED_BY = "ibcalc/logs/calibrate.py::calibrate"


class FittedParameter(BaseModel):
    """One value the logs determine: before and after, its standard error and what pins it.

    ``name`` is ``<link>.<field>`` or ``calibrated.<key>``; ``unit`` is ``s`` for latencies
    and empty for efficiencies and factors; ``rows`` counts the fitted rows it moves.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    name: str
    kind: Literal["link", "cost"]
    target: str
    field: str
    unit: str
    before: float
    value: float
    uncertainty: float | None
    at_bound: bool
    rows: int
    regime: Literal["latency", "bandwidth"]
    #: why a value that moves rows has no standard error (None when it has one)
    uncertainty_reason: str | None = None
    #: True when the fitted rows fix the values with none left over to judge a change by (as
    #: many rows as values): no standard error, and the value is not written
    exact: bool = False
    #: the logs whose rows it moves (empty: none, or not known)
    sources: list[str] = []
    #: the most ranks among the runs whose rows it moves (None: no such run states its ranks);
    #: an all-to-all's cost per message is written with it (``per_message_fit_ranks``), so that
    #: an estimate of more ranks says its message term is an extrapolation
    ranks: int | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def clock(self) -> Literal["hopper"] | None:
        """The GPU clock the value is at: ``hopper`` for an all-to-all's cost per message,
        fitted and written at Hopper's clock as the built-in one is, which an estimate scales by
        Hopper's clock over its GPU's (docs/model.md#gpu-clock); None for a value no clock
        scales."""
        return "hopper" if self.kind == "cost" and self.field == "per_message_latency" else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bound(self) -> Literal["at least", "at most"] | None:
        """For a value that moves no fitted row and that the fit moved: the side of it the runs
        put the true value on (:func:`bound_text`); None for every other value."""
        if self.rows > 0 or not changed(self):
            return None
        return "at least" if self.value > self.before else "at most"


class Undetermined(BaseModel):
    """A parameter the logs cannot determine, and why."""

    model_config = _FROZEN

    name: str
    reason: str


class RunFit(BaseModel):
    """Fit quality on one run: median |relative error| of the time per regime, before and after
    (None where the run has no fitted row of that regime)."""

    model_config = _FROZEN

    source: str
    run_index: int
    collective: str
    rows: int
    #: Median |relative error| of the time (exp of the median |log error|, minus 1) over the
    #: run's latency rows (<= 64 KiB) and bandwidth rows (>= 64 MiB), before and after the fit;
    #: None where the run has no such rows.
    latency_error_before: float | None
    latency_error_after: float | None
    bandwidth_error_before: float | None
    bandwidth_error_after: float | None


class Calibration(BaseModel):
    """What :func:`calibrate` found: fitted values, what could not be determined, fit quality.

    ``rms_before``/``rms_after`` are the root-mean-square log errors of the time over every
    fitted row (latency and bandwidth regimes), ``rms_after`` and ``runs`` with every fitted
    value; ``rms_written`` with only the values written (those :func:`written` keeps), what
    the override file gives, and what the warnings are drawn from. ``assumptions`` are what
    was inferred about the runs' clusters, one line per fact naming the logs it holds for;
    ``warnings`` what the reader must know before using the values (runs of different clusters
    that share a fitted value; from :func:`calibrate_logs`, runs that ``nccl-check`` calls bad
    or corrupt).
    ``link_entries`` are the complete catalogue entries of the links with fitted values,
    as written to the override file; ``cost_entries`` the cost-parameter override mapping
    (groups to entries).
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    inputs: list[str]
    #: The day of this fit (ISO 8601), not of the runs fitted: the text report's header says
    #: "fitted 2026-12-07", the override files' "# fitted: 2026-12-07" (a bare date there, and a
    #: JSON key ``date``, had read as the date of the runs)
    fitted_on: str
    parameters: list[FittedParameter]
    undetermined: list[Undetermined]
    runs: list[RunFit]
    rows: int
    rms_before: float
    rms_after: float
    rms_written: float
    assumptions: list[str]
    warnings: list[str] = []
    link_entries: list[dict[str, Any]]
    cost_entries: dict[str, Any]


# ------------------------------------------------------------------------------- problem setup


@dataclass
class _Case:
    """One run to fit: its cluster spec, collective, dtype and the rows it is fitted on."""

    source: str
    index: int
    spec: ClusterSpec
    collective: Collective
    dtype: str | None
    algorithm: Algorithm | None
    rows: list[Row]
    #: the rank count the log states (None: not stated)
    ranks: int | None = None
    multi: bool = False
    #: how a refusal names the GPUs per process the log gave (None: a flag's, or none)
    gpus_said: str | None = None
    #: NCCL's debug output around the run (a socket transport refuses it by name)
    env: LogEnvironment | None = None
    #: the cluster its log alone gives, where flags were laid over it (None: no flags)
    unflagged: ClusterSpec | None = None
    #: what its log's NCCL_ALGO and NCCL_PROTO rule out (``logs.selection.run_selection``)
    selection: Mapping[str, Any] | None = None
    #: the NCCL release whose tuner constants choose its algorithm (None: the built-in ones),
    #: whether --nccl-version gave it, and the library the log names
    release: str | None = None
    release_given: bool = False
    library: str | None = None
    #: its node stands in for one no rule knows (an AMD GPU's: cluster.AMD_STAND_IN)
    stand_in: bool = False
    up_link: str | None = None
    #: its GPUs meet over an accelerator fabric (``ScaleUpTier.fabric``: not PCIe, not a
    #: bridged pair), where an all-to-all streams at calibrated.alltoall_efficiency
    up_fabric: bool = False
    out_link: str | None = None
    bottleneck: str = ""
    #: what tells its cluster from another's (:func:`_shape`)
    shape: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class _Param:
    kind: Literal["link", "cost"]
    target: str  # link id, or the cost-parameter group
    field: str  # Link attribute, or the cost-parameter key
    regime: Literal["latency", "bandwidth"]
    _: KW_ONLY
    lo: float
    hi: float
    log_scale: bool

    @property
    def name(self) -> str:
        return f"{self.target}.{_FIELD_NAMES.get(self.field, self.field)}"

    @property
    def unit(self) -> str:
        return _UNITS.get(self.field, "")

    @property
    def key(self) -> str:
        """The name in the file (catalogue or cost-parameter key)."""
        return _FIELD_NAMES.get(self.field, self.field)

    def at_bound(self, value: float) -> bool:
        """Whether ``value`` sits at a bound of the range (within 0.1 % of it), as the fit's
        sorting reads it twice."""
        return value <= self.lo * 1.001 or value >= self.hi * 0.999


#: Engine attribute -> the file's key (what a user reads in the override).
_FIELD_NAMES = {
    "transport_latency_s": "transport_latency",
    "ll_net_Bps": "ll_net_bandwidth",
    "per_message_s": "per_message_latency",
}
_ATTRIBUTES = {v: k for k, v in _FIELD_NAMES.items()}
_UNITS = {"transport_latency_s": "s", "ll_net_Bps": "B/s", "per_message_s": "s"}
#: Cost constants runs can pin: (attribute, regime, lo, hi). p2p_efficiency moves send/receive
#: inside a node, alltoall_efficiency an all-to-all's scale-up term over NVLink or Infinity
#: Fabric, nvls_tree_factor NVLS-tree all-reduce, ll_net_bandwidth the
#: LL protocol's small messages across nodes (32-64 KiB).
_COST_PARAMS: tuple[tuple[str, Literal["latency", "bandwidth"], float, float], ...] = (
    ("p2p_efficiency", "bandwidth", 0.02, 1.0),
    ("alltoall_efficiency", "bandwidth", 0.02, 1.0),
    ("nvls_tree_factor", "bandwidth", 0.02, 1.0),
    ("ll_net_Bps", "latency", 1e7, 1e12),
    ("per_message_s", "latency", 1e-8, 1e-3),
)


def _file_value(p: _Param, value: float) -> float | str:
    """A value as an override file writes it (with its unit where it has one, as a link's
    entry writes its own: :func:`_bandwidth_text`, :func:`_time_text`)."""
    if p.unit == "B/s":
        return _bandwidth_text(value)
    if p.unit == "s":
        return _time_text(value)
    return value


@dataclass
class _State:
    """Current parameter values and the model inputs they give."""

    catalogue: Catalogue
    params: CostParams
    values: dict[_Param, float] = field(default_factory=dict)


def _fitted_size(row: Row) -> bool:
    """Whether a row is of the sizes a fit reads: the latency or the bandwidth regime."""
    return row.size_bytes <= LATENCY_MAX_BYTES or row.size_bytes >= BANDWIDTH_MIN_BYTES


def _regime_rows(rows: Iterable[Row]) -> list[Row]:
    return [
        r
        for r in rows
        if r.size_bytes > 0
        # under a microsecond is no measurement (nccl-check's "time implausible"); a table in
        # ms read as us had been fitted on the rows the same report called no measurement
        and r.oop.time_us >= MIN_PLAUSIBLE_TIME_US
        and _fitted_size(r)
        and not _failed_validation(r)
    ]


def _nothing_to_fit(runs: Sequence[Run], row_filter: Callable[[Run, Row], bool] | None) -> str:
    """Why no run has a row to fit: which rows there were, and what kept each out (a log of
    0 us times had been told only that it had no rows of the fitted sizes)."""
    sizes = "64 KiB or less, 64 MiB or more"
    rows = [
        r
        for run in runs
        for r in run.rows
        if r.size_bytes > 0 and _fitted_size(r) and (row_filter is None or row_filter(run, r))
    ]
    if not rows:
        return f"no run has rows of the fitted sizes ({sizes}) to fit"
    zero = [r for r in rows if r.oop.time_us <= 0]
    short = [r for r in rows if 0 < r.oop.time_us < MIN_PLAUSIBLE_TIME_US]
    failed = [r for r in rows if r.oop.time_us >= MIN_PLAUSIBLE_TIME_US and _failed_validation(r)]
    parts = []
    if zero:
        parts.append(f"{len(zero)} with a time of 0 us ({_lines(zero)})")
    if short:
        parts.append(f"{len(short)} timed under {MIN_PLAUSIBLE_TIME_US:g} us ({_lines(short)})")
    if failed:
        parts.append(f"{len(failed)} that failed validation (#wrong; {_lines(failed)})")
    return (
        f"no row to fit: the {plural(len(rows), 'row')} of the fitted sizes ({sizes}) are no "
        f"measurements: {' and '.join(parts)}"
    )


def _lines(rows: Sequence[Row]) -> str:
    """``line 12``, ``lines 12-15`` or ``lines 12, 14, ...`` (:func:`line_list`)."""
    return line_list([r.line for r in rows])


def _failed_validation(row: Row) -> bool:
    """``#wrong`` non-zero out of place or in place: the results are not a measurement."""
    return any((t.wrong or 0) > 0 for t in (row.oop, row.ip) if t is not None)


def _cost_override(key: str, value: float, rows: str) -> dict[str, Any]:
    return {"calibrated": {key: {"value": value, "derived_by": _DERIVED_BY, "rows": rows}}}


def _apply(
    base_catalogue: Catalogue,
    base_params: CostParams,
    values: Mapping[_Param, float],
    calibrated: Mapping[str, Any] | None = None,
) -> tuple[Catalogue, CostParams]:
    """``values`` laid over the catalogue and the cost parameters, with ``calibrated``'s
    entries (as a file writes them) among the cost parameters' ``calibrated`` group."""
    catalogue, params = base_catalogue, base_params
    per_link: dict[str, dict[str, float]] = {}
    cost: dict[str, Any] = {"calibrated": dict(calibrated)} if calibrated else {}
    for p, v in values.items():
        if p.kind == "link":
            per_link.setdefault(p.target, {})[p.field] = v
        else:
            cost.setdefault("calibrated", {})[p.key] = {
                "value": _file_value(p, v),
                "derived_by": _DERIVED_BY,
                "rows": "candidate value during the fit",
            }
    for link_id, update in per_link.items():
        catalogue = catalogue_with_link(catalogue, link_id, **update)
    if cost:
        params = params.with_overrides({"schema": COST_PARAMS_SCHEMA, **cost}, label="calibration")
    return catalogue, params


_Mask = Sequence[Sequence[int]]


def _residuals(
    cases: Sequence[_Case],
    catalogue: Catalogue,
    params: CostParams,
    mask: _Mask | None = None,
) -> list[float] | None:
    """ln(measured / predicted) at every fitted row of every case, or at the rows ``mask``
    keeps (per case, row indexes); None if the model refuses a row."""
    out: list[float] = []
    for i, case in enumerate(cases):
        rows = case.rows if mask is None else [case.rows[j] for j in mask[i]]
        if not rows:
            continue
        # the numbers only (CollectivePlan.quick, the same to the bit as the full estimate):
        # the fit runs the model a few hundred times over every row, and building each
        # estimate's explanation took nine tenths of calibrate's time
        try:
            plan = CollectivePlan(
                resolve_cluster(catalogue, case.spec),
                case.collective,
                dtype=case.dtype or DType.FP32,
                algorithm=case.algorithm,
                params=_params_of(case, params),
            )
            times = {r.size_bytes: plan.time_s(r.size_bytes) for r in rows}
        except IbcalcError:
            return None
        out.extend(math.log(row.oop.time_us * 1e-6 / times[row.size_bytes]) for row in rows)
    return out


#: (release, given, library, selection) -> (the parameters last asked for, those priced so):
#: shared by the runs priced alike (every log of one release), so that a fit step that moves a
#: cost parameter builds each pricing once, not once per run (a fit of 7 logs had taken 2.2 to
#: 2.9 times as long: a review)
_PRICED: dict[tuple[str | None, bool, str | None, str], tuple[CostParams, CostParams]] = {}


def _params_of(case: _Case, params: CostParams) -> CostParams:
    """``params`` as nccl-check prices the case's run: the tuner constants of its release, and
    what its log's NCCL_ALGO and NCCL_PROTO rule out switched off (``params`` itself without
    either), worked out once per parameters and way of pricing."""
    if case.selection is None and case.release is None:
        return params
    key = (case.release, case.release_given, case.library, repr(case.selection))
    cached = _PRICED.get(key)
    if cached is None or cached[0] is not params:
        released = params
        if case.release is not None:
            released = (
                for_release(params, case.release)
                if case.release_given
                else for_stated_release(params, case.release, case.library)
            )
        if len(_PRICED) > 64:
            _PRICED.clear()
        cached = _PRICED[key] = (params, with_selection(released, case.selection))
    return cached[1]


def _sse(residuals: Sequence[float] | None) -> float:
    return math.inf if residuals is None else sum(r * r for r in residuals)


#: Scale of the robust loss (a log error): rows the model misses by more than this weigh in
#: linearly, not squared, so a row or a size range the model's shape cannot follow does not
#: drag every fitted value (soft-L1 loss, as scipy.optimize.least_squares' ``soft_l1``).
_ROBUST_SCALE = 0.1


def _robust(residuals: list[float] | None) -> list[float] | None:
    """Pseudo-residuals whose sum of squares is the soft-L1 loss of ``residuals``:
    sign(r) sqrt(2 c^2 (sqrt(1 + (r / c)^2) - 1)), about r when |r| << c."""
    if residuals is None:
        return None
    c = _ROBUST_SCALE
    return [
        math.copysign(math.sqrt(2 * c * c * (math.sqrt(1 + (r / c) ** 2) - 1)), r)
        for r in residuals
    ]


def _current(p: _Param, catalogue: Catalogue, params: CostParams) -> float | None:
    if p.kind == "link":
        value = getattr(find_link(catalogue, p.target), p.field)
        return None if value is None else float(value)
    value = getattr(params.calibrated, p.field)
    return None if value is None else float(value)


def _candidates(
    cases: Sequence[_Case], catalogue: Catalogue
) -> tuple[list[_Param], list[Undetermined]]:
    """Every parameter the runs' clusters use, latencies first (they are pinned by rows the
    efficiencies barely move), and those ruled out before any fit.

    A scale-up link's latency is a candidate only when a single-node run uses that link: across
    nodes the small sizes are dominated by the network hops, and the two latencies move the
    same rows nearly alike."""
    ups = list(dict.fromkeys(c.up_link for c in cases if c.up_link))
    outs = list(dict.fromkeys(c.out_link for c in cases if c.out_link))
    alone = {c.up_link for c in cases if c.up_link and not c.multi}
    latency: list[_Param] = []
    bandwidth: list[_Param] = []
    ruled_out: list[Undetermined] = []
    for link_id in [*outs, *ups]:
        if link_id in ups and link_id not in outs and link_id not in alone:
            ruled_out.append(
                Undetermined(
                    name=f"{link_id}.transport_latency",
                    reason="no single-node run: across nodes the small sizes are dominated by "
                    "the network hops",
                )
            )
            continue
        latency.append(
            _Param(
                "link", link_id, "transport_latency_s", "latency", lo=0.0, hi=2e-3, log_scale=False
            )
        )
    for link_id in [*outs, *ups]:
        bandwidth.append(
            _Param("link", link_id, "efficiency", "bandwidth", lo=0.02, hi=1.0, log_scale=True)
        )
    for link_id in ups:
        if find_link(catalogue, link_id).nvls_efficiency is not None:
            bandwidth.append(
                _Param(
                    "link", link_id, "nvls_efficiency", "bandwidth", lo=0.02, hi=1.0, log_scale=True
                )
            )
    # the constants of one algorithm come before the links: a sendrecv log pins the
    # point-to-point efficiency, not the ring efficiency of the link every collective uses
    cost = [
        _Param("cost", "calibrated", a, reg, lo=lo, hi=hi, log_scale=True)
        for a, reg, lo, hi in _COST_PARAMS
    ]
    # an all-to-all's per-message cost before the links' latencies: on a log of all-to-all alone
    # the two move the same rows alike, and the rows are n-1 messages a rank (ALCF's 2 x 8 A100:
    # 15 at 2.3 us against one network hop), so the messages are what the log measures; a
    # log of another collective leaves it undetermined, and one beside it pins the latency
    messages = [p for p in cost if p.field == "per_message_s"]
    return messages + latency + [p for p in cost if p.regime == "latency" and p not in messages] + [
        p for p in cost if p.regime == "bandwidth"
    ] + bandwidth, ruled_out


def _network_link(spec: ClusterSpec, catalogue: Catalogue) -> str | None:
    """The scale-out link a spec names or implies, even on one node (where it is not used)."""
    if spec.inter is not None:
        return find_link(catalogue, spec.inter).id
    if spec.system is not None:
        for system in catalogue.systems:
            if spec.system in system.names and system.inter is not None:
                return find_link(catalogue, system.inter).id
    return None


# ------------------------------------------------------------------------------- the fit


def _expect_list(value: object, kind: type, what: str, hint: str) -> None:
    """:class:`~ibcalc.errors.WrongTypeError` unless ``value`` is a list (a sequence, not text)
    of ``kind``, naming the item at fault: ``runs[1] must be a Run, not str``."""
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise WrongTypeError(
            f"{what} must be a list of {kind.__name__}, not {type(value).__name__} ({hint})"
        )
    for i, item in enumerate(value):
        expect_type(item, kind, f"{what}[{i}]", hint)


def _expect_calibration_arguments(
    runs: object,
    cluster: object,
    params: object,
    catalogue: object,
    *,
    sources: object,
    envs: object,
    date: object,
) -> None:
    """:func:`calibrate`'s arguments, each of its kind, else
    :class:`~ibcalc.errors.WrongTypeError`: a parsed log or one run given as ``runs`` had
    failed on "object of type 'ParsedLog' has no len()", a cluster's name on an attribute, a
    date given as a number inside pydantic, and one file's name given as ``sources`` had been
    read a letter a run ('x.log' labelled the first run 'x')."""
    _expect_list(runs, Run, "runs", "a parsed log's .runs is one")
    assert isinstance(runs, Sequence)
    expect_log_arguments(cluster, (ResolvedCluster, ClusterSpec), catalogue, params)
    for value, what in ((sources, "sources"), (envs, "envs")):
        if not isinstance(value, Sequence) or isinstance(value, str | bytes):
            raise WrongTypeError(
                f"{what} must be a list with one item a run, not {type(value).__name__}"
            )
    assert isinstance(sources, Sequence)
    for i, source in enumerate(sources):
        expect_type(source, str, f"sources[{i}]")
    if len(sources) > len(runs):
        raise WrongTypeError(
            f"sources names {plural(len(sources), 'file')} for {plural(len(runs), 'run')}: "
            "give one a run"
        )
    if date is not None:
        expect_type(date, str, "date", "an ISO date, '2025-01-31'")


def calibrate(
    runs: Sequence[Run],
    cluster: ResolvedCluster | ClusterSpec | None = None,
    params: CostParams | None = None,
    catalogue: Catalogue | None = None,
    *,
    sources: Sequence[str] = (),
    envs: Sequence[LogEnvironment | None] = (),
    row_filter: Callable[[Run, Row], bool] | None = None,
    date: str | None = None,
    collective: Collective | str | None = None,
    origins: Mapping[str, str] | None = None,
    nccl_version: str | None = None,
    warned: Collection[str] = (),
) -> Calibration:
    """Fit what ``runs`` determine about their cluster (see the module docstring).

    ``cluster``: a resolved cluster (its spec is used for every run), a :class:`ClusterSpec`
    of flags laid over what each run's log says, or None (each run's cluster from its log).
    ``sources`` names each run's file (for the report and the override header); ``envs`` is each
    run's NCCL debug output (:func:`~ibcalc.logs.env.scan_environment`); ``row_filter`` keeps
    only some rows for the fit (e.g. every other size, to test on the rest); ``collective``, a
    member or a name, replaces what each log says (as ``nccl-check --collective``); ``origins``,
    where fields of ``cluster`` came from when not from the caller's flags (a design file's, as
    ``nccl-check --design`` lists them); ``warned``, the ``sources`` of runs the calibration
    warns of, whose links are written at low confidence. Only rows of the
    latency (<= 64 KiB) and bandwidth (>= 64 MiB) regimes are fitted, the mid sizes being where
    the model is weakest (NCCL's channel trimming). Raises
    :class:`~ibcalc.errors.IbcalcError` when no run can be fitted.
    """
    _expect_calibration_arguments(
        runs, cluster, params, catalogue, sources=sources, envs=envs, date=date
    )
    collective = None if collective is None else as_collective(collective)
    catalogue = catalogue if catalogue is not None else load_catalogue(use_env=False)
    params = params if params is not None else builtin_cost_params()
    date = date or datetime.date.today().isoformat()
    # the override files the fit is made over, whose values are those "in use" (a fit over an
    # earlier fit's file confirmed its values and wrote none, and neither the report nor the
    # new file named the earlier one, without which the new file gives the built-in values)
    over = catalogue_override_notes(catalogue) + cost_parameter_notes(params)
    notes: list[tuple[str, str]] = []  # (the log, what was assumed for its run)
    cases: list[_Case] = []
    labels = list(sources) + [f"run {i + 1}" for i in range(len(sources), len(runs))]
    fitted_for = _fitted_copies(runs, envs)  # a repeated run -> the copy that is fitted
    # (log, the run repeated, whether the log is named) -> the repeating runs
    repeats: dict[tuple[str, str, bool], list[int]] = {}
    for i, run in enumerate(runs):
        label = labels[i]
        run_collective = collective or run.collective
        if run.ranks is not None and run.ranks < 2:
            notes.append((label, "skipped: a run on one GPU moves no data between GPUs"))
            continue
        if run_collective is None:
            why = (
                f"collective {run.raw_collective} is not modelled by ibcalc"
                if run.raw_collective
                else unknown_collective_reason(run)
            )
            notes.append((label, f"skipped: {why}"))
            continue
        if fitted_for.get(i, i) != i:
            # one run pasted twice (a copy with other line endings, launcher prefixes, or one
            # log concatenated into another) would weigh its rows twice
            j = fitted_for[i]
            kept = (
                f"run {_place_in_log(labels, j)} of {labels[j]}" if j < len(sources) else labels[j]
            )
            repeats.setdefault((label, kept, i < len(sources)), []).append(_place_in_log(labels, i))
            continue
        if collective is not None and collective is not run.collective:
            notes.append(
                (
                    label,
                    f"collective = {collective.value} (given; the log says "
                    f"{run.raw_collective or 'nothing'})",
                )
            )
        env = envs[i] if i < len(envs) else None
        gpus_said: str | None = None
        stand_in = False
        if isinstance(cluster, ResolvedCluster):
            spec = cluster.spec
        else:
            spec, inferred, _known = infer_spec(
                run, catalogue, env=env, flags=cluster, origins=origins
            )
            stand_in = any(
                n.field == "system" and n.source == "default" and n.value is not None
                for n in inferred
            )
            notes += [
                (label, f"{n.field} = {n.value} ({_unnested(n.evidence)})")
                if n.value is not None
                # a node no rule knows (an MI250X): the resolver's default, said as nccl-check
                # says it (calibrate had listed neither it nor the network it assumes: a review)
                else (label, f"{n.field}: {_unnested(n.evidence)}")
                for n in inferred
                # a flag is listed where it replaces what the log shows (--inter ndr on a log
                # of EFA): what is fitted then belongs to the flag's link, not the log's
                if (n.source != "flag" or n.evidence != GIVEN)
                and (n.value is not None or n.source == "default")
            ]
            modelled = with_header_gpus_per_process(spec, run, cluster)
            if modelled is not spec:
                gpus_said = gpus_per_process_words(run)
                # the header's -g (one process launching its GPUs' kernels in turn), as
                # nccl-check does: without it a -g 4 log's launches were fitted into the
                # link's transport latency (1.01 us per NVLink hop on sweep 13), which every
                # later estimate of that link then paid
                spec = modelled
                notes.append(
                    (
                        label,
                        f"gpus_per_process = {run.gpus_per_process} "
                        f"({gpus_per_process_said(run)}, nccl-tests -g: the expectation has its "
                        "serial launches)",
                    )
                )
        # what the reader took away or dropped (rows of size 0 are nothing to fit anyway)
        notes += [(label, note) for note in run.notes if "of size 0 skipped" not in note]
        rows = [r for r in run.rows if row_filter is None or row_filter(run, r)]
        failed = [r for r in rows if _failed_validation(r)]
        if failed:
            notes.append(
                (
                    label,
                    f"{plural(len(failed), 'row')} whose results failed validation (#wrong) "
                    f"left out ({_lines(failed)})",
                )
            )
        dtype = run.dtype
        if dtype is not None:
            try:
                DType.parse(dtype)
            except ValueError:
                dtype = None
        short = [r for r in rows if 0 < r.oop.time_us < MIN_PLAUSIBLE_TIME_US and _fitted_size(r)]
        if short:
            # said, as the rows over 4x faster are (a refusal had named those alone)
            notes.append(
                (
                    label,
                    f"{plural(len(short), 'row')} timed under {MIN_PLAUSIBLE_TIME_US:g} us left "
                    f"out: no measurement ({_lines(short)})",
                )
            )
        # what the log's NCCL_ALGO and NCCL_PROTO leave NCCL, as nccl-check expects it: a run
        # limited to Simple had been fitted as if NCCL had chosen LL at small sizes
        said: list[Assumption] = []
        # the tuner constants of the release the log states (or --nccl-version's), as
        # nccl-check expects the run: calibrate had fitted every run with NCCL 2.30.7's choice
        released = release_params(run, params, said, nccl_version)
        selection = run_selection(
            env if env is not None else LogEnvironment(), run_collective, released, said
        )
        notes += [
            (label, f"{a.field} = {a.value} ({a.evidence})")
            if a.value is not None
            else (label, f"{a.field}: {a.evidence}")
            for a in said
        ]
        cases.append(
            _Case(
                label,
                _place_in_log(labels, i) - 1 if i < len(sources) else i,  # its place in its log
                spec,
                run_collective,
                dtype=dtype,
                algorithm=selection.forced,
                selection=selection.overlay,
                release=(
                    nccl_version
                    if nccl_version is not None
                    else run.nccl_version
                    if released is not params
                    else None
                ),
                release_given=nccl_version is not None,
                library=run.library,
                stand_in=stand_in,
                rows=_regime_rows(rows),
                ranks=run.ranks,
                gpus_said=gpus_said,
                env=env,
                unflagged=(
                    infer_spec(run, catalogue, env=env)[0]
                    if isinstance(cluster, ClusterSpec) and cluster != ClusterSpec()
                    else None
                ),
            )
        )
    for (label, kept, named), numbers in repeats.items():
        runs_text = _run_numbers(numbers) if named else "it"
        verb = "holds" if runs_text == "it" or len(numbers) == 1 else "hold"
        notes.append(
            (label, f"skipped: {runs_text} {verb} every row of {kept}, which is fitted once")
        )
    if not cases:
        # every run was skipped: say why (the collective not told, say) rather than blame rows
        skipped = [
            f"{label}: {note.removeprefix('skipped: ')}"
            for label, note in notes
            if note.startswith("skipped: ")
        ]
        if skipped:
            more = f" (and {plural(len(skipped) - 1, 'more run')})" if len(skipped) > 1 else ""
            # a FieldError: the reason may name a field ({collective}), in the caller's words
            raise FieldError(f"no run to fit: {skipped[0]}{more}")
    if not any(c.rows for c in cases):
        raise IbcalcError(_nothing_to_fit(runs, row_filter))
    cases = [c for c in cases if c.rows]
    unpriced: list[str] = []
    first_unpriced: IbcalcError | None = None
    unpriced_sources: set[str] = set()

    for case in cases:
        try:
            resolved = resolve_log_cluster(
                catalogue, case.spec, case.source, gpus_said=case.gpus_said, env=case.env
            )
            check_rank_count(
                resolved.ranks, resolved.nodes, resolved.gpus_per_node, case.ranks, case.source
            )
        except IbcalcError as exc:
            if len(cases) == 1 or not _log_cannot_be_priced(case, catalogue, cluster):
                raise
            # one run the model cannot price as its log describes it does not void the others'
            # fit (nccl-check goes on past it too): said as a warning, with its reason (sweep 27
            # had stopped a fit of all 27 published sweeps)
            reason = exc.template if isinstance(exc, FieldError) else str(exc)
            unpriced.append(f"{reason}; it is left out of the fit")
            first_unpriced = first_unpriced or exc
            unpriced_sources.add(case.source)
            case.rows = []
            continue
        if case.spec.system is None:
            # no preset: the links the resolver took for the node (scale-up nvlink4, scale-out
            # ndr, its NICs), which the fitted values are then written under
            notes += [(case.source, note) for note in resolved.assumptions if "assumed" in note]
        ests = predict(
            resolved,
            case.collective,
            [r.size_bytes for r in case.rows],
            dtype=case.dtype,
            params=_params_of(case, params),
            algorithm=case.algorithm,
        )
        fast = [
            r
            for r, e in zip(case.rows, ests, strict=True)
            if e is not None and implausibly_fast(e.time_s, r)
        ]
        if fast:
            notes.append(
                (
                    case.source,
                    f"{plural(len(fast), 'row')} over {IMPLAUSIBLE_SPEEDUP:g}x faster than "
                    "the model expects left out: no measurement of this cluster "
                    f"({_lines(fast)})",
                )
            )
            keep = [r not in fast for r in case.rows]
            case.rows = [r for r, k in zip(case.rows, keep, strict=True) if k]
            ests = [e for e, k in zip(ests, keep, strict=True) if k]
        dropped = [r for r, e in zip(case.rows, ests, strict=True) if e is None]
        if dropped:
            why = no_expectation_reason(
                resolved,
                case.collective,
                dropped[0],
                dtype=case.dtype,
                params=_params_of(case, params),
                algorithm=case.algorithm,
            )
            notes.append(
                (
                    case.source,
                    f"{plural(len(dropped), 'row')} the model cannot run left out "
                    f"({_lines(dropped)}: {why})",
                )
            )
            case.rows = [r for r, e in zip(case.rows, ests, strict=True) if e is not None]
        if not case.rows:
            continue
        case.multi = resolved.topology.domains > 1 and resolved.inter is not None
        case.up_link = resolved.intra.id if resolved.intra and resolved.topology.m > 1 else None
        up = resolved.topology.up
        case.up_fabric = up is not None and up.fabric and resolved.topology.m > 1
        case.out_link = resolved.inter.id if case.multi and resolved.inter else None
        largest = predict(
            resolved,
            case.collective,
            [case.rows[-1].size_bytes],
            dtype=case.dtype,
            params=_params_of(case, params),
            algorithm=case.algorithm,
        )[0]
        case.bottleneck = largest.best.bottleneck if largest is not None else ""
        case.shape = _shape(resolved, multi=case.multi)
    if first_unpriced is not None and not any(c.rows for c in cases):
        raise first_unpriced  # no run could be priced: the first one's reason, not 'no row'
    # a log left out entirely has no assumptions of a fitted run (sweep 27's five had been
    # listed under 'assumed:' as if fitted: a review); the warning names it
    left_out = unpriced_sources - {c.source for c in cases if c.rows}
    notes = [(label, text) for label, text in notes if label not in left_out]
    # runs on the default node whose links were assumed, not given: once per log, naming the
    # links any of its runs assumed (the last run had decided it: a review)
    defaulted: dict[str, list[_Case]] = {}
    for c in cases:
        if c.rows and (c.spec.system is None or c.stand_in):
            defaulted.setdefault(c.source, []).append(c)
    cases = [c for c in cases if c.rows]
    if not cases:
        # what left them out, where a filter did (a table in ms read as us: its small rows
        # under 1 us, its large ones over 4x faster than the model)
        why_none = [text for _, text in notes if "left out" in text]
        raise IbcalcError(
            "no row left to fit: " + "; ".join(why_none)
            if why_none
            else "the model cannot run any of the rows to fit"
        )

    base = _residuals(cases, catalogue, params)
    if base is None:
        raise IbcalcError("the model cannot run every fitted row")
    candidates, ruled_out = _candidates(cases, catalogue)
    starts = {p: _current(p, catalogue, params) for p in candidates}
    candidates = [p for p in candidates if starts[p] is not None]
    determined, undetermined, masks = _determinable(cases, candidates, starts, catalogue, params)
    undetermined = ruled_out + undetermined
    for link_id in dict.fromkeys(_network_link(c.spec, catalogue) for c in cases if not c.multi):
        if link_id is not None and not any(c.out_link == link_id for c in cases):
            undetermined.append(
                Undetermined(
                    name=f"{link_id}.*",
                    reason="no multi-node run: a single-node log says nothing about the network",
                )
            )

    values = {p: float(starts[p] or 0.0) for p in determined}
    values = _search(cases, determined, values, masks, catalogue=catalogue, params=params)
    # a second look where the fit left the values: one that moved no row at the values in use
    # may move rows there, and is fitted with the others (a log of NDR at 0.4 of its rate on 2 x
    # DGX H100: at the values in use its large rows are NVLS-tree's, so ndr.efficiency moved
    # none, and the fit took the NVLS-tree factor down until NCCL turned to a ring, 10 % off
    # and called a bound, where the NIC's efficiency fits every row; review DX 1)
    late = _second_look(
        cases, candidates, determined, values, starts, catalogue=catalogue, params=params
    )
    if late:
        for p, mask in late:
            determined.append(p)
            masks[p] = mask
            values[p] = float(starts[p] or 0.0)
        now_fitted = {p.name for p, _ in late}
        undetermined = [u for u in undetermined if u.name not in now_fitted]
        values = _search(cases, determined, values, masks, catalogue=catalogue, params=params)

    put_back_names: set[str] = set()

    def put_back(ps: Sequence[_Param], reason: str) -> None:
        """Return ``ps`` to their starting values, listed as not fitted for ``reason``."""
        for p in ps:
            determined.remove(p)
            values[p] = float(starts[p] or 0.0)
            undetermined.append(Undetermined(name=p.name, reason=reason))
            put_back_names.add(p.name)

    put_back(
        _moves_that_cost(cases, determined, values, starts, catalogue=catalogue, params=params),
        "the fit moved it where NCCL's choice of algorithm changes on rows it did not weigh, and "
        "all the rows together fit worse there (it keeps its value)",
    )

    def at_values() -> list[float]:
        """Every fitted row's residual with ``values`` as they stand."""
        return _residuals(cases, *_apply(catalogue, params, values)) or base

    after = at_values()
    no_error: dict[_Param, str] = {}
    exact: set[_Param] = set()
    # a value that moves no fitted row where the fit left it (at a bound of its range, or moved
    # from its value in use) either moved no row on its way there, and the runs say nothing of
    # it: it keeps its value (a perfect 4 x DGX A100 log on NDR, bound by its NICs, had NVLink
    # 3's 0.80 'fitted' to 0.71 and called it at most that); or its move turned NCCL's choice
    # away from its term, and it is a bound, taken back to the value nearest the one in use
    # at which every row is as the fit left it (a perfect 2 x DGX H100 log rendered with
    # nvls_tree_factor 0.5 fits for any value up to about 0.64: the search went to 0.02, and
    # the value had been put back to 0.93 with its rows 17 % off; review DU)
    # the sorting runs again after a value is moved to a better basin, with the rows it moves
    # then (a perfect 8 x DGX B300 log with XDR at 0.5 had NVLink 5's efficiency written 'at
    # least 1' over 0 rows, where it moved no row at its value in use either; review DZ 1)
    for sorting in range(5):
        fitted = _standard_errors(
            cases,
            determined,
            values,
            catalogue=catalogue,
            params=params,
            residuals=after,
            reasons=no_error,
            exact=exact,
        )
        if sorting == 4:  # at most four sortings; the errors are the values' they left
            break
        at_bound = {p: p.at_bound(values[p]) for p in determined}
        idle = [
            p
            for p in determined
            if fitted[p][1] == 0 and (at_bound[p] or _moved(p, values, starts))
        ]
        back = [
            p
            for p in idle
            if _same_rows(
                p, float(starts[p] or 0.0), values, cases, after, catalogue=catalogue, params=params
            )
        ]
        put_back(
            back,
            "no fitted row's time depends on it, at its value in use or where the fit left it: "
            "the runs do not fix it (it keeps its value)",
        )
        better = False
        bounds = [p for p in idle if p not in back]
        for p in bounds:
            values[p] = _nearest_alike(
                p, values, starts, cases, after, catalogue=catalogue, params=params
            )
            # a search that stopped on a plateau can miss a narrow basin between the turn and
            # the value in use (a log rendered with nvls_tree_factor 0.66 had been fitted 'at
            # most 0.648', rms 0.0054, where 0.66 gives 0.00006; review DX 1): taken there, the
            # value moves rows and is no bound, and the others are sorted again
            found = _better_between(
                p, values, float(starts[p] or 0.0), cases, catalogue=catalogue, params=params
            )
            if found is not None:
                values[p] = found
                better = True
                break
        # a turn within what :func:`changed` counts of the value in use is the value in use: it
        # keeps it (roce-400g.efficiency 0.962 -> 0.9648 had read 'confirmed' beside 'the runs
        # do not fix it'; review DX 4)
        near = [p for p in bounds if not _moved(p, values, starts)]
        put_back(
            near,
            "the fit moved it only to where the rows it moves turn, within 0.5 % of its value in "
            "use (0.05 us for a latency): it keeps its value",
        )
        if back or near or better:
            after = at_values()
        if not better:
            break
    at_bound = {p: p.at_bound(values[p]) for p in determined}
    undetermined = _twins_left_out(undetermined, put_back_names)
    row_sources = [c.source for c in cases for _ in c.rows]
    row_ranks = [c.ranks for c in cases for _ in c.rows]
    parameters = [
        FittedParameter(
            name=p.name,
            kind=p.kind,
            target=p.target,
            field=p.key,
            unit=p.unit,
            before=float(starts[p] or 0.0),
            value=values[p],
            uncertainty=fitted[p][0],
            at_bound=at_bound[p],
            rows=fitted[p][1],
            regime=p.regime,
            uncertainty_reason=no_error.get(p),
            exact=p in exact,
            # the logs whose rows it moves: the file had credited each value to every input
            # (an NVLink 4 mesh efficiency fitted on one 4 x H100 log, to a p5 and an A100
            # log too; an SRE's review)
            sources=list(
                dict.fromkeys(
                    s for s, moved in zip(row_sources, fitted[p][2], strict=True) if moved
                )
            ),
            ranks=max(
                (r for r, moved in zip(row_ranks, fitted[p][2], strict=True) if moved and r),
                default=None,
            ),
        )
        for p in determined
    ]
    # the fit quality, and every warning drawn from it, is what the values written give: a
    # value within its standard errors of the one in use is not written, and a report that
    # counted it had promised figures the override file does not give (rms 0.317 -> 0.315
    # where reusing the file gives 0.317; an SRE's review)
    unwritten = [p for p, fp in zip(determined, parameters, strict=True) if not written(fp)]
    fitted_after = after
    if unwritten:
        as_written = {
            p: (float(starts[p] or 0.0) if p in unwritten else values[p]) for p in determined
        }
        cat, par = _apply(catalogue, params, as_written)
        after = _residuals(cases, cat, par) or base
    # the per-run table, the warnings and the file are the values written (a review found the
    # table on every fitted value beside warnings on the written ones quoting other figures);
    # the rms line gives both
    fitted_fits = _run_fits(cases, base, fitted_after)
    written_fits = _run_fits(cases, base, after)
    warnings = unpriced + _mixed_clusters(
        cases, determined, masks, {p: fitted[p][2] for p in determined}
    )
    for source, runs_of in defaulted.items() if determined else []:
        # the file is what is kept: its header says what the values were fitted on (an MI250X
        # run's ndr latency had been written with no word of the NVIDIA default node; a review);
        # only the links assumed, not those given
        assumed = list(
            dict.fromkeys(
                (link, where, role)
                for case in runs_of
                for link, where, role, given in (
                    (case.up_link, "inside", "scale-up", case.spec.intra),
                    (case.out_link, "between", "scale-out", case.spec.inter),
                )
                if link and given is None
            )
        )
        if not assumed:
            continue
        assumed.sort(key=lambda a: a[1] != "inside")  # scale-up first
        links = ", ".join(f"{link} {where}" for link, where, _ in assumed)
        roles = " and ".join(role for _, _, role in assumed)
        plural_s = "s" if len(assumed) > 1 else ""
        warnings.append(
            f"{source}: no node rule knows the GPU, so the run is priced on the default "
            f"node's {roles} link{plural_s} ({links}) and the values are fitted to "
            f"{'them' if plural_s else 'it'}; give the run's node (its preset, or its {roles} "
            f"link{plural_s}) to fit its own"
        )
    warnings += _other_roles(
        cases, catalogue, [p for p, fp in zip(determined, parameters, strict=True) if written(fp)]
    )
    if _rms(after) > _rms(base) * 1.001:  # worse by more than the third digit it prints
        warnings.append(
            f"the fit leaves the rms log error of the time worse ({_rms(base):.3f} -> "
            f"{_rms(after):.3f}): it is a robust fit, which weighs rows the model misses by more "
            "than 10 % less, so its values follow the rows the model does follow; see the fit "
            "quality per run before using them"
        )
    worse = [
        f"{fit.source} (run {fit.run_index + 1}) {regime} {before:.1%} -> {after:.1%}"
        for fit in written_fits
        for regime, before, after in (
            ("latency", fit.latency_error_before, fit.latency_error_after),
            ("bandwidth", fit.bandwidth_error_before, fit.bandwidth_error_after),
        )
        if before is not None and after is not None and after > before + _WORSE_BY
    ]
    if worse:
        # the fit weighs every row: a run's bandwidth rows can pay for its latency rows (a
        # helper's 1 x 8 A100 fit: nvlink3.efficiency 0.80 -> 0.64, bandwidth 2.9 % -> 5.0 %)
        warnings.append(
            "the fit leaves some rows worse than it found them (median error of the time): "
            + "; ".join(worse)
            + ": its values follow the run's other rows; see the fit quality per run before "
            "using them for the rows that got worse"
        )
    # a row the medians hide: the fit can take one row far off to bring the others close (a
    # 16 x 4 H100 all-gather on Slingshot, log13: bandwidth median 83.4 % -> 17.3 %, while its
    # 64 MiB row went from 1.95x to 3.17x its measured time, which nothing said)
    sent = _rows_sent_far(cases, base, after)
    if sent:
        warnings.append(
            "the fit takes some rows further from the measurements than they were, more than "
            f"{_FAR_ROW - 1:.0%} off (size, time measured, predicted before -> after): "
            + "; ".join(sent)
            + ": the medians per run do not show them; do not use the values for those sizes"
        )
    # large rows the fit leaves far off: no value it may fit explains them, and an override
    # written from such a run describes it no better (a 2 x 8 H100 log 39.5 % off at 64 MiB and
    # more came out 39.4 % off, and its values were written without a word)
    far = [
        (fit, full)
        for fit, full in zip(written_fits, fitted_fits, strict=True)
        if fit.bandwidth_error_after is not None and fit.bandwidth_error_after > BANDWIDTH_TOLERANCE
    ]
    # rows the fitted values would explain, but that are left out within their standard
    # errors, are not rows "no value explains" (26.9 % -> 1.2 % with every fitted value)
    unexplained = [
        f"{fit.source} (run {fit.run_index + 1}) {fit.bandwidth_error_after:.1%}"
        for fit, full in far
        if full.bandwidth_error_after is None or full.bandwidth_error_after > BANDWIDTH_TOLERANCE
    ]
    unsure = [
        f"{fit.source} (run {fit.run_index + 1}) {fit.bandwidth_error_after:.1%}, "
        f"{full.bandwidth_error_after:.1%} with every fitted value"
        for fit, full in far
        if full.bandwidth_error_after is not None
        and full.bandwidth_error_after <= BANDWIDTH_TOLERANCE
    ]
    if unexplained:
        warnings.append(
            "the fit leaves large rows (64 MiB and more) far from the measurements (median error "
            "of the time): " + "; ".join(unexplained) + f": beyond {BANDWIDTH_TOLERANCE:.0%}, no "
            "value it may fit explains them; nccl-check names the likely causes"
        )
    if unsure:
        warnings.append(
            "large rows (64 MiB and more) stay far from the measurements with the values written "
            "(median error of the time): " + "; ".join(unsure) + ": the values that would bring "
            "them close are within their standard errors of the ones in use and not written; "
            "more runs of this cluster would settle them"
        )
    # the release each run was priced with: --nccl-version's, else the log's (RCCL's numbers
    # are not NCCL's); the warning had named the log's where the flag replaced it
    priced = (
        {nccl_version}
        if nccl_version is not None
        else {run.nccl_version for run in runs if run.library != "rccl"}
    )
    old = sorted(v for v in priced if v is not None and older_than_compared(v))
    if old and determined:
        # nccl-check says it of such a run; a fit writes it into the cluster's values
        first = ".".join(str(x) for x in oldest_compared())
        warnings.append(
            f"NCCL {', '.join(old)} is older than {first}, the oldest release whose tuner "
            "constants the model was compared with: that NCCL picked algorithms and protocols "
            "with other constants, so part of what this fit puts on the cluster (link "
            "efficiencies, latencies) can be the library's; fit a run of a newer NCCL before "
            "using these values for other runs"
        )
    inputs = list(dict.fromkeys(c.source for c in cases))
    return Calibration(
        inputs=inputs,
        fitted_on=date,
        parameters=parameters,
        undetermined=undetermined,
        runs=written_fits,
        rows=len(base),
        rms_before=_rms(base),
        rms_after=_rms(fitted_after),
        rms_written=_rms(after),
        assumptions=[*over, *_merged_notes(notes)],
        warnings=warnings,
        link_entries=_link_entries(parameters, catalogue, inputs, date, warned=warned),
        cost_entries=_cost_entries(parameters, inputs, date, warned=warned),
    )


#: What tells one cluster from another in :func:`_shape` (the node count does not: one- and
#: two-node runs of the same cluster are what a calibration wants).
_SHAPE_FIELDS = (
    "node preset",
    "GPU architecture",
    "GPUs per node",
    "scale-up link",
    "network",
    "NICs per node",
)


def _shape(resolved: ResolvedCluster, *, multi: bool) -> dict[str, str | None]:
    """The cluster a run ran on, as the model sees it: ``None`` where the run says nothing (the
    network of a single-node run, which it does not use)."""
    up = resolved.intra.id if resolved.intra is not None and resolved.topology.m > 1 else "none"
    return {
        "node preset": resolved.system.id if resolved.system is not None else "none",
        "GPU architecture": resolved.gpu_arch,
        "GPUs per node": str(resolved.gpus_per_node),
        "scale-up link": up,
        "network": resolved.inter.id if multi and resolved.inter is not None else None,
        "NICs per node": str(resolved.nics_per_node) if multi else None,
    }


def _differ(a: Mapping[str, str | None], b: Mapping[str, str | None]) -> bool:
    return any(a[k] is not None and b[k] is not None and a[k] != b[k] for k in _SHAPE_FIELDS)


def _mixed_clusters(
    cases: Sequence[_Case],
    determined: Sequence[_Param],
    masks: Mapping[_Param, _Mask],
    moved: Mapping[_Param, Sequence[bool]],
) -> list[str]:
    """A warning when a fitted value moves rows of runs whose clusters differ (one value was
    fitted to all of them), naming how they differ and the values they share; else none.

    A value moves a run's rows when they depend on it at the built-in values (``masks``) or at
    the fitted ones (``moved``, one flag per fitted row): an efficiency fitted far down can
    make a link the bottleneck of runs it did not limit before."""
    shared: list[str] = []
    involved: dict[int, _Case] = {}
    for p in determined:
        users: list[_Case] = []
        start = 0
        for case, rows in zip(cases, masks[p], strict=True):
            if rows or any(moved[p][start : start + len(case.rows)]):
                users.append(case)
            start += len(case.rows)
        pairs = [
            (a, b) for i, a in enumerate(users) for b in users[i + 1 :] if _differ(a.shape, b.shape)
        ]
        if pairs:
            shared.append(p.name)
            for a, b in pairs:
                involved.setdefault(id(a), a)
                involved.setdefault(id(b), b)
    if not shared:
        return []
    members = list(involved.values())
    keys = [k for k in _SHAPE_FIELDS if len({c.shape[k] for c in members} - {None}) > 1]
    clusters: dict[tuple[str | None, ...], list[str]] = {}
    for case in members:
        labels = clusters.setdefault(tuple(case.shape[k] for k in keys), [])
        if case.source not in labels:
            labels.append(case.source)
    described = [
        f"{', '.join(labels)} ("
        + ", ".join(f"{k} {v}" for k, v in zip(keys, values, strict=True) if v is not None)
        + ")"
        for values, labels in clusters.items()
    ]
    return [
        f"these logs come from different clusters: {' vs '.join(described)}; one value of "
        f"{', '.join(shared)} was fitted to all of them (calibrate each cluster's logs on their "
        "own)"
    ]


def _place_in_log(labels: Sequence[str], i: int) -> int:
    """The 1-based place of run ``i`` among the runs of its log (the runs labelled alike)."""
    return labels[:i].count(labels[i]) + 1


def _run_numbers(numbers: Sequence[int]) -> str:
    """``run 2``, ``runs 2-300`` or ``runs 2, 5, 7-9``: runs of a log by their 1-based place."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
    return f"run{'s' if len(numbers) > 1 else ''} {text}"


def _fitted_copies(runs: Sequence[Run], envs: Sequence[LogEnvironment | None]) -> dict[int, int]:
    """For each run whose measurements (:func:`~ibcalc.logs.records.run_measurements`) another
    run repeats, the index of the copy to fit: the one whose log shows most of NCCL's output (a
    copy without the ``NCCL INFO`` lines leaves the network, NICs and NVLS to presets), else the
    first."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, run in enumerate(runs):
        if run.rows:
            groups.setdefault(run_measurements(run), []).append(i)
    out: dict[int, int] = {}
    for members in groups.values():
        if len(members) > 1:
            kept = max(members, key=lambda i: (_facts(envs, i), -i))
            out.update(dict.fromkeys(members, kept))
    return out


def _facts(envs: Sequence[LogEnvironment | None], i: int) -> int:
    """How many facts NCCL's output around run ``i`` gives (none without it)."""
    env = envs[i] if i < len(envs) else None
    return 0 if env is None else env.facts


def _merged_notes(notes: Iterable[tuple[str, str]]) -> list[str]:
    """One line per distinct assumption, first seen first, naming the logs it applies to (each
    run of a log inferred the same facts again: a log of five runs said each of them five
    times). Where every line holds for the same logs (one log calibrated), the report's heading
    names them already and the lines do not repeat them."""
    logs: dict[str, list[str]] = {}
    for label, text in notes:
        seen = logs.setdefault(text, [])
        if label not in seen:
            seen.append(label)
    if len({label for label, _ in notes}) == 1:
        return list(logs)
    return [f"{', '.join(labels)}: {text}" for text, labels in logs.items()]


def _unnested(evidence: str) -> str:
    """A flag's evidence, "given by the caller (the log shows ...)", as "given; the log shows
    ..." (it is printed in parentheses itself); a design file's, "from the design file r.yaml
    (system)", as "from the design file r.yaml's system"; other evidence as it is."""
    if evidence.startswith(f"{GIVEN} (") and evidence.endswith(")"):
        return f"given; {evidence.removeprefix(f'{GIVEN} (')[:-1]}"
    where, semicolon, said = evidence.partition("; ")
    if (design := _DESIGN_EVIDENCE.fullmatch(where)) is not None:
        # (and what the log states, where the design's value replaces it: the log's words
        # had been run into the key, "(system)'s the log shows ...": review CP)
        return f"from the design file {design[1]}'s {design[2]}{semicolon}{said}"
    return evidence


#: the evidence of a design file's value (``cli.options.design_origins``): its key in
#: parentheses, which may hold one more pair ("inter (or fabric.link)")
_DESIGN_EVIDENCE = re.compile(r"from the design file (.+?) \(((?:[^()]|\([^()]*\))+)\)")


def calibrate_logs(
    logs: Sequence[LogInput],
    cluster: ClusterSpec | None = None,
    params: CostParams | None = None,
    catalogue: Catalogue | None = None,
    *,
    collective: Collective | str | None = None,
    origins: Mapping[str, str] | None = None,
    nccl_version: str | None = None,
) -> Calibration:
    """:func:`calibrate` on every run of ``logs``, each with its file's name and the NCCL debug
    output around it (the lines from the end of the previous run to its own end);
    ``collective`` (a member or a name) replaces what the logs say; ``origins`` and
    ``nccl_version`` as :func:`calibrate`'s."""
    # a parsed log, or one LogInput, had failed on "'ParsedLog' object has no attribute
    # 'text'" or "'LogInput' object is not iterable"
    _expect_list(logs, LogInput, "logs", "ibcalc.logs.read_log(path) makes one")
    collective = None if collective is None else as_collective(collective)
    runs: list[Run] = []
    sources: list[str] = []
    envs: list[LogEnvironment | None] = []
    for log in logs:
        previous_end = 0
        env: LogEnvironment | None = None
        lines = log.text.split("\n")  # once, not once a run (scan_environment)
        for run in log.parsed.runs:
            runs.append(run)
            sources.append(log.label)
            # what the shell exported before this run's lines reaches it too
            env = scan_environment(
                lines,
                previous_end + 1,
                run.line_end,
                None if env is None else env.exports,
                run_line=run.line_start,
            )
            envs.append(env)
            previous_end = run.line_end
    checked = _checked_runs(
        runs,
        sources,
        envs,
        flags=cluster,
        params=params,
        catalogue=catalogue,
        collective=collective,
        origins=origins,
        nccl_version=nccl_version,
    )
    _refuse_contradicted(checked)
    # the links fitted to a run warned of carry it in the file, not in its comments alone: a
    # degraded Slingshot run's efficiency of 0.055 had been read back at the built-in entry's
    # 'medium' confidence, 220 ms for 13.4 ms with no word of it (review BY)
    unhealthy = _unhealthy_runs(checked)
    result = calibrate(
        runs,
        cluster,
        params,
        catalogue,
        sources=sources,
        envs=envs,
        collective=collective,
        origins=origins,
        nccl_version=nccl_version,
        warned={source for source, _ in unhealthy},
    )
    if not unhealthy:
        return result
    return result.model_copy(update={"warnings": [w for _, w in unhealthy] + result.warnings})


def _log_cannot_be_priced(
    case: _Case, catalogue: Catalogue, cluster: ResolvedCluster | ClusterSpec | None
) -> bool:
    """Whether a run that failed to resolve fails as its own log gives it, not through flags a
    caller laid over it: those are the caller's to mend (refused, naming the log), where a log
    the model cannot price is left out of a fit of several (a review: --no-nvls, which changes
    nothing of sweep 27's sockets, had turned its skip into a refusal of the whole fit)."""
    if isinstance(cluster, ResolvedCluster):
        return False
    if case.unflagged is None:
        return True
    try:
        resolve_log_cluster(catalogue, case.unflagged, case.source, env=case.env)
    except IbcalcError:
        return True
    return False


def _other_roles(
    cases: Sequence[_Case], catalogue: Catalogue, written_params: Sequence[_Param]
) -> list[str]:
    """A link's rate fitted from GPU-to-GPU traffic over it that the catalogue's presets also use
    as their NICs' host link: the override holds those NICs to the fitted rate (a host link's
    latency is no NIC's, so a fitted latency is not named). A cross-socket
    PCIe pair (sweep 23) wrote pcie4.efficiency 0.468, which then slowed a 2 x DGX A100
    all-gather of 1 GiB from 5.28 to 8.66 ms, unsaid (a review)."""
    out: list[str] = []
    rates = (p.target for p in written_params if p.kind == "link" and p.field == "efficiency")
    for link_id in dict.fromkeys(rates):
        if not any(c.up_link == link_id for c in cases):
            continue
        hosts = [s.id for s in catalogue.systems if s.host_pcie == link_id]
        if not hosts:
            continue
        shown = listed(hosts, "preset", limit=4)
        out.append(
            f"{link_id} is fitted from GPU-to-GPU traffic over it, and it is also the host link "
            f"of the NICs of {plural(len(hosts), 'preset')} ({shown}): with this override their "
            "network is held to its fitted rate; use the file for estimates of this cluster only"
        )
    return out


class _Checked(NamedTuple):
    """One run nccl-check judged for a calibration: its log's label, its name in warnings
    ('a.txt (run 2)') and the check."""

    source: str
    name: str
    check: RunCheck


def _checked_runs(
    runs: Sequence[Run],
    sources: Sequence[str],
    envs: Sequence[LogEnvironment | None],
    *,
    flags: ClusterSpec | None,
    params: CostParams | None,
    catalogue: Catalogue | None,
    collective: Collective | None,
    origins: Mapping[str, str] | None,
    nccl_version: str | None = None,
) -> list[_Checked]:
    """``nccl-check``'s judgement of every run calibrate fits, with the run's name; runs the
    check cannot judge are left out."""
    out: list[_Checked] = []
    fitted_for = _fitted_copies(runs, envs)
    for i, (run, source, env) in enumerate(zip(runs, sources, envs, strict=True)):
        if (collective or run.collective) is None or (run.ranks is not None and run.ranks < 2):
            continue
        if fitted_for.get(i, i) != i:
            continue  # a copy of a run that calibrate skips, as here
        try:
            checked = check_run(
                run,
                flags=flags,
                env=env,
                params=params,
                catalogue=catalogue,
                source=source,
                collective=collective,
                origins=origins,
                nccl_version=nccl_version,
            )
        except IbcalcError:
            continue
        out.append(_Checked(source, f"{source} (run {sources[:i].count(source) + 1})", checked))
    return out


def _refuse_contradicted(checked: Sequence[_Checked]) -> None:
    """Refuse to fit a run whose rank count the log does not give (nccl-check assumes the
    default's), or whose log contradicts a flag outright (``nccl-check``'s high-confidence
    errors: another GPU than --system's, another collective than --collective's; and another
    network than the one NCCL's transport line names, EFA's latency had been written as ndr's:
    review DC): the values would be fitted to hardware or a formula the run did not use, and
    written under its names."""
    for _, run_name, result in checked:
        guessed = next(
            (a for a in result.assumptions if a.field == "ranks" and a.source == "default"), None
        )
        if guessed is not None:
            # a sendrecv, broadcast or reduce table alone: nccl-check judges it against the
            # default node count, and a fit would write the default network's efficiency from a
            # 2-GPU PCIe pair (0.431 for ndr, from sweep 26's table)
            cause, _, give = str(guessed.evidence).partition(": ")
            remedy = give.rpartition("; ")[2].replace(" to judge it", " to fit it")
            raise FieldError(f"{run_name}: {cause}, so nothing is fitted; {remedy}")
        for finding in result.findings:
            if (
                finding.kind == "flag_mismatch" and finding.severity == "error"
            ) or finding.kind == "network_mismatch":
                cause = finding.cause.split(":")[0]
                first, *rest = finding.evidence or [""]
                said = f" ({first})" if first else ""
                remedy = f"; {rest[-1]}" if rest else ""
                raise FieldError(f"{run_name}: {cause}, so nothing is fitted{said}{remedy}")


#: The median efficiency at large sizes (of the expected busbw) from which a run whose likeliest
#: cause is a rate "below the catalogue's figure, not broken" is calibrated without a warning:
#: a policy, between nccl-check's ``low`` line (0.6) and its ``ok`` one (0.85); a run slowed
#: 1.3x reads about 0.77, one slowed 1.6x about 0.62 (the median, not the lowest: sweep 22's
#: 64 MiB row at 53 % is a late ramp)
_TRUSTED_SHORTFALL = 0.7


def _unhealthy_runs(checked: Sequence[_Checked]) -> list[tuple[str, str]]:
    """One warning per run that ``nccl-check`` judges ``bad`` or ``corrupt``, or ``low`` with a
    likely cause of warning severity: a fit to a
    degraded run describes the fault (a fallback to TCP, a missing NIC), not the fabric
    (docs/nccl-check.md, "Calibrate"). Runs the check cannot judge are not named. Each with
    the run's log (its label)."""
    out: list[tuple[str, str]] = []
    for source, run_name, result in checked:
        top = result.findings[0] if result.findings else None
        # a flag the log makes doubtful (GB300 trays checked as gb200-nvl72 run NDR where its
        # NICs are XDR): the values would be fitted to the flag's links (a review). Its doubts
        # begin "perhaps not"; the warning that another preset of the GPU is priced alike says
        # the flag is fine, and is not repeated (a review of the first form)
        out += [
            (
                source,
                f"nccl-check warns of {run_name}: "
                + f.cause.replace("expectations below", "expectations")
                + "; the values are fitted to the cluster as given",
            )
            for f in result.findings
            if f.kind == "flag_mismatch"
            and f.severity == "warning"
            and f.confidence != "low"
            and f.cause.startswith("perhaps not")
        ]
        if result.verdict == "corrupt":
            out.append(
                (
                    source,
                    f"nccl-check calls {run_name} corrupt: some of its rows failed validation or "
                    "are no measurement. The fit leaves those rows out; check the run before "
                    "trusting the rest",
                )
            )
            continue
        beyond = next(
            (
                f
                for f in result.findings
                if f.kind == "faster_than_expected" and f.severity != "info"
            ),
            None,
        )
        if beyond is not None:
            # a fit would take the speed-up into the cluster's links (QA: a run at 166 % of
            # the expected busbw drove nvlink4.nvls_efficiency to its bound of 1 unremarked)
            out.append(
                (
                    source,
                    f"nccl-check calls {run_name} faster than any published run over the model "
                    f"({beyond.evidence[0] if beyond.evidence else 'at large sizes'}): the cluster "
                    "given is likely not the one that ran (more NICs, in-network reduction, a "
                    "newer GPU); values fitted to it describe another cluster",
                )
            )
            continue
        top_cause = named_cause(result.findings)
        if top_cause is not None and names_library_choice(top_cause):
            # no fault, but no tree either: a fit would price the tree this model expects at the
            # ring's speed (2 x p4d on NCCL 2.9.9 took efa-100g's efficiency from 0.97 to 0.54,
            # unwarned once its verdict was low; a review)
            out.append(
                (
                    source,
                    f"nccl-check finds that {run_name} ran its large sizes as a ring where the "
                    "model expects a tree or in-network reduction (the library's choice, not a "
                    "fault): values fitted to it would price that algorithm at the ring's speed; "
                    "calibrate on runs of the algorithm the model expects",
                )
            )
            continue
        large = [r.efficiency for r in result.rows if r.regime == "bandwidth"]
        typical = statistics.median(large) if large else 0.0
        warned = next(
            (
                f
                for f in result.findings
                if f.severity == "warning"
                and f.kind != "flag_mismatch"
                and not (NOT_BROKEN in f.cause and typical >= _TRUSTED_SHORTFALL)
            ),
            None,
        )
        if (
            result.verdict == "low"
            and result.min_bandwidth_efficiency is not None
            and warned is not None
        ):
            # a rate somewhat below the catalogue's that nccl-check calls no fault is what a
            # calibration is for (review BZ: healthy sweeps 14 and 22 had been warned of and
            # their links written at low confidence); any other [warning] among its causes is
            # warned of, as is a shortfall past _TRUSTED_SHORTFALL (review CA: an erratic run
            # whose first cause was 'not broken', and a run slowed 1.6x fitted at 0.60, had
            # been written at high confidence unremarked)
            # docs/nccl-check.md's rule (calibrate only on ok, or low with [info] notes) had been
            # held for bad runs alone: seven runs slowed 1.3x, each low with a [warning] cause,
            # were fitted unremarked, one 2 x DGX A100 run into nvlink3 at 0.49 (review BY)
            out.append(
                (
                    source,
                    f"nccl-check calls {run_name} low (its lowest efficiency at 64 MiB and more "
                    f"is {eff_pct(result.min_bandwidth_efficiency)} of the expected busbw) and "
                    f"names a likely cause ({warned.cause.split(':')[0]}): values fitted to it may "
                    "describe that fault, not the fabric; calibrate on runs it judges ok, or low "
                    "with [info] notes only",
                )
            )
            continue
        if result.verdict != "bad" or result.min_bandwidth_efficiency is None:
            continue
        if top is not None and top.kind == "low_bandwidth" and top.severity == "info":
            continue  # below the band only where nccl-check finds no fault (a later ramp)
        cause = (
            f"; likeliest cause: {top.cause.split(':')[0]}"
            if top is not None and top.severity != "info"
            else ""
        )
        out.append(
            (
                source,
                f"nccl-check calls {run_name} bad (its lowest efficiency at 64 MiB and more is "
                f"{eff_pct(result.min_bandwidth_efficiency)} of the expected busbw{cause}). Values "
                "fitted to a faulty run describe the fault, not the fabric: calibrate on healthy "
                "runs",
            )
        )
    return out


def _to_u(p: _Param, x: float) -> float:
    """The coordinate the joint refinement works in: log for factors and bandwidths, the value
    in microseconds for latencies (which may be 0)."""
    return x * 1e6 if p.field == "transport_latency_s" else math.log(x)


def _from_u(p: _Param, u: float) -> float:
    if p.field == "transport_latency_s":
        return min(max(u * 1e-6, 0.0), p.hi)
    return min(max(math.exp(u), p.lo), p.hi)


def _levenberg_marquardt(
    cases: Sequence[_Case],
    determined: Sequence[_Param],
    start: Mapping[_Param, float],
    catalogue: Catalogue,
    params: CostParams,
    *,
    max_iter: int = 40,
) -> dict[_Param, float]:
    """Joint least-squares refinement of ``determined`` from ``start`` (Levenberg-Marquardt,
    forward-difference Jacobian, values kept inside their bounds)."""
    values = dict(start)
    if not determined:
        return values

    def residuals(vals: Mapping[_Param, float]) -> list[float] | None:
        cat, par = _apply(catalogue, params, vals)
        return _robust(_residuals(cases, cat, par))

    res = residuals(values)
    if res is None:
        return values
    sse = _sse(res)
    damping = 1e-3
    gain = 0.0
    for _ in range(max_iter):
        jac: list[list[float]] = []  # one column per parameter
        for p in determined:
            u = _to_u(p, values[p])
            h = 1e-4 if p.field != "transport_latency_s" else max(1e-3, abs(u) * 1e-4)
            moved = residuals({**values, p: _from_u(p, u + h)})
            if moved is None:
                moved = residuals({**values, p: _from_u(p, u - h)})
                h = -h
            if moved is None:
                jac.append([0.0] * len(res))
                continue
            jac.append([(m - r) / h for m, r in zip(moved, res, strict=True)])
        k = len(determined)
        jtj = [
            [sum(a * b for a, b in zip(jac[i], jac[j], strict=True)) for j in range(k)]
            for i in range(k)
        ]
        jtr = [sum(a * b for a, b in zip(jac[i], res, strict=True)) for i in range(k)]
        improved = False
        for _attempt in range(8):
            lhs = [
                [jtj[i][j] + (damping * (jtj[i][i] or 1.0) if i == j else 0.0) for j in range(k)]
                for i in range(k)
            ]
            inv = _invert(lhs)
            if inv is None:
                damping *= 10
                continue
            step = [-sum(inv[i][j] * jtr[j] for j in range(k)) for i in range(k)]
            trial = {p: _from_u(p, _to_u(p, values[p]) + step[i]) for i, p in enumerate(determined)}
            trial_res = residuals(trial)
            trial_sse = _sse(trial_res)
            if trial_res is not None and trial_sse < sse:
                gain = (sse - trial_sse) / max(sse, 1e-300)
                values, res, sse = trial, trial_res, trial_sse
                damping = max(damping / 3, 1e-9)
                improved = True
                break
            damping *= 4
        if not improved or gain < 1e-9:
            break
    return values


def _fit_one(
    p: _Param,
    values: Mapping[_Param, float],
    mask: _Mask,
    cases: Sequence[_Case],
    *,
    catalogue: Catalogue,
    params: CostParams,
    local: bool,
) -> float:
    """The value of ``p`` minimising the squared log error of the rows it moves, the others
    held. The first sweep searches the whole interval; later ones near the current value."""

    def cost(x: float) -> float:
        cat, par = _apply(catalogue, params, {**values, p: x})
        return _sse(_robust(_residuals(cases, cat, par, mask)))

    current = values[p]
    latency = p.field == "transport_latency_s"
    if local:
        if latency and current < 1e-8:
            lo, hi = 1e-9, 2e-6
        else:
            lo, hi = max(current / 1.5, p.lo, 1e-9), min(current * 1.5, p.hi)
        best = minimize_scalar(cost, lo, hi, grid=5, log_scale=True, rel_tol=1e-2)
    else:
        lo = 1e-9 if latency else p.lo
        best = minimize_scalar(cost, lo, p.hi, grid=15, log_scale=True, rel_tol=1e-2)
    if latency and cost(0.0) <= best.cost:
        return 0.0
    return best.x


def _rms(residuals: Sequence[float]) -> float:
    return math.sqrt(sum(r * r for r in residuals) / len(residuals))


def _loss(residuals: list[float] | None) -> float:
    """The robust loss over every fitted row (:func:`_robust`), inf if the model refuses one."""
    robust = _robust(residuals)
    return math.inf if robust is None else sum(r * r for r in robust)


def _moves_that_cost(
    cases: Sequence[_Case],
    determined: Sequence[_Param],
    values: Mapping[_Param, float],
    starts: Mapping[_Param, float | None],
    *,
    catalogue: Catalogue,
    params: CostParams,
) -> list[_Param]:
    """The fitted values to put back where they started, because the rows fit better so.

    Each value's search weighs the rows it moved at the start; moved far, a value can switch
    NCCL's choice on rows it did not weigh (a perfect 2 x DGX A100 log over RoCE 200G: NVLink 3
    0.80 -> 0.656 took the tree to a ring, rms 0.000 -> 0.031). Tried one at a time, the value
    whose return lowers the loss over every row most goes back, until none does."""
    current = dict(values)
    loss = _loss(_residuals(cases, *_apply(catalogue, params, current)))
    back: list[_Param] = []
    while True:
        best: tuple[float, _Param] | None = None
        for p in determined:
            if p in back:
                continue
            trial = {**current, p: float(starts[p] or 0.0)}
            trial_loss = _loss(_residuals(cases, *_apply(catalogue, params, trial)))
            if trial_loss < loss * (1 - 1e-9) and (best is None or trial_loss < best[0]):
                best = (trial_loss, p)
        if best is None:
            return back
        loss, p = best
        current[p] = float(starts[p] or 0.0)
        back.append(p)


def _sensitivity(
    cases: Sequence[_Case],
    p: _Param,
    start: float,
    *,
    catalogue: Catalogue,
    params: CostParams,
    base: Sequence[float],
) -> list[float] | None:
    """Change of ln(time) at each fitted row when ``p`` moves by a finite step."""
    if p.field == "transport_latency_s":
        step = max(0.5 * start, 5e-6)
        moved = start + step
    elif start <= 0:
        # a value in use of 0 (an all-to-all's cost per message switched off in a file): a
        # fraction of it moves nothing, and sweep 09 had pushed its 48.6 us of messages into
        # HDR's transport latency, calling the messages independent of its rows; probed at the
        # middle of its range (log scale) instead
        moved = math.sqrt(p.lo * p.hi)
    else:
        moved = start * 0.8 if start * 0.8 >= p.lo else start * 1.2
    cat, par = _apply(catalogue, params, {p: moved})
    res = _residuals(cases, cat, par)
    if res is None:
        return None
    return [b - r for b, r in zip(base, res, strict=True)]  # ln(t_moved / t_base)


def _determinable(
    cases: Sequence[_Case],
    candidates: Sequence[_Param],
    starts: Mapping[_Param, float | None],
    catalogue: Catalogue,
    params: CostParams,
) -> tuple[list[_Param], list[Undetermined], dict[_Param, _Mask]]:
    """The parameters the rows determine, those they do not (with the reason), and for each
    determined one the rows it moves (the fit evaluates only those)."""
    base = _residuals(cases, catalogue, params)
    assert base is not None
    regimes = [
        ("latency" if r.size_bytes <= LATENCY_MAX_BYTES else "bandwidth")
        for c in cases
        for r in c.rows
    ]
    has = {reg: reg in regimes for reg in ("latency", "bandwidth")}
    determined: list[_Param] = []
    columns: list[list[float]] = []
    basis: list[list[float]] = []  # the determined columns, orthonormalised in turn
    out: list[Undetermined] = []
    for p in candidates:
        start = float(starts[p] or 0.0)
        size = "64 KiB or less" if p.regime == "latency" else "64 MiB or more"
        if not has[p.regime]:
            out.append(Undetermined(name=p.name, reason=f"no fitted row of {size}"))
            continue
        column = _sensitivity(cases, p, start, catalogue=catalogue, params=params, base=base)
        if column is None or max((abs(x) for x in column), default=0.0) < _SENSITIVITY:
            out.append(Undetermined(name=p.name, reason=_insensitive_reason(p, cases)))
            continue
        # a latency is read off the small sizes, an efficiency off the large ones: a 64 MiB
        # row that moves with a latency is a slow ramp, not a latency (sweep 21's 820 us at
        # 64 MiB made nvlink4's transport latency 476 us)
        own = [x for x, regime in zip(column, regimes, strict=True) if regime == p.regime]
        if max((abs(x) for x in own), default=0.0) < _SENSITIVITY:
            other = "larger" if p.regime == "latency" else "smaller"
            launches = _serial_launches(cases) if p.field == "per_message_s" else ""
            out.append(
                Undetermined(
                    name=p.name,
                    reason=f"no fitted row of {size} depends on it; only {other} rows move with it"
                    + (f": {launches} sets the small sizes' time" if launches else ""),
                )
            )
            continue
        twin = next(
            (
                q
                for q, col in zip(determined, columns, strict=True)
                if _cosine(col, column) > _COLLINEAR
            ),
            None,
        )
        if twin is not None:
            out.append(
                Undetermined(
                    name=p.name,
                    reason=f"moves the same rows in the same proportion as {twin.name}: the "
                    "logs cannot separate the two (it keeps its value)",
                )
            )
            continue
        unexplained = _beyond(column, basis)
        if unexplained is None:
            # no single value moves the rows alike, but several together do (p2p_efficiency
            # with both NVLink's and PCIe's efficiency on two sendrecv logs): the matrix of the
            # fit would be singular and every standard error lost
            alike = _most_alike(column, determined, columns)
            out.append(
                Undetermined(
                    name=p.name,
                    reason=f"moves the rows as {_as_they_do(alike)}: the logs cannot separate "
                    f"it from {'it' if len(alike) == 1 else 'them'} (it keeps its value)",
                )
            )
            continue
        determined.append(p)
        columns.append(column)
        basis.append(unexplained)
    masks: dict[_Param, _Mask] = {}
    for p, column in zip(determined, columns, strict=True):
        per_case: list[list[int]] = []
        k = 0
        for case in cases:
            per_case.append([j for j in range(len(case.rows)) if abs(column[k + j]) > 1e-4])
            k += len(case.rows)
        masks[p] = per_case
    return determined, out, masks


def _twins_left_out(undetermined: Sequence[Undetermined], left_out: set[str]) -> list[Undetermined]:
    """``undetermined`` with each value left out as another's twin, where that other was put
    back too (``left_out``), saying so: both keep their values, and the reason no longer points
    at a value as if it were fitted."""
    return [
        u.model_copy(update={"reason": f"{u.reason}; {twin} is not fitted either"})
        if (twin := _twin_named(u.reason, left_out)) is not None
        else u
        for u in undetermined
    ]


def _twin_named(reason: str, names: set[str]) -> str | None:
    """The first of ``names`` that ``reason`` (an :class:`Undetermined` reason) gives as the value
    it moves rows like, or None."""
    if not reason.startswith(("moves the same rows", "moves the rows as")):
        return None
    head = reason.split(":", 1)[0]
    return next((n for n in sorted(names) if n in head.split()), None)


def _as_they_do(alike: Sequence[_Param]) -> str:
    """``a does`` or ``a and b do together``: the values a column moves the rows as."""
    return f"{_joined([q.name for q in alike])} {'does' if len(alike) == 1 else 'do together'}"


def _joined(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _beyond(column: Sequence[float], basis: Sequence[Sequence[float]]) -> list[float] | None:
    """The unit part of ``column`` that the orthonormal ``basis`` does not span (Gram-Schmidt,
    twice for accuracy), or None when ``column`` is (almost) a combination of the basis: the sine
    of its angle to the basis's span is under ``sqrt(1 - _COLLINEAR**2)`` (0.0999), as between two
    columns 0.995 alike."""
    norm = math.sqrt(sum(x * x for x in column))
    rest = list(column)
    for _ in range(2):
        for b in basis:
            dot = sum(x * y for x, y in zip(rest, b, strict=True))
            rest = [x - dot * y for x, y in zip(rest, b, strict=True)]
    left = math.sqrt(sum(x * x for x in rest))
    # the sine of the angle between the column and the span, against that of two columns
    # _COLLINEAR alike
    if norm == 0 or left / norm < math.sqrt(1 - _COLLINEAR**2):
        return None
    return [x / left for x in rest]


def _most_alike(
    column: Sequence[float], determined: Sequence[_Param], columns: Sequence[Sequence[float]]
) -> list[_Param]:
    """The determined values whose columns combine into ``column``: the least-squares
    combination's terms of a tenth or more of the largest (at most three, largest first)."""
    gram = [[sum(a * b for a, b in zip(ci, cj, strict=True)) for cj in columns] for ci in columns]
    inv = _invert(gram)
    if inv is None:  # pragma: no cover - the columns kept are independent by construction
        return list(determined[:1])
    rhs = [sum(a * b for a, b in zip(c, column, strict=True)) for c in columns]
    coef = [sum(inv[i][j] * rhs[j] for j in range(len(rhs))) for i in range(len(rhs))]
    size = [abs(k) * math.sqrt(sum(x * x for x in c)) for k, c in zip(coef, columns, strict=True)]
    ranked = sorted(range(len(size)), key=lambda i: -size[i])
    return [determined[i] for i in ranked[:3] if size[i] >= 0.1 * size[ranked[0]]]


def _insensitive_reason(p: _Param, cases: Sequence[_Case]) -> str:
    users = [c for c in cases if p.target in (c.up_link, c.out_link)]
    if p.kind == "cost":
        if p.field == "p2p_efficiency":
            return (
                "the fitted rows do not depend on it (the model applies it to sendrecv inside "
                "a node)"
            )
        if p.field == "alltoall_efficiency":
            links = sorted(
                {
                    c.up_link
                    for c in cases
                    if c.collective is Collective.ALL_TO_ALL and c.up_link and not c.up_fabric
                }
            )
            if links and not any(
                c.collective is Collective.ALL_TO_ALL and c.up_fabric for c in cases
            ):
                # a PCIe or bridged pair's all-to-all had been told the share applies 'over
                # NVLink', which an NVLink bridge is
                return (
                    f"the fitted all-to-alls' GPUs meet over {', '.join(links)}, PCIe or an "
                    "NVLink bridge, where the model keeps the link's rate (it applies the share "
                    "over NVLink switches and meshes, Infinity Fabric and other accelerator "
                    "fabrics)"
                )
            return (
                "the fitted rows do not depend on it (the model applies it to an all-to-all's "
                "bytes over NVLink or Infinity Fabric)"
            )
        if p.field == "ll_net_Bps":
            return (
                "no fitted row runs LL across a plugin transport (EFA, TCPX, CXI), the only "
                "network the term applies to"
            )
        if p.field == "per_message_s":
            return _messages_unseen_reason(cases)
        return (
            "no fitted row is limited by NVLS-tree's NVLS step (NVLS inside nodes joined by "
            "a network)"
        )
    if p.field == "transport_latency_s":
        return "the small sizes do not depend on it (other latency terms dominate them)"
    if p.field == "nvls_efficiency":
        return "no fitted row runs NVLS, or NVLS is not the bottleneck where it runs"
    limits = sorted({c.bottleneck for c in users if c.bottleneck})
    where = f": the large sizes are limited by {'; '.join(limits)}" if limits else ""
    return f"the large sizes do not depend on it{where}"


def _messages_unseen_reason(cases: Sequence[_Case]) -> str:
    """Why no fitted row depends on an all-to-all's cost per message: no run is an all-to-all,
    or the ones that are have their small sizes set by something else (one process launching
    its GPUs' kernels in turn: sweep 02's -g 8 rows to 64 KiB sit at the launch floor, 34.7 us,
    and had been said to be no all-to-all at all)."""
    if not any(c.collective is Collective.ALL_TO_ALL for c in cases):
        return "no fitted run is an all-to-all (it prices each message a rank posts to a peer)"
    launches = _serial_launches(cases)
    if launches:
        return f"the all-to-all rows do not depend on it: {launches} sets their time"
    return "the all-to-all rows do not depend on it (other latency terms dominate them)"


def _serial_launches(cases: Sequence[_Case]) -> str:
    """``one process launching its 8 GPUs' kernels in turn (nccl-tests -g 8)`` where an
    all-to-all run has one process drive several GPUs (its small sizes sit at that launch
    floor), else empty."""
    serial = sorted(
        {
            c.spec.gpus_per_process
            for c in cases
            if c.collective is Collective.ALL_TO_ALL and c.spec.gpus_per_process > 1
        }
    )
    if not serial:
        return ""
    counts = " or ".join(str(g) for g in serial)
    return f"one process launching its {counts} GPUs' kernels in turn (nccl-tests -g {counts})"


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return abs(sum(x * y for x, y in zip(a, b, strict=True))) / (na * nb)


def _standard_errors(
    cases: Sequence[_Case],
    determined: Sequence[_Param],
    values: Mapping[_Param, float],
    *,
    catalogue: Catalogue,
    params: CostParams,
    residuals: Sequence[float],
    reasons: dict[_Param, str],
    exact: set[_Param],
) -> dict[_Param, tuple[float | None, int, list[bool]]]:
    """Gauss-Newton standard error of each value, how many rows it moves, and which (one flag
    per fitted row); ``reasons`` gets why a value that moves rows has none, ``exact`` the
    values the rows fix with none left over."""
    n, k = len(residuals), len(determined)
    jac: list[list[float]] = []
    counts: list[int] = []
    rows: list[list[bool]] = []
    for p in determined:
        x = values[p]
        h = max(abs(x) * 1e-3, 1e-9 if p.field == "transport_latency_s" else 1e-6)
        if x + h > p.hi:  # a value at (or within a step of) its upper bound: step down
            h = -h
        cat, par = _apply(catalogue, params, {**values, p: x + h})
        moved = _residuals(cases, cat, par)
        if moved is None:
            jac.append([0.0] * n)
            counts.append(0)
            rows.append([False] * n)
            continue
        # d ln(t)/dp = -(d residual/dp)
        col = [(r0 - r1) / h for r0, r1 in zip(residuals, moved, strict=True)]
        jac.append(col)
        typical = max(abs(x), 5e-6) if p.field == "transport_latency_s" else abs(x)
        rows.append([abs(c * typical) >= _SENSITIVITY / 10 for c in col])
        counts.append(sum(rows[-1]))
    out: dict[_Param, tuple[float | None, int, list[bool]]] = {
        p: (None, counts[i], rows[i]) for i, p in enumerate(determined)
    }
    # a value that moves no row has no standard error, and its empty column would make the
    # whole matrix singular: the others' errors come from the columns that move rows. Nor has
    # one whose column at the fitted values is a combination of the others' (the test of
    # _determinable, at the start values, cannot see that the fit made two alike: p2p and
    # NVLink 4's efficiency on one sendrecv log once got standard errors of 2.7 million)
    live: list[int] = []
    basis: list[list[float]] = []
    for i in range(k):
        if counts[i] == 0:
            continue
        unexplained = _beyond(jac[i], basis)
        if unexplained is None:
            alike = _most_alike(jac[i], [determined[j] for j in live], [jac[j] for j in live])
            reasons[determined[i]] = (
                f"no standard error: at the fitted values it moves the rows as "
                f"{_as_they_do(alike)}, so the runs fix only their combination"
            )
            continue
        live.append(i)
        basis.append(unexplained)
    dof = n - len(live)
    if dof <= 0 and live:
        # one 8 GiB row had fitted nvls_tree_factor 0.93 -> 0.942 and written it: the row fixes
        # the value exactly, and nothing is left over to tell a change from the run's noise
        for i in live:
            exact.add(determined[i])
            reasons[determined[i]] = (
                f"no standard error: {plural(n, 'fitted row')} for {plural(len(live), 'value')} "
                f"{'leaves' if n == 1 else 'leave'} none over to judge the change by"
            )
        return out
    if not live:
        return out
    s2 = sum(r * r for r in residuals) / dof
    jtj = [[sum(a * b for a, b in zip(jac[i], jac[j], strict=True)) for j in live] for i in live]
    inv = _invert(jtj)
    if inv is None:
        return out
    for row, i in enumerate(live):
        if inv[row][row] >= 0:
            out[determined[i]] = (math.sqrt(s2 * inv[row][row]), counts[i], rows[i])
    return out


def _invert(matrix: Sequence[Sequence[float]]) -> list[list[float]] | None:
    """Inverse of a small square matrix by Gauss-Jordan elimination (None when singular)."""
    k = len(matrix)
    a = [[*row, *(1.0 if i == j else 0.0 for j in range(k))] for i, row in enumerate(matrix)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        div = a[col][col]
        a[col] = [x / div for x in a[col]]
        for r in range(k):
            if r != col and a[r][col] != 0.0:
                factor = a[r][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col], strict=True)]
    return [row[k:] for row in a]


def _median_abs(values: Sequence[float]) -> float | None:
    return math.expm1(statistics.median(abs(v) for v in values)) if values else None


#: How much worse (in median relative error of the time) a run's latency or bandwidth rows may
#: come out of a fit before the calibration warns: one percentage point.
_WORSE_BY = 0.01


#: A fitted row the fit takes this many times off its measured time, one way or the other,
#: and :data:`_FARTHER` times further off than it was, is named in a warning.
_FAR_ROW = 1.5
_FARTHER = 1.25


def _rows_sent_far(
    cases: Sequence[_Case], before: Sequence[float], after: Sequence[float]
) -> list[str]:
    """Per run, the fitted rows (``before`` and ``after``: ln(measured / predicted), as
    :func:`_residuals`) that the fit takes more than :data:`_FAR_ROW` times off the measured
    time and :data:`_FARTHER` times further off than they were: the log, run, and each row's
    size and times (the first five)."""
    out: list[str] = []
    i = 0
    for case in cases:
        far = [
            f"{format_size(row.size_bytes)} {format_time(row.oop.time_us * 1e-6)} (predicted "
            f"{format_time(row.oop.time_us * 1e-6 * math.exp(-b))} -> "
            f"{format_time(row.oop.time_us * 1e-6 * math.exp(-a))})"
            for row, b, a in zip(case.rows, before[i:], after[i:], strict=False)
            if abs(a) > math.log(_FAR_ROW) and abs(a) > abs(b) + math.log(_FARTHER)
        ]
        i += len(case.rows)
        if far:
            out.append(f"{case.source} (run {case.index + 1}) {listed(far, 'row')}")
    return out


def _run_fits(
    cases: Sequence[_Case], before: Sequence[float], after: Sequence[float]
) -> list[RunFit]:
    out: list[RunFit] = []
    i = 0
    for case in cases:
        n = len(case.rows)
        b, a = before[i : i + n], after[i : i + n]
        lat = [j for j, r in enumerate(case.rows) if r.size_bytes <= LATENCY_MAX_BYTES]
        bw = [j for j, r in enumerate(case.rows) if r.size_bytes >= BANDWIDTH_MIN_BYTES]
        out.append(
            RunFit(
                source=case.source,
                run_index=case.index,
                collective=case.collective.value,
                rows=n,
                latency_error_before=_median_abs([b[j] for j in lat]),
                latency_error_after=_median_abs([a[j] for j in lat]),
                bandwidth_error_before=_median_abs([b[j] for j in bw]),
                bandwidth_error_after=_median_abs([a[j] for j in bw]),
            )
        )
        i += n
    return out


def apply_calibration(
    calibration: Calibration, catalogue: Catalogue, params: CostParams
) -> tuple[Catalogue, CostParams]:
    """``catalogue`` and ``params`` with every fitted value laid over them, in memory: the fit
    itself, as ``benchmarks/calibrate_logs.py`` scores it. :func:`write_override` writes only
    those that differ from the values in use by more than their noise (:func:`written`), so the
    files give this model where every value is written."""
    values: dict[_Param, float] = {}
    for p in calibration.parameters:
        attr = _ATTRIBUTES.get(p.field, p.field)
        values[_Param(p.kind, p.target, attr, p.regime, lo=0.0, hi=1.0, log_scale=False)] = p.value
    # the ranks an all-to-all's cost per message rests on, as the file gives them
    ranks = next(
        (p.ranks for p in calibration.parameters if p.field == "per_message_latency"), None
    )
    extra = (
        {"per_message_fit_ranks": {"value": ranks, "derived_by": _DERIVED_BY, "rows": "fitted"}}
        if ranks is not None
        else {}
    )
    return _apply(catalogue, params, values, extra)


# ------------------------------------------------------------------------------- the files


def _fmt_value(p: FittedParameter, value: float) -> str:
    if p.unit == "s":
        if 0 < abs(value) < NS_BELOW_S:  # in ns as format_time prints
            return f"{value * 1e9:.4g} ns"
        return f"{format_us(float(f'{value * 1e6:.4g}'))} us"
    if p.unit == "B/s":
        return f"{value / 1e9:.4g} GB/s"
    return f"{value:.4g}"


def _pm(p: FittedParameter) -> str:
    """`` +- <standard error>``, or why there is none (``(no standard error: ...)``)."""
    if p.uncertainty is not None:
        return f" +- {_fmt_value(p, p.uncertainty)}"
    return f" ({p.uncertainty_reason})" if p.uncertainty_reason else ""


def _logs_of_all(fitted: Sequence[FittedParameter], inputs: Sequence[str]) -> list[str]:
    """The logs any of ``fitted`` is credited to, each once."""
    return list(dict.fromkeys(s for p in fitted for s in _logs_of(p, inputs)))


def _logs_of(p: FittedParameter, inputs: Sequence[str]) -> Sequence[str]:
    """The logs a fitted value is credited to: those whose rows it moves, else every input."""
    return p.sources or inputs


def _why(p: FittedParameter, inputs: Sequence[str], date: str) -> str:
    pm = _pm(p)
    bound = f"; {bound_text(p)}" if bound_text(p) else ""
    return (
        f"ibcalc calibrate {date}: {_fmt_value(p, p.value)}{pm}, least squares over "
        f"{plural(p.rows, 'row')} of {printable(', '.join(_logs_of(p, inputs)), None)} (was "
        f"{_fmt_value(p, p.before)}{bound})"
    )


def _bandwidth_text(bps: float) -> str:
    return f"{bps / 1e9:.12g} GB/s"


def _time_text(seconds: float) -> str:
    return f"{seconds * 1e6:.12g} us"


def link_entry(link: Link) -> dict[str, Any]:
    """A catalogue entry (the YAML mapping of ``data/links.yaml``) for ``link``.

    Built from the model's fields under their file keys (the aliases): the model's own dump is
    the published JSON of ``ibcalc links``, in other keys and units.
    """
    data: dict[str, Any] = {}
    for name, info in type(link).model_fields.items():
        value = getattr(link, name)
        if value is None:
            continue
        key = info.alias or name
        if name.endswith("_Bps"):
            value = _bandwidth_text(float(value))
        elif name.endswith("_s"):
            value = _time_text(float(value))
        elif isinstance(value, Enum):
            value = value.value
        elif isinstance(value, list):
            value = [v.value if isinstance(v, Enum) else v for v in value]
        data[key] = value
    if data.get("transport_latency") == _time_text(0.0):
        del data["transport_latency"]
    return data


def _search(
    cases: Sequence[_Case],
    determined: Sequence[_Param],
    values: Mapping[_Param, float],
    masks: Mapping[_Param, _Mask],
    *,
    catalogue: Catalogue,
    params: CostParams,
) -> dict[_Param, float]:
    """``determined`` fitted from ``values``: one sweep of bounded 1-D searches over each whole
    interval finds the basin (the model's algorithm switches make the error surface kinked far
    from it); a joint Levenberg-Marquardt refinement then settles correlated values together."""
    found = dict(values)
    for sweep in range(_SWEEPS):
        moved = 0.0
        for p in determined:
            x = _fit_one(
                p, found, masks[p], cases, catalogue=catalogue, params=params, local=sweep > 0
            )
            scale = max(abs(found[p]), 1e-9 if p.field == "transport_latency_s" else 1e-6)
            moved = max(moved, abs(x - found[p]) / scale)
            found[p] = x
        if moved < 1e-2:
            break
    return _levenberg_marquardt(cases, determined, found, catalogue, params)


def _second_look(
    cases: Sequence[_Case],
    candidates: Sequence[_Param],
    determined: Sequence[_Param],
    values: Mapping[_Param, float],
    starts: Mapping[_Param, float | None],
    *,
    catalogue: Catalogue,
    params: CostParams,
) -> list[tuple[_Param, _Mask]]:
    """The candidates left out at the values in use that the rows determine where the fit left
    ``values`` (:func:`_determinable` there, the fitted values first), with the rows each moves.
    Asked only where the fit moved a value until it moves no row (it turned NCCL's choice away
    from its term, or another term took over): elsewhere the values in use and the fitted ones
    bind the same rows, and a second look had only refitted noise (sweep 07 on half its sizes:
    held-out busbw 3.7 % -> 5.6 %)."""
    left = [p for p in candidates if p not in determined]
    moved = [p for p in determined if _moved(p, values, starts)]
    if not left or not moved:
        return []
    here = {p: values[p] if p in values else starts[p] for p in candidates}
    cat, par = _apply(catalogue, params, values)
    found, _, masks = _determinable(cases, [*determined, *left], here, cat, par)
    if all(p in found for p in moved):
        return []
    return [(p, masks[p]) for p in found if p not in determined]


def _better_between(
    p: _Param,
    values: Mapping[_Param, float],
    before: float,
    cases: Sequence[_Case],
    *,
    catalogue: Catalogue,
    params: CostParams,
) -> float | None:
    """A value of ``p`` between ``values[p]`` and ``before`` (its value in use) at which every
    row together fits better, by more than 0.1 % of the loss, or None."""
    at = values[p]
    lo, hi = min(at, before), max(at, before)
    if not lo < hi:
        return None

    def loss(x: float) -> float:
        return _loss(_residuals(cases, *_apply(catalogue, params, {**values, p: x})))

    here = loss(at)
    best = minimize_scalar(loss, lo, hi, grid=15, log_scale=lo > 0 and p.log_scale, rel_tol=1e-3)
    return best.x if best.cost < here * (1 - 1e-3) else None


def _same_rows(
    p: _Param,
    x: float,
    values: Mapping[_Param, float],
    cases: Sequence[_Case],
    here: Sequence[float],
    *,
    catalogue: Catalogue,
    params: CostParams,
) -> bool:
    """Whether every fitted row's time is the same with ``p`` at ``x`` as with ``values``
    (``here``: the residuals at ``values``)."""
    there = _residuals(cases, *_apply(catalogue, params, {**values, p: x}))
    if there is None or len(there) != len(here):
        return False
    return all(abs(a - b) <= 1e-9 for a, b in zip(there, here, strict=True))


def _moved(
    p: _Param, values: Mapping[_Param, float], starts: Mapping[_Param, float | None]
) -> bool:
    """Whether the fit moved ``p`` from its value in use by more than :func:`changed` counts."""
    before = float(starts[p] or 0.0)
    return abs(values[p] - before) > _unchanged_within(p.unit, before)


def _nearest_alike(
    p: _Param,
    values: Mapping[_Param, float],
    starts: Mapping[_Param, float | None],
    cases: Sequence[_Case],
    here: Sequence[float],
    *,
    catalogue: Catalogue,
    params: CostParams,
) -> float:
    """The value of ``p`` nearest its value in use, between that and where the fit left it,
    at which every fitted row's time is as the fit left it (``here``), to 1 % of what
    :func:`changed` counts: by bisection, as the rows turn where NCCL's choice does."""
    alike, other = values[p], float(starts[p] or 0.0)
    step = _unchanged_within(p.unit, other) / 100
    for _ in range(64):  # a bisection halves the gap: 64 halvings reach any float's spacing
        if abs(other - alike) <= step:
            break
        mid = (alike + other) / 2
        if _same_rows(p, mid, values, cases, here, catalogue=catalogue, params=params):
            alike = mid
        else:
            other = mid
    return alike


def bound_text(p: FittedParameter) -> str:
    """What a value that moves no fitted row means, or ``""`` for one that moves rows.

    The fit moved it from ``before`` until another term took over every row it had bound, or
    NCCL's choice turned away from its term, and took it back to the value nearest ``before``
    with every row as it left them: the runs say only that the true value lies on that side of
    it, not where (a 2 x 8 MI355X and a 2 x 4 H100 log with xGMI at 0.7: at least 0.7298, the
    RoCE network binding each row from there).
    """
    if p.rows > 0:
        return ""
    if p.bound is None:
        return "no fitted row moves with it: the runs do not fix it"
    return (
        "a bound, with the other values as fitted: no fitted row moves with it; the runs say "
        f"only that it is {p.bound} this value"
    )


def clock_text(p: FittedParameter) -> str:
    """``at Hopper's clock`` for a value an estimate scales by Hopper's clock over its GPU's (an
    all-to-all's cost per message: 2.31 us fitted on A100s is 3.24 us a message on them), else
    ``""``: every place that shows the value says so, lest it be read as the GPU's own."""
    return "at Hopper's clock" if p.clock == "hopper" else ""


def changed(p: FittedParameter) -> bool:
    """True when a fitted value differs from the one in use (by more than 0.5 %, or 0.05 us for
    a latency); the others are confirmed."""
    return abs(p.value - p.before) > _unchanged_within(p.unit, p.before)


def _unchanged_within(unit: str, before: float) -> float:
    """How far a value may move from ``before`` and count as unchanged (:func:`changed`): 0.05 us
    for a latency, 0.5 % of it for the others."""
    return 5e-8 if unit == "s" else 0.005 * abs(before)


#: A change is written only when it is at least this many standard errors: a smaller one is
#: the fit's noise as much as the cluster's (0.10 +- 0.79 us of transport latency moved the
#: override for nothing).
SIGNIFICANT_ERRORS = 2.0


def significant(p: FittedParameter) -> bool:
    """True when the change from the value in use is at least :data:`SIGNIFICANT_ERRORS`
    standard errors (or has none to compare with, unless the rows fix it :attr:`exactly
    <FittedParameter.exact>`)."""
    if p.uncertainty is None:
        return not p.exact
    return abs(p.value - p.before) >= SIGNIFICANT_ERRORS * p.uncertainty


def written(p: FittedParameter) -> bool:
    """True for the values an override file carries: :func:`changed` and :func:`significant`."""
    return changed(p) and significant(p)


def verdict_text(p: FittedParameter) -> str:
    """What became of a fitted value: ``fitted`` (written), or why not."""
    if written(p):
        return "fitted"
    if changed(p):
        if p.exact:
            return "fixed by as many rows as values (not written)"
        return f"within {SIGNIFICANT_ERRORS:g} std. errors of the value in use (not written)"
    return "confirmed (not written)"


def _link_entries(
    parameters: Sequence[FittedParameter],
    catalogue: Catalogue,
    inputs: Sequence[str],
    date: str,
    *,
    warned: Collection[str] = (),
) -> list[dict[str, Any]]:
    """The catalogue entries of the links with written values; a link fitted to a log whose
    run the calibration warned of (``warned``: the logs' labels) gets low confidence and a note
    saying so, which ``links show`` and every estimate's confidence line carry."""
    out: list[dict[str, Any]] = []
    by_link: dict[str, list[FittedParameter]] = {}
    for p in parameters:
        if p.kind == "link" and written(p):
            by_link.setdefault(p.target, []).append(p)
    for link_id, fitted in by_link.items():
        link = find_link(catalogue, link_id)
        update: dict[str, Any] = {}
        for p in fitted:
            # six significant digits: far below any fit's uncertainty, and readable
            update[_ATTRIBUTES.get(p.field, p.field)] = float(f"{p.value:.6g}")
            update[f"{p.field}_source"] = _why(p, inputs, date)
        names = ", ".join(p.field for p in fitted)
        credited = _logs_of_all(fitted, inputs)
        logs = printable(", ".join(credited), None)  # escapes, as the file's text must be
        update["sources"] = [f"ibcalc calibrate {date} on {logs}", *link.sources]
        note = f"{names} calibrated to {logs} (fitted {date})."
        doubtful = [log for log in credited if log in warned]
        if doubtful:
            note += (
                f" Fitted to a run of {printable(', '.join(doubtful), None)} "
                f"{CALIBRATION_DOUBT} (a fault or the library's choice that nccl-check finds "
                "in it): the values may describe that, not the fabric."
            )
            update["confidence"] = "low"
        update["notes"] = f"{note} {link.notes}" if link.notes else note
        out.append(link_entry(link.model_copy(update=update)))
    return out


def _cost_entries(
    parameters: Sequence[FittedParameter],
    inputs: Sequence[str],
    date: str,
    *,
    warned: Collection[str] = (),
) -> dict[str, Any]:
    """The cost-parameter entries with written values; one fitted to a log whose run the
    calibration warned of says so in its provenance, as a link's low confidence does (a
    NVLS-tree factor fitted to a run with its large sizes slowed 2x had been written as any
    other: review CO)."""
    entries: dict[str, Any] = {}
    for p in parameters:
        if p.kind != "cost" or not written(p):
            continue
        pm = _pm(p)
        value: float | str = round(p.value, 6)
        if p.unit == "B/s":
            value = f"{p.value / 1e9:.6g} GB/s"
        elif p.unit == "s":
            value = f"{p.value * 1e6:.6g} us"
        logs = _logs_of(p, inputs)
        doubtful = [log for log in logs if log in warned]
        entries.setdefault(p.target, {})[p.field] = {
            "value": value,
            "derived_by": _DERIVED_BY,
            "rows": f"{plural(p.rows, 'row')} of {printable(', '.join(logs), None)} "
            f"(fitted {date}); "
            f"fit {_fmt_value(p, p.value)}{pm}, was {_fmt_value(p, p.before)}"
            + (f"; {clock_text(p)} (docs/model.md#gpu-clock)" if clock_text(p) else "")
            # a bound says so, as a link's source does (review DX 3)
            + (f"; {bound_text(p)}" if bound_text(p) else "")
            + (
                f"; fitted to a run of {printable(', '.join(doubtful), None)} "
                f"{CALIBRATION_DOUBT} (a fault or the "
                "library's choice that nccl-check finds in it): the value may describe that, not "
                "the fabric"
                if doubtful
                else ""
            ),
        }
        if p.field == "per_message_latency" and p.ranks is not None:
            # the ranks its rows had, as the built-in value's entry gives them: an all-to-all of
            # more then says its message term is an extrapolation (facade._message_rows_known)
            entries[p.target]["per_message_fit_ranks"] = {
                "value": p.ranks,
                "derived_by": _DERIVED_BY,
                "rows": f"the most ranks among the runs per_message_latency is fitted on "
                f"({printable(', '.join(logs), None)})",
            }
    return entries


def cost_params_path(path: str | os.PathLike[str]) -> Path:
    """Where the cost-parameter override goes for a catalogue override at ``path``:
    ``NAME.cost-params.yaml`` beside it."""
    target = Path(path)
    stem = target.name[: -len(target.suffix)] if target.suffix else target.name
    return target.with_name(f"{stem}.cost-params{target.suffix or '.yaml'}")


def _refuse_cost_params_name(path: str | os.PathLike[str]) -> None:
    """Refuse a catalogue-override name shaped like its companion's (``x.cost-params.yaml``):
    it would get the links, and the constants ``x.cost-params.cost-params.yaml``. Refuse a
    ``.json`` name too: the overrides are YAML, which no JSON reader takes (``-o site.json``
    had written YAML into ``site.json`` and ``site.cost-params.json``)."""
    target = Path(path)
    if target.suffix.lower() == ".json":
        raise OutputError(
            f"{target}: the overrides are YAML (read back with --catalogue), not JSON; give "
            f"-o {target.with_suffix('.yaml')} (--format json prints the fit as JSON)"
        )
    stem = target.name[: -len(target.suffix)] if target.suffix else target.name
    if stem.endswith(".cost-params"):
        plain = target.with_name(stem.removesuffix(".cost-params") + (target.suffix or ".yaml"))
        raise OutputError(
            f"{target}: -o names the catalogue override (links), and this is the name of its "
            f"cost-parameter companion; give -o {plain} (the constants then go to {target})"
        )


def _header(kind: str, calibration: Calibration, use: str, names: Mapping[str, str] | None) -> str:
    lines = [
        f"# ibcalc calibrate: {kind} fitted to nccl-tests runs.",
        f"# source logs: {', '.join(calibration.inputs)}",
        f"# fitted: {calibration.fitted_on} (the day of this fit, not of the runs)",
        f"# use: {use}",
        f"# fit: rms log error of the time {calibration.rms_before:.3f} -> "
        f"{calibration.rms_written:.3f} over {plural(calibration.rows, 'row')} with the values "
        "written",
    ]
    lines += [
        f"# fitted over: {a} (the values in use below are with it: give it too, before this file)"
        for a in calibration.assumptions
        if a.startswith((CATALOGUE_OVERRIDES_NOTE, COST_PARAMETERS_NOTE))
    ]
    lines += [f"# warning: {w}" for w in calibration.warnings]
    # how NCCL's choice was priced (the release's tuner constants, the log's NCCL_ALGO and
    # NCCL_PROTO): the fitted values hold for runs priced the same way
    lines += [
        # a field named as a mark ({nccl_version}) by the caller's name for it (the CLI's flag,
        # --nccl-version: a person reads this file), else by its plain name, as str() of an
        # error is
        f"# priced with: {fill_fields(a, names if names is not None else lambda f: f)}"
        for a in calibration.assumptions
        if any(k in a for k in ("tuner_constants = ", "NCCL_ALGO=", "NCCL_PROTO="))
        # a setting that changed nothing priced nothing
        and not any(k in a for k in ("is not applied", "no change", "gives no list"))
    ]
    for p in calibration.parameters:
        pm = _pm(p)
        what = verdict_text(p)
        clock = f" ({clock_text(p)})" if clock_text(p) else ""
        bound = f" ({bound_text(p)})" if bound_text(p) else ""
        lines.append(
            f"# {what}: {p.name} {_fmt_value(p, p.before)} -> {_fmt_value(p, p.value)}{pm}{clock}"
            f"{bound}"
        )
    for u in calibration.undetermined:
        lines.append(f"# not determined: {u.name}: {u.reason}")
    # control characters escaped: a log named with an escape sequence had put it raw into a
    # comment, and the file failed its own read-back (review DH)
    return "\n".join(printable(line.replace("\n", " "), None) for line in lines) + "\n"


def _dump(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)


def special_target_refusal(target: Path) -> OutputError:
    """The refusal of a special file (``/dev/stdout``, a pipe) as ``-o`` of a calibration that
    fitted constants: their file would have to go beside it."""
    return OutputError(
        f"{target}: a special file; constants were fitted too, and their override goes "
        "beside the catalogue override: give -o a regular file name"
    )


def write_override(
    calibration: Calibration,
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    inputs: Sequence[str | os.PathLike[str]] = (),
    names: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write the calibration as override files and return their paths.

    ``names`` gives the caller's name for a field its headers name (the CLI's flags:
    ``nccl_version`` -> ``--nccl-version``); a field not in it, or every field without it, is
    named plainly.

    ``path`` receives the catalogue override (links); the cost-parameter override, when model
    constants were fitted, goes to :func:`cost_params_path` of it. Each file is checked by the
    loader that will read it, written to a temporary file in the target directory and moved into
    place. Raises :class:`~ibcalc.errors.OutputError` when a target exists and ``force`` is
    False, when a target is one of ``inputs``, or when it cannot be written; both targets are
    checked before either file is written, and both are written to temporary files before
    either is moved into place. Where no constant was fitted and a cost-parameter override
    from an earlier run lies beside ``path``, it would no longer belong with the new file (its
    header says to use the two together): with ``force`` the new file is staged, the old
    constants removed, and the file moved into place (where they cannot be removed nothing is
    replaced); without it the write is refused before anything is written (a review: a second
    run with ``--force`` had left the first run's constants beside its links).
    """
    _refuse_cost_params_name(path)
    target = Path(path)
    # with two files, the figures in each header are those of both together: each names the
    # other (a review: reused alone as its header said, each gave other figures, 0.114 and
    # 0.347 against the 0.098 both give)
    both = (
        f" with --cost-params {shlex.quote(cost_params_path(target).name)} (the fit's figures "
        "are those of both files)"
        if calibration.cost_entries
        else ""
    )
    catalogue_text = _header(
        "catalogue override (links)",
        calibration,
        f"--catalogue {shlex.quote(target.name)} (or IBCALC_CATALOGUE={shlex.quote(target.name)})"
        + both,
        names,
    ) + _dump({"schema": "ibcalc-catalogue/1", "links": calibration.link_entries})
    first = _check_one(target, force=force, inputs=inputs)
    checked: list[tuple[OutputTarget, str, Callable[[Path], object]]] = [
        (first, catalogue_text, lambda p: load_catalogue([p], use_env=False))
    ]
    if calibration.cost_entries:
        if first.direct:
            # /dev/null, /dev/stdout, a pipe: the second file would land beside the device
            # (/dev/null.cost-params.yaml), not where the user looks
            raise special_target_refusal(target)
        cost_target = cost_params_path(target)
        cost_text = _header(
            "cost-parameter override",
            calibration,
            f"IBCALC_COST_PARAMS={shlex.quote(cost_target.name)} (or --cost-params "
            f"{shlex.quote(cost_target.name)})"
            + (
                f" with --catalogue {shlex.quote(target.name)} (the fit's figures are those of "
                "both files)"
                if calibration.link_entries
                else ""
            ),
            names,
        ) + _dump({"schema": COST_PARAMS_SCHEMA, **calibration.cost_entries})
        checked.append(
            (
                _check_one(cost_target, force=force, inputs=inputs),
                cost_text,
                lambda p: load_cost_params([p], use_env=False),
            )
        )
    if len(checked) == 1 and checked[0][0].direct:
        # /dev/stdout, a pipe: written in place (a rename would replace the device node)
        write_text(checked[0][0], checked[0][1])
        return [checked[0][0].path]
    stale = None if calibration.cost_entries else cost_params_path(target)
    if stale is not None and not (stale.is_file() or stale.is_symlink()):
        stale = None
    if stale is not None and not force:
        raise OutputError(
            f"{stale}: a cost-parameter override from an earlier run; this fit fitted no "
            f"constant, so it would not belong with the new {target}: use --force to remove "
            "it, or give -o another name"
        )
    with signals_raise():  # SIGTERM or Ctrl-C during the writes: the temp files go too
        if stale is None:
            return _write_together([(out.path, text, check) for out, text, check in checked], force)
        # the new file staged, the earlier constants moved aside, the file moved into place, and
        # only then the constants removed; where either move fails, the pair stays as it was
        # (the new file had been written first, and the old constants left beside it; then
        # the constants removed first, and an old file left without them; two reviews)
        out, text, check = checked[0]
        tmp = _stage(out.path, text, check)
        aside = stale.with_name(f".{stale.name}.{os.getpid()}.old")
        try:
            try:
                stale.replace(aside)
            except OSError as exc:
                raise OutputError(
                    f"{stale}: cannot remove this earlier run's cost-parameter override, which "
                    f"would not belong with the new {target}: {exc.strerror or exc}"
                ) from None
            try:
                _place(tmp, out.path, force=force)
            except BaseException:
                aside.replace(stale)
                raise
            aside.unlink(missing_ok=True)
        finally:
            tmp.unlink(missing_ok=True)
        return [out.path]


def check_override_target(
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> None:
    """Raise :class:`~ibcalc.errors.OutputError` when :func:`write_override` would refuse
    ``path``: a caller checks it before a fit rather than after.

    Refused: ``-``, one of ``inputs``, an empty or too long name, a directory, a block device,
    an existing file without ``force``, a missing directory or one where no file can be created
    (probed, as :func:`~ibcalc.fileio.check_output` does), a special file that may not be
    written. The cost-parameter override that may go beside a regular target
    (:func:`cost_params_path`) is checked too, except for an existing file (it is written only
    when the fit gives model constants): its name must be usable and it may not be an input.
    """
    _refuse_cost_params_name(path)
    target = _check_one(path, force=force, inputs=inputs)
    if not target.direct:
        companion = cost_params_path(target.path)
        if any(same_file(companion, i) for i in inputs if str(i) != "-"):
            raise OutputError(
                f"{companion}: is one of this run's inputs, and the cost-parameter override "
                f"of -o {target.path} goes there; give -o another name"
            )
        try:
            check_output(companion, what="override")
        except OutputError as exc:
            raise OutputError(f"the cost-parameter override beside -o: {exc}") from None


def _check_one(
    path: str | os.PathLike[str],
    *,
    force: bool,
    inputs: Sequence[str | os.PathLike[str]],
) -> OutputTarget:
    """The checks of one override file (see :func:`check_override_target`); its target."""
    if str(path) == "-":
        raise OutputError(
            "-o -: overrides are files (they are read back with --catalogue); give a name"
        )
    out = Path(path)
    if any(same_file(out, i) for i in inputs if str(i) != "-"):
        raise OutputError(f"{out}: is one of this run's inputs; refusing to write over it")
    # the name, the directory (a file is created there and removed), a special file's access
    target = check_output(out, what="override")
    if not force and not target.direct and (out.is_file() or out.is_symlink()):
        # a special file (/dev/stdout, a pipe) is written in place, never "overwritten"
        raise OutputError(f"{out}: exists; use --force to overwrite it")
    return target


def _write_together(
    files: Sequence[tuple[Path, str, Callable[[Path], object]]], force: bool
) -> list[Path]:
    """Write each text to a temporary file beside its target and check it with the loader that
    will read it; only when every one is written (a full disk fails here) move them into place.
    The catalogue and cost-parameter overrides go together or not at all: each target that
    exists is kept under a second name until every file is in place, and a failure (an I/O
    error, a target that appeared) between two placements puts the ones placed back as they
    were (the first had stayed beside the old second: review EC 1). Signals wait while the
    files are moved and put back (a Ctrl-C landing during a rename, or while a second name was
    made, had left half a pair or a stray second name: review EE 1, 2); an old file that cannot
    be put back stays under its second name, which the error names."""
    staged: list[Path] = []
    try:
        for target, text, check in files:
            staged.append(_stage(target, text, check))
        with _signals_held():
            return _move_together(staged, files, force)
    finally:
        for tmp in staged:
            tmp.unlink(missing_ok=True)


def _move_together(
    staged: Sequence[Path],
    files: Sequence[tuple[Path, str, Callable[[Path], object]]],
    force: bool,
) -> list[Path]:
    """Move each staged file onto its target (:func:`_write_together`), all or none."""
    kept: dict[Path, Path | None] = {}  # each target placed: its old file's second name, if any
    olds: list[Path] = []  # every second name made
    try:
        for tmp, (target, _text, _check) in zip(staged, files, strict=True):
            old = _keep_old(target) if force else None
            if old is not None:
                olds.append(old)
            # a failure here placed nothing (a rename happens whole or not at all; a refused
            # link leaves the file that is there, which is not ours to remove)
            _place(tmp, target, force=force)
            kept[target] = old
        placed = list(kept)
        kept = {}  # every file is in place: nothing to put back
        return placed
    finally:
        # a failure after a target was placed: put each one placed back as it was
        stuck: list[tuple[Path, Path]] = []
        for target, old in kept.items():
            try:
                if old is not None:
                    old.replace(target)
                elif target.is_file():
                    target.unlink()
            except OSError:
                if old is not None:
                    stuck.append((target, old))
        for old in olds:
            if all(old != second for _target, second in stuck):
                old.unlink(missing_ok=True)
        if stuck:
            target, old = stuck[0]
            raise OutputError(
                f"{target}: could not be put back after a failed write; the earlier file is "
                f"kept as {old}"
            )


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back (delivered when the block ends) in the main thread,
    where the platform can; the block is a few renames."""
    held = {signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)}
    can = (
        hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    )
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held) if can else None
    try:
        yield
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _keep_old(target: Path) -> Path | None:
    """A second name for ``target``'s file (a hard link beside it), or None where there is no
    file: the old file stays whole until the new one and its companion are both in place."""
    directory = target.parent if str(target.parent) else Path()
    old = directory / f".{target.name}.{secrets.token_hex(4)}.old"
    if target.is_symlink():
        # the link itself, which --force replaces with a file
        try:
            old.symlink_to(target.readlink())
        except OSError as exc:
            raise OutputError(
                f"{target}: cannot keep the old link: {exc.strerror or exc}"
            ) from None
        return old
    if not target.is_file():
        return None
    try:
        os.link(target, old)
    except OSError:
        try:
            shutil.copy2(target, old)
        except OSError as exc:
            raise OutputError(
                f"{target}: cannot keep the old file: {exc.strerror or exc}"
            ) from None
    return old


def _stage(target: Path, text: str, check: Callable[[Path], object]) -> Path:
    """``text`` in a checked temporary file beside ``target`` (its path)."""
    directory = target.parent if str(target.parent) else Path()
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp.yaml", dir=directory
        )
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            check(tmp)
        except InputFileError as exc:  # pragma: no cover - a bug in what we write
            raise OutputError(f"{target}: the override would not load: {exc}") from None
        tmp.chmod(0o644)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        # an OutputError, or SIGTERM or Ctrl-C while the file is written or checked: the
        # caller has no name for it yet (an interrupted cron run had left a .tmp.yaml behind,
        # a review)
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _place(tmp: Path, target: Path, *, force: bool) -> None:
    """Move the staged ``tmp`` to ``target`` (over an existing one only with ``force``)."""
    try:
        if force:
            tmp.replace(target)
            return
        # link() refuses an existing target: no window in which another writer's file could
        # be replaced
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise OutputError(f"{target}: exists; use --force to overwrite it") from None
        except OSError:
            if target.exists():
                raise OutputError(f"{target}: exists; use --force to overwrite it") from None
            tmp.replace(target)
    except OutputError:
        raise  # said whole above ('cannot write: X: exists' had named the path twice: EC 12)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
