"""The design-file commands: ``check``, ``schema``, ``design show``.

They call :mod:`ibcalc.design.check` and :mod:`ibcalc.render.check`, imported when a command
runs (the design checker is the heaviest import, and most commands do not need it).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ibcalc.cli.boundary import CliUsageError, guard, say_errors
from ibcalc.cli.options import CatalogueOpt, CostParamsOpt, catalogue_of, file_name, params_of
from ibcalc.cli.output import emit, once, output_target, run_inputs
from ibcalc.textsafe import printable

if TYPE_CHECKING:
    from ibcalc.catalogue.models import Catalogue
    from ibcalc.engine.params import CostParams
    from ibcalc.render.check import FileOutcome

__all__ = ["CheckFormat", "ShowFormat", "register"]

design_app = typer.Typer(help="Inspect cluster-design files.", rich_markup_mode=None)


class CheckFormat(StrEnum):
    """Output formats of ``ibcalc check`` (those of :func:`ibcalc.render.check.render_check`)."""

    TEXT = "text"
    #: every other command's name for its text output: the same report
    TABLE = "table"
    JSON = "json"
    GITHUB = "github"
    JUNIT = "junit"


class ShowFormat(StrEnum):
    """Output formats of ``ibcalc design show``."""

    TEXT = "text"
    TABLE = "table"  # as the other commands call it: the same text
    JSON = "json"


OutputOpt = Annotated[
    str | None,
    typer.Option("--output", "-o", help="Write the report to FILE (atomically).", metavar="FILE"),
]


def _refuse_design_target(output: str | None, what: str, example: str) -> None:
    """``ibcalc check -o designs/*.yaml`` would overwrite the first design with the report, and
    ``ibcalc schema -o cluster.yaml`` a design with the schema."""
    if output is not None and Path(output).suffix.lower() in (".yaml", ".yml"):
        raise CliUsageError(
            f"--output {printable(output)} looks like a design file; {what} (e.g. -o {example})"
        )


#: The report each file suffix names (a suffix not listed names none).
_SUFFIX_FORMATS = {".json": "json", ".xml": "junit"}


def _refuse_other_format(output: str | None, fmt: CheckFormat) -> None:
    """``-o report.xml`` with ``--format json`` wrote JSON into a file a CI job uploads as JUnit
    (a hostile-input review); a suffix that names another report than ``--format`` is refused."""
    if output is None:
        return
    named = _SUFFIX_FORMATS.get(Path(output).suffix.lower())
    given = "text" if fmt is CheckFormat.TABLE else fmt.value
    if named is not None and named != given:
        raise CliUsageError(
            f"--output {printable(output)} names a {named} report, but --format is {given}; "
            f"give --format {named}, or another file name"
        )


def _outcomes(
    files: list[Path],
    cat: Catalogue,
    *,
    pessimistic: bool = False,
    allow_empty: bool = False,
    params: CostParams | None = None,
) -> list[FileOutcome]:
    """Check every file; a file that cannot be read or validated is an outcome too, and so is
    a file without requirements unless ``allow_empty``."""
    from ibcalc.design.check import check_design
    from ibcalc.errors import IbcalcError, InputFileError, ValidationProblem
    from ibcalc.render.check import FileOutcome

    outcomes: list[FileOutcome] = []
    for path in files:
        label = str(path)
        try:
            check = check_design(
                path, cat, pessimistic=pessimistic, allow_empty=allow_empty, params=params
            )
            outcomes.append(FileOutcome(label, check=check))
        except InputFileError as exc:
            outcomes.append(FileOutcome(label, problems=list(exc.problems)))
        except IbcalcError as exc:
            problem = ValidationProblem(label, None, None, str(exc))
            outcomes.append(FileOutcome(label, problems=[problem]))
    return outcomes


@guard
def check_command(
    files: Annotated[
        list[Path],
        typer.Argument(help="Cluster-design YAML files.", metavar="FILE", parser=file_name),
    ],
    fmt: Annotated[
        CheckFormat,
        typer.Option(
            "--format",
            help="text (or table, as other commands call it), json, github or junit.",
            case_sensitive=False,
        ),
    ] = CheckFormat.TEXT,
    output: OutputOpt = None,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    pessimistic: Annotated[
        bool,
        typer.Option(
            "--pessimistic",
            help="Judge time and bandwidth targets against the pessimistic end of each "
            "estimate's error band (about 90 % of measurements are faster).",
        ),
    ] = False,
    allow_empty: Annotated[
        bool,
        typer.Option(
            "--allow-empty",
            help="Accept a file without requirements (by default it is an error: a gate that "
            "checks nothing would pass).",
        ),
    ] = False,
) -> None:
    """Check cluster-design files against their requirements (a CI gate).

    Exit 0 when all pass, 1 when a requirement fails, 2 when a file cannot be read or validated
    or has no requirements (unless --allow-empty); the other files are still checked and
    reported.
    """
    from ibcalc.render.check import exit_code, render_check

    _refuse_design_target(output, "a report is text, JSON or XML", "report.xml")
    _refuse_other_format(output, fmt)
    target = output_target(output, run_inputs(files, catalogue, cost_params), what="report")
    params = params_of(cost_params)
    cat = catalogue_of(catalogue)
    files = once(files)
    outcomes = _outcomes(
        files, cat, pessimistic=pessimistic, allow_empty=allow_empty, params=params
    )
    overrides = [f"catalogue {o}" for o in cat.origins[1:]]
    overrides += [f"cost parameters {o}" for o in params.origins[1:]]
    for outcome in outcomes:
        say_errors(outcome.problems)
    kind = CheckFormat.TEXT if fmt is CheckFormat.TABLE else fmt
    emit(render_check(outcomes, kind.value, overrides), target)
    code = exit_code(outcomes)
    if code:
        raise typer.Exit(code)


SchemaOutputOpt = Annotated[
    str | None,
    typer.Option("--output", "-o", help="Write the schema to FILE (atomically).", metavar="FILE"),
]


@guard
def schema_command(output: SchemaOutputOpt = None) -> None:
    """Print the JSON Schema of cluster-design files (for editors and CI)."""
    from ibcalc.design.check import json_schema
    from ibcalc.render.check import schema_text

    _refuse_design_target(output, "the schema is JSON", "design.schema.json")
    target = output_target(output, run_inputs(), what="schema")
    emit(schema_text(json_schema()), target)


@design_app.command("show")  # registered here: register() only adds the group
@guard
def design_show_command(
    file: Annotated[
        Path,
        typer.Argument(help="A cluster-design YAML file.", metavar="FILE", parser=file_name),
    ],
    fmt: Annotated[
        ShowFormat,
        typer.Option("--format", help="text (or table) or json.", case_sensitive=False),
    ] = ShowFormat.TEXT,
    catalogue: CatalogueOpt = None,
) -> None:
    """Show the resolved cluster (tiers, per-GPU bandwidths, bottleneck) and fabric sizing."""
    from ibcalc.design.check import load_design, resolve_design
    from ibcalc.render.check import render_design_json, render_design_text

    cat = catalogue_of(catalogue)
    design, doc = load_design(file, catalogue=cat)
    resolved = resolve_design(design, doc, cat)
    text = render_design_json(resolved) if fmt is ShowFormat.JSON else render_design_text(resolved)
    emit(text, None)


@design_app.callback(invoke_without_command=True)
def _design_group(ctx: typer.Context) -> None:
    """Inspect cluster-design files."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


def register(app: typer.Typer) -> None:
    """Add ``check``, ``schema`` and the ``design`` group to ``app``."""
    app.command("check")(check_command)
    app.command("schema")(schema_command)
    app.add_typer(design_app, name="design")
