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
from typing import Literal

from ibcalc.engine.base import Topology

__all__ = ["PerGpuBandwidths", "per_gpu_bandwidths"]


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
