"""Rendering of workload results (train, infer, checkpoint): rich tables and JSON objects.

JSON shape (docs/workload.md, "Output"): ``phases: [{name, collective, bytes_per_gpu, ranks, tier,
time_s, time_s_range, exposed_s, ...}]`` plus ``totals``; times in seconds, sizes in bytes.
Each ``render_*`` prints a table or, with ``fmt`` json, the JSON object; ``names`` (field -> the
caller's name for it, e.g. ``--tp``) fills the ``{field}`` marks of warnings and assumptions.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ibcalc.engine.types import MESSAGE_EXTRAPOLATION_HINT, SIMPLE_EXTRAPOLATION_HINT
from ibcalc.render.console import (
    TIME_UNIT_SCALE,
    Format,
    bullets,
    named_notes,
    prose,
    render_json,
)
from ibcalc.render.stream import (
    Drop,
    PipeConsole,
    TrimmedStream,
    UnitTitle,
    columns_left_out,
    drop_columns,
    env_columns,
    text_width,
    unit_wrap,
)
from ibcalc.units import (
    GiB,
    format_bandwidth,
    format_number,
    format_size,
    format_time,
    json_bytes,
)
from ibcalc.workload.checkpoint import CheckpointResult, Transfer
from ibcalc.workload.infer import InferResult
from ibcalc.workload.memory import (
    OUT_OF_MEMORY,
    TIGHT,
    TIGHT_FRACTION,
    GpuMemory,
    Recompute,
    TrainMemory,
    apart_sizes,
    excess_words,
    memory_size,
    percent,
)
from ibcalc.workload.phases import SHARP_UNUSED, Phase
from ibcalc.workload.train import (
    DEFAULT_ORDER,
    HIERARCHICAL_ONE_SITE,
    TrainResult,
)

__all__ = [
    "checkpoint_dict",
    "compare_dict",
    "infer_dict",
    "phase_dict",
    "render_checkpoint",
    "render_compare",
    "render_infer",
    "render_train",
    "train_dict",
]


#: Field names as themselves, when the caller gives none.
_PLAIN: Mapping[str, str] = {}
#: The degrees a layout search tries: no flag gave them, so its notes name them plainly.
_LAYOUT_FIELDS = frozenset({"tp", "pp", "dp", "ep", "cp"})


def _searched(names: Mapping[str, str]) -> Mapping[str, str]:
    """``names`` without the degrees ``--compare`` tried (``dp 18``, not ``--dp 18``)."""
    return {field: name for field, name in names.items() if field not in _LAYOUT_FIELDS}


def _console(stream: TextIO | None = None) -> Console:
    """A console as ``render.console`` makes one: pipes get a wide page ($COLUMNS or 160)."""
    # rich pads every table line to the page width: trim those spaces on the way out
    stream = TrimmedStream(stream if stream is not None else sys.stdout)  # type: ignore[assignment]
    console = PipeConsole(file=stream, highlight=False)
    if not console.is_terminal:
        width = env_columns(160)
        console = PipeConsole(file=stream, highlight=False, width=max(40, width))
    return console


def _fold(table: Table) -> Table:
    """Wrap cells that do not fit rather than cutting them."""
    for column in table.columns:
        column.overflow = "fold"
    return table


def _bytes_or_none(size: float | None) -> int | float | None:
    """A GPU's memory as JSON prints it (:func:`json_bytes`), or None where it is not known."""
    return json_bytes(size) if size is not None else None


def _phase_bytes(phase: Phase) -> int | float:
    """A collective phase's buffer as an integer: the nccl-tests size its estimate ran (whole
    bytes, ``ibcalc allreduce``'s integer ``size_bytes``), which the phase holds as a float; a
    consumer reading the field as an integer refuses ``17500000000.0``. A storage transfer's
    share of the bytes per GPU is returned as it is held (a float, which the JSON writer,
    ``jsonmodel.json_text``, writes as an integer where it is whole)."""
    return json_bytes(phase.bytes_per_gpu) if phase.collective is not None else phase.bytes_per_gpu


def phase_dict(phase: Phase, names: Mapping[str, str] = _PLAIN) -> dict[str, Any]:
    """A phase as JSON: the required keys first, then the collective's algorithm and notes."""
    est = phase.estimate
    return {
        "name": phase.name,
        "collective": phase.collective.value if phase.collective is not None else None,
        "bytes_per_gpu": _phase_bytes(phase),
        "ranks": phase.ranks,
        "tier": phase.tier,
        "time_s": phase.time_s,
        "time_s_range": list(phase.time_s_range) if phase.time_s_range is not None else None,
        "exposed_s": phase.exposed_s,
        "count": phase.count,
        "per": phase.per,
        "total_s": phase.total_s,
        "overlaps": phase.overlaps,
        "algorithm": est.best.algorithm.value if est is not None else None,
        "protocol": est.best.protocol.value if est is not None else None,
        "bottleneck": est.best.bottleneck if est is not None else None,
        "nodes": est.nodes if est is not None else None,
        "gpus_per_node": est.gpus_per_node if est is not None else None,
        "assumptions": named_notes(phase.assumptions, names),
    }


def train_dict(result: TrainResult, names: Mapping[str, str] = _PLAIN) -> dict[str, Any]:
    """A training step as JSON."""
    spec, par, totals = result.spec, result.spec.parallel, result.totals
    return {
        "model": spec.model.label,
        "params": spec.model.params,
        "parallel": {"tp": par.tp, "pp": par.pp, "dp": par.dp, "ep": par.ep, "cp": par.cp},
        "zero": spec.zero,
        "dtype": spec.act_dtype.value,
        "grad_dtype": spec.grad_dtype.value,
        "sequence_parallel": spec.sequence_parallel,
        "nodes": result.nodes,
        "gpus_per_node": result.gpus_per_node,
        "sites": result.sites,
        "wan": result.wan,
        "wan_links": result.wan_links,
        "wan_latency_s": result.wan_latency_s,
        "micro_batch": spec.micro_batch,
        "microbatches": result.microbatches,
        "virtual_stages": spec.virtual_stages,
        "rank_order": result.rank_order,
        "sequences_per_step": par.dp * spec.micro_batch * result.microbatches,
        "seq_len": result.seq_len,
        "phases": [phase_dict(p, names) for p in result.phases],
        "totals": totals.model_dump(),
        "memory": _train_memory_dict(result.memory),
        "warnings": named_notes(result.warnings, names),
        "assumptions": named_notes(result.assumptions, names),
    }


def _memory_dict(memory: GpuMemory, **parts: Any) -> dict[str, Any]:
    """One GPU's memory as JSON: the total, ``parts`` (the kind's own fields), the GPU's memory
    and whether it fits."""
    return {
        "per_gpu_bytes": memory.total_bytes,
        **parts,
        "capacity_bytes": _bytes_or_none(memory.capacity_bytes),
        "used_fraction": memory.used_fraction,
        "fits": memory.fits,
    }


def _train_memory_dict(memory: TrainMemory) -> dict[str, Any]:
    return _memory_dict(
        memory,
        weights_bytes=memory.weights_bytes,
        gradients_bytes=memory.gradients_bytes,
        optimizer_bytes=memory.optimizer_bytes,
        activations_bytes=memory.activations_bytes,
        output_layer_bytes=memory.output_bytes,
        recompute=memory.recompute.value,
        pipeline_stage=memory.stage + 1,
        params_per_gpu=memory.params_per_gpu,
    )


def _memory_words(memory: GpuMemory, names: Mapping[str, str]) -> str:
    """One GPU's memory for the totals: "51.5 GiB of dgx-h100's 80.0 GiB per GPU (64%): ..."."""
    need = memory_size(memory.total_bytes)
    if memory.past_every_variant and memory.largest_bytes is not None:
        need, largest = apart_sizes(memory.total_bytes, memory.largest_bytes)
        return f"{need} per GPU, more than the largest variant's {largest}: {memory.parts_words()}"
    if memory.capacity_from is None or memory.used_fraction is None:
        return f"{need} per GPU (not checked: no GPU memory known): {memory.parts_words()}"
    against = named_notes([memory.capacity_from], names)[0]
    share = f"{percent(memory.used_fraction)}{excess_words(memory, need)}"
    return f"{need} of {against} ({share}): {memory.parts_words()}"


def compare_dict(
    results: Sequence[TrainResult],
    skipped: Sequence[str],
    names: Mapping[str, str] = _PLAIN,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Ranked layouts as JSON (least exposed communication first); ``overrides`` the notes of
    files laid over the built-in catalogue and cost parameters, the same for every layout."""
    return {
        "overrides": list(overrides),
        "layouts": [
            {
                "rank": i + 1,
                "tp": r.spec.parallel.tp,
                "pp": r.spec.parallel.pp,
                "dp": r.spec.parallel.dp,
                "ep": r.spec.parallel.ep,
                "cp": r.spec.parallel.cp,
                "exposed_s": r.totals.exposed_s,
                "comm_s": r.totals.comm_s,
                "step_s": r.totals.step_s,
                "exposed_s_range": r.totals.exposed_s_range,
                "comm_s_range": r.totals.comm_s_range,
                "step_s_range": r.totals.step_s_range,
                "microbatches": r.microbatches,
                "virtual_stages": r.spec.virtual_stages,
                "rank_order": r.rank_order,
                "bubble_fraction": r.totals.bubble_fraction,
                "memory_per_gpu_bytes": r.memory.total_bytes,
                "memory_fits": r.memory.fits,
                "memory_used_fraction": r.memory.used_fraction,
                "memory_room": r.memory.room,
                "warnings": named_notes(r.warnings, names),
            }
            for i, r in enumerate(results)
        ],
        "global_batch": results[0].spec.global_batch if results else None,
        "ranked_by": "step_s" if results and results[0].totals.step_s is not None else "exposed_s",
        "skipped": named_notes(skipped, _searched(names)),
        "memory_capacity_bytes": _bytes_or_none(results[0].memory.capacity_bytes)
        if results
        else None,
        # where that is not known, the largest the preset is sold with, which "out of memory"
        # is judged against then (review CQ)
        "memory_largest_bytes": _bytes_or_none(results[0].memory.largest_bytes)
        if results
        else None,
        "rate_note": next(iter(_rate_notes(results[0], names)), None) if results else None,
        "search_notes": [
            *_search_notes(results, names),
            *_range_notes(results),
            *_message_notes(results),
        ],
        "note": "every layout runs the same global batch (sequences per step); ranked by step "
        "time when the compute is known, else by exposed communication, within each "
        "memory_room in turn: layouts with room first, then tight ones (past 90 % of the GPUs' "
        "memory, where what the count leaves out may not fit), then those out of memory "
        "(unknown where the GPUs' memory is not known: nothing is moved, except past "
        "memory_largest_bytes, the largest the preset is sold with: out of memory on every "
        "variant)",
    }


def infer_dict(result: InferResult, names: Mapping[str, str] = _PLAIN) -> dict[str, Any]:
    """Serving communication as JSON."""
    spec = result.spec
    return {
        "model": spec.model.label,
        "tp": spec.tp,
        "pp": spec.pp,
        "ep": spec.ep,
        "batch": spec.batch,
        "prompt_tokens": spec.prompt_tokens,
        "output_tokens": spec.output_tokens,
        "disaggregated": spec.disaggregated,
        # the activations' type, which every tp, ep and pp message is priced in (--dtype; only
        # the prose had said it: review CZ)
        "dtype": spec.act_dtype.value,
        "weights_dtype": spec.weights_dtype.value,
        "kv_dtype": spec.kv_dtype.value,
        "phases": [phase_dict(p, names) for p in result.phases],
        "totals": {
            "per_token_s": result.per_token_s,
            "per_token_s_range": result.per_token_s_range,
            "per_request_s": result.per_request_s,
            "per_request_s_range": result.per_request_s_range,
            "kv_bytes_per_token": result.kv_bytes_per_token,
            "kv_bytes_per_request": result.kv_bytes_per_request,
            "tier_s": dict(result.tier_s),
            "dominant_tier": result.dominant_tier,
        },
        "memory": _memory_dict(
            result.memory,
            weights_bytes=result.memory.weights_bytes,
            kv_cache_bytes=result.memory.kv_cache_bytes,
        ),
        "warnings": named_notes(result.warnings, names),
        "assumptions": named_notes(result.assumptions, names),
    }


def _transfer_dict(t: Transfer) -> dict[str, Any]:
    return {
        "bytes": t.bytes,
        "time_s": t.time_s,
        "bound": t.bound,
        "latency_s": t.latency_s,
        "bounds": [b.model_dump() for b in t.bounds],
    }


def _latent_cache_words(tp: int, pp: int) -> str:
    """Where a latent (MLA) KV cache of one request sits: whole on each tensor-parallel GPU
    (it is not split over tp), each pipeline stage holding its own layers' part."""
    if pp == 1:
        return f"on each of the {tp} tensor-parallel GPUs (a latent cache is not split)"
    return (
        f"over the {pp} pipeline stages, each stage's part whole on each of its {tp} "
        "tensor-parallel GPUs (a latent cache is not split over tp)"
    )


def _copied_heads_words(kv_heads: int | None, tp: int, request_bytes: float, where: str) -> str:
    """Where one request's KV cache of ``request_bytes`` (each KV head once) sits: over
    ``where``, and with more tensor-parallel GPUs than KV heads each head on ``tp / kv_heads``
    of them, the copies counted (Llama 3 70B on tp 16: 320 MiB of one 1,024-token prompt is
    640 MiB on the GPUs; the row had said '320 MiB ... over all GPUs' where the memory row
    counts the copies)."""
    if kv_heads is None or tp <= kv_heads:
        return f" over {where}"
    share = tp / kv_heads
    on = f"{share:g}" if share.is_integer() else f"{math.floor(share)} or {math.ceil(share)}"
    return (
        f", {memory_size(request_bytes * share)} over {where}: each of its {kv_heads} KV heads "
        f"is kept on {on} of the {tp} tensor-parallel GPUs"
    )


def checkpoint_dict(result: CheckpointResult, names: Mapping[str, str] = _PLAIN) -> dict[str, Any]:
    """A checkpoint's save and restore as JSON."""
    return {
        "model": result.spec.model.label,
        "storage": result.storage_id,
        "storage_units": result.spec.storage_units,
        "nodes": result.nodes,
        "ranks": result.ranks,
        "weights_bytes": result.weights_bytes,
        "optimizer_bytes": result.optimizer_bytes,
        "phases": [phase_dict(p, names) for p in result.phases],
        "totals": {
            "save_s": result.save.time_s,
            "restore_s": result.restore.time_s,
            "save_bound": result.save.bound,
            "restore_bound": result.restore.bound,
        },
        "save": _transfer_dict(result.save),
        "restore": _transfer_dict(result.restore),
        "warnings": named_notes(result.warnings, names),
        "assumptions": named_notes(result.assumptions, names),
    }


def _time(seconds: float, band: tuple[float, float] | None = None) -> str:
    """``3.44 ms``, with the likely range in the same unit: ``3.44 ms (3.28-9.06)``."""
    text = format_time(seconds)
    if band is not None:
        scale = TIME_UNIT_SCALE[text.split()[-1]]
        low, high = (b / scale for b in band)
        ends = format_number(low, zeros=True), format_number(high, zeros=True)
        if ends[0] == ends[1] and low != high:
            # a range narrower than three digits shows the digits that tell its ends apart,
            # the time with them ('1.66 s (1.66-1.66)' had printed, a review; then '319 s
            # (318.6-318.7)', the time outside its range to the eye, a second review)
            unit = text.split()[-1]
            # as many decimals, the same for all three, as tell the ends apart ('304.7 s
            # (304.7-305)' had dropped a trailing zero, a review), and more than the time's
            # three digits have ('25 s (25-26)' had stood for 25.49-25.51 s, a second review)
            shown_time = format_number(seconds / scale)
            first = len(shown_time.split(".")[1]) + 1 if "." in shown_time else 1
            for decimals in range(first, first + 6):
                shown = [f"{value:.{decimals}f}" for value in (seconds / scale, low, high)]
                if shown[1] != shown[2]:
                    return f"{shown[0]} {unit} ({shown[1]}-{shown[2]})"
        if ends[0] == ends[1]:
            return text  # no width ('0 us (0-0)' had printed, a unitless pair)
        text += f" ({ends[0]}-{ends[1]})"
    return text


#: Columns a narrow page drops, first to last, until the table fits: the algorithm is an aid
#: (the JSON keeps it); then, with the total's header over two lines where that is not enough,
#: the tier, which follows from the phase's ranks; each time x count, where the total beside
#: it is what the step or request takes (the phase's notes say what the count counts); and the
#: ranks, which each phase's note gives with its group ("tp group: 8 GPUs ...").
_NARROW_DROPS = (
    Drop(("algorithm",), name="algorithm"),
    Drop(("tier",), name="tier"),
    Drop(("each x count",), name="each x count"),
    Drop(("ranks",), name="ranks"),
)


def _phase_table(
    title: str,
    phases: Sequence[Phase],
    total_label: str,
    console: Console,
    *,
    exposed: bool = True,
) -> Table:
    """One row per phase. The collective is in the phase's name (and the JSON); cells keep
    whole (numbers are never folded or cut), one space apart; where the table is wider than the
    page, it leaves out :data:`_NARROW_DROPS` (render.stream.drop_columns, measuring the cells'
    text), the algorithm first, and puts the total's header on two lines before it drops more,
    and one caption names the columns left out."""
    total = f"{total_label} (likely range)"
    columns = [
        ("phase", "left"),
        ("size/GPU", "right"),
        ("ranks", "right"),
        ("tier", "left"),
        ("each x count", "right"),
        (total, "right"),
        ("exposed", "right"),
        ("algorithm", "left"),
    ]
    table = Table(
        title=UnitTitle(title),
        box=box.SIMPLE_HEAD,
        title_justify="left",
        pad_edge=False,
        padding=0,
        caption_justify="left",
    )
    for name, justify in columns:
        if exposed or name != "exposed":
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for p in phases:
        est = p.estimate
        per = "" if p.per in ("step", "checkpoint") else f"/{p.per[:3]}"
        table.add_row(
            p.name,
            format_size(p.bytes_per_gpu),
            str(p.ranks),
            p.tier,
            f"{format_time(p.time_s)} x {p.count}{per}",
            _time(p.total_s, p.total_s_range),
            *([format_time(p.exposed_s)] if exposed else []),
            f"{est.best.algorithm.value}/{est.best.protocol.value}" if est is not None else "-",
        )
    # the algorithm goes before the total's header is broken: a page of 100 columns or more
    # prints the table as it always has
    dropped, full = drop_columns(
        console, table, _NARROW_DROPS[:1], close_up=False, measure=text_width
    )
    if text_width(console, table) > console.width:
        more, _ = drop_columns(
            console,
            table,
            _NARROW_DROPS[1:],
            close_up=False,
            measure=text_width,
            headers={total: total.replace(" (", "\n(")},
        )
        dropped += more
    if dropped:
        table.caption = columns_left_out(
            dropped, console.width, full, json="every field", verb=False
        )
    return table


def _notes(
    console: Any,
    warnings: Sequence[str],
    assumptions: Sequence[str],
    names: Mapping[str, str],
    phases: Sequence[Phase] = (),
) -> None:
    """Warnings, then the assumptions as a list, then each phase's own (where its group sits,
    what its count counts); long lines wrap under their own text."""
    notes = Table.grid(padding=(0, 1))
    notes.add_column(no_wrap=True)
    notes.add_column(overflow="fold")
    width = console.width
    for warning in named_notes(warnings, names):
        # "warning:" and its padding take 9 columns; a number keeps its unit on its line
        notes.add_row(Text("warning:", style="bold"), Text(unit_wrap(warning, width - 9), "bold"))
    if warnings:
        console.print(notes)
    if assumptions:
        console.print(Text("assumptions:", style="bold"))
        console.print(bullets(dict.fromkeys(named_notes(assumptions, names)), width=width))
    if any(p.assumptions for p in phases):
        console.print(Text("per phase:", style="bold"))
        console.print(
            bullets(
                (
                    f"{phase.name}: {note}"
                    for phase in phases
                    for note in dict.fromkeys(named_notes(phase.assumptions, names))
                ),
                width=width,
            )
        )


def _kv_table(rows: Sequence[tuple[str, str]], width: int | None = None) -> Table:
    """Key-value rows; with the console's ``width``, a value breaks only between words that do
    not part a number from its unit ("16.3 GiB" stays on one line)."""
    table = Table(box=box.SIMPLE_HEAD, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    # the value column starts after the key and its padding, 7 columns in all, and ends 2 short
    room = width - max(len(key) for key, _ in rows) - 8 if width and rows else None
    for key, value in rows:
        table.add_row(key, unit_wrap(value, room) if room else value)
    return _fold(table)


def render_train(
    result: TrainResult,
    fmt: str = Format.TABLE,
    *,
    names: Mapping[str, str] = _PLAIN,
    stream: TextIO | None = None,
) -> None:
    """Print a training step: phases, totals, warnings, assumptions (or its JSON)."""
    if fmt == Format.JSON:
        render_json(train_dict(result, names), stream)
        return
    console = _console(stream)
    spec, par, totals = result.spec, result.spec.parallel, result.totals
    sharding = f"ZeRO-{spec.zero}" if spec.zero else "no sharding"
    where = (
        f"{result.nodes} node{'s' if result.nodes != 1 else ''} x {result.gpus_per_node} "
        f"GPU{'s' if result.gpus_per_node != 1 else ''}"
    )
    if result.sites > 1:
        where += f" over {result.sites} sites"
    interleaved = (
        f", interleaved 1F1B ({spec.virtual_stages} chunks per stage)"
        if spec.virtual_stages > 1
        else ""
    )
    title = (
        f"train {spec.model.label}: {par.label}{interleaved}, {sharding}, "
        f"{spec.act_dtype.value} activations, {spec.grad_dtype.value} gradients "
        f"on {where} (per step: {result.microbatches} micro-batch"
        f"{'es' if result.microbatches != 1 else ''} of "
        + (
            f"{spec.micro_batch} x {result.seq_len} tokens)"
            if result.seq_len is not None
            else f"{spec.micro_batch} sequence{'s' if spec.micro_batch != 1 else ''}, length "
            "not given)"
        )
    )
    console.print(_phase_table(title, result.phases, "per step", console))
    rows = [
        ("communication", f"{_time(totals.comm_s, totals.comm_s_range)} per step"),
        (
            "exposed",
            f"{_time(totals.exposed_s, totals.exposed_s_range)} per step (not hidden under "
            "compute)",
        ),
    ]
    if totals.compute_s is not None:
        rows.append(("compute", f"{format_time(totals.compute_s)} (forward + backward)"))
    if totals.bubble_fraction > 0:
        # 12.5 %, not 12 % (round-half-even of :.0%), nor 3.1e+03 % (:.3g) at pp 32, M = 1
        bubble = f"{format_number(totals.bubble_fraction * 100)}% of compute"
        if totals.bubble_s is not None:
            bubble += f" = {format_time(totals.bubble_s)}"
        rows.append(("pipeline bubble", bubble))
    if totals.step_s is not None:
        parts = "compute + bubble + exposed" if totals.bubble_fraction > 0 else "compute + exposed"
        rows.append(("step", f"{_time(totals.step_s, totals.step_s_range)}: {parts}"))
    rows.append(("memory", _memory_words(result.memory, names)))
    console.print(_kv_table(rows, console.width))
    _notes(console, result.warnings, result.assumptions, names, result.phases)


def render_compare(
    results: Sequence[TrainResult],
    skipped: Sequence[str],
    fmt: str = Format.TABLE,
    *,
    names: Mapping[str, str] = _PLAIN,
    stream: TextIO | None = None,
    overrides: Sequence[str] = (),
) -> None:
    """Print layouts ranked by exposed communication per step (or their JSON); ``overrides``
    (catalogue and cost-parameter files laid over the built-in ones) are said once, after the
    table (review BZ: a search priced with them had named neither)."""
    if fmt == Format.JSON:
        render_json(compare_dict(results, skipped, names, overrides), stream)
        return
    console = _console(stream)
    if not results:
        console.print("no valid layout")
    else:
        first = results[0]
        gpus = first.nodes * first.gpus_per_node
        order = "fastest step" if first.totals.step_s is not None else "least exposed communication"
        batch = first.spec.global_batch
        flag, memory_flag = named_notes(["{global_batch}", "{gpu_memory}"], names)
        capacity = first.memory.capacity_from
        how = "no" if first.memory.recompute is Recompute.NONE else first.memory.recompute.value
        sharding = f"ZeRO-{first.spec.zero}" if first.spec.zero else "no ZeRO"
        memory = (
            f"mem: per GPU ({sharding}, {how} recompute), against "
            f"{named_notes([capacity], names)[0]}; tight layouts (over {_TIGHT_PERCENT}) come "
            "after those "
            "with room, and layouts out of memory last"
            if capacity is not None
            else f"mem: per GPU ({sharding}, {how} recompute), checked only against the "
            f"largest GPU the preset is sold with, {memory_size(first.memory.largest_bytes)} "
            f"(layouts past it are out of memory on every variant, and last; give {memory_flag})"
            if first.memory.largest_bytes is not None
            else f"mem: per GPU ({sharding}, {how} recompute), not checked against the GPUs' "
            f"(give {memory_flag})"
        )
        virtual = max(r.spec.virtual_stages for r in results)
        interleaved = (
            f"; layouts with pp > 1 run interleaved 1F1B, {virtual} model chunks per stage, "
            "where they can (else: not interleaved, and the row's note says why)"
            if virtual > 1
            else ""
        )
        table = Table(
            # (a number keeps its unit: 80 GiB had ended one line and begun the next)
            title=UnitTitle(
                f"layouts of {gpus} GPUs for {first.spec.model.label}, {order} first; every "
                f"layout runs {batch:,} {'sequence' if batch == 1 else 'sequences'} per step "
                f"(M = {batch:,} / (dp x "
                f"{first.spec.micro_batch}) micro-batches; {flag} to "
                f"change){interleaved}; comm: all communication per step, exposed: the part "
                f"compute does not hide; {memory}"
            ),
            box=box.SIMPLE_HEAD,
            title_justify="left",
        )
        # cp is a column when some layout has it: tp x cp x pp x dp is the GPU count; so is ep
        # (a dense model's search had printed a column of 1s; the JSON keeps every field)
        dims = tuple(
            d
            for d in ("tp", "cp", "pp", "dp", "ep")
            if d not in ("cp", "ep") or any(getattr(r.spec.parallel, d) > 1 for r in results)
        )
        for name in ("#", *dims, "M", "exposed", "comm", "step", "mem GiB", "note"):
            table.add_column(name, justify="left" if name == "note" else "right")
        notes = [
            [
                *([f"ranks {r.rank_order}"] if r.rank_order != DEFAULT_ORDER else []),
                *(w.split(":")[0] for w in named_notes(r.warnings, names)),
            ]
            for r in results
        ]
        headers = ("#", *dims, "M", "exposed", "comm", "step", "mem GiB")
        cells = [
            (
                str(i),
                *(str(getattr(r.spec.parallel, d)) for d in dims),
                str(r.microbatches),
                format_time(r.totals.exposed_s),
                format_time(r.totals.comm_s),
                format_time(r.totals.step_s) if r.totals.step_s is not None else "-",
                # trailing zeros kept, as the times beside it: 23.98 GiB had read "24" over 19.6
                format_number(r.memory.total_bytes / GiB, zeros=True),
            )
            for i, r in enumerate(results, start=1)
        ]
        # each row's notes where the page has room; else "OOM" and "tight" for the memory
        # verdicts (the mem column has the size) and a letter for each other note, listed under
        # the table (at 80 columns a note column of 7 had broken words over 10 lines). The room
        # is what the other columns, as rich lays them out, leave of the page
        probe = Table(*headers, "", box=box.SIMPLE_HEAD)
        for row_cells in cells:
            probe.add_row(*row_cells, "")
        room = console.width - text_width(console, probe)  # (as rich measures it, from the text)
        keyed = any(len("; ".join(row)) > room for row in notes)
        others = [n for row in notes for n in row if not n.startswith(_MEMORY_VERDICTS)]
        keys = {n: chr(ord("a") + i) for i, n in enumerate(dict.fromkeys(others))}
        keyed = keyed and len(keys) <= 26
        for row_cells, row in zip(cells, notes, strict=True):
            note = " ".join(_short_note(n, keys) for n in row) if keyed else "; ".join(row)
            table.add_row(*row_cells, note)
        dropped, full = drop_columns(console, table, _LAYOUT_DROPS)
        if dropped:
            table.caption = columns_left_out(dropped, console.width, full, json="every field")
            table.caption_justify = "left"
        console.print(_fold(table))
        if keyed and any(notes):
            legend = [f"{key}: {note}" for note, key in keys.items()]
            legend += [f"OOM: out of memory; tight: over {_TIGHT_PERCENT} of the GPU's memory"]
            console.print(Text("notes:", style="bold"))
            console.print(bullets(legend, console.width))
        # the rate against the GPU's peak (an MFU, or 'not judged') holds for every layout:
        # said once (the table had dropped it; a rate past the peak is each row's warning)
        for note in _rate_notes(first, names):
            console.print(prose(note, "rate:"))
        for note in [*_search_notes(results, names), *_message_notes(results)]:
            console.print(prose(note, "note:"))
        if first.totals.step_s is None:
            console.print(
                prose(
                    "no compute time given: every collective counts as exposed and no step time "
                    "(with its pipeline bubble) is worked out, so deep pipelines rank high; give "
                    "--tflops or --backward-time for overlap and step times",
                    "",
                )
            )
    if overrides:
        console.print(Text("assumptions:", style="bold"))
        console.print(bullets(list(overrides), console.width))
    if skipped:
        console.print(Text("skipped:", style="bold"))
        console.print(bullets(named_notes(skipped, _searched(names)), console.width))


#: What a narrow page leaves out of a layout search's table: the micro-batches, which the
#: title works out from dp (M = batch / (dp x micro-batch)).
_LAYOUT_DROPS = (Drop(("M",), phrase="the M column (micro-batches: see the title)"),)


def _search_notes(results: Sequence[TrainResult], names: Mapping[str, str]) -> list[str]:
    """A search's options that hold for every layout and change none (--hierarchical on one
    site, as a single run says; the search had said nothing of it, review CN), and --sharp
    where some layout's step runs no all-reduce on SHARP (a single run's note, review CR)."""
    if not results:
        return []
    result = results[0]
    said = []
    if result.spec.hierarchical and result.sites == 1:
        said.append(HIERARCHICAL_ONE_SITE)
    if result.spec.tflops is not None:
        # the compute is one rate for every shape of matrix (review DN: for DeepSeek-V3 the
        # search ranked tp 8 with no expert parallelism first, its experts split 8 ways)
        said.append(
            "{tflops} serves every layout alike: compute is FLOPs over that one rate, whatever "
            "the shape of each GPU's matrix multiplies, so a layout that splits them thinner "
            "(a high tp, experts split across a tensor-parallel group rather than spread by ep) "
            "ranks ahead of what it runs at; read its step time as a lower bound"
        )
    if result.spec.backward_s is not None:
        # one time for every layout: how it is read, which a single run reads otherwise
        # (review CQ: the two had given one layout two step times, said nowhere but the docs)
        said.append(
            "{backward_s} serves every layout as an evenly split step's, scaled by each "
            "layout's busiest stage where its layers do not split evenly (x ceil(L / pp) x pp / "
            "L); a single run takes it as its own layout's, as measured"
        )
    unused = [next((a for a in r.assumptions if a.startswith(SHARP_UNUSED)), None) for r in results]
    notes = [u for u in unused if u is not None]
    if len(notes) == len(results):
        said.append(
            notes[0]
            if len(set(notes)) == 1
            else f"{SHARP_UNUSED}no layout runs an all-reduce on it (a single run of a layout "
            "says why)"
        )
    elif notes:
        # the layouts that take it, by their rows (#), where few do
        taken = [str(i) for i, u in enumerate(unused, start=1) if u is None]
        which = (
            f"layout{'s' if len(taken) > 1 else ''} #{', #'.join(taken)}"
            if len(taken) <= 6
            else f"{len(taken)} of the {len(results)} layouts"
        )
        verb = "runs" if len(taken) == 1 else "run"
        said.append(
            f"{SHARP_UNUSED}only {which} {verb} an all-reduce on it (a single run of any other "
            "layout says why)"
        )
    return named_notes(said, names)


def _range_notes(results: Sequence[TrainResult]) -> list[str]:
    """The layouts whose phase ranges reach down to Simple's per-step reading, with the
    phases' word on it, once (review DM: 6 of 35 layouts' JSON ranges had moved, with
    ``search_notes`` empty); for the JSON, the text table shows no ranges. The phases' words
    differ in their rank counts alone, which are given as a span."""
    which: list[str] = []
    ranks: list[int] = []
    said = ""
    for i, r in enumerate(results, start=1):
        phases = [
            (p.ranks, a)
            for p in r.phases
            for a in p.assumptions
            if a.startswith(SIMPLE_EXTRAPOLATION_HINT)
        ]
        if phases:
            which.append(f"#{i}")
            said = phases[0][1]
            ranks += [count for count, _ in phases]
    if not which:
        return []
    low, high = min(ranks, default=0), max(ranks, default=0)
    if low != high:
        said = _RANKS.sub(f"for {low} to {high} ranks that is", said)
    layouts = _layouts_named(which, len(results))
    return [f"{layouts}: {said}"]


#: Where the phases' word on Simple's per-step reading gives its rank count
_RANKS = re.compile(r"for (\d+) ranks that is")


def _message_notes(results: Sequence[TrainResult]) -> list[str]:
    """The layouts whose expert all-to-alls post more messages a rank than the per-message
    cost's fitted runs, with the phases' word on it, once: a single run says its message term
    is an extrapolation and its likely range reaches down to the fitted runs' count, while a
    search of DeepSeek-V3 on 32 DGX H100 had ranked 20 such layouts (ep 32 to 256), their JSON
    ranges moved, with no word of it. The phases' words differ in their counts alone, which
    are given as spans."""
    which: list[str] = []
    said = ""
    messages: list[int] = []
    ranks: list[int] = []
    for i, r in enumerate(results, start=1):
        notes = [
            (p.ranks, a) for p in r.phases for a in p.assumptions if MESSAGE_EXTRAPOLATION_HINT in a
        ]
        if notes:
            which.append(f"#{i}")
            said = said or notes[0][1]
            ranks += [count for count, _ in notes]
            messages += [int(a.split(" ", 1)[0]) for _, a in notes]
    each = _MESSAGE_COST.match(said)
    if each is None:
        return []
    # "63 messages a rank at 2.4 us each (151 us of each all-to-all): the per-message cost ..."
    ranked = _span(min(ranks), max(ranks))
    said = said[said.index(MESSAGE_EXTRAPOLATION_HINT) :]
    said = _MESSAGE_RANKS.sub(f"so for {ranked} ranks this term", said)
    said = said.replace("the likely range reaches", "the likely ranges of such phases reach")
    layouts = _layouts_named(which, len(results))
    return [
        f"{layouts} (expert groups of {ranked} GPUs): their all-to-alls post "
        f"{_span(min(messages), max(messages))} messages a rank at {each.group(1)} each; {said}"
    ]


def _layouts_named(which: Sequence[str], searched: int) -> str:
    """Some layouts of a search as a note names them: by their rows (#), or their count where
    they are more than six."""
    if len(which) > 6:
        return f"{len(which)} of the {searched} layouts"
    return f"layout{'s' if len(which) > 1 else ''} {', '.join(which)}"


def _span(low: int, high: int) -> str:
    """A count, or the span of counts, as a note gives it: 63, or 31 to 255."""
    return f"{low}" if low == high else f"{low} to {high}"


#: Where an all-to-all's word on its message term gives its rank count
_MESSAGE_RANKS = re.compile(r"so for (\d+) this term")
#: The per-message cost an all-to-all's word gives (the GPU's: one for every layout)
_MESSAGE_COST = re.compile(r"\d+ messages a rank at (.+?) each \(")


def _rate_notes(result: TrainResult, names: Mapping[str, str]) -> list[str]:
    """What ``--tflops`` was judged against (an MFU, or "not judged"), the same for every
    layout of a search: the layouts' table and JSON say it once."""
    # a rate past the peak is a warning (each row's note keeps its first words)
    said = [*result.warnings, *result.assumptions]
    return named_notes([a for a in said if a.startswith("{tflops}")], names)


#: The share past which a layout is "tight", as the page writes it: "90 %"
#: without a space, which a wrap had broken between '90' and '%' (a review)
_TIGHT_PERCENT = f"{TIGHT_FRACTION * 100:.0f}%"
#: How the memory warnings start ("out of memory (127%)", "memory is tight (96%)").
_MEMORY_VERDICTS = (OUT_OF_MEMORY, TIGHT)


def _short_note(note: str, keys: Mapping[str, str]) -> str:
    """A layout's note in a narrow table: OOM, tight, or the note's letter."""
    if note.startswith(_MEMORY_VERDICTS[0]):
        return "OOM"
    if note.startswith(_MEMORY_VERDICTS[1]):
        return "tight"
    return keys[note]


def render_infer(
    result: InferResult,
    fmt: str = Format.TABLE,
    *,
    names: Mapping[str, str] = _PLAIN,
    stream: TextIO | None = None,
) -> None:
    """Print serving communication per token and per request (or its JSON)."""
    if fmt == Format.JSON:
        render_json(infer_dict(result, names), stream)
        return
    console = _console(stream)
    spec = result.spec
    layout = f"tp{spec.tp}" + (f" pp{spec.pp}" if spec.pp > 1 else "")
    layout += f" ep{spec.ep}" if spec.ep > 1 else ""
    title = (
        f"infer {spec.model.label}: {layout}, batch {spec.batch}, prompt {spec.prompt_tokens} "
        f"tokens, {spec.output_tokens} output tokens, {spec.act_dtype.value} activations"
        + (", disaggregated prefill/decode" if spec.disaggregated else "")
    )
    # serving compute is not modelled: every phase is exposed, the column would repeat "total"
    if result.phases:
        console.print(_phase_table(title, result.phases, "total", console, exposed=False))
        rows = [
            (
                "per token",
                f"{_time(result.per_token_s, result.per_token_s_range)} of communication per "
                "decode step",
            ),
            (
                "per request",
                f"{_time(result.per_request_s, result.per_request_s_range)}: prefill + "
                f"{'KV transfer + ' if spec.disaggregated else ''}{spec.output_tokens} x per "
                "token",
            ),
        ]
    else:  # one GPU and no disaggregation: an empty table and '0 us (0-0)' said nothing
        console.print(title)
        rows = [("communication", "none: one GPU per instance, no collective to cost")]
    if result.kv_bytes_per_token is not None:
        kv = f"{result.kv_bytes_per_token:,.0f} B per token ({spec.kv_dtype.value})"
        if result.kv_bytes_per_request is not None:
            where = "all GPUs" if spec.ep == 1 else "the GPUs of the attention group serving it"
            kv += (
                f", {memory_size(result.kv_bytes_per_request)} for one request's "
                f"{spec.prompt_tokens:,}-token prompt"
                # a latent (MLA) cache is kept whole on every tensor-parallel rank: the figure
                # is each GPU's copy, not a total split over them (a review)
                + (
                    " " + _latent_cache_words(spec.tp, spec.pp)
                    if spec.model.kv_elements_per_layer is not None and spec.tp > 1
                    else _copied_heads_words(
                        spec.model.kv_heads or spec.model.heads,
                        spec.tp,
                        result.kv_bytes_per_request,
                        where,
                    )
                )
            )
        rows.append(("KV cache", kv))
    if result.dominant_tier is not None:
        shares = ", ".join(f"{t} {format_time(s)}" for t, s in result.tier_s.items())
        rows.append(("dominant tier", f"{result.dominant_tier} (per request: {shares})"))
    rows.append(("memory", _memory_words(result.memory, names)))
    console.print(_kv_table(rows, console.width))
    _notes(console, result.warnings, result.assumptions, names, result.phases)


def _transfer_total(transfer: Transfer) -> str:
    """A save's or restore's time, its bound, and the storage latency added to the bound's."""
    latency = f" + {format_time(transfer.latency_s)} latency" if transfer.latency_s else ""
    # 'bound by one request' (it had read 'one request-bound'; a review)
    return f"{format_time(transfer.time_s)} (bound by {transfer.bound}{latency})"


#: What a narrow page leaves out of the checkpoint table: the rate, which the limit beside it
#: words (16 nodes x 1 x ndr at 48.8 GB/s each) and the bytes over the time give.
_CHECKPOINT_DROPS = (Drop(("rate",), name="rate"),)


def render_checkpoint(
    result: CheckpointResult,
    fmt: str = Format.TABLE,
    *,
    names: Mapping[str, str] = _PLAIN,
    stream: TextIO | None = None,
) -> None:
    """Print save and restore times with every bound, the one that sets the time marked ``<-``
    (or their JSON)."""
    if fmt == Format.JSON:
        render_json(checkpoint_dict(result, names), stream)
        return
    console = _console(stream)
    spec = result.spec
    what = f"{format_size(result.weights_bytes)} of {spec.weights_dtype.value} weights"
    if result.optimizer_bytes:
        what += f" + {format_size(result.optimizer_bytes)} of optimizer state"
    # a count of units only where they multiply a storage rate (not for S3, which has none)
    units = (
        f"{spec.storage_units:,} x "
        if any(b.name == "storage" for t in (result.save, result.restore) for b in t.bounds)
        else ""
    )
    title = (
        f"checkpoint {spec.model.label}: {what} to {units}{result.storage_id} "
        f"from {result.nodes:,} node{'s' if result.nodes != 1 else ''}"
    )
    # cells two spaces apart (the column rule and one collapsed space of padding)
    table = Table(
        title=UnitTitle(title),
        box=box.SIMPLE_HEAD,
        title_justify="left",
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
    )
    for name in ("transfer", "bytes", "bound", "rate", "time", "", "limit"):
        table.add_column(
            name,
            justify="right" if name in ("bytes", "rate", "time") else "left",
            no_wrap=name != "limit",
        )
    for t in (result.save, result.restore):
        for i, b in enumerate(t.bounds):
            table.add_row(
                t.name if i == 0 else "",
                format_size(t.bytes) if i == 0 else "",
                b.name,
                format_bandwidth(b.bw_Bps, past_gb=True) if b.bw_Bps is not None else "-",
                format_time(b.time_s),
                "<-" if b.name == t.bound else "",
                b.detail,
            )
    # (the limit column is prose: the rate goes before it is squeezed, render.stream.PROSE_ROOM)
    dropped, full = drop_columns(console, table, _CHECKPOINT_DROPS)
    if dropped:
        table.caption = columns_left_out(dropped, console.width, full, json="every field")
        table.caption_justify = "left"
    console.print(_fold(table))
    rows = [
        ("save", _transfer_total(result.save)),
        ("restore", _transfer_total(result.restore)),
    ]
    console.print(_kv_table(rows, console.width))
    _notes(console, result.warnings, result.assumptions, names)
