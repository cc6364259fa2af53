"""Communication of serving a model: per generated token and per request (docs/workload.md), and
the instance's memory per GPU, weights and KV cache (:func:`_memory`).

Decode step (one new token for each of B sequences in the batch), per GPU:

* TP: 2 all-reduces per layer (after attention, after the MLP) of ``b x h x bytes(act)``
  (Shoeybi et al. 2019, arXiv:1909.08053): small messages, the latency regime.
* EP: all-to-all dispatch and combine per MoE layer of ``b / tp x top_k x h x bytes(act)``.
* PP: one send/receive of ``b x h x bytes(act) / tp`` per stage boundary (pp - 1 per token):
  each TP GPU sends its 1/tp slice and the next stage gathers them inside its node
  (Narayanan et al. 2021, arXiv:2104.04473, section 4.1, as in training).

With ``ep > 1`` attention is data-parallel over the ``ep`` groups of ``tp`` GPUs (DeepSeek-V3
serves its MoE layers by EP and its attention by DP with TP and sequence parallelism,
arXiv:2412.19437 section 3.4): each group decodes ``b = ceil(B / ep)`` of the batch, so its TP
all-reduces and stage sends carry ``b`` tokens, and its tokens are split over its ``tp`` GPUs
before the dispatch. Without EP, ``b = B``.

Per request, with prefill and decode on different nodes (disaggregated serving): the prompt's KV
cache, ``prompt x layers x kv_elements x bytes(kv)`` with ``kv_elements = 2 x kv_heads x
head_dim`` (keys and values of every KV head; DeepSeek-V3's MLA caches d_c + d_h^R instead),
moves from the prefill instance to the decode instance over the scale-out fabric, striped over
the NICs it may use. Prefill moves the whole prompt through the same groups once per request: two
all-reduces of ``prompt x h x bytes`` per layer over TP, the MoE all-to-alls of
``prompt / tp x top_k x h x bytes`` and the stage send/receives of ``prompt x h x bytes / tp``.

Compute is not modelled: the times are what communication adds to each token and request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.catalogue.models import MAX_GPU_MEMORY_BYTES, MIN_GPU_MEMORY_BYTES, Catalogue
from ibcalc.cluster.resolve import (
    HOST_OPTIONS_UNUSED,
    NETWORK_OPTIONS_IGNORED,
    OVERSUBSCRIPTION_NOT_PRICED,
    TWO_NODE_TREE_NOTE,
    ResolvedCluster,
    expect_catalogue_and_spec,
    node_nics,
    require_collectives,
    resolve_cluster,
)
from ibcalc.cluster.spec import MAX_GPUS, MAX_NICS_PER_NODE, ClusterSpec
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Collective, DType
from ibcalc.errors import WorkloadError, expect_type
from ibcalc.facade import cost_parameter_notes, parse_dtype
from ibcalc.units import (
    fixed,
    format_oversubscription,
    format_share,
    format_size,
    format_slowdown,
    plural,
)
from ibcalc.workload.memory import (
    ServingMemory,
    busiest_candidates,
    decimal_capacity_note,
    gpu_capacity,
    judge_fit,
    stage_params,
)
from ibcalc.workload.model import CheckedSpec, ModelSpec, expect_job
from ibcalc.workload.phases import Per, Phase, build_phase, sharp_step_notes
from ibcalc.workload.placement import Placement, inherit, pipeline_boundaries, place_group

__all__ = ["InferResult", "InferSpec", "infer", "serving_cluster"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class InferSpec(CheckedSpec):
    """A serving setup: model, parallel degrees, batch, prompt and output lengths, dtypes."""

    model_config = _FROZEN

    model: ModelSpec
    tp: int = Field(default=1, ge=1, le=MAX_GPUS)
    pp: int = Field(default=1, ge=1, le=MAX_GPUS)
    ep: int = Field(default=1, ge=1, le=MAX_GPUS)
    batch: int = Field(default=1, ge=1, le=10_000_000)
    prompt_tokens: int = Field(default=1, ge=1, le=100_000_000)
    output_tokens: int = Field(default=1, ge=1, le=100_000_000)
    act_dtype: DType = DType.BF16
    kv_dtype: DType = DType.BF16
    weights_dtype: DType = DType.BF16
    disaggregated: bool = False
    kv_nics: int | None = Field(default=None, ge=1, le=MAX_NICS_PER_NODE)
    #: one GPU's memory in bytes, over the system preset's (None: the preset's, if it states one)
    gpu_memory_bytes: float | None = Field(
        default=None, ge=MIN_GPU_MEMORY_BYTES, le=MAX_GPU_MEMORY_BYTES
    )

    @property
    def gpus(self) -> int:
        """GPUs of one serving instance: tp x ep x pp."""
        return self.tp * self.ep * self.pp


class InferResult(BaseModel):
    """Phases per token and per request, totals, the dominant tier, warnings and assumptions."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: InferSpec
    phases: list[Phase]
    per_token_s: float
    per_request_s: float
    #: the sums of the phases' likely ranges (their errors taken as going the same way: a
    #: model that is slow on one collective of a cluster is slow on its others); None when a
    #: phase has no range
    per_token_s_range: tuple[float, float] | None = None
    per_request_s_range: tuple[float, float] | None = None
    kv_bytes_per_token: float | None
    kv_bytes_per_request: float | None
    memory: ServingMemory
    tier_s: dict[str, float]
    dominant_tier: str | None
    warnings: list[str]
    assumptions: list[str]


def _kv_placement(
    catalogue: Catalogue, cluster: ResolvedCluster, nics: int, senders: int, ship: str = ""
) -> Placement:
    """One of ``senders`` GPU pairs (prefill node -> decode node) with its share of ``nics``.

    The senders ship their parts of the cache at once, each through its own NIC share: the
    engine's point-to-point model runs one GPU's transfer over one path, so the cache is split
    over the GPUs that hold it rather than striped by one GPU over every NIC. ``ship`` says
    what each sends (default: an even share).
    """
    inter = _inter_id(cluster)
    per_sender = nics / senders
    spec = ClusterSpec(
        nodes=2,
        gpus_per_node=1,
        nics_per_node=1,
        inter=inter,
        system=cluster.system.id
        if cluster.system and cluster.system.scale_up_domain == cluster.gpus_per_node
        else None,
        host_pcie=cluster.host_pcie.id if cluster.host_pcie else None,
        # the transfer crosses the same leaves as the instances' own traffic does
        oversubscription=cluster.spec.oversubscription,
        cross_leaf_fraction=cluster.spec.cross_leaf_fraction,
        neighbour_cross_leaf_fraction=cluster.spec.neighbour_cross_leaf_fraction,
        unaligned_cross_leaf_fraction=cluster.spec.unaligned_cross_leaf_fraction,
    )
    one = resolve_cluster(catalogue, spec)
    # the sender's share of NICs as one path (the engine's point-to-point model sends one
    # GPU's transfer over one path), and never faster than the GPU's own PCIe link to them
    assert one.topology.out is not None
    nic_Bps = one.topology.out.nic_bw_Bps
    path_Bps = nic_Bps * per_sender
    capped = ""
    if cluster.host_pcie is not None and path_Bps > cluster.host_pcie.achievable_Bps:
        path_Bps = cluster.host_pcie.achievable_Bps
        capped = (
            f", capped by the GPU's {cluster.host_pcie.id} link at {fixed(path_Bps / 1e9, 1)} GB/s"
        )
    sub = inherit(cluster, one, nic_scale=path_Bps / nic_Bps)
    notes = [
        "KV cache sent from the prefill instance to the decode instance: "
        + (
            ship
            or (
                f"{senders} GPUs each ship 1/{senders} of it" if senders > 1 else "one GPU ships it"
            )
        )
        + f" through {per_sender:g} x {inter}"
        + (" at the same time" if senders > 1 else "")
        + f" ({nics} NIC"
        + ("s" if nics != 1 else "")
        + f"{capped})"
    ]
    return Placement(sub, "scale-out", 1, 2, notes)


def disaggregated_nodes(gpus: int, gpus_per_node: int) -> int:
    """Nodes disaggregated serving needs: a prefill instance and a decode instance of ``gpus``
    GPUs each, on nodes of their own (the KV cache crosses the network between them)."""
    return 2 * -(-gpus // gpus_per_node)


def _nodes_needed(gpus: int, gpus_per_node: int, *, disaggregated: bool) -> int:
    """Nodes one instance of ``gpus`` GPUs takes, or two on nodes of their own."""
    if disaggregated:
        return disaggregated_nodes(gpus, gpus_per_node)
    return -(-gpus // gpus_per_node)


def _whole_domains(probe: ResolvedCluster, nodes: int) -> tuple[int, int]:
    """``nodes`` raised to whole scale-up domains, and the nodes of one (0 where not raised):
    where the preset's NVLink domain spans nodes and ``nodes`` is more than one domain but not
    whole ones, as the cluster asks (an instance of 128 GPUs on gb200-nvl72 had been given 32
    trays, which the cluster refused as not filling whole 18-tray racks, telling the user, who
    had given no node count, to give another)."""
    system, spec = probe.system, probe.spec
    if system is None or spec.gpus_per_node not in (None, system.gpus_per_node):
        return nodes, 0
    per = (spec.scale_up_domain or system.scale_up_domain) // probe.gpus_per_node
    if per <= 1 or nodes <= per or nodes % per == 0:
        return nodes, 0
    return -(-nodes // per) * per, per


def serving_cluster(
    catalogue: Catalogue, spec: ClusterSpec, gpus: int, *, disaggregated: bool = False
) -> ResolvedCluster:
    """The cluster ``spec`` describes; without its node count, just enough nodes for ``gpus``
    GPUs (one serving instance; at least the preset's own node count), or for two instances on
    nodes of their own when ``disaggregated`` (:func:`disaggregated_nodes`). A one-GPU instance
    runs no collective, so a one-GPU cluster (an L40S) serves it."""
    expect_catalogue_and_spec(catalogue, spec)
    collectives = gpus > 1 or disaggregated
    if spec.nodes is not None:
        # too few nodes for the instance: the cluster as given, and infer() names what is
        # missing (--nodes 1 on an L40S had been told 'a collective needs at least 2 GPUs',
        # where a DGX H100 is told the instance's GPUs or the nodes disaggregation needs,
        # review BH)
        given = resolve_cluster(catalogue, spec, collectives=False)
        needed = _nodes_needed(gpus, given.gpus_per_node, disaggregated=disaggregated)
        if given.nodes < needed:
            unjoinable = given.system is not None and given.system.inter is None
            fits = needed * given.gpus_per_node <= MAX_GPUS  # (--pp 600000: no probe, BJ)
            if needed > 1 and unjoinable and spec.inter is None and fits:
                # no node count joins nodes without a NIC: say that first (it had asked for
                # --nodes 4, then named the missing NIC, review BI)
                resolve_cluster(catalogue, spec.replace(nodes=needed), collectives=True)
            return given
        return resolve_cluster(catalogue, spec, collectives=collectives)
    # the probe only reads the node's shape: the nodes the instance (or the two, disaggregated)
    # need are resolved below (a one-GPU node had been told to add GPUs, where its missing NIC
    # is the blocker: reviews, disaggregated and then --tp 2 on an L40S)
    probe = resolve_cluster(catalogue, spec, collectives=False)
    needed = _nodes_needed(gpus, probe.gpus_per_node, disaggregated=disaggregated)
    needed, domain_nodes = _whole_domains(probe, needed)
    if needed * probe.gpus_per_node > MAX_GPUS:
        # past the GPU limit infer() says the instance is too big (a node count nobody gave had
        # been called out of range, review BK)
        return probe
    if needed * probe.gpus_per_node >= 2 and needed != probe.nodes:
        cluster = resolve_cluster(catalogue, spec.replace(nodes=needed))
        why = (
            f"a prefill and a decode instance of {plural(gpus, 'GPU')}, each on nodes of its own"
            if disaggregated
            else f"one instance of {plural(gpus, 'GPU')}"
        ) + (
            f", in whole scale-up domains of {domain_nodes} nodes ({probe.system.id})"
            if domain_nodes and probe.system is not None
            else ""
        )
        return dataclasses.replace(
            cluster,
            assumptions=(
                f"{plural(needed, 'node')} assumed ({{nodes}}): {why}",
                *cluster.assumptions,
            ),
        )
    if collectives:  # the probe's node count is the one needed: resolved to cost collectives
        return resolve_cluster(catalogue, spec, collectives=True)
    return probe


def _check_disaggregated_nodes(spec: InferSpec, cluster: ResolvedCluster) -> None:
    """Refuse a disaggregated serving whose prefill and decode instances do not each get nodes
    of their own in ``cluster``: the KV transfer crosses the scale-out fabric between them."""
    needed = disaggregated_nodes(spec.gpus, cluster.gpus_per_node)
    if cluster.nodes < needed:
        each = (
            "" if needed == 2 else f": each instance of {spec.gpus} GPUs takes {needed // 2} nodes"
        )
        raise WorkloadError(
            "{disaggregated} puts prefill and decode on different nodes"
            + each
            + f", and the cluster has {plural(cluster.nodes, 'node')}: give {{nodes}} "
            f"{needed} or more",
            field="disaggregated",
        )


def infer(
    catalogue: Catalogue,
    cluster: ResolvedCluster,
    spec: InferSpec,
    *,
    params: CostParams | None = None,
) -> InferResult:
    """Communication per token and per request of serving ``spec`` on ``cluster``'s nodes.

    The cluster gives the node shape and links; one serving instance uses tp x ep x pp of its
    GPUs. Raises :class:`~ibcalc.errors.WorkloadError` naming the field at fault.
    """
    # a ClusterSpec had raised AttributeError at tp 1 ('no attribute ranks': a review)
    expect_type(cluster, ResolvedCluster, "cluster", "serving_cluster(catalogue, spec, gpus)")
    expect_job(catalogue, spec, InferSpec)
    model = spec.model
    # what the cluster lacks first: a cluster too small had been resolved for no collective
    # and refused as such (review BH)
    if spec.gpus > cluster.ranks:
        raise WorkloadError(
            f"tp x ep x pp = {spec.gpus} GPUs is more than the cluster's {cluster.ranks} "
            "({nodes})",
            field="nodes",
        )
    if spec.disaggregated:
        _check_disaggregated_nodes(spec, cluster)
    if spec.gpus > 1 or spec.disaggregated:
        require_collectives(cluster)  # a one-GPU instance runs none
    model.check_stages(spec.pp)
    model.check_experts(spec.ep)
    model.check_context(spec.prompt_tokens, spec.output_tokens)
    act = spec.act_dtype.bytes
    phases: list[Phase] = []
    warnings: list[str] = [*model.tp_warnings(spec.tp), *model.shape_warnings()]
    notes: list[str] = [
        "communication only: the compute of each token (weight and KV-cache reads) is not included"
    ]
    fp8_phases = [
        what
        for what, present in (
            (f"the tensor-parallel all-reduces as {spec.act_dtype.value} sums", spec.tp > 1),
            ("the expert all-to-alls' dispatch and combine", spec.ep > 1),
            ("the pipeline sends", spec.pp > 1),
        )
        if present
    ]
    if spec.act_dtype.is_fp8 and fp8_phases:
        # review BV: the fp8 sum had gone unsaid, where training refuses to price one; review
        # BW: every phase's messages are fp8, not the TP all-reduces alone; review BX: only
        # the phases there are, and the KV transfer keeps its own type
        notes.append(
            f"{{act_dtype}} {spec.act_dtype.value}: the activations' messages are priced in "
            f"{spec.act_dtype.value}, half of bf16's bytes ({', '.join(fp8_phases)}"
            + ("; the KV transfer takes {kv_dtype}" if spec.disaggregated else "")
            + ")"
            + (
                "; DeepSeek-V3 dispatches in fp8 but combines in bf16 (arXiv:2412.19437, "
                "section 3.3, low-precision communication), a mix no option prices"
                if spec.ep > 1
                else ""
            )
            # reviews BZ and CA: the ending is said of the all-reduces alone
            + (
                "; a stack that quantises only its weights or KV cache ({weights_dtype}, "
                "{kv_dtype}) all-reduces in bf16, which --dtype bf16 prices"
                if spec.tp > 1
                else ""
            )
        )
    used = -(-spec.gpus // cluster.gpus_per_node)
    if spec.disaggregated:
        used = disaggregated_nodes(spec.gpus, cluster.gpus_per_node)
    if cluster.nodes > used:
        # the nodes given play no part (a review: 1, 3 and 64 nodes gave the same figures
        # without a word)
        notes.append(
            f"{'the two instances use' if spec.disaggregated else 'one instance uses'} "
            f"{used} of the {plural(cluster.nodes, 'node')} ({{nodes}}); the others would serve "
            "other instances, not modelled: the figures are "
            + ("one prefill and decode pair's" if spec.disaggregated else "one instance's")
        )
    layers = model.need("layers", "serving") if spec.tp > 1 or spec.ep > 1 else model.layers
    # the sequences one attention group decodes: the batch, split over the ep data-parallel
    # groups when experts are spread (module docstring)
    group_batch = -(-spec.batch // spec.ep)
    if spec.ep > 1:
        notes.append(
            f"attention is data-parallel over the ep {spec.ep} groups (as DeepSeek-V3 serves): "
            f"each decodes {plural(group_batch, 'sequence')} of the batch of {spec.batch}"
            + ("" if spec.tp == 1 else f", split over its {spec.tp} TP GPUs for the dispatch")
        )
        if spec.batch < spec.ep:
            warnings.append(
                f"batch {spec.batch} is smaller than ep {spec.ep}: "
                f"{plural(spec.ep - spec.batch, 'attention group')} "
                f"decode{'s' if spec.ep - spec.batch == 1 else ''} nothing"
            )
    if spec.tp > 1:
        hidden = model.need("hidden", "tensor parallelism")
        assert layers is not None
        tp_place = place_group(catalogue, cluster, "tp", spec.tp, 1, span=spec.gpus)
        if tp_place.crosses_domains:
            warnings.append(
                f"tp {spec.tp} crosses the {cluster.topology.m}-GPU scale-up domain: every "
                f"decode and prefill all-reduce goes over {tp_place.tier}"
            )
        phases += _decode_and_prefill(
            spec,
            tp_place,
            "tp-allreduce",
            Collective.ALL_REDUCE,
            hidden * act,
            count=2 * layers,
            params=params,
            note=f"2 per layer x {plural(layers, 'layer')}",
            decode_tokens=group_batch,
        )
    if spec.ep > 1:
        hidden = model.need("hidden", "expert parallelism")
        top_k = model.need("top_k", "expert parallelism")
        moe = model.moe_layer_count()
        phases += _decode_and_prefill(
            spec,
            place_group(catalogue, cluster, "ep", spec.ep, spec.tp, span=spec.gpus),
            "ep-alltoall",
            Collective.ALL_TO_ALL,
            top_k * hidden * act,
            count=2 * moe,
            params=params,
            note=f"dispatch and combine per MoE layer x {moe} MoE layers, top-{top_k}",
            decode_tokens=-(-group_batch // spec.tp),
            prefill_tokens=-(-spec.prompt_tokens // spec.tp),
        )
    if spec.pp > 1:
        hidden = model.need("hidden", "pipeline parallelism")
        # one batch crosses every stage boundary in turn: those inside a scale-up domain and
        # those across are priced each at their own placement, in their own phase
        boundaries = pipeline_boundaries(
            catalogue, cluster, spec.pp, spec.tp * spec.ep, span=spec.gpus
        )
        for placement, count in boundaries:
            where = "" if len(boundaries) == 1 else f" {placement.tier}"
            phases += _decode_and_prefill(
                spec,
                placement,
                "pp-sendrecv" + where.replace(" ", "-"),
                Collective.SEND_RECV,
                hidden * act,
                count=count,
                params=params,
                note=f"{count} of {spec.pp - 1}{where} stage boundar"
                f"{'ies' if spec.pp > 2 else 'y'}"
                + ("" if spec.tp == 1 else f", each TP GPU sending its 1/{spec.tp} slice"),
                decode_tokens=group_batch,
                tp_slices=spec.tp,
            )
    kv_token: float | None = None
    kv_request: float | None = None
    kv_missing = "layers"  # the model field the KV cache's size lacks
    if spec.disaggregated or model.layers is not None:
        try:
            kv_token = model.kv_bytes_per_token(spec.kv_dtype.bytes)
        except WorkloadError as exc:
            if spec.disaggregated:
                raise
            kv_missing = exc.field or kv_missing
        if kv_token is not None:
            kv_request = kv_token * spec.prompt_tokens
    if (
        kv_token is not None
        and model.kv_heads is None
        and model.kv_elements_per_layer is None
        and model.heads is not None
    ):
        # multi-head attention had been assumed unsaid: 8x the KV cache of a model that, like
        # Llama 3 70B, shares 8 key/value heads among 64 (said where a cache is counted)
        notes.append(
            f"key/value heads not given: {model.heads}, one per query head (multi-head "
            "attention), assumed for the KV cache; a grouped-query model has fewer "
            "({kv_heads}; Llama 3 70B has 8 for 64 heads)"
        )
    if spec.disaggregated:
        assert kv_request is not None
        nics = spec.kv_nics
        per_node = node_nics(cluster)
        # a TP group wider than a node (tp 8 on 4-GPU GB200 trays, tp 16 on DGX H100) holds its
        # cache on every node it spans, and ships it through all of their NICs
        group_nodes = -(-spec.tp // cluster.gpus_per_node)
        on_nodes = "a node" if group_nodes == 1 else f"the {group_nodes} nodes of one TP group"
        if nics is not None and nics > per_node * group_nodes:
            raise WorkloadError(
                f"{{kv_nics}} {nics} is more than the {plural(per_node * group_nodes, 'NIC')} of "
                + on_nodes,
                field="kv_nics",
                value=str(nics),
            )
        if nics is None:
            nics = _default_kv_nics(cluster, spec.tp)
            where = "on a node" if group_nodes == 1 else f"on its {group_nodes} nodes"
            share = per_node * spec.tp / cluster.gpus_per_node
            owner = "one GPU's" if spec.tp == 1 else f"the {spec.tp} GPUs'"
            of_node = f"the node's {plural(per_node, 'NIC')} among {cluster.gpus_per_node} GPUs"
            if share < 1:
                # rounded up to a whole NIC: one request's cache at a time (a review: 'one GPU's
                # share of 4 NICs' where 8 GPUs share them named a share it does not price)
                whose = f"a whole one, more than {owner} share of {of_node} ({share:g})"
            elif share != int(share):
                # 6 NICs among 8 GPUs: the 2 GPUs' 1.5 is rounded down to whole NICs (a review)
                whose = f"{owner} share of {of_node} ({share:g}), rounded down to whole NICs"
            elif spec.tp > 1:
                whose = f"the NICs of the {_gpus(spec.tp)} of one TP group {where}"
            else:
                whose = f"one GPU's share of its node's {plural(per_node, 'NIC')}"
            notes.append(
                f"the KV transfer uses {nics} NIC{'s' if nics != 1 else ''}: {whose} "
                "({kv_nics} to change)"
            )
        topo = cluster.topology
        if topo.nodes_per_domain > 1 and topo.m >= 2 * spec.gpus:
            notes.append(
                f"prefill and decode ({2 * spec.gpus} GPUs together) fit in one NVLink domain "
                "here; the KV cache is priced over the scale-out network all the same (a "
                "transfer over NVLink is not modelled)"
            )
        if spec.pp > 1:
            notes.append(
                f"the KV cache is priced as if one stage's GPUs held it all: with pp {spec.pp} "
                "on nodes of their own, the stages would ship their layers at once (up to "
                f"{spec.pp}x faster)"
            )
        senders = max(1, min(spec.tp, nics))
        kv_heads = model.kv_heads if model.kv_heads is not None else model.heads
        if senders > 1 and (model.kv_elements_per_layer is not None or kv_heads == 1):
            # MLA's latent serves every head, as one KV head does: each TP rank holds all of it,
            # so 1/senders from each is a choice of slices
            notes.append(
                "every TP rank holds this KV cache whole ("
                + (
                    "MLA's latent serves all heads"
                    if model.kv_elements_per_layer is not None
                    else "one KV head"
                )
                + f"): each of {senders} GPUs ships a different 1/{senders}, and the decode side "
                "gathers them over its scale-up links, which is not priced"
            )
        elif senders > 1 and kv_heads is not None and 1 < kv_heads < spec.tp:
            notes.append(
                f"{kv_heads} KV heads for tp {spec.tp}: each TP rank holds 1/{kv_heads} of the "
                f"KV cache, copied on {spec.tp // kv_heads} ranks; the {senders} senders ship "
                "distinct slices, and the decode side's copies are made over its scale-up links, "
                "which is not priced"
            )
        # each TP rank sends its own whole KV heads where there is a sender per rank: the
        # busiest, ceil(kv_heads / tp) heads, sets the time (tp 3 of 8 heads: 3/8, not 1/3);
        # fewer senders, a latent cache or copied heads are shipped in even slices
        even = (
            senders < spec.tp
            or model.kv_elements_per_layer is not None
            or kv_heads is None
            or kv_heads < spec.tp
        )
        share = senders if even else model.kv_split(spec.tp)
        busiest = "" if even or kv_heads is None else f"{-(-kv_heads // spec.tp)}"
        ship = (
            ""
            if even or share == senders
            else f"{senders} GPUs each ship their own KV heads, {busiest} of {kv_heads} on the "
            f"busiest ({busiest}/{kv_heads} of it)"
        )
        placement = _kv_placement(catalogue, cluster, nics, senders, ship)
        phases.append(
            build_phase(
                placement,
                "kv-transfer",
                Collective.SEND_RECV,
                kv_request / share,
                dtype=spec.kv_dtype,
                count=1,
                per="request",
                params=params,
                notes=[
                    f"{format_size(kv_token or 0)} per token x {spec.prompt_tokens} prompt "
                    f"tokens ({spec.kv_dtype.value})"
                ],
            )
        )
    per_token = sum(p.total_s for p in phases if p.per == "token")
    per_request_only = sum(p.total_s for p in phases if p.per == "request")
    per_request = per_request_only + spec.output_tokens * per_token
    per_token_range = _summed_range([p for p in phases if p.per == "token"])
    request_only_range = _summed_range([p for p in phases if p.per == "request"])
    per_request_range = (
        None
        if per_token_range is None or request_only_range is None
        else (
            request_only_range[0] + spec.output_tokens * per_token_range[0],
            request_only_range[1] + spec.output_tokens * per_token_range[1],
        )
    )
    tier_s: dict[str, float] = {}
    for p in phases:
        weight = spec.output_tokens if p.per == "token" else 1
        tier_s[p.tier] = tier_s.get(p.tier, 0.0) + p.total_s * weight
    dominant = max(tier_s, key=lambda t: tier_s[t]) if tier_s else None
    if not phases:
        notes.append("one GPU per instance and no disaggregation: no communication to cost")
    memory = _memory(spec, cluster, kv_token, kv_missing=kv_missing, warnings=warnings, notes=notes)
    return InferResult(
        spec=spec,
        phases=phases,
        per_token_s=per_token,
        per_request_s=per_request,
        per_token_s_range=per_token_range,
        per_request_s_range=per_request_range,
        kv_bytes_per_token=kv_token,
        kv_bytes_per_request=kv_request,
        memory=memory,
        tier_s=tier_s,
        dominant_tier=dominant,
        warnings=warnings,
        assumptions=[
            *notes,
            *_cluster_notes(cluster, phases, params),
            *cost_parameter_notes(params),
        ],
    )


def _memory(
    spec: InferSpec,
    cluster: ResolvedCluster,
    kv_token: float | None,
    *,
    kv_missing: str = "layers",
    warnings: list[str],
    notes: list[str],
) -> ServingMemory:
    """One GPU's weights and KV cache in a serving instance, against the GPU's memory.

    Weights: the busiest pipeline stage's ``ceil(L / pp)`` layers' share of ``P x bytes / tp``
    (the first stage with the input embedding, the last with the output layer), the routed
    experts over ``ep`` more. KV cache: ``ceil(batch / ep) x (prompt + output) x bytes per
    token`` (the sequences of one attention group) for the same layers, split over
    the busiest GPU's share of the KV heads (:meth:`~ibcalc.workload.model.ModelSpec.kv_split`:
    whole heads, ``ceil(kv_heads / tp)`` on the busiest; past kv_heads they are copied), and not
    split for a latent cache (MLA), which every tensor-parallel rank keeps whole. Every stage
    holds its group's cache for its own layers, so the busiest is the
    first unless a MoE model's dense layers come first and a later stage's experts weigh more
    (DeepSeek-V3 at pp > 1), or the output layer outweighs the embedding's stage."""
    model = spec.model
    split = model.kv_split(spec.tp)
    context = spec.prompt_tokens + spec.output_tokens
    best: tuple[float, float, float | None, int] | None = None  # (total, weights, kv, stage)
    for stage in busiest_candidates(model, spec.pp):
        layers, shared, routed, said = stage_params(
            model, tp=spec.tp, pp=spec.pp, ep=spec.ep, stage=stage
        )
        notes += said if not stage else ()
        weights = (shared + routed) * spec.weights_dtype.bytes
        kv: float | None = None
        if kv_token is not None:
            share = (
                sum(layers) / model.layers if layers is not None and model.layers else 1 / spec.pp
            )
            kv = -(-spec.batch // spec.ep) * context * kv_token * share / split
        total = weights + (kv or 0.0)
        if best is None or total > best[0]:
            best = (total, weights, kv, stage)
    assert best is not None
    _, weights, kv, stage = best
    if stage:
        notes.append(
            f"memory: pipeline stage {stage + 1} (of {spec.pp}) is the busiest: its weights and "
            "KV cache together outweigh the first stage's"
        )
    if kv is not None and spec.ep > 1:
        notes.append(
            f"memory: each of the ep {spec.ep} attention groups holds the KV cache of the "
            "sequences it decodes"
        )
    capacity, source = gpu_capacity(spec.gpu_memory_bytes, cluster.system)
    if (note := decimal_capacity_note(spec.gpu_memory_bytes)) is not None:
        notes.append(note)
    if kv is None:
        notes.append(f"memory: KV cache not counted (give {{{kv_missing}}})")
    memory = ServingMemory(
        weights_bytes=weights,
        kv_cache_bytes=kv,
        capacity_bytes=capacity,
        capacity_from=source,
        largest_bytes=(
            cluster.system.gpu_memory_largest_bytes
            if capacity is None and cluster.system is not None
            else None
        ),
    )
    judge_fit(
        memory,
        cluster.system,
        remedies=lambda: _memory_remedies(spec, weights, kv or 0.0),
        uncounted="CUDA context, NCCL buffers, activations, the serving engine's workspace",
        warnings=warnings,
        notes=notes,
    )
    return memory


#: The KV cache's share of a GPU's memory below which shrinking it is not offered as a remedy.
KV_REMEDY_SHARE = 0.1
#: The share of a GPU's memory fp8 weights must save to be offered as a remedy (a threshold
#: for what is worth saying, not a fit).
WEIGHTS_REMEDY_SAVING = 0.01


def _memory_remedies(spec: InferSpec, weights: float, kv: float) -> str:
    """What would shrink a serving instance's memory, of what it does not use yet: the
    batch and the KV cache's type only where the cache is a tenth of it or more (a batch of 1
    whose 86 MiB cache sat beside 91.6 GiB of DeepSeek-V3's weights had been told both), more
    ep for a mixture of experts."""
    model = spec.model
    kv_heads = model.kv_heads if model.kv_heads is not None else model.heads
    if model.kv_elements_per_layer is not None:
        tp = "more tp (for the weights: every rank keeps a latent KV cache whole) or pp"
    elif kv_heads is not None and spec.tp >= kv_heads:
        tp = f"more tp (for the weights: past {kv_heads} KV heads the cache is copied) or pp"
    else:
        tp = "more tp or pp"
    ways = [tp]
    if model.is_moe:
        ways.append("more {ep}")
    cache = kv >= KV_REMEDY_SHARE * (weights + kv)
    if cache and spec.batch > 1:
        ways.append("a smaller {batch}")
    # fp8 weights where they save a share of the memory worth saying: 16 GiB of weights beside
    # 382,000 GiB of cache had been told fp8 weights would help (a review); a tenth of the
    # memory halved clears an overrun of 5 % (a second review: a share rule had hidden it)
    saved = weights * (1 - 1 / spec.weights_dtype.bytes)
    if spec.weights_dtype.bytes > 1 and saved >= WEIGHTS_REMEDY_SAVING * (weights + kv):
        ways.append("fp8 weights ({weights_dtype})")
    if cache and spec.kv_dtype.bytes > 1:
        ways.append("an fp8 KV cache ({kv_dtype})")
    if len(ways) == 1:
        return f"{ways[0]} would shrink it"
    return ", ".join(ways[:-1]) + " or " + ways[-1] + " would shrink it"


def _cluster_notes(
    cluster: ResolvedCluster, phases: Sequence[Phase], params: CostParams | None
) -> list[str]:
    """The cluster's assumptions, without the two-node tree note where no all-reduce leaves a
    scale-up domain (tp inside each node, a KV transfer or stage send across), nor the note
    that the host options change no collective where a phase goes through the NICs (a
    disaggregated KV transfer inside one NVL72 rack: --host-pcie pcie3 made it 3.8x slower
    beside a note that it changed nothing, a review), and with what SHARP does for the
    all-reduces across the network, as train says it (:func:`sharp_step_notes`)."""
    reduced = [
        (p.name, p.estimate.best.algorithm, p.estimate.best.protocol, parse_dtype(p.estimate.dtype))
        for p in phases
        if p.collective is Collective.ALL_REDUCE and p.tier != "scale-up" and p.estimate
    ]
    across = bool(reduced)
    nics = any(p.tier != "scale-up" for p in phases)
    unused = (HOST_OPTIONS_UNUSED, NETWORK_OPTIONS_IGNORED, OVERSUBSCRIPTION_NOT_PRICED)
    a2a = any(p.inside_a_node for p in phases if p.collective is Collective.ALL_TO_ALL)
    notes = [
        n
        for n in cluster.assumptions
        if (across or n != TWO_NODE_TREE_NOTE)
        and not (nics and n.endswith(unused))
        and (a2a or n not in cluster.alltoall_notes)
    ]
    if any(p.collective is Collective.SEND_RECV and p.tier == "scale-up" for p in phases):
        # a partial mesh's pair rate (DGX-1), where a stage send or KV transfer runs on it
        notes += cluster.p2p_notes
    notes = sharp_step_notes(cluster, notes, reduced, params, of="of the run")
    spec = cluster.spec
    if nics and cluster.topology.domains == 1:
        # the KV transfer alone crosses the network, point to point: the taper and the NICs
        # act on it, SHARP and the host CPU's ring-step costs do not (--oversubscription 4
        # had read 'ignored' beside a 4x slower transfer, a review)
        taper = spec.oversubscription > 1
        idle = [
            flag
            for flag, given in (("{sharp}", spec.sharp), ("{host_cpu}", spec.host_cpu is not None))
            if given
        ]
        if not taper and (
            spec.cross_leaf_fraction != 1 or spec.neighbour_cross_leaf_fraction is not None
        ):
            # without a taper no share of the transfer crosses anything slower
            notes.append("cross-leaf shares change nothing here: the leaves are not tapered")
        if taper:
            # the transfer is neighbour traffic (a send/recv pair): its share is the
            # neighbour one where given, as the pricing takes it (Topology.contention)
            share = spec.neighbour_cross_leaf_fraction
            named = "{neighbour_cross_leaf_fraction}"
            if share is None:
                share, named = spec.cross_leaf_fraction, "{cross_leaf_fraction}"
            k = spec.oversubscription
            notes.append(
                f"oversubscription {format_oversubscription(k)} and {format_share(share)} of the "
                "KV transfer, the one phase through the NICs, crossing the tapered uplinks "
                f"({named}): "
                + (
                    f"x{format_slowdown(k * share)} slower (max(1, k x f))"
                    if k * share > 1
                    else f"not slowed (k x f = {k * share:.3g} <= 1)"
                )
            )
        if idle:
            notes.append(
                f"{', '.join(idle)} change{'s' if len(idle) == 1 else ''} nothing here: one "
                "scale-up domain, and the KV transfer, the one phase through the NICs, is "
                "point to point"
            )
    return notes


_PER_TOKEN: Per = "token"
_PER_REQUEST: Per = "request"


def _decode_and_prefill(
    spec: InferSpec,
    placement: Placement,
    stem: str,
    collective: Collective,
    bytes_per_token: int,
    *,
    count: int,
    params: CostParams | None,
    note: str,
    decode_tokens: int,
    prefill_tokens: int | None = None,
    tp_slices: int = 1,
) -> list[Phase]:
    """``decode-<stem>`` (``decode_tokens``: the tokens of a decode step each GPU sends, per
    token) and ``prefill-<stem>`` (``prefill_tokens``, by default the prompt's, once per
    request): the same collective of ``bytes_per_token`` per token, over ``tp_slices`` GPUs
    that each send a slice of it (a stage's send: Narayanan et al. 2021, section 4.1)."""
    return [
        build_phase(
            placement,
            f"{when}-{stem}",
            collective,
            float(tokens * bytes_per_token) / tp_slices,
            dtype=spec.act_dtype,
            count=count,
            per=per,
            params=params,
            notes=[f"{note}; {tokens} token{'s' if tokens != 1 else ''}"],
        )
        for when, tokens, per in (
            ("decode", decode_tokens, _PER_TOKEN),
            ("prefill", prefill_tokens or spec.prompt_tokens, _PER_REQUEST),
        )
    ]


def _summed_range(phases: Sequence[Phase]) -> tuple[float, float] | None:
    """The sum of the phases' likely ranges (0 for none), or None when one has no range."""
    ranges = [p.total_s_range for p in phases]
    if any(r is None for r in ranges):
        return None
    return (sum(r[0] for r in ranges if r), sum(r[1] for r in ranges if r))


def _gpus(count: int) -> str:
    return "one GPU" if count == 1 else f"{count} GPUs"


def _inter_id(cluster: ResolvedCluster) -> str:
    """The scale-out link between nodes: the cluster's, else on one scale-up domain the one
    named or its preset's, the link whose NICs ``node_nics`` counts (the preset's link had been
    priced with the named link's NIC count)."""
    if cluster.inter is not None:
        return cluster.inter.id
    if cluster.node_nics_link is not None:
        return cluster.node_nics_link
    raise WorkloadError(
        "moving the KV cache between nodes needs a scale-out link ({inter})", field="inter"
    )


def _default_kv_nics(cluster: ResolvedCluster, tp: int) -> int:
    """NICs of one TP group's GPUs, on one node or on every node the group spans:
    nics_per_node x tp / gpn, >= 1."""
    return max(1, node_nics(cluster) * tp // cluster.gpus_per_node)
