"""Cluster-design files: the model, fabric sizing, and requirement checks -> list[Finding].

A design file names a cluster (nodes plus a system preset or an explicit node shape), optionally
its fat-tree fabric (switch, tiers, oversubscription, rails) and a list of requirements: collective
targets (time, busbw, algbw), the intra/inter bandwidth gap, oversubscription and switch count.
``check_design`` loads one file, sizes the fabric, runs the engine for every requirement and
returns one :class:`Finding` per target. The library does no printing; every problem it finds in
a file is raised at once as :class:`~ibcalc.errors.InputFileError` with ``file:line:col``.

Choices (DESIGN.md is silent on them):

* the scale-out link is given once, either as top-level ``inter`` or as ``fabric.link``;
* sizing needs ``fabric.switch`` (catalogue in :mod:`ibcalc.fabric`) or ``fabric.radix``;
  without either, ``fabric.oversubscription`` still feeds the engine as declared;
* the engine gets the end-to-end oversubscription (product of the built tiers' down:up ratios),
  the ``oversubscription`` requirement checks the worst single tier;
* ``gap`` is the ratio of per-GPU line rates per direction: scale-up link over the GPU's share of
  its domain's NICs (DGX H100: 450 GB/s / 50 GB/s = 9).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from ibcalc.catalogue.load import find_link, find_system
from ibcalc.catalogue.models import Catalogue, LinkKind
from ibcalc.cluster.resolve import ClusterSpec, ResolvedCluster, resolve_cluster
from ibcalc.engine.types import Algorithm, Collective, DType, Estimate
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    IbcalcError,
    InputFileError,
    UnknownNameError,
    ValidationProblem,
)
from ibcalc.fabric.sizing import (
    NODE_CAGES,
    SWITCHES,
    FabricError,
    FabricSizing,
    SwitchModel,
    find_switch,
    size_fat_tree,
)
from ibcalc.facade import estimate_on
from ibcalc.units import (
    format_bandwidth,
    format_size,
    format_time,
    parse_bandwidth,
    parse_size,
    parse_time,
)
from ibcalc.yamlio import Document, load_yaml, problems_from

__all__ = [
    "COLLECTIVE_KEYS",
    "ClusterBandwidths",
    "CollectiveTarget",
    "Design",
    "DesignCheck",
    "FabricSpec",
    "Finding",
    "RequirementItem",
    "ResolvedDesign",
    "check_design",
    "cluster_bandwidths",
    "evaluate",
    "format_quantity",
    "json_schema",
    "load_design",
    "resolve_design",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_NUMBER_OR_TEXT: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "number"}]}


def _unit_value(parse: Any) -> Any:
    def convert(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a quantity")
        if isinstance(value, str | int | float):
            return parse(value)
        return value

    return convert


def _needs_unit(parse: Any, what: str, example: str) -> Any:
    """Like ``_unit_value`` but refuse bare numbers: in a CI gate ``max_time: 45`` or
    ``min_busbw: 300`` is ambiguous and would silently mean seconds or bytes per second."""

    def convert(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a quantity")
        if isinstance(value, int | float) or (
            isinstance(value, str) and re.fullmatch(r"\s*[-+0-9.eE]+\s*", value)
        ):
            raise ValueError(f"{what} {value!r} needs a unit (e.g. {example})")
        if isinstance(value, str):
            return parse(value)
        return value

    return convert


Size = Annotated[
    float,
    BeforeValidator(_unit_value(parse_size)),
    WithJsonSchema(
        {**_NUMBER_OR_TEXT, "description": "Bytes: 10GB (10^10 B), 1GiB, 64MB, 1e9, 4096."}
    ),
]
Duration = Annotated[
    float,
    BeforeValidator(
        _needs_unit(lambda v: parse_time(v, allow_zero=False), "time", "40ms, 250us, 1.5s")
    ),
    WithJsonSchema({"type": "string", "description": "Time with a unit: 40ms, 250us, 1.5s."}),
]
Rate = Annotated[
    float,
    BeforeValidator(_needs_unit(parse_bandwidth, "bandwidth", "300GB/s or 400Gb/s")),
    WithJsonSchema(
        {
            "type": "string",
            "description": "Bandwidth per direction with a unit: 300GB/s (bytes), 400Gb/s (bits).",
        }
    ),
]
PositiveRatio = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _one_ratio(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"oversubscription {value!r} is not a ratio")
    if isinstance(value, str):
        text = value.strip()
        if ":" in text:
            down, _, up = text.partition(":")
            try:
                ratio = float(Fraction(down.strip()) / Fraction(up.strip()))
            except (ValueError, ZeroDivisionError):
                raise ValueError(
                    f"oversubscription {value!r} is not a down:up ratio such as 2:1"
                ) from None
        else:
            try:
                ratio = float(text)
            except ValueError:
                raise ValueError(
                    f"oversubscription {value!r} is not a ratio (write 2 or 2:1)"
                ) from None
    elif isinstance(value, int | float):
        ratio = float(value)
    else:
        raise ValueError(f"oversubscription {value!r} is not a ratio (write 2 or 2:1)")
    if not math.isfinite(ratio):
        raise ValueError(f"oversubscription {value!r} is not a finite ratio")
    if ratio < 1:
        hint = f" (down:up; did you mean {1 / ratio:g}:1?)" if ratio > 0 else ""
        raise ValueError(f"oversubscription {value!r} must be >= 1{hint}")
    return ratio


def _ratios(value: Any) -> Any:
    if isinstance(value, list | tuple):
        if not 1 <= len(value) <= 2:
            raise ValueError("oversubscription takes one ratio, or a list [leaf, spine]")
        return tuple(_one_ratio(v) for v in value)
    return (_one_ratio(value),)


_RATIO_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "number", "minimum": 1},
        {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(:\s*\d+(\.\d+)?\s*)?$"},
    ]
}
Oversubscription = Annotated[
    tuple[float, ...],
    BeforeValidator(_ratios),
    WithJsonSchema(
        {
            "anyOf": [
                *_RATIO_SCHEMA["anyOf"],
                {"type": "array", "items": _RATIO_SCHEMA, "minItems": 1, "maxItems": 2},
            ],
            "description": "Down:up bandwidth ratio, >= 1: 1 (non-blocking), 2, '3:1', or a "
            "per-tier list [leaf, spine].",
        }
    ),
]


class FabricSpec(BaseModel):
    """The scale-out fabric: link, fat-tree shape and switch."""

    model_config = _FROZEN

    link: str | None = Field(
        default=None, description="Scale-out link id (ndr, hdr, roce-400g ...); default: system's."
    )
    topology: Literal["fat-tree"] = Field(default="fat-tree", description="Only fat-tree for now.")
    tiers: StrictInt | None = Field(
        default=None, ge=1, le=3, description="Switch levels (1-3); default: the fewest that fit."
    )
    switch: str | None = Field(
        default=None,
        description="Switch model (its port count at the NIC rate is the radix).",
        examples=sorted(SWITCHES),
    )
    radix: StrictInt | None = Field(
        default=None, ge=2, le=4096, description="Ports per switch at the NIC rate (no switch)."
    )
    rail_optimized: StrictBool = Field(
        default=True, description="NIC i of every node on leaf i of its scalable unit."
    )
    oversubscription: Oversubscription = (1.0,)
    sharp: StrictBool = Field(default=False, description="In-network reduction (IB SHARP).")
    extra_endpoints: StrictInt = Field(
        default=0,
        ge=0,
        le=100_000,
        description="Non-compute leaf ports, e.g. 4 for UFM in an NVIDIA SuperPOD.",
    )

    @field_validator("switch")
    @classmethod
    def _known_switch(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return find_switch(value).id
        except UnknownNameError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _switch_or_radix(self) -> FabricSpec:
        if self.switch is not None and self.radix is not None:
            raise ValueError("give either switch or radix, not both")
        if self.switch is None and self.radix is None:
            for key in ("tiers", "extra_endpoints"):
                if key in self.model_fields_set:
                    raise ValueError(f"{key} needs switch or radix to size the fabric")
        return self


class CollectiveTarget(BaseModel):
    """A collective of `size` bytes and at least one target for it."""

    model_config = _FROZEN

    size: Size
    max_time: Duration | None = None
    min_busbw: Rate | None = None
    min_algbw: Rate | None = None
    algo: Algorithm | None = Field(
        default=None, description="Force one algorithm; default: NCCL-like choice."
    )
    dtype: str = Field(default="fp32", description="Element type: fp32, bf16, fp8 ...")

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        try:
            return DType.parse(value).value
        except ValueError:
            close = difflib.get_close_matches(value.lower(), DType.names(), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ValueError(f"unknown dtype {value!r}{hint}") from None

    @model_validator(mode="after")
    def _has_target(self) -> CollectiveTarget:
        if self.max_time is None and self.min_busbw is None and self.min_algbw is None:
            raise ValueError("give at least one target: max_time, min_busbw or min_algbw")
        return self


class GapTarget(BaseModel):
    """Largest allowed ratio of per-GPU scale-up to scale-out line rate."""

    model_config = _FROZEN

    max_ratio: PositiveRatio


class OversubscriptionTarget(BaseModel):
    """Largest allowed down:up ratio of any fabric tier."""

    model_config = _FROZEN

    max: Annotated[float, Field(ge=1, allow_inf_nan=False)]


class SwitchesTarget(BaseModel):
    """Largest allowed number of fabric switches (leaf + spine + core)."""

    model_config = _FROZEN

    max: Annotated[StrictInt, Field(ge=0)]


#: Requirement keys naming a collective, and the engine's collective for each.
COLLECTIVE_KEYS: dict[str, Collective] = {
    "allreduce": Collective.ALL_REDUCE,
    "reducescatter": Collective.REDUCE_SCATTER,
    "allgather": Collective.ALL_GATHER,
    "broadcast": Collective.BROADCAST,
    "reduce": Collective.REDUCE,
    "alltoall": Collective.ALL_TO_ALL,
    "sendrecv": Collective.SEND_RECV,
}
_OTHER_KEYS = ("gap", "oversubscription", "switches")
_TARGET_FIELDS = ("max_time", "min_busbw", "min_algbw")


class RequirementItem(BaseModel):
    """One requirement: a mapping with exactly one key."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_extra={"minProperties": 1, "maxProperties": 1}
    )

    allreduce: CollectiveTarget | None = None
    reducescatter: CollectiveTarget | None = None
    allgather: CollectiveTarget | None = None
    broadcast: CollectiveTarget | None = None
    reduce: CollectiveTarget | None = None
    alltoall: CollectiveTarget | None = None
    sendrecv: CollectiveTarget | None = None
    gap: GapTarget | None = None
    oversubscription: OversubscriptionTarget | None = None
    switches: SwitchesTarget | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> RequirementItem:
        given = [key for key in (*COLLECTIVE_KEYS, *_OTHER_KEYS) if getattr(self, key) is not None]
        if not given:
            raise ValueError(
                "empty requirement: use one of " + ", ".join((*COLLECTIVE_KEYS, *_OTHER_KEYS))
            )
        if len(given) > 1:
            raise ValueError(
                f"one requirement per list item, found {', '.join(given)} (start each with '- ')"
            )
        return self

    @property
    def kind(self) -> str:
        """The requirement's key (allreduce, gap ...)."""
        for key in (*COLLECTIVE_KEYS, *_OTHER_KEYS):
            if getattr(self, key) is not None:
                return key
        raise AssertionError("validated requirement has no key")  # pragma: no cover


class Design(BaseModel):
    """A cluster design: the cluster, its fabric, and the requirements CI checks."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="ibcalc cluster design")

    name: str = Field(min_length=1, max_length=200, description="Name shown in reports.")
    description: str | None = None
    nodes: StrictInt = Field(ge=1, le=1_000_000, description="Number of nodes (GB200: trays).")
    system: str | None = Field(
        default=None, description="System preset (dgx-h100, gb200-nvl72, aws-p5 ...)."
    )
    gpus_per_node: StrictInt | None = Field(default=None, ge=1, le=1024)
    intra: str | None = Field(default=None, description="Scale-up link id.")
    nics_per_node: StrictInt | None = Field(
        default=None, ge=1, le=256, description="Scale-out NICs (rails) per node."
    )
    inter: str | None = Field(default=None, description="Scale-out link id; or fabric.link.")
    host_pcie: str | None = Field(default=None, description="NIC's PCIe link.")
    nvls: StrictBool | None = Field(
        default=None, description="Allow NVLink SHARP (default: when present)."
    )
    fabric: FabricSpec | None = None
    requirements: list[RequirementItem] = Field(default_factory=list, max_length=10_000)

    @property
    def inter_link(self) -> str | None:
        """The scale-out link named by ``inter`` or ``fabric.link``."""
        if self.inter is not None:
            return self.inter
        return self.fabric.link if self.fabric is not None else None


def _model_keys(model: type[BaseModel], seen: set[str]) -> None:
    for name, info in model.model_fields.items():
        seen.add(name)
        for arg in getattr(info.annotation, "__args__", (info.annotation,)):
            inner = getattr(arg, "__args__", (arg,))
            for candidate in (arg, *inner):
                if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                    _model_keys(candidate, seen)


_KNOWN_KEYS: set[str] = set()
_model_keys(Design, _KNOWN_KEYS)


class _DesignSchema(GenerateJsonSchema):
    """Optional keys are omitted, never null: drop pydantic's ``anyOf [X, null]``."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        result = super().default_schema(schema)
        if result.get("default", 0) is None:
            result = {k: v for k, v in result.items() if k != "default"}
        return result


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a design file, for editors and CI."""
    schema = Design.model_json_schema(schema_generator=_DesignSchema)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def _validate(doc: Document) -> Design:
    if not isinstance(doc.data, dict):
        line, col = doc.locate(())
        kinds = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}
        what = kinds.get(type(doc.data), "null" if doc.data is None else type(doc.data).__name__)
        raise InputFileError(
            [
                ValidationProblem(
                    doc.path,
                    line,
                    col,
                    f"a design file must be a mapping (name:, nodes:, system: ...), not a {what}",
                )
            ]
        )
    try:
        return Design.model_validate(doc.data)
    except ValidationError as exc:
        problems = problems_from(doc, exc)
        for index, error in enumerate(exc.errors(include_url=False)):
            if error["type"] == "extra_forbidden" and error["loc"]:
                key = str(error["loc"][-1])
                close = difflib.get_close_matches(key, sorted(_KNOWN_KEYS), n=1)
                if close:
                    old = problems[index]
                    problems[index] = ValidationProblem(
                        old.path, old.line, old.col, f"{old.message} (did you mean {close[0]}?)"
                    )
        problems.sort(key=lambda p: (p.line is None, p.line or 0, p.col or 0))
        raise InputFileError(problems) from None


def load_design(source: str | Path, *, text: str | None = None) -> tuple[Design, Document]:
    """Read and validate one design file; every schema problem is raised at once."""
    doc = load_yaml(source, text=text)
    return _validate(doc), doc


@dataclass(frozen=True)
class ResolvedDesign:
    """A validated design with its cluster resolved and its fabric sized."""

    path: str
    design: Design
    cluster: ResolvedCluster
    switch: SwitchModel | None
    radix: int | None
    fabric: FabricSizing | None
    oversubscription: float
    notes: tuple[str, ...]


class _Problems:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.items: list[ValidationProblem] = []

    def add(self, loc: Sequence[str | int], message: str) -> None:
        line, col = self.doc.locate(loc)
        where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in loc)
        where = where.replace(".[", "[")
        text = f"{where}: {message}" if where else message
        self.items.append(ValidationProblem(self.doc.path, line, col, text))

    def raise_if_any(self) -> None:
        if self.items:
            raise InputFileError(list(self.items))


def _check_names(design: Design, catalogue: Catalogue, problems: _Problems) -> None:
    if design.system is not None:
        try:
            find_system(catalogue, design.system)
        except UnknownNameError as exc:
            problems.add(("system",), str(exc))
    if design.inter is not None and design.fabric is not None and design.fabric.link is not None:
        problems.add(("fabric", "link"), "give the scale-out link once: inter or fabric.link")
    inter_loc: tuple[str, ...] = ("inter",) if design.inter is not None else ("fabric", "link")
    checks: list[tuple[tuple[str, ...], str | None, tuple[LinkKind, ...], str]] = [
        (("intra",), design.intra, (LinkKind.SCALE_UP, LinkKind.HOST), "scale-up or PCIe"),
        (inter_loc, design.inter_link, (LinkKind.SCALE_OUT, LinkKind.WAN), "scale-out"),
        (("host_pcie",), design.host_pcie, (LinkKind.HOST,), "PCIe (host)"),
    ]
    for loc, name, kinds, what in checks:
        if name is None:
            continue
        try:
            link = find_link(catalogue, name)
        except UnknownNameError as exc:
            problems.add(loc, str(exc))
            continue
        if link.kind not in kinds:
            problems.add(loc, f"{link.id} is a {link.kind} link; use a {what} link")


def _cross_leaf_fraction(sizing: FabricSizing) -> float:
    """Share of a node's rail-aligned peers that sit behind another leaf (cost_models.md 3.7).

    Rail-optimized: a leaf serves one rail of a whole scalable unit, so peers in the same SU are
    one hop away. Otherwise a leaf serves ``leaf_down / rails`` whole nodes.
    """
    if sizing.tiers < 2 or sizing.nodes < 2:
        return 0.0
    if sizing.rail_optimized and sizing.su_nodes:
        group = sizing.su_nodes
    else:
        group = max(1, sizing.leaf_down // max(1, sizing.rails))
    return max(0.0, (sizing.nodes - group) / (sizing.nodes - 1))


#: How a design file names each ClusterSpec field (messages say ``fabric.sharp``, not ``--sharp``).
DESIGN_KEYS: dict[str, str] = {
    "nodes": "nodes",
    "gpus_per_node": "gpus_per_node",
    "nics_per_node": "nics_per_node",
    "intra": "intra",
    "inter": "inter (or fabric.link)",
    "system": "system",
    "host_pcie": "host_pcie",
    "sharp": "fabric.sharp",
    "nvls": "nvls",
    "oversubscription": "fabric.oversubscription",
    "cross_leaf_fraction": "the fabric layout",
}


def _spec(design: Design, oversubscription: float, cross_leaf: float = 1.0) -> ClusterSpec:
    return ClusterSpec(
        nodes=design.nodes,
        gpus_per_node=design.gpus_per_node,
        nics_per_node=design.nics_per_node,
        intra=design.intra,
        inter=design.inter_link,
        system=design.system,
        host_pcie=design.host_pcie,
        sharp=design.fabric.sharp if design.fabric is not None else False,
        nvls=design.nvls,
        oversubscription=oversubscription,
        cross_leaf_fraction=cross_leaf,
    )


def resolve_design(design: Design, doc: Document, catalogue: Catalogue) -> ResolvedDesign:
    """Resolve the cluster and size the fabric; every problem is raised at once, located."""
    problems = _Problems(doc)
    _check_names(design, catalogue, problems)
    problems.raise_if_any()
    fabric = design.fabric
    declared = math.prod(fabric.oversubscription) if fabric is not None else 1.0
    try:
        cluster = resolve_cluster(catalogue, _spec(design, declared))
    except IbcalcError as exc:
        problems.add(("nodes",), str(exc))
        problems.raise_if_any()
        raise  # pragma: no cover - raise_if_any raised
    notes: list[str] = []
    switch: SwitchModel | None = None
    radix: int | None = None
    sizing: FabricSizing | None = None
    if fabric is not None and (fabric.switch is not None or fabric.radix is not None):
        if cluster.inter is None:
            notes.append("the whole cluster is one scale-up domain: no scale-out fabric to size")
        else:
            port_Bps = cluster.inter.per_direction_Bps
            ppc: int | None = None
            if fabric.switch is not None:
                switch = find_switch(fabric.switch)
                try:
                    mode = switch.mode_for(port_Bps)
                except FabricError as exc:
                    problems.add(("fabric", "switch"), f"{exc} (the NICs are {cluster.inter.id})")
                    problems.raise_if_any()
                    raise  # pragma: no cover
                radix = mode.ports
                ppc = switch.ports_per_cage(mode)
            else:
                radix = fabric.radix
            assert radix is not None
            node_cages = None
            if cluster.system is not None:
                known = NODE_CAGES.get(cluster.system.id)
                if known is not None and known.nics == cluster.nics_per_node:
                    node_cages = known.cages
            try:
                sizing = size_fat_tree(
                    cluster.nodes,
                    cluster.nics_per_node,
                    radix,
                    oversubscription=fabric.oversubscription,
                    rail_optimized=fabric.rail_optimized,
                    tiers=fabric.tiers,
                    extra_endpoints=fabric.extra_endpoints,
                    port_Bps=port_Bps,
                    ports_per_cage=ppc,
                    node_cages_per_node=node_cages,
                )
            except FabricError as exc:
                where = ("fabric", "tiers") if fabric.tiers is not None else ("fabric",)
                problems.add(where, str(exc))
                problems.raise_if_any()
    oversubscription = declared
    if sizing is not None:
        oversubscription = sizing.end_to_end_oversubscription
        cross_leaf = _cross_leaf_fraction(sizing)
        if oversubscription != declared or cross_leaf < 1.0:
            cluster = resolve_cluster(catalogue, _spec(design, oversubscription, cross_leaf))
            if oversubscription > 1:
                notes.append(
                    f"{cross_leaf:.0%} of rail-aligned all-to-all traffic crosses leaves "
                    "(the rest stays on its leaf)"
                )
    if oversubscription > 1:
        notes.append(
            f"oversubscription {oversubscription:.3g}:1 slows network-bound all-to-all "
            "(cost_models.md 3.7)"
        )
    return ResolvedDesign(
        path=doc.path,
        design=design,
        cluster=cluster,
        switch=switch,
        radix=radix,
        fabric=sizing,
        oversubscription=oversubscription,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class ClusterBandwidths:
    """Per-GPU bandwidths per direction of a resolved cluster, and which tier limits it."""

    gpus_per_domain: int
    domains: int
    up_line_Bps: float | None
    up_Bps: float | None
    nvls_Bps: float | None
    nic_line_Bps: float | None
    nic_Bps: float | None
    nics_per_domain: int
    out_line_per_gpu_Bps: float | None
    out_per_gpu_Bps: float | None
    gap: float | None
    bottleneck: str


def cluster_bandwidths(cluster: ResolvedCluster) -> ClusterBandwidths:
    """Per-GPU scale-up and scale-out bandwidths (line and achievable) and the gap between them.

    Scale-out per GPU = NICs per domain x NIC rate / GPUs per domain; gap = scale-up line rate /
    scale-out line rate per GPU (both per direction).
    """
    topo = cluster.topology
    up, out, m = topo.up, topo.out, topo.m
    out_line = out_bw = None
    if out is not None:
        out_line = out.nics_per_domain * out.nic_line_Bps / m
        out_bw = out.domain_bw_Bps / m
    gap = up.line_Bps / out_line if up is not None and out_line is not None else None
    if up is None and out is None:  # pragma: no cover - resolve_cluster needs 2 GPUs
        bottleneck = "none"
    elif out is None or out_bw is None:
        bottleneck = f"scale-up only ({topo.domains} domain)"
    elif up is None:
        bottleneck = f"scale-out: {format_bandwidth(out_bw)} per GPU (one GPU per domain)"
    elif out_bw < up.bw_Bps:
        bottleneck = (
            f"scale-out: {format_bandwidth(out_bw)} per GPU across domains vs "
            f"{format_bandwidth(up.bw_Bps)} inside ({up.bw_Bps / out_bw:.1f}x)"
        )
    else:
        bottleneck = (
            f"scale-up: {format_bandwidth(up.bw_Bps)} per GPU inside vs "
            f"{format_bandwidth(out_bw)} across domains"
        )
    return ClusterBandwidths(
        gpus_per_domain=m,
        domains=topo.domains,
        up_line_Bps=up.line_Bps if up is not None else None,
        up_Bps=up.bw_Bps if up is not None else None,
        nvls_Bps=up.nvls_bw_Bps if up is not None else None,
        nic_line_Bps=out.nic_line_Bps if out is not None else None,
        nic_Bps=out.nic_bw_Bps if out is not None else None,
        nics_per_domain=out.nics_per_domain if out is not None else 0,
        out_line_per_gpu_Bps=out_line,
        out_per_gpu_Bps=out_bw,
        gap=gap,
        bottleneck=bottleneck,
    )


@dataclass(frozen=True)
class Finding:
    """The outcome of one requirement target.

    ``predicted`` and ``required`` are in SI units named by ``unit`` (``s``, ``B/s``, ``x`` for
    the gap ratio, ``down:up`` for oversubscription, ``switches``). ``margin`` is the headroom as
    a fraction of ``required``: positive passes, negative fails.
    """

    requirement: str
    file: str
    line: int | None
    col: int | None
    passed: bool
    predicted: float
    required: float
    margin: float
    unit: str
    message: str
    kind: str
    target: str
    comparison: Literal["<=", ">="]
    design: str
    detail: str = ""


def format_quantity(value: float, unit: str) -> str:
    """Human text of a finding's value in its unit."""
    if unit == "s":
        return format_time(value)
    if unit == "B/s":
        return format_bandwidth(value)
    if unit == "x":
        return f"{value:.3g}x"
    if unit == "down:up":
        return f"{value:.3g}:1"
    if unit == "switches":
        return f"{value:.0f} switches"
    return f"{value:g} {unit}"  # pragma: no cover


def _finding(
    doc: Document,
    design: Design,
    loc: tuple[str | int, ...],
    *,
    requirement: str,
    kind: str,
    target: str,
    predicted: float,
    required: float,
    comparison: Literal["<=", ">="],
    unit: str,
    what: str,
    detail: str = "",
) -> Finding:
    if comparison == "<=":
        passed = predicted <= required
        margin = (required - predicted) / required if required else (0.0 if passed else -1.0)
    else:
        passed = predicted >= required
        margin = (predicted - required) / required if required else 0.0
    pred, req = format_quantity(predicted, unit), format_quantity(required, unit)
    if passed:
        message = f"{what} {pred}, required {comparison} {req} (margin {margin:+.1%})"
    else:
        word = "over" if comparison == "<=" else "under"
        message = f"{what} {pred}, {abs(margin):.1%} {word} the required {comparison} {req}"
    if detail:
        message += f"; {detail}"
    line, col = doc.locate(loc)
    return Finding(
        requirement=requirement,
        file=doc.path,
        line=line,
        col=col,
        passed=passed,
        predicted=predicted,
        required=required,
        margin=margin,
        unit=unit,
        message=message,
        kind=kind,
        target=target,
        comparison=comparison,
        design=design.name,
        detail=detail,
    )


def _estimate_detail(est: Estimate) -> str:
    detail = (
        f"{est.best.algorithm.value}/{est.best.protocol.value}, bottleneck {est.best.bottleneck}"
    )
    if est.best.equivalent_busbw:
        detail += "; busbw is an equivalent figure (in-network reduction or 2-node tree)"
    return detail


def _collective_findings(
    resolved: ResolvedDesign,
    doc: Document,
    index: int,
    kind: str,
    target: CollectiveTarget,
    problems: _Problems,
) -> list[Finding]:
    loc: tuple[str | int, ...] = ("requirements", index, kind)
    label = f"{kind} {format_size(target.size)}"
    if target.algo is not None:
        label += f" ({target.algo.value})"
    if target.dtype != "fp32":
        label += f" {target.dtype}"
    try:
        est = estimate_on(
            resolved.cluster,
            COLLECTIVE_KEYS[kind],
            target.size,
            dtype=target.dtype,
            algorithm=target.algo,
        )
    except AlgorithmNotApplicableError as exc:
        problems.add((*loc, "algo"), str(exc))
        return []
    except IbcalcError as exc:
        problems.add((*loc, "size"), str(exc))
        return []
    detail = _estimate_detail(est)
    found: list[Finding] = []
    measures: dict[str, tuple[float, Literal["<=", ">="], str, str]] = {
        "max_time": (est.time_s, "<=", "s", "time"),
        "min_busbw": (est.busbw_Bps, ">=", "B/s", "busbw"),
        "min_algbw": (est.algbw_Bps, ">=", "B/s", "algbw"),
    }
    for name in _TARGET_FIELDS:
        required = getattr(target, name)
        if required is None:
            continue
        predicted, comparison, unit, what = measures[name]
        found.append(
            _finding(
                doc,
                resolved.design,
                (*loc, name),
                requirement=f"{label}: {what} {comparison} {format_quantity(required, unit)}",
                kind=kind,
                target=name,
                predicted=predicted,
                required=required,
                comparison=comparison,
                unit=unit,
                what=what,
                detail=detail,
            )
        )
    return found


def _gap_finding(
    resolved: ResolvedDesign, doc: Document, loc: tuple[str | int, ...], target: GapTarget
) -> Finding | None:
    bws = cluster_bandwidths(resolved.cluster)
    if bws.gap is None or bws.up_line_Bps is None or bws.out_line_per_gpu_Bps is None:
        return None
    return _finding(
        doc,
        resolved.design,
        (*loc, "max_ratio"),
        requirement=f"gap: intra/inter per GPU <= {target.max_ratio:g}x",
        kind="gap",
        target="max_ratio",
        predicted=bws.gap,
        required=target.max_ratio,
        comparison="<=",
        unit="x",
        what="intra/inter line rate per GPU",
        detail=(
            f"{format_bandwidth(bws.up_line_Bps)} scale-up vs "
            f"{format_bandwidth(bws.out_line_per_gpu_Bps)} scale-out per GPU"
        ),
    )


def _oversubscription_finding(
    resolved: ResolvedDesign,
    doc: Document,
    loc: tuple[str | int, ...],
    target: OversubscriptionTarget,
) -> Finding:
    fabric = resolved.design.fabric
    if resolved.fabric is not None:
        worst = resolved.fabric.worst_oversubscription
        detail = f"fabric sized with {resolved.fabric.tiers} switch level(s)"
    elif fabric is not None:
        worst = max(fabric.oversubscription)
        detail = "as declared"
    else:
        worst = 1.0
        detail = "no fabric given: non-blocking"
    return _finding(
        doc,
        resolved.design,
        (*loc, "max"),
        requirement=f"oversubscription <= {target.max:g}:1",
        kind="oversubscription",
        target="max",
        predicted=worst,
        required=target.max,
        comparison="<=",
        unit="down:up",
        what="worst tier down:up",
        detail=detail,
    )


def _switches_finding(
    resolved: ResolvedDesign, doc: Document, loc: tuple[str | int, ...], target: SwitchesTarget
) -> Finding | None:
    fab = resolved.fabric
    if fab is None:
        return None
    return _finding(
        doc,
        resolved.design,
        (*loc, "max"),
        requirement=f"switches <= {target.max}",
        kind="switches",
        target="max",
        predicted=float(fab.total_switches),
        required=float(target.max),
        comparison="<=",
        unit="switches",
        what="total",
        detail=f"{fab.leaf_switches} leaf + {fab.spine_switches} spine + {fab.core_switches} core",
    )


def evaluate(resolved: ResolvedDesign, doc: Document) -> list[Finding]:
    """One :class:`Finding` per requirement target, in file order.

    A requirement that cannot be evaluated (a forced algorithm that does not apply, a size too
    small for the ranks, a gap without two tiers, a switch count without a sized fabric) is a
    problem of the file: all of them are raised together as :class:`InputFileError`.
    """
    problems = _Problems(doc)
    findings: list[Finding] = []
    for index, item in enumerate(resolved.design.requirements):
        kind = item.kind
        loc: tuple[str | int, ...] = ("requirements", index, kind)
        if kind in COLLECTIVE_KEYS:
            target = getattr(item, kind)
            findings += _collective_findings(resolved, doc, index, kind, target, problems)
        elif item.gap is not None:
            found = _gap_finding(resolved, doc, loc, item.gap)
            if found is None:
                problems.add(
                    loc, "the gap needs a scale-up and a scale-out tier; this cluster lacks one"
                )
            else:
                findings.append(found)
        elif item.oversubscription is not None:
            findings.append(_oversubscription_finding(resolved, doc, loc, item.oversubscription))
        elif item.switches is not None:
            found = _switches_finding(resolved, doc, loc, item.switches)
            if found is None:
                problems.add(
                    loc,
                    "a switch count needs a sized fabric: give fabric.switch or fabric.radix "
                    "(and more than one scale-up domain)",
                )
            else:
                findings.append(found)
    problems.raise_if_any()
    return findings


@dataclass(frozen=True)
class DesignCheck:
    """One checked design file: the resolved design and its findings."""

    path: str
    resolved: ResolvedDesign
    findings: list[Finding]

    @property
    def design(self) -> Design:
        """The validated design."""
        return self.resolved.design

    @property
    def passed(self) -> bool:
        """True when every finding passed."""
        return all(f.passed for f in self.findings)


def check_design(source: str | Path, catalogue: Catalogue) -> DesignCheck:
    """Load, resolve and evaluate one design file.

    Raises :class:`InputFileError` (every problem of the file, ``file:line:col``) when the file
    cannot be read, validated, resolved or evaluated.
    """
    doc = load_yaml(source)
    try:
        design = _validate(doc)
    except InputFileError as exc:
        # report unknown system and link names with the schema problems, not one run later
        extra = _raw_name_problems(doc, catalogue)
        known = {(p.line, p.col) for p in exc.problems}
        merged = exc.problems + [p for p in extra if (p.line, p.col) not in known]
        merged.sort(key=lambda p: (p.line or 0, p.col or 0))
        raise InputFileError(merged) from None
    resolved = resolve_design(design, doc, catalogue)
    return DesignCheck(path=doc.path, resolved=resolved, findings=evaluate(resolved, doc))


def _raw_name_problems(doc: Document, catalogue: Catalogue) -> list[ValidationProblem]:
    """Unknown system and link names read straight from the YAML (used when the schema failed,
    so that one run reports both kinds of problem)."""
    data = doc.data if isinstance(doc.data, dict) else {}
    fabric = data.get("fabric") if isinstance(data.get("fabric"), dict) else {}
    problems = _Problems(doc)
    names: list[tuple[tuple[str, ...], object, bool]] = [
        (("system",), data.get("system"), True),
        (("intra",), data.get("intra"), False),
        (("inter",), data.get("inter"), False),
        (("host_pcie",), data.get("host_pcie"), False),
        (("fabric", "link"), fabric.get("link") if isinstance(fabric, dict) else None, False),
    ]
    for loc, name, is_system in names:
        if not isinstance(name, str):
            continue
        try:
            if is_system:
                find_system(catalogue, name)
            else:
                find_link(catalogue, name)
        except UnknownNameError as exc:
            problems.add(loc, str(exc))
    return problems.items
