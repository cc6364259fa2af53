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
from ibcalc.catalogue import find_link, find_system, load_catalogue
from ibcalc.engine import estimate_on
from ibcalc.errors import IbcalcError, UnknownNameError
from ibcalc.models import Algorithm, Catalogue, Collective, Estimate, LinkKind, Protocol
from ibcalc.report import (
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
from ibcalc.topology import ClusterSpec, ResolvedCluster, resolve_cluster
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
OversubOpt = Annotated[
    float, typer.Option("--oversubscription", help="Leaf oversubscription ratio (down:up), >= 1.")
]


def _catalogue(files: Sequence[Path] | None) -> Catalogue:
    return load_catalogue(list(files or []))


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
    inter: InterOpt = None,
    system: SystemOpt = None,
    sharp: SharpOpt = False,
    nvls: NvlsOpt = None,
    oversubscription: OversubOpt = 1.0,
    algo: AlgoOpt = AlgoChoice.AUTO,
    proto: ProtoOpt = ProtoChoice.AUTO,
    dtype: DtypeOpt = "fp32",
    catalogue: CatalogueOpt = None,
    fmt: Annotated[SweepFormat, typer.Option("--format", help="table, json or csv.")] = (
        SweepFormat.TABLE
    ),
) -> None:
    """An nccl-tests-shaped table over sizes -b .. -e, multiplying by -f."""
    with _boundary():
        coll = _SWEEP_NAMES.get(collective.lower())
        if coll is None:
            from ibcalc.catalogue import suggest

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
            inter,
            system,
            sharp,
            nvls,
            oversubscription,
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
            except IbcalcError as exc:
                if "too small" in str(exc):
                    continue
                raise
        if not estimates:
            raise _UserError("no size in the sweep is large enough for this many ranks")
        render_sweep(estimates, fmt.value)


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
    name: Annotated[str, typer.Argument(help="Link id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Show every field of one link, with its sources and confidence."""
    with _boundary():
        link = find_link(_catalogue(catalogue), name)
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
        return
    with _boundary():
        cat = _catalogue(catalogue)
        if fmt is OutputFormat.JSON:
            render_json([system_dict(s) for s in cat.systems])
        else:
            render_systems(cat.systems, cat)


@systems_app.command("show")
def systems_show(
    name: Annotated[str, typer.Argument(help="System id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Show every field of one system preset."""
    with _boundary():
        system = find_system(_catalogue(catalogue), name)
        if fmt is OutputFormat.JSON:
            render_json(system_dict(system))
        else:
            render_system(system)


# --- design commands (issue 4): check, schema, design show --------------------------------------
# (end of design commands)


# --- gap and plot commands (issue 5) --------------------------------------------------------------
# (end of gap commands)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run the app with a one-line error boundary."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        app(args=args, prog_name="ibcalc", standalone_mode=False)
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
