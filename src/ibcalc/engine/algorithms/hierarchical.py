"""Hierarchical (2-level) all-reduce: reduce-scatter inside, all-reduce per rail, all-gather inside.

Source: docs/model.md#hierarchical-all-reduce (classic 2D all-reduce, e.g. Thakur et al. 2005 and
the "hierarchical all-reduce" of Horovod/BlueConnect). With N domains of m GPUs, per-GPU scale-up
bandwidth B_up and one NIC share per GPU (rail-aligned), phases run one after the other:

1. reduce-scatter inside the domain: ``(m-1)/m x S / B_up`` + (m-1) intra hops;
2. all-reduce of each GPU's S/m shard across domains on its rail, as a ring:
   ``2(N-1)/N x S / (nics x B_nic)`` + 2(N-1) network hops;
3. all-gather inside: ``(m-1)/m x S / B_up`` + (m-1) intra hops.

Simple protocol only (bulk phases); not pipelined, which is what separates it from NCCL's flat
ring (same bandwidth terms, ``2(m-1) + 2(N-1)`` latency steps instead of ``2(n-1)``). Each node
moves 2(N-1)/N x S over its NICs, so nccl-tests' busbw (x 2(n-1)/n) is a node-level equivalent
that can exceed the NICs' rate on few nodes (docs/model.md#equivalent-busbw).
"""

from __future__ import annotations

from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    base_term,
    gbps,
    hop_terms,
    intra_hop_latency,
    latency_words,
    make_cost,
    net_hop_latency,
    network_words,
    ring_wan_crossings,
    wan_hop_latency,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol, Term
from ibcalc.units import format_size

__all__ = ["hierarchical_timing"]


def hierarchical_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of the 2-level all-reduce (needs m > 1 and N > 1).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective is not Collective.ALL_REDUCE or protocol is not Protocol.SIMPLE:
        return None
    m, big_n = topo.m, topo.domains
    if m < 2 or big_n < 2:
        return None
    intra_t = 2 * (m - 1) / m * size_bytes / topo.up_bw_Bps()
    # each rail's ring crosses the WAN once per site; the m rails share a site's WAN links
    rail_bw = min(topo.domain_bw_Bps("neighbour"), topo.wan_bw_Bps(params))
    net_t = 2 * (big_n - 1) / big_n * size_bytes / rail_bw
    s_wan = ring_wan_crossings(big_n, topo.sites, 2 * (big_n - 1))
    latency = (
        3 * base_latency(Algorithm.RING, protocol, params)
        + 2 * (m - 1) * intra_hop_latency(topo, Algorithm.RING, protocol, params)
        + (2 * (big_n - 1) - s_wan)
        * net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
        + s_wan * wan_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    transfer = intra_t + net_t

    def explain() -> Cost:
        where = (
            f"network (all-reduce per rail{network_words(topo, 'neighbour', inside=True)})"
            if net_t >= intra_t
            else "scale-up (RS + AG inside)"
        )
        if net_t >= intra_t and topo.wan_bw_Bps(params) < topo.domain_bw_Bps("neighbour"):
            where = "WAN between sites (all-reduce per rail)"
        terms = [base_term(Algorithm.RING, protocol, params, count=3)]
        terms[0] = terms[0].model_copy(
            update={
                "detail": terms[0].detail + ", one per phase (reduce-scatter, all-reduce, "
                "all-gather)"
            }
        )
        terms += hop_terms(
            [
                (f"steps inside {topo.node}s", 2 * (m - 1), "intra"),
                ("network steps", 2 * (big_n - 1) - s_wan, "net"),
                ("WAN steps", s_wan, "wan"),
            ],
            topo,
            algorithm=Algorithm.RING,
            protocol=protocol,
            size_bytes=size_bytes,
            params=params,
        )
        out = f"{topo.out.nics_per_domain} x {topo.out.link_id}" if topo.out is not None else ""
        if topo.wan is not None and topo.wan_bw_Bps(params) < topo.domain_bw_Bps("neighbour"):
            out = f"the site's {topo.wan.link_id} WAN links, slower than {out}"
        terms += [
            Term(
                name=f"transfer inside {topo.node}s",
                seconds=intra_t,
                detail=f"reduce-scatter then all-gather inside: 2(m-1)/m x S = "
                f"{format_size(2 * (m - 1) / m * size_bytes)} per GPU at "
                f"{gbps(topo.up_bw_Bps())}",
            ),
            Term(
                name="network transfer",
                seconds=net_t,
                detail=f"all-reduce of the S/m shards across {topo.node}s, one ring per rail: "
                f"the {topo.node} "
                f"sends 2(N-1)/N x S = {format_size(2 * (big_n - 1) / big_n * size_bytes)} at "
                f"{gbps(rail_bw)} ({out})",
            ),
        ]
        return make_cost(
            Algorithm.HIERARCHICAL,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            terms=terms,
            latency_words=latency_words(topo, protocol, size_bytes, params),
            formula=(
                "2(m-1)/m S/B_up + 2(N-1)/N S/(nics B_nic) + 3 base + 2(m-1) intra + 2(N-1) net"
            ),
            # each node sends 2(N-1)/N S, not 2(n-1)/n S per rank: busbw is a node-level
            # equivalent
            equivalent=True,
        )

    return Timing(Algorithm.HIERARCHICAL, protocol, latency, transfer, explain)
