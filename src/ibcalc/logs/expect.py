"""What the model expects for a log's sizes, and the what-ifs a diagnosis re-runs it under.

:func:`predict` runs the engine at each size of a run (None where it cannot);
:func:`catalogue_with_link` changes one link of a catalogue (a hypothesis or a fitted rate);
:class:`RunContext` is what every diagnosis of a checked run works on: the run, its cluster, the
checked rows and the model's inputs, to re-run the model on another cluster
(docs/nccl-check.md, "Diagnoses").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import ResolvedCluster
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, DType, Estimate
from ibcalc.errors import IbcalcError
from ibcalc.facade import CollectivePlan, QuickEstimate, estimate_on
from ibcalc.logs.env import LogEnvironment
from ibcalc.logs.records import Row, Run
from ibcalc.logs.results import RowCheck
from ibcalc.memo import IdentityMemo

_T = TypeVar("_T")

__all__ = [
    "RunContext",
    "catalogue_with_link",
    "predict",
    "predict_times",
    "quick_estimates",
]


def catalogue_with_link(catalogue: Catalogue, link_id: str, **update: Any) -> Catalogue:
    """A copy of ``catalogue`` whose link ``link_id`` has the fields in ``update`` changed
    (engine units: ``efficiency``, ``nvls_efficiency``, ``transport_latency_s`` ...)."""
    links = [
        link.model_copy(update=update) if link.id == link_id else link for link in catalogue.links
    ]
    return catalogue.model_copy(update={"links": links})


def predict(
    cluster: ResolvedCluster,
    collective: Collective,
    sizes: Sequence[float],
    *,
    dtype: str | None,
    params: CostParams,
    algorithm: Algorithm | None = None,
    shared: IdentityMemo[Estimate | None] | None = None,
) -> list[Estimate | None]:
    """The model's estimate at each size (None where it cannot run: size rounds to 0, a forced
    algorithm does not apply). A size the log repeats is worked out once.

    ``shared``: estimates other runs of the log asked for, taken where they were made on an
    equal cluster with these very parameters (clusters matched by value, parameters by
    identity, as :func:`~ibcalc.engine.plan.plan_for` matches them) and added to.
    :func:`~ibcalc.logs.check.check_log` keeps one for a log's runs: each run resolves a
    cluster of its own, most often an equal one, and a full estimate takes about 1 ms (a log of
    3,000 one-row runs had worked out the one estimate 3,000 times). Estimates are frozen and
    only read, so runs may share them."""
    run_dtype = dtype or DType.FP32

    def estimate(size: float) -> Estimate | None:
        try:
            return estimate_on(
                cluster,
                collective,
                size,
                dtype=run_dtype,
                algorithm=algorithm,
                params=params,
                sharp_what_if=False,
            )
        except IbcalcError:
            return None

    if shared is None:
        return _each_size(sizes, estimate)
    return _each_size(
        sizes,
        lambda size: shared.get(
            (cluster, collective, size, run_dtype, algorithm, id(params)),
            (params,),
            lambda: estimate(size),
        ),
    )


def _each_size(sizes: Sequence[float], work: Callable[[float], _T]) -> list[_T | None]:
    """``work`` at each size, once per distinct size (a log may repeat one); None where it
    raises :class:`~ibcalc.errors.IbcalcError` (a size that rounds to 0, a forced algorithm
    that does not apply)."""
    known: dict[float, _T | None] = {}
    for size in sizes:
        if size not in known:
            try:
                known[size] = work(size)
            except IbcalcError:
                known[size] = None
    return [known[size] for size in sizes]


def quick_estimates(
    cluster: ResolvedCluster,
    collective: Collective,
    sizes: Sequence[float],
    *,
    dtype: str | None,
    params: CostParams,
    algorithm: Algorithm | None = None,
) -> tuple[CollectivePlan | None, list[QuickEstimate | None]]:
    """The numbers of :func:`predict`'s estimates, the same to the bit, without building them
    (:class:`~ibcalc.facade.CollectivePlan`), and the plan that gives their error bands (None
    where the collective cannot run there). For the diagnoses that re-run the model under many
    hypotheses and fitted values: a bad run's rate fit had taken about 1,700 full estimates, a
    second per run, and a run of 5,000 sizes 40 s."""
    try:
        plan = CollectivePlan(
            cluster, collective, dtype=dtype or DType.FP32, algorithm=algorithm, params=params
        )
    except IbcalcError:
        return None, [None for _ in sizes]
    return plan, _each_size(sizes, plan.quick)


def predict_times(
    cluster: ResolvedCluster,
    collective: Collective,
    sizes: Sequence[float],
    *,
    dtype: str | None,
    params: CostParams,
    algorithm: Algorithm | None = None,
) -> list[float | None]:
    """The times of :func:`predict`'s estimates (:func:`quick_estimates`)."""
    _, quick = quick_estimates(
        cluster, collective, sizes, dtype=dtype, params=params, algorithm=algorithm
    )
    return [q.time_s if q is not None else None for q in quick]


@dataclass(frozen=True)
class RunContext:
    """Everything a diagnosis needs: the run, its cluster, the rows and the model's inputs."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    run: Run
    cluster: ResolvedCluster
    catalogue: Catalogue
    params: CostParams
    collective: Collective
    dtype: str | None
    algorithm: Algorithm | None
    rows: list[RowCheck]
    rows_in: list[Row]
    estimates: list[Estimate]
    env: LogEnvironment
    network_known: bool
    nics_known: bool
    #: the NCCL release whose tuner chooses here: the caller's (--nccl-version), else the log's
    release: str | None = None
    #: the system stands in for a node no rule knows (an AMD GPU's), not given by the caller
    stand_in: bool = False
    #: the cluster fields the caller gave (flags, or a design's keys); None: the caller gave the
    #: resolved cluster whole
    given: frozenset[str] | None = None

    @property
    def multi(self) -> bool:
        """True when the run crosses the scale-out network."""
        return self.cluster.topology.domains > 1 and self.cluster.inter is not None

    def quick_under(
        self, cluster: ResolvedCluster, algorithm: Algorithm | None = None
    ) -> tuple[CollectivePlan | None, list[QuickEstimate | None]]:
        """:func:`quick_estimates` on ``cluster`` at every checked size, with ``algorithm``
        forced (default: the run's, or NCCL's choice)."""
        return quick_estimates(
            cluster,
            self.collective,
            [r.size_bytes for r in self.rows],
            dtype=self.dtype,
            params=self.params,
            algorithm=algorithm or self.algorithm,
        )

    def env_evidence(self, changes: Mapping[str, Any] | None = None) -> list[str]:
        """What NCCL's output says about the transport and settings a cause may rest on; with
        ``changes`` turning NVLS off, NCCL's line saying NVLS is not available too."""
        env = self.env
        out: list[str] = []
        # a missing network port bears on network causes only (and on the fitted rates)
        network = changes is None or bool({"nics_per_node", "host_pcie", "inter"} & set(changes))
        if env.port_shortfall is not None and network:
            out.append(
                f"{env.port_shortfall.value} (line {env.port_shortfall.line}): a port down or "
                "excluded"
            )
        if env.gdr is False and env.gdr_line is not None:
            out.append(f"network channels without GPUDirect RDMA (line {env.gdr_line})")
        if (socket := env.socket_network) is not None:
            out.append(f"NCCL uses its TCP socket transport (line {socket.line})")
        for name in ("NCCL_IB_DISABLE", "NCCL_NET_GDR_LEVEL", "NCCL_IB_HCA", "NCCL_P2P_DISABLE"):
            fact = env.settings.get(name)
            if fact is not None:
                out.append(f"{name}={fact.value} (line {fact.line})")
        up = self.cluster.topology.up
        if (
            changes is not None
            and changes.get("nvls") is False
            and env.nvls_unavailable is not None
            # only where the expectation has NVLS to turn off: on a board without NVSwitch the
            # line is normal, and it had been offered for a PCIe fault (review CO)
            and up is not None
            and up.nvls_bw_Bps is not None
        ):
            out.append(f"NCCL: '{env.nvls_unavailable.value}' (line {env.nvls_unavailable.line})")
        return out
