"""The ``ibcalc`` command line: parse options into library objects, call one library function,
hand the result to a renderer. The only package importing typer.

One module per command group (:mod:`~ibcalc.cli.estimate`, :mod:`~ibcalc.cli.catalogue`,
:mod:`~ibcalc.cli.design`, :mod:`~ibcalc.cli.gap`), the root app and entry point in
:mod:`~ibcalc.cli.app`, the shared options in :mod:`~ibcalc.cli.options`, and one error
boundary (:mod:`~ibcalc.cli.boundary`): every bad input becomes ``error: ...`` on stderr and exit
code 2; results go to stdout.
"""

from ibcalc.cli.app import app, main

__all__ = ["app", "main"]
