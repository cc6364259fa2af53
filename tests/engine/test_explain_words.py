"""Words of the derivation that name where a constant comes from."""

from __future__ import annotations

from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective
from ibcalc.facade import estimate_on


def _terms(catalogue: Catalogue, system: str) -> str:
    cluster = resolve_cluster(catalogue, ClusterSpec(system=system, nodes=1))
    est = estimate_on(cluster, Collective.ALL_REDUCE, 1e6)
    return " ".join(term.detail for term in est.best.terms)


def test_a_link_priced_on_the_tuners_nvlink_row_is_named(builtin_catalogue: Catalogue) -> None:
    """MI300X's xGMI takes NCCL's (and RCCL's) NVLink hop latency: the derivation had said
    'NCCL nvlink hop' with no word of xGMI. NVLink and PCIe links keep the plain wording."""
    assert "xgmi-mi300x is priced on that row" in _terms(builtin_catalogue, "mi300x-8")
    assert "priced on that row" not in _terms(builtin_catalogue, "dgx-a100")
    assert "priced on that row" not in _terms(builtin_catalogue, "pcie-8gpu")
