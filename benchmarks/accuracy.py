"""How right is the model? Leave-one-source-out error per size regime, beside two baselines.

Every published measurement in the repository (:mod:`dataset`: the CSV rows and the complete
sweeps) is predicted by a model whose fitted constants (:mod:`fits`) were derived **without the
measurement's own source group**: for each group, :func:`fits.fit_all` runs on every other
group's fit-eligible rows, and the group is then predicted. That is the yardstick; the in-sample
figures (constants fitted on everything) are printed beside it and flatter the model.

Regimes (scored quantity): latency, sizes <= 64 KiB (time); mid, 64 KiB < S < 64 MiB (time);
bandwidth, sizes >= 64 MiB (busbw). A busbw whose prediction rests on a NIC count its source does
not state is listed per group but kept out of the regime figures. Targets: median |error| <= 10 %
/ 12 % / 5 %, 90th percentile <= 30 % in each.

Baselines, with no fitted constant:

* ``line-rate``: spec-sheet rates (every efficiency 1, NVLS at the line rate), no transport
  latency, NCCL's latency constants;
* ``nccl``: NCCL 2.30.7's own tuner model (its constants and link bandwidths, no transport
  latency, the tuner's time for the tuner's choice);
* ``inductor``: the estimator PyTorch's Inductor uses for communication (ring + LL bandwidths of
  a fixed 300 GB/s inside a node and 25 GB/s between nodes, NCCL's base and per-hop latencies).

    python benchmarks/accuracy.py [--groups] [--insample-only] [--bands] [--ablate]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import Sample, load_samples
from fits import FITS, Fit, Model, base_model, fit_all, predict
from ibcalc.engine.band import time_range, transport_class
from ibcalc.engine.params import BAND_CLASSES
from ibcalc.engine.plan import Candidate
from ibcalc.engine.types import Collective, busbw_factor
from ibcalc.errors import IbcalcError
from ibcalc.facade import likely_range
from ibcalc.logs.diagnose import older_than_compared, oldest_compared

__all__ = [
    "REGIMES",
    "TARGETS",
    "Result",
    "baseline_model",
    "loso",
    "quantile",
    "score",
    "summary",
]

REGIMES = ("latency", "mid", "bandwidth")
#: (median, 90th percentile) of |error| per regime, on leave-one-source-out predictions.
TARGETS = {"latency": (0.10, 0.30), "mid": (0.12, 0.30), "bandwidth": (0.05, 0.30)}


@dataclass(frozen=True)
class Result:
    """A sample, what the model predicted for it, and the signed relative error."""

    sample: Sample
    predicted_time_s: float
    predicted_busbw_GBps: float
    algorithm: str
    #: the candidates the estimate's range covers, the choice first (time, algorithm,
    #: protocol; ``Estimate.range_covers`` and ``range_reaches``); empty for the baselines
    covered: tuple[Candidate, ...] = ()

    @property
    def error(self) -> float:
        """Signed relative error of the scored quantity (time, or busbw at >= 64 MiB)."""
        s = self.sample
        if s.regime == "bandwidth":
            assert s.busbw_GBps is not None
            return (self.predicted_busbw_GBps - s.busbw_GBps) / s.busbw_GBps
        assert s.time_us is not None
        return (self.predicted_time_s * 1e6 - s.time_us) / s.time_us

    @property
    def counted(self) -> bool:
        """False for a busbw whose prediction rests on a NIC count the source does not state
        (reported per group, kept out of the regime figures)."""
        return self.sample.regime != "bandwidth" or self.sample.nics_stated

    @property
    def time_error(self) -> float:
        """Signed relative error of the time at any size (error bands are on time)."""
        return self.predicted_time_s / self.measured_time_s - 1

    @property
    def measured_time_s(self) -> float:
        """The measured time, or for a row that gives busbw alone the time it implies: nccl-tests
        derives busbw from the time (busbw = size / time x the collective's factor), so the
        time is the predicted one scaled by predicted over measured busbw."""
        s = self.sample
        if s.time_us is not None:
            return s.time_us * 1e-6
        assert s.busbw_GBps is not None
        return self.predicted_time_s * self.predicted_busbw_GBps / s.busbw_GBps


Predictor = Callable[[Model, Sample], tuple[float, float, str]]


def score(
    model: Model, samples: Sequence[Sample], predictor: Predictor | None = None
) -> list[Result]:
    """Predict every scored sample with one model."""
    out = []
    for s in samples:
        if not s.scored:
            continue
        covered: tuple[Candidate, ...] = ()
        try:
            if predictor is None:
                est = predict(model, s)
                time_s, busbw = est.time_s, est.busbw_Bps / 1e9
                label = f"{est.best.algorithm.value}/{est.best.protocol.value}"
                covered = tuple(
                    (c.time_s, c.algorithm, c.protocol)
                    for c in (est.best, *est.alternatives)
                    if c is est.best
                    or f"{c.algorithm.value}/{c.protocol.value}"
                    in (*est.range_covers, *est.range_reaches)
                )
            else:
                time_s, busbw, label = predictor(model, s)
        except IbcalcError:
            continue
        out.append(Result(s, time_s, busbw, label, covered))
    return out


def loso(
    samples: Sequence[Sample], base: Model | None = None, fits: Sequence[Fit] = FITS
) -> list[Result]:
    """Leave-one-source-out: each group predicted by constants fitted without it."""
    base = base or base_model()
    groups = sorted({s.group for s in samples if s.scored})
    results = []
    for group in groups:
        train = [s for s in samples if s.group != group]
        model, _ = fit_all(train, base, fits)
        results.extend(score(model, [s for s in samples if s.group == group]))
    return results


#: Fewest rows and sources a (regime, transport class) needs for quantiles of its own; with
#: fewer, a one-domain class takes every one-domain row of its regime and the others the whole
#: regime's (a class of 2 sources is one or two systems' runs: no spread for unseen ones).
MIN_BAND_ROWS = 8
MIN_BAND_SOURCES = 3
#: Where a class with too few rows or sources borrows its spread from.
_BAND_PARENT = {"fabric": ("fabric", "scale-up"), "scale-up": ("fabric", "scale-up")}


def error_band(results: Sequence[Result], model: Model) -> dict[str, dict[str, list[float]]]:
    """10th and 90th percentiles of the signed time error, per size regime and transport class
    (``error_band.time_error_quantiles`` in data/cost_params.yaml; engine/band.py uses them).
    Rows that give busbw alone count with the time it implies (:attr:`Result.time_error`)."""
    rows: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        cls = transport_class(model.cluster(r.sample).topology)
        rows.setdefault((r.sample.regime, cls), []).append(r)
    band: dict[str, dict[str, list[float]]] = {}
    for regime in REGIMES:
        band[regime] = {}
        for cls in BAND_CLASSES:
            chosen = rows.get((regime, cls), [])
            if len(chosen) < MIN_BAND_ROWS or len({r.sample.group for r in chosen}) < (
                MIN_BAND_SOURCES
            ):
                parents = _BAND_PARENT.get(cls)
                chosen = [
                    r
                    for (reg, c), found in rows.items()
                    if reg == regime and (parents is None or c in parents)
                    for r in found
                ]
            values = [r.time_error for r in chosen]
            band[regime][cls] = [
                round(quantile(values, 0.1), 2),
                round(quantile(values, 0.9), 2),
            ]
    return band


def coverage(results: Sequence[Result], model: Model) -> dict[str, float]:
    """Fraction of results whose measured time lies in the shipped model's error band."""
    inside: dict[str, list[bool]] = {}
    for r in results:
        s = r.sample
        # the shipped band: each estimate's, widened over its near ties and the far faster
        # candidate of a least sure estimate, each no faster than its wire (facade.likely_range)
        topology = model.cluster(s).topology
        if r.covered:
            low, high = likely_range(topology, model.params, s.collective, s.size_bytes, r.covered)
        else:
            low, high = time_range(r.predicted_time_s, s.size_bytes, topology, model.params)
        ok = low * (1 - 1e-9) <= r.measured_time_s <= high * (1 + 1e-9)
        inside.setdefault(s.regime, []).append(ok)
        inside.setdefault("all", []).append(ok)
    return {k: sum(v) / len(v) for k, v in inside.items()}


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (the ``q`` quantile of ``values``)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    k = (len(ordered) - 1) * q
    low = math.floor(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def summary(results: Sequence[Result], regime: str) -> tuple[int, float, float]:
    """(rows, median |error|, 90th percentile |error|) of one regime."""
    errors = [abs(r.error) for r in results if r.sample.regime == regime and r.counted]
    if not errors:
        return 0, math.nan, math.nan
    return len(errors), statistics.median(errors), quantile(errors, 0.9)


# --- baselines -------------------------------------------------------------------------------


def baseline_model(kind: str) -> Model:
    """The shipped model reduced to a baseline: ``line-rate`` or ``nccl`` (see the module doc)."""
    model = base_model()
    links = []
    for link in model.catalogue.links:
        update: dict[str, object] = {"transport_latency_s": 0.0}
        if kind == "line-rate":
            update |= {"efficiency": 1.0, "duplex_efficiency": 1.0}
            if link.nvls_efficiency is not None:
                update["nvls_efficiency"] = 1.0
        links.append(link.model_copy(update=update))
    catalogue = model.catalogue.model_copy(update={"links": links})
    return Model(catalogue, model.params.tuner_view())


def _tuner_prediction(model: Model, sample: Sample) -> tuple[float, float, str]:
    est = predict(model, sample)
    time_s = est.best.selection_time_s
    factor = busbw_factor(est.collective, est.ranks)
    label = f"{est.best.algorithm.value}/{est.best.protocol.value}"
    return time_s, est.size_bytes / time_s * factor / 1e9, label


#: The Inductor-style estimator: fixed bandwidths and NCCL's LL latencies (torch
#: _inductor/comm_analysis.py estimates NCCL collectives this way).
INDUCTOR_INTRA_Bps = 300e9
INDUCTOR_INTER_Bps = 25e9


def _inductor_prediction(model: Model, sample: Sample) -> tuple[float, float, str]:
    cluster = model.cluster(sample)
    n = cluster.ranks
    nodes = cluster.nodes
    tuner = model.params.nccl_tuner
    size = sample.size_bytes
    bw = INDUCTOR_INTER_Bps if nodes > 1 else INDUCTOR_INTRA_Bps
    factor = busbw_factor(sample.collective, n)
    if sample.collective is Collective.ALL_REDUCE:
        steps = 2 * (n - 1)
    elif sample.collective in (Collective.BROADCAST, Collective.REDUCE, Collective.SEND_RECV):
        steps = 1
    else:
        steps = n - 1
    from ibcalc.engine.types import Algorithm, Protocol

    base = tuner.base_latency_s[Algorithm.RING][Protocol.LL]
    intra = tuner.hop_latency_s["nvlink"][Algorithm.RING][Protocol.LL]
    net = tuner.hop_latency_s["net"][Algorithm.RING][Protocol.LL]
    net_steps = min(steps, 2 * (nodes - 1) if nodes > 1 else 0)
    latency = base + (steps - net_steps) * intra + net_steps * net
    time_s = latency + factor * size / bw
    return time_s, size / time_s * factor / 1e9, "ring/LL (inductor)"


def baselines(samples: Sequence[Sample]) -> dict[str, list[Result]]:
    """Results of the three baselines."""
    return {
        "line-rate": score(baseline_model("line-rate"), samples, _tuner_prediction),
        "nccl": score(baseline_model("nccl"), samples, _tuner_prediction),
        "inductor": score(base_model(), samples, _inductor_prediction),
    }


# --- report ----------------------------------------------------------------------------------


def by_release(results: Sequence[Result]) -> list[str]:
    """The held-out figures split by the NCCL release the source states: older than the oldest
    release whose tuner constants the model was compared with (``oldest_compared``), that
    release or later, and none stated. Not a target: the old runs are also unusual systems, so
    the split does not separate the release from the system. (The last two had been one
    group, which hid that the sources stating a recent release meet four of the six targets.)"""
    stated = [r for r in results if r.sample.nccl_version is not None]
    old = [r for r in stated if older_than_compared(r.sample.nccl_version)]
    recent = [r for r in stated if not older_than_compared(r.sample.nccl_version)]
    unstated = [r for r in results if r.sample.nccl_version is None]
    oldest = ".".join(str(x) for x in oldest_compared())
    lines = ["held out, by the NCCL release the source states (not a target):"]
    parts = (
        (f"older than {oldest}", old),
        (f"{oldest} or later", recent),
        ("not stated", unstated),
    )
    for name, part in parts:
        groups = len({r.sample.group for r in part})
        cells = "  ".join(
            f"{regime} {_cell(summary(part, regime)).strip()} ({summary(part, regime)[0]})"
            for regime in REGIMES
        )
        lines.append(f"  {name:32s} {groups:2d} sources  {cells}")
    # a source whose runs state a release for some and not for others counts in two groups:
    # the counts above add up to more than the sources (a README reader added 10 + 3 + 12)
    both = sorted(
        {r.sample.group for r in stated} & {r.sample.group for r in unstated},
    )
    if both:
        their = "its" if len(both) == 1 else "their"
        lines.append(
            f"  (in two groups: {', '.join(both)}, some of {their} runs stating a release and "
            f"some not; {len({r.sample.group for r in results})} sources in all)"
        )
    return lines


def _cell(stats: tuple[int, float, float]) -> str:
    n, median, p90 = stats
    return f"{median:6.1%} / {p90:6.1%}" if n else "      -        "


def report(samples: Sequence[Sample], *, groups: bool = False, insample_only: bool = False) -> str:
    """The accuracy table (and per-group lines with ``groups``)."""
    base = base_model()
    model, fitted = fit_all(samples, base)
    insample = score(model, samples)
    held = [] if insample_only else loso(samples, base)
    others = baselines(samples)
    lines = [
        "accuracy per regime: median / 90th percentile of |error| "
        "(time <= 64 KiB and mid sizes, busbw >= 64 MiB)",
        "",
        f"  {'regime':10s} {'rows':>5s}  {'leave-one-source-out':>20s}  {'in-sample':>17s}  "
        f"{'line-rate':>17s}  {'NCCL tuner':>17s}  {'inductor-style':>17s}  target",
    ]
    for regime in REGIMES:
        n = summary(insample, regime)[0]
        target = TARGETS[regime]
        loso_stats = summary(held, regime)
        verdict = ""
        if held:
            ok = loso_stats[1] <= target[0] and loso_stats[2] <= target[1]
            verdict = "meets" if ok else "misses"
        lines.append(
            f"  {regime:10s} {n:5d}  {_cell(loso_stats):>20s}  {_cell(summary(insample, regime))}  "
            f"{_cell(summary(others['line-rate'], regime))}  "
            f"{_cell(summary(others['nccl'], regime))}  "
            f"{_cell(summary(others['inductor'], regime))}  "
            f"<= {target[0]:.0%} / {target[1]:.0%} {verdict}"
        )
    if held:
        band = error_band(held, base)
        cover = coverage(held, base)
        lines += [
            "",
            "error band (10th / 90th percentile of the held-out signed time error):",
            *(
                f"  {regime:10s} "
                + "  ".join(f"{cls} {lo:+.0%}/{hi:+.0%}" for cls, (lo, hi) in band[regime].items())
                for regime in REGIMES
            ),
            "shipped band holds "
            + ", ".join(f"{k} {v:.0%}" for k, v in sorted(cover.items()))
            + " of the held-out rows",
            "",
            *by_release(held),
        ]
    lines += ["", "fitted constants (in-sample):"]
    for r in fitted:
        where = f"{r.rows} rows from {', '.join(r.groups)}" if not r.prior else "prior (no rows)"
        lines.append(f"  {r.name:38s} {r.value:.4g}  {where}")
    if groups:
        lines += ["", "per group (leave-one-source-out; in-sample when --insample-only):"]
        rows = held or insample
        labels = sorted({(r.sample.label, r.sample.regime) for r in rows})
        for label, regime in labels:
            errors = [
                r.error for r in rows if r.sample.label == label and r.sample.regime == regime
            ]
            worst = max(errors, key=abs)
            med = statistics.median(abs(e) for e in errors)
            lines.append(
                f"  {label[:64]:64s} {regime:9s} n={len(errors):3d} median {med:6.1%} "
                f"worst {worst:+7.1%}"
            )
    return "\n".join(lines)


def ablation(samples: Sequence[Sample]) -> str:
    """Do the fitted constants travel? Each fit forced to its prior in every held-out fold (its
    rows ignored), against all fitted: leave-one-source-out median / 90th percentile per
    regime. A fit whose held-out figures are better without it does not travel."""

    def figures(results: Sequence[Result]) -> str:
        parts = []
        for regime in REGIMES:
            _, median, p90 = summary(results, regime)
            parts.append(f"{100 * median:5.1f}% / {100 * p90:5.1f}%")
        return "  ".join(parts)

    lines = [
        "held out with each fit at its prior (latency, mid, bandwidth: median / 90th percentile)",
        f"  {'all fitted':<40} {figures(loso(samples))}",
    ]
    for fit in (f for f in FITS if f.predicts):
        # the fit reads no row, so it takes its prior after the others (fits.fit_all)
        alone = [dataclasses.replace(f, select=_no_rows) if f is fit else f for f in FITS]
        lines.append(f"  {fit.name:<40} {figures(loso(samples, fits=alone))}")
    return "\n".join(lines)


def _no_rows(sample: Sample, model: Model) -> bool:
    return False


def main(argv: list[str] | None = None) -> int:
    """Print the accuracy report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", action="store_true", help="also print one line per group")
    parser.add_argument("--insample-only", action="store_true", help="skip cross-validation")
    parser.add_argument(
        "--ablate",
        action="store_true",
        help="held-out figures with each fitted constant at its prior instead (about 4 min)",
    )
    args = parser.parse_args(argv)
    if args.ablate:
        print(ablation(load_samples()))
        return 0
    print(report(load_samples(), groups=args.groups, insample_only=args.insample_only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
