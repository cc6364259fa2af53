"""NCCL's double binary tree all-reduce: a chain inside each domain, two binary trees across.

Source: Sanders, Speck, Traeff, Parallel Computing 35(12), 2009 (two-tree algorithms); NCCL's
trees (NVIDIA blog "Massively scale your deep learning training with NCCL 2.4"); NCCL 2.30.7
constants (docs/model.md#the-nccl-tuner-model, docs/model.md#double-binary-tree).

Per rank and direction, a pipelined all-reduce over a chain or tree moves about 2S: reduce up
(receive S, send S) then broadcast down. Across domains each node is interior in one tree and a
leaf in the other, so its NICs carry 2S per direction; on exactly two nodes each node is root of
one tree and child in the other, so only S crosses the network (why 2-node busbw can reach twice
the NIC rate; nccl#946). Hence

``t = max(2S / B_up [chain, m > 1], c S / (nics x B_nic)) / (0.92 f_p) + latency``,

c = 1 if N = 2 else 2; 0.92 is NCCL's tree all-reduce factor (src/graph/tuning.cc, on the whole
tree bandwidth as NCCL's tuner applies it); f_p the protocol factor
(LL: 1/3.8 capped by NCCL's LL cap; LL128: 120/128, or 7/9 on one node) times NCCL's
size-dependent tree correction; and
``latency = base + 2 x ((m - 1) x intra + log2(N) x net)``. With a WAN tier the sites behave as
nodes do one level up: each site's WAN links carry c' x S (c' = 1 on two sites, else 2) and
ceil(log2(sites)) of the tree levels are WAN hops.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    base_term,
    gbps,
    intra_hop_detail,
    intra_hop_latency,
    latency_words,
    ll_cap_Bps,
    ll_network_bound,
    ll_network_text,
    ll_network_transfer,
    make_cost,
    net_hop_latency,
    network_words,
    protocol_bound,
    proxy_ops_s,
    proxy_ops_term,
    proxy_posts_term,
    tree_corrected,
    tree_correction,
    tree_levels_term,
    tree_post_overhead,
    us,
    wan_hop_latency,
    wan_levels_term,
    wan_rate_clause,
    worked,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.pipeline import (
    Fill,
    Stages,
    active_channels,
    channel_unit,
    channels,
    fill_parts,
    trimmed_bw,
    trimmed_text,
)
from ibcalc.engine.types import (
    Algorithm,
    Collective,
    Cost,
    Protocol,
    StageTier,
    Term,
    TermPart,
)
from ibcalc.units import format_bandwidth, format_size

__all__ = [
    "tree_levels_formula",
    "tree_network_multiplier",
    "tree_stages",
    "tree_tier_rate",
    "tree_timing",
]

#: the tiers of :func:`tree_stages`' levels, in order
_STAGE_TIERS: tuple[StageTier, StageTier, StageTier] = ("up", "net", "wan")


def _rate_words(
    tier_bw: float,
    proto_bw: float,
    correction: float,
    *,
    protocol: Protocol,
    domains: int,
    params: CostParams,
) -> str:
    """How the tree's rate comes from its tier's: NCCL's tree all-reduce factor, its per-protocol
    tree factor (tuning.cc) and its size-bucket correction, each where it applies."""
    nccl = params.nccl_tuner
    steps = [f"x {nccl.tree_factor:g} (NCCL's tree all-reduce factor)"]
    factored = tier_bw * nccl.tree_factor
    if protocol is Protocol.LL:
        if proto_bw < factored / nccl.tree_ll_divisor * (1 - 1e-9):
            steps.append(f"capped at {gbps(proto_bw)} (half NCCL's LL bandwidth cap, for trees)")
        else:
            steps.append(f"/ {nccl.tree_ll_divisor:g} (NCCL's tree LL divisor)")
    elif protocol is Protocol.LL128:
        factor = proto_bw / factored
        where = "one node" if domains == 1 else "several nodes"
        steps.append(f"x {factor:.4g} (NCCL's tree LL128 factor on {where})")
    if correction != 1.0:
        steps.append(f"x {correction:.3g} (NCCL's tree correction at this size)")
    return f": the tier's {gbps(tier_bw)} " + " ".join(steps)


def tree_network_multiplier(domains: int) -> float:
    """Bytes per byte of S each domain sends over the network in a double binary tree."""
    return 1.0 if domains <= 2 else 2.0


def tree_tier_rate(
    topo: Topology, protocol: Protocol, params: CostParams
) -> Callable[[float], float]:
    """A tier's tree rate from its bandwidth for the collective: NCCL's tree all-reduce factor,
    then its LL divisor and cap (half NCCL's LL cap, for trees) or its LL128 factor."""
    nccl = params.nccl_tuner
    factor = nccl.tree_factor
    if protocol is Protocol.LL:
        divisor, cap = nccl.tree_ll_divisor, ll_cap_Bps(topo, params) / 2.0
        return lambda tier_bw: min(tier_bw * factor / divisor, cap)
    if protocol is Protocol.LL128:
        factor *= (
            nccl.tree_ll128_factor_one_node
            if topo.domains == 1
            else nccl.tree_ll128_factor_multi_node
        )
    return lambda tier_bw: tier_bw * factor


def tree_fill_wan_bw(topo: Topology) -> float:
    """The rate a tree's first chunk crosses the WAN at (:func:`tree_stages`): the site's WAN
    links' for the collective, inf without a WAN. Not :meth:`Topology.wan_bw_Bps`, which a long
    WAN binds to NCCL's buffers in flight per round trip: a first chunk finds its connection's
    buffer slots free, and the level's one-way latency is charged as a hop already; at the
    window's rate the chunk took a share of the round trip a second time (a 32 KiB LL chunk
    across a 1 ms WAN, 16 channels: 516 us at 63.5 MB/s, for 193 us at the links' 170 MB/s)."""
    if topo.wan is None:
        return math.inf
    return topo.wan.domain_bw_Bps / tree_network_multiplier(topo.sites)


def tree_stages(
    rate: Callable[[float], float],
    tiers: tuple[float, float, float],
    levels: tuple[int, int, int],
) -> tuple[Stages, ...]:
    """The tree's pipeline, up the chain and the tree to the root and back down: 2 stages per
    chain hop, network level and WAN level (``levels``: the chain's hops, the network levels,
    the WAN levels), each at its tier's rate (``tiers``: the chain's, the network's and the
    WAN's bandwidth for the collective, through ``rate``: :func:`tree_tier_rate`)."""
    return tuple(
        Stages(2 * count, rate(bw), tier)
        for count, bw, tier in zip(levels, tiers, _STAGE_TIERS, strict=True)
        if count > 0
    )


def tree_levels_formula(wan_depth: int) -> str:
    """A tree's levels across nodes, and sites, in its formula: ``log2(N) net``, or with
    ``wan_depth`` WAN levels ``(log2(N) - log2(s)) net + log2(s) wan``."""
    if not wan_depth:
        return "log2(N) net"
    return "(log2(N) - log2(s)) net + log2(s) wan"


def tree_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of the double binary tree all-reduce, or None when it does not apply.

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective is not Collective.ALL_REDUCE or topo.ranks < 2:
        return None
    nccl = params.nccl_tuner
    m, big_n = topo.m, topo.domains
    chain_bw = topo.up_bw_Bps() / 2.0 if m > 1 else math.inf
    net_bw = topo.domain_bw_Bps("neighbour") / tree_network_multiplier(big_n)
    wan_bw = topo.wan_bw_Bps(params, protocol) / tree_network_multiplier(topo.sites)
    if wan_bw < min(net_bw, chain_bw):
        tier_bw, limit = wan_bw, "wan"
    elif net_bw < chain_bw:
        tier_bw, limit = net_bw, "net"
    else:
        tier_bw, limit = chain_bw, "up"
    # NCCL's tree all-reduce factor (0.92) on whichever tier binds, as its tuner applies it: a
    # network-bound 2 x 4 H100 tree reaches 0.92 of the rate its own rings reach on the same NICs
    rate = tree_tier_rate(topo, protocol, params)
    bw = proto_bw = rate(tier_bw)
    full = channels(topo, params)
    unit = channel_unit(topo, protocol, params, ring=False)
    active = active_channels(size_bytes, full, unit.bytes)
    bw = trimmed_bw(bw, active, full)
    # the binding rate on the active channels, before the size-bucket correction below
    uncorrected_bw = bw
    # NCCL's size-bucket correction ("trees do not follow the model well at medium sizes")
    correction = (
        tree_correction(size_bytes, protocol, params) if tree_corrected(protocol, params) else 1.0
    )
    bw *= correction
    intra = intra_hop_latency(topo, Algorithm.TREE, protocol, params)
    net = net_hop_latency(topo, Algorithm.TREE, protocol, size_bytes, params) if big_n > 1 else 0.0
    depth = math.floor(math.log2(big_n)) if big_n > 1 else 0
    wan_depth = math.ceil(math.log2(topo.sites)) if topo.sites > 1 else 0
    wan = wan_hop_latency(topo, Algorithm.TREE, protocol, params)
    base = base_latency(Algorithm.TREE, protocol, params)
    net_levels = max(depth - wan_depth, 0)
    # the host proxy's post overhead (NCCL's per-step network overhead), once on the way up and
    # once down: the published trees show it does not grow with the depth
    posts = tree_post_overhead(topo, protocol, params)
    # the proxy starts one network operation per channel (0 on one node and in NCCL's view)
    ops = proxy_ops_s(topo, active, params)
    latency = base + 2 * ((m - 1) * intra + net_levels * net + wan_depth * wan) + posts + ops
    # up the chain and the tree to the root, then back down; a chunk crosses each stage at its
    # own tier's rate and does not take the size-bucket correction (with it, the fill fell as
    # the correction rose from 1 to 8 MiB faster than the chunk grew, and a tree/Simple
    # all-reduce took less time for more bytes)
    fill_wan_bw = tree_fill_wan_bw(topo)
    stages = tree_stages(rate, (chain_bw, net_bw, fill_wan_bw), (m - 1, net_levels, wan_depth))
    transfer = max(size_bytes / bw, ll_network_transfer(topo, size_bytes, protocol, params))
    parts = fill_parts(size_bytes, stages, topo, protocol=protocol, params=params, active=active)
    fill = 0.0 if parts is None else parts.seconds

    def explain() -> Cost:
        if limit == "wan":
            where = f"WAN between sites (tree: each site sends {'' if topo.sites <= 2 else '2'}S)"
        elif limit == "net":
            limits = network_words(topo, "neighbour", inside=True)
            where = f"network (tree: each {topo.node} sends {'' if big_n <= 2 else '2'}S{limits})"
        else:
            where = f"scale-up chain inside the {topo.node} (2S per GPU)"
        terms = [base_term(Algorithm.TREE, protocol, params)]
        if m > 1:
            terms.append(
                Term(
                    name=f"chain inside the {topo.node}",
                    seconds=2 * (m - 1) * intra,
                    detail=f"2 x {m - 1} hops (up and down) x {us(intra)}: "
                    + intra_hop_detail(topo, Algorithm.TREE, protocol, params),
                )
            )
        if net_levels:
            terms.append(
                tree_levels_term(
                    topo, Algorithm.TREE, protocol, size_bytes, params, levels=net_levels
                )
            )
        if wan_depth:
            terms.append(wan_levels_term(topo, Algorithm.TREE, protocol, params, levels=wan_depth))
        if posts:
            terms.append(proxy_posts_term(posts, topo))
        if ops:
            terms.append(proxy_ops_term(ops, active, params))
        terms.append(
            Term(
                name="transfer",
                seconds=transfer,
                detail=f"S = {format_size(size_bytes)} through the tree at {gbps(bw)} "
                f"({protocol.value}; {where})"
                + _rate_words(
                    tier_bw, proto_bw, correction, protocol=protocol, domains=big_n, params=params
                )
                + (wan_rate_clause(topo, params, protocol) if limit == "wan" else "")
                + trimmed_text(active, full, unit)
                + ll_network_text(topo, size_bytes, protocol, params, size_bytes / bw),
            )
        )
        if fill:
            terms.append(
                Term(
                    name="pipeline fill",
                    seconds=fill,
                    detail=_fill_detail(parts, active, stages, topo),
                    parts=_fill_term_parts(parts),
                )
            )
        return make_cost(
            Algorithm.TREE,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=ll_network_bound(topo, size_bytes, protocol, params, size_bytes / bw)
            or protocol_bound(
                where,
                protocol,
                uncorrected_bw,  # the protocol's and channels' rate, not the size correction (DM)
                tier_bw,
                active=active,
                full=full,
                capped=protocol is Protocol.LL
                and ll_cap_Bps(topo, params) / 2.0
                < tier_bw * nccl.tree_factor / nccl.tree_ll_divisor,
            ),
            # every term the sum holds: the WAN levels, the proxy's posts and operations had
            # been left out (2 x DGX H100: 2 x 1 us of posts and 16 x 0.6 us of operations)
            formula=(
                f"max(2S/B_up, c x S/(nics x B_nic), c' x S/B_wan) / ({nccl.tree_factor:g} f_p) "
                f"+ fill + base + 2((m-1) intra + {tree_levels_formula(wan_depth)})"
                + (" + 2 post" if posts else "")
                + (" + channels x proxy_op" if ops else "")
            ),
            # two ranks in all: busbw's factor is 1 and the tree sends S, as a ring does: a
            # wire rate, not an equivalent
            equivalent=(big_n == 2 or topo.sites == 2) and topo.m * big_n > 2,
            terms=terms,
            fill_s=fill,
            latency_words=latency_words(topo, protocol, size_bytes, params),
        )

    return Timing(Algorithm.TREE, protocol, latency, transfer, explain, fill_s=fill)


def _tier_words(tier: StageTier, node: str, *, one: bool) -> str:
    """Where a stage of ``tier`` (:class:`Stages`) sits: in a scale-up domain (``node``, its
    word; ``one``: the cluster has one), across the network between them, or across the WAN."""
    if tier == "up":
        return f"in the {node}" if one else f"in {node}s"
    return f"across {node}s" if tier == "net" else "across the WAN"


def _fill_term_parts(parts: Fill | None) -> tuple[TermPart, ...]:
    """The fill's tiers as :class:`TermPart` figures (review DT 5: they had been in the
    detail's words only): stages holding the chunk, its bytes, the per-channel rate, the time."""
    assert parts is not None  # the term is listed only when there is a fill
    return tuple(
        TermPart(
            tier=tier,
            count=count,
            size_bytes=parts.chunk_bytes,
            rate_Bps=rate,
            seconds=count * parts.chunk_bytes / rate,
        )
        for count, rate, tier in parts.parts
    )


def _fill_detail(
    parts: Fill | None, active: float, stages: tuple[Stages, ...], topo: Topology
) -> str:
    """The fill's stages, which of them hold a chunk, and ``held x chunk / per-channel rate``
    per tier with its time (:func:`fill_parts`)."""
    assert parts is not None  # the term is listed only when there is a fill
    one = topo.domains == 1

    def where(tier: StageTier) -> str:
        return _tier_words(tier, topo.node, one=one)

    total = sum(s.number for s in stages)
    if len(stages) > 1:
        counts = f"{total} stages ({', '.join(f'{s.number} {where(s.tier)}' for s in stages)})"
    else:
        counts = f"{total} stage{'s' if total != 1 else ''} {where(stages[0].tier)}"
    if parts.held == total - 1:
        slowest = min(stages, key=lambda s: s.rate_Bps)
        own = f"one {where(slowest.tier)}, the slowest" if len(stages) > 1 else "the last"
        held = f"every stage holds it but {own}, whose time is the transfer's own"
    else:
        held = "each network stage holds it (the proxy sends a whole step)"
        if stages[0].tier == "up":
            inside = f"the {topo.node}" if one else f"{topo.node}s"
            held = f"LL and LL128 lines stream through the stages in {inside}; {held}"
    rates = ", ".join(
        f"{n} {where(tier)} at {format_bandwidth(rate)} per channel"
        + (" (its links' rate: a first chunk finds the buffer slots free)" if tier == "wan" else "")
        + " = "
        f"{worked(n * parts.chunk_bytes / rate)}"
        for n, rate, tier in parts.parts
    )
    return (
        f"{counts}: the first chunk, {format_size(parts.chunk_bytes)}, crosses each before the "
        f"pipeline runs full; {held}: {rates} ({active:g} channel{'' if active == 1 else 's'}; "
        "NCCL chunk sizes, engine/pipeline.py; each tier at its own rate, without the size-bucket "
        "correction)"
    )
