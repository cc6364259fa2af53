"""Pydantic models built from values that are already what validation would make of them.

A layout search (``workload/train.py``'s ``compare_layouts``) builds thousands of results a
second: each layout's :class:`~ibcalc.workload.train.Parallelism` and ``TrainSpec``, its phases,
totals and ``TrainResult``, every value worked out by ibcalc or taken from a model validated
before. Validating them again took about a tenth of a search; pydantic's ``model_construct``
skips validation but walks every field in Python, and is slower than the validation it skips.
:func:`trusted` sets the instance's state as both do, and nothing else.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["trusted"]

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__
#: what ``cls.__new__`` is for every pydantic model (BaseModel defines none), looked up once: a
#: model class's attribute loads go through its metaclass's ``__getattr__``, unspecialised
_new = object.__new__

#: The fields counted as set (``__pydantic_fields_set__``) of a frozen model's instances, one set
#: per (class, ``given``) for all of them: pydantic changes no frozen model's set (``model_copy``
#: copies it before adding to it), and a layout search builds tens of thousands of models, each
#: of whose sets the garbage collector would otherwise track (a fifth of what a search keeps)
_FIELDS_SETS: dict[tuple[type[BaseModel], Hashable], set[str]] = {}


def trusted(
    cls: type[M], values: dict[str, Any], given: frozenset[str] | tuple[str, ...] | None = None
) -> M:
    """``cls(**values)`` without validating ``values`` again.

    ``values`` holds every field of ``cls`` in the order ``cls`` declares them (a dump follows
    the dict's order), each already what validation would make of it: a float field a float
    (validation turns an int into one, and the JSON would say ``0`` for ``0.0``), a tuple field
    a tuple, a list field a list no one else will change (validation copies one). The model
    keeps ``values`` itself. ``given``: the fields counted as set (``model_fields_set``, which
    ``exclude_unset`` reads), by default every one; a frozen model shares one such set with
    every other built here of its class and ``given`` (read it, do not change it; a frozenset or
    tuple, so that it can key them). Only for models without ``__new__``, extra fields,
    private attributes or validators that change values;
    ``tests/workload/test_search_build.py`` holds each model built so to its validated twin.
    """
    model = _new(cls)
    _set(model, "__dict__", values)
    key = (cls, given)
    fields = _FIELDS_SETS.get(key)
    if fields is None:
        fields = set(values if given is None else given)
        if cls.model_config.get("frozen"):
            if len(_FIELDS_SETS) >= 256:  # a few a process; bounded all the same
                _FIELDS_SETS.clear()
            _FIELDS_SETS[key] = fields
    _set(model, "__pydantic_fields_set__", fields)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model
