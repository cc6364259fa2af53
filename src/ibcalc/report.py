"""Rendering: rich tables for people, JSON and CSV for machines. The only module importing rich.

Every printed number carries its unit; GB/s is 10^9 bytes per second (the nccl-tests unit).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ibcalc.models import Catalogue, Cost, Estimate, Link, System, busbw_factor
from ibcalc.units import GB, format_bandwidth, format_size, format_time

__all__ = [
    "estimate_dict",
    "link_dict",
    "render_estimate",
    "render_json",
    "render_link",
    "render_links",
    "render_sweep",
    "render_system",
    "render_systems",
    "sweep_rows",
    "system_dict",
]

_BAR = "▏▎▍▌▋▊▉█"


def _console(stream: TextIO | None = None) -> Console:
    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        # Pipes and files get a wide page instead of rich's 80-column default, so tables
        # stay one row per entry; a terminal keeps its own width.
        console = Console(file=stream, highlight=False, width=160)
    return console


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
    where = f"{est.nodes} node{'s' if est.nodes != 1 else ''} x {est.gpus_per_node} GPUs"
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
    console.print(table)
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
        console.print(alt)
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
    """Print the catalogue's links as a table."""
    table = Table(
        box=box.SIMPLE_HEAD, title="links (bandwidth per direction)", title_justify="left"
    )
    for name, justify in (
        ("id", "left"),
        ("kind", "left"),
        ("scope", "left"),
        ("line rate", "right"),
        ("", "right"),
        ("eff", "right"),
        ("achievable", "right"),
        ("conf", "left"),
        ("name", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for link in links:
        table.add_row(
            link.id,
            link.kind.value,
            link.scope,
            format_bandwidth(link.per_direction_Bps),
            f"{link.per_direction_Bps * 8 / GB:g} Gb/s",
            f"{link.efficiency:.2f}",
            format_bandwidth(link.achievable_Bps),
            link.confidence.value,
            link.name,
        )
    _console(stream).print(table)


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
    console.print(table)
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
        table.add_column(name, no_wrap=True)
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
            system.gpu,
        )
    _console(stream).print(table)


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
    console.print(table)
    console.print(Text("sources:", style="bold"))
    for source in system.sources:
        console.print(Text(f"  - {source}"), overflow="fold")


def sweep_rows(estimates: Sequence[Estimate]) -> list[dict[str, Any]]:
    """One dict per size, nccl-tests columns plus the chosen algorithm."""
    rows = []
    for est in estimates:
        rows.append(
            {
                "size_bytes": est.size_bytes,
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
    if fmt == "json":
        render_json(rows, stream)
        return
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["size_bytes"])
        writer.writeheader()
        writer.writerows(rows)
        (stream if stream is not None else _stdout()).write(buffer.getvalue())
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
    console.print(table)
    if any(r["busbw_equivalent"] for r in rows):
        console.print(
            Text("* busbw is an equivalent figure (in-network or 2-node tree), not a wire rate")
        )


def _bar(fraction: float, width: int) -> str:
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_BAR[rest - 1] if rest else "")
