"""ibcalc.workload.infer: decode per token, prefill and KV transfer per request, by hand."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import ndr_sendrecv_by_hand_s, pair_sendrecv_s, tp_whatif_by_hand_s
from ibcalc.catalogue.load import find_link
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective, Estimate
from ibcalc.errors import WorkloadError
from ibcalc.facade import estimate
from ibcalc.workload.infer import InferSpec, infer, serving_cluster
from ibcalc.workload.model import find_model


def _dgx(cat: Catalogue, nodes: int = 1):  # type: ignore[no-untyped-def]
    return resolve_cluster(cat, ClusterSpec(system="dgx-h100", nodes=nodes))


def _dgx_estimate(cat: Catalogue, collective: Collective, size: int, **cluster: Any) -> Estimate:
    """The engine's estimate of ``collective`` of ``size`` bf16 bytes on DGX H100 nodes shaped
    by ``cluster`` (what a phase's placement should come to)."""
    return estimate(cat, ClusterSpec(system="dgx-h100", **cluster), collective, size, dtype="bf16")


def test_decode_tp_all_reduce_per_token(builtin_catalogue: Catalogue) -> None:
    # batch 32 x hidden 8192 x 2 bytes = 524,288 B per all-reduce, 2 per layer x 80 layers
    spec = InferSpec(model=find_model("llama3-70b"), tp=8, batch=32, output_tokens=100)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue), spec)
    decode = next(p for p in result.phases if p.name == "decode-tp-allreduce")
    assert decode.bytes_per_gpu == 524_288
    assert decode.count == 160
    assert decode.per == "token"
    same = _dgx_estimate(
        builtin_catalogue, Collective.ALL_REDUCE, 524_288, nodes=1, gpus_per_node=8
    )
    assert decode.time_s == same.time_s
    assert result.per_token_s == pytest.approx(160 * same.time_s)
    prefill = next(p for p in result.phases if p.name == "prefill-tp-allreduce")
    # prompt (default 1 token here) x 8192 x 2
    assert prefill.bytes_per_gpu == 1 * 8192 * 2
    assert result.per_request_s == pytest.approx(prefill.total_s + 100 * result.per_token_s)
    assert result.dominant_tier == "scale-up"


def test_prefill_across_two_stages_is_worked_by_hand(builtin_catalogue: Catalogue) -> None:
    """Llama 3 70B at tp 8 pp 2 on two DGX H100s, an 8192-token prompt. Each of the 160
    prefill all-reduces moves 8192 x 8192 x 2 B = 128 MiB by NVLS inside a node: 25 us + 128 MiB
    x 9/8 / (450 GB/s x 0.686) = 514.13 us (conftest.tp_whatif_by_hand_s, inside). The one
    stage boundary sends a TP rank's 1/8 of it, 16 MiB, through its GPU's own NDR NIC: 8.4 + 14
    us + 16 MiB / 48.75 GB/s = 366.55 us (conftest.ndr_sendrecv_by_hand_s)."""
    spec = InferSpec(
        model=find_model("llama3-70b"), tp=8, pp=2, batch=32, prompt_tokens=8192, output_tokens=1
    )
    result = infer(builtin_catalogue, _dgx(builtin_catalogue, 2), spec)
    phases = {p.name: p for p in result.phases}
    tp = phases["prefill-tp-allreduce"]
    assert (tp.bytes_per_gpu, tp.count, tp.tier) == (128 * 2**20, 160, "scale-up")
    inside, _ = tp_whatif_by_hand_s(128 * 2**20, 8)
    assert inside * 1e6 == pytest.approx(514.13, abs=0.005)
    assert tp.time_s == pytest.approx(inside, rel=1e-9)
    pp = phases["prefill-pp-sendrecv"]
    assert (pp.bytes_per_gpu, pp.count, pp.tier) == (16 * 2**20, 1, "scale-out")
    by_hand = ndr_sendrecv_by_hand_s(16 * 2**20)
    assert by_hand * 1e6 == pytest.approx(366.55, abs=0.005)
    assert pp.time_s == pytest.approx(by_hand, rel=1e-9)


def _disaggregated_70b(cat: Catalogue) -> Any:
    """Llama 3 70B at tp 8, batch 32, 8192-token prompts and 512 output tokens, prefill and
    decode on 2 DGX H100 nodes of their own (the README's serving example)."""
    spec = InferSpec(
        model=find_model("llama3-70b"),
        tp=8,
        batch=32,
        prompt_tokens=8192,
        output_tokens=512,
        disaggregated=True,
    )
    return infer(cat, _dgx(cat, 2), spec)


def test_kv_transfer_for_disaggregated_serving(builtin_catalogue: Catalogue) -> None:
    # 327,680 B per token x 8192 prompt tokens = 2,684,354,560 B; the 8 TP ranks of a DGX H100
    # each ship 1/8 (335,544,320 B) through their own NDR NIC, all at once
    result = _disaggregated_70b(builtin_catalogue)
    assert result.kv_bytes_per_token == 327_680
    assert result.kv_bytes_per_request == 327_680 * 8192 == 2_684_354_560
    kv = next(p for p in result.phases if p.name == "kv-transfer")
    assert kv.bytes_per_gpu == 335_544_320
    assert kv.tier == "scale-out"
    same = _dgx_estimate(
        builtin_catalogue,
        Collective.SEND_RECV,
        335_544_320,
        nodes=2,
        gpus_per_node=1,
        nics_per_node=1,
        inter="ndr",
    )
    assert kv.time_s == same.time_s
    # bandwidth bound by hand: 335.5 MB over one NDR NIC's achievable rate (~47 GB/s): ~7 ms
    assert 335_544_320 / 50e9 < kv.time_s < 335_544_320 / 40e9
    per_request = sum(p.total_s for p in result.phases if p.per == "request")
    assert result.per_request_s == pytest.approx(per_request + 512 * result.per_token_s)


def test_the_kv_transfer_crosses_tapered_leaves_as_the_cluster_says(
    builtin_catalogue: Catalogue,
) -> None:
    """Leaves tapered 4:1 with all traffic crossing them: the KV transfer's pair had been priced
    on a non-blocking fabric (458 us for 20 MiB on RoCE 400G) while the instances' own
    all-reduces slowed; it is the same send/receive with the cluster's fractions."""
    taper = {
        "oversubscription": 4,
        "cross_leaf_fraction": 1.0,
        "neighbour_cross_leaf_fraction": 1.0,
    }
    model = find_model("llama3-70b")
    spec = InferSpec(model=model, tp=16, prompt_tokens=1024, disaggregated=True)
    cluster = resolve_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100", inter="roce-400g", nodes=4, **taper)
    )
    kv = next(p for p in infer(builtin_catalogue, cluster, spec).phases if p.name == "kv-transfer")

    def pair(**fabric: Any) -> Estimate:
        """The KV transfer's send/receive alone: one GPU and one NIC on each of 2 nodes."""
        return _dgx_estimate(
            builtin_catalogue,
            Collective.SEND_RECV,
            int(kv.bytes_per_gpu),
            nodes=2,
            gpus_per_node=1,
            nics_per_node=1,
            inter="roce-400g",
            **fabric,
        )

    assert kv.time_s == pytest.approx(pair(**taper).time_s, rel=1e-9)
    assert kv.time_s > 3 * pair().time_s


def test_a_tp_group_wider_than_a_node_ships_its_cache_through_all_its_nodes(
    builtin_catalogue: Catalogue,
) -> None:
    # tp 8 on GB200 NVL72 trays of 4 GPUs, one NDR NIC each: the group spans 2 trays, each of
    # its 8 GPUs holds a distinct 1/8 of Llama 3 70B's cache (8 KV heads), and ships it through
    # its own NIC: 327,680 B x 8192 / 8 = 335,544,320 B per GPU over one NDR path, as on DGX H100
    model = find_model("llama3-70b")
    nvl72 = resolve_cluster(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=4))
    spec = InferSpec(model=model, tp=8, prompt_tokens=8192, disaggregated=True)
    kv = next(p for p in infer(builtin_catalogue, nvl72, spec).phases if p.name == "kv-transfer")
    assert kv.bytes_per_gpu == 327_680 * 8192 // 8 == 335_544_320
    one_path = estimate(
        builtin_catalogue,
        ClusterSpec(nodes=2, gpus_per_node=1, nics_per_node=1, inter="ndr", host_pcie="pcie5"),
        Collective.SEND_RECV,
        335_544_320,
        dtype="bf16",
    )
    assert kv.time_s == pytest.approx(one_path.time_s, rel=1e-9)
    # the group's 2 trays have 8 NICs between them: 8 may be asked for, 9 may not
    infer(builtin_catalogue, nvl72, InferSpec(model=model, tp=8, disaggregated=True, kv_nics=8))
    with pytest.raises(WorkloadError, match="more than the 8 NICs of the 2 nodes of one TP"):
        infer(builtin_catalogue, nvl72, InferSpec(model=model, tp=8, disaggregated=True, kv_nics=9))


def test_fewer_kv_nics_is_slower(builtin_catalogue: Catalogue) -> None:
    model = find_model("llama3-70b")
    cluster = _dgx(builtin_catalogue, 2)
    times = []
    for nics in (8, 1):
        spec = InferSpec(model=model, tp=8, prompt_tokens=8192, disaggregated=True, kv_nics=nics)
        result = infer(builtin_catalogue, cluster, spec)
        times.append(next(p for p in result.phases if p.name == "kv-transfer").time_s)
    # by hand: Llama 3 70B's KV cache (Meta's config: 80 layers, 8 KV heads of 128) is
    # 80 x 2 (K, V) x 8 x 128 x 2 B (bf16) = 327,680 B a token, x 8192 prompt tokens = 2.5 GiB;
    # a send/recv across 2 nodes takes NCCL's ring/Simple base 8.4 us + one NET Simple hop of
    # 14 us (data/cost_params.yaml) + S / (50 GB/s x 0.975) through one NDR NIC (data/links.yaml).
    # Eight NICs ship 1/8 each at once, 320 MiB: 6905.36 us; one NIC ships the 8 shards one
    # after the other, 2.5 GiB: 55086.08 us, 7.98x
    cache = 80 * 2 * 8 * 128 * 2 * 8192
    assert cache == 5 * 2**29
    by_hand = [(8.4 + 14.0) * 1e-6 + cache / nics / (50e9 * 0.975) for nics in (8, 1)]
    assert [t * 1e6 for t in by_hand] == [
        pytest.approx(6905.3604, rel=1e-7),
        pytest.approx(55086.0833, rel=1e-7),
    ]
    assert times == [pytest.approx(t, rel=1e-9) for t in by_hand]


def test_more_kv_nics_for_one_sender_are_never_slower(builtin_catalogue: Catalogue) -> None:
    # tp 1: one GPU ships the whole cache. Through 1 NDR NIC (50 GB/s x 0.94 achievable) it is
    # NIC-bound; through 2 or more it is bound by the GPU's own PCIe Gen5 x16 link to them, so
    # more NICs neither help further nor (as a per-NIC share of that link once did) slow it
    model = find_model("llama3-8b")
    cluster = _dgx(builtin_catalogue, 2)
    pcie = find_link(builtin_catalogue, "pcie5").achievable_Bps
    ndr = find_link(builtin_catalogue, "ndr").achievable_Bps
    times = {}
    for nics in (1, 2, 8):
        spec = InferSpec(model=model, prompt_tokens=1024, disaggregated=True, kv_nics=nics)
        result = infer(builtin_catalogue, cluster, spec)
        kv = next(p for p in result.phases if p.name == "kv-transfer")
        times[nics] = (kv.time_s, kv.bytes_per_gpu)
    size = times[1][1]
    assert times[1][0] > size / ndr  # one NIC: at most its rate
    assert times[2][0] == times[8][0]  # both held to the PCIe link
    assert size / pcie < times[8][0] < times[1][0]
    with pytest.raises(WorkloadError, match="more than the 8 NICs of a node"):
        infer(builtin_catalogue, cluster, InferSpec(model=model, disaggregated=True, kv_nics=16))
    # prefill and decode on different nodes: one node has no second to ship the cache to
    with pytest.raises(WorkloadError, match="the cluster has 1 node: give nodes 2 or more"):
        infer(
            builtin_catalogue, _dgx(builtin_catalogue), InferSpec(model=model, disaggregated=True)
        )


def test_moe_decode_all_to_all(builtin_catalogue: Catalogue) -> None:
    # DeepSeek-V3 on ep 16 = two DGX H100 nodes: attention is data-parallel over the 16 groups,
    # so a batch of 64 is 4 sequences each; 4 x top-8 x hidden 7168 x 2 bytes = 458,752 B per
    # dispatch/combine, 2 per MoE layer x 58 MoE layers
    spec = InferSpec(model=find_model("deepseek-v3"), ep=16, batch=64)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue, 2), spec)
    ep = next(p for p in result.phases if p.name == "decode-ep-alltoall")
    assert ep.bytes_per_gpu == 64 / 16 * 8 * 7168 * 2 == 458_752
    assert ep.count == 116
    assert ep.tier == "scale-out"
    assert result.dominant_tier == "scale-out"
    assert not any("decode nothing" in w for w in result.warnings)
    # a batch smaller than ep leaves groups idle: each busy one has 1 sequence (ceil), and the
    # output says how many decode nothing
    small = infer(
        builtin_catalogue,
        _dgx(builtin_catalogue, 2),
        InferSpec(model=find_model("deepseek-v3"), ep=16, batch=10),
    )
    ep = next(p for p in small.phases if p.name == "decode-ep-alltoall")
    assert ep.bytes_per_gpu == 1 * 8 * 7168 * 2
    assert any("6 attention groups decode nothing" in w for w in small.warnings)


def test_moe_with_tp_splits_the_group_batch(builtin_catalogue: Catalogue) -> None:
    # Mixtral 8x7B, tp 2 x ep 4 on one DGX H100, batch 32: 8 sequences per attention group; the
    # group's TP all-reduce carries 8 x 4096 x 2 B, its dispatch 8 / 2 = 4 tokens per GPU
    # (4 x top-2 x 4096 x 2 B); the KV cache per GPU is the group's 8 sequences, not 32
    model = find_model("mixtral-8x7b")
    spec = InferSpec(model=model, tp=2, ep=4, batch=32, prompt_tokens=1000, output_tokens=24)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue), spec)
    by_name = {p.name: p for p in result.phases}
    assert by_name["decode-tp-allreduce"].bytes_per_gpu == 8 * 4096 * 2
    assert by_name["decode-ep-alltoall"].bytes_per_gpu == 4 * 2 * 4096 * 2
    # 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 B = 131,072 B per token, over tp 2
    assert result.memory.kv_cache_bytes == pytest.approx(8 * 1024 * 131_072 / 2)


def test_the_kv_cache_is_the_busiest_ranks_when_tp_does_not_divide_the_kv_heads(
    builtin_catalogue: Catalogue,
) -> None:
    """Llama 3 70B (8 KV heads, 80 layers x 8 x 128 x 2 x 2 B = 327,680 B per token) on tp 3,
    one 1,024 + 256-token request: a rank holds whole KV heads, 3 on the busiest (8 = 3 + 3 +
    2), so 3/8 of 1,280 x 327,680 B = 150 MiB; an even split over 3 had given 133 MiB. On tp 4
    the split is even (2 heads each), on tp 16 every rank holds one head (copied past 8)."""
    model = find_model("llama3-70b")
    cache = 1280 * 327_680

    def kv(tp: int) -> float | None:
        spec = InferSpec(model=model, tp=tp, batch=1, prompt_tokens=1024, output_tokens=256)
        nodes = 2 if tp > 8 else 1
        return infer(builtin_catalogue, _dgx(builtin_catalogue, nodes), spec).memory.kv_cache_bytes

    assert kv(3) == pytest.approx(cache * 3 / 8)
    assert kv(3) == pytest.approx(150 * 2**20)
    assert kv(4) == pytest.approx(cache / 4)
    assert kv(16) == pytest.approx(cache / 8)
    # disaggregated, each of the 3 ranks ships its own heads: the busiest sends 3/8 of the
    # 1,024-token prompt's 1024 x 327,680 B, not 1/3 (the memory already counted 3/8)
    spec = InferSpec(model=model, tp=3, prompt_tokens=1024, disaggregated=True)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue, 2), spec)
    (send,) = [p for p in result.phases if p.name == "kv-transfer"]
    assert send.bytes_per_gpu == pytest.approx(1024 * 327_680 * 3 / 8)


def test_instance_must_fit(builtin_catalogue: Catalogue) -> None:
    with pytest.raises(WorkloadError) as err:
        infer(
            builtin_catalogue,
            _dgx(builtin_catalogue),
            InferSpec(model=find_model("llama3-70b"), tp=16),
        )
    assert err.value.field == "nodes"
    with pytest.raises(WorkloadError) as dense:
        infer(
            builtin_catalogue,
            _dgx(builtin_catalogue),
            InferSpec(model=find_model("llama3-70b"), ep=2),
        )
    assert dense.value.field == "ep"


def test_prefill_moves_the_prompt_through_experts_and_stages(builtin_catalogue: Catalogue) -> None:
    # Mixtral 8x7B: 32 MoE layers, top-2, hidden 4096. A 1024-token prompt, split over the
    # 2 TP GPUs before the dispatch, sends 512 x 2 x 4096 x 2 B = 8 MiB per GPU per all-to-all,
    # 2 per MoE layer, once per request
    spec = InferSpec(model=find_model("mixtral-8x7b"), tp=2, ep=4, prompt_tokens=1024)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue), spec)
    prefill = next(p for p in result.phases if p.name == "prefill-ep-alltoall")
    assert prefill.bytes_per_gpu == 1024 / 2 * 2 * 4096 * 2 == 8_388_608
    assert (prefill.count, prefill.per) == (64, "request")
    same = _dgx_estimate(
        builtin_catalogue, Collective.ALL_TO_ALL, 8_388_608, nodes=1, gpus_per_node=4
    )
    assert prefill.time_s == pytest.approx(same.time_s)
    per_request = sum(p.total_s for p in result.phases if p.per == "request")
    assert result.per_request_s == pytest.approx(
        per_request + spec.output_tokens * result.per_token_s
    )
    # Llama 3 70B on two pipeline stages of 8: the prompt's activations (1024 x 8192 x 2 B)
    # cross the one stage boundary once per request, a decode token's once per token, each of
    # the 8 TP GPUs sending its 1/8 slice (as train prices a stage's send)
    spec = InferSpec(model=find_model("llama3-70b"), tp=8, pp=2, prompt_tokens=1024)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue, 2), spec)
    by_name = {p.name: p for p in result.phases}
    assert by_name["prefill-pp-sendrecv"].bytes_per_gpu == 1024 * 8192 * 2 / 8
    assert by_name["decode-pp-sendrecv"].bytes_per_gpu == 8192 * 2 / 8
    assert by_name["prefill-pp-sendrecv"].count == by_name["decode-pp-sendrecv"].count == 1


def test_more_stages_than_layers_are_refused(builtin_catalogue: Catalogue) -> None:
    spec = InferSpec(model=find_model("llama3-8b"), pp=33)  # 32 layers
    with pytest.raises(WorkloadError, match="pp 33 is more than the model's 32 layers") as err:
        infer(builtin_catalogue, _dgx(builtin_catalogue, 5), spec)
    assert err.value.field == "pp"


def test_pipeline_crossing_nodes_is_priced_per_boundary(builtin_catalogue: Catalogue) -> None:
    # tp 1 x pp 32 on 4 DGX H100 nodes: stage j is GPU j, so boundaries 7, 15 and 23 (GPU 8k-1
    # -> 8k) cross a node: 3 of 31. One decode step crosses every boundary in turn, so the 28
    # inside a node are priced on NVLink and the 3 across as one GPU in each of two nodes through
    # its own NDR NIC (8 NICs for 8 GPUs)
    assert [j for j in range(31) if (j + 1) % 8 == 0] == [7, 15, 23]
    spec = InferSpec(model=find_model("llama3-70b"), pp=32, batch=1, prompt_tokens=1024)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue, 4), spec)
    by_name = {p.name: p for p in result.phases}
    shapes = {
        "scale-up": (1, 2, {}),  # two GPUs of one node
        "scale-out": (2, 1, {"nics_per_node": 1, "inter": "ndr"}),  # one GPU on each of two
    }
    for tier, count in (("scale-up", 28), ("scale-out", 3)):
        nodes, gpus, more = shapes[tier]
        for when, size in (("decode", 8192 * 2), ("prefill", 1024 * 8192 * 2)):
            phase = by_name[f"{when}-pp-sendrecv-{tier}"]
            assert (phase.tier, phase.count, phase.bytes_per_gpu) == (tier, count, size)
            same = _dgx_estimate(
                builtin_catalogue,
                Collective.SEND_RECV,
                size,
                nodes=nodes,
                gpus_per_node=gpus,
                **more,
            )
            assert phase.time_s == pytest.approx(same.time_s)
    per_token = sum(p.total_s for p in result.phases if p.per == "token")
    assert result.per_token_s == pytest.approx(per_token)
    # pp 8 on one node: every boundary inside, one phase each
    spec = InferSpec(model=find_model("llama3-70b"), pp=8)
    result = infer(builtin_catalogue, _dgx(builtin_catalogue, 1), spec)
    assert {p.tier for p in result.phases} == {"scale-up"}
    assert "decode-pp-sendrecv" in {p.name for p in result.phases}


def test_experts_must_split_over_ep(builtin_catalogue: Catalogue) -> None:
    # Mixtral has 8 experts: 3 ranks cannot hold 8 / 3 each (train refuses the same)
    spec = InferSpec(model=find_model("mixtral-8x7b"), ep=3)
    with pytest.raises(WorkloadError, match="ep 3 does not divide the model's 8 experts") as err:
        infer(builtin_catalogue, _dgx(builtin_catalogue), spec)
    assert err.value.field == "ep"
    # 8 / 4 = 2 experts each: accepted
    ok = infer(builtin_catalogue, _dgx(builtin_catalogue), spec.model_copy(update={"ep": 4}))
    assert ok.phases


def test_tp_that_does_not_split_the_heads_warns(builtin_catalogue: Catalogue) -> None:
    # Llama 3 70B: 64 heads, 8 KV heads. 64 / 7 is not whole; 16 > 8 KV heads; 8 is clean.
    llama = find_model("llama3-70b")
    seven = infer(builtin_catalogue, _dgx(builtin_catalogue), InferSpec(model=llama, tp=7))
    assert seven.warnings == [
        "tp 7 does not divide the model's 64 attention heads (Megatron needs it to)"
    ]
    sixteen = infer(builtin_catalogue, _dgx(builtin_catalogue, 2), InferSpec(model=llama, tp=16))
    assert (
        "tp 16 is more than the model's 8 key/value heads: each KV head is replicated over "
        "tp / kv_heads GPUs"
    ) in sixteen.warnings
    eight = infer(builtin_catalogue, _dgx(builtin_catalogue), InferSpec(model=llama, tp=8))
    assert eight.warnings == []


@pytest.mark.parametrize(
    ("model_id", "context"),
    [
        # Llama 3 Herd paper 3.4.2: extended to 128K tokens (128 x 1024)
        ("llama3-70b", 131_072),
        # Mixtral paper section 1: 32k tokens
        ("mixtral-8x7b", 32_768),
        # DeepSeek-V3 report 4.3: extended to 128K
        ("deepseek-v3", 131_072),
    ],
)
def test_a_request_longer_than_the_context_is_refused(
    builtin_catalogue: Catalogue, model_id: str, context: int
) -> None:
    """Prompt and output share the context window: exactly full passes, one token more does
    not."""
    model = find_model(model_id)
    cluster = _dgx(builtin_catalogue)
    full = InferSpec(model=model, prompt_tokens=context - 512, output_tokens=512)
    assert infer(builtin_catalogue, cluster, full).spec.prompt_tokens == context - 512
    over = full.model_copy(update={"prompt_tokens": context - 511})
    with pytest.raises(WorkloadError) as err:
        infer(builtin_catalogue, cluster, over)
    assert err.value.field == "prompt_tokens"
    assert f"= {context + 1:,} tokens is more than" in str(err.value)
    assert f"the {context:,}-token context of {model.name}" in str(err.value)


def test_an_instance_inside_one_rack_places_every_group_inside(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3 served as tp 4 x ep 8 x pp 2 = 64 GPUs on one 72-GPU NVL72 rack was refused
    ("pp ranks 32 apart do not tile the 72-GPU scale-up domain") although 16 trays took it: the
    instance holds ranks 0-63, all in the rack, so no group meets a domain's edge."""
    rack = resolve_cluster(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=18))
    spec = InferSpec(model=find_model("deepseek-v3"), tp=4, ep=8, pp=2)
    result = infer(builtin_catalogue, rack, spec)
    assert {p.tier for p in result.phases} == {"scale-up"}
    # the stage boundary is a send/receive inside one NVLink 5 domain: 2 GPUs on its link
    pp = next(p for p in result.phases if p.name == "decode-pp-sendrecv")
    assert pp.time_s == pair_sendrecv_s(builtin_catalogue, "nvlink5", pp.bytes_per_gpu)


def test_disaggregated_serving_needs_nodes_for_two_instances(
    builtin_catalogue: Catalogue,
) -> None:
    # tp 16 on DGX H100: an instance takes 2 nodes, so prefill and decode need 4; on 2 the
    # KV transfer had been priced to a decode instance that had no nodes
    model = find_model("llama3-70b")
    spec = InferSpec(model=model, tp=16, disaggregated=True)
    with pytest.raises(
        WorkloadError,
        match="each instance of 16 GPUs takes 2 nodes, and the cluster has 2 nodes: give "
        "nodes 4 or more",
    ):
        infer(builtin_catalogue, _dgx(builtin_catalogue, 2), spec)
    assert any(
        p.name == "kv-transfer"
        for p in infer(builtin_catalogue, _dgx(builtin_catalogue, 4), spec).phases
    )
    # without a node count the cluster gets the 4 and says why
    cluster = serving_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100"), 16, disaggregated=True
    )
    assert cluster.nodes == 4
    assert (
        "4 nodes assumed ({nodes}): a prefill and a decode instance of 16 GPUs, each on nodes "
        "of its own"
    ) in cluster.assumptions


def test_nodes_assumed_past_one_nvlink_rack_fill_whole_racks(
    builtin_catalogue: Catalogue,
) -> None:
    """A GB200 NVL72 rack is 18 trays of 4 GPUs, and a cluster of more racks fills whole ones.
    Without a node count an instance of llama3-405b at tp 8 pp 12 (96 GPUs, 24 trays) had been
    given 24 nodes, and two disaggregated DeepSeek-V3 instances at tp 8 ep 8 (2 x 16 trays) 32,
    which the cluster then refused ("use a multiple of 18 nodes"); both get 36, two racks, and
    say why. Within one rack (one tp 8 ep 8 instance, 16 trays) nothing is raised."""
    spec = ClusterSpec(system="gb200-nvl72")
    staged = serving_cluster(builtin_catalogue, spec, 96)
    assert staged.nodes == 36
    assert (
        "36 nodes assumed ({nodes}): one instance of 96 GPUs, in whole scale-up domains of 18 "
        "nodes (gb200-nvl72)"
    ) in staged.assumptions
    result = infer(
        builtin_catalogue, staged, InferSpec(model=find_model("llama3-405b"), tp=8, pp=12)
    )
    # 12 stages of 8 GPUs: 9 in the first rack, 3 in the second; one boundary crosses
    assert [p.count for p in result.phases if p.name.startswith("decode-pp")] == [10, 1]
    pair = serving_cluster(builtin_catalogue, spec, 64, disaggregated=True)
    assert pair.nodes == 36
    assert serving_cluster(builtin_catalogue, spec, 64).nodes == 16


def test_kv_transfer_says_what_it_leaves_out(builtin_catalogue: Catalogue) -> None:
    model = find_model("llama3-70b")
    # two tp 4 instances on one NVL72 rack: NVLink could carry the cache; the network is priced
    rack = resolve_cluster(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=18))
    result = infer(builtin_catalogue, rack, InferSpec(model=model, tp=4, disaggregated=True))
    kv = next(p for p in result.phases if p.name == "kv-transfer")
    assert kv.tier == "scale-out"
    assert any(
        n.startswith("prefill and decode (8 GPUs together) fit in one NVLink domain here")
        for n in result.assumptions
    )
    # tp 8 x pp 2 on DGX H100: each stage holds half the layers' cache
    staged = infer(
        builtin_catalogue,
        _dgx(builtin_catalogue, 4),
        InferSpec(model=model, tp=8, pp=2, disaggregated=True),
    )
    assert any("(up to 2x faster)" in n for n in staged.assumptions)
    plain = infer(
        builtin_catalogue,
        _dgx(builtin_catalogue, 2),
        InferSpec(model=model, tp=8, disaggregated=True),
    )
    assert not any("NVLink domain here" in n or "stage's GPUs" in n for n in plain.assumptions)


def test_a_kv_cache_every_tp_rank_holds_whole_says_its_slices_are_gathered(
    builtin_catalogue: Catalogue,
) -> None:
    """DeepSeek-V3's MLA latent (576 elements per token per layer) serves every head, so each TP
    rank holds all of it; Llama 3 70B's 8 KV heads at tp 8 are one per rank. Only the first
    is said to ship slices that the decode side gathers (not priced)."""
    for model, ep, said in (("deepseek-v3", 4, True), ("llama3-70b", 1, False)):
        spec = InferSpec(model=find_model(model), tp=8, ep=ep, disaggregated=True)
        cluster = serving_cluster(
            builtin_catalogue, ClusterSpec(system="dgx-h100"), spec.gpus, disaggregated=True
        )
        result = infer(builtin_catalogue, cluster, spec)
        notes = [n for n in result.assumptions if n.startswith("every TP rank holds")]
        assert bool(notes) is said
    # 8 KV heads at tp 16: each rank holds one head, 1/8 of the cache, copied on 2 ranks
    spec = InferSpec(model=find_model("llama3-70b"), tp=16, disaggregated=True)
    cluster = serving_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100"), spec.gpus, disaggregated=True
    )
    result = infer(builtin_catalogue, cluster, spec)
    assert not any(n.startswith("every TP rank holds") for n in result.assumptions)
    assert any(
        n.startswith("8 KV heads for tp 16: each TP rank holds 1/8 of the KV cache, copied on 2")
        for n in result.assumptions
    )


def test_per_token_and_per_request_totals_carry_the_phases_summed_ranges(
    builtin_catalogue: Catalogue,
) -> None:
    """'per token 3.96 ms' had no range while each phase showed one. The totals' ranges are the
    sums of their phases' (errors going the same way on one cluster), the per-request one with
    the output tokens' share counted as the time is."""
    result = _disaggregated_70b(builtin_catalogue)
    per_token = [p.total_s_range for p in result.phases if p.per == "token"]
    per_request = [p.total_s_range for p in result.phases if p.per == "request"]
    assert per_token
    assert per_request
    low = sum(r[0] for r in per_token if r)
    high = sum(r[1] for r in per_token if r)
    assert result.per_token_s_range == pytest.approx((low, high))
    assert low < result.per_token_s < high
    assert result.per_request_s_range == pytest.approx(
        (
            sum(r[0] for r in per_request if r) + 512 * low,
            sum(r[1] for r in per_request if r) + 512 * high,
        )
    )


def test_nodes_one_instance_does_not_use_are_said_to_play_no_part(
    builtin_catalogue: Catalogue,
) -> None:
    """One tp-8 instance fills 1 DGX H100 (8 GPUs); given 64 nodes, the other 63 change no
    figure, and the result says so (a review: 1, 3 and 64 nodes printed the same without a
    word). Disaggregated, the two instances use 2 nodes."""
    spec = InferSpec(model=find_model("llama3-70b"), tp=8, batch=32, output_tokens=100)
    one = infer(builtin_catalogue, _dgx(builtin_catalogue, 1), spec)
    many = infer(builtin_catalogue, _dgx(builtin_catalogue, 64), spec)
    assert many.per_token_s == one.per_token_s
    said = (
        "one instance uses 1 of the 64 nodes ({nodes}); the others would serve other "
        "instances, not modelled: the figures are one instance's"
    )
    assert said in many.assumptions
    assert not any("instance uses" in n for n in one.assumptions)
    split = spec.model_copy(update={"disaggregated": True})
    two = infer(builtin_catalogue, _dgx(builtin_catalogue, 8), split)
    assert (
        "the two instances use 2 of the 8 nodes ({nodes}); the others would serve other "
        "instances, not modelled: the figures are one prefill and decode pair's"
    ) in two.assumptions


def test_host_options_that_slow_a_kv_transfer_are_not_said_to_change_nothing(
    builtin_catalogue: Catalogue,
) -> None:
    """Disaggregated inside one NVL72 rack, the KV cache crosses the NICs: --host-pcie pcie3
    slows it (a review: 1.74 -> 6.68 ms beside a note that the option changed no
    collective). Where a phase goes through the NICs the note is dropped."""
    spec = InferSpec(model=find_model("llama3-70b"), tp=4, disaggregated=True)
    cluster = ClusterSpec(system="gb200-nvl72")
    plain = infer(
        builtin_catalogue, serving_cluster(builtin_catalogue, cluster, 4, disaggregated=True), spec
    )
    slot = cluster.model_copy(update={"host_pcie": "pcie3"})
    slow = infer(
        builtin_catalogue, serving_cluster(builtin_catalogue, slot, 4, disaggregated=True), spec
    )
    (kv,) = [p for p in slow.phases if p.name == "kv-transfer"]
    (kv_plain,) = [p for p in plain.phases if p.name == "kv-transfer"]
    assert kv.time_s > kv_plain.time_s
    assert not any("changes no collective" in n for n in slow.assumptions)
    # nor is a taper said to be ignored (it slows the transfer 4x); SHARP and the host CPU,
    # which a point-to-point transfer does not use, are said to change nothing
    taper = cluster.model_copy(update={"oversubscription": 4.0, "sharp": True, "host_cpu": "amd"})
    tapered = infer(
        builtin_catalogue, serving_cluster(builtin_catalogue, taper, 4, disaggregated=True), spec
    )
    (kv_taper,) = [p for p in tapered.phases if p.name == "kv-transfer"]
    assert kv_taper.time_s > kv_plain.time_s
    assert not any("ignored" in n for n in tapered.assumptions)
    assert (
        "oversubscription 4:1 and 100% of the KV transfer, the one phase through the NICs, "
        "crossing the tapered uplinks ({cross_leaf_fraction}): x4 slower (max(1, k x f))"
    ) in tapered.assumptions
    # a share under 1/k: not slowed, and said so (k x f = 2 x 0.3 = 0.6)
    mild = cluster.model_copy(update={"oversubscription": 2.0, "cross_leaf_fraction": 0.3})
    calm = infer(
        builtin_catalogue, serving_cluster(builtin_catalogue, mild, 4, disaggregated=True), spec
    )
    (kv_calm,) = [p for p in calm.phases if p.name == "kv-transfer"]
    assert kv_calm.time_s == kv_plain.time_s
    assert any(n.endswith("not slowed (k x f = 0.6 <= 1)") for n in calm.assumptions)
    # a small share reads as two figures, not none: 0.4 % had read "0% of the KV transfer"
    tiny = cluster.model_copy(update={"oversubscription": 2.0, "cross_leaf_fraction": 0.004})
    small = infer(
        builtin_catalogue, serving_cluster(builtin_catalogue, tiny, 4, disaggregated=True), spec
    )
    assert any(
        n.startswith("oversubscription 2:1 and 0.40% of the KV transfer")
        and n.endswith("not slowed (k x f = 0.008 <= 1)")
        for n in small.assumptions
    )
    # a cross-leaf share without a taper changes nothing, and says so
    share = cluster.model_copy(update={"cross_leaf_fraction": 0.5})
    shared = infer(
        builtin_catalogue, serving_cluster(builtin_catalogue, share, 4, disaggregated=True), spec
    )
    (kv_share,) = [p for p in shared.phases if p.name == "kv-transfer"]
    assert kv_share.time_s == kv_plain.time_s
    assert "cross-leaf shares change nothing here: the leaves are not tapered" in (
        shared.assumptions
    )
    assert (
        "{sharp}, {host_cpu} change nothing here: one scale-up domain, and the KV transfer, the "
        "one phase through the NICs, is point to point"
    ) in tapered.assumptions


def test_a_wide_expert_group_says_its_message_term_is_an_extrapolation(
    builtin_catalogue: Catalogue,
) -> None:
    """ep 64 inside one NVL72 domain: each all-to-all posts 63 messages, beyond the 15 of the
    per-message cost's rows; the phase says so (the same note as the estimate's)."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=18))
    spec = InferSpec(model=find_model("deepseek-v3"), ep=64, batch=256)
    result = infer(builtin_catalogue, cluster, spec)
    decode = next(p for p in result.phases if p.name == "decode-ep-alltoall")
    (note,) = [n for n in decode.assumptions if "calibrated.per_message_latency" in n]
    assert note.startswith("63 messages a rank at 2.4 us each")
    assert decode.estimate is not None
    assert note in decode.estimate.assumptions


def test_a_serving_instance_in_an_nvl72_rack_names_the_racks_domain(
    builtin_catalogue: Catalogue,
) -> None:
    """tp 8 on gb200-nvl72: the instance holds 8 GPUs of the 72-GPU NVLink domain; its note had
    read "inside one 8-GPU scale-up domain" beside the cluster's "domain of up to 72"."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=2))
    result = infer(builtin_catalogue, cluster, InferSpec(model=find_model("llama3-405b"), tp=8))
    decode = next(p for p in result.phases if p.name == "decode-tp-allreduce")
    assert (
        "tp group: 8 GPUs inside one 72-GPU scale-up domain (gb200-nvl72; the job holds 8 of "
        "its GPUs)"
    ) in decode.assumptions
    split = resolve_cluster(
        builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=2, scale_up_domain=4)
    )
    result = infer(builtin_catalogue, split, InferSpec(model=find_model("llama3-405b"), tp=4))
    decode = next(p for p in result.phases if p.name == "decode-tp-allreduce")
    assert "tp group: 4 GPUs inside one 4-GPU scale-up domain" in decode.assumptions
    # a node resized by --gpus-per-node no longer assumes the preset's domain (DGX H100 -g 4
    # had read "one 8-GPU domain" where the model ran domains of 4)
    resized = resolve_cluster(
        builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1, gpus_per_node=4)
    )
    result = infer(builtin_catalogue, resized, InferSpec(model=find_model("llama3-8b"), tp=4))
    decode = next(p for p in result.phases if p.name == "decode-tp-allreduce")
    assert "tp group: 4 GPUs inside one 4-GPU scale-up domain" in decode.assumptions


def test_an_fp8_tensor_parallel_sum_is_said(builtin_catalogue: Catalogue) -> None:
    """--dtype fp8 prices the TP all-reduces as fp8 sums, half of bf16's 524,288 B at batch 32
    x hidden 8,192; a note says so and what a stack summing in bf16 would give (review BV: it
    had gone unsaid, where training refuses to price an fp8 sum), naming only the phases there
    are (review BX). bf16 has no such note; expert parallelism alone gets one too (review BW)."""
    model = find_model("llama3-70b")
    fp8 = infer(
        builtin_catalogue,
        _dgx(builtin_catalogue),
        InferSpec(model=model, tp=8, batch=32, act_dtype="fp8"),  # type: ignore[arg-type]
    )
    decode = next(p for p in fp8.phases if p.name == "decode-tp-allreduce")
    assert decode.bytes_per_gpu == 32 * 8192 * 1
    (note,) = [n for n in fp8.assumptions if n.startswith("{act_dtype} fp8:")]
    assert note.startswith(
        "{act_dtype} fp8: the activations' messages are priced in fp8, half of bf16's bytes (the "
        "tensor-parallel all-reduces as fp8 sums); a stack that quantises only"
    )
    assert "expert" not in note
    assert "pipeline" not in note
    bf16 = infer(builtin_catalogue, _dgx(builtin_catalogue), InferSpec(model=model, tp=8, batch=32))
    assert not any(n.startswith("{act_dtype}") for n in bf16.assumptions)
    moe = infer(
        builtin_catalogue,
        _dgx(builtin_catalogue),
        InferSpec(model=find_model("mixtral-8x7b"), ep=8, batch=32, act_dtype="fp8"),  # type: ignore[arg-type]
    )
    (moe_note,) = [n for n in moe.assumptions if n.startswith("{act_dtype} fp8:")]
    assert "(the expert all-to-alls' dispatch and combine)" in moe_note
    assert "tensor-parallel" not in moe_note


def test_serving_past_every_variants_memory_is_warned_of(builtin_catalogue: Catalogue) -> None:
    """Llama 3 405B on one DGX A100 at tp 8: 405.9e9 bf16 weights / 8 = 94.3 GiB a GPU, more
    than the larger A100's 80 GiB, so out of memory whichever A100 the node has (its preset
    states no one memory, and the fit had not been judged: review CN)."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-a100", nodes=1))
    result = infer(builtin_catalogue, cluster, InferSpec(model=find_model("llama3-405b"), tp=8))
    assert result.memory.weights_bytes / 2**30 == pytest.approx(94.3, abs=0.05)
    assert (result.memory.room, result.memory.fits) == ("out of memory", False)
    (warning,) = [w for w in result.warnings if "on every variant" in w]
    assert "more than the largest dgx-a100 GPU's 80.0 GiB" in warning


def test_the_sharp_hint_and_note_follow_the_all_reduces_across_the_network(
    builtin_catalogue: Catalogue,
) -> None:
    """infer had offered 'enable with --sharp' where no all-reduce leaves a node (Mixtral with ep
    8 and tp 1: all-to-alls only; tp 8 inside each node), and said nothing with --sharp while it
    changed no figure (review CZ 1). The hint stands where an all-reduce crosses the network (tp
    16 over 2 DGX H100, which --sharp then runs on NVLS across nodes); with --sharp and no such
    all-reduce the run says the flag is unused, as train does."""
    hint = "ndr supports SHARP (CollNet); enable with {sharp}"  # the CLI names its flag
    unused = (
        "SHARP is on, but no all-reduce of the run crosses the network: ibcalc prices "
        "in-network reduction (CollNet, NVLS across nodes) for all-reduce only"
    )
    moe = InferSpec(model=find_model("mixtral-8x7b"), tp=1, ep=8, batch=4)
    dense = InferSpec(model=find_model("llama3-70b"), tp=16, batch=32)
    for spec, across in ((moe, False), (dense, True)):
        off = infer(builtin_catalogue, _dgx(builtin_catalogue, 2), spec)
        on = infer(
            builtin_catalogue,
            resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2, sharp=True)),
            spec,
        )
        reduced = [
            p.estimate.best.algorithm.value
            for p in on.phases
            if p.collective is Collective.ALL_REDUCE and p.tier != "scale-up" and p.estimate
        ]
        assert bool(reduced) is across
        assert (hint in off.assumptions) is across
        assert (unused in on.assumptions) is not across
        if across:
            # one phase takes SHARP (NVLS across nodes): nothing said
            assert set(reduced) & {"nvls", "collnet"}
            assert not [n for n in on.assumptions if n.startswith("SHARP is on")]


def test_a_crossing_pipeline_boundary_counts_its_own_pairs(builtin_catalogue: Catalogue) -> None:
    """tp 1 pp 32 on 4 DGX H100: a boundary between nodes is one pair (rank 8k+7 to 8k+8), not
    the 8 GPUs of a node the note had counted; tp 4 pp 4 on 2: a stage's 4 pairs (review CZ 2)."""
    for tp, pp, nodes, pairs, whose in (
        (1, 32, 4, "1 pair leaves", "its"),
        (4, 4, 2, "4 pairs leave", "their"),
    ):
        spec = InferSpec(model=find_model("llama3-70b"), tp=tp, pp=pp, batch=8)
        result = infer(builtin_catalogue, _dgx(builtin_catalogue, nodes), spec)
        out = next(p for p in result.phases if p.name == "decode-pp-sendrecv-scale-out")
        assert (
            f"pp group: 2 GPUs, 1 in each of 2 scale-up domains; a crossing boundary's {pairs} a "
            f"domain at once through {whose} own GPU's NICs of the domain's 8 x ndr: 1 NIC each"
        ) in out.assumptions
