"""Every examples/*.yaml is checked by ``ibcalc check`` and shown by ``ibcalc design show``.

Passing examples must pass with at least 10% margin on every collective target (so engine
refinements do not flip them); failing-requirement.yaml must fail, for the reason it states.
The JSON Schema next to the examples must be what ``ibcalc schema`` prints now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibcalc.cli import main
from ibcalc.design.check import json_schema
from ibcalc.render.check import schema_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DESIGNS = sorted(EXAMPLES.glob("*.yaml"))
FAILING = EXAMPLES / "failing-requirement.yaml"
SCHEMA = EXAMPLES / "ibcalc-design.schema.json"
SCHEMA_LINE = "# yaml-language-server: $schema=./ibcalc-design.schema.json"

REQUIRED = {
    "dgx-h100-superpod-su-ndr.yaml",
    "dgx-a100-pod-hdr.yaml",
    "roce-400g-2to1.yaml",
    "gb200-nvl72-multirack.yaml",
    "aws-p5-efa.yaml",
    "failing-requirement.yaml",
}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``ibcalc ARGS`` in-process; return (exit code, stdout, stderr)."""
    code: int = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_required_examples_exist() -> None:
    assert {p.name for p in DESIGNS} >= REQUIRED


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.name)
def test_example_starts_with_schema_line(path: Path) -> None:
    assert path.read_text(encoding="utf-8").splitlines()[0] == SCHEMA_LINE


@pytest.mark.parametrize("path", [p for p in DESIGNS if p != FAILING], ids=lambda p: p.name)
def test_passing_example(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", str(path), "--format", "json"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    findings = data["files"][0]["findings"]
    assert findings, "an example without requirements checks nothing"
    for finding in findings:
        assert finding["passed"], finding["message"]
        if finding["unit"] in ("s", "B/s", "x"):  # model predictions: keep headroom
            assert finding["margin"] >= 0.10 - 1e-9, finding["message"]


def test_failing_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", str(FAILING)], capsys)
    assert (code, err) == (1, "")
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1
    assert "allreduce 10 GB: time <= 40 ms" in fails[0]
    assert "over the required <= 40 ms" in out
    assert "1 failed" in out


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.name)
def test_design_show_example(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["design", "show", str(path)], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("design ")


def test_superpod_example_matches_nvidia_table4(capsys: pytest.CaptureFixture[str]) -> None:
    """NVIDIA RA-11333-001 Table 4, 1 SU: 8 leaf, 4 spine, 252 node/UFM cables, 256 leaf-spine."""
    path = EXAMPLES / "dgx-h100-superpod-su-ndr.yaml"
    code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    fabric = json.loads(out)["fabric"]
    assert code == 0
    assert (fabric["leaf_switches"], fabric["spine_switches"], fabric["core_switches"]) == (8, 4, 0)
    assert (fabric["node_leaf_cables"], fabric["leaf_spine_cables"]) == (252, 256)


def test_a100_example_matches_derived_superpod(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/design-files.md#dgx-a100-superpod (derived from RA-09950-001): 56 leaf, 80 spine,
    28 core."""
    path = EXAMPLES / "dgx-a100-pod-hdr.yaml"
    code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    fabric = json.loads(out)["fabric"]
    assert code == 0
    assert (fabric["leaf_switches"], fabric["spine_switches"], fabric["core_switches"]) == (
        56,
        80,
        28,
    )


def test_all_examples_in_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    """One run over every file: the failing example makes it exit 1, nothing exits 2."""
    code, out, err = run(["check", *map(str, DESIGNS)], capsys)
    assert (code, err) == (1, "")
    assert f"in {len(DESIGNS)} files" in out


def test_schema_file_is_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    """Regenerate with: ibcalc schema -o examples/ibcalc-design.schema.json"""
    expected = schema_text(json_schema())
    assert SCHEMA.read_text(encoding="utf-8") == expected, (
        "stale schema: run `ibcalc schema -o examples/ibcalc-design.schema.json`"
    )
    code, out, _ = run(["schema"], capsys)
    assert (code, out) == (0, expected)


def test_ci_doc_design_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The design shown in docs/ci.md validates and passes."""
    text = (EXAMPLES.parent / "docs" / "ci.md").read_text(encoding="utf-8")
    snippet = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "pod-a.yaml"
    path.write_text(snippet, encoding="utf-8")
    code, out, err = run(["check", str(path)], capsys)
    assert (code, err) == (0, ""), out


def test_pre_commit_hook() -> None:
    """.pre-commit-hooks.yaml declares ibcalc-check for design YAMLs."""
    import re

    import yaml

    hooks = yaml.safe_load((EXAMPLES.parent / ".pre-commit-hooks.yaml").read_text("utf-8"))
    (hook,) = hooks
    assert (hook["id"], hook["entry"], hook["language"]) == (
        "ibcalc-check",
        "ibcalc check",
        "python",
    )
    files = re.compile(hook["files"])
    for name in ("designs/pod-a.yaml", "infra/designs/b.yml", "clusters/pod.ibcalc.yaml"):
        assert files.search(name), name
    for name in ("src/ibcalc/data/links.yaml", ".github/workflows/ci.yml", "designs.md"):
        assert not files.search(name), name


def test_the_design_file_guide_shows_the_shipped_example() -> None:
    """docs/design-files.md opens with the SU example; it had drifted from the file (a 45 ms
    target that fails, 53.2 ms predicted, under the passing example's name)."""
    import re

    import yaml

    guide = (EXAMPLES.parent / "docs" / "design-files.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", guide, re.S)
    assert block is not None
    shown = yaml.safe_load(block.group(1))
    shipped = yaml.safe_load((EXAMPLES / "dgx-h100-superpod-su-ndr.yaml").read_text("utf-8"))
    assert shown == shipped
