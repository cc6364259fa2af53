"""The README's two commands are what CI runs, and its examples are real output."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import check_shown_in_order
from ibcalc.engine.types import Estimate

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_has_exactly_two_commands_and_ci_runs_the_test_one() -> None:
    commands = _commands()
    assert len(commands) == 2
    install_and_run, test = commands
    assert "ibcalc allreduce" in install_and_run
    assert "pytest" in test
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test in ci.splitlines()


def test_readme_error_examples_match_the_tool(capsys: object) -> None:
    import pytest

    from ibcalc.cli import main

    for args, expected in (
        (
            ["allreduce", "--size", "1e9", "--fabric", "ndrr"],
            "error: --fabric 'ndrr' is not a known link",
        ),
        (["allreduce", "--size", "10Gb", "--fabric", "ndr"], "write 10GB for bytes"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err  # type: ignore[attr-defined]
        assert expected in err
        assert expected in README


def test_readme_allreduce_example_is_current_output() -> None:
    """The README's first example is what the tool prints now (rerun it after model changes)."""
    from typer.testing import CliRunner

    from ibcalc.cli import app

    result = CliRunner().invoke(app, ["allreduce", "--size", "10GB", "--fabric", "ndr"])
    assert result.exit_code == 0
    head = result.output.split("alternatives")[0]
    wanted = [
        line.rstrip()
        for line in head.splitlines()
        if line.strip().split(" ")[0] in ("time", "algbw", "busbw", "algorithm", "bottleneck")
    ]
    assert len(wanted) == 5
    for line in wanted:
        assert line in README, line


def _examples() -> list[tuple[str, list[str]]]:
    """Each ``$ ibcalc ...`` command in the README's ``text`` blocks, with the lines shown under
    it (up to the next command or the end of the block)."""
    examples: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```text\n(.*?)```", README, flags=re.S):
        # every block holding a command, whatever comes first (a block opening with a blank
        # line had had its output unchecked), blank lines kept: they are output too (review DB)
        ours: list[tuple[str, list[str]]] = []
        for line in block.splitlines():
            if line.startswith("$ ibcalc "):
                ours.append((line[2:], []))
            elif ours:
                ours[-1][1].append(line.rstrip())
        for command, shown in ours:
            while shown and not shown[-1]:
                shown.pop()
            examples.append((command, shown))
    return examples


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _readme_width() -> str:
    """The page width the README says its examples are laid out for: it had not said, and an
    80-column terminal or a pipe (160) shows another layout than the one pasted."""
    found = re.search(r"laid out for a page (\d+) columns wide \(`COLUMNS=(\d+)`\)", README)
    assert found is not None, "the README states the page width of its examples"
    assert found[1] == found[2]
    return found[1]


def test_readme_example_files_are_in_the_checkout() -> None:
    """The files the README's examples read are in this repository, and the README says to run
    those from the checkout (from anywhere else they end 'no such file')."""
    import shlex

    assert "run those from the checkout" in README
    paths = [arg for command, _ in _examples() for arg in shlex.split(command) if "/" in arg]
    assert len(paths) == 4
    for path in paths:
        assert (ROOT / path).is_file(), path


def test_readme_examples_are_current_output(monkeypatch: object) -> None:
    """Every README example is what the tool prints now at the width the README states: its
    lines appear in the command's output, in order (an example leaves lines out only where a
    line of ``...`` says so, and never changes one: the train and infer examples had left out
    their per-phase notes and a SHARP hint without a mark, the checkpoint and gap examples an
    assumption: review CZ). Dates are compared as dates. Rerun the commands after a change and
    paste their output."""
    import shlex

    import pytest
    from typer.testing import CliRunner

    from ibcalc.cli import app

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.chdir(ROOT)
    examples = _examples()
    assert len(examples) >= 10
    runner = CliRunner()
    width = _readme_width()
    for command, shown in examples:
        result = runner.invoke(app, shlex.split(command)[1:], env={"COLUMNS": width})
        output = result.output
        if result.stderr_bytes and result.stderr not in output:
            output += result.stderr  # click's runner mixes stderr into output in some releases
        printed = [_DATE.sub("DATE", line.rstrip()) for line in output.splitlines()]
        check_shown_in_order([_DATE.sub("DATE", line) for line in shown], printed, command)


def test_readme_python_example_prints_what_it_shows(capsys: object) -> None:
    """The README's Python example runs and prints the block shown under it."""
    import pytest

    assert isinstance(capsys, pytest.CaptureFixture)
    code = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert len(code) == 1
    shown = README.split(code[0], 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    exec(compile(code[0], "README.md", "exec"), {})
    assert capsys.readouterr().out == shown


def test_readme_python_example_quotes_an_assumption_it_makes() -> None:
    """The prose under the example quotes one of ``est.assumptions``; it had quoted 'would not
    change this all-reduce' where the example's estimate says SHARP makes it 1.03x faster (an
    auditor's review)."""
    code = re.findall(r"```python\n(.*?)```", README, flags=re.S)[0]
    head = code.split("print(", 1)[0]  # the catalogue, the cluster and the estimate
    names: dict[str, object] = {}
    exec(compile(head, "README.md", "exec"), names)
    quoted = README.split("`est.assumptions` names the cluster fields", 1)[1].split('(`"', 1)[1]
    quoted = " ".join(quoted.split('"`', 1)[0].split())
    est = names["est"]
    assert isinstance(est, Estimate)
    assert quoted in est.assumptions


def test_readme_quotes_the_published_p5_sweep_as_its_file_has_it() -> None:
    """The README quotes 2 x p5's published sweep beside its sweep example: each time and busbw
    is the out-of-place figure of that size's row in the file it names."""
    import pytest

    text = " ".join(README.split())
    said = re.search(
        r"copied to `(benchmarks/data/sweeps/[^`]+)`: ([0-9.]+) us at 8 B, ([0-9.]+) us at 8 MiB, "
        r"([0-9.]+) GB/s busbw at 128 MiB, ([0-9.]+) GB/s at 16 GiB\.\)",
        text,
    )
    assert said is not None
    rows: dict[int, list[str]] = {}
    for line in (ROOT / said.group(1)).read_text(encoding="utf-8").splitlines():
        cells = line.split(":", 1)[-1].split()
        if len(cells) >= 8 and cells[0].isdigit() and cells[2] == "float":
            rows[int(cells[0])] = cells  # size count type redop root time algbw busbw ...
    assert float(said.group(2)) == pytest.approx(float(rows[8][5]), abs=0.05)
    assert float(said.group(3)) == pytest.approx(float(rows[8 * 2**20][5]), abs=0.5)
    assert float(said.group(4)) == pytest.approx(float(rows[128 * 2**20][7]), abs=0.5)
    assert float(said.group(5)) == pytest.approx(float(rows[16 * 2**30][7]), abs=0.5)


def test_readme_counts_the_fitted_constants_calibrate_derives() -> None:
    """The README gives the number of constants `benchmarks/calibrate.py` re-derives; it had
    kept 20 after the all-to-all's share of the scale-up rate became the 21st."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fits import FITS

    text = " ".join(README.split())
    found = re.search(r"re-derives every fitted constant \((\d+), each with its rows", text)
    assert found is not None
    assert int(found.group(1)) == len(FITS)
