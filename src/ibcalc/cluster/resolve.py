"""Turn what the user asked for (flags or a preset) into tiers the engine can cost.

A :class:`ClusterSpec` holds the user's choices, each optional. :func:`resolve_cluster` fills the
gaps from a system preset or from sensible defaults and records every assumption it made, so
that each result can say which node shape, GPUs per node, links and NIC count it used and how to
change them (docs/architecture.md#results-state-their-assumptions).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from ibcalc.booleans import expect_bool
from ibcalc.catalogue.load import (
    find_link,
    find_system,
    link_role_problem,
    link_role_refusal,
)
from ibcalc.catalogue.models import CALIBRATION_DOUBT, Catalogue, Link, LinkKind, System
from ibcalc.cluster.spec import MAX_GPUS, MAX_NICS_PER_NODE, ClusterSpec
from ibcalc.engine.algorithms.alltoall import torus_ports, torus_shape
from ibcalc.engine.base import Topology
from ibcalc.engine.types import ScaleOutTier, ScaleUpTier
from ibcalc.errors import ClusterError, expect_type
from ibcalc.units import (
    article,
    fixed,
    format_bandwidth,
    format_oversubscription,
    format_share,
    format_slowdown,
    format_time,
    plural,
)

__all__ = [
    "CATALOGUE_OVERRIDES_NOTE",
    "DEFAULT_GPUS_PER_NODE",
    "DEFAULT_NODES",
    "DEFAULT_SYSTEM",
    "DOMAIN_ASSUMED_NOTE",
    "DOMAIN_NOT_ASSUMED_NOTE",
    "LOW_CONFIDENCE_NOTE",
    "MAX_GPUS",
    "NODE_SHAPE_NOTE",
    "NOT_NCCL_NOTE",
    "PROCESS_MODEL_NOTE",
    "RCCL_NOTE",
    "SWITCH_NOTES",
    "WAN_HOP_NOTE",
    "ClusterSpec",
    "ResolvedCluster",
    "catalogue_override_notes",
    "check_count",
    "check_domain_given",
    "default_gpus_per_node",
    "gpu_fed_nic_Bps",
    "inter_assumed_note",
    "nics_of",
    "node_nics",
    "require_collectives",
    "resolve_cluster",
    "scope_note",
    "sharp_hint",
]

#: How a note of a switch the cluster has nothing for begins, by ClusterSpec field: (turned
#: off, requested). ``nccl-check`` tells the caller's switches from the log's by them.
SWITCH_NOTES = {
    "nvls": ("NVLS turned off, but ", "NVLS requested but "),
    "sharp": ("SHARP turned off, but ", "SHARP requested but "),
}

#: How a cluster's assumptions begin the note of catalogue files laid over the built-in one.
CATALOGUE_OVERRIDES_NOTE = "catalogue overrides loaded: "
#: Node shape assumed when only a fabric is named and no preset uses that fabric.
DEFAULT_SYSTEM = "dgx-h100"
#: How the note begins where a scale-up link named alone makes one node.
INTRA_ONLY = "1 node assumed: only a scale-up link"


def inter_assumed_note(link_id: str) -> str:
    """The note of the scale-out link ``link_id`` assumed where neither it nor a preset is
    named (a checkpoint whose storage NICs are not that link leaves it out)."""
    return f"scale-out link {link_id} assumed ({{inter}})"


#: Settings that ask about a network between nodes: given beside a scale-up link alone, the
#: default node count stays 2 (only the link, and the GPUs it joins, ask about one node).
_NETWORK_FIELDS = (
    "nics_per_node",
    "host_pcie",
    "host_cpu",
    "sharp",
    "scale_up_domain",
    "oversubscription",
    "cross_leaf_fraction",
    "neighbour_cross_leaf_fraction",
    "unaligned_cross_leaf_fraction",
    "leaf_group_nodes",
    "sites",
    "wan",
    "wan_links",
    "wan_latency_s",
)

#: GPUs per node assumed when neither a preset nor the user gives a number (an HGX/DGX baseboard).
DEFAULT_GPUS_PER_NODE = 8
#: Node count assumed when none is given: the smallest job that crosses the fabric.
DEFAULT_NODES = 2

_ARCH_BY_LINK = {
    "nvlink1": "volta",
    "nvlink2": "volta",
    "nvlink3": "ampere",
    "nvlink3-a800": "ampere",
    "nvlink4": "hopper",
    "nvlink4-h800": "hopper",
    "nvlink4-bridge": "hopper",
    "nvlink4-mesh4": "hopper",
    "nvlink5": "blackwell",
    # AMD's Infinity Fabric names its GPU too: an all-to-all's messages take its clock
    # (--intra xgmi-mi355x had been priced at Hopper's, 24.0 us for 1 KiB on 8 GPUs against the
    # mi355x-8 preset's 21.1 us; a review). xgmi-mi350x is an alias of xgmi-mi355x, so an
    # MI350X (2200 MHz) takes the MI355X's 2400 MHz.
    "xgmi-mi250x": "cdna2",
    "xgmi-mi300x": "cdna3",
    "xgmi-mi355x": "cdna4",
}
#: GPU architectures whose collectives run on RCCL rather than NCCL.
_AMD_ARCHS = frozenset({"cdna2", "cdna3", "cdna4"})
#: Scale-up link families no published run in the model's data measured, with the collective
#: library that drives them (none of them is NCCL or RCCL): their estimates carry a range
#: borrowed from other links, and say so.
#: What the note of a link outside NCCL says after the link's name (``gap`` repeats it).
NOT_NCCL_NOTE = " is priced with NCCL's algorithms, tuner and protocols"
#: What the note of a scale-up domain larger than any preset builds says after the domain's size
#: and link (``gap`` repeats it).
DOMAIN_ASSUMED_NOTE = " domain is assumed"
#: How the note of a preset's NVLink domain across nodes, dropped for a node resized, ends
#: (``gap`` repeats it).
DOMAIN_NOT_ASSUMED_NOTE = "NVLink domain is not assumed (one node per domain)"
#: How the note that AMD GPUs run RCCL begins (``gap`` repeats it).
RCCL_NOTE = "AMD GPUs run RCCL"
#: Said to a collective estimate where a node's GPU count is given on one node (or with the node
#: count left to its default) and the process model is not: nccl-tests' ``-g`` is GPUs per
#: process, ibcalc's GPUs per node (``ResolvedCluster.process_notes``).
PROCESS_MODEL_NOTE = (
    "one process per GPU (nccl-tests -g 1): {gpus_per_node} counts a node's GPUs; one process "
    "driving N of them (nccl-tests -g N) is {gpus_per_process} N"
)
#: How the note naming a cluster's low-confidence catalogue entries begins.
LOW_CONFIDENCE_NOTE = "low-confidence catalogue entries: "
UNMEASURED_FAMILIES = {
    "ici": "TPU ICI, driven by XLA's collectives, not NCCL",
    "hccs": "Ascend HCCS, driven by HCCL, not NCCL",
    "gaudi": "Intel Gaudi, driven by HCCL, not NCCL",
    "ualink": "UALink, no collective library measured yet",
}
_ENGINE_ARCH = {
    "pascal": "volta",
    "volta": "volta",
    "turing": "volta",
    "ampere": "ampere",
    "ada": "ampere",
    "hopper": "hopper",
    "blackwell": "blackwell",
}


#: How the note on sites ends, after the one-way latency of a WAN hop (``3 sites of 4 nodes, 1 x
#: wan-100g per site (1.00 ms one way per WAN hop)``): ``gap`` repeats it beside the across rate
#: the latency bounds.
WAN_HOP_NOTE = "one way per WAN hop)"
#: Said of a default of 2 nodes: it concerns all-reduce across nodes (NCCL's tree) only, and
#: callers drop it where none runs (another collective, a serving layout inside each node).
TWO_NODE_TREE_NOTE = "2 nodes let NCCL's tree halve network traffic"
#: How the note on host options given to one scale-up domain ends (``--host-cpu``,
#: ``--nics-per-node``, ``--host-pcie`` change no collective there); a caller whose traffic does
#: leave the domain (disaggregated serving's KV transfer) drops it.
HOST_OPTIONS_UNUSED = "no collective: one scale-up domain, no network between GPUs"
#: How the note on network options given to one scale-up domain ends (``--sharp``,
#: ``--cross-leaf``); dropped as :data:`HOST_OPTIONS_UNUSED` is.
NETWORK_OPTIONS_IGNORED = "ignored: one scale-up domain, no network"
#: What a scale-out link named for one scale-up domain does, and why (``--inter``, a design's
#: ``fabric.link``): its note, and check's warning at ``fabric.link``; design show says the
#: first part on its fabric line, which gives the reason once for every key.
LINK_CARRIES_NO_COLLECTIVE = (
    "carries no collective",
    "one scale-up domain, no network between GPUs",
)
#: Why a down:up ratio is not priced on one scale-up domain (:func:`prices_oversubscription`);
#: the JSON of ``design show`` gives it as ``oversubscription_not_priced``.
NO_NETWORK_TO_TAPER = "one scale-up domain, no network for a ratio to taper"
#: What every line that meets a ratio on one scale-up domain says of it, in these words: an
#: estimate's note on ``--oversubscription``, check's warning and refusal, design show (one
#: rack at 2:1 had read 'not used', 'ignored' and 'not priced' in one report and the next);
#: dropped as :data:`HOST_OPTIONS_UNUSED` is.
OVERSUBSCRIPTION_NOT_PRICED = f"not priced: {NO_NETWORK_TO_TAPER}"


@dataclass(frozen=True)
class ResolvedCluster:
    """A cluster with every gap filled, its tiers, and the assumptions behind them."""

    topology: Topology
    nodes: int
    gpus_per_node: int
    nics_per_node: int
    intra: Link | None
    inter: Link | None
    host_pcie: Link | None
    system: System | None
    gpu_arch: str
    #: ``host_pcie`` is the GPUs' own PCIe scale-up link (:func:`gpu_bus`), not one named
    host_pcie_is_gpu_bus: bool = False
    #: a tuple: a cluster is shared by every estimate made on it, and a list appended to by one
    #: caller would show in the next estimate's assumptions
    assumptions: tuple[str, ...] = ()
    spec: ClusterSpec = field(default_factory=ClusterSpec)
    #: the assumptions (some of ``assumptions``) that only collectives read: the scale-up link,
    #: the compute NICs, SHARP, NVLS, oversubscription; a workload that runs none (a checkpoint
    #: through its own storage NICs) leaves them out
    fabric_notes: tuple[str, ...] = ()
    #: A node's NICs of its scale-out link (the one named, else its preset's), as a network of
    #: several nodes would take them, also where one node builds none (0: no link known)
    node_nics: int = 0
    #: The link ``node_nics`` counts (None: no link known)
    node_nics_link: str | None = None
    #: False for a cluster resolved for work that runs no collective (``resolve_cluster(...,
    #: collectives=False)``): its topology may be one node's, and estimates refuse it
    collectives: bool = True
    #: the assumptions (some of ``assumptions``) that only all-to-all reads: the torus's
    #: bisection bound; an estimate of another collective leaves them out
    alltoall_notes: tuple[str, ...] = ()
    #: what only send/recv is told (not among ``assumptions``): a partial mesh's pair rate
    p2p_notes: tuple[str, ...] = ()
    #: what a collective estimate is told of the process model (not among ``assumptions``:
    #: a log's header says it for nccl-check, and a workload runs a process per GPU)
    process_notes: tuple[str, ...] = ()
    #: the assumption that ``--gpus-per-node`` resized a preset's node (None: not resized); a
    #: log's own rank count says as much, so nccl-check leaves it out
    resize_note: str | None = None

    @property
    def ranks(self) -> int:
        """Total GPUs (ranks) in the job."""
        return self.nodes * self.gpus_per_node

    def __repr__(self) -> str:
        """The cluster in one line (:meth:`describe`; the dataclass's repr ran to 12,000
        characters of links and assumptions): its fields hold the rest."""
        return f"{type(self).__name__}({self.describe()})"

    def describe(self) -> str:
        """The cluster in one line, as nccl-check's report heads a run with it: '16 x 8 GPUs
        (dgx-h100) nvlink4 + 8 x ndr per node with NVLS'."""
        parts = [f"{self.nodes} x {self.gpus_per_node} GPUs"]
        if self.system is not None:
            parts.append(f"({self.system.id})")
        if self.intra is not None:
            parts.append(self.intra.id)
        if self.inter is not None and self.topology.domains > 1:
            parts.append(f"+ {self.nics_per_node} x {self.inter.id} per node")
        up = self.topology.up
        if up is not None and up.nvls_bw_Bps is not None:
            parts.append("with NVLS")
        return " ".join(parts)


#: How the note on the node a cluster without a system was given starts (a sweep of several
#: fabrics runs every one on the first one's node: the note holds for all of them).
NODE_SHAPE_NOTE = "node shape: "


def catalogue_override_notes(catalogue: Catalogue) -> list[str]:
    """The note naming the override files laid over the built-in catalogue, as every estimate
    and ``gap`` says it, or none."""
    if len(catalogue.origins) < 2:
        return []
    return [CATALOGUE_OVERRIDES_NOTE + ", ".join(catalogue.origins[1:])]


def require_collectives(cluster: ResolvedCluster) -> None:
    """Refuse a cluster resolved for work that runs no collective (``collectives=False``): its
    topology may be one node's (two NIC-less nodes had been priced as one 8-GPU node with the
    16-rank busbw factor, and train_step had stopped on a bare AssertionError); anything but a
    resolved cluster is a :class:`~ibcalc.errors.WrongTypeError` (train_step given a
    ClusterSpec had raised AttributeError: a library user's review)."""
    expect_type(
        cluster,
        ResolvedCluster,
        "cluster",
        "resolve_cluster(catalogue, spec) makes one (fit_cluster for a training layout)",
    )
    if not cluster.collectives:
        raise ClusterError(
            "this cluster was resolved for work that runs no collective (collectives=False): "
            "resolve it again to cost one",
            field="nodes",
        )


def prices_oversubscription(cluster: ResolvedCluster) -> bool:
    """Whether a down:up oversubscription is priced on ``cluster``: only a network between
    scale-up domains (a scale-out tier) has uplinks for a ratio to taper. A cluster of one domain
    (one NVL72 rack, one node) has none: a ratio given for it is not priced (its assumptions say
    so, :data:`OVERSUBSCRIPTION_NOT_PRICED`), its collectives are priced without it, and a design's
    gate on the ratio has nothing to judge (docs/design-files.md#oversubscription-requirement).
    """
    return cluster.topology.out is not None


def node_nics(cluster: ResolvedCluster) -> int:
    """The scale-out NICs of one node, as resolving the cluster on more nodes would take them
    (``ResolvedCluster.node_nics``, set on one node too); one per GPU where no link is known."""
    return cluster.node_nics or cluster.gpus_per_node


def nics_of(cluster: ResolvedCluster, link_id: str) -> int | None:
    """A node's NICs of ``link_id``, where the cluster says: the counted scale-out link's
    (:func:`node_nics`), the preset's own link's (scaled with its GPUs when resized: named for
    storage beside another scale-out link, any count up to 256 had passed); None for a link the
    cluster does not count."""
    if link_id == cluster.node_nics_link:
        return node_nics(cluster)
    system = cluster.system
    if system is None or link_id != system.inter or not system.nics_per_node:
        return None
    if cluster.gpus_per_node != system.gpus_per_node:
        return scaled_nics(system, cluster.gpus_per_node, check=False)
    return system.nics_per_node


def kept_preset_nics(
    catalogue: Catalogue, system: System | None, link: Link, gpus_per_node: int, *, check: bool
) -> tuple[int, str] | None:
    """A preset's NIC count kept for another scale-out ``link`` (``--fabric ndr`` on abci2-a:
    its 4 HDR ports become 4 NDR ports), with the note that says so; one NIC per GPU in place of
    the preset's count had made a faster fabric slower at small sizes (more channels, more proxy
    operations): abci2-a's 128 KiB broadcast on 4 nodes took 62.8 us on hdr and 114 us on ndr (a
    review). A preset with more than one NIC per GPU keeps its line rate per GPU instead, in
    whole NICs, one per GPU at least (OCI's 16 x 200G for 8 GPUs: 16 HDR, 8 NDR; 16 NDR ports
    had doubled its bandwidth per GPU, one per GPU had halved it on HDR: two reviews). None where
    the preset has no NIC, ``link`` is its own, or either link exists only inside a cloud's
    instances (EFA, GPUDirect-TCPX: their counts come with the instance, not the node's slots),
    or ``link`` is a WAN (a site's WAN links are not its nodes' ports: ``gap --system dgx-h100
    --inter wan-10g`` had counted the 8 NDR ports as 8 WAN links a site, 360x, where one link a
    site, as without the preset, is 2,880x).
    ``check``: refuse a count past the most a node may have, as the other defaults are."""
    if system is None or system.inter is None or system.nics_per_node <= 0:
        return None
    if link.id == system.inter or _cloud_only(link) or link.kind is LinkKind.WAN:
        return None
    own = find_link(catalogue, system.inter)
    if _cloud_only(own):
        return None
    if system.nics_per_node > system.gpus_per_node:
        # the node's line rate per GPU, in NICs of the new link (whole ones, one per GPU at least)
        per_gpu = system.nics_per_node / system.gpus_per_node * own.per_direction_Bps
        count = max(1, math.ceil(per_gpu / link.per_direction_Bps - 1e-9)) * gpus_per_node
        rate = format_bandwidth(per_gpu)
        if check:
            check_nic_default(count, gpus_per_node, f"{link.id} for {system.id}'s {rate} per GPU")
        return count, (
            f"{plural(count, link.id + ' NIC')} per node: {system.id}'s {rate} of "
            f"{system.inter} line rate per GPU in whole {link.id} NICs, at least one per GPU "
            "({nics_per_node})"
        )
    count = system.nics_per_node
    if gpus_per_node != system.gpus_per_node:
        count = scaled_nics(system, gpus_per_node, check=check)
        per_gpu = system.nics_per_node / system.gpus_per_node
        said = f"{system.id}'s {per_gpu:g} {system.inter} ports per GPU kept for "
        said += plural(gpus_per_node, "GPU")
    else:
        said = f"{system.id}'s {plural(count, system.inter + ' port')}"
    return count, f"{plural(count, link.id + ' NIC')} per node: {said} ({{nics_per_node}})"


def _node_nic_count(
    spec: ClusterSpec,
    system: System | None,
    link: Link,
    instance: System | None,
    gpus_per_node: int,
    *,
    resized: bool,
    strict: bool,
    kept: tuple[int, str] | None = None,
) -> tuple[int, str | None]:
    """A node's NICs of scale-out ``link``, and the note that says how they were taken (None
    where given or the preset's own): the count given; the preset's for its own link (scaled
    with its GPUs when resized); a cloud instance's; the preset's for another link (``kept``,
    :func:`kept_preset_nics`); else one per GPU (``strict``: refused past the most a node may
    have, where a network is built of them)."""
    if spec.nics_per_node is not None:
        return spec.nics_per_node, None
    if system is not None and system.inter == link.id and system.nics_per_node > 0:
        if resized:
            count = scaled_nics(system, gpus_per_node, check=strict)
            return count, resized_nics_note(system, count, gpus_per_node)
        return system.nics_per_node, None
    if instance is not None:
        count = scaled_nics(instance, gpus_per_node, check=strict)
        return count, instance_nics_note(link, instance, count)
    if kept is not None:
        return kept
    if strict:
        check_nic_default(gpus_per_node, gpus_per_node, "one per GPU")
    return gpus_per_node, (
        f"{plural(gpus_per_node, 'NIC')} per node (one per GPU) assumed ({{nics_per_node}})"
    )


def sharp_hint(link_id: str) -> str:
    """The note a cluster carries when its fabric has SHARP and the caller did not turn it on
    (an estimate of a collective SHARP does not serve drops it)."""
    return f"{link_id} supports SHARP (CollNet); enable with {{sharp}}"


def _pick_system(catalogue: Catalogue, spec: ClusterSpec, notes: list[str]) -> System | None:
    if spec.system is not None:
        return find_system(catalogue, spec.system)
    if spec.intra is not None or spec.gpus_per_node is not None:
        return None
    if spec.inter is not None:
        inter = find_link(catalogue, spec.inter, role="inter")
        # Only presets a fabric implies: NVIDIA's own DGX generations (HDR -> DGX A100, NDR ->
        # DGX H100, XDR -> DGX B300) and cloud fabrics that exist on one cloud (EFA,
        # GPUDirect-TCPX). Generic fabrics (RoCE, Slingshot) keep the default 8-GPU H100 node.
        cloud_only = _cloud_only(inter)
        for system in catalogue.systems:
            if system.inter == inter.id and (system.id.startswith("dgx-") or cloud_only):
                notes.append(
                    f"{NODE_SHAPE_NOTE}{system.id} ({system.name}), the preset {inter.id} implies; "
                    "change with {system}, {gpus_per_node}, {intra}"
                )
                return system
    system = find_system(catalogue, DEFAULT_SYSTEM)
    notes.append(
        f"{NODE_SHAPE_NOTE}{system.id} ({system.name}) assumed; change with {{system}}, "
        "{gpus_per_node}, {intra}"
    )
    return system


def _cloud_only(link: Link) -> bool:
    """True for a fabric that exists only inside one cloud's instances (EFA on AWS, GPUDirect-TCPX
    on Google Cloud): its NICs come with the instance, so the instance's count is the count."""
    return link.family == "efa" or link.id.startswith("gcp-")


def instance_of(catalogue: Catalogue, link: Link) -> System | None:
    """The instance preset a cloud-only ``link`` comes with (efa-v2: aws-p5), whose NICs per GPU
    (and host PCIe links) a node given only that link takes; None for any other link (a node
    then takes one NIC per GPU)."""
    if not _cloud_only(link):
        return None
    return next((s for s in catalogue.systems if s.inter == link.id and s.nics_per_node > 0), None)


def scaled_nics(system: System, gpus_per_node: int, *, check: bool = True) -> int:
    """``system``'s NICs per GPU kept on ``gpus_per_node`` GPUs, rounded up (a GPU's share of a
    NIC is still a NIC to reach): aws-p4d's 4 for 8 GPUs gives 3 for 5, 1 for 1. A count past
    the most a node may have is refused (``check``), naming the ratio it came from."""
    per_gpu = system.nics_per_node / system.gpus_per_node
    nics = max(1, math.ceil(per_gpu * gpus_per_node - 1e-9))
    if check:
        check_nic_default(nics, gpus_per_node, f"{system.id}'s {per_gpu:g} per GPU")
    return nics


def resized_nics_note(system: System, nics: int, gpus_per_node: int) -> str:
    """The assumption of a preset resized to ``gpus_per_node`` GPUs that kept its NICs per GPU."""
    per_gpu = system.nics_per_node / system.gpus_per_node
    # rounded up where the share is no whole count (aws-p4d's 0.5 on 5 GPUs: 3, not 2.5; it had
    # read 'kept' beside 3: review DK)
    kept = "kept" if abs(per_gpu * gpus_per_node - nics) < 1e-9 else "rounded up to whole NICs"
    return (
        f"{plural(nics, 'NIC')} per node: {system.id}'s {per_gpu:g} per GPU {kept} for "
        f"{plural(gpus_per_node, 'GPU')} ({{nics_per_node}})"
    )


def instance_nics_note(link: Link, system: System, nics: int) -> str:
    """The assumption of a node that took ``system``'s NIC count for the cloud-only ``link``."""
    per_gpu = system.nics_per_node / system.gpus_per_node
    return (
        f"{nics} x {link.id} per node assumed: {per_gpu:g} per GPU, as on {system.id}, the "
        f"instance {link.id} comes with ({{nics_per_node}})"
    )


def check_nic_default(nics: int, gpus_per_node: int, why: str) -> None:
    """Refuse a default NIC count past the most a node may have, saying where it came from
    (``why``: one per GPU, a preset's NICs per GPU) rather than as a count the user gave."""
    if nics > MAX_NICS_PER_NODE:
        raise ClusterError(
            f"{gpus_per_node} GPUs per node would need {nics} NICs ({why}, more than "
            f"{MAX_NICS_PER_NODE}); give {{nics_per_node}}",
            field="nics_per_node",
        )


def check_count(field: str, value: int, low: int, high: int) -> int:
    """``value`` as an int if it is a whole number with ``low <= value <= high``; else refuse it
    naming the field (a string "8" had failed on the comparison with a TypeError). A whole
    number of another numeric type (``16.0``, ``Fraction(16)``, numpy's ``int64``) is that
    int, as :class:`ClusterSpec`, the workload specs, ``size_fat_tree`` and ``sweep_sizes`` take
    one (``tp=16.0`` had been refused where ``ClusterSpec(nodes=16.0)`` was taken); one past the
    range is out of it (``tp=1e30`` too: a library user's review)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Decimal):
        raise ClusterError(f"{{{field}}} {value!r} is not a whole number", field=field)
    if not isinstance(value, numbers.Integral):
        try:
            real = float(value)
        except OverflowError:  # a Fraction past any float: out of range, whole or not
            real = math.inf
        if math.isnan(real) or (math.isinf(real) and isinstance(value, float)):
            # in ClusterSpec's words for nodes=nan
            raise ClusterError(f"{{{field}}} {value!r} is not a finite number", field=field)
        if math.isfinite(real) and not real.is_integer():
            raise ClusterError(f"{{{field}}} {value!r} is not a whole number", field=field)
    if not low <= value <= high:
        raise ClusterError(f"{{{field}}} {value} is out of range ({low}..{high})", field=field)
    return int(value)


def scope_note(intra: Link) -> str | None:
    """What a scale-up link's figure stands for where it is not a GPU's whole (one xGMI link of
    an MI250X, 50 GB/s, of the several a GPU has): used as the GPU's scale-up bandwidth, it is
    a floor. None for a per-GPU figure, and for PCIe (one link per GPU)."""
    if intra.scope == "per-gpu" or intra.kind is not LinkKind.SCALE_UP:
        return None
    return (
        f"{intra.id} is a {intra.scope} figure ({format_bandwidth(intra.per_direction_Bps)} per "
        "direction), used as each GPU's whole scale-up bandwidth: a GPU with several such links "
        "to its peers has more ({intra})"
    )


def default_gpus_per_node(catalogue: Catalogue, intra: str | None) -> tuple[int, str]:
    """GPUs per node where neither a count nor a system is given, and the note that says so:
    :data:`DEFAULT_GPUS_PER_NODE`, or fewer where ``intra`` is a switchless mesh joining fewer
    ('gap --intra nvlink4-mesh4' had been refused for 8 GPUs per node nobody gave: review BL)."""
    link = find_link(catalogue, intra, role="intra") if intra is not None else None
    assumed = " GPUs per node assumed ({gpus_per_node})"
    if link is not None and link.mesh_gpus is not None and link.mesh_gpus < DEFAULT_GPUS_PER_NODE:
        return link.mesh_gpus, f"{link.mesh_gpus}{assumed}: the most {link.id} joins"
    return DEFAULT_GPUS_PER_NODE, f"{DEFAULT_GPUS_PER_NODE}{assumed}"


def expect_catalogue_and_spec(catalogue: object, spec: object) -> None:
    """:class:`~ibcalc.errors.WrongTypeError` unless ``catalogue`` is a Catalogue and ``spec``
    a ClusterSpec, for every call that resolves a cluster (fit_cluster and serving_cluster
    given None had failed on "'NoneType' object has no attribute 'nodes'")."""
    expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")
    expect_type(spec, ClusterSpec, "spec", "ClusterSpec(system='dgx-h100', nodes=2), say")


def resolve_cluster(
    catalogue: Catalogue,
    spec: ClusterSpec,
    *,
    collectives: bool = True,
    nodes_field: str | None = "nodes",
) -> ResolvedCluster:
    """Fill the gaps of ``spec`` and build its tiers; record each assumption made.

    ``collectives=False`` resolves a cluster on which no collective will run (a checkpoint, a
    one-GPU serving instance): one GPU is a cluster then, and nodes without a scale-out NIC
    are not refused but counted, their topology one node's (no network joins them).
    ``nodes_field``: the field a refusal tells the caller to raise for more nodes, or None
    for a caller that describes one node (``gap``, which has no ``--nodes``).
    """
    expect_catalogue_and_spec(catalogue, spec)
    collectives = expect_bool(collectives, "collectives")
    if nodes_field is not None:
        expect_type(nodes_field, str, "nodes_field")
    notes: list[str] = []
    fabric: list[str] = []  # the notes only collectives read (ResolvedCluster.fabric_notes)
    alltoall: list[str] = []  # the notes only all-to-all reads (ResolvedCluster.alltoall_notes)
    p2p: list[str] = []  # the notes only send/recv reads (ResolvedCluster.p2p_notes)
    notes += catalogue_override_notes(catalogue)
    system = _pick_system(catalogue, spec, notes)

    if spec.gpus_per_node is not None:
        gpus_per_node = spec.gpus_per_node
    else:
        gpus_per_node = system.gpus_per_node if system else DEFAULT_GPUS_PER_NODE
    if spec.gpus_per_node is None and system is None:
        gpus_per_node, note = default_gpus_per_node(catalogue, spec.intra)
        notes.append(note)
    resized = system is not None and gpus_per_node != system.gpus_per_node
    resize_note: str | None = None
    if resized and system is not None:
        # nccl-tests' -g is GPUs per process; a pasted '-g 4' had resized the node unsaid
        resize_note = (
            f"{gpus_per_node} GPU{'s' * (gpus_per_node != 1)} per node of {system.id}'s "
            f"{system.gpus_per_node} ({{gpus_per_node}})"
        )
        notes.append(resize_note)

    intra: Link | None = None
    # a domain of one-GPU nodes (a GH200 NVL32-like preset) has a scale-up link all the same
    # (it had reached the domain's tier without one: an AssertionError, a review)
    # (a preset resized to one GPU a node keeps no domain of its own: -g 1 on a DGX)
    domain_size = spec.scale_up_domain or (
        system.scale_up_domain if system is not None and not resized else 1
    )
    if gpus_per_node > 1 or domain_size > 1:
        intra_name = spec.intra or (system.intra if system else None) or "nvlink4"
        intra = find_link(catalogue, intra_name, role="intra")
        refused = link_role_refusal(intra, "intra", "intra", intra_name)
        if refused:
            raise refused
        if spec.intra is None and system is None:
            notes.append(f"scale-up link {intra.id} assumed ({{intra}})")
            fabric.append(notes[-1])
        scope = scope_note(intra)
        if scope is not None:
            notes.append(scope)
            fabric.append(notes[-1])
    if intra is not None and intra.mesh_gpus is not None and gpus_per_node > intra.mesh_gpus:
        # --system mi300x-8 -g 16 had been priced as one 16-GPU xGMI domain (7 links join 8);
        # gap, one node, had been told to give "more --nodes", an option it has not (review)
        more = f", and more {{{nodes_field}}}" if nodes_field is not None else ""
        raise ClusterError(
            f"{{gpus_per_node}} {gpus_per_node}: {intra.id} is a switchless mesh that joins at "
            f"most {intra.mesh_gpus} GPUs, each to each; more GPUs per node are no one scale-up "
            f"domain (give {intra.mesh_gpus} or fewer{more})",
            field="gpus_per_node",
            value=str(gpus_per_node),
        )
    if resized and system is not None and gpus_per_node > system.scale_up_domain:
        notes.append(
            f"{gpus_per_node} GPUs per node is more than {system.id}'s {system.scale_up_domain}: "
            f"{article(gpus_per_node)} {gpus_per_node}-GPU "
            f"{intra.id if intra else 'scale-up'}{DOMAIN_ASSUMED_NOTE}"
        )
    elif system is None and intra is not None:
        domain = spec.scale_up_domain or gpus_per_node
        largest = max(
            (s for s in catalogue.systems if s.intra == intra.id),
            key=lambda s: s.scale_up_domain,
            default=None,
        )
        if largest is not None and domain > largest.scale_up_domain:
            # a 1,024-GPU NVLink 4 "node" had been priced at the link's rate with no word, and
            # a tensor-parallel what-if of 1,024 came out faster than one of 16 (review DR)
            notes.append(
                f"{article(domain)} {domain}-GPU {intra.id}{DOMAIN_ASSUMED_NOTE}: no preset joins "
                f"more than {largest.scale_up_domain} GPUs over {intra.id} ({largest.id}), and "
                "the link's per-GPU rate is taken for all of them"
            )

    no_nic_preset = system is not None and system.nics_per_node == 0 and spec.inter is None
    # a scale-up link alone (--intra tpu-v5e-ici -g 8) asks about one scale-up domain: it had
    # been given 2 nodes joined by an assumed NDR fabric, with a SHARP what-if (review DG)
    intra_only = (
        system is None
        and intra is not None
        and spec.intra is not None
        and spec.inter is None
        and not any(
            getattr(spec, name) != ClusterSpec.model_fields[name].default
            for name in _NETWORK_FIELDS
        )
    )
    default_nodes = 1 if no_nic_preset or intra_only else DEFAULT_NODES
    nodes = spec.nodes if spec.nodes is not None else default_nodes
    if spec.nodes is None and nodes > 1:
        notes.append(f"{nodes} nodes assumed ({{nodes}})")
    elif spec.nodes is None and system is None:
        notes.append(
            f"{INTRA_ONLY}, {intra.id if intra else spec.intra}, is given ({{nodes}} and "
            "{inter} to join more)"
        )
    elif spec.nodes is None:
        assert system is not None
        notes.append(f"1 node assumed: {system.id} has no scale-out NIC ({{nodes}}, {{inter}})")
    unjoined = nodes > 1 and no_nic_preset and not collectives
    if nodes > 1 and no_nic_preset and collectives:
        assert system is not None
        # the NIC count may be known already (a log's 'found 32 nics'): then only the link
        need = "{inter}" if spec.nics_per_node is not None else "{inter} and {nics_per_node}"
        raise ClusterError(
            f"{system.id} has no scale-out NIC; give {need} to join {nodes} of them",
            field="nodes",
        )
    if nodes * gpus_per_node > MAX_GPUS:
        raise ClusterError(
            f"{nodes} nodes x {gpus_per_node} GPUs is more than {MAX_GPUS} GPUs", field="nodes"
        )
    if nodes * gpus_per_node < 2 and collectives:
        raise ClusterError(
            "a collective needs at least 2 GPUs ({nodes}, {gpus_per_node})", field="nodes"
        )

    # a cloud-only fabric named without a NIC count, and not the preset's own: its instance's
    # NICs per GPU (and, without a preset, the host PCIe links they sit on)
    instance = None
    if spec.inter is not None and spec.nics_per_node is None:
        named_link = find_link(catalogue, spec.inter, role="inter")
        if system is None or system.inter != named_link.id:
            instance = instance_of(catalogue, named_link)
    host_pcie: Link | None = None
    host_name = (
        spec.host_pcie
        or (system.host_pcie if system else None)
        or (instance.host_pcie if instance else None)
    )
    if host_name:
        host_pcie = find_link(catalogue, host_name, role="host_pcie")
        # a NIC's rate capped by a WAN or NVLink "host link" made a number out of nothing
        refused = link_role_refusal(host_pcie, "host_pcie", "host_pcie", host_name)
        if refused:
            raise refused
    # GPUs on PCIe reach their NICs across their own link, whatever slot the NIC sits in
    bus_name = spec.intra or (system.intra if system else None)
    host_pcie, gpu_bus_note = nic_host_link(
        host_pcie, find_link(catalogue, bus_name) if bus_name else None
    )

    before = len(notes)
    if unjoined:
        assert system is not None
        notes.append(
            f"{system.id} has no scale-out NIC: the {nodes} nodes are counted, but no network "
            "joins them, and nothing here needs one"
        )
    # nodes no network joins: the tiers are one node's
    scale_up = _scale_up_domain(system, spec, gpus_per_node, 1 if unjoined else nodes, notes)
    fabric += notes[before:]  # how NVLink joins the nodes shapes collectives only
    domains = (1 if unjoined else nodes) * gpus_per_node // scale_up
    nodes_per_domain = scale_up // gpus_per_node
    if spec.nodes is None and domains == 2:
        # what the default means for collectives only (checkpoint leaves fabric notes out); not
        # said where the two nodes share one NVLink domain (GB200 trays): no tree crosses a
        # network there
        notes.append(TWO_NODE_TREE_NOTE)
        fabric.append(notes[-1])

    inter: Link | None = None
    nics_per_node = 0
    # one check of the link's kind: a link given is refused even where one domain leaves it
    # unused
    named = spec.inter
    if named is None and domains > 1:
        named = (system.inter if system else None) or "ndr"
    link = find_link(catalogue, named, role="inter") if named is not None else None
    if link is not None and (refused := link_role_refusal(link, "inter", "inter", named)):
        raise refused
    # the NICs a node has of its scale-out link, built into a network or not (one node: what a
    # checkpoint's storage path through them, or a KV transfer, may use)
    nic_link = link
    if nic_link is None and system is not None and system.inter is not None:
        nic_link = find_link(catalogue, system.inter)
    node_nic_count, nic_note = (
        _node_nic_count(
            spec,
            system,
            nic_link,
            instance,
            gpus_per_node,
            resized=resized,
            strict=domains > 1,
            kept=kept_preset_nics(catalogue, system, nic_link, gpus_per_node, check=domains > 1),
        )
        if nic_link is not None
        else (spec.nics_per_node or 0, None)
    )
    if domains > 1:
        inter = link
        assert inter is not None
        if spec.inter is None and system is None:
            notes.append(inter_assumed_note(inter.id))
        nics_per_node = node_nic_count
        if nic_note is not None:
            notes.append(nic_note)
            fabric.append(notes[-1])
    elif spec.nics_per_node is not None:
        nics_per_node = spec.nics_per_node

    arch = system.gpu_arch if system else _ARCH_BY_LINK.get(intra.id if intra else "", "hopper")
    engine_arch = _ENGINE_ARCH.get(arch, arch)
    if (
        system is None
        and intra is not None
        and intra.id not in _ARCH_BY_LINK
        and intra.family == "pcie"
        and scale_up > 1
    ):
        # a link that names no GPU: its hops are GPU work, priced at the clock of the GPU
        # assumed (two A100 PCIe cards on --intra pcie4 read 8.6 us at 8 B, on the
        # a100-pcie-pair preset 9.41 us, and nothing said which GPU the first assumed; a review)
        # (an all-to-all's messages too: assumptions.clock_scaled_messages)
        notes.append(
            f"{intra.id} names no GPU: its hops and all-to-all messages are priced at a Hopper "
            "GPU's clock (a {system} preset names the GPU; docs/model.md#gpu-clock)"
        )
        fabric.append(notes[-1])  # a checkpoint prices no hop (it had been told of the clock)
    if arch in _AMD_ARCHS or (intra is not None and intra.family == "xgmi"):
        notes.append(
            f"{RCCL_NOTE}, priced here with NCCL's tuner constants and protocols (2.30.7's, "
            "or the release {nccl_version} names): RCCL's own constants are not modelled "
            "(docs/model.md#limitations)"
        )
        fabric.append(notes[-1])

    if intra is not None and intra.family in UNMEASURED_FAMILIES and scale_up > 1:
        notes.append(
            f"{intra.id} ({UNMEASURED_FAMILIES[intra.family]}){NOT_NCCL_NOTE}, and its likely "
            "range comes from NCCL and RCCL runs on other links: no published measurement of it "
            "is in the model's data"
        )
        fabric.append(notes[-1])

    tiers_from = len(notes)  # every note of the scale-up and scale-out tiers is a fabric note
    up_tier = (
        _build_up(intra, scale_up, system, spec, arch=arch, notes=notes, alltoall=alltoall, p2p=p2p)
        if scale_up > 1
        else None
    )
    out_tier = None
    if domains > 1:
        assert inter is not None
        out_tier = _build_out(
            inter,
            host_pcie,
            nics_per_node * nodes_per_domain,
            domains,
            spec,
            notes=notes,
            gpus=scale_up,
            why=gpu_bus_note,
        )
    else:
        # network options with no network to act on: say so rather than drop them
        ignored = [
            flag
            for flag, given in (
                ("{sharp}", spec.sharp),
                ("{cross_leaf_fraction}", spec.cross_leaf_fraction != 1),
                # the siblings of --cross-leaf had gone without a word (a review)
                ("{neighbour_cross_leaf_fraction}", spec.neighbour_cross_leaf_fraction is not None),
                ("{unaligned_cross_leaf_fraction}", spec.unaligned_cross_leaf_fraction is not None),
                ("{leaf_group_nodes}", spec.leaf_group_nodes is not None),
            )
            if given
        ]
        if ignored:
            notes.append(f"{', '.join(ignored)} {NETWORK_OPTIONS_IGNORED}")
        if spec.oversubscription > 1:
            notes.append(f"{{oversubscription}} {OVERSUBSCRIPTION_NOT_PRICED}")
        # the host's CPU, its NICs and their PCIe slot shape only network costs (a review:
        # given on one node they had gone without a word); what reaches outside the node
        # (checkpoint's storage traffic) may still use the NICs and their slot
        unused = [
            flag
            for flag, given in (
                ("{host_cpu}", spec.host_cpu is not None),
                ("{nics_per_node}", spec.nics_per_node is not None),
                ("{host_pcie}", spec.host_pcie is not None),
            )
            if given
        ]
        if unused:
            notes.append(
                f"{', '.join(unused)} change{'s' if len(unused) == 1 else ''} "
                + HOST_OPTIONS_UNUSED
            )
        if link is not None and spec.inter is not None:
            # the link is kept for what reaches outside (checkpoint's storage NICs)
            notes.append(f"{{inter}} {link.id} {': '.join(LINK_CARRIES_NO_COLLECTIVE)}")
    if out_tier is not None and spec.host_cpu is None and system and system.host_cpu == "amd":
        # the preset's host changes NCCL's network overhead and with it the tuner's choice (2 x
        # p5 at 1 MiB: nvlstree/Simple 160 us on the preset, ring/LL 141 us on the same links
        # given as flags, and no line had said the preset's host was AMD; a review)
        notes.append(
            f"host CPU amd ({system.id}'s): NCCL charges 2 us per network ring step on AMD "
            "hosts, 1 us elsewhere ({host_cpu} to change)"
        )
    fabric += notes[tiers_from:]
    given = spec.model_fields_set
    process: list[str] = []  # ResolvedCluster.process_notes
    if (
        (nodes == 1 or "nodes" not in given)
        and gpus_per_node > 1
        and "gpus_per_node" in given
        and "gpus_per_process" not in given
    ):
        # nccl-tests' -g is GPUs per process, ibcalc's GPUs per node: rccl-tests' '-g 8' copied
        # over priced 8 x MI355X at 1 process per GPU, 56 % fast at small sizes, without a word
        # of which process model was used (a review)
        process.append(PROCESS_MODEL_NOTE)
    wan_tier = _build_wan(catalogue, spec, domains, notes, nodes_per_domain=nodes_per_domain)
    topology = Topology(
        ranks_per_domain=scale_up,
        domains=domains,
        up=up_tier,
        out=out_tier,
        arch=engine_arch,
        wan=wan_tier,
        gpus_per_process=_gpus_per_process(spec, gpus_per_node, notes),
        gpu_arch=arch,
        host_cpu=_host_cpu(spec, system),
        nodes_per_domain=nodes_per_domain,
    )
    used = [link for link, tier in ((intra, up_tier), (inter, out_tier)) if tier is not None]
    if wan_tier is not None:
        used.append(find_link(catalogue, wan_tier.link_id))
    low = _low_confidence(system, [link for link in used if link is not None])
    if low:
        notes.append(low)
    return ResolvedCluster(
        topology=topology,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        nics_per_node=nics_per_node,
        intra=intra,
        inter=inter,
        host_pcie=host_pcie,
        host_pcie_is_gpu_bus=bool(gpu_bus_note),
        system=system,
        gpu_arch=arch,
        assumptions=tuple(notes),
        spec=spec,
        fabric_notes=tuple(fabric),
        alltoall_notes=tuple(alltoall),
        p2p_notes=tuple(p2p),
        process_notes=tuple(process),
        resize_note=resize_note,
        collectives=collectives,
        node_nics=node_nic_count,
        node_nics_link=nic_link.id if nic_link is not None else None,
    )


def _low_confidence(system: System | None, links: Sequence[Link]) -> str:
    """One note naming the catalogue entries this cluster uses that are graded low confidence
    (secondary or recalled sources): the grade had shown only in ``links`` and ``systems``, not
    beside an estimate resting on it (docs/catalogue.md#confidence-grades)."""
    low = [link for link in links if link.confidence == "low"]
    # a link calibrate wrote low for the run it fitted it to says so, not the sources' reason
    # (reviews BZ and CA)
    doubted = [link.id for link in low if CALIBRATION_DOUBT in (link.notes or "")]
    names = [f"{link.id} (link)" for link in low if link.id not in doubted]
    if system is not None and system.confidence == "low":
        names.insert(0, f"{system.id} (system)")
    reasons = []
    if names:
        reasons.append(
            f"{', '.join(dict.fromkeys(names))}: their figures rest on secondary or unverified "
            "sources"
        )
    if doubted:
        reasons.append(
            f"{', '.join(dict.fromkeys(doubted))} (link): fitted to a run its calibration warned of"
        )
    if not reasons:
        return ""
    return f"{LOW_CONFIDENCE_NOTE}{'; '.join(reasons)} (ibcalc links show / systems show)"


def _host_cpu(spec: ClusterSpec, system: System | None) -> str:
    """The host CPU family: the user's, else the system's; empty when neither says (NCCL's
    default network overhead, as on Intel)."""
    if spec.host_cpu is not None:
        return spec.host_cpu
    if system is not None and system.host_cpu is not None:
        return system.host_cpu
    return ""


def _gpus_per_process(spec: ClusterSpec, gpus_per_node: int, notes: list[str]) -> int:
    """GPUs one process drives (nccl-tests ``-g``); at most a node's GPUs."""
    g = spec.gpus_per_process
    if g > gpus_per_node:
        raise ClusterError(
            f"{{gpus_per_process}} {g} is more than the {gpus_per_node} GPUs of a node; one "
            "process drives GPUs of its own node only",
            field="gpus_per_process",
            value=str(g),
        )
    if gpus_per_node % g:
        raise ClusterError(
            f"{{gpus_per_process}} {g} does not divide the {gpus_per_node} GPUs of a node: "
            "every process drives the same number of GPUs (nccl-tests -g)",
            field="gpus_per_process",
            value=str(g),
        )
    if g > 1:
        notes.append(
            f"one process drives {g} GPUs (nccl-tests -g {g}): the host launches their share "
            "of every collective one after another ({gpus_per_process})"
        )
    return g


def _scale_up_domain(
    system: System | None, spec: ClusterSpec, gpus_per_node: int, nodes: int, notes: list[str]
) -> int:
    total = nodes * gpus_per_node
    given = spec.scale_up_domain
    resized = system is not None and spec.gpus_per_node not in (None, system.gpus_per_node)
    if given is not None:
        check_domain_given(system, given, gpus_per_node, resized=resized)
    if system is None or system.scale_up_domain <= system.gpus_per_node:
        return gpus_per_node
    if resized:
        notes.append(
            f"{{gpus_per_node}} {gpus_per_node} is not {system.id}'s {system.gpus_per_node}: its "
            f"{system.scale_up_domain}-GPU {DOMAIN_NOT_ASSUMED_NOTE}"
        )
        return gpus_per_node
    domain = system.scale_up_domain if given is None else given
    if given is not None and given < system.scale_up_domain:
        notes.append(
            f"{system.id}'s NVLink domain of {system.scale_up_domain} GPUs used as domains of "
            f"{given}" + (" (NVLink inside each node only)" if given == gpus_per_node else "")
        )
    if domain == gpus_per_node:
        return gpus_per_node
    if total <= domain:
        notes.append(f"all {total} GPUs share one {system.id} NVLink domain of up to {domain}")
        return total
    if total % domain:
        # the largest part of the domain, in whole nodes, that they fill: a rack run in parts
        # (27 GB200 trays as three NVL36: a review found the flag unmentioned)
        smaller = next(
            (
                d
                for d in range(domain - gpus_per_node, gpus_per_node, -gpus_per_node)
                if domain % d == 0 and total % d == 0
            ),
            None,
        )
        raise ClusterError(
            f"{nodes} nodes x {gpus_per_node} GPUs = {total} GPUs do not fill whole "
            f"{domain}-GPU scale-up domains of {system.id}; use a multiple of "
            f"{domain // gpus_per_node} nodes (or at most {domain // gpus_per_node}, one domain)"
            + (
                f", or {{scale_up_domain}} {smaller} ({total // smaller} domains of {smaller} GPUs)"
                if smaller is not None and given is None
                else ""
            ),
            field="nodes",
        )
    notes.append(f"{total // domain} scale-up domains of {domain} GPUs ({system.id})")
    return domain


def check_domain_given(
    system: System | None, given: int, gpus_per_node: int, *, resized: bool
) -> None:
    """Refuse a ``scale_up_domain`` that is not whole nodes or is larger than the hardware's
    NVLink domain (the preset's; one node without a preset, or with a node ``resized`` from the
    preset's GPU count)."""
    if given % gpus_per_node:
        raise ClusterError(
            f"{{scale_up_domain}} {given} is not a whole number of {gpus_per_node}-GPU nodes",
            field="scale_up_domain",
            value=str(given),
        )
    largest = system.scale_up_domain if system is not None and not resized else gpus_per_node
    if given > largest:
        if system is not None and largest > gpus_per_node:
            where = f"{system.id}'s NVLink domain of {largest} GPUs"
        elif system is not None and resized and system.scale_up_domain > system.gpus_per_node:
            where = (
                f"one node ({largest} GPUs): {{gpus_per_node}} {gpus_per_node} is not "
                f"{system.id}'s {system.gpus_per_node}, so its {system.scale_up_domain}-GPU "
                "domain is not assumed"
            )
        else:
            where = (
                f"one node ({largest} GPUs): a domain across nodes comes with a system preset "
                "that has one, e.g. the preset gb200-nvl72 ({system})"
            )
        raise ClusterError(
            f"{{scale_up_domain}} {given} is more than {where}",
            field="scale_up_domain",
            value=str(given),
        )
    if largest % given:
        # 48 of a 72-GPU rack: the second domain would take 24 GPUs from each of two racks
        assert system is not None  # one node's domain: given is that node, which divides it
        fits = [d for d in range(gpus_per_node, largest + 1, gpus_per_node) if largest % d == 0]
        raise ClusterError(
            f"{{scale_up_domain}} {given} does not divide {system.id}'s "
            f"NVLink domain of {largest} GPUs, so a domain would span two of them; use "
            f"{', '.join(map(str, fits[:-1]))} or {fits[-1]}",
            field="scale_up_domain",
            value=str(given),
        )


def _build_up(
    intra: Link | None,
    gpus: int,
    system: System | None,
    spec: ClusterSpec,
    arch: str,
    notes: list[str],
    alltoall: list[str],
    p2p: list[str],
) -> ScaleUpTier:
    assert intra is not None
    line = intra.per_direction_Bps
    bw = intra.achievable_Bps
    mesh = intra.topology == "mesh"
    per_peer = intra.links_per_peer
    if mesh and intra.links and (gpus - 1) * per_peer < intra.links:
        # each GPU reaches each peer over links_per_peer links (Gaudi: 3); with 8 cards all 21
        # are in use (they had been counted one per peer: 7 of 21, a third of the bandwidth)
        used_links = (gpus - 1) * per_peer
        line *= used_links / intra.links
        bw *= used_links / intra.links
        each = f" ({per_peer} to each peer)" if per_peer > 1 else ""
        notes.append(
            f"{intra.id} is a switchless mesh: {gpus} GPUs use {used_links} of "
            f"{intra.links} links each{each}"
        )
    elif mesh and not intra.links and intra.mesh_gpus is not None and gpus < intra.mesh_gpus:
        # a full mesh without a link count (Ascend 910B): each card's rate is over its
        # mesh_gpus - 1 peers alike, so fewer cards use (gpus - 1) / (mesh_gpus - 1) of it (2 of
        # 8 had all-reduced at the whole card's 176 GB/s while their send/recv took 1/7)
        line *= (gpus - 1) / (intra.mesh_gpus - 1)
        bw *= (gpus - 1) / (intra.mesh_gpus - 1)
        notes.append(
            f"{intra.id} is a switchless mesh of {intra.mesh_gpus}: {gpus} GPUs use "
            f"{gpus - 1}/{intra.mesh_gpus - 1} of each GPU's links"
        )
    peer_share = 1.0
    if mesh and intra.mesh_gpus is not None and intra.scope == "per-gpu":
        # a full mesh (not a per-link entry, not DGX-1's hybrid cube): a peer has its own links
        # of those in use; without a link count (Ascend 910B), one of the mesh's m - 1 peers'
        # share of the GPU's whole rate (it had been the whole rate, 7x, after a review)
        peer_share = (
            per_peer / min(intra.links, (gpus - 1) * per_peer)
            if intra.links
            else 1.0 / (gpus - 1)  # the rate above is already the links in use
        )
    elif intra.topology == "torus" and intra.links and gpus > 1:
        # a torus joins a chip to each neighbour over one of its ports (TPU v5e: 4, about 50 GB/s
        # each way of the chip's 200): a ring shift runs on one, where the whole chip's rate had
        # priced send/recv 4x too fast (review CS); and a small slice reaches fewer distinct
        # neighbours than the chip has ports, its collectives on those alone (2 chips had run on
        # one port and 4 on all four, 2.7x faster: review CW)
        ports = torus_ports(gpus, intra.links // 2)
        if ports < intra.links:
            line *= ports / intra.links
            bw *= ports / intra.links
            sides = " x ".join(map(str, torus_shape(gpus, intra.links // 2)))
            notes.append(
                f"{intra.id} is a torus: a slice of {gpus} chips, {sides} with wraparound, "
                f"reaches distinct neighbours over {ports} of each chip's {intra.links} ports "
                "(a side of 2 chips joins them once), and its collectives run on those"
            )
        peer_share = 1.0 / ports
        if ports > 1:
            p2p.append(
                f"{intra.id} is a torus: neighbouring chips are joined by one of each chip's "
                f"{intra.links} ports, and send/recv is priced at that link (a slice whose "
                "wraparound joins a pair twice has two)"
            )
    elif intra.topology == "torus" and gpus > 1:
        p2p.append(
            f"{intra.id} is a torus of ports per chip the catalogue does not give: send/recv"
            + (
                " and every collective of 2 chips are priced at the chip's whole rate, where "
                "they run"
                if gpus == 2
                else " is priced at the chip's whole rate, where it runs"
            )
            + " on the port joining two neighbours (too fast)"
        )
        if gpus == 2:
            notes.append(p2p.pop())
    elif mesh and intra.links and intra.scope == "per-gpu" and gpus > 1:
        # a partial mesh (DGX-1's hybrid cube mesh: each V100's 6 NVLinks join it to 4 peers,
        # 1 or 2 links each, and not to the other 3): a pair has one link at the least where it
        # has any; a ring shift's pairs had been priced at all 6 (a review: 107 GB/s of busbw
        # where the best pair's 2 links carry 50). The rate above is already the links in use
        # (g - 1 of them on fewer GPUs), so one link is 1 / min(links, g - 1) of it: 1/6 of it
        # had cut 2 GPUs' pair to a sixth of one link (a review of that change)
        peer_share = 1.0 / min(intra.links, gpus - 1)
        p2p.append(
            f"{intra.id} is a partial mesh: a GPU pair shares some of each GPU's {intra.links} "
            f"links{', or none' if gpus > 4 else ''}; send/recv is priced at one link, the least "
            "a linked pair has"
            + (
                ", and so is a pair with none (3 -> 4 of nccl-tests' ring shift, for one), which "
                "NCCL relays through a GPU linked to both (P2P/indirect), a link a hop: the fast "
                "end, as the relay's copy may slow it"
                if gpus > 4  # (4 GPUs of one quad are all linked: no such pair, review BH)
                else ""
            )
        )
        alltoall.append(
            f"{intra.id} is a partial mesh: an all-to-all is priced at each GPU's links together, "
            "as if every pair were joined by them; pairs that share one link or none are slower, "
            "which this does not price"
        )
        notes.append(alltoall[-1])
    # typed as the tier's field is: mypy without the pydantic plugin (a user's own run) had
    # read it as str
    path: Literal["nvlink", "pci"] = (
        "pci" if intra.family == "pcie" or intra.topology == "host-staged" else "nvlink"
    )
    torus_dims = intra.links // 2 if intra.topology == "torus" and intra.links else None
    if intra.topology == "torus" and torus_dims is None and gpus > 2:
        alltoall.append(
            f"{intra.id} is a torus of links per chip the catalogue does not give: its "
            "all-to-all is priced as on a switch, without the torus's bisection bound (too fast)"
        )
        notes.append(alltoall[-1])
    if torus_dims is not None and gpus > 2:
        shape = torus_shape(gpus, torus_dims)
        alltoall.append(
            f"{intra.id} is a {torus_dims}-D torus: an all-to-all is bound by its bisection, "
            f"taken for the most even shape of {gpus} chips, {' x '.join(map(str, shape))}, "
            "with wraparound (a slice of another shape, or without wraparound, has another)"
        )
        notes.append(alltoall[-1])
    switched = system.nvswitch if system is not None else intra.topology == "switched"
    nvls_capable = (
        "nvls" in intra.capabilities
        and intra.nvls_efficiency is not None
        and switched
        and arch in ("hopper", "blackwell")
    )
    use_nvls = nvls_capable if spec.nvls is None else (spec.nvls and nvls_capable)
    if spec.nvls and not nvls_capable:
        notes.append(f"{SWITCH_NOTES['nvls'][1]}{intra.id} here has no NVLink SHARP; NVLS not used")
    elif spec.nvls is False and not nvls_capable:
        # turning off what is not there changes nothing: said, as a request for it is (--no-nvls
        # on a DGX A100 had gone without a word: review CM)
        notes.append(
            f"{SWITCH_NOTES['nvls'][0]}{intra.id} here has no NVLink SHARP: nothing changes"
        )
    nvls_bw = None
    if use_nvls and intra.nvls_efficiency is not None:
        nvls_bw = intra.per_direction_Bps * intra.nvls_efficiency
    return ScaleUpTier(
        link_id=intra.id,
        gpus=gpus,
        line_Bps=line,
        bw_Bps=bw,
        duplex_efficiency=intra.duplex_efficiency,
        nvls_bw_Bps=nvls_bw,
        transport_latency_s=intra.transport_latency_s,
        path=path,
        mesh=mesh,
        peer_share=peer_share,
        torus_dims=torus_dims,
        # an accelerator fabric (NVLink, xGMI, ICI, HCCS, UALink: switch, mesh or torus), not
        # PCIe and not a pair joined by a bridge
        fabric=path == "nvlink" and intra.topology != "bridge",
    )


def _build_wan(
    catalogue: Catalogue,
    spec: ClusterSpec,
    domains: int,
    notes: list[str],
    *,
    nodes_per_domain: int = 1,
) -> ScaleOutTier | None:
    """Tier 2: ``spec.sites`` sites joined by ``spec.wan_links`` WAN links each.

    ``spec.wan_latency_s``, when given, replaces the WAN link's own latency (a distance or a
    round trip the user knows); the link's transport latency is still added.
    """
    if spec.sites == 1:
        # a WAN property without sites would be dropped silently: refuse it with the fix; a
        # name the catalogue does not have is said first, with the closest names (--wan
        # wan-100 had been told it needs sites, not that no such link exists), and so is a
        # link that is no WAN link (--wan nvlink-h100 had been told of sites first: review DW)
        if spec.wan is not None:
            wan = find_link(catalogue, spec.wan, role="wan")
            refused = link_role_refusal(wan, "wan", "wan", spec.wan)
            if refused:
                raise refused
        if spec.wan_links != 1:
            raise ClusterError(
                f"{{wan_links}} {spec.wan_links} needs several sites: WAN links join sites "
                "(give {sites} 2 or more)",
                field="wan_links",
                value=str(spec.wan_links),
            )
        if spec.wan_latency_s is not None:
            # no {wan_latency_s} mark: the CLI sets it from --distance or --rtt, and the
            # message cannot tell which one the user gave
            raise ClusterError(
                "a WAN latency (a distance or round trip between sites) needs several sites "
                "(give {sites} 2 or more)",
                field="wan_latency_s",
            )
        if spec.wan is not None:
            raise ClusterError(
                f"{{wan}} {spec.wan} needs several sites: WAN links join sites "
                "(give {sites} 2 or more)",
                field="wan",
                value=spec.wan,
            )
        return None
    if domains % spec.sites:
        # a site holds whole scale-up domains: on one-node domains they are the nodes
        what = (
            plural(domains, "node")
            if nodes_per_domain == 1
            else f"{plural(domains, 'scale-up domain')} of {nodes_per_domain} nodes"
        )
        raise ClusterError(f"{what} cannot be split evenly over {spec.sites} sites", field="sites")
    wan = find_link(catalogue, spec.wan or "wan-100g", role="wan")
    if spec.wan is None:
        notes.append(f"WAN link {wan.id} assumed between sites ({{wan}})")
    refused = link_role_refusal(wan, "wan", "wan", spec.wan)
    if refused:
        raise refused
    if spec.wan_latency_s is not None:
        latency = wan.transport_latency_s + spec.wan_latency_s
        given = format_time(spec.wan_latency_s, zeros=False)
        own = format_time(wan.latency_s or 0.0, zeros=False)
        notes.append(
            f"WAN latency {given} one way given (a distance or round trip), instead of "
            f"{wan.id}'s {own}"
        )
    else:
        latency = wan.transport_latency_s + (wan.latency_s or 0.0)
        if wan.latency_s is None:
            # a scale-out link between sites (--wan ndr: a metro span of InfiniBand) has no
            # distance of its own either
            kind = "" if wan.kind is LinkKind.WAN else f" (a {wan.kind.value} link)"
            notes.append(
                f"{wan.id}{kind} states no distance: its WAN hop costs no propagation delay "
                "({wan_latency_s} to give one)"
            )
    # a site holds whole domains; said in nodes, with its domains where a domain spans nodes
    per_site = domains // spec.sites
    held = plural(per_site * nodes_per_domain, "node")
    if nodes_per_domain > 1:
        held += f" ({plural(per_site, 'scale-up domain')})"
    hop = format_time(latency, zeros=False)
    notes.append(
        f"{spec.sites} sites of {held}, {spec.wan_links} x {wan.id} per site ({hop} {WAN_HOP_NOTE}"
    )
    placeholder = (
        ", and the WAN's efficiency is a placeholder (docs/catalogue.md)"
        if wan.kind is LinkKind.WAN
        else ""
    )
    notes.append(
        "the likely range comes from runs inside one site: no published measurement across "
        f"sites is in the model's data{placeholder}"
    )
    return ScaleOutTier(
        link_id=wan.id,
        domains=spec.sites,
        nics_per_domain=spec.wan_links,
        nic_line_Bps=wan.per_direction_Bps,
        nic_bw_Bps=wan.achievable_Bps,
        transport_latency_s=latency,
    )


def _slowed(k: float, share: float) -> str:
    """How tapered leaves at ``k``:1 slow the traffic of which ``share`` crosses them."""
    if k * share > 1:
        return f"runs x{format_slowdown(k * share)} slower"
    return f"is not slowed (k x f = {k * share:.3g} <= 1)"


def gpu_bus(link: Link) -> bool:
    """Whether GPUs that meet over ``link`` reach their NICs across it too: a PCIe link
    (``--intra pcie4``) carries GPUDirect RDMA's every byte between a GPU and its NIC on the
    GPU's own x16 link, so no NIC moves more than it does (an NDR port had been priced at
    48.4 GB/s busbw from a Gen4 GPU whose link carries 25.2 GB/s). Not a link staged through
    host memory (its rate is a GPU-to-GPU figure), nor NVLink or xGMI. :func:`nic_host_link`
    takes it as the NICs' host link where none slower is named."""
    return (
        link.family == "pcie"
        and link.topology != "host-staged"
        and link_role_problem(link, "host_pcie") is None
    )


def nic_host_link(host: Link | None, intra: Link | None) -> tuple[Link | None, str]:
    """The PCIe link that caps each NIC, and the note saying so: the GPUs' own link ``intra``
    where they meet over PCIe (:func:`gpu_bus`) and no slower ``host`` link is named (a Gen4
    GPU's NICs stay at Gen4 on an instance whose NICs sit on Gen5), else ``host`` ('' then).
    ``resolve_cluster``, ``gap`` and ``tp_whatif`` share it."""
    if intra is None or not gpu_bus(intra):
        return host, ""
    if host is not None and host.achievable_Bps <= intra.achievable_Bps:
        return host, ""
    return intra, GPU_BUS_NOTE + (f", slower than {host.id}" if host is not None else "")


#: Why the GPUs' PCIe link caps the NICs where it stands in for their host link (said once,
#: in the note of the cap it sets)
GPU_BUS_NOTE = "the GPUs' own PCIe link ({intra}), which GPUDirect RDMA crosses to reach a NIC"


def gpu_fed_nic_Bps(nic_Bps: float, host_pcie: Link, nics: int, gpus: int) -> float | None:
    """Each NIC's rate when a node's NICs together need more than its GPUs' PCIe links carry
    (every GPU reaches its NICs through its own x16 link, so NICs beyond it add nothing):
    ``gpus x host / nics``; None when the links keep up. The engine's scale-out tier and
    ``gap`` both use it."""
    if nics * nic_Bps > gpus * host_pcie.achievable_Bps:
        return gpus * host_pcie.achievable_Bps / nics
    return None


def _build_out(
    inter: Link,
    host_pcie: Link | None,
    nics: int,
    domains: int,
    spec: ClusterSpec,
    notes: list[str],
    *,
    gpus: int,
    why: str = "",
) -> ScaleOutTier:
    """The scale-out tier; ``why`` says why ``host_pcie`` caps the NICs where it is not the
    host link named (:func:`nic_host_link`), in the cap's note."""
    nic_bw = inter.achievable_Bps
    cap = None
    if host_pcie is not None and host_pcie.achievable_Bps < nic_bw:
        cap = host_pcie.id
        nic_bw = host_pcie.achievable_Bps
        notes.append(
            f"each {inter.id} NIC is capped by {host_pcie.id}"
            + (f", {why}," if why else "")
            + f" at {fixed(host_pcie.achievable_Bps / 1e9, 1)} GB/s achievable"
        )
    fed = gpu_fed_nic_Bps(nic_bw, host_pcie, nics, gpus) if host_pcie is not None else None
    if host_pcie is not None and fed is not None:
        nic_bw = fed
        cap = host_pcie.id
        notes.append(
            f"{nics} NICs for {gpus} GPU{'s' if gpus != 1 else ''} exceed what each GPU's "
            f"{host_pcie.id} link can feed: "
            f"{gpus} x {fixed(host_pcie.achievable_Bps / 1e9, 1)} GB/s achievable across the domain"
        )
    if host_pcie is None and nics > gpus:
        # nothing says what links a GPU to its NICs: every NIC counts at its full rate
        notes.append(
            f"{nics} NICs for {gpus} GPU{'s' if gpus != 1 else ''} and no host PCIe link known: "
            "each GPU is taken to feed all its NICs at their full rate (give {host_pcie} or "
            "{system} to cap them at the GPU's link)"
        )
    sharp = spec.sharp and "sharp" in inter.capabilities
    if spec.sharp and not sharp:
        notes.append(f"{SWITCH_NOTES['sharp'][1]}{inter.id} has no SHARP capability; not used")
    elif "sharp" in spec.model_fields_set and not spec.sharp and "sharp" not in inter.capabilities:
        notes.append(
            f"{SWITCH_NOTES['sharp'][0]}{inter.id} has no SHARP capability: nothing changes"
        )
    elif (
        not spec.sharp
        and "sharp" in inter.capabilities
        and "sharp" not in spec.model_fields_set
        and spec.sites == 1
    ):
        # a --no-sharp given is a choice made, not one to suggest; across sites a SHARP tree
        # does not serve (it does not span sites)
        notes.append(sharp_hint(inter.id))
    latency = inter.transport_latency_s
    if inter.kind is LinkKind.WAN and inter.latency_s is not None:
        latency += inter.latency_s
    fu_given = spec.unaligned_cross_leaf_fraction
    if (
        spec.oversubscription > 1
        and fu_given is not None
        and fu_given < spec.cross_leaf_fraction - 1e-9
    ):
        # bytes off their rail cross at least where rail-aligned ones do: a smaller share had
        # priced a pairwise all-to-all at half PXN's time (0.1 against 0.5)
        f_given = "cross_leaf_fraction" in spec.model_fields_set
        raise ClusterError(
            f"{{unaligned_cross_leaf_fraction}} {fu_given:g} is below {{cross_leaf_fraction}} "
            f"{spec.cross_leaf_fraction:g}"
            + ("" if f_given else " (its default: every byte; give it too)")
            + ": traffic off its rail crosses the leaves at least as often as rail-aligned "
            "traffic",
            field="unaligned_cross_leaf_fraction",
            value=f"{fu_given:g}",
            others={"cross_leaf_fraction": f"{spec.cross_leaf_fraction:g}"},
        )
    if spec.oversubscription > 1:
        k, f = spec.oversubscription, spec.cross_leaf_fraction
        effect = (
            f"every collective's network term runs x{format_slowdown(k * f)} slower (max(1, k x f))"
            if k * f > 1
            else f"the uplinks still carry that share at the NICs' rate (k x f = {k * f:.3g} "
            "<= 1): no slowdown"
        )
        fn = spec.neighbour_cross_leaf_fraction
        fu = spec.unaligned_cross_leaf_fraction
        off = fu is not None and fu != f
        if fn is not None or off:
            every = "all-to-all with PXN" if off else "all-to-all"
            parts = [
                f"traffic to every peer ({every}, recursive halving-doubling, PAT) {_slowed(k, f)}"
                if fn is not None
                else f"every collective's network term but an all-to-all's without PXN "
                f"{_slowed(k, f)}"
            ]
            if fn is not None:
                parts.append(
                    "neighbour traffic (ring, tree, SHARP, send/recv; "
                    f"{format_share(fn)} of it crosses) {_slowed(k, fn)}"
                )
            if fu is not None and off:
                parts.append(
                    "traffic off its rail (all-to-all without PXN; "
                    f"{format_share(fu)} of it crosses) {_slowed(k, fu)}"
                )
            effect = "; ".join(parts)
        notes.append(
            f"oversubscription {format_oversubscription(k)} end to end; {format_share(f)} of "
            "each node's network traffic assumed to cross the tapered uplinks "
            + (
                "(from {cross_leaf_fraction})"
                if "cross_leaf_fraction" in spec.model_fields_set
                else "(the default, every byte, the worst case; {cross_leaf_fraction} sets it; "
                "on a rail-optimized fabric most ring and tree traffic stays inside a leaf: "
                "{neighbour_cross_leaf_fraction}, or a design's fabric.switch, sets that share)"
            )
            + f": {effect}"
        )
    else:
        # a fraction of traffic crossing uplinks that are not tapered slows nothing
        given = [
            f"{{{name}}} {getattr(spec, name):g}"
            for name in (
                "cross_leaf_fraction",
                "neighbour_cross_leaf_fraction",
                "unaligned_cross_leaf_fraction",
                "leaf_group_nodes",
            )
            if name in spec.model_fields_set and getattr(spec, name) is not None
        ]
        if given:
            notes.append(
                f"{' and '.join(given)} ignored: the leaves are not oversubscribed (1:1; "
                "{oversubscription} sets it), so traffic crossing them runs at the NICs' rate"
            )
    return ScaleOutTier(
        link_id=inter.id,
        domains=domains,
        nics_per_domain=nics,
        nic_line_Bps=inter.per_direction_Bps,
        nic_bw_Bps=nic_bw,
        nic_cap=cap,
        transport_latency_s=latency,
        plugin=inter.transport == "plugin" if inter.transport is not None else None,
        simple_floor=inter.simple_transport_floor,
        sharp=sharp,
        oversubscription=spec.oversubscription,
        cross_leaf_fraction=spec.cross_leaf_fraction,
        neighbour_fraction=spec.neighbour_cross_leaf_fraction,
        unaligned_fraction=spec.unaligned_cross_leaf_fraction,
    )
