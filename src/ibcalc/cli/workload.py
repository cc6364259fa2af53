"""The workload commands: ``train``, ``infer`` and ``checkpoint`` (docs/workload.md).

Each parses its options into library objects (a :class:`~ibcalc.workload.model.ModelSpec`, a
:class:`~ibcalc.cluster.spec.ClusterSpec` from the shared cluster options, or ``--design``),
resolves the cluster for the job and costs it (:mod:`ibcalc.workload`), and hands the result to
:mod:`ibcalc.render.workload`. Errors go through the CLI's one boundary (:func:`guard`).
"""

from __future__ import annotations

import math
from collections import Counter
from enum import StrEnum
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from ibcalc.cli.boundary import FIELD_FLAGS, CliUsageError, as_typed, guard
from ibcalc.cli.numbers import (
    field_count,
    field_number,
    field_range,
    measured,
    measured_option,
    range_words,
)
from ibcalc.cli.options import (
    FORMAT_TABLE,
    CatalogueOpt,
    CostParamsOpt,
    DesignOpt,
    FormatOpt,
    catalogue_of,
    cluster_options,
    design_cluster,
    design_error_names,
    params_of,
)
from ibcalc.cluster.resolve import catalogue_override_notes, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import DType
from ibcalc.errors import FieldError, fill_fields
from ibcalc.facade import cost_parameter_notes
from ibcalc.render.workload import render_checkpoint, render_compare, render_infer, render_train
from ibcalc.textsafe import shown
from ibcalc.units import (
    format_bandwidth,
    format_size,
    format_time,
    parse_bandwidth,
    parse_count,
    parse_size,
    parse_time,
    plural,
)
from ibcalc.workload.checkpoint import UNREAD_FIELDS, CheckpointSpec, checkpoint
from ibcalc.workload.infer import InferSpec, disaggregated_nodes, infer, serving_cluster
from ibcalc.workload.memory import Recompute
from ibcalc.workload.model import MAX_PARAMS, MIN_PARAMS, TOO_FEW_PARAMS, ModelSpec, model_from
from ibcalc.workload.train import (
    Parallelism,
    TrainSpec,
    compare_layouts,
    fit_cluster,
    train_step,
)

__all__ = ["GradDtype", "WireDtype", "register"]

#: The cluster options of ``infer`` and ``checkpoint``: one site's nodes, links and fabric (the
#: assumptions name them: "enable with --sharp").
NODE_FIELDS = (
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "intra",
    "inter",
    "system",
    "host_pcie",
    "host_cpu",
    "sharp",
    "nvls",
    "scale_up_domain",
    "oversubscription",
    "cross_leaf_fraction",
    "neighbour_cross_leaf_fraction",
    "unaligned_cross_leaf_fraction",
    "leaf_group_nodes",
)
#: The cluster fields a checkpoint does not read: laid over a design, never refused as a clash
#: with it, and named as ignored (the node fields among them are refused with --design anyway).
CHECKPOINT_UNREAD = frozenset(UNREAD_FIELDS)
#: The cluster options of ``train``: those, and the sites with their WAN.
TRAIN_FIELDS = (*NODE_FIELDS, "sites", "wan", "wan_links", "wan_latency_s")


class GradDtype(StrEnum):
    """Gradient element types on the wire (int8: compressed, 1-bit Adam / ZeRO++ style)."""

    FP32 = DType.FP32.value
    BF16 = DType.BF16.value
    FP16 = DType.FP16.value
    FP8 = DType.FP8.value
    INT8 = DType.INT8.value


class WireDtype(StrEnum):
    """Activation, weight and KV-cache element types."""

    FP32 = DType.FP32.value
    BF16 = DType.BF16.value
    FP16 = DType.FP16.value
    FP8 = DType.FP8.value


def _flag(field: str) -> str:
    return FIELD_FLAGS[field]


def _count(flag: str, model: type[BaseModel], field: str, what: str, note: str = "") -> Any:
    """The option ``flag`` of the count ``field`` of ``model``, read in the field's range,
    which its help states after ``what``, before ``note``: ``Micro-batches per step
    (1..1000000; default: pp).``, as the cluster options' help does (click's ``x>=1`` had
    hidden the upper bound)."""
    words = range_words(*field_range(model, field))
    stated = f"{words}; {note}" if note else words
    return typer.Option(flag, help=f"{what} ({stated}).", parser=field_count(model, field))


def _degree(field: str, what: str, note: str = "") -> Any:
    """The option of a parallel degree, named by its field's flag; its range is the layout's
    (a serving layout's, InferSpec's, is the same: 1 to MAX_GPUS)."""
    return _count(_flag(field), Parallelism, field, what, note)


def _shape(field: str, what: str, note: str = "") -> Any:
    """The option of a model's shape (layers, heads ...), in its ModelSpec range."""
    return _count(_flag(field), ModelSpec, field, what, note)


# --- the model --------------------------------------------------------------------------------

ModelOpt = Annotated[
    str | None,
    typer.Option(
        _flag("model"), help="Model preset: llama3-8b/70b/405b, mixtral-8x7b, deepseek-v3."
    ),
]
ParamsOpt = Annotated[
    str | None,
    typer.Option(_flag("params"), help="Parameter count, e.g. 70B (overrides --model's)."),
]
LayersOpt = Annotated[int | None, _shape("layers", "Transformer layers")]
HiddenOpt = Annotated[int | None, _shape("hidden", "Hidden (model) dimension")]
HeadsOpt = Annotated[int | None, _shape("heads", "Attention heads")]
KvHeadsOpt = Annotated[int | None, _shape("kv_heads", "Key/value heads, GQA")]
HeadDimOpt = Annotated[int | None, _shape("head_dim", "Head dimension")]
# a training step's sequence (TrainSpec's range), not the model's context
SeqOpt = Annotated[
    int | None,
    _count(_flag("seq_len"), TrainSpec, "seq_len", "Sequence length in tokens"),
]
ExpertsOpt = Annotated[int | None, _shape("experts", "Routed experts, MoE")]
TopKOpt = Annotated[int | None, _shape("top_k", "Experts per token, MoE")]
VocabOpt = Annotated[
    int | None, _shape("vocab", "Vocabulary", "embedding and output layer rows; memory")
]

GpuMemoryOpt = Annotated[
    str | None,
    typer.Option(
        _flag("gpu_memory"),
        help="One GPU's memory, e.g. 80GiB (a vendor's 80GB of HBM is 80 GiB; default: the "
        "system preset's).",
    ),
]


def _gpu_memory(value: str | None) -> float | None:
    """``--gpu-memory`` in bytes; a bare number is refused (80 or 8e10: GiB, GB or bytes?), and
    so is a capacity out of a job's range (TrainSpec's, InferSpec's: the same), as typed."""
    if value is None:
        return None
    try:
        bare = math.isfinite(float(value))
    except ValueError:
        bare = False
    if bare:
        raise CliUsageError(
            f"{_flag('gpu_memory')} {shown(value)} has no unit: write e.g. 80GiB (a vendor's "
            "80GB of HBM is 80 GiB)"
        )
    # a capacity, not a buffer: 79.6GiB (what an H100 shows) need not be whole bytes; zero is
    # refused with 1B, by the least capacity the model takes ("at least 1 GB")
    capacity = parse_size(value, what=_flag("gpu_memory"), whole=False, allow_zero=True)
    return measured(
        _flag("gpu_memory"),
        value,
        capacity,
        field=(TrainSpec, "gpu_memory_bytes"),
        show=format_size,
    )


def _params(value: str | None) -> float | None:
    """``--params`` as a count, refused in the option's name (the library says 'parameter
    count', which no option is called) and as typed ('--params 350K' had been echoed as 350000)."""
    if value is None:
        return None
    count = parse_count(value, what=_flag("params"), limit=MAX_PARAMS)
    if count < MIN_PARAMS:
        raise CliUsageError(f"{_flag('params')} {shown(value)} {TOO_FEW_PARAMS}")
    return count


def _time(value: float) -> str:
    """A time bound as a refusal states it: in whole seconds from an hour up, where the hours
    would round past it (1e6 s read 'at most 278 h', and '278h' was refused under it: review
    EI 2)."""
    if value >= 3600 and float(value).is_integer():
        return f"{int(value)} s"
    return format_time(value, zeros=False)


TpOpt = Annotated[int, _degree("tp", "Tensor-parallel degree")]
PpOpt = Annotated[int, _degree("pp", "Pipeline-parallel degree")]


# --- commands ---------------------------------------------------------------------------------


@guard
@cluster_options(*TRAIN_FIELDS)
def train_command(
    *,
    model: ModelOpt = None,
    params: ParamsOpt = None,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    seq_len: SeqOpt = None,
    experts: ExpertsOpt = None,
    top_k: TopKOpt = None,
    vocab: VocabOpt = None,
    micro_batch: Annotated[
        int,
        _count("--micro-batch", TrainSpec, "micro_batch", "Sequences per micro-batch"),
    ] = 1,
    microbatches: Annotated[
        int | None,
        _count(
            "--microbatches",
            TrainSpec,
            "microbatches",
            "Micro-batches per step",
            "default: pp",
        ),
    ] = None,
    global_batch: Annotated[
        int | None,
        _count(
            "--global-batch",
            TrainSpec,
            "global_batch",
            "Sequences per step over all DP ranks",
            "sets the micro-batches per step",
        ),
    ] = None,
    tp: TpOpt = 1,
    pp: PpOpt = 1,
    virtual_stages: Annotated[
        int,
        _count(
            _flag("virtual_stages"),
            TrainSpec,
            "virtual_stages",
            "Model chunks per pipeline stage",
            "above 1, interleaved 1F1B: Megatron's virtual pipeline",
        ),
    ] = 1,
    dp: Annotated[
        int | None, _degree("dp", "Data-parallel degree", "default: the rest of the GPUs")
    ] = None,
    ep: Annotated[int, _degree("ep", "Expert-parallel degree", "out of dp; MoE")] = 1,
    cp: Annotated[int, _degree("cp", "Context-parallel degree")] = 1,
    zero: Annotated[
        int,
        _count("--zero", TrainSpec, "zero", "ZeRO stage", "0: plain DP"),
    ] = 0,
    fsdp: Annotated[bool, typer.Option("--fsdp", help="Fully sharded (= --zero 3).")] = False,
    grad_dtype: Annotated[
        GradDtype, typer.Option("--grad-dtype", help="Gradients on the wire.", case_sensitive=False)
    ] = GradDtype.BF16,
    sequence_parallel: Annotated[
        bool,
        typer.Option(
            "--sequence-parallel", help="TP as reduce-scatter + all-gather (Megatron SP)."
        ),
    ] = False,
    hierarchical: Annotated[
        bool,
        typer.Option("--hierarchical", help="Across sites: reduce within each site first."),
    ] = False,
    backward_time: Annotated[
        str | None,
        typer.Option(
            "--backward-time",
            help="Backward compute per step, e.g. 2s (for overlap); as measured with the "
            "--recompute given (full recompute's forward pass included).",
        ),
    ] = None,
    tflops: Annotated[
        float | None,
        typer.Option(
            "--tflops",
            help="Achieved TFLOP/s per GPU on the FLOPs counted: 6 x active params (less the "
            "input embedding, a lookup) x tokens plus the attention's 12 x layers x heads x "
            "head dim x context per token (PaLM's model FLOPs); 8/6 of that with --recompute "
            "full, which runs the forward again.",
            parser=field_number(TrainSpec, "tflops"),
        ),
    ] = None,
    recompute: Annotated[
        Recompute,
        typer.Option(
            _flag("recompute"),
            help="Activations recomputed in the backward pass: none, selective (attention "
            "scores, as FlashAttention) or full (each layer's input only; its forward, and the "
            "forward's TP, CP and EP collectives, run again in the backward).",
            case_sensitive=False,
        ),
    ] = Recompute.SELECTIVE,
    gpu_memory: GpuMemoryOpt = None,
    compare: Annotated[
        bool,
        typer.Option("--compare", help="Rank every (tp, pp, dp[, ep]) layout of the GPUs."),
    ] = False,
    cluster: ClusterSpec,
    design: DesignOpt = None,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """One training step: communication per parallel dimension, overlap, GPU memory, warnings."""
    if fsdp and zero not in (0, 3):
        raise CliUsageError(f"--fsdp is ZeRO stage 3; it contradicts --zero {zero}")
    if backward_time is not None and tflops is not None:
        raise CliUsageError("give --backward-time or --tflops, not both")
    if compare:
        given = [_flag(f) for f, v in (("tp", tp), ("pp", pp), ("ep", ep)) if v != 1]
        given += [_flag("dp")] if dp is not None else []
        if given:
            raise CliUsageError(f"--compare tries every layout; drop {', '.join(given)}")
    spec_model = model_from(
        model,
        params=_params(params),
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        experts=experts,
        top_k=top_k,
        vocab=vocab,
    )
    cat = catalogue_of(catalogue)
    cost = params_of(cost_params)
    spec, names = design_cluster(cluster, design, cat)
    if compare and spec.nodes is None:
        raise CliUsageError("--compare needs the GPU count: give --nodes (or --design)")
    try:
        resolved, layout = fit_cluster(cat, spec, tp=tp, pp=pp, dp=dp, ep=ep, cp=cp)
    except FieldError as exc:
        # a design's nodes are the file's, not --nodes (which --design refuses)
        said = exc.render(as_typed(design_error_names(names, design)))
        raise FieldError(said, field=exc.field, value=exc.value, others=exc.others) from None
    job = TrainSpec(
        model=spec_model,
        parallel=layout,
        zero=3 if fsdp else zero,
        grad_dtype=DType(grad_dtype.value),
        micro_batch=micro_batch,
        seq_len=seq_len,
        microbatches=microbatches,
        global_batch=global_batch,
        virtual_stages=virtual_stages,
        sequence_parallel=sequence_parallel,
        hierarchical=hierarchical,
        backward_s=measured_option(
            "--backward-time",
            backward_time,
            lambda raw: parse_time(
                raw, allow_zero=False, unit_required=True, what="--backward-time"
            ),
            field=(TrainSpec, "backward_s"),
            show=_time,
        ),
        tflops=tflops,
        recompute=recompute,
        gpu_memory_bytes=_gpu_memory(gpu_memory),
    )
    if compare:
        results, skipped = compare_layouts(cat, resolved, job, params=cost)
        if not results:
            # one refusal, not 'no valid layout' and exit 0 over a list of the same reason
            reasons = Counter(line.split(": ", 1)[-1] for line in skipped)
            reason, count = reasons.most_common(1)[0] if reasons else ("none was tried", 0)
            share = "" if count == len(skipped) else f" ({count} of them)"
            raise CliUsageError(
                f"no layout of the {len(skipped)} tried is valid{share}: "
                + fill_fields(reason, names)
            )
        overrides = catalogue_override_notes(cat) + cost_parameter_notes(cost)
        render_compare(results, skipped, fmt, names=names, overrides=overrides)
        return
    render_train(train_step(cat, resolved, job, params=cost), fmt, names=names)


@guard
@cluster_options(*NODE_FIELDS)
def infer_command(
    *,
    model: ModelOpt = None,
    params: ParamsOpt = None,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    head_dim: HeadDimOpt = None,
    experts: ExpertsOpt = None,
    top_k: TopKOpt = None,
    vocab: VocabOpt = None,
    tp: TpOpt = 1,
    pp: PpOpt = 1,
    ep: Annotated[int, _degree("ep", "Expert-parallel degree", "MoE")] = 1,
    batch: Annotated[
        int,
        _count("--batch", InferSpec, "batch", "Sequences decoded together", "tokens per step"),
    ] = 1,
    prompt: Annotated[
        int,
        _count("--prompt", InferSpec, "prompt_tokens", "Prompt length in tokens"),
    ] = 1024,
    output_tokens: Annotated[
        int,
        _count("--output-tokens", InferSpec, "output_tokens", "Tokens generated per request"),
    ] = 256,
    dtype: Annotated[
        WireDtype, typer.Option("--dtype", help="Activation element type.", case_sensitive=False)
    ] = WireDtype.BF16,
    kv_dtype: Annotated[
        WireDtype, typer.Option("--kv-dtype", help="KV-cache element type.", case_sensitive=False)
    ] = WireDtype.BF16,
    weights_dtype: Annotated[
        WireDtype,
        typer.Option(
            "--weights-dtype", help="Weight element type (memory per GPU).", case_sensitive=False
        ),
    ] = WireDtype.BF16,
    gpu_memory: GpuMemoryOpt = None,
    disaggregated: Annotated[
        bool,
        typer.Option("--disaggregated", help="Prefill and decode on different nodes."),
    ] = False,
    kv_nics: Annotated[
        int | None,
        _count("--kv-nics", InferSpec, "kv_nics", "NICs the KV-cache transfer may use"),
    ] = None,
    cluster: ClusterSpec,
    design: DesignOpt = None,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """Serving a model: communication per generated token and per request, and GPU memory."""
    if kv_nics is not None and not disaggregated:
        raise CliUsageError("--kv-nics applies to --disaggregated serving")
    job = InferSpec(
        model=model_from(
            model,
            params=_params(params),
            layers=layers,
            hidden=hidden,
            heads=heads,
            kv_heads=kv_heads,
            head_dim=head_dim,
            experts=experts,
            top_k=top_k,
            vocab=vocab,
        ),
        tp=tp,
        pp=pp,
        ep=ep,
        batch=batch,
        prompt_tokens=prompt,
        output_tokens=output_tokens,
        act_dtype=DType(dtype.value),
        kv_dtype=DType(kv_dtype.value),
        weights_dtype=DType(weights_dtype.value),
        gpu_memory_bytes=_gpu_memory(gpu_memory),
        disaggregated=disaggregated,
        kv_nics=kv_nics,
    )
    cat = catalogue_of(catalogue)
    spec, names = design_cluster(cluster, design, cat)
    resolved = serving_cluster(cat, spec, job.gpus, disaggregated=disaggregated)
    needed = disaggregated_nodes(job.gpus, resolved.gpus_per_node)
    if design is not None and disaggregated and resolved.nodes < needed:
        # --nodes cannot go with --design: the file's own key is what to change
        raise CliUsageError(
            "--disaggregated puts prefill and decode on different nodes, and the design has "
            f"{plural(resolved.nodes, 'node')}: set its nodes: key to {needed} or more"
        )
    render_infer(
        infer(cat, resolved, job, params=params_of(cost_params)),
        fmt,
        names=names,
    )


@guard
@cluster_options(*NODE_FIELDS)
def checkpoint_command(
    *,
    storage: Annotated[
        str,
        typer.Option(_flag("storage"), help="Storage id: nvmeof-target, ddn-ai400x2, aws-s3 ..."),
    ],
    model: ModelOpt = None,
    params: ParamsOpt = None,
    weights_dtype: Annotated[
        WireDtype,
        typer.Option(
            "--weights-dtype", help="Weight element type in the checkpoint.", case_sensitive=False
        ),
    ] = WireDtype.BF16,
    optimizer: Annotated[
        bool,
        typer.Option(
            "--optimizer/--no-optimizer",
            help="Include Adam state (12 B/param; 8 with fp32 weights).",
        ),
    ] = False,
    storage_units: Annotated[
        int,
        _count("--storage-units", CheckpointSpec, "storage_units", "Targets or appliances"),
    ] = 1,
    storage_link: Annotated[
        str | None,
        typer.Option(_flag("client_link"), help="Client NIC link id (default: the cluster's)."),
    ] = None,
    storage_nics: Annotated[
        int,
        _count("--storage-nics", CheckpointSpec, "client_nics", "Storage NICs per node"),
    ] = 1,
    storage_fabric: Annotated[
        str | None,
        typer.Option("--storage-fabric", help="Fabric bandwidth to storage, e.g. 1.6TB/s."),
    ] = None,
    replicas: Annotated[
        int,
        _count(
            "--replicas",
            CheckpointSpec,
            "replicas",
            "Data-parallel replicas reading the weights back",
        ),
    ] = 1,
    part_size: Annotated[
        str | None,
        typer.Option(
            "--part-size",
            help="Object-store part size (default 16MB, raised to fit the store's parts per "
            "upload).",
        ),
    ] = None,
    prefixes: Annotated[
        int | None,
        _count(
            "--prefixes",
            CheckpointSpec,
            "prefixes",
            "Object-store prefixes written in parallel",
            "default 1",
        ),
    ] = None,
    cluster: ClusterSpec,
    design: DesignOpt = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """Save and restore time of a checkpoint, and which bound sets it."""
    job = CheckpointSpec(
        model=model_from(model, params=_params(params)),
        storage=storage,
        weights_dtype=DType(weights_dtype.value),
        optimizer=optimizer,
        storage_units=storage_units,
        client_link=storage_link,
        client_nics=storage_nics,
        replicas=replicas,
        fabric_Bps=measured_option(
            "--storage-fabric",
            storage_fabric,
            lambda raw: parse_bandwidth(raw, what="--storage-fabric"),
            field=(CheckpointSpec, "fabric_Bps"),
            show=lambda bw: format_bandwidth(bw, zeros=False),  # a limit, bare
        ),
        part_bytes=measured_option(
            "--part-size",
            part_size,
            lambda raw: parse_size(raw, what="--part-size"),
            field=(CheckpointSpec, "part_bytes"),
            show=format_size,
        ),
        prefixes=prefixes,
    )
    cat = catalogue_of(catalogue)
    spec, names = design_cluster(cluster, design, cat, unread=CHECKPOINT_UNREAD)
    # a checkpoint runs no collective: one GPU, or nodes no network joins, still write one
    writers = resolve_cluster(cat, spec, collectives=False)
    render_checkpoint(checkpoint(cat, writers, job), fmt, names=names)


def register(app: typer.Typer) -> None:
    """Add ``train``, ``infer`` and ``checkpoint`` to ``app``."""
    app.command("train")(train_command)
    app.command("infer")(infer_command)
    app.command("checkpoint")(checkpoint_command)
