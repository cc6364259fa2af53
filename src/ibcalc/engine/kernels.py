"""Size-only kernels: the numbers of a cost function with everything else worked out once.

A cost function (``*_timing``) takes (collective, size, topology, protocol, parameters) and
returns a :class:`~ibcalc.engine.base.Timing`. For a fixed (collective, topology, protocol,
parameters), most of what it computes does not depend on the size: hop latencies, bandwidths
and their protocol factors and caps, channels, base latencies, step counts. A *kernel* works
those out once and, per size, runs only the size-dependent arithmetic, in the same order of
floating-point operations as the cost function, so its result is the same to the bit: the cost
function's ``Timing.single_s``.

:func:`kernel_for` gives a hand-written kernel for every modelled algorithm (ring and tree, NVLS
in one domain and with IB SHARP across domains, NVLS-tree, CollNet direct and chain, RHD, PAT,
hierarchical, all-to-all, send/receive) where its operations do not overlap (``period_s``
None). The one cost function whose operations overlap (in LL), the ring chain of broadcast and
reduce (``pipeline.model_fill``), has a *chain kernel* (:func:`chain_kernel_for`): size ->
(``single_s``, ``period_s``), the two numbers from which the plan makes nccl-tests' time as
``engine.measure.measured_s`` does, ``(T + (k - 1) max(P, host)) / k``. Elsewhere both give None
and the plan calls the cost function itself. A non-finite intermediate falls back to the cost
function, which then raises as it always did.
``tests/engine/test_kernels.py`` and ``benchmarks/engine_identity.py check-quick`` hold every
kernel to its cost function.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ibcalc.engine.algorithms.alltoall import (
    alltoall_messages,
    alltoall_traffic,
    alltoall_up_bw_Bps,
    message_cost_s,
    pairwise_timing,
    pxn_offered,
    pxn_timing,
    sendrecv_timing,
    shares_gpu_link,
    torus_share,
)
from ibcalc.engine.algorithms.hierarchical import hierarchical_timing
from ibcalc.engine.algorithms.innetwork import (
    _collnet_ok,
    _nvls_bw,
    collnet_chain_timing,
    collnet_direct_timing,
    nvls_timing,
    nvls_tree_timing,
)
from ibcalc.engine.algorithms.recursive import (
    core_scales,
    fold_in_bw,
    fold_in_factor,
    pat_timing,
    rhd_core,
    rhd_timing,
)
from ibcalc.engine.algorithms.ring import _RING_COLLECTIVES, _ring_bw, ring_timing
from ibcalc.engine.algorithms.tree import (
    tree_fill_wan_bw,
    tree_network_multiplier,
    tree_stages,
    tree_tier_rate,
    tree_timing,
)
from ibcalc.engine.base import (
    Timing,
    Topology,
    _hop,
    base_latency,
    bytes_factor,
    correction_at,
    intra_hop_latency,
    net_overhead,
    net_row,
    protocol_factor,
    proxy_op_per_channel_s,
    ring_plateau_factor,
    ring_protocol_bw,
    ring_wan_crossings,
    simple_count,
    simple_floor,
    tree_corrected,
    tree_post_overhead,
    wan_hop_latency,
)
from ibcalc.engine.measure import chain_overlaps, stage_flight
from ibcalc.engine.params import CostParams
from ibcalc.engine.pipeline import (
    active_channels,
    channel_rates,
    channel_unit_bytes,
    channels,
    chunk_plan,
    fill_seconds,
    held_stages,
    trimmed_bw,
)
from ibcalc.engine.types import Algorithm, Collective, Protocol

__all__ = ["ChainKernel", "Kernel", "chain_kernel_for", "kernel_for"]

#: size -> single_s of one cost function (one whose operations do not overlap: period_s None).
Kernel = Callable[[float], float]
#: size -> (single_s, period_s) of one cost function whose operations overlap (period_s set).
ChainKernel = Callable[[float], tuple[float, float]]
TimingFunction = Callable[[Collective, float, Topology, Protocol, CostParams], Timing | None]


def kernel_for(
    function: TimingFunction,
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Kernel | None:
    """The kernel of ``function`` for these arguments, or None where there is none (the cost
    function itself is then called; see the module)."""

    def fallback(size_bytes: float) -> float:
        timing = function(collective, size_bytes, topo, protocol, params)
        assert timing is not None  # applicability does not depend on the size
        return timing.single_s

    maker = _MAKERS.get(function)
    return maker(collective, topo, protocol, params, fallback) if maker is not None else None


def chain_kernel_for(
    function: TimingFunction,
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> ChainKernel | None:
    """The kernel of ``function`` for these arguments where its operations may overlap (the
    ring chain of broadcast and reduce; ``period_s`` set in LL): size -> (``single_s``,
    ``period_s``, ``single_s`` again where they do not overlap), the two numbers
    ``engine.measure.measured_s`` makes nccl-tests' time from; None where there is none."""

    def fallback(size_bytes: float) -> tuple[float, float]:
        timing = function(collective, size_bytes, topo, protocol, params)
        assert timing is not None
        period = timing.period_s
        return timing.single_s, timing.single_s if period is None else period

    maker = _CHAIN_MAKERS.get(function)
    return maker(collective, topo, protocol, params, fallback) if maker is not None else None


def _net_hop(
    topo: Topology,
    algorithm: Algorithm,
    protocol: Protocol,
    params: CostParams,
    *,
    own_row: bool = False,
) -> tuple[float, float, float, float, float] | float:
    """``net_hop_latency`` as a constant when it does not depend on the size, else the
    (hw, extra, low, span, fill_bytes) it computes ``hw + extra x (low + span x fill)`` from."""
    row = net_row(topo, algorithm, own_row=own_row)
    hw = _hop(params.nccl_tuner.hop_latency_s["net"], row, protocol)
    extra = topo.out.transport_latency_s if topo.out is not None else 0.0
    plugin = topo.out is not None and topo.out.is_plugin
    if protocol is not Protocol.SIMPLE or not plugin:
        return hw + extra * 1.0
    low = simple_floor(topo, params)
    span = params.calibrated.simple_transport_factor - low
    return hw, extra, low, span, params.calibrated.simple_fill_bytes


def _simple_net_hop(
    topo: Topology, algorithm: Algorithm, params: CostParams
) -> tuple[float, float, float, float, float]:
    """:func:`_net_hop` of Simple, as (hw, extra, low, span, fill_bytes) even on verbs, where
    the latency does not ramp (low 1, span 0)."""
    found = _net_hop(topo, algorithm, Protocol.SIMPLE, params)
    if isinstance(found, tuple):
        return found
    hw = _hop(params.nccl_tuner.hop_latency_s["net"], net_row(topo, algorithm), Protocol.SIMPLE)
    extra = topo.out.transport_latency_s if topo.out is not None else 0.0
    return hw, extra, 1.0, 0.0, 1.0


def _unpack_net(
    net_hop: tuple[float, float, float, float, float] | float,
) -> tuple[bool, float, float, float, float, float, float]:
    """(varies, constant, hw, extra, low, span, fill_bytes) of a :func:`_net_hop`."""
    if isinstance(net_hop, tuple):
        return (True, 0.0, *net_hop)
    return False, net_hop, 0.0, 0.0, 0.0, 0.0, 1.0


def _unpack_ll(ll_net: tuple[float, float] | None) -> tuple[bool, float, float]:
    """(applies, saturation, bandwidth) of an :func:`_ll_net`."""
    if ll_net is None:
        return False, 0.0, 1.0
    return True, *ll_net


def _ll_net(topo: Topology, protocol: Protocol, params: CostParams) -> tuple[float, float] | None:
    """(saturation, bandwidth) of ``ll_network_transfer`` where it is not 0."""
    ll_net_Bps = params.calibrated.ll_net_Bps
    if protocol is not Protocol.LL or topo.domains < 2 or ll_net_Bps is None:
        return None
    if topo.out is None or not topo.out.is_plugin or topo.out.transport_latency_s <= 0:
        return None
    return params.assumptions.ll_net_saturation_bytes, ll_net_Bps


def _ring_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.ring.ring_timing`, size by size."""
    if collective not in _RING_COLLECTIVES or topo.ranks < 2:
        return None
    n, big_n = topo.ranks, topo.domains
    one_way = collective in (Collective.BROADCAST, Collective.REDUCE)
    mesh_chain = topo.up is not None and topo.up.mesh and big_n > 1
    raw_bw, _ = _ring_bw(topo, params, not (one_way or mesh_chain), protocol)
    bw = ring_protocol_bw(raw_bw, protocol, topo, params)
    intra = intra_hop_latency(topo, Algorithm.RING, protocol, params)
    net_hop = (
        _net_hop(topo, Algorithm.RING, protocol, params, own_row=one_way) if big_n > 1 else 0.0
    )
    wan = wan_hop_latency(topo, Algorithm.RING, protocol, params, own_row=one_way)
    sites = topo.sites
    base = base_latency(Algorithm.RING, protocol, params)
    ll_net = _ll_net(topo, protocol, params)
    net_varies, net_const, hw, extra, low, span, fill_bytes = _unpack_net(net_hop)
    ll_on, ll_sat, ll_bw = _unpack_ll(ll_net)
    full = channels(topo, params)
    unit = channel_unit_bytes(topo, protocol, params, ring=True)
    op_s = proxy_op_per_channel_s(topo, params)
    if one_way:
        if params.pipeline.model_fill:
            return None  # the chain, whose operations overlap: see _ring_chain_kernel
        multi = big_n > 1

        def one_hop(size_bytes: float) -> float:
            # NCCL's tuner view of a broadcast/reduce: base + one hop
            if net_varies:
                fill = size_bytes / fill_bytes
                net = hw + extra * simple_count(low, span, fill)
            else:
                net = net_const
            hop = net if multi else intra
            latency = base + (wan if wan > hop else hop)
            active = active_channels(size_bytes, full, unit)
            latency += op_s * active
            transfer = size_bytes / trimmed_bw(bw, active, full)
            if ll_on:
                ll = (ll_sat if ll_sat < size_bytes else size_bytes) / ll_bw
                if ll > transfer:
                    transfer = ll
            elif transfer < 0.0:
                transfer = 0.0
            total = latency + transfer
            if total - total != 0.0:  # a non-finite term: the cost function raises
                return fallback(size_bytes)
            return (0.0 if latency < 0.0 else latency) + transfer + 0.0

        return one_hop
    all_reduce = collective is Collective.ALL_REDUCE
    nsteps = 2 * (n - 1) if all_reduce else n - 1
    s_net = (2 * (big_n - 1) if all_reduce else big_n - 1) if big_n > 1 else 0
    overhead = net_overhead(topo, protocol, params)
    s_wan = ring_wan_crossings(n, sites, nsteps)
    s_net = max(s_net, s_wan)
    head = base + (nsteps - s_net) * max(intra, overhead)
    net_steps = s_net - s_wan
    wan_part = s_wan * wan
    propagation = s_wan * topo.wan.transport_latency_s if topo.wan is not None else 0.0
    plateau_on = all_reduce and big_n > 1 and protocol is Protocol.SIMPLE
    plateau_factor = ring_plateau_factor(topo, params) - 1
    per_channel_ranks = full * n
    factor = bytes_factor(collective, n)

    def kernel(size_bytes: float) -> float:
        if net_varies:
            fill = size_bytes / fill_bytes
            net = hw + extra * simple_count(low, span, fill)
        else:
            net = net_const
        latency = head + net_steps * net + wan_part
        if plateau_on and size_bytes / per_channel_ranks >= 64:
            latency += (latency - propagation) * plateau_factor
        active = active_channels(size_bytes, full, unit)
        latency += op_s * active
        transfer = factor * size_bytes / trimmed_bw(bw, active, full)
        if ll_on:
            ll = (ll_sat if ll_sat < size_bytes else size_bytes) / ll_bw
            if ll > transfer:
                transfer = ll
        elif transfer < 0.0:
            transfer = 0.0
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + transfer + 0.0

    return kernel


def _tree_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.tree.tree_timing`, size by size."""
    if collective is not Collective.ALL_REDUCE or topo.ranks < 2:
        return None
    nccl = params.nccl_tuner
    m, big_n = topo.m, topo.domains
    chain_bw = topo.up_bw_Bps() / 2.0 if m > 1 else math.inf
    net_bw = topo.domain_bw_Bps("neighbour") / tree_network_multiplier(big_n)
    wan_bw = topo.wan_bw_Bps(params, protocol) / tree_network_multiplier(topo.sites)
    # NCCL's tree all-reduce factor on whichever tier binds (algorithms.tree.tree_timing)
    rate = tree_tier_rate(topo, protocol, params)
    bw = rate(min(wan_bw, net_bw, chain_bw))
    model_fill = bool(params.pipeline.model_fill)
    first = nccl.tree_correction_first_bucket_bytes
    corrected = tree_corrected(protocol, params)
    table = nccl.tree_correction.get(protocol)
    if table is None:
        return None
    intra = intra_hop_latency(topo, Algorithm.TREE, protocol, params)
    net_hop = _net_hop(topo, Algorithm.TREE, protocol, params) if big_n > 1 else 0.0
    depth = math.floor(math.log2(big_n)) if big_n > 1 else 0
    wan_depth = math.ceil(math.log2(topo.sites)) if topo.sites > 1 else 0
    wan = wan_hop_latency(topo, Algorithm.TREE, protocol, params)
    base = base_latency(Algorithm.TREE, protocol, params)
    net_levels = max(depth - wan_depth, 0)
    chain = (m - 1) * intra
    wan_part = wan_depth * wan
    posts = tree_post_overhead(topo, protocol, params)
    intra_stages, net_stages = 2 * (m - 1), 2 * (net_levels + wan_depth)
    total_stages = intra_stages + net_stages
    ll_net = _ll_net(topo, protocol, params)
    full = channels(topo, params)
    unit = channel_unit_bytes(topo, protocol, params, ring=False)
    op_s = proxy_op_per_channel_s(topo, params)
    simple = protocol is Protocol.SIMPLE
    fill_wan_bw = tree_fill_wan_bw(topo)
    stages = tree_stages(rate, (chain_bw, net_bw, fill_wan_bw), (m - 1, net_levels, wan_depth))
    per_channel_parts = channel_rates(held_stages(stages, protocol), full)
    chunk_depth = max(1, total_stages // 2) if simple else 1

    net_varies, net_const, hw, extra, low, span, fill_bytes = _unpack_net(net_hop)
    ll_on, ll_sat, ll_bw = _unpack_ll(ll_net)
    fills = model_fill and total_stages >= 2 and all(s.rate_Bps > 0 for s in stages)
    # engine.pipeline.tree_chunk_bytes, with the chunk plan worked out once
    chunk_start, chunk_halvings = chunk_plan(topo, protocol, chunk_depth, params)

    def kernel(size_bytes: float) -> float:
        nc = active_channels(size_bytes, full, unit)
        b = trimmed_bw(bw, nc, full)
        if corrected:
            b *= correction_at(size_bytes, table, first, smooth=model_fill)
        if net_varies:
            fill = size_bytes / fill_bytes
            net = hw + extra * simple_count(low, span, fill)
        else:
            net = net_const
        latency = base + 2 * (chain + net_levels * net + wan_part) + posts + op_s * nc
        transfer = size_bytes / b
        if ll_on:
            ll = (ll_sat if ll_sat < size_bytes else size_bytes) / ll_bw
            if ll > transfer:
                transfer = ll
        elif transfer < 0.0:
            transfer = 0.0
        if fills:
            per_channel = size_bytes / nc
            chunk = chunk_start
            for limit, floor in chunk_halvings:
                while per_channel / chunk < limit and chunk > floor:
                    chunk /= 2
            chunk = chunk if chunk < per_channel else per_channel
            pipeline_fill = fill_seconds(chunk, per_channel_parts)
        else:
            pipeline_fill = 0.0
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + transfer + pipeline_fill

    return kernel


def _nvls_tree_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.innetwork.nvls_tree_timing`, size by size."""
    bw = _nvls_bw(topo)
    if bw is None or protocol is not Protocol.SIMPLE or collective is not Collective.ALL_REDUCE:
        return None
    m, big_n = topo.m, topo.domains
    if big_n < 2:
        return None
    factor = params.calibrated.nvls_tree_factor
    m1 = m + 1
    intra_den = m * bw * factor
    net_mult = tree_network_multiplier(big_n)
    net_bw = topo.domain_bw_Bps("neighbour")
    wan_mult = tree_network_multiplier(topo.sites)
    wan_bw = topo.wan_bw_Bps(params)
    depth = math.floor(math.log2(big_n))
    wan_depth = math.ceil(math.log2(topo.sites)) if topo.sites > 1 else 0
    # NCCL's base latency (0 in 2.30.7) with the NVLS hop, as nvls_tree_timing adds them
    hop = base_latency(Algorithm.NVLS_TREE, protocol, params) + intra_hop_latency(
        topo, Algorithm.NVLS_TREE, protocol, params
    )
    hw, extra, low, span, fill_bytes = _simple_net_hop(topo, Algorithm.NVLS_TREE, params)
    wan = wan_hop_latency(topo, Algorithm.NVLS_TREE, protocol, params)
    net_levels2 = 2 * max(depth - wan_depth, 0)
    wan_part = 2 * wan_depth * wan
    posts = tree_post_overhead(topo, protocol, params)

    def kernel(size_bytes: float) -> float:
        fill = size_bytes / fill_bytes
        net = hw + extra * simple_count(low, span, fill)
        latency = hop + net_levels2 * net + wan_part + posts
        transfer = size_bytes * m1 / intra_den
        net_t = net_mult * size_bytes / net_bw
        if net_t > transfer:
            transfer = net_t
        wan_t = wan_mult * size_bytes / wan_bw
        if wan_t > transfer:
            transfer = wan_t
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _sendrecv_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.alltoall.sendrecv_timing`, size by size."""
    if collective is not Collective.SEND_RECV or topo.ranks < 2 or protocol is Protocol.LL128:
        return None
    intra = topo.m > 1
    intra_bw = topo.peer_bw_Bps() * params.calibrated.p2p_efficiency if intra else 1.0
    across = topo.domains > 1
    contention, nic_bw = 1.0, 1.0
    if across:
        assert topo.out is not None
        contention, nic_bw = topo.contention("neighbour"), topo.gpu_nics * topo.out.nic_bw_Bps
    wan_bw = topo.wan_link_bw_Bps(params, protocol) if topo.wan is not None else None
    simple = protocol is Protocol.SIMPLE
    payload = 1.0 if simple else protocol_factor(protocol, params)
    net_hop = (
        _net_hop(topo, Algorithm.RING, protocol, params, own_row=True)
        if across
        else intra_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    net_varies, net_const, hw, extra, low, span, fill_bytes = _unpack_net(net_hop)
    wan_hop = wan_hop_latency(topo, Algorithm.RING, protocol, params, own_row=True)
    base = base_latency(Algorithm.RING, protocol, params)

    def kernel(size_bytes: float) -> float:
        intra_t = size_bytes / intra_bw if intra else 0.0
        net_t = size_bytes * contention / nic_bw if across else 0.0
        if wan_bw is not None:
            wan_t = size_bytes / wan_bw
            if wan_t > net_t:
                net_t = wan_t
        transfer = net_t if net_t > intra_t else intra_t
        if not simple:
            transfer = transfer / payload
        if net_varies:
            fill = size_bytes / fill_bytes
            hop = hw + extra * simple_count(low, span, fill)
        else:
            hop = net_const
        if wan_hop > hop:
            hop = wan_hop
        latency = base + hop
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _alltoall_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
    *,
    aggregated: bool,
) -> Kernel | None:
    """``alltoall._alltoall`` (pairwise, or PXN when ``aggregated``), size by size."""
    m, n = topo.m, topo.ranks
    if aggregated:
        if collective is not Collective.ALL_TO_ALL or m < 2 or topo.domains < 2:
            return None
        if not pxn_offered(topo):
            return None
        if protocol is Protocol.LL128:
            return None
    elif collective is not Collective.ALL_TO_ALL or n < 2 or protocol is Protocol.LL128:
        return None
    messages = alltoall_messages(topo)
    intra_share = (m - 1) / n
    net_share = (n - m) / n
    up_bw = alltoall_up_bw_Bps(topo, params) if m > 1 else 1.0
    torus = torus_share(topo)
    across = topo.domains > 1
    shared = shares_gpu_link(topo)
    net_bw = topo.domain_bw_Bps(alltoall_traffic(aggregated)) / m if across else 1.0
    wan = topo.wan is not None
    wan_share, wan_bw = 0.0, 1.0
    if topo.wan is not None:
        per_site = n // topo.sites
        wan_share = (n - per_site) / n
        wan_bw = topo.wan_bw_Bps(params) / per_site
    net_hop = (
        _net_hop(topo, Algorithm.RING, protocol, params, own_row=True)
        if across
        else intra_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    net_varies, net_const, hw, extra, low, span, fill_bytes = _unpack_net(net_hop)
    wan_hop = wan_hop_latency(topo, Algorithm.RING, protocol, params, own_row=True)
    base = base_latency(Algorithm.RING, protocol, params)
    messages_s = messages * message_cost_s(topo, params)
    simple = protocol is Protocol.SIMPLE
    payload = 1.0 if simple else protocol_factor(protocol, params)

    def kernel(size_bytes: float) -> float:
        net_bytes = net_share * size_bytes
        intra_t = 0.0
        if m > 1:
            more = net_bytes * (m - 1) / m if aggregated else 0.0
            intra_t = (intra_share * size_bytes + more) / up_bw
            if torus * size_bytes > intra_t:
                intra_t = torus * size_bytes
        net_t = net_bytes / net_bw if across else 0.0
        wan_t = wan_share * size_bytes / wan_bw if wan else 0.0
        if net_varies:
            fill = size_bytes / fill_bytes
            hop = hw + extra * simple_count(low, span, fill)
        else:
            hop = net_const
        if wan_hop > hop:
            hop = wan_hop
        latency = base + hop + messages_s
        transfer = intra_t
        if shared:
            transfer = intra_t + net_bytes / up_bw
        if net_t > transfer:
            transfer = net_t
        if wan_t > transfer:
            transfer = wan_t
        if not simple:
            transfer = transfer / payload
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _pairwise_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    return _alltoall_kernel(collective, topo, protocol, params, fallback, aggregated=False)


def _pxn_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    return _alltoall_kernel(collective, topo, protocol, params, fallback, aggregated=True)


def _nvls_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.innetwork.nvls_timing`, size by size."""
    bw = _nvls_bw(topo)
    if bw is None or protocol is not Protocol.SIMPLE:
        return None
    if collective not in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    m = topo.m
    latency = base_latency(Algorithm.NVLS, protocol, params) + intra_hop_latency(
        topo, Algorithm.NVLS, protocol, params
    )
    if topo.domains > 1:
        # with IB SHARP across domains (all-reduce only)
        if collective is not Collective.ALL_REDUCE or topo.out is None or not topo.out.sharp:
            return None
        if topo.wan is not None:
            return None
        sharp = (m + 1, m * bw)
        return _sharp_kernel(
            topo, params, Algorithm.NVLS, head=latency, intra=sharp, fallback=fallback
        )
    all_reduce = collective is Collective.ALL_REDUCE
    m1, den = m + 1, m * bw
    clamped = 0.0 if latency < 0.0 else latency
    finite = latency - latency == 0.0

    def kernel(size_bytes: float) -> float:
        if all_reduce:
            transfer = size_bytes * m1 / den
            if transfer < 0.0:  # max(intra_t, net_t = 0.0)
                transfer = 0.0
        else:
            transfer = size_bytes / bw
        if not finite or transfer - transfer != 0.0:
            return fallback(size_bytes)
        return clamped + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _ring_chain_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: ChainKernel,
) -> ChainKernel | None:
    """The chain of :func:`~ibcalc.engine.algorithms.ring.ring_timing`'s broadcast and reduce
    (``model_fill``), size by size: its ``single_s`` and its ``period_s`` (in LL; in LL128 and
    Simple successive operations do not overlap and the period is ``single_s``)."""
    if collective not in (Collective.BROADCAST, Collective.REDUCE) or topo.ranks < 2:
        return None
    if not params.pipeline.model_fill:
        return None
    n, big_n = topo.ranks, topo.domains
    raw_bw, _ = _ring_bw(topo, params, False, protocol)
    bw = ring_protocol_bw(raw_bw, protocol, topo, params)
    intra = intra_hop_latency(topo, Algorithm.RING, protocol, params)
    net_hop = _net_hop(topo, Algorithm.RING, protocol, params, own_row=True) if big_n > 1 else 0.0
    wan = wan_hop_latency(topo, Algorithm.RING, protocol, params, own_row=True)
    sites = topo.sites
    base = base_latency(Algorithm.RING, protocol, params)
    head = base + (n - big_n) * intra
    net_hops = big_n - sites
    tail = (sites - 1) * wan
    first = intra if topo.m > 1 else 0.0
    net_varies, net_const, hw, extra, low, span, fill_bytes = _unpack_net(net_hop)
    ll_on, ll_sat, ll_bw = _unpack_ll(_ll_net(topo, protocol, params))
    full = channels(topo, params)
    unit = channel_unit_bytes(topo, protocol, params, ring=True)
    op_s = proxy_op_per_channel_s(topo, params)
    overlaps = chain_overlaps(protocol)
    flight = stage_flight(params)
    wan_stage = wan * flight

    def kernel(size_bytes: float) -> tuple[float, float]:
        if net_varies:
            fill = size_bytes / fill_bytes
            net = hw + extra * simple_count(low, span, fill)
        else:
            net = net_const
        latency = head + net_hops * net + tail
        active = active_channels(size_bytes, full, unit)
        ops = op_s * active
        latency += ops
        transfer = size_bytes / trimmed_bw(bw, active, full)
        if ll_on:
            ll = (ll_sat if ll_sat < size_bytes else size_bytes) / ll_bw
            if ll > transfer:
                transfer = ll
        elif transfer < 0.0:
            transfer = 0.0
        stage = first + transfer
        if net * flight > stage:
            stage = net * flight
        if wan_stage > stage:
            stage = wan_stage
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        single = (0.0 if latency < 0.0 else latency) + transfer + 0.0
        return single, (base + stage + ops) if overlaps else single

    return kernel


def _sharp_kernel(
    topo: Topology,
    params: CostParams,
    algorithm: Algorithm,
    *,
    head: float,
    intra: tuple[float, float] | None,
    fallback: Kernel,
) -> Kernel:
    """A SHARP all-reduce, size by size: ``latency = head + net_hop(S)``, ``transfer =
    max(intra_t, S / (a x domain bandwidth))`` with ``intra_t = c x S / d`` from ``intra``'s
    (c, d), or 0.0 without one (``innetwork.sharp_network_s``; Simple only)."""
    hw, extra, low, span, fill_bytes = _simple_net_hop(topo, algorithm, params)
    den = params.nccl_tuner.collnet_algbw_factor * topo.domain_bw_Bps("neighbour")
    has_intra = intra is not None
    c, d = intra if intra is not None else (0.0, 1.0)

    def kernel(size_bytes: float) -> float:
        fill = size_bytes / fill_bytes
        latency = head + (hw + extra * simple_count(low, span, fill))
        transfer = c * size_bytes / d if has_intra else 0.0
        net_t = size_bytes / den
        if net_t > transfer:
            transfer = net_t
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _collnet_direct_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.innetwork.collnet_direct_timing`, size by size."""
    if not _collnet_ok(collective, topo, protocol, params):
        return None
    if topo.up is None or topo.up.path != "nvlink":
        return None
    m = topo.m
    head = base_latency(Algorithm.COLLNET_DIRECT, protocol, params) + 2 * (
        min(1, m - 1) * intra_hop_latency(topo, Algorithm.COLLNET_DIRECT, protocol, params)
        + params.nccl_tuner.collnet_fanin_s * (m - 1)
    )
    intra = (2 * (m - 1) / m, topo.up_bw_Bps())
    return _sharp_kernel(
        topo, params, Algorithm.COLLNET_DIRECT, head=head, intra=intra, fallback=fallback
    )


def _collnet_chain_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.innetwork.collnet_chain_timing`, size by size."""
    if not _collnet_ok(collective, topo, protocol, params):
        return None
    m = topo.m
    head = base_latency(Algorithm.COLLNET_CHAIN, protocol, params) + 2 * (
        m - 1
    ) * intra_hop_latency(topo, Algorithm.COLLNET_CHAIN, protocol, params)
    intra = (2, topo.up_bw_Bps()) if m > 1 else None
    return _sharp_kernel(
        topo, params, Algorithm.COLLNET_CHAIN, head=head, intra=intra, fallback=fallback
    )


def _rhd_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.recursive.rhd_timing`, size by size."""
    if protocol is not Protocol.SIMPLE or topo.ranks < 2:
        return None
    if collective not in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    m, big_n, n = topo.m, topo.domains, topo.ranks
    phases = 2 if collective is Collective.ALL_REDUCE else 1
    pow2 = 1 << int(math.log2(n))
    net_share = topo.domain_bw_Bps("uniform") / m
    up_bw = topo.up_bw_Bps()
    sites = topo.sites
    core_m, core_n, narrowed = rhd_core(topo)
    local_n = core_n // sites
    wan_c = (sites - 1) / sites
    net_on = local_n > 1
    net_scale, intra_scale = core_scales(collective, topo)
    net_c = net_scale * (local_n - 1) / local_n if net_on else 0.0
    intra_on = core_m > 1
    intra_c = intra_scale * (core_m - 1) / (core_m * core_n) if intra_on else 0.0
    wan_share = min(topo.wan_bw_Bps(params) / (n // sites), net_share)
    wan_steps = math.ceil(math.log2(sites)) if sites > 1 else 0
    net_steps = math.ceil(math.log2(local_n)) if local_n > 1 else 0
    intra_steps = math.ceil(math.log2(core_m)) if core_m > 1 else 0
    base = base_latency(Algorithm.RING, protocol, params)
    wan_part = wan_steps * wan_hop_latency(topo, Algorithm.RING, protocol, params)
    intra_hop = intra_hop_latency(topo, Algorithm.RING, protocol, params)
    intra_part = intra_steps * intra_hop
    multi = big_n > 1
    hw, extra, low, span, fill_bytes = _simple_net_hop(topo, Algorithm.RING, params)
    folds = pow2 != n
    fold = fold_in_factor(collective, n)
    slowest = fold_in_bw(topo, narrowed, net_share, up_bw)

    def kernel(size_bytes: float) -> float:
        wan_bytes = wan_c * size_bytes
        net_bytes = net_c * size_bytes / sites if net_on else 0.0
        intra_bytes = intra_c * size_bytes if intra_on else 0.0
        transfer = phases * (wan_bytes / wan_share + net_bytes / net_share + intra_bytes / up_bw)
        if multi:
            fill = size_bytes / fill_bytes
            net = hw + extra * simple_count(low, span, fill)
        else:
            net = 0.0
        latency = base + phases * (wan_part + net_steps * net + intra_part)
        if folds:
            transfer += fold * size_bytes / slowest
            latency += 2 * (net if multi else intra_hop)
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _pat_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.recursive.pat_timing`, size by size."""
    if collective not in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    if protocol is not Protocol.SIMPLE or topo.m != 1 or topo.domains < 2 or topo.wan is not None:
        return None
    n = topo.ranks
    nccl = params.nccl_tuner
    bw = topo.domain_bw_Bps("uniform") * nccl.pat_factor
    base = base_latency(Algorithm.PAT, protocol, params)
    levels = math.log2(topo.domains)
    divisor = nccl.pat_net_divisor
    per_rank = nccl.pat_per_rank_s * n
    factor = (n - 1) / n
    hw, extra, low, span, fill_bytes = _simple_net_hop(topo, Algorithm.PAT, params)

    def kernel(size_bytes: float) -> float:
        fill = size_bytes / fill_bytes
        net = hw + extra * simple_count(low, span, fill)
        latency = base + levels * net / divisor + per_rank
        transfer = factor * size_bytes / bw
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


def _hierarchical_kernel(
    collective: Collective,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
    fallback: Kernel,
) -> Kernel | None:
    """:func:`~ibcalc.engine.algorithms.hierarchical.hierarchical_timing`, size by size."""
    if collective is not Collective.ALL_REDUCE or protocol is not Protocol.SIMPLE:
        return None
    m, big_n = topo.m, topo.domains
    if m < 2 or big_n < 2:
        return None
    intra_c = 2 * (m - 1) / m
    up_bw = topo.up_bw_Bps()
    rail_bw = min(topo.domain_bw_Bps("neighbour"), topo.wan_bw_Bps(params))
    net_c = 2 * (big_n - 1) / big_n
    s_wan = ring_wan_crossings(big_n, topo.sites, 2 * (big_n - 1))
    head = 3 * base_latency(Algorithm.RING, protocol, params) + 2 * (m - 1) * intra_hop_latency(
        topo, Algorithm.RING, protocol, params
    )
    net_hops = 2 * (big_n - 1) - s_wan
    wan_part = s_wan * wan_hop_latency(topo, Algorithm.RING, protocol, params)
    hw, extra, low, span, fill_bytes = _simple_net_hop(topo, Algorithm.RING, params)

    def kernel(size_bytes: float) -> float:
        fill = size_bytes / fill_bytes
        net = hw + extra * simple_count(low, span, fill)
        latency = head + net_hops * net + wan_part
        transfer = intra_c * size_bytes / up_bw + net_c * size_bytes / rail_bw
        total = latency + transfer
        if total - total != 0.0:  # a non-finite term: the cost function raises
            return fallback(size_bytes)
        return (0.0 if latency < 0.0 else latency) + (0.0 if transfer < 0.0 else transfer) + 0.0

    return kernel


_MAKERS: dict[
    TimingFunction,
    Callable[[Collective, Topology, Protocol, CostParams, Kernel], Kernel | None],
] = {
    ring_timing: _ring_kernel,
    tree_timing: _tree_kernel,
    nvls_tree_timing: _nvls_tree_kernel,
    sendrecv_timing: _sendrecv_kernel,
    pairwise_timing: _pairwise_kernel,
    pxn_timing: _pxn_kernel,
    nvls_timing: _nvls_kernel,
    collnet_direct_timing: _collnet_direct_kernel,
    collnet_chain_timing: _collnet_chain_kernel,
    rhd_timing: _rhd_kernel,
    pat_timing: _pat_kernel,
    hierarchical_timing: _hierarchical_kernel,
}

_CHAIN_MAKERS: dict[
    TimingFunction,
    Callable[[Collective, Topology, Protocol, CostParams, ChainKernel], ChainKernel | None],
] = {
    ring_timing: _ring_chain_kernel,
}
