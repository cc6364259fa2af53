"""Recursive halving-doubling (Rabenseifner) and NCCL's PAT.

* Recursive halving-doubling (Thakur, Rabenseifner, Gropp, IJHPCA 19(1), 2005;
  docs/model.md#recursive-halving-doubling): all-reduce = reduce-scatter by recursive halving +
  all-gather by recursive doubling; all-gather or reduce-scatter alone is one of the two phases. For
  p = 2^k ranks step j exchanges S/2^(j+1) with the partner at distance p/2^(j+1). Taking the far
  (cross-domain) partners first puts ``(N-1)/N x S`` of each phase on the network, at the GPU's NIC
  share ``nics x B_nic / m``, and ``(m-1)/(m N) x S`` on the scale-up link. With s sites the first
  steps cross the WAN: ``(s-1)/s x S`` at the GPU's share of its site's WAN. Latency: ``lg p`` steps
  per phase, each a WAN, network or intra-domain hop. A non-power-of-two count folds the surplus
  ranks in with one extra exchange of S before and after (docs/model.md#recursive-halving-doubling).
* PAT (Jeaugey, arXiv:2506.20252; NCCL 2.30.7; docs/model.md#pat): all-gather and
  reduce-scatter with one GPU per node only, Simple; bandwidth x 0.75;
  latency ``8 us + log2(N) x net / 3.5 + 2.8 us x n``.
"""

from __future__ import annotations

import math

from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    intra_hop_latency,
    make_cost,
    net_hop_latency,
    wan_hop_latency,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol

__all__ = ["pat_timing", "rhd_timing"]


def rhd_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of recursive halving-doubling (all-reduce, all-gather, reduce-scatter).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if protocol is not Protocol.SIMPLE or topo.ranks < 2:
        return None
    if collective not in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    m, big_n, n = topo.m, topo.domains, topo.ranks
    phases = 2 if collective is Collective.ALL_REDUCE else 1
    pow2 = 1 << int(math.log2(n))
    net_share = topo.domain_bw_Bps() / m
    up_bw = topo.up_bw_Bps()
    sites = topo.sites
    local_n = big_n // sites  # domains per site
    wan_bytes = (sites - 1) / sites * size_bytes
    net_bytes = (local_n - 1) / local_n * size_bytes / sites if local_n > 1 else 0.0
    intra_bytes = (m - 1) / (m * big_n) * size_bytes if m > 1 else 0.0
    wan_share = min(topo.wan_bw_Bps(params) / (n // sites), net_share)
    transfer = phases * (wan_bytes / wan_share + net_bytes / net_share + intra_bytes / up_bw)
    wan_steps = math.ceil(math.log2(sites)) if sites > 1 else 0
    net_steps = math.ceil(math.log2(local_n)) if local_n > 1 else 0
    intra_steps = math.ceil(math.log2(m)) if m > 1 else 0
    latency = base_latency(Algorithm.RING, protocol, params) + phases * (
        wan_steps * wan_hop_latency(topo, Algorithm.RING, protocol, params)
        + net_steps
        * (
            net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
            if big_n > 1
            else 0.0
        )
        + intra_steps * intra_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    if pow2 != n:
        slowest = min(net_share, up_bw)
        transfer += 2 * size_bytes / slowest
        hop = (
            net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
            if big_n > 1
            else (intra_hop_latency(topo, Algorithm.RING, protocol, params))
        )
        latency += 2 * hop

    def explain() -> Cost:
        where = (
            "network (NIC share per GPU)"
            if net_bytes / net_share >= intra_bytes / up_bw
            else ("scale-up")
        )
        if wan_bytes / wan_share > max(net_bytes / net_share, intra_bytes / up_bw):
            where = "WAN between sites (share per GPU)"
        return make_cost(
            Algorithm.RHD,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            formula=(
                "phases x ((N-1)/N S / (nics B_nic/m) + (m-1)/(mN) S / B_up) + lg p hops per phase"
            ),
            # across domains the far steps put (N-1)/N S on the network and only (m-1)/(mN) S
            # on the scale-up link, so busbw's (n-1)/n factor is a node-level equivalent for
            # every collective (a property test found RS busbw above min(B_up, nics B_nic))
            equivalent=big_n > 1,
        )

    return Timing(Algorithm.RHD, protocol, latency, transfer, explain)


def pat_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of PAT all-gather / reduce-scatter (one GPU per node, Simple).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective not in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    if protocol is not Protocol.SIMPLE or topo.m != 1 or topo.domains < 2 or topo.wan is not None:
        return None
    n = topo.ranks
    bw = topo.domain_bw_Bps() * params.nccl_tuner.pat_factor
    latency = (
        base_latency(Algorithm.PAT, protocol, params)
        + math.log2(topo.domains)
        * net_hop_latency(topo, Algorithm.PAT, protocol, size_bytes, params)
        / params.nccl_tuner.pat_net_divisor
        + params.nccl_tuner.pat_per_rank_s * n
    )
    transfer = (n - 1) / n * size_bytes / bw

    def explain() -> Cost:
        return make_cost(
            Algorithm.PAT,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck="network (one GPU per node)",
            formula="(n-1)/n S / (0.75 B_nic) + 8 us + log2(N) net/3.5 + 2.8 us x n",
        )

    return Timing(Algorithm.PAT, protocol, latency, transfer, explain)
