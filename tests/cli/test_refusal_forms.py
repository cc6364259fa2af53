"""Refusals in the documented form, ``--option 'as typed' <reason> (see 'ibcalc CMD --help')``,
and counts read as written: each line is asserted whole, through typer's CliRunner."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import main_error
from ibcalc.cli import app

runner = CliRunner()

EST = ["allreduce", "--size", "1GB", "--system", "dgx-h100"]
TRAIN = ["train", "--model", "llama3-8b", "--system", "dgx-h100"]


def _refusal(args: list[str]) -> str:
    """The one line ``ibcalc args`` prints on stderr, having printed nothing else, exit 2."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    return result.stderr


@pytest.mark.parametrize(
    ("args", "same"),
    [
        # a whole number written with a power of ten is read as its digits, as '2.0' is 2
        ([*EST, "-N", "2e0"], [*EST, "-N", "2"]),
        ([*EST, "-N", "1e3"], [*EST, "-N", "1000"]),
        ([*EST, "--gpus-per-node", "4E0", "-N", "2.5e1"], [*EST, "-g", "4", "-N", "25"]),
        ([*EST, "--nics-per-node", "0.8e1"], [*EST, "--nics-per-node", "8"]),
        (
            [*EST, "--sites", "2e0", "--wan-links", "4e0"],
            [*EST, "--sites", "2", "--wan-links", "4"],
        ),
        (
            [*TRAIN, "-N", "4", "--tp", "8e0", "--pp", "2e0", "--dp", "2e0", "--zero", "1e0"],
            [*TRAIN, "-N", "4", "--tp", "8", "--pp", "2", "--dp", "2", "--zero", "1"],
        ),
    ],
)
def test_a_whole_number_with_an_exponent_is_that_count(args: list[str], same: list[str]) -> None:
    """'-N 1e3' had been refused as "not a whole number (write digits, e.g. 4)", which it is,
    while '-N 2.0' ran."""
    got = runner.invoke(app, args)
    want = runner.invoke(app, same)
    assert (got.exit_code, want.exit_code) == (0, 0), got.output
    assert got.stdout == want.stdout


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            [*EST, "-N", "1e-3"],
            "--nodes '1e-3' is not a whole number (write digits, e.g. 4; "
            "see 'ibcalc allreduce --help')",
        ),
        (
            [*EST, "-N", "1e7"],
            "--nodes '1e7' is out of range (1..1000000; see 'ibcalc allreduce --help')",
        ),
        (
            [*EST, "-N", "1e99999999"],
            "--nodes '1e99999999' is out of range (1..1000000; see 'ibcalc allreduce --help')",
        ),
        # the example lies in the option's range: --zero takes 0..3
        (
            [*TRAIN, "--zero", "three"],
            "--zero 'three' is not a whole number (write digits, e.g. 0; "
            "see 'ibcalc train --help')",
        ),
        (
            [*TRAIN, "--zero", "1.5"],
            "--zero '1.5' is not a whole number (write digits, e.g. 0; see 'ibcalc train --help')",
        ),
        (
            ["gap", "--tp", "two"],
            "--tp 'two' is not a whole number (write digits, e.g. 4; see 'ibcalc gap --help')",
        ),
    ],
)
def test_a_count_refused_says_so_truly(args: list[str], line: str) -> None:
    assert _refusal(args) == f"error: {line}\n"


@pytest.mark.parametrize(
    ("count", "words"),
    [
        ("1e99999999999999999999", "is out of range (1..1000000"),
        ("0e99999999999999999999", "is out of range (1..1000000"),
        ("1e-99999999999999999999", "is not a whole number (write digits, e.g. 4"),
    ],
)
def test_a_count_with_a_power_past_a_decimal_s_is_refused(count: str, words: str) -> None:
    """A power of ten past what a decimal holds (10^18) had ended in an internal error, exit
    3, where 1e99999999 is out of range."""
    line = f"--nodes '{count}' {words}; see 'ibcalc allreduce --help')"
    assert _refusal([*EST, "-N", count]) == f"error: {line}\n"


#: What a refusal of a runaway linear sweep says after its values.
RUNAWAY = (
    "is 1,024 sizes; a sweep runs at most 200 (a larger --stepbytes, or --stepfactor 2 or more; "
    "see 'ibcalc sweep --help')"
)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # the default step is not quoted as if typed; the factor 1 that adds it is
        (
            ["sweep", "allreduce", "-b", "1M", "-e", "1G", "-f", "1"],
            "--stepfactor '1' adds --stepbytes 1 MiB (its default) each step: from --minbytes "
            f"'1M' to --maxbytes '1G' {RUNAWAY}",
        ),
        (
            ["sweep", "allreduce", "-b", "1048576", "-e", "1GiB", "-f", "1", "-i", "1MiB"],
            f"--stepbytes '1MiB' from --minbytes '1048576' to --maxbytes '1GiB' {RUNAWAY}",
        ),
    ],
)
def test_a_runaway_sweep_quotes_its_values_as_typed(args: list[str], line: str) -> None:
    """It had said '1 MiB to 1 GiB in steps of --stepbytes 1 MiB is 1,024 sizes; ...': no
    option first, no value as typed, no --help hint."""
    assert _refusal(args) == f"error: {line}\n"


LOG_4_GPUS = (
    Path(__file__).resolve().parents[2]
    / "benchmarks/data/sweeps/13_allreduce_1node_4xH100_intranode.txt"
).as_posix()

#: Single values the library refuses, as a session shows them: each command line ('$ ') and
#: the line it prints. They had come unquoted and without the hint ('--gpus-per-process 3
#: does not divide ...'): the library gave no value to replace with the text typed. A value
#: not typed (the default --micro-batch 1, the derived dp 16, the preset's 8 GPUs) stays as
#: the library writes it.
SESSION = f"""\
$ allreduce --size 1GB --system dgx-h100 --gpus-per-process 3
error: --gpus-per-process '3' does not divide the 8 GPUs of a node: every process drives \
the same number of GPUs (nccl-tests -g; see 'ibcalc allreduce --help')
$ allreduce --size 1GB --system dgx-h100 --gpus-per-process 16
error: --gpus-per-process '16' is more than the 8 GPUs of a node; one process drives GPUs \
of its own node only (see 'ibcalc allreduce --help')
$ allreduce --size 1GB --system dgx-h100 --wan-links 2
error: --wan-links '2' needs several sites: WAN links join sites (give --sites 2 or more; \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --system dgx-h100 --wan wan-100g
error: --wan 'wan-100g' needs several sites: WAN links join sites (give --sites 2 or more; \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --system mi300x-8 -g 16
error: --gpus-per-node '16': xgmi-mi300x is a switchless mesh that joins at most 8 GPUs, \
each to each; more GPUs per node are no one scale-up domain (give 8 or fewer, and more \
--nodes; see 'ibcalc allreduce --help')
$ train --model llama3-8b --system dgx-h100 -N 2 --global-batch 7
error: --global-batch '7' is not a multiple of dp x --micro-batch = 16 x 1 = 16 sequences \
(see 'ibcalc train --help')
$ train --model llama3-8b --system dgx-h100 -N 2 --virtual-stages 2
error: --virtual-stages '2' interleaves pipeline stages: it needs --pp above 1 \
(see 'ibcalc train --help')
$ train --model llama3-8b --system dgx-h100 -N 4 --pp 4 --virtual-stages 2 --microbatches 2
error: --virtual-stages '2' needs at least pp = 4 micro-batches per step, not 2: the \
interleaved schedule runs them in groups of pp (see 'ibcalc train --help')
$ train --model mixtral-8x7b --system dgx-h100 --tp 8 -N 2 --ep 4
error: --ep '4' must divide the data-parallel degree, dp = 2 = GPUs / (tp x cp x pp) \
(expert groups are carved out of the data-parallel ranks; see 'ibcalc train --help')
$ train --model mixtral-8x7b --system dgx-h100 --tp 8 -N 4 --sites 2 --dp 4 --ep 4
error: --ep '4' must divide the data-parallel ranks each site holds, dp / sites = 4 / 2 = \
2: expert groups stay inside a site, and only data-parallel groups cross the WAN \
(see 'ibcalc train --help')
$ gap --intra xgmi-mi300x --inter roce-400g -g 16
error: --gpus-per-node '16': xgmi-mi300x is a switchless mesh that joins at most 8 GPUs, \
each to each; more GPUs per node are no one scale-up domain (give 8 or fewer; see 'ibcalc \
gap --help')
$ gap --system mi300x-8 -g 16
error: --gpus-per-node '16': xgmi-mi300x is a switchless mesh that joins at most 8 GPUs, \
each to each; more GPUs per node are no one scale-up domain (give 8 or fewer; see 'ibcalc \
gap --help')
$ gap --system gb200-nvl72 --tp 6
error: --tp '6' does not fill whole nodes of 4 GPUs of the scale-up domain: give a multiple \
of 4, or at most 4 (see 'ibcalc gap --help')
$ nccl-check {shlex.quote(LOG_4_GPUS)} -N 2 -g 2
error: --gpus-per-node '2' is fewer than the log's nGpus 4: one process drives GPUs of its \
own node only (--gpus-per-process prices another count; see 'ibcalc nccl-check --help')
"""


def _session(text: str) -> list[tuple[list[str], str]]:
    """The (arguments, printed line) pairs of a session's text."""
    lines = text.splitlines()
    return [
        (shlex.split(command.removeprefix("$ ")), f"{printed}\n")
        for command, printed in zip(lines[::2], lines[1::2], strict=True)
    ]


@pytest.mark.parametrize(("args", "line"), _session(SESSION))
def test_a_single_value_the_library_refuses_is_quoted_as_typed(args: list[str], line: str) -> None:
    assert _refusal(args) == line


#: Unknown names typed to an option: it had said "unknown dtype 'int' (did you mean int32?)",
#: naming no option and with no --help hint, unlike "--proto 'x' is not one of ...".
NAMES = """\
$ allreduce --size 1GB --dtype int
error: --dtype 'int' is not a known dtype (did you mean int32? see 'ibcalc allreduce --help')
$ sweep allreduce -d float8
error: --dtype 'float8' is not a known dtype (did you mean fp8? see 'ibcalc sweep --help')
$ links --kind scaleout
error: --kind 'scaleout' is not a known kind (did you mean scale-out, scale-up? \
see 'ibcalc links --help')
$ train --model llama3-7b
error: --model 'llama3-7b' is not a known model (did you mean llama3-70b, llama3-8b, \
llama3-405b? see 'ibcalc train --help')
$ checkpoint --storage aws-s4 --model llama3-8b
error: --storage 'aws-s4' is not a known storage (did you mean aws-s3? \
see 'ibcalc checkpoint --help')
"""


@pytest.mark.parametrize(("args", "line"), _session(NAMES))
def test_an_unknown_name_names_the_option_typed(args: list[str], line: str) -> None:
    assert _refusal(args) == line


#: Unknown links, systems and collectives typed to an option, under the alias typed, or as an
#: argument, named as the command's help names it: they had said "unknown link 'ndrr' (...)",
#: naming neither. The kind-mismatch refusal keeps its words, quoting the one name of a comma
#: list it refuses (the whole list, 'ndr,nvlink4', had been called a scale-up link); a name typed
#: to two options, or read from a file, keeps the library's. A preset typed for a link is sent
#: to --system where the command has one (gap had said what dgx-h100 is, not where it goes).
LINKS_AND_SYSTEMS = """\
$ allreduce --size 1GB --fabric ndrr
error: --fabric 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --inter=ndrr
error: --inter 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --system dgx-h10
error: --system 'dgx-h10' is not a known system (did you mean dgx-h100, dgx-h200, dgx-a100? \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --intra nvlnk4
error: --intra 'nvlnk4' is not a known link (did you mean nvlink4, nvlink5, nvlink3? \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --sites 2 --wan wan10gb
error: --wan 'wan10gb' is not a known link (did you mean wan10g, wan100g, wan1g? \
see 'ibcalc allreduce --help')
$ allreduce --size 1GB --host-pcie pcie9
error: --host-pcie 'pcie9' is not a known link (did you mean pcie7, pcie6, pcie5? \
see 'ibcalc allreduce --help')
$ checkpoint --model llama3-8b --storage aws-s3 --storage-link ndrr
error: --storage-link 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc checkpoint --help')
$ allreduce --size 1GB --fabric dgx-h100
error: --fabric 'dgx-h100' is not a known link: dgx-h100 is a system preset, not a link \
(give --system dgx-h100; see 'ibcalc allreduce --help')
$ gap --intra dgx-h100
error: --intra 'dgx-h100' is not a known link: dgx-h100 is a system preset, not a link \
(give --system dgx-h100; see 'ibcalc gap --help')
$ gap --intra nvlink4 --inter DGX-H100
error: --inter 'DGX-H100' is not a known link: dgx-h100 is a system preset, not a link \
(give --system dgx-h100; see 'ibcalc gap --help')
$ allreduce --size 1GB --system ndr
error: --system 'ndr' is not a known system: ndr is a scale-out link, not a system preset \
(give --fabric ndr; see 'ibcalc allreduce --help')
$ gap --system nvlink4
error: --system 'nvlink4' is not a known system: nvlink4 is a scale-up link, not a system preset \
(give --intra nvlink4; see 'ibcalc gap --help')
$ train --model llama3-8b --system wan-100g
error: --system 'wan-100g' is not a known system: wan-100g is a wan link, not a system preset \
(give --wan wan-100g; see 'ibcalc train --help')
$ checkpoint --model llama3-8b --storage ndr
error: --storage 'ndr' is not a known storage: ndr is a scale-out link, not a storage entry \
(storage: nvmeof-target, ddn-ai400x2, aws-s3; give --storage-link ndr; \
see 'ibcalc checkpoint --help')
$ checkpoint --model llama3-8b --storage wan-100g
error: --storage 'wan-100g' is not a known storage: wan-100g is a wan link, not a storage entry \
(storage: nvmeof-target, ddn-ai400x2, aws-s3; give --storage-link wan-100g; \
see 'ibcalc checkpoint --help')
$ checkpoint --model llama3-8b --storage nvlink4
error: --storage 'nvlink4' is not a known storage: nvlink4 is a scale-up link, not a storage entry \
(storage: nvmeof-target, ddn-ai400x2, aws-s3; see 'ibcalc checkpoint --help')
$ checkpoint --model llama3-8b --storage dgx-h100
error: --storage 'dgx-h100' is not a known storage: dgx-h100 is a system preset, not a storage \
entry (storage: nvmeof-target, ddn-ai400x2, aws-s3; give --system dgx-h100; \
see 'ibcalc checkpoint --help')
$ checkpoint --model llama3-8b --storage dgx-h100 --system dgx-b200
error: --storage 'dgx-h100' is not a known storage: dgx-h100 is a system preset, not a storage \
entry (storage: nvmeof-target, ddn-ai400x2, aws-s3; see 'ibcalc checkpoint --help')
$ checkpoint --model llama3-8b --storage ndr --storage-link hdr
error: --storage 'ndr' is not a known storage: ndr is a scale-out link, not a storage entry \
(storage: nvmeof-target, ddn-ai400x2, aws-s3; see 'ibcalc checkpoint --help')
$ allreduce --size 1GB --system ndr --fabric hdr
error: --system 'ndr' is not a known system: ndr is a scale-out link, not a system preset \
(see 'ibcalc allreduce --help')
$ links show dgx-h100
error: name 'dgx-h100' is not a known link: dgx-h100 is a system preset, not a link \
(see 'ibcalc links show --help')
$ links show ndrr
error: name 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc links show --help')
$ links --format json show ndrr
error: name 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc links show --help')
$ systems show dgx-h10
error: name 'dgx-h10' is not a known system (did you mean dgx-h100, dgx-h200, dgx-a100? \
see 'ibcalc systems show --help')
$ storage show aws-s4
error: name 'aws-s4' is not a known storage (did you mean aws-s3? \
see 'ibcalc storage show --help')
$ sweep allreduce --fabric ndr,ndrr
error: --fabric 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc sweep --help')
$ sweep allreduce --inter 'ndr, ndrr,'
error: --inter 'ndrr' is not a known link (did you mean ndr, ndr200, xdr? \
see 'ibcalc sweep --help')
$ allreduce --size 1GB --fabric nvlink4
error: --fabric 'nvlink4' is a scale-up link; use a scale-out link \
(see 'ibcalc allreduce --help')
$ sweep allreduce --fabric ndr,nvlink4
error: --fabric 'nvlink4' is a scale-up link; use a scale-out link \
(see 'ibcalc sweep --help')
$ sweep allreduce --inter 'ndr, NVLink-H100'
error: --inter 'NVLink-H100' (nvlink4) is a scale-up link; use a scale-out link \
(see 'ibcalc sweep --help')
$ sweep allreduce --fabric hdr,wan-10g,ndr
error: --fabric 'wan-10g' is a wan link; use a scale-out link (a WAN joins sites, not nodes; \
see 'ibcalc sweep --help')
$ allreduce --size 1GB --fabric ndrr --intra ndrr
error: unknown link 'ndrr' (did you mean ndr, ndr200, xdr?)
$ sweep allreducee -N 2 --fabric ndr
error: collective 'allreducee' is not a known collective (did you mean allreduce, reduce? \
see 'ibcalc sweep --help')
$ calibrate x.txt --collective scatter
error: --collective 'scatter' is not a known collective (did you mean reducescatter, \
allgather? see 'ibcalc calibrate --help')
"""


@pytest.mark.parametrize(("args", "line"), _session(LINKS_AND_SYSTEMS))
def test_an_unknown_link_or_system_names_the_option_or_argument(args: list[str], line: str) -> None:
    assert _refusal(args) == line


def test_an_unknown_link_in_a_design_file_keeps_its_place(tmp_path: Path) -> None:
    design = Path(__file__).resolve().parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    text = design.read_text(encoding="utf-8")
    assert "  link: ndr\n" in text
    path = tmp_path / "ndrr.yaml"
    path.write_text(text.replace("  link: ndr\n", "  link: ndrr\n"), encoding="utf-8")
    assert _refusal(["design", "show", str(path)]) == (
        f"error: {path}:13:3: fabric.link: unknown link 'ndrr' (did you mean ndr, ndr200, xdr?)\n"
    )


#: An option of another command typed to this one: difflib's guess had been an unrelated
#: option of this one ('train --prompt': "did you mean --recompute?").
SIBLINGS = """\
$ train --model llama3-8b --prompt 2
error: No such option: --prompt (--prompt is an option of 'ibcalc infer'; \
see 'ibcalc train --help')
$ infer --model llama3-8b --global-batch 3
error: No such option: --global-batch (--global-batch is an option of 'ibcalc train'; \
see 'ibcalc infer --help')
$ allreduce --size 1GB --model llama3-8b
error: No such option: --model (--model is an option of 'ibcalc train', 'ibcalc infer' and \
'ibcalc checkpoint'; see 'ibcalc allreduce --help')
$ links --nodes 2
error: No such option: --nodes (--nodes is an option of 'ibcalc allreduce' and 12 other \
commands; see 'ibcalc links --help')
$ train --model llama3-8b --prompt-len 2
error: No such option: --prompt-len (did you mean --recompute? see 'ibcalc train --help')
"""


@pytest.mark.parametrize(("args", "line"), _session(SIBLINGS))
def test_an_option_of_another_command_says_whose_it_is(
    args: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only an option spelt exactly as typed: '--prompt-len' is no command's option (infer's
    is --prompt), and keeps difflib's guess. Through the console entry point, the one boundary
    of the toolkit's usage errors (the runner shows the toolkit's own usage block)."""
    assert main_error(args, capsys) == line
