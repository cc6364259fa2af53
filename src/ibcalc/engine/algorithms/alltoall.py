"""All-to-all (pairwise and rail-aggregated PXN) and send/recv.

* All-to-all (Thakur et al. 2005 pairwise exchange; docs/model.md#all-to-all-pairwise-and-pxn): each
  rank sends S/n to every rank, S being its whole send buffer. (m-1)/n x S stays in the domain,
  (n-m)/n x S leaves it through the GPU's share of the NICs, ``nics x B_nic / m``. With
  oversubscription k at the leaf and a fraction f of that traffic crossing leaves, the network term
  grows by ``max(1, k f)`` (docs/model.md#oversubscription-and-cross-leaf-traffic). All sends
  run at once: ``t = max((m-1)/n S / B_up, max(1, k f) (n-m)/n S / (nics B_nic / m)) + latency``.
  Every rank posts one message per peer: latency ``base + hop + (n-1) x per-message cost``, the
  cost at Hopper's clock scaled to the GPU's (docs/model.md#gpu-clock). PXN (NCCL 2.12 blog,
  "Doubling all2all performance") first moves off-node data over NVLink to the GPU on the
  destination's rail, which aggregates it on the network: the NVLink term carries the network
  bytes too, and the kernel still posts a send and a receive per peer.
* Send/recv (nccl-tests sendrecv: a ring shift, each rank sends S to rank+1): pairs inside a domain
  use the point-to-point scale-up bandwidth, the pair that crosses domains the NICs its GPU has
  to itself, ``n_g = max(1, nics / m)``: ``t = max(S / B_p2p, max(1, k fn) S / (n_g B_nic)) +
  base + hop``.

With a WAN tier of s sites, (n - n/s)/n x S of each rank's all-to-all buffer crosses the WAN at
the GPU's share of its site's WAN links, and the send/recv pair between sites uses one WAN link.

The point-to-point efficiency is calibrated (``calibrated.p2p_efficiency``: A100 sendrecv 195 GB/s
against 240 GB/s ring, li-plus/playground); so are the per-message cost
(``calibrated.per_message_latency``, fitted at Hopper's clock to small all-to-all rows) and the
all-to-all's share of the scale-up rate, ``B_up`` = the link's achievable rate x
``calibrated.alltoall_efficiency`` (one-node all-to-alls at their largest size: 8 x H100 348.0
GB/s busbw at 16 GiB against a ring's 370.5, 8 x MI355X 322.2 at 128 MiB against 346.0).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from fractions import Fraction

from ibcalc.engine.base import (
    Timing,
    Topology,
    Traffic,
    base_latency,
    base_term,
    clock_words,
    fit_origin,
    gbps,
    hop_terms,
    intra_hop_latency,
    make_cost,
    message_clock_scale,
    net_hop_latency,
    network_words,
    protocol_factor,
    protocol_words,
    us,
    wan_hop_latency,
    wan_window_bytes,
    worked,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol, Term
from ibcalc.units import fixed, format_size

__all__ = [
    "alltoall_bytes",
    "alltoall_messages",
    "alltoall_traffic",
    "alltoall_up_bw_Bps",
    "message_cost_s",
    "pairwise_timing",
    "pxn_offered",
    "pxn_timing",
    "sendrecv_timing",
    "shares_gpu_link",
    "ties_pairwise",
    "torus_shape",
    "torus_share",
]


def _one_hop(
    size_bytes: float, topo: Topology, protocol: Protocol, params: CostParams
) -> tuple[float, str]:
    """The one hop a point-to-point message pays (NCCL's ring row): the network's across
    domains, the scale-up link's inside one, the WAN's if slower; and which kind it is."""
    # the Ring row whatever the GPUs per node: NCCL does not tune point-to-point work, and its
    # one-GPU-per-node Tree row is a tuner rule (net_row)
    if topo.domains > 1:
        hop = net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params, own_row=True)
        kind = "net"
    else:
        hop, kind = intra_hop_latency(topo, Algorithm.RING, protocol, params), "intra"
    wan = wan_hop_latency(topo, Algorithm.RING, protocol, params, own_row=True)
    return (wan, "wan") if wan > hop else (hop, kind)


def _latency_terms(
    size_bytes: float, topo: Topology, protocol: Protocol, params: CostParams, kind: str
) -> list[Term]:
    """Base latency and the one hop of :func:`_one_hop`, as explanation terms."""
    hop = hop_terms(
        [("one hop", 1, kind)],
        topo,
        algorithm=Algorithm.RING,
        protocol=protocol,
        size_bytes=size_bytes,
        params=params,
        own_row=True,
    )
    return [base_term(Algorithm.RING, protocol, params), *hop]


def alltoall_bytes(size_bytes: float, topo: Topology, *, aggregated: bool) -> tuple[float, float]:
    """Bytes each GPU of an all-to-all moves over its scale-up links and through its NICs:
    ``(m-1)/n x S`` to its domain's peers, with PXN (``aggregated``) also the ``(m-1)/m`` of
    its network bytes it forwards to the GPU on their rail; ``(n-m)/n x S`` across domains."""
    m, n = topo.m, topo.ranks
    net_bytes = (n - m) / n * size_bytes
    extra = net_bytes * (m - 1) / m if aggregated else 0.0
    return (m - 1) / n * size_bytes + extra, net_bytes


#: Where ``calibrated.alltoall_efficiency`` comes from, said beside its value.
_A2A_FIT = "fitted by benchmarks/fits.py to one-node H100 and MI355X all-to-alls"


def alltoall_up_bw_Bps(topo: Topology, params: CostParams) -> float:
    """The rate an all-to-all streams at over a GPU's scale-up links: on an accelerator fabric
    (NVLink, NVSwitch, Infinity Fabric: ``ScaleUpTier.fabric``) the link's achievable rate x
    ``calibrated.alltoall_efficiency`` (each GPU runs n-1 point-to-point pairs at once, which
    fall short of a ring's one stream per channel; H100 and MI355X by the same share); over
    PCIe or a bridged pair, where no all-to-all was measured at peer-to-peer rates, the link's
    rate."""
    if topo.up is None or not topo.up.fabric:
        return topo.up_bw_Bps()
    return topo.up_bw_Bps() * params.calibrated.alltoall_efficiency


def _alltoall_terms(
    size_bytes: float, topo: Topology, params: CostParams, *, aggregated: bool
) -> tuple[float, float, float]:
    m, n = topo.m, topo.ranks
    up_bytes, net_bytes = alltoall_bytes(size_bytes, topo, aggregated=aggregated)
    intra_t = 0.0
    if m > 1:
        intra_t = max(up_bytes / alltoall_up_bw_Bps(topo, params), torus_share(topo) * size_bytes)
    net_t = 0.0
    if topo.domains > 1:
        assert topo.out is not None
        # domain_bw_Bps already divides by the leaf contention max(1, k f)
        net_t = net_bytes / (topo.domain_bw_Bps(alltoall_traffic(aggregated)) / m)
    wan_t = 0.0
    if topo.wan is not None:
        per_site = n // topo.sites
        wan_t = (n - per_site) / n * size_bytes / (topo.wan_bw_Bps(params) / per_site)
    return intra_t, net_t, wan_t


def _alltoall_parts(
    size_bytes: float,
    topo: Topology,
    params: CostParams,
    times: tuple[float, float, float],
    *,
    aggregated: bool,
) -> list[str]:
    """Words for each path of :func:`_alltoall_terms` (whose ``times`` they are): its bytes per
    GPU, its rate and time."""
    m, n = topo.m, topo.ranks
    intra_t, net_t, wan_t = times
    traffic = alltoall_traffic(aggregated)
    parts = []
    if m > 1:
        own = (m - 1) / n * size_bytes
        what = f"(m-1)/n x S = {format_size(own)}"
        if aggregated and topo.domains > 1:
            rail = (n - m) / n * size_bytes * (m - 1) / m
            what = (
                f"{what} + the rail traffic PXN gathers, (n-m)/n x S x (m-1)/m = "
                f"{format_size(rail)}, together {format_size(own + rail)}"
            )
        cut = torus_cut(topo)
        # the bisection's words where its term is the one that binds, as the bottleneck says:
        # against the link's rate without the all-to-all share, a 3-chip slice whose own
        # links bind had been said to be bisection-bound, its figures not multiplying out
        if cut is not None and torus_share(topo) * size_bytes >= intra_t:
            a, links, link_Bps = cut
            dims = topo.up.torus_dims if topo.up is not None else None
            parts.append(
                f"scale-up: the torus's bisection binds, not each GPU's links: across its "
                f"longest dimension ({a}, in the most even {dims}-D shape of {m} GPUs) {links} "
                f"links of {gbps(link_Bps)} carry every pair's bytes across the cut, "
                f"m/2 x m/2 x S/n = {format_size(m * m / 4 * size_bytes / n)}: {worked(intra_t)}"
            )
        else:
            up = topo.up
            assert up is not None
            # the rate names its link and factors, as the ring's and NVLS's do (it had been a
            # bare '371 GB/s' in 257 audited cases)
            duplex = (
                f" x duplex_efficiency {up.duplex_efficiency:g}" if up.duplex_efficiency < 1 else ""
            )
            streams = (
                f" x {params.calibrated.alltoall_efficiency:g}, calibrated.alltoall_efficiency "
                "for n-1 streams at once, "
                + fit_origin(params, "calibrated.alltoall_efficiency", _A2A_FIT)
                if up.fabric
                else ""
            )
            parts.append(
                f"scale-up {what} per GPU at {gbps(alltoall_up_bw_Bps(topo, params))} "
                f"({up.link_id}'s line rate {gbps(up.line_Bps)} x efficiency "
                f"{up.bw_Bps / up.line_Bps:.3g}{duplex}{streams}): {worked(intra_t)}"
            )
    if topo.domains > 1 and topo.out is not None:
        # each NIC's achievable rate, as the ring's bottleneck gives it: '32 x efa-v2 / 8 =
        # 45 GB/s' had read as 32 x 12.5 / 8 = 50, the line rate's sum
        parts.append(
            f"network (n-m)/n x S = {format_size((n - m) / n * size_bytes)} per GPU at its share "
            f"of the NICs, {topo.out.nics_per_domain} x {topo.out.link_id} "
            f"({fixed(topo.out.nic_bw_Bps / 1e9, 1)} GB/s achievable each) / {m} = "
            f"{gbps(topo.domain_bw_Bps(traffic) / m)}{network_words(topo, traffic)}: "
            f"{worked(net_t)}"
        )
    if topo.wan is not None:
        per_site = n // topo.sites
        parts.append(
            f"WAN (n - n/s)/n x S = {format_size((n - per_site) / n * size_bytes)} per GPU at "
            f"{gbps(topo.wan_bw_Bps(params) / per_site)}: {worked(wan_t)}"
        )
    return parts


def alltoall_traffic(aggregated: bool) -> Traffic:
    """How an all-to-all's network bytes cross the leaves: PXN keeps them on the destination's
    rail (``uniform``: rail-aligned traffic to every peer); pairwise sends from each GPU's own
    NIC to the destination GPU's, on another rail for most peers (``unaligned``): on a
    rail-optimized fabric those bytes cross leaves even inside a scalable unit (NVIDIA,
    'Doubling all2all Performance with NCCL 2.12', 2022)."""
    return "uniform" if aggregated else "unaligned"


@functools.lru_cache(maxsize=256)
def _longest_dimension(gpus: int, dims: int) -> int:
    """The smallest longest side of a ``dims``-dimensional grid of ``gpus`` (8 x 8 x 4 for 256
    in 3-D: 8): the most even shape a torus slice of that many chips takes."""
    if dims <= 1 or gpus <= 1:
        return gpus
    best = gpus
    for side in range(1, gpus + 1):
        if gpus % side == 0 and side < best:
            best = min(best, max(side, _longest_dimension(gpus // side, dims - 1)))
    return best


def torus_shape(gpus: int, dims: int) -> tuple[int, ...]:
    """The most even ``dims``-dimensional shape of ``gpus`` chips, longest side first (256 in
    3-D: (8, 8, 4); a prime count is a ring: (1021, 1, 1))."""
    shape: list[int] = []
    left = gpus
    for rest in range(dims, 0, -1):
        side = _longest_dimension(left, rest)
        shape.append(side)
        left //= side
    return tuple(shape)


def torus_ports(gpus: int, dims: int) -> int:
    """The ports of a chip that reach distinct neighbours in the most even ``dims``-dimensional
    slice of ``gpus`` chips (:func:`torus_shape`, wraparound included): two along a side of 3 or
    more chips, one along a side of 2 (its two neighbours there are one chip), none along a side
    of 1. A full 16 x 16 TPU v5e pod uses all 4; 2 x 4 chips 3; 2 chips 1."""
    return sum(2 if side > 2 else side - 1 for side in torus_shape(gpus, dims))


def torus_cut(topo: Topology) -> tuple[int, int, float] | None:
    """The bisection of a domain whose GPUs form a torus (TPU ICI), or None: (its longest
    dimension ``a``, the ``2 m / a`` links across a cut of that dimension, wraparound included,
    and each link's achievable rate per direction, the GPU's over its ``2 d`` links). Google
    gives TPU v6e's 256-chip 2-D torus a 3.2 TB/s bisection: 2 x 256/16 links x 100 GB/s."""
    up = topo.up
    if up is None or up.torus_dims is None or topo.m < 3:
        return None
    a = _longest_dimension(topo.m, up.torus_dims)
    if a < 2:
        return None
    # each port's share of the rate the slice's ports carry (resolve scales a small slice's
    # rate to the ports it uses); a side of 2 chips is joined once, its wraparound the same
    # link (2 x 2 v5e chips had counted 4 links across the cut, not 2: review CX)
    crossing = (2 if a > 2 else 1) * topo.m // a
    return a, crossing, up.bw_Bps / torus_ports(topo.m, up.torus_dims)


def torus_share(topo: Topology) -> float:
    """Seconds per byte of S that a torus's bisection takes for the domain's share of an
    all-to-all (0 off a torus): each GPU sends S/n to each of its ``m - 1`` peers in the domain,
    and the ``m/2 x m/2`` pairs across the cut move ``m^2/4 x S/n`` over ``2 m / a`` links
    (``m / a`` where ``a`` is 2): ``m a / (8 n B_link)`` (the bisection bound of a k-ary n-cube;
    Dally and Towles, Principles
    and Practices of Interconnection Networks, 2004, ch. 3). A switch gives every GPU its
    own rate to every peer; a torus does not (a 256-chip v5p slice, 8 x 8 x 4: 11.9 ms for a
    1 GiB all-to-all at 90 GB/s achievable a link, where the per-chip rate alone gave 1.98 ms)."""
    cut = torus_cut(topo)
    if cut is None:
        return 0.0
    _a, links, link_Bps = cut
    return topo.m * topo.m / (4 * topo.ranks * links * link_Bps)


def pxn_offered(topo: Topology) -> bool:
    """Whether PXN can run: GPUs that meet over NVLink (NCCL's PATH_PXN, topo.h), not over
    PCIe, and NCCL at all (not a TPU torus). The caller checks several GPUs and nodes."""
    return topo.up is None or (topo.up.path != "pci" and topo.up.torus_dims is None)


def alltoall_messages(topo: Topology) -> int:
    """The messages one rank posts in an all-to-all, each charged
    ``calibrated.per_message_latency``: one per peer (n-1), with PXN too: PXN relays a message
    through the GPU on the destination's rail and aggregates on the network, but the kernel
    still posts a send and a receive per peer. Charging PXN (N-1) + (m-1) messages instead made
    the 2 x 8 A100 all-to-all of ALCF 49 % too fast at 64 B - 64 KiB (benchmarks/fits.py,
    per_message_latency)."""
    return topo.ranks - 1


def message_cost_s(topo: Topology, params: CostParams) -> float:
    """One all-to-all message's cost on this GPU: ``calibrated.per_message_latency`` (Hopper's)
    times :func:`~ibcalc.engine.base.message_clock_scale`."""
    return params.calibrated.per_message_s * message_clock_scale(topo, params)


def ties_pairwise(best: Cost, others: Iterable[Cost]) -> bool:
    """Whether ``best`` is PXN and pairwise in its protocol takes the same time among ``others``
    (they post the same messages, and where the network binds both move its bytes alike): a
    tie, which goes to PXN, the path NCCL takes where it can (NCCL_P2P_PXN_LEVEL's default)."""
    return best.algorithm is Algorithm.PXN and any(
        c.algorithm is Algorithm.PAIRWISE
        and c.protocol is best.protocol
        and math.isclose(c.time_s, best.time_s, rel_tol=1e-12)
        for c in others
    )


def shares_gpu_link(topo: Topology) -> bool:
    """Whether a GPU's peer traffic and its NIC traffic cross one link: GPUs that meet over PCIe
    reach their NICs across the same x16 link (GPUDirect RDMA), so an all-to-all's two shares
    add there, where NVLink peers and PCIe NICs run side by side."""
    return topo.up is not None and topo.up.path == "pci" and topo.domains > 1


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
    hop, hop_kind = _one_hop(size_bytes, topo, protocol, params)
    latency = (
        base_latency(Algorithm.RING, protocol, params)
        + hop
        + messages * message_cost_s(topo, params)
    )
    shared = shares_gpu_link(topo)
    # on a shared link the GPU's own peer and network bytes add up there; the NICs still carry
    # the node's network bytes at their own share (fewer NICs than GPUs: the NIC binds)
    link_t = intra_t + (topo.ranks - topo.m) / topo.ranks * size_bytes / alltoall_up_bw_Bps(
        topo, params
    )
    transfer = max(max(link_t, net_t) if shared else max(intra_t, net_t), wan_t)
    if protocol is not Protocol.SIMPLE:
        transfer = transfer / protocol_factor(protocol, params)

    def explain() -> Cost:
        traffic = alltoall_traffic(aggregated)
        cut = torus_cut(topo)
        bisected = cut is not None and intra_t <= torus_share(topo) * size_bytes
        where = (
            f"network (NIC share per GPU{network_words(topo, traffic, inside=True)})"
            if net_t >= intra_t
            else f"scale-up: the {topo.up.link_id} torus's bisection ({cut[1]} links)"
            if bisected and topo.up is not None and cut is not None
            else "scale-up"
        )
        if shared and link_t >= net_t:
            where = f"the GPU's {topo.up.link_id if topo.up else 'PCIe'} link (peers and NIC)"
        if wan_t > max(net_t, intra_t):
            where = "WAN between sites (share per GPU)"
        c = params.calibrated.per_message_s
        scale = message_clock_scale(topo, params)
        why = f"n-1 = {messages} message{'s' if messages != 1 else ''} (one per peer"
        why += ", relayed or not)" if aggregated else ")"
        terms = _latency_terms(size_bytes, topo, protocol, params, hop_kind)
        if messages and c > 0:
            terms.append(
                Term(
                    name="messages",
                    seconds=messages * c * scale,
                    detail=f"{why} x {us(c)}{clock_words(scale, topo, params)} per message "
                    "(calibrated.per_message_latency, "
                    + fit_origin(
                        params,
                        "calibrated.per_message_latency",
                        "fitted by benchmarks/fits.py to small all-to-all rows",
                    )
                    + ")",
                )
            )
        parts = _alltoall_parts(
            size_bytes, topo, params, (intra_t, net_t, wan_t), aggregated=aggregated
        )
        terms.append(
            Term(
                name="transfer",
                seconds=transfer,
                detail=(
                    "all sends run at once, so the slowest path sets the time: "
                    + "; ".join(parts)
                    + (
                        f"; the GPU's own {topo.up.link_id if topo.up else 'PCIe'} link carries "
                        f"its peer and network bytes both, {worked(link_t)}"
                        if shared
                        else ""
                    )
                    + protocol_words(protocol, params)
                ),
            )
        )
        return make_cost(
            algorithm,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            formula=(
                "max((n-1)/n S/B_up, max(1,kf) (n-m)/n S/(nics B_nic/m)) + base + hop + msgs x c"
                if shared
                else "max((m-1)/n S/B_up, max(1,kf) (n-m)/n S/(nics B_nic/m)) + base + hop + "
                "msgs x c"
            )
            + ("; a torus's scale-up term at least m a S/(8 n B_link)" if cut is not None else ""),
            terms=terms,
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
        messages=alltoall_messages(topo),
        params=params,
    )


def pxn_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """All-to-all with PXN rail aggregation (needs several GPUs per node that meet over NVLink,
    and several nodes: NCCL's PATH_PXN is 'a GPU and a NIC using an intermediate GPU via
    NVLink', NCCL 2.30.7 ``src/graph/topo.h``; GPUs on PCIe alone send from their own NIC).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective is not Collective.ALL_TO_ALL or topo.m < 2 or topo.domains < 2:
        return None
    if not pxn_offered(topo):
        return None
    if protocol is Protocol.LL128:
        return None
    messages = alltoall_messages(topo)
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
        size_bytes / (topo.peer_bw_Bps() * params.calibrated.p2p_efficiency) if topo.m > 1 else 0.0
    )
    net_t = 0.0
    if topo.domains > 1:
        assert topo.out is not None
        net_t = size_bytes * topo.contention("neighbour") / (topo.gpu_nics * topo.out.nic_bw_Bps)
    wan_t = 0.0
    if topo.wan is not None:
        wan_t = size_bytes / topo.wan_link_bw_Bps(params, protocol)
    transfer = max(intra_t, net_t, wan_t)
    if protocol is not Protocol.SIMPLE:
        transfer = transfer / protocol_factor(protocol, params)
    hop, hop_kind = _one_hop(size_bytes, topo, protocol, params)
    latency = base_latency(Algorithm.RING, protocol, params) + hop

    def explain() -> Cost:
        parts = []
        if topo.m > 1 and topo.up is not None:
            eff = params.calibrated.p2p_efficiency
            peer = topo.peer_bw_Bps()
            mesh = (
                f", the links to one peer: {Fraction(topo.up.peer_share).limit_denominator(64)} "
                "of the GPU's on a switchless mesh"
                if topo.up.peer_share < 1
                else ""
            )
            parts.append(
                f"inside a {topo.node} S at {gbps(peer * eff)} ({topo.up.link_id} "
                f"{gbps(peer)}{mesh} x point-to-point efficiency {eff:.3g}, "
                f"calibrated.p2p_efficiency): {worked(intra_t)}"
            )
        if topo.domains > 1 and topo.out is not None:
            nics = topo.gpu_nics
            nic_bw = nics * topo.out.nic_bw_Bps / topo.contention("neighbour")
            parts.append(
                f"the pair across {topo.node}s S through its GPU's {nics:.3g} {topo.out.link_id} "
                f"NIC{'s' if nics != 1 else ''} ({topo.out.nics_per_domain} per {topo.m} GPUs, "
                f"at least one) at {gbps(nic_bw)}{network_words(topo, 'neighbour')}: "
                f"{worked(size_bytes / nic_bw)}"
            )
        if topo.wan is not None:
            wan_bw = topo.wan_link_bw_Bps(params, protocol)
            inflight = ""
            if wan_bw < topo.wan.nic_bw_Bps:
                inflight = (
                    f" (NCCL's {params.assumptions.wan_channels} x "
                    f"{format_size(wan_window_bytes(params, protocol))} of {protocol.value} "
                    f"lines in flight per round trip of {us(2 * topo.wan.transport_latency_s)}; "
                    f"the link gives {gbps(topo.wan.nic_bw_Bps)})"
                )
            parts.append(
                f"the pair across sites S through one {topo.wan.link_id} link at "
                f"{gbps(wan_bw)}{inflight}: {worked(size_bytes / wan_bw)}"
            )
        terms = _latency_terms(size_bytes, topo, protocol, params, hop_kind)
        terms.append(
            Term(
                name="transfer",
                seconds=transfer,
                detail=f"every rank sends S = {format_size(size_bytes)} to the next at once, so "
                "the slowest pair sets the time: "
                + "; ".join(parts)
                + protocol_words(protocol, params),
            )
        )
        return make_cost(
            Algorithm.P2P,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=(
                f"one {topo.wan.link_id} link between sites"
                if topo.wan is not None and wan_t >= max(net_t, intra_t)
                else (
                    f"one NIC between {topo.node}s"
                    if topo.out is None or topo.gpu_nics == 1
                    else f"its GPU's {topo.gpu_nics:.3g} NICs between {topo.node}s"
                )
                if net_t >= intra_t
                else "scale-up point-to-point"
            ),
            formula="max(S/B_p2p, S/B_nic"
            + (", S/B_wan" if topo.wan is not None else "")
            + ") + base + hop",
            terms=terms,
        )

    return Timing(Algorithm.P2P, protocol, latency, transfer, explain)
