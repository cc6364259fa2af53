"""The ``ibcalc`` command line: parse, call the library, render. The only module importing typer.

Error boundary (DESIGN.md section 5): every :class:`~ibcalc.errors.IbcalcError` and every usage
error becomes one line ``error: ...`` on stderr and exit code 2; results go to stdout.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from typer._click import exceptions as click_exceptions

from ibcalc import __version__
from ibcalc.catalogue.load import find_link, find_system, load_catalogue
from ibcalc.catalogue.models import Catalogue, LinkKind
from ibcalc.cluster.resolve import ClusterSpec, ResolvedCluster, resolve_cluster
from ibcalc.engine.types import Algorithm, Collective, Estimate, Protocol
from ibcalc.errors import (
    ClusterError,
    IbcalcError,
    InputFileError,
    SizeTooSmallError,
    UnknownNameError,
    fill_fields,
)
from ibcalc.facade import estimate_on
from ibcalc.render.console import (
    estimate_dict,
    link_dict,
    render_estimate,
    render_json,
    render_link,
    render_links,
    render_sweep,
    render_system,
    render_systems,
    system_dict,
)
from ibcalc.units import parse_size

__all__ = ["app", "main"]

app = typer.Typer(
    name="ibcalc",
    help="How fast can this cluster move these bytes? Interconnect catalogue and collective costs.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
links_app = typer.Typer(
    help="List the link catalogue, or show one link with its sources.", rich_markup_mode=None
)
systems_app = typer.Typer(help="List node/system presets, or show one.", rich_markup_mode=None)
app.add_typer(links_app, name="links")
app.add_typer(systems_app, name="systems")


class OutputFormat(StrEnum):
    """Output formats of single results."""

    TABLE = "table"
    JSON = "json"


class SweepFormat(StrEnum):
    """Output formats of sweeps."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"


class AlgoChoice(StrEnum):
    """``--algo`` values: auto or one algorithm."""

    AUTO = "auto"
    RING = "ring"
    TREE = "tree"
    NVLS = "nvls"
    NVLSTREE = "nvlstree"
    COLLNET = "collnet"
    COLLNETCHAIN = "collnetchain"
    HIERARCHICAL = "hierarchical"
    RHD = "rhd"
    PAT = "pat"
    PAIRWISE = "pairwise"
    PXN = "pxn"
    P2P = "p2p"


class ProtoChoice(StrEnum):
    """``--proto`` values."""

    AUTO = "auto"
    LL = "LL"
    LL128 = "LL128"
    SIMPLE = "Simple"


#: The flag that sets each ClusterSpec field: library messages name fields as ``{field}``.
FIELD_FLAGS: dict[str, str] = {
    "nodes": "--nodes",
    "gpus_per_node": "--gpus-per-node",
    "nics_per_node": "--nics-per-node",
    "intra": "--intra",
    "inter": "--inter",
    "system": "--system",
    "host_pcie": "--host-pcie",
    "sharp": "--sharp",
    "nvls": "--nvls",
    "oversubscription": "--oversubscription",
    "cross_leaf_fraction": "--cross-leaf",
    "sites": "--sites",
    "wan": "--wan",
    "wan_links": "--wan-links",
    "tp": "--tp",
}


def _flags(notes: Sequence[str]) -> list[str]:
    return [fill_fields(n, FIELD_FLAGS) for n in notes]


class _UserError(Exception):
    """Raised inside commands for bad input found by the CLI itself."""


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@contextmanager
def _boundary() -> Iterator[None]:
    """Turn library errors into one stderr line and exit code 2."""
    try:
        yield
    except UnknownNameError as exc:
        _fail(str(exc))
    except ClusterError as exc:
        _fail(exc.render(FIELD_FLAGS))
    except InputFileError as exc:
        # every problem of the file, one line each (DESIGN.md 5: report all, not the first)
        for problem in exc.problems[:-1]:
            typer.echo(f"error: {problem}", err=True)
        _fail(str(exc.problems[-1]) if exc.problems else str(exc))
    except IbcalcError as exc:
        _fail(str(exc))
    except _UserError as exc:
        _fail(str(exc))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ibcalc {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """ibcalc: interconnect catalogue and analytic collective-cost calculator."""


CatalogueOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalogue", help="Extra catalogue YAML (adds or overrides entries).", metavar="FILE"
    ),
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", help="table or json.")]
NodesOpt = Annotated[int | None, typer.Option("--nodes", "-N", help="Number of nodes.")]
GpusOpt = Annotated[int | None, typer.Option("--gpus-per-node", "-g", help="GPUs per node.")]
NicsOpt = Annotated[int | None, typer.Option("--nics-per-node", help="Scale-out NICs per node.")]
IntraOpt = Annotated[str | None, typer.Option("--intra", help="Scale-up link id (e.g. nvlink4).")]
InterOpt = Annotated[
    str | None, typer.Option("--inter", "--fabric", help="Scale-out link id (e.g. ndr, roce-400g).")
]
SystemOpt = Annotated[str | None, typer.Option("--system", help="System preset (e.g. dgx-h100).")]
SharpOpt = Annotated[bool, typer.Option("--sharp/--no-sharp", help="Enable IB SHARP (CollNet).")]
NvlsOpt = Annotated[
    bool | None,
    typer.Option("--nvls/--no-nvls", help="Allow NVLink SHARP (default: when present)."),
]
AlgoOpt = Annotated[
    AlgoChoice, typer.Option("--algo", help="Algorithm, or auto (NCCL-like choice).")
]
ProtoOpt = Annotated[ProtoChoice, typer.Option("--proto", help="Protocol, or auto.")]
DtypeOpt = Annotated[str, typer.Option("--dtype", "-d", help="Element type: fp32, bf16, fp8 ...")]
SizeOpt = Annotated[str, typer.Option("--size", "-s", help="Size: 10GB (10^10 B), 1GiB, 1e9 ...")]
SitesOpt = Annotated[int, typer.Option("--sites", help="Sites joined by a WAN (default 1).")]
WanOpt = Annotated[str | None, typer.Option("--wan", help="WAN link id between sites (wan-100g).")]
WanLinksOpt = Annotated[int, typer.Option("--wan-links", help="WAN links per site.")]
CrossLeafOpt = Annotated[
    float,
    typer.Option(
        "--cross-leaf", help="Fraction (0..1) of all-to-all traffic crossing oversubscribed leaves."
    ),
]
OversubOpt = Annotated[
    float, typer.Option("--oversubscription", help="Leaf oversubscription ratio (down:up), >= 1.")
]


def _catalogue(files: Sequence[Path] | None) -> Catalogue:
    return load_catalogue(list(files or []))


def _group_catalogue(ctx: typer.Context, own: list[Path] | None) -> list[Path] | None:
    """A subcommand's --catalogue, else the one given to its group."""
    if own:
        return own
    parent = ctx.parent.obj if ctx.parent is not None else None
    if isinstance(parent, dict):
        files = parent.get("catalogue")
        if isinstance(files, list):
            return files
    return None


def _cluster(
    catalogue: Catalogue,
    nodes: int | None,
    gpus: int | None,
    nics: int | None,
    intra: str | None,
    inter: str | None,
    system: str | None,
    sharp: bool,
    nvls: bool | None,
    oversubscription: float = 1.0,
    sites: int = 1,
    wan: str | None = None,
    wan_links: int = 1,
    cross_leaf: float = 1.0,
) -> ResolvedCluster:
    spec = ClusterSpec(
        nodes=nodes,
        gpus_per_node=gpus,
        nics_per_node=nics,
        intra=intra,
        inter=inter,
        system=system,
        sharp=sharp,
        nvls=nvls,
        oversubscription=oversubscription,
        sites=sites,
        wan=wan,
        wan_links=wan_links,
        cross_leaf_fraction=cross_leaf,
    )
    return resolve_cluster(catalogue, spec)


def _algo(choice: AlgoChoice) -> Algorithm | None:
    return None if choice is AlgoChoice.AUTO else Algorithm(choice.value)


def _proto(choice: ProtoChoice) -> Protocol | None:
    return None if choice is ProtoChoice.AUTO else Protocol(choice.value)


def _make_collective_command(collective: Collective, summary: str) -> Callable[..., None]:
    def command(
        size: SizeOpt,
        nodes: NodesOpt = None,
        gpus_per_node: GpusOpt = None,
        nics_per_node: NicsOpt = None,
        intra: IntraOpt = None,
        inter: InterOpt = None,
        system: SystemOpt = None,
        sharp: SharpOpt = False,
        nvls: NvlsOpt = None,
        oversubscription: OversubOpt = 1.0,
        cross_leaf: CrossLeafOpt = 1.0,
        sites: SitesOpt = 1,
        wan: WanOpt = None,
        wan_links: WanLinksOpt = 1,
        algo: AlgoOpt = AlgoChoice.AUTO,
        proto: ProtoOpt = ProtoChoice.AUTO,
        dtype: DtypeOpt = "fp32",
        catalogue: CatalogueOpt = None,
        fmt: FormatOpt = OutputFormat.TABLE,
    ) -> None:
        with _boundary():
            size_bytes = parse_size(size)
            cat = _catalogue(catalogue)
            cluster = _cluster(
                cat,
                nodes,
                gpus_per_node,
                nics_per_node,
                intra,
                inter,
                system,
                sharp,
                nvls,
                oversubscription,
                sites,
                wan,
                wan_links,
                cross_leaf,
            )
            est = estimate_on(
                cluster,
                collective,
                size_bytes,
                dtype=dtype,
                algorithm=_algo(algo),
                protocol=_proto(proto),
            )
            _print_estimate(est, fmt)

    command.__doc__ = summary
    return command


def _print_estimate(est: Estimate, fmt: OutputFormat) -> None:
    est = est.model_copy(update={"assumptions": _flags(est.assumptions)})
    if fmt is OutputFormat.JSON:
        render_json(estimate_dict(est))
    else:
        render_estimate(est)


_COMMANDS = {
    "allreduce": (Collective.ALL_REDUCE, "Estimate an all-reduce (nccl-tests all_reduce_perf)."),
    "reducescatter": (
        Collective.REDUCE_SCATTER,
        "Estimate a reduce-scatter; --size is the total buffer (nccl-tests convention).",
    ),
    "allgather": (
        Collective.ALL_GATHER,
        "Estimate an all-gather; --size is the total gathered buffer (nccl-tests convention).",
    ),
    "broadcast": (Collective.BROADCAST, "Estimate a broadcast."),
    "reduce": (Collective.REDUCE, "Estimate a reduce."),
    "alltoall": (
        Collective.ALL_TO_ALL,
        "Estimate an all-to-all; --size is each rank's send buffer.",
    ),
    "sendrecv": (Collective.SEND_RECV, "Estimate nccl-tests sendrecv (ring shift of S per rank)."),
}
for _name, (_coll, _summary) in _COMMANDS.items():
    app.command(_name, help=_summary)(_make_collective_command(_coll, _summary))

_SWEEP_NAMES = {
    **{name: coll for name, (coll, _) in _COMMANDS.items()},
    **{coll.value: coll for coll, _ in _COMMANDS.values()},
}


@app.command("sweep")
def sweep(
    collective: Annotated[
        str, typer.Argument(help="allreduce, allgather, ... (or all_reduce ...)")
    ],
    begin: Annotated[str, typer.Option("--minbytes", "-b", help="Smallest size.")] = "8",
    end: Annotated[str, typer.Option("--maxbytes", "-e", help="Largest size.")] = "8G",
    factor: Annotated[int, typer.Option("--stepfactor", "-f", help="Size multiplier.")] = 2,
    nodes: NodesOpt = None,
    gpus_per_node: GpusOpt = None,
    nics_per_node: NicsOpt = None,
    intra: IntraOpt = None,
    inter: Annotated[
        str | None,
        typer.Option(
            "--inter",
            "--fabric",
            help="Scale-out link id, or a comma list to sweep several (e.g. ndr,hdr,roce-400g).",
        ),
    ] = None,
    system: SystemOpt = None,
    sharp: SharpOpt = False,
    nvls: NvlsOpt = None,
    oversubscription: OversubOpt = 1.0,
    cross_leaf: CrossLeafOpt = 1.0,
    sites: SitesOpt = 1,
    wan: WanOpt = None,
    wan_links: WanLinksOpt = 1,
    algo: AlgoOpt = AlgoChoice.AUTO,
    proto: ProtoOpt = ProtoChoice.AUTO,
    dtype: DtypeOpt = "fp32",
    catalogue: CatalogueOpt = None,
    fmt: Annotated[SweepFormat, typer.Option("--format", help="table, json or csv.")] = (
        SweepFormat.TABLE
    ),
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="Also draw busbw vs size to FILE.png or FILE.svg.", metavar="FILE"
        ),
    ] = None,
    plot_time: Annotated[
        bool, typer.Option("--plot-time", help="Add a time panel to the --plot picture.")
    ] = False,
    measured: Annotated[
        Path | None,
        typer.Option(
            "--measured",
            help="CSV of measured points (size_bytes,busbw_GBps) to overlay on --plot.",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Sweep sizes like nccl-tests (-b/-e/-f) and print a table shaped like its output."""
    with _boundary():
        target = _sweep_plot_check(plot, plot_time, measured)
        fabrics = _fabric_list(inter)
        coll = _SWEEP_NAMES.get(collective.lower())
        if coll is None:
            from ibcalc.catalogue.load import suggest

            close = suggest(collective.lower(), list(_SWEEP_NAMES))
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise _UserError(f"unknown collective {collective!r}{hint}")
        low, high = parse_size(begin), parse_size(end)
        if high < low:
            raise _UserError(f"--maxbytes {end} is smaller than --minbytes {begin}")
        if factor < 2:
            raise _UserError("--stepfactor must be 2 or more")
        cat = _catalogue(catalogue)
        cluster = _cluster(
            cat,
            nodes,
            gpus_per_node,
            nics_per_node,
            intra,
            fabrics[0] if fabrics else None,
            system,
            sharp,
            nvls,
            oversubscription,
            sites,
            wan,
            wan_links,
            cross_leaf,
        )
        sizes: list[float] = []
        size = low
        while size <= high * (1 + 1e-12) and len(sizes) < 200:
            sizes.append(size)
            size *= factor
        estimates = []
        for s in sizes:
            try:
                estimates.append(
                    estimate_on(
                        cluster, coll, s, dtype=dtype, algorithm=_algo(algo), protocol=_proto(proto)
                    )
                )
            except SizeTooSmallError:
                continue
        if not estimates:
            raise _UserError("no size in the sweep is large enough for this many ranks")
        _sweep_finish(
            cat=cat,
            cluster=cluster,
            coll=coll,
            sizes=sizes,
            estimates=estimates,
            fabrics=fabrics,
            fmt=fmt.value,
            algorithm=_algo(algo),
            protocol=_proto(proto),
            dtype=dtype,
            nics_per_node=nics_per_node,
            sharp=sharp,
            nvls=nvls,
            oversubscription=oversubscription,
            target=target,
            plot_time=plot_time,
            measured=measured,
        )


@links_app.callback(invoke_without_command=True)
def links(
    ctx: typer.Context,
    kind: Annotated[
        str | None, typer.Option("--kind", help="scale-up, scale-out, host or wan.")
    ] = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """List the catalogue's links (bandwidth per direction)."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"catalogue": catalogue}  # `links --catalogue F show X` applies F too
        return
    with _boundary():
        cat = _catalogue(catalogue)
        selected = cat.links
        if kind is not None:
            kinds = [k.value for k in LinkKind]
            if kind not in kinds:
                raise _UserError(f"unknown kind {kind!r} (use {', '.join(kinds)})")
            selected = [link for link in cat.links if link.kind.value == kind]
        if fmt is OutputFormat.JSON:
            render_json([link_dict(link) for link in selected])
        else:
            render_links(selected)


@links_app.command("show")
def links_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Link id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Show every field of one link, with its sources and confidence."""
    with _boundary():
        link = find_link(_catalogue(_group_catalogue(ctx, catalogue)), name)
        if fmt is OutputFormat.JSON:
            render_json(link_dict(link))
        else:
            render_link(link)


@systems_app.callback(invoke_without_command=True)
def systems(
    ctx: typer.Context,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """List node/system presets."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"catalogue": catalogue}
        return
    with _boundary():
        cat = _catalogue(catalogue)
        if fmt is OutputFormat.JSON:
            render_json([system_dict(s) for s in cat.systems])
        else:
            render_systems(cat.systems, cat)


@systems_app.command("show")
def systems_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="System id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Show every field of one system preset."""
    with _boundary():
        system = find_system(_catalogue(_group_catalogue(ctx, catalogue)), name)
        if fmt is OutputFormat.JSON:
            render_json(system_dict(system))
        else:
            render_system(system)


# --- design commands (issue 4): check, schema, design show --------------------------------------

design_app = typer.Typer(
    help="Inspect cluster-design files.", rich_markup_mode=None, no_args_is_help=True
)
app.add_typer(design_app, name="design")


class CheckFormat(StrEnum):
    """Output formats of ``ibcalc check``."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    JUNIT = "junit"


class ShowFormat(StrEnum):
    """Output formats of ``ibcalc design show``."""

    TEXT = "text"
    JSON = "json"


OutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the report to FILE (atomically).", metavar="FILE"),
]


@contextmanager
def _design_boundary() -> Iterator[None]:
    """``_boundary``, except that every problem of an input file gets its own error line."""
    from ibcalc.errors import InputFileError

    with _boundary():
        try:
            yield
        except InputFileError as exc:
            for problem in exc.problems:
                typer.echo(f"error: {problem}", err=True)
            raise typer.Exit(2) from None


def _emit(text: str, output: Path | None) -> None:
    from ibcalc.render.check import write_atomic

    if output is None:
        if text:
            typer.echo(text, nl=False)
        return
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise _UserError(f"{output}: cannot write: {exc.strerror or exc}") from None


@app.command("check")
def check_command(
    files: Annotated[list[Path], typer.Argument(help="Cluster-design YAML files.", metavar="FILE")],
    fmt: Annotated[
        CheckFormat, typer.Option("--format", help="text, json, github or junit.")
    ] = CheckFormat.TEXT,
    output: OutputOpt = None,
    catalogue: CatalogueOpt = None,
) -> None:
    """Check cluster-design files against their requirements (a CI gate).

    Exit 0 when all pass, 1 when a requirement fails, 2 when a file cannot be read or validated
    (the other files are still checked and reported).
    """
    from ibcalc.design.check import check_design
    from ibcalc.errors import InputFileError, ValidationProblem
    from ibcalc.render.check import FileOutcome, exit_code, render_check

    outcomes: list[FileOutcome] = []
    with _design_boundary():
        if output is not None and (
            output.suffix.lower() in (".yaml", ".yml")
            or any(output.resolve() == path.resolve() for path in files if path.exists())
        ):
            # `ibcalc check -o designs/*.yaml` would overwrite the first design with the report
            raise _UserError(
                f"--output {output} looks like a design file; a report is text, JSON or XML "
                "(e.g. -o report.xml)"
            )
        cat = _catalogue(catalogue)
        for path in files:
            label = str(path)
            try:
                outcomes.append(FileOutcome(label, check=check_design(path, cat)))
            except InputFileError as exc:
                outcomes.append(FileOutcome(label, problems=list(exc.problems)))
            except IbcalcError as exc:
                problem = ValidationProblem(label, None, None, str(exc))
                outcomes.append(FileOutcome(label, problems=[problem]))
        for outcome in outcomes:
            for problem in outcome.problems:
                typer.echo(f"error: {problem}", err=True)
        _emit(render_check(outcomes, fmt.value), output)
    code = exit_code(outcomes)
    if code:
        raise typer.Exit(code)


@app.command("schema")
def schema_command(output: OutputOpt = None) -> None:
    """Print the JSON Schema of cluster-design files (for editors and CI)."""
    from ibcalc.design.check import json_schema
    from ibcalc.render.check import schema_text

    with _design_boundary():
        _emit(schema_text(json_schema()), output)


@design_app.command("show")
def design_show_command(
    file: Annotated[Path, typer.Argument(help="A cluster-design YAML file.", metavar="FILE")],
    fmt: Annotated[ShowFormat, typer.Option("--format", help="text or json.")] = ShowFormat.TEXT,
    catalogue: CatalogueOpt = None,
) -> None:
    """Show the resolved cluster (tiers, per-GPU bandwidths, bottleneck) and fabric sizing."""
    from ibcalc.design.check import load_design, resolve_design
    from ibcalc.render.check import render_design_json, render_design_text

    with _design_boundary():
        cat = _catalogue(catalogue)
        design, doc = load_design(file, catalogue=cat)
        resolved = resolve_design(design, doc, cat)
        text = (
            render_design_json(resolved) if fmt is ShowFormat.JSON else render_design_text(resolved)
        )
        _emit(text, None)


# (end of design commands)


# --- gap and plot commands (issue 5) --------------------------------------------------------------

#: Message size of the tensor-parallel what-if when --tp is given without --tp-size: one layer's
#: activations of a large model (1 x 4096 tokens x 8192 hidden x 2 bytes is about 67 MB).
_TP_DEFAULT_SIZE = "64MB"


def _plot_target(plot: Path | None) -> Path | None:
    """Check a --plot target and that matplotlib is importable, before any work is done."""
    if plot is None:
        return None
    from ibcalc.render.plot import check_target, require_matplotlib

    target, _fmt = check_target(plot)
    require_matplotlib()
    return target


def _wrote(path: Path) -> None:
    typer.echo(f"plot written to {path}", err=True)


@app.command("gap")
def gap_command(
    intra: Annotated[
        str | None, typer.Option("--intra", help="Scale-up link id (e.g. nvlink4).")
    ] = None,
    inter: Annotated[
        str | None, typer.Option("--inter", "--fabric", help="Scale-out link id (e.g. ndr).")
    ] = None,
    system: SystemOpt = None,
    gpus_per_node: GpusOpt = None,
    nics_per_node: NicsOpt = None,
    host_pcie: Annotated[
        str | None,
        typer.Option("--host-pcie", help="PCIe link each NIC sits on; caps its rate (e.g. pcie5)."),
    ] = None,
    tp: Annotated[
        int | None,
        typer.Option("--tp", help="Tensor-parallel degree T: one all-reduce inside vs across."),
    ] = None,
    tp_size: Annotated[
        str | None,
        typer.Option("--tp-size", help=f"Size of that all-reduce (default {_TP_DEFAULT_SIZE})."),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="Also draw the gap as bars to FILE.png or FILE.svg.", metavar="FILE"
        ),
    ] = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Scale-up vs scale-out bandwidth per GPU (per direction), ratios, and what they cost.

    Without --intra/--inter/--system: a table of common pairings. With --intra and --inter, or
    --system: one pairing in detail; --tp adds a tensor-parallel what-if.
    """
    from ibcalc.gap import (
        common_pairings,
        gap,
        gap_dict,
        gap_for_system,
        nics_per_gpu_node,
        tp_dict,
        tp_whatif,
    )
    from ibcalc.render.console import render_gap, render_gap_table

    with _boundary():
        target = _plot_target(plot)
        cat = _catalogue(catalogue)
        if system is None and (intra is None or inter is None):
            for flag, value in (
                ("--gpus-per-node", gpus_per_node),
                ("--nics-per-node", nics_per_node),
                ("--host-pcie", host_pcie),
                ("--tp", tp),
                ("--tp-size", tp_size),
            ):
                if value is not None:
                    raise _UserError(
                        f"{flag} describes one pairing: give --intra and --inter, or --system"
                    )
            results = common_pairings(cat)
            if intra is not None:
                wanted = find_link(cat, intra).id
                results = [r for r in results if r.intra == wanted]
            if inter is not None:
                wanted = find_link(cat, inter).id
                results = [r for r in results if r.inter == wanted]
            if not results:
                given = intra if intra is not None else inter
                raise _UserError(
                    f"{given!r} is not in the common pairings; give both --intra and --inter "
                    "to compare any two links"
                )
            rows = [gap_dict(r) for r in results]
            if fmt is OutputFormat.JSON:
                render_json(rows)
            else:
                render_gap_table(rows)
            if target is not None:
                from ibcalc.render.plot import plot_gap

                _wrote(plot_gap(target, results))
            return

        if system is not None:
            result = gap_for_system(
                cat,
                system,
                intra=intra,
                inter=inter,
                gpus_per_node=gpus_per_node,
                nics_per_node=nics_per_node,
                host_pcie=host_pcie,
            )
            domain = find_system(cat, system).scale_up_domain
            if gpus_per_node is not None:
                domain = gpus_per_node
        else:
            assert intra is not None
            assert inter is not None
            notes = []
            gpus = gpus_per_node if gpus_per_node is not None else 8
            if gpus_per_node is None:
                notes.append("8 GPUs per node assumed (--gpus-per-node)")
            nics = nics_per_node if nics_per_node is not None else gpus
            if nics_per_node is None:
                notes.append(f"{nics} NICs per node (one per GPU) assumed (--nics-per-node)")
            result = gap(cat, intra, inter, gpus, nics, host_pcie)
            result = result.model_copy(update={"assumptions": notes + result.assumptions})
            domain = gpus
        result = result.model_copy(update={"assumptions": _flags(result.assumptions)})
        data = gap_dict(result)
        tp_data = None
        if tp is None and tp_size is not None:
            raise _UserError("--tp-size needs --tp T (the tensor-parallel degree)")
        if tp is not None:
            if tp > domain:
                raise _UserError(
                    f"--tp {tp} does not fit inside one scale-up domain of {domain} GPUs"
                )
            size = parse_size(tp_size if tp_size is not None else _TP_DEFAULT_SIZE)
            whatif = tp_whatif(
                cat,
                result.intra,
                result.inter,
                tp,
                size,
                nics_per_node=nics_per_gpu_node(result.nics_per_node, result.gpus_per_node),
                host_pcie=result.host_pcie,
                system=result.system,
            )
            whatif = whatif.model_copy(update={"assumptions": _flags(whatif.assumptions)})
            tp_data = tp_dict(whatif)
            if tp_size is None:
                tp_data["assumptions"].insert(
                    0, f"TP all-reduce size {_TP_DEFAULT_SIZE} assumed (--tp-size)"
                )
            data["tp"] = tp_data
        if fmt is OutputFormat.JSON:
            render_json(data)
        else:
            render_gap(data, tp_data)
        if target is not None:
            from ibcalc.render.plot import plot_gap

            _wrote(plot_gap(target, [result]))


def _fabric_list(inter: str | None) -> list[str]:
    """``--inter ndr,hdr`` -> ["ndr", "hdr"]; duplicates dropped, order kept."""
    if inter is None:
        return []
    names = list(dict.fromkeys(name.strip() for name in inter.split(",") if name.strip()))
    if not names:
        raise _UserError(f"--inter {inter!r} names no link (e.g. --inter ndr,hdr)")
    return names


def _sweep_plot_check(plot: Path | None, plot_time: bool, measured: Path | None) -> Path | None:
    """Validate --plot, --plot-time and --measured before the sweep runs."""
    if plot is None:
        if plot_time or measured is not None:
            raise _UserError("--plot-time and --measured need --plot FILE.png|FILE.svg")
        return None
    # --measured itself is read (and filtered to the sweep) after the sweep, before any output.
    return _plot_target(plot)


def _sweep_estimates(
    cluster: ResolvedCluster,
    coll: Collective,
    sizes: Sequence[float],
    dtype: str,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    *,
    skip_inapplicable: bool = False,
) -> list[Estimate]:
    """Estimates over ``sizes``, skipping sizes too small for this many ranks (as sweep does).

    ``skip_inapplicable`` also skips sizes where a forced algorithm does not run (for the
    per-algorithm lines of a plot); otherwise that error reaches the user as in the sweep.
    """
    from ibcalc.errors import AlgorithmNotApplicableError

    estimates = []
    for s in sizes:
        try:
            estimates.append(
                estimate_on(cluster, coll, s, dtype=dtype, algorithm=algorithm, protocol=protocol)
            )
        except AlgorithmNotApplicableError:
            if not skip_inapplicable:
                raise
        except SizeTooSmallError:
            pass
    return estimates


def _sweep_finish(
    *,
    cat: Catalogue,
    cluster: ResolvedCluster,
    coll: Collective,
    sizes: Sequence[float],
    estimates: list[Estimate],
    fabrics: Sequence[str],
    fmt: str,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    dtype: str,
    nics_per_node: int | None,
    sharp: bool,
    nvls: bool | None,
    oversubscription: float,
    target: Path | None,
    plot_time: bool,
    measured: Path | None,
) -> None:
    """Render a sweep over one or several fabrics, then draw it when --plot was given."""
    groups: list[tuple[ResolvedCluster, list[Estimate]]] = [(cluster, estimates)]
    if len(fabrics) > 1:
        if cluster.inter is None:
            raise _UserError("several --inter fabrics need more than one node (--nodes)")
        seen = {cluster.inter.id}
        for fabric in fabrics[1:]:
            # Every fabric goes into the node the first one resolved to: same GPUs, scale-up link,
            # system and host PCIe, so the lines differ only in the network.
            other = resolve_cluster(
                cat,
                cluster.spec.replace(
                    nodes=cluster.nodes,
                    gpus_per_node=cluster.gpus_per_node,
                    nics_per_node=nics_per_node,
                    intra=cluster.intra.id if cluster.intra else None,
                    inter=fabric,
                    system=cluster.system.id if cluster.system else None,
                    host_pcie=cluster.host_pcie.id if cluster.host_pcie else None,
                ),
            )
            assert other.inter is not None
            if other.inter.id in seen:
                continue
            seen.add(other.inter.id)
            more = _sweep_estimates(other, coll, sizes, dtype, algorithm, protocol)
            if not more:
                raise _UserError("no size in the sweep is large enough for this many ranks")
            groups.append((other, more))
    # Measured points are read before any output, so a bad file leaves stdout empty.
    from ibcalc.render.plot import load_measured

    points, total = (
        load_measured(
            measured, collective=coll, nodes=cluster.nodes, gpus_per_node=cluster.gpus_per_node
        )
        if target is not None and measured is not None
        else ([], 0)
    )
    if measured is not None and target is not None:
        if not points:
            raise _UserError(
                f"no row of {measured} matches {coll.value} on {cluster.nodes} nodes x "
                f"{cluster.gpus_per_node} GPUs (rows are filtered by their collective, nodes and "
                "gpus_per_node columns when present; busbw 0 is skipped)"
            )
        typer.echo(f"measured: {len(points)} of {total} rows of {measured} plotted", err=True)
    if len(groups) == 1:
        render_sweep(estimates, fmt)
    else:
        from ibcalc.render.console import render_sweep_groups

        render_sweep_groups([(c.inter.id if c.inter else "-", ests) for c, ests in groups], fmt)
    if target is None:
        return
    from ibcalc.render.plot import plot_sweep_clusters

    per_algorithm = None
    if len(groups) == 1 and algorithm is None:
        # One line per algorithm that applies here, each as --algo A would report it.
        used = dict.fromkeys(
            c.algorithm for est in estimates for c in (est.best, *est.alternatives)
        )
        per_algorithm = {
            a: _sweep_estimates(cluster, coll, sizes, dtype, a, protocol, skip_inapplicable=True)
            for a in used
        }
    _wrote(
        plot_sweep_clusters(
            target,
            coll,
            groups,
            per_algorithm=per_algorithm,
            forced=algorithm,
            measured=points,
            time_panel=plot_time,
            dtype=dtype,
        )
    )


# (end of gap commands)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run the app with a one-line error boundary."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # Without standalone mode the toolkit returns an Exit's code instead of raising it.
        code = app(args=args, prog_name="ibcalc", standalone_mode=False)
        if isinstance(code, int) and code != 0:
            sys.exit(code)
    except click_exceptions.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else "", err=False)
        sys.exit(0)
    except click_exceptions.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx is not None else "ibcalc"
        typer.echo(f"error: {exc.format_message()} (see '{command} --help')", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(130)
    except click_exceptions.ClickException as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
    except IbcalcError as exc:  # pragma: no cover - commands catch these themselves
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
