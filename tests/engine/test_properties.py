"""Properties of the cost engine over random clusters and sizes (hypothesis).

* time grows with size; more bandwidth never slows anything; on every preset, less leaf
  oversubscription slows nothing and a faster link (NIC count held) no (algorithm, protocol);
* no point-to-point algorithm beats the lower bounds of docs/model.md#lower-bounds (per-rank
  injection, and node-level: each node treated as one rank with its NICs' bandwidth);
* in-network algorithms (NVLS, SHARP) respect their own bound, S / B per GPU (docs/model.md#nvls);
* busbw never exceeds the physical ceiling of the tier crossed, except for the stated
  equivalent figures (NVLS, SHARP, 2-node tree).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibcalc.catalogue.cost_params import load_cost_params
from ibcalc.engine.base import Topology
from ibcalc.engine.select import evaluate
from ibcalc.engine.types import Algorithm, Collective, ScaleOutTier, ScaleUpTier, busbw_factor

#: The built-in cost parameters (data/cost_params.yaml), no override file.
PARAMS = load_cost_params(use_env=False)
GB = 1e9
IN_NETWORK = {
    Algorithm.NVLS,
    Algorithm.NVLS_TREE,
    Algorithm.COLLNET_DIRECT,
    Algorithm.COLLNET_CHAIN,
}
COLLECTIVES = list(Collective)


@st.composite
def topologies(draw: st.DrawFn) -> Topology:
    gpus = draw(st.sampled_from([1, 2, 4, 8, 72]))
    nodes = draw(st.integers(1, 64))
    if gpus * nodes < 2:
        nodes = 2
    up_bw = draw(st.floats(5, 1000)) * GB
    nvls = draw(st.booleans()) and gpus > 1
    up = None
    if gpus > 1:
        up = ScaleUpTier(
            link_id="up",
            gpus=gpus,
            line_Bps=up_bw,
            bw_Bps=up_bw,
            nvls_bw_Bps=up_bw * 0.8 if nvls else None,
            path=draw(st.sampled_from(["nvlink", "pci"])),
        )
    out = None
    if nodes > 1:
        nic = draw(st.floats(1, 100)) * GB
        out = ScaleOutTier(
            link_id="net",
            domains=nodes,
            nics_per_domain=draw(st.integers(1, 16)),
            nic_line_Bps=nic,
            nic_bw_Bps=nic,
            transport_latency_s=draw(st.floats(0, 100e-6)),
            sharp=draw(st.booleans()),
            oversubscription=draw(st.sampled_from([1.0, 2.0, 4.0])),
            cross_leaf_fraction=draw(st.sampled_from([1.0, 0.5])),
            neighbour_fraction=draw(st.sampled_from([None, 0.0, 0.25, 1.0])),
        )
    arch = draw(st.sampled_from(["volta", "ampere", "hopper", "blackwell"]))
    wan = None
    sites = draw(st.sampled_from([1, 1, 2, 4]))
    if nodes > 1 and nodes % sites == 0 and sites > 1:
        wan_bw = draw(st.floats(0.1, 50)) * GB
        wan = ScaleOutTier(
            link_id="wan",
            domains=sites,
            nics_per_domain=draw(st.integers(1, 8)),
            nic_line_Bps=wan_bw,
            nic_bw_Bps=wan_bw,
            transport_latency_s=draw(st.floats(0, 20e-3)),
        )
    return Topology(ranks_per_domain=gpus, domains=nodes, up=up, out=out, arch=arch, wan=wan)


sizes = st.floats(min_value=1e3, max_value=1e11)


def _scaled(t: Topology, up: float, net: float) -> Topology:
    new_up = None
    if t.up is not None:
        new_up = t.up.model_copy(
            update={
                "bw_Bps": t.up.bw_Bps * up,
                "line_Bps": t.up.line_Bps * up,
                "nvls_bw_Bps": t.up.nvls_bw_Bps * up if t.up.nvls_bw_Bps else None,
            }
        )
    new_out = None
    if t.out is not None:
        new_out = t.out.model_copy(
            update={
                "nic_bw_Bps": t.out.nic_bw_Bps * net,
                "nic_line_Bps": t.out.nic_line_Bps * net,
            }
        )
    new_wan = None
    if t.wan is not None:
        new_wan = t.wan.model_copy(
            update={
                "nic_bw_Bps": t.wan.nic_bw_Bps * net,
                "nic_line_Bps": t.wan.nic_line_Bps * net,
            }
        )
    return Topology(
        ranks_per_domain=t.m, domains=t.domains, up=new_up, out=new_out, arch=t.arch, wan=new_wan
    )


@settings(max_examples=150, deadline=None)
@given(t=topologies(), size=sizes, coll=st.sampled_from(COLLECTIVES), factor=st.floats(1.01, 100))
def test_time_grows_with_size(t: Topology, size: float, coll: Collective, factor: float) -> None:
    """Every (algorithm, protocol) and the fastest of them take longer for more bytes.

    NCCL's own choice can dip where its tuner switches protocol (measured: 2 x p5 all-reduce,
    64 KiB in 135 us, 1 MiB in 123 us), so the property is stated per algorithm and protocol.
    """
    small = {(c.algorithm, c.protocol): c.time_s for c in evaluate(coll, size, t, PARAMS)}
    large = {(c.algorithm, c.protocol): c.time_s for c in evaluate(coll, size * factor, t, PARAMS)}
    for key, time_s in small.items():
        if key in large:
            assert large[key] >= time_s * (1 - 1e-12), key
    assert min(large.values()) >= min(small.values()) * (1 - 1e-12)


@settings(max_examples=150, deadline=None)
@given(
    t=topologies(),
    size=sizes,
    coll=st.sampled_from(COLLECTIVES),
    up=st.floats(1, 10),
    net=st.floats(1, 10),
)
def test_more_bandwidth_never_slows(
    t: Topology, size: float, coll: Collective, up: float, net: float
) -> None:
    before = {(c.algorithm, c.protocol): c.time_s for c in evaluate(coll, size, t, PARAMS)}
    after = {
        (c.algorithm, c.protocol): c.time_s
        for c in evaluate(coll, size, _scaled(t, up, net), PARAMS)
    }
    for key, time_s in before.items():
        assert after[key] <= time_s * (1 + 1e-12)
    # the fastest candidate never slows either; NCCL's *choice* may (more bandwidth can move its
    # tuner from LL to Simple where Simple is physically slower on a plugin transport: the model
    # reports what NCCL would run, docs/model.md#how-auto-picks)
    assert min(after.values()) <= min(before.values()) * (1 + 1e-12)


def _injection(t: Topology) -> float:
    """Most a rank can send per second: its scale-up link plus its share of the NICs."""
    up = t.up.bw_Bps if t.up is not None and t.m > 1 else 0.0
    net = t.out.domain_bw_Bps / t.m if t.out is not None and t.domains > 1 else 0.0
    return up + net


_BOUND = {
    Collective.ALL_REDUCE: lambda n: 2 * (n - 1) / n,
    Collective.ALL_GATHER: lambda n: (n - 1) / n,
    Collective.REDUCE_SCATTER: lambda n: (n - 1) / n,
    Collective.ALL_TO_ALL: lambda n: (n - 1) / n,
    Collective.BROADCAST: lambda n: 1.0,
    Collective.REDUCE: lambda n: 1.0,
}


def _best_net(t: Topology) -> float:
    """A domain's network rate under the least leaf contention any traffic pattern meets."""
    return max(t.domain_bw_Bps("neighbour"), t.domain_bw_Bps("uniform"))


@settings(max_examples=200, deadline=None)
@given(t=topologies(), size=sizes, coll=st.sampled_from(list(_BOUND)))
def test_no_point_to_point_algorithm_beats_the_lower_bounds(
    t: Topology, size: float, coll: Collective
) -> None:
    n, big_n = t.ranks, t.domains
    per_rank = _BOUND[coll](n) * size / _injection(t)
    for c in evaluate(coll, size, t, PARAMS):
        if c.algorithm in IN_NETWORK:
            continue
        assert c.transfer_s >= per_rank * (1 - 1e-9), c
        if big_n > 1 and coll is Collective.ALL_REDUCE:
            node_bound = 2 * (big_n - 1) / big_n * size / _best_net(t)
            assert c.transfer_s >= node_bound * (1 - 1e-9), c


def test_in_network_reduction_bound() -> None:
    """Both bounds are checked on candidates that exist: a run that draws no NVLS candidate, or
    no in-network candidate across domains, checks nothing, so each must be met in some of the
    150 examples. The draws are derandomized (a fixed seed, no example database), so the count
    is the same on every run: a random floor of 20 had failed once in CI with 18 NVLS draws, where
    five runs had met NVLS in 40-62 and in-network across domains in 51-75. With the fixed seed:
    54 and 68."""
    checked = {"nvls": 0, "across": 0}

    @settings(max_examples=150, deadline=None, derandomize=True, database=None)
    @given(t=topologies(), size=sizes)
    def check(t: Topology, size: float) -> None:
        seen: set[str] = set()
        for c in evaluate(Collective.ALL_REDUCE, size, t, PARAMS):
            if c.algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE):
                assert t.up is not None
                assert t.up.nvls_bw_Bps is not None
                assert c.transfer_s >= size / t.up.nvls_bw_Bps * (1 - 1e-9)
                seen.add("nvls")
            if c.algorithm in IN_NETWORK and t.domains > 1:
                assert c.transfer_s >= size / _best_net(t) * (1 - 1e-9)
                seen.add("across")
        for key in seen:
            checked[key] += 1

    check()
    assert min(checked.values()) >= 10, checked


@settings(max_examples=200, deadline=None)
@given(t=topologies(), size=sizes, coll=st.sampled_from(COLLECTIVES))
def test_busbw_within_physical_ceiling(t: Topology, size: float, coll: Collective) -> None:
    n = t.ranks
    up_line = t.up.line_Bps if t.up is not None and t.m > 1 else float("inf")
    for c in evaluate(coll, size, t, PARAMS):
        if c.equivalent_busbw:
            continue
        busbw = size / c.time_s * busbw_factor(coll, n)
        if t.domains > 1 and c.algorithm is not Algorithm.P2P:
            ceiling = min(up_line, _best_net(t)) if t.m > 1 else _best_net(t)
            if coll is Collective.ALL_TO_ALL:
                ceiling = t.domain_bw_Bps("uniform") / t.m * (n - 1) / (n - t.m)
        elif c.algorithm is Algorithm.P2P and t.domains > 1:
            assert t.out is not None
            ceiling = t.gpu_nics * t.out.nic_bw_Bps  # the NICs of the pair's GPU
        else:
            ceiling = up_line
        assert busbw <= ceiling * (1 + 1e-9), (c, busbw, ceiling)


@settings(max_examples=150, deadline=None)
@given(t=topologies(), size=sizes, coll=st.sampled_from(COLLECTIVES))
def test_explanations_add_up(t: Topology, size: float, coll: Collective) -> None:
    """``--explain`` lists every cost term by term, each with the numbers it was worked out
    from, and the terms add up to one operation's time (the table's "sum of the terms above")."""
    for cost in evaluate(coll, size, t, PARAMS):
        assert len(cost.terms) >= 2, cost.algorithm
        assert not any(term.detail.startswith("formula:") for term in cost.terms), cost.algorithm
        total = sum(term.seconds for term in cost.terms)
        assert abs(total - cost.single_s) <= 1e-9 * cost.single_s + 1e-15, (
            cost.algorithm,
            cost.protocol,
            total,
            cost.single_s,
        )


def test_time_grows_with_size_on_every_preset() -> None:
    """Every (algorithm, protocol) of every preset on 1, 2, 4 and 16 nodes, at every power of two
    from 8 B to 8 GiB and just below each: never less time for more bytes (issue 9). The random
    clusters above missed tree/Simple all-reduce between 1 and 8 MiB (dgx-h100 on 16 nodes:
    332 us at 1 MiB, 318 us at 2 MiB), whose fill took NCCL's size-bucket correction, and the
    powers of two alone missed the correction's own steps (4 x DGX H100 tree/LL128: 126.4 us
    for 4,190,208 B, 115.5 us for 4 MiB)."""
    from ibcalc import ClusterSpec, load_catalogue, resolve_cluster
    from ibcalc.errors import IbcalcError

    catalogue = load_catalogue(use_env=False)
    sizes = [size for k in range(3, 34) for size in (2**k * 0.999, float(2**k))]
    series = 0
    for system in catalogue.systems:
        for nodes in (1, 2, 4, 16):
            try:
                cluster = resolve_cluster(catalogue, ClusterSpec(system=system.id, nodes=nodes))
            except IbcalcError:
                continue
            for coll in COLLECTIVES:
                times: dict[tuple[Algorithm, object], list[tuple[float, float]]] = {}
                for size in sizes:
                    for c in evaluate(coll, size, cluster.topology, PARAMS):
                        times.setdefault((c.algorithm, c.protocol), []).append((size, c.time_s))
                for key, points in times.items():
                    series += 1
                    for (s0, t0), (s1, t1) in pairwise(points):
                        assert t1 >= t0 * (1 - 1e-12), (system.id, nodes, coll, key, s0, s1)
    assert series > 2000  # 2278 when written: the scan covers what it says


@pytest.mark.xfail(
    strict=True,
    reason="known miss (docs/model.md#limitations): NCCL's LL cap is spread over the "
    "communicator's channels, and fewer NICs mean fewer channels; the NIC-independent form "
    "made the held-out mid median 17.2 -> 18.8 %",
)
def test_more_nics_never_slow_a_small_ll_ring() -> None:
    """4 x DGX H100, ring/LL all-reduce of 256 KiB: 1, 2, 4, 8 NICs per node must not take
    longer with more NICs (a fuzz pass measured 105, 130, ..., 279 us)."""
    from ibcalc import ClusterSpec, load_catalogue, resolve_cluster
    from ibcalc.engine.types import Protocol

    catalogue = load_catalogue(use_env=False)
    times = []
    for nics in (1, 2, 4, 8):
        spec = ClusterSpec(system="dgx-h100", nodes=4, nics_per_node=nics)
        topo = resolve_cluster(catalogue, spec).topology
        (ring_ll,) = [
            c
            for c in evaluate(Collective.ALL_REDUCE, 256 * 1024.0, topo, PARAMS)
            if c.algorithm is Algorithm.RING and c.protocol is Protocol.LL
        ]
        times.append(ring_ll.time_s)
    assert all(t1 <= t0 * (1 + 1e-12) for t0, t1 in pairwise(times)), times


#: Sizes from 8 B to 16 GiB by factors of 4.
_SIZES_BY_4 = [float(8 * 4**k) for k in range(16)]


def _never_slower(
    system: str, nodes: int, worse: dict[str, Any], better: dict[str, Any], *, choice: bool
) -> tuple[int, int]:
    """Every collective on ``nodes`` x ``system`` at :data:`_SIZES_BY_4`, the spec changed by
    ``worse`` and by ``better``: no (algorithm, protocol), nor NCCL's choice where ``choice``,
    takes longer on the better one. Returns (times compared, times the better one shortened)."""
    from ibcalc import ClusterSpec, load_catalogue, resolve_cluster
    from ibcalc.errors import SizeTooSmallError
    from ibcalc.facade import CollectivePlan
    from ibcalc.units import MiB

    catalogue = load_catalogue(use_env=False)
    slow, fast = (
        resolve_cluster(catalogue, ClusterSpec(system=system, nodes=nodes, **change))
        for change in (worse, better)
    )
    compared = shorter = 0
    for coll in COLLECTIVES:
        # which pairs apply does not depend on the size
        keys = [
            (c.algorithm, c.protocol) for c in evaluate(coll, float(MiB), slow.topology, PARAMS)
        ]
        forced: list[tuple[object, CollectivePlan, CollectivePlan]] = [
            ((a, p), *(CollectivePlan(cl, coll, algorithm=a, protocol=p) for cl in (slow, fast)))
            for a, p in keys
        ]
        if choice:
            forced.append(("NCCL's choice", CollectivePlan(slow, coll), CollectivePlan(fast, coll)))
        for size in _SIZES_BY_4:
            for key, before, after in forced:
                try:
                    t0 = before.time_s(size)
                except SizeTooSmallError:
                    continue  # nccl-tests rounds it to 0 bytes on this many ranks
                t1 = after.time_s(size)
                assert t1 <= t0 * (1 + 1e-12), (system, nodes, coll, size, key, worse, better)
                compared += 1
                shorter += t1 < t0 * (1 - 1e-9)
    return compared, shorter


def test_less_oversubscription_never_slows_on_every_preset() -> None:
    """Every preset with a scale-out NIC on 2 and 16 nodes, every collective, 8 B to 16 GiB by
    factors of 4: going from 4:1 to 2:1 to 1:1 leaf oversubscription never lengthens an
    (algorithm, protocol)'s time nor NCCL's choice (its tuner does not see the taper,
    docs/model.md#how-auto-picks, so the choice stays and only the network terms shrink,
    x max(1, k f)). A scan of 8:1 down to 1:1 on 2-64 nodes at factors of 2 found none of
    368,520 times longer."""
    from ibcalc import load_catalogue

    compared = shorter = 0
    for system in load_catalogue(use_env=False).systems:
        if not system.nics_per_node:
            continue
        for nodes in (2, 16):
            for worse, better in pairwise((4.0, 2.0, 1.0)):
                counts = _never_slower(
                    system.id,
                    nodes,
                    {"oversubscription": worse},
                    {"oversubscription": better},
                    choice=True,
                )
                compared += counts[0]
                shorter += counts[1]
    # the scan covers what it says, and the taper binds: 52,948 times compared when written,
    # 41,028 of them shorter with less oversubscription
    assert compared > 50_000
    assert shorter > compared // 2, (compared, shorter)


def test_faster_link_never_slows_a_fixed_choice_on_every_preset() -> None:
    """Every preset with a scale-out NIC on 2 and 16 nodes, its NIC count held, the link
    swapped EDR -> HDR -> NDR -> XDR and RoCE 100 -> 200 -> 400 -> 800 Gb/s: no (algorithm,
    protocol) of any collective takes longer at 8 B to 16 GiB by factors of 4. NCCL's choice
    may (docs/model.md#limitations, 'slower hardware can give a faster answer'), so it is not
    held here. The NIC count is given: without it a link brings the count of the instance it
    comes with (efa-v3: 16), and more NICs can slow a small collective (the same section)."""
    from ibcalc import load_catalogue

    compared = shorter = 0
    for system in load_catalogue(use_env=False).systems:
        if not system.nics_per_node:
            continue
        for nodes in (2, 16):
            for chain in (
                ("edr", "hdr", "ndr", "xdr"),
                ("roce-100g", "roce-200g", "roce-400g", "roce-800g"),
            ):
                for worse, better in pairwise(chain):
                    counts = _never_slower(
                        system.id,
                        nodes,
                        {"inter": worse, "nics_per_node": system.nics_per_node},
                        {"inter": better, "nics_per_node": system.nics_per_node},
                        choice=False,
                    )
                    compared += counts[0]
                    shorter += counts[1]
    # 134,136 times compared when written, 75,328 of them shorter on the faster link
    assert compared > 130_000
    assert shorter > compared // 2, (compared, shorter)


def test_more_nics_never_slow_a_pcie_node() -> None:
    """8 GPUs on PCIe Gen4 (pcie-8gpu) on 2 and 8 nodes, 2 -> 4 -> 8 NICs per node: no
    (algorithm, protocol) of any collective, nor NCCL's choice, takes longer at 8 B to 16 GiB
    by factors of 4. Every ring of a PCIe node crosses every GPU's PCIe link whichever NIC it
    leaves by, so more NICs add no channel (docs/model.md#pipeline-fill: at most 4 on PCIe
    nodes); they had, spreading the same PCIe rate over more channels: a 256 KiB broadcast on
    8 nodes took 181 us with 4 NICs per node and 348 us with 8, a forced tree/Simple
    all-reduce of 128 KiB on 2 nodes 474 us and 814 us. From 1 NIC (one ring, 2 channels) to
    2 (4 channels) the share still moves (docs/model.md#limitations: tree/LL at 8 B on 2
    nodes, 39.076 -> 39.081 us)."""
    compared = shorter = 0
    for nodes in (2, 8):
        for worse, better in pairwise((2, 4, 8)):
            counts = _never_slower(
                "pcie-8gpu", nodes, {"nics_per_node": worse}, {"nics_per_node": better}, choice=True
            )
            compared += counts[0]
            shorter += counts[1]
    # the network binds at many sizes: more NICs shorten those (1,586 times compared when
    # written, 972 of them shorter)
    assert compared > 1_500
    assert shorter > compared // 2, (compared, shorter)
