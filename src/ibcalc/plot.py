"""Pictures: busbw and time over message sizes, and the scale-up vs scale-out gap as bars.

The only module importing matplotlib, and only lazily, inside :func:`require_matplotlib`:
matplotlib is the optional extra ``ibcalc[plot]``, so ``import ibcalc.plot`` works without it
and a plotting call raises :class:`PlotUnavailableError` with the install hint. Figures are
drawn with the object API on the Agg canvas (no display needed) and written atomically: to a
temporary file in the target's directory, then renamed over the target.

Units in every label: sizes in bytes (nccl-tests S), bandwidths in GB/s = 10^9 B/s per
direction, times in seconds.
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ibcalc.errors import IbcalcError
from ibcalc.gap import GapResult
from ibcalc.models import Algorithm, Collective, Cost, Estimate, busbw_factor
from ibcalc.units import GB, format_size, format_time

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "INSTALL_HINT",
    "MAX_MEASURED_BYTES",
    "SUFFIXES",
    "Ceiling",
    "GapBar",
    "MeasuredPoint",
    "PlotError",
    "PlotUnavailableError",
    "Series",
    "algorithm_series",
    "check_target",
    "gap_bars",
    "load_measured",
    "plot_gap",
    "plot_sweep",
    "require_matplotlib",
    "sweep_series",
]

INSTALL_HINT = "plotting needs matplotlib: pip install 'ibcalc[plot]'"
#: File types a plot can be written as, by suffix.
SUFFIXES: dict[str, str] = {".png": "png", ".svg": "svg"}
#: Largest measured-points CSV read (a results table, not a data lake).
MAX_MEASURED_BYTES = 16 * 1024 * 1024

_DPI = 150
_COLORS = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)
_SCALE_UP_COLOR = "#555555"


class PlotError(IbcalcError, ValueError):
    """A plot cannot be made: bad target file name, unreadable measurements, write failure."""


class PlotUnavailableError(PlotError, ImportError):
    """matplotlib (the optional ``plot`` extra) is not installed."""

    def __init__(self) -> None:
        super().__init__(INSTALL_HINT)


@dataclass(frozen=True)
class Series:
    """One line of a sweep plot: sizes (bytes), busbw (GB/s), times (s).

    ``equivalent`` marks points whose busbw is an equivalent figure (NVLS, SHARP, 2-node tree),
    drawn hollow. ``emphasis`` draws the line thick (the NCCL-like choice).
    """

    label: str
    size_bytes: tuple[float, ...]
    busbw_GBps: tuple[float, ...]
    time_s: tuple[float, ...]
    equivalent: tuple[bool, ...]
    emphasis: bool = True
    color: str | None = None


@dataclass(frozen=True)
class Ceiling:
    """A physical ceiling drawn as a horizontal line, in GB/s per direction."""

    label: str
    GBps: float
    kind: Literal["scale-up", "network-node", "network-gpu"]
    color: str | None = None


@dataclass(frozen=True)
class MeasuredPoint:
    """One measured busbw (and time, when known) at one size."""

    size_bytes: float
    busbw_GBps: float
    time_s: float | None
    label: str


@dataclass(frozen=True)
class GapBar:
    """One bar of a gap plot: a link's per-GPU line rate and achievable rate (GB/s)."""

    label: str
    side: Literal["scale-up", "scale-out"]
    line_GBps: float
    achievable_GBps: float


def color(index: int) -> str:
    """The ``index``-th colour of the plot palette (cycles)."""
    return _COLORS[index % len(_COLORS)]


def check_target(path: str | Path) -> tuple[Path, str]:
    """Return (path, format) for a plot target, or raise :class:`PlotError`.

    The suffix decides the format (.png or .svg); the directory must exist.
    """
    target = Path(path)
    fmt = SUFFIXES.get(target.suffix.lower())
    if fmt is None:
        allowed = " or ".join(SUFFIXES)
        raise PlotError(
            f"cannot write a plot to {str(target)!r}: the file name must end in {allowed}"
        )
    parent = target.parent if str(target.parent) else Path()
    if not parent.is_dir():
        raise PlotError(f"cannot write a plot to {str(target)!r}: no directory {str(parent)!r}")
    if target.is_dir():
        raise PlotError(f"cannot write a plot to {str(target)!r}: it is a directory")
    return target, fmt


def require_matplotlib() -> Any:
    """Import matplotlib (headless) or raise :class:`PlotUnavailableError`; return the module."""
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailableError() from None
    # Agg needs no display. Leave an interactive session's backend alone if pyplot is in use;
    # the object API below draws on Agg canvases either way.
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    return matplotlib


def _new_figure(width_in: float, height_in: float) -> Figure:
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, target: Path, fmt: str) -> None:
    """Write ``fig`` to ``target`` atomically (temporary file in the same directory, rename)."""
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=target.parent or Path()
    )
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            fig.savefig(handle, format=fmt, dpi=_DPI, metadata=_metadata(fmt))
        tmp.chmod(0o644)
        tmp.replace(target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PlotError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _metadata(fmt: str) -> dict[str, Any]:
    # No creation date, so the same command writes the same bytes (reviewable diffs of docs/img).
    if fmt == "svg":
        return {"Date": None, "Creator": "ibcalc"}
    return {"Software": "ibcalc"}


# ---------------------------------------------------------------------------------------- sweep


def _busbw_GBps(cost: Cost, size_bytes: float, collective: Collective, ranks: int) -> float:
    return size_bytes / cost.time_s * busbw_factor(collective, ranks) / GB


def sweep_series(
    label: str, estimates: Sequence[Estimate], *, emphasis: bool = True, color: str | None = None
) -> Series:
    """The chosen algorithm's busbw and time at each size of a sweep."""
    return Series(
        label=label,
        size_bytes=tuple(e.size_bytes for e in estimates),
        busbw_GBps=tuple(e.busbw_Bps / GB for e in estimates),
        time_s=tuple(e.time_s for e in estimates),
        equivalent=tuple(e.best.equivalent_busbw for e in estimates),
        emphasis=emphasis,
        color=color,
    )


def algorithm_series(estimates: Sequence[Estimate]) -> list[Series]:
    """One series per algorithm that applies at some size, each at its fastest protocol.

    Uses the costs the engine already evaluated (the choice plus its alternatives), which is
    what ``--algo A`` would report. Algorithms NCCL cannot pick (hierarchical, rhd) are
    labelled as what-ifs.
    """
    from ibcalc.collectives.select import NCCL_ALGORITHMS

    best: dict[Algorithm, dict[int, Cost]] = {}
    for i, est in enumerate(estimates):
        for cost in (est.best, *est.alternatives):
            known = best.setdefault(cost.algorithm, {}).get(i)
            if known is None or cost.time_s < known.time_s:
                best[cost.algorithm][i] = cost
    out: list[Series] = []
    for algorithm in sorted(best, key=lambda a: list(Algorithm).index(a)):
        points = sorted(best[algorithm].items())
        sizes = tuple(estimates[i].size_bytes for i, _ in points)
        label = algorithm.value + ("" if algorithm in NCCL_ALGORITHMS else " (what-if)")
        out.append(
            Series(
                label=label,
                size_bytes=sizes,
                busbw_GBps=tuple(
                    _busbw_GBps(
                        c, estimates[i].size_bytes, estimates[i].collective, estimates[i].ranks
                    )
                    for i, c in points
                ),
                time_s=tuple(c.time_s for _, c in points),
                equivalent=tuple(c.equivalent_busbw for _, c in points),
                emphasis=False,
            )
        )
    return out


def load_measured(
    path: str | Path,
    *,
    collective: Collective | None = None,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
) -> tuple[list[MeasuredPoint], int]:
    """Read measured points from a CSV with columns ``size_bytes,busbw_GBps`` at least.

    Optional columns: ``time_us`` (for the time panel), ``label`` (one legend entry per label),
    and ``collective``, ``nodes``, ``gpus_per_node``: when present, only rows matching the plotted
    sweep are kept, so a mixed file such as the reference ``measurements.csv`` can be given as
    is. Returns the points kept and the number of data rows read. Raises :class:`PlotError`
    with ``file:line`` for unreadable files or values.
    """
    source = Path(path)
    name = str(source)
    try:
        if source.stat().st_size > MAX_MEASURED_BYTES:
            raise PlotError(f"{name}: larger than {MAX_MEASURED_BYTES // 2**20} MiB")
        raw = source.read_bytes()
    except OSError as exc:
        raise PlotError(f"{name}: cannot read ({exc.strerror or exc})") from None
    if b"\0" in raw:
        raise PlotError(f"{name}: binary file, expected CSV")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlotError(f"{name}: not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text))
    columns = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in ("size_bytes", "busbw_GBps") if c not in columns]
    if missing:
        raise PlotError(
            f"{name}:1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(found: {', '.join(columns) or 'none'}; need size_bytes,busbw_GBps)"
        )
    default_label = f"measured ({source.name})"
    points: list[MeasuredPoint] = []
    total = 0
    for row in reader:
        total += 1
        line = reader.line_num
        values = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
        if collective is not None and "collective" in values:
            wanted = {collective.value, collective.value.replace("_", "")}
            if values["collective"].lower() not in wanted:
                continue
        if not _matches(values, "nodes", nodes) or not _matches(
            values, "gpus_per_node", gpus_per_node
        ):
            continue
        size = _number(values["size_bytes"], name, line, "size_bytes")
        busbw = _number(values["busbw_GBps"], name, line, "busbw_GBps")
        if size <= 0:
            raise PlotError(f"{name}:{line}: size_bytes must be positive")
        if busbw <= 0:
            continue  # nccl-tests prints 0.00 at tiny sizes; a log axis cannot show it
        time_s = None
        if values.get("time_us"):
            time_s = _number(values["time_us"], name, line, "time_us") * 1e-6
        label = values.get("label") or default_label
        points.append(MeasuredPoint(size, busbw, time_s, label))
    return points, total


def _matches(values: dict[str, str], column: str, wanted: int | None) -> bool:
    if wanted is None or column not in values:
        return True
    try:
        return int(float(values[column])) == wanted
    except ValueError:
        return False


def _number(text: str, name: str, line: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PlotError(f"{name}:{line}: {column} {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise PlotError(f"{name}:{line}: {column} {text!r} is not a finite non-negative number")
    return value


def _size_ticks(ax: Axes, low: float, high: float) -> None:
    from matplotlib.ticker import FixedLocator, NullFormatter

    ticks = [10.0**k for k in range(0, 16) if low / 1.5 <= 10.0**k <= high * 1.5]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(_formatter(lambda v: format_size(v).replace(" ", "\u2009")))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _formatter(function: Any) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: function(value) if value > 0 else "")


def _gbps_label(value: float) -> str:
    if value >= 1:
        return f"{value:g}"
    return f"{value:.3g}"


def plot_sweep(
    path: str | Path,
    series: Sequence[Series],
    *,
    title: str,
    ceilings: Sequence[Ceiling] = (),
    measured: Sequence[MeasuredPoint] = (),
    time_panel: bool = False,
    footnote: str = "",
) -> Path:
    """Draw busbw over message size (log-log), optionally with a time panel; write ``path``.

    Ceilings are dashed horizontal lines; measured points are drawn as black-edged markers;
    points whose busbw is an equivalent figure (in-network reduction, 2-node tree) are hollow.
    Returns the path written.
    """
    target, fmt = check_target(path)
    if not series:
        raise PlotError("nothing to plot: the sweep has no sizes")
    fig = _new_figure(9.0, 8.0 if time_panel else 5.6)
    if time_panel:
        ax, ax_time = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    else:
        ax, ax_time = fig.subplots(1, 1), None

    sizes = [s for ser in series for s in ser.size_bytes] + [p.size_bytes for p in measured]
    low, high = min(sizes), max(sizes)
    palette = iter(range(100))
    any_equivalent = False
    for ser in series:
        col = ser.color or color(next(palette))
        width = 2.4 if ser.emphasis else 1.3
        alpha = 1.0 if ser.emphasis else 0.85
        style = "-" if ser.emphasis else "--" if "what-if" in ser.label else "-"
        for axis, values in ((ax, ser.busbw_GBps), (ax_time, ser.time_s)):
            if axis is None:
                continue
            axis.plot(
                ser.size_bytes,
                values,
                style,
                color=col,
                linewidth=width,
                alpha=alpha,
                label=ser.label if axis is ax else None,
                zorder=3 if ser.emphasis else 2,
            )
            solid = [
                (s, v)
                for s, v, e in zip(ser.size_bytes, values, ser.equivalent, strict=True)
                if not e
            ]
            hollow = [
                (s, v) for s, v, e in zip(ser.size_bytes, values, ser.equivalent, strict=True) if e
            ]
            size = 4.0 if ser.emphasis else 2.5
            if solid:
                axis.plot(
                    [p[0] for p in solid],
                    [p[1] for p in solid],
                    "o",
                    color=col,
                    markersize=size,
                    zorder=4,
                    alpha=alpha,
                )
            if hollow:
                any_equivalent = True
                axis.plot(
                    [p[0] for p in hollow],
                    [p[1] for p in hollow],
                    "o",
                    markerfacecolor="white",
                    markeredgecolor=col,
                    markersize=size + 1.5,
                    zorder=4,
                    alpha=alpha,
                )

    styles = {"scale-up": "-.", "network-node": "--", "network-gpu": ":"}
    for ceiling in ceilings:
        ax.axhline(
            ceiling.GBps,
            linestyle=styles[ceiling.kind],
            color=ceiling.color or _SCALE_UP_COLOR,
            linewidth=1.2,
            alpha=0.9,
            label=f"{ceiling.label}: {_gbps_label(ceiling.GBps)} GB/s",
            zorder=1,
        )

    labels = sorted({p.label for p in measured})
    markers = ("s", "D", "^", "v", "P", "X")
    for i, label in enumerate(labels):
        points = [p for p in measured if p.label == label]
        marker = markers[i % len(markers)]
        ax.plot(
            [p.size_bytes for p in points],
            [p.busbw_GBps for p in points],
            marker,
            linestyle="none",
            markerfacecolor="#ffd92f",
            markeredgecolor="black",
            markersize=6,
            label=label,
            zorder=5,
        )
        timed = [p for p in points if p.time_s is not None]
        if ax_time is not None and timed:
            ax_time.plot(
                [p.size_bytes for p in timed],
                [p.time_s for p in timed],
                marker,
                linestyle="none",
                markerfacecolor="#ffd92f",
                markeredgecolor="black",
                markersize=6,
                zorder=5,
            )

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("busbw (GB/s = 10^9 B/s, per direction)")
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    ax.yaxis.set_major_formatter(_formatter(_gbps_label))
    if any_equivalent:
        from matplotlib.lines import Line2D

        handles, names = ax.get_legend_handles_labels()
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                linestyle="none",
                markerfacecolor="white",
                markeredgecolor="black",
            )
        )
        names.append("hollow: equivalent busbw, not a wire rate")
        ax.legend(handles, names, fontsize=8, loc="upper left", framealpha=0.9)
    else:
        ax.legend(fontsize=8, loc="upper left", framealpha=0.9)
    bottom = ax_time if ax_time is not None else ax
    if ax_time is not None:
        ax_time.set_xscale("log")
        ax_time.set_yscale("log")
        ax_time.set_ylabel("time per collective")
        ax_time.grid(True, which="major", alpha=0.35)
        ax_time.grid(True, which="minor", alpha=0.12)
        ax_time.yaxis.set_major_formatter(_formatter(format_time))
    bottom.set_xlabel("message size S (bytes, nccl-tests convention)")
    _size_ticks(ax, low, high)
    if footnote:
        fig.text(0.01, 0.002, footnote, fontsize=7, color="#444444", ha="left", va="bottom")
    _save(fig, target, fmt)
    return target


# ------------------------------------------------------------------------------------------ gap


def _inter_label(result: GapResult) -> str:
    per_gpu = result.nics_per_gpu
    gbit = result.nic_line_Bps * 8 / GB
    if per_gpu == 1:
        count = "1 per GPU"
    elif per_gpu > 1:
        count = f"{per_gpu:g} per GPU"
    else:
        count = f"1 per {result.gpus_per_node}-GPU node"
    capped = f", {result.capped_by} cap" if result.capped_by else ""
    return f"{result.inter} ({gbit:g} Gb/s, {count}{capped})"


def gap_bars(results: Sequence[GapResult]) -> list[GapBar]:
    """Distinct scale-up and scale-out bars of ``results``, scale-up first, in order of use."""
    bars: dict[str, GapBar] = {}
    for r in results:
        up = f"{r.intra} (per GPU)"
        bars.setdefault(
            up,
            GapBar(up, "scale-up", r.intra_line_Bps / GB, r.intra_achievable_Bps / GB),
        )
    for r in results:
        out = _inter_label(r)
        bars.setdefault(
            out,
            GapBar(out, "scale-out", r.inter_line_Bps / GB, r.inter_achievable_Bps / GB),
        )
    return list(bars.values())


def plot_gap(path: str | Path, results: Sequence[GapResult], *, title: str | None = None) -> Path:
    """Draw per-GPU scale-up and scale-out bandwidth (line and achievable) as horizontal bars.

    One result: two bars and the ratios. Several (the common pairings): every distinct link
    once, on a log axis when the values span more than 30x. Returns the path written.
    """
    target, fmt = check_target(path)
    if not results:
        raise PlotError("nothing to plot: no gap result")
    bars = gap_bars(results)
    height = 1.6 + 0.42 * len(bars)
    fig = _new_figure(9.0, max(3.2, height))
    ax = fig.subplots(1, 1)
    up_color, out_color = "#1f77b4", "#d62728"
    positions = list(range(len(bars)))[::-1]
    values = [b.line_GBps for b in bars] + [b.achievable_GBps for b in bars]
    log = max(values) / min(values) > 30
    for y, bar in zip(positions, bars, strict=True):
        col = up_color if bar.side == "scale-up" else out_color
        ax.barh(y, bar.line_GBps, height=0.72, color=col, alpha=0.28, edgecolor=col)
        ax.barh(y, bar.achievable_GBps, height=0.42, color=col, alpha=0.95)
        ax.text(
            bar.line_GBps * (1.06 if log else 1.0) + (0 if log else max(values) * 0.01),
            y,
            f"{_gbps_label(bar.line_GBps)} line / {_gbps_label(bar.achievable_GBps)} achievable",
            va="center",
            fontsize=8,
        )
    ax.set_yticks(positions, [b.label for b in bars], fontsize=9)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(min(values) / 2, max(values) * 12)
        ax.xaxis.set_major_formatter(_formatter(_gbps_label))
    else:
        ax.set_xlim(0, max(values) * 1.45)
    ax.set_xlabel("GB/s per GPU, per direction (GB/s = 10^9 B/s; vendor 'bidirectional' = 2x)")
    ax.grid(True, axis="x", which="major", alpha=0.35)
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor=up_color, alpha=0.95, label="scale-up, achievable"),
        Patch(facecolor=up_color, alpha=0.28, edgecolor=up_color, label="scale-up, line rate"),
        Patch(facecolor=out_color, alpha=0.95, label="scale-out, achievable"),
        Patch(facecolor=out_color, alpha=0.28, edgecolor=out_color, label="scale-out, line rate"),
    ]
    ax.legend(handles=handles, fontsize=8, loc="lower right", framealpha=0.9)
    if title is None:
        if len(results) == 1:
            r = results[0]
            title = (
                f"{r.intra} vs {r.inter}, {r.gpus_per_node} GPUs and {r.nics_per_node} NICs per "
                f"node: {r.ratio_line:.3g}x line, {r.ratio_achievable:.3g}x achievable; "
                f"1 GB all-reduce {r.slowdown:.3g}x slower across nodes"
            )
        else:
            title = "Scale-up vs scale-out bandwidth per GPU, per direction"
    ax.set_title(title, fontsize=10)
    _save(fig, target, fmt)
    return target
