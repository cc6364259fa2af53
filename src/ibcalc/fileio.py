"""Read input files and write output files without hanging, overreading or damaging anything.

Reading (:func:`read_regular`): only regular files are read (a FIFO would block for ever, a
device such as ``/dev/zero`` never ends); the size limit applies while reading, so a file that
grows, or a special file that slipped past the check, still costs at most the limit.

Writing (:func:`check_output` before any work, then :func:`write_output`): a regular file or a
new path is written through a temporary file in the same directory, flushed, and renamed over
the target, so a reader never sees half a file and a failure leaves the old one as it was. A
special file (``/dev/null``, ``/dev/stdout``, a pipe) is written directly: a rename would put a
plain file in place of the device node. A block device or a directory is refused, and so is an
output that is also an input of the same run (same resolved path or same inode). SIGTERM,
SIGHUP, SIGINT or an exception during the write removes the temporary file; a signal is then
delivered as it would have been.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from ibcalc.errors import OutputError
from ibcalc.textsafe import printable, shown
from ibcalc.units import format_size

#: a path as given: text or a Path
_P = TypeVar("_P")

__all__ = [
    "OutputTarget",
    "ReadRefused",
    "check_output",
    "env_paths",
    "file_key",
    "last_naming",
    "read_regular",
    "same_file",
    "signals_raise",
    "write_output",
    "write_text",
]


def env_paths(variable: str) -> list[str]:
    """The files an environment variable lists, separated by ``os.pathsep``; a blank entry
    names none (``IBCALC_CATALOGUE=' '`` had been read as a file named ' ': 'error:  : no such
    file', review BN)."""
    return [p for p in os.environ.get(variable, "").split(os.pathsep) if p.strip()]


def file_key(path: str | Path) -> Path | str:
    """What makes two namings of a file the same file: its resolved path (``a.yaml``,
    ``./a.yaml`` and a symlink to it are one); ``-`` (standard input) is itself, and a path
    that cannot be resolved (a symlink loop, a NUL byte in the name) is its text, left for the
    reader to report."""
    if str(path) == "-":
        return "-"
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return str(path)


def last_naming(files: Sequence[_P], *, path: Callable[[_P], str | Path] = str) -> list[_P]:
    """``files`` with each file once (the same file by any path), at its last naming, where it
    wins over the files before it as it did when loaded twice: one file given twice
    (``--catalogue`` twice, or by ``IBCALC_CATALOGUE`` and ``--catalogue``) had been loaded
    and named twice ('catalogue overrides loaded: s.yaml, s.yaml': review BO); kept at its
    first naming, a file named again after another had lost to it (review BQ). ``path`` gives
    an item's path where the items carry more (where each was named)."""
    seen: set[Path | str] = set()
    kept: list[_P] = []
    for item in reversed(files):
        key = file_key(path(item))
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept[::-1]


#: Directories whose entries are views of open files or devices (``/dev/stdout``,
#: ``/proc/self/fd/1``): written directly, never replaced.
_SPECIAL_ROOTS = ("/dev/", "/proc/")
_KIND = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class ReadRefused(Exception):
    """A file :func:`read_regular` will not read; ``reason`` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _kind(mode: int) -> str:
    return _KIND.get(stat.S_IFMT(mode), "not a regular file")


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Raises :class:`ReadRefused` (``no such file``, ``is a directory, not a file``, ``is a FIFO
    (named pipe), not a regular file``, ``file is larger than 64 MiB``, ``cannot read file:
    Permission denied`` ...). The file is opened without blocking (a FIFO with no writer would
    block the open itself), checked with ``fstat`` on the open descriptor (no race with a
    rename), and read up to ``max_bytes + 1`` bytes.
    """
    name = os.fspath(path)
    if not name:
        raise ReadRefused("the file name is empty")
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if name == "-":
            # 'check -' had said only "no such file": '-' means standard input elsewhere
            raise ReadRefused(
                "no such file: standard input ('-') is not read here; give the file's path"
            ) from None
        raise ReadRefused("no such file") from None
    except IsADirectoryError:  # pragma: no cover - Linux opens directories read-only
        raise ReadRefused("is a directory, not a file") from None
    except OSError as exc:
        raise ReadRefused(f"cannot read file: {exc.strerror or exc}") from None
    except ValueError:  # an embedded NUL byte
        raise ReadRefused("file name holds a NUL byte") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReadRefused("is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused(f"is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise ReadRefused(f"file is larger than {format_size(max_bytes)}")
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise ReadRefused(f"file is larger than {format_size(max_bytes)}")
        return b"".join(chunks)
    except OSError as exc:
        raise ReadRefused(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when ``a`` and ``b`` name one file: the same resolved path, or the same inode."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        sa, sb = Path(a).stat(), Path(b).stat()
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


@dataclass(frozen=True)
class OutputTarget:
    """Where :func:`write_output` writes: ``path`` as given, ``real`` the file the bytes reach
    (symbolic links followed), ``direct`` when it is a special file written in place."""

    path: Path
    real: Path
    direct: bool

    def __str__(self) -> str:
        return str(self.path)


def names_directory(name: str) -> bool:
    """Whether a file name, as given, names a directory: it ends in a separator, ``.`` or
    ``..`` ('o/x/', 'o/x/.'). ``Path()`` drops the slash and the dot, and a file 'o/x' had
    been written (reviews DH, DK), so the test reads the name before it becomes a Path."""
    return name.replace(os.sep, "/").rsplit("/", 1)[-1] in ("", ".", "..")


def directory_name_error(name: str) -> OutputError:
    """The refusal of an output name that :func:`names_directory`, one wording for every
    option that writes a file (check -o's; calibrate -o and --plot had said it in click's)."""
    return _fail(name, "it names a directory; give the file's name")


def _fail(path: object, what: str) -> OutputError:
    return OutputError(f"cannot write {printable(path)!s}: {what}")


def _name_max(directory: str) -> int:
    try:
        return int(os.pathconf(directory or ".", "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def _quoted(path: str) -> str:
    """``path`` escaped (:func:`printable`) in the quotes repr() would choose: double quotes
    around a name with an apostrophe, which single quotes had shown as ``it\\'s`` (review EE
    9)."""
    text = printable(path, None)
    return f'"{text}"' if "'" in text and '"' not in text else shown(path, None)


def check_output(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "output",
) -> OutputTarget:
    """Check that ``path`` can be written, before any work is done; return the target.

    Raises :class:`~ibcalc.errors.OutputError` (one line) for an empty or too long name, a
    missing or unwritable directory, a directory, a block device, or a file that is one of
    ``inputs`` (an input of the same run must never be overwritten by its output).
    """
    name = os.fspath(path)
    if not name.strip():
        raise OutputError(f"cannot write the {what}: the file name is empty")
    if "\x00" in name:
        raise _fail(name, "the file name holds a NUL byte")
    if name == "-":
        # '-o -' had written a file named '-' and printed nothing (schema, check): '-' reads
        # as standard output, which is not what a file option writes
        raise OutputError(
            f"cannot write the {what} to '-': this option writes a file; give its name "
            "(/dev/stdout for standard output; a file named '-' with its directory, $PWD/-)"
        )
    if names_directory(name):
        raise directory_name_error(name)
    given = Path(name)
    if not given.is_absolute():
        try:
            Path.cwd()
        except FileNotFoundError:
            # a cron or CI job whose directory was removed under it (rm -rf, git clean): the
            # relative name had ended in a FileNotFoundError traceback and exit 1, a failed
            # gate's code (a review)
            raise _fail(
                name, "the working directory no longer exists (give an absolute path)"
            ) from None
    parent = str(given.parent)
    limit = _name_max(parent if Path(parent).is_dir() else ".")
    if any(len(os.fsencode(part)) > limit for part in given.parts):
        raise _fail(name, f"a name in the path is longer than {limit} bytes")
    if len(os.fsencode(name)) >= 4096:
        raise _fail(name, "the path is longer than 4096 bytes")
    for source in inputs:
        if same_file(name, source):
            raise _fail(name, f"it is also an input of this run ({printable(source)})")
    try:
        info = given.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise _fail(name, exc.strerror or str(exc)) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise _fail(name, "it is a directory")
    if info is not None and stat.S_ISBLK(info.st_mode):
        raise _fail(name, "it is a block device")
    special_alias = str(given.absolute()).startswith(_SPECIAL_ROOTS)
    if info is not None and (not stat.S_ISREG(info.st_mode) or special_alias):
        # /dev/null, /dev/full, a pipe, a terminal, /dev/stdout redirected to a file
        if not os.access(name, os.W_OK):
            raise _fail(name, "permission denied")
        return OutputTarget(given, given, direct=True)
    real = Path(os.path.realpath(name))
    directory = real.parent
    if not directory.is_dir():
        if real.parent != given.absolute().parent:
            # a symlink (or a path through one) into a directory that does not exist
            # quoted once (repr of the escaped text had doubled each backslash: review EC 13)
            raise _fail(name, f"no directory {_quoted(str(directory))}, where the path leads")
        raise _fail(name, f"no directory {_quoted(str(Path(name).parent))}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _fail(
            name,
            f"the directory {printable(str(directory))!r} is not writable "
            "(the file is written next to it, then renamed)",
        )
    # permissions do not tell everything (root on a read-only file system, /proc): create and
    # remove the temporary file's sibling now, so that the write cannot fail for this later
    probe = directory / f".{real.name[:60]}.{secrets.token_hex(6)}.probe"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise _fail(name, exc.strerror or str(exc)) from None
    _remove(probe)
    return OutputTarget(given, real, direct=False)


_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)
)


class _Signalled(BaseException):
    """A termination signal arrived while a temporary file existed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP/SIGINT into an exception for the duration (main thread only), so the
    ``finally`` that removes a temporary file runs; the signal is re-delivered afterwards. A signal
    the process ignores stays ignored (``nohup ibcalc ...`` survives a hang-up mid-write)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        raise _Signalled(signum)

    previous = {}
    for signum in _SIGNALS:
        if signal.getsignal(signum) is signal.SIG_IGN:
            continue
        with contextlib.suppress(OSError, ValueError):
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    except _Signalled as exc:
        for signum, old in previous.items():
            signal.signal(signum, old)
        previous = {}
        signal.raise_signal(exc.signum)
        raise KeyboardInterrupt from None  # a handler that returned: stop here all the same
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _error(target: OutputTarget, exc: OSError) -> OutputError:
    return _fail(target.path, exc.strerror or str(exc))


def write_output(
    target: OutputTarget | str | os.PathLike[str], write: Callable[[IO[bytes]], None]
) -> None:
    """Write a file through ``write(handle)`` (a binary handle): atomically for a regular file
    or a new path, directly for a special file (see the module). Raises
    :class:`~ibcalc.errors.OutputError` on any failure (a full disk included); the target is
    then left as it was (a special file may have received part of the output)."""
    if not isinstance(target, OutputTarget):
        target = check_output(target)
    if target.direct:
        try:
            # no O_TRUNC: /dev/stdout may be a file the shell opened for appending; O_NONBLOCK:
            # a FIFO nobody reads fails at once (ENXIO) instead of blocking the open for ever
            flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(target.path, flags)
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    raise _fail(target.path, "it is a FIFO that no process reads") from None
                raise
            os.set_blocking(fd, True)
            with os.fdopen(fd, "wb") as handle:
                write(handle)
        except (BrokenPipeError, OutputError):
            raise  # a reader that went away (`-o /dev/stdout | head`): the CLI stops quietly
        except OSError as exc:
            raise _error(target, exc) from None
        return
    real = target.real
    tmp = real.with_name(f".{real.name[:60]}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    with signals_raise():
        try:
            with os.fdopen(os.open(tmp, flags, 0o666), "wb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileNotFoundError):
                mode = real.stat().st_mode
                if stat.S_ISREG(mode):
                    tmp.chmod(stat.S_IMODE(mode))
            tmp.replace(real)
        except OSError as exc:
            _remove(tmp)
            raise _error(target, exc) from None
        except BaseException:
            _remove(tmp)
            raise


def write_text(target: OutputTarget | str | os.PathLike[str], text: str) -> None:
    """:func:`write_output` of ``text`` encoded as UTF-8."""
    data = text.encode("utf-8")

    def write(handle: IO[bytes]) -> None:
        handle.write(data)

    write_output(target, write)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
