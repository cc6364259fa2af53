"""In-network reduction: NVLink SHARP (NVLS, NVLS-tree) and InfiniBand SHARP (CollNet).

For their all-reduces nccl-tests' busbw is an *equivalent* figure, not a wire rate: the switch
does the reduction, so each GPU moves less than the 2(n-1)/n x S a point-to-point algorithm must
(nccl-tests#212, #366; docs/model.md#equivalent-busbw, docs/model.md#nvls). An NVLS all-gather
or reduce-scatter still has each GPU receive or send (n-1)/n x S: its busbw is a wire rate.

* NVLS all-reduce inside one domain (docs/model.md#nvls): rank i owns 1/m of the buffer; a
  multimem load-reduce pulls slice i from every GPU and a multimem store multicasts the sum.
  Per GPU and direction: S(m+1)/m, so ``t = S (m+1) / (m B_nvls) + latency``. B_nvls is the
  link's NVLS bandwidth (line rate x the catalogue's ``nvls_efficiency``, calibrated on H100
  from nccl#1455 and the p5 measurements: algbw = B_nvls m/(m+1) holds for m = 5..8).
* NVLS all-gather / reduce-scatter: multicast moves S in per GPU (all-gather) or out
  (reduce-scatter): ``t = S / B_nvls`` (no gain over ring; nccl#1506).
* NVLS-tree all-reduce on N >= 2 domains: NVLS inside each domain, a tree between domains on
  each GPU's shard: ``t = max(S (m+1)/(m f B_nvls), c S / (nics B_nic))`` with c = 1 on two
  domains, 2 on more (see ``tree.py``); latency ``NVLS intra + 2 log2(N) x net`` (NCCL 2.30.7).
  f = ``calibrated.nvls_tree_factor`` (2 x p5 at >= 1 GiB: 260 GB/s algbw against 276 on one
  node): while NVLS runs, each GPU also streams its shard to and from the NIC.
* NVLS + SHARP (``nvls`` on several domains, needs SHARP): ``t = max(S (m+1)/(m B_nvls),
  S / (a nics B_nic))``: the switch tree sends S once into the fabric and receives S once, at
  a = 0.5 of the NICs' rate as NCCL rates it (:func:`sharp_network_s`).
* CollNet (SHARP) all-reduce, Simple only, <= 8 GPUs per domain: Direct (needs NVSwitch)
  reduce-scatters to one head per GPU, then SHARP: ``max(2(m-1)/m x S / B_up, S / (a nics
  B_nic))``; Chain runs a chain inside the node: ``max(2S / B_up, S / (a nics B_nic))``.
  Latencies are NCCL 2.30.7's (docs/model.md#tuner-latency-formula).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ibcalc.engine.algorithms.tree import tree_levels_formula, tree_network_multiplier
from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    base_term,
    fit_origin,
    gbps,
    hop_terms,
    intra_hop_detail,
    intra_hop_latency,
    latency_words,
    make_cost,
    net_hop_detail,
    net_hop_latency,
    network_words,
    proxy_posts_term,
    tree_levels_term,
    tree_post_overhead,
    us,
    wan_hop_latency,
    wan_levels_term,
    wan_transfer_detail,
    worked,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol, Term
from ibcalc.units import fixed, format_size

#: Where the built-in NVLS-tree factor comes from, for an explanation.
_TREE_FIT = "fitted by benchmarks/fits.py to multi-node p5 NVLS-tree rows"

__all__ = ["collnet_chain_timing", "collnet_direct_timing", "nvls_timing", "nvls_tree_timing"]


def _nvls_bw(topo: Topology) -> float | None:
    if topo.up is None or topo.up.nvls_bw_Bps is None or topo.m < 2:
        return None
    return topo.up.nvls_bw_Bps


def nvls_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """NVLink SHARP inside one domain (all-reduce, all-gather, reduce-scatter); with IB SHARP
    across domains for all-reduce.

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    bw = _nvls_bw(topo)
    if bw is None or protocol is not Protocol.SIMPLE:
        return None
    if collective not in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    m, big_n = topo.m, topo.domains
    if big_n > 1 and (
        collective is not Collective.ALL_REDUCE
        or topo.out is None
        or not topo.out.sharp
        or topo.wan is not None  # a SHARP tree does not span sites
    ):
        return None
    hop = intra_hop_latency(topo, Algorithm.NVLS, protocol, params)
    # NCCL's baseLat for NVLS is 0; an override file's value is paid once, as ring's and tree's
    # are (it had been accepted and ignored: review CB)
    base = base_latency(Algorithm.NVLS, protocol, params)
    latency = base + hop
    net = 0.0
    if big_n > 1:
        net = net_hop_latency(topo, Algorithm.NVLS, protocol, size_bytes, params)
        latency += net
    up = topo.up
    assert up is not None
    all_reduce = collective is Collective.ALL_REDUCE
    net_t = intra_t = 0.0
    if all_reduce:
        intra_t = size_bytes * (m + 1) / (m * bw)
        net_t = sharp_network_s(size_bytes, topo, params) if big_n > 1 else 0.0
        transfer = max(intra_t, net_t)
    else:
        transfer = size_bytes / bw

    def explain() -> Cost:
        terms = [
            *([base_term(Algorithm.NVLS, protocol, params)] if base else []),
            Term(
                name="NVLS latency",
                seconds=hop,
                detail=intra_hop_detail(topo, Algorithm.NVLS, protocol, params)
                + ("" if base else " (NCCL's NVLS base latency is 0 us)"),
            ),
        ]
        if big_n > 1:
            terms.append(
                Term(
                    name="SHARP network hop",
                    seconds=net,
                    detail=net_hop_detail(topo, Algorithm.NVLS, protocol, size_bytes, params),
                )
            )
        where = f"NVLink SHARP in the NVSwitch ({fixed(bw / 1e9, 0)} GB/s per GPU)"
        # where the rate comes from, for the all-reduce and the multicast alike (an all-gather's
        # 'by multicast at 544 GB/s' had named no link nor factor)
        rate = (
            f"{gbps(bw)} (NVLS bandwidth: {up.link_id}'s line rate {gbps(up.line_Bps)} x its "
            f"nvls_efficiency {bw / up.line_Bps:.3g})"
        )
        if all_reduce:
            if net_t > intra_t:
                where = _sharp_bottleneck(topo)
            formula = (
                "S(m+1)/(m B_nvls)" + (" max S/(nics B_nic)" if big_n > 1 else "") + " + latency"
            )
            detail = (
                f"S (m+1)/m = {format_size(size_bytes * (m + 1) / m)} per GPU through the "
                f"NVSwitch at {rate}"
            )
            if big_n > 1:
                detail += (
                    f"; the SHARP tree: S at {gbps(size_bytes / net_t)} per {topo.node} "
                    "(NCCL rates CollNet at half its bus bandwidth"
                    f"{network_words(topo, 'neighbour', inside=True)})"
                )
        else:
            formula = "S / B_nvls + latency"
            detail = f"S = {format_size(size_bytes)} per GPU by multicast at {rate}"
        # the SHARP tree's rate names the taper already: the term ends on the bare bottleneck
        # (it had said 'tapered uplinks x2 slower' twice in one cell; review FC)
        label = _SHARP_NETWORK if all_reduce and net_t > intra_t else where
        terms.append(Term(name="transfer", seconds=transfer, detail=f"{detail}; {label}"))
        return make_cost(
            Algorithm.NVLS,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            formula=formula,
            # an all-gather's busbw, (n-1)/n x S / t, is what each GPU receives, and a
            # reduce-scatter's what it sends: wire rates (only all-reduce moves S(m+1)/m, not
            # the 2(n-1)/n x S busbw counts; review BD)
            equivalent=all_reduce,
            terms=terms,
            latency_words=latency_words(topo, protocol, size_bytes, params),
        )

    return Timing(Algorithm.NVLS, protocol, latency, transfer, explain)


def nvls_tree_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """NVLS inside each domain with a tree across domains (all-reduce, N >= 2).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    bw = _nvls_bw(topo)
    if bw is None or protocol is not Protocol.SIMPLE or collective is not Collective.ALL_REDUCE:
        return None
    m, big_n = topo.m, topo.domains
    if big_n < 2:
        return None
    factor = params.calibrated.nvls_tree_factor
    intra_t = size_bytes * (m + 1) / (m * bw * factor)
    net_t = tree_network_multiplier(big_n) * size_bytes / topo.domain_bw_Bps("neighbour")
    wan_t = tree_network_multiplier(topo.sites) * size_bytes / topo.wan_bw_Bps(params)
    depth = math.floor(math.log2(big_n))
    wan_depth = math.ceil(math.log2(topo.sites)) if topo.sites > 1 else 0
    hop = intra_hop_latency(topo, Algorithm.NVLS_TREE, protocol, params)
    net = net_hop_latency(topo, Algorithm.NVLS_TREE, protocol, size_bytes, params)
    wan = wan_hop_latency(topo, Algorithm.NVLS_TREE, protocol, params)
    net_levels = max(depth - wan_depth, 0)
    posts = tree_post_overhead(topo, protocol, params)
    base = base_latency(Algorithm.NVLS_TREE, protocol, params)  # NCCL's: 0
    latency = base + hop + 2 * net_levels * net + 2 * wan_depth * wan + posts
    transfer = max(intra_t, net_t, wan_t)

    def explain() -> Cost:
        limits = network_words(topo, "neighbour", inside=True)
        where = (
            # design show and gap print NVLS alone (309 GB/s on H100): the headline says why
            # this is less
            f"NVLink SHARP in the NVSwitch ({fixed(bw * factor / 1e9, 0)} GB/s per GPU, "
            f"{factor:g} x its {fixed(bw / 1e9, 0)} GB/s alone)"
            if intra_t >= max(net_t, wan_t)
            else "WAN between sites"
            if wan_t > net_t
            else f"network (tree between {topo.node}s{limits})"
        )
        terms = [
            *([base_term(Algorithm.NVLS_TREE, protocol, params)] if base else []),
            Term(
                name="NVLS latency",
                seconds=hop,
                detail=intra_hop_detail(topo, Algorithm.NVLS_TREE, protocol, params),
            ),
        ]
        if net_levels:  # none with one domain per site: the WAN levels below are the tree
            terms.append(
                tree_levels_term(
                    topo, Algorithm.NVLS_TREE, protocol, size_bytes, params, levels=net_levels
                )
            )
        if wan_depth:
            terms.append(
                wan_levels_term(topo, Algorithm.NVLS_TREE, protocol, params, levels=wan_depth)
            )
        if posts:
            terms.append(proxy_posts_term(posts, topo))
        terms.append(
            Term(
                name="transfer",
                seconds=transfer,
                detail=f"max of NVLS inside the {topo.node} S (m+1)/m at {gbps(bw * factor)} "
                f"(calibrated.nvls_tree_factor {factor:g} of NVLS alone, "
                f"{fit_origin(params, 'calibrated.nvls_tree_factor', _TREE_FIT)}) "
                f"= {worked(intra_t)}, and the "
                f"tree between {topo.node}s {tree_network_multiplier(big_n):g} x S over the "
                f"{topo.node}'s NICs = "
                f"{worked(net_t)}"
                + (
                    ", and "
                    + wan_transfer_detail(
                        topo, params, tree_network_multiplier(topo.sites), size_bytes
                    )
                    if topo.sites > 1
                    else ""
                )
                + f"; {where}",
            )
        )
        return make_cost(
            Algorithm.NVLS_TREE,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            # every term the sum holds: the WAN, the proxy's posts (and a base latency a
            # cost-parameter file gives) had been left out
            formula=(
                "max(S(m+1)/(m B_nvls), c S/(nics B_nic)"
                + (", c' S/B_wan" if topo.sites > 1 else "")
                + ") + "
                + ("base + " if base else "")
                + "NVLS + "
                + (f"2({tree_levels_formula(wan_depth)})" if wan_depth else "2 log2(N) net")
                + (" + 2 post" if posts else "")
            ),
            equivalent=True,
            terms=terms,
            latency_words=latency_words(topo, protocol, size_bytes, params),
        )

    return Timing(Algorithm.NVLS_TREE, protocol, latency, transfer, explain)


def sharp_network_s(size_bytes: float, topo: Topology, params: CostParams) -> float:
    """Network time of a SHARP (in-network) all-reduce: ``S / (a x nics x B_nic)``.

    An ideal switch reduction sends S into the switch tree and receives S back (a = 1): busbw
    would reach twice the node's NIC rate. NCCL's own tuner does not expect that: it rates CollNet
    (and NVLS with SHARP) at half its bus bandwidth, a = ``collnet_algbw_factor`` = 0.5
    (NCCL 2.30.7 ``ncclTopoTuneModel``), so busbw tops out at the NIC rate. The published SHARP
    runs agree: 8 x 8 H100 with 8 x NDR, CollNetChain 366-387 GB/s busbw at 1-8 GiB (8 NICs of
    48.75 GB/s in the catalogue, 390 GB/s; 46-48 GB/s per NDR NIC measured through NCCL,
    nccl-tests#290); 4 x 8 A100 on HDR SHARP 152-160 GB/s.
    """
    a = params.nccl_tuner.collnet_algbw_factor
    return size_bytes / (a * topo.domain_bw_Bps("neighbour"))


def _collnet_ok(
    collective: Collective, topo: Topology, protocol: Protocol, params: CostParams
) -> bool:
    return (
        collective is Collective.ALL_REDUCE
        and protocol is Protocol.SIMPLE
        and topo.domains > 1
        and topo.out is not None
        and topo.out.sharp
        and topo.m <= params.nccl_tuner.collnet_max_local_ranks
        and topo.wan is None  # a SHARP tree does not span sites
    )


def collnet_direct_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """CollNetDirect: intra-domain reduce-scatter to per-GPU heads, SHARP across, all-gather.

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if (
        not _collnet_ok(collective, topo, protocol, params)
        or topo.up is None
        or topo.up.path != "nvlink"
    ):
        return None
    m = topo.m
    intra_t = 2 * (m - 1) / m * size_bytes / topo.up_bw_Bps()
    net_t = sharp_network_s(size_bytes, topo, params)
    # NCCL's base latency first, as kernels._collnet_direct_kernel adds it (the same to the bit)
    latency = (
        base_latency(Algorithm.COLLNET_DIRECT, protocol, params)
        + 2
        * (
            min(1, m - 1) * intra_hop_latency(topo, Algorithm.COLLNET_DIRECT, protocol, params)
            + params.nccl_tuner.collnet_fanin_s * (m - 1)
        )
        + net_hop_latency(topo, Algorithm.COLLNET_DIRECT, protocol, size_bytes, params)
    )
    algorithm = Algorithm.COLLNET_DIRECT

    def latency_terms() -> list[Term]:
        fanin = params.nccl_tuner.collnet_fanin_s
        fan_in = []
        if m > 1 and fanin > 0:
            fan_in.append(
                Term(
                    name=f"fan-in inside {topo.node}s",
                    seconds=2 * fanin * (m - 1),
                    detail=f"2 x (m-1) = {2 * (m - 1)} x {us(fanin)}: each head gathers from "
                    "and scatters to the other GPUs (NCCL's CollNetDirect fan-in, "
                    "nccl_tuner.collnet_fanin_latency)",
                )
            )
        return _collnet_hops(
            size_bytes,
            topo,
            protocol,
            params,
            algorithm=algorithm,
            intra=2 * min(1, m - 1),
            between=fan_in,
        )

    def transfer_words() -> str:
        return (
            f"reduce-scatter to and all-gather from the per-GPU heads inside, 2(m-1)/m x S = "
            f"{format_size(2 * (m - 1) / m * size_bytes)} per GPU at {gbps(topo.up_bw_Bps())}: "
            f"{worked(intra_t)}; " + _sharp_words(size_bytes, topo, params, net_t)
        )

    return _collnet_timing(
        algorithm,
        protocol,
        latency,
        (intra_t, net_t),
        params,
        topo=topo,
        intra_words="scale-up (RS/AG to heads)",
        formula="max(2(m-1)/m S/B_up, S/(a nics B_nic)) + latency",
        latency_terms=latency_terms,
        transfer_words=transfer_words,
    )


def _collnet_hops(
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    *,
    algorithm: Algorithm,
    intra: int,
    between: Sequence[Term] = (),
) -> list[Term]:
    """``intra`` hops inside the node, the terms ``between``, then the one SHARP network hop, as
    explanation terms."""

    def hops(name: str, count: int, kind: str) -> list[Term]:
        return hop_terms(
            [(name, count, kind)],
            topo,
            algorithm=algorithm,
            protocol=protocol,
            size_bytes=size_bytes,
            params=params,
        )

    return [
        *hops(f"hops inside {topo.node}s", intra, "intra"),
        *between,
        *hops("SHARP network hop", 1, "net"),
    ]


#: The bottleneck of a SHARP all-reduce the network holds.
_SHARP_NETWORK = "network into the SHARP switch tree"


def _sharp_bottleneck(topo: Topology) -> str:
    """The bottleneck of a SHARP all-reduce held by the network, with what holds the NICs below
    their rate (the uplinks' taper, a PCIe cap), as the tree's bottleneck says it."""
    return _SHARP_NETWORK + network_words(topo, "neighbour")


def _sharp_words(size_bytes: float, topo: Topology, params: CostParams, net_t: float) -> str:
    """How :func:`sharp_network_s` is worked out."""
    a = params.nccl_tuner.collnet_algbw_factor
    nics = f"{topo.out.nics_per_domain} x {topo.out.link_id}" if topo.out is not None else "NICs"
    return (
        f"the SHARP switch tree: S = {format_size(size_bytes)} per {topo.node} at {a:g} x the "
        f"{topo.node}'s network ({nics}, {gbps(topo.domain_bw_Bps('neighbour'))}"
        f"{network_words(topo, 'neighbour', inside=True)}) = "
        f"{gbps(a * topo.domain_bw_Bps('neighbour'))} "
        f"(NCCL rates CollNet at half its bus bandwidth): {worked(net_t)}"
    )


def _collnet_timing(
    algorithm: Algorithm,
    protocol: Protocol,
    latency: float,
    times: tuple[float, float],
    params: CostParams,
    *,
    topo: Topology,
    intra_words: str,
    formula: str,
    latency_terms: Callable[[], list[Term]],
    transfer_words: Callable[[], str],
) -> Timing:
    """A CollNet cost: the latency, and the slower of the scale-up and SHARP network transfers
    ``times`` (intra, net), named as the bottleneck; ``latency_terms`` and ``transfer_words``
    explain them; ``latency`` holds NCCL's base latency of the algorithm (0 for both CollNets),
    said as a term where it is not 0."""
    intra_t, net_t = times
    transfer = max(intra_t, net_t)
    base = base_latency(algorithm, protocol, params)

    def explain() -> Cost:
        terms = [*([base_term(algorithm, protocol, params)] if base else []), *latency_terms()]
        terms.append(
            Term(
                name="transfer",
                seconds=transfer,
                detail="the slower of the two, as they run at once: " + transfer_words(),
            )
        )
        return make_cost(
            algorithm,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=_sharp_bottleneck(topo) if net_t >= intra_t else intra_words,
            formula=formula,
            equivalent=True,
            terms=terms,
        )

    return Timing(algorithm, protocol, latency, transfer, explain)


def collnet_chain_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """CollNetChain: a chain inside each domain, SHARP across domains.

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if not _collnet_ok(collective, topo, protocol, params):
        return None
    m = topo.m
    intra_t = 2 * size_bytes / topo.up_bw_Bps() if m > 1 else 0.0
    net_t = sharp_network_s(size_bytes, topo, params)
    latency = (
        base_latency(Algorithm.COLLNET_CHAIN, protocol, params)
        + 2 * (m - 1) * intra_hop_latency(topo, Algorithm.COLLNET_CHAIN, protocol, params)
        + net_hop_latency(topo, Algorithm.COLLNET_CHAIN, protocol, size_bytes, params)
    )

    def latency_terms() -> list[Term]:
        return _collnet_hops(
            size_bytes, topo, protocol, params, algorithm=Algorithm.COLLNET_CHAIN, intra=2 * (m - 1)
        )

    def transfer_words() -> str:
        inside = (
            f"a chain inside the {topo.node}, up and back down, 2 x S = "
            f"{format_size(2 * size_bytes)} "
            f"per GPU at {gbps(topo.up_bw_Bps())}: {worked(intra_t)}; "
            if m > 1
            else ""
        )
        return inside + _sharp_words(size_bytes, topo, params, net_t)

    return _collnet_timing(
        Algorithm.COLLNET_CHAIN,
        protocol,
        latency,
        (intra_t, net_t),
        params,
        topo=topo,
        intra_words="scale-up chain (2S per GPU)",
        formula="max(2S/B_up, S/(a nics B_nic)) + 2(m-1) intra + net",
        latency_terms=latency_terms,
        transfer_words=transfer_words,
    )
