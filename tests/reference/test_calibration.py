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

DERIVED = {report.name: (report, used) for report, used in calibrate.derive()}


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
