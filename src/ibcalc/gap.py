"""Scale-up vs scale-out bandwidth per GPU: the gap that decides where TP, PP and DP go.

Conventions (link_specs.md sections 0 and 8): every bandwidth here is **per direction** and
**per GPU**, in bytes per second (printed as GB/s = 10^9 B/s). Vendor GPU-link headlines are
bidirectional, twice these figures (H100 NVLink 4 "900 GB/s" = 450 GB/s per direction); network
rates are quoted in Gb/s (NDR "400" = 400 Gb/s = 50 GB/s per direction). So "NVLink 4 900 GB/s
vs HDR 50 GB/s, nearly 20x" compares a bidirectional figure with a bidirectional one and gives
the right ratio, 18x, only by luck of doubling both sides; per direction it is 450 vs 25.

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
  :func:`ibcalc.engine.estimate` with NCCL-like algorithm choice, and their ratio (slowdown).

No I/O here: rendering lives in :mod:`ibcalc.render.console` and :mod:`ibcalc.render.plot`.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.catalogue.load import find_link, find_system
from ibcalc.catalogue.models import Catalogue, Link, LinkKind
from ibcalc.cluster.resolve import check_count, resolve_cluster
from ibcalc.cluster.spec import MAX_GPUS_PER_NODE, MAX_NICS_PER_NODE, ClusterSpec
from ibcalc.engine.types import Collective, Estimate
from ibcalc.errors import ClusterError
from ibcalc.facade import estimate
from ibcalc.units import GB

__all__ = [
    "ALLREDUCE_SIZE_BYTES",
    "CONVENTIONS",
    "PAIRING_INTER",
    "PAIRING_INTRA",
    "GapResult",
    "PairingNode",
    "TpWhatIf",
    "common_pairings",
    "gap",
    "gap_dict",
    "gap_for_system",
    "nics_per_gpu_node",
    "tp_dict",
    "tp_whatif",
]

#: Size of the all-reduce that turns the bandwidth gap into a time (1 GB = 10^9 bytes).
ALLREDUCE_SIZE_BYTES = 1.0 * GB

#: One line stating the conventions; every table and JSON object of this module repeats it.
CONVENTIONS = (
    "per direction, per GPU; GB/s = 10^9 B/s; vendor 'bidirectional' GPU-link figures are 2x "
    "these (H100 NVLink 4: 900 bidirectional = 450 per direction); network Gb/s / 8 = GB/s; "
    "achievable = line rate x catalogue efficiency"
)

#: Scale-up links of the common pairings table (8 GPUs per node each).
PAIRING_INTRA: tuple[str, ...] = ("nvlink3", "nvlink4", "nvlink5", "xgmi-mi300x", "pcie4", "pcie5")


class PairingNode(BaseModel):
    """The node shape a scale-out link is paired with in :func:`common_pairings`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    inter: str
    gpus_per_node: int = Field(ge=1)
    nics_per_node: int = Field(ge=1)
    why: str


#: Scale-out links of the common pairings table and the node each sits in: one NIC per GPU,
#: except EFA v2 (32 x 100 Gb/s for 8 GPUs, as on AWS p5; link_specs.md 5.5) and the WAN tier
#: (one inter-site link per node).
PAIRING_INTER: tuple[PairingNode, ...] = (
    PairingNode(inter="hdr", gpus_per_node=8, nics_per_node=8, why="one NIC per GPU"),
    PairingNode(inter="ndr", gpus_per_node=8, nics_per_node=8, why="one NIC per GPU"),
    PairingNode(inter="xdr", gpus_per_node=8, nics_per_node=8, why="one NIC per GPU"),
    PairingNode(inter="roce-200g", gpus_per_node=8, nics_per_node=8, why="one NIC per GPU"),
    PairingNode(inter="roce-400g", gpus_per_node=8, nics_per_node=8, why="one NIC per GPU"),
    PairingNode(inter="roce-800g", gpus_per_node=8, nics_per_node=8, why="one NIC per GPU"),
    PairingNode(
        inter="efa-v2", gpus_per_node=8, nics_per_node=32, why="4 EFA v2 per GPU, as on AWS p5"
    ),
    PairingNode(inter="wan-10g", gpus_per_node=8, nics_per_node=1, why="one WAN link per node"),
)

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class GapResult(BaseModel):
    """Scale-up vs scale-out bandwidth of one node shape, per GPU and per direction.

    Bandwidths are bytes per second per direction. ``inside`` is the all-reduce of
    ``allreduce_size_bytes`` on 1 node x ``gpus_per_node`` GPUs; ``across`` the same on
    ``gpus_per_node`` nodes x 1 GPU with ``across_nics_per_node`` NICs each.
    """

    model_config = _FROZEN

    intra: str
    inter: str
    host_pcie: str | None
    system: str | None
    gpus_per_node: int
    nics_per_node: int
    intra_line_Bps: float
    intra_achievable_Bps: float
    nic_line_Bps: float
    nic_achievable_Bps: float
    capped_by: str | None
    allreduce_size_bytes: float
    across_nics_per_node: int
    inside: Estimate
    across: Estimate
    assumptions: list[str]

    @property
    def nics_per_gpu(self) -> float:
        """Scale-out NICs per GPU (may be fractional: 1 WAN link for 8 GPUs = 0.125)."""
        return self.nics_per_node / self.gpus_per_node

    @property
    def intra_bidirectional_Bps(self) -> float:
        """The scale-up rate as vendors quote it (both directions added): 2 x line."""
        return 2.0 * self.intra_line_Bps

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

    @property
    def ratio_line(self) -> float:
        """Scale-up line rate / scale-out line rate, per GPU and direction."""
        return self.intra_line_Bps / self.inter_line_Bps

    @property
    def ratio_achievable(self) -> float:
        """Scale-up achievable / scale-out achievable, per GPU and direction."""
        return self.intra_achievable_Bps / self.inter_achievable_Bps

    @property
    def slowdown(self) -> float:
        """Time of the all-reduce across nodes / time inside one node."""
        return self.across.time_s / self.inside.time_s


class TpWhatIf(BaseModel):
    """One tensor-parallel all-reduce placed inside a node vs spread over nodes."""

    model_config = _FROZEN

    intra: str
    inter: str
    host_pcie: str | None
    tp: int
    size_bytes: float
    across_nics_per_node: int
    inside: Estimate
    across: Estimate
    assumptions: list[str]

    @property
    def slowdown(self) -> float:
        """Time across nodes / time inside one node."""
        return self.across.time_s / self.inside.time_s


def _link(catalogue: Catalogue, name: str, kinds: tuple[LinkKind, ...], field: str) -> Link:
    link = find_link(catalogue, name)
    if link.kind not in kinds:
        wanted = " or ".join(k.value for k in kinds)
        raise ClusterError(
            f"{{{field}}} {link.id} is a {link.kind.value} link; use a {wanted} link", field=field
        )
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
    ranks: int,
    across_nics: int,
    size_bytes: float,
    *,
    system: str | None,
    dtype: str,
) -> tuple[Estimate, Estimate]:
    """All-reduce of ``size_bytes`` on 1 node x ``ranks`` GPUs and on ``ranks`` nodes x 1 GPU."""
    host = host_pcie.id if host_pcie is not None else None
    inside = estimate(
        catalogue,
        ClusterSpec(nodes=1, gpus_per_node=ranks, intra=intra.id, system=system, host_pcie=host),
        Collective.ALL_REDUCE,
        size_bytes,
        dtype=dtype,
    )
    across = estimate(
        catalogue,
        ClusterSpec(
            nodes=ranks,
            gpus_per_node=1,
            nics_per_node=across_nics,
            inter=inter.id,
            system=system,
            host_pcie=host,
        ),
        Collective.ALL_REDUCE,
        size_bytes,
        dtype=dtype,
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
) -> GapResult:
    """Compare scale-up and scale-out bandwidth per GPU (per direction) for one node shape.

    ``intra`` is a scale-up (or PCIe) link id, ``inter`` a scale-out or WAN link id,
    ``host_pcie`` the PCIe link each NIC sits on (caps the NIC's achievable rate). ``system``
    only lends its GPU generation and NVSwitch flag to the two all-reduce estimates. Raises
    :class:`~ibcalc.errors.UnknownNameError` for unknown names (with suggestions) and
    `~ibcalc.errors.ClusterError` for links of the wrong kind or counts out of range.
    """
    check_count("gpus_per_node", gpus_per_node, 2, MAX_GPUS_PER_NODE)
    check_count("nics_per_node", nics_per_node, 1, MAX_NICS_PER_NODE)
    up = _link(catalogue, intra, (LinkKind.SCALE_UP, LinkKind.HOST), "intra")
    out = _link(catalogue, inter, (LinkKind.SCALE_OUT, LinkKind.WAN), "inter")
    host = (
        _link(catalogue, host_pcie, (LinkKind.HOST,), "host_pcie")
        if host_pcie is not None
        else None
    )
    if system is not None:
        system = find_system(catalogue, system).id
    notes: list[str] = []

    # The engine's own tier 0 for this node: mesh links count only the links in use.
    node = resolve_cluster(
        catalogue, ClusterSpec(nodes=1, gpus_per_node=gpus_per_node, intra=up.id, system=system)
    )
    tier = node.topology.up
    assert tier is not None  # gpus_per_node >= 2 always builds a scale-up tier
    notes.extend(n for n in node.assumptions if "mesh" in n)

    nic_line = out.per_direction_Bps
    nic_achievable = out.achievable_Bps
    capped_by: str | None = None
    if host is not None and host.achievable_Bps < nic_achievable:
        nic_achievable = host.achievable_Bps
        capped_by = host.id
        notes.append(
            f"each {out.id} NIC ({nic_line / GB:g} GB/s line, {out.achievable_Bps / GB:.1f} "
            f"achievable) is capped by its {host.id} host link at "
            f"{host.achievable_Bps / GB:.1f} GB/s achievable"
        )
    if out.scope not in ("per-port", "per-link"):
        notes.append(f"{out.id} is a {out.scope} figure; it is counted once per NIC here")

    across_nics = nics_per_gpu_node(nics_per_node, gpus_per_node)
    share = nics_per_node / gpus_per_node
    if across_nics != share:
        notes.append(
            f"across nodes each one-GPU node gets {across_nics} x {out.id} "
            f"(the node has {nics_per_node} for {gpus_per_node} GPUs, {share:g} per GPU, "
            "rounded up)"
        )
    inside, across = _placements(
        catalogue, up, out, host, gpus_per_node, across_nics, size_bytes, system=system, dtype=dtype
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
        nic_line_Bps=nic_line,
        nic_achievable_Bps=nic_achievable,
        capped_by=capped_by,
        allreduce_size_bytes=inside.size_bytes,
        across_nics_per_node=across_nics,
        inside=inside,
        across=across,
        assumptions=notes,
    )


def gap_for_system(
    catalogue: Catalogue,
    system: str,
    *,
    intra: str | None = None,
    inter: str | None = None,
    gpus_per_node: int | None = None,
    nics_per_node: int | None = None,
    host_pcie: str | None = None,
) -> GapResult:
    """:func:`gap` for a system preset, each field overridable.

    The preset's NIC count is used only with the preset's own fabric; another ``inter`` gets one
    NIC per GPU unless ``nics_per_node`` says otherwise (as
    :func:`~ibcalc.cluster.resolve.resolve_cluster` does).
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
    notes: list[str] = []
    if nics_per_node is not None:
        nics = nics_per_node
    elif find_link(catalogue, inter_id).id == preset.inter and preset.nics_per_node > 0:
        nics = preset.nics_per_node
    else:
        nics = gpus
        notes.append(f"{nics} NICs per node (one per GPU) assumed ({{nics_per_node}})")
    result = gap(
        catalogue,
        intra_id,
        inter_id,
        gpus,
        nics,
        host_pcie or preset.host_pcie,
        system=preset.id,
    )
    notes.insert(0, f"node shape from {preset.id} ({preset.name})")
    return result.model_copy(update={"assumptions": notes + result.assumptions})


def common_pairings(catalogue: Catalogue) -> list[GapResult]:
    """The gap for every common scale-up link against every common scale-out link.

    Scale-up: :data:`PAIRING_INTRA` (8 GPUs per node); scale-out: :data:`PAIRING_INTER` with the
    NIC count each fabric usually has. No host PCIe cap is applied: this is a comparison of links
    (use :func:`gap` with ``host_pcie`` or :func:`gap_for_system` for a real node).
    """
    results: list[GapResult] = []
    for intra in PAIRING_INTRA:
        for node in PAIRING_INTER:
            result = gap(catalogue, intra, node.inter, node.gpus_per_node, node.nics_per_node)
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
) -> TpWhatIf:
    """A tensor-parallel all-reduce of ``size_bytes`` on ``tp`` GPUs: inside one node or not.

    Inside: 1 node x ``tp`` GPUs on ``intra``. Across: ``tp`` nodes x 1 GPU on ``inter`` with
    ``nics_per_node`` NICs each (each node holds one GPU, so give it that GPU's NICs). The
    same bytes move in both; only the links differ. Returns both estimates and the slowdown.
    """
    check_count("tp", tp, 2, MAX_GPUS_PER_NODE)
    check_count("nics_per_node", nics_per_node, 1, MAX_NICS_PER_NODE)
    up = _link(catalogue, intra, (LinkKind.SCALE_UP, LinkKind.HOST), "intra")
    out = _link(catalogue, inter, (LinkKind.SCALE_OUT, LinkKind.WAN), "inter")
    host = (
        _link(catalogue, host_pcie, (LinkKind.HOST,), "host_pcie")
        if host_pcie is not None
        else None
    )
    if system is not None:
        system = find_system(catalogue, system).id
    inside, across = _placements(
        catalogue, up, out, host, tp, nics_per_node, size_bytes, system=system, dtype=dtype
    )
    notes = [
        f"the same all-reduce of {inside.size_bytes:.0f} B ({dtype}) over {tp} GPUs: "
        f"1 node x {tp} on {up.id} vs {tp} nodes x 1 on {out.id} "
        f"({nics_per_node} NIC{'s' if nics_per_node != 1 else ''} each)",
        f"inside: {inside.best.algorithm.value}/{inside.best.protocol.value}; "
        f"across: {across.best.algorithm.value}/{across.best.protocol.value} "
        "(NCCL-like choice in each placement)",
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


def _placement_dict(est: Estimate, link: str) -> dict[str, Any]:
    return {
        "nodes": est.nodes,
        "gpus_per_node": est.gpus_per_node,
        "nics_per_node": est.nics_per_node,
        "link": link,
        "size_bytes": est.size_bytes,
        "time_s": est.time_s,
        "algorithm": est.best.algorithm.value,
        "protocol": est.best.protocol.value,
        "busbw_GBps": est.busbw_Bps / GB,
        "busbw_equivalent": est.best.equivalent_busbw,
        "bottleneck": est.best.bottleneck,
    }


def gap_dict(result: GapResult) -> dict[str, Any]:
    """The JSON object of a gap result; bandwidths in GB/s (10^9 B/s), per direction.

    ``intra_GBps`` and ``inter_per_gpu_GBps`` are line rates per GPU; ``ratio_line`` is their
    ratio; the ``*_achievable_*`` keys and ``ratio_achievable`` apply the catalogue efficiencies
    (and the host PCIe cap, named in ``capped_by``).
    """
    return {
        "intra": result.intra,
        "inter": result.inter,
        "host_pcie": result.host_pcie,
        "system": result.system,
        "gpus_per_node": result.gpus_per_node,
        "nics_per_node": result.nics_per_node,
        "nics_per_gpu": result.nics_per_gpu,
        "intra_GBps": result.intra_line_Bps / GB,
        "intra_achievable_GBps": result.intra_achievable_Bps / GB,
        "intra_bidirectional_GBps": result.intra_bidirectional_Bps / GB,
        "nic_GBps": result.nic_line_Bps / GB,
        "nic_achievable_GBps": result.nic_achievable_Bps / GB,
        "inter_per_gpu_GBps": result.inter_line_Bps / GB,
        "inter_per_gpu_achievable_GBps": result.inter_achievable_Bps / GB,
        "inter_per_node_GBps": result.inter_node_line_Bps / GB,
        "inter_per_node_achievable_GBps": result.inter_node_achievable_Bps / GB,
        "capped_by": result.capped_by,
        "ratio_line": result.ratio_line,
        "ratio_achievable": result.ratio_achievable,
        "allreduce_size_bytes": result.allreduce_size_bytes,
        "allreduce_inside_s": result.inside.time_s,
        "allreduce_across_s": result.across.time_s,
        "slowdown": result.slowdown,
        "allreduce_inside": _placement_dict(result.inside, result.intra),
        "allreduce_across": _placement_dict(result.across, result.inter),
        "conventions": CONVENTIONS,
        "assumptions": list(result.assumptions),
    }


def tp_dict(whatif: TpWhatIf) -> dict[str, Any]:
    """The JSON object of a tensor-parallel what-if."""
    return {
        "intra": whatif.intra,
        "inter": whatif.inter,
        "host_pcie": whatif.host_pcie,
        "tp": whatif.tp,
        "size_bytes": whatif.size_bytes,
        "inside_s": whatif.inside.time_s,
        "across_s": whatif.across.time_s,
        "slowdown": whatif.slowdown,
        "inside": _placement_dict(whatif.inside, whatif.intra),
        "across": _placement_dict(whatif.across, whatif.inter),
        "assumptions": list(whatif.assumptions),
    }
