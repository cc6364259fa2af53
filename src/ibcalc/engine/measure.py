"""What nccl-tests reports for a collective, given what one operation costs.

nccl-tests launches its timed iterations back to back and divides the wall time by their number
(``src/common.cu``, ``BenchTime``: ``-n`` iterations, default 20, no synchronisation between
them). Two consequences shape the small-message times it prints:

* **One-way chains overlap in LL.** In a broadcast or reduce every rank only forwards to the
  next, so the root starts operation i+1 while operation i still travels down the chain. In
  steady state a new operation completes every *period* (one stage: a hop and its data), not
  every full chain latency: ``t = (T + (k - 1) P) / k`` for k iterations, one operation taking
  T. A network stage holds ``2 / NCCL_STEPS`` of its hop latency in the period, its buffer
  slots in flight (:func:`stage_flight`): 1 x 8 and 4 x 8 A100 both print 7.3-7.6 us a
  broadcast of 8-512 B, the same period with and without the network. The published
  broadcasts show the overlap in LL only: 4 x 8 A100 at 1 KiB takes 8.1 us against a 39.3 us
  chain, while in LL128 and Simple they take one operation's time (1 x 8 A100, Simple,
  1-8 MiB: 55-80 us against 46-77 us for T and 17.5-48.1 us for the period), so LL128 and Simple
  chains, and collectives in which every rank waits for every other (all-reduce, all-gather,
  ...), have P = T.
* **One process driving several GPUs is host-bound.** With ``-g g`` a single host thread
  launches each of its g GPUs' kernels in turn, about ``launch_per_gpu`` apiece (fitted on three
  published single-process sweeps, ``benchmarks/fits.py``). Iterations queue up behind the host:
  the period is at least ``g x launch_per_gpu``. Up to tens of KiB this floor hides the
  collective entirely (4 x H100 all-reduce, ``-g 4``: 16.6-17.3 us flat from 4 B to 32 KiB, then
  17.8 us at 64 KiB and 20.7 us at 1 MiB), and it fades once one operation takes longer than the
  host needs to launch the next.

NCCL's tuner knows neither: it ranks candidates by one operation's latency and transfer.
"""

from __future__ import annotations

from ibcalc.engine.base import Topology
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Cost, Protocol
from ibcalc.units import format_time

__all__ = ["chain_overlaps", "host_period_s", "measured", "measured_s", "stage_flight"]


def chain_overlaps(protocol: Protocol) -> bool:
    """Whether back-to-back operations of a one-way chain (ring broadcast, reduce) overlap: in LL
    only, as the published broadcasts show (module docstring)."""
    return protocol is Protocol.LL


def stage_flight(params: CostParams) -> float:
    """How much of a network or WAN hop's latency a chain's period holds: ``2 / NCCL_STEPS``.
    Across a network the sender's proxy keeps up to ``pipeline.steps`` buffer slots of a
    connection in flight, each free again a round trip (two one-way hops) later, so the stage
    passes one operation every ``2 x hop / steps`` at most, not one per hop latency. A hop
    inside a node is the GPU's own work (it writes, fences and flags every step: its time goes
    with the clock, docs/model.md#gpu-clock) and stays whole in the period."""
    return 2.0 / params.pipeline.steps


def host_period_s(topo: Topology, params: CostParams) -> float:
    """Least time between back-to-back operations set by the host launching ``-g`` GPUs."""
    g = topo.gpus_per_process
    return g * params.calibrated.launch_per_gpu_s if g > 1 else 0.0


def measured_s(
    single_s: float, period_s: float | None, topo: Topology, params: CostParams
) -> float | None:
    """What nccl-tests prints per operation for one taking ``single_s`` with steady-state
    ``period_s`` (None: not overlapped), or None when that is ``single_s`` itself.

    ``t = (host + T + (k - 1) x max(P, host)) / k`` with T one operation, P its steady-state
    period (T unless the algorithm overlaps successive operations), host the launch floor and k
    the iterations: the first operation starts once the host has launched it, and the last ends
    T after its own launch or the one before it ends. t = T when neither applies (one GPU per
    process launches inside T, NCCL's base latency).
    """
    period = period_s if period_s is not None else single_s
    host = host_period_s(topo, params)
    if host <= 0 and period >= single_s:
        return None
    k = params.nccl_runtime.tests_iterations
    return (host + single_s + (k - 1) * (host if host > period else period)) / k


def measured(cost: Cost, topo: Topology, params: CostParams) -> Cost:
    """``cost`` with the per-operation time nccl-tests would print (``Cost.measured_s``), and
    how it came about (``Cost.measure_note``); ``cost`` itself when that is its single time."""
    single = cost.single_s
    time = measured_s(single, cost.period_s, topo, params)
    if time is None:
        return cost
    period = cost.period_s if cost.period_s is not None else single
    host = host_period_s(topo, params)
    bottleneck = cost.bottleneck
    k = params.nccl_runtime.tests_iterations
    each = format_time(params.calibrated.launch_per_gpu_s, zeros=False)
    floor = f"{format_time(host)} ({topo.gpus_per_process} x {each}, calibrated.launch_per_gpu)"
    chain = (
        f"one-way chain: back-to-back operations complete every {format_time(period)} "
        f"(one stage{': ' + cost.period_words if cost.period_words else ''}), not every full "
        "chain latency"
    )
    if host > period:
        why = (
            f"one process drives {topo.gpus_per_process} GPUs: the host launches each "
            f"operation in {floor}"
        )
        if period < single:
            # the chain's overlap is why the time is near the launches, not T + launches (an
            # LL broadcast's 394 us chain printed 53.3 us with only the launches named)
            why = f"{chain}; {why}, longer than that stage: the launches set the period"
        # the time shown is the launches', not the operation's latency or bytes
        # against what spaces the operations without it: one operation, or a chain's stage
        # (an LL broadcast's 121 us chain had been called shorter than 33.6 us of launches)
        spacing = (
            f"one operation's {format_time(single)}"
            if period >= single
            else f"the {format_time(period)} between a chain's operations"
        )
        bottleneck = (
            f"host launches: one process drives {topo.gpus_per_process} GPUs and launches "
            f"each operation in {format_time(host)}, more than {spacing}"
        )
    else:
        parts = []
        if period < single:
            parts.append(chain)
        if host > 0:
            # -g 8 said the host launches one after another and then changed nothing, unsaid
            parts.append(
                f"one process drives {topo.gpus_per_process} GPUs, but its launch floor, "
                f"{floor}, is under the {format_time(period)} between operations: it delays "
                "only the first"
            )
        why = "; ".join(parts)
        if cost.period_s is None:
            # a latency-bound bottleneck's figures are one operation's (make_cost), which the
            # launch delaying the first no longer is the time shown: named so, as make_cost
            # names them beside a chain's period ('34.5 us of 37.9 us' beside a 39.6 us time)
            one = format_time(single)
            bottleneck = bottleneck.replace(f" of {one} (", f" of one operation's {one} (", 1)
    launch = "launch + " if host > 0 else ""
    note = f"{why}; nccl-tests times {k} iterations: ({launch}T + {k - 1} x period) / {k}"
    return cost.model_copy(
        update={"measured_s": time, "measure_note": note, "bottleneck": bottleneck}
    )
