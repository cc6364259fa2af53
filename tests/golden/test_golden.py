"""Golden files: the exact text of tables and error reports users read.

A change to the output shows up here as a diff to review; after checking it is intended, run
``pytest tests/golden/test_golden.py --update-golden`` and commit the rewritten files. Under
``--update-golden`` a test never passes: it compares first, rewrites the file, and is skipped
with what changed (or "unchanged"), so a run that rewrote files cannot be mistaken for a
green one.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from ibcalc.cli import main

GOLDEN = Path(__file__).parent  # the golden files sit next to this module
ROOT = Path(__file__).resolve().parents[2]

CASES = {
    "links_scale_out": ["links", "--kind", "scale-out"],
    "allreduce_dgx_a100_16": ["allreduce", "-s", "1GB", "--system", "dgx-a100", "-N", "16"],
    "sweep_p5": ["sweep", "allreduce", "-b", "1K", "-e", "1G", "-f", "32", "--system", "aws-p5"],
    "gap_nvlink4_ndr": ["gap", "--intra", "nvlink4", "--inter", "ndr"],
    "error_unknown_fabric": ["allreduce", "-s", "1GB", "--fabric", "infiniband-nd"],
    "error_bits_size": ["allreduce", "-s", "10Gb"],
    "error_forced_nvls_a100": ["allreduce", "-s", "1GB", "--system", "dgx-a100", "--algo", "nvls"],
    "check_failing": ["check", str(ROOT / "examples" / "failing-requirement.yaml")],
}


def _run(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    monkeypatch.setenv("COLUMNS", "140")
    code = 0
    try:
        main(args)
    except SystemExit as exit_info:
        code = int(exit_info.code or 0)
    out, err = capsys.readouterr()
    text = f"$ ibcalc {' '.join(args)}\n[exit {code}]\n" + out + ("[stderr]\n" + err if err else "")
    lines = [line.rstrip() for line in text.replace(str(ROOT) + "/", "").splitlines()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_matches_golden(
    name: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    text = _run(CASES[name], capsys, monkeypatch)
    path = GOLDEN / f"{name}.txt"
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if request.config.getoption("--update-golden"):
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"{path.name}: {diff_stat(old, text)} (rewritten, not compared)")
    assert old is not None, f"no golden file {path.name}: run with --update-golden"
    assert text == old


def diff_stat(old: str | None, new: str) -> str:
    """``+3 -1 lines`` between two texts, ``new file`` or ``unchanged``."""
    if old is None:
        return f"new file, {len(new.splitlines())} lines"
    if old == new:
        return "unchanged"
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return f"+{added} -{removed} lines"


def test_diff_stat_counts_changed_lines() -> None:
    assert diff_stat("a\nb\n", "a\nb\n") == "unchanged"
    assert diff_stat(None, "a\nb\n") == "new file, 2 lines"
    assert diff_stat("a\nb\nc\n", "a\nB\nc\nd\n") == "+2 -1 lines"


def test_update_golden_skips_instead_of_passing(tmp_path: Path) -> None:
    """This very file, run on a copy with an empty golden folder: --update-golden writes the
    file and skips (never passes), a plain run then passes, and a changed golden file fails."""
    folder = tmp_path / "golden"  # the module reads its golden files from its own folder
    folder.mkdir()
    (folder / "test_golden.py").write_text(Path(__file__).read_text(encoding="utf-8"))
    (folder / "conftest.py").write_text(
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--update-golden', action='store_true', default=False)\n"
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-k",
        "test_output_matches_golden and error_bits_size",
        str(folder / "test_golden.py"),
    ]

    def run(*extra: str) -> str:
        done = subprocess.run(
            [*command, *extra], capture_output=True, text=True, cwd=tmp_path, check=False
        )
        return done.stdout.strip().splitlines()[-1]

    assert "1 skipped" in run("--update-golden")
    assert "1 passed" in run()
    golden = tmp_path / "golden" / "error_bits_size.txt"
    golden.write_text(golden.read_text() + "one more line\n")
    assert "1 failed" in run()
    assert "1 skipped" in run("--update-golden")


def test_the_dgx_a100_golden_terms_worked_by_hand() -> None:
    """allreduce_dgx_a100_16's latency and transfer from the formulas, not from the tool: the
    golden guards the text, this guards two of its three terms (the fill is checked on round
    tiers in tests/engine/test_pipeline.py)."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.cluster import ClusterSpec
    from ibcalc.engine.types import Algorithm, Collective
    from ibcalc.facade import estimate

    est = estimate(
        load_catalogue(use_env=False),
        ClusterSpec(system="dgx-a100", nodes=16),
        Collective.ALL_REDUCE,
        1e9,
    )
    best = est.best
    assert best.algorithm is Algorithm.TREE
    # 16 nodes: each node sends 2S over 8 HDR ports of 25 GB/s x 0.975 (hdr's efficiency), at
    # NCCL's tree all-reduce factor 0.92
    assert best.transfer_s == pytest.approx(2 * 1e9 / (8 * 25e9 * 0.975 * 0.92), rel=1e-6)
    # NCCL 2.30.7 tree/Simple: base 8.4 us; 2 x 7 NVLink hops of 4.0 us x 1980/1410 (A100 clock);
    # 2 x log2(16) = 8 NET hops of 14 us; the proxy's post overhead 2 x (2 us x 3) on DGX A100's
    # AMD hosts; 16 channels (8 NICs x 2) x 0.6 us of proxy operations
    latency_us = 8.4 + 2 * 7 * 4.0 * 1980 / 1410 + 8 * 14.0 + 2 * 6.0 + 16 * 0.6
    assert best.latency_s == pytest.approx(latency_us * 1e-6, rel=1e-6)
