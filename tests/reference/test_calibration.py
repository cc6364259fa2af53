"""Every fitted constant in use is the one benchmarks/fits.py derives from the data.

The constants (catalogue fields in data/links.yaml and the ``calibrated`` group of
data/cost_params.yaml) are fitted to published measurements; this test re-runs the fits on every
sample so none can drift from its derivation unnoticed, and checks that every value the YAML marks
``derived_by`` names a fit that exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import calibrate
from fits import FITS
from ibcalc.catalogue.cost_params import builtin_cost_params, load_cost_params

DERIVATIONS = calibrate.derive()
DERIVED = {report.name: (report, used) for report, used in DERIVATIONS}


def test_every_fit_is_derived_once() -> None:
    """The test below runs over what calibrate.derive() returns: a fit it left out, or named
    twice, would go unchecked. It names every fit of FITS, each once."""
    assert sorted(report.name for report, _ in DERIVATIONS) == sorted(fit.name for fit in FITS)


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_constant_matches_its_derivation(name: str) -> None:
    report, in_use = DERIVED[name]
    assert in_use == pytest.approx(report.value, rel=0.005, abs=1e-9), (
        f"{name}: in use {in_use}, benchmarks/fits.py derives {report.value}; "
        "update data/links.yaml or data/cost_params.yaml"
    )


def test_every_derived_cost_parameter_names_an_existing_fit() -> None:
    names = {fit.name.rpartition(".")[2] for fit in FITS}
    for key, prov in builtin_cost_params().provenance.items():
        if prov.kind != "derived_by" or key.startswith("error_band."):
            continue  # the error band is derived by the cross-validation (test_band.py)
        script, _, function = prov.text.partition("::")
        assert script == "benchmarks/fits.py", key
        assert function in names, f"{key}: no fit named {function}"


def test_written_override_file_loads_and_holds_the_derived_values(tmp_path: Path) -> None:
    """``calibrate.py --write`` writes the override format the loader reads (what
    ``ibcalc calibrate`` writes too)."""
    path = tmp_path / "derived.yaml"
    reports = [report for report, _ in DERIVED.values()]
    path.write_text(calibrate.override_text(reports), encoding="utf-8")
    params = load_cost_params([path], use_env=False)
    assert params.calibrated.launch_per_gpu_s == pytest.approx(
        DERIVED["calibrated.launch_per_gpu"][0].value, rel=1e-3
    )
    assert params.calibrated.p2p_efficiency == pytest.approx(
        DERIVED["p2p_efficiency"][0].value, rel=1e-9
    )


#: Links whose fitted value is copied from a sibling with the same transport (no data of their own).
COPIES = {"efa-v3": "efa-v2", "gcp-tcpx": "gcp-tcpxo"}


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_copied_transport_latency_follows_its_fitted_sibling(copy: str) -> None:
    from ibcalc.catalogue import find_link, load_catalogue

    catalogue = load_catalogue()
    fitted = find_link(catalogue, COPIES[copy])
    copied = find_link(catalogue, copy)
    assert copied.transport_latency_s == pytest.approx(fitted.transport_latency_s, rel=0.005)
    assert "copy" in (copied.transport_latency_source or "")


def test_h800_nvls_efficiency_is_the_fitted_h100_value_taken_over() -> None:
    """nvlink4-h800 has no NVLS rows of its own: its efficiency is nvlink4's fitted value, and
    its source says so (it had claimed a fit and a test that did not exist, a review)."""
    from ibcalc.catalogue import find_link, load_catalogue

    catalogue = load_catalogue()
    h100, h800 = find_link(catalogue, "nvlink4"), find_link(catalogue, "nvlink4-h800")
    assert h800.nvls_efficiency == h100.nvls_efficiency
    assert "taken over" in (h800.nvls_efficiency_source or "")


def test_every_verbs_link_is_its_packet_efficiency_times_the_one_nic_factor() -> None:
    """InfiniBand and RoCE links carry one efficiency each, worked the same way: the payload of a
    4096-byte MTU packet over its bytes on the wire (InfiniBand LRH 8 + BTH 12 + ICRC 4 + VCRC 2;
    RoCEv2 Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4, and 20 of preamble and
    inter-frame gap) times the verbs NIC factor the fit derives, to 0.001."""
    from ibcalc.catalogue import load_catalogue

    factor = DERIVED["verbs.nic_factor"][0].value
    infiniband = 4096 / (4096 + 8 + 12 + 4 + 2)
    roce = 4096 / (4096 + 14 + 20 + 8 + 12 + 4 + 4 + 20)
    verbs = {
        link.id: link for link in load_catalogue(use_env=False).links if link.transport == "verbs"
    }
    infiniband_ids = {"edr", "hdr", "hdr100", "ndr", "ndr200", "xdr"}
    roce_ids = {"roce-100g", "roce-200g", "roce-400g", "roce-800g"}
    assert set(verbs) == infiniband_ids | roce_ids
    for link_id, link in verbs.items():
        packet = roce if link.family == "ethernet" else infiniband
        assert link.efficiency == pytest.approx(round(packet * factor, 3), abs=1e-9), link_id
        assert "verbs.nic_factor" in (link.efficiency_source or ""), link_id
    # in use today: 0.975 for InfiniBand, 0.962 for RoCE (factor 0.981)
    assert (verbs["ndr"].efficiency, verbs["roce-400g"].efficiency) == (0.975, 0.962)
