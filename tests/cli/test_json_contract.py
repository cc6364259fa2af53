"""The machine-readable contract of ``--format json``: text a strict parser reads (no NaN,
Infinity or -0.0), byte counts as JSON integers, every value as the table has it.

Byte counts are worked from the model's published shape (Llama 3 70B: 70e9 parameters, 80
layers, 8 KV heads of 128; Meta's model card) and the element widths (bf16: 2 B).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ibcalc.cli import app as APP
from ibcalc.jsonmodel import json_text

runner = CliRunner()

#: Llama 3 70B's parameters, as its model card states them
LLAMA3_70B_PARAMS = 70_000_000_000
#: bytes of one bf16 element
BF16 = 2


def _refuse(constant: str) -> Any:
    raise AssertionError(f"{constant} is not JSON a strict parser reads")


def strict_loads(text: str) -> Any:
    """``text`` parsed as jq and serde would: NaN and Infinity refused."""
    return json.loads(text, parse_constant=_refuse)


def _json(*args: str) -> dict[str, Any]:
    result = runner.invoke(APP, [*args, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = strict_loads(result.stdout)
    return data


def _whole(value: Any, expected: int) -> None:
    """``value`` is the JSON integer ``expected`` (not ``expected.0``)."""
    assert type(value) is int
    assert value == expected


def test_checkpoint_byte_counts_are_integers() -> None:
    data = _json(
        "checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2", "--fabric", "ndr"
    )
    weights = LLAMA3_70B_PARAMS * BF16  # 140 GB of bf16 weights, no optimizer state asked
    _whole(data["weights_bytes"], weights)
    _whole(data["optimizer_bytes"], 0)
    _whole(data["save"]["bytes"], weights)
    _whole(data["restore"]["bytes"], weights)


def test_train_memory_byte_counts_are_integers() -> None:
    data = _json(
        "train", "--model", "llama3-70b", "--fabric", "ndr", "--nodes", "8", "--tp", "8",
        "--pp", "2",
    )  # fmt: skip
    # the weights split over tp 8 x pp 2 = 16 GPUs: 70e9 x 2 B / 16 = 8.75e9 B each
    _whole(data["memory"]["weights_bytes"], LLAMA3_70B_PARAMS * BF16 // 16)
    for key in ("per_gpu_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes"):
        assert type(data["memory"][key]) is int, key


def test_infer_kv_cache_bytes_are_integers() -> None:
    data = _json("infer", "--model", "llama3-70b", "--fabric", "ndr", "--nodes", "1", "--tp", "8")
    # K and V, 80 layers, 8 KV heads of 128, bf16: 2 x 80 x 8 x 128 x 2 B = 327,680 B a token
    per_token = 2 * 80 * 8 * 128 * BF16
    _whole(data["totals"]["kv_bytes_per_token"], per_token)
    # one request's prompt of 1,024 tokens (the default --prompt)
    _whole(data["totals"]["kv_bytes_per_request"], per_token * 1024)
    _whole(data["memory"]["weights_bytes"], LLAMA3_70B_PARAMS * BF16 // 8)


def test_train_compare_memory_is_integer_bytes() -> None:
    data = _json("train", "--model", "llama3-8b", "--fabric", "ndr", "--nodes", "4", "--compare")
    assert data["layouts"]
    assert all(type(layout["memory_per_gpu_bytes"]) is int for layout in data["layouts"])


def test_negative_zero_share_is_written_as_zero() -> None:
    args = ["allreduce", "--fabric", "ndr", "--nodes", "2", "--size", "1GB"]
    result = runner.invoke(APP, [*args, "--cross-leaf", "-0.0", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert "-0.0" not in result.stdout
    data = strict_loads(result.stdout)
    assert data["cross_leaf_fraction"] == 0.0


def test_json_text_writes_strict_json() -> None:
    text = json_text(
        {"size_bytes": 1073741824.0, "kv_bytes_per_token": [2.0, 2.5], "busbw_GBps": 3.0}
        | {"time_s": -0.0}
    )
    assert strict_loads(text) == {
        "size_bytes": 1073741824,
        "kv_bytes_per_token": [2, 2.5],
        "busbw_GBps": 3.0,
        "time_s": 0.0,
    }
    assert '"size_bytes": 1073741824,' in text
    assert '"busbw_GBps": 3.0' in text
    assert "-0.0" not in text


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_json_text_refuses_nan_and_infinity(bad: float) -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        json_text({"busbw_GBps": bad})


def test_negative_zero_option_reads_as_zero_in_the_table() -> None:
    args = ["allreduce", "--fabric", "ndr", "--nodes", "2", "--size", "1GB"]
    result = runner.invoke(APP, [*args, "--cross-leaf", "-0.0"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    assert "--cross-leaf 0 ignored" in result.stdout
    assert "-0 " not in result.stdout


def test_sweep_csv_reads_back_as_numbers() -> None:
    args = ["sweep", "allreduce", "--system", "dgx-a100", "--nodes", "8", "-b", "1G", "-e", "1G"]
    result = runner.invoke(APP, [*args, "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    # the notes go to stderr: stdout is the header and one row, nothing else
    assert result.stderr.startswith("assumption: ")
    header, *rows = csv.reader(io.StringIO(result.stdout))
    assert len(rows) == 1
    row = dict(zip(header, rows[0], strict=True))
    # 1G alone is 1 GiB, as nccl-tests reads it; fp32: 4 B an element
    assert row["size_bytes"] == str(2**30)
    assert row["count"] == str(2**30 // 4)
    assert row["inter"] == "hdr"
    for column in ("time_us", "time_us_range_low", "time_us_range_high", "busbw_GBps"):
        assert float(row[column]) > 0, column
    # a cell holding a comma (near ties the range was widened over) is quoted and reads whole
    assert "," in row["range_covers"]
    assert f'"{row["range_covers"]}"' in result.stdout


def test_json_gate_exit_code_is_the_tables_and_stdout_parses() -> None:
    log = Path(__file__).parents[1] / "logs/fixtures/06_allreduce_2node_16xH100_gcp_a3mega.txt"
    args = ["nccl-check", str(log), "--min-efficiency", "0.9"]
    table = runner.invoke(APP, args)
    as_json = runner.invoke(APP, [*args, "--format", "json"])
    # the run's busbw at 64 MiB and more is below 90 % of the expected: the gate fails
    assert table.exit_code == as_json.exit_code == 1
    data = strict_loads(as_json.stdout)
    assert data["gate"]["min_efficiency"] == 0.9
    assert data["gate"]["passed"] is False
    assert as_json.stderr.strip()
