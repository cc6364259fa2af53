"""``ibcalc nccl-check`` and ``ibcalc calibrate``: read nccl-tests logs, check or calibrate.

Thin commands: parse options, call :func:`ibcalc.logs.check.check_log` or
:func:`ibcalc.logs.calibrate.calibrate`, render with :mod:`ibcalc.render.logs`. They are
registered on an app with :func:`register` (the main CLI wires them in).

Exit codes: ``nccl-check`` exits 0, or 1 when ``--min-efficiency`` is given and a size of
64 MiB or more falls below it (or a row fails validation, ``#wrong`` > 0), or 2 when a file
cannot be read or an option is wrong (the other files are still checked). ``calibrate`` exits
0, or 2 on unreadable input or an output it refuses to write. ``-`` reads standard input
(at most 64 MiB).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ibcalc.errors import ClusterError, IbcalcError, InputFileError, LogParseError

if TYPE_CHECKING:
    from ibcalc.catalogue.models import Catalogue
    from ibcalc.cluster.spec import ClusterSpec
    from ibcalc.logs.records import ParsedLog

__all__ = ["CalibrateFormat", "CheckFormat", "register"]

#: The flag that sets each cluster field, for messages that name fields as ``{field}``.
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
}
_STDIN = "-"


class CheckFormat(StrEnum):
    """Output formats of ``nccl-check``."""

    TABLE = "table"
    JSON = "json"
    GITHUB = "github"


class CalibrateFormat(StrEnum):
    """Output formats of ``calibrate``."""

    TABLE = "table"
    JSON = "json"


def _error(message: str) -> None:
    typer.echo(f"error: {message}", err=True)


@contextmanager
def _boundary() -> Iterator[None]:
    """Library errors become ``error:`` lines on stderr and exit code 2."""
    try:
        yield
    except ClusterError as exc:
        _error(exc.render(FIELD_FLAGS))
        raise typer.Exit(2) from None
    except InputFileError as exc:
        for problem in exc.problems:
            _error(str(problem))
        if not exc.problems:
            _error(str(exc))
        raise typer.Exit(2) from None
    except IbcalcError as exc:
        _error(str(exc))
        raise typer.Exit(2) from None


@dataclass(frozen=True)
class _Input:
    label: str
    text: str
    parsed: ParsedLog


def _read(path: str) -> _Input:
    """Read and parse a log file, or standard input for ``-`` (at most 64 MiB)."""
    from ibcalc.logs import MAX_LOG_BYTES, parse_file, parse_log

    if path == _STDIN:
        data = sys.stdin.buffer.read(MAX_LOG_BYTES + 1)
        if len(data) > MAX_LOG_BYTES:
            raise LogParseError(f"<stdin>: larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB")
        if b"\x00" in data:
            raise LogParseError("<stdin>: binary data, not an nccl-tests log")
        text = data.decode("utf-8", errors="replace")
        return _Input("<stdin>", text, parse_log(text, source="<stdin>"))
    # parse_file does the checks (regular file, size, binary); the text is read once more for
    # NCCL's debug output, which the parser skips
    parsed = parse_file(path)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise LogParseError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return _Input(path, text, parsed)


def _flags(
    catalogue: Catalogue,
    design: Path | None,
    values: dict[str, Any],
) -> ClusterSpec:
    """The caller's cluster description: the design file's node shape (its node count is
    left to the log), then the flags given."""
    from ibcalc.cluster.spec import ClusterSpec

    given: dict[str, Any] = {}
    if design is not None:
        from ibcalc.design.check import load_design, resolve_design

        loaded, doc = load_design(design)
        spec = resolve_design(loaded, doc, catalogue).cluster.spec
        data = spec.model_dump()
        for key in spec.model_fields_set:
            if key != "nodes":
                given[key] = data[key]
    given.update({k: v for k, v in values.items() if v is not None})
    return ClusterSpec(**given)


NodesOpt = Annotated[int | None, typer.Option("--nodes", help="Nodes (default: from the log).")]
GpusOpt = Annotated[
    int | None,
    typer.Option("--gpus-per-node", help="GPUs (ranks) per node (default: from the log)."),
]
NicsOpt = Annotated[int | None, typer.Option("--nics-per-node", help="Scale-out NICs per node.")]
IntraOpt = Annotated[str | None, typer.Option("--intra", help="Scale-up link id (nvlink4 ...).")]
InterOpt = Annotated[
    str | None, typer.Option("--inter", "--fabric", help="Scale-out link id (ndr, efa-v2 ...).")
]
SystemOpt = Annotated[
    str | None, typer.Option("--system", help="System preset (default: from the GPU name).")
]
HostPcieOpt = Annotated[
    str | None, typer.Option("--host-pcie", help="PCIe link each NIC sits on (pcie5 ...).")
]
NvlsOpt = Annotated[
    bool | None,
    typer.Option("--nvls/--no-nvls", help="NVLink SHARP available (default: yes where present)."),
]
SharpOpt = Annotated[
    bool | None, typer.Option("--sharp/--no-sharp", help="IB SHARP (CollNet) in use.")
]
DesignOpt = Annotated[
    Path | None,
    typer.Option("--design", help="A cluster-design file describing the nodes.", metavar="FILE"),
]
CatalogueOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalogue", help="Extra catalogue YAML (adds or overrides links).", metavar="FILE"
    ),
]
CostParamsOpt = Annotated[
    list[Path] | None,
    typer.Option("--cost-params", help="Cost-parameter override YAML.", metavar="FILE"),
]
FilesArg = Annotated[
    list[str],
    typer.Argument(help="nccl-tests / rccl-tests logs ('-' reads stdin).", metavar="FILE"),
]


def _cluster_values(
    nodes: int | None,
    gpus: int | None,
    nics: int | None,
    intra: str | None,
    inter: str | None,
    system: str | None,
    host_pcie: str | None,
    nvls: bool | None,
    sharp: bool | None,
) -> dict[str, Any]:
    return {
        "nodes": nodes,
        "gpus_per_node": gpus,
        "nics_per_node": nics,
        "intra": intra,
        "inter": inter,
        "system": system,
        "host_pcie": host_pcie,
        "nvls": nvls,
        "sharp": sharp,
    }


def _plot_path(base: Path, index: int) -> Path:
    if index == 0:
        return base
    return base.with_name(f"{base.stem}-{index + 1}{base.suffix}")


def nccl_check(
    files: FilesArg,
    nodes: NodesOpt = None,
    gpus: GpusOpt = None,
    nics: NicsOpt = None,
    intra: IntraOpt = None,
    inter: InterOpt = None,
    system: SystemOpt = None,
    host_pcie: HostPcieOpt = None,
    nvls: NvlsOpt = None,
    sharp: SharpOpt = None,
    design: DesignOpt = None,
    collective: Annotated[
        str | None,
        typer.Option(
            "--collective", help="Collective, when the log does not say (all_gather ...)."
        ),
    ] = None,
    dtype: Annotated[
        str | None, typer.Option("--dtype", help="Element type, when the log does not say.")
    ] = None,
    min_efficiency: Annotated[
        float | None,
        typer.Option(
            "--min-efficiency",
            help="Gate: exit 1 when a size of 64 MiB or more reaches less than this fraction "
            "of the expected busbw (e.g. 0.85).",
            min=0.0,
            max=10.0,
        ),
    ] = None,
    fmt: Annotated[
        CheckFormat, typer.Option("--format", help="table, json or github.")
    ] = CheckFormat.TABLE,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="Write measured vs expected busbw to FILE (.png/.svg).", metavar="FILE"
        ),
    ] = None,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
) -> None:
    """Is my number normal? Compare nccl-tests / rccl-tests results with the model, per size,
    and say why they differ.

    The cluster comes from the log (nodes, ranks per node, GPU model, NCCL's own network
    output); flags and --design override it, and every inferred value is listed as an
    assumption. Exit 0; 1 when --min-efficiency fails; 2 when a file cannot be read.
    """
    from ibcalc.catalogue.cost_params import load_cost_params
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.engine.types import Collective
    from ibcalc.logs.check import RunCheck, check_log, gate_failures
    from ibcalc.render import logs as render

    with _boundary():
        cat = load_catalogue(list(catalogue or []))
        params = load_cost_params(list(cost_params or []))
        spec = _flags(
            cat,
            design,
            _cluster_values(nodes, gpus, nics, intra, inter, system, host_pcie, nvls, sharp),
        )
        coll = None
        if collective is not None:
            coll = Collective.lookup(collective)
            if coll is None:
                names = ", ".join(c.value for c in Collective)
                raise IbcalcError(f"unknown collective {collective!r} (use one of {names})")
        if plot is not None:
            from ibcalc.render.plot import check_target, require_matplotlib

            check_target(plot)
            require_matplotlib()
    checks: list[RunCheck] = []
    unreadable = False
    for path in files:
        try:
            source = _read(path)
            checks += check_log(
                source.parsed,
                source.text,
                catalogue=cat,
                params=params,
                flags=spec,
                collective=coll,
                dtype=dtype,
            )
        except ClusterError as exc:
            _error(f"{path}: {exc.render(FIELD_FLAGS)}")
            unreadable = True
        except IbcalcError as exc:
            _error(str(exc))
            unreadable = True
    if fmt is CheckFormat.JSON:
        typer.echo(render.render_checks_json(checks, names=FIELD_FLAGS), nl=False)
    elif fmt is CheckFormat.GITHUB:
        typer.echo(render.render_checks_github(checks, names=FIELD_FLAGS), nl=False)
    else:
        typer.echo(render.render_checks(checks, names=FIELD_FLAGS), nl=False)
    if plot is not None:
        plotted = [c for c in checks if c.rows]
        with _boundary():
            for i, check in enumerate(plotted):
                target = render.plot_check(_plot_path(plot, i), check)
                typer.echo(f"wrote {target}", err=True)
    if unreadable:
        raise typer.Exit(2)
    if min_efficiency is not None:
        failing = [(c, gate_failures(c, min_efficiency)) for c in checks]
        failing = [(c, rows) for c, rows in failing if rows]
        for check, rows in failing:
            sizes = ", ".join(
                f"{r.size_bytes} B ({r.efficiency:.0%}{', #wrong' if r.wrong else ''})"
                for r in rows[:6]
            )
            typer.echo(
                f"FAIL {check.source} run {check.run_index + 1}: below {min_efficiency:g} of the "
                f"expected busbw at {sizes}",
                err=True,
            )
        if failing:
            raise typer.Exit(1)


def calibrate_command(
    files: FilesArg,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the override: links to FILE (a --catalogue file), model constants to "
            "FILE's name with .cost-params (an IBCALC_COST_PARAMS file).",
            metavar="FILE",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite existing output files.")
    ] = False,
    nodes: NodesOpt = None,
    gpus: GpusOpt = None,
    nics: NicsOpt = None,
    intra: IntraOpt = None,
    inter: InterOpt = None,
    system: SystemOpt = None,
    host_pcie: HostPcieOpt = None,
    nvls: NvlsOpt = None,
    sharp: SharpOpt = None,
    design: DesignOpt = None,
    fmt: Annotated[
        CalibrateFormat, typer.Option("--format", help="table or json.")
    ] = CalibrateFormat.TABLE,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
) -> None:
    """Fit the model to your own nccl-tests runs: transport latencies, link efficiencies, NVLS
    efficiency; report the fit and what the runs cannot determine; write an override file.

    Exit 0; 2 when a file cannot be read or the output would overwrite a file (use --force;
    an input is never overwritten).
    """
    from ibcalc.catalogue.cost_params import load_cost_params
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.logs.calibrate import calibrate, write_override
    from ibcalc.logs.env import scan_environment
    from ibcalc.render import logs as render

    with _boundary():
        cat = load_catalogue(list(catalogue or []))
        params = load_cost_params(list(cost_params or []))
        spec = _flags(
            cat,
            design,
            _cluster_values(nodes, gpus, nics, intra, inter, system, host_pcie, nvls, sharp),
        )
        runs = []
        sources: list[str] = []
        envs = []
        for path in files:
            source = _read(path)
            previous = 0
            for run in source.parsed.runs:
                runs.append(run)
                sources.append(source.label)
                envs.append(scan_environment(source.text, previous + 1, run.line_end))
                previous = run.line_end
        result = calibrate(runs, spec, params, cat, sources=sources, envs=envs)
        if fmt is CalibrateFormat.JSON:
            import json

            typer.echo(json.dumps(render.calibration_dict(result), indent=2))
        else:
            typer.echo(render.render_calibration(result), nl=False)
        if output is not None:
            written = write_override(result, output, force=force, inputs=list(files))
            for target in written:
                typer.echo(f"wrote {target}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``nccl-check`` and ``calibrate`` to ``app``."""
    app.command("nccl-check")(nccl_check)
    app.command("calibrate")(calibrate_command)
