"""Derive the calibrated constants of the cost model from published measurements.

Each constant below is fitted to named rows of ``benchmarks/data/measurements.csv`` (a copy of
``shared/reference/measurements.csv``), by a closed-form rule where one exists:

* ``nvlink4.nvls_efficiency``: NVLS all-reduce moves S(m+1)/m per GPU, so
  B_nvls = algbw x (m+1)/m; median over H100 NVLS rows of 4 GiB and more (m = 5..8), / 450 GB/s.
* ``pcie3-host-staged.efficiency``: 2 x RTX 2080 Ti broadcast busbw at 1 GiB / 15.75 GB/s.
* ``pcie3-host-staged.duplex_efficiency``: median of all_reduce, all_gather, alltoall busbw at
  1 GiB / the broadcast busbw (both directions busy vs one).
* ``nvlink4-bridge.efficiency``: median H100 PCIe + bridge all_reduce busbw (nccl#1161) / 300 GB/s.
* ``p2p_efficiency``: median A100 sendrecv busbw at >= 256 MiB / the nvlink3 ring bandwidth.
* ``<link>.transport_latency``: the per-hop latency that, added to NCCL's hop latency, makes the
  engine reproduce the measured times of 8 B - 1 KiB rows (the engine's time is linear in it).
* ``simple_transport_factor`` and ``simple_fill_bytes``: one-way transport latencies per Simple
  network hop once the message reaches the fill size (below it the count falls linearly to
  NCCL's 2); grid search (factor 2..8 by 0.5, fill 1..256 MiB by powers of two) minimising the
  median busbw error of the multi-node EFA rows of 1 MiB and more.
* ``ll_net_Bps``: per-rank LL throughput across the network at small sizes: S / (t - latency)
  over the multi-node 32-64 KiB rows where NCCL runs LL; median, to 0.05 GB/s.
* ``nvlink4.efficiency`` (a check of NCCL's 20.6 of 25 GB/s per link against H100 ring rows),
  ``hdr.efficiency`` (DGX A100 8 x HDR ring, nccl#812, at an assumed large size),
  ``efa-100g.efficiency`` (2 x p4de rows of 1 GiB and more): current efficiency x
  median(measured / predicted busbw), to 0.005.

* ``nvls_tree_factor``: NVLS bandwidth left to an NVLS-tree, current x median(measured /
  predicted) over multi-node H100 rows of 1 GiB and more bound by NVLS inside the node.

The cost-model values (``calibrated.*`` in ``data/cost_params.yaml``, each naming its function
here as ``derived_by``) are varied by building modified copies of the built-in
:class:`~ibcalc.engine.params.CostParams` (``with_overrides``, the format of an override file),
the link values by modified copies of the catalogue; nothing global is assigned.

Order matters where one fit uses another's result; running the script twice reaches the fixed
point (the test checks that every value in use equals its derivation).

``python benchmarks/calibrate.py`` prints each derived value next to the one in use
(``--write FILE`` also writes the derived cost parameters as an override file, to use with
``IBCALC_COST_PARAMS``); ``tests/test_calibration.py`` re-runs these functions and fails if a
value in use drifts.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ibcalc.catalogue.cost_params import load_cost_params
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Collective, Protocol
from ibcalc.engine.types import busbw_factor as factor_of
from ibcalc.facade import estimate
from reference import EXTRA_CSV, Point, load_points

GiB = 2**30
#: Upper bound of the Simple-hop multiplier: a Simple step is at most four round trips
#: (ready, data, flush, completion), i.e. eight one-way transport latencies.
MAX_SIMPLE_FACTOR = 8.0


#: CSV row numbers read by any fit (filled by ``derive``); accuracy.py reports the others as
#: held out.
USED_ROWS: set[int] = set()


def _rows(points: list[Point], where: Callable[[Point], bool]) -> list[Point]:
    selected = [p for p in points if where(p)]
    USED_ROWS.update(p.row for p in selected)
    return selected


def nvls_efficiency_nvlink4(points: list[Point], catalogue: Catalogue) -> float:
    """NVLS bandwidth of NVLink 4 as a fraction of its 450 GB/s line rate."""
    rows = _rows(
        points,
        lambda p: (
            p.nodes == 1
            and p.gpus_per_node >= 5
            and p.collective is Collective.ALL_REDUCE
            and p.busbw_GBps is not None
            and p.size_bytes >= 4 * GiB
            and p.spec is not None
            and p.spec.nvls is not False
            and p.spec.system in ("dgx-h100", "aws-p5")
            and (p.algorithm is None or p.algorithm.value == "nvls")
        ),
    )
    values = []
    for p in rows:
        assert p.busbw_GBps is not None
        m = p.gpus_per_node
        algbw = p.busbw_GBps / factor_of(p.collective, m)
        values.append(algbw * (m + 1) / m)
    line = find_link(catalogue, "nvlink4").per_direction_Bps / 1e9
    return round(statistics.median(values) / line, 3)


def _rtx(points: list[Point], collective: Collective) -> float:
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.spec.system == "rtx2080ti-2"
            and p.collective is collective
            and p.size_bytes >= GiB
            and p.busbw_GBps is not None
        ),
    )
    return statistics.median(p.busbw_GBps for p in rows if p.busbw_GBps is not None)


def host_staged_efficiency(points: list[Point], catalogue: Catalogue) -> float:
    """One-direction efficiency of PCIe without P2P (broadcast)."""
    line = find_link(catalogue, "pcie3-host-staged").per_direction_Bps / 1e9
    return round(_rtx(points, Collective.BROADCAST) / line, 3)


def host_staged_duplex(points: list[Point], catalogue: Catalogue) -> float:
    """Fraction left when both directions are busy (all-reduce, all-gather, all-to-all)."""
    one_way = _rtx(points, Collective.BROADCAST)
    both = [
        _rtx(points, c)
        for c in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.ALL_TO_ALL)
    ]
    return round(statistics.median(both) / one_way, 3)


def bridge_efficiency(points: list[Point], catalogue: Catalogue) -> float:
    """H100 PCIe NVLink-bridge all-reduce bandwidth over the bridge's 300 GB/s."""
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.spec.system == "h100-pcie-nvl-pair"
            and p.busbw_GBps is not None
        ),
    )
    line = find_link(catalogue, "nvlink4-bridge").per_direction_Bps / 1e9
    return round(statistics.median(p.busbw_GBps for p in rows if p.busbw_GBps) / line, 3)


def p2p_efficiency(points: list[Point], catalogue: Catalogue) -> float:
    """sendrecv bandwidth over ring bandwidth on NVLink 3 (A100)."""
    rows = _rows(
        points,
        lambda p: (
            p.collective is Collective.SEND_RECV
            and p.size_bytes >= 256 * 2**20
            and p.busbw_GBps is not None
        ),
    )
    ring = find_link(catalogue, "nvlink3").achievable_Bps / 1e9
    return round(statistics.median(p.busbw_GBps for p in rows if p.busbw_GBps) / ring, 2)


def _with_latency(catalogue: Catalogue, link_id: str, latency_s: float) -> Catalogue:
    links = [
        link.model_copy(update={"transport_latency_s": latency_s}) if link.id == link_id else link
        for link in catalogue.links
    ]
    return catalogue.model_copy(update={"links": links})


def transport_latency(
    points: list[Point], catalogue: Catalogue, link_id: str, where: Callable[[Point], bool]
) -> float:
    """Per-hop transport latency (seconds) reproducing the small-message rows selected."""
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.status != "excluded"
            and p.time_us is not None
            and p.size_bytes <= 1024
            and where(p)
        ),
    )
    values = []
    for p in rows:
        assert p.spec is not None
        assert p.time_us is not None
        t0 = estimate(
            _with_latency(catalogue, link_id, 0.0),
            p.spec,
            p.collective,
            p.size_bytes,
            algorithm=p.algorithm,
        ).time_s
        t1 = estimate(
            _with_latency(catalogue, link_id, 1e-6),
            p.spec,
            p.collective,
            p.size_bytes,
            algorithm=p.algorithm,
        ).time_s
        slope = (t1 - t0) / 1e-6
        if slope > 0:
            values.append((p.time_us * 1e-6 - t0) / slope)
    return round(statistics.median(values) * 1e6, 1) * 1e-6


def _simple_terms(params: CostParams, factor: float, fill_bytes: float) -> CostParams:
    """``params`` with one grid point of the Simple transport terms (an in-memory override)."""
    why = "a grid point of benchmarks/calibrate.py::simple_transport_terms"
    return params.with_overrides(
        {
            "schema": "ibcalc-cost-params/1",
            "calibrated": {
                "simple_transport_factor": {"value": factor, "assumed": why},
                "simple_fill": {"value": f"{fill_bytes / 2**20:g} MiB", "assumed": why},
            },
        },
        label="calibrate.py grid",
    )


def _software_transport(catalogue: Catalogue, point: Point) -> bool:
    """True for rows whose scale-out link is a proxy-driven transport (EFA, TCPX/TCPXO)."""
    spec = point.spec
    if spec is None:
        return False
    inter = spec.inter
    if inter is None and spec.system is not None:
        inter = next(s.inter for s in catalogue.systems if s.id == spec.system)
    return inter is not None and find_link(catalogue, inter).transport_latency_s > 0


def simple_transport_terms(
    points: list[Point], catalogue: Catalogue, params: CostParams
) -> tuple[float, float]:
    """(factor, fill size): Simple's exposed transport latencies per network hop at large sizes,
    and the message size at which they are fully exposed.

    Grid: factor 2 (NCCL's own count) to 8 (four round trips per step: ready, data, flush,
    completion) in steps of 0.5; fill size 1 MiB to 256 MiB in powers of two. Criterion: median
    |log(predicted / measured busbw)| (to 0.001), ties broken by the mean, over the multi-node
    rows of 1 MiB and more over proxy-driven transports (EFA, GPUDirect-TCPXO), the sizes where
    Simple runs.
    """
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.status != "excluded"
            and p.busbw_GBps is not None
            and p.size_bytes >= 2**20
            and p.nodes > 1
            and p.nics_stated  # a busbw fit needs the NIC count
            and _software_transport(catalogue, p)
        ),
    )
    best = (2.0, float(2**20))
    best_key = (float("inf"), float("inf"))
    factor = 2.0
    while factor <= MAX_SIMPLE_FACTOR:
        fill = float(2**20)
        while fill <= 2**28:
            trial = _simple_terms(params, factor, fill)
            errors = []
            for p in rows:
                assert p.spec is not None
                assert p.busbw_GBps is not None
                est = estimate(
                    catalogue,
                    p.spec,
                    p.collective,
                    p.size_bytes,
                    algorithm=p.algorithm,
                    params=trial,
                )
                errors.append(abs(math.log(est.busbw_Bps / 1e9 / p.busbw_GBps)))
            key = (round(statistics.median(errors), 3), statistics.mean(errors))
            if key < best_key:
                best, best_key = (factor, fill), key
            fill *= 2
        factor += 0.5
    return best


def ll_net_throughput(points: list[Point], catalogue: Catalogue, params: CostParams) -> float:
    """Per-rank LL throughput across the network, from multi-node 64 KiB rows run with LL.

    For each row the engine's LL latency is taken as known (it reproduces the 8 B rows); the
    remaining time carries the 64 KiB: throughput = S / (t - latency). Median, in GB/s to 0.05.
    """
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.status != "excluded"
            and p.nodes > 1
            and p.time_us is not None
            and 32 * 1024 <= p.size_bytes <= 64 * 1024
        ),
    )
    values = []
    for p in rows:
        assert p.spec is not None
        assert p.time_us is not None
        est = estimate(
            catalogue, p.spec, p.collective, p.size_bytes, algorithm=p.algorithm, params=params
        )
        if est.best.protocol is not Protocol.LL:
            continue
        extra = p.time_us * 1e-6 - est.best.latency_s
        if extra > 0:
            values.append(p.size_bytes / extra)
    return round(statistics.median(values) / 1e9 / 0.05) * 0.05 * 1e9


def link_efficiency(
    points: list[Point], catalogue: Catalogue, link_id: str, where: Callable[[Point], bool]
) -> float:
    """Efficiency of ``link_id`` that makes the engine reproduce the busbw of the rows selected
    (rows of 1 GiB and more, where the link is the bottleneck): current efficiency x median of
    measured / predicted busbw, to 0.005."""
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.status != "excluded"
            and p.busbw_GBps is not None
            and p.size_bytes >= GiB
            and where(p)
        ),
    )
    current = find_link(catalogue, link_id).efficiency
    ratios = []
    for p in rows:
        assert p.spec is not None
        assert p.busbw_GBps is not None
        est = estimate(catalogue, p.spec, p.collective, p.size_bytes, algorithm=p.algorithm)
        ratios.append(p.busbw_GBps / (est.busbw_Bps / 1e9))
    return round(current * statistics.median(ratios) / 0.005) * 0.005


def nvls_tree_factor(points: list[Point], catalogue: Catalogue, params: CostParams) -> float:
    """NVLS bandwidth an NVLS-tree keeps: current factor x median(measured / predicted busbw) over
    the multi-node H100 rows of 1 GiB and more where NVLS inside the node is the bottleneck."""
    rows = _rows(
        points,
        lambda p: (
            p.spec is not None
            and p.status != "excluded"
            and p.busbw_GBps is not None
            and p.nodes > 1
            and p.size_bytes >= GiB
            and p.spec.system == "aws-p5"
        ),
    )
    ratios = []
    for p in rows:
        assert p.spec is not None
        assert p.busbw_GBps is not None
        est = estimate(
            catalogue, p.spec, p.collective, p.size_bytes, algorithm=p.algorithm, params=params
        )
        if est.best.algorithm.value == "nvlstree" and "NVLink SHARP" in est.best.bottleneck:
            ratios.append(p.busbw_GBps / (est.busbw_Bps / 1e9))
    current = params.calibrated.nvls_tree_factor
    return round(current * statistics.median(ratios) / 0.005) * 0.005


#: Cost parameters derived here (``calibrated.*`` in data/cost_params.yaml) -> the function that
#: derives each, as the YAML's ``derived_by`` names it.
COST_PARAM_FUNCTIONS = {
    "calibrated.simple_transport_factor": "simple_transport_terms",
    "calibrated.simple_fill": "simple_transport_terms",
    "calibrated.p2p_efficiency": "p2p_efficiency",
    "calibrated.ll_net_bandwidth": "ll_net_throughput",
    "calibrated.nvls_tree_factor": "nvls_tree_factor",
}


def derive(points: list[Point] | None = None) -> dict[str, tuple[float, float]]:
    """Every calibrated constant: name -> (derived value, value in use).

    Cost parameters are named as in data/cost_params.yaml (``calibrated.simple_fill``), link
    values as ``<link id>.<field>``. The values in use are the built-in ones (no override file).
    """
    pts = points if points is not None else load_points()
    pts = pts + load_points(EXTRA_CSV, first_row=10_002)
    cat = load_catalogue(use_env=False)
    params = load_cost_params(use_env=False)
    calibrated = params.calibrated
    links = {link.id: link for link in cat.links}

    def is_system(name: str) -> Callable[[Point], bool]:
        return lambda p: p.spec is not None and p.spec.system == name

    nvlink4 = links["nvlink4"]
    staged = links["pcie3-host-staged"]
    simple = simple_transport_terms(pts, cat, params)
    return {
        "nvlink4.nvls_efficiency": (
            nvls_efficiency_nvlink4(pts, cat),
            nvlink4.nvls_efficiency or 0,
        ),
        "pcie3-host-staged.efficiency": (host_staged_efficiency(pts, cat), staged.efficiency),
        "pcie3-host-staged.duplex_efficiency": (
            host_staged_duplex(pts, cat),
            staged.duplex_efficiency,
        ),
        "pcie3-host-staged.transport_latency_s": (
            transport_latency(pts, cat, "pcie3-host-staged", is_system("rtx2080ti-2")),
            staged.transport_latency_s,
        ),
        "nvlink4.efficiency (ring, checks NCCL's 20.6/25)": (
            link_efficiency(
                pts,
                cat,
                "nvlink4",
                lambda p: (
                    (p.nodes == 1 and p.algorithm is not None and p.algorithm.value == "ring")
                    or (
                        p.nodes == 1
                        and p.spec is not None
                        and p.spec.nvls is False
                        and p.gpus_per_node == 8
                    )
                ),
            ),
            nvlink4.efficiency,
        ),
        "hdr.efficiency": (
            link_efficiency(
                pts,
                cat,
                "hdr",
                lambda p: (
                    p.spec is not None
                    and p.spec.system == "dgx-a100"
                    and p.algorithm is not None
                    and p.algorithm.value == "ring"
                ),
            ),
            links["hdr"].efficiency,
        ),
        "efa-100g.efficiency": (
            link_efficiency(pts, cat, "efa-100g", is_system("aws-p4de")),
            links["efa-100g"].efficiency,
        ),
        "nvlink4-bridge.efficiency": (
            bridge_efficiency(pts, cat),
            links["nvlink4-bridge"].efficiency,
        ),
        "calibrated.p2p_efficiency": (p2p_efficiency(pts, cat), calibrated.p2p_efficiency),
        "efa-100g.transport_latency_s": (
            transport_latency(pts, cat, "efa-100g", is_system("aws-p4de")),
            links["efa-100g"].transport_latency_s,
        ),
        "gcp-tcpxo.transport_latency_s": (
            transport_latency(
                pts, cat, "gcp-tcpxo", lambda p: p.spec is not None and p.spec.inter == "gcp-tcpxo"
            ),
            links["gcp-tcpxo"].transport_latency_s,
        ),
        "slingshot-11.transport_latency_s": (
            transport_latency(
                pts,
                cat,
                "slingshot-11",
                lambda p: (
                    p.spec is not None
                    and p.spec.inter == "slingshot-11"
                    and p.collective is Collective.ALL_REDUCE
                ),
            ),
            links["slingshot-11"].transport_latency_s,
        ),
        "efa-v2.transport_latency_s": (
            transport_latency(pts, cat, "efa-v2", is_system("aws-p5")),
            links["efa-v2"].transport_latency_s,
        ),
        "calibrated.simple_transport_factor": (simple[0], calibrated.simple_transport_factor),
        "calibrated.simple_fill": (simple[1], calibrated.simple_fill_bytes),
        "calibrated.ll_net_bandwidth": (
            ll_net_throughput(pts, cat, params),
            calibrated.ll_net_Bps if calibrated.ll_net_Bps is not None else math.inf,
        ),
        "calibrated.nvls_tree_factor": (
            nvls_tree_factor(pts, cat, params),
            calibrated.nvls_tree_factor,
        ),
    }


#: How each derived cost parameter is written in YAML (the unit it carries); factors are plain.
_WRITE_AS: dict[str, Callable[[float], object]] = {
    "calibrated.simple_fill": lambda v: f"{v / 2**20:g} MiB",
    "calibrated.ll_net_bandwidth": lambda v: f"{v / 1e9:g} GB/s",
}


def override_text(derived: dict[str, tuple[float, float]]) -> str:
    """An override file (data/cost_params.yaml layout) holding every derived cost parameter,
    each with the function that derives it and the rows it reads."""
    builtin = load_cost_params(use_env=False).provenance
    groups: dict[str, dict[str, dict[str, object]]] = {}
    for name in COST_PARAM_FUNCTIONS:
        group, key = name.split(".")
        value = derived[name][0]
        prov = builtin[name]
        groups.setdefault(group, {})[key] = {
            "value": _WRITE_AS.get(name, float)(value),
            "derived_by": f"benchmarks/calibrate.py::{COST_PARAM_FUNCTIONS[name]}",
            "rows": prov.rows if prov.kind == "derived_by" else "benchmarks/data (this run)",
        }
    header = (
        "# Written by benchmarks/calibrate.py --write; use with IBCALC_COST_PARAMS=<this file>\n"
    )
    body = yaml.safe_dump({"schema": "ibcalc-cost-params/1", **groups}, sort_keys=False, width=96)
    return header + body


def main(argv: list[str] | None = None) -> int:
    """Print derived vs in-use values; ``--write FILE`` also writes the derived cost parameters
    as an override file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", type=Path, help="write the derived cost parameters as an override file"
    )
    args = parser.parse_args(argv)
    derived = derive()
    print(f"{'constant':<40} {'derived':>12} {'in use':>12}")
    for name, (value, used) in derived.items():
        flag = "" if abs(value - used) <= 1e-9 + 0.005 * abs(value) else "   <-- update"
        print(f"{name:<40} {value:>12.6g} {used:>12.6g}{flag}")
    if args.write is not None:
        args.write.write_text(override_text(derived), encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
