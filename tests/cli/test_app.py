"""The root app's lazy command table (src/ibcalc/cli/app.py).

``ibcalc --help`` and ``ibcalc --version`` list or print from :data:`ibcalc.cli.app.COMMANDS`
without importing a command module; ``ibcalc X`` imports the module of ``X`` only. These tests
check the table against the commands the modules register (names, order, help), the listing
against the one the toolkit writes from the real commands, and what a run imports (in a fresh
interpreter, through ``sys.modules``). Nothing here is timed: the speed figures are
benchmarks/speed.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.core
import typer.main
from typer.testing import CliRunner

from ibcalc.cli import app
from ibcalc.cli.app import COMMANDS

#: The command modules (each adds its commands with ``register(app)``), in the order the root
#: app registered them before the table (the listing's order: each module's commands, then the
#: groups).
MODULES = ("estimate", "catalogue", "design", "gap", "workload", "logs")

#: What ``ibcalc --help`` / ``--version`` must not import: every command module, the engine,
#: the catalogue, the renderers, and the heavy libraries none of that needs.
NOT_AT_START = (
    *(f"ibcalc.cli.{module}" for module in MODULES),
    "ibcalc.cli.options",
    "ibcalc.engine",
    "ibcalc.catalogue",
    "ibcalc.render",
    "ibcalc.render.workload",
    "ibcalc.facade",
    "pydantic",
    "rich",
    "yaml",
)


def _eager_app() -> typer.Typer:
    """The root app as it was before the table: every module registered on it at import."""
    eager = typer.Typer(
        name="ibcalc",
        help=app.info.help,
        epilog=app.info.epilog,
        add_completion=False,
        rich_markup_mode=None,
    )
    eager.registered_callback = app.registered_callback
    for module in MODULES:
        sub = typer.Typer(rich_markup_mode=None)
        import_module(f"ibcalc.cli.{module}").register(sub)
        eager.registered_commands += sub.registered_commands
        eager.registered_groups += sub.registered_groups
    return eager


def _eager_group() -> typer.core.TyperGroup:
    return typer.main.get_group(_eager_app())


def _imported_after(args: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after ``ibcalc ARGS`` (run through its entry
    point, output discarded)."""
    code = (
        "import io, json, sys\n"
        "from ibcalc.cli import main\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "out.write(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(done.stdout))


def test_table_lists_the_registered_commands_in_order() -> None:
    assert list(_eager_group().commands) == list(COMMANDS)
    for name, entry in COMMANDS.items():
        registered = typer.Typer(rich_markup_mode=None)
        import_module(f"ibcalc.cli.{entry.module}").register(registered)
        names = [info.name for info in registered.registered_commands]
        names += [info.name for info in registered.registered_groups]
        assert name in names, f"{name} is not registered by ibcalc.cli.{entry.module}"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_table_help_gives_the_command_s_listing_line(name: str) -> None:
    """The stand-in listing line is the real command's at every terminal width."""
    real = _eager_group().commands[name]
    stand_in = typer.core.TyperCommand(name, help=COMMANDS[name].help, rich_markup_mode=None)
    assert not real.hidden
    for limit in range(10, 200):
        assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit), limit


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_help_listing_is_the_eager_one(width: int) -> None:
    runner = CliRunner()
    lazy = runner.invoke(app, ["--help"], terminal_width=width)
    eager = runner.invoke(_eager_app(), ["--help"], prog_name="ibcalc", terminal_width=width)
    assert lazy.exit_code == eager.exit_code == 0
    assert lazy.output == eager.output
    assert "allreduce" in lazy.output
    assert "design" in lazy.output


def test_every_table_command_runs_its_own_help() -> None:
    runner = CliRunner()
    for name in COMMANDS:
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert result.output.startswith(f"Usage: ibcalc {name} "), name


def test_every_command_s_help_states_its_exit_status() -> None:
    """Review DH: only check, nccl-check and calibrate had said their exit codes, and exit 3
    (an error in ibcalc itself) only docs/architecture.md. Every command and group command now
    states them: its own help's where it gives them, with the internal error's beside it."""
    runner = CliRunner()
    root = runner.invoke(app, ["--help"], terminal_width=200)
    assert "Exit 0 when done; 1 when a gate fails" in root.output
    group = typer.main.get_command(app)
    seen = 0
    for name in COMMANDS:
        command = group.commands[name]  # type: ignore[attr-defined]
        inner = getattr(command, "commands", {})
        for path in [[name]] + [[name, sub] for sub in inner]:
            text = " ".join(
                runner.invoke(app, [*path, "--help"], terminal_width=200).output.split()
            )
            assert "Exit 0" in text, path
            assert "3 on an error in ibcalc itself, a bug" in text or (
                "Exit 3 on an error in ibcalc itself, a bug" in text
            ), path
            seen += 1
    assert seen >= len(COMMANDS) + 4  # links, systems, storage and design show too


def test_commands_mapping_builds_each_command_on_lookup() -> None:
    group = typer.main.get_command(app)
    assert list(group.commands) == list(COMMANDS)  # type: ignore[attr-defined]
    assert "allreduce" in group.commands  # type: ignore[attr-defined]
    assert "no-such-command" not in group.commands  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        group.commands["no-such-command"]  # type: ignore[attr-defined]
    assert group.commands["allreduce"].name == "allreduce"  # type: ignore[attr-defined]


def test_unknown_command_still_gets_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    from ibcalc.cli import main

    with pytest.raises(SystemExit) as info:
        main(["allredcue"])
    assert info.value.code == 2
    assert "Did you mean 'allreduce'" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_import_no_command_module(args: list[str]) -> None:
    imported = _imported_after(args)
    assert "ibcalc.cli.app" in imported
    assert sorted(imported & set(NOT_AT_START)) == []


def test_a_command_imports_its_own_module_only() -> None:
    imported = _imported_after(["allreduce", "--size", "1GB", "--fabric", "ndr"])
    assert "ibcalc.cli.estimate" in imported
    assert "ibcalc.engine" in imported
    others = {f"ibcalc.cli.{module}" for module in MODULES if module != "estimate"}
    assert sorted(imported & others) == []
    assert "ibcalc.render.workload" not in imported
    # the design schema (and the fabric sizing it pulls in) is not on an estimate's path:
    # --oversubscription's parser, run on its default too, once imported it for every estimate
    assert sorted(m for m in imported if m.startswith(("ibcalc.design", "ibcalc.fabric"))) == []


def test_a_stdout_that_cannot_encode_the_output_gets_it_in_ascii() -> None:
    """PYTHONIOENCODING=ascii: the sweep's busbw bars (U+258F ...) and the schema's 'µs' had
    ended the run with a UnicodeEncodeError traceback (exit 1). The bars are drawn with '#'; JSON
    keeps its data, its non-ASCII characters written as JSON escapes."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    command = [sys.executable, "-c", "from ibcalc.cli import main; main()"]
    sweep = subprocess.run(
        [*command, "sweep", "allreduce", "-N", "2", "--system", "dgx-h100", "-b", "1G", "-e", "1G"],
        capture_output=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert sweep.returncode == 0, sweep.stderr
    assert sweep.stdout.isascii()
    assert b"####" in sweep.stdout
    schema = subprocess.run(
        [*command, "schema"], capture_output=True, env=env, check=False, timeout=60
    )
    assert schema.returncode == 0, schema.stderr
    assert schema.stdout.isascii()
    utf8 = subprocess.run(
        [*command, "schema"],
        capture_output=True,
        env={**env, "PYTHONIOENCODING": "utf-8"},
        check=True,
        timeout=60,
    )
    assert "µs".encode() in utf8.stdout
    assert json.loads(schema.stdout) == json.loads(utf8.stdout)
    # nccl-check and calibrate had printed through click's echo, which writes UTF-8 bytes past
    # the stream on an ASCII stdout (the table rules as raw U+2500)
    log = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
    log = log / "13_allreduce_1node_4xH100_intranode.txt"
    for args in (["nccl-check", str(log)], ["calibrate", str(log)]):
        done = subprocess.run(
            [*command, *args], capture_output=True, env=env, check=False, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.isascii(), args
        assert b"---" in done.stdout, args


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["schema", "-o", "-"], "schema"),
        (["check", "examples/aws-p5-efa.yaml", "-o", "-"], "report"),
    ],
)
def test_an_output_file_named_dash_is_refused(
    args: list[str], what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'-o -' had written a file named '-' in the working directory, printed nothing and exited
    0 (schema, check): '-' reads as standard output. It is refused, with the two ways to say
    what was meant; calibrate already refused it."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    if args[0] == "check":
        args = [args[0], str(root / args[1]), *args[2:]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.output == (
        f"error: cannot write the {what} to '-': this option writes a file; give its name "
        "(/dev/stdout for standard output; a file named '-' with its directory, $PWD/-)\n"
    )
    assert not (tmp_path / "-").exists()


def test_only_a_json_document_gets_json_escapes() -> None:
    """On a stdout that cannot encode it, a JSON document keeps its data through \\u escapes;
    a text report line that merely starts with a bracket (a design named '[é]roce.yaml') had been
    escaped as if it were JSON, where other text is spelled in ASCII or replaced."""
    from ibcalc.cli.output import encodable

    assert encodable('{"pattern": "µs"}\n', "ascii") == '{"pattern": "\\u00b5s"}\n'
    assert json.loads(encodable('["µs"]', "ascii")) == ["µs"]
    assert encodable("[é]roce.yaml: 2 µs ▏\n", "ascii") == "[?]roce.yaml: 2 us #\n"
    assert encodable("plain µs", "utf-8") == "plain µs"


def test_a_bug_ends_the_run_with_its_own_exit_code_and_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug had ended a run in Python's traceback and exit 1, which `check` in a CI gate reads
    as a failed requirement (a review): it is one line and exit 3; IBCALC_TRACEBACK=1 shows
    the traceback."""
    import ibcalc.cli.estimate as estimate_cli
    from ibcalc.cli.app import INTERNAL_ERROR_EXIT, main

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(estimate_cli, "estimate", broken)
    monkeypatch.delenv("IBCALC_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as ended:
        main(["allreduce", "--size", "1GB"])
    assert ended.value.code == INTERNAL_ERROR_EXIT == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: internal error in ibcalc ")
    assert "(RuntimeError: boom); this is a bug, not your input" in err
    monkeypatch.setenv("IBCALC_TRACEBACK", "1")
    with pytest.raises(SystemExit) as ended:
        main(["allreduce", "--size", "1GB"])
    assert ended.value.code == 3  # the traceback, and still exit 3 (it had exited 1)
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.rstrip().endswith("RuntimeError: boom")
    monkeypatch.setenv("IBCALC_TRACEBACK", "0")  # 0 is off
    with pytest.raises(SystemExit):
        main(["allreduce", "--size", "1GB"])
    assert capsys.readouterr().err.startswith("error: internal error in ibcalc ")


def test_ctrl_c_while_the_command_line_loads_exits_130_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The console script's entry imports the CLI inside its own frame: Ctrl-C during those
    imports (0.1-0.2 s) exits 130 with nothing said, as later (it had printed a 30-line
    traceback: review EC 5)."""
    import builtins

    import ibcalc.__main__ as entry

    real = builtins.__import__

    def interrupted(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ibcalc.cli":
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    with pytest.raises(SystemExit) as info:
        entry.main()
    assert info.value.code == 130
