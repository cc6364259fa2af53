"""Read nccl-tests / rccl-tests output (text or JSON) into :class:`~ibcalc.logs.records.ParsedLog`.

Text logs are read line by line. Before a line is looked at:

* a trailing ``\\r`` (CRLF files) and leading indentation are removed;
* an mpirun ``--tag-output`` prefix (``[1,0]<stdout>:``) and a kubectl ``[pod/...]`` prefix are
  removed; an ``srun -l`` prefix (`` 0: ``, ``10: ``) is removed only when what follows is a
  ``#`` header line, a result row or a version line, so data is never cut; where no result row
  starts a line, the text in front of the first row found behind one (pdsh's ``node01: ``,
  ``mpiexec -l``'s ``[0] ``) is taken from every line that starts with it and the log is read
  again, with a note;
* lines that start ``##`` (a log a tool commented again) are read as nccl-tests' ``#`` lines,
  with a note naming them;
* a whole result row that another process's output was written against without a line break
  (an ``NCCL INFO`` line in front of it or after it) is read from its own fields, with a note;
* NCCL ``INFO``/``WARN``/``TRACE`` lines, UCX, PMIX and libfabric lines are skipped wherever they
  appear (inside the table too); ``NCCL version`` and ``nranks N`` are still read from them.

A log may hold several runs (a shell session, a sweep script). A run starts at a command line
naming an nccl-tests binary, or at the first of its header lines (``# nccl-tests version``,
``# Collective test starting``, ``# nThread``, the device list, the column header) when the
current run already has rows or already printed that header; it ends at ``# Avg bus
bandwidth`` (or ``# Collective test concluded``). The column header decides how rows are read,
so the old (pre-2.10: no Group, no root column, ``error`` column), current and newest
(``unalign``, two-decimal times) layouts all work. A table without a column header is read with
the standard layout for its width, and a note says so.

Rows of size 0 are skipped (with a note). A row that does not have every column (a cut log, or
output of another process glued to it) is dropped with a note naming its line, and so is a row
of the table's width whose size or count is no count (``1e400``, which overflows to infinity;
``-8``; ``2.5``) and a row faster than 1 PB/s (:data:`MAX_PLAUSIBLE_Bps`). A run without the
trailer is marked ``truncated``. See :mod:`ibcalc.logs.infer` for the inference rules.

Input that is not a log (binary data, empty text, text without a result table) raises
:class:`~ibcalc.errors.LogParseError` with a one-line message naming the source.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from ibcalc.cluster.spec import MAX_GPUS_PER_NODE
from ibcalc.errors import LogParseError, WrongTypeError, expect_type
from ibcalc.fileio import ReadRefused, read_regular
from ibcalc.logs.infer import (
    MODELLED,
    NOT_MODELLED,
    Device,
    RunFacts,
    build_run,
    dtype_bytes,
    nccl_test_name,
    normalize_dtype,
    normalize_version,
)
from ibcalc.logs.jsonfmt import parse_json
from ibcalc.logs.records import ParsedLog, Row, Run, Timing
from ibcalc.textsafe import printable, shown
from ibcalc.units import format_size, format_us, plural

__all__ = [
    "MAX_LOG_BYTES",
    "MAX_LOG_ROWS",
    "MAX_LOG_RUNS",
    "STDIN",
    "STDIN_LABEL",
    "LogInput",
    "parse_file",
    "parse_log",
    "read_log",
    "reduced_max_bytes",
]

#: The file name that means standard input (:func:`read_log`).
STDIN = "-"
#: How a log read from standard input is named in reports and messages.
STDIN_LABEL = "<stdin>"

#: Largest file :func:`parse_file` reads (64 MiB).
MAX_LOG_BYTES = 64 * 1024 * 1024
#: Most result rows one log may hold: nccl-tests prints one per size (8 B to 16 GiB by -f 2 is
#: 32; an -i step sweep of 1 MiB to 8 GiB is 8,192). Checking a row takes about a millisecond
#: and 10 KB, so a log of repeated rows is refused rather than checked for minutes.
MAX_LOG_ROWS = 10_000
#: Most runs (result tables) one log may hold: nccl-tests prints one per test it runs, and the
#: published logs hold at most 6 (one call per size of 32 sizes, for each of the 9 collectives,
#: would be 288). A run is checked and printed in about 8 ms however few its rows (a report of
#: about 23 lines), so a log of many one-row runs is refused rather than checked for minutes:
#: 1,000 such runs take about 7 s as a table, 10,000 would take 70 s (docs/nccl-check.md).
MAX_LOG_RUNS = 1_000

_MPI_PREFIX = re.compile(r"^\s*\[\d+,\d+\]<std(?:out|err)>:")
_POD_PREFIX = re.compile(r"^\s*\[pod/[^\]]*\]\s")
_SRUN_PREFIX = re.compile(r"^\s*\d+:\s")
_ROW_START = re.compile(r"^\d+\s+\d+\s")
#: nccl-tests' and rccl-tests' line for a failed call (``Test NCCL failure common.cu:1005
#: 'unhandled system error ...'``, ``Test CUDA failure``, ``Test HIP failure``)
_TEST_FAILURE = re.compile(r"Test (?:NCCL |RCCL |CUDA |HIP )?failure\b.*")
#: Characters of that line quoted in the refusal: its call and reason (``common.cu:1005
#: 'unhandled system error (run with NCCL_DEBUG=INFO for details)'`` is 76), short of a whole
#: MAX_ECHO, as it follows the file's name and the reader's note on one error line.
_FAILURE_SHOWN = 120
#: The units nccl-tests and rccl-tests print in a table's unit row.
_UNITS_PRINTED = frozenset({"(B)", "(elements)", "(us)", "(GB/s)"})
#: Two numbers starting a line (a row, or one whose size or count is written oddly: ``1e400``)
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBERS = re.compile(rf"^{_NUMBER}\s+{_NUMBER}\s")
_NOISE_WORDS = ("NCCL INFO", "NCCL WARN", "NCCL TRACE", "UCX ", "PMIX", "libfabric:")
_NCCL_VERSION = re.compile(r"\bNCCL version\s+v?(\d+\.\d+\.\d+)")
_RCCL_VERSION = re.compile(r"^RCCL version\s*:\s*v?(\d+\.\d+\.\d+)")
_GLUED_NOISE = re.compile(r"[A-Za-z_][\w.-]*:\d+:\d+\s+\[\d+\]\s+NCCL\s")
_NRANKS = re.compile(r"\bnranks (\d+)\b")
_TESTS_VERSION = re.compile(
    r"^#\s*(nccl|rccl)-tests version\s+(\S+)(?:.*?\b(?:nccl|rccl)-library=(\d+))?"
)
_STARTING = re.compile(r"^#\s*Collective test (starting|concluded):\s*(\S+)")
_NTHREAD = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")
_KEYS = {
    "min_bytes": re.compile(r"\bminBytes\s+(\d+)"),
    "max_bytes": re.compile(r"\bmaxBytes\s+(\d+)"),
    "warmup_iters": re.compile(r"\bwarmup iters:\s*(\d+)"),
    "iters": re.compile(r"(?<!warmup )(?<!agg )\biters:\s*(\d+)"),
}
_STEP = re.compile(r"\bstep:\s*(\d+)\((factor|bytes)\)")
_RANK = re.compile(
    r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+\d+\s+"
    r"\[[^\]]*\]\s*(.*?)\s*$"
)
#: The start of a device-list line, whatever follows (one cut by other output)
_RANK_START = re.compile(r"^#\s*Rank\s+\d+\s")
#: Where another rank's output starts inside a line it cut: its host (group 1), pid and thread,
#: then its device index and NCCL's name (``gcn151:1904980:1904980 [1] NCCL INFO ...``)
_CUT_BY = re.compile(r"([\w.-]*):\d+:\d+ \[\d+\] NCCL")
#: Longest device-list line a cut one is completed to (nccl-tests' run to about 100 characters,
#: a long hostname and GPU name included)
_DEVICE_LINE_MAX = 512
_REDUCING_MAX = re.compile(r"^#\s*Reducing maxBytes to (\d+)")
#: The note a run gets for nccl-tests' "Reducing maxBytes" line, and its reader
#: (:func:`reduced_max_bytes`): the two stay together.
_REDUCED_NOTE = "maxBytes reduced to {} for lack of memory (line {})"
_REDUCED_READ = re.compile(r"maxBytes reduced to (\d+) for lack of memory")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
#: A command line running an nccl-tests binary: every name the parser knows (``X_perf``).
_COMMAND = re.compile(
    r"(?:^|[\s/=])((?:"
    + "|".join(sorted((*MODELLED, *NOT_MODELLED), key=lambda n: (-len(n), n)))
    + r")_perf(?:_mpi)?)(?=[\s;&|)]|$|\"|')"
)
_TESTS_DIR = re.compile(r"\b[nr]ccl-tests[-_]v?(\d+\.\d+\.\d+)\b")

# Header stages: a stage at or before the last one seen starts a new run.
_STAGE_VERSION, _STAGE_START, _STAGE_NTHREAD, _STAGE_DEVICES, _STAGE_COLUMNS = range(5)

# Standard layouts for a table without its column header, by number of columns.
_STD_NEW = [
    "size",
    "count",
    "type",
    "redop",
    "root",
    "time",
    "algbw",
    "busbw",
    "wrong",
    "time",
    "algbw",
    "busbw",
    "wrong",
]
_STD_OLD_OP = [
    "size",
    "count",
    "type",
    "redop",
    "time",
    "algbw",
    "busbw",
    "error",
    "time",
    "algbw",
    "busbw",
    "error",
]
_STD_OLD_ROOT = [
    "size",
    "count",
    "type",
    "root",
    "time",
    "algbw",
    "busbw",
    "error",
    "time",
    "algbw",
    "busbw",
    "error",
]


@dataclass
class _Columns:
    """Where each field sits in a row of the current table."""

    width: int
    size: int
    count: int
    dtype: int | None
    redop: int | None
    root: int | None
    groups: list[dict[str, int]]  # out-of-place first, then in-place
    line: int


def _is_noise(s: str) -> bool:
    """NCCL debug output, UCX/PMIX/libfabric messages: skipped wherever they appear."""
    return any(word in s for word in _NOISE_WORDS)


def _columns(names: list[str], line: int) -> _Columns | None:
    names = [n.lstrip("#").lower() for n in names]
    if "size" not in names or "count" not in names or "time" not in names:
        return None
    starts = [i for i, n in enumerate(names) if n == "time"][:2]
    groups: list[dict[str, int]] = []
    for g, start in enumerate(starts):
        end = starts[g + 1] if g + 1 < len(starts) else len(names)
        group = {names[i]: i for i in range(start, end)}
        if "algbw" not in group or "busbw" not in group:
            return None
        groups.append(group)
    fixed = names[: starts[0]]
    return _Columns(
        width=len(names),
        size=names.index("size"),
        count=names.index("count"),
        dtype=fixed.index("type") if "type" in fixed else None,
        redop=fixed.index("redop") if "redop" in fixed else None,
        root=fixed.index("root") if "root" in fixed else None,
        groups=groups,
        line=line,
    )


def _header_names(text: str) -> list[str]:
    """Column names of a ``#  size count type ...`` header; ``# wrong`` is joined to ``wrong``."""
    tokens = text.lstrip("#").split()
    out: list[str] = []
    for tok in tokens:
        if tok == "#":
            continue
        out.append(tok)
    return out


def _float(tok: str) -> float | None:
    # ASCII only, as _int: Python's float() reads full-width digits (U+FF10-U+FF19), which
    # nccl-tests never prints (a row so edited had been read as a clean one: review EC 8)
    if not tok.isascii():
        return None
    try:
        value = float(tok)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


#: Most digits of a size or count nccl-tests prints (a 64-bit count has at most 20).
_MAX_DIGITS = 20


def _int(tok: str) -> int | None:
    body = tok[1:] if tok.startswith("-") else tok
    if not body.isdigit() or not body.isascii() or len(body) > _MAX_DIGITS:
        return None
    return int(tok)


def _timing(tokens: list[str], group: dict[str, int]) -> Timing | None:
    time_us = _float(tokens[group["time"]])
    algbw = _float(tokens[group["algbw"]])
    busbw = _float(tokens[group["busbw"]])
    if time_us is None or algbw is None or busbw is None:
        return None
    wrong: int | None = None
    max_error: float | None = None
    if "wrong" in group:
        tok = tokens[group["wrong"]]
        if tok.upper() != "N/A":
            wrong = _int(tok)
            if wrong is None:
                as_float = _float(tok)  # "%5g" can print 1e+06
                if as_float is None or as_float != int(as_float):
                    return None
                wrong = int(as_float)
            if wrong < 0:
                return None
    elif "error" in group:
        tok = tokens[group["error"]]
        if tok.upper() != "N/A":
            max_error = _float(tok)
            if max_error is None:
                return None
    return Timing(
        time_us=time_us, algbw_GBps=algbw, busbw_GBps=busbw, wrong=wrong, max_error=max_error
    )


#: No row moves its bytes faster than this (1 PB/s: a thousand times any GPU's memory); a
#: faster one is a typo or an edited table.
MAX_PLAUSIBLE_Bps = 1e15
#: No collective of one nccl-tests row takes longer than this (10^10 us, about 2.8 hours; 1 GiB
#: over a 1 MB/s link takes 18 minutes); a longer one is a typo or an edited table (1e30 us).
MAX_PLAUSIBLE_TIME_US = 1e10

#: A field written as a number of any form (``1e400``, ``2.5``, ``-8``, ``inf``, ``nan``): a row
#: whose size or count is one of these, but not the integer nccl-tests prints, is an edited or
#: corrupted row, dropped with a note rather than passed over as other output.
_NUMBER_TOKEN = re.compile(
    r"^[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf(?:inity)?|nan)$",
    re.IGNORECASE,
)


def _not_a_count(tok: str) -> str | None:
    """Why ``tok`` (a size or count field that looks like a number) is not a count nccl-tests
    would print; None when it is one."""
    value = _int(tok)
    if value is not None:
        return None if value >= 0 else "is negative"
    if tok.startswith("+"):
        return "has a sign nccl-tests does not print"
    if tok.lstrip("-").isdigit():
        return f"has more than {_MAX_DIGITS} digits"
    number = float(tok)
    if math.isnan(number):
        return "is not a number"
    if math.isinf(number):
        return "overflows to infinity" if tok.lstrip("+-")[:1].isdigit() else "is infinite"
    return "is not written as an integer"


def _negative_time(tokens: list[str], cols: _Columns) -> bool:
    """True when a time field of the row is a finite number below 0 (a row that is otherwise
    well formed is then no measurement, not a malformed line)."""
    for group in cols.groups:
        try:
            value = float(tokens[group["time"]])
        except (ValueError, IndexError):
            continue
        if math.isfinite(value) and value < 0:
            return True
    return False


def _row(tokens: list[str], cols: _Columns, line: int) -> Row | None:
    size = _int(tokens[cols.size])
    count = _int(tokens[cols.count])
    if size is None or count is None or size < 0 or count < 0:
        return None
    dtype = normalize_dtype(tokens[cols.dtype]) if cols.dtype is not None else None
    redop = tokens[cols.redop].lower() if cols.redop is not None else None
    root: int | None = None
    if cols.root is not None:
        root = _int(tokens[cols.root])
        if root is None:
            return None
    timings = [_timing(tokens, g) for g in cols.groups]
    oop = timings[0]
    if oop is None or any(t is None for t in timings[1:]):
        return None
    return Row(
        size_bytes=size,
        count=count,
        dtype=dtype,
        redop=redop,
        root=root,
        oop=oop,
        ip=timings[1] if len(timings) > 1 else None,
        line=line,
    )


def _implicit_columns(tokens: list[str], line: int) -> _Columns | None:
    """The standard layout for a headerless row, if the row fits it."""
    if len(tokens) == 13:
        names = _STD_NEW
    elif len(tokens) == 12:
        names = _STD_OLD_ROOT if _int(tokens[3]) is not None else _STD_OLD_OP
    else:
        return None
    cols = _columns(names, line)
    if cols is None or _row(tokens, cols, line) is None:
        return None
    return cols


class _OverCap(Exception):
    """A log past one of its caps (:data:`MAX_LOG_ROWS` rows, :data:`MAX_LOG_RUNS` runs), raised
    at the line of the first row, or the first line of the first run, too many; ``refusal``
    words it (:func:`_too_many_rows`, :func:`_too_many_runs`)."""

    def __init__(self, refusal: Callable[[str, int | None], LogParseError], line: int) -> None:
        super().__init__(line)
        self.refusal = refusal
        self.line = line


def _split_lines(text: str) -> Iterator[str]:
    """``text.split("\\n")`` one line at a time: a 64 MiB log of short lines is not held twice."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _too_many_rows(source: str, line: int | None) -> LogParseError:
    at = f" (line {line})" if line is not None else ""
    return LogParseError(
        f"{source}: more than {MAX_LOG_ROWS:,} result rows{at}; nccl-tests prints one row per "
        "size (8 B to 16 GiB by -f 2 is 32): split the log"
    )


def _too_many_runs(source: str, line: int | None) -> LogParseError:
    at = f" (run {MAX_LOG_RUNS + 1:,} starts at line {line})" if line is not None else ""
    return LogParseError(
        f"{source}: more than {MAX_LOG_RUNS:,} runs{at}; nccl-tests prints one run (one result "
        "table) per test it runs: split the log"
    )


class _Reader:
    """The line-by-line state machine; collects RunFacts and log-level notes."""

    def __init__(self) -> None:
        self.done: list[tuple[RunFacts, int | None]] = []
        self.notes: list[str] = []
        self.skipped: list[str] = []  # notes on runs skipped before the first run kept
        self.cur: RunFacts | None = None
        self.stage = -1
        self.cols: _Columns | None = None
        self.closed = False  # trailer seen
        self.in_devices = False
        self.pending: RunFacts | None = None  # command line / versions before a run's header
        self.head: tuple[list[str], int] | None = None  # first half of a row split by noise
        self.rows = 0  # result rows kept, in every run
        # a line of the open table holding only a row's first number or two: a row cut short
        # where the log ends there (:meth:`_row_fragment`); any later line clears it
        self.fragment: int | None = None
        # a device-list line cut by another rank's output (its start, its line): completed
        # from the next line (:meth:`_cut_rank`)
        self.rank_head: tuple[str, int] | None = None
        # lines that start '##' (a log a tool re-commented), read as nccl-tests' '#' lines
        self.recommented: list[int] = []

    def _recomment(self, s: str, lineno: int) -> str:
        """``s`` with the '#' a tool put before nccl-tests' own taken away ('## nThread 1' reads
        as '# nThread 1'), the line remembered for the run's note; other lines as they are."""
        if not s.startswith("##"):
            return s
        if s.strip("#").strip() and (not self.recommented or self.recommented[-1] != lineno):
            self.recommented.append(lineno)
        return "#" + s.lstrip("#")

    # -- run boundaries -----------------------------------------------------------------------
    def _finish(self, next_line: int | None) -> None:
        self._drop_head()
        cur = self.cur
        notes = len(self.notes)
        if cur is not None:
            if cur.rows:
                if len(self.done) >= MAX_LOG_RUNS:
                    raise _OverCap(_too_many_runs, cur.line_start)
                cur.notes[:0] = self.skipped
                self.skipped = []
                self.done.append((cur, None if cur.has_trailer else next_line))
            elif cur.zero_rows:
                self.notes.append(
                    f"run at lines {cur.line_start}-{cur.line_end} has only rows of size 0; skipped"
                )
            elif cur.negative_rows:
                self.notes.append(
                    f"run at lines {cur.line_start}-{cur.line_end} has only rows with a negative "
                    f"time ({plural(len(cur.negative_rows), 'row')}, the first at line "
                    f"{cur.negative_rows[0]}): no measurements; skipped"
                )
            else:
                # rows of another width than the header's: say so, or the user sees rows that
                # are plainly there called absent
                odd = cur.wrong_width
                width = ""
                if odd and self.cols is not None:
                    (first, more), count = odd[0], len(odd)
                    width = (
                        f" of the {self.cols.width} columns it names: {count} "
                        f"row{'s have' if count != 1 else ' has'} {more} fields (the first "
                        f"at line {first})"
                    )
                self.notes.append(
                    f"run header at lines {cur.line_start}-{cur.line_end} has no result rows"
                    f"{width}; skipped"
                )
            # a run skipped is said with the run kept before it (else the next one), where a
            # report shows it: a run that stopped before its first row beside a whole one had
            # been left out of the report without a word
            skipped = self.notes[notes:]
            if self.done:
                self.done[-1][0].notes.extend(skipped)
            else:
                self.skipped.extend(skipped)
        self.cur = None
        self.stage = -1
        self.cols = None
        self.closed = False
        self.in_devices = False

    def _open(self, lineno: int, stage: int) -> RunFacts:
        """The run a header line at ``stage`` belongs to, starting a new one if needed."""
        cur = self.cur
        if cur is not None and not self.closed and not cur.rows and stage > self.stage:
            self.stage = stage
            cur.line_end = lineno
            return cur
        if cur is not None:
            self._finish(lineno)
        pending = self.pending
        self.pending = None
        if pending is not None:
            pending.line_end = lineno
            self.cur = pending
        else:
            self.cur = RunFacts(line_start=lineno, line_end=lineno)
        self.stage = stage
        return self.cur

    def _pending(self, lineno: int) -> RunFacts:
        if self.pending is None:
            self.pending = RunFacts(line_start=lineno, line_end=lineno)
        return self.pending

    def _meta_target(self, lineno: int) -> RunFacts:
        """Where a version line goes: the open run, else the next one."""
        if self.cur is not None and not self.closed:
            self.cur.line_end = max(self.cur.line_end, lineno)
            return self.cur
        return self._pending(lineno)

    # -- lines --------------------------------------------------------------------------------
    def feed(self, raw: str, lineno: int) -> None:
        # a copy with tabs for spaces reads as the original (every pattern matches spaces)
        line = raw.rstrip("\r\n").replace("\t", " ")
        m = _MPI_PREFIX.match(line) or _POD_PREFIX.match(line)
        if m:
            line = line[m.end() :]
        s = self._recomment(line.strip(), lineno)
        if not s:
            return
        self.fragment = None
        if self.rank_head is not None:
            head, head_line = self.rank_head
            self.rank_head = None
            if self._cut_rank(head, head_line, s, lineno):
                return
            # not completed: read as it was before completing was tried (the NCCL output in
            # it, 'nranks 8', can tell the rank count; a review)
            self._line(head, head_line)
        rank = _RANK.match(s) if self.in_devices else None
        if self.in_devices and rank is None and _RANK_START.match(s):
            # (before the noise test: the other rank's NCCL INFO is in it)
            self.rank_head = (s, lineno)
            return
        self._line(s, lineno, rank)

    def _line(self, s: str, lineno: int, rank: re.Match[str] | None = None) -> None:
        """Read one stripped, non-empty line (``rank``: its device-list match, where the
        caller has it: a list of 100,000 ranks had been matched twice a line, +30 %)."""
        if not s.startswith("#"):
            m = _SRUN_PREFIX.match(s)
            if m:
                rest = s[m.end() :].lstrip()
                if rest.startswith("#") or _NUMBERS.match(rest) or "version" in rest:
                    s = self._recomment(rest, lineno)
        if not s[0].isdigit() and not s.startswith("#") and self._glued_row(s, lineno):
            return
        if _is_noise(s):
            self._noise(s, lineno)
            return
        if s.startswith("#"):
            self._hash_line(s, lineno, rank)
            return
        if s[0].isdigit():
            self._data(s, lineno)
            return
        if self._unreadable_row(s, lineno):
            return
        m = _NCCL_VERSION.search(s)
        if m and s.startswith("NCCL version"):
            target = self._meta_target(lineno)
            target.nccl_version_line = self._first(target.nccl_version_line, m.group(1))
            return
        m = _RCCL_VERSION.match(s)
        if m:
            target = self._meta_target(lineno)
            target.rccl_version_line = self._first(target.rccl_version_line, m.group(1))
            return
        if s in ("...", "\u2026") and self.in_devices and self.cur is not None:
            self.cur.devices_elided = True
            return
        m = _COMMAND.search(s)
        if m:
            self._command(s, m.group(1), lineno)

    def _glued_row(self, s: str, lineno: int) -> bool:
        """Read a result row that other output was written in front of on its line (another
        rank's unfinished ``NCCL INFO`` line, a UCX warning): the line ends in the open table's
        fields, size and count first and a type where the type goes. It had been skipped
        whole with the noise, unsaid, and a slow row with it. True when the line was one."""
        cols, cur = self.cols, self.cur
        if cols is None or cur is None or self.closed:
            return False
        tokens = s.split()
        if len(tokens) <= cols.width:
            return False
        tail = tokens[-cols.width :]
        if not _ROW_START.match(" ".join(tail)):
            return False
        if cols.dtype is not None and dtype_bytes(normalize_dtype(tail[cols.dtype])) is None:
            return False
        shown = printable(" ".join(tokens[: -cols.width]), 40)
        cur.notes.append(
            f"row at line {lineno} had other output in front of it ({shown!r}); read from its "
            f"last {cols.width} fields"
        )
        self._data(" ".join(tail), lineno)
        return True

    @staticmethod
    def _first(old: str | None, new: str | None) -> str | None:
        return old if old is not None else new

    def _noise(self, s: str, lineno: int) -> None:
        m = _NCCL_VERSION.search(s) if "NCCL version" in s else None
        if m:
            target = self._meta_target(lineno)
            target.nccl_version_line = self._first(target.nccl_version_line, m.group(1))
        cur = self.cur
        if cur is None and "nranks" in s:
            # before the log's first run (its '#' lines stripped, NCCL's init lines then come
            # before the table): the run to come, as a version line does (a later run's count
            # is not taken from an earlier one's teardown lines, hence the first run only)
            cur = self._pending(lineno)
        if cur is not None and not self.closed and cur.info_nranks is None and "nranks" in s:
            m = _NRANKS.search(s)
            if m and int(m.group(1)[:9]) > 0:
                cur.info_nranks = int(m.group(1)[:9])
                cur.info_nranks_line = lineno
        if self.cols is not None and not self.closed and s[0].isdigit() and _ROW_START.match(s):
            # nccl-tests prints size..root before running a size and the timings after it, so
            # NCCL output can land in between: keep the first half and wait for the rest.
            assert self.cur is not None
            self._drop_head()
            glued = _GLUED_NOISE.search(s)
            head = s[: glued.start()].split() if glued else []
            if glued and len(head) == self.cols.groups[0]["time"]:
                self.head = (head, lineno)
            elif glued and len(head) == self.cols.width:
                # the whole row, then another rank's line without a line break between
                self.cur.notes.append(
                    f"row at line {lineno} had other output after it; read from its first "
                    f"{self.cols.width} fields"
                )
                self._data(" ".join(head), lineno)
            else:
                self.cur.notes.append(f"row at line {lineno} is mixed with other output, dropped")

    def _drop_head(self) -> None:
        if self.head is not None and self.cur is not None:
            self.cur.notes.append(f"row at line {self.head[1]} incomplete, dropped")
            self.cur.last_row_incomplete = True
        self.head = None

    def _command(self, s: str, binary: str, lineno: int) -> None:
        name = nccl_test_name(binary)
        if name is None:
            return
        if self.cur is not None:
            self._finish(lineno)
        pending = RunFacts(line_start=lineno, line_end=lineno)
        pending.command_collective = name
        short = s if len(s) <= 80 else s[:77] + "..."
        pending.command_evidence = f"command line at line {lineno}: {short!r}"
        m = _TESTS_DIR.search(s)
        if m:
            pending.command_tests_version = normalize_version(m.group(1))
        self.pending = pending

    def _cut_rank(self, head: str, head_line: int, s: str, lineno: int) -> bool:
        """Complete a device-list line that another rank's output cut (``#  Rank  3 Group  0
        Pid 418474<host>:<pid>:<tid> [3] NCCL INFO ...``, its rest, ``3 on <host> device 3
        [...] H100``, on the next line ``s``): cut where the other output starts (a host, pid
        and thread, ``[n] NCCL``), the longest start of the cut line that reads as a ``Rank``
        line with ``s`` after it, on the host of the output that cut it or one the list names
        already. One such line had been dropped, the list called elided and its 7 ranks on
        one host taken for 2 nodes; the longest start alone had made up a host where the cut
        fell inside one ('gcn15gcn151:1904980:19049804'; reviews)."""
        if len(s) > _DEVICE_LINE_MAX:
            return False
        known = {d.host for d in self.cur.devices} if self.cur is not None else set()
        # a cut within a device line's length of its start: a hostile line of a megabyte had
        # been tried at every cut (quadratic)
        for cut in range(min(len(head), _DEVICE_LINE_MAX), 0, -1):
            # (read no further than a device line's length either)
            other = _CUT_BY.match(head, cut, cut + _DEVICE_LINE_MAX)
            if other is None:
                continue
            # the rest may start with the blank the line was cut at, which stripping lost
            for joined in (head[:cut] + s, head[:cut] + " " + s):
                m = _RANK.match(joined)
                if m and m.group(3) in (other.group(1), *known):
                    self._rank(m, head_line, end=lineno)
                    assert self.cur is not None
                    self.cur.notes.append(
                        f"device list line {head_line} was split by other output; completed "
                        f"from line {lineno}"
                    )
                    return True
        return False

    def _hash_line(self, s: str, lineno: int, rank: re.Match[str] | None = None) -> None:
        m = rank if rank is not None else _RANK.match(s)
        if m:
            self._rank(m, lineno)
            return
        body = s.lstrip("#").strip()
        if body == "Using devices":
            self._open(lineno, _STAGE_DEVICES)
            self.in_devices = True
            return
        if self.in_devices and body in ("...", "\u2026") and self.cur is not None:
            self.cur.devices_elided = True
            return
        self.in_devices = False
        if body.startswith("size") or body.startswith("(B)") or "out-of-place" in body:
            if body.startswith("(B)") and self.cur is not None:
                self._unit_row(body, lineno)
            if body.startswith("size"):
                cols = _columns(_header_names(s), lineno)
                if cols is not None:
                    self._open(lineno, _STAGE_COLUMNS)
                    self.cols = cols
            return
        m = _TESTS_VERSION.match(s)
        if m:
            cur = self._open(lineno, _STAGE_VERSION)
            cur.tests_library = m.group(1)
            cur.tests_version = normalize_version(m.group(2))
            if m.group(3):
                cur.library_code = int(m.group(3)[:9])
                cur.library_code_text = f"{m.group(1)}-library={m.group(3)}"
            return
        m = _STARTING.match(s)
        if m:
            name = nccl_test_name(m.group(2))
            if m.group(1) == "starting":
                cur = self._open(lineno, _STAGE_START)
                if name is not None:
                    cur.named_collective = name
                    cur.named_evidence = f"line {lineno}: 'Collective test starting: {m.group(2)}'"
            elif self.cur is not None:
                self.cur.line_end = lineno
                if self.cur.named_collective is None and name is not None:
                    self.cur.named_collective = name
                    self.cur.named_evidence = (
                        f"line {lineno}: 'Collective test concluded: {m.group(2)}'"
                    )
                self.closed = True
            return
        m = _NTHREAD.match(s)
        if m:
            self._nthread(s, m, lineno)
            return
        if self.cur is None:
            return
        m = _REDUCING_MAX.match(s)
        if m:
            self.cur.notes.append(_REDUCED_NOTE.format(m.group(1), lineno))
            self.cur.line_end = lineno
            return
        if self.cols is None or (self.closed and self.cur.has_trailer):
            return
        self._drop_head()
        m = _OOB.match(s)
        if m:
            self.cur.out_of_bounds = int(m.group(1)[:12])
            self.cur.line_end = lineno
            return
        m = _AVG.match(s)
        if m:
            self.cur.avg_busbw_GBps = _float(m.group(1))
            self.cur.has_trailer = True
            self.cur.line_end = lineno
            self.closed = True

    def _nthread(self, s: str, m: re.Match[str], lineno: int) -> None:
        cur = self._open(lineno, _STAGE_NTHREAD)
        cur.threads = int(m.group(1)[:9])
        digits = m.group(2).lstrip("0") or "0"  # 0000000000004 is 4
        gpus = int(digits) if len(digits) <= 9 else 0
        if 1 <= gpus <= MAX_GPUS_PER_NODE:
            cur.gpus_per_process = gpus
            cur.gpus_per_process_line = lineno
        else:
            # nGpus 0 had priced every launch as free (11 healthy rows of a 4 x H100 run read
            # 59 % low); a 20-digit count was cut to 999999999
            shown = m.group(2) if len(m.group(2)) <= 12 else f"{m.group(2)[:12]}..."
            cur.notes.append(
                f"line {lineno}: nGpus {shown} is no count of GPUs a process drives "
                f"(1-{MAX_GPUS_PER_NODE}): ignored"
            )
        values: dict[str, int] = {}
        for key, rx in _KEYS.items():
            km = rx.search(s)
            if km:
                values[key] = int(km.group(1)[:20])
        cur.min_bytes = values.get("min_bytes")
        cur.max_bytes = values.get("max_bytes")
        cur.warmup_iters = values.get("warmup_iters")
        cur.iters = values.get("iters")
        sm = _STEP.search(s)
        if sm:
            if sm.group(2) == "factor":
                cur.step_factor = int(sm.group(1)[:20])
            else:
                cur.step_bytes = int(sm.group(1)[:20])

    def _rank(self, m: re.Match[str], lineno: int, *, end: int | None = None) -> None:
        rank = int(m.group(1)[:9])
        cur = self.cur
        fresh = (
            cur is None
            or self.closed
            or bool(cur.rows)
            or self.stage > _STAGE_DEVICES
            or rank in cur.device_ranks
        )
        if fresh or self.stage < _STAGE_DEVICES:
            cur = self._open(lineno, _STAGE_DEVICES)
        assert cur is not None
        cur.line_end = lineno if end is None else end
        expected = len(cur.devices)
        if rank != expected:
            cur.devices_elided = True
        # one string per host and GPU name, not one per line (600,000 rank lines: review BN)
        cur.devices.append(
            Device(
                rank=rank,
                host=sys.intern(m.group(3)),
                name=sys.intern(m.group(4)),
                line=lineno,
                pid=int(m.group(2)[:12]),
            )
        )
        cur.device_ranks.add(rank)
        self.in_devices = True

    def _data(self, s: str, lineno: int) -> None:
        self.in_devices = False
        if self.head is not None and self.cols is not None and not _ROW_START.match(s):
            head, head_line = self.head
            tokens = s.split()
            if len(head) + len(tokens) == self.cols.width:
                self.head = None
                assert self.cur is not None
                self.cur.notes.append(
                    f"row at line {head_line} was split by other output; completed from line "
                    f"{lineno}"
                )
                self._add_row(head + tokens, head_line, lineno)
                return
        if not _ROW_START.match(s):
            if not self._unreadable_row(s, lineno):
                self._row_fragment(s, lineno)
            return
        self._drop_head()
        tokens = s.split()
        cols = self.cols
        if cols is None or self.closed:
            implicit = _implicit_columns(tokens, lineno)
            if implicit is None:
                return
            self._open(lineno, _STAGE_COLUMNS)
            assert self.cur is not None
            self.cur.notes.append(
                f"no column header before the row at line {lineno}; read it with the standard "
                f"{len(tokens)}-column layout"
            )
            self.cols = cols = implicit
        cur = self.cur
        assert cur is not None
        if len(tokens) != cols.width:
            if len(tokens) == cols.groups[0]["time"]:
                self.head = (tokens, lineno)  # the timings may follow on a later line
                cur.line_end = lineno
                return
            what = "incomplete" if len(tokens) < cols.width else "has extra fields"
            cur.notes.append(f"row at line {lineno} {what}, dropped")
            cur.wrong_width.append((lineno, "fewer" if len(tokens) < cols.width else "more"))
            cur.last_row_incomplete = True
            cur.line_end = lineno
            return
        self._add_row(tokens, lineno, lineno)

    def _unit_row(self, body: str, lineno: int) -> None:
        """Note units other than nccl-tests' own in the table's unit row (it prints (us) and
        (GB/s) alone): a table converted or edited to (ms) had been read as us without a word,
        and its 'lowest efficiency' came out at 96834 % (an SRE's review)."""
        assert self.cur is not None
        odd = [u for u in dict.fromkeys(re.findall(r"\([^)]*\)", body)) if u not in _UNITS_PRINTED]
        if odd:
            self.cur.notes.append(
                f"the unit row at line {lineno} reads {', '.join(odd)}, units nccl-tests does "
                "not print (it prints (us) and (GB/s)): the table was converted or edited; "
                "ibcalc reads its times as us and its bandwidths as GB/s"
            )

    def _row_fragment(self, s: str, lineno: int) -> None:
        """Remember a line of the open table that holds only the first number or two of a row:
        where the log ends on it (cut after ``  1073741824     268``), :meth:`finish` drops it
        as an incomplete row, as a row cut later is; it had been passed over in silence (an
        SRE's review). Followed by anything, it is another program's stray number."""
        cols, cur = self.cols, self.cur
        if cols is None or cur is None or self.closed or self.head is not None:
            return
        tokens = s.split()
        if 0 < len(tokens) < min(3, cols.width) and all(t.isdigit() for t in tokens):
            self.fragment = lineno

    def _unreadable_row(self, s: str, lineno: int) -> bool:
        """Note and drop a line of the open table that has its width and numbers where the
        size, count and time go, but a size or count that is no count (``1e400``, which
        overflows to infinity, ``-8``, ``2.5``); True when the line was such a row."""
        cols, cur = self.cols, self.cur
        if cols is None or cur is None or self.closed:
            return False
        tokens = s.split()
        if len(tokens) != cols.width:
            return False
        fields = (("size", cols.size, "a byte count"), ("count", cols.count, "an element count"))
        if not all(_NUMBER_TOKEN.match(tokens[i]) for i in (cols.size, cols.count)):
            return False
        if _float(tokens[cols.groups[0]["time"]]) is None:
            return False
        for name, index, what in fields:
            why = _not_a_count(tokens[index])
            if why is not None:
                self._drop_head()
                shown_tok = printable(tokens[index], 40)
                cur.notes.append(
                    f"row at line {lineno}: {name} {shown_tok} {why}, not {what}; dropped"
                )
                cur.line_end = lineno
                cur.last_row_incomplete = False
                return True
        return False

    def _add_row(self, tokens: list[str], lineno: int, last_line: int) -> None:
        cur, cols = self.cur, self.cols
        assert cur is not None
        assert cols is not None
        row = _row(tokens, cols, lineno)
        cur.line_end = last_line
        if row is None and _negative_time(tokens, cols):
            cur.negative_rows.append(lineno)
            cur.last_row_incomplete = False
            size = _int(tokens[cols.size])
            if size is not None and size > 0:
                cur.unmeasured.append((size, lineno))
            return
        if row is None:
            cur.notes.append(f"row at line {lineno} malformed, dropped")
            cur.last_row_incomplete = True
            size = _int(tokens[cols.size])
            if size is not None and size > 0:
                cur.unmeasured.append((size, lineno))
            return
        cur.last_row_incomplete = False
        if row.size_bytes == 0:
            cur.zero_rows.append(lineno)
            return
        # the out-of-place time (in place, one GPU's reduce moves nothing and may be ~0 us)
        oop_us = row.oop.time_us
        if oop_us > 0 and row.size_bytes / (oop_us * 1e-6) > MAX_PLAUSIBLE_Bps:
            cur.unmeasured.append((row.size_bytes, lineno))
            cur.notes.append(
                f"row at line {lineno}: {row.size_bytes} B in {format_us(oop_us)} us out of "
                f"place is faster than {MAX_PLAUSIBLE_Bps / 1e15:g} PB/s, not a measurement; "
                "dropped"
            )
            return
        if oop_us > MAX_PLAUSIBLE_TIME_US:
            cur.unmeasured.append((row.size_bytes, lineno))
            cur.notes.append(
                f"row at line {lineno}: {format_us(oop_us)} us out of place is longer than "
                f"{format_us(MAX_PLAUSIBLE_TIME_US)} us (2.8 hours) per operation, not a "
                "measurement; dropped"
            )
            return
        self.rows += 1
        if self.rows > MAX_LOG_ROWS:
            raise _OverCap(_too_many_rows, lineno)
        cur.rows.append(row)

    def finish(self) -> list[Run]:
        if self.fragment is not None and self.cur is not None:
            self.cur.notes.append(f"row at line {self.fragment} incomplete, dropped")
            self.cur.wrong_width.append((self.fragment, "fewer"))
            self.cur.last_row_incomplete = True
            self.cur.line_end = self.fragment
        self._finish(None)
        runs: list[Run] = []
        for facts, next_line in self.done:
            runs.append(build_run(facts, next_line=next_line))
        return runs


def _looks_binary(text: str) -> bool:
    if "\x00" in text:
        return True
    sample = text[:4096]
    if not sample:
        return False
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or ch == "\ufffd")
    return bad > len(sample) // 10


def parse_log(text: str, *, source: str = STDIN_LABEL) -> ParsedLog:
    """Parse nccl-tests / rccl-tests output (text, or the JSON that ``-J`` writes).

    ``source`` names the input in error messages and in the result. Raises
    :class:`~ibcalc.errors.LogParseError` when the text holds no result table.
    """
    # None or a log's bytes had failed on "argument of type 'NoneType' is not iterable" or
    # "a bytes-like object is required, not 'str'"
    expect_type(text, str, "text", "decode bytes first; parse_file(path) reads a file")
    expect_type(source, str, "source")
    if _looks_binary(text):
        raise LogParseError(f"{source}: binary data, not an nccl-tests log")
    if not text.strip():
        raise LogParseError(f"{source}: empty input, not an nccl-tests log")
    stripped = text.lstrip("\ufeff \t\r\n")
    json_error: LogParseError | None = None
    if stripped[:1] in ("{", "["):
        try:
            facts, notes = parse_json(stripped, source=source)
        except LogParseError as exc:
            json_error = exc  # maybe a text log starting with "[host ~]$" or "[1,0]<stdout>:"
        else:
            if sum(len(f.rows) for f in facts) > MAX_LOG_ROWS:
                raise _too_many_rows(source, None)
            if len(facts) > MAX_LOG_RUNS:
                raise _too_many_runs(source, None)
            runs = [build_run(f) for f in facts]
            return ParsedLog(source=source, format="json", runs=runs, notes=notes)
    runs, notes = _read_text(_split_lines(text), source)
    if not runs:
        if json_error is not None and stripped.startswith("{"):
            raise json_error
        prefixed = _prefixed_row(text)
        if prefixed is not None:
            prefix, line = prefixed
            unprefixed = _Unprefixed(text, prefix)
            runs, notes = _read_text(unprefixed, source)
            if runs:
                shown = printable(prefix, 40)
                note = f"the line prefix {shown!r} removed from {unprefixed.count} lines"
                runs = [run.model_copy(update={"notes": [note, *run.notes]}) for run in runs]
                return ParsedLog(source=source, format="text", runs=runs, notes=[note, *notes])
            raise LogParseError(
                f"{source}: no nccl-tests result rows found at the start of a line; line {line} "
                f"holds one behind the prefix {printable(prefix, 40)!r}, but the lines read "
                "without that prefix hold no whole result table either"
            )
        extra = f" ({notes[0]})" if notes else ""
        raise LogParseError(f"{source}: no nccl-tests result rows found{extra}{_failure(text)}")
    return ParsedLog(source=source, format="text", runs=runs, notes=notes)


def _failure(text: str) -> str:
    """``: line N says 'Test NCCL failure ...'`` for the first failure nccl-tests printed, the
    reason a log holds no rows (it had been refused as holding none, with the log's own reason
    left for the reader to find); "" where it printed none."""
    match = _TEST_FAILURE.search(text)
    if match is None:
        return ""
    line = text.count("\n", 0, match.start()) + 1
    said = match.group().strip()
    # escaped once: repr() of printable()'s text had doubled its escapes ('bell\\x07')
    if "'" in said and '"' not in said:
        return f': line {line} says "{printable(said, _FAILURE_SHOWN)}"'
    return f": line {line} says {shown(said, _FAILURE_SHOWN)}"


def _read_text(lines: Iterable[str], source: str) -> tuple[list[Run], list[str]]:
    """The runs of a text log, given line by line, and the reader's notes."""
    reader = _Reader()
    try:
        for lineno, raw in enumerate(lines, start=1):
            reader.feed(raw, lineno)
        runs = reader.finish()  # the last run finished is counted too
    except _OverCap as exc:
        raise exc.refusal(source, exc.line) from None
    if reader.recommented:
        runs = [_recommented_note(run, reader.recommented) for run in runs]
    return runs, reader.notes


def _recommented_note(run: Run, lines: Sequence[int]) -> Run:
    """``run`` with a note naming its lines that start '##' where nccl-tests prints '#', read as
    its own (without them the device list, the header and the trailer had been lost, and the
    run priced on a default node, the notes silent on why)."""
    own = [n for n in lines if run.line_start <= n <= run.line_end]
    if not own:
        return run
    where = (
        f"line {own[0]} starts"
        if len(own) == 1
        else f"{len(own)} lines (of lines {own[0]}-{own[-1]}) start"
    )
    note = (
        f"{where} '##' where nccl-tests prints '#' (a tool commented the log again): read as "
        "nccl-tests' own '#' lines"
    )
    return run.model_copy(update={"notes": [note, *run.notes]})


class _Unprefixed:
    """The lines of ``text`` with ``prefix`` taken from the start of each that has it (pdsh's
    ``host: ``, ``mpiexec -l``'s ``[0] ``); ``count`` is how many had it once they are read.
    Lines keep their numbers."""

    def __init__(self, text: str, prefix: str) -> None:
        self.text, self.prefix, self.count = text, prefix, 0

    def __iter__(self) -> Iterator[str]:
        for line in _split_lines(self.text):
            if line.startswith(self.prefix):
                self.count += 1
                yield line[len(self.prefix) :]
            else:
                yield line


#: A result row's element type with a space on each side, wherever it sits on a line: the
#: cheap first look for a row behind a line prefix (:func:`_prefixed_row`)
_ROW_TYPE = re.compile(
    r" (?:float|half|bfloat16|double|u?int(?:8|32|64)?|char|f8e4m3|f8e5m2|fp8\w*) "
)
#: What comes before the type in a row: its size and count, after the prefix
_SIZE_COUNT_AT_END = re.compile(r"(?:^|[^\d])(\d+ +\d+) *$")


def _prefixed_row(text: str) -> tuple[str, int] | None:
    """The prefix and line of the first result row behind a line prefix (up to 79 characters,
    not indentation, not a ``#`` line), or None. The whole text is searched (a verbose
    NCCL_DEBUG=INFO log prints its table after line 2,900), for a row's element type first: a
    pattern anchored at each line start, trying each prefix length, took 2.9 s on 58 MB of
    debug lines; this takes about 0.2 s."""
    spaced = text.replace("\t", " ")
    for m in _ROW_TYPE.finditer(spaced):
        start = spaced.rfind("\n", 0, m.start()) + 1
        fields = _SIZE_COUNT_AT_END.search(spaced, start, m.start())
        if fields is None:
            continue
        prefix = spaced[start : fields.start(1)].rstrip(" ")
        if not prefix or len(prefix) > 79 or prefix[0].isspace() or prefix.startswith("#"):
            continue
        return prefix, spaced.count("\n", 0, start) + 1
    return None


#: Spaces a paste may carry instead of U+0020: no-break, figure and narrow no-break spaces.
_ODD_SPACES = {ord("\u00a0"): " ", ord("\u2007"): " ", ord("\u202f"): " "}

#: A terminal escape sequence (colour codes from a launcher or `kubectl logs` on a TTY).
_ANSI = re.compile(
    r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|[=>])"
)
#: A timestamp a log collector puts before every line, then a space: RFC 3339 / ISO 8601 date
#: and time (`kubectl logs --timestamps`, `docker logs -t`, `journalctl -o short-iso`), or the
#: syslog form (`journalctl`'s default `Jul 19 12:34:56`, `-o short-precise` with microseconds).
#: The host and process tag syslog prints after it are one fixed prefix per process, taken away
#: as any other line prefix is.
_STAMP = re.compile(
    r"^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?) "
)


def clean_log_text(text: str) -> tuple[str, list[str]]:
    """The text of a log with what collectors add around nccl-tests output taken away: colour
    codes, a timestamp before every line, and old Mac line ends (CR only); with a note for
    each. Lines keep their numbers."""
    notes: list[str] = []
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark hid line 1's first words
    if "\r" in text and "\n" not in text:
        text = text.replace("\r", "\n")
        notes.append("line ends are CR only: read as lines")
    spaces = sum(text.count(chr(code)) for code in _ODD_SPACES)
    if spaces:
        # a paste through a chat or web page turns spaces into non-breaking ones: the rows
        # still split, but the GPU name, the NCCL lines and the trailer no longer matched
        text = text.translate(_ODD_SPACES)
        notes.append(f"{spaces} non-breaking spaces read as spaces")
    if "\x1b" in text:
        cleaned = _ANSI.sub("", text)
        if cleaned != text:
            text = cleaned
            notes.append("terminal colour codes removed")
    lines = text.split("\n")
    filled = [line for line in lines if line.strip()]
    stamped = sum(1 for line in filled if _STAMP.match(line))
    # most lines, not all: a launcher's own lines between the stamped ones come unstamped (a
    # choice, tested with every line stamped; a rare stamp-shaped line alone is left as it is)
    if filled and stamped >= 0.8 * len(filled):
        text = "\n".join(_STAMP.sub("", line, count=1) for line in lines)
        notes.append(f"a timestamp before {stamped} lines removed")
    return text, notes


@dataclass(frozen=True)
class LogInput:
    """A log as read: its label (the file name, or ``<stdin>``), its text (NCCL's debug output
    in it is read by :func:`~ibcalc.logs.env.scan_environment`) and the runs parsed from it."""

    label: str
    text: str
    parsed: ParsedLog


def read_log(path: str | os.PathLike[str], *, stdin: BinaryIO | None = None) -> LogInput:
    """Read and parse the log in ``path``, or ``stdin`` when ``path`` is ``-`` and a stream is
    given (at most 64 MiB either way; UTF-8, bad bytes replaced).

    Raises :class:`~ibcalc.errors.LogParseError` as :func:`parse_file` does.
    """
    if not isinstance(path, str | os.PathLike):
        # parse_file(None) had failed on "expected str, bytes or os.PathLike object"
        raise WrongTypeError(f"path must be a str or Path, not {type(path).__name__}")
    if os.fspath(path) == STDIN and stdin is not None:
        label = STDIN_LABEL
        data = stdin.read(MAX_LOG_BYTES + 1)
    else:
        label = os.fspath(path)
        data = _read_file(label)
    if len(data) > MAX_LOG_BYTES:
        raise LogParseError(f"{label}: larger than {format_size(MAX_LOG_BYTES)}")
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))  # UTF-16 with its byte-order mark
    if utf16:
        data = data.decode("utf-16", errors="replace").encode("utf-8")
    # NUL bytes in a log: where a process wrote on after its file was truncated (logrotate's
    # copytruncate) or a crash left blocks unwritten; they are taken away where a log remains
    nuls = data.count(b"\x00")
    nul_note = ""
    if nuls:
        first = data.count(b"\n", 0, data.find(b"\x00")) + 1
        nul_note = (
            f"{nuls:,} NUL byte{'' if nuls == 1 else 's'} removed (the first on line {first}): "
            "a file written on after it was truncated (logrotate's copytruncate), or blocks a "
            "crash left unwritten"
        )
        data = data.replace(b"\x00", b"")
    text, notes = clean_log_text(data.decode("utf-8", errors="replace"))
    if utf16:
        notes.insert(0, "UTF-16 text read as UTF-8")
    if nul_note:
        notes.insert(0, nul_note)
    try:
        parsed = parse_log(text, source=label)
    except LogParseError:
        if nuls:
            raise LogParseError(f"{label}: binary data, not an nccl-tests log") from None
        raise
    if notes:  # said with every run, as the reader's notes on its rows are
        runs = [run.model_copy(update={"notes": [*notes, *run.notes]}) for run in parsed.runs]
        parsed = parsed.model_copy(update={"runs": runs, "notes": [*notes, *parsed.notes]})
    return LogInput(label, text, parsed)


def parse_file(path: str | os.PathLike[str]) -> ParsedLog:
    """Parse the log in ``path`` (a regular file of at most 64 MiB; UTF-8, bad bytes replaced).

    Raises :class:`~ibcalc.errors.LogParseError` for a missing, unreadable, special or too large
    file and for content that is not a log. Reading stdin (``-``) is the caller's job
    (:func:`read_log` with its stream).
    """
    return read_log(path).parsed


def _read_file(name: str) -> bytes:
    """The bytes of the regular file ``name``, at most :data:`MAX_LOG_BYTES` (refused in the
    words every command uses for a file it cannot read: ``no such file``, ``is a directory,
    not a file`` ...)."""
    try:
        return read_regular(name, MAX_LOG_BYTES)
    except ReadRefused as exc:
        # an empty name has nothing to show before the colon
        raise LogParseError(f"{name}: {exc.reason}" if name else exc.reason) from None


def reduced_max_bytes(run: Run) -> int | None:
    """The size nccl-tests reduced ``run``'s maxBytes to for lack of memory (its "Reducing
    maxBytes" line, kept as a note), or None."""
    sizes = [int(m.group(1)) for note in run.notes if (m := _REDUCED_READ.search(note))]
    return min(sizes) if sizes else None
