"""Every calibrated constant in use is the one benchmarks/calibrate.py derives from the data.

The constants (catalogue fields and ``collectives.constants.CALIBRATED``) are fitted to published
measurements; this test re-runs the fit so none can drift from its derivation unnoticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import calibrate

DERIVED = calibrate.derive()


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_constant_matches_its_derivation(name: str) -> None:
    derived, in_use = DERIVED[name]
    assert in_use == pytest.approx(derived, rel=0.005, abs=1e-9), (
        f"{name}: in use {in_use}, calibrate.py derives {derived}; update the catalogue/constants"
    )
