"""Ring algorithms: all-reduce, all-gather, reduce-scatter, and the pipelined broadcast/reduce.

Formulas (n = N x m ranks, S in nccl-tests units, docs/model.md#ring,
docs/model.md#the-nccl-tuner-model):

* bandwidth: each rank moves F x S bytes, F = 2(n-1)/n (all-reduce) or (n-1)/n (all-gather,
  reduce-scatter), through the slowest hop of the ring. Inside a domain that is the per-GPU
  scale-up bandwidth; across domains NCCL runs one channel per NIC, so the channels together
  get the domain's aggregate NIC bandwidth (an 8-GPU node with 8 x NDR, 46-48 GB/s per NIC
  measured through NCCL (nccl-tests#290), reaches about 8 x 47 GB/s of busbw, not 47).
  ``B_ring = min(B_up, nics x B_nic)``, then the protocol's factor.
* latency (NCCL 2.30.7): ``base + (nsteps - s_net) x max(intra, overhead) + s_net x net``, with
  nsteps = 2(n-1) or n-1 and s_net = 2(N-1) or N-1; x 1.4 for multi-node Simple all-reduce
  (the "ring plateau").
* with a WAN tier of s sites the ring crosses it s times: B_ring is also capped by one site's
  WAN bandwidth, and 2s (all-reduce) or s of the network steps cost a WAN hop
  (``base.ring_wan_crossings``: a chunk's path meets each of the s WAN links once a pass).
* broadcast/reduce: a pipelined chain through n - 1 hops moves S once per rank:
  ``t = S / B + base + (n - N) x intra + (N - 1) x net`` (Thakur et al. 2005; NCCL ring).
"""

from __future__ import annotations

from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    base_term,
    bytes_factor,
    gbps,
    intra_hop_detail,
    intra_hop_latency,
    latency_words,
    ll_cap_Bps,
    ll_network_bound,
    ll_network_text,
    ll_network_transfer,
    make_cost,
    net_hop_detail,
    net_hop_latency,
    net_overhead,
    protocol_bound,
    protocol_factor,
    proxy_ops_s,
    proxy_ops_term,
    ring_plateau,
    ring_plateau_factor,
    ring_protocol_bw,
    ring_protocol_words,
    ring_wan_crossings,
    us,
    wan_hop_latency,
    wan_rate_clause,
    worked,
)
from ibcalc.engine.measure import chain_overlaps, stage_flight
from ibcalc.engine.params import CostParams
from ibcalc.engine.pipeline import (
    active_channels,
    channel_unit,
    channels,
    trimmed_bw,
    trimmed_text,
)
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol, Term
from ibcalc.units import fixed, format_number, format_size, format_slowdown

__all__ = ["ring_bandwidth", "ring_timing"]

_RING_COLLECTIVES = (
    Collective.ALL_REDUCE,
    Collective.ALL_GATHER,
    Collective.REDUCE_SCATTER,
    Collective.BROADCAST,
    Collective.REDUCE,
)


def _ring_bw(
    topo: Topology, params: CostParams, duplex: bool, protocol: Protocol = Protocol.SIMPLE
) -> tuple[float, str]:
    """Per-rank ring bandwidth and which tier limits it: ``wan``, ``net`` or ``up``."""
    up = topo.up_bw_Bps(duplex=duplex) if topo.m > 1 else float("inf")
    net = topo.domain_bw_Bps("neighbour")
    wan = topo.wan_bw_Bps(params, protocol)
    if wan < min(net, up):
        return wan, "wan"
    if net < up:
        return net, "net"
    return up, "up"


def _chain_stages(
    topo: Topology, params: CostParams, hops: tuple[float, float, float], transfer: float
) -> list[tuple[float, str, float]]:
    """An LL chain's stages as its back-to-back period holds them, (seconds, kind, hop): the
    GPU's, its hop inside a node (none with one GPU a node) and the data; the network's and the
    WAN's, 2 x the hop / ``pipeline.steps`` (:func:`stage_flight`), the data crossing inside that
    round trip. ``hops`` are the hop inside a node, the network's and the WAN's."""
    intra, net, wan = hops
    flight = stage_flight(params)
    first = intra if topo.m > 1 else 0.0
    return [
        (first + transfer, "GPU", first),
        (net * flight, "network", net),
        (wan * flight, "WAN", wan),
    ]


def _period_words(
    topo: Topology,
    params: CostParams,
    base: float,
    hops: tuple[float, float, float],
    *,
    transfer: float,
    ops: float,
) -> str:
    """What an LL chain's period is made of: the base latency, its slowest stage and the proxy
    operations (``ops``). ``hops`` are the hop inside a node, the network's and the WAN's, each
    as one operation charges it; the GPU's stage is its hop and the data (``transfer``), a
    network or WAN stage its buffer slots' round trip, which the data overlaps. Its sum is the
    period (ring.py)."""
    steps = params.pipeline.steps
    stages = _chain_stages(topo, params, hops, transfer)
    stage, kind, hop = max(stages, key=lambda st: st[0])
    first = stages[0][2]
    if kind == "GPU":
        data = f"the data {worked(transfer)}"
        sets = f"a hop inside a {topo.node} {us(hop)} and {data}" if first > 0 else data
        # the hop is the GPU's own work; the data crosses every stage at the chain's slowest
        # rate; a network or WAN stage, next longest, is named with its figure
        why = "the hop is the GPU's own work and holds its stage whole, with the data"
        if first <= 0:
            why = "the data crosses every stage"
        if any(each > 0 for _, _, each in stages[1:]):
            held, name, _ = max(stages[1:], key=lambda st: st[0])
            why = (
                f"{why} at the chain's slowest rate; the {name} stage, 2 x its hop / {steps} "
                f"(buffer slots in flight), holds {worked(held)}, less"
            )
    else:
        # the period had been 'one stage' alone: 258 us beside a 1 ms WAN hop, unexplained.
        # The hop to five figures, so that 2 x hop / 8 multiplies out (1 ms + 2.7 us)
        exact = f"{hop * 1e3:.5g} ms" if hop >= 1e-3 else f"{hop * 1e6:.4g} us"
        sets = f"the {kind} stage {worked(stage)}"
        why = (
            f"the {kind} stage is 2 x its hop / {steps} = 2 x {exact} / {steps}: the proxy keeps "
            f"pipeline.steps = {steps} buffer slots of the connection in flight, each free again "
            f"a round trip later; the data, {worked(transfer)}, crosses inside that time"
        )
    # one node has no proxy operations: "+ proxy operations 0 us" named a term that is not there
    proxy = f" + proxy operations {worked(ops)}" if ops > 0 else ""
    return f"base {us(base)} + {sets}{proxy}; {why}"


def _ring_where(limit: str, bw: float, topo: Topology, *, duplex: bool = True) -> str:
    """The words for the tier :func:`_ring_bw` found limiting (``duplex``: as it was asked)."""
    if limit == "wan":
        assert topo.wan is not None
        return (
            f"WAN: {topo.wan.nics_per_domain} x {topo.wan.link_id} per site "
            f"({fixed(bw / 1e9, 2)} GB/s usable)"
        )
    if limit == "net":
        assert topo.out is not None
        tapered = (
            f", tapered uplinks x{format_slowdown(topo.contention('neighbour'))} slower"
            if topo.contention("neighbour") > 1
            else ""
        )
        capped = f", capped by {topo.out.nic_cap}" if topo.out.nic_cap is not None else ""
        return (
            f"network: {topo.out.nics_per_domain} x {topo.out.link_id} per {topo.node} "
            f"({fixed(topo.out.nic_bw_Bps / 1e9, 1)} GB/s achievable each{capped}{tapered})"
        )
    assert topo.up is not None
    both_ways = ""
    if topo.up.duplex_efficiency < 1:
        # MI300X: 313.6 GB/s on one node, 358.4 across nodes (docs/model.md, rings on a mesh)
        both_ways = (
            f": {format_number(topo.up.bw_Bps / 1e9)} GB/s one way x "
            f"{topo.up.duplex_efficiency:g}, "
            "as every link carries both ways at once"
            if duplex
            else ", each link one way (a chain through the node: no duplex loss, so a ring of one "
            "node alone, whose links carry both ways, is the slower per byte)"
        )
    return (
        f"scale-up: {topo.up.link_id} ({format_number(bw / 1e9)} GB/s achievable per GPU"
        f"{both_ways})"
    )


def ring_bandwidth(topo: Topology, params: CostParams, *, duplex: bool = True) -> tuple[float, str]:
    """Per-rank ring bandwidth (bytes/s per direction) and which tier limits it."""
    bw, limit = _ring_bw(topo, params, duplex)
    return bw, _ring_where(limit, bw, topo, duplex=duplex)


def ring_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of NCCL's ring for ``collective``, or None when it does not apply.

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective not in _RING_COLLECTIVES or topo.ranks < 2:
        return None
    n, big_n = topo.ranks, topo.domains
    one_way = collective in (Collective.BROADCAST, Collective.REDUCE)
    # Across nodes, each channel's path inside a mesh node is a one-way chain from the GPU its
    # data arrives on to the GPU whose NIC sends it on: mesh links carry ring traffic one way,
    # without the both-ways loss of a single-node ring (duplex_efficiency). On a switch every
    # GPU port carries both directions either way.
    mesh_chain = topo.up is not None and topo.up.mesh and big_n > 1
    raw_bw, limit = _ring_bw(topo, params, not (one_way or mesh_chain), protocol)
    bw = ring_protocol_bw(raw_bw, protocol, topo, params)
    full = channels(topo, params)
    unit = channel_unit(topo, protocol, params, ring=True)
    active = active_channels(size_bytes, full, unit.bytes)
    bw = trimmed_bw(bw, active, full)
    intra = intra_hop_latency(topo, Algorithm.RING, protocol, params)
    # a broadcast or reduce takes the Ring row whatever the GPUs per node, as NCCL's tuner does
    # (base + lat); the other ring collectives its Tree row with one GPU per node (net_row)
    net = (
        net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params, own_row=one_way)
        if big_n > 1
        else 0.0
    )
    wan = wan_hop_latency(topo, Algorithm.RING, protocol, params, own_row=one_way)
    sites = topo.sites
    base = base_latency(Algorithm.RING, protocol, params)
    period = None
    all_reduce = collective is Collective.ALL_REDUCE
    nsteps = s_net = s_wan = 0
    overhead = plateau = plateau_on = 0.0
    if one_way and not params.pipeline.model_fill:
        # NCCL's tuner prices a ring broadcast/reduce at its base latency plus one hop when all
        # channels take the same path (sameChannels, NCCL 2.30.7 ncclTopoTuneModel): it sees a
        # pipeline, not the chain. The physical view below prices the chain and its overlap.
        hop = net if big_n > 1 else intra
        latency = base + max(hop, wan)
        transfer = max(size_bytes / bw, ll_network_transfer(topo, size_bytes, protocol, params))
    elif one_way:
        latency = base + (n - big_n) * intra + (big_n - sites) * net + (sites - 1) * wan
        transfer = max(size_bytes / bw, ll_network_transfer(topo, size_bytes, protocol, params))
        # a chain in LL: the next operation enters as soon as the first stage is free, so
        # back-to-back operations complete once per slowest stage; in LL128 and Simple the
        # published broadcasts run at one operation's time (engine/measure.py)
        if chain_overlaps(protocol):
            # a network or WAN stage passes an operation per round trip over its buffer slots
            # in flight (stage_flight), and the data crosses inside that round trip (the WAN's
            # window-limited rate is the same slots: summed, 32 KiB across a 1 ms WAN had a
            # 508 us period for about 258 us); a hop inside a node is the GPU's own work, its
            # data included
            stages = _chain_stages(topo, params, (intra, net, wan), transfer)
            period = base + max(seconds for seconds, _, _ in stages)
    else:
        nsteps = 2 * (n - 1) if all_reduce else n - 1
        s_net = (2 * (big_n - 1) if all_reduce else big_n - 1) if big_n > 1 else 0
        overhead = net_overhead(topo, protocol, params)
        s_wan = ring_wan_crossings(n, sites, nsteps)
        s_net = max(s_net, s_wan)
        latency = (
            base + (nsteps - s_net) * max(intra, overhead) + (s_net - s_wan) * net + s_wan * wan
        )
        # NCCL's "ring plateau": x1.4 once each rank's per-channel share reaches 64 bytes
        # (NCCL 2.30.7 ncclTopoGetAlgoTime)
        per_channel = size_bytes / (full * n)
        if all_reduce and big_n > 1 and protocol is Protocol.SIMPLE and per_channel >= 64:
            # on the latency NCCL's tuner sees: not the WAN's propagation, a fibre delay no
            # tuner fudge scales (2 ms across 100 km had been raised by 0.8 ms: review DG)
            propagation = s_wan * topo.wan.transport_latency_s if topo.wan is not None else 0.0
            plateau_on = latency - propagation
            plateau = plateau_on * (ring_plateau_factor(topo, params) - 1)
            latency += plateau
        transfer = bytes_factor(collective, n) * size_bytes / bw
        transfer = max(transfer, ll_network_transfer(topo, size_bytes, protocol, params))
    # the proxy starts one network operation per channel (0 on one node and in NCCL's view)
    ops = proxy_ops_s(topo, active, params)
    latency += ops
    if period is not None:
        period += ops

    def explain() -> Cost:
        if one_way and not params.pipeline.model_fill:
            formula = "S/B_ring + base + one hop (NCCL's tuner)"
            hops = []
            moved = size_bytes
            factor_text = "S"
        elif one_way:
            formula = "S/B_ring + base + (n-N) x intra + " + (
                "(N-s) x net + (s-1) x wan" if sites > 1 else "(N-1) x net"
            )
            hops = [
                (f"hops inside {topo.node}s", n - big_n, intra, "intra"),
                ("network hops", big_n - sites, net, "net"),
                ("WAN hops", sites - 1, wan, "wan"),
            ]
            moved = size_bytes
            factor_text = "S (a pipelined chain moves the buffer once)"
        else:
            formula = (
                f"{'2(n-1)/n' if all_reduce else '(n-1)/n'} x S / B_ring + base"
                " + (nsteps - s_net) x intra + "
                + ("(s_net - s_wan) x net + s_wan x wan" if sites > 1 else "s_net x net")
            )
            hops = [
                (f"steps inside {topo.node}s", nsteps - s_net, max(intra, overhead), "intra"),
                ("network steps", s_net - s_wan, net, "net"),
                ("WAN steps", s_wan, wan, "wan"),
            ]
            moved = bytes_factor(collective, n) * size_bytes
            factor_text = f"{'2(n-1)/n' if all_reduce else '(n-1)/n'} x S (n = {n})"
        where = _ring_where(limit, raw_bw, topo, duplex=not (one_way or mesh_chain))
        terms = [base_term(Algorithm.RING, protocol, params)]
        for name, count, each, kind in hops:
            if count <= 0 or each <= 0:
                continue
            if kind == "intra":
                how = intra_hop_detail(topo, Algorithm.RING, protocol, params)
                if overhead > intra:
                    host = " on an AMD host" if topo.host_cpu == "amd" else ""
                    how = (
                        f"NCCL's per-step overhead on several {topo.node}s{host} {us(overhead)}, "
                        "more "
                        f"than the hop ({how})"
                    )
            elif kind == "net":
                how = net_hop_detail(
                    topo, Algorithm.RING, protocol, size_bytes, params, own_row=one_way
                )
            else:
                how = "NET hop + the WAN link's one-way latency"
            terms.append(
                Term(name=name, seconds=count * each, detail=f"{count} x {us(each)}: {how}")
            )
        if plateau:
            factor, constant = ring_plateau(topo, params)
            # before the proxy operations, which it does not scale (a review: listed after them,
            # it had read as if it covered them)
            terms.append(
                Term(
                    name="ring plateau",
                    seconds=plateau,
                    # the factor less one times the latency it scales, each printed, so that
                    # the term multiplies out ('x1.4 on the latency above' had read as 1.4 x)
                    detail=f"({factor:g} - 1) x {worked(plateau_on)}, the latency above"
                    + (" less the WAN's one-way latencies" if s_wan and topo.wan else "")
                    + f": NCCL's ring plateau, x{factor:g} on several {topo.node}s, Simple, "
                    f"once a channel's share reaches 64 B ({constant})",
                )
            )
        if ops:
            terms.append(proxy_ops_term(ops, active, params))
        # the formula names every term the sum holds: it had left out the plateau and the proxy
        # operations (2 x DGX H100, 64 MiB broadcast: 16 channels x 0.6 us of the 261 us)
        formula += (" + ring plateau" if plateau else "") + (
            " + channels x proxy_op" if ops else ""
        )
        terms.append(
            Term(
                name="transfer",
                seconds=transfer,
                detail=f"{factor_text} = {format_size(moved)} per rank at {gbps(bw)} "
                f"({ring_protocol_words(raw_bw, protocol, topo, params) or protocol.value}) "
                f"through the bottleneck, {where}"
                + (wan_rate_clause(topo, params, protocol) if limit == "wan" else "")
                + trimmed_text(active, full, unit)
                + ll_network_text(topo, size_bytes, protocol, params, moved / bw),
            )
        )
        return make_cost(
            Algorithm.RING,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=ll_network_bound(topo, size_bytes, protocol, params, moved / bw)
            or protocol_bound(
                where,
                protocol,
                bw,
                raw_bw,
                active=active,
                full=full,
                capped=protocol is Protocol.LL
                and ll_cap_Bps(topo, params) < raw_bw * protocol_factor(protocol, params),
            ),
            formula=formula,
            terms=terms,
            latency_words=latency_words(topo, protocol, size_bytes, params),
            period_s=period,
            period_words=""
            if period is None
            else _period_words(topo, params, base, (intra, net, wan), transfer=transfer, ops=ops),
        )

    return Timing(Algorithm.RING, protocol, latency, transfer, explain, period_s=period)
