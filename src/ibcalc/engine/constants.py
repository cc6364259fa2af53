"""Constants of the cost model, each with its source.

NCCL 2.30.7 tuner constants (``src/graph/tuning.cc``, ``ncclTunerConstantsDefaults``) are
restated from ``reference/cost_models.md`` sections 2.4-2.7; they give the structure of the
latency model (base latency per algorithm and protocol, per-hop latency per path class) and the
protocol bandwidth factors. All latencies here are in seconds.

Constants fitted to published measurements live in ``CALIBRATED`` below; each is re-derived by
``benchmarks/calibrate.py`` and ``tests/test_calibration.py`` checks that the value here is the
one the script derives (so none is typed in by hand without a test that recomputes it).
"""

from __future__ import annotations

from typing import Final

from ibcalc.engine.types import Algorithm, Protocol

__all__ = [
    "BASE_LATENCY_S",
    "CALIBRATED",
    "HOP_LATENCY_S",
    "LL128_FACTOR",
    "LL_FACTOR",
    "LL_MAX_BUSBW_BPS",
    "LL_NET_BPS",
    "LL_NET_SATURATION_BYTES",
    "NCCL_SIMPLE_TRANSPORT_FACTOR",
    "NET_OVERHEAD_S",
    "NVLS_TREE_FACTOR",
    "PAT_FACTOR",
    "RING_PLATEAU_FACTOR",
    "SIMPLE_FILL_BYTES",
    "SIMPLE_TRANSPORT_FACTOR",
    "TREE_CORRECTION",
    "TREE_LL128_FACTOR_MULTI",
    "TREE_LL128_FACTOR_SINGLE",
    "TREE_LL_DIVISOR",
    "WAN_INFLIGHT_BYTES",
]

_US: Final = 1e-6
_GBPS: Final = 1e9

LL, LL128, SIMPLE = Protocol.LL, Protocol.LL128, Protocol.SIMPLE

#: Base latency per algorithm and protocol (NCCL 2.30.7 ``baseLat``; cost_models.md 2.4).
BASE_LATENCY_S: Final[dict[Algorithm, dict[Protocol, float]]] = {
    Algorithm.TREE: {LL: 6.8 * _US, LL128: 14.0 * _US, SIMPLE: 8.4 * _US},
    Algorithm.RING: {LL: 6.6 * _US, LL128: 14.0 * _US, SIMPLE: 8.4 * _US},
    Algorithm.COLLNET_DIRECT: {SIMPLE: 0.0},
    Algorithm.COLLNET_CHAIN: {SIMPLE: 0.0},
    Algorithm.NVLS: {SIMPLE: 0.0},
    Algorithm.NVLS_TREE: {SIMPLE: 0.0},
    Algorithm.PAT: {SIMPLE: 8.0 * _US},
}

#: Per-hop latency by path class, algorithm and protocol (NCCL 2.30.7 ``hwLat``; cost_models.md
#: 2.4). Path classes: ``nvlink`` (NVLink/NVSwitch/xGMI), ``pci`` (PCIe or host), ``net``.
HOP_LATENCY_S: Final[dict[str, dict[Algorithm, dict[Protocol, float]]]] = {
    "nvlink": {
        Algorithm.TREE: {LL: 0.6 * _US, LL128: 1.25 * _US, SIMPLE: 4.0 * _US},
        Algorithm.RING: {LL: 0.6 * _US, LL128: 1.9 * _US, SIMPLE: 3.4 * _US},
        Algorithm.COLLNET_DIRECT: {SIMPLE: 3.7 * _US},
        Algorithm.COLLNET_CHAIN: {SIMPLE: 2.8 * _US},
        Algorithm.NVLS: {SIMPLE: 25.0 * _US},
        Algorithm.NVLS_TREE: {SIMPLE: 25.0 * _US},
        Algorithm.PAT: {SIMPLE: 4.0 * _US},
    },
    "pci": {
        Algorithm.TREE: {LL: 1.0 * _US, LL128: 1.9 * _US, SIMPLE: 4.0 * _US},
        Algorithm.RING: {LL: 1.0 * _US, LL128: 2.5 * _US, SIMPLE: 5.7 * _US},
        Algorithm.COLLNET_DIRECT: {SIMPLE: 3.7 * _US},
        Algorithm.COLLNET_CHAIN: {SIMPLE: 2.8 * _US},
        Algorithm.NVLS: {SIMPLE: 0.0},
        Algorithm.NVLS_TREE: {SIMPLE: 0.0},
        Algorithm.PAT: {SIMPLE: 4.0 * _US},
    },
    "net": {
        Algorithm.TREE: {LL: 5.0 * _US, LL128: 8.5 * _US, SIMPLE: 14.0 * _US},
        Algorithm.RING: {LL: 2.7 * _US, LL128: 4.0 * _US, SIMPLE: 14.0 * _US},
        Algorithm.COLLNET_DIRECT: {SIMPLE: 31.0 * _US},
        Algorithm.COLLNET_CHAIN: {SIMPLE: 30.0 * _US},
        Algorithm.NVLS: {SIMPLE: 18.0 * _US},
        Algorithm.NVLS_TREE: {SIMPLE: 20.9 * _US},
        Algorithm.PAT: {SIMPLE: 14.0 * _US},
    },
}

#: Network post overhead per ring step on more than one node, tripled for Simple
#: (NCCL 2.30.7, Intel and default hosts; cost_models.md 2.4).
NET_OVERHEAD_S: Final = 1.0 * _US

#: LL carries 8 bytes of data per 16-byte line (cost_models.md 2.9): ring bandwidth x 0.5.
LL_FACTOR: Final = 0.5
#: LL128 ring bandwidth factor (NCCL 2.30.7: 0.92, "120/128"; cost_models.md 2.5).
LL128_FACTOR: Final = 0.92
#: Tree + LL bandwidth divisor (NCCL 2.30.7; cost_models.md 2.5).
TREE_LL_DIVISOR: Final = 3.8
#: Tree + LL128 factors: 7/9 on one node, 120/128 on several (NCCL 2.30.7; cost_models.md 2.5).
TREE_LL128_FACTOR_SINGLE: Final = 7.0 / 9.0
TREE_LL128_FACTOR_MULTI: Final = 120.0 / 128.0
#: PAT bandwidth factor (NCCL 2.30.7; cost_models.md 2.5).
PAT_FACTOR: Final = 0.75
#: Ring + Simple all-reduce latency factor on several nodes once the per-rank, per-channel
#: chunk reaches 64 bytes, SM80+ (NCCL 2.30.7 "ring plateau"; cost_models.md 2.7).
RING_PLATEAU_FACTOR: Final = 1.4

#: LL bus-bandwidth caps by GPU generation and node count (1 / 2 / >= 3 nodes), bytes per
#: second (NCCL 2.30.7 ``llMaxBws``; multi-node rows are NCCL's Intel-host row, cost_models.md 2.4).
LL_MAX_BUSBW_BPS: Final[dict[str, tuple[float, float, float]]] = {
    "volta": (39.0 * _GBPS, 39.0 * _GBPS, 20.4 * _GBPS),
    "ampere": (87.7 * _GBPS, 39.0 * _GBPS, 20.4 * _GBPS),
    "hopper": (141.0 * _GBPS, 39.0 * _GBPS, 20.4 * _GBPS),
    "blackwell": (282.0 * _GBPS, 39.0 * _GBPS, 20.4 * _GBPS),
}

#: Tree all-reduce bandwidth correction by size bucket: bucket i covers 64 x 2^i bytes, for
#: 64 B <= S < 512 MiB (NCCL 2.30.7 ``treeCorrectionFactor``; cost_models.md 2.7).
TREE_CORRECTION: Final[dict[Protocol, tuple[float, ...]]] = {
    LL: (
        1.0,
        1.0,
        1.0,
        1.0,
        0.9,
        0.8,
        0.7,
        0.7,
        0.7,
        0.7,
        0.6,
        0.5,
        0.4,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        1.0,
        1.0,
        1.0,
    ),
    LL128: (
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        0.9,
        0.8,
        0.8,
        0.8,
        0.7,
        0.6,
        0.6,
        0.6,
        0.6,
        0.6,
        0.6,
        0.8,
        0.9,
        0.9,
        0.9,
        0.9,
        1.0,
        1.0,
    ),
    SIMPLE: (
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.8,
        0.7,
        0.6,
        0.6,
        0.5,
        0.5,
        0.5,
        0.5,
        0.6,
        0.7,
        0.8,
        0.7,
        0.7,
        0.8,
        0.9,
        0.9,
    ),
}

#: Constants fitted to ``reference/measurements.csv`` by ``benchmarks/calibrate.py``.
#: ``tests/test_calibration.py`` re-runs the fit and checks each value.
CALIBRATED: Final[dict[str, float]] = {
    # one-way transport latencies per Simple network hop (NCCL itself counts 2)
    "simple_transport_factor": 7.0,
    # sendrecv bandwidth / ring bandwidth on a scale-up link
    "p2p_efficiency": 0.8,
    # per-rank LL throughput across the network at small sizes, bytes/s
    "ll_net_Bps": 1.0e9,
    # NVLS bandwidth left to an NVLS-tree (GPU also streams its shard to and from the NIC)
    "nvls_tree_factor": 0.925,
    # message size at which Simple's transport handshake is fully exposed, bytes
    "simple_fill_bytes": 64 * 2**20,
}
#: See ``net_hop_latency``: transport latencies counted per Simple network hop.
SIMPLE_TRANSPORT_FACTOR: Final = CALIBRATED["simple_transport_factor"]
#: NCCL counts its net plugin's latency twice per Simple hop (cost_models.md 2.6).
NCCL_SIMPLE_TRANSPORT_FACTOR: Final = 2.0
#: See ``base.ll_network_transfer``.
LL_NET_BPS: Final = CALIBRATED["ll_net_Bps"]
#: LL's network extra stops growing at the top of its calibration range (64 KiB).
LL_NET_SATURATION_BYTES: Final = 64 * 2**10
#: See ``base.net_hop_latency``.
SIMPLE_FILL_BYTES: Final = CALIBRATED["simple_fill_bytes"]
#: Bytes one WAN link keeps in flight: 2 channels x NCCL's 4 MiB Simple buffer (cost_models.md
#: 2.9; NCCL_BUFFSIZE default). An assumption about channel count, stated where it is used.
WAN_INFLIGHT_BYTES: Final = 2 * 4 * 2**20
#: See ``innetwork.nvls_tree``.
NVLS_TREE_FACTOR: Final = CALIBRATED["nvls_tree_factor"]
