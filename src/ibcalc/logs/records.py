"""Frozen records of nccl-tests / rccl-tests results: Timing, Row, Inference, Run, ParsedLog.

Field names carry their unit (``time_us``, ``algbw_GBps``, ``size_bytes``). GB/s here is what
nccl-tests prints: 10^9 bytes per second. ``model_dump(mode="json")`` gives plain JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.defaults import empty_list
from ibcalc.engine.types import Collective
from ibcalc.listing import listed

__all__ = ["Inference", "ParsedLog", "Row", "Run", "Timing", "line_list", "run_measurements"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Timing(BaseModel):
    """One measurement of one row: out-of-place or in-place.

    ``wrong`` is the ``#wrong`` count (None when the log prints ``N/A`` or the column is absent);
    ``max_error`` is the float in the ``error`` column of pre-2.10 nccl-tests (None otherwise).
    """

    model_config = _FROZEN

    time_us: float
    algbw_GBps: float
    busbw_GBps: float
    wrong: int | None = None
    max_error: float | None = None


class Row(BaseModel):
    """One result row of the table.

    ``dtype`` is normalised (``float`` -> ``fp32`` ...). ``redop`` is as printed (``sum``,
    ``none``, ...) and None when the table has no redop column (old format). ``root`` is as
    printed (``-1`` means no root) and None when the table has no root column. ``line`` is the
    1-based line of the row in the input (for JSON input: the 1-based index of the result).
    """

    model_config = _FROZEN

    size_bytes: int
    count: int
    dtype: str | None
    redop: str | None
    root: int | None
    oop: Timing
    ip: Timing | None
    line: int


class Inference(BaseModel):
    """A value the log does not print directly, with the evidence it was worked out from.

    ``value`` is None when the evidence was not enough; ``candidates`` then lists what remains.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    field: str
    value: str | int | float | None
    evidence: str
    candidates: list[str] = []


class Run(BaseModel):
    """One nccl-tests run (one binary invocation): its configuration, rows and provenance.

    ``raw_collective`` is the nccl-tests name without ``_perf`` (``all_reduce``, ``scatter`` ...);
    ``collective`` is set only for collectives ibcalc models (scatter, gather and hypercube are
    parsed but have ``collective=None``). ``ranks_per_node``/``nodes``/``hosts`` come from the
    hostnames of the device list and are None when the list is elided or absent.
    ``truncated`` is True when the run ends without the ``Avg bus bandwidth`` trailer;
    ``notes`` says what was cut, skipped or looks wrong; ``inferences`` says how every value the
    log does not state was worked out.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    raw_collective: str | None
    collective: Collective | None
    rows: list[Row]
    ranks: int | None
    ranks_per_node: int | None
    nodes: int | None
    hosts: list[str]
    #: device-list lines read: an elided list has some and leaves ``hosts`` empty
    devices_listed: int = 0
    gpus_per_process: int | None
    threads: int | None
    gpu_model: str | None
    dtype: str | None
    redop: str | None
    nccl_version: str | None
    library: Literal["nccl", "rccl"] | None
    tests_version: str | None
    warmup_iters: int | None
    iters: int | None
    min_bytes: int | None
    max_bytes: int | None
    step_factor: int | None
    step_bytes: int | None
    avg_busbw_GBps: float | None
    out_of_bounds: int | None
    truncated: bool
    notes: list[str]
    inferences: list[Inference]
    #: (size in bytes, line) of the rows dropped as no measurement: a time that is negative, NaN,
    #: 0, faster than 1 PB/s or longer than 2.8 hours (the notes say which)
    unmeasured: list[tuple[int, int]] = Field(default_factory=empty_list)
    line_start: int
    line_end: int


class ParsedLog(BaseModel):
    """Everything read from one input: its runs in input order, and notes about skipped parts."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    source: str
    format: Literal["text", "json"]
    runs: list[Run]
    notes: list[str]


def run_measurements(run: Run) -> tuple[object, ...]:
    """What a run measured, for telling a repeat of it: its collective, rank count and every
    row's size, element type and times as printed."""
    return (
        run.raw_collective,
        run.ranks,
        tuple(
            (
                r.size_bytes,
                r.count,
                r.dtype,
                r.redop,
                r.root,
                r.oop.time_us,
                r.oop.busbw_GBps,
                None if r.ip is None else r.ip.time_us,
                None if r.ip is None else r.ip.busbw_GBps,
            )
            for r in run.rows
        ),
    )


def line_list(lines: Sequence[int], unit: str = "line") -> str:
    """``line 12``, ``lines 12-15`` for a run of consecutive lines, else the first five:
    ``lines 17, 19`` or ``lines 40, 41, 43, 44, 46, ...`` (negative and zero times on
    alternating lines had read ``lines 17-19``, taking in each other's rows)."""
    if len(lines) == 1:
        return f"{unit} {lines[0]}"
    if all(b == a + 1 for a, b in pairwise(lines)):
        return f"{unit}s {lines[0]}-{lines[-1]}"
    return f"{unit}s {listed(lines, unit)}"
