"""The root ``ibcalc`` app, ``--version`` and the console entry point :func:`main`.

Each command group lives in its own module and adds itself with ``register(app)``.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from ibcalc import __version__
from ibcalc.cli import catalogue, design, estimate, gap, logs, workload
from ibcalc.cli.boundary import SIGPIPE_EXIT, boundary, quiet_stdout
from ibcalc.cli.output import StdoutError, guarded_stdout

__all__ = ["app", "main"]

app = typer.Typer(
    name="ibcalc",
    help="How fast can this cluster move these bytes? Interconnect catalogue and collective costs.",
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ibcalc {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """ibcalc: interconnect catalogue and analytic collective-cost calculator."""
    # `ibcalc` alone prints the help and succeeds (what no_args_is_help would do, without the
    # toolkit's help-as-an-error exception)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# Command groups, in the order `ibcalc --help` lists them (commands first, then groups):
estimate.register(app)  # allreduce ... sendrecv, sweep          (cli/estimate.py)
catalogue.register(app)  # links [show], systems [show]          (cli/catalogue.py)
design.register(app)  # check, schema, design show               (cli/design.py)
gap.register(app)  # gap                                         (cli/gap.py)
workload.register(app)  # train, infer, checkpoint               (cli/workload.py)
logs.register(app)  # nccl-check, calibrate                      (cli/logs.py)


#: Errors of a write to a device that is full or failing (never of reading an input: inputs
#: are read through ibcalc.fileio, which turns their errors into one-line refusals).
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run the app inside the error boundary; exit 2 on bad input.

    stdout that cannot be written ends the run like git does: a closed pipe quietly with
    :data:`~ibcalc.cli.boundary.SIGPIPE_EXIT`, a full device (``> /dev/full``) with ``error:
    cannot write output: No space left on device`` and exit 2; never a traceback.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    stdout = None
    try:
        with guarded_stdout() as stdout, boundary():
            # Without standalone mode typer raises usage errors (the boundary makes them one
            # line) and returns an Exit's code instead of exiting.
            code = app(args=args, prog_name="ibcalc", standalone_mode=False)
            sys.stdout.flush()  # here, not at exit, so that a write error is handled below
    except SystemExit:
        # the toolkit ends `--help | head` with exit 1 ("a requirement fails" for check)
        if stdout is not None and stdout.broken:
            quiet_stdout()
            sys.exit(SIGPIPE_EXIT)
        raise
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        quiet_stdout()
        sys.exit(SIGPIPE_EXIT)
    except OSError as exc:
        # StdoutError: a write to stdout failed; the errnos below come from a write that went
        # around the guard (the toolkit re-wraps stdout under some locales); the rest is a bug
        if not isinstance(exc, StdoutError) and exc.errno not in _WRITE_ERRNOS:
            raise
        quiet_stdout()
        typer.echo(f"error: cannot write output: {exc.strerror or exc}", err=True)
        sys.exit(2)
    if isinstance(code, int) and code != 0:
        sys.exit(code)
