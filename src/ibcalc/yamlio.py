"""Read YAML safely, keep line/column marks, and turn validation errors into file:line:col.

Only ``yaml.SafeLoader`` is used. Hostile input is refused before it can cost much: files over
a size limit, binary files, invalid UTF-8, tabs used for indentation, alias expansion beyond a
node budget (billion laughs), nesting deeper than a limit, duplicate keys, python tags.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ibcalc.errors import InputFileError, ValidationProblem

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NODES", "Document", "load_yaml", "validate"]

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

M = TypeVar("M", bound=BaseModel)


@dataclass
class Document:
    """A parsed YAML document plus the source position of every mapping key and item."""

    path: str
    data: Any
    marks: dict[tuple[str | int, ...], tuple[int, int]] = field(default_factory=dict)

    def locate(self, loc: Sequence[str | int]) -> tuple[int | None, int | None]:
        """Return (line, col), 1-based, of the deepest known prefix of ``loc``."""
        key = tuple(loc)
        while True:
            if key in self.marks:
                return self.marks[key]
            if not key:
                return (None, None)
            key = key[:-1]


class _Budget:
    def __init__(self, path: str) -> None:
        self.path = path
        self.nodes = 0


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
) -> Any:
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise _problem(
            doc.path,
            node.start_mark,
            f"document expands to more than {MAX_NODES} nodes (alias bomb?)",
        )
    if depth > MAX_DEPTH:
        raise _problem(doc.path, node.start_mark, f"nesting deeper than {MAX_DEPTH} levels")
    doc.marks.setdefault(loc, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise _problem(doc.path, node.start_mark, f"unsupported YAML tag {node.tag!r}")
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _problem(
                    doc.path, key_node.start_mark, "YAML merge keys (<<) are not allowed"
                )
            key = _build(key_node, (*loc, "<key>"), doc, budget, depth + 1, constructor=constructor)
            if not isinstance(key, str | int | float | bool):
                raise _problem(doc.path, key_node.start_mark, "mapping keys must be plain scalars")
            if key in result:
                raise _problem(doc.path, key_node.start_mark, f"duplicate key {key!r}")
            path_key: str | int = key if isinstance(key, str | int) else str(key)
            doc.marks[(*loc, path_key)] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            result[key] = _build(
                value_node, (*loc, path_key), doc, budget, depth + 1, constructor=constructor
            )
        return result
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise _problem(doc.path, node.start_mark, f"unsupported YAML tag {node.tag!r}")
        items = []
        for index, item in enumerate(node.value):
            doc.marks[(*loc, index)] = (item.start_mark.line + 1, item.start_mark.column + 1)
            items.append(
                _build(item, (*loc, index), doc, budget, depth + 1, constructor=constructor)
            )
        return items
    if isinstance(node, yaml.ScalarNode):
        try:
            return constructor.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise _problem(
                doc.path, node.start_mark, f"unsupported YAML value: {exc.problem}"
            ) from exc
        except (ValueError, OverflowError) as exc:
            reason = str(exc).split(";")[0]  # drop Python's sys.set_int_max_str_digits() hint
            raise _problem(doc.path, node.start_mark, f"value cannot be read: {reason}") from exc
    raise _problem(doc.path, node.start_mark, "unsupported YAML node")  # pragma: no cover


def _check_text(path: str, raw: bytes) -> str:
    if not raw.strip():
        raise InputFileError([ValidationProblem(path, None, None, "file is empty")])
    if b"\x00" in raw[:8192]:
        raise InputFileError([ValidationProblem(path, None, None, "file is binary, not YAML")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return_problem = ValidationProblem(path, line, 1, "file is not valid UTF-8")
        raise InputFileError([return_problem]) from exc
    return text.removeprefix("\ufeff")


def _check_flow_depth(path: str, text: str) -> None:
    """Refuse flow-style nesting deeper than MAX_DEPTH before the recursive parser sees it.

    Counts unquoted ``[``/``{`` against ``]``/``}`` (quotes and comments skipped), so a
    10,000-deep ``[[[[...`` is refused at once, with its position.
    """
    depth = 0
    line, col = 1, 0
    quote = ""
    comment = False
    for char in text:
        col += 1
        if char == "\n":
            line, col, comment = line + 1, 0, False
            if quote == "'" or quote == '"':
                pass
            continue
        if comment:
            continue
        if quote:
            if char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
        elif char == "#":
            comment = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputFileError(
                    [ValidationProblem(path, line, col, f"nesting deeper than {MAX_DEPTH} levels")]
                )
        elif char in "]}":
            depth = max(0, depth - 1)


def load_yaml(source: str | Path, *, text: str | None = None) -> Document:
    """Parse one YAML file (or ``text`` labelled with ``source``) safely, keeping positions.

    Raises :class:`InputFileError` with ``file:line:col`` for every refusal.
    """
    path = str(source)
    if text is None:
        file = Path(source)
        if not file.exists():
            raise InputFileError([ValidationProblem(path, None, None, "no such file")])
        if file.is_dir():
            raise InputFileError(
                [ValidationProblem(path, None, None, "is a directory, not a file")]
            )
        try:
            size = file.stat().st_size
            if size > MAX_FILE_BYTES:
                raise InputFileError(
                    [
                        ValidationProblem(
                            path, None, None, f"file is larger than {MAX_FILE_BYTES} bytes"
                        )
                    ]
                )
            raw = file.read_bytes()
        except OSError as exc:
            raise InputFileError(
                [ValidationProblem(path, None, None, f"cannot read file: {exc.strerror}")]
            ) from exc
        text = _check_text(path, raw)
    elif not text.strip():
        raise InputFileError([ValidationProblem(path, None, None, "file is empty")])
    doc = Document(path=path, data=None)
    _check_flow_depth(path, text)
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "YAML syntax error"
        if "\t" in what or "'\\t'" in what or "tab" in what.lower():
            what = "tab character used for indentation (YAML needs spaces)"
        raise _problem(path, mark, f"YAML syntax error: {what}") from exc
    except yaml.YAMLError as exc:
        raise InputFileError([ValidationProblem(path, None, None, f"YAML error: {exc}")]) from exc
    except RecursionError as exc:
        raise InputFileError(
            [ValidationProblem(path, None, None, f"nesting deeper than {MAX_DEPTH} levels")]
        ) from exc
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        raise InputFileError([ValidationProblem(path, None, None, "file holds no YAML document")])
    if len(nodes) > 1:
        raise _problem(path, nodes[1].start_mark, "file holds more than one YAML document")
    constructor = yaml.constructor.SafeConstructor()
    try:
        doc.data = _build(nodes[0], (), doc, _Budget(path), 0, constructor=constructor)
    except RecursionError as exc:
        raise InputFileError(
            [ValidationProblem(path, None, None, f"nesting deeper than {MAX_DEPTH} levels")]
        ) from exc
    return doc


def _format_loc(loc: Iterable[str | int]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def validate(
    doc: Document,
    model: type[M],
    *,
    prefix: Sequence[str | int] = (),
    known_keys: Iterable[str] = (),
) -> M:
    """Validate ``doc.data`` (or the part at ``prefix``) against ``model``.

    Every pydantic error becomes a :class:`ValidationProblem` at the YAML position of the
    offending key; all of them are raised together. An unknown key gets a "did you mean" hint
    from ``known_keys`` when one is close.
    """
    data: Any = doc.data
    for part in prefix:
        data = data[part]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputFileError(problems_from(doc, exc, prefix, known_keys=known_keys)) from None


def problems_from(
    doc: Document,
    exc: ValidationError,
    prefix: Sequence[str | int] = (),
    *,
    known_keys: Iterable[str] = (),
) -> list[ValidationProblem]:
    """Map pydantic errors to positioned problems (unknown keys hinted from ``known_keys``)."""
    keys = sorted(known_keys)
    problems = []
    for error in exc.errors(include_url=False):
        loc = (*prefix, *error["loc"])
        line, col = doc.locate(loc)
        where = _format_loc(loc) or "document"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown key (not allowed here)"
            close = difflib.get_close_matches(str(loc[-1]), keys, n=1) if loc and keys else []
            if close:
                message += f" (did you mean {close[0]}?)"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        problems.append(ValidationProblem(doc.path, line, col, f"{where}: {message}"))
    return problems
