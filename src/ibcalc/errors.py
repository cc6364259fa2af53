"""The exception tree of ibcalc.

Every error the library raises for bad input derives from :class:`IbcalcError`; each also inherits
the builtin that fits, so callers catching ``ValueError`` or ``KeyError`` keep working. The library
never prints or exits: the CLI is the single error boundary (docs/architecture.md, "Errors").

::

    IbcalcError
    +-- UnitError                  a size, bandwidth, time or dtype that cannot be read
    |   +-- SizeTooSmallError      a size nccl-tests would round to 0 bytes
    +-- UnknownNameError           a link, system, switch, collective ... name that is not known
    +-- FieldError                 bad input naming the field at fault ({field} marks)
    |   +-- ClusterError           a cluster description that cannot be built
    |   |   +-- WorkloadError      a model or parallel layout that cannot be costed on a cluster
    |   +-- AlgorithmNotApplicableError  a forced algorithm or protocol that cannot run here
    +-- FabricError                a fabric the switch radix cannot build
    +-- InputFileError             a file that cannot be read or does not validate (file:line:col)
    |   +-- CatalogueError         the link catalogue or a cost-parameter file
    |   +-- DesignError            a cluster-design file
    +-- PlotError                  a picture that cannot be made
    +-- OutputError                a result that cannot be written where it was asked to go
    +-- LogParseError              nccl-tests / rccl-tests output that cannot be read
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ibcalc.textsafe import lookalike, printable, shown

__all__ = [
    "AlgorithmNotApplicableError",
    "CatalogueError",
    "ClusterError",
    "DesignError",
    "FabricError",
    "FieldError",
    "IbcalcError",
    "InputFileError",
    "LogParseError",
    "OutputError",
    "PlotError",
    "SizeTooSmallError",
    "UnitError",
    "UnknownNameError",
    "ValidationProblem",
    "WorkloadError",
    "WrongTypeError",
    "entry_given",
    "expect_type",
    "fill_fields",
]


class IbcalcError(Exception):
    """Root of every error ibcalc raises on purpose."""


class UnitError(IbcalcError, ValueError):
    """A size, bandwidth or time that cannot be read or makes no sense."""


class SizeTooSmallError(UnitError):
    """A size that nccl-tests would round to 0 bytes for this collective and rank count."""


class WrongTypeError(IbcalcError, TypeError):
    """An argument of the wrong kind of object (a ClusterSpec where a resolved cluster is
    taken), named with the kind expected."""


def entry_given(value: object) -> str | None:
    """``"is given as a Link object: give its id, 'ndr'"`` where ``value``, given for a name,
    is a catalogue entry (a Link or System, as find_link and find_system return them), else
    None: its name had been echoed as 200 characters of its fields, called unknown (a library
    user's review)."""
    entry_id = getattr(value, "id", None)
    if isinstance(value, str) or not isinstance(entry_id, str) or not hasattr(value, "names"):
        return None
    return f"is given as a {type(value).__name__} object: give its id, {entry_id!r}"


def expect_type(value: object, kind: type, what: str, hint: str = "") -> None:
    """Raise :class:`WrongTypeError` unless ``value`` is a ``kind``: ``estimate_on`` given a
    ClusterSpec had failed with "'ClusterSpec' object has no attribute 'topology'"."""
    if not isinstance(value, kind):
        article = "an" if kind.__name__[:1] in "AEIOU" else "a"
        given = type(value)
        # numpy's bool is named bool too: 'must be a bool, not bool' (review CI)
        shown_type = (
            given.__name__
            if given.__module__ == "builtins" or given.__name__ != kind.__name__
            else f"{given.__module__}.{given.__qualname__}"
        )
        raise WrongTypeError(
            f"{what} must be {article} {kind.__name__}, not {shown_type}"
            + (f" ({hint})" if hint else "")
        )


class UnknownNameError(IbcalcError, KeyError):
    """A link, system or algorithm name that is not known; carries the closest valid names."""

    def __init__(
        self,
        what: str,
        name: str,
        suggestions: list[str],
        *,
        close: bool = True,
        listing: str | None = None,
        elsewhere: str | None = None,
    ) -> None:
        self.what = what
        self.name = name
        self.suggestions = suggestions
        #: False when ``suggestions`` are every known name, none of them close to ``name``
        self.close = close
        #: where the known names are listed, said when none is close (``ibcalc links``)
        self.listing = listing
        #: what the name is in another catalogue (``dgx-h100 is a system preset``), said instead
        #: of names close to it
        self.elsewhere = elsewhere
        super().__init__(name)

    def __reduce__(self) -> tuple[object, ...]:
        # pickled whole: a process pool's worker raising it had broken the pool (args alone
        # held the name, and unpickling called UnknownNameError(name); review CB)
        named = (self.what, self.name, self.suggestions, self.close, self.listing, self.elsewhere)
        # its attributes too: notes added to it (add_note) travel with it (review CD)
        return (_unknown_name, named, self.__dict__)

    def __str__(self) -> str:
        hint = ""
        if self.elsewhere:
            hint = f": {self.elsewhere}"
        elif self.suggestions:
            names = ", ".join(self.suggestions)
            hint = f" (did you mean {names}?)" if self.close else f" (known: {names})"
        elif self.listing:
            # '--fabric zzz' had said only "unknown link 'zzz'"
            hint = f" ({self.listing} lists the known ones)"
        return f"unknown {self.what} {shown(self.name)}{lookalike(self.name)}{hint}"


def _unknown_name(
    what: str,
    name: str,
    suggestions: list[str],
    close: bool,
    listing: str | None,
    elsewhere: str | None,
) -> UnknownNameError:
    """An :class:`UnknownNameError` rebuilt from its pickle."""
    return UnknownNameError(
        what, name, suggestions, close=close, listing=listing, elsewhere=elsewhere
    )


class ValidationProblem:
    """One problem found in an input file, with its location when known."""

    __slots__ = ("col", "line", "message", "path")

    def __init__(self, path: str, line: int | None, col: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.col = col
        self.message = message

    def __str__(self) -> str:
        path = printable(self.path, None)  # a file name may hold a newline or an escape code
        if not path:
            # no name to put before a colon (load_catalogue(''), load_design('', text=...)):
            # ': the file name is empty' and ':2:1: nodes: ...' had begun with one
            where = "" if self.line is None else f"line {self.line}, column {self.col or 1}: "
            return where + self.message
        if self.line is None:
            return f"{path}: {self.message}"
        return f"{path}:{self.line}:{self.col or 1}: {self.message}"

    def __repr__(self) -> str:
        return f"ValidationProblem({self!s})"


class InputFileError(IbcalcError, ValueError):
    """An input file (catalogue, design) that cannot be read or does not validate.

    ``problems`` holds every problem found, each with ``file:line:col`` where one exists.
    """

    def __init__(self, problems: list[ValidationProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))

    def __str__(self) -> str:
        first = str(self.problems[0]) if self.problems else "invalid input file"
        more = len(self.problems) - 1
        return first + (f" (+{more} more problem{'s' if more > 1 else ''})" if more > 0 else "")


class CatalogueError(InputFileError):
    """The link catalogue (built-in or a user override) is inconsistent."""


class FabricError(IbcalcError, ValueError):
    """A fabric the switch radix cannot build, or a switch that does not fit the NICs."""


class DesignError(InputFileError):
    """A cluster-design file that does not validate or names unknown things."""


class PlotError(IbcalcError, ValueError):
    """A plot cannot be made: bad target file name, unreadable measurements, write failure."""


class OutputError(IbcalcError, OSError):
    """A result cannot be written where asked (missing folder, special file, full disk)."""


class LogParseError(IbcalcError, ValueError):
    """Text that is not an nccl-tests / rccl-tests log (or JSON result file) ibcalc can read.

    The message is one line (line breaks in it, e.g. from a file name, are escaped) and names
    the source, and the line where one applies.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))


#: ``{field}`` marks in a :class:`ClusterError` message or an assumption: a field name in braces.
_FIELD_MARK = re.compile(r"\{([a-z][A-Za-z_]*)\}")


def fill_fields(template: str, name: Callable[[str], str] | Mapping[str, str]) -> str:
    """``template`` with each ``{field}`` mark replaced by the caller's name for that field.

    The library writes messages and assumptions about a cluster in terms of its fields
    (``{nodes}``); the CLI names them as flags (``--nodes``), the design checker as YAML keys.
    """
    expect_type(template, str, "template")
    if not isinstance(name, Mapping) and not callable(name):
        # None had failed as "'NoneType' object is not callable" (a review)
        raise WrongTypeError(
            f"name must be a mapping of field to name or a function, not {type(name).__name__}"
        )
    lookup: Callable[[str], str] = (lambda f: name.get(f, f)) if isinstance(name, Mapping) else name

    def replace(mark: re.Match[str]) -> str:
        text: object = lookup(mark.group(1))
        if not isinstance(text, str):
            # {"sharp": 3} had failed inside re.sub: "expected str instance, int found"
            raise WrongTypeError(
                f"name gives {type(text).__name__} for the field {mark.group(1)!r}, not a str"
            )
        return text

    return _FIELD_MARK.sub(replace, template)


class FieldError(IbcalcError, ValueError):
    """Bad input that names the field at fault, so each caller can say it in its own words.

    ``field`` names the parameter at fault (``nodes``, ``max_bytes`` ...), never a command-line
    flag or a YAML key: the CLI maps fields to its flags and the design checker to its keys and
    ``file:line:col``. The message may name other fields as ``{field}``; :meth:`render` replaces
    each mark with the caller's name for it, ``str()`` with the plain field name.

    ``value``: where the message begins with the field's mark and its value written in the
    library's words (a size in its unit, ``{part_bytes} 1 MB``), that text, so that a caller
    that has the value as the user wrote it can quote that instead (the CLI: ``--part-size
    '1MB'``). ``others``: the same for the other fields whose marks the message follows with
    their value, by field (``{hidden} 64 is smaller than {heads} 128``: ``{"heads": "128"}``),
    so that a refusal of two values quotes both.
    """

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        value: str | None = None,
        others: Mapping[str, str] | None = None,
    ) -> None:
        self.template = message
        self.field = field
        self.value = value
        self.others: dict[str, str] = dict(others or {})
        super().__init__(message)

    @property
    def fields(self) -> list[str]:
        """Every field the message names, the one at fault first."""
        named = _FIELD_MARK.findall(self.template)
        first = [self.field] if self.field else []
        return list(dict.fromkeys(first + named))

    def render(self, name: Callable[[str], str] | Mapping[str, str]) -> str:
        """The message with each ``{field}`` replaced by ``name(field)`` (or ``name[field]``)."""
        return fill_fields(self.template, name)

    def __str__(self) -> str:
        return self.render(lambda f: f)


class AlgorithmNotApplicableError(FieldError):
    """A forced algorithm cannot run on this cluster or collective (its reason may name the
    setting that would allow it as a ``{field}`` mark: ``{sharp}``, ``{nvls}``)."""


class ClusterError(FieldError):
    """A cluster description that cannot be built.

    ``field`` names the :class:`~ibcalc.cluster.spec.ClusterSpec` field at fault (``nodes``,
    ``inter``, ...); see :class:`FieldError` for the ``{field}`` marks.
    """


class WorkloadError(ClusterError):
    """A model, parallel layout or storage request that cannot be costed on the cluster.

    Like :class:`ClusterError` it names the field at fault (``tp``, ``layers``, ``storage`` ...),
    which the CLI renders as its flag.
    """
