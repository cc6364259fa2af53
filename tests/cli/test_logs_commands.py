"""The ``nccl-check`` and ``calibrate`` commands through the ``ibcalc`` app.

Exit codes (0 ok, 1 gate failed, 2 unreadable input or refused output), stdin, the three output
formats, the plot, and the override file.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.cli import app
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Algorithm, Protocol
from ibcalc.logs.calibrate import calibrate
from ibcalc.logs.cluster import gpus_per_process_words
from ibcalc.logs.parse import parse_file, parse_log
from ibcalc.logs.results import FASTER_WARN, PUBLISHED_SPEEDUP

FIXTURES = Path(__file__).resolve().parents[1] / "logs" / "fixtures"
SWEEPS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
DEGRADED = FIXTURES / "11_allreduce_2node_8xGH200_slingshot_nccltests2.17.1_indented_degraded.txt"
HEALTHY = FIXTURES / "12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt"
WRONG = FIXTURES / "08_allreduce_int8_4node_16xGH200_slingshot_WRONG_truncated.txt"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_healthy_run_passes_the_gate() -> None:
    code, out, err = run("nccl-check", str(HEALTHY), "--min-efficiency", "0.85")
    assert code == 0, err
    assert "verdict: ok" in out
    # its one low row (a small size) is pointed to, not called a match
    assert "the rows of 64 MiB or more, which set the run's verdict, match the model" in out


def test_degraded_run_fails_the_gate() -> None:
    code, out, err = run("nccl-check", str(DEGRADED), "--min-efficiency", "0.85")
    assert code == 1
    assert "verdict: bad" in out
    assert "not on the RDMA NICs" in out
    # 64 MiB and 128 MiB are the sizes of the bandwidth regime in this log
    assert "FAIL" in err
    assert "fails at 64 MiB (" in err
    assert ", 128 MiB (" in err


def test_the_gate_judges_every_large_row_a_late_ramp_s_too(tmp_path: Path) -> None:
    """A gate that spared the rows a run's finding calls a late ramp passed runs slowed 100x at
    32-512 MiB (0.3-1.1 % of the expected busbw) and runs whose busbw falls (a review's
    finding), so every row of 64 MiB or more is judged. Sweep 21 (8 x H100 send/recv) with
    32-512 MiB 100x slower fails at 64 MiB; the healthy published run, flat at 820 us from 64
    to 256 MiB, fails a gate of 0.8 too (its 64 MiB row is at 26 %): such a gate needs -b 256M."""
    lines = (SWEEPS / "21_sendrecv_1node_8xH100_intranode.txt").read_text().splitlines()
    slowed = []
    for line in lines:
        fields = line.split()
        if len(fields) > 8 and fields[0].isdigit() and 32 * 2**20 <= int(fields[0]) <= 2**29:
            line = line.replace(fields[5], f"{float(fields[5]) * 100:.2f}", 1)
        slowed.append(line)
    path = tmp_path / "slow.txt"
    path.write_text("\n".join(slowed) + "\n", encoding="utf-8")
    code, _, err = run("nccl-check", str(path), "--min-efficiency", "0.8")
    assert code == 1
    assert "fails at 64 MiB (" in err
    assert "spares" not in err
    code, _, err = run(
        "nccl-check",
        str(SWEEPS / "21_sendrecv_1node_8xH100_intranode.txt"),
        "--min-efficiency",
        "0.8",
    )
    assert code == 1
    assert "fails at 64 MiB (" in err


def test_a_header_ngpus_that_is_no_gpu_count_is_ignored_and_one_that_does_not_fit_is_named(
    tmp_path: Path,
) -> None:
    """Sweep 13 (1 x 4 H100, one process driving 4: nGpus 4). Its header edited to nGpus 0 had
    priced every launch as free and read 11 healthy rows 59 % low; to a 20-digit count it was
    cut to 999999999. Such a count is ignored with a note, and the device list (one Pid per 4
    ranks) gives 4 again. nGpus 3, which does not divide the node's 4 GPUs, is refused in the
    log's words: it had been called '--gpus-per-process 3', a flag nobody gave."""
    text = (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text(encoding="utf-8")
    assert "nGpus 4 " in text
    for bad in ("0", "99999999999999999999"):
        path = tmp_path / f"ngpus{bad[:2]}.txt"
        path.write_text(text.replace("nGpus 4 ", f"nGpus {bad} "), encoding="utf-8")
        code, out, err = run("nccl-check", str(path))
        assert code == 0, err
        said = " ".join(out.split())
        assert f"nGpus {bad[:12]}" in said
        assert "is no count of GPUs a process drives" in said
        assert "gpus_per_process = 4 [log]" in out
        assert "verdict: ok" in out
    path = tmp_path / "ngpus3.txt"
    path.write_text(text.replace("nGpus 4 ", "nGpus 3 "), encoding="utf-8")
    code, _, err = run("nccl-check", str(path))
    assert code == 2
    assert "the log's nGpus 3 does not divide the 4 GPUs of a node" in err
    assert "--gpus-per-process" not in err
    # above the node's 4 GPUs it is refused too (it had been listed as the log's and priced
    # as one GPU per process), and leading zeros are a number's own
    path.write_text(text.replace("nGpus 4 ", "nGpus 8 "), encoding="utf-8")
    code, _, err = run("nccl-check", str(path))
    assert code == 2
    assert "the log's nGpus 8 is more than the 4 GPUs of a node" in err
    # and with the node's 4 GPUs given by the caller (it had been priced as 1 per process
    # while listed as the log's 8)
    code, _, err = run("nccl-check", str(path), "--gpus-per-node", "4")
    assert code == 2
    assert "--gpus-per-node '4' is fewer than the log's nGpus 8" in err
    # without the header's count the device list's (one Pid for 4 ranks) is named as such
    headless = "\n".join(x for x in text.splitlines() if "nGpus" not in x) + "\n"
    (listed,) = parse_log(headless, source="x").runs
    assert listed.gpus_per_process == 4
    assert gpus_per_process_words(listed) == "the log's ranks per process"
    (stated,) = parse_log(text, source="x").runs
    assert gpus_per_process_words(stated) == "the log's nGpus"
    path.write_text(text.replace("nGpus 4 ", "nGpus 0000000000004 "), encoding="utf-8")
    code, out, _ = run("nccl-check", str(path))
    assert code == 0
    assert "gpus_per_process = 4 [log]: printed in the header's nGpus" in " ".join(out.split())


def test_a_run_without_a_large_row_does_not_say_it_matches_the_model(tmp_path: Path) -> None:
    """Sweep 20 (8 x H100 all-to-all) cut to its first row, 32 MiB: the verdict, set by rows
    of 64 MiB or more, is unknown, and the report had then said 'no problem found: the run
    matches the model'. It says there is no large row to judge the run by."""
    lines = (SWEEPS / "20_alltoall_1node_8xH100_intranode.txt").read_text().splitlines()
    kept = [line for line in lines if not line.strip().split(" ")[0].isdigit()]
    first = next(line for line in lines if line.strip().startswith("33554432 "))
    at = next(i for i, line in enumerate(kept) if line.startswith("#        (B)"))
    path = tmp_path / "one.txt"
    path.write_text("\n".join([*kept[: at + 1], first, *kept[at + 1 :]]) + "\n", encoding="utf-8")
    code, out, err = run("nccl-check", str(path))
    assert code == 0, err
    assert "verdict: unknown" in out
    assert "no problem found" not in out
    said = " ".join(out.split())
    assert "no row marked low or bad; no verdict without a large row" in said
    assert "no row of 64 MiB or more: bandwidth not judged" in said


def test_without_a_gate_a_bad_run_exits_0() -> None:
    code, out, _ = run("nccl-check", str(DEGRADED))
    assert code == 0
    assert "likely causes, most likely first" in out


def test_wrong_results_fail_the_gate_at_any_threshold() -> None:
    code, out, err = run("nccl-check", str(WRONG), "--min-efficiency", "0")
    assert code == 1
    assert "data corruption" in out
    # named by the count nccl-tests found wrong, not a rate the gate did not fail on (review
    # DH: "4.0% of the expected busbw, but #wrong = 18134" at a gate of 0 or 0.03)
    assert "--min-efficiency 0 fails at 2 MiB (#wrong = 18134), 4 MiB (#wrong = 124342)" in err
    assert "of the expected busbw" not in err
    # and the help says the gate fails on them at any size
    help_text = " ".join(run("nccl-check", "--help")[1].split())
    assert "or when any row's #wrong (or the trailer's out-of-bounds count) is non-zero" in (
        help_text
    )


def test_unreadable_file_exits_2_and_the_others_are_still_checked(tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    code, out, err = run("nccl-check", str(missing), str(HEALTHY))
    assert code == 2
    assert err.startswith("error: ")
    assert "missing.log" in err
    assert "verdict: ok" in out


def test_each_of_many_one_row_runs_is_judged_and_a_log_of_too_many_refused(
    tmp_path: Path,
) -> None:
    """A log of 3,000 runs of one row each, under the 10,000-row cap, had taken nccl-check 46 s
    (a review). Every run of a log up to MAX_LOG_RUNS is judged; a log of more is refused in
    one line, as a file that cannot be read: exit 2, the other files still checked, the JSON
    report's errors naming it; calibrate refuses it the same way."""
    from ibcalc.logs.parse import MAX_LOG_RUNS

    text = (SWEEPS / "15_allreduce_1node_8xA100-40GB_intranode.txt").read_text("utf-8")
    lines_of = text.split("\n")
    rows = [i for i, line in enumerate(lines_of) if line.strip()[:1].isdigit()]
    foot = [line for line in lines_of[rows[-1] + 1 :] if line.strip()]
    block = [*lines_of[: rows[0]], lines_of[rows[-1]], *foot]  # header, 32 MiB row, trailer
    at_cap, over = tmp_path / "runs.txt", tmp_path / "more.txt"
    at_cap.write_text("\n".join(block * MAX_LOG_RUNS) + "\n", encoding="utf-8")
    over.write_text("\n".join(block * (MAX_LOG_RUNS + 1)) + "\n", encoding="utf-8")
    code, out, err = run("nccl-check", str(at_cap), "--format", "json")
    assert code == 0, err
    runs = json.loads(out)["runs"]
    assert [r["run_index"] for r in runs] == list(range(MAX_LOG_RUNS))
    # each run its one row (33554432 B in 370.7 us out of place), judged alike
    assert {len(r["rows"]) for r in runs} == {1}
    assert {(r["rows"][0]["size_bytes"], r["rows"][0]["measured_time_us"]) for r in runs} == {
        (33554432, 370.7)
    }
    assert len({(r["rows"][0]["expected_time_us"], r["rows"][0]["verdict"]) for r in runs}) == 1
    assert sum("every row repeats run 1's" in " ".join(r["notes"]) for r in runs) == (
        MAX_LOG_RUNS - 1
    )
    message = (
        f"{over}: more than {MAX_LOG_RUNS:,} runs (run {MAX_LOG_RUNS + 1:,} starts at line "
        f"{MAX_LOG_RUNS * len(block) + 1}); nccl-tests prints one run (one result table) per "
        "test it runs: split the log"
    )
    code, out, err = run("nccl-check", str(over), str(HEALTHY), "--format", "json")
    assert code == 2
    data = json.loads(out)
    assert data["errors"] == [{"source": str(over), "message": message}]
    assert [r["source"] for r in data["runs"]] == [str(HEALTHY)]
    assert f"error: {message}\n" in err
    code, out, err = run("calibrate", str(over))
    assert (code, out, err) == (2, "", f"error: {message}\n")


def test_not_a_log_exits_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n", encoding="utf-8")
    code, _, err = run("nccl-check", str(junk))
    assert code == 2
    assert "no nccl-tests result rows" in err


def test_stdin() -> None:
    code, out, _ = run("nccl-check", "-", stdin=HEALTHY.read_text(encoding="utf-8"))
    assert code == 0
    assert "<stdin>" in out


def test_json_output() -> None:
    code, out, _ = run("nccl-check", str(DEGRADED), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == "ibcalc-nccl-check/3"
    (check,) = data["runs"]
    assert check["flagged"] is True
    assert check["verdict"] == "bad"
    assert [r["size_bytes"] for r in check["rows"]][-1] == 134217728
    # algorithm and protocol are separate keys, as in the estimate's and the sweep's JSON (the
    # rows had carried 'tree/LL128' under "algorithm" alone)
    algorithms = {a.value for a in Algorithm}
    protocols = {p.value for p in Protocol}
    for row in check["rows"]:
        assert row["algorithm"] in algorithms, row
        assert row["protocol"] in protocols, row
    # field marks are filled with this command's flags
    assert "--inter" in json.dumps(check)
    assert "{inter}" not in json.dumps(check)


def test_github_output_points_at_log_lines() -> None:
    code, out, _ = run("nccl-check", str(DEGRADED), "--format", "github")
    assert code == 0
    lines = out.splitlines()
    # the 128 MiB row is line 42 of the fixture
    assert any(line.startswith("::warning ") and ",line=42," in line for line in lines)
    assert any(line.startswith("::error ") for line in lines)
    assert lines[-1].startswith("nccl-check ")
    # 128 MiB: 5.4 GB/s busbw against 113 expected (4.8 %), printed rounded down
    assert lines[-1].endswith("bad, lowest efficiency at 64 MiB and more 4%")


def test_github_output_of_no_readable_log_is_its_error_alone() -> None:
    """Only an unreadable file: the error on stderr, exit 2, and on stdout its annotation alone,
    no blank line (review DH L4: stdout had been empty, so a pull request showed nothing)."""
    code, out, err = run("nccl-check", "/nonexistent/x.txt", "--format", "github")
    assert (code, out) == (
        2,
        "::error file=/nonexistent/x.txt,title=nccl-check%3A cannot check::/nonexistent/x.txt: "
        "no such file\n",
    )
    assert err == "error: /nonexistent/x.txt: no such file\n"


def test_a_gate_does_not_pass_a_run_it_could_not_check() -> None:
    """The p4d scatter log's collective cannot be told: the gate had exited 0 beside
    'verdict: not_checked'. It judges nothing there, so it is refused as a log without large
    rows is; in a session with other runs, the unchecked run is named and the rest judged."""
    code, _, err = run(
        "nccl-check",
        str(FIXTURES / "01_scatter_2node_16xA100-40GB_p4d_efa_slurm_full_debug_log.txt"),
        "--min-efficiency",
        "0.9",
    )
    assert code == 2
    assert (
        "run 1 is not judged by --min-efficiency: the table fits scatter or gather, which "
        "ibcalc does not model" in err
    )
    assert err.endswith("error: --min-efficiency would judge nothing: no run could be checked\n")
    # its title says what is unknown ("unknown collective fp32 on not resolved" had read oddly)
    code, out, _ = run(
        "nccl-check",
        str(FIXTURES / "01_scatter_2node_16xA100-40GB_p4d_efa_slurm_full_debug_log.txt"),
        "--format",
        "table",
    )
    assert code == 0
    assert "a collective the log does not name fp32 (no cluster resolved)" in " ".join(out.split())
    session = FIXTURES / "09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt"
    code, _, err = run("nccl-check", str(session), "--min-efficiency", "0.1")
    assert code == 0
    assert "run 5 is not judged by --min-efficiency: a run on one GPU moves no data" in err


def test_a_gate_failure_names_each_size_with_its_efficiency() -> None:
    """2 x A100 PCIe (sweep 25) reaches 76-79 % of the expected busbw at 64 MiB and more: inside
    the model's error band, which no longer lifts a large row to ok, so the report reads low and
    a 0.85 gate fails. The FAIL line cuts its list after five sizes with a count of the rest
    (8 sizes), as every cut list does (it had cut after six, with " and 2 more")."""
    code, out, err = run(
        "nccl-check",
        str(SWEEPS / "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt"),
        "--min-efficiency",
        "0.85",
    )
    assert code == 1
    assert "verdict: low" in out
    # sizes as the table prints them, efficiencies to one decimal (a 0.8 gate had "failed at
    # 80%" for a row at 79.6 %)
    assert re.search(r"fails at 64 MiB \(7[6-9]\.\d% of the expected busbw\), ", err)
    assert err.rstrip().endswith("% of the expected busbw) and 3 more sizes")
    assert err.count("% of the expected busbw)") == 5


def test_a_gate_failure_is_annotated_in_github_format() -> None:
    """--format github with a failing --min-efficiency: an ::error for the run naming the
    sizes, and the summary line says it fails (stdout had read the verdict alone, the FAIL on
    stderr: review EC 3); a passing gate adds neither."""
    log = str(SWEEPS / "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt")
    code, out, _ = run("nccl-check", log, "--format", "github", "--min-efficiency", "0.85")
    assert code == 1
    (error,) = [x for x in out.splitlines() if "title=nccl-check%3A --min-efficiency" in x]
    assert error.startswith(f"::error file={log},line=1,")
    assert "::run 1: --min-efficiency 0.85 fails at 64 MiB (7" in error
    # its 8 failing sizes cut as the FAIL line cuts them: five, then a count (all 8 had been
    # named, one after another)
    assert error.endswith(" of the expected busbw) and 3 more sizes")
    assert error.count(" of the expected busbw)") == 5
    assert out.splitlines()[-1].endswith("; fails --min-efficiency")
    code, out, _ = run("nccl-check", log, "--format", "github", "--min-efficiency", "0.5")
    assert code == 0
    assert "--min-efficiency" not in out


def test_a_gate_failure_s_efficiency_is_rounded_down_as_the_verdict_s() -> None:
    """A row at 91.98 % fails a 0.92 gate: it reads 91.9 %, not '92.0%' (rounded to nearest,
    beside a verdict line of 91 %: review EC 4); 79.6 % stays 79.6 %."""
    from types import SimpleNamespace

    from ibcalc.cli.logs import _why_failed

    def why(efficiency: float) -> str:
        row = SimpleNamespace(wrong=0, implausible=False, efficiency=efficiency)
        return _why_failed(row)  # type: ignore[arg-type]

    assert why(0.9198) == "91.9% of the expected busbw"
    assert why(0.796) == "79.6% of the expected busbw"
    assert why(0.92) == "92.0% of the expected busbw"


def test_json_carries_the_files_it_could_not_read_and_the_gate_s_result(tmp_path: Path) -> None:
    """A missing file under --format json had printed a valid report with no runs (exit 2, the
    error on stderr alone), and the gate's result was on stderr alone too: a tool reading the
    JSON saw a pass. The report lists each file's error as stderr words it, and the gate: the
    degraded run fails 0.85 at 64 and 128 MiB, the sizes the FAIL line names."""
    missing = tmp_path / "missing.txt"
    code, out, err = run("nccl-check", str(missing), "--format", "json")
    assert code == 2
    data = json.loads(out)
    assert data["runs"] == []
    assert data["errors"] == [{"source": str(missing), "message": f"{missing}: no such file"}]
    assert data["gate"] is None
    assert err == f"error: {missing}: no such file\n"
    code, out, err = run(
        "nccl-check", str(DEGRADED), "--min-efficiency", "0.85", "--format", "json"
    )
    assert code == 1
    data = json.loads(out)
    assert data["errors"] == []
    gate = data["gate"]
    assert (gate["min_efficiency"], gate["passed"], gate["not_judged_runs"]) == (0.85, False, [])
    (failed,) = gate["failed_runs"]
    assert (failed["source"], failed["run_index"]) == (str(DEGRADED), 0)
    assert [r.split(" (")[0] for r in failed["reasons"]] == ["64 MiB", "128 MiB"]
    assert all(r in err for r in failed["reasons"])
    code, out, _ = run("nccl-check", str(HEALTHY), "--min-efficiency", "0.85", "--format", "json")
    assert code == 0
    assert json.loads(out)["gate"]["passed"] is True
    # a gate with a file it could not read does not pass (exit 2), and says so (it had been null,
    # as without a gate)
    args = ("nccl-check", str(HEALTHY), str(missing), "--min-efficiency", "0.85")
    code, out, _ = run(*args, "--format", "json")
    assert code == 2
    data = json.loads(out)
    assert (data["gate"]["passed"], data["gate"]["failed_runs"]) == (False, [])
    assert [e["source"] for e in data["errors"]] == [str(missing)]


def test_a_run_faster_than_the_cluster_given_reads_above_and_is_flagged() -> None:
    """2 x 4 H100 (sweep 10, 4 x NDR200 per node) judged on one HDR NIC per node: one HDR port
    moves 25 GB/s per direction, and the run's busbw of 102-156 GB/s at 64 MiB and more is 3.1x
    to 4.0x what the model expects of it. Every large row is 'above'; the run had read 'ok' and
    'no problem found'. Beyond every published speed-up (1.21x) the finding is a warning."""
    argv = ["nccl-check", str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt")]
    argv += ["--inter", "hdr", "--nics-per-node", "1"]
    code, out, _ = run(*argv, "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    large = [r for r in check["rows"] if r["regime"] == "bandwidth"]
    assert {r["verdict"] for r in large} == {"above"}
    assert min(r["efficiency"] for r in large) > FASTER_WARN
    assert check["verdict"] == "above"
    assert check["flagged"] is True
    faster = next(f for f in check["findings"] if f["kind"] == "faster_than_expected")
    assert faster["severity"] == "warning"
    assert f"more than {PUBLISHED_SPEEDUP:g}x faster" in faster["cause"]
    # the table says so, and not that the run matches the model
    _, table, _ = run(*argv)
    assert "verdict: above (lowest efficiency at 64 MiB and more: 3" in table
    assert "matches the model" not in table


def test_a_run_that_ended_early_is_flagged(tmp_path: Path) -> None:
    """2 x p5 (sweep 06) asked for 8 B-16 GiB (maxBytes 17179869184); cut after its 512 MiB row
    (line 2931), it read 'no problem found' and printed no annotation in github format. The whole
    log, and sweep 24 (no trailer, but its last row is its maxBytes), are not flagged for it."""
    whole = SWEEPS / "06_allreduce_2node_16xH100_efa.txt"
    cut = tmp_path / "cut.txt"
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    cut.write_text("".join(lines[:2931]), encoding="utf-8")
    code, out, _ = run("nccl-check", str(cut), "--format", "github")
    assert code == 0
    assert out.startswith(f"::warning file={cut},line=2931,title=nccl-check%3A ended early::")
    assert "its largest size is 512 MiB of the 16 GiB the header asked for" in out
    for complete in (whole, SWEEPS / "24_allreduce_1node_8xRTX5090_pcie.txt"):
        _, out, _ = run("nccl-check", str(complete), "--format", "json")
        kinds = {f["kind"] for r in json.loads(out)["runs"] for f in r["findings"]}
        assert "ended_early" not in kinds


def test_nccl_version_sets_the_tuner_of_a_log_that_states_none() -> None:
    """log06 (2 x 8 H100) prints no NCCL version, so NCCL's choice had always followed the
    built-in 2.30.7 constants: tree/LL128 at 2 MiB. Under 2.18.3's constants NCCL picks
    NVLS-tree there; --nccl-version gives the release, named as a [flag] assumption, and the
    row's expectation is the estimate's under that release. A release that is no release is one
    error line, exit 2."""
    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.catalogue.releases import for_release
    from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
    from ibcalc.facade import estimate_on

    log = SWEEPS / "log06_allreduce_2node_16xH100_gcp_a3mega.txt"
    at_2_mib = {}
    for release in (None, "2.18.3"):
        given = ["--nccl-version", release] if release else []
        _, out, _ = run("nccl-check", str(log), "--format", "json", *given)
        (check,) = json.loads(out)["runs"]
        at_2_mib[release] = next(r for r in check["rows"] if r["size_bytes"] == 2 * 2**20)
        tuners = [a for a in check["assumptions"] if a["field"] == "tuner_constants"]
        # a log that states no release says whose constants price it (it had said nothing)
        assert [(a["value"], a["source"]) for a in tuners] == (
            [("2.18.3", "flag")] if release else [("2.30.7", "default")]
        )
        if release is None:
            assert tuners[0]["evidence"] == (
                "the log states no NCCL release: NCCL 2.30.7's tuner constants choose the "
                "algorithm and protocol; --nccl-version gives the run's release"
            )
    assert at_2_mib[None]["algorithm"] == "tree"
    assert at_2_mib["2.18.3"]["algorithm"] == "nvlstree"
    spec = ClusterSpec(system=check["system"], nodes=check["nodes"])
    expected = estimate_on(
        resolve_cluster(load_catalogue(), spec),
        "all_reduce",
        2 * 2**20,
        params=for_release(builtin_cost_params(), "2.18.3"),
    )
    assert at_2_mib["2.18.3"]["expected_time_us"] == pytest.approx(expected.time_s * 1e6)
    code, out, err = run("nccl-check", str(log), "--nccl-version", "9.x")
    assert (code, out) == (2, "")
    assert err == (
        "error: --nccl-version '9.x' is not a release number such as 2.21.5 or 2.21 "
        "(see 'ibcalc nccl-check --help')\n"
    )


def test_flags_override_the_log_and_bad_flags_exit_2() -> None:
    code, out, _ = run(
        "nccl-check",
        str(DEGRADED),
        "--system",
        "alps-gh200",
        "--inter",
        "slingshot-11",
        "--nics-per-node",
        "4",
    )
    assert code == 0
    assert "[log]" in out
    code, _, err = run("nccl-check", str(DEGRADED), "--system", "no-such-system")
    assert code == 2
    assert "--system 'no-such-system' is not a known system" in err
    code, _, err = run("nccl-check", str(HEALTHY), "--nodes", "4")
    assert code == 2
    assert "--nodes" in err
    assert "the log ran 2 ranks" in err


#: Snellius 1 x 4 H100 all-reduce: its header says nGpus 4 (one process drives the 4 GPUs).
NGPUS_4 = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"


def _gpus_per_process(out: str) -> list[dict[str, object]]:
    run_ = json.loads(out)["runs"][0]
    return [a for a in run_["assumptions"] if a["field"] == "gpus_per_process"]


@pytest.mark.parametrize("given", ["1", "2"])
def test_gpus_per_process_flag_overrides_the_log_and_says_so_once(given: str) -> None:
    code, out, err = run("nccl-check", str(NGPUS_4), "--gpus-per-process", given)
    assert code == 0, err
    # the flag's value is the one listed; the header's 4 is named once, beside it
    assert out.count("nGpus") == 1
    assert (
        f"  - gpus_per_process = {given} [flag]: given by the caller (the log's header says "
        "nGpus 4)\n" in out
    )
    assert "gpus_per_process = 4" not in out
    assert "-g 4" not in out
    code, out, err = run(
        "nccl-check", str(NGPUS_4), "--gpus-per-process", given, "--format", "json"
    )
    assert code == 0, err
    assert _gpus_per_process(out) == [
        {
            "field": "gpus_per_process",
            "value": int(given),
            "source": "flag",
            "evidence": "given by the caller (the log's header says nGpus 4)",
        }
    ]
    assert out.count("nGpus 4") == 1
    # the slow small sizes are not put down to the -g 4 the flag replaced
    (latency,) = [f for f in json.loads(out)["runs"][0]["findings"] if f["kind"] == "latency"]
    assert latency["cause"].endswith(
        "latency, not bandwidth: likely a launcher, container or driver overhead per call"
    )


def test_gpus_per_process_from_the_log_and_from_an_agreeing_flag() -> None:
    """Sweep 13's header says nGpus 4: the expectation has the 4 serial launches without the
    flag, as the option's help says (it had assumed one GPU per process and named -g 4 as a
    likely cause of slow small sizes), the same as with --gpus-per-process 4; -g 1 given
    replaces the header's count."""
    code, out, _ = run("nccl-check", str(NGPUS_4), "--format", "json")
    assert code == 0
    assert [(a["value"], a["source"]) for a in _gpus_per_process(out)] == [(4, "log")]
    plain = json.loads(out)["runs"][0]
    assert not [f for f in plain["findings"] if f["kind"] == "latency"]
    code, out, _ = run("nccl-check", str(NGPUS_4), "--gpus-per-process", "4", "--format", "json")
    assert code == 0
    assert [(a["value"], a["source"]) for a in _gpus_per_process(out)] == [(4, "log"), (4, "flag")]
    given = json.loads(out)["runs"][0]
    # the 4 serial launches are in the expectation: 4 B measured 17.05 us (line 191). By hand:
    # one ring/LL operation on 4 GPUs is NCCL's LL base 6.6 us + 6 NVLink LL hops of 0.6 us
    # (data/cost_params.yaml) + 6 B at 1 of 24 channels of the 141 GB/s Hopper LL cap
    # (nccl_tuner.ll_max_busbw): 10.201 us; the host launches 4 x 4.2 us = 16.8 us a call
    # (calibrated.launch_per_gpu), and nccl-tests' 20 back-to-back calls take (launch + T +
    # 19 x launch) / 20 (docs/model.md, engine/measure.py) = 17.310 us
    assert plain["rows"][0]["measured_time_us"] == 17.05
    one = 6.6 + 6 * 0.6 + 6 / (141e9 / 24) * 1e6
    launch = 4 * 4.2
    by_hand = (launch + one + 19 * launch) / 20
    assert by_hand == pytest.approx(17.31005, rel=1e-6)
    assert given["rows"][0]["expected_time_us"] == pytest.approx(by_hand, rel=1e-9)
    assert plain["rows"][0]["expected_time_us"] == pytest.approx(
        given["rows"][0]["expected_time_us"]
    )
    assert not [f for f in given["findings"] if f["kind"] == "latency"]
    # `-g 1` is given too, though it is the option's default: it is not the log's 4
    code, out, _ = run("nccl-check", str(NGPUS_4), "--gpus-per-process", "1", "--format", "json")
    assert json.loads(out)["runs"][0]["rows"][0]["expected_time_us"] < 12


def test_collective_flag() -> None:
    code, _, err = run("nccl-check", str(HEALTHY), "--collective", "bogus")
    assert code == 2
    assert err == (
        "error: --collective 'bogus' is not a known collective (known: allreduce, "
        "reducescatter, allgather, broadcast, reduce, alltoall, sendrecv; "
        "see 'ibcalc nccl-check --help')\n"
    )


def test_collective_flag_names_the_log_s_collective_once() -> None:
    code, out, err = run("nccl-check", str(NGPUS_4), "--collective", "alltoall")
    # the report is printed, and the flag the log contradicts is an option that is wrong (exit
    # 2, as calibrate refuses it; it had exited 0 beside its own high-confidence error)
    assert code == 2
    assert err.endswith(
        "run 1: the rows are all_reduce's, not alltoall's; re-run without --collective\n"
    )
    # once in the heading, then once in the finding that the rows contradict the flag
    head, _, findings = out.partition("likely causes")
    assert head.count("all_reduce") == 1
    assert "the rows are all_reduce's, not alltoall's" in " ".join(findings.split())
    # the heading wraps where the log's path is long: compare the words
    assert "alltoall (given; the log says all_reduce)" in " ".join(out.split())
    code, out, _ = run("nccl-check", str(NGPUS_4), "--collective", "alltoall", "--format", "json")
    assumptions = json.loads(out)["runs"][0]["assumptions"]
    assert [a for a in assumptions if a["field"] == "collective"] == [
        {
            "field": "collective",
            "value": "alltoall",
            "source": "flag",
            "evidence": "given by the caller (the log says all_reduce)",
        }
    ]
    # the JSON report says why too, and a gate does not pass (it had read "errors": [] and
    # "passed": true beside exit 2; a review)
    code, js, _ = run(
        "nccl-check",
        str(NGPUS_4),
        "--collective",
        "alltoall",
        "--format",
        "json",
        "--min-efficiency",
        "0.1",
    )
    assert code == 2
    data = json.loads(js)
    assert [e["message"] for e in data["errors"]] == [
        "run 1: the rows are all_reduce's, not alltoall's; re-run without --collective"
    ]
    assert data["gate"]["passed"] is False
    # beside a file that cannot be read, its error line is said too (it had been dropped)
    code, _, err = run("nccl-check", str(NGPUS_4), "/nonexistent.log", "--collective", "alltoall")
    assert code == 2
    assert "the rows are all_reduce's, not alltoall's" in err
    assert "/nonexistent.log" in err


def test_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "check.png"
    code, _, err = run("nccl-check", str(DEGRADED), "--plot", str(target))
    assert code == 0
    assert target.stat().st_size > 1000
    assert f"wrote {target}" in err
    code, _, err = run("nccl-check", str(DEGRADED), "--plot", str(tmp_path / "check.gif"))
    assert code == 2
    assert ".png or .svg" in err


def test_plot_never_writes_over_a_log_it_reads(tmp_path: Path) -> None:
    """--plot run.png on a log named run.png turned the log into a picture; with several runs
    the -2, -3 ... files were written unchecked (one of them an input log, or a directory
    found only after the first picture was written). Every target is checked first."""
    pytest.importorskip("matplotlib")
    log = (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_bytes()
    named_png = tmp_path / "run.png"
    named_png.write_bytes(log)
    code, out, err = run("nccl-check", str(named_png), "--plot", str(named_png))
    assert (code, out) == (2, "")
    assert "it is also an input of this run" in err
    assert named_png.read_bytes() == log
    # two different logs (a copy of the first would be read once, with one picture)
    another = (SWEEPS / "14_reducescatter_1node_4xH100_intranode.txt").read_bytes()
    first, second = tmp_path / "a.txt", tmp_path / "plot-2.png"
    first.write_bytes(log)
    second.write_bytes(another)
    code, out, err = run(
        "nccl-check", str(first), str(second), "--plot", str(tmp_path / "plot.png")
    )
    assert (code, out) == (2, "")
    assert second.read_bytes() == another
    assert not (tmp_path / "plot.png").exists()
    (tmp_path / "x-2.png").mkdir()
    other = tmp_path / "b.txt"  # a second run (the same file twice is read once)
    other.write_bytes(another)
    code, out, err = run("nccl-check", str(first), str(other), "--plot", str(tmp_path / "x.png"))
    assert (code, out) == (2, "")
    assert "is a directory" in err
    assert not (tmp_path / "x.png").exists()


def test_calibrate_writes_an_override_once(tmp_path: Path) -> None:
    log = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    out_file = tmp_path / "site.yaml"
    code, out, err = run("calibrate", str(log), "-o", str(out_file))
    assert code == 0, err
    assert "nvlink4-mesh4.efficiency" in out
    assert "single-node log says nothing about the network" in out
    # the file carries the efficiency the library's calibrate() fits to the same log
    (run_13,) = parse_file(log).runs
    fitted = {p.name: p.value for p in calibrate([run_13]).parameters}
    catalogue = load_catalogue([out_file], use_env=False)
    written = find_link(catalogue, "nvlink4-mesh4").efficiency
    assert written == pytest.approx(fitted["nvlink4-mesh4.efficiency"], rel=1e-5)
    assert written != pytest.approx(0.824, rel=1e-3)  # the built-in value it replaces
    code, _, err = run("calibrate", str(log), "-o", str(out_file))
    assert code == 2
    assert "exists; use --force" in err
    code, _, err = run("calibrate", str(log), "-o", str(out_file), "--force")
    assert code == 0, err


def test_the_files_written_are_named_with_control_characters_escaped(tmp_path: Path) -> None:
    """calibrate -o and nccl-check --plot name what they wrote as sweep --plot does: a file
    name holding ESC [2J (clear screen) had reached a terminal raw (review EC 2)."""
    log = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    code, _, err = run("calibrate", str(log), "-o", str(tmp_path / "out\x1b[2J.yaml"))
    assert code == 0, err
    assert f"wrote {tmp_path}/out\\x1b[2J.yaml" in err.splitlines()
    assert "\x1b" not in err
    pytest.importorskip("matplotlib")
    code, _, err = run("nccl-check", str(log), "--plot", str(tmp_path / "p\x1b[2J.png"))
    assert code == 0, err
    assert f"wrote {tmp_path}/p\\x1b[2J.png" in err.splitlines()
    assert "\x1b" not in err


def test_a_fit_without_constants_does_not_leave_an_earlier_runs_constants_beside_it(
    tmp_path: Path,
) -> None:
    """2 x p4d on EFA fits model constants (site.cost-params.yaml beside site.yaml); 2 x 4 H100
    on NDR200 fits none. Re-run with --force over the first, the pair had mixed two fits (the
    old constants' header says to use them with the new links; a review)."""
    out_file = tmp_path / "site.yaml"
    companion = tmp_path / "site.cost-params.yaml"
    efa = str(SWEEPS / "05_allreduce_2node_16xA100-40GB_efa.txt")
    ib = str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt")
    code, _, err = run("calibrate", efa, "-o", str(out_file))
    assert code == 0, err
    assert companion.is_file()
    # without --force: refused before anything is written (the first fit's pair stays whole)
    out_file.unlink()
    code, out, err = run("calibrate", ib, "-o", str(out_file))
    assert code == 2
    assert out == ""
    assert "site.cost-params.yaml: a cost-parameter override from an earlier run" in err
    assert "use --force to remove it" in err
    assert companion.is_file()
    assert not out_file.exists()
    # constants that cannot be removed: nothing is replaced (the new links had been written
    # first, and the old constants left beside them)
    code, _, err = run("calibrate", efa, "-o", str(out_file), "--force")
    assert code == 0, err
    before = (out_file.read_bytes(), companion.read_bytes())
    real_replace = os.replace

    def refuse(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(src) == companion:
            raise PermissionError(1, "Operation not permitted")
        real_replace(src, dst)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", refuse)
        code, out, err = run("calibrate", ib, "-o", str(out_file), "--force")
    assert code == 2
    assert out == ""
    assert "cannot remove this earlier run's cost-parameter override" in err
    assert (out_file.read_bytes(), companion.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.cost-params.yaml", "site.yaml"]
    # the new file that cannot be moved into place: the old constants come back (they had
    # been removed first, leaving the old file without them)

    import ibcalc.logs.calibrate as calibrate_module
    from ibcalc.errors import OutputError

    def fail(tmp: Path, target: Path, *, force: bool) -> None:
        raise OutputError(f"{target}: cannot write: Operation not permitted")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calibrate_module, "_place", fail)
        code, out, err = run("calibrate", ib, "-o", str(out_file), "--force")
    assert code == 2
    assert (out_file.read_bytes(), companion.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.cost-params.yaml", "site.yaml"]
    code, _, err = run("calibrate", ib, "-o", str(out_file), "--force")
    assert code == 0, err
    assert out_file.is_file()
    assert not companion.exists()
    assert f"removed {companion}: an earlier run's cost-parameter override" in err


def test_calibrate_table_says_a_confirmed_value_is_not_written(tmp_path: Path) -> None:
    # ABCI's 1 x 8 A100 all-reduce and broadcast: the fitted NVLink latency is within 0.05 us
    # of the value in use, so the file comments it as confirmed and writes no link; the table's
    # row must say the same, not look like a fitted value
    logs = [
        str(SWEEPS / f)
        for f in (
            "15_allreduce_1node_8xA100-40GB_intranode.txt",
            "16_broadcast_1node_8xA100-40GB_intranode.txt",
        )
    ]
    out_file = tmp_path / "site.yaml"
    code, out, err = run("calibrate", *logs, "-o", str(out_file))
    assert code == 0, err
    text = out_file.read_text(encoding="utf-8")
    confirmed = re.findall(r"^# confirmed \(not written\): (\S+)", text, flags=re.MULTILINE)
    assert confirmed
    assert "links: []" in text
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for name in confirmed:
        assert "confirmed: not written" in rows[name]


def test_calibrate_never_writes_over_its_input(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text((SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text(encoding="utf-8"))
    before = log.read_bytes()
    code, _, err = run("calibrate", str(log), "-o", str(log), "--force")
    assert code == 2
    assert "input" in err
    assert log.read_bytes() == before


def test_calibrate_json() -> None:
    code, out, _ = run(
        "calibrate", str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"), "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == "ibcalc-calibration/2"
    assert {p["name"] for p in data["parameters"]} >= {"nvlink4-mesh4.efficiency"}
    # the day of the fit, under a key that says so (it had been "date", read as the run's)
    assert "date" not in data
    assert data["fitted_on"] == datetime.date.today().isoformat()


def test_calibrate_says_the_cost_per_message_is_at_hoppers_clock_everywhere(
    tmp_path: Path,
) -> None:
    """Sweep 09 (2 x 8 DGX A100) fits an all-to-all's cost per message of 2.31 us at Hopper's
    clock, 3.24 us a message on its A100s (x 1980/1410). The table and the file's `rows` said
    so; the override files' '# fitted:' header line and the JSON did not, and read as the A100's
    own figure. The file's estimate scales it back, as --explain shows."""
    log = str(SWEEPS / "09_alltoall_2node_16xA100-40GB_net-notstated.txt")
    flags = ("--system", "dgx-a100", "--nodes", "2")
    code, out, _ = run("calibrate", log, *flags, "--format", "json")
    assert code == 0
    clocks = {p["name"]: p["clock"] for p in json.loads(out)["parameters"]}
    assert clocks == {"calibrated.per_message_latency": "hopper", "hdr.efficiency": None}
    target = tmp_path / "a100.yaml"
    code, _, _ = run("calibrate", log, *flags, "-o", str(target))
    assert code == 0
    for path in (target, tmp_path / "a100.cost-params.yaml"):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert (
            "# fitted: calibrated.per_message_latency 2.4 us -> 2.307 us +- 23.44 ns "
            "(at Hopper's clock)"
        ) in lines
    code, out, _ = run(
        "alltoall",
        "-s",
        "1KiB",
        *flags,
        "--explain",
        "--cost-params",
        str(tmp_path / "a100.cost-params.yaml"),
    )
    assert code == 0
    # 15 messages x 2.30654 us x 1980/1410 = 48.6 us
    assert "messages        48.6 us   n-1 = 15 messages" in out
    assert "x 2.31 us x 1980/1410 (Hopper's clock over the ampere GPU's, MHz)" in out


def test_calibrate_json_lists_the_files_it_could_not_read(tmp_path: Path) -> None:
    """calibrate --format json with a missing file, a directory and a binary file beside a
    readable log printed nothing (the errors on stderr alone), where nccl-check lists them under
    `errors`: the report now has the same `errors`, one per file as stderr words it, the fit's
    keys empty (nothing is fitted), exit 2 as documented; a fitted report has `errors: []`."""
    missing, binary = tmp_path / "missing.txt", tmp_path / "bin.log"
    binary.write_bytes(b"\x00\x01\xff")
    good = str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt")
    code, out, err = run(
        "calibrate", str(missing), good, str(tmp_path), str(binary), "--format", "json"
    )
    assert code == 2
    data = json.loads(out)
    messages = [
        f"{missing}: no such file",
        f"{tmp_path}: is a directory, not a file",
        f"{binary}: binary data, not an nccl-tests log",
    ]
    sources = [str(missing), str(tmp_path), str(binary)]
    assert data["errors"] == [
        {"source": s, "message": m} for s, m in zip(sources, messages, strict=True)
    ]
    assert err == "".join(f"error: {m}\n" for m in messages)
    assert (data["parameters"], data["runs"], data["rows"], data["written"]) == ([], [], 0, [])
    assert (data["fitted_on"], data["rms_before"], data["cost_entries"]) == (None, None, {})
    assert data["schema"] == "ibcalc-calibration/2"
    code, fitted, _ = run("calibrate", good, "--format", "json")
    assert code == 0
    assert list(json.loads(fitted)) == list(data)
    assert json.loads(fitted)["errors"] == []


def test_calibrate_json_names_unread_stdin_as_a_fit_names_it() -> None:
    """Empty stdin: the report's `inputs` say '<stdin>', as a fitted report's do (it had said
    '-'), and `errors` keeps the name given, '-', as nccl-check's does."""
    code, out, _ = run("calibrate", "-", "--format", "json", stdin="")
    assert code == 2
    data = json.loads(out)
    assert data["inputs"] == ["<stdin>"]
    assert data["errors"] == [
        {"source": "-", "message": "<stdin>: empty input, not an nccl-tests log"}
    ]
    log = (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text(encoding="utf-8")
    code, out, _ = run("calibrate", "-", "--format", "json", stdin=log)
    assert (code, json.loads(out)["inputs"]) == (0, ["<stdin>"])


def test_a_value_written_from_few_rows_says_it_is_written(tmp_path: Path) -> None:
    """Sweep 13's copy writes nvlink4-mesh4.efficiency 0.824 -> 0.753 (+- 0.0175) from its 2
    large rows; its note had read "only 2 rows" under the row above's "...: not written", as if
    it were the reason this one was not written either. It now reads "written; fitted on only 2
    rows", and a value from 2 rows that is not written keeps its reason and the row count."""
    from ibcalc.logs.calibrate import calibrate_logs
    from ibcalc.logs.parse import read_log
    from ibcalc.render.logs import render_calibration

    log = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    out = tmp_path / "site.yaml"
    code, text, _ = run("calibrate", str(log), "-o", str(out))
    assert code == 0
    line = next(x for x in text.splitlines() if x.startswith("nvlink4-mesh4.efficiency"))
    assert " ".join(line.split()[1:]) == "0.824 0.753 0.0175 2 written; fitted on only 2 rows"
    assert "efficiency: 0.753" in out.read_text(encoding="utf-8")
    cal = calibrate_logs([read_log(str(log))])
    kept = [
        p.model_copy(update={"value": p.before + 0.02}) if p.rows == 2 else p
        for p in cal.parameters
    ]
    shown = render_calibration(cal.model_copy(update={"parameters": kept}))
    line = next(x for x in shown.splitlines() if x.startswith("nvlink4-mesh4.efficiency"))
    # 0.02 is 1.1 standard errors from 0.824: not written
    note = "< 2 std. err.: not written; fitted on only 2 rows"
    assert " ".join(line.split()[1:]) == f"0.824 0.844 0.0175 2 {note}"


def test_calibrate_header_labels_its_date_as_the_fits() -> None:
    """The header's date is today's, the fit's: 'calibration fitted 2026-12-07 on X'; 'calibration
    on X (2026-12-07)' had read as the date of the run calibrated from."""
    log = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    code, out, _ = run("calibrate", str(log))
    assert code == 0
    today = datetime.date.today().isoformat()
    assert " ".join(out.split()).startswith(
        f"calibration fitted {today} on {log} fitted parameters"
    )


def test_calibrate_unreadable_input_exits_2(tmp_path: Path) -> None:
    code, _, err = run("calibrate", str(tmp_path / "nope.log"))
    assert code == 2
    assert err.startswith("error: ")


@pytest.mark.parametrize("flag", ["--catalogue", "--cost-params"])
def test_calibrate_never_writes_over_a_file_it_reads(flag: str, tmp_path: Path) -> None:
    """The override target may not be the --catalogue or --cost-params file the run reads, even
    with --force: the file is left as it was."""
    given = tmp_path / "mine.yaml"
    schema = "ibcalc-catalogue/1" if flag == "--catalogue" else "ibcalc-cost-params/1"
    text = f"schema: {schema}\n"
    given.write_text(text, encoding="utf-8")
    log = str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt")
    args = ["calibrate", log, "--system", "snellius-h100", flag, str(given)]
    result = CliRunner().invoke(app, [*args, "-o", str(given), "--force"])
    assert result.exit_code == 2
    assert "one of this run's inputs" in result.stderr
    assert given.read_text(encoding="utf-8") == text


SMALL = Path(__file__).resolve().parents[1] / "hostile" / "corpus-log-small-sizes.txt"
SENDRECV = SWEEPS / "21_sendrecv_1node_8xH100_intranode.txt"
#: 2 x p4d over EFA: calibrate moves calibrated.ll_net_bandwidth and the EFA link's values by
#: more than two standard errors each, so both override files are written
P4D_EFA = SWEEPS / "05_allreduce_2node_16xA100-40GB_efa.txt"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        # a directory in which no file can be created, even by root (the probe finds it)
        ("/proc/ibcalc-calibrate.yaml", "error: cannot write /proc/ibcalc-calibrate.yaml: "),
        ("/nonexistent-dir/site.yaml", "no directory '/nonexistent-dir'"),
        ("a" * 300 + ".yaml", "a name in the path is longer than 255 bytes"),
        # 250 + 5 bytes is a valid name; NAME.cost-params.yaml beside it (267 bytes) is not
        ("b" * 250 + ".yaml", "the cost-parameter override beside -o: cannot write bbb"),
        ("", "-o needs a file name"),
    ],
)
def test_calibrate_refuses_an_unwritable_output_before_the_fit(
    target: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The -o target is checked before any log is fitted: one error line, nothing on stdout
    (the report was printed in full, then the write failed; a 300-byte name was a traceback)."""
    import ibcalc.logs.calibrate as calibrate_module

    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("the fit ran before the output was checked")

    monkeypatch.setattr(calibrate_module, "calibrate_logs", no_fit)
    monkeypatch.chdir(tmp_path)
    code, out, err = run("calibrate", str(SMALL), "-o", target)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("error: ")
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_calibrate_refuses_a_cost_params_input_beside_the_output(tmp_path: Path) -> None:
    """-o site.yaml would put its constants in site.cost-params.yaml: when that file is the
    run's --cost-params, the run is refused before the fit, and the file is kept."""
    given = tmp_path / "site.cost-params.yaml"
    given.write_text("schema: ibcalc-cost-params/1\n", encoding="utf-8")
    args = ["calibrate", str(SENDRECV), "--cost-params", str(given)]
    code, out, err = run(*args, "-o", str(tmp_path / "site.yaml"), "--force")
    assert code == 2
    assert out == ""
    assert "site.cost-params.yaml: is one of this run's inputs" in err
    assert given.read_text(encoding="utf-8") == "schema: ibcalc-cost-params/1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.cost-params.yaml"]


def test_calibrate_refuses_a_json_name_for_its_yaml_overrides(tmp_path: Path) -> None:
    """-o site.json wrote YAML into site.json and site.cost-params.json, which no JSON reader
    takes: refused before the fit, with the name to give."""
    target = tmp_path / "site.json"
    code, out, err = run("calibrate", str(SENDRECV), "-o", str(target))
    assert code == 2
    assert out == ""
    assert err == (
        f"error: {target}: the overrides are YAML (read back with --catalogue), not JSON; give "
        f"-o {tmp_path / 'site.yaml'} (--format json prints the fit as JSON)\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("log", "target", "message"),
    [
        # what only the write shows (a full device) ...
        (SMALL, "/dev/full", "error: cannot write /dev/full: No space left on device"),
        # ... or only the fit (the p4d log fits calibrated.ll_net_bandwidth, whose file would
        # go beside /dev/null)
        (P4D_EFA, "/dev/null", "error: /dev/null: a special file; constants were fitted too"),
    ],
)
def test_calibrate_writes_before_it_reports(log: Path, target: str, message: str) -> None:
    """A write refused after the fit leaves stdout empty too: the override is written before
    the report is printed."""
    code, out, err = run("calibrate", str(log), "-o", target)
    assert code == 2
    assert out == ""
    assert err.splitlines() == [err.strip()]
    assert err.startswith(message)


def test_calibrate_reports_after_writing(tmp_path: Path) -> None:
    target = tmp_path / "site.yaml"
    code, out, err = run("calibrate", str(P4D_EFA), "-o", str(target))
    assert code == 0, err
    assert "calibrated.ll_net_bandwidth" in out
    assert err.splitlines() == [f"wrote {target}", f"wrote {tmp_path / 'site.cost-params.yaml'}"]


def test_calibrate_to_dev_stdout_keeps_the_report_and_the_override(tmp_path: Path) -> None:
    """-o /dev/stdout with stdout redirected to a file: the override follows the report whole
    (written before the report, it was overwritten by it from byte 0)."""
    import subprocess
    import sys

    out_file = tmp_path / "out.txt"
    command = [sys.executable, "-c", "from ibcalc.cli import main; main()"]
    with out_file.open("w") as stdout:
        done = subprocess.run(
            [*command, "calibrate", str(SMALL), "-o", "/dev/stdout"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "wrote /dev/stdout\n"
    text = out_file.read_text(encoding="utf-8")
    assert text.startswith("calibration fitted ")
    report, override = text.split("# ibcalc calibrate: catalogue override (links)", 1)
    assert "rms log error of the time over 15 rows" in report
    # the header's -g 4 is modelled, so the NVLink latency fits at its bound: no link changes
    assert override.endswith("\nschema: ibcalc-catalogue/1\nlinks: []\n")


def test_calibrate_says_each_assumption_once() -> None:
    """A session log of six runs on one 2 x RTX 2080 Ti node (five fitted, the sixth skipped)
    listed system, GPUs per node and nodes once per run: 16 lines, now 4, without the log's
    path on each (the heading names the one log)."""
    log = FIXTURES / "09_multi_collective_session_1node_2xRTX2080Ti_pcie.txt"
    code, out, err = run("calibrate", str(log))
    assert code == 0, err
    assumed = out.split("\nassumed:\n", 1)[1]
    items = [" ".join(item.split()) for item in assumed.split("  - ")[1:]]
    assert items == [
        "system = rtx2080ti-2 (GPU 'NVIDIA GeForce RTX 2080 Ti': 'GeForce RTX 2080 Ti' cards "
        "without peer-to-peer)",
        "gpus_per_node = 2 (every host lists 2 ranks)",
        "nodes = 1 (distinct hostnames in the device list: autodl-container-xxxxx x2)",
        "gpus_per_process = 2 (the log's header says nGpus 2, nccl-tests -g: the expectation has "
        "its serial launches)",
        "tuner_constants = 2.30.7 (the log states no NCCL release: NCCL 2.30.7's tuner "
        "constants choose the algorithm and protocol; --nccl-version gives the run's release)",
        "skipped: a run on one GPU moves no data between GPUs",
    ]


def test_calibrate_lists_the_default_node_a_log_of_an_unknown_gpu_is_fitted_on(
    tmp_path: Path,
) -> None:
    """Sweep 07 with its GPUs renamed MI250X (no node rule): nccl-check lists the default node
    and the links it takes; calibrate, whose values are written under those links, had listed
    neither (a review). An AMD GPU's default node is the MI300X one (review BF: it had been
    NVIDIA's, with NVLink 4 and NVLink SHARP); with --intra given, the links given and the
    NVIDIA default's network."""
    text = (SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt").read_text(
        encoding="utf-8"
    )
    log = tmp_path / "mi250x.txt"
    log.write_text(text.replace("NVIDIA A100-SXM4-40GB", "AMD Instinct MI250X"), encoding="utf-8")
    target = tmp_path / "mi250x.yaml"
    code, out, err = run("calibrate", str(log), "-o", str(target))
    assert code == 0, err
    # the file, which is what is kept, says it too (a review of the first form)
    warning = (
        f"warning: {log}: no node rule knows the GPU, so the run is priced on the default node's "
        "scale-up and scale-out links (xgmi-mi300x inside, roce-400g between) and the values are "
        "fitted to "
        "them; give the run's node (its preset, or its scale-up and scale-out links) to fit its "
        "own"
    )
    assert f"# {warning}" in target.read_text(encoding="utf-8").splitlines()
    assert "".join(warning.split()) in "".join(out.split())
    # links given are not the default node's: only the one assumed is named, and none where
    # both are given (a review of the first form named the given ones)
    code, given, err = run("calibrate", str(log), "--intra", "nvlink3")
    assert code == 0, err
    assert "".join(
        f"warning: {log}: no node rule knows the GPU, so the run is priced on the default node's "
        "scale-out link (ndr between) and the values are fitted to it".split()
    ) in "".join(given.split())
    code, both, err = run("calibrate", str(log), "--intra", "nvlink3", "--inter", "hdr")
    assert code == 0, err
    assert "no node rule knows the GPU" not in both
    # a log of two runs, 2 nodes then 1 (sweep 15): the links any run assumed, once (the last
    # run had decided it, naming nvlink4 alone; a review)
    one_node = (SWEEPS / "15_allreduce_1node_8xA100-40GB_intranode.txt").read_text(encoding="utf-8")
    two_runs = tmp_path / "two-runs.txt"
    two_runs.write_text(
        log.read_text(encoding="utf-8")
        + one_node.replace("A100-SXM4-40GB", "AMD Instinct MI250X"),  # no 'NVIDIA' there
        encoding="utf-8",
    )
    code, runs_out, err = run("calibrate", str(two_runs))
    assert code == 0, err
    flat = "".join(runs_out.split())
    said = "".join(
        f"warning: {two_runs}: no node rule knows the GPU, so the run is priced on the default "
        "node's scale-up and scale-out links (xgmi-mi300x inside, roce-400g between)".split()
    )
    assert flat.count(said) == 1
    assumed = [
        " ".join(item.split())
        for item in " ".join(out.split("\nassumed:\n", 1)[1].split("\n")).split(" - ")[1:]
    ]
    assert assumed == [
        "system = mi300x-8 (GPU 'AMD Instinct MI250X' matches no node rule; 'AMD Instinct "
        "MI250X' is an AMD GPU: the mi300x-8 node stands in for it (xGMI, no NVLink SHARP), "
        "where the resolver's default node is NVIDIA's; give the node to judge it (--system, "
        "--gpus-per-node, --intra))",
        "gpus_per_node = 8 (every host lists 8 ranks)",
        "nodes = 2 (distinct hostnames in the device list: sophia-gpu-04 x8, sophia-gpu-09 x8)",
        "inter = roce-400g (the log does not show the network; roce-400g, 8 per node, assumed "
        "from the mi300x-8 preset (--inter, --nics-per-node, --system))",
    ]


def test_an_amd_gpu_no_rule_knows_is_judged_on_an_amd_node(tmp_path: Path) -> None:
    """The published 2 x 8 MI355X rccl-tests run (sweep 03) with its GPUs renamed MI250X: it
    had been judged on the resolver's NVIDIA node, with NVLink SHARP, and told to check
    NCCL_NVLS_ENABLE and the fabric manager (review BF). The MI300X node stands in: no NVLS,
    no contradiction of a --system nobody gave, and the verdict still says it is a default."""
    text = (SWEEPS / "03_allreduce_2node_16xMI355X_ainic-ethernet-rccl.txt").read_text()
    log = tmp_path / "mi250x.txt"
    log.write_text(text.replace("AMD Radeon Graphics", "AMD Instinct MI250X"))
    code, out, err = run("nccl-check", str(log))
    assert code == 0, err
    flat = " ".join(out.split())
    assert "on 2 x 8 GPUs (mi300x-8) xgmi-mi300x +" in flat
    assert "against a default node, as no node rule knows its GPU 'AMD Instinct MI250X'" in flat
    assert "NVLS" not in out.upper()
    assert "ran on other GPUs" not in flat
    # an NVIDIA GPU no rule knows: the default node's causes are warnings of low confidence
    # at most (sweep 07 renamed 'Tesla T4' had been given an error, PCIe Gen3; review BF)
    renamed = tmp_path / "t4.txt"
    renamed.write_text(
        (SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt")
        .read_text()
        .replace("NVIDIA A100-SXM4-40GB", "Tesla T4")
    )
    check = _one_run(renamed)
    assert check["verdict"] == "bad"
    first = check["findings"][0]
    assert (first["severity"], first["confidence"]) == ("warning", "low")
    assert not any(f["severity"] == "error" for f in check["findings"])


def test_nccl_check_marks_expected_busbw_that_is_an_equivalent_figure() -> None:
    """Sweep 06 (2 x p5) is expected in NVLS-tree from 128 MiB: its busbw is nccl-tests' formula
    over fewer bytes on the wire, which a sweep marks with '*' and the README says the output
    says; nccl-check had not (a review). Sweep 13 (one 4 x H100 mesh, rings) is a wire rate."""
    log = str(SWEEPS / "06_allreduce_2node_16xH100_efa.txt")
    code, out, err = run("nccl-check", log)
    assert code == 0, err
    footnote = (
        "* expected busbw is an equivalent figure (in-network or 2-node tree), not a wire rate"
    )
    assert footnote in out.splitlines()
    (gib,) = [line for line in out.splitlines() if line.startswith("  1 GiB ")]
    assert "439* (228-453)" in gib
    code, out, err = run("nccl-check", log, "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["runs"][0]["rows"]
    marked = {r["size_bytes"]: r["busbw_equivalent"] for r in rows}
    assert marked[2**30] is True
    # the 2-node tree below (each node sends S once, not 2(n-1)/n S) is one too
    assert {r["algorithm"] for r in rows} == {"tree", "nvlstree"}
    assert all(r["busbw_equivalent"] for r in rows)
    code, out, err = run("nccl-check", str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"))
    assert code == 0, err
    assert footnote not in out
    assert "*" not in out
    # a GitHub annotation has no footnote: it says it in words (sweep 10's 2-node tree at 64 MiB)
    code, out, err = run(
        "nccl-check", str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt"), "--format", "github"
    )
    assert code == 0, err
    (low,) = [line for line in out.splitlines() if "64 MiB low::" in line]
    assert "expected 122 (102-124) GB/s, an equivalent figure (in-network or 2-node tree)" in low
    assert "*" not in out


def test_calibrate_says_a_pcie_fit_reaches_the_nics_of_other_presets(tmp_path: Path) -> None:
    """Sweep 23, two A100 PCIe cards across CPU sockets, fits pcie4.efficiency far below 0.8;
    pcie4 is also the host link of DGX A100's NICs, so the override slowed a 2 x DGX A100
    all-gather of 1 GiB from 5.28 to 8.66 ms, unsaid (a review). The report says so; an NVLink
    fit (sweep 13's mesh) reaches no NIC and says nothing of it."""
    target = tmp_path / "pair.yaml"
    log = str(SWEEPS / "23_allreduce_1node_2xA100-PCIE-40GB_pcie.txt")
    code, out, err = run("calibrate", log, "-o", str(target))
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "warning: pcie4 is fitted from GPU-to-GPU traffic over it, and it is also the host link "
        "of the NICs of 9 presets (dgx-a100, hgx-a800, aws-p4d, aws-p4de and 5 more presets): "
        "with this override their network is held to its fitted rate; use the file for estimates "
        "of this cluster only"
    ) in flat
    assert "- id: pcie4" in target.read_text(encoding="utf-8").splitlines()
    code, out, err = run("calibrate", str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"))
    assert code == 0, err
    assert "host link of the NICs" not in " ".join(out.split())


def test_calibrate_says_what_nccl_check_doubts_of_a_flag(tmp_path: Path) -> None:
    """Sweep 10's GPUs renamed GB300 and calibrated as gb200-nvl72: across its 2 trays the
    preset runs NDR where GB300's NICs are XDR, which nccl-check warns of; calibrate had fitted
    ndr.efficiency from the run without a word (a review)."""
    text = (SWEEPS / "10_allreduce_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    log = tmp_path / "gb300.txt"
    log.write_text(text.replace("NVIDIA H100", "NVIDIA GB300"), encoding="utf-8")
    code, out, err = run("calibrate", str(log), "--system", "gb200-nvl72")
    assert code == 0, err
    warning = (
        f"warning: nccl-check warns of {log} (run 1): perhaps not ndr: the log's 'NVIDIA GB300' "
        "nodes have xdr NICs, where the expectations run ndr; the values are fitted to the "
        "cluster as given"
    )
    assert "".join(warning.split()) in "".join(out.split())
    code, out, err = run("calibrate", str(log), "--system", "gb200-nvl72", "--inter", "xdr")
    assert code == 0, err
    assert "nccl-check warns of" not in out
    # nccl-check's word that another preset of the GPU is priced alike says the flag is fine:
    # not repeated as a doubt (a review of the first form)
    text = (SWEEPS / "06_allreduce_2node_16xH100_efa.txt").read_text(encoding="utf-8")
    h200 = tmp_path / "h200.txt"
    h200.write_text(text.replace("NVIDIA H100 80GB HBM3", "NVIDIA H200"), encoding="utf-8")
    code, out, err = run("calibrate", str(h200), "--system", "aws-p5")
    assert code == 0, err
    assert "nccl-check warns of" not in out


_SOCKETS = (
    "2 l40s-pcie nodes joined by NCCL's TCP socket transport (the log's NCCL_IB_DISABLE=1 on line "
    "1), which no catalogue link models: the run cannot be priced"
)


def test_a_run_on_sockets_is_refused_by_name(tmp_path: Path) -> None:
    """Sweep 27: two one-L40S hosts with 'mpirun ... -x NCCL_IB_DISABLE=1' on line 1. The
    refusal names the socket transport; it had blamed the preset's missing NIC and asked for
    --inter and --nics-per-node, which price RDMA the run did not use (a review). Two such logs
    and nothing else: the first one's refusal, not 'no row left to fit'."""
    log = str(SWEEPS / "27_allreduce_2node_2xL40S_ethernet-ibdisabled.txt")
    for command in ("nccl-check", "calibrate"):
        code, _, err = run(command, log)
        assert code == 2
        assert err == f"error: {log}: {_SOCKETS}\n"
    other = tmp_path / "27b.txt"
    text = Path(log).read_text(encoding="utf-8")
    assert text.count(" 166.4 ") == 1
    other.write_text(text.replace(" 166.4 ", " 166.5 "), encoding="utf-8")
    code, _, err = run("calibrate", log, str(other))
    assert code == 2
    assert err == f"error: {log}: {_SOCKETS}\n"


def test_calibrate_fits_the_runs_it_can_price_past_one_it_cannot(tmp_path: Path) -> None:
    """A run the model cannot price (sweep 27, on sockets) is left out of a fit of several logs
    with a warning, as nccl-check goes on past it; it had stopped the fit of all 27 published
    sweeps (exit 2, nothing fitted). The fit is that of the other log alone (sweep 07's hdr)."""
    socket_log = str(SWEEPS / "27_allreduce_2node_2xL40S_ethernet-ibdisabled.txt")
    ib_log = str(SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt")
    target = tmp_path / "site.yaml"
    code, out, err = run("calibrate", ib_log, socket_log, "-o", str(target))
    assert code == 0, err
    warning = f"warning: {socket_log}: {_SOCKETS}; it is left out of the fit"
    assert "".join(warning.split()) in "".join(out.split())
    # its assumptions are not listed as a fitted run's (a review of the first form)
    assert "l40s-pcie" not in out.split("\nassumed:\n", 1)[1]
    assert f"# {warning}" in target.read_text(encoding="utf-8").splitlines()
    alone = tmp_path / "alone.yaml"
    code, _, err = run("calibrate", ib_log, "-o", str(alone))
    assert code == 0, err
    # a flag that does not make it unpriceable keeps the skip (--no-nvls had turned it into a
    # refusal of the whole fit: a review of the first form); one that does is refused (the
    # --scale-up-domain test below)
    code, out, err = run("calibrate", ib_log, socket_log, "--no-nvls", "--host-cpu", "intel")
    assert code == 0, err
    assert "".join(warning.split()) in "".join(out.split())
    # a flag one log cannot take is the caller's to mend: the whole fit is refused, naming it
    # (sweep 10 ran 2 x 4 ranks; -g 8 makes it 16)
    other = str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt")
    code, out, err = run("calibrate", ib_log, other, "-g", "8")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {other}: the cluster has 2 nodes x 8 GPUs = 16 ranks, but the")
    body = [line for line in target.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]
    assert "- id: hdr" in body
    assert body == [
        line for line in alone.read_text(encoding="utf-8").splitlines() if line[:1] != "#"
    ]


def test_calibrate_warns_when_logs_of_different_clusters_share_a_value(tmp_path: Path) -> None:
    """Two L40S nodes on sockets (NCCL_IB_DISABLE=1) and two 4 x H100 Snellius nodes, both
    priced on NDR (--inter ndr): one ndr.efficiency (0.269) was fitted to both, silently."""
    logs = [
        str(SWEEPS / "27_allreduce_2node_2xL40S_ethernet-ibdisabled.txt"),
        str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt"),
    ]
    target = tmp_path / "site.yaml"
    code, out, err = run("calibrate", *logs, "--inter", "ndr", "-o", str(target))
    assert code == 0, err
    # long paths wrap (anywhere) at the console's width: compare without whitespace
    flat = "".join(out.split())
    today = datetime.date.today().isoformat()
    assert flat.startswith("".join(f"calibration fitted {today} on {logs[0]}, {logs[1]}".split()))
    warning = (
        f"warning: these logs come from different clusters: {logs[0]} (node preset l40s-pcie, "
        "GPU architecture ada, GPUs per node 1, scale-up link none, NICs per node 1) vs "
        f"{logs[1]} (node preset snellius-h100, GPU architecture hopper, GPUs per node 4, "
        "scale-up link nvlink4-mesh4, NICs per node 4); one value of ndr.transport_latency, "
        "ndr.efficiency was fitted to all of them (calibrate each cluster's logs on their own)"
    )
    squashed = "".join(warning.split())
    assert squashed in flat
    assert flat.index(squashed) < flat.index("fittedparameters")
    assert f"# {warning}" in target.read_text(encoding="utf-8").splitlines()


def test_a_log_file_name_cannot_fake_a_line(tmp_path: Path) -> None:
    """A log named 'x<newline>::error title=INJECTED::...' printed a second GitHub workflow
    command in --format github's summary line, and its name raw in the table and calibrate
    headers; an escape code was dropped ('e<ESC>[31mred.txt' shown as 'ered.txt'). File names
    are shown escaped, as every other text from input is."""
    log = tmp_path / "x\n::error title=INJECTED::pwned.txt"
    log.write_bytes((SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_bytes())
    escaped = "x\\n::error title=INJECTED::pwned.txt"
    for args in (["nccl-check", "--format", "github"], ["nccl-check"], ["calibrate"]):
        code, out, err = run(*args, str(log))
        assert code == 0, err
        assert not any(line.startswith("::error title=INJECTED") for line in out.splitlines())
        assert escaped in out
    colour = tmp_path / "e\x1b[31mred.txt"
    colour.write_bytes(log.read_bytes())
    _, out, _ = run("nccl-check", str(colour))
    assert "e\\x1b[31mred.txt" in out


def test_half_the_expected_rate_inside_the_band_is_not_ok(tmp_path: Path) -> None:
    """Sweep 13 (1 x 4 H100) with its 64 and 128 MiB times x 1.8 (efficiency 51-52 %) had been
    inside the one-node error band (10th percentile -54 %) and read "verdict: ok"; the band
    lifts a row one step only (bad -> low, low -> ok). NVLink domains now have their own band
    (-20 % at these sizes), which no longer reaches those rows; a PCIe pair's still reaches
    -67 %: sweep 25 (2 x A100 PCIe, 76-78 % of the expected busbw) with its rows of 64 MiB and
    more x 1.5 is at 51-52 %, below the bad threshold of 0.6 and inside its band: low, not ok."""
    lines = []
    for line in (SWEEPS / "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) > 8 and fields[0].isdigit() and int(fields[0]) >= 64 * 2**20:
            line = line.replace(fields[5], f"{float(fields[5]) * 1.5:.1f}", 1)
        lines.append(line)
    slow = tmp_path / "slow.txt"
    slow.write_text("\n".join(lines) + "\n")
    code, out, err = run("nccl-check", str(slow), "--format", "json")
    assert code == 0, err
    (checked,) = json.loads(out)["runs"]
    big = [r for r in checked["rows"] if r["size_bytes"] >= 64 * 2**20]
    assert len(big) == 8
    for row in big:
        assert 0.5 < row["efficiency"] < 0.6  # below the bad threshold of 0.6
        assert row["within_band"] is True
        assert row["verdict"] == "low"
    assert checked["verdict"] == "low"
    # the same slowdown on one NVLink node is outside its band: bad, and flagged
    lines = []
    for line in (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) > 8 and fields[0] in ("67108864", "134217728"):
            line = line.replace(fields[5], f"{float(fields[5]) * 1.8:.1f}", 1)
        lines.append(line)
    slow.write_text("\n".join(lines) + "\n")
    code, out, err = run("nccl-check", str(slow), "--format", "json")
    (checked,) = json.loads(out)["runs"]
    big = [r for r in checked["rows"] if r["size_bytes"] >= 64 * 2**20]
    assert [r["within_band"] for r in big] == [False, False]
    assert checked["verdict"] == "bad"


def _edited_13(tmp_path: Path, times: dict[str, str], name: str = "edited.txt") -> Path:
    """Sweep 13 (1 x 4 H100, NCCL 2.22.3) with the out-of-place time of some sizes replaced."""
    lines = []
    for line in (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) > 8 and fields[0] in times:
            line = line.replace(fields[5], times[fields[0]], 1)
        lines.append(line)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_time_faster_than_the_cluster_can_move_is_no_measurement(tmp_path: Path) -> None:
    """64 and 128 MiB in 3.4 and 6.4 us on 4 H100 (29,600 GB/s busbw where NVLink 4 gives
    450) passed --min-efficiency 0.85 with "verdict: ok", and calibrate fitted the NVLink
    efficiency to 1.00 from them. A row above 64 KiB more than 4x faster than the model is
    now invalid: the run is corrupt, the gate fails, calibrate leaves it out."""
    fast = _edited_13(tmp_path, {"67108864": "3.4", "134217728": "6.4"})
    code, out, err = run("nccl-check", str(fast), "--format", "json", "--min-efficiency", "0.85")
    assert code == 1
    (checked,) = json.loads(out)["runs"]
    assert checked["verdict"] == "corrupt"
    flagged = [r["size_bytes"] for r in checked["rows"] if r["implausible"]]
    assert flagged == [64 * 2**20, 128 * 2**20]
    assert any(f["kind"] == "implausible_timing" for f in checked["findings"])
    assert "implausibly fast" in err
    code, out, _ = run("calibrate", str(fast))
    assert code == 0
    assert "2 rows over 4x faster than the model expects left out" in " ".join(out.split())
    assert "nvlink4-mesh4.efficiency: no fitted row of 64 MiB or more" in out


def test_calibrate_leaves_out_rows_that_failed_validation_in_place(tmp_path: Path) -> None:
    """nccl-check called a run with #wrong = 5 in place at 128 MiB corrupt, and calibrate
    fitted that row without a word (it read the out-of-place #wrong only)."""
    lines = []
    for line in (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) > 12 and fields[0] == "134217728":
            fields[12] = "5"  # the in-place #wrong column
            line = "  ".join(fields)
        lines.append(line)
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("\n".join(lines) + "\n")
    _, out, _ = run("nccl-check", str(wrong), "--format", "json")
    assert json.loads(out)["runs"][0]["verdict"] == "corrupt"
    code, out, _ = run("calibrate", str(wrong))
    assert code == 0
    assert "1 row whose results failed validation (#wrong) left out" in " ".join(out.split())


def test_a_row_longer_than_hours_is_dropped(tmp_path: Path) -> None:
    """A 128 MiB time of 1e30 us was shown as a 31-digit measurement (1e308: a table of
    cut columns) and calibrate reported a 4e15 % error; it is dropped with a note."""
    absurd = _edited_13(tmp_path, {"134217728": "1e30"})
    code, out, _ = run("nccl-check", str(absurd))
    assert code == 0
    assert "1e+30 us out of place is longer than 1e+10 us (2.8 hours)" in " ".join(out.split())
    assert "128 MiB" not in out.split("note:")[0]


def test_flags_that_replace_the_log_s_placement_are_listed() -> None:
    """`nccl-check <1 host x 4 ranks> -N 2 -g 2` ran on 2 x 2 GPUs and the table listed no
    [flag] line for either: a flag that replaces what the device list shows is listed with it.
    (The log's one process drives 4 GPUs, nGpus 4, which 2 GPUs a node cannot hold: the
    re-placement is refused unless --gpus-per-process says how many a process drives.)"""
    log = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    code, _, err = run("nccl-check", str(log), "-N", "2", "-g", "2")
    assert code == 2
    assert "--gpus-per-node '2' is fewer than the log's nGpus 4" in err
    code, out, err = run("nccl-check", str(log), "-N", "2", "-g", "2", "--gpus-per-process", "1")
    assert code == 0, err
    text = " ".join(out.split())
    assert "nodes = 2 [flag]: given by the caller (the device list shows 1 host)" in text
    assert (
        "gpus_per_node = 2 [flag]: given by the caller (the device list shows 4 ranks per host)"
    ) in text
    _, same, _ = run("nccl-check", str(log), "-N", "1")  # what the log shows: not listed
    assert "nodes = 1 [flag]" not in same
    # --nvls against NCCL's own "not available", --system against the GPU's node rule
    _, out, _ = run("nccl-check", str(log), "--nvls", "--system", "dgx-h100")
    text = " ".join(out.split())
    assert (
        "nvls = True [flag]: given by the caller (NCCL says 'NVLS multicast support is not "
        "available', line 27)"
    ) in text
    assert (
        "system = dgx-h100 [flag]: given by the caller (the log's GPU 'NVIDIA H100' suggests "
        "snellius-h100)"
    ) in text
    _, own, _ = run("nccl-check", str(log), "--system", "snellius-h100")
    assert "[flag]" not in own


def test_flags_that_replace_the_log_s_network_are_listed() -> None:
    """--nics-per-node 2 on a log whose channels run over 4 IB devices, and --inter efa-v2 on a
    log that uses verbs, replaced NCCL's own word with no [flag] line in the table (JSON only)."""
    log = SWEEPS / "10_allreduce_2node_8xH100_ib.txt"
    code, out, err = run("nccl-check", str(log), "--nics-per-node", "2", "--inter", "efa-v2")
    assert code == 0, err
    text = " ".join(out.split())
    assert (
        "nics_per_node = 2 [flag]: given by the caller (channels run over 4 network devices, "
        "first at line 225)"
    ) in text
    assert (
        "inter = efa-v2 [flag]: given by the caller (the log shows 'Using network IB', line 65)"
    ) in text
    # what the log allows is not listed: 4 devices, and hdr is a link verbs may run over
    _, same, _ = run("nccl-check", str(log), "--nics-per-node", "4", "--inter", "hdr")
    assert "[flag]" not in same


def test_a_size_listed_twice_is_noted(tmp_path: Path) -> None:
    """Two 32 MiB rows (a table pasted twice, an edit) were both judged without a word."""
    lines = []
    for line in (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text().splitlines():
        lines.append(line)
        if line.split()[:1] == ["33554432"]:
            lines.append(line)
    twice = tmp_path / "twice.txt"
    twice.write_text("\n".join(lines) + "\n")
    code, out, _ = run("nccl-check", str(twice))
    assert code == 0
    assert (
        "1 size listed more than once in this run (the first: 33554432 B at lines 214, 215)"
        in " ".join(out.split())
    )


def test_no_published_large_row_is_near_the_implausible_speed() -> None:
    """IMPLAUSIBLE_SPEEDUP (4x) rests on this: no published row of 64 MiB or more in
    benchmarks/data runs more than PUBLISHED_SPEEDUP (1.14x) faster than the model, out of place
    or in place (1 x 8 MI355X at 64 MiB; it had been 1.21x on 10 x 8 H100 in fp64 while the
    model kept NVLS from 64-bit types, and 1.17x on 2 x 8 MI355X at 256 MiB while RoCE's
    efficiency was an assumed 0.9)."""
    from ibcalc.logs.results import IMPLAUSIBLE_SPEEDUP

    logs = [str(p) for p in sorted(SWEEPS.glob("*.txt"))]
    _, out, _ = run("nccl-check", *logs, "--format", "json")
    rows = [r for c in json.loads(out)["runs"] for r in c["rows"] if r["size_bytes"] >= 2**26]
    assert len(rows) > 150
    fastest = max(
        r["expected_time_us"] / t
        for r in rows
        for t in (r["measured_time_us"], r["inplace_time_us"])
        if t
    )
    assert fastest == pytest.approx(PUBLISHED_SPEEDUP, abs=0.01)
    assert not any(r["implausible"] for r in rows)
    assert fastest * 3 < IMPLAUSIBLE_SPEEDUP


def test_the_closing_line_does_not_say_all_is_well_beside_rows_marked_low() -> None:
    """Sweep 26 (2 x A100 PCIe sendrecv) has small rows marked low under a run verdict of ok:
    it said "no problem found: the run matches the model" beside them. (Sweep 13, 1 x 4 H100
    with -g 4, was the case until the header's -g was modelled; its small rows now read ok.)"""
    log = str(SWEEPS / "26_sendrecv_1node_2xA100-PCIE-40GB_pcie.txt")
    code, out, _ = run("nccl-check", log, "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    off = sum(r["verdict"] in ("low", "bad") for r in check["rows"])
    assert off > 0
    assert check["verdict"] == "ok"
    code, out, _ = run("nccl-check", log)
    assert "no problem found" not in out
    assert (
        f"the {off} rows marked low or bad above: see the notes below; the rows of 64 MiB or "
        "more, which set the run's verdict, match the model"
    ) in " ".join(out.split())
    # a run whose rows are all ok still says so (sweep 12, 2 x 4 H100 all-gather)
    code, out, _ = run("nccl-check", str(SWEEPS / "12_allgather_2node_8xH100_ib.txt"))
    assert "no problem found: the run matches the model" in out


@pytest.mark.parametrize("time", ["-672.7", "nan", "inf", "0", "0.001", "1e30"])
def test_a_large_row_that_is_no_measurement_fails_the_gate(time: str) -> None:
    """Sweep 12's 1 GiB row with its out-of-place time made no measurement: the row was
    dropped with a note and --min-efficiency passed, judging the run on the rows left."""
    text = (SWEEPS / "12_allgather_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    row = "  1073741824      33554432     float    none      -1   9838.5  109.14   95.49"
    assert row in text
    edited = text.replace(row, row.replace("9838.5", time))
    code, out, err = run("nccl-check", "-", "--min-efficiency", "0.85", stdin=edited)
    assert code == 1, out
    assert "fails at 1 GiB (line 293: no measurement)" in err
    assert "verdict: corrupt" in out
    code, out, _ = run("nccl-check", "-", "--format", "json", stdin=edited)
    (check,) = json.loads(out)["runs"]
    assert check["verdict"] == "corrupt"
    assert check["unmeasured"] == [[1073741824, 293]]
    # the log as published passes the same gate
    code, _, _ = run(
        "nccl-check", str(SWEEPS / "12_allgather_2node_8xH100_ib.txt"), "--min-efficiency", "0.85"
    )
    assert code == 0


def test_latency_rows_show_their_time_band() -> None:
    """Rows of 64 KiB or less are judged on time, and their band is on time: the table printed
    none for them (the JSON had it). Each latency row now shows the JSON's expected time and
    range, to the table's precision (3 figures below 100 us); the other rows show theirs on
    busbw, as before."""
    log = str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt")
    _, out, _ = run("nccl-check", log, "--format", "json")
    rows = json.loads(out)["runs"][0]["rows"]
    result = CliRunner().invoke(app, ["nccl-check", log], env={"COLUMNS": "120"})
    lines = {line.split()[-1]: line for line in result.stdout.splitlines() if line[:1] == " "}
    latency = [r for r in rows if r["regime"] == "latency"]
    assert latency

    def us(value: float) -> str:  # the table's time precision: 1 decimal from 10 us
        return f"{value:.3g}" if value < 10 else f"{value:.1f}"

    for row in latency:
        low, high = row["expected_time_us_range"]
        assert low <= row["expected_time_us"] <= high
        cell = f"{us(row['expected_time_us'])} ({us(low)}-{us(high)})"
        assert cell in lines[str(row["line"])]
    other = next(r for r in rows if r["regime"] == "bandwidth")
    expected = other["expected_time_us"]
    shown = f"{expected:,.0f}" if expected >= 1000 else us(expected)
    assert f" {shown}   " in lines[str(other["line"])]  # no band after it


@pytest.mark.parametrize(("columns", "dropped"), [(80, {"regime", "algorithm"}), (110, set())])
def test_a_narrow_terminal_drops_columns_rather_than_cut_numbers(
    columns: int, dropped: set[str]
) -> None:
    """At 80 columns 20-98 cells per log read '17,2…' or '10…'; every cell is whole now."""
    result = CliRunner().invoke(
        app,
        ["nccl-check", str(SWEEPS / "06_allreduce_2node_16xH100_efa.txt")],
        env={"COLUMNS": str(columns)},
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:1] == ["size"])
    table = lines[head : next(i for i in range(head, len(lines)) if lines[i].startswith("eff."))]
    assert all(len(line) <= columns for line in table)
    assert not any("…" in line for line in table)
    header = set(lines[head].split())
    assert dropped.isdisjoint(header)
    assert {"regime", "algorithm", "line"} - dropped <= header


@pytest.mark.parametrize("columns", [60, 70, 80, 90, 120])
def test_calibrate_folds_names_rather_than_cut_its_figures(columns: int) -> None:
    """Below 80 columns the fitted values read '1.01 …' and the note lost letters at the edge;
    now every figure is whole and the note's words are all there: in the table where it keeps
    every word whole (120 columns here), else one block per parameter (its 12-column note had
    broken 'ndr200.trans / port_latency' at 80 and 90: review EU 4)."""
    logs = [
        str(SWEEPS / n)
        for n in ("13_allreduce_1node_4xH100_intranode.txt", "10_allreduce_2node_8xH100_ib.txt")
    ]
    code, out, _ = run("calibrate", *logs, "--format", "json")
    assert code == 0
    fitted = json.loads(out)["parameters"]
    result = CliRunner().invoke(app, ["calibrate", *logs], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    head = lines.index("fitted parameters") + 1
    table = lines[head : lines.index("not determined:")]
    assert all(len(line) <= columns for line in table)
    assert not any("…" in line for line in table)
    if columns < 120:
        # blocks: the name, then 'before -> fitted[, std. error e], N rows', then the note
        at = [table.index(p["name"]) for p in fitted]
        counts = [int(table[i + 1].split(", ")[-1].split()[0]) for i in at]
        assert counts == [p["rows"] for p in fitted]
        note = " ".join(table[at[0] + 2 : at[1]])
        assert "at the bound of its range" in " ".join(note.split())
        return
    # each fitted value's row (its note's further lines begin with spaces): before, fitted,
    # standard error (with their units) and row count
    rows = [line.split() for line in table[2:] if line and not line[0].isspace()]
    assert len(rows) == len(fitted)
    assert [int(next(w for w in r[1:] if w.isdigit())) for r in rows] == [p["rows"] for p in fitted]
    # the note of the value at the bound of its range, read down its column, is whole
    start = lines[head].index("note")
    note = " ".join(line[start:].strip() for line in table[2:] if len(line) > start)
    assert "at the bound of its range" in note


def test_a_log_given_twice_is_read_once() -> None:
    """nccl-check reported it twice, calibrate weighed its rows twice, and '- -' read an empty
    standard input the second time ('<stdin>: empty input')."""
    log = str(SWEEPS / "12_allgather_2node_8xH100_ib.txt")
    code, out, err = run("nccl-check", log, log, "--format", "json")
    assert code == 0
    assert len(json.loads(out)["runs"]) == 1
    assert err == f"note: {log} is given again; read once\n"
    text = Path(log).read_text(encoding="utf-8")
    code, out, err = run("nccl-check", "-", "-", "--format", "json", stdin=text)
    assert code == 0
    assert len(json.loads(out)["runs"]) == 1
    assert err == "note: - is given again; read once\n"
    once_out = run("calibrate", log, "--format", "json")[1]
    code, twice_out, err = run("calibrate", log, log, "--format", "json")
    assert code == 0
    assert err == f"note: {log} is given again; read once\n"
    assert json.loads(twice_out)["parameters"] == json.loads(once_out)["parameters"]


def test_a_cluster_flag_one_of_several_logs_cannot_take_names_that_log() -> None:
    """--scale-up-domain 4 suits sweep 10's 4-GPU nodes, not sweep 20's 8-GPU node: the refusal
    did not say which log, and calibrate stopped on it."""
    suits = str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt")
    other = str(SWEEPS / "20_alltoall_1node_8xH100_intranode.txt")
    for command in ("calibrate", "nccl-check"):
        code, _out, err = run(command, suits, other, "--scale-up-domain", "4")
        assert code == 2, (command, err)
        assert f"error: {other}: --scale-up-domain 4 is not a whole number of 8-GPU nodes" in err


def test_the_same_log_under_two_names_is_read_once(tmp_path: Path) -> None:
    """`cat L | calibrate - L` fitted L's rows twice (as '<stdin>' and as L), and a copy of a log
    was checked and weighed as a second run."""
    log = str(SWEEPS / "12_allgather_2node_8xH100_ib.txt")
    text = Path(log).read_text(encoding="utf-8")
    once_out = run("calibrate", log, "--format", "json")[1]
    code, out, err = run("calibrate", "-", log, "--format", "json", stdin=text)
    assert code == 0
    assert err == f"note: {log} holds the same text as <stdin>; read once\n"
    # the same values, credited to the name the rows were read under
    twice, once = json.loads(out)["parameters"], json.loads(once_out)["parameters"]
    assert [{**p, "sources": None} for p in twice] == [{**p, "sources": None} for p in once]
    assert {s for p in twice for s in p["sources"]} == {"<stdin>"}
    assert json.loads(out)["inputs"] == ["<stdin>"]
    copy = tmp_path / "copy.txt"
    copy.write_text(text, encoding="utf-8")
    code, out, err = run("nccl-check", log, str(copy), "--format", "json")
    assert code == 0
    assert len(json.loads(out)["runs"]) == 1
    assert err == f"note: {copy} holds the same text as {log}; read once\n"


def test_calibrate_takes_the_collective_a_log_does_not_say() -> None:
    """The p4d log runs scatter_perf without naming it: calibrate said only 'no run has rows ...
    to fit' and had no --collective to give it, which nccl-check has."""
    log = str(FIXTURES / "01_scatter_2node_16xA100-40GB_p4d_efa_slurm_full_debug_log.txt")
    code, out, err = run("calibrate", log)
    assert code == 2
    assert out == ""
    # its table fits scatter or gather alone, neither of which --collective can name: said so
    # (it had said "give it (--collective)", and neither name is accepted there)
    assert err == (
        f"error: no run to fit: {log}: the table fits scatter or gather, which ibcalc does not "
        "model (it models all_gather, all_reduce, alltoall, broadcast, reduce, reduce_scatter, "
        "sendrecv)\n"
    )
    code, out, err = run("calibrate", log, "--collective", "all_gather", "--format", "json")
    assert code == 0, err
    fit = json.loads(out)
    assert [r["collective"] for r in fit["runs"]] == ["all_gather"]
    # one log: the heading names it, each assumption does not again
    assert "collective = all_gather (given; the log says nothing)" in fit["assumptions"]
    assert {p["name"] for p in fit["parameters"]} >= {"efa-100g.transport_latency"}
    # a collective ibcalc does not know is refused before any log is read
    code, _, err = run("calibrate", log, "--collective", "scatter")
    assert code == 2
    assert err.startswith(
        "error: --collective 'scatter' is not a known collective (did you mean reducescatter, "
        "allgather? see 'ibcalc calibrate --help')"
    )


def test_log_commands_say_where_gpus_per_process_comes_from() -> None:
    # their --help said "[default: 1]", while a log's header nGpus 4 is what they use unless
    # the flag is given
    for command in ("nccl-check", "calibrate"):
        result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        text = " ".join(result.output.split())
        assert (
            "GPUs one process drove, as nccl-tests -g: a divisor of the GPUs per node "
            "(default: the log header's nGpus, else 1)."
        ) in text
        assert "[default: 1]" not in text


def test_calibrate_without_output_says_it_wrote_nothing() -> None:
    log = str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt")
    code, out, err = run("calibrate", log)
    assert code == 0
    assert "fitted parameters" in out
    assert err == "note: nothing written; -o FILE saves the fitted values as an override\n"
    code, _, err = run("calibrate", log, "--format", "json")
    assert (code, err) == (0, "")  # JSON goes to programs, which know what they asked for


def test_calibrate_breaks_a_long_parameter_name_after_its_link() -> None:
    """At 80 columns 'nvlink4-mesh4.transport_latency' (31 characters) does not fit its column:
    it breaks after the link's id, not inside a word ('transport_l' over 'atency')."""
    logs = [
        str(SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"),
        str(SWEEPS / "14_reducescatter_1node_4xH100_intranode.txt"),
    ]
    result = CliRunner().invoke(app, ["calibrate", *logs], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    (first,) = [i for i, line in enumerate(lines) if line.startswith("nvlink4-mesh4. ")]
    assert lines[first + 1].startswith("transport_latency ")
    assert max(len(line) for line in lines) <= 80


@pytest.mark.parametrize("columns", [60, 80])
def test_calibrate_folds_a_long_log_name_in_its_fit_quality_table(columns: int) -> None:
    """The fit-quality table kept a log's file name whole however long: with
    log11_allreduce_2node_8xGH200_slingshot_nccltests2.17.1_indented_degraded.txt (77
    characters) it printed 106 columns on an 80-column page, and any published log's name
    took it past 60. The name now folds in the room the other columns leave, the figures
    whole."""
    name = "log11_allreduce_2node_8xGH200_slingshot_nccltests2.17.1_indented_degraded.txt"
    result = CliRunner().invoke(
        app, ["calibrate", str(SWEEPS / name)], env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("fit quality per run")
    end = next(i for i, line in enumerate(lines) if line.startswith("rms log error"))
    table = lines[start:end]
    assert max(len(line) for line in table) <= columns, max(table, key=len)
    rule = next(i for i, line in enumerate(table) if line.startswith("\u2500"))
    assert "".join(line.split()[0] for line in table[rule + 1 :]).startswith(name)
    assert "16" in table[rule + 1].split()  # the rows, whole on the run's first line


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        # sweep 06 ran on H100s (p5): fitted as a DGX A100 it wrote the EFA latency into the
        # HDR link (hdr.transport_latency 19.0 us) with no warning
        (["--system", "dgx-a100"], "the log ran on other GPUs than dgx-a100's"),
        # its rows are all_reduce's (busbw/algbw 1.875): fitted as all_gather it wrote
        # efa-v2.efficiency 0.60
        (["--collective", "all_gather"], "the rows are all_reduce's, not all_gather's"),
    ],
)
def test_calibrate_refuses_flags_the_log_contradicts(
    tmp_path: Path, flags: list[str], words: str
) -> None:
    """Guards: what nccl-check reports as a high-confidence contradiction of a flag stops a
    calibration before anything is fitted or written (one line, exit 2)."""
    out = tmp_path / "cal.yaml"
    log = SWEEPS / "06_allreduce_2node_16xH100_efa.txt"
    code, _stdout, err = run("calibrate", str(log), *flags, "-o", str(out))
    assert code == 2
    assert words in err
    assert "nothing is fitted" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("flags", "give"),
    [
        ([], "--nodes (with --gpus-per-node or --system)"),
        (["-N", "1"], "--gpus-per-node or --system"),
    ],
)
def test_calibrate_refuses_a_run_whose_rank_count_is_a_guess(
    tmp_path: Path, flags: list[str], give: str
) -> None:
    """Guards: sweep 26's sendrecv table alone gives no rank count; calibrate had fitted the
    default 2 x 8 DGX H100's network from the 2-GPU PCIe pair (ndr.efficiency 0.431, written).
    It stops before anything is fitted or written, naming what is missing (one line, exit 2)."""
    source = (SWEEPS / "26_sendrecv_1node_2xA100-PCIE-40GB_pcie.txt").read_text()
    rows = [line for line in source.splitlines() if line[:12].strip().isdigit()]
    table = tmp_path / "table.txt"
    table.write_text("# Collective test starting: sendrecv_perf\n" + "\n".join(rows) + "\n")
    out = tmp_path / "cal.yaml"
    code, _stdout, err = run("calibrate", str(table), *flags, "-o", str(out))
    assert code == 2
    assert err.strip() == (
        f"error: {table} (run 1): the log does not give the rank count (no device list, and its "
        f"busbw equals its algbw), so nothing is fitted; give {give} to fit it"
    )
    assert not out.exists()
    code, _stdout, err = run("calibrate", str(table), "--system", "a100-pcie-pair", "-o", str(out))
    assert code == 0, err
    assert "pcie4.transport_latency" in out.read_text()


def test_calibrate_lists_a_flag_that_replaces_what_the_log_shows() -> None:
    """Guards: --inter ndr on a log of EFA had fitted the network's latency into ndr, the report
    saying the flag replaced what the log shows (line 293 of sweep 06); that is refused now, as
    another GPU is (review DC: EFA's latency had been written as ndr's). A preset whose node is
    the log's, priced with the log's network, is listed as before."""
    log = SWEEPS / "06_allreduce_2node_16xH100_efa.txt"
    code, out, err = run("calibrate", str(log), "--inter", "ndr")
    assert code == 2
    assert "the log ran on another network than ndr, so nothing is fitted" in err
    assert "'Selected Provider is efa' (line 293)" in err
    code, out, err = run("calibrate", str(log))
    assert code == 0, err
    assert "inter =" not in out.split("\nassumed:\n", 1)[1]
    # a preset whose network is not the log's (review BF: --system dgx-h100 on this p5 log had
    # been listed nowhere, and its 32 EFA devices joined to the preset's NDR)
    platform = "the log shows 'Running on p5.48xlarge platform', line 67: the aws-p5 preset"
    code, out, err = run(
        "calibrate", str(log), "--system", "dgx-h100", "--inter", "efa-v2", "--nics-per-node", "32"
    )
    assert code == 0, err
    assumed = " ".join(out.split("\nassumed:\n", 1)[1].split())
    assert f"- system = dgx-h100 (given; {platform}) -" in assumed
    code, out, err = run("nccl-check", str(log), "--system", "dgx-h100")
    assert code == 0, err
    text = " ".join(out.split())
    assert "on 2 x 8 GPUs (dgx-h100) nvlink4 + 8 x ndr per node" in text
    assert f"- system = dgx-h100 [flag]: given by the caller ({platform})" in text
    assert "nics_per_node = 32" not in text
    # the preset the platform names: nothing replaced, so nothing listed (it had been told the
    # GPU suggests dgx-h100)
    code, out, err = run("nccl-check", str(log), "--system", "aws-p5")
    assert (code, "system =" in out) == (0, False)
    assert "nics_per_node = 32 [environment]" in out


def test_nccl_check_names_its_own_report_given_back(tmp_path: Path) -> None:
    """nccl-check's JSON report fed to nccl-check had said 'JSON without nccl-tests results
    (result 1 has no usable timing, dropped)'; check already names the file."""
    report = tmp_path / "report.json"
    code, out, err = run(
        "nccl-check", str(SWEEPS / "06_allreduce_2node_16xH100_efa.txt"), "--format", "json"
    )
    assert code == 0, err
    report.write_text(out)
    code, _, err = run("nccl-check", str(report))
    assert code == 2
    assert err.strip() == (
        f"error: {report}: an nccl-check report (ibcalc nccl-check --format json), "
        "not nccl-tests output"
    )


def _variant(name: str, edit: Any, tmp_path: Path) -> Path:
    """A copy of a published sweep under ``tmp_path``, its text passed through ``edit``."""
    out = tmp_path / name
    out.write_text(edit((SWEEPS / name).read_text(encoding="utf-8")), encoding="utf-8")
    return out


def _facts(path: Path) -> dict[str, Any]:
    code, out, err = run("nccl-check", str(path), "--format", "json")
    assert code == 0, err
    (check,) = json.loads(out)["runs"]
    return check


def test_published_log_variants_read_as_their_originals(tmp_path: Path) -> None:
    """Copies of published logs as users post them: with tabs for spaces the cluster was lost
    (sweep 06: 'ok' became 'bad'); an NCCL_ALGO list was read as Ring alone ('ok' became
    'above'). A list that keeps every algorithm the run used reads as the original; one that
    rules out NVLSTree, which the run used, leaves the tree to the expectation."""
    name = "06_allreduce_2node_16xH100_efa.txt"
    original = _facts(SWEEPS / name)
    tabs = _facts(_variant(name, lambda t: re.sub(r" +", "\t", t), tmp_path))
    assert tabs["verdict"] == original["verdict"]
    assert tabs["cluster"] == original["cluster"]

    def with_algo(value: str) -> Any:
        line = f"worker-0:25:25 [0] NCCL INFO NCCL_ALGO set by environment to {value}\n"
        return lambda t: line + t

    listed = _facts(_variant(name, with_algo("Ring,Tree,NVLS,NVLSTree"), tmp_path))
    assert listed["verdict"] == original["verdict"]
    assert {r["algorithm"] for r in listed["rows"]} == {r["algorithm"] for r in original["rows"]}
    assert "nvlstree" in {r["algorithm"] for r in original["rows"]}
    narrowed = _facts(_variant(name, with_algo("Ring,Tree"), tmp_path))
    assert {r["algorithm"] for r in narrowed["rows"]} == {"ring", "tree"}
    forced = _facts(_variant(name, with_algo("Ring"), tmp_path))
    assert {r["algorithm"] for r in forced["rows"]} == {"ring"}


def test_results_checking_off_does_not_name_the_collective(tmp_path: Path) -> None:
    """With -c 0 every #wrong is N/A, in place too; an old log without its test name was then
    read as an all-to-all (the N/A that only alltoall prints with checking on), and the
    all-gather's verdict went from 'low' to 'above'."""
    name = "08_allgather_2node_16xA100-40GB_net-notstated.txt"

    def unchecked(text: str) -> str:
        lines = []
        for line in text.splitlines():
            if "Collective test" in line or "_perf" in line:
                continue
            fields = line.split()
            if len(fields) == 13 and fields[0].isdigit():
                fields[8] = fields[12] = "N/A"
                line = " ".join(fields)
            lines.append(line)
        return "\n".join(lines) + "\n"

    code, out, _ = run("nccl-check", str(_variant(name, unchecked, tmp_path)), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    assert check["collective"] is None
    assert "alltoall" not in out


def test_a_failed_trailer_makes_the_run_corrupt_and_fails_the_gate(tmp_path: Path) -> None:
    """'Out of bounds values : 12 FAILED' is nccl-tests' own finding of wrong results, the only
    one old logs carry; it was a note, and --min-efficiency 0.2 passed."""
    name = "07_allreduce_2node_16xA100-40GB_net-notstated.txt"
    bad = _variant(
        name,
        lambda t: t.replace("Out of bounds values : 0 OK", "Out of bounds values : 12 FAILED"),
        tmp_path,
    )
    assert _facts(bad)["verdict"] == "corrupt"
    code, _, err = run("nccl-check", str(bad), "--min-efficiency", "0.2")
    assert code == 1
    assert "nccl-tests' own check found wrong results" in err
    code, _, _ = run("nccl-check", str(SWEEPS / name), "--min-efficiency", "0.2")
    assert code == 0


def test_an_unknown_gpu_is_named_where_the_verdict_is_read(tmp_path: Path) -> None:
    """'against a default node, as the log names no node type' when it named an MI250X."""
    name = "01_allreduce_1node_8xMI355X_intranode-rccl.txt"
    log = _variant(
        name, lambda t: t.replace("AMD Radeon Graphics", "AMD Instinct MI250X"), tmp_path
    )
    code, out, _ = run("nccl-check", str(log))
    assert code == 0
    verdict = next(line for line in out.splitlines() if line.startswith("verdict"))
    flat = " ".join(out.split())
    assert "no node rule knows its GPU 'AMD Instinct MI250X'" in flat
    assert "names no node type" not in verdict


def test_a_hostname_shared_by_two_machines_still_counts_two_nodes(tmp_path: Path) -> None:
    """Containers that share a hostname ('worker' on both p5 nodes of sweep 06) read as one
    16-GPU node ('ok' became 'bad'); each GPU's bus id then appears twice under one host name,
    which no single machine prints."""
    name = "06_allreduce_2node_16xH100_efa.txt"
    original = _facts(SWEEPS / name)
    same = _variant(name, lambda t: re.sub(r"test-nccl-worker-[01]", "worker", t), tmp_path)
    check = _facts(same)
    assert check["verdict"] == original["verdict"]
    assert (check["nodes"], check["gpus_per_node"]) == (2, 8)


def test_an_unknown_line_prefix_on_every_line_is_removed(tmp_path: Path) -> None:
    """A log whose every line carries a prefix the reader has no rule for (pdsh's 'node01: ',
    Intel MPI's '[0] ') was refused as 'no nccl-tests result rows found', on a file of 10 rows.
    The prefix in front of the first row is taken from every line that has it, with a note, and
    the check reads as the unprefixed log's."""
    name = "20_alltoall_1node_8xH100_intranode.txt"
    lines = (SWEEPS / name).read_text(encoding="utf-8").splitlines(True)
    plain = _facts(SWEEPS / name)
    for prefix in ("node01: ", "[0] "):
        log = _variant(
            name, lambda t, p=prefix: "".join(p + x for x in t.splitlines(True)), tmp_path
        )
        code, out, err = run("nccl-check", str(log))
        assert (code, err) == (0, "")
        flat = " ".join(out.split())
        assert f"note: the line prefix {prefix.strip()!r} removed from {len(lines)} lines" in flat
        facts = _facts(log)
        assert facts["verdict"] == plain["verdict"]
        times = [r["measured_time_us"] for r in facts["rows"]]
        assert times == [r["measured_time_us"] for r in plain["rows"]]
        assert len(times) == 10


def test_rows_behind_a_prefix_that_leaves_no_table_are_refused(tmp_path: Path) -> None:
    """When the lines read without the prefix hold no table either (a row cut after its
    reduction column), the refusal names the prefix and the line of the row behind it."""
    log = tmp_path / "cut.log"
    log.write_text("node01: starting\nnode01:        8             2     float     sum\n")
    code, _, err = run("nccl-check", str(log))
    assert code == 2
    assert "line 2 holds one behind the prefix 'node01:'" in err
    assert "without that prefix hold no whole result table either" in err
    assert len(err.strip().splitlines()) == 1


def test_a_prefix_is_found_behind_thousands_of_debug_lines(tmp_path: Path) -> None:
    """Sweep 06 prints its table after 2,900 lines of NCCL_DEBUG=INFO output; with Intel MPI's
    '[r] ' for mpirun's '[1,r]<stdout>:' it was refused: the prefix was looked for in the first
    2,000 lines only. It reads as the original, with the note."""
    name = "06_allreduce_2node_16xH100_efa.txt"
    text = (SWEEPS / name).read_text(encoding="utf-8")
    first_row = next(
        i for i, line in enumerate(text.splitlines(), 1) if "     float     sum" in line
    )
    assert first_row > 2000
    original = _facts(SWEEPS / name)
    impi = _variant(name, lambda t: re.sub(r"(?m)^\[1,(\d+)\]<stdout>:", r"[\1] ", t), tmp_path)
    facts = _facts(impi)
    assert (facts["verdict"], facts["cluster"]) == (original["verdict"], original["cluster"])
    assert [r["measured_time_us"] for r in facts["rows"]] == [
        r["measured_time_us"] for r in original["rows"]
    ]
    assert any(n.startswith("the line prefix '[0]' removed from") for n in facts["notes"])


def test_a_row_glued_to_another_rank_s_debug_line_is_read_not_skipped(tmp_path: Path) -> None:
    """Another rank's NCCL INFO line written in front of a row, without a line break, hid the
    row: the whole line was skipped as debug output, unsaid (a slow 64 MiB row vanished and the
    verdict read ok). Glued after the row, it was dropped with a note. Either way the row is
    now read, with a note."""
    name = "11_reducescatter_2node_8xH100_ib.txt"
    text = (SWEEPS / name).read_text(encoding="utf-8")
    lines = text.splitlines(True)
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == [str(64 * 2**20)])
    info = "gcn154:1794508:1794508 [1] NCCL INFO Connected all rings"
    original = _facts(SWEEPS / name)
    for glue, words in (
        (lambda row: info + row, "had other output in front of it"),
        (lambda row: row.rstrip("\n") + info + "\n", "had other output after it"),
    ):
        glued = [*lines[:at], glue(lines[at]), *lines[at + 1 :]]
        log = _variant(name, lambda t, g=glued: "".join(g), tmp_path)
        facts = _facts(log)
        assert [(r["size_bytes"], r["measured_time_us"]) for r in facts["rows"]] == [
            (r["size_bytes"], r["measured_time_us"]) for r in original["rows"]
        ]
        assert any(f"row at line {at + 1} {words}" in n for n in facts["notes"])


def test_sweeps_of_several_reductions_in_one_table_are_not_called_erratic(tmp_path: Path) -> None:
    """nccl-tests -o all prints one sweep per reduction in one table. Sweep 07 so printed (sum,
    then prod) was warned 'erratic: busbw falls at larger sizes', its 16 MiB prod row set
    against the 1 GiB sum row before it: the size had started over, not grown."""
    name = "07_allreduce_2node_16xA100-40GB_net-notstated.txt"
    lines = (SWEEPS / name).read_text(encoding="utf-8").splitlines(True)
    rows = [i for i, line in enumerate(lines) if re.match(r"^\s*\d+\s+\d+\s+float\s+sum\s", line)]
    block = [lines[i].replace(" sum ", " prod") for i in rows]
    both = [*lines[: rows[-1] + 1], *block, *lines[rows[-1] + 1 :]]
    log = _variant(name, lambda t: "".join(both), tmp_path)
    facts = _facts(log)
    assert len(facts["rows"]) == 2 * len(_facts(SWEEPS / name)["rows"])
    assert not any("busbw falls at larger sizes" in f["cause"] for f in facts["findings"])


def test_a_log_pasted_with_non_breaking_spaces_reads_as_the_original(tmp_path: Path) -> None:
    """Sweep 11 pasted through a page that turned its spaces into U+00A0: the rows still split,
    but the GPU name ('NVIDIA\\xa0H100'), the NCCL lines and the trailer no longer matched, and
    the verdict went from ok to bad (51%) against a default node."""
    name = "11_reducescatter_2node_8xH100_ib.txt"
    text = (SWEEPS / name).read_text(encoding="utf-8")
    original = _facts(SWEEPS / name)
    pasted = _facts(_variant(name, lambda t: t.replace(" ", "\u00a0"), tmp_path))
    assert (pasted["verdict"], pasted["cluster"]) == (original["verdict"], original["cluster"])
    assert f"{text.count(' ')} non-breaking spaces read as spaces" in pasted["notes"]


def test_a_log_pasted_twice_says_its_second_run_repeats_the_first(tmp_path: Path) -> None:
    """Sweep 07 pasted twice into one file was judged as two runs without a word (calibrate
    fits such a repeat once and says so)."""
    name = "07_allreduce_2node_16xA100-40GB_net-notstated.txt"
    code, out, _ = run("nccl-check", str(_variant(name, lambda t: t + "\n" + t, tmp_path)))
    assert code == 0
    flat = " ".join(out.split())
    assert flat.count("note: every row repeats run 1's (the same sizes and times)") == 1
    single = run("nccl-check", str(SWEEPS / name))[1]
    assert "repeats run" not in single


def test_a_network_taken_from_the_preset_says_how_many_nics(tmp_path: Path) -> None:
    """Sweep 07 states no network: hdr is the dgx-a100 preset's, and so is its NIC count, which
    the assumption did not give (JSON nics_per_node 8, with no word where it came from)."""
    from ibcalc.catalogue.load import find_system, load_catalogue

    nics = find_system(load_catalogue(use_env=False), "dgx-a100").nics_per_node
    facts = _facts(SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt")
    assert facts["nics_per_node"] == nics
    (inter,) = [a for a in facts["assumptions"] if a["field"] == "inter"]
    assert f"hdr, {nics} per node, assumed from the dgx-a100 preset" in inter["evidence"]


def test_calibrate_says_which_rows_are_no_measurement(tmp_path: Path) -> None:
    """Sweep 13 with every time set to 0 us: calibrate had said 'no run has rows of 64 KiB or
    less or of 64 MiB or more to fit' of a log full of them; it says they hold no time."""
    lines = []
    for line in (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text().splitlines():
        fields = line.split()
        if fields[:1] and fields[0].isdigit() and len(fields) == 13:
            fields[5] = fields[9] = "0.00"
            line = "  ".join(fields)
        lines.append(line)
    zeros = tmp_path / "zeros.txt"
    zeros.write_text("\n".join(lines) + "\n")
    code, out, err = run("calibrate", str(zeros), "-o", str(tmp_path / "site.yaml"))
    assert code == 2
    assert out == ""
    assert err.startswith("error: no row to fit: the ")
    assert "rows of the fitted sizes (64 KiB or less, 64 MiB or more) are no measurements: " in err
    assert " with a time of 0 us (lines " in err
    assert not (tmp_path / "site.yaml").exists()


def test_nccl_check_names_the_override_files_it_applies(tmp_path: Path) -> None:
    """A --cost-params file changed the verdict (sendrecv 122 % -> 109 % in QA) without a word
    in the table or JSON, and a --catalogue file was listed as a default. Both are the caller's."""
    override = tmp_path / "site.cost-params.yaml"
    override.write_text(
        "schema: ibcalc-cost-params/1\n"
        "calibrated:\n"
        "  p2p_efficiency:\n"
        "    value: 1.0\n"
        "    derived_by: tests/cli/test_logs_commands.py::test\n"
        "    rows: none\n"
    )
    catalogue = tmp_path / "site.yaml"
    catalogue.write_text("schema: ibcalc-catalogue/1\nlinks: []\n")
    log = str(SWEEPS / "21_sendrecv_1node_8xH100_intranode.txt")
    args = ["nccl-check", log, "--format", "json"]
    code, out, _ = run(*args, "--cost-params", str(override), "--catalogue", str(catalogue))
    assert code == 0
    said = json.loads(out)["runs"][0]["assumptions"]
    assert {
        "field": "cost_params",
        "value": str(override),
        "source": "flag",
        "evidence": "laid over the built-in cost parameters",
    } in said
    loaded = [a for a in said if str(a["evidence"]).startswith("catalogue overrides loaded: ")]
    assert [a["source"] for a in loaded] == ["flag"]
    # p2p_efficiency 1.0 (the built-in 0.89) makes the expected sendrecv faster
    _, plain, _ = run(*args)
    base = json.loads(plain)["runs"][0]["rows"][-1]["expected_time_us"]
    calibrated = json.loads(out)["runs"][0]["rows"][-1]["expected_time_us"]
    assert calibrated < base
    assert not any(a["field"] == "cost_params" for a in json.loads(plain)["runs"][0]["assumptions"])


def test_fewer_nics_than_the_named_instance_has_stay_a_fault_to_find(tmp_path: Path) -> None:
    """aws-ofi-nccl names the instance (p5.48xlarge: 32 EFA NICs) and the NICs it found. A log
    whose provider found 16 of them, its large rows 1.38x slow, read 'ok' against 16 NICs (the
    expectation followed the fault); the same timings against 32 name half the NICs missing.
    The expectation keeps the instance's count and says what the log found."""
    text = (SWEEPS / "06_allreduce_2node_16xH100_efa.txt").read_text(encoding="utf-8")
    assert text.count("found 32 nics") == 16  # one line per rank
    log = tmp_path / "p5_found16.txt"
    log.write_text(text.replace("found 32 nics", "found 16 nics"), encoding="utf-8")
    code, out, _ = run("nccl-check", str(log), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    assert check["nics_per_node"] == 32
    (nics,) = [a for a in check["assumptions"] if a["field"] == "nics_per_node"]
    assert nics["evidence"].startswith("a p5.48xlarge has 32 (line 67); aws-ofi-nccl found 16 (")
    # the healthy run itself (large rows as published) still reads ok against 32
    assert check["verdict"] == "ok"
    # a run whose provider found all 32 says so as before
    code, out, _ = run(
        "nccl-check", str(SWEEPS / "06_allreduce_2node_16xH100_efa.txt"), "--format", "json"
    )
    (whole,) = json.loads(out)["runs"]
    (found,) = [a for a in whole["assumptions"] if a["field"] == "nics_per_node"]
    assert found["evidence"].startswith("'Selected Provider is efa (found 32 nics)'")


def test_a_log_without_its_device_list_takes_nccls_node_count(tmp_path: Path) -> None:
    """Sweep 12 (2 x 4 H100) with its '#' lines stripped keeps NCCL's INFO lines ('nRanks 8
    nNodes 2 localRanks 4'): it had been read as one node of 8 GPUs on a default DGX H100 and
    its all-gather called an NVLink fault (26 % of the expected busbw)."""
    text = (SWEEPS / "12_allgather_2node_8xH100_ib.txt").read_text(encoding="utf-8")
    stripped = "".join(
        line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("#")
    )
    log = tmp_path / "no_hash.txt"
    log.write_text(stripped, encoding="utf-8")
    code, out, _ = run("nccl-check", str(log), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    assert (check["nodes"], check["gpus_per_node"]) == (2, 4)
    (nodes,) = [a for a in check["assumptions"] if a["field"] == "nodes"]
    assert nodes["evidence"].startswith(
        "NCCL's communicator line says nNodes 2 localRanks 4 (line "
    )
    assert nodes["evidence"].endswith("); the log has no device list")


def test_an_in_place_column_slower_at_consecutive_sizes_is_systematic(tmp_path: Path) -> None:
    """Sweep 06 (2 x p5) with its in-place times 3x from 1 MiB up: every large row still reads
    ok (the verdict judges out-of-place), and the one finding had called it erratic, 'a noisy
    neighbour', listing 5 of the 15 sizes. It is systematic, and the evidence counts the rest."""
    log = _p5_times_scaled(tmp_path / "inplace3x.txt", 2**20, 2**34, (9,), 3)
    code, text, _ = run("nccl-check", str(log), "--format", "json")
    assert code == 0
    (check,) = json.loads(text)["runs"]
    (found,) = [f for f in check["findings"] if f["kind"] == "erratic"]
    assert found["cause"].startswith(
        "in-place runs more than 2x slower than out-of-place at every one of the 15 sizes from "
        "1 MiB to 16 GiB: systematic, not interference"
    )
    assert found["evidence"][-1] == "and 10 more sizes"
    # the published log itself has no such finding
    code, text, _ = run(
        "nccl-check", str(SWEEPS / "06_allreduce_2node_16xH100_efa.txt"), "--format", "json"
    )
    (plain,) = json.loads(text)["runs"]
    assert not [f for f in plain["findings"] if f["kind"] == "erratic"]


def test_rows_too_fast_for_a_nic_count_below_the_logs_name_the_flag() -> None:
    """Sweep 12 (2 x 4 H100, channels over 4 NICs a node) judged with --nics-per-node 1: its
    large rows run 4x what one NIC can carry and the run reads 'corrupt', 'no measurement of
    this cluster'; nothing had said that the log shows 4 NICs and the flag says 1."""
    log = str(SWEEPS / "12_allgather_2node_8xH100_ib.txt")
    code, out, _ = run("nccl-check", log, "--nics-per-node", "1", "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    assert check["verdict"] == "corrupt"
    (found,) = [f for f in check["findings"] if f["kind"] == "implausible_timing"]
    # the 8 GiB row's 76968 us as the table prints it (':.4g' had printed 7.697e+04)
    assert found["evidence"][0].startswith("8 GiB: 76,968 us, busbw 97.7 GB/s against")
    assert found["evidence"][-1] == (
        "the log shows 4 NICs per node (channels over 4 network devices, first at line 186) "
        "where the expectation has 1: check --nics-per-node"
    )


def test_a_what_if_that_moves_no_time_is_not_listed(tmp_path: Path) -> None:
    """Sweep 10 (2 x 4 H100 on Snellius, PCIe Gen5 hosts, NDR200 NICs) cut after its 512 MiB
    row: the network finding had listed 're-run with host_pcie=pcie4: 139.4 GB/s (does not
    fit)', the expectation's own figure: a Gen4 x16 slot carries an NDR200 NIC's 24.4 GB/s, so
    that re-run moves no time and tests nothing. Gen3 (half Gen4's rate) binds and is listed."""
    lines = (SWEEPS / "10_allreduce_2node_8xH100_ib.txt").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.txt"
    cut.write_text("".join(lines[:404]) + lines[404][:60] + "\n")
    code, out, _ = run("nccl-check", str(cut), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    (found,) = [f for f in check["findings"] if f["kind"] == "low_bandwidth"]
    reruns = [e.split(":")[0] for e in found["evidence"] if e.startswith("re-run with")]
    assert reruns == ["re-run with host_pcie=pcie3", "re-run with intra=pcie5"]


def test_low_first_large_sizes_under_the_size_before_are_a_dip_not_a_late_ramp(
    tmp_path: Path,
) -> None:
    """Sweep 06 (2 x p5) with its 64-256 MiB times doubled: busbw at 64 MiB (105 GB/s) falls
    under 32 MiB's (138 GB/s), and the finding had called it 'busbw ramps up later than the
    model expects ... not a configuration fault'. A ramp never falls: it is a dip. The published
    2 x DGX A100 all-gather (sweep 08), 1.6 % under its 32 MiB busbw at 64 MiB, stays a ramp."""
    # out-of-place and in-place times
    log = _p5_times_scaled(tmp_path / "dip.txt", 2**26, 2**28, (5, 9), 2)
    code, text, _ = run("nccl-check", str(log), "--format", "json")
    assert code == 0
    (check,) = json.loads(text)["runs"]
    causes = [f["cause"] for f in check["findings"] if f["kind"] == "low_bandwidth"]
    assert any("a dip, not a late ramp" in c for c in causes)
    assert not any("ramps up later" in c for c in causes)
    alcf = _one_run(SWEEPS / "08_allgather_2node_16xA100-40GB_net-notstated.txt")
    assert any("ramps up later" in f["cause"] for f in alcf["findings"])


def test_low_large_sizes_then_a_step_up_are_no_late_ramp(tmp_path: Path) -> None:
    """Sweep 06 (2 x p5) with its 64-512 MiB times x 1.6: busbw 131, 179, 214, 245 GB/s, then
    440 GB/s at 1 GiB, 1.80x in one doubling after 1.14x in the one before. A start-up cost
    makes busbw rise less at each doubling, never more, so it is a step (flagged), not the
    late ramp ('not a configuration fault') it had been called (review BF). The published runs
    rise at most 1.30x per doubling at such a point; 08's late ramp stays one."""
    log = _p5_times_scaled(tmp_path / "step.txt", 2**26, 2**29, (5, 9), 1.6)
    check = _one_run(log)
    assert (check["verdict"], check["flagged"]) == ("low", True)
    (found,) = [f for f in check["findings"] if f["kind"] == "low_bandwidth"]
    assert found["severity"] == "warning"
    # 439.8 / 244.8 GB/s = 1.80 per doubling, 244.8 / 214.5 = 1.14
    assert (
        "steps up 1.80x per doubling of the size from 512 MiB to 1 GiB, after 1.14x"
        in (found["cause"])
    )
    assert "ramps up later" not in found["cause"]
    alcf = _one_run(SWEEPS / "08_allgather_2node_16xA100-40GB_net-notstated.txt")
    assert any("ramps up later" in f["cause"] for f in alcf["findings"])


def test_a_run_between_two_named_causes_is_flagged_not_inside_the_band(tmp_path: Path) -> None:
    """Sweep 06 (2 x p5) slowed 1.25x from 1 MiB is named PCIe Gen4 (its re-run 3.6 % off),
    slowed 1.35x NVLS-tree off; slowed 1.3x, between the two, it had read 'inside the model's
    error band ... not judged a fault': PCIe Gen4's re-run was 7.7 % off (over half the 15 %
    tolerance), and the run counted as slower than a named fault only 7.5 % below one. It is
    slower than PCIe Gen4 would leave it (353 GB/s), so it is flagged and the cause named."""
    log = _p5_times_scaled(tmp_path / "slow13.txt", 2**20, 2**34, (5, 9), 1.3)
    check = _one_run(log)
    low = [f for f in check["findings"] if f["kind"] == "low_bandwidth"]
    assert low[0]["severity"] == "warning"
    assert low[0]["hypothesis"] == "host_pcie=pcie4"
    assert 0.075 < low[0]["fit_error"] <= 0.15
    assert not any("inside the model's error band" in f["cause"] for f in low)


def test_a_log_without_its_ngpus_line_takes_gpus_per_process_from_its_pids(
    tmp_path: Path,
) -> None:
    """Sweep 01 (1 x 8 MI355X, one process driving the 8 GPUs: -g 8) without its 'nThread ...
    nGpus 8' line: its device list still shows one Pid for the 8 ranks. It had been judged as
    one process per GPU, with no gpus_per_process listed and the launch floor blamed on 'a
    launcher, container or driver overhead'."""
    text = (SWEEPS / "01_allreduce_1node_8xMI355X_intranode-rccl.txt").read_text("utf-8")
    lines = text.splitlines(keepends=True)
    assert sum("nGpus" in line for line in lines) == 1
    log = tmp_path / "no_ngpus.txt"
    log.write_text("".join(line for line in lines if "nGpus" not in line), encoding="utf-8")
    code, out, _ = run("nccl-check", str(log), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    (gpp,) = [a for a in check["assumptions"] if a["field"] == "gpus_per_process"]
    assert gpp["value"] == 8
    assert gpp["evidence"].startswith(
        "the header gives no usable nGpus; every process in the device list drives 8 ranks "
        "(one Pid per 8 ranks, lines "
    )
    # the same as the whole log, which states nGpus 8
    whole = _one_run(SWEEPS / "01_allreduce_1node_8xMI355X_intranode-rccl.txt")
    assert whole["verdict"] == check["verdict"]


def _p5_times_scaled(
    log: Path, low: int, high: int, columns: tuple[int, ...], factor: float
) -> Path:
    """Sweep 06 (2 x p5) written to ``log`` with the time ``columns`` of its rows of ``low`` to
    ``high`` bytes times ``factor``. A row's cells: size count type redop root | out-of-place
    time (5) algbw busbw #wrong | in-place time (9) algbw busbw #wrong."""
    out = []
    for line in (SWEEPS / "06_allreduce_2node_16xH100_efa.txt").read_text("utf-8").splitlines():
        prefix, _, row = line.rpartition("<stdout>:")
        cells = row.split()
        if len(cells) == 13 and cells[0].isdigit() and low <= int(cells[0]) <= high:
            for i in columns:
                cells[i] = f"{float(cells[i]) * factor:.1f}"
            line = f"{prefix}<stdout>:  " + "  ".join(cells)
        out.append(line)
    log.write_text("\n".join(out) + "\n", encoding="utf-8")
    return log


def test_a_late_ramp_under_a_low_run_is_not_bad() -> None:
    """Sweep 22 (10 x 8 H100, published healthy) at 82 % median: its 64 MiB row at 53 %, under
    the 60 % 'bad' threshold, climbs through 67 and 81 % to 87 % at 512 MiB, and no larger row
    is under 60 %. The run had read 'bad' from that one row beside a network 'below the
    catalogue's figure, not broken'; the ramp row counts as low."""
    log = SWEEPS / "22_allreduce_10node_80xH100_net-notstated.txt"
    check = _one_run(log)
    assert check["verdict"] == "low"
    rows = {r["size_bytes"]: r for r in check["rows"]}
    assert [round(100 * rows[2**k]["efficiency"]) for k in (26, 27, 28, 29)] == [53, 68, 81, 87]
    assert rows[2**26]["verdict"] == "low"
    ramp = [f for f in check["findings"] if "ramps up later than the model expects" in f["cause"]]
    assert [f["lines"] for f in ramp] == [[93]]
    assert "1 row of a late ramp (line 93) counts as low, not bad: not a fault" in check["notes"]


def _with_busbw(log: Path, source: Path, busbw_GBps: dict[int, float], factor: float) -> Path:
    """``source`` written to ``log`` with the rows of the sizes in ``busbw_GBps`` timed for
    that busbw (both columns; time = size x ``factor`` / busbw; the rates left as printed)."""
    out = []
    for line in source.read_text("utf-8").splitlines():
        cells = line.split()
        if len(cells) == 13 and cells[0].isdigit() and int(cells[0]) in busbw_GBps:
            us = int(cells[0]) * factor / busbw_GBps[int(cells[0])] / 1e3
            cells[5] = cells[9] = f"{us:.1f}"
            line = "  ".join(cells)
        out.append(line)
    log.write_text("\n".join(out) + "\n", encoding="utf-8")
    return log


def test_a_ramp_is_the_smallest_large_sizes_only(tmp_path: Path) -> None:
    """Sweep 22 (80 ranks: busbw = algbw x 2 x 79/80) with 64 MiB-2 GiB climbing from 141 to
    220 GB/s, 47-57 % of the model, and 4-16 GiB at 340 GB/s (88 %): 6 of 9 large sizes under
    60 % had been called 'a late ramp, not a fault' and the verdict 'low' beside an error
    finding (a review). A ramp is a minority of the large sizes: these stay bad."""
    climb = {2**27: 150.0, 2**28: 165.0, 2**29: 180.0, 2**30: 200.0, 2**31: 220.0}
    flat = {2**32: 340.0, 2**33: 340.0, 2**34: 340.0}
    source = SWEEPS / "22_allreduce_10node_80xH100_net-notstated.txt"
    check = _one_run(_with_busbw(tmp_path / "long.txt", source, climb | flat, 2 * 79 / 80))
    assert check["verdict"] == "bad"
    assert not [f for f in check["findings"] if "ramps up later" in f["cause"]]
    bad = [r["size_bytes"] for r in check["rows"] if r["verdict"] == "bad"]
    assert bad == [2**26, *climb]


def test_a_run_slower_than_the_expectation_s_own_what_if_is_flagged(tmp_path: Path) -> None:
    """Fixture 12 (2 x 1 GH200 over Slingshot, 2 ranks: busbw = algbw) with its rows from
    1 MiB at 1/1.5 of the published busbw: every re-run the model makes is slower or equal to
    the expectation, and a what-if that moves no time (a PCIe generation the one NIC does not
    feel) is the expectation itself, which the run is slower than: flagged. Dropping such
    what-ifs from the scoring, not only from the listing, had made it 'not judged a fault'
    (a review)."""
    source = FIXTURES / "12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt"
    busbw = {}
    for line in source.read_text("utf-8").splitlines():
        cells = line.split()
        if len(cells) == 13 and cells[0].isdigit() and int(cells[0]) >= 2**20:
            busbw[int(cells[0])] = float(cells[7]) / 1.5
    log = _with_busbw(tmp_path / "slow.txt", source, busbw, 1.0)
    flags = ["--system", "alps-gh200", "-N", "2", "-g", "1", "--nics-per-node", "1"]
    code, out, _ = run(
        "nccl-check", str(log), *flags, "--inter", "slingshot-11", "--no-nvls", "--format", "json"
    )
    assert code == 0
    (check,) = json.loads(out)["runs"]
    top = check["findings"][0]
    assert (top["kind"], top["severity"]) == ("low_bandwidth", "warning")
    assert top["cause"].startswith("less than one NIC's worth of network bandwidth per node")


def test_a_log_naming_the_socket_transport_shows_the_network(tmp_path: Path) -> None:
    """Sweep 12 (2 x 4 H100 on verbs) as NCCL prints it over its TCP socket transport:
    'the log does not show the network' had been said below the finding quoting 'Using network
    Socket', and the socket's own diagnosis of rows at a tenth of the rate put at low confidence
    for that."""
    text = (SWEEPS / "12_allgather_2node_8xH100_ib.txt").read_text("utf-8")
    assert text.count("Using network IB") == 8
    text = text.replace("Using network IB", "Using network Socket").replace(
        "via NET/IB/", "via NET/Socket/"
    )
    out = []
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 13 and cells[0].isdigit() and int(cells[0]) >= 64 * 2**20:
            for i in (5, 9):  # both times, 10x (the log's rates then disagree: it reads times)
                cells[i] = f"{float(cells[i]) * 10:.0f}"
            line = "  ".join(cells)
        out.append(line)
    log = tmp_path / "socket.txt"
    log.write_text("\n".join(out) + "\n", encoding="utf-8")
    check = _one_run(log)
    (assumed,) = [f for f in check["findings"] if f["kind"] == "network_assumed"]
    assert assumed["cause"].startswith(
        "the log shows NCCL's TCP socket transport (line 62), which no catalogue link models: "
        "the expectation assumes 4 x ndr200 per node"
    )
    top = check["findings"][0]
    assert top["cause"].startswith("less than one NIC's worth of network bandwidth per node")
    assert top["confidence"] == "medium"


def _one_run(log: Path) -> dict[str, Any]:
    """nccl-check's JSON record of the one run in ``log``."""
    code, out, _ = run("nccl-check", str(log), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    assert isinstance(check, dict)
    return check


def test_a_design_without_gpus_per_node_leaves_it_to_the_log(tmp_path: Path) -> None:
    """--design gives nccl-check the node shape: a design naming only its system (and 32 nodes,
    which a log of 2 nodes does not use) had set gpus_per_node to nothing, listed as
    'gpus_per_node [flag]: given by the caller' with no value; the log's 8 ranks per host are
    read instead, and the design's system stays the caller's."""
    design = tmp_path / "a100.yaml"
    design.write_text(
        "name: a100\nnodes: 32\nsystem: dgx-a100\nrequirements:\n"
        "  - allreduce: {size: 1GB, max_time: 40ms}\n",
        encoding="utf-8",
    )
    log = SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt"
    code, out, _ = run("nccl-check", str(log), "--design", str(design), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    by_field = {a["field"]: a for a in check["assumptions"]}
    assert (by_field["gpus_per_node"]["value"], by_field["gpus_per_node"]["source"]) == (8, "log")
    # the design's values are the design's, not flags "given by the caller", and its node
    # count is said not to be used (a hostile-input review)
    assert (by_field["system"]["value"], by_field["system"]["source"]) == ("dgx-a100", "design")
    assert by_field["system"]["evidence"] == "from the design file a100.yaml (system)"
    # a design without a fabric section states no oversubscription (it had been listed as
    # 'oversubscription = 1.0 [design] (fabric.oversubscription)': a review)
    assert by_field.get("oversubscription", {}).get("source") != "design"
    assert by_field["nodes"]["evidence"].endswith(
        "; the design's 32 nodes not used: a check judges the run as it ran"
    )
    assert (check["nodes"], check["gpus_per_node"]) == (2, 8)
    # a design whose system the log contradicts is named as the design's in the advice (it had
    # said 're-run without --system' to a caller who gave none)
    design.write_text("name: p5\nnodes: 2\nsystem: aws-p5\n", encoding="utf-8")
    code, out, _ = run("nccl-check", str(log), "--design", str(design))
    assert "re-run without a100.yaml's system, or with --system dgx-a100" in out
    assert "re-run without --system" not in out


def test_a_design_of_the_logs_node_count_is_not_said_to_be_unused(tmp_path: Path) -> None:
    """The design's node count is said not to be used only where it differs from the log's."""
    design = tmp_path / "two.yaml"
    design.write_text("name: two\nnodes: 2\nsystem: dgx-a100\n", encoding="utf-8")
    log = SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt"
    code, out, _ = run("nccl-check", str(log), "--design", str(design), "--format", "json")
    assert code == 0
    (check,) = json.loads(out)["runs"]
    nodes = next(a for a in check["assumptions"] if a["field"] == "nodes")
    assert "not used" not in nodes["evidence"]


def test_calibrate_lists_a_designs_values_as_the_designs(tmp_path: Path) -> None:
    """calibrate --design lists the design's values as the design's, as nccl-check does: its
    system had read 'system = aws-p5 (given; ...)' as if a flag, and its node count was said
    unused because 'a check judges the run as it ran'; a refusal's advice names the design's
    key, where it had said 're-run without --system' to a caller who gave none."""
    design = tmp_path / "a100.yaml"
    design.write_text("name: a100\nnodes: 32\nsystem: dgx-a100\n", encoding="utf-8")
    log = SWEEPS / "07_allreduce_2node_16xA100-40GB_net-notstated.txt"
    code, out, _ = run("calibrate", str(log), "--design", str(design))
    assert code == 0
    assert "  - system = dgx-a100 (from the design file a100.yaml's system)\n" in out
    assert "(given" not in out
    assert "the design's 32 nodes not used: calibrate fits the run as it ran" in " ".join(
        out.split()
    )
    design.write_text("name: p5\nnodes: 2\nsystem: aws-p5\n", encoding="utf-8")
    code, _, err = run("calibrate", str(log), "--design", str(design))
    assert code == 2
    assert err.strip().endswith("re-run without a100.yaml's system, or with --system dgx-a100")
    # the same refusal for the flag names the flag
    code, _, err = run("calibrate", str(log), "--system", "aws-p5")
    assert err.strip().endswith("re-run without --system, or with --system dgx-a100")


def test_a_designs_values_are_listed_in_a_fixed_order() -> None:
    """The [design] lines had come in an order that changed from run to run (a set's); they
    follow ClusterSpec's fields now."""
    from ibcalc.cluster.spec import ClusterSpec

    design = Path(__file__).resolve().parents[2] / "examples" / "roce-400g-2to1.yaml"
    log = SWEEPS / "06_allreduce_2node_16xH100_efa.txt"
    code, out, err = run("nccl-check", str(log), "--design", str(design), "--format", "json")
    # the design's MI300X node is not the log's H100s: reported, and exit 2 for the value the
    # log contradicts
    assert code == 2
    # (the preset the log's platform names, p5.48xlarge: review CO; dgx-h100 had been advised)
    assert err.strip().endswith(
        "re-run without roce-400g-2to1.yaml's system, or with --system aws-p5"
    )
    (check,) = json.loads(out)["runs"]
    fields = [a["field"] for a in check["assumptions"] if a["source"] == "design"]
    order = list(ClusterSpec.model_fields)
    assert len(fields) >= 4
    assert fields == sorted(fields, key=order.index)


def test_a_designs_value_the_log_contradicts_names_the_logs() -> None:
    """A DGX H100 SuperPOD design given to the 2 x p5 run replaces its EFA and its instance:
    said as the design's alone, where --inter ndr and --system dgx-h100 name what the log shows
    (review CO); both now do, once."""
    design = Path(__file__).resolve().parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    log = SWEEPS / "06_allreduce_2node_16xH100_efa.txt"
    code, out, _ = run("nccl-check", str(log), "--design", str(design), "--format", "json")
    assert code == 0  # judged against the design, as asked: low, no gate
    (check,) = json.loads(out)["runs"]
    said = {a["field"]: a["evidence"] for a in check["assumptions"] if a["source"] == "design"}
    assert said["inter"] == (
        "from the design file dgx-h100-superpod-su-ndr.yaml (inter (or fabric.link)); the log "
        "shows 'Selected Provider is efa', line 293"
    )
    assert said["system"].endswith(
        "(system); the log shows 'Running on p5.48xlarge platform', line 67: the aws-p5 preset"
    )
    assert said["sharp"] == "from the design file dgx-h100-superpod-su-ndr.yaml (fabric.sharp)"
    # calibrate fits nothing into the design's NDR from a run on EFA (review DC: EFA's latency
    # had been written as ndr's), and names the design's keys to drop (as its own list words
    # them: review CP)
    code, _, err = run("calibrate", str(log), "--design", str(design))
    assert code == 2
    err = " ".join(err.split())  # as the lines wrap
    assert "the log ran on another network than ndr, so nothing is fitted" in err
    assert (
        "re-run without dgx-h100-superpod-su-ndr.yaml's system and dgx-h100-superpod-su-ndr.yaml's "
        "inter (or fabric.link), or with --system aws-p5"
    ) in err


def test_a_verdict_against_an_assumed_network_says_so_where_it_is_read() -> None:
    """2 x 8 H100 on Google's TCPXO (log06, no NCCL network lines): judged against the 8 x NDR
    of the node rule's dgx-h100 it reads 'bad', and the assumption sat only among the notes; the
    verdict line now says which network was assumed and what to give. With the node named, the
    network is the preset's, and the line says nothing of it."""
    log = str(SWEEPS / "log06_allreduce_2node_16xH100_gcp_a3mega.txt")
    code, out, _ = run("nccl-check", log)
    assert code == 0
    flat = " ".join(out.split())
    verdict = flat[flat.index("verdict:") : flat.index("assumptions:")]
    assert verdict.startswith("verdict: bad")
    assert (
        "; against an assumed network (8 x ndr per node), as the log does not show it: give "
        "--inter (and --nics-per-node) or --system to judge it" in verdict
    )
    code, out, _ = run("nccl-check", log, "--system", "gcp-a3-mega")
    assert code == 0
    flat = " ".join(out.split())
    assert "against an assumed network" not in flat


def test_a_node_made_of_the_links_given_is_not_a_default_node() -> None:
    """Kestrel's 16 x 4 H100 all-gather (log13, a table with no device list) checked with every
    link given (--intra, --inter, --nics-per-node): its verdict had still read 'against a
    default node ... give --system to judge it', with no preset to give."""
    log = str(SWEEPS / "log13_allgather_16node_64xH100_slingshot_kestrel_table_only_crlf.txt")
    flags = ["-N", "16", "-g", "4", "--intra", "nvlink4-mesh4", "--inter", "slingshot-11"]
    code, out, _ = run("nccl-check", log, *flags, "--nics-per-node", "4")
    assert code == 0
    flat = " ".join(out.split())
    assert "against a default node" not in flat
    assert "system [flag]: the log names no GPU (no device list); no preset: the node is the" in (
        flat
    )
    code, out, _ = run("nccl-check", log)
    assert "against a default node, as the log names no node type" in " ".join(out.split())
    # the links without the node's GPU count leave the default node's shape (8 x 8 GPUs): said
    links = ["--intra", "nvlink4", "--inter", "slingshot-11", "--nics-per-node", "4"]
    code, out, _ = run("nccl-check", log, *links)
    assert code == 0
    flat = " ".join(out.split())
    assert "on 8 x 8 GPUs" in flat
    assert "against a default node, as the log names no node type" in flat


def test_an_unjudged_run_is_not_told_to_give_its_network() -> None:
    """4 x 8 A100 (sweep 17, no row of 64 MiB or more, network not in the log): its verdict is
    unknown whatever the network, and the line had told it to give the network to judge it."""
    code, out, _ = run(
        "nccl-check", str(SWEEPS / "17_allreduce_4node_32xA100-40GB_net-notstated.txt")
    )
    assert code == 0
    verdict = next(line for line in out.splitlines() if line.startswith("verdict"))
    assert verdict == "verdict: unknown"


def test_a_results_table_with_its_node_count_given_takes_its_ranks_over_those_nodes(
    tmp_path: Path,
) -> None:
    """Sweep 13's header and table alone (4 ranks of 4 x H100, no device list) checked with
    -N 1 and --intra nvlink4-mesh4: its GPUs per node had been the default node's 8, and the
    check refused ('--gpus-per-node 8: nvlink4-mesh4 ... joins at most 4 GPUs', a flag never
    given; a review). The table's 4 ranks over the 1 node given make the node's 4."""
    lines = (SWEEPS / "13_allreduce_1node_4xH100_intranode.txt").read_text().splitlines()
    table = [
        line
        for line in lines
        if "Rank " not in line
        and (line.startswith("#") or re.match(r"\s+\d+\s+\d+\s+\w+\s+\w+", line))
    ]
    log = tmp_path / "table.txt"
    log.write_text("\n".join(table) + "\n")
    code, out, err = run("nccl-check", str(log), "-N", "1", "--intra", "nvlink4-mesh4")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "gpus_per_node = 4 [log]: the log's 4 ranks over the 1 node given (--nodes)" in flat
    assert "against a default node" not in flat


def test_calibrate_json_names_the_files_it_wrote(tmp_path: Path) -> None:
    """calibrate --format json lists the files the run wrote under `written` (a CI script had
    to know them from its own -o): the link override alone, or with its cost-parameter file
    beside it (2 x p4d on EFA fits a calibrated constant), and none without -o."""
    out = tmp_path / "fit.yaml"
    p4d = str(SWEEPS / "05_allreduce_2node_16xA100-40GB_efa.txt")
    code, text, _ = run("calibrate", p4d, "-o", str(out), "--format", "json")
    assert code == 0
    data = json.loads(text)
    assert data["written"] == [str(out), str(tmp_path / "fit.cost-params.yaml")]
    assert list(data["cost_entries"]) == ["calibrated"]
    assert all(Path(p).is_file() for p in data["written"])
    code, text, _ = run("calibrate", p4d, "--format", "json")
    assert (code, json.loads(text)["written"]) == (0, [])


def test_calibrate_to_stdout_with_constants_is_refused_before_the_report() -> None:
    """-o /dev/stdout with a fit of constants (2 x p4d on EFA fits one) is refused with stdout
    empty, not after a JSON report whose `written` named /dev/stdout (review CF)."""
    import subprocess
    import sys

    p4d = str(SWEEPS / "05_allreduce_2node_16xA100-40GB_efa.txt")
    # a process of its own, whose stdout is a pipe that /dev/stdout names
    done = subprocess.run(
        [sys.executable, "-m", "ibcalc", "calibrate", p4d, "-o", "/dev/stdout", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    code, out, err = done.returncode, done.stdout, done.stderr
    assert (code, out) == (2, "")
    assert err == (
        "error: /dev/stdout: a special file; constants were fitted too, and their override "
        "goes beside the catalogue override: give -o a regular file name\n"
    )


def test_the_help_names_every_exit_2_case() -> None:
    """nccl-check's help had left out a --dtype the log contradicts and a gate with no run to
    judge; calibrate's every refusal but an unreadable file and an overwrite (review DC 7)."""
    code, out, _ = run("nccl-check", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "contradicts --collective, --dtype or --system outright" in text
    assert "a rank count the log does not give" in text
    code, out, _ = run("calibrate", "--help")
    text = " ".join(out.split())
    assert "contradicts --collective, --system or --inter (its GPU or its network) outright" in text
    # the refusals added since (review DK: --inter on a log of another network, a run whose
    # rank count the log does not give)
    assert "or does not give a run's rank count (nothing is fitted)" in text
    assert "when no run can be fitted" in text


def test_a_node_count_given_beside_a_design_is_the_flags() -> None:
    """`--design ... -N 2` had listed `nodes = 2 [design]: 31`, the flag's count tagged as the
    design's with the design's unused 31 as evidence (review DF); it is the flag's, as without
    a design."""
    design = Path(__file__).resolve().parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    log = SWEEPS / "10_allreduce_2node_8xH100_ib.txt"
    listed = []
    for extra in (["--design", str(design)], []):
        code, out, _ = run("nccl-check", str(log), *extra, "-N", "2", "--format", "json")
        assert code == 0
        (check,) = json.loads(out)["runs"]
        listed.append(
            [(a["source"], a["evidence"]) for a in check["assumptions"] if a["field"] == "nodes"]
        )
    assert listed[0] == listed[1] == [("flag", "given by the caller")]


def test_github_format_annotates_a_file_that_cannot_be_checked(tmp_path: Path) -> None:
    """--format github had printed no annotation for a log it could not read (the error went to
    stderr alone, so a pull request showed nothing), where check's github format gives one
    (review DH L4). Each such file is an ::error; the readable ones are reported as before."""
    binary = tmp_path / "bin.log"
    binary.write_bytes(b"\x00\x01binary")
    good = SWEEPS / "13_allreduce_1node_4xH100_intranode.txt"
    code, out, err = run("nccl-check", "--format", "github", str(binary), str(good))
    assert code == 2
    lines = out.splitlines()
    assert lines[0] == (
        f"::error file={binary},title=nccl-check%3A cannot check::{binary}: binary data, not an "
        "nccl-tests log"
    )
    assert lines[-1].startswith(f"nccl-check {good} run 1: ok")
    assert "binary data, not an nccl-tests log" in err
    # a name with an escape code is escaped, as check's annotations are (review DM)
    odd = tmp_path / "b\x1bx.log"
    odd.write_bytes(b"\x00\x01binary")
    code, out, _ = run("nccl-check", "--format", "github", str(odd))
    assert code == 2
    assert "\x1b" not in out
    assert "b\\x1bx.log" in out
    # a run whose log contradicts an option has its finding's annotation alone, not also a
    # 'cannot check' one (review DM)
    code, out, _ = run(
        "nccl-check", "--format", "github", str(SWEEPS / "06_allreduce_2node_16xH100_efa.txt"),
        "--collective", "all_gather",
    )  # fmt: skip
    assert code == 2
    assert "cannot check" not in out


@pytest.mark.parametrize("columns", [60, 70, 80, 100])
def test_nccl_check_assumptions_keep_a_number_with_its_unit(columns: int) -> None:
    """The assumption list had been left to rich's wrapping, which breaks at any space: at 80
    columns sweep 05's "size = count x 4 B x 1" ended a line with "4" and began the next with
    "B". No line of the list now starts with a unit word (``render.stream.UNITS``)."""
    from ibcalc.render.stream import UNITS

    for name in ("05_allreduce_2node_16xA100-40GB_efa.txt", "10_allreduce_2node_8xH100_ib.txt"):
        result = CliRunner().invoke(
            app, ["nccl-check", str(SWEEPS / name)], env={"COLUMNS": str(columns)}
        )
        assert result.exit_code == 0
        lines = result.stdout.splitlines()
        start = lines.index("assumptions:")
        listed = lines[
            start + 1 : next(
                i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")
            )
        ]
        assert len(listed) >= 5
        starts = [line.split()[0] for line in listed if not line.lstrip().startswith("- ")]
        assert not [word for word in starts if word.rstrip(",;:).") in UNITS]


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_calibrate_fitted_parameters_break_no_word(columns: int) -> None:
    """At 60 columns the fitted-parameters table had given the name 9 columns and the note 4:
    'gcp-tcpxo / .transpor / t_latency', '< 2 / std. / err. / : / not / writ / ten' (review EU
    4). Where the table cannot keep every word whole, each parameter is a block: its name, its
    figures (before -> fitted, std. error, rows), its note. Wide enough (80 here), the table
    stays, a name broken after its link's id."""
    log = SWEEPS / "log06_allreduce_2node_16xH100_gcp_a3mega.txt"
    result = CliRunner().invoke(
        app, ["calibrate", str(log), "--system", "gcp-a3-mega"], env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    part = lines[lines.index("fitted parameters") : lines.index("not determined:")]
    assert max(len(line) for line in part) <= columns
    words = " ".join(part).split()
    for name in ("gcp-tcpxo.transport_latency", "gcp-tcpxo.efficiency"):
        assert name in words or (name.split(".")[0] + "." in words and name.split(".")[1] in words)
    assert "written" in words
    assert "writ" not in words
    table = any(line.startswith("parameter ") for line in part)
    assert table is (columns >= 80)
    if not table:
        (at,) = [i for i, line in enumerate(part) if line == "gcp-tcpxo.transport_latency"]
        # the figures as the calibration has them, on one line (json: the same values)
        assert part[at + 1].startswith("  47.7 us -> ")
        assert part[at + 1].endswith(" rows")


def test_stderr_notes_and_the_gate_s_fail_line_wrap_at_columns(tmp_path: Path) -> None:
    """At COLUMNS=60 the FAIL line of --min-efficiency, the note on a log given twice and
    calibrate's 'wrote FILE' had run to 146, 123 and 70+ columns while the report's own notes
    wrapped; they now break as those do (render.stream.unit_wrap: never between a number and
    its unit, a word longer than the line left whole). Without $COLUMNS on a pipe they stay
    one line each, as scripts read them."""
    log = str(SWEEPS / "10_allreduce_2node_8xH100_ib.txt")
    target = tmp_path / "a directory with spaces" / "override.yaml"
    target.parent.mkdir()

    def lines(*args: str) -> tuple[int, list[str]]:
        result = CliRunner().invoke(app, list(args), env={"COLUMNS": "60"})
        return result.exit_code, result.stderr.splitlines()

    def fits(err: list[str]) -> None:
        assert err
        # a longer line is one word, the path with spaces kept whole, or a message's first line:
        # its verdict with the path (each asserted below)
        assert all(
            len(line) <= 60 or " " not in line.strip() or line.strip() == str(target)
            for line in err[1:]
        ), err

    code, err = lines("nccl-check", log, "--min-efficiency", "0.9")
    assert code == 1
    fits(err)
    # the verdict keeps the run's path and number; the lines after it are indented
    assert err[0] == f"FAIL {log} run 1:"
    assert all(line.startswith("  ") and line[2] != " " for line in err[1:])
    assert " ".join(line.strip() for line in err[1:]) == (
        "--min-efficiency 0.9 fails at 64 MiB (83.3% of the expected busbw), "
        "128 MiB (79.6% of the expected busbw), 256 MiB (84.5% of the expected busbw)"
    )
    # a number keeps its unit: no line starts with one
    assert not any(line.startswith("MiB") for line in err)
    again = f"{SWEEPS}/./10_allreduce_2node_8xH100_ib.txt"
    code, err = lines("nccl-check", log, again, "--format", "json")
    assert code == 0
    fits(err)
    assert len(err) > 1
    assert " ".join(x.strip() for x in err) == f"note: {again} is the file {log} again; read once"
    code, err = lines("calibrate", log, "-o", str(target))
    assert code == 0
    fits(err)
    assert err[0] == f"wrote {target}"
    assert err[1].startswith("note: no fitted value was written:")
    # the same lines without $COLUMNS: one each
    wrapped = lines("nccl-check", log, "--min-efficiency", "0.9")[1]
    code, _, err_one = run("nccl-check", log, "--min-efficiency", "0.9")
    assert code == 1
    assert err_one.splitlines() == [" ".join(x.strip() for x in wrapped)]


def test_an_override_of_a_log_without_a_release_says_whose_tuner_priced_it(
    tmp_path: Path,
) -> None:
    """log06 prints no NCCL version: the override's header says the fit was priced with NCCL
    2.30.7's choice, naming the flag that gives the release, --nccl-version (not the library's
    '{nccl_version}' mark, nor the bare field name, which a person reading the file cannot
    type); the library, given no names, names the field plainly."""
    log = SWEEPS / "log06_allreduce_2node_16xH100_gcp_a3mega.txt"
    target = tmp_path / "o.yaml"
    code, _, err = run("calibrate", str(log), "--system", "gcp-a3-mega", "-o", str(target))
    assert code == 0, err
    priced = [x for x in target.read_text().splitlines() if x.startswith("# priced with:")]
    assert priced == [
        "# priced with: tuner_constants = 2.30.7 (the log states no NCCL release: NCCL 2.30.7's "
        "tuner constants choose the algorithm and protocol; --nccl-version gives the run's "
        "release)"
    ]
    from ibcalc.logs.calibrate import write_override

    (run06,) = parse_file(log).runs
    result = calibrate([run06], ClusterSpec(system="gcp-a3-mega"), sources=[log.name])
    (plain,) = write_override(result, tmp_path / "p.yaml")
    assert "; nccl_version gives the run's release)" in plain.read_text()


def test_stderr_notes_keep_a_path_with_spaces_on_one_line(tmp_path: Path) -> None:
    """At COLUMNS=60 the wrapped stderr lines (415cc2f0) broke a path at its spaces, 'x/a
    directory' over 'with spaces/run 10.txt', so it could not be copied from the page; each
    path a line names is now kept whole (on a line of its own where it is the longer)."""
    folder = tmp_path / "a directory with spaces"
    folder.mkdir()
    log = folder / "run 10.txt"
    log.write_text((SWEEPS / "10_allreduce_2node_8xH100_ib.txt").read_text())
    target = folder / "over ride.yaml"

    def err(*args: str) -> list[str]:
        result = CliRunner().invoke(app, list(args), env={"COLUMNS": "60"})
        assert result.exit_code in (0, 1), result.stderr
        return result.stderr.splitlines()

    gate = err("nccl-check", str(log), "--min-efficiency", "0.9")
    assert gate[0] == f"FAIL {log} run 1:"
    written = err("calibrate", str(log), "-o", str(target))
    assert written[0] == f"wrote {target}"
    assert sum(str(target) in line for line in written) == 2, written
    again = err("nccl-check", str(log), f"{folder}/../{folder.name}/{log.name}", "--format", "json")
    assert again[0] == f"note: {folder}/../{folder.name}/{log.name}", again
    assert f"  {log}" in again, again


def test_a_verdict_on_stderr_is_never_alone_on_its_line(tmp_path: Path) -> None:
    """A path wider than the page had left 'FAIL' and 'wrote' alone on the first line of their
    message at COLUMNS=60, the path on the next, so ``grep '^FAIL .* run'`` missed the failed
    run, and the lines after the first began at the margin as a new message would. The verdict
    keeps the path (and FAIL the run's number) on its line, and the rest is indented by two
    spaces."""
    folder = tmp_path / ("d" * 70)
    folder.mkdir()
    log = folder / "10.txt"
    log.write_text((SWEEPS / "10_allreduce_2node_8xH100_ib.txt").read_text())
    gate = CliRunner().invoke(
        app, ["nccl-check", str(log), "--min-efficiency", "0.9"], env={"COLUMNS": "60"}
    )
    assert gate.exit_code == 1
    assert [x for x in gate.stderr.splitlines() if re.match("^FAIL .* run", x)] == [
        f"FAIL {log} run 1:"
    ]
    # 64 MiB (83.3% ...), 128 MiB (79.6% ...), 256 MiB (84.5% ...) below the gate of 0.9
    assert gate.stderr.splitlines()[1:] == [
        "  --min-efficiency 0.9 fails at 64 MiB (83.3% of the",
        "  expected busbw), 128 MiB (79.6% of the expected busbw),",
        "  256 MiB (84.5% of the expected busbw)",
    ]
    target = folder / "override.yaml"
    wrote = CliRunner().invoke(
        app, ["calibrate", str(log), "-o", str(target)], env={"COLUMNS": "60"}
    )
    assert wrote.exit_code == 0
    assert wrote.stderr.splitlines()[0] == f"wrote {target}"
    assert all(x.startswith(("wrote ", "note: ", "  ")) for x in wrote.stderr.splitlines())


def test_calibrate_reports_its_error_as_the_factor_off_either_way() -> None:
    """log13 (16 x 4 H100 all-gather on Slingshot) runs its latency rows about 5x slower than
    predicted: calibrate's 'latency error before' is the factor off either way less one,
    exp(median |ln(measured / expected)|) - 1 over nccl-check's own rows of 64 KiB and less
    (396.8 %), where benchmarks' |predicted / measured - 1| reads the same rows as about 80 %. Both
    had been called "median error"; the report now says which (a QA pass found the two figures)."""
    import math
    import statistics

    log = next(SWEEPS.glob("log13_*.txt"))
    code, out, err = run("nccl-check", str(log), "--system", "alps-gh200", "--format", "json")
    assert code in (0, 1), err
    rows = json.loads(out)["runs"][0]["rows"]
    latency = [r for r in rows if r["size_bytes"] <= 64 * 1024]
    assert len(latency) >= 5
    either_way = math.expm1(
        statistics.median(
            abs(math.log(r["measured_time_us"] / r["expected_time_us"])) for r in latency
        )
    )
    one_way = statistics.median(
        abs(r["expected_time_us"] / r["measured_time_us"] - 1) for r in latency
    )
    assert either_way == pytest.approx(3.968, abs=0.001)
    assert one_way == pytest.approx(0.80, abs=0.01)
    code, out, err = run("calibrate", str(log), "--system", "alps-gh200", "--format", "json")
    assert code == 0, err
    (fit,) = json.loads(out)["runs"]
    assert fit["latency_error_before"] == pytest.approx(either_way, rel=1e-6)
    code, out, err = run("calibrate", str(log), "--system", "alps-gh200")
    assert "396.8% -> " in out
    assert (
        "an error is the factor the prediction is off by, either way, less 1: 5x off reads 400%"
        in (" ".join(out.split()))
    )


@pytest.mark.parametrize("command", ["nccl-check", "calibrate"])
@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("--system", "--system 'no-such' is not a known system"),
        ("--inter", "--inter 'no-such' is not a known link"),
        ("--intra", "--intra 'no-such' is not a known link"),
        ("--host-pcie", "--host-pcie 'no-such' is not a known link"),
    ],
)
def test_an_unknown_name_is_refused_once_before_any_log_is_read(
    command: str, option: str, said: str, tmp_path: Path
) -> None:
    """Wrong whatever the logs say: nccl-check had said it once per log (the same line twice
    for two logs), and both commands had said only a missing file's error beside it."""
    missing = str(tmp_path / "missing.txt")
    code, _, err = run(command, option, "no-such", str(HEALTHY), str(DEGRADED), missing)
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: {said}"), err
