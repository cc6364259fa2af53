"""Channels and chunks: how a collective's bytes move through NCCL's pipeline.

NCCL splits a collective's buffer over *channels* (each a CTA with its own connections) and moves
each channel's share in *chunks*: a stage receives a whole chunk (one buffer step) before it
passes the chunk on. A pipeline of ``stages`` stages, every one at b bytes/s per channel,
therefore takes, for D bytes per channel in chunks of C::

    t = D / b + (stages - 1) x C / b

(stages at different rates: :func:`held_stages`).

The first term is the transfer every model has; the second is the **fill**: the first chunk
crossing every stage before the pipeline runs full. It matters where D is not much larger than
``stages x C``: the mid sizes (1-64 MiB) of trees, where NCCL's own tuner instead multiplies tree
bandwidth by a size-bucket correction table (NCCL 2.30.7 ``treeCorrectionFactor``, 0.4-0.9 over
64 KiB - 512 MiB, "trees do not follow the model well at medium sizes").

Chunk sizes follow NCCL 2.30.7 ``src/enqueue.cc`` (``calcCollChunking``): the tree Simple chunk
starts at one buffer step (512 KiB) and halves while a channel has fewer than 8 x depth chunks
(down to 128 KiB), fewer than 4 x depth (down to 64 KiB), and fewer than depth (down to
``tree_min_chunk``); LL and LL128 move one step's payload at a time. Channels: ``channels_per_nic``
per GPU-NIC ring across nodes, ``channels_single_node`` (NVLink) or ``channels_pcie`` inside one
(``data/cost_params.yaml`` cites each).

A small collective does not get every channel: NCCL gives a ring or tree collective of B bytes
only as many channels as it has ``threads x threshold`` bytes for (:func:`active_channels`), and
its bandwidth is that share of the channels' (NCCL's tuner multiplies a per-channel bandwidth by
the channel count). That is why mid sizes (64 KiB - a few MiB) run slower than a full-bandwidth
model says: an 8 x H100 ring all-reduce in Simple uses all 24 channels only from 768 KiB.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ibcalc.engine.base import Topology, channels
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Protocol, StageTier
from ibcalc.units import format_size

__all__ = [
    "ChannelUnit",
    "Fill",
    "Stages",
    "active_channels",
    "channel_rates",
    "channel_unit",
    "channel_unit_bytes",
    "channels",
    "chunk_plan",
    "fill_parts",
    "fill_seconds",
    "held_stages",
    "tree_chunk_bytes",
    "trimmed_bw",
    "trimmed_text",
]


class ChannelUnit(NamedTuple):
    """What NCCL asks of a collective per channel before giving it that channel: ``threads`` x
    ``per_thread_bytes``, times ``ranks`` for the ring's LL threshold (1 otherwise); no threads
    when the model does not trim channels (``pipeline.trim_channels`` 0)."""

    threads: int
    per_thread_bytes: float
    ranks: int = 1

    @property
    def bytes(self) -> float:
        """The bytes per channel (0: no trimming)."""
        return self.threads * (self.per_thread_bytes * self.ranks)


def channel_unit(
    topo: Topology, protocol: Protocol, params: CostParams, *, ring: bool
) -> ChannelUnit:
    """What a collective needs per channel before NCCL gives it that channel (no threads: no
    trimming).

    NCCL 2.30.7 ``src/enqueue.cc``: a ring or tree collective of B bytes runs on the largest
    channel count c <= nChannels with ``B >= c x threads x threshold`` (at least one), where
    threads and threshold are the protocol's (``pipeline.max_threads``,
    ``pipeline.thread_threshold``; the ring's LL threshold is multiplied by the rank count).
    """
    pipe = params.pipeline
    if not pipe.trim_channels:
        return ChannelUnit(0, 0.0)
    ranks = topo.ranks if ring and protocol is Protocol.LL else 1
    return ChannelUnit(pipe.max_threads[protocol], pipe.thread_threshold_bytes[protocol], ranks)


def channel_unit_bytes(
    topo: Topology, protocol: Protocol, params: CostParams, *, ring: bool
) -> float:
    """Bytes a collective needs per channel before NCCL gives it that channel (0: no trimming;
    :func:`channel_unit`)."""
    return channel_unit(topo, protocol, params, ring=ring).bytes


def active_channels(size_bytes: float, full: int, unit_bytes: float) -> float:
    """Channels a collective of ``size_bytes`` runs on, of ``full``, given
    :func:`channel_unit_bytes`: ``min(full, max(1, size / unit))``.

    NCCL takes whole channels (``floor(size / unit)``), so its time steps down a little each
    time a channel is added; the model takes the continuous share, so that for a fixed
    algorithm and protocol the time never falls as the size grows (in the trimmed range the
    transfer term is flat instead of a saw-tooth around it).
    """
    if unit_bytes <= 0:
        return float(full)
    share = size_bytes / unit_bytes
    return float(full) if share >= full else (share if share > 1.0 else 1.0)


def trimmed_bw(bw_Bps: float, active: float, full: int) -> float:
    """``bw_Bps`` of all ``full`` channels scaled to the ``active`` ones a collective runs on
    (:func:`active_channels`); unchanged when it has them all."""
    return bw_Bps * active / full if active < full else bw_Bps


def trimmed_text(active: float, full: int, unit: ChannelUnit) -> str:
    """Words for a collective that runs on fewer than all channels (empty when it has all), with
    the factors of ``unit`` so that its bytes multiply out (the ring's LL rank factor included)."""
    if active >= full:
        return ""
    ranks = (
        f" x {unit.ranks} ranks (the ring's LL threshold is multiplied by the rank count)"
        if unit.ranks > 1
        else ""
    )
    return (
        f"; a collective this small gets {active:.3g} of the {full} channels "
        f"(NCCL gives one per {format_size(unit.bytes)} = {unit.threads} threads x "
        f"{format_size(unit.per_thread_bytes)} per thread{ranks}; "
        f"bandwidth x {active / full:.3g})"
    )


def chunk_plan(
    topo: Topology, protocol: Protocol, depth: int, params: CostParams
) -> tuple[float, tuple[tuple[float, float], ...]]:
    """(first chunk, halvings) of NCCL's ``calcCollChunking`` (NCCL 2.30.7 ``src/enqueue.cc``)
    for a tree stage; every number below is that function's.

    The chunk starts at one buffer step and, for each (chunks, floor) in turn, halves while a
    channel holds fewer than ``chunks`` chunks and the chunk is above ``floor``. Simple (tree
    up-down): 8 x depth down to 128 KiB, 4 x depth down to 64 KiB, depth down to
    ``tree_min_chunk``. LL128: with s = 1 + log2(nodes) + 0.1 x (GPUs per node), s x 64 / ppn
    down to 128 KiB, then s x 16 / ppn down to 32 KiB. LL: one step, no halving.
    """
    pipe = params.pipeline
    if protocol is Protocol.LL:
        return pipe.ll_step_bytes, ()
    if protocol is Protocol.LL128:
        ppn = float(topo.m)
        nsteps = 1 + math.floor(math.log2(topo.domains)) + 0.1 * ppn
        return pipe.ll128_step_bytes, (
            (nsteps * 64 / ppn, 128 * 1024),
            (nsteps * 16 / ppn, 32 * 1024),
        )
    start = params.nccl_runtime.simple_buffer_bytes / pipe.steps
    return start, tuple(
        (depth * factor, floor)
        for factor, floor in ((8, 128 * 1024), (4, 64 * 1024), (1, pipe.tree_min_chunk_bytes))
    )


def tree_chunk_bytes(
    per_channel_bytes: float,
    plan: tuple[float, tuple[tuple[float, float], ...]],
) -> float:
    """Chunk a tree stage holds at a time (:func:`chunk_plan`), at most the channel's whole
    share."""
    chunk, halvings = plan
    for limit, floor in halvings:
        while per_channel_bytes / chunk < limit and chunk > floor:
            chunk /= 2
    return min(per_channel_bytes, chunk)


class Stages(NamedTuple):
    """One tier's stages along a pipeline: ``number`` of them, each crossed at ``rate_Bps`` (the
    tier's bandwidth for the collective on all channels, after protocol factors); ``tier`` is
    ``"up"`` (a scale-up link), ``"net"`` (the network) or ``"wan"`` (between sites)."""

    number: int
    rate_Bps: float
    tier: StageTier

    @property
    def network(self) -> bool:
        """Whether a stage crosses the network or a WAN (a proxy's send)."""
        return self.tier != "up"


class Fill(NamedTuple):
    """A pipeline fill: a chunk of ``chunk_bytes`` held by the stages of ``parts``, each part
    (stages that hold it, per-channel rate of those stages, their tier: :class:`Stages`)."""

    chunk_bytes: float
    parts: tuple[tuple[int, float, StageTier], ...]

    @property
    def held(self) -> int:
        """Stages that hold a chunk."""
        return sum(part[0] for part in self.parts)

    @property
    def seconds(self) -> float:
        """The sum over holding stages of ``chunk / rate``."""
        return fill_seconds(self.chunk_bytes, self.parts)


def fill_seconds(chunk_bytes: float, parts: tuple[tuple[int, float, StageTier], ...]) -> float:
    """``sum(held x chunk / per-channel rate)`` over ``parts`` (:class:`Fill`)."""
    total = 0.0
    for held, rate, _ in parts:
        total += held * chunk_bytes / rate
    return total


def held_stages(
    stages: tuple[Stages, ...], protocol: Protocol
) -> tuple[tuple[int, float, StageTier], ...]:
    """The stages of a pipeline that hold a chunk, as (count, tier rate, tier) per tier.

    A synchronous pipeline of stage times ``t_i`` moving k chunks takes ``sum(t_i) + (k - 1) x
    max(t_i)``: the transfer term is ``k x max(t_i)`` (the binding tier), so the fill is every
    stage's time but one of the slowest, each at its own tier's rate (equal rates give
    ``(stages - 1) x C / b``). Simple synchronises every stage per chunk; LL and LL128 carry a
    flag in every line, so inside a node each stage forwards lines as they land and only the
    network stages (where the proxy posts a send once a buffer step is ready) hold a chunk, each
    at its own tier's rate, the binding one too: its proxy waits for a whole step before the
    first byte crosses, a wait the streaming transfer does not contain (one fewer, as Simple's
    arithmetic would have it, made the held-out mid-size median worse, 16.0 % -> 16.3 %).
    """
    if protocol is not Protocol.SIMPLE:
        return tuple((s.number, s.rate_Bps, s.tier) for s in stages if s.network and s.number > 0)
    used = [s for s in stages if s.number > 0]
    if not used:
        return ()
    slowest = min(range(len(used)), key=lambda i: used[i].rate_Bps)
    parts = []
    for i, s in enumerate(used):
        held = s.number - 1 if i == slowest else s.number
        if held > 0:
            parts.append((held, s.rate_Bps, s.tier))
    return tuple(parts)


def channel_rates(
    held: tuple[tuple[int, float, StageTier], ...], full: int
) -> tuple[tuple[int, float, StageTier], ...]:
    """``held`` (:func:`held_stages`) with each tier rate turned into one channel's of ``full``:
    a collective on fewer channels (:func:`trimmed_bw`) has that share of the rate, so each of
    its channels still moves ``rate / full``."""
    return tuple((count, rate / full, tier) for count, rate, tier in held)


def fill_parts(
    size_bytes: float,
    stages: tuple[Stages, ...],
    topo: Topology,
    *,
    protocol: Protocol,
    params: CostParams,
    active: float | None = None,
) -> Fill | None:
    """Pipeline fill of a chain or tree (a :class:`Fill`); None where there is no fill.

    ``stages`` are the pipeline's tiers (:class:`Stages`); ``size_bytes`` is what crosses it per
    rank. Each holding stage (:func:`held_stages`) holds one chunk of NCCL's chunk plan
    (:func:`chunk_plan`), which crosses it at its own tier's per-channel rate. None in NCCL's
    tuner view and with fewer than two stages. ``active`` is the channels the collective runs on
    (:func:`active_channels`; all of them by default).
    """
    total = sum(s.number for s in stages)
    if not params.pipeline.model_fill or total < 2:
        return None
    if any(s.number > 0 and not s.rate_Bps > 0 for s in stages):
        return None
    full = channels(topo, params)
    nc = float(full) if active is None else active
    per_channel = size_bytes / nc
    depth = max(1, total // 2) if protocol is Protocol.SIMPLE else 1
    chunk = tree_chunk_bytes(per_channel, chunk_plan(topo, protocol, depth, params))
    return Fill(chunk, channel_rates(held_stages(stages, protocol), full))
