"""Pictures: busbw and time over message sizes, and the scale-up vs scale-out gap as bars.

The only module importing matplotlib, and only lazily, inside :func:`require_matplotlib`:
matplotlib is the optional extra ``ibcalc[plot]``, so ``import ibcalc.render.plot`` works without it
and a plotting call raises :class:`PlotUnavailableError` with the install hint. Figures are
drawn with the object API on the Agg canvas (no display needed) and written atomically: to a
temporary file in the target's directory, then renamed over the target.

Units in every label: sizes in bytes (nccl-tests S), bandwidths in GB/s = 10^9 B/s per
direction, times in seconds.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import math
import os
import shlex
import sys
import textwrap
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from ibcalc.cluster.bandwidths import BusbwCeilings, busbw_ceilings
from ibcalc.cluster.resolve import ResolvedCluster
from ibcalc.engine.types import Algorithm, Collective, Estimate
from ibcalc.errors import OutputError, PlotError
from ibcalc.fileio import ReadRefused, check_output, read_regular, write_output
from ibcalc.gap import GapResult
from ibcalc.render.words import LINK_KEYS, allreduce_words, links_words
from ibcalc.textsafe import printable
from ibcalc.units import (
    BITS_PER_BYTE,
    GB,
    format_number,
    format_ratio,
    format_size,
    format_slowdown,
    format_time,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.typing import LineStyleType

    from ibcalc.sweep import SweepResult

__all__ = [
    "INSTALL_HINT",
    "MAX_MEASURED_BYTES",
    "ONE_NETWORK_COLOR",
    "SUFFIXES",
    "Ceiling",
    "GapBar",
    "MeasuredPoint",
    "PlotError",
    "PlotUnavailableError",
    "Series",
    "algorithm_series",
    "check_target",
    "color",
    "expected_series",
    "gap_bars",
    "load_measured",
    "load_measured_for",
    "network_ceilings",
    "plot_gap",
    "plot_sweep",
    "plot_sweep_clusters",
    "plot_sweep_result",
    "require_matplotlib",
    "scale_up_ceilings",
    "sweep_series",
]

#: (not 'ibcalc[plot]': the project is installed from a checkout, and the package index would be
#: asked for a distribution of that name: review ED 11)
INSTALL_HINT = (
    "plotting needs matplotlib: pip install 'matplotlib>=3.8' (or, in the checkout, "
    "pip install '.[plot]')"
)
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
#: Drawing order of the markers over the lines (4-4.7): NCCL's switches, then measured points.
_SWITCH_Z = 5.5
_MEASURED_Z = 5.6
#: The half-clear box behind text over lines (a ceiling's tag, the footnote): a line through it
#: shows faintly and leaves the letters whole.
_CLEAR_BOX: dict[str, Any] = {
    "boxstyle": "square,pad=0.1",
    "facecolor": "white",
    "edgecolor": "none",
    "alpha": 0.75,
}
#: One per fabric of a sweep over several: where their curves coincide (latency-bound sizes,
#: or two fabrics of one rate) the one drawn below shows between the dashes of the one above,
#: and the legend tells them apart by dash and marker, not by colour alone. No diamond: it marks
#: NCCL's switches. Each later line is thinner, so that it nests inside those below (two at one
#: width, hdr and roce-200g, had covered each other).
_FABRIC_STYLES: tuple[tuple[LineStyleType, str, float], ...] = (
    ("-", "o", 3.8),
    ((0, (5.0, 2.0)), "s", 2.7),
    ((0, (1.5, 1.2)), "^", 1.6),
    ((0, (6.0, 1.5, 1.5, 1.5)), "v", 1.2),
    ((0, (3.0, 1.5)), "P", 0.95),
    ((0, (1.0, 2.0)), "X", 0.8),
    ((0, (8.0, 2.0, 1.5, 2.0, 1.5, 2.0)), "<", 0.8),
    ((0, (4.0, 3.0)), ">", 0.8),
)


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
    width: float | None = None
    #: (low, high) busbw in GB/s and time in s a measurement is likely to show at each size (the
    #: estimate's error band), drawn shaded around an emphasised line; None: not drawn
    busbw_band: tuple[tuple[float, float], ...] | None = None
    time_band: tuple[tuple[float, float], ...] | None = None
    #: the algorithm/protocol at each size (``ring/LL``), where a change is marked on the plot as
    #: the table marks it ``>``; None: not marked
    picks: tuple[str, ...] | None = None
    #: the line's dash pattern (a matplotlib line style); None: solid, dashed for a what-if
    linestyle: LineStyleType | None = None
    #: the marker at each size (a matplotlib marker), shown in the legend beside the line
    marker: str = "o"


@dataclass(frozen=True)
class Ceiling:
    """A physical ceiling drawn as a horizontal line, in GB/s per direction."""

    label: str
    GBps: float
    kind: Literal["scale-up", "network-node", "network-gpu"]
    color: str | None = None
    #: what the line's tag at its left end names it by, before its rate ("ndr per node")
    tag: str = ""


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


def check_target(
    path: str | Path, *, inputs: Iterable[str | os.PathLike[str]] = ()
) -> tuple[Path, str]:
    """Return (path, format) for a plot target, or raise :class:`PlotError`.

    The suffix decides the format (.png or .svg); the directory must exist and be writable, the
    target must not be a directory, nor one of ``inputs`` (files this run reads). Called before
    any work is done, so a bad target leaves stdout empty.
    """
    target = Path(path)
    # Python reads '.png' as a hidden file with no suffix: say that, not "must end in .png"
    if target.name.lower() in SUFFIXES:
        raise PlotError(
            f"cannot write a plot to {printable(str(target))!r}: the file name has nothing "
            f"before {target.name} (e.g. plot{target.name})"
        )
    fmt = SUFFIXES.get(target.suffix.lower())
    if fmt is None:
        allowed = " or ".join(SUFFIXES)
        raise PlotError(
            f"cannot write a plot to {printable(str(target))!r}: the file name must end in "
            f"{allowed}"
        )
    try:
        check_output(target, inputs=inputs, what="plot")
    except OutputError as exc:
        raise PlotError(str(exc)) from None
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
    """Write ``fig`` to ``target`` atomically (temporary file in the same directory, rename).

    A reader never sees a half-written picture, and a failed write leaves an existing file as
    it was. The same figure always gives the same bytes (no dates, fixed SVG id salt).
    """
    import matplotlib

    def draw(handle: IO[bytes]) -> None:
        # matplotlib warns, in several lines naming this file, of a glyph its font lacks (a
        # label in a script DejaVu Sans does not cover): the picture shows a box, and stderr
        # stays the tool's (review CU)
        with (
            matplotlib.rc_context({"svg.hashsalt": "ibcalc"}),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore", UserWarning)
            fig.savefig(handle, format=fmt, dpi=_DPI, metadata=_metadata(fmt))

    try:
        write_output(check_output(target, what="plot"), draw)
    except OutputError as exc:
        raise PlotError(str(exc)) from None


def _metadata(fmt: str) -> dict[str, Any]:
    # No creation date, so the same command writes the same bytes (reviewable diffs of docs/img).
    if fmt == "svg":
        return {"Date": None, "Creator": "ibcalc"}
    return {"Software": "ibcalc"}


# ---------------------------------------------------------------------------------------- sweep


def sweep_series(
    label: str, estimates: Sequence[Estimate], *, emphasis: bool = True, color: str | None = None
) -> Series:
    """The chosen algorithm's busbw and time at each size of a sweep, with their likely ranges
    where every estimate has one."""
    return expected_series(
        label,
        size_bytes=[e.size_bytes for e in estimates],
        busbw_GBps=[e.busbw_Bps / GB for e in estimates],
        time_s=[e.time_s for e in estimates],
        equivalent=[e.best.equivalent_busbw for e in estimates],
        busbw_ranges_GBps=[
            None if r is None else (r[0] / GB, r[1] / GB)
            for r in (e.busbw_Bps_range for e in estimates)
        ],
        time_ranges_s=[e.time_s_range for e in estimates],
        picks=[f"{e.best.algorithm.value}/{e.best.protocol.value}" for e in estimates],
        emphasis=emphasis,
        color=color,
    )


def expected_series(
    label: str,
    *,
    size_bytes: Sequence[float],
    busbw_GBps: Sequence[float],
    time_s: Sequence[float],
    equivalent: Sequence[bool],
    busbw_ranges_GBps: Sequence[tuple[float, float] | None],
    time_ranges_s: Sequence[tuple[float, float] | None],
    picks: Sequence[str],
    emphasis: bool = True,
    color: str | None = None,
) -> Series:
    """A model's line over sizes: busbw (GB/s) and time (s), shaded with their likely ranges
    where every size has both, and the algorithm/protocol at each size (``ring/LL``), marked
    where it changes on an emphasised line. A sweep's estimates and nccl-check's expected rows
    are drawn alike through it."""
    banded = bool(size_bytes) and all(
        b is not None and t is not None
        for b, t in zip(busbw_ranges_GBps, time_ranges_s, strict=True)
    )
    return Series(
        label=label,
        size_bytes=tuple(size_bytes),
        busbw_GBps=tuple(busbw_GBps),
        time_s=tuple(time_s),
        equivalent=tuple(equivalent),
        emphasis=emphasis,
        color=color,
        busbw_band=tuple(b for b in busbw_ranges_GBps if b is not None) if banded else None,
        time_band=tuple(t for t in time_ranges_s if t is not None) if banded else None,
        picks=tuple(picks) if emphasis else None,
    )


def algorithm_series(per_algorithm: Mapping[Algorithm, Sequence[Estimate]]) -> list[Series]:
    """One thin series per algorithm, from the estimates ``--algo A`` gives at each size.

    Algorithms NCCL cannot pick (hierarchical, rhd) are labelled as what-ifs and drawn dashed.
    """
    from ibcalc.engine.select import NCCL_ALGORITHMS

    out: list[Series] = []
    for algorithm in sorted(per_algorithm, key=lambda a: list(Algorithm).index(a)):
        estimates = per_algorithm[algorithm]
        if not estimates:
            continue
        label = algorithm.value + ("" if algorithm in NCCL_ALGORITHMS else " (what-if)")
        out.append(sweep_series(label, estimates, emphasis=False))
    return out


def load_measured(
    path: str | Path,
    *,
    collective: Collective | None = None,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
    picture: str | Path | None = None,
) -> tuple[list[MeasuredPoint], int]:
    """Read measured points from a CSV with columns ``size_bytes,busbw_GBps`` at least.

    Optional columns: ``time_us`` (for the time panel), ``label`` (one legend entry per label;
    else per ``gpu`` when that column exists, as in ``benchmarks/data/measurements.csv``),
    and ``collective``, ``nodes``, ``gpus_per_node``: when present, only rows matching the plotted
    sweep are kept, so a mixed file such as ``benchmarks/data/measurements.csv`` can be given as
    is. Returns the points kept and the number of data rows read. Raises :class:`PlotError`
    with ``file:line`` for unreadable files or values; a file that is an nccl-tests or
    rccl-tests log is refused saying so, with the ``nccl-check`` command that plots it
    (``picture``: the plot it was to go on).
    """
    source = Path(path)
    name = printable(str(source))
    try:
        raw = read_regular(source, MAX_MEASURED_BYTES)
    except ReadRefused as exc:
        if exc.reason.startswith("file is larger"):
            raise PlotError(f"{name}: larger than {MAX_MEASURED_BYTES // 2**20} MiB") from None
        reason = exc.reason.removeprefix("cannot read file: ")
        raise PlotError(f"{name}: cannot read ({reason})") from None
    if b"\0" in raw:
        raise PlotError(f"{name}: binary file, expected CSV")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlotError(f"{name}: not UTF-8 text") from None
    # newline="": the csv module splits lines itself, so a file ending its lines in a lone
    # carriage return (an old Mac export) reads as rows; handed whole, it had been an internal
    # error ("new-line character seen in unquoted field", exit 3)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    with _csv_problems(reader, name):
        header = reader.fieldnames
    columns = [c.strip() for c in header or []]
    twice = sorted({c for c in columns if c and columns.count(c) > 1})
    if twice:
        # DictReader keeps the last of a repeated column: which one a point took was unsaid
        raise PlotError(f"{name}:1: column {', '.join(twice)} given twice")
    missing = [c for c in ("size_bytes", "busbw_GBps") if c not in columns]
    if missing:
        tests = _tests_log(text)
        if tests is not None:
            # a log where the CSV was asked: its header had been quoted as the columns found
            command = shlex.join(
                [
                    "ibcalc",
                    "nccl-check",
                    name,
                    *(["--plot", printable(str(picture))] if picture else []),
                ]
            )
            raise PlotError(
                f"{name} is an {tests} log; --measured reads a CSV of size_bytes,busbw_GBps: "
                f"{command} reads logs"
                + (" and plots one over the model's expectation" if picture else "")
            )
        raise PlotError(
            f"{name}:1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(found: {', '.join(columns) or 'none'}; need size_bytes,busbw_GBps)"
        )
    default_label = f"measured ({source.name})"
    points: list[MeasuredPoint] = []
    total = 0
    for row in _csv_rows(reader, name):
        total += 1
        line = reader.line_num
        if row.get(None):
            raise PlotError(f"{name}:{line}: more fields than the header's {len(columns)}")
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
        if size != int(size):
            # as --size and design sizes are: a buffer is whole bytes
            raise PlotError(
                f"{name}:{line}: size_bytes {values['size_bytes']!r} is not a whole number of bytes"
            )
        if busbw <= 0:
            continue  # nccl-tests prints 0.00 at tiny sizes; a log axis cannot show it
        time_s = None
        if values.get("time_us"):
            time_s = _number(values["time_us"], name, line, "time_us") * 1e-6
        # the file's text, as all input shown is: control characters escaped, cut short (an
        # ESC in a label had reached the terminal inside matplotlib's warning, review CU)
        label = printable(
            values.get("label")
            or (f"measured: {values['gpu']}" if values.get("gpu") else default_label),
            80,
        )
        points.append(MeasuredPoint(size, busbw, time_s, label))
    return points, total


@contextlib.contextmanager
def _csv_problems(reader: csv.DictReader[str], name: str) -> Iterator[None]:
    """A line the csv module refuses (a field past its 128 KiB limit) as a one-line
    :class:`PlotError` at that line; it had escaped as an internal error (exit 3)."""
    try:
        yield
    except csv.Error as exc:
        # line_num counts the lines parsed whole; the one refused is the next
        raise PlotError(f"{name}:{reader.line_num + 1}: not readable as CSV ({exc})") from None


def _csv_rows(reader: csv.DictReader[str], name: str) -> Iterator[dict[str | Any, Any]]:
    """The rows of ``reader``, a line it refuses raised as :func:`_csv_problems` says."""
    with _csv_problems(reader, name):
        yield from reader


def _tests_log(text: str) -> str | None:
    """``nccl-tests`` or ``rccl-tests`` where ``text`` holds a result table of theirs, else None."""
    from ibcalc.errors import IbcalcError
    from ibcalc.logs.parse import parse_log

    try:
        runs = parse_log(text).runs
    except IbcalcError:
        return None
    if not any(run.rows for run in runs):
        return None
    return "rccl-tests" if any(run.library == "rccl" for run in runs) else "nccl-tests"


def _matches(values: dict[str, str], column: str, wanted: int | None) -> bool:
    if wanted is None or column not in values:
        return True
    try:
        return int(float(values[column])) == wanted
    except ValueError:
        return False


#: Largest value accepted per column of a measured CSV: 1 PB, 1 PB/s, about 11.6 days.
_MEASURED_LIMITS = {"size_bytes": 1e15, "busbw_GBps": 1e6, "time_us": 1e12}


def _number(text: str, name: str, line: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PlotError(f"{name}:{line}: {column} {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise PlotError(f"{name}:{line}: {column} {text!r} is not a finite non-negative number")
    if value > _MEASURED_LIMITS[column]:
        raise PlotError(
            f"{name}:{line}: {column} {text!r} is above {_MEASURED_LIMITS[column]:g}, "
            "not a measurement"
        )
    return value


def _size_ticks(ax: Axes, low: float, high: float) -> None:
    from matplotlib.ticker import FixedLocator, NullFormatter

    # powers of two, the sizes nccl-tests sweeps (-f 2): powers of ten had labelled a sweep
    # from 1 MiB '1 MB', a tick left of its first point (a review); a step of 1, 2, 5 or 10
    # doublings keeps a dozen ticks at most, on 1 KiB, 1 MiB, 1 GiB where it is 10
    lo, hi = math.floor(math.log2(low / 1.5)), math.ceil(math.log2(high * 1.5))
    step = next((s for s in (1, 2, 5, 10) if (hi - lo) / s <= 12), 10)
    ticks = [2.0**k for k in range(max(0, lo), hi + 1) if k % step == 0]
    ticks = [t for t in ticks if low / 1.5 <= t <= high * 1.5]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    # minor ticks (and their grid) on the other powers of two, not on 2x10^k ... 9x10^k
    ax.xaxis.set_minor_locator(
        FixedLocator([2.0**k for k in range(max(0, lo), hi + 1) if 2.0**k not in ticks])
    )
    ax.xaxis.set_major_formatter(_formatter(lambda v: format_size(v).replace(" ", "\u2009")))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if low == high:
        # one size in the middle (it had sat at the left edge, a review)
        ax.set_xlim(low / 1.5, high * 1.5)


def _formatter(function: Any) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: function(value) if value > 0 else "")


def _plain_log_axis(axis: Any, function: Any) -> None:
    """Label a log axis with ``function`` only: the major ticks, and minor ones where the view
    spans few decades (every one under a decade, 2 and 5 under two); matplotlib's own minor
    labels are math text, "4 x 10^2" beside "100", whose font lookup wrote 21 lines to stderr."""
    from matplotlib.ticker import FuncFormatter

    def minor(value: float, _pos: int | None) -> str:
        low, high = sorted(axis.get_view_interval())
        if value <= 0 or low <= 0 or high / low >= 100:
            return ""
        lead = round(value / 10 ** math.floor(math.log10(value) + 1e-9))
        return function(value) if high / low < 10 or lead in (2, 5) else ""

    axis.set_major_formatter(_formatter(function))
    axis.set_minor_formatter(FuncFormatter(minor))


def _label_ceilings(ax: Any, ceilings: Sequence[Ceiling]) -> None:
    """Each ceiling's link and rate at the left end of its line, so that two lines a few per
    cent apart can be told apart (review DO: NVLink 4's 371 GB/s and 8 NDR's 390 GB/s had
    drawn as one line, told apart in the legend alone): above its line, beside the labels of
    lines within 40 % above it, as many as the axes' width holds."""
    # lines within 40 % of the next one up form a group, whose labels sit side by side above
    # their lines, the highest first: three lines at 371, 385 and 390 GB/s had put two labels
    # below lines 4 % apart, one on the other, and labels stacked below a group had run into
    # the next group's (review ED 12); on log axes of 6-8 decades a 7-point label is taller
    # than 35 % (240 and 202 GB/s had overprinted, review EE 4). A row stops at the axes'
    # width, the rest said as a count (the legend names every line), and no label takes part
    # in the layout (a long row had shrunk the plot to a strip: review EE 3).
    groups: list[list[Ceiling]] = []
    for ceiling in sorted(ceilings, key=lambda c: c.GBps):
        if groups and ceiling.GBps < groups[-1][-1].GBps * 1.4:
            groups[-1].append(ceiling)
        else:
            groups.append([ceiling])
    fig = ax.get_figure()
    width_points = ax.get_position().width * fig.get_figwidth() * 72 if fig else math.inf

    def label(text: str, y: float, x_points: float, color: str) -> None:
        note = ax.annotate(
            text,
            xy=(0.005, y),
            xycoords=("axes fraction", "data"),
            xytext=(x_points, 2),
            textcoords="offset points",
            va="bottom",
            ha="left",
            fontsize=7,
            color=color,
            zorder=1,
            annotation_clip=False,
            # on a half-clear box: a line above a group's labels had struck them through
            bbox=dict(_CLEAR_BOX),
        )
        note.set_in_layout(False)

    def wide(text: str) -> float:
        # 7-point glyphs average under 0.62 em, and a gap of 8 points
        return len(text) * 7 * 0.62 + 8

    for group in groups:
        x_points = 0.0
        for shown, ceiling in enumerate(reversed(group)):
            text = f"{ceiling.tag or ceiling.label} {_gbps_label(ceiling.GBps)} GB/s"
            left = len(group) - shown - 1
            room = width_points - x_points - (wide(f"+{left} more (legend)") if left else 0)
            if wide(text) > room:
                label(f"+{left + 1} more (legend)", ceiling.GBps, x_points, _SCALE_UP_COLOR)
                break
            label(text, ceiling.GBps, x_points, ceiling.color or _SCALE_UP_COLOR)
            x_points += wide(text)


def _gbps_label(value: float) -> str:
    """A bandwidth in GB/s with about 3 significant digits and no exponent, rounded as the
    tables round it (:func:`format_number`): '%.3g' had labelled a busbw axis reaching 1e-6 GB/s
    '1e-06' below '0.0001', and written EFA v2's 11.25 GB/s '11.2' where the tables print 11.3."""
    if value >= 100:
        return f"{value:.0f}"
    return format_number(value)


def _mark_switches(
    axis: Axes, ser: Series, values: Sequence[float], col: str, *, words: bool
) -> bool:
    """Mark the sizes where ``ser``'s pick changes with a hollow diamond; with ``words``, write
    the new pick beside it and the time's fall there (``tree/LL128, time -27.7%``), above a
    point in the lower half of its curve's span and below one in the upper half, clipped to the
    axes. True if any."""
    picks = ser.picks or ()
    at = [i for i in range(1, len(picks)) if picks[i] != picks[i - 1]]
    if not at:
        return False
    positive = [v for v in values if v > 0]
    low_value = min(positive, default=1.0)
    span = math.log(max(positive, default=1.0) / low_value)
    axis.plot(
        [ser.size_bytes[i] for i in at],
        [values[i] for i in at],
        "D",
        markerfacecolor="#ffffff",
        markeredgecolor=col,
        markeredgewidth=1.4,
        markersize=7,
        zorder=_SWITCH_Z,
    )
    for i in at if words else ():
        drop = 1.0 - ser.time_s[i] / ser.time_s[i - 1]
        # 'time -27.7%': on the busbw panel, where busbw rises there, a bare '-27.7%' had read
        # as busbw's (a review)
        text = picks[i] + (f", time -{format_number(100 * drop)}%" if drop > 0 else "")
        # on the side of the point with room (its curve's lower half: above), clipped to the
        # axes: written above a high point, a label had run into the title (a review)
        high = math.log(values[i] / low_value) > 0.5 * span if span > 0 else False
        axis.annotate(
            text,
            (ser.size_bytes[i], values[i]),
            xytext=(0, -9 if high else 9),
            textcoords="offset points",
            rotation=90,
            fontsize=6.5,
            color=col,
            ha="center",
            va="top" if high else "bottom",
            # above the lines, on a half-clear box: behind them, other curves' markers had
            # covered letters ('ylstre/Simple'; a second review), and an opaque box the lines
            zorder=6,
            annotation_clip=True,
            clip_on=True,
            bbox={
                "boxstyle": "round,pad=0.1",
                "facecolor": "white",
                "edgecolor": "none",
                "alpha": 0.7,
            },
        )
    return True


def plot_sweep(
    path: str | Path,
    series: Sequence[Series],
    *,
    title: str,
    ceilings: Sequence[Ceiling] = (),
    measured: Sequence[MeasuredPoint] = (),
    time_panel: bool = False,
    footnote: str = "",
    switches: str = "NCCL's tuner switches (the table's >)",
) -> Path:
    """Draw busbw over message size (log-log), optionally with a time panel; write ``path``.

    Ceilings are dashed horizontal lines; measured points are drawn as black-edged markers;
    points whose busbw is an equivalent figure (in-network reduction, 2-node tree) are hollow.
    The legend says what a switch diamond marks with ``switches`` (a sweep's: NCCL's tuner
    switches, marked ``>`` in its table). Returns the path written.
    """
    target, fmt = check_target(path)
    if not series:
        raise PlotError("nothing to plot: the sweep has no sizes")
    rows = math.ceil((len(series) + len(ceilings) + len({p.label for p in measured}) + 1) / 2)
    fig = _new_figure(9.0, (7.6 if time_panel else 5.2) + 0.17 * rows)
    if time_panel:
        ax, ax_time = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    else:
        ax, ax_time = fig.subplots(1, 1), None

    sizes = [s for ser in series for s in ser.size_bytes] + [p.size_bytes for p in measured]
    low, high = min(sizes), max(sizes)
    palette = iter(range(100))
    any_equivalent = False
    band_labelled = False
    # where NCCL's tuner changes algorithm or protocol (the table's '>'); on a sweep of one
    # cluster with the new pick and, where time falls there, by how much: the table and JSON
    # said so and the picture showed an unexplained dip (a review)
    marked = [ser for ser in series if ser.emphasis and ser.picks is not None]
    any_switch = False
    for ser in series:
        col = ser.color or color(next(palette))
        width = ser.width or (2.4 if ser.emphasis else 1.3)
        alpha = 1.0 if ser.emphasis else 0.85
        style = ser.linestyle or ("-" if ser.emphasis else "--" if "what-if" in ser.label else "-")
        for axis, values, band in (
            (ax, ser.busbw_GBps, ser.busbw_band),
            (ax_time, ser.time_s, ser.time_band),
        ):
            if axis is None:
                continue
            if band is not None and ser.emphasis:
                first = axis is ax and not band_labelled
                label = "shaded: likely range of a measurement" if first else None
                if len(ser.size_bytes) > 1:
                    axis.fill_between(
                        ser.size_bytes,
                        [b[0] for b in band],
                        [b[1] for b in band],
                        color=col,
                        alpha=0.13,
                        linewidth=0,
                        zorder=1.5,
                        label=label,
                    )
                else:  # one size: an area needs two, so a bar with caps
                    axis.errorbar(
                        ser.size_bytes,
                        values,
                        yerr=[[values[0] - band[0][0]], [band[0][1] - values[0]]],
                        fmt="none",
                        ecolor=col,
                        alpha=0.5,
                        capsize=6,
                        linewidth=6,
                        zorder=1.5,
                        label=label and "bar: likely range of a measurement",
                    )
                band_labelled = band_labelled or first
            axis.plot(
                ser.size_bytes,
                values,
                linestyle=style,
                color=col,
                linewidth=width,
                alpha=alpha,
                label=ser.label if axis is ax else None,
                # an algorithm's thin line above the thick chosen one, which had hidden it
                # wherever NCCL picks that algorithm (a review)
                zorder=4 if ser.emphasis else 4.6,
            )
            solid = [
                (s, v)
                for s, v, e in zip(ser.size_bytes, values, ser.equivalent, strict=True)
                if not e
            ]
            hollow = [
                (s, v) for s, v, e in zip(ser.size_bytes, values, ser.equivalent, strict=True) if e
            ]
            size = max(2.5, 1.6 * width) if ser.emphasis else 2.5
            if solid:
                axis.plot(
                    [p[0] for p in solid],
                    [p[1] for p in solid],
                    ser.marker,
                    linestyle="none",
                    color=col,
                    markersize=size,
                    zorder=4.5 if ser.emphasis else 4.7,
                    alpha=alpha,
                )
            if hollow:
                any_equivalent = True
                axis.plot(
                    [p[0] for p in hollow],
                    [p[1] for p in hollow],
                    ser.marker,
                    linestyle="none",
                    markerfacecolor="white",
                    markeredgecolor=col,
                    markersize=size + 1.5,
                    zorder=4.5 if ser.emphasis else 4.7,
                    alpha=alpha,
                )
            if ser in marked:
                words = len(marked) == 1 and axis is (ax if ax_time is None else ax_time)
                any_switch = _mark_switches(axis, ser, values, col, words=words) or any_switch

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
    _label_ceilings(ax, ceilings)

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
            # above the switch diamonds (5.5), which had hidden a measurement at the size where
            # the expected choice changes; the diamond's rim shows around it
            zorder=_MEASURED_Z,
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
                zorder=_MEASURED_Z,
            )

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("busbw (GB/s = 10^9 B/s, per direction)")
    # wrapped: eight fabrics' names had run the title off the picture (a review)
    ax.set_title("\n".join(textwrap.wrap(title, 100)), fontsize=11)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    _plain_log_axis(ax.yaxis, _gbps_label)
    handles, names = ax.get_legend_handles_labels()
    from matplotlib.lines import Line2D

    # a series' entry shows its marker on its line: two fabrics' entries had differed by colour
    # alone, and so had their curves where one hid the other
    samples = {
        ser.label: Line2D(
            [],
            [],
            color=ser.color,
            linestyle=ser.linestyle or "-",
            linewidth=ser.width or 2.4,
            marker=ser.marker,
            markersize=max(2.5, 1.6 * (ser.width or 2.4)) + 1.5,
        )
        for ser in series
        if ser.linestyle is not None
    }
    handles = [samples.get(name, handle) for handle, name in zip(handles, names, strict=True)]

    for shown, marker, name in (
        (any_equivalent, "o", "hollow: equivalent busbw, not a wire rate"),
        (
            any_switch,
            "D",
            f"diamond: {switches}"
            + (", with the new pick and time's fall" if len(marked) == 1 else ""),
        ),
    ):
        if shown:
            handles.append(
                Line2D(
                    [],
                    [],
                    marker=marker,
                    linestyle="none",
                    markerfacecolor="white",
                    markeredgecolor="black",
                )
            )
            names.append(name)
    # Below the axes, so no curve or ceiling is hidden behind it; in one column where two are
    # wider than the picture (nccl-check of a log with a long file name had cut both columns'
    # ends off), the picture taller by the rows added
    legend = fig.legend(
        handles, names, loc="outside lower center", ncols=2, fontsize=8, frameon=False
    )
    with warnings.catch_warnings():
        # measuring lays the labels out: a glyph the font lacks warns, as in _save
        warnings.simplefilter("ignore", UserWarning)
        too_wide = legend.get_window_extent().width > fig.bbox.width
    if too_wide:
        legend.remove()
        fig.legend(handles, names, loc="outside lower center", ncols=1, fontsize=8, frameon=False)
        fig.set_figheight(fig.get_figheight() + 0.17 * (len(names) - math.ceil(len(names) / 2)))
    bottom = ax_time if ax_time is not None else ax
    if ax_time is not None:
        ax_time.set_xscale("log")
        ax_time.set_yscale("log")
        ax_time.set_ylabel("time per collective")
        ax_time.grid(True, which="major", alpha=0.35)
        ax_time.grid(True, which="minor", alpha=0.12)
        # a decade's tick reads '10 ms', not '10.0 ms' (the zeros a column of times keeps)
        _plain_log_axis(ax_time.yaxis, lambda seconds: format_time(seconds, zeros=False))
    bottom.set_xlabel("message size S (bytes, nccl-tests convention)")
    _size_ticks(ax, low, high)
    if footnote:
        # Bottom right of the busbw panel: small sizes sit low on the left, ceilings at the top.
        ax.text(
            0.995,
            0.012,
            footnote,
            transform=ax.transAxes,
            fontsize=7,
            color="#444444",
            ha="right",
            va="bottom",
            # on a half-clear box, as the ceilings' tags: a ceiling low on the axis (hdr's
            # 195 GB/s beside a 1 GiB point at 355) had struck it through
            bbox=dict(_CLEAR_BOX),
        )
    _save(fig, target, fmt)
    return target


#: Collectives whose busbw across nodes is not bounded by the node's NIC bandwidth as a ring's is.
_NOT_RING = (Collective.ALL_TO_ALL, Collective.SEND_RECV)


def _cluster_label(cluster: ResolvedCluster) -> str:
    out = cluster.topology.out
    if cluster.inter is None or out is None:
        return cluster.intra.id if cluster.intra else "-"
    gbit = cluster.inter.per_direction_Bps * BITS_PER_BYTE / GB
    return f"{cluster.inter.id}: {out.nics_per_domain} x {gbit:g} Gb/s per {_domain(cluster)}"


def _domain(cluster: ResolvedCluster) -> str:
    """What one scale-up domain is called: a node, or a multi-node NVLink domain (NVL72)."""
    return "node" if cluster.topology.m <= cluster.gpus_per_node else "scale-up domain"


#: The colour of a plot's network ceilings where it draws one cluster (several: each its own)
ONE_NETWORK_COLOR = "#333333"


def scale_up_ceilings(ceilings: BusbwCeilings) -> list[Ceiling]:
    """The scale-up link's achievable rate per GPU as a line, where the cluster has one."""
    link, rate = ceilings.scale_up_link, ceilings.scale_up_GBps
    if link is None or rate is None:
        return []
    return [Ceiling(f"{link} achievable per GPU", rate, "scale-up", tag=f"{link} per GPU")]


def network_ceilings(
    ceilings: BusbwCeilings, collective: Collective, col: str, *, share: bool
) -> list[Ceiling]:
    """The network's busbw ceilings as lines in ``col``: its achievable rate per node (or
    scale-up domain), the ring's ceiling across them, and with ``share`` each GPU's share of it
    (the scale-out side of the gap); for all-to-all, each GPU's ceiling through its share of
    the NICs instead. None where the cluster has no network."""
    link, node_GBps = ceilings.network_link, ceilings.network_GBps
    if link is None or node_GBps is None:
        return []
    m, n = ceilings.gpus_per_domain, ceilings.ranks
    count = ceilings.network_nics
    nics = f"{count} NIC{'s' if count > 1 else ''}"
    where = ("scale-up domain" if ceilings.domain_spans_nodes else "node") if m > 1 else "GPU"
    if collective == Collective.ALL_TO_ALL and n > m:
        # each GPU sends (n - m) / n of its buffer across the network through its share of
        # the NICs, and busbw is algbw x (n - 1) / n: busbw <= share x (n - 1) / (n - m)
        # tapered leaves slow that traffic as the engine has it for PXN, NCCL's all-to-all
        # since 2.12 (topology.leaf_contention, rail-aligned: pairwise, off its rail, can
        # cross more, contention("unaligned"))
        taper = ceilings.leaf_contention
        return [
            Ceiling(
                f"{link} all-to-all ceiling, share x {n - 1}/{n - m}"
                + (f", tapered uplinks x{format_slowdown(taper)} slower" if taper > 1 else ""),
                node_GBps / m * (n - 1) / (n - m) / taper,
                "network-node",
                col,
                # a GPU's busbw ceiling, not the node's rate ('per node' had been derived
                # from its kind)
                tag=f"{link} all-to-all",
            )
        ]
    ring = ", ring ceiling" if collective not in _NOT_RING else ""
    # a NIC held to its host link says so: xdr's 403 GB/s per node is 8 x pcie5's 50.4,
    # which the legend had left unsaid (a review)
    capped = f", each capped by {ceilings.nic_cap}" if ceilings.nic_cap is not None else ""
    lines = [
        Ceiling(
            f"{link} achievable per {where} ({nics}{capped}{ring})",
            node_GBps,
            "network-node",
            col,
            tag=f"{link} per {'domain' if where == 'scale-up domain' else where}",
        )
    ]
    if m > 1 and share:
        lines.append(
            Ceiling(
                f"{link} per-GPU share (the scale-out side of the gap)",
                node_GBps / m,
                "network-gpu",
                col,
                tag=f"{link} per GPU",
            )
        )
    return lines


def plot_sweep_clusters(
    path: str | Path,
    collective: Collective,
    groups: Sequence[tuple[ResolvedCluster, Sequence[Estimate]]],
    *,
    per_algorithm: Mapping[Algorithm, Sequence[Estimate]] | None = None,
    forced: Algorithm | None = None,
    measured: Sequence[MeasuredPoint] = (),
    time_panel: bool = False,
    dtype: str = "fp32",
) -> Path:
    """Draw the sweeps of one or several clusters (one per fabric) with their ceilings.

    One line per cluster (the engine's choice); with a single cluster and ``per_algorithm``, the
    choice in black plus one thin line per algorithm. Ceilings (dashed): the scale-up link's
    achievable rate per GPU, each fabric's achievable rate per node (the ring's busbw ceiling across
    nodes, docs/model.md#tiers), and for a single fabric the per-GPU share of it (the scale-out side
    of the gap). Returns the path written.
    """
    from ibcalc import __version__

    if not groups:
        raise PlotError("nothing to plot: no sweep")
    first = groups[0][0]
    single = len(groups) == 1
    series: list[Series] = []
    if single and per_algorithm:
        label = f"NCCL-like choice ({_cluster_label(first)})"
        series.append(sweep_series(label, groups[0][1], color="#000000"))
        series.extend(
            replace(s, color=color(i)) for i, s in enumerate(algorithm_series(per_algorithm))
        )
    else:
        # Thinner line for each later fabric, drawn above the earlier ones with its own dashes
        # and marker: where fabrics agree (small sizes are latency-bound; ndr and roce-400g
        # nearly everywhere) the lower line shows around and between the upper one's dashes.
        series.extend(
            replace(
                sweep_series(_cluster_label(cluster), estimates, color=color(i)),
                linestyle=_FABRIC_STYLES[i % len(_FABRIC_STYLES)][0],
                marker=_FABRIC_STYLES[i % len(_FABRIC_STYLES)][1],
                width=_FABRIC_STYLES[min(i, len(_FABRIC_STYLES) - 1)][2],
            )
            if not single
            else sweep_series(_cluster_label(cluster), estimates, color=color(i))
            for i, (cluster, estimates) in enumerate(groups)
        )
    ceilings = scale_up_ceilings(busbw_ceilings(first))
    for i, (cluster, _estimates) in enumerate(groups):
        ceilings += network_ceilings(
            busbw_ceilings(cluster),
            collective,
            ONE_NETWORK_COLOR if single else color(i),
            share=single,
        )
    fabrics = ", ".join(c.inter.id for c, _ in groups if c.inter is not None) or None
    shape = {key: getattr(groups[0][1][0], key) for key in LINK_KEYS}
    where = links_words(**{**shape, "inter": fabrics})
    nodes = f"{first.nodes} node{'s' if first.nodes != 1 else ''}"
    title = (
        # the element type beside the collective, as nccl-check's title has it: in the
        # footnote alone, a bf16 sweep's picture had read as any other's at a glance
        f"{collective.value} {dtype} busbw, {nodes} x {first.gpus_per_node} GPUs ({where}"
        + (f"; --algo {forced.value}" if forced is not None else "")
        + ")"
    )
    footnote = (
        f"ibcalc {__version__} model estimates; busbw = algbw x nccl-tests factor; "
        f"{dtype}; GB/s = 10^9 B/s per direction"
    )
    return plot_sweep(
        path,
        series,
        title=title,
        ceilings=ceilings,
        measured=measured,
        time_panel=time_panel,
        footnote=footnote,
    )


def load_measured_for(
    path: str | Path, result: SweepResult, *, picture: str | Path | None = None
) -> tuple[list[MeasuredPoint], int]:
    """:func:`load_measured`, keeping the rows that match ``result`` (its first group's cluster;
    ``picture``, the plot they go on, is named where ``path`` is a log).

    Returns the points kept and the rows read; :class:`PlotError` when no row matches.
    """
    first = result.groups[0]
    points, total = load_measured(
        path,
        collective=result.collective,
        nodes=first.nodes,
        gpus_per_node=first.gpus_per_node,
        picture=picture,
    )
    if not points:
        raise PlotError(
            f"no row of {path} matches {result.collective.value} on {first.nodes} nodes x "
            f"{first.gpus_per_node} GPUs (rows are filtered by their collective, nodes and "
            "gpus_per_node columns when present; busbw 0 is skipped)"
        )
    return points, total


def plot_sweep_result(
    path: str | Path,
    result: SweepResult,
    *,
    per_algorithm: Mapping[Algorithm, Sequence[Estimate]] | None = None,
    measured: Sequence[MeasuredPoint] = (),
    time_panel: bool = False,
) -> Path:
    """Draw a sweep (:func:`ibcalc.sweep.sweep_fabrics`): :func:`plot_sweep_clusters` of its groups.

    ``per_algorithm`` (:func:`ibcalc.sweep.algorithm_lines`) adds one thin line per algorithm to
    a single-cluster sweep. Returns the path written.
    """
    return plot_sweep_clusters(
        path,
        result.collective,
        [(group.cluster, group.estimates) for group in result.groups],
        per_algorithm=per_algorithm,
        forced=result.algorithm,
        measured=measured,
        time_panel=time_panel,
        dtype=result.dtype.value,
    )


# ------------------------------------------------------------------------------------------ gap


def _inter_label(result: GapResult) -> str:
    per_gpu = result.nics_per_gpu
    gbit = result.nic_line_Bps * 8 / GB
    if per_gpu >= 1:
        count = f"{per_gpu:g} per GPU"
    else:
        # fewer NICs than GPUs: the node's count (dgx-1v: 4 per 8-GPU node, not '1 per')
        where = "site" if result.inter_wan else "node"
        count = f"{result.nics_per_node} per {result.gpus_per_node}-GPU {where}"
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
    notes = []
    for y, bar in zip(positions, bars, strict=True):
        col = up_color if bar.side == "scale-up" else out_color
        ax.barh(y, bar.line_GBps, height=0.72, color=col, alpha=0.28, edgecolor=col)
        ax.barh(y, bar.achievable_GBps, height=0.42, color=col, alpha=0.95)
        notes.append(
            ax.text(
                bar.line_GBps * (1.08 if log else 1.0) + (0 if log else max(values) * 0.015),
                y,
                # on two lines: on one, the widest label had needed 2 decades of a log axis
                # past the largest bar
                f"{_gbps_label(bar.line_GBps)} GB/s line\n"
                f"{_gbps_label(bar.achievable_GBps)} GB/s achievable",
                va="center",
                fontsize=7.5,
                linespacing=1.1,
            )
        )
    ax.set_yticks(positions, [b.label for b in bars], fontsize=9)
    for above, below in itertools.pairwise(bars):
        if above.side != below.side:
            split = positions[bars.index(below)] + 0.5
            ax.axhline(split, color="#999999", linewidth=0.8)
    low = min(values) / 2 if log else 0.0
    if log:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(_formatter(_gbps_label))
    ax.set_xlim(low, max(values) * 1.05)
    ax.set_xlabel(
        "GB/s per GPU, per direction"
        + (" (log scale)" if log else "")
        + "\nGB/s = 10^9 B/s; vendor 'bidirectional' GPU-link figures are 2x these"
    )
    ax.grid(True, axis="x", which="major", alpha=0.35)
    from matplotlib.patches import Patch

    # a WAN is named as one, as the text report does: its bar is per site, not a scale-out NIC
    wan = [r.inter_wan for r in results]
    outer = "WAN" if all(wan) else "scale-out or WAN" if any(wan) else "scale-out"
    handles = [
        Patch(facecolor=up_color, alpha=0.95, label="scale-up, achievable"),
        Patch(facecolor=up_color, alpha=0.28, edgecolor=up_color, label="scale-up, line rate"),
        Patch(facecolor=out_color, alpha=0.95, label=f"{outer}, achievable"),
        Patch(facecolor=out_color, alpha=0.28, edgecolor=out_color, label=f"{outer}, line rate"),
    ]
    # below the axes: inside them it had covered the last bar's label (a review)
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=2, frameon=False)
    if title is None:
        if len(results) == 1:
            r = results[0]
            links, across = (
                (f"{r.nics_per_node} x {r.inter} per site", "sites")
                if r.inter_wan
                else (f"{r.nics_per_node} NICs per node", "nodes")
            )
            title = (
                f"{r.intra} vs {r.inter} per GPU, per direction ({r.gpus_per_node} GPUs and "
                f"{links})\n"
                f"gap {format_ratio(r.ratio_line)} at line rate, "
                f"{format_ratio(r.ratio_achievable)} achievable\n"
                # a line of its own: with the element type beside it, a WAN's 'sites' had
                # gone past the figure's edge
                f"a {allreduce_words(r.allreduce_size_bytes, r.allreduce_dtype)} is "
                f"{format_ratio(r.slowdown)} slower across {across}"
            )
        else:
            title = (
                f"Scale-up vs {outer} bandwidth per GPU, per direction\n"
                "(8-GPU nodes; pale bar = line rate, dark bar = achievable)"
            )
    ax.set_title(title, fontsize=10)
    _fit_notes(fig, ax, notes, low, log=log)
    _save(fig, target, fmt)
    return target


def _fit_notes(fig: Figure, ax: Axes, notes: Sequence[Text], low: float, *, log: bool) -> None:
    """End the x axis where the widest-reaching label beside a bar ends, with a 3 % margin.

    A fixed end had put the labels' room at 200x the largest bar on a log axis (ten empty
    decades past the data, most of the picture's width) and 1.75x on a linear one. A label's
    width is fixed in points, so the axis end that fits it is solved for once the layout is
    known: a label starting at fraction ``f`` of an axis ``W`` points wide and ``w`` points
    long fits when ``f <= (0.97 W - w) / W``; the layout is measured twice, as the new end's
    tick labels can narrow the axes.
    """
    scale = math.log if log else float
    start = scale(low) if log else 0.0
    least = scale(ax.get_xlim()[1]) - start
    for note in notes:
        # a label past the axes' end counts in the layout, which had narrowed the axes for it
        note.set_in_layout(False)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a glyph the font lacks, as in _save
            fig.draw_without_rendering()
        room = ax.get_window_extent().width
        span = least
        for note in notes:
            share = (0.97 * room - note.get_window_extent().width) / room
            reach = scale(note.get_position()[0]) - start
            if share > 0 and reach / share > span:
                span = reach / share
        ax.set_xlim(low, math.exp(start + span) if log else span)
