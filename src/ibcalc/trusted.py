"""Pydantic models built from values that are already what validation would make of them.

A layout search (``workload/train.py``'s ``compare_layouts``) builds thousands of results a
second: each layout's :class:`~ibcalc.workload.train.Parallelism` and ``TrainSpec``, its phases,
totals and ``TrainResult``, every value worked out by ibcalc or taken from a model validated
before. Validating them again took about a tenth of a search; pydantic's ``model_construct``
skips validation but walks every field in Python, and is slower than the validation it skips.
:func:`trusted` sets the instance's state as both do, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["trusted"]

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__


def trusted(cls: type[M], values: dict[str, Any], given: Iterable[str] | None = None) -> M:
    """``cls(**values)`` without validating ``values`` again.

    ``values`` holds every field of ``cls`` in the order ``cls`` declares them (a dump follows
    the dict's order), each already what validation would make of it: a float field a float
    (validation turns an int into one, and the JSON would say ``0`` for ``0.0``), a tuple field
    a tuple, a list field a list no one else will change (validation copies one). The model
    keeps ``values`` itself. ``given``: the fields counted as set (``model_fields_set``, which
    ``exclude_unset`` reads), by default every one. Only for models without extra fields,
    private attributes or validators that change values;
    ``tests/workload/test_search_build.py`` holds each model built so to its validated twin.
    """
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", set(values if given is None else given))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model
