"""The CLI's one error boundary: every kind of bad input is one ``error:`` line and exit code 2.

Library errors go through :func:`ibcalc.cli.boundary.boundary` directly (each class once), usage
errors through the console entry point, where typer raises them. A failure here after a typer
upgrade means typer moved what the boundary relies on: ``typer.TyperException`` as the root of
its usage errors, or their ``ctx.command_path`` (see ibcalc/cli/boundary.py).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import typer
import typer.main

import ibcalc.errors as errors_module
from ibcalc.cli import app, main
from ibcalc.cli.boundary import FIELD_FLAGS, CliUsageError, boundary, guard
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    CatalogueError,
    ClusterError,
    DesignError,
    FabricError,
    FieldError,
    IbcalcError,
    InputFileError,
    LogParseError,
    OutputError,
    PlotError,
    SizeTooSmallError,
    UnitError,
    UnknownNameError,
    ValidationProblem,
    WorkloadError,
    WrongTypeError,
)
from ibcalc.textsafe import with_aside

SRC = Path(__file__).resolve().parents[2] / "src" / "ibcalc"
#: The range sweep's -f states: 1 to 2^50 (1 PiB over 1 B), with why at each end.
FACTOR_RANGE = (
    "1..1125899906842624; 1 adds --stepbytes each step, as nccl-tests' -f 1; a factor past "
    "2^50, 1 PiB over 1 B, reaches no second size"
)

TWO_PROBLEMS = [
    ValidationProblem("a.yaml", 3, 5, "unknown key 'colour'"),
    ValidationProblem("a.yaml", 9, 1, "duplicate key 'nodes'"),
]

#: (exception, the exact lines it must print after "error: ")
CASES: list[tuple[Exception, list[str]]] = [
    (IbcalcError("plain"), ["plain"]),
    (UnitError("size '1x' is not understood"), ["size '1x' is not understood"]),
    (SizeTooSmallError("size 1 B is too small"), ["size 1 B is too small"]),
    (UnknownNameError("link", "ndrr", ["ndr"]), ["unknown link 'ndrr' (did you mean ndr?)"]),
    (
        ClusterError("{nodes} 0 is out of range (1..9); see {cross_leaf_fraction}", field="nodes"),
        ["--nodes 0 is out of range (1..9); see --cross-leaf"],
    ),
    (FieldError("{factor} must be 2 or more", field="factor"), ["--stepfactor must be 2 or more"]),
    (
        WorkloadError("{ep} 3 does not divide {dp} 16; see {top_k}", field="ep"),
        ["--ep 3 does not divide --dp 16; see --top-k"],
    ),
    (AlgorithmNotApplicableError("nvls does not apply"), ["nvls does not apply"]),
    (FabricError("radix too small"), ["radix too small"]),
    (InputFileError(TWO_PROBLEMS), [str(p) for p in TWO_PROBLEMS]),
    (CatalogueError(TWO_PROBLEMS[:1]), [str(TWO_PROBLEMS[0])]),
    (DesignError(TWO_PROBLEMS), [str(p) for p in TWO_PROBLEMS]),
    (InputFileError([]), ["invalid input file"]),
    (PlotError("cannot write a plot to 'x.txt'"), ["cannot write a plot to 'x.txt'"]),
    (OutputError("out.xml: cannot write"), ["out.xml: cannot write"]),
    (LogParseError("not a log"), ["not a log"]),
    (
        WrongTypeError("spec must be a ClusterSpec, not dict"),
        ["spec must be a ClusterSpec, not dict"],
    ),
    (CliUsageError("--tp-size needs --tp"), ["--tp-size needs --tp"]),
    (typer.BadParameter("bad value"), ["Invalid value: bad value"]),
]


@pytest.mark.parametrize(("exc", "lines"), CASES, ids=[type(e).__name__ for e, _ in CASES])
def test_each_error_is_one_line_per_problem_and_exit_2(
    exc: Exception, lines: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(typer.Exit) as info, boundary():
        raise exc
    assert info.value.exit_code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"error: {line}" for line in lines]


def test_many_problems_of_one_input_print_a_screenful_and_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """5,000 unknown keys had printed 5,000 error lines (review CU): 19 of them, then how many
    more, under boundary() and from `check` alike; a report still has every one."""
    problems = [ValidationProblem("a.yaml", i + 2, 1, f"k{i}: unknown key") for i in range(50)]
    into: list[str] = []
    with pytest.raises(typer.Exit) as info, boundary(into):
        raise InputFileError(problems)
    assert info.value.exit_code == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: {p}" for p in problems[:19]] + [
        "error: ... and 31 more problems of the same input"
    ]
    assert into == [str(p) for p in problems]
    design = tmp_path / "many.yaml"
    design.write_text("".join(f"k{i}: 1\n" for i in range(5000)), encoding="utf-8")
    with pytest.raises(SystemExit) as code:
        main(["check", str(design)])
    assert code.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 20
    assert lines[-1].startswith("error: ... and ")
    assert lines[-1].endswith(" more problems of the same input")


def test_every_error_class_has_a_case() -> None:
    covered = {type(exc) for exc, _ in CASES}
    classes = {
        obj
        for obj in vars(errors_module).values()
        if inspect.isclass(obj) and issubclass(obj, IbcalcError)
    }
    assert classes - covered == set()


def test_a_workload_error_of_a_real_command_names_its_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Llama 3 70B is dense: expert parallelism is refused by ibcalc.workload (a WorkloadError
    # naming ep, experts and top_k), and the boundary names them as the command's flags
    with pytest.raises(SystemExit) as info:
        main(["infer", "--model", "llama3-70b", "--ep", "2", "--system", "dgx-h100"])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("error: --ep above 1 needs a mixture-of-experts model (--experts, --top-k)\n")


def test_other_exceptions_pass_through() -> None:
    # a bug is not bad input: it keeps its traceback
    with pytest.raises(ZeroDivisionError), boundary():
        _ = 1 / 0


def test_guard_keeps_the_signature_typer_reads() -> None:
    def command(size: int, *, fmt: str = "table") -> None:
        raise UnitError(f"{size} {fmt}")

    guarded = guard(command)
    assert inspect.signature(guarded) == inspect.signature(command)
    with pytest.raises(typer.Exit):
        guarded(1)


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["allreduce", "--size", "1GB", "--bogus"],
            "No such option: --bogus (see 'ibcalc allreduce --help')",
        ),
        (["links", "show"], "Missing argument 'name'. (see 'ibcalc links show --help')"),
        (["design", "bogus"], "No such command 'bogus'. (see 'ibcalc design --help')"),
        (
            ["sweep", "allreduce", "--algo", "fast"],
            "--algo 'fast' is not one of 'auto', 'ring', "
            "'tree', 'nvls', 'nvlstree', 'collnet', 'collnetchain', 'hierarchical', 'rhd', "
            "'pat', 'pairwise', 'pxn', 'p2p' (see 'ibcalc sweep --help')",
        ),
        # a choice close to a valid one is answered with it, as unknown names are
        (
            ["allreduce", "--size", "1GB", "--algo", "rign"],
            "--algo 'rign' is not one of 'auto', 'ring', "
            "'tree', 'nvls', 'nvlstree', 'collnet', 'collnetchain', 'hierarchical', 'rhd', "
            "'pat', 'pairwise', 'pxn', 'p2p' (did you mean ring? "
            "see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--host-cpu", "AMDD"],
            "--host-cpu 'AMDD' is not one of 'intel', 'amd', 'arm' "
            "(did you mean amd? see 'ibcalc allreduce --help')",
        ),
        # an unknown option gets a suggestion close without the dashes, or none: the toolkit
        # offered --nodes for --design
        (
            ["allreduce", "--size", "1GB", "--sytem", "dgx-h100"],
            "No such option: --sytem (did you mean --system? see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--design", "x.yaml"],
            "No such option: --design (--design is an option of 'ibcalc train' and 4 other "
            "commands; see 'ibcalc allreduce --help')",
        ),
        # a format named as an option is pointed at --format, where the command has that
        # format (review EB 9), and not where it has not (an estimate prints no CSV)
        (
            ["allreduce", "--size", "1GB", "--json"],
            "No such option: --json (did you mean --format json? see 'ibcalc allreduce --help')",
        ),
        (
            ["sweep", "allreduce", "--CSV"],
            "No such option: --CSV (did you mean --format csv? see 'ibcalc sweep --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--csv"],
            "No such option: --csv (see 'ibcalc allreduce --help')",
        ),
        # a word for writing a file is pointed at the command's -o, and offered nothing where
        # the command has none (calibrate --write had been answered "did you mean --inter?",
        # allreduce --write "--sites?")
        (
            ["calibrate", "x.txt", "--write", "o.yaml"],
            "No such option: --write (did you mean -o/--output FILE? "
            "see 'ibcalc calibrate --help')",
        ),
        (
            ["check", "x.yaml", "--save", "r.txt"],
            "No such option: --save (did you mean -o/--output FILE? see 'ibcalc check --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--write", "x"],
            "No such option: --write (see 'ibcalc allreduce --help')",
        ),
        # ... but where the command writes no file and the word begins one of its options, that
        # option (infer --output 512 had been offered nothing; --save still is)
        (
            ["infer", "--model", "llama3-8b", "--output", "512"],
            "No such option: --output (did you mean --output-tokens? see 'ibcalc infer --help')",
        ),
        (
            ["infer", "--model", "llama3-8b", "--out", "512"],
            "No such option: --out (did you mean --output-tokens? see 'ibcalc infer --help')",
        ),
        (
            ["infer", "--model", "llama3-8b", "--save", "x"],
            "No such option: --save (see 'ibcalc infer --help')",
        ),
        # a name where the group wants a command: its `show` takes names (was only 'No such
        # command')
        (
            ["links", "ndr"],
            "No such command 'ndr'. (did you mean 'ibcalc links show ndr'? "
            "see 'ibcalc links --help')",
        ),
        (
            ["systems", "dgx-h100"],
            "No such command 'dgx-h100'. (did you mean 'ibcalc systems show dgx-h100'? "
            "see 'ibcalc systems --help')",
        ),
        # a listing word: the group alone lists ('systems show list' had been offered, and
        # fails as well)
        (
            ["systems", "list"],
            "No such command 'list'. ('ibcalc systems' alone lists them; "
            "see 'ibcalc systems --help')",
        ),
        (
            ["storage", "ls"],
            "No such command 'ls'. ('ibcalc storage' alone lists them; "
            "see 'ibcalc storage --help')",
        ),
        # a word close to a command keeps the toolkit's own guess alone
        (
            ["links", "shwo"],
            "No such command 'shwo'. Did you mean 'show'? (see 'ibcalc links --help')",
        ),
        (
            ["allreduc"],
            "No such command 'allreduc'. Did you mean 'allreduce', 'reduce'? (see 'ibcalc --help')",
        ),
        # a command spelt with dashes, underscores or capitals is offered that command alone
        # (all-reduce had been offered 'allreduce', 'reduce'; nccl_check 'nccl-check', 'check';
        # links SHOW nothing)
        (
            ["all-reduce"],
            "No such command 'all-reduce'. Did you mean 'allreduce'? (see 'ibcalc --help')",
        ),
        (
            ["nccl_check"],
            "No such command 'nccl_check'. Did you mean 'nccl-check'? (see 'ibcalc --help')",
        ),
        (
            ["AllReduce"],
            "No such command 'AllReduce'. Did you mean 'allreduce'? (see 'ibcalc --help')",
        ),
        (
            ["links", "SHOW"],
            "No such command 'SHOW'. Did you mean 'show'? (see 'ibcalc links --help')",
        ),
    ],
)
def test_usage_errors_name_the_command_help(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = _refused(argv, capsys)
    assert out == ""
    assert err == f"error: {line}\n"


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        # a framework's name for a workload option is pointed at it (Megatron-LM's, vLLM's,
        # the JSON's prompt_tokens), where difflib had offered another quantity (--sequence-
        # parallel, --output-tokens) or nothing; and not on a command without that option
        (["train", "--pipeline-parallel-size", "4"], " (did you mean --pp? see"),
        (["train", "--tensor-model-parallel-size", "8"], " (did you mean --tp? see"),
        (["train", "--sequence-length", "8192"], " (did you mean --seq-len? see"),
        (["infer", "--prompt-tokens", "8192"], " (did you mean --prompt? see"),
        (["infer", "--context-parallel-size", "2"], " (see"),
        (["allreduce", "--size", "1GB", "--tensor-parallel-size", "8"], " (see"),
    ],
)
def test_a_frameworks_name_for_an_option_is_offered_that_option(
    argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = _refused(argv, capsys)
    assert (out, err) == (
        "",
        f"error: No such option: {argv[-2]}{hint} 'ibcalc {argv[0]} --help')\n",
    )


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        # the start of an option, or its words' starts, is offered the option: difflib had
        # offered nothing (`--nics` is 0.57 of `--nics-per-node`)
        (["allreduce", "--size", "1GB", "--nics", "2"], " (did you mean --nics-per-node? see"),
        (["allreduce", "--size", "1GB", "--nic", "2"], " (did you mean --nics-per-node? see"),
        (
            ["allreduce", "--size", "1GB", "--gpus", "8"],
            " (did you mean --gpus-per-node, --gpus-per-process? see",
        ),
        (["gap", "--gpus", "8"], " (did you mean --gpus-per-node? see"),
        (["sweep", "allreduce", "--nics_per", "2"], " (did you mean --nics-per-node? see"),
        (["sweep", "allreduce", "--step", "2"], " (did you mean --stepbytes, --stepfactor? see"),
        # a plural typed for a singular word; two letters that are a whole first word
        (["infer", "--gpus", "80GB"], " (did you mean --gpu-memory, --gpus-per-node? see"),
        (["train", "--kv", "8"], " (did you mean --kv-heads? see"),
        # the words' first letters
        (["allreduce", "--size", "1GB", "--gpn", "8"], " (did you mean --gpus-per-node? see"),
        (["train", "--mb", "2"], " (did you mean --micro-batch? see"),
        # a short option in the other case
        (["allreduce", "--size", "1GB", "-n", "2"], " (did you mean -N? see"),
        # and nothing for words that start no option, one letter, or too many options
        (["allreduce", "--size", "1GB", "--banana", "2"], " (see"),
        (["allreduce", "--size", "1GB", "--verbose"], " (see"),
        (["allreduce", "--size", "1GB", "--n", "2"], " (see"),
        (["allreduce", "--size", "1GB", "--lr", "2"], " (see"),
        (["allreduce", "--size", "1GB", "-X", "2"], " (see"),
        (["train", "--model", "llama3-8b", "--n", "2"], " (see"),
    ],
)
def test_a_short_form_of_an_option_is_offered_that_option(
    argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = next(a for a in reversed(argv) if a.startswith("-") and a not in ("--size", "--model"))
    out, err = _refused(argv, capsys)
    assert (out, err) == ("", f"error: No such option: {bad}{hint} 'ibcalc {argv[0]} --help')\n")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        # a refusal of two values quotes both as typed, as a refusal of one does (both had
        # come unquoted: '--hidden 64 is smaller than --heads 128')
        (
            ["train", "--params", "7B", "--layers", "32", "--hidden", "64", "--heads", "128"],
            "--hidden '64' is smaller than --heads '128': each attention head takes at least "
            "one dimension of the hidden state",
        ),
        (
            [
                *("train", "--params", "7B", "--layers", "32", "--hidden", "4096"),
                *("--heads", "32", "--experts", "4", "--top-k", "9"),
            ],
            "--top-k '9' is more than --experts '4'",
        ),
        (
            ["infer", "--model", "llama3-8b", "--prompt", "200000", "--output-tokens", "1000"],
            "--prompt '200000' + --output-tokens '1000' = 201,000 tokens is more than the "
            "131,072-token context of Llama 3 8B",
        ),
        (
            [
                *("train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "2"),
                *("--global-batch", "64", "--microbatches", "3"),
            ],
            "--microbatches '3' contradicts --global-batch '64', which gives 64 / (16 x 1) = "
            "4 micro-batches per step: give one of them",
        ),
        (
            [
                *("train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "3"),
                *("--cp", "3", "--seq-len", "1000"),
            ],
            "--seq-len '1000' does not split over --cp '3'",
        ),
        (
            ["sweep", "allreduce", "-b", "1G", "-e", "1M"],
            "--maxbytes '1M' is smaller than --minbytes '1G'",
        ),
        # a value the command line did not give stays as the library writes it
        (
            [
                *("train", "--model", "llama3-8b", "--system", "dgx-h100", "-N", "3"),
                *("--cp", "3"),
            ],
            "--seq-len 8192 does not split over --cp '3'",
        ),
    ],
)
def test_a_refusal_of_two_values_quotes_both_as_typed(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = _refused(argv, capsys)
    # the command's hint where the line begins with an option and its value quoted
    hint = f" (see 'ibcalc {argv[0]} --help')" if line.split(" ", 2)[1][:1] == "'" else ""
    assert (out, err) == ("", f"error: {line}{hint}\n")


@pytest.mark.parametrize(
    ("argv", "near"),
    [
        # a name the collective commands' --dtype reads (nccl-tests', numpy's) is offered
        # the workload option's own spelling of that type: half, float, float8 and float16
        # had been offered nothing
        (["infer", "--model", "llama3-8b", "--dtype", "half"], " (did you mean fp16? see"),
        (["infer", "--model", "llama3-8b", "--dtype", "float"], " (did you mean fp32? see"),
        (["infer", "--model", "llama3-8b", "--kv-dtype", "float8"], " (did you mean fp8? see"),
        (["train", "--model", "llama3-8b", "--grad-dtype", "float16"], " (did you mean fp16? see"),
        (["train", "--model", "llama3-8b", "--grad-dtype", "int"], " (did you mean int8? see"),
        # a type the option does not take, or no type, gets no guess
        (["train", "--model", "llama3-8b", "--grad-dtype", "float64"], " (see"),
        (["train", "--model", "llama3-8b", "--grad-dtype", "banana"], " (see"),
    ],
)
def test_a_dtype_choice_is_offered_the_type_it_names(
    argv: list[str], near: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = _refused(argv, capsys)
    choices = "'fp32', 'bf16', 'fp16', 'fp8'" + (", 'int8'" if argv[0] == "train" else "")
    assert (out, err) == (
        "",
        f"error: {argv[-2]} '{argv[-1]}' is not one of {choices}{near} "
        f"'ibcalc {argv[0]} --help')\n",
    )


#: The hint on a command whose one file is a picture, before its help's aside.
PICTURE_ONLY = " (the output goes to stdout; --plot FILE writes a .png or .svg picture; see"


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        # a word for writing the output, where the one file a command writes is a picture:
        # where the output goes and what --plot writes (--output results.csv had been offered
        # --plot FILE, which refuses a .csv)
        (["sweep", "allreduce", "--save", "x.png"], PICTURE_ONLY),
        (["gap", "--output", "x.png"], PICTURE_ONLY),
        (["gap", "-o", "x.png"], PICTURE_ONLY),
        (["sweep", "allreduce", "--output", "results.csv"], PICTURE_ONLY),
        (["nccl-check", "x.txt", "--output", "report.json"], PICTURE_ONLY),
        (["sweep", "allreduce", "--png", "x.png"], " (did you mean --plot FILE? see"),
        # a picture's word is offered --plot alone: calibrate's -o writes YAML
        (["calibrate", "x.txt", "--png", "x.png"], " (see"),
        # and --plot writes no PDF
        (["sweep", "allreduce", "--pdf", "x.pdf"], " (see"),
    ],
)
def test_a_word_for_writing_a_file_is_offered_plot_where_that_writes_it(
    argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """sweep and gap write their one file through --plot and have no -o: --save x.png and
    --output x.png had been offered nothing, where calibrate's and check's are offered -o."""
    out, err = _refused(argv, capsys)
    assert out == ""
    assert err == f"error: No such option: {argv[-2]}{hint} 'ibcalc {argv[0]} --help')\n"


#: A log nccl-check reads (its options are refused before it is).
LOG = str(
    Path(__file__).resolve().parents[2] / "benchmarks/data/sweeps/10_allreduce_2node_8xH100_ib.txt"
)
#: The start of an estimate's command line, and the hint its refusals end with.
EST = ["allreduce", "--size", "1GB", "--system", "dgx-h100"]
EST_HELP = "(see 'ibcalc allreduce --help')"
TRAIN = ["train", "--model", "llama3-8b", "--system", "dgx-h100"]
TRAIN_HELP = "(see 'ibcalc train --help')"
INFER = ["infer", "--model", "llama3-8b", "--system", "dgx-h100"]
INFER_HELP = "(see 'ibcalc infer --help')"
CHECKPOINT = ["checkpoint", "--storage", "aws-s3", "--model", "llama3-8b"]
CHECKPOINT_HELP = "(see 'ibcalc checkpoint --help')"
#: The same hints inside a refusal's own parenthetical, after "; " (one parenthetical a line)
EST_SEE = "see 'ibcalc allreduce --help')"
TRAIN_SEE = "see 'ibcalc train --help')"
INFER_SEE = "see 'ibcalc infer --help')"
CHECKPOINT_SEE = "see 'ibcalc checkpoint --help')"
WHOLE_EST = f"is not a whole number (write digits, e.g. 4; {EST_SEE}"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        # review EC 6: every refusal of an option's value quotes it as typed, as
        # '--size '1e400' is absurdly large' does: '--option 'value' what is wrong'
        # a choice, as the toolkit refuses it, in that form ('Invalid value for '--proto': ...')
        (
            [*EST, "--proto", "bogus"],
            f"--proto 'bogus' is not one of 'auto', 'll', 'll128', 'simple' {EST_HELP}",
        ),
        (
            [*TRAIN, "--recompute", ""],
            f"--recompute '' is not one of 'none', 'selective', 'full' {TRAIN_HELP}",
        ),
        (
            [*EST, "--oversubscription", "50%"],
            f"--oversubscription '50%' is not a ratio (write 2 or 2:1; {EST_SEE}",
        ),
        # a count read by ibcalc.cli.numbers: 'Invalid value for '--nodes' / '-N': not a whole
        # number' had not said what was given
        ([*EST, "-N", "1.5"], f"--nodes '1.5' {WHOLE_EST}"),
        # an exponent that leaves a fraction ('1e3' is 1000 nodes, as '2.0' is 2)
        ([*EST, "-N", "1.5e0"], f"--nodes '1.5e0' {WHOLE_EST}"),
        ([*EST, "-N", "0x10"], f"--nodes '0x10' {WHOLE_EST}"),
        ([*EST, "-N", ""], f"--nodes '' {WHOLE_EST}"),
        ([*EST, "--gpus-per-node", "nan"], f"--gpus-per-node 'nan' {WHOLE_EST}"),
        # a digit separator attached to its short option, past the check before parsing
        (
            [*EST, "-N1_000"],
            "--nodes '1_000' is not a plain number: write ASCII digits without separators "
            + EST_HELP,
        ),
        # out of range, as typed ('--nodes 0 is out of range' had been the library's, with the
        # int it was handed)
        ([*EST, "-N", "0"], f"--nodes '0' is out of range (1..1000000; {EST_SEE}"),
        ([*EST, "-N", "-0004"], f"--nodes '-0004' is out of range (1..1000000; {EST_SEE}"),
        # more digits than any count takes: out of range, the value cut where it is echoed
        (
            [*EST, "-N", "9" * 5000],
            f"--nodes '{'9' * 200}...' is out of range (1..1000000; {EST_SEE}",
        ),
        # a fraction: '50%' is answered with 0.5 ('not a number (write it in digits)' had not
        # said what was given); -1 is not echoed as -1.0, 1e400 not as inf
        (
            [*EST, "--cross-leaf", "50%"],
            "--cross-leaf '50%' is not a number (write the fraction in digits: 0.5 for 50%; "
            + EST_SEE,
        ),
        (
            [*EST, "--cross-leaf", "half"],
            f"--cross-leaf 'half' is not a number (write it in digits, e.g. 0.5; {EST_SEE}",
        ),
        ([*EST, "--cross-leaf", "-1"], f"--cross-leaf '-1' is out of range (0..1; {EST_SEE}"),
        (
            [*EST, "--cross-leaf-neighbour", "1e400"],
            f"--cross-leaf-neighbour '1e400' is not a finite number (0..1; {EST_SEE}",
        ),
        # the workload counts: the toolkit's range had read 'Invalid value for '--tp': must be
        # at least 1', the library's '--layers 0: must be at least 1' and '--layers
        # 99,999,...: must be at most 10,000,000'
        ([*TRAIN, "--tp", "0"], f"--tp '0' is out of range (1..1000000; {TRAIN_SEE}"),
        ([*TRAIN, "--layers", "0"], f"--layers '0' is out of range (1..10000000; {TRAIN_SEE}"),
        (
            [*TRAIN, "--layers", "9" * 26],
            f"--layers '{'9' * 26}' is out of range (1..10000000; {TRAIN_SEE}",
        ),
        ([*TRAIN, "--zero", "4"], f"--zero '4' is out of range (0..3; {TRAIN_SEE}"),
        (
            [*TRAIN, "--micro-batch", "0"],
            f"--micro-batch '0' is out of range (1..1000000; {TRAIN_SEE}",
        ),
        ([*INFER, "--batch", "0"], f"--batch '0' is out of range (1..10000000; {INFER_SEE}"),
        ([*INFER, "--kv-nics", "0"], f"--kv-nics '0' is out of range (1..256; {INFER_SEE}"),
        (
            ["checkpoint", "--storage", "aws-s3", "--model", "llama3-8b", "--prefixes", "0"],
            "--prefixes '0' is out of range (1..1000000; see 'ibcalc checkpoint --help')",
        ),
        # a number: '--tflops inf is not a finite number' had echoed what 1e400 reads as
        (
            [*TRAIN, "--tflops", "1e400"],
            f"--tflops '1e400' is not a finite number (0.001..1000000; {TRAIN_SEE}",
        ),
        ([*TRAIN, "--tflops", "0"], f"--tflops '0' is out of range (0.001..1000000; {TRAIN_SEE}"),
        (
            ["nccl-check", LOG, "--min-efficiency", "1e999"],
            "--min-efficiency '1e999' is not a finite number (0..10; "
            "see 'ibcalc nccl-check --help')",
        ),
        # the command's own ranges: sweep's -f ('--stepfactor must be 1 or more' had not said
        # what was given), gap's --tp
        (
            ["sweep", "allreduce", "-f", "0"],
            f"--stepfactor '0' is out of range ({FACTOR_RANGE}; see 'ibcalc sweep --help')",
        ),
        # above 2^50 no factor reaches a second size between 1 B and 1 PiB: a 20-digit factor
        # had been taken, a sweep of one size (review EK 1)
        (
            ["sweep", "allreduce", "-f", "99999999999999999999"],
            f"--stepfactor '99999999999999999999' is out of range ({FACTOR_RANGE}; "
            "see 'ibcalc sweep --help')",
        ),
        (
            ["sweep", "allreduce", "-f", str(2**50 + 1)],
            f"--stepfactor '{2**50 + 1}' is out of range ({FACTOR_RANGE}; "
            "see 'ibcalc sweep --help')",
        ),
        (
            ["sweep", "allreduce", "-f", "9" * 5000],
            f"--stepfactor '{'9' * 200}...' is out of range ({FACTOR_RANGE}; "
            "see 'ibcalc sweep --help')",
        ),
        (
            ["gap", "--system", "dgx-h100", "--tp", "1"],
            "--tp '1' is out of range (2..1024; see 'ibcalc gap --help')",
        ),
        # refused while the command runs, as the option's parser refuses a value: with the
        # command's --help hint, which they had lacked (review EK 4)
        (
            [*TRAIN, "-N", "2", "--gpu-memory", "0.9GB"],
            f"--gpu-memory '0.9GB' is out of range (at least 1 GB; {TRAIN_SEE}",
        ),
        (
            ["checkpoint", "--storage", "aws-s3", "--model", "llama3-8b", "--part-size", "1B"],
            "--part-size '1B' is out of range (at least 4 KiB; see 'ibcalc checkpoint --help')",
        ),
        (
            ["train", "--system", "dgx-h100", "--params", "350K", "--layers", "2"],
            "--params '350K' is fewer than a million parameters, too small a model to plan "
            f"communication for (a count takes a suffix: 70B, 350M; {TRAIN_SEE}",
        ),
        (
            ["allreduce", "-s", "10Gb"],
            "--size '10Gb' uses a lower-case 'b', which means bits; write 10GB for bytes "
            "(see 'ibcalc allreduce --help')",
        ),
        (
            ["sweep", "allreduce", "-f", "1", "-i", "0"],
            "--stepbytes '0' is zero; give at least one byte (see 'ibcalc sweep --help')",
        ),
        (
            [*EST, "--sites", "2", "--wan", "wan-100g", "--distance", "0.5m"],
            f"--distance '0.5m' is under 1 m: WAN sites are apart {EST_HELP}",
        ),
        # --storage-fabric is a rate: a bare number is said to be one, zero to be zero, as
        # --size 0 'is zero' ('0' and '100' had been 'not understood': review EK 3)
        (
            [*CHECKPOINT, "--storage-fabric", "0"],
            "--storage-fabric '0' is zero; give a rate above zero, with its unit (write bits as "
            f"400Gb/s or 400Gbps, bytes as 50GB/s; {CHECKPOINT_SEE}",
        ),
        (
            [*CHECKPOINT, "--storage-fabric", "100"],
            "--storage-fabric '100' is a number without a unit (write bits as 400Gb/s or "
            f"400Gbps, bytes as 50GB/s; {CHECKPOINT_SEE}",
        ),
        # a limit keeps its bare form, where a figure prints three digits ('1.00 MB/s')
        (
            [*CHECKPOINT, "--storage-fabric", "0.5MB/s"],
            f"--storage-fabric '0.5MB/s' is out of range (at least 1 MB/s; {CHECKPOINT_SEE}",
        ),
        (
            [*CHECKPOINT, "--storage-fabric", "0GB/s"],
            f"--storage-fabric '0GB/s' is zero; give a rate above zero {CHECKPOINT_HELP}",
        ),
        # options given together quote no one value: no hint, as before
        (
            [*EST, "--sites", "2", "--wan", "wan-100g", "--distance", "1km", "--rtt", "1ms"],
            "give --distance or --rtt, not both",
        ),
        # a digit separator or another script's digits, refused before parsing, named by the
        # option's long name: '-s '1_000' is not a plain number' had named -s where every other
        # refusal of a size says --size
        (
            ["allreduce", "-s", "1_000"],
            "--size '1_000' is not a plain number: write ASCII digits without separators "
            "(see 'ibcalc allreduce --help')",
        ),
        (
            [*EST, "-N", "\uff14"],
            "--nodes '\uff14' is not a plain number: write ASCII digits without separators "
            + EST_HELP,
        ),
        (
            ["sweep", "allreduce", "-b", "1_0"],
            "--minbytes '1_0' is not a plain number: write ASCII digits without separators "
            "(see 'ibcalc sweep --help')",
        ),
    ],
)
def test_a_refused_value_is_quoted_as_typed(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = _refused(argv, capsys)
    assert out == ""
    assert err == f"error: {line}\n"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        # aliases: the last had been taken without a word (HDR priced, 10.3 ms: a review)
        (
            ["allreduce", "--size", "1GB", "--fabric", "ndr", "--inter", "hdr"],
            "--fabric and --inter are one option, given twice: give it once",
        ),
        (
            ["allreduce", "--size", "256KiB", "--sharp", "--no-sharp"],
            "--sharp and --no-sharp are both given: give one",
        ),
        (["allreduce", "--size", "1GB", "--size=2GB"], "--size is given twice: give it once"),
        (
            ["sweep", "allreduce", "-N", "2", "--nodes", "4"],
            "-N and --nodes are one option, given twice: give it once",
        ),
        # a file named 'show' is no group's command (it had cleared what was seen: a review)
        (["nccl-check", "-N", "2", "show", "-N", "1"], "-N is given twice: give it once"),
        # a spelling the command does not have is the parser's to refuse, not 'one option'
        # (nccl-check has --dtype and no -d: a review)
        (
            ["nccl-check", "-", "--dtype", "fp32", "-dfp16"],
            "No such option: -d (see 'ibcalc nccl-check --help')",
        ),
        # values attached: the last had still been taken (a review)
        (["allreduce", "-s1GB", "-N2", "-N4"], "-N is given twice: give it once"),
        (
            ["allreduce", "-s", "1GB", "--nodes=2", "-N4"],
            "--nodes and -N are one option, given twice: give it once",
        ),
    ],
)
def test_an_option_given_twice_is_refused(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _refused(argv, capsys)[1] == f"error: {line}\n"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        # the alias typed is the name said (a review: --fabric had been told --inter)
        (
            ["sweep", "allreduce", "--fabric", ","],
            "--fabric ',' names no link (e.g. --fabric ndr,hdr; see 'ibcalc sweep --help')",
        ),
        (
            ["sweep", "allreduce", "--inter", ","],
            "--inter ',' names no link (e.g. --inter ndr,hdr; see 'ibcalc sweep --help')",
        ),
        (
            ["allreduce", "-s", "1G", "--fabric=nvlink4"],
            "--fabric 'nvlink4' is a scale-up link; use a scale-out link "
            "(see 'ibcalc allreduce --help')",
        ),
        # a workload command renders its refusal with its own names, the alias among them
        (
            ["train", "--model", "llama3-8b", "--fabric", "nvlink4"],
            "--fabric 'nvlink4' is a scale-up link; use a scale-out link "
            "(see 'ibcalc train --help')",
        ),
        (
            ["train", "--model", "llama3-8b", "--inter", "nvlink4"],
            "--inter 'nvlink4' is a scale-up link; use a scale-out link "
            "(see 'ibcalc train --help')",
        ),
        # --no-sharp is not an alias of --sharp: a field stays named by the option's first name
        (
            ["allreduce", "-s", "1G", "--no-sharp", "--fabric", "nvlink4"],
            "--fabric 'nvlink4' is a scale-up link; use a scale-out link "
            "(see 'ibcalc allreduce --help')",
        ),
    ],
)
def test_a_refusal_names_the_alias_typed(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _refused(argv, capsys)[1] == f"error: {line}\n"


def test_options_that_take_several_values_may_repeat(capsys: pytest.CaptureFixture[str]) -> None:
    # --cost-params and --catalogue take a file per use: two builtin-equivalent overrides
    params = Path(__file__).parents[2] / "data" / "cost_params.yaml"
    main(["allreduce", "--size", "1GB", "--cost-params", str(params), "--cost-params", str(params)])
    assert "all_reduce of 1 GB" in capsys.readouterr().out


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """What ``ibcalc argv`` prints (stdout, stderr), having exited with code 2."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    return capsys.readouterr()


def test_typer_usage_errors_derive_from_its_public_root() -> None:
    # the boundary catches typer.TyperException; every usage error must be one
    assert issubclass(typer.BadParameter, typer.TyperException)
    with pytest.raises(typer.TyperException) as info:
        app(args=["allreduce", "--bogus"], prog_name="ibcalc", standalone_mode=False)
    assert info.value.ctx.command_path == "ibcalc allreduce"  # type: ignore[attr-defined]


@pytest.mark.parametrize("argv", [[], ["design"]])
def test_no_command_prints_help_and_succeeds(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main(argv)
    out, err = capsys.readouterr()
    assert out.startswith("Usage: ibcalc")
    assert "Commands:" in out
    assert err == ""


def _option_flags() -> set[str]:
    flags: set[str] = set()

    def walk(command: object) -> None:
        for param in getattr(command, "params", []):
            flags.update(getattr(param, "opts", []))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return flags


def test_every_count_and_number_option_is_read_by_ibcalc() -> None:
    """Review EC 6: an int or float option the toolkit converts itself refuses '1.5' without
    quoting it ("not a whole number") and hands '1e400' on as inf; every one is read from its
    text by ibcalc.cli.numbers (--oversubscription by its ratio parser, which quotes it too)."""
    from ibcalc.cli.options import _ratio

    unread: list[str] = []

    def walk(command: object, path: str) -> None:
        for param in getattr(command, "params", []):
            descriptor = getattr(param, "type_descriptor", None)
            if getattr(descriptor, "annotation", None) not in (int, float):
                continue
            parser = descriptor.parameter_info.parser  # type: ignore[union-attr]
            if parser is not _ratio and getattr(parser, "__module__", "") != "ibcalc.cli.numbers":
                unread.append(f"{path} {param.opts[0]}")
        for name in getattr(command, "commands", {}):
            walk(command.commands[name], f"{path} {name}")  # type: ignore[attr-defined]

    walk(typer.main.get_command(app), "ibcalc")
    assert unread == []


def test_field_flags_name_every_cluster_field_by_a_real_option() -> None:
    assert set(ClusterSpec.model_fields) <= set(FIELD_FLAGS)
    missing = {field: flag for field, flag in FIELD_FLAGS.items() if flag not in _option_flags()}
    assert missing == {}


def test_no_private_typer_import_in_src() -> None:
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                private = any(p.startswith("_") for p in parts[1:])
                assert not (parts[0] in ("typer", "click") and private), f"{path}: {name}"


class _FullStream:
    """A stderr on a full device: every write fails with ENOSPC."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self) -> None:
        self.tried: list[object] = []

    def write(self, text: str) -> int:
        self.tried.append(text)
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(9, "not a real stream")


def test_a_refusal_is_exit_2_when_its_error_line_cannot_be_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The line is lost (there is nowhere to say so), the exit code is the refusal's."""
    full = _FullStream()
    monkeypatch.setattr("sys.stderr", full)
    with pytest.raises(SystemExit) as info:
        main(["allreduce", "--size", "-1"])
    assert info.value.code == 2
    assert "error: --size '-1' is negative (see 'ibcalc allreduce --help')\n" in full.tried


@pytest.mark.parametrize(
    ("message", "aside", "line"),
    [
        # a hint after a parenthetical goes inside it, after "; " or a question's own mark
        (
            "--tp '1' is out of range (2..1024)",
            " (see 'x --help')",
            "--tp '1' is out of range (2..1024; see 'x --help')",
        ),
        (
            "--algo 'rng' is not one of 'ring' (did you mean ring?)",
            " (see 'x --help')",
            "--algo 'rng' is not one of 'ring' (did you mean ring? see 'x --help')",
        ),
        # nested parentheses: the outer one at the end takes it
        ("a (b (c) d)", " (e)", "a (b (c) d; e)"),
        # nothing to merge into: the hint as it is, or nothing
        (
            "--size '-1' is negative",
            " (see 'x --help')",
            "--size '-1' is negative (see 'x --help')",
        ),
        ("--tp '1' is out of range (2..1024)", "", "--tp '1' is out of range (2..1024)"),
        # a call, not an aside; unbalanced text
        ("expected f(x)", " (e)", "expected f(x) (e)"),
        ("unknown 'a)'", " (e)", "unknown 'a)' (e)"),
        ("a b)", " (e)", "a b) (e)"),
    ],
)
def test_a_hint_after_a_parenthetical_goes_inside_it(message: str, aside: str, line: str) -> None:
    """'(did you mean ring?) (see ...)' and '(2..1024) (see ...)' had been two parentheticals
    in a row; with_aside makes them one."""
    assert with_aside(message, aside) == line


def test_a_file_named_like_a_number_with_separators_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A digit separator is refused in an option's number, not in a file's name: a log named
    '2024_06_01', a design '2024_06' or '-o 1_0' had been refused as "'2024_06_01' is not a
    plain number" (float() reads 2024_06_01 as 20240601)."""
    root = Path(__file__).resolve().parents[2]
    log = tmp_path / "2024_06_01"
    log.write_bytes(
        (root / "tests/logs/fixtures/06_allreduce_2node_16xH100_gcp_a3mega.txt").read_bytes()
    )
    design = tmp_path / "2024_06"
    design.write_bytes((root / "examples/roce-400g-2to1.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    main(["nccl-check", "2024_06_01", "--format", "json"])
    assert '"source": "2024_06_01"' in capsys.readouterr().out
    main(["check", "2024_06"])
    assert "5 requirements in 1 file: 5 passed, 0 failed" in capsys.readouterr().out
    main(["schema", "-o", "1_0"])
    assert (tmp_path / "1_0").read_text().startswith("{")
    # an option's number is still refused so
    _, err = _refused(["allreduce", "-s", "1GB", "-N", "1_0"], capsys)
    assert err.startswith("error: --nodes '1_0' is not a plain number")
