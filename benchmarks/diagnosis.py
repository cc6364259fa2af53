"""How often nccl-check names the right cause: published runs degraded by a known fault.

    python benchmarks/diagnosis.py [--verbose]

No published log comes labelled with its fault, so the corpus is made: every published run of
``benchmarks/data/sweeps`` with rows of 64 MiB and more (the manifest gives its cluster; runs it
excludes are skipped) is degraded by each cause nccl-check can name, *as the model says that
cause acts*: each row's measured time is multiplied by the model's time with the fault over its
time without (one NIC per node, half the NICs, NICs behind PCIe Gen4 or Gen3, NVLS off, NVLink
off, NVLink not joining the nodes). The measurement's own scatter around the model stays in the
degraded run, which is what makes naming a cause hard: on a run the model predicts within 2 %,
the right cause re-runs within 2 %; on one it misses by 20 %, so does the right cause. Printed:

* each degraded run, its slowdown at 64 MiB and more, and the cause the first bandwidth finding
  names (with the causes it names as equally likely); ``OK`` when the injected cause is among
  them. Faults that slow a run by less than 10 % are skipped (a cause that changes nothing
  cannot be told from health), and so are NIC faults the log rules out (its channel lines show
  more NICs carrying traffic than the fault leaves);
* the healthy runs: the cause named, if any (no fault should be; NCCL's choice of ring where
  the model expects a tree is named as the library's, not a fault, and counted apart);
* each run slowed uniformly from 1 MiB by 1.05-2x (no cause: a slowdown nccl-check has no
  hypothesis for): whether it is flagged (a warning or an error finding), and whether a slower
  run is ever flagged less (a gap).

The construction is circular where the model is wrong about how a cause acts; it tests the
diagnosis rules (which cause ranks first, when a run inside the error band is a fault), not the
model. docs/nccl-check.md gives the figures.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from calibrate_logs import MANIFEST, SWEEPS, Case, manifest_cases
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.engine.types import Algorithm
from ibcalc.errors import IbcalcError
from ibcalc.logs import Run
from ibcalc.logs.bandwidth import RING_INSTEAD
from ibcalc.logs.check import check_run
from ibcalc.logs.env import LogEnvironment, scan_environment
from ibcalc.logs.expect import predict
from ibcalc.logs.results import BANDWIDTH_MIN_BYTES, RunCheck
from ibcalc.units import plural

CATALOGUE = load_catalogue(use_env=False)
PARAMS = builtin_cost_params()
#: Uniform slowdowns from 1 MiB.
FACTORS = (1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.35, 1.4, 1.5, 1.6, 1.8, 2.0)
#: Least slowdown at 64 MiB and more for an injected fault to be scored.
MIN_SLOWDOWN = 1.1


def faults(cluster: ResolvedCluster, run: Run) -> list[dict[str, Any]]:
    """The causes nccl-check re-runs (logs/bandwidth.py ``_hypotheses``) that apply here."""
    assert run.collective is not None
    out: list[dict[str, Any]] = []
    large = [r.size_bytes for r in run.rows if r.size_bytes >= BANDWIDTH_MIN_BYTES]
    ests = predict(cluster, run.collective, large, dtype=run.dtype, params=PARAMS)
    nvls = any(
        e is not None and e.best.algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE) for e in ests
    )
    if cluster.nodes > 1:
        nics = cluster.nics_per_node
        if nics > 1:
            out.append({"nics_per_node": 1})
        if nics >= 4:
            out.append({"nics_per_node": nics // 2})
        host = cluster.host_pcie.achievable_Bps if cluster.host_pcie is not None else math.inf
        for pcie in ("pcie4", "pcie3"):
            if find_link(CATALOGUE, pcie).achievable_Bps < host * 0.9:
                out.append({"host_pcie": pcie})
    if nvls:
        out.append({"nvls": False})
    if cluster.topology.m > cluster.gpus_per_node:
        out.append({"scale_up_domain": cluster.gpus_per_node})
    intra = cluster.intra
    if (
        intra is not None
        and intra.family == "nvlink"
        and cluster.topology.m > 1
        and cluster.host_pcie is not None
    ):
        out.append({"intra": cluster.host_pcie.id, "nvls": False})
    return out


def fault_key(changes: Mapping[str, Any]) -> str:
    """The key nccl-check gives the cause (NVLink off is keyed by the link that replaces it)."""
    if "intra" in changes:
        return f"intra={changes['intra']}"
    return ",".join(f"{k}={v}" for k, v in changes.items())


def scaled(run: Run, ratios: Sequence[float]) -> Run:
    """``run`` with each row's times multiplied (and rates divided) by its ratio."""
    rows = []
    for row, k in zip(run.rows, ratios, strict=True):
        update = {}
        for side in ("oop", "ip"):
            t = getattr(row, side)
            if t is not None:
                update[side] = t.model_copy(
                    update={
                        "time_us": t.time_us * k,
                        "algbw_GBps": t.algbw_GBps / k,
                        "busbw_GBps": t.busbw_GBps / k,
                    }
                )
        rows.append(row.model_copy(update=update))
    return run.model_copy(update={"rows": rows})


def named(check: RunCheck) -> list[str]:
    """The causes the first bandwidth finding names: its hypothesis and its equally likely
    twins; a fitted rate (``link.efficiency=x``) or ``[no cause]`` when it names none."""
    for f in check.findings:
        if f.kind == "low_bandwidth":
            twins = [
                e.split("re-run with ", 1)[1].split(":")[0]
                for e in f.evidence
                if e.startswith("re-run with ") and "also within" in e
            ]
            return [f.hypothesis or "[no cause]", *twins]
    return []


def flagged(check: RunCheck) -> bool:
    """Whether a bandwidth finding is a warning or an error."""
    return any(
        f.kind == "low_bandwidth" and f.severity in ("warning", "error") for f in check.findings
    )


def _check(case: Case, run: Run, env: LogEnvironment) -> RunCheck:
    return check_run(run, flags=case.spec, env=env, catalogue=CATALOGUE, params=PARAMS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every uniform slowdown")
    args = parser.parse_args(argv)
    manifest: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    use = {entry["file"]: entry["use"] for entry in manifest["files"]}
    right = scored = healthy_named = library_named = gaps = 0
    runs = 0
    print("injected faults (slowdown at 64 MiB and more; the cause named first, | its twins)")
    uniform: list[str] = []
    for case in manifest_cases():
        run = case.run
        if use[case.file] == "exclude" or run.collective is None:
            continue
        if not any(r.size_bytes >= BANDWIDTH_MIN_BYTES for r in run.rows):
            continue
        try:
            nominal = resolve_cluster(CATALOGUE, case.spec)
        except IbcalcError:
            continue
        runs += 1
        text = (SWEEPS / case.file).read_text("utf-8", errors="replace")
        env = scan_environment(text, 1, run.line_end)
        sizes = [r.size_bytes for r in run.rows]
        base = predict(nominal, run.collective, sizes, dtype=run.dtype, params=PARAMS)
        healthy = named(_check(case, run, env))
        # a fault named on a healthy run is a false alarm; NCCL's choice of ring where the model
        # expects a tree is named as no fault (the library's), and counted apart
        hypothesis = [
            n for n in healthy if "=" in n and ".efficiency" not in n and n != RING_INSTEAD
        ]
        healthy_named += bool(hypothesis)
        library_named += RING_INSTEAD in healthy
        print(f"  {case.file[:52]:52} healthy        -> {' | '.join(healthy) or '-'}")
        for changes in faults(nominal, run):
            if "nics_per_node" in changes and len(env.net_devices) > changes["nics_per_node"]:
                continue
            try:
                alt = resolve_cluster(CATALOGUE, case.spec.replace(**changes))
            except IbcalcError:
                continue
            ests = predict(alt, run.collective, sizes, dtype=run.dtype, params=PARAMS)
            ratios = [
                a.time_s / b.time_s if a is not None and b is not None else 1.0
                for a, b in zip(ests, base, strict=True)
            ]
            slow = statistics.median(
                k
                for k, r in zip(ratios, run.rows, strict=True)
                if r.size_bytes >= BANDWIDTH_MIN_BYTES
            )
            if slow < MIN_SLOWDOWN:
                continue
            key = fault_key(changes)
            got = named(_check(case, scaled(run, ratios), env))
            ok = key in got
            scored += 1
            right += ok
            print(
                f"  {case.file[:52]:52} {key:<22} x{slow:5.2f} -> {' | '.join(got) or '-'}"
                f"  {'OK' if ok else 'MISS'}"
            )
        marks = []
        for factor in FACTORS:
            ratios = [factor if r.size_bytes >= 2**20 else 1.0 for r in run.rows]
            marks.append(flagged(_check(case, scaled(run, ratios), env)))
        first = marks.index(True) if True in marks else None
        gap = first is not None and not all(marks[first:])
        gaps += gap
        line = " ".join(f"{f:g}{'Y' if m else '.'}" for f, m in zip(FACTORS, marks, strict=True))
        since = f"x{FACTORS[first]:g}" if first is not None else "never"
        uniform.append(
            f"  {case.file[:52]:52} flagged from {since:<6}{' GAP' if gap else ''}"
            + (f"  {line}" if args.verbose else "")
        )
    print("\nuniform slowdowns from 1 MiB (Y: a warning or error finding)")
    print("\n".join(uniform))
    print(
        f"\n{runs} published runs: the injected cause named (first or as equally likely) in "
        f"{right} of {scored} degraded runs; a fault named on "
        f"{plural(healthy_named, 'healthy run')} (and NCCL's choice of ring, no fault, on "
        f"{library_named}); "
        f"{gaps} runs flagged at one slowdown and not at a larger one"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
