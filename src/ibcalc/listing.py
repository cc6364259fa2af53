"""Lists cut short in a message: the first few items, then a count of the rest.

A note, a finding's evidence or a verdict names what it is about without running on: the first
:data:`LISTED` items, then ``and 3 more sizes``. (Three forms had grown apart: five then
``, ...``, five then ``and N more sizes``, and the gate's six then `` and N more``; and two lists
cut at five without a word.) A count says how much is left out, where ``...`` did not.
"""

from __future__ import annotations

from collections.abc import Iterable

from ibcalc.units import plural

__all__ = ["LISTED", "first_of", "listed"]

#: Items a list names before it counts the rest
LISTED = 5


def first_of(items: Iterable[object], noun: str, limit: int = LISTED) -> list[str]:
    """The items as text, past ``limit`` the first ``limit`` and then ``and K more <noun>s``
    (the ``noun`` singular, made plural as :func:`ibcalc.units.plural` does): one item a line
    of evidence, the count the last. One item past ``limit`` is named rather than counted
    ("and 1 more size" says less in as much room)."""
    texts = [str(item) for item in items]
    more = len(texts) - limit
    return texts if more <= 1 else [*texts[:limit], f"and {plural(more, 'more ' + noun)}"]


def listed(items: Iterable[object], noun: str, limit: int = LISTED) -> str:
    """:func:`first_of` in one line: ``40, 42, 44, 46, 48 and 2 more lines``."""
    texts = [str(item) for item in items]
    cut = first_of(texts, noun, limit)
    if len(cut) < len(texts):
        return f"{', '.join(cut[:-1])} {cut[-1]}"
    return ", ".join(cut)
