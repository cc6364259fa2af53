"""ibcalc.workload.memory: memory per GPU of a training layout, each formula by a hand-worked case.

Model states: ZeRO (Rajbhandari et al., arXiv:1910.02054, section 3.1): 2 + 2 + 12 bytes per
parameter for bf16 weights and gradients and Adam's fp32 state. Activations: Korthikanti et al.
(arXiv:2205.05198, table 2), per layer and micro-batch, in bytes for 16-bit activations. Model
shapes are the Llama 3 paper's (arXiv:2407.21783, table 3): 8B has 32 layers, hidden 4096, 32
heads; 70B has 80 layers, hidden 8192, 64 heads. Every expected number is worked out here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import app
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import DType
from ibcalc.errors import WorkloadError
from ibcalc.units import format_size
from ibcalc.workload.infer import InferResult, InferSpec, infer
from ibcalc.workload.memory import Recompute, activation_bytes_per_layer, memory_size
from ibcalc.workload.model import find_model
from ibcalc.workload.train import Parallelism, TrainResult, TrainSpec, train_step

runner = CliRunner()
LLAMA8 = find_model("llama3-8b")
LLAMA70 = find_model("llama3-70b")


def _step(cat: Catalogue, system: str, nodes: int, **spec: Any) -> TrainResult:
    cluster = resolve_cluster(cat, ClusterSpec(system=system, nodes=nodes))
    return train_step(cat, cluster, TrainSpec(**spec))


@pytest.mark.parametrize(
    ("zero", "weights", "gradients", "optimizer"),
    [
        # 8e9 parameters over 16 data-parallel ranks, no tp or pp: 2 + 2 + 12 bytes each, ZeRO
        # stage k dividing by 16 the optimizer state (1), then the gradients (2), the weights (3)
        (0, 2 * 8e9, 2 * 8e9, 12 * 8e9),
        (1, 2 * 8e9, 2 * 8e9, 12 * 8e9 / 16),
        (2, 2 * 8e9, 2 * 8e9 / 16, 12 * 8e9 / 16),
        (3, 2 * 8e9 / 16, 2 * 8e9 / 16, 12 * 8e9 / 16),
    ],
)
def test_zero_stages_shard_the_model_states_over_dp(
    builtin_catalogue: Catalogue, zero: int, weights: float, gradients: float, optimizer: float
) -> None:
    result = _step(
        builtin_catalogue,
        "dgx-h100",
        2,
        model=LLAMA8,
        parallel=Parallelism(dp=16),
        zero=zero,
        seq_len=8192,
    )
    memory = result.memory
    assert memory.weights_bytes == pytest.approx(weights)
    assert memory.gradients_bytes == pytest.approx(gradients)
    assert memory.optimizer_bytes == pytest.approx(optimizer)
    # selective recompute, tp 1: s b h (10 + 24) per layer, 32 layers, one micro-batch at once
    assert memory.activations_bytes == pytest.approx(34 * 8192 * 4096 * 32)
    total = weights + gradients + optimizer + 34 * 8192 * 4096 * 32
    assert memory.total_bytes == pytest.approx(total)
    assert memory.capacity_bytes == 80e9
    assert memory.fits is (total <= 80e9)


def test_the_no_zero_8b_layout_does_not_fit_and_says_how_to_shrink(
    builtin_catalogue: Catalogue,
) -> None:
    # 16 x 8e9 = 128 GB of model state alone, against 80 GB
    result = _step(
        builtin_catalogue, "dgx-h100", 2, model=LLAMA8, parallel=Parallelism(dp=16), seq_len=8192
    )
    (warning,) = [w for w in result.warnings if w.startswith("does not fit in memory")]
    total_gb = (16 * 8e9 + 34 * 8192 * 4096 * 32) / 1e9
    assert f"{total_gb:.3g} GB per GPU against dgx-h100's 80 GB per GPU" in warning
    assert f"({total_gb / 80:.0%});" in warning
    assert "a higher {zero} stage" in warning
    assert "{recompute} full" in warning
    assert "{sequence_parallel}" not in warning  # tp 1: nothing to split


def test_tp_pp_and_sequence_parallelism_split_weights_and_activations(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 70B, tp 8 x pp 4 x dp 2 on 8 x DGX H100, 4 micro-batches of one 8192-token
    sequence. Weights: 70e9 / 32 per GPU. Activations of the first stage: 80 / 4 = 20 layers,
    min(pp, M) = 4 micro-batches in flight (1F1B), per layer s b h (10 + 24 / 8) without
    sequence parallelism, 34 s b h / 8 with it."""
    base: dict[str, Any] = {
        "model": LLAMA70,
        "parallel": Parallelism(tp=8, pp=4, dp=2),
        "seq_len": 8192,
        "microbatches": 4,
    }
    sbh = 8192 * 1 * 8192
    plain = _step(builtin_catalogue, "dgx-h100", 8, **base).memory
    assert plain.params_per_gpu == pytest.approx(70e9 / 32)
    assert plain.weights_bytes == pytest.approx(2 * 70e9 / 32)
    assert plain.activations_bytes == pytest.approx(sbh * (10 + 24 / 8) * 20 * 4)
    split = _step(builtin_catalogue, "dgx-h100", 8, sequence_parallel=True, **base).memory
    assert split.activations_bytes == pytest.approx(sbh * 34 / 8 * 20 * 4)
    # 16 x 70e9 / 32 = 35 GB of model state + 22.8 GB of activations: fits in 80 GB
    assert split.total_bytes == pytest.approx(16 * 70e9 / 32 + sbh * 34 / 8 * 80)
    assert split.fits is True
    assert plain.fits is False  # 35 GB + 69.8 GB


def test_fewer_micro_batches_than_stages_hold_fewer_activations(
    builtin_catalogue: Catalogue,
) -> None:
    # 1F1B: the first stage holds min(pp, M) micro-batches; with M = 2 < pp = 4, two
    result = _step(
        builtin_catalogue,
        "dgx-h100",
        8,
        model=LLAMA70,
        parallel=Parallelism(tp=8, pp=4, dp=2),
        seq_len=8192,
        microbatches=2,
        sequence_parallel=True,
    )
    assert result.memory.activations_bytes == pytest.approx(8192 * 8192 * 34 / 8 * 20 * 2)


@pytest.mark.parametrize(
    ("recompute", "sequence_parallel", "per_sbh"),
    [
        # Korthikanti et al., table 2, with t = 4, a = 64, s = 8192, h = 8192: 5 a s / (h t) = 80
        (Recompute.NONE, False, 10 + 24 / 4 + 80),
        (Recompute.NONE, True, 34 / 4 + 80),
        (Recompute.SELECTIVE, False, 10 + 24 / 4),
        (Recompute.SELECTIVE, True, 34 / 4),
        (Recompute.FULL, False, 2),
        (Recompute.FULL, True, 2),
    ],
)
def test_activation_bytes_per_layer_follow_korthikanti(
    recompute: Recompute, sequence_parallel: bool, per_sbh: float
) -> None:
    got = activation_bytes_per_layer(
        seq=8192,
        micro_batch=1,
        hidden=8192,
        heads=64,
        tp=4,
        sequence_parallel=sequence_parallel,
        recompute=recompute,
        act_bytes=2,
    )
    assert got == pytest.approx(8192 * 8192 * per_sbh)


def test_fp32_activations_double_and_unknown_heads_leave_none() -> None:
    args: dict[str, Any] = {"seq": 4096, "micro_batch": 2, "hidden": 4096, "tp": 1}
    bf16 = activation_bytes_per_layer(
        heads=32, sequence_parallel=False, recompute=Recompute.SELECTIVE, act_bytes=2, **args
    )
    fp32 = activation_bytes_per_layer(
        heads=32, sequence_parallel=False, recompute=Recompute.SELECTIVE, act_bytes=4, **args
    )
    assert bf16 == pytest.approx(4096 * 2 * 4096 * 34)
    assert fp32 == pytest.approx(2 * 4096 * 2 * 4096 * 34)
    assert (
        activation_bytes_per_layer(
            heads=None, sequence_parallel=False, recompute=Recompute.NONE, act_bytes=2, **args
        )
        is None
    )


def test_routed_experts_split_over_ep_and_shard_over_their_holders(
    builtin_catalogue: Catalogue,
) -> None:
    """Mixtral 8x7B (47e9 parameters, 13e9 active, top-2 of 8): experts E = (47 - 13) / (1 - 2/8)
    = 45.33e9, the rest 1.67e9. With tp 8, ep 2 and dp 4 on 4 x DGX H100 (32 GPUs) each GPU holds
    1.67e9 / 8 + 45.33e9 / 16 parameters; ZeRO-1 shards the shared state over dp 4 and the
    experts' over the dp / ep = 2 ranks holding the same experts."""
    mixtral = find_model("mixtral-8x7b")
    result = _step(
        builtin_catalogue,
        "dgx-h100",
        4,
        model=mixtral,
        parallel=Parallelism(tp=8, dp=4, ep=2),
        zero=1,
        seq_len=4096,
        sequence_parallel=True,
    )
    experts = (47e9 - 13e9) / (1 - 2 / 8)
    shared = 47e9 - experts
    memory = result.memory
    assert memory.params_per_gpu == pytest.approx(shared / 8 + experts / 16)
    assert memory.weights_bytes == pytest.approx(2 * (shared / 8 + experts / 16))
    assert memory.optimizer_bytes == pytest.approx(12 * (shared / 8 / 4 + experts / 16 / 2))


def test_gpu_memory_given_overrides_the_preset_and_an_unknown_one_is_said(
    builtin_catalogue: Catalogue,
) -> None:
    spec: dict[str, Any] = {
        "model": LLAMA70,
        "parallel": Parallelism(tp=8, pp=4, dp=2),
        "seq_len": 8192,
        "microbatches": 4,
        "sequence_parallel": True,
    }
    need = 16 * 70e9 / 32 + 8192 * 8192 * 34 / 8 * 80  # 57.8 GB, worked above
    on_h200 = _step(builtin_catalogue, "hgx-h200", 8, **spec).memory
    assert on_h200.capacity_bytes == 141e9
    assert on_h200.used_fraction == pytest.approx(need / 141e9)
    given = _step(builtin_catalogue, "dgx-h100", 8, gpu_memory_bytes=64e9, **spec)
    assert given.memory.capacity_bytes == 64e9
    (tight,) = [w for w in given.warnings if w.startswith("memory is tight")]
    assert f"{need / 64e9:.0%} of {{gpu_memory}}" in tight
    # DGX A100 ships with 40 GB or 80 GB A100s: the fit is not judged, and the note says why
    a100 = _step(builtin_catalogue, "dgx-a100", 8, **spec)
    assert a100.memory.fits is None
    (note,) = [n for n in a100.assumptions if n.startswith("memory fit not checked")]
    assert "dgx-a100 does not state one GPU memory" in note
    assert "give {gpu_memory}" in note


def test_activations_need_the_model_shape(builtin_catalogue: Catalogue) -> None:
    # parameters alone (no layers or hidden size): model states only, and a note says so
    model = LLAMA8.model_copy(update={"layers": None, "hidden": None, "heads": None})
    result = _step(builtin_catalogue, "dgx-h100", 2, model=model, parallel=Parallelism(dp=16))
    assert result.memory.activations_bytes is None
    assert result.memory.total_bytes == pytest.approx(16 * 8e9)
    assert any(n.startswith("memory: activations not counted") for n in result.assumptions)


def test_cli_train_prints_and_serialises_the_memory() -> None:
    args = ["train", "--model", "llama3-70b", "--system", "dgx-h100", "-N", "8", "--tp", "8"]
    args += ["--pp", "4", "--microbatches", "4", "--sequence-parallel"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    need = 16 * 70e9 / 32 + 8192 * 8192 * 34 / 8 * 80
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("memory "))
    assert f"{need / 1e9:.3g} GB of dgx-h100's 80 GB per GPU ({need / 80e9:.0%})" in line
    data = json.loads(runner.invoke(app, [*args, "--format", "json"]).stdout)
    assert data["memory"]["per_gpu_bytes"] == pytest.approx(need)
    assert data["memory"]["capacity_bytes"] == 80e9
    assert data["memory"]["fits"] is True
    full = json.loads(runner.invoke(app, [*args, "--recompute", "full", "--format", "json"]).stdout)
    # full recompute: 2 s b h per layer whatever the split
    assert full["memory"]["activations_bytes"] == pytest.approx(2 * 8192 * 8192 * 20 * 4)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("80Gb", "lower-case 'b', which means bits"),
        ("80", "--gpu-memory"),
        ("-1GB", "size '-1GB'"),
    ],
)
def test_cli_refuses_a_bad_gpu_memory_in_one_line(value: str, message: str) -> None:
    args = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "2"]
    result = runner.invoke(app, [*args, "--gpu-memory", value])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert message in lines[0]


def test_a_gpu_memory_out_of_range_is_a_workload_error() -> None:
    # 80 bytes: the unit left out of 80GB
    with pytest.raises(WorkloadError, match="must be at least 1 GB"):
        TrainSpec(model=LLAMA8, parallel=Parallelism(dp=16), gpu_memory_bytes=80.0)


# ----------------------------------------------------------------------------------- serving


def _serve(cat: Catalogue, system: str, **spec: Any) -> InferResult:
    cluster = resolve_cluster(cat, ClusterSpec(system=system, nodes=1))
    return infer(cat, cluster, InferSpec(**spec))


def test_serving_holds_its_weights_and_its_kv_heads(builtin_catalogue: Catalogue) -> None:
    """Llama 3 70B on tp 8 (8 KV heads of 128, 80 layers): weights 70e9 x 2 B / 8; the KV cache of
    32 sequences of 8192 + 512 tokens, 2 x 8 x 128 x 80 x 2 B per token, split over the 8 KV
    heads: one per GPU."""
    result = _serve(
        builtin_catalogue,
        "dgx-h100",
        model=LLAMA70,
        tp=8,
        batch=32,
        prompt_tokens=8192,
        output_tokens=512,
    )
    per_token = 2 * 8 * 128 * 80 * 2
    assert result.kv_bytes_per_token == per_token
    memory = result.memory
    assert memory.weights_bytes == pytest.approx(70e9 * 2 / 8)
    assert memory.kv_cache_bytes == pytest.approx(32 * (8192 + 512) * per_token / 8)
    assert memory.fits is True
    # tp 16 > 8 KV heads: each GPU keeps one head's copy, so the cache no longer shrinks
    # (the instance spans 2 nodes; the weights halve)
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    wide = infer(
        builtin_catalogue,
        cluster,
        InferSpec(model=LLAMA70, tp=16, batch=32, prompt_tokens=8192, output_tokens=512),
    ).memory
    assert wide.weights_bytes == pytest.approx(70e9 * 2 / 16)
    assert wide.kv_cache_bytes == pytest.approx(memory.kv_cache_bytes)


def test_a_latent_kv_cache_is_whole_on_every_tp_rank_and_fp8_halves_the_weights(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3 (671e9 parameters, 61 layers, MLA caching d_c + d_h^R = 576 elements per
    layer) on an 8 x H200 node at tp 8: bf16 weights are 671e9 x 2 / 8 = 168 GB, more than 141 GB;
    fp8 weights 83.9 GB. The latent cache, 61 x 576 x 2 B per token, is not split over tp."""
    args: dict[str, Any] = {"model": find_model("deepseek-v3"), "tp": 8, "batch": 64}
    args |= {"prompt_tokens": 4096, "output_tokens": 256}
    bf16 = _serve(builtin_catalogue, "hgx-h200", **args)
    kv = 64 * (4096 + 256) * 61 * 576 * 2
    assert bf16.memory.kv_cache_bytes == pytest.approx(kv)
    assert bf16.memory.weights_bytes == pytest.approx(671e9 * 2 / 8)
    assert bf16.memory.fits is False
    (warning,) = [w for w in bf16.warnings if w.startswith("does not fit in memory")]
    assert f"({(671e9 * 2 / 8 + kv) / 141e9:.0%});" in warning
    assert "fp8 weights ({weights_dtype})" in warning
    fp8 = _serve(builtin_catalogue, "hgx-h200", weights_dtype=DType.FP8, **args)
    assert fp8.memory.weights_bytes == pytest.approx(671e9 / 8)
    assert fp8.memory.used_fraction == pytest.approx((671e9 / 8 + kv) / 141e9)
    assert not any(w.startswith("does not fit") for w in fp8.warnings)


def test_cli_infer_prints_and_serialises_the_memory() -> None:
    args = ["infer", "--model", "llama3-70b", "--tp", "8", "--batch", "32", "--prompt", "8192"]
    args += ["--output-tokens", "512", "--system", "dgx-h100", "--gpu-memory", "20GB"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    need = 70e9 * 2 / 8 + 32 * (8192 + 512) * 2 * 8 * 128 * 80 * 2 / 8
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("memory "))
    assert f"{need / 1e9:.3g} GB of --gpu-memory ({need / 20e9:.0%})" in line
    assert "does not fit in memory" in result.stdout
    data = json.loads(runner.invoke(app, [*args, "--format", "json"]).stdout)
    assert data["memory"]["per_gpu_bytes"] == pytest.approx(need)
    assert data["memory"]["capacity_bytes"] == 20e9
    assert data["memory"]["fits"] is False


@pytest.mark.parametrize(
    "size", [5e8, 1e9, 4.375e9, 9.995e9, 57.8e9, 99.95e9, 104.8e9, 999.4e9, 999.6e9, 1.234e12]
)
def test_memory_sizes_print_as_format_size_does_in_decimal_units(size: float) -> None:
    # memory_size skips format_size's search of units for 1 GB to 999.5 GB: the same text
    assert memory_size(size) == format_size(size, decimal=True, digits=3)
