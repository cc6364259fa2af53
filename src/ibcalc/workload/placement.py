"""The sub-cluster one parallel group runs its collective on (docs/workload.md, "Placement").

Ranks are numbered as Megatron-LM numbers them (``tp-cp-ep-dp-pp``, tensor parallel fastest), and
packed into scale-up domains in order: ranks 0..D-1 share the first domain (a node, or an NVLink
rack of several nodes). A group of ``size`` ranks ``stride`` apart then has

* ``per_domain = min(size, D // stride)`` members in each domain it touches (1 when
  ``stride >= D``), and ``size / per_domain`` domains;
* the sub-cluster is those domains with ``per_domain`` GPUs each, on the cluster's own links.

Every group of the same kind runs at the same time (all 8 DP groups of a tp=8 job reduce their
gradients together), so a group gets only its share of what the domain and the site have:
``D / per_domain`` groups share a domain's NICs, so each gets ``nics x per_domain / D`` of them;
all groups crossing a WAN share the site's WAN links in proportion to their ranks in the site.
A share that is not a whole number of NICs is given as the next lower whole number (at least
one) with each NIC's rate scaled so the total is the share (a 4-NIC, 8-GPU node gives each
one-GPU group half a NIC).

With several sites, each site holds ``dp / sites`` whole model replicas: tensor, context, expert
and pipeline groups stay inside a site; only data-parallel groups cross the WAN.

A pipeline is placed by its slowest stage boundary (:func:`place_pipeline`): in the 1F1B steady
state every boundary sends at once, so when any of them crosses a scale-up domain the send/receive
pair is placed across two domains, even if the first two stages share one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import ScaleOutTier
from ibcalc.errors import WorkloadError
from ibcalc.memo import IdentityMemo

__all__ = [
    "Placement",
    "Tier",
    "inherit",
    "pipeline_boundaries",
    "place_group",
    "place_pipeline",
    "single_domain",
]

Tier = Literal["scale-up", "scale-out", "wan", "storage"]


@dataclass(frozen=True)
class Placement:
    """Where a group runs: the sub-cluster, the tier it crosses, and why."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    cluster: ResolvedCluster
    tier: Tier
    per_domain: int
    domains: int
    notes: list[str]

    @property
    def crosses_domains(self) -> bool:
        """True when the group leaves one scale-up domain."""
        return self.domains > 1


def _share(total: float) -> tuple[int, float]:
    """A share of ``total`` NICs/links as (whole count >= 1, rate scale giving the share)."""
    whole = max(1, math.floor(total + 1e-9))
    return whole, total / whole


def _scaled(tier: ScaleOutTier, scale: float) -> ScaleOutTier:
    if abs(scale - 1.0) < 1e-12:
        return tier
    return tier.model_copy(
        update={"nic_bw_Bps": tier.nic_bw_Bps * scale, "nic_line_Bps": tier.nic_line_Bps * scale}
    )


def inherit(
    parent: ResolvedCluster,
    sub: ResolvedCluster,
    nic_scale: float = 1.0,
    wan_scale: float = 1.0,
) -> ResolvedCluster:
    """``sub`` with the parent's GPU generation, its NIC and WAN rates scaled to a share."""
    topo = sub.topology
    topo = dataclasses.replace(
        topo,
        arch=parent.topology.arch,
        gpu_arch=parent.topology.gpu_arch,
        host_cpu=parent.topology.host_cpu,
        out=_scaled(topo.out, nic_scale) if topo.out is not None else None,
        wan=_scaled(topo.wan, wan_scale) if topo.wan is not None else None,
    )
    return dataclasses.replace(sub, topology=topo, gpu_arch=parent.gpu_arch)


_SUBS: IdentityMemo[ResolvedCluster] = IdentityMemo()


def _sub_cluster(
    catalogue: Catalogue,
    parent: ResolvedCluster,
    fields: dict[str, object],
    nic_scale: float = 1.0,
    wan_scale: float = 1.0,
) -> ResolvedCluster:
    """``inherit(parent, resolve_cluster(catalogue, ClusterSpec(**fields)), ...)``, resolved once.

    The same spec on the same catalogue (matched by identity) resolves to the same cluster, so a
    layout search, which places the same groups for every layout and every model, resolves each
    sub-cluster once. The result is shared: like every :class:`ResolvedCluster`, not to be
    mutated.
    """
    key = (
        id(catalogue),
        *fields.items(),
        parent.topology.arch,
        parent.gpu_arch,
        # inherit() copies the parent's host CPU too: two parents differing only in it had
        # shared the first one's sub-cluster (a review: an AMD host's 2 us network step priced
        # on an Intel parent placed after it)
        parent.topology.host_cpu,
        nic_scale,
        wan_scale,
    )
    return _SUBS.get(
        key,
        (catalogue,),
        lambda: inherit(
            parent, resolve_cluster(catalogue, ClusterSpec(**fields)), nic_scale, wan_scale
        ),
    )


def single_domain(catalogue: Catalogue, parent: ResolvedCluster, gpus: int) -> ResolvedCluster:
    """``gpus`` GPUs in one scale-up domain of the parent's scale-up link (hypothetical when
    larger than the parent's domain: "what if the group fitted inside")."""
    if parent.intra is None:
        raise WorkloadError(
            "the cluster has no scale-up link to compare against ({intra})", field="intra"
        )
    fields: dict[str, object] = {
        "nodes": 1,
        "gpus_per_node": gpus,
        "intra": parent.intra.id,
        "host_pcie": parent.host_pcie.id if parent.host_pcie else None,
        "nvls": parent.spec.nvls,
    }
    return _sub_cluster(catalogue, parent, fields)


def place_group(
    catalogue: Catalogue,
    parent: ResolvedCluster,
    name: str,
    size: int,
    stride: int,
    *,
    across_sites: bool = False,
    span: int | None = None,
    aligned: bool = True,
    senders: int | None = None,
    label: str | None = None,
) -> Placement:
    """The sub-cluster of a group of ``size`` ranks ``stride`` apart (see the module doc).

    ``across_sites`` spreads the group evenly over the parent's sites (data parallelism);
    otherwise it stays in one site. ``span``: the ranks the job holds, from rank 0 (one serving
    instance; default all of the parent's). ``aligned``: the groups start at multiples of their
    ``size x stride`` ranks (a pipeline's stage pairs do not), so where that many nodes divide
    the parent's ``spec.leaf_group_nodes``, every group sits under one leaf
    group and its rail-aligned traffic never meets a tapered fabric's uplinks. Raises
    :class:`WorkloadError` naming ``name`` when the job's groups of this shape do not divide
    evenly into the cluster's scale-up domains. ``senders``: how many of a domain's groups send
    across it at once, where not all of them do (a pipeline's crossing boundary: a stage's
    GPUs), for the note; by default every group the domain holds. ``label``: what the notes
    and messages call the group where that is not its field ``name`` (the gradients' group of
    ``dp x cp`` ranks with context parallelism).
    """
    # the group's size as the user gave it: a flag ("--dp 8"), or what the label multiplies out
    # to ("dp x cp = 12": "--dp 12" had been said of --dp 6 --cp 2)
    sized = f"{{{name}}} {size}" if label is None else f"{label} = {size}"
    # the size as the message writes it after the flag, which the CLI quotes as typed
    value = str(size) if label is None else None
    label = label or name
    if size < 2:
        raise WorkloadError(f"a {label} group needs at least 2 ranks", field=name)
    topo = parent.topology
    d = topo.m
    sites = topo.sites if across_sites else 1
    if size % sites:
        raise WorkloadError(
            f"{sized} ranks cannot be split evenly over {sites} sites", field=name, value=value
        )
    per_site = size // sites
    block = size * stride  # each group and its stride - 1 neighbours hold this many ranks
    if span is not None and span <= d:
        # the whole job sits in the first domain: no group of it meets a domain's edge
        per_domain = per_site
    elif stride < d and block < d and d % block:
        what = (
            f"{sized} does not divide"
            if stride == 1
            else f"{label} groups of {size} ranks {stride} apart span {block} ranks, which do "
            "not divide"
        )
        raise WorkloadError(
            f"{what} the {d}-GPU scale-up domain: some {label} groups would straddle two domains",
            field=name,
            value=value if stride == 1 else None,
        )
    elif stride >= d:
        if stride % d:
            raise WorkloadError(
                f"{label} ranks {stride} apart straddle the {d}-GPU scale-up domains unevenly",
                field=name,
            )
        per_domain = 1
    else:
        if d % stride:
            raise WorkloadError(
                f"{label} ranks {stride} apart do not tile the {d}-GPU scale-up domain",
                field=name,
            )
        per_domain = min(per_site, d // stride)
    if per_site % per_domain:
        raise WorkloadError(
            f"{sized} does not divide into groups of {per_domain} per {d}-GPU scale-up domain",
            field=name,
            value=value,
        )
    domains = per_site // per_domain * sites
    gpn = parent.gpus_per_node
    host = parent.host_pcie.id if parent.host_pcie else None
    system = parent.system.id if parent.system else None
    intra = parent.intra.id if parent.intra else None
    notes: list[str] = []
    if domains == 1:
        if per_domain <= gpn:
            one: dict[str, object] = {
                "nodes": 1,
                "gpus_per_node": per_domain,
                "intra": intra,
                "system": system,
                "host_pcie": host,
                "nvls": parent.spec.nvls,
            }
        else:
            # inside a multi-node NVLink domain (NVL72 ...) node boundaries do not matter: the
            # group is per_domain GPUs on the domain's scale-up link (GPU generation kept below)
            one = {
                "nodes": 1,
                "gpus_per_node": per_domain,
                "intra": intra,
                "host_pcie": host,
                "nvls": parent.spec.nvls,
            }
        preset = parent.system
        # the preset's own domain, where the job keeps its node: --gpus-per-node resizes it and
        # no longer assumes its domain (dgx-h100 -g 4 had read "one 8-GPU domain" where the
        # model ran domains of 4; a review)
        whole = parent.spec.scale_up_domain or (
            preset.scale_up_domain if preset is not None and parent.resize_note is None else d
        )
        if preset is not None and whole > d:
            # a serving instance of 8 GPUs in an NVL72 rack had read "inside one 8-GPU
            # scale-up domain" beside "one gb200-nvl72 NVLink domain of up to 72" (a review)
            notes.append(
                f"{label} group: {size} GPUs inside one {whole}-GPU scale-up domain "
                f"({preset.id}; the job holds {d} of its GPUs)"
            )
        else:
            notes.append(f"{label} group: {size} GPUs inside one {d}-GPU scale-up domain")
        sub = _sub_cluster(catalogue, parent, one)
        return Placement(sub, "scale-up", per_domain, 1, notes)

    out = topo.out
    assert out is not None  # more than one domain in the parent
    nic_total = out.nics_per_domain * per_domain / d
    if senders is not None and per_domain == 1:
        # only the senders leave a domain at once, each through its own GPU's NICs: a lone
        # sender holds a NIC two GPUs share whole (DGX-1V, 4 NICs for 8 GPUs: a tp 1 pipeline's
        # pair had been priced at half a NIC, 2x slower than the same pair's send/recv:
        # review DB); a stage of 2 or 4 consecutive GPUs still shares theirs
        nic_total = max(nic_total, -(-senders * out.nics_per_domain // d) / senders)
    nics, nic_scale = _share(nic_total)
    # a preset whose domain spans several nodes cannot be resized to per_domain GPUs per domain
    # through its own shape, so the sub-cluster names its links instead (GPU generation kept);
    # a preset kept where the parent runs one node per domain keeps that domain (gb200-nvl72
    # given a 4-GPU domain: its sub-clusters are not one 72-GPU domain again)
    keep_system = system if d == gpn else None
    fields: dict[str, object] = {
        "nodes": domains,
        "gpus_per_node": per_domain,
        "nics_per_node": nics,
        "intra": intra,
        "inter": out.link_id if parent.inter is None else parent.inter.id,
        "system": keep_system,
        "scale_up_domain": per_domain if keep_system is not None else None,
        "host_pcie": host,
        "sharp": parent.spec.sharp,
        "nvls": parent.spec.nvls,
        "oversubscription": parent.spec.oversubscription,
        "cross_leaf_fraction": parent.spec.cross_leaf_fraction,
        "neighbour_cross_leaf_fraction": parent.spec.neighbour_cross_leaf_fraction,
        "unaligned_cross_leaf_fraction": parent.spec.unaligned_cross_leaf_fraction,
    }
    # a leaf group larger than the cluster holds all of it, as one of the cluster's size does
    leaf = (
        min(parent.spec.leaf_group_nodes, parent.nodes)
        if parent.spec.leaf_group_nodes is not None
        else None
    )
    if (
        aligned
        and sites == 1
        and leaf is not None
        and parent.spec.oversubscription > 1
        and block % gpn == 0
        and leaf % (block // gpn) == 0
    ):
        # rail-aligned traffic (rings, trees, PXN's all-to-all) stays on the leaves. Traffic
        # off its rail keeps the parent's share where the layout made it larger (a
        # rail-optimized leaf serves one rail), except for a group of one member per domain,
        # one GPU of each node, all on one rail (an expert group of tp 8 had kept the off-rail
        # share, x3.9, beside a note calling it clear; a review); else a leaf holds it too
        fu = parent.spec.unaligned_cross_leaf_fraction
        fields["cross_leaf_fraction"] = 0.0
        fields["neighbour_cross_leaf_fraction"] = 0.0
        if fu is None or fu <= parent.spec.cross_leaf_fraction or per_domain == 1:
            fields["unaligned_cross_leaf_fraction"] = 0.0
        notes.append(
            f"{label} group: its {block // gpn} node{'s' if block // gpn != 1 else ''} sit under "
            f"one leaf group of {leaf} ({{leaf_group_nodes}}): its rail-aligned traffic stays on "
            "the leaves, clear of the tapered uplinks"
        )
    groups_per_domain = d // per_domain
    sharing = (
        f"{groups_per_domain} such group{'s' if groups_per_domain != 1 else ''} per domain "
        f"share{'s' if groups_per_domain == 1 else ''}"
        if senders is None
        # a pipeline's crossing boundary: only a stage's GPUs leave a domain at once (72 had
        # been said for tp 8 on an NVL72 rack, where a boundary's 8 pairs cross: review CZ)
        else f"a crossing boundary's {senders} pair{'s leave' if senders != 1 else ' leaves'} a "
        f"domain at once through {'their' if senders != 1 else 'its'} own GPU's NICs of the "
        "domain's"
    )
    whose = "its " if senders is None else ""
    notes.append(
        f"{label} group: {size} GPUs, {per_domain} in each of {domains} scale-up domains; "
        f"{sharing} {whose}{out.nics_per_domain} x {out.link_id}: {nic_total:g} NIC"
        f"{'s' if nic_total != 1 else ''} each"
    )
    wan_scale = 1.0
    tier: Tier = "scale-out"
    if sites > 1:
        wan = topo.wan
        assert wan is not None
        ranks_per_site = topo.ranks // sites
        wan_total = wan.nics_per_domain * per_site / ranks_per_site
        wan_links, wan_scale = _share(wan_total)
        fields.update(
            sites=sites,
            wan=wan.link_id,
            wan_links=wan_links,
            wan_latency_s=parent.spec.wan_latency_s,
        )
        groups_per_site = ranks_per_site // per_site
        notes.append(
            f"{label} group spans {sites} sites, {per_site} GPU{'s' if per_site != 1 else ''} in "
            f"each; {groups_per_site} "
            f"such group{'s' if groups_per_site != 1 else ''} per site "
            f"share{'s' if groups_per_site == 1 else ''} its "
            f"{wan.nics_per_domain} x {wan.link_id}: {wan_total:.3g} link"
            f"{'s' if wan_total != 1 else ''} each"
        )
        tier = "wan"
    sub = _sub_cluster(catalogue, parent, fields, nic_scale, wan_scale)
    return Placement(sub, tier, per_domain, domains, notes)


def place_pipeline(
    catalogue: Catalogue,
    parent: ResolvedCluster,
    stages: int,
    stride: int,
    *,
    span: int | None = None,
    wraps: bool = False,
) -> Placement:
    """The send/receive pair of a pipeline of ``stages`` stages whose neighbours are ``stride``
    ranks apart (each stage spans ``stride`` consecutive ranks; ``span`` as in
    :func:`place_group`). ``wraps``: the last stage also sends to the first (interleaved 1F1B,
    whose model chunks go round the stages v times), one more boundary, which crosses the
    domains where the pipeline spans several, and costs no more than the crossing ones do.

    Every stage boundary is busy in the 1F1B steady state, so the slowest one sets the cost:
    when any boundary crosses a scale-up domain the pair is placed across two domains (one rank
    in each), even where the first two stages share one. With ``stride`` dividing the domain's
    ``D`` GPUs (as :func:`place_group` requires), boundary ``j`` (between stages ``j`` and
    ``j + 1``) crosses when ``(j + 1) x stride`` is a multiple of ``D``: ``(stages - 1) x stride
    // D`` of the ``stages - 1`` boundaries.
    """
    boundaries = pipeline_boundaries(catalogue, parent, stages, stride, span=span)
    if len(boundaries) == 1:
        return boundaries[0][0]
    across, crossing = boundaries[1]
    d = parent.topology.m
    crossing += wraps  # the wrap joins stages in different domains: the pipeline spans several
    note = (
        f"pp: {crossing} of {stages - 1 + wraps} stage boundaries "
        + ("(the last stage's back to the first included) " if wraps else "")
        + f"{'crosses' if crossing == 1 else 'cross'} the {d}-GPU scale-up domains "
        f"(stages of {stride} GPU{'s' if stride != 1 else ''}, {d // stride} per domain); every "
        "boundary is busy in the 1F1B steady state, so the crossing ones set the cost"
    )
    return dataclasses.replace(across, notes=[*across.notes, note])


def pipeline_boundaries(
    catalogue: Catalogue,
    parent: ResolvedCluster,
    stages: int,
    stride: int,
    *,
    span: int | None = None,
) -> list[tuple[Placement, int]]:
    """The stage boundaries of a pipeline (:func:`place_pipeline`'s arguments; ``span`` as in
    :func:`place_group`) as (placement, how many): one entry when all are alike, else those
    inside a scale-up domain, then those across. A single batch (one decode step of serving)
    crosses every boundary in turn, so its time is the sum over them; a 1F1B training pipeline
    keeps all busy and the slowest sets it."""
    d = parent.topology.m
    if (span is None or span > d) and stride < d and not d % stride and d % (2 * stride):
        # the stages tile a domain but pairs of them do not (tp 8 on a 72-GPU NVL72: 9 stages a
        # rack): most boundaries lie inside a domain, placed as the first domain's first pair
        pair = place_group(catalogue, parent, "pp", 2, stride, span=d, aligned=False)
    else:
        pair = place_group(catalogue, parent, "pp", 2, stride, span=span, aligned=False)
    total = stages - 1
    if pair.crosses_domains or stages * stride <= d:
        return [(pair, total)]
    crossing = total * stride // d
    # a crossing boundary's pairs are the stage's stride GPUs, not the domain's d
    across = place_group(catalogue, parent, "pp", 2, d, aligned=False, senders=stride)
    return [(pair, total - crossing), (across, crossing)]
