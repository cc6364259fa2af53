"""Published figures the model must reproduce: SHARP on H100, MI300X rings across nodes,
GPUDirect-TCPXO's small all-gather, and oversubscription on every collective that crosses leaves.

Each expected value is the published measurement with a tolerance, or a hand-worked factor.
"""

from __future__ import annotations

from typing import Any

import pytest

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import load_catalogue
from ibcalc.cluster import ClusterSpec, resolve_cluster
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.facade import estimate, estimate_on

CAT = load_catalogue(use_env=False)
GiB = 2**30
MiB = 2**20


@pytest.mark.parametrize("nodes", [8, 64])
def test_sharp_on_dgx_h100_stays_at_the_published_level(nodes: int) -> None:
    # coreweave/nccl-tests@fb4787c README: 8 x 8 H100 with 8 x NDR, CollNetChain forced,
    # 365.9 GB/s busbw at 1 GiB and 383-387 GB/s at 4-8 GiB; no published H100 figure is higher.
    # The earlier model gave 534-547 GB/s with --sharp on 8 and 64 nodes; no 64-node H100 SHARP
    # figure is in the reference data, and in-network reduction keeps the per-node traffic at S
    # whatever the node count, so 64 nodes are held to the 8-node measurement too.
    # Worked by hand, NVLS with SHARP: the NVLS hop 25 us and the SHARP NET hop 18 us
    # (data/cost_params.yaml hop_latency, nvls/Simple), then S through the SHARP tree at
    # collnet_algbw_factor 0.5 of the node's 8 NDR NICs, 0.5 x 8 x 50 GB/s x 0.975 = 195 GB/s
    # (data/links.yaml ndr; the NVSwitch's 1.125 GiB at 450 GB/s x 0.686 binds less): 43 us +
    # 5506.37 us = 5549.37 us; busbw 2 (n-1)/n S / t, 380.93 GB/s on 8 nodes, 386.22 on 64.
    # Against the measurement the bound is the published run's own spread, 365.9 GB/s at 1 GiB
    # to 387 at 8 GiB (5.8 %), where rel=0.10 around 365.9 had stated no reason.
    est = estimate(
        CAT, ClusterSpec(system="dgx-h100", nodes=nodes, sharp=True), Collective.ALL_REDUCE, GiB
    )
    by_hand = (25 + 18) * 1e-6 + GiB / (0.5 * 8 * 50e9 * 0.975)
    assert by_hand * 1e6 == pytest.approx(5549.37, abs=0.005)
    assert est.time_s == pytest.approx(by_hand, rel=1e-9)
    n = 8 * nodes
    busbw = est.busbw_Bps / 1e9
    assert busbw == pytest.approx(2 * (n - 1) / n * GiB / by_hand / 1e9, rel=1e-9)
    assert 365.9 <= busbw <= 387


def test_forced_collnet_chain_matches_the_published_rows() -> None:
    spec = ClusterSpec(system="dgx-h100", nodes=8, sharp=True)
    for size, measured in ((GiB, 365.90), (8 * GiB, 386.56)):
        est = estimate(CAT, spec, Collective.ALL_REDUCE, size, algorithm=Algorithm.COLLNET_CHAIN)
        assert est.busbw_Bps / 1e9 == pytest.approx(measured, rel=0.06)


@pytest.mark.parametrize("nodes", [2, 4, 8])
def test_mi300x_rings_across_nodes_exceed_the_single_node_figure(nodes: int) -> None:
    # rccl-tests all-reduce on 2-8 nodes of 8 x MI300X with 8 x 400G NICs: 350-357 GB/s busbw,
    # as issue 9 reports them from published runs it does not name (no public copy is cited
    # here, so this provenance is weaker than the others in this file), above the single-node
    # 312.9 GB/s (stas00/ml-engineering network/README.md)
    one = estimate(CAT, ClusterSpec(system="mi300x-8", nodes=1), Collective.ALL_REDUCE, 8 * GiB)
    assert one.busbw_Bps / 1e9 == pytest.approx(312.9, rel=0.02)
    many = estimate(
        CAT,
        ClusterSpec(system="mi300x-8", nodes=nodes),
        Collective.ALL_REDUCE,
        8 * GiB,
        algorithm=Algorithm.RING,
    )
    assert 350 * 0.97 <= many.busbw_Bps / 1e9 <= 357 * 1.03


def test_mi355x_rings_across_nodes_are_held_by_their_nics_not_by_xgmi() -> None:
    """prasad-nair-amd/alibaba@5410faa, 2 x 8 MI355X on 8 x 400G AI NICs (sweep 03): 385.98
    GB/s busbw at 16 GiB. MI355X's xGMI had borrowed MI300X's combined one-node 0.7 as its
    one-way efficiency, so a 2-node ring was held by xGMI at 537.6 x 0.7 = 376 GB/s (-2.6 %);
    with MI300X's split, 0.8 one way and 0.875 both ways, the one-way chains run at 430 GB/s and
    the NICs bind: 8 x 400 Gb/s at 0.962 achievable, 385 GB/s a node, which a ring's busbw
    reaches. One node keeps 537.6 x 0.8 x 0.875 = 376 GB/s."""
    two = estimate(CAT, ClusterSpec(system="mi355x-8", nodes=2), Collective.ALL_REDUCE, 16 * GiB)
    assert two.best.bottleneck.startswith("network: 8 x roce-400g per node")
    assert two.busbw_Bps / 1e9 == pytest.approx(385.98, rel=0.01)
    one = estimate(CAT, ClusterSpec(system="mi355x-8", nodes=1), Collective.ALL_REDUCE, 16 * GiB)
    assert one.busbw_Bps / 1e9 == pytest.approx(537.6 * 0.8 * 0.875, rel=0.005)


def test_tcpxo_all_gather_latency_term_stays_below_the_measured_total() -> None:
    # 8 MiB all-gather on 2 x A3 Mega (GPUDirect-TCPXO): 166.6 us measured, as reported to the
    # project from a run whose source it cannot cite (data/links.yaml gcp-tcpxo,
    # simple_transport_floor_source). The earlier model carried a 222 us latency term alone.
    # Worked by hand, ring/Simple over 16 ranks: base 8.4 us, 14 NVLink steps of 3.4 us, one
    # network step of 14 us + one 47.7 us transport latency (the tcpxo count below 8 MiB),
    # 16 channels x 0.6 us of proxy operations (data/cost_params.yaml base_latency, hop_latency,
    # proxy_op_latency), and 15/16 x 8 MiB at 8 x 200 Gb/s x 0.9 = 180 GB/s: 170.99 us.
    est = estimate(CAT, ClusterSpec(system="gcp-a3-mega", nodes=2), Collective.ALL_GATHER, 8 * MiB)
    latency = (8.4 + 14 * 3.4 + 14 + 47.7 + 16 * 0.6) * 1e-6
    assert est.best.latency_s == pytest.approx(latency, rel=1e-9)
    by_hand = latency + 15 / 16 * 8 * MiB / (8 * 25e9 * 0.9)
    assert by_hand * 1e6 == pytest.approx(170.99, abs=0.005)
    assert est.time_s == pytest.approx(by_hand, rel=1e-9)
    assert est.best.latency_s * 1e6 < 166.6
    # Against the measurement: each exposed transport latency is 47.7 us, 28.6 % of 166.6 us, so
    # within 14 % (under half of that) the run admits exactly the one the model charges (none
    # would give 123.3 us, a second 218.7 us).
    assert est.time_s * 1e6 == pytest.approx(166.6, rel=0.14)


@pytest.mark.parametrize(
    ("collective", "algorithm"),
    [
        (Collective.ALL_REDUCE, Algorithm.RING),
        (Collective.ALL_REDUCE, Algorithm.TREE),
        (Collective.ALL_GATHER, Algorithm.RING),
        (Collective.REDUCE_SCATTER, Algorithm.RING),
        (Collective.ALL_TO_ALL, Algorithm.PAIRWISE),
    ],
)
def test_oversubscription_slows_every_collective_that_crosses_leaves(
    collective: Collective, algorithm: Algorithm
) -> None:
    # 16 nodes of 1 GPU and 1 x NDR each: every algorithm here is network-bound. With 2:1 leaves
    # and all traffic crossing them (k f = 2), the network term takes twice as long.
    base: dict[str, Any] = {
        "nodes": 16,
        "gpus_per_node": 1,
        "intra": "nvlink4",
        "inter": "ndr",
        "nics_per_node": 1,
    }
    size = 4 * GiB
    flat = resolve_cluster(CAT, ClusterSpec(**base))
    tapered = resolve_cluster(
        CAT, ClusterSpec(**base, oversubscription=2.0, cross_leaf_fraction=1.0)
    )
    a = estimate_on(flat, collective, size, algorithm=algorithm)
    b = estimate_on(tapered, collective, size, algorithm=algorithm)
    assert b.best.transfer_s == pytest.approx(2 * a.best.transfer_s, rel=1e-9)
    # half the traffic crossing (k f = 1) costs nothing more
    half = resolve_cluster(CAT, ClusterSpec(**base, oversubscription=2.0, cross_leaf_fraction=0.5))
    c = estimate_on(half, collective, size, algorithm=algorithm)
    assert c.best.transfer_s == pytest.approx(a.best.transfer_s, rel=1e-9)


def test_amd_hosted_p5_switches_to_nvls_tree_where_the_published_run_does() -> None:
    # KeitaW/p5-nccl-test-2024-07-19 (2 x p5, AMD EPYC hosts, NCCL 2.20.3): all-reduce of 512 KiB
    # in 125.5 us, 1 MiB in 125.7 us, faster than 64 KiB (135.8 us): NCCL has left LL there.
    # With llMaxBws' AMD row (22.5 GB/s on 2 nodes, NCCL 2.30.7 tuning.cc) NCCL's tuner ranks
    # NVLS-tree first at 512 KiB; with the Intel row (39.0 GB/s) it keeps tree/LL, 185 us
    cluster = resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2))
    params = builtin_cost_params()
    intel_row = params.with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "tuner_view": {
                "assumptions": {"amd_host_ll_cap": {"value": 0, "assumed": "a test: row 0"}}
            },
        }
    )
    est = estimate_on(cluster, Collective.ALL_REDUCE, 512 * 1024, params=params)
    before = estimate_on(cluster, Collective.ALL_REDUCE, 512 * 1024, params=intel_row)
    assert (est.best.algorithm, est.best.protocol) == (Algorithm.NVLS_TREE, Protocol.SIMPLE)
    assert (before.best.algorithm, before.best.protocol) == (Algorithm.TREE, Protocol.LL)
    measured = 125.5e-6
    assert abs(est.time_s - measured) < abs(before.time_s - measured)


def test_the_deepest_measured_drop_is_re_derived_from_its_published_rows() -> None:
    """MEASURED_DROP_MAX (the deepest fall in time at an algorithm switch a steady published run
    shows, past which a sweep calls its drop the least sure) re-derived from the rows it rests
    on: 2 x p5 on EFA, the out-of-place all-reduce time at 64 KiB and at 1 MiB, in
    awsome-distributed-training's table (benchmarks/data/measurements.csv: 135.1 -> 123.2 us,
    8.8 %) and in KeitaW/p5-nccl-test's log (sweep 06: 135.8 -> 125.7 us, 7.4 %); the constant
    is the deeper one rounded up to a whole percent."""
    import csv
    import math
    from pathlib import Path

    from ibcalc.facade import MEASURED_DROP_MAX
    from ibcalc.logs import parse_file

    data = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
    with (data / "measurements.csv").open(encoding="utf-8") as f:
        table = {
            int(r["size_bytes"]): float(r["time_us"])
            for r in csv.DictReader(f)
            if r["source"].startswith("github.com/aws-samples/awsome-distributed-training")
            and "2x p5.48xlarge, 16 ranks" in r["note"]
            and r["collective"] == "all_reduce"
        }
    (run,) = parse_file(data / "sweeps" / "06_allreduce_2node_16xH100_efa.txt").runs
    log = {int(r.size_bytes): r.oop.time_us for r in run.rows}
    drops = [1 - t[2**20] / t[2**16] for t in (table, log)]
    assert [round(100 * d, 1) for d in drops] == [8.8, 7.4]
    assert math.ceil(100 * max(drops)) / 100 == MEASURED_DROP_MAX


def test_the_sharp_evidence_note_is_re_derived_from_its_published_rows() -> None:
    """SHARP_EVIDENCE_NOTE's figures from coreweave/nccl-tests' rows (benchmarks/data/
    measurements.csv): 8 x 8 H100, CollNetChain forced, busbw within 6 % of the model at
    512 MiB-8 GiB; 4 x 8 A100 with SHARP (NCCL not stated, a 2.12-era image), every row slower
    than the model, 1.8-2.5x at 64 KiB, 1 MiB and 16 MiB. An estimate on SHARP carries it."""
    import csv
    from pathlib import Path

    from ibcalc.facade import SHARP_EVIDENCE_NOTE

    data = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "measurements.csv"
    with data.open(encoding="utf-8") as f:
        rows = [
            r
            for r in csv.DictReader(f)
            if "coreweave" in r["source"] and "SHARP" in r["inter_fabric"]
        ]
    h100 = ClusterSpec(system="dgx-h100", nodes=8, sharp=True)
    chain = [r for r in rows if r["nodes"] == "8"]
    assert len(chain) == 5
    for r in chain:
        est = estimate(
            CAT, h100, Collective.ALL_REDUCE, int(r["size_bytes"]),
            algorithm=Algorithm.COLLNET_CHAIN,
        )  # fmt: skip
        assert abs(est.busbw_Bps / 1e9 / float(r["busbw_GBps"]) - 1) < 0.06
    a100 = ClusterSpec(system="dgx-a100", nodes=4, sharp=True)
    ratios = {}
    for r in (r for r in rows if r["nodes"] == "4"):
        est = estimate(CAT, a100, Collective.ALL_REDUCE, int(r["size_bytes"]))
        ratio = float(r["time_us"]) * 1e-6 / est.time_s
        assert ratio > 1, r["size_bytes"]
        ratios[int(r["size_bytes"])] = ratio
    small = [ratios[s] for s in (2**16, 2**20, 2**24)]
    assert min(small) >= 1.8
    assert max(small) <= 2.5
    assert "8 x H100 within 6 %" in SHARP_EVIDENCE_NOTE
    assert "1.8-2.5x from 64 KiB to 16 MiB" in SHARP_EVIDENCE_NOTE
    sharp = estimate(CAT, a100, Collective.ALL_REDUCE, 128 * MiB)
    assert sharp.best.algorithm is Algorithm.COLLNET_DIRECT
    assert SHARP_EVIDENCE_NOTE in sharp.assumptions
