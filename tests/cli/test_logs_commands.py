"""The ``nccl-check`` and ``calibrate`` commands through the ``ibcalc`` app.

Exit codes (0 ok, 1 gate failed, 2 unreadable input or refused output), stdin, the three output
formats, the plot, and the override file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.cli import app
from ibcalc.logs.calibrate import calibrate
from ibcalc.logs.parse import parse_file

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
    assert "no problem found" in out


def test_degraded_run_fails_the_gate() -> None:
    code, out, err = run("nccl-check", str(DEGRADED), "--min-efficiency", "0.85")
    assert code == 1
    assert "verdict: bad" in out
    assert "not on the RDMA NICs" in out
    # 64 MiB and 128 MiB are the sizes of the bandwidth regime in this log
    assert "FAIL" in err
    assert "67108864 B" in err
    assert "134217728 B" in err


def test_without_a_gate_a_bad_run_exits_0() -> None:
    code, out, _ = run("nccl-check", str(DEGRADED))
    assert code == 0
    assert "likely causes, most likely first" in out


def test_wrong_results_fail_the_gate_at_any_threshold() -> None:
    code, out, err = run("nccl-check", str(WRONG), "--min-efficiency", "0")
    assert code == 1
    assert "data corruption" in out
    assert "#wrong" in err


def test_unreadable_file_exits_2_and_the_others_are_still_checked(tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    code, out, err = run("nccl-check", str(missing), str(HEALTHY))
    assert code == 2
    assert err.startswith("error: ")
    assert "missing.log" in err
    assert "verdict: ok" in out


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
    assert data["schema"] == "ibcalc-nccl-check/1"
    (check,) = data["runs"]
    assert check["flagged"] is True
    assert check["verdict"] == "bad"
    assert [r["size_bytes"] for r in check["rows"]][-1] == 134217728
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
    # 128 MiB: 5.4 GB/s busbw against 112 expected (4.8 %)
    assert lines[-1].endswith("bad, lowest efficiency at 64 MiB and more 5%")


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
    assert "unknown system" in err
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
    code, out, _ = run("nccl-check", str(NGPUS_4), "--format", "json")
    assert code == 0
    assert [(a["value"], a["source"]) for a in _gpus_per_process(out)] == [(4, "log")]
    plain = json.loads(out)["runs"][0]
    causes = " ".join(f["cause"] for f in plain["findings"])
    assert "one process drives 4 GPUs (-g 4; the header says nGpus 4)" in causes
    code, out, _ = run("nccl-check", str(NGPUS_4), "--gpus-per-process", "4", "--format", "json")
    assert code == 0
    assert [(a["value"], a["source"]) for a in _gpus_per_process(out)] == [(4, "log"), (4, "flag")]
    given = json.loads(out)["runs"][0]
    # the 4 serial launches are in the expectation: 4 B measured 17.05 us (line 191), expected
    # about 10 us with one GPU per process, 17 us with four
    assert plain["rows"][0]["measured_time_us"] == 17.05
    assert plain["rows"][0]["expected_time_us"] < 12
    assert given["rows"][0]["expected_time_us"] == pytest.approx(17.05, rel=0.05)
    assert not [f for f in given["findings"] if f["kind"] == "latency"]
    # `-g 1` is given too, though it is the option's default: it is not the log's 4
    code, out, _ = run("nccl-check", str(NGPUS_4), "--gpus-per-process", "1", "--format", "json")
    assert json.loads(out)["runs"][0]["rows"][0]["expected_time_us"] == pytest.approx(
        plain["rows"][0]["expected_time_us"]
    )


def test_collective_flag() -> None:
    code, _, err = run("nccl-check", str(HEALTHY), "--collective", "bogus")
    assert code == 2
    assert "unknown collective" in err


def test_collective_flag_names_the_log_s_collective_once() -> None:
    code, out, _ = run("nccl-check", str(NGPUS_4), "--collective", "alltoall")
    assert code == 0
    assert out.count("all_reduce") == 1
    assert "alltoall (given; the log says all_reduce)" in out
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
    assert data["schema"] == "ibcalc-calibration/1"
    assert {p["name"] for p in data["parameters"]} >= {"nvlink4-mesh4.efficiency"}


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
