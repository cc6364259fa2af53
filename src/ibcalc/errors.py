"""The exception tree of ibcalc.

Every error the library raises for bad input derives from :class:`IbcalcError`; each also inherits
the builtin that fits, so callers catching ``ValueError`` or ``KeyError`` keep working. The library
never prints or exits: the CLI is the single error boundary (DESIGN.md section 5).
"""

from __future__ import annotations

__all__ = [
    "AlgorithmNotApplicableError",
    "CatalogueError",
    "FabricError",
    "IbcalcError",
    "InputFileError",
    "LogParseError",
    "UnitError",
    "UnknownNameError",
    "ValidationProblem",
]


class IbcalcError(Exception):
    """Root of every error ibcalc raises on purpose."""


class UnitError(IbcalcError, ValueError):
    """A size, bandwidth or time that cannot be read or makes no sense."""


class UnknownNameError(IbcalcError, KeyError):
    """A link, system or algorithm name that is not known; carries the closest valid names."""

    def __init__(self, what: str, name: str, suggestions: list[str]) -> None:
        self.what = what
        self.name = name
        self.suggestions = suggestions
        super().__init__(name)

    def __str__(self) -> str:
        hint = f" (did you mean {', '.join(self.suggestions)}?)" if self.suggestions else ""
        return f"unknown {self.what} {self.name!r}{hint}"


class ValidationProblem:
    """One problem found in an input file, with its location when known."""

    __slots__ = ("col", "line", "message", "path")

    def __init__(self, path: str, line: int | None, col: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.col = col
        self.message = message

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}:{self.col or 1}: {self.message}"

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


class AlgorithmNotApplicableError(IbcalcError, ValueError):
    """A forced algorithm cannot run on this cluster or collective."""


class FabricError(IbcalcError, ValueError):
    """A fabric the switch radix cannot build, or a switch that does not fit the NICs."""


class LogParseError(IbcalcError, ValueError):
    """Text that is not an nccl-tests / rccl-tests log (or JSON result file) ibcalc can read.

    The message is one line (line breaks in it, e.g. from a file name, are escaped) and names
    the source, and the line where one applies.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))
