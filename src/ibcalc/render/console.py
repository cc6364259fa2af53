"""Rendering: rich tables for people, JSON and CSV for machines. The only module importing rich.

Every printed number carries its unit; GB/s is 10^9 bytes per second (the nccl-tests unit).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ibcalc.catalogue.models import Catalogue, Link, System
from ibcalc.engine.types import Cost, Estimate, busbw_factor
from ibcalc.units import GB, format_bandwidth, format_size, format_time

__all__ = [
    "estimate_dict",
    "link_dict",
    "render_estimate",
    "render_gap",
    "render_gap_table",
    "render_json",
    "render_link",
    "render_links",
    "render_sweep",
    "render_sweep_groups",
    "render_system",
    "render_systems",
    "sweep_rows",
    "system_dict",
]

_BAR = "▏▎▍▌▋▊▉█"


def _console(stream: TextIO | None = None) -> Console:
    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        # Pipes and files get a wide page (or $COLUMNS) instead of rich's 80-column default,
        # so tables stay one row per entry; a terminal keeps its own width.
        try:
            width = int(os.environ.get("COLUMNS", "160"))
        except ValueError:
            width = 160
        console = Console(file=stream, highlight=False, width=max(40, width))
    return console


def _fold(table: Table) -> Table:
    """Wrap cells that do not fit instead of cutting them with an ellipsis: a cut id or number
    is worse than a taller row."""
    for column in table.columns:
        column.overflow = "fold"
    return table


def render_json(data: Any, stream: TextIO | None = None) -> None:
    """Print ``data`` as indented JSON."""
    out = stream if stream is not None else _stdout()
    out.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


def _stdout() -> TextIO:
    import sys

    return sys.stdout


def _cost_dict(cost: Cost, size_bytes: float, factor: float) -> dict[str, Any]:
    algbw = size_bytes / cost.time_s if cost.time_s > 0 else 0.0
    return {
        "algorithm": cost.algorithm.value,
        "protocol": cost.protocol.value,
        "time_s": cost.time_s,
        "latency_s": cost.latency_s,
        "transfer_s": cost.transfer_s,
        "algbw_GBps": algbw / GB,
        "busbw_GBps": algbw * factor / GB,
        "busbw_equivalent": cost.equivalent_busbw,
        "bottleneck": cost.bottleneck,
    }


def estimate_dict(est: Estimate) -> dict[str, Any]:
    """The JSON object of an estimate (keys keep their meaning across versions)."""
    factor = busbw_factor(est.collective, est.ranks)
    best = _cost_dict(est.best, est.size_bytes, factor)
    return {
        "collective": est.collective.value,
        "size_bytes": est.size_bytes,
        "dtype": est.dtype,
        "nodes": est.nodes,
        "gpus_per_node": est.gpus_per_node,
        "ranks": est.ranks,
        "intra": est.intra,
        "inter": est.inter,
        "nics_per_node": est.nics_per_node,
        "requested_size_bytes": est.requested_size_bytes,
        "sharp": est.sharp,
        "oversubscription": est.oversubscription,
        "cross_leaf_fraction": est.cross_leaf_fraction,
        "sites": est.sites,
        "wan": est.wan,
        "algorithm": best["algorithm"],
        "protocol": best["protocol"],
        "time_s": best["time_s"],
        "latency_s": best["latency_s"],
        "transfer_s": best["transfer_s"],
        "algbw_GBps": best["algbw_GBps"],
        "busbw_GBps": best["busbw_GBps"],
        "busbw_equivalent": best["busbw_equivalent"],
        "busbw_factor": factor,
        "bottleneck": best["bottleneck"],
        "formula": est.best.formula,
        "assumptions": list(est.assumptions),
        "alternatives": [
            {k: v for k, v in _cost_dict(c, est.size_bytes, factor).items() if k != "bottleneck"}
            for c in est.alternatives
        ],
    }


def render_estimate(est: Estimate, stream: TextIO | None = None, alternatives: int = 5) -> None:
    """Print an estimate as a table: result, choice, runners-up, assumptions."""
    console = _console(stream)
    factor = busbw_factor(est.collective, est.ranks)
    gpus, nodes = est.gpus_per_node, est.nodes
    where = f"{nodes} node{'s' * (nodes != 1)} x {gpus} GPU{'s' * (gpus != 1)}"
    title = f"{est.collective.value} of {format_size(est.size_bytes)} ({est.dtype}) on {where}"
    table = Table(title=title, box=box.SIMPLE_HEAD, show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    busbw = est.busbw_Bps
    busbw_text = format_bandwidth(busbw)
    if est.best.equivalent_busbw:
        busbw_text += "  (equivalent, not a wire rate)"
    table.add_row("time", format_time(est.time_s))
    table.add_row("algbw", format_bandwidth(est.algbw_Bps))
    table.add_row("busbw", f"{busbw_text}  [busbw = algbw x {factor:.4g}]")
    table.add_row("algorithm", f"{est.best.algorithm.value} / {est.best.protocol.value}")
    table.add_row("bottleneck", est.best.bottleneck)
    table.add_row(
        "terms",
        f"latency {format_time(est.best.latency_s)} + transfer {format_time(est.best.transfer_s)}",
    )
    table.add_row("ranks", f"{est.ranks} ({est.intra or '-'} inside, {est.inter or '-'} between)")
    console.print(_fold(table))
    if est.alternatives and alternatives > 0:
        alt = Table(title="alternatives", box=box.SIMPLE_HEAD, title_justify="left")
        alt.add_column("algorithm")
        alt.add_column("protocol")
        alt.add_column("time", justify="right")
        alt.add_column("busbw", justify="right")
        alt.add_column("vs chosen", justify="right")
        for cost in est.alternatives[:alternatives]:
            alg_bw = est.size_bytes / cost.time_s
            alt.add_row(
                cost.algorithm.value,
                cost.protocol.value,
                format_time(cost.time_s),
                format_bandwidth(alg_bw * factor),
                f"{cost.time_s / est.time_s:.2f}x",
            )
        console.print(_fold(alt))
    if est.assumptions:
        console.print(Text("assumptions:", style="bold"))
        for note in est.assumptions:
            console.print(Text(f"  - {note}"), soft_wrap=True)


def link_dict(link: Link) -> dict[str, Any]:
    """A link as JSON: every field, bandwidths in GB/s and Gb/s, times in seconds."""
    return {
        "id": link.id,
        "aliases": list(link.aliases),
        "name": link.name,
        "kind": link.kind.value,
        "family": link.family,
        "generation": link.generation,
        "scope": link.scope,
        "per_direction_GBps": link.per_direction_Bps / GB,
        "per_direction_Gbps": link.per_direction_Bps * 8 / GB,
        "bidirectional_GBps": (link.bidirectional_Bps / GB) if link.bidirectional_Bps else None,
        "links": link.links,
        "lanes_per_link": link.lanes_per_link,
        "lane_signalling_Gbps": (
            link.lane_signalling_Bps * 8 / GB if link.lane_signalling_Bps else None
        ),
        "encoding": link.encoding,
        "encoding_efficiency": link.encoding_efficiency,
        "efficiency": link.efficiency,
        "efficiency_source": link.efficiency_source,
        "achievable_GBps": link.achievable_Bps / GB,
        "nvls_efficiency": link.nvls_efficiency,
        "duplex_efficiency": link.duplex_efficiency,
        "latency_s": link.latency_s,
        "transport_latency_s": link.transport_latency_s,
        "topology": link.topology,
        "capabilities": list(link.capabilities),
        "pcie_host": link.pcie_host,
        "sources": list(link.sources),
        "confidence": link.confidence.value,
        "notes": link.notes,
    }


def system_dict(system: System) -> dict[str, Any]:
    """A system preset as JSON."""
    return system.model_dump(mode="json")


def render_links(links: Sequence[Link], stream: TextIO | None = None) -> None:
    """Print the catalogue's links as a table (the name column only where it fits)."""
    console = _console(stream)
    wide = console.width >= 130
    table = Table(
        box=box.SIMPLE_HEAD, title="links (bandwidth per direction)", title_justify="left"
    )
    columns = [
        ("id", "left"),
        ("kind", "left"),
        ("scope", "left"),
        ("line rate", "right"),
        ("", "right"),
        ("eff", "right"),
        ("achievable", "right"),
        ("conf", "left"),
    ]
    if wide:
        columns.append(("name", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for link in links:
        cells = [
            link.id,
            link.kind.value,
            link.scope,
            format_bandwidth(link.per_direction_Bps),
            f"{link.per_direction_Bps * 8 / GB:g} Gb/s",
            f"{link.efficiency:.2f}",
            format_bandwidth(link.achievable_Bps),
            link.confidence.value,
        ]
        table.add_row(*cells, *([link.name] if wide else []))
    console.print(_fold(table))
    if not wide:
        console.print(Text("(names and sources: ibcalc links show ID)"))


def render_link(link: Link, stream: TextIO | None = None) -> None:
    """Print every field of one link, with its sources."""
    console = _console(stream)
    table = Table(
        box=box.SIMPLE_HEAD,
        show_header=False,
        title=f"{link.id}: {link.name}",
        title_justify="left",
    )
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    data = link_dict(link)
    units = {
        "per_direction_GBps": " GB/s",
        "per_direction_Gbps": " Gb/s",
        "bidirectional_GBps": " GB/s",
        "achievable_GBps": " GB/s",
        "lane_signalling_Gbps": " Gb/s",
        "latency_s": " s",
        "transport_latency_s": " s",
    }
    for key, value in data.items():
        if value is None or value == [] or key in ("sources",):
            continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, float):
            value = f"{value:g}"
        table.add_row(key, f"{value}{units.get(key, '')}")
    console.print(_fold(table))
    console.print(Text("sources:", style="bold"))
    for source in link.sources:
        console.print(Text(f"  - {source}"), overflow="fold")


def render_systems(
    systems: Sequence[System], catalogue: Catalogue, stream: TextIO | None = None
) -> None:
    """Print the system presets as a table."""
    links = {link.id: link for link in catalogue.links}
    table = Table(
        box=box.SIMPLE_HEAD, title="systems (bandwidth per direction)", title_justify="left"
    )
    for name in (
        "id",
        "GPUs/node",
        "domain",
        "scale-up",
        "per GPU",
        "NICs",
        "per NIC",
        "net per GPU",
        "conf",
    ):
        table.add_column(name)
    console = _console(stream)
    wide = console.width >= 140
    if wide:
        table.add_column("GPU")
    for system in systems:
        intra = links.get(system.intra or "")
        inter = links.get(system.inter or "")
        per_gpu_net = (
            format_bandwidth(inter.per_direction_Bps * system.nics_per_node / system.gpus_per_node)
            if inter
            else "-"
        )
        table.add_row(
            system.id,
            str(system.gpus_per_node),
            str(system.scale_up_domain),
            system.intra or "-",
            format_bandwidth(intra.per_direction_Bps) if intra else "-",
            f"{system.nics_per_node} x {system.inter}" if system.inter else "0",
            format_bandwidth(inter.per_direction_Bps) if inter else "-",
            per_gpu_net,
            system.confidence.value,
            *([system.gpu] if wide else []),
        )
    console.print(_fold(table))


def render_system(system: System, stream: TextIO | None = None) -> None:
    """Print every field of one system preset."""
    console = _console(stream)
    table = Table(
        box=box.SIMPLE_HEAD,
        show_header=False,
        title=f"{system.id}: {system.name}",
        title_justify="left",
    )
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in system_dict(system).items():
        if value is None or key == "sources":
            continue
        table.add_row(key, ", ".join(value) if isinstance(value, list) else str(value))
    console.print(_fold(table))
    console.print(Text("sources:", style="bold"))
    for source in system.sources:
        console.print(Text(f"  - {source}"), overflow="fold")


def sweep_rows(estimates: Sequence[Estimate]) -> list[dict[str, Any]]:
    """One dict per size, nccl-tests columns plus the chosen algorithm."""
    rows = []
    for est in estimates:
        rows.append(
            {
                "size_bytes": int(est.size_bytes),
                "count": est.count,
                "type": est.dtype,
                "time_us": est.time_s * 1e6,
                "algbw_GBps": est.algbw_Bps / GB,
                "busbw_GBps": est.busbw_Bps / GB,
                "algorithm": est.best.algorithm.value,
                "protocol": est.best.protocol.value,
                "busbw_equivalent": est.best.equivalent_busbw,
            }
        )
    return rows


def render_sweep(
    estimates: Sequence[Estimate], fmt: str = "table", stream: TextIO | None = None
) -> None:
    """Print a sweep in the shape of nccl-tests output (table), or as JSON or CSV."""
    rows = sweep_rows(estimates)
    if fmt in ("json", "csv"):
        # one shape whether one fabric or several was swept: a list of groups / an inter column
        inter = estimates[0].inter if estimates else None
        render_sweep_groups([(inter or "-", estimates)], fmt, stream)
        return
    first = estimates[0]
    title = (
        f"{first.collective.value} sweep on {first.nodes} x {first.gpus_per_node} GPUs "
        f"({first.intra or '-'} inside, {first.inter or '-'} between)"
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for name in (
        "size (B)",
        "count",
        "type",
        "time (us)",
        "algbw (GB/s)",
        "busbw (GB/s)",
        "algorithm",
        "busbw",
    ):
        table.add_column(
            name, justify="left" if name in ("type", "algorithm", "busbw") else "right"
        )
    peak = max((r["busbw_GBps"] for r in rows), default=1.0) or 1.0
    for row in rows:
        table.add_row(
            f"{row['size_bytes']:.0f}",
            str(row["count"]),
            row["type"],
            f"{row['time_us']:.2f}",
            f"{row['algbw_GBps']:.2f}",
            f"{row['busbw_GBps']:.2f}" + ("*" if row["busbw_equivalent"] else ""),
            f"{row['algorithm']}/{row['protocol']}",
            _bar(row["busbw_GBps"] / peak, 24),
        )
    console = _console(stream)
    console.print(_fold(table))
    if any(r["busbw_equivalent"] for r in rows):
        console.print(
            Text("* busbw is an equivalent figure (in-network or 2-node tree), not a wire rate")
        )


def _bar(fraction: float, width: int) -> str:
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_BAR[rest - 1] if rest else "")


def _ratio(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}x"
    return f"{value:.1f}x" if value >= 1 else f"{value:.2f}x"


def _nic_count(data: dict[str, Any]) -> str:
    per_gpu = float(data["nics_per_gpu"])
    if per_gpu == 1:
        return "x1"
    if per_gpu > 1:
        return f"x{per_gpu:g}"
    return f"x1/{data['gpus_per_node'] // data['nics_per_node']}"


def render_gap_table(rows: Sequence[dict[str, Any]], stream: TextIO | None = None) -> None:
    """Print the common pairings of :func:`ibcalc.gap.common_pairings` (as ``gap_dict`` rows)."""
    console = _console(stream)
    table = Table(
        title="scale-up vs scale-out bandwidth per GPU, per direction "
        "(1 GB all-reduce: 1 node x 8 GPUs inside vs 8 nodes x 1 GPU across)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for name, justify in (
        ("scale-up", "left"),
        ("line / achievable", "right"),
        ("scale-out per GPU", "left"),
        ("line / achievable ", "right"),
        ("line ratio", "right"),
        ("achievable ratio", "right"),
        ("1 GB inside", "right"),
        ("1 GB across", "right"),
        ("slowdown", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    previous = None
    grouped = len(rows) > len({row["intra"] for row in rows})
    for row in rows:
        if grouped and previous is not None and row["intra"] != previous:
            table.add_section()
        previous = row["intra"]
        inside, across = row["allreduce_inside"], row["allreduce_across"]
        table.add_row(
            row["intra"],
            f"{format_bandwidth(row['intra_GBps'] * GB)} / "
            f"{format_bandwidth(row['intra_achievable_GBps'] * GB)}",
            f"{row['inter']} {_nic_count(row)}"
            + (f" ({row['capped_by']} cap)" if row["capped_by"] else ""),
            f"{format_bandwidth(row['inter_per_gpu_GBps'] * GB)} / "
            f"{format_bandwidth(row['inter_per_gpu_achievable_GBps'] * GB)}",
            _ratio(row["ratio_line"]),
            _ratio(row["ratio_achievable"]),
            f"{format_time(inside['time_s'])} {inside['algorithm']}",
            f"{format_time(across['time_s'])} {across['algorithm']}",
            _ratio(row["slowdown"]),
        )
    console.print(_fold(table))
    for line in (
        "conventions: per direction, per GPU; GB/s = 10^9 B/s; vendor 'bidirectional' figures "
        "are 2x (H100 NVLink 4: 900 bidirectional = 450 per direction); network Gb/s / 8 = GB/s",
        "achievable = line rate x catalogue efficiency; xN = NICs per GPU (efa-v2 x4 as on AWS "
        "p5; wan-10g one link per 8-GPU node); NICs not capped by host PCIe (--system, "
        "--host-pcie)",
        "inside = 1 node x 8 GPUs on the scale-up link; across = 8 nodes x 1 GPU, each with "
        "ceil(NICs per GPU) NICs; algorithm as NCCL would choose (shown after the time)",
    ):
        console.print(Text(line), soft_wrap=True)


def render_gap(
    data: dict[str, Any], tp: dict[str, Any] | None = None, stream: TextIO | None = None
) -> None:
    """Print one pairing of :func:`ibcalc.gap.gap` (its ``gap_dict``) and an optional TP what-if."""
    console = _console(stream)
    shape = f"{data['gpus_per_node']} GPUs and {data['nics_per_node']} x {data['inter']} per node"
    if data["system"]:
        shape += f" ({data['system']})"
    table = Table(
        title=f"gap: {data['intra']} (scale-up) vs {data['inter']} (scale-out), {shape}",
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
        f"vendor 'bidirectional': {format_bandwidth(data['intra_bidirectional_GBps'] * GB)}",
    )
    nic_gbit = data["nic_GBps"] * 8
    cap = f", capped by {data['capped_by']}" if data["capped_by"] else ""
    table.add_row(
        f"scale-out ({data['inter']})",
        format_bandwidth(data["inter_per_gpu_GBps"] * GB),
        format_bandwidth(data["inter_per_gpu_achievable_GBps"] * GB),
        f"{data['nics_per_gpu']:g} x {nic_gbit:g} Gb/s per GPU{cap}; node "
        f"{format_bandwidth(data['inter_per_node_GBps'] * GB)} line, "
        f"{format_bandwidth(data['inter_per_node_achievable_GBps'] * GB)} achievable",
    )
    table.add_row(
        "ratio (scale-up / scale-out)",
        _ratio(data["ratio_line"]),
        _ratio(data["ratio_achievable"]),
        "",
    )
    console.print(_fold(table))

    runs = Table(
        title=f"consequence: all-reduce of {format_size(data['allreduce_size_bytes'])}",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for name, justify in (
        ("placement", "left"),
        ("time", "right"),
        ("busbw", "right"),
        ("algorithm", "left"),
        ("bottleneck", "left"),
    ):
        runs.add_column(name, justify=justify)  # type: ignore[arg-type]
    placements = [("inside (scale-up)", data["allreduce_inside"])]
    placements.append(("across (scale-out)", data["allreduce_across"]))
    rows = [(f"{label}: {_placement_shape(p)}", p) for label, p in placements]
    if tp is not None:
        rows.append((f"TP={tp['tp']} inside: {_placement_shape(tp['inside'])}", tp["inside"]))
        rows.append((f"TP={tp['tp']} across: {_placement_shape(tp['across'])}", tp["across"]))
    for label, p in rows:
        runs.add_row(
            label,
            format_time(p["time_s"]),
            format_bandwidth(p["busbw_GBps"] * GB) + ("*" if p["busbw_equivalent"] else ""),
            f"{p['algorithm']}/{p['protocol']}",
            p["bottleneck"],
        )
    console.print(runs)
    console.print(
        Text(f"slowdown across nodes: {_ratio(data['slowdown'])} (1 GB all-reduce)", style="bold")
    )
    if tp is not None:
        console.print(
            Text(
                f"TP={tp['tp']} all-reduce of {format_size(tp['size_bytes'])}: "
                f"{format_time(tp['inside_s'])} on the scale-up link vs "
                f"{format_time(tp['across_s'])} across {tp['tp']} nodes, "
                f"{_ratio(tp['slowdown'])} slower",
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
        for note in notes:
            console.print(Text(f"  - {note}"), soft_wrap=True)
    console.print(Text(f"conventions: {data['conventions']}"), soft_wrap=True)


def _placement_shape(p: dict[str, Any]) -> str:
    nodes, gpus = p["nodes"], p["gpus_per_node"]
    where = f"{nodes} node{'s' if nodes != 1 else ''} x {gpus} GPU{'s' if gpus != 1 else ''}"
    if nodes > 1:
        return f"{where}, {p['nics_per_node']} x {p['link']} each"
    return f"{where} on {p['link']}"


def render_sweep_groups(
    groups: Sequence[tuple[str, Sequence[Estimate]]],
    fmt: str = "table",
    stream: TextIO | None = None,
) -> None:
    """Print sweeps over several fabrics: one table each, or JSON/CSV with an ``inter`` key."""
    out = stream if stream is not None else _stdout()
    if fmt == "json":
        render_json(
            [
                {
                    "collective": estimates[0].collective.value if estimates else None,
                    "inter": inter,
                    "intra": estimates[0].intra if estimates else None,
                    "nodes": estimates[0].nodes if estimates else None,
                    "gpus_per_node": estimates[0].gpus_per_node if estimates else None,
                    "ranks": estimates[0].ranks if estimates else None,
                    "nics_per_node": estimates[0].nics_per_node if estimates else None,
                    "dtype": estimates[0].dtype if estimates else None,
                    "rows": sweep_rows(estimates),
                }
                for inter, estimates in groups
            ],
            out,
        )
        return
    if fmt == "csv":
        rows = [{"inter": inter, **row} for inter, ests in groups for row in sweep_rows(ests)]
        buffer = io.StringIO()
        writer = csv.DictWriter(
            buffer, fieldnames=list(rows[0]) if rows else ["inter"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        out.write(buffer.getvalue())
        return
    for _inter, estimates in groups:
        render_sweep(estimates, "table", stream)
