"""Pydantic fields' default factories are Python functions, not builtin types (ibcalc.defaults).

Pydantic reads a ``default_factory``'s signature when it builds the model; a builtin type's is
parsed from its text signature, which compiles :mod:`tokenize`'s patterns on first use (about
10 ms of a start-up).
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import ibcalc
from ibcalc.defaults import empty_list

SRC = Path(ibcalc.__file__).resolve().parent


def _builtin_factories(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name != "Field":
            continue
        for keyword in node.keywords:
            value = keyword.value
            if (
                keyword.arg == "default_factory"
                and isinstance(value, ast.Name)
                and isinstance(getattr(builtins, value.id, None), type)
            ):
                found.append((node.lineno, value.id))
    return found


def test_no_model_field_takes_a_builtin_type_as_its_default_factory() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: default_factory={name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _builtin_factories(ast.parse(path.read_text("utf-8")))
    ]
    assert found == [], "use ibcalc.defaults.empty_list:\n" + "\n".join(found)


def test_the_scan_finds_a_builtin_factory() -> None:
    tree = ast.parse("x: list[int] = Field(default_factory=list)\ny = Field(default_factory=f)")
    assert _builtin_factories(tree) == [(1, "list")]


def test_empty_list_gives_a_new_list_each_time() -> None:
    first = empty_list()
    assert first == []
    assert first is not empty_list()
