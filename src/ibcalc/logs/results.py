"""What a check of a measured run returns: the size regimes, the verdict bands, the result models.

:class:`RunCheck` (one run), :class:`RowCheck` (one size), :class:`Finding` (a likely cause),
:class:`Assumption` (a value no flag gave); :func:`gate_failures` for a CI gate. Models only:
:mod:`ibcalc.logs.check` fills them, ``ibcalc.render.logs`` renders them (docs/nccl-check.md).

Regimes and verdicts
    ``latency`` (S <= 64 KiB), ``mid`` and ``bandwidth`` (S >= 64 MiB), as in
    ``benchmarks/data/sweeps/manifest.yaml`` and the accuracy report (docs/model.md). Efficiency is
    measured busbw / expected busbw, which is expected time / measured time (computed from the
    times, which the log prints with more digits than the bandwidths). Verdict bands per regime
    are :data:`BANDS`: ``ok``, ``low``, ``bad``, and ``above`` for rows faster than the model by
    more than its error. Latency rows are judged on time (a row 1.5x slower than expected is still
    ``ok``: the model's latency error reaches that on published runs). See docs/nccl-check.md,
    "Regimes and verdicts".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.cluster.bandwidths import BusbwCeilings
from ibcalc.defaults import empty_list
from ibcalc.units import KiB, MiB

if TYPE_CHECKING:
    from ibcalc.logs.records import Row

__all__ = [
    "BANDS",
    "BANDWIDTH_MIN_BYTES",
    "BANDWIDTH_TOLERANCE",
    "FASTER_WARN",
    "GIVEN",
    "IMPLAUSIBLE_SPEEDUP",
    "LATENCY_MAX_BYTES",
    "PUBLISHED_SPEEDUP",
    "Assumption",
    "Band",
    "Confidence",
    "Finding",
    "Regime",
    "RowCheck",
    "RunCheck",
    "RunVerdict",
    "Severity",
    "Verdict",
    "fmt_size",
    "gate_failures",
    "implausibly_fast",
    "named_cause",
    "pct",
    "regime",
    "size_span",
]

#: Largest size of the latency regime, and smallest of the bandwidth regime (the sweeps manifest).
LATENCY_MAX_BYTES = 64 * KiB
BANDWIDTH_MIN_BYTES = 64 * MiB
#: Relative error within which a prediction "explains" a bandwidth row when the estimate carries
#: no error band of its own: a policy value, above the held-out busbw median (6.4 %) and below
#: the held-out error of most single systems (docs/model.md, Accuracy); no fit derives it.
BANDWIDTH_TOLERANCE = 0.15


Regime = Literal["latency", "mid", "bandwidth"]
#: A row of 64 MiB or more measured (out of place or in place) more than this many times faster
#: than the model expects is no measurement of the cluster assumed. No published row of that
#: size in benchmarks/data runs more than 1.14x faster than the model (1 x 8 MI355X at 64 MiB;
#: a test checks it); 4x
#: leaves room for a cluster better than assumed (SHARP not stated, a newer GPU the log's name
#: does not identify), and catches a time mistyped by a factor of ten.
IMPLAUSIBLE_SPEEDUP = 4.0
#: The shortest time a measured collective takes (us): no collective on real hardware completes
#: in under a microsecond (the parser's note "time implausible" uses the same bound).
MIN_PLAUSIBLE_TIME_US = 1.0
#: The largest speed-up over the model of any published row of 64 MiB or more (see above).
PUBLISHED_SPEEDUP = 1.14
#: Large rows whose median runs more than this many times faster than the model are faster than
#: any published run (:data:`PUBLISHED_SPEEDUP`): the cluster given is likely not the one that ran
#: (more NICs, a faster network, in-network reduction), and the finding is a warning.
FASTER_WARN = 1.5

#: A row's verdict: its efficiency's band, or ``corrupt`` where its results failed validation
#: (``#wrong`` non-zero): its time is then no measurement of the collective to judge.
Verdict = Literal["ok", "low", "bad", "above", "corrupt"]


_FROZEN = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class Band:
    """Verdict thresholds of one regime, on efficiency (expected time / measured time).

    ``ok`` at or above ``ok``, ``low`` at or above ``low``, else ``bad``; ``above`` beyond
    ``above`` (faster than the model by more than its error).
    """

    ok: float
    low: float
    above: float


#: Verdict bands, a policy, not a fit: no data derives them. Bandwidth: ok >= 0.85, low 0.6-0.85,
#: bad < 0.6, above > 1.2. Mid sizes: ok >= 0.7, low >= 0.4. Latency: judged on time, ok up to
#: 1.5x the expected time, low up to 3x, bad beyond; above when 2x faster. Against the model's
#: held-out error band (its 10th percentiles, docs/model.md#error-band: -17 % on verbs networks,
#: -48 % on plugin transports at 64 MiB and more) about one healthy verbs row in ten reads low and
#: one plugin row in ten or more bad (its 10th percentile is 0.52 of the expected busbw); the
#: error band's own lift (check.py) softens the latter.
BANDS: dict[Regime, Band] = {
    "bandwidth": Band(ok=0.85, low=0.6, above=1.2),
    "mid": Band(ok=0.7, low=0.4, above=1.5),
    "latency": Band(ok=1 / 1.5, low=1 / 3, above=2.0),
}


def regime(size_bytes: float) -> Regime:
    """The size regime of a row: latency (<= 64 KiB), bandwidth (>= 64 MiB) or mid."""
    if size_bytes <= LATENCY_MAX_BYTES:
        return "latency"
    if size_bytes >= BANDWIDTH_MIN_BYTES:
        return "bandwidth"
    return "mid"


# ------------------------------------------------------------------------------- result models


#: The evidence of a value the caller gave (``source="flag"``) that the log does not contradict;
#: a flag that overrides what the log states says so after it ("given by the caller (the log's
#: header says nGpus 4)"), once, and the log's value is not listed beside it.
GIVEN = "given by the caller"


class Assumption(BaseModel):
    """A value the check used that no flag gave: where it comes from and why.

    ``source``: ``log`` (read or inferred from the log), ``environment`` (NCCL's debug output in
    the log), ``preset`` (a system preset's value the log does not confirm), ``default`` (the
    resolver's default), ``flag`` (given by the caller; listed so JSON shows every input, with
    the value the log states when the flag overrides it: evidence other than :data:`GIVEN`),
    ``design`` (from a design file, ``--design``, that no flag overrides).
    Text may name cluster fields as ``{field}`` (see :func:`ibcalc.errors.fill_fields`).
    """

    model_config = _FROZEN

    field: str
    value: str | int | float | bool | None
    source: Literal["log", "environment", "preset", "default", "flag", "design"]
    evidence: str


class RowCheck(BaseModel):
    """One size of the run: measured (out-of-place) against expected.

    ``efficiency`` = measured busbw / expected busbw = expected time / measured time;
    ``time_ratio`` = measured time / expected time. ``expected_*_range`` is the model's error
    band when the estimate has one. ``line`` is the row's line in the log.
    """

    model_config = _FROZEN

    size_bytes: int
    line: int
    regime: Regime
    measured_time_us: float
    measured_busbw_GBps: float
    inplace_time_us: float | None
    expected_time_us: float
    expected_busbw_GBps: float
    expected_time_us_range: tuple[float, float] | None = None
    expected_busbw_GBps_range: tuple[float, float] | None = None
    #: The model's algorithm and protocol for this size (NCCL's likely choice, not what the log
    #: ran), as separate keys like the estimate's and the sweep's JSON.
    algorithm: str
    protocol: str
    efficiency: float
    time_ratio: float
    within_band: bool | None = None
    verdict: Verdict
    wrong: int | None = None
    #: Faster than :data:`IMPLAUSIBLE_SPEEDUP` x the model's time above 64 KiB: no measurement of
    #: this cluster (a timing or log error, or another cluster than the one assumed).
    implausible: bool = False
    #: The expected algorithm's busbw is an equivalent figure (NVLS, SHARP, a 2-node tree:
    #: nccl-tests' formula over fewer bytes on the wire), not a wire rate, as on an estimate.
    busbw_equivalent: bool = False

    @property
    def choice(self) -> str:
        """``algorithm/protocol``, as the table shows it."""
        return f"{self.algorithm}/{self.protocol}"

    @property
    def invalid(self) -> bool:
        """Results that failed validation (``#wrong``) or a time no such cluster gives."""
        return (self.wrong or 0) > 0 or self.implausible


Confidence = Literal["high", "medium", "low"]
Severity = Literal["error", "warning", "info"]


class Finding(BaseModel):
    """A likely cause, in plain words, with the evidence from the log.

    ``kind`` groups findings (``data_corruption``, ``low_bandwidth``, ``latency``, ``mid_sizes``,
    ``other_choice``, ``erratic``,
    ``faster_than_expected``, ``transport``, ``gpu_path``, ``network_assumed``, ``unmeasured``,
    ``network_mismatch``,
    ``library_version``, ``not_checked``, ``ended_early``, ``flag_mismatch``);
    ``hypothesis`` is the what-if the model was re-run with (``nics_per_node=1``) and
    ``fit_error`` the median relative error with which it reproduces the bandwidth rows;
    ``curve`` its predicted busbw (GB/s) at each checked size; ``lines`` the log lines of the rows
    that support it. Findings are ranked: the first is the most likely and most serious.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    kind: str
    cause: str
    confidence: Confidence
    severity: Severity
    evidence: list[str]
    lines: list[int] = []
    hypothesis: str | None = None
    fit_error: float | None = None
    curve: list[tuple[int, float]] = []


RunVerdict = Literal["ok", "above", "low", "bad", "corrupt", "unknown", "not_checked"]


class RunCheck(BaseModel):
    """The check of one run: its cluster, every row, the verdict and the ranked findings.

    ``verdict`` is the worst bandwidth-regime row (``above`` only when every one is faster than
    the model expects; ``unknown`` without a row of 64 MiB or more,
    ``corrupt`` when ``#wrong`` is non-zero or a row of 64 MiB or more is no measurement,
    ``not_checked`` when the collective is not modelled). ``flagged`` is True when a finding is
    a warning or an error (a corrupt run has one: #wrong's or the trailer's data corruption, an
    unmeasured row, an implausible timing). ``unmeasured`` lists (size in bytes, line) of the
    rows of 64 MiB or more that are no measurement (dropped when read, or timed at 0).
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    source: str
    run_index: int
    line_start: int
    line_end: int
    collective: str | None
    raw_collective: str | None
    dtype: str | None
    ranks: int | None
    nodes: int | None
    gpus_per_node: int | None
    cluster: str
    system: str | None
    intra: str | None
    inter: str | None
    nics_per_node: int | None
    network_known: bool
    assumptions: list[Assumption]
    rows: list[RowCheck]
    findings: list[Finding]
    verdict: RunVerdict
    min_bandwidth_efficiency: float | None
    notes: list[str]
    unmeasured: list[tuple[int, int]] = Field(default_factory=empty_list)
    #: the library the log names (nccl-tests on NCCL, rccl-tests on RCCL), whose tuner chose the
    #: run's algorithm and protocol; None where the log names none
    library: Literal["nccl", "rccl"] | None = None
    #: the resolved cluster's busbw ceilings (scale-up per GPU, network per node), as numbers
    #: for the plot; None where the cluster is not resolved
    ceilings: BusbwCeilings | None = None

    @property
    def flagged(self) -> bool:
        """True when a finding is a warning or an error (the run is not healthy)."""
        return any(f.severity in ("error", "warning") for f in self.findings)


def implausibly_fast(expected_s: float, row: Row) -> bool:
    """Whether a row of 64 MiB or more ran, out of place or in place, over
    :data:`IMPLAUSIBLE_SPEEDUP` x faster than the ``expected_s`` the model gives it."""
    return row.size_bytes >= BANDWIDTH_MIN_BYTES and any(
        t.time_us > 0 and expected_s > IMPLAUSIBLE_SPEEDUP * t.time_us * 1e-6
        for t in (row.oop, row.ip)
        if t is not None
    )


def named_cause(findings: Sequence[Finding]) -> Finding | None:
    """The cause the bandwidth diagnosis names (the first low-bandwidth finding with a re-run
    hypothesis; the less likely ones follow it), else None."""
    return next((f for f in findings if f.kind == "low_bandwidth" and f.hypothesis), None)


def gate_failures(check: RunCheck, min_efficiency: float) -> list[RowCheck]:
    """Bandwidth-regime rows below ``min_efficiency``, and every invalid row (``#wrong``
    non-zero, or implausibly fast: a run whose results are not measurements does not pass a
    gate, however fast)."""
    return [
        r
        for r in check.rows
        if (r.regime == "bandwidth" and r.efficiency < min_efficiency) or r.invalid
    ]


# ------------------------------------------------------------------------------- wording


def fmt_size(size: float) -> str:
    """A size as a finding words it: ``64 MiB`` for a whole power-of-two unit, else bytes."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{int(size // scale)} {unit}"
    return f"{int(size)} B"


def size_span(rows: Sequence[RowCheck]) -> str:
    """The sizes from the first row to the last (``1 MiB-8 GiB``), or ``no rows``."""
    if not rows:
        return "no rows"
    lo, hi = rows[0].size_bytes, rows[-1].size_bytes
    return fmt_size(lo) if lo == hi else f"{fmt_size(lo)}-{fmt_size(hi)}"


def line_span(first: int, last: int) -> str:
    """``lines 12-40``, or ``line 12`` when the two are one."""
    return f"line {first}" if first == last else f"lines {first}-{last}"


def pct(x: float) -> str:
    """A fraction as a whole percentage (0.853 -> ``85%``)."""
    return f"{x * 100:.0f}%"


def eff_pct(efficiency: float) -> str:
    """Measured over expected as a whole percentage rounded down (0.847 -> ``84%``), so that a
    row below a verdict's threshold never prints the threshold itself (the ok line is 85 %)."""
    return f"{math.floor(efficiency * 100 + 1e-9)}%"
