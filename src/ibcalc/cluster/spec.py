"""What the user asked for: :class:`ClusterSpec`, each field optional, each limit defined once.

Command-line flags, design-file keys and the library API all build a ``ClusterSpec``; the limits
below are the only place the accepted ranges live (the CLI, the design schema and the error
messages read them from here). Errors name the *field* (``nodes``), never a flag or a YAML key:
see :class:`~ibcalc.errors.ClusterError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from functools import partial
from typing import Annotated, Any, Self, TypeVar

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ibcalc.booleans import NoBoolNumbers, is_boolean
from ibcalc.engine.types import HostCpu
from ibcalc.errors import ClusterError, entry_given
from ibcalc.patterns import lazy_pattern
from ibcalc.textsafe import closest_hint
from ibcalc.textsafe import shown as echo
from ibcalc.units import UNSIGNED_NUMBER, as_float, format_oversubscription

__all__ = [
    "MAX_GPUS",
    "MAX_GPUS_PER_NODE",
    "MAX_NICS_PER_NODE",
    "MAX_OVERSUBSCRIPTION",
    "MAX_SITES",
    "MAX_WAN_LATENCY_S",
    "MAX_WAN_LINKS",
    "MIN_TP_GPUS",
    "ClusterSpec",
    "parse_ratio",
]

#: Largest cluster accepted (GPUs); beyond this the question is not about one job.
MAX_GPUS = 1_000_000
#: Most GPUs in one node (a scale-up domain larger than a node is a system preset's business).
MAX_GPUS_PER_NODE = 1024
#: Fewest GPUs per node ``gap`` compares: the scale-up side needs two GPUs that talk inside a node.
MIN_PAIRING_GPUS_PER_NODE = 2
#: Fewest GPUs ``gap``'s tensor-parallel what-if splits an all-reduce over.
MIN_TP_GPUS = 2
#: Most scale-out NICs in one node.
MAX_NICS_PER_NODE = 256
#: Most sites joined by a WAN, and WAN links per site.
MAX_SITES = 1024
MAX_WAN_LINKS = 1024
#: Longest one-way WAN latency accepted (s): a geostationary satellite hop is about 0.25 s.
MAX_WAN_LATENCY_S = 1.0
#: Largest leaf oversubscription (down:up) accepted: 64:1 is already a storage network, not a
#: training fabric; beyond it a number is more likely a typo than a design.
MAX_OVERSUBSCRIPTION = 64.0

#: One side of a ratio: a plain decimal number in ASCII digits (no sign, separator or other
#: script's digits, which Fraction and float would read).
_PLAIN_RATIO = lazy_pattern(rf"^{UNSIGNED_NUMBER}$")


#: The largest decimal exponent a ratio's side is read exactly with (a float's is 308).
_MAX_EXACT_EXPONENT = 400


def _exponent(text: str) -> int:
    """The decimal exponent written in ``text`` (``1e3`` is 3; none is 0)."""
    mark = max(text.rfind("e"), text.rfind("E"))
    digits = text[mark + 1 :].lstrip("+-") if mark >= 0 else ""
    return int(digits[:6]) if digits.isdigit() else 0


#: The most down ports of the simple ratio a decimal under 1 is taken as the inverse of
#: (:func:`_inverse`): 0.14 is 1/7 (7:1), 0.1 is 1/10 itself.
_SIMPLE_DOWN = 10


def _inverse(ratio: float, value: object) -> float:
    """The down:up ratio a decimal under 1 was likely written for (docs/design-files.md): the
    up/down of at most :data:`_SIMPLE_DOWN` down nearest the decimal, where it rounds to the
    decimal at the decimal's own places (0.33 is 1/3: 3:1; 0.67 is 2/3: 1.5:1; 0.4 is 2/5:
    2.5:1; 0.3 is 3/10 itself: 3.33:1); else the decimal's exact inverse (0.66: 1.52:1). A
    ratio written down:up ('33:100') is exact, and so is its inverse."""
    text = repr(value) if isinstance(value, float) else value
    if not isinstance(text, str) or not _PLAIN_RATIO().match(text.strip()):
        return 1 / ratio
    # exact: the caller asks only for a ratio from 1/64 to 1, so the exponent written is no
    # longer than the digits before it (1e-99999999 is 0, and has no hint)
    written = Fraction(text.strip())
    exponent = Decimal(text.strip()).as_tuple().exponent
    assert isinstance(exponent, int)  # a finite number
    near = written.limit_denominator(_SIMPLE_DOWN)
    if abs(near - written) <= Fraction(1, 2) * Fraction(10) ** exponent:
        return float(1 / near)
    return 1 / ratio


def parse_ratio(value: Any) -> float:
    """A down:up oversubscription ratio: ``2``, ``1.5``, ``"3:1"`` or ``"4:3"``.

    Raises ValueError unless it is finite, at least 1 and at most
    :data:`MAX_OVERSUBSCRIPTION` (the command line's and design files' parser).
    """
    if isinstance(value, bool):
        # YAML's word for it, not Python's (it had read "oversubscription True": review CV)
        word = "true" if value else "false"
        raise ValueError(f"oversubscription {word} is not a ratio (write 2 or 2:1)")
    if value is None:
        # a design file's 'max:' with nothing after it (had read "None is not a ratio")
        raise ValueError("oversubscription null is not a ratio (write 2 or 2:1)")
    # a ratio written in digits past any float ('1e400', '1e400:1') is too large, not
    # "not a finite ratio" nor "not a down:up ratio" (a review): said as the range is
    too_large = False
    if isinstance(value, str):
        text = value.strip()
        if ":" in text:
            down, _, up = (part.strip() for part in text.partition(":"))
            try:
                if not (_PLAIN_RATIO().match(down) and _PLAIN_RATIO().match(up)):
                    raise ValueError
                # exact, so that 0.3:0.1 is 3 (floats give 2.9999999999999996, which sizing
                # cannot snap back: review BT), except past any float's exponent, where
                # Fraction('1e99999999') builds the number digit by digit (a 13-character
                # ratio had run past a minute: review BS): there floats, inf/inf NaN, refused
                huge = any(abs(_exponent(part)) > _MAX_EXACT_EXPONENT for part in (down, up))
                if huge:
                    ratio = float(down) / float(up)
                    too_large = ratio == math.inf
                else:
                    exact = Fraction(down) / Fraction(up)
                    too_large = exact > MAX_OVERSUBSCRIPTION
                    ratio = math.inf if too_large else float(exact)
            except (ValueError, ZeroDivisionError, OverflowError):
                raise ValueError(
                    f"oversubscription {echo(value)} is not a down:up ratio such as 2:1"
                ) from None
        else:
            try:
                ratio = float(text)
            except ValueError:
                ratio = 0.0
            # inf and nan fall to the finiteness test below; other spellings float() reads
            # (1_0, other scripts' digits, a sign) are no plain ratio
            if math.isfinite(ratio) and not _PLAIN_RATIO().match(text):
                raise ValueError(f"oversubscription {echo(value)} is not a ratio (write 2 or 2:1)")
            too_large = ratio == math.inf and bool(_PLAIN_RATIO().match(text))
    elif isinstance(value, int | float):
        ratio = as_float(value)
    else:
        raise ValueError(f"oversubscription {echo(value)} is not a ratio (write 2 or 2:1)")
    if too_large:
        raise ValueError(f"oversubscription {echo(value)} is more than {MAX_OVERSUBSCRIPTION:g}:1")
    if not math.isfinite(ratio):
        raise ValueError(f"oversubscription {echo(value)} is not a finite ratio")
    if ratio < 1:
        # the inverse only where it is a ratio taken (1e-320 had suggested "inf:1")
        hint = (
            f" (down:up; did you mean {format_oversubscription(_inverse(ratio, value))}?)"
            if ratio > 0 and 1 / ratio <= MAX_OVERSUBSCRIPTION
            else ""
        )
        raise ValueError(f"oversubscription {echo(value)} must be >= 1{hint}")
    if ratio > MAX_OVERSUBSCRIPTION:
        raise ValueError(f"oversubscription {echo(value)} is more than {MAX_OVERSUBSCRIPTION:g}:1")
    return ratio


Name = Annotated[str, Field(max_length=200)]

#: The spec's on/off switches (:meth:`ClusterSpec._switch`)
_SWITCHES = ("sharp", "nvls")
#: The fields that take a number and no text (:meth:`ClusterSpec._number`; the ratio takes
#: "2:1"); a test checks the list against the fields' types.
_NUMBERS = (
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "scale_up_domain",
    "cross_leaf_fraction",
    "neighbour_cross_leaf_fraction",
    "unaligned_cross_leaf_fraction",
    "leaf_group_nodes",
    "sites",
    "wan_links",
    "gpus_per_process",
    "wan_latency_s",
)


#: A ClusterSpec, as pydantic's readers return it (:func:`_one_line`).
_Spec = TypeVar("_Spec", bound="ClusterSpec")


class ClusterSpec(NoBoolNumbers):
    """A cluster as the user described it; ``None`` means "not given: assume, and say so".

    Constructing one with a value out of range raises :class:`~ibcalc.errors.ClusterError`
    naming the field, not pydantic's ``ValidationError``; so do :meth:`replace`, the way to a
    changed copy, and :meth:`model_validate`, :meth:`model_validate_json` and
    :meth:`model_validate_strings` (a spec read from a config). ``model_copy(update=...)``
    does not validate at all: use the constructor and :meth:`replace`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int | None = Field(default=None, ge=1, le=MAX_GPUS, description="Number of nodes.")
    gpus_per_node: int | None = Field(
        default=None, ge=1, le=MAX_GPUS_PER_NODE, description="GPUs per node."
    )
    nics_per_node: int | None = Field(
        default=None, ge=1, le=MAX_NICS_PER_NODE, description="Scale-out NICs per node."
    )
    intra: Name | None = Field(default=None, description="Scale-up link id (nvlink4 ...).")
    inter: Name | None = Field(default=None, description="Scale-out link id (ndr ...).")
    system: Name | None = Field(default=None, description="System preset id (dgx-h100 ...).")
    host_pcie: Name | None = Field(default=None, description="PCIe link each NIC sits on.")
    host_cpu: HostCpu | None = Field(
        default=None,
        description="Host CPU family (NCCL's per-step network overhead: 2 us on AMD, else 1 us).",
    )
    sharp: bool = Field(default=False, description="Use IB SHARP (CollNet) when the fabric has it.")
    nvls: bool | None = Field(default=None, description="Allow NVLink SHARP (default: if present).")
    scale_up_domain: int | None = Field(
        default=None,
        ge=1,
        le=MAX_GPUS,
        description="GPUs in one scale-up (NVLink) domain, whole nodes, at most the system "
        "preset's (default: the preset's; 36 runs an NVL72 rack as two NVL36, the node's GPUs "
        "keep NVLink inside each node).",
    )
    oversubscription: float = Field(
        default=1.0,
        ge=1.0,
        le=MAX_OVERSUBSCRIPTION,
        description="Leaf oversubscription, down:up ratio.",
    )
    cross_leaf_fraction: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Fraction of traffic crossing leaves."
    )
    neighbour_cross_leaf_fraction: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="The same for neighbour traffic (ring, tree, SHARP, send/recv), as a "
        "design's fabric layout derives it (default: cross_leaf_fraction).",
    )
    unaligned_cross_leaf_fraction: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="The same for traffic off its rail (all-to-all without PXN), as a "
        "rail-optimized design's fabric layout derives it (default: cross_leaf_fraction).",
    )
    leaf_group_nodes: int | None = Field(
        default=None,
        ge=1,
        le=MAX_GPUS,
        description="Consecutive nodes whose rail-aligned traffic stays under one leaf (a "
        "rail-optimized SU, else one leaf's whole nodes), as a design's fabric layout derives "
        "it; the workload commands price a group inside one such stretch without the taper "
        "(default: not known, every group takes the cluster's shares).",
    )
    sites: int = Field(default=1, ge=1, le=MAX_SITES, description="Sites joined by a WAN.")
    wan: Name | None = Field(default=None, description="WAN link id between sites.")
    wan_links: int = Field(default=1, ge=1, le=MAX_WAN_LINKS, description="WAN links per site.")
    gpus_per_process: int = Field(
        default=1,
        ge=1,
        le=MAX_GPUS_PER_NODE,
        description="GPUs one process drives (nccl-tests -g); launches are serial on the host.",
    )
    wan_latency_s: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_WAN_LATENCY_S,
        description="One-way WAN latency between sites (default: the WAN link's own).",
    )

    # typed as **data, not the fields' own signature: the fields take more than their types
    # say (oversubscription "2:1", sizes as text), and that signature had refused them in a
    # user's mypy run without pydantic's plugin (review CD), as a misspelt keyword is refused
    # at run time, by name
    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _cluster_error(exc) from None

    # pydantic's model_validate, model_validate_json and model_validate_strings call __init__
    # above, and wrap its ClusterError in a multi-line ValidationError: a spec read from a JSON
    # config met that where the constructor says one line (a library user's review). All three
    # raise the constructor's error; what never reached it (not a mapping, not JSON) is said in
    # one line too.
    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        """:meth:`pydantic.BaseModel.model_validate`, raising the constructor's
        :class:`~ibcalc.errors.ClusterError` (not pydantic's ``ValidationError``)."""
        _refuse_unnamed_keys(obj)
        return _one_line(partial(super().model_validate, obj, **options))

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **options: Any) -> Self:
        """:meth:`pydantic.BaseModel.model_validate_json`, raising the constructor's
        :class:`~ibcalc.errors.ClusterError` (not pydantic's ``ValidationError``)."""
        return _one_line(partial(super().model_validate_json, json_data, **options))

    @classmethod
    def model_validate_strings(cls, obj: Any, **options: Any) -> Self:
        """:meth:`pydantic.BaseModel.model_validate_strings`, raising the constructor's
        :class:`~ibcalc.errors.ClusterError` (not pydantic's ``ValidationError``)."""
        _refuse_unnamed_keys(obj)
        return _one_line(partial(super().model_validate_strings, obj, **options))

    @field_validator("intra", "inter", "system", "host_pcie", "wan", mode="before")
    @classmethod
    def _name(cls, value: Any) -> Any:
        entry = entry_given(value)
        if entry is not None:
            raise ValueError(entry)
        return value

    @field_validator("intra", "inter", "system", "host_pcie", "wan")
    @classmethod
    def _not_blank(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not value.strip():
            what = "preset" if info.field_name == "system" else "link"
            raise ValueError(f"is empty; give a {what} name")
        return value

    @field_validator("host_cpu", mode="before")
    @classmethod
    def _host_cpu(cls, value: Any) -> Any:
        """A CPU family in any case, as every other name is read ('AMD' had been refused
        where 'amd' was read: review DR)."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator(*_SWITCHES, mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        """A switch is nothing but true/false ('yes' and 'no' had been read as switches: a
        library user's review); numpy's bool_ is a bool. A number is no true/false either
        (nodes=True had meant 1 node, wan_latency_s=True 1 s: :class:`NoBoolNumbers`)."""
        if value is not None and not is_boolean(value):
            raise ValueError("must be true or false")
        return value

    @field_validator(*_NUMBERS, mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        """A count or a fraction is a number, not text: nodes="8" had been read as 8 where the
        command line and design files refuse text for a count (review CU 6); the ratio alone
        takes text ("2:1")."""
        if isinstance(value, str | bytes):
            raise ValueError("is text, not a number")
        return value

    @field_validator("oversubscription", mode="before")
    @classmethod
    def _ratio(cls, value: Any) -> Any:
        """A down:up ratio as text ("2:1", "4:3"), as the command line and design files take
        it; refused with the words they use (it had been "input should be a valid number")."""
        if not isinstance(value, str):
            return value
        try:
            return parse_ratio(value)
        except ValueError as exc:
            # the spec's error names the field and value itself
            raise ValueError(str(exc).removeprefix(f"oversubscription {echo(value)} ")) from None

    @field_validator(
        "oversubscription",
        "cross_leaf_fraction",
        "neighbour_cross_leaf_fraction",
        "unaligned_cross_leaf_fraction",
        "wan_latency_s",
    )
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    def replace(self, **changes: Any) -> ClusterSpec:
        """A copy with ``changes`` applied and validated; a field left unset stays unset (its
        default is not taken for a value the user gave)."""
        return ClusterSpec(**{**self.model_dump(exclude_unset=True), **changes})

    def given(self) -> frozenset[str]:
        """The fields set to a value (not left unset, nor set to None)."""
        return frozenset(f for f in self.model_fields_set if getattr(self, f) is not None)


# a whole float past a 64-bit integer (nodes=1e30) fails pydantic's int parsing before its
# bounds, in words about "input string" a float never was (a library user's review)
_OUT_OF_RANGE = (
    "greater_than_equal",
    "less_than_equal",
    "greater_than",
    "less_than",
    "int_parsing_size",
)


def _cluster_error(exc: ValidationError) -> ClusterError:
    """The first problem of a ClusterSpec validation as a ClusterError naming its field."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else None
    value = error.get("input")
    context = error.get("ctx") or {}
    kind = error["type"]
    shown = echo(value)
    if isinstance(value, float) and not math.isfinite(value) and field:
        # NaN fails every bound: "out of range (0..1)" said nothing of what was wrong
        message = f"{{{field}}} {shown} is not a finite number"
    elif kind == "int_from_float" and field:
        # in the words of the command line, design files and tp_whatif ('input should be a
        # valid integer, got a number with a fractional part' had been pydantic's)
        message = f"{{{field}}} {shown} is not a whole number"
    elif kind == "string_unicode" and field:
        # a name typed in another encoding (Latin-1's \xe9 reaches argv as '\udce9'): pydantic's
        # 'unable to parse raw data as a unicode string' had been said as it is
        message = (
            f"{{{field}}} {shown} is not UTF-8 text (it holds an undecodable byte or a lone "
            "surrogate)"
        )
    elif kind == "string_too_long" and field:
        # pydantic's 'string should have at most 200 characters' had been said as it is
        message = (
            f"{{{field}}} {shown} is longer than any name: at most "
            f"{context.get('max_length')} characters"
        )
    elif kind in _OUT_OF_RANGE and field:
        info = ClusterSpec.model_fields[field]
        low = next((m.ge for m in info.metadata if getattr(m, "ge", None) is not None), None)
        high = next((m.le for m in info.metadata if getattr(m, "le", None) is not None), None)
        message = f"{{{field}}} {shown} is out of range ({_num(low)}..{_num(high)})"
    elif kind == "extra_forbidden":
        # a slip of a field's name is offered the field, as a design file's unknown key is
        # (gpu_per_node had been told only that it is unknown: a library user's review), in
        # any case, as other names are (GPUS_PER_NODE had been offered nothing)
        hint = closest_hint(str(field), list(ClusterSpec.model_fields))
        message = f"unknown cluster field {echo(field)}{hint}"
        field = None
    elif "error" in context and str(context["error"]).startswith(("is empty", "is given as")):
        message = f"{{{field}}} {context['error']}"
    elif "error" in context:
        message = f"{{{field}}} {shown} {context['error']}"
    else:
        message = f"{{{field}}} {shown}: {error['msg'].lower()}"
    return ClusterError(message, field=field)


def _refuse_unnamed_keys(obj: object) -> None:
    """Refuse a mapping with a key that is no text: it fails Python's own keyword call, with a
    bare TypeError ("keywords must be strings"), before any field is looked at (a review)."""
    if isinstance(obj, Mapping):
        keys = [k for k in obj if not isinstance(k, str)]
        if keys:
            raise ClusterError(
                f"a cluster spec's fields are named in text; {type(keys[0]).__name__} "
                f"{echo(keys[0])} is not a field name"
            )


def _one_line(read: Callable[[], _Spec]) -> _Spec:
    """``read()``, a pydantic reader of a ClusterSpec, with its ValidationError raised as one
    ClusterError (:func:`_refused`)."""
    try:
        return read()
    except ValidationError as exc:
        raise _refused(exc) from None


def _refused(exc: ValidationError) -> ClusterError:
    """A ClusterSpec validation's ``exc`` as one ClusterError: the constructor's own, which
    pydantic wrapped, else (input that never reached the constructor) what is wrong with it."""
    error = exc.errors()[0]
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, ClusterError):
        return cause
    if error["loc"]:
        return _cluster_error(exc)
    if error["type"] == "json_invalid":
        return ClusterError(f"a cluster spec is not valid JSON ({cause})")
    value = error.get("input")
    return ClusterError(
        f"a cluster spec is a mapping of its fields, not {type(value).__name__} {echo(value)}"
    )


def _num(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
