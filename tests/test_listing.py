"""ibcalc.listing: the one way a message cuts a list, its first items and a count of the rest."""

from __future__ import annotations

from ibcalc.listing import LISTED, first_of, listed


def test_a_list_names_five_then_counts_the_rest() -> None:
    """Three forms had grown apart (five then ', ...', five then 'and N more sizes', the gate's
    six then ' and N more'): one now, five items and a count, in a line or as evidence lines."""
    assert LISTED == 5
    assert listed([], "line") == ""
    assert listed([12], "line") == "12"
    assert listed(["16 B", "32 B", "64 B", "128 B", "256 B"], "size") == (
        "16 B, 32 B, 64 B, 128 B, 256 B"
    )
    # 40, 42, ..., 50: six items, all named ("and 1 more line" would say less in as much room)
    assert listed(range(40, 52, 2), "line") == "40, 42, 44, 46, 48, 50"
    # 40, 42, ..., 58: ten items, five counted, the noun made plural as units.plural does
    assert listed(range(40, 60, 2), "line") == "40, 42, 44, 46, 48 and 5 more lines"
    assert listed("abcde", "switch", limit=3) == "a, b, c and 2 more switches"
    assert first_of(["a", "b"], "size") == ["a", "b"]
    assert first_of("abcdef", "size") == ["a", "b", "c", "d", "e", "f"]
    assert first_of("abcdefg", "size") == ["a", "b", "c", "d", "e", "and 2 more sizes"]
