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

from ibcalc.engine.base import Topology
from ibcalc.engine.params import CostParams

__all__ = ["regime_of", "time_range", "transport_class"]

#: Latency regime: sizes of 64 KiB and less; bandwidth regime: 64 MiB and more.
LATENCY_MAX_BYTES = 64 * 2**10
BANDWIDTH_MIN_BYTES = 64 * 2**20
#: Least 1 + r the band divides by (a 95 % faster prediction still gives a finite bound).
_FLOOR = 0.05


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


def time_range(
    time_s: float, size_bytes: float, topo: Topology, params: CostParams
) -> tuple[float, float]:
    """(low, high) time a measurement of this estimate is likely to show.

    Across sites the low end is at least one one-way WAN latency: every rank's result needs
    data from another site, and the residuals that set the band hold no WAN run (over 800 km
    a send/recv of 4.0 ms had a likely low of 3.1 ms, faster than light in fibre)."""
    q10, q90 = params.error_band.time_error_quantiles[regime_of(size_bytes)][transport_class(topo)]
    low = time_s / max(1.0 + q90, _FLOOR)
    high = time_s / max(1.0 + q10, _FLOOR)
    if topo.sites > 1 and topo.wan is not None:
        low = max(low, topo.wan.transport_latency_s)
    return min(low, time_s), max(high, time_s)
