"""Files a command writes (``-o``, ``--plot``): checked before any work, never over an input.

:func:`run_inputs` lists every file a run reads (its arguments and options, and the files
``IBCALC_CATALOGUE`` and ``IBCALC_COST_PARAMS`` name); :func:`output_target` checks an output path
against them and against the file system (:func:`ibcalc.fileio.check_output`) before the
command computes anything, so a bad path leaves stdout empty; :func:`emit` writes text there
(atomically for a regular file, directly for ``/dev/null`` or ``/dev/stdout``) or prints it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import select
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO, TypeVar

from ibcalc.cli.boundary import say_wrapped
from ibcalc.fileio import OutputTarget, check_output, env_paths, file_key, write_text
from ibcalc.textsafe import printable

__all__ = ["StdoutError", "emit", "guarded_stdout", "once", "output_target", "run_inputs"]

#: A file as a command takes it: a path, or a name where ``-`` is standard input.
_F = TypeVar("_F", str, Path)

#: Environment variables that name input files (catalogue and cost-parameter overrides).
_INPUT_VARIABLES = ("IBCALC_CATALOGUE", "IBCALC_COST_PARAMS")


def once(files: Iterable[_F]) -> list[_F]:
    """``files`` with each file once (``a.yaml ./a.yaml`` counted one design as two; ``- -``
    read standard input twice, the second time empty), in order; a note on stderr names what
    was dropped, once for each way it was written (300 copies of one name had printed 299
    notes: review BN)."""
    seen: dict[str | Path, _F] = {}
    kept: list[_F] = []
    dropped: dict[tuple[str, str], int] = {}
    for path in files:
        key = file_key(path)
        if key in seen:
            pair = (printable(str(seen[key]), None), printable(str(path), None))
            dropped[pair] = dropped.get(pair, 0) + 1
            continue
        seen[key] = path
        kept.append(path)
    for (first, again), count in dropped.items():
        if first == again:
            same = "given again" if count == 1 else f"given {count + 1} times"
        else:
            same = f"the file {first} again" + ("" if count == 1 else f" ({count} times)")
        say_wrapped(f"note: {again} is {same}; read once", again, first)
    return kept


def run_inputs(
    *groups: Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None,
) -> list[str]:
    """Every file this run reads: the ``groups`` given (paths, lists of paths or None) and the
    files named by ``IBCALC_CATALOGUE`` and ``IBCALC_COST_PARAMS``."""
    files: list[str] = []
    for group in groups:
        if group is None:
            continue
        if isinstance(group, str | os.PathLike):
            files.append(os.fspath(group))
        else:
            files.extend(os.fspath(item) for item in group)
    for variable in _INPUT_VARIABLES:
        files.extend(env_paths(variable))
    return [f for f in files if f != "-"]


def output_target(
    path: str | Path | None, inputs: Iterable[str | os.PathLike[str]], *, what: str = "output"
) -> OutputTarget | None:
    """Check ``path`` (``None``: print to stdout) before any work; raise OutputError."""
    if path is None:
        return None
    return check_output(path, inputs=inputs, what=what)


def emit(text: str, target: OutputTarget | None) -> None:
    """Print ``text``, or write it to ``target`` (see :func:`ibcalc.fileio.write_output`)."""
    if target is None:
        if text:
            # sys.stdout itself (the entry point's guarded stream): click's echo may re-wrap the
            # stream under a non-UTF-8 locale, and a write error would then escape the guard
            sys.stdout.write(text)
            sys.stdout.flush()
        return
    write_text(target, text)


class StdoutError(OSError):
    """stdout cannot be written (a full device, an I/O error); a closed pipe stays a
    BrokenPipeError, which the error boundary turns into a quiet exit."""


#: Characters ibcalc prints that an ASCII stdout cannot take, spelled in ASCII.
_ASCII = str.maketrans(
    {
        **dict.fromkeys("▏▎▍▌▋▊▉█", "#"),
        "µ": "u",
        "\u00d7": "x",  # multiplication sign
        "—": "-",
        "\u2013": "-",  # en dash
        "…": "...",
        "≤": "<=",
        "≥": ">=",
        "≈": "~",
        "─": "-",
        "│": "|",
    }
)


def encodable(text: str, encoding: str) -> str:
    """``text`` as ``encoding`` can write it. A JSON document (text that parses as one, where
    only strings hold such characters) gets JSON's ``\\uXXXX`` escapes, so that it still reads
    back as the same data (the schema's time pattern has ``µs``); other text the characters
    ibcalc prints spelled in ASCII, any other replaced (``?``): a report line that only starts
    with a bracket (a file named ``[é]x.yaml``) is text."""
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        pass
    except LookupError:
        return text
    else:
        return text
    if text.lstrip().startswith(("{", "[")) and _is_json(text):
        return "".join(c if c.isascii() else json.dumps(c)[1:-1] for c in text)
    return text.translate(_ASCII).encode(encoding, "replace").decode(encoding)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class _GuardedStdout:
    """sys.stdout, with its write errors told apart from any other OSError of a command."""

    def __init__(self, stream: TextIO | _ClosedStdout) -> None:
        self._stream = stream
        #: True once a write found the reader gone (the toolkit may turn that into exit 1)
        self.broken = False

    def write(self, text: str) -> int:
        try:
            return self._write(text)
        except UnicodeEncodeError:
            # a stdout that cannot encode the output (PYTHONIOENCODING=ascii): the sweep's bars
            # and the schema's µ had ended the run with a traceback; rich draws its boxes in
            # ASCII there already, the rest is spelled out or replaced
            self._write(encodable(text, getattr(self._stream, "encoding", None) or "ascii"))
            return len(text)

    def _write(self, text: str) -> int:
        try:
            raw = getattr(self._stream, "buffer", None)
            if isinstance(raw, io.RawIOBase):
                return self._write_all(raw, text)
            return self._stream.write(text)
        except BrokenPipeError:
            self.broken = True
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from exc

    def _write_all(self, raw: io.RawIOBase, text: str) -> int:
        """Write ``text`` to an unbuffered stdout (``PYTHONUNBUFFERED=1``, ``python -u``) to the
        last byte. Its text layer passes one write to the file and drops what a short write
        leaves: a reader that goes away mid-write (``| head -1``) cut the output with no
        error, and the run ended with its own exit code, not 141. Written in a loop, the next
        write after a short one raises BrokenPipeError."""
        self._stream.flush()
        stream = self._stream
        view = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
        while view:
            count = raw.write(view)
            if count is None:  # a non-blocking stdout that would block: wait for it
                select.select([], [raw], [])
                continue
            view = view[count:]
        return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self.broken = True
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _ClosedStdout:
    """What sys.stdout is when the shell closed it (``>&-``, Python sets it to None): writing
    any text fails with EBADF, which the entry point reports in one line; a flush does nothing."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        if text:
            raise OSError(errno.EBADF, "stdout is closed")
        return 0

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def guarded_stdout() -> Iterator[_GuardedStdout]:
    """Route sys.stdout through a wrapper that raises :class:`StdoutError` for its own write
    errors, for the duration (the entry point's whole run); yield it (its ``broken`` says
    whether the reader went away)."""
    original = sys.stdout
    guarded = _GuardedStdout(original if original is not None else _ClosedStdout())
    sys.stdout = guarded
    try:
        yield guarded
    finally:
        sys.stdout = original
