"""Read YAML safely, keep line/column marks, and turn validation errors into file:line:col.

Only the safe loaders are used, through :class:`SafeLoader` (and :class:`CSafeLoader` where
libyaml is there): ``yaml.SafeLoader`` with YAML 1.1's surprising implicit types taken out, so
that a plain scalar means what it reads as. ``2:1`` and ``1:30`` (base-60 integers in YAML 1.1,
121 and 90), ``0x10``, ``017``, ``0b11``, ``0o17`` and ``1_000`` (hex, octal, binary, grouped
integers), ``yes``/``no``/``on``/``off`` (booleans), ``.inf``/``.nan`` and dates stay strings;
the models then read a ratio such as ``2:1`` or refuse the value with its key and position.
Numbers are plain decimal integers (``8``, ``-3``) and decimals with a point (``0.94``,
``1.5e+3``); booleans are ``true``/``false``; null is ``null``, ``~`` or nothing.

Hostile input is refused before it can cost much: anything but a regular file (a FIFO, a
device, a directory), files over a size limit (the limit applies while reading, so
``/dev/zero`` is never read without end), binary files, invalid UTF-8, tabs used for
indentation, more YAML nodes than a budget (counted while parsing, before anything is built),
alias expansion beyond that budget (billion laughs), nesting deeper than a limit, duplicate keys,
python tags, lone UTF-16 surrogates written as ``"\\ud800"`` escapes (at the key or value that
holds one; a pair is joined into its character, as JSON means it).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ibcalc.errors import InputFileError, ValidationProblem, WrongTypeError
from ibcalc.fileio import ReadRefused, read_regular
from ibcalc.textsafe import (
    closest_hint,
    has_surrogate,
    join_surrogate_pairs,
    printable,
    quoted_names,
    shown,
)

__all__ = [
    "FILE_KINDS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "CSafeLoader",
    "Document",
    "FileKind",
    "SafeLoader",
    "TrustedDocument",
    "input_paths",
    "load_yaml",
    "other_kind",
    "safe_load",
    "trusted_document",
    "validate",
    "wrong_kind_problem",
]


def input_paths(given: object, *, argument: str, each: str) -> list[str | Path]:
    """``given`` as a list of file names: one name (str, bytes or a path object) is one file,
    not a sequence of one-letter names, and a name in bytes is decoded as the file system
    does (errors then print it as text, not ``b'...'``). Anything that is not names raises
    :class:`~ibcalc.errors.WrongTypeError` naming the ``argument`` (or ``each`` file): None and
    5 had failed as "not iterable", a bytes name as a bare TypeError (two reviews)."""
    if isinstance(given, str | bytes | os.PathLike):
        given = [given]
    if not isinstance(given, Iterable) or isinstance(given, bytearray | memoryview):
        raise WrongTypeError(
            f"{argument} must be a path or paths (str, bytes or Path), not {type(given).__name__}"
        )
    names: list[str | Path] = []
    for name in given:
        if not isinstance(name, str | bytes | os.PathLike):
            raise WrongTypeError(f"{each} must be a str, bytes or Path, not {type(name).__name__}")
        raw = os.fspath(name)
        # a str as it was given (a Path would tidy './x.yaml' in the errors that name it)
        names.append(os.fsdecode(raw) if isinstance(raw, bytes) else raw)
    return names


MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
#: Most YAML nodes in one file: 30 times the built-in catalogue (3,200 nodes in 103 KB), and few
#: enough that a file at the limit parses in well under a second.
MAX_NODES = 100_000
#: Above this size a syntax error found by libyaml is reported as libyaml words it; below it the
#: pure-Python parser runs again for its (more precise) wording.
_C_ERRORS_ABOVE_BYTES = 512 * 1024


# --- what a plain scalar means -------------------------------------------------------------

#: Implicit types kept from YAML 1.1 (everything else a plain scalar could become is a string).
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+][0-9]+)?$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_KEPT: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("tag:yaml.org,2002:bool", _BOOL, "tTfF"),
    ("tag:yaml.org,2002:int", _INT, "-+0123456789"),
    ("tag:yaml.org,2002:float", _FLOAT, "-+0123456789."),
    ("tag:yaml.org,2002:null", _NULL, "~nN"),
    # kept so that a merge key is recognised, and refused (`<<: *base` hides where values come from)
    ("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), "<"),
)


def _resolvers() -> dict[Any, list[tuple[str, re.Pattern[str]]]]:
    table: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}
    for tag, pattern, first in _KEPT:
        for char in first:
            table.setdefault(char, []).append((tag, pattern))
    table.setdefault("", []).append(("tag:yaml.org,2002:null", _NULL))  # the empty scalar
    return table


class SafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` whose plain scalars are only decimal numbers, true/false and null.

    YAML 1.1 reads ``2:1`` as 121, ``0x10`` as 16, ``017`` as 15, ``no`` as False and ``.nan``
    as a float; here they are strings, which the models read (a ratio) or refuse by name.
    """

    yaml_implicit_resolvers = _resolvers()


if hasattr(yaml, "CSafeLoader"):

    class CSafeLoader(yaml.CSafeLoader):
        """libyaml's safe loader with the same plain-scalar rules as :class:`SafeLoader`."""

        yaml_implicit_resolvers = _resolvers()

    _FAST: type[Any] | None = CSafeLoader
else:  # pragma: no cover - PyYAML without libyaml
    CSafeLoader = SafeLoader  # type: ignore[misc,assignment]
    _FAST = None


_TAG = "tag:yaml.org,2002:"
_STR_TAG, _MAP_TAG, _SEQ_TAG = f"{_TAG}str", f"{_TAG}map", f"{_TAG}seq"


class _TrustedLoader(CSafeLoader):
    """:class:`CSafeLoader` for the shipped files, resolving plain scalars as it does (same
    table, same order) without PyYAML's generic resolver: no path resolvers, no wildcards."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, pattern in self.yaml_implicit_resolvers.get(value[:1], ()):
                    if pattern.match(value):
                        return tag
            return _STR_TAG
        return _MAP_TAG if kind is yaml.MappingNode else _SEQ_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers: nothing to track."""

    def ascend_resolver(self) -> None:
        """No path resolvers: nothing to track."""


class _NotPlain(Exception):
    """A node :func:`_plain_data` leaves to PyYAML's constructor."""


def _null(value: str) -> None:
    if not _NULL.match(value):
        raise _NotPlain
    return None


def _bool(value: str) -> bool:
    if not _BOOL.match(value):
        raise _NotPlain
    return value.lower() == "true"


def _int(value: str) -> int:
    if not _INT.match(value):
        raise _NotPlain
    return int(value)


def _float(value: str) -> float:
    if not _FLOAT.match(value):
        raise _NotPlain
    return float(value)


#: How a plain scalar of each tag becomes its value, as SafeConstructor makes it for the forms
#: the resolver gives that tag (another form, an explicit ``!!int 0x10``, is left to it).
_SCALARS: dict[str, Callable[[str], Any]] = {
    _STR_TAG: str,
    f"{_TAG}null": _null,
    f"{_TAG}bool": _bool,
    f"{_TAG}int": _int,
    f"{_TAG}float": _float,
}


def _plain_data(node: yaml.Node, built: dict[int, Any]) -> Any:
    """``node`` as SafeConstructor builds it, for the nodes of plain data (str, int, float,
    bool, null, mappings, sequences); :class:`_NotPlain` for anything else (a merge key, another
    tag). A node met again (an alias) is the same object, as SafeConstructor has it."""
    tag = node.tag
    scalar = _SCALARS.get(tag)
    if scalar is not None:
        return scalar(node.value)
    if id(node) in built:
        return built[id(node)]
    if tag == _MAP_TAG:
        mapping: dict[Any, Any] = {}
        built[id(node)] = mapping
        for key_node, value_node in node.value:
            if key_node.tag == f"{_TAG}merge":
                raise _NotPlain
            mapping[_plain_data(key_node, built)] = _plain_data(value_node, built)
        return mapping
    if tag == _SEQ_TAG:
        items: list[Any] = []
        built[id(node)] = items
        items.extend(_plain_data(item, built) for item in node.value)
        return items
    raise _NotPlain


def safe_load(text: str) -> Any:
    """Parse trusted ``text`` (a file shipped with the package) fast, with the same scalar rules
    as :func:`load_yaml`, and without positions.

    libyaml composes the nodes; they are turned into data directly (about 1.6x as fast as
    PyYAML's constructor over the built-in catalogue), by PyYAML's constructor where a node is
    not plain data."""
    if _FAST is None:  # pragma: no cover - PyYAML without libyaml
        return yaml.load(text, Loader=SafeLoader)
    loader = _TrustedLoader(text)
    try:
        node = loader.get_single_node()
    finally:
        loader.dispose()
    if node is None:
        return None
    try:
        return _plain_data(node, {})
    except (_NotPlain, TypeError, RecursionError):
        return yaml.load(text, Loader=_FAST)


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class FileKind:
    """A kind of file ibcalc reads, ships or writes: how a message names it, the schema line it
    carries (``schema_key: <one of schemas>...``) and top-level keys only that kind has."""

    what: str
    schemas: tuple[str, ...]
    keys: tuple[str, ...] = ()
    schema_key: str = "schema"


#: The kinds of file :func:`other_kind` tells apart: the three a user gives (a design file needs
#: no schema line), the tables that ship with ibcalc, and what ibcalc writes with a schema line.
FILE_KINDS: dict[str, FileKind] = {
    "catalogue": FileKind(
        "a catalogue file", ("ibcalc-catalogue/",), ("links", "systems", "storage")
    ),
    "cost-parameter": FileKind(
        "a cost-parameter file",
        ("ibcalc-cost-params/",),
        ("nccl_tuner", "nccl_runtime", "pipeline", "calibrated", "error_band", "tuner_view"),
    ),
    "cluster-design": FileKind(
        "a cluster-design file", ("ibcalc-design/",), ("requirements", "fabric", "nodes")
    ),
    "switches": FileKind(
        "a switch list (the layout of data/switches.yaml)",
        ("ibcalc-switches/",),
        ("switches", "node_cages"),
    ),
    "pairings": FileKind(
        "a pairings table for ibcalc gap (the layout of data/pairings.yaml)", ("ibcalc-pairings/",)
    ),
    "nccl-releases": FileKind(
        "a table of NCCL releases (the layout of data/nccl_releases.yaml)",
        ("ibcalc-nccl-releases/",),
        ("releases",),
    ),
    "json-schema": FileKind(
        "a JSON Schema (what ibcalc schema writes)",
        ("https://json-schema.org/", "http://json-schema.org/"),
        ("$defs",),
        schema_key="$schema",
    ),
    "nccl-check": FileKind(
        "an nccl-check report (ibcalc nccl-check --format json)", ("ibcalc-nccl-check/",)
    ),
    "calibration": FileKind(
        "a calibration report (ibcalc calibrate --format json)", ("ibcalc-calibration/",)
    ),
    # its JSON has no schema line: told by the keys of its summary (fed back to check, it had
    # given seven lines of unknown and missing keys)
    "check": FileKind(
        "a check report (ibcalc check --format json)", ("ibcalc-check/",), ("exit_code", "summary")
    ),
}


def other_kind(data: object, expected: str) -> str | None:
    """The kind of file (a key of :data:`FILE_KINDS`) ``data`` is when it is not ``expected``,
    by its schema line or by keys only that kind has; None when it may be ``expected`` (or is
    no file ibcalc knows). Lets a loader say "a catalogue file, not a cost-parameter file" in
    one line instead of one line per unknown key."""
    if not isinstance(data, dict):
        return None
    for kind, spec in FILE_KINDS.items():
        schema = data.get(spec.schema_key)
        if isinstance(schema, str) and schema.startswith(spec.schemas):
            return None if kind == expected else kind
    if any(key in data for key in FILE_KINDS[expected].keys):
        return None
    for kind, spec in FILE_KINDS.items():
        if kind != expected and any(key in data for key in spec.keys):
            return kind
    return None


def wrong_kind_problem(doc: Document, expected: str) -> ValidationProblem | None:
    """One problem at the file's first line when ``doc`` is another kind of file."""
    kind = other_kind(doc.data, expected)
    if kind is None:
        return None
    message = f"{FILE_KINDS[kind].what}, not {FILE_KINDS[expected].what}"
    return ValidationProblem(doc.path, 1, 1, message)


@dataclass
class Document:
    """A parsed YAML document plus the source position of every mapping key and item."""

    path: str
    data: Any
    marks: dict[tuple[str | int, ...], tuple[int, int]] = field(default_factory=dict)
    #: duplicate keys, when :func:`load_yaml` was asked to report them with the file's other
    #: problems (each mapping keeps the first of its duplicates' values)
    duplicates: list[ValidationProblem] = field(default_factory=list)

    def locate(self, loc: Sequence[str | int]) -> tuple[int | None, int | None]:
        """Return (line, col), 1-based, of the deepest known prefix of ``loc``."""
        key = tuple(loc)
        while True:
            if key in self.marks:
                return self.marks[key]
            if not key:
                return (None, None)
            key = key[:-1]


@dataclass
class TrustedDocument(Document):
    """A file shipped with the package, read by :func:`safe_load` (libyaml, no positions).

    Its positions are worked out by the positioned parser (:func:`load_yaml`) the first time one
    is asked for, to report a problem, so a clean run never pays for them (the positioned
    parser takes several times as long over the built-in catalogue). tests/test_yamlio.py checks
    that both parsers read every shipped file to the same data.
    """

    text: str = field(default="", repr=False)
    located: bool = field(default=False, repr=False)

    def locate(self, loc: Sequence[str | int]) -> tuple[int | None, int | None]:
        if not self.located:
            self.marks = load_yaml(self.path, text=self.text).marks
            self.located = True
        return super().locate(loc)


def trusted_document(label: str, text: str) -> Document:
    """The document of ``text``, a file shipped with the package, labelled ``label``: read fast
    by :func:`safe_load`, positioned on demand (:class:`TrustedDocument`). Text libyaml refuses
    is read by :func:`load_yaml`, which says where it is wrong."""
    try:
        data = safe_load(text)
    except yaml.YAMLError:
        return load_yaml(label, text=text)
    return TrustedDocument(path=label, data=data, text=text)


class _Budget:
    def __init__(self, path: str) -> None:
        self.path = path
        self.nodes = 0
        #: the nodes built so far: one met again is an alias's
        self.seen: set[int] = set()
        #: every duplicate key, reported together (the first had hidden the others: a review)
        self.duplicates: list[ValidationProblem] = []
        #: each duplicate reported, as (its mapping node's id, its place in the mapping)
        self.duplicated: set[tuple[int, int]] = set()
        #: where each alias (*r) is written, by (its collection node's id, its place there, 0
        #: for an item or a key, 1 for a value): composed, an alias is its anchor's node and
        #: has only the anchor's position (:func:`_alias_marks`)
        self.alias_marks: dict[tuple[int, int, int], tuple[int, int]] = {}


def _syntax_problem(path: str, exc: yaml.MarkedYAMLError) -> InputFileError:
    """A parser's refusal at the position that helps: where it failed, except at the end of
    the file, where what it was reading began (an unclosed quote or bracket on line 1 of a
    5-line file had been reported at 6:1, 'found unexpected end of stream')."""
    mark = exc.problem_mark or exc.context_mark
    what = exc.problem or exc.context or "YAML syntax error"
    if "\t" in what or "'\\t'" in what or "tab" in what.lower():
        what = "tab character used for indentation (YAML needs spaces)"
    opened, failed = exc.context_mark, exc.problem_mark
    if exc.context is None or opened is None or failed is None:
        return _problem(path, mark, f"YAML syntax error: {what}")
    # PyYAML's context reads "while scanning a quoted scalar", "while parsing a flow mapping":
    # what was open when the parser failed
    thing = exc.context.removeprefix("while scanning ").removeprefix("while parsing ")
    at_end = "end of stream" in what or "<stream end>" in what
    if at_end and (opened.line, opened.column) < (failed.line, failed.column):
        # on the last line too, a file without its final newline (it had been reported where
        # the file ends, 6:19, for a quote opened at 6:14)
        return _problem(
            path,
            opened,
            f"YAML syntax error: {thing} starts here and the file ends before it is closed "
            f"({what})",
        )
    if opened.line >= failed.line:
        return _problem(path, mark, f"YAML syntax error: {what}")
    return _problem(
        path,
        failed,
        f"YAML syntax error: {what} (in {thing} that starts at line {opened.line + 1}, "
        f"column {opened.column + 1})",
    )


#: The scalar tags a file may use, explicitly or as the resolver reads plain scalars.
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null")
)


def _problem(path: str, mark: yaml.Mark | None, message: str) -> InputFileError:
    if mark is None:
        return InputFileError([ValidationProblem(path, None, None, message)])
    return InputFileError([ValidationProblem(path, mark.line + 1, mark.column + 1, message)])


def _build(
    node: yaml.Node,
    loc: tuple[str | int, ...],
    doc: Document,
    budget: _Budget,
    depth: int,
    constructor: yaml.constructor.SafeConstructor,
    at: tuple[int, int] | None = None,
) -> Any:
    """``node`` as Python data, every path under ``loc`` marked with its position in
    ``doc.marks``: a node's own, or, under an alias (``*r``), ``at``, where the alias is used
    (the node's own position is its anchor's, lines away: two requirements sharing one
    anchored mapping had both reported at the anchor)."""
    # a node built before is an alias's: its duplicate keys were said when it was first built
    rebuilt = id(node) in budget.seen
    if at is None and rebuilt:
        at = doc.marks.get(loc)
    budget.seen.add(id(node))
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        # the parser already refused more than MAX_NODES nodes, so only aliases get here
        raise _problem(
            doc.path,
            node.start_mark,
            f"document expands to more than {MAX_NODES} nodes through aliases (alias bomb?)",
        )
    if depth > MAX_DEPTH:
        raise _problem(doc.path, node.start_mark, f"nesting deeper than {MAX_DEPTH} levels")
    doc.marks.setdefault(loc, at or (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise _problem(doc.path, node.start_mark, f"unsupported YAML tag {node.tag!r}")
        result: dict[Any, Any] = {}
        for index, (key_node, value_node) in enumerate(node.value):
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _problem(
                    doc.path, key_node.start_mark, "YAML merge keys (<<) are not allowed"
                )
            # a key written as an alias (*k) is placed where it is written, not at its anchor
            key_alias = budget.alias_marks.get((id(node), index, 0))
            key_at = (
                at or key_alias or (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            )
            key = _build(
                key_node, (*loc, "<key>"), doc, budget, depth + 1, constructor=constructor, at=at
            )
            if key is None or isinstance(key, bool):
                # a bare true/false/null key: pydantic had named `true:` as "[1]" and `null:` was
                # said to be "not a plain scalar"
                raise _problem(
                    doc.path,
                    key_node.start_mark,
                    f"key {shown(key_node.value)} reads as "
                    f"{'null' if key is None else 'a boolean'}, not a name: quote it or remove it",
                )
            if not isinstance(key, str | int | float):
                raise _problem(doc.path, key_node.start_mark, "mapping keys must be plain scalars")
            if key in result:
                # each repeat once, though an anchored mapping is built again at every alias
                # (nested aliases had repeated one duplicate 11,111 times: review CH): a repeat
                # is its mapping node and its place in it; one written through an alias is said
                # where the alias is (it had been said at its mapping, once a mapping, or inside
                # a skipped duplicate where its anchor was: reviews CI, CK, CL)
                repeat = (id(node), index)
                if not rebuilt and repeat not in budget.duplicated:
                    budget.duplicated.add(repeat)
                    # said where the key is written: at its alias, or at the key itself, which
                    # under an alias built for the first time (its anchor in a skipped
                    # duplicate) is in the anchor's text, not at the alias (review CP)
                    said_at = key_alias or (
                        key_node.start_mark.line + 1,
                        key_node.start_mark.column + 1,
                    )
                    budget.duplicates.append(
                        ValidationProblem(
                            doc.path,
                            said_at[0],
                            said_at[1],
                            f"duplicate key {shown(key)}"
                            + (" (written through an alias)" if key_alias else ""),
                        )
                    )
                continue
            path_key: str | int = key if isinstance(key, str | int) else str(key)
            doc.marks[(*loc, path_key)] = key_at
            # a value written as an alias is placed at its key, as the rest of the mapping is
            value_at = at or (key_at if (id(node), index, 1) in budget.alias_marks else None)
            result[key] = _build(
                value_node,
                (*loc, path_key),
                doc,
                budget,
                depth + 1,
                constructor=constructor,
                at=value_at,
            )
        return result
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise _problem(doc.path, node.start_mark, f"unsupported YAML tag {node.tag!r}")
        items = []
        for index, item in enumerate(node.value):
            # an item written as an alias (- *r) is placed where it is written (it had been
            # placed at its anchor, lines away: review CL)
            item_at = at or budget.alias_marks.get((id(node), index, 0))
            doc.marks[(*loc, index)] = item_at or (
                item.start_mark.line + 1,
                item.start_mark.column + 1,
            )
            items.append(
                _build(
                    item, (*loc, index), doc, budget, depth + 1, constructor=constructor, at=item_at
                )
            )
        return items
    if isinstance(node, yaml.ScalarNode):
        if node.tag not in _SCALAR_TAGS:
            # !!binary and !!timestamp construct bytes and dates: a base64 size had passed a
            # design check as the number it hides (a hostile-input review)
            raise _problem(doc.path, node.start_mark, f"unsupported YAML tag {node.tag!r}")
        try:
            value = constructor.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise _problem(
                doc.path, node.start_mark, f"unsupported YAML value: {exc.problem}"
            ) from exc
        except (ValueError, OverflowError) as exc:
            reason = str(exc).split(";")[0]  # drop Python's sys.set_int_max_str_digits() hint
            if "integer string conversion" in reason:
                # Python's words for a number too long to convert, said as what the value is
                digits = sum(c.isdigit() for c in str(node.value))
                reason = f"a whole number of {digits} digits, more than any count or size takes"
            raise _problem(doc.path, node.start_mark, f"value cannot be read: {reason}") from exc
        if isinstance(value, str):
            value = _join_surrogates(doc.path, node, value)
        return value
    raise _problem(doc.path, node.start_mark, "unsupported YAML node")  # pragma: no cover


def _join_surrogates(path: str, node: yaml.Node, text: str) -> str:
    """``text`` with each surrogate pair (``"\\ud83d\\ude00"``, as JSON writes a character
    beyond U+FFFF) made the character it stands for; a lone surrogate is refused at the
    scalar's position (it would reach validation as text that cannot be encoded, reported at
    the enclosing mapping, or at 1:1)."""
    if not has_surrogate(text):
        return text
    joined = join_surrogate_pairs(text)
    if has_surrogate(joined):
        raise _problem(
            path,
            node.start_mark,
            f"{shown(text)} holds a lone UTF-16 surrogate (half of a pair), which is no "
            "character: write the character itself, or an escape such as \\U0001F600",
        )
    return joined


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_expansion(path: str, root: yaml.Node) -> None:
    """Refuse a document of more than MAX_NODES nodes, counting what aliases expand to, or
    nested deeper than MAX_DEPTH, before building it.

    Aliases make the composed document a graph of shared nodes; the size each node expands to
    is worked out once per node (a billion laughs is a few dozen nodes), and the refusal names
    the node at which building would pass the budget. A node that contains itself (``&a
    [*a]``) is refused too.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    aliased = False

    def size(node: yaml.Node, depth: int) -> int:
        nonlocal aliased
        key = id(node)
        if key in sizes:
            aliased = True
            return sizes[key]
        if depth > MAX_DEPTH:
            raise _problem(path, node.start_mark, f"nesting deeper than {MAX_DEPTH} levels")
        if key in open_nodes:
            raise _problem(path, node.start_mark, "recursive alias: a node contains itself")
        open_nodes.add(key)
        total = 1 + sum(size(child, depth + 1) for child in _children(node))
        open_nodes.discard(key)
        sizes[key] = total
        return total

    if size(root, 0) <= MAX_NODES:
        return
    count, node = 0, root
    while True:  # walk in build order, skipping whole subtrees that fit
        count += 1
        if count > MAX_NODES:
            break
        for child in _children(node):
            if count + sizes[id(child)] <= MAX_NODES:
                count += sizes[id(child)]
            else:
                node = child
                break
    if aliased:
        message = f"document expands to more than {MAX_NODES} nodes through aliases (alias bomb?)"
    else:
        message = f"document has more than {MAX_NODES} YAML nodes"
    raise _problem(path, node.start_mark, message)


#: Byte-order marks of the wide encodings YAML allows, UTF-32 first (its little-endian mark
#: starts with UTF-16's).
_WIDE_MARKS: tuple[tuple[str, tuple[bytes, ...]], ...] = (
    ("utf-32", (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")),
    ("utf-16", (b"\xff\xfe", b"\xfe\xff")),
)


def _check_text(path: str, raw: bytes) -> str:
    if not raw.strip():
        raise InputFileError([ValidationProblem(path, None, None, "file is empty")])
    # UTF-32 and UTF-16 with their byte-order marks, as YAML allows (and a Windows editor
    # saves UTF-16): they had been refused as binary for their NUL bytes, while nccl-check reads
    # such logs; UTF-32's little-endian mark begins with UTF-16's, so it is looked for first
    wide = next((e for e, marks in _WIDE_MARKS if raw.startswith(marks)), None)
    if wide is not None:
        try:
            text = raw.decode(wide).removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            problem = ValidationProblem(
                path, None, None, f"file is not valid {wide.upper()} ({exc.reason})"
            )
            raise InputFileError([problem]) from exc
        if not text.strip():
            raise InputFileError([ValidationProblem(path, None, None, "file is empty")])
        return text
    if b"\x00" in raw[:8192]:
        raise InputFileError([ValidationProblem(path, None, None, "file is binary, not YAML")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        # the column in characters, as the YAML positions count them (the line's valid prefix)
        start = raw.rfind(b"\n", 0, exc.start) + 1
        col = len(raw[start : exc.start].decode("utf-8", errors="replace")) + 1
        byte = raw[exc.start]
        return_problem = ValidationProblem(
            path, line, col, f"file is not valid UTF-8 (byte 0x{byte:02x})"
        )
        raise InputFileError([return_problem]) from exc
    return text.removeprefix("\ufeff")


#: What the flow-depth scan stops at: a comment's or a quoted string's start, and brackets.
_FLOW_MARKS = re.compile(r"""[#'"\[\]{}]""")


def _check_flow_depth(path: str, text: str) -> None:
    """Refuse flow-style nesting deeper than MAX_DEPTH before any parser sees it.

    Counts unquoted ``[``/``{`` against ``]``/``}`` (quotes and comments skipped) in one pass
    that looks at each character once, so a 10,000-deep ``[[[[...`` is refused at once, with
    its position, whatever the size of the file. The count stops at a quote that is never
    closed: the rest of the file is that string, which the parser refuses.
    """
    depth = 0
    pos = 0
    # one pass, each character looked at once: a regular expression that matched a quoted
    # string whole had backtracked over an unclosed one from every escaped quote in it,
    # quadratic in time and memory (80 KB took 20 s, 4 MiB about 500 MB; a review)
    while (match := _FLOW_MARKS.search(text, pos)) is not None:
        char, at = match.group(0), match.start()
        pos = at + 1
        if char == "#":
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif char == "'":
            end = text.find("'", pos)
            if end < 0:
                return  # unclosed: the rest is the string (the parser refuses it)
            pos = end + 1
        elif char == '"':
            end = _closing_quote(text, pos)
            if end < 0:
                return
            pos = end + 1
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, at) + 1
                col = at - text.rfind("\n", 0, at)
                raise InputFileError(
                    [ValidationProblem(path, line, col, f"nesting deeper than {MAX_DEPTH} levels")]
                )
        else:
            depth = max(0, depth - 1)


def _closing_quote(text: str, start: int) -> int:
    """Where the double-quoted string whose body starts at ``start`` ends (its closing ``"``,
    one not escaped by an odd run of backslashes), or -1 if it is not closed."""
    pos = start
    while (end := text.find('"', pos)) >= 0:
        slashes = end
        while slashes > start and text[slashes - 1] == "\\":
            slashes -= 1
        if (end - slashes) % 2 == 0:
            return end
        pos = end + 1
    return -1


class _CountingComposer:
    """Composer mix-in: refuse a document of more than MAX_NODES nodes, or nested deeper than
    MAX_DEPTH, while it is parsed (nothing is built for the nodes past the limit)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        loader: Any = self
        loader.ibcalc_nodes = getattr(loader, "ibcalc_nodes", 0) + 1
        loader.ibcalc_depth = getattr(loader, "ibcalc_depth", 0) + 1
        try:
            if loader.ibcalc_nodes > MAX_NODES or loader.ibcalc_depth > MAX_DEPTH + 1:
                event = loader.peek_event()
                raise _Limit(event.start_mark, loader.ibcalc_nodes > MAX_NODES)
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            loader.ibcalc_depth -= 1


class _Limit(Exception):
    def __init__(self, mark: Any, nodes: bool) -> None:
        super().__init__()
        self.mark = mark
        self.nodes = nodes


class _CountingLoader(_CountingComposer, SafeLoader):
    """The positioned loader of :func:`load_yaml`."""


def _limit_problem(path: str, limit: _Limit) -> InputFileError:
    if limit.nodes:
        return _problem(path, limit.mark, f"document has more than {MAX_NODES} YAML nodes")
    return _problem(path, limit.mark, f"nesting deeper than {MAX_DEPTH} levels")


_NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)
_END_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _preflight(path: str, text: str) -> None:
    """Count nodes and nesting with libyaml's parser before anything is composed.

    Refuses at the first node past :data:`MAX_NODES` or deeper than :data:`MAX_DEPTH`, at its
    position, after at most MAX_NODES events: a 4 MiB list of two million items is refused in
    a fraction of a second, never composed. Text shorter than MAX_NODES characters cannot hold
    more nodes than that (a node takes at least one character and a separator, a key without
    value two nodes for two characters), so it is not scanned twice. A syntax error in a large
    file is reported here too. Without libyaml the positioned parser counts (the same limits,
    more slowly).
    """
    if _FAST is None or len(text) <= MAX_NODES:
        return
    nodes = 0
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_FAST):
            if isinstance(event, _NODE_EVENTS):
                nodes += 1
                # a node inside `depth` open collections sits at depth `depth` (the root at 0)
                if nodes > MAX_NODES:
                    raise _limit_problem(path, _Limit(event.start_mark, True))
                if depth > MAX_DEPTH:
                    raise _limit_problem(path, _Limit(event.start_mark, False))
                if isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                    depth += 1
            elif isinstance(event, _END_EVENTS):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        if len(text) > _C_ERRORS_ABOVE_BYTES:
            raise _syntax_problem(path, exc) from None
    except yaml.YAMLError:
        pass  # the positioned parser words it


def _compose_fast(text: str) -> list[Any] | None:
    """The documents of ``text`` composed by libyaml (the same nodes and marks as the
    pure-Python composer, about 20 times faster), or None when libyaml is missing or refuses
    the text. The node and depth limits were checked by :func:`_preflight`."""
    if _FAST is None:  # pragma: no cover - PyYAML without libyaml
        return None
    try:
        return list(yaml.compose_all(text, Loader=_FAST))
    except yaml.YAMLError:
        return None


def _alias_marks(
    text: str, root: yaml.Node, *, fast: bool
) -> dict[tuple[int, int, int], tuple[int, int]]:
    """Where each alias of the (one) document of ``text`` is written, as
    :attr:`_Budget.alias_marks` keeps it: the parser's events walked beside the composed nodes
    (an alias is one event where the composed tree has its anchor's node), by the parser that
    composed them (``fast``: libyaml's). Empty for text without an alias, and where the events
    do not follow the nodes (then aliases keep their anchors' places)."""
    if "*" not in text:
        return {}
    try:
        return _walk_aliases(text, root, _FAST if fast and _FAST is not None else SafeLoader)
    except (yaml.YAMLError, StopIteration, RecursionError):
        # libyaml refuses text the pure-Python parser reads ('{max_time:}', a BOM inside the
        # text): read with the other parser, a file had ended in an internal error (review CP)
        return {}


#: The event that starts each kind of node.
_EVENT_OF: dict[type[yaml.Node], type[yaml.Event]] = {
    yaml.ScalarNode: yaml.ScalarEvent,
    yaml.SequenceNode: yaml.SequenceStartEvent,
    yaml.MappingNode: yaml.MappingStartEvent,
}


def _walk_aliases(
    text: str, root: yaml.Node, loader: type[Any]
) -> dict[tuple[int, int, int], tuple[int, int]]:
    """:func:`_alias_marks` with ``loader``'s events; raises where they do not follow."""
    marks: dict[tuple[int, int, int], tuple[int, int]] = {}
    events = iter(yaml.parse(text, Loader=loader))

    def alias_at(node: yaml.Node) -> tuple[int, int] | None:
        event = next(events)
        if isinstance(event, yaml.AliasEvent):
            mark = event.start_mark or node.start_mark  # libyaml marks every event
            return mark.line + 1, mark.column + 1
        if not isinstance(event, _EVENT_OF[type(node)]):
            raise yaml.YAMLError("the parser's events do not follow the composed nodes")
        if isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                if (place := alias_at(item)) is not None:
                    marks[(id(node), index, 0)] = place
        elif isinstance(node, yaml.MappingNode):
            for index, pair in enumerate(node.value):
                for side, part in enumerate(pair):
                    if (place := alias_at(part)) is not None:
                        marks[(id(node), index, side)] = place
        if isinstance(node, yaml.CollectionNode):
            next(events)  # the collection's end
        return None

    while not isinstance(next(events), yaml.DocumentStartEvent):
        pass
    alias_at(root)
    return marks


def load_yaml(
    source: str | Path, *, text: str | None = None, defer_duplicates: bool = False
) -> Document:
    """Parse one YAML file (or ``text`` labelled with ``source``) safely, keeping positions.

    Raises :class:`InputFileError` with ``file:line:col`` for every refusal; every duplicate key
    at once, or, with ``defer_duplicates``, none: they are left in ``Document.duplicates``, which
    :func:`validate` reports beside the file's other problems (each mapping keeping the first
    value of a duplicated key).
    """
    path = str(source)
    if text is None:
        try:
            raw = read_regular(source, MAX_FILE_BYTES)
        except ReadRefused as exc:
            raise InputFileError([ValidationProblem(path, None, None, exc.reason)]) from None
        text = _check_text(path, raw)
    elif not text.strip():
        raise InputFileError([ValidationProblem(path, None, None, "file is empty")])
    doc = Document(path=path, data=None)
    _check_flow_depth(path, text)
    _preflight(path, text)
    nodes = _compose_fast(text)
    fast = nodes is not None
    try:
        if nodes is None:
            # no libyaml, or it refused the text: the positioned pure-Python parser says why
            nodes = list(yaml.compose_all(text, Loader=_CountingLoader))
    except _Limit as limit:
        raise _limit_problem(path, limit) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_problem(path, exc) from exc
    except yaml.reader.ReaderError as exc:
        # a control character: PyYAML says where as an index into the text
        where = max(0, min(exc.position, len(text)))
        line = text.count("\n", 0, where) + 1
        col = where - text.rfind("\n", 0, where)
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise InputFileError(
            [
                ValidationProblem(
                    path,
                    line,
                    col,
                    f"control character {printable(char)} is not allowed in YAML text "
                    '(write it as an escape inside double quotes, "\\x07", if it is meant)',
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise InputFileError(
            [ValidationProblem(path, None, None, f"YAML error: {printable(exc)}")]
        ) from exc
    except RecursionError as exc:
        raise InputFileError(
            [ValidationProblem(path, None, None, f"nesting deeper than {MAX_DEPTH} levels")]
        ) from exc
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        raise InputFileError([ValidationProblem(path, None, None, "file holds no YAML document")])
    if len(nodes) > 1:
        raise _problem(path, nodes[1].start_mark, "file holds more than one YAML document")
    try:
        _check_expansion(path, nodes[0])
    except RecursionError as exc:  # pragma: no cover - nesting is refused before
        raise InputFileError(
            [ValidationProblem(path, None, None, f"nesting deeper than {MAX_DEPTH} levels")]
        ) from exc
    constructor = yaml.constructor.SafeConstructor()
    budget = _Budget(path)
    budget.alias_marks = _alias_marks(text, nodes[0], fast=fast)
    try:
        doc.data = _build(nodes[0], (), doc, budget, 0, constructor=constructor)
    except RecursionError as exc:
        raise InputFileError(
            [ValidationProblem(path, None, None, f"nesting deeper than {MAX_DEPTH} levels")]
        ) from exc
    except InputFileError as exc:
        # the duplicates met before the problem that stopped the reading are said too
        raise InputFileError(budget.duplicates + exc.problems) from None
    if budget.duplicates and not defer_duplicates:
        raise InputFileError(budget.duplicates)
    doc.duplicates = budget.duplicates
    return doc


def _format_loc(loc: Iterable[str | int]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            # an empty key would print as nothing: `'': 1` is shown as ''
            parts.append(("." if parts else "") + (str(item) if item != "" else "''"))
    return "".join(parts)


def validate(
    doc: Document,
    model: type[M],
    *,
    prefix: Sequence[str | int] = (),
    known_keys: Iterable[str] = (),
    elsewhere: Mapping[str, str] | None = None,
    indent_hint: bool = False,
) -> M:
    """Validate ``doc.data`` (or the part at ``prefix``) against ``model``.

    Every pydantic error becomes a :class:`ValidationProblem` at the YAML position of the
    offending key; all of them are raised together, with the document's deferred duplicate
    keys (:func:`load_yaml`), which are raised alone where the data is otherwise valid. An
    unknown key gets a "did you mean" hint from ``known_keys`` (default: every key of
    ``model``, :func:`model_keys`; a catalogue's ``note:`` had been offered nothing, a review)
    when one is close, or the words ``elsewhere`` has for it (a key the tool takes somewhere
    else, such as a command-line option); ``indent_hint`` as :func:`problems_from` takes it.
    """
    data: Any = doc.data
    for part in prefix:
        data = data[part]
    try:
        result = model.model_validate(data)
    except ValidationError as exc:
        keys = known_keys or model_keys(model)
        problems = problems_from(
            doc,
            exc,
            prefix,
            known_keys=keys,
            model=model,
            elsewhere=elsewhere,
            indent_hint=indent_hint,
        )
        if doc.duplicates:
            problems = by_position(doc.duplicates + problems)
        raise InputFileError(problems) from None
    if doc.duplicates:
        raise InputFileError(list(doc.duplicates))
    return result


def by_position(problems: Iterable[ValidationProblem]) -> list[ValidationProblem]:
    """Top to bottom, so that a report reads in file order (those without a line last)."""
    return sorted(problems, key=lambda p: (p.line is None, p.line or 0, p.col or 0))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold (``X | None``, ``list[X]``, ``dict[str, X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in getattr(annotation, "__args__", ()) or ():
        found.extend(_models_in(arg))
    return found


def model_keys(model: type[BaseModel]) -> frozenset[str]:
    """Every key ``model`` documents at any level (its fields' and its nested models'), for
    "did you mean" hints: a field's alias where it has one (``per_direction``, not the
    ``per_direction_Bps`` a catalogue also takes: a review had found the internal name offered
    and the documented one not)."""
    seen: set[str] = set()
    models: list[type[BaseModel]] = [model]
    visited: set[type[BaseModel]] = set()
    while models:
        current = models.pop()
        if current not in visited:
            visited.add(current)
            seen |= _documented_keys(current)
            models += [m for f in current.model_fields.values() for m in _models_in(f.annotation)]
    return frozenset(seen)


def _documented_keys(model: type[BaseModel]) -> set[str]:
    """The keys of ``model``'s own fields as files write them: each one's alias, else its name."""
    return {f.alias or n for n, f in model.model_fields.items()}


def section_keys(model: type[BaseModel], loc: Sequence[str | int]) -> set[str] | None:
    """The keys (as :func:`model_keys` gives them) the mapping at ``loc`` takes, walking
    ``model``'s fields; None where the path leaves the models (a list of scalars, a union of
    several)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return None
        if isinstance(part, int):
            continue  # an item of a list or tuple: the annotation already named its model
        fields = current.model_fields
        name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
        if name is None:
            return None
        models = _models_in(fields[name].annotation)
        current = models[0] if len(models) == 1 else None
    if current is None:
        return None
    return _documented_keys(current)


#: What a catalogue id may hold (``catalogue.models.Identifier``): refused in plain words.
IDENTIFIER_PATTERN = r"^[a-z0-9][a-z0-9.+-]*$"

#: pydantic's "Input should be a valid dictionary or instance of FabricSpec": a class name is
#: not what a file's author wrote.
_MAPPING_ERRORS = frozenset({"model_type", "dict_type", "model_attributes_type"})
_TYPE_ERRORS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}
_TRUE_OR_FALSE = "write true or false"
_YAML11_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$"),
        "YAML 1.1 would read it as a base-60 number; ibcalc reads it as text (a ratio is "
        "written 2:1 only where a ratio is meant)",
    ),
    (
        re.compile(r"^[-+]?0(?:[xX][0-9a-fA-F_]+|[oO]?[0-7_]+|[bB][01_]+)$"),
        "hex, octal and binary numbers are not read: write it in decimal",
    ),
    (re.compile(r"^[-+]?[0-9]+(?:_[0-9]+)+$"), "write the number without '_'"),
    (re.compile(r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$"), _TRUE_OR_FALSE),
    (re.compile(r"^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$"), "a finite number is needed"),
)


def _yaml_word(value: Any) -> str:
    """A scalar as YAML writes it (``null``, ``true``, ``3``), a list or mapping by its kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    return "a list" if isinstance(value, list | tuple) else type(value).__name__


def _type_message(error: Any) -> str | None:
    """A clearer message for a value of the wrong type that YAML 1.1 would have converted."""
    what = _TYPE_ERRORS.get(error["type"])
    value = error.get("input")
    if what == "true or false" and (
        isinstance(value, int | float | dict | list | tuple) and not isinstance(value, bool)
    ):
        # 'nvls: 1' had read pydantic's 'Input should be a valid boolean', and so had
        # 'sharp: {}' (review CU)
        return f"{_yaml_word(value)} is not {what}"
    if what is None or not isinstance(value, str):
        return None
    if what == "true or false" and value.strip().lower() in ("true", "false"):
        # rail_optimized: "false" had read "'false' is not true or false" (review CV)
        return f"{shown(value)} is quoted text: write {value.strip().lower()} without quotes"
    for pattern, hint in _YAML11_FORMS:
        if pattern.match(value.strip()):
            if hint == _TRUE_OR_FALSE and what != "true or false":
                # a number's field: 'write true or false' had led to true, read as 1 there
                return f"{shown(value)} is not {what} (YAML 1.1 would read it as true or false)"
            return f"{shown(value)} is not {what}: {hint}"
    return f"{shown(value)} is not {what}"


def _plain_message(error: Any) -> str | None:
    """pydantic's words for a bound, a list's length, a missing key or a value of the wrong
    kind, in this tool's ("must be at least 0.01", not "Input should be greater than or equal
    to 0.01"; "10,001 items, more than the 10,000 taken", not "List should have at most 10000
    items after validation, not 10001"); None to keep pydantic's."""
    kind, ctx = error["type"], error.get("ctx") or {}
    value = error.get("input")
    given = shown(value) if isinstance(value, str) else _yaml_word(value)
    bounds = {
        "greater_than_equal": ("must be at least", "ge"),
        "greater_than": ("must be more than", "gt"),
        "less_than_equal": ("must be at most", "le"),
        "less_than": ("must be less than", "lt"),
    }
    if kind in bounds and bounds[kind][1] in ctx:
        words, key = bounds[kind]
        return f"{words} {ctx[key]:g}" if isinstance(ctx[key], float) else f"{words} {ctx[key]}"
    if kind == "too_long" and "max_length" in ctx:
        count = ctx.get("actual_length")
        has = f"{count:,} items, " if isinstance(count, int) else ""
        return f"{has}more than the {ctx['max_length']:,} taken"
    if kind == "too_short" and "min_length" in ctx:
        return f"needs at least {ctx['min_length']:,} item{'s' if ctx['min_length'] != 1 else ''}"
    if kind == "string_too_long" and "max_length" in ctx:
        count = len(value) if isinstance(value, str) else None
        has = f"{count:,} characters, " if count is not None else ""
        return f"{has}more than the {ctx['max_length']:,} taken"
    if kind == "string_too_short" and "min_length" in ctx:
        least = ctx["min_length"]
        return (
            "is empty: write at least one character"
            if least == 1
            else f"needs at least {least:,} characters"
        )
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == IDENTIFIER_PATTERN:
        # an id had read "String should match pattern '^[a-z0-9][a-z0-9.+-]*$'" (a review)
        return (
            f"{given} is not an id: write lower-case letters, digits, '.', '+' and '-', "
            "starting with a letter or digit"
        )
    if kind == "invalid_key":
        # 'an integer key' had read pydantic's "[1]: Keys should be strings" (a review)
        return f"the key {given} is not a name: keys are words such as nodes"
    if kind == "list_type":
        return f"{given} is not a list: give its items below it, each after '- '"
    if kind == "missing":
        return "missing: this key is required"
    if kind == "string_type":
        # 'description: 5' had been told to "write a name" (review CV)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return f"{given} is a number, not text: quote it to mean the text, '{given}'"
        return f"{given} is not text"
    if kind in ("int_from_float", "int_type", "int_parsing"):
        if isinstance(value, float) and value.is_integer():
            # 4.0 is whole: written with a point (a JSON Schema integer takes it; review BH)
            return f"{given} is written with a decimal point: write {int(value)}"
        return f"{given} is not a whole number"
    if kind in ("float_type", "float_parsing"):
        return f"{given} is not a number"
    if kind in ("enum", "literal_error") and "expected" in ctx:
        return f"{given} is not one of {ctx['expected']}"
    return None


def problems_from(
    doc: Document,
    exc: ValidationError,
    prefix: Sequence[str | int] = (),
    *,
    known_keys: Iterable[str] = (),
    model: type[BaseModel] | None = None,
    elsewhere: Mapping[str, str] | None = None,
    indent_hint: bool = False,
) -> list[ValidationProblem]:
    """Map pydantic errors to positioned problems (unknown keys hinted from ``known_keys``, or
    from the keys of their own section where ``model`` shows them: ``gap: {extra: 1}`` is not
    offered ``intra``, a key the gap target does not take). A key of another section is told
    to check its indent with ``indent_hint``.

    A required key that is missing because it was misspelt is said once, at the misspelling
    (``node: unknown key (did you mean nodes?)``), not also as ``nodes: Field required``."""
    keys = sorted(known_keys)
    errors = exc.errors(include_url=False)
    suggested: set[tuple[str | int, ...]] = set()

    def candidates(model_loc: Sequence[str | int]) -> list[str]:
        """Keys to suggest for an unknown key at ``model_loc`` (a location in ``model``)."""
        own = section_keys(model, model_loc[:-1]) if model is not None else None
        return sorted(own) if own else keys

    def closest(
        key: str, model_loc: Sequence[str | int], cutoff: float = 0.6, words: bool = True
    ) -> list[str]:
        """Its section's keys ``key`` begins, each ('min': min_algbw, min_busbw), else the one
        closest to it (difflib), else, with ``words``, one ``key`` is made of with a word added
        ('sharp_enabled': sharp; 'max_count': max), as a "did you mean" (review CC: those had
        been offered nothing)."""
        own = candidates(model_loc)
        # a key its section's keys begin ('max' in a gap target: max_ratio, review CD; 'min':
        # min_algbw or min_busbw, each, review CF)
        longer = [c for c in own if c.startswith(f"{key}_")]
        if longer:
            return longer[:3]
        close = difflib.get_close_matches(key, own, n=1, cutoff=cutoff)
        if close or not words:
            return close
        parts = key.split("_")
        return [c for c in own if c in ("_".join(parts[:i]) for i in range(1, len(parts)))][:1]

    def elsewhere_key(key: str, model_loc: Sequence[str | int]) -> bool:
        """Whether ``key`` is a key of another section and its own has none much like it, so
        the problem is its indent ('switch' in a requirement is switches, not fabric.switch:
        review CC)."""
        return key in keys and not closest(key, model_loc, cutoff=0.8, words=False)

    for error in errors:
        loc = (*prefix, *error["loc"])
        if error["type"] == "extra_forbidden" and loc and keys:
            if elsewhere and str(loc[-1]) in elsewhere:
                continue
            if elsewhere_key(str(loc[-1]), error["loc"]):
                continue  # said as a key of another section, not as a slip of a missing one
            # a slip of a key (difflib's ratio 0.8 or more: 'node', 'sytem') stands for it; a
            # key less like it does not ('nodes_per_su' and 'nodes_count' are offered nodes,
            # and nodes, if missing, is said missing: reviews CD and CH had found it hidden)
            for name in closest(str(loc[-1]), error["loc"], cutoff=0.8, words=False):
                suggested.add((*loc[:-1], name))
    problems = []
    # a tuple some of whose items failed can also be said to be too short (pydantic counts only
    # the items that passed): 'modes: needs at least 1 item' beside the two modes given (review
    # CH); said only where fewer items are given than it needs
    failed_within = {tuple(e["loc"][:i]) for e in errors for i in range(len(e["loc"]))}
    for error in errors:
        loc = (*prefix, *error["loc"])
        if error["type"] == "missing" and loc in suggested:
            continue
        if (
            error["type"] == "too_short"
            and tuple(error["loc"]) in failed_within
            and len(error.get("input") or ()) >= error.get("ctx", {}).get("min_length", 0)
        ):
            continue
        line, col = doc.locate(loc)
        where = _format_loc(loc) or "document"
        message = error["msg"]
        if error["type"] == "extra_forbidden" and elsewhere and str(loc[-1]) in elsewhere:
            message = f"unknown key: {elsewhere[str(loc[-1])]}"
        elif error["type"] == "extra_forbidden":
            message = "unknown key (not allowed here)"
            own = closest(str(loc[-1]), error["loc"]) if loc and keys else []
            if loc and keys and elsewhere_key(str(loc[-1]), error["loc"]):
                # what this section does take: 'gap: {min_busbw: ...}' had been told only to
                # check an indent that was right (a hostile-input review)
                takes = candidates(error["loc"])
                # re-indenting moves a design file's key to another section; a catalogue's
                # link key in a system entry is in another list, not mis-indented (review CH)
                indent = " (check its indent)" if indent_hint else ""
                message = (
                    f"unknown key here (this section takes {', '.join(takes)}): a key of another "
                    f"section{indent}"
                    if takes != keys
                    else f"unknown key here: a key of another section{indent}"
                )
            elif own:
                message = f"unknown key (did you mean {' or '.join(own)}?)"
        elif error["type"] in _MAPPING_ERRORS:
            value = error.get("input")
            text = shown(value) if isinstance(value, str) else _yaml_word(value)
            message = f"{text} is not a mapping: give its keys below it"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        elif (typed := _type_message(error)) is not None:
            message = typed
        elif (plain := _plain_message(error)) is not None:
            message = plain
        if error["type"] in ("enum", "literal_error") and isinstance(error.get("input"), str):
            # pydantic's ctx "expected" quotes the choices: "'ring', 'tree' or 'nvls'"
            expected = quoted_names(error.get("ctx", {}).get("expected"))
            message += closest_hint(error["input"], expected)
        problems.append(ValidationProblem(doc.path, line, col, f"{where}: {message}"))
    return problems
