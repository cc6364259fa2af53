"""True/false values told apart from numbers.

Python's ``bool`` is an ``int``, so pydantic reads ``True`` as the count 1 and ``1.0`` as a
rate; a YAML ``true`` written where a number belongs, or ``nodes=True`` in a script, would be
priced as 1 without a word. :func:`refuse_bool_number` is the before-validator the input
models share: a field that takes no true/false refuses one, and a true/false field takes
numpy's ``bool_`` as Python's own.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationInfo, field_validator

from ibcalc.errors import expect_type

__all__ = [
    "NoBoolNumbers",
    "expect_bool",
    "is_boolean",
    "refuse_bool_number",
    "refuse_text_or_number",
    "takes_bool",
]


def is_boolean(value: object) -> bool:
    """``True``/``False``, or numpy's ``bool_`` (read by its dtype: numpy is not imported)."""
    if isinstance(value, bool):
        return True
    dtype = getattr(value, "dtype", None)
    return getattr(dtype, "kind", None) == "b" and getattr(value, "ndim", 1) == 0


def expect_bool(value: object, what: str) -> bool:
    """A library argument that takes True or False only, as ``bool``: numpy's ``bool_`` as
    Python's own (as the input models take it); anything else raises
    :class:`~ibcalc.errors.WrongTypeError` ("no" is truthy: ``pessimistic="no"`` had judged the
    pessimistic end, review CH; ``np.True_`` had been refused, review CK)."""
    if not is_boolean(value):
        expect_type(value, bool, what, "True or False")  # raises: no bool is refused here
    return bool(value)


def _admits(annotation: object, kinds: tuple[type, ...]) -> bool:
    """Whether a field's annotation admits one of ``kinds`` (through ``X | None`` and
    ``Annotated``, as StrictBool and the catalogue's unit types are)."""
    if annotation in kinds:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _admits(typing.get_args(annotation)[0], kinds)
    if origin in (typing.Union, types.UnionType):
        return any(_admits(arg, kinds) for arg in typing.get_args(annotation))
    return False


def takes_bool(annotation: object) -> bool:
    """Whether a field's annotation admits ``bool`` (``bool``, ``bool | None``, StrictBool)."""
    return _admits(annotation, (bool,))


def refuse_bool_number(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """A field's value checked for true/false: refused where the field takes a number and no
    true/false ("is true/false, not a number"), numpy's ``bool_`` made a ``bool`` where it takes
    one; elsewhere (a text field) left to the field's own check."""
    if not is_boolean(value) or info.field_name is None:
        return value
    field = model.model_fields.get(info.field_name)
    if field is None:
        return value
    if takes_bool(field.annotation):
        return bool(value)
    if _admits(field.annotation, (int, float)):
        raise ValueError("is true/false, not a number")
    return value


def refuse_text_or_number(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """A field's value checked for its kind where pydantic would convert it: text where the
    field takes a number and no text ("is text, not a number": tp="8" had been read as 8), and
    anything but true/false where it takes only true/false ("must be true or false":
    disaggregated=1 or "yes" had been read as True), as ClusterSpec refuses them."""
    field = model.model_fields.get(info.field_name or "")
    if field is None or value is None:
        return value
    annotation = field.annotation
    number, text = _admits(annotation, (int, float)), _admits(annotation, (str,))
    if isinstance(value, str | bytes) and number and not text:
        raise ValueError("is text, not a number")
    if takes_bool(annotation) and not is_boolean(value) and not (number or text):
        raise ValueError("must be true or false")
    return value


class NoBoolNumbers(BaseModel):
    """A model whose fields that take no true/false refuse one (:func:`refuse_bool_number`)."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_number(cls, value: Any, info: ValidationInfo) -> Any:
        return refuse_bool_number(cls, value, info)
