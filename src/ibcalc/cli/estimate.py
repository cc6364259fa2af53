"""The collective commands (``allreduce`` ... ``sendrecv``, one per Collective) and ``sweep``.

Each parses its options into library objects, calls one library function
(:func:`ibcalc.facade.estimate`, :func:`ibcalc.sweep.sweep_fabrics`) and hands the result to a
renderer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ibcalc.catalogue.models import Catalogue
from ibcalc.cli.app import collective_help
from ibcalc.cli.boundary import FIELD_FLAGS, CliUsageError, as_typed, guard, say_wrapped
from ibcalc.cli.options import (
    ALGO_AUTO,
    ESTIMATE_FIELDS,
    FORMAT_TABLE,
    PROTO_AUTO,
    SWEEP_TABLE,
    AlgoOpt,
    CatalogueOpt,
    CostParamsOpt,
    DtypeOpt,
    ExplainOpt,
    FactorOpt,
    FormatOpt,
    MaxBytesOpt,
    MinBytesOpt,
    NcclAlgoOpt,
    NcclProtoOpt,
    NcclVersionOpt,
    ProtoOpt,
    SizeOpt,
    StepBytesOpt,
    SweepFormatOpt,
    algorithm_of,
    catalogue_of,
    cluster_options,
    fabrics_of,
    file_name,
    output_name,
    params_of,
    plot_target,
    protocol_of,
    selection_of,
    typed,
)
from ibcalc.cli.output import run_inputs
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective, DType
from ibcalc.errors import FieldError, IbcalcError
from ibcalc.facade import estimate, parse_collective, parse_dtype
from ibcalc.render.console import Format, render_estimate, render_sweep, sweep_notes
from ibcalc.textsafe import printable
from ibcalc.units import format_size, parse_size

if TYPE_CHECKING:
    from ibcalc.sweep import SweepResult

__all__ = ["register"]


def _prices_ll128(catalogue: Catalogue, clusters: list[ClusterSpec]) -> bool:
    """Whether the model prices LL128 on every one of ``clusters`` (NCCL's default allows it
    there); a cluster that does not resolve is left to the estimate's own refusal."""
    from ibcalc.cluster.resolve import resolve_cluster

    try:
        return all(resolve_cluster(catalogue, c).topology.ll128_allowed for c in clusters)
    except IbcalcError:
        return True


def _collective_command(collective: Collective) -> Callable[..., None]:
    """The command estimating ``collective``: options -> ClusterSpec -> estimate -> renderer."""

    @guard
    @cluster_options(*ESTIMATE_FIELDS)
    def command(
        size: SizeOpt,
        *,
        cluster: ClusterSpec,
        algo: AlgoOpt = ALGO_AUTO,
        proto: ProtoOpt = PROTO_AUTO,
        nccl_algo: NcclAlgoOpt = None,
        nccl_proto: NcclProtoOpt = None,
        dtype: DtypeOpt = DType.FP32.value,
        catalogue: CatalogueOpt = None,
        cost_params: CostParamsOpt = None,
        nccl_version: NcclVersionOpt = None,
        explain: ExplainOpt = False,
        fmt: FormatOpt = FORMAT_TABLE,
    ) -> None:
        cat = catalogue_of(catalogue)
        params = selection_of(
            nccl_algo,
            nccl_proto,
            collective,
            params_of(cost_params, nccl_version),
            ll128_priced=lambda: _prices_ll128(cat, [cluster]),
        )
        result = estimate(
            cat,
            cluster,
            collective,
            parse_size(size, what=FIELD_FLAGS["size_bytes"]),
            dtype=parse_dtype(dtype),
            algorithm=algorithm_of(algo),
            protocol=protocol_of(proto),
            params=params,
        )
        render_estimate(result, fmt, names=as_typed(FIELD_FLAGS), explain=explain)

    command.__doc__ = collective_help(collective)
    return command


FabricsOpt = Annotated[
    str | None,
    typer.Option(
        FIELD_FLAGS["inter"],
        "--fabric",
        help="Scale-out link id, or a comma list to sweep several (e.g. ndr,hdr,roce-400g) in "
        "one node: the first fabric's (its preset's GPUs and PCIe unless --system says).",
    ),
]
PlotOpt = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Also draw busbw vs size to FILE.png or FILE.svg.",
        metavar="FILE",
        parser=output_name,
    ),
]
PlotTimeOpt = Annotated[
    bool, typer.Option("--plot-time", help="Add a time panel to the --plot picture.")
]
MeasuredOpt = Annotated[
    Path | None,
    typer.Option(
        "--measured",
        help="CSV of measured points (size_bytes,busbw_GBps) to overlay on --plot.",
        metavar="FILE",
        parser=file_name,
    ),
]
CollectiveArg = Annotated[
    str,
    typer.Argument(
        help=f"{', '.join(c.command for c in Collective)} (or {Collective.ALL_REDUCE.value} ...)"
    ),
]


@guard
@cluster_options(*ESTIMATE_FIELDS, own={"inter"})
def sweep_command(
    ctx: typer.Context,
    collective: CollectiveArg,
    *,
    begin: MinBytesOpt = "8",
    end: MaxBytesOpt = "8G",
    factor: FactorOpt = 2,
    step: StepBytesOpt = None,
    cluster: ClusterSpec,
    inter: FabricsOpt = None,
    algo: AlgoOpt = ALGO_AUTO,
    proto: ProtoOpt = PROTO_AUTO,
    nccl_algo: NcclAlgoOpt = None,
    nccl_proto: NcclProtoOpt = None,
    dtype: DtypeOpt = DType.FP32.value,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    nccl_version: NcclVersionOpt = None,
    fmt: SweepFormatOpt = SWEEP_TABLE,
    plot: PlotOpt = None,
    plot_time: PlotTimeOpt = False,
    measured: MeasuredOpt = None,
) -> None:
    """Sweep sizes like nccl-tests (-b/-e/-f) and print a table shaped like its output.

    -f 1 adds -i (--stepbytes, 1M by default) each step, as nccl-tests' linear series.
    """
    from ibcalc.sweep import algorithm_lines, sweep_fabrics, sweep_sizes

    if plot is None and (plot_time or measured is not None):
        # the options given, named: --measured alone had been told "--plot-time and --measured"
        given = " and ".join(
            flag for flag, on in (("--plot-time", plot_time), ("--measured", measured)) if on
        )
        need = "needs" if " and " not in given else "need"
        raise CliUsageError(f"{given} {need} --plot FILE.png|FILE.svg")
    target = plot_target(plot, run_inputs(catalogue, cost_params, measured))
    fabrics = fabrics_of(inter)
    coll = parse_collective(collective)
    step_bytes = (
        None
        if step is None
        # -f 2 or more ignores -i, as nccl-tests does, so 0 is let through there (-f 2 -i 0 had
        # been refused, a review), but not text that is no size (-i hello, nan: review CU)
        else parse_size(step, what=FIELD_FLAGS["step_bytes"], allow_zero=factor != 1)
    )
    low = parse_size(begin, what=FIELD_FLAGS["min_bytes"])
    high = parse_size(end, what=FIELD_FLAGS["max_bytes"])
    _ends_in_order(ctx, low, high)
    sizes = sweep_sizes(low, high, factor, step_bytes if factor == 1 else None)
    if step_bytes is not None and factor != 1:
        say_wrapped(
            f"note: --stepbytes ignored: -f {factor} multiplies each size, as nccl-tests does"
        )
    cat = catalogue_of(catalogue)
    params = selection_of(
        nccl_algo,
        nccl_proto,
        coll,
        params_of(cost_params, nccl_version),
        ll128_priced=lambda: _prices_ll128(
            cat, [cluster] if not fabrics else [cluster.replace(inter=f) for f in fabrics]
        ),
    )
    result = sweep_fabrics(
        cat,
        cluster,
        coll,
        sizes,
        fabrics=fabrics,
        dtype=parse_dtype(dtype),
        algorithm=algorithm_of(algo),
        protocol=protocol_of(proto),
        params=params,
    )
    if target is None:
        render_sweep(result, fmt, names=as_typed(FIELD_FLAGS))
        _csv_notes(result, fmt)
        return
    from ibcalc.render.plot import load_measured_for, plot_sweep_result

    # measured points are read before any output, so a bad file leaves stdout empty
    points, total = (
        load_measured_for(measured, result, picture=plot) if measured is not None else ([], 0)
    )
    if measured is not None:
        said = printable(measured)
        say_wrapped(f"measured: {len(points)} of {total} rows of {said} plotted", said)
    # the picture first: a write that fails after all leaves stdout empty
    path = plot_sweep_result(
        target,
        result,
        per_algorithm=algorithm_lines(result, params),
        measured=points,
        time_panel=plot_time,
    )
    render_sweep(result, fmt, names=as_typed(FIELD_FLAGS))
    _csv_notes(result, fmt)
    said = printable(path)
    say_wrapped(f"plot written to {said}", said)


def _ends_in_order(ctx: typer.Context, low: float, high: float) -> None:
    """Refuse -e below -b saying which of the two the user left at its default: ``-b 16G``
    alone had read "--maxbytes 8 GiB is smaller than --minbytes 16 GiB", a -e never typed.
    Two typed ends are left to :func:`~ibcalc.sweep.sweep_sizes`' own refusal."""
    if high >= low:
        return
    # field: (the command's parameter, its short flag, the size)
    ends = {
        "max_bytes": ("end", "-e", format_size(high)),
        "min_bytes": ("begin", "-b", format_size(low)),
    }
    untyped = [field for field, (name, _, _) in ends.items() if not typed(ctx, name)]
    if not untyped:
        return
    said = {
        field: f"{{{field}}} {size}" + (" (its default)" if field in untyped else "")
        for field, (_, _, size) in ends.items()
    }
    _, flag, _ = ends[untyped[0]]
    raise FieldError(
        f"{said['max_bytes']} is smaller than {said['min_bytes']}: give {flag}",
        field=untyped[0],
        others={field: size for field, (_, _, size) in ends.items()},
    )


def _csv_notes(result: SweepResult, fmt: str) -> None:
    """Beside CSV, which has no room for them, the table's notes go to stderr (JSON keeps
    them as keys)."""
    if fmt != Format.CSV:
        return
    skipped, assumed, notes = sweep_notes(result, as_typed(FIELD_FLAGS))
    for line in ([skipped] if skipped is not None else []) + [f"assumption: {a}" for a in assumed]:
        say_wrapped(line)
    for note in notes:
        say_wrapped(f"note: {note}")


def register(app: typer.Typer) -> None:
    """Add the collective commands and ``sweep`` to ``app``."""
    for collective in Collective:
        app.command(collective.command, help=collective_help(collective))(
            _collective_command(collective)
        )
    app.command("sweep")(sweep_command)
