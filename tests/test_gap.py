"""Scale-up vs scale-out gap: numbers worked by hand, the engine link, and the CLI contract.

Every expected bandwidth is worked in the test from a published fact (source
cited) or from the catalogue's own fields read with ``find_link`` (line rate x efficiency), never
copied from the program's output. Conventions: per direction, per GPU, GB/s = 10^9 B/s.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import tp_whatif_by_hand_s
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import app, main
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.engine.types import Collective
from ibcalc.errors import ClusterError, UnknownNameError
from ibcalc.facade import estimate
from ibcalc.gap import (
    GapResult,
    TpWhatIf,
    common_pairings,
    gap,
    gap_for_system,
    gap_report,
    load_pairings,
    nics_per_gpu_node,
    tp_whatif,
)
from ibcalc.units import format_ratio, format_time

GB = 10**9
BITS = 8
runner = CliRunner()
#: The common pairings table: data/pairings.yaml.
PAIRING_INTRA = load_pairings().intra
PAIRING_INTER = load_pairings().inter

#: NVLink 4 (NVIDIA Hopper page): 18 links x 25 GB/s per direction = 450 GB/s per GPU (900 bidir).
NVLINK4_PER_GPU = 18 * 25 * GB
#: NVLink 3 (NVIDIA NVLink page): 12 links x 25 GB/s = 300 GB/s per GPU.
NVLINK3_PER_GPU = 12 * 25 * GB
#: IBTA rates (Linux kernel IB speed table): NDR 400 Gb/s, HDR 200 Gb/s per 4x port; / 8 bits.
NDR_PORT = 400 * GB / BITS
HDR_PORT = 200 * GB / BITS
#: AWS EC2 instance network bandwidth page: p5 has 32 EFA v2 interfaces of 100 Gb/s for 8 GPUs.
EFA_V2_PORT = 100 * GB / BITS
#: MI300X (stas00/ml-engineering network/README.md): 7 xGMI links of 64 GB/s per peer per direction.
XGMI_PER_PEER = 64 * GB

#: JSON keys the gap command promises.
GAP_KEYS = {
    "intra",
    "inter",
    "intra_GBps",
    "inter_per_gpu_GBps",
    "ratio_line",
    "ratio_achievable",
    "intra_achievable_GBps",
    "inter_per_gpu_achievable_GBps",
    "allreduce_inside_s",
    "allreduce_across_s",
    "slowdown",
    "conventions",
    "assumptions",
}


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load_catalogue(use_env=False)


def _achievable(cat: Catalogue, name: str) -> float:
    link = find_link(cat, name)
    return link.per_direction_Bps * link.efficiency


def _priced_by_hand(
    result: GapResult | TpWhatIf, size_bytes: float, tp: int
) -> tuple[float, float]:
    """Assert ``result``'s inside, across and slowdown are tp_whatif_by_hand_s's (an nvlink4
    node against one-GPU NDR nodes); return its inside and across seconds."""
    inside, across = tp_whatif_by_hand_s(size_bytes, tp)
    assert result.inside.time_s == pytest.approx(inside, rel=1e-9)
    assert result.across.time_s == pytest.approx(across, rel=1e-9)
    assert result.slowdown == pytest.approx(across / inside, rel=1e-9)
    return inside, across


# ------------------------------------------------------------------------------ worked by hand


def test_nvlink4_vs_ndr_one_nic_per_gpu_is_9x(cat: Catalogue) -> None:
    result = gap(cat, "nvlink4", "ndr", gpus_per_node=8, nics_per_node=8)
    assert result.intra_line_Bps == pytest.approx(NVLINK4_PER_GPU)
    assert result.inter_line_Bps == pytest.approx(NDR_PORT)
    # 450 GB/s / 50 GB/s
    assert result.ratio_line == pytest.approx(9.0)
    assert pytest.approx(9.0) == NVLINK4_PER_GPU / NDR_PORT


def test_the_vendor_figure_is_the_whole_link_s_where_a_slice_uses_less(cat: Catalogue) -> None:
    """8 TPU v5e chips (a 4 x 2 torus) reach distinct neighbours over 3 of each chip's 4 ports:
    200 x 3/4 = 150 GB/s per direction in use. gap had printed that as the line rate and 300
    GB/s as "vendor 'bidirectional'", where the catalogue (and Google's 1,600 Gbps) says 400;
    MI300X with 4 GPUs uses 3 of 7 xGMI links, 448 x 3/7 = 192, and had read "vendor 384" for
    AMD's 896 (review DO). The vendor figure is now the whole link's, the note says how much of
    it is in use, and the torus note reaches gap's assumptions."""
    tpu = gap(cat, "tpu-v5e-ici", "roce-100g", gpus_per_node=8, nics_per_node=8)
    v5e = find_link(cat, "tpu-v5e-ici").per_direction_Bps
    assert v5e == pytest.approx(200 * GB)
    assert tpu.intra_line_Bps == pytest.approx(v5e * 3 / 4)
    assert tpu.intra_link_GBps == pytest.approx(200)
    assert tpu.intra_bidirectional_GBps == pytest.approx(400)
    assert tpu.ratio_line == pytest.approx(150 / 12.5)
    assert any(a.startswith("tpu-v5e-ici is a torus: a slice of 8 chips") for a in tpu.assumptions)
    mi = gap(cat, "xgmi-mi300x", "roce-400g", gpus_per_node=4, nics_per_node=4)
    assert mi.intra_line_Bps == pytest.approx(448 * GB * 3 / 7)
    assert (mi.intra_link_GBps, mi.intra_bidirectional_GBps) == pytest.approx((448, 896))
    nv = gap(cat, "nvlink4", "ndr", gpus_per_node=8, nics_per_node=8)
    assert nv.intra_link_line_Bps is None
    assert (nv.intra_link_GBps, nv.intra_bidirectional_GBps) == pytest.approx((450, 900))
    out = runner.invoke(
        app, ["gap", "--intra", "tpu-v5e-ici", "--inter", "roce-100g"], env={"COLUMNS": "200"}
    ).stdout
    assert (
        "150 GB/s     135 GB/s   the share in use of tpu-v5e-ici's 200 GB/s (see the "
        "assumptions); vendor 'bidirectional': 400 GB/s" in out
    )


def test_nvlink4_vs_hdr_is_18x_not_the_quoted_bidirectional_mix(cat: Catalogue) -> None:
    result = gap(cat, "nvlink4", "hdr", 8, 8)
    # 450 GB/s / 25 GB/s per direction. The publication's "900 vs about 50" compares both
    # directions of NVLink with both directions of HDR: the same 18x, by luck of doubling both.
    assert result.ratio_line == pytest.approx(18.0)
    assert result.intra_bidirectional_Bps == pytest.approx(900 * GB)
    assert result.inter_line_Bps == pytest.approx(25 * GB)


def test_aws_p5_four_efa_per_gpu_is_9x(cat: Catalogue) -> None:
    # 32 x 100 Gb/s for 8 GPUs = 4 x 12.5 GB/s = 50 GB/s per GPU; 450 / 50 = 9.
    per_gpu = 32 / 8 * EFA_V2_PORT
    assert per_gpu == pytest.approx(50 * GB)
    by_hand = gap(cat, "nvlink4", "efa-v2", 8, 32, "pcie5")
    preset = gap_for_system(cat, "aws-p5")
    for result in (by_hand, preset):
        assert result.inter_line_Bps == pytest.approx(per_gpu)
        assert result.ratio_line == pytest.approx(NVLINK4_PER_GPU / per_gpu)
        assert result.ratio_line == pytest.approx(9.0)
        assert result.across_nics_per_node == 4
    assert preset.system == "aws-p5"
    assert preset.nics_per_node == 32


def test_achievable_ratio_uses_catalogue_efficiencies(cat: Catalogue) -> None:
    for inter in ("ndr", "hdr", "roce-400g"):
        result = gap(cat, "nvlink4", inter, 8, 8)
        expected = _achievable(cat, "nvlink4") / _achievable(cat, inter)
        assert result.ratio_achievable == pytest.approx(expected)
        assert result.intra_achievable_Bps == pytest.approx(_achievable(cat, "nvlink4"))
        assert result.capped_by is None


def test_pcie_capped_nic(cat: Catalogue) -> None:
    # An NDR card (50 GB/s line) in a PCIe Gen4 x16 slot (31.5 GB/s line) on an A100 node.
    pcie4_cap = _achievable(cat, "pcie4")
    assert pcie4_cap < _achievable(cat, "ndr"), "the case needs a binding PCIe cap"
    result = gap(cat, "nvlink3", "ndr", 8, 8, host_pcie="pcie4")
    assert result.capped_by == "pcie4"
    # Line rates are the links' own: 300 / 50 = 6.
    assert result.ratio_line == pytest.approx(NVLINK3_PER_GPU / NDR_PORT)
    assert result.ratio_line == pytest.approx(6.0)
    # Achievable: the NIC gets no more than its PCIe link carries.
    assert result.inter_achievable_Bps == pytest.approx(pcie4_cap)
    assert result.ratio_achievable == pytest.approx(_achievable(cat, "nvlink3") / pcie4_cap)
    # the note gives each figure its unit ('(50 GB/s line, 47.0 achievable)' had lost one)
    ndr_line, ndr_ach = 50, _achievable(cat, "ndr") / 1e9
    assert (
        f"each ndr NIC ({ndr_line} GB/s line, {ndr_ach:.1f} GB/s achievable) is capped by its "
        f"pcie4 host link at {pcie4_cap / 1e9:.1f} GB/s achievable" in result.assumptions
    )
    # A Gen5 slot does not bind an NDR card.
    assert gap(cat, "nvlink3", "ndr", 8, 8, host_pcie="pcie5").capped_by is None


def test_more_nics_than_one_gpu_s_pcie_link_feeds_are_capped_per_gpu(cat: Catalogue) -> None:
    """16 NDR NICs on a DGX H100 (2 per GPU, 2 x 48.8 GB/s achievable) meet one Gen5 x16 link
    per GPU: the GPU's scale-out rate is that link's achievable rate, as the engine prices the
    all-reduce across nodes (the gap's table had said 94 GB/s against the engine's 50)."""
    pcie5 = _achievable(cat, "pcie5")
    assert 2 * _achievable(cat, "ndr") > pcie5 > _achievable(cat, "ndr"), "needs the GPU cap"
    result = gap(cat, "nvlink4", "ndr", 8, 16, host_pcie="pcie5")
    assert result.capped_by == "pcie5"
    assert result.inter_achievable_Bps == pytest.approx(pcie5)
    assert result.nic_achievable_Bps == pytest.approx(pcie5 / 2)
    assert result.ratio_achievable == pytest.approx(_achievable(cat, "nvlink4") / pcie5)
    # the line rates stay the links' own: 2 x 50 GB/s per GPU
    assert result.inter_line_Bps == pytest.approx(2 * NDR_PORT)
    # 8 NICs (one each) fit their GPU's link: no cap
    assert gap(cat, "nvlink4", "ndr", 8, 8, host_pcie="pcie5").capped_by is None


def test_fractional_nics_per_gpu_and_one_gpu_nodes(cat: Catalogue) -> None:
    # One 10 Gb/s WAN link for an 8-GPU node: 1.25 GB/s / 8 per GPU.
    result = gap(cat, "nvlink4", "wan-10g", 8, 1)
    assert result.inter_line_Bps == pytest.approx(10 * GB / BITS / 8)
    assert result.nics_per_gpu == pytest.approx(1 / 8)
    # A node holding one GPU still gets a whole link (a share cannot be installed).
    assert result.across_nics_per_node == 1
    assert any("rounded up" in note for note in result.assumptions)
    assert nics_per_gpu_node(32, 8) == 4
    assert nics_per_gpu_node(4, 8) == 1
    assert nics_per_gpu_node(12, 8) == 2


def test_switchless_mesh_counts_only_links_in_use(cat: Catalogue) -> None:
    # 4 MI300X in a full mesh: each GPU reaches 3 peers over 3 of its 7 links.
    result = gap(cat, "xgmi-mi300x", "roce-400g", 4, 4)
    assert result.intra_line_Bps == pytest.approx(3 * XGMI_PER_PEER)
    eight = gap(cat, "xgmi-mi300x", "roce-400g", 8, 8)
    assert eight.intra_line_Bps == pytest.approx(7 * XGMI_PER_PEER)


# ------------------------------------------------------------------------- the consequence


def test_allreduce_inside_vs_across_comes_from_the_engine(cat: Catalogue) -> None:
    result = gap(cat, "nvlink4", "ndr", 8, 8)
    inside = estimate(
        cat,
        ClusterSpec(nodes=1, gpus_per_node=8, intra="nvlink4"),
        Collective.ALL_REDUCE,
        1e9,
    )
    across = estimate(
        cat,
        ClusterSpec(nodes=8, gpus_per_node=1, nics_per_node=1, inter="ndr"),
        Collective.ALL_REDUCE,
        1e9,
    )
    assert result.allreduce_size_bytes == 1e9
    assert (result.inside.nodes, result.inside.gpus_per_node) == (1, 8)
    assert (result.across.nodes, result.across.gpus_per_node) == (8, 1)
    assert result.inside.time_s == pytest.approx(inside.time_s)
    assert result.across.time_s == pytest.approx(across.time_s)
    # Worked by hand (docs/model.md#nvls, docs/model.md#ring; tp_whatif_by_hand_s): inside, NVLS
    # moves S (m+1)/m per GPU at the NVLS bandwidth (line rate x nvls_efficiency) after a 25 us
    # hop: 25 us + 1e9 x 9/8 / (450 GB/s x 0.686) = 3.669 ms; across, a ring moves 2 (n-1)/n x S
    # through each NIC, 2 x 7/8 x 1e9 / (50 GB/s x 0.975) = 35.897 ms, + 287.36 us of latency
    inside_s, across_s = _priced_by_hand(result, 1e9, 8)
    assert (inside_s * 1e3, across_s * 1e3) == (
        pytest.approx(3.6693, rel=1e-4),
        pytest.approx(36.1847, rel=1e-4),
    )
    # Across nodes the ring cannot beat the NIC: t >= 2(n-1)/n x S / B_nic,achievable.
    floor = 2 * 7 / 8 * 1e9 / _achievable(cat, "ndr")
    assert result.across.time_s >= floor * (1 - 1e-9)
    assert result.slowdown > 1


def test_a_wan_says_the_latency_that_bounds_its_rate(cat: Catalogue) -> None:
    """`gap --intra nvlink4 --inter wan-100g` printed the across all-reduce at "4.19 GB/s usable"
    of the link's 11.3 GB/s achievable without the 1 ms one way per WAN hop that sets it (NCCL's
    buffers in flight per round trip), nor that wan-100g is a low-confidence entry: the
    estimate it runs says both, as `allreduce --sites` does."""
    result = gap(cat, "nvlink4", "wan-100g", 8, 1)
    assert "(4.19 GB/s usable)" in result.across.best.bottleneck
    assert "8 sites of 1 node, 1 x wan-100g per site (1 ms one way per WAN hop)" in (
        result.assumptions
    )
    assert any(
        n.startswith("low-confidence catalogue entries: wan-100g") for n in result.assumptions
    )
    assert len(set(result.assumptions)) == len(result.assumptions)
    # a scale-out link has no WAN hop to state
    assert not any("WAN hop" in n for n in gap(cat, "nvlink4", "ndr", 8, 8).assumptions)


def test_a_wan_is_compared_across_sites(cat: Catalogue) -> None:
    """A WAN joins sites, not nodes: across is 8 one-GPU sites, priced by the WAN model, which
    bounds the rate by NCCL's buffers in flight per round trip (docs/model.md#wan-sites)."""
    result = gap(cat, "nvlink4", "wan-10g", 8, 1)
    assert (result.across.sites, result.across.wan) == (8, "wan-10g")
    # 2 channels x 4 MiB in flight per 2 ms round trip = 4.19 GB/s; the link gives 1.25 GB/s x
    # its efficiency, which binds: a ring moves 2 x 7/8 x 1 GB through it, 1.56 s
    wan_Bps = _achievable(cat, "wan-10g")
    assert wan_Bps < 2 * 4 * 2**20 / 2e-3
    floor = 2 * 7 / 8 * 1e9 / wan_Bps
    assert floor == pytest.approx(1.556, abs=0.001)
    # the latency, worked by hand (data/cost_params.yaml, data/links.yaml wan-10g): the ring/Simple
    # base 8.4 us, 14 WAN steps of NCCL's NET Simple hop 14 us (Tree row: one GPU a site) + the
    # link's one-way 1 ms, the ring plateau's x 1.4 on all but the WAN's one-way latencies
    # (0.4 x (8.4 + 14 x 14) = 81.76 us) and 2 channels x 0.6 us of proxy start-up: 14287.36 us
    latency = (8.4 + 14 * (14.0 + 1000.0) + 0.4 * (8.4 + 14 * 14.0) + 2 * 0.6) * 1e-6
    assert latency * 1e6 == pytest.approx(14287.36, rel=1e-9)
    assert result.across.time_s == pytest.approx(floor + latency, rel=1e-9)
    # 12 WAN links for 8 GPUs: each one-GPU site keeps 2, and the JSON and text say 2, not the
    # unused scale-out tier's 1
    two = gap(cat, "nvlink4", "wan-10g", 8, 12)
    across = two.model_dump(mode="json")["allreduce_across"]
    assert across["nics_per_node"] == 2
    # two links a site halve the transfer, not the latency
    assert two.across.time_s == pytest.approx(floor / 2 + latency, rel=1e-9)
    out = CliRunner().invoke(
        app, ["gap", "--intra", "nvlink4", "--inter", "wan-10g", "--nics-per-node", "12"]
    )
    text = " ".join(out.output.split())
    assert "across (WAN): 8 sites x 1 GPU, 2 x wan-10g each" in text
    assert "slowdown across sites:" in text
    assert "scale-out" not in text
    assert "across nodes" not in text
    # with no count given, one WAN link per node (site), as in the common pairings table: per
    # GPU 10 Gb/s / 8 = 0.156 GB/s line, so the ratio to NVLink 4's 450 GB/s is 2,880x there too
    out = CliRunner().invoke(app, ["gap", "--intra", "nvlink4", "--inter", "wan-10g"])
    text = " ".join(out.output.split())
    assert "8 GPUs and 1 x wan-10g per site" in text
    assert "ratio (scale-up / WAN) 2,880x" in text
    # a preset's scale-out ports are not WAN links: --system dgx-h100 had kept its 8 NDR ports
    # as 8 wan-10g links a site (1.25 GB/s per GPU, 360x) though the across all-reduce used one
    out = CliRunner().invoke(app, ["gap", "--system", "dgx-h100", "--inter", "wan-10g"])
    text = " ".join(out.output.split())
    assert out.exit_code == 0, out.output
    assert "8 GPUs and 1 x wan-10g per site (dgx-h100)" in text
    assert "ratio (scale-up / WAN) 2,880x" in text
    assert "ndr ports" not in text
    out = CliRunner().invoke(
        app, ["gap", "--intra", "nvlink4", "--inter", "wan-10g", "--tp", "4", "--tp-size", "64MB"]
    )
    text = " ".join(out.output.split())
    assert "TP=4 across: 4 sites x 1 GPU, 1 x wan-10g each" in text
    assert " across 4 sites, " in text


def test_a_link_named_alone_gets_the_common_pairings_nic_count() -> None:
    """`gap --intra nvlink4 --inter efa-v2` compared 8 EFA NICs (one per GPU) while the pairings
    table, and AWS p5, give 32: per GPU 4 x 100 Gb/s = 50 GB/s line, 450 / 50 = 9.00x."""
    out = CliRunner().invoke(app, ["gap", "--intra", "nvlink4", "--inter", "efa-v2"])
    assert out.exit_code == 0
    text = " ".join(out.output.split())
    assert "8 GPUs and 32 x efa-v2 per node" in text
    assert "ratio (scale-up / scale-out) 9.00x" in text
    # the estimate commands' rule and words (cluster.resolve.instance_of): AWS p5's count
    assert (
        "32 x efa-v2 per node assumed: 4 per GPU, as on aws-p5, the instance efa-v2 comes with "
        "(--nics-per-node)" in text
    )
    # 4 GPUs keep 4 NICs each: 16, not one per GPU
    text = " ".join(
        CliRunner()
        .invoke(app, ["gap", "--intra", "nvlink4", "--inter", "efa-v2", "-g", "4"])
        .output.split()
    )
    assert "4 GPUs and 16 x efa-v2 per node" in text
    # a link the pairings give one NIC per GPU keeps the one-per-GPU wording
    text = " ".join(
        CliRunner().invoke(app, ["gap", "--intra", "nvlink4", "--inter", "ndr"]).output.split()
    )
    assert "8 NICs per node (one per GPU) assumed" in text


def test_a_domain_no_preset_builds_is_said_assumed(cat: Catalogue) -> None:
    """`gap --system dgx-h100 -g 16` priced a 16-GPU NVLink 4 domain, and `--intra
    nvlink4-bridge` 8 GPUs on a bridge that joins two, at the link's rate without a word, where
    the estimate commands say the domain is assumed. The rate stays the link's: 450 GB/s and
    300 GB/s per direction per GPU."""
    sixteen = gap(cat, "nvlink4", "ndr", 16, 16, system="dgx-h100")
    assert sixteen.intra_line_Bps == pytest.approx(NVLINK4_PER_GPU)
    assert (
        "16 GPUs per node is more than dgx-h100's 8: a 16-GPU nvlink4 domain is assumed"
        in sixteen.assumptions
    )
    bridge = gap(cat, "nvlink4-bridge", "ndr", 8, 8)
    assert bridge.intra_line_Bps == pytest.approx(300 * GB)
    assert any(
        n.startswith("an 8-GPU nvlink4-bridge domain is assumed: no preset joins more than 2 GPUs")
        for n in bridge.assumptions
    )
    # a node the presets build says nothing of the kind
    eight = gap(cat, "nvlink4", "ndr", 8, 8, system="dgx-h100")
    assert not [n for n in eight.assumptions if "domain is assumed" in n]


def test_a_preset_domain_dropped_for_a_resized_node_is_said_dropped() -> None:
    """`gap --system gb200-nvl72 -g 8` compared one 8-GPU node, not the 72-GPU rack the preset
    builds (its 4-GPU trays), without a word, where the estimates say the domain is not assumed:
    1 node x 8 GPUs inside, 8 nodes x 1 GPU across."""
    out = CliRunner().invoke(app, ["gap", "--system", "gb200-nvl72", "-g", "8", "--format", "json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["allreduce_inside"]["nodes"] == 1
    assert result["allreduce_inside"]["gpus_per_node"] == 8
    assert (
        "--gpus-per-node 8 is not gb200-nvl72's 4: its 72-GPU NVLink domain is not assumed (one "
        "node per domain)" in result["assumptions"]
    )


def test_tp_whatif_refuses_nodes_of_no_gpus(cat: Catalogue) -> None:
    """gpus_per_node 0 had ended in ZeroDivisionError (tp % 0); it is out of range, as tp 0 is."""
    with pytest.raises(ClusterError, match=r"gpus_per_node 0 is out of range \(1..1024\)"):
        tp_whatif(cat, "nvlink4", "ndr", 8, 1e9, gpus_per_node=0)


def test_tp_whatif_places_the_same_bytes(cat: Catalogue) -> None:
    whatif = tp_whatif(cat, "nvlink4", "ndr", 4, 64e6, nics_per_node=1)
    assert (whatif.inside.nodes, whatif.inside.gpus_per_node) == (1, 4)
    assert (whatif.across.nodes, whatif.across.gpus_per_node) == (4, 1)
    assert whatif.inside.size_bytes == whatif.across.size_bytes == whatif.size_bytes
    # By hand (tp_whatif_by_hand_s): NVLS on 4 GPUs, 25 us + 64e6 x 5/4 / (450 GB/s x 0.686)
    # = 284.15 us; a ring over 4 one-GPU nodes, (8.4 + 6 x 14) x 1.4 + 1.2 = 130.56 us +
    # 2 x 3/4 x 64e6 / (50 GB/s x 0.975) = 2099.79 us: 7.39x (bandwidth terms alone said 7.6x)
    inside, across = _priced_by_hand(whatif, 64e6, 4)
    assert (inside * 1e6, across * 1e6) == (
        pytest.approx(284.1513, rel=1e-6),
        pytest.approx(2099.7908, rel=1e-6),
    )
    # More NICs per one-GPU node can only help.
    more = tp_whatif(cat, "nvlink4", "ndr", 4, 64e6, nics_per_node=2)
    assert more.across.time_s <= whatif.across.time_s


def test_tp_json_gives_the_dtype_it_is_priced_in() -> None:
    """The TP all-reduce is priced in bf16 (Megatron's activations): its JSON says so beside its
    size, as an estimate's does ('size_bytes', 'dtype'); only the assumptions had said it."""
    args = ["gap", "--system", "dgx-h100", "--tp", "8", "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    tp = json.loads(result.stdout)["tp"]
    assert (tp["size_bytes"], tp["dtype"]) == (64_000_000, "bf16")
    assert list(tp)[4:6] == ["size_bytes", "dtype"]
    assert "the same all-reduce of 64 MB (bf16) over 8 GPUs" in tp["assumptions"][1]


def test_gap_json_gives_the_dtype_of_its_allreduce() -> None:
    """The pairing's 1 GB all-reduce is priced in fp32 (gap's default), the TP what-if's in bf16:
    the JSON gave 'allreduce_size_bytes' without its dtype, where the TP object has 'dtype'
    beside 'size_bytes'. 'allreduce_dtype' now follows the size, in one pairing and the table."""
    one = runner.invoke(app, ["gap", "--system", "dgx-h100", "--tp", "8", "--format", "json"])
    table = runner.invoke(app, ["gap", "--format", "json"])
    assert one.exit_code == table.exit_code == 0, one.stderr + table.stderr
    data = json.loads(one.stdout)
    assert (data["allreduce_size_bytes"], data["allreduce_dtype"]) == (10**9, "fp32")
    keys = list(data)
    assert keys[keys.index("allreduce_size_bytes") + 1] == "allreduce_dtype"
    assert data["tp"]["dtype"] == "bf16"
    assert {row["allreduce_dtype"] for row in json.loads(table.stdout)} == {"fp32"}


def test_gap_text_names_the_dtype_where_it_gives_a_size_alone() -> None:
    """The slowdown line, the TP line and the pairings table's title (over its '1 GB inside'
    headers) name the all-reduce's dtype: with --tp the 1 GB fp32 slowdown line sat over the
    TP line's 64 MB in bf16, neither saying which."""
    one = runner.invoke(app, ["gap", "--system", "dgx-h100", "--tp", "8"], env={"COLUMNS": "200"})
    table = runner.invoke(app, ["gap"], env={"COLUMNS": "200"})
    assert one.exit_code == table.exit_code == 0, one.stderr + table.stderr
    lines = one.stdout.splitlines()
    assert "slowdown across nodes: 9.86x (1 GB all-reduce in fp32)" in lines
    assert any(x.startswith("TP=8 all-reduce of 64 MB in bf16: 258 us on the") for x in lines)
    assert table.stdout.startswith(
        "scale-up vs scale-out bandwidth per GPU, per direction (1 GB all-reduce in fp32: "
    )


def test_the_pairings_title_keeps_its_size_with_its_unit_on_a_narrow_page() -> None:
    """At 60 columns rich broke the pairings table's title between '(1' and 'GB all-reduce';
    it breaks as every table title with a figure does (render.stream.UnitTitle)."""
    out = runner.invoke(app, ["gap"], env={"COLUMNS": "60"})
    assert out.exit_code == 0, out.stderr
    assert out.stdout.splitlines()[:3] == [
        "scale-up vs scale-out bandwidth per GPU, per direction",
        "(1 GB all-reduce in fp32: 1 node x 8 GPUs inside vs 8 nodes",
        "x 1 GPU across)",
    ]


def test_a_tp_size_of_no_whole_elements_is_said_rounded(cat: Catalogue) -> None:
    """--tp-size 1001 in bf16 is 500.5 elements: nccl-tests runs 500, 1000 B, and the what-if
    says so as 'allreduce --size 1001' does (it had become 1000 B unsaid); a whole size says
    nothing."""
    whatif = tp_whatif(cat, "nvlink4", "ndr", 8, 1001)
    assert whatif.size_bytes == whatif.across.size_bytes == 1000
    rounded = "size rounded to 1000 B as nccl-tests does: to whole bf16 elements (2 B)"
    assert rounded in whatif.assumptions
    assert not any("rounded" in n for n in tp_whatif(cat, "nvlink4", "ndr", 8, 1000).assumptions)
    args = ["gap", "--system", "dgx-h100", "--tp", "8", "--tp-size", "1001"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert rounded in result.stdout


def test_tp_json_gives_the_size_asked_for_beside_the_size_run() -> None:
    """An estimate's JSON always gives 'requested_size_bytes' beside 'size_bytes' (allreduce
    --size 1001: 1001 and 1000); the TP what-if's gave the 1000 B it runs alone. 1001 B of bf16
    is 500 whole elements, 1000 B; a whole 64 MB is asked for and run alike."""
    args = ["gap", "--system", "dgx-h100", "--tp", "8", "--format", "json"]
    odd = runner.invoke(app, [*args, "--tp-size", "1001"])
    whole = runner.invoke(app, args)
    assert odd.exit_code == whole.exit_code == 0, odd.stderr + whole.stderr
    tp = json.loads(odd.stdout)["tp"]
    assert (tp["size_bytes"], tp["requested_size_bytes"]) == (1000, 1001)
    assert type(tp["requested_size_bytes"]) is int
    assert list(tp)[4:7] == ["size_bytes", "dtype", "requested_size_bytes"]
    assert json.loads(whole.stdout)["tp"]["requested_size_bytes"] == 64_000_000


def test_a_domain_larger_than_a_node_is_compared_whole(cat: Catalogue) -> None:
    # GB200 NVL72: 18 trays of 4 GPUs share one NVLink 5 domain of 72 GPUs (the preset's
    # scale_up_domain). Inside is that whole domain, not one tray; across, 72 one-GPU nodes.
    result = gap_for_system(cat, "gb200-nvl72")
    assert (result.inside.nodes, result.inside.gpus_per_node) == (18, 4)
    assert (result.across.nodes, result.across.gpus_per_node) == (72, 1)
    engine = estimate(
        cat,
        ClusterSpec(nodes=18, gpus_per_node=4, system="gb200-nvl72"),
        Collective.ALL_REDUCE,
        1e9,
    )
    assert result.inside.time_s == pytest.approx(engine.time_s)
    # By hand: NVLS moves S (m+1)/m per GPU at 900 GB/s x nvls_efficiency 0.604 (data/links.yaml
    # nvlink5) after one NVLink NVLS hop of 25 us (data/cost_params.yaml hop_latency; NVLS base
    # 0): 25 us + 1e9 x 73/72 / (543.6 GB/s) = 25 + 1865.14 = 1890.14 us
    by_hand = 25e-6 + 1e9 * 73 / 72 / (900 * GB * 0.604)
    assert by_hand * 1e6 == pytest.approx(1890.1378, rel=1e-6)
    assert result.inside.time_s == pytest.approx(by_hand, rel=1e-9)
    assert any("domain of 72 GPUs (18 nodes of 4)" in note for note in result.assumptions)
    # Its tensor-parallel what-if of 8 GPUs spans two trays of the domain
    whatif = tp_whatif(
        cat, "nvlink5", "ndr", 8, 64e6, system="gb200-nvl72", gpus_per_node=4, nics_per_node=1
    )
    assert (whatif.inside.nodes, whatif.inside.gpus_per_node) == (2, 4)
    assert (whatif.across.nodes, whatif.across.gpus_per_node) == (8, 1)
    # a node that is its own domain keeps the one-node placement
    h100 = gap_for_system(cat, "dgx-h100")
    assert (h100.inside.nodes, h100.inside.gpus_per_node) == (1, 8)
    # another scale-up link is not the preset's NVLink domain: one node of 4 on it
    pcie = gap_for_system(cat, "gb200-nvl72", intra="pcie5")
    assert (pcie.inside.nodes, pcie.inside.gpus_per_node) == (1, 4)
    assert not any("domain of 72 GPUs" in note for note in pcie.assumptions)
    # a TP group that fills no whole trays would need a node that does not exist
    with pytest.raises(ClusterError) as info:
        tp_whatif(cat, "nvlink5", "ndr", 6, 64e6, system="gb200-nvl72", gpus_per_node=4)
    assert info.value.field == "tp"
    assert "does not fill whole nodes of 4 GPUs" in str(info.value)


def test_a_split_domain_is_compared_as_split(cat: Catalogue) -> None:
    # scale_up_domain 36: the inside is one NVL36 half (9 trays of 4), as the estimates
    # resolve it; 4 leaves one tray; the tp what-if must fit the half
    half = gap_for_system(cat, "gb200-nvl72", scale_up_domain=36)
    assert (half.inside.nodes, half.inside.gpus_per_node) == (9, 4)
    engine = estimate(
        cat,
        ClusterSpec(nodes=9, gpus_per_node=4, system="gb200-nvl72", scale_up_domain=36),
        Collective.ALL_REDUCE,
        1e9,
    )
    assert half.inside.time_s == pytest.approx(engine.time_s)
    assert any("domain of 36 GPUs (9 nodes of 4)" in note for note in half.assumptions)
    tray = gap_for_system(cat, "gb200-nvl72", scale_up_domain=4)
    assert (tray.inside.nodes, tray.inside.gpus_per_node) == (1, 4)
    report = gap_report(cat, ClusterSpec(system="gb200-nvl72", scale_up_domain=36), tp=36)
    assert report.tp is not None
    assert (report.tp.inside.nodes, report.tp.inside.gpus_per_node) == (9, 4)
    for spec, tp, field, words in (
        (ClusterSpec(system="gb200-nvl72", scale_up_domain=36), 72, "tp", "domain of 36 GPUs"),
        (ClusterSpec(system="gb200-nvl72", scale_up_domain=6), None, "scale_up_domain", "whole"),
        (
            ClusterSpec(system="gb200-nvl72", scale_up_domain=36, intra="nvlink4"),
            None,
            "scale_up_domain",
            "own scale-up link (nvlink5)",
        ),
        (ClusterSpec(intra="nvlink4", scale_up_domain=8), None, "scale_up_domain", "one pairing"),
    ):
        with pytest.raises(ClusterError) as info:
            gap_report(cat, spec, tp=tp)
        assert info.value.field == field
        assert words in str(info.value)


def test_common_pairings_cover_the_table(cat: Catalogue) -> None:
    results = common_pairings(cat)
    assert len(results) == len(PAIRING_INTRA) * len(PAIRING_INTER)
    pairs = {(r.intra, r.inter): r for r in results}
    for intra in ("nvlink3", "nvlink4", "nvlink5", "xgmi-mi300x", "pcie4", "pcie5"):
        for inter in ("hdr", "ndr", "xdr", "roce-200g", "roce-400g", "roce-800g", "efa-v2"):
            assert (intra, inter) in pairs
        assert (intra, "wan-10g") in pairs
    assert pairs["nvlink4", "ndr"].ratio_line == pytest.approx(9.0)
    assert pairs["nvlink4", "hdr"].ratio_line == pytest.approx(18.0)
    assert pairs["nvlink4", "efa-v2"].nics_per_node == 32
    assert pairs["nvlink4", "wan-10g"].nics_per_node == 1
    # NVLink 5 doubles NVLink 4 per GPU (NVIDIA NVLink pages: 900 vs 450 per direction).
    assert pairs["nvlink5", "ndr"].ratio_line == pytest.approx(18.0)
    # A PCIe-only node has a smaller scale-up than an NDR NIC: the gap inverts (31.5 vs 50).
    assert pairs["pcie4", "ndr"].ratio_line < 1
    # every pairing's ratios by hand: the scale-up link's per-GPU rate (line, and x its
    # efficiency) over the NICs a GPU has, nics/gpus x the NIC's line rate (x its efficiency,
    # capped by a PCIe GPU's own link); rates and efficiencies of data/links.yaml, NICs per GPU
    # of data/pairings.yaml
    intra = {
        "nvlink3": (300 * GB, 0.8),
        "nvlink4": (450 * GB, 0.824),
        "nvlink5": (900 * GB, 0.802),
        "xgmi-mi300x": (448 * GB, 0.8),
        "pcie4": (31.5 * GB, 0.8),
        "pcie5": (63 * GB, 0.8),
    }
    inter = {
        "hdr": (25 * GB, 0.975, 1),
        "ndr": (50 * GB, 0.975, 1),
        "xdr": (100 * GB, 0.975, 1),
        "roce-200g": (25 * GB, 0.962, 1),
        "roce-400g": (50 * GB, 0.962, 1),
        "roce-800g": (100 * GB, 0.962, 1),
        "efa-v2": (12.5 * GB, 0.9, 4),
        "wan-10g": (1.25 * GB, 0.9, 1 / 8),
    }
    assert set(intra) == {r.intra for r in results}
    assert set(inter) == {r.inter for r in results}
    for r in results:
        up, up_eff = intra[r.intra]
        nic, nic_eff, per_gpu = inter[r.inter]
        cap = up * up_eff if r.intra.startswith("pcie") else math.inf
        assert r.ratio_line == pytest.approx(up / (per_gpu * nic), rel=1e-9)
        by_hand = up * up_eff / min(per_gpu * nic * nic_eff, cap)
        assert r.ratio_achievable == pytest.approx(by_hand, rel=1e-9), (r.intra, r.inter)
        # no host link is named: only a PCIe scale-up link, the GPUs' own, stands in for one
        assert r.host_pcie == (r.intra if r.intra in ("pcie4", "pcie5") else None)
    # GPUDirect RDMA crosses a PCIe GPU's own x16 link to reach its NIC: an NDR port (50 GB/s x
    # 0.976 = 48.8 achievable) moves no more than Gen4's 31.5 x 0.8 = 25.2 GB/s; it had been
    # priced at 48.8, twice what the GPU can send (0.52x "slowdown" across nodes)
    capped = pairs["pcie4", "ndr"]
    assert capped.capped_by == "pcie4"
    assert capped.nic_achievable_Bps == pytest.approx(31.5e9 * 0.8)
    assert capped.ratio_achievable == pytest.approx(1.0)
    assert capped.across.time_s >= capped.inside.time_s * 0.99
    # HDR's 24.4 GB/s is below the link's rate: nothing to cap
    assert pairs["pcie4", "hdr"].capped_by is None


def test_tp_whatif_caps_a_pcie_gpus_nics_as_gap_does(cat: Catalogue) -> None:
    """The library's tp_whatif, called without a host link, had priced 4 Gen4 GPUs one per node
    over NDR at 45.7 GB/s busbw while gap() capped the same GPUs at pcie4 (25.2 GB/s)."""
    what = tp_whatif(cat, "pcie4", "ndr", 4, 64e6)
    assert what.host_pcie == "pcie4"
    assert what.across.busbw_Bps <= 31.5e9 * 0.8 * 1.0001
    assert (
        "across, the NICs are capped by pcie4, the GPUs' own PCIe link ({intra}), which "
        "GPUDirect RDMA crosses to reach a NIC"
    ) in what.assumptions


def test_gap_json_keys_and_units(cat: Catalogue) -> None:
    data = gap(cat, "nvlink4", "ndr", 8, 8).model_dump(mode="json")
    assert set(data) >= GAP_KEYS
    assert data["intra_GBps"] == pytest.approx(450.0)
    assert data["inter_per_gpu_GBps"] == pytest.approx(50.0)
    assert data["intra_bidirectional_GBps"] == pytest.approx(900.0)
    assert data["inter_per_node_GBps"] == pytest.approx(400.0)
    assert "per direction" in data["conventions"]
    assert "per GPU" in data["conventions"]
    json.dumps(data)  # serialisable as is
    # the bidirectional example is the result's own link: NVLink 3's 12 links x 25 GB/s = 300
    # GB/s per direction, 600 as vendors quote it (it had named H100's beside it: review EB 8)
    nvlink3 = gap(cat, "nvlink3", "hdr", 8, 8).conventions
    assert "(nvlink3: 600 GB/s bidirectional = 300 GB/s per direction)" in nvlink3
    assert "H100" not in nvlink3


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (lambda c: gap(c, "nvlnk4", "ndr", 8, 8), UnknownNameError, "nvlink4"),
        (lambda c: gap(c, "nvlink4", "ndrr", 8, 8), UnknownNameError, "ndr"),
        (lambda c: gap(c, "ndr", "nvlink4", 8, 8), ClusterError, "scale-out"),
        (lambda c: gap(c, "nvlink4", "nvlink5", 8, 8), ClusterError, "scale-up"),
        (lambda c: gap(c, "nvlink4", "ndr", 8, 8, "ndr"), ClusterError, "host"),
        (lambda c: gap(c, "nvlink4", "ndr", 1, 1), ClusterError, "gpus_per_node"),
        (lambda c: gap(c, "nvlink4", "ndr", 8, 0), ClusterError, "nics_per_node"),
        (lambda c: tp_whatif(c, "nvlink4", "ndr", 1, 1e6), ClusterError, "tp"),
        (lambda c: gap_for_system(c, "rtx2080ti-2"), ClusterError, "inter"),
    ],
)
def test_library_errors(cat: Catalogue, call: object, error: type[Exception], needle: str) -> None:
    assert callable(call)
    with pytest.raises(error) as info:
        call(cat)
    assert needle in str(info.value)


# ------------------------------------------------------------------------------ CLI contract


def test_cli_gap_json_list_of_pairings() -> None:
    result = runner.invoke(app, ["gap", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    assert len(rows) == len(PAIRING_INTRA) * len(PAIRING_INTER)
    for row in rows:
        assert set(row) >= GAP_KEYS
    pick = {(r["intra"], r["inter"]): r for r in rows}
    assert pick["nvlink4", "ndr"]["ratio_line"] == pytest.approx(9.0)
    assert pick["nvlink4", "hdr"]["ratio_line"] == pytest.approx(18.0)


def test_cli_gap_one_pairing_json() -> None:
    result = runner.invoke(
        app, ["gap", "--intra", "nvlink4", "--inter", "ndr", "--format", "json", "--tp", "8"]
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= GAP_KEYS
    assert data["ratio_line"] == pytest.approx(9.0)
    assert data["tp"]["tp"] == 8
    # the default 64 MB over 8 GPUs, by hand (tp_whatif_by_hand_s): NVLS 25 us + 64e6 x 9/8 /
    # (450 GB/s x 0.686) = 258.24 us inside; a ring (8.4 + 14 x 14) x 1.4 + 1.2 = 287.36 us +
    # 2 x 7/8 x 64e6 / (50 GB/s x 0.975) = 2584.80 us across: 10.01x
    inside, across = tp_whatif_by_hand_s(64e6, 8)
    assert data["tp"]["slowdown"] == pytest.approx(across / inside, rel=1e-9)
    assert data["tp"]["slowdown"] == pytest.approx(10.0094, rel=1e-5)
    assert any("--tp-size" in note for note in data["tp"]["assumptions"])


def test_cli_gap_system_preset() -> None:
    result = runner.invoke(app, ["gap", "--system", "p5", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["inter"], data["nics_per_node"]) == ("efa-v2", 32)
    assert data["ratio_line"] == pytest.approx(9.0)


def test_cli_gap_table_states_conventions() -> None:
    result = runner.invoke(app, ["gap"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "per direction" in out
    assert "per GPU" in out
    assert "10^9 B/s" in out
    assert "bidirectional" in out
    assert "9.00x" in out
    assert "18.0x" in out


def test_cli_gap_detail_table() -> None:
    result = runner.invoke(
        app, ["gap", "--intra", "nvlink4", "--inter", "ndr", "--tp", "8", "--tp-size", "32MB"]
    )
    assert result.exit_code == 0, result.stderr
    for needle in ("450 GB/s", "50.0 GB/s", "9.00x", "900 GB/s", "slowdown", "TP=8"):
        assert needle in result.stdout


def _fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    captured = capsys.readouterr()
    assert info.value.code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (
            ["gap", "--intra", "nvlnk4", "--inter", "ndr"],
            ["--intra 'nvlnk4' is not a known link", "nvlink4"],
        ),
        (
            ["gap", "--intra", "nvlink4", "--inter", "ndrr"],
            ["--inter 'ndrr' is not a known link", "did you mean", "ndr"],
        ),
        (["gap", "--system", "p55"], ["--system 'p55' is not a known system", "p5"]),
        (
            ["gap", "--inter", "ndrx"],
            ["--inter 'ndrx' is not a known link", "ndr", "see 'ibcalc gap --help')"],
        ),
        (["gap", "--intra", "ndr", "--inter", "nvlink4"], ["scale-out link"]),
        (["gap", "--gpus-per-node", "4"], ["--intra and --inter"]),
        (["gap", "--intra", "nvlink4", "--inter", "ndr", "--tp", "16"], ["--tp '16'"]),
        (["gap", "--intra", "nvlink4", "--inter", "ndr", "--tp-size", "1GB"], ["--tp"]),
        (["gap", "--intra", "tpu-v5p-ici"], ["not in the common pairings"]),
    ],
)
def test_cli_gap_errors(
    argv: list[str], needles: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    line = _fail(argv, capsys)
    for needle in needles:
        assert needle in line


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            # a DGX H100's NVLink domain is its 8 GPUs
            ["--system", "dgx-h100", "--tp", "16"],
            "--tp '16' does not fit inside one scale-up domain of 8 GPUs",
        ),
        (
            # a GB200 NVL72 tray holds 4 GPUs: 5 is no whole number of trays
            ["--system", "gb200-nvl72", "--scale-up-domain", "5"],
            "--scale-up-domain '5' is not a whole number of 4-GPU nodes",
        ),
        (
            # one bf16 element is 2 B: 1 B holds none
            ["--system", "dgx-h100", "--tp", "8", "--tp-size", "1B"],
            "--tp-size '1B' is smaller than one bf16 element (2 B; see 'ibcalc gap --help')",
        ),
    ],
)
def test_cli_gap_refusals_while_it_runs_quote_the_value_with_the_hint(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused by the library, a value is quoted after its option with the command's hint
    (docs/architecture.md, "Exit codes"), as the parser's refusals are; the size had been
    'size 1 B is smaller than one bf16 element (2 B)', naming no option."""
    hint = " (see 'ibcalc gap --help')"
    assert _fail(["gap", *argv], capsys) == f"error: {line}" + ("" if "see" in line else hint)


def test_gap_result_is_frozen(cat: Catalogue) -> None:
    result = gap(cat, "nvlink4", "ndr", 8, 8)
    assert isinstance(result, GapResult)
    with pytest.raises(ValueError, match="frozen"):
        result.intra = "nvlink5"  # type: ignore[misc]


def test_slowdown_line_says_when_a_one_gpu_node_keeps_more_than_its_share() -> None:
    # 1 NDR NIC for 8 GPUs: the ratio uses 1/8 NIC per GPU (60.8x achievable), the consequence
    # gives each one-GPU node the whole NIC, so its slowdown (about 10x) is 8x closer; said
    args = ["gap", "--intra", "nvlink4", "--inter", "ndr", "--nics-per-node", "1"]
    out = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    (line,) = [x for x in out.output.splitlines() if x.startswith("slowdown across nodes")]
    assert line.endswith(
        "each one-GPU node keeps 1 NIC, 8.00x the per-GPU share in the ratio above)"
    )
    plain = CliRunner().invoke(app, ["gap", "--intra", "nvlink4", "--inter", "ndr"])
    # one NIC per GPU
    assert "slowdown across nodes: 9.86x (1 GB all-reduce in fp32)" in plain.output


@pytest.mark.parametrize("columns", [40, 50, 60, 69, 70, 80, 100])
def test_a_narrow_terminal_wraps_the_consequence_table_rather_than_cut_it(columns: int) -> None:
    """At 60 columns the consequence table read 'nvls/Sim…' and '(scale-u…'; folded, it broke
    words ('plac/emen/t') below 70 and lost two columns below 50. Below 70 columns each
    placement is now a block of wrapped lines."""
    args = ["gap", "--intra", "nvlink4", "--inter", "ndr", "--tp", "8"]
    out = runner.invoke(app, args, env={"COLUMNS": str(columns)})
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("consequence:"))
    end = next(i for i, x in enumerate(lines) if x.startswith("slowdown across"))
    section = lines[start:end]
    assert all(len(x) <= columns for x in section)
    assert not any("…" in x for x in section)
    # the algorithms are whole, in order
    algorithms = {"nvls", "ring", "tree"}
    words = [w.rstrip(",") for x in section for w in x.split()]
    assert [w for w in words if w.split("/")[0] in algorithms] == [
        "nvls/Simple",
        "ring/Simple",
        "nvls/Simple",
        "ring/Simple",
    ]
    if columns < 70:  # every placement and bottleneck reads whole, word for word
        text = " ".join(" ".join(section).split())
        assert "inside (scale-up): 1 node x 8 GPUs on nvlink4 3.67 ms, busbw 477 GB/s*" in text
        assert "bottleneck: network: 1 x ndr per node (48.8 GB/s achievable each)" in text
    else:
        assert section[2].split() == ["placement", "time", "busbw", "algorithm", "bottleneck"]


@pytest.mark.parametrize(("system", "gpus", "nics"), [("dgx-h100", 2, 2), ("aws-p4d", 4, 2)])
def test_a_resized_preset_keeps_its_nics_per_gpu_as_the_estimates_do(
    system: str, gpus: int, nics: int
) -> None:
    """`gap --system dgx-h100 -g 2` compared 2 GPUs with all 8 of the node's NDR NICs, where
    `allreduce --system dgx-h100 -g 2` takes 2."""
    catalogue = load_catalogue(use_env=False)
    report = gap_report(catalogue, ClusterSpec(system=system, gpus_per_node=gpus))
    (pairing,) = report.pairings
    assert pairing.nics_per_node == nics
    cluster = resolve_cluster(catalogue, ClusterSpec(system=system, gpus_per_node=gpus, nodes=2))
    assert cluster.nics_per_node == nics


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--intra", "nvlink4", "--inter", "efa-v2", "-g", "65"],
            "65 GPUs per node would need 260 NICs (aws-p5's 4 per GPU, more than 256)",
        ),
        (["--system", "aws-p5", "-g", "65"], "65 GPUs per node would need 260 NICs (aws-p5's"),
        (
            ["--intra", "nvlink4", "--inter", "ndr", "-g", "1024"],
            "1024 GPUs per node would need 1024 NICs (one per GPU, more than 256)",
        ),
    ],
)
def test_a_default_nic_count_past_the_limit_says_where_it_came_from(
    args: list[str], message: str
) -> None:
    """gap said '--nics-per-node 260 is out of range (1..256)' with no --nics-per-node given;
    the estimates say where the count came from."""
    out = runner.invoke(app, ["gap", *args])
    assert out.exit_code == 2
    assert out.stderr.startswith(f"error: {message}")
    assert out.stderr.endswith("; give --nics-per-node\n")


def test_a_preset_of_one_gpu_per_node_is_refused_as_the_preset_s_count() -> None:
    """`gap --system l40s-pcie --inter ndr` said '--gpus-per-node 1 is out of range' with no -g
    given: the one GPU is the preset's."""
    out = runner.invoke(app, ["gap", "--system", "l40s-pcie", "--inter", "ndr"])
    assert out.exit_code == 2
    assert out.stderr == (
        "error: l40s-pcie has 1 GPU per node, and gap compares GPUs inside a node with GPUs "
        "across nodes: give --gpus-per-node 2 or more\n"
    )
    given = runner.invoke(app, ["gap", "--system", "l40s-pcie", "--inter", "ndr", "-g", "2"])
    assert given.exit_code == 0, given.stderr


def test_gap_on_mi300x_says_rccl_and_the_duplex_rate() -> None:
    # MI300X: 7 xGMI links x 64 GB/s = 448 GB/s per direction, x 0.8 achievable = 358.4 GB/s one
    # way; a ring uses every link both ways at 0.875 of that, 313.6 GB/s: the table's 358 and
    # the consequence rows' 314 are both said, and why they differ
    report = gap_report(load_catalogue(use_env=False), ClusterSpec(system="mi300x-8"))
    (result,) = report.pairings
    assert result.intra_achievable_Bps == pytest.approx(448e9 * 0.8)
    notes = " ".join(result.assumptions)
    assert "314 GB/s per GPU in the one-node collectives below, against 358 GB/s one way" in notes
    assert "AMD GPUs run RCCL" in notes


@pytest.mark.parametrize(
    ("intra", "library", "low"),
    [("tpu-v5p-ici", "XLA's collectives", True), ("gaudi3-rocev2", "HCCL", False)],
)
def test_gap_says_what_the_estimates_say_of_a_link_outside_nccl(
    intra: str, library: str, low: bool
) -> None:
    """gap had kept the RCCL note for AMD but left out that TPU ICI, Gaudi and Ascend do not run
    NCCL, and a link's low catalogue grade, both of which the estimates print."""
    spec = ClusterSpec(intra=intra, inter="roce-400g", gpus_per_node=8)
    (result,) = gap_report(load_catalogue(use_env=False), spec).pairings
    notes = " ".join(result.assumptions)
    assert f"driven by {library}, not NCCL) is priced with NCCL's algorithms" in notes
    assert (f"low-confidence catalogue entries: {intra} (link)" in notes) is low


def test_counts_given_as_text_are_refused_by_name(cat: Catalogue) -> None:
    """gap(cat, "nvlink4", "ndr", "8", 8) failed with TypeError ("'<=' not supported between
    'int' and 'str'"); a count must be a whole number, and the refusal names the field."""
    from ibcalc.errors import ClusterError

    with pytest.raises(ClusterError) as info:
        gap(cat, "nvlink4", "ndr", "8", 8)
    assert str(info.value) == "gpus_per_node '8' is not a whole number"
    with pytest.raises(ClusterError) as info:
        gap(cat, "nvlink4", "ndr", 8, 8.5)
    assert str(info.value) == "nics_per_node 8.5 is not a whole number"


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        # 1e30 is whole, and past the range
        ({"tp": 1e30}, "tp 1e+30 is out of range (2..1024)"),
        ({"nics_per_node": 1e30}, "nics_per_node 1e+30 is out of range (1..256)"),
        # in ClusterSpec's words for nodes=nan and nodes=2.5
        ({"tp": float("nan")}, "tp nan is not a finite number"),
        ({"tp": 16.5}, "tp 16.5 is not a whole number"),
        ({"tp": Fraction(33, 2)}, "tp Fraction(33, 2) is not a whole number"),
    ],
)
def test_tp_whatif_counts_not_whole_are_refused_in_true_words(
    cat: Catalogue, counts: dict[str, float], message: str
) -> None:
    args: dict[str, Any] = {"tp": 16, **counts}
    with pytest.raises(ClusterError) as info:
        tp_whatif(cat, "nvlink4", "ndr", size_bytes=1e9, **args)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "counts",
    [
        {"tp": 8.0},
        {"tp": Fraction(8)},
        {"tp": Decimal(8)},
        {"nics_per_node": 1.0},
        {"tp": 8.0, "gpus_per_node": 8.0},
    ],
)
def test_tp_whatif_takes_a_whole_count_of_any_numeric_type(
    cat: Catalogue, counts: dict[str, Any]
) -> None:
    """tp=8.0 had been refused ('written with a decimal point: give 8') where ClusterSpec,
    the workload specs, size_fat_tree and sweep_sizes take a whole float as its int. It is
    the what-if of tp=8: 8 GPUs on NVLink 4 (450 GB/s a direction) and 8 nodes of one ndr NIC
    (50 GB/s)."""
    args: dict[str, Any] = {"tp": 8, **counts}
    got = tp_whatif(cat, "nvlink4", "ndr", size_bytes=1e9, **args)
    assert type(got.tp) is int
    assert got.tp == 8
    assert type(got.across_nics_per_node) is int
    assert got.across_nics_per_node == 1
    assert got == tp_whatif(
        cat, "nvlink4", "ndr", 8, 1e9, gpus_per_node=args.get("gpus_per_node") and 8
    )
    assert got.inside.ranks == got.across.ranks == 8
    # across: no algorithm beats the ring's wire bound, 2 (8-1)/8 x 1 GB / 50 GB/s = 35 ms
    assert got.across_s >= 2 * 7 / 8 * 1e9 / 50e9


def test_a_nic_with_no_host_link_given_is_said_to_be_uncapped(cat: Catalogue) -> None:
    """nvlink5 vs xdr named alone gave 97.5 GB/s per NIC and a 7.4x achievable ratio, and said
    nothing; a DGX B200's PCIe Gen5 x16 (--system or --host-pcie) holds each XDR NIC to
    50.4 GB/s (14.3x). Without a host link the output says so."""
    bare = gap(cat, "nvlink5", "xdr", 8, 8)
    assert bare.nic_achievable_Bps == pytest.approx(_achievable(cat, "xdr"))
    (note,) = [n for n in bare.assumptions if "no host PCIe link given" in n]
    assert note == (
        "each xdr NIC at its own achievable rate: no host PCIe link given ({host_pcie} or "
        "{system} sets one, which caps a NIC faster than the GPU's link)"
    )
    capped = gap(cat, "nvlink5", "xdr", 8, 8, host_pcie="pcie5")
    assert capped.nic_achievable_Bps == pytest.approx(_achievable(cat, "pcie5"))
    assert not any("no host PCIe link given" in n for n in capped.assumptions)


def test_the_summary_says_why_a_wan_rows_ratio_and_slow_down_differ() -> None:
    """nvlink3 against wan-10g x1/8: ratio 1,920x (a GPU's eighth of a link) beside a slow-down
    of 213x (a whole link per one-GPU node; 214x until NCCL's ring plateau left the WAN's
    propagation unscaled), with no word on the 8x between them (a hostile-input review)."""
    result = CliRunner().invoke(app, ["gap"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "1,920x" in text
    assert "213x" in text
    assert (
        "where NICs per GPU are under 1 (wan-10g x1/8) the ratio takes that share and the "
        "slow-down a whole link per node, so the two differ by up to 8x"
    ) in text


def test_the_table_marks_a_one_way_achievable_rate(cat: Catalogue) -> None:
    """Review BL: gap's achv. for MI300X's mesh (448 x 0.8 = 358.4 GB/s) is one way; the
    one-node all-reduce beside it runs at 358.4 x 0.875 = 313.6 GB/s, as links now says."""
    from typer.testing import CliRunner

    from ibcalc.cli import app

    row = gap(cat, "xgmi-mi300x", "ndr", 8, 8).model_dump(mode="json")
    assert row["intra_duplex_efficiency"] == 0.875
    assert gap(cat, "nvlink4", "ndr", 8, 8).model_dump(mode="json")["intra_duplex_efficiency"] == 1
    out = CliRunner().invoke(app, ["gap"], env={"COLUMNS": "120"}).output
    mi300x = [line for line in out.splitlines() if line.lstrip().startswith("xgmi-mi300x")]
    assert mi300x
    assert all(" 358* " in line for line in mi300x)
    assert not any("*" in line for line in out.splitlines() if line.lstrip().startswith("nvlink4"))
    assert (
        "* achv. one way; where every GPU sends and receives at once (a one-node ring): "
        "xgmi-mi300x 314 GB/s" in " ".join(out.split())
    )


#: A cost-parameter override raising ring's base latency (NCCL's baseLat, paid once per
#: collective) from 6.6 / 14.0 / 8.4 us to 60 us in every protocol.
RING_BASE_60US = """\
schema: ibcalc-cost-params/1
nccl_tuner:
  base_latency:
    assumed: a test value
    value:
      ring: {LL: 60 us, LL128: 60 us, Simple: 60 us}
      tree: {LL: 6.8 us, LL128: 14.0 us, Simple: 8.4 us}
"""


def test_gap_prices_with_the_cost_parameter_files_and_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gap and its --tp what-if price with --cost-params and IBCALC_COST_PARAMS, as every
    estimate does (review CB: the what-if had stayed at the built-in parameters under an
    override the estimates took). The 64 MB TP all-reduce across 8 nodes x 1 GPU on NDR runs
    ring/Simple both ways, so the file adds (60 - 8.4) x 1.4 = 72.24 us to it (NCCL's ring
    plateau factor on a Simple ring's latency), once; inside the node (NVLS) nothing moves.
    (It had run ring/LL128, until one GPU per node took NCCL's Tree row for its network hops:
    LL128 8.5 us a hop, not the Ring row's 4.0; review DG.)"""
    from ibcalc.catalogue.cost_params import load_cost_params

    path = tmp_path / "cp.yaml"
    path.write_text(RING_BASE_60US, encoding="utf-8")
    catalogue = load_catalogue(use_env=False)
    params = load_cost_params(path, use_env=False)
    plain = tp_whatif(catalogue, "nvlink4", "ndr", 8, 64e6)
    priced = tp_whatif(catalogue, "nvlink4", "ndr", 8, 64e6, params=params)
    assert (plain.across.best.algorithm.value, plain.across.best.protocol.value) == (
        "ring",
        "Simple",
    )
    assert priced.across.best.protocol == plain.across.best.protocol
    assert priced.across.time_s - plain.across.time_s == pytest.approx(
        (60 - 8.4) * 1.4e-6, rel=1e-9
    )
    assert priced.inside.time_s == plain.inside.time_s
    report = gap_report(catalogue, ClusterSpec(system="dgx-h100"), tp=8, params=params)
    assert report.tp is not None
    assert report.tp.across.time_s == priced.across.time_s
    assert report.pairings[0].assumptions[0] == f"cost parameters: {path}"
    # the command line reads the file by flag and by variable, and names it
    for args, env in (
        (["--cost-params", str(path)], {}),
        ([], {"IBCALC_COST_PARAMS": str(path)}),
    ):
        monkeypatch.delenv("IBCALC_COST_PARAMS", raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        result = runner.invoke(
            app, ["gap", "--system", "dgx-h100", "--tp", "8", "--format", "json", *args]
        )
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert data["tp"]["across"]["time_s"] == pytest.approx(priced.across.time_s, rel=1e-12)
        assert data["assumptions"][0] == f"cost parameters: {path}"
    # the common-pairings table names it once, under the table
    monkeypatch.delenv("IBCALC_COST_PARAMS", raising=False)
    table = runner.invoke(app, ["gap", "--cost-params", str(path)], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert table.output.count(f"cost parameters: {path}") == 1


def test_cli_gap_title_names_the_tp_rows_own_size() -> None:
    """--tp 4 adds rows for a 64 MB all-reduce (the --tp-size default) to the table titled
    'consequence: all-reduce of 1 GB': 284 us read as a 1 GB all-reduce on 4 GPUs. The title
    now names the TP rows' size and dtype (bf16, the pairing's all-reduce fp32), so a --tp-size
    of the same 1 GB still names its own dtype."""
    result = runner.invoke(
        app, ["gap", "--system", "dgx-h100", "--tp", "4"], env={"COLUMNS": "120"}
    )
    assert result.exit_code == 0, result.stderr
    assert "consequence: all-reduce of 1 GB in fp32 (TP=4 rows: 64 MB in bf16)\n" in result.stdout
    same = runner.invoke(
        app,
        ["gap", "--system", "dgx-h100", "--tp", "4", "--tp-size", "1GB"],
        env={"COLUMNS": "120"},
    )
    assert same.exit_code == 0, same.stderr
    assert "consequence: all-reduce of 1 GB in fp32 (TP=4 rows: 1 GB in bf16)\n" in same.stdout
    alone = runner.invoke(app, ["gap", "--system", "dgx-h100"], env={"COLUMNS": "120"})
    assert alone.exit_code == 0, alone.stderr
    assert "consequence: all-reduce of 1 GB in fp32\n" in alone.stdout


def test_cli_gap_json_gives_sizes_in_whole_bytes() -> None:
    """gap's JSON printed its sizes as 1000000000.0 and 64000000.0, where an estimate's and a
    sweep's print whole bytes; a reader that takes bytes as an integer (Go's int64) refused
    them. Every size_bytes is now an int, in the pairing table and in one pairing with --tp."""
    one = runner.invoke(app, ["gap", "--system", "dgx-h100", "--tp", "4", "--format", "json"])
    table = runner.invoke(app, ["gap", "--format", "json"])
    assert one.exit_code == table.exit_code == 0, one.stderr + table.stderr
    data = json.loads(one.stdout)
    sizes = [
        data["allreduce_size_bytes"],
        data["allreduce_inside"]["size_bytes"],
        data["allreduce_across"]["size_bytes"],
        data["tp"]["size_bytes"],
        data["tp"]["inside"]["size_bytes"],
        data["tp"]["across"]["size_bytes"],
    ]
    assert sizes == [10**9, 10**9, 10**9, 64 * 10**6, 64 * 10**6, 64 * 10**6]
    assert all(type(size) is int for size in sizes)
    assert '"allreduce_size_bytes": 1000000000,' in table.stdout
    assert 'size_bytes": 1000000000.0' not in table.stdout


def test_the_built_in_pairings_are_read_once() -> None:
    """load_pairings is cached: a helper added above it had taken its @cache (ac9656dc), and
    every gap report read and validated data/pairings.yaml again."""
    from ibcalc.gap import load_pairings

    assert load_pairings() is load_pairings()


def test_gap_results_repr_in_one_line_with_units(cat: Catalogue) -> None:
    """GapResult and TpWhatIf print in one line, every figure with its unit (pydantic's repr
    had run to about 2,400 and 700 characters): H100's NVLink 4 carries 450 GB/s per GPU per
    direction, one NDR NIC 400 Gb/s = 50.0 GB/s, 9.00x; the all-reduce times are the two
    estimates', as Estimate's repr prints them."""
    result = gap_for_system(cat, "dgx-h100")
    inside, across = format_time(result.inside.time_s), format_time(result.across.time_s)
    assert str(result) == repr(result)
    assert repr(result) == (
        "GapResult(nvlink4 vs 8 x ndr per node of 8 GPUs, dgx-h100: 450 GB/s vs 50.0 GB/s per "
        f"GPU per direction (9.00x line, {format_ratio(result.ratio_achievable)} achievable); "
        f"all-reduce of 1 GB fp32: {inside} inside, {across} across "
        f"({format_ratio(result.slowdown)}))"
    )
    what_if = tp_whatif(cat, "nvlink4", "wan-100g", 8, 64e6)
    inside, across = format_time(what_if.inside.time_s), format_time(what_if.across.time_s)
    assert str(what_if) == repr(what_if)
    assert repr(what_if) == (
        "TpWhatIf(tp 8 on nvlink4 vs 8 sites x 1 GPU with 1 x wan-100g each, all-reduce of "
        f"64 MB bf16: {inside} inside, {across} across ({format_ratio(what_if.slowdown)}))"
    )
