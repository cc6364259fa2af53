"""The YAML loader: safe loading only, hostile input refused quickly, positions kept.

Expected positions are computed from the text each test writes (1-based line and column).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from ibcalc.errors import InputFileError
from ibcalc.yamlio import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    CSafeLoader,
    SafeLoader,
    TrustedDocument,
    load_yaml,
    other_kind,
    safe_load,
    trusted_document,
    validate,
)

Locate = Callable[..., tuple[int, int]]


def _write(tmp_path: Path, text: str, name: str = "in.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(InputFileError) as info:
        load_yaml(path)
    return str(info.value)


# --------------------------------------------------------------------------- safe loading


@pytest.mark.parametrize(
    "template",
    [
        "!!python/object/apply:os.system ['touch {marker}']\n",
        "links:\n  - id: x\n    name: !!python/object/apply:os.system ['touch {marker}']\n",
        "a: !!python/object/new:os.system ['touch {marker}']\n",
    ],
)
def test_python_tags_are_refused_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str
) -> None:
    marker = tmp_path / "pwned"
    calls: list[str] = []
    monkeypatch.setattr(os, "system", lambda cmd: calls.append(cmd) or 0)
    path = _write(tmp_path, template.format(marker=marker))
    message = _refusal(path)
    assert message.startswith(f"{path}:")
    assert "python/object" in message
    assert calls == []
    assert not marker.exists()


def test_python_name_tag_is_refused(tmp_path: Path, locate: Locate) -> None:
    text = "a: 1\nb: !!python/name:os.system\n"
    path = _write(tmp_path, text)
    line, col = locate(text, "!!python")
    assert _refusal(path).startswith(f"{path}:{line}:{col}:")


def test_merge_keys_are_refused(tmp_path: Path) -> None:
    text = "base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n"
    message = _refusal(_write(tmp_path, text))
    assert "merge" in message


# --------------------------------------------------------------------------- duplicate keys


def test_duplicate_top_level_key_refused_at_second_occurrence(
    tmp_path: Path, locate: Locate
) -> None:
    text = "schema: x\nlinks: []\nschema: y\n"
    path = _write(tmp_path, text)
    line, col = locate(text, "schema", occurrence=2)
    message = _refusal(path)
    assert message.startswith(f"{path}:{line}:{col}:")
    assert "duplicate key 'schema'" in message


def test_duplicate_nested_key_refused_with_line_and_col(tmp_path: Path, locate: Locate) -> None:
    text = "links:\n  - id: a\n    name: first\n    kind: host\n    name: second\n"
    path = _write(tmp_path, text)
    line, col = locate(text, "name", occurrence=2)
    assert (line, col) == (5, 5)  # sanity of the helper on this text
    message = _refusal(path)
    assert message.startswith(f"{path}:{line}:{col}:")
    assert "duplicate key 'name'" in message


def _refusals(tmp_path: Path, text: str) -> list[tuple[int | None, int | None, str]]:
    """(line, col, message) of each problem ``text`` is refused with, read as a file."""
    with pytest.raises(InputFileError) as info:
        load_yaml(_write(tmp_path, text))
    return [(p.line, p.col, p.message) for p in info.value.problems]


def test_every_duplicate_key_is_refused_at_once(tmp_path: Path) -> None:
    """The first duplicate had stopped the reading, so the next showed only on the next run."""
    text = "a: 1\na: 2\nb:\n  c: 3\n  c: 4\n"
    assert _refusals(tmp_path, text) == [
        (2, 1, "duplicate key 'a' (first at line 1)"),
        (5, 3, "duplicate key 'c' (first at line 4)"),
    ]
    # deferred, they are left for the caller; each mapping keeps its first value
    doc = load_yaml(_write(tmp_path, text), defer_duplicates=True)
    assert doc.data == {"a": 1, "b": {"c": 3}}
    assert [(p.line, p.col) for p in doc.duplicates] == [(2, 1), (5, 3)]


def test_a_duplicate_under_aliases_is_said_once_and_kept_past_a_later_refusal(
    tmp_path: Path,
) -> None:
    """An anchored mapping is built again at each alias: its duplicate key had been said once
    per alias (11,111 times from a 9-line file, review CH); and a later refusal that stops the
    reading (a key that reads as a boolean) had dropped the duplicates found before it."""
    nested = "a0: &a0 {x: 1, x: 2}\na1: &a1 [*a0, *a0, *a0]\na2: [*a1, *a1, *a1]\n"
    assert _refusals(tmp_path, nested) == [(1, 16, "duplicate key 'x' (first at column 10)")]
    # a key repeated through an alias (*k) is said at each repeat, where the alias is written
    # (review CI had found three mappings' duplicates said once; then each was said once a
    # mapping, at the mapping, until the parser's events gave the aliases their places: CK, CL)
    keyed = "a: {&k x: 1, *k: 2}\nb: {*k: 1, *k: 2, *k : 3}\nc:\n  x: 1\n  *k : 3\n"
    # the first of each mapping's x is named: on its line by column (the anchor's, &k x),
    # else by line
    assert _refusals(tmp_path, keyed) == [
        (line, col, f"duplicate key 'x' (written through an alias; first at {first})")
        for line, col, first in (
            (1, 14, "column 5"),
            (2, 12, "column 5"),
            (2, 19, "column 5"),
            (5, 3, "line 4"),
        )
    ]
    # an anchor inside a skipped duplicate: its alias is said where it is written, as an alias
    # (it had been said at the anchor, inside the skipped value, as a plain key: review CL)
    hidden = "a: 1\na: {&k x: 1}\nb: {x: 1, *k: 2}\n"
    assert _refusals(tmp_path, hidden) == [
        (2, 1, "duplicate key 'a' (first at line 1)"),
        (3, 11, "duplicate key 'x' (written through an alias; first at column 5)"),
    ]
    # a key written three times is said at each repeat (review CJ: the third had been hidden),
    # in an anchored mapping too, once though it is built again at each alias
    thrice = "n: 2\nn: 3\nn: 4\na: &m {q: 1, q: 2, q: 3}\nb: [*m, *m]\n"
    with pytest.raises(InputFileError) as info:
        load_yaml(_write(tmp_path, thrice))
    assert [(p.line, p.col) for p in info.value.problems] == [(2, 1), (3, 1), (4, 14), (4, 20)]
    stopped = "name: d\nname: e\ntrue: 1\n"
    with pytest.raises(InputFileError) as info:
        load_yaml(_write(tmp_path, stopped), defer_duplicates=True)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (2, "duplicate key 'name' (first at line 1)"),
        (3, "key 'true' reads as a boolean, not a name: quote it or remove it"),
    ]


def test_same_key_in_different_mappings_is_fine(tmp_path: Path) -> None:
    doc = load_yaml(_write(tmp_path, "- id: a\n- id: b\n"))
    assert doc.data == [{"id": "a"}, {"id": "b"}]


# --------------------------------------------------------------------------- resource bombs


def _billion_laughs(levels: int = 10, width: int = 10) -> str:
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * width)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    # 10 levels of 10 references expand to 10^10 strings; the text itself is under 1 KB
    text = _billion_laughs()
    assert len(text) < 1000
    path = _write(tmp_path, text)
    start = time.perf_counter()
    message = _refusal(path)
    elapsed = time.perf_counter() - start
    assert elapsed < 10.0  # expanding 10^10 strings would never end: a hang guard
    assert "alias bomb" in message or "nodes" in message
    assert message.startswith(f"{path}:")


def test_small_alias_use_is_still_allowed(tmp_path: Path) -> None:
    doc = load_yaml(_write(tmp_path, "a: &x [1, 2]\nb: *x\n"))
    assert doc.data == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize("depth", [MAX_DEPTH + 10, 1000])
def test_deep_nesting_is_refused_quickly(tmp_path: Path, depth: int) -> None:
    text = "a: " + "[" * depth + "]" * depth + "\n"
    path = _write(tmp_path, text)
    start = time.perf_counter()
    message = _refusal(path)
    assert time.perf_counter() - start < 10.0  # a hang guard, not a speed target
    assert f"deeper than {MAX_DEPTH}" in message
    assert message.startswith(f"{path}:")


def test_deep_block_mapping_is_refused_at_the_offending_line(tmp_path: Path) -> None:
    # key k_i sits on line i+1 at depth i+1; the mapping below k_{MAX_DEPTH-1} is too deep
    depth = MAX_DEPTH + 5
    text = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "leaf: 1\n"
    message = _refusal(_write(tmp_path, text))
    assert f"deeper than {MAX_DEPTH}" in message
    line = int(message.split(":")[1])
    assert MAX_DEPTH - 2 <= line <= MAX_DEPTH + 2


def test_moderate_nesting_is_accepted(tmp_path: Path) -> None:
    text = "a: " + "[" * 10 + "1" + "]" * 10 + "\n"
    data = load_yaml(_write(tmp_path, text)).data
    data = data["a"]
    for _ in range(10):
        data = data[0]
    assert data == 1


def test_huge_integer_is_refused_with_position(tmp_path: Path, locate: Locate) -> None:
    text = "ok: 1\nbig: " + "9" * 5000 + "\n"
    path = _write(tmp_path, text)
    line, _ = locate(text, "big")
    message = _refusal(path)
    assert message.startswith(f"{path}:{line}:")


def test_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    assert "larger than" in _refusal(path)


# --------------------------------------------------------------------------- bad files


@pytest.mark.parametrize("content", [b"", b"   \n\n", b"\n"])
def test_empty_file_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.yaml"
    path.write_bytes(content)
    assert "empty" in _refusal(path)


def test_comment_only_file_is_refused(tmp_path: Path) -> None:
    assert "no YAML document" in _refusal(_write(tmp_path, "# nothing here\n"))


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "blob.yaml"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    assert "binary" in _refusal(path)


def test_invalid_utf8_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"a: 1\nb: 2\nname: caf\xe9\n")
    message = _refusal(path)
    assert "UTF-8" in message
    assert message.startswith(f"{path}:3:")


def test_missing_file_is_refused(tmp_path: Path) -> None:
    assert "no such file" in _refusal(tmp_path / "absent.yaml")


def test_a_dash_says_standard_input_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'check -' had said "-: no such file", where '-' means standard input to other tools."""
    monkeypatch.chdir(tmp_path)
    assert _refusal(Path("-")) == (
        "-: no such file: standard input ('-') is not read here; give the file's path"
    )


def test_directory_is_refused(tmp_path: Path) -> None:
    assert "directory" in _refusal(tmp_path)


def test_two_documents_are_refused_at_the_second(tmp_path: Path) -> None:
    text = "a: 1\n---\nb: 2\n"
    path = _write(tmp_path, text)
    assert _refusal(path).startswith(f"{path}:3:")


def test_syntax_error_points_at_the_problem(tmp_path: Path, locate: Locate) -> None:
    text = "schema: x\nlinks:\n  - id: a\n    name: one: two\n"
    path = _write(tmp_path, text)
    line, col = locate(text, ": two")
    message = _refusal(path)
    assert message.startswith(f"{path}:{line}:{col}:")
    assert "YAML syntax error" in message


def test_an_unclosed_quote_or_bracket_is_reported_where_it_opens(
    tmp_path: Path, locate: Locate
) -> None:
    """An unclosed quote on line 1 of a 5-line file had been reported at 6:1, 'found unexpected
    end of stream', the end of the file, where nothing is wrong."""
    text = 'name: "x\nnodes: 4\nsystem: dgx-h100\nrequirements: []\nnotes: none\n'
    path = _write(tmp_path, text)
    line, col = locate(text, '"x')
    assert (line, col) == (1, 7)
    assert _refusal(path) == (
        f"{path}:1:7: YAML syntax error: a quoted scalar starts here and the file ends before it "
        "is closed (found unexpected end of stream)"
    )
    # on the last line of a file without its final newline too (it had been 1:9, the file's end)
    path = _write(tmp_path, "name: x\nnodes: 4\nrequirements: {max: 2")
    assert _refusal(path).startswith(f"{path}:3:15: YAML syntax error: a flow mapping starts here")
    # a bracket left open: the failure is where the parser gave up, and says where it opened
    text = "name: x\nrequirements:\n  - allreduce: {size: 10GB, max_time: 40ms\n  - gap: 12\n"
    path = _write(tmp_path, text)
    line, col = locate(text, "{size")
    assert _refusal(path).endswith(f"(in a flow mapping that starts at line {line}, column {col})")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes("\ufeffa: 1\n".encode())
    assert load_yaml(path).data == {"a": 1}


# --------------------------------------------------------------------------- positions


def test_positions_of_nested_keys(tmp_path: Path, locate: Locate) -> None:
    text = "top:\n  inner:\n    - x: 1\n      y: 2\n    - z: 3\n  other: 4\n"
    doc = load_yaml(_write(tmp_path, text))
    assert doc.data == {"top": {"inner": [{"x": 1, "y": 2}, {"z": 3}]} | {"other": 4}}
    assert doc.locate(("top",)) == locate(text, "top")
    assert doc.locate(("top", "inner")) == locate(text, "inner")
    assert doc.locate(("top", "inner", 0, "x")) == locate(text, "x:")
    assert doc.locate(("top", "inner", 0, "y")) == locate(text, "y:")
    assert doc.locate(("top", "inner", 1, "z")) == locate(text, "z:")
    assert doc.locate(("top", "other")) == locate(text, "other")
    # an unknown tail falls back to the deepest known prefix
    assert doc.locate(("top", "inner", 1, "missing")) == locate(text, "z:")


def test_text_argument_is_labelled_with_the_source(locate: Locate) -> None:
    text = "a:\n  b: 1\n  b: 2\n"
    line, col = locate(text, "b:", occurrence=2)
    with pytest.raises(InputFileError) as info:
        load_yaml("label.yaml", text=text)
    assert str(info.value).startswith(f"label.yaml:{line}:{col}:")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('name: x\nnodes: 2\n\n"\\ud800": 1\n', '"\\ud800"'),
        ('name: x\nfabric:\n  link: ndr\n  "\\udfff": 1\n', '"\\udfff"'),
        ('name: x\nnotes: [a, "b \\ud83d c"]\n', '"b'),
        ('{"name": "x",\n "nodes": 2, "\\ud800": 1}\n', '"\\ud800"'),
    ],
)
def test_a_lone_surrogate_is_refused_where_it_is_written(
    tmp_path: Path, locate: Locate, text: str, needle: str
) -> None:
    """A "\\ud800" escape makes text no stream can encode; validation reported it at the
    enclosing mapping (1:1 for a top-level key)."""
    line, col = locate(text, needle)
    path = _write(tmp_path, text)
    message = _refusal(path)
    assert message.startswith(f"{path}:{line}:{col}: '")
    assert "holds a lone UTF-16 surrogate (half of a pair), which is no character" in message
    assert message.isascii()  # the surrogate is shown escaped


def test_a_surrogate_pair_is_the_character_it_stands_for(tmp_path: Path) -> None:
    # as JSON writes a character beyond U+FFFF (json.dumps(ensure_ascii=True))
    doc = load_yaml(_write(tmp_path, 'name: "\\ud83d\\ude00 \\U0001F600"\n'))
    assert doc.data == {"name": "\U0001f600 \U0001f600"}


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rate: int


class _Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[_Inner]


def test_validation_errors_point_at_the_offending_keys(tmp_path: Path, locate: Locate) -> None:
    text = "items:\n  - rate: 1\n  - rate: fast\n  - rate: 3\n    colour: red\n"
    path = _write(tmp_path, text)
    doc = load_yaml(path)
    with pytest.raises(InputFileError) as info:
        validate(doc, _Outer)
    problems = info.value.problems
    # all problems are collected, not just the first
    assert len(problems) == 2
    where = {(p.line, p.col) for p in problems}
    assert locate(text, "rate: fast") in where
    assert locate(text, "colour") in where
    assert any("unknown key" in p.message for p in problems)


def test_a_long_unknown_key_is_cut_in_its_refusal(tmp_path: Path) -> None:
    """A key is the user's text: an unknown key of 1,024 characters had been printed whole in
    its refusal's place; it is cut at 200 characters with '...', as every echo is."""
    key = "k" * 1024
    doc = load_yaml(_write(tmp_path, f"items: []\n{key}: 1\n"))
    with pytest.raises(InputFileError) as info:
        validate(doc, _Outer)
    (problem,) = info.value.problems
    assert problem.message == f"{'k' * 200}...: unknown key (not allowed here)"


def test_a_plain_key_past_yaml_s_limit_is_named_so(tmp_path: Path) -> None:
    """PyYAML reads a plain key of at most 1,024 characters; past that it had said "could not
    find expected ':'" at the ':' that is there. The refusal names the limit, at the key."""
    refusal = _refusal(_write(tmp_path, "name: x\n" + "k" * 1100 + ": 1\n"))
    assert refusal.endswith(
        ":2:1: YAML syntax error: a key of 1100 characters, more than the 1024 YAML allows a "
        "plain key (the ':' after it is not read as one)"
    )
    # at the limit the key is read (the file loads)
    assert load_yaml(_write(tmp_path, "k" * 1024 + ": 1\n", "ok.yaml")).data == {"k" * 1024: 1}


# --------------------------------------------------------------------------- shipped files

#: The YAML files shipped with the package (src/ibcalc/data/*.yaml link to data/*.yaml).
SHIPPED = sorted((Path(__file__).parent.parent / "data").glob("*.yaml"))


def test_shipped_files_are_there() -> None:
    assert {path.name for path in SHIPPED} >= {
        "links.yaml",
        "cost_params.yaml",
        "switches.yaml",
        "pairings.yaml",
    }


def test_libyaml_is_the_fast_loader() -> None:
    """PyYAML here has libyaml; without it the fast reader falls back to the pure-Python one."""
    import yaml

    assert yaml.__with_libyaml__
    assert issubclass(CSafeLoader, yaml.CSafeLoader)
    assert CSafeLoader.yaml_implicit_resolvers == SafeLoader.yaml_implicit_resolvers


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_shipped_file_reads_the_same_through_both_loaders(path: Path) -> None:
    """The fast reader of shipped files (libyaml, no positions) and the strict positioned
    reader of user files (duplicate keys, tags, limits) give the same data, types included."""
    text = path.read_text(encoding="utf-8")
    strict = load_yaml(path.name, text=text).data
    fast = safe_load(text)
    assert fast == strict
    assert repr(fast) == repr(strict)  # 1 vs 1.0 vs True, key order


@pytest.mark.parametrize(
    "text",
    [
        "ratio: 2:1\nhex: 0x10\noctal: 017\nflag: yes\nnan: .nan\nwhen: 2024-01-01\n",
        "grouped: 1_000\nbinary: 0b11\noff: off\nnum: 1.5e+3\nint: -3\nnothing: ~\nt: true\n",
    ],
)
def test_fast_loader_keeps_the_strict_scalar_rules(text: str) -> None:
    """YAML 1.1's base-60, hex, octal, yes/no, .nan and dates stay strings in both readers."""
    assert repr(safe_load(text)) == repr(load_yaml("x.yaml", text=text).data)


@pytest.mark.parametrize(
    "text",
    [
        "- 1\n- -0\n- +3\n- 1.5e+3\n- .5\n- 1.\n- -0.0\n- TRUE\n- False\n- ~\n- null\n- ''\n",
        "- 'true'\n- \"1\"\n- !!str 3\n- !!int 0x10\n- !!float 1\n- !!bool yes\n- !!null x\n",
        "a: &x [1, {b: 2}]\nc: *x\nd: 1\nd: 2\n",
        "x: {<<: {a: 1}, b: 2}\n",
        "a: !!binary aGVsbG8=\n",
        "",
    ],
)
def test_fast_loader_builds_what_pyyaml_s_constructor_builds(text: str) -> None:
    """safe_load turns libyaml's nodes into data itself: the same data as PyYAML's safe
    constructor (types, the last of duplicate keys), an alias the same object, and what is not
    plain data (an explicit tag's other forms, a merge key, binary) left to that constructor."""
    import yaml

    expected = yaml.load(text, Loader=CSafeLoader)
    got = safe_load(text)
    assert repr(got) == repr(expected)
    if isinstance(expected, dict) and "c" in expected:
        assert got["c"] is got["a"]


@pytest.mark.parametrize(
    "text",
    [
        "name: !!str {a: 1}\n",
        "aliases: !!seq nvlink-1\n",
        "aliases: !!map nvlink-1\n",
        'x: !!bool "true\\n"\n',
    ],
)
def test_fast_loader_leaves_a_tag_on_the_wrong_kind_of_node_to_pyyaml(text: str) -> None:
    """A tag on a node of another kind, or a tagged scalar with a trailing newline, is PyYAML's
    constructor's to refuse, as before the fast path, with the same exception: ``!!str {a: 1}``
    had come back as a repr of PyYAML's nodes, ``!!seq nvlink-1`` as an internal error of the
    fast path's own, ``!!bool "true\\n"`` as False (review ET 1)."""
    import yaml

    with pytest.raises((yaml.YAMLError, KeyError)) as expected:
        yaml.load(text, Loader=CSafeLoader)
    with pytest.raises(type(expected.value)) as got:
        safe_load(text)
    assert str(got.value) == str(expected.value)


def test_trusted_document_positions_are_the_strict_reader_s() -> None:
    path = next(path for path in SHIPPED if path.name == "links.yaml")
    text = path.read_text(encoding="utf-8")
    doc = trusted_document("data/links.yaml", text)
    assert isinstance(doc, TrustedDocument)
    assert doc.marks == {}  # nothing worked out until a position is asked for
    strict = load_yaml("data/links.yaml", text=text)
    for loc in [("links", 0, "id"), ("links", 3, "per_direction"), ("systems", 2), ("schema",)]:
        assert doc.locate(loc) == strict.locate(loc)
        assert doc.locate(loc) != (None, None)
    assert doc.marks == strict.marks


def test_trusted_document_of_broken_text_says_where(locate: Locate) -> None:
    text = "schema: x\nlinks:\n  - id: a\n    name: [unclosed\n"
    with pytest.raises(InputFileError) as info:
        trusted_document("data/broken.yaml", text)
    problem = info.value.problems[0]
    assert problem.path == "data/broken.yaml"
    assert problem.line is not None
    assert problem.col is not None


# --------------------------------------------------------------------------- kinds of file


@pytest.mark.parametrize(
    ("data", "expected", "kind"),
    [
        ({"schema": "ibcalc-switches/1", "switches": []}, "cluster-design", "switches"),
        ({"switches": [], "node_cages": []}, "catalogue", "switches"),
        ({"schema": "ibcalc-pairings/1", "intra": [], "inter": []}, "cluster-design", "pairings"),
        ({"schema": "ibcalc-nccl-releases/1", "releases": []}, "cost-parameter", "nccl-releases"),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "catalogue", "json-schema"),
        ({"$defs": {}, "properties": {}}, "cluster-design", "json-schema"),
        ({"schema": "ibcalc-nccl-check/2", "runs": []}, "cluster-design", "nccl-check"),
        ({"schema": "ibcalc-calibration/1"}, "cost-parameter", "calibration"),
        ({"schema": "ibcalc-catalogue/1", "links": []}, "catalogue", None),
        # a design whose $schema names the design schema is a design with an unknown key
        (
            {"$schema": "./ibcalc-design.schema.json", "name": "x", "nodes": 2},
            "cluster-design",
            None,
        ),
        # a pairings layout without its schema line reads as a design (intra, inter are design keys)
        ({"intra": [], "inter": []}, "cluster-design", None),
        ({"anything": 1}, "catalogue", None),
    ],
)
def test_other_kind_names_what_a_file_is(data: object, expected: str, kind: str | None) -> None:
    assert other_kind(data, expected) == kind


def test_a_value_under_an_alias_is_placed_where_the_alias_is_used() -> None:
    """Two requirements sharing one anchored mapping were both reported at the anchor
    (alias.yaml:5:31 twice): the second is at the key whose value is the alias."""
    text = (
        "name: x\nrequirements:\n  - allreduce: &r {size: 1GB, max_time: 10ms}\n  - allreduce: *r\n"
    )
    doc = load_yaml("alias.yaml", text=text)
    assert doc.data["requirements"][0] == doc.data["requirements"][1]
    assert doc.locate(("requirements", 0, "allreduce", "max_time")) == (3, 31)
    assert doc.locate(("requirements", 1, "allreduce", "max_time")) == (4, 5)
    assert doc.locate(("requirements", 1, "allreduce")) == (4, 5)
    assert doc.locate(("requirements", 1)) == (4, 5)
    # a list item written as a bare alias is placed where it is written, and all under it (it
    # had been placed at its anchor's line, two items alike: review CL)
    items = "requirements:\n  - &r\n    allreduce: {size: 10GB, max_time: 4ms}\n  - *r\n  -   *r\n"
    doc = load_yaml("items.yaml", text=items)
    assert doc.locate(("requirements", 0, "allreduce", "max_time")) == (3, 29)
    assert doc.locate(("requirements", 1)) == (4, 5)
    assert doc.locate(("requirements", 1, "allreduce", "max_time")) == (4, 5)
    assert doc.locate(("requirements", 2, "allreduce", "size")) == (5, 7)
    # in a flow list too, and an alias in a mapping's value or key inside one
    flow = "a: &a {x: 1}\nb: [1, *a, {y: *a}]\n"
    doc = load_yaml("flow.yaml", text=flow)
    assert doc.locate(("b", 1, "x")) == (2, 8)
    assert doc.locate(("b", 2, "y", "x")) == (2, 13)


def test_aliases_are_placed_by_the_parser_that_read_the_file(tmp_path: Path) -> None:
    """Text libyaml refuses and the pure-Python parser reads ('{max_time:}', a BOM inside the
    text) had ended in an internal error where a '*' was anywhere in it, a comment's too: the
    aliases' places were read with libyaml (review CP). They are read with the parser that read
    the file, and a file whose events do not follow keeps its anchors' places."""
    empty = "a: &x {s: 1}\nb: {t:}  # a * here\nc: *x\n"
    doc = load_yaml(_write(tmp_path, empty))
    assert doc.data == {"a": {"s": 1}, "b": {"t": None}, "c": {"s": 1}}
    assert doc.locate(("c", "s")) == (3, 1)  # at its key, from the pure-Python parser's events
    bom = "a: &x {s: 1}\n\ufeffb: 2\nc: *x\n"
    doc = load_yaml(_write(tmp_path, bom))
    assert doc.locate(("c", "s")) == (3, 1)
    # a duplicate written inside an anchored mapping whose anchor sits in a skipped duplicate
    # is said where it is written, not at the alias that builds it (review CP)
    skipped = "n: d\nn: &t {size: 1, max: 40, max: 50}\nm:\n  - r: *t\n"
    assert _refusals(tmp_path, skipped) == [
        (2, 1, "duplicate key 'n' (first at line 1)"),
        (2, 26, "duplicate key 'max' (first at column 17)"),
    ]
