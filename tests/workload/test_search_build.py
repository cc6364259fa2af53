"""How compare_layouts builds its results fast, held to what the plain way gives.

A search builds each layout's Parallelism, TrainSpec, phases, totals and result without
validating again (``ibcalc.trusted``): each must equal its validated twin field for field, in
the same order, with the same fields counted as given, and dump to the same JSON. It places
each group once per cluster for every search (``train._PLACED``, refusals included): a search
on one cluster must not take another's placements, and a memoised refusal must not hold the
search that met it.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.errors import WorkloadError
from ibcalc.memo import IdentityMemo
from ibcalc.trusted import trusted
from ibcalc.workload import train
from ibcalc.workload.model import find_model
from ibcalc.workload.phases import Phase
from ibcalc.workload.train import (
    Parallelism,
    TrainResult,
    TrainSpec,
    TrainTotals,
    compare_layouts,
)


def _twin_of(model: BaseModel) -> BaseModel:
    """``model`` validated afresh from the fields it counts as given."""
    return type(model)(**{name: getattr(model, name) for name in model.model_fields_set})


def _same_as_validated(model: BaseModel) -> None:
    twin = _twin_of(model)
    assert model == twin
    assert list(model.__dict__) == list(twin.__dict__) == list(type(model).model_fields)
    assert model.model_fields_set == twin.model_fields_set
    assert model.model_dump_json() == twin.model_dump_json()
    for name, value in model.__dict__.items():  # 0.0, not 0; a tuple, not a list
        assert type(value) is type(twin.__dict__[name]), name


@pytest.mark.parametrize(
    ("model", "spec", "extra", "quick"),
    [
        ("mixtral-8x7b", ClusterSpec(system="dgx-h100", nodes=4), {"tflops": 400.0}, True),
        ("deepseek-v3", ClusterSpec(system="gb200-nvl72", nodes=18), {"zero": 1}, True),
        ("llama3-8b", ClusterSpec(system="dgx-h100", nodes=2), {"backward_s": 1.0}, False),
        (
            "llama3-8b",
            ClusterSpec(system="dgx-h100", nodes=2, sites=2, wan="wan-10g"),
            {"hierarchical": True},
            True,
        ),
        # one GPU: no phase, every sum over none
        ("llama3-8b", ClusterSpec(system="dgx-h100", nodes=1, gpus_per_node=1), {}, True),
    ],
    ids=lambda v: str(v)[:30],
)
def test_search_results_equal_their_validated_twins(
    builtin_catalogue: Catalogue,
    model: str,
    spec: ClusterSpec,
    extra: dict[str, object],
    quick: bool,
) -> None:
    # one GPU is a cluster only where no collective runs
    cluster = resolve_cluster(builtin_catalogue, spec, collectives=spec.gpus_per_node != 1)
    job = TrainSpec(model=find_model(model), parallel=Parallelism(dp=cluster.ranks), **extra)
    results, _ = compare_layouts(builtin_catalogue, cluster, job, quick=quick)
    assert results
    for result in results:
        assert isinstance(result, TrainResult)
        assert isinstance(result.totals, TrainTotals)
        for part in (result, result.spec, result.spec.parallel, result.totals, *result.phases):
            _same_as_validated(part)
        for phase in result.phases:
            assert isinstance(phase, Phase)
            assert ("estimate" in phase.model_fields_set) is not quick


def test_a_search_takes_no_other_clusters_placements(
    builtin_catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same groups on two clusters of as many GPUs place differently (an NVL72 rack holds a
    tp 16 group its 4-GPU trays split; 8-GPU DGX nodes do not, and refuse some dp groups the rack
    places): a search after another's must equal it run alone."""
    job = TrainSpec(model=find_model("llama3-70b"), parallel=Parallelism(dp=144), tflops=400)
    rack = resolve_cluster(builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=36))
    dgx = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=18))

    def search(cluster: ResolvedCluster) -> list[str]:
        results, skipped = compare_layouts(builtin_catalogue, cluster, job)
        return [r.model_dump_json() for r in results] + skipped

    for first, second in ((rack, dgx), (dgx, rack)):
        monkeypatch.setattr(train, "_PLACED", IdentityMemo(size=8192))
        alone = search(second)
        monkeypatch.setattr(train, "_PLACED", IdentityMemo(size=8192))
        search(first)
        assert search(second) == alone
        assert search(second) == alone  # and again, from the memo


def test_a_memoised_refusal_holds_no_search(
    builtin_catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group that cannot be placed is memoised as its refusal without a traceback: the
    traceback's frames had held the search that first asked, every result of it included, for
    as long as the memo kept the refusal. Asked again, it refuses as before."""
    monkeypatch.setattr(train, "_PLACED", IdentityMemo(size=8192))
    job = TrainSpec(model=find_model("llama3-70b"), parallel=Parallelism(dp=144), tflops=400)
    dgx = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=18))
    _, skipped = compare_layouts(builtin_catalogue, dgx, job)
    refusals = [
        value for _, value in train._PLACED._entries.values() if isinstance(value, WorkloadError)
    ]
    assert refusals
    assert all(r.__traceback__ is None and r.__context__ is None for r in refusals)
    assert compare_layouts(builtin_catalogue, dgx, job)[1] == skipped


def test_frozen_models_share_one_fields_set(builtin_catalogue: Catalogue) -> None:
    """The results of a search (frozen models) share one fields set (ibcalc.trusted), which
    model_copy copies before adding to it; a model that is not frozen gets a set of its own."""
    job = TrainSpec(model=find_model("llama3-8b"), parallel=Parallelism(dp=16), tflops=400)
    dgx = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    first, second = compare_layouts(builtin_catalogue, dgx, job)[0][:2]
    assert first.model_fields_set is second.model_fields_set
    assert first.spec.model_fields_set is second.spec.model_fields_set
    given = set(first.model_fields_set)
    copied = first.model_copy(update={"rank_order": train.DP_LAST})
    assert "rank_order" in copied.model_fields_set
    assert first.model_fields_set == given == second.model_fields_set

    class Open(BaseModel):
        value: int

    one, two = (trusted(Open, {"value": 1}) for _ in range(2))
    assert one.model_fields_set == two.model_fields_set == {"value"}
    assert one.model_fields_set is not two.model_fields_set
