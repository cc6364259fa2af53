"""Frozen pydantic models of the catalogue: links, system presets and storage systems.

Catalogue files write quantities as strings with units (``"400 Gb/s"``, ``"5 us"``); the models
convert them on input to SI floats whose field names carry the unit (``per_direction_Bps``,
``latency_s``). Bandwidths are per direction unless a field name says ``bidirectional``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, computed_field, field_validator

from ibcalc.jsonmodel import JsonModel
from ibcalc.units import GB, parse_bandwidth, parse_time

__all__ = [
    "Catalogue",
    "Confidence",
    "Link",
    "LinkKind",
    "Storage",
    "StorageKind",
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
    """How well the sources support an entry (docs/catalogue.md#confidence-grades)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Link(JsonModel):
    """One interconnect of the catalogue. All rates are per direction unless named otherwise.

    Its JSON (``model_dump(mode="json")``, what ``ibcalc links --format json`` prints) gives
    bandwidths in GB/s (10^9 B/s) and network rates in Gb/s, times in seconds.
    """

    model_config = _FROZEN

    json_keys: ClassVar[tuple[str, ...]] = (
        "id",
        "aliases",
        "name",
        "kind",
        "family",
        "generation",
        "scope",
        "per_direction_GBps",
        "per_direction_Gbps",
        "bidirectional_GBps",
        "links",
        "lanes_per_link",
        "lane_signalling_Gbps",
        "encoding",
        "encoding_efficiency",
        "efficiency",
        "efficiency_source",
        "achievable_GBps",
        "nvls_efficiency",
        "duplex_efficiency",
        "latency_s",
        "transport_latency_s",
        "topology",
        "capabilities",
        "pcie_host",
        "sources",
        "confidence",
        "notes",
    )

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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def per_direction_GBps(self) -> float:
        """Line rate per direction in GB/s."""
        return self.per_direction_Bps / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def per_direction_Gbps(self) -> float:
        """Line rate per direction in Gb/s, as networks are quoted (NDR: 400)."""
        return self.per_direction_Bps * 8 / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bidirectional_GBps(self) -> float | None:
        """The vendor's bidirectional figure in GB/s, when the catalogue gives one."""
        return (self.bidirectional_Bps / GB) if self.bidirectional_Bps else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lane_signalling_Gbps(self) -> float | None:
        """Signalling rate of one lane in Gb/s, when given."""
        return self.lane_signalling_Bps * 8 / GB if self.lane_signalling_Bps else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def achievable_GBps(self) -> float:
        """Achievable rate per direction (line x efficiency) in GB/s."""
        return self.achievable_Bps / GB

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


class StorageKind(StrEnum):
    """What a storage entry is: a block target, a parallel file system, an object store."""

    NVME_OF = "nvme-of"
    PARALLEL_FS = "parallel-fs"
    OBJECT = "object"


class Storage(BaseModel):
    """A storage system checkpoints are written to and read from (``storage:`` in the catalogue).

    Bandwidths are bytes per second. ``aggregate_*`` is what one *unit* delivers (one NVMe-oF
    target, one file-system appliance); ``None`` means no stated limit (an object store scales
    out). ``per_client_*`` caps one client node; ``None`` means the client's own NICs bound it.
    ``*_requests_per_s`` are request-rate limits per ``request_scope`` (S3: per prefix).
    """

    model_config = _FROZEN

    id: Identifier
    aliases: list[Identifier] = Field(default_factory=list)
    name: str
    kind: StorageKind
    aggregate_read_Bps: Bandwidth | None = Field(default=None, alias="aggregate_read", gt=0)
    aggregate_write_Bps: Bandwidth | None = Field(default=None, alias="aggregate_write", gt=0)
    aggregate_source: str | None = None
    per_client_read_Bps: Bandwidth | None = Field(default=None, alias="per_client_read", gt=0)
    per_client_write_Bps: Bandwidth | None = Field(default=None, alias="per_client_write", gt=0)
    per_client_source: str | None = None
    latency_s: Seconds | None = Field(default=None, alias="latency")
    latency_source: str | None = None
    read_requests_per_s: float | None = Field(default=None, gt=0, le=1e9)
    write_requests_per_s: float | None = Field(default=None, gt=0, le=1e9)
    request_scope: Literal["per-prefix"] | None = None
    requests_source: str | None = None
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
    def names(self) -> list[str]:
        """The id followed by every alias."""
        return [self.id, *self.aliases]


class Catalogue(BaseModel):
    """The whole catalogue: links, system presets and storage systems, after checks."""

    model_config = _FROZEN

    links: list[Link]
    systems: list[System]
    origins: list[str] = Field(default_factory=list)
    storage: list[Storage] = Field(default_factory=list)
