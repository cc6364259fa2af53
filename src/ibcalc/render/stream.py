"""A text stream that drops the spaces rich pads every table line with, up to its width.

A rich table fills each line to the console width; piped into a file or a diff that is
trailing whitespace on every line (``gap`` printed ~157 columns of mostly spaces). Wrapping the
console's file in :class:`TrimmedStream` removes them, before any style reset code that ends the
line on a terminal, and changes nothing else.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from rich.console import Console

__all__ = ["PipeConsole", "TrimmedStream", "trim_line"]

_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")


def trim_line(line: str) -> str:
    """``line`` without trailing spaces or tabs (a trailing SGR reset code is kept)."""
    return _TRAILING.sub(r"\1", line)


class TrimmedStream:
    """Wrap ``stream``: every complete line written loses its trailing spaces."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        """Write the complete lines of ``text`` trimmed; keep a partial last line pending."""
        data = self._pending + text
        head, newline, tail = data.rpartition("\n")
        self._pending = tail
        if newline:
            self._stream.write("\n".join(trim_line(line) for line in head.split("\n")) + "\n")
        return len(text)

    def flush(self) -> None:
        """Write a pending partial line as it is, then flush the wrapped stream."""
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class PipeConsole(Console):
    """A rich console that lets a closed stdout reach the CLI's error boundary.

    rich answers a BrokenPipeError with ``SystemExit(1)``, which ``ibcalc check`` documents as
    "a requirement fails"; the boundary ends such a run quietly with 141 (128 + SIGPIPE), as
    git does. Console markup is off: our text is never rich markup, and with it on, a bracket in
    a cell (``[busbw = algbw x 1.875]``, a design name) would be read as a style tag and lost.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        super().__init__(*args, **kwargs)

    def on_broken_pipe(self) -> None:
        """Stop writing and raise BrokenPipeError for the CLI to handle."""
        self.quiet = True
        raise BrokenPipeError
