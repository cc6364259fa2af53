"""Scale-up vs scale-out bandwidth per GPU: the gap that decides where TP, PP and DP go.

Conventions (docs/catalogue.md#units-and-conventions, docs/catalogue.md#common-mistakes): every
bandwidth here is **per direction** and **per GPU**, in bytes per second (printed as GB/s =
10^9 B/s). Vendor GPU-link headlines are bidirectional, twice these figures (H100 NVLink 4
"900 GB/s" = 450 GB/s per direction); network rates are quoted in Gb/s (NDR "400" = 400 Gb/s =
50 GB/s per direction). So "NVLink 4 900 GB/s vs HDR 50 GB/s, nearly 20x" compares a
bidirectional figure with a bidirectional one and gives the right ratio, 18x, only by luck of
doubling both sides; per direction it is 450 vs 25.

* **scale-up per GPU**: the intra link's per-GPU rate as the engine's tier 0 sees it (a
  switchless mesh counts only the links a node of this size uses). Line rate, and achievable
  = line x the catalogue efficiency, the figure the engine's ring uses.
* **scale-out per GPU**: NICs per node / GPUs per node x one NIC's rate. Line: the NIC's line
  rate. Achievable: NIC line x efficiency, capped by the host PCIe link's achievable rate when a
  host link is given, exactly as the engine caps each NIC (``topology._build_out``). The line
  figure is the NIC's own; the cap shows in the achievable figure and in ``capped_by``.
* **the consequence**: the time of one all-reduce of the same size inside one node
  (1 node x G GPUs on the scale-up link) vs across nodes with one GPU per node (G nodes x 1 GPU
  on the scale-out link, ceil(NICs per node / G) NICs each), both from
  :func:`ibcalc.facade.estimate` with NCCL-like algorithm choice, and their ratio (slowdown).

The JSON of each result (``model_dump(mode="json")``) is what ``ibcalc gap --format json``
prints. The common pairings are data (``data/pairings.yaml``, each with its source). No I/O
beyond reading that file: rendering lives in :mod:`ibcalc.render.console` and
:mod:`ibcalc.render.plot`.
"""

from __future__ import annotations

import math
from functools import cache
from importlib import resources
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FieldSerializationInfo,
    PlainSerializer,
    computed_field,
    field_serializer,
)

from ibcalc.catalogue.load import find_link, find_system, link_role_refusal
from ibcalc.catalogue.models import Catalogue, Link, LinkKind, System
from ibcalc.cluster.resolve import (
    DOMAIN_ASSUMED_NOTE,
    DOMAIN_NOT_ASSUMED_NOTE,
    LOW_CONFIDENCE_NOTE,
    NOT_NCCL_NOTE,
    RCCL_NOTE,
    WAN_HOP_NOTE,
    catalogue_override_notes,
    check_count,
    check_domain_given,
    check_nic_default,
    default_gpus_per_node,
    gpu_fed_nic_Bps,
    instance_nics_note,
    instance_of,
    kept_preset_nics,
    nic_host_link,
    resized_nics_note,
    resolve_cluster,
    scaled_nics,
    scope_note,
)
from ibcalc.cluster.spec import (
    MAX_GPUS_PER_NODE,
    MAX_NICS_PER_NODE,
    MIN_PAIRING_GPUS_PER_NODE,
    MIN_TP_GPUS,
    ClusterSpec,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Collective, Estimate
from ibcalc.errors import ClusterError, SizeTooSmallError, expect_type
from ibcalc.facade import SIZE_ROUNDED_NOTE, cost_parameter_notes, estimate
from ibcalc.jsonmodel import JsonModel
from ibcalc.textsafe import shown
from ibcalc.units import (
    GB,
    fixed,
    format_bandwidth,
    format_ratio,
    format_size,
    format_time,
    json_bytes,
    parse_size,
    plural,
)
from ibcalc.yamlio import load_yaml, validate

__all__ = [
    "ALLREDUCE_SIZE_BYTES",
    "CONVENTIONS",
    "TP_DEFAULT_SIZE",
    "GapReport",
    "GapResult",
    "PairingLink",
    "PairingNode",
    "Pairings",
    "Placement",
    "TpWhatIf",
    "common_pairings",
    "gap",
    "gap_for_system",
    "gap_report",
    "load_pairings",
    "nics_per_gpu_node",
    "tp_whatif",
]

#: Size of the all-reduce that turns the bandwidth gap into a time (1 GB = 10^9 bytes).
ALLREDUCE_SIZE_BYTES = 1.0 * GB

#: One line stating the conventions; every table and JSON object of this module repeats it.
CONVENTIONS = (
    "per direction, per GPU; GB/s = 10^9 B/s; vendor 'bidirectional' GPU-link figures are 2x "
    "these (H100 NVLink 4: 900 GB/s bidirectional = 450 GB/s per direction); network Gb/s / 8 "
    "= GB/s; "
    "achievable = line rate x catalogue efficiency"
)

#: Message size of the tensor-parallel what-if when none is given: one layer's activations of a
#: large model (1 x 4096 tokens x 8192 hidden x 2 bytes is about 67 MB).
TP_DEFAULT_SIZE = "64 MB"

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class PairingLink(BaseModel):
    """A scale-up link of the common pairings table, and why it is there."""

    model_config = _FROZEN

    link: str
    why: str = Field(min_length=3)
    source: str = Field(min_length=3)


class PairingNode(BaseModel):
    """The node shape a scale-out link is paired with in :func:`common_pairings`."""

    model_config = _FROZEN

    inter: str
    gpus_per_node: int = Field(ge=1, le=MAX_GPUS_PER_NODE)
    nics_per_node: int = Field(ge=1, le=MAX_NICS_PER_NODE)
    why: str = Field(min_length=3)
    source: str = Field(min_length=3)


class Pairings(BaseModel):
    """``data/pairings.yaml``: the links :func:`common_pairings` compares."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    schema_: Literal["ibcalc-pairings/1"] = Field(alias="schema")
    intra: list[PairingLink] = Field(min_length=1)
    inter: list[PairingNode] = Field(min_length=1)


@cache
def load_pairings() -> Pairings:
    """The common pairings shipped with ibcalc (``data/pairings.yaml``), read once."""
    text = resources.files("ibcalc").joinpath("data", "pairings.yaml").read_text(encoding="utf-8")
    return validate(load_yaml("<built-in pairings>", text=text), Pairings)


#: An all-reduce's size, printed as whole bytes (units.json_bytes): the estimate's and the
#: sweep's JSON give 1000000000, not 1000000000.0
_WholeBytes = Annotated[float, PlainSerializer(json_bytes)]


class Placement(JsonModel):
    """One all-reduce of a gap comparison: where it ran and what it took (its JSON object)."""

    model_config = _FROZEN

    estimate: Estimate
    link: str
    #: NICs (or WAN links) per node of ``link``, when the estimate's own count is not theirs:
    #: across a WAN the estimate's NICs are its unused scale-out tier's
    nics: int | None = None

    json_keys: ClassVar[tuple[str, ...]] = (
        "nodes",
        "gpus_per_node",
        "nics_per_node",
        "link",
        "size_bytes",
        "time_s",
        "algorithm",
        "protocol",
        "busbw_GBps",
        "busbw_equivalent",
        "bottleneck",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nodes(self) -> int:
        """Nodes of this placement."""
        return self.estimate.nodes

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gpus_per_node(self) -> int:
        """GPUs per node of this placement."""
        return self.estimate.gpus_per_node

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nics_per_node(self) -> int | None:
        """NICs per node of this placement's link (WAN links, across sites); None inside one
        scale-up domain, where none carries the all-reduce."""
        return self.nics if self.nics is not None else self.estimate.nics_per_node

    @computed_field  # type: ignore[prop-decorator]
    @property
    def size_bytes(self) -> int | float:
        """Size of the all-reduce in bytes: a whole number of elements, printed as the estimate's
        and the sweep's JSON print it (1000000000, not 1000000000.0)."""
        return json_bytes(self.estimate.size_bytes)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_s(self) -> float:
        """Its predicted time."""
        return self.estimate.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algorithm(self) -> str:
        """The algorithm NCCL would choose here."""
        return self.estimate.best.algorithm.value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def protocol(self) -> str:
        """The protocol NCCL would choose here."""
        return self.estimate.best.protocol.value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_GBps(self) -> float:
        """Bus bandwidth in GB/s."""
        return self.estimate.busbw_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_equivalent(self) -> bool:
        """True when busbw is an equivalent figure (in-network reduction), not a wire rate."""
        return self.estimate.best.equivalent_busbw

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bottleneck(self) -> str:
        """What limits it."""
        return self.estimate.best.bottleneck


def _placed(inside: Estimate, across: Estimate) -> str:
    """An all-reduce placed inside a scale-up domain and across nodes, in the words of the
    results' one-line reprs: 'all-reduce of 1 GB fp32: 3.67 ms inside, 36.2 ms across (9.86x)'."""
    return (
        f"all-reduce of {format_size(inside.size_bytes)} {inside.dtype}: "
        f"{format_time(inside.time_s)} inside, {format_time(across.time_s)} across "
        f"({format_ratio(across.time_s / inside.time_s)})"
    )


class GapResult(JsonModel):
    """Scale-up vs scale-out bandwidth of one node shape, per GPU and per direction.

    Bandwidths are bytes per second per direction. ``inside`` is the all-reduce of
    ``allreduce_size_bytes`` on 1 node x ``gpus_per_node`` GPUs; ``across`` the same on
    ``gpus_per_node`` nodes x 1 GPU with ``across_nics_per_node`` NICs each.

    Its JSON gives bandwidths in GB/s (10^9 B/s), per direction: ``intra_GBps`` and
    ``inter_per_gpu_GBps`` are line rates per GPU, ``ratio_line`` their ratio; the
    ``*_achievable_*`` keys and ``ratio_achievable`` apply the catalogue efficiencies (and the
    host PCIe cap, named in ``capped_by``).
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    json_keys: ClassVar[tuple[str, ...]] = (
        "intra",
        "inter",
        "host_pcie",
        "system",
        "gpus_per_node",
        "nics_per_node",
        "nics_per_gpu",
        "inter_wan",
        "intra_GBps",
        "intra_achievable_GBps",
        "intra_duplex_efficiency",
        "intra_link_GBps",
        "intra_bidirectional_GBps",
        "nic_GBps",
        "nic_achievable_GBps",
        "inter_per_gpu_GBps",
        "inter_per_gpu_achievable_GBps",
        "inter_per_node_GBps",
        "inter_per_node_achievable_GBps",
        "capped_by",
        "ratio_line",
        "ratio_achievable",
        "allreduce_size_bytes",
        "allreduce_dtype",
        "allreduce_inside_s",
        "allreduce_across_s",
        "slowdown",
        "allreduce_inside",
        "allreduce_across",
        "conventions",
        "assumptions",
    )

    intra: str
    inter: str
    host_pcie: str | None
    system: str | None
    gpus_per_node: int
    nics_per_node: int
    intra_line_Bps: float
    intra_achievable_Bps: float
    #: the scale-up link's own line rate per GPU, the catalogue's, where the GPUs use less of it
    #: (a torus slice's ports, a mesh's links in use); None: all of it, ``intra_line_Bps``
    intra_link_line_Bps: float | None = None
    nic_line_Bps: float
    nic_achievable_Bps: float
    capped_by: str | None
    allreduce_size_bytes: _WholeBytes
    across_nics_per_node: int
    inside: Estimate
    across: Estimate
    assumptions: list[str]

    #: the "scale-out" link is a WAN: "across" is one site per GPU, and the NICs are WAN links
    inter_wan: bool = False
    #: the share of ``intra``'s achievable rate left each way when every GPU sends and receives
    #: at once (a one-node ring): the catalogue's duplex_efficiency (MI300X's mesh 0.875)
    intra_duplex_efficiency: float = 1.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def allreduce_dtype(self) -> str:
        """The element type the all-reduce is priced in (both placements'), beside its size as
        the TP what-if's ``dtype`` is: fp32 unless given (the JSON had given the size alone)."""
        return self.inside.dtype

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nics_per_gpu(self) -> float:
        """Scale-out NICs per GPU (may be fractional: 1 WAN link for 8 GPUs = 0.125)."""
        return self.nics_per_node / self.gpus_per_node

    @property
    def intra_bidirectional_Bps(self) -> float:
        """The scale-up link's rate as vendors quote it (both directions added): 2 x its line
        rate, the whole link's, not the share a slice uses (review DO: 8 TPU v5e chips, which
        use 3 of 4 ports, had read "vendor 'bidirectional': 300 GB/s" for Google's 400)."""
        link = self.intra_link_line_Bps
        return 2.0 * (link if link is not None else self.intra_line_Bps)

    @property
    def inter_line_Bps(self) -> float:
        """Scale-out line rate per GPU: NICs per node / GPUs per node x NIC line rate."""
        return self.nics_per_gpu * self.nic_line_Bps

    @property
    def inter_achievable_Bps(self) -> float:
        """Scale-out achievable rate per GPU (NIC efficiency, PCIe cap)."""
        return self.nics_per_gpu * self.nic_achievable_Bps

    @property
    def inter_node_line_Bps(self) -> float:
        """Scale-out line rate of the whole node: NICs x NIC line rate."""
        return self.nics_per_node * self.nic_line_Bps

    @property
    def inter_node_achievable_Bps(self) -> float:
        """Scale-out achievable rate of the whole node (the ring's per-rank ceiling)."""
        return self.nics_per_node * self.nic_achievable_Bps

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio_line(self) -> float:
        """Scale-up line rate / scale-out line rate, per GPU and direction."""
        return self.intra_line_Bps / self.inter_line_Bps

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio_achievable(self) -> float:
        """Scale-up achievable / scale-out achievable, per GPU and direction."""
        return self.intra_achievable_Bps / self.inter_achievable_Bps

    @computed_field  # type: ignore[prop-decorator]
    @property
    def slowdown(self) -> float:
        """Time of the all-reduce across nodes / time inside one node."""
        return self.across.time_s / self.inside.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def intra_GBps(self) -> float:
        """Scale-up line rate per GPU in GB/s."""
        return self.intra_line_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def intra_achievable_GBps(self) -> float:
        """Scale-up achievable rate per GPU in GB/s."""
        return self.intra_achievable_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def intra_link_GBps(self) -> float:
        """The scale-up link's own line rate per GPU in GB/s (the catalogue's), of which
        ``intra_GBps`` is the share these GPUs use."""
        return self.intra_bidirectional_Bps / 2.0 / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def intra_bidirectional_GBps(self) -> float:
        """Scale-up rate as vendors quote it (2 x line) in GB/s."""
        return self.intra_bidirectional_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nic_GBps(self) -> float:
        """One NIC's line rate in GB/s."""
        return self.nic_line_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nic_achievable_GBps(self) -> float:
        """One NIC's achievable rate (PCIe cap applied) in GB/s."""
        return self.nic_achievable_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inter_per_gpu_GBps(self) -> float:
        """Scale-out line rate per GPU in GB/s."""
        return self.inter_line_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inter_per_gpu_achievable_GBps(self) -> float:
        """Scale-out achievable rate per GPU in GB/s."""
        return self.inter_achievable_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inter_per_node_GBps(self) -> float:
        """Scale-out line rate of the node in GB/s."""
        return self.inter_node_line_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inter_per_node_achievable_GBps(self) -> float:
        """Scale-out achievable rate of the node in GB/s."""
        return self.inter_node_achievable_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def allreduce_inside_s(self) -> float:
        """Time of the all-reduce inside one node."""
        return self.inside.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def allreduce_across_s(self) -> float:
        """Time of the all-reduce across nodes."""
        return self.across.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def allreduce_inside(self) -> Placement:
        """The all-reduce inside one node, on the scale-up link."""
        return Placement(estimate=self.inside, link=self.intra)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def allreduce_across(self) -> Placement:
        """The all-reduce across nodes, on the scale-out link."""
        return Placement(estimate=self.across, link=self.inter, nics=self.across_nics_per_node)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def conventions(self) -> str:
        """The units and conventions of every figure (repeated in each result), the
        bidirectional example worked on this result's own scale-up link (it had named H100's
        NVLink 4 beside an nvlink3 or nvlink5 result: review EB 8)."""
        bidirectional, per_direction = self.intra_bidirectional_GBps, self.intra_link_GBps
        return CONVENTIONS.replace(
            "(H100 NVLink 4: 900 GB/s bidirectional = 450 GB/s per direction)",
            f"({self.intra}: {bidirectional:.4g} GB/s bidirectional = {per_direction:.4g} GB/s "
            "per direction)",
        )

    def __repr__(self) -> str:
        """The gap in one line, for a notebook (pydantic's repr ran to 2,400 characters):
        'GapResult(nvlink4 vs 8 x ndr per node of 8 GPUs, dgx-h100: 450 GB/s vs 50.0 GB/s per
        GPU per direction (9.00x line, 7.61x achievable); all-reduce of 1 GB fp32: 3.67 ms
        inside, 36.2 ms across (9.86x))'. The fields hold the numbers whole, ``model_dump()``
        every field."""
        shape = f"{self.nics_per_node} x {self.inter} per node of {self.gpus_per_node} GPUs"
        if self.system is not None:
            shape += f", {self.system}"
        capped = f", NICs capped by {self.capped_by}" if self.capped_by is not None else ""
        return (
            f"{type(self).__name__}({self.intra} vs {shape}: "
            f"{format_bandwidth(self.intra_line_Bps)} vs {format_bandwidth(self.inter_line_Bps)} "
            f"per GPU per direction ({format_ratio(self.ratio_line)} line, "
            f"{format_ratio(self.ratio_achievable)} achievable{capped}); "
            f"{_placed(self.inside, self.across)})"
        )

    __str__ = __repr__


class TpWhatIf(JsonModel):
    """One tensor-parallel all-reduce placed inside a node vs spread over nodes.

    Its JSON shows ``inside`` and ``across`` as :class:`Placement` objects.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    json_keys: ClassVar[tuple[str, ...]] = (
        "intra",
        "inter",
        "host_pcie",
        "tp",
        "size_bytes",
        "dtype",
        "requested_size_bytes",
        "inside_s",
        "across_s",
        "slowdown",
        "inside",
        "across",
        "assumptions",
    )

    intra: str
    inter: str
    host_pcie: str | None
    tp: int
    size_bytes: _WholeBytes
    across_nics_per_node: int
    inside: Estimate
    across: Estimate
    assumptions: list[str]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def dtype(self) -> str:
        """The element type the all-reduce is priced in (both placements'), as an estimate's
        JSON gives it beside its size: bf16 unless given (the assumptions had said it alone)."""
        return self.inside.dtype

    @computed_field  # type: ignore[prop-decorator]
    @property
    def requested_size_bytes(self) -> int | float:
        """The size asked for, before rounding to whole elements (``--tp-size 1001`` in bf16 runs
        1000 B), always given as an estimate's JSON gives it (it had given the run size alone)."""
        asked = self.inside.requested_size_bytes
        return json_bytes(asked if asked is not None else self.size_bytes)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def slowdown(self) -> float:
        """Time across nodes / time inside one node."""
        return self.across.time_s / self.inside.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inside_s(self) -> float:
        """Time of the all-reduce inside one node."""
        return self.inside.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def across_s(self) -> float:
        """Time of the all-reduce across nodes."""
        return self.across.time_s

    @field_serializer("inside", "across")
    def _placement(self, est: Estimate, info: FieldSerializationInfo) -> dict[str, Any]:
        # a dict, not the model: pydantic cannot reuse Placement's schema for a serializer's return
        link = self.intra if info.field_name == "inside" else self.inter
        nics = self.across_nics_per_node if info.field_name == "across" else None
        return Placement(estimate=est, link=link, nics=nics).model_dump(mode=info.mode)

    def __repr__(self) -> str:
        """The what-if in one line, for a notebook (pydantic's repr ran to 700 characters):
        'TpWhatIf(tp 8 on nvlink4 vs 8 nodes x 1 GPU with 1 x ndr each, all-reduce of 64 MB
        bf16: 495 us inside, 2.93 ms across (5.92x))'."""
        across = self.across
        apart = f"{across.sites} sites" if across.sites > 1 else f"{across.nodes} nodes"
        return (
            f"{type(self).__name__}(tp {self.tp} on {self.intra} vs {apart} x "
            f"{plural(across.gpus_per_node, 'GPU')} with {self.across_nics_per_node} x "
            f"{self.inter} each, "
            f"{_placed(self.inside, self.across)})"
        )

    __str__ = __repr__


class GapReport(BaseModel):
    """What ``ibcalc gap`` shows: the table of common pairings, or one pairing and a TP what-if."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    common: bool = Field(description="True: the common pairings table (no one pairing named).")
    pairings: list[GapResult]
    tp: TpWhatIf | None = None


def _link(catalogue: Catalogue, name: str, field: str, role: str | None = None) -> Link:
    link = find_link(catalogue, name, role=role or field)
    refused = link_role_refusal(link, role or field, field, name)
    if refused:
        raise refused
    return link


def nics_per_gpu_node(nics_per_node: int, gpus_per_node: int) -> int:
    """NICs given to a node that holds one GPU: NICs per GPU rounded up, at least 1.

    A node with 8 GPUs and 32 NICs gives each GPU 4; 8 GPUs with 4 NICs (AWS p4d) or a single
    WAN link still leave a one-GPU node one whole NIC (a share cannot be installed).
    """
    return max(1, math.ceil(nics_per_node / gpus_per_node))


def _placements(
    catalogue: Catalogue,
    intra: Link,
    inter: Link,
    host_pcie: Link | None,
    *,
    ranks: int,
    across_nics: int,
    size_bytes: float,
    system: str | None,
    dtype: str,
    domain_nodes: int = 1,
    params: CostParams | None = None,
) -> tuple[Estimate, Estimate]:
    """All-reduce of ``size_bytes`` inside one scale-up domain (``domain_nodes`` nodes x
    ``ranks`` GPUs; 1 node unless the system's domain spans several) and on as many nodes x 1
    GPU."""
    host = host_pcie.id if host_pcie is not None else None
    inside = estimate(
        catalogue,
        ClusterSpec(
            nodes=domain_nodes,
            gpus_per_node=ranks,
            intra=intra.id,
            system=system,
            host_pcie=host,
        ),
        Collective.ALL_REDUCE,
        size_bytes,
        dtype=dtype,
        params=params,
    )
    nodes = ranks * domain_nodes
    if inter.kind is LinkKind.WAN:
        # a WAN joins sites, not nodes: each one-GPU node is a site, and the WAN model bounds
        # the rate by NCCL's buffers in flight per round trip (docs/model.md#wan-sites)
        links: dict[str, Any] = {"sites": nodes, "wan": inter.id, "wan_links": across_nics}
    else:
        links = {"inter": inter.id, "nics_per_node": across_nics}
    across_spec = ClusterSpec(nodes=nodes, gpus_per_node=1, system=system, host_pcie=host, **links)
    across = estimate(
        catalogue,
        across_spec,
        Collective.ALL_REDUCE,
        size_bytes,
        dtype=dtype,
        params=params,
    )
    return inside, across


def gap(
    catalogue: Catalogue,
    intra: str,
    inter: str,
    gpus_per_node: int,
    nics_per_node: int,
    host_pcie: str | None = None,
    *,
    system: str | None = None,
    size_bytes: float = ALLREDUCE_SIZE_BYTES,
    dtype: str = "fp32",
    domain_nodes: int = 1,
    params: CostParams | None = None,
) -> GapResult:
    """Compare scale-up and scale-out bandwidth per GPU (per direction) for one node shape.

    ``intra`` is a scale-up (or PCIe) link id, ``inter`` a scale-out or WAN link id,
    ``host_pcie`` the PCIe link each NIC sits on (caps the NIC's achievable rate). ``system``
    only lends its GPU generation and NVSwitch flag to the two all-reduce estimates, and
    ``domain_nodes`` the nodes of its scale-up domain (an NVL72 rack is 18 trays of 4 GPUs):
    the inside all-reduce then runs on the whole domain, the across one on as many GPUs; both
    are priced with ``params`` (default: the built-in cost parameters). Raises
    :class:`~ibcalc.errors.UnknownNameError` for unknown names (with suggestions) and
    `~ibcalc.errors.ClusterError` for links of the wrong kind or counts out of range.
    """
    gpus_per_node = check_count(
        "gpus_per_node", gpus_per_node, MIN_PAIRING_GPUS_PER_NODE, MAX_GPUS_PER_NODE
    )
    nics_per_node = check_count("nics_per_node", nics_per_node, 1, MAX_NICS_PER_NODE)
    up = _link(catalogue, intra, "intra")
    out = _link(catalogue, inter, "inter", "gap_inter")
    host = _link(catalogue, host_pcie, "host_pcie") if host_pcie is not None else None
    if system is not None:
        system = find_system(catalogue, system).id
    notes: list[str] = []
    host, bus_note = nic_host_link(host, up)

    # The engine's own tier 0 for this node: mesh links count only the links in use.
    node = resolve_cluster(
        catalogue,
        ClusterSpec(nodes=1, gpus_per_node=gpus_per_node, intra=up.id, system=system),
        nodes_field=None,  # one node: no nodes to add
    )
    tier = node.topology.up
    assert tier is not None  # gpus_per_node >= 2 always builds a scale-up tier
    # what the estimates say of this link: a mesh's links in use, the library that drives it
    # (RCCL; TPU, Gaudi and Ascend, not NCCL, which gap had left out), a low catalogue grade,
    # a domain no preset builds (-g 16 on a DGX H100, 8 GPUs on a two-GPU bridge: gap had
    # priced them at the link's rate without a word), a preset's domain across nodes dropped
    # for a node resized (-g 8 on a GB200 NVL72: one 8-GPU node, not the rack)
    notes.extend(
        n
        for n in node.assumptions
        if (("mesh" in n or " is a torus: " in n) and n not in node.alltoall_notes)
        or n.startswith((RCCL_NOTE, LOW_CONFIDENCE_NOTE))
        or n.endswith(DOMAIN_NOT_ASSUMED_NOTE)
        or NOT_NCCL_NOTE in n
        or DOMAIN_ASSUMED_NOTE in n
    )
    scope = scope_note(up)
    if scope is not None:
        notes.append(scope)
    if tier.duplex_efficiency < 1:
        # the table's achievable rate is one direction's; a collective sends both ways at once
        notes.append(
            f"{up.id} moves {tier.duplex_efficiency:g} of its rate each way when both directions "
            "are busy (duplex_efficiency): "
            f"{fixed(tier.bw_Bps * tier.duplex_efficiency / GB, 0)} GB/s per GPU in the one-node "
            f"collectives below, against {fixed(tier.bw_Bps / GB, 0)} GB/s one way"
        )

    nic_line = out.per_direction_Bps
    nic_achievable = out.achievable_Bps
    capped_by: str | None = None
    if host is not None and host.achievable_Bps < nic_achievable:
        nic_achievable = host.achievable_Bps
        capped_by = host.id
        notes.append(
            f"each {out.id} NIC ({nic_line / GB:g} GB/s line, {fixed(out.achievable_Bps / GB, 1)} "
            f"GB/s achievable) is capped by "
            + (f"{host.id}, {bus_note}," if bus_note else f"its {host.id} host link")
            + f" at {fixed(host.achievable_Bps / GB, 1)} GB/s achievable"
        )
    fed = (
        gpu_fed_nic_Bps(nic_achievable, host, nics_per_node, gpus_per_node)
        if host is not None
        else None
    )
    if host is None and out.kind is not LinkKind.WAN:
        # without a host link nothing caps a NIC: XDR's 97.5 GB/s then stands where a DGX B200's
        # PCIe Gen5 x16 carries 50.4 GB/s (gap --system dgx-b200 --inter xdr: 14.3x, not 7.4x)
        notes.append(
            f"each {out.id} NIC at its own achievable rate: no host PCIe link given "
            "({host_pcie} or {system} sets one, which caps a NIC faster than the GPU's link)"
        )
    if host is not None and fed is not None:  # as the engine's scale-out tier
        nic_achievable = fed
        capped_by = host.id
        notes.append(
            f"{nics_per_node} {out.id} NICs for {gpus_per_node} GPUs exceed what each GPU's "
            f"{host.id} link can feed ({fixed(host.achievable_Bps / GB, 1)} GB/s achievable): "
            f"each NIC gets {fixed(nic_achievable / GB, 1)} GB/s"
        )
    if out.scope not in ("per-port", "per-link"):
        notes.append(f"{out.id} is a {out.scope} figure; it is counted once per NIC here")

    across_nics = nics_per_gpu_node(nics_per_node, gpus_per_node)
    share = nics_per_node / gpus_per_node
    if across_nics != share:
        unit = "site" if out.kind is LinkKind.WAN else "node"
        notes.append(
            f"across {unit}s each one-GPU {unit} gets {across_nics} x {out.id} "
            f"(a {unit} of {gpus_per_node} GPUs has {nics_per_node}, {share:g} per GPU, "
            "rounded up)"
        )
    inside, across = _placements(
        catalogue,
        up,
        out,
        host,
        ranks=gpus_per_node,
        across_nics=across_nics,
        size_bytes=size_bytes,
        system=system,
        dtype=dtype,
        domain_nodes=domain_nodes,
        params=params,
    )
    if out.kind is LinkKind.WAN:
        # the across rate rests on the WAN's latency (NCCL's buffers in flight per round trip
        # bound it) and on a low-grade entry: said as the estimate says them (gap had printed
        # 4.19 GB/s usable of wan-100g's 11.3 without the 1 ms it assumed)
        notes.extend(
            n
            for n in across.assumptions
            if (n.endswith(WAN_HOP_NOTE) or n.startswith(LOW_CONFIDENCE_NOTE)) and n not in notes
        )
    return GapResult(
        intra=up.id,
        inter=out.id,
        host_pcie=host.id if host is not None else None,
        system=system,
        gpus_per_node=gpus_per_node,
        nics_per_node=nics_per_node,
        intra_line_Bps=tier.line_Bps,
        intra_achievable_Bps=tier.bw_Bps,
        intra_link_line_Bps=(
            up.per_direction_Bps if tier.line_Bps < up.per_direction_Bps * (1 - 1e-9) else None
        ),
        nic_line_Bps=nic_line,
        nic_achievable_Bps=nic_achievable,
        capped_by=capped_by,
        allreduce_size_bytes=inside.size_bytes,
        across_nics_per_node=across_nics,
        inside=inside,
        across=across,
        assumptions=notes,
        inter_wan=out.kind is LinkKind.WAN,
        intra_duplex_efficiency=tier.duplex_efficiency,
    )


def _default_nics(catalogue: Catalogue, inter: str, gpus: int) -> tuple[int, str, System | None]:
    """NICs per node when none is given, the assumption that says so, and the instance preset
    they come from (None if none): a WAN's one link per node; a cloud-only fabric's instance
    count per GPU, as the estimate commands take it (cluster.resolve.instance_of; efa-v2: 4 per
    GPU, as on AWS p5); else one NIC per GPU."""
    link = find_link(catalogue, inter, role="gap_inter")
    if link.kind is LinkKind.WAN:
        return 1, f"1 x {link.id} per node (one site each) assumed ({{nics_per_node}})", None
    instance = instance_of(catalogue, link)
    if instance is not None:  # as the estimate commands take it (cluster.resolve)
        nics = scaled_nics(instance, gpus)
        return nics, instance_nics_note(link, instance, nics), instance
    check_nic_default(gpus, gpus, "one per GPU")
    return gpus, f"{plural(gpus, 'NIC')} per node (one per GPU) assumed ({{nics_per_node}})", None


def gap_for_system(
    catalogue: Catalogue,
    system: str,
    *,
    intra: str | None = None,
    inter: str | None = None,
    gpus_per_node: int | None = None,
    nics_per_node: int | None = None,
    host_pcie: str | None = None,
    scale_up_domain: int | None = None,
    params: CostParams | None = None,
) -> GapResult:
    """:func:`gap` for a system preset, each field overridable (``scale_up_domain``: the GPUs
    of the inside domain where the preset's spans nodes, as ``ClusterSpec.scale_up_domain``).

    The preset's NIC count is used with the preset's own fabric, and kept for another ``inter``
    as the estimates keep it (:func:`~ibcalc.cluster.resolve.kept_preset_nics`: its ports, or
    its line rate per GPU where it has more than one NIC per GPU); otherwise (a cloud-only link
    either side) :func:`_default_nics` (a cloud-only fabric's instance count per GPU, one per
    node for a WAN, else one per GPU), unless ``nics_per_node`` says otherwise.
    """
    preset = find_system(catalogue, system)
    intra_id = intra or preset.intra
    inter_id = inter or preset.inter
    if intra_id is None:
        raise ClusterError(
            f"system {preset.id} has no scale-up link; give {{intra}}", field="intra"
        )
    if inter_id is None:
        raise ClusterError(
            f"system {preset.id} has no scale-out fabric; give {{inter}}", field="inter"
        )
    gpus = gpus_per_node or preset.gpus_per_node
    if gpus_per_node is None and gpus < MIN_PAIRING_GPUS_PER_NODE:
        # the preset's own count, not a -g given: say so (it blamed --gpus-per-node)
        raise ClusterError(
            f"{preset.id} has {plural(gpus, 'GPU')} per node, and gap compares GPUs inside a "
            f"node with GPUs across nodes: give {{gpus_per_node}} {MIN_PAIRING_GPUS_PER_NODE} "
            "or more",
            field="gpus_per_node",
        )
    notes: list[str] = []
    domain_nodes = 1
    own_link = find_link(catalogue, intra_id).id == preset.intra
    domain_gpus = preset.scale_up_domain
    if scale_up_domain is not None:
        check_domain_given(preset, scale_up_domain, gpus, resized=gpus != preset.gpus_per_node)
        if scale_up_domain > gpus and not own_link:
            raise ClusterError(
                f"{{scale_up_domain}} {scale_up_domain} spans nodes on {preset.id}'s own "
                f"scale-up link ({preset.intra}), not on {{intra}} {intra_id}",
                field="scale_up_domain",
                value=str(scale_up_domain),
                others={"intra": intra_id},
            )
        domain_gpus = scale_up_domain
    if gpus == preset.gpus_per_node and domain_gpus > gpus and own_link:
        # a domain larger than a node (NVL72): compare the whole domain with the network
        domain_nodes = domain_gpus // gpus
        # the {scale_up_domain} mark is named as the caller's flag or key
        built = (
            f"as {preset.id} builds it"
            if scale_up_domain is None
            else f"as {{scale_up_domain}} {scale_up_domain} sets it"
        )
        notes.append(
            f"inside: one {intra_id} domain of {domain_nodes * gpus} GPUs ({domain_nodes} nodes "
            f"of {gpus}), {built}; across: as many GPUs, one per node"
        )
    if nics_per_node is not None:
        nics = nics_per_node
    elif find_link(catalogue, inter_id).id == preset.inter and preset.nics_per_node > 0:
        nics = preset.nics_per_node
        if gpus != preset.gpus_per_node:  # its NICs per GPU kept, as the estimates keep them
            nics = scaled_nics(preset, gpus)
            notes.append(resized_nics_note(preset, nics, gpus))
    elif kept := kept_preset_nics(
        catalogue, preset, find_link(catalogue, inter_id), gpus, check=True
    ):
        nics = kept[0]
        notes.append(kept[1])
    else:
        nics, note, _ = _default_nics(catalogue, inter_id, gpus)
        notes.append(note)
    result = gap(
        catalogue,
        intra_id,
        inter_id,
        gpus,
        nics,
        host_pcie=host_pcie or preset.host_pcie,
        system=preset.id,
        domain_nodes=domain_nodes,
        params=params,
    )
    notes.insert(0, f"node shape from {preset.id} ({preset.name})")
    return result.model_copy(update={"assumptions": notes + result.assumptions})


def common_pairings(catalogue: Catalogue, params: CostParams | None = None) -> list[GapResult]:
    """The gap for every common scale-up link against every common scale-out link.

    The links and node shapes are :func:`load_pairings` (``data/pairings.yaml``): each scale-up
    link in each scale-out link's node, with the NIC count that fabric usually has. No host PCIe
    cap is applied but the GPUs' own link where they meet over PCIe (:func:`nic_host_link`):
    this is a comparison of links (use :func:`gap` with ``host_pcie`` or :func:`gap_for_system`
    for a real node).
    """
    pairings = load_pairings()
    expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")
    results: list[GapResult] = []
    for up in pairings.intra:
        for node in pairings.inter:
            result = gap(
                catalogue,
                up.link,
                node.inter,
                node.gpus_per_node,
                node.nics_per_node,
                params=params,
            )
            if node.nics_per_node != node.gpus_per_node:
                result = result.model_copy(
                    update={"assumptions": [f"{node.inter}: {node.why}", *result.assumptions]}
                )
            results.append(result)
    return results


def tp_whatif(
    catalogue: Catalogue,
    intra: str,
    inter: str,
    tp: int,
    size_bytes: float,
    *,
    nics_per_node: int = 1,
    host_pcie: str | None = None,
    system: str | None = None,
    dtype: str = "bf16",
    gpus_per_node: int | None = None,
    params: CostParams | None = None,
) -> TpWhatIf:
    """A tensor-parallel all-reduce of ``size_bytes`` on ``tp`` GPUs: inside one node or not.

    Inside: 1 node x ``tp`` GPUs on ``intra``, or, when a scale-up domain spans several nodes
    of ``gpus_per_node`` GPUs and ``tp`` is a multiple of it, ``tp / gpus_per_node`` such nodes
    of that domain (another ``tp`` above ``gpus_per_node`` is refused). Across: ``tp`` nodes x
    1 GPU on ``inter`` with ``nics_per_node`` NICs each (each node holds one GPU, so give it
    that GPU's NICs). The same bytes move in both; only
    the links differ. Returns both estimates and the slowdown, priced with ``params`` (default:
    the built-in cost parameters).
    """
    expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")
    tp = check_count("tp", tp, MIN_TP_GPUS, MAX_GPUS_PER_NODE)
    nics_per_node = check_count("nics_per_node", nics_per_node, 1, MAX_NICS_PER_NODE)
    if gpus_per_node is not None:
        # 0 had ended in ZeroDivisionError (tp % 0)
        gpus_per_node = check_count("gpus_per_node", gpus_per_node, 1, MAX_GPUS_PER_NODE)
    up = _link(catalogue, intra, "intra")
    out = _link(catalogue, inter, "inter", "gap_inter")
    host = _link(catalogue, host_pcie, "host_pcie") if host_pcie is not None else None
    host, bus_note = nic_host_link(host, up)
    if system is not None:
        system = find_system(catalogue, system).id
    ranks, domain_nodes = tp, 1
    if gpus_per_node is not None and tp > gpus_per_node:
        if tp % gpus_per_node:
            # a node of tp GPUs does not exist, and the domain is built of whole nodes
            raise ClusterError(
                f"{{tp}} {tp} does not fill whole nodes of {gpus_per_node} GPUs of the "
                f"scale-up domain: give a multiple of {gpus_per_node}, or at most "
                f"{gpus_per_node}",
                field="tp",
                value=str(tp),
            )
        ranks, domain_nodes = gpus_per_node, tp // gpus_per_node
    inside, across = _placements(
        catalogue,
        up,
        out,
        host,
        ranks=ranks,
        across_nics=nics_per_node,
        size_bytes=size_bytes,
        system=system,
        dtype=dtype,
        domain_nodes=domain_nodes,
        params=params,
    )
    unit, link_word = ("site", "WAN link") if out.kind is LinkKind.WAN else ("node", "NIC")
    where = (
        f"{domain_nodes} nodes x {ranks} in one {up.id} domain"
        if domain_nodes > 1
        else f"1 node x {tp} on {up.id}"
    )
    notes = [
        f"the same all-reduce of {format_size(inside.size_bytes, typed=True)} ({dtype}) over "
        f"{tp} GPUs: {where} vs {tp} {unit}s x 1 on {out.id} "
        f"({nics_per_node} {link_word}{'s' if nics_per_node != 1 else ''} each)",
        # a size of no whole number of elements (--tp-size 1001 in bf16: 1000 B), said as an
        # estimate says it (it had been rounded unsaid); both placements round it alike
        *(n for n in inside.assumptions if n.startswith(SIZE_ROUNDED_NOTE)),
        f"inside: {inside.best.algorithm.value}/{inside.best.protocol.value}; "
        f"across: {across.best.algorithm.value}/{across.best.protocol.value} "
        "(NCCL-like choice in each placement)",
        *([f"across, the NICs are capped by {host.id}, {bus_note}"] if host and bus_note else []),
    ]
    return TpWhatIf(
        intra=up.id,
        inter=out.id,
        host_pcie=host.id if host is not None else None,
        tp=tp,
        size_bytes=inside.size_bytes,
        across_nics_per_node=nics_per_node,
        inside=inside,
        across=across,
        assumptions=notes,
    )


def _common(
    catalogue: Catalogue, intra: str | None, inter: str | None, params: CostParams | None
) -> list[GapResult]:
    """The common pairings, only those with ``intra`` and/or ``inter`` when given."""
    results = common_pairings(catalogue, params)
    if intra is not None:
        wanted = find_link(catalogue, intra, role="intra").id
        results = [r for r in results if r.intra == wanted]
    if inter is not None:
        wanted = find_link(catalogue, inter, role="gap_inter").id
        results = [r for r in results if r.inter == wanted]
    if not results:
        given, field = (intra, "intra") if intra is not None else (inter, "inter")
        raise ClusterError(
            f"{shown(given)} is not in the common pairings; give both {{intra}} and {{inter}} "
            "to compare any two links",
            field=field,
        )
    return results


def _one_pairing(
    catalogue: Catalogue, spec: ClusterSpec, params: CostParams | None
) -> tuple[GapResult, int]:
    """The pairing ``spec`` names (a system, or an intra and an inter link) and its domain size."""
    if spec.system is not None:
        result = gap_for_system(
            catalogue,
            spec.system,
            intra=spec.intra,
            inter=spec.inter,
            gpus_per_node=spec.gpus_per_node,
            nics_per_node=spec.nics_per_node,
            host_pcie=spec.host_pcie,
            scale_up_domain=spec.scale_up_domain,
            params=params,
        )
        if spec.gpus_per_node is not None:
            return result, spec.gpus_per_node
        if spec.scale_up_domain is not None:
            return result, spec.scale_up_domain
        return result, find_system(catalogue, spec.system).scale_up_domain
    assert spec.intra is not None
    assert spec.inter is not None
    notes: list[str] = []
    if spec.gpus_per_node is not None:
        gpus = spec.gpus_per_node
    else:
        gpus, note = default_gpus_per_node(catalogue, spec.intra)
        notes.append(note)
    host_pcie = spec.host_pcie
    if spec.nics_per_node is not None:
        nics = spec.nics_per_node
    else:
        nics, note, instance = _default_nics(catalogue, spec.inter, gpus)
        notes.append(note)
        # a cloud-only fabric's NICs sit on its instance's host links, as in the estimates
        if host_pcie is None and instance is not None:
            host_pcie = instance.host_pcie
    result = gap(catalogue, spec.intra, spec.inter, gpus, nics, host_pcie=host_pcie, params=params)
    return result.model_copy(update={"assumptions": notes + result.assumptions}), gpus


#: ClusterSpec fields the gap reads; any other field set is refused rather than ignored.
_GAP_FIELDS = frozenset(
    {"intra", "inter", "system", "gpus_per_node", "nics_per_node", "host_pcie", "scale_up_domain"}
)


def _overrides(
    catalogue: Catalogue, result: GapResult, params: CostParams | None = None
) -> GapResult:
    """``result`` with the catalogue's and cost parameters' override files named first among
    its assumptions, as every estimate names them (a site's NDR efficiency of 0.88 had given
    44.0 GB/s achievable with nothing saying whose figure it was: review BL; the cost
    parameters had not been read at all: review CB)."""
    notes = catalogue_override_notes(catalogue) + cost_parameter_notes(params)
    if not notes:
        return result
    return result.model_copy(update={"assumptions": [*notes, *result.assumptions]})


def gap_report(
    catalogue: Catalogue,
    spec: ClusterSpec,
    *,
    tp: int | None = None,
    tp_size_bytes: float | None = None,
    params: CostParams | None = None,
) -> GapReport:
    """The gap ``spec`` asks for: one pairing, or the common pairings table.

    One pairing when ``spec`` names a ``system``, or both ``intra`` and ``inter``: its gap, and
    with ``tp`` a tensor-parallel what-if (an all-reduce of ``tp_size_bytes``, default
    :data:`TP_DEFAULT_SIZE`, on ``tp`` GPUs inside one scale-up domain vs across ``tp`` nodes).
    Otherwise the :func:`common_pairings`, only those with ``intra`` or ``inter`` when one is
    given; options that describe one pairing are refused there. Every all-reduce is priced with
    ``params`` (default: the built-in cost parameters), whose override files the assumptions
    name, as the catalogue's. Errors name fields
    (:class:`~ibcalc.errors.ClusterError`), ``tp`` and ``tp_size_bytes`` included.
    """
    for name, info in ClusterSpec.model_fields.items():
        if name not in _GAP_FIELDS and getattr(spec, name) != info.default:
            raise ClusterError(
                f"{{{name}}} does not apply to the gap (it compares the links of one node)",
                field=name,
            )
    if spec.system is None and (spec.intra is None or spec.inter is None):
        for name, value in (
            ("gpus_per_node", spec.gpus_per_node),
            ("nics_per_node", spec.nics_per_node),
            ("host_pcie", spec.host_pcie),
            ("scale_up_domain", spec.scale_up_domain),
            ("tp", tp),
            ("tp_size_bytes", tp_size_bytes),
        ):
            if value is not None:
                raise ClusterError(
                    f"{{{name}}} describes one pairing: give {{intra}} and {{inter}}, "
                    "or {system}",
                    field=name,
                )
        return GapReport(
            common=True,
            pairings=[
                _overrides(catalogue, r, params)
                for r in _common(catalogue, spec.intra, spec.inter, params)
            ],
        )
    result, domain = _one_pairing(catalogue, spec, params)
    result = _overrides(catalogue, result, params)
    if tp is None:
        if tp_size_bytes is not None:
            raise ClusterError(
                "{tp_size_bytes} needs {tp} T (the tensor-parallel degree)", field="tp_size_bytes"
            )
        return GapReport(common=False, pairings=[result])
    if tp > domain:
        raise ClusterError(
            f"{{tp}} {tp} does not fit inside one scale-up domain of {domain} GPUs",
            field="tp",
            value=str(tp),
        )
    try:
        whatif = tp_whatif(
            catalogue,
            result.intra,
            result.inter,
            tp,
            tp_size_bytes if tp_size_bytes is not None else parse_size(TP_DEFAULT_SIZE),
            nics_per_node=nics_per_gpu_node(result.nics_per_node, result.gpus_per_node),
            host_pcie=result.host_pcie,
            system=result.system,
            gpus_per_node=result.gpus_per_node if domain > result.gpus_per_node else None,
            params=params,
        )
    except SizeTooSmallError as exc:
        if tp_size_bytes is None:
            raise
        # 'size 1 B is smaller than one bf16 element' had named no option: the size is the
        # what-if's, its field's
        value = format_size(tp_size_bytes, typed=True)
        raise ClusterError(
            "{tp_size_bytes} " + str(exc).removeprefix("size "), field="tp_size_bytes", value=value
        ) from None
    if tp_size_bytes is None:
        note = f"TP all-reduce size {TP_DEFAULT_SIZE} assumed ({{tp_size_bytes}})"
        whatif = whatif.model_copy(update={"assumptions": [note, *whatif.assumptions]})
    return GapReport(common=False, pairings=[result], tp=whatif)
