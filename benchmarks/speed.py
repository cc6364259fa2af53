"""Speed figures: start-up against a floor, checking 100 design files, and in-process costs.

    python benchmarks/speed.py [--runs N]

Start-up is measured as a ratio to ``benchmarks/floor.py``, a script doing the same kind of work
with ibcalc's libraries (a one-command Typer app, one pydantic model validated, one rich table
printed), so that the figures mean the same on a fast and a slow machine. Every command runs
``--runs`` times (15 by default) as a subprocess of the console script of this interpreter's
environment, the commands interleaved so that machine noise hits all of them alike. The ratio
is the median over rounds of each round's ratio of CPU time (user + system of the child
process) to the floor's in the same round: on a shared VM wall times drift by half between
runs, paired CPU-time ratios much less. Median wall times are printed beside them. Targets
(the README's "How fast is it?") are printed beside the figures; nothing is asserted (no timed
tests; targets live here).

* ``ibcalc allreduce --size 10GB --fabric ndr``  <= 1.15 x the floor
* ``ibcalc --help`` and ``ibcalc --version``       <= 0.9 x the floor
* ``ibcalc check`` over 100 design files            < 1 s beyond one start-up (the same command
  over one file)
* one estimate in process, once the catalogue is loaded: well under 10 ms
* ``calibrate`` on two logs in process, printed without a target
* ``nccl-check`` of a log of ``MAX_LOG_RUNS`` one-row runs in process (read, checked, printed as
  a table and as JSON), and the refusal of a log of ten times as many: printed without a target
  (docs/nccl-check.md gives them)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from diagnosis import scaled
from ibcalc.catalogue import load as catalogue_load
from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.engine.types import Collective
from ibcalc.errors import LogParseError
from ibcalc.facade import estimate_on
from ibcalc.logs import ParsedLog, parse_log, read_log
from ibcalc.logs.calibrate import calibrate_logs
from ibcalc.logs.check import check_log
from ibcalc.logs.parse import MAX_LOG_RUNS
from ibcalc.render.logs import render_check_report

ROOT = Path(__file__).resolve().parent.parent
FLOOR = Path(__file__).resolve().parent / "floor.py"
#: The console script of the environment running this file (``.venv/bin/ibcalc``).
IBCALC = str(Path(sys.executable).parent / "ibcalc")
#: Design files checked in one call.
CHECK_FILES = 100
SWEEPS = Path(__file__).resolve().parent / "data" / "sweeps"
CALIBRATE_LOGS = ("13_allreduce_1node_4xH100_intranode.txt", "10_allreduce_2node_8xH100_ib.txt")
#: The environment of the timed runs: bytecode caching on, as Python has it by default and as
#: an installed wheel has it (pip compiles at install), so that no run compiles its sources
#: again (the first, untimed, run of each command writes the cache).
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _median_s(function: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _run_s(argv: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU time (user + system) of one run of ``argv`` (its output discarded; a
    failing exit is still timed, since ``ibcalc check`` over the examples finds the failing
    one)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) times of each command over ``runs`` rounds, one run of each per round."""
    for argv in commands.values():  # warm the file cache and write the bytecode once
        _run_s(argv)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(_run_s(argv))
    return times


def _wall(times: list[tuple[float, float]]) -> float:
    return statistics.median(wall for wall, _ in times)


def _paired_ratio(times: list[tuple[float, float]], floor: list[tuple[float, float]]) -> float:
    """Median over rounds of this command's CPU time over the floor's in the same round."""
    return statistics.median(cpu / base for (_, cpu), (_, base) in zip(times, floor, strict=True))


def _design_copies(directory: Path, count: int) -> list[str]:
    """``count`` design files: the examples copied over and over into ``directory``."""
    examples = sorted((ROOT / "examples").glob("*.yaml"))
    files = []
    for i in range(count):
        source = examples[i % len(examples)]
        target = directory / f"{i:03d}-{source.name}"
        shutil.copyfile(source, target)
        files.append(str(target))
    return files


def _slowed(path: Path, from_bytes: int, factor: float) -> tuple[ParsedLog, str]:
    """The log at ``path`` (its first run, and its text for NCCL's output) with the times of
    its rows of ``from_bytes`` and more multiplied by ``factor`` (both columns; rates follow)."""
    log = read_log(path)
    run = log.parsed.runs[0]
    ratios = [factor if row.size_bytes >= from_bytes else 1.0 for row in run.rows]
    return log.parsed.model_copy(update={"runs": [scaled(run, ratios)]}), log.text


def _one_row_runs(count: int) -> str:
    """A log of ``count`` runs of one row each: sweep 15's header (1 x 8 A100), its 32 MiB row
    and its trailer, repeated (a review's log of 3,000 such runs had taken 46 s)."""
    lines = (SWEEPS / "15_allreduce_1node_8xA100-40GB_intranode.txt").read_text("utf-8").split("\n")
    rows = [i for i, line in enumerate(lines) if line.strip()[:1].isdigit()]
    trailer = [line for line in lines[rows[-1] + 1 :] if line.strip()]
    return "\n".join([*lines[: rows[0]], lines[rows[-1]], *trailer] * count) + "\n"


def _many_runs(catalogue: Catalogue) -> tuple[float, float, float]:
    """Seconds to read, check and print a log of :data:`MAX_LOG_RUNS` one-row runs as a table
    and as JSON, and to refuse one of ten times as many (all in process, once)."""
    text = _one_row_runs(MAX_LOG_RUNS)

    def report(fmt: str) -> float:
        started = time.perf_counter()
        parsed = parse_log(text, source="runs.txt")
        render_check_report(check_log(parsed, text, catalogue=catalogue), fmt)
        return time.perf_counter() - started

    table, as_json = report("table"), report("json")
    many = _one_row_runs(10 * MAX_LOG_RUNS)
    started = time.perf_counter()
    try:
        parse_log(many, source="many.txt")
    except LogParseError:
        return table, as_json, time.perf_counter() - started
    raise AssertionError(f"a log of {10 * MAX_LOG_RUNS:,} runs was read, not refused")


def _verdict(value: float, target: float) -> str:
    return "holds" if value <= target else "MISSED"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        designs = _design_copies(Path(tmp), CHECK_FILES)
        startup = _interleaved(
            {
                "floor": [sys.executable, str(FLOOR), "--size", "10GB"],
                "estimate": [IBCALC, "allreduce", "--size", "10GB", "--fabric", "ndr"],
                "help": [IBCALC, "--help"],
                "version": [IBCALC, "--version"],
            },
            args.runs,
        )
        check = _interleaved(
            {"check1": [IBCALC, "check", designs[0]], "check100": [IBCALC, "check", *designs]},
            max(3, args.runs // 3),
        )

    def first_load() -> None:
        catalogue_load._builtin.cache_clear()  # read once per process otherwise
        load_catalogue(use_env=False)

    load = _median_s(first_load, 5)
    catalogue = load_catalogue(use_env=False)
    cluster = resolve_cluster(catalogue, ClusterSpec(system="aws-p5", nodes=16))
    one = _median_s(lambda: estimate_on(cluster, Collective.ALL_REDUCE, 1e9), 50)
    sizes = [8.0 * 2**i for i in range(32)]
    sweep = _median_s(lambda: [estimate_on(cluster, Collective.ALL_REDUCE, s) for s in sizes], 5)

    # calibrate on two published H100 logs (one node, two nodes): the fit runs the model a few
    # hundred times over their 35 rows; it took 23 s when every run built the full estimate
    logs = [read_log(SWEEPS / name) for name in CALIBRATE_LOGS]
    started = time.perf_counter()
    calibrate_logs(logs, catalogue=catalogue)
    fit = time.perf_counter() - started

    # nccl-check of one faulty run (sweep 06, 2 x p5, its sizes from 1 MiB run 2x slower): the
    # diagnosis re-runs the model under each cause and fits the limiting rates; it took 0.7 s a
    # run when every re-run built the full estimate
    slow, text = _slowed(SWEEPS / "06_allreduce_2node_16xH100_efa.txt", 2**20, 2.0)
    diagnose = _median_s(lambda: check_log(slow, text, catalogue=catalogue), 3)
    many_table, many_json, refused = _many_runs(catalogue)

    floor = startup["floor"]
    print(
        f"start-up, {args.runs} interleaved rounds (console script {IBCALC}); x floor = median "
        "of each round's CPU-time ratio"
    )
    print(f"  {'command':<44} {'wall':>8} {'x floor':>8}  target")
    print(f"  {'floor (benchmarks/floor.py)':<44} {_wall(floor) * 1e3:5.0f} ms {1.0:7.2f}x")
    for name, label, target in (
        ("estimate", "ibcalc allreduce --size 10GB --fabric ndr", 1.15),
        ("help", "ibcalc --help", 0.9),
        ("version", "ibcalc --version", 0.9),
    ):
        ratio = _paired_ratio(startup[name], floor)
        print(
            f"  {label:<44} {_wall(startup[name]) * 1e3:5.0f} ms {ratio:7.2f}x"
            f"  <= {target:.2f}x {_verdict(ratio, target)}"
        )
    one_file, hundred = _wall(check["check1"]), _wall(check["check100"])
    beyond = hundred - one_file
    print(
        f"ibcalc check, {CHECK_FILES} design files     {hundred * 1e3:6.0f} ms"
        f"  ({beyond * 1e3:.0f} ms beyond one start-up, check of 1 file"
        f" {one_file * 1e3:.0f} ms; target < 1000 ms {_verdict(beyond, 1.0)})"
    )
    print("in process")
    print(f"  catalogue load (built-in, as shipped)    {load * 1e3:8.1f} ms")
    print(f"  one all-reduce estimate (16 x aws-p5)    {one * 1e3:8.2f} ms")
    print(f"  32-size sweep                            {sweep * 1e3:8.1f} ms")
    print(f"  calibrate, sweeps 13 and 10 (2 logs)     {fit:8.2f} s (once)")
    print(f"  nccl-check of a faulty 2 x p5 run        {diagnose * 1e3:8.1f} ms")
    print(
        f"  nccl-check, {MAX_LOG_RUNS:,} one-row runs (the cap)  table {many_table:.2f} s, "
        f"JSON {many_json:.2f} s; {10 * MAX_LOG_RUNS:,} refused in {refused:.2f} s (once)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
