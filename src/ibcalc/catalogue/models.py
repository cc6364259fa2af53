"""Frozen pydantic models of the catalogue: links, system presets and storage systems.

Catalogue files write quantities as strings with units (``"400 Gb/s"``, ``"5 us"``); the models
convert them on input to SI floats whose field names carry the unit (``per_direction_Bps``,
``latency_s``). Bandwidths are per direction unless a field name says ``bidirectional``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    computed_field,
    field_validator,
)

from ibcalc.booleans import NoBoolNumbers
from ibcalc.defaults import empty_list
from ibcalc.engine.types import HostCpu
from ibcalc.jsonmodel import JsonModel
from ibcalc.textsafe import printable, shown
from ibcalc.units import (
    GB,
    MIN_BANDWIDTH_BPS,
    MIN_BANDWIDTH_TEXT,
    format_bandwidth,
    is_zero,
    json_bytes,
    parse_bandwidth,
    parse_size,
    parse_time,
)
from ibcalc.yamlio import IDENTIFIER_PATTERN

__all__ = [
    "CALIBRATION_DOUBT",
    "Catalogue",
    "Confidence",
    "Link",
    "LinkKind",
    "Storage",
    "StorageKind",
    "System",
]


#: Sane ranges of catalogue quantities, stated in every refusal. A value outside is a typo or a
#: unit slip (``5e-324 B/s`` or ``1e-300 GB/s`` would pass a "positive" check and then make
#: every time infinite): the slowest link is a 10 Mb/s management port, the fastest a GPU's
#: whole scale-up bandwidth (900 GB/s per direction today, 100 TB/s leaves two orders to grow).
MAX_BANDWIDTH_BPS = 100e12
#: Longest link latency accepted: a WAN across the planet is ~0.1-0.2 s one way.
MAX_LINK_LATENCY_S = 1.0
#: Longest storage latency accepted (an object store's first byte is well under a second).
MAX_STORAGE_LATENCY_S = 10.0
#: Smallest efficiency accepted (line rate x efficiency is what a collective gets).
MIN_FRACTION = 0.01
#: Request-rate limits accepted, per second.
MIN_REQUESTS_PER_S, MAX_REQUESTS_PER_S = 1.0, 1e9
#: an object-store part: a page to 1 TiB (as ``checkpoint --part-size``)
MIN_PART_BYTES, MAX_PART_BYTES = 4096.0, float(2**40)
#: GPU memory a system may state per GPU: 1 GB to 2 TiB (the largest GPU holds 288 GiB; more is a
#: unit mistake).
MIN_GPU_MEMORY_BYTES, MAX_GPU_MEMORY_BYTES = 1e9, float(2**41)


def _with_unit(
    parse: Callable[[str], float], what: str, example: str, allowed: tuple[float, float, str]
) -> Any:
    """A validator of a quantity written with its unit: a bare number is a unit left out (400
    meant 400 Gb/s or GB/s?); ``allowed`` is ``(low, high, how the range is said)``."""

    def convert(value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(f"{what} {shown(value)} has no unit: write {example}")
        if isinstance(value, str):
            number = parse(value)
            low, high, words = allowed
            if not low <= number <= high:
                raise ValueError(f"{what} {shown(value)} is out of range: allowed {words}")
            return number
        return value

    return convert


def _catalogue_bandwidth(value: str) -> float:
    """A catalogue bandwidth: its range (below) is the only upper limit it is refused under."""
    return parse_bandwidth(value, capped=False)


_bandwidth = _with_unit(
    _catalogue_bandwidth,
    "bandwidth",
    "400Gb/s or 50GB/s",
    (MIN_BANDWIDTH_BPS, MAX_BANDWIDTH_BPS, f"{MIN_BANDWIDTH_TEXT} to 100 TB/s per direction"),
)
#: A vendor's bidirectional figure: twice the per-direction bound (a link of 60 TB/s per direction
#: had been refused its 120 TB/s bidirectional figure "per direction": review BN).
_bidirectional = _with_unit(
    _catalogue_bandwidth,
    "bandwidth",
    "800Gb/s or 100GB/s",
    (
        2 * MIN_BANDWIDTH_BPS,
        2 * MAX_BANDWIDTH_BPS,
        "2 MB/s (16 Mb/s) to 200 TB/s, both directions together",
    ),
)
_part_size = _with_unit(
    parse_size, "size", "5GiB or 100MB", (MIN_PART_BYTES, MAX_PART_BYTES, "4 KiB to 1 TiB")
)
_gpu_memory = _with_unit(
    parse_size, "size", "80GiB", (MIN_GPU_MEMORY_BYTES, MAX_GPU_MEMORY_BYTES, "1 GB to 2 TiB")
)


def _time_up_to(limit_s: float) -> Any:
    """A validator of a latency written with its unit, at most ``limit_s``: a bare number other
    than 0 is a unit left out (``transport_latency: 2`` meant 2 us, and was read as 2 s: an 8 KB
    all-reduce took 4 s; a review), as bandwidths and the cost parameters refuse it."""

    def convert(value: Any) -> Any:
        if is_zero(value):
            return 0.0
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(f"time {shown(value)} has no unit: write e.g. 2us or 0.5ms")
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            # a quoted "0.5" or "1e-6" has no unit either (it had been read as seconds)
            seconds = parse_time(value, unit_required=isinstance(value, str))
            if seconds > limit_s:
                raise ValueError(f"time {shown(value)} is out of range: allowed 0 to {limit_s:g} s")
            return seconds
        return value

    return convert


def _fraction(value: float) -> float:
    if not (MIN_FRACTION <= value <= 1.0):
        raise ValueError(f"{value:g} is out of range: allowed {MIN_FRACTION:g} to 1")
    return value


def _requests(value: float) -> float:
    if not (MIN_REQUESTS_PER_S <= value <= MAX_REQUESTS_PER_S):
        raise ValueError(
            f"{value:g} requests/s is out of range: allowed {MIN_REQUESTS_PER_S:g} to "
            f"{MAX_REQUESTS_PER_S:g}"
        )
    return value


#: Control characters a catalogue's text may not hold: an escape code or a carriage return in a
#: link's name or notes would reach the terminal through every table that shows it.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _no_control(value: Any) -> Any:
    texts = value if isinstance(value, list) else [value]
    for text in texts:
        if isinstance(text, str) and (found := _CONTROL.search(text)):
            raise ValueError(
                f"holds the control character {printable(found.group(0))} (text only; an escape "
                "code would reach the terminal)"
            )
    return value


Bandwidth = Annotated[float, BeforeValidator(_bandwidth)]
Bidirectional = Annotated[float, BeforeValidator(_bidirectional)]


#: catalogue sizes as JSON prints them: whole bytes, as integers (units.json_bytes)
_AS_BYTES = PlainSerializer(json_bytes, return_type=int, when_used="json")
PartSize = Annotated[float, BeforeValidator(_part_size), _AS_BYTES]
GpuMemory = Annotated[float, BeforeValidator(_gpu_memory), _AS_BYTES]
Seconds = Annotated[float, BeforeValidator(_time_up_to(MAX_LINK_LATENCY_S))]
StorageSeconds = Annotated[float, BeforeValidator(_time_up_to(MAX_STORAGE_LATENCY_S))]
Fraction = Annotated[float, Field(allow_inf_nan=False), AfterValidator(_fraction)]
RequestRate = Annotated[float, Field(allow_inf_nan=False), AfterValidator(_requests)]
Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN, max_length=64)]

#: (``defer_build``: a model's schema is built when it first validates, not at import: the
#: built-in catalogue is built without validating again (catalogue.load's ``_mirrored``), and
#: building these four schemas had taken ~13 ms of an estimate's start-up)
_FROZEN = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)


#: What a link's notes say where ``calibrate`` fitted it to a run it warned of (and wrote it at
#: low confidence): the estimates' low-confidence note gives that reason, not its sources'
CALIBRATION_DOUBT = "the calibration warned of"


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


class Link(NoBoolNumbers, JsonModel):
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
        "mesh_gpus",
        "lanes_per_link",
        "lane_signalling_Gbps",
        "encoding",
        "encoding_efficiency",
        "efficiency",
        "efficiency_source",
        "achievable_GBps",
        "nvls_efficiency",
        "nvls_efficiency_source",
        "duplex_efficiency",
        "duplex_efficiency_source",
        "latency_s",
        "latency_source",
        "transport_latency_s",
        "transport_latency_source",
        "transport",
        "simple_transport_floor",
        "simple_transport_floor_source",
        "topology",
        "capabilities",
        "pcie_host",
        "sources",
        "confidence",
        "notes",
    )

    id: Identifier
    aliases: tuple[Identifier, ...] = ()
    name: str
    kind: LinkKind
    family: str
    generation: str
    scope: Literal["per-gpu", "per-port", "per-link", "per-node", "per-flow"]
    per_direction_Bps: Bandwidth = Field(alias="per_direction", gt=0)
    bidirectional_Bps: Bidirectional | None = Field(default=None, alias="bidirectional")
    links: int | None = Field(default=None, ge=1, le=4096)
    #: On a full switchless mesh, the most GPUs it joins each to each (MI300X: 8, its 7 links
    #: one to each peer; Gaudi: 8, its 21 links 3 to each peer); a node of more GPUs is no one
    #: scale-up domain and is refused. None: not a full mesh (DGX-1's hybrid cube meshes) or
    #: not stated.
    mesh_gpus: int | None = Field(default=None, ge=2, le=4096)

    @property
    def links_per_peer(self) -> int:
        """Links each GPU has to each peer of a full mesh: ``links / (mesh_gpus - 1)`` (Gaudi
        3 of 21); 1 where the mesh's size or link count is not stated."""
        if self.mesh_gpus is None or not self.links:
            return 1
        return max(1, self.links // (self.mesh_gpus - 1))

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
    #: How NCCL drives a scale-out NIC: ``verbs`` (InfiniBand, RoCE: the NIC writes straight into
    #: GPU memory) or ``plugin`` (a host proxy through a net plugin: EFA, TCPX(O), CXI). None:
    #: a link with a transport latency is taken as a plugin.
    transport: Literal["verbs", "plugin"] | None = None
    #: One-way transport latencies a small Simple message exposes per network hop on this plugin
    #: transport, where a measurement shows it differs from NCCL's count of 2 (the engine's
    #: ``assumptions.simple_transport_floor``). None: NCCL's count.
    simple_transport_floor: float | None = Field(default=None, ge=0, le=100)
    simple_transport_floor_source: str | None = None
    topology: Literal["switched", "mesh", "torus", "bridge", "ring", "host-staged"] | None = None
    capabilities: tuple[
        Literal["nvls", "sharp", "multicast", "gpudirect-rdma", "adaptive-routing"], ...
    ] = ()
    pcie_host: str | None = None
    sources: tuple[str, ...] = Field(min_length=1)
    confidence: Confidence
    notes: str | None = None

    @field_validator("sources")
    @classmethod
    def _sources_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not s.strip() for s in value):
            raise ValueError("a source must not be blank")
        return value

    _text = field_validator("*", mode="before")(_no_control)

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

    def __repr__(self) -> str:
        """The link in one line: 'Link(ndr: InfiniBand NDR ..., scale-out, 50.0 GB/s per
        direction)' (pydantic's repr, sources and all, ran to 3,500 characters)."""
        rate = format_bandwidth(self.per_direction_Bps)
        return f"{type(self).__name__}({self.id}: {self.name}, {self.kind}, {rate} per direction)"

    __str__ = __repr__


class System(NoBoolNumbers):
    """A node or scale-up-domain preset users think in (dgx-h100, aws-p5, gb200-nvl72 ...)."""

    model_config = _FROZEN

    id: Identifier
    aliases: tuple[Identifier, ...] = ()
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
    nvswitch: StrictBool = False
    nics_per_node: int = Field(ge=0, le=256)
    inter: str | None = None
    host_pcie: str | None = None
    #: The host CPU family (``amd``, ``intel``, ``arm``); NCCL's per-step network overhead
    #: depends on it. None: not stated (NCCL's default, as for Intel).
    host_cpu: HostCpu | None = None
    #: Memory of one GPU in bytes (``gpu_memory: 80 GiB``: a vendor's "80GB" of HBM); None where
    #: the preset covers GPUs of more than one size. ``ibcalc train`` checks layouts against it.
    gpu_memory_bytes: GpuMemory | None = Field(default=None, alias="gpu_memory")
    gpu_memory_source: str | None = None
    #: The largest GPU memory of a preset sold with GPUs of several sizes (``dgx-a100``: 40 GB or
    #: 80 GB), with its source: memory past it fits on no variant. None otherwise.
    gpu_memory_largest_bytes: GpuMemory | None = Field(default=None, alias="gpu_memory_largest")
    gpu_memory_largest_source: str | None = None
    #: One GPU's dense 16-bit tensor-core peak, TFLOP/s (bf16; fp16 where the GPU has no bf16),
    #: without structured sparsity; None where the preset covers GPUs of more than one speed or
    #: no vendor figure is at hand. ``ibcalc train --tflops`` is judged against it.
    gpu_peak_tflops: float | None = Field(default=None, ge=1, le=1e5)
    gpu_peak_source: str | None = None
    sources: tuple[str, ...] = Field(min_length=1)
    confidence: Confidence
    notes: str | None = None

    _text = field_validator("*", mode="before")(_no_control)

    @property
    def names(self) -> list[str]:
        """The id followed by every alias."""
        return [self.id, *self.aliases]

    def __repr__(self) -> str:
        """The preset in one line: 'System(dgx-h100: 8 x H100 SXM5 80GB, nvlink4 + 8 x ndr)'
        (pydantic's repr ran to 1,800 characters)."""
        shape = f"{self.gpus_per_node} x {self.gpu}, {self.intra}"
        if self.inter is not None and self.nics_per_node:
            shape += f" + {self.nics_per_node} x {self.inter}"
        return f"{type(self).__name__}({self.id}: {shape})"

    __str__ = __repr__


class StorageKind(StrEnum):
    """What a storage entry is: a block target, a parallel file system, an object store."""

    NVME_OF = "nvme-of"
    PARALLEL_FS = "parallel-fs"
    OBJECT = "object"


class Storage(NoBoolNumbers):
    """A storage system checkpoints are written to and read from (``storage:`` in the catalogue).

    Bandwidths are bytes per second. ``aggregate_*`` is what one *unit* delivers (one NVMe-oF
    target, one file-system appliance); ``None`` means no stated limit (an object store scales
    out). ``per_client_*`` caps one client node; ``None`` means the client's own NICs bound it.
    ``*_requests_per_s`` are request-rate limits per ``request_scope`` (S3: per prefix);
    ``per_request`` what one request moves at most (S3: about 85-90 MB/s).
    """

    model_config = _FROZEN

    id: Identifier
    aliases: tuple[Identifier, ...] = ()
    name: str
    kind: StorageKind
    aggregate_read_Bps: Bandwidth | None = Field(default=None, alias="aggregate_read", gt=0)
    aggregate_write_Bps: Bandwidth | None = Field(default=None, alias="aggregate_write", gt=0)
    aggregate_source: str | None = None
    per_client_read_Bps: Bandwidth | None = Field(default=None, alias="per_client_read", gt=0)
    per_client_write_Bps: Bandwidth | None = Field(default=None, alias="per_client_write", gt=0)
    per_client_source: str | None = None
    latency_s: StorageSeconds | None = Field(default=None, alias="latency")
    latency_source: str | None = None
    read_requests_per_s: RequestRate | None = None
    write_requests_per_s: RequestRate | None = None
    request_scope: Literal["per-prefix"] | None = None
    requests_source: str | None = None
    #: what one request (one part, one connection) moves at most; None: no stated limit
    per_request_Bps: Bandwidth | None = Field(default=None, alias="per_request", gt=0)
    per_request_source: str | None = None
    #: the largest part (one request's body) a save may write; None: no stated limit
    max_write_part_bytes: PartSize | None = Field(default=None, alias="max_write_part")
    #: the most parts one object's upload may have (S3 multipart: 10,000); None: no stated limit
    max_write_parts: int | None = Field(default=None, ge=1, le=10**9)
    #: the smallest part of an upload of several parts, bar the last (S3: 5 MiB); None: none
    min_write_part_bytes: PartSize | None = Field(default=None, alias="min_write_part")
    max_write_part_source: str | None = None
    sources: tuple[str, ...] = Field(min_length=1)
    confidence: Confidence
    notes: str | None = None

    @field_validator("sources")
    @classmethod
    def _sources_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not s.strip() for s in value):
            raise ValueError("a source must not be blank")
        return value

    _text = field_validator("*", mode="before")(_no_control)

    @property
    def names(self) -> list[str]:
        """The id followed by every alias."""
        return [self.id, *self.aliases]

    def __repr__(self) -> str:
        """The storage system in one line, its id, name and kind (pydantic's repr ran to
        1,700 characters)."""
        return f"{type(self).__name__}({self.id}: {self.name}, {self.kind})"

    __str__ = __repr__


class Catalogue(BaseModel):
    """The whole catalogue: links, system presets and storage systems, after checks."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    links: list[Link]
    systems: list[System]
    origins: list[str] = Field(default_factory=empty_list)
    storage: list[Storage] = Field(default_factory=empty_list)

    def __repr__(self) -> str:
        """What it holds and where from, in one line: 'Catalogue(49 links, 33 systems, 3
        storage systems from data/links.yaml)' (pydantic's repr ran to 150,000 characters in a
        notebook); the lists hold the entries."""
        origins = f" from {', '.join(self.origins)}" if self.origins else ""
        return (
            f"{type(self).__name__}({len(self.links)} links, {len(self.systems)} systems, "
            f"{len(self.storage)} storage systems{origins})"
        )

    __str__ = __repr__
