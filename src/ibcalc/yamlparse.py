"""PyYAML's side of :mod:`ibcalc.yamlio`: the safe loaders, :func:`safe_load` (the shipped
files) and :func:`load_yaml` (every file a user gives, with positions and limits).

Kept apart so that a run reading only the shipped files through their JSON mirrors
(:func:`ibcalc.yamlio.shipped_data`) does not import PyYAML (about 11 ms, most of it compiling
its reader's pattern of printable characters). :mod:`ibcalc.yamlio` says what the rules are and
hands its callers :func:`load_yaml` and :func:`safe_load`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ibcalc.errors import InputFileError, ValidationProblem
from ibcalc.fileio import ReadRefused, read_regular
from ibcalc.textsafe import has_surrogate, join_surrogate_pairs, printable, shown
from ibcalc.yamlio import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES, YAML_FLOAT, Document

__all__ = ["CSafeLoader", "SafeLoader", "load_yaml", "safe_load"]

#: Above this size a syntax error found by libyaml is reported as libyaml words it; below it the
#: pure-Python parser runs again for its (more precise) wording.
_C_ERRORS_ABOVE_BYTES = 512 * 1024

# --- what a plain scalar means -------------------------------------------------------------

#: Implicit types kept from YAML 1.1 (everything else a plain scalar could become is a string).
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(rf"^{YAML_FLOAT}$")
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
    if not _NULL.fullmatch(value):
        raise _NotPlain
    return None


def _bool(value: str) -> bool:
    if not _BOOL.fullmatch(value):
        raise _NotPlain
    return value.lower() == "true"


def _int(value: str) -> int:
    if not _INT.fullmatch(value):
        raise _NotPlain
    return int(value)


def _float(value: str) -> float:
    if not _FLOAT.fullmatch(value):
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
    if isinstance(node, yaml.ScalarNode):
        # a tag on a node of another kind (``!!str {a: 1}``, ``!!seq x``) is PyYAML's to refuse
        scalar = _SCALARS.get(tag)
        if scalar is None:
            raise _NotPlain
        return scalar(node.value)
    if id(node) in built:
        return built[id(node)]
    if tag == _MAP_TAG and isinstance(node, yaml.MappingNode):
        mapping: dict[Any, Any] = {}
        built[id(node)] = mapping
        for key_node, value_node in node.value:
            if key_node.tag == f"{_TAG}merge":
                raise _NotPlain
            mapping[_plain_data(key_node, built)] = _plain_data(value_node, built)
        return mapping
    if tag == _SEQ_TAG and isinstance(node, yaml.SequenceNode):
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


#: The longest plain (simple) key YAML reads, in characters (YAML 1.1, 7.4.3; PyYAML's scanner).
_KEY_LIMIT = 1024


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
    long = failed.column - opened.column
    if thing == "a simple key" and opened.line == failed.line and long > _KEY_LIMIT:
        # PyYAML gives up on a plain key past 1024 characters: "could not find expected ':'",
        # pointing at the ':' that is there
        return _problem(
            path,
            opened,
            f"YAML syntax error: a key of {long} characters, more than the {_KEY_LIMIT} YAML "
            "allows a plain key (the ':' after it is not read as one)",
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


def _duplicate_key(
    key: str, *, through_alias: bool, first: tuple[int, int] | None, line: int
) -> str:
    """A duplicate key's message, said at the repeat's own place, with one parenthetical: that it
    is written through an alias, and where its first occurrence is, its line or its column where
    both are on one line (``{x: 1, x: 2}``): "duplicate key 'x' (written through an alias; first
    at column 5)", where two parentheticals in a row had been."""
    notes = ["written through an alias"] if through_alias else []
    if first is not None:
        notes.append(
            f"first at column {first[1]}" if first[0] == line else f"first at line {first[0]}"
        )
    return f"duplicate key {key}" + (f" ({'; '.join(notes)})" if notes else "")


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
        #: where each key is written, as a duplicate's own place is said (not where an alias
        #: builds the mapping)
        written: dict[Any, tuple[int, int]] = {}
        for index, (key_node, value_node) in enumerate(node.value):
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _problem(
                    doc.path, key_node.start_mark, "YAML merge keys (<<) are not allowed"
                )
            # a key written as an alias (*k) is placed where it is written, not at its anchor
            key_alias = budget.alias_marks.get((id(node), index, 0))
            # where the key is written: at its alias, or at the key itself
            key_written = key_alias or (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            key_at = at or key_written
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
                    # (key_written); and where the first one is written: the repeat alone had
                    # left it to be searched for
                    line, column = key_written
                    budget.duplicates.append(
                        ValidationProblem(
                            doc.path,
                            line,
                            column,
                            _duplicate_key(
                                shown(key),
                                through_alias=key_alias is not None,
                                first=written.get(key),
                                line=line,
                            ),
                        )
                    )
                continue
            written[key] = key_written
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
