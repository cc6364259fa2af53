"""How compare_layouts places its groups: once per cluster for every search
(``train._PLACED``, refusals included). A search on one cluster must not take another's
placements.
"""

from __future__ import annotations

import pytest

from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.memo import IdentityMemo
from ibcalc.workload import train
from ibcalc.workload.model import find_model
from ibcalc.workload.train import Parallelism, TrainSpec, compare_layouts


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
