"""Words shared by the text and plot renderers (no rich here: plot.py uses them too)."""

from __future__ import annotations

from ibcalc.units import format_size

#: What :func:`links_words` reads of an estimate (or a sweep group's JSON).
LINK_KEYS = ("gpus_per_node", "intra", "nodes", "domains", "inter", "sites", "wan")


def links_words(
    *,
    gpus_per_node: int,
    intra: str | None,
    nodes: int,
    domains: int,
    inter: str | None,
    sites: int,
    wan: str | None,
) -> str:
    """``nvlink4 inside, ndr between, wan-100g between 2 sites``: only the links the ranks
    use (no scale-out link in one scale-up domain, none between sites of one domain each; "one
    GPU" on one GPU)."""
    parts = []
    if (gpus_per_node > 1 or nodes > domains) and intra:  # one-GPU nodes in a bigger domain
        parts.append(f"{intra} inside")
    if domains > sites and inter:
        across = " nodes" if domains == nodes else " domains"
        parts.append(f"{inter} between" + (across if sites > 1 else ""))
    if sites > 1 and wan:
        parts.append(f"{wan} between {sites} sites")
    return ", ".join(parts) or "one GPU"


def allreduce_words(size_bytes: float, dtype: str) -> str:
    """``1 GB all-reduce in fp32``: gap's all-reduce, as its text report and its plot name it
    (the plot's title had left the element type out)."""
    return f"{format_size(size_bytes)} all-reduce in {dtype}"
