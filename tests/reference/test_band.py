"""The error band holds about 80 % of held-out measurements, and is what the data derive.

Every published row is predicted leave-one-source-out (``benchmarks/accuracy.py``); the band
shipped in ``data/cost_params.yaml`` (``error_band.time_error_quantiles``: 10th and 90th
percentile of the signed time error per size regime and transport class) must

* hold between 70 % and 90 % of those rows' measured times overall, and at least 65 % in each
  regime (the 10th-90th percentile spread is 80 % by construction; pooling a class with too
  few rows or sources, into its regime or its one-domain rows, and rounding the quantiles move
  it a little);
* equal the quantiles the held-out predictions give (re-derived here, to 0.01).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from accuracy import REGIMES, TARGETS, Result, coverage, error_band, loso, summary
from dataset import load_samples
from fits import base_model
from ibcalc.engine.params import BAND_CLASSES
from ibcalc.logs.diagnose import older_than_compared

BASE = base_model()
HELD = loso(load_samples(), BASE)
COVER = coverage(HELD, BASE)


def test_band_holds_about_80_percent_of_held_out_rows() -> None:
    assert 0.70 <= COVER["all"] <= 0.90, COVER


@pytest.mark.parametrize("regime", REGIMES)
def test_band_holds_most_rows_of_each_regime(regime: str) -> None:
    assert COVER[regime] >= 0.65, COVER


def test_shipped_band_is_the_derived_one() -> None:
    # both sides are rounded to 0.01, so they must be equal: a tolerance of 0.011 had let the
    # shipped verbs bandwidth +0.03 stand after its derivation moved to +0.02 (a review)
    derived = error_band(HELD, BASE)
    shipped = BASE.params.error_band.time_error_quantiles
    for regime in REGIMES:
        for cls in BAND_CLASSES:
            assert list(shipped[regime][cls]) == pytest.approx(derived[regime][cls], abs=1e-6), (
                regime,
                cls,
            )


def test_the_model_docs_print_the_shipped_band() -> None:
    """docs/model.md#error-band tabulates the shipped quantiles; its mid row had kept an older
    refit's values (verbs -0.52 / +0.08) after the data file moved on."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "model.md").read_text("utf-8")
    shipped = BASE.params.error_band.time_error_quantiles
    for regime in REGIMES:
        row = re.search(rf"^\| {regime}\b[^|]*\|(.*)\|\s*$", text, re.M)
        assert row is not None, regime
        cells = [c.strip() for c in row.group(1).split("|")]
        quoted = [[float(x) for x in cell.split(" / ")] for cell in cells]
        assert quoted == [list(shipped[regime][cls]) for cls in BAND_CLASSES], regime


_WORDS = ("none", "one", "two", "three", "four", "five", "six")


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _met(results: list[Result]) -> int:
    """How many of the six targets (median and 90th percentile per regime) ``results`` meet."""
    met = 0
    for regime in REGIMES:
        _, median, p90 = summary(results, regime)
        met += (median <= TARGETS[regime][0]) + (p90 <= TARGETS[regime][1])
    return met


def test_the_docs_quote_the_held_out_figures_and_targets_met() -> None:
    """The README's accuracy table, docs/model.md's count of targets met and both pages' figures
    for the sources that state NCCL 2.18 or later are what the held-out predictions give
    (docs/model.md had said four of six targets held on those sources, with a bandwidth median
    of 6.8 %, after the all-to-all's share of the scale-up rate made it 3.3 %: five)."""
    root = Path(__file__).resolve().parents[2]
    readme = " ".join((root / "README.md").read_text("utf-8").split())
    model = " ".join((root / "docs" / "model.md").read_text("utf-8").split())
    for regime in REGIMES:
        rows, median, p90 = summary(HELD, regime)
        row = re.search(rf"\| {regime} \([^|]*\) \| (\d+) \| \*\*([^*]+)\*\* \|", readme)
        assert row is not None, regime
        assert (int(row.group(1)), row.group(2)) == (rows, f"{_pct(median)} / {_pct(p90)}")
    met = _WORDS[_met(HELD)]
    assert f"**Which targets are met: {met}.**" in model, met

    recent = [
        r
        for r in HELD
        if r.sample.nccl_version is not None and not older_than_compared(r.sample.nccl_version)
    ]
    figures = ", ".join(
        f"{regime} {_pct(summary(recent, regime)[1])} / {_pct(summary(recent, regime)[2])}"
        for regime in REGIMES
    )
    met = _WORDS[_met(recent)]
    assert f"({figures}: {met} of the six targets met;" in readme, (figures, met)
    sources = len({r.sample.group for r in recent})
    assert f"On those {sources} sources {met} of the six targets hold" in model, met
