"""A bounded memo for values built from objects that are matched by identity.

The engine's plans, a layout search's sub-clusters and its collective plans are each built once
per (arguments) and reused. Some of those arguments (cost parameters, a catalogue, a resolved
cluster) are matched by identity: their ``id`` is in the key, and the entry keeps the objects
themselves, so that an ``id`` reused by a new object after the old one died is never mistaken
for it. Past ``size`` entries the memo starts afresh: a layout search builds a few hundred.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["IdentityMemo"]

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """``get(key, owners, make)``: the value made for ``key`` while ``owners`` are the very
    objects it was made with, else ``make()`` (kept for next time)."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._entries: dict[Hashable, tuple[tuple[object, ...], V]] = {}

    def get(self, key: Hashable, owners: tuple[object, ...], make: Callable[[], V]) -> V:
        """The memoised value, made by ``make`` on a miss."""
        hit = self._entries.get(key)
        # the owners compared one by one in C (operator.is_), not by a generator: a layout
        # search asks tens of thousands of times
        if (
            hit is not None
            and len(hit[0]) == len(owners)
            and all(map(operator.is_, hit[0], owners))
        ):
            return hit[1]
        value = make()
        if len(self._entries) >= self._size:
            self._entries.clear()
        self._entries[key] = (owners, value)
        return value
