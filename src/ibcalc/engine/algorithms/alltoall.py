"""All-to-all (pairwise and rail-aggregated PXN) and send/recv.

* All-to-all (Thakur et al. 2005 pairwise exchange; docs/model.md#all-to-all-pairwise-and-pxn): each
  rank sends S/n to every rank, S being its whole send buffer. (m-1)/n x S stays in the domain,
  (n-m)/n x S leaves it through the GPU's share of the NICs, ``nics x B_nic / m``. With
  oversubscription k at the leaf and a fraction f of that traffic crossing leaves, the network term
  grows by ``max(1, k f)`` (docs/model.md#oversubscription-and-cross-leaf-traffic). All sends
  run at once: ``t = max((m-1)/n S / B_up, max(1, k f) (n-m)/n S / (nics B_nic / m)) + latency``.
  Pairwise posts one message per peer: latency ``base + hop + (n-1) x per-message cost``.
  PXN (NCCL 2.12 blog, "Doubling all2all performance") first moves off-node data over NVLink to
  the GPU on the destination's rail, which aggregates it: the NVLink term carries the network
  bytes too, and latency counts ``(N-1) + (m-1)`` messages.
* Send/recv (nccl-tests sendrecv: a ring shift, each rank sends S to rank+1): pairs inside a domain
  use the point-to-point scale-up bandwidth, the pair that crosses domains one NIC:
  ``t = max(S / B_p2p, S / B_nic) + base + hop``.

With a WAN tier of s sites, (n - n/s)/n x S of each rank's all-to-all buffer crosses the WAN at
the GPU's share of its site's WAN links, and the send/recv pair between sites uses one WAN link.

The point-to-point efficiency is calibrated (``calibrated.p2p_efficiency``: A100 sendrecv 195 GB/s
against 240 GB/s ring, li-plus/playground); the per-message cost is an assumption
(``calibrated.per_message_latency``, fitted to small all-to-all rows).
"""

from __future__ import annotations

from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    intra_hop_latency,
    make_cost,
    net_hop_latency,
    protocol_factor,
    wan_hop_latency,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol

__all__ = ["pairwise_timing", "pxn_timing", "sendrecv_timing"]


def _alltoall_terms(
    size_bytes: float, topo: Topology, params: CostParams, *, aggregated: bool
) -> tuple[float, float, float]:
    m, n = topo.m, topo.ranks
    intra_bytes = (m - 1) / n * size_bytes
    net_bytes = (n - m) / n * size_bytes
    intra_t = 0.0
    if m > 1:
        extra = net_bytes * (m - 1) / m if aggregated else 0.0
        intra_t = (intra_bytes + extra) / topo.up_bw_Bps()
    net_t = 0.0
    if topo.domains > 1:
        assert topo.out is not None
        # domain_bw_Bps already divides by the leaf contention max(1, k f)
        net_t = net_bytes / (topo.domain_bw_Bps() / m)
    wan_t = 0.0
    if topo.wan is not None:
        per_site = n // topo.sites
        wan_t = (n - per_site) / n * size_bytes / (topo.wan_bw_Bps(params) / per_site)
    return intra_t, net_t, wan_t


def _alltoall(
    algorithm: Algorithm,
    size_bytes: float,
    topo: Topology,
    *,
    protocol: Protocol,
    messages: int,
    params: CostParams,
) -> Timing:
    aggregated = algorithm is Algorithm.PXN
    intra_t, net_t, wan_t = _alltoall_terms(size_bytes, topo, params, aggregated=aggregated)
    hop = (
        net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
        if topo.domains > 1
        else intra_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    hop = max(hop, wan_hop_latency(topo, Algorithm.RING, protocol, params))
    latency = (
        base_latency(Algorithm.RING, protocol, params)
        + hop
        + messages * params.calibrated.per_message_s
    )
    transfer = max(intra_t, net_t, wan_t)
    if protocol is not Protocol.SIMPLE:
        transfer = transfer / protocol_factor(protocol, params)

    def explain() -> Cost:
        where = "network (NIC share per GPU)" if net_t >= intra_t else "scale-up"
        if wan_t > max(net_t, intra_t):
            where = "WAN between sites (share per GPU)"
        return make_cost(
            algorithm,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            formula=(
                "max((m-1)/n S/B_up, max(1,kf) (n-m)/n S/(nics B_nic/m)) + base + hop + msgs x c"
            ),
        )

    return Timing(algorithm, protocol, latency, transfer, explain)


def pairwise_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """All-to-all as concurrent pairwise sends (one message per peer).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective is not Collective.ALL_TO_ALL or topo.ranks < 2 or protocol is Protocol.LL128:
        return None
    return _alltoall(
        Algorithm.PAIRWISE,
        size_bytes,
        topo,
        protocol=protocol,
        messages=topo.ranks - 1,
        params=params,
    )


def pxn_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """All-to-all with PXN rail aggregation (needs several GPUs per node and several nodes).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective is not Collective.ALL_TO_ALL or topo.m < 2 or topo.domains < 2:
        return None
    if protocol is Protocol.LL128:
        return None
    messages = (topo.domains - 1) + (topo.m - 1)
    return _alltoall(
        Algorithm.PXN, size_bytes, topo, protocol=protocol, messages=messages, params=params
    )


def sendrecv_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """nccl-tests sendrecv: every rank sends S to the next and receives S from the previous.

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective is not Collective.SEND_RECV or topo.ranks < 2 or protocol is Protocol.LL128:
        return None
    intra_t = (
        size_bytes / (topo.up_bw_Bps() * params.calibrated.p2p_efficiency) if topo.m > 1 else 0.0
    )
    net_t = 0.0
    if topo.domains > 1:
        assert topo.out is not None
        net_t = size_bytes * topo.leaf_contention / topo.out.nic_bw_Bps
    if topo.wan is not None:
        net_t = max(net_t, size_bytes / min(topo.wan.nic_bw_Bps, topo.wan_bw_Bps(params)))
    transfer = max(intra_t, net_t)
    if protocol is not Protocol.SIMPLE:
        transfer = transfer / protocol_factor(protocol, params)
    hop = (
        net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
        if topo.domains > 1
        else intra_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    hop = max(hop, wan_hop_latency(topo, Algorithm.RING, protocol, params))
    latency = base_latency(Algorithm.RING, protocol, params) + hop

    def explain() -> Cost:
        return make_cost(
            Algorithm.P2P,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck="one NIC between nodes" if net_t >= intra_t else "scale-up point-to-point",
            formula="max(S/B_p2p, S/B_nic) + base + hop",
        )

    return Timing(Algorithm.P2P, protocol, latency, transfer, explain)
