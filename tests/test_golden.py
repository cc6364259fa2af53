"""Golden files: the exact text of tables and error reports users read.

A change to the output shows up here as a diff to review; after checking it is intended, run
``pytest tests/test_golden.py --update-golden`` and commit the rewritten files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcalc.cli import main

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).resolve().parents[1]

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
    if request.config.getoption("--update-golden"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with --update-golden"
    assert text == path.read_text(encoding="utf-8")
