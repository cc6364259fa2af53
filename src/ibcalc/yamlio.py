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

from pydantic import BaseModel, ValidationError

from ibcalc.errors import InputFileError, ValidationProblem, WrongTypeError
from ibcalc.patterns import lazy_pattern
from ibcalc.textsafe import (
    closest_hint,
    printable,
    quoted_names,
    shown,
    with_aside,
)

__all__ = [
    "EXPONENT_AS_TEXT",
    "FILE_KINDS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "MIRRORED",
    "YAML_FLOAT",
    "Document",
    "FileKind",
    "TrustedDocument",
    "input_paths",
    "load_yaml",
    "mirror_text",
    "other_kind",
    "safe_load",
    "shipped_data",
    "trusted_document",
    "validate",
    "wrong_kind_problem",
    "yaml_error",
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


def load_yaml(
    source: str | Path, *, text: str | None = None, defer_duplicates: bool = False
) -> Document:
    """Parse one YAML file (or ``text`` labelled with ``source``) safely, keeping positions:
    :func:`ibcalc.yamlparse.load_yaml`, which says what is refused and how."""
    from ibcalc.yamlparse import load_yaml as load

    return load(source, text=text, defer_duplicates=defer_duplicates)


def safe_load(text: str) -> Any:
    """Parse trusted ``text`` (a file shipped with the package) fast, with the same scalar rules
    as :func:`load_yaml`, and without positions: :func:`ibcalc.yamlparse.safe_load`."""
    from ibcalc.yamlparse import safe_load as load

    return load(text)


def yaml_error() -> type[Exception]:
    """PyYAML's root exception (``yaml.YAMLError``), imported when asked for: an ``except``
    clause names it as ``except yaml_error():``, which is evaluated only when an exception is
    being matched."""
    from yaml import YAMLError

    return YAMLError


def __getattr__(name: str) -> Any:
    # the loader classes live with PyYAML (ibcalc.yamlparse), imported on first use
    if name in ("SafeLoader", "CSafeLoader"):
        from ibcalc import yamlparse

        return getattr(yamlparse, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The JSON mirror of a shipped YAML file (``ibcalc/data/<name>.json``): the data PyYAML reads
#: from it, with the SHA-256 of the text it was made from. tests/test_shipped.py checks each
#: mirror against its file and rewrites them (``python tests/test_shipped.py``).
MIRRORED = ("links.yaml", "cost_params.yaml", "nccl_releases.yaml")


def mirror_text(text: str) -> str:
    """The JSON mirror of ``text``, a shipped YAML file: its data as :func:`safe_load` reads
    it, with the SHA-256 of ``text``; ValueError where JSON would not give the same data back
    (a key that is not a string, say)."""
    import json

    data = safe_load(text)
    mirrored = mirror_json(text, data)
    if repr(json.loads(mirrored)["data"]) != repr(data):
        raise ValueError("the data does not survive JSON (a key that is not a string?)")
    return mirrored


def mirror_json(text: str, data: Any) -> str:
    """``{"sha256": <the SHA-256 of text>, "data": data}`` as JSON, one line: what a mirror
    made from ``text`` holds (:func:`read_mirror` reads it back)."""
    import hashlib
    import json

    return (
        json.dumps(
            {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "data": data},
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
        )
        + "\n"
    )


def read_mirror(name: str, text: str) -> tuple[Any] | None:
    """``(data,)`` of the mirror ``ibcalc/data/<name>`` (:func:`mirror_json`) when it was made
    from this very ``text`` (its SHA-256); None when there is none, it is damaged, or it was made
    from another text (the source edited since). Nothing is written."""
    import hashlib
    import json
    from importlib import resources

    try:
        mirror = resources.files("ibcalc").joinpath("data", name).read_text("utf-8")
    except (OSError, ValueError):  # none, unreadable, or not UTF-8 (UnicodeDecodeError)
        return None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    # the digest sits first in the mirror: its text is compared before any JSON is parsed
    if not mirror.startswith(f'{{"sha256":"{digest}",'):
        return None
    try:
        return (json.loads(mirror)["data"],)
    except (ValueError, KeyError):  # a damaged mirror
        return None


def shipped_data(name: str, text: str) -> Any:
    """The data of ``text``, the shipped file ``ibcalc/data/<name>``, as :func:`safe_load`
    reads it: from the file's JSON mirror (``<name>.json``) when the mirror was made from this
    very text, which reads in well under a millisecond and without PyYAML; else (no mirror, a
    damaged one, or the YAML edited since it was made) by :func:`safe_load`. Nothing is
    written."""
    mirrored = read_mirror(f"{name}.json", text)
    return safe_load(text) if mirrored is None else mirrored[0]


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class FileKind:
    """A kind of file ibcalc reads, ships or writes: how a message names it, the schema line it
    carries (``schema_key: <one of schemas>...``) and top-level keys only that kind has."""

    what: str
    schemas: tuple[str, ...]
    keys: tuple[str, ...] = ()
    schema_key: str = "schema"
    #: keys that together tell the kind even beside the expected kind's own keys (a report that
    #: repeats a design's ``nodes`` and ``fabric``); empty: ``keys`` alone, after them
    together: tuple[str, ...] = ()


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
    # no schema line, and a design's nodes and fabric beside its own keys (fed back to check,
    # it had given a line for each of 17 keys)
    "design-show": FileKind(
        "a design show report (ibcalc design show --format json)",
        ("ibcalc-design-show/",),
        together=("bandwidths_per_direction", "system_as_written"),
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
    for kind, spec in FILE_KINDS.items():
        if kind != expected and spec.together and all(key in data for key in spec.together):
            return kind
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


def trusted_document(label: str, text: str, *, shipped: str | None = None) -> Document:
    """The document of ``text``, a file shipped with the package, labelled ``label``: read fast
    by :func:`safe_load` (or from its JSON mirror, :func:`shipped_data`, for the file named
    ``shipped``), positioned on demand (:class:`TrustedDocument`). Text libyaml refuses is read
    by :func:`load_yaml`, which says where it is wrong."""
    try:
        data = safe_load(text) if shipped is None else shipped_data(shipped, text)
    except yaml_error():
        return load_yaml(label, text=text)
    return TrustedDocument(path=label, data=data, text=text)


def _format_loc(loc: Iterable[str | int]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            # an empty key would print as nothing: `'': 1` is shown as ''; a key is the user's
            # text, cut as any echo is (a 1,024-character key had been printed whole)
            parts.append(("." if parts else "") + (printable(item) if item != "" else "''"))
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
_YAML11_FORMS: tuple[tuple[Callable[[], re.Pattern[str]], str], ...] = (
    (
        lazy_pattern(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$"),
        "YAML 1.1 would read it as a base-60 number; ibcalc reads it as text (a ratio is "
        "written 2:1 only where a ratio is meant)",
    ),
    (
        lazy_pattern(r"^[-+]?0(?:[xX][0-9a-fA-F_]+|[oO]?[0-7_]+|[bB][01_]+)$"),
        "hex, octal and binary numbers are not read: write it in decimal",
    ),
    (lazy_pattern(r"^[-+]?[0-9]+(?:_[0-9]+)+$"), "write the number without '_'"),
    (lazy_pattern(r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$"), _TRUE_OR_FALSE),
    (lazy_pattern(r"^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$"), "a finite number is needed"),
)


#: A float as YAML 1.1 reads a plain scalar (a point, and a sign in any exponent: ``1.0e+3``);
#: the loader's resolver (:mod:`ibcalc.yamlparse`) and the messages below share it.
YAML_FLOAT = r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+][0-9]+)?"
_QUOTED_FLOAT = lazy_pattern(rf"\s*{YAML_FLOAT}\s*")
#: Why YAML 1.1 left a number with an exponent as text, as the refusals of a count (here) and of
#: a ratio (:mod:`ibcalc.design.schema`) say it.
EXPONENT_AS_TEXT = (
    "YAML reads an exponent as text unless the number has a point and the exponent a sign"
)
#: A number written with a power of ten YAML reads as text (no point or no sign: ``1e3``).
_POWER_TEXT = lazy_pattern(
    r"\s*[-+]?(?:[0-9]+[eE][-+]?[0-9]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][0-9]+)\s*"
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
        if pattern().match(value.strip()):
            if hint == _TRUE_OR_FALSE and what != "true or false":
                # a number's field: 'write true or false' had led to true, read as 1 there
                return f"{shown(value)} is not {what} (YAML 1.1 would read it as true or false)"
            return f"{shown(value)} is not {what}: {hint}"
    if what == "an integer" and re.fullmatch(r"\s*[-+]?(?:0|[1-9][0-9]*)\s*", value):
        # a decimal integer is text only when quoted: nodes: "32" had read "'32' is not an
        # integer", beside "'12' is text, not a number: write it without quotes" for a ratio
        return f"{shown(value)} is text, not an integer: write it without quotes"
    if (
        what == "an integer"
        and _QUOTED_FLOAT().fullmatch(value)
        and float(value.strip()).is_integer()
    ):
        # text YAML would read as a whole number unquoted: nodes: "1.0e+3" had read "'1.0e+3' is
        # not an integer", which it is, as "32" had (stripped first: \s and str.strip() take
        # \x1c as space and float() does not, so "\x1c8.0" had been an internal error)
        return f"{shown(value)} is text, not an integer: write it without quotes"
    if what == "an integer" and _POWER_TEXT().fullmatch(value):
        # nodes: 1e3 had read "'1e3' is not an integer", which it is, where a ratio's field
        # says why YAML left it text
        return (
            f"{shown(value)} is text, not an integer: {EXPONENT_AS_TEXT}; write the count in digits"
        )
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
            message = with_aside(message, closest_hint(error["input"], expected))
        problems.append(ValidationProblem(doc.path, line, col, f"{where}: {message}"))
    return problems
