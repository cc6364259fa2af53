"""Show text that came from the user (a file, an option, a file name) safely in one line.

Anything echoed from input goes through :func:`shown` (quoted, like ``repr``) or
:func:`printable` (bare): control characters, escape sequences and the Unicode controls that
reorder text (bidi overrides) are written as ``\\x1b``, ``\\n``, ``\\u202e``, so a design name with
a newline cannot fake a report line and an escape code cannot repaint the terminal; and long
text is cut to :data:`MAX_ECHO` characters with ``...``, so a 100,000-character value is not
printed back in full. This module imports nothing of ibcalc but :mod:`ibcalc.patterns`
(errors.py uses it).
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from ibcalc.patterns import lazy_pattern

__all__ = [
    "MAX_ECHO",
    "closest",
    "closest_hint",
    "folded",
    "has_surrogate",
    "join_surrogate_pairs",
    "lookalike",
    "printable",
    "printable_ends",
    "quoted_names",
    "shown",
    "surrogates_escaped",
    "with_aside",
]

#: Longest piece of user text echoed in a message or a report line, in characters.
MAX_ECHO = 200

# C0 and C1 controls, DEL, and the format controls that reorder or hide text (bidi embeddings,
# overrides and isolates; the zero-width space and word joiner, which join nothing and hide in
# a name: "unknown link 'ndr'" had echoed 'ndr' + U+200B; zero-width joiners and non-joiners
# are left alone: emoji and scripts need them, and they do not move other text), and lone UTF-16
# surrogates (a file name's undecodable bytes, a "\ud800" escape), which no stream can encode;
# and the line and paragraph separators U+2028 and U+2029, which some viewers (CI log pages,
# editors) break a line at: a design name holding one had faked a report line there (review BN)
_UNSAFE = lazy_pattern(
    "[\x00-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, limit: int | None = MAX_ECHO) -> str:
    """``text`` (``str()`` of it) with control characters escaped, cut to ``limit`` characters
    (``None``: no cut) with ``...`` marking the cut."""
    value = str(text)
    cut = limit is not None and len(value) > limit
    if cut:
        assert limit is not None
        value = value[:limit]
    value = _UNSAFE().sub(_escape, value)
    return value + "..." if cut else value


def printable_ends(text: object, limit: int) -> str:
    """:func:`printable`, cut in the middle rather than at the end when longer than ``limit``:
    an error line's reason comes after the name it is about (a 100,000-character path had cut
    ``error: xxxx...`` before the reason)."""
    value = str(text)
    if len(value) <= limit:
        return printable(value, None)
    half = limit // 2
    left = len(value) - 2 * half
    head, tail = printable(value[:half], None), printable(value[-half:], None)
    return f"{head}...({left:,} characters)...{tail}"


def shown(value: object, limit: int | None = MAX_ECHO) -> str:
    """``repr``-like quoting of a value from the user: strings in quotes, escaped and cut to
    ``limit`` characters; other values as ``str()`` (cut too)."""
    if isinstance(value, str):
        return "'" + printable(value, limit).replace("'", "\\'") + "'"
    return printable(value, limit)


#: UTF-16 surrogates, which ``\uXXXX`` escapes (JSON's, YAML's) can write but are no characters.
_SURROGATE = lazy_pattern("[\ud800-\udfff]")
_PAIR = lazy_pattern("[\ud800-\udbff][\udc00-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a UTF-16 surrogate (paired or not)."""
    return _SURROGATE().search(text) is not None


def join_surrogate_pairs(text: str) -> str:
    """``text`` with each surrogate pair (``"\\ud83d\\ude00"``, as JSON writes a character
    beyond U+FFFF) made the character it stands for; lone surrogates stay."""
    if not has_surrogate(text):
        return text
    return _PAIR().sub(
        lambda m: m.group(0).encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text
    )


def surrogates_escaped(text: str) -> str:
    """:func:`join_surrogate_pairs`, then each lone surrogate written out as its escape
    (``\\ud800``): text any stream can print."""
    joined = join_surrogate_pairs(text)
    return _SURROGATE().sub(lambda m: f"\\u{ord(m.group(0)):04x}", joined)


def folded(name: str) -> str:
    """``name`` as hints read it: compatibility forms folded (full-width U+FF4E U+FF44 U+FF52
    is ``ndr``), stripped, in lower case."""
    return unicodedata.normalize("NFKC", name).strip().lower()


def closest(value: str, choices: list[str]) -> str | None:
    """The choice closest to ``value`` in any case (difflib ratio 0.6 or more, a display
    threshold: one likely name, not a guess), else None."""
    key = folded(value)
    if not key:  # an empty name is close to nothing
        return None
    lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(key, list(lower), n=1, cutoff=0.6)
    return lower[close[0]] if close else None


def closest_hint(value: str, choices: list[str]) -> str:
    """`` (did you mean ring?)`` for the :func:`closest` choice, else ``""``.

    For enumerations whose refusal already lists every choice: the hint only adds the likely
    one, the way unknown link and system names are answered, and in their form, the name bare
    (``--kind`` had offered 'scale-out' quoted where ``--system`` offers dgx-h100 bare). The
    choices are the program's own names, so none needs escaping."""
    near = closest(value, choices)
    return f" (did you mean {near}?)" if near is not None else ""


def with_aside(message: str, aside: str) -> str:
    """``message`` and ``aside`` (`` (see 'ibcalc gap --help')``, a :func:`closest_hint`, or
    ``""``), one parenthetical at its end: an ``aside`` after a message that already ends with
    one goes inside it, after ``"; "`` (``--tp '1' is out of range (2..1024; see 'ibcalc gap
    --help')``), or a space after a question (``(did you mean ring? see ...)``). Two in a row,
    ``(did you mean ring?) (see ...)``, had read as two afterthoughts."""
    if not (message.endswith(")") and aside.startswith(" (") and aside.endswith(")")):
        return message + aside
    depth = 0
    for start in range(len(message) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(message[start], 0)
        if depth == 0:
            break
    if depth or not message[:start].endswith(" "):  # unbalanced, or a call such as f(x)
        return message + aside
    joint = " " if message[start + 1 : -1].endswith("?") else "; "
    return f"{message[:-1]}{joint}{aside[2:]}"


def quoted_names(text: object) -> list[str]:
    """The names a toolkit's message quotes (``"'a', 'b' or 'c'"`` -> a, b, c)."""
    return re.findall(r"'([^']*)'", text) if isinstance(text, str) else []


def lookalike(text: str) -> str:
    """``: it holds U+0435 CYRILLIC SMALL LETTER IE, not ASCII`` for the first printable
    character of ``text`` outside ASCII, which no catalogue name or number holds: 'roce-400g'
    typed with a Cyrillic 'e' (U+0435) had been answered 'did you mean roce-400g', the same on
    screen, and a full-width '1GB' (U+FF11) 'not understood' (review EC 7); empty where there
    is none (control characters are shown escaped already)."""
    for char in text:
        if ord(char) > 126 and char.isprintable():
            name = unicodedata.name(char, "an unnamed character")
            return f": it holds U+{ord(char):04X} {name}, not ASCII"
    return ""
