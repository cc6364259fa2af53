"""Hand-worked checks of each algorithm's formula (2 and 3 nodes, 1 and 8 GPUs per node).

Every expected value is computed here from the formula in the algorithm's docstring and NCCL
2.30.7's constants (src/graph/tuning.cc, restated in docs/model.md#tuner-constants; typed in below
from that table, not read from the code), on round-number tiers so the arithmetic is checkable.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from conftest import B_NIC, B_UP, round_topology
from ibcalc.catalogue.cost_params import load_cost_params
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.base import Topology, net_hop_latency
from ibcalc.engine.params import CostParams
from ibcalc.engine.select import evaluate, select
from ibcalc.engine.types import Algorithm, Collective, Protocol, ScaleOutTier
from ibcalc.errors import AlgorithmNotApplicableError
from ibcalc.facade import estimate_on

#: The built-in cost parameters (data/cost_params.yaml), no override file.
PARAMS = load_cost_params(use_env=False)
US = 1e-6
GB = 1e9
# NCCL 2.30.7 src/graph/tuning.cc (docs/model.md#tuner-constants)
RING_BASE = {"LL": 6.6, "LL128": 14.0, "Simple": 8.4}
TREE_BASE = {"LL": 6.8, "LL128": 14.0, "Simple": 8.4}
NVLINK_RING = {"LL": 0.6, "LL128": 1.9, "Simple": 3.4}
NVLINK_TREE = {"LL": 0.6, "LL128": 1.25, "Simple": 4.0}
NET_RING = {"LL": 2.7, "LL128": 4.0, "Simple": 14.0}
NET_TREE = {"LL": 5.0, "LL128": 8.5, "Simple": 14.0}

S = 2**30  # 1 GiB: outside NCCL's tree correction table (which ends at 512 MiB)
#: calibrated.proxy_op_latency: the proxy's start-up per channel of a collective across nodes
PROXY = PARAMS.calibrated.proxy_op_s


def proxy_s(t: Topology, channels: float | None = None) -> float:
    """``base.proxy_ops_s`` by hand: PROXY x the channels a ring or tree runs on, 0 on one node.
    At 1 GiB it has all of them: 2 per ring (``pipeline.channels_per_nic``), one ring per GPU-NIC
    pair (min(NICs, GPUs)), at least 2."""
    if t.domains < 2:
        return 0.0
    if channels is None:
        assert t.out is not None
        channels = max(2, 2 * min(t.out.nics_per_domain, t.m))
    return PROXY * channels


topo = round_topology


def cost(
    t: Topology,
    coll: Collective,
    algo: Algorithm,
    proto: Protocol,
    size: float = S,
    params: CostParams | None = None,
):
    costs = [
        c
        for c in evaluate(coll, size, t, params or PARAMS)
        if c.algorithm is algo and c.protocol is proto
    ]
    assert len(costs) == 1, f"{algo}/{proto} not evaluated"
    return costs[0]


@pytest.mark.parametrize(("nodes", "gpus"), [(2, 8), (3, 8), (2, 1), (3, 1), (1, 8)])
def test_ring_allreduce_simple(nodes: int, gpus: int) -> None:
    t = topo(nodes, gpus)
    n = nodes * gpus
    # bandwidth: min(B_up, nics x B_nic) per rank; one node: B_up
    b_ring = min(B_UP if gpus > 1 else math.inf, 8 * B_NIC if nodes > 1 else math.inf)
    transfer = 2 * (n - 1) / n * S / b_ring
    nsteps, s_net = 2 * (n - 1), (2 * (nodes - 1) if nodes > 1 else 0)
    intra = max(NVLINK_RING["Simple"], 3.0 if nodes > 1 else 0.0)  # net overhead 1 us x 3
    latency = RING_BASE["Simple"] + (nsteps - s_net) * intra + s_net * NET_RING["Simple"]
    if nodes > 1:
        latency *= 1.4  # ring plateau, multi-node Simple all-reduce
    c = cost(t, Collective.ALL_REDUCE, Algorithm.RING, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(transfer, rel=1e-9)
    assert c.latency_s == pytest.approx(latency * US + proxy_s(t), rel=1e-9)


def test_ring_ll_halves_bandwidth_and_is_capped() -> None:
    t = topo(1, 8)
    # LL: 0.5 x 100 GB/s = 50 GB/s, below the Hopper single-node cap of 141 GB/s
    c = cost(t, Collective.ALL_REDUCE, Algorithm.RING, Protocol.LL)
    assert c.transfer_s == pytest.approx(2 * 7 / 8 * S / (50 * GB))
    assert c.latency_s == pytest.approx((RING_BASE["LL"] + 14 * NVLINK_RING["LL"]) * US)
    # three nodes: LL cap of 20.4 GB/s (NCCL llMaxBws, >= 3 nodes, Intel row); over verbs (no
    # transport latency, as here) no small-message LL network limit applies
    t3 = topo(3, 8)
    c3 = cost(t3, Collective.ALL_REDUCE, Algorithm.RING, Protocol.LL)
    assert c3.transfer_s == pytest.approx(2 * 23 / 24 * S / (20.4 * GB))
    small = cost(t3, Collective.ALL_REDUCE, Algorithm.RING, Protocol.LL, size=2**21)
    assert small.transfer_s == pytest.approx(2 * 23 / 24 * 2**21 / (20.4 * GB))
    # over a plugin transport LL needs at least min(S, 64 KiB) / ll_net_Bps across the network
    # (calibrated), a limit NCCL's tuner does not know: it ranks LL by its own bandwidth. One NIC
    # per node: 2 channels; 64 KiB is less than the 96 KiB a ring LL channel needs on 24 ranks
    # (512 threads x 8 B x 24), so it runs on one of them at LL's 0.5 x 10 GB/s / 2
    ll_net = PARAMS.calibrated.ll_net_Bps
    assert ll_net is not None
    plugin = topo(3, 8, nics=1, transport_latency_s=20e-6)
    slow = cost(plugin, Collective.ALL_REDUCE, Algorithm.RING, Protocol.LL, size=65536)
    on_one_channel = 2 * 23 / 24 * 65536 / (0.5 * B_NIC / 2)
    assert 65536 / ll_net > on_one_channel  # the plugin limit binds here
    assert slow.transfer_s == pytest.approx(65536 / ll_net)
    # the tuner prices every size with all channels and no plugin limit
    # (and without the proxy's start-up of the one channel, which its time has no term for)
    assert slow.tuner_time_s == pytest.approx(
        slow.latency_s - proxy_s(plugin, 1) + 2 * 23 / 24 * 65536 / (0.5 * B_NIC)
    )
    big = cost(plugin, Collective.ALL_REDUCE, Algorithm.RING, Protocol.LL, size=2**24)
    # the extra stops growing at 64 KiB: past it the LL bandwidth term dominates again
    assert big.transfer_s == pytest.approx(max(2 * 23 / 24 * 2**24 / (0.5 * B_NIC), 65536 / ll_net))


def test_ring_allgather_and_broadcast() -> None:
    t = topo(2, 8)
    n = 16
    c = cost(t, Collective.ALL_GATHER, Algorithm.RING, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx((n - 1) / n * S / (80 * GB))
    # all-gather latency: n-1 steps, N-1 of them on the network, no plateau factor; and the
    # proxy's start-up of its 16 channels (2 per GPU-NIC ring)
    assert c.latency_s == pytest.approx((8.4 + 14 * 3.4 + 1 * 14.0) * US + 16 * PROXY)
    b = cost(t, Collective.BROADCAST, Algorithm.RING, Protocol.SIMPLE)
    # pipelined chain: S / B_ring, (n - N) intra hops and N - 1 network hops
    assert b.transfer_s == pytest.approx(S / (80 * GB))
    assert b.latency_s == pytest.approx((8.4 + 14 * 3.4 + 1 * 14.0) * US + 16 * PROXY)


def test_broadcast_chains_overlap_back_to_back_in_ll_only() -> None:
    """nccl-tests times 20 back-to-back operations: an LL chain completes one per stage
    (base + slowest stage), an LL128 or Simple chain one per operation (engine/measure.py:
    the published broadcasts, ABCI 2.0). A network stage holds 2 / NCCL_STEPS of its hop (its
    8 buffer slots in flight, a round trip each): 2 x 2.7 / 8 = 0.675 us, above the 0.6 us NVLink
    hop on these Hopper-clocked GPUs."""
    t = topo(2, 8)
    ll = cost(t, Collective.BROADCAST, Algorithm.RING, Protocol.LL, size=1024)
    # 1 KiB runs on one channel (an LL ring channel takes 512 x 8 B x 16 ranks = 64 KiB)
    chain = (RING_BASE["LL"] + 14 * NVLINK_RING["LL"] + 1 * NET_RING["LL"]) * US + PROXY
    assert ll.latency_s == pytest.approx(chain)
    assert 2 * NET_RING["LL"] / 8 == pytest.approx(0.675)
    # the GPU's stage, its 0.6 us hop and the data, is above the network stage: the data
    # crosses inside the network stage's round trip, not after it
    assert (NVLINK_RING["LL"] * US + ll.transfer_s) > 0.675 * US
    period = RING_BASE["LL"] * US + (NVLINK_RING["LL"] * US + ll.transfer_s) + PROXY
    assert ll.time_s == pytest.approx((chain + ll.transfer_s + 19 * period) / 20)
    for protocol in (Protocol.LL128, Protocol.SIMPLE):
        c = cost(t, Collective.BROADCAST, Algorithm.RING, protocol, size=2**20)
        assert c.measured_s is None
        assert c.time_s == pytest.approx(c.latency_s + c.transfer_s)


def test_ring_steps_pay_nccls_network_overhead_of_the_host() -> None:
    """NCCL's getNetOverhead: each intra-node step of a multi-node ring costs at least 1 us
    (Intel and other hosts) or 2 us (AMD x86 hosts), tripled for Simple."""
    intel = topo(2, 8)
    amd = dataclasses.replace(intel, host_cpu="amd")
    # LL: the NVLink hop (0.6 us) is below the overhead on both hosts
    ll_intel = cost(intel, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL)
    ll_amd = cost(amd, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL)
    proxy = proxy_s(intel)
    assert ll_intel.latency_s == pytest.approx((RING_BASE["LL"] + 14 * 1.0 + 2.7) * US + proxy)
    assert ll_amd.latency_s == pytest.approx((RING_BASE["LL"] + 14 * 2.0 + 2.7) * US + proxy)
    # Simple: 3 x 1 us is below the 3.4 us NVLink hop; 3 x 2 us is above it
    simple_amd = cost(amd, Collective.ALL_GATHER, Algorithm.RING, Protocol.SIMPLE)
    assert simple_amd.latency_s == pytest.approx((8.4 + 14 * 6.0 + 1 * 14.0) * US + proxy)
    # NCCL's tuner knows it too (its estimate is what picks; it has no proxy start-up term, and
    # on an AMD host it caps LL at 22.5 GB/s on 2 nodes: the test below); one node has no overhead
    assert ll_amd.selection_time_s == pytest.approx(
        ll_amd.latency_s - proxy + 15 / 16 * S / (22.5 * GB)
    )
    one_node = dataclasses.replace(topo(1, 8), host_cpu="amd")
    single = cost(one_node, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL)
    assert single.latency_s == pytest.approx((RING_BASE["LL"] + 7 * NVLINK_RING["LL"]) * US)


def test_on_amd_hosts_nccls_tuner_caps_ll_with_its_amd_row() -> None:
    """NCCL 2.30.7 llMaxBws: on several nodes the row follows the CPU vendor, 39.0 GB/s (2 nodes)
    and 20.4 GB/s (3 or more) on Intel and other hosts, 22.5 and 19.0 GB/s on AMD x86 hosts.
    NCCL's tuner ranks with it; the physical LL rate keeps the first row
    (assumptions.amd_host_ll_cap)."""
    n = 16
    data = (n - 1) / n * S  # ring all-gather, bytes per rank
    # 8 NICs x 10 GB/s: LL's 0.5 x 80 GB/s = 40 GB/s is above every cap
    latency = (RING_BASE["LL"] + 14 * 2.0 + 1 * NET_RING["LL"]) * US  # AMD: 2 us per step
    amd = dataclasses.replace(topo(2, 8), host_cpu="amd")
    ll = cost(amd, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL)
    assert ll.transfer_s == pytest.approx(data / (39.0 * GB))
    assert ll.tuner_time_s == pytest.approx(latency + data / (22.5 * GB))
    # three nodes: 19.0 GB/s in NCCL's estimate, 20.4 GB/s physically
    amd3 = dataclasses.replace(topo(3, 8), host_cpu="amd")
    ll3 = cost(amd3, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL)
    data3 = 23 / 24 * S
    assert ll3.transfer_s == pytest.approx(data3 / (20.4 * GB))
    latency3 = (RING_BASE["LL"] + 21 * 2.0 + 2 * NET_RING["LL"]) * US
    assert ll3.tuner_time_s == pytest.approx(latency3 + data3 / (19.0 * GB))
    # an Intel host's tuner keeps the first row (1 us per step)
    intel = cost(topo(2, 8), Collective.ALL_GATHER, Algorithm.RING, Protocol.LL)
    assert intel.tuner_time_s == pytest.approx(
        (RING_BASE["LL"] + 14 * 1.0 + NET_RING["LL"]) * US + data / (39.0 * GB)
    )


@pytest.mark.parametrize("nodes", [2, 3])
def test_tree_allreduce(nodes: int) -> None:
    t = topo(nodes, 8)
    # NCCL's 0.92 tree all-reduce factor on whichever binds: 2S through the chain, or
    # c x S / (nics x B_nic) across the network
    chain = 2 * S / (0.92 * B_UP)
    net = (1 if nodes == 2 else 2) * S / (0.92 * 8 * B_NIC)
    c = cost(t, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(max(chain, net))
    depth = math.floor(math.log2(nodes))
    latency = TREE_BASE["Simple"] + 2 * (7 * NVLINK_TREE["Simple"] + depth * NET_TREE["Simple"])
    # and the proxy's post overhead on each network hop: 1 us x 3 for Simple (not an AMD host)
    assert c.latency_s == pytest.approx((latency + 2 * depth * 3.0) * US + proxy_s(t))
    assert c.equivalent_busbw is (nodes == 2)


def test_tree_transfer_says_how_its_rate_comes_from_the_tier() -> None:
    # 3 nodes: each sends 2S over 8 x 10 GB/s = 80 GB/s, so the tier's rate is 40 GB/s (the
    # chain's 100 / 2 = 50 GB/s is faster); NCCL's tree all-reduce factor 0.92 gives 36.8 GB/s,
    # and LL128 on several nodes its 120/128 after it, 34.5 GB/s; at 1 GiB NCCL's size-bucket
    # correction does not apply
    t = topo(3, 8)
    c = cost(t, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.LL128)
    (transfer,) = [term for term in c.terms if term.name == "transfer"]
    assert transfer.seconds == pytest.approx(S / (40 * GB * 0.92 * 120 / 128))
    assert "at 34.5 GB/s (LL128; " in transfer.detail
    assert (
        ": the tier's 40 GB/s x 0.92 (NCCL's tree all-reduce factor) x 0.9375 (NCCL's tree "
        "LL128 factor on several nodes)"
    ) in transfer.detail
    assert "correction" not in transfer.detail
    # Simple there: the tier's rate and the all-reduce factor alone
    simple = cost(t, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.SIMPLE)
    (transfer,) = [term for term in simple.terms if term.name == "transfer"]
    assert ": the tier's 40 GB/s x 0.92 (NCCL's tree all-reduce factor)" in transfer.detail
    assert "LL128 factor" not in transfer.detail


def test_tree_one_gpu_per_node() -> None:
    t = topo(3, 1, nics=1)
    c = cost(t, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(2 * S / (0.92 * B_NIC))
    assert c.latency_s == pytest.approx((8.4 + 2 * 1 * 14.0 + 2 * 1 * 3.0) * US + 2 * PROXY)


def test_tree_network_hops_pay_the_proxys_post_overhead() -> None:
    """NCCL's getNetOverhead (1 us, 2 us on AMD x86 hosts, x3 for Simple), which its tuner
    charges to ring steps, on each of a tree's network hops in physical time: 2 x 1 level."""
    amd = dataclasses.replace(topo(2, 8), host_cpu="amd")
    ll = cost(amd, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.LL, size=1024)
    chain = TREE_BASE["LL"] + 2 * (7 * NVLINK_TREE["LL"] + 1 * NET_TREE["LL"])
    # 1 KiB runs on one channel (a tree LL channel takes 512 x 8 B = 4 KiB)
    assert ll.latency_s == pytest.approx((chain + 2 * 1 * 2.0) * US + PROXY)
    # NCCL's tuner does not charge it to trees
    tuner = cost(amd, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.LL, 1024, PARAMS.tuner_view())
    assert tuner.latency_s == pytest.approx(chain * US)
    no_posts = PARAMS.with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "assumptions": {"tree_net_overhead": {"value": 0, "assumed": "a test"}},
        }
    )
    plain = cost(amd, Collective.ALL_REDUCE, Algorithm.TREE, Protocol.LL, 1024, no_posts)
    assert plain.latency_s == pytest.approx(chain * US + PROXY)


def test_nvls_single_node_moves_s_times_m_plus_1_over_m() -> None:
    t = topo(1, 8, nvls=50 * GB)
    c = cost(t, Collective.ALL_REDUCE, Algorithm.NVLS, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(S * 9 / 8 / (50 * GB))
    assert c.latency_s == pytest.approx(25.0 * US)  # NCCL NVLS NVLink hop latency
    assert c.equivalent_busbw
    ag = cost(t, Collective.ALL_GATHER, Algorithm.NVLS, Protocol.SIMPLE)
    assert ag.transfer_s == pytest.approx(S / (50 * GB))


@pytest.mark.parametrize("nodes", [2, 3])
def test_nvls_tree(nodes: int) -> None:
    NVLS_TREE_FACTOR = PARAMS.calibrated.nvls_tree_factor
    t = topo(nodes, 8, nvls=50 * GB)
    intra = S * 9 / 8 / (50 * GB * NVLS_TREE_FACTOR)
    net = (1 if nodes == 2 else 2) * S / (80 * GB)
    c = cost(t, Collective.ALL_REDUCE, Algorithm.NVLS_TREE, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(max(intra, net))
    depth = math.floor(math.log2(nodes))
    assert c.latency_s == pytest.approx((25.0 + 2 * depth * 20.9 + 2 * depth * 3.0) * US)


def test_collnet_needs_sharp_and_halves_network_traffic() -> None:
    assert not [
        c
        for c in evaluate(Collective.ALL_REDUCE, S, topo(3, 8), PARAMS)
        if c.algorithm is Algorithm.COLLNET_CHAIN
    ]
    t = topo(3, 8, sharp=True)
    chain = cost(t, Collective.ALL_REDUCE, Algorithm.COLLNET_CHAIN, Protocol.SIMPLE)
    # chain inside (2S / B_up) vs the switch tree at NCCL's CollNet rating: algbw = 0.5 x the
    # node's NIC bandwidth (S / (0.5 x nics x B_nic); NCCL 2.30.7 ncclTopoTuneModel)
    assert chain.transfer_s == pytest.approx(max(2 * S / B_UP, S / (0.5 * 80 * GB)))
    assert chain.latency_s == pytest.approx((2 * 7 * 2.8 + 30.0) * US)
    direct = cost(t, Collective.ALL_REDUCE, Algorithm.COLLNET_DIRECT, Protocol.SIMPLE)
    assert direct.transfer_s == pytest.approx(max(2 * 7 / 8 * S / B_UP, S / (0.5 * 80 * GB)))
    assert direct.latency_s == pytest.approx((2 * (3.7 + 0.4 * 7) + 31.0) * US)


def test_hierarchical() -> None:
    t = topo(3, 8)
    c = cost(t, Collective.ALL_REDUCE, Algorithm.HIERARCHICAL, Protocol.SIMPLE)
    expected = 2 * 7 / 8 * S / B_UP + 2 * 2 / 3 * S / (80 * GB)
    assert c.transfer_s == pytest.approx(expected)
    assert c.latency_s == pytest.approx((3 * 8.4 + 2 * 7 * 3.4 + 2 * 2 * 14.0) * US)


def test_rhd_power_of_two() -> None:
    t = topo(2, 8)  # 16 ranks
    c = cost(t, Collective.ALL_REDUCE, Algorithm.RHD, Protocol.SIMPLE)
    # two phases; per phase (N-1)/N S over the NIC share (80/8 = 10 GB/s), (m-1)/(mN) S over B_up
    per_phase = (1 / 2) * S / (10 * GB) + (7 / 16) * S / B_UP
    assert c.transfer_s == pytest.approx(2 * per_phase)
    assert c.latency_s == pytest.approx((8.4 + 2 * (1 * 14.0 + 3 * 3.4)) * US)


def test_rhd_folds_the_surplus_in_and_runs_on_the_power_of_two_core() -> None:
    """Thakur, Rabenseifner and Gropp 2005, section 4.1: a count that is not a power of two
    folds its surplus ranks in with one exchange of S, runs on the 2^k left, and sends the
    result back. 3 nodes of 8: the third node folds in over the network (S at the NIC share,
    10 GB/s, before and after) and the core is 2 x 8 (test_rhd_power_of_two's terms); it had
    kept lg 3 -> 2 network steps and (N-1)/N = 2/3 of S over 3 nodes (review BD). One node of 6
    GPUs: 2 fold in over the scale-up link and the core is 4 GPUs."""
    c = cost(topo(3, 8), Collective.ALL_REDUCE, Algorithm.RHD, Protocol.SIMPLE)
    core = 2 * ((1 / 2) * S / (10 * GB) + (7 / 16) * S / B_UP)
    assert c.transfer_s == pytest.approx(core + 2 * S / (10 * GB))
    assert c.latency_s == pytest.approx((8.4 + 2 * (1 * 14.0 + 3 * 3.4) + 2 * 14.0) * US)
    one = cost(topo(1, 6), Collective.ALL_REDUCE, Algorithm.RHD, Protocol.SIMPLE)
    assert one.transfer_s == pytest.approx(2 * (3 / 4) * S / B_UP + 2 * S / B_UP)
    assert one.latency_s == pytest.approx((8.4 + 2 * 2 * 3.4 + 2 * 3.4) * US)
    # an all-gather's surplus rank sends its S/n piece in and gets the gathered S back, a
    # reduce-scatter's sends S and gets its S/n block: S (1 + 1/n), not 2S (review BH)
    # reduce-scatter's sends S and gets its S/n block: S (1 + 1/n), not 2S (review BH); and
    # the core's blocks are uneven after it, so each GPU still takes (n-1)/n x S = 5/6 S in the
    # core, not (p'-1)/p' = 3/4 (review BI): S/6 + 5/6 S + S = 2S
    for collective in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        half = cost(topo(1, 6), collective, Algorithm.RHD, Protocol.SIMPLE)
        assert half.transfer_s == pytest.approx((5 / 6) * S / B_UP + (1 + 1 / 6) * S / B_UP)
        # 5 ranks: the doubled rank sends 2S/5, then 3S/5: the core takes S, not 4S/5 (review
        # BJ); with the fold-in S(1 + 1/5)
        five = cost(topo(1, 5), collective, Algorithm.RHD, Protocol.SIMPLE)
        assert five.transfer_s == pytest.approx(S / B_UP + (1 + 1 / 5) * S / B_UP)
        # 3 nodes of 8: the third node's 8 GPUs fold into the first core node, whose GPUs then
        # hold 2 blocks of S/24: inside, 2 + 4 + 8 = 14 blocks; over the network, 8 + 8 = 16
        # (the even share scaled alike had given the network 0.51 S, review BK); the fold-in
        # S (1 + 1/24) over the NIC share (10 GB/s)
        nodes = cost(topo(3, 8), collective, Algorithm.RHD, Protocol.SIMPLE)
        assert nodes.transfer_s == pytest.approx(
            16 / 24 * S / (10 * GB) + 14 / 24 * S / B_UP + (1 + 1 / 24) * S / (10 * GB)
        )


def test_pat_one_gpu_per_node_only() -> None:
    t = topo(4, 1, nics=1)
    c = cost(t, Collective.ALL_GATHER, Algorithm.PAT, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(3 / 4 * S / (0.75 * B_NIC))
    assert c.latency_s == pytest.approx((8.0 + 2 * 14.0 / 3.5 + 2.8 * 4) * US)
    assert not [
        x
        for x in evaluate(Collective.ALL_GATHER, S, topo(4, 8), PARAMS)
        if x.algorithm is Algorithm.PAT
    ]


def test_alltoall_pairwise_and_oversubscription() -> None:
    t = topo(2, 8)
    n = 16
    c = cost(t, Collective.ALL_TO_ALL, Algorithm.PAIRWISE, Protocol.SIMPLE)
    intra = 7 / n * S / B_UP
    net = 8 / n * S / (80 * GB / 8)  # (n-m)/n S over the GPU's NIC share
    assert c.transfer_s == pytest.approx(max(intra, net))
    over = Topology(
        ranks_per_domain=8,
        domains=2,
        up=t.up,
        out=ScaleOutTier(
            link_id="net",
            domains=2,
            nics_per_domain=8,
            nic_line_Bps=B_NIC,
            nic_bw_Bps=B_NIC,
            oversubscription=2.0,
        ),
        arch="hopper",
    )
    c2 = cost(over, Collective.ALL_TO_ALL, Algorithm.PAIRWISE, Protocol.SIMPLE)
    # docs/model.md#oversubscription-and-cross-leaf-traffic: k = 2 and f = 1 (all cross traffic
    # leaves the leaf): x 2
    assert c2.transfer_s == pytest.approx(2 * net)


def test_an_alltoall_without_pxn_pays_the_taper_of_traffic_off_its_rail() -> None:
    """A rail-optimized leaf serves one rail: without PXN a GPU sends from its own NIC to the
    destination GPU's, on another rail for 7 of 8 peer GPUs, so those bytes cross the tapered
    uplinks even where every node shares the SU (f = 0 for rail-aligned traffic). At 4:1 with
    the unaligned share 1 - (1 - 0)/8 = 0.875, pairwise's network term runs max(1, 4 x 0.875) =
    3.5x slower; PXN, which keeps the bytes on the destination's rail, is not slowed."""
    t = topo(2, 8)
    n = 16
    net = 8 / n * S / (80 * GB / 8)  # (n-m)/n S over the GPU's NIC share

    def tapered(unaligned: float | None) -> Topology:
        assert t.out is not None
        out = t.out.model_copy(
            update={
                "oversubscription": 4.0,
                "cross_leaf_fraction": 0.0,
                "unaligned_fraction": unaligned,
            }
        )
        return dataclasses.replace(t, out=out)

    off = tapered(1 - (1 - 0.0) / 8)
    pairwise = cost(off, Collective.ALL_TO_ALL, Algorithm.PAIRWISE, Protocol.SIMPLE)
    pxn = cost(off, Collective.ALL_TO_ALL, Algorithm.PXN, Protocol.SIMPLE)
    assert pairwise.transfer_s == pytest.approx(4 * 0.875 * net)
    assert "tapered uplinks x3.5 slower" in pairwise.bottleneck
    assert pxn.transfer_s == pytest.approx(
        cost(t, Collective.ALL_TO_ALL, Algorithm.PXN, Protocol.SIMPLE).transfer_s
    )
    # without an unaligned share it takes the cross-leaf fraction, as before
    same = cost(tapered(None), Collective.ALL_TO_ALL, Algorithm.PAIRWISE, Protocol.SIMPLE)
    assert same.transfer_s == pytest.approx(
        cost(t, Collective.ALL_TO_ALL, Algorithm.PAIRWISE, Protocol.SIMPLE).transfer_s
    )


def test_pxn_explanation_gives_the_bytes_its_scale_up_time_is_for() -> None:
    # 4 x 8 GPUs, 1 GiB: a GPU's own (m-1)/n S = 7/32 GiB = 224 MiB plus the rail traffic PXN
    # gathers, (n-m)/n S (m-1)/m = 24/32 x 7/8 GiB = 672 MiB, together 896 MiB over NVLink
    t = topo(4, 8)
    c = cost(t, Collective.ALL_TO_ALL, Algorithm.PXN, Protocol.SIMPLE)
    (transfer,) = [term for term in c.terms if term.name == "transfer"]
    own, rail = 7 / 32 * S, 24 / 32 * S * 7 / 8
    assert (own, rail) == (224 * 2**20, 672 * 2**20)
    assert "= 224 MiB + the rail traffic PXN gathers" in transfer.detail
    assert "= 672 MiB, together 896 MiB per GPU at" in transfer.detail
    net = 24 / 32 * S / (80 * GB / 8)
    assert c.transfer_s == pytest.approx(max((own + rail) / B_UP, net))


def test_sendrecv_crosses_one_nic() -> None:
    t = topo(2, 8)
    c = cost(t, Collective.SEND_RECV, Algorithm.P2P, Protocol.SIMPLE)
    P2P_EFFICIENCY = PARAMS.calibrated.p2p_efficiency
    assert c.transfer_s == pytest.approx(max(S / (B_UP * P2P_EFFICIENCY), S / B_NIC))
    # fewer NICs than GPUs: the pair still has one NIC
    few = cost(topo(2, 8, 4), Collective.SEND_RECV, Algorithm.P2P, Protocol.SIMPLE)
    assert few.transfer_s == pytest.approx(c.transfer_s)


def test_sendrecv_on_a_switchless_mesh_uses_the_links_to_one_peer() -> None:
    """8 MI300X: each GPU's seven xGMI links of 64 GB/s join it to one peer each, so a ring
    shift sends over one link: 64 GB/s x 0.8 efficiency x 0.875 duplex x the point-to-point
    efficiency, the same rate as a 2-GPU pair's. It had been priced over the whole mesh,
    448 GB/s x 0.8 x 0.875 = 314 GB/s, 7x too fast (a review of AMD presets)."""
    from ibcalc import ClusterSpec, estimate, load_catalogue, resolve_cluster

    cat = load_catalogue(use_env=False)
    eff = PARAMS.calibrated.p2p_efficiency
    one_link = 64e9 * 0.8 * 0.875 * eff
    for gpus in (2, 8):
        spec = ClusterSpec(system="mi300x-8", nodes=1, gpus_per_node=gpus)
        est = estimate(cat, spec, Collective.SEND_RECV, S)
        assert est.best.transfer_s == pytest.approx(S / one_link)
    # four of them: each pair still one link (the mesh's 3 used of 7)
    four = estimate(
        cat, ClusterSpec(system="mi300x-8", nodes=1, gpus_per_node=4), Collective.SEND_RECV, S
    )
    assert four.best.transfer_s == pytest.approx(S / one_link)
    # Gaudi 3: three of its 21 links join each pair, 3/21 of the 8-card rate
    gaudi = resolve_cluster(cat, ClusterSpec(intra="gaudi3-rocev2", gpus_per_node=8, nodes=1))
    assert gaudi.topology.up is not None
    assert gaudi.topology.up.peer_share == pytest.approx(3 / 21)
    # a full mesh of 8 without a link count (Ascend 910B): one of 7 peers' share of the GPU's
    # rate at any card count (the first version had divided by m - 1, so the pair's rate grew
    # as the node shrank; the second kept the whole rate, 7x)
    whole = resolve_cluster(cat, ClusterSpec(intra="hccs-910b", gpus_per_node=8, nodes=1))
    assert whole.topology.up is not None
    for gpus in (2, 4, 8):
        up = resolve_cluster(
            cat, ClusterSpec(intra="hccs-910b", gpus_per_node=gpus, nodes=1)
        ).topology.up
        assert up is not None
        # fewer cards use (gpus - 1) of the card's 7 peers' links, and one peer has one of them
        # (2 cards had all-reduced at the whole card's rate, 7x their send/recv)
        assert up.bw_Bps == pytest.approx(whole.topology.up.bw_Bps * (gpus - 1) / 7)
        assert up.bw_Bps * up.peer_share == pytest.approx(whole.topology.up.bw_Bps / 7)
    # a per-link entry (MI250X) keeps its rate (it had been divided by m - 1: 4.45 GB/s);
    # DGX-1's hybrid cube, no full mesh, gives a linked pair 1 or 2 of its 6 links: one link,
    # 1/6, not m - 1's 1/7 (15.3 GB/s, an earlier version) nor all 6 (the next one)
    up = resolve_cluster(
        cat, ClusterSpec(intra="xgmi-mi250x", gpus_per_node=8, nodes=1)
    ).topology.up
    assert up is not None
    assert up.peer_share == 1.0
    up = resolve_cluster(cat, ClusterSpec(system="dgx-1v", nodes=1)).topology.up
    assert up is not None
    assert up.peer_share == pytest.approx(1 / 6)
    # a switch gives one peer the GPU's whole rate: DGX H100 unchanged
    h100 = estimate(cat, ClusterSpec(system="dgx-h100", nodes=1), Collective.SEND_RECV, S)
    nvlink = 450e9 * next(lk for lk in cat.links if lk.id == "nvlink4").efficiency
    up = nvlink * next(lk for lk in cat.links if lk.id == "nvlink4").duplex_efficiency
    assert h100.best.transfer_s == pytest.approx(S / (up * eff))


def test_sendrecv_spreads_over_its_gpus_nics() -> None:
    # 2 x 8 GPUs with 16 NICs: each GPU has 2 of its own and the pair's channels use both
    # (ncclTopoGetLocalNet), S / (2 B_NIC) when the network, not NVLink, is the slower path; with
    # 12 NICs a GPU has 1.5 on average. Before, a pair crossed one NIC whatever the count, and
    # where NICs shared a GPU's PCIe link (each capped at its share) more NICs made it slower
    P2P_EFFICIENCY = PARAMS.calibrated.p2p_efficiency
    intra = S / (B_UP * P2P_EFFICIENCY)
    for nics, share in ((16, 2.0), (12, 1.5)):
        c = cost(topo(2, 8, nics), Collective.SEND_RECV, Algorithm.P2P, Protocol.SIMPLE)
        assert c.transfer_s == pytest.approx(max(intra, S / (share * B_NIC)))
        # the network is the slower path here, and the bottleneck names the NICs the pair
        # uses (it said "one NIC" for 2)
        assert S / (share * B_NIC) > intra
        assert c.bottleneck == f"its GPU's {share:g} NICs between nodes"
    one = cost(topo(2, 8), Collective.SEND_RECV, Algorithm.P2P, Protocol.SIMPLE)
    assert one.bottleneck == "one NIC between nodes"


def test_auto_picks_what_nccls_tuner_ranks_first_and_keeps_alternatives() -> None:
    t = topo(2, 8, nvls=50 * GB)
    best, others = select(Collective.ALL_REDUCE, S, t, PARAMS)
    assert others
    what_ifs = (Algorithm.RHD, Algorithm.HIERARCHICAL)
    nccl = [o for o in others if o.algorithm not in what_ifs]
    assert nccl
    assert all(best.selection_time_s <= o.selection_time_s for o in nccl)


def test_forced_algorithm_refused_with_reason() -> None:
    with pytest.raises(AlgorithmNotApplicableError, match="NVLink SHARP"):
        select(Collective.ALL_REDUCE, S, topo(1, 8), PARAMS, Algorithm.NVLS)
    with pytest.raises(AlgorithmNotApplicableError, match="one GPU per node"):
        select(Collective.ALL_GATHER, S, topo(2, 8), PARAMS, Algorithm.PAT)


def test_wan_tier_caps_ring_and_adds_wan_hops() -> None:
    """4 nodes on 2 sites, one 100 GB/s WAN link per site with 1 ms one-way latency."""
    wan = ScaleOutTier(
        link_id="wan",
        domains=2,
        nics_per_domain=1,
        nic_line_Bps=100 * GB,
        nic_bw_Bps=100 * GB,
        transport_latency_s=1e-3,
    )
    t = Topology(
        ranks_per_domain=8, domains=4, up=topo(4, 8).up, out=topo(4, 8).out, arch="hopper", wan=wan
    )
    # bandwidth-delay limit: each of the communicator's 2 x 8 channels (2 per GPU-NIC ring)
    # keeps its 4 MiB Simple buffer in flight per round trip (2 ms): 33.6 GB/s, under the link
    bdp = 16 * 4 * 2**20 / 2e-3
    assert t.wan_bw_Bps(PARAMS) == pytest.approx(min(100 * GB, bdp)) == pytest.approx(bdp)
    # LL's buffer holds 8 steps of 32 KiB of payload, 64 KiB of lines each: 512 KiB per channel
    assert t.wan_bw_Bps(PARAMS, Protocol.LL) == pytest.approx(16 * 8 * 64 * 2**10 / 2e-3)
    n = 32
    c = cost(t, Collective.ALL_REDUCE, Algorithm.RING, Protocol.SIMPLE)
    assert c.transfer_s == pytest.approx(2 * (n - 1) / n * S / t.wan_bw_Bps(PARAMS))
    # 2(n-1) = 62 steps: 2(N-1) = 6 network steps (NCCL's count), of which 4 cross the WAN:
    # the ring's 2 WAN links sit 16 ranks apart, and a chunk's 62 consecutive hops meet each
    # twice, floor(61 / 16) + 1 = 4 (2(sites-1) = 2 had the ring beat its own path's light
    # delay)
    net = 14.0 + 0.0  # NET ring Simple, no transport latency on the site network
    wan_hop = 14.0 + 1000.0
    latency = 8.4 + (62 - 6) * 3.4 + 2 * net + 4 * wan_hop
    # NCCL's x1.4 plateau on all but the WAN's 4 x 1 ms of propagation (review DG 9)
    latency += 0.4 * (latency - 4 * 1000.0)
    assert c.latency_s == pytest.approx(latency * US + proxy_s(t))
    # an all-gather's last chunk goes n-1 = 31 hops: both WAN links, floor(30 / 16) + 1 = 2;
    # N-1 = 3 network steps, the third inside a site; no plateau (all-reduce only)
    g = cost(t, Collective.ALL_GATHER, Algorithm.RING, Protocol.SIMPLE)
    assert g.latency_s == pytest.approx(
        (8.4 + (31 - 3) * 3.4 + 1 * net + 2 * wan_hop) * US + proxy_s(t)
    )
    # SHARP cannot span sites
    assert not [
        x
        for x in evaluate(Collective.ALL_REDUCE, S, t, PARAMS)
        if x.algorithm in (Algorithm.COLLNET_CHAIN, Algorithm.COLLNET_DIRECT)
    ]
    # the explanation names the WAN share of the transfer and what bounds it: 4.19 GB/s of
    # buffers in flight, not the 10 GB/s link (it said "WAN between sites" alone)
    nvls = topo(4, 8, nvls=50 * GB)
    tn = Topology(ranks_per_domain=8, domains=4, up=nvls.up, out=nvls.out, arch="hopper", wan=wan)
    explained = cost(tn, Collective.ALL_REDUCE, Algorithm.NVLS_TREE, Protocol.SIMPLE)
    (transfer,) = [x for x in explained.terms if x.name == "transfer"]
    assert transfer.seconds == pytest.approx(S / bdp)  # 1 x S crosses the WAN on 2 sites
    assert (
        f"the WAN between sites 1 x S over 1 x wan per site at {bdp / GB:.3g} GB/s"
        in transfer.detail
    )
    assert (
        "bound by NCCL's buffers in flight, 16 channels x 4 MiB per round trip of 2 ms; "
        "the links give 100 GB/s"
    ) in transfer.detail
    # the ring and the tree name the same bound on their WAN-limited transfer
    for algorithm in (Algorithm.RING, Algorithm.TREE):
        other = cost(t, Collective.ALL_REDUCE, algorithm, Protocol.SIMPLE)
        (term,) = [x for x in other.terms if x.name == "transfer"]
        assert "bound by NCCL's buffers in flight, 16 channels x 4 MiB" in term.detail, algorithm
    (levels,) = [x for x in explained.terms if x.name == "tree levels across sites"]
    assert "2 x 1 level (log2 of 2 sites)" in levels.detail
    assert "+ wan one way 1 ms" in levels.detail


def test_wan_sites_resolve_from_spec() -> None:
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster

    cat = load_catalogue(use_env=False)
    cluster = resolve_cluster(
        cat, ClusterSpec(system="dgx-h100", nodes=8, sites=2, wan="wan-100g", wan_links=4)
    )
    wan = cluster.topology.wan
    assert wan is not None
    assert wan.domains == 2
    assert wan.nics_per_domain == 4
    assert wan.nic_line_Bps == pytest.approx(100e9 / 8)  # 100 Gb/s per direction
    with pytest.raises(ValueError, match="evenly"):
        resolve_cluster(cat, ClusterSpec(system="dgx-h100", nodes=3, sites=2))


def test_nccl_s_ring_plateau_leaves_the_wan_s_propagation_unscaled() -> None:
    """NCCL's x1.4 ring plateau is a factor of its tuner's latency, which has no WAN: over 2
    sites 100 km apart (500 us one way, four WAN crossings) it had raised the fibre delay too,
    0.8 ms of 0.9 (review DG 9). It scales the rest: 0.4 x (latency - 4 x 500 us)."""
    from ibcalc.catalogue.load import load_catalogue

    cat = load_catalogue(use_env=False)
    spec = ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="wan-100g", wan_latency_s=500e-6)
    cluster = resolve_cluster(cat, spec)
    assert cluster.topology.wan is not None
    one_way = cluster.topology.wan.transport_latency_s
    assert one_way == pytest.approx(500e-6, rel=0.01)
    best = estimate_on(cluster, Collective.ALL_REDUCE, 2**30, algorithm="ring").best
    names = [t.name for t in best.terms]
    before = best.terms[: names.index("ring plateau")]
    latency = sum(t.seconds for t in before)
    (wan_steps,) = [t for t in before if t.name == "WAN steps"]
    assert wan_steps.detail.startswith("4 x ")
    (plateau,) = [t for t in best.terms if t.name == "ring plateau"]
    assert plateau.seconds == pytest.approx(0.4 * (latency - 4 * one_way), rel=1e-9)
    assert "less the WAN's one-way latencies" in plateau.detail


def test_a_tree_s_first_chunk_crosses_the_wan_at_its_links_rate() -> None:
    """A tree's pipeline fill across a WAN runs the first chunk at the site's links' rate, not at
    the window-bound one: the chunk finds its connection's buffer slots free, and the level's
    one-way latency is a hop already. 4 x DGX H100 on two sites 1 ms apart, tree/LL all-reduce
    of 1 MiB on 16 channels, chunk 32 KiB (one LL step), each tier through NCCL's tree LL
    rate (x 0.92 / 3.8, at most half the 20.4 GB/s LL cap) per channel:
    network 8 x 48.75 GB/s / 2 (each node sends 2S) -> capped 10.2 GB/s / 16 = 637.5 MB/s,
    2 x 32 KiB = 102.8 us; WAN 1 x 11.25 GB/s x 0.92 / 3.8 / 16 = 170.2 MB/s, 2 x 32 KiB =
    385.0 us; fill 487.8 us. At the window's 16 x 512 KiB per 2 ms (4.19 GB/s, 63.5 MB/s a
    channel) the WAN's part had been 1.03 ms, the fill 1.14 ms and the operation 4.21 ms
    (now 3.57 ms); the transfer keeps the window's rate (1 MiB at 1.02 GB/s)."""
    from ibcalc.catalogue.load import load_catalogue

    cat = load_catalogue(use_env=False)
    spec = ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="wan-100g", wan_latency_s=1e-3)
    cluster = resolve_cluster(cat, spec)
    best = estimate_on(cluster, Collective.ALL_REDUCE, 2**20, algorithm="tree", protocol="LL").best
    tree_ll = 0.92 / 3.8
    net = 2 * 32768 / (20.4e9 / 2 / 16)
    wan = 2 * 32768 / (11.25e9 * tree_ll / 16)
    assert net / US == pytest.approx(102.8, abs=0.05)
    assert wan / US == pytest.approx(385.0, abs=0.05)
    assert best.fill_s == pytest.approx(net + wan, rel=1e-6)
    window = 16 * 512 * 1024 / 2e-3
    assert best.transfer_s == pytest.approx(2**20 / (window * tree_ll), rel=1e-6)
    (fill,) = [t for t in best.terms if t.name == "pipeline fill"]
    assert "2 across the WAN at 170 MB/s per channel (its links' rate: a first chunk finds" in (
        fill.detail
    )


def test_switch_reductions_refuse_8_bit_types_and_fp8_rings_are_a_last_resort() -> None:
    """NVLS reduces 16/32/64-bit types, not 8-bit ones; NCCL 2.30.7 multiplies its FP8 ring
    estimate by 1024 above 8 ranks (docs/model.md#tuner-constants)."""
    FP8_RING_PENALTY = PARAMS.nccl_tuner.fp8_ring_penalty
    one_node = topo(1, 8, nvls=50 * GB)
    algos = {c.algorithm for c in evaluate(Collective.ALL_REDUCE, S, one_node, PARAMS, dtype="fp8")}
    assert Algorithm.NVLS not in algos
    assert Algorithm.NVLS in {
        c.algorithm for c in evaluate(Collective.ALL_REDUCE, S, one_node, PARAMS)
    }
    # 64-bit sums are multimem reductions too (NCCL's ncclNvlsSupported: add.u64, add.f64)
    for wide in ("fp64", "int64", "uint64"):
        wide_algos = {
            c.algorithm for c in evaluate(Collective.ALL_REDUCE, S, one_node, PARAMS, dtype=wide)
        }
        assert Algorithm.NVLS in wide_algos, wide
    # across nodes NVLS reduces in IB SHARP (NCCL needs CollNet support for the type): 16/32-bit
    # only there, while NVLS-tree (NVLS inside the nodes, a tree between them) keeps 64-bit sums
    four = topo(4, 8, nvls=50 * GB, sharp=True)
    for dtype, nvls_across in (("fp32", True), ("bf16", True), ("fp64", False), ("int64", False)):
        across = {
            c.algorithm for c in evaluate(Collective.ALL_REDUCE, S, four, PARAMS, dtype=dtype)
        }
        assert (Algorithm.NVLS in across) is nvls_across, dtype
        assert (Algorithm.COLLNET_DIRECT in across) is nvls_across, dtype
        assert Algorithm.NVLS_TREE in across, dtype
    # all-gather reduces nothing: NVLS multicast still applies to 8-bit data
    ag = {c.algorithm for c in evaluate(Collective.ALL_GATHER, S, one_node, PARAMS, dtype="int8")}
    assert Algorithm.NVLS in ag
    t = topo(3, 8)
    ring = cost(t, Collective.ALL_REDUCE, Algorithm.RING, Protocol.SIMPLE)
    fp8 = next(
        c
        for c in evaluate(Collective.ALL_REDUCE, S, t, PARAMS, dtype="fp8")
        if c.algorithm is Algorithm.RING and c.protocol is Protocol.SIMPLE
    )
    assert fp8.time_s == pytest.approx(ring.time_s)  # the wire time does not change
    assert fp8.selection_time_s == pytest.approx(ring.selection_time_s * FP8_RING_PENALTY)
    best, _ = select(Collective.ALL_REDUCE, S, t, PARAMS, dtype="fp8")
    assert best.algorithm is not Algorithm.RING


def test_proxy_starts_one_network_operation_per_channel() -> None:
    """Across nodes a ring or tree pays calibrated.proxy_op_latency per channel it runs on, the
    same for every collective at one buffer size (docs/model.md#proxy-operations); one node has
    no proxy, and NCCL's tuner no such term."""
    t = topo(2, 8)  # 16 ranks: an LL ring channel takes 512 threads x 8 B x 16 = 64 KiB
    ag = {
        s: cost(t, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL, size=s)
        for s in (2**17, 2**18)
    }
    ar = {
        s: cost(t, Collective.ALL_REDUCE, Algorithm.RING, Protocol.LL, size=s)
        for s in (2**17, 2**18)
    }
    # 128 KiB: 2 channels, 256 KiB: 4; the LL ring's steps: 14 at the 1 us network overhead + 1 NET
    assert ag[2**18].latency_s == pytest.approx((RING_BASE["LL"] + 14 * 1.0 + 2.7) * US + 4 * PROXY)
    assert ag[2**18].latency_s - ag[2**17].latency_s == pytest.approx(2 * PROXY)
    assert ar[2**18].latency_s - ar[2**17].latency_s == pytest.approx(2 * PROXY)
    tuner = cost(t, Collective.ALL_GATHER, Algorithm.RING, Protocol.LL, 2**18, PARAMS.tuner_view())
    assert tuner.latency_s == pytest.approx((RING_BASE["LL"] + 14 * 1.0 + 2.7) * US)
    one = cost(topo(1, 8), Collective.ALL_GATHER, Algorithm.RING, Protocol.LL, size=2**18)
    assert one.latency_s == pytest.approx((RING_BASE["LL"] + 7 * NVLINK_RING["LL"]) * US)
    assert 0.2e-6 <= PROXY <= 2e-6  # the fitted value: half a microsecond, give or take


def test_explanations_print_bandwidths_without_an_exponent() -> None:
    from ibcalc.engine.base import gbps

    # 256 NDR NICs on one GPU: the explain printed "at 1.11e+04 GB/s"
    assert gbps(11.1e12) == "11,100 GB/s"
    assert gbps(371e9) == "371 GB/s"
    assert gbps(2.55e9) == "2.55 GB/s"


@pytest.mark.parametrize(
    ("algo", "key", "nodes", "sharp"),
    [
        (Algorithm.NVLS, "nvls", 1, False),
        (Algorithm.NVLS, "nvls", 3, True),
        (Algorithm.NVLS_TREE, "nvlstree", 3, False),
        (Algorithm.COLLNET_CHAIN, "collnetchain", 3, True),
        (Algorithm.COLLNET_DIRECT, "collnet", 3, True),
    ],
)
def test_in_network_algorithms_pay_their_base_latency(
    algo: Algorithm, key: str, nodes: int, sharp: bool
) -> None:
    """NCCL's baseLat is 0 for NVLS, NVLS-tree and both CollNets; a cost-parameter file that
    gives one 500 us adds 500 us to the algorithm's latency, in physical time and the tuner's
    view, and its explanation carries it as a term (review CB: the value was read and ignored,
    1 MiB NVLS on one DGX H100 at 28.82 us with 0 or 500 us)."""
    t = topo(nodes, 8, nvls=50 * GB, sharp=sharp)
    slow = PARAMS.with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "nccl_tuner": {
                "base_latency": {"assumed": "a test", "value": {key: {"Simple": "500 us"}}}
            },
        }
    )
    for view in (lambda p: p, CostParams.tuner_view):
        plain = cost(t, Collective.ALL_REDUCE, algo, Protocol.SIMPLE, 2**20, view(PARAMS))
        based = cost(t, Collective.ALL_REDUCE, algo, Protocol.SIMPLE, 2**20, view(slow))
        assert based.latency_s - plain.latency_s == pytest.approx(500 * US, rel=1e-12)
        assert based.transfer_s == plain.transfer_s
    explained = cost(t, Collective.ALL_REDUCE, algo, Protocol.SIMPLE, 2**20, slow)
    (term,) = [t for t in explained.terms if t.name == "base latency"]
    assert term.seconds == pytest.approx(500 * US)
    assert not [t for t in plain.terms if t.name == "base latency"]


def test_a_simple_network_hop_exposes_at_least_one_transport_latency(
    builtin_catalogue: Catalogue,
) -> None:
    """k_Simple(S) = max(1, f + (8 - f) min(1, S / 64 MiB)): GPUDirect-TCPXO's own floor f = 0
    had priced a small Simple hop with no transport latency, an 8 B send/recv across its
    47.7 us link at 22.4 us (review CE); now one one-way latency at least, reaching the ramp at
    8 MiB (8 x 8/64 = 1). EFA's floor of 2 is above the bound and unchanged."""

    def count(system: str, size: float) -> float:
        topo = resolve_cluster(builtin_catalogue, ClusterSpec(system=system, nodes=2)).topology
        assert topo.out is not None
        tau = topo.out.transport_latency_s
        hw = net_hop_latency(topo, Algorithm.RING, Protocol.SIMPLE, 0.0, PARAMS) - tau * (
            2.0 if system == "aws-p5" else 1.0
        )
        return (net_hop_latency(topo, Algorithm.RING, Protocol.SIMPLE, size, PARAMS) - hw) / tau

    for size, expected in ((8, 1.0), (4 * 2**20, 1.0), (8 * 2**20, 1.0), (16 * 2**20, 2.0)):
        assert count("gcp-a3-mega", size) == pytest.approx(expected, rel=1e-12), size
    assert count("gcp-a3-mega", 2**30) == pytest.approx(8.0, rel=1e-12)
    assert count("aws-p5", 8) == pytest.approx(2.0 + 6.0 * 8 / 2**26, rel=1e-12)
    # the command line's send/recv of 8 B across TCPXO, forced to Simple: above one way
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="gcp-a3-mega", nodes=2))
    est = estimate_on(cluster, Collective.SEND_RECV, 8, protocol=Protocol.SIMPLE)
    assert cluster.topology.out is not None
    assert est.time_s > cluster.topology.out.transport_latency_s
