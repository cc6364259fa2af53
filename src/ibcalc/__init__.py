"""ibcalc: how fast can this cluster move these bytes?

A sourced interconnect catalogue, a tiered cluster model and an analytic collective-cost engine
reported in nccl-tests conventions.
"""

from ibcalc.catalogue import find_link, find_system, load_catalogue
from ibcalc.design import check_design, load_design
from ibcalc.engine import estimate, estimate_on
from ibcalc.errors import IbcalcError
from ibcalc.fabric import size_fat_tree
from ibcalc.gap import common_pairings, gap, tp_whatif
from ibcalc.models import Algorithm, Collective, Estimate, Link, Protocol, System
from ibcalc.topology import ClusterSpec, resolve_cluster
from ibcalc.units import parse_bandwidth, parse_size, parse_time

__version__ = "0.1.0"

__all__ = [
    "Algorithm",
    "ClusterSpec",
    "Collective",
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
    "gap",
    "load_catalogue",
    "load_design",
    "parse_bandwidth",
    "parse_size",
    "parse_time",
    "resolve_cluster",
    "size_fat_tree",
    "tp_whatif",
]
