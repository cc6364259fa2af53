"""Per-GPU bandwidths of a resolved cluster's tiers, per direction, and the gap between them.

Numbers only, read off the engine's tiers (:class:`~ibcalc.engine.base.Topology`), so that what
``ibcalc design show`` and the design ``gap`` requirement report is what the engine costs:

* scale-up per GPU: the tier-0 line rate (a switchless mesh counts only the links in use) and
  its achievable rate (line x catalogue efficiency); NVLS where the tier has it;
* scale-out per GPU: the domain's NICs x one NIC's rate / GPUs per domain. Line: the NIC's line
  rate. Achievable: the domain's achievable rate, which already carries the host PCIe caps
  :func:`~ibcalc.cluster.resolve.resolve_cluster` applied;
* gap: scale-up line rate / scale-out line rate per GPU (DGX H100: 450 / 50 GB/s = 9).

This is the per-GPU view of one cluster; :mod:`ibcalc.gap` compares links node shape by node
shape and adds the all-reduce times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.engine.base import Topology
from ibcalc.units import GB

if TYPE_CHECKING:
    from ibcalc.cluster.resolve import ResolvedCluster

__all__ = ["BusbwCeilings", "PerGpuBandwidths", "busbw_ceilings", "per_gpu_bandwidths"]


@dataclass(frozen=True)
class PerGpuBandwidths:
    """Per-GPU bandwidths per direction (bytes per second) of a cluster's two tiers.

    A tier the cluster lacks (one domain: no scale-out; one GPU per domain: no scale-up) has
    ``None`` rates and ``nics_per_domain`` 0.
    """

    gpus_per_domain: int
    domains: int
    up_line_Bps: float | None
    up_Bps: float | None
    nvls_Bps: float | None
    nic_line_Bps: float | None
    nic_Bps: float | None
    nics_per_domain: int
    out_line_per_gpu_Bps: float | None
    out_per_gpu_Bps: float | None

    @property
    def gap(self) -> float | None:
        """Scale-up line rate / scale-out line rate per GPU, or None without both tiers."""
        if self.up_line_Bps is None or self.out_line_per_gpu_Bps is None:
            return None
        return self.up_line_Bps / self.out_line_per_gpu_Bps

    @property
    def limit(self) -> Literal["scale-up", "scale-out"] | None:
        """The tier with the lower achievable rate per GPU (scale-up on a tie); None when the
        cluster has neither tier. A cluster with one tier is limited by that tier."""
        if self.out_per_gpu_Bps is None:
            return "scale-up" if self.up_Bps is not None else None
        if self.up_Bps is None or self.out_per_gpu_Bps < self.up_Bps:
            return "scale-out"
        return "scale-up"


def per_gpu_bandwidths(topology: Topology) -> PerGpuBandwidths:
    """Per-GPU scale-up and scale-out rates (line and achievable) of ``topology``'s tiers."""
    up, out, m = topology.up, topology.out, topology.m
    out_line = out_bw = None
    if out is not None:
        out_line = out.nics_per_domain * out.nic_line_Bps / m
        out_bw = out.domain_bw_Bps / m
    return PerGpuBandwidths(
        gpus_per_domain=m,
        domains=topology.domains,
        up_line_Bps=up.line_Bps if up is not None else None,
        up_Bps=up.bw_Bps if up is not None else None,
        nvls_Bps=up.nvls_bw_Bps if up is not None else None,
        nic_line_Bps=out.nic_line_Bps if out is not None else None,
        nic_Bps=out.nic_bw_Bps if out is not None else None,
        nics_per_domain=out.nics_per_domain if out is not None else 0,
        out_line_per_gpu_Bps=out_line,
        out_per_gpu_Bps=out_bw,
    )


class BusbwCeilings(BaseModel):
    """What a cluster's tiers let a collective's busbw reach, per direction, as a sweep plot
    and nccl-check's plot draw them: the scale-up link's achievable rate per GPU, and the
    network's achievable rate per scale-up domain (the ring's busbw ceiling across nodes,
    docs/model.md#tiers), with what a plot needs to word and share it. A tier the cluster
    lacks has ``None`` for its link and rate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scale_up_link: str | None
    #: the scale-up link's achievable rate per GPU, GB/s (10^9 B/s)
    scale_up_GBps: float | None = Field(ge=0)
    network_link: str | None
    #: the network's achievable rate per scale-up domain, GB/s (NICs x achievable NIC rate)
    network_GBps: float | None = Field(ge=0)
    #: NICs per scale-up domain, and the host link that holds each to less than its line rate
    network_nics: int = Field(ge=0)
    nic_cap: str | None
    gpus_per_domain: int = Field(ge=1)
    #: whether a scale-up domain spans nodes (an NVL72 rack), else it is one node
    domain_spans_nodes: bool
    ranks: int = Field(ge=1)
    #: how much slower tapered leaf uplinks carry rail-aligned traffic (1: not tapered)
    leaf_contention: float = Field(ge=1)


def busbw_ceilings(cluster: ResolvedCluster) -> BusbwCeilings:
    """The :class:`BusbwCeilings` of ``cluster``'s tiers."""
    topology = cluster.topology
    up, out, m = topology.up, topology.out, topology.m
    return BusbwCeilings(
        scale_up_link=up.link_id if up is not None else None,
        scale_up_GBps=up.bw_Bps / GB if up is not None else None,
        network_link=out.link_id if out is not None else None,
        network_GBps=out.domain_bw_Bps / GB if out is not None else None,
        network_nics=out.nics_per_domain if out is not None else 0,
        nic_cap=out.nic_cap if out is not None else None,
        gpus_per_domain=m,
        domain_spans_nodes=m > cluster.gpus_per_node,
        ranks=cluster.ranks,
        leaf_contention=topology.leaf_contention,
    )
