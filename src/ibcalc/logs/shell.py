"""What a shell's own commands in a log do to the NCCL variables later commands inherit.

A log of several nccl-tests runs is often a shell session or a job script's output: an
``export NCCL_PROTO=Simple`` at the top reaches every later command of that shell, as does a
batch system's directive (``#SBATCH --export=ALL,NCCL_ALGO=Ring``, ``#PBS -v ...``) for the whole
job, while ``NCCL_ALGO=Ring ./all_reduce_perf`` (or ``mpirun -x NCCL_ALGO=Ring``) sets it for
that one command. :class:`ShellExports` follows the first kind line by line, as POSIX shells and
bash define them (the ``export``, ``unset``, ``declare``/``typeset`` builtins of bash's manual):

* ``export NAME=VALUE ...`` and ``declare -x NAME=VALUE`` export; ``export NAME`` exports a
  value the shell assigned before (``NAME=VALUE`` alone on its command); a later assignment to an
  exported name changes what is exported;
* ``unset NAME ...``, ``unset -v NAME``, ``export -n NAME`` and ``declare +x NAME`` drop it;
* words are read as the shell reads them (quotes removed, ``;``, ``&&``, ``|`` end a command);
  a line that ``set -x`` printed (``+ export 'NCCL_PROTO=^LL'``) is one command, its
  value whole (dash prints ``+ export NCCL_PROTO=allreduce:simple;broadcast:ll`` unquoted);
* commands in a subshell, ``( ... )`` or ``$( ... )``, or in a function's body are not
  followed (their exports do not reach the commands after them, or not unless the function
  runs); a group ``{ ...; }`` is the shell's own and is; a backquoted command is read as the
  shell's own;
* ``set -a`` (or ``set -o allexport``, bash's manual, The Set Builtin) exports every variable
  assigned after it until ``set +a``: ``set -a; NCCL_PROTO=Simple; set +a`` exports it, and so
  does ``set -a`` before a traced ``source`` of an environment file (``+ NCCL_PROTO=Simple``);
  an assignment before a command (``NCCL_PROTO=Simple ./all_reduce_perf``) stays that
  command's own either way.

Only names starting with ``NCCL_`` are kept. A pure function of the lines it is given: no I/O.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from itertools import islice

__all__ = [
    "MAX_LINE_CHARS",
    "ShellExports",
    "allexport_words",
    "commands",
    "is_binary",
    "shell_words",
]

#: a line a shell would run that may change what is exported: an export builtin, or a line
#: that starts with an assignment (``NCCL_PROTO=Simple``, which changes an exported value)
# (a prefilter: ``set -ab`` passes it and is read word by word; '[a-zA-Z]*a[a-zA-Z]*\b' had
# backtracked quadratically on 'set -aaa...a_', 47 s for a 100 KB line, a review)
_SET_A = r"(?:^|[\s;&|(+$>])set(?:\s+[^\s;&|]+){0,8}?\s+[-+](?:[a-zA-Z]*a|o\s+allexport\b)"
shell_words = re.compile(
    r"(?:^|[\s;&|(+$>])(?:export|unset|declare|typeset|readonly|local)\s"
    r"|(?:^[\s+$>]*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*|[;&|(]\s*)NCCL_[A-Z0-9_]+=|" + _SET_A
).search
#: a line that may switch ``set -a`` (allexport) on or off, ``set -euo pipefail -a`` too: read
#: as the shell's own even where it names no NCCL variable
allexport_words = re.compile(_SET_A).search
#: an nccl-tests binary run as a command: a word that is its path (``./build/all_reduce_perf``,
#: ``$NCCL_TESTS/build/all_reduce_perf``), also inside ``bash -c '... ./all_reduce_perf -b 8'``,
#: at the end or before an option; not a banner's ``echo "== all_reduce_perf =="``
_BINARY = re.compile(r"(?:^|[\s;&|(])(?:\S*/)?[a-z_]+_perf(?:_mpi)?(?=\s*$|\s+-|[;&|)'\"])")
#: an interactive prompt before a command a transcript shows: ``$ ``, ``> ``,
#: ``user@host:~/run$ ``, ``[root@host dir]# ``, ``root@c0ffee:/workspace# ``, ``bash-5.1# ``,
#: SUSE's and Cray EX's ``nid001234:~ # ``, with a conda or venv environment's ``(base) ``
#: before it; a bare ``# `` cannot be told from a comment and is read as one
_PROMPT = re.compile(
    r"\s*(?:\([\w.-]+\)\s+)?"
    r"(?:[$%>]|(?:\[[^\]\n]{1,80}\]|[\w.@:~/-])+[$%>#]|[\w.@-]+:[~/][\w.~/-]*\s#)\s+"
)
#: a run of shell punctuation split into its operators (shlex gives ``);`` as one token)
_OPERATOR = re.compile(r";;|&&|\|\||\|&|\(\)|[;&|()<>]")
#: a line longer than this is not a command a person typed: it is not followed (shlex builds a
#: word character by character, and a 2 MB word took half a minute, a review)
MAX_LINE_CHARS = 4096
#: reserved words and builtins that lead to the command they run (``if ...; then export ...``)
_LEADING = frozenset(
    {"if", "then", "elif", "else", "do", "while", "until", "!", "time", "builtin", "command"}
)
#: whether a word runs an nccl-tests binary (:data:`_BINARY`)
is_binary = _BINARY.search
_SEPARATORS = frozenset({";", ";;", "&", "&&", "|", "||", "|&"})
_OPEN = frozenset({"(", "{", "()"})  # shlex splits "$(" into "$" and "("
_CLOSE = frozenset({")", "}"})
_NAME = re.compile(r"NCCL_[A-Z0-9_]+$")
#: words read from one line: an export line is a few dozen; a longer line is not a command
_MAX_WORDS = 512
_MAX_EXPORTS = 64
#: lines one :class:`ShellExports` follows: a session sets a few dozen; more is not a session
#: (a log of a million ``export`` lines would take seconds to read word by word)
_MAX_LINES = 4096


def _value(raw: str) -> str:
    """A value as the command gives it, at most 120 characters."""
    return raw[:120]


class ShellExports:
    """The NCCL variables a shell has exported so far (:attr:`exports`, name -> (value, line)),
    updated by :meth:`line` for each line it runs, and by :meth:`directive` for a batch system's
    job-wide settings."""

    def __init__(self, exported: Mapping[str, tuple[str, int]] | None = None) -> None:
        self.exports: dict[str, tuple[str, int]] = dict(exported or {})
        self._assigned: dict[str, str] = {}  # shell variables not (yet) exported
        self._lines = 0
        self._allexport = False  # 'set -a': every assignment exports

    def _set(self, name: str, value: str, lineno: int) -> None:
        # a value the shell expands first ('export NCCL_PROTO=$PROTO' in a printed job script)
        # is kept as written: the name is exported, to a value the log does not show
        if len(self.exports) < _MAX_EXPORTS or name in self.exports:
            self.exports[name] = (_value(value), lineno)

    def assign(self, name: str, value: str, lineno: int) -> None:
        """``NAME=VALUE`` alone: a shell variable, and the exported value if it is exported."""
        if _NAME.match(name):
            self._assigned[name] = value
            if self._allexport or name in self.exports:
                self._set(name, value, lineno)

    def directive(self, assignments: list[tuple[str, str]], lineno: int) -> None:
        """A batch directive's ``NCCL_X=Y``: the whole job's environment."""
        for name, value in assignments:
            self._set(name, value, lineno)

    def line(
        self, body: str, lineno: int, at_binary: Callable[[], None] | None = None
    ) -> list[str]:
        """Follow the commands of one line (``body``: without any launcher prefix); return the
        words of the commands it did not consume (an nccl-tests command line, ``mpirun -x ...``;
        not a function body's) for the caller to read as that command's settings.
        ``at_binary`` is called when a command starting an nccl-tests binary is reached, before
        the commands after it."""
        self._lines += 1
        if self._lines > _MAX_LINES or len(body) > MAX_LINE_CHARS:
            return body.split()[:_MAX_WORDS]
        prompt = _PROMPT.match(body)
        if prompt is not None:
            body = body[prompt.end() :]
        words = _words(body)
        rest: list[str] = []
        command: list[str] = []
        # the groups open around the words, innermost last: "function" (a body that does not
        # run here), "subshell" (runs, but its exports end with it) or "group" ('{ ...; }', the
        # shell's own)
        groups: list[str] = []
        inside = {"function": 0, "subshell": 0, "group": 0}  # how many of each are open
        function = False  # '()' seen: the next group is a function's body
        # each open subshell's commands before a run of the binary, innermost last: the run's
        # settings where the binary runs in it or in one inside it ('(export NCCL_PROTO=Simple;
        # ./all_reduce_perf)'), dropped when it closes (a nested subshell's export had reached
        # the outer one's run, review BJ)
        pending: list[list[str]] = []
        for word in [*words, ";"]:
            if word in _SEPARATORS or word in _OPEN or word in _CLOSE:
                if inside["function"]:
                    pass  # never run here: neither followed nor the run's settings
                elif inside["subshell"]:
                    if pending:
                        pending[-1].extend(command)
                    if any(_BINARY.search(w) for w in command):
                        # a subshell's commands keep their settings where the binary runs in
                        # it; '(NCCL_PROTO=Simple)' alone sets nothing any run sees (review BI)
                        for level in pending:
                            rest.extend(level)
                            level.clear()
                        if at_binary is not None:
                            at_binary()  # '(cd build && ./all_reduce_perf)': the run starts
                else:
                    rest.extend(self._command(command, lineno, at_binary))
                command = []
                if word == "()":
                    function = True
                elif word in _OPEN:
                    kind = "function" if function else "group" if word == "{" else "subshell"
                    groups.append(kind)
                    inside[kind] += 1
                    function = False
                    if kind == "subshell":
                        pending.append([])
                elif word in _CLOSE and groups:
                    if groups[-1] == "subshell" and pending:
                        pending.pop()  # its commands end with it
                    inside[groups.pop()] -= 1
                continue
            command.append(word)
        return rest

    def _command(
        self, words: list[str], lineno: int, at_binary: Callable[[], None] | None
    ) -> list[str]:
        """Apply one simple command; return its words when it is not an export builtin."""
        if not words:
            return []
        while words and words[0] in _LEADING:
            words = words[1:]  # 'then export ...', 'builtin export ...'
        if not words:
            return []
        head, args = words[0], words[1:]
        if head == "export" or (head in ("declare", "typeset") and _flag(args, "x")):
            undo = head == "export" and _flag(args, "n")
            for word in args:
                name, eq, value = word.partition("=")
                if not _NAME.match(name):
                    continue
                if undo:
                    self.exports.pop(name, None)
                elif eq:
                    self._set(name, value, lineno)
                elif name in self._assigned:
                    self._set(name, self._assigned[name], lineno)
            return []
        if head in ("declare", "typeset") and _flag(args, "x", sign="+"):
            for word in args:  # 'declare +x NCCL_PROTO=Simple' un-exports it too (review BI)
                name, eq, value = word.partition("=")
                self.exports.pop(name, None)
                if eq and _NAME.match(name):
                    self._assigned[name] = value  # a shell variable still (review BJ)
            return []
        if head in ("declare", "typeset", "readonly", "local"):
            # an assignment as any other (exported under 'set -a', or where the name is)
            for word in args:
                name, eq, value = word.partition("=")
                if eq:
                    self.assign(name, value, lineno)
            return []
        if head == "set":
            self._options(args)
            return []
        if head == "unset":
            if not _flag(args, "f"):  # 'unset -f' removes functions, not variables
                for name in args:
                    self.exports.pop(name, None)
                    self._assigned.pop(name, None)
            return []
        if all("=" in w and not w.startswith("=") for w in words):
            # assignments alone set shell variables; an exported one changes what is exported
            for word in words:
                name, _, value = word.partition("=")
                self.assign(name, value, lineno)
        elif at_binary is not None and any(_BINARY.search(w) for w in words):
            at_binary()
        return words

    def _options(self, args: list[str]) -> None:
        """``set``'s options: ``-a``/``+a`` (also among others, ``-ax``) and ``-o``/``+o
        allexport`` switch exporting every assignment on/off; the first word that is no option
        (a positional parameter) or ``--`` ends them."""
        words = iter(args)
        for word in words:
            if word in ("-", "--") or not word.startswith(("-", "+")):
                return
            on = word[0] == "-"
            if "o" in word[1:]:  # '-o NAME' (also '-eo NAME'): the next word names an option
                if next(words, None) == "allexport":
                    self._allexport = on
                word = word.replace("o", "")
            if "a" in word[1:]:
                self._allexport = on


def commands(body: str) -> list[list[str]]:
    """The simple commands of a line as the shell reads them (a prompt before them dropped,
    quotes removed, a comment left out), each a list of its words."""
    prompt = _PROMPT.match(body)
    if prompt is not None:
        body = body[prompt.end() :]
    found: list[list[str]] = []
    command: list[str] = []
    for word in [*_words(body), ";"]:
        if word in _SEPARATORS or word in _OPEN or word in _CLOSE:
            if command:
                found.append(command)
            command = []
        else:
            command.append(word)
    return found


def _words(body: str) -> list[str]:
    """The words of a line as the shell reads them: quotes removed, each operator (``;``,
    ``&&``, ``|``, ``(``, ``)``) a word of its own; a line ``set -x`` printed (``+ export
    ...``, ``++`` in a command substitution) is one command, its values whole (dash prints
    ``NCCL_PROTO=a;b`` unquoted); a comment starts at a word beginning with ``#``, not inside
    one (``[root@host dir]#`` is no comment)."""
    trace = body.lstrip().startswith("+")
    lexer = shlex.shlex(body, posix=True, punctuation_chars=not trace)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        raw = list(islice(lexer, _MAX_WORDS))
    except ValueError:  # an unterminated quote: the words and operators whitespace leaves
        raw = re.findall(r"&&|\|\||[;|&()]|[^\s;|&()]+", body)[:_MAX_WORDS]
    words: list[str] = []
    for word in raw:
        if trace and not word.strip("+"):
            continue  # the trace's own '+'
        if not trace and word and all(c in ";&|()<>" for c in word):
            words.extend(_OPERATOR.findall(word[: 2 * _MAX_WORDS]))
        elif word.startswith("#") and not trace:
            break  # a comment to the end of the line
        else:
            words.append(word)
    return words[:_MAX_WORDS]


def _flag(args: list[str], letter: str, *, sign: str = "-") -> bool:
    """Whether the options before the names (``-x``, ``-rx``, ``+x``) include ``letter``."""
    for word in args:
        if not word.startswith(("-", "+")) or word in ("-", "--"):
            return False
        if word.startswith(sign) and letter in word[1:]:
            return True
    return False
