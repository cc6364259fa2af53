"""compare_layouts' quick mode (what ``train --compare`` runs) against its full mode.

Quick costs each phase through ``CollectivePlan.quick`` and the error band alone, leaving
``Phase.estimate`` None; the ranking, every total, warning, note, phase number and every printed
character must be what the full estimates give.
"""

from __future__ import annotations

import io

import pytest

from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import DType
from ibcalc.render.workload import render_compare
from ibcalc.workload.model import find_model
from ibcalc.workload.train import Parallelism, TrainResult, TrainSpec, compare_layouts

CASES = [
    ("llama3-8b", ClusterSpec(system="dgx-h100", nodes=2), {}),
    ("llama3-70b", ClusterSpec(system="dgx-h100", nodes=16), {"zero": 1}),
    ("llama3-70b", ClusterSpec(system="aws-p5", nodes=8), {"zero": 3, "sequence_parallel": True}),
    ("llama3-405b", ClusterSpec(system="gb200-nvl72", nodes=36), {"grad_dtype": DType.FP8_E4M3}),
    ("mixtral-8x7b", ClusterSpec(system="dgx-a100", nodes=8), {"global_batch": 256}),
    ("deepseek-v3", ClusterSpec(system="gcp-a3-mega", nodes=16), {"backward_s": 2.0}),
    ("llama3-8b", ClusterSpec(system="pcie-8gpu", nodes=4), {}),
    (
        "llama3-70b",
        ClusterSpec(system="dgx-h100", nodes=16, sites=2, wan="wan-10g"),
        {"hierarchical": True, "zero": 1},
    ),
]


def _numbers(result: TrainResult) -> tuple[object, ...]:
    return (
        result.spec,
        result.totals,
        result.warnings,
        result.assumptions,
        [p.model_dump(exclude={"estimate"}) for p in result.phases],
    )


def _printed(results: list[TrainResult], skipped: list[str], fmt: str) -> str:
    out = io.StringIO()
    render_compare(results, skipped, fmt, stream=out)
    return out.getvalue()


@pytest.mark.parametrize(("model", "spec", "extra"), CASES, ids=lambda v: str(v)[:40])
def test_quick_search_equals_full(
    builtin_catalogue: Catalogue, model: str, spec: ClusterSpec, extra: dict[str, object]
) -> None:
    cluster = resolve_cluster(builtin_catalogue, spec)
    job = TrainSpec(
        model=find_model(model),
        parallel=Parallelism(dp=cluster.ranks),
        tflops=400 if "backward_s" not in extra else None,
        **extra,  # type: ignore[arg-type]
    )
    full, full_skipped = compare_layouts(builtin_catalogue, cluster, job, quick=False)
    quick, quick_skipped = compare_layouts(builtin_catalogue, cluster, job)
    assert full, "a search with no valid layout proves nothing"
    assert quick_skipped == full_skipped
    assert [_numbers(r) for r in quick] == [_numbers(r) for r in full]
    assert all(p.estimate is None for r in quick for p in r.phases)
    assert all(p.estimate is not None for r in full for p in r.phases)
    for fmt in ("table", "json"):
        assert _printed(quick, quick_skipped, fmt) == _printed(full, full_skipped, fmt)
