"""The catalogue commands: ``links``, ``systems`` and ``storage``, each with ``show``.

``links --catalogue F show X`` applies F as ``links show X --catalogue F`` would: a group's
``--catalogue`` reaches its ``show`` through the context.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ibcalc.catalogue.load import find_link, find_storage, find_system, suggest
from ibcalc.catalogue.models import LinkKind
from ibcalc.cli.boundary import CliUsageError, guard
from ibcalc.cli.options import FORMAT_TABLE, CatalogueOpt, FormatOpt, OutputFormat, catalogue_of
from ibcalc.errors import UnknownNameError
from ibcalc.render.console import (
    render_link,
    render_links,
    render_storage,
    render_storage_list,
    render_system,
    render_systems,
)

__all__ = ["register"]

links_app = typer.Typer(
    help="List the link catalogue, or show one link with its sources.", rich_markup_mode=None
)
systems_app = typer.Typer(help="List node/system presets, or show one.", rich_markup_mode=None)
storage_app = typer.Typer(
    help="List the storage catalogue (checkpoint targets), or show one entry.",
    rich_markup_mode=None,
)


def _group_catalogue(ctx: typer.Context, own: list[Path] | None) -> list[Path] | None:
    """The group's ``--catalogue`` files, then the subcommand's own, loaded in that order
    (``links --catalogue A show X --catalogue B`` applies A, then B: review BL had found A
    dropped unread)."""
    parent = ctx.parent.obj if ctx.parent is not None else None
    group = parent.get("catalogue") if isinstance(parent, dict) else None
    files = [*(group if isinstance(group, list) else []), *(own or [])]
    return files or None


#: ``show``'s own --format: unset unless given, so that the group's applies.
ShowFormatOpt = Annotated[
    OutputFormat | None,
    typer.Option("--format", help="table or json (default: the group's).", case_sensitive=False),
]


def _group_format(ctx: typer.Context, own: StrEnum | None) -> str:
    """A subcommand's ``--format`` when given, else the one given to its group, else table."""
    if own is not None:
        return own.value
    parent = ctx.parent.obj if ctx.parent is not None else None
    group = parent.get("fmt") if isinstance(parent, dict) else None
    return group.value if isinstance(group, StrEnum) else FORMAT_TABLE.value


def _kind(name: str | None) -> LinkKind | None:
    """``--kind`` as a LinkKind (None: every kind)."""
    if name is None:
        return None
    try:
        return LinkKind(name.strip().lower())  # any case, as --fabric NDR is taken
    except ValueError:
        kinds = [kind.value for kind in LinkKind]
        # refused as an unknown link or system is, through the same suggestion: the close kinds,
        # else every kind ('scaleout' had been offered its kind before a list of all four)
        close = suggest(name, kinds)
        raise UnknownNameError("kind", name, close or kinds, close=bool(close)) from None


@links_app.callback(invoke_without_command=True)
@guard
def links(
    ctx: typer.Context,
    kind: Annotated[
        str | None,
        typer.Option("--kind", help=f"{', '.join(k.value for k in LinkKind)}."),
    ] = None,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """List the catalogue's links (bandwidth per direction)."""
    wanted = _kind(kind)
    if ctx.invoked_subcommand is not None:
        if wanted is not None:  # 'links --kind host show ndr' had shown ndr, exit 0 (review BL)
            raise CliUsageError("--kind filters the list; it does not apply to 'show' (drop it)")
        # `links --catalogue F --format json show X` applies F and the format too
        ctx.obj = {"catalogue": catalogue, "fmt": fmt}
        return
    cat = catalogue_of(catalogue)
    render_links([link for link in cat.links if wanted in (None, link.kind)], fmt)


@links_app.command("show")
@guard
def links_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Link id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: ShowFormatOpt = None,
) -> None:
    """Show every field of one link, with its sources and confidence."""
    render_link(
        find_link(catalogue_of(_group_catalogue(ctx, catalogue)), name), _group_format(ctx, fmt)
    )


@systems_app.callback(invoke_without_command=True)
@guard
def systems(
    ctx: typer.Context,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """List node/system presets."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"catalogue": catalogue, "fmt": fmt}
        return
    cat = catalogue_of(catalogue)
    render_systems(cat.systems, cat, fmt)


@systems_app.command("show")
@guard
def systems_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="System id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: ShowFormatOpt = None,
) -> None:
    """Show every field of one system preset."""
    cat = catalogue_of(_group_catalogue(ctx, catalogue))
    render_system(find_system(cat, name), cat, _group_format(ctx, fmt))


@storage_app.callback(invoke_without_command=True)
@guard
def storage(
    ctx: typer.Context,
    catalogue: CatalogueOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
) -> None:
    """List the storage entries ``ibcalc checkpoint --storage`` takes."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"catalogue": catalogue, "fmt": fmt}
        return
    render_storage_list(catalogue_of(catalogue).storage, fmt)


@storage_app.command("show")
@guard
def storage_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Storage id or alias.")],
    catalogue: CatalogueOpt = None,
    fmt: ShowFormatOpt = None,
) -> None:
    """Show every field of one storage entry, with its sources and confidence."""
    render_storage(
        find_storage(catalogue_of(_group_catalogue(ctx, catalogue)), name), _group_format(ctx, fmt)
    )


def register(app: typer.Typer) -> None:
    """Add the ``links``, ``systems`` and ``storage`` groups to ``app``."""
    app.add_typer(links_app, name="links")
    app.add_typer(systems_app, name="systems")
    app.add_typer(storage_app, name="storage")
