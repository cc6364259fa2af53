"""The one reading of the command line's counts and numbers: every refusal quotes what was typed.

Each int and float option of every command is read by :func:`whole` or :func:`real` (typer's
``parser=``), which get the text as typed; the toolkit's own conversion had refused ``-N 1.5``
without the value ("not a whole number"), and the library, handed the converted value, echoed
``1e400`` as ``inf``, ``-1`` as ``-1.0`` and a 26-digit count with commas (review EC 6). A
refusal is an option's value quoted and what is wrong with it, as the size, time and rate
options say theirs (``--size '1e400' is absurdly large``); the CLI's boundary puts the flag
before it (and the command's ``--help`` hint after it, as after every refusal of one option's
value: :func:`ibcalc.cli.boundary.with_help_hint`):

* ``--nodes '1.5' is not a whole number (write digits, e.g. 4)`` (``1e3`` is 1000, as ``4.0`` is 4)
* ``--cross-leaf '50%' is not a number (write the fraction in digits: 0.5 for 50%)``
* ``--tflops '1e400' is not a finite number (0.001..1000000)``
* ``--tp '0' is out of range (1..1000000)``

The range is the one of the field the option fills, read from the model that holds it
(:func:`field_range`), so the command line refuses what the library would, before anything is
converted, in the same words for every option. A size, time or rate option, read by
:mod:`ibcalc.units` (which quotes its own refusals), is held to its field's range by
:func:`measured`, as typed too: ``--part-size '1B' is out of range (at least 4 KiB)``.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable

import typer
from pydantic import BaseModel

from ibcalc.cli.boundary import NOT_PLAIN, CliUsageError
from ibcalc.patterns import lazy_pattern
from ibcalc.textsafe import shown

__all__ = [
    "field_count",
    "field_number",
    "field_range",
    "measured",
    "measured_option",
    "range_words",
    "real",
    "whole",
]

#: A whole number as the toolkit read one: ASCII digits with a sign, blanks around them, and a
#: point followed by zeros only (``4.0``), which it took as 4.
_WHOLE = lazy_pattern(r"\s*(?P<sign>[+-]?)(?P<digits>[0-9]+)(?:\.0+)?\s*", re.ASCII)
#: A whole number written with an exponent (``1e3``, ``2.5E1``): the mantissa's digits, its
#: fraction's and the power of ten.
_POWER = lazy_pattern(
    r"\s*(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?[eE](?P<power>[+-]?[0-9]+)\s*",
    re.ASCII,
)
#: A percentage where a fraction belongs (``50%``).
_PERCENT = lazy_pattern(r"\s*(?P<number>[0-9]*\.?[0-9]+)\s*%\s*", re.ASCII)
#: Most digits ``int()`` reads (Python's limit on converting text to int, CVE-2020-10735).
_MAX_DIGITS = 4300

Number = int | float


def field_range(model: type[BaseModel], field: str) -> tuple[Number | None, Number | None]:
    """The inclusive bounds (``ge``, ``le``) of ``model``'s ``field``: None where it has none."""
    metadata = model.model_fields[field].metadata
    low = next((m.ge for m in metadata if getattr(m, "ge", None) is not None), None)
    high = next((m.le for m in metadata if getattr(m, "le", None) is not None), None)
    return low, high


def _number(value: Number) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def range_words(
    low: Number | None, high: Number | None, show: Callable[[Number], str] = _number
) -> str:
    """``1..1000000``, ``at least 1`` or ``at most 3``: a range as --help and refusals state it,
    each bound written by ``show``."""
    if low is not None and high is not None:
        return f"{show(low)}..{show(high)}"
    if low is not None:
        return f"at least {show(low)}"
    if high is not None:
        return f"at most {show(high)}"
    return ""


def _refuse(raw: str, what: str) -> typer.BadParameter:
    """The refusal of ``raw``: quoted, then what is wrong (the boundary names the option)."""
    return typer.BadParameter(f"{shown(raw)} {what}")


def _plain(raw: str) -> bool:
    """Whether ``raw`` holds no digit separator (``1_000``) and no other script's digits, which
    Python's ``int()`` and ``float()`` read as they are."""
    return raw.isascii() and "_" not in raw


def _out_of_range(
    raw: str, low: Number | None, high: Number | None, note: str
) -> typer.BadParameter:
    return _refuse(raw, f"is out of range ({range_words(low, high)}{'; ' + note if note else ''})")


def _within(value: Number, low: Number | None, high: Number | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _with_power(raw: str) -> tuple[str, str] | None:
    """The sign and digits of the whole number ``raw`` writes with an exponent (``1e3``:
    ``("", "1000")``, ``2.50e1``: 25); None where it writes none (``1.5e0``, ``1e-3``, ``e3``).
    Read exactly, as a decimal; a number of more digits than :data:`_MAX_DIGITS`
    (``1e999999``) gives one digit more than any count takes, so that it is out of range, or
    too long, as the digits it stands for would be (and is never written out)."""
    match = _POWER().fullmatch(raw)
    if match is None or not (match["int"] or match["frac"]):
        return None
    sign = match["sign"]
    if not (match["int"] + (match["frac"] or "")).strip("0"):
        return sign, "0"
    try:
        value = decimal.Decimal(raw.strip()).copy_abs()  # exact: no context rounds it
    except decimal.InvalidOperation:
        # a power of ten past a decimal's (10^18 digits: 1e99999999999999999999), which no
        # mantissa typed brings back: a count too long, or a fraction of one
        return None if match["power"].startswith("-") else (sign, "1" + "0" * _MAX_DIGITS)
    if value.adjusted() >= _MAX_DIGITS:
        return sign, "1" + "0" * _MAX_DIGITS
    if value.adjusted() < 0 or value != value.to_integral_value():
        return None
    return sign, str(int(value))


#: The count a refusal of a count that is none shows as an example, where the range takes it.
_EXAMPLE_COUNT = 4


def _example(low: int | None, high: int | None) -> int:
    """A count to show in the refusal of a count that is none: :data:`_EXAMPLE_COUNT`, or the
    range's low end where it lies outside (``--zero`` takes 0..3)."""
    if _within(_EXAMPLE_COUNT, low, high):
        return _EXAMPLE_COUNT
    return low if low is not None else high if high is not None else _EXAMPLE_COUNT


def whole(
    low: int | None = None, high: int | None = None, *, note: str = ""
) -> Callable[[str | int], int]:
    """The parser of a count option: ASCII digits (a sign, ``4.0``, a power of ten that leaves
    a whole number: ``1e3``) from ``low`` to ``high`` (inclusive; None: no bound); ``note`` is
    added to the range a refusal states. The option's default, which the toolkit passes too,
    is taken as it is."""

    def parse(raw: str | int) -> int:
        if not isinstance(raw, str):
            return raw
        match = _WHOLE().fullmatch(raw)
        written = (match["sign"], match["digits"]) if match is not None else _with_power(raw)
        if written is None:
            if not _plain(raw):
                try:
                    float(raw)
                except ValueError:
                    pass
                else:
                    raise _refuse(raw, NOT_PLAIN)
            example = _example(low, high)
            raise _refuse(raw, f"is not a whole number (write digits, e.g. {example})")
        sign, digits = written
        digits = digits.lstrip("0") or "0"
        negative = sign == "-" and digits != "0"
        bound = low if negative else high
        if bound is not None and len(digits) > len(str(abs(bound))):
            # more digits than the bound has: out of range, unconverted (past 4,300 digits
            # int() reads none)
            raise _out_of_range(raw, low, high, note)
        if len(digits) > _MAX_DIGITS:
            raise _refuse(raw, "is a whole number of more digits than any count takes")
        value = -int(digits) if negative else int(digits)
        if not _within(value, low, high):
            raise _out_of_range(raw, low, high, note)
        return value

    return parse


def real(
    low: float | None = None, high: float | None = None, *, fraction: bool = False
) -> Callable[[str | float], float]:
    """The parser of a number option: a finite decimal number (``0.5``, ``1e3``) from ``low`` to
    ``high`` (inclusive). ``fraction``: the number is a share, so ``50%`` is answered with
    ``0.5``. The option's default is taken as it is."""

    def parse(raw: str | float) -> float:
        if not isinstance(raw, str):
            return raw
        try:
            value = float(raw)
        except ValueError:
            percent = _PERCENT().fullmatch(raw) if fraction else None
            if percent is not None:
                share = f"{float(percent['number']) / 100:g}"
                raise _refuse(
                    raw,
                    f"is not a number (write the fraction in digits: {share} for "
                    f"{percent['number']}%)",
                ) from None
            example = ", e.g. 0.5" if fraction else ""
            raise _refuse(raw, f"is not a number (write it in digits{example})") from None
        if not _plain(raw):
            raise _refuse(raw, NOT_PLAIN)
        if not math.isfinite(value):
            # NaN fails every bound and 1e400 reads as infinity: said as such, with the range
            words = range_words(low, high)
            raise _refuse(raw, "is not a finite number" + (f" ({words})" if words else ""))
        if not _within(value, low, high):
            raise _out_of_range(raw, low, high, "")
        # -0.0 is 0: its sign had been echoed ("--cross-leaf -0 ignored")
        return 0.0 if value == 0 else value

    return parse


def field_count(model: type[BaseModel], field: str) -> Callable[[str | int], int]:
    """The parser of an option that fills the count ``field`` of ``model``, in its range."""
    low, high = field_range(model, field)
    return whole(None if low is None else int(low), None if high is None else int(high))


def field_number(
    model: type[BaseModel], field: str, *, fraction: bool = False
) -> Callable[[str | float], float]:
    """The parser of an option that fills the number ``field`` of ``model``, in its range."""
    return real(*field_range(model, field), fraction=fraction)


def measured(
    flag: str,
    raw: str,
    value: float,
    *,
    field: tuple[type[BaseModel], str],
    show: Callable[[Number], str],
) -> float:
    """``value``, read from ``raw`` (a size, time or rate given to ``flag``), if it lies in the
    range of ``field`` (a model and one of its fields); else refused quoting ``raw`` with the
    bound it crosses, written by ``show``: ``--part-size '1B' is out of range (at least 4
    KiB)``, where the library, handed the bytes, had said '--part-size 1 B: must be at least 4
    KiB' (and '0.125 kB/s' for a typed '1kb/s')."""
    low, high = field_range(*field)
    if low is not None and value < low:
        words = range_words(low, None, show)
    elif high is not None and value > high:
        words = range_words(None, high, show)
    else:
        return value
    raise CliUsageError(f"{flag} {shown(raw)} is out of range ({words})")


def measured_option(
    flag: str,
    raw: str | None,
    parse: Callable[[str], float],
    *,
    field: tuple[type[BaseModel], str],
    show: Callable[[Number], str],
) -> float | None:
    """:func:`measured` of an option that may be left out: None where ``raw`` is, else ``raw``
    read by ``parse`` and held to ``field``'s range."""
    if raw is None:
        return None
    return measured(flag, raw, parse(raw), field=field, show=show)
