"""Rendering of ``ibcalc nccl-check`` and ``ibcalc calibrate``: rich tables, JSON, GitHub, plots.

Tables go through rich (this is a render module); JSON is the result models' ``model_dump``;
GitHub output is workflow commands (``::warning file=F,line=L::...``) pointing at the log line of
each row or finding; the plot overlays measured and expected busbw with
:func:`ibcalc.render.plot.plot_sweep` (matplotlib stays optional, with the same install hint and
atomic write). Library texts may name cluster fields as ``{field}``; every renderer takes
``names`` (field -> what the caller calls it, e.g. ``--nodes``) to fill them in.

Every number carries its unit: sizes in bytes (KiB, MiB, GiB), times in us, bandwidths in GB/s
(10^9 bytes per second, per direction, as nccl-tests prints them).
"""

from __future__ import annotations

import io
import os
import re
import sys
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ibcalc.engine.types import Collective
from ibcalc.errors import fill_fields
from ibcalc.jsonmodel import json_text
from ibcalc.listing import listed
from ibcalc.logs.calibrate import (
    SIGNIFICANT_ERRORS,
    Calibration,
    FittedParameter,
    bound_text,
    changed,
    clock_text,
    significant,
    written,
)
from ibcalc.logs.results import (
    GIVEN,
    Assumption,
    Finding,
    RowCheck,
    RunCheck,
    eff_pct,
    line_span,
)
from ibcalc.render.plot import (
    ONE_NETWORK_COLOR,
    MeasuredPoint,
    Series,
    expected_series,
    network_ceilings,
    plot_sweep,
    scale_up_ceilings,
)
from ibcalc.render.stream import (
    PipeConsole,
    TrimmedStream,
    env_columns,
    left_out,
    terminal_width,
    unit_wrap,
)
from ibcalc.textsafe import printable
from ibcalc.units import NS_BELOW_S, fixed, plural

__all__ = [
    "CHECK_FORMATS",
    "calibration_dict",
    "checks_dict",
    "plot_check",
    "render_calibration",
    "render_calibration_report",
    "render_check_report",
    "render_checks",
    "render_checks_github",
    "render_checks_json",
]

#: Output formats of a check report (:func:`render_check_report`).
CHECK_FORMATS = ("table", "json", "github")

_VERDICT_STYLE = {
    "ok": "green",
    "above": "cyan",
    "low": "yellow",
    "bad": "red",
    "corrupt": "bold red",
    "unknown": "dim",
    "not_checked": "dim",
}
_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _console(stream: TextIO) -> Console:
    # laid out for the terminal stdout is, else $COLUMNS, else 140: the text is built in a
    # buffer, which is no terminal, and an 80-column terminal had been given 140-column lines
    width = terminal_width(sys.stdout) or env_columns(140)
    trimmed = TrimmedStream(stream)  # rich pads table lines to the width: no trailing spaces
    return PipeConsole(file=trimmed, highlight=False, width=max(60, width), soft_wrap=False)


def _fill(text: str, names: Mapping[str, str] | None) -> str:
    return fill_fields(text, names) if names else fill_fields(text, lambda f: f)


def _size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _us(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _gbps(value: float, extra: int = 0) -> str:
    """A busbw in GB/s to 3 significant figures or whole GB/s, ``extra`` decimals more, a half
    rounded up as everywhere (:func:`~ibcalc.units.fixed`: a measured 182.50 reads 183)."""
    if value >= 100:
        return fixed(value, extra)
    if value >= 1:
        return fixed(value, 1 + extra)
    return fixed(value, 3 + extra)


def _busbw_cells(row: RowCheck) -> tuple[str, str]:
    """(measured busbw, expected busbw with the range a measurement is likely to show where
    busbw is what the row is judged on; latency rows are judged on time).

    A row just outside the band could print inside it (386.6 against a low edge of 386.9 both
    show 387): such cells get a decimal more, up to two, until the printed figures agree with
    the verdict. Rounding never moves a row inside the band out of it."""
    band = row.expected_busbw_GBps_range if row.regime != "latency" else None
    extra = 0
    while band is not None and row.within_band is False and extra < 2:
        shown = float(_gbps(row.measured_busbw_GBps, extra))
        if not float(_gbps(band[0], extra)) <= shown <= float(_gbps(band[1], extra)):
            break
        extra += 1
    expected = _gbps(row.expected_busbw_GBps, extra) + ("*" if row.busbw_equivalent else "")
    if band is not None:
        expected += f" ({_gbps(band[0], extra)}-{_gbps(band[1], extra)})"
    return _gbps(row.measured_busbw_GBps, extra), expected


def _expected_time_cell(row: RowCheck, *, band_shown: bool = True) -> str:
    """The expected time, with the range a measurement is likely to show on rows judged on time
    (the latency regime; the others carry theirs on busbw), unless ``band_shown`` is False."""
    band = row.expected_time_us_range if row.regime == "latency" and band_shown else None
    if band is None:
        return _us(row.expected_time_us)
    return f"{_us(row.expected_time_us)} ({_us(band[0])}-{_us(band[1])})"


#: Under a rows table: what the efficiency is, and what the brackets mean.
_LEGEND = "eff.: measured busbw / expected (= expected time / measured time)"
_RANGE_LEGEND = (
    "; (a-b): the busbw (the time, on latency rows) a measurement is likely to show "
    "(the model's error band)"
)


#: Columns a narrow terminal drops, first to last: the regime follows from the size
#: (docs/nccl-check.md), the algorithm and the line are aids.
_NARROW_DROPS = ("regime", "algorithm", "line")

_ROW_COLUMNS = (
    ("size", "right"),
    ("time\nus", "right"),
    ("expected\nus", "right"),
    ("busbw\nGB/s", "right"),
    ("expected\nGB/s", "right"),
    ("eff.", "right"),
    ("verdict", "left"),
    ("regime", "left"),
    ("algorithm", "left"),
    ("line", "right"),
)


def _row_cells(
    check: RunCheck, *, time_bands: bool = True, wrap_verdict: bool = False
) -> list[list[str | Text]]:
    cells: list[list[str | Text]] = []
    for row in check.rows:
        verdict: str = row.verdict
        if row.wrong:
            # on a narrow page the count goes under the verdict, whole ("#wrong 18134")
            verdict += ("\n" if wrap_verdict else " ").join((",", f"#wrong {row.wrong}"))
        cells.append(
            [
                _size(row.size_bytes),
                _us(row.measured_time_us),
                _expected_time_cell(row, band_shown=time_bands),
                *_busbw_cells(row),
                eff_pct(row.efficiency),
                Text(verdict, style=_VERDICT_STYLE.get(row.verdict, "")),
                row.regime,
                row.choice,
                str(row.line),
            ]
        )
    return cells


def _column_widths(cells: list[list[str | Text]]) -> dict[str, int]:
    """Each column's width: its widest cell or header line."""
    return {
        name: max(
            len(part)
            for text in [name, *(str(row[i]) for row in cells)]
            for part in text.split("\n")
        )
        for i, (name, _) in enumerate(_ROW_COLUMNS)
    }


def _dropped_columns(widths: Mapping[str, int], width: int) -> list[str]:
    """The columns a table of ``widths`` (one space apart) leaves out to fit ``width``: the
    regime, then the algorithm, then the line, as long as it is too wide."""
    dropped: list[str] = []
    for name in _NARROW_DROPS:
        if _table_width(widths, dropped) <= width:
            break
        dropped.append(name)
    return dropped


def _dropped_words(
    dropped: list[str], widths: Mapping[str, int], width: int, *, bands: bool = False
) -> str:
    """The legend's words for the columns (and, with ``bands``, the latency rows' time bands)
    left out, empty when none, with the width that shows them all."""
    if not dropped and not bands:
        return ""
    names = [name.rstrip(".") for name in dropped]  # "the eff column", as the sweep has it
    listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    items = [f"the {listed} column{'s' if len(names) > 1 else ''}"] if names else []
    if bands:
        items.append("the latency rows' time bands")
    many = len(dropped) + bands > 1
    return "; " + left_out(
        " and ".join(items), width, _table_width(widths), many=many, json="every field"
    )


def _table_width(widths: Mapping[str, int], dropped: Sequence[str] = ()) -> int:
    """The width of a table of ``widths`` one space apart, without the ``dropped`` columns."""
    kept = [w for name, w in widths.items() if name not in dropped]
    return sum(kept) + len(kept) - 1


def _rows_table(check: RunCheck, width: int = 100) -> tuple[Table, str]:
    """One row per size, whole cells one space apart, and the legend under it, with its words
    for what is left out: a table wider than ``width`` drops the regime, then the algorithm,
    then the line column, then the latency rows' time bands, then puts a row's #wrong count
    under its verdict, and last drops the efficiency (the busbw columns beside it give it),
    rather than cut a number."""
    cells = _row_cells(check)
    widths = _column_widths(cells)
    dropped = _dropped_columns(widths, width)
    # still too wide with every aid column gone: the latency rows' time bands go too
    bands = _table_width(widths, dropped) > width
    if bands:
        cells = _row_cells(check, time_bands=False)
        narrow = _column_widths(cells)
        if _table_width(narrow, dropped) > width and any(row.wrong for row in check.rows):
            cells = _row_cells(check, time_bands=False, wrap_verdict=True)
            narrow = _column_widths(cells)
        if _table_width(narrow, dropped) > width:
            dropped.append("eff.")
    ranges = any(
        r.expected_busbw_GBps_range is not None or r.expected_time_us_range is not None
        for r in check.rows
    )
    legend = _LEGEND if "eff." not in dropped else ""
    if ranges:
        legend += _RANGE_LEGEND if legend else _RANGE_LEGEND.removeprefix("; ")
    words = _dropped_words(dropped, widths, width, bands=bands)
    legend += words if legend else words.removeprefix("; ")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=0)
    for name, justify in _ROW_COLUMNS:
        if name not in dropped:
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row_cells in cells:
        table.add_row(
            *(
                cell
                for cell, (name, _) in zip(row_cells, _ROW_COLUMNS, strict=True)
                if name not in dropped
            )
        )
    return table, legend


def _finding_lines(
    index: int, finding: Finding, names: Mapping[str, str] | None, width: int | None = None
) -> Table:
    """``1. [severity, confidence] cause`` with its evidence as a list below; wrapped lines stay
    under the text they continue and, given the page's ``width``, break only where a number does
    not part from its unit (:func:`~ibcalc.render.stream.unit_wrap`: rich's own wrap had put
    "286" at the end of one line and "GB/s" at the start of the next at 100 columns)."""
    head = Text()
    head.append(
        f"[{finding.severity}, {finding.confidence} confidence] ",
        style=_SEVERITY_STYLE[finding.severity],
    )
    head.append(_fill(finding.cause, names))
    number = f"{index}."
    room = width - len(number) - 1 if width else None
    if room:
        # unit_wrap turns spaces into line breaks, one character for one: the severity's
        # style spans stay where they were
        spans = head.spans
        head = Text(unit_wrap(head.plain, room))
        head.spans = spans
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    grid.add_row(number, head)
    if finding.evidence:
        grid.add_row("", _items((_fill(item, names) for item in finding.evidence), width=room))
    return grid


def _shown_in_table(assumption: Assumption) -> bool:
    """Whether the table lists ``assumption``: all but the flags the caller gave, which it
    lists only where they override what the log states (the collective is in the title)."""
    if assumption.source != "flag":
        return True
    return assumption.evidence != GIVEN and assumption.field != "collective"


def _collective_title(check: RunCheck) -> str:
    """The collective a run was judged as: the caller's when given (with the log's beside it),
    else the log's own name."""
    given = any(a.field == "collective" and a.source == "flag" for a in check.assumptions)
    if given:
        return f"{check.collective} (given; the log says {check.raw_collective or 'nothing'})"
    # a run not judged (scatter or gather) had read "unknown collective fp32 on not resolved"
    return check.raw_collective or check.collective or "a collective the log does not name"


def render_checks(
    checks: Sequence[RunCheck],
    stream: TextIO | None = None,
    *,
    names: Mapping[str, str] | None = None,
    show_assumptions: bool = True,
) -> str:
    """Tables and ranked causes for each checked run; written to ``stream`` and returned."""
    buffer = io.StringIO()
    console = _console(buffer)
    for i, check in enumerate(checks):
        if i:
            console.print()
        title = Text()
        source = printable(check.source, None)
        span = f"(run {check.run_index + 1}, {line_span(check.line_start, check.line_end)}): "
        if cell_len(source) > console.width:
            # a path wider than the page is not folded into pieces that no longer name the
            # file: it stands whole on its own line (the terminal wraps it) and the title
            # follows on the next
            console.print(Text(source, style="bold"), overflow="ignore", crop=False)
            title.append(span)
        else:
            title.append(source, style="bold")
            title.append(" " + span)
        title.append(_collective_title(check))
        if check.dtype:
            title.append(f" {check.dtype}")
        title.append(
            f" on {check.cluster}" if check.collective is not None else " (no cluster resolved)"
        )
        console.print(title)
        verdict = Text("verdict: ")
        verdict.append(check.verdict, style=_VERDICT_STYLE.get(check.verdict, ""))
        if check.min_bandwidth_efficiency is not None:
            lowest = eff_pct(check.min_bandwidth_efficiency)
            verdict.append(f" (lowest efficiency at 64 MiB and more: {lowest})")
        if check.rows and any(
            a.field == "system" and a.source == "default" for a in check.assumptions
        ):
            # judged against a node the log does not name: say so where the verdict is read
            gpu = next((a.value for a in check.assumptions if a.field == "gpu_model"), None)
            why = f"no node rule knows its GPU {gpu!r}" if gpu else "the log names no node type"
            verdict.append(
                f"; against a default node, as {why}: give {_fill('{system}', names)} to judge it"
            )
        elif check.inter is not None and any(f.kind == "network_mismatch" for f in check.findings):
            # the log's own transport line names another network (review DC)
            verdict.append(f"; against {check.inter}, which the log's transport line contradicts")
        elif (
            check.min_bandwidth_efficiency is not None
            and not check.network_known
            and check.inter is not None
        ):
            # judged against a network the log does not show: said where the verdict is read
            # (2 x 8 H100 on Google's TCPXO read 'bad 26%' against an assumed 8 x NDR, the
            # assumption only among the notes; a review)
            verdict.append(
                f"; against an assumed network ({check.nics_per_node} x {check.inter} per node), "
                "as the log does not show it: give "
                + _fill("{inter} (and {nics_per_node}) or {system}", names)
                + " to judge it"
            )
        console.print(verdict)
        shown = [a for a in check.assumptions if _shown_in_table(a)]
        if show_assumptions and shown:
            console.print("assumptions:")
            console.print(
                _items(
                    (
                        f"{a.field}{'' if a.value is None else f' = {a.value}'} [{a.source}]: "
                        f"{_fill(a.evidence, names)}"
                        for a in shown
                    ),
                    width=console.width,
                )
            )
        if check.rows:
            table, legend = _rows_table(check, console.width)
            console.print(table)
            console.print(Text(legend, style="dim"))
            if any(r.busbw_equivalent for r in check.rows):
                # as a sweep marks them (the README's promise; nccl-check had not)
                console.print(
                    Text(
                        "* expected busbw is an equivalent figure (in-network or 2-node tree), "
                        "not a wire rate",
                        style="dim",
                    )
                )
        if check.flagged:
            console.print("likely causes, most likely first:")
        elif check.rows:
            # a latency or mid row can be low while the run's verdict (its large rows) is ok
            off = sum(r.verdict in ("low", "bad") for r in check.rows)
            if check.verdict == "corrupt":
                console.print("the verdict is corrupt: see the notes below")
            elif off:
                rows = f"the {'row' if off == 1 else f'{off} rows'} marked low or bad above"
                why = f"no cause found for {rows}"
                if check.findings:
                    why = f"{rows}: see the notes below"
                large = "; the rows of 64 MiB or more, which set the run's verdict, match the model"
                console.print(why + (large if check.verdict == "ok" else ""))
            elif check.verdict == "above":
                console.print("faster than the model expects at every size of 64 MiB and more")
            elif check.verdict == "unknown":
                # one 32 MiB row had read 'verdict: unknown' then 'the run matches the model';
                # the note below says why nothing is judged
                console.print("no row marked low or bad; no verdict without a large row")
            else:
                console.print(Text("no problem found: the run matches the model", style="green"))
        if check.findings and not check.flagged:
            console.print("notes:")
        for n, finding in enumerate(check.findings, start=1):
            console.print(_finding_lines(n, finding, names, console.width))
        for note in check.notes:
            # broken as the findings are, never between a number and its unit (rich's own wrap
            # had put "its out-of-place time is 0" over "us" at 80 columns)
            console.print(Text(unit_wrap(f"note: {note}", console.width), style="dim"))
    text = buffer.getvalue()
    if stream is not None:
        stream.write(text)
    return text


def _filled(data: Any, names: Mapping[str, str] | None) -> Any:
    if isinstance(data, str):
        return _fill(data, names)
    if isinstance(data, list):
        return [_filled(x, names) for x in data]
    if isinstance(data, dict):
        return {k: _filled(v, names) for k, v in data.items()}
    return data


def checks_dict(
    checks: Sequence[RunCheck],
    *,
    names: Mapping[str, str] | None = None,
    errors: Sequence[Mapping[str, str]] = (),
    gate: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The checks as JSON-ready data: every run's ``model_dump`` plus ``flagged``; the files
    that could not be read or checked (``errors``: source and message, as on stderr) and the
    ``--min-efficiency`` gate's result (``gate``; None without one)."""
    runs = []
    for check in checks:
        data = check.model_dump(mode="json")
        data["flagged"] = check.flagged
        runs.append(_filled(data, names))
    return {
        "schema": "ibcalc-nccl-check/3",
        "units": "sizes in bytes, times in us, bandwidths in GB/s (10^9 B/s per direction)",
        "runs": runs,
        "errors": [dict(e) for e in errors],
        "gate": dict(gate) if gate is not None else None,
    }


def render_checks_json(
    checks: Sequence[RunCheck],
    *,
    names: Mapping[str, str] | None = None,
    errors: Sequence[Mapping[str, str]] = (),
    gate: Mapping[str, Any] | None = None,
) -> str:
    """:func:`checks_dict` as indented JSON text."""
    data = checks_dict(checks, names=names, errors=errors, gate=gate)
    return json_text(data)


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _gh(kind: str, path: str, line: int | None, title: str, message: str) -> str:
    props = [f"file={_gh_prop(path)}"]
    if line is not None:
        props.append(f"line={line}")
    props.append(f"title={_gh_prop(title)}")
    return f"::{kind} {','.join(props)}::{_gh_data(message)}"


_GH_KIND = {"error": "error", "warning": "warning", "info": "notice"}


#: An error of ``nccl-check``'s report that is a run's (an option its log contradicts), not a
#: file's.
_RUN_ERROR = re.compile(r"run \d+: ")


def render_checks_github(
    checks: Sequence[RunCheck],
    *,
    names: Mapping[str, str] | None = None,
    errors: Sequence[Mapping[str, str]] = (),
    gate: Mapping[str, Any] | None = None,
) -> str:
    """GitHub Actions workflow commands: one ``::error`` per file that could not be checked
    (it had given none: the file's error was on stderr alone, review DH), one annotation per
    finding (at its first log line) and one per large size below the ok band (at the row's
    line), one ``::error`` per run that fails the ``--min-efficiency`` gate (a failing gate
    had annotated nothing, its FAIL line on stderr alone: review EC 3), its sizes cut as the
    FAIL line cuts them (it had named every one), then a summary line per run."""
    failing = {
        (run["source"], run["run_index"]): run["reasons"]
        for run in (gate or {}).get("failed_runs", ())
    }
    # the files that could not be read or checked; a run whose log contradicts an option
    # ('run 1: ...') has its finding's annotation already (review DM)
    lines: list[str] = [
        _gh(
            "error",
            printable(error["source"], None),
            None,
            "nccl-check: cannot check",
            printable(error["message"], None),
        )
        for error in errors
        if not _RUN_ERROR.match(error["message"])
    ]
    for check in checks:
        where = check.source
        for finding in check.findings:
            line = finding.lines[0] if finding.lines else check.line_start
            message = _fill(finding.cause, names)
            if finding.evidence:
                message += "\n" + "\n".join(_fill(e, names) for e in finding.evidence)
            lines.append(
                _gh(
                    _GH_KIND[finding.severity],
                    where,
                    line,
                    f"nccl-check: {finding.kind.replace('_', ' ')}",
                    message,
                )
            )
        for row in check.rows:
            if row.regime == "bandwidth" and row.verdict in ("low", "bad"):
                measured, expected = _busbw_cells(row)
                # an annotation has no footnote: the mark said in words (a review)
                expected = expected.replace("*", "", 1)
                if row.busbw_equivalent:
                    expected += " GB/s, an equivalent figure (in-network or 2-node tree)"
                else:
                    expected += " GB/s"
                lines.append(
                    _gh(
                        "warning",
                        where,
                        row.line,
                        f"nccl-check: {_size(row.size_bytes)} {row.verdict}",
                        f"{_size(row.size_bytes)}: busbw {measured} GB/s, "
                        f"expected {expected} ({eff_pct(row.efficiency)}, "
                        f"{row.choice})",
                    )
                )
        reasons = failing.get((check.source, check.run_index))
        if reasons is not None and gate is not None:
            lines.append(
                _gh(
                    "error",
                    where,
                    check.line_start,
                    "nccl-check: --min-efficiency",
                    f"run {check.run_index + 1}: --min-efficiency {gate['min_efficiency']:g} "
                    f"fails at {listed(reasons, 'size')}",
                )
            )
        eff = (
            f", lowest efficiency at 64 MiB and more {eff_pct(check.min_bandwidth_efficiency)}"
            if check.min_bandwidth_efficiency is not None
            else ""
        )
        failed = "; fails --min-efficiency" if reasons is not None else ""
        lines.append(
            f"nccl-check {printable(check.source, None)} run {check.run_index + 1}: "
            f"{check.verdict}{eff}{failed}"
        )
    return "".join(line + "\n" for line in lines)  # no run read: nothing, not an empty line


def plot_check(path: str | Path, check: RunCheck) -> Path:
    """Measured busbw and time (markers) over the model's expectation for one run, drawn as a
    sweep is (:func:`ibcalc.render.plot.plot_sweep`): the expected line shaded with the likely
    range of a measurement, marked where the expected algorithm/protocol changes, over a time
    panel; with the top finding's what-if curve when it has one. Written atomically to ``path``
    (.png or .svg)."""
    rows = check.rows
    series = [
        expected_series(
            # a colon, as the sweep plot names a fabric: the cluster says its preset in
            # parentheses, and "expected (8 x 8 GPUs (dgx-h100) ...)" had nested them
            f"expected: {check.cluster}",
            size_bytes=[float(r.size_bytes) for r in rows],
            busbw_GBps=[r.expected_busbw_GBps for r in rows],
            time_s=[r.expected_time_us * 1e-6 for r in rows],
            equivalent=[r.busbw_equivalent for r in rows],
            busbw_ranges_GBps=[r.expected_busbw_GBps_range for r in rows],
            time_ranges_s=[
                None if t is None else (t[0] * 1e-6, t[1] * 1e-6)
                for t in (r.expected_time_us_range for r in rows)
            ],
            picks=[r.choice for r in rows],
        )
    ]
    top = next((f for f in check.findings if f.curve and f.hypothesis), None)
    if top is not None:
        # the what-if's time at a size, from its busbw: t = S x F / busbw, with nccl-tests'
        # factor F = busbw x t / S of the expected row at that size (same collective and ranks)
        bus_time = {r.size_bytes: r.expected_busbw_GBps * r.expected_time_us * 1e-6 for r in rows}
        curve = [(s, b) for s, b in top.curve if b > 0 and s in bus_time]
        series.append(
            Series(
                label=f"what-if {top.hypothesis}",
                size_bytes=tuple(float(s) for s, _ in curve),
                busbw_GBps=tuple(b for _, b in curve),
                time_s=tuple(bus_time[s] / b for s, b in curve),
                equivalent=tuple(False for _ in curve),
                emphasis=False,
            )
        )
    measured = [
        MeasuredPoint(
            size_bytes=float(r.size_bytes),
            busbw_GBps=max(r.measured_busbw_GBps, 1e-6),
            time_s=r.measured_time_us * 1e-6,
            label=f"measured ({printable(Path(check.source).name)})",
        )
        for r in rows
    ]
    # what was expected, of what, on what: the element type and cluster as the report's
    # heading gives them (the title had named the collective alone)
    dtype = f"{check.dtype} " if check.dtype else ""
    title = (
        f"{_collective_title(check)}: measured vs expected busbw, {dtype}on {check.cluster} "
        f"(verdict: {check.verdict})"
    )
    # the cluster's ceilings, drawn as the sweep plot draws one cluster's
    lines = []
    if check.ceilings is not None and check.collective is not None:
        lines = scale_up_ceilings(check.ceilings) + network_ceilings(
            check.ceilings, Collective(check.collective), ONE_NETWORK_COLOR, share=True
        )
    return plot_sweep(
        path,
        series,
        title=title,
        ceilings=lines,
        measured=measured,
        time_panel=True,
        switches=_switches(check),
    )


def _switches(check: RunCheck) -> str:
    """What a diamond of the check's plot marks: where NCCL's tuner, as the model prices it,
    changes the expected pick, where the report's table changes its algorithm column (it has no
    ``>`` column, which the legend had pointed to, the sweep table's mark). An rccl-tests log
    is expected with NCCL's tuner constants too (RCCL's own are not modelled: the report's
    'cluster [default]' note), so its diamonds are NCCL's picks standing in for RCCL's (the
    legend had called them RCCL's tuner's)."""
    tuner = "NCCL's tuner, standing in for RCCL's," if check.library == "rccl" else "NCCL's tuner"
    return f"{tuner} switches (the table's algorithm column changes)"


#: The schema of calibrate's JSON, fitted or not (its number rises when a key changes meaning).
CALIBRATION_SCHEMA = "ibcalc-calibration/2"


def _empty(annotation: object) -> object:
    """A calibration field's value where nothing was fitted: an empty list or mapping, a count
    of 0, else null (the date, the figures)."""
    origin = typing.get_origin(annotation) or annotation
    return [] if origin is list else {} if origin is dict else 0 if origin is int else None


def calibration_dict(
    calibration: Calibration, *, names: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The calibration as JSON-ready data (``model_dump``, ``{field}`` marks filled)."""
    data = {"schema": CALIBRATION_SCHEMA, **calibration.model_dump(mode="json")}
    return {key: _filled(value, names) for key, value in data.items()}


def _value(unit: str, value: float | None) -> str:
    if value is None:
        return "-"
    if unit == "s":
        # in ns as format_time prints (a fitted 2.86 ns read '0.00286 us' and its standard
        # error '8.94e-05 us')
        if 0 < abs(value) < NS_BELOW_S:
            return f"{_sig3(value * 1e9)} ns"
        return f"{_sig3(value * 1e6)} us"
    if unit == "B/s":
        return f"{_sig3(value / 1e9)} GB/s"
    return _sig3(value)


def _sig3(x: float) -> str:
    """Three significant digits, trailing zeros kept, so a column reads 0.900 / 0.912 / 0.0183;
    no bare point (476, not '476.') and no exponent (1,234, not '1.23e+03')."""
    if abs(x) >= 999.5:  # 999.7 would round to '1.00e+03'
        return f"{x:,.0f}"
    return f"{x:#.3g}".rstrip(".")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _items(lines: Iterable[str], style: str = "", width: int | None = None) -> Table:
    """A bulleted list whose long items wrap under their own text, not under the bullet; given
    the ``width`` the list has, an item breaks only where a number does not part from its unit
    (:func:`~ibcalc.render.stream.unit_wrap`: "count x 4 B" had broken before its "B")."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for line in lines:
        # escaped here, where they are shown: a log's host and GPU names had reached the
        # terminal with U+202E and C1 controls raw (review CU), and escaped where they were read
        # they had been escaped twice in notes and held escaped in JSON (review CW)
        text = printable(line, None)
        # the bullet column and its padding take 4
        grid.add_row("  -", Text(unit_wrap(text, width - 4) if width else text, style=style))
    return grid


def _fold_words(text: str, width: int) -> str:
    """``text`` with each word longer than ``width`` cut into lines of ``width`` characters (a
    log's file name, one word, in a narrow column)."""
    return " ".join(
        "\n".join(word[i : i + width] for i in range(0, len(word), width))
        if len(word) > width
        else word
        for word in text.split(" ")
    )


#: Fewer fitted rows than this get "fitted on only N rows" beside their standard error, which
#: then rests on one or two degrees of freedom.
_FEW_ROWS = 3


def _few_rows(p: FittedParameter) -> str:
    """The note of a value fitted on fewer than :data:`_FEW_ROWS` rows ('' for more): a value
    written says so first, since a bare "only 2 rows" after a row's "not written" had read as
    the reason this one was not written either."""
    if not 0 < p.rows < _FEW_ROWS:
        return ""
    few = f"fitted on only {plural(p.rows, 'row')}"
    return f"written; {few}" if written(p) else few


#: Columns between two columns of calibrate's tables (box.SIMPLE_HEAD, pad_edge off): a space of
#: padding on each side and the box's divider.
_GAP = 3


def _breaks_words(cells: Sequence[tuple[str, ...]], name: int | None, note: int | None) -> bool:
    """Whether the fitted parameters' table, with its name and note columns ``name`` and
    ``note`` wide (None: as wide as they need), would break a word: a name is broken after the
    link's id where it must be, never inside a part."""
    for row in cells:
        link, _, field = row[0].partition(".")
        if name is not None and len(row[0]) > name and max(len(link) + 1, len(field)) > name:
            return True
        if note is not None and any(len(word) > note for word in row[5].split()):
            return True
    return False


def _fitted_block(cells: tuple[str, ...], width: int) -> Text:
    """One fitted parameter (its table row's ``cells``) as lines, for a page too narrow for the
    table: its name, then its figures, then its note, each indented and wrapped at spaces."""
    name, before, fitted, error, rows, why = cells
    spread = "" if error == "-" else f", std. error {error}"
    figures = f"{before} -> {fitted}{spread}, {plural(int(rows), 'row')}"
    lines = [name, *("  " + line for line in unit_wrap(figures, width - 2).split("\n"))]
    if why:
        lines += ("  " + line for line in unit_wrap(f"note: {why}", width - 2).split("\n"))
    return Text("\n".join(lines))


def render_calibration(
    calibration: Calibration,
    stream: TextIO | None = None,
    *,
    names: Mapping[str, str] | None = None,
) -> str:
    """The fitted values, what the logs could not determine, and the fit quality per run;
    ``names`` fills the ``{field}`` marks of the reasons and assumptions."""
    buffer = io.StringIO()
    console = _console(buffer)
    console.print(
        Text(
            # the date first, labelled: a long path wraps after it, not inside "(fitted DATE)"
            f"calibration fitted {calibration.fitted_on} on "
            f"{', '.join(printable(i, None) for i in calibration.inputs)}",
            style="bold",
        )
    )
    if calibration.warnings:
        notes = Table.grid(padding=(0, 1))
        notes.add_column(no_wrap=True)
        notes.add_column(overflow="fold")
        for warning in calibration.warnings:
            notes.add_row(Text("warning:", style="bold"), Text(_fill(warning, names), style="bold"))
        console.print(notes)
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        title="fitted parameters",
        title_justify="left",
    )
    cells = [
        (
            p.name,
            _value(p.unit, p.before),
            _value(p.unit, p.value),
            _value(p.unit, p.uncertainty),
            str(p.rows),
            "; ".join(
                t
                for t in (
                    "at the bound of its range" if p.at_bound else "",
                    # the file's value, which an estimate scales by Hopper's clock over its
                    # GPU's: a figure for an A100 read off a table as its own is 1.4x too low
                    clock_text(p),
                    bound_text(p),
                    p.uncertainty_reason or "",
                    (
                        ""
                        if changed(p) and significant(p)
                        else "not written"
                        if changed(p) and p.exact
                        else f"< {SIGNIFICANT_ERRORS:g} std. err.: not written"
                        if changed(p)
                        else "the value in use, confirmed: not written"
                    ),
                    _few_rows(p),
                )
                if t
            ),
        )
        for p in calibration.parameters
    ]
    headers = ("parameter", "before", "fitted", "std. error", "rows", "note")
    widths = [max([len(name)] + [len(row[i]) for row in cells]) for i, name in enumerate(headers)]
    # figures are never cut; on a narrow terminal the parameter's name and the note fold, the
    # note keeping 12 columns where the width allows (_GAP columns between any two: padding and
    # divider; the console is at least 60 wide)
    fixed: dict[str, int | None] = {"parameter": None, "note": None}
    spare = console.width - sum(widths[1:5]) - _GAP * (len(headers) - 1)
    if widths[0] + widths[5] > spare:
        note = max(min(widths[5], 12), spare - widths[0])
        fixed = {"parameter": max(9, spare - note), "note": max(1, spare - max(9, spare - note))}
    if not calibration.parameters:
        console.print("no parameter could be determined from these runs")
    elif _breaks_words(cells, fixed["parameter"], fixed["note"]):
        # too narrow for the table without breaking a word (at 60 columns a name had read
        # 'gcp-tcpxo / .transpor / t_latency' and its note 'writ / ten': review EU 4): one
        # block per parameter, its figures on one line
        console.print("fitted parameters")
        for row in cells:
            console.print(_fitted_block(row, console.width))
    else:
        for i, name in enumerate(headers):
            if name in fixed:
                table.add_column(name, overflow="fold", width=fixed[name])
            else:
                table.add_column(name, no_wrap=True, min_width=widths[i])
        room = fixed["parameter"]
        for row in cells:
            name = row[0]
            if room is not None and len(name) > room and "." in name:
                # a name too long for its column breaks after the link's id, not mid-word
                link, _, field = name.partition(".")
                if len(link) + 1 <= room and len(field) <= room:
                    name = f"{link}.\n{field}"
            table.add_row(name, *row[1:])
        console.print(table)
    if calibration.undetermined:
        console.print("not determined:")
        console.print(
            _items(
                (f"{u.name}: {_fill(u.reason, names)}" for u in calibration.undetermined),
                width=console.width,
            )
        )
    fit = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        title="fit quality per run",
        title_justify="left",
    )
    # the file name may be long: it folds; a figure is never broken, but "before -> after"
    # may take two lines
    fit.add_column("run", overflow="fold")
    for name in ("rows", "latency error", "bandwidth error"):
        fit.add_column(name, no_wrap=name == "rows", justify="right" if name == "rows" else "left")
    runs = [
        (
            f"{printable(Path(r.source).name)} (run {r.run_index + 1}, {r.collective})",
            str(r.rows),
            f"{_pct(r.latency_error_before)} -> {_pct(r.latency_error_after)}",
            f"{_pct(r.bandwidth_error_before)} -> {_pct(r.bandwidth_error_after)}",
        )
        for r in calibration.runs
    ]
    # the page keeps every word whole (PipeConsole.print), so a file name longer than the room
    # the other columns leave is folded here: one of 77 characters had printed the table 106
    # columns wide on an 80-column page. The others at their narrowest: the rows whole, the
    # errors broken at their spaces; _GAP columns between any two columns.
    others = _GAP * (len(fit.columns) - 1)
    others += max(len(text) for text in ["rows", *(run[1] for run in runs)])
    for i, header in ((2, "latency error"), (3, "bandwidth error")):
        others += max(
            len(word) for text in [header, *(run[i] for run in runs)] for word in text.split()
        )
    for run in runs:
        fit.add_row(_fold_words(run[0], max(20, console.width - others)), *run[1:])
    console.print(fit)
    console.print(
        f"rms log error of the time over {plural(calibration.rows, 'row')}: "
        f"{calibration.rms_before:.3f} -> {calibration.rms_after:.3f} "
        + (
            f"with every fitted value, {calibration.rms_written:.3f} with the values written "
            # as printed: two figures that read alike are one (0.030 and 0.030)
            if f"{calibration.rms_written:.3f}" != f"{calibration.rms_after:.3f}"
            else ""
        )
        # the errors are the factor off either way, less one: a run 5x slower than predicted
        # reads 400 %, where benchmarks' |predicted / measured - 1| reads 80 % (a QA pass found
        # 396.8 % here and 79.9 % in docs/nccl-check.md's table for one run, both "median error")
        + "(latency: median |error| of sizes <= 64 KiB; bandwidth: of sizes >= 64 MiB; an error "
        "is the factor the prediction is off by, either way, less 1: 5x off reads 400%)"
    )
    if calibration.assumptions:
        console.print(Text("assumed:", style="dim"))
        console.print(
            _items(
                (_fill(n, names) for n in calibration.assumptions),
                style="dim",
                width=console.width,
            )
        )
    text = buffer.getvalue()
    if stream is not None:
        stream.write(text)
    return text


def render_check_report(
    checks: Sequence[RunCheck],
    fmt: str = "table",
    *,
    names: Mapping[str, str] | None = None,
    errors: Sequence[Mapping[str, str]] = (),
    gate: Mapping[str, Any] | None = None,
) -> str:
    """The checks in one of :data:`CHECK_FORMATS`: tables, JSON (with ``errors`` and ``gate``,
    which the other formats leave to stderr), or GitHub annotations."""
    if fmt == "json":
        return render_checks_json(checks, names=names, errors=errors, gate=gate)
    if fmt == "github":
        return render_checks_github(checks, names=names, errors=errors, gate=gate)
    return render_checks(checks, names=names)


def render_calibration_report(
    calibration: Calibration,
    fmt: str = "table",
    *,
    names: Mapping[str, str] | None = None,
    written: Sequence[str | os.PathLike[str]] = (),
) -> str:
    """The calibration as tables, or its JSON (``fmt`` json), whose ``written`` lists the files
    the run wrote (empty without ``-o``; the table's run says them on stderr) and ``errors``
    the files that could not be read (none here: see :func:`render_unfitted_calibration`)."""
    if fmt == "json":
        data = {
            **calibration_dict(calibration, names=names),
            "errors": [],
            "written": list(map(str, written)),
        }
        return json_text(data)
    return render_calibration(calibration, names=names)


def render_unfitted_calibration(inputs: Sequence[str], errors: Sequence[Mapping[str, str]]) -> str:
    """The JSON of a calibration that fitted nothing because files could not be read: the keys
    of :func:`render_calibration_report`'s, the fit's empty (its figures null), and ``errors``
    as ``nccl-check --format json`` lists them (source and message, as on stderr)."""
    data: dict[str, Any] = {
        "schema": CALIBRATION_SCHEMA,
        **{name: _empty(info.annotation) for name, info in Calibration.model_fields.items()},
        "inputs": list(inputs),
        "errors": [dict(e) for e in errors],
        "written": [],
    }
    return json_text(data)
