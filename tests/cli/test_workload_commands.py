"""The workload commands (``train``, ``infer``, ``checkpoint``) through the ``ibcalc`` app: exit
codes, JSON that parses with the phases shape, one-line errors naming the flags."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from conftest import check_left_out_below, main_error
from ibcalc.catalogue.load import find_link
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import app as APP
from ibcalc.render.stream import UNITS
from ibcalc.workload.memory import TIGHT_FRACTION
from ibcalc.workload.model import find_model

runner = CliRunner()


def _json(*args: str) -> dict[str, Any]:
    result = runner.invoke(APP, [*args, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _error(*args: str) -> str:
    result = runner.invoke(APP, list(args))
    assert result.exit_code == 2, result.stdout
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    return result.stderr


PHASE_KEYS = ["name", "collective", "bytes_per_gpu", "ranks", "tier", "time_s", "time_s_range"]


def _check_phases(data: dict[str, Any]) -> None:
    assert data["phases"]
    for phase in data["phases"]:
        assert list(phase)[: len(PHASE_KEYS)] == PHASE_KEYS
        assert "exposed_s" in phase
        assert phase["tier"] in ("scale-up", "scale-out", "wan", "storage")
    assert "totals" in data


def test_train_json(builtin_catalogue: object) -> None:
    data = _json(
        "train", "--model", "llama3-70b", "--tp", "8", "--dp", "16", "--system", "dgx-h100"
    )
    _check_phases(data)
    assert data["nodes"] == 16
    dp = data["phases"][0]
    assert (dp["name"], dp["collective"], dp["bytes_per_gpu"]) == (
        "dp-allreduce",
        "all_reduce",
        17.5e9,
    )
    # no compute given: everything exposed
    assert data["totals"]["exposed_s"] == pytest.approx(data["totals"]["comm_s"])


def test_train_params_only_and_compressed_gradients() -> None:
    data = _json(
        "train", "--params", "70B", "--dp", "16", "--system", "dgx-h100", "--grad-dtype", "int8"
    )
    # 70e9 x 1 byte, every GPU holds the whole model (tp = pp = 1)
    assert data["phases"][0]["bytes_per_gpu"] == 70e9
    assert data["nodes"] == 2


def test_train_does_not_make_up_a_sequence_length() -> None:
    """Data parallelism alone needs no sequence length: none is given, none is shown (the
    header said '1 x 1 tokens' and the JSON seq_len 1)."""
    args = ["train", "--params", "70B", "--system", "dgx-h100", "--nodes", "2"]
    assert _json(*args)["seq_len"] is None
    out = " ".join(runner.invoke(APP, args).stdout.split())
    assert "1 micro-batch of 1 sequence, length not given)" in out
    assert "tokens" not in out


def test_a_given_sequence_length_is_not_said_to_come_from_the_model() -> None:
    """--seq-len was folded into the model ('llama3-70b (modified)') and then reported as the
    model's own ('sequence length 4096 from llama3-70b (modified)')."""
    base = ["train", "--model", "llama3-70b", "--system", "dgx-h100", "--nodes", "2", "--tp", "8"]
    data = _json(*base, "--seq-len", "4096")
    assert data["seq_len"] == 4096
    assert not any("sequence length" in a for a in data["assumptions"])
    out = " ".join(runner.invoke(APP, [*base, "--seq-len", "4096"]).stdout.split())
    assert "train llama3-70b:" in out
    assert "(modified)" not in out
    assert "1 x 4096 tokens" in out
    # without it, the preset's 8192 is used and said
    assert (
        "sequence length 8192 from llama3-70b (--seq-len to change)" in _json(*base)["assumptions"]
    )


def test_train_table_has_tp_warning() -> None:
    result = runner.invoke(
        APP,
        ["train", "--model", "llama3-70b", "--tp", "16", "--dp", "8", "--system", "dgx-h100"],
    )
    assert result.exit_code == 0, result.stderr
    assert "crosses the 8-GPU scale-up domain" in result.stdout
    assert "tp-allreduce" in result.stdout


@pytest.mark.parametrize("columns", [80, 99])
def test_a_narrow_page_drops_phase_columns_rather_than_cut_a_cell(columns: int) -> None:
    """deepseek-v3 over pp 16 x ep 64: its rows need 100 columns with the algorithm column
    ('dp-allreduce ... nvlstree/Simple'; 101 when rich had cut it to 'nvlstree/Simp…' at 100,
    and 'dp-allred…', '8.75 …' at 80). Every phase's whole total must be printed."""
    argv = ["train", "--model", "deepseek-v3", "--tp", "1", "--pp", "16", "--ep", "64"]
    argv += ["--nodes", "128", "--system", "dgx-h100", "--tflops", "400"]
    result = runner.invoke(APP, argv, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.stderr
    table = result.stdout.split("\n\n\n")[0]
    assert "…" not in table
    data = _json(*argv)
    for phase in data["phases"]:
        assert phase["name"] in table
    # the header says which columns are left: the algorithm goes first, then the tier
    header = next(line for line in table.splitlines() if line.lstrip().startswith("phase"))
    assert "algorithm" not in header
    assert ("tier" in header) is (columns == 99)
    assert "algorithm" in runner.invoke(APP, argv, env={"COLUMNS": "160"}).stdout


def test_train_across_sites_with_distance() -> None:
    data = _json(
        "train",
        "--model",
        "llama3-70b",
        "--tp",
        "8",
        "--dp",
        "16",
        "--system",
        "dgx-h100",
        "--sites",
        "2",
        "--wan",
        "wan-10g",
        "--distance",
        "800km",
        "--backward-time",
        "2s",
    )
    assert data["sites"] == 2
    # the WAN is in the JSON, not only in the assumptions' prose (a script could not tell
    # 800 km from the link's own 1 ms): 800 km x 5 us/km = 4 ms, one link per site
    assert (data["wan"], data["wan_links"], data["wan_latency_s"]) == ("wan-10g", 1, 4e-3)
    assert data["phases"][0]["tier"] == "wan"
    # 800 km of fibre at 5 us/km: 4 ms one way
    assert any("4 ms one way given (a distance or round trip)" in a for a in data["assumptions"])
    assert any("communication-bound" in w for w in data["warnings"])


def test_a_compare_with_no_valid_layout_is_one_refusal() -> None:
    """A model without a sequence length: every one of the 10 layouts of 8 GPUs is refused for
    the same reason. It printed 'no valid layout', the reason 10 times, and exit code 0."""
    result = runner.invoke(
        APP,
        [
            "train",
            "--params",
            "1.5T",
            "--system",
            "dgx-h100",
            "-N",
            "1",
            "--compare",
            "--tflops",
            "400",
        ],
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: no layout of the 10 tried is valid: tensor, pipeline, expert or context "
        "parallelism (and --tflops) need the sequence length (--seq-len)\n"
    )


def test_a_long_pipeline_bubble_prints_plainly() -> None:
    """pp 32 with one micro-batch: the bubble is 31 / 1 = 3100 % of compute; formatted to three
    significant digits it had printed '3.1e+03%'."""
    result = runner.invoke(
        APP,
        [
            "train",
            "--model",
            "llama3-70b",
            "--system",
            "dgx-h100",
            "-N",
            "4",
            "--tp",
            "1",
            "--pp",
            "32",
            "--microbatches",
            "1",
            "--tflops",
            "400",
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert "pipeline bubble   3100% of compute" in result.stdout


def test_train_compare() -> None:
    data = _json(
        "train",
        "--model",
        "llama3-8b",
        "--nodes",
        "2",
        "--system",
        "dgx-h100",
        "--compare",
        "--tflops",
        "400",
    )
    layouts = data["layouts"]
    assert len(layouts) == 15  # ordered factorisations of 16 into tp x pp x dp
    # compute known: ranked by step time, every layout at 16 sequences per step (M = 16 / dp)
    assert data["ranked_by"] == "step_s"
    assert data["global_batch"] == 16
    # those with room in the 80 GiB of an H100 first, then the tight ones (past TIGHT_FRACTION,
    # a stated policy), then those out of memory, each part by step time
    capacity = data["memory_capacity_bytes"]
    assert capacity == 80 * 2**30

    def room(used: float) -> int:
        return 0 if used <= TIGHT_FRACTION else 1 if used <= 1 else 2

    keys = [(room(row["memory_per_gpu_bytes"] / capacity), row["step_s"]) for row in layouts]
    assert keys == sorted(keys)
    assert [row["memory_fits"] for row in layouts] == [k[0] < 2 for k in keys]
    assert all(row["dp"] * row["microbatches"] == 16 for row in layouts)
    # the JSON says which part each layout ranks in, and the note gives the rule (a review:
    # a script reading ranked_by alone found a tight layout 12.2 s after slower ones with room)
    names = ("room", "tight", "out of memory")
    assert [row["memory_room"] for row in layouts] == [names[k[0]] for k in keys]
    for row in layouts:
        assert row["memory_used_fraction"] == row["memory_per_gpu_bytes"] / capacity
    assert {row["memory_room"] for row in layouts} >= {"room", "out of memory"}
    assert "then tight ones (past 90 %" in data["note"]
    # without a known GPU memory nothing is judged: unknown, as memory_fits is null
    bare = _json(
        "train",
        "--model",
        "llama3-8b",
        "--intra",
        "nvlink4",
        "--inter",
        "ndr",
        "--gpus-per-node",
        "8",
        "--nodes",
        "2",
        "--compare",
        "--tflops",
        "400",
    )
    assert {(r["memory_room"], r["memory_fits"]) for r in bare["layouts"]} == {("unknown", None)}


@pytest.mark.parametrize(("compute", "noted"), [([], True), (["--tflops", "400"], False)])
def test_train_compare_says_when_no_compute_is_given(compute: list[str], noted: bool) -> None:
    # without compute nothing overlaps and no step (nor its pipeline bubble) is costed: the
    # ranking favours deep pipelines, and the table says so
    args = ["train", "--model", "llama3-8b", "--nodes", "2", "--system", "dgx-h100", "--compare"]
    result = runner.invoke(APP, [*args, *compute])
    assert result.exit_code == 0, result.output
    assert ("no compute time given" in result.output) is noted


def test_train_compare_counts_one_sequence_in_the_singular() -> None:
    """--global-batch 1 on 2 DGX H100 nodes: only the layouts with dp = 1 run it, each at
    M = 1 / (dp x 1) = 1; the title had read 'every layout runs 1 sequences per step'."""
    argv = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "2", "--compare"]
    one = runner.invoke(APP, [*argv, "--global-batch", "1"], env={"COLUMNS": "200"})
    assert one.exit_code == 0, one.stderr
    assert "every layout runs 1 sequence per step (M = 1 / (dp x 1)" in one.stdout
    two = runner.invoke(APP, [*argv, "--global-batch", "2"], env={"COLUMNS": "200"})
    assert "every layout runs 2 sequences per step (M = 2 / (dp x 1)" in two.stdout


@pytest.mark.parametrize(
    ("system", "tflops", "said"),
    [
        # 400 / 989 (the H100's dense 16-bit peak in the catalogue) = 40.4 %
        ("dgx-h100", "400", "rate: --tflops 400 TFLOP/s per GPU is 40% of dgx-h100's GPU peak"),
        ("hgx-h20", "100", "rate: --tflops not judged against a GPU peak: hgx-h20 states none"),
        # past the peak: 2000 / 989 = 2.02x (the line and rate_note had been left out)
        ("dgx-h100", "2000", "rate: --tflops 2000 TFLOP/s per GPU is faster than dgx-h100's"),
    ],
)
def test_train_compare_judges_the_rate_once(system: str, tflops: str, said: str) -> None:
    # the rate against the GPU's peak holds for every layout: the table had dropped what a
    # single layout says (a rate past the peak stays each row's warning)
    args = ["train", "--model", "llama3-8b", "--nodes", "2", "--system", system, "--compare"]
    result = runner.invoke(APP, [*args, "--tflops", tflops], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.output.count(said) == 1
    data = _json(*args, "--tflops", tflops)
    assert data["rate_note"].startswith(said.removeprefix("rate: "))


def test_infer_json() -> None:
    data = _json(
        "infer",
        "--model",
        "llama3-70b",
        "--tp",
        "8",
        "--batch",
        "32",
        "--prompt",
        "8192",
        "--disaggregated",
        "--system",
        "dgx-h100",
    )
    _check_phases(data)
    assert data["totals"]["kv_bytes_per_token"] == 327_680
    assert data["totals"]["dominant_tier"] in ("scale-up", "scale-out")
    assert (data["dtype"], data["weights_dtype"], data["kv_dtype"]) == ("bf16", "bf16", "bf16")


def test_infer_json_and_table_name_the_activations_type() -> None:
    """--dtype fp8 halves every tp message (decode: 1 x 8192 x 1 B = 8 KiB), yet the JSON had
    named only the weights' and the KV cache's types and the table none (review CZ 5)."""
    args = ["infer", "--model", "llama3-70b", "--tp", "8", "--dtype", "fp8", "--system", "dgx-h100"]
    data = _json(*args)
    assert data["dtype"] == "fp8"
    decode = next(p for p in data["phases"] if p["name"] == "decode-tp-allreduce")
    assert decode["bytes_per_gpu"] == 1 * 8192 * 1
    result = runner.invoke(APP, args)
    assert "output tokens, fp8 activations" in " ".join(result.stdout.split()[:20])
    train = _json("train", "--model", "llama3-8b", "--tp", "8", "--system", "dgx-h100", "-N", "1")
    assert (train["dtype"], train["grad_dtype"]) == ("bf16", "bf16")


def test_infer_table_gives_the_prompt_s_kv_cache_with_its_length() -> None:
    # llama3-70b: 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 B = 327,680 B per token; the
    # 8,192-token prompt's cache is 8,192 times that, 2.50 GiB (what the KV transfer ships)
    result = runner.invoke(
        APP,
        ["infer", "--model", "llama3-70b", "--tp", "8", "--prompt", "8192", "--system", "dgx-h100"],
    )
    assert result.exit_code == 0, result.stderr
    assert 80 * 8 * 128 * 2 * 2 * 8192 == 2_684_354_560 == 2.5 * 2**30
    # one request over all GPUs, not a GPU's share of the batch (the memory row's; a QA read
    # found the two easy to confuse)
    assert (
        "327,680 B per token (bf16), 2.50 GiB for one request's 8,192-token prompt over all GPUs"
        in " ".join(result.stdout.split())
    )


def test_infer_kv_row_counts_the_copies_of_heads_past_kv_heads() -> None:
    """Llama 3 70B on tp 16: 8 KV heads on 16 GPUs, each head kept on 16 / 8 = 2 of them. One
    1,024-token prompt's cache is 80 x 8 x 128 x 2 x 2 x 1,024 = 320 MiB once, 640 MiB with
    its copies: the row had said '320 MiB ... over all GPUs'. The memory row agrees: 1,280
    tokens x 327,680 B x 2 copies / 16 GPUs = 50.0 MiB per GPU. At tp 8 nothing is copied."""
    assert 80 * 8 * 128 * 2 * 2 * 1024 == 320 * 2**20
    assert 1280 * 327_680 * 2 / 16 == 50 * 2**20
    args = ["infer", "--model", "llama3-70b", "--system", "dgx-h100"]
    result = runner.invoke(APP, [*args, "--tp", "16"])
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert (
        "327,680 B per token (bf16), 320 MiB for one request's 1,024-token prompt, 640 MiB over "
        "all GPUs: each of its 8 KV heads is kept on 2 of the 16 tensor-parallel GPUs" in text
    )
    assert "weights 8.15 GiB + KV cache 50.0 MiB" in text
    eight = " ".join(runner.invoke(APP, [*args, "--tp", "8"]).stdout.split())
    assert "320 MiB for one request's 1,024-token prompt over all GPUs dominant tier" in eight


def test_infer_memory_line_keeps_three_figures_in_each_size() -> None:
    # llama3-70b at tp 16 on DGX H100, 168 sequences of 1,024 + 256 tokens: the KV cache is
    # 168 x 1,280 x 327,680 B / 8 (8 KV heads over 16 ranks: each holds one head, copied twice)
    # = 8,808,038,400 B = 8.203 GiB, beside 8.15 GiB of weights; it had printed "8.2 GiB"
    args = ["infer", "--model", "llama3-70b", "--tp", "16", "--batch", "168"]
    result = runner.invoke(APP, [*args, "--system", "dgx-h100"])
    assert result.exit_code == 0, result.stderr
    assert pytest.approx(8.203, abs=5e-4) == 168 * 1280 * 327_680 / 8 / 2**30
    printed = " ".join(result.stdout.split())
    assert "of dgx-h100's 80.0 GiB per GPU" in printed
    assert "weights 8.15 GiB + KV cache 8.20 GiB" in printed


def test_a_small_memory_share_does_not_read_as_none() -> None:
    # 10M parameters alone on a DGX B300 GPU: bf16 weights 2 B + fp32 gradients 4 B + Adam's
    # 12 B a parameter = 180e6 B of 288 GiB = 309,237,645,312 B: 0.0582 %, which had printed
    # "(0%)"; two figures below 10 %: 0.058 %
    result = runner.invoke(APP, ["train", "--params", "10M", "--system", "dgx-b300", "-N", "1"])
    assert result.exit_code == 0, result.stderr
    assert pytest.approx(0.000582, abs=1e-6) == 180e6 / (288 * 2**30)
    printed = " ".join(result.stdout.split())
    assert "172 MiB of dgx-b300's 288 GiB per GPU (0.058%): weights 19.1 MiB" in printed


def test_checkpoint_json() -> None:
    data = _json(
        "checkpoint",
        "--model",
        "llama3-405b",
        "--storage",
        "ddn-ai400x2",
        "--storage-units",
        "2",
        "--nodes",
        "16",
        "--system",
        "dgx-h100",
    )
    _check_phases(data)
    # 810 GB over 2 x 65 GB/s of writes = 6.23 s, against 16 NDR NICs (~750 GB/s)
    assert data["totals"]["save_bound"] == "storage"
    assert data["totals"]["save_s"] == pytest.approx(810e9 / 130e9)


def test_a_checkpoint_needs_neither_two_gpus_nor_a_network_between_nodes(
    builtin_catalogue: Catalogue,
) -> None:
    """A checkpoint runs no collective, yet one L40S ('a collective needs at least 2 GPUs')
    and two NIC-less RTX 5090 boxes with a storage NIC given ('has no scale-out NIC; give
    --inter') were refused. Each node writes its share through its RoCE 100G NIC: 2 GB / 1 NIC,
    16 GB / 2 NICs, at the link's achievable rate (the NVMe-oF target's 50 GB/s does not bind)."""
    nic = find_link(builtin_catalogue, "roce-100g").achievable_Bps
    base = ["checkpoint", "--storage", "nvmeof-target", "--storage-link", "roce-100g"]
    one = _json(*base, "--params", "1B", "--system", "l40s-pcie", "--nodes", "1")
    assert one["totals"]["save_bound"] == "client NICs"
    assert one["totals"]["save_s"] == pytest.approx(2e9 / nic, rel=1e-3)
    two = _json(*base, "--model", "llama3-8b", "--system", "rtx5090-8", "--nodes", "2")
    assert two["ranks"] == 16
    assert two["totals"]["save_s"] == pytest.approx(
        find_model("llama3-8b").params * 2 / (2 * nic), rel=1e-3
    )


def test_training_on_one_gpu_is_refused_in_trainings_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One L40S (or one GPU of a DGX) had been told 'a collective needs at least 2 GPUs', a
    collective nobody asked for; train names what it costs and the commands that take one GPU.
    Two GPUs of the DGX still train (tp 2: one all-reduce phase)."""
    said = (
        "error: one GPU exchanges nothing, and a training step is costed by what its GPUs "
        "exchange: give 2 GPUs or more (--nodes, --gpus-per-node); ibcalc infer and ibcalc "
        "checkpoint take one GPU\n"
    )
    assert main_error(["train", "--model", "llama3-8b", "--system", "l40s-pcie"], capsys) == said
    dgx = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "--nodes", "1"]
    assert main_error([*dgx, "--gpus-per-node", "1"], capsys) == said
    assert main_error([*dgx, "--gpus-per-node", "1", "--compare"], capsys) == said
    two = _json(*dgx, "--gpus-per-node", "2", "--tp", "2")
    assert [p["name"] for p in two["phases"]] == ["tp-allreduce"]


def test_a_one_gpu_serving_instance_on_a_one_gpu_node_is_served(
    builtin_catalogue: Catalogue,
) -> None:
    """A one-GPU instance runs no collective; on one L40S it had been refused ('a collective
    needs at least 2 GPUs') where a DGX prints its memory. Llama 3 8B in bf16: 8.0e9 x 2 B of
    weights and 1,280 tokens (1,024 prompt + 256 out) x 131,072 B of KV cache, of 48 GiB."""
    data = _json("infer", "--model", "llama3-8b", "--system", "l40s-pcie")
    assert data["phases"] == []
    model = find_model("llama3-8b")
    used = model.params * 2 + 1280 * 131_072
    assert data["memory"]["per_gpu_bytes"] == pytest.approx(used, rel=1e-9)
    assert f"{used / 2**30:.1f}" == "15.1"


@pytest.mark.parametrize(
    ("cluster", "nics"),
    [
        (["--system", "dgx-h100", "--gpus-per-node", "1"], 1),  # a resized preset keeps 1 per GPU
        (["--system", "aws-p5", "--inter", "ndr"], 8),  # another link than the preset's: 1 per GPU
        (["--intra", "nvlink4", "--inter", "efa-v2", "--gpus-per-node", "8"], 32),  # a p5's EFA
    ],
)
def test_storage_nics_through_the_compute_nics_are_capped_alike_on_one_node_and_two(
    cluster: list[str], nics: int
) -> None:
    """The NICs a node has of its scale-out link are the same on one node, where no network is
    built, as on two (a review: 8 storage NICs had passed on one resized DGX H100 and been
    refused on two; 32 EFA NICs had been refused on one node and taken on two)."""
    base = ["checkpoint", "--storage", "nvmeof-target", "--model", "llama3-8b", *cluster]
    for nodes in ("1", "2"):
        _json(*base, "--nodes", nodes, "--storage-nics", str(nics))
        message = _error(*base, "--nodes", nodes, "--storage-nics", str(nics + 1))
        assert f"--storage-nics '{nics + 1}' is more than the {nics} " in message


def test_the_storage_nic_cap_is_the_count_of_the_link_counted() -> None:
    """A p5 named on NDR counts 8 ndr NICs; its own 32 EFA NICs as a storage link are the
    caller's to count, not capped at another link's 8 (a review: refused on one node once the
    count reached one node, and on two before). Through the counted link, the cap holds."""
    base = ["checkpoint", "--storage", "nvmeof-target", "--model", "llama3-8b"]
    p5 = [*base, "--system", "aws-p5", "--inter", "ndr"]
    for nodes in ("1", "2"):
        data = _json(*p5, "--nodes", nodes, "--storage-link", "efa-v2", "--storage-nics", "32")
        # 32 x 11.25 GB/s of EFA per node outruns the NVMe-oF target's 48.1 GB/s: 16 GB in 0.333 s
        assert data["totals"]["save_s"] == pytest.approx(16e9 / 48.1e9 + 20e-6, rel=1e-3)
        assert "--storage-nics '9' is more than the 8 ndr NICs" in _error(
            *p5, "--nodes", nodes, "--storage-nics", "9"
        )
        # the preset's own link named for storage has the preset's count (a review: any count
        # up to 256 had passed once the counted link was another)
        assert "--storage-nics '33' is more than the 32 efa-v2 NICs" in _error(
            *p5, "--nodes", nodes, "--storage-link", "efa-v2", "--storage-nics", "33"
        )


def test_infer_says_the_kv_heads_it_assumed_and_offers_remedies_that_help() -> None:
    """A model given by its shape without --kv-heads is priced with one KV head per query
    head: 2 x 80 layers x 64 heads x 128 x 2 B = 2,621,440 B per token, 8x Llama 3 70B's
    (8 KV heads), and nothing had said so. DeepSeek-V3 on 8 GPUs (ep 8, fp8 weights, batch 1)
    does not fit for its weights, 16.55e9 + 654.45e9 / 8 B = 91.6 GiB, beside an 86 MiB
    cache: it had been told that a smaller batch or an fp8 KV cache would help, neither of
    which can; more ep can."""
    shaped = _json(
        *("infer", "--params", "70B", "--layers", "80", "--hidden", "8192", "--heads", "64"),
        *("--tp", "8", "--system", "dgx-h100"),
    )
    assert shaped["totals"]["kv_bytes_per_token"] == 2 * 80 * 64 * 128 * 2 == 2_621_440
    assert any(
        a.startswith("key/value heads not given: 64, one per query head") and "--kv-heads" in a
        for a in shaped["assumptions"]
    )
    # no cache counted (no --layers): nothing is said of its heads (a review)
    shapeless = _json("infer", "--params", "7B", "--heads", "32", "--system", "dgx-h100")
    assert not any("key/value heads not given" in a for a in shapeless["assumptions"])
    preset = _json("infer", "--model", "llama3-70b", "--tp", "8", "--system", "dgx-h100")
    assert preset["totals"]["kv_bytes_per_token"] == 2 * 80 * 8 * 128 * 2
    assert not any("key/value heads not given" in a for a in preset["assumptions"])
    moe = _json(
        *("infer", "--model", "deepseek-v3", "--tp", "1", "--ep", "8", "--system", "dgx-h100"),
        *("--nodes", "1", "--batch", "1", "--weights-dtype", "fp8"),
    )
    assert moe["memory"]["weights_bytes"] == pytest.approx(16.55e9 + 654.45e9 / 8, rel=1e-3)
    (warning,) = [w for w in moe["warnings"] if w.startswith("out of memory")]
    assert warning.endswith("or pp or more --ep would shrink it")
    assert "--batch" not in warning
    assert "--kv-dtype" not in warning


def test_storage_units_of_a_storage_without_an_aggregate_rate_are_said_to_change_nothing() -> None:
    """--storage-units multiplies a storage's aggregate rate; S3 states none (it scales with the
    clients), so 4 units changed nothing, yet were accepted without a word and the title read
    'to 4 x aws-s3'. The same times, no count in the title, and a note; a parallel file system's
    units still count (2 x 65 GB/s above) and show in its title."""
    base = ["checkpoint", "--model", "llama3-70b", "--system", "dgx-h100", "-N", "2"]
    one = runner.invoke(APP, [*base, "--storage", "aws-s3"])
    four = runner.invoke(APP, [*base, "--storage", "aws-s3", "--storage-units", "4"])
    assert one.exit_code == four.exit_code == 0, four.stderr
    assert four.stdout.startswith("checkpoint llama3-70b: 140 GB of bf16 weights to aws-s3 from ")
    text = " ".join(four.stdout.split())
    assert (
        "aws-s3 states no aggregate limit: it scales with the clients; --storage-units 4 changes "
        "nothing (units multiply an aggregate rate)"
    ) in text
    times = [line for line in four.stdout.splitlines() if line.startswith(("  save", "  restore"))]
    assert times == [
        line for line in one.stdout.splitlines() if line.startswith(("  save", "  restore"))
    ]
    ddn = runner.invoke(APP, [*base, "--storage", "ddn-ai400x2", "--storage-units", "2"])
    assert ddn.stdout.startswith("checkpoint llama3-70b: 140 GB of bf16 weights to 2 x ddn-ai400x2")


def test_checkpoint_names_ignored_cluster_options() -> None:
    args = ["checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2", "--system"]
    result = runner.invoke(
        APP, [*args, "dgx-h100", "-N", "2", "--oversubscription", "4", "--cross-leaf", "0.5"]
    )
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert (
        "the cluster's oversubscription (--oversubscription), cross-leaf fraction (--cross-leaf) "
        "ignored: a checkpoint runs no collective"
    ) in text
    assert "slower" not in text  # the compute fabric's "x2 slower" is not the storage path's


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["train", "--params", "70B", "--system", "dgx-h100", "--wan-links", "4"],
            "--wan-links '4' needs several sites",
        ),
        (
            ["train", "--params", "70B", "--system", "dgx-h100", "--distance", "800km"],
            "needs several sites (give --sites 2 or more)",
        ),
        (["train", "--params", "70B", "--fsdp", "--zero", "1"], "--fsdp is ZeRO stage 3"),
        (["train", "--model", "llama3-7b"], "--model 'llama3-7b' is not a known model"),
        (["train", "--params", "70B", "--tp", "8", "--system", "dgx-h100"], "sequence length"),
        (
            ["train", "--params", "70B", "--tp", "8", "--dp", "3", "--nodes", "2"],
            "change --dp or --nodes",
        ),
        (["train", "--params", "70X"], "unknown suffix"),
        (
            ["train", "--params", "70B", "--system", "dgx-h100", "--distance", "800"],
            "write km, m or mi",
        ),
        (["train", "--params", "70B", "--nodes", "2", "--compare", "--tp", "8"], "drop --tp"),
        (
            ["checkpoint", "--params", "8B", "--storage", "s4"],
            "--storage 's4' is not a known storage",
        ),
        (
            # experts without a routing degree had been served, silently, as a dense model
            [
                *("infer", "--params", "10B", "--layers", "32", "--hidden", "4096"),
                *("--heads", "32", "--experts", "8", "--system", "dgx-h100"),
            ],
            "--experts makes a mixture-of-experts model: give its --top-k too",
        ),
        (
            # through the compute NICs, a DGX H100 node has 8 (100 had been priced at 9.75 TB/s)
            [
                *("checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2"),
                *("--storage-nics", "100", "--system", "dgx-h100"),
            ],
            "--storage-nics '100' is more than the 8 ndr NICs of a node (give --storage-link for "
            "storage NICs of their own; see 'ibcalc checkpoint --help')",
        ),
        (
            # one node builds no network, yet its NICs are as many (a review: 50 had passed,
            # 2405 GB/s); the link named as the storage link is the compute one: no hint to give it
            [
                *("checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2"),
                *("--storage-nics", "50", "--system", "dgx-h100", "--nodes", "1"),
                *("--inter", "roce-400g"),
            ],
            "--storage-nics '50' is more than the 8 roce-400g NICs of a node (give",
        ),
        (
            [
                *("checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2"),
                *("--storage-nics", "10", "--system", "dgx-h100", "--storage-link", "ndr"),
            ],
            "--storage-nics '10' is more than the 8 ndr NICs of a node (see 'ibcalc checkpoint "
            "--help')\n",
        ),
        (["infer", "--params", "8B", "--kv-nics", "2"], "--kv-nics applies to --disaggregated"),
        (
            ["infer", "--model", "llama3-70b", "--ep", "2", "--system", "dgx-h100"],
            "--ep above 1 needs a mixture-of-experts model (--experts, --top-k)",
        ),
        (
            # groups of 8 consecutive ranks straddle NVL36 halves (ranks 32-39); the refusal
            # named the dp group ("dp ranks 8 apart do not tile"), placed first
            [
                *("train", "--model", "llama3-70b", "--system", "gb200-nvl72", "-N", "36"),
                *("--tp", "8", "--scale-up-domain", "36"),
            ],
            "--tp '8' does not divide the 36-GPU scale-up domain: some tp groups would straddle",
        ),
        (
            # grouped-query attention: 64 query heads do not split into 3 equal groups
            ["train", "--model", "llama3-70b", "--kv-heads", "3", "--system", "dgx-h100"],
            "llama3-70b's --heads 64 does not divide into --kv-heads '3' groups",
        ),
        (
            # a field the preset does not have is not called the preset's ('give its
            # llama3-70b's --experts too' had read for a dense model)
            ["train", "--model", "llama3-70b", "--top-k", "2", "--system", "dgx-h100"],
            "error: --top-k is for a mixture-of-experts model: give its --experts too",
        ),
        (
            # the preset's 8 KV heads are the preset's, not a flag given ('--kv-heads 8 is more
            # than --heads 7' had named one nobody gave)
            ["train", "--model", "llama3-70b", "--heads", "4", "--system", "dgx-h100"],
            "llama3-70b's --kv-heads 8 is more than --heads '4'",
        ),
    ],
)
def test_errors_are_one_line(args: list[str], needle: str) -> None:
    message = _error(*args)
    assert needle in message
    assert message.count("\n") == 1


def test_train_on_a_design_file() -> None:
    from pathlib import Path

    design = Path(__file__).parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    data = _json("train", "--model", "llama3-70b", "--tp", "8", "--design", str(design))
    # the SU's 31 DGX H100 nodes: 248 GPUs = tp 8 x dp 31
    assert data["nodes"] == 31
    assert data["parallel"]["dp"] == 31
    assert _error("train", "--params", "70B", "--design", str(design), "--nodes", "4").startswith(
        "error: --nodes and --design both describe the cluster"
    )
    # three are 'all' (a review: 'both' for three)
    assert _error(
        "train", "--params", "70B", "--design", str(design), "--nodes", "4", "--system", "dgx-h100"
    ).startswith("error: --nodes, --system and --design all describe the cluster")


def test_options_a_design_states_are_refused_and_the_others_laid_over() -> None:
    """--sharp, --oversubscription, --cross-leaf replaced the file's own fabric.sharp and
    sized layout unsaid (10 GB all-reduce time changed with no notice); options the file
    leaves open (host_pcie here) stay a what-if, and one equal to the file's is accepted."""
    from pathlib import Path

    design = Path(__file__).parents[2] / "examples" / "failing-requirement.yaml"
    base = ["train", "--params", "70B", "--design", str(design)]
    assert _error(*base, "--sharp") == (
        "error: --sharp: the design already sets it (fabric.sharp); change the file or drop "
        "the option\n"
    )
    assert _error(*base, "--oversubscription", "4", "--cross-leaf", "0.5") == (
        "error: --cross-leaf, --oversubscription: the design already sets them (fabric layout); "
        "change the file or drop the options\n"
    )
    # equal values are accepted: a link by any of its names, a fraction at printed precision
    roce = design.parent / "roce-400g-2to1.yaml"  # derives f = 48/127 = 0.3780
    assert _json("train", "--params", "70B", "--design", str(roce), "--cross-leaf", "0.378")
    assert "--cross-leaf" in _error(
        "train", "--params", "70B", "--design", str(roce), "--cross-leaf", "0.35"
    )
    plain = _json(*base)["phases"][0]["time_s"]
    assert _json(*base, "--no-sharp")["phases"][0]["time_s"] == plain
    # the option is named as given: --no-sharp against a design's fabric.sharp: true
    on = Path(__file__).parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    assert _error("train", "--params", "70B", "--design", str(on), "--no-sharp") == (
        "error: --no-sharp: the design already sets it (fabric.sharp); change the file or drop "
        "the option\n"
    )
    # pcie3 (12.6 GB/s achievable per NIC) is slower than the preset's pcie5 behind each NDR NIC
    assert _json(*base, "--host-pcie", "pcie3")["phases"][0]["time_s"] > 2 * plain


def test_checkpoint_lays_options_it_does_not_read_over_a_design() -> None:
    """A checkpoint runs no collective on the compute fabric, so --sharp against a design's
    fabric.sharp is not a clash there (train refuses it): it is laid over and named as ignored.
    A design's own fabric.sharp is named by its key, not as the flag nobody gave."""
    from pathlib import Path

    examples = Path(__file__).parents[2] / "examples"
    base = ["checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2"]
    given = _json(*base, "--design", str(examples / "failing-requirement.yaml"), "--sharp")
    assert any(n.startswith("the cluster's SHARP (--sharp)") for n in given["assumptions"])
    plain = _json(*base, "--design", str(examples / "failing-requirement.yaml"))
    assert given["totals"] == plain["totals"]  # ignored indeed
    stated = _json(*base, "--design", str(examples / "dgx-a100-pod-hdr.yaml"))  # sharp: true
    assert any(n.startswith("the cluster's SHARP (fabric.sharp)") for n in stated["assumptions"])
    # --no-sharp and --host-cpu are as unread: named, never refused as a clash
    off = _json(*base, "--design", str(examples / "dgx-a100-pod-hdr.yaml"), "--no-sharp")
    assert any("SHARP (--sharp)" in n for n in off["assumptions"])
    amd = _json(*base, "--system", "dgx-h100", "--host-cpu", "amd")
    assert any(n.startswith("the cluster's host CPU (--host-cpu)") for n in amd["assumptions"])
    # a design that says nothing of SHARP has none to ignore (it was named as "--sharp")
    silent = _json(*base, "--design", str(examples / "aws-p5-efa.yaml"))
    assert not [n for n in silent["assumptions"] if "SHARP" in n]
    assert amd["totals"] == _json(*base, "--system", "dgx-h100")["totals"]


def test_workload_and_log_commands_take_the_host_cpu() -> None:
    """--host-cpu reached the collective commands only; train, infer, checkpoint, nccl-check and
    calibrate describe the same cluster and take it too. On AMD hosts NCCL charges 2 us per
    network ring step instead of 1 (getNetOverhead), so a decode all-reduce across 2 nodes is
    slower, and it is the same estimate the allreduce command gives."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.cluster.resolve import ClusterSpec
    from ibcalc.engine.types import Collective
    from ibcalc.facade import estimate

    for command in ("train", "infer", "checkpoint", "nccl-check", "calibrate"):
        assert "--host-cpu" in runner.invoke(APP, [command, "--help"]).stdout
    base = ["infer", "--model", "llama3-70b", "--tp", "16", "-N", "2", "--system", "dgx-h100"]
    times = {}
    for cpu in ("intel", "amd"):
        phase = _json(*base, "--host-cpu", cpu)["phases"][0]
        assert (phase["name"], phase["bytes_per_gpu"]) == ("decode-tp-allreduce", 16384)
        engine = estimate(
            load_catalogue(),
            ClusterSpec(nodes=2, gpus_per_node=8, system="dgx-h100", host_cpu=cpu),
            Collective.ALL_REDUCE,
            16384,  # an all-reduce buffer is the same on every GPU
            dtype="bf16",
        )
        assert phase["time_s"] == pytest.approx(engine.time_s, rel=1e-9)
        times[cpu] = phase["time_s"]
    # by hand: the tree pays NCCL's network post overhead once up and once down (2 steps), 1 us
    # per step on Intel hosts and 2 us on AMD ones (getNetOverhead): 2 x (2 - 1) us more
    assert times["amd"] - times["intel"] == pytest.approx(2e-6, abs=1e-9)


def test_main_cli_refuses_wan_links_without_sites(capsys: pytest.CaptureFixture[str]) -> None:
    # before: `ibcalc allreduce --wan-links 4` without --sites dropped the flag silently
    from ibcalc.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["allreduce", "--size", "1GB", "--system", "dgx-h100", "--wan-links", "4"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "error: --wan-links '4' needs several sites: WAN links join sites (give --sites 2 or "
        "more; see 'ibcalc allreduce --help')\n"
    )


def test_dp_over_sites_is_named_in_words_when_not_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """48 GPUs / (tp 8 x cp 2) = dp 3, which 2 sites cannot share: the refusal had read
    '--dp 3 cannot be split over 2 sites' to one who never gave --dp (as the --ep check
    already says dp in words)."""
    err = main_error(
        [
            "train", "--model", "llama3-70b", "--system", "dgx-h100", "--nodes", "6",
            "--tp", "8", "--cp", "2", "--sites", "2", "--wan", "wan-100g",
        ],
        capsys,
    )  # fmt: skip
    assert err == (
        "error: the data-parallel degree, dp = 3 = GPUs / (tp x cp x pp), cannot be split over "
        "2 sites: each site holds dp / sites whole replicas\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("infer", "--model", "mixtral-8x7b", "--system", "dgx-h100", "--tp", "1", "--ep", "8"),
        (
            "train",
            "--model",
            "mixtral-8x7b",
            "--system",
            "dgx-h100",
            "--nodes",
            "2",
            "--tp",
            "1",
            "--ep",
            "8",
        ),
    ],
    ids=["infer", "train"],
)
def test_workload_commands_read_cost_parameter_overrides(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    """--cost-params reaches train and infer: an all-to-all of 8 ranks pays 7 messages, so
    raising the per-message cost to 100 us adds 7 x (100 us - the built-in value) per phase."""
    from ibcalc.catalogue.cost_params import builtin_cost_params

    path = tmp_path / "slow.yaml"
    path.write_text(
        "schema: ibcalc-cost-params/1\ncalibrated:\n  per_message_latency:\n"
        "    assumed: a test value\n    value: 100 us\n",
        encoding="utf-8",
    )

    def alltoall_s(*extra: str) -> float:
        phases = _json(*args, *extra)["phases"]
        # infer has a decode and a prefill all-to-all: the decode one (per token)
        (phase,) = [
            p for p in phases if p["collective"] == "alltoall" and "prefill" not in p["name"]
        ]
        assert phase["ranks"] == 8
        return float(phase["time_s"])

    builtin = builtin_cost_params().calibrated.per_message_s
    delta = alltoall_s("--cost-params", str(path)) - alltoall_s()
    assert delta == pytest.approx(7 * (100e-6 - builtin), rel=1e-6)


def test_compare_shows_cp_when_the_layouts_have_it() -> None:
    # 32 GPUs with cp 2: the table has a cp column and tp x cp x pp x dp = 32 on every row
    args = ["train", "--model", "llama3-70b", "--nodes", "4", "--system", "dgx-h100"]
    result = runner.invoke(APP, [*args, "--compare", "--cp", "2"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line.split() for line in lines if line.strip().startswith("#"))
    assert header[:6] == ["#", "tp", "cp", "pp", "dp", "M"]  # no ep: a dense model
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    assert rows
    for row in rows:
        tp, cp, pp, dp = (int(x) for x in row[1:5])
        assert tp * cp * pp * dp == 32
    # without cp the column is not shown
    plain = runner.invoke(APP, [*args, "--compare"], env={"COLUMNS": "200"})
    assert "cp" not in next(line.split() for line in plain.output.splitlines() if "#" in line)


@pytest.mark.parametrize(
    ("seconds", "band", "shown"),
    [
        (3.44e-3, (3.28e-3, 9.06e-3), "3.44 ms (3.28-9.06)"),
        # narrower than three digits: the digits that tell the ends apart, the time with them
        # (1.655-1.662 s had read 1.66-1.66; then 319 s (318.6-318.7))
        (1.6589, (1.6556, 1.6624), "1.659 s (1.656-1.662)"),
        (318.65, (318.61, 318.69), "318.6 s (318.6-318.7)"),
        (24.51, (24.507, 24.513), "24.510 s (24.507-24.513)"),
        # the same decimals at both ends ('304.7 s (304.7-305)' had dropped a zero)
        (304.66, (304.62, 304.98), "304.7 s (304.6-305.0)"),
        # never fewer digits than the time's own three ('25 s (25-26)' had stood for
        # 25.49-25.51 s, a second review)
        (25.5, (25.49, 25.51), "25.50 s (25.49-25.51)"),
        (1.5, (1.4999, 1.5001), "1.5000 s (1.4999-1.5001)"),
        # no width: no range ('0 us (0-0)', a unitless pair)
        (0.0, (0.0, 0.0), "0 us"),
        (4.73, (4.73, 4.73), "4.73 s"),
    ],
)
def test_a_workload_time_shows_a_range_only_where_it_has_width(
    seconds: float, band: tuple[float, float], shown: str
) -> None:
    from ibcalc.render.workload import _time

    assert _time(seconds, band) == shown


def test_compare_says_why_a_layout_is_not_interleaved() -> None:
    """Llama 3 70B on 36 GB200 trays with 2 chunks a stage: pp 3 and pp 9 cannot split 80
    layers into pp x 2 chunks. The table's note (a letter at 100 columns, the words at 250) had
    said 'not interleaved' with no reason, which only the JSON gave (a review)."""
    args = ["train", "--model", "llama3-70b", "--nodes", "36", "--system", "gb200-nvl72"]
    args += ["--tflops", "1000", "--sequence-parallel", "--zero", "1", "--compare"]
    why = "not interleaved (layers not in pp x --virtual-stages equal chunks)"
    for columns in ("100", "250"):
        result = runner.invoke(APP, [*args, "--virtual-stages", "2"], env={"COLUMNS": columns})
        assert result.exit_code == 0, result.output
        assert why in " ".join(result.output.split()), columns


def test_the_cross_leaf_fraction_is_said_to_come_from_where_it_came_from() -> None:
    """A workload on a sized design said the fraction came 'from --cross-leaf', never given."""
    roce = Path(__file__).parents[2] / "examples" / "roce-400g-2to1.yaml"
    notes = " ".join(_json("train", "--params", "70B", "--design", str(roce))["assumptions"])
    assert (
        "38% of each node's network traffic assumed to cross the tapered uplinks (from the "
        in notes
    )
    assert "design's fabric layout)" in notes
    flags = ["train", "--params", "70B", "--system", "dgx-h100", "--nodes", "4"]
    notes = " ".join(_json(*flags, "--oversubscription", "2")["assumptions"])
    assert (
        "(the default, every byte, the worst case; --cross-leaf sets it; on a rail-optimized "
        "fabric most ring and tree traffic stays inside a leaf: --cross-leaf-neighbour, or a "
        "design's fabric.switch, sets that share)"
    ) in notes
    notes = " ".join(_json(*flags, "--oversubscription", "2", "--cross-leaf", "0.5")["assumptions"])
    assert "(from --cross-leaf)" in notes


def test_disaggregated_serving_needs_two_nodes(tmp_path: Path) -> None:
    """`infer --nodes 1 --disaggregated` priced a KV transfer to a decode node the cluster
    does not have; without --nodes the cluster now has 2."""
    args = [
        "infer",
        "--model",
        "llama3-70b",
        "--tp",
        "8",
        "--system",
        "dgx-h100",
        "--disaggregated",
    ]
    result = runner.invoke(APP, [*args, "--nodes", "1"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --disaggregated puts prefill and decode on different nodes, and the cluster has "
        "1 node: give --nodes 2 or more\n"
    )
    result = runner.invoke(APP, args)
    assert result.exit_code == 0
    assert "2 nodes assumed (--nodes)" in result.stdout
    # with a design the advice is the file's key (--nodes and --design do not go together)
    one = tmp_path / "one.yaml"
    one.write_text(
        "name: one\nnodes: 1\nsystem: dgx-h100\nrequirements: [{gap: {max_ratio: 10}}]\n"
    )
    with_design = ["infer", "--model", "llama3-70b", "--tp", "8", "--disaggregated"]
    result = runner.invoke(APP, [*with_design, "--design", str(one)])
    assert result.stderr == (
        "error: --disaggregated puts prefill and decode on different nodes, and the design has "
        "1 node: set its nodes: key to 2 or more\n"
    )


def test_workload_commands_take_the_scale_up_domain(tmp_path: Path) -> None:
    # 36 GB200 trays as 4-GPU domains: train's and infer's tp 8 groups span two of them, so
    # they leave NVLink; with the preset's 72-GPU domain they stay on it
    base = ["--model", "llama3-70b", "--tp", "8", "--system", "gb200-nvl72"]
    train = ["train", *base, "-N", "36", "--seq-len", "8192"]
    split = _json(*train, "--scale-up-domain", "4")
    whole = _json(*train)
    tiers = {p["name"]: p["tier"] for p in split["phases"]}
    assert tiers["tp-allreduce"] == "scale-out"
    assert {p["name"]: p["tier"] for p in whole["phases"]}["tp-allreduce"] == "scale-up"
    served = _json("infer", *base, "--scale-up-domain", "4")
    assert {p["name"]: p["tier"] for p in served["phases"]}["decode-tp-allreduce"] == "scale-out"
    # a domain that is not whole trays is refused in one line naming the flag
    assert "--scale-up-domain '6' is not a whole number of 4-GPU nodes" in _error(
        *train, "--scale-up-domain", "6"
    )
    # a checkpoint runs no collective: the domain is named as ignored
    checkpoint = ["checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2"]
    result = runner.invoke(
        APP, [*checkpoint, "--system", "gb200-nvl72", "-N", "36", "--scale-up-domain", "36"]
    )
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "the cluster's scale-up domain (--scale-up-domain) ignored" in text
    # and the domain's own notes, which only collectives read, are left out with it
    assert "used as domains of 36" not in text
    # a design that sets its domain refuses another one, and takes its own
    design = tmp_path / "nvl36.yaml"
    design.write_text("name: halves\nsystem: gb200-nvl72\nnodes: 36\nscale_up_domain: 36\n")
    on_file = ["train", "--model", "llama3-70b", "--tp", "4", "--design", str(design)]
    assert _error(*on_file, "--scale-up-domain", "4") == (
        "error: --scale-up-domain: the design already sets it (scale_up_domain); change the "
        "file or drop the option\n"
    )
    assert _json(*on_file, "--scale-up-domain", "36") == _json(*on_file)


def test_checkpoint_summary_says_the_storage_latency_it_adds() -> None:
    # S3 states a 100 ms first-byte latency: the restore row read 1.59 s (8,768 parts of 16 MB
    # at 5,500 requests/s) and the summary 1.69 s, with nothing to say why
    args = ["checkpoint", "--model", "llama3-70b", "--storage", "aws-s3", "--system"]
    result = runner.invoke(APP, [*args, "dgx-h100", "-N", "4"], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    # 140 GB of bf16 weights over 32 GPUs: 4.375 GB each, 274 parts of 16 MB each, 8,768 parts
    # read at S3's 5,500 GET/s per prefix: 1.594 s, + 0.1 s = 1.69 s
    parts = 32 * -(-4.375e9 // 16e6)
    assert parts == 8768
    restore = parts / 5500 + 0.1
    assert f"restore   {restore:.2f} s (bound by requests + 100 ms latency)" in result.stdout
    # 'bound by one request', where it had read 'one request-bound' (a review)
    big = runner.invoke(APP, [*args, "dgx-h100", "-N", "4", "--part-size", "10GB"])
    assert "save      51.6 s (bound by one request + 100 ms latency)" in big.stdout


def test_compare_names_the_layouts_it_skips_without_flags() -> None:
    # 18 DGX H100 = 144 GPUs; tp 1 x pp 12 leaves dp 12, whose 8 ranks per node (stride 1)
    # do not divide 12 into whole groups per node, nor do dp ranks 12 apart (the tp-pp-dp
    # order) tile the 8-GPU nodes: skipped, and said as "dp 12", not "--dp 12", a flag nobody
    # gave. tp 1 x pp 8 x dp 18, refused in the default order for the same reason, is ranked
    # in the tp-pp-dp order: each pipeline fills one node, dp ranks 8 apart
    data = _json("train", "--model", "llama3-70b", "--system", "dgx-h100", "-N", "18", "--compare")
    assert (
        "tp1 pp12 dp12: dp 12 does not divide into groups of 8 per 8-GPU scale-up domain"
        in (data["skipped"])
    )
    assert not [s for s in data["skipped"] if "--" in s]
    ((order,),) = {(x["rank_order"],) for x in data["layouts"] if (x["tp"], x["pp"]) == (1, 8)}
    assert order == "tp-pp-dp"


def test_sequence_parallelism_without_tp_says_it_changes_nothing() -> None:
    args = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "1"]
    plain = _json(*args)
    split = _json(*args, "--sequence-parallel")
    assert split["phases"] == plain["phases"]
    assert (
        "sequence parallelism changes nothing with tp 1: it splits each sequence over the tp "
        "group (--sequence-parallel)"
    ) in split["assumptions"]


def test_a_phase_of_hours_prints_its_likely_range_in_hours() -> None:
    # 300,000 micro-batches: the TP all-reduces take 3.4 h per step; format_time switches to h
    # past 9,999.5 s, which the range's unit table lacked (a KeyError traceback, found by QA)
    args = ["train", "--model", "llama3-70b", "--system", "dgx-h100", "--nodes", "8", "--tp", "8"]
    result = runner.invoke(APP, [*args, "--pp", "4", "--microbatches", "300000"])
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.lstrip().startswith("tp-")]
    assert re.search(r" [\d.]+ h \([\d.]+-[\d.]+\) ", row), row


def test_infer_names_the_field_the_kv_cache_lacks() -> None:
    # layers given, heads not: the cache's size needs the heads, not --layers; and the query
    # heads, not --kv-heads, which had led to a second hint (give --head-dim) once given
    args = ["infer", "--system", "dgx-h100", "--params", "70B", "--layers", "80", "--hidden"]
    result = runner.invoke(APP, [*args, "8192", "--format", "json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["assumptions"]
    assert "memory: KV cache not counted (give --heads)" in notes
    # the hint followed: 80 layers x 2 x 64 heads x 128 x 2 B = 2,621,440 B a token,
    # (1024 + 256) tokens of it over tp 1: 3,355,443,200 B
    followed = runner.invoke(APP, [*args, "8192", "--heads", "64", "--format", "json"])
    assert followed.exit_code == 0, followed.output
    data = json.loads(followed.stdout)
    assert data["totals"]["kv_bytes_per_token"] == 2_621_440
    assert data["memory"]["kv_cache_bytes"] == 3_355_443_200


def test_infer_says_prefill_all_reduces_cross_the_domain_too() -> None:
    # tp 16 on DGX H100 nodes of 8: the prefill's all-reduces run on the same TP group as the
    # decode's and cross the network with them; the warning had named the decode's alone
    args = ["infer", "--model", "llama3-70b", "--system", "dgx-h100", "--tp", "16"]
    result = runner.invoke(APP, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    tiers = {p["name"]: p["tier"] for p in data["phases"]}
    assert tiers == {"decode-tp-allreduce": "scale-out", "prefill-tp-allreduce": "scale-out"}
    assert (
        "tp 16 crosses the 8-GPU scale-up domain: every decode and prefill all-reduce goes "
        "over scale-out"
    ) in data["warnings"]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["infer", "--tp", "8", "--disaggregated"], "the KV cache"),
        # training keeps no KV cache: context parallelism all-gathers the keys and values (it
        # had been told the KV cache needs them)
        (
            ["train", "--nodes", "2", "--seq-len", "8192", "--cp", "2"],
            "context parallelism's all-gather of keys and values",
        ),
    ],
)
def test_a_model_without_heads_is_asked_for_its_heads(args: list[str], why: str) -> None:
    # the KV transfer and context parallelism need the keys and values: --heads gives their
    # heads (one per query head) and, beside --hidden, their size; --kv-heads alone had been
    # asked for, and once given, refused again for want of --head-dim
    shape = ["--system", "dgx-h100", "--params", "70B", "--layers", "80", "--hidden", "8192"]
    result = runner.invoke(APP, [*args, *shape])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {why} needs the model's --heads (one key/value head per query head "
        "unless --kv-heads gives fewer; or a preset with --model)"
    )
    followed = runner.invoke(APP, [*args, *shape, "--heads", "64"])
    assert followed.exit_code == 0, followed.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        # --design states the nodes and refuses --nodes: the hint names the design's
        (
            ["--tp", "8", "--pp", "4", "--dp", "7", "--design", "DESIGN"],
            "248; change --dp or the design's nodes",
        ),
        # zero and one byte are refused alike, by the least capacity taken, as typed (review
        # EC 6: the library, handed the bytes, had said '--gpu-memory 0 B: must be at least 1 GB')
        (
            ["--gpu-memory", "0GiB"],
            "error: --gpu-memory '0GiB' is out of range (at least 1 GB; see",
        ),
        (["--gpu-memory", "1B"], "error: --gpu-memory '1B' is out of range (at least 1 GB; see"),
        (
            ["--gpu-memory", "3TiB"],
            "error: --gpu-memory '3TiB' is out of range (at most 2 TiB; see",
        ),
        # a bare number is quoted as typed too (it had been stripped of its blanks and quotes)
        (["--gpu-memory", " 80"], "error: --gpu-memory ' 80' has no unit: write e.g. 80GiB"),
        (
            ["--backward-time", "1e-30s"],
            "error: --backward-time '1e-30s' is out of range (at least 1 ns; see",
        ),
        (
            ["--backward-time", "300h"],
            "error: --backward-time '300h' is out of range (at most 1000000 s; see",
        ),
        (
            # 1e6 s is 277.8 h: the bound said in hours had read 'at most 278 h' (review EI 2)
            ["--backward-time", "278h"],
            "error: --backward-time '278h' is out of range (at most 1000000 s; see",
        ),
        # the parameter count is named by its option, and quoted as typed below a million
        (["--params", "-1"], "error: --params '-1' must be positive"),
        (["--params", "350K"], "error: --params '350K' is fewer than a million parameters"),
        # NaN is not a number first, before it lacks a unit
        (["--backward-time", "nan"], "--backward-time 'nan' is not a number (NaN; see"),
    ],
)
def test_train_refusals_say_what_applies(args: list[str], words: str) -> None:
    design = Path(__file__).resolve().parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    argv = ["train", "--model", "llama3-70b"] + [str(design) if a == "DESIGN" else a for a in args]
    if "--design" not in args:
        argv += ["--system", "dgx-h100"]
    result = runner.invoke(APP, argv)
    assert result.exit_code == 2
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_infer_words_for_no_communication_idle_groups_and_a_group_cache() -> None:
    """One GPU printed an empty phase table and 'per token 0 us (0-0)'; one idle group read
    '1 attention group decode nothing'; with ep > 1 a request's cache is on its attention
    group's GPUs, not 'over all GPUs'."""
    env = {"COLUMNS": "200"}
    alone = runner.invoke(APP, ["infer", "--model", "llama3-8b", "--system", "dgx-h100"], env=env)
    assert alone.exit_code == 0, alone.output
    assert "communication   none: one GPU per instance, no collective to cost" in alone.stdout
    assert "0 us (0-0)" not in alone.stdout
    assert "size/GPU" not in alone.stdout
    idle = runner.invoke(
        APP,
        [
            "infer",
            "--model",
            "mixtral-8x7b",
            "--tp",
            "2",
            "--ep",
            "4",
            "--batch",
            "3",
            "--system",
            "dgx-h100",
        ],
        env=env,
    )
    assert idle.exit_code == 0, idle.output
    flat = " ".join(idle.output.split())
    assert "1 attention group decodes nothing" in flat
    assert "prompt over the GPUs of the attention group serving it" in flat


def test_compare_json_carries_each_layout_range() -> None:
    """The compare table ranks 4.22 s above 4.27 s; their ranges overlap, and the JSON had none."""
    result = runner.invoke(
        APP,
        [
            "train",
            "--model",
            "llama3-8b",
            "--system",
            "dgx-h100",
            "-N",
            "2",
            "--compare",
            "--tflops",
            "400",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    layouts = json.loads(result.stdout)["layouts"]
    assert layouts
    for layout in layouts:
        for name in ("comm_s", "exposed_s", "step_s"):
            low, high = layout[f"{name}_range"]
            assert low <= layout[name] <= high


def test_a_narrow_page_says_which_phase_columns_it_leaves_out() -> None:
    """The phase table dropped its algorithm and tier columns at 60 columns without a word."""
    args = ["infer", "--model", "llama3-70b", "--tp", "8", "--system", "dgx-h100"]
    narrow = " ".join(runner.invoke(APP, args, env={"COLUMNS": "60"}).stdout.split())
    said = re.search(
        r"the algorithm, tier and each x count columns left out at 60 columns \((\d+) or more",
        narrow,
    )
    assert said is not None
    wide = runner.invoke(APP, args, env={"COLUMNS": said.group(1)}).stdout
    assert "left out at" not in wide
    header = next(line for line in wide.splitlines() if line.lstrip().startswith("phase"))
    assert "tier" in header
    assert "algorithm" in header


_LLAMA_70B = ["--model", "llama3-70b", "--system", "dgx-h100"]
_PHASES_AT_60 = "the algorithm, tier and each x count columns"
#: Each workload command, and what its table leaves out at 60 columns, as the footnote says it
#: (None: nothing, the table fits once its columns close up)
_NARROW_WORKLOADS: dict[str, tuple[str, str | None]] = {
    "train": ("train --model llama3-70b --system dgx-h100 -N 16", _PHASES_AT_60),
    "train-tp-pp": (
        "train --model llama3-70b --system dgx-h100 -N 16 --tp 8 --pp 4",
        _PHASES_AT_60,
    ),
    "train-ep": ("train --model mixtral-8x7b --system dgx-h100 -N 4 --ep 8", _PHASES_AT_60),
    "train-cp": (
        "train --model llama3-405b --system dgx-h100 -N 64 --tp 8 --pp 8 --cp 2 "
        "--sequence-parallel --zero 1 --tflops 400",
        "the algorithm, tier, each x count and ranks columns",
    ),
    "compare": ("train --model deepseek-v3 --system gb200-nvl72 -N 18 --compare", None),
    "infer": ("infer --model llama3-70b --system dgx-h100 --tp 8", _PHASES_AT_60),
    "infer-ep": ("infer --model deepseek-v3 --system dgx-h100 -N 2 --tp 8 --ep 2", _PHASES_AT_60),
    "checkpoint": (
        "checkpoint --model llama3-70b --system dgx-h100 -N 16 --storage nvmeof-target --optimizer",
        "the rate column is",
    ),
}
#: A footnote in render.stream.left_out's words: what, the page, the width that shows them all
_LEFT_OUT = re.compile(
    r"(the [^;]*?) left out at (\d+) columns \((\d+) or more show (?:it|them); --format json "
    r"has every field\)"
)


@pytest.mark.parametrize("name", list(_NARROW_WORKLOADS))
def test_workload_output_fits_a_narrow_page_and_says_what_it_leaves_out(name: str) -> None:
    """At COLUMNS=60 train printed lines of 73 to 82 characters, infer 76, checkpoint 68 and a
    layout search 73, where docs/architecture.md said every line fits. At 60 and 80 columns
    every line now fits the page, every phase and layout is printed whole, and one footnote
    names the columns left out (the algorithm first, then the tier, each time x count and the
    ranks; the checkpoint's rate) with the width that shows them all: at that width nothing is
    left out, a column narrower the footnote says so."""
    command, at_60 = _NARROW_WORKLOADS[name]
    argv = command.split()

    def page(columns: int) -> tuple[list[str], str]:
        result = runner.invoke(APP, argv, env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines(), " ".join(result.stdout.split())

    data = _json(*argv)
    for columns in (60, 80):
        lines, flat = page(columns)
        assert max(len(line) for line in lines) <= columns, (columns, max(lines, key=len))
        assert "…" not in flat
        tokens = set(flat.split())
        for phase in data.get("phases", []):
            assert phase["name"] in tokens, (columns, phase["name"])
        for layout in data.get("layouts", []):  # 'rank tp pp dp ep' starts the layout's row
            row = [str(layout[key]) for key in ("rank", "tp", "pp", "dp", "ep")]
            assert any(line.split()[:5] == row for line in lines), (columns, row)
        said = _LEFT_OUT.search(flat)
        if columns == 60:
            assert (said[1] if said else None) == at_60, flat
        if said is None:
            continue
        assert int(said[2]) == columns
        full = int(said[3])
        check_left_out_below(page, full)


def test_a_narrow_checkpoint_leaves_out_the_rate_before_the_limit_wraps_word_by_word() -> None:
    """At 60 columns an S3 checkpoint kept its rate column and squeezed the limit beside it to
    its longest word (10 characters), so its six rows took 48 lines; the rate now goes where
    the limit would be narrower than 28 characters: the limit gets 20 and the rows 26 lines,
    and the footnote names the 78 columns that show the rate with a 28-character limit."""
    argv = ["checkpoint", "--model", "llama3-405b", "--storage", "aws-s3", "--nodes", "16"]
    argv += ["--system", "dgx-h100", "--storage-link", "roce-400g"]
    narrow = runner.invoke(APP, argv, env={"COLUMNS": "60"})
    assert narrow.exit_code == 0, narrow.output
    lines = narrow.stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.lstrip().startswith("─"))
    body = lines[rule + 1 : lines.index("", rule)]
    assert len(body) == 26
    assert lines[rule - 1].split() == ["transfer", "bytes", "bound", "time", "limit"]
    assert body[0].endswith(" 16 nodes x 1 x")
    said = " ".join(narrow.stdout.split())
    assert "the rate column is left out at 60 columns (78 or more show it;" in said
    wide = runner.invoke(APP, argv, env={"COLUMNS": "78"}).stdout.splitlines()
    header = next(line for line in wide if line.lstrip().startswith("transfer"))
    assert header.split() == ["transfer", "bytes", "bound", "rate", "time", "limit"]
    assert not any("left out" in line for line in wide)


def test_a_layout_search_too_wide_when_closed_up_leaves_out_the_micro_batches() -> None:
    """DeepSeek-V3 on 16,384 GPUs with cp 2: the search's table with every column, one space
    apart, needs 63 columns (ep among them; a dense model's search, which has no ep column,
    fits); a 60-column page leaves out M, which the title works out from dp, and says so."""
    argv = ["train", "--model", "deepseek-v3", "--system", "dgx-h100", "-N", "2048"]
    argv += ["--compare", "--cp", "2", "--global-batch", "16384", "--tflops", "400"]
    result = runner.invoke(APP, argv, env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 60, max(lines, key=len)
    header = next(line.split() for line in lines if line.split()[:2] == ["#", "tp"])
    assert header[:6] == ["#", "tp", "cp", "pp", "dp", "ep"]
    assert "M" not in header
    said = re.search(
        r"the M column \(micro-batches: see the title\) is left out at 60 columns \((\d+) or "
        r"more show it; --format json has every field\)",
        " ".join(result.stdout.split()),
    )
    assert said is not None, result.stdout
    assert said[1] == "63"
    wide = runner.invoke(APP, argv, env={"COLUMNS": said[1]}).stdout
    assert "left out" not in wide
    assert "M" in next(line.split() for line in wide.splitlines() if line.split()[:1] == ["#"])


def test_a_layout_search_title_keeps_each_number_with_its_unit() -> None:
    """The search's title wraps at the table's width: at 60 to 76 columns rich had ended a line
    with "dgx-h100's 80" and begun the next with "GiB per GPU"."""
    argv = ["train", *_LLAMA_70B, "-N", "16", "--compare", "--tflops", "400"]
    for columns in range(60, 81):
        result = runner.invoke(APP, argv, env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        assert "80.0 GiB per GPU" in " ".join(result.stdout.split())
        for line, after in itertools.pairwise(result.stdout.splitlines()):
            if line.split() and after.split():
                ends_a_number = re.fullmatch(r"[\d.,]+", line.split()[-1]) is not None
                assert not (ends_a_number and after.split()[0] in UNITS), (columns, line, after)


def test_an_expert_degree_that_does_not_divide_a_derived_dp_names_no_dp_flag() -> None:
    """Mixtral on 2 DGX H100 with tp 8: dp = 16 / 8 = 2, derived, not given; ep 4 does not
    divide it. The refusal had said 'must divide --dp 2' to a caller who gave no --dp."""
    message = _error(
        "train",
        "--model",
        "mixtral-8x7b",
        "--ep",
        "4",
        "--tp",
        "8",
        "--nodes",
        "2",
        "--system",
        "dgx-h100",
    )
    assert message == (
        "error: --ep '4' must divide the data-parallel degree, dp = 2 = GPUs / (tp x cp x pp) "
        "(expert groups are carved out of the data-parallel ranks; see 'ibcalc train --help')\n"
    )


def test_disaggregated_serving_on_a_nic_less_node_names_the_missing_nic() -> None:
    """One L40S a node and no scale-out NIC: disaggregated serving had first been refused with
    'a collective needs at least 2 GPUs (--nodes, --gpus-per-node)', and only with --nodes 2
    named the blocker; it is named at once. A DGX H100 still serves it on 2 nodes."""
    assert _error("infer", "--model", "llama3-8b", "--system", "l40s-pcie", "--disaggregated") == (
        "error: l40s-pcie has no scale-out NIC; give --inter and --nics-per-node to join 2 of "
        "them\n"
    )
    data = _json("infer", "--model", "llama3-8b", "--system", "dgx-h100", "--disaggregated")
    assert [p["name"] for p in data["phases"]] == ["kv-transfer"]
    # an instance of 2 GPUs needs 2 such nodes, whatever splits it (review BE: tp and ep had
    # been told to add GPUs, as train is not); one GPU needs no collective
    for split in (["--tp", "2"], ["--pp", "2"], ["--tp", "1", "--ep", "2"]):
        model = "mixtral-8x7b" if "--ep" in split else "llama3-8b"
        assert _error("infer", "--model", model, "--system", "l40s-pcie", *split) == (
            "error: l40s-pcie has no scale-out NIC; give --inter and --nics-per-node to join 2 "
            "of them\n"
        )
    single = _json("infer", "--model", "llama3-8b", "--system", "l40s-pcie", "--tp", "1")
    assert single["phases"] == []
    # with --nodes too few the missing NIC is named first, as no node count mends it (review
    # BH: 'a collective needs at least 2 GPUs'; review BI: '--nodes 4', then the NIC); a DGX
    # H100 is told the nodes it needs
    base = ("infer", "--model", "llama3-8b", "--nodes", "1")
    for split, nodes in (
        (["--tp", "2"], 2),
        (["--disaggregated"], 2),
        (["--tp", "2", "--disaggregated"], 4),
    ):
        assert _error(*base, "--system", "l40s-pcie", *split) == (
            "error: l40s-pcie has no scale-out NIC; give --inter and --nics-per-node to join "
            f"{nodes} of them\n"
        )
    assert _error(*base, "--system", "dgx-h100", "--disaggregated") == (
        "error: --disaggregated puts prefill and decode on different nodes, and the cluster "
        "has 1 node: give --nodes 2 or more\n"
    )
    assert _error(*base, "--system", "dgx-h100", "--tp", "16") == (
        "error: tp x ep x pp = 16 GPUs is more than the cluster's 8 (--nodes)\n"
    )
    # an instance over the GPU limit is said so, not as a --nodes nobody gave (review BJ)
    assert _error(*base, "--system", "l40s-pcie", "--tp", "2", "--pp", "600000") == (
        "error: tp x ep x pp = 1200000 GPUs is more than the cluster's 1 (--nodes)\n"
    )
    # and without --nodes (review BK: '--nodes 1200000 is out of range')
    assert _error(*base[:3], "--system", "l40s-pcie", "--tp", "2", "--pp", "600000") == (
        "error: tp x ep x pp = 1200000 GPUs is more than the cluster's 1 (--nodes)\n"
    )


def test_a_latent_kv_cache_is_said_to_be_each_gpus_copy() -> None:
    """DeepSeek-V3's latent cache (70,272 B a token) is kept whole on every tensor-parallel
    rank: 4,096 x 70,272 B = 274 MiB is each GPU's copy, which the line had called 'over all
    GPUs', the words a GQA model's split cache takes (a review); with pp 2 each GPU holds its
    stage's part only, and the line says so."""

    def kv_line(*extra: str) -> str:
        args = ["infer", "--model", "deepseek-v3", "--tp", "8", "--system", "hgx-h200"]
        out = runner.invoke(APP, [*args, "--prompt", "4096", *extra], env={"COLUMNS": "300"})
        return next(line for line in out.stdout.splitlines() if "KV cache" in line)

    # 4096 x 70,272 B = 287,834,112 B = 274.5 MiB, printed 274 MiB
    assert kv_line().endswith(
        "274 MiB for one request's 4,096-token prompt on each of the 8 tensor-parallel GPUs "
        "(a latent cache is not split)"
    )
    assert kv_line("--pp", "2", "--nodes", "2").endswith(
        "274 MiB for one request's 4,096-token prompt over the 2 pipeline stages, each stage's "
        "part whole on each of its 8 tensor-parallel GPUs (a latent cache is not split over tp)"
    )


def test_one_kv_sender_is_not_said_to_send_at_the_same_time() -> None:
    """With tp 1 one GPU ships the KV cache: its notes had read 'the NICs of the one GPU of one
    TP group on a node' and 'ships it ... at the same time'."""
    data = _json("infer", "--model", "llama3-8b", "--system", "dgx-h100", "--disaggregated")
    notes = " ".join([*data["assumptions"], *data["phases"][0]["assumptions"]])
    assert (
        "the KV transfer uses 1 NIC: one GPU's share of its node's 8 NICs (--kv-nics to change)"
        in notes
    )
    assert "one GPU ships it through 1 x ndr (1 NIC)" in notes
    assert "at the same time" not in notes
    # 8 GPUs share a p4d's 4 NICs: the one used is a whole NIC, more than a GPU's 4 / 8 share
    # 6 NICs among 8 GPUs give tp 2 a share of 1.5, rounded down to 1 whole NIC
    six = _json(
        "infer",
        "--model",
        "llama3-8b",
        "--system",
        "dgx-h100",
        "--disaggregated",
        "--tp",
        "2",
        "--nics-per-node",
        "6",
    )
    assert (
        "the KV transfer uses 1 NIC: the 2 GPUs' share of the node's 6 NICs among 8 GPUs (1.5), "
        "rounded down to whole NICs (--kv-nics to change)"
    ) in six["assumptions"]
    p4d = _json("infer", "--model", "llama3-8b", "--system", "aws-p4d", "--disaggregated")
    assert (
        "the KV transfer uses 1 NIC: a whole one, more than one GPU's share of the node's 4 NICs "
        "among 8 GPUs (0.5) (--kv-nics to change)"
    ) in p4d["assumptions"]


#: The hint that ends checkpoint's refusal of an option's value, inside its range's parenthetical.
CK = "; see 'ibcalc checkpoint --help')"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--part-size", "1B"], f"error: --part-size '1B' is out of range (at least 4 KiB{CK}"),
        (
            ["--part-size", "2TiB"],
            f"error: --part-size '2TiB' is out of range (at most 1 TiB{CK}",
        ),
        (
            ["--storage-fabric", "1kb/s"],
            f"error: --storage-fabric '1kb/s' is out of range (at least 1 MB/s{CK}",
        ),
    ],
)
def test_checkpoint_refuses_a_size_or_rate_out_of_range_as_typed(
    args: list[str], line: str
) -> None:
    """Review EC 6: the library, handed the bytes, had echoed '--part-size 1 B' and '1kb/s' as
    '--storage-fabric 0.125 kB/s'."""
    argv = ["checkpoint", "--storage", "aws-s3", "--model", "llama3-8b", *args]
    assert _error(*argv) == f"{line}\n"


#: The refusal of a scale-up link as a client link, and an alias of nvlink4 named as typed.
UP = "is a scale-up link; use a scale-out or WAN link"
ALIAS = "'NVLink-H100' (nvlink4)"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            # S3's least part of a multipart upload is 5 MiB: 1 MB is 10^6 B, under 5 x 2^20
            ["--params", "70B", "--part-size", "1MB"],
            "--part-size '1MB' is less than aws-s3 takes as a part of a larger upload (5 MiB; "
            "only the last part may be smaller): give a --part-size of at least 5 MiB",
        ),
        (
            # S3's largest part is 5 GiB = 5.37 GB: 10 GB is more
            ["--params", "70B", "--part-size", "10GB"],
            "--part-size '10GB' is more than aws-s3 takes in one write request (5 GiB): give "
            "a smaller --part-size",
        ),
        (
            ["--params", "70B", "--part-size=10GB", "--storage-link", "ndr"],
            "--part-size '10GB' is more than aws-s3 takes in one write request (5 GiB): give "
            "a smaller --part-size",
        ),
        (["--params", "70B", "--storage-link", "nvlink4"], f"--storage-link 'nvlink4' {UP}"),
        # an alias: named as typed, its id beside it
        (["--params", "70B", "--storage-link", "NVLink-H100"], f"--storage-link {ALIAS} {UP}"),
    ],
)
def test_a_checkpoint_refused_while_it_runs_quotes_the_value_as_typed(
    args: list[str], line: str
) -> None:
    """A value the library refuses, given the bytes or the link, is quoted as typed with the
    command's hint, as a refusal while options are read is (docs/architecture.md, "Exit
    codes"): '--part-size 1 MB is less than ...' had shown the size reformatted, no hint."""
    argv = ["checkpoint", "--storage", "s3", *args]
    assert _error(*argv) == f"error: {line} (see 'ibcalc checkpoint --help')\n"


#: Commands refused while they run (as typed, then the refusal without the hint): a link of
#: another kind, an alias of nvlink4 as the WAN (named as typed, the id beside it), more KV
#: NICs than the DGX H100 node of a tp 8 group has (8), a degree or count past the model's or
#: the cluster's.
REFUSED_WHILE_RUNNING = {
    "train --model llama3-8b --inter nvlink4": (
        "--inter 'nvlink4' is a scale-up link; use a scale-out link"
    ),
    "infer --model llama3-8b --intra ndr": (
        "--intra 'ndr' is a scale-out link; use a scale-up or PCIe link"
    ),
    "train --model llama3-8b --system dgx-h100 -N 2 --sites 2 --wan NVLink-H100": (
        "--wan 'NVLink-H100' (nvlink4) is a scale-up link; use a WAN or scale-out link"
    ),
    "infer --model llama3-70b --system dgx-h100 -N 2 --tp 8 --disaggregated --kv-nics 9": (
        "--kv-nics '9' is more than the 8 NICs of a node"
    ),
    # Llama 3 8B has 32 layers, Mixtral 8x7B 8 experts; 2 DGX H100 nodes 16 GPUs
    "train --model llama3-8b --system dgx-h100 -N 16 --pp 64": (
        "--pp '64' is more than the model's 32 layers: every pipeline stage holds at least one "
        "layer"
    ),
    # Llama 3 70B has 64 heads: tp 128 on 16 DGX H100 nodes (128 GPUs) had been priced, with a
    # warning, each GPU half a head; and a custom model's 40 heads over tp 16
    "train --model llama3-70b --system dgx-h100 -N 16 --tp 128": (
        "--tp '128' does not divide the model's 64 attention heads: Megatron-LM splits them over "
        "the tp group"
    ),
    "train --params 10B --layers 40 --hidden 5120 --heads 40 --seq-len 4096 --system dgx-h100 "
    "-N 8 --tp 16": (
        "--tp '16' does not divide the model's 40 attention heads: Megatron-LM splits them over "
        "the tp group"
    ),
    "train --model mixtral-8x7b --system dgx-h100 -N 2 --ep 3": (
        "--ep '3' does not divide the model's 8 experts"
    ),
    "infer --model mixtral-8x7b --system dgx-h100 --ep 3": (
        "--ep '3' does not divide the model's 8 experts"
    ),
    "checkpoint --model llama3-8b --storage ddn-ai400x2 --system dgx-h100 --replicas 17": (
        "--replicas '17' is more than the cluster's 16 GPUs: a data-parallel replica holds at "
        "least one GPU"
    ),
}


@pytest.mark.parametrize("typed", list(REFUSED_WHILE_RUNNING))
def test_a_value_refused_while_a_workload_runs_is_quoted(typed: str) -> None:
    """'--inter nvlink4 is a scale-up link; use a scale-out link' had come unquoted and without
    the hint (docs/architecture.md, "Exit codes"); '--pp 64', '--ep 3' and '--replicas 17'
    too."""
    args = typed.split()
    line = REFUSED_WHILE_RUNNING[typed]
    assert _error(*args) == f"error: {line} (see 'ibcalc {args[0]} --help')\n"


def test_a_layout_refused_while_train_runs_quotes_the_value_as_typed() -> None:
    """train's refusal of --tp against the domain had been re-raised without the value's
    place in it: '--tp 8 does not divide ...', no hint; '08' is the 8 it reads."""
    argv = ["train", "--model", "llama3-70b", "--system", "gb200-nvl72", "-N", "36"]
    assert _error(*argv, "--tp", "08", "--scale-up-domain", "36") == (
        "error: --tp '08' does not divide the 36-GPU scale-up domain: some tp groups would "
        "straddle two domains (see 'ibcalc train --help')\n"
    )


def test_a_count_derived_from_the_one_typed_is_not_quoted_as_typed() -> None:
    """--dp 6 over 2 sites reduces within each site over 3 dp ranks (tp 1 x pp 8 on 6 DGX H100,
    48 GPUs), which do not divide the 8-GPU domain: the library refuses the 3 under --dp. The
    refusal had quoted the 6 typed in its place ("--dp '6' does not divide ..."); it keeps the
    library's 3, as where --dp is not typed."""
    argv = ["train", "--model", "llama3-70b", "--system", "dgx-h100", "-N", "6", "--tp", "1"]
    argv += ["--pp", "8", "--sites", "2", "--wan", "wan-100g", "--hierarchical"]
    refusal = (
        "error: --dp 3 does not divide the 8-GPU scale-up domain: some dp groups would straddle "
        "two domains\n"
    )
    assert _error(*argv, "--dp", "6") == refusal
    assert _error(*argv) == refusal
    # the count typed, written otherwise, is still quoted as typed
    assert _error(*argv[:-1], "--dp", "6.0") == (
        "error: --dp '6.0' does not divide the 8-GPU scale-up domain: some dp groups would "
        "straddle two domains (see 'ibcalc train --help')\n"
    )


@pytest.mark.parametrize(
    "command", [["train"], ["infer"], ["checkpoint", "--storage", "ddn-ai400x2"]]
)
def test_a_parameter_count_past_the_limit_names_the_limit_it_is_held_to(command: list[str]) -> None:
    """A model of at most 10^14 parameters (ModelSpec.params: 4 B of fp32 gradient each stays
    under the 1 PiB a collective takes). The parser had said 'the limit is 10^15' and let
    1e15 through to a field error that echoed it as '1e+15' (a review)."""
    for given in ("1e20", "1e15", "5e14"):
        assert _error(*command, "--params", given, "--system", "dgx-h100").strip() == (
            f"error: --params '{given}' is absurdly large (the limit is 10^14; "
            f"see 'ibcalc {command[0]} --help')"
        )


def test_a_layout_search_names_the_files_laid_over_the_built_in_ones(tmp_path: Path) -> None:
    """--compare prices every layout with --cost-params; it says so once, in JSON `overrides`
    and after the table (review BZ: it had named neither file)."""
    cost = tmp_path / "site.cost-params.yaml"
    cost.write_text(
        "schema: ibcalc-cost-params/1\ncalibrated:\n"
        "  nvls_tree_factor: {value: 0.8, assumed: a test}\n",
        encoding="utf-8",
    )
    args = ["train", "--model", "llama3-8b", "--system", "aws-p5", "--nodes", "2", "--compare"]
    data = _json(*args, "--cost-params", str(cost))
    assert data["overrides"] == [f"cost parameters: {cost}"]
    assert _json(*args)["overrides"] == []
    table = runner.invoke(APP, [*args, "--cost-params", str(cost)])
    assert f"cost parameters: {cost}" in " ".join(table.stdout.split())


def test_compare_names_the_layouts_that_take_sharp() -> None:
    """--compare with --sharp had said nothing of it (review CR L4): the layouts whose step
    runs an all-reduce on SHARP are named by their rows, the rows JSON lists."""
    args = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "4", "--compare"]
    data = _json(*args, "--sharp")
    rows = [i for i, r in enumerate(data["layouts"], start=1) if r["dp"] == 32 or r["tp"] == 32]
    assert rows
    assert len(rows) < len(data["layouts"])
    assert data["search_notes"] == [
        f"SHARP is on, but only layouts #{', #'.join(map(str, rows))} run an all-reduce on it "
        "(a single run of any other layout says why)"
    ]
    assert _json(*args)["search_notes"] == []


def test_checkpoint_rates_past_a_terabyte_a_second_print_in_tb_s() -> None:
    """1,000 DGX H100 nodes' NICs: 1000 x 1 NDR at 48.75 GB/s = 48,750 GB/s, printed '48750
    GB/s' (review DN); the rate column goes on to TB/s as the bytes column goes to TB, and the
    limit text keeps the NIC's own GB/s."""

    def checkpoint(nodes: int) -> Result:
        return runner.invoke(
            APP,
            ["checkpoint", "--model", "llama3-8b", "--system", "dgx-h100", "--nodes", str(nodes),
             "--storage", "aws-s3"],
            env={"COLUMNS": "200"},
        )  # fmt: skip

    result = checkpoint(1000)
    assert result.exit_code == 0, result.output
    (save,) = [line for line in result.stdout.splitlines() if line.startswith(" save ")]
    assert f"client NICs  {1000 * 48.75e9 / 1e12:.1f} TB/s" in save
    assert "1,000 nodes x 1 x ndr at 48.8 GB/s each" in save
    assert "48750" not in result.stdout
    # and on to PB/s: 100,000 nodes' NICs, 4,875 TB/s, had read '4875 TB/s' (review DP)
    more = checkpoint(100000)
    assert f"client NICs  {100000 * 48.75e9 / 1e15:.2f} PB/s" in more.stdout


def test_checkpoint_rates_and_limits_print_in_one_unit_and_counts_with_one_separator() -> None:
    """A 1 PB/s storage fabric (10^15 B/s): its rate printed '1.00 PB/s' and its limit
    '1000000 GB/s' in one row; both read 1.00 PB/s (140 GB over it: 1.4e11 / 1e15 = 140 us).
    125,000 nodes had printed as '125000 nodes' beside '1,000,000 parts' of one table."""
    args = ["checkpoint", "--params", "70B", "--system", "dgx-h100", "--storage-link", "ndr"]
    fabric = runner.invoke(
        APP, [*args, "--storage", "ddn-ai400x2", "--storage-fabric", "1PB/s"],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert fabric.exit_code == 0, fabric.output
    row = next(line for line in fabric.stdout.splitlines() if " fabric " in line)
    assert row.split() == [
        *("fabric", "1.00", "PB/s", "140", "us", "1.00", "PB/s"),
        *("between", "clients", "and", "storage"),
    ]
    # 70B in bf16 on 125,000 x 8 ranks: 140 GB / 10^6 = 140 kB a rank, one 16 MB part each
    many = runner.invoke(
        APP, [*args, "--storage", "aws-s3", "-N", "125000"], env={"COLUMNS": "200"}
    )
    assert many.exit_code == 0, many.output
    assert "from 125,000 nodes" in many.stdout
    assert "125,000 nodes x 1 x ndr at 48.8 GB/s each" in many.stdout
    assert "1,000,000 parts of 140 kB" in many.stdout
    assert "125000" not in many.stdout


def test_checkpoint_replicas_past_a_thousand_print_with_the_separator() -> None:
    """The restore's note had said '20000 data-parallel replicas' below a table of '2,000 x
    ddn-ai400x2' and '125,000 nodes' (125,000 x 8 = 10^6 GPUs hold 20,000 replicas)."""
    args = ["checkpoint", "--params", "70B", "--system", "dgx-h100", "-N", "125000"]
    args += ["--storage", "ddn-ai400x2", "--storage-units", "2000", "--replicas", "20000"]
    result = runner.invoke(APP, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "restore: the weights are read by each of 20,000 data-parallel replicas" in (
        result.stdout
    )
    assert "20000" not in result.stdout


def test_compare_says_one_rate_serves_every_layout() -> None:
    """--tflops prices every layout's compute at one rate, whatever the shape of its matrix
    multiplies: DeepSeek-V3 on 32 DGX H100 at 300 TFLOP/s ranks tp 8, pp 32, ep 1 first, its
    experts split 8 ways, which DeepSeek did not train with (pp 16, ep 64, no tp). The search
    had not said so (review DN); it does once, in text and JSON, and not without --tflops."""
    args = ["train", "--model", "deepseek-v3", "--system", "dgx-h100", "--nodes", "32",
            "--sequence-parallel", "--zero", "1", "--compare"]  # fmt: skip
    data = _json(*args, "--tflops", "300")
    first = data["layouts"][0]
    assert (first["tp"], first["pp"], first["ep"]) == (8, 32, 1)
    (said,) = [n for n in data["search_notes"] if n.startswith("--tflops serves every layout")]
    assert "(a high tp, experts split across a tensor-parallel group rather than spread by ep)" in (
        said
    )
    assert said.endswith("read its step time as a lower bound")
    assert not [n for n in _json(*args)["search_notes"] if n.startswith("--tflops")]


def test_checkpoint_says_why_it_needs_a_storage_link(capsys: pytest.CaptureFixture[str]) -> None:
    """8 x RTX 5090 boxes have no scale-out NIC, so a checkpoint needs --storage-link; the
    refusal had said only 'give the client NIC for storage (--storage-link)'."""
    base = ["checkpoint", "--model", "llama3-8b", "--storage", "nvmeof-target"]
    assert main_error([*base, "--system", "rtx5090-8"], capsys) == (
        "error: rtx5090-8 has no scale-out NIC to reach storage through: give the client NIC "
        "for storage (--storage-link)\n"
    )
    # a shape alone names no NIC: the node may have one (two nodes are priced on an ndr NIC)
    assert main_error([*base, "--gpus-per-node", "4", "--intra", "pcie5"], capsys) == (
        "error: no scale-out NIC is named to reach storage through (--inter or --system names "
        "the cluster's): give the client NIC for storage (--storage-link)\n"
    )


def test_compare_memory_column_keeps_three_figures() -> None:
    """The mem GiB column printed 23.98 GiB as "24" and 39.97 GiB as "40" beside 19.6 and 32.7,
    where every time in the table keeps its trailing zeros (units.format_number, review DG)."""
    args = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "--nodes", "2",
            "--compare", "--global-batch", "24", "--tflops", "400"]  # fmt: skip
    by_layout = {
        (r["tp"], r["pp"], r["dp"]): r["memory_per_gpu_bytes"] / 2**30
        for r in _json(*args)["layouts"]
    }
    assert by_layout[4, 4, 1] == pytest.approx(23.98, abs=0.005)
    assert by_layout[2, 4, 2] == pytest.approx(39.97, abs=0.005)
    result = runner.invoke(APP, args, env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    # rows: #, tp, pp, dp, M, exposed, comm, step, mem GiB (no ep: a dense model); each time
    # is two words
    mem = {}
    for line in result.stdout.splitlines():
        cells = line.split()
        if len(cells) >= 12 and cells[0].isdigit() and cells[1].isdigit():
            mem[int(cells[1]), int(cells[2]), int(cells[3])] = cells[11]
    assert mem[4, 4, 1] == "24.0"
    assert mem[2, 4, 2] == "40.0"
    assert mem[8, 2, 1] == "19.6"


def _header(stdout: str) -> list[str]:
    """The column names of a layout search's table."""
    return next(line.split() for line in stdout.splitlines() if line.split()[:2] == ["#", "tp"])


def test_compare_leaves_out_the_ep_column_where_every_layout_has_ep_1() -> None:
    """A dense model's search had printed an ep column of 1 on every row: the table leaves it
    out (the JSON keeps ep for every layout), as it does cp; a mixture of experts keeps it."""
    dense = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "2", "--compare"]
    text = runner.invoke(APP, dense, env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert _header(text.stdout) == [
        "#", "tp", "pp", "dp", "M", "exposed", "comm", "step", "mem", "GiB", "note",
    ]  # fmt: skip
    assert {layout["ep"] for layout in _json(*dense)["layouts"]} == {1}
    moe = ["train", "--model", "mixtral-8x7b", "--system", "dgx-h100", "-N", "2", "--compare"]
    text = runner.invoke(APP, moe, env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "ep" in _header(text.stdout)


def test_compare_says_once_what_hierarchical_does_on_one_site() -> None:
    """--hierarchical reduces within each site first, so on one site it changes nothing: a
    single run says so, and --compare had said nothing in its text or JSON (review CN)."""
    args = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "2", "--compare"]
    said = "--hierarchical applies across sites only; one site: flat collectives"
    text = runner.invoke(APP, [*args, "--hierarchical"], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert f"note: {said}" in text.stdout
    data = json.loads(runner.invoke(APP, [*args, "--hierarchical", "--format", "json"]).stdout)
    assert data["search_notes"] == [said]
    plain = json.loads(runner.invoke(APP, [*args, "--format", "json"]).stdout)
    assert plain["search_notes"] == []
    # and how one --backward-time is read for every layout (review CQ)
    timed = json.loads(
        runner.invoke(APP, [*args, "--backward-time", "2s", "--format", "json"]).stdout
    )
    assert timed["search_notes"] == [
        "--backward-time serves every layout as an evenly split step's, scaled by each layout's "
        "busiest stage where its layers do not split evenly (x ceil(L / pp) x pp / L); a single "
        "run takes it as its own layout's, as measured"
    ]


def test_a_ring_phase_past_the_simple_fit_says_so() -> None:
    """128 x p5 (1,024 ranks), ZeRO-1: the data-parallel reduce-scatter and all-gather of the
    whole 2 GB run ring/Simple over EFA, past the 64 ranks Simple's handshake count is fitted
    on; their ranges reach down to the per-step reading, and each phase now says why (review
    DL: the ranges had moved with no word); the tensor-parallel NVLS phase does not. (ZeRO-3
    had served here; its per-layer 62.5 MB exchanges run PAT.)"""
    result = CliRunner().invoke(
        APP,
        ["train", "--model", "llama3-8b", "--system", "aws-p5", "-N", "128", "--tp", "8",
         "--zero", "1", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    phases = {p["name"]: p for p in json.loads(result.stdout)["phases"]}
    hint = "a ring in Simple over efa-v2 exposes its transport latency up to 8 times a hop"
    for name in ("dp-reducescatter", "dp-allgather"):
        said = [a for a in phases[name]["assumptions"] if a.startswith(hint)]
        assert len(said) == 1, name
        assert "for 128 ranks that is an extrapolation" in said[0]
    assert not any(a.startswith(hint) for a in phases["tp-allreduce"]["assumptions"])


def test_collective_phase_bytes_are_whole_numbers_in_json() -> None:
    """A collective phase's ``bytes_per_gpu`` is the nccl-tests size its estimate ran, what
    ``ibcalc allreduce`` prints as the integer ``size_bytes``; the phases had printed it as a
    float (``17500000000.0``), which a consumer reading the field as an integer (Go's int64,
    serde's u64) refuses. llama3-70b in bf16 over dp 16: 70e9 x 2 B = 140 GB of gradients,
    17.5e9 B per GPU with tp 8; a decode all-reduce of 1 token x 8192 x 2 B = 16 KiB."""
    args = ["train", "--model", "llama3-70b", "--tp", "8", "--dp", "16", "--system", "dgx-h100"]
    result = runner.invoke(APP, [*args, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    dp = json.loads(result.stdout)["phases"][0]
    assert dp["name"] == "dp-allreduce"
    assert type(dp["bytes_per_gpu"]) is int
    assert dp["bytes_per_gpu"] == 17_500_000_000
    assert '"bytes_per_gpu": 17500000000,' in result.stdout
    size = _json("allreduce", "--size", str(dp["bytes_per_gpu"]), "--system", "dgx-h100")
    assert size["size_bytes"] == dp["bytes_per_gpu"]
    infer = _json("infer", "--model", "llama3-70b", "--tp", "8", "--system", "dgx-h100")
    for phase in infer["phases"]:
        assert type(phase["bytes_per_gpu"]) is int, phase["name"]
    decode = next(p for p in infer["phases"] if p["name"] == "decode-tp-allreduce")
    assert decode["bytes_per_gpu"] == 1 * 8192 * 2


@pytest.mark.parametrize(
    ("command", "stated"),
    [
        (
            "train",
            [
                "--zero <int> ZeRO stage (0..3;",
                "--virtual-stages <int> Model chunks per pipeline stage (1..1024; above 1",
                # the range beside the option's own words: placed after 'setting the
                # micro-batches per step', 1..1000000000 had read as theirs (1..1000000)
                "--global-batch <int> Sequences per step over all DP ranks (1..1000000000; "
                "sets the micro-batches per step).",
            ],
        ),
        ("infer", ["--kv-nics <int> NICs the KV-cache transfer may use (1..256)."]),
        ("checkpoint", ["--storage-units <int> Targets or appliances (1..100000)."]),
    ],
)
def test_a_count_option_s_help_states_the_range_it_takes(command: str, stated: list[str]) -> None:
    """Counts such as --storage-units had read '<int range> ... [x>=1]' (click's words for
    min=1), though 200000 is refused as out of range (1..100000); the cluster options beside
    them state their range, '--nodes <int> Number of nodes (1..1000000).'"""
    text = " ".join(runner.invoke(APP, [command, "--help"], env={"COLUMNS": "300"}).stdout.split())
    assert "x>=" not in text
    assert "<=x" not in text
    assert "int range" not in text
    for words in stated:
        assert words in text


def test_an_expert_buffer_too_small_to_split_names_its_phase() -> None:
    """A model 512 wide (1,024 experts, top-1) served on ep 1024 dispatches one decoded token,
    1 x 1 x 512 x 2 B = 1 KiB a GPU: 512 bf16 elements for 1,024 peers, which nccl-tests
    rounds to 0 bytes. The refusal had read 'size 1 KiB is too small for alltoall ...', a size
    no one typed, naming no phase; training's 4-token sequences of a 64-wide model (4 x 64 x 2
    = 512 B) the same, and a layout search skipped such layouts in those words."""
    moe = ["--params", "1B", "--experts", "1024", "--top-k", "1", "--layers", "8", "--heads", "4"]
    served = _error("infer", *moe, "--hidden", "512", "--ep", "1024", "--system", "dgx-h100")
    assert served == (
        "error: decode-ep-alltoall: each GPU's 1 KiB is too small for alltoall of bf16 over "
        "1024 ranks (nccl-tests rounds it to 0 bytes)\n"
    )
    trained = [
        "train",
        *moe,
        "--hidden",
        "64",
        "--seq-len",
        "4",
        "-N",
        "128",
        "--system",
        "dgx-h100",
    ]
    said = _error(*trained, "--ep", "1024")
    assert said.startswith("error: ep-alltoall: each GPU's 512 B is too small for alltoall")
    assert said.count("\n") == 1
    skipped = _json(*trained, "--compare")["skipped"]
    assert (
        "tp1 pp1 dp1024 ep1024: ep-alltoall: each GPU's 512 B is too small for alltoall of bf16 "
        "over 1024 ranks (nccl-tests rounds it to 0 bytes)"
    ) in skipped
