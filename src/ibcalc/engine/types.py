"""Value types of the cost engine: collectives, algorithms, protocols, tiers, costs, estimates.

Plain numbers only: the engine does no I/O and knows nothing of the catalogue. Bandwidths are bytes
per second per direction, times are seconds.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.collectives import Collective

# The one list of collectives lives in a module without pydantic, so that `ibcalc --help` can
# list the collective commands without loading the engine; it is re-exported here.
from ibcalc.defaults import empty_list
from ibcalc.errors import UnitError
from ibcalc.units import format_bandwidth, format_size, format_time

__all__ = [
    "COST_PARAMETERS_NOTE",
    "HOST_CPUS",
    "NCCL_ALGORITHM_NAMES",
    "Algorithm",
    "Collective",
    "Cost",
    "DType",
    "Estimate",
    "HostCpu",
    "Protocol",
    "ScaleOutTier",
    "ScaleUpTier",
    "StageTier",
    "Term",
    "TermPart",
    "algorithm_key",
    "busbw_factor",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

#: where a pipeline's stages sit: ``"up"`` (in a scale-up domain), ``"net"`` (across the
#: network), ``"wan"`` (between sites)
StageTier = Literal["up", "net", "wan"]


class DType(StrEnum):
    """Element types nccl-tests accepts (``-d``), by the names ibcalc prints.

    :meth:`parse` also takes nccl-tests' own spellings (``float``, ``half``, ``bfloat16`` ...).
    """

    INT8 = "int8"
    UINT8 = "uint8"
    FP8 = "fp8"
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"
    FP16 = "fp16"
    BF16 = "bf16"
    INT32 = "int32"
    UINT32 = "uint32"
    FP32 = "fp32"
    INT64 = "int64"
    UINT64 = "uint64"
    FP64 = "fp64"

    @property
    def bytes(self) -> int:
        """Size of one element in bytes."""
        return _DTYPE_BYTES[self]

    @property
    def is_fp8(self) -> bool:
        """True for the 8-bit floating-point types."""
        return self in _FP8_TYPES

    @classmethod
    def parse(cls, name: str) -> DType:
        """The type ``name`` means (any case, nccl-tests spellings too);
        :class:`~ibcalc.errors.UnitError` (a ValueError) if none, as the estimates raise."""
        if not isinstance(name, str):
            raise UnitError(f"unknown dtype {name!r}")
        key = name.strip().lower()
        key = _DTYPE_ALIASES.get(key, key)
        try:
            return cls(key)
        except ValueError:
            raise UnitError(f"unknown dtype {name!r}") from None

    @classmethod
    def names(cls) -> list[str]:
        """Every accepted spelling: the members and nccl-tests' aliases."""
        return sorted({*(m.value for m in cls), *_DTYPE_ALIASES})


_DTYPE_BYTES: dict[DType, int] = {
    DType.INT8: 1,
    DType.UINT8: 1,
    DType.FP8: 1,
    DType.FP8_E4M3: 1,
    DType.FP8_E5M2: 1,
    DType.FP16: 2,
    DType.BF16: 2,
    DType.INT32: 4,
    DType.UINT32: 4,
    DType.FP32: 4,
    DType.INT64: 8,
    DType.UINT64: 8,
    DType.FP64: 8,
}
#: nccl-tests' own type names (``-d``) and common spellings, mapped to ours.
_DTYPE_ALIASES: dict[str, str] = {
    "half": "fp16",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float": "fp32",
    "float32": "fp32",
    "double": "fp64",
    "float64": "fp64",
    "f8e4m3": "fp8_e4m3",
    "f8e5m2": "fp8_e5m2",
}


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


#: NCCL's algorithm names (``NCCL_ALGO``, any case) that are not spelled as ibcalc's, with a
#: separator between their words or none
NCCL_ALGORITHM_NAMES = {
    f"{head}{sep}{tail}": algorithm.value
    for head, tail, algorithm in (
        ("collnet", "direct", Algorithm.COLLNET_DIRECT),
        ("collnet", "chain", Algorithm.COLLNET_CHAIN),
        ("nvls", "tree", Algorithm.NVLS_TREE),
    )
    for sep in ("", "_", "-")
}


def algorithm_key(name: str) -> str:
    """``name`` lower-cased, and as ibcalc spells it where it is NCCL's (``CollnetDirect`` is
    ``collnet``): what the library's and the CLI's algorithm choices are matched by."""
    key = name.strip().lower()
    return NCCL_ALGORITHM_NAMES.get(key, key)


#: Host CPU families, the one list of them: NCCL's per-step network overhead depends on the
#: family (``getNetOverhead``: 2 us on AMD x86 hosts, 1 us on the others). The catalogue's
#: systems, the cluster spec, design files and ``--host-cpu`` take these values.
HostCpu = Literal["intel", "amd", "arm"]
HOST_CPUS: tuple[str, ...] = get_args(HostCpu)


class Protocol(StrEnum):
    """NCCL protocols."""

    LL = "LL"
    LL128 = "LL128"
    SIMPLE = "Simple"


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
    #: The share of a GPU's scale-up rate that joins it to one peer: 1 through a switch (or where
    #: the catalogue does not count a mesh's links); on a full mesh of counted links, the peer's
    #: own links over those the GPU uses (1/7 on 8 MI300X, 3/21 on 8 Gaudi 3). Point-to-point
    #: work (send/recv) runs at it.
    peer_share: float = Field(default=1.0, gt=0, le=1)
    #: dimensions of a torus the GPUs form (TPU ICI: 2 or 3, two links per dimension); None:
    #: a switch, mesh or bus
    torus_dims: int | None = Field(default=None, ge=1)
    #: GPUs meet over an accelerator fabric (NVLink, xGMI, ICI...: a switch, mesh or torus;
    #: not PCIe, not a bridged pair): the error band's ``fabric`` class
    fabric: bool = False


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
    #: The host link that caps each NIC below its own achievable rate (``pcie5`` for an XDR NIC
    #: in a PCIe Gen5 slot, or GPUs' links feeding more NICs than they carry); None: none does.
    nic_cap: str | None = None
    transport_latency_s: float = Field(default=0.0, ge=0)
    #: True for a host-proxy (net plugin) transport: EFA, TCPX(O), CXI; False for verbs
    #: (InfiniBand, RoCE). None: a tier with a transport latency is a plugin (:attr:`is_plugin`).
    plugin: bool | None = None
    #: The link's own ``simple_transport_floor`` (None: ``assumptions.simple_transport_floor``).
    simple_floor: float | None = Field(default=None, ge=0)
    sharp: bool = False
    oversubscription: float = Field(default=1.0, ge=1.0)
    #: share of a node's network bytes that cross the tapered uplinks when every peer is a
    #: destination (all-to-all, recursive halving-doubling, PAT)
    cross_leaf_fraction: float = Field(default=1.0, ge=0.0, le=1.0)
    #: the same share for neighbour traffic (ring, tree, SHARP's aggregation tree, send/recv);
    #: None: ``cross_leaf_fraction``
    neighbour_fraction: float | None = Field(default=None, ge=0.0, le=1.0)
    #: the same share for traffic that leaves its rail (all-to-all without PXN: each GPU's own
    #: NIC to the destination GPU's); None: ``cross_leaf_fraction``
    unaligned_fraction: float | None = Field(default=None, ge=0.0, le=1.0)

    @property
    def neighbour_share(self) -> float:
        """The cross-leaf share neighbour traffic is priced with: ``neighbour_fraction``, else
        ``cross_leaf_fraction``."""
        if self.neighbour_fraction is not None:
            return self.neighbour_fraction
        return self.cross_leaf_fraction

    @property
    def unaligned_share(self) -> float:
        """The cross-leaf share traffic off its rail is priced with: ``unaligned_fraction``,
        else ``cross_leaf_fraction``."""
        if self.unaligned_fraction is not None:
            return self.unaligned_fraction
        return self.cross_leaf_fraction

    @property
    def domain_bw_Bps(self) -> float:
        """Aggregate achievable injection bandwidth of one domain, per direction."""
        return self.nics_per_domain * self.nic_bw_Bps

    @property
    def is_plugin(self) -> bool:
        """A host-proxy transport: ``plugin`` when given, else whether it has a transport
        latency (the catalogue's plugin links all do; a verbs link calibrated to a latency
        states ``transport: verbs`` and stays verbs)."""
        return self.plugin if self.plugin is not None else self.transport_latency_s > 0


class TermPart(BaseModel):
    """One part of a term worked as ``count x size_bytes / rate_Bps``: in the pipeline fill, the
    stages of one tier that hold the first chunk, each crossed at the tier's per-channel rate."""

    model_config = _FROZEN

    #: where the stages sit (:data:`StageTier`)
    tier: StageTier
    count: int = Field(ge=0)
    size_bytes: float = Field(ge=0)
    rate_Bps: float = Field(gt=0)
    seconds: float = Field(ge=0)


class Term(BaseModel):
    """One term of a cost, for ``--explain``: its name, its time and how it was worked out
    (the numbers and the constants used, each with where it comes from); ``parts``, where the
    term is a sum of like parts (the pipeline fill's tiers), each with its figures."""

    model_config = _FROZEN

    name: str
    seconds: float
    detail: str
    parts: tuple[TermPart, ...] = ()

    def __repr__(self) -> str:
        """The term's name and time in one line ('Term(NVLS latency: 12.0 us)'); how it was
        worked out is ``detail``, every field ``model_dump()``."""
        return f"{type(self).__name__}({self.name}: {format_time(self.seconds)})"

    __str__ = __repr__


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
    #: Pipeline fill: the first chunk crossing every stage before the pipeline runs full.
    fill_s: float = Field(default=0.0, ge=0)
    #: Steady-state time between back-to-back operations, when shorter than one operation (a
    #: one-way chain such as broadcast starts its next operation before the last finished).
    period_s: float | None = Field(default=None, ge=0)
    #: What the period is made of, stage by stage ('base 6.6 us + the WAN hop ...'): the words
    #: ``engine/measure.py`` gives beside it ("" where there is no period).
    period_words: str = ""
    #: What nccl-tests reports per operation (see ``engine/measure.py``), when it differs from
    #: one operation's latency + transfer + fill.
    measured_s: float | None = Field(default=None, ge=0)
    #: The latency, transfer and fill terms one by one, with how each was worked out.
    terms: tuple[Term, ...] = ()
    #: How nccl-tests' timing changed the single-operation time (``engine/measure.py``).
    measure_note: str = ""

    def __repr__(self) -> str:
        """The pair, its time and how it splits, in one line: 'Cost(nvlstree/Simple 5.33 ms:
        latency 198 us + transfer 5.13 ms; network (tree between nodes))', with the fill where
        there is one and the time nccl-tests reports where it is not their sum. Three figures;
        the fields (and ``model_dump()``) hold the numbers whole, ``terms`` the explanation."""
        split = f"latency {format_time(self.latency_s)} + transfer {format_time(self.transfer_s)}"
        if self.fill_s:
            split += f" + fill {format_time(self.fill_s)}"
        if self.measured_s is not None:
            split = f"one operation {format_time(self.single_s)} = {split}"
        return (
            f"{type(self).__name__}({self.algorithm.value}/{self.protocol.value} "
            f"{format_time(self.time_s)}: {split}; {self.bottleneck})"
        )

    __str__ = __repr__

    @property
    def single_s(self) -> float:
        """Time of one operation on its own: latency + transfer + fill."""
        return self.latency_s + self.transfer_s + self.fill_s

    @property
    def time_s(self) -> float:
        """Predicted time per operation as nccl-tests measures it."""
        return self.single_s if self.measured_s is None else self.measured_s

    @property
    def selection_time_s(self) -> float:
        """The time NCCL's own tuner would estimate (what ``auto`` ranks by)."""
        return self.time_s if self.tuner_time_s is None else self.tuner_time_s


#: How an estimate's assumptions name what was laid over the built-in cost parameters (override
#: files, an NCCL release): this prefix, then the label (``CostParams.origins``).
COST_PARAMETERS_NOTE = "cost parameters: "


class Estimate(BaseModel):
    """A collective estimate in nccl-tests conventions, with the choice and its alternatives."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

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
    #: Scale-out NICs per node the collectives use; None on a cluster with no scale-out tier (one
    #: scale-up domain, ``inter`` None), whose nodes' NICs, if any, carry none of them (one
    #: GB200 NVL72 rack had read 0, though each tray has 4 NDR NICs)
    nics_per_node: int | None
    #: Scale-up domains (nodes, or NVLink domains of several nodes such as NVL72 racks).
    domains: int
    best: Cost
    alternatives: list[Cost]
    assumptions: list[str]
    requested_size_bytes: float | None = None
    sharp: bool = False
    oversubscription: float = 1.0
    #: The share of a node's network traffic that leaves its leaf; None on a cluster with no
    #: scale-out tier (one scale-up domain), where no traffic crosses a network.
    cross_leaf_fraction: float | None = None
    #: The same share for neighbour traffic (ring, tree, SHARP, send/recv): from a design's
    #: fabric layout or ``--cross-leaf-neighbour``, else ``cross_leaf_fraction``.
    neighbour_cross_leaf_fraction: float | None = None
    #: The same share for traffic off its rail (all-to-all without PXN): from a rail-optimized
    #: design's fabric layout or ``--cross-leaf-unaligned``, else ``cross_leaf_fraction``.
    unaligned_cross_leaf_fraction: float | None = None
    sites: int = 1
    wan: str | None = None
    #: WAN links per site, and the one-way latency of a WAN hop (None with one site)
    wan_links: int | None = None
    wan_latency_s: float | None = None
    #: GPUs one process drives (nccl-tests' -g; ``--gpus-per-process``)
    gpus_per_process: int = 1
    #: The PCIe link each NIC sits on (``--host-pcie`` or the preset's; None: not known)
    host_pcie: str | None = None
    #: Where a measurement of this estimate is likely to fall (``engine/band.py``): about 80 %
    #: of held-out published measurements land inside.
    time_s_range: tuple[float, float] | None = None
    #: The transport class the band was read for: scale-up, verbs or plugin.
    transport_class: str = "scale-up"
    #: Candidates NCCL's tuner ranks within ``reporting.notably_faster`` of its choice, whose
    #: times the band was widened over (``algorithm/protocol``; empty when none or forced).
    range_covers: list[str] = Field(default_factory=empty_list)
    #: A candidate NCCL runs that is far faster than its choice here (more than the deepest
    #: drop a published sweep shows at a switch): the least sure estimate, whose band reaches
    #: down to that candidate's (``algorithm/protocol``; empty when none or forced).
    range_reaches: list[str] = Field(default_factory=empty_list)
    #: The time at the links' line rate where it, not the error band, sets the likely range's
    #: low end (``engine.band.wire_floor_s``: a ring's or a send/recv pair's busbw cannot pass
    #: the wire's, nor each GPU's share of an all-to-all its links' and NICs'); None where the
    #: band's own end is slower.
    range_wire_floor_s: float | None = None
    #: Where the tuner constants NCCL's choice was ranked with come from (the built-in release's
    #: tuning.cc, or the release or override file laid over it).
    tuner_constants: str = ""
    #: The algorithm and protocol the caller forced (None: NCCL's tuner chose it).
    forced_algorithm: Algorithm | None = None
    forced_protocol: Protocol | None = None

    def __repr__(self) -> str:
        """The estimate in one line, for a notebook (pydantic's repr ran to 16,000 characters):
        'Estimate(all_reduce of 1 GB bf16 on 16 x 8 GPUs nvlink4 + 8 x ndr per node: 5.33 ms, busbw
        373 GB/s, nvlstree/Simple, likely 5.27-6.42 ms)'. Three figures; the fields and
        properties hold the numbers whole, ``model_dump()`` every field."""
        where = f"{self.nodes} x {self.gpus_per_node} GPUs"
        if self.intra is not None:
            where += f" {self.intra}"
        if self.inter is not None and self.nics_per_node:
            where += f" + {self.nics_per_node} x {self.inter} per node"
        likely = ""
        if self.time_s_range is not None:
            low, high = (format_time(t) for t in self.time_s_range)
            # one unit for both ends where they share it: 5.27-6.42 ms
            value, _, unit = low.partition(" ")
            likely = f", likely {value if high.endswith(' ' + unit) else low}-{high}"
        best = self.best
        return (
            f"{type(self).__name__}({self.collective.value} of {format_size(self.size_bytes)} "
            f"{self.dtype} on {where}: {format_time(self.time_s)}, busbw "
            f"{format_bandwidth(self.busbw_Bps)}, {best.algorithm.value}/{best.protocol.value}"
            f"{likely})"
        )

    __str__ = __repr__

    @property
    def time_s(self) -> float:
        """Predicted time of the chosen algorithm."""
        return self.best.time_s

    @property
    def busbw_Bps_range(self) -> tuple[float, float] | None:
        """The busbw a measurement is likely to show (the time range, inverted)."""
        if self.time_s_range is None:
            return None
        factor = busbw_factor(self.collective, self.ranks)
        low_t, high_t = self.time_s_range
        return self.size_bytes / high_t * factor, self.size_bytes / low_t * factor

    @property
    def algbw_Bps(self) -> float:
        """nccl-tests algorithm bandwidth S / t."""
        return self.size_bytes / self.time_s

    @property
    def busbw_Bps(self) -> float:
        """nccl-tests bus bandwidth algbw x F(n)."""
        return self.algbw_Bps * busbw_factor(self.collective, self.ranks)


#: How an estimate's assumption begins where its range reaches down to the time with Simple's
#: handshake count at a step's bytes (``facade.simple_per_step_s``); ``--explain`` reads it.
SIMPLE_PER_STEP_NOTE = "each Simple network hop over "
#: How the word of a sweep, a workload phase or a check on the same begins, said once for
#: its rows (``facade.simple_extrapolation_hint``); a layout search reads it off its phases.
SIMPLE_EXTRAPOLATION_HINT = "a ring in Simple over "
#: What an all-to-all's note says where its message term rests on more ranks than the
#: per-message cost is fitted on (``facade.message_extrapolation_notes``), after the messages
#: a rank posts; a layout search reads it off its phases.
MESSAGE_EXTRAPOLATION_HINT = (
    "the per-message cost (calibrated.per_message_latency) comes from all-to-alls of at most "
)


# Enum members as module constants where a layout search reads them hundreds of thousands of
# times: in Python 3.11 an enum class defines __getattr__ (EnumType's), which leaves its attribute
# loads unspecialised (about 0.1 us each; a module global about 0.01). engine.band, facade,
# workload.phases and workload.train bind the members they read so, pointing here.
_ALL_REDUCE = Collective.ALL_REDUCE
_SPREAD = (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL)
_FP8_TYPES = (DType.FP8, DType.FP8_E4M3, DType.FP8_E5M2)


def busbw_factor(collective: Collective, ranks: int) -> float:
    """nccl-tests bus-bandwidth factor F(n) (docs/model.md#algbw-and-busbw)."""
    n = ranks
    if n <= 1:
        return 1.0
    if collective is _ALL_REDUCE:
        return 2.0 * (n - 1) / n
    if collective in _SPREAD:
        return (n - 1) / n
    return 1.0
