"""Read the JSON result files of newer nccl-tests (``-J`` / ``--output_file x.json``).

No real sample was available, so the reader accepts the shapes such a file can reasonably take
and matches keys loosely (case, ``_``, ``-`` and ``#`` are ignored: ``out_of_place``,
``outOfPlace`` and ``out-of-place`` are the same key):

* a top-level object with a ``results`` (or ``rows``/``data``/``measurements``) list, plus
  optional metadata (``collective``/``test``/``name``, ``nranks``, ``devices`` list with
  ``hostname`` and ``name``, ``config`` object with ``nThreads``, ``nGpus``, ``minBytes``,
  ``maxBytes``, ``stepFactor``, ``warmupIters``, ``iters``; ``nccl_version``,
  ``nccl_tests_version``, ``avg_busbw``, ``out_of_bounds``);
* a top-level object with a ``runs``/``tests`` list of such objects, or a top-level list of them;
* a top-level list of result objects.

A result object has ``size``, ``count``, ``type``, ``redop``, ``root`` and its timings as
``out_of_place``/``in_place`` sub-objects (``time`` in us, ``algbw``, ``busbw``, ``wrong``),
as flat prefixed keys (``oop_time``, ``in_place_busbw`` ...), as flat unprefixed keys (one
timing: out-of-place), or as one object per placement with a boolean ``in_place`` or a
``placement`` string, consecutive objects of the same size being paired.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ibcalc.cluster.spec import MAX_GPUS_PER_NODE as MAX_GPUS
from ibcalc.errors import LogParseError
from ibcalc.logs.infer import (
    Device,
    RunFacts,
    nccl_test_name,
    normalize_dtype,
    normalize_version,
    version_from_code,
)
from ibcalc.logs.records import Row, Timing
from ibcalc.textsafe import surrogates_escaped

__all__ = ["parse_json"]

_RESULTS = ("results", "result", "rows", "data", "measurements")
_RUNS = ("runs", "tests", "benchmarks", "collectives")
_OOP = ("outofplace", "oop", "out")
_IP = ("inplace", "ip", "in")
_SIZE = ("size", "sizebytes", "bytes", "messagesize", "nbytes")
_COUNT = ("count", "elements", "nelem", "nelems", "numelements")
_TYPE = ("type", "dtype", "datatype")
_REDOP = ("redop", "reduction", "reductionop", "op")
_TIME = ("time", "timeus", "latency", "latencyus", "avgtime", "avgtimeus")
_ALGBW = ("algbw", "algbwgbps", "algbandwidth", "algorithmbandwidth")
_BUSBW = ("busbw", "busbwgbps", "busbandwidth")
_WRONG = ("wrong", "nwrong", "numwrong", "wrongelements", "errors")
_ERROR = ("error", "maxerror")
_LIMIT = 2**64  # nccl-tests sizes and counts are size_t
_CONFIG = ("config", "configuration", "parameters", "params", "args", "options")


def _norm(key: object) -> str:
    return re.sub(r"[^a-z0-9]", "", str(key).lower())


def _keys(obj: dict[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        out.setdefault(_norm(key), value)
    return out


def _get(obj: dict[str, Any], aliases: tuple[str, ...]) -> Any:
    for alias in aliases:
        if alias in obj:
            return obj[alias]
    return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) > _LIMIT:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) <= _LIMIT else None
    number = _num(value)
    if number is None or number != int(number):
        return None
    return int(number)


def _signed(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().startswith("-"):
        inner = _whole(value.strip()[1:])
        return None if inner is None else -inner
    return _whole(value)


def _timing(obj: dict[str, Any]) -> Timing | None:
    time_us, algbw, busbw = _num(_get(obj, _TIME)), _num(_get(obj, _ALGBW)), _num(_get(obj, _BUSBW))
    if time_us is None or algbw is None or busbw is None:
        return None
    raw_wrong = _get(obj, _WRONG)
    wrong = _whole(raw_wrong) if raw_wrong is not None else None
    raw_error = _get(obj, _ERROR)
    max_error = _num(raw_error) if raw_error is not None else None
    return Timing(
        time_us=time_us, algbw_GBps=algbw, busbw_GBps=busbw, wrong=wrong, max_error=max_error
    )


def _prefixed(obj: dict[str, Any], prefixes: tuple[str, ...]) -> dict[str, Any] | None:
    for prefix in prefixes:
        sub = {k[len(prefix) :]: v for k, v in obj.items() if k.startswith(prefix) and k != prefix}
        if _get(sub, _TIME) is not None:
            return sub
    return None


def _sub(obj: dict[str, Any], aliases: tuple[str, ...]) -> dict[str, Any] | None:
    value = _get(obj, aliases)
    if isinstance(value, dict):
        return _keys(value)
    return _prefixed(obj, aliases)


def _placement(obj: dict[str, Any]) -> bool | None:
    """True for an in-place-only result object, False for out-of-place-only, None otherwise."""
    flag = _get(obj, ("inplace", "isinplace"))
    if isinstance(flag, bool):
        return flag
    if isinstance(flag, int) and flag in (0, 1):
        return bool(flag)
    place = obj.get("placement")
    if isinstance(place, str):
        return _norm(place) in _IP
    return None


class _Results:
    def __init__(self, facts: RunFacts) -> None:
        self.facts = facts
        self.pending: tuple[int, dict[str, Any], Timing, bool] | None = None

    def _emit(self, index: int, obj: dict[str, Any], oop: Timing, ip: Timing | None) -> None:
        f = self.facts
        size = _whole(_get(obj, _SIZE))
        count = _whole(_get(obj, _COUNT))
        if size is None or count is None:
            f.notes.append(f"result {index} has no usable size or count, dropped")
            return
        raw_type = _get(obj, _TYPE)
        raw_redop = _get(obj, _REDOP)
        raw_root = _get(obj, ("root",))
        root = _signed(raw_root) if raw_root is not None else None
        if raw_root is not None and root is None:
            f.notes.append(f"result {index} has an unreadable root, dropped")
            return
        if size == 0:
            f.zero_rows.append(index)
            return
        f.rows.append(
            Row(
                size_bytes=size,
                count=count,
                dtype=normalize_dtype(raw_type) if isinstance(raw_type, str) else None,
                redop=raw_redop.lower() if isinstance(raw_redop, str) else None,
                root=root,
                oop=oop,
                ip=ip,
                line=index,
            )
        )

    def flush(self) -> None:
        if self.pending is not None:
            index, obj, timing, in_place = self.pending
            self.pending = None
            if in_place:
                self.facts.notes.append(f"result {index} has only an in-place timing, dropped")
            else:
                self._emit(index, obj, timing, None)

    def add(self, index: int, raw: Any) -> None:
        if not isinstance(raw, dict):
            self.facts.notes.append(f"result {index} is not an object, dropped")
            return
        obj = _keys(raw)
        place = _placement(obj)
        if place is not None:
            timing = _timing(_sub(obj, _OOP if not place else _IP) or obj)
            if timing is None:
                self.facts.notes.append(f"result {index} has no usable timing, dropped")
                return
            if self.pending is not None:
                p_index, p_obj, p_timing, p_in = self.pending
                if p_in != place and _get(p_obj, _SIZE) == _get(obj, _SIZE):
                    self.pending = None
                    pair = (p_timing, timing) if place else (timing, p_timing)
                    self._emit(p_index, p_obj, pair[0], pair[1])
                    return
                self.flush()
            self.pending = (index, obj, timing, place)
            return
        self.flush()
        oop_obj = _sub(obj, _OOP)
        ip_obj = _sub(obj, _IP)
        oop = _timing(oop_obj) if oop_obj is not None else _timing(obj)
        ip = _timing(ip_obj) if ip_obj is not None else None
        if oop is None or (ip_obj is not None and ip is None):
            self.facts.notes.append(f"result {index} has no usable timing, dropped")
            return
        self._emit(index, obj, oop, ip)


def _meta(facts: RunFacts, meta: dict[str, Any]) -> None:
    config = _get(meta, _CONFIG)
    merged = dict(meta)
    if isinstance(config, dict):
        for key, value in _keys(config).items():
            merged.setdefault(key, value)
    for test_keys in (("collective", "test", "testname", "benchmark", "binary"), ("name",)):
        value = _get(merged, test_keys)
        if (
            isinstance(value, str)
            and (name := nccl_test_name(value.rsplit("/", 1)[-1])) is not None
        ):
            facts.command_collective = name
            facts.command_evidence = f"JSON key naming the test: {value[:60]!r}"
            break
    ranks = _get(merged, ("nranks", "ranks", "worldsize", "numranks", "nrank"))
    if _whole(ranks) is not None and (_whole(ranks) or 0) > 0:
        facts.explicit_ranks = _whole(ranks)
    devices = _get(merged, ("devices", "gpus", "ranks"))
    if isinstance(devices, list):
        # every entry, as the text reader reads every 'Rank' line (the file's size bounds them):
        # a list cut at 100,000 had overruled the file's own nranks of 100,008 (review BP)
        for i, dev in enumerate(devices):
            if not isinstance(dev, dict):
                continue
            d = _keys(dev)
            host = _get(d, ("hostname", "host", "node"))
            name = _get(d, ("name", "devicename", "gpu", "model", "device"))
            rank = _whole(_get(d, ("rank",)))
            if not isinstance(host, str):
                continue
            facts.devices.append(
                Device(
                    rank=i if rank is None else rank,
                    host=host,
                    name=name if isinstance(name, str) else "",
                    line=i + 1,
                )
            )
        if any(d.rank != i for i, d in enumerate(facts.devices)):
            facts.devices_elided = True
    int_fields: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("threads", ("nthreads", "nthread", "threads")),
        ("gpus_per_process", ("ngpus", "gpuspprocess", "gpusperprocess")),
        ("min_bytes", ("minbytes", "minimumbytes")),
        ("max_bytes", ("maxbytes", "maximumbytes")),
        ("step_factor", ("stepfactor",)),
        ("step_bytes", ("stepbytes",)),
        ("warmup_iters", ("warmupiters", "warmup")),
        ("iters", ("iters", "iterations", "niters")),
        ("out_of_bounds", ("outofbounds", "outofboundsvalues", "oob")),
    )
    for attr, aliases in int_fields:
        value = _whole(_get(merged, aliases))
        if attr == "gpus_per_process" and value is not None and not 1 <= value <= MAX_GPUS:
            facts.notes.append(
                f"nGpus {value} is no count of GPUs a process drives (1-{MAX_GPUS}): ignored"
            )
            continue
        if value is not None:
            setattr(facts, attr, value)
    avg = _num(_get(merged, ("avgbusbw", "averagebusbandwidth", "avgbusbandwidth", "busbwavg")))
    facts.avg_busbw_GBps = avg
    tests = _get(merged, ("nccltestsversion", "rccltestsversion", "testsversion", "version"))
    if isinstance(tests, str):
        facts.tests_version = normalize_version(tests)
    library = _get(merged, ("library",))
    if isinstance(library, str) and library.lower() in ("nccl", "rccl"):
        facts.tests_library = library.lower()
    for key, attr in (("ncclversion", "nccl_version_line"), ("rcclversion", "rccl_version_line")):
        value = merged.get(key)
        if isinstance(value, str):
            setattr(facts, attr, normalize_version(value))
        elif (code := _whole(value)) is not None:
            facts.library_code = code
            facts.library_code_text = f"{key}={code}"
            if version_from_code(code) is None:
                facts.library_code = None


def _run(doc: dict[str, Any], results: list[Any], outer: dict[str, Any], end: int) -> RunFacts:
    facts = RunFacts(line_start=1, line_end=end, has_trailer=True, from_json=True)
    _meta(facts, outer)
    _meta(facts, doc)
    reader = _Results(facts)
    for index, raw in enumerate(results[:1_000_000], start=1):
        reader.add(index, raw)
    reader.flush()
    return facts


#: A surrogate as a JSON escape (``\\ud800``) or as a character (undecodable input bytes).
_SURROGATE_TEXT = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def _without_surrogates(doc: Any) -> Any:
    """``doc`` with every string key and value through
    :func:`~ibcalc.textsafe.surrogates_escaped` (iteratively: a document
    json.loads took may be nested deeper than this function could recurse)."""
    if isinstance(doc, str):
        return surrogates_escaped(doc)
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            node.clear()
            for key, value in items:
                node[surrogates_escaped(key)] = (
                    surrogates_escaped(value) if isinstance(value, str) else value
                )
                if isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    node[i] = surrogates_escaped(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
    return doc


def parse_json(text: str, *, source: str) -> tuple[list[RunFacts], list[str]]:
    """Read an nccl-tests JSON document into RunFacts (one per run) and log-level notes.

    Raises :class:`~ibcalc.errors.LogParseError` for invalid JSON or JSON without results.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        # a string left open, or an error at the very end: the text stops inside the document
        # (nccl-tests -J output of a run killed while writing it); json's own message for an open
        # string is cut where its position was ('Unterminated string starting at')
        if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()):
            raise LogParseError(
                f"{source}:{exc.lineno}: not valid JSON: the text ends inside the document, "
                "as a file cut short does"
            ) from None
        raise LogParseError(f"{source}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise LogParseError(f"{source}: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise LogParseError(f"{source}: unreadable JSON ({str(exc)[:80]})") from None
    if _SURROGATE_TEXT.search(text):  # most logs have none: no walk over the document
        doc = _without_surrogates(doc)
    end = text.count("\n") + 1
    runs: list[RunFacts] = []
    notes: list[str] = []
    candidates: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if isinstance(doc, list):
        if doc and all(isinstance(x, dict) and _get(_keys(x), _SIZE) is not None for x in doc):
            runs.append(_run({}, doc, {}, end))
        else:
            candidates = [({}, _keys(x)) for x in doc if isinstance(x, dict)]
    elif isinstance(doc, dict):
        top = _keys(doc)
        nested = _get(top, _RUNS)
        if isinstance(_get(top, _RESULTS), list):
            candidates = [({}, top)]
        elif isinstance(nested, list):
            outer = {k: v for k, v in top.items() if k not in _RUNS}
            candidates = [(outer, _keys(x)) for x in nested if isinstance(x, dict)]
    for outer, obj in candidates:
        results = _get(obj, _RESULTS)
        if isinstance(results, list):
            runs.append(_run(obj, results, outer, end))
    kept: list[RunFacts] = []
    problems: list[str] = []
    for number, facts in enumerate(runs, start=1):
        if facts.rows:
            kept.append(facts)
        else:
            notes.append(f"JSON run {number} has no usable results; skipped")
            problems.extend(facts.notes)
    if not kept:
        kind = _ibcalc_kind(doc)
        if kind is not None:  # ibcalc's own report given back: say so, not "no usable timing"
            raise LogParseError(f"{source}: {kind}, not nccl-tests output")
        first = f" ({problems[0]})" if problems else ""
        raise LogParseError(f"{source}: JSON without nccl-tests results{first}")
    return kept, notes


def _ibcalc_kind(doc: object) -> str | None:
    """How a message names ``doc`` when it is a file ibcalc writes (by its schema line: an
    nccl-check or calibration report), else None."""
    from ibcalc.yamlio import FILE_KINDS

    if not isinstance(doc, dict):
        return None
    for spec in FILE_KINDS.values():
        schema = doc.get(spec.schema_key)
        if isinstance(schema, str) and schema.startswith(spec.schemas):
            return spec.what
    return None
