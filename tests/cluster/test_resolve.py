"""cluster/resolve.py: a cluster spec resolved into tiers, NIC counts and assumptions.

Expected values are worked by hand from published line rates (per direction) and the
catalogue's efficiencies; errors must name the ClusterSpec field at fault.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import main_error
from ibcalc.catalogue.load import find_link, find_system, load_catalogue
from ibcalc.cluster.resolve import (
    ClusterSpec,
    check_count,
    prices_oversubscription,
    resolve_cluster,
)
from ibcalc.engine.algorithms.alltoall import torus_ports, torus_shape
from ibcalc.engine.band import transport_class
from ibcalc.engine.types import Collective
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    ClusterError,
    UnknownNameError,
    WrongTypeError,
)
from ibcalc.facade import estimate_on
from ibcalc.gap import gap_report, tp_whatif
from ibcalc.logs.expect import catalogue_with_link

CAT = load_catalogue(use_env=False)


def test_fewer_gpus_on_a_preset_keeps_its_nics_per_gpu() -> None:
    # dgx-h100: 8 NDR for 8 GPUs -> one GPU per node gets one NIC, not eight
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", gpus_per_node=1, nodes=8))
    assert cluster.nics_per_node == 1
    assert cluster.topology.domain_bw_Bps("uniform") == pytest.approx(
        find_link(CAT, "ndr").achievable_Bps
    )


def test_nics_beyond_what_pcie_feeds_add_nothing() -> None:
    # 256 NICs for 8 GPUs: each GPU reaches its NICs through one PCIe Gen5 x16 link
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=8, nics_per_node=256))
    pcie5 = find_link(CAT, "pcie5").achievable_Bps
    assert cluster.topology.domain_bw_Bps("uniform") == pytest.approx(8 * pcie5)


def test_nics_beyond_the_gpus_without_a_known_host_link_are_said_to_be_uncapped() -> None:
    """One GPU per node with 4 NDR NICs and no preset: nothing says what links the GPU to its
    NICs, so all four count (4 x 47 GB/s), and the assumptions say so and how to cap them (the
    fuzz pass saw 183 GB/s of busbw from one GPU without a word)."""
    spec = ClusterSpec(nodes=8, gpus_per_node=1, nics_per_node=4, inter="ndr")
    cluster = resolve_cluster(CAT, spec)
    assert cluster.topology.domain_bw_Bps("uniform") == pytest.approx(
        4 * find_link(CAT, "ndr").achievable_Bps
    )
    assert (
        "4 NICs for 1 GPU and no host PCIe link known: each GPU is taken to feed all its NICs at "
        "their full rate (give {host_pcie} or {system} to cap them at the GPU's link)"
    ) in cluster.assumptions
    capped = resolve_cluster(CAT, spec.replace(host_pcie="pcie5"))
    assert capped.topology.domain_bw_Bps("uniform") == pytest.approx(
        find_link(CAT, "pcie5").achievable_Bps
    )
    assert not any("no host PCIe" in a for a in capped.assumptions)


def test_presets_without_nics_stay_in_one_box(capsys: pytest.CaptureFixture[str]) -> None:
    cluster = resolve_cluster(CAT, ClusterSpec(system="rtx2080ti-2"))
    assert cluster.nodes == 1
    assert "no scale-out NIC" in main_error(
        ["allreduce", "-s", "1GB", "--system", "rtx2080ti-2", "-N", "2"], capsys
    )


def test_a_domain_larger_than_any_preset_s_over_its_link_is_said() -> None:
    """1,024 GPUs over NVLink 4 in one "node": priced at the link's 450 GB/s each with no word,
    so a tensor-parallel what-if of 1,024 came out faster than one of 16 (review DR). No preset
    joins more than 8 GPUs over nvlink4; over nvlink5, 72 (GB200 NVL72) is a preset's own."""
    big = resolve_cluster(CAT, ClusterSpec(intra="nvlink4", gpus_per_node=1024))
    assert (
        "a 1024-GPU nvlink4 domain is assumed: no preset joins more than 8 GPUs over nvlink4 "
        "(dgx-h100), and the link's per-GPU rate is taken for all of them" in big.assumptions
    )
    for link, gpus in (("nvlink4", 8), ("nvlink5", 72), ("tpu-v6e-ici", 256)):
        fits = resolve_cluster(CAT, ClusterSpec(intra=link, gpus_per_node=gpus))
        assert not [a for a in fits.assumptions if "domain is assumed" in a], link


def test_oversubscription_is_priced_only_where_a_network_joins_domains() -> None:
    """One GB200 NVL72 rack (18 trays, one 72-GPU domain) and one DGX H100 node have no network
    for a down:up ratio to taper: 2:1 is not priced (the 1 GB all-reduce takes the time it takes
    at 1:1) and said not priced; two racks (2 domains joined by NDR) price it (docs/model.md: the
    network term x max(1, k f), k = 2, f = 1 by default)."""
    for system, nodes, priced in (("gb200-nvl72", 18, False), ("dgx-h100", 1, False)):
        tapered = resolve_cluster(CAT, ClusterSpec(system=system, nodes=nodes, oversubscription=2))
        flat = resolve_cluster(CAT, ClusterSpec(system=system, nodes=nodes))
        assert prices_oversubscription(tapered) is prices_oversubscription(flat) is priced
        assert (
            "{oversubscription} not priced: one scale-up domain, no network for a ratio to taper"
            in tapered.assumptions
        )
        assert (
            estimate_on(tapered, Collective.ALL_REDUCE, 10**9).time_s
            == estimate_on(flat, Collective.ALL_REDUCE, 10**9).time_s
        )
    two = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=36, oversubscription=2))
    assert prices_oversubscription(two)
    assert two.topology.out is not None
    assert two.topology.out.oversubscription == 2


def test_a_scale_up_link_alone_is_one_domain() -> None:
    """--intra tpu-v5e-ici -g 8 asks about one TPU slice: it had been 2 nodes joined by an
    assumed NDR fabric, with 8 NDR NICs and a SHARP what-if (review DG). A scale-up link with
    no preset, no --inter and no network setting is one node now; a network setting beside it
    (a NIC count, SHARP, a taper, sites) asks about nodes, and keeps the default of 2."""
    for link in ("tpu-v5e-ici", "hccs-910b", "nvlink4"):
        cluster = resolve_cluster(CAT, ClusterSpec(intra=link, gpus_per_node=8))
        assert (cluster.nodes, cluster.topology.ranks) == (1, 8)
        assert cluster.topology.out is None
        assert (
            f"1 node assumed: only a scale-up link, {link}, is given ({{nodes}} and {{inter}} to "
            "join more)" in cluster.assumptions
        )
        est = estimate_on(cluster, Collective.ALL_REDUCE, 2**30)
        assert not [a for a in est.assumptions if "--sharp" in a]
    for extra in (
        {"nics_per_node": 8},
        {"sharp": True},
        {"oversubscription": 2.0},
        {"sites": 2},
        {"host_pcie": "pcie5"},
        {"host_cpu": "amd"},  # NCCL's per-step network charge: a network setting (review DP)
    ):
        spec = ClusterSpec(intra="nvlink4", gpus_per_node=8, **extra)
        assert resolve_cluster(CAT, spec).nodes == 2, extra
    # a forced multi-node algorithm says why it has no second node (review DP: it had been
    # priced on 2 assumed NDR nodes, 7.38 ms, and then refused with no word of the default)
    one = resolve_cluster(CAT, ClusterSpec(intra="nvlink4"))
    for collective, algorithm in (
        (Collective.ALL_REDUCE, "hierarchical"),
        (Collective.ALL_TO_ALL, "pxn"),
        (Collective.ALL_REDUCE, "collnet"),
    ):
        with pytest.raises(AlgorithmNotApplicableError) as info:
            estimate_on(one, collective, 1e9, algorithm=algorithm)
        assert str(info.value).endswith(
            "; 1 node was assumed, as only a scale-up link is given (nodes and inter to join more)"
        )
    # PAT also needs one GPU per node, which the words name (review DS)
    with pytest.raises(AlgorithmNotApplicableError) as info:
        estimate_on(one, Collective.ALL_GATHER, 1e9, algorithm="pat")
    assert str(info.value).endswith(
        "; 1 node was assumed, as only a scale-up link is given (nodes, gpus_per_node 1 and "
        "inter to join more)"
    )
    # nor a refusal whose reason is no node count (review DQ: NVLS on NVLink 3, a tree
    # broadcast, a ring all-to-all had been told to add nodes; review DS: PXN over PCIe)
    for intra, collective, algorithm in (
        ("nvlink3", Collective.ALL_REDUCE, "nvls"),
        ("nvlink4", Collective.BROADCAST, "tree"),
        ("nvlink4", Collective.ALL_TO_ALL, "ring"),
        ("pcie4", Collective.ALL_TO_ALL, "pxn"),
    ):
        alone = resolve_cluster(CAT, ClusterSpec(intra=intra))
        with pytest.raises(AlgorithmNotApplicableError) as info:
            estimate_on(alone, collective, 1e9, algorithm=algorithm)
        assert "1 node was assumed" not in str(info.value), algorithm
    # a preset's one node (-N 1 given) gets no such words
    given = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=1))
    with pytest.raises(AlgorithmNotApplicableError) as info:
        estimate_on(given, Collective.ALL_REDUCE, 1e9, algorithm="hierarchical")
    assert "1 node was assumed" not in str(info.value)
    # a preset, or a scale-out link, keeps 2 nodes as before
    assert resolve_cluster(CAT, ClusterSpec(intra="nvlink4", inter="ndr")).nodes == 2
    assert resolve_cluster(CAT, ClusterSpec(system="dgx-h100", intra="nvlink4")).nodes == 2


# --- tiers and NIC counts, worked by hand ------------------------------------------------------
#
# Line rates are the published figures (NDR: 400 Gb/s per port = 50 GB/s per direction; NVLink 4:
# 18 links x 25 GB/s = 450 GB/s per GPU per direction); achievable = line x the catalogue entry's
# efficiency, read from the entry so a re-fitted efficiency does not break the arithmetic here.

GB = 1e9


def _eff(link_id: str) -> float:
    return find_link(CAT, link_id).efficiency


def test_dgx_h100_tiers_and_nic_count() -> None:
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4))
    assert (cluster.nodes, cluster.gpus_per_node, cluster.ranks) == (4, 8, 32)
    assert cluster.nics_per_node == 8  # 8 x ConnectX-7 NDR, one per GPU
    assert cluster.intra is not None
    assert cluster.intra.id == "nvlink4"
    assert cluster.inter is not None
    assert cluster.inter.id == "ndr"
    assert cluster.host_pcie is not None
    assert cluster.host_pcie.id == "pcie5"
    assert cluster.gpu_arch == "hopper"
    topo = cluster.topology
    assert (topo.ranks_per_domain, topo.domains, topo.arch) == (8, 4, "hopper")
    up, out = topo.up, topo.out
    assert up is not None
    assert out is not None
    assert up.gpus == 8
    assert up.line_Bps == pytest.approx(18 * 25 * GB)  # 450 GB/s per GPU per direction
    assert up.bw_Bps == pytest.approx(450 * GB * _eff("nvlink4"))
    # NVLS: NVLink 4 has NVLink SHARP, the node has NVSwitches and Hopper GPUs
    assert up.nvls_bw_Bps == pytest.approx(450 * GB * find_link(CAT, "nvlink4").nvls_efficiency)
    assert (up.path, up.mesh) == ("nvlink", False)
    assert out.domains == 4
    assert out.nics_per_domain == 8
    assert out.nic_line_Bps == pytest.approx(400e9 / 8)  # 400 Gb/s = 50 GB/s
    # the NIC sits on PCIe Gen5 x16 (63 GB/s line), which does not cap a 50 GB/s NDR port
    assert out.nic_bw_Bps == pytest.approx(50 * GB * _eff("ndr"))
    # 8 NICs x 50 GB/s = 400 GB/s line per node, 8 x achievable per NIC
    assert out.nics_per_domain * out.nic_line_Bps == pytest.approx(400 * GB)
    assert out.domain_bw_Bps == pytest.approx(8 * 50 * GB * _eff("ndr"))
    assert not out.sharp  # SHARP is only used when asked for
    assert topo.wan is None
    assert list(cluster.assumptions) == ["ndr supports SHARP (CollNet); enable with {sharp}"]
    # SHARP turned off on purpose (--no-sharp, sharp: false) is not suggested back
    off = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2, sharp=False))
    assert list(off.assumptions) == []


def test_dgx_a100_has_no_nvls_and_hdr_nics() -> None:
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-a100", nodes=2))
    up, out = cluster.topology.up, cluster.topology.out
    assert up is not None
    assert out is not None
    assert up.line_Bps == pytest.approx(12 * 25 * GB)  # NVLink 3: 12 links x 25 GB/s
    assert up.nvls_bw_Bps is None  # NVLink SHARP needs NVLink 4 (Hopper) or later
    assert out.nic_line_Bps == pytest.approx(200e9 / 8)  # HDR: 200 Gb/s = 25 GB/s
    # 8 HDR on PCIe Gen4 x16 (31.5 GB/s line): the 25 GB/s port is not capped
    assert out.domain_bw_Bps == pytest.approx(8 * 25 * GB * _eff("hdr"))
    assert cluster.topology.arch == "ampere"


def test_turning_off_what_a_cluster_lacks_is_said_to_change_nothing() -> None:
    """--no-nvls on a DGX A100 (NVLink 3, no NVLink SHARP) and --no-sharp over EFA (no SHARP)
    change nothing, and said nothing, where asking for them is said (review CM); where the
    cluster has them, or the flag is not given, no such line."""
    said = "NVLS turned off, but nvlink3 here has no NVLink SHARP: nothing changes"
    off = resolve_cluster(CAT, ClusterSpec(system="dgx-a100", nodes=2, nvls=False))
    auto = resolve_cluster(CAT, ClusterSpec(system="dgx-a100", nodes=2))
    assert said in off.assumptions
    assert said not in auto.assumptions
    assert off.topology == auto.topology
    sharp = "SHARP turned off, but efa-v2 has no SHARP capability: nothing changes"
    assert (
        sharp
        in resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2, sharp=False)).assumptions
    )
    assert sharp not in resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2)).assumptions
    h100 = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2, nvls=False, sharp=False))
    assert not [n for n in h100.assumptions if "turned off" in n]


def test_gpus_on_pcie_reach_their_nics_across_their_own_link() -> None:
    """--intra pcie4: GPUDirect RDMA crosses each GPU's own Gen4 x16 link to reach its NIC, so
    an NDR port (50 GB/s) moves at most 31.5 GB/s x 0.8 = 25.2 GB/s achievable; one GPU per
    node had been priced at the NIC's 48.8 GB/s (busbw 48.4 GB/s from a GPU whose link carries
    25.2). A faster host link named (pcie5, or an instance's, as EFA's p5 brings) does not lift
    it; a slower one (pcie3) caps instead. An HDR port (25 GB/s x its efficiency) is under it."""
    spec = ClusterSpec(nodes=8, gpus_per_node=1, nics_per_node=1, inter="ndr", intra="pcie4")
    pcie4 = 31.5 * GB * 0.8
    cluster = resolve_cluster(CAT, spec)
    out = cluster.topology.out
    assert out is not None
    assert out.nic_bw_Bps == pytest.approx(pcie4)
    assert out.nic_cap == "pcie4"
    assert cluster.host_pcie_is_gpu_bus
    # said once, in the cap's note (the cap and its reason had been two notes)
    assert [a for a in cluster.assumptions if "capped" in a] == [
        "each ndr NIC is capped by pcie4, the GPUs' own PCIe link ({intra}), which GPUDirect "
        "RDMA crosses to reach a NIC, at 25.2 GB/s achievable"
    ]
    named = resolve_cluster(CAT, spec.replace(host_pcie="pcie5"))
    assert named.topology.out is not None
    assert named.topology.out.nic_bw_Bps == pytest.approx(pcie4)
    assert any("reach a NIC, slower than pcie5, at 25.2 GB/s" in a for a in named.assumptions)
    slower = resolve_cluster(CAT, spec.replace(host_pcie="pcie3"))
    assert slower.topology.out is not None
    assert slower.topology.out.nic_cap == "pcie3"
    assert not slower.host_pcie_is_gpu_bus
    efa = resolve_cluster(CAT, spec.replace(inter="efa-v2", nics_per_node=None))
    assert efa.topology.out is not None
    assert efa.topology.out.domain_bw_Bps == pytest.approx(pcie4)
    # NVLink GPUs are not capped by their scale-up link, and one node (no NIC in use) says
    # nothing of it
    nvlink = resolve_cluster(CAT, spec.replace(intra="nvlink4"))
    assert nvlink.topology.out is not None
    assert nvlink.topology.out.nic_cap is None
    one = resolve_cluster(CAT, ClusterSpec(nodes=1, gpus_per_node=8, intra="pcie4"))
    assert not any("GPUDirect" in a for a in one.assumptions)
    hdr = resolve_cluster(CAT, spec.replace(inter="hdr"))
    assert hdr.topology.out is not None
    assert hdr.topology.out.nic_cap is None


def test_an_all_to_all_over_pcie_gpus_adds_peer_and_nic_traffic_on_their_link() -> None:
    """4 x 8 GPUs on PCIe Gen4 with 8 NDR NICs each, 1 GB all-to-all: each GPU sends 7/32 of it
    to its node's peers and 24/32 to its NIC, both across its one x16 link (25.2 GB/s), so the
    two add: 31/32 x 1 GB / 25.2 GB/s = 38.4 ms. The larger alone had been taken (29.8 ms:
    32.4 GB/s of busbw out of a 25.2 GB/s link). NVLink GPUs keep the larger of the two."""
    spec = ClusterSpec(nodes=4, gpus_per_node=8, intra="pcie4", inter="ndr", nics_per_node=8)
    est = estimate_on(resolve_cluster(CAT, spec), Collective.ALL_TO_ALL, 1e9, algorithm="pairwise")
    pcie4 = 31.5e9 * 0.8
    assert est.best.transfer_s == pytest.approx(31 / 32 * 1e9 / pcie4)
    assert est.best.bottleneck == "the GPU's pcie4 link (peers and NIC)"
    nvlink = estimate_on(
        resolve_cluster(CAT, spec.replace(intra="nvlink4")),
        Collective.ALL_TO_ALL,
        1e9,
        algorithm="pairwise",
    )
    assert nvlink.best.transfer_s == pytest.approx(
        24 / 32 * 1e9 / find_link(CAT, "ndr").achievable_Bps
    )


def test_an_all_to_all_on_a_torus_is_bound_by_its_bisection() -> None:
    """256 TPU v6e chips, a 2-D torus of 16 x 16 with 4 ICI links of 100 GB/s per direction
    each: a cut across one dimension meets 2 x 256/16 = 32 links (wraparound included), 3.2
    TB/s, the bisection Google gives a v6e pod. A 1 GiB all-to-all sends S/256 from each chip
    to each other; the 128 x 128 pairs across the cut move 64 GiB over those links at 0.9 x
    100 GB/s achievable: 23.9 ms. Priced as a switch it had taken each chip's 360 GB/s alone,
    255/256 GiB in 2.97 ms, 8x too fast. A ring all-reduce, which a torus carries at each chip's
    full rate, is unchanged."""
    spec = ClusterSpec(nodes=1, gpus_per_node=256, intra="tpu-v6e-ici")
    cluster = resolve_cluster(CAT, spec)
    link = find_link(CAT, "tpu-v6e-ici")
    assert (link.per_direction_Bps, link.links) == (400e9, 4)
    assert 2 * 256 // 16 * link.per_direction_Bps / 4 == 3.2e12
    est = estimate_on(cluster, Collective.ALL_TO_ALL, 2**30)
    assert est.best.transfer_s == pytest.approx(64 * 2**30 / (32 * 0.9 * 100e9))
    # the shape it assumes is said (a prime count, a ring, had shown only under --explain)
    assert any(
        "most even shape of 256 chips, 16 x 16, with wraparound" in n for n in est.assumptions
    )
    assert est.best.bottleneck == "scale-up: the tpu-v6e-ici torus's bisection (32 links)"
    ring = estimate_on(cluster, Collective.ALL_REDUCE, 2**30, algorithm="ring", protocol="Simple")
    assert ring.best.bottleneck == "scale-up: tpu-v6e-ici (360 GB/s achievable per GPU)"
    # the bound is all-to-all's alone, and so is its note (it had shown on every estimate)
    for collective in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.SEND_RECV):
        other = estimate_on(cluster, collective, 2**30)
        assert not any("bisection" in n for n in other.assumptions)
    assert sum("torus" in n for n in cluster.assumptions) == 1
    # a torus without a port count: one of a user's catalogue (TPU7x's takes six now)
    countless = catalogue_with_link(CAT, "tpu7x-ici", links=None)
    unknown = resolve_cluster(countless, spec.replace(intra="tpu7x-ici"))
    (note,) = unknown.alltoall_notes
    assert "torus of links per chip the catalogue does not give" in note
    assert note in estimate_on(unknown, Collective.ALL_TO_ALL, 2**30).assumptions
    assert note not in estimate_on(unknown, Collective.ALL_REDUCE, 2**30).assumptions
    # two such slices: no PXN (NCCL's, over NVLink), which had been picked on ICI
    two = resolve_cluster(CAT, spec.replace(nodes=2, inter="ndr"))
    picked = estimate_on(two, Collective.ALL_TO_ALL, 2**30)
    assert {c.algorithm for c in [picked.best, *picked.alternatives]} == {"pairwise"}


def test_send_recv_on_a_torus_runs_on_the_one_port_joining_two_neighbours() -> None:
    """TPU v5e: 4 ICI ports, 200 GB/s per direction per chip, so 50 GB/s a port. A ring shift on
    8 chips sends to a neighbour over one port: 1 GiB at 50 GB/s x 0.9 (efficiency) x 0.89
    (calibrated.p2p_efficiency) = 40.05 GB/s; it had been priced at the whole chip's rate, 160
    GB/s, 4x too fast (review CS). A slice reaches distinct neighbours over fewer ports than the
    chip has: 2 chips (2 x 1) over 1, 4 (2 x 2) over 2, 8 (4 x 2) over 3, 16 (4 x 4) over all 4,
    so a ring all-reduce runs at 45, 90, 135 and 180 GB/s (2 chips at one port and 4 at all
    four had made 2 chips 2.7x slower than 4: review CW)."""
    spec = ClusterSpec(nodes=1, gpus_per_node=8, intra="tpu-v5e-ici")
    cluster = resolve_cluster(CAT, spec)
    shift = estimate_on(cluster, Collective.SEND_RECV, 2**30)
    assert shift.busbw_Bps == pytest.approx(200e9 / 4 * 0.9 * 0.89, rel=2e-3)
    (said,) = [n for n in shift.assumptions if "is a torus: neighbouring" in n]
    assert said.startswith(
        "tpu-v5e-ici is a torus: neighbouring chips are joined by one of each chip's 4 ports, "
        "and send/recv is priced at that link"
    )
    for gpus, ports, sides in ((2, 1, "2 x 1"), (4, 2, "2 x 2"), (8, 3, "4 x 2"), (16, 4, "")):
        assert torus_ports(gpus, 2) == ports
        slice_ = resolve_cluster(CAT, spec.replace(gpus_per_node=gpus))
        ring = estimate_on(
            slice_, Collective.ALL_REDUCE, 2**30, algorithm="ring", protocol="Simple"
        )
        rate = f"{ports * 45:g} GB/s"
        assert ring.best.bottleneck == f"scale-up: tpu-v5e-ici ({rate} achievable per GPU)"
        said = [n for n in ring.assumptions if "reaches distinct neighbours" in n]
        if sides:
            assert said == [
                f"tpu-v5e-ici is a torus: a slice of {gpus} chips, {sides} with wraparound, "
                f"reaches distinct neighbours over {ports} of each chip's 4 ports (a side of 2 "
                "chips joins them once), and its collectives run on those"
            ]
        else:
            assert said == []
        pair = estimate_on(slice_, Collective.SEND_RECV, 2**30)
        assert pair.busbw_Bps == pytest.approx(shift.busbw_Bps)  # one port whatever the slice
    # 3-D (v5p, 6 ports of 100 GB/s): 8 chips, 2 x 2 x 2, use 3
    assert torus_ports(8, 3) == 3
    # an all-to-all of 2 x 2 chips: a cut across a side of 2 crosses m / a = 2 links (the
    # wraparound is the same link; 4 had been counted: review CX), each 45 GB/s, so the 2 x 2
    # pairs across it move 4 x S/4 ... m^2 S / (4 n links B) = 16 S / (4 x 4 x 2 x 45 GB/s)
    square = resolve_cluster(CAT, spec.replace(gpus_per_node=4))
    a2a = estimate_on(square, Collective.ALL_TO_ALL, 2**30)
    assert a2a.best.transfer_s == pytest.approx(16 * 2**30 / (4 * 4 * 2 * 45e9))
    assert a2a.best.bottleneck == "scale-up: the tpu-v5e-ici torus's bisection (2 links)"
    # without a port count (a torus of a user's catalogue: TPU7x's built-in entry takes six
    # from its 3-D torus now), the whole chip's rate, said to be too fast
    countless = catalogue_with_link(CAT, "tpu7x-ici", links=None)
    unknown = resolve_cluster(countless, spec.replace(intra="tpu7x-ici"))
    fast = estimate_on(unknown, Collective.SEND_RECV, 2**30)
    assert any("ports per chip the catalogue does not give" in n for n in fast.assumptions)
    # TPU7x and v5p: the same 600 GB/s a chip over six ports of a 3-D torus, so 8 chips
    # (2 x 2 x 2) use 3 of 6 on either: 300 GB/s, x 0.9 = 270 achievable (review DO: TPU7x,
    # without a count, had taken all 600, twice v5p's rate at the same catalogue figure)
    for link in ("tpu-v5p-ici", "tpu7x-ici"):
        eight = resolve_cluster(CAT, spec.replace(intra=link))
        ring = estimate_on(eight, Collective.ALL_REDUCE, 2**30, algorithm="ring", protocol="Simple")
        assert ring.best.bottleneck == f"scale-up: {link} (270 GB/s achievable per GPU)"


def test_a_torus_takes_its_most_even_shape_and_three_dimensions_cut_the_longest() -> None:
    """The most even shapes, longest side first: 256 chips in 2-D 16 x 16, in 3-D 8 x 8 x 4;
    1024 in 3-D 16 x 8 x 8; a prime count is a ring. 256 v5p chips (6 links of 100 GB/s, 3-D):
    a = 8, 2 x 256/8 = 64 links cross the cut, and a 1 GiB all-to-all's transfer is
    m a S / (8 n B_link) = 8 x 2^30 / (8 x 90 GB/s) = 11.9 ms."""
    assert torus_shape(256, 2) == (16, 16)
    assert torus_shape(256, 3) == (8, 8, 4)
    assert torus_shape(1024, 3) == (16, 8, 8)
    assert torus_shape(1021, 3) == (1021, 1, 1)
    spec = ClusterSpec(nodes=1, gpus_per_node=256, intra="tpu-v5p-ici")
    est = estimate_on(resolve_cluster(CAT, spec), Collective.ALL_TO_ALL, 2**30)
    assert est.best.transfer_s == pytest.approx(8 * 2**30 / (8 * 0.9 * 100e9))
    assert est.best.bottleneck == "scale-up: the tpu-v5p-ici torus's bisection (64 links)"


def test_an_all_to_all_over_pcie_gpus_with_one_nic_is_bound_by_the_nic() -> None:
    """The same 4 x 8 Gen4 GPUs with one NDR NIC a node: each GPU's link carries 31/32 x 1 GB
    (38.4 ms), but the node's one NIC, capped by the Gen4 link at 25.2 GB/s, carries 8 GPUs'
    24/32 x 1 GB: 750 MB / (25.2 / 8 GB/s) = 238 ms, which sets the time. The two had been
    added (247 ms, 'the GPU's pcie4 link'). PXN, which needs GPUs that meet over NVLink
    (NCCL's PATH_PXN), is not offered on them."""
    spec = ClusterSpec(nodes=4, gpus_per_node=8, intra="pcie4", inter="ndr", nics_per_node=1)
    est = estimate_on(resolve_cluster(CAT, spec), Collective.ALL_TO_ALL, 1e9)
    pcie4 = 31.5e9 * 0.8
    assert est.best.algorithm == "pairwise"
    assert est.best.transfer_s == pytest.approx(24 / 32 * 1e9 / (pcie4 / 8))
    assert est.best.bottleneck.startswith("network (NIC share per GPU")
    assert {c.algorithm for c in est.alternatives} == {"pairwise"}
    with pytest.raises(AlgorithmNotApplicableError, match="meet over NVLink"):
        estimate_on(resolve_cluster(CAT, spec), Collective.ALL_TO_ALL, 1e9, algorithm="pxn")


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        (ClusterSpec(system="dgx-a100", nodes=1), "fabric"),
        (ClusterSpec(system="dgx-h100", nodes=1), "fabric"),
        # 2 trays of 4 in one 72-GPU NVLink domain: one switched domain, no network
        (ClusterSpec(system="gb200-nvl72", nodes=2), "fabric"),
        (ClusterSpec(system="mi300x-8", nodes=1), "fabric"),  # xGMI full mesh
        (ClusterSpec(nodes=1, gpus_per_node=4, intra="nvlink4-mesh4"), "fabric"),
        (ClusterSpec(nodes=1, gpus_per_node=4, intra="tpu-v5p-ici"), "fabric"),  # a torus
        (ClusterSpec(nodes=1, gpus_per_node=8, intra="pcie4"), "scale-up"),
        (ClusterSpec(nodes=1, gpus_per_node=2, intra="pcie3-host-staged"), "scale-up"),
        (ClusterSpec(nodes=1, gpus_per_node=2, intra="nvlink4-bridge"), "scale-up"),
        # the preset's NVSwitch does not carry over to a link named in its place
        (ClusterSpec(system="dgx-h100", nodes=1, intra="pcie5"), "scale-up"),
        (ClusterSpec(system="dgx-h100", nodes=2), "verbs"),
    ],
)
def test_error_band_class_follows_how_the_gpus_meet(spec: ClusterSpec, cls: str) -> None:
    """One domain over an accelerator fabric (switch, mesh or torus) has its own error band
    (fabric): the pooled one-domain band had been set by PCIe pairs and a bridged pair
    (docs/model.md#error-band)."""
    assert transport_class(resolve_cluster(CAT, spec).topology) == cls


def test_slow_host_pcie_caps_each_nic() -> None:
    # an NDR port (50 GB/s) on PCIe Gen4 x16 (31.5 GB/s line) gets the PCIe link's achievable rate
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2, host_pcie="pcie4"))
    out = cluster.topology.out
    assert out is not None
    pcie4 = 16e9 * 16 * (128 / 130) / 8  # 16 GT/s x 16 lanes, 128b/130b = 31.5 GB/s
    assert pcie4 == pytest.approx(31.5 * GB, rel=1e-3)
    assert out.nic_line_Bps == pytest.approx(50 * GB)  # the line rate stays the NIC's
    assert out.nic_bw_Bps == pytest.approx(31.5 * GB * _eff("pcie4"))
    assert out.domain_bw_Bps == pytest.approx(8 * 31.5 * GB * _eff("pcie4"))
    assert any(note.startswith("each ndr NIC is capped by pcie4") for note in cluster.assumptions)
    assert out.nic_cap == "pcie4"
    # the bottleneck the estimate heads names the cap beside the network, with its rate (4
    # nodes: each sends 2S through a tree, more than its NVLink chain carries per GPU)
    four = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, host_pcie="pcie4"))
    capped = 31.5 * _eff("pcie4")
    tree = estimate_on(four, Collective.ALL_REDUCE, 1e9, algorithm="tree", protocol="Simple")
    assert tree.best.bottleneck == (
        f"network (tree: each node sends 2S; each NIC capped by pcie4 at {capped:.1f} GB/s)"
    )
    ring = estimate_on(four, Collective.ALL_REDUCE, 8e9, algorithm="ring", protocol="Simple")
    assert f"({capped:.1f} GB/s achievable each, capped by pcie4)" in ring.best.bottleneck
    # at its own PCIe Gen5 slot the NDR port is not capped, and no bottleneck says so
    own = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4))
    assert own.topology.out is not None
    assert own.topology.out.nic_cap is None
    assert estimate_on(own, Collective.ALL_TO_ALL, 8e9).best.bottleneck == (
        "network (NIC share per GPU)"
    )
    assert estimate_on(four, Collective.ALL_TO_ALL, 8e9).best.bottleneck == (
        f"network (NIC share per GPU; each NIC capped by pcie4 at {capped:.1f} GB/s)"
    )


def test_no_preset_assumes_eight_gpus_and_one_nic_per_gpu() -> None:
    cluster = resolve_cluster(CAT, ClusterSpec(intra="nvlink4", inter="roce-400g"))
    assert cluster.system is None
    assert (cluster.nodes, cluster.gpus_per_node, cluster.nics_per_node) == (2, 8, 8)
    out = cluster.topology.out
    assert out is not None
    # 400GbE: 400 Gb/s = 50 GB/s per port; no host PCIe given, so no cap
    assert out.domain_bw_Bps == pytest.approx(8 * 50 * GB * _eff("roce-400g"))
    assert list(cluster.assumptions) == [
        "8 GPUs per node assumed ({gpus_per_node})",
        "2 nodes assumed ({nodes})",
        "2 nodes let NCCL's tree halve network traffic",
        "8 NICs per node (one per GPU) assumed ({nics_per_node})",
    ]
    # what the default node count means for collectives is a fabric note (checkpoint, which
    # runs none, leaves it out); the count itself is not
    assert "2 nodes let NCCL's tree halve network traffic" in cluster.fabric_notes
    assert "2 nodes assumed ({nodes})" not in cluster.fabric_notes


def test_fewer_gpus_keep_a_mesh_to_the_links_in_use() -> None:
    # MI300X: 7 xGMI links x 64 GB/s = 448 GB/s to its 7 peers; with 4 GPUs each uses 3 links
    cluster = resolve_cluster(CAT, ClusterSpec(system="mi300x-8", gpus_per_node=4, nodes=2))
    up = cluster.topology.up
    assert up is not None
    assert up.mesh
    assert up.line_Bps == pytest.approx(3 * 64 * GB)  # 192 GB/s
    assert up.bw_Bps == pytest.approx(3 * 64 * GB * _eff("xgmi-mi300x"))
    # 8 NICs for 8 GPUs on the preset: 1 per GPU kept, so 4 NICs for 4 GPUs
    assert cluster.nics_per_node == 4
    assert "xgmi-mi300x is a switchless mesh: 4 GPUs use 3 of 7 links each" in cluster.assumptions


@pytest.mark.parametrize(("gpus", "used"), [(8, 21), (4, 9), (2, 3)])
def test_a_mesh_with_several_links_per_peer_counts_them(gpus: int, used: int) -> None:
    """Gaudi 3: 21 x 200GbE scale-up ports, 3 to each of 7 peers (25 GB/s each way per port,
    525 GB/s in all). The mesh rule had counted one link per peer: 8 cards used 7 of 21 links,
    a third of the card's bandwidth (157 GB/s of busbw on a full box)."""
    spec = ClusterSpec(intra="gaudi3-rocev2", gpus_per_node=gpus, nodes=1)
    up = resolve_cluster(CAT, spec).topology.up
    assert up is not None
    assert up.line_Bps == pytest.approx(used * 25 * GB)  # 525, 225, 75 GB/s
    assert up.bw_Bps == pytest.approx(used * 25 * GB * _eff("gaudi3-rocev2"))


@pytest.mark.parametrize(
    ("spec", "link", "most"),
    [
        (ClusterSpec(system="mi300x-8", gpus_per_node=16, nodes=1), "xgmi-mi300x", 8),
        (ClusterSpec(system="alps-gh200", gpus_per_node=8, nodes=2), "nvlink4-mesh4", 4),
        (ClusterSpec(intra="gaudi3-rocev2", gpus_per_node=9, nodes=1), "gaudi3-rocev2", 8),
    ],
)
def test_a_node_larger_than_its_full_mesh_is_refused(
    spec: ClusterSpec, link: str, most: int
) -> None:
    """MI300X's 7 xGMI links join 8 GPUs each to each: '-g 16' had been priced as one 16-GPU
    domain at 308 GB/s busbw with only a note; a full mesh is at most mesh_gpus GPUs."""
    assert find_link(CAT, link).mesh_gpus == most
    with pytest.raises(
        ClusterError, match=f"{link} is a switchless mesh that joins at most {most}"
    ):
        resolve_cluster(CAT, spec)
    # its own size and less resolve; DGX-1's hybrid cube mesh (nvlink2) states none
    fits = spec.model_copy(update={"gpus_per_node": most})
    assert resolve_cluster(CAT, fits).gpus_per_node == most
    assert find_link(CAT, "nvlink2").mesh_gpus is None


def test_low_confidence_entries_are_named_beside_the_estimate() -> None:
    """The catalogue grades gcp-a3-mega and gcp-tcpxo low (recalled or secondary sources); that
    had shown only in 'links' and 'systems', never beside an estimate resting on them. A
    cluster of high- and medium-graded entries gets no such note."""
    low = "low-confidence catalogue entries: "
    mega = resolve_cluster(CAT, ClusterSpec(system="gcp-a3-mega", nodes=2)).assumptions
    (note,) = [a for a in mega if a.startswith(low)]
    assert note.startswith(f"{low}gcp-a3-mega (system), gcp-tcpxo (link): ")
    assert find_system(CAT, "gcp-a3-mega").confidence == "low"
    assert find_link(CAT, "gcp-tcpxo").confidence == "low"
    h100 = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2)).assumptions
    assert not [a for a in h100 if a.startswith(low)]
    # a WAN link is named where sites use it, and a link with no tier to act on is not
    wan = ClusterSpec(system="dgx-h100", nodes=2, sites=2, wan="wan-100g")
    (note,) = [a for a in resolve_cluster(CAT, wan).assumptions if a.startswith(low)]
    assert note.startswith(f"{low}wan-100g (link): ")


def test_aws_p5_keeps_four_efa_per_gpu_when_resized() -> None:
    # p5: 32 x 100 Gb/s EFA v2 for 8 GPUs = 4 per GPU; 2 GPUs per node keep 8 of them
    cluster = resolve_cluster(CAT, ClusterSpec(system="aws-p5", gpus_per_node=2, nodes=2))
    assert cluster.nics_per_node == 8
    out = cluster.topology.out
    assert out is not None
    assert out.nics_per_domain * out.nic_line_Bps == pytest.approx(8 * 100e9 / 8)  # 100 GB/s


def test_rack_scale_domain_spans_nodes() -> None:
    # GB200 NVL72: 18 trays x 4 GPUs share one 72-GPU NVLink domain
    one = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=18))
    assert (one.topology.ranks_per_domain, one.topology.domains) == (72, 1)
    assert one.topology.out is None
    assert one.inter is None
    assert "all 72 GPUs share one gb200-nvl72 NVLink domain of up to 72" in one.assumptions
    two = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=36))
    assert (two.topology.ranks_per_domain, two.topology.domains) == (72, 2)
    out = two.topology.out
    assert out is not None
    assert out.nics_per_domain == 18 * 4  # 4 NICs per tray x 18 trays per domain


def test_a_rack_scale_domain_can_be_split_into_smaller_ones() -> None:
    # 72 GPUs run as two NVL36 domains of 9 trays: a network joins the two, 9 x 4 NICs each
    halves = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=18, scale_up_domain=36))
    assert (halves.topology.ranks_per_domain, halves.topology.domains) == (36, 2)
    out = halves.topology.out
    assert out is not None
    assert out.nics_per_domain == 9 * 4
    assert "gb200-nvl72's NVLink domain of 72 GPUs used as domains of 36" in halves.assumptions
    # the trays' own GPUs only (multi-node NVLink off): 18 domains of one tray and its 4 NICs
    trays = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=18, scale_up_domain=4))
    assert (trays.topology.ranks_per_domain, trays.topology.domains) == (4, 18)
    trays_out = trays.topology.out
    assert trays_out is not None
    assert trays_out.nics_per_domain == 4
    # the preset's own size changes nothing
    same = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=18, scale_up_domain=72))
    assert (
        same.topology == resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=18)).topology
    )


@pytest.mark.parametrize("domain", [48, 40, 16])
def test_a_domain_that_does_not_divide_the_rack_is_refused(domain: int) -> None:
    """36 GB200 trays as 3 domains of 48 GPUs were accepted ('3 domains x 48 NICs'), though the
    second would take 24 GPUs from each of two 72-GPU racks. The refusal lists the whole-tray
    divisors of 72: 4, 8, 12, 24, 36, 72."""
    fits = [d for d in range(4, 73, 4) if 72 % d == 0]
    assert fits == [4, 8, 12, 24, 36, 72]
    with pytest.raises(ClusterError) as info:
        resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=36, scale_up_domain=domain))
    assert str(info.value) == (
        f"scale_up_domain {domain} does not divide gb200-nvl72's NVLink domain of 72 GPUs, "
        "so a domain would span two of them; use 4, 8, 12, 24, 36 or 72"
    )
    assert info.value.field == "scale_up_domain"


def test_two_trays_of_one_rack_are_not_said_to_halve_network_traffic() -> None:
    # gb200-nvl72 without a node count: 2 trays, both in the rack's NVLink domain, so no tree
    # crosses a network; the domain's note is one only collectives read (checkpoint drops it)
    two = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72"))
    assert two.topology.domains == 1
    assert list(two.assumptions) == [
        "2 nodes assumed ({nodes})",
        "all 8 GPUs share one gb200-nvl72 NVLink domain of up to 72",
    ]
    assert two.fabric_notes == ("all 8 GPUs share one gb200-nvl72 NVLink domain of up to 72",)
    # one site per node across a WAN: the tree has WAN levels only, and no empty term for the
    # levels between nodes inside a site ("2 x 0 levels (log2 of 2 nodes)")
    sites = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2, sites=2))
    terms = estimate_on(sites, Collective.ALL_REDUCE, 1e9).best.terms
    names = [t.name for t in terms]
    assert "tree levels across sites" in names
    assert "tree levels across nodes" not in names


def test_explanations_say_domain_where_one_spans_nodes() -> None:
    # two NVL36 halves of 9 trays: the tree runs between the halves, not between trays
    halves = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=18, scale_up_domain=36))
    assert (halves.topology.nodes_per_domain, halves.topology.node) == (9, "domain")
    est = estimate_on(halves, Collective.ALL_REDUCE, 2**30)
    names = [t.name for t in est.best.terms]
    assert "tree levels across domains" in names
    tree = next(t for t in est.best.terms if t.name == "tree levels across domains")
    assert "(log2 of 2 domains)" in tree.detail
    # a tray per domain and a DGX H100 per domain: the engine's word stays "node"
    for spec in (
        ClusterSpec(system="gb200-nvl72", nodes=2, scale_up_domain=4),
        ClusterSpec(system="dgx-h100", nodes=2),
    ):
        cluster = resolve_cluster(CAT, spec)
        assert (cluster.topology.nodes_per_domain, cluster.topology.node) == (1, "node")
        terms = estimate_on(cluster, Collective.ALL_REDUCE, 2**30).best.terms
        assert "tree levels across nodes" in [t.name for t in terms]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"system": "gb200-nvl72", "nodes": 18, "scale_up_domain": 6},
            "{scale_up_domain} 6 is not a whole number of 4-GPU nodes",
        ),
        (
            {"system": "gb200-nvl72", "nodes": 36, "scale_up_domain": 144},
            "{scale_up_domain} 144 is more than gb200-nvl72's NVLink domain of 72 GPUs",
        ),
        (
            {"system": "dgx-h100", "nodes": 2, "scale_up_domain": 16},
            "{scale_up_domain} 16 is more than one node (8 GPUs): a domain across nodes comes "
            "with a system preset that has one, e.g. the preset gb200-nvl72 ({system})",
        ),
        (
            # a resized tray is one node per domain (the preset's domain is not assumed)
            {"system": "gb200-nvl72", "nodes": 4, "gpus_per_node": 2, "scale_up_domain": 8},
            "{scale_up_domain} 8 is more than one node (2 GPUs): {gpus_per_node} 2 is not "
            "gb200-nvl72's 4, so its 72-GPU domain is not assumed",
        ),
    ],
)
def test_a_scale_up_domain_the_hardware_lacks_is_refused(
    spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ClusterError) as info:
        resolve_cluster(CAT, ClusterSpec(**spec))
    assert (info.value.template, info.value.field) == (message, "scale_up_domain")


def test_a_site_of_rack_scale_domains_is_counted_in_nodes() -> None:
    # 36 GB200 trays = 2 NVL72 domains over 2 sites: 18 trays each; it said '2 sites of 1 node'
    cluster = resolve_cluster(CAT, ClusterSpec(system="gb200-nvl72", nodes=36, sites=2))
    assert (
        "2 sites of 18 nodes (1 scale-up domain), 1 x wan-100g per site (1 ms one way per WAN hop)"
        in cluster.assumptions
    )


def test_sites_add_a_wan_tier() -> None:
    # 4 DGX H100 over 2 sites, one wan-100g link each: 100 Gb/s = 12.5 GB/s, 1 ms one way
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, sites=2))
    wan = cluster.topology.wan
    assert wan is not None
    assert (wan.link_id, wan.domains, wan.nics_per_domain) == ("wan-100g", 2, 1)
    assert wan.nic_line_Bps == pytest.approx(12.5 * GB)
    assert wan.nic_bw_Bps == pytest.approx(12.5 * GB * _eff("wan-100g"))
    assert wan.transport_latency_s == pytest.approx(1e-3)
    given = resolve_cluster(
        CAT, ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan_latency_s=5e-3)
    )
    assert given.topology.wan is not None
    assert given.topology.wan.transport_latency_s == pytest.approx(5e-3)
    # aws-flow-5g is a per-flow rate limit with no distance: its hop has no propagation delay,
    # and the notes say so (they only printed "0 us one way per WAN hop")
    flow = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="aws-flow-5g"))
    assert flow.topology.wan is not None
    assert flow.topology.wan.transport_latency_s == 0
    assert (
        "aws-flow-5g states no distance: its WAN hop costs no propagation delay "
        "({wan_latency_s} to give one)"
    ) in flow.assumptions
    assert not any("states no distance" in note for note in cluster.assumptions)


def test_oversubscription_reaches_the_scale_out_tier() -> None:
    spec = ClusterSpec(system="dgx-h100", nodes=4, oversubscription=2, cross_leaf_fraction=0.5)
    cluster = resolve_cluster(CAT, spec)
    out = cluster.topology.out
    assert out is not None
    assert (out.oversubscription, out.cross_leaf_fraction) == (2.0, 0.5)
    # max(1, k f) = max(1, 2 x 0.5) = 1: stated in the assumptions as no slowdown
    assert any("(k x f = 1 <= 1): no slowdown" in note for note in cluster.assumptions)
    steep = resolve_cluster(CAT, spec.replace(oversubscription=4))
    assert any("runs x2 slower (max(1, k x f))" in note for note in steep.assumptions)
    # a slowdown under 1.005 keeps the figures that show it: 1.0001 x 1 had read 'x1 slower'
    slight = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, oversubscription=1.0001))
    assert any("runs x1.0001 slower (max(1, k x f))" in note for note in slight.assumptions)
    # a rounded one keeps its trailing zeros, as the ratio beside it does: 2.002 had read
    # 'oversubscription 2.00:1 end to end ... runs x2 slower', as if it were 2
    rounded = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, oversubscription=2.002))
    (note,) = [n for n in rounded.assumptions if n.startswith("oversubscription 2.00:1 end to end")]
    assert note.endswith("runs x2.00 slower (max(1, k x f))")
    # a fraction on a non-blocking fabric changes nothing, and says so (it said nothing)
    flat = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, cross_leaf_fraction=0.5))
    assert (
        "{cross_leaf_fraction} 0.5 ignored: the leaves are not oversubscribed (1:1; "
        "{oversubscription} sets it), so traffic crossing them runs at the NICs' rate"
    ) in flat.assumptions
    plain = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4))
    assert not any("cross_leaf" in note for note in plain.assumptions)


def test_a_small_cross_leaf_share_does_not_read_as_none() -> None:
    """4 DGX H100 at 4:1 with 0.4 % of the traffic crossing the leaves: the note had said '0% of
    each node's network traffic assumed to cross' (``:.0%``), and a neighbour share of
    1/128 = 0.78125 % '1%'; two figures below 10 %: 0.40 % and 0.78 %."""
    spec = ClusterSpec(
        system="dgx-h100",
        nodes=4,
        oversubscription=4,
        cross_leaf_fraction=0.004,
        neighbour_cross_leaf_fraction=1 / 128,
    )
    notes = " ".join(resolve_cluster(CAT, spec).assumptions)
    assert "oversubscription 4:1 end to end; 0.40% of each node's network traffic" in notes
    assert "neighbour traffic (ring, tree, SHARP, send/recv; 0.78% of it crosses)" in notes
    # k x f = 4 x 0.004 = 0.016, 4 / 128 = 0.03125: the figures beside them are unchanged
    assert "(k x f = 0.016 <= 1)" in notes
    assert "(k x f = 0.0312 <= 1)" in notes


# --- errors name the field at fault --------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        (
            {"intra": "ndr"},
            "intra",
            "{intra} ndr is a scale-out link; use a scale-up or PCIe link",
        ),
        (
            {"inter": "nvlink4"},
            "inter",
            "{inter} nvlink4 is a scale-up link; use a scale-out link",
        ),
        (
            {"system": "rtx2080ti-2", "nodes": 2},
            "nodes",
            "rtx2080ti-2 has no scale-out NIC; give {inter} and {nics_per_node} to join 2 of them",
        ),
        (
            {"nodes": 1, "gpus_per_node": 1},
            "nodes",
            "a collective needs at least 2 GPUs ({nodes}, {gpus_per_node})",
        ),
        (
            # 200,000 x 8 = 1,600,000 GPUs > the 1,000,000 limit
            {"nodes": 200_000, "gpus_per_node": 8},
            "nodes",
            "200000 nodes x 8 GPUs is more than 1000000 GPUs",
        ),
        (
            # 20 x 4 = 80 GPUs: not a multiple of 72; 72 / 4 = 18 nodes per domain; of the
            # rack's parts in whole trays (36, 24, 12, 8 GPUs) 8 is the largest 80 fills
            {"system": "gb200-nvl72", "nodes": 20},
            "nodes",
            "20 nodes x 4 GPUs = 80 GPUs do not fill whole 72-GPU scale-up domains of "
            "gb200-nvl72; use a multiple of 18 nodes (or at most 18, one domain), or "
            "{scale_up_domain} 8 (10 domains of 8 GPUs)",
        ),
        (
            # 27 trays = 108 GPUs = 3 x 36: three NVL36 (the flag had gone unmentioned)
            {"system": "gb200-nvl72", "nodes": 27},
            "nodes",
            "27 nodes x 4 GPUs = 108 GPUs do not fill whole 72-GPU scale-up domains of "
            "gb200-nvl72; use a multiple of 18 nodes (or at most 18, one domain), or "
            "{scale_up_domain} 36 (3 domains of 36 GPUs)",
        ),
        (
            # 19 trays = 76 GPUs = 4 x 19: no part of the rack in whole trays divides it
            {"system": "gb200-nvl72", "nodes": 19},
            "nodes",
            "19 nodes x 4 GPUs = 76 GPUs do not fill whole 72-GPU scale-up domains of "
            "gb200-nvl72; use a multiple of 18 nodes (or at most 18, one domain)",
        ),
        (
            {"intra": "nvlink4", "gpus_per_node": 512, "nodes": 2},
            "nics_per_node",
            "512 GPUs per node would need 512 NICs (one per GPU, more than 256); give "
            "{nics_per_node}",
        ),
        (
            {"system": "dgx-h100", "nodes": 4, "sites": 3},
            "sites",
            "4 nodes cannot be split evenly over 3 sites",
        ),
        (
            # a site holds whole NVL72 domains: it said '2 nodes (scale-up domains)' of 36
            {"system": "gb200-nvl72", "nodes": 36, "sites": 4},
            "sites",
            "2 scale-up domains of 18 nodes cannot be split evenly over 4 sites",
        ),
        (
            {"system": "dgx-h100", "wan_links": 2},
            "wan_links",
            "{wan_links} 2 needs several sites: WAN links join sites (give {sites} 2 or more)",
        ),
        (
            {"system": "dgx-h100", "gpus_per_process": 9},
            "gpus_per_process",
            "{gpus_per_process} 9 is more than the 8 GPUs of a node; one process drives GPUs of "
            "its own node only",
        ),
    ],
)
def test_cluster_errors_name_the_field(spec: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(ClusterError) as info:
        resolve_cluster(CAT, ClusterSpec(**spec))
    assert info.value.field == field
    assert info.value.template == message


def test_a_link_or_system_object_is_asked_for_by_its_id() -> None:
    """find_link and find_system return Link and System objects; given back where a name goes
    (ClusterSpec, find_link, tp_whatif), one had been echoed as 200 characters of its fields
    ("inter id='ndr' aliases=(...) ...: input should be a valid string", "unknown link
    'Link(id=...'"). Each says what was given and the id to give."""
    ndr, dgx = find_link(CAT, "ndr"), find_system(CAT, "dgx-h100")
    with pytest.raises(ClusterError) as spec_error:
        ClusterSpec(inter=ndr)
    assert str(spec_error.value) == "inter is given as a Link object: give its id, 'ndr'"
    assert spec_error.value.field == "inter"
    with pytest.raises(ClusterError) as spec_error:
        ClusterSpec().replace(system=dgx)
    assert str(spec_error.value) == "system is given as a System object: give its id, 'dgx-h100'"
    with pytest.raises(WrongTypeError) as found:
        find_link(CAT, ndr)  # type: ignore[arg-type]
    assert str(found.value) == "the link is given as a Link object: give its id, 'ndr'"
    with pytest.raises(WrongTypeError) as found:
        tp_whatif(CAT, "nvlink4", "ndr", 8, 1e9, system=dgx)  # type: ignore[arg-type]
    assert str(found.value) == "the system is given as a System object: give its id, 'dgx-h100'"
    # a name still finds its entry, and what is no name is still unknown
    assert ClusterSpec(inter=ndr.id).inter == "ndr"
    with pytest.raises(UnknownNameError, match="unknown link 'None'"):
        find_link(CAT, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        # a slip of a field's name is offered the field, as a design file's unknown key is
        ("gpu_per_node", "unknown cluster field 'gpu_per_node' (did you mean gpus_per_node?)"),
        ("node", "unknown cluster field 'node' (did you mean nodes?)"),
        ("wan_latency", "unknown cluster field 'wan_latency' (did you mean wan_latency_s?)"),
        # in any case, as other names are matched (upper case had been offered nothing)
        ("GPUS_PER_NODE", "unknown cluster field 'GPUS_PER_NODE' (did you mean gpus_per_node?)"),
        ("Sharp", "unknown cluster field 'Sharp' (did you mean sharp?)"),
        # one like no field is only unknown
        ("interconnect", "unknown cluster field 'interconnect'"),
    ],
)
def test_an_unknown_field_is_offered_the_closest(given: str, message: str) -> None:
    with pytest.raises(ClusterError) as info:
        ClusterSpec(**{given: 4})
    assert info.value.field is None
    assert str(info.value) == message
    with pytest.raises(ClusterError) as info:
        ClusterSpec(nodes=2).replace(**{given: 4})
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        ({"nodes": 0}, "nodes", "nodes 0 is out of range (1..1000000)"),
        ({"nics_per_node": 257}, "nics_per_node", "nics_per_node 257 is out of range (1..256)"),
        # a whole float past 64 bits had read "unable to parse input string as an integer"
        ({"nodes": 1e30}, "nodes", "nodes 1e+30 is out of range (1..1000000)"),
        ({"sites": -1e20}, "sites", "sites -1e+20 is out of range (1..1024)"),
        # in the words of the command line and tp_whatif ('input should be a valid integer,
        # got a number with a fractional part' had been pydantic's); 2.0 is 2
        ({"nodes": 2.5}, "nodes", "nodes 2.5 is not a whole number"),
        ({"gpus_per_node": 7.5}, "gpus_per_node", "gpus_per_node 7.5 is not a whole number"),
        ({"oversubscription": 0.5}, "oversubscription", "oversubscription 0.5 is out of range"),
        ({"inter": " "}, "inter", "inter is empty; give a link name"),
        # a count is not true/false, a switch nothing else (nodes=True had meant 1 node and
        # sharp='yes' on: a library user's review)
        ({"nodes": True}, "nodes", "nodes True is true/false, not a number"),
        (
            {"wan_latency_s": True},
            "wan_latency_s",
            "wan_latency_s True is true/false, not a number",
        ),
        ({"sharp": "yes"}, "sharp", "sharp 'yes' must be true or false"),
        # a text field keeps its own words: true is no text, and no number was asked for
        ({"system": True}, "system", "system True: input should be a valid string"),
        ({"nvls": 0}, "nvls", "nvls 0 must be true or false"),
        # text is no count, as on the command line and in design files (review CU 6: nodes="8"
        # had been read as 8); the ratio alone takes text
        ({"nodes": "8"}, "nodes", "nodes '8' is text, not a number"),
        ({"gpus_per_process": b"2"}, "gpus_per_process", "gpus_per_process b'2' is text"),
        ({"cross_leaf_fraction": "0.5"}, "cross_leaf_fraction", "cross_leaf_fraction '0.5' is"),
        # a name typed in Latin-1 reaches argv with a surrogate for its byte ('unable to parse
        # raw data as a unicode string' had been pydantic's words)
        ({"system": "dgx-h100\udce9"}, "system", "system 'dgx-h100\\udce9' is not UTF-8 text"),
        ({"inter": "\ud800"}, "inter", "inter '\\ud800' is not UTF-8 text"),
        # no name is that long ('string should have at most 200 characters' was pydantic's)
        ({"system": "x" * 201}, "system", f"system '{'x' * 200}...' is longer than any name"),
    ],
)
def test_spec_refuses_values_out_of_range(
    spec: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(ClusterError) as info:
        ClusterSpec(**spec)
    assert info.value.field == field
    assert str(info.value).startswith(message)


def test_every_number_field_refuses_text_and_the_ratio_takes_it() -> None:
    """The list of fields that refuse text is every field typed as a number but the ratio."""
    from ibcalc.booleans import _admits
    from ibcalc.cluster.spec import _NUMBERS

    numbers = {
        name
        for name, info in ClusterSpec.model_fields.items()
        if _admits(info.annotation, (int, float)) and not _admits(info.annotation, (bool,))
    }
    assert set(_NUMBERS) == numbers - {"oversubscription"}
    assert ClusterSpec(oversubscription="2:1").oversubscription == 2.0
    assert ClusterSpec(nodes=8, gpus_per_node=8.0).gpus_per_node == 8


def test_check_count_names_the_field() -> None:
    assert check_count("nodes", 4, 1, 8) == 4
    with pytest.raises(ClusterError) as info:
        check_count("nodes", 9, 1, 8)
    assert info.value.field == "nodes"
    assert str(info.value) == "nodes 9 is out of range (1..8)"


def test_host_cpu_comes_from_the_user_then_the_system() -> None:
    # dgx-a100 states AMD hosts (dual AMD Rome 7742); aws-p4d Intel; a cluster by flags none
    amd = resolve_cluster(CAT, ClusterSpec(system="dgx-a100", nodes=2))
    assert amd.topology.host_cpu == "amd"
    told = resolve_cluster(CAT, ClusterSpec(system="dgx-a100", nodes=2, host_cpu="intel"))
    assert told.topology.host_cpu == "intel"
    assert resolve_cluster(CAT, ClusterSpec(system="aws-p4d", nodes=2)).topology.host_cpu == (
        "intel"
    )
    flags = ClusterSpec(intra="nvlink3", inter="hdr", nodes=2, gpus_per_node=8)
    assert resolve_cluster(CAT, flags).topology.host_cpu == ""
    with pytest.raises(ClusterError) as info:
        ClusterSpec(host_cpu="power9")  # type: ignore[arg-type]
    assert info.value.field == "host_cpu"
    # in any case, as every other name ('AMD' had been refused: review DR)
    upper = ClusterSpec(system="dgx-a100", nodes=2, host_cpu="INTEL")  # type: ignore[arg-type]
    assert resolve_cluster(CAT, upper).topology.host_cpu == "intel"


def test_the_catalogue_says_which_transports_are_plugins() -> None:
    p5 = resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2)).topology.out
    ndr = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2)).topology.out
    assert p5 is not None
    assert ndr is not None
    assert (p5.is_plugin, ndr.is_plugin) == (True, False)
    # a latency fitted to NDR keeps it a verbs link
    fitted = catalogue_with_link(CAT, "ndr", transport_latency_s=3e-6)
    out = resolve_cluster(fitted, ClusterSpec(system="dgx-h100", nodes=2)).topology.out
    assert out is not None
    assert out.transport_latency_s == 3e-6
    assert not out.is_plugin


def test_amd_gpus_say_that_rccl_is_priced_as_nccl() -> None:
    # MI300X and MI355X presets (gpu_arch cdna3 / cdna4), and an xGMI link given without a
    # preset, run RCCL; the model has only NCCL 2.30.7's tuner constants (docs/model.md)
    def rccl(spec: ClusterSpec) -> list[str]:
        notes = resolve_cluster(CAT, spec).assumptions
        return [n for n in notes if n.startswith("AMD GPUs run RCCL")]

    assert len(rccl(ClusterSpec(system="mi300x-8"))) == 1
    assert len(rccl(ClusterSpec(system="mi355x-8", nodes=2))) == 1
    assert len(rccl(ClusterSpec(intra="xgmi-mi300x", gpus_per_node=8))) == 1
    assert rccl(ClusterSpec(system="dgx-h100", nodes=2)) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # a WAN or NVLink "host link" capped each NIC at its rate: 0.90 GB/s busbw from wan-1g
        (
            ClusterSpec(system="dgx-h100", nodes=4, host_pcie="wan-1g"),
            "host_pcie wan-1g is a wan link; give the PCIe link the NICs sit on (e.g. pcie5)",
        ),
        (
            ClusterSpec(system="dgx-h100", nodes=4, host_pcie="nvlink5"),
            "host_pcie nvlink5 is a scale-up link; give the PCIe link the NICs sit on (e.g. pcie5)",
        ),
        # --wan without --sites was dropped with a note sweep never printed (a misspelt link
        # too), while --wan-links, --distance and --rtt without sites were refused
        (
            ClusterSpec(system="dgx-h100", nodes=4, wan="wan-100g"),
            "wan wan-100g needs several sites: WAN links join sites (give sites 2 or more)",
        ),
        # a link that is no WAN link is told so with or without sites (it had been told of
        # sites first), naming what was typed beside the id it stands for (review DW)
        (
            ClusterSpec(system="dgx-h100", nodes=4, wan="nvlink-h100"),
            "wan nvlink-h100 (nvlink4) is a scale-up link; use a WAN or scale-out link",
        ),
        (
            ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="NVLink-H100"),
            "wan NVLink-H100 (nvlink4) is a scale-up link; use a WAN or scale-out link",
        ),
        (
            ClusterSpec(system="dgx-h100", nodes=4, inter="nvlink4"),
            "inter nvlink4 is a scale-up link; use a scale-out link",
        ),
    ],
)
def test_links_of_the_wrong_role_are_refused(spec: ClusterSpec, message: str) -> None:
    with pytest.raises(ClusterError) as info:
        resolve_cluster(CAT, spec)
    assert str(info.value) == message


def test_a_misspelt_wan_link_without_sites_is_named_as_unknown() -> None:
    """--wan wan-100 with no --sites had been told it needs sites, not that no such link exists
    (review DH L9): the name is looked up first."""
    with pytest.raises(UnknownNameError) as info:
        resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4, wan="bogus"))
    assert str(info.value) == "unknown link 'bogus' (ibcalc links lists the known ones)"


@pytest.mark.parametrize(
    ("intra", "inter", "gpus", "nics", "preset"),
    [
        # AWS p5: 32 x 100 Gb/s EFA v2 for 8 H100, 4 per GPU (it took 8, a quarter of p5's)
        ("nvlink4", "efa-v2", 8, 32, "aws-p5"),
        ("nvlink4", "efa-v2", 4, 16, "aws-p5"),
        # p4d: 4 x 100 Gb/s EFA for 8 A100; one GPU still gets one NIC (rounded up)
        ("nvlink3", "efa-100g", 8, 4, "aws-p4d"),
        ("nvlink3", "efa-100g", 1, 1, "aws-p4d"),
        # GCP A3 High: 4 GPUDirect-TCPX NICs for 8 H100
        ("nvlink4", "gcp-tcpx", 8, 4, "gcp-a3-high"),
    ],
)
def test_a_cloud_only_fabric_gets_its_instance_s_nics_per_gpu(
    intra: str, inter: str, gpus: int, nics: int, preset: str
) -> None:
    spec = ClusterSpec(intra=intra, inter=inter, gpus_per_node=gpus, nodes=2)
    cluster = resolve_cluster(CAT, spec)
    assert cluster.nics_per_node == nics
    system = next(s for s in CAT.systems if s.id == preset)
    per_gpu = system.nics_per_node / system.gpus_per_node
    assert (
        f"{nics} x {inter} per node assumed: {per_gpu:g} per GPU, as on {preset}, the instance "
        f"{inter} comes with ({{nics_per_node}})"
    ) in cluster.assumptions
    # on the instance's host links: no "no host PCIe link known" note
    assert cluster.host_pcie is not None
    assert cluster.host_pcie.id == system.host_pcie
    assert not any("no host PCIe link known" in a for a in cluster.assumptions)
    # a count given is kept
    given = resolve_cluster(CAT, spec.replace(nics_per_node=3))
    assert given.nics_per_node == 3
    # and gap, which compares the same node per GPU (of 2 GPUs or more), takes the same count
    if gpus > 1:
        report = gap_report(CAT, ClusterSpec(intra=intra, inter=inter, gpus_per_node=gpus))
        (pairing,) = report.pairings
        assert pairing.nics_per_node == nics


def test_a_cloud_only_fabric_on_another_preset_takes_its_instance_s_nics() -> None:
    """EFA v2 on a p4d node: 4 per GPU as on p5 (the preset's own 4 NICs are EFA 100G ones),
    on p4d's own host links."""
    cluster = resolve_cluster(CAT, ClusterSpec(system="aws-p4d", inter="efa-v2", nodes=2))
    assert cluster.nics_per_node == 32
    assert cluster.host_pcie is not None
    assert cluster.host_pcie.id == "pcie4"
    # the preset's own fabric keeps the preset's count
    own = resolve_cluster(CAT, ClusterSpec(system="aws-p4d", nodes=2))
    assert own.nics_per_node == 4


def test_an_instance_count_past_the_nic_limit_is_refused() -> None:
    """100 GPUs per node at p5's 4 EFA v2 each would be 400 NICs, past the 256 a node may have
    (--nics-per-node 400 is refused so; the instance count was not checked)."""
    with pytest.raises(ClusterError) as info:
        resolve_cluster(CAT, ClusterSpec(intra="nvlink4", inter="efa-v2", gpus_per_node=100))
    assert info.value.field == "nics_per_node"
    assert str(info.value) == (
        "100 GPUs per node would need 400 NICs (aws-p5's 4 per GPU, more than 256); give "
        "nics_per_node"
    )


@pytest.mark.parametrize("inter", ["ndr", "roce-400g", "roce-200g", "hdr"])
def test_a_fabric_sold_on_its_own_takes_one_nic_per_gpu(inter: str) -> None:
    """RoCE 200G has one preset with 16 NICs (OCI); a generic fabric's count is not that one
    instance's."""
    cluster = resolve_cluster(CAT, ClusterSpec(intra="nvlink4", inter=inter, nodes=2))
    assert cluster.nics_per_node == 8
    assert "8 NICs per node (one per GPU) assumed ({nics_per_node})" in cluster.assumptions


def test_another_fabric_on_a_preset_keeps_its_nic_count() -> None:
    """abci2-a has 4 HDR ports for 8 A100s: --inter ndr had taken 8 NICs (one per GPU), whose
    extra channels and proxy operations made a faster fabric slower at small sizes (4 nodes,
    broadcast of 128 KiB, ring/LL both: 62.8 us on hdr, 114 us on ndr; a review). Its 4 ports
    are kept at each link's rate; a cloud-only link's count is still its instance's, and a cloud
    preset's (32 EFA on p5) is not carried to another fabric."""
    times = {}
    for inter in ("hdr", "ndr", "xdr"):
        cluster = resolve_cluster(CAT, ClusterSpec(system="abci2-a", nodes=4, inter=inter))
        assert cluster.nics_per_node == 4
        times[inter] = estimate_on(cluster, Collective.BROADCAST, 128 * 1024).time_s
    assert times["ndr"] <= times["hdr"]
    assert times["xdr"] <= times["ndr"]
    ndr = resolve_cluster(CAT, ClusterSpec(system="abci2-a", nodes=2, inter="ndr"))
    assert "4 ndr NICs per node: abci2-a's 4 hdr ports ({nics_per_node})" in ndr.assumptions
    # resized: the preset's ports per GPU, rounded up (0.5 per GPU on 4 GPUs: 2)
    half = resolve_cluster(
        CAT, ClusterSpec(system="abci2-a", nodes=2, inter="ndr", gpus_per_node=4)
    )
    assert half.nics_per_node == 2
    assert (
        "2 ndr NICs per node: abci2-a's 0.5 hdr ports per GPU kept for 4 GPUs ({nics_per_node})"
    ) in half.assumptions
    # more than one port per GPU (OCI's 16 x 200G RoCE for 8 GPUs, 50 GB/s of line rate a GPU)
    # keeps its line rate per GPU in whole NICs, one per GPU at least: 16 NDR ports had doubled
    # it, one HDR per GPU halved it (reviews of the first two forms)
    counts = {
        inter: resolve_cluster(
            CAT, ClusterSpec(system="oci-bm-gpu-h100", nodes=2, inter=inter)
        ).nics_per_node
        for inter in ("hdr", "ndr", "xdr", "roce-100g")
    }
    # 2 x 25 GB/s a GPU: 2 HDR (25 GB/s), 1 NDR (50), 1 XDR (100, at least one), 4 x 12.5 GB/s
    assert counts == {"hdr": 16, "ndr": 8, "xdr": 8, "roce-100g": 32}
    # a count past 256 is refused, saying where it came from, as the other defaults are
    with pytest.raises(ClusterError, match=r"512 NICs \(roce-100g for oci-bm-gpu-h100's 50.0 GB/s"):
        resolve_cluster(
            CAT,
            ClusterSpec(system="oci-bm-gpu-h100", nodes=2, inter="roce-100g", gpus_per_node=128),
        )
    oci = resolve_cluster(CAT, ClusterSpec(system="oci-bm-gpu-h100", nodes=2, inter="ndr"))
    assert (
        "8 ndr NICs per node: oci-bm-gpu-h100's 50.0 GB/s of roce-200g line rate per GPU in "
        "whole ndr NICs, at least one per GPU ({nics_per_node})"
    ) in oci.assumptions
    # p5's 32 EFA interfaces are the instance's, not slots for NDR ports: one per GPU
    p5 = resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2, inter="ndr"))
    assert p5.nics_per_node == 8
    # and an EFA link named on a preset takes its instance's count (p4d's 4 for 8 GPUs)
    p4d = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=2, inter="efa-100g"))
    assert p4d.nics_per_node == 4
    # gap keeps the ports the same way
    (pairing,) = gap_report(CAT, ClusterSpec(system="abci2-a", inter="ndr")).pairings
    assert pairing.nics_per_node == 4
    assert "4 ndr NICs per node: abci2-a's 4 hdr ports ({nics_per_node})" in pairing.assumptions


def test_a_clusters_assumptions_cannot_be_changed_under_later_estimates() -> None:
    """A list in the frozen cluster could be appended to by one caller and show in every later
    estimate's assumptions; it is a tuple."""
    cluster = resolve_cluster(
        load_catalogue(use_env=False), ClusterSpec(system="dgx-h100", nodes=2)
    )
    assert isinstance(cluster.assumptions, tuple)
    first = estimate_on(cluster, Collective.ALL_REDUCE, 1e9)
    first.assumptions.append("mine")  # an estimate's own list is the caller's to change
    assert "mine" not in estimate_on(cluster, Collective.ALL_REDUCE, 1e9).assumptions


def test_the_two_node_tree_note_is_said_only_where_an_all_reduce_crosses_nodes() -> None:
    """The default of 2 nodes lets NCCL's all-reduce tree halve network traffic: said of an
    all-reduce, not of an all-gather; in serving only where an all-reduce leaves the node."""
    from ibcalc.cluster.resolve import TWO_NODE_TREE_NOTE
    from ibcalc.workload.infer import InferSpec, infer, serving_cluster
    from ibcalc.workload.model import find_model

    cat = load_catalogue(use_env=False)
    cluster = resolve_cluster(cat, ClusterSpec(system="dgx-h100"))
    assert TWO_NODE_TREE_NOTE in cluster.assumptions
    assert TWO_NODE_TREE_NOTE in estimate_on(cluster, Collective.ALL_REDUCE, 1e9).assumptions
    assert TWO_NODE_TREE_NOTE not in estimate_on(cluster, Collective.ALL_GATHER, 1e9).assumptions
    # tp 8 disaggregated: two nodes, each instance's all-reduce inside its node (the KV moves
    # by send/receive); tp 16: one instance's all-reduce across the two nodes
    for tp, disaggregated, said in ((8, True, False), (16, False, True)):
        spec = InferSpec(model=find_model("llama3-70b"), tp=tp, disaggregated=disaggregated)
        on = serving_cluster(cat, ClusterSpec(system="dgx-h100"), tp, disaggregated=disaggregated)
        assert on.nodes == 2
        result = infer(cat, on, spec)
        assert (TWO_NODE_TREE_NOTE in result.assumptions) is said


@pytest.mark.parametrize(
    ("intra", "family"),
    [("tpu-v5p-ici", "ici"), ("hccs-910b", "hccs"), ("nvlink4", None), ("xgmi-mi300x", None)],
)
def test_a_scale_up_link_no_published_run_measured_says_its_range_is_borrowed(
    intra: str, family: str | None
) -> None:
    """TPU ICI and Ascend HCCS got the same 'likely range' as NVLink, from NCCL and RCCL runs,
    with no word that none of those runs measured them (and that they do not run NCCL)."""
    catalogue = load_catalogue()
    if family:
        assert find_link(catalogue, intra).family == family
    cluster = resolve_cluster(catalogue, ClusterSpec(intra=intra, gpus_per_node=4, nodes=1))
    said = [n for n in cluster.assumptions if "no published measurement of it" in n]
    assert len(said) == (1 if family else 0)
    if family:
        assert said[0].startswith(f"{find_link(catalogue, intra).id} (")


def test_a_wan_says_its_range_comes_from_inside_one_site() -> None:
    cluster = resolve_cluster(load_catalogue(), ClusterSpec(system="dgx-h100", nodes=4, sites=2))
    said = "the likely range comes from runs inside one site"
    assert any(n.startswith(said) for n in cluster.assumptions)
    one_site = resolve_cluster(load_catalogue(), ClusterSpec(system="dgx-h100", nodes=4))
    assert not any("inside one site" in n for n in one_site.assumptions)


def test_a_scale_out_link_between_sites_is_said_to_have_no_distance() -> None:
    """--sites 2 --wan ndr (a metro InfiniBand span) priced its hop at 0 us without a word, called
    NDR's efficiency a WAN placeholder, and offered SHARP, whose tree does not span sites."""
    catalogue = load_catalogue(use_env=False)
    cluster = resolve_cluster(
        catalogue, ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="ndr")
    )
    notes = cluster.assumptions
    assert (
        "ndr (a scale-out link) states no distance: its WAN hop costs no propagation delay "
        "({wan_latency_s} to give one)"
    ) in notes
    assert not any("placeholder" in n for n in notes)
    assert not any("supports SHARP" in n for n in notes)
    one_site = resolve_cluster(catalogue, ClusterSpec(system="dgx-h100", nodes=4))
    assert any("supports SHARP" in n for n in one_site.assumptions)


def test_a_spec_takes_an_oversubscription_written_as_a_ratio() -> None:
    """ClusterSpec(oversubscription="2:1") was refused ("input should be a valid number")
    though the field is a down:up ratio and the command line and design files take 2:1."""
    assert ClusterSpec(oversubscription="2:1").oversubscription == 2.0
    assert ClusterSpec(oversubscription="4:3").oversubscription == pytest.approx(4 / 3)
    with pytest.raises(ClusterError) as info:
        ClusterSpec(oversubscription="1:2")
    assert str(info.value) == "oversubscription '1:2' must be >= 1 (down:up; did you mean 2:1?)"


def test_a_tiny_ratio_suggests_no_inverse_the_tool_refuses() -> None:
    """1e-320 is under 1: its inverse overflows to inf, and the hint had been 'did you mean
    inf:1?', a value refused as not finite (a hostile-input review); 0.5 still gets 2:1."""
    with pytest.raises(ClusterError) as info:
        ClusterSpec(oversubscription="1e-320")
    assert str(info.value) == "oversubscription '1e-320' must be >= 1"
    with pytest.raises(ClusterError) as info:
        ClusterSpec(oversubscription="0.5")
    assert str(info.value).endswith("(down:up; did you mean 2:1?)")


def test_numpys_booleans_are_booleans_and_no_numbers() -> None:
    """numpy's bool_ is taken as a switch (sharp=np.bool_(True) had been refused with 'sharp
    True must be true or false') and refused as a count (nodes=np.bool_(True) had meant 1)."""
    numpy = pytest.importorskip("numpy")
    assert ClusterSpec(sharp=numpy.bool_(True)).sharp is True
    with pytest.raises(ClusterError, match="nodes True is true/false, not a number"):
        ClusterSpec(nodes=numpy.bool_(True))


def test_a_domain_of_one_gpu_nodes_has_its_scale_up_link(tmp_path: Path) -> None:
    """A preset of one-GPU nodes in an 8-GPU NVLink domain (a GH200 NVL32-like entry) had
    reached the domain's tier without its link: an AssertionError (a review). Two such nodes
    share the domain: a 1 GiB all-reduce is bound by NVLink 4, and the ranks line names it."""
    path = tmp_path / "box.yaml"
    path.write_text(
        "schema: ibcalc-catalogue/1\nsystems:\n  - id: onebox\n    name: one-GPU node\n"
        "    gpu: H100 SXM5 80GB\n    gpu_arch: hopper\n    gpus_per_node: 1\n"
        "    scale_up_domain: 8\n    intra: nvlink4\n    nvswitch: true\n"
        "    nics_per_node: 1\n    inter: ndr\n    sources: [test]\n    confidence: low\n",
        encoding="utf-8",
    )
    cat = load_catalogue(path, use_env=False)
    cluster = resolve_cluster(cat, ClusterSpec(system="onebox", nodes=2))
    assert cluster.intra is not None
    assert cluster.intra.id == "nvlink4"
    assert cluster.topology.domains == 1
    est = estimate_on(cluster, "allreduce", 2**30)
    assert est.best.bottleneck.startswith("scale-up: nvlink4")
    from ibcalc.render.words import LINK_KEYS, links_words

    assert links_words(**{key: getattr(est, key) for key in LINK_KEYS}) == "nvlink4 inside"
    # a DGX H100 resized to one GPU a node keeps no NVLink domain: no scale-up link is named
    # (the first cut of this fix had read the preset's domain there: a review)
    resized = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", gpus_per_node=1, nodes=4))
    assert resized.intra is None


def _said_on_one_node(note: str, absent: str, **given: Any) -> None:
    """A 1 GB all-reduce on one DGX H100 with the cluster options ``given`` takes the time it
    takes without them, and says ``note``, where without them no note says ``absent``."""
    one = ClusterSpec(system="dgx-h100", nodes=1)
    plain = estimate_on(resolve_cluster(CAT, one), Collective.ALL_REDUCE, 1e9)
    said = estimate_on(resolve_cluster(CAT, one.replace(**given)), Collective.ALL_REDUCE, 1e9)
    assert said.time_s == plain.time_s
    assert note in said.assumptions
    assert not any(absent in n for n in plain.assumptions)


def test_every_leaf_option_given_on_one_node_is_named_as_ignored() -> None:
    """On one DGX H100 no traffic meets a leaf: --cross-leaf was named as ignored, while its
    siblings --cross-leaf-neighbour and --cross-leaf-unaligned and --leaf-group-nodes went
    without a word (ibcalc infer --nodes 1 --tp 8 --leaf-group-nodes 4). The estimate is the
    same with or without them."""
    _said_on_one_node(
        "{neighbour_cross_leaf_fraction}, {unaligned_cross_leaf_fraction}, {leaf_group_nodes} "
        "ignored: one scale-up domain, no network",
        "ignored",
        neighbour_cross_leaf_fraction=0.5,
        unaligned_cross_leaf_fraction=0.3,
        leaf_group_nodes=4,
    )


def test_host_options_given_on_one_node_say_they_change_no_collective() -> None:
    """On one DGX H100 the host's CPU (NCCL's AMD net overhead and LL cap), its NIC count and
    their PCIe slot act only on network costs: the estimate is the same with or without them,
    and says so (a review: they had gone without a word where --sharp got one)."""
    _said_on_one_node(
        "{host_cpu}, {nics_per_node}, {host_pcie} change no collective: one scale-up domain, no "
        "network between GPUs",
        "change no collective",
        host_cpu="amd",
        nics_per_node=2,
        host_pcie="pcie3",
    )
    one = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=1, host_cpu="amd"))
    assert "{host_cpu} changes no collective: one scale-up domain, no network between GPUs" in (
        one.assumptions
    )
    # on two nodes they act, and no such note is made
    spec = ClusterSpec(
        system="dgx-h100", nodes=2, host_cpu="amd", nics_per_node=2, host_pcie="pcie3"
    )
    two = resolve_cluster(CAT, spec)
    assert not any("change no collective" in n for n in two.assumptions)


@pytest.mark.parametrize(("system", "arch"), [("mi300x-8", "cdna3"), ("mi355x-8", "cdna4")])
def test_a_generation_nccls_ll_table_does_not_list_gets_hoppers_row(system: str, arch: str) -> None:
    """NCCL's rule (docs/model.md, tuner constants): a GPU generation its LL cap table does not
    list takes Hopper's row; RCCL reads CDNA's compute capability as 9.x, Hopper's range. AMD's
    GPUs had been given Ampere's 87.7 GB/s on one node (a review): a 256 KiB all-reduce on 8
    MI300X moved its 448 KiB per rank at 87.7 x 8/24 = 29.2 GB/s, 15.7 us, not 9.8 us."""
    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.engine.base import ll_cap_Bps, ll_cap_words

    cluster = resolve_cluster(CAT, ClusterSpec(system=system, nodes=1))
    topo = cluster.topology
    params = builtin_cost_params()
    assert topo.arch == arch
    assert ll_cap_Bps(topo, params) == pytest.approx(141 * GB)  # NCCL's Hopper row, one node
    assert ll_cap_words(topo, params).startswith(f"hopper's row, which NCCL gives {arch}, a gen")
    est = estimate_on(cluster, Collective.ALL_REDUCE, 256 * 2**10, algorithm="ring", protocol="LL")
    # 2(n-1)/n x S per rank at the cap's share of 8 of the 24 channels (one per 32 KiB)
    assert est.best.transfer_s == pytest.approx(2 * 7 / 8 * 256 * 2**10 / (141 * GB * 8 / 24))
    # on several nodes too the row is said to be Hopper's by NCCL's rule: "hopper on 3 or more
    # nodes" had called the AMD GPU a Hopper (20.4 GB/s on 3 or more, 39.0 on 2; Intel hosts)
    for nodes, where, cap in ((2, "2 nodes", 39.0), (8, "3 or more nodes", 20.4)):
        several = resolve_cluster(CAT, ClusterSpec(system=system, nodes=nodes)).topology
        assert ll_cap_Bps(several, params) == pytest.approx(cap * GB)
        assert ll_cap_words(several, params) == (
            f"hopper's row, which NCCL gives {arch}, a generation its table does not list, on "
            f"{where}; nccl_tuner.ll_max_busbw"
        )


def test_a_generation_nccls_ll_table_lists_is_named_by_its_row() -> None:
    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.engine.base import ll_cap_words

    topo = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=4)).topology
    words = ll_cap_words(topo, builtin_cost_params())
    assert words == "hopper on 3 or more nodes; nccl_tuner.ll_max_busbw"


def test_a_partial_meshs_send_recv_runs_at_one_link() -> None:
    """DGX-1's hybrid cube mesh joins each V100's 6 NVLinks to 4 peers, 1 or 2 links each, and
    not to the other 3 (nvlink2's notes). A ring shift on 8 V100s had been priced at all 6:
    107 GB/s of busbw where the best pair's 2 links carry 50 (a review). One link: 25 GB/s x
    NCCL's 20/25 x the point-to-point efficiency; the note says so, on send/recv alone."""
    from ibcalc.catalogue.cost_params import builtin_cost_params

    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-1v", nodes=1))
    up = cluster.topology.up
    assert up is not None
    assert up.peer_share == pytest.approx(1 / 6)
    p2p_eff = builtin_cost_params().calibrated.p2p_efficiency
    est = estimate_on(cluster, Collective.SEND_RECV, 2**30)
    assert est.best.transfer_s == pytest.approx(2**30 / (25 * GB * 0.8 * p2p_eff))
    note = "nvlink2 is a partial mesh: a GPU pair shares some of each GPU's 6 links, or none"
    (said,) = [" ".join(n.split()) for n in est.assumptions if n.startswith(note)]
    # a pair with no link is relayed a link a hop, priced at one link too (it had said 'or the
    # host, slower still' under 'the slowest pair sets the time', review BD)
    assert "which NCCL relays through a GPU linked to both (P2P/indirect), a link a hop" in said
    assert "slower still" not in said
    ring = estimate_on(cluster, Collective.ALL_REDUCE, 2**30)
    assert not any("partial mesh" in n for n in ring.assumptions)
    # NCCL's rings still use every link: 6 x 25 GB/s x 0.8 = 120 GB/s a direction
    assert up.bw_Bps == pytest.approx(120 * GB)
    # an all-to-all says it is priced as if every pair were linked (the fast end)
    a2a = estimate_on(cluster, Collective.ALL_TO_ALL, 2**30)
    assert any(n.startswith("nvlink2 is a partial mesh: an all-to-all") for n in a2a.assumptions)
    # fewer GPUs: the rate is already the g - 1 links in use, and a pair still gets one link
    # (a review of this change: 2 GPUs had got 1/6 of their one link, 2.97 GB/s)
    for gpus, links in (
        (2, "nvlink2"),
        (4, "nvlink2"),
        (6, "nvlink2"),
        (2, "nvlink1"),
        (8, "nvlink1"),
    ):
        few = resolve_cluster(CAT, ClusterSpec(intra=links, gpus_per_node=gpus, nodes=1))
        link = find_link(CAT, links)
        pair = estimate_on(few, Collective.SEND_RECV, 2**30)
        one_link = link.achievable_Bps / link.links * p2p_eff if link.links else 0.0
        assert pair.best.transfer_s == pytest.approx(2**30 / one_link), (gpus, links)
        # up to 4 GPUs (one quad) every pair is linked: no pair without a link is named
        # (review BH: the note had cited '3 -> 4 and 7 -> 0 of a ring shift on 8'; review BI: on 5
        # or 6 GPUs there is no 7, so only 3 -> 4 is named)
        (said,) = [n for n in pair.assumptions if "partial mesh" in n]
        assert ("or none" in said) == ("ring shift" in said) == (gpus > 4), (gpus, links)
        # no GPU 7 on 6: the pair named is one every ring of 5 or more has (review BJ, BK)
        assert ("3 -> 4 of nccl-tests' ring shift, for one" in said) == (gpus > 4)


def test_a_pcie_link_that_names_no_gpu_says_which_clock_its_hops_take() -> None:
    """Two A100 PCIe cards given as --intra pcie4: the hops are GPU work, priced at a Hopper
    GPU's clock unless a preset names the GPU (8.6 us at 8 B against 9.41 us on the
    a100-pcie-pair preset), and nothing had said so (a review); an all-to-all's per-message cost
    is scaled by the clock too (2.4 us at Hopper's), which the note had left out. The note is on
    the link-built node only: the preset names its GPU, and an NVLink generation implies one."""
    catalogue = CAT
    flags = resolve_cluster(catalogue, ClusterSpec(nodes=1, gpus_per_node=2, intra="pcie4"))
    assert flags.topology.gpu_arch == "hopper"
    (note,) = [n for n in flags.assumptions if "names no GPU" in n]
    assert note == (
        "pcie4 names no GPU: its hops and all-to-all messages are priced at a Hopper GPU's "
        "clock (a {system} preset names the GPU; docs/model.md#gpu-clock)"
    )
    preset = resolve_cluster(catalogue, ClusterSpec(system="a100-pcie-pair", nodes=1))
    assert preset.topology.gpu_arch == "ampere"
    assert not any("names no GPU" in n for n in preset.assumptions)
    nvlink = resolve_cluster(catalogue, ClusterSpec(nodes=1, gpus_per_node=8, intra="nvlink3"))
    assert not any("names no GPU" in n for n in nvlink.assumptions)


def test_every_nvlink_generation_implies_its_gpus_clock() -> None:
    """--intra nvlink3-a800 (A800: Ampere) had been priced at Hopper's clock, unlike the
    hgx-a800 preset on the same link; the 4-GPU NVLink 4 board is Hopper's either way. The
    A800's hop is 1980 / 1410 = 1.404 times Hopper's (data/cost_params.yaml gpu.clock_mhz)."""
    catalogue = CAT
    a800 = resolve_cluster(catalogue, ClusterSpec(nodes=1, gpus_per_node=8, intra="nvlink3-a800"))
    assert a800.topology.gpu_arch == "ampere"
    preset = resolve_cluster(catalogue, ClusterSpec(system="hgx-a800", nodes=1))
    by_flags = estimate_on(a800, Collective.ALL_REDUCE, 8)
    by_preset = estimate_on(preset, Collective.ALL_REDUCE, 8)
    assert by_flags.time_s == by_preset.time_s
    mesh = resolve_cluster(catalogue, ClusterSpec(nodes=1, gpus_per_node=4, intra="nvlink4-mesh4"))
    assert mesh.topology.gpu_arch == "hopper"


@pytest.mark.parametrize(
    ("link", "system", "arch", "clock_mhz"),
    [("xgmi-mi355x", "mi355x-8", "cdna4", 2400), ("xgmi-mi300x", "mi300x-8", "cdna3", 2100)],
)
def test_an_infinity_fabric_link_implies_its_gpus_clock(
    link: str, system: str, arch: str, clock_mhz: int
) -> None:
    """--intra xgmi-mi355x names its GPU as an NVLink generation does: an all-to-all's 7
    messages on 8 GPUs cost 2.4 us at Hopper's clock x 1980 / 2400 (1980 / 2100 on MI300X),
    as on the preset (data/cost_params.yaml gpu.clock_mhz). The flags had been priced at
    Hopper's clock: 24.0 us for 1 KiB against the mi355x-8 preset's 21.1 us (a review)."""
    flags = resolve_cluster(CAT, ClusterSpec(nodes=1, gpus_per_node=8, intra=link))
    preset = resolve_cluster(CAT, ClusterSpec(system=system, nodes=1))
    assert flags.topology.gpu_arch == preset.topology.gpu_arch == arch
    by_flags = estimate_on(flags, Collective.ALL_TO_ALL, 1024)
    by_preset = estimate_on(preset, Collective.ALL_TO_ALL, 1024)
    assert by_flags.time_s == by_preset.time_s
    (messages,) = [t for t in by_flags.best.terms if t.name == "messages"]
    assert messages.seconds == pytest.approx(7 * 2.4e-6 * 1980 / clock_mhz, rel=1e-12)


def test_an_mi250x_all_to_all_takes_its_clock() -> None:
    """MI250X (CDNA 2) has no preset; --intra xgmi-mi250x names it, and AMD's data sheet gives
    its peak engine clock, 1700 MHz: 7 messages on 8 GCDs cost 7 x 2.4 us x 1980 / 1700 (it
    had no clock, so Hopper's)."""
    cluster = resolve_cluster(CAT, ClusterSpec(nodes=1, gpus_per_node=8, intra="xgmi-mi250x"))
    assert cluster.topology.gpu_arch == "cdna2"
    est = estimate_on(cluster, Collective.ALL_TO_ALL, 1024)
    (messages,) = [t for t in est.best.terms if t.name == "messages"]
    assert messages.seconds == pytest.approx(7 * 2.4e-6 * 1980 / 1700, rel=1e-12)


def test_a_presets_amd_host_is_said_where_it_prices_the_network() -> None:
    """aws-p5's host is AMD, and NCCL charges 2 us per network ring step there (1 us
    elsewhere): at 1 MiB on 2 nodes that moves NCCL's pick, and the preset had gone 13 % apart
    from the same links given as flags without a word (a review). Said on the network only, and
    not when the caller gave the host."""
    two = resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2))
    assert (
        "host CPU amd (aws-p5's): NCCL charges 2 us per network ring step on AMD hosts, 1 us "
        "elsewhere ({host_cpu} to change)"
    ) in two.assumptions
    one = resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=1))
    given = resolve_cluster(CAT, ClusterSpec(system="aws-p5", nodes=2, host_cpu="amd"))
    for cluster in (one, given):
        assert not any(n.startswith("host CPU amd") for n in cluster.assumptions)
    flags = ClusterSpec(nodes=2, gpus_per_node=8, intra="nvlink4", inter="efa-v2", nics_per_node=32)
    plain = estimate_on(resolve_cluster(CAT, flags), Collective.ALL_REDUCE, 2**20)
    amd = estimate_on(
        resolve_cluster(CAT, flags.replace(host_cpu="amd")), Collective.ALL_REDUCE, 2**20
    )
    preset = estimate_on(two, Collective.ALL_REDUCE, 2**20)
    assert amd.time_s == preset.time_s != plain.time_s


def test_a_node_count_given_on_one_node_says_the_process_model() -> None:
    """nccl-tests' -g is GPUs per process and ibcalc's -g GPUs per node: rccl-tests' '-g 8'
    copied over priced 8 x MI355X at one process per GPU, 56 % fast at small sizes, and no line
    said which process model was used (a review). A collective estimate says it where the GPUs
    per node are given on one node and the GPUs per process are not; a log's check reads its
    header instead, and a workload runs a process per GPU, so neither is told."""
    spec = ClusterSpec(nodes=1, gpus_per_node=8, intra="xgmi-mi355x")
    cluster = resolve_cluster(CAT, spec)
    assert cluster.process_notes == (
        "one process per GPU (nccl-tests -g 1): {gpus_per_node} counts a node's GPUs; one "
        "process driving N of them (nccl-tests -g N) is {gpus_per_process} N",
    )
    assert not any("one process per GPU" in n for n in cluster.assumptions)
    est = estimate_on(cluster, Collective.ALL_REDUCE, 8)
    assert cluster.process_notes[0] in est.assumptions
    for other in (
        spec.replace(gpus_per_process=8),
        ClusterSpec(system="mi355x-8", nodes=1),
        spec.replace(nodes=2, inter="roce-400g", nics_per_node=8),
    ):
        assert resolve_cluster(CAT, other).process_notes == ()
    # '-g 8' alone, the most likely copy, leaves the node count to its default: said too
    defaulted = resolve_cluster(CAT, ClusterSpec(gpus_per_node=8))
    assert defaulted.nodes == 2
    assert defaulted.process_notes == cluster.process_notes


def test_a_spec_validated_from_data_is_refused_as_the_constructor_refuses_it() -> None:
    """ClusterSpec.model_validate, model_validate_json and model_validate_strings had raised
    pydantic's multi-line ValidationError (pydantic calls the constructor and wraps its
    ClusterError), where the constructor raises one ClusterError naming the field: a spec loaded
    from a JSON config met the former. All three raise the constructor's error; input that never
    reaches it (not a mapping, not JSON) is one line too; valid input gives the spec the
    constructor gives."""
    cases: list[tuple[dict[str, Any], str, str | None]] = [
        ({"nodes": "x"}, "nodes 'x' is text, not a number", "nodes"),
        ({"nodes": 0}, "nodes 0 is out of range (1..1000000)", "nodes"),
        (
            {"oversubscription": "abc"},
            "oversubscription 'abc' is not a ratio (write 2 or 2:1)",
            "oversubscription",
        ),
        (
            {"gpu_per_node": 4},
            "unknown cluster field 'gpu_per_node' (did you mean gpus_per_node?)",
            None,
        ),
    ]
    for data, message, field in cases:
        with pytest.raises(ClusterError) as built:
            ClusterSpec(**data)
        assert (str(built.value), built.value.field) == (message, field)
        with pytest.raises(ClusterError) as info:
            ClusterSpec.model_validate(data)
        assert (str(info.value), info.value.field) == (message, field)
        assert info.value.__suppress_context__
        with pytest.raises(ClusterError) as info:
            ClusterSpec.model_validate_json(json.dumps(data))
        assert (str(info.value), info.value.field) == (message, field)
        # and pydantic's third reader, of strings (it had kept the ValidationError)
        with pytest.raises(ClusterError) as info:
            ClusterSpec.model_validate_strings(data)
        assert (str(info.value), info.value.field) == (message, field)
    refused = [
        (
            lambda: ClusterSpec.model_validate("x"),
            "a cluster spec is a mapping of its fields, not str 'x'",
        ),
        (
            lambda: ClusterSpec.model_validate_json("[1]"),
            "a cluster spec is a mapping of its fields, not list [1]",
        ),
        (
            lambda: ClusterSpec.model_validate_strings("x"),
            "a cluster spec is a mapping of its fields, not str 'x'",
        ),
        (
            lambda: ClusterSpec.model_validate({1: 4}),
            "a cluster spec's fields are named in text; int 1 is not a field name",
        ),
        (
            lambda: ClusterSpec.model_validate_strings({"nodes": "4", None: "2"}),
            "a cluster spec's fields are named in text; NoneType None is not a field name",
        ),
        (
            lambda: ClusterSpec.model_validate_json("{"),
            "a cluster spec is not valid JSON (EOF while parsing an object at line 1 column 1)",
        ),
    ]
    for call, message in refused:
        with pytest.raises(ClusterError) as info:
            call()
        assert str(info.value) == message
    # valid input: the constructor's spec, with the fields it counts as given
    given = {"nodes": 4, "inter": "ndr", "oversubscription": "2:1", "sharp": True}
    spec = ClusterSpec(**given)
    for read in (
        ClusterSpec.model_validate(given),
        ClusterSpec.model_validate_json(json.dumps(given)),
    ):
        assert read == spec
        assert read.oversubscription == 2.0
        assert read.model_fields_set == spec.model_fields_set == set(given)
