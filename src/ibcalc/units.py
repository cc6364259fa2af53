"""Parse and format sizes, bandwidths and times: the only home of 1e9, 2**30 and 8.

Conventions (docs/architecture.md#units-and-conventions):

* sizes: ``10GB`` = 10 x 10^9 bytes, ``10GiB`` = 10 x 2^30 bytes, a bare number is bytes
  (``1e9`` included). A bare letter (``1M``, ``8G``) means what it means to nccl-tests'
  ``-b``/``-e``: a power of two (``8G`` = 8 x 2^30). A lower-case ``b`` means bits: ``10Gb`` is
  refused as a size with a hint, never silently read as bytes (pydantic's ``ByteSize`` would
  read it as ten gigabytes).
* bandwidths: ``400Gb/s``, ``400Gbps``, ``400 Gbit/s`` are bits per second; ``50GB/s``, ``50GBps``
  bytes per second. Internally bytes per second.
* times: ``5us``, ``5 µs``, ``2ms``, ``1s``, ``90ns``. Internally seconds.
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction

from ibcalc.errors import UnitError
from ibcalc.patterns import lazy_pattern
from ibcalc.textsafe import lookalike, shown

__all__ = [
    "BITS_PER_BYTE",
    "GB",
    "MAX_ENGINE_BYTES",
    "MAX_QUANTITY_CHARS",
    "MAX_SIZE_BYTES",
    "MIN_BANDWIDTH_BPS",
    "MIN_BANDWIDTH_TEXT",
    "NOT_PLAIN",
    "NS_BELOW_S",
    "UNSIGNED_NUMBER",
    "GiB",
    "article",
    "as_float",
    "fixed",
    "format_bandwidth",
    "format_count",
    "format_factor",
    "format_number",
    "format_oversubscription",
    "format_oversubscription_apart",
    "format_ratio",
    "format_share",
    "format_size",
    "format_slowdown",
    "format_time",
    "format_us",
    "gbps_from_Bps",
    "is_zero",
    "json_bytes",
    "memory_size",
    "parse_bandwidth",
    "parse_count",
    "parse_distance",
    "parse_size",
    "parse_time",
    "plural",
    "significant",
    "sizes_like",
    "written_in_bits",
]

BITS_PER_BYTE = 8
KB = 10**3
MB = 10**6
GB = 10**9
#: The slowest rate a link or a parameter may have: 1 MB/s (8 Mb/s), below a 10 Mb/s management
#: port (the catalogue's and the cost parameters' floor).
MIN_BANDWIDTH_BPS = 1e6
MIN_BANDWIDTH_TEXT = "1 MB/s (8 Mb/s)"
TB = 10**12
PB = 10**15
KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40
PiB = 2**50

#: Largest message size accepted: 1 PiB. Larger sizes are not a collective anyone runs.
MAX_SIZE_BYTES = float(PiB)
#: Largest size the library prices: 10^21 B. A caller's own sizes stop at ``MAX_SIZE_BYTES``
#: where they are read (``parse_size``), but a workload computes its own, and the model layer
#: takes up to 10^15 parameters (fp32 gradients of them: 4 x 10^15 B, past 1 PiB); 10^21 holds
#: those with room and keeps the cost arithmetic far from float overflow (1e308 B had made it
#: 'non-finite').
MAX_ENGINE_BYTES = 1e21
#: Largest bandwidth accepted (per direction): 1 PB/s.
MAX_BANDWIDTH_BPS = float(PB)
#: Largest time accepted: one year.
MAX_TIME_S = 365.0 * 24 * 3600

_SIZE_FACTORS: dict[str, int] = {
    "": 1,
    "b": 1,
    # a bare letter follows nccl-tests (-b 1M -e 8G): powers of two
    "k": KiB,
    "kb": KB,
    "m": MiB,
    "mb": MB,
    "g": GiB,
    "gb": GB,
    "t": TiB,
    "tb": TB,
    "p": PiB,
    "pb": PB,
    "ki": KiB,
    "kib": KiB,
    "mi": MiB,
    "mib": MiB,
    "gi": GiB,
    "gib": GiB,
    "ti": TiB,
    "tib": TiB,
    "pi": PiB,
    "pib": PiB,
}

_DECIMAL_PREFIX: dict[str, int] = {"": 1, "k": KB, "m": MB, "g": GB, "t": TB, "p": PB}

# YAML's spellings (.nan, .inf) included: a file's `size: .nan` is named NaN, not "not understood"
#: ASCII digits only (``\d`` would take any script's digits, which float() then reads).
#: An unsigned decimal number in ASCII digits (the one spelling every parser here accepts).
UNSIGNED_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER = rf"(?P<num>[+-]?{UNSIGNED_NUMBER}|[+-]?\.?(?:nan|inf|infinity))"
#: What is said of a number written with digit separators (``1_000``, ``1,000,000``) or another
#: script's digits, which Python's ``int()`` and ``float()`` would read as they are (or not).
NOT_PLAIN = "is not a plain number: write ASCII digits without separators"
#: A quantity written with commas between thousands (``1,000,000``, ``4,096 MiB``,
#: ``1,600 Gb/s``, ``1,500 us``).
_THOUSANDS = lazy_pattern(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?\s*[A-Za-z/]*")


def _refuse_separators(value: str, raw: str, what: str) -> None:
    """Refuse a quantity written with commas between thousands as :data:`NOT_PLAIN`, as
    ``1_000`` is refused, before it is called 'not understood' (sizes, rates, times, counts)."""
    if _THOUSANDS().fullmatch(value.strip()):
        raise UnitError(f"{what} {shown(raw)} {NOT_PLAIN}")


_SIZE_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-z]*)\s*$", re.IGNORECASE)
#: A rate's units that are bits (B, byte, bytes, Byte, Bytes are bytes).
_BIT_UNITS = ("b", "bit", "bits")
_BW_RE = re.compile(
    rf"^\s*{_NUMBER}\s*(?P<prefix>[kKmMgGtTpP]?)(?P<binary>i?)"
    r"(?P<unit>b|B|bit|bits|byte|bytes|Byte|Bytes)"
    r"\s*(?P<per>/\s*s|ps|/sec)\s*$"
)
#: NaN or an infinity written without a unit (``.nan``, ``-inf``).
_BARE_NONFINITE_RE = lazy_pattern(r"^\s*(?P<num>[+-]?\.?(?:nan|inf|infinity))\s*$", re.IGNORECASE)
_PREFIX_NAMES = {"G": "giga", "T": "tera", "P": "peta"}
_BINARY_NAMES = {"G": "gibi", "T": "tebi", "P": "pebi"}
_TIME_RE = re.compile(
    rf"^\s*{_NUMBER}\s*(?P<unit>ns|us|µs|μs|ms|s|nsec|usec|msec|sec|min|h)?\s*$", re.IGNORECASE
)
# sec is read, and so are its prefixed forms (10msec had been refused beside 10sec read)
_TIME_FACTORS = {
    "nsec": 1e-9,
    "usec": 1e-6,
    "msec": 1e-3,
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "min": 60.0,
    "h": 3600.0,
}


def as_float(value: float) -> float:
    """``value`` as a float, an integer beyond a float's range as an infinity of its sign:
    ``float(10**400)`` raises OverflowError, which had ended ``check`` on a design file's
    400-digit size, and a dozen options, in a traceback."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _number_text(value: float) -> str:
    """A number as :func:`_finite_number` reads it: an int as its digits (400 of them read as
    an infinity there, said to be absurdly large), a float as its repr."""
    return str(value) if isinstance(value, int) else repr(float(value))


def _finite_number(text: str, raw: str, what: str, limit: str = "") -> float:
    """``text`` as a finite float; ``limit`` (`` (the limit is 1 PiB)``) ends the error of one
    too large for a float, as it ends the error of one over the caller's limit."""
    try:
        value = float(re.sub(r"^([+-]?)\.(?=[A-Za-z])", r"\1", text))
    except ValueError as exc:  # pragma: no cover - the regex only lets numbers through
        raise UnitError(f"{what} {shown(raw)} is not a number") from exc
    if math.isnan(value):
        raise UnitError(f"{what} {shown(raw)} is not a number (NaN)")
    if math.isinf(value):
        # 1e400 or 5,000 digits overflow a float: written as a number, it is only absurdly large
        written_inf = re.search(r"inf", text, re.IGNORECASE) is not None
        if written_inf:
            raise UnitError(f"{what} {shown(raw)} is infinite")
        raise UnitError(f"{what} {shown(raw)} is absurdly large{limit}")
    return value


_SIZE_LIMIT = f" (the limit is {MAX_SIZE_BYTES / PiB:g} PiB)"
_BW_LIMIT = f" (the limit is {MAX_BANDWIDTH_BPS / PB:g} PB/s)"
_TIME_LIMIT = f" (the limit is {MAX_TIME_S / 3600:g} h, a year)"

#: Slack of the whole-byte test of :func:`parse_size`, in units in the last place: a decimal size
#: such as 33.3MB multiplies out to a whole number only up to a float's rounding (1 ulp here).
_WHOLE_BYTE_ULPS = 4


#: The longest text read as a size, rate, time or count ('1000000000000 GiB/s' is 19).
MAX_QUANTITY_CHARS = 100


def _as_input(value: object, raw: str, what: str) -> str | int | float:
    """``value`` as the parsers read it: text or a number (a NumPy scalar, a Fraction or a
    Decimal as a float); None or a list is refused (each had failed with TypeError inside the
    pattern match, and so had a Decimal)."""
    if isinstance(value, str):
        # no quantity is written in more: a bound before the patterns, whose spaces around
        # the unit backtrack quadratically ('1', 100,000 spaces, 'x', spaces, 'y' had taken
        # 19 s: review BR)
        if len(value) > MAX_QUANTITY_CHARS:
            raise UnitError(
                f"{what} {shown(raw)} is {len(value):,} characters long: no quantity is "
                f"written in more than {MAX_QUANTITY_CHARS}"
            )
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, numbers.Real | decimal.Decimal):
        return float(value)
    raise UnitError(f"{what} {shown(raw)} is not text or a number")


def parse_size(
    value: str | int | float, *, allow_zero: bool = False, what: str = "size", whole: bool = True
) -> float:
    """Return a size in bytes from ``10GB``, ``10GiB``, ``1e9``, ``4096`` or a number.

    Decimal prefixes are powers of 10, binary (``Ki``, ``Mi``, ``Gi`` ...) powers of 2. A
    lower-case ``b`` after a prefix (``10Gb``) means bits and is refused with a hint.
    Raises :class:`UnitError` for negative, zero (unless ``allow_zero``), NaN, infinite,
    unknown-suffix, absurdly large or fractional byte counts (``1.5``; with ``whole=False``,
    for a capacity such as 79.6GiB rather than a buffer, rounded to the byte instead). ``what``
    names the value in messages (the CLI passes its flag, ``--size``).
    """
    raw = str(value)
    if isinstance(value, bool):
        raise UnitError(f"{what} {shown(raw)} is not a number of bytes")
    value = _as_input(value, raw, what)
    if isinstance(value, int | float):
        number = _number_text(value)
        size = _finite_number(number, raw, what, _SIZE_LIMIT)
    else:
        match = _SIZE_RE.match(value)
        # a unit matched only by Unicode case folding (the Kelvin sign as k) is not one
        if match is None or not match["unit"].isascii():
            # a rate where a size belongs is said to be one (review BN: 'not understood')
            # '1,000,000' had been 'not understood', where '1_000' is named for what it is
            _refuse_separators(value, raw, what)
            raise UnitError(
                f"{what} {shown(raw)} is "
                + ("a rate, not a size" if _rate_form(value) else "not understood")
                + lookalike(raw)
                + " (use bytes, e.g. 4096, 1e9, 64MB, 10GiB)"
            )
        number = match["num"]
        size = _finite_number(number, raw, what, _SIZE_LIMIT)
        unit = match["unit"]
        if unit.endswith("b"):
            fixed = (unit[:1].upper() + unit[1:-1] + "B") if len(unit) > 1 else "B"
            raise UnitError(
                f"{what} {shown(raw)} uses a lower-case 'b', which means bits; "
                f"write {match['num']}{fixed} for bytes"
            )
        if unit.startswith("m") and unit.lower() in ("mb", "mib"):
            # lower-case m is milli (1mB); bare m stays MiB, as nccl-tests reads -b 1m
            fixed = "MiB" if unit.lower() == "mib" else "MB"
            raise UnitError(
                f"{what} {shown(raw)} has the prefix 'm' (milli); write {match['num']}{fixed}"
            )
        factor = _SIZE_FACTORS.get(unit.lower())
        if factor is None:
            if _rate_form(value):  # '10Gbps' (review BQ)
                raise UnitError(
                    f"{what} {shown(raw)} is a rate, not a size "
                    "(use bytes, e.g. 4096, 1e9, 64MB, 10GiB)"
                )
            raise UnitError(
                f"{what} {shown(raw)} has an unknown unit {shown(unit)} "
                "(use B, KB, MB, GB, TB, PB or KiB, MiB, GiB, TiB, PiB)"
            )
        size *= factor
    # 1e-400 is no zero, though a float holds it as one ('is zero' had been said of it)
    tiny = size == 0 and re.search(r"[1-9]", re.split(r"[eE]", number)[0]) is not None
    # -1e-400 is negative, though its float (-0.0) is not below 0 ('less than one byte' had
    # been said of it)
    if size < 0 or (tiny and number.lstrip().startswith("-")):
        raise UnitError(f"{what} {shown(raw)} is negative")
    if size == 0 and not allow_zero and not tiny:
        raise UnitError(f"{what} {shown(raw)} is zero; give at least one byte")
    if 0 < size < 1 or tiny:
        raise UnitError(f"{what} {shown(raw)} is less than one byte")
    if size > MAX_SIZE_BYTES:
        raise UnitError(f"{what} {shown(raw)} is absurdly large{_SIZE_LIMIT}")
    nearest = round(size)
    if whole and abs(size - nearest) > _WHOLE_BYTE_ULPS * math.ulp(size):
        # 1.5 (bytes), 1.0001KB or 0.3GiB (322122547.2 B): a buffer holds whole bytes
        raise UnitError(f"{what} {shown(raw)} is {size:.15g} B, not a whole number of bytes")
    return float(nearest)  # 33.3MB multiplies out to 33299999.999999996: float noise only


def parse_bandwidth(
    value: str | int | float, *, what: str = "bandwidth", capped: bool = True
) -> float:
    """Return a bandwidth in bytes per second from ``400Gb/s``, ``400 Gbit/s``, ``50GB/s``.

    A unit is required for strings: ``b``/``bit`` is bits, ``B``/``byte`` bytes, and the
    prefix is decimal (``k``, ``M``, ``G`` ...) or binary (``Ki``, ``Mi``, ``Gi`` ...: 50GiB/s
    is 50 x 2^30 bytes a second). A bare number is bytes per second. ``what`` names the value
    in messages. ``capped=False`` leaves out the 1 PB/s sanity limit, for a caller that refuses
    values past its own, narrower range in its own words (the catalogue's 100 TB/s: a link of
    1e30 GB/s had been refused under the 1 PB/s limit and one of 200 TB/s under the 100 TB/s
    range, two limits for one field; review EC 11). A number that overflows a float is still
    refused here.
    """
    raw = str(value)
    limit = _BW_LIMIT if capped else ""
    if isinstance(value, bool):
        raise UnitError(f"{what} {shown(raw)} is not a number")
    value = _as_input(value, raw, what)
    if isinstance(value, int | float):
        bw = _finite_number(_number_text(value), raw, what, limit)
    else:
        match = _BW_RE.match(value)
        bare = _BARE_NONFINITE_RE().match(value) if match is None else None
        if bare is not None:
            # NaN and the infinities are said as such, as a time's are (YAML's .nan and .inf
            # had been "not understood" here and "not a number (NaN)" as a time: review CK)
            _finite_number(bare["num"], raw, what, limit)
        if match is None:
            # a size where a rate belongs: say so ('1.6TB' had been 'not understood': review BN);
            # a size has a unit of bytes ('100' is a number, '10ms' a time: review BQ)
            sized = _SIZE_RE.match(value)
            size = (
                sized is not None and bool(sized["unit"]) and sized["unit"].lower() in _SIZE_FACTORS
            )
            # a bare number: said as one, zero as zero, as a size's is ('0' and '100' had been
            # 'not understood', where --size 0 'is zero': review EK 3)
            bare_number = sized is not None and not sized["unit"]
            zero = bare_number and _ZERO_TEXT.match(value) is not None
            _refuse_separators(value, raw, what)
            raise UnitError(
                f"{what} {shown(raw)} is "
                + (
                    "zero; give a rate above zero, with its unit"
                    if zero
                    else "a number without a unit"
                    if bare_number
                    else "a size, not a rate: a rate ends in /s or ps"
                    if size
                    else "not understood"
                )
                + lookalike(raw)
                + " (write bits as 400Gb/s or 400Gbps, bytes as 50GB/s)"
            )
        bw = _finite_number(match["num"], raw, what, limit)
        unit = match["unit"]
        binary, prefix = match["binary"], match["prefix"]
        if binary and not prefix:
            raise UnitError(f"{what} {shown(raw)} has 'i' without a prefix (write 50GiB/s)")
        if prefix == "m" and not binary:
            # lower-case m is milli: 40mb/s read as megabits was 5 MB/s from a typo
            bits = unit in _BIT_UNITS
            raise UnitError(
                f"{what} {shown(raw)} has the prefix 'm' (milli); write "
                f"{match['num']}{'Mb/s for megabits' if bits else 'MB/s for megabytes'}"
            )
        if prefix in ("g", "t", "p") and unit == "b":
            # all lower case: 50gb/s in a design file is as often meant as 50 GB/s as 50 Gb/s
            big, num = prefix.upper(), match["num"]
            name = (_BINARY_NAMES if binary else _PREFIX_NAMES)[big]
            raise UnitError(
                f"{what} {shown(raw)} is ambiguous in lower case; write {num}{big}{binary}b/s "
                f"for {name}bits or {num}{big}{binary}B/s for {name}bytes"
            )
        is_bits = unit in _BIT_UNITS  # B, byte, bytes, Byte, Bytes are bytes
        # 50GiB/s: a binary prefix, as sizes take it (2^30 bytes a second)
        multiplier = (
            1024 ** ("kmgtp".index(prefix.lower()) + 1)
            if binary
            else _DECIMAL_PREFIX[prefix.lower()]
        )
        bw = _exact(match["num"], multiplier, BITS_PER_BYTE if is_bits else 1)
    if bw == 0:
        raise UnitError(f"{what} {shown(raw)} is zero; give a rate above zero")
    if bw < 0:
        raise UnitError(f"{what} {shown(raw)} must be positive")
    if capped and bw > MAX_BANDWIDTH_BPS:
        raise UnitError(f"{what} {shown(raw)} is absurdly large{limit}")
    return bw


def written_in_bits(value: object) -> bool:
    """True where ``value`` is a rate written in bits (``400 Gb/s``, ``400Gbps``): a refusal
    that asks whether Gb/s was written as GB/s has nothing to ask of it (an NDR200 port written
    ``400 Gb/s`` had been asked that)."""
    match = _BW_RE.match(value) if isinstance(value, str) else None
    return match is not None and match["unit"] in _BIT_UNITS


def _rate_form(text: str) -> bool:
    """True where ``text`` is written as a rate (a number and a unit a second), whether or not
    its value would pass: the hint of a size's refusal. Its form, not the rate parser's verdict
    (asking that had lost the hint for '10gb/s', '2PB/s' or '0GB/s', and run a backtracking
    pattern twice on hostile text: review BR)."""
    match = _BW_RE.match(text)
    return match is not None and bool(match["unit"])


def parse_time(
    value: str | int | float,
    *,
    allow_zero: bool = True,
    unit_required: bool = False,
    what: str = "time",
) -> float:
    """Return a time in seconds from ``5us``, ``5 µs``, ``2ms``, ``1.5s`` or ``90ns``.

    A bare number is seconds, unless ``unit_required``: then a string without its unit is
    refused (on the command line ``--rtt 2`` could be meant as 2 ms). ``what`` names the value
    in messages (``--rtt``).
    """
    raw = str(value)
    if isinstance(value, bool):
        raise UnitError(f"{what} {shown(raw)} is not a number")
    value = _as_input(value, raw, what)
    if isinstance(value, int | float):
        seconds = _finite_number(_number_text(value), raw, what, _TIME_LIMIT)
    else:
        match = _TIME_RE.match(value)
        if match is None:
            _refuse_separators(value, raw, what)
            raise UnitError(
                f"{what} {shown(raw)} is not understood{lookalike(raw)} (use ns, us, ms, s, min "
                "or h)"
            )
        # NaN is refused as NaN before its missing unit is (--backward-time nan)
        seconds = _finite_number(match["num"], raw, what, _TIME_LIMIT)
        if unit_required and not match["unit"]:
            raise UnitError(f"{what} {shown(raw)} needs a unit (e.g. 2ms, 1.5s, 250us)")
        unit = match["unit"] or "s"
        factor = _TIME_FACTORS.get(unit.lower())
        if factor is None or "\N{GREEK CAPITAL LETTER MU}" in unit:
            # a letter the pattern matched only by Unicode case folding (a long s, a dotted
            # capital I: 5 m + U+017F had raised KeyError, a review; a Greek capital Mu, which
            # the design schema refuses, is neither micro nor the Latin M)
            raise UnitError(
                f"{what} {shown(raw)} is not understood{lookalike(raw)} (use ns, us, ms, s, min "
                "or h)"
            )
        if "M" in unit and unit.lower() != "min":
            # 10Ms or 100MS: a capital M is mega, so the case is what tells ms from Ms; other
            # case variants (5US, 1H, 2 MIN) are unambiguous and read as written in lower case
            raise UnitError(
                f"{what} {shown(raw)}: M is mega, not milli; write {match['num']}{unit.lower()}"
            )
        if factor != 1 or seconds == 0:
            seconds = (
                _exact(match["num"], multiplier=round(factor))
                if factor >= 1
                else _exact(match["num"], divisor=round(1 / factor))
            )
    if seconds < 0:
        raise UnitError(f"{what} {shown(raw)} is negative")
    if seconds == 0 and not allow_zero:
        raise UnitError(f"{what} {shown(raw)} must be positive")
    if seconds > MAX_TIME_S:
        # with its limit, as a size's and a rate's are (9000h had been only "absurdly large")
        raise UnitError(f"{what} {shown(raw)} is absurdly large{_TIME_LIMIT}")
    return seconds


def _exact(number: str, multiplier: int = 1, divisor: int = 1) -> float:
    """The decimal text ``number`` times ``multiplier`` over ``divisor``, worked out exactly and
    rounded to a float once, whatever the caller's decimal context: 20 us is 2e-05 s (20 x 1e-6
    is 1.9999999999999998e-05), 51.32505128205128 ms is the float that 0.05132505128205128 s
    reads as, 1.1 h is 3960 s and 1057.38 MB/s is 1057380000 B/s (the float of the text times
    the factor had been an ulp or two off, so one threshold passed in one unit and failed in
    another, and a requirement printed back in another unit carried the noise: reviews CC, CH,
    CJ)."""
    try:
        value = decimal.Decimal(number)
    except decimal.InvalidOperation:
        # a power of ten past a decimal's (1e-99999999999999999999): the float the text reads
        # as, 0 or infinity, is already the product's
        product = float(number) * multiplier / divisor
        nonzero = any(digit in "123456789" for digit in number.lower().partition("e")[0])
    else:
        # room for every digit of the product and quotient (a divisor here is 10^k or 8), so
        # that neither rounds
        digits = len(value.as_tuple().digits) + len(str(multiplier)) + len(str(divisor)) + 8
        exact = decimal.Context(prec=digits)
        product = float(exact.divide(exact.multiply(value, multiplier), divisor))
        nonzero = bool(value)
    if product == 0 and nonzero:
        # a number too small for a float is not zero: the least float of its sign, which every
        # range refuses as too small ('--rtt 1e-400ms' had been told it must be positive)
        return -math.ulp(0.0) if number.lstrip().startswith("-") else math.ulp(0.0)
    return product


def gbps_from_Bps(bw_Bps: float) -> float:
    """Return GB/s (10^9 bytes per second) from bytes per second."""
    return bw_Bps / GB


#: A zero written as text ("0", "0.0", "-0"): the one time that needs no unit.
_ZERO_TEXT = re.compile(r"^\s*[+-]?(?:0+\.?0*|\.0+)(?:[eE][+-]?[0-9]+)?\s*$")


def is_zero(value: object) -> bool:
    """Whether ``value`` is a zero a file may write without a unit: ``0``, ``0.0``, or such a
    number as text (a time of 0 is 0 in every unit; any other number needs its unit)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value == 0
    # (a bound before the pattern, which backtracks on a long run of zeros: review BS)
    return (
        isinstance(value, str)
        and len(value) <= MAX_QUANTITY_CHARS
        and _ZERO_TEXT.match(value) is not None
    )


@functools.lru_cache(maxsize=1024)
def memory_size(size_bytes: float, digits: int = 3) -> str:
    """A memory size in GiB (MiB, KiB below one), ``digits`` significant digits, trailing zeros
    kept (``75e9`` -> ``69.8 GiB``, ``80 x 2^30`` -> ``80.0 GiB``): the unit GPU memory comes in
    (a vendor's "80GB" of HBM is 80 GiB) and the one PyTorch reports. Every GPU memory and
    nccl-tests' size cap on it is said so: the estimates' note had read "about 25 GiB on
    dgx-h100's 80 GiB GPUs" (its own four figures), where train and infer read "80.0 GiB"."""
    if size_bytes < KiB:
        return format_size(size_bytes)
    unit, name = (
        (KiB, "KiB") if size_bytes < MiB else (MiB, "MiB") if size_bytes < GiB else (GiB, "GiB")
    )
    value = size_bytes / unit
    if value >= 10_000:
        return f"{value:,.0f} {name}"  # 16,763,846 GiB: a model far past any GPU reads as one
    # never in exponent form: 1350 GiB, not 1.35e+03 GiB; and 999.6 MiB, not 1e+03 MiB (the
    # integer digits are counted after rounding). Trailing zeros kept (#): 8.20 GiB beside
    # 8.15 GiB had read "8.2", 34.0 beside 14.9 "34"; a whole number loses the bare point
    text = f"{value:#.{max(digits, len(str(round(value))))}g}"
    return f"{text.rstrip('.')} {name}"


_BINARY_STEPS = ((PiB, "PiB"), (TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB"))
_DECIMAL_STEPS = ((PB, "PB"), (TB, "TB"), (GB, "GB"), (MB, "MB"), (KB, "kB"))

#: Whether a size exact in neither family prints its binary figure beside the decimal one: set
#: while an estimate of a size asked for in binary units is worked out (:func:`sizes_like`).
_BINARY_SIZES: ContextVar[bool] = ContextVar("_BINARY_SIZES", default=False)


def format_size(size_bytes: float, *, typed: bool = False) -> str:
    """Format a size with a decimal or binary unit, whichever is exact or shorter: a binary
    unit where the size is a whole or short fraction of one (``1.5 GiB``, as ``--size 1.5GiB``
    reads), else a decimal one it is exact in (``1.6 kB``); else a binary one it is exact in at
    five or six figures (``1000.5 GiB``, ``1.0625 GiB``: a size typed so had printed in the
    other family, ``1.074 TB``, ``1.141 GB``); else four significant digits of a decimal unit
    (``1.611 GB``), with the binary one beside it inside :func:`sizes_like` of a binary size
    (``4.116 GB (3.833 GiB)``: the decimal figure is the one a rate in GB/s divides). (Every whole
    byte count below 1 MB is exact in kB at six figures: decimal units stop at four, unless
    ``typed``, a size the user typed echoed back, which prints as typed: ``10.755 GB``, where
    four figures had read ``10.76 GB``.)"""
    if size_bytes < KB:
        return f"{size_bytes:g} B"
    for steps, limit, figures in _TYPED_FORMS if typed else _SIZE_FORMS:
        exact = _whole_in(size_bytes, steps, limit, figures)
        if exact is not None:
            return exact
    scaled = _scaled(size_bytes, _DECIMAL_STEPS, ".4g")
    decimal = f"{scaled[0]} {scaled[1]}" if scaled else f"{size_bytes:g} B"
    if _BINARY_SIZES.get():
        # the decimal figure first, which the derivation's GB/s rates divide (3.833 GiB at
        # 371 GB/s had read as 10.3 ms beside its 11.1 ms), the binary one of the size asked
        # for beside it
        binary = _scaled(size_bytes, _BINARY_STEPS, ".4g", 1024)
        if binary is not None:
            return f"{decimal} ({binary[0]} {binary[1]})"
    return decimal


#: The most figures a size prints exactly in a binary unit before it is rounded to four: a
#: size typed (``--size 1000.5GiB``) prints as it was typed.
_EXACT_FIGURES = 6
#: The units and figures :func:`format_size` tries in turn for a size exact in one.
_SIZE_FORMS: tuple[tuple[tuple[tuple[float, str], ...], int, int], ...] = (
    (_BINARY_STEPS, 1024, 4),
    (_DECIMAL_STEPS, 1000, 4),
    (_BINARY_STEPS, 1024, _EXACT_FIGURES),
)
#: And for a size typed: a decimal one as typed too.
_TYPED_FORMS = (*_SIZE_FORMS, (_DECIMAL_STEPS, 1000, _EXACT_FIGURES))


def _whole_in(
    size_bytes: float, steps: tuple[tuple[float, str], ...], limit: int, figures: int = 4
) -> str | None:
    """``size_bytes`` in the largest of ``steps`` (each ``limit`` times the next) of which it
    is a whole or short fraction (``figures`` at most: ``1.5 GiB``), else None."""
    for factor, name in steps:
        units = size_bytes / factor
        if 1 <= units < limit and float(f"{units:.{figures}g}") == units:
            return f"{units:g} {name}"
    return None


@contextmanager
def sizes_like(size_bytes: float) -> Iterator[None]:
    """While inside, a size exact in neither family prints with its figure in the family
    ``size_bytes`` prints in beside the decimal one (:func:`format_size`): an estimate of 4 GiB
    on 24 ranks had derived ``(n-1)/n x S = 4.116 GB per rank`` beside the 4 GiB asked for; it
    reads ``4.116 GB (3.833 GiB)``."""
    binary = _whole_in(size_bytes, _BINARY_STEPS, 1024, _EXACT_FIGURES) is not None
    token = _BINARY_SIZES.set(binary)
    try:
        yield
    finally:
        _BINARY_SIZES.reset(token)


def _scaled(
    value: float, steps: tuple[tuple[float, str], ...], spec: str, limit: float = 1000
) -> tuple[str, str] | None:
    """``value`` in the largest of ``steps`` (factor, name; largest first) it reaches, formatted
    with ``spec``, and that step's name; the next step up when rounding reaches ``limit``, the
    steps' ratio (999,997,440 B is 1 GB, not 1000 MB; 999.9999B is 1T; 1000.5 GiB stays 1000
    GiB, not 0.9771 TiB), unless it reads less than one there: 1023.6 GiB rounds to 1024 GiB
    but is 0.9996 TiB, which it had printed. None below the smallest step."""
    for i, (factor, name) in enumerate(steps):
        if value >= factor:
            text = format(value / factor, spec)
            if float(text) >= limit and i > 0:
                up = format(value / steps[i - 1][0], spec)
                if float(up) >= 1:
                    text, name = up, steps[i - 1][1]
            return text, name
    return None


def fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` digits after the point, a half rounded up (away from zero) as
    a reader rounds it: Gaudi 2's 21 x 12.5 = 262.5 GB/s is ``263`` and EFA v2's 11.25 GB/s
    ``11.3``, where a binary float's own rounding takes an exact tie to even (``262``, ``11.2``;
    review BL, and review BO found one table rounding so and the rest not)."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return f"{value:.{decimals}f}"
    # away from a tie, the float's own rounding gives the same digits, without Decimal (an
    # estimate formats thousands of figures for its explanations: Decimal had been a sixth of
    # estimate_on's time); only a value within float error of a tie takes the exact path
    scaled = abs(float(value)) * 10.0**decimals
    if abs(scaled - math.floor(scaled) - 0.5) > 1e-6 + scaled * 1e-12:
        return f"{float(value):.{decimals}f}"
    # (float(): a numpy float64 prints its type in repr, which Decimal refuses)
    # a context of its own: a caller's precision of 2 had made quantize raise (review CH)
    context = decimal.Context(prec=40, rounding=decimal.ROUND_HALF_UP)
    step = decimal.Decimal(1).scaleb(-decimals, context)
    exact = decimal.Decimal(repr(float(value))).quantize(step, context=context)
    return f"{exact:f}"


def format_bandwidth(bw_Bps: float, *, zeros: bool = True, past_gb: bool = False) -> str:
    """Format a bandwidth in GB/s (10^9 bytes per second), the nccl-tests unit. Three
    significant figures in every unit (``33.0 MB/s`` beside ``1.00 GB/s``; MB/s had dropped
    its trailing zeros, ``33 MB/s``), unless ``zeros=False`` drops them below 1 GB/s: a limit
    quoted in a message (``at least 1 MB/s``). ``past_gb``: from 999.5 GB/s in TB/s, and on to
    PB/s, as a checkpoint's bytes go on to TB and PB (a thousand nodes' NICs had read '48750
    GB/s', 100,000 prefixes' requests '490000 GB/s', 100,000 nodes' '4875 TB/s': reviews DN,
    DP); its table's rates and limits alike ('1.00 PB/s' had sat beside '1000000 GB/s')."""
    if past_gb and bw_Bps >= 999.5e12:
        return f"{format_number(bw_Bps / 1e15, zeros=True)} PB/s"
    if past_gb and bw_Bps >= 999.5e9:
        return f"{format_number(bw_Bps / 1e12, zeros=True)} TB/s"
    gbs = bw_Bps / GB
    # each unit and precision picked after rounding: 99.97 GB/s is 100 GB/s, not 100.0;
    # 999.7 MB/s is 1.00 GB/s, not 1000 MB/s
    if gbs >= 99.95:
        return f"{fixed(gbs, 0)} GB/s"
    if gbs >= 9.995:
        return f"{fixed(gbs, 1)} GB/s"
    if gbs >= 0.9995:
        return f"{fixed(gbs, 2)} GB/s"
    if bw_Bps / MB >= 0.9995 or bw_Bps <= 0:
        return f"{format_number(bw_Bps / MB, zeros=zeros)} MB/s"
    # below 1 MB/s in kB/s (a 1 kB/s target had read ">= 0.001 MB/s")
    return f"{format_number(bw_Bps / 1e3, zeros=zeros)} kB/s"


def format_us(value_us: float) -> str:
    """A time in microseconds as nccl-tests prints it: whole and thousands-separated from
    10,000 us (``46,779``), else up to six significant digits (``2497.1``); ``:g`` had printed
    a 16 GiB row's time as ``4.678e+04``. With an exponent from 10^9 us (17 minutes: no
    operation's time, and ``1e+30`` reads better than 31 digits)."""
    if 1e4 <= abs(value_us) < 1e9:
        return f"{value_us:,.0f}"
    return f"{value_us:g}"


def format_number(value: float, *, zeros: bool = False) -> str:
    """Three significant digits without an exponent (``0.947``, ``39.5``, ``1580``,
    ``0.000139``): what every printed figure with its unit uses. Values of 100 and more keep their
    integer digits. Trailing zeros are dropped (``0.5``, as %.3g writes it), unless ``zeros``
    keeps them (``64.0``, ``2.00``): times and ranges, which sit beside figures of three
    digits in one column or line (``21 ms`` had sat beside ``19.3 ms``: review DG)."""
    if value != value or value in (math.inf, -math.inf):
        return str(value)
    if abs(value) >= 99.95:
        return fixed(value, 0)
    if abs(value) < 1e-12:
        return "0"  # below any rate or time this tool prints: no false digits
    if abs(value) < 1e-3:
        # three significant digits in fixed point: a range of 0.000139-0.000782 MB/s, not 0-0
        digits = 2 - math.floor(math.log10(abs(value)))
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
        if abs(float(text)) < 1e-3:
            return text
        value = float(text)  # rounded up to a thousandth: print it as one
    # without trailing zeros (as %.3g writes them), unless kept: a worked figure that is round
    # sits beside three-figure ones in its column (a checkpoint's 2 s beside 1.44 s: review DQ)
    text = significant(value)
    return text.rstrip("0").rstrip(".") if "." in text and not zeros else text


def significant(value: float) -> str:
    """``value`` (finite, not 0) to three significant digits with :func:`fixed`'s half up,
    trailing zeros kept (``94.0``, ``1.00``) and whole digits from 100 up (``1580``); a carry
    into a new digit keeps three (9.995 is ``10.0``)."""
    magnitude = math.floor(math.log10(abs(value)))
    text = fixed(value, max(0, 2 - magnitude))
    if abs(float(text)) >= 10 ** (magnitude + 1):  # carried into a new digit
        text = fixed(value, max(0, 1 - magnitude))
    return text


#: Times below this print in ns (0.1 us after rounding to three digits): a 1 ns target had read
#: "<= 0.001 us"; 0.5 us stays in us, beside the us it adds to.
NS_BELOW_S = 0.09995e-6


def format_time(seconds: float, *, zeros: bool = True) -> str:
    """Format a time in the most readable of ns, us, ms, s and h (no exponent: ``4440 s``,
    ``41.4 h``, ``2.05 ns``), to three figures with their trailing zeros (``21.0 ms`` beside
    ``19.3 ms`` in one column: review DG; a round worked figure too, ``2.00 s``: review DQ);
    ``zeros=False`` drops them, for a constant echoed in prose as its source gives it (NCCL's
    ``hwLat`` of ``25 us``: review DP)."""
    # the unit is picked after rounding: 999.7 us prints as 1 ms, not 1000 us; below
    # NS_BELOW_S in ns; 0 stays "0 us"
    if 0 < seconds < NS_BELOW_S:
        return f"{format_number(seconds * 1e9, zeros=zeros)} ns"
    if seconds * 1e6 < 999.5:
        return f"{format_number(seconds * 1e6, zeros=zeros)} us"
    if seconds * 1e3 < 999.5:
        return f"{format_number(seconds * 1e3, zeros=zeros)} ms"
    if seconds < 9999.5:
        return f"{format_number(seconds, zeros=zeros)} s"
    # a checkpoint of petabytes over one NIC: 148936 s reads as 41.4 h
    return f"{format_number(seconds / 3600, zeros=zeros)} h"


def plural(count: int, noun: str) -> str:
    """``1 node``, ``2 nodes``, ``2 switches``: a count with its noun (regular plurals only:
    ``-es`` after s, x, ch and sh, ``-s`` otherwise; ``leaf`` is no regular noun)."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(('s', 'x', 'ch', 'sh')) else 's'}"


def article(count: int) -> str:
    """``a`` or ``an`` before ``count`` read aloud: an 8-GPU, an 11-GPU, an 18,000-GPU, a
    16-GPU (a resized preset's note had read 'a 8-GPU pcie4 domain')."""
    digits = str(abs(count))
    eleven = len(digits) % 3 == 2 and digits[:2] in ("11", "18")
    return "an" if digits.startswith("8") or eleven else "a"


def json_bytes(size_bytes: float) -> int | float:
    """A byte count as JSON prints it: an integer where it is whole (a size read or run as whole
    bytes), else the float it is. ``85899345920.0`` is refused by a consumer that reads the field
    as an integer (Go's int64, serde's u64), as every estimate's ``size_bytes`` is."""
    return int(size_bytes) if float(size_bytes).is_integer() else size_bytes


def format_ratio(value: float) -> str:
    """A ratio such as a bandwidth gap or a slowdown: three figures from 1 up (``8.96x``,
    ``11.3x``, ``1,250x``), two decimals below (``0.85x``), two figures under 0.1
    (``0.0012x``, not ``0.00x``). ``gap``, ``design show`` and ``check`` print the same figure;
    one decimal had printed MI300X's 448 / 50 = 8.96 as ``9.0x`` beside a ``<= 8.955x`` it
    failed by 0.06 % (a review)."""
    if value >= 99.95:
        return f"{value:,.0f}x"
    if value >= 9.995:
        return f"{value:.1f}x"
    if value >= 0.0995 or not 0 < value < math.inf:
        return f"{value:.2f}x"
    # two figures in fixed point: 0.0030x, 0.000019x (not 0.003x beside 0.0024x, nor 1.9e-05x),
    # the decimals chosen after rounding (0.00999 is 0.010x, not 0.0100x)
    rounded = float(f"{value:.2g}")
    return f"{rounded:.{1 - math.floor(math.log10(rounded))}f}x"


#: The largest denominator a down:up ratio prints as whole numbers with (4:3, 9:7; the
#: numerator under 100)
_RATIO_TERMS = 16


#: How many units in the last place a product of ratios may stray from the figures it is on
#: paper: 1.1 x 3 is 3.3000000000000003 in binary, one unit from 3.3
_PRODUCT_ULPS = 4


def _level(written: float, value: float) -> bool:
    """Whether ``value`` is ``written`` but for the rounding of a product of ratios (a few units
    in its last place)."""
    return abs(written - value) <= _PRODUCT_ULPS * math.ulp(value)


def format_oversubscription(value: float, digits: int = 3) -> str:
    """A down:up oversubscription ratio as every text output prints one: as few figures as
    write it exactly, up to ``digits`` (``2:1``, ``1.5:1``); else the ratio of small whole
    numbers it is to the bit (``4:3``, ``9:7``); else ``digits`` significant figures, trailing
    zeros kept so that a rounded ratio does not read as an exact one (``2.67:1``, 2.002 as
    ``2.00:1``). The same 4:3 had printed as ``1.33333:1``, ``1.33:1`` and ``4:3`` in one
    design's check and ``design show``. A value a product's rounding keeps a few units in the
    last place off such a form takes it: tiers of [1.1, 3] are 3.3:1 end to end, not ``3.30:1``
    (3.3000000000000003), which reads as a rounded ratio."""
    text = f"{value:.{digits}g}"
    if "e" in text or value >= 10**digits:  # 4096:1, not 4.1e+03:1
        return f"{value:.{0 if float(value).is_integer() else 1}f}:1"
    if not math.isfinite(value) or _level(float(text), value):
        return f"{text}:1"
    fraction = Fraction(value).limit_denominator(_RATIO_TERMS)
    if fraction.numerator < 100 and _level(fraction.numerator / fraction.denominator, value):
        return f"{fraction.numerator}:{fraction.denominator}"
    text = f"{value:#.{digits}g}"
    # (a fraction past the figures keeps one decimal: 100.4 is not 100:1)
    return (text if not text.endswith(".") else f"{value:.1f}") + ":1"


def format_oversubscription_apart(value: float, other: float, digits: int = 3) -> str:
    """``value`` as :func:`format_oversubscription` prints it, with as many more figures as
    print it apart from ``other`` (at the same figures) and on its side of ``other``: a leaf
    split of 18/17 beside the 1.06 asked is ``1.059:1``, not ``1.06:1``; an end-to-end 2.002
    beside a tier of 2 is ``2.002:1``, not ``2.00:1``, which reads level with it."""
    for figures in range(digits, 16):
        text = format_oversubscription(value, figures)
        down, up = text.split(":")
        if text != format_oversubscription(other, figures) and (
            float(down) / float(up) > other
        ) == (value > other):
            return text
    return f"{value!r}:1"  # pragma: no cover - 15 figures tell apart any two that differ


def format_near_one(value: float) -> str:
    """A ratio near 1 with the decimals that keep it from reading as 1 (``0.996x``,
    ``0.99973x``), else :func:`format_ratio`: where a sentence says one time is faster or
    slower than another, '1.00x' reads as a tie (a review)."""
    if value == 1 or not 0.995 <= value < 1.005:
        return format_ratio(value)
    digits = 3
    while f"{value:.{digits}f}" == f"{1:.{digits}f}" and digits < 9:
        digits += 1
    return f"{value:.{digits}f}x"


def format_slowdown(value: float) -> str:
    """A slowdown factor as the taper notes print it after an ``x`` (``x2``, ``x1.33``,
    ``x1.84``): three significant figures, more where a factor above 1 would read as 1. ``:.3g``
    had printed 1.0001 (``--oversubscription 1.0001``) and 1.0025 (2.5 x a cross-leaf 0.401)
    as ``x1 slower``. A rounded factor keeps its trailing zeros, as a down:up ratio does
    (:func:`format_oversubscription`): 2.002 is ``x2.00``, not ``x2``, which reads as exactly 2."""
    digits = 3
    text = f"{value:.{digits}g}"
    while value > 1 and float(text) <= 1 and digits < 17:
        digits += 1
        text = f"{value:.{digits}g}"
    if "e" in text or not math.isfinite(value) or _level(float(text), value):
        return text
    # rounded: its trailing zeros kept, as format_oversubscription keeps them (2.002 had read
    # 'x2 slower' beside 'oversubscription 2.00:1')
    return f"{value:#.{digits}g}".rstrip(".")


def format_factor(value: float) -> str:
    """nccl-tests' busbw factor as an estimate prints it (``busbw = algbw x 1.875``): four
    significant figures, more where they would read as a whole number the factor is not.
    ``:.4g`` had printed an all-to-all's (n - 1) / n on 800,000 ranks, 0.99999875, as ``1`` and
    an all-reduce's 1.9999975 there as ``2``; they are ``0.999999`` and ``1.999998``."""
    digits = 4
    text = f"{value:.{digits}g}"
    while float(text).is_integer() and float(text) != value and digits < 17:
        digits += 1
        text = f"{value:.{digits}g}"
    return text


def format_share(value: float, limits: tuple[float, ...] = (1.0,)) -> str:
    """A share of a whole (traffic crossing the uplinks, peers behind other leaves) as a
    percentage: whole from 10 % up (``84%``), two significant figures below (``3.1%``,
    ``0.78%``, ``0.40%``), so that a nonzero share never reads ``0%`` nor a small one as a
    round figure, and the decimals that keep a share below any of ``limits`` from reading as
    that limit: below 1, ``99.9%``, not ``100%``; below a sentence's own threshold (``--tflops``
    under 1 % of the peak, ``limits=(0.01, 1.0)``), ``0.999%``, not ``1.0%``. ``:.0%`` had
    printed 0.0078 as ``1%`` beside a ``3.12%`` and 0.004 as ``0%`` (a review)."""
    if not math.isfinite(value) or value == 0:
        return f"{value:.0%}"
    percent = value * 100
    magnitude = math.floor(math.log10(abs(percent)))
    decimals = 0
    if magnitude < 1:
        # two figures in fixed point, the decimals chosen after rounding (0.0999 % is 0.10 %,
        # not 0.100 %; 9.96 % is 10 %)
        decimals = 1 - magnitude
        if abs(float(fixed(percent, decimals))) >= 10 ** (magnitude + 1):  # carried a digit
            decimals = max(0, -magnitude)
        if abs(float(fixed(percent, decimals))) >= 10:
            decimals = 0
    while decimals < 9 and any(
        value < limit <= float(fixed(percent, decimals)) / 100 for limit in limits
    ):
        decimals += 1
    return f"{fixed(percent, decimals)}%"


_COUNT_RE = lazy_pattern(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-z]?)\s*$")
#: Count suffixes as model cards write parameter counts: 70B = 70 x 10^9 (decimal only).
_COUNT_FACTORS = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
#: Largest count accepted (10^15): beyond any model or token count a planner writes.
MAX_COUNT = 1e15


def format_count(count: float) -> str:
    """A count as :func:`parse_count` reads it (``70B``, ``350M``, ``1.5T``, ``8K``), to six
    significant digits."""
    scaled = _scaled(count, ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")), "g")
    return "".join(scaled) if scaled else f"{count:g}"


def parse_count(
    value: str | int | float, *, what: str = "count", limit: float = MAX_COUNT
) -> float:
    """Return a count from ``70B``, ``405b``, ``1.5T``, ``8e9`` or a number (decimal prefixes).

    ``B`` (or ``G``) is 10^9 as in "a 70B model", ``T`` 10^12, ``M`` 10^6, ``K`` 10^3; the count
    is not a size, so no byte unit is meant. Raises :class:`UnitError` for zero, negative, NaN,
    infinite, unknown-suffix or absurdly large values (past ``limit``, a power of ten).
    """
    raw = str(value)
    if isinstance(value, bool):
        raise UnitError(f"{what} {shown(raw)} is not a number")
    value = _as_input(value, raw, what)  # (the length bound: review BS)
    # the limit is said for a number that overflows too ('--params 1e400' had said only
    # "absurdly large", where 1e30 said "(the limit is 10^14)")
    limit_text = f" (the limit is 10^{round(math.log10(limit))})"
    if isinstance(value, int | float):
        count = _finite_number(_number_text(value), raw, what, limit_text)
    else:
        match = _COUNT_RE().match(value)
        if match is None:
            _refuse_separators(value, raw, what)
            raise UnitError(
                f"{what} {shown(raw)} is not understood{lookalike(raw)} (e.g. 70B, 1.5T, 8e9)"
            )
        count = _finite_number(match["num"], raw, what, limit_text)
        factor = _COUNT_FACTORS.get(match["unit"].lower())
        if factor is None:
            raise UnitError(f"{what} {shown(raw)} has an unknown suffix (use K, M, B or T)")
        count *= factor
    if count <= 0:
        raise UnitError(f"{what} {shown(raw)} must be positive")
    if count > limit:
        raise UnitError(f"{what} {shown(raw)} is absurdly large{limit_text}")
    return count


_DISTANCE_RE = lazy_pattern(rf"^\s*{_NUMBER}\s*(?P<unit>km|m|mi)\s*$", re.IGNORECASE)
_DISTANCE_FACTORS = {"m": 1.0, "km": 1e3, "mi": 1609.344}
#: Longest distance accepted: half the Earth's circumference is ~20,000 km; fibre routes are
#: longer than great circles, so allow twice that.
MAX_DISTANCE_M = 40_000e3


def parse_distance(value: str | int | float, *, what: str = "distance") -> float:
    """Return a distance in metres from ``800km``, ``800 km``, ``5000m`` or ``500mi``.

    A unit is required in strings (a bare ``800`` could be metres or kilometres); a bare number
    is metres. Raises :class:`UnitError` for negative, NaN, infinite or absurd values. ``what``
    names the value in messages.
    """
    raw = str(value)
    if isinstance(value, bool):
        raise UnitError(f"{what} {shown(raw)} is not a number")
    if isinstance(value, int | float):
        metres = _finite_number(_number_text(value), raw, what)
    else:
        match = _DISTANCE_RE().match(value)
        if match is None:
            # a unit given but not one of these (800nm, 800ft) is not told to give one (EC 10)
            raise UnitError(
                f"{what} {shown(raw)} is not understood{lookalike(raw)} (write km, m or mi: "
                "800km, 5000m, 500mi)"
            )
        if match["unit"] == "M":
            # 800M had been 800 metres, where an upper-case M is mega (8M is 8 MiB) in every
            # other quantity here (review DH)
            raise UnitError(
                f"{what} {shown(raw)} is not understood: M is mega elsewhere; write m for "
                "metres or km (800km, 5000m)"
            )
        metres = _finite_number(match["num"], raw, what)
        scale = _DISTANCE_FACTORS.get(match["unit"].lower())
        # matched by Unicode case folding only (a dotted capital I; the Kelvin sign as k)
        if scale is None or not match["unit"].isascii():
            raise UnitError(
                f"{what} {shown(raw)} is not understood{lookalike(raw)} (write km, m or mi: "
                "800km, 5000m, 500mi)"
            )
        metres *= scale
    if metres < 0:
        raise UnitError(f"{what} {shown(raw)} is negative")
    if metres > MAX_DISTANCE_M:
        raise UnitError(f"{what} {shown(raw)} is longer than any fibre route (40,000 km)")
    return metres
