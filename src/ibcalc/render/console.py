"""Rendering: rich tables for people, JSON and CSV for machines. The only module importing rich.

Every function takes a result object and a :class:`Format`. JSON is the result's own
``model_dump(mode="json")`` (its derived figures are computed fields), never a dict built here.
Assumptions carry ``{field}`` marks; ``names`` says how the caller names each field (the CLI:
flags), applied by :func:`named_notes` alone. Every printed number carries its unit; GB/s is
10^9 bytes per second (the nccl-tests unit).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TextIO

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ibcalc.catalogue.models import Catalogue, Link, Storage, System
from ibcalc.engine.plan import NCCL_ALGORITHMS
from ibcalc.engine.types import Cost, Estimate, busbw_factor
from ibcalc.errors import fill_fields
from ibcalc.jsonmodel import json_text
from ibcalc.listing import listed
from ibcalc.render.stream import (
    Drop,
    PipeConsole,
    TrimmedStream,
    UnitText,
    UnitTitle,
    columns_left_out,
    drop_columns,
    env_columns,
    left_out,
    unit_wrap,
)
from ibcalc.render.words import LINK_KEYS, allreduce_words, links_words
from ibcalc.units import (
    GB,
    format_bandwidth,
    format_factor,
    format_number,
    format_ratio,
    format_size,
    format_time,
    plural,
    significant,
)

if TYPE_CHECKING:
    from ibcalc.explain import Explanation
    from ibcalc.gap import GapReport
    from ibcalc.sweep import SweepResult

__all__ = [
    "TIME_UNIT_SCALE",
    "Format",
    "named_notes",
    "page_width",
    "render_estimate",
    "render_gap",
    "render_json",
    "render_link",
    "render_links",
    "render_sweep",
    "render_system",
    "render_systems",
    "sweep_notes",
]


class Format(StrEnum):
    """Output formats of results: a table for people, JSON or CSV (sweeps) for machines."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"


#: How fields are named when the caller gives no names: as themselves.
_PLAIN: Mapping[str, str] = {}

_BAR = "▏▎▍▌▋▊▉█"


def page_width() -> int:
    """The width output is laid out for: $COLUMNS where set (rich reads it before the
    terminal), else the terminal's, else 160 for a pipe or a file."""
    return _console().width


def _console(stream: TextIO | None = None) -> Console:
    # rich pads every table line to the page width: trim those spaces on the way out
    stream = TrimmedStream(stream if stream is not None else _stdout())  # type: ignore[assignment]
    console = PipeConsole(file=stream, highlight=False)
    if not console.is_terminal:
        # Pipes and files get a wide page (or $COLUMNS) instead of rich's 80-column default,
        # so tables stay one row per entry; a terminal keeps its own width.
        width = env_columns(160)
        console = PipeConsole(file=stream, highlight=False, width=max(40, width))
    return console


#: Narrowest page on which gap's consequence table keeps its five columns with whole words;
#: below it each placement is printed as a block of lines.
_GAP_TABLE_MIN_WIDTH = 70


def bullets(items: Iterable[str], width: int | None = None) -> Table:
    """A bulleted list for the page's width. The bullet is in a column of its own: a URL longer
    than the line folds beside it (it had wrapped whole onto the next line, leaving a bare "-"),
    and prose wraps under its own start, not under the bullet (assumptions had run to 150
    columns and more on an 80-column terminal). Given the page's ``width``, an item breaks only
    where a number does not part from its unit (:func:`unit_wrap`)."""
    bullets = Table.grid(padding=(0, 1, 0, 0))
    bullets.add_column(no_wrap=True)
    bullets.add_column(overflow="fold")
    for item in items:
        # the bullet column and its padding take 4
        bullets.add_row("  -", Text(unit_wrap(item, width - 4) if width else item))
    return bullets


def prose(text: str, prefix: str = "  ", style: str = "") -> Table | Text:
    """A paragraph for the page's width, wrapped at words under its own start, after
    ``prefix`` (an indent, or a label such as ``note:``); it had been one line of up to 270
    columns, which a terminal breaks mid-word."""
    if not prefix:
        return Text(text, style=style)
    grid = Table.grid(padding=(0, 1 if prefix.strip() else 0, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(prefix, UnitText(text, style=style))
    return grid


def _fold(table: Table) -> Table:
    """Wrap cells that do not fit instead of cutting them with an ellipsis: a cut id or number
    is worse than a taller row."""
    for column in table.columns:
        column.overflow = "fold"
    return table


def render_json(data: Any, stream: TextIO | None = None) -> None:
    """Print ``data`` as indented JSON."""
    out = stream if stream is not None else _stdout()
    out.write(json_text(data))


def _stdout() -> TextIO:
    import sys

    return sys.stdout


def named_notes(notes: Sequence[str], names: Mapping[str, str] = _PLAIN) -> list[str]:
    """``notes`` with each ``{field}`` mark replaced by ``names[field]`` (else the field)."""
    return [fill_fields(note, names) for note in notes]


def _named(data: Any, names: Mapping[str, str]) -> Any:
    """A JSON dump with every ``assumptions`` list in it passed through :func:`named_notes`."""
    if isinstance(data, dict):
        return {
            key: named_notes(value, names) if key == "assumptions" else _named(value, names)
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [_named(item, names) for item in data]
    return data


def render_estimate(
    est: Estimate,
    fmt: str = Format.TABLE,
    *,
    names: Mapping[str, str] = _PLAIN,
    stream: TextIO | None = None,
    explain: bool = False,
) -> None:
    """Print an estimate: a table (result, choice, runners-up, assumptions) or its JSON; with
    ``explain``, its derivation too (``explanation`` in the JSON)."""
    # the JSON model and the derivation load when asked for: a table needs neither
    if fmt == Format.JSON:
        from ibcalc.results import EstimateResult

        data = _named(EstimateResult.of(est).model_dump(mode="json"), names)
        if explain:
            from ibcalc.explain import explain as derive

            data["explanation"] = derive(est).model_dump(mode="json")
        render_json(data, stream)
    else:
        _estimate_table(est, named_notes(est.assumptions, names), stream)
        if explain:
            from ibcalc.explain import explain as derive

            _explanation(derive(est), stream)


def _explanation(ex: Explanation, stream: TextIO | None) -> None:
    console = _console(stream)
    terms = Table(
        title=f"derivation of {ex.chosen} (one operation)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    terms.add_column("term")
    terms.add_column("time", justify="right")
    terms.add_column("how it is worked out (constants: docs/model.md, data/cost_params.yaml)")
    for term in ex.terms:
        terms.add_row(term.name, format_time(term.seconds), term.detail)
    terms.add_row("one operation", format_time(ex.single_s), "sum of the terms above")
    console.print()  # a blank line between the assumptions and the derivation
    console.print(_fold(terms))
    console.print(Text(f"as nccl-tests measures it: {format_time(ex.time_s)}", style="bold"))
    console.print(prose(ex.measurement))
    if ex.time_s_range is not None:
        low, high = ex.time_s_range
        console.print(
            prose(
                f"likely measured {format_time(low)} - {format_time(high)}: the 10th-90th "
                f"percentile of held-out errors in the {ex.regime} regime, {ex.transport_class} "
                "transport (error_band in data/cost_params.yaml)"
                + (
                    f", over {' and '.join([ex.chosen, *ex.range_covers])}: "
                    + ("NCCL's tuner" if ex.tuned else "the tuner-style estimate below")
                    + " ranks them as a near tie (reporting.notably_faster), which a real run "
                    "may break either way"
                    if ex.range_covers
                    else ""
                )
                + (
                    f", and down to {' and '.join(ex.range_reaches)}'s: NCCL's choice is far "
                    "behind it, further than published sweeps drop where NCCL switches, so a "
                    "real run may be there already"
                    if ex.range_reaches
                    else ""
                )
                + (
                    ", and down to the time with Simple's handshake count at the bytes a step "
                    "carries (an extrapolation: the assumption above says why)"
                    if ex.per_step
                    else ""
                )
                + (
                    f"; its low end is the time at the links' line rate, "
                    f"{format_time(ex.range_wire_floor_s)} (a ring's or a send/recv pair's "
                    "busbw cannot pass its links' line rate, nor can each GPU's share of an "
                    "all-to-all move faster over its links and NICs; engine.band.wire_floor_s), "
                    "where the band alone went lower"
                    if ex.range_wire_floor_s is not None
                    else ""
                )
            )
        )
    ranking = Table(
        title=(
            "why this algorithm: NCCL's tuner ranks by its own estimate"
            if ex.tuned
            else "why this algorithm and protocol: a tuner-style estimate"
        ),
        box=box.SIMPLE_HEAD,
        title_justify="left",
        caption=_more_caption(len(ex.candidates) - 8),
        caption_justify="left",
    )
    ranking.add_column("algorithm / protocol")
    ranking.add_column("NCCL's estimate" if ex.tuned else "tuner-style", justify="right")
    ranking.add_column("this model", justify="right")
    ranking.add_column("")
    shown = ex.candidates[:8]
    estimates = _distinct_times([c.tuner_time_s for c in shown])
    for c, estimate in zip(shown, estimates, strict=True):
        ranking.add_row(
            f"{c.algorithm} / {c.protocol}",
            estimate,
            format_time(c.model_time_s),
            "chosen" if c.chosen else "",
        )
    # a blank line between the range's paragraph and the ranking, as before the derivation (the
    # ranking's title had run on from the paragraph above it)
    console.print()
    console.print(_fold(ranking))
    console.print(prose(ex.why_chosen))


def _intra_note(data: Mapping[str, Any]) -> str:
    """The gap's scale-up note: the vendor's bidirectional figure of the whole link, and where
    these GPUs use less of it (a torus slice's ports, a mesh's links), how much."""
    vendor = f"vendor 'bidirectional': {format_bandwidth(data['intra_bidirectional_GBps'] * GB)}"
    if data["intra_link_GBps"] <= data["intra_GBps"] * (1 + 1e-9):
        return vendor
    link = format_bandwidth(data["intra_link_GBps"] * GB)
    return f"the share in use of {data['intra']}'s {link} (see the assumptions); {vendor}"


#: Seconds per unit of the times :func:`~ibcalc.units.format_time` prints (h past 9,999.5 s)
TIME_UNIT_SCALE = {"h": 3600.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _distinct_times(times: Sequence[float]) -> list[str]:
    """``times`` as :func:`format_time` prints them, with two more digits for neighbours that
    differ but would print alike (a ranking read "248 us" above "248 us", its first chosen)."""
    shown = [format_time(t) for t in times]
    for i in range(len(times) - 1):
        if shown[i] == shown[i + 1] and times[i] != times[i + 1]:
            for j in (i, i + 1):
                number, unit = shown[j].split()
                value = times[j] / TIME_UNIT_SCALE.get(unit, 1.0)
                decimals = len(number.split(".")[1]) if "." in number else 0
                shown[j] = f"{value:.{decimals + 2}f} {unit}"
    return shown


def span(bounds: tuple[float, float], shown: str, *, scale: float | None = None) -> str:
    """``36.0-43.0``: the bounds in the unit of ``shown`` (``39.5 ms``, ``470 GB/s``), to three
    figures with their trailing zeros."""
    unit = shown.split()[-1]
    if scale is None:
        scale = TIME_UNIT_SCALE.get(unit, 1.0)
    elif unit.startswith("GiB"):  # a check requirement written in binary units (render.check)
        scale = 2**30
    elif unit.startswith("MiB"):
        scale = 2**20
    elif unit.startswith("KiB"):
        scale = 2**10
    elif unit.startswith("TB"):
        scale = 1e12
    elif unit.startswith("MB"):
        scale = 1e6
    elif unit.startswith("kB"):
        # a busbw under 1 MB/s prints in kB/s: its range had stayed in GB/s, without a unit
        scale = 1e3
    low, high = (b / scale for b in bounds)
    return f"{format_number(low, zeros=True)}-{format_number(high, zeros=True)}"


def _more_caption(hidden: int) -> str | None:
    """The caption of a table that shows the first rows only: how many it leaves out."""
    if hidden <= 0:
        return None
    return f"{hidden} more not shown (--format json lists every one)"


def _terms_text(cost: Cost) -> str:
    """One operation's terms, and what nccl-tests' back-to-back timing makes of them."""
    text = f"latency {format_time(cost.latency_s)} + transfer {format_time(cost.transfer_s)}"
    # the fill is left out only where the total shows the same without it (under 0.5 % of the
    # time, 1.42 ms had been left out of 778 ms, and 122 us + 776 ms did not make it)
    base = cost.latency_s + cost.transfer_s
    # (compared without kept zeros: 10 ms exactly and 10.0001 ms print alike to three figures)
    if cost.fill_s > 0 and format_time(base, zeros=False) != format_time(
        base + cost.fill_s, zeros=False
    ):
        text += f" + pipeline fill {format_time(cost.fill_s)}"
    if cost.measured_s is not None:
        text += (
            f"; as nccl-tests times it {format_time(cost.measured_s)} per operation (back-to-back)"
        )
    return text


def _csv_row(label: str, row: dict[str, Any]) -> dict[str, Any]:
    """One sweep row for CSV: a list value (``time_us_range``) becomes two columns, ``_low``
    and ``_high``, so that a spreadsheet reads numbers, not "[88.33, 199.2]"."""
    out: dict[str, Any] = {"inter": label}
    for key, value in row.items():
        if isinstance(value, list) and len(value) == 2:
            out[f"{key}_low"], out[f"{key}_high"] = value
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"  # as JSON has them, not Python's True
        else:
            out[key] = value
    return out


def _estimate_table(
    est: Estimate, notes: Sequence[str], stream: TextIO | None, alternatives: int = 5
) -> None:
    console = _console(stream)
    factor = busbw_factor(est.collective, est.ranks)
    gpus, nodes = est.gpus_per_node, est.nodes
    where = f"{nodes} node{'s' * (nodes != 1)} x {gpus} GPU{'s' * (gpus != 1)}"
    asked = est.requested_size_bytes
    # 1 GiB on 144 ranks is 1073740032 B: headed '1.074 GB', it read as another size than asked
    rounded = asked is not None and asked != est.size_bytes
    size = format_size(asked if asked is not None and rounded else est.size_bytes, typed=True)
    title = f"{est.collective.value} of {size} ({est.dtype}) on {where}"
    table = Table(title=title, box=box.SIMPLE_HEAD, show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    if rounded:
        table.add_row("size", f"{est.size_bytes:.0f} B, {size} rounded as nccl-tests does")
    busbw = est.busbw_Bps
    time_text = format_time(est.time_s)
    if est.time_s_range is not None:
        time_text += f" ({span(est.time_s_range, time_text)})  likely range of a measurement"
    table.add_row("time", time_text)
    table.add_row("algbw", format_bandwidth(est.algbw_Bps))
    busbw_text = format_bandwidth(busbw)
    if est.busbw_Bps_range is not None:
        busbw_text += f" ({span(est.busbw_Bps_range, busbw_text, scale=1e9)})"
    if est.best.equivalent_busbw:
        busbw_text += "  equivalent, not a wire rate"
    table.add_row("busbw", f"{busbw_text}  [busbw = algbw x {format_factor(factor)}]")
    table.add_row("algorithm", f"{est.best.algorithm.value} / {est.best.protocol.value}")
    table.add_row("bottleneck", est.best.bottleneck)
    table.add_row("terms", _terms_text(est.best))
    where = links_words(**{key: getattr(est, key) for key in LINK_KEYS})
    table.add_row("ranks", f"{est.ranks} ({where})")
    console.print(_fold(table))
    if est.alternatives and alternatives > 0:
        hidden = len(est.alternatives) - alternatives
        shown = est.alternatives[:alternatives]
        # an equivalent busbw (in-network, 2-node tree) is marked as the headline's and the
        # sweep's are: it had shared the column with ring's wire rates unmarked (a review)
        marked = any(cost.equivalent_busbw for cost in shown)
        caption = "\n".join(
            text
            for text in (
                "* busbw is an equivalent figure, not a wire rate" if marked else None,
                # rows left out are said to be (an auditor could not tell one from a
                # candidate that does not exist)
                _more_caption(hidden),
            )
            if text
        )
        alt = Table(
            title="alternatives",
            box=box.SIMPLE_HEAD,
            title_justify="left",
            caption=caption or None,
            caption_justify="left",
        )
        alt.add_column("algorithm")
        alt.add_column("protocol")
        alt.add_column("time", justify="right")
        alt.add_column("busbw", justify="right")
        alt.add_column("vs chosen", justify="right")
        for cost in shown:
            alg_bw = est.size_bytes / cost.time_s
            alt.add_row(
                # a what-if NCCL does not implement says so in its row, not only in an
                # assumption below the table (review EB 7: 'rhd ... 0.86x' had led it)
                cost.algorithm.value + ("" if cost.algorithm in NCCL_ALGORITHMS else " (what-if)"),
                cost.protocol.value,
                format_time(cost.time_s),
                format_bandwidth(alg_bw * factor)
                + ("*" if cost.equivalent_busbw else " " if marked else ""),
                format_ratio(cost.time_s / est.time_s),
            )
        console.print(_fold(alt))
        overlap = _overlap_caption(est.best, shown)
        if overlap is not None:
            console.print(prose(overlap, "note:"))
    if notes:
        console.print(Text("assumptions:", style="bold"))
        console.print(bullets(notes, console.width))


def _overlap_caption(best: Cost, shown: Sequence[Cost]) -> str | None:
    """Words for an estimate table where some times are back-to-back periods (operations that
    overlap as nccl-tests runs them) and others single operations: each time is as nccl-tests
    would measure it, which the table had not said (review EB 10: a 16-node broadcast's ring/LL
    at 18.4 us, one operation 118 us, over LL128's 288 us; EE 6: the overlapping one may be an
    alternative, LL at 0.18x beside a forced LL128)."""
    rows = [best, *shown]
    overlapping = [
        c
        for c in rows
        if c.period_s is not None and c.measured_s is not None and c.measured_s < c.single_s * 0.99
    ]
    alone = [c for c in rows if c.period_s is None]
    if not overlapping or not alone:
        return None

    def names(costs: Sequence[Cost]) -> str:
        return ", ".join(dict.fromkeys(f"{c.algorithm.value}/{c.protocol.value}" for c in costs))

    first = overlapping[0]
    verb = "starts" if len(overlapping) == 1 else "start"
    return (
        f"times as nccl-tests measures them back to back: {names(overlapping)} {verb} the next "
        f"operation before the last ends ({names([first])} alone: "
        f"{format_time(first.single_s)}); {names(alone)} "
        f"{'does' if len(alone) == 1 else 'do'} not overlap (docs/model.md)"
    )


def render_links(
    links: Sequence[Link], fmt: str = Format.TABLE, stream: TextIO | None = None
) -> None:
    """Print links as a table (the name column only where it fits) or as a JSON list."""
    if fmt == Format.JSON:
        render_json([link.model_dump(mode="json") for link in links], stream)
        return
    console = _console(stream)
    wide = console.width >= 130
    table = Table(
        box=box.SIMPLE_HEAD, title="links (bandwidth per direction)", title_justify="left"
    )
    # the units sit in the headers, as in the systems table, so that ids, kinds and numbers are
    # read whole on a narrow terminal (80 columns had split 'scale-u/p' and 'achieva/ble')
    columns = [
        ("id", "left"),
        ("kind", "left"),
        ("scope", "left"),
        ("line\nGB/s", "right"),
        ("line\nGb/s", "right"),
        ("eff", "right"),
        ("achiev-\nable\nGB/s", "right"),
        ("conf", "left"),
    ]
    if wide:
        columns.append(("name", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "name")  # type: ignore[arg-type]
    for link in links:
        cells = [
            link.id,
            link.kind.value,
            link.scope,
            _gbps(link.per_direction_Bps / GB),
            format_number(link.per_direction_Bps * 8 / GB),
            f"{link.efficiency:.3g}",
            _gbps(link.achievable_Bps / GB) + ("*" if link.duplex_efficiency < 1 else ""),
            link.confidence.value,
        ]
        table.add_row(*cells, *([link.name] if wide else []))
    duplex = [link for link in links if link.duplex_efficiency < 1]
    # one way: a one-node ring sends and receives at once and gets less (xgmi-mi300x's 358 GB/s
    # achievable had read as what a one-node all-reduce reaches, 314: review BL)
    each = ", ".join(
        f"{link.id} {_gbps(link.achievable_Bps * link.duplex_efficiency / GB)}" for link in duplex
    )
    notes = [
        prose(
            "one way; where every GPU sends and receives at once (a one-node ring), "
            f"achievable x duplex_efficiency: {each} GB/s",
            "*",
        )
    ]
    _print_listing(console, table, _LINK_DROPS, links, notes if duplex else [])
    if not wide:
        console.print(Text("(names and sources: ibcalc links show ID)"))


def _print_listing(
    console: Console,
    table: Table,
    drops: Sequence[Drop],
    entries: Iterable[Link | System | Storage],
    notes: Sequence[Table | Text] = (),
) -> bool:
    """Print a catalogue listing: ``table`` fitted to the page (the ``drops`` it leaves out
    where too wide, render.stream.drop_columns), the ``notes`` on its rows, the entries' other
    names, and the footnote that names the columns left out. Returns whether any was."""
    dropped, full = drop_columns(console, table, drops)
    console.print(_fold(table))
    for note in notes:
        console.print(note)
    _print_aliases(console, entries)
    if dropped:
        console.print(Text(columns_left_out(dropped, console.width, full, json="every field")))
    return bool(dropped)


#: What a page too narrow for the links table leaves out, first to last: the line rate in
#: Gb/s (the GB/s figure x 8), the efficiency (achievable / line, both beside it), then the
#: scope and the kind (``links show ID``). The Gb/s column had given way below 90 columns by a
#: fixed rule, where it fitted too, and no footnote said so.
_LINK_DROPS = (
    Drop(("line\nGb/s",), name="line Gb/s"),
    Drop(("eff",), name="eff"),
    Drop(("scope",), name="scope"),
    Drop(("kind",), name="kind"),
)


def _print_aliases(console: Console, entries: Iterable[Link | System | Storage]) -> None:
    """A line naming every other name the listed entries answer to, so that a name the
    did-you-mean hint offers can be found in the list."""
    groups = [f"{entry.id}: {', '.join(entry.aliases)}" for entry in entries if entry.aliases]
    if groups:
        console.print(Text(f"other names (id: aliases): {'; '.join(groups)}"), overflow="fold")


def _entry_table(
    title: str, rows: Iterable[tuple[str, str]], sources: Sequence[str], stream: TextIO | None
) -> None:
    """One catalogue entry as field/value rows under its title, then its sources."""
    console = _console(stream)
    # the title wraps as the rows do, never between a number and its unit (rich's own wrap
    # had put gcp-tcpx's "one 200" over "Gb/s interface (A3 High)" at 40 columns)
    table = Table(
        box=box.SIMPLE_HEAD, show_header=False, title=UnitTitle(title), title_justify="left"
    )
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in rows:
        table.add_row(key, value)
    console.print(_fold(table))
    console.print(Text("sources:", style="bold"))
    # the page's width: a source's "8 x 200 Gb/s" had broken between 200 and Gb/s
    console.print(bullets(sources, console.width))


def render_link(link: Link, fmt: str = Format.TABLE, stream: TextIO | None = None) -> None:
    """Print every field of one link with its sources, or its JSON."""
    data = link.model_dump(mode="json")
    if fmt == Format.JSON:
        render_json(data, stream)
        return
    units = {
        "per_direction_GBps": " GB/s",
        "per_direction_Gbps": " Gb/s",
        "bidirectional_GBps": " GB/s",
        # per direction, as per_direction's own name says: beside bidirectional_GBps a bare
        # "48.75 GB/s" left the reader to guess which
        "achievable_GBps": " GB/s per direction",
        "lane_signalling_Gbps": " Gb/s",
    }
    rows = []
    for key, value in data.items():
        if value is None or value == [] or key in ("sources",):
            continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        elif key in ("latency_s", "transport_latency_s") and isinstance(value, int | float):
            # in the time's own unit: "18.4 us", not "1.84e-05 s" (the JSON keeps seconds)
            rows.append((key.removesuffix("_s"), format_time(value)))
            continue
        elif isinstance(value, float):
            # the catalogue's own figure, every digit of it: EDR's lane signalling is 25.78125
            # Gb/s ('g' had printed 25.7812)
            value = f"{value:.12g}"
        rows.append((key, f"{value}{units.get(key, '')}"))
    _entry_table(f"{link.id}: {link.name}", rows, link.sources, stream)


def render_systems(
    systems: Sequence[System],
    catalogue: Catalogue,
    fmt: str = Format.TABLE,
    stream: TextIO | None = None,
) -> None:
    """Print the system presets as a table (rates from ``catalogue``'s links) or a JSON list."""
    links = {link.id: link for link in catalogue.links}
    if fmt == Format.JSON:
        render_json(
            [
                {**system.model_dump(mode="json"), **_system_rates(system, links)}
                for system in systems
            ],
            stream,
        )
        return
    table = Table(
        box=box.SIMPLE_HEAD,
        title="systems (bandwidth per direction)",
        title_justify="left",
        pad_edge=False,
    )
    for name, justify in (
        ("id", "left"),
        ("GPUs", "right"),
        ("domain", "right"),
        ("scale-up", "left"),
        ("GB/s\nper\nGPU", "right"),
        ("NICs", "left"),
        ("GB/s\nper\nNIC", "right"),
        ("GB/s\nnet\n/GPU", "right"),
        ("conf", "left"),
    ):
        # ids and numbers are read whole (the rates carry their unit in the header): on a
        # narrow terminal the NICs wrap at their spaces ("8 x" over "ndr")
        table.add_column(
            name,
            justify=justify,  # type: ignore[arg-type]
            no_wrap=name != "NICs",
            # the NICs wrap at their space, never inside a link id ('slingshot-1' over '1')
            # (the width counts the column's one-space left pad once they close up)
            min_width=max((len(s.inter or "") for s in systems), default=1) + 1
            if name == "NICs"
            else max((len(s.intra or "") for s in systems), default=1) + 1
            if name == "scale-up"
            else None,
        )
    console = _console(stream)
    wide = console.width >= 140
    if wide:
        table.add_column("GPU")
    for system in systems:
        rates = _system_rates(system, links)

        def cell(key: str, rates: dict[str, float | None] = rates) -> str:
            value = rates[key]
            return _gbps(value) if value is not None else "-"

        table.add_row(
            system.id,
            str(system.gpus_per_node),
            str(system.scale_up_domain),
            system.intra or "-",
            cell("intra_per_gpu_GBps"),
            f"{system.nics_per_node} x {system.inter}" if system.inter else "0",
            cell("nic_GBps"),
            cell("net_per_gpu_GBps"),
            system.confidence.value,
            *([system.gpu] if wide else []),
        )
    # too narrow for every column whole: the columns close up, then the least telling give way,
    # so that ids, link names and the rates per GPU stay whole (80 columns had split
    # 'gb200-nvl/72'; the NIC rates had given way first, leaving the scale-out side as '8 x ndr')
    if _print_listing(console, table, _SYSTEM_DROPS, systems):
        console.print(Text("(every field of one: ibcalc systems show ID)"))


#: What a page too narrow for the systems table leaves out, first to last: the rate per NIC
#: (the network's per GPU x GPUs / NICs), the scale-up domain (the GPUs but on NVL72 racks,
#: whose ids say so), the grade, then the GPUs.
_SYSTEM_DROPS = (
    Drop(("GB/s\nper\nNIC",), name="GB/s per NIC"),
    Drop(("domain",), name="domain"),
    Drop(("conf",), name="conf"),
    Drop(("GPUs",), name="GPUs"),
)


def _system_rates(system: System, links: Mapping[str, Link]) -> dict[str, float | None]:
    """A preset's line rates per direction in GB/s, from its links' catalogue entries: its
    scale-up link's per GPU, one NIC's, and its NICs' per GPU (None: no such link)."""
    intra = links.get(system.intra or "")
    inter = links.get(system.inter or "")
    return {
        "intra_per_gpu_GBps": intra.per_direction_Bps / GB if intra else None,
        "nic_GBps": inter.per_direction_Bps / GB if inter else None,
        "net_per_gpu_GBps": (
            inter.per_direction_Bps * system.nics_per_node / system.gpus_per_node / GB
            if inter
            else None
        ),
    }


#: A system's memory fields, shown by their file keys with a unit.
_MEMORY_KEYS = ("gpu_memory_bytes", "gpu_memory_largest_bytes")


def render_system(
    system: System,
    catalogue: Catalogue,
    fmt: str = Format.TABLE,
    stream: TextIO | None = None,
) -> None:
    """Print every field of one system preset, with its links' rates per direction from
    ``catalogue`` (the list's table gives them, and it sends a narrow page here for them: this
    had given none, review DO), or its JSON."""
    rates = _system_rates(system, {link.id: link for link in catalogue.links})
    data = system.model_dump(mode="json")
    if fmt == Format.JSON:
        render_json({**data, **rates}, stream)
        return
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        if value is None or key == "sources":
            continue
        rows.append(
            (
                key.removesuffix("_bytes") if key in _MEMORY_KEYS else key,
                format_size(value)
                if key in _MEMORY_KEYS
                else f"{value:g} TFLOP/s (dense 16-bit tensor, per GPU)"
                if key == "gpu_peak_tflops"
                else ", ".join(value)
                if isinstance(value, list)
                else ("yes" if value else "no")
                if isinstance(value, bool)
                else str(value),
            )
        )
        for row, rate, what in _SYSTEM_RATE_ROWS.get(key, ()):
            figure = rates[rate]
            if figure is not None:
                rows.append((row, f"{_gbps(figure)} GB/s per direction ({what(system)})"))
    _entry_table(f"{system.id}: {system.name}", rows, system.sources, stream)


#: The rate rows of ``systems show``, after the field they follow: (row, rate key, what).
_SYSTEM_RATE_ROWS: dict[str, tuple[tuple[str, str, Callable[[System], str]], ...]] = {
    "intra": (("intra per GPU", "intra_per_gpu_GBps", lambda s: f"{s.intra}, line rate"),),
    "inter": (
        ("inter per NIC", "nic_GBps", lambda s: f"{s.inter}, line rate"),
        (
            "inter per GPU",
            "net_per_gpu_GBps",
            lambda s: f"{plural(s.nics_per_node, 'NIC')} over {plural(s.gpus_per_node, 'GPU')}",
        ),
    ),
}


def render_storage_list(
    entries: Sequence[Storage], fmt: str = Format.TABLE, stream: TextIO | None = None
) -> None:
    """Print the storage catalogue as a table (bandwidth per unit and per client) or JSON."""
    if fmt == Format.JSON:
        render_json([entry.model_dump(mode="json") for entry in entries], stream)
        return
    console = _console(stream)
    table = Table(
        box=box.SIMPLE_HEAD,
        title="storage (per unit: one target or appliance; - = no stated limit)",
        title_justify="left",
    )
    for name, justify in (
        ("id", "left"),
        ("kind", "left"),
        ("read", "right"),
        ("write", "right"),
        ("per client\nread / write", "right"),
        ("latency", "right"),
        ("conf", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]

    def rate(value: float | None) -> str:
        return format_bandwidth(value) if value is not None else "-"

    for entry in entries:
        table.add_row(
            entry.id,
            entry.kind.value,
            rate(entry.aggregate_read_Bps),
            rate(entry.aggregate_write_Bps),
            f"{rate(entry.per_client_read_Bps)} / {rate(entry.per_client_write_Bps)}",
            format_time(entry.latency_s) if entry.latency_s is not None else "-",
            entry.confidence.value,
        )
    # too wide: the columns close up (at 80 columns the rows took 81 and the rule 82, and every
    # line wrapped), then the least telling give way
    _print_listing(console, table, _STORAGE_DROPS, entries)
    console.print(Text("(names, sources and request limits: ibcalc storage show ID)"))


#: What a page too narrow for the storage table leaves out, first to last: the limits per
#: client (most entries state none), the grade, then the kind.
_STORAGE_DROPS = (
    Drop(("per client\nread / write",), name="per client read / write"),
    Drop(("conf",), name="conf"),
    Drop(("kind",), name="kind"),
)


def render_storage(entry: Storage, fmt: str = Format.TABLE, stream: TextIO | None = None) -> None:
    """Print every field of one storage entry with its sources, or its JSON."""
    data = entry.model_dump(mode="json")
    if fmt == Format.JSON:
        render_json(data, stream)
        return
    rows = []
    for key, value in data.items():
        if value is None or value == [] or key == "sources":
            continue
        # a value printed with its unit loses the unit its key names, as links show does
        # ('latency_s  100 ms' had read as seconds: review BL)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        elif key.endswith("_Bps"):
            key, value = key.removesuffix("_Bps"), format_bandwidth(value)
        elif key == "latency_s":
            key, value = "latency", format_time(value)
        elif key.endswith("_bytes"):
            # the catalogue file's own key (max_write_part: "5 GiB"; '_size', which review BO
            # asked for beside max_write_parts, is a key of no file: review BQ)
            key, value = key.removesuffix("_bytes"), format_size(value)
        elif key.endswith("_per_s"):
            value = f"{value:,.0f} requests/s"
        elif key == "max_write_parts":
            value = f"{value:,} parts"  # 10,000 parts, as the request rates print
        elif isinstance(value, float):
            value = f"{value:g}"
        rows.append((key, str(value)))
    _entry_table(f"{entry.id}: {entry.name}", rows, entry.sources, stream)


def render_sweep(
    result: SweepResult,
    fmt: str = Format.TABLE,
    stream: TextIO | None = None,
    *,
    names: Mapping[str, str] = _PLAIN,
) -> None:
    """Print a sweep: one nccl-tests-shaped table per group, or JSON/CSV of every group.

    JSON is a list with one object per group (one shape whether one fabric or several was
    swept); CSV has one row per size and group, the group's ``inter`` first. The table ends
    with what was assumed of the cluster (each note once over the groups, led by the groups it
    holds for where not all), ``{field}`` marks named by ``names``.
    """
    out = stream if stream is not None else _stdout()
    if fmt == Format.JSON:
        render_json(_named([group.model_dump(mode="json") for group in result.groups], names), out)
        return
    if fmt == Format.CSV:
        rows = [
            # one node: an empty cell, as JSON's null (the table's and legend's '-' had been
            # written; a review)
            _csv_row(group.inter or "", row.model_dump(mode="json"))
            for group in result.groups
            for row in group.rows
        ]
        buffer = io.StringIO()
        writer = csv.DictWriter(
            buffer, fieldnames=list(rows[0]) if rows else ["inter"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        out.write(buffer.getvalue())
        return
    # one busbw scale for every table, so that the bars of two fabrics compare
    peak = max((r.busbw_GBps for g in result.groups for r in g.rows), default=1.0) or 1.0
    for group in result.groups:
        _sweep_table(group.model_dump(mode="json"), stream, peak=peak)
    skipped, cluster_notes, parameter_notes = sweep_notes(result, names)
    if skipped is not None:
        _console(stream).print(prose(skipped, ""))
    if cluster_notes:
        console = _console(stream)
        console.print("assumptions:")
        console.print(bullets(cluster_notes, console.width))
    for note in parameter_notes:
        _console(stream).print(prose(note, "note:", style="dim"))


def sweep_notes(
    result: SweepResult, names: Mapping[str, str] = _PLAIN
) -> tuple[str | None, list[str], list[str]]:
    """What a sweep's table says under its rows: the sizes skipped (or None), what was assumed
    of the cluster (each note once over the groups, led by the groups it holds for where not
    all) and the notes on the cost parameters. The command line writes them to stderr beside
    CSV, which has no room for them (a script had been given 3 rows of 9 sizes, and numbers
    on an inferred node, with nothing said; a review)."""
    skipped_text = None
    skipped = result.skipped_bytes
    if skipped:
        # -b 1 with fp64, or all-to-all over 125,000 ranks: rows that nccl-tests runs as 0 bytes
        shown = listed((format_size(s) for s in skipped), "size")
        # the rank count matters only where each rank gets a share of the size; an all-reduce
        # of 1 B fp64 had read 'there on 16 ranks', as if more ranks would skip more
        why = (
            f"on {plural(result.groups[0].ranks, 'rank')}"
            if result.collective.per_rank_buffer
            else f"(under one {result.dtype.bytes}-byte element)"
        )
        skipped_text = (
            f"skipped {shown}: nccl-tests would run 0 bytes of {result.dtype.value} there {why}"
        )
    # each note once; with several fabrics, one some of them take names them ('8 NICs per node
    # assumed' had stood for the sweep of ndr, roce-400g and hdr without saying whose it was)
    from ibcalc.cluster.resolve import NODE_SHAPE_NOTE  # (not needed for estimates)

    per_group = [named_notes(group.cluster_notes, names) for group in result.groups]
    cluster_notes: dict[str, None] = {}
    for notes in per_group:
        for note in notes:
            whose = [g.label for g, n in zip(result.groups, per_group, strict=True) if note in n]
            # the first fabric's node is every fabric's (sweep_fabrics): its note holds for all
            shared = len(whose) == len(per_group) or note.startswith(NODE_SHAPE_NOTE)
            cluster_notes.setdefault(note if shared else f"{', '.join(whose)}: {note}")
    return skipped_text, list(cluster_notes), list(result.groups[0].parameter_notes)


def _sweep_table(group: dict[str, Any], stream: TextIO | None, *, peak: float) -> None:
    """One group's sweep in the shape of nccl-tests output; ``peak`` is the busbw of a full
    bar."""
    from ibcalc.sweep import MEASURED_DROP_MAX  # the sweep module is not needed for estimates

    rows: list[dict[str, Any]] = group["rows"]
    title = (
        f"{group['collective']} sweep on {group['nodes']} x "
        f"{plural(group['gpus_per_node'], 'GPU')} "
        f"({links_words(**{key: group[key] for key in LINK_KEYS})})"
    )
    console = _console(stream)
    falls: list[str] = []
    deepest = 0.0
    cells: list[tuple[str, ...]] = []
    previous: dict[str, Any] | None = None
    for row in rows:
        choice = f"{row['algorithm']}/{row['protocol']}"
        drop = row["time_drop_fraction"]
        if drop is not None and row["switch"] and previous is not None:  # a drop at a switch
            deepest = max(deepest, drop)
            falls.append(
                f"{row['size_bytes']:.0f} B ({previous['time_us']:.1f} -> {row['time_us']:.1f} us, "
                # three digits: a fall of 0.45 % had read '-0%' (a review)
                f"-{format_number(100 * drop)}%)"
            )
        cells.append(
            (
                f"{row['size_bytes']:.0f}",
                str(row["count"]),
                row["type"],
                f"{row['time_us']:.2f}",
                _likely_us(row["time_us_range"], row["time_us"]),
                f"{row['algbw_GBps']:.2f}",
                f"{row['busbw_GBps']:.2f}" + ("*" if row["busbw_equivalent"] else ""),
                ("> " if row["switch"] else "  ") + choice,
            )
        )
        previous = row
    # a bar of busbw in the room the numbers leave (none below 90 columns, nor where the
    # numbers need it: a bar once cut the last digit of every number at 1 PiB)
    wanted = 24 if console.width >= 102 else 12 if console.width >= 90 else 0
    numbers = _sweep_columns(title, cells, bar=None)
    # the element count (size / the type's bytes) goes first: 85 columns of figures on an
    # 80-column page had wrapped every row; then the type, one for the whole sweep, and the
    # algbw (size / time): 70 columns had been printed on a 60-column page
    dtypes = ", ".join(dict.fromkeys(row["type"] for row in rows))
    drops = (
        Drop(("count",), phrase="the count column (elements)"),
        Drop(("type",), phrase=f"the type column ({dtypes} throughout)"),
        Drop(("algbw\n(GB/s)",), phrase="the algbw column (size / time)"),
    )
    dropped, wide_natural = drop_columns(console, numbers, drops, close_up=False, measure=_natural)
    count_left_out = bool(dropped)
    shown = {column.header for column in numbers.columns}
    keep = [i for i, name in enumerate(_SWEEP_HEADERS) if name in shown]
    cells = [tuple(row_cells[i] for i in keep) for row_cells in cells]
    natural = _natural(console, numbers)
    room = console.width - natural - 2
    bar_width = min(wanted, room) if room >= 8 else 0
    # the bar's header says what a full bar is, in GB/s as the busbw column
    full = f"{peak:.0f}" if peak >= 100 else f"{peak:.3g}"
    # (a narrow bar's scale on a line of its own had read as one more busbw figure, a review)
    # (no wider than the old 'busbw bar' / '0.126 GB/s': '(full 0.126' had made the table a
    # column wider than the page at the narrowest bar, review BH)
    bar = f"busbw bar\n(full {full} GB/s)" if bar_width >= 18 else f"busbw bar\nfull {full}\nGB/s"
    # numbers too wide for the terminal fold rather than lose digits; the measured table is
    # the one to print where it needs neither a bar nor folding
    whole = natural <= console.width
    table = (
        numbers
        if whole and not bar_width
        else _sweep_columns(
            title,
            cells,
            bar=bar if bar_width else None,
            whole=whole,
            headers=[_SWEEP_HEADERS[i] for i in keep],
        )
    )
    # at the spacing drop_columns left: one space between columns where nothing else fitted
    table.collapse_padding, table.padding = numbers.collapse_padding, numbers.padding
    if bar_width:  # without a bar the rows are in already
        for row_cells, row in zip(cells, rows, strict=True):
            table.add_row(*row_cells, _bar(row["busbw_GBps"] / peak, bar_width))
    console.print(_fold(table))
    if count_left_out:
        hint = columns_left_out(dropped, console.width, wide_natural)
        if bar_width:  # the count back leaves no room for the bar until 10 columns more
            hint = hint[:-1] + f", {wide_natural + 10} or more with the bar)"
        console.print(Text(hint))
    if wanted and not bar_width:
        # the bar needs natural + 10 columns (8 and a gap); where the count column comes back
        # first, the bar needs that much beside it (the hints had said 101 for the bar and 103
        # for the count, where 103 showed the count alone and both took 113, a review)
        alone = max(natural + 10, 90)
        both = wide_natural + 10 if count_left_out else alone
        hint = left_out("the busbw bar is", console.width, min(alone, both), many=False)
        if count_left_out and alone < wide_natural:
            hint = hint[:-1] + f", {both} or more with the count column)"
        console.print(Text(hint))
    if any(r["busbw_equivalent"] for r in rows):
        console.print(
            Text("* busbw is an equivalent figure (in-network or 2-node tree), not a wire rate")
        )
    if len({(r["algorithm"], r["protocol"]) for r in rows}) > 1:
        # all-to-all and send/recv have no tuner: NCCL's point-to-point rules pick their path
        p2p = group["collective"] in ("alltoall", "sendrecv")
        who = "NCCL's point-to-point rules change" if p2p else "NCCL's tuner changes"
        console.print(Text(f"> {who} algorithm or protocol at this size"))
    if falls:
        console.print(
            prose(
                "time falls where NCCL's tuner switches later than the physical crossover (it "
                "prices neither the channels it takes from a small collective nor, on plugin "
                "transports, LL's cost), at "
                + ", ".join(falls)
                + "; the deepest drop a steady published run shows is on EFA: 2 x p5 runs an "
                "all-reduce of 1 MiB faster than one of 64 KiB (123-126 us against 135-136 us, "
                "two published runs)"
                + (
                    f"; none is deeper than {MEASURED_DROP_MAX:.0%}, so the times just before a "
                    "deeper one are the least sure of the sweep (docs/model.md)"
                    if deepest > MEASURED_DROP_MAX
                    else ""
                ),
                "",
            )
        )


#: The sweep table's columns, nccl-tests' own but for the algorithm
_SWEEP_HEADERS = (
    "size\n(B)",
    "count",
    "type",
    "time\n(us)",
    "likely\n(us)",
    "algbw\n(GB/s)",
    "busbw\n(GB/s)",
    "algorithm",
)


def _natural(console: Console, table: Table) -> int:
    """The width of ``table`` with no cell wrapped."""
    return Measurement.get(console, console.options.update_width(10_000), table).maximum


def _sweep_columns(
    title: str,
    cells: list[tuple[str, ...]],
    *,
    bar: str | None,
    whole: bool = True,
    headers: Sequence[str] = _SWEEP_HEADERS,
) -> Table:
    """The sweep table's columns (those of ``headers``, then a bar column headed ``bar``;
    numbers kept ``whole`` on one line); without a bar, the rows ``cells`` too, so that its
    width can be measured."""
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", collapse_padding=True)
    for name in headers:
        # numbers and the algorithm stay on one line
        table.add_column(name, justify="left" if name in ("type", "algorithm") else "right")
        table.columns[-1].no_wrap = whole
    if bar is None:
        for row_cells in cells:
            table.add_row(*row_cells)
    else:
        table.add_column(bar, justify="left", no_wrap=True, overflow="crop")
    return table


def _likely_us(band: list[float] | None, time_us: float) -> str:
    """A time's likely range under a ``(us)`` header, three figures each end (``21.7-37.5``,
    ``1783-4323``); ``-`` where there is none. An end that rounds past the time as its column
    prints it (two decimals) is rounded toward it instead: a range starting at the time,
    5350.51 us, had read ``5351-16214`` beside ``5350.51``, as if it left the time out."""
    if band is None:
        return "-"
    shown = float(f"{time_us:.2f}")

    def figure(value: float, *, low: bool) -> str:
        decimals = 0 if value >= 100 else 1 if value >= 10 else 2
        text = f"{value:.{decimals}f}"
        if float(text) > shown if low else float(text) < shown:
            scale = 10**decimals
            toward = math.floor if low else math.ceil
            # (rounded first: 45.2 x 10 is 452.00000000000006, which ceil takes to 453)
            text = f"{toward(round(value * scale, 6)) / scale:.{decimals}f}"
        return text

    return f"{figure(band[0], low=True)}-{figure(band[1], low=False)}"


def _bar(fraction: float, width: int) -> str:
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_BAR[rest - 1] if rest else "")


def _gbps(value_GBps: float) -> str:
    """A bandwidth under a ``(GB/s)`` header: three significant digits (``450``, ``94.0``),
    a half rounded up as a reader rounds it (Gaudi 2's 21 x 12.5 = 262.5 GB/s had read
    ``262`` where ``links show`` says 262.5, 0.5625 ``0.562`` but 0.1125 ``0.113``: review BL;
    binary floats round a tie to even)."""
    if not math.isfinite(value_GBps) or not 1e-4 <= value_GBps < 1e15:
        return f"{value_GBps:.3g}"  # (no catalogue rate is near either end)
    if value_GBps < 0.9995:  # (0.9996 rounds to 1.00, as in the rows from 1 up: review BQ)
        return format_number(value_GBps)  # without trailing zeros, as %.3g writes it (0.5)
    return significant(value_GBps)


def _nic_count(data: dict[str, Any]) -> str:
    per_gpu = float(data["nics_per_gpu"])
    if per_gpu == 1:
        return "x1"
    if per_gpu > 1:
        return f"x{per_gpu:g}"
    return f"x1/{data['gpus_per_node'] // data['nics_per_node']}"


#: What a page too narrow for ``gap``'s table leaves out, first to last: the line rates and
#: their ratio (the achievable rates and times stay whole), then the figures the others give:
#: the achievable ratio (the two rates' quotient) and the time inside (across / slow-down)
_GAP_DROPS = (
    Drop(
        ("line\n(GB/s)", "ratio\nline"),
        phrase="the line-rate columns and the line ratio (the gap ibcalc check gates)",
    ),
    Drop(("ratio\nachv.",), phrase="the achv. ratio column"),
    Drop(("1 GB\ninside",), phrase="the 1 GB inside column"),
)


def render_gap(
    report: GapReport,
    fmt: str = Format.TABLE,
    *,
    names: Mapping[str, str] = _PLAIN,
    stream: TextIO | None = None,
) -> None:
    """Print a gap report: the common pairings table, or one pairing (and its TP what-if).

    JSON: a list of pairings for the table; one pairing's object otherwise, with the what-if
    under ``tp`` when there is one.
    """
    pairings = [_named(r.model_dump(mode="json"), names) for r in report.pairings]
    if report.common:
        if fmt == Format.JSON:
            render_json(pairings, stream)
        else:
            _gap_table(pairings, stream)
        return
    data = pairings[0]
    tp = _named(report.tp.model_dump(mode="json"), names) if report.tp is not None else None
    if fmt == Format.JSON:
        render_json(data if tp is None else {**data, "tp": tp}, stream)
    else:
        _gap_pairing(data, tp, stream)


def _gap_table(rows: Sequence[dict[str, Any]], stream: TextIO | None) -> None:
    """The common pairings, one row each (rows are GapResult JSON objects).

    Fits 100 columns: bandwidths are bare numbers under a ``GB/s`` header, the algorithm of
    each all-reduce sits under its time, a NIC cap under the NIC count.
    """
    from ibcalc.cluster.resolve import CATALOGUE_OVERRIDES_NOTE  # (not needed for estimates)
    from ibcalc.engine.types import COST_PARAMETERS_NOTE

    console = _console(stream)
    # the dtype of the all-reduce the time columns' headers name by its size alone ('1 GB
    # inside'): every pairing's is the same
    dtypes = " or ".join(sorted({r["allreduce_dtype"] for r in rows}))
    table = Table(
        # wrapped as unit_wrap breaks lines: at 60 columns rich had put '(1' over 'GB'
        title=UnitTitle(
            "scale-up vs scale-out bandwidth per GPU, per direction "
            f"(1 GB all-reduce in {dtypes}: 1 node x 8 GPUs inside vs 8 nodes x 1 GPU across)"
        ),
        box=box.SIMPLE_HEAD,
        title_justify="left",
        collapse_padding=True,
        pad_edge=False,
    )
    for name, justify in (
        ("scale-up", "left"),
        ("line\n(GB/s)", "right"),
        ("achv.\n(GB/s)", "right"),
        ("scale-out\nper GPU", "left"),
        ("line\n(GB/s)", "right"),
        ("achv.\n(GB/s)", "right"),
        ("ratio\nline", "right"),
        ("ratio\nachv.", "right"),
        ("1 GB\ninside", "right"),
        ("1 GB\nacross", "right"),
        ("slow-\ndown", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    previous = None
    grouped = len(rows) > len({row["intra"] for row in rows})
    for row in rows:
        if grouped and previous is not None and row["intra"] != previous:
            table.add_section()
        previous = row["intra"]
        inside, across = row["allreduce_inside"], row["allreduce_across"]
        cells = (
            row["intra"],
            _gbps(row["intra_GBps"]),
            _gbps(row["intra_achievable_GBps"])
            + ("*" if row["intra_duplex_efficiency"] < 1 else ""),
            f"{row['inter']} {_nic_count(row)}"
            + (f"\n({row['capped_by']} cap)" if row["capped_by"] else ""),
            _gbps(row["inter_per_gpu_GBps"]),
            _gbps(row["inter_per_gpu_achievable_GBps"]),
            format_ratio(row["ratio_line"]),
            format_ratio(row["ratio_achievable"]),
            f"{format_time(inside['time_s'])}\n{inside['algorithm']}",
            f"{format_time(across['time_s'])}\n{across['algorithm']}",
            format_ratio(row["slowdown"]),
        )
        table.add_row(*cells)
    # too wide: the line-rate columns give way (the achievable rates and times stay whole),
    # then the figures the others give (ratio = achievable / achievable; inside = across /
    # slow-down)
    dropped, full = drop_columns(console, table, _GAP_DROPS)
    console.print(_fold(table))
    for line in (
        "conventions: per direction, per GPU; GB/s = 10^9 B/s; vendor 'bidirectional' figures "
        "are 2x (H100 NVLink 4: 900 GB/s bidirectional = 450 GB/s per direction); network Gb/s "
        "/ 8 = GB/s",
        "achv. = achievable = line rate x catalogue efficiency; xN = NICs per GPU (efa-v2 x4 "
        "as on AWS p5; wan-10g one link per 8-GPU node); NICs capped only by a PCIe scale-up "
        "link, the GPUs' own (pcie4 cap), not by a host PCIe link elsewhere (--system, "
        "--host-pcie)",
        "inside = 1 node x 8 GPUs on the scale-up link; across = 8 nodes x 1 GPU, each with "
        "ceil(NICs per GPU) NICs (over a WAN each node is its own site, at most as fast as "
        "NCCL's buffers in flight per round trip allow); algorithm as NCCL would choose (shown "
        "under the time); where NICs per GPU are under 1 (wan-10g x1/8) the ratio takes that "
        "share and the slow-down a whole link per node, so the two differ by up to 8x",
        # one way, as links marks it: the inside all-reduce gets less (review BL: MI300X's 358
        # GB/s had stood beside its 5.64 ms, which 314 gives)
        *(
            [
                "* achv. one way; where every GPU sends and receives at once (a one-node ring): "
                + ", ".join(
                    f"{intra} {_gbps(achv * duplex)}"
                    for intra, (achv, duplex) in {
                        row["intra"]: (row["intra_achievable_GBps"], row["intra_duplex_efficiency"])
                        for row in rows
                        if row["intra_duplex_efficiency"] < 1
                    }.items()
                )
                + " GB/s"
            ]
            if any(row["intra_duplex_efficiency"] < 1 for row in rows)
            else []
        ),
        # the catalogue's and cost parameters' override files, which every row names
        # (ibcalc.gap._overrides)
        *{
            note: None
            for note in (rows[0]["assumptions"] if rows else ())
            if note.startswith((CATALOGUE_OVERRIDES_NOTE, COST_PARAMETERS_NOTE))
        },
        *([columns_left_out(dropped, console.width, full, json="them")] if dropped else []),
    ):
        label, text = line.split(": ", 1) if line.startswith("conventions: ") else ("", line)
        console.print(prose(text, f"{label}:" if label else ""))


def _gap_pairing(data: dict[str, Any], tp: dict[str, Any] | None, stream: TextIO | None) -> None:
    """One pairing (a GapResult's JSON) and an optional TP what-if (a TpWhatIf's JSON)."""
    console = _console(stream)
    wan = bool(data.get("inter_wan"))
    out_role, unit = ("WAN", "site") if wan else ("scale-out", "node")
    shape = f"{data['gpus_per_node']} GPUs and {data['nics_per_node']} x {data['inter']} per {unit}"
    if data["system"]:
        shape += f" ({data['system']})"
    table = Table(
        title=f"gap: {data['intra']} (scale-up) vs {data['inter']} ({out_role}), {shape}",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    table.add_column("per GPU, per direction")
    table.add_column("line rate", justify="right")
    table.add_column("achievable", justify="right")
    table.add_column("note")
    table.add_row(
        f"scale-up ({data['intra']})",
        format_bandwidth(data["intra_GBps"] * GB),
        format_bandwidth(data["intra_achievable_GBps"] * GB),
        _intra_note(data),
    )
    nic_gbit = data["nic_GBps"] * 8
    cap = f", capped by {data['capped_by']}" if data["capped_by"] else ""
    table.add_row(
        f"{out_role} ({data['inter']})",
        format_bandwidth(data["inter_per_gpu_GBps"] * GB),
        format_bandwidth(data["inter_per_gpu_achievable_GBps"] * GB),
        f"{data['nics_per_gpu']:g} x {nic_gbit:g} Gb/s per GPU{cap}; {unit} "
        f"{format_bandwidth(data['inter_per_node_GBps'] * GB)} line, "
        f"{format_bandwidth(data['inter_per_node_achievable_GBps'] * GB)} achievable",
    )
    table.add_row(
        f"ratio (scale-up / {out_role})",
        format_ratio(data["ratio_line"]),
        format_ratio(data["ratio_achievable"]),
        "",
    )
    console.print(_fold(table))

    rows = [
        (
            f"inside (scale-up): {_placement_shape(data['allreduce_inside'])}",
            data["allreduce_inside"],
        ),
        (
            f"across ({out_role}): {_placement_shape(data['allreduce_across'], unit)}",
            data["allreduce_across"],
        ),
    ]
    if tp is not None:
        rows.append((f"TP={tp['tp']} inside: {_placement_shape(tp['inside'])}", tp["inside"]))
        rows.append((f"TP={tp['tp']} across: {_placement_shape(tp['across'], unit)}", tp["across"]))
    title = (
        f"consequence: all-reduce of {format_size(data['allreduce_size_bytes'], typed=True)} "
        f"in {data['allreduce_dtype']}"
    )
    if tp is not None and (tp["size_bytes"], tp["dtype"]) != (
        data["allreduce_size_bytes"],
        data["allreduce_dtype"],
    ):
        # the TP rows are --tp-size's all-reduce (64 MB in bf16 unless given), not the title's
        # (1 GB in fp32); the dtype had gone unsaid, so --tp-size 1GB read as the same all-reduce
        size = format_size(tp["size_bytes"], typed=True)
        title += f" (TP={tp['tp']} rows: {size} in {tp['dtype']})"
    cells = [
        (
            label,
            format_time(p["time_s"]),
            format_bandwidth(p["busbw_GBps"] * GB) + ("*" if p["busbw_equivalent"] else ""),
            f"{p['algorithm']}/{p['protocol']}",
            p["bottleneck"],
        )
        for label, p in rows
    ]
    if console.width < _GAP_TABLE_MIN_WIDTH:
        # too narrow for five columns (below 70 the words broke inside: 'plac/emen/t', and
        # below 50 two columns vanished): each placement as a short block of wrapped lines
        console.print(title)
        for label, time, busbw, algorithm, bottleneck in cells:
            console.print(Padding(Text(label), (0, 0, 0, 2)))
            console.print(Padding(Text(f"{time}, busbw {busbw}, {algorithm}"), (0, 0, 0, 4)))
            console.print(Padding(Text(f"bottleneck: {bottleneck}"), (0, 0, 0, 4)))
    else:
        runs = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
        # the figures and the algorithm keep their width; the two texts wrap (a narrow terminal
        # cut 'nvls/Simple' and 'scale-up' with an ellipsis)
        for name, justify, whole in (
            ("placement", "left", False),
            ("time", "right", True),
            ("busbw", "right", True),
            ("algorithm", "left", True),
            ("bottleneck", "left", False),
        ):
            runs.add_column(name, justify=justify, no_wrap=whole, overflow="fold")  # type: ignore[arg-type]
        for row in cells:
            runs.add_row(*row)
        console.print(runs)
    across_nics = data["allreduce_across"]["nics_per_node"]
    share = data["nics_per_node"] / data["gpus_per_node"]
    more = (
        f"; each one-GPU {unit} keeps {across_nics} "
        f"{'WAN link' if wan else 'NIC'}{'s' if across_nics != 1 else ''}, "
        f"{format_ratio(across_nics / share)} the per-GPU share in the ratio above"
        if across_nics > share
        else ""
    )
    console.print(
        Text(
            f"slowdown across {unit}s: {format_ratio(data['slowdown'])} "
            f"({allreduce_words(data['allreduce_size_bytes'], data['allreduce_dtype'])}{more})",
            style="bold",
        )
    )
    if tp is not None:
        console.print(
            Text(
                f"TP={tp['tp']} all-reduce of {format_size(tp['size_bytes'], typed=True)} "
                f"in {tp['dtype']}: "
                f"{format_time(tp['inside_s'])} on the scale-up link vs "
                f"{format_time(tp['across_s'])} across {tp['tp']} {unit}s, "
                f"{format_ratio(tp['slowdown'])} slower",
                style="bold",
            )
        )
    if any(p["busbw_equivalent"] for _, p in rows):
        console.print(
            Text("* busbw is an equivalent figure (in-network reduction), not a wire rate")
        )
    notes = list(data["assumptions"]) + (list(tp["assumptions"]) if tp is not None else [])
    if notes:
        console.print(Text("assumptions:", style="bold"))
        console.print(bullets(notes, console.width))
    console.print(prose(data["conventions"], "conventions:"))


def _placement_shape(p: dict[str, Any], unit: str = "node") -> str:
    """``8 nodes x 1 GPU, 1 x ndr each``; ``unit`` is ``site`` across a WAN."""
    nodes, gpus = p["nodes"], p["gpus_per_node"]
    where = f"{nodes} {unit}{'s' if nodes != 1 else ''} x {gpus} GPU{'s' if gpus != 1 else ''}"
    if nodes > 1 and gpus > 1:  # one scale-up domain larger than a node (NVL72)
        return f"{where} in one {p['link']} domain"
    if nodes > 1:
        return f"{where}, {p['nics_per_node']} x {p['link']} each"
    return f"{where} on {p['link']}"
