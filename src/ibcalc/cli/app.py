"""The root ``ibcalc`` app, ``--version`` and the console entry point :func:`main`.

Each command group lives in its own module and adds itself with ``register(app)``. The modules
load lazily: :data:`COMMANDS` names every top-level command with its module and its help
text, ``ibcalc --help`` and ``ibcalc --version`` list or print from it without importing any
command module (nor the engine, the catalogue or pydantic), and ``ibcalc X`` imports only the
module of ``X``. tests/cli/test_app.py checks the table against the registered commands.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Collection, Iterator, Mapping, Sequence
from importlib import import_module
from typing import Annotated, Any, NamedTuple

import typer
import typer.core

from ibcalc import __version__
from ibcalc.cli.boundary import (
    FIELD_FLAGS,
    NOT_PLAIN,
    SIGPIPE_EXIT,
    CliUsageError,
    boundary,
    quiet_stdout,
    running,
    say,
    with_help_hint,
)
from ibcalc.cli.output import StdoutError, guarded_stdout
from ibcalc.collectives import Collective
from ibcalc.errors import fill_fields
from ibcalc.textsafe import printable, shown

__all__ = ["COMMANDS", "CommandEntry", "app", "collective_help", "main"]


class CommandEntry(NamedTuple):
    """Where a top-level command lives and what ``ibcalc --help`` says of it."""

    #: The module under ``ibcalc.cli`` whose ``register(app)`` adds the command.
    module: str
    #: The command's help text as the command has it (its first paragraph is enough: the
    #: listing shows the first sentence, cut to the terminal's width).
    help: str


def collective_help(collective: Collective) -> str:
    """The help line of the collective's command (named ``Collective.command``), from the
    collective's own description with its fields named as flags (``--size``)."""
    return f"Estimate {fill_fields(collective.description, FIELD_FLAGS)}."


#: Every top-level command, in the order ``ibcalc --help`` lists them (each module's commands,
#: then its groups), with the module that registers it and its help text.
COMMANDS: dict[str, CommandEntry] = {
    # cli/estimate.py: one command per Collective (help from Collective.description), sweep
    **{c.command: CommandEntry("estimate", collective_help(c)) for c in Collective},
    "sweep": CommandEntry(
        "estimate",
        "Sweep sizes like nccl-tests (-b/-e/-f) and print a table shaped like its output.",
    ),
    # cli/design.py
    "check": CommandEntry(
        "design", "Check cluster-design files against their requirements (a CI gate)."
    ),
    "schema": CommandEntry(
        "design", "Print the JSON Schema of cluster-design files (for editors and CI)."
    ),
    # cli/gap.py
    "gap": CommandEntry(
        "gap",
        "Scale-up vs scale-out bandwidth per GPU (per direction), ratios, and what they cost.",
    ),
    # cli/workload.py
    "train": CommandEntry(
        "workload",
        "One training step: communication per parallel dimension, overlap, GPU memory, warnings.",
    ),
    "infer": CommandEntry(
        "workload",
        "Serving a model: communication per generated token and per request, and GPU memory.",
    ),
    "checkpoint": CommandEntry(
        "workload", "Save and restore time of a checkpoint, and which bound sets it."
    ),
    # cli/logs.py
    "nccl-check": CommandEntry(
        "logs",
        "Is my number normal? Compare nccl-tests / rccl-tests results with the model, per size, "
        "and say why they differ.",
    ),
    "calibrate": CommandEntry(
        "logs",
        "Fit the model to your own nccl-tests runs: transport latencies, link efficiencies, NVLS "
        "efficiency, an all-to-all's cost per message; report the fit and what the runs cannot "
        "determine; write an override file.",
    ),
    # cli/catalogue.py (groups)
    "links": CommandEntry(
        "catalogue", "List the link catalogue, or show one link with its sources."
    ),
    "systems": CommandEntry("catalogue", "List node/system presets, or show one."),
    "storage": CommandEntry(
        "catalogue", "List the storage catalogue (checkpoint targets), or show one entry."
    ),
    # cli/design.py (group)
    "design": CommandEntry("design", "Inspect cluster-design files."),
}

#: The command modules' own apps, each built once per process by its ``register``.
_MODULE_APPS: dict[str, typer.Typer] = {}


def _module_app(module: str) -> typer.Typer:
    """The app to which ``ibcalc.cli.<module>`` registered its commands (imported on first use)."""
    if module not in _MODULE_APPS:
        sub = typer.Typer(rich_markup_mode=None, add_completion=False)
        import_module(f"ibcalc.cli.{module}").register(sub)
        _MODULE_APPS[module] = sub
    return _MODULE_APPS[module]


#: The exit code of an error in ibcalc itself, not in its input: apart from a failed gate's 1,
#: which a CI job reads as a failed requirement, and bad input's 2.
INTERNAL_ERROR_EXIT = 3

#: The exit status every command's help states (review DH: only check, nccl-check and
#: calibrate said theirs); a command whose own help gives its codes adds the internal error's.
EXIT_STATUS = (
    "Exit 0 when done; 2 on bad input or a file that cannot be read (one line on stderr); "
    f"{INTERNAL_ERROR_EXIT} on an error in ibcalc itself, a bug (IBCALC_TRACEBACK=1 prints its "
    "traceback)."
)
INTERNAL_EXIT = (
    f"Exit {INTERNAL_ERROR_EXIT} on an error in ibcalc itself, a bug (IBCALC_TRACEBACK=1 prints "
    "its traceback)."
)


def _state_exit_status(command: Any) -> None:
    """Give ``command`` (and a group's commands) the exit status in its help's epilog."""
    command.epilog = INTERNAL_EXIT if "Exit 0" in (command.help or "") else EXIT_STATUS
    for inner in getattr(command, "commands", {}).values():
        _state_exit_status(inner)


def _build(name: str) -> Any:
    """The toolkit's command (or group) ``name``, built from its module's app alone: the
    module's other commands are not built (their options cost a few milliseconds each)."""
    sub = _module_app(COMMANDS[name].module)
    one = typer.Typer(rich_markup_mode=sub.rich_markup_mode, add_completion=False)
    one.registered_commands = [info for info in sub.registered_commands if info.name == name]
    one.registered_groups = [info for info in sub.registered_groups if info.name == name]
    built = typer.main.get_group(one).commands
    if name not in built:  # pragma: no cover - every register() names its commands
        built = typer.main.get_group(sub).commands
    _state_exit_status(built[name])
    return built[name]


class _LazyCommands(Mapping[str, Any]):
    """The root group's commands: the names are :data:`COMMANDS`' keys, and a command is
    built (its module imported and its toolkit objects made) when it is looked up."""

    def __init__(self, eager: Mapping[str, Any]) -> None:
        self.eager = dict(eager)
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name in self.eager:
            return self.eager[name]
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = _build(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.eager
        yield from (name for name in COMMANDS if name not in self.eager)

    def __len__(self) -> int:
        return len(self.eager.keys() | COMMANDS.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.eager or name in COMMANDS


class _CommandPath(NamedTuple):
    """What :func:`~ibcalc.cli.boundary.usage_line` reads of a usage error's context."""

    command_path: str


class LazyGroup(typer.core.TyperGroup):
    """The root group: lists its commands from :data:`COMMANDS` and imports a command's module
    only when the command runs (or its own help is asked for)."""

    def __init__(self, *, commands: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(commands=None, **kwargs)
        self.commands = _LazyCommands(commands or {})  # type: ignore[assignment]
        #: the command the arguments name (parse_args), for a usage error raised before the
        #: command's context exists
        self._named: str | None = None
        #: the long name of each option spelling of the command named (parse_args), for the
        #: refusals of their values while it runs (invoke)
        self._options: dict[str, str] = {}
        #: the alias typed for an option of the command named (parse_args), by the option's
        #: first long name (``--inter``: ``--fabric``), for the errors naming it (invoke)
        self._aliases: dict[str, str] = {}
        #: the text typed for each option given a value, by long name (parse_args), which the
        #: refusals of the library quote (invoke)
        self._values: dict[str, str] = {}
        #: the text typed for each argument that takes one value, by the name its help gives
        #: it (parse_args), which the refusals of an unknown name name (invoke)
        self._arguments: dict[str, str] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # here, not in main(): the app run on its own (tests, embedding) refuses them too. The
        # command named is built to read its options (it is about to be built to run anyway)
        name = next((a for a in args if not a.startswith("-")), None)
        self._named = name
        if name is not None and name in self.commands:
            # a group's command named after it: its path is the hint's ('design show --format'
            # had pointed at 'ibcalc design --help', which lists no --format: review BZ)
            inner = getattr(self.commands[name], "commands", None)
            rest = args[args.index(name) + 1 :]
            # the first of the group's command names, past the group's own options and their
            # values ('links --format json show ndr': show, not json; review CA)
            sub = (
                next((a for a in rest if a in inner), None) if isinstance(inner, Mapping) else None
            )
            if sub is not None:
                self._named = f"{name} {sub}"
            options = self._options = _long_names(self.commands[name])
            self._aliases = _aliases_typed(self.commands[name], rest)
            self._values = typed_values(self.commands[name], rest)
            self._arguments = typed_arguments(self.commands[name], rest)
            try:
                refuse_unplain_numbers(self._values, _file_options(self.commands[name]))
                refuse_repeated_options(self.commands[name], args[args.index(name) + 1 :])
            except CliUsageError as exc:
                # '--size '1_000' is not a plain number ...' with the hint of every refusal of
                # an option's value (review EK 4)
                path = f"{ctx.command_path} {self._named}"
                say(f"error: {with_help_hint(str(exc), path, options)}")
                raise typer.Exit(2) from None
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        name = self._named
        known = name is not None and name.split()[0] in self.commands
        try:
            if not known:
                return super().invoke(ctx)
            assert name is not None
            # the command's own refusals of its options' values get its --help hint
            with running(
                f"{ctx.command_path} {name}",
                self._options,
                self._aliases,
                self._values,
                self._arguments,
            ):
                return super().invoke(ctx)
        except typer.TyperException as exc:
            # the toolkit raises a value missing after an option ('allreduce -s') from the
            # command's parser, before the command's context exists: the refusal had come
            # without the '--help' hint every other usage error carries. The command's path
            # stands in for the context usage_line reads it from
            if getattr(exc, "ctx", None) is None and name is not None and known:
                exc.ctx = _CommandPath(f"{ctx.command_path} {name}")  # type: ignore[attr-defined]
            if isinstance(exc, typer.BadParameter):
                # an option's value refused while the command reads its options (a range of
                # ibcalc.cli.numbers, a choice): one line, as the command's own refusals are,
                # also where the app runs on its own (tests, embedding), for which the toolkit
                # prints its usage block
                with boundary():
                    raise
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # the listing as the toolkit writes it, from stand-ins holding each command's help
        # (the short help is cut from it to the terminal's width), so nothing is imported
        lazy: Any = self.commands
        stand_ins = {
            name: lazy.eager[name]
            if name in lazy.eager
            else typer.core.TyperCommand(name, help=COMMANDS[name].help, rich_markup_mode=None)
            for name in self.list_commands(ctx)
        }
        typer.core.TyperGroup(commands=stand_ins, rich_markup_mode=None).format_commands(
            ctx, formatter
        )


app = typer.Typer(
    name="ibcalc",
    cls=LazyGroup,
    help="How fast can this cluster move these bytes? Interconnect catalogue and collective costs.",
    epilog="Exit 0 when done; 1 when a gate fails (check, nccl-check --min-efficiency); 2 on bad "
    f"input or a file that cannot be read (one line on stderr); {INTERNAL_ERROR_EXIT} on an error "
    "in ibcalc itself, a bug. Each command's --help says its own.",
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ibcalc {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """ibcalc: interconnect catalogue and analytic collective-cost calculator."""
    # `ibcalc` alone prints the help and succeeds (what no_args_is_help would do, without the
    # toolkit's help-as-an-error exception)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


#: Errors of a write to a device that is full or failing (never of reading an input: inputs
#: are read through ibcalc.fileio, which turns their errors into one-line refusals).
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def refuse_unplain_numbers(values: Mapping[str, str], files: Collection[str] = ()) -> None:
    """Refuse a number Python would read but a user may not mean: digit separators (``1_000``)
    or another script's digits (fullwidth or Arabic-Indic ones), which the toolkit's int and
    float options take as they are. Every number ibcalc reads itself (sizes, rates, times)
    takes ASCII digits only. ``values`` is the text typed for each option, by its long name
    (:func:`typed_values`: ``-s 1_000`` is said as ``--size '1_000'``, as every other refusal
    of a size is; review EC 6). The options in ``files`` name a file, and the command's
    arguments (logs, design files, a collective or a catalogue entry) are not read here: no
    number is written there (a log named ``2024_06_01`` had been refused as one)."""
    for option, value in values.items():
        if option in files or (value.isascii() and "_" not in value):
            continue
        try:
            float(value)
        except ValueError:
            continue  # not a number at all: the option it belongs to judges it
        raise CliUsageError(f"{option} {shown(value)} {NOT_PLAIN}")


def _file_options(command: Any) -> set[str]:
    """The long names of the options of ``command`` (and of a group's commands) that name a
    file (their metavar is FILE: --catalogue, --design, --output, --plot ...)."""
    names = {
        next((n for n in param.opts if n.startswith("--")), param.opts[0])
        for param in command.params
        if getattr(param, "param_type_name", "") == "option" and param.metavar == "FILE"
    }
    for inner in (getattr(command, "commands", None) or {}).values():
        names |= _file_options(inner)
    return names


def _spellings(command: Any) -> tuple[dict[str, str], set[str]]:
    """``command``'s option spellings, each with the name said for its option (its first long
    name: ``-N`` and ``--nodes`` are ``--nodes``, ``--no-sharp`` is ``--sharp``), and those of
    options that take several values, one per use (``--catalogue``)."""
    said: dict[str, str] = {}
    several: set[str] = set()
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        names = [*param.opts, *param.secondary_opts]
        first = next((n for n in param.opts if n.startswith("--")), names[0])
        said.update(dict.fromkeys(names, first))
        if param.multiple:
            several.update(names)
    return said, several


def _long_names(command: Any) -> dict[str, str]:
    """The long name of each option spelling of ``command`` and of a group's commands."""
    names = _spellings(command)[0]
    for inner in (getattr(command, "commands", None) or {}).values():
        names.update(_long_names(inner))
    return names


def _aliases_typed(command: Any, args: Sequence[str]) -> dict[str, str]:
    """The further long names of options of ``command`` (or of a group's commands) typed in
    ``args``, each by its option's first long name: ``--fabric ndr`` -> ``{"--inter":
    "--fabric"}``. (An option is given once: :func:`refuse_repeated_options`.)"""
    first: dict[str, str] = {}
    for inner in [command, *(getattr(command, "commands", None) or {}).values()]:
        for param in inner.params:
            longs = [n for n in getattr(param, "opts", ()) if n.startswith("--")]
            first.update(dict.fromkeys(longs[1:], longs[0] if longs else ""))
    typed: dict[str, str] = {}
    for arg in args:
        if arg == "--":
            break
        spelling = arg.partition("=")[0]
        if spelling in first:
            typed[first[spelling]] = spelling
    return typed


def refuse_repeated_options(command: Any, args: Sequence[str]) -> None:
    """Refuse an option ``command`` takes given twice in ``args``, under any of its spellings:
    the command line parser takes the last without a word (``--fabric ndr --inter hdr`` priced
    HDR, ``--sharp --no-sharp`` no SHARP, ``--size 1GB --size 2GB`` 2 GB: a review). Options
    that take several values may repeat; a group's options and its command's are apart
    (``links --format json show ndr --format table``); a spelling the command does not have is
    left to the parser's own refusal (``-d`` on nccl-check: a review)."""
    said, several = _spellings(command)
    subcommands = getattr(command, "commands", None) or {}
    seen: dict[str, str] = {}
    for i, arg in enumerate(args):
        if arg == "--":
            return
        if arg in subcommands:
            refuse_repeated_options(subcommands[arg], args[i + 1 :])
            return
        if len(arg) < 2 or arg[0] != "-" or not arg.lstrip("-")[:1].isalpha():
            continue
        # '--nodes=2', and a short option with its value attached ('-N2', '-s1GB')
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg[:2]
        key = said.get(name)
        if key is None or name in several:
            continue
        if key not in seen:
            seen[key] = name
            continue
        first = seen[key]
        if first == name:
            raise CliUsageError(f"{name} is given twice: give it once")
        if name.startswith("--no-") or first.startswith("--no-"):
            raise CliUsageError(f"{first} and {name} are both given: give one")
        raise CliUsageError(f"{first} and {name} are one option, given twice: give it once")


def _value_spellings(command: Any) -> set[str]:
    """The spellings of ``command``'s options that take a value (not a flag, not a count)."""
    return {
        spelling
        for param in command.params
        if getattr(param, "param_type_name", "") == "option"
        and not getattr(param, "is_flag", False)
        and not getattr(param, "count", False)
        for spelling in param.opts
    }


def typed_arguments(command: Any, args: Sequence[str]) -> dict[str, str]:
    """The text typed in ``args`` for each argument of ``command`` (or of the group's command
    named) that takes one value, by the name its help gives it (its metavar, else its name):
    ``links show ndrr`` is ``{"name": "ndrr"}``. Arguments after one that takes several
    (``check FILE...``) are not read."""
    takes = _value_spellings(command)
    subcommands = getattr(command, "commands", None) or {}
    positional: list[str] = []
    pending = ended = False
    for i, arg in enumerate(args):
        if pending:
            pending = False
        elif ended or arg == "-" or not arg.startswith("-"):
            if not ended and not positional and arg in subcommands:
                return typed_arguments(subcommands[arg], args[i + 1 :])
            positional.append(arg)
        elif arg == "--":
            ended = True
        else:
            pending = arg in takes
    typed: dict[str, str] = {}
    arguments = [p for p in command.params if getattr(p, "param_type_name", "") == "argument"]
    for param, arg in zip(arguments, positional, strict=False):
        if param.nargs != 1:
            break
        typed[param.metavar or param.name] = arg
    return typed


def typed_values(command: Any, args: Sequence[str]) -> dict[str, str]:
    """The text typed in ``args`` for each option of ``command`` (or of the group's command
    named) that takes a value, by the option's long name: ``--part-size 1MB`` is ``{"--part-size":
    "1MB"}``, as are ``--part-size=1MB`` and a short option's attached value (``-s1GB``)."""
    said, _ = _spellings(command)
    takes = _value_spellings(command)
    subcommands = getattr(command, "commands", None) or {}
    typed: dict[str, str] = {}
    pending: str | None = None
    for i, arg in enumerate(args):
        if pending is not None:
            typed[pending], pending = arg, None
        elif arg == "--":
            break
        elif arg in subcommands:
            typed.update(typed_values(subcommands[arg], args[i + 1 :]))
            break
        elif arg in takes:
            pending = said[arg]
        elif arg.startswith("--") and arg.split("=", 1)[0] in takes and "=" in arg:
            name, value = arg.split("=", 1)
            typed[said[name]] = value
        elif not arg.startswith("--") and arg[:2] in takes:
            typed[said[arg[:2]]] = arg[2:]
    return typed


def _internal_error(exc: BaseException) -> None:
    """End the run on a bug: one line and :data:`INTERNAL_ERROR_EXIT`, where Python's
    traceback had ended it with exit 1, a failed gate's code for `check` (a review);
    ``IBCALC_TRACEBACK=1`` shows the traceback instead."""
    if os.environ.get("IBCALC_TRACEBACK", "") not in ("", "0"):
        # the traceback, and still the bug's own exit code (re-raised, it had exited 1; a
        # review)
        traceback.print_exception(exc)
        sys.exit(INTERNAL_ERROR_EXIT)
    quiet_stdout()
    detail = printable(exc, 200)
    say(
        f"error: internal error in ibcalc {__version__} ({type(exc).__name__}: {detail}); this "
        "is a bug, not your input: IBCALC_TRACEBACK=1 shows where, for a report"
    )
    sys.exit(INTERNAL_ERROR_EXIT)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run the app inside the error boundary; exit 2 on bad input.

    stdout that cannot be written ends the run like git does: a closed pipe quietly with
    :data:`~ibcalc.cli.boundary.SIGPIPE_EXIT`, a full device (``> /dev/full``) with ``error:
    cannot write output: No space left on device`` and exit 2; never a traceback.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    stdout = None
    try:
        with guarded_stdout() as stdout, boundary():
            # Without standalone mode typer raises usage errors (the boundary makes them one
            # line) and returns an Exit's code instead of exiting.
            code = app(args=args, prog_name="ibcalc", standalone_mode=False)
            sys.stdout.flush()  # here, not at exit, so that a write error is handled below
    except SystemExit:
        # the toolkit ends `--help | head` with exit 1 ("a requirement fails" for check)
        if stdout is not None and stdout.broken:
            quiet_stdout()
            sys.exit(SIGPIPE_EXIT)
        raise
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        say("error: aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        quiet_stdout()
        sys.exit(SIGPIPE_EXIT)
    except OSError as exc:
        # StdoutError: a write to stdout failed; the errnos below come from a write that went
        # around the guard (the toolkit re-wraps stdout under some locales); the rest is a bug
        if not isinstance(exc, StdoutError) and exc.errno not in _WRITE_ERRNOS:
            _internal_error(exc)
        quiet_stdout()
        say(f"error: cannot write output: {exc.strerror or exc}")
        sys.exit(2)
    except Exception as exc:
        _internal_error(exc)
    if isinstance(code, int) and code != 0:
        sys.exit(code)
