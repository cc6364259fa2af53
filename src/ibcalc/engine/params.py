"""The constants of the cost model as one frozen, validated object: :class:`CostParams`.

Every number the engine uses that is not a property of the cluster lives here, built from a
plain mapping with the layout of ``data/cost_params.yaml``. Each value is written with its unit
(``"6.8 us"``, ``"39 GB/s"``, ``"4 MiB"``; factors and counts are plain numbers, ``7/9`` allowed)
and carries where it comes from: a public ``source``, a ``derived_by`` calibration with the
``rows`` it reads, or an ``assumed`` reason. Groups:

* ``nccl_tuner``: NCCL 2.30.7's own cost-model constants (``src/graph/tuning.cc``);
* ``nccl_runtime``: other NCCL defaults the model needs (the Simple buffer size);
* ``calibrated``: values fitted to published measurements by ``benchmarks/calibrate.py``;
* ``assumptions``: values no measurement pins down, each with its reason;
* ``reporting``: thresholds of what is said about a result, not of the result itself;
* ``tuner_view``: the values NCCL's own tuner assumes where they differ from the physical ones.
  :meth:`CostParams.tuner_view` returns that second instance (the physical values with this
  section laid over them); ``select`` ranks candidates with it, as NCCL does.

The engine does no I/O: reading the YAML and reporting problems as ``file:line:col`` is done by
``ibcalc.catalogue.cost_params``, which passes each file's data here with a ``locate`` callback
that turns a key path into its line and column.
"""

from __future__ import annotations

import copy
import copyreg
import difflib
import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from ibcalc.engine.types import Algorithm, Protocol
from ibcalc.errors import CatalogueError, UnitError, ValidationProblem
from ibcalc.textsafe import shown as echo
from ibcalc.units import (
    MIN_BANDWIDTH_BPS,
    MIN_BANDWIDTH_TEXT,
    UNSIGNED_NUMBER,
    as_float,
    is_zero,
    parse_bandwidth,
    parse_size,
    parse_time,
)

__all__ = [
    "SCHEMA",
    "Assumptions",
    "Calibrated",
    "CostParams",
    "Locator",
    "NcclRuntime",
    "NcclTuner",
    "Provenance",
    "Reporting",
    "release_clauses",
    "release_predates",
]

#: The ``schema:`` every cost-parameter file declares.
SCHEMA = "ibcalc-cost-params/1"


#: How an NCCL release's missing algorithms are said in the source of its
#: ``nccl_tuner.algorithms`` override: written by :func:`release_predates` (catalogue.releases),
#: read back one algorithm's clause at a time by :func:`release_clauses` (engine.select), here
#: so that one module owns the format
_PREDATES = " predates "
_FIRST_IN = " (first in "
#: Where a clause begins: a release's notes may hold "; " themselves
_CLAUSE = re.compile(rf"; (?=[a-z0-9]+{re.escape(_FIRST_IN)})")


def release_predates(release: str, missing: Mapping[str, tuple[str, str]]) -> str:
    """``NCCL 2.3.7 predates tree (first in 2.4.2: notes); pairwise (first in 2.7.3: notes)``
    for ``missing``, each algorithm's name to (its first release, the notes that say so)."""
    return f"NCCL {release}{_PREDATES}" + "; ".join(
        f"{name}{_FIRST_IN}{first}: {notes})" for name, (first, notes) in missing.items()
    )


def release_clauses(source: str, names: Sequence[str]) -> str | None:
    """The clauses of a :func:`release_predates` text that name the algorithms ``names``; None
    when there are none or the source is not a release's (a log's NCCL_ALGO, an override
    file)."""
    head, predates, body = source.partition(_PREDATES)
    if not predates or not names:
        return None
    wanted = set(names)
    kept = [c for c in _CLAUSE.split(body) if c.split(_FIRST_IN)[0] in wanted]
    return f"{head}{predates}{'; '.join(kept)}" if len(kept) == len(wanted) else None


def _read_only(data: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    """A read-only view of ``data``: what a pickled read-only mapping is rebuilt with."""
    return MappingProxyType(data)


# CostParams keeps its tables and provenance as read-only mappings, which pickle cannot write:
# parameters fitted once could not go to a process pool's workers (a review). Pickled as the
# plain mapping, rebuilt read-only.
copyreg.pickle(MappingProxyType, lambda view: (_read_only, (dict(view),)))

#: Turns a key path of the mapping (``("nccl_tuner", "base_latency", "value")``) into its
#: 1-based (line, column) in the file it came from, or (None, None).
Locator = Callable[[Sequence[str | int]], tuple[int | None, int | None]]

_Loc = tuple[str | int, ...]
_Problems = list[tuple[_Loc, str]]

_PROVENANCE_KEYS: tuple[Literal["source", "derived_by", "assumed"], ...] = (
    "source",
    "derived_by",
    "assumed",
)
_ENTRY_KEYS = ("value", *_PROVENANCE_KEYS, "rows")
_DERIVED_BY = re.compile(r"^[\w./-]+\.py::\w+$")
_HAS_UNIT = re.compile(r"[A-Za-zµμ]")
_RATIO = re.compile(r"^\s*([0-9.eE+-]+)\s*/\s*([0-9.eE+-]+)\s*$")
#: A plain number written as a string (ASCII digits): YAML 1.1 reads 1e300 without a dot so.
_PLAIN = re.compile(rf"^\s*[+-]?{UNSIGNED_NUMBER}\s*$")


def _hint(name: object, choices: Iterable[str]) -> str:
    pool = list(choices)
    close = difflib.get_close_matches(str(name), pool, n=1, cutoff=0.5)
    if not close:
        lower = {c.lower(): c for c in pool}
        close = [lower[m] for m in difflib.get_close_matches(str(name).lower(), lower, n=1)]
    if close:
        return f" (did you mean {close[0]}?)"
    return f" (known: {', '.join(pool)})"


def _range_text(lo: float, hi: float, lo_open: bool, hi_open: bool) -> str:
    left = "(" if lo_open else "["
    right = ")" if hi_open or math.isinf(hi) else "]"
    return f"{left}{lo:g}, {hi:g}{right}"


class _Kind:
    """How one value (or table of values) is written, and what it becomes."""

    def parse(self, raw: object, loc: _Loc, problems: _Problems, *, partial: bool) -> Any:
        """The value ``raw`` means; appends a problem (and returns None) when it means none.

        ``partial`` allows a table to give only some of its cells (an override file).
        """
        raise NotImplementedError  # pragma: no cover


@dataclass(frozen=True)
class _Quantity(_Kind):
    """A dimensioned scalar written with its unit: a time, a bandwidth or a size."""

    what: str
    reader: Callable[[str], float]
    example: str
    lo: float = 0.0
    hi: float = math.inf
    lo_open: bool = False
    nullable: bool = False
    hi_text: str = ""
    lo_text: str = ""

    def parse(self, raw: object, loc: _Loc, problems: _Problems, *, partial: bool) -> Any:
        if raw is None and self.nullable:
            return None
        if self.what == "time" and is_zero(raw):
            # a time of 0 is 0 in every unit, as catalogues take it (a review: "0" had been
            # refused here and taken there)
            return 0.0
        if not isinstance(raw, str) or not _HAS_UNIT.search(raw):
            problems.append(
                (loc, f"{raw!r} is not a {self.what} with its unit (write e.g. {self.example!r})")
            )
            return None
        try:
            value = self.reader(raw)
        except UnitError as exc:
            problems.append((loc, str(exc)))
            return None
        if value > self.hi:
            problems.append((loc, f"{raw!r} is more than {self.hi_text}: not a plausible value"))
            return None
        if value < self.lo or (self.lo_open and value == self.lo):
            least = self.lo_text or f"{self.lo:g}"
            bound = "more than" if self.lo_open else "at least"
            problems.append((loc, f"{raw!r} must be {bound} {least}"))
            return None
        return value


def _written(raw: object) -> str:
    """A value from a file as an error quotes it: its repr, a whole number of more than 30
    digits by its length (a 5,000-digit one, which YAML reads, has no str() in Python 3.11)."""
    if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) >= 10**30:
        return f"a whole number of {int(math.log10(abs(raw))) + 1} digits"
    return repr(raw)


@dataclass(frozen=True)
class _Number(_Kind):
    """A dimensionless factor or count: a plain number, or a ratio such as ``7/9``."""

    lo: float
    hi: float
    lo_open: bool = False
    hi_open: bool = False
    integer: bool = False

    def _read(self, raw: object) -> float | None:
        if isinstance(raw, bool):
            return None
        if isinstance(raw, int | float):
            return as_float(raw)  # 400 digits: an infinity, out of range (it had overflowed)
        if isinstance(raw, str) and _PLAIN.match(raw):
            # YAML 1.1 reads 1e300 (no dot) as a string
            return float(raw)
        if isinstance(raw, str) and not self.integer:
            match = _RATIO.match(raw)
            if match is not None:
                try:
                    num, den = float(match[1]), float(match[2])
                except ValueError:
                    return None
                if not (math.isfinite(num) and math.isfinite(den)) or den == 0:
                    return None  # 1/1e400 is no ratio of two numbers
                return num / den
        return None

    def parse(self, raw: object, loc: _Loc, problems: _Problems, *, partial: bool) -> Any:
        value = self._read(raw)
        kind = "a whole number" if self.integer else "a plain number (or a ratio such as 7/9)"
        if raw is None:
            problems.append((loc, f"no value (null): give {kind}"))
            return None
        written = _written(raw)
        if value is None or math.isnan(value):
            problems.append((loc, f"{written} is not {kind}; factors and counts carry no unit"))
            return None
        too_low = value < self.lo or (self.lo_open and value == self.lo)
        too_high = value > self.hi or (self.hi_open and value == self.hi)
        if too_low or too_high:  # 1e400 and a 400-digit whole number too: infinite as floats
            bounds = _range_text(self.lo, self.hi, self.lo_open, self.hi_open)
            problems.append((loc, f"{written} is out of range: must be in {bounds}"))
            return None
        if self.integer and value != int(value):
            problems.append((loc, f"{written} is not a whole number"))
            return None
        return int(value) if self.integer else value


@dataclass(frozen=True)
class _Table(_Kind):
    """A mapping with a fixed set of keys, each with its own kind (NCCL's constant tables).

    ``key`` turns a YAML key into the engine's key (an Algorithm, a Protocol); ``finish`` turns
    the complete mapping into the engine's form (a tuple for the LL caps).
    """

    cells: Mapping[str, _Kind]
    what: str
    key: Callable[[str], Any] = str
    finish: Callable[[Mapping[Any, Any]], Any] | None = None

    def parse(self, raw: object, loc: _Loc, problems: _Problems, *, partial: bool) -> Any:
        if not isinstance(raw, Mapping):
            problems.append(
                (loc, f"expected a mapping of {self.what} to values ({', '.join(self.cells)})")
            )
            return None
        out: dict[Any, Any] = {}
        for name, item in raw.items():
            kind = self.cells.get(name) if isinstance(name, str) else None
            if kind is None:
                problems.append(
                    ((*loc, name), f"unknown {self.what} {name!r}{_hint(name, self.cells)}")
                )
                continue
            out[self.key(name)] = kind.parse(item, (*loc, name), problems, partial=partial)
        if not partial:
            missing = [name for name in self.cells if name not in raw]
            if missing:
                problems.append((loc, f"missing {self.what} {', '.join(missing)}"))
                return None
            if self.finish is not None:
                return self.finish(out)
        return MappingProxyType(out)


@dataclass(frozen=True)
class _List(_Kind):
    """A list of a fixed length (replaced whole by an override)."""

    item: _Kind
    length: int
    what: str
    #: the items must not fall (a band's 10th percentile at most its 90th)
    ordered: bool = False

    def parse(self, raw: object, loc: _Loc, problems: _Problems, *, partial: bool) -> Any:
        if not isinstance(raw, list) or len(raw) != self.length:
            problems.append((loc, f"expected a list of {self.length} {self.what}"))
            return None
        items = tuple(
            self.item.parse(item, (*loc, i), problems, partial=False) for i, item in enumerate(raw)
        )
        if self.ordered and None not in items and list(items) != sorted(items):
            shown = ", ".join(f"{x:g}" for x in items)
            problems.append(
                (loc, f"{self.what} [{shown}]: the first is above the second (low end first)")
            )
            return None
        return items


def _time_with_unit(raw: str) -> float:
    """A time whose unit is written: "3e-6" has a letter but no unit, and had been read as
    seconds (a review)."""
    return parse_time(raw, unit_required=True)


#: A latency over a second is no per-hop or per-message latency (ms written for us?).
_LATENCY = _Quantity("time", _time_with_unit, "6.8 us", hi=1.0, hi_text="1 s")
#: An all-to-all's cost per message of more than a millisecond is no GPU's posting work: '2.3 ms'
#: written for 2.3 us had priced a 1 KiB all-to-all of 2 x 8 A100s at 48.5 ms, and 999 ms at
#: 21 s (the built-in is 2.4 us; calibrate searches 10 ns to 1 ms).
_MESSAGE_LATENCY = _Quantity("time", _time_with_unit, "2.4 us", hi=1e-3, hi_text="1 ms")
_SIZE = _Quantity("size", parse_size, "4 MiB", lo_open=True)
#: Below 1 MB/s no link rate is plausible (the catalogue's floor): 1e-300 GB/s had priced a
#: 1 KiB all-reduce at 2.8e284 hours.
_BANDWIDTH = _Quantity(
    "bandwidth", parse_bandwidth, "39 GB/s", lo=MIN_BANDWIDTH_BPS, lo_text=MIN_BANDWIDTH_TEXT
)
_FRACTION = _Number(0.0, 1.0, lo_open=True)


def _protocols(*names: Protocol) -> _Table:
    return _Table({p.value: _LATENCY for p in names}, "protocol", Protocol)


_ALL_PROTOCOLS = (Protocol.LL, Protocol.LL128, Protocol.SIMPLE)
#: NCCL's latency tables have a row per algorithm it models; the engine runs Tree and Ring with
#: every protocol and the others with Simple only, so those rows hold Simple alone.
_LATENCY_BY_ALGORITHM = _Table(
    {
        Algorithm.TREE.value: _protocols(*_ALL_PROTOCOLS),
        Algorithm.RING.value: _protocols(*_ALL_PROTOCOLS),
        Algorithm.COLLNET_DIRECT.value: _protocols(Protocol.SIMPLE),
        Algorithm.COLLNET_CHAIN.value: _protocols(Protocol.SIMPLE),
        Algorithm.NVLS.value: _protocols(Protocol.SIMPLE),
        Algorithm.NVLS_TREE.value: _protocols(Protocol.SIMPLE),
        Algorithm.PAT.value: _protocols(Protocol.SIMPLE),
    },
    "algorithm",
    Algorithm,
)
_NODE_COUNTS = ("one_node", "two_nodes", "three_or_more_nodes")
_LL_CAPS = _Table(
    {
        arch: _Table(
            dict.fromkeys(_NODE_COUNTS, _BANDWIDTH),
            "node count",
            finish=lambda caps: tuple(caps[n] for n in _NODE_COUNTS),
        )
        for arch in ("volta", "ampere", "hopper", "blackwell")
    },
    "GPU generation",
)
_MULTI_NODE_COUNTS = _NODE_COUNTS[1:]
_LL_CAPS_AMD_HOST = _Table(
    dict.fromkeys(_MULTI_NODE_COUNTS, _BANDWIDTH),
    "node count",
    finish=lambda caps: tuple(caps[n] for n in _MULTI_NODE_COUNTS),
)
#: Size regimes and transport classes the error band distinguishes (``engine/band.py``).
BAND_REGIMES = ("latency", "mid", "bandwidth")
BAND_CLASSES = ("scale-up", "fabric", "verbs", "plugin")
_BAND = _Table(
    {
        regime: _Table(
            {
                cls: _List(
                    _Number(-1.0, 100.0, lo_open=True),
                    2,
                    "quantiles (10th, 90th)",
                    ordered=True,
                )
                for cls in BAND_CLASSES
            },
            "transport class",
        )
        for regime in BAND_REGIMES
    },
    "size regime",
)
#: NCCL's tree correction table has 23 buckets: 64 B x 2^i for 0 <= i < 23.
_TREE_CORRECTION = _Table(
    {p.value: _List(_FRACTION, 23, "factors (one per size bucket)") for p in _ALL_PROTOCOLS},
    "protocol",
    Protocol,
)


#: GPU generations whose clock scales NCCL's hop latencies (NVIDIA's; NCCL's constants).
CLOCKED_ARCHS = ("volta", "turing", "ampere", "ada", "hopper", "blackwell")
#: GPU generations with a clock in ``gpu.clock_mhz``: NVIDIA's, and AMD's CDNA 2, 3 and 4, whose
#: clock scales the per-message cost of an all-to-all only (RCCL keeps NCCL's hop constants).
CLOCK_ARCHS = (*CLOCKED_ARCHS, "cdna2", "cdna3", "cdna4")
#: Algorithms NCCL added after 2.0: whether the release the constants describe has them.
_RELEASE_ALGORITHMS = _Table(
    {
        a.value: _Number(0.0, 1.0, integer=True)
        for a in (
            Algorithm.RING,
            Algorithm.TREE,
            Algorithm.COLLNET_DIRECT,
            Algorithm.COLLNET_CHAIN,
            Algorithm.NVLS,
            Algorithm.NVLS_TREE,
            Algorithm.PAT,
            Algorithm.PAIRWISE,
            Algorithm.P2P,
            Algorithm.PXN,
        )
    },
    "algorithm",
    Algorithm,
)
_ENABLED_PROTOCOLS = _Table(
    {p.value: _Number(0.0, 1.0, integer=True) for p in _ALL_PROTOCOLS}, "protocol", Protocol
)
_CLOCKS = _Table({arch: _Number(100.0, 5000.0) for arch in CLOCK_ARCHS}, "GPU generation")
_THREADS = _Table(
    {p.value: _Number(32.0, 1024.0, integer=True) for p in _ALL_PROTOCOLS}, "protocol", Protocol
)
_PER_THREAD = _Table({p.value: _SIZE for p in _ALL_PROTOCOLS}, "protocol", Protocol)


def _param(key: str, kind: _Kind) -> Any:
    """A group field read from the YAML entry ``key`` as ``kind``."""
    return field(metadata={"key": key, "kind": kind})


@dataclass(frozen=True)
class NcclTuner:
    """NCCL 2.30.7's cost-model constants (``src/graph/tuning.cc``). Times in seconds."""

    #: Base latency per algorithm and protocol (``baseLat``).
    base_latency_s: Mapping[Algorithm, Mapping[Protocol, float]] = _param(
        "base_latency", _LATENCY_BY_ALGORITHM
    )
    #: Per-hop latency per path class (nvlink, pci, net), algorithm and protocol (``hwLat``).
    hop_latency_s: Mapping[str, Mapping[Algorithm, Mapping[Protocol, float]]] = _param(
        "hop_latency",
        _Table(dict.fromkeys(("nvlink", "pci", "net"), _LATENCY_BY_ALGORITHM), "path class"),
    )
    #: Network post overhead per ring step on more than one node.
    net_overhead_s: float = _param("net_overhead", _LATENCY)
    #: The same overhead on hosts with AMD x86 CPUs.
    net_overhead_amd_s: float = _param("net_overhead_amd", _LATENCY)
    #: The post overhead is multiplied by this for Simple.
    net_overhead_simple_factor: float = _param("net_overhead_simple_factor", _Number(1.0, 100.0))
    #: One-way transport latencies NCCL counts per Simple network hop (the hop and the flush).
    simple_transport_count: float = _param("simple_transport_count", _Number(0.0, 100.0))
    #: Ring + Simple all-reduce latency factor on several nodes (the "ring plateau"), SM80+.
    ring_plateau_factor: float = _param("ring_plateau_factor", _Number(1.0, 100.0))
    #: The same on GPUs older than SM80 (Volta, Turing).
    ring_plateau_factor_pre_sm80: float = _param(
        "ring_plateau_factor_pre_sm80", _Number(1.0, 100.0)
    )
    #: Ring + LL bandwidth factor (8 bytes of data per 16-byte line).
    ring_ll_factor: float = _param("ring_ll_factor", _FRACTION)
    #: Ring + LL128 bandwidth factor.
    ring_ll128_factor: float = _param("ring_ll128_factor", _FRACTION)
    #: Tree all-reduce bandwidth factor (on whichever tier binds the tree, as NCCL's tuner has it).
    tree_factor: float = _param("tree_factor", _FRACTION)
    #: Tree + LL bandwidth divisor.
    tree_ll_divisor: float = _param("tree_ll_divisor", _Number(1.0, 100.0))
    #: Tree + LL128 bandwidth factor on one node.
    tree_ll128_factor_one_node: float = _param("tree_ll128_factor_one_node", _FRACTION)
    #: Tree + LL128 bandwidth factor on several nodes.
    tree_ll128_factor_multi_node: float = _param("tree_ll128_factor_multi_node", _FRACTION)
    #: PAT bandwidth factor.
    pat_factor: float = _param("pat_factor", _FRACTION)
    #: PAT latency term per rank.
    pat_per_rank_s: float = _param("pat_per_rank_latency", _LATENCY)
    #: PAT divides its log2(N) network hops by this.
    pat_net_divisor: float = _param("pat_net_divisor", _Number(0.0, 100.0, lo_open=True))
    #: CollNetDirect fan-in serialisation per extra local rank.
    collnet_fanin_s: float = _param("collnet_fanin_latency", _LATENCY)
    #: CollNet / NVLS+SHARP algorithm bandwidth as a fraction of its bus bandwidth.
    collnet_algbw_factor: float = _param("collnet_algbw_factor", _FRACTION)
    #: CollNet runs with at most this many GPUs per node.
    collnet_max_local_ranks: int = _param(
        "collnet_max_local_ranks", _Number(1.0, 1e6, integer=True)
    )
    #: 1 where NCCL may run the algorithm, 0 where the release predates it (tree, NVLS,
    #: NVLS-tree, PAT, PXN; pairwise and p2p, before point-to-point send/receive) or the run's
    #: ``NCCL_ALGO`` rules it out (nccl-check, calibrate).
    algorithms: Mapping[Algorithm, int] = _param("algorithms", _RELEASE_ALGORITHMS)
    #: 1 where NCCL may use the protocol, 0 where the run's ``NCCL_PROTO`` rules it out
    #: (nccl-check, calibrate).
    protocols: Mapping[Protocol, int] = _param("protocols", _ENABLED_PROTOCOLS)
    #: LL bus-bandwidth caps per GPU generation on 1, 2 and >= 3 scale-up domains (NCCL's
    #: nNodes), bytes/s (``llMaxBws``).
    ll_max_busbw_Bps: Mapping[str, tuple[float, float, float]] = _param("ll_max_busbw", _LL_CAPS)
    #: The LL caps on 2 and >= 3 domains of hosts with AMD x86 CPUs, bytes/s (``llMaxBws`` row 1,
    #: which NCCL takes on several nodes by CPU vendor instead of GPU generation).
    ll_max_busbw_amd_host_Bps: tuple[float, float] = _param(
        "ll_max_busbw_amd_host", _LL_CAPS_AMD_HOST
    )
    #: Tree all-reduce bandwidth correction per size bucket (``treeCorrectionFactor``).
    tree_correction: Mapping[Protocol, tuple[float, ...]] = _param(
        "tree_correction", _TREE_CORRECTION
    )
    #: Start of the tree correction's first bucket; bucket i starts at this x 2^i.
    tree_correction_first_bucket_bytes: float = _param("tree_correction_first_bucket", _SIZE)
    #: NCCL multiplies its ring estimate by this for FP8 reductions ...
    fp8_ring_penalty: float = _param("fp8_ring_penalty", _Number(1.0, 1e12))
    #: ... on more than this many ranks.
    fp8_ring_penalty_above_ranks: int = _param(
        "fp8_ring_penalty_above_ranks", _Number(0.0, 1e9, integer=True)
    )


@dataclass(frozen=True)
class NcclRuntime:
    """NCCL defaults outside its tuner that the model needs."""

    #: Simple protocol buffer per connection (``NCCL_BUFFSIZE``), bytes.
    simple_buffer_bytes: float = _param("simple_buffer", _SIZE)
    #: Timed iterations nccl-tests launches back to back per size (``-n``, default 20).
    tests_iterations: int = _param("tests_iterations", _Number(1.0, 1e6, integer=True))


@dataclass(frozen=True)
class Calibrated:
    """Values fitted to published measurements (``benchmarks/calibrate.py`` re-derives each)."""

    #: One-way transport latencies per Simple network hop once the message fills the pipeline.
    simple_transport_factor: float = _param("simple_transport_factor", _Number(0.0, 100.0))
    #: The most ranks among the rows ``simple_transport_factor`` is fitted on (a Simple
    #: estimate over a plugin transport of more extrapolates its handshake count, and says so).
    simple_fit_ranks: int = _param("simple_fit_ranks", _Number(0.0, 1e9, integer=True))
    #: Message size at which Simple's transport handshake is fully exposed, bytes.
    simple_fill_bytes: float = _param("simple_fill", _SIZE)
    #: sendrecv bandwidth / ring bandwidth on a scale-up link.
    p2p_efficiency: float = _param("p2p_efficiency", _FRACTION)
    #: All-to-all bandwidth inside a scale-up domain / the link's achievable (ring) rate: every
    #: GPU streams to all its peers at once, as n-1 point-to-point pairs.
    alltoall_efficiency: float = _param("alltoall_efficiency", _FRACTION)
    #: Per-rank LL throughput across the network at small sizes, bytes/s (None: no such limit).
    ll_net_Bps: float | None = _param(
        "ll_net_bandwidth",
        replace(_BANDWIDTH, example="1 GB/s", nullable=True),
    )
    #: NVLS bandwidth left to an NVLS-tree (the GPU also streams its shard to and from the NIC).
    nvls_tree_factor: float = _param("nvls_tree_factor", _FRACTION)
    #: Cost of posting one more peer message in a grouped all-to-all, at Hopper's clock
    #: (scaled to the GPU's by ``Assumptions.clock_scaled_messages``).
    per_message_s: float = _param("per_message_latency", _MESSAGE_LATENCY)
    #: The most ranks among the all-to-all rows ``per_message_s`` is fitted on (an all-to-all
    #: of more extrapolates its message term, and says so).
    per_message_fit_ranks: int = _param("per_message_fit_ranks", _Number(0.0, 1e9, integer=True))
    #: Cost of one more channel's network operation for NCCL's proxy thread (a ring or tree
    #: across nodes posts one per channel it runs on).
    proxy_op_s: float = _param("proxy_op_latency", _LATENCY)
    #: Host time to launch one GPU's share of a collective when one process drives several GPUs
    #: (nccl-tests ``-g``): launches are serial on the host.
    launch_per_gpu_s: float = _param("launch_per_gpu", _LATENCY)


@dataclass(frozen=True)
class Assumptions:
    """Values no measurement pins down; each entry of the YAML says why it is what it is."""

    #: One-way transport latencies a small Simple message exposes per network hop.
    simple_transport_floor: float = _param("simple_transport_floor", _Number(0.0, 100.0))
    #: LL's extra over plugin transports stops growing at this size, bytes.
    ll_net_saturation_bytes: float = _param("ll_net_saturation", _SIZE)
    #: Channels NCCL keeps busy over one WAN link.
    wan_channels: int = _param("wan_channels", _Number(1.0, 1024.0, integer=True))
    #: 1: NCCL's per-hop latencies inside a node scale with the GPU's clock against Hopper's
    #: (the tuner view: 0, NCCL's constants as they are).
    clock_scaled_hops: int = _param("clock_scaled_hops", _Number(0.0, 1.0, integer=True))
    #: 1: an all-to-all's per-message cost (``calibrated.per_message_latency``, Hopper's) scales
    #: with the GPU's clock against Hopper's, on every GPU with a clock (the tuner view too:
    #: NCCL's tuner prices no point-to-point work, so the tuner-style ranking keeps it).
    clock_scaled_messages: int = _param("clock_scaled_messages", _Number(0.0, 1.0, integer=True))
    #: 1: a link's own ``simple_transport_floor`` replaces ``simple_transport_floor`` (the tuner
    #: view: 0, NCCL's count for every plugin).
    link_simple_floor: int = _param("link_simple_floor", _Number(0.0, 1.0, integer=True))
    #: 1: a tree across nodes pays NCCL's per-step network overhead once on the way up and once
    #: down (the tuner view: 0, NCCL charges it to rings only).
    tree_net_overhead: int = _param("tree_net_overhead", _Number(0.0, 1.0, integer=True))
    #: 1: on several nodes of AMD x86 hosts the LL cap is NCCL's AMD row
    #: (``nccl_tuner.ll_max_busbw_amd_host``; the tuner view: 1, NCCL's indexing); 0: the
    #: generation's row, as on every other host.
    amd_host_ll_cap: int = _param("amd_host_ll_cap", _Number(0.0, 1.0, integer=True))


@dataclass(frozen=True)
class Gpu:
    """Facts about GPU generations from their data sheets."""

    #: Boost (NVIDIA) or peak engine (AMD) clock of each GPU generation, MHz (``hopper`` is
    #: the reference).
    clock_mhz: Mapping[str, float] = _param("clock_mhz", _CLOCKS)


@dataclass(frozen=True)
class Reporting:
    """Thresholds of what is said about a result (they do not change any time)."""

    #: An alternative is named as faster than NCCL's choice only beyond this fraction.
    notably_faster: float = _param("notably_faster", _Number(0.0, 1.0, hi_open=True))


@dataclass(frozen=True)
class Pipeline:
    """How NCCL splits a collective into channels and chunks (``engine/pipeline.py``)."""

    #: 1: the physical view models pipeline fill instead of NCCL's tree correction table; the
    #: tuner view sets 0 (NCCL ranks with its table).
    model_fill: int = _param("model_fill", _Number(0.0, 1.0, integer=True))
    #: Channels (CTAs) a collective runs on inside one node.
    channels_single_node: int = _param("channels_single_node", _Number(1.0, 64.0, integer=True))
    #: Channels inside one node whose GPUs talk over PCIe.
    channels_pcie: int = _param("channels_pcie", _Number(1.0, 64.0, integer=True))
    #: Channels per ring across nodes (one ring per NIC a GPU sends through).
    channels_per_nic: int = _param("channels_per_nic", _Number(1.0, 64.0, integer=True))
    #: Most channels NCCL runs.
    max_channels: int = _param("max_channels", _Number(1.0, 64.0, integer=True))
    #: Buffer steps per connection (``NCCL_STEPS``).
    steps: int = _param("steps", _Number(1.0, 64.0, integer=True))
    #: Smallest chunk the tree pipeline shrinks to (Simple), bytes.
    tree_min_chunk_bytes: float = _param("tree_min_chunk", _SIZE)
    #: Payload of one LL step (half its 16-byte lines), bytes.
    ll_step_bytes: float = _param("ll_step", _SIZE)
    #: Payload of one LL128 step (120 of every 128 bytes), bytes.
    ll128_step_bytes: float = _param("ll128_step", _SIZE)
    #: 1: a small collective runs on fewer channels, as NCCL trims them (the tuner view: 0).
    trim_channels: int = _param("trim_channels", _Number(0.0, 1.0, integer=True))
    #: Threads per channel (CTA) by protocol.
    max_threads: Mapping[Protocol, int] = _param("max_threads", _THREADS)
    #: Bytes per thread below which NCCL gives a collective fewer channels, by protocol (the
    #: ring's LL threshold is this times the rank count).
    thread_threshold_bytes: Mapping[Protocol, float] = _param("thread_threshold", _PER_THREAD)


@dataclass(frozen=True)
class ErrorBand:
    """How far measurements fall from the model: signed relative time errors,
    ``(predicted - measured) / measured``, of leave-one-source-out predictions."""

    #: (10th, 90th) percentile of the signed time error, per size regime and transport class.
    time_error_quantiles: Mapping[str, Mapping[str, tuple[float, float]]] = _param(
        "time_error_quantiles", _BAND
    )
    #: Fraction of held-out measurements the band is meant to hold (the quantiles' spread).
    coverage: float = _param("coverage", _FRACTION)


_GROUPS: dict[str, type[Any]] = {
    "nccl_tuner": NcclTuner,
    "nccl_runtime": NcclRuntime,
    "pipeline": Pipeline,
    "calibrated": Calibrated,
    "assumptions": Assumptions,
    "gpu": Gpu,
    "reporting": Reporting,
    "error_band": ErrorBand,
}
#: group -> YAML key -> (attribute, kind)
_SPECS: dict[str, dict[str, tuple[str, _Kind]]] = {
    group: {f.metadata["key"]: (f.name, f.metadata["kind"]) for f in fields(cls)}
    for group, cls in _GROUPS.items()
}
_TOP_KEYS = ("schema", *_GROUPS, "tuner_view")


@dataclass(frozen=True)
class Provenance:
    """Where one parameter's value comes from.

    ``kind`` is ``source`` (a public source), ``derived_by`` (a calibration function, reading
    ``rows``) or ``assumed`` (the reason); ``origin`` is the file (and line) that set it, and
    ``previous`` what it replaced when an override set it.
    """

    kind: Literal["source", "derived_by", "assumed"]
    text: str
    origin: str
    rows: str | None = None
    previous: Provenance | None = None


def _check_entry(
    kind: _Kind, entry: object, loc: _Loc, problems: _Problems, *, partial: bool
) -> None:
    if not isinstance(entry, Mapping):
        problems.append(
            (
                loc,
                "write a parameter as a mapping: {value: ..., source: ...} (or derived_by/assumed)",
            )
        )
        return
    for key in entry:
        if key not in _ENTRY_KEYS:
            problems.append(((*loc, key), f"unknown key {key!r}{_hint(key, _ENTRY_KEYS)}"))
    if "value" not in entry:
        problems.append((loc, "missing value"))
    else:
        kind.parse(entry["value"], (*loc, "value"), problems, partial=partial)
    given = [k for k in _PROVENANCE_KEYS if k in entry]
    if not given:
        problems.append(
            (loc, "needs source:, derived_by: or assumed: (where the value comes from)")
        )
    elif len(given) > 1:
        problems.append(((*loc, given[1]), f"give one of {', '.join(given)}, not several"))
    for key in (*given, "rows"):
        text = entry.get(key)
        if key in entry and (not isinstance(text, str) or not text.strip()):
            problems.append(((*loc, key), f"{key} must be a non-empty text"))
    if "derived_by" in entry:
        if isinstance(entry["derived_by"], str) and not _DERIVED_BY.match(entry["derived_by"]):
            problems.append(
                ((*loc, "derived_by"), "derived_by names a function: path/to/script.py::function")
            )
        if "rows" not in entry:
            problems.append((loc, "derived_by needs rows: (the data the derivation reads)"))
    elif "rows" in entry:
        problems.append(((*loc, "rows"), "rows goes with derived_by only"))


def _check_groups(data: Mapping[Any, Any], loc: _Loc, problems: _Problems, *, full: bool) -> None:
    """Check the groups of a file (``loc`` empty) or of its tuner_view section; ``full`` when
    every parameter and every table cell must be there (the built-in file)."""
    for group, entries in data.items():
        specs = _SPECS.get(group) if isinstance(group, str) else None
        if specs is None:
            choices = list(_GROUPS) if loc else list(_TOP_KEYS)
            problems.append(((*loc, group), f"unknown key {group!r}{_hint(group, choices)}"))
            continue
        if not isinstance(entries, Mapping):
            problems.append(((*loc, group), f"{group} must be a mapping of parameters"))
            continue
        for name, entry in entries.items():
            spec = specs.get(name) if isinstance(name, str) else None
            if spec is None:
                problems.append(
                    ((*loc, group, name), f"unknown parameter {name!r}{_hint(name, specs)}")
                )
                continue
            _check_entry(spec[1], entry, (*loc, group, name), problems, partial=not full)
        missing = [name for name in specs if name not in entries]
        if full and missing:
            problems.append(((*loc, group), f"missing {', '.join(missing)}"))


def _check_document(data: object, *, full: bool) -> _Problems:
    """Every problem of one file's data; ``full`` for the built-in file (every key present)."""
    problems: _Problems = []
    if not isinstance(data, Mapping):
        return [((), f"a cost-parameter file is a mapping: schema: {SCHEMA}, then groups")]
    if data.get("schema") != SCHEMA:
        # located at the key, whose path already reads "schema:": say what was found
        if "schema" in data:
            found = data["schema"]
            if isinstance(found, str | int | float):
                said = echo(found)
            elif found is None:
                said = "no text"
            else:
                said = "a mapping" if isinstance(found, Mapping) else "a list"
            problems.append((("schema",), f"{said} is not {SCHEMA!r}, the one this reads"))
        else:
            problems.append(((), f"schema: {SCHEMA} is required"))
    groups = {k: v for k, v in data.items() if k not in ("schema", "tuner_view")}
    _check_groups(groups, (), problems, full=full)
    if full:
        missing = [g for g in _GROUPS if g not in data]
        if missing:
            problems.append(((), f"missing group {', '.join(missing)}"))
    overlay = data.get("tuner_view")
    if "tuner_view" in data:
        if not isinstance(overlay, Mapping):
            problems.append((("tuner_view",), "tuner_view must be a mapping of groups"))
        else:
            _check_groups(overlay, ("tuner_view",), problems, full=False)
    return problems


def _deep_merge(old: object, new: object) -> object:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        merged = dict(old)
        for key, value in new.items():
            merged[key] = _deep_merge(old.get(key), value)
        return merged
    return new


def _merge_groups(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with each entry of ``override`` laid over it: values merge cell by cell, the
    provenance of an entry replaces the previous one whole."""
    merged = {group: dict(entries) for group, entries in base.items()}
    for group, entries in override.items():
        target = merged.setdefault(group, {})
        for name, entry in entries.items():
            old = target.get(name, {})
            new = {k: v for k, v in old.items() if k not in (*_PROVENANCE_KEYS, "rows")}
            new.update({k: v for k, v in entry.items() if k != "value"})
            new["value"] = _deep_merge(old.get("value"), entry["value"])
            target[name] = new
    return merged


def _dotted(groups: Mapping[str, Any]) -> list[str]:
    return [f"{group}.{name}" for group, entries in groups.items() for name in entries]


def _provenances(
    groups: Mapping[str, Any],
    prefix: _Loc,
    label: str,
    locate: Locator | None,
    previous: Mapping[str, Provenance],
) -> dict[str, Provenance]:
    """The provenance of every entry of ``groups`` (checked: each has exactly one kind)."""
    out: dict[str, Provenance] = {}
    for group, entries in groups.items():
        for name, entry in entries.items():
            kind: Literal["source", "derived_by", "assumed"] = next(
                k for k in _PROVENANCE_KEYS if k in entry
            )
            line = locate((*prefix, group, name))[0] if locate is not None else None
            dotted = f"{group}.{name}"
            out[dotted] = Provenance(
                kind=kind,
                text=entry[kind],
                origin=f"{label}:{line}" if line is not None else label,
                rows=entry.get("rows"),
                previous=previous.get(dotted),
            )
    return out


def _raise(problems: _Problems, label: str, locate: Locator | None) -> None:
    located = []
    for loc, message in problems:
        line, col = locate(loc) if locate is not None else (None, None)
        where = ".".join(str(part) for part in loc if part != "value")
        text = f"{where}: {message}" if where else message
        located.append(ValidationProblem(label, line, col, text))
    raise CatalogueError(located)


#: (group, its document's repr) -> the group built from it: an override changes a group or two,
#: and every other group's values, parsed again with their units, come out the same (calibrate
#: lays each fitted value and each run's release over the parameters at every fit step: the
#: parsing had been half its time). The groups are frozen; bounded by clearing.
_BUILT: dict[tuple[str, str], Any] = {}


def _plain(data: Any) -> bool:
    """Whether ``data`` is made of builtin dicts, lists, strings, numbers, booleans and None
    alone: a document whose repr is its content (a Mapping class without a repr of its own
    shows its address, which a later document may reuse)."""
    if isinstance(data, dict):
        return all(type(k) is str and _plain(v) for k, v in data.items())
    if isinstance(data, list | tuple):
        return all(_plain(v) for v in data)
    return data is None or type(data) in (str, int, float, bool)


def _build_groups(groups: Mapping[str, Any]) -> dict[str, Any]:
    problems: _Problems = []
    built: dict[str, Any] = {}
    for group, cls in _GROUPS.items():
        document = groups[group]
        cache_key = (group, repr(document)) if type(document) is dict and _plain(document) else None
        known = _BUILT.get(cache_key) if cache_key is not None else None
        if known is not None:
            built[group] = known
            continue
        before = len(problems)
        values = {
            attr: kind.parse(groups[group][key]["value"], (group, key), problems, partial=False)
            for key, (attr, kind) in _SPECS[group].items()
        }
        built[group] = cls(**values)
        if len(problems) == before and cache_key is not None:
            if len(_BUILT) >= 512:
                _BUILT.clear()
            _BUILT[cache_key] = built[group]
    if problems:  # pragma: no cover - every file is checked before it is merged
        _raise(problems, "cost parameters", None)
    return built


@dataclass(frozen=True)
class CostParams:
    """Every constant of the cost model, by group; built with :meth:`from_mapping`.

    ``provenance`` maps each parameter (``"nccl_tuner.base_latency"``) to where its value comes
    from; ``origins`` lists the files applied, built-in first. The physical instance is what
    costs are computed with; :meth:`tuner_view` returns what NCCL's own tuner assumes.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    nccl_tuner: NcclTuner
    nccl_runtime: NcclRuntime
    pipeline: Pipeline
    calibrated: Calibrated
    assumptions: Assumptions
    gpu: Gpu
    reporting: Reporting
    error_band: ErrorBand
    provenance: Mapping[str, Provenance] = field(compare=False, repr=False)
    origins: tuple[str, ...] = field(compare=False)
    is_tuner_view: bool = False
    #: The merged mapping these values were built from (the layout of data/cost_params.yaml).
    document: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: The tuner view (:meth:`tuner_view`), built once with this instance; compared by value,
    #: so equal parameters price and choose the same (an NCCL release's, whose physical values
    #: are the built-in ones, had equalled them though it chooses otherwise)
    _tuner: CostParams | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        """Where its values come from, in one line: 'CostParams(data/cost_params.yaml + NCCL
        2.21.5)', each origin by its name (a release's is followed by a sentence on what it
        changes); the dataclass's repr of every constant ran to 6,500 characters."""
        names = " + ".join(origin.partition(": ")[0] for origin in self.origins)
        view = ", NCCL's tuner view" if self.is_tuner_view else ""
        return f"{type(self).__name__}({names}{view})"

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, Any],
        *,
        label: str = "cost parameters",
        locate: Locator | None = None,
    ) -> CostParams:
        """Build from a complete mapping: every group, parameter and table cell, each entry
        with its provenance.

        Raises :class:`~ibcalc.errors.CatalogueError` listing every problem, each located with
        ``locate`` (``file:line:col`` when the mapping came from the file named ``label``).
        """
        problems = _check_document(data, full=True)
        if problems:
            _raise(problems, label, locate)
        data = copy.deepcopy(data)  # the document kept must not change with the caller's data
        groups = {g: data[g] for g in _GROUPS}
        overlay = data.get("tuner_view") or {}
        provenance = _provenances(groups, (), label, locate, {})
        overlay_provenance = _provenances(overlay, ("tuner_view",), label, locate, provenance)
        return cls._assemble(groups, overlay, provenance, overlay_provenance, (label,))

    @classmethod
    def _assemble(
        cls,
        groups: Mapping[str, Any],
        overlay: Mapping[str, Any],
        provenance: Mapping[str, Provenance],
        overlay_provenance: Mapping[str, Provenance],
        origins: tuple[str, ...],
    ) -> CostParams:
        tuner_groups = _merge_groups(groups, overlay)
        tuner = cls(
            **_build_groups(tuner_groups),
            provenance=MappingProxyType({**provenance, **overlay_provenance}),
            origins=origins,
            is_tuner_view=True,
            document=MappingProxyType({"schema": SCHEMA, **tuner_groups}),
        )
        return cls(
            **_build_groups(groups),
            provenance=MappingProxyType(dict(provenance)),
            origins=origins,
            document=MappingProxyType({"schema": SCHEMA, **groups, "tuner_view": overlay}),
            _tuner=tuner,
        )

    def with_overrides(
        self,
        data: Mapping[str, Any],
        *,
        label: str = "cost parameters",
        locate: Locator | None = None,
    ) -> CostParams:
        """A copy with the entries of a partial mapping (an override file) laid over these.

        Only the keys given change: a table may give some of its cells (a list is replaced
        whole), and a ``tuner_view`` section changes what the tuner view lays over the values.
        Every entry needs its value and its provenance. Raises
        :class:`~ibcalc.errors.CatalogueError` with every problem, located with ``locate``.
        """
        problems = _check_document(data, full=False)
        if problems:
            _raise(problems, label, locate)
        data = copy.deepcopy(data)
        given = {g: data[g] for g in _GROUPS if g in data}
        overlay_given = data.get("tuner_view") or {}
        overlay = self.document.get("tuner_view") or {}
        provenance = {
            **self.provenance,
            **_provenances(given, (), label, locate, self.provenance),
        }
        seen_by_tuner = self.tuner_view().provenance
        overlay_provenance = {key: seen_by_tuner[key] for key in _dotted(overlay)}
        overlay_provenance.update(
            _provenances(overlay_given, ("tuner_view",), label, locate, seen_by_tuner)
        )
        return type(self)._assemble(
            _merge_groups({g: self.document[g] for g in _GROUPS}, given),
            _merge_groups(overlay, overlay_given),
            provenance,
            overlay_provenance,
            (*self.origins, label),
        )

    @functools.cached_property
    def tuner_sources(self) -> str:
        """Where the tuner view's constants come from: the built-in file's tuning.cc (its base
        latencies' source, up to the first comma), then every constant a release or an override
        laid over the tuner view, by source (``hop_latency from NVIDIA/nccl tag v2.27.5-1,
        src/graph/tuning.cc`` under ``--nccl-version 2.27``, which changes only the hops).
        Worked out once per instance: every estimate names it."""
        seen = self.provenance.get("nccl_tuner.base_latency")
        base = "" if seen is None else seen.text.split(",")[0]
        builtin = self.origins[0]
        laid: dict[str, list[str]] = {}
        for key, where in self.tuner_view().provenance.items():
            if key.startswith("nccl_tuner.") and not where.origin.startswith(builtin):
                laid.setdefault(where.text.split(" (")[0], []).append(
                    key.removeprefix("nccl_tuner.")
                )
        # a release's missing algorithms are their own clause ("NCCL 2.21.5 predates pat"; it
        # had read "algorithms from NCCL 2.21.5 predates pat")
        parts = [
            src if " predates " in src else f"{', '.join(keys)} from {src}"
            for src, keys in laid.items()
        ]
        return base + (", except " + "; ".join(parts) if parts else "")

    def tuner_view(self) -> CostParams:
        """What NCCL's own tuner assumes: these values with the ``tuner_view`` section laid over
        them (NCCL's Simple transport count at every size, no LL network limit). Built once,
        with this instance; the tuner view of the tuner view is itself."""
        return self._tuner if self._tuner is not None else self

    def flat(self) -> dict[str, Any]:
        """Every value by its dotted name (``"nccl_tuner.base_latency"``), in engine units."""
        out: dict[str, Any] = {}
        for group in _GROUPS:
            values = getattr(self, group)
            for key, (attr, _kind) in _SPECS[group].items():
                out[f"{group}.{key}"] = getattr(values, attr)
        return out
