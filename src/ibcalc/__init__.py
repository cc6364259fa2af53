"""ibcalc: how fast can this cluster move these bytes?

A sourced interconnect catalogue, a tiered cluster model and an analytic collective-cost engine
reported in nccl-tests conventions.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ibcalc.catalogue.cost_params import load_cost_params
from ibcalc.catalogue.load import find_link, find_system, load_catalogue
from ibcalc.catalogue.models import Link, System
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Estimate, Protocol
from ibcalc.errors import IbcalcError
from ibcalc.facade import estimate, estimate_on
from ibcalc.units import parse_bandwidth, parse_size, parse_time

if TYPE_CHECKING:
    from ibcalc.design.check import check_design, load_design
    from ibcalc.fabric.sizing import size_fat_tree
    from ibcalc.gap import common_pairings, tp_whatif

__version__ = "0.1.0"

# Design files, fabric sizing and gap analysis load on first use, so that every CLI command
# (which imports this package for __version__) does not pay for them at start-up.
_LAZY = {
    "check_design": "ibcalc.design.check",
    "load_design": "ibcalc.design.check",
    "size_fat_tree": "ibcalc.fabric.sizing",
    "common_pairings": "ibcalc.gap",
    "tp_whatif": "ibcalc.gap",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ibcalc' has no attribute {name!r}")


__all__ = [
    "Algorithm",
    "ClusterSpec",
    "Collective",
    "CostParams",
    "Estimate",
    "IbcalcError",
    "Link",
    "Protocol",
    "System",
    "__version__",
    "check_design",
    "common_pairings",
    "estimate",
    "estimate_on",
    "find_link",
    "find_system",
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
