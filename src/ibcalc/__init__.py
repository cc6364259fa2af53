"""ibcalc: how fast can this cluster move these bytes?

A sourced interconnect catalogue, a tiered cluster model and an analytic collective-cost engine
reported in nccl-tests conventions.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ibcalc.catalogue.cost_params import load_cost_params
    from ibcalc.catalogue.load import find_link, find_system, load_catalogue
    from ibcalc.catalogue.models import Catalogue, Link, System
    from ibcalc.catalogue.releases import for_release
    from ibcalc.cluster.resolve import ClusterSpec, ResolvedCluster, resolve_cluster
    from ibcalc.design.check import DesignCheck, check_design, load_design
    from ibcalc.design.schema import Design
    from ibcalc.engine.params import CostParams
    from ibcalc.engine.types import Algorithm, Collective, Cost, DType, Estimate, HostCpu, Protocol
    from ibcalc.errors import (
        AlgorithmNotApplicableError,
        CatalogueError,
        ClusterError,
        DesignError,
        FabricError,
        FieldError,
        IbcalcError,
        InputFileError,
        LogParseError,
        OutputError,
        PlotError,
        SizeTooSmallError,
        UnitError,
        UnknownNameError,
        ValidationProblem,
        WorkloadError,
        WrongTypeError,
        fill_fields,
    )
    from ibcalc.fabric.sizing import FabricSizing, size_fat_tree
    from ibcalc.facade import CollectivePlan, QuickEstimate, estimate, estimate_many, estimate_on
    from ibcalc.gap import GapResult, TpWhatIf, common_pairings, tp_whatif
    from ibcalc.results import EstimateResult
    from ibcalc.units import parse_bandwidth, parse_size, parse_time

__version__ = "0.1.0"

# Every public name loads its module on first use: the command line imports this package (for
# __version__, and as the parent of ibcalc.cli) on every call, and `ibcalc --help` or
# `ibcalc --version` need none of the catalogue, the engine or pydantic.
_LAZY = {
    "Algorithm": "ibcalc.engine.types",
    "Catalogue": "ibcalc.catalogue.models",
    "ClusterSpec": "ibcalc.cluster.resolve",
    "Collective": "ibcalc.engine.types",
    "CollectivePlan": "ibcalc.facade",
    "CostParams": "ibcalc.engine.params",
    "DType": "ibcalc.engine.types",
    "Estimate": "ibcalc.engine.types",
    "EstimateResult": "ibcalc.results",
    "IbcalcError": "ibcalc.errors",
    "FabricError": "ibcalc.errors",
    "LogParseError": "ibcalc.errors",
    "OutputError": "ibcalc.errors",
    "PlotError": "ibcalc.errors",
    "AlgorithmNotApplicableError": "ibcalc.errors",
    "CatalogueError": "ibcalc.errors",
    "ClusterError": "ibcalc.errors",
    "DesignError": "ibcalc.errors",
    "FieldError": "ibcalc.errors",
    "InputFileError": "ibcalc.errors",
    "SizeTooSmallError": "ibcalc.errors",
    "UnitError": "ibcalc.errors",
    "UnknownNameError": "ibcalc.errors",
    "WorkloadError": "ibcalc.errors",
    "WrongTypeError": "ibcalc.errors",
    "Link": "ibcalc.catalogue.models",
    "Protocol": "ibcalc.engine.types",
    "QuickEstimate": "ibcalc.facade",
    "ResolvedCluster": "ibcalc.cluster.resolve",
    "System": "ibcalc.catalogue.models",
    "check_design": "ibcalc.design.check",
    "common_pairings": "ibcalc.gap",
    "estimate": "ibcalc.facade",
    "estimate_many": "ibcalc.facade",
    "estimate_on": "ibcalc.facade",
    "fill_fields": "ibcalc.errors",
    "find_link": "ibcalc.catalogue.load",
    "find_system": "ibcalc.catalogue.load",
    "load_catalogue": "ibcalc.catalogue.load",
    "load_cost_params": "ibcalc.catalogue.cost_params",
    "load_design": "ibcalc.design.check",
    "parse_bandwidth": "ibcalc.units",
    "parse_size": "ibcalc.units",
    "parse_time": "ibcalc.units",
    "resolve_cluster": "ibcalc.cluster.resolve",
    "size_fat_tree": "ibcalc.fabric.sizing",
    "tp_whatif": "ibcalc.gap",
    # the types public functions return, for a user's annotations (review CB)
    "Cost": "ibcalc.engine.types",
    "Design": "ibcalc.design.schema",
    "DesignCheck": "ibcalc.design.check",
    "FabricSizing": "ibcalc.fabric.sizing",
    "GapResult": "ibcalc.gap",
    "HostCpu": "ibcalc.engine.types",
    "TpWhatIf": "ibcalc.gap",
    "ValidationProblem": "ibcalc.errors",
    # the library's --nccl-version (an estimate's {nccl_version} mark; review CB)
    "for_release": "ibcalc.catalogue.releases",
}


if not TYPE_CHECKING:
    # at run time only: a type checker reads the imports above, so that a misspelt name is an
    # error in a user's script, not Any (a module __getattr__ makes every name Any; review CB)

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'ibcalc' has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # looked up once; later reads are plain attribute reads
        return value


def __dir__() -> list[str]:
    # the public names, the module's own dunders and the subpackages loaded, not the helpers
    # this file imports (annotations, import_module, Any and TYPE_CHECKING had been listed
    # beside the API)
    own = {
        name
        for name, value in globals().items()
        if name.startswith("__") or getattr(value, "__name__", "") == f"{__name__}.{name}"
    }
    return sorted({*own, *__all__})


__all__ = [
    "Algorithm",
    "AlgorithmNotApplicableError",
    "Catalogue",
    "CatalogueError",
    "ClusterError",
    "ClusterSpec",
    "Collective",
    "CollectivePlan",
    "Cost",
    "CostParams",
    "DType",
    "Design",
    "DesignCheck",
    "DesignError",
    "Estimate",
    "EstimateResult",
    "FabricError",
    "FabricSizing",
    "FieldError",
    "GapResult",
    "HostCpu",
    "IbcalcError",
    "InputFileError",
    "Link",
    "LogParseError",
    "OutputError",
    "PlotError",
    "Protocol",
    "QuickEstimate",
    "ResolvedCluster",
    "SizeTooSmallError",
    "System",
    "TpWhatIf",
    "UnitError",
    "UnknownNameError",
    "ValidationProblem",
    "WorkloadError",
    "WrongTypeError",
    "__version__",
    "check_design",
    "common_pairings",
    "estimate",
    "estimate_many",
    "estimate_on",
    "fill_fields",
    "find_link",
    "find_system",
    "for_release",
    "load_catalogue",
    "load_cost_params",
    "load_design",
    "parse_bandwidth",
    "parse_size",
    "parse_time",
    "resolve_cluster",
    "size_fat_tree",
    "tp_whatif",
]
