"""Bit-identity check of the cost engine: dump every estimate of a broad grid, compare later.

A change meant to make the engine faster must not move any number or any word of an estimate.
``dump`` writes the full ``Estimate.model_dump(mode="json")`` (or the error raised) of every case
of the grid to a gzipped JSON-lines file; ``check`` recomputes the grid and compares each case
exactly (JSON equality: floats round-trip through ``repr``), printing the first differences.

The grid: every collective; sizes 1 B .. 16 GiB in powers of two and some odd sizes; systems and
fabrics from the catalogue (one node, multi-node InfiniBand with and without SHARP, EFA and TCPX
plugin transports, PCIe boxes, WAN sites, oversubscription, ``gpus_per_process`` > 1); fp32, bf16
and fp8; every forced algorithm and protocol at a few sizes; the built-in cost parameters and an
override that changes tuner and physical values.

    python benchmarks/engine_identity.py dump /tmp/engine_identity.jsonl.gz
    python benchmarks/engine_identity.py check /tmp/engine_identity.jsonl.gz [--mask-sizes]
    python benchmarks/engine_identity.py check-quick

``check-quick`` needs no dump: it holds ``CollectivePlan.quick`` (the size-only kernels of
``engine/kernels.py``) to ``estimate_on`` on every case of the grid, numbers and errors.

``--search`` dumps and checks the layout searches ``engine_speed.py`` times instead (60 searches,
5,445 layouts): each result's JSON and the fields it counts as set, in ranking order, and the
layouts skipped, by search:

    python benchmarks/engine_identity.py dump /tmp/search_identity.jsonl.gz --search
    python benchmarks/engine_identity.py check /tmp/search_identity.jsonl.gz --search

``--mask-sizes`` compares explanation text with the byte counts masked out (the sizes in
``Term.detail`` were once printed as ``2.621e+07 B`` and now as ``26.2 MB``): every number of the
estimate is still compared exactly.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from engine_speed import SEARCH_GPUS, SEARCH_SYSTEMS  # this directory's, as the script runs
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import load_catalogue
from ibcalc.cluster.resolve import ClusterSpec, ResolvedCluster, resolve_cluster
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, DType, Protocol
from ibcalc.errors import IbcalcError
from ibcalc.facade import CollectivePlan, estimate_on
from ibcalc.workload.model import MODEL_PRESETS, find_model
from ibcalc.workload.train import Parallelism, TrainSpec, compare_layouts

#: (label, spec) of every cluster in the grid.
SPECS: list[tuple[str, ClusterSpec]] = [
    ("dgx-h100x1", ClusterSpec(system="dgx-h100", nodes=1)),
    ("dgx-h100x2", ClusterSpec(system="dgx-h100", nodes=2)),
    ("dgx-h100x16-sharp", ClusterSpec(system="dgx-h100", nodes=16, sharp=True)),
    ("dgx-h100x8-nonvls", ClusterSpec(system="dgx-h100", nodes=8, nvls=False)),
    ("dgx-a100x4-sharp", ClusterSpec(system="dgx-a100", nodes=4, sharp=True)),
    ("dgx-a100x5", ClusterSpec(system="dgx-a100", nodes=5)),
    ("aws-p5x16", ClusterSpec(system="aws-p5", nodes=16)),
    ("aws-p5x2-g8", ClusterSpec(system="aws-p5", nodes=2, gpus_per_process=8)),
    ("aws-p4dx3", ClusterSpec(system="aws-p4d", nodes=3)),
    ("gcp-a3-megax2", ClusterSpec(system="gcp-a3-mega", nodes=2)),
    ("gcp-a3-highx4", ClusterSpec(system="gcp-a3-high", nodes=4)),
    ("pcie-8gpu", ClusterSpec(system="pcie-8gpu", nodes=1)),
    ("pcie-8gpux2", ClusterSpec(system="pcie-8gpu", nodes=2, inter="roce-100g")),
    ("l40s-pciex2", ClusterSpec(system="l40s-pcie", nodes=2, inter="roce-200g", nics_per_node=2)),
    ("mi300x-8x4", ClusterSpec(system="mi300x-8", nodes=4)),
    ("gb200-nvl72x36", ClusterSpec(system="gb200-nvl72", nodes=36)),
    ("h100x1-g4", ClusterSpec(system="dgx-h100", nodes=1, gpus_per_process=4)),
    ("roce-2to1", ClusterSpec(system="dgx-h100", nodes=32, oversubscription=2.0)),
    (
        "ndr-3to1-half",
        ClusterSpec(system="dgx-h100", nodes=12, oversubscription=3.0, cross_leaf_fraction=0.5),
    ),
    ("wan-2sites", ClusterSpec(system="dgx-h100", nodes=4, sites=2, wan="wan-100g")),
    (
        "wan-4sites",
        ClusterSpec(system="dgx-a100", nodes=8, sites=4, wan="wan-10g", wan_links=2),
    ),
    ("one-gpu-nodes", ClusterSpec(gpus_per_node=1, nodes=8, inter="ndr")),
    ("one-gpu-nodes-efa", ClusterSpec(gpus_per_node=1, nodes=3, inter="efa-v2")),
    ("slingshot", ClusterSpec(system="alps-gh200", nodes=16)),
    ("rtx2080ti-2", ClusterSpec(system="rtx2080ti-2", nodes=1)),
    ("nvlink4-mesh4x2", ClusterSpec(intra="nvlink4-mesh4", gpus_per_node=4, nodes=2, inter="hdr")),
]

SIZES: list[float] = [
    *(float(2**k) for k in range(35)),
    3.0,
    7.0,
    100.0,
    1000.0,
    12345.0,
    65537.0,
    1e6 + 7,
    3.3e7,
    123456789.0,
    3e9,
]
FORCED_SIZES = [8.0, 4096.0, 65536.0, 2.0**20, 2.0**26, 3e9]
DTYPES = [DType.FP32, DType.BF16, DType.FP8]

#: An override that moves physical and tuner values (a ``--cost-params`` file's effect).
OVERRIDE: dict[str, Any] = {
    "schema": "ibcalc-cost-params/1",
    "nccl_tuner": {
        "base_latency": {"value": {"ring": {"LL": "16.6 us"}}, "source": "identity grid"},
    },
    "calibrated": {
        "simple_transport_factor": {"value": 5.0, "assumed": "identity grid"},
        "p2p_efficiency": {"value": 0.7, "assumed": "identity grid"},
        "alltoall_efficiency": {"value": 0.8, "assumed": "identity grid"},
    },
    "tuner_view": {
        "calibrated": {"simple_transport_factor": {"value": 3, "assumed": "identity grid"}},
    },
}


def params_sets() -> list[tuple[str, CostParams]]:
    """The built-in cost parameters and an override of them."""
    builtin = builtin_cost_params()
    return [("builtin", builtin), ("override", builtin.with_overrides(OVERRIDE))]


def clusters() -> list[tuple[str, ResolvedCluster]]:
    """Every cluster of the grid, resolved against the built-in catalogue."""
    catalogue = load_catalogue(use_env=False)
    return [(label, resolve_cluster(catalogue, spec)) for label, spec in SPECS]


Case = tuple[str, ResolvedCluster, Collective, float, DType, Algorithm | None, Protocol | None]


def cases(resolved: list[tuple[str, ResolvedCluster]], *, forced: bool = True) -> Iterator[Case]:
    """Every case: NCCL-like choices at every size and dtype, forced ones at a few sizes."""
    for label, cluster in resolved:
        for collective in Collective:
            for dtype in DTYPES:
                sizes = SIZES if dtype is DType.FP32 else SIZES[::3]
                for size in sizes:
                    yield label, cluster, collective, size, dtype, None, None
            if not forced:
                continue
            for algorithm in (None, *Algorithm):
                for protocol in (None, *Protocol):
                    if algorithm is None and protocol is None:
                        continue
                    for size in FORCED_SIZES:
                        yield label, cluster, collective, size, DType.FP32, algorithm, protocol


def run(case: Case, params: CostParams) -> dict[str, Any]:
    """The JSON of one case's estimate, or of the error it raises."""
    _, cluster, collective, size, dtype, algorithm, protocol = case
    try:
        est = estimate_on(
            cluster,
            collective,
            size,
            dtype=dtype,
            algorithm=algorithm,
            protocol=protocol,
            params=params,
        )
    except IbcalcError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    return est.model_dump(mode="json")


def quick_matches(case: Case, params: CostParams) -> str | None:
    """None when ``CollectivePlan.quick`` gives the numbers of the case's full estimate to the
    bit (or raises the same error), else what differs."""
    _, cluster, collective, size, dtype, algorithm, protocol = case
    kwargs: dict[str, Any] = {"dtype": dtype, "algorithm": algorithm, "protocol": protocol}
    try:
        est = estimate_on(cluster, collective, size, params=params, **kwargs)
        full: Any = (
            est.size_bytes,
            est.time_s,
            est.algbw_Bps,
            est.busbw_Bps,
            est.best.algorithm,
            est.best.protocol,
        )
    except IbcalcError as exc:
        full = (type(exc).__name__, str(exc))
    try:
        q = CollectivePlan(cluster, collective, params=params, **kwargs).quick(size)
        quick: Any = (q.size_bytes, q.time_s, q.algbw_Bps, q.busbw_Bps, q.algorithm, q.protocol)
    except IbcalcError as exc:
        quick = (type(exc).__name__, str(exc))
    return None if quick == full else f"full {full!r}, quick {quick!r}"


def key_of(case: Case, params_label: str) -> str:
    label, _, collective, size, dtype, algorithm, protocol = case
    algo = algorithm.value if algorithm else "auto"
    proto = protocol.value if protocol else "auto"
    return f"{params_label}/{label}/{collective.value}/{size!r}/{dtype.value}/{algo}/{proto}"


def records(*, quick: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    """(key, estimate JSON) of every case; with ``quick``, (key, {"quick": what differs}) of
    each case whose ``CollectivePlan.quick`` differs from its full estimate."""
    resolved = clusters()
    for params_label, params in params_sets():
        for case in cases(resolved, forced=params_label == "builtin"):
            if quick:
                differs = quick_matches(case, params)
                yield key_of(case, params_label), {"quick": differs} if differs else {}
            else:
                yield key_of(case, params_label), run(case, params)


def search_records() -> Iterator[tuple[str, dict[str, Any]]]:
    """(key, results) of every layout search ``engine_speed.py`` times: each result's JSON and
    the fields it counts as set, in ranking order, and the layouts skipped."""
    catalogue = load_catalogue(use_env=False)
    for system, nodes_of in SEARCH_SYSTEMS:
        for gpus in SEARCH_GPUS:
            spec = ClusterSpec(system=system, nodes=nodes_of(gpus))
            cluster = resolve_cluster(catalogue, spec)
            for name in MODEL_PRESETS:
                job = TrainSpec(
                    model=find_model(name), parallel=Parallelism(dp=cluster.ranks), tflops=400
                )
                results, skipped = compare_layouts(catalogue, cluster, job)
                yield (
                    f"search/{system}/{gpus}/{name}",
                    {
                        "results": [
                            {"json": r.model_dump(mode="json"), "given": sorted(r.model_fields_set)}
                            for r in results
                        ],
                        "skipped": skipped,
                    },
                )


_SIZE_TEXT = re.compile(r"\d[\d.]*(?:e[+-]\d+)? (?:[KMGTP]i?)?B\b")


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return _SIZE_TEXT.sub("<size>", value)
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    return value


def _diff(path: str, old: Any, new: Any, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            _diff(f"{path}.{k}", old.get(k, "<missing>"), new.get(k, "<missing>"), out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(f"{path}[{i}]", a, b, out)
    elif old != new:
        out.append(f"  {path}: {old!r} -> {new!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("dump", "check", "check-quick"))
    parser.add_argument("path", nargs="?")
    parser.add_argument("--mask-sizes", action="store_true", help="mask byte counts in text")
    parser.add_argument(
        "--search", action="store_true", help="engine_speed.py's layout searches, not the grid"
    )
    args = parser.parse_args()
    every = search_records if args.search else records
    if args.mode == "check-quick":
        seen = bad = 0
        for key, record in records(quick=True):
            seen += 1
            if record:
                bad += 1
                if bad <= 5:
                    print(f"QUICK DIFFERS {key}: {record['quick']}")
        print(f"{seen} cases, {bad} where CollectivePlan.quick differs from estimate_on")
        return 1 if bad else 0
    if args.path is None:
        parser.error("dump and check need a path")
    if args.mode == "dump":
        count = 0
        with gzip.open(args.path, "wt", encoding="utf-8") as fh:
            for key, record in every():
                fh.write(json.dumps({"key": key, "value": record}) + "\n")
                count += 1
        print(f"{count} cases written to {args.path}")
        return 0
    with gzip.open(args.path, "rt", encoding="utf-8") as fh:
        before = {}
        for line in fh:
            item = json.loads(line)
            before[item["key"]] = item["value"]
    bad = 0
    seen = 0
    for key, record in every():
        seen += 1
        old = before.get(key)
        if args.mask_sizes and old is not None:
            old, record = _mask(old), _mask(record)
        if old != record:
            bad += 1
            if bad <= 5:
                lines: list[str] = []
                _diff("", old, record, lines)
                print(f"DIFFERS {key}")
                print("\n".join(lines[:12]))
    if seen != len(before):
        print(f"case count changed: {len(before)} before, {seen} now")
        bad += 1
    print(f"{seen} cases, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
