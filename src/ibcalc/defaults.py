"""Default factories for pydantic fields.

Pydantic reads each ``default_factory``'s signature when it builds a model (a factory may take
the validated data). A builtin type's signature is read from its text signature, and the first
such read in a process compiles :mod:`tokenize`'s patterns: ``Field(default_factory=list)``
cost every start-up that builds such a model about 10 ms, ``ibcalc allreduce``'s about 5 % of
the start-up floor (``benchmarks/speed.py``). A Python function's signature is read from its
code. ``tests/test_defaults.py`` holds every model to these.
"""

from __future__ import annotations

from typing import Any

__all__ = ["empty_list"]


def empty_list() -> list[Any]:
    """A new empty list: ``Field(default_factory=empty_list)`` for ``default_factory=list``."""
    return []
