"""Cluster descriptions: what the user asked for (ClusterSpec) resolved into engine tiers."""

from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.cluster.spec import ClusterSpec

__all__ = ["ClusterSpec", "ResolvedCluster", "resolve_cluster"]
