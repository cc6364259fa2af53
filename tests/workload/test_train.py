"""ibcalc.workload.train: every formula of docs/workload.md ("Training") by a hand-worked case.

Model numbers are the Llama 3 paper's (arXiv:2407.21783, Table 3): 70B has 80 layers, hidden 8192,
64 heads, 8 KV heads of dimension 128, 8K-token pre-training sequences. Times are checked against
the engine's own estimate of the same collective on the sub-cluster worked out here by hand, never
against numbers copied from the program's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import ndr_sendrecv_by_hand_s, pair_sendrecv_s, tp_whatif_by_hand_s
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective, DType
from ibcalc.errors import ClusterError, WorkloadError
from ibcalc.facade import estimate
from ibcalc.units import format_time
from ibcalc.workload.infer import InferSpec, infer
from ibcalc.workload.memory import TIGHT_FRACTION, Recompute, stage_layers, stage_params
from ibcalc.workload.model import ModelSpec, find_model, model_from
from ibcalc.workload.placement import place_group
from ibcalc.workload.train import (
    Parallelism,
    TrainResult,
    TrainSpec,
    compare_layouts,
    factorisations,
    fit_cluster,
    train_step,
)

LLAMA70 = find_model("llama3-70b")


def _run(
    cat: Catalogue,
    cluster: ClusterSpec,
    *,
    tp: int = 1,
    pp: int = 1,
    dp: int | None = None,
    ep: int = 1,
    cp: int = 1,
    model_id: str = "llama3-70b",
    **train: object,
) -> TrainResult:
    resolved, par = fit_cluster(cat, cluster, tp=tp, pp=pp, dp=dp, ep=ep, cp=cp)
    spec = TrainSpec(model=find_model(model_id), parallel=par, **train)  # type: ignore[arg-type]
    return train_step(cat, resolved, spec)


def _phase(result: TrainResult, name: str):  # type: ignore[no-untyped-def]
    matches = [p for p in result.phases if p.name == name]
    assert len(matches) == 1, [p.name for p in result.phases]
    return matches[0]


def test_dp_gradients_are_the_fullest_stage_s(builtin_catalogue: Catalogue) -> None:
    """Every pipeline stage all-reduces its own gradients at once, so the stage holding the
    most gates the step, the one memory is counted on: on tp 2 pp 4, Llama-3-8B's first stage
    holds 8 of 32 layers and the input embedding (128,256 x 4,096), and its gradients were
    priced as the average stage's P x 2 B / (tp x pp) = 2.0 GB, 13 % short."""
    result = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=2, pp=4, dp=2, model_id="llama3-8b"
    )
    embedding = 128_256 * 4_096
    body = 8e9 - 2 * embedding  # the output layer is the last stage's
    stage0 = (body * 8 / 32 + embedding) / 2  # per GPU of tp 2: 1.131e9
    dp = _phase(result, "dp-allreduce")
    assert dp.bytes_per_gpu == pytest.approx(stage0 * 2)  # bf16 gradients
    assert result.memory is not None
    assert dp.bytes_per_gpu == pytest.approx(result.memory.params_per_gpu * 2)
    assert dp.bytes_per_gpu / (8e9 * 2 / 8) == pytest.approx(1.131, abs=0.001)


def test_dp_allreduce_bytes_and_time_equal_ibcalc_allreduce(builtin_catalogue: Catalogue) -> None:
    # 70e9 params x 2 bytes (bf16) / (tp 8 x pp 1) = 17.5e9 bytes per GPU
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16)
    assert result.nodes == 16  # 8 x 16 = 128 GPUs = 16 DGX H100 nodes
    dp = _phase(result, "dp-allreduce")
    assert dp.bytes_per_gpu == pytest.approx(17.5e9)
    assert dp.ranks == 16
    assert dp.tier == "scale-out"
    assert dp.count_per_step == 1
    # the DP group: ranks 8 apart, one per node, each with its own rail NIC (8 NICs / 8 GPUs)
    same = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=16, gpus_per_node=1, nics_per_node=1, inter="ndr"),
        Collective.ALL_REDUCE,
        17.5e9,
        dtype="bf16",
    )
    assert dp.time_s == same.time_s
    assert dp.estimate is not None
    assert dp.estimate.best == same.best


@pytest.mark.parametrize(
    ("grad", "expected"), [("fp32", 35e9), ("bf16", 17.5e9), ("fp16", 17.5e9), ("int8", 8.75e9)]
)
def test_gradient_dtype_scales_dp_bytes(
    builtin_catalogue: Catalogue, grad: str, expected: float
) -> None:
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16, grad_dtype=grad)
    assert _phase(result, "dp-allreduce").bytes_per_gpu == pytest.approx(expected)


def test_compressed_fp8_gradients_cost_what_int8_ones_do(builtin_catalogue: Catalogue) -> None:
    """fp8 and int8 gradients are both compressed before the exchange and summed in higher
    precision at each hop, as the note says; fp8 had been priced with NCCL's own fp8 reduction,
    whose ring NCCL penalises past 8 ranks, so tree/Simple at 391 ms where int8's same 8.75 GB
    took ring/Simple at 337 ms. Llama 3 70B at tp 8 on 16 DGX H100: 70e9 / 8 x 1 B = 8.75 GB per
    GPU over a 16-rank ring on one NDR port each (48.75 GB/s achievable): 2 x 15/16 x 8.75e9 /
    48.75e9 = 337 ms of transfer."""
    cluster = ClusterSpec(system="dgx-h100", nodes=16)
    fp8 = _phase(_run(builtin_catalogue, cluster, tp=8, grad_dtype="fp8"), "dp-allreduce")
    int8 = _phase(_run(builtin_catalogue, cluster, tp=8, grad_dtype="int8"), "dp-allreduce")
    assert fp8.bytes_per_gpu == int8.bytes_per_gpu == pytest.approx(8.75e9)
    assert fp8.time_s == int8.time_s
    assert fp8.estimate is not None
    assert fp8.estimate.best.algorithm.value == "ring"
    assert fp8.estimate.best.transfer_s == pytest.approx(2 * 15 / 16 * 8.75e9 / 48.75e9, rel=1e-3)


def test_gradients_held_in_fp32_and_sent_in_16_bits_say_so(builtin_catalogue: Catalogue) -> None:
    """bf16 weights keep fp32 gradients (4 bytes each in the memory table, Megatron-LM's default)
    while the wire carried bf16 unsaid: Llama 3 70B's dp all-reduce at tp 8 is 70e9 / 8 x 2 =
    17.5 GB in bf16, twice that, 35 GB, with the fp32 buffer Megatron-LM reduces by default. The
    note names the difference; with fp32 on the wire there is none, and none with fp16 weights
    (fp16 gradients, 2 bytes, as the wire's)."""
    cluster = ClusterSpec(system="dgx-h100")
    words = "memory: gradients held in fp32 (Megatron-LM accumulates bf16 training's in fp32)"
    bf16 = _run(builtin_catalogue, cluster, tp=8, dp=16)
    fp32 = _run(builtin_catalogue, cluster, tp=8, dp=16, grad_dtype="fp32")
    assert _phase(bf16, "dp-allreduce").bytes_per_gpu == pytest.approx(70e9 / 8 * 2)
    assert _phase(fp32, "dp-allreduce").bytes_per_gpu == pytest.approx(70e9 / 8 * 4)
    said = [n for n in bf16.assumptions if n.startswith(words)]
    assert len(said) == 1
    assert "but exchanged in bf16 ({grad_dtype})" in said[0]
    assert not any(n.startswith(words) for n in fp32.assumptions)
    fp16 = _run(builtin_catalogue, cluster, tp=8, dp=16, param_dtype="fp16", grad_dtype="fp16")
    assert not any(n.startswith("memory: gradients held") for n in fp16.assumptions)
    # with no data-parallel exchange (dp 1) there are no bytes to price: no note
    alone = _run(builtin_catalogue, cluster, tp=8, dp=1)
    assert not any(p.name.startswith("dp-") for p in alone.phases)
    assert not any(n.startswith(words) for n in alone.assumptions)


def test_zero1_is_reduce_scatter_plus_all_gather_of_the_same_bytes(
    builtin_catalogue: Catalogue,
) -> None:
    # ZeRO-1 (Rajbhandari et al. section 7): RS of gradients + AG of weights, 2 Psi as plain DP
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16, zero=1)
    rs = _phase(result, "dp-reducescatter")
    ag = _phase(result, "dp-allgather")
    assert rs.collective is Collective.REDUCE_SCATTER
    assert ag.collective is Collective.ALL_GATHER
    assert rs.bytes_per_gpu == pytest.approx(17.5e9)
    assert ag.bytes_per_gpu == pytest.approx(17.5e9)
    assert (rs.count, ag.count) == (1, 1)


def test_zero2_reduce_scatters_every_micro_batch_and_zero1_once(
    builtin_catalogue: Catalogue,
) -> None:
    """ZeRO-2 keeps only its shard of the gradients, so it cannot accumulate whole ones over M
    micro-batches: M reduce-scatters per step (it was priced once, as ZeRO-1). tp 8, dp 16,
    M = 4: 4 x 17.5 GB reduce-scattered, one all-gather of the weights."""
    cluster = ClusterSpec(system="dgx-h100")
    two = _run(builtin_catalogue, cluster, tp=8, dp=16, zero=2, microbatches=4)
    one = _run(builtin_catalogue, cluster, tp=8, dp=16, zero=1, microbatches=4)
    rs2, rs1 = _phase(two, "dp-reducescatter"), _phase(one, "dp-reducescatter")
    assert rs2.bytes_per_gpu == rs1.bytes_per_gpu == pytest.approx(17.5e9)
    assert (rs2.count, rs1.count) == (4, 1)
    assert rs2.time_s == rs1.time_s  # the same collective, four times
    assert _phase(two, "dp-allgather").count == _phase(one, "dp-allgather").count == 1


def test_zero3_gathers_weights_every_micro_batch(builtin_catalogue: Catalogue) -> None:
    # tp 4 x pp 2 x dp 16 = 128 GPUs; M defaults to pp = 2 micro-batches
    # weights per GPU: 70e9 x 2 / (4 x 2) = 17.5e9 over the stage's 80 / 2 = 40 layers, one
    # layer at a time: AG forward + AG backward + RS, each 40 x M of 17.5e9 / 40 = 437.5e6
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=4, pp=2, dp=16, zero=3)
    assert result.microbatches == 2
    for name in ("dp-allgather-fwd", "dp-allgather-bwd", "dp-reducescatter"):
        phase = _phase(result, name)
        assert phase.bytes_per_gpu == pytest.approx(17.5e9 / 40)
        assert phase.count == 40 * 2


@pytest.mark.parametrize("m", [1, 4])
def test_zero3_exchanges_one_layer_at_a_time(builtin_catalogue: Catalogue, m: int) -> None:
    """ZeRO-3 and FSDP gather the weights and reduce-scatter the gradients one layer (FSDP
    unit) at a time (Rajbhandari et al., SC'20, arXiv:1910.02054, section 7; Zhao et al.,
    VLDB 2023, arXiv:2304.11277, sections 3.2-3.3). Llama 3 8B on 2 DGX H100 at tp 1 pp 1
    dp 16: each GPU holds all 8e9 parameters, 16e9 B of bf16 weights over 32 layers, so per
    micro-batch 32 all-gathers of 8e9 x 2 / 32 = 500e6 B forward, 32 backward and 32
    reduce-scatters, each the engine's one collective of that size on the 16 GPUs. They had
    been priced as one 16e9 B collective of each a micro-batch: the same bytes, 31 fewer
    latencies, so never more than the per-layer price."""
    cluster = ClusterSpec(system="dgx-h100", nodes=2)
    result = _run(builtin_catalogue, cluster, dp=16, zero=3, microbatches=m, model_id="llama3-8b")
    assert result.microbatches == m
    for name, coll in (
        ("dp-allgather-fwd", Collective.ALL_GATHER),
        ("dp-allgather-bwd", Collective.ALL_GATHER),
        ("dp-reducescatter", Collective.REDUCE_SCATTER),
    ):
        phase = _phase(result, name)
        assert (phase.bytes_per_gpu, phase.count) == (500e6, 32 * m)
        one = estimate(builtin_catalogue, cluster, coll, 500e6, dtype=DType.BF16)
        assert phase.time_s == pytest.approx(one.time_s, rel=1e-12)
        assert phase.total_s == pytest.approx(32 * m * one.time_s, rel=1e-12)
        whole = estimate(builtin_catalogue, cluster, coll, 16e9, dtype=DType.BF16)
        assert phase.total_s >= m * whole.time_s
    (note,) = [n for n in result.assumptions if n.startswith("ZeRO-3: ")]
    assert note == (
        "ZeRO-3: weights all-gathered and gradients reduce-scattered one layer at a time, as "
        "ZeRO-3 and FSDP do: per micro-batch 32 all-gathers forward, 32 backward and 32 "
        "reduce-scatters, 500 MB of weights each (the stage's 16 GB split evenly over its 32 "
        "layers, the embedding and output layer counted in with them)"
    )


def test_zero3_with_one_layer_a_stage_exchanges_the_stage_whole(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 8B's 32 layers over pp 32 (8 DGX H100, dp 2): each stage holds one layer, so
    ZeRO-3 exchanges the gating stage's weights in one collective of each kind a micro-batch.
    Stage 0 holds its layer and the input embedding (128,256 x 4,096 = 525.3e6): (8e9 - 2 x
    525.3e6) / 32 + 525.3e6 = 742.5e6 parameters, 1.485e9 B of bf16 weights."""
    eight = ClusterSpec(system="dgx-h100", nodes=8)
    result = _run(
        builtin_catalogue, eight, pp=32, dp=2, zero=3, microbatches=2, model_id="llama3-8b"
    )
    embedding = 128_256 * 4_096
    stage0 = (8e9 - 2 * embedding) / 32 + embedding
    for name in ("dp-allgather-fwd", "dp-allgather-bwd", "dp-reducescatter"):
        phase = _phase(result, name)
        assert phase.count == 2
        assert phase.bytes_per_gpu == pytest.approx(stage0 * 2, rel=1e-6)
    assert any(
        "per micro-batch 1 all-gather forward, 1 backward and 1 reduce-scatter" in n
        for n in result.assumptions
    )


def test_zero3_without_a_layer_count_exchanges_the_stage_whole(
    builtin_catalogue: Catalogue,
) -> None:
    """A model given by its parameter count alone (8B, no layers): ZeRO-3 cannot split the
    stage into layers, so it is priced as one collective of each kind a micro-batch, 8e9 x 2 B
    on dp 16, and the output says a latency per layer is missing."""
    resolved, par = fit_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2), tp=1, pp=1, dp=16
    )
    result = train_step(
        builtin_catalogue,
        resolved,
        TrainSpec(model=model_from(params="8B"), parallel=par, zero=3, seq_len=4096),
    )
    for name in ("dp-allgather-fwd", "dp-allgather-bwd", "dp-reducescatter"):
        phase = _phase(result, name)
        assert (phase.bytes_per_gpu, phase.count) == (16e9, 1)
    assert any(
        n.startswith("ZeRO-3: without the model's layer count") and n.endswith("(give {layers})")
        for n in result.assumptions
    )


def test_tp_allreduce_size_and_count(builtin_catalogue: Catalogue) -> None:
    # b x s x h x 2 bytes = 1 x 8192 x 8192 x 2 = 134,217,728 B; 4 per layer x 80 layers x 1
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16)
    tp = _phase(result, "tp-allreduce")
    assert tp.bytes_per_gpu == 134_217_728
    assert tp.count == 320
    assert tp.tier == "scale-up"
    inside = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=1, gpus_per_node=8),
        Collective.ALL_REDUCE,
        134_217_728,
        dtype="bf16",
    )
    assert tp.time_s == inside.time_s
    assert tp.exposed_s == pytest.approx(320 * inside.time_s)  # TP is never hidden
    # NVLS worked by hand: 25 us + 128 MiB x 9/8 / (450 GB/s x 0.686) = 514.13 us
    assert tp.time_s == pytest.approx(tp_whatif_by_hand_s(134_217_728, 8)[0], rel=1e-9)


def test_pp_and_dp_across_ndr_nodes_are_worked_by_hand(builtin_catalogue: Catalogue) -> None:
    """Two DGX H100s over NDR. tp 8 pp 2: a stage boundary sends a TP rank's share of one
    micro-batch's activations, 1 x 8192 x 8192 x 2 B / 8 = 16 MiB, through its GPU's own NIC,
    8.4 + 14 us + 16 MiB / 48.75 GB/s = 366.55 us (conftest.ndr_sendrecv_by_hand_s). tp 8 dp 2:
    each GPU all-reduces its 70e9 x 2 B / 8 = 17.5 GB of gradients with its peer in the other
    node, a ring/Simple over two one-GPU NDR nodes (conftest.tp_whatif_by_hand_s, across):
    (8.4 + 2 x 14 us) x 1.4 + 2 x 0.6 us + 17.5 GB / 48.75 GB/s = 359026.52 us."""
    two = ClusterSpec(system="dgx-h100", nodes=2)
    pp = _phase(_run(builtin_catalogue, two, tp=8, pp=2, dp=1), "pp-sendrecv")
    assert (pp.bytes_per_gpu, pp.tier) == (16 * 2**20, "scale-out")
    by_hand = ndr_sendrecv_by_hand_s(16 * 2**20)
    assert by_hand * 1e6 == pytest.approx(366.55, abs=0.005)
    assert pp.time_s == pytest.approx(by_hand, rel=1e-9)
    dp = _phase(_run(builtin_catalogue, two, tp=8, dp=2), "dp-allreduce")
    assert (dp.bytes_per_gpu, dp.tier) == (17.5e9, "scale-out")
    _, across = tp_whatif_by_hand_s(17.5e9, 2)
    assert across * 1e6 == pytest.approx(359026.52, abs=0.005)
    assert dp.time_s == pytest.approx(across, rel=1e-9)


def test_sequence_parallel_splits_each_all_reduce_into_rs_and_ag(
    builtin_catalogue: Catalogue,
) -> None:
    # Korthikanti et al. 2022: each all-reduce becomes a reduce-scatter and an all-gather of the
    # same buffer, 4 of each per layer; and Megatron-LM gathers the 2 column-parallel inputs
    # (QKV, FC1) again in the backward pass for the weight gradients, so 6 all-gathers a layer
    # (a review: 4 had been priced): 80 layers x 6 = 480, x 4 = 320
    result = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16, sequence_parallel=True
    )
    ag, rs = _phase(result, "tp-allgather"), _phase(result, "tp-reducescatter")
    assert ag.bytes_per_gpu == rs.bytes_per_gpu == 134_217_728
    assert (ag.count, rs.count) == (480, 320)
    assert ag.exposed_s == pytest.approx(480 * ag.time_s)  # TP is never hidden
    # full recompute runs the forward again, its 2 all-gathers and 2 reduce-scatters with it:
    # 8 and 6 a layer
    full = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100"),
        tp=8,
        dp=16,
        sequence_parallel=True,
        recompute=Recompute.FULL,
    )
    assert (_phase(full, "tp-allgather").count, _phase(full, "tp-reducescatter").count) == (
        640,
        480,
    )


def test_pipeline_send_recv_and_bubble(builtin_catalogue: Catalogue) -> None:
    # tp 8 x pp 2 x dp 8 = 128 GPUs, M = 4 micro-batches
    # PP: b x s x h x 2 / tp = 8192 x 8192 x 2 / 8 = 16,777,216 B, forward + backward each
    result = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, pp=2, dp=8, microbatches=4
    )
    pp = _phase(result, "pp-sendrecv")
    assert pp.bytes_per_gpu == 16_777_216
    # on the 1F1B critical path: one each way in each of the M + pp - 1 = 5 slots
    assert pp.count == 2 * (4 + 2 - 1)
    # the note counts the fill and drain each way: 2 x 4 + 2 x 1 = 10 (it had read "the 1
    # boundary crossing", half of the 2 it adds; a review)
    assert any(
        "2 x (M + pp - 1) = 10 on the step's critical path, one each way per micro-batch plus 1 "
        "each way for the 1F1B fill and drain" in note
        for note in pp.assumptions
    )
    assert pp.ranks == 2
    assert pp.tier == "scale-out"  # stage neighbours are tp x dp = 64 ranks apart: other nodes
    # TP: 80 layers / 2 stages = 40 per GPU, x 4 per layer x 4 micro-batches
    assert _phase(result, "tp-allreduce").count == 40 * 4 * 4
    # DP: 70e9 x 2 / (8 x 2) = 8.75e9
    assert _phase(result, "dp-allreduce").bytes_per_gpu == pytest.approx(8.75e9)
    assert result.totals.bubble_fraction == pytest.approx(1 / 4)  # (pp - 1) / M


def test_interleaved_pipeline_divides_the_bubble_and_multiplies_the_transfers(
    builtin_catalogue: Catalogue,
) -> None:
    """Narayanan et al., SC'21, section 2.2.2: with v model chunks per stage the bubble is
    (pp - 1) / (v M) and each micro-batch crosses v times as many stage boundaries. tp 8 x pp 4
    x dp 2 on 8 DGX H100, M = 8, v = 2: 80 layers in 8 chunks of 10."""
    cluster = ClusterSpec(system="dgx-h100")
    plain = _run(builtin_catalogue, cluster, tp=8, pp=4, dp=2, microbatches=8)
    result = _run(builtin_catalogue, cluster, tp=8, pp=4, dp=2, microbatches=8, virtual_stages=2)
    assert plain.totals.bubble_fraction == pytest.approx(3 / 8)
    assert result.totals.bubble_fraction == pytest.approx(3 / (2 * 8))
    # one each way in each of the v M + pp - 1 = 19 chunk slots of the critical path
    pp = _phase(result, "pp-sendrecv")
    assert pp.count == 2 * (2 * 8 + 4 - 1)
    assert pp.bytes_per_gpu == _phase(plain, "pp-sendrecv").bytes_per_gpu
    # each stage still holds 20 layers: TP and DP are the plain schedule's
    assert _phase(result, "tp-allreduce").count == _phase(plain, "tp-allreduce").count
    assert not any("not a multiple of" in w for w in result.warnings)  # M = 8: groups of pp 4
    # out of memory without sequence parallelism: fewer chunks is one way out (interleaving
    # raised the first stage's activations by 3/8)
    (oom,) = [w for w in result.warnings if w.startswith("out of memory")]
    assert "fewer {virtual_stages}" in oom
    assert "fewer {virtual_stages}" not in next(
        w for w in plain.warnings if w.startswith("out of memory")
    )
    # Korthikanti et al. 4.2.3: the first stage holds pp (1 + (pp - 1) / (pp v)) = 5.5
    # micro-batches of its layers, against pp = 4
    assert result.memory.stage == plain.memory.stage == 0
    ratio = result.memory.activations_bytes / plain.memory.activations_bytes  # type: ignore[operator]
    assert ratio == pytest.approx(4 * (1 + 3 / 8) / 4)
    # six micro-batches do not make groups of pp: Megatron-LM's schedule takes them so
    odd = _run(builtin_catalogue, cluster, tp=8, pp=4, dp=2, microbatches=6, virtual_stages=2)
    assert any(
        "6 micro-batches per step (at least pp), not a multiple of {pp} 4" in w
        for w in odd.warnings
    )


@pytest.mark.parametrize(
    ("pp", "virtual", "microbatches", "reason"),
    [
        (1, 2, None, "{virtual_stages} 2 interleaves pipeline stages: it needs {pp} above 1"),
        (4, 3, None, "into 12 chunks of equal layers; its 80 layers do not divide into them"),
        # one micro-batch crosses all pp x v chunks in turn: no (pp - 1) / (v M) bubble (a QA
        # read found 150 % printed where the step takes at least pp x the compute)
        (4, 2, 1, "needs at least pp = 4 micro-batches per step, not 1"),
        (4, 2, 3, "needs at least pp = 4 micro-batches per step, not 3"),
    ],
)
def test_interleaving_needs_stages_equal_chunks_and_a_full_warm_up(
    builtin_catalogue: Catalogue, pp: int, virtual: int, microbatches: int | None, reason: str
) -> None:
    with pytest.raises(WorkloadError) as refused:
        _run(
            builtin_catalogue,
            ClusterSpec(system="dgx-h100"),
            tp=8,
            pp=pp,
            virtual_stages=virtual,
            microbatches=microbatches,
        )
    assert reason in refused.value.template
    assert refused.value.field == "virtual_stages"


def _compare_llama8(cat: Catalogue, *, virtual_stages: int) -> list[TrainResult]:
    """Every layout of Llama 3 8B on 2 x DGX H100 (16 GPUs) at 400 TFLOP/s: 15, none skipped."""
    cluster = resolve_cluster(cat, ClusterSpec(system="dgx-h100", nodes=2))
    base = TrainSpec(
        model=find_model("llama3-8b"),
        parallel=Parallelism(dp=16),
        tflops=400,
        virtual_stages=virtual_stages,
    )
    results, skipped = compare_layouts(cat, cluster, base)
    assert skipped == []
    assert len(results) == 15
    return results


def test_compare_interleaves_the_pipelined_layouts_only(builtin_catalogue: Catalogue) -> None:
    # Llama 3 8B's 32 layers on 16 GPUs with v = 2: pp 1 runs plain, pp 2..16 split 32 layers
    # into 4..32 chunks; the ranking's bubble is each layout's own (pp - 1) / (v M)
    results = _compare_llama8(builtin_catalogue, virtual_stages=2)
    for r in results:
        par = r.spec.parallel
        assert r.spec.virtual_stages == (2 if par.pp > 1 else 1)
        bubble = (par.pp - 1) / (r.spec.virtual_stages * r.microbatches)
        assert r.totals.bubble_fraction == pytest.approx(bubble)


def test_compare_runs_a_layout_whose_layers_do_not_interleave_without_it(
    builtin_catalogue: Catalogue,
) -> None:
    """v = 3 on Llama 3 8B's 32 layers: no pp > 1 splits them into pp x 3 equal chunks. Those
    layouts had been left out, every pipelined one with them (Llama 3 405B's 126 layers at v 2:
    tp 64 across 8 nodes ranked first); they now run plain 1F1B, said on their row."""
    results = _compare_llama8(builtin_catalogue, virtual_stages=3)
    for r in results:
        par = r.spec.parallel
        assert r.spec.virtual_stages == 1
        assert r.totals.bubble_fraction == pytest.approx((par.pp - 1) / r.microbatches)
        said = [w for w in r.warnings if w.startswith("not interleaved")]
        assert said == (
            [
                "not interleaved (layers not in pp x {virtual_stages} equal chunks): the "
                f"model's 32 layers do not split into pp x {{virtual_stages}} = {par.pp * 3} "
                "equal chunks"
            ]
            if par.pp > 1
            else []
        )


def test_compare_runs_a_layout_with_too_few_micro_batches_without_interleaving(
    builtin_catalogue: Catalogue,
) -> None:
    """v = 4 needs at least pp micro-batches per step: Llama 3 70B on 64 GPUs at 16 sequences,
    tp 2 pp 4 dp 8 has 2. It had been left out ('needs at least pp = 4 micro-batches') while
    tp 2 pp 8 dp 4, whose 80 layers do not split into 32 chunks, ran without interleaving."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=8))
    base = TrainSpec(
        model=LLAMA70,
        parallel=Parallelism(dp=64),
        tflops=400,
        virtual_stages=4,
        global_batch=16,
        sequence_parallel=True,
    )
    results, skipped = compare_layouts(builtin_catalogue, cluster, base)
    assert not [line for line in skipped if "micro-batches per step" in line]
    (row,) = [r for r in results if (r.spec.parallel.tp, r.spec.parallel.pp) == (2, 4)]
    assert row.spec.virtual_stages == 1
    assert row.microbatches == 2
    assert (
        "not interleaved (fewer micro-batches than pp): 2 micro-batches per step, fewer than the "
        "pp = 4 {virtual_stages} needs" in row.warnings
    )


def test_memory_remedies_offer_context_parallelism_for_activations(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 70B at 32K tokens on tp 8 pp 2: activations are most of the memory, and context
    parallelism, which splits each sequence, was never offered among the remedies."""

    def llama70(seq_len: int, sequence_parallel: bool) -> TrainResult:
        cluster = ClusterSpec(system="dgx-h100", nodes=16)
        layout: dict[str, Any] = {"tp": 8, "pp": 2, "dp": 8, "global_batch": 128, "zero": 1}
        return _run(
            builtin_catalogue,
            cluster,
            seq_len=seq_len,
            sequence_parallel=sequence_parallel,
            **layout,
        )

    result = llama70(32768, True)
    assert result.memory.activations_bytes is not None
    assert result.memory.activations_bytes > result.memory.total_bytes / 2
    (warning,) = [w for w in result.warnings if w.startswith("out of memory")]
    assert warning.endswith("or {cp} (it splits each sequence and its activations) would shrink it")
    # a sequence no cp >= 2 divides (32,767 tokens) is not offered it
    odd = llama70(32767, False)
    (odd_warning,) = [w for w in odd.warnings if w.startswith("out of memory")]
    assert "{cp}" not in odd_warning
    assert "{micro_batch}" not in warning  # one sequence a micro-batch: nothing smaller


def test_a_smaller_micro_batch_is_offered_where_it_is_above_one(
    builtin_catalogue: Catalogue,
) -> None:
    """Activations grow with the micro-batch (Llama 3 70B, tp 8 pp 2 on 4 DGX H100: 41.9 GiB
    at 2, 20.9 GiB at 1): out of memory at 2, a smaller one is among the remedies (a review:
    it was not, where infer offers a smaller --batch)."""
    cluster = ClusterSpec(system="dgx-h100", nodes=4)
    layout: dict[str, Any] = {"tp": 8, "pp": 2, "dp": 2, "global_batch": 32}
    two = _run(builtin_catalogue, cluster, micro_batch=2, sequence_parallel=True, **layout)
    one = _run(builtin_catalogue, cluster, micro_batch=1, sequence_parallel=True, **layout)
    assert two.memory.activations_bytes == pytest.approx(2 * one.memory.activations_bytes)
    (warning,) = [w for w in two.warnings if w.startswith("out of memory")]
    assert warning.endswith(
        "{recompute} full or a smaller {micro_batch} (activations grow with it) would shrink it"
    )


def test_pipeline_priced_by_its_slowest_boundary(builtin_catalogue: Catalogue) -> None:
    # tp 1 x pp 32 x dp 4 on 16 DGX H100 nodes of 8 GPUs. Rank order tp-cp-ep-dp-pp: stage j holds
    # ranks 4j..4j+3, so each node holds two stages; stage neighbours are 4 ranks apart. Boundary
    # j (stage j -> j + 1) crosses a node when 4 (j + 1) is a multiple of 8, i.e. j odd:
    # j = 1, 3, ..., 29 are 15 of the 31 boundaries. They are all busy at once in 1F1B, so the
    # send/receive is priced as a crossing one: one GPU in each of two nodes, its own rail NIC.
    crossing = [j for j in range(31) if (4 * (j + 1)) % 8 == 0]
    assert crossing == list(range(1, 31, 2))
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16), pp=32, dp=4)
    pp = _phase(result, "pp-sendrecv")
    assert pp.tier == "scale-out"
    assert pp.count == 2 * (32 + 32 - 1)  # M = pp = 32 micro-batches by default
    # b x s x h x 2 / tp = 8192 x 8192 x 2 = 128 MiB
    assert pp.bytes_per_gpu == 8192 * 8192 * 2
    same = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=2, gpus_per_node=1, nics_per_node=1, inter="ndr"),
        Collective.SEND_RECV,
        8192 * 8192 * 2,
        dtype="bf16",
    )
    assert pp.time_s == same.time_s
    assert any("15 of 31 stage boundaries cross" in note for note in pp.assumptions)
    # pp 16 x dp 8: one stage per node, every boundary crosses: the same pair, the same time
    pp16 = _phase(
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16), pp=16, dp=8),
        "pp-sendrecv",
    )
    assert (pp16.tier, pp16.time_s) == ("scale-out", same.time_s)
    # pp 2 x dp 4 on one node: stages 0-3 and 4-7 share the node, the boundary stays inside
    inside = _phase(
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1), pp=2, dp=4),
        "pp-sendrecv",
    )
    assert inside.tier == "scale-up"


def _mixtral_ep8(cat: Catalogue, **train: object) -> TrainResult:
    """Mixtral 8x7B on 2 x DGX H100 with tp 1, ep 8, dp 16."""
    return _run(
        cat, ClusterSpec(system="dgx-h100"), tp=1, dp=16, ep=8, model_id="mixtral-8x7b", **train
    )


def test_expert_parallel_all_to_all(builtin_catalogue: Catalogue) -> None:
    # Mixtral 8x7B (arXiv:2401.04088 Table 1): 32 layers, hidden 4096, top-2 of 8, 32k context
    # per GPU: b x s x top_k x h x 2 = 1 x 32768 x 2 x 4096 x 2 = 536,870,912 B
    # dispatch + combine, forward and backward, per MoE layer: 4 x 32 = 128
    result = _mixtral_ep8(builtin_catalogue)
    ep = _phase(result, "ep-alltoall")
    assert ep.collective is Collective.ALL_TO_ALL
    assert ep.bytes_per_gpu == 536_870_912
    assert ep.count == 128
    assert ep.ranks == 8
    assert ep.tier == "scale-up"  # 8 consecutive ranks: one DGX node


def _deepseek_v3(
    cat: Catalogue, *, nodes: int, cp: int = 1, tp: int = 8, pp: int = 16, dp: int = 8, ep: int = 8
) -> TrainResult:
    """DeepSeek-V3 on DGX H100 (tp 8, pp 16, dp 8, ep 8 unless given), sequence parallelism
    where tp > 1, 4,096 tokens."""
    return _run(
        cat,
        ClusterSpec(system="dgx-h100", nodes=nodes),
        tp=tp,
        pp=pp,
        dp=dp,
        ep=ep,
        cp=cp,
        model_id="deepseek-v3",
        sequence_parallel=tp > 1,
        seq_len=4096,
    )


def test_split_expert_gradients_are_gated_by_the_stage_with_most_to_exchange(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3 on tp 8, pp 16, ep 8 and dp 8 (128 DGX H100): dp / ep = 1, so the routed
    experts need no exchange and only the shared parameters go over the 8 dp ranks. Stage 0
    holds the input embedding (129,280 x 7,168 / tp) and the three dense layers: its shared
    parameters gate the step. The stage with the most parameters counting experts unsharded
    (stage 1, four MoE layers) had been taken, and its shared 223.6 MB priced: 3.2x short."""
    result = _deepseek_v3(builtin_catalogue, nodes=128)
    model = find_model("deepseek-v3")
    per_stage = [stage_params(model, tp=8, pp=16, ep=8, stage=k)[1:3] for k in range(16)]
    shared0 = per_stage[0][0]
    # stage 0 has the most shared parameters: the embedding alone is 129,280 x 7,168 / 8
    assert shared0 == max(shared for shared, _ in per_stage)
    assert shared0 > 129_280 * 7_168 / 8
    assert _phase(result, "dp-allreduce").bytes_per_gpu == pytest.approx(shared0 * 2)
    assert not [p for p in result.phases if p.name.startswith("edp-")]


def test_expert_parallel_splits_the_expert_gradients(builtin_catalogue: Catalogue) -> None:
    """Mixtral's preset: 47B total, 13B active, top-2 of 8. Experts E = (47 - 13) / (1 - 2/8)
    = 45.33B, shared 1.67B. tp 2, ep 8, dp 32 on 8 DGX H100: each GPU holds E / (tp ep) of the
    experts, reduced over the dp / ep = 4 ranks with the same experts (16 GPUs apart), and the
    shared 1.67B / tp over all 32 dp ranks. Every parameter's gradient over all 32 had been
    47B x 2 B / 2 = 47 GB per GPU; it is 1.67 + 5.67 = 7.33 GB."""

    def mixtral(**layout: object) -> TrainResult:  # 8 DGX H100, tp 2, dp 32, ep 8 by default
        given = {"tp": 2, "dp": 32, "ep": 8, **layout}
        nodes = ClusterSpec(system="dgx-h100", nodes=8)
        return _run(builtin_catalogue, nodes, model_id="mixtral-8x7b", **given)  # type: ignore[arg-type]

    result = mixtral()
    experts = (47e9 - 13e9) / (1 - 2 / 8)
    dense, edp = _phase(result, "dp-allreduce"), _phase(result, "edp-allreduce")
    assert dense.bytes_per_gpu == pytest.approx((47e9 - experts) * 2 / 2)
    assert dense.ranks == 32
    assert edp.bytes_per_gpu == pytest.approx(experts * 2 / (2 * 8))
    assert edp.ranks == 4
    assert edp.tier == "scale-out"  # 16 GPUs apart: two nodes per hop
    assert dense.bytes_per_gpu + edp.bytes_per_gpu == pytest.approx(7.333e9, rel=1e-3)
    # tp 2 without sequence parallelism: both TP ranks dispatch the same 32768 tokens
    assert any("every TP rank dispatches the same 32768 tokens" in w for w in result.warnings)
    split = mixtral(sequence_parallel=True)
    assert not any("dispatches the same" in w for w in split.warnings)
    assert (
        _phase(split, "ep-alltoall").bytes_per_gpu
        == _phase(result, "ep-alltoall").bytes_per_gpu / 2
    )
    # ep 1 holds every expert: one exchange of all 47B over all dp ranks, as before
    whole = mixtral(ep=1)
    assert _phase(whole, "dp-allreduce").bytes_per_gpu == pytest.approx(47e9 * 2 / 2)
    assert not [p for p in whole.phases if p.name.startswith("edp-")]


def test_context_parallel_all_gathers_kv(builtin_catalogue: Catalogue) -> None:
    # Llama 3's all-gather CP: K and V of b x s x kv_heads x head_dim, split over tp
    # 1 x 8192 x (2 x 8 x 128) x 2 / 8 = 4,194,304 B per layer, AG forward, RS backward
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, cp=2, dp=8)
    ag, rs = _phase(result, "cp-allgather-kv"), _phase(result, "cp-reducescatter-kv")
    assert ag.bytes_per_gpu == rs.bytes_per_gpu == 4_194_304
    assert ag.count == rs.count == 80
    # CP splits the sequence: TP activations are 8192 / 2 tokens
    assert _phase(result, "tp-allreduce").bytes_per_gpu == 4096 * 8192 * 2
    # gradients are reduced over dp x cp = 16 ranks
    assert _phase(result, "dp-allreduce").ranks == 16


def test_the_gradient_group_is_called_dp_x_cp_with_context_parallelism(
    builtin_catalogue: Catalogue,
) -> None:
    """docs/workload.md, Placement: the gradients go over the dp x cp ranks holding the same
    weights. tp 8, cp 2, dp 8 on 16 DGX H100: 16 ranks 8 apart, one in each node. Its note had
    called them "dp group: 16 GPUs" beside dp 8; without cp the group is dp's alone."""
    cluster = ClusterSpec(system="dgx-h100", nodes=16)
    result = _run(builtin_catalogue, cluster, tp=8, cp=2, dp=8)
    (note,) = _phase(result, "dp-allreduce").assumptions
    assert note.startswith("dp x cp group: 16 GPUs, 1 in each of 16 scale-up domains;")
    plain = _run(builtin_catalogue, cluster, tp=8, cp=1, dp=16)
    (note,) = _phase(plain, "dp-allreduce").assumptions
    assert note.startswith("dp group: 16 GPUs, 1 in each of 16 scale-up domains;")


def test_a_dp_x_cp_group_that_does_not_place_is_refused_by_its_size(
    builtin_catalogue: Catalogue,
) -> None:
    """tp 1, cp 2, dp 6, pp 2 on 3 DGX H100: the gradients' 12 consecutive ranks do not tile the
    8-GPU nodes. The refusal had read "{dp} 12", which the command line shows as "--dp 12" to
    one who gave --dp 6."""
    with pytest.raises(WorkloadError) as caught:
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=3), tp=1, cp=2, dp=6, pp=2)
    assert caught.value.field == "dp"
    assert caught.value.template == (
        "dp x cp = 12 does not divide into groups of 8 per 8-GPU scale-up domain"
    )


def test_a_gating_stage_without_experts_is_said_to_have_no_expert_phase(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3 on tp 8, pp 32, ep 16, dp 32 (1,024 DGX H100): stage 0, dense layers only,
    is the slowest to exchange, so no edp- phase is shown; the note had still pointed at 'the
    edp- phases'."""
    result = _deepseek_v3(builtin_catalogue, nodes=1024, pp=32, dp=32, ep=16)
    assert not [p for p in result.phases if p.name.startswith("edp-")]
    (note,) = [n for n in result.assumptions if n.startswith("MoE: the")]
    assert "(the edp- phases; the stage that gates the step holds none)" in note


def test_the_unsplit_upper_bound_exchanges_what_a_gpu_holds(builtin_catalogue: Catalogue) -> None:
    """With context parallelism the expert gradients are not split from the shared ones: every
    GPU exchanges all it holds over all dp x cp ranks, an upper bound. DeepSeek-V3 on tp 8, cp 2,
    pp 16, ep 4, dp 4 holds 1.52e9 parameters on its busiest stage (the memory's count), 3.04 GB
    of bf16 gradients; the exchange had counted its routed experts x ep, as if it held every
    shard: 11.5 GB, 3.8x what the GPU has."""
    result = _deepseek_v3(builtin_catalogue, nodes=128, cp=2, ep=4, dp=4)
    dp = _phase(result, "dp-allreduce")
    assert result.memory is not None
    assert dp.bytes_per_gpu == pytest.approx(2 * result.memory.params_per_gpu, rel=1e-9)
    assert dp.ranks == 8
    assert any("its expert shard's included" in note for note in result.assumptions)


def test_the_split_exchange_is_gated_by_the_stage_that_takes_longest(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3 on tp 1, pp 32, ep 8, dp 16 (64 DGX H100): stage 0 holds the embedding and
    two dense layers, no experts; a stage of MoE layers holds 2.8B routed parameters per GPU,
    exchanged with the one other dp rank holding the same experts, across nodes, and a small
    shared part over all 16 dp ranks, 8 of them inside each node. Weighed by bytes alone, stage
    0 was taken, and its expert exchange, of 0 B, was refused ('size 0 B is smaller than one
    bf16 element'); weighed by time, the MoE stage gates the step (120 ms against 16 ms)."""
    result = _deepseek_v3(builtin_catalogue, nodes=64, tp=1, pp=32, dp=16)
    model = find_model("deepseek-v3")
    per_stage = [stage_params(model, tp=1, pp=32, ep=8, stage=k)[1:3] for k in range(32)]
    assert per_stage[0][1] == 0  # stage 0: dense layers only
    routed = max(r for _, r in per_stage)
    edp, dp = _phase(result, "edp-allreduce"), _phase(result, "dp-allreduce")
    assert edp.bytes_per_gpu == pytest.approx(routed * 2)
    assert edp.ranks == 2
    assert dp.bytes_per_gpu < per_stage[0][0] * 2  # not stage 0's shared parameters
    stage0 = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=2, gpus_per_node=8),
        Collective.ALL_REDUCE,
        per_stage[0][0] * 2,
        dtype="bf16",
    )
    assert edp.time_s + dp.time_s > stage0.time_s


def test_context_parallel_kv_is_split_over_the_kv_heads_only(builtin_catalogue: Catalogue) -> None:
    """Past kv_heads TP ranks a rank holds one whole KV head: Llama 3 70B has 8, so on tp 16
    each rank gathers 1 x 8192 x 2048 x 2 / 8 = 4 MiB, as on tp 8 (it had divided by 16:
    2 MiB). DeepSeek-V3's latent (576 elements) is kept whole on every TP rank (arXiv:2412.19437
    2.1.1), so it is gathered whole: 1 x 4096 x 576 x 2 = 4,718,592 B, not / 8."""
    wide = _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4), tp=16, cp=2, dp=1)
    assert _phase(wide, "cp-allgather-kv").bytes_per_gpu == 8192 * 2048 * 2 / 8
    latent = _deepseek_v3(builtin_catalogue, nodes=256, cp=2)
    assert _phase(latent, "cp-reducescatter-kv").bytes_per_gpu == 4096 * 576 * 2
    assert any("latent KV cache" in note for note in latent.assumptions)


def test_overlap_hides_dp_under_backward(builtin_catalogue: Catalogue) -> None:
    cluster = ClusterSpec(system="dgx-h100")
    hidden = _run(builtin_catalogue, cluster, tp=8, dp=16, backward_s=10.0)
    dp = _phase(hidden, "dp-allreduce")
    assert dp.time_s < 10.0
    assert dp.exposed_s == 0.0
    assert hidden.totals.forward_s == pytest.approx(5.0)  # backward ~ 2 x forward
    short = _run(builtin_catalogue, cluster, tp=8, dp=16, backward_s=0.1)
    dp_short = _phase(short, "dp-allreduce")
    assert dp_short.exposed_s == pytest.approx(dp_short.time_s - 0.1)
    # step = forward + backward + exposed (TP fully exposed)
    tp = _phase(short, "tp-allreduce")
    assert short.totals.step_s == pytest.approx(0.05 + 0.1 + dp_short.exposed_s + tp.total_s)


def test_overlap_window_is_the_last_micro_batch(builtin_catalogue: Catalogue) -> None:
    # with M micro-batches the gradient exchange can only hide under the last one's backward
    result = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100"),
        tp=8,
        pp=2,
        dp=8,
        microbatches=4,
        backward_s=1.0,
    )
    dp = _phase(result, "dp-allreduce")
    assert dp.exposed_s == pytest.approx(max(0.0, dp.time_s - 1.0 / 4))


def test_zero3_windows(builtin_catalogue: Catalogue) -> None:
    # ZeRO-3: M forward all-gathers under the forward (backward / 2), the rest under backward
    result = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100"),
        tp=8,
        dp=16,
        zero=3,
        backward_s=0.2,
    )
    fwd = _phase(result, "dp-allgather-fwd")
    bwd, rs = _phase(result, "dp-allgather-bwd"), _phase(result, "dp-reducescatter")
    assert fwd.exposed_s == pytest.approx(max(0.0, fwd.total_s - 0.1))
    assert bwd.exposed_s + rs.exposed_s == pytest.approx(max(0.0, bwd.total_s + rs.total_s - 0.2))


#: Llama 3 70B's training FLOPs per token at its 8,192-token context: 6 x 70e9 for the weights
#: plus PaLM's 12 L H Q T for the attention's score and value products (Chowdhery et al. 2022,
#: appendix B): 12 x 80 layers x 64 heads x 128 x 8192 = 64.42e9, 13.3 % of the total.
#: 6 x (70e9 less the input embedding's 128,256 x 8192 = 1.0507e9, a lookup) + the attention's
#: 12 L H Q s: 413.7e9 + 64.4e9 = 478.1e9 FLOPs per token
LLAMA70_FLOPS_PER_TOKEN = 6 * (70e9 - 128256 * 8192) + 12 * 80 * 64 * 128 * 8192


def test_uneven_stages_run_at_the_busiest_stages_pace(builtin_catalogue: Catalogue) -> None:
    """Llama 3 70B's 80 layers over pp 32 (tp 2, 64 H100): the busiest stage holds 3 layers,
    not the average 2.5, and 1F1B runs at its pace, as the TP and memory figures already
    assumed. Compute had been the even split, 478.1e9 x 32 x 8192 / 64 / 400e12 = 4.90 s;
    3/80 of the layers / tp 2: 5.88 s, and the bubble (31/32 of it) with it."""
    result = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=8), tp=2, pp=32, dp=1, tflops=400
    )
    tokens = 32 * 8192
    assert result.totals.compute_s == pytest.approx(
        LLAMA70_FLOPS_PER_TOKEN * tokens * 3 / 80 / 2 / 400e12
    )
    assert result.totals.compute_s == pytest.approx(5.875, abs=1e-3)
    (note,) = [n for n in result.assumptions if n.startswith("compute from")]
    assert (
        "x 262144 tokens per replica x 3/80 of the layers (the busiest of 32 stages) / (tp x cp)"
        in note
    )
    # an even split (pp 16, tp 4: 5 layers a stage) keeps 1/pp of the work
    even = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=8), tp=4, pp=16, dp=1, tflops=400
    )
    assert even.totals.compute_s == pytest.approx(LLAMA70_FLOPS_PER_TOKEN * 16 * 8192 / 64 / 400e12)
    # under --compare one --backward-time serves every layout: it is read as the even split's,
    # and the busiest stage's share scales it as it scales --tflops' compute (unscaled, it had
    # ranked uneven pipelines ahead, review CN: tp 4 pp 32, 15.70 s with --tflops, 13.26 s
    # with the same compute given as a time); 4.90 s of compute is a backward of 2/3 of it
    even_backward = LLAMA70_FLOPS_PER_TOKEN * tokens / 64 / 400e12 * 2 / 3
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=8))
    base = TrainSpec(model=find_model("llama3-70b"), parallel=Parallelism(dp=64), global_batch=32)
    by_rate, _ = compare_layouts(
        builtin_catalogue, cluster, base.model_copy(update={"tflops": 400})
    )
    by_time, _ = compare_layouts(
        builtin_catalogue, cluster, base.model_copy(update={"backward_s": even_backward})
    )
    layouts = [(r.spec.parallel.tp, r.spec.parallel.pp, r.spec.parallel.dp) for r in by_rate]
    assert [(r.spec.parallel.tp, r.spec.parallel.pp, r.spec.parallel.dp) for r in by_time] == (
        layouts
    )
    for rate, time in zip(by_rate, by_time, strict=True):
        assert time.totals.step_s == pytest.approx(rate.totals.step_s)
    (timed,) = [r for r in by_time if (r.spec.parallel.tp, r.spec.parallel.pp) == (2, 32)]
    assert timed.totals.compute_s == pytest.approx(result.totals.compute_s)
    (note,) = [n for n in timed.assumptions if n.startswith("backward compute")]
    assert ", x 3 x 32/80 for the busiest stage's layers (3 of 80 on 32 stages;" in note
    # a single run's time is its own layout's, as measured: 2/3 of it forward and backward
    single = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=8),
        tp=2,
        pp=32,
        dp=1,
        backward_s=even_backward,
    )
    assert single.totals.compute_s == pytest.approx(even_backward * 1.5)


def test_a_groups_ring_keeps_the_neighbour_cross_leaf_fraction(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 8B on 64 DGX H100 over RoCE 400G, leaves tapered 2:1, 85.7 % of all-to-all
    traffic but 10 % of neighbour traffic crossing them (the fractions `check` derives from a
    non-rail-optimised design): the DP all-reduce of 16 GB over all 512 GPUs is the cluster's
    own all-reduce, k x f = 2 x 0.1 <= 1, so not slowed. The group's sub-cluster had dropped
    the neighbour fraction and priced its tree at the uniform one, 1.71x slower (143 ms
    against 83.4 ms)."""
    spec = ClusterSpec(
        system="dgx-h100",
        inter="roce-400g",
        nodes=64,
        oversubscription=2,
        cross_leaf_fraction=0.857,
        neighbour_cross_leaf_fraction=0.1,
    )
    result = _run(builtin_catalogue, spec, model_id="llama3-8b")
    dp = _phase(result, "dp-allreduce")
    alone = estimate(builtin_catalogue, spec, Collective.ALL_REDUCE, dp.bytes_per_gpu, dtype="bf16")
    assert dp.time_s == pytest.approx(alone.time_s, rel=1e-9)
    flat = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", inter="roce-400g", nodes=64),
        Collective.ALL_REDUCE,
        dp.bytes_per_gpu,
        dtype="bf16",
    )
    assert dp.time_s == pytest.approx(flat.time_s, rel=1e-9)


#: 256 DGX H100 on rail-optimized QM9700 SUs of 48 nodes at 4:1, with the shares `check` derives
#: (208/255 of all-to-all traffic crossing, 1/48 of neighbour traffic, 0.977 off its rail)
SU48_TAPERED = ClusterSpec(
    system="dgx-h100",
    nodes=256,
    oversubscription=4,
    cross_leaf_fraction=208 / 255,
    neighbour_cross_leaf_fraction=1 / 48,
    unaligned_cross_leaf_fraction=0.977,
)


def test_a_group_under_one_leaf_group_is_clear_of_the_taper(builtin_catalogue: Catalogue) -> None:
    """256 DGX H100 on rail-optimized QM9700 SUs of 48 nodes at 4:1 (the shares `check`
    derives: 208/255 of all-to-all traffic crossing, 1/48 of neighbour traffic, 0.977 off its
    rail). Mixtral on tp 2, ep 8: an expert group spans 16 consecutive ranks, 2 nodes, and 48
    is a multiple of 2, so every group sits in one SU, where rail-aligned traffic never meets
    the uplinks: its all-to-all costs what it costs at 1:1. It had taken the whole cluster's
    share, 4 x 208/255 = 3.26x (5.55 -> 18 ms a call, a fabric architect's review). The
    pipeline's stage pairs do not start at multiples of their span and keep the cluster's
    shares."""
    tapered = SU48_TAPERED
    specs = (
        tapered.replace(leaf_group_nodes=48),
        tapered,
        ClusterSpec(system="dgx-h100", nodes=256),
    )
    runs = [_run(builtin_catalogue, c, tp=2, pp=4, ep=8, model_id="mixtral-8x7b") for c in specs]
    local, whole, flat = (_phase(r, "ep-alltoall") for r in runs)
    # by hand: 1 x 32768 x top-2 x 4096 x 2 B = 512 MiB a GPU (test_expert_parallel_all_to_all),
    # an expert group of 8 = 2 nodes x 4 GPUs, run as PXN: each GPU sends (n-m)/n x S = 256 MiB
    # through its one NDR NIC at 50 GB/s x 0.975 (data/links.yaml), 5506.37 us, after NCCL's
    # ring/Simple base 8.4 us, a NET Simple hop of 14 us and n-1 = 7 messages x 2.4 us
    # (calibrated.per_message_latency, an H100 at Hopper's clock): 39.2 us. The whole cluster's
    # taper slows the transfer by 4 x 208/255, not the latency
    assert whole.bytes_per_gpu == 1 * 32768 * 2 * 4096 * 2 == 2**29
    latency = (8.4 + 14.0 + 7 * 2.4) * 1e-6
    transfer = 2**28 / (50e9 * 0.975)
    assert (latency + transfer) * 1e6 == pytest.approx(5545.5683, rel=1e-7)
    assert local.time_s == pytest.approx(flat.time_s, rel=1e-9)
    assert flat.time_s == pytest.approx(latency + transfer, rel=1e-9)
    assert whole.time_s == pytest.approx(latency + 4 * 208 / 255 * transfer, rel=1e-9)
    pp = [_phase(r, "pp-sendrecv").time_s for r in runs[:2]]
    assert pp[0] == pytest.approx(pp[1], rel=1e-9)
    # a leaf group of 3 nodes does not hold whole 2-node groups: the cluster's shares
    odd = _run(
        builtin_catalogue,
        tapered.replace(leaf_group_nodes=3),
        tp=2,
        pp=4,
        ep=8,
        model_id="mixtral-8x7b",
    )
    assert _phase(odd, "ep-alltoall").time_s == pytest.approx(whole.time_s, rel=1e-9)


def test_tflops_gives_compute(builtin_catalogue: Catalogue) -> None:
    # 478.1e9 x (1 x 8192 tokens) / (tp 8) / 400e12 = 1.2240 s per step; forward a third
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16, tflops=400)
    assert result.totals.compute_s == pytest.approx(LLAMA70_FLOPS_PER_TOKEN * 8192 / 8 / 400e12)
    assert result.totals.compute_s == pytest.approx(1.2240, abs=1e-4)
    assert result.totals.forward_s == pytest.approx(result.totals.compute_s / 3)
    (note,) = [n for n in result.assumptions if n.startswith("compute from")]
    assert note.startswith(
        "compute from (6 x 68.9B params (70B less the 1.05B input embedding, a lookup) + 64.4B "
        "attention FLOPs) per token x 8192 tokens per replica / (tp x pp x cp) at 400 TFLOP/s "
        "per GPU = 1.22 s per step (the attention's "
        "score and value products, 6 x 80 layers x 64 heads x 2 x 128 x 8,192 context, 13% of "
        "the total; PaLM's count)"
    )


def test_a_small_attention_share_does_not_read_as_none(builtin_catalogue: Catalogue) -> None:
    """At a 128-token context Llama 3 70B's attention products are 12 x 80 x 64 x 128 x 128 =
    1.0066e9 FLOPs a token of 6 x (70e9 - 128,256 x 8192) + 1.0066e9 = 414.70e9: 0.243 %, which
    the compute note had printed as '0% of the total' (two figures below 10 %: 0.24 %)."""
    attention = 12 * 80 * 64 * 128 * 128
    share = attention / (6 * (70e9 - 128256 * 8192) + attention)
    assert share == pytest.approx(0.002427, abs=1e-6)
    result = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16, seq_len=128, tflops=400
    )
    (note,) = [n for n in result.assumptions if n.startswith("compute from")]
    assert "x 2 x 128 x 128 context, 0.24% of the total; PaLM's count" in note


def test_compute_leaves_out_the_input_embedding() -> None:
    """The input embedding is a lookup, not a matmul (Kaplan et al. count non-embedding
    parameters): Llama 3 8B multiplies with 8e9 - 128,256 x 4096 = 7.475e9 (a review: all 8e9
    had been priced: 6 x 0.525e9 of 6 x 8e9 + 12.9e9 FLOPs a token, 5.2 % too much); MoE the
    active ones less it (DeepSeek-V3: 37e9 - 129,280 x 7168); a model without a vocabulary, or
    one whose embedding would be half of it or more, keeps its count."""
    assert find_model("llama3-8b").matmul_params == pytest.approx(8e9 - 128256 * 4096)
    assert find_model("deepseek-v3").matmul_params == pytest.approx(37e9 - 129280 * 7168)
    assert ModelSpec(params=7e9).matmul_params == 7e9
    lopsided = ModelSpec(params=1e9, vocab=128256, hidden=2048, layers=1)  # 263M embedding
    assert lopsided.matmul_params == pytest.approx(1e9 - 128256 * 2048)
    tiny = ModelSpec(
        params=600e6, active_params=300e6, vocab=128256, hidden=2048, layers=1, experts=8, top_k=2
    )
    assert tiny.matmul_params == 300e6


def test_tflops_is_judged_against_the_gpus_peak(builtin_catalogue: Catalogue) -> None:
    """--tflops against the H100 SXM's dense bf16 peak, 1,979 TFLOPS with sparsity on NVIDIA's
    page, so 989 (the catalogue's): 400 is 400 / 989 = 40 % of it, said as the MFU; 1,400 is
    1400 / 989 = 1.42x, a warning (it had priced the compute at any rate without a word); with
    fp8 activations on a GPU with fp8 tensor cores up to twice the peak passes, 1,400 being
    142 % of the 16-bit peak."""
    h100 = ClusterSpec(system="dgx-h100")
    notes = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=400).assumptions
    assert (
        "{tflops} 400 TFLOP/s per GPU is 40% of dgx-h100's GPU peak, 989 TFLOP/s dense 16-bit "
        "(its MFU)"
    ) in notes
    fast = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=1400)
    assert (
        "{tflops} 1400 TFLOP/s per GPU is faster than dgx-h100's GPUs run: 1.42x their peak, "
        "989 TFLOP/s dense 16-bit"
    ) in fast.warnings
    # just above: 1000 / 989 = 1.01x, not '1x' (a review); far above: 104x, not '1e+02x'
    just = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=1000).warnings
    assert any("1.01x their peak" in w for w in just)
    far = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=103_000).warnings
    assert any("104x their peak" in w for w in far)
    # full recompute: the rate covers 8/6 of the model's FLOPs, so 40 % of the peak is the
    # hardware utilisation and the MFU 40 x 6/8 = 30 % (a review: it had said 'its MFU')
    full = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=400, recompute=Recompute.FULL)
    assert any(n.endswith("an MFU of 30%)") for n in full.assumptions)
    fp8 = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=1400, act_dtype=DType.FP8)
    assert not [w for w in fp8.warnings if "peak" in w]
    assert (
        "{tflops} 1400 TFLOP/s per GPU is 142% of dgx-h100's GPU peak, 989 TFLOP/s dense 16-bit "
        "(fp8 matmuls run at up to twice it)"
    ) in fp8.assumptions
    # MI300X: 1,307.4 TFLOPS bf16 dense on AMD's page; 2,000 is 1.53x it
    amd = _run(builtin_catalogue, ClusterSpec(system="mi300x-8"), tp=8, dp=2, tflops=2000)
    assert any("mi300x-8's GPUs run: 1.53x their peak" in w for w in amd.warnings)
    # an A100 has no fp8 tensor cores: fp8 activations get no allowance (500 / 312 = 1.60x)
    a100 = ClusterSpec(system="dgx-a100")
    slow = _run(builtin_catalogue, a100, tp=8, dp=2, tflops=500, act_dtype=DType.FP8)
    assert any("dgx-a100's GPUs run: 1.60x their peak" in w for w in slow.warnings)
    # NVIDIA's own dense figure, 989.4, is within the catalogue's rounding (0.5 %): no warning
    exact = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=989.4)
    assert not [w for w in exact.warnings if "peak" in w]
    # a rate under 1 % of the peak asks about the unit; a large one prints with separators
    tiny = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=0.001).assumptions
    assert any(n.endswith("(under 1 %: is the rate in TFLOP/s?)") for n in tiny)
    # two decimals under 1 %: 9 / 989 = 0.91 %, not '1% ... under 1 %' (a review)
    nine = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=9).assumptions
    assert any("is 0.91% of dgx-h100's GPU peak" in n for n in nine)
    # a rate under the peak never reads as all of it: 985 / 989 = 99.6 %, not '100%'; nor a
    # tiny one as none: 0.001 / 989 = 0.00010 %, not '0.00%'
    close = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=985).assumptions
    assert any("985 TFLOP/s per GPU is 99.6% of dgx-h100's GPU peak" in n for n in close)
    assert any("0.001 TFLOP/s per GPU is 0.00010% of dgx-h100's GPU peak" in n for n in tiny)
    # a rate just under 1 % of the peak does not read as 1 % beside 'under 1 %': 9.88 / 989 =
    # 0.99899 % is 0.999%, not '1.0% ... (under 1 %'; 9.9 / 989 = 1.001 % reads 1.0% (its MFU)
    edge = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=9.88).assumptions
    assert any(
        "9.88 TFLOP/s per GPU is 0.999% of dgx-h100's GPU peak, 989 TFLOP/s dense 16-bit "
        "(under 1 %: is the rate in TFLOP/s?)" in n
        for n in edge
    )
    over = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=9.9).assumptions
    assert any("9.9 TFLOP/s per GPU is 1.0% of dgx-h100's GPU peak" in n for n in over)
    assert any(n.endswith("(its MFU)") for n in over)
    huge = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=1e6).warnings
    assert any(w.startswith("{tflops} 1,000,000 TFLOP/s per GPU is faster") for w in huge)
    # no figure for the generic PCIe node: said, as the memory fit is (a review: 4,000 on an
    # H20 had passed without a word)
    plain = _run(builtin_catalogue, ClusterSpec(system="pcie-8gpu"), tp=8, dp=2, tflops=400)
    assert not [w for w in plain.warnings if "peak" in w]
    assert (
        "{tflops} not judged against a GPU peak: pcie-8gpu states none (a --catalogue file's "
        "gpu_peak_tflops gives one)"
    ) in plain.assumptions
    built = ClusterSpec(gpus_per_node=8, intra="nvlink4", inter="ndr", nodes=4)
    flags = _run(builtin_catalogue, built, tp=8, dp=4, tflops=400).assumptions
    assert any(
        n.startswith(
            "{tflops} not judged against a GPU peak: no system preset states the GPUs' peak"
        )
        for n in flags
    )
    # int8 activations are no fp8: no allowance on an H100 (1,400 is 1.42x)
    int8 = _run(builtin_catalogue, h100, tp=8, dp=16, tflops=1400, act_dtype=DType.INT8)
    assert any("1.42x their peak" in w for w in int8.warnings)


def test_attention_flops_under_latent_attention_and_without_a_shape(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3's MLA queries and keys are d_h + d_h^R = 128 + 64 wide, its values 128
    (arXiv:2412.19437, section 2.1.1): 6 x 61 x 128 x (192 + 128) x 4096 = 61.40e9 FLOPs per
    token. A count without a shape counts the weights alone and says what is missing."""
    deepseek = find_model("deepseek-v3")
    assert deepseek.attention_flops_per_token(4096) == pytest.approx(6 * 61 * 128 * 320 * 4096)
    bare = ModelSpec(params=7e9, seq_len=4096)
    assert bare.attention_flops_per_token(4096) is None
    result = train_step(
        builtin_catalogue,
        resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2)),
        TrainSpec(model=bare, parallel=Parallelism(dp=16), tflops=400),
    )
    assert result.totals.compute_s == pytest.approx(6 * 7e9 * 4096 / 400e12)
    assert any(
        "products not counted: give {layers}, {heads} and {hidden}" in n for n in result.assumptions
    )


def test_full_recompute_runs_the_forward_and_its_collectives_again(
    builtin_catalogue: Catalogue,
) -> None:
    """Full recompute repeats each layer's forward in the backward pass (Korthikanti et al.
    2022, section 5): 8 P N FLOPs, not 6, and the forward's collectives again. Llama 3 70B on
    tp 8, cp 2, ep 1, dp 8, one micro-batch: TP 2 + 2 + 2 = 6 all-reduces per layer (480, not
    320), the CP all-gather twice per layer (160) and its reduce-scatter once (80); compute
    8/6 of (6 x 70e9 + 12 x 80 x 64 x 128 x 8192) x 8192 / (8 x 2) / 400e12 = 0.8268 s, the
    forward still a quarter of it."""
    full = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=16),
        tp=8,
        cp=2,
        dp=8,
        tflops=400,
        recompute=Recompute.FULL,
    )
    assert _phase(full, "tp-allreduce").count == 6 * 80
    assert _phase(full, "cp-allgather-kv").count == 2 * 80
    assert _phase(full, "cp-reducescatter-kv").count == 80
    assert full.totals.compute_s == pytest.approx(
        LLAMA70_FLOPS_PER_TOKEN * 8 / 6 * 8192 / 16 / 400e12
    )
    (note,) = [n for n in full.assumptions if n.startswith("compute from")]
    assert ", x 8/6 (full recompute runs the forward again in the backward) = 816 ms" in note
    assert full.totals.forward_s == pytest.approx(
        LLAMA70_FLOPS_PER_TOKEN * 2 / 6 * 8192 / 16 / 400e12
    )
    kept = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16), tp=8, cp=2, dp=8, tflops=400
    )
    assert _phase(kept, "tp-allreduce").count == 4 * 80
    assert _phase(kept, "cp-allgather-kv").count == 80
    assert kept.totals.compute_s == pytest.approx(LLAMA70_FLOPS_PER_TOKEN * 8192 / 16 / 400e12)
    # Mixtral's all-to-alls: dispatch and combine in each of the three passes, 6 per layer
    moe = _mixtral_ep8(builtin_catalogue, recompute=Recompute.FULL)
    assert _phase(moe, "ep-alltoall").count == 6 * 32


def test_tp_across_nodes_warns_with_the_slowdown(builtin_catalogue: Catalogue) -> None:
    result = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=16, dp=8)
    tp = _phase(result, "tp-allreduce")
    assert tp.tier == "scale-out"
    # across: the 16 TP ranks are two whole DGX H100 nodes with all 8 NICs each
    across = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=2, gpus_per_node=8, nics_per_node=8, inter="ndr"),
        Collective.ALL_REDUCE,
        134_217_728,
        dtype="bf16",
    )
    # inside: a (hypothetical) 16-GPU NVLink 4 domain
    inside = estimate(
        builtin_catalogue,
        ClusterSpec(nodes=1, gpus_per_node=16, intra="nvlink4"),
        Collective.ALL_REDUCE,
        134_217_728,
        dtype="bf16",
    )
    assert tp.time_s == across.time_s
    slowdown = across.time_s / inside.time_s
    assert slowdown > 1
    warning = next(w for w in result.warnings if "crosses the 8-GPU scale-up domain" in w)
    assert f"({slowdown:.3g}x slower" in warning
    # the 16-GPU domain is a what-if, said as one, and --compare weighs a tp that fits
    assert "were the 16 GPUs one nvlink4 domain, which none is here (" in warning
    assert warning.endswith("{compare} weighs a tp that fits the domain")
    # inside one node there is no such warning
    ok = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16)
    assert not any("crosses" in w for w in ok.warnings)
    # with sequence parallelism the per-step figures are the all-gathers' own on both sides
    # (review BR: the step's all-gathers and reduce-scatters had been set beside the
    # all-gathers alone inside, 21.4 s vs 12.2 s for a real 12.9 s vs 12.2 s)
    sp = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=16),
        tp=16,
        dp=8,
        sequence_parallel=True,
    )
    (gather,) = (p for p in sp.phases if p.name == "tp-allgather")
    (warning,) = (w for w in sp.warnings if "crosses the 8-GPU scale-up domain" in w)
    assert f"each TP all_gather of 128 MiB takes {format_time(gather.time_s)}" in warning
    assert f"slower; {format_time(gather.time_s * gather.count)} vs " in " ".join(warning.split())


def test_tp_past_a_switchless_mesh_is_priced_without_a_domain_to_compare(
    builtin_catalogue: Catalogue,
) -> None:
    """Review BO: tp 8 on 4-GPU Snellius nodes (a 4-GPU NVLink mesh) had been refused as
    '--gpus-per-node 8: nvlink4-mesh4 is a switchless mesh ...', the what-if of an 8-GPU mesh
    leaking out as the user's error; the run is priced and the warning says no such domain
    exists."""
    result = _run(builtin_catalogue, ClusterSpec(system="snellius-h100", nodes=8), tp=8, dp=4)
    (warning,) = (w for w in result.warnings if "crosses the 4-GPU scale-up domain" in w)
    tp = sum(p.time_s * p.count for p in result.phases if p.name.startswith("tp"))
    # worked by hand: 320 all-reduces of 128 MiB over two 4-GPU nodes, each 4 x ndr200, by
    # tree/LL128 (data/cost_params.yaml): base 14 us + 2 x 3 NVLink hops of 1.25 us + 2 NET
    # levels of 8.5 us + 2 proxy posts of 1 us + 8 channels x 0.6 us (proxy_op_latency) = 45.3
    # us; S through the tree at 4 x 25 GB/s x 0.975 x 0.92 x 0.9375 (tree all-reduce and tree
    # LL128 factors) = 84.09 GB/s; the fill, 2 network stages each holding a 288,000 B chunk
    # (the 576,000 B LL128 step halved once: 16 MiB a channel holds 29 steps, fewer than
    # (1 + 1 + 0.4) x 64 / 4 = 38.4) at 84.09 GB/s / 8 channels. 1696.14 us each, 542.77 ms
    rate = 4 * 25e9 * 0.975 * 0.92 * 0.9375
    each = 45.3e-6 + 134_217_728 / rate + 2 * 288_000 / (rate / 8)
    assert each * 1e6 == pytest.approx(1696.14, abs=0.005)
    assert tp == pytest.approx(320 * each, rel=1e-9)
    assert f"every TP all_reduce goes over scale-out, {format_time(tp)} per step" in warning
    assert (
        "(nvlink4-mesh4 is a switchless mesh of at most 4 GPUs, so no 8-GPU domain of it exists "
        "to compare with); {compare} weighs a tp that fits the domain" in warning
    )
    # with sequence parallelism, the all-gathers' and the reduce-scatters' time together (the
    # all-gathers' alone had been said: review BQ)
    sp = _run(
        builtin_catalogue,
        ClusterSpec(system="snellius-h100", nodes=8),
        tp=8,
        dp=4,
        sequence_parallel=True,
    )
    (warning,) = (w for w in sp.warnings if "crosses the 4-GPU scale-up domain" in w)
    names = [p.name for p in sp.phases if p.name.startswith("tp")]
    assert names == ["tp-allgather", "tp-reducescatter"]
    tp = sum(p.time_s * p.count for p in sp.phases if p.name.startswith("tp"))
    assert f"every TP all_gather and reduce_scatter goes over scale-out, {format_time(tp)}" in (
        warning
    )


def test_dp_across_two_sites_on_10g_is_impractical_and_compression_helps(
    builtin_catalogue: Catalogue,
) -> None:
    cluster = ClusterSpec(system="dgx-h100", sites=2, wan="wan-10g")
    bf16 = _run(builtin_catalogue, cluster, tp=8, dp=16, backward_s=2.0)
    dp = _phase(bf16, "dp-allreduce")
    assert dp.tier == "wan"
    # each site's one 10 Gb/s link (1.25 GB/s x 0.9 efficiency) is shared by the 8 DP groups
    # (one per rail); on 2 sites the cheapest schedule still sends each GPU's 17.5 GB across once,
    # so no schedule beats 17.5e9 / (1.125e9 / 8) = 124.4 s
    floor = 17.5e9 / (1.25e9 * 0.9 / 8)
    assert dp.time_s >= floor * 0.999
    assert bf16.totals.compute_s is not None
    assert dp.time_s > 30 * bf16.totals.compute_s  # >> the 3 s of compute
    int8 = _run(builtin_catalogue, cluster, tp=8, dp=16, backward_s=2.0, grad_dtype="int8")
    ratio = dp.time_s / _phase(int8, "dp-allreduce").time_s
    assert 1.9 < ratio <= 2.0  # half the bytes; the WAN latency terms stay
    hier = _run(
        builtin_catalogue,
        cluster,
        tp=8,
        dp=16,
        backward_s=2.0,
        grad_dtype="int8",
        hierarchical=True,
    )
    wan = _phase(hier, "dp-ar@wan")
    # reduce-scatter inside each site (8 ranks), then each GPU's 1/8 shard crosses: 8.75e9 / 8
    assert wan.bytes_per_gpu == pytest.approx(8.75e9 / 8)
    assert wan.ranks == 2
    assert _phase(hier, "dp-rs@site").ranks == 8
    assert hier.totals.exposed_s < bf16.totals.exposed_s / 1.9


def test_sites_need_dp_to_split(builtin_catalogue: Catalogue) -> None:
    with pytest.raises(WorkloadError) as err:
        # 2 nodes split over 2 sites, but the one replica (dp 1) cannot be
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100", sites=2), tp=16, dp=1)
    assert err.value.field == "dp"


def test_fit_cluster_fills_nodes_or_dp(builtin_catalogue: Catalogue) -> None:
    cluster, par = fit_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4), tp=8)
    assert (cluster.nodes, par.dp) == (4, 4)
    cluster, par = fit_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=2)
    assert cluster.nodes == 2
    with pytest.raises(WorkloadError) as err:
        fit_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4), tp=8, dp=3)
    assert err.value.field == "dp"
    assert "32" in str(err.value)


def test_missing_model_shape_names_the_field(builtin_catalogue: Catalogue) -> None:
    from ibcalc.workload.model import model_from

    cluster, par = fit_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=2)
    spec = TrainSpec(model=model_from(params="70B"), parallel=par, seq_len=4096)
    with pytest.raises(WorkloadError) as err:
        train_step(builtin_catalogue, cluster, spec)
    assert err.value.field == "hidden"
    # without TP/PP/EP/CP the parameter count alone is enough
    cluster, par = fit_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100"), dp=16)
    only_dp = train_step(
        builtin_catalogue, cluster, TrainSpec(model=model_from(params="70B"), parallel=par)
    )
    assert [p.name for p in only_dp.phases] == ["dp-allreduce"]
    # 70e9 x 2 / 1: each of the 16 GPUs holds every parameter
    assert only_dp.phases[0].bytes_per_gpu == pytest.approx(140e9)


def test_ep_checks(builtin_catalogue: Catalogue) -> None:
    with pytest.raises(WorkloadError) as err:
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=2, ep=2)
    assert err.value.field == "ep"  # llama is dense
    with pytest.raises(WorkloadError) as err:
        _run(
            builtin_catalogue,
            ClusterSpec(system="dgx-h100"),
            tp=1,
            dp=16,
            ep=16,
            model_id="mixtral-8x7b",
        )
    assert err.value.field == "ep"  # 8 experts cannot spread over 16


def test_fractional_nic_share(builtin_catalogue: Catalogue) -> None:
    # AWS p4d: 4 EFA NICs for 8 GPUs. A DP group with one GPU per node gets half a NIC: one NIC
    # at half its rate.
    parent = resolve_cluster(builtin_catalogue, ClusterSpec(system="aws-p4d", nodes=4))
    placement = place_group(builtin_catalogue, parent, "dp", 4, 8)
    assert placement.cluster.nics_per_node == 1
    assert parent.topology.out is not None
    out = placement.cluster.topology.out
    assert out is not None
    assert out.nic_bw_Bps == pytest.approx(parent.topology.out.nic_bw_Bps / 2)
    assert placement.cluster.topology.arch == parent.topology.arch


def test_factorisations_by_hand() -> None:
    # 8 = tp x pp x dp: the ordered triples of divisors
    expected = {
        (1, 1, 8),
        (1, 2, 4),
        (1, 4, 2),
        (1, 8, 1),
        (2, 1, 4),
        (2, 2, 2),
        (2, 4, 1),
        (4, 1, 2),
        (4, 2, 1),
        (8, 1, 1),
    }
    assert set(factorisations(8)) == expected
    assert len(list(factorisations(8))) == 10
    assert set(factorisations(8, cp=2)) == {
        (1, 1, 4),
        (1, 2, 2),
        (1, 4, 1),
        (2, 1, 2),
        (2, 2, 1),
        (4, 1, 1),
    }


def test_a_layout_past_every_variants_memory_is_out_of_memory(
    builtin_catalogue: Catalogue,
) -> None:
    """DGX A100 is sold with 40 or 80 GB A100s, so it states no one memory; a search had ranked
    first Llama 3 8B all data-parallel on 16 of them, 18 bytes of model state per parameter,
    18 x 8.03e9 = 145 GB = 134.6 GiB and more with activations, which fits on neither (review
    CN). Past the largest variant's 80 GiB a layout is out of memory on every variant: ranked
    last, and warned of; under it, still not judged."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-a100", nodes=2))
    base = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=16), tflops=150)
    results, _ = compare_layouts(builtin_catalogue, cluster, base)
    past = [r for r in results if r.memory.total_bytes > 80 * 2**30]
    assert {(r.spec.parallel.tp, r.spec.parallel.pp) for r in past} >= {(1, 1), (2, 1)}
    assert results[-len(past) :] == past  # last, whatever their step time
    for r in past:
        assert (r.memory.room, r.memory.fits, r.memory.used_fraction) == (
            "out of memory",
            False,
            None,
        )
    within = results[0]
    assert within.memory.total_bytes < 80 * 2**30
    assert (within.memory.room, within.memory.fits) == ("unknown", None)
    single = train_step(
        builtin_catalogue,
        cluster,
        base.model_copy(update={"parallel": Parallelism(dp=16), "global_batch": 16}),
    )
    (warning,) = [w for w in single.warnings if "on every variant" in w]
    assert "more than the largest dgx-a100 GPU's 80.0 GiB (A100 SXM4 (40 GB or 80 GB))" in warning
    # a memory given by the user is judged as ever
    given = train_step(
        builtin_catalogue,
        cluster,
        base.model_copy(
            update={
                "parallel": Parallelism(dp=16),
                "global_batch": 16,
                "gpu_memory_bytes": 200 * 2**30,
            }
        ),
    )
    assert given.memory.room == "room"


def test_compare_ranks_every_layout_by_step_time(builtin_catalogue: Catalogue) -> None:
    # Llama 3 8B (32 heads, 32 layers) on 2 DGX H100 nodes (16 GPUs): every factorisation is
    # valid: tp in {1,2,4,8,16} divides 32 heads, pp in {1,2,4,8,16} divides 32 layers
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    base = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=16), tflops=400)
    results, skipped = compare_layouts(builtin_catalogue, cluster, base)
    layouts = [(r.spec.parallel.tp, r.spec.parallel.pp, r.spec.parallel.dp) for r in results]
    assert sorted(layouts) == sorted(factorisations(16))
    assert len(layouts) == 15
    assert skipped == []
    # every layout runs the same 16 sequences per step (one per GPU of the all-DP layout):
    # M = 16 / dp micro-batches of 1 sequence, i.e. tp x pp
    for r in results:
        par = r.spec.parallel
        assert r.microbatches == 16 // par.dp == par.tp * par.pp
        assert par.dp * r.microbatches * r.spec.micro_batch == 16
    # the ranking is each layout's own train_step at that batch, sorted by step time, with the
    # layouts tight in the H100s' 80 GiB (past TIGHT_FRACTION, a stated policy) after those with
    # room, and those that do not fit after the rest
    keys = {}
    for tp, pp, dp in layouts:
        spec = base.model_copy(
            update={"parallel": Parallelism(tp=tp, pp=pp, dp=dp), "global_batch": 16}
        )
        result = train_step(builtin_catalogue, cluster, spec)
        assert result.totals.step_s is not None
        used = result.memory.used_fraction
        assert used is not None
        room = 0 if used <= TIGHT_FRACTION else 1 if used <= 1 else 2
        keys[(tp, pp, dp)] = (room, result.totals.step_s)
    assert [keys[k] for k in layouts] == sorted(keys.values())
    # all data-parallel (tp 1, pp 1, no ZeRO) holds 18 bytes of model state per parameter
    # (Megatron-LM's bf16 row: 2 + 4 + 12): 18 x 8e9 = 144 GB, more than 80 GiB = 85.9 GB before
    # any activation, so it ranks after every layout that fits
    alone = next(r for r in results if r.spec.parallel.dp == 16)
    states = alone.memory.weights_bytes + alone.memory.gradients_bytes
    assert states + alone.memory.optimizer_bytes == pytest.approx(18 * 8e9)
    assert alone.memory.fits is False
    fitting = [k for k in layouts if keys[k][0] < 2]
    assert fitting
    assert layouts.index((1, 1, 16)) > max(layouts.index(k) for k in fitting)
    # TP 16 crosses the node: it is not the winner
    assert layouts[0][0] <= 8


def test_an_interleaved_pipeline_counts_its_wrap_around_boundary(
    builtin_catalogue: Catalogue,
) -> None:
    # pp 16 of single GPUs on 2 x 8: boundary 7-8 crosses the domains, and with interleaving
    # the last stage's chunk feeds the first's next one, 15 -> 0, across them too
    cluster = ClusterSpec(system="dgx-h100")
    args: dict[str, Any] = {"pp": 16, "dp": 1, "model_id": "llama3-8b", "microbatches": 16}
    plain = _phase(_run(builtin_catalogue, cluster, **args), "pp-sendrecv")
    wrapped = _phase(_run(builtin_catalogue, cluster, virtual_stages=2, **args), "pp-sendrecv")
    assert any("1 of 15 stage boundaries crosses" in n for n in plain.assumptions)
    assert any(
        "2 of 16 stage boundaries (the last stage's back to the first included) cross" in n
        for n in wrapped.assumptions
    )
    assert wrapped.time_s == plain.time_s  # the crossing boundaries set the cost either way


def test_compare_names_each_pipeline_depth_that_cannot_interleave_once(
    builtin_catalogue: Catalogue,
) -> None:
    # DeepSeek-V3's 61 layers split into no pp x 2 chunks: the pipelined layouts run without
    # interleaving, each row saying so (they had been left out, one skipped line per pp after a
    # QA read found 35 near-identical lines, one per ep)
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-b200", nodes=4))
    base = TrainSpec(
        model=find_model("deepseek-v3"), parallel=Parallelism(dp=32), seq_len=4096, virtual_stages=2
    )
    results, skipped = compare_layouts(builtin_catalogue, cluster, base)
    assert not [line for line in skipped if "equal chunks" in line]
    assert {r.spec.parallel.pp for r in results} == {1, 2, 4, 8, 16, 32}
    for r in results:
        pp = r.spec.parallel.pp
        assert r.spec.virtual_stages == 1
        assert (
            "not interleaved (layers not in pp x {virtual_stages} equal chunks): the model's 61 "
            f"layers do not split into pp x {{virtual_stages}} = {2 * pp} equal chunks"
            in r.warnings
        ) == (pp > 1)


def test_compare_says_which_degrees_it_did_not_try(builtin_catalogue: Catalogue) -> None:
    # Llama 3 8B (32 heads, 32 layers) on 64 GPUs: tp 64 and pp 64 rule out every layout with
    # them; the comparison had left them out without a word ("skipped: []")
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=8))
    base = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=64))
    results, skipped = compare_layouts(builtin_catalogue, cluster, base)
    assert sorted(skipped) == [
        "pp 64: more stages than the model's 32 layers",
        "tp 64: does not divide the model's 32 attention heads",
    ]
    # the ordered factorisations of 64 into tp x pp x dp, less those with tp 64 or pp 64
    tried = [(t, p, d) for t, p, d in factorisations(64) if t < 64 and p < 64]
    assert len(results) == len(tried)


def test_compare_holds_the_global_batch_and_keeps_uneven_stages(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 405B has 126 layers: pp 4 (32, 32, 31, 31) and pp 16 (tp 8 x pp 16 is the layout
    Meta trained it with) do not divide them. A single run costs the busiest stage; the
    comparison had dropped such layouts without a word. A global batch that does not split
    into whole micro-batches skips the layout with the reason."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    base = TrainSpec(model=find_model("llama3-405b"), parallel=Parallelism(dp=128))
    results, skipped = compare_layouts(builtin_catalogue, cluster, base)
    pps = {r.spec.parallel.pp for r in results}
    assert {4, 16} <= pps  # 126 % 4 == 2, 126 % 16 == 14
    # default global batch: 128 GPUs x 1 sequence; tp 8 x pp 16 x dp 1 runs M = 128
    (meta,) = [r for r in results if (r.spec.parallel.tp, r.spec.parallel.pp) == (8, 16)]
    assert meta.spec.global_batch == 128
    assert meta.microbatches == 128
    # 96 sequences: dp 128 (96 / 128) and dp 64 (96 / 64) cannot run whole micro-batches
    results, skipped = compare_layouts(
        builtin_catalogue, cluster, base.model_copy(update={"global_batch": 96})
    )
    assert all(96 % r.spec.parallel.dp == 0 for r in results)
    assert any("tp1 pp1 dp128" in s and "not a multiple of dp x" in s for s in skipped)
    # --microbatches would give each layout its own batch: refused
    with pytest.raises(WorkloadError, match="holds the sequences per step fixed"):
        compare_layouts(builtin_catalogue, cluster, base.model_copy(update={"microbatches": 8}))


def test_a_global_batch_sets_the_micro_batches(builtin_catalogue: Catalogue) -> None:
    # 1,024 sequences over dp 8 in micro-batches of 2: M = 1024 / (8 x 2) = 64
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    spec = TrainSpec(
        model=find_model("llama3-70b"),
        parallel=Parallelism(tp=8, pp=2, dp=8),
        micro_batch=2,
        global_batch=1024,
    )
    result = train_step(builtin_catalogue, cluster, spec)
    assert result.microbatches == 64
    assert result.totals.bubble_fraction == pytest.approx(1 / 64)  # (pp - 1) / M
    with pytest.raises(WorkloadError, match="1,000 is not a multiple of dp x"):
        train_step(builtin_catalogue, cluster, spec.model_copy(update={"global_batch": 1000}))
    with pytest.raises(WorkloadError, match="contradicts"):
        train_step(builtin_catalogue, cluster, spec.model_copy(update={"microbatches": 8}))
    # agreeing values are accepted
    agreed = train_step(builtin_catalogue, cluster, spec.model_copy(update={"microbatches": 64}))
    assert agreed.microbatches == 64
    # one micro-batch is said in the singular: 16 / (8 x 2) = 1 (it had read '1 micro-batches')
    one = spec.model_copy(update={"global_batch": 16})
    assert "1 micro-batch per step: {global_batch} 16 sequences" in " ".join(
        train_step(builtin_catalogue, cluster, one).assumptions
    )
    with pytest.raises(WorkloadError) as err:
        train_step(builtin_catalogue, cluster, one.model_copy(update={"microbatches": 2}))
    assert "16 / (8 x 2) = 1 micro-batch per step: give one" in err.value.template


def test_wan_latency_from_distance(builtin_catalogue: Catalogue) -> None:
    from ibcalc.workload.wan import one_way_latency

    # 800 km of fibre at 5 us per km = 4 ms one way; a 12 ms round trip is 6 ms one way
    assert one_way_latency(distance_m=800e3) == pytest.approx(4e-3)
    assert one_way_latency(rtt_s=12e-3) == pytest.approx(6e-3)
    wan = builtin_catalogue_link(builtin_catalogue, "wan-10g")
    cluster = resolve_cluster(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=2, sites=2, wan="wan-10g", wan_latency_s=4e-3),
    )
    assert cluster.topology.wan is not None
    assert cluster.topology.wan.transport_latency_s == pytest.approx(wan.transport_latency_s + 4e-3)


def builtin_catalogue_link(cat: Catalogue, name: str):  # type: ignore[no-untyped-def]
    from ibcalc.catalogue.load import find_link

    return find_link(cat, name)


def test_wan_fields_without_sites_are_refused(builtin_catalogue: Catalogue) -> None:
    with pytest.raises(ClusterError) as err:
        resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", wan_links=4))
    assert err.value.field == "wan_links"
    assert "sites" in err.value.fields
    with pytest.raises(ClusterError) as err:
        resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", wan_latency_s=0.004))
    assert err.value.field == "wan_latency_s"


def test_dtype_default_is_bf16() -> None:
    assert TrainSpec(model=LLAMA70, parallel=Parallelism()).grad_dtype is DType.BF16


def test_groups_inside_an_nvl72_rack_stay_on_nvlink(builtin_catalogue: Catalogue) -> None:
    # GB200 NVL72: 18 nodes x 4 GPUs share one 72-GPU NVLink domain. tp 8 x dp 9 = 72: the DP
    # group (9 ranks, 8 apart) never leaves the rack, so it is a 9-GPU NVLink 5 all-reduce
    result = _run(builtin_catalogue, ClusterSpec(system="gb200-nvl72"), tp=8, dp=9)
    assert result.nodes == 18
    dp = _phase(result, "dp-allreduce")
    assert dp.tier == "scale-up"
    same = estimate(
        builtin_catalogue,
        ClusterSpec(nodes=1, gpus_per_node=9, intra="nvlink5"),
        Collective.ALL_REDUCE,
        17.5e9,
        dtype="bf16",
    )
    assert dp.time_s == same.time_s
    # two racks: 9 per rack, across the NDR fabric with 72 x 9 / 72 = 9 NICs per rack share
    two = _run(builtin_catalogue, ClusterSpec(system="gb200-nvl72"), tp=8, dp=18)
    assert _phase(two, "dp-allreduce").tier == "scale-out"


def test_a_job_that_fits_in_one_rack_is_placed_whatever_its_groups_shape(
    builtin_catalogue: Catalogue,
) -> None:
    """tp 8 x pp 9 = 72 GPUs on 18 GB200 trays, one NVL72 rack: pp pairs 8 apart span 16 ranks,
    which do not divide 72, and the layout was refused as straddling two domains; there is one
    domain. Every stage boundary is on NVLink, priced as a 2-GPU NVLink 5 send/receive."""
    result = _run(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=18), tp=8, pp=9)
    pp = _phase(result, "pp-sendrecv")
    assert pp.tier == "scale-up"
    assert pp.time_s == pair_sendrecv_s(builtin_catalogue, "nvlink5", pp.bytes_per_gpu)
    # two racks of it (dp 2) straddle in Megatron-LM's default tp-cp-ep-dp-pp order (a stage
    # of 16 ranks crosses the rack at rank 72) and had been refused; in its tp-pp-dp order
    # (--use-tp-pp-dp-mapping) each pipeline fills one rack, its 8 boundaries on NVLink, and
    # each dp pair {i, i + 72} spans the two racks: one GPU of each, over the network
    two = _run(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=36), tp=8, pp=9, dp=2)
    assert (result.rank_order, two.rank_order) == ("tp-cp-ep-dp-pp", "tp-pp-dp")
    assert two.assumptions[0].startswith(
        "ranks ordered tp-pp-dp, data parallelism outermost (Megatron-LM --use-tp-pp-dp-mapping):"
        " in the default tp-cp-ep-dp-pp order dp groups of 2 ranks 8 apart span 16 ranks"
    )
    pp = _phase(two, "pp-sendrecv")
    assert pp.tier == "scale-up"
    assert pp.time_s == pair_sendrecv_s(builtin_catalogue, "nvlink5", pp.bytes_per_gpu)
    dp = _phase(two, "dp-allreduce")
    assert dp.tier == "scale-out"
    assert any("dp group: 2 GPUs, 1 in each of 2 scale-up domains" in n for n in dp.assumptions)
    # with expert parallelism that order would break the dp group apart: still refused
    with pytest.raises(WorkloadError, match="straddle two domains"):
        _run(
            builtin_catalogue,
            ClusterSpec(system="gb200-nvl72", nodes=36),
            tp=8,
            pp=9,
            dp=2,
            model_id="mixtral-8x7b",
            ep=2,
        )


def test_on_nvl72_racks_the_cheaper_rank_order_is_priced(builtin_catalogue: Catalogue) -> None:
    """tp 1 x pp 8 x dp 18 on two NVL72 racks (36 trays): in the default tp-cp-ep-dp-pp order
    a stage is 18 consecutive ranks, so stage boundaries cross the racks and every send/receive
    goes over the network (1F1B: every boundary busy, the slowest sets the pace); in tp-pp-dp a
    pipeline is 8 consecutive GPUs inside one rack, its boundaries on NVLink, and dp pairs span
    the racks. Both place, and the default had been priced, 3x dearer (a review). The cheaper
    is priced and said; on 8-GPU nodes (DGX H100) the default stays, whichever is cheaper."""
    spec = ClusterSpec(system="gb200-nvl72", nodes=36)
    result = _run(builtin_catalogue, spec, tp=1, pp=8, dp=18, microbatches=16)
    assert result.rank_order == "tp-pp-dp"
    pp = _phase(result, "pp-sendrecv")
    assert pp.tier == "scale-up"
    assert pp.time_s == pytest.approx(
        pair_sendrecv_s(builtin_catalogue, "nvlink5", pp.bytes_per_gpu)
    )
    assert result.assumptions[0].startswith(
        "ranks ordered tp-pp-dp, data parallelism outermost (Megatron-LM --use-tp-pp-dp-mapping):"
    )
    assert "where the default tp-cp-ep-dp-pp order takes" in result.assumptions[0]
    h100 = _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16), tp=4, pp=2, dp=16)
    assert h100.rank_order == "tp-cp-ep-dp-pp"


def test_a_pipeline_of_stages_that_tile_the_rack_runs_over_two_racks(
    builtin_catalogue: Catalogue,
) -> None:
    """tp 8 x pp 18 on 36 GB200 trays (2 NVL72 racks): each stage is 8 consecutive ranks, 9
    to a rack, so one of the 17 boundaries (ranks 64 -> 72) crosses the racks and 16 stay on
    NVLink. Pairs 8 apart span 16 ranks, which do not divide 72, and the layout had been
    refused as straddling two domains (also tp 4 pp 6 dp 6, stages of 24). The crossing sets the
    cost, as for any pipeline with a boundary between domains: a 2-GPU send/receive over one
    NDR NIC each (the rack's 72 NICs, one per GPU)."""
    spec = ClusterSpec(system="gb200-nvl72", nodes=36)
    result = _run(builtin_catalogue, spec, tp=8, pp=18, dp=1)
    pp = _phase(result, "pp-sendrecv")
    assert pp.tier == "scale-out"
    assert any("1 of 17 stage boundaries crosses the 72-GPU" in n for n in pp.assumptions)
    # the boundary's 8 pairs (ranks 64-71 to 72-79) leave the rack, not 72 (review CZ 2)
    assert (
        "pp group: 2 GPUs, 1 in each of 2 scale-up domains; a crossing boundary's 8 pairs leave "
        "a domain at once through their own GPU's NICs of the domain's 72 x ndr: 1 NIC each"
    ) in pp.assumptions
    across = estimate(
        builtin_catalogue,
        ClusterSpec(nodes=2, gpus_per_node=1, nics_per_node=1, inter="ndr", intra="nvlink5"),
        Collective.SEND_RECV,
        pp.bytes_per_gpu,
        dtype="bf16",
    )
    assert pp.time_s == pytest.approx(across.time_s, rel=1e-9)
    six = _run(builtin_catalogue, spec, tp=4, pp=6, dp=6)
    assert any(
        "1 of 5 stage boundaries crosses" in n for n in _phase(six, "pp-sendrecv").assumptions
    )


def test_a_domain_given_smaller_than_the_rack_holds_for_every_group(
    builtin_catalogue: Catalogue,
) -> None:
    # 36 x GB200 trays (4 GPUs each) run as 4-GPU domains: NVLink inside each tray only. A tp 8
    # group (8 consecutive ranks) spans 2 trays, so it crosses the network; before the fix its
    # sub-cluster kept gb200-nvl72's 72-GPU domain and ran on NVLink as if nothing was given.
    spec = ClusterSpec(system="gb200-nvl72", nodes=36, scale_up_domain=4)
    result = _run(builtin_catalogue, spec, tp=8)
    tp = _phase(result, "tp-allreduce")
    assert tp.tier == "scale-out"
    # the same all-reduce as a collective of its own: 2 trays of 4, 4 NDR NICs each (the preset's)
    same = estimate(
        builtin_catalogue,
        ClusterSpec(system="gb200-nvl72", nodes=2, scale_up_domain=4),
        Collective.ALL_REDUCE,
        tp.bytes_per_gpu,
        dtype="bf16",
    )
    assert same.best.algorithm.value == "nvlstree"  # two domains: NVLS inside each, a tree between
    assert tp.time_s == same.time_s
    # 36 GPUs to a domain (the NVL36 halves): the 8 ranks sit in one half, on NVLink 5
    halves = _run(
        builtin_catalogue,
        ClusterSpec(system="gb200-nvl72", nodes=36, scale_up_domain=36),
        tp=4,
    )
    assert _phase(halves, "tp-allreduce").tier == "scale-up"
    # dp 36 of ranks 4 apart: 9 in each of the 4 halves
    dp = _phase(halves, "dp-allreduce")
    assert (dp.ranks, dp.tier) == (36, "scale-out")


def test_shapes_that_cannot_exist_are_refused(builtin_catalogue: Catalogue) -> None:
    # Llama 3 70B has 80 layers: 81 pipeline stages would leave one without a layer
    with pytest.raises(WorkloadError, match="pp 81 is more than the model's 80 layers"):
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=81), pp=81, dp=8)
    _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=10), pp=80, dp=1)  # one each
    # 64 heads do not split over tp 128 (64 / 128 = half a head a GPU): refused, as Megatron-LM
    # and --compare refuse it; it had been priced, with a warning
    with pytest.raises(WorkloadError, match="tp 128 does not divide the model's 64 attention"):
        _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16), tp=128, dp=1)
    with pytest.raises(WorkloadError) as err:
        _run(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=18), tp=6, pp=1)
    assert err.value.field == "tp"
    _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16), tp=64, pp=2, dp=1)  # 1 each
    # 64 query heads: 65 key/value heads cannot share them
    with pytest.raises(WorkloadError) as err:
        ModelSpec(**{**LLAMA70.model_dump(), "kv_heads": 65})
    assert err.value.field == "kv_heads"
    # sequence parallelism splits each sequence over tp: 8190 tokens do not split over 8
    with pytest.raises(WorkloadError, match="8190 does not split over tp 8") as err:
        _run(
            builtin_catalogue,
            ClusterSpec(system="dgx-h100"),
            tp=8,
            dp=16,
            sequence_parallel=True,
            seq_len=8190,
        )
    assert err.value.field == "seq_len"
    # without sequence parallelism the same length is costed (each rank holds all of it)
    plain = _run(builtin_catalogue, ClusterSpec(system="dgx-h100"), tp=8, dp=16, seq_len=8190)
    assert _phase(plain, "tp-allreduce").bytes_per_gpu == 8190 * 8192 * 2


def test_library_notes_name_fields_not_flags(builtin_catalogue: Catalogue) -> None:
    """The library's assumptions carry {field} marks the caller fills (the CLI with flags, a
    design check with keys): it printed '--seq-len' and '--microbatches' itself."""
    result = _run(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4), tp=8, pp=2, hierarchical=True
    )
    notes = " ".join(result.assumptions)
    assert (
        "2 micro-batches per step assumed (= pp; the pipeline bubble, (pp - 1) / M of compute, "
        "shrinks with more; {microbatches} or {global_batch} to change)" in notes
    )
    assert "sequence length 8192 from llama3-70b ({seq_len} to change)" in notes
    assert "no compute time given ({backward_s} or {tflops})" in notes
    assert "{hierarchical} applies across sites only" in notes
    assert "--" not in notes


def test_the_expert_split_where_it_does_not_apply_or_needs_no_exchange(
    builtin_catalogue: Catalogue,
) -> None:
    """Review cases of the expert split: dp = ep leaves each expert shard on one dp rank (no
    edp phase, and the note says so); a preset whose routing was changed (--experts 16) has no
    active count left to split by, and says that; a model of experts alone (E = params) has no
    shared dp phase rather than a 0-byte one."""
    nodes2 = ClusterSpec(system="dgx-h100", nodes=2)
    alone = _run(builtin_catalogue, nodes2, tp=2, dp=8, ep=8, model_id="mixtral-8x7b")
    assert not [p for p in alone.phases if p.name.startswith("edp-")]
    assert any("each shard is on one dp rank only" in n for n in alone.assumptions)
    spec = TrainSpec(
        model=model_from("mixtral-8x7b", experts=16),
        parallel=fit_cluster(builtin_catalogue, nodes2, tp=2, dp=8, ep=8)[1],
    )
    routed = train_step(
        builtin_catalogue, fit_cluster(builtin_catalogue, nodes2, tp=2, dp=8, ep=8)[0], spec
    )
    assert any("the model states no active parameter count" in n for n in routed.assumptions)
    assert _phase(routed, "dp-allreduce").bytes_per_gpu == pytest.approx(47e9 * 2 / 2)
    # E = (8B - 1B) / (1 - 1/8) = 8B: all experts, nothing shared
    experts_only = ModelSpec(
        id="experts-only",
        params=8e9,
        active_params=1e9,
        experts=8,
        top_k=1,
        hidden=4096,
        layers=8,
        seq_len=4096,
    )
    resolved, par = fit_cluster(builtin_catalogue, nodes2, tp=1, dp=16, ep=8)
    result = train_step(builtin_catalogue, resolved, TrainSpec(model=experts_only, parallel=par))
    assert [p.name for p in result.phases if "dp-" in p.name] == ["edp-allreduce"]
    assert _phase(result, "edp-allreduce").bytes_per_gpu == pytest.approx(8e9 * 2 / 8)


def test_the_expert_split_is_not_made_across_sites(builtin_catalogue: Catalogue) -> None:
    """8 DGX H100 over 8 sites: the edp group of dp / ep = 8 ranks, one a site, is not split
    off; across sites every parameter goes over all dp ranks, as the docs say, with the
    reason. (ep 4: each site holds dp / sites = 4 data-parallel ranks, one expert group.)"""
    spec = ClusterSpec(system="dgx-h100", nodes=8, sites=8, wan="wan-100g")
    result = _run(
        builtin_catalogue, spec, tp=2, dp=32, ep=4, model_id="mixtral-8x7b", sequence_parallel=True
    )
    assert not [p for p in result.phases if p.name.startswith("edp-")]
    assert any(n.endswith("not split across sites)") for n in result.assumptions)
    # the expert all-to-all stays on one node of one site: 4 GPUs of the node's NVLink
    alltoall = _phase(result, "ep-alltoall")
    assert (alltoall.tier, alltoall.ranks) == ("scale-up", 4)


def test_an_expert_group_wider_than_a_sites_replicas_is_refused(
    builtin_catalogue: Catalogue,
) -> None:
    """Each site holds dp / sites = 32 / 8 = 4 data-parallel ranks; an ep 8 expert group needs 8
    of them, so it spans two sites. It had been placed inside one site regardless, its
    all-to-all priced on two nodes' NDR NICs (2.8 ms a call) while crossing the WAN."""
    spec = ClusterSpec(system="dgx-h100", nodes=8, sites=8, wan="wan-100g")
    with pytest.raises(WorkloadError) as err:
        _run(
            builtin_catalogue,
            spec,
            tp=2,
            dp=32,
            ep=8,
            model_id="mixtral-8x7b",
            sequence_parallel=True,
        )
    assert err.value.field == "ep"
    assert "dp / sites = 32 / 8 = 4" in str(err.value)


def test_a_training_length_past_the_models_context_is_warned_about(
    builtin_catalogue: Catalogue,
) -> None:
    # Mixtral 8x7B serves 32,768 tokens; training at 65,536 is allowed (context extension) but
    # said, and the TP buffer follows the length given: b x s x h x 2 = 65536 x 4096 x 2 B
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    spec = TrainSpec(
        model=find_model("mixtral-8x7b"), parallel=Parallelism(tp=8, dp=1), seq_len=65536
    )
    result = train_step(builtin_catalogue, cluster, spec)
    assert any("65,536 tokens is more than the 32,768-token context" in w for w in result.warnings)
    assert _phase(result, "tp-allreduce").bytes_per_gpu == 65536 * 4096 * 2
    # at its own length: no such warning
    at_context = train_step(builtin_catalogue, cluster, spec.model_copy(update={"seq_len": 32768}))
    assert not any("context of" in w for w in at_context.warnings)


def test_step_totals_carry_likely_ranges_through_the_overlap(
    builtin_catalogue: Catalogue,
) -> None:
    """'communication 446 ms per step' had no range while each phase showed one. Llama 3 8B at
    dp 16 on 2 DGX H100 with a 50 ms backward: the gradient all-reduce hides under the last
    micro-batch's backward (50 ms with one micro-batch), so the exposed range is each end of
    the all-reduce's range less 50 ms, and the step's is compute (25 + 50 ms) plus that."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    spec = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=16), backward_s=0.05)
    result = train_step(builtin_catalogue, cluster, spec)
    (phase,) = result.phases
    assert phase.total_s_range is not None
    low, high = phase.total_s_range
    assert low - 0.05 > 0  # partly exposed at both ends
    totals = result.totals
    assert totals.comm_s_range == pytest.approx((low, high))
    assert totals.exposed_s_range == pytest.approx((low - 0.05, high - 0.05))
    assert totals.step_s_range == pytest.approx((0.075 + low - 0.05, 0.075 + high - 0.05))
    assert totals.exposed_s_range[0] < totals.exposed_s < totals.exposed_s_range[1]
    # a backward long enough to hide the high end exposes nothing at either end
    hidden = train_step(
        builtin_catalogue,
        cluster,
        TrainSpec(model=spec.model, parallel=spec.parallel, backward_s=1),
    )
    assert hidden.totals.exposed_s_range == (0.0, 0.0)


def test_a_layout_that_does_not_divide_the_gpus_names_each_degree(
    builtin_catalogue: Catalogue,
) -> None:
    """`--compare --cp 3` on 16 GPUs said 'not a multiple of tp x cp x pp = 3', which read as if
    tp or pp were 3; the message now spells out each degree."""
    with pytest.raises(WorkloadError) as err:
        fit_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2), cp=3)
    assert str(err.value).startswith("16 GPUs are not a multiple of tp x cp x pp = 1 x 3 x 1 = 3")


def test_an_uneven_stage_split_is_noted_once(builtin_catalogue: Catalogue) -> None:
    """Llama 3 405B's 126 layers over 16 stages: TP and CP each cost the busiest stage's 8, and
    each had added the note, so the JSON listed it twice."""
    result = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=128),
        tp=8,
        pp=16,
        cp=2,
        model_id="llama3-405b",
    )
    note = (
        "126 layers do not split evenly over 16 pipeline stages: the busiest stage's 8 are costed"
    )
    assert result.assumptions.count(note) == 1
    assert _phase(result, "tp-allreduce").count == 4 * 8 * result.microbatches  # 8 layers


def test_a_leaf_group_is_checked_against_the_fabric_and_the_cluster(
    builtin_catalogue: Catalogue,
) -> None:
    """Three cases a review found: an expert group of tp 8 has one GPU a node, all on one rail,
    so its pairwise all-to-all is not off its rail either (it kept the cluster's off-rail share,
    x3.9, beside a note calling it clear); a leaf group larger than the cluster holds all of it,
    as one of the cluster's size does (48 and 64 on 32 nodes had priced the DP all-reduce 34.3
    and 17.8 ms); on a 1:1 fabric the option is named as ignored."""
    tapered = SU48_TAPERED.replace(leaf_group_nodes=48)
    flat = ClusterSpec(system="dgx-h100", nodes=256)
    ep = [
        _phase(_run(builtin_catalogue, c, tp=8, pp=4, ep=8, model_id="mixtral-8x7b"), "ep-alltoall")
        for c in (tapered, flat)
    ]
    assert ep[0].time_s == pytest.approx(ep[1].time_s, rel=1e-9)
    small = ClusterSpec(system="dgx-h100", nodes=32, oversubscription=4, cross_leaf_fraction=0.5)
    dp = [
        _phase(
            _run(
                builtin_catalogue,
                small.replace(leaf_group_nodes=leaf),
                tp=8,
                ep=8,
                model_id="mixtral-8x7b",
            ),
            "dp-allreduce",
        ).time_s
        for leaf in (48, 64, 32)
    ]
    assert dp[0] == dp[1] == dp[2]
    one = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=16, leaf_group_nodes=8),
        tp=8,
        model_id="llama3-8b",
    )
    assert any(
        n.startswith("{leaf_group_nodes} 8 ignored: the leaves are not") for n in one.assumptions
    )


def test_a_placed_group_keeps_its_parents_host_cpu_whatever_came_before(
    builtin_catalogue: Catalogue,
) -> None:
    """Sub-clusters are memoised for a layout search; the key had left out the host CPU that
    inherit() copies, so a group on an Intel-host cluster placed after the same group on an AMD
    one took the AMD sub-cluster (NCCL's 2 us network step, not 1 us: a library user's review).
    Either order, each placement keeps its own parent's host CPU."""
    for order in (("amd", "intel"), ("intel", "amd")):
        for host in order:
            parent = resolve_cluster(
                builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2, host_cpu=host)
            )
            placed = place_group(builtin_catalogue, parent, "dp", 2, 8)
            assert placed.cluster.topology.host_cpu == host


def test_library_misuse_is_refused_with_ibcalcs_own_errors(builtin_catalogue: Catalogue) -> None:
    """A library user's review: fit_cluster(tp=0) had raised ZeroDivisionError and dp=0 an error
    naming nodes; train_step given a ClusterSpec, AttributeError. Each is ibcalc's own error now,
    naming the field at fault."""
    from ibcalc.errors import WorkloadError, WrongTypeError

    spec = ClusterSpec(system="dgx-h100")
    for field, value in (("tp", 0), ("dp", 0), ("pp", -1)):
        with pytest.raises(WorkloadError) as info:
            fit_cluster(builtin_catalogue, spec, **{field: value})
        assert info.value.field == field
    job = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=8))
    with pytest.raises(WrongTypeError, match="cluster must be a ResolvedCluster, not ClusterSpec"):
        train_step(builtin_catalogue, spec, job)


def test_a_catalogue_or_job_of_another_type_is_refused_by_every_workload_entry(
    builtin_catalogue: Catalogue,
) -> None:
    """train_step, compare_layouts, infer and checkpoint given None for the catalogue or the
    job had raised AttributeError ("'NoneType' object has no attribute 'parallel'"), and
    compare_layouts a ClusterSpec for the cluster ("no attribute 'ranks'"), where train_step
    names the type it takes."""
    from ibcalc.errors import WrongTypeError
    from ibcalc.workload.checkpoint import CheckpointSpec, checkpoint
    from ibcalc.workload.infer import InferSpec, infer

    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    model = find_model("llama3-8b")
    jobs: list[tuple[Any, Any]] = [
        (train_step, TrainSpec(model=model, parallel=Parallelism(dp=16))),
        (compare_layouts, TrainSpec(model=model, parallel=Parallelism(dp=16))),
        (infer, InferSpec(model=model)),
        (checkpoint, CheckpointSpec(model=model, storage="aws-s3")),
    ]
    for run, job in jobs:
        kind = type(job).__name__
        article = "an" if kind.startswith("I") else "a"
        with pytest.raises(WrongTypeError) as info:
            run(builtin_catalogue, cluster, None)
        assert str(info.value) == (
            f"spec must be {article} {kind}, not NoneType ({kind}(...) makes one)"
        )
        with pytest.raises(WrongTypeError) as info:
            run("catalogue", cluster, job)
        assert str(info.value) == (
            "catalogue must be a Catalogue, not str (load_catalogue() makes one)"
        )
    with pytest.raises(WrongTypeError, match="cluster must be a ResolvedCluster, not ClusterSpec"):
        compare_layouts(builtin_catalogue, ClusterSpec(nodes=2), jobs[1][1])


def test_a_given_backward_time_is_read_as_measured_with_the_recompute_given(
    builtin_catalogue: Catalogue,
) -> None:
    """Backward ~ 2 x forward FLOPs, and full recompute runs the forward once more inside the
    backward: a backward of 2 s measured with full recompute is 3 forward passes, forward
    2/3 s, compute 8/3 s; without it forward 1 s, compute 3 s. The time given is the same, so
    full recompute reads faster; the note says how to price turning it on (a review)."""
    cluster = ClusterSpec(system="dgx-h100")
    plain = _run(builtin_catalogue, cluster, tp=8, dp=16, backward_s=2.0)
    full = _run(builtin_catalogue, cluster, tp=8, dp=16, backward_s=2.0, recompute=Recompute.FULL)
    assert plain.totals.compute_s == pytest.approx(3.0)
    assert full.totals.compute_s == pytest.approx(2.0 + 2.0 / 3.0)
    (note,) = [n for n in full.assumptions if n.startswith("backward compute 2 s per step")]
    assert "read as measured with full recompute" in note
    assert note.endswith(
        "to price turning full recompute on, give the backward time plus one forward"
    )


def test_zero_and_compressed_gradients_say_they_do_nothing_without_data_parallelism(
    builtin_catalogue: Catalogue,
) -> None:
    """tp 8 x pp 16 on 16 nodes leaves dp = 1: no replica to shard over, no gradient to
    exchange. ZeRO-3 and int8 gradients change nothing and say so (a review: the int8 note had
    described an exchange that never happens); with dp 16 they change the phases."""
    cluster = ClusterSpec(system="dgx-h100", nodes=16)
    alone = _run(builtin_catalogue, cluster, tp=8, pp=16, dp=1, zero=3, grad_dtype="int8")
    plain = _run(builtin_catalogue, cluster, tp=8, pp=16, dp=1)
    assert [p.name for p in alone.phases] == [p.name for p in plain.phases]
    assert not any(p.name.startswith("dp-") for p in alone.phases)
    assert alone.totals.comm_s == plain.totals.comm_s
    assert (
        "ZeRO-3 has no effect: dp x cp = 1, one replica of every weight, nothing to shard or "
        "gather" in alone.assumptions
    )
    assert "{grad_dtype} int8 has no effect: dp x cp = 1, no gradient exchange" in alone.assumptions
    assert not any("compressed before the exchange" in n for n in alone.assumptions)
    shared = _run(builtin_catalogue, cluster, tp=8, pp=1, dp=16, zero=3, grad_dtype="int8")
    assert not any("has no effect" in n for n in shared.assumptions)
    assert any("compressed before the exchange" in n for n in shared.assumptions)


def test_a_tp_crossing_the_domain_that_is_priced_faster_is_not_called_slower(
    builtin_catalogue: Catalogue,
) -> None:
    """tp 32 of tiny messages on DGX A100: the crossing all-reduce is priced faster than the
    same within one 32-GPU domain would be; the warning had read '0.80x slower' (a review)."""
    model = model_from(params="1B", layers=4, hidden=256, heads=32)
    resolved, par = fit_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-a100", nodes=16), tp=32, pp=1, dp=None
    )
    result = train_step(
        builtin_catalogue, resolved, TrainSpec(model=model, parallel=par, seq_len=1)
    )
    (warning,) = [w for w in result.warnings if w.startswith("tp 32 crosses the 8-GPU")]
    assert "x slower" not in warning
    assert "x faster across; " in warning


def test_a_partial_meshs_notes_follow_the_phases_that_use_it(builtin_catalogue: Catalogue) -> None:
    """DGX-1's hybrid cube: a stage send inside the node runs at one NVLink (25 GB/s x 0.8 x
    the point-to-point efficiency) and says so; a tp-only step, which sends nothing point to
    point, had carried that note too, and an all-to-all's (a review)."""
    from ibcalc.catalogue.cost_params import builtin_cost_params

    eff = builtin_cost_params().calibrated.p2p_efficiency
    pp = _run(
        builtin_catalogue, ClusterSpec(system="dgx-1v", nodes=1), pp=8, dp=1, model_id="llama3-8b"
    )
    send = _phase(pp, "pp-sendrecv")
    assert send.tier == "scale-up"
    assert send.estimate is not None
    size = send.estimate.size_bytes
    assert send.estimate.best.transfer_s == pytest.approx(size / (25e9 * 0.8 * eff))
    assert any(n.startswith("nvlink2 is a partial mesh: a GPU pair") for n in pp.assumptions)
    assert not any("an all-to-all is priced" in n for n in pp.assumptions)
    tp = _run(builtin_catalogue, ClusterSpec(system="dgx-1v", nodes=2), tp=8, model_id="llama3-8b")
    assert not any("partial mesh" in n for n in tp.assumptions)
    # an expert all-to-all: its note where the ep group has several GPUs a node, not where it
    # has one GPU in each of 2 nodes (the network alone carries it; a review)
    dgx1 = ClusterSpec(system="dgx-1v", nodes=2)
    moe = "mixtral-8x7b"
    inside = _run(builtin_catalogue, dgx1, ep=8, model_id=moe)
    assert any("an all-to-all is priced" in n for n in inside.assumptions)
    across = _run(builtin_catalogue, dgx1, tp=8, ep=2, model_id=moe)
    ep_estimate = _phase(across, "ep-alltoall").estimate
    assert ep_estimate is not None
    assert ep_estimate.gpus_per_node == 1
    assert not any("partial mesh" in n for n in across.assumptions)


@pytest.mark.parametrize(
    ("pp", "dp", "busiest"),
    [
        # 61 layers, the 3 dense first: ceil(61/4) = 16 a stage, stages 3 + 13, 16, 16, 13 MoE
        (4, 8, 16),
        # 31 and 30: stage 0 holds 3 dense + 28 MoE, stage 1 30 MoE (ceil(58/2) = 29 had been
        # costed, with no note, as 58 splits evenly)
        (2, 16, 30),
        # 21 a stage: 3 + 18, 21, 19
        (3, 8, 21),
    ],
)
def test_expert_all_to_alls_are_counted_on_the_stage_with_most_moe_layers(
    builtin_catalogue: Catalogue, pp: int, dp: int, busiest: int
) -> None:
    """DeepSeek-V3's dense layers come first, so the stage with the most MoE layers is not
    ceil(58 / pp) of them (review BV: 480 all-to-alls at pp 4 where the stage runs 4 x 16 x 8 =
    512, while its memory and expert gradients counted 16). Four a MoE layer and micro-batch:
    dispatch and combine, forward and backward; M = 8 micro-batches."""
    result = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=8 * pp * dp // 8),
        tp=8,
        pp=pp,
        dp=dp,
        ep=8,
        model_id="deepseek-v3",
        sequence_parallel=True,
        seq_len=4096,
        microbatches=8,
    )
    assert _phase(result, "ep-alltoall").count == 4 * busiest * 8
    model = find_model("deepseek-v3")
    assert busiest == max(stage_layers(model, pp, k)[1] for k in range(pp))
    assert any(f"the busiest stage's {busiest} are costed" in n for n in result.assumptions)


def test_the_expert_all_to_all_says_its_routing_is_taken_as_balanced(
    builtin_catalogue: Catalogue,
) -> None:
    """Each GPU's send buffer, tokens x top_k x hidden x 2 B, goes 1/ep to each expert rank: the
    even split the price rests on is said (review BV: no note had said it)."""
    result = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=8),
        tp=2,
        pp=2,
        ep=8,
        model_id="mixtral-8x7b",
        sequence_parallel=True,
    )
    phase = _phase(result, "ep-alltoall")
    assert any(
        n.startswith("routing taken as balanced: each GPU sends 2 x its tokens / 8 to each")
        for n in phase.assumptions
    )


def test_zero_2_and_3_over_micro_batches_say_they_exchange_per_micro_batch(
    builtin_catalogue: Catalogue,
) -> None:
    """ZeRO-3 on tp 8 pp 2 with 4 micro-batches gathers and reduce-scatters in every micro-batch
    (x4 each; one layer at a time, so not once per micro-batch: ZeRO-2's reduce-scatter is);
    the note says so and, with pp, that DeepSpeed's pipeline engine refuses the pairing (review
    BV: priced with no word). ZeRO-1 keeps whole gradients: no note."""

    def notes(zero: int, pp: int) -> list[str]:
        result = _run(
            builtin_catalogue,
            ClusterSpec(system="dgx-h100", nodes=16),
            tp=8,
            pp=pp,
            zero=zero,
            microbatches=4,
        )
        return [n for n in result.assumptions if n.startswith(f"ZeRO-{zero} over")]

    (three,) = notes(3, 2)
    assert three.startswith(
        "ZeRO-3 over 4 micro-batches: the gradients are reduce-scattered and the weights "
        "all-gathered in every micro-batch, 4x one's data; DeepSpeed's pipeline engine refuses"
    )
    assert three.endswith(
        "(torchtitan does so under pipeline parallelism: it does not reshard them after forward)"
    )
    # ZeRO-2 gathers no weights per micro-batch: the pipeline engine's refusal alone
    (two_pp,) = notes(2, 2)
    assert two_pp.endswith(
        "refuses ZeRO-2 and 3 with pipeline parallelism (runtime/pipe/engine.py)"
    )
    (two,) = notes(2, 1)
    assert (
        two == "ZeRO-2 over 4 micro-batches: the gradients are reduce-scattered once per "
        "micro-batch, 4x one's data"
    )
    assert notes(1, 2) == []
    # one micro-batch: no per-micro-batch exchange to say, the refusal all the same (review CF)
    one = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=16),
        tp=8,
        pp=2,
        zero=3,
        microbatches=1,
    )
    assert [n for n in one.assumptions if "DeepSpeed" in n] == [
        "ZeRO-3 with pipeline parallelism: DeepSpeed's pipeline engine refuses ZeRO-2 and 3 "
        "with pipeline parallelism (runtime/pipe/engine.py)"
    ]


def test_a_wan_placement_of_one_gpu_a_site_is_said_in_the_singular(
    builtin_catalogue: Catalogue,
) -> None:
    """--hierarchical's WAN step pairs each GPU with its counterpart: '1 GPU in each' (review BV
    quoted '1 GPUs in each')."""
    result = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=16, sites=2, wan="wan-100g"),
        tp=8,
        hierarchical=True,
    )
    wan = _phase(result, "dp-ar@wan")
    assert any(
        "dp group spans 2 sites, 1 GPU in each; 64 such groups" in n for n in wan.assumptions
    )


def test_a_cost_parameter_file_is_named_as_the_collective_commands_name_it(
    builtin_catalogue: Catalogue,
) -> None:
    """Training and serving priced with an override file say so, as allreduce does ('cost
    parameters: FILE'; review BY: a file that moved a step's DP all-reduce from 63.1 to 80.9 ms
    had gone unnamed); without one, nothing is said."""
    mine = builtin_cost_params().with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "calibrated": {"nvls_tree_factor": {"value": 0.8, "assumed": "a test"}},
        },
        label="site.yaml",
    )
    resolved, par = fit_cluster(
        builtin_catalogue, ClusterSpec(system="aws-p5", nodes=2), tp=1, pp=1, dp=None, ep=1, cp=1
    )
    spec = TrainSpec(model=find_model("llama3-8b"), parallel=par)
    given = train_step(builtin_catalogue, resolved, spec, params=mine)
    assert "cost parameters: site.yaml" in given.assumptions
    plain = train_step(builtin_catalogue, resolved, spec)
    assert not [n for n in plain.assumptions if n.startswith("cost parameters: ")]
    serve = infer(
        builtin_catalogue, resolved, InferSpec(model=find_model("llama3-8b"), tp=8), params=mine
    )
    assert "cost parameters: site.yaml" in serve.assumptions


def test_compare_marks_zero_2_and_3_layouts_with_pipeline_parallelism(
    builtin_catalogue: Catalogue,
) -> None:
    """train --compare ranks layouts a user may pick from: one pairing ZeRO-2 or 3 with pp > 1
    (dp > 1, so ZeRO shards something) carries a warning on its row, which DeepSpeed's pipeline
    engine refuses, with its micro-batch count M = 128 / dp (the global batch of 128 sequences,
    one a GPU of the all-data-parallel layout); layouts with pp 1 or dp 1 carry none, and ZeRO-1
    none at all (the one-layout note had said it; the ranking had not)."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16))

    def marks(zero: int) -> dict[tuple[int, int, int], list[str]]:
        job = TrainSpec(
            model=find_model("llama3-70b"), parallel=Parallelism(dp=cluster.ranks), zero=zero
        )
        results, _ = compare_layouts(builtin_catalogue, cluster, job)
        return {
            (r.spec.parallel.tp, r.spec.parallel.pp, r.spec.parallel.dp): [
                w for w in r.warnings if w.startswith(f"ZeRO-{zero} with pp")
            ]
            for r in results
        }

    three = marks(3)
    assert three[(8, 8, 2)] == [
        "ZeRO-3 with pp, which DeepSpeed's pipeline engine refuses: priced exchanging in every "
        "micro-batch, 64x one's data; an FSDP stack can gather the weights once a step"
    ]
    assert three[(8, 2, 8)] == [
        "ZeRO-3 with pp, which DeepSpeed's pipeline engine refuses: priced exchanging in every "
        "micro-batch, 16x one's data; an FSDP stack can gather the weights once a step"
    ]
    assert three[(8, 16, 1)] == []  # dp 1: ZeRO shards nothing
    assert three[(8, 1, 16)] == []  # no pipeline
    marked = {k for k, v in three.items() if v}
    assert marked == {k for k in three if k[1] > 1 and k[2] > 1}
    assert marks(2)[(8, 4, 4)] == [
        "ZeRO-2 with pp, which DeepSpeed's pipeline engine refuses: priced exchanging once per "
        "micro-batch, 32x one's data"
    ]
    assert not any(marks(1).values())
    # one micro-batch a step (a global batch of 8 at dp 8): DeepSpeed refuses the pairing all
    # the same (review CD: such rows had gone unmarked)
    job = TrainSpec(
        model=find_model("llama3-70b"),
        parallel=Parallelism(dp=cluster.ranks),
        zero=3,
        global_batch=8,
    )
    results, _ = compare_layouts(builtin_catalogue, cluster, job)
    (one,) = [
        r
        for r in results
        if (r.spec.parallel.tp, r.spec.parallel.pp, r.spec.parallel.dp) == (8, 2, 8)
    ]
    assert one.microbatches == 1
    assert [w for w in one.warnings if w.startswith("ZeRO-3 with pp")] == [
        "ZeRO-3 with pp, which DeepSpeed's pipeline engine refuses: priced with its one micro-batch"
    ]


def test_sharp_on_and_taken_by_no_all_reduce_is_said(builtin_catalogue: Catalogue) -> None:
    """Llama 3 70B at tp 8 on 4 DGX H100 with SHARP on: the data-parallel all-reduce (4 ranks,
    one a node) stays ring/Simple, as NCCL's tuner keeps it, and nothing had said whether the
    flag was taken (review CN); at tp 1 the 32-rank all-reduce runs NVLS across nodes."""
    tp8 = _run(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4, sharp=True), tp=8, dp=4)
    assert (
        "SHARP is on, but no all-reduce of the step runs on it: NCCL's tuner keeps dp-allreduce "
        "ring/Simple"
    ) in tp8.assumptions
    tp1 = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=4, sharp=True),
        tp=1,
        dp=32,
        model_id="llama3-8b",
    )
    assert _phase(tp1, "dp-allreduce").estimate.best.algorithm.value == "nvls"
    assert not [n for n in tp1.assumptions if n.startswith("SHARP is on")]


def test_a_search_notes_sharp_as_each_layouts_single_run_does(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 8B on 4 DGX H100 with SHARP on: a search's quick phases keep no estimate, and
    the step's SHARP note had gone unsaid there (review CR L4); it is the single run's, layout
    by layout, and a layout whose all-reduces stay inside nodes (dp 8 inside a node, pp across)
    says the flag changes nothing."""
    cluster = resolve_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4, sharp=True)
    )
    job = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=cluster.ranks))

    def sharp(r: TrainResult) -> list[str]:
        return [n for n in r.assumptions if n.startswith("SHARP is on")]

    quick, _ = compare_layouts(builtin_catalogue, cluster, job)
    full, _ = compare_layouts(builtin_catalogue, cluster, job, quick=False)
    assert [sharp(r) for r in quick] == [sharp(r) for r in full]
    for r in full:
        across = [
            p.estimate.best.algorithm.value
            for p in r.phases
            if p.collective is Collective.ALL_REDUCE and p.tier != "scale-up" and p.estimate
        ]
        said = sharp(r)
        if not across:
            assert said == [
                "SHARP is on, but no all-reduce of the step crosses the network: ibcalc prices "
                "in-network reduction (CollNet, NVLS across nodes) for all-reduce only"
            ]
        elif "nvls" in across or "collnet" in across:
            assert said == []
        else:
            assert len(said) == 1
            assert "NCCL's tuner keeps" in said[0]
    (one,) = [r for r in full if (r.spec.parallel.tp, r.spec.parallel.pp) == (1, 4)]
    assert sharp(one)[0].endswith(
        "crosses the network: ibcalc prices in-network reduction "
        "(CollNet, NVLS across nodes) for all-reduce only"
    )
    (flat,) = [r for r in full if r.spec.parallel.dp == 32]
    assert sharp(flat) == []  # its 32-rank all-reduce runs NVLS across nodes


def test_sharp_ruled_out_by_the_type_or_cluster_names_it(builtin_catalogue: Catalogue) -> None:
    """Where the gradients' type or the cluster rules SHARP out, the note says so, as the
    all-reduce estimate's hint does, not that NCCL's tuner keeps ring (review CR L3): SHARP
    reduces 16- and 32-bit types, and CollNet takes at most 8 GPUs per scale-up domain, so 36
    GB200 trays (72 GPUs a domain) with NVLS off have no SHARP algorithm."""
    # fp8 and uint8 (which only the library takes) are priced as an int8 sum: the type given is
    # named (reviews CW, CX)
    for grad, why in (
        ("int8", "SHARP does not reduce int8"),
        ("fp8", "SHARP does not reduce fp8 gradients, priced as int8"),
        (DType.UINT8, "SHARP does not reduce uint8 gradients, priced as int8"),
    ):
        step = _run(
            builtin_catalogue,
            ClusterSpec(system="dgx-a100", nodes=4, sharp=True),
            model_id="llama3-8b",
            grad_dtype=grad,
        )
        assert [n for n in step.assumptions if n.startswith("SHARP is on")] == [
            f"SHARP is on, but no all-reduce of the step runs on it: {why}"
        ]
    gb200 = _run(
        builtin_catalogue,
        ClusterSpec(system="gb200-nvl72", nodes=36, sharp=True, nvls=False),
        model_id="llama3-8b",
    )
    (note,) = [n for n in gb200.assumptions if n.startswith("SHARP is on")]
    assert note.startswith(
        "SHARP is on, but no all-reduce of the step runs on it: no SHARP algorithm applies to "
        "this cluster (CollNet takes at most 8 GPUs per scale-up domain"
    )
    # two sites: the all-reduce crosses the WAN, which no SHARP tree spans; the collnet and
    # NVLS limits, both met on DGX H100, had been named (review CW)
    sites = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=8, sharp=True, sites=2, wan="wan-100g"),
        model_id="llama3-8b",
    )
    assert [n for n in sites.assumptions if n.startswith("SHARP is on")] == [
        "SHARP is on, but no all-reduce of the step runs on it: a SHARP tree does not span "
        "sites (the all-reduce crosses the WAN between them)"
    ]


def test_the_sharp_hint_stands_only_where_an_all_reduce_crosses_the_network(
    builtin_catalogue: Catalogue,
) -> None:
    """'ndr supports SHARP (CollNet); enable with --sharp' had closed a ZeRO-1 step (a
    reduce-scatter and an all-gather across nodes, no all-reduce) and a tp 8 pp 2 step on 2
    nodes (dp 1), where the flag changes no figure (review CZ 1); a plain dp step keeps it."""
    hint = "ndr supports SHARP (CollNet); enable with {sharp}"
    cluster = ClusterSpec(system="dgx-h100", nodes=2)
    zero = _run(builtin_catalogue, cluster, tp=8, dp=2, zero=1)
    assert {p.collective for p in zero.phases if p.tier != "scale-up"} >= {
        Collective.REDUCE_SCATTER,
        Collective.ALL_GATHER,
    }
    assert hint not in zero.assumptions
    assert hint not in _run(builtin_catalogue, cluster, tp=8, pp=2).assumptions
    plain = _run(builtin_catalogue, cluster, tp=8, dp=2)
    assert any(p.collective is Collective.ALL_REDUCE and p.tier != "scale-up" for p in plain.phases)
    assert hint in plain.assumptions


def test_the_sharp_hint_names_a_type_sharp_does_not_reduce(builtin_catalogue: Catalogue) -> None:
    """int8 and fp8 gradients (an 8-bit integer sum) across 4 DGX H100: --sharp changes nothing,
    yet the step had said 'enable with --sharp' (review DA); it says why, in the allreduce
    estimate's words. bf16 gradients keep the hint."""
    cluster = ClusterSpec(system="dgx-h100", nodes=4)
    lead = "ndr supports SHARP (CollNet); {sharp} would not change an all-reduce of the step: "
    for grad, why in (
        (DType.INT8, "SHARP does not reduce int8"),
        (DType.FP8, "SHARP does not reduce fp8 gradients, priced as int8"),
    ):
        result = _run(builtin_catalogue, cluster, tp=8, dp=4, grad_dtype=grad)
        assert lead + why in result.assumptions
        assert "ndr supports SHARP (CollNet); enable with {sharp}" not in result.assumptions
    plain = _run(builtin_catalogue, cluster, tp=8, dp=4)
    assert "ndr supports SHARP (CollNet); enable with {sharp}" in plain.assumptions
    # and the flag indeed changes no figure of the int8 step
    off, on = (
        _run(builtin_catalogue, spec, tp=8, dp=4, grad_dtype=DType.INT8)
        for spec in (cluster, cluster.replace(sharp=True))
    )
    assert [p.time_s for p in on.phases] == [p.time_s for p in off.phases]


def test_a_lone_pipeline_pair_holds_its_gpus_nic_whole(builtin_catalogue: Catalogue) -> None:
    """DGX-1V has 4 EDR NICs for 8 GPUs, two GPUs to a NIC. A tp 1 pipeline's crossing boundary
    is one pair (GPU 7 of one node to GPU 0 of the next), whose GPU holds its NIC alone: priced
    as the same pair's send/recv over one NIC, where half a NIC had made it 2x slower (review
    DB). tp 2 and tp 4 stages send 2 and 4 pairs through 1 and 2 NICs: half a NIC each."""
    cluster = ClusterSpec(system="dgx-1v", nodes=2)
    lone = _phase(_run(builtin_catalogue, cluster, pp=16, model_id="llama3-8b"), "pp-sendrecv")
    alone = estimate(
        builtin_catalogue,
        ClusterSpec(system="dgx-1v", nodes=2, gpus_per_node=1, nics_per_node=1),
        Collective.SEND_RECV,
        lone.bytes_per_gpu,
        dtype="bf16",
    )
    assert lone.time_s == pytest.approx(alone.time_s)
    assert any(n.endswith("4 x edr: 1 NIC each") for n in lone.assumptions)
    for tp in (2, 4):
        pair = _phase(
            _run(builtin_catalogue, cluster, tp=tp, pp=16 // tp, model_id="llama3-8b"),
            "pp-sendrecv",
        )
        assert any(n.endswith("4 x edr: 0.5 NICs each") for n in pair.assumptions)


def test_sharp_ruled_out_by_the_cluster_or_by_every_type_is_said_so(
    builtin_catalogue: Catalogue,
) -> None:
    """GB200 with --no-nvls: no SHARP algorithm applies (CollNet takes at most 8 GPUs of a
    domain, NVLS across nodes needs NVLS), so the hint says --sharp changes nothing, as the step
    with --sharp does (review DB 1). fp8 activations and int8 gradients with tp across nodes:
    each type's reason, not 'NCCL's tuner keeps' (review DB 2)."""
    nvl = ClusterSpec(system="gb200-nvl72", nodes=36, nvls=False)
    why = "no SHARP algorithm applies to this cluster (CollNet takes at most 8 GPUs"
    off = _run(builtin_catalogue, nvl, tp=8, model_id="llama3-70b")
    assert any(
        n.startswith(
            "ndr supports SHARP (CollNet); {sharp} would not change an all-reduce of the step: "
            + why
        )
        for n in off.assumptions
    )
    on = _run(builtin_catalogue, nvl.replace(sharp=True), tp=8, model_id="llama3-70b")
    assert any(
        n.startswith("SHARP is on, but no all-reduce of the step runs on it: " + why)
        for n in on.assumptions
    )
    assert [p.time_s for p in on.phases] == [p.time_s for p in off.phases]
    mixed = _run(
        builtin_catalogue,
        ClusterSpec(system="dgx-h100", nodes=4, sharp=True),
        tp=16,
        dp=2,
        act_dtype=DType.FP8,
        grad_dtype=DType.INT8,
    )
    crossing = {
        p.estimate.dtype
        for p in mixed.phases
        if p.collective is Collective.ALL_REDUCE and p.tier != "scale-up" and p.estimate
    }
    assert crossing == {"fp8", "int8"}
    assert (
        "SHARP is on, but no all-reduce of the step runs on it: SHARP does not reduce fp8; "
        "SHARP does not reduce int8"
    ) in mixed.assumptions
