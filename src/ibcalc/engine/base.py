"""Shared pieces of the cost engine: the tiered topology, latency look-ups, protocol factors.

The engine is a set of pure functions of numbers: no I/O, no catalogue, no YAML. A cluster
arrives here already reduced to tiers (DESIGN.md section 4): tier 0, the scale-up domain of
``m`` GPUs with a per-GPU bandwidth; tier 1, ``N`` domains joined by NICs whose aggregate
per-domain bandwidth is ``nics x NIC rate`` (capped by PCIe).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ibcalc.engine.constants import (
    BASE_LATENCY_S,
    HOP_LATENCY_S,
    LL128_FACTOR,
    LL_FACTOR,
    LL_MAX_BUSBW_BPS,
    LL_NET_BPS,
    LL_NET_SATURATION_BYTES,
    NCCL_SIMPLE_TRANSPORT_FACTOR,
    SIMPLE_FILL_BYTES,
    SIMPLE_TRANSPORT_FACTOR,
    TREE_CORRECTION,
    WAN_INFLIGHT_BYTES,
)
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol, ScaleOutTier, ScaleUpTier

__all__ = [
    "Topology",
    "base_latency",
    "intra_hop_latency",
    "ll_cap_Bps",
    "ll_network_transfer",
    "make_cost",
    "net_hop_latency",
    "protocol_factor",
    "protocols_for",
    "ring_protocol_bw",
    "tree_correction",
    "wan_hop_latency",
]


@dataclass(frozen=True)
class Topology:
    """A cluster reduced to tiers, as the engine sees it.

    ``up`` is None when each domain holds one GPU; ``out`` is None on a single domain.
    ``wan`` (tier 2) joins ``wan.domains`` sites of ``domains / sites`` domains each; its
    ``nics_per_domain`` are the WAN links per site. ``arch`` selects NCCL's per-generation caps
    (volta, ampere, hopper, blackwell, other). ``tuner_view`` evaluates costs as NCCL's tuner
    sees them (its own latency factors, no measured small-message network limit); ``select``
    ranks candidates that way.
    """

    ranks_per_domain: int
    domains: int
    up: ScaleUpTier | None
    out: ScaleOutTier | None
    arch: str = "hopper"
    tuner_view: bool = False
    wan: ScaleOutTier | None = None

    def __post_init__(self) -> None:
        if self.ranks_per_domain < 1 or self.domains < 1:
            raise ValueError("a topology needs at least one GPU per domain and one domain")
        if self.wan is not None and (self.wan.domains < 2 or self.domains % self.wan.domains):
            raise ValueError("a WAN tier needs at least 2 sites that divide the domains evenly")
        if self.ranks_per_domain > 1 and self.up is None:
            raise ValueError("several GPUs per domain need a scale-up tier")
        if self.domains > 1 and self.out is None:
            raise ValueError("several domains need a scale-out tier")

    @property
    def m(self) -> int:
        """GPUs (ranks) per scale-up domain."""
        return self.ranks_per_domain

    @property
    def ranks(self) -> int:
        """Total ranks n = N x m."""
        return self.ranks_per_domain * self.domains

    @property
    def sites(self) -> int:
        """Number of sites joined by the WAN tier (1 without one)."""
        return self.wan.domains if self.wan is not None else 1

    def wan_bw_Bps(self) -> float:
        """Achievable WAN bandwidth of one site, per direction (inf without a WAN tier).

        Besides the links' rate, a site can keep only NCCL's buffers in flight per round trip:
        2 channels x 4 MiB (Simple buffer, cost_models.md 2.9) per WAN link over twice the
        one-way latency, the bandwidth-delay limit of a long link.
        """
        if self.wan is None:
            return math.inf
        rate = self.wan.domain_bw_Bps
        rtt = 2 * self.wan.transport_latency_s
        if rtt > 0:
            rate = min(rate, self.wan.nics_per_domain * WAN_INFLIGHT_BYTES / rtt)
        return rate

    @property
    def intra_path(self) -> str:
        """Latency class of the scale-up path: ``nvlink`` or ``pci``."""
        return self.up.path if self.up is not None else "nvlink"

    @property
    def ll128_allowed(self) -> bool:
        """LL128 needs NVLink-class paths inside the domain (cost_models.md 2.2) and, across
        domains, a transport that writes 128-byte lines straight into GPU memory.

        InfiniBand/RoCE verbs do; proxy-driven plugin transports (EFA, TCPX), which carry a
        transport latency here, are treated as Simple/LL only: the held-out 2 x A3 Mega sweep
        (nccl_logs/06) follows Simple's latency at 64-128 MiB, where LL128 would be 2x faster.
        """
        if self.up is not None and self.up.path != "nvlink":
            return False
        return self.out is None or self.domains < 2 or self.out.transport_latency_s == 0

    def up_bw_Bps(self, *, duplex: bool = True) -> float:
        """Per-GPU scale-up bandwidth; ``duplex`` when every GPU sends and receives at once."""
        if self.up is None:
            return math.inf
        return self.up.bw_Bps * (self.up.duplex_efficiency if duplex else 1.0)

    def domain_bw_Bps(self) -> float:
        """Aggregate achievable network bandwidth of one domain (inf on a single domain)."""
        if self.out is None or self.domains == 1:
            return math.inf
        return self.out.domain_bw_Bps


def base_latency(algorithm: Algorithm, protocol: Protocol) -> float:
    """NCCL's base latency of an algorithm and protocol (0 where NCCL has none)."""
    return BASE_LATENCY_S.get(algorithm, {}).get(protocol, 0.0)


def intra_hop_latency(topo: Topology, algorithm: Algorithm, protocol: Protocol) -> float:
    """Per-hop latency inside the scale-up domain (NCCL hwLat NVLink or PCI row)."""
    table = HOP_LATENCY_S[topo.intra_path]
    key = algorithm if algorithm in table else Algorithm.RING
    hw = table[key].get(protocol, table[key].get(Protocol.SIMPLE, 0.0))
    extra = topo.up.transport_latency_s if topo.up is not None else 0.0
    return hw + extra


def net_hop_latency(
    topo: Topology, algorithm: Algorithm, protocol: Protocol, size_bytes: float = math.inf
) -> float:
    """Per-hop network latency: NCCL's NET row plus the transport's own latency.

    NCCL adds its net plugin's reported latency once per hop, and once more for Simple (the
    flush; cost_models.md 2.6); the tuner view keeps exactly that. Physically, Simple moves data
    in chunks that NCCL grows with the message, each step paying a ready/data/flush handshake
    over the transport; on proxy-driven transports (EFA, TCPX) the exposed cost grows from
    NCCL's 2 one-way latencies for small messages to ``SIMPLE_TRANSPORT_FACTOR`` once the
    message reaches ``SIMPLE_FILL_BYTES``. Both are calibrated on the EFA runs
    (benchmarks/calibrate.py); InfiniBand, whose transport latency is 0, is unchanged.
    """
    table = HOP_LATENCY_S["net"]
    key = algorithm if algorithm in table else Algorithm.RING
    hw = table[key].get(protocol, table[key].get(Protocol.SIMPLE, 0.0))
    extra = topo.out.transport_latency_s if topo.out is not None else 0.0
    factor = 1.0
    if protocol is Protocol.SIMPLE:
        factor = NCCL_SIMPLE_TRANSPORT_FACTOR
        if not topo.tuner_view:
            fill = min(1.0, size_bytes / SIMPLE_FILL_BYTES)
            factor += (SIMPLE_TRANSPORT_FACTOR - NCCL_SIMPLE_TRANSPORT_FACTOR) * fill
    return hw + extra * factor


def wan_hop_latency(topo: Topology, algorithm: Algorithm, protocol: Protocol) -> float:
    """Per-hop latency of a WAN crossing: NCCL's NET row plus the link's one-way latency."""
    if topo.wan is None:
        return 0.0
    table = HOP_LATENCY_S["net"]
    key = algorithm if algorithm in table else Algorithm.RING
    hw = table[key].get(protocol, table[key].get(Protocol.SIMPLE, 0.0))
    return hw + topo.wan.transport_latency_s


def ll_network_transfer(topo: Topology, size_bytes: float, protocol: Protocol) -> float:
    """Least time LL needs to move ``size_bytes`` per rank across the network.

    Measured small all-reduces over EFA and InfiniBand take about 60 us more at 64 KiB than at
    1 KiB: about 1 GB/s per rank (calibrated ``ll_net_Bps``), ten times below the LL bandwidth
    NCCL's tuner assumes. The extra stops growing past ``LL_NET_SATURATION_BYTES`` (64 KiB, the
    top of the calibration range): 2 x A3 Mega runs 64 KiB to 512 KiB in 159-174 us and 2 x p5
    runs 1 MiB faster than 64 KiB. NCCL does not know this, so the tuner view leaves it out.
    """
    if protocol is not Protocol.LL or topo.domains < 2 or topo.tuner_view:
        return 0.0
    return min(size_bytes, LL_NET_SATURATION_BYTES) / LL_NET_BPS


def ll_cap_Bps(topo: Topology) -> float:
    """NCCL's LL bus-bandwidth cap for this GPU generation and node count."""
    caps = LL_MAX_BUSBW_BPS.get(topo.arch, LL_MAX_BUSBW_BPS["hopper"])
    if topo.domains == 1:
        return caps[0]
    return caps[1] if topo.domains == 2 else caps[2]


def protocols_for(topo: Topology) -> tuple[Protocol, ...]:
    """Protocols NCCL would enable on this topology."""
    if topo.ll128_allowed:
        return (Protocol.LL, Protocol.LL128, Protocol.SIMPLE)
    return (Protocol.LL, Protocol.SIMPLE)


def protocol_factor(protocol: Protocol) -> float:
    """Payload fraction of a protocol: LL 0.5, LL128 0.92, Simple 1 (cost_models.md 2.5)."""
    if protocol is Protocol.LL:
        return LL_FACTOR
    if protocol is Protocol.LL128:
        return LL128_FACTOR
    return 1.0


def ring_protocol_bw(bw_Bps: float, protocol: Protocol, topo: Topology) -> float:
    """Apply a protocol's payload factor and cap to a ring bandwidth (cost_models.md 2.5)."""
    if protocol is Protocol.LL:
        return min(bw_Bps * LL_FACTOR, ll_cap_Bps(topo))
    return bw_Bps * protocol_factor(protocol)


def tree_correction(size_bytes: float, protocol: Protocol) -> float:
    """NCCL's size-dependent tree bandwidth correction (1.0 outside 64 B .. 512 MiB)."""
    if size_bytes < 64:
        return 1.0
    index = int(math.log2(size_bytes / 64))
    table = TREE_CORRECTION[protocol]
    return table[index] if 0 <= index < len(table) else 1.0


def make_cost(
    algorithm: Algorithm,
    protocol: Protocol,
    latency_s: float,
    transfer_s: float,
    bottleneck: str,
    formula: str,
    *,
    equivalent: bool = False,
) -> Cost:
    """Build a :class:`Cost`, guarding against negative or non-finite terms."""
    if not (math.isfinite(latency_s) and math.isfinite(transfer_s)):
        raise ValueError(f"{algorithm}/{protocol}: non-finite cost")
    return Cost(
        algorithm=algorithm,
        protocol=protocol,
        latency_s=max(latency_s, 0.0),
        transfer_s=max(transfer_s, 0.0),
        bottleneck=bottleneck,
        equivalent_busbw=equivalent,
        formula=formula,
    )


def bytes_factor(collective: Collective, ranks: int) -> float:
    """Bytes each rank must send per byte of S for a point-to-point algorithm (the lower bound).

    2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for
    broadcast, reduce and sendrecv (cost_models.md 1.4 and 3.3).
    """
    n = ranks
    if collective is Collective.ALL_REDUCE:
        return 2.0 * (n - 1) / n
    if collective in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL):
        return (n - 1) / n
    return 1.0
