"""The start-up floor of ``benchmarks/speed.py``: the same kind of work with ibcalc's libraries.

    python benchmarks/floor.py --size 10GB

A one-command Typer app with one option, one small pydantic model validated, one small rich
table printed. The libraries are imported the normal way at the top, as any small tool would
import them; nothing is made artificially slow or fast. ibcalc's start-up is measured as a
ratio to this script's (the README's "How fast is it?": an estimate within 1.15x of it,
``--help`` and ``--version`` within 0.9x).
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False)


class Request(BaseModel):
    """What the one command is asked."""

    size: str = Field(min_length=1)
    nodes: int = Field(default=2, ge=1)


@app.command()
def main(size: Annotated[str, typer.Option("--size", help="Message size.")] = "1GB") -> None:
    """Validate the request and print it as a table."""
    request = Request.model_validate({"size": size, "nodes": 2})
    table = Table("field", "value")
    table.add_row("size", request.size)
    table.add_row("nodes", str(request.nodes))
    Console().print(table)


if __name__ == "__main__":
    app()
