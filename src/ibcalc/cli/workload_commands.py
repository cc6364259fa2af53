"""``ibcalc train``, ``ibcalc infer`` and ``ibcalc checkpoint``: workload commands.

:func:`register` adds the three commands to a Typer app. The module keeps its own error boundary
(one ``error:`` line on stderr, exit 2) and its own map from library fields to flags, so it does
not depend on how the rest of the command line is organised.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import DType
from ibcalc.errors import ClusterError, IbcalcError, InputFileError, fill_fields
from ibcalc.render.console import render_json
from ibcalc.render.workload import (
    checkpoint_dict,
    compare_dict,
    infer_dict,
    render_checkpoint,
    render_compare,
    render_infer,
    render_train,
    train_dict,
)
from ibcalc.units import parse_bandwidth, parse_distance, parse_size, parse_time
from ibcalc.workload.checkpoint import CheckpointSpec, checkpoint
from ibcalc.workload.infer import InferSpec, infer
from ibcalc.workload.model import ModelSpec, model_from
from ibcalc.workload.train import TrainSpec, compare_layouts, fit_cluster, train_step
from ibcalc.workload.wan import one_way_latency

__all__ = ["FIELD_FLAGS", "register"]

#: The flag that sets each field the library names in its messages (``{field}``).
FIELD_FLAGS: dict[str, str] = {
    "nodes": "--nodes",
    "gpus_per_node": "--gpus-per-node",
    "nics_per_node": "--nics-per-node",
    "intra": "--intra",
    "inter": "--inter",
    "system": "--system",
    "host_pcie": "--host-pcie",
    "sharp": "--sharp",
    "nvls": "--nvls",
    "oversubscription": "--oversubscription",
    "cross_leaf_fraction": "--cross-leaf",
    "sites": "--sites",
    "wan": "--wan",
    "wan_links": "--wan-links",
    "wan_latency_s": "--distance/--rtt",
    "tp": "--tp",
    "pp": "--pp",
    "dp": "--dp",
    "ep": "--ep",
    "cp": "--cp",
    "model": "--model",
    "params": "--params",
    "layers": "--layers",
    "hidden": "--hidden",
    "heads": "--heads",
    "kv_heads": "--kv-heads",
    "head_dim": "--head-dim",
    "seq_len": "--seq-len",
    "experts": "--experts",
    "top_k": "--top-k",
    "client_link": "--storage-link",
    "storage": "--storage",
}


class _UserError(Exception):
    """Bad input found by these commands themselves."""


@contextmanager
def _boundary() -> Iterator[None]:
    """Library errors become one ``error:`` line on stderr and exit code 2."""
    try:
        yield
    except ClusterError as exc:
        typer.echo(f"error: {exc.render(FIELD_FLAGS)}", err=True)
        raise typer.Exit(2) from None
    except InputFileError as exc:
        for problem in exc.problems:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2) from None
    except (IbcalcError, _UserError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _flags(notes: list[str]) -> list[str]:
    return [fill_fields(n, FIELD_FLAGS) for n in notes]


class GradDtype(StrEnum):
    """Gradient element types on the wire."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"


class WireDtype(StrEnum):
    """Activation, weight and KV-cache element types."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"


class Format(StrEnum):
    """Output formats."""

    TABLE = "table"
    JSON = "json"


# --- shared options ---------------------------------------------------------------------------

ModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="Model preset: llama3-8b/70b/405b, mixtral-8x7b, deepseek-v3."),
]
ParamsOpt = Annotated[
    str | None, typer.Option("--params", help="Parameter count, e.g. 70B (overrides --model's).")
]
LayersOpt = Annotated[int | None, typer.Option("--layers", help="Transformer layers.")]
HiddenOpt = Annotated[int | None, typer.Option("--hidden", help="Hidden (model) dimension.")]
HeadsOpt = Annotated[int | None, typer.Option("--heads", help="Attention heads.")]
KvHeadsOpt = Annotated[int | None, typer.Option("--kv-heads", help="Key/value heads (GQA).")]
HeadDimOpt = Annotated[int | None, typer.Option("--head-dim", help="Head dimension.")]
SeqOpt = Annotated[int | None, typer.Option("--seq-len", help="Sequence length (tokens).")]
ExpertsOpt = Annotated[int | None, typer.Option("--experts", help="Routed experts (MoE).")]
TopKOpt = Annotated[int | None, typer.Option("--top-k", help="Experts per token (MoE).")]

NodesOpt = Annotated[int | None, typer.Option("--nodes", "-N", help="Number of nodes.")]
GpusOpt = Annotated[int | None, typer.Option("--gpus-per-node", "-g", help="GPUs per node.")]
NicsOpt = Annotated[int | None, typer.Option("--nics-per-node", help="Scale-out NICs per node.")]
IntraOpt = Annotated[str | None, typer.Option("--intra", help="Scale-up link id (e.g. nvlink4).")]
InterOpt = Annotated[
    str | None, typer.Option("--inter", "--fabric", help="Scale-out link id (e.g. ndr).")
]
SystemOpt = Annotated[str | None, typer.Option("--system", help="System preset (e.g. dgx-h100).")]
SitesOpt = Annotated[int, typer.Option("--sites", help="Sites joined by a WAN (default 1).")]
WanOpt = Annotated[str | None, typer.Option("--wan", help="WAN link id between sites (wan-10g).")]
WanLinksOpt = Annotated[int, typer.Option("--wan-links", help="WAN links per site.")]
DistanceOpt = Annotated[
    str | None,
    typer.Option("--distance", help="Fibre distance between sites, e.g. 800km (5 us/km one way)."),
]
RttOpt = Annotated[
    str | None, typer.Option("--rtt", help="Measured round trip between sites, e.g. 12ms.")
]
DesignOpt = Annotated[
    Path | None,
    typer.Option("--design", help="Take the cluster from a design file.", metavar="FILE"),
]
CatalogueOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalogue", help="Extra catalogue YAML (adds or overrides entries).", metavar="FILE"
    ),
]
FormatOpt = Annotated[Format, typer.Option("--format", help="table or json.")]


def _model(
    model: str | None,
    params: str | None,
    *,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
    experts: int | None = None,
    top_k: int | None = None,
) -> ModelSpec:
    return model_from(
        model,
        params=params,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        seq_len=seq_len,
        experts=experts,
        top_k=top_k,
    )


def _cluster_spec(
    catalogue: Catalogue,
    *,
    design: Path | None,
    nodes: int | None,
    gpus_per_node: int | None,
    nics_per_node: int | None,
    intra: str | None,
    inter: str | None,
    system: str | None,
    sites: int,
    wan: str | None,
    wan_links: int,
    distance: str | None,
    rtt: str | None,
) -> ClusterSpec:
    """The cluster the flags (or a design file, plus the WAN flags) describe."""
    latency = one_way_latency(
        distance_m=parse_distance(distance) if distance is not None else None,
        rtt_s=parse_time(rtt, allow_zero=False) if rtt is not None else None,
    )
    wan_fields = {
        "sites": sites,
        "wan": wan,
        "wan_links": wan_links,
        "wan_latency_s": latency,
    }
    if design is not None:
        given = [
            flag
            for flag, value in (
                ("--nodes", nodes),
                ("--gpus-per-node", gpus_per_node),
                ("--nics-per-node", nics_per_node),
                ("--intra", intra),
                ("--inter", inter),
                ("--system", system),
            )
            if value is not None
        ]
        if given:
            raise _UserError(f"{', '.join(given)} and --design both describe the cluster")
        from ibcalc.design.check import load_design, resolve_design

        loaded, doc = load_design(design)
        base = resolve_design(loaded, doc, catalogue).cluster.spec
        return base.replace(**wan_fields)
    return ClusterSpec(
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        nics_per_node=nics_per_node,
        intra=intra,
        inter=inter,
        system=system,
        **wan_fields,
    )


# --- commands ---------------------------------------------------------------------------------


def train_command(
    model: ModelOpt = None,
    params: ParamsOpt = None,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    seq_len: SeqOpt = None,
    experts: ExpertsOpt = None,
    top_k: TopKOpt = None,
    micro_batch: Annotated[
        int, typer.Option("--micro-batch", min=1, help="Sequences per micro-batch.")
    ] = 1,
    microbatches: Annotated[
        int | None,
        typer.Option("--microbatches", min=1, help="Micro-batches per step (default: pp)."),
    ] = None,
    tp: Annotated[int, typer.Option("--tp", min=1, help="Tensor-parallel degree.")] = 1,
    pp: Annotated[int, typer.Option("--pp", min=1, help="Pipeline-parallel degree.")] = 1,
    dp: Annotated[
        int | None,
        typer.Option("--dp", min=1, help="Data-parallel degree (default: the rest of the GPUs)."),
    ] = None,
    ep: Annotated[
        int, typer.Option("--ep", min=1, help="Expert-parallel degree (out of dp; MoE).")
    ] = 1,
    cp: Annotated[int, typer.Option("--cp", min=1, help="Context-parallel degree.")] = 1,
    zero: Annotated[
        int, typer.Option("--zero", min=0, max=3, help="ZeRO stage 0-3 (0: plain DP).")
    ] = 0,
    fsdp: Annotated[bool, typer.Option("--fsdp", help="Fully sharded (= --zero 3).")] = False,
    grad_dtype: Annotated[
        GradDtype, typer.Option("--grad-dtype", help="Gradients on the wire.")
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
        typer.Option("--backward-time", help="Backward compute per step, e.g. 2s (for overlap)."),
    ] = None,
    tflops: Annotated[
        float | None,
        typer.Option(
            "--tflops", help="Achieved TFLOP/s per GPU (compute from 6 x params x tokens)."
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option("--compare", help="Rank every (tp, pp, dp[, ep]) layout of the GPUs."),
    ] = False,
    nodes: NodesOpt = None,
    gpus_per_node: GpusOpt = None,
    nics_per_node: NicsOpt = None,
    intra: IntraOpt = None,
    inter: InterOpt = None,
    system: SystemOpt = None,
    sites: SitesOpt = 1,
    wan: WanOpt = None,
    wan_links: WanLinksOpt = 1,
    distance: DistanceOpt = None,
    rtt: RttOpt = None,
    design: DesignOpt = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = Format.TABLE,
) -> None:
    """Communication of one training step, per parallel dimension, with overlap and warnings."""
    with _boundary():
        if fsdp and zero not in (0, 3):
            raise _UserError(f"--fsdp is ZeRO stage 3; it contradicts --zero {zero}")
        if backward_time is not None and tflops is not None:
            raise _UserError("give --backward-time or --tflops, not both")
        spec_model = _model(
            model,
            params,
            layers=layers,
            hidden=hidden,
            heads=heads,
            kv_heads=kv_heads,
            seq_len=seq_len,
            experts=experts,
            top_k=top_k,
        )
        cat = load_catalogue(list(catalogue or []))
        cluster_spec = _cluster_spec(
            cat,
            design=design,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            nics_per_node=nics_per_node,
            intra=intra,
            inter=inter,
            system=system,
            sites=sites,
            wan=wan,
            wan_links=wan_links,
            distance=distance,
            rtt=rtt,
        )
        if compare:
            given = [f for f, v in (("--tp", tp), ("--pp", pp), ("--ep", ep)) if v != 1]
            if dp is not None:
                given.append("--dp")
            if given:
                raise _UserError(f"--compare tries every layout; drop {', '.join(given)}")
            if cluster_spec.nodes is None:
                raise _UserError("--compare needs the GPU count: give --nodes (or --design)")
        cluster, layout = fit_cluster(
            cat,
            cluster_spec,
            tp=1 if compare else tp,
            pp=1 if compare else pp,
            dp=dp,
            ep=1 if compare else ep,
            cp=cp,
        )
        train = TrainSpec(
            model=spec_model,
            parallel=layout,
            zero=3 if fsdp else zero,
            grad_dtype=DType(grad_dtype.value),
            micro_batch=micro_batch,
            microbatches=microbatches,
            sequence_parallel=sequence_parallel,
            hierarchical=hierarchical,
            backward_s=parse_time(backward_time, allow_zero=False)
            if backward_time is not None
            else None,
            tflops=tflops,
        )
        if compare:
            results, skipped = compare_layouts(cat, cluster, train)
            results = [r.model_copy(update={"warnings": _flags(r.warnings)}) for r in results]
            if fmt is Format.JSON:
                render_json(compare_dict(results, skipped))
            else:
                render_compare(results, skipped)
            return
        result = train_step(cat, cluster, train)
        result = result.model_copy(
            update={
                "warnings": _flags(result.warnings),
                "assumptions": _flags(result.assumptions),
            }
        )
        if fmt is Format.JSON:
            render_json(train_dict(result))
        else:
            render_train(result)


def infer_command(
    model: ModelOpt = None,
    params: ParamsOpt = None,
    layers: LayersOpt = None,
    hidden: HiddenOpt = None,
    heads: HeadsOpt = None,
    kv_heads: KvHeadsOpt = None,
    head_dim: HeadDimOpt = None,
    experts: ExpertsOpt = None,
    top_k: TopKOpt = None,
    tp: Annotated[int, typer.Option("--tp", min=1, help="Tensor-parallel degree.")] = 1,
    pp: Annotated[int, typer.Option("--pp", min=1, help="Pipeline-parallel degree.")] = 1,
    ep: Annotated[int, typer.Option("--ep", min=1, help="Expert-parallel degree (MoE).")] = 1,
    batch: Annotated[
        int, typer.Option("--batch", min=1, help="Sequences decoded together (tokens per step).")
    ] = 1,
    prompt: Annotated[int, typer.Option("--prompt", min=1, help="Prompt length in tokens.")] = 1024,
    output_tokens: Annotated[
        int, typer.Option("--output-tokens", min=1, help="Tokens generated per request.")
    ] = 256,
    dtype: Annotated[
        WireDtype, typer.Option("--dtype", help="Activation element type.")
    ] = WireDtype.BF16,
    kv_dtype: Annotated[
        WireDtype, typer.Option("--kv-dtype", help="KV-cache element type.")
    ] = WireDtype.BF16,
    disaggregated: Annotated[
        bool,
        typer.Option("--disaggregated", help="Prefill and decode on different nodes."),
    ] = False,
    kv_nics: Annotated[
        int | None,
        typer.Option("--kv-nics", min=1, help="NICs the KV-cache transfer may use."),
    ] = None,
    nodes: NodesOpt = None,
    gpus_per_node: GpusOpt = None,
    nics_per_node: NicsOpt = None,
    intra: IntraOpt = None,
    inter: InterOpt = None,
    system: SystemOpt = None,
    design: DesignOpt = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = Format.TABLE,
) -> None:
    """Communication per generated token and per request of serving a model."""
    with _boundary():
        if kv_nics is not None and not disaggregated:
            raise _UserError("--kv-nics applies to --disaggregated serving")
        spec_model = _model(
            model,
            params,
            layers=layers,
            hidden=hidden,
            heads=heads,
            kv_heads=kv_heads,
            head_dim=head_dim,
            experts=experts,
            top_k=top_k,
        )
        cat = load_catalogue(list(catalogue or []))
        cluster_spec = _cluster_spec(
            cat,
            design=design,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            nics_per_node=nics_per_node,
            intra=intra,
            inter=inter,
            system=system,
            sites=1,
            wan=None,
            wan_links=1,
            distance=None,
            rtt=None,
        )
        cluster = _cluster_for(cat, cluster_spec, tp * ep * pp)
        result = infer(
            cat,
            cluster,
            InferSpec(
                model=spec_model,
                tp=tp,
                pp=pp,
                ep=ep,
                batch=batch,
                prompt_tokens=prompt,
                output_tokens=output_tokens,
                act_dtype=DType(dtype.value),
                kv_dtype=DType(kv_dtype.value),
                disaggregated=disaggregated,
                kv_nics=kv_nics,
            ),
        )
        result = result.model_copy(
            update={
                "warnings": _flags(result.warnings),
                "assumptions": _flags(result.assumptions),
            }
        )
        if fmt is Format.JSON:
            render_json(infer_dict(result))
        else:
            render_infer(result)


def _cluster_for(catalogue: Catalogue, spec: ClusterSpec, gpus: int) -> ResolvedCluster:
    """The cluster, with just enough nodes for ``gpus`` GPUs when --nodes is not given."""
    if spec.nodes is None:
        probe = resolve_cluster(catalogue, spec)
        needed = max(1, -(-gpus // probe.gpus_per_node))
        if needed * probe.gpus_per_node >= 2 and needed != probe.nodes:
            return resolve_cluster(catalogue, spec.replace(nodes=needed))
        return probe
    return resolve_cluster(catalogue, spec)


def checkpoint_command(
    storage: Annotated[
        str, typer.Option("--storage", help="Storage id: nvmeof-target, ddn-ai400x2, aws-s3 ...")
    ],
    model: ModelOpt = None,
    params: ParamsOpt = None,
    weights_dtype: Annotated[
        WireDtype, typer.Option("--weights-dtype", help="Weight element type in the checkpoint.")
    ] = WireDtype.BF16,
    optimizer: Annotated[
        bool,
        typer.Option("--optimizer/--no-optimizer", help="Include Adam state (12 B/param)."),
    ] = False,
    storage_units: Annotated[
        int, typer.Option("--storage-units", min=1, help="Targets or appliances.")
    ] = 1,
    storage_link: Annotated[
        str | None,
        typer.Option("--storage-link", help="Client NIC link id (default: the cluster's)."),
    ] = None,
    storage_nics: Annotated[
        int, typer.Option("--storage-nics", min=1, help="Storage NICs per node.")
    ] = 1,
    storage_fabric: Annotated[
        str | None,
        typer.Option("--storage-fabric", help="Fabric bandwidth to storage, e.g. 1.6TB/s."),
    ] = None,
    replicas: Annotated[
        int,
        typer.Option("--replicas", min=1, help="Data-parallel replicas reading the weights back."),
    ] = 1,
    part_size: Annotated[
        str, typer.Option("--part-size", help="Object-store part size (default 16MB).")
    ] = "16MB",
    prefixes: Annotated[
        int, typer.Option("--prefixes", min=1, help="Object-store prefixes written in parallel.")
    ] = 1,
    nodes: NodesOpt = None,
    gpus_per_node: GpusOpt = None,
    nics_per_node: NicsOpt = None,
    intra: IntraOpt = None,
    inter: InterOpt = None,
    system: SystemOpt = None,
    design: DesignOpt = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = Format.TABLE,
) -> None:
    """Save and restore time of a checkpoint, and which bound sets it."""
    with _boundary():
        spec_model = _model(model, params)
        cat = load_catalogue(list(catalogue or []))
        cluster_spec = _cluster_spec(
            cat,
            design=design,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            nics_per_node=nics_per_node,
            intra=intra,
            inter=inter,
            system=system,
            sites=1,
            wan=None,
            wan_links=1,
            distance=None,
            rtt=None,
        )
        cluster = resolve_cluster(cat, cluster_spec)
        result = checkpoint(
            cat,
            cluster,
            CheckpointSpec(
                model=spec_model,
                storage=storage,
                weights_dtype=DType(weights_dtype.value),
                optimizer=optimizer,
                storage_units=storage_units,
                client_link=storage_link,
                client_nics=storage_nics,
                replicas=replicas,
                fabric_Bps=parse_bandwidth(storage_fabric) if storage_fabric is not None else None,
                part_bytes=parse_size(part_size),
                prefixes=prefixes,
            ),
        )
        result = result.model_copy(update={"assumptions": _flags(result.assumptions)})
        if fmt is Format.JSON:
            render_json(checkpoint_dict(result))
        else:
            render_checkpoint(result)


def register(app: typer.Typer) -> None:
    """Add ``train``, ``infer`` and ``checkpoint`` to ``app``."""
    app.command("train")(train_command)
    app.command("infer")(infer_command)
    app.command("checkpoint")(checkpoint_command)
