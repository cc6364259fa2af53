"""The schema of a cluster-design file: pydantic models, quantities with units, JSON Schema.

A design file names a cluster (nodes plus a system preset or an explicit node shape), optionally
its fat-tree fabric (switch, tiers, oversubscription, rails) and a list of requirements:
collective targets (time, busbw, algbw), the intra/inter bandwidth gap, oversubscription and
switch count. Every list here is derived from the one place that owns it: requirement keys of
collectives from :class:`~ibcalc.engine.types.Collective` (``Collective.command``), element types
from :class:`~ibcalc.engine.types.DType`, algorithms from
:class:`~ibcalc.engine.types.Algorithm`, cluster limits from :mod:`ibcalc.cluster.spec`, switch
names from ``data/switches.yaml``. The JSON Schema (:func:`json_schema`) is generated from these
models, so its enums are the same lists.

Choices (docs/architecture.md#design-choices):

* the scale-out link is given once, either as top-level ``inter`` or as ``fabric.link``;
* sizing needs ``fabric.switch`` or ``fabric.radix``; without either,
  ``fabric.oversubscription`` still feeds the engine as declared;
* quantities of a target need a unit (``max_time: 45`` would silently mean seconds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticKnownError, core_schema

from ibcalc.cluster.spec import (
    MAX_GPUS,
    MAX_GPUS_PER_NODE,
    MAX_NICS_PER_NODE,
    MAX_OVERSUBSCRIPTION,
    parse_ratio,
)
from ibcalc.defaults import empty_list
from ibcalc.engine.types import (
    NCCL_ALGORITHM_NAMES,
    Algorithm,
    Collective,
    DType,
    HostCpu,
    algorithm_key,
)
from ibcalc.fabric.sizing import MAX_EXTRA_ENDPOINTS, MAX_RADIX, MAX_TIERS
from ibcalc.fabric.switches import switches
from ibcalc.textsafe import shown
from ibcalc.units import (
    MAX_QUANTITY_CHARS,
    MAX_SIZE_BYTES,
    parse_bandwidth,
    parse_size,
    parse_time,
)
from ibcalc.yamlio import EXPONENT_AS_TEXT, model_keys

__all__ = [
    "COLLECTIVE_KEYS",
    "DESIGN_KEYS",
    "ELSEWHERE_KEYS",
    "FIELD_PATHS",
    "KNOWN_KEYS",
    "MAX_EXTRA_ENDPOINTS",
    "MAX_RADIX",
    "MAX_REQUIREMENTS",
    "OTHER_KEYS",
    "REQUIREMENT_KEYS",
    "WAN_WORDS",
    "CollectiveTarget",
    "Design",
    "FabricSpec",
    "GapTarget",
    "OversubscriptionTarget",
    "RequirementItem",
    "SwitchesTarget",
    "json_schema",
    "parse_ratio",
]

#: Most requirements in one file: a bound on the work (each is an estimate, about 1 ms; 10,000
#: had taken 8 s a file: review BN), far above what a design states.
MAX_REQUIREMENTS = 1_000

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _whole_count(value: Any) -> Any:
    """A count written with a decimal point and nothing after it (``nodes: 4.0``) is that
    count, as ClusterSpec(nodes=4.0) and ``--nodes 4.0`` take it and as JSON Schema's integer
    does (it had been refused, "written with a decimal point: write 4", stricter than the
    library, the command line and the file's own schema). A count that is not whole, NaN and
    infinity stay floats, which the strict int refuses ("is not a whole number"); text and
    true/false stay refused as they were."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _counts(*names: str) -> Any:
    """A model's before-validator reading its count fields ``names`` with :func:`_whole_count`
    (a field validator, outside the fields' bounds, so the JSON Schema keeps them)."""
    return field_validator(*names, mode="before")(staticmethod(_whole_count))


class _NullIsOmitted(BaseModel):
    """A design model whose optional keys given as null are the keys omitted (``sharp:`` with
    nothing after it is ``sharp: false``), as docs/design-files.md says and the JSON Schema
    takes (:class:`_DesignSchema`): keys whose default is null took it already, the others
    (``sharp``, ``rail_optimized``, ``dtype``, ``requirements`` ...) had been refused as
    "Input should be a valid boolean" or "null is not a list" (review CC: a file whose
    requirements are all commented out failed even with --allow-empty)."""

    @model_validator(mode="before")
    @classmethod
    def _null_is_omitted(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields
        return {
            key: value
            for key, value in data.items()
            if value is not None
            or key not in fields
            or fields[key].is_required()
            or fields[key].default is None
        }


def _unit_value(parse: Callable[[Any], float]) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        if isinstance(value, bool):
            # YAML's word, not Python's True (review CW)
            raise ValueError(f"{'true' if value else 'false'} is not a quantity")
        if isinstance(value, str | int | float):
            return parse(value)
        return value

    return convert


def _needs_unit(
    parse: Callable[[Any], float],
    what: str,
    example: str,
    allowed: tuple[float, float, str],
) -> Callable[[Any], Any]:
    """Like ``_unit_value`` but refuse bare numbers: in a CI gate ``max_time: 45`` or
    ``min_busbw: 300`` is ambiguous and would silently mean seconds or bytes per second. The
    value must also lie in ``allowed`` (low, high, how the range is said)."""
    low, high, words = allowed

    def convert(value: Any) -> Any:
        if isinstance(value, bool):
            # YAML's word, not Python's True (review CW)
            raise ValueError(f"{'true' if value else 'false'} is not a quantity")
        if isinstance(value, float) and not math.isfinite(value):
            # YAML reads 1.0e+400 as inf: "time inf needs a unit" had hidden why (a review)
            raise ValueError(
                f"{what} {shown(value)} is not a finite number (YAML reads a number too large "
                "for a float as inf or -inf)"
            )
        if isinstance(value, int | float) or (
            isinstance(value, str) and re.fullmatch(r"\s*[-+0-9.eE]+\s*", value)
        ):
            raise ValueError(f"{what} {shown(value)} needs a unit (e.g. {example})")
        if isinstance(value, str):
            number = parse(value)
            if not low <= number <= high:
                raise ValueError(f"{what} {shown(value)} is out of range: allowed {words}")
            return number
        return value

    return convert


#: Sane ranges of the targets (a target outside passes or fails whatever the cluster).
MIN_TARGET_TIME_S, MAX_TARGET_TIME_S = 1e-9, 365.0 * 24 * 3600
MIN_TARGET_BPS, MAX_TARGET_BPS = 1e3, 1e15
MIN_GAP_RATIO, MAX_GAP_RATIO = 0.01, 10_000.0
MAX_SWITCHES = 1_000_000

#: Text forms of the quantities, as the JSON Schema states them; tests check that the loader
#: reads every string these accept and refuses those they refuse (tests/design/test_schema.py).
NUMBER_PATTERN = r"[+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
# a number that is all zeros is refused (a collective needs at least one byte); a lower-case m
# before B is milli, refused (64mB, 1miB), while 8m and 1mi are MiB as nccl-tests reads them
SIZE_PATTERN = (
    r"^(?!\s*\+?0*\.?0*(?:[eE][-+]?[0-9]+)?\s*[A-Za-z]*\s*$)"
    rf"\s*{NUMBER_PATTERN}\s*(?:[kKMgGtTpP][iI]?B?|m[iI]?|B)?\s*$"
)
# a time that is all zeros is refused too; nsec, usec and msec are read as sec is, in any case
# but a capital M for milli, which the reader refuses as mega (a review: '10 msec' and '2 MIN',
# which check reads, had failed the schema)
_TIME_UNIT = (
    r"(?:[nN][sS](?:[eE][cC])?|[uU][sS](?:[eE][cC])?|µs|μs|[µμ]S|m[sS](?:[eE][cC])?"
    r"|[sS](?:[eE][cC])?|[mM][iI][nN]|[hH])"
)
TIME_PATTERN = (
    r"^(?!\s*\+?0*\.?0*(?:[eE][-+]?[0-9]+)?\s*[A-Za-zµμ]*\s*$)"
    rf"\s*{NUMBER_PATTERN}\s*{_TIME_UNIT}\s*$"
)
# a rate of zero is refused; so are a lower-case m (milli) without i, and g, t or p before a bare
# lower-case b (50gb/s: bits or bytes?), as the reader refuses them (a review: the schema had
# taken 40mb/s and 300 gb/s)
_RATE_UNIT = r"(?:b|B|bits?|bytes?|Bytes?)"
RATE_PATTERN = (
    r"^(?!\s*\+?0*\.?0*(?:[eE][-+]?[0-9]+)?\s*[A-Za-z]*\s*(?:/\s*s|ps|/sec)\s*$)"
    rf"\s*{NUMBER_PATTERN}\s*(?:(?:[kKMGTP]i?|mi)?{_RATE_UNIT}|[gtp]i?(?:B|bits?|bytes?|Bytes?))"
    r"\s*(?:/\s*s|ps|/sec)\s*$"
)


Size = Annotated[
    float,
    BeforeValidator(_unit_value(parse_size)),
    WithJsonSchema(
        {
            "anyOf": [
                # the reader's bound on a quantity's text (review BS: the schema had passed 104
                # characters the reader refused)
                {"type": "string", "pattern": SIZE_PATTERN, "maxLength": MAX_QUANTITY_CHARS},
                {"type": "number", "minimum": 1, "maximum": MAX_SIZE_BYTES},
            ],
            "description": "Bytes: 10GB (10^10 B), 1GiB, 64MB, 1e9, 4096 (1 B to 1 PiB); "
            "10Gb (bits) is refused.",
        }
    ),
]
Duration = Annotated[
    float,
    BeforeValidator(
        _needs_unit(
            lambda v: parse_time(v, allow_zero=False),
            "time",
            "40ms, 250us, 1.5s",
            (MIN_TARGET_TIME_S, MAX_TARGET_TIME_S, "1 ns to 1 year"),
        )
    ),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": TIME_PATTERN,
            "maxLength": MAX_QUANTITY_CHARS,
            "description": "Time with a unit: 40ms, 250us, 1.5s (1 ns to 1 year).",
        }
    ),
]
Rate = Annotated[
    float,
    BeforeValidator(
        _needs_unit(
            parse_bandwidth,
            "bandwidth",
            "300GB/s or 400Gb/s",
            (MIN_TARGET_BPS, MAX_TARGET_BPS, "1 kB/s to 1 PB/s"),
        )
    ),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": RATE_PATTERN,
            "maxLength": MAX_QUANTITY_CHARS,
            "description": "Bandwidth per direction with a unit: 300GB/s (bytes), 400Gb/s "
            "(bits); 1 kB/s to 1 PB/s.",
        }
    ),
]


def _a_number(value: Any) -> Any:
    """A number as YAML writes one: not a boolean, nor text that reads as a number
    (``max_ratio: true`` had been read as 1 and ``"12"`` as 12, which the schema refuses,
    review BH). Anything else goes on to the number check, whose messages say what it is
    (``null``, a list, ``.inf``, ``0x10``; review BI)."""
    if isinstance(value, bool):
        raise PydanticKnownError("float_type")
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value
        # the hint only where it is sure (review BJ: 'inf' had been told to drop quotes it did
        # not have, and 5e-1 to be written 1.0e+4)
        # (ASCII digits only: '١٢' is text either way, review BK)
        exponent = re.fullmatch(r"\s*([+-]?[0-9]+)(\.[0-9]*)?[eE]([+-]?)([0-9]+)\s*", value)
        plain = re.fullmatch(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)\s*", value)
        hint = (
            f": {EXPONENT_AS_TEXT} (write "
            f"{exponent[1]}{exponent[2] if exponent[2] and len(exponent[2]) > 1 else '.0'}"
            f"e{exponent[3] or '+'}{exponent[4]}, without quotes)"
            if exponent
            else ": write it without quotes"
            if plain
            else ""
        )
        raise ValueError(f"{shown(value)} is text, not a number{hint}")
    return value


GapRatio = Annotated[
    float,
    Field(ge=MIN_GAP_RATIO, le=MAX_GAP_RATIO, allow_inf_nan=False),
    BeforeValidator(_a_number),
]


def _ratios(value: Any) -> Any:
    if isinstance(value, list | tuple):
        if not 1 <= len(value) <= MAX_TIERS - 1:
            # [2, 2, 2] for three tiers had read only the first half of this: the top tier has
            # no uplinks, so three levels take two ratios
            raise ValueError(
                "oversubscription takes one ratio, or a list [leaf, spine]: "
                f"{len(value)} given" + (" (the top tier has no uplinks to taper)" if value else "")
            )
        return tuple(parse_ratio(v) for v in value)
    return (parse_ratio(value),)


def _ratio_text_schemas() -> list[dict[str, Any]]:
    """The string forms of a ratio the JSON Schema accepts, each agreeing with
    :func:`parse_ratio`: ``"X"`` and ``"X:1"`` with X from 1 to 64 (decimals allowed), and
    ``"N:M"`` of whole numbers (up to 4 digits, M >= 2) with N >= M. A regular expression cannot
    compare two numbers, so N >= M is said as "not N < M": N with fewer digits than M, or the
    first differing digit of N smaller (a back-reference keeps the common prefix equal). Not
    said: N/M <= 64 when M >= 2 (``"130:2"`` passes the schema, the loader refuses it)."""
    up_to_64 = r"(?:(?:[1-9]|[1-5][0-9]|6[0-3])(?:\.[0-9]+)?|64(?:\.0+)?)"
    one = r"1(?:\.0+)?"
    whole = r"[1-9][0-9]{0,3}"
    less = [rf"[1-9][0-9]{{{d - 1}}}\s*:\s*[1-9][0-9]{{{d},}}" for d in range(1, 4)]
    group = 0
    for digit in range(9):
        for rest in range(4):
            group += 1
            less.append(
                rf"([0-9]*){digit}[0-9]{{{rest}}}\s*:\s*\{group}[{digit + 1}-9][0-9]{{{rest}}}"
            )
    return [
        {"type": "string", "pattern": rf"^\s*{up_to_64}\s*(?::\s*{one}\s*)?$"},
        {
            "type": "string",
            "pattern": rf"^\s*{whole}\s*:\s*(?:[2-9]|[1-9][0-9]{{1,3}})\s*$",
            "not": {"pattern": rf"^\s*(?:{'|'.join(less)})\s*$"},
        },
    ]


_RATIO_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "number", "minimum": 1, "maximum": MAX_OVERSUBSCRIPTION},
        *_ratio_text_schemas(),
    ]
}
Oversubscription = Annotated[
    tuple[float, ...],
    BeforeValidator(_ratios),
    WithJsonSchema(
        {
            "anyOf": [
                *_RATIO_SCHEMA["anyOf"],
                {
                    "type": "array",
                    "items": _RATIO_SCHEMA,
                    "minItems": 1,
                    "maxItems": MAX_TIERS - 1,
                },
            ],
            "description": "Down:up bandwidth ratio, >= 1: 1 (non-blocking), 2, '3:1', or a "
            "per-tier list [leaf, spine].",
        }
    ),
]


def _switch_examples(schema: dict[str, Any]) -> None:
    """The switch ids of data/switches.yaml, read when the JSON Schema is generated."""
    schema["examples"] = sorted(switches())


def _any_case(names: list[str]) -> dict[str, Any]:
    """A string that is one of ``names`` in any case, with spaces around it: what a reader that
    strips and lower-cases its input takes (an enum alone had refused ``BF16`` and ``NVLSTree``,
    which the loader reads, a review). Each letter is a class of its two cases: JSON Schema's
    regular expressions (ECMA-262) have no case-insensitive flag."""
    # the names are letters, digits, '_' and '-', none a regular expression's own character
    spelled = (
        "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in name)
        for name in dict.fromkeys(names)
    )
    return {"type": "string", "pattern": rf"^\s*(?:{'|'.join(spelled)})\s*$"}


def _dtype_enum(schema: dict[str, Any]) -> None:
    """Every element type spelling :meth:`DType.parse` takes (members and nccl-tests names):
    the names as an enum (for an editor's completion), or any of them in any case."""
    names = DType.names()
    schema.pop("type", None)
    schema["anyOf"] = [{"type": "string", "enum": names}, _any_case(names)]


def _algorithm_names(schema: dict[str, Any]) -> None:
    """The algorithms as :func:`~ibcalc.engine.types.algorithm_key` reads them: ibcalc's names
    (the enum) or NCCL's (``CollnetDirect``, ``NVLSTree``), in any case."""
    spelled = _any_case([*(a.value for a in Algorithm), *NCCL_ALGORITHM_NAMES])
    if "$ref" in schema:
        schema["anyOf"] = [{"$ref": schema.pop("$ref")}, spelled]
    else:  # [the enum, null]
        schema["anyOf"] = [*schema.get("anyOf", []), spelled]


def _names_any_case(schema: dict[str, Any]) -> None:
    """An enum or constant of names (``host_cpu``, ``topology``) taken in any case, with spaces
    around it, as :func:`_lower_name` reads it: its enum for an editor, or any spelling."""
    kept = [s for s in schema.get("anyOf", [schema]) if s != {"type": "null"}]
    names = [n for s in kept for n in (s.get("enum") or [s["const"]])]
    plain = [{k: v for k, v in s.items() if k not in _SAID} for s in kept]
    for key in ("enum", "const", "type"):
        schema.pop(key, None)
    schema["anyOf"] = [*plain, _any_case(names)] + (
        [{"type": "null"}] if len(kept) < len(schema.get("anyOf", [])) else []
    )


def _lower_name(value: object) -> object:
    """A name read in any case, with spaces around it (``host_cpu: AMD``, ``topology:
    Fat-Tree``), as docs/design-files.md says of every name (review CC: they had been
    refused)."""
    return value.strip().lower() if isinstance(value, str) else value


def _given(key: str, value: dict[str, Any] | None = None) -> dict[str, Any]:
    """JSON Schema: ``key`` is present and not null (or matches ``value``)."""
    return {"required": [key], "properties": {key: value or {"not": {"type": "null"}}}}


def _sized_fabric_rules(schema: dict[str, Any]) -> None:
    """What :meth:`FabricSpec._switch_or_radix` refuses, said in the schema: not both switch and
    radix; tiers, extra_endpoints or rail_optimized false only with one of them (the schema had
    taken them without, review BH)."""
    sized = {"anyOf": [_given("switch"), _given("radix")]}
    schema["allOf"] = [
        {"not": {"allOf": [_given("switch"), _given("radix")]}},
        {
            "if": {
                "anyOf": [
                    _given("tiers"),
                    _given("extra_endpoints"),
                    _given("rail_optimized", {"const": False}),
                ]
            },
            "then": sized,
        },
    ]


#: Both ways of sizing a fabric given.
_BOTH = "give either switch or radix, not both"


class FabricSpec(_NullIsOmitted):
    """The scale-out fabric: link, fat-tree shape and switch."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=_sized_fabric_rules)

    link: str | None = Field(
        default=None, description="Scale-out link id (ndr, hdr, roce-400g ...); default: system's."
    )
    topology: Annotated[Literal["fat-tree"], BeforeValidator(_lower_name)] = Field(
        default="fat-tree",
        description="Only fat-tree for now.",
        json_schema_extra=_names_any_case,
    )
    tiers: StrictInt | None = Field(
        default=None,
        ge=1,
        le=MAX_TIERS,
        description="Switch levels (1-3); default: the fewest that fit.",
    )
    switch: str | None = Field(
        default=None,
        description="Switch model (its port count at the NIC rate is the radix).",
        json_schema_extra=_switch_examples,
    )
    radix: StrictInt | None = Field(
        default=None,
        ge=2,
        le=MAX_RADIX,
        description="Ports per switch at the NIC rate (no switch).",
    )
    rail_optimized: StrictBool = Field(
        default=True, description="NIC i of every node on leaf i of its scalable unit."
    )
    oversubscription: Oversubscription = (1.0,)
    sharp: StrictBool = Field(default=False, description="In-network reduction (IB SHARP).")
    extra_endpoints: StrictInt = Field(
        default=0,
        ge=0,
        le=MAX_EXTRA_ENDPOINTS,
        description="Non-compute leaf ports, e.g. 4 for UFM in an NVIDIA SuperPOD.",
    )
    _whole = _counts("tiers", "radix", "extra_endpoints")

    @model_validator(mode="wrap")
    @classmethod
    def _not_both(cls, data: Any, handler: Callable[[Any], FabricSpec]) -> FabricSpec:
        """Switch and radix together, said beside the fabric's other problems: an after-check
        runs only on a valid fabric, so 'oversubscription: 0.5' had hidden it until mended
        (review DJ; the JSON Schema flags both at once)."""
        both = isinstance(data, dict) and all(data.get(k) is not None for k in ("switch", "radix"))
        try:
            spec = handler(data)
        except ValidationError as exc:
            if not both:
                raise
            errors: list[Any] = [
                {k: v for k, v in e.items() if k in ("type", "loc", "input", "ctx")}
                for e in exc.errors(include_url=False)
            ]
            errors.append(
                {
                    "type": "value_error",
                    "loc": (),
                    "input": data,
                    "ctx": {"error": ValueError(_BOTH)},
                }
            )
            try:
                joined = ValidationError.from_exception_data(exc.title, errors)
            except (TypeError, ValueError, KeyError):  # an error type that cannot be rebuilt
                raise exc from None
            raise joined from None
        if both:
            raise ValueError(_BOTH)
        return spec

    @model_validator(mode="after")
    def _switch_or_radix(self) -> FabricSpec:
        if self.switch is None and self.radix is None:
            for key in ("tiers", "extra_endpoints"):
                if key in self.model_fields_set and getattr(self, key) is not None:  # null: omitted
                    raise ValueError(f"{key} needs switch or radix to size the fabric")
            if not self.rail_optimized:
                # the rails shape the sized fabric's leaves (and from them the cross-leaf
                # fraction); unsized, every byte is taken to cross leaves, so false would be
                # ignored (true, the default, asks for nothing)
                raise ValueError("rail_optimized: false needs switch or radix to size the fabric")
        return self


class CollectiveTarget(_NullIsOmitted):
    """A collective of `size` bytes and at least one target for it."""

    size: Size
    max_time: Duration | None = None
    min_busbw: Rate | None = None
    min_algbw: Rate | None = None
    algo: Algorithm | None = Field(
        default=None,
        description="Force one algorithm; default: NCCL-like choice.",
        json_schema_extra=_algorithm_names,
    )
    dtype: str = Field(
        default=DType.FP32.value,
        description="Element type: fp32, bf16, fp8 ...",
        json_schema_extra=_dtype_enum,
    )

    @field_validator("algo", mode="before")
    @classmethod
    def _nccl_algorithm_name(cls, value: object) -> object:
        """Any case, and NCCL's own names (``NVLSTree``, ``CollnetDirect``), as ``--algo`` takes
        them (a design file had refused what the command line ran: a review)."""
        return algorithm_key(value) if isinstance(value, str) else value

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        try:
            return DType.parse(value).value
        except ValueError:
            from ibcalc.facade import dtype_suggestions

            close = dtype_suggestions(value, n=1)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ValueError(f"unknown dtype {shown(value)}{hint}") from None

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        json_schema_extra={
            # a target given, not null ('max_time: null' alone is no target)
            "anyOf": [
                {"required": [key], "properties": {key: {"not": {"type": "null"}}}}
                for key in ("max_time", "min_busbw", "min_algbw")
            ]
        },
    )

    @model_validator(mode="after")
    def _has_target(self) -> CollectiveTarget:
        if self.max_time is None and self.min_busbw is None and self.min_algbw is None:
            raise ValueError("give at least one target: max_time, min_busbw or min_algbw")
        return self


class GapTarget(BaseModel):
    """Largest allowed ratio of per-GPU scale-up to scale-out line rate."""

    model_config = _FROZEN

    max_ratio: GapRatio


class OversubscriptionTarget(BaseModel):
    """Largest allowed down:up ratio of any fabric tier (2 or '2:1')."""

    model_config = _FROZEN

    # read as fabric.oversubscription is: the target had refused "2:1", which the fabric takes
    max: Annotated[
        float,
        BeforeValidator(parse_ratio),
        WithJsonSchema({**_RATIO_SCHEMA, "description": "Largest down:up ratio: 2 or '2:1'."}),
    ]


class SwitchesTarget(BaseModel):
    """Largest allowed number of fabric switches (leaf + spine + core)."""

    model_config = _FROZEN

    max: Annotated[StrictInt, Field(ge=1, le=MAX_SWITCHES)]
    _whole = _counts("max")


#: Requirement keys naming a collective (``Collective.command``: allreduce, alltoall ...).
COLLECTIVE_KEYS: dict[str, Collective] = {c.command: c for c in Collective}
#: The other requirement keys and the target each takes.
_OTHER_TARGETS: dict[str, type[BaseModel]] = {
    "gap": GapTarget,
    "oversubscription": OversubscriptionTarget,
    "switches": SwitchesTarget,
}
OTHER_KEYS: tuple[str, ...] = tuple(_OTHER_TARGETS)
#: A target of each non-collective requirement, shown where one is missing.
_EXAMPLE_TARGETS = {
    "gap": "{max_ratio: 12}",
    "oversubscription": "{max: 2}",
    "switches": "{max: 24}",
}
#: Every requirement key, in the order the schema lists them.
REQUIREMENT_KEYS: tuple[str, ...] = (*COLLECTIVE_KEYS, *OTHER_KEYS)

Target = CollectiveTarget | GapTarget | OversubscriptionTarget | SwitchesTarget


def _one_target(schema: dict[str, Any]) -> None:
    """A requirement's one key holds its target, never null (``- allreduce:`` with nothing under
    it is refused by name)."""
    schema["minProperties"] = schema["maxProperties"] = 1
    for key, value in schema.get("properties", {}).items():
        kept = [s for s in value.get("anyOf", []) if s != {"type": "null"}]
        if len(kept) == 1:
            schema["properties"][key] = {
                **kept[0],
                **{k: v for k, v in value.items() if k != "anyOf"},
            }


class _Requirement(BaseModel):
    """One requirement: a mapping with exactly one key (its fields: :data:`REQUIREMENT_KEYS`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=_one_target)

    @model_validator(mode="before")
    @classmethod
    def _one_key_form(cls, data: Any) -> Any:
        # the flat form other tools use ({collective: allreduce, size: ...}) gets one clear
        # line instead of an "unknown key" per field
        if (
            isinstance(data, dict)
            and "collective" in data
            and not set(data) & set(REQUIREMENT_KEYS)
        ):
            name = data["collective"] if isinstance(data["collective"], str) else "allreduce"
            raise ValueError(
                f"a requirement is one key naming what it checks, e.g. '- {name}: {{size: 1GB, "
                "max_time: 10ms}', not 'collective: ...' beside its targets"
            )
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _not_null(cls, value: Any, info: ValidationInfo) -> Any:
        # '- broadcast:' had read "empty requirement: use one of allreduce, ..., broadcast, ...",
        # and a null key beside another requirement's had been dropped (the JSON Schema refuses
        # it)
        if value is None:
            example = _EXAMPLE_TARGETS.get(str(info.field_name), "{size: 1GB, max_time: 10ms}")
            raise ValueError(
                f"nothing is given under it: give its target, e.g. '- {info.field_name}: "
                f"{example}', or remove it"
            )
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> _Requirement:
        given = [key for key in REQUIREMENT_KEYS if getattr(self, key) is not None]
        if not given:
            raise ValueError("empty requirement: use one of " + ", ".join(REQUIREMENT_KEYS))
        if len(given) > 1:
            raise ValueError(
                f"one requirement per list item, found {', '.join(given)} (start each with '- ')"
            )
        return self

    @property
    def kind(self) -> str:
        """The requirement's key (allreduce, gap ...)."""
        for key in REQUIREMENT_KEYS:
            if getattr(self, key) is not None:
                return key
        raise AssertionError("validated requirement has no key")  # pragma: no cover

    @property
    def target(self) -> Target:
        """The target under the requirement's key."""
        value: Target = getattr(self, self.kind)
        return value

    @property
    def collective(self) -> Collective | None:
        """The engine's collective of a collective requirement, else None."""
        return COLLECTIVE_KEYS.get(self.kind)


if TYPE_CHECKING:
    RequirementItem = _Requirement
else:
    # one optional field per requirement key, the collective ones derived from Collective
    RequirementItem = create_model(
        "RequirementItem",
        __base__=_Requirement,
        __doc__="One requirement: a mapping with exactly one key.",
        __module__=__name__,
        **dict.fromkeys(COLLECTIVE_KEYS, (CollectiveTarget | None, None)),
        **{key: (model | None, None) for key, model in _OTHER_TARGETS.items()},
    )


#: A character a name shows: none of the characters Python or JavaScript (an editor's JSON
#: Schema) call space, control characters, or the format and filler characters of the Basic
#: Multilingual Plane that print nothing (zero-width, direction marks, soft hyphen, variation
#: selectors, Hangul fillers, the braille blank, interlinear annotation marks; reviews CI, CJ).
#: One class, written so that both regex engines read it alike (Python's strip() and
#: JavaScript's \S had disagreed on U+001C, U+0085 and U+FEFF: review CH). Characters past the
#: Basic Multilingual Plane (tags, variation selectors 17-256) are not listed: a JSON Schema
#: pattern reads them as surrogate pairs where its engine lacks the u flag.
VISIBLE_PATTERN = (
    "[^\\t\\n\\v\\f\\r \\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u115f"
    "\\u1160\\u1680\\u17b4\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f"
    "\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb]"
)


def _visible(name: str) -> str:
    """A design's name shows in every report header: spaces alone printed none."""
    if not re.search(VISIBLE_PATTERN, name):
        raise ValueError("the name is blank: give it a visible character")
    return name


def _link_once(schema: dict[str, Any]) -> None:
    """What the loader refuses, said in the schema: the scale-out link as ``inter`` or as
    ``fabric.link``, not both (the schema had taken both: review DJ)."""
    # the fabric an object holding a link ('fabric: null' is the fabric omitted, and would pass
    # required/properties vacuously: review DK)
    fabric = {"type": "object", **_given("link")}
    schema["not"] = {"allOf": [_given("inter"), _given("fabric", fabric)]}


class Design(_NullIsOmitted):
    """A cluster design: the cluster, its fabric, and the requirements CI checks."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(
        frozen=True, extra="forbid", title="ibcalc cluster design", json_schema_extra=_link_once
    )

    name: Annotated[str, AfterValidator(_visible)] = Field(
        min_length=1,
        max_length=200,
        description="Name shown in reports.",
        # a visible character, as _visible asks (the schema had passed '   ': a review)
        json_schema_extra={"pattern": VISIBLE_PATTERN},
    )
    description: str | None = None
    nodes: StrictInt = Field(ge=1, le=MAX_GPUS, description="Number of nodes (GB200: trays).")
    system: str | None = Field(
        default=None, description="System preset (dgx-h100, gb200-nvl72, aws-p5 ...)."
    )
    gpus_per_node: StrictInt | None = Field(default=None, ge=1, le=MAX_GPUS_PER_NODE)
    intra: str | None = Field(default=None, description="Scale-up link id.")
    nics_per_node: StrictInt | None = Field(
        default=None, ge=1, le=MAX_NICS_PER_NODE, description="Scale-out NICs (rails) per node."
    )
    inter: str | None = Field(default=None, description="Scale-out link id; or fabric.link.")
    host_pcie: str | None = Field(default=None, description="NIC's PCIe link.")
    host_cpu: Annotated[HostCpu | None, BeforeValidator(_lower_name)] = Field(
        default=None,
        description="Host CPU family (NCCL's per-step network overhead: 2 us on AMD, else 1 us).",
        json_schema_extra=_names_any_case,
    )
    nvls: StrictBool | None = Field(
        default=None, description="Allow NVLink SHARP (default: when present)."
    )
    scale_up_domain: StrictInt | None = Field(
        default=None,
        ge=1,
        le=MAX_GPUS,
        description="GPUs per NVLink domain where the system's spans nodes: whole nodes, at "
        "most the system's (gb200-nvl72: 36 for two NVL36 halves; default: the system's).",
    )
    fabric: FabricSpec | None = None
    requirements: list[RequirementItem] = Field(
        default_factory=empty_list, max_length=MAX_REQUIREMENTS
    )
    _whole = _counts("nodes", "gpus_per_node", "nics_per_node", "scale_up_domain")

    @property
    def inter_link(self) -> str | None:
        """The scale-out link named by ``inter`` or ``fabric.link``."""
        if self.inter is not None:
            return self.inter
        return self.fabric.link if self.fabric is not None else None

    @property
    def declared_oversubscription(self) -> float:
        """``fabric.oversubscription`` end to end, its tiers' ratios multiplied (1 without a
        fabric): what the file declares, before a sized fabric's split or one scale-up domain
        changes what is priced."""
        return math.prod(self.fabric.oversubscription) if self.fabric is not None else 1.0


#: Where each :class:`~ibcalc.cluster.spec.ClusterSpec` field lives in a design file: the YAML
#: paths that set it, the first one present in the file wins (``inter`` or ``fabric.link``).
FIELD_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "nodes": (("nodes",),),
    "gpus_per_node": (("gpus_per_node",),),
    "nics_per_node": (("nics_per_node",),),
    "intra": (("intra",),),
    "inter": (("inter",), ("fabric", "link")),
    "system": (("system",),),
    "host_pcie": (("host_pcie",),),
    "host_cpu": (("host_cpu",),),
    "sharp": (("fabric", "sharp"),),
    "nvls": (("nvls",),),
    "scale_up_domain": (("scale_up_domain",),),
    "oversubscription": (("fabric", "oversubscription"),),
    "cross_leaf_fraction": (("fabric",),),
    "neighbour_cross_leaf_fraction": (("fabric",),),
    "unaligned_cross_leaf_fraction": (("fabric",),),
    "leaf_group_nodes": (("fabric",),),
}

#: How messages name each ClusterSpec field when the file does not set it (never ``--sharp``).
DESIGN_KEYS: dict[str, str] = {
    "nodes": "nodes",
    "gpus_per_node": "gpus_per_node",
    "nics_per_node": "nics_per_node",
    "intra": "intra",
    "inter": "inter (or fabric.link)",
    "system": "system",
    "host_pcie": "host_pcie",
    "host_cpu": "host_cpu",
    "sharp": "fabric.sharp",
    "nvls": "nvls",
    "scale_up_domain": "scale_up_domain",
    "oversubscription": "fabric.oversubscription",
    "cross_leaf_fraction": "the fabric layout",
    "neighbour_cross_leaf_fraction": "the fabric layout",
    "unaligned_cross_leaf_fraction": "the fabric layout",
    "leaf_group_nodes": "the fabric layout",
}


#: What a design file says of sites: a WAN key, or a WAN link given as its scale-out link.
WAN_WORDS = (
    "design files have no WAN keys: sites are a what-if of the estimate and workload commands "
    "(ibcalc allreduce ... --sites N --wan LINK, with --wan-links, --distance or --rtt)"
)
#: Keys ibcalc takes elsewhere but not in a design file, with what to do instead (``sites`` had
#: been offered "did you mean inter?").
ELSEWHERE_KEYS: dict[str, str] = {
    **dict.fromkeys(("sites", "wan", "wan_links", "distance", "rtt"), WAN_WORDS),
    # 'fabric.rails' had been offered "did you mean radix?" (review DJ): a rail is a NIC
    "rails": (
        "a rail is one NIC of each node: give nics_per_node (top level); fabric.rail_optimized "
        "says whether each rail has leaves of its own (true by default)"
    ),
}
#: Every key a design file may use at any level (for "did you mean" hints).
KNOWN_KEYS: frozenset[str] = model_keys(Design)


class _DesignSchema(GenerateJsonSchema):
    """An optional key may be null, as the loader reads it (``fabric:`` with nothing under it
    is the default fabric; the schema had refused it, a review), with no ``"default": null``."""

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        result = super().default_schema(schema)
        if result.get("default", 0) is None:
            result = {k: v for k, v in result.items() if k != "default"}
        return result


#: Keys of a property's schema that describe it rather than constrain its value.
_SAID = ("default", "description", "title", "examples")


def _null_takes(properties: dict[str, Any], model: type[BaseModel]) -> None:
    """Each of ``model``'s optional keys whose default is not null takes null in ``properties``
    too, as the key omitted (:class:`_NullIsOmitted`): added to its ``anyOf``, or its value's
    schema made one branch of an ``anyOf`` beside null."""
    for key, field in model.model_fields.items():
        if field.is_required() or field.default is None or key not in properties:
            continue
        prop = properties[key]
        if "anyOf" in prop:
            if {"type": "null"} not in prop["anyOf"]:
                prop["anyOf"] = [*prop["anyOf"], {"type": "null"}]
            continue
        value = {k: v for k, v in prop.items() if k not in _SAID}
        properties[key] = {
            **{k: v for k, v in prop.items() if k in _SAID},
            "anyOf": [value, {"type": "null"}],
        }


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a design file, for editors and CI."""
    schema = Design.model_json_schema(schema_generator=_DesignSchema)
    _null_takes(schema["properties"], Design)
    for model in (FabricSpec, CollectiveTarget):
        _null_takes(schema["$defs"][model.__name__]["properties"], model)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
