"""The error band of an estimate: where a measurement of it is likely to fall.

The band is empirical. ``benchmarks/accuracy.py`` predicts every published measurement in the
repository with constants fitted without that measurement's source (leave-one-source-out) and
records the signed relative time error ``r = (predicted - measured) / measured``; its 10th and
90th percentiles, per size regime (latency <= 64 KiB, mid, bandwidth >= 64 MiB) and transport
class (one domain over PCIe or a bridge; one domain over an accelerator fabric; InfiniBand/RoCE
verbs; plugin transports such as EFA, TCPX(O), Slingshot CXI),
are ``error_band.time_error_quantiles`` in ``data/cost_params.yaml``. A measurement then lies in

    predicted / (1 + q90) <= measured <= predicted / (1 + q10)

for about 80 % of held-out rows (``tests/reference/test_band.py`` checks the coverage). The
band says how sure the number is on clusters the model has not seen; it is not a confidence
interval of a fitted parameter.
"""

from __future__ import annotations

import math

from ibcalc.engine.algorithms.alltoall import alltoall_bytes
from ibcalc.engine.base import Topology
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Protocol, busbw_factor

__all__ = ["regime_of", "time_range", "transport_class", "wire_floor_s"]

#: Latency regime: sizes of 64 KiB and less; bandwidth regime: 64 MiB and more.
LATENCY_MAX_BYTES = 64 * 2**10
BANDWIDTH_MIN_BYTES = 64 * 2**20
#: Least 1 + r the band divides by (a 95 % faster prediction still gives a finite bound).
_FLOOR = 0.05
# enum members as module globals for the layout search's hot paths (engine.types says why)
_RING, _NVLS, _P2P, _PXN = Algorithm.RING, Algorithm.NVLS, Algorithm.P2P, Algorithm.PXN
_ALLTOALLS = (Algorithm.PAIRWISE, Algorithm.PXN)
_GATHER_SCATTER = (Collective.ALL_GATHER, Collective.REDUCE_SCATTER)
#: Data bytes per line byte on the wire: an LL line carries 8 bytes of data in 16 (NCCL 2.30.7
#: src/device/prims_ll.h), an LL128 line 120 in 128 (src/device/prims_ll128.h), Simple all.
_LINE_PAYLOAD = {Protocol.LL: 0.5, Protocol.LL128: 120 / 128, Protocol.SIMPLE: 1.0}


def regime_of(size_bytes: float) -> str:
    """``latency``, ``mid`` or ``bandwidth``."""
    if size_bytes <= LATENCY_MAX_BYTES:
        return "latency"
    if size_bytes >= BANDWIDTH_MIN_BYTES:
        return "bandwidth"
    return "mid"


def transport_class(topo: Topology) -> str:
    """``fabric`` (one domain whose GPUs meet over an accelerator fabric: NVSwitch, an NVL72
    rack, an NVLink or xGMI mesh, a TPU torus), ``scale-up`` (one domain otherwise: PCIe, PCIe
    staged through the host, an NVLink-bridged pair), ``plugin`` (a network transport with its
    own latency: EFA, TCPX(O), CXI) or ``verbs`` (InfiniBand, RoCE)."""
    if topo.domains == 1 or topo.out is None:
        return "fabric" if topo.up is not None and topo.up.fabric else "scale-up"
    return "plugin" if topo.out.is_plugin else "verbs"


def wire_floor_s(
    collective: Collective,
    algorithm: Algorithm,
    protocol: Protocol,
    size_bytes: float,
    topo: Topology,
) -> float:
    """The least time a run of ``algorithm`` can show at its links' line rates, with no
    latency at all (0 where no such bound is worked out here).

    A ring moves every byte over every link of the ring, and nccl-tests' busbw is that per-link
    rate summed over the rings (nccl-tests doc/PERFORMANCE.md derives busbw so): it cannot pass
    the line rate of a domain's NICs together, through which every ring leaves it, nor a GPU's
    scale-up line rate on one domain, where each ring takes m scale-up hops; across domains it
    takes m - 1 in each, spread over m GPUs, so the scale-up bound is m / (m - 1) times the
    GPU's rate (a review). A send/recv pair moves S over its own path: the GPUs'
    share of the scale-up links that join them, or across domains the GPU's NICs. Each in the
    protocol's data bytes per line byte (``_LINE_PAYLOAD``). An all-to-all moves each GPU's
    share over its own paths at once (:func:`_alltoall_floor_s`). An NVLS all-gather or
    reduce-scatter has each GPU receive or send (n-1)/n x S over its scale-up port, so its
    busbw cannot pass that port's line rate (review BH: the band's fast end had reached 486 GB/s
    on NVLink 4's 450 with a wider band). Trees, the NVLS all-reduce and CollNet report an
    equivalent busbw and get no floor here."""
    if algorithm in _ALLTOALLS:
        return _alltoall_floor_s(size_bytes, topo, protocol, aggregated=algorithm is _PXN)
    ceiling = math.inf
    if algorithm is _RING:
        across = topo.out is not None and topo.domains > 1
        if topo.up is not None and topo.m > 1:
            ceiling = topo.up.line_Bps * (topo.m / (topo.m - 1) if across else 1.0)
        if across and topo.out is not None:
            ceiling = min(ceiling, topo.out.nic_line_Bps * topo.out.nics_per_domain)
    elif algorithm is _NVLS and collective in _GATHER_SCATTER:
        if topo.up is not None and topo.m > 1:
            ceiling = topo.up.line_Bps
    elif algorithm is _P2P:
        if topo.up is not None and topo.m > 1:
            ceiling = topo.up.line_Bps * topo.up.peer_share
        if topo.out is not None and topo.domains > 1:
            ceiling = min(ceiling, topo.out.nic_line_Bps * topo.gpu_nics)
    if math.isinf(ceiling):
        return 0.0
    busbw_Bps = ceiling * _LINE_PAYLOAD[protocol]
    return size_bytes * busbw_factor(collective, topo.ranks) / busbw_Bps


def _alltoall_floor_s(
    size_bytes: float, topo: Topology, protocol: Protocol, *, aggregated: bool
) -> float:
    """An all-to-all's time at its paths' line rates (docs/model.md, all-to-all): each GPU sends
    ``(m-1)/n x S`` over its scale-up links, with PXN also the ``(m-1)/m`` of its network bytes
    it forwards to the GPU on their rail, and ``(n-m)/n x S`` through its share of its domain's
    NICs, all at once; the slower path bounds the time. A review found 10 GB on 2 x DGX H100
    with a likely low of 99.6 ms, busbw 94.1 GB/s, where 5 GB a GPU over its 50 GB/s NDR port
    takes 100 ms."""
    m = topo.m
    up_bytes, net_bytes = alltoall_bytes(size_bytes, topo, aggregated=aggregated)
    slowest = 0.0
    if topo.up is not None and m > 1:
        slowest = up_bytes / topo.up.line_Bps
    if topo.out is not None and topo.domains > 1:
        nic_share_Bps = topo.out.nic_line_Bps * topo.out.nics_per_domain / m
        slowest = max(slowest, net_bytes / nic_share_Bps)
    return slowest / _LINE_PAYLOAD[protocol]


def time_range(
    time_s: float,
    size_bytes: float,
    topo: Topology,
    params: CostParams,
    floor_s: float = 0.0,
) -> tuple[float, float]:
    """(low, high) time a measurement of this estimate is likely to show.

    Across sites the low end is at least one one-way WAN latency: every rank's result needs
    data from another site, and the residuals that set the band hold no WAN run (over 800 km
    a send/recv of 4.0 ms had a likely low of 3.1 ms, faster than light in fibre). The low end
    is at least ``floor_s`` too, the time at the wire's line rate (:func:`wire_floor_s`): two
    reviews found 10 GB over one NDR port (50 GB/s) with a likely busbw of up to 50.2 GB/s."""
    q10, q90 = params.error_band.time_error_quantiles[regime_of(size_bytes)][transport_class(topo)]
    low = max(time_s / max(1.0 + q90, _FLOOR), floor_s)
    high = time_s / max(1.0 + q10, _FLOOR)
    if topo.sites > 1 and topo.wan is not None:
        low = max(low, topo.wan.transport_latency_s)
    return min(low, time_s), max(high, time_s)
