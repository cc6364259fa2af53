"""The CLI's one error boundary: bad input becomes ``error: ...`` lines on stderr and exit code 2.

:func:`boundary` (a context manager) and :func:`guard` (the same as a decorator, on every command)
turn

* a :class:`~ibcalc.errors.FieldError` (a :class:`~ibcalc.errors.ClusterError` among them) into
  one line naming fields as flags (:data:`FIELD_FLAGS`),
* an :class:`~ibcalc.errors.InputFileError` into one line per problem (``file:line:col: ...``),
* any other :class:`~ibcalc.errors.IbcalcError` into one line,
* a usage error of the toolkit (unknown option, missing argument, bad value, no such command)
  into one line ``error: ... (see 'ibcalc X --help')``,
* and, while a command runs (:func:`running`), a refusal of one of its options' values raised
  in the command (a line that starts with the option and its value quoted: ``--size '10Gb'
  uses ...``, ``--gpu-memory '0.9GB' is out of range ...``) into that line with the same hint
  (:func:`with_help_hint`), so that a value is refused in one form whether the option's parser
  or the command judges it (review EK 4; the root group's own check before the command runs,
  ``cli.app.refuse_unplain_numbers``, adds it too); a refusal of options given together (``give
  --distance or --rtt, not both``), which quotes no one value, keeps its words,
* a closed stdout (``ibcalc links | head -1``) into a quiet exit with :data:`SIGPIPE_EXIT`, as
  git ends (its shell sees 128 + SIGPIPE), never the exit code 1 that ``check`` gives a failing
  requirement.

Every line is passed through :func:`ibcalc.textsafe.printable`: control characters from a file
name or a value are shown escaped, so an error is one line whatever the input held.

Usage errors happen while typer parses, before a command runs, so only the boundary around the
whole app (:func:`ibcalc.cli.app.main`) sees them; the root group names the command it runs
(:func:`running`) for the refusals raised inside it, whose own boundary (:func:`guard`) has no
context of the toolkit's to read the command's path from. Usage errors are caught as
``typer.TyperException``, the public root of every error typer raises (typer 0.2x keeps its
toolkit in a private module); the command path of their hint comes from the error's documented
``ctx.command_path``.
tests/cli/test_boundary.py fails loudly if either moves. Of a message of the library's, only
:func:`with_help_hint` reads anything: whether it starts with one of the command's options and a
quoted value.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from enum import Enum
from typing import NamedTuple, NoReturn, ParamSpec, TextIO, TypeVar

import typer

from ibcalc.errors import FieldError, IbcalcError, InputFileError
from ibcalc.patterns import lazy_pattern
from ibcalc.textsafe import (
    closest,
    closest_hint,
    folded,
    printable_ends,
    quoted_names,
    shown,
    with_aside,
)
from ibcalc.units import NOT_PLAIN

__all__ = [
    "FIELD_FLAGS",
    "MAX_ERROR_LINE",
    "NOT_PLAIN",
    "SIGPIPE_EXIT",
    "CliUsageError",
    "as_typed",
    "boundary",
    "guard",
    "quiet_stdout",
    "running",
    "say",
    "say_wrapped",
    "usage_line",
    "with_help_hint",
]

#: Exit code when the reader of stdout went away: 128 + SIGPIPE (13), what a shell reports for
#: git or cat in ``... | head -1``.
SIGPIPE_EXIT = 141
#: Longest ``error:`` line printed (a safety net: values are already cut where they are echoed).
MAX_ERROR_LINE = 2000
#: Most error lines one refusal prints (the last says how many more there are).
MAX_ERROR_LINES = 20

P = ParamSpec("P")
R = TypeVar("R")

#: How the CLI names each field the library's messages and assumptions mark as ``{field}``: every
#: :class:`~ibcalc.cluster.spec.ClusterSpec` field, the size of the collective commands, the
#: parameters of the gap and sweep, and the model, layout and storage fields of the workload
#: commands. The options are declared with these flags (:mod:`ibcalc.cli.options`), so the two
#: agree. ``wan_latency_s`` is derived from ``--distance`` or ``--rtt``; it is named by the first (a
#: message about it that must tell the two apart names the flag itself,
#: :func:`ibcalc.cli.options.cluster_options`).
FIELD_FLAGS: dict[str, str] = {
    "algorithm": "--algo",
    "protocol": "--proto",
    "nodes": "--nodes",
    "collective": "--collective",
    "gpus_per_node": "--gpus-per-node",
    "nics_per_node": "--nics-per-node",
    "intra": "--intra",
    "inter": "--inter",
    "system": "--system",
    "host_pcie": "--host-pcie",
    "host_cpu": "--host-cpu",
    "sharp": "--sharp",
    "nvls": "--nvls",
    "scale_up_domain": "--scale-up-domain",
    "oversubscription": "--oversubscription",
    "cross_leaf_fraction": "--cross-leaf",
    "neighbour_cross_leaf_fraction": "--cross-leaf-neighbour",
    "unaligned_cross_leaf_fraction": "--cross-leaf-unaligned",
    "leaf_group_nodes": "--leaf-group-nodes",
    "sites": "--sites",
    "wan": "--wan",
    "wan_links": "--wan-links",
    "gpus_per_process": "--gpus-per-process",
    "wan_latency_s": "--distance",
    "tp": "--tp",
    "tp_size_bytes": "--tp-size",
    "size_bytes": "--size",
    "min_bytes": "--minbytes",
    "max_bytes": "--maxbytes",
    "factor": "--stepfactor",
    "step_bytes": "--stepbytes",
    # workload: the layout, the model, the storage
    "pp": "--pp",
    "dp": "--dp",
    "ep": "--ep",
    "cp": "--cp",
    "model": "--model",
    "params": "--params",
    "layers": "--layers",
    "hidden": "--hidden",
    "heads": "--heads",
    "kv_heads": "--kv-heads",
    "vocab": "--vocab",
    "head_dim": "--head-dim",
    "seq_len": "--seq-len",
    "experts": "--experts",
    "top_k": "--top-k",
    "storage": "--storage",
    "client_link": "--storage-link",
    "nccl_version": "--nccl-version",
    # workload: the job (TrainSpec, InferSpec, CheckpointSpec)
    "zero": "--zero",
    "sequence_parallel": "--sequence-parallel",
    "micro_batch": "--micro-batch",
    "microbatches": "--microbatches",
    "virtual_stages": "--virtual-stages",
    "compare": "--compare",
    "global_batch": "--global-batch",
    "backward_s": "--backward-time",
    "tflops": "--tflops",
    "recompute": "--recompute",
    "weights_dtype": "--weights-dtype",
    "act_dtype": "--dtype",
    "grad_dtype": "--grad-dtype",
    "kv_dtype": "--kv-dtype",
    "gpu_memory": "--gpu-memory",
    "gpu_memory_bytes": "--gpu-memory",
    "hierarchical": "--hierarchical",
    "batch": "--batch",
    "prompt_tokens": "--prompt",
    "output_tokens": "--output-tokens",
    "kv_nics": "--kv-nics",
    "disaggregated": "--disaggregated",
    "storage_units": "--storage-units",
    "client_nics": "--storage-nics",
    "replicas": "--replicas",
    "fabric_Bps": "--storage-fabric",
    "part_bytes": "--part-size",
    "prefixes": "--prefixes",
}


class CliUsageError(IbcalcError):
    """Input only the command line can judge: options that do not go together."""


class _Running(NamedTuple):
    """The command running: its path (``ibcalc sweep``), its options' spellings, the aliases
    typed for them by the option's first long name (``{"--inter": "--fabric"}``), the text
    typed for each option given a value, by long name (``{"--part-size": "1MB"}``), and for
    each argument, by the name its help gives it (``{"name": "ndrr"}``)."""

    path: str
    options: frozenset[str]
    aliases: Mapping[str, str]
    values: Mapping[str, str]
    arguments: Mapping[str, str]


#: Set by the root group while a command runs (:func:`running`), read by :func:`_fail`,
#: :func:`as_typed` and :func:`_field_line`.
_RUNNING: ContextVar[_Running | None] = ContextVar("_RUNNING", default=None)


@contextmanager
def running(
    path: str,
    options: Collection[str],
    aliases: Mapping[str, str] | None = None,
    values: Mapping[str, str] | None = None,
    arguments: Mapping[str, str] | None = None,
) -> Iterator[None]:
    """While the command ``path`` (``ibcalc sweep``), whose options are spelled ``options``,
    runs: a refusal of one of their values gets its ``--help`` hint (:func:`with_help_hint`),
    a field is named by the alias typed for its option (``aliases``: ``--inter`` ->
    ``--fabric``), and the library's refusal of a field quotes the option's value as typed
    (``values``, long name -> text: :func:`_field_line`); an unknown name given to an option
    or an argument (``arguments``, the name its help gives it -> text) is refused naming it
    (:func:`_named_unknown`)."""
    token = _RUNNING.set(
        _Running(
            path,
            frozenset(options),
            dict(aliases or {}),
            dict(values or {}),
            dict(arguments or {}),
        )
    )
    try:
        yield
    finally:
        _RUNNING.reset(token)


def _field_line(exc: FieldError) -> str:
    """The library's refusal of a field, its fields named as flags (as typed: :func:`as_typed`);
    where it refuses one value, begun with the field at fault and that value in the library's
    words (:attr:`FieldError.value`), the value quoted as typed: ``--part-size '1MB' is less
    than ...``, where the library, handed the bytes, writes ``1 MB`` (and ``--tp 16`` had come
    unquoted), so that :func:`with_help_hint` gives it the command's hint as every other
    refusal of a value. The other values it writes after their fields
    (:attr:`FieldError.others`) are quoted as typed too: ``--maxbytes '1M' is smaller than
    --minbytes '1G'`` (had been ``1 MiB`` and ``1 GiB``, unquoted). A refusal of values given
    together that writes none keeps its words, as does one of a count that is not the count
    typed (:func:`_typed_count`), and a value not typed (a model's, a default)."""
    names = as_typed(FIELD_FLAGS)
    line = exc.render(names)
    if exc.field is not None and exc.value is not None:
        line = _quoted_as_typed(line, names, exc.field, exc.value, head=True)
    for field, value in exc.others.items():
        line = _quoted_as_typed(line, names, field, value, head=False)
    return line


def _quoted_as_typed(
    line: str, names: Mapping[str, str], field: str, value: str, *, head: bool
) -> str:
    """``line`` with ``FLAG VALUE`` (``field``'s flag as typed, ``value`` in the library's
    words) quoting the text typed for the flag instead, where it was typed and stands for
    ``value``: at its start where ``head``, else its first such words (followed by no more of
    the value: ``--heads 12`` is not ``--heads 128`` or ``--heads 12.5``)."""
    command = _RUNNING.get()
    flag = FIELD_FLAGS.get(field)
    typed = command.values.get(flag) if command is not None and flag is not None else None
    if typed is not None and "," in typed:
        # one name of a comma list (sweep --fabric ndr,nvlink4): that name, as typed, not the
        # list, which had been quoted as the scale-up link ('ndr,nvlink4' is a scale-up link)
        items = (item.strip() for item in typed.split(","))
        typed = next((item for item in items if item.lower() == value.lower()), typed)
    if typed is None or not _typed_count(typed, value):
        return line
    said = names.get(field, flag)
    words = f"{said} {value}"
    at = 0 if line.startswith(words) else -1 if head else line.find(words)
    while at >= 0:
        end = at + len(words)
        rest = line[end : end + 2]
        if not (rest[:1].isalnum() or (rest[:1] in (".", ",") and rest[1:].isdigit())):
            return f"{line[:at]}{said} {shown(typed)}{line[end:]}"
        at = -1 if head else line.find(words, end)
    return line


def _typed_count(typed: str, value: str) -> bool:
    """Whether ``typed`` may stand for ``value`` in a refusal: where ``value`` is a count (ASCII
    digits), only if ``typed`` reads as that number. A count the library derives from the one
    typed is refused under its field (each site's 3 dp ranks of ``--dp 6 --sites 2``), and had
    been quoted as the 6 typed; other values (``1 MB`` for ``1MB``) are taken as typed."""
    digits = value.replace(",", "")  # 8,192 tokens
    if not (digits.isascii() and digits.isdigit()):
        return True
    try:
        return float(typed) == int(digits)
    except ValueError:
        return False


#: The library's refusal of a name it does not know: ``unknown dtype 'int' (did you mean ...)``.
_UNKNOWN = lazy_pattern(
    r"unknown (?P<what>[a-z][a-z -]*?) (?P<name>'[^']*'|\"[^\"]*\")(?P<rest>.*)"
)


#: The rest of the library's refusal of a system preset's name given where a link or a storage
#: entry belongs (the storage's, with the list of storage after it).
_PRESET_NOT_ENTRY = lazy_pattern(
    r": (?P<id>\S+) is a system preset, not a (?:link|storage entry)(?: \([^()]*\))?"
)

#: The rest of the library's refusal of a link's name given where a system preset or a storage
#: entry belongs (the storage's, with the list of storage after it).
_LINK_NOT_ENTRY = lazy_pattern(
    r": (?P<id>\S+) is a (?P<kind>[a-z-]+) link, not a (?:system preset|storage entry)"
    r"(?: \([^()]*\))?"
)

#: The option each kind of link goes to where a system preset or a storage entry was asked
#: for, by its first long name and the name it is given as: a storage's client link is a
#: scale-out or WAN link ('--storage-link nvlink4' is refused).
_LINK_OPTIONS: dict[str, dict[str, tuple[str, str]]] = {
    "system": {
        "scale-out": ("--inter", "--fabric"),
        "scale-up": ("--intra", "--intra"),
        "host": ("--intra", "--intra"),
        "wan": ("--wan", "--wan"),
    },
    "storage": {
        "scale-out": ("--storage-link", "--storage-link"),
        "wan": ("--storage-link", "--storage-link"),
    },
}


#: The names whose refusal begins with the option (or argument) typed.
_NAMED_UNKNOWNS = frozenset({"collective", "dtype", "kind", "link", "model", "storage", "system"})


def _named_unknown(line: str) -> str:
    """``line``, the library's refusal of an unknown name (``unknown dtype 'int' (did you mean
    int32?)``), begun with the one option the name was typed to, as the option's alias typed,
    and with the command's hint: ``--dtype 'int' is not a known dtype (did you mean int32? see
    'ibcalc allreduce --help')``, as ``--proto 'x' is not one of ...`` has; it had named no
    option. A name typed as an argument is named as the command's help names that argument:
    ``name 'ndrr' is not a known link (... see 'ibcalc links show --help')``. A name of a
    comma list typed to one option (``sweep allreduce --fabric ndr,ndrr``) is named so too,
    where nothing was typed as the whole name. As it is where no one option or argument was
    given that text (a name in a file, the same name given twice)."""
    command = _RUNNING.get()
    match = _UNKNOWN().fullmatch(line)
    if command is None or match is None or match["what"] not in _NAMED_UNKNOWNS:
        return line
    name = match["name"]
    typed = [(command.aliases.get(flag, flag), text) for flag, text in command.values.items()]
    typed += command.arguments.items()
    said = [label for label, text in typed if shown(text) == name]
    if not said:
        said = [
            label
            for label, text in typed
            if "," in text and name in (shown(item.strip()) for item in text.split(","))
        ]
    if len(said) != 1:
        return line
    refusal = f"{said[0]} {name} is not a known {match['what']}{match['rest']}"
    preset = _PRESET_NOT_ENTRY().fullmatch(match["rest"])
    if preset is not None and "--system" in command.options and "--system" not in command.values:
        # 'gap --intra dgx-h100' had been told what dgx-h100 is, not where it goes (a review);
        # 'checkpoint --storage dgx-h100' too
        refusal = with_aside(refusal, f" (give --system {preset['id']})")
    options = _LINK_OPTIONS.get(match["what"], {})
    link = _LINK_NOT_ENTRY().fullmatch(match["rest"]) if options else None
    if link is not None and link["kind"] in options:
        # and '--system ndr' what ndr is, not that it goes to --fabric (a review); '--storage
        # ndr' that it goes to --storage-link
        option, flag = options[link["kind"]]
        if flag in command.options and option not in command.values:
            refusal = with_aside(refusal, f" (give {flag} {link['id']})")
    return with_aside(refusal, f" (see '{command.path} --help')")


def with_help_hint(line: str, path: str, options: Collection[str]) -> str:
    """``line`` with `` (see 'PATH --help')`` where it refuses the value of one of ``options``:
    it starts with the option and the value quoted (``--size '10Gb' uses ...``), as the
    toolkit's refusals of a value end with the hint; else as it is (options given together, a
    file's problem, a line that has its hint)."""
    option, _, rest = line.partition(" ")
    if option not in options or not rest.startswith("'") or line.endswith(" --help')"):
        return line
    return with_aside(line, f" (see '{path} --help')")


def _fail(lines: Sequence[str], into: list[str] | None = None) -> NoReturn:
    command = _RUNNING.get()
    if command is not None:
        lines = [with_help_hint(line, command.path, command.options) for line in lines]
    say_errors(lines)
    if into is not None:
        into.extend(lines)  # a report keeps them all
    raise typer.Exit(2)


def say_errors(lines: Sequence[object]) -> None:
    """``error:`` lines on stderr for the problems of one input: every one, up to
    :data:`MAX_ERROR_LINES`, the last saying how many more there are (5,000 unknown keys had
    printed 5,000 lines, review CU)."""
    shown_lines = lines if len(lines) <= MAX_ERROR_LINES else lines[: MAX_ERROR_LINES - 1]
    for line in shown_lines:
        say(f"error: {printable_ends(line, MAX_ERROR_LINE)}")
    if len(shown_lines) < len(lines):
        say(f"error: ... and {len(lines) - len(shown_lines):,} more problems of the same input")


def say(line: str) -> None:
    """Write ``line`` to stderr, the one way the CLI does. A stderr that cannot be written (a
    full device, ``2>/dev/full``; its reader gone) is sent to /dev/null for the rest of the run
    and the line is lost: the exit code stays the one the line goes with (2 for a refusal, 0
    after a "wrote FILE"), since there is nowhere left to say more. A closed stderr (``2>&-``)
    is written nowhere."""
    try:
        typer.echo(line, err=True)
    except (OSError, ValueError):
        _quiet(sys.stderr)


def say_wrapped(line: str, *paths: str) -> None:
    """:func:`say` for a note or a verdict, broken at the page's width as a report's notes are
    (:func:`ibcalc.render.stream.stderr_wrap`), never inside one of the ``paths`` it names (a
    path with spaces had been split over two lines); an ``error:`` line stays one line."""
    from ibcalc.render.stream import stderr_wrap

    say(stderr_wrap(line, paths))


def _quiet(stream: TextIO | None) -> None:
    """Point ``stream``'s descriptor at /dev/null, so that what is left in its buffer and the
    interpreter's last flush raise nothing."""
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def quiet_stdout() -> None:
    """Send what is left for stdout to /dev/null, so that the interpreter's last flush of a
    closed pipe or a full device raises nothing (Python's documented recipe for SIGPIPE)."""
    _quiet(sys.stdout)


#: The toolkit's refusal of a word that names none of a group's commands.
_NO_SUCH_COMMAND = lazy_pattern(r"^No such command '(?P<got>[^']*)'\.")

#: The toolkit's refusal of a value outside an option's choices.
_NOT_ONE_OF = lazy_pattern(r"'(?P<got>[^']*)' is not one of (?P<choices>'[^']*'(?:, '[^']*')*)")


#: Words a user types for a listing, which the groups with a ``show`` command give bare.
_LIST_WORDS = frozenset({"list", "ls", "all"})


def usage_line(exc: typer.TyperException) -> str:
    """One line for an error of the toolkit, naming the command's ``--help`` when known."""
    # a usage error carries the context of the command it was raised for (`ctx`)
    path = getattr(getattr(exc, "ctx", None), "command_path", None)
    hint = f" (see '{path} --help')" if isinstance(path, str) and path else ""
    # an option's own validator speaks through pydantic, which prefixes "Value error, "
    message = exc.format_message().replace(": Value error, ", ": ")
    # an unknown option: the toolkit offers options close with their dashes (`--design` got
    # `--nodes`); offer only one close without them, else none
    option = getattr(exc, "option_name", None)
    possible = getattr(exc, "possibilities", None)
    choice = _format_choice(exc, option)
    if choice is not None:
        # `--json` where the command has `--format json` (review EB 9)
        message = with_aside(
            str(getattr(exc, "message", message)), f" (did you mean --format {choice}?)"
        )
    elif (
        isinstance(option, str)
        and option.lstrip("-").lower() in _OUTPUT_WORDS | _PLOT_WORDS
        and (
            (file_hint := _file_option_hint(exc, picture=option.lstrip("-").lower() in _PLOT_WORDS))
            or not _short_forms(exc, option)
        )
    ):
        # `--write FILE` had been answered "did you mean --inter?" on calibrate, "--sites?" on
        # allreduce: the command's -o, its --plot where it writes only a picture (sweep and gap
        # had offered nothing for `--save x.png` or `--output x.png`), or no option at all; on
        # a command that writes no file, the options the word begins (infer's `--output`:
        # `--output-tokens`, which it had not been offered) below
        message = with_aside(str(getattr(exc, "message", message)), file_hint)
    elif isinstance(option, str) and (spelt := _framework_option(exc, option)) is not None:
        # Megatron-LM's or vLLM's name for an option: difflib had offered another quantity
        message = with_aside(str(getattr(exc, "message", message)), f" (did you mean {spelt}?)")
    elif isinstance(option, str) and (short := _short_forms(exc, option)):
        # `--nics`, `--gpu`, `--gpn`: a short form of the command's options, which difflib
        # had not offered (`--nics` is 0.57 of `--nics-per-node`)
        message = str(getattr(exc, "message", message))
        message = with_aside(message, f" (did you mean {', '.join(short)}?)")
    elif isinstance(option, str) and (siblings := _sibling_commands(exc, option)):
        # (a long option only: -d, which nccl-check lacks, is others' short form of --dtype)
        # `train --prompt`, an option of infer: difflib had offered train's --recompute
        message = str(getattr(exc, "message", message))
        message = with_aside(message, f" ({option} is an option of {_some(siblings)})")
    elif isinstance(option, str) and possible:
        bare = {str(p).lstrip("-"): str(p) for p in possible}
        near = closest(option.lstrip("-"), list(bare))
        message = str(getattr(exc, "message", message))
        message = with_aside(message, f" (did you mean {bare[near]}?)" if near else "")
    refused_value = _value_refusal(exc)
    if refused_value is not None:
        message = refused_value
    # `ibcalc links ndr`: a name where a group wants a command, whose `show` takes a name
    unknown = _NO_SUCH_COMMAND().match(message)
    commands = getattr(getattr(getattr(exc, "ctx", None), "command", None), "commands", None)
    show = commands.get("show") if isinstance(commands, dict) else None
    takes_name = any(
        isinstance(p, typer.core.TyperArgument) and p.name == "name"
        for p in getattr(show, "params", [])
    )
    if unknown is not None and isinstance(commands, Mapping):
        message = _same_command(message, unknown, list(commands))
    if unknown is not None and takes_name and isinstance(path, str):
        assert isinstance(commands, dict)
        if unknown.group("got").lower() in _LIST_WORDS:
            # `ibcalc systems list`: the group alone lists (`systems show list` fails too)
            message = with_aside(message, f" ('{path}' alone lists them)")
        elif closest(unknown.group("got"), list(commands)) is None:
            message = with_aside(message, f" (did you mean '{path} show {unknown.group('got')}'?)")
    # a choice not among an option's choices: add the closest, as unknown names get
    refused = _NOT_ONE_OF().search(message)
    if refused is not None:
        names = quoted_names(refused.group("choices"))
        end = refused.end("choices")
        got = refused.group("got")
        near = _dtype_hint(exc, got, names) or closest_hint(got, names)
        hinted = with_aside(message[:end], near)
        message = hinted + message[end:]
    return with_aside(message, hint)


def _dtype_hint(exc: typer.TyperException, got: str, choices: list[str]) -> str | None:
    """`` (did you mean bf16?)`` for a name of an element type, refused by an option of
    element types (``--dtype``, ``--grad-dtype`` ...), that names one of its ``choices`` as the
    collective commands' ``--dtype`` reads it (``bfloat16``, ``half``) or is closest to one
    (``float8``: fp8, which difflib had not offered); None where none does."""
    opts = getattr(getattr(exc, "param", None), "opts", ())
    if not any(str(opt).endswith("dtype") for opt in opts):
        return None
    from ibcalc.engine.types import DType
    from ibcalc.facade import dtype_suggestions

    for name in [got, *dtype_suggestions(got)]:
        with contextlib.suppress(ValueError):
            value = DType.parse(name).value
            if value in choices:
                return f" (did you mean {value}?)"
    return None


def _same_command(message: str, unknown: re.Match[str], commands: list[str]) -> str:
    """``message`` (the toolkit's ``No such command 'all-reduce'. Did you mean 'allreduce',
    'reduce'?``) offering only the command the word names but for case, dashes and
    underscores, where one does (``all_reduce``, ``AllReduce``, ``nccl_check``, ``send-recv``):
    the second guess had been another command (``reduce``, ``check``)."""
    squeezed = {re.sub(r"[-_]", "", c.lower()): c for c in commands}
    same = squeezed.get(re.sub(r"[-_]", "", unknown.group("got").lower()))
    if same is None:
        return message
    return f"{message[: unknown.end()]} Did you mean '{same}'?"


def _value_refusal(exc: typer.TyperException) -> str | None:
    """An option's value refused with the value quoted, in the form of every other refusal:
    ``--nodes '1.5' is not a whole number ...``, where the toolkit says ``Invalid value for
    '--nodes' / '-N': '1.5' is not ...`` (its choices, ``ibcalc.cli.numbers``, the ratio and
    ``--algo``; review EC 6). None for a refusal that does not start with the value."""
    names = [n for n in getattr(getattr(exc, "param", None), "opts", ()) if n.startswith("--")]
    # the toolkit ends its choices' refusal with a full stop, which no other refusal has
    text = str(getattr(exc, "message", "")).removeprefix("Value error, ").removesuffix(".")
    if not isinstance(exc, typer.BadParameter) or not names or text[:1] not in ("'", '"'):
        return None
    return f"{names[0]} {text}"


#: Words for writing a file that the commands spell ``-o``/``--output`` (or ``--plot``, where
#: the file a command writes is a picture).
_OUTPUT_WORDS = frozenset(
    {"o", "output", "write", "save", "out", "outfile", "out-file", "output-file"}
)
#: Words for writing a picture, which the commands spell ``--plot`` (a .png or .svg: no PDF)
_PLOT_WORDS = frozenset({"png", "svg", "image", "picture", "figure", "chart", "graph"})
#: What a command that writes only a picture says to a word for writing its output: where the
#: output goes, and what ``--plot`` writes (``sweep --output results.csv`` had been offered
#: ``--plot FILE``, which then refuses a .csv)
_PICTURE_ONLY = " (the output goes to stdout; --plot FILE writes a .png or .svg picture)"


#: The workload commands' options as the frameworks spell them (Megatron-LM's
#: ``--tensor-model-parallel-size``, vLLM's ``--tensor-parallel-size``), and as the JSON names
#: ``--prompt`` (``prompt_tokens``): difflib had offered another quantity for some
#: (``--pipeline-parallel-size``: ``--sequence-parallel``; ``--prompt-tokens``:
#: ``--output-tokens``) and nothing for most
_FRAMEWORK_OPTIONS = {
    "tensor-model-parallel-size": "--tp",
    "tensor-parallel-size": "--tp",
    "pipeline-model-parallel-size": "--pp",
    "pipeline-parallel-size": "--pp",
    "data-parallel-size": "--dp",
    "expert-model-parallel-size": "--ep",
    "expert-parallel-size": "--ep",
    "context-parallel-size": "--cp",
    "sequence-length": "--seq-len",
    "num-attention-heads": "--heads",
    "num-query-groups": "--kv-heads",
    "num-key-value-heads": "--kv-heads",
    "moe-router-topk": "--top-k",
    "num-experts-per-tok": "--top-k",
    "prompt-tokens": "--prompt",
    "input-len": "--prompt",
    "output-len": "--output-tokens",
    "max-num-seqs": "--batch",
}


def _params(exc: typer.TyperException) -> list[object]:
    """The parameters of the command of a usage error (none where it has no command)."""
    return list(getattr(getattr(getattr(exc, "ctx", None), "command", None), "params", []))


def _spellings(param: object) -> tuple[str, ...]:
    """Every name an option is spelt by: its names and its secondary (``--no-``) ones."""
    return (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))


def _command_options(exc: typer.TyperException) -> set[str]:
    """The option names (``--tp``, ``-o``) of the command of a usage error."""
    return {opt for param in _params(exc) for opt in getattr(param, "opts", ())}


#: Most options a short form is offered (``--cross`` offers the three --cross-leaf options).
_MOST_SHORT_FORMS = 3


def _short_forms(exc: typer.TyperException, option: str) -> list[str]:
    """The command's options, shortest first, that ``option`` is a short form of: a short
    option in the other case (``-n``: ``-N``); a long one whose dash-separated words begin
    with the words typed, three letters or more (``--nics``, ``--nic`` and ``--nics-per``
    offer ``--nics-per-node``), or whose first word is the two typed (``--kv``), a word typed
    in the plural counting for the singular (``--gpus``: ``--gpu-memory``); else one whose
    words begin with the letters typed (``--gpn``: ``--gpus-per-node``). None where more than
    :data:`_MOST_SHORT_FORMS` would be (``--no``), or none is."""
    names = [
        name
        for param in _params(exc)
        if not getattr(param, "hidden", False)
        for name in _spellings(param)
    ]
    if not option.startswith("--"):
        return [name for name in names if name == option.swapcase() and len(name) == 2]
    typed = folded(option).lstrip("-").replace("_", "-").split("-")
    longs = sorted((n for n in names if n.startswith("--")), key=lambda n: (len(n), n))

    def words_begin(name: str) -> bool:
        words = name[2:].split("-")
        return len(typed) <= len(words) and all(
            word.startswith(got) or word == got.removesuffix("s")
            for got, word in zip(typed, words, strict=False)
        )

    if len("".join(typed)) >= 3:
        found = [name for name in longs if words_begin(name)]
    else:  # two letters: the first word whole (`--kv`), not the start of any word (`--no`)
        found = [name for name in longs if name[2:].split("-")[0] == typed[0]]
    if not found and len(typed) == 1 and len(typed[0]) >= 2:
        letters = typed[0]
        found = [
            name
            for name in longs
            if len(words := name[2:].split("-")) == len(letters)
            and all(word.startswith(c) for c, word in zip(letters, words, strict=True))
        ]
    return found if len(found) <= _MOST_SHORT_FORMS else []


#: Most sibling commands named for an option they have; past it, the first and how many more.
_MOST_SIBLINGS = 3


def _some(paths: list[str]) -> str:
    """``'ibcalc infer'``, ``'ibcalc train' and 'ibcalc infer'``, ``'ibcalc allreduce' and 9
    other commands``."""
    if len(paths) > _MOST_SIBLINGS:
        return f"{paths[0]} and {len(paths) - 1} other commands"
    return " and ".join([", ".join(paths[:-1]), paths[-1]] if len(paths) > 1 else paths)


def _sibling_commands(exc: typer.TyperException, option: str) -> list[str]:
    """The other commands of the group of the usage error's command that have ``option`` as
    typed (``--prompt``: ``'ibcalc infer'``), quoted as paths; none where the error has no
    group."""
    ctx = getattr(exc, "ctx", None)
    if not option.startswith("--"):
        return []
    group = getattr(getattr(ctx, "parent", None), "command", None)
    commands = getattr(group, "commands", None)
    name = getattr(ctx, "info_name", None)
    parent_path = getattr(getattr(ctx, "parent", None), "command_path", None)
    if not isinstance(commands, Mapping) or not isinstance(parent_path, str):
        return []
    return [
        f"'{parent_path} {other}'"
        for other in commands
        if other != name
        and not getattr(commands[other], "hidden", False)
        and any(option in _spellings(param) for param in getattr(commands[other], "params", []))
    ]


def _framework_option(exc: typer.TyperException, option: str) -> str | None:
    """The command's option that ``option`` names in a framework's words, else None."""
    spelt = _FRAMEWORK_OPTIONS.get(option.lstrip("-").lower().replace("_", "-"))
    return spelt if spelt in _command_options(exc) else None


def _file_option_hint(exc: typer.TyperException, *, picture: bool) -> str:
    """The option that writes a file on the command of a usage error, as a hint: for a word
    that names a ``picture`` its ``--plot`` (calibrate's -o writes YAML); for another its
    ``-o``/``--output``, else what its ``--plot`` writes and where the output goes. Empty where
    the command has none of them."""
    opts = _command_options(exc)
    if picture:
        return " (did you mean --plot FILE?)" if "--plot" in opts else ""
    if "--output" in opts:
        return " (did you mean -o/--output FILE?)"
    return _PICTURE_ONLY if "--plot" in opts else ""


def _format_choice(exc: typer.TyperException, option: object) -> str | None:
    """The value of the command's ``--format`` that an unknown option names (``--json``,
    ``--csv``), else None."""
    if not isinstance(option, str) or not option.startswith("--"):
        return None
    for param in _params(exc):
        if "--format" in getattr(param, "opts", ()):
            # the option's annotation: an enum of the formats (OutputFormat, SweepFormat)
            kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            choices = [m.value for m in kind] if isinstance(kind, type(Enum)) else []
            word = option[2:].lower()
            return word if word in {str(c).lower() for c in choices} else None
    return None


def as_typed(names: Mapping[str, str]) -> dict[str, str]:
    """``names`` (fields to flags, :data:`FIELD_FLAGS`) with the alias the command line typed
    for an option in the option's place, for a refusal: ``--fabric ,`` had been told "--inter
    ',' names no link"."""
    command = _RUNNING.get()
    typed = command.aliases if command is not None else {}
    return {field: typed.get(flag, flag) for field, flag in names.items()}


@contextmanager
def boundary(into: list[str] | None = None) -> Iterator[None]:
    """Turn bad input into ``error:`` lines on stderr and ``typer.Exit(2)``; let the rest pass.
    ``into`` also gets the lines (a JSON report that carries its files' errors)."""
    try:
        yield
    except FieldError as exc:
        _fail([_field_line(exc)], into)
    except InputFileError as exc:
        # every problem of the file, one line each (report all, not the first)
        _fail([str(problem) for problem in exc.problems] or [str(exc)], into)
    except IbcalcError as exc:
        _fail([_named_unknown(str(exc))], into)
    except typer.TyperException as exc:
        _fail([usage_line(exc)], into)
    except BrokenPipeError:
        # the reader of stdout is gone (`| head -1`, `| true`): stop quietly, like git
        quiet_stdout()
        raise typer.Exit(SIGPIPE_EXIT) from None


def guard(command: Callable[P, R]) -> Callable[P, R]:
    """Run ``command`` inside :func:`boundary` (keeps its signature for typer)."""

    @functools.wraps(command)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        with boundary():
            return command(*args, **kwargs)

    return guarded
