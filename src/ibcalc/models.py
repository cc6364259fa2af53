"""Frozen pydantic models: catalogue links and systems, resolved clusters, tiers and estimates.

Catalogue files write quantities as strings with units (``"400 Gb/s"``, ``"5 us"``); the models
convert them on input to SI floats whose field names carry the unit (``per_direction_Bps``,
``latency_s``). Bandwidths are per direction unless a field name says ``bidirectional``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ibcalc.units import parse_bandwidth, parse_time

__all__ = [
    "Algorithm",
    "Catalogue",
    "Collective",
    "Confidence",
    "Cost",
    "Estimate",
    "Link",
    "LinkKind",
    "Protocol",
    "ScaleOutTier",
    "ScaleUpTier",
    "System",
]


def _bandwidth(value: Any) -> Any:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return parse_bandwidth(value)
    return value


def _time(value: Any) -> Any:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return parse_time(value)
    return value


Bandwidth = Annotated[float, BeforeValidator(_bandwidth)]
Seconds = Annotated[float, BeforeValidator(_time)]
Fraction = Annotated[float, Field(gt=0.0, le=1.0)]
Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.+-]*$", max_length=64)]

_FROZEN = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class LinkKind(StrEnum):
    """Where a link sits in a cluster."""

    SCALE_UP = "scale-up"
    SCALE_OUT = "scale-out"
    HOST = "host"
    WAN = "wan"


class Confidence(StrEnum):
    """How well the sources support an entry (link_specs.md section 0)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Collective(StrEnum):
    """Collectives, named as NCCL and nccl-tests name them."""

    ALL_REDUCE = "all_reduce"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_GATHER = "all_gather"
    BROADCAST = "broadcast"
    REDUCE = "reduce"
    ALL_TO_ALL = "alltoall"
    SEND_RECV = "sendrecv"


class Algorithm(StrEnum):
    """Algorithms the engine models (NCCL names where NCCL has one)."""

    RING = "ring"
    TREE = "tree"
    NVLS = "nvls"
    NVLS_TREE = "nvlstree"
    COLLNET_DIRECT = "collnet"
    COLLNET_CHAIN = "collnetchain"
    HIERARCHICAL = "hierarchical"
    RHD = "rhd"
    PAT = "pat"
    PAIRWISE = "pairwise"
    PXN = "pxn"
    P2P = "p2p"


class Protocol(StrEnum):
    """NCCL protocols."""

    LL = "LL"
    LL128 = "LL128"
    SIMPLE = "Simple"


class Link(BaseModel):
    """One interconnect of the catalogue. All rates are per direction unless named otherwise."""

    model_config = _FROZEN

    id: Identifier
    aliases: list[Identifier] = Field(default_factory=list)
    name: str
    kind: LinkKind
    family: str
    generation: str
    scope: Literal["per-gpu", "per-port", "per-link", "per-node", "per-flow"]
    per_direction_Bps: Bandwidth = Field(alias="per_direction", gt=0)
    bidirectional_Bps: Bandwidth | None = Field(default=None, alias="bidirectional")
    links: int | None = Field(default=None, ge=1, le=4096)
    lanes_per_link: int | None = Field(default=None, ge=1, le=64)
    lane_signalling_Bps: Bandwidth | None = Field(default=None, alias="lane_signalling")
    encoding: str | None = None
    encoding_efficiency: Fraction | None = None
    efficiency: Fraction
    efficiency_source: str = Field(min_length=3)
    duplex_efficiency: Fraction = 1.0
    duplex_efficiency_source: str | None = None
    nvls_efficiency: Fraction | None = None
    nvls_efficiency_source: str | None = None
    latency_s: Seconds | None = Field(default=None, alias="latency")
    latency_source: str | None = None
    transport_latency_s: Seconds = Field(default=0.0, alias="transport_latency")
    transport_latency_source: str | None = None
    topology: Literal["switched", "mesh", "torus", "bridge", "ring", "host-staged"] | None = None
    capabilities: list[
        Literal["nvls", "sharp", "multicast", "gpudirect-rdma", "adaptive-routing"]
    ] = Field(default_factory=list)
    pcie_host: str | None = None
    sources: list[str] = Field(min_length=1)
    confidence: Confidence
    notes: str | None = None

    @field_validator("sources")
    @classmethod
    def _sources_not_blank(cls, value: list[str]) -> list[str]:
        if any(not s.strip() for s in value):
            raise ValueError("a source must not be blank")
        return value

    @property
    def achievable_Bps(self) -> float:
        """Per-direction bandwidth a collective can use at large sizes: line rate x efficiency."""
        return self.per_direction_Bps * self.efficiency

    @property
    def names(self) -> list[str]:
        """The id followed by every alias."""
        return [self.id, *self.aliases]


class System(BaseModel):
    """A node or scale-up-domain preset users think in (dgx-h100, aws-p5, gb200-nvl72 ...)."""

    model_config = _FROZEN

    id: Identifier
    aliases: list[Identifier] = Field(default_factory=list)
    name: str
    gpu: str
    gpu_arch: Literal[
        "pascal",
        "volta",
        "turing",
        "ampere",
        "ada",
        "hopper",
        "blackwell",
        "cdna2",
        "cdna3",
        "cdna4",
        "tpu",
        "gaudi",
        "ascend",
    ]
    gpus_per_node: int = Field(ge=1, le=1024)
    scale_up_domain: int = Field(ge=1, le=100_000)
    intra: str | None = None
    nvswitch: bool = False
    nics_per_node: int = Field(ge=0, le=256)
    inter: str | None = None
    host_pcie: str | None = None
    sources: list[str] = Field(min_length=1)
    confidence: Confidence
    notes: str | None = None

    @property
    def names(self) -> list[str]:
        """The id followed by every alias."""
        return [self.id, *self.aliases]


class Catalogue(BaseModel):
    """The whole catalogue: links and system presets, after checks."""

    model_config = _FROZEN

    links: list[Link]
    systems: list[System]
    origins: list[str] = Field(default_factory=list)


class ScaleUpTier(BaseModel):
    """Tier 0: GPUs sharing a scale-up fabric (NVLink/NVSwitch, xGMI mesh, PCIe).

    ``bw_Bps`` is what one GPU can send per direction through the fabric in a ring or
    point-to-point pattern; ``nvls_bw_Bps`` the per-GPU bandwidth of NVLink SHARP reductions.
    """

    model_config = _FROZEN

    link_id: str
    gpus: int = Field(ge=1)
    line_Bps: float = Field(gt=0)
    bw_Bps: float = Field(gt=0)
    duplex_efficiency: float = Field(default=1.0, gt=0, le=1)
    nvls_bw_Bps: float | None = None
    transport_latency_s: float = Field(default=0.0, ge=0)
    path: Literal["nvlink", "pci"] = "nvlink"
    mesh: bool = False


class ScaleOutTier(BaseModel):
    """Tier 1: the fabric between scale-up domains.

    ``nic_bw_Bps`` is one NIC's achievable per-direction bandwidth after the PCIe cap;
    ``domain_bw_Bps`` = NICs per domain x that.
    """

    model_config = _FROZEN

    link_id: str
    domains: int = Field(ge=1)
    nics_per_domain: int = Field(ge=1)
    nic_line_Bps: float = Field(gt=0)
    nic_bw_Bps: float = Field(gt=0)
    transport_latency_s: float = Field(default=0.0, ge=0)
    sharp: bool = False
    oversubscription: float = Field(default=1.0, ge=1.0)
    cross_leaf_fraction: float = Field(default=1.0, ge=0.0, le=1.0)

    @property
    def domain_bw_Bps(self) -> float:
        """Aggregate achievable injection bandwidth of one domain, per direction."""
        return self.nics_per_domain * self.nic_bw_Bps


class Cost(BaseModel):
    """Time of one (algorithm, protocol) for one collective, split into its terms."""

    model_config = _FROZEN

    algorithm: Algorithm
    protocol: Protocol
    latency_s: float = Field(ge=0)
    transfer_s: float = Field(ge=0)
    bottleneck: str
    equivalent_busbw: bool = False
    formula: str = ""
    tuner_time_s: float | None = None

    @property
    def time_s(self) -> float:
        """Total predicted time."""
        return self.latency_s + self.transfer_s

    @property
    def selection_time_s(self) -> float:
        """The time NCCL's own tuner would estimate (what ``auto`` ranks by)."""
        return self.time_s if self.tuner_time_s is None else self.tuner_time_s


class Estimate(BaseModel):
    """A collective estimate in nccl-tests conventions, with the choice and its alternatives."""

    model_config = _FROZEN

    collective: Collective
    size_bytes: float
    dtype: str
    count: int
    nodes: int
    gpus_per_node: int
    ranks: int
    intra: str | None
    inter: str | None
    nics_per_node: int
    best: Cost
    alternatives: list[Cost]
    assumptions: list[str]
    requested_size_bytes: float | None = None
    sharp: bool = False
    oversubscription: float = 1.0
    cross_leaf_fraction: float = 1.0
    sites: int = 1
    wan: str | None = None

    @property
    def time_s(self) -> float:
        """Predicted time of the chosen algorithm."""
        return self.best.time_s

    @property
    def algbw_Bps(self) -> float:
        """nccl-tests algorithm bandwidth S / t."""
        return self.size_bytes / self.time_s

    @property
    def busbw_Bps(self) -> float:
        """nccl-tests bus bandwidth algbw x F(n)."""
        return self.algbw_Bps * busbw_factor(self.collective, self.ranks)


def busbw_factor(collective: Collective, ranks: int) -> float:
    """nccl-tests bus-bandwidth factor F(n) (cost_models.md section 1.3)."""
    n = ranks
    if n <= 1:
        return 1.0
    if collective is Collective.ALL_REDUCE:
        return 2.0 * (n - 1) / n
    if collective in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL):
        return (n - 1) / n
    return 1.0
