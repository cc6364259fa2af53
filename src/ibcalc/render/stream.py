"""A text stream that drops the spaces rich pads every table line with, up to its width.

A rich table fills each line to the console width; piped into a file or a diff that is
trailing whitespace on every line (``gap`` printed ~157 columns of mostly spaces). Wrapping the
console's file in :class:`TrimmedStream` removes them, before any style reset code that ends the
line on a terminal, and changes nothing else.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Column, Table
from rich.text import Text

from ibcalc.patterns import lazy_pattern

__all__ = [
    "UNITS",
    "Drop",
    "PipeConsole",
    "TrimmedStream",
    "UnitText",
    "UnitTitle",
    "columns_left_out",
    "drop_columns",
    "env_columns",
    "fit_columns",
    "left_out",
    "stderr_wrap",
    "terminal_width",
    "text_width",
    "trim_line",
    "unit_wrap",
    "whole_width",
]


def env_columns(default: int) -> int:
    """The page width ``$COLUMNS`` gives a pipe or a file, else ``default``: a value that is
    no whole number above 0 is ignored (``abc`` was; ``0`` and ``-5`` had been taken as a
    narrow page, a review)."""
    try:
        width = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return default
    return width if width > 0 else default


_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")
#: The units a figure is printed with: a number and its unit are never parted
UNITS = frozenset(
    (
        *("B", "kB", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"),
        *("ns", "us", "ms", "s", "h"),
        *("kB/s", "MB/s", "GB/s", "TB/s", "Gb/s", "Tb/s", "GbE"),
        # as the catalogue's notes and sources write rates, and a GPU's peak as systems show
        # prints it ("4800 Gbps", "32 GT/s" had been parted at 40 columns)
        *("GiB/s", "MiB/s", "PB/s", "Gbps", "GBps", "Tbps", "GT/s", "GBd"),
        *("TFLOP/s", "TFLOPS", "PFLOPS", "km", "us/km"),
    )
)
#: A line that is a figure: a number, a unit or "x" or "%" after it, and a range in
#: parentheses ("39.3 ms (36.7-48.5)", "1,707x", "-12%", "221.82*"); a range is numbers, not
#: words: "128 (nvlink4 inside, ndr between nodes, wan-100g between 2 sites)", an estimate's
#: ranks, had been one figure, kept whole, and widened the table past a 60-column page
_FIGURE = lazy_pattern(
    r"[-+~<>]?\d[\d.,]*(?:e[-+]?\d+)?(?:%|x)?\*?(?: (?P<unit>[^\s(]\S*?))?\*?"
    r"(?: \([-+~<>]?\d[^)\s]*\))?"
)


def trim_line(line: str) -> str:
    """``line`` without trailing spaces or tabs (a trailing SGR reset code is kept)."""
    return _TRAILING.sub(r"\1", line)


class TrimmedStream:
    """Wrap ``stream``: every complete line written loses its trailing spaces."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        """Write the complete lines of ``text`` trimmed; keep a partial last line pending."""
        data = self._pending + text
        head, newline, tail = data.rpartition("\n")
        self._pending = tail
        if newline:
            self._stream.write("\n".join(trim_line(line) for line in head.split("\n")) + "\n")
        return len(text)

    def flush(self) -> None:
        """Write a pending partial line as it is, then flush the wrapped stream."""
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class PipeConsole(Console):
    """A rich console that lets a closed stdout reach the CLI's error boundary.

    rich answers a BrokenPipeError with ``SystemExit(1)``, which ``ibcalc check`` documents as
    "a requirement fails"; the boundary ends such a run quietly with 141 (128 + SIGPIPE), as
    git does. Console markup is off: our text is never rich markup, and with it on, a bracket in
    a cell (``[busbw = algbw x 1.875]``, a design name) would be read as a style tag and lost.
    Emoji codes are off for the same reason: a cell ``gpu:100:a :x: ok`` (a host name, a label)
    had printed as ``gpu💯a ❌ ok``, and the tables' widths, worked out from their text, no longer
    matched what was printed (review ET 5).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        if os.environ.get("NO_COLOR"):
            # no-color.org asks for no colour; rich drops colour but still writes bold and
            # italic escapes on a terminal: plain text, as a user who sets it expects
            kwargs.setdefault("color_system", None)
        super().__init__(*args, **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Print as rich does, but a table too wide for the page is printed at the width that
        keeps every figure and word whole (:func:`fit_columns`), past the page's edge, rather
        than cut: at 60 columns rich had printed 450 GB/s as "45" and 1,707x as "1,70"."""
        if len(objects) == 1 and isinstance(objects[0], Table) and "width" not in kwargs:
            page = self.width
            needed = fit_columns(self, objects[0], page)
            if needed > page:
                # print's own width= is capped at the console's: widen the console for it
                self.width = needed
                try:
                    super().print(*objects, **kwargs)
                finally:
                    self.width = page
                return
        super().print(*objects, **kwargs)

    def on_broken_pipe(self) -> None:
        """Stop writing and raise BrokenPipeError for the CLI to handle."""
        self.quiet = True
        raise BrokenPipeError


def _plain(cell: Any) -> str | None:
    """A cell's text, or None for a cell that is not text (a nested table, a bar)."""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, Text):
        return cell.plain
    return None


#: A word with the indent before it (the first) or the space before it (the rest)
_INDENTED_WORD = lazy_pattern(r"^\s*\S+|(?<=\s)\S+")


def _unit_words(line: str) -> list[str]:
    """``line``'s words, a unit joined to the number before it ("65.7 ms" is one)."""
    words: list[str] = []
    for word in line.split(" "):
        # a unit ends a sentence or a parenthesis too ("not 400 GB/s." had broken before GB/s)
        if words and (word in UNITS or word.rstrip(",;:).") in UNITS):
            words[-1] += " " + word
        else:
            words.append(word)
    return words


def unit_wrap(text: str, width: int, keep: Iterable[str] = (), indent: str = "") -> str:
    """``text`` in lines of at most ``width`` characters, broken at spaces but never between a
    number and its unit ("65.7 ms" stays on one line; a word longer than the line is left to
    fold). Line breaks already in ``text`` are kept. Widths are display cells, as rich counts
    them: a CJK character takes two (with ``len``, a title holding one had been broken too late
    and rich had wrapped it again, leaving a word alone on a third line; review ET 4). The
    phrases in ``keep`` (a path with spaces in it) are never broken either, the longer first
    where two overlap. Each line a paragraph is broken into after its first begins with
    ``indent`` (counted in its width)."""
    # (ASCII text, nearly all of it, is as wide as it is long: len is the faster count)
    cells = len if text.isascii() else cell_len
    if width < 1 or cells(text) <= width:
        return text
    kept = sorted(
        (phrase for phrase in keep if " " in phrase and phrase in text and "\x00" not in text),
        key=len,
        reverse=True,
    )
    for phrase in kept:
        # one word while the lines are made: its spaces NULs, counted as the spaces they are
        text = text.replace(phrase, phrase.replace(" ", "\x00"))
    if kept and cells is cell_len:
        cells = lambda line: cell_len(line.replace("\x00", " "))  # noqa: E731
    out = []
    for paragraph in text.split("\n"):
        lines = [""]
        for word in _unit_words(paragraph):
            if lines[-1] and cells(lines[-1]) + 1 + cells(word) > width:
                lines.append(indent + word)
            else:
                lines[-1] += (" " if lines[-1] else "") + word
        out.extend(lines)
    return "\n".join(out).replace("\x00", " ") if kept else "\n".join(out)


def terminal_width(stream: TextIO | None) -> int:
    """The width of the terminal ``stream`` writes to, as rich takes it (``$COLUMNS`` where it
    is set, else the terminal's size), or 0 where ``stream`` is no terminal (a pipe, a file, a
    closed stream)."""
    with contextlib.suppress(ValueError, OSError):  # a closed stream is no terminal
        if stream is not None and stream.isatty():
            return Console(file=stream).width
    return 0


def stderr_wrap(text: str, keep: Iterable[str] = ()) -> str:
    """``text``, a note or a verdict for stderr, broken as the notes of a report are
    (:func:`unit_wrap`), at the width of the terminal stderr is, else at ``$COLUMNS``; as it is
    where neither gives a width, so that a script reading stderr from a pipe keeps one line per
    message. (``nccl-check --min-efficiency``'s FAIL line, the note on a file given twice and
    calibrate's "wrote FILE" had run past a 60-column page, where the report's own notes wrap.)
    ``keep``: the phrases not to break, the paths a line names (a path with spaces had been
    split over two lines). The lines after the first are indented by two spaces, so that each
    message starts at the margin, and the first word (FAIL, wrote, note:) is never alone on its
    line: it keeps the next word, or the kept phrase that follows it (a path wider than the
    page had left "FAIL" alone, and ``grep '^FAIL .* run'`` missed the line)."""
    width = terminal_width(sys.stderr) or env_columns(0)
    if not width:
        return text
    keep = list(keep)
    first, _, rest = text.partition(" ")
    after = [phrase for phrase in keep if phrase and rest.startswith(phrase)]
    lead = f"{first} {max(after, key=len) if after else rest.split(' ', 1)[0]}"
    return unit_wrap(text, width, [lead, *keep] if rest else keep, indent=_NOTE_INDENT)


#: What the lines of a note on stderr after its first begin with (the report's notes and
#: findings on stdout hang under their text in the same way)
_NOTE_INDENT = "  "


class UnitText(Text):
    """A paragraph that wraps at its width as :func:`unit_wrap` breaks lines, never between a
    number and its unit: rich's own wrap had put gap's "(nvlink4: 900" over "GB/s
    bidirectional" at 120 columns. Printed in its own style, as the Text it is."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        text = self._wrapped(console, unit_wrap(self.plain, options.max_width))
        yield from console.render(text, options)

    def _wrapped(self, console: Console, text: str) -> Text:
        return Text(text, style=self.style)


class UnitTitle(UnitText):
    """A table's title that wraps at the table's width as :func:`unit_wrap` breaks lines, never
    between a number and its unit: rich's own wrap had put "dgx-h100's 80" over "GiB per GPU" in
    a layout search's title at 66 columns. Both fill each line greedily with whole words, so
    where rich's parts no figure the lines are the same. (A Text, as a title is typed; printed
    as rich prints a title given as a string, in the table.title style.)"""

    def _wrapped(self, console: Console, text: str) -> Text:
        return console.render_str(text, style="table.title", highlight=False)


def _is_figure(line: str) -> bool:
    """Whether ``line`` is a figure (:data:`_FIGURE`, its unit one of :data:`UNITS`)."""
    match = _FIGURE().fullmatch(line.strip())
    return match is not None and match["unit"] in (None, *UNITS)


#: A word with a slash longer than this is a URL or a path: it may break anywhere.
_LONG_PATH = 24


def _unbroken_len(word: str) -> int:
    """How narrow a column may be for ``word``: its length, but a URL or a long path may break
    anywhere (a source's 95-character URL had widened ``systems show`` to 118 columns on an
    80-column page, a repository path ``links show gcp-tcpxo`` to 104; the sources list below
    them already folds URLs). A unit (GB/s) is short and stays whole."""
    if "://" in word or ("/" in word and cell_len(word) > _LONG_PATH):
        return 1
    return cell_len(word)


def _widths(texts: list[str], *, whole: bool = False) -> tuple[int, int]:
    """The narrowest and widest a column of ``texts`` can be: a line that is a figure
    (:func:`_is_figure`) whole, any other line's longest word (a number with its unit one
    word), every line whole where the column does not wrap (``whole``); and its longest
    line."""
    lines = [line for text in texts for line in text.split("\n")]
    widest = max((cell_len(line) for line in lines), default=0)
    if whole:
        return widest, widest
    low = max(
        (
            cell_len(line.strip())
            if _is_figure(line)
            # a line's indent belongs to its first word ("  tree/LL128" under "> nvls/...")
            else max(
                (
                    _unbroken_len(word)
                    for first in _INDENTED_WORD().findall(line)[:1]
                    for word in (first, *_unit_words(line.strip())[1:])
                ),
                default=0,
            )
            for line in lines
        ),
        default=0,
    )
    return low, widest


def _spans(console: Console, table: Table) -> tuple[list[tuple[int, int]], int, int] | None:
    """Each column's narrowest and widest content width (:func:`_widths`), the table's natural
    width and what it adds to its columns' contents (padding, rules); None for a grid (no box:
    prose and bullets, where a long URL folds beside its bullet) or a cell that is not text."""
    if table.box is None:
        return None
    top, right, bottom, left = table.padding
    if table.collapse_padding and not top and not bottom:
        # rich measures collapsed padding as less than it draws (a left pad alone as 0, the
        # first column's as one space short), so columns drew a character narrower than their
        # width: the same spacing, one space left of every column, without collapsing
        table.padding = (0, 0, 0, max(left, right))
        table.collapse_padding = False
    spans: list[tuple[int, int]] = []
    for column in table.columns:
        texts = [_plain(cell) for cell in column.cells]
        header = _plain(column.header)
        if header is None or any(t is None for t in texts):
            return None
        low, high = _widths([t for t in texts if t is not None], whole=column.no_wrap)
        head_low, head_high = (
            _widths([header], whole=column.no_wrap) if table.show_header else (0, 0)
        )
        spans.append((max(low, head_low), max(high, head_high)))
    overhead = _overhead(table)
    if overhead is None:
        natural = Measurement.get(console, console.options.update_width(10**6), table).maximum
        overhead = natural - sum(high for _, high in spans)
    return spans, sum(high for _, high in spans) + overhead, overhead


def _overhead(table: Table) -> int | None:
    """What rich adds to a table's text: its columns' padding and the box's edges and dividers,
    worked out as rich does (``Table._extra_width``, ``_get_padding_width``) rather than by
    measuring every cell again (a layout search's table has hundreds); None where rich's measure
    is needed: a size set on the table or a column, a footer, collapsed padding, tabs."""
    if table.box is None or not table.columns or table.collapse_padding or table.show_footer:
        return None
    if table.width is not None or table.min_width is not None:
        return None
    for column in table.columns:
        if (column.width, column.min_width, column.max_width) != (None, None, None):
            return None
        if any("\t" in (_plain(cell) or "") for cell in [column.header, *column.cells]):
            return None
    _, right, _, left = table.padding
    count = len(table.columns)
    padding = count * (left + right) - (0 if table.pad_edge else left + right)
    return (2 if table.show_edge else 0) + count - 1 + padding


def _level(spans: list[tuple[int, int]], budget: int) -> list[int]:
    """Column widths within ``budget``: each column capped at one level but kept between its
    narrowest and widest (``spans``), the level as high as the budget allows, so the widest
    columns give way first (a derivation's prose narrows before its term names break); the
    narrowest widths when even they exceed the budget."""
    lows = [low for low, _ in spans]
    if sum(lows) >= budget:
        return lows

    def at(level: int) -> list[int]:
        return [min(high, max(low, level)) for low, high in spans]

    level = 0
    top = max(high for _, high in spans)
    while level < top and sum(at(level + 1)) <= budget:
        level += 1
    widths = at(level)
    spare = budget - sum(widths)
    for i, (_, high) in enumerate(spans):  # what is left: one more to each capped column
        if spare and widths[i] == level < high:
            widths[i] += 1
            spare -= 1
    return widths


#: The least width a column of prose keeps before a table leaves out an optional column
#: (:func:`whole_width`): squeezed to its longest word (about 10 characters at 60 columns), an
#: S3 checkpoint's limit column had wrapped each bound over five to eleven lines.
PROSE_ROOM = 28


def whole_width(console: Console, table: Table) -> int:
    """The narrowest ``table`` can be with no figure broken or cut and no word split (see
    :func:`fit_columns`), and no column of prose narrower than :data:`PROSE_ROOM`; 0 for a
    table left to rich."""
    measured = _spans(console, table)
    if measured is None:
        return 0
    spans, _, overhead = measured
    # a column of prose: one that wraps and has a line wider than the room
    return overhead + sum(
        max(low, PROSE_ROOM) if not column.no_wrap and high > PROSE_ROOM else low
        for column, (low, high) in zip(table.columns, spans, strict=True)
    )


def fit_columns(console: Console, table: Table, page: int) -> int:
    """Set the widths of ``table``'s columns for a page of ``page`` columns so that no figure
    is broken or cut and no word split, and return the width the table then takes.

    rich narrows a table that is too wide by shrinking its widest columns, then every column
    evenly, whatever they hold: at 60 columns it printed 450 GB/s as "45", 1,707x as "1,70"
    and "scale-up" as "scale-". Here every column keeps at least its longest figure
    (:func:`_is_figure`: "39.3 ms (36.7-48.5)" stays on one line) and its longest word, and
    the widest columns give way first, as rich's own narrowing does (:func:`_level`).
    When even that is wider than the page, the table is printed wider and the terminal wraps
    its lines: a long line is readable, a cut number is a wrong one. Grids and tables with
    cells that are not text are left to rich (returns 0).
    """
    if table.box is not None and _at_most(table) <= page:
        return 0  # (rich's own measure of a table that surely fits was a seventh of nccl-check)
    measured = _spans(console, table)
    if measured is None:
        return 0
    spans, natural, overhead = measured
    if natural <= page:
        return natural
    widths = [max(1, width) for width in _level(spans, page - overhead)]
    for column, width in zip(table.columns, widths, strict=True):
        column.width = width
        if not column.no_wrap:
            _wrap_cells(column, width)
    return sum(widths) + overhead


def text_width(console: Console, table: Table) -> int:
    """``table``'s width from its text alone, each column as wide as its longest line: what a
    table whose columns never wrap takes, worked out without rich's measure (a workload
    table's rows are many); :func:`whole_width` for a table it cannot read so (a cell not plain
    text, collapsed padding, a sized column)."""
    bound = _at_most(table)
    return whole_width(console, table) if math.isinf(bound) else int(bound)


def _at_most(table: Table) -> float:
    """A bound on ``table``'s natural width, from its text alone: each column's longest line
    (header or cell, or its minimum width) and its padding, and the box's edges and dividers;
    infinite where a cell is not plain text (tabs, nested tables) or a column is sized."""
    if table.collapse_padding and not table.padding[0] and not table.padding[2]:
        return math.inf  # (:func:`_spans` first sets such padding as rich draws it)
    if table.width is not None or table.min_width is not None:
        return math.inf
    _, right, _, left = table.padding
    total = 2 + len(table.columns) - 1  # the edges and the dividers, shown or not
    for column in table.columns:
        if column.width is not None:
            return math.inf
        widest = column.min_width or 0
        for cell in [column.header, *column.cells] if table.show_header else column.cells:
            text = _plain(cell)
            if text is None or "\t" in text:
                return math.inf
            widest = max(widest, *(cell_len(line) for line in text.split("\n")))
        total += widest + left + right
    return total


def _wrap_cells(column: Column, width: int) -> None:
    """Break ``column``'s text cells for ``width`` themselves (:func:`unit_wrap`), so that rich,
    which breaks at any space, does not part a number from its unit ("8.5" over "us"). A cell
    with styled spans inside is left to rich."""
    cells = column._cells  # rich keeps them in this list; Column has no public setter
    for i, cell in enumerate(cells):
        if isinstance(cell, str):
            cells[i] = unit_wrap(cell, width)
        elif isinstance(cell, Text) and not cell.spans and cell_len(cell.plain) > width:
            cells[i] = Text(unit_wrap(cell.plain, width), style=cell.style, end=cell.end)


def left_out(what: str, width: int, full: int, *, many: bool, json: str | None = None) -> str:
    """The words every table uses for what a narrow page leaves out: ``<what> left out at <width>
    columns (<full> or more show it|them[; --format json has <json>])``; ``what`` carries its
    own verb where the sentence needs one (``the busbw bar is``)."""
    tail = f"; --format json has {json}" if json else ""
    return (
        f"{what} left out at {width} columns ({full} or more show {'them' if many else 'it'}{tail})"
    )


#: The spacings a table too wide for the page closes up to, in turn: two spaces between columns
#: (a left pad beside the box's divider), then one (the divider alone)
_CLOSER = ((0, 0, 0, 1), (0, 0, 0, 0))


@dataclass(frozen=True)
class Drop:
    """Columns a narrow page leaves out together, by their headers, and what a footnote calls
    them: ``name`` is a column's name (``eff``: "the eff column"), ``phrase`` words of their own
    with their article (``the line-rate columns and the line ratio``)."""

    headers: tuple[str, ...]
    name: str = ""
    phrase: str = ""


def _header(column: Column) -> str:
    return column.header.plain if isinstance(column.header, Text) else str(column.header)


def drop_columns(
    console: Console,
    table: Table,
    drops: Sequence[Drop],
    *,
    close_up: bool = True,
    measure: Callable[[Console, Table], int] = whole_width,
    headers: Mapping[str, str] | None = None,
) -> tuple[list[Drop], int]:
    """Fit ``table`` to the page: where it is wider than ``console.width`` (by ``measure``, at
    the least the width that keeps every figure and word whole), close its columns up to two
    spaces, then one (``close_up``), then break the ``headers`` given over the lines given
    (``{"total (likely range)": "total\\n(likely range)"}``); where that is not enough, leave
    out ``drops`` in their order, the least telling first, each as long as the table is still
    too wide, at the widest spacing, and with the fewest headers broken, that then fits.
    Returns the drops left out and the narrowest page that shows every column (0 where none is
    left out), which the footnote names (:func:`columns_left_out`). Without ``close_up``, a
    table still too wide with every drop left out closes up all the same, a last resort (a
    sweep to 8 GiB had printed 61-63 columns on a 60-column page); one still too wide then is
    printed past the edge (:meth:`PipeConsole.print`)."""
    page = console.width
    spacings = [(table.collapse_padding, table.padding)]
    spacings += [(False, padding) for padding in _CLOSER] if close_up else []
    # each header as it is, then broken; a drop names a column by its header as it is
    broken = dict(headers or {})
    named = {lines: header for header, lines in broken.items()}
    forms = [{header: header for header in broken}, broken] if broken else [{}]

    def fits() -> bool:
        for form in forms:
            for column in table.columns:
                name = named.get(_header(column), _header(column))
                if name in form:
                    column.header = form[name]
            for collapse, padding in spacings:
                table.collapse_padding, table.padding = collapse, padding
                # (a table whose text alone fits needs no measure: a layout search's rows are
                # many)
                if _at_most(table) <= page or measure(console, table) <= page:
                    return True
        return False

    if fits():
        return [], 0
    full = measure(console, table)  # at the closest spacing
    dropped: list[Drop] = []
    for drop in drops:
        table.columns[:] = [
            c for c in table.columns if named.get(_header(c), _header(c)) not in drop.headers
        ]
        dropped.append(drop)
        if fits():
            break
    else:
        if not close_up:
            spacings[1:] = [(False, padding) for padding in _CLOSER]
            fits()
    return dropped, full


def columns_left_out(
    dropped: Sequence[Drop],
    width: int,
    full: int,
    *,
    json: str | None = None,
    verb: bool = True,
) -> str:
    """The footnote for the ``dropped`` columns (:func:`drop_columns`): "the eff and scope
    columns are left out at 60 columns (66 or more show them)", in :func:`left_out`'s words;
    named columns next to each other are listed under one "columns". Without the ``verb``,
    as the workload phase tables have always put it: "the algorithm column left out at ..."."""
    items: list[str] = []
    names: list[str] = []

    def flush() -> None:
        if names:
            listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
            items.append(f"the {listed} column{'s' if len(names) > 1 else ''}")
            names.clear()

    for drop in dropped:
        if drop.phrase:
            flush()
            items.append(drop.phrase)
        else:
            names.append(drop.name)
    flush()
    many = sum(len(drop.headers) for drop in dropped) > 1
    listed = ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]
    said = f"{listed} {'are' if many else 'is'}" if verb else listed
    return left_out(said, width, full, many=many, json=json)
