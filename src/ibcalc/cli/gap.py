"""The ``gap`` command: scale-up vs scale-out bandwidth per GPU, and what the gap costs.

Its options describe one node (a ClusterSpec: links, system, GPUs and NICs per node, host PCIe);
:func:`ibcalc.gap.gap_report` decides between the common-pairings table and one pairing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ibcalc.cli.boundary import FIELD_FLAGS, as_typed, guard, say_wrapped
from ibcalc.cli.options import (
    FORMAT_TABLE,
    CatalogueOpt,
    CostParamsOpt,
    FormatOpt,
    TpOpt,
    TpSizeOpt,
    catalogue_of,
    cluster_options,
    output_name,
    params_of,
    plot_target,
)
from ibcalc.cli.output import run_inputs
from ibcalc.cluster.spec import MIN_PAIRING_GPUS_PER_NODE, ClusterSpec
from ibcalc.render.console import render_gap
from ibcalc.textsafe import printable
from ibcalc.units import parse_size

__all__ = ["register"]

PlotOpt = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Also draw the gap as bars to FILE.png or FILE.svg.",
        metavar="FILE",
        parser=output_name,
    ),
]


#: The cluster options of ``gap``: one node's links and counts, in ``--help`` order.
GAP_FIELDS = (
    "intra",
    "inter",
    "system",
    "gpus_per_node",
    "nics_per_node",
    "host_pcie",
    "scale_up_domain",
)


@guard
@cluster_options(*GAP_FIELDS, min_gpus_per_node=MIN_PAIRING_GPUS_PER_NODE)
def gap_command(
    *,
    cluster: ClusterSpec,
    tp: TpOpt = None,
    tp_size: TpSizeOpt = None,
    plot: PlotOpt = None,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """Scale-up vs scale-out bandwidth per GPU (per direction), ratios, and what they cost.

    Without --intra/--inter/--system: a table of common pairings. With --intra and --inter, or
    --system: one pairing in detail; --tp adds a tensor-parallel what-if.
    """
    from ibcalc.gap import gap_report

    target = plot_target(plot, run_inputs(catalogue, cost_params))
    report = gap_report(
        catalogue_of(catalogue),
        cluster,
        params=params_of(cost_params),
        tp=tp,
        tp_size_bytes=parse_size(tp_size, what=FIELD_FLAGS["tp_size_bytes"])
        if tp_size is not None
        else None,
    )
    written = None
    if target is not None:
        from ibcalc.render.plot import plot_gap

        # the picture first: a write that fails after all leaves stdout empty
        written = plot_gap(target, report.pairings)
    render_gap(report, fmt, names=as_typed(FIELD_FLAGS))
    if written is not None:
        said = printable(written)
        say_wrapped(f"plot written to {said}", said)


def register(app: typer.Typer) -> None:
    """Add ``gap`` to ``app``."""
    app.command("gap")(gap_command)
