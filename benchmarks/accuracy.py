"""Accuracy of the cost engine against published nccl-tests measurements.

Runs the engine over every usable row of a measurements CSV (default: the copy of
``shared/reference/measurements.csv`` in ``benchmarks/data``) and prints, per configuration group
and overall, the median and maximum relative error of predicted busbw for sizes >= 64 MiB and of
predicted time for sizes <= 64 KiB. Targets (issue 3): bandwidth median <= 5 %, max <= 20 %;
latency median <= 10 %.

    python benchmarks/accuracy.py [--csv FILE] [--rows]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.engine.types import Estimate
from ibcalc.errors import IbcalcError
from ibcalc.facade import estimate
from reference import DEFAULT_CSV, Point, load_points

TARGETS = {"bandwidth": (0.05, 0.20), "latency": (0.10, None)}


@dataclass
class Result:
    """A measured point, the model's prediction and the relative error."""

    point: Point
    regime: str
    measured: float
    predicted: float
    algorithm: str
    counted: bool

    @property
    def error(self) -> float:
        """Signed relative error (predicted - measured) / measured."""
        return (self.predicted - self.measured) / self.measured


def baseline_catalogue(catalogue: Catalogue, kind: str) -> Catalogue:
    """Catalogues for the two reference baselines the issue compares against.

    ``line-rate``: spec-sheet rates (every efficiency 1, NVLS at the line rate, no transport
    latency). ``nccl``: NCCL's own model, i.e. NCCL 2.30.7's constants and link bandwidths with
    no transport latency (its IB plugin reports none) and none of the calibrated terms; the
    prediction is then the tuner-view time of the tuner's choice.
    """
    links = []
    for link in catalogue.links:
        update: dict[str, object] = {"transport_latency_s": 0.0}
        if kind == "line-rate":
            update |= {"efficiency": 1.0, "duplex_efficiency": 1.0}
            if link.nvls_efficiency is not None:
                update["nvls_efficiency"] = 1.0
        links.append(link.model_copy(update=update))
    return catalogue.model_copy(update={"links": links})


def evaluate(
    points: list[Point], catalogue: Catalogue, *, baseline: str | None = None
) -> tuple[list[Result], list[Point]]:
    """Predict every usable point; return results and the points left out (with reasons)."""
    results: list[Result] = []
    skipped: list[Point] = []
    for point in points:
        regime = point.regime
        if point.status == "excluded" or point.spec is None or regime is None:
            if regime is None and point.status != "excluded":
                point.reasons.insert(0, "size in neither regime (64 KiB < S < 64 MiB)")
            skipped.append(point)
            continue
        try:
            est = estimate(
                catalogue,
                point.spec,
                point.collective,
                point.size_bytes,
                dtype=point.dtype,
                algorithm=point.algorithm,
            )
        except IbcalcError as exc:
            point.reasons.insert(0, f"model refused: {exc}")
            skipped.append(point)
            continue
        time_s = est.best.selection_time_s if baseline == "nccl" else est.time_s
        if regime == "bandwidth":
            assert point.busbw_GBps is not None
            measured = point.busbw_GBps
            predicted = est.size_bytes / time_s * (est.busbw_Bps / est.algbw_Bps) / 1e9
        else:
            assert point.time_us is not None
            measured, predicted = point.time_us, time_s * 1e6
        counted = regime == "latency" or point.nics_stated or _insensitive(point, catalogue, est)
        label = f"{est.best.algorithm.value}/{est.best.protocol.value}"
        results.append(Result(point, regime, measured, predicted, label, counted))
    return results, skipped


def _insensitive(point: Point, catalogue: Catalogue, est: Estimate) -> bool:
    """True when halving the (unstated) NIC count moves the predicted busbw by <= 2 %."""
    assert point.spec is not None
    half = max(1, est.nics_per_node // 2)
    spec = point.spec.replace(nics_per_node=half)
    other = estimate(catalogue, spec, point.collective, point.size_bytes, algorithm=point.algorithm)
    return abs(other.busbw_Bps - est.busbw_Bps) <= 0.02 * est.busbw_Bps


def summarise(results: list[Result], regime: str) -> tuple[int, float, float]:
    """(count, median |error|, max |error|) over the counted results of a regime."""
    errors = [abs(r.error) for r in results if r.regime == regime and r.counted]
    if not errors:
        return 0, 0.0, 0.0
    return len(errors), statistics.median(errors), max(errors)


def report(
    results: list[Result], skipped: list[Point], rows: bool, used: set[int] | None = None
) -> str:
    """The printed report; ``used`` holds the row numbers the calibration read."""
    lines = []
    for regime in ("bandwidth", "latency"):
        unit = "busbw" if regime == "bandwidth" else "time"
        lines.append(
            f"== {regime} regime ({unit}; {'>= 64 MiB' if regime == 'bandwidth' else '<= 64 KiB'})"
        )
        lines.append(f"{'group':<72} {'n':>3} {'median':>8} {'max':>8}  worst point")
        groups: dict[str, list[Result]] = {}
        for r in results:
            if r.regime == regime:
                groups.setdefault(r.point.group, []).append(r)
        for name, group in sorted(groups.items()):
            errs = [abs(r.error) for r in group]
            worst = max(group, key=lambda r: abs(r.error))
            flag = (
                "" if all(r.counted for r in group) else "  [not counted: depends on unstated NICs]"
            )
            lines.append(
                f"{name[:72]:<72} {len(group):>3} {statistics.median(errs):>7.1%} {max(errs):>7.1%}"
                f"  {worst.point.size_bytes:.0f} B: {worst.measured:.4g} vs {worst.predicted:.4g}"
                f" ({worst.error:+.1%}, {worst.algorithm}){flag}"
            )
        n, med, mx = summarise(results, regime)
        target_med, target_max = TARGETS[regime]
        verdict = (
            "meets" if med <= target_med and (target_max is None or mx <= target_max) else "MISSES"
        )
        lines.append(
            f"{'OVERALL (counted rows)':<72} {n:>3} {med:>7.1%} {mx:>7.1%}  target median <= "
            f"{target_med:.0%}"
            + (f", max <= {target_max:.0%}" if target_max else "")
            + f": {verdict}"
        )
        if used is not None:
            held = [r for r in results if r.point.row not in used]
            n2, med2, mx2 = summarise(held, regime)
            lines.append(
                f"{'HELD OUT (counted rows that no fit read)':<72} {n2:>3} {med2:>7.1%} {mx2:>7.1%}"
            )
        lines.append("")
    if rows:
        lines.append("== rows")
        for r in results:
            lines.append(
                f"row {r.point.row:>3} {r.regime:<9} {r.point.size_bytes:>12.0f} B measured "
                f"{r.measured:>9.4g} predicted {r.predicted:>9.4g} ({r.error:+6.1%}) {r.algorithm}"
                f"  {r.point.group}"
            )
        lines.append("")
    lines.append(f"== left out ({len(skipped)} rows)")
    reasons: dict[str, int] = {}
    for p in skipped:
        key = f"{p.group[:60]}: {p.reasons[0] if p.reasons else 'no reason'}"
        reasons[key] = reasons.get(key, 0) + 1
    for key, count in sorted(reasons.items()):
        lines.append(f"{count:>3} x {key}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the accuracy report; exit 0 (figures, not a test)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV, help="measurements CSV")
    parser.add_argument("--rows", action="store_true", help="print every compared row")
    parser.add_argument(
        "--catalogue", type=Path, action="append", default=[], help="catalogue override file(s)"
    )
    parser.add_argument(
        "--baseline",
        choices=["line-rate", "nccl"],
        help="score a reference model instead: spec-sheet line rates, or NCCL's own cost model",
    )
    args = parser.parse_args(argv)
    catalogue = load_catalogue(args.catalogue, use_env=False)
    if args.baseline:
        catalogue = baseline_catalogue(catalogue, args.baseline)
    results, skipped = evaluate(load_points(args.csv), catalogue, baseline=args.baseline)
    used: set[int] | None = None
    if args.csv == DEFAULT_CSV:
        import calibrate

        calibrate.derive()
        used = calibrate.USED_ROWS
    print(report(results, skipped, args.rows, used))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
