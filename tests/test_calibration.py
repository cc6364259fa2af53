"""Every calibrated constant in use is the one benchmarks/calibrate.py derives from the data.

The constants (catalogue fields in data/links.yaml and the ``calibrated`` group of
data/cost_params.yaml) are fitted to published measurements; this test re-runs the fit so none
can drift from its derivation unnoticed, and checks that every value the YAML marks as
``derived_by`` a function of calibrate.py is one that the script derives.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import calibrate
from ibcalc.catalogue.cost_params import builtin_cost_params, load_cost_params

DERIVED = calibrate.derive()


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_constant_matches_its_derivation(name: str) -> None:
    derived, in_use = DERIVED[name]
    assert in_use == pytest.approx(derived, rel=0.005, abs=1e-9), (
        f"{name}: in use {in_use}, calibrate.py derives {derived}; "
        "update data/links.yaml or data/cost_params.yaml"
    )


def test_every_derived_cost_parameter_is_derived_by_the_function_it_names() -> None:
    params = builtin_cost_params()
    derived_in_yaml = {
        name: prov.text for name, prov in params.provenance.items() if prov.kind == "derived_by"
    }
    assert set(derived_in_yaml) == set(calibrate.COST_PARAM_FUNCTIONS)
    values = params.flat()
    for name, text in derived_in_yaml.items():
        assert text == f"benchmarks/calibrate.py::{calibrate.COST_PARAM_FUNCTIONS[name]}", name
        # the value compared above is the one data/cost_params.yaml holds
        assert DERIVED[name][1] == values[name], name


def test_written_override_file_loads_and_holds_the_derived_values(tmp_path: Path) -> None:
    """``calibrate.py --write`` writes the override format the loader reads (what a future
    ``ibcalc calibrate`` will write)."""
    path = tmp_path / "derived.yaml"
    path.write_text(calibrate.override_text(DERIVED), encoding="utf-8")
    params = load_cost_params([path], use_env=False)
    values = params.flat()
    for name, function in calibrate.COST_PARAM_FUNCTIONS.items():
        assert values[name] == pytest.approx(DERIVED[name][0], rel=1e-12), name
        assert params.provenance[name].text == f"benchmarks/calibrate.py::{function}"
        assert params.provenance[name].origin.startswith(f"{path}:")
