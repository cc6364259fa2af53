"""Hostile input to ``ibcalc check``: refused fast, one ``error:`` line, exit 2, no traceback.

The corpus lives in tests/hostile/ (plus a path that does not exist). Positions are those of
the offending byte or node in each file, worked out by hand from its content.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ibcalc.cli import main

HOSTILE = Path(__file__).resolve().parent

# file -> (line:col of the problem or None when the file has no position, words of the message)
CASES: dict[str, tuple[str | None, str]] = {
    "empty.yaml": (None, "file is empty"),
    "binary.yaml": (None, "binary"),
    "invalid-utf8.yaml": ("3:18", "not valid UTF-8 (byte 0xff)"),  # 0xff: line 3, column 18
    "syntax-error.yaml": ("6:8", "YAML syntax error"),  # unclosed '{' on line 5, seen on line 6
    "tab-indent.yaml": ("5:1", "YAML syntax error"),  # the tab starts line 5
    # the fifth 'lol' of line 1: counting nodes in build order, aliases expanded, the
    # 100,001st (one past yamlio.MAX_NODES) is there
    "billion-laughs.yaml": ("1:28", "alias bomb"),
    # line 2 is "nodes: " then 10,000 "["; the 65th (first beyond 64 levels) is column 8 + 64
    "deep-nesting.yaml": ("2:72", "nesting deeper than"),
    "python-tag.yaml": ("4:14", "unsupported YAML tag"),  # the !!python tag on line 4
    # a size hidden in base64 ('1000'), once read as 1 KB: the tag starts line 5, column 23
    "binary-tag.yaml": ("5:23", "unsupported YAML tag 'tag:yaml.org,2002:binary'"),
    # `true:` had been named "[1]" by validation
    "boolean-key.yaml": ("4:1", "key 'true' reads as a boolean, not a name"),
    "duplicate-keys.yaml": ("4:1", "duplicate key 'nodes'"),  # second 'nodes' on line 4
    "top-level-list.yaml": ("1:1", "must be a mapping"),
    "top-level-scalar.yaml": ("1:1", "must be a mapping"),
    "huge-float.yaml": ("5:17", "absurdly large"),  # size: 1e400 (a float overflow) on line 5
    "huge-int.yaml": ("2:8", "cannot be read: a whole number of 5000 digits"),  # after 'nodes: '
    "nan-size.yaml": ("5:17", "NaN"),  # size: .nan on line 5
    "directory.yaml": (None, "is a directory"),
    "missing.yaml": (None, "no such file"),
}
#: Longer than this is a hang or a runaway read (timings: benchmarks/refusals.py).
HANG_GUARD_S = 10.0


def test_corpus_is_complete() -> None:
    # the corpus-* files and the table that uses them are tests/hostile/test_corpus.py's
    present = {
        p.name
        for p in HOSTILE.iterdir()
        if not p.name.startswith("corpus-") and p.suffix != ".py" and p.name != "__pycache__"
    }
    assert set(CASES) - {"missing.yaml"} == present
    assert not (HOSTILE / "missing.yaml").exists()
    assert (HOSTILE / "directory.yaml").is_dir()
    assert len((HOSTILE / "deep-nesting.yaml").read_text().split("[")) - 1 == 10_000
    assert len((HOSTILE / "huge-int.yaml").read_text().split()[3]) == 5000


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_file_is_refused(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    where, words = CASES[name]
    path = HOSTILE / name
    before = sorted(p.name for p in HOSTILE.iterdir())
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    with pytest.raises(SystemExit) as info:
        main(["check", str(path)])
    elapsed = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert info.value.code == 2
    assert elapsed < HANG_GUARD_S
    lines = err.splitlines()
    assert len(lines) == 1, err
    prefix = f"error: {path}:{where}: " if where is not None else f"error: {path}: "
    assert lines[0].startswith(prefix), lines[0]
    assert words in lines[0]
    assert "Traceback" not in out + err
    assert out == ""
    assert list(tmp_path.iterdir()) == []
    assert sorted(p.name for p in HOSTILE.iterdir()) == before


@pytest.mark.parametrize("fmt", ["json", "junit", "github"])
def test_hostile_file_in_machine_formats(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Machine formats still report the refused file (so CI shows it), and exit 2."""
    report = tmp_path / "report"
    with pytest.raises(SystemExit) as info:
        main(["check", str(HOSTILE / "binary.yaml"), "--format", fmt, "-o", str(report)])
    out, err = capsys.readouterr()
    assert info.value.code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "binary" in report.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
