"""cluster/resolve.py: a cluster spec resolved against the catalogue into tiers and NIC counts.

Expected values are worked by hand from the catalogue's per-link figures.
"""

from __future__ import annotations

import pytest

from conftest import main_error
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster

CAT = load_catalogue(use_env=False)


def test_fewer_gpus_on_a_preset_keeps_its_nics_per_gpu() -> None:
    # dgx-h100: 8 NDR for 8 GPUs -> one GPU per node gets one NIC, not eight
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", gpus_per_node=1, nodes=8))
    assert cluster.nics_per_node == 1
    assert cluster.topology.domain_bw_Bps() == pytest.approx(find_link(CAT, "ndr").achievable_Bps)


def test_nics_beyond_what_pcie_feeds_add_nothing() -> None:
    # 256 NICs for 8 GPUs: each GPU reaches its NICs through one PCIe Gen5 x16 link
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=8, nics_per_node=256))
    pcie5 = find_link(CAT, "pcie5").achievable_Bps
    assert cluster.topology.domain_bw_Bps() == pytest.approx(8 * pcie5)


def test_presets_without_nics_stay_in_one_box(capsys: pytest.CaptureFixture[str]) -> None:
    cluster = resolve_cluster(CAT, ClusterSpec(system="rtx2080ti-2"))
    assert cluster.nodes == 1
    assert "no scale-out NIC" in main_error(
        ["allreduce", "-s", "1GB", "--system", "rtx2080ti-2", "-N", "2"], capsys
    )
