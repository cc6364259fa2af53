"""How fast bad input is refused: every refusal of the regression corpus, timed in-process.

    python benchmarks/refusals.py

Runs each row of ``tests/hostile/test_corpus.py`` that ends in a refusal (exit 2) through
``ibcalc.cli.main`` in this process, twice, timing the second pass (so the CLI's start-up and
first imports are excluded), and each hostile file of
``tests/hostile/test_hostile.py`` through ``ibcalc check``; then the 4 MiB list of 2.1 million
items in a fresh process, with its peak memory, and a log whose device list has 100,000 ranks
(read in process). Prints the case count, the five slowest refusals and the slowest against the
target of the README's "How fast is it?" (every refusal within 1 s and 200 MB; the long log
within 1 s too).
Nothing is asserted here: the tests only guard against hangs, the target lives here.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hostile"))

import test_corpus as corpus  # noqa: E402
import test_hostile as hostile  # noqa: E402

from ibcalc.cli import main as cli_main  # noqa: E402

TARGET_S = 1.0
TARGET_PEAK_MB = 200.0


def _run(args: list[str]) -> tuple[int, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            cli_main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, time.perf_counter() - start


def _corpus_times() -> dict[str, float]:
    times: dict[str, float] = {}
    home = Path.cwd()
    for case in corpus.CASES:
        if case.code != 2 or case.run != "in" or "plot" in " ".join(case.args):
            continue
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            if case.setup is not None:
                corpus.SETUPS[case.setup](tmp)
            saved = {key: os.environ.get(key) for key in case.env}
            os.environ.update({k: corpus._fill(v, tmp) for k, v in case.env.items()})
            os.chdir(tmp)
            try:
                code, seconds = _run([corpus._fill(arg, tmp) for arg in case.args])
            finally:
                os.chdir(home)
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
            if code == 2:
                times[case.id] = seconds
    for name in sorted(hostile.CASES):
        code, seconds = _run(["check", str(hostile.HOSTILE / name)])
        if code == 2:
            times[f"hostile/{name}"] = seconds
    return times


def _big_list() -> tuple[float, float]:
    """Seconds and peak MB to refuse the 4 MiB list in a fresh process (imports excluded)."""
    code = (
        "import resource, sys, time\n"
        "from ibcalc.yamlio import load_yaml\n"
        "from ibcalc.errors import InputFileError\n"
        "start = time.perf_counter()\n"
        "try:\n"
        "    load_yaml(sys.argv[1])\n"
        "except InputFileError:\n"
        "    pass\n"
        "print(time.perf_counter() - start)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    with tempfile.TemporaryDirectory() as name:
        corpus._big_flow(Path(name))
        done = subprocess.run(
            [sys.executable, "-c", code, str(Path(name) / "big-flow.yaml")],
            capture_output=True,
            text=True,
            check=True,
        )
    seconds, peak_kib = done.stdout.split()
    return float(seconds), int(peak_kib) / 1024


#: Rank lines in the long device list: a log of 100,000 ranks (a scan per line of the ranks
#: read so far had made such a list take 108 s).
DEVICE_RANKS = 100_000


def _long_device_list() -> float:
    """Seconds to read a log whose device list has :data:`DEVICE_RANKS` ranks, in process."""
    from ibcalc.logs.parse import parse_log

    sweep = ROOT / "benchmarks" / "data" / "sweeps" / "21_sendrecv_1node_8xH100_intranode.txt"
    lines = sweep.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("#  Rank"))
    ranks = [
        f"#  Rank {r:6d} Group  0 Pid {100000 + r} on node{r // 8:05d} device  {r % 8} "
        "[0000:1b:00] NVIDIA H100 80GB HBM3"
        for r in range(DEVICE_RANKS)
    ]
    rest = [line for line in lines[first:] if not line.startswith("#  Rank")]
    text = "\n".join([*lines[:first], *ranks, *rest]) + "\n"
    start = time.perf_counter()
    (run,) = parse_log(text, source="ranks").runs
    seconds = time.perf_counter() - start
    assert run.hosts, "the device list was read"
    return seconds


def main() -> int:
    """Print the figures."""
    # a first pass loads every module the refusals need (lazily imported commands, the design
    # schema, the log reader): start-up is not part of a refusal; the second pass is timed
    _corpus_times()
    times = _corpus_times()
    slowest = sorted(times, key=times.__getitem__, reverse=True)
    print(
        f"hostile corpus: {len(corpus.CASES)} command-line cases + {len(hostile.CASES)} hostile "
        f"files; {len(times)} refusals timed in-process (start-up excluded)"
    )
    for name in slowest[:5]:
        print(f"  {times[name] * 1e3:8.1f} ms  {name}")
    worst = times[slowest[0]]
    verdict = "holds" if worst <= TARGET_S else "misses"
    print(f"slowest refusal {worst:.3f} s (target <= {TARGET_S:g} s: {verdict})")
    seconds, peak_mb = _big_list()
    verdict = "holds" if seconds <= TARGET_S and peak_mb <= TARGET_PEAK_MB else "misses"
    print(
        f"4 MiB list of 2.1 million items: refused in {seconds:.3f} s, peak {peak_mb:.0f} MB "
        f"for the whole process (target <= {TARGET_S:g} s and {TARGET_PEAK_MB:g} MB: {verdict})"
    )
    seconds = _long_device_list()
    verdict = "holds" if seconds <= TARGET_S else "misses"
    print(
        f"a log listing {DEVICE_RANKS:,} ranks: read in {seconds:.3f} s "
        f"(target <= {TARGET_S:g} s: {verdict})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
