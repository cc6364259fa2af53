"""Channels, the channels a small collective gets, chunks and the GPU clock, worked by hand.

Expected values come from NCCL's rules as docs/model.md#pipeline-fill states them (NCCL 2.30.7
src/enqueue.cc, src/graph/tuning.cc, src/include/device.h) and from NCCL's own logs copied in
benchmarks/data/sweeps, which print the communicator's "N coll channels".
"""

from __future__ import annotations

import dataclasses

import pytest

from conftest import round_topology
from ibcalc.catalogue.cost_params import load_cost_params
from ibcalc.engine.band import transport_class
from ibcalc.engine.base import (
    Topology,
    clock_scale,
    intra_hop_latency,
    ll_network_transfer,
    net_hop_latency,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.pipeline import (
    Stages,
    active_channels,
    channel_rates,
    channel_unit_bytes,
    channels,
    chunk_plan,
    fill_seconds,
    held_stages,
    tree_chunk_bytes,
)
from ibcalc.engine.select import evaluate
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol

PARAMS = load_cost_params(use_env=False)
TUNER = PARAMS.tuner_view()
GB = 1e9
KIB = 1024


cluster = round_topology


@pytest.mark.parametrize(
    ("nodes", "gpus", "nics", "path", "expected", "log"),
    [
        (1, 4, 8, "nvlink", 24, "sweeps 13, 14: 4 x H100 on one node, '24 coll channels'"),
        (1, 2, 8, "pci", 4, "sweeps 23, 25, 26: 2 x A100 PCIe, '4 coll channels'"),
        (2, 8, 4, "nvlink", 8, "sweep 05: 2 x p4d, 4 EFA NICs per 8 A100, '8 coll channels'"),
        (2, 8, 32, "nvlink", 16, "sweep 06: 2 x p5, 32 EFA interfaces per 8 H100, '16'"),
        (2, 4, 4, "nvlink", 8, "sweeps 10-12: 2 x 4 H100, 4 NICs each, '8 coll channels'"),
        # every ring of a PCIe node crosses every GPU's PCIe link: the NICs add no channel
        (2, 8, 8, "pci", 4, "as on one PCIe node (sweeps 23, 25, 26): 4, not 2 per NIC"),
        (2, 8, 1, "pci", 2, "one NIC per node: one ring, 2 channels"),
    ],
)
def test_channel_counts_are_the_ones_nccl_logs(
    nodes: int, gpus: int, nics: int, path: str, expected: int, log: str
) -> None:
    assert channels(cluster(nodes, gpus, nics, path=path), PARAMS) == expected, log


def test_a_small_collective_gets_one_channel_per_threads_times_threshold() -> None:
    one_node = cluster(1, 8)
    # Simple: 512 threads x 64 B = 32 KiB per channel, of 24
    simple = channel_unit_bytes(one_node, Protocol.SIMPLE, PARAMS, ring=True)
    assert simple == 512 * 64
    assert active_channels(384 * KIB, 24, simple) == 12
    assert active_channels(24 * 32 * KIB, 24, simple) == 24  # all of them from 768 KiB
    assert active_channels(4 * KIB, 24, simple) == 1  # never fewer than one
    # LL128: 640 threads x 8 B; the ring's LL threshold grows with the ranks: 512 x 8 B x 8
    assert channel_unit_bytes(one_node, Protocol.LL128, PARAMS, ring=True) == 640 * 8
    assert channel_unit_bytes(one_node, Protocol.LL, PARAMS, ring=True) == 512 * 8 * 8
    assert channel_unit_bytes(one_node, Protocol.LL, PARAMS, ring=False) == 512 * 8
    # the tuner prices every size with all channels
    assert channel_unit_bytes(one_node, Protocol.SIMPLE, TUNER, ring=True) == 0
    assert active_channels(4 * KIB, 24, 0.0) == 24


def _cost(
    topo: Topology,
    size: float,
    algorithm: Algorithm,
    protocol: Protocol,
    params: CostParams = PARAMS,
) -> Cost:
    found = [
        c
        for c in evaluate(Collective.ALL_REDUCE, size, topo, params)
        if c.algorithm is algorithm and c.protocol is protocol
    ]
    assert len(found) == 1
    return found[0]


def test_ring_transfer_runs_on_the_channels_it_gets() -> None:
    # one node of 8: ring Simple at 100 GB/s x duplex 1 (the test tier) moves 2 x 7/8 x S; at
    # 384 KiB it gets 12 of 24 channels, so half the bandwidth: 2 x 7/8 x 384 KiB / 50 GB/s
    topo = cluster(1, 8)
    small = _cost(topo, 384 * KIB, Algorithm.RING, Protocol.SIMPLE)
    assert small.transfer_s == pytest.approx(2 * 7 / 8 * 384 * KIB / (50 * GB))
    large = _cost(topo, 2**30, Algorithm.RING, Protocol.SIMPLE)
    assert large.transfer_s == pytest.approx(2 * 7 / 8 * 2**30 / (100 * GB))
    # in the trimmed range the transfer is flat: twice the bytes on twice the channels
    double = _cost(topo, 2 * 384 * KIB, Algorithm.RING, Protocol.SIMPLE)
    assert double.transfer_s == pytest.approx(small.transfer_s)


def test_tree_fill_uses_the_channel_count_and_nccl_chunks() -> None:
    # 2 nodes x 8 GPUs, 8 NICs of 10 GB/s: 16 channels. Tree/Simple at 4 MiB is bound by the
    # chain inside the node: 100 GB/s / 2 (up and down) x NCCL's tree factor 0.92 = 46 GB/s
    # (below the 80 GB/s of the 2-node network tree). Stages: 2 x 7 in the nodes, 2 across (16,
    # depth 8); per channel D = 256 KiB; the chunk halves 512 -> 256 -> 128 KiB (D/C < 64),
    # then 64 KiB (D/C < 32) and 32 KiB (D/C < 8). NCCL's tree correction for Simple at 4 MiB
    # (bucket 4M) is 0.7, applied to the transfer: the tree moves its bytes at 0.7 x 46 GB/s.
    # A chunk crosses each stage at its own tier's per-channel rate, without the correction, and
    # every stage but one of the slowest tier's holds it: 13 chain stages at 46 GB/s / 16 and
    # both network stages at 80 GB/s x 0.92 / 16
    topo = cluster(2, 8)
    tree = _cost(topo, 4 * 2**20, Algorithm.TREE, Protocol.SIMPLE)
    assert tree.transfer_s == pytest.approx(4 * 2**20 / (0.7 * 46 * GB))
    assert tree.fill_s == pytest.approx(
        13 * 32 * KIB / (46 * GB / 16) + 2 * 32 * KIB / (80 * 0.92 * GB / 16)
    )
    # LL keeps the fill alone: at 4 MiB NCCL's LL factor (0.7) is not applied
    ll = _cost(topo, 4 * 2**20, Algorithm.TREE, Protocol.LL)
    tuner_ll = _cost(topo, 4 * 2**20, Algorithm.TREE, Protocol.LL, params=TUNER)
    assert tuner_ll.transfer_s == pytest.approx(ll.transfer_s / 0.7)


def test_a_network_bound_tree_fills_each_stage_at_its_own_tier_s_rate() -> None:
    """A pipeline of stage times t_i moving k chunks takes sum(t_i) + (k - 1) max(t_i): the
    stages inside the nodes fill at the chain's rate, not the network's (review DG: the fill had
    run every stage at the binding tier's rate, 444 us where stage by stage it is about 160 us
    on 8 x DGX H100 with one NIC each at 64 MiB)."""
    # 2 nodes x 8 GPUs, 1 NIC of 10 GB/s: 2 channels. Network tree 10 GB/s x 0.92 = 9.2 GB/s
    # binds (the chain: 100 / 2 x 0.92 = 46 GB/s). At 4 MiB, D = 2 MiB per channel, depth 8:
    # 512 -> 256 -> 128 KiB (D/C < 64), then 64 KiB (D/C < 32); 32 chunks >= 8 stops there.
    # Simple: the 14 chain stages hold a 64 KiB chunk at 46 / 2 GB/s per channel, one of the two
    # network stages at 9.2 / 2 GB/s; the other is the transfer's own
    topo = cluster(2, 8, 1)
    tree = _cost(topo, 4 * 2**20, Algorithm.TREE, Protocol.SIMPLE)
    assert tree.fill_s == pytest.approx(14 * 64 * KIB / (23 * GB) + 64 * KIB / (4.6 * GB))
    # every stage at the binding 4.6 GB/s per channel would be 4 x as long
    assert 3.9 * tree.fill_s < 15 * 64 * KIB / (4.6 * GB)
    # LL: only the network stages hold a chunk (one LL step, 32 KiB), both at the network's rate:
    # 10 GB/s x 0.92 / 3.8 (NCCL's tree LL divisor) on 2 channels, below NCCL's LL cap
    ll = _cost(topo, 4 * 2**20, Algorithm.TREE, Protocol.LL)
    assert ll.fill_s == pytest.approx(2 * 32 * KIB / (9.2 * GB / 3.8 / 2))


def test_the_stages_that_hold_a_chunk() -> None:
    """A synchronous pipeline of stage times t_i moving k chunks takes sum(t_i) + (k - 1) max(t_i):
    Simple's fill is every stage's time but one of the slowest; LL and LL128 stream through the
    scale-up stages and every network stage holds a chunk, the binding one too."""
    chain, net, wan = (
        Stages(14, 100 * GB, "up"),
        Stages(2, 40 * GB, "net"),
        Stages(2, 1 * GB, "wan"),
    )
    # one rate everywhere: (stages - 1) x C / b
    same = (Stages(14, 40 * GB, "up"), net)
    # (a tie drops a stage of the first tier listed: the fill is the same either way)
    assert held_stages(same, Protocol.SIMPLE) == ((13, 40 * GB, "up"), (2, 40 * GB, "net"))
    assert fill_seconds(1e6, held_stages(same, Protocol.SIMPLE)) == pytest.approx(
        15 * 1e6 / (40 * GB)
    )
    # the network binds: one of its stages is the transfer's own
    assert held_stages((chain, net), Protocol.SIMPLE) == ((14, 100 * GB, "up"), (1, 40 * GB, "net"))
    # the WAN binds: one of its two stages goes, the network's both stay
    assert held_stages((chain, net, wan), Protocol.SIMPLE) == (
        (14, 100 * GB, "up"),
        (2, 40 * GB, "net"),
        (1, 1 * GB, "wan"),
    )
    # the chain binds (one tier alone: one node, or one GPU per node): all but one of it
    assert held_stages((Stages(14, 10 * GB, "up"),), Protocol.SIMPLE) == ((13, 10 * GB, "up"),)
    # a tier of no stages is left out; a single stage holds nothing
    assert held_stages((Stages(0, 1.0, "up"), net), Protocol.SIMPLE) == ((1, 40 * GB, "net"),)
    assert held_stages((Stages(1, GB, "net"),), Protocol.SIMPLE) == ()
    # LL and LL128: the network and WAN stages, all of them, whichever binds
    for protocol in (Protocol.LL, Protocol.LL128):
        assert held_stages((chain, net, wan), protocol) == ((2, 40 * GB, "net"), (2, 1 * GB, "wan"))
        assert held_stages((chain,), protocol) == ()
    # per channel: the tier's rate over every channel, whatever the active count
    assert channel_rates(((13, 160 * GB, "up"),), 16) == ((13, 10 * GB, "up"),)


def test_ll128_tree_chunk_halves_for_the_node_count() -> None:
    # 2 x 8 GPUs: s = 1 + log2(2) + 0.1 x 8 = 2.8; the step of 576,000 B halves while a channel
    # holds fewer than 2.8 x 64 / 8 = 22.4 chunks (above 128 KiB), then fewer than 5.6 (above
    # 32 KiB). D = 256 KiB: 576,000 -> 288,000 -> 144,000 -> 72,000, then 36,000
    plan = chunk_plan(cluster(2, 8), Protocol.LL128, 1, PARAMS)
    assert plan[0] == 576_000
    assert plan[1] == (pytest.approx((2.8 * 64 / 8, 128 * KIB)), pytest.approx((5.6, 32 * KIB)))
    assert tree_chunk_bytes(256 * KIB, plan) == 36_000
    # a channel's whole share when that is smaller; LL holds one step (32 KiB of payload)
    assert tree_chunk_bytes(10_000, plan) == 10_000
    # 20,000 B per channel: 36,000 is still above 32 KiB and halves once more
    assert tree_chunk_bytes(20_000, plan) == 18_000
    assert tree_chunk_bytes(256 * KIB, chunk_plan(cluster(2, 8), Protocol.LL, 1, PARAMS)) == (
        32 * KIB
    )


def test_one_gpu_per_node_takes_nccl_s_tree_row_for_every_network_hop() -> None:
    """NCCL 2.30.7 ncclTopoTuneModel: "With ppn=1 latencies are fully exposed, use the Tree
    network latency", interLat = hwLat[NET][TREE][p] for every algorithm (review DG: a ring of
    1 GPU per node had taken the Ring row, 2.7 us in LL where the Tree row is 5.0)."""
    one, two = cluster(8, 1, 1), cluster(8, 2, 2)
    for params in (PARAMS, TUNER):
        for algorithm in (Algorithm.RING, Algorithm.PAT, Algorithm.TREE):
            # Tree row: LL 5.0, LL128 8.5, Simple 14.0 us (data/cost_params.yaml hop_latency)
            for protocol, tree_us in ((Protocol.LL, 5.0), (Protocol.LL128, 8.5)):
                if algorithm is Algorithm.PAT:
                    continue
                hop = net_hop_latency(one, algorithm, protocol, 1024, params)
                assert hop == pytest.approx(tree_us * 1e-6)
            hop = net_hop_latency(one, algorithm, Protocol.SIMPLE, 1024, params)
            assert hop == pytest.approx(14.0e-6)
        # two GPUs per node keep each algorithm's own row: Ring LL 2.7, LL128 4.0 us
        assert net_hop_latency(two, Algorithm.RING, Protocol.LL, 1024, params) == pytest.approx(
            2.7e-6
        )
        assert net_hop_latency(two, Algorithm.RING, Protocol.LL128, 1024, params) == pytest.approx(
            4.0e-6
        )
    # a ring/LL reduce-scatter of 7 x 1 GPU: NCCL's ring LL base 6.6 us and N - 1 = 6 network
    # steps of 5.0 us (the Ring row had given 6.6 + 6 x 2.7 = 22.8 us, NCCL's estimate)
    (ring_ll,) = [
        c
        for c in evaluate(
            Collective.REDUCE_SCATTER, 7 * 128, cluster(7, 1, 1), TUNER, frozenset({Algorithm.RING})
        )
        if c.protocol is Protocol.LL
    ]
    assert ring_ll.latency_s == pytest.approx((6.6 + 6 * 5.0) * 1e-6)
    # a ring broadcast keeps the Ring row (NCCL prices it base + lat, lat its own row), and so
    # does point-to-point work, which NCCL does not tune (review DK: both had taken the Tree
    # row, and 8 x 1 broadcasts of 512 KiB-2 MiB had moved from LL128 to Simple, twice slower)
    assert net_hop_latency(one, Algorithm.RING, Protocol.LL, 1024, PARAMS, own_row=True) == (
        pytest.approx(2.7e-6)
    )
    (bcast_ll,) = [
        c
        for c in evaluate(
            Collective.BROADCAST, 4096, cluster(8, 1, 1), TUNER, frozenset({Algorithm.RING})
        )
        if c.protocol is Protocol.LL
    ]
    assert bcast_ll.latency_s == pytest.approx((6.6 + 2.7) * 1e-6)
    (p2p_ll,) = [
        c
        for c in evaluate(Collective.SEND_RECV, 4096, cluster(8, 1, 1), PARAMS)
        if c.protocol is Protocol.LL
    ]
    assert "NCCL NET hop 2.7 us (ring/LL, hwLat)" in " ".join(t.detail for t in p2p_ll.terms)


def test_intra_node_hops_scale_with_the_gpu_clock() -> None:
    ampere = cluster(2, 8, gpu_arch="ampere")
    # A100 1410 MHz against H100's 1980 MHz: NCCL's 0.6 us NVLink ring/LL hop takes 0.6 x 1.404
    assert clock_scale(ampere, PARAMS) == pytest.approx(1980 / 1410)
    hop = intra_hop_latency(ampere, Algorithm.RING, Protocol.LL, PARAMS)
    assert hop == pytest.approx(0.6e-6 * 1980 / 1410)
    # network hops are the NIC's and the proxy's: NCCL's 2.7 us, unscaled
    assert net_hop_latency(ampere, Algorithm.RING, Protocol.LL, 1024, PARAMS) == pytest.approx(
        2.7e-6
    )
    # Hopper is the reference; AMD, unknown generations and NCCL's tuner view stay unscaled
    for arch, params in (("hopper", PARAMS), ("cdna3", PARAMS), ("", PARAMS), ("ampere", TUNER)):
        topo = dataclasses.replace(ampere, gpu_arch=arch)
        assert clock_scale(topo, params) == 1.0
        assert intra_hop_latency(topo, Algorithm.RING, Protocol.LL, params) == pytest.approx(0.6e-6)
    # Ada (L40S, 2520 MHz) is faster than the reference
    assert clock_scale(dataclasses.replace(ampere, gpu_arch="ada"), PARAMS) == pytest.approx(
        1980 / 2520
    )


def test_a_verbs_link_with_a_latency_stays_verbs() -> None:
    # InfiniBand given a 5 us latency (as `ibcalc calibrate` may fit): once per network hop for
    # every protocol, LL128 still allowed, no LL network extra, the verbs error band
    verbs = cluster(2, 8)
    assert verbs.out is not None
    calibrated = dataclasses.replace(
        verbs, out=verbs.out.model_copy(update={"transport_latency_s": 5e-6, "plugin": False})
    )
    assert calibrated.ll128_allowed
    simple = net_hop_latency(calibrated, Algorithm.RING, Protocol.SIMPLE, 2**30, PARAMS)
    assert simple == pytest.approx(14.0e-6 + 5e-6)  # NCCL's NET Simple hop + the latency, once
    assert transport_class(calibrated) == "verbs"
    assert ll_network_transfer(calibrated, 65536, Protocol.LL, PARAMS) == 0.0
    # the same latency on a plugin transport: no LL128, the Simple ramp (8 x at 1 GiB), the
    # LL network extra, the plugin band
    plugin = dataclasses.replace(
        verbs, out=verbs.out.model_copy(update={"transport_latency_s": 5e-6, "plugin": True})
    )
    assert not plugin.ll128_allowed
    ramp = PARAMS.calibrated.simple_transport_factor
    assert net_hop_latency(plugin, Algorithm.RING, Protocol.SIMPLE, 2**30, PARAMS) == (
        pytest.approx(14.0e-6 + ramp * 5e-6)
    )
    assert transport_class(plugin) == "plugin"
    # LL moves min(S, 64 KiB) at 1.2 GB/s across a plugin transport (data/cost_params.yaml:
    # assumptions.ll_net_saturation 64 KiB, calibrated.ll_net_bandwidth 1.2 GB/s):
    # 4096 / 1.2e9 = 3.41 us, 65536 / 1.2e9 = 54.61 us, and no more past 64 KiB
    for size, held in ((4096, 4096), (65536, 65536), (2**20, 65536)):
        floor = ll_network_transfer(plugin, size, Protocol.LL, PARAMS)
        assert floor == pytest.approx(held / 1.2e9, rel=1e-12), size
    assert ll_network_transfer(plugin, 65536, Protocol.SIMPLE, PARAMS) == 0.0


def test_the_fill_term_says_which_stages_hold_a_chunk_and_for_how_long() -> None:
    """--explain's fill term, per tier: how many stages hold the chunk, at what rate per channel,
    and the time each tier takes (one-tier pipelines had read '14 in nodes stages' and '4 across
    stages', and no tier's time was shown: review DT)."""

    def fill_term(topo: Topology, protocol: Protocol) -> str:
        cost = _cost(topo, 4 * 2**20, Algorithm.TREE, protocol)
        (term,) = [t for t in cost.terms if t.name == "pipeline fill"]
        return term.detail

    # 2 x 8, 8 NICs: 13 chain stages at 46 / 16 GB/s and both network ones at 73.6 / 16 GB/s
    two = fill_term(cluster(2, 8), Protocol.SIMPLE)
    assert two.startswith(
        "16 stages (14 in nodes, 2 across nodes): the first chunk, 32 KiB, crosses each before "
        "the pipeline runs full; every stage holds it but one in nodes, the slowest, whose time "
        "is the transfer's own: 13 in nodes at 2.88 GB/s per channel = "
        f"{13 * 32 * KIB / (46 * GB / 16) * 1e6:.3g} us, 2 across nodes at 4.60 GB/s per "
        f"channel = {2 * 32 * KIB / (73.6 * GB / 16) * 1e6:.3g} us (16 channels;"
    )
    # one node: 14 stages in it, all but the last hold a chunk
    one = fill_term(cluster(1, 8), Protocol.SIMPLE)
    assert one.startswith("14 stages in the node: the first chunk, ")
    assert (
        "every stage holds it but the last, whose time is the transfer's own: 13 in the node" in one
    )
    # one GPU per node: only network stages, and no word of stages in nodes
    assert fill_term(cluster(4, 1, 1), Protocol.SIMPLE).startswith("4 stages across nodes: ")
    assert "; each network stage holds it (the proxy sends a whole step): 4 across nodes at " in (
        fill_term(cluster(4, 1, 1), Protocol.LL)
    )
    # LL streams through the chain; each network stage holds a step
    ll = fill_term(cluster(2, 8), Protocol.LL)
    assert (
        "LL and LL128 lines stream through the stages in nodes; each network stage holds it" in ll
    )
    assert ": 2 across nodes at " in ll
    # the same figures as fields (JSON's explanation; review DT 5): count x chunk / rate each
    cost = _cost(cluster(2, 8), 4 * 2**20, Algorithm.TREE, Protocol.SIMPLE)
    (term,) = [t for t in cost.terms if t.name == "pipeline fill"]
    up, net = term.parts
    assert (up.tier, up.count, up.size_bytes) == ("up", 13, 32 * KIB)
    assert (net.tier, net.count, net.size_bytes) == ("net", 2, 32 * KIB)
    assert up.rate_Bps == pytest.approx(46 * GB / 16)
    assert net.rate_Bps == pytest.approx(73.6 * GB / 16)
    assert up.seconds == pytest.approx(13 * 32 * KIB / (46 * GB / 16))
    assert net.seconds == pytest.approx(2 * 32 * KIB / (73.6 * GB / 16))
    assert up.seconds + net.seconds == pytest.approx(term.seconds)
    # other terms have no parts
    assert all(t.parts == () for t in cost.terms if t.name != "pipeline fill")
