"""JSON output is each result's ``model_dump(mode="json")``: derived figures are computed fields.

Numbers are worked from published facts (NDR 400 Gb/s per port; nccl-tests' busbw factors) or
from the result's own stored fields, never copied from the output.
"""

from __future__ import annotations

import pytest

from conftest import tp_whatif_by_hand_s
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue, LinkKind
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective
from ibcalc.errors import ClusterError
from ibcalc.facade import estimate
from ibcalc.gap import TP_DEFAULT_SIZE, gap_report, load_pairings
from ibcalc.results import EstimateResult
from ibcalc.units import GB, parse_size


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load_catalogue(use_env=False)


def test_link_json_in_gb_and_gbit(cat: Catalogue) -> None:
    ndr = find_link(cat, "ndr")
    data = ndr.model_dump(mode="json")
    # InfiniBand NDR: 400 Gb/s per 4x port per direction = 50 GB/s
    assert data["per_direction_Gbps"] == pytest.approx(400)
    assert data["per_direction_GBps"] == pytest.approx(50)
    assert data["achievable_GBps"] == pytest.approx(50 * ndr.efficiency)
    assert "per_direction_Bps" not in data
    assert list(data)[:8] == [
        "id",
        "aliases",
        "name",
        "kind",
        "family",
        "generation",
        "scope",
        "per_direction_GBps",
    ]


def test_estimate_json_flattens_the_choice(cat: Catalogue) -> None:
    est = estimate(cat, ClusterSpec(nodes=2, system="dgx-h100"), Collective.ALL_REDUCE, 1e9)
    data = EstimateResult.of(est).model_dump(mode="json")
    # 16 ranks: nccl-tests' all-reduce factor 2 (n - 1) / n = 1.875
    assert data["busbw_factor"] == pytest.approx(1.875)
    assert data["time_s"] == est.best.latency_s + est.best.transfer_s
    assert data["algbw_GBps"] == pytest.approx(1e9 / est.best.time_s / GB)
    assert data["busbw_GBps"] == pytest.approx(data["algbw_GBps"] * 1.875)
    assert data["algorithm"] == est.best.algorithm.value
    assert "best" not in data
    # nccl-tests' count column, as sweep rows carry it: 1e9 B of fp32, 4 B each
    assert data["count"] == 250_000_000
    assert list(data)[-2:] == ["assumptions", "alternatives"]
    for alt, cost in zip(data["alternatives"], est.alternatives, strict=True):
        assert alt["algorithm"] == cost.algorithm.value
        assert alt["busbw_GBps"] == pytest.approx(1e9 / cost.time_s / GB * 1.875)
        assert "bottleneck" not in alt
    assert EstimateResult.of(EstimateResult.of(est)) == EstimateResult.of(est)


def test_pairings_file_names_catalogue_links_with_reasons(cat: Catalogue) -> None:
    pairings = load_pairings()
    assert pairings.intra
    assert pairings.inter
    for up in pairings.intra:
        assert find_link(cat, up.link).kind in (LinkKind.SCALE_UP, LinkKind.HOST)
        assert up.why.strip()
        assert up.source.strip()
    for node in pairings.inter:
        assert find_link(cat, node.inter).kind in (LinkKind.SCALE_OUT, LinkKind.WAN)
        assert node.why.strip()
        assert node.source.strip()
    # AWS p5: 32 EFA v2 interfaces for 8 GPUs
    efa = next(node for node in pairings.inter if node.inter == "efa-v2")
    assert (efa.gpus_per_node, efa.nics_per_node) == (8, 32)


def test_gap_report_one_pairing_with_default_tp_size(cat: Catalogue) -> None:
    report = gap_report(cat, ClusterSpec(intra="nvlink4", inter="ndr"), tp=8)
    assert not report.common
    (pairing,) = report.pairings
    assert report.tp is not None
    assert report.tp.size_bytes == parse_size(TP_DEFAULT_SIZE)
    assert report.tp.assumptions[0] == (
        f"TP all-reduce size {TP_DEFAULT_SIZE} assumed ({{tp_size_bytes}})"
    )
    # the node was not given: 8 GPUs and one NIC per GPU, said with field marks
    assert pairing.assumptions[:2] == [
        "8 GPUs per node assumed ({gpus_per_node})",
        "8 NICs per node (one per GPU) assumed ({nics_per_node})",
    ]
    data = report.tp.model_dump(mode="json")
    assert data["inside"]["link"] == "nvlink4"
    assert data["across"]["link"] == "ndr"
    # by hand (tp_whatif_by_hand_s), the default 64 MB over 8 GPUs: 258.24 us inside (NVLS),
    # 2584.80 us across (a ring over 8 one-GPU nodes): 10.01x
    inside, across = tp_whatif_by_hand_s(64e6, 8)
    assert (data["inside"]["time_s"], data["across"]["time_s"]) == (
        pytest.approx(inside, rel=1e-9),
        pytest.approx(across, rel=1e-9),
    )
    assert data["slowdown"] == pytest.approx(across / inside, rel=1e-9)


def test_gap_report_table_filters_and_refuses_one_pairing_options(cat: Catalogue) -> None:
    report = gap_report(cat, ClusterSpec(intra="nvlink4"))
    assert report.common
    assert {r.intra for r in report.pairings} == {"nvlink4"}
    assert len(report.pairings) == len(load_pairings().inter)
    with pytest.raises(ClusterError) as info:
        gap_report(cat, ClusterSpec(intra="nvlink4"), tp_size_bytes=1e6)
    assert info.value.field == "tp_size_bytes"
    with pytest.raises(ClusterError) as info:
        gap_report(cat, ClusterSpec(intra="nvlink4", inter="ndr", nodes=4))
    assert info.value.field == "nodes"
