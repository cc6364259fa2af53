"""Derive every fitted constant from the published measurements and compare with what ships.

Runs :func:`fits.fit_all` on every sample (in-sample: the values ``data/links.yaml`` and
``data/cost_params.yaml`` carry) and prints, per constant, the derived value, the value in use,
the rows and source groups it read, or that it fell back to its prior. ``--write FILE`` writes the
derived cost parameters as an override file (``IBCALC_COST_PARAMS`` / ``load_cost_params`` read
it); link values are printed for ``data/links.yaml``.

``tests/reference/test_calibration.py`` runs the same derivation and fails when a shipped value
drifts from it, so no fitted number is typed in by hand without a test that re-derives it.

    python benchmarks/calibrate.py [--write FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import load_samples
from fits import VERBS_REFERENCE, FitReport, Model, base_model, fit_all, packet_efficiency

__all__ = ["derive", "in_use", "override_text"]


def in_use(model: Model, name: str) -> float:
    """The value a constant has in ``model`` (``link.field`` or ``group.param``)."""
    head, _, attr = name.partition(".")
    if head in ("calibrated", "assumptions", "pipeline", "nccl_tuner", "nccl_runtime"):
        group = getattr(model.params, head)
        key = {
            "launch_per_gpu": "launch_per_gpu_s",
            "ll_net_bandwidth": "ll_net_Bps",
            "per_message_latency": "per_message_s",
            "proxy_op_latency": "proxy_op_s",
        }.get(attr, attr)
        value = getattr(group, key)
        return float("inf") if value is None else float(value)
    if head == "p2p_efficiency":
        return model.params.calibrated.p2p_efficiency
    if head == "verbs":  # every verbs link's efficiency is its packet efficiency x the factor
        reference = model.link(VERBS_REFERENCE)
        return round(reference.efficiency / packet_efficiency(reference), 3)
    return float(getattr(model.link(head), attr))


def derive() -> list[tuple[FitReport, float]]:
    """Each fit's report and the value shipped today."""
    base = base_model()
    _, reports = fit_all(load_samples(), base)
    return [(r, in_use(base, r.name)) for r in reports]


def override_text(reports: list[FitReport]) -> str:
    """The derived cost parameters as an override file."""
    lines = ["schema: ibcalc-cost-params/1", "calibrated:"]
    for r in reports:
        head, _, attr = r.name.partition(".")
        if head == "p2p_efficiency":
            head, attr = "calibrated", "p2p_efficiency"
        if head != "calibrated":
            continue
        if attr in ("launch_per_gpu", "per_message_latency", "proxy_op_latency"):
            value = f'"{r.value * 1e6:.4g} us"'
        elif attr == "ll_net_bandwidth":
            value = f'"{r.value / 1e9:.4g} GB/s"' if r.value != float("inf") else "null"
        else:
            value = f"{r.value:g}"
        groups = ", ".join(r.groups) or "prior"
        lines += [
            f"  {attr}:",
            f"    value: {value}",
            f"    derived_by: benchmarks/fits.py::{attr}",
            f"    rows: {r.rows} rows from {groups}",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print derived vs in-use values; optionally write the override file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the derived cost parameters here")
    args = parser.parse_args(argv)
    rows = derive()
    for report, used in rows:
        where = (
            f"{report.rows} rows from {', '.join(report.groups)}"
            if not report.prior
            else "prior (no rows)"
        )
        flag = "" if abs(report.value - used) <= 1e-9 * max(1.0, abs(used)) else "  <- differs"
        print(f"{report.name:40s} derived {report.value:<10.4g} in use {used:<10.4g} {where}{flag}")
    if args.write:
        args.write.write_text(override_text([r for r, _ in rows]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
