"""Regular expressions compiled the first time they are used, not when their module is imported.

Compiling a pattern costs 0.1-1 ms; an estimate's start-up had compiled some twenty that only
an error, another command or another format uses (~4 ms of its CPU time, measured by
re-compiling each with ``re``'s cache emptied). A module names such a pattern with
:func:`lazy_pattern` and calls it where it matches: ``_UNSAFE().sub(...)``. Patterns an
estimate uses stay compiled at import. This module imports nothing of ibcalc.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

__all__ = ["lazy_pattern"]


def lazy_pattern(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A function returning ``re.compile(pattern, flags)``, compiled on its first call and
    kept."""
    return functools.cache(functools.partial(re.compile, pattern, flags))
