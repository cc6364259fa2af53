"""memo.py: values made once per key while their owner objects are the very same."""

from __future__ import annotations

from ibcalc.memo import IdentityMemo


def test_a_hit_needs_the_same_owner_objects() -> None:
    memo: IdentityMemo[list[int]] = IdentityMemo()
    owner = object()
    made: list[int] = []

    def make() -> list[int]:
        made.append(1)
        return [len(made)]

    first = memo.get(("k", id(owner)), (owner,), make)
    assert memo.get(("k", id(owner)), (owner,), make) is first
    assert len(made) == 1
    # another object under the same key (as when a dead object's id is reused): made again
    assert memo.get(("k", id(owner)), (object(),), make) == [2]
    assert len(made) == 2


def test_the_memo_starts_afresh_past_its_size() -> None:
    memo: IdentityMemo[int] = IdentityMemo(size=2)
    calls: list[int] = []
    for key in (1, 2, 3):  # the third entry clears the first two
        memo.get(key, (), lambda k=key: calls.append(k) or k)
    memo.get(3, (), lambda: calls.append(30) or 30)  # still there
    memo.get(1, (), lambda: calls.append(10) or 10)  # gone: made again
    assert calls == [1, 2, 3, 10]


def test_owners_of_another_count_are_a_miss() -> None:
    memo: IdentityMemo[int] = IdentityMemo()
    owner = object()
    assert memo.get("k", (owner,), lambda: 1) == 1
    assert memo.get("k", (owner, owner), lambda: 2) == 2
    assert memo.get("k", (owner, owner), lambda: 3) == 2
