"""Shared pieces of the cost engine: the tiered topology, latency look-ups, protocol factors.

The engine is a set of pure functions of numbers: no I/O, no catalogue, no YAML. A cluster
arrives here already reduced to tiers (docs/model.md#tiers): tier 0, the scale-up domain of
``m`` GPUs with a per-GPU bandwidth; tier 1, ``N`` domains joined by NICs whose aggregate
per-domain bandwidth is ``nics x NIC rate`` (capped by PCIe). The model's constants arrive as a
:class:`~ibcalc.engine.params.CostParams`, passed to every function that needs one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ibcalc.engine.params import CLOCKED_ARCHS, CostParams
from ibcalc.engine.types import (
    Algorithm,
    Collective,
    Cost,
    Protocol,
    ScaleOutTier,
    ScaleUpTier,
    Term,
)
from ibcalc.units import (
    MiB,
    fixed,
    format_bandwidth,
    format_number,
    format_size,
    format_slowdown,
    format_time,
    plural,
)

#: How a collective's network bytes spread over peers: to neighbours (ring, tree, SHARP
#: tree, send/recv) or to every peer (all-to-all, recursive halving-doubling, PAT).
Traffic = Literal["neighbour", "uniform", "unaligned"]  # unaligned: all-to-all without PXN

__all__ = [
    "Timing",
    "Topology",
    "Traffic",
    "base_latency",
    "base_term",
    "channels",
    "clock_scale",
    "clock_words",
    "correction_at",
    "hop_terms",
    "intra_hop_latency",
    "latency_words",
    "ll_cap_Bps",
    "ll_network_bound",
    "ll_network_transfer",
    "make_cost",
    "message_clock_scale",
    "net_hop_latency",
    "net_overhead",
    "network_words",
    "protocol_factor",
    "protocol_words",
    "protocols_for",
    "proxy_op_per_channel_s",
    "proxy_ops_s",
    "proxy_ops_term",
    "proxy_posts_term",
    "ring_plateau",
    "ring_plateau_factor",
    "ring_protocol_bw",
    "ring_wan_crossings",
    "simple_count",
    "simple_floor",
    "tree_corrected",
    "tree_correction",
    "tree_post_overhead",
    "wan_hop_latency",
    "wan_levels_term",
    "wan_window_bytes",
]


@dataclass(frozen=True)
class Topology:
    """A cluster reduced to tiers, as the engine sees it.

    ``up`` is None when each domain holds one GPU; ``out`` is None on a single domain.
    ``wan`` (tier 2) joins ``wan.domains`` sites of ``domains / sites`` domains each; its
    ``nics_per_domain`` are the WAN links per site. ``arch`` selects NCCL's per-generation caps
    (volta, ampere, hopper, blackwell, other). What NCCL's tuner assumes is not a property of
    the cluster: it is ``CostParams.tuner_view()``.
    """

    ranks_per_domain: int
    domains: int
    up: ScaleUpTier | None
    out: ScaleOutTier | None
    arch: str = "hopper"
    wan: ScaleOutTier | None = None
    #: GPUs one process drives (nccl-tests ``-g``); 1 is one process per GPU.
    gpus_per_process: int = 1
    #: The GPU generation as the catalogue names it (``ampere``, ``ada``, ``cdna3``...); its
    #: clock scales NCCL's hop latencies (:func:`clock_scale`). Empty: unknown, unscaled.
    gpu_arch: str = ""
    #: The host CPU family (``amd``, ``intel``, ``arm``; empty: not stated, NCCL's default).
    host_cpu: str = ""
    #: Nodes one scale-up domain spans (more than 1 where NVLink joins several, as in GB200
    #: NVL72). The engine works in domains; it changes no number, only :attr:`node`.
    nodes_per_domain: int = 1

    def __post_init__(self) -> None:
        if self.ranks_per_domain < 1 or self.domains < 1:
            raise ValueError("a topology needs at least one GPU per domain and one domain")
        if self.wan is not None and (self.wan.domains < 2 or self.domains % self.wan.domains):
            raise ValueError("a WAN tier needs at least 2 sites that divide the domains evenly")
        if self.ranks_per_domain > 1 and self.up is None:
            raise ValueError("several GPUs per domain need a scale-up tier")
        if self.domains > 1 and self.out is None:
            raise ValueError("several domains need a scale-out tier")
        if self.gpus_per_process < 1:
            raise ValueError("a process drives at least one GPU")
        if self.nodes_per_domain < 1:
            raise ValueError("a scale-up domain spans at least one node")

    @property
    def node(self) -> str:
        """What the explanations call a scale-up domain: ``node`` where each is one node (the
        usual case, and the word NCCL's documents use), ``domain`` where one spans several."""
        return "node" if self.nodes_per_domain == 1 else "domain"

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

    def wan_bw_Bps(self, params: CostParams, protocol: Protocol = Protocol.SIMPLE) -> float:
        """Achievable WAN bandwidth of one site, per direction, in ``protocol``'s lines (inf
        without a WAN tier; the protocol's payload factor is applied after, as on every tier).

        Besides the links' rate, a site can keep only NCCL's buffers in flight per round trip:
        one buffer of the protocol (:func:`wan_window_bytes`; Simple 4 MiB) per channel of the
        communicator, each channel's connection crossing with its own, over twice the one-way
        latency, the bandwidth-delay limit of a long link. A collective NCCL gives fewer
        channels (:func:`~ibcalc.engine.pipeline.active_channels`) has as many buffers in
        flight as channels: the trimming of its bandwidth gives exactly that.
        """
        if self.wan is None:
            return math.inf
        rate = self.wan.domain_bw_Bps
        rtt = 2 * self.wan.transport_latency_s
        if rtt > 0:
            # one window per channel, whatever the link count: a count of 2 per link had 32
            # links keep 64 buffers in flight on 16 channels (16 GiB over 800 km 4x too fast),
            # and 1 link 2 buffers, which the trimming of a small collective then cut again
            crossing = channels(self, params)
            rate = min(rate, crossing * wan_window_bytes(params, protocol) / rtt)
        return rate

    def wan_link_bw_Bps(self, params: CostParams, protocol: Protocol = Protocol.SIMPLE) -> float:
        """Achievable bandwidth of one WAN link, per direction, in ``protocol``'s lines (inf
        without a WAN tier): its rate, or ``wan_channels`` buffers per round trip where that is
        less (a send/recv pair crosses on one link, over NCCL's channels to one network peer)."""
        if self.wan is None:
            return math.inf
        rate = self.wan.nic_bw_Bps
        rtt = 2 * self.wan.transport_latency_s
        if rtt > 0:
            inflight = params.assumptions.wan_channels * wan_window_bytes(params, protocol)
            rate = min(rate, inflight / rtt)
        return rate

    @property
    def intra_path(self) -> str:
        """Latency class of the scale-up path: ``nvlink`` or ``pci``."""
        return self.up.path if self.up is not None else "nvlink"

    @property
    def ll128_allowed(self) -> bool:
        """LL128 needs NVLink-class paths inside the domain and, across domains, a transport
        that writes 128-byte lines straight into GPU memory (docs/model.md#applicability).

        InfiniBand/RoCE verbs do; proxy-driven plugin transports (EFA, TCPX, CXI; the
        catalogue's ``transport: plugin``) are treated as Simple/LL only: the held-out 2 x A3
        Mega sweep (github.com/lessizzmore/create-a3mega-ztan-fork@5f9e1dd, copied to
        benchmarks/data/sweeps/log06_allreduce_2node_16xH100_gcp_a3mega.txt) follows Simple's
        latency at 64-128 MiB, where LL128 would be 2x faster.
        """
        if self.up is not None and self.up.path != "nvlink":
            return False
        return self.out is None or self.domains < 2 or not self.out.is_plugin

    def up_bw_Bps(self, *, duplex: bool = True) -> float:
        """Per-GPU scale-up bandwidth; ``duplex`` when every GPU sends and receives at once."""
        if self.up is None:
            return math.inf
        return self.up.bw_Bps * (self.up.duplex_efficiency if duplex else 1.0)

    def peer_bw_Bps(self) -> float:
        """Scale-up bandwidth from one GPU to one peer (point-to-point work: send/recv): the
        GPU's whole rate through a switch, but on a full mesh only the links that join the two
        (``ScaleUpTier.peer_share``: one xGMI link of 64 GB/s of MI300X's seven; a ring shift on
        8 MI300X had been priced at the whole mesh's 314 GB/s, 7x)."""
        if self.up is None:
            return math.inf
        return self.up_bw_Bps() * self.up.peer_share

    @property
    def leaf_contention(self) -> float:
        """How much slower uniform traffic (every peer a destination: all-to-all with PXN,
        recursive halving-doubling, PAT) runs through tapered leaves: ``max(1, k f)``.

        With leaf oversubscription k:1 (down:up) and a fraction f of a node's network bytes
        crossing the leaf uplinks, the uplinks give that traffic 1/k of the NICs' rate; once
        k f > 1 they, not the NICs, set the pace (Chan et al. bisection argument,
        docs/model.md#oversubscription-and-cross-leaf-traffic). The fraction comes from the
        design's fabric layout or ``--cross-leaf``.
        """
        return self.contention("uniform")

    def contention(self, traffic: Traffic) -> float:
        """``max(1, k f)`` for ``traffic``: ``uniform`` takes the cross-leaf fraction,
        ``neighbour`` (ring, tree, SHARP's aggregation tree, send/recv) the neighbour fraction,
        which a design's fabric layout derives (a leaf's block of nodes has one ring or tree
        edge out per channel, docs/model.md); without one, the same fraction as uniform.
        ``unaligned`` (an all-to-all without PXN: each GPU's own NIC to the destination GPU's,
        on another rail for most peers) the unaligned fraction, which a rail-optimized layout
        derives (docs/model.md); without one, the same as uniform."""
        if self.out is None or self.domains == 1:
            return 1.0
        if traffic == "neighbour":
            f = self.out.neighbour_share
        elif traffic == "unaligned":
            f = self.out.unaligned_share
        else:
            f = self.out.cross_leaf_fraction
        return max(1.0, self.out.oversubscription * f)

    @property
    def gpu_nics(self) -> float:
        """The NICs one GPU has to itself, on average: ``nics per domain / m``, at least 1 (a GPU
        that shares a NIC with others still sends through one). A point-to-point pair spreads its
        channels over them (NCCL 2.30.7 ``src/graph/search.cc``, ``ncclTopoGetLocalNet``: the
        channel id picks among the GPU's nearest NICs); where NICs share a GPU's PCIe link, their
        capped rates add up to that link's."""
        if self.out is None:
            return 1.0
        return max(1.0, self.out.nics_per_domain / self.m)

    def domain_bw_Bps(self, traffic: Traffic) -> float:
        """Aggregate achievable network bandwidth of one domain (inf on a single domain), after
        the leaf contention of ``traffic`` (:meth:`contention`)."""
        if self.out is None or self.domains == 1:
            return math.inf
        return self.out.domain_bw_Bps / self.contention(traffic)


def channels(topo: Topology, params: CostParams) -> int:
    """Channels of the communicator (NCCL's ``nChannels``): every rank of a ring or tree
    collective runs on each of them.

    Across nodes one ring per GPU-NIC pair, ``channels_per_nic`` channels each; inside a node
    ``channels_single_node`` over NVLink and ``channels_pcie`` over PCIe
    (``data/cost_params.yaml`` cites each, with NCCL's logs). Across nodes of several GPUs on
    PCIe, no more than ``channels_pcie``: every ring crosses every GPU's PCIe link whichever NIC
    it leaves by, and NCCL's search takes each channel's bandwidth from every link it crosses,
    so more NICs add no channel the PCIe links cannot carry (more had spread the same PCIe rate
    over more channels: a 256 KiB broadcast on 8 x pcie-8gpu took 181 us with 4 NICs per node
    and 348 us with 8).
    """
    pipe = params.pipeline
    if topo.domains > 1 and topo.out is not None:
        rings = min(topo.out.nics_per_domain, topo.m)
        across = min(pipe.max_channels, max(2, rings * pipe.channels_per_nic))
        if topo.m > 1 and topo.intra_path == "pci":
            return min(across, pipe.channels_pcie)
        return across
    if topo.intra_path == "pci":
        return min(pipe.max_channels, pipe.channels_pcie)
    return min(pipe.max_channels, pipe.channels_single_node)


def wan_window_bytes(params: CostParams, protocol: Protocol) -> float:
    """Bytes of ``protocol``'s lines one connection keeps in flight: its whole buffer, NCCL's
    ``NCCL_STEPS`` (8) steps. Simple 4 MiB (``NCCL_BUFFSIZE``); LL 8 x 32 KiB of payload, twice
    that in flagged lines (512 KiB); LL128 8 x 576,000 B of payload over its payload factor.
    Over a long WAN the window, not the link, sets the rate: a ring in LL had been given
    Simple's 4 MiB per connection, 8x the lines LL's buffer holds."""
    if protocol is Protocol.SIMPLE:
        return params.nccl_runtime.simple_buffer_bytes
    pipe = params.pipeline
    step = pipe.ll_step_bytes if protocol is Protocol.LL else pipe.ll128_step_bytes
    return pipe.steps * step / protocol_factor(protocol, params)


def ring_plateau_factor(topo: Topology, params: CostParams) -> float:
    """NCCL's ring-plateau factor on this GPU (NCCL 2.30.7 ncclTopoGetAlgoTime): 1.4 from SM80,
    1.9 before (``nccl_tuner.ring_plateau_factor``, ``ring_plateau_factor_pre_sm80``; the
    engine's ``volta`` row holds Volta and Turing, whose compute capability is below 8.0)."""
    return ring_plateau(topo, params)[0]


def ring_plateau(topo: Topology, params: CostParams) -> tuple[float, str]:
    """:func:`ring_plateau_factor` and the name of the constant it is, for explanations."""
    tuner = params.nccl_tuner
    if topo.arch == "volta":
        return tuner.ring_plateau_factor_pre_sm80, "nccl_tuner.ring_plateau_factor_pre_sm80"
    return tuner.ring_plateau_factor, "nccl_tuner.ring_plateau_factor"


def net_overhead(topo: Topology, protocol: Protocol, params: CostParams) -> float:
    """NCCL's network post overhead per ring step on several nodes (``getNetOverhead``): 2 us on
    AMD x86 hosts, 1 us on the others, tripled for Simple; 0 on one domain."""
    if topo.domains < 2:
        return 0.0
    tuner = params.nccl_tuner
    each = tuner.net_overhead_amd_s if topo.host_cpu == "amd" else tuner.net_overhead_s
    return each * (tuner.net_overhead_simple_factor if protocol is Protocol.SIMPLE else 1)


def tree_post_overhead(topo: Topology, protocol: Protocol, params: CostParams) -> float:
    """What a tree (NVLS-tree too) across nodes pays for the host proxy's posts:
    :func:`net_overhead` once on the way up and once on the way down, in the physical view
    (``assumptions.tree_net_overhead``; 0 on one domain). The proxy posts a tree's network sends
    as it posts a ring's steps; NCCL's tuner charges it to rings only. Once each way, whatever the
    depth: the published 4- and 16-node trees show no more."""
    if not params.assumptions.tree_net_overhead:
        return 0.0
    return 2 * net_overhead(topo, protocol, params)


def proxy_posts_term(posts_s: float, topo: Topology) -> Term:
    """The explanation of :func:`tree_post_overhead` (``posts_s``: both ways)."""
    host = (
        f"{topo.host_cpu} host"
        if topo.host_cpu
        else "host CPU not given, so NCCL's figure for non-AMD hosts"
    )
    return Term(
        name=f"proxy posts across {topo.node}s",
        seconds=posts_s,
        detail=f"2 x {us(posts_s / 2)} (up and down, whatever the depth): NCCL's network post "
        f"overhead per step ({host}; getNetOverhead, tripled for Simple). NCCL's tuner "
        "charges it to rings only; the proxy posts a tree's sends as it posts a ring's, so "
        "ibcalc charges trees too",
    )


def proxy_op_per_channel_s(topo: Topology, params: CostParams) -> float:
    """What each channel a ring or tree runs on adds for the proxy's start-up
    (:func:`proxy_ops_s`): ``calibrated.proxy_op_latency`` across nodes, 0 on one domain."""
    return params.calibrated.proxy_op_s if topo.domains > 1 else 0.0


def proxy_ops_s(topo: Topology, active: float, params: CostParams) -> float:
    """The proxy's per-channel start-up across nodes: ``calibrated.proxy_op_latency`` x the
    channels a ring or tree runs on (0 on one domain and in the tuner view).

    NCCL's host hands the proxy thread one network operation per channel of a collective that
    crosses nodes, and the proxy thread starts them one after another; the collective ends with
    its last channel. Published sweeps show the per-channel step: while NCCL adds channels with
    size (docs/model.md#pipeline-fill), 2 x 4 H100 all-reduce, all-gather and reduce-scatter in
    LL rise by the same 14.7 us from 128 to 512 KiB although the all-reduce moves twice the bytes
    (docs/model.md#proxy-operations).
    """
    return proxy_op_per_channel_s(topo, params) * active


def proxy_ops_term(seconds: float, active: float, params: CostParams) -> Term:
    """The explanation of :func:`proxy_ops_s`."""
    return Term(
        name="proxy operations",
        seconds=seconds,
        detail=f"{active:.3g} channel{'' if active == 1 else 's'} x "
        f"{us(params.calibrated.proxy_op_s)}: the proxy thread "
        "starts one network operation per channel, one after another "
        f"(calibrated.proxy_op_latency, {_fitted(params, 'calibrated.proxy_op_latency')})",
    )


def base_latency(algorithm: Algorithm, protocol: Protocol, params: CostParams) -> float:
    """NCCL's base latency of an algorithm and protocol (0 where NCCL has none)."""
    return params.nccl_tuner.base_latency_s.get(algorithm, {}).get(protocol, 0.0)


def _hop(
    table: Mapping[Algorithm, Mapping[Protocol, float]], algorithm: Algorithm, protocol: Protocol
) -> float:
    """A cell of NCCL's hwLat row; algorithms NCCL does not model use the Ring row, protocols a
    row lacks its Simple cell."""
    row = table[algorithm] if algorithm in table else table[Algorithm.RING]
    return row.get(protocol, row.get(Protocol.SIMPLE, 0.0))


def clock_scale(topo: Topology, params: CostParams) -> float:
    """How much longer than NCCL's constant a hop takes on this GPU: Hopper's clock over this
    GPU's (``assumptions.clock_scaled_hops``, docs/model.md#gpu-clock); 1 for a GPU generation
    without a clock in ``gpu.clock_mhz``, for AMD's (RCCL keeps NCCL's constants) and in the
    tuner view."""
    if not params.assumptions.clock_scaled_hops or topo.gpu_arch not in CLOCKED_ARCHS:
        return 1.0
    return _clock_ratio(topo, params)


def message_clock_scale(topo: Topology, params: CostParams) -> float:
    """How much longer than its fitted (Hopper) value an all-to-all message costs on this GPU:
    Hopper's clock over this GPU's on every GPU with a clock in ``gpu.clock_mhz``, AMD's
    included (``assumptions.clock_scaled_messages``, docs/model.md#gpu-clock); 1 without one."""
    if not params.assumptions.clock_scaled_messages:
        return 1.0
    return _clock_ratio(topo, params)


def _clock_ratio(topo: Topology, params: CostParams) -> float:
    clocks = params.gpu.clock_mhz
    clock = clocks.get(topo.gpu_arch)
    return 1.0 if clock is None else clocks["hopper"] / clock


def intra_hop_latency(
    topo: Topology, algorithm: Algorithm, protocol: Protocol, params: CostParams
) -> float:
    """Per-hop latency inside the scale-up domain: NCCL's hwLat NVLink or PCI cell, scaled by
    the GPU's clock (:func:`clock_scale`: a GPU-to-GPU step is GPU work), plus the link's
    transport latency. Network hops are not scaled: their time is the NIC's and the proxy's."""
    hw = _hop(params.nccl_tuner.hop_latency_s[topo.intra_path], algorithm, protocol)
    scale = clock_scale(topo, params)
    if scale != 1.0:
        hw *= scale
    extra = topo.up.transport_latency_s if topo.up is not None else 0.0
    return hw + extra


def simple_floor(topo: Topology, params: CostParams) -> float:
    """One-way transport latencies a small Simple message exposes per network hop: the scale-out
    link's own count where the catalogue gives one (``simple_transport_floor``: 0 for
    GPUDirect-TCPXO) and ``assumptions.link_simple_floor`` is on, else
    ``assumptions.simple_transport_floor`` (NCCL's tuner count, 2)."""
    own = _link_simple_floor(topo, params)
    return params.assumptions.simple_transport_floor if own is None else own


def _link_simple_floor(topo: Topology, params: CostParams) -> float | None:
    """The scale-out link's own ``simple_transport_floor`` where it states one and
    ``assumptions.link_simple_floor`` is on; None otherwise."""
    own = topo.out.simple_floor if topo.out is not None else None
    return own if params.assumptions.link_simple_floor else None


def net_hop_latency(
    topo: Topology,
    algorithm: Algorithm,
    protocol: Protocol,
    size_bytes: float,
    params: CostParams,
    *,
    own_row: bool = False,
) -> float:
    """Per-hop network latency: NCCL's NET row plus the transport's own latency.

    NCCL's tuner adds its net plugin's reported latency once per hop, and once more for Simple
    (the flush: 2; ``simple_transport_count``, NCCL 2.30.7 ncclTopoTuneModel). Physically, on
    proxy-driven transports (EFA, TCPX(O), CXI) Simple's exposed handshake cost grows with the
    message: from :func:`simple_floor` one-way latencies for small messages (NCCL's 2, or the
    link's own count) to ``simple_transport_factor`` once the collective's size reaches
    ``simple_fill`` (64 MiB, assumed: a tuned value no test re-derives, data/cost_params.yaml;
    the factor is fitted on the EFA and Slingshot runs of 16-64 ranks, benchmarks/fits.py).
    It follows the size S, not the bytes a step carries (S / n for a ring), as fitted; on
    hundreds of ranks that is an extrapolation (docs/model.md, the per-hop latency). The tuner view
    keeps NCCL's 2 at every size. InfiniBand, whose transport latency is 0, is unchanged.
    """
    row = net_row(topo, algorithm, own_row=own_row)
    hw = _hop(params.nccl_tuner.hop_latency_s["net"], row, protocol)
    extra = topo.out.transport_latency_s if topo.out is not None else 0.0
    return hw + extra * _exposures(topo, protocol, size_bytes, params)


def _exposures(topo: Topology, protocol: Protocol, size_bytes: float, params: CostParams) -> float:
    """Transport latencies a network hop exposes (:func:`net_hop_latency`): one, or Simple's
    count on a proxy-driven transport, which grows with the collective's size."""
    if protocol is Protocol.SIMPLE and topo.out is not None and topo.out.is_plugin:
        low = simple_floor(topo, params)
        span = params.calibrated.simple_transport_factor - low
        return simple_count(low, span, size_bytes / params.calibrated.simple_fill_bytes)
    return 1.0


def latency_words(topo: Topology, protocol: Protocol, size_bytes: float, params: CostParams) -> str:
    """What a headline's latency is made of: steps, hops and launches, and, where Simple on a
    proxy-driven transport exposes more transport latencies per hop than a small message does,
    that count, which grows with the collective's size (a 500 MB reduce-scatter on 8 x A3 Mega
    had been 'latency-bound (steps, hops, launches)' with no word of the count: review EB 2)."""
    words = "steps, hops, launches"
    if topo.out is None or not topo.out.transport_latency_s:
        return words
    count = _exposures(topo, protocol, size_bytes, params)
    # said once the count is 1 % above a small message's (simple_count rises smoothly from the
    # floor: a count a hair above it is the floor, and 'and 2 ... latencies' would say nothing)
    if protocol is not Protocol.SIMPLE or count <= simple_floor(topo, params) * 1.01 + 1e-9:
        return words
    return (
        f"{words}, and {format_number(count)} {topo.out.link_id} transport latencies a network "
        "step, a count that grows with the collective's size"
    )


def protocol_bound(
    where: str,
    protocol: Protocol,
    bw: float,
    raw_bw: float,
    *,
    active: float,
    full: int,
    capped: bool,
) -> str:
    """The bottleneck as a headline names it: the tier, or, where the protocol's rate on the
    channels the collective gets is under half the tier's, that rate (LL on 4 of 16 channels
    at 5.1 GB/s was headed 'scale-up: nvlink4 (371 GB/s achievable per GPU)'), and NCCL's LL
    cap where it sets that rate (rings and trees alike: a 2 x DGX H100 tree/LL of 64 KiB at
    19.5 GB/s had been headed by its 185 GB/s chain, review DG)."""
    if bw >= raw_bw / 2:
        return where
    channels = f" on {active:.3g} of {full} channels" if active < full else ""
    cap = " (NCCL's LL cap)" if capped else ""
    # the tier's own rate beside the protocol's, like with like (review EB 5: 'LL: 20.4 GB/s
    # per rank (NCCL's LL cap), under network: 32 x efa-v2 per node (11.3 GB/s achievable
    # each)' had set a per-rank cap beside a smaller per-NIC figure)
    # the headline's own format, as the tier's words have it ('12.0 GB/s achievable each ...
    # would carry 12 GB/s' had printed one figure two ways: review EE 10)
    head = f"{protocol.value}{channels}: {format_bandwidth(bw)} per rank{cap}"
    tier = format_bandwidth(raw_bw)
    if f"{tier} achievable per GPU" in where:
        return f"{head}, under {where}"
    return f"{head}, where {where} would carry {tier} per rank"


def net_row(topo: Topology, algorithm: Algorithm, *, own_row: bool = False) -> Algorithm:
    """The row of NCCL's NET hwLat table ``algorithm``'s network hops take: the Tree row for
    every algorithm with one GPU per node ("With ppn=1 latencies are fully exposed, use the
    Tree network latency", NCCL 2.30.7 ncclTopoTuneModel), its own otherwise. A ring of
    8 x 1 GPU in LL had been priced at the Ring row's 2.7 us a hop, not 5.0 (review DG).
    ``own_row``: the algorithm's row whatever the GPUs per node, as NCCL prices a ring
    broadcast or reduce (``base + lat``, ``lat`` its own row) and as ibcalc prices
    point-to-point work, which NCCL does not tune (review DK)."""
    return Algorithm.TREE if topo.ranks_per_domain == 1 and not own_row else algorithm


def _net_hop_text(
    topo: Topology, algorithm: Algorithm, protocol: Protocol, hw: float, *, own_row: bool = False
) -> str:
    """``NCCL NET hop 5 us (...)``: the hwLat cell a network hop takes, and which row."""
    row = net_row(topo, algorithm, own_row=own_row)
    cell = f"{row.value}/{protocol.value}"
    if row is not algorithm:
        cell += " row: one GPU per node, as NCCL's tuner takes it"
    return f"NCCL NET hop {us(hw)} ({cell}, hwLat)"


def simple_count(low: float, span: float, fill: float) -> float:
    """One-way transport latencies a Simple network hop exposes: ``low + span x min(1, fill)``,
    and at least one, since the message crosses the network once whatever is hidden behind the
    pipeline (review CE: GPUDirect-TCPXO's count of 0 for a small message had priced an 8 B
    send/recv across its 47.7 us link at 22.4 us). Only a link whose own count is under one
    (TCPX, TCPXO: 0) is moved, below 1/8 of ``simple_fill`` (8 MiB), where its count of one is
    what its 8 MiB all-gather leaves room for. The kernels inline nothing else of it, so that
    they and the cost functions agree to the bit."""
    count = low + span * (fill if fill < 1.0 else 1.0)
    return count if count > 1.0 else 1.0


def us(seconds: float) -> str:
    """A time for explanations' prose, in us below a millisecond (``8.4 us``), else ms or s
    (``4.01 ms``, never ``4.01e+03 us``), without trailing zeros: a constant reads as its
    source gives it (NCCL's ``25 us``, ``2 x 3 us``), not with digits it lacks (review DP)."""
    return format_time(seconds, zeros=False)


def worked(seconds: float) -> str:
    """A time worked out in an explanation's prose (a transfer's bytes over a rate), to three
    figures with its zeros as the term column prints it: 'at 24.4 GB/s: 41.0 ms', not '41 ms'
    beside the column's 41.0 ms (review DS); :func:`us` is for constants."""
    return format_time(seconds)


def gbps(bw_Bps: float) -> str:
    """A bandwidth in GB/s for explanations (``371 GB/s``)."""
    gb = bw_Bps / 1e9
    # three significant digits, never an exponent (11,100 GB/s, not 1.11e+04)
    return f"{format_number(gb)} GB/s" if gb < 999.5 else f"{gb:,.0f} GB/s"


def intra_hop_detail(
    topo: Topology, algorithm: Algorithm, protocol: Protocol, params: CostParams
) -> str:
    """How :func:`intra_hop_latency` is made up."""
    hw = _hop(params.nccl_tuner.hop_latency_s[topo.intra_path], algorithm, protocol)
    text = f"NCCL {topo.intra_path} hop {us(hw)} ({algorithm.value}/{protocol.value}, hwLat"
    family = {"nvlink": "nvlink", "pci": "pcie"}.get(topo.intra_path, topo.intra_path)
    if topo.up is not None and not topo.up.link_id.startswith(family):
        # xGMI, HCCS, ICI ... take the tuner's NVLink (or PCI) row: say so, not 'nvlink' alone
        text += f"; {topo.up.link_id} is priced on that row"
    text += ")" + clock_words(clock_scale(topo, params), topo, params)
    extra = topo.up.transport_latency_s if topo.up is not None else 0.0
    if extra:
        text += f" + {us(extra)} transport ({topo.up.link_id if topo.up else ''})"
    return text


def clock_words(scale: float, topo: Topology, params: CostParams) -> str:
    """`` x 1980/1410 (Hopper's clock over the ampere GPU's, MHz)``: the words for a cost scaled
    by ``scale`` (:func:`clock_scale`, :func:`message_clock_scale`); empty when 1. The ratio is
    written as the clocks' fraction, which multiplies out exactly: rounded to two places it
    had not (15 messages x 2.4 us x 1.40 = 50.4 us beside the 50.6 us printed on an A100, and
    x 0.82 for MI355X's 0.825)."""
    if scale == 1.0:
        return ""
    clocks = params.gpu.clock_mhz
    return (
        f" x {clocks['hopper']:g}/{clocks[topo.gpu_arch]:g} (Hopper's clock over the "
        f"{topo.gpu_arch} GPU's, MHz)"
    )


def net_hop_detail(
    topo: Topology,
    algorithm: Algorithm,
    protocol: Protocol,
    size_bytes: float,
    params: CostParams,
    *,
    own_row: bool = False,
) -> str:
    """How :func:`net_hop_latency` is made up."""
    hw = _hop(
        params.nccl_tuner.hop_latency_s["net"], net_row(topo, algorithm, own_row=own_row), protocol
    )
    text = _net_hop_text(topo, algorithm, protocol, hw, own_row=own_row)
    extra = topo.out.transport_latency_s if topo.out is not None else 0.0
    if extra:
        total = net_hop_latency(topo, algorithm, protocol, size_bytes, params, own_row=own_row) - hw
        text += f" + {total / extra:.3g} x {us(extra)} {topo.out.link_id if topo.out else ''} "
        if topo.out is None or not topo.out.is_plugin:
            text += "transport latency (verbs: once per hop)"
        elif protocol is not Protocol.SIMPLE:
            text += "transport latency (fitted; once per hop)"
        else:
            floor = simple_floor(topo, params)
            whose = (
                "NCCL's count"
                if _link_simple_floor(topo, params) is None
                else "the link's own count"
            )
            # at least one whatever the floor (simple_count): a floor under one says so, with
            # the size its ramp reaches one at (review CF: "exposes 0" beside "1 x")
            up_to = _one_count_bytes(floor, params) / MiB
            small = (
                f"{floor:g} for a small message ({whose})"
                if floor >= 1.0
                else f"1 for a message up to {up_to:.3g} MiB (at least one: {whose} is {floor:g})"
            )
            factor = params.calibrated.simple_transport_factor
            # a floor above the factor falls to it (an override's; review CG)
            moving = "rising" if factor >= max(floor, 1.0) else "falling"
            text += (
                f"transport latency (fitted; Simple exposes {small}, {moving} to {factor:g} at "
                f"a {format_size(params.calibrated.simple_fill_bytes)} collective)"
            )
    return text


def _one_count_bytes(floor: float, params: CostParams) -> float:
    """The collective size at which a Simple hop's ramp from ``floor`` reaches one transport
    latency (8 MiB for a floor of 0), below which :func:`simple_count` holds it at one."""
    span = params.calibrated.simple_transport_factor - floor
    return params.calibrated.simple_fill_bytes * (1.0 - floor) / span if span > 0 else 0.0


def tree_levels_term(
    topo: Topology,
    algorithm: Algorithm,
    protocol: Protocol,
    size_bytes: float,
    params: CostParams,
    *,
    levels: int,
) -> Term:
    """The explanation of a tree's ``levels`` network levels, up and down, between domains."""
    net = net_hop_latency(topo, algorithm, protocol, size_bytes, params)
    depth = int(math.log2(topo.domains)) if topo.domains > 1 else 0
    # across sites the top levels are WAN hops (their own term): say what the rest are
    why = (
        f"log2 of {topo.domains} {topo.node}s"
        if levels == depth
        else f"log2 of {topo.domains} {topo.node}s = {depth}, less {depth - levels} across sites"
    )
    return Term(
        name=f"tree levels across {topo.node}s",
        seconds=2 * levels * net,
        detail=f"2 x {plural(levels, 'level')} ({why}) x {us(net)}: "
        + net_hop_detail(topo, algorithm, protocol, size_bytes, params),
    )


def wan_levels_term(
    topo: Topology, algorithm: Algorithm, protocol: Protocol, params: CostParams, *, levels: int
) -> Term:
    """The explanation of a tree's top ``levels`` levels, up and down, across sites."""
    wan = wan_hop_latency(topo, algorithm, protocol, params)
    return Term(
        name="tree levels across sites",
        seconds=2 * levels * wan,
        detail=f"2 x {plural(levels, 'level')} (log2 of {topo.sites} sites) x {us(wan)}: "
        + wan_hop_detail(topo, algorithm, protocol, params),
    )


def ring_wan_crossings(ring_ranks: int, sites: int, hops: int) -> int:
    """WAN links that ``hops`` consecutive hops of a ring cross at most, its ``ring_ranks``
    ranks in ``sites`` equal runs joined by one WAN link each (``s`` WAN links around the
    ring). A chunk's path sets the time: an all-gather's or reduce-scatter's last chunk goes
    ``n - 1`` hops, an all-reduce's ``2(n - 1)``, and ``h`` consecutive hops meet at most
    ``floor((h - 1) / (n / s)) + 1`` of the links, one in every run: ``s`` for an all-gather
    and ``2s`` for an all-reduce with 3 or more ranks per site. NCCL's tuner counts ``N - 1``
    and ``2(N - 1)`` network steps (``ncclTopoTuneModel``), which is a few microseconds short
    across nodes but a whole WAN crossing short across sites (800 km: 4 ms): an all-gather
    over 2 sites was 4 ms, half the 8 ms its last chunk's path takes at the speed of light."""
    if sites < 2 or hops < 1:
        return 0
    return min(hops, (hops - 1) // (ring_ranks // sites) + 1)


def wan_hop_latency(
    topo: Topology,
    algorithm: Algorithm,
    protocol: Protocol,
    params: CostParams,
    *,
    own_row: bool = False,
) -> float:
    """Per-hop latency of a WAN crossing: NCCL's NET row plus the link's one-way latency."""
    if topo.wan is None:
        return 0.0
    row = net_row(topo, algorithm, own_row=own_row)
    hw = _hop(params.nccl_tuner.hop_latency_s["net"], row, protocol)
    return hw + topo.wan.transport_latency_s


def wan_hop_detail(
    topo: Topology, algorithm: Algorithm, protocol: Protocol, params: CostParams
) -> str:
    """How one WAN hop's time is made: NCCL's NET hop plus the WAN link's one-way latency."""
    if topo.wan is None:
        return ""
    hw = _hop(params.nccl_tuner.hop_latency_s["net"], net_row(topo, algorithm), protocol)
    return (
        f"{_net_hop_text(topo, algorithm, protocol, hw)} + "
        f"{topo.wan.link_id} one way {us(topo.wan.transport_latency_s)}"
    )


def wan_transfer_detail(
    topo: Topology, params: CostParams, multiplier: float, size_bytes: float
) -> str:
    """How the WAN part of a transfer is made: ``multiplier`` x S over the site's WAN links,
    and whether their rate or NCCL's buffers in flight per round trip bound it
    (:meth:`Topology.wan_bw_Bps`; the WAN crossing of a 1 GB all-reduce, 238 ms, had been
    explained as "WAN between sites" alone)."""
    wan = topo.wan
    if wan is None:
        return ""
    rate = topo.wan_bw_Bps(params)
    text = (
        f"the WAN between sites {multiplier:g} x S over {wan.nics_per_domain} x {wan.link_id} "
        f"per site at {gbps(rate)} = {worked(multiplier * size_bytes / rate)}"
    )
    reason = wan_rate_reason(topo, params)
    return f"{text} ({reason})" if reason else text


def wan_rate_reason(
    topo: Topology, params: CostParams, protocol: Protocol = Protocol.SIMPLE
) -> str:
    """Why a site's WAN rate is below its links' (:meth:`Topology.wan_bw_Bps`), or "": NCCL
    keeps only so many buffers in flight per round trip of a long link."""
    wan = topo.wan
    if wan is None or topo.wan_bw_Bps(params, protocol) >= wan.domain_bw_Bps:
        return ""
    window = wan_window_bytes(params, protocol)
    buffer = (
        f"{window / 2**20:g} MiB"
        if protocol is Protocol.SIMPLE
        else f"{format_size(window)} of {protocol.value} lines"
    )
    return (
        f"bound by NCCL's buffers in flight, {channels(topo, params)} channels x {buffer} per "
        f"round trip of {us(2 * wan.transport_latency_s)}; the links give "
        f"{gbps(wan.domain_bw_Bps)}"
    )


def wan_rate_clause(topo: Topology, params: CostParams, protocol: Protocol) -> str:
    """:func:`wan_rate_reason` as a clause to append ("; bound by ..."), or "" when the links
    themselves set the rate (an explanation had read "usable); ; a collective ...")."""
    reason = wan_rate_reason(topo, params, protocol)
    return f"; {reason}" if reason else ""


def base_term(algorithm: Algorithm, protocol: Protocol, params: CostParams, count: int = 1) -> Term:
    """The explanation of ``count`` x :func:`base_latency` (a pipeline of several collectives
    pays one base each)."""
    each = base_latency(algorithm, protocol, params)
    times = f"{count} x " if count != 1 else ""
    return Term(
        name="base latency",
        seconds=count * each,
        detail=f"{times}NCCL {algorithm.value}/{protocol.value} base latency {us(each)} (baseLat)",
    )


def _hop_term(
    name: str,
    count: float,
    kind: str,
    topo: Topology,
    *,
    algorithm: Algorithm,
    protocol: Protocol,
    size_bytes: float,
    params: CostParams,
    own_row: bool = False,
) -> Term | None:
    """``count`` hops of ``kind`` (``intra``, ``net`` or ``wan``), each worked out as
    :func:`intra_hop_latency`, :func:`net_hop_latency` or :func:`wan_hop_latency` for
    ``algorithm``'s row of NCCL's hwLat table; None when there are none."""
    if kind == "intra":
        each = intra_hop_latency(topo, algorithm, protocol, params)
        how = intra_hop_detail(topo, algorithm, protocol, params)
    elif kind == "net":
        each = net_hop_latency(topo, algorithm, protocol, size_bytes, params, own_row=own_row)
        how = net_hop_detail(topo, algorithm, protocol, size_bytes, params, own_row=own_row)
    else:
        each = wan_hop_latency(topo, algorithm, protocol, params, own_row=own_row)
        link = topo.wan.link_id if topo.wan is not None else ""
        how = f"NCCL NET hop + the WAN link's one-way latency ({link})"
    if count <= 0 or each <= 0:
        return None
    return Term(name=name, seconds=count * each, detail=f"{count:g} x {us(each)}: {how}")


def hop_terms(
    rows: Sequence[tuple[str, float, str]],
    topo: Topology,
    *,
    algorithm: Algorithm,
    protocol: Protocol,
    size_bytes: float,
    params: CostParams,
    own_row: bool = False,
) -> list[Term]:
    """:func:`_hop_term` for each (name, count, kind) of ``rows`` that has hops."""
    terms = []
    for name, count, kind in rows:
        found = _hop_term(
            name,
            count,
            kind,
            topo,
            algorithm=algorithm,
            protocol=protocol,
            size_bytes=size_bytes,
            params=params,
            own_row=own_row,
        )
        if found is not None:
            terms.append(found)
    return terms


def network_words(topo: Topology, traffic: Traffic, *, inside: bool = False) -> str:
    """What holds the NICs below their own rate for ``traffic``: their host link's cap and the
    uplinks' taper (`` (each NIC capped by pcie5 at 50.4 GB/s; tapered uplinks x2 slower)``;
    the oversubscription end to end, at the leaves or above them: a design tapered at its
    spines had read 'leaf uplinks', review DJ L2), else empty. ``inside``: to end a
    parenthesis already open (``; each NIC capped ...``)."""
    out = topo.out
    limits = []
    if out is not None and out.nic_cap is not None:
        limits.append(f"each NIC capped by {out.nic_cap} at {fixed(out.nic_bw_Bps / 1e9, 1)} GB/s")
    contention = topo.contention(traffic)
    if contention > 1:
        limits.append(f"tapered uplinks x{format_slowdown(contention)} slower")
    if not limits:
        return ""
    words = "; ".join(limits)
    return f"; {words}" if inside else f" ({words})"


def protocol_words(protocol: Protocol, params: CostParams) -> str:
    """How a non-Simple protocol slows a point-to-point transfer (empty for Simple)."""
    if protocol is Protocol.SIMPLE:
        return ""
    return (
        f"; {protocol.value} carries {protocol_factor(protocol, params):.3g} of each line as "
        "data (the rest is flags), so the transfer takes that much longer"
    )


def ll_network_transfer(
    topo: Topology, size_bytes: float, protocol: Protocol, params: CostParams
) -> float:
    """Least time LL needs to move ``size_bytes`` per rank across a plugin transport.

    On transports driven by a host proxy through a network plugin (EFA, GPUDirect-TCPX(O),
    Slingshot CXI: the links with a ``transport_latency``), LL's 8-byte flagged lines cross the
    network slowly while the proxy's pipeline fills: measured small all-reduces take 20-125 us
    more at 64 KiB than at 1 KiB (2 x p4de and 2 x p5 on EFA, 2 x A3 Mega on TCPXO, 16 x 4 H100 on
    Slingshot), about 1 GB/s per rank (``ll_net_bandwidth``, fitted in benchmarks/fits.py); past
    ``ll_net_saturation`` (64 KiB) the extra stops growing: 2 x A3 Mega runs 64 KiB to 512 KiB in
    159-174 us. Over InfiniBand and RoCE verbs the same sizes cost a few microseconds more
    (2 x 4 H100 NDR200: +7.7 us), so no extra applies there. NCCL's tuner does not know it (the
    tuner view has no limit), so it keeps LL where LL is slow until its own estimate switches to
    Simple: measured 2 x p5 runs 1 MiB faster than 64 KiB, the one place a predicted time falls as
    size grows. For a fixed protocol the time never falls.
    """
    ll_net_Bps = params.calibrated.ll_net_Bps
    if protocol is not Protocol.LL or topo.domains < 2 or ll_net_Bps is None:
        return 0.0
    if topo.out is None or not topo.out.is_plugin or topo.out.transport_latency_s <= 0:
        return 0.0
    return min(size_bytes, params.assumptions.ll_net_saturation_bytes) / ll_net_Bps


def ll_network_text(
    topo: Topology, size_bytes: float, protocol: Protocol, params: CostParams, bw_time_s: float
) -> str:
    """The explanation's clause when :func:`ll_network_transfer` sets the transfer (it is longer
    than ``bw_time_s``, the bytes at the bottleneck's rate); empty otherwise."""
    floor = ll_network_transfer(topo, size_bytes, protocol, params)
    ll_net_Bps = params.calibrated.ll_net_Bps
    if floor <= bw_time_s or ll_net_Bps is None:
        return ""
    held = min(size_bytes, params.assumptions.ll_net_saturation_bytes)
    return (
        f"; held to {worked(floor)}, longer: LL across a plugin transport moves min(S, "
        f"{format_size(params.assumptions.ll_net_saturation_bytes)}) = {format_size(held)} at "
        f"{gbps(ll_net_Bps)} (calibrated.ll_net_bandwidth, "
        f"{_fitted(params, 'calibrated.ll_net_bandwidth')})"
    )


def ll_cap_Bps(topo: Topology, params: CostParams) -> float:
    """NCCL's LL bus-bandwidth cap for this GPU generation and node count (Hopper's row for a
    generation NCCL's table does not list). On several nodes NCCL picks the row by CPU vendor:
    AMD x86 hosts take ``ll_max_busbw_amd_host`` where ``assumptions.amd_host_ll_cap`` is set
    (NCCL's tuner view)."""
    tuner = params.nccl_tuner
    arch, nodes, amd = _ll_cap_row(topo, params)
    if amd:
        return tuner.ll_max_busbw_amd_host_Bps[nodes - 1]
    return tuner.ll_max_busbw_Bps[arch][nodes]


def _ll_cap_row(topo: Topology, params: CostParams) -> tuple[str, int, bool]:
    """The row and column of NCCL's LL cap table: the GPU generation (Hopper's for one the
    table does not list), 0/1/2 for one scale-up domain, 2, 3 or more (NCCL's nNodes: a rack
    of NVLink-joined nodes is one), and whether the AMD-host row applies (several domains,
    ``assumptions.amd_host_ll_cap``)."""
    arch = topo.arch if topo.arch in params.nccl_tuner.ll_max_busbw_Bps else "hopper"
    nodes = min(topo.domains, 3) - 1
    amd = nodes > 0 and topo.host_cpu == "amd" and bool(params.assumptions.amd_host_ll_cap)
    return arch, nodes, amd


def ll_network_bound(
    topo: Topology, size_bytes: float, protocol: Protocol, params: CostParams, bw_time_s: float
) -> str | None:
    """The bottleneck's headline when :func:`ll_network_transfer` sets the transfer (it is
    longer than ``bw_time_s``, the bytes at the bottleneck's rate); None otherwise."""
    if ll_network_transfer(topo, size_bytes, protocol, params) <= bw_time_s:
        return None
    assert topo.out is not None  # the floor is 0 without a plugin transport
    return (
        f"LL across the {topo.out.link_id} plugin transport "
        f"({gbps(params.calibrated.ll_net_Bps or 0.0)} per rank, calibrated.ll_net_bandwidth)"
    )


def ll_cap_words(topo: Topology, params: CostParams) -> str:
    """Which row of NCCL's LL cap :func:`ll_cap_Bps` took, in words."""
    arch, nodes, amd = _ll_cap_row(topo, params)
    # the row counts scale-up domains: on an NVL72 rack of 16 nodes it is the one-domain row,
    # which "on one node" had contradicted
    node = topo.node
    where = (f"one {node}", f"2 {node}s", f"3 or more {node}s")[nodes]
    # AMD's CDNA (RCCL: HIP reports gfx9xx as compute capability 9.x, Hopper's range of
    # NCCL's table), Gaudi, TPU ...: the row NCCL's rule gives a generation it does not list,
    # said on several nodes too, where "hopper on 3 or more nodes" had called an MI300X a Hopper
    row = (
        f"{arch}'s row, which NCCL gives {topo.arch}, a generation its table does not list,"
        if arch != topo.arch
        else arch
    )
    return f"{row} on {where}{', AMD host row' if amd else ''}; nccl_tuner.ll_max_busbw"


def ring_protocol_words(
    raw_bw: float, protocol: Protocol, topo: Topology, params: CostParams
) -> str:
    """How a ring's protocol rate comes from its tier's (:func:`ring_protocol_bw`), for the
    transfer term: the payload factor, and NCCL's LL cap where it binds (empty for Simple)."""
    if protocol is Protocol.SIMPLE:
        return ""
    factor = protocol_factor(protocol, params)
    words = f"the tier's {gbps(raw_bw)} x {factor:g} ({protocol.value} payload)"
    if protocol is Protocol.LL:
        cap = ll_cap_Bps(topo, params)
        if cap < raw_bw * factor:
            words += (
                f" = {gbps(raw_bw * factor)}, capped at {gbps(cap)} (NCCL's LL bus-bandwidth "
                f"cap, {ll_cap_words(topo, params)})"
            )
    return words


def protocols_for(topo: Topology) -> tuple[Protocol, ...]:
    """Protocols NCCL would enable on this topology."""
    if topo.ll128_allowed:
        return (Protocol.LL, Protocol.LL128, Protocol.SIMPLE)
    return (Protocol.LL, Protocol.SIMPLE)


def protocol_factor(protocol: Protocol, params: CostParams) -> float:
    """Payload fraction of a protocol: LL 0.5, LL128 0.92, Simple 1 (docs/model.md#protocols)."""
    if protocol is Protocol.LL:
        return params.nccl_tuner.ring_ll_factor
    if protocol is Protocol.LL128:
        return params.nccl_tuner.ring_ll128_factor
    return 1.0


def ring_protocol_bw(
    bw_Bps: float, protocol: Protocol, topo: Topology, params: CostParams
) -> float:
    """Apply a protocol's payload factor and cap to a ring bandwidth (docs/model.md#protocols)."""
    if protocol is Protocol.LL:
        return min(bw_Bps * params.nccl_tuner.ring_ll_factor, ll_cap_Bps(topo, params))
    return bw_Bps * protocol_factor(protocol, params)


def tree_corrected(protocol: Protocol, params: CostParams) -> bool:
    """Whether a tree's bandwidth takes NCCL's size-bucket correction (:func:`tree_correction`):
    always in the tuner view, as NCCL does; in the physical view on top of the fill for LL128 and
    Simple, which the fill alone leaves too fast at mid sizes, not for LL
    (docs/model.md#tree-correction-and-ring-plateau)."""
    return not params.pipeline.model_fill or protocol is not Protocol.LL


def tree_correction(size_bytes: float, protocol: Protocol, params: CostParams) -> float:
    """NCCL's size-dependent tree bandwidth correction (1.0 outside 64 B .. 512 MiB): its
    size-bucket table as NCCL reads it in the tuner view, and read between the buckets in the
    physical view (:func:`correction_at`)."""
    return correction_at(
        size_bytes,
        params.nccl_tuner.tree_correction[protocol],
        params.nccl_tuner.tree_correction_first_bucket_bytes,
        smooth=bool(params.pipeline.model_fill),
    )


def correction_at(
    size_bytes: float, table: Sequence[float], first: float, *, smooth: bool
) -> float:
    """The factor of a size-bucket ``table`` (bucket ``i`` starts at ``first x 2^i``; 1.0 below
    the first and past the last) at ``size_bytes``.

    NCCL's tuner takes the bucket's factor as it is, a step at every power of two. A step up
    makes a bigger buffer faster: a tree/LL128 all-reduce on 4 x DGX H100 takes 127.6 us for
    4,190,208 B and 116.7 us for 4 MiB, where the factor rises from 0.6 to 0.8. ``smooth`` (the
    physical view) reads the table as samples at each bucket's start of a ramp that is smooth
    in size, linear in log2(size) up to the next bucket's factor (1.0 after the last): the same
    factor at every power of two, so the published sweeps (-f 2) are priced as before, and
    between them a factor that grows at most 0.48 as fast as the size (0.6 to 0.8 over a
    doubling: 0.2 / (0.6 ln 2)), so the time keeps rising."""
    if size_bytes < first:
        return 1.0
    position = math.log2(size_bytes / first)
    index = int(position)
    if index >= len(table):
        return 1.0
    value = table[index]
    if not smooth:
        return value
    after = table[index + 1] if index + 1 < len(table) else 1.0
    return value + (after - value) * (position - index)


def make_cost(
    algorithm: Algorithm,
    protocol: Protocol,
    *,
    latency_s: float,
    transfer_s: float,
    bottleneck: str,
    formula: str,
    terms: Sequence[Term],
    equivalent: bool = False,
    fill_s: float = 0.0,
    period_s: float | None = None,
    period_words: str = "",
    latency_words: str = "steps, hops, launches",
) -> Cost:
    """Build a :class:`Cost`, guarding against negative or non-finite times; ``terms`` explain
    it term by term (they add up to one operation's time: tests/engine/test_properties.py)."""
    if not (math.isfinite(latency_s) and math.isfinite(transfer_s)):
        raise ValueError(f"{algorithm}/{protocol}: non-finite cost")
    fixed = max(latency_s, 0.0) + fill_s
    if fixed > max(transfer_s, 0.0):
        # most of the time is latency: the tier the bytes go through is not what to change.
        # The figures are one operation's (the terms' sum), named so beside a back-to-back
        # period that the time shown may be; the fill is named where it shows in the figure.
        # (worked figures, to three figures with their zeros, as the headline's time; compared
        # at three figures, '96 us of 96.0 us' had read as two figures: review DQ)
        shows = format_time(max(latency_s, 0.0), zeros=False) != format_time(fixed, zeros=False)
        what = "latency and pipeline fill" if shows else "latency"
        one = format_time(fixed + max(transfer_s, 0.0))
        of = f"one operation's {one}" if period_s is not None else one
        bottleneck = (
            f"{what}: {format_time(fixed)} of {of} ({latency_words}); the bytes are bound by "
            f"{bottleneck}"
        )
    return Cost(
        algorithm=algorithm,
        protocol=protocol,
        latency_s=max(latency_s, 0.0),
        transfer_s=max(transfer_s, 0.0),
        bottleneck=bottleneck,
        equivalent_busbw=equivalent,
        formula=formula,
        fill_s=fill_s,
        period_s=period_s,
        period_words=period_words,
        terms=tuple(terms),
    )


class Timing:
    """The numbers of one (algorithm, protocol) cost, with its explanation built on demand.

    A cost function works out the times first and hands the words (``Cost.terms``, the
    bottleneck, the formula) over as ``explain``, which builds the full :class:`Cost` only
    when one is shown: ranking the candidates needs only the numbers. ``latency_s`` and
    ``transfer_s`` are clamped at 0 as :func:`make_cost` clamps them, and a non-finite one is
    refused here already, so :attr:`single_s` is the built cost's ``single_s`` to the bit.
    """

    __slots__ = (
        "_explain",
        "algorithm",
        "fill_s",
        "latency_s",
        "period_s",
        "protocol",
        "transfer_s",
    )

    def __init__(
        self,
        algorithm: Algorithm,
        protocol: Protocol,
        latency_s: float,
        transfer_s: float,
        explain: Callable[[], Cost],
        *,
        fill_s: float = 0.0,
        period_s: float | None = None,
    ) -> None:
        if not (math.isfinite(latency_s) and math.isfinite(transfer_s)):
            raise ValueError(f"{algorithm}/{protocol}: non-finite cost")
        self.algorithm = algorithm
        self.protocol = protocol
        self.latency_s = max(latency_s, 0.0)
        self.transfer_s = max(transfer_s, 0.0)
        self.fill_s = fill_s
        self.period_s = period_s
        self._explain = explain

    @property
    def single_s(self) -> float:
        """Time of one operation on its own, as :attr:`Cost.single_s`."""
        return self.latency_s + self.transfer_s + self.fill_s

    def cost(self) -> Cost:
        """The full :class:`Cost`, with its terms and how each was worked out."""
        return self._explain()


def bytes_factor(collective: Collective, ranks: int) -> float:
    """Bytes each rank must send per byte of S for a point-to-point algorithm (the lower bound).

    2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for
    broadcast, reduce and sendrecv (docs/model.md#why-the-busbw-factors,
    docs/model.md#lower-bounds).
    """
    n = ranks
    if collective is Collective.ALL_REDUCE:
        return 2.0 * (n - 1) / n
    if collective in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL):
        return (n - 1) / n
    return 1.0


def fit_origin(params: CostParams, dotted: str, fitted: str) -> str:
    """Where a calibrated constant of an explanation comes from: ``fitted`` (the built-in fit,
    e.g. 'fitted by benchmarks/fits.py to small all-to-all rows'), or the override file that
    set it (review BX: an override's value had been credited to the fit)."""
    given = params.provenance.get(dotted)
    if given is not None and given.previous is not None:
        return f"set by {given.origin}"
    return fitted


def _fitted(params: CostParams, dotted: str) -> str:
    """:func:`fit_origin` of a constant fitted by benchmarks/fits.py."""
    return fit_origin(params, dotted, "fitted by benchmarks/fits.py")
