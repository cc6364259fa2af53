"""Turn the raw facts of one nccl-tests run into a :class:`~ibcalc.logs.records.Run`.

The readers (text and JSON) collect what a log prints into a :class:`RunFacts`; :func:`build_run`
fills in what it does not print and records every such step as an
:class:`~ibcalc.logs.records.Inference` with its evidence. The rules, in the order applied:

Collective
    1. ``# Collective test starting: X_perf`` (or ``... concluded: X_perf``) names it.
    2. Else the command line before the run (``./build/X_perf ...``, ``srun ... /path/X_perf``,
       a JSON ``collective``/``test`` key). ``_perf`` and ``_mpi`` are dropped. If 1 and 2
       disagree, 1 wins and a note says so. scatter, gather and hypercube are parsed but not
       modelled: ``raw_collective`` is set and ``collective`` is None.
    3. Else from the table. Each nccl-tests collective has a signature:

       ============== ======= ====== ============================ ==================
       collective     redop   root   size column                  busbw / algbw
       ============== ======= ====== ============================ ==================
       all_reduce     an op   -1     count x type size            2(n-1)/n
       reduce_scatter an op   -1     count x type size x n        (n-1)/n
       reduce         an op   >= 0   count x type size            1
       broadcast      none    >= 0   count x type size            1
       all_gather     none    -1     count x type size x n        (n-1)/n
       alltoall       none    -1     count x type size x n        (n-1)/n
       sendrecv       any     -1     count x type size            1
       scatter/gather none    >= 0   count x type size x n        (n-1)/n
       ============== ======= ====== ============================ ==================

       (pre-2.10 tables print the redop column only for reducing collectives and the root
       column only for rooted ones; a missing column reads as ``none`` / ``-1``). The ratio is
       checked against the interval every row allows, given that algbw and busbw are printed
       with two decimals. Remaining ties are broken so:

       * all_gather vs alltoall: nccl-tests rounds the all_gather per-rank count down to a multiple
         of 16 bytes (sweep 08, the Anthony-Hoo AutoDL log and NREL/ESIFHPC4's Kestrel log: 0-size
         rows until count x type reaches 16 B), alltoall in older versions does not (sweeps 09:
         count 1, 2 at 64 B and 128 B with 16 ranks). A count x type size that is not a multiple of
         16 means alltoall. Else the in-place ``#wrong`` column decides: nccl-tests prints ``N/A``
         there for alltoall (and sendrecv) and a number for all_gather (every such log in the
         reference set). With neither signal (old ``error`` format, no in-place columns) the
         collective stays None and the inference lists both candidates.
       * all_reduce vs sendrecv with 2 ranks (both ratio 1): in-place ``N/A`` means sendrecv,
         a number means all_reduce.
       * scatter vs gather: indistinguishable from the table; both are listed.

Ranks
    1. The number of ``# Rank N ...`` lines in the device list, unless the list is elided
       (a ``...`` line or a gap in the rank numbers). 2. A JSON rank count. 3. ``nranks N`` in
    NCCL INFO lines (also before the log's first run). 4. For per-rank-count collectives,
    size / (count x type size). 5. The busbw/algbw interval: n = 2/(2 - r) for all_reduce,
    n = 1/(1 - r) for the (n-1)/n collectives; if several integers fit, the only multiple of
    8 (then 4) is taken and the inference says it was a choice; an elided list gives a lower
    bound.

Ranks per node, nodes, hosts
    From the hostnames of the device list when it is complete: nodes = distinct hostnames,
    ranks per node = ranks on each (None, with a note, if they differ).

Library and versions
    ``nccl-tests version``/``rccl-tests version`` header, ``NCCL version X`` and
    ``RCCL version : X`` lines name the library; else the GPU vendor in the device list
    (AMD -> rccl, NVIDIA -> nccl) is used as an inference. The library version is the printed
    ``NCCL version``/``RCCL version`` (normalised to X.Y.Z), else the decoded
    ``nccl-library=``/``rccl-library=`` code (22902 -> 2.29.2; codes below 10000 are the pre-2.9
    scheme, 2804 -> 2.8.4). The nccl-tests version comes from the header, else from a
    ``nccl-tests-X.Y.Z`` directory in the binary path.

Row checks (notes only, rows are kept)
    A non-zero-size row with a time below 1 us (the 1-GPU in-place reduce in the Anthony-Hoo
    AutoDL log prints 0.19 us) is flagged "in-place time implausible" (or out-of-place); non-zero
    ``#wrong`` and out-of-bounds counts are reported. Rows whose columns contradict each other
    are noted: algbw that is not size / time (given the printed precision of both), busbw that
    is not algbw x the collective's factor, a size that is not count x type size (x ranks).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ibcalc.engine.types import Collective, DType
from ibcalc.logs.records import Inference, Row, Run, Timing, line_list
from ibcalc.logs.results import MIN_PLAUSIBLE_TIME_US
from ibcalc.units import plural

__all__ = [
    "MODELLED",
    "NOT_MODELLED",
    "Device",
    "RunFacts",
    "build_run",
    "dtype_bytes",
    "nccl_test_name",
    "normalize_dtype",
    "normalize_version",
    "version_from_code",
]

#: nccl-tests binary names (without ``_perf``) ibcalc models, and the enum member for each: the
#: enum's values are the binaries' names, so a collective added to it is parsed with no edit here.
MODELLED: dict[str, Collective] = {member.value: member for member in Collective}
#: nccl-tests binaries that are parsed but whose collective is not modelled (less any the enum
#: has since gained).
NOT_MODELLED = frozenset({"scatter", "gather", "hypercube"} - MODELLED.keys())

_VERSION = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,4})")
_HALF_ULP = 0.005  # algbw and busbw are printed with two decimals
_ALIGN_BYTES = 16  # nccl-tests all_gather per-rank alignment


#: nccl-tests type names the DType enum does not spell itself (C type names).
_NCCL_TEST_TYPES = {"char": "int8", "int": "int32"}


def normalize_dtype(raw: str) -> str:
    """Return the short dtype name (``float`` -> ``fp32``, ``half`` -> ``fp16`` ...).

    Unknown names come back lower-cased as printed.
    """
    key = raw.strip().lower()
    try:
        return DType.parse(_NCCL_TEST_TYPES.get(key, key)).value
    except ValueError:
        return key


def dtype_bytes(dtype: str | None) -> int | None:
    """Return the element size in bytes of a normalised dtype, or None if unknown."""
    if dtype is None:
        return None
    try:
        return DType.parse(dtype).bytes
    except ValueError:
        return None


def normalize_version(text: str) -> str | None:
    """Return the first ``X.Y.Z`` in ``text`` (``2.27.7-HEAD:96a25b5`` -> ``2.27.7``), or None."""
    match = _VERSION.search(text)
    return None if match is None else ".".join(str(int(g)) for g in match.groups())


def version_from_code(code: int) -> str | None:
    """Decode an NCCL version code: 22902 -> ``2.29.2``, 2804 -> ``2.8.4``; None if implausible."""
    if code >= 10000:
        major, minor, patch = code // 10000, (code % 10000) // 100, code % 100
    elif code >= 1000:
        major, minor, patch = code // 1000, (code % 1000) // 100, code % 100
    else:
        return None
    if major > 9:
        return None
    return f"{major}.{minor}.{patch}"


def nccl_test_name(raw: str) -> str | None:
    """Map a binary or test name (``all_reduce_perf_mpi``, ``AllReduce``) to the nccl-tests name.

    Returns None for names that are not nccl-tests collectives.
    """
    name = raw.strip().lower()
    for suffix in ("_mpi", "_perf"):
        name = name.removesuffix(suffix)
    squashed = re.sub(r"[^a-z]", "", name)
    for known in (*MODELLED, *sorted(NOT_MODELLED)):
        if squashed == known.replace("_", ""):
            return known
    return None


@dataclass(slots=True)
class Device:
    """One ``# Rank N ... on HOST device D [bus] NAME`` line."""

    rank: int
    host: str
    name: str
    line: int
    #: the process id the line prints (None where the line has none)
    pid: int | None = None


@dataclass
class RunFacts:
    """What one run prints, collected by a reader before inference (mutable, internal)."""

    line_start: int
    line_end: int
    named_collective: str | None = None  # from "Collective test starting/concluded"
    named_evidence: str = ""
    command_collective: str | None = None  # from the command line or a JSON key
    command_evidence: str = ""
    command_tests_version: str | None = None
    tests_version: str | None = None
    tests_library: str | None = None  # "nccl" / "rccl" from the version header
    library_code: int | None = None
    library_code_text: str = ""
    nccl_version_line: str | None = None
    rccl_version_line: str | None = None
    explicit_ranks: int | None = None  # JSON
    info_nranks: int | None = None
    info_nranks_line: int = 0
    threads: int | None = None
    gpus_per_process: int | None = None
    #: the header line that gave ``gpus_per_process`` (nGpus)
    gpus_per_process_line: int = 0
    min_bytes: int | None = None
    max_bytes: int | None = None
    step_factor: int | None = None
    step_bytes: int | None = None
    warmup_iters: int | None = None
    iters: int | None = None
    devices: list[Device] = field(default_factory=list)
    #: the ranks in ``devices``, to tell a repeated rank in constant time (a scan of the list
    #: per line had made a 100,000-rank device list take 108 s)
    device_ranks: set[int] = field(default_factory=set)
    devices_elided: bool = False
    rows: list[Row] = field(default_factory=list)
    zero_rows: list[int] = field(default_factory=list)
    #: lines of rows dropped for a negative time (an edited or corrupted table)
    negative_rows: list[int] = field(default_factory=list)
    #: (size, line) of rows dropped as no measurement (a time below 0, NaN, 0 or beyond belief)
    unmeasured: list[tuple[int, int]] = field(default_factory=list)
    #: (line, "more" or "fewer") of rows dropped for another number of fields than the header's
    wrong_width: list[tuple[int, str]] = field(default_factory=list)
    avg_busbw_GBps: float | None = None
    out_of_bounds: int | None = None
    has_trailer: bool = False
    last_row_incomplete: bool = False
    notes: list[str] = field(default_factory=list)
    from_json: bool = False  # positions are result indexes, the device list is a JSON list


@dataclass
class _Signature:
    name: str
    reducing: bool | None  # None: either
    rooted: bool
    per_rank: bool
    factor: Callable[[int], float]


def _ar(n: int) -> float:
    return 2.0 * (n - 1) / n if n > 0 else math.nan


def _nm1(n: int) -> float:
    return (n - 1) / n if n > 0 else math.nan


def _one(n: int) -> float:
    return 1.0


_SIGNATURES = (
    _Signature("all_reduce", True, False, False, _ar),
    _Signature("reduce_scatter", True, False, True, _nm1),
    _Signature("reduce", True, True, False, _one),
    _Signature("broadcast", False, True, False, _one),
    _Signature("all_gather", False, False, True, _nm1),
    _Signature("alltoall", False, False, True, _nm1),
    _Signature("sendrecv", None, False, False, _one),
    _Signature("scatter", False, True, True, _nm1),
    _Signature("gather", False, True, True, _nm1),
)
_FACTOR_TEXT: dict[Callable[[int], float], str] = {_ar: "2(n-1)/n", _nm1: "(n-1)/n", _one: "1"}


def _fmt(x: float) -> str:
    return f"{x:.5g}"


def _us(x: float) -> str:
    """A time as the log prints it: every digit (433217, not 4.3322e+05: review DC)."""
    return f"{x:.10g}"


def _timings(rows: list[Row]) -> list[Timing]:
    out: list[Timing] = []
    for row in rows:
        out.append(row.oop)
        if row.ip is not None:
            out.append(row.ip)
    return out


class _Bounds(NamedTuple):
    """The busbw/algbw interval each printed timing allows (two-decimal rounding), and their
    lower and upper ends sorted once."""

    pairs: list[tuple[float, float]]
    los: list[float]
    his: list[float]


def _ratio_bounds(rows: list[Row]) -> _Bounds:
    pairs = [
        _ratio_interval_of(t)[:2]
        for t in _timings(rows)
        if t.algbw_GBps > _HALF_ULP * 2 and t.busbw_GBps >= 0
    ]
    return _Bounds(pairs, sorted(lo for lo, _ in pairs), sorted(hi for _, hi in pairs))


def _ratio_interval(bounds: _Bounds, cut: int = 0) -> tuple[float, float, int] | None:
    """The busbw/algbw interval the timings all allow, with the count of timings that hold
    it; None where they share none. ``cut`` sets aside that many
    of the timings that narrow it most from each side: the fallback, as few as make a
    collective fit, where the interval of all fits none (one busbw edited by 0.03 GB/s among
    48 timings had moved it off 1.875 and ruled out every collective: a review). Not the first
    choice: set-aside timings widen it, and a tenth of them set aside had spread a 128-rank
    all-reduce's ratio over two multiples of 8 (a review of that change)."""
    ends = _cut_ends(bounds, cut)
    return None if ends is None else (*ends, _held(bounds, *ends))


def _cut_ends(bounds: _Bounds, cut: int) -> tuple[float, float] | None:
    """The ends of :func:`_ratio_interval` without the count (a fallback tries many cuts)."""
    if len(bounds.pairs) <= 2 * cut:
        return None
    lo, hi = bounds.los[-1 - cut], bounds.his[cut]
    return None if lo > hi * (1 + 1e-9) else (lo, hi)


def _held(bounds: _Bounds, lo: float, hi: float) -> int:
    """How many timings allow a ratio in ``lo``-``hi``."""
    return sum(1 for a, b in bounds.pairs if a <= hi * (1 + 1e-9) and lo <= b * (1 + 1e-9))


def _fits(value: float, interval: tuple[float, float, int]) -> bool:
    lo, hi, _ = interval
    if math.isnan(value):
        return False
    return lo * (1 - 1e-9) - 1e-12 <= value <= hi * (1 + 1e-9) + 1e-12


def _count_relation(rows: list[Row]) -> tuple[int | None, str]:
    """size / (count x type size), if the same integer for every row; with a description."""
    ks: set[int] = set()
    for row in rows:
        width = dtype_bytes(row.dtype)
        if width is None or row.count <= 0:
            return None, "count or type size unknown"
        unit = row.count * width
        if row.size_bytes % unit:
            return None, f"size {row.size_bytes} is not a multiple of count x {width} B"
        ks.add(row.size_bytes // unit)
        if len(ks) > 1:
            return None, "size / (count x type size) differs between rows"
    if not ks:
        return None, "no rows"
    k = ks.pop()
    return k, f"size = count x {dtype_bytes(rows[0].dtype)} B x {k} in every row"


def _integers_for(
    factor: Callable[[int], float], interval: tuple[float, float, int]
) -> tuple[float, float] | None:
    """The n range for which factor(n) lies in the ratio interval (factor increasing in n)."""
    lo, hi, _ = interval
    if factor is _ar:
        top = 2.0
        n_lo = 2.0 / (2.0 - lo) if lo < top else math.inf
        n_hi = 2.0 / (2.0 - hi) if hi < top else math.inf
    elif factor is _nm1:
        n_lo = 1.0 / (1.0 - lo) if lo < 1.0 else math.inf
        n_hi = 1.0 / (1.0 - hi) if hi < 1.0 else math.inf
    else:
        return None
    if math.isinf(n_lo):
        return math.inf, math.inf  # the ratio is at or above the limit: no rank count fits
    return max(n_lo, 1.0), n_hi


def _choose_ranks(n_lo: float, n_hi: float, minimum: int) -> tuple[int | None, list[int], str]:
    if math.isinf(n_lo):
        return None, [], "no rank count fits"
    first = max(math.ceil(n_lo - 1e-9), minimum, 1)
    if math.isinf(n_hi):
        return None, [], f"n >= {first}"
    last = math.floor(n_hi + 1e-9)
    if last - first > 64:
        return None, [], f"n in {first}..{last}"
    options = list(range(first, last + 1))
    if len(options) == 1:
        return options[0], options, "exactly one integer fits"
    for step in (8, 4):
        multiples = [n for n in options if n % step == 0]
        if len(multiples) == 1:
            return multiples[0], options, f"chose {multiples[0]}, the only multiple of {step}"
    return None, options, "several integers fit"


class _Builder:
    """Builds one Run from RunFacts; collects notes and inferences on the way."""

    def __init__(self, facts: RunFacts, *, next_line: int | None) -> None:
        self.f = facts
        self.next_line = next_line
        self.notes: list[str] = list(facts.notes)
        self.inferences: list[Inference] = []
        self.rows = facts.rows
        self.bounds = _ratio_bounds(self.rows)
        self.interval = _ratio_interval(self.bounds)
        # at most a tenth of the timings set aside from each side (_ratio_interval): what most
        # rows share, for the fallback and to tell an edited row from a wrong rank count
        self.trimmed = _ratio_interval(self.bounds, len(self.bounds.pairs) // 10)

    # -- collective -------------------------------------------------------------------------
    def collective(self, ranks: int | None) -> tuple[str | None, list[str]]:
        """Return the raw collective name (or None) and the candidates when it is ambiguous."""
        f = self.f
        if f.named_collective is not None:
            if f.command_collective is not None and f.command_collective != f.named_collective:
                self.notes.append(
                    f"command line runs {f.command_collective} but the log says "
                    f"{f.named_collective}; using {f.named_collective}"
                )
            self._infer("collective", f.named_collective, f.named_evidence)
            return f.named_collective, []
        if f.command_collective is not None:
            self._infer("collective", f.command_collective, f.command_evidence)
            return f.command_collective, []
        return self._collective_from_table(ranks)

    def _collective_from_table(self, ranks: int | None) -> tuple[str | None, list[str]]:
        rows = self.rows
        if not rows:
            return None, []
        redop, root = rows[0].redop, rows[0].root
        reducing = redop is not None and redop.lower() != "none"
        rooted = root is not None and root >= 0
        k, k_text = _count_relation(rows)
        why = [
            f"redop {redop if redop is not None else '(no column)'}",
            f"root {root if root is not None else '(no column)'}",
            k_text,
        ]
        survivors = self._signatures(self.interval, reducing, rooted, k, ranks)
        # no interval every row allows (one row off) leaves every collective 'fitting': the
        # fallback then too (an edit upward had been left not checked: a review)
        unsure = not survivors or self.interval is None
        # rows edited or pasted in: what most of them share, as few set aside as make a
        # collective fit (their ratio check then says which rows are off)
        bounds = self.bounds
        for cut in range(1, len(bounds.pairs) // 10 + 1) if unsure else ():
            ends = _cut_ends(bounds, cut)
            found = self._signatures((*ends, 0), reducing, rooted, k, ranks) if ends else {}
            if ends and found:
                survivors, self.interval = found, (*ends, _held(bounds, *ends))
                break
        if self.interval is not None:
            lo, hi, _ = self.interval
            ratio = f"{_fmt(lo)}" if _fmt(lo) == _fmt(hi) else f"{_fmt(lo)}-{_fmt(hi)}"
            why.append(f"busbw/algbw = {ratio}")
        names, tie = self._break_ties(list(survivors))
        if tie:
            why.append(tie)
        evidence = "; ".join(why)
        if len(names) == 1:
            sig, implied = survivors[names[0]]
            detail = _FACTOR_TEXT[sig.factor]
            if implied is not None:
                detail += f" with n={implied}"
            self._infer("collective", sig.name, f"{evidence}; matches {sig.name} ({detail})")
            return sig.name, []
        if names:
            self._infer(
                "collective",
                None,
                f"{evidence}; the table fits several collectives",
                candidates=names,
            )
            return None, names
        self._infer("collective", None, f"{evidence}; no nccl-tests collective fits")
        return None, []

    @staticmethod
    def _signatures(
        interval: tuple[float, float, int] | None,
        reducing: bool,
        rooted: bool,
        k: int | None,
        ranks: int | None,
    ) -> dict[str, tuple[_Signature, int | None]]:
        """The collectives the table's columns and ``interval`` allow, with the rank count
        each implies (None where the ratio leaves it open)."""
        survivors: dict[str, tuple[_Signature, int | None]] = {}
        for sig in _SIGNATURES:
            if sig.reducing is not None and sig.reducing != reducing:
                continue
            if sig.rooted != rooted:
                continue
            implied = ranks
            if k is not None:
                if sig.per_rank:
                    if ranks is not None and k != ranks:
                        continue
                    implied = k
                elif k != 1:
                    continue
            if interval is not None:
                if implied is not None:
                    if not _fits(sig.factor(implied), interval):
                        continue
                else:
                    span = _integers_for(sig.factor, interval)
                    if span is None:
                        if not _fits(1.0, interval):
                            continue
                    elif math.isinf(span[0]) or math.ceil(span[0] - 1e-9) > span[1] + 1e-9:
                        continue
            survivors[sig.name] = (sig, implied)
        return survivors

    def _break_ties(self, names: list[str]) -> tuple[list[str], str]:
        rows = self.rows
        ip_known = [r.ip for r in rows if r.ip is not None]
        # N/A in place tells alltoall and sendrecv apart only where the run checked results: with
        # -c 0 every #wrong is N/A, out of place too
        checked = any(
            r.oop is not None and (r.oop.wrong is not None or r.oop.max_error is not None)
            for r in rows
        )
        ip_na = (
            checked
            and bool(ip_known)
            and all(t.wrong is None and t.max_error is None for t in ip_known)
        )
        ip_numeric = bool(ip_known) and all(
            t.wrong is not None or t.max_error is not None for t in ip_known
        )
        if "all_gather" in names and "alltoall" in names:
            unaligned = [
                r
                for r in rows
                if (w := dtype_bytes(r.dtype)) is not None and (r.count * w) % _ALIGN_BYTES
            ]
            if unaligned:
                r = unaligned[0]
                names = [n for n in names if n != "all_gather"]
                return names, (
                    f"count {r.count} at {r.size_bytes} B is not a multiple of "
                    f"{_ALIGN_BYTES} B per rank (all_gather aligns it, alltoall does not)"
                )
            if ip_na:
                names = [n for n in names if n != "all_gather"]
                return names, "in-place #wrong is N/A (nccl-tests prints N/A for alltoall)"
            if ip_numeric:
                names = [n for n in names if n != "alltoall"]
                return names, "in-place #wrong is checked (alltoall would print N/A)"
        if "all_reduce" in names and "sendrecv" in names:
            if ip_na:
                names = [n for n in names if n != "all_reduce"]
                return names, "in-place #wrong is N/A (nccl-tests prints N/A for sendrecv)"
            if ip_numeric:
                names = [n for n in names if n != "sendrecv"]
                return names, "in-place #wrong is checked (sendrecv would print N/A)"
        return names, ""

    # -- ranks --------------------------------------------------------------------------------
    def known_ranks(self) -> int | None:
        f = self.f
        if f.devices and not f.devices_elided:
            lines = [d.line for d in f.devices]
            where = (
                f"{len(lines)} entries in the JSON device list"
                if f.from_json
                else f"{len(lines)} 'Rank' lines in the device list ({line_list(lines)})"
            )
            self._infer("ranks", len(f.devices), where)
            return len(f.devices)
        if f.explicit_ranks is not None:
            self._infer("ranks", f.explicit_ranks, "rank count stated in the JSON")
            return f.explicit_ranks
        if f.info_nranks is not None:
            self._infer(
                "ranks",
                f.info_nranks,
                f"'nranks {f.info_nranks}' in NCCL INFO output (line {f.info_nranks_line})",
            )
            return f.info_nranks
        return None

    def ranks_from_count(self, names: list[str]) -> int | None:
        sigs = [s for s in _SIGNATURES if s.name in names]
        if not sigs or not all(s.per_rank for s in sigs):
            return None
        k, text = _count_relation(self.rows)
        if k is None or k < 2:
            return None
        self._infer(
            "ranks", k, f"{text}: the size column of {'/'.join(names)} is the total over n ranks"
        )
        return k

    def ranks_from_ratio(self, names: list[str]) -> int | None:
        factors = {s.factor for s in _SIGNATURES if s.name in names}
        if len(factors) != 1 or self.interval is None:
            return None
        factor = factors.pop()
        span = _integers_for(factor, self.interval)
        if span is None:
            return None
        minimum = len({d.rank for d in self.f.devices})
        value, options, how = _choose_ranks(span[0], span[1], minimum)
        lo, hi, used = self.interval
        formula = "2/(2 - r)" if factor is _ar else "1/(1 - r)"
        evidence = (
            f"busbw/algbw r = {_fmt(lo)}-{_fmt(hi)} over {used} measurements gives "
            f"n = {formula} in {_fmt(span[0])}-{_fmt(span[1])} for {', '.join(names)}"
        )
        if minimum:
            evidence += f"; the elided device list shows {minimum} ranks"
        evidence += f"; {how}"
        self._infer("ranks", value, evidence, candidates=[str(n) for n in options])
        return value

    # -- helpers ------------------------------------------------------------------------------
    def _infer(
        self,
        name: str,
        value: str | int | float | None,
        evidence: str,
        *,
        candidates: list[str] | None = None,
    ) -> None:
        self.inferences.append(
            Inference(field=name, value=value, evidence=evidence, candidates=candidates or [])
        )

    def placement(self) -> tuple[list[str], int | None, int | None]:
        f = self.f
        if not f.devices:
            return [], None, None
        if f.devices_elided:
            self.notes.append(
                f"device list elided after {len(f.devices)} ranks; ranks per node unknown"
            )
            return [], None, None
        per_host = Counter(d.host for d in f.devices)
        hosts = list(per_host)
        counts = set(per_host.values())
        listing = ", ".join(f"{h} x{c}" for h, c in per_host.items())
        if len(listing) > 200:
            listing = listing[:197] + "..."
        self._infer("nodes", len(hosts), f"distinct hostnames in the device list: {listing}")
        if len(counts) == 1:
            rpn = counts.pop()
            self._infer("ranks_per_node", rpn, f"every host lists {plural(rpn, 'rank')}")
            return hosts, rpn, len(hosts)
        self.notes.append(f"ranks per node differ between hosts ({listing})")
        return hosts, None, len(hosts)

    def gpus_per_process(self) -> int | None:
        """nccl-tests' ``-g``: the header's nGpus, else, without that line, the ranks each process
        drives in the device list (every host's ranks under one Pid, counted alike everywhere);
        a one-process ``-g 8`` run had been judged as one process per GPU and its launch floor
        blamed on 'a launcher, container or driver overhead'."""
        f = self.f
        if f.gpus_per_process is not None:
            self._processes_split(f.gpus_per_process)
            return f.gpus_per_process
        if not f.devices or f.devices_elided or any(d.pid is None for d in f.devices):
            return None
        per_process = Counter((d.host, d.pid) for d in f.devices)
        counts = set(per_process.values())
        if len(counts) != 1:
            return None
        per = counts.pop()
        if per < 2:
            return None
        self._infer(
            "gpus_per_process",
            per,
            f"the header gives no usable nGpus; every process in the device list drives "
            f"{plural(per, 'rank')} (one Pid per {per} ranks, lines {f.devices[0].line}-"
            f"{f.devices[-1].line})",
        )
        return per

    def _processes_split(self, gpus: int) -> None:
        """A note where the device list contradicts the header's nGpus in a way containers cannot
        explain: a process drives nThread x nGpus ranks, and processes in containers may share a
        Pid (rccl-tests' "Pid 1"), so a host's Pid holds a multiple of that; one holding fewer,
        or a number that is not a multiple (8 Pids of one rank each under nGpus 4), is another
        count of GPUs per process than the header's. The header's count is kept, as before."""
        f = self.f
        if (
            not f.devices
            or f.devices_elided
            or f.from_json
            or any(d.pid is None for d in f.devices)
        ):
            return
        per_process = (f.threads or 1) * gpus
        held = Counter((d.host, d.pid) for d in f.devices)
        odd = [(key, n) for key, n in held.items() if n % per_process]
        if not odd:
            return
        (host, pid), n = odd[0]
        threads = f" x nThread {f.threads}" if (f.threads or 1) > 1 else ""
        self.notes.append(
            f"the header's nGpus {gpus}{threads} (line {f.gpus_per_process_line}) gives each "
            f"process {plural(per_process, 'rank')}, but the device list (lines "
            f"{f.devices[0].line}-{f.devices[-1].line}) shows {len(held)} processes (Pids) for "
            f"its {plural(len(f.devices), 'rank')}, Pid {pid} on {host} driving {n}: processes "
            "in containers may share a Pid, never split one, so one of the two counts is wrong; "
            f"the expectation keeps the header's nGpus {gpus}"
        )

    def gpu_model(self) -> str | None:
        names = Counter(d.name for d in self.f.devices if d.name)
        if not names:
            return None
        if len(names) > 1:
            self.notes.append(
                "mixed GPU models: " + ", ".join(f"{n} x{c}" for n, c in names.items())
            )
        return names.most_common(1)[0][0]

    def library(self, gpu: str | None) -> str | None:
        f = self.f
        if f.tests_library == "rccl" or f.rccl_version_line is not None:
            return "rccl"
        if f.tests_library == "nccl" or f.nccl_version_line is not None:
            return "nccl"
        if gpu is None:
            return None
        low = gpu.lower()
        if low.startswith(("amd", "instinct", "radeon")):
            self._infer("library", "rccl", f"device name {gpu!r} is an AMD GPU")
            return "rccl"
        if low.startswith(("nvidia", "tesla", "quadro", "geforce")) or re.match(
            r"^[abhltvp]\d{2,3}\b", low
        ):
            self._infer("library", "nccl", f"device name {gpu!r} is an NVIDIA GPU")
            return "nccl"
        return None

    def library_version(self) -> str | None:
        f = self.f
        printed = f.nccl_version_line or f.rccl_version_line
        decoded = version_from_code(f.library_code) if f.library_code is not None else None
        if printed is not None:
            if decoded is not None and decoded != printed:
                self.notes.append(
                    f"library version line says {printed} but {f.library_code_text} "
                    f"decodes as {decoded}; using {printed}"
                )
            return printed
        if decoded is not None:
            self._infer("nccl_version", decoded, f"{f.library_code_text} decodes as {decoded}")
        return decoded

    def tests_version(self) -> str | None:
        f = self.f
        if f.tests_version is not None:
            return f.tests_version
        if f.command_tests_version is not None:
            self._infer(
                "tests_version",
                f.command_tests_version,
                f"binary path contains nccl-tests-{f.command_tests_version} ({f.command_evidence})",
            )
        return f.command_tests_version

    def row_checks(self, avg: float | None) -> None:
        rows = self.rows
        unit = "result" if self.f.from_json else "line"
        for place in ("in-place", "out-of-place"):
            bad = [
                (r, t)
                for r in rows
                if (t := (r.ip if place == "in-place" else r.oop)) is not None
                and t.time_us < MIN_PLAUSIBLE_TIME_US
            ]
            if not bad:
                continue
            times = [t.time_us for _, t in bad]
            top_bw = max(t.algbw_GBps for _, t in bad)
            msg = (
                f"{place} time implausible in {plural(len(bad), 'row')} "
                f"({line_list([r.line for r, _ in bad], unit)}): "
                + (
                    f"{_us(min(times))} us"
                    if _us(min(times)) == _us(max(times))
                    else f"{_us(min(times))}-{_us(max(times))} us"
                )
                + f" for non-empty buffers, so their {place} bandwidths (up to {_fmt(top_bw)}"
                " GB/s) are not measurements"
            )
            if avg is not None:
                msg += "; the 'Avg bus bandwidth' trailer averages them in"
            self.notes.append(msg)
        wrong = [r for r in rows if any(t is not None and t.wrong for t in (r.oop, r.ip))]
        if wrong:
            lo, hi = wrong[0].size_bytes, wrong[-1].size_bytes
            span = f"{lo} B" if lo == hi else f"{lo}-{hi} B"  # one size is no range
            self.notes.append(
                f"#wrong is non-zero in {plural(len(wrong), 'row')} ({span}): those results "
                "failed validation"
            )

    def ratio_check(self, raw: str | None, ranks: int | None) -> None:
        sig = next((s for s in _SIGNATURES if s.name == raw), None)
        if sig is None or ranks is None or self.interval is None:
            return
        # most rows fitting the factor is an edited row, which consistency_checks names, not
        # a rank count or collective the rows contradict
        most = self.trimmed is not None and _fits(sig.factor(ranks), self.trimmed)
        if not most and not _fits(sig.factor(ranks), self.interval):
            lo, hi, _ = self.interval
            self.notes.append(
                f"busbw/algbw = {_fmt(lo)}-{_fmt(hi)} does not match {raw} with {ranks} ranks "
                f"(expected {_fmt(sig.factor(ranks))})"
            )

    def consistency_checks(self, raw: str | None, ranks: int | None) -> None:
        """Rows whose printed columns contradict each other: algbw against size / time (the
        time printed to nccl-tests' precision), busbw against algbw x the collective's factor,
        size against count x type size (x ranks). Every published log in the repository passes
        all three; a row that fails was edited or pasted together from several runs."""
        slow = [
            (r, place, t)
            for r in self.rows
            for place, t in (("out-of-place", r.oop), ("in-place", r.ip))
            if t is not None and t.time_us >= MIN_PLAUSIBLE_TIME_US and not _algbw_fits(r, t)
        ]
        if slow:
            r, place, t = slow[0]
            self.notes.append(
                f"algbw does not match size / time in {self._where(slow)}, {place}: "
                f"{r.size_bytes} B in {_us(t.time_us)} us is "
                f"{_fmt(r.size_bytes / t.time_us / 1e3)} GB/s, the log prints "
                f"{_fmt(t.algbw_GBps)} GB/s): edited, or pasted from several runs; ibcalc reads "
                "the time"
            )
        sig = next((s for s in _SIGNATURES if s.name == raw), None)
        if sig is None or (ranks is None and sig.per_rank):
            return
        self._count_check(sig, ranks)
        if ranks is None:
            return
        factor = sig.factor(ranks)
        judged = [
            (r, place, t)
            for r in self.rows
            for place, t in (("out-of-place", r.oop), ("in-place", r.ip))
            if t is not None and t.algbw_GBps > _HALF_ULP * 2
        ]
        off = [(r, p, t) for r, p, t in judged if not _fits(factor, _ratio_interval_of(t))]
        # rows that agree with each other but not with the factor are the rank count or the
        # collective, said by ratio_check; rows that disagree with the rest (no common interval,
        # or one most rows share that the factor fits) are a contradiction inside the table
        most = self.trimmed is not None and _fits(factor, self.trimmed)
        if off and (self.interval is None or most or _fits(factor, self.interval)):
            r, place, t = off[0]
            self.notes.append(
                f"busbw does not match algbw x {_FACTOR_TEXT[sig.factor]} ({_fmt(factor)} for "
                f"{raw} on {ranks} ranks) in {self._where(off)}, {place}: "
                f"{_fmt(t.algbw_GBps)} GB/s x {_fmt(factor)} = {_fmt(t.algbw_GBps * factor)} "
                f"GB/s, the log prints {_fmt(t.busbw_GBps)} GB/s): edited, or pasted from several "
                "runs; ibcalc reads the time"
            )

    def _count_check(self, sig: _Signature, ranks: int | None) -> None:
        """Sizes that are not count x type size (x ranks for per-rank collectives)."""
        per = ranks if sig.per_rank and ranks is not None else 1
        miscounted = [
            (r, "", width)
            for r in self.rows
            if (width := dtype_bytes(r.dtype)) is not None
            and r.count > 0
            and r.count * width * per != r.size_bytes
        ]
        if miscounted:
            r, _, width = miscounted[0]
            times = f" x {per} ranks" if per > 1 else ""
            self.notes.append(
                f"size does not match count x type size{' x ranks' if per > 1 else ''} in "
                f"{self._where(miscounted)}: {r.count} x {width} B{times} = "
                f"{r.count * width * per} B, the log prints {r.size_bytes} B): edited, or another "
                "rank count or type; ibcalc reads the size"
            )

    def _where(self, found: Sequence[tuple[Row, str, object]]) -> str:
        """``1 row (line 44``, ``3 rows (the first at line 44`` or ``every row (the first at
        line 30``: the count of distinct rows."""
        unit = "result" if self.f.from_json else "line"
        rows = len({id(r) for r, _, _ in found})
        first = found[0][0].line
        if rows == 1:
            return f"1 row ({unit} {first}"
        count = "every row" if rows == len(self.rows) else f"{rows} rows"
        return f"{count} (the first at {unit} {first}"


def _time_half_unit(time_us: float) -> float:
    """Half the last printed digit of a time: nccl-tests prints it with 2 decimals below
    100 us, 1 below 10,000 us and none above (``common.cu``, the ``timeStr`` format)."""
    return 0.005 if time_us < 100 else 0.05 if time_us < 1e4 else 0.5


def _algbw_fits(row: Row, t: Timing) -> bool:
    """Is the printed algbw size / time, given both columns' rounding?"""
    h = _time_half_unit(t.time_us)
    lo = row.size_bytes / (t.time_us + h) / 1e3 - _HALF_ULP
    hi = row.size_bytes / max(t.time_us - h, 1e-9) / 1e3 + _HALF_ULP
    return lo * (1 - 1e-6) <= t.algbw_GBps <= hi * (1 + 1e-6)


def _ratio_interval_of(t: Timing) -> tuple[float, float, int]:
    """The busbw/algbw interval one timing allows (two-decimal rounding); algbw > 0.01."""
    a, b = t.algbw_GBps, t.busbw_GBps
    return (b - _HALF_ULP) / (a + _HALF_ULP), (b + _HALF_ULP) / (a - _HALF_ULP), 1


def _common(values: list[str | None], what: str, notes: list[str]) -> str | None:
    seen = Counter(values)
    if len(seen) > 1:
        notes.append(f"rows use several {what}s: " + ", ".join(str(v) for v in seen))
    return seen.most_common(1)[0][0] if seen else None


def build_run(facts: RunFacts, *, next_line: int | None = None) -> Run:
    """Infer what ``facts`` does not state and return the frozen Run.

    ``next_line`` is the line where the next run starts when this one was cut short by it.
    """
    b = _Builder(facts, next_line=next_line)
    f = facts
    ranks = b.known_ranks()
    raw, candidates = b.collective(ranks)
    names = [raw] if raw is not None else candidates
    if ranks is None:
        ranks = b.ranks_from_count(names)
    if ranks is None:
        ranks = b.ranks_from_ratio(names)
    b.ratio_check(raw, ranks)
    b.consistency_checks(raw, ranks)
    collective = MODELLED.get(raw) if raw is not None else None
    if raw in NOT_MODELLED:
        b.notes.append(f"collective {raw} is not modelled by ibcalc")
    hosts, rpn, nodes = b.placement()
    gpu = b.gpu_model()
    library = b.library(gpu)
    nccl_version = b.library_version()
    tests_version = b.tests_version()
    if f.zero_rows:
        n = len(f.zero_rows)
        unit = "result" if f.from_json else "line"
        b.notes.append(
            f"{n} row{'s' if n > 1 else ''} of size 0 skipped ({line_list(f.zero_rows, unit)})"
        )
    if f.negative_rows:
        unit = "result" if f.from_json else "line"
        b.notes.append(
            f"{plural(len(f.negative_rows), 'row')} with a negative time dropped "
            f"({line_list(f.negative_rows, unit)}): a time below 0 is no measurement"
        )
    truncated = not f.has_trailer
    if truncated:
        rows = f"{len(f.rows)} row{'s' if len(f.rows) != 1 else ''}"
        cut = " and an incomplete row" if f.last_row_incomplete else ""
        if next_line is None:
            b.notes.append(f"log ends after {rows}{cut} without the 'Avg bus bandwidth' trailer")
        else:
            b.notes.append(
                f"run ends after {rows}{cut} without the 'Avg bus bandwidth' trailer; "
                f"the next run starts at line {next_line}"
            )
    if f.out_of_bounds:
        b.notes.append(f"'Out of bounds values' reports {f.out_of_bounds}")
    b.row_checks(f.avg_busbw_GBps)
    dtype = _common([r.dtype for r in f.rows], "dtype", b.notes)
    redop = _common([r.redop for r in f.rows], "redop", b.notes)
    return Run(
        raw_collective=raw,
        collective=collective,
        rows=list(f.rows),
        ranks=ranks,
        ranks_per_node=rpn,
        nodes=nodes,
        hosts=hosts,
        devices_listed=len(f.devices),
        gpus_per_process=b.gpus_per_process(),
        threads=f.threads,
        gpu_model=gpu,
        dtype=dtype,
        redop=redop,
        nccl_version=nccl_version,
        library="rccl" if library == "rccl" else "nccl" if library == "nccl" else None,
        tests_version=tests_version,
        warmup_iters=f.warmup_iters,
        iters=f.iters,
        min_bytes=f.min_bytes,
        max_bytes=f.max_bytes,
        step_factor=f.step_factor,
        step_bytes=f.step_bytes,
        avg_busbw_GBps=f.avg_busbw_GBps,
        out_of_bounds=f.out_of_bounds,
        truncated=truncated,
        unmeasured=list(f.unmeasured),
        notes=b.notes,
        inferences=b.inferences,
        line_start=f.line_start,
        line_end=f.line_end,
    )


def unknown_collective_reason(run: Run) -> str:
    """Why a run's collective is unknown: the candidates its table fits, if none of them is one
    ibcalc models (scatter or gather: ``--collective`` cannot name them), else to give it."""
    candidates = next(
        (i.candidates for i in run.inferences if i.field == "collective" and i.candidates), []
    )
    if candidates and not set(candidates) & MODELLED.keys():
        return (
            f"the table fits {' or '.join(candidates)}, which ibcalc does not model (it models "
            f"{', '.join(sorted(MODELLED))})"
        )
    return "the collective could not be told from the log; give it ({collective})"
