"""Calibrate on half the sizes of each published run, predict the other half (ibcalc calibrate).

For every multi-size run in ``benchmarks/data/sweeps`` (the manifest gives its cluster; runs the
manifest excludes are listed, not fitted), ``ibcalc.logs.calibrate.calibrate`` is fitted to the
even-numbered sizes (1st, 3rd, 5th ... row of the table) and the model, before and after, predicts
the odd-numbered ones. Printed per run: the parameters the fit determined, and the held-out error
before and after: the median |relative error| of the time over the held-out rows of the latency
regime (S <= 64 KiB) and of the bandwidth regime (S >= 64 MiB, the same as the busbw error), and
the mean |log error| over both (|ln(measured / predicted)|, about the relative error when small).

A second table shows how little a calibration needs: one small and one large size per run (the
smallest and the largest row) fit the transport latency and the link efficiency, and the model
then predicts the other bandwidth-regime sizes.

    python benchmarks/calibrate_logs.py [--markdown]

``tests/logs/test_calibrate.py`` runs :func:`holdout` on the same runs and asserts that the
held-out error falls wherever the log determines a parameter.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.params import CostParams
from ibcalc.errors import IbcalcError
from ibcalc.logs import Row, Run, parse_file
from ibcalc.logs.calibrate import Calibration, apply_calibration, calibrate
from ibcalc.logs.expect import predict
from ibcalc.logs.results import BANDWIDTH_MIN_BYTES, LATENCY_MAX_BYTES

SWEEPS = Path(__file__).resolve().parent / "data" / "sweeps"
MANIFEST = SWEEPS / "manifest.yaml"
_FIELDS = (
    "system",
    "intra",
    "inter",
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "nvls",
    "gpus_per_process",
)


@dataclass(frozen=True)
class Case:
    """A published run and the cluster its manifest entry describes."""

    file: str
    use: str
    why: str
    spec: ClusterSpec
    run: Run


@dataclass(frozen=True)
class Holdout:
    """Held-out errors of one run, before and after calibrating on the other half."""

    case: Case
    calibration: Calibration | None
    latency_before: float | None
    latency_after: float | None
    bandwidth_before: float | None
    bandwidth_after: float | None
    mean_before: float | None
    mean_after: float | None
    rows: int
    error: str = ""
    bandwidth_max_before: float | None = None
    bandwidth_max_after: float | None = None

    @property
    def determined(self) -> bool:
        """True when the fit determined at least one parameter."""
        return self.calibration is not None and bool(self.calibration.parameters)


def manifest_cases() -> list[Case]:
    """Every run of the manifest with its cluster (the first run of each file)."""
    data: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    out: list[Case] = []
    for entry in data["files"]:
        cluster = entry["cluster"]
        values = {
            k: cluster[k]["value"] for k in _FIELDS if cluster.get(k, {}).get("value") is not None
        }
        parsed = parse_file(SWEEPS / entry["file"])
        out.append(
            Case(entry["file"], entry["use"], entry["why"], ClusterSpec(**values), parsed.runs[0])
        )
    return out


def _fit_rows(rows: list[Row]) -> list[Row]:
    return [
        r for r in rows if r.size_bytes <= LATENCY_MAX_BYTES or r.size_bytes >= BANDWIDTH_MIN_BYTES
    ]


def _errors(
    case: Case, rows: list[Row], catalogue: Catalogue, params: CostParams
) -> tuple[float | None, float | None, float | None, float | None]:
    """(median |rel err| latency, median |rel err| bandwidth, mean |log err|, max |rel err|
    bandwidth) of the time (for bandwidth rows the same as the busbw error)."""
    assert case.run.collective is not None
    cluster = resolve_cluster(catalogue, case.spec)
    ests = predict(
        cluster,
        case.run.collective,
        [r.size_bytes for r in rows],
        dtype=case.run.dtype,
        params=params,
    )
    lat: list[float] = []
    bw: list[float] = []
    logs: list[float] = []
    for row, est in zip(rows, ests, strict=True):
        if est is None:
            continue
        err = math.log(row.oop.time_us * 1e-6 / est.time_s)
        logs.append(err)
        (lat if row.size_bytes <= LATENCY_MAX_BYTES else bw).append(abs(math.expm1(-err)))
    return (
        statistics.median(lat) if lat else None,
        statistics.median(bw) if bw else None,
        sum(abs(e) for e in logs) / len(logs) if logs else None,
        max(bw) if bw else None,
    )


def holdout(
    case: Case,
    catalogue: Catalogue,
    params: CostParams,
    *,
    keep: str = "even",
) -> Holdout:
    """Calibrate on the kept rows of ``case``, then compare errors on the others.

    ``keep``: ``even`` (every other size, starting with the first), ``ends`` (the smallest and
    the largest size only) or ``smallest`` (the smallest size only).
    """
    rows = [r for r in case.run.rows if r.size_bytes > 0]
    if keep == "even":
        kept = {r.line for i, r in enumerate(rows) if i % 2 == 0}
    elif keep == "ends":
        kept = {rows[0].line, rows[-1].line}
    else:
        kept = {rows[0].line}
    held = _fit_rows([r for r in rows if r.line not in kept])
    try:
        cal = calibrate(
            [case.run],
            case.spec,
            params,
            catalogue,
            sources=[case.file],
            row_filter=lambda _run, row: row.line in kept,
            date="1970-01-01",
        )
    except IbcalcError as exc:
        return Holdout(case, None, None, None, None, None, None, None, len(held), str(exc))
    before = _errors(case, held, catalogue, params)
    cat, par = apply_calibration(cal, catalogue, params)
    after = _errors(case, held, cat, par)
    return Holdout(
        case,
        cal,
        before[0],
        after[0],
        before[1],
        after[1],
        before[2],
        after[2],
        len(held),
        bandwidth_max_before=before[3],
        bandwidth_max_after=after[3],
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}%"


def _params(cal: Calibration | None) -> str:
    if cal is None or not cal.parameters:
        return "none"
    parts = []
    for p in cal.parameters:
        if p.unit == "s":
            parts.append(f"{p.name} {p.before * 1e6:.3g}->{p.value * 1e6:.3g} us")
        elif p.unit == "B/s":
            parts.append(f"{p.name} {p.before / 1e9:.3g}->{p.value / 1e9:.3g} GB/s")
        else:
            parts.append(f"{p.name} {p.before:.3g}->{p.value:.3g}")
    return "; ".join(parts)


def holdout_cells(h: Holdout) -> list[str]:
    """One run's row of the held-out table, as printed (docs/nccl-check.md quotes it)."""
    return [
        h.case.file.removesuffix(".txt"),
        str(h.rows),
        _pct(h.latency_before),
        _pct(h.latency_after),
        _pct(h.bandwidth_before),
        _pct(h.bandwidth_after),
        f"{h.mean_before:.3f}" if h.mean_before is not None else "-",
        f"{h.mean_after:.3f}" if h.mean_after is not None else "-",
        h.error or _params(h.calibration),
    ]


def main(argv: list[str] | None = None) -> int:
    """Print the held-out tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    catalogue = load_catalogue(use_env=False)
    params = builtin_cost_params()
    cases = manifest_cases()
    sep = " | " if args.markdown else "  "
    head = [
        "run",
        "held-out rows",
        "latency before",
        "after",
        "bandwidth before",
        "after",
        "mean abs log error before",
        "after",
        "fitted",
    ]
    print("Calibrate on every other size, predict the rest (median |error| of the time)\n")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(sep.join(head))
    skipped: list[str] = []
    for case in cases:
        if case.use == "exclude" or case.run.collective is None:
            skipped.append(f"{case.file}: {case.why}")
            continue
        cells = holdout_cells(holdout(case, catalogue, params))
        print(("| " + " | ".join(cells) + " |") if args.markdown else sep.join(cells))
        sys.stdout.flush()
    print("\nLeft out (manifest use: exclude):")
    for line in skipped:
        print(f"  {line}")

    print("\nOne or two sizes per run: the smallest row alone, then the smallest and the largest,")
    print("fit; the other bandwidth-regime sizes are predicted (median / max |busbw error|)\n")
    head2 = ["run", "before", "smallest only", "smallest + largest", "fitted (smallest + largest)"]
    if args.markdown:
        print("| " + " | ".join(head2) + " |")
        print("|" + "---|" * len(head2))
    else:
        print(sep.join(head2))
    for case in cases:
        if case.use == "exclude" or case.run.collective is None:
            continue
        rows = [r for r in case.run.rows if r.size_bytes > 0]
        if rows[0].size_bytes > LATENCY_MAX_BYTES or rows[-1].size_bytes < BANDWIDTH_MIN_BYTES:
            continue
        one = holdout(case, catalogue, params, keep="smallest")
        two = holdout(case, catalogue, params, keep="ends")
        cells = [
            case.file.removesuffix(".txt"),
            f"{_pct(two.bandwidth_before)} / {_pct(two.bandwidth_max_before)}",
            f"{_pct(one.bandwidth_after)} / {_pct(one.bandwidth_max_after)}",
            f"{_pct(two.bandwidth_after)} / {_pct(two.bandwidth_max_after)}",
            two.error or _params(two.calibration),
        ]
        print(("| " + " | ".join(cells) + " |") if args.markdown else sep.join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
