"""No call in src/ passes more than five positional arguments: past five, name them.

``add_row`` is rich's ``Table.add_row(*cells)``, one positional argument per table cell. ALLOWED
(module, callee) exceptions are empty and should stay so.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_POSITIONAL = 5
VARIADIC = {"add_row"}

#: (module, callee) pairs exempted; none is.
ALLOWED: set[tuple[str, str]] = set()


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ast.unparse(func)


def test_no_call_passes_more_than_five_positional_arguments() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) <= MAX_POSITIONAL:
                continue
            callee = _callee(node)
            if callee in VARIADIC or (module, callee) in ALLOWED:
                continue
            offenders.append(f"{module}:{node.lineno}: {callee}() with {len(node.args)}")
    assert offenders == []


def test_the_check_sees_a_long_call() -> None:
    tree = ast.parse("f(1, 2, 3, 4, 5, 6)\ng(1, 2, 3, 4, 5, x=6)")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert [len(c.args) > MAX_POSITIONAL for c in calls] == [True, False]
