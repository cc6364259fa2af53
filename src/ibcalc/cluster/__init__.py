"""Cluster descriptions: what the user asked for (ClusterSpec) resolved into engine tiers."""

from ibcalc.cluster.resolve import ClusterSpec, ResolvedCluster, resolve_cluster

__all__ = ["ClusterSpec", "ResolvedCluster", "resolve_cluster"]
