"""The regression corpus: every hostile or surprising input, one line per case.

Each row of :data:`CASES` is one ``ibcalc`` command line, the exit code it must end with, a
fragment its stderr (or stdout) must hold, and what it guards. Inputs are the ``corpus-*``
files beside this module, files a row's ``setup`` makes in a temporary folder (FIFOs, a 4 MiB
list, a read-only target), and special files (``/dev/zero``, ``/dev/full``). ``{h}`` is this
folder, ``{tmp}`` the temporary one, ``{ex}`` ``examples/``.

Every row also checks: no traceback; exit 2 comes with ``error:`` lines only, each one line;
a refusal leaves stdout empty (but for rows marked ``reported``: nccl-check's report of a run
whose log contradicts an option) and ends within :data:`HANG_GUARD_S` (a guard against hangs and
runaway reads, not the speed target: ``benchmarks/refusals.py`` times every refusal against
the 1 s target of the README's "How fast is it?"). Rows marked ``sub`` run the installed entry
point in a subprocess, for what only a real process shows (a closed pipe, a full stdout, a
stderr that cannot be written: a refusal whose ``error:`` line is lost is still exit 2, with
stdout empty).

The older corpus, one file per hostile YAML (billion laughs, deep nesting, binary ...), is
``test_hostile.py`` in this folder; a few cases that are not one command line (signals during a
write, the log reader, memory of the 4 MiB refusal) follow the table as their own tests.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ibcalc.cli import main

HERE = Path(__file__).resolve().parent
#: An integer beyond a float's range (float() raises OverflowError on it).
DIGITS_311 = "1" + "0" * 310
ROOT = HERE.parents[1]
EXAMPLES = ROOT / "examples"
#: A refusal that takes longer has hung or read without limit (the speed target, 1 s, is
#: measured by benchmarks/refusals.py, not asserted in a test).
HANG_GUARD_S = 10.0
LONG = "1" * 100_000
ESC = "\x1b"
PASSING = "{ex}/aws-p5-efa.yaml"
SWEEP = ["sweep", "allreduce", "-b", "1M", "-e", "4M", "--system", "dgx-h100", "-N", "2"]


@dataclass(frozen=True)
class Case:
    """One command line of the corpus and what it must do."""

    id: str
    args: tuple[str, ...]
    code: int
    fragment: str
    guards: str
    where: str = "err"  # the stream holding `fragment`: err or out
    absent: str | None = None  # a text no stream may hold
    env: dict[str, str] = field(default_factory=dict)
    setup: str | None = None  # a function below that makes files in {tmp}
    run: str = "in"  # in: in-process main(); sub: a real process (pipes, full stdout)
    stdout: str = "capture"  # for run=sub: capture, closed (reader gone), full (/dev/full)
    # or shut (no stdout at all: `>&-`)
    stdin: str = "inherit"  # for run=sub: inherit, or shut (no stdin at all: `<&-`)
    stderr: str = "capture"  # for run=sub: capture, or as stdout: closed, full, shut
    # exit 2 with a report on stdout: nccl-check judges a run whose log contradicts an option
    # (the report shows what the log says; the option is wrong)
    reported: bool = False


def C(id_: str, args: str | list[str], code: int, fragment: str, guards: str, **kw: object) -> Case:
    """A row: ``args`` as one string split on spaces, or a list when an argument has one."""
    argv = tuple(args.split()) if isinstance(args, str) else tuple(args)
    return Case(id_, argv, code, fragment, guards, **kw)  # type: ignore[arg-type]


CASES: list[Case] = [
    # --- silent wrong answers: YAML 1.1 implicit types -----------------------------------------
    C(
        "yaml-ratio-2:1-is-a-ratio",
        "design show {h}/corpus-ratio-unquoted.yaml",
        0,
        "fed to the engine 2:1",
        "oversubscription: 2:1 unquoted is 2, not base-60 121",
        where="out",
    ),
    C(
        "yaml-nodes-base60",
        "check {h}/corpus-nodes-base60.yaml",
        2,
        ":2:1: nodes: '1:30' is not an integer",
        "nodes: 1:30 is refused, not read as 90",
    ),
    C(
        "yaml-nodes-hex",
        "check {h}/corpus-nodes-hex.yaml",
        2,
        "'0x10' is not an integer",
        "nodes: 0x10 is refused, not read as 16",
    ),
    C(
        "yaml-nodes-octal",
        "check {h}/corpus-nodes-octal.yaml",
        2,
        "'017' is not an integer",
        "nodes: 017 is refused, not read as octal 15",
    ),
    C(
        "yaml-nodes-0o",
        "check {h}/corpus-nodes-0o.yaml",
        2,
        "'0o17' is not an integer",
        "nodes: 0o17 is refused",
    ),
    C(
        "yaml-nodes-underscore",
        "check {h}/corpus-nodes-underscore.yaml",
        2,
        "without '_'",
        "nodes: 1_000 is refused, not read as 1000",
    ),
    C(
        "yaml-yes-is-not-true",
        "check {h}/corpus-nvls-yes.yaml",
        2,
        "nvls: 'yes' is not true or false",
        "nvls: yes is refused, not read as a boolean",
    ),
    C(
        "yaml-on-is-not-true",
        "check {h}/corpus-sharp-on.yaml",
        2,
        "fabric.sharp: 'on' is not",
        "fabric.sharp: on is refused, not read as a boolean",
    ),
    C(
        "yaml-inf-ratio",
        "check {h}/corpus-ratio-inf.yaml",
        2,
        "'.inf' is not a ratio",
        "oversubscription: .inf is refused, not infinity",
    ),
    C(
        "catalogue-base60-latency",
        "links --catalogue {h}/corpus-catalogue-base60.yaml",
        2,
        "latency: time '1:30' is not understood",
        "a catalogue latency 1:30 is not 90 s",
    ),
    C(
        "catalogue-yes-nvswitch",
        "links --catalogue {h}/corpus-catalogue-yes.yaml",
        2,
        "nvswitch: 'yes' is not true or false",
        "a catalogue's nvswitch: yes is refused",
    ),
    C(
        "cost-params-base60",
        "allreduce -s 1GB --cost-params {h}/corpus-cost-params-base60.yaml",
        2,
        "'6:5' is not a plain number",
        "a cost-parameter 6:5 is not base-60 365",
    ),
    C(
        "cost-params-inf",
        "allreduce -s 1GB --cost-params {h}/corpus-cost-params-inf.yaml",
        2,
        "'.inf' is not a plain number",
        "a cost parameter .inf is refused",
    ),
    C(
        "cost-params-message-ms",
        "alltoall -s 1KiB --system dgx-a100 -N 2 "
        "--cost-params {h}/corpus-cost-params-message-ms.yaml",
        2,
        "corpus-cost-params-message-ms.yaml:4:5: calibrated.per_message_latency: '2.3 ms' is "
        "more than 1 ms: not a plausible value",
        "an all-to-all's cost per message in ms (2.3 us mistyped) had priced 1 KiB at 48.5 ms",
    ),
    # --- silent wrong answers: settings dropped ------------------------------------------------
    C(
        "wan-links-without-sites",
        "allreduce -s 1GB --wan-links 8",
        2,
        "--wan-links '8' needs several sites",
        "--wan-links is not ignored without --sites",
    ),
    C(
        "sharp-on-roce-warns",
        "check {h}/corpus-sharp-roce.yaml",
        0,
        "WARN  {h}/corpus-sharp-roce.yaml:6:3  fabric.sharp: true, but roce-400g has no SHARP",
        "sharp: true on RoCE is a finding at fabric.sharp",
        where="out",
    ),
    C(
        "sharp-on-roce-json",
        "check {h}/corpus-sharp-roce.yaml --format json",
        0,
        '"line": 6',
        "the fabric.sharp warning is in the JSON report",
        where="out",
    ),
    C(
        "sharp-on-roce-github",
        "check {h}/corpus-sharp-roce.yaml --format github",
        0,
        "::warning file=",
        "the fabric.sharp warning is a GitHub annotation",
        where="out",
    ),
    C(
        "nvls-on-a100-warns",
        "check {h}/corpus-nvls-a100.yaml",
        0,
        "nvls: true, but nvlink3",
        "nvls: true without NVLink SHARP is a finding",
        where="out",
    ),
    C(
        "design-show-names-the-key",
        "design show {h}/corpus-sharp-roce.yaml",
        0,
        "SHARP requested",
        "design show says SHARP is not used, naming no CLI flag",
        where="out",
        absent="--sharp",
    ),
    C(
        "requirements-empty",
        "check {h}/corpus-requirements-empty.yaml",
        2,
        ":4:1: requirements: none given",
        "requirements: [] does not pass a CI gate vacuously",
    ),
    C(
        "requirements-missing",
        "check {h}/corpus-requirements-missing.yaml",
        2,
        "--allow-empty",
        "no requirements key does not pass a CI gate vacuously",
    ),
    C(
        "requirements-allow-empty",
        "check {h}/corpus-requirements-missing.yaml --allow-empty",
        0,
        "(no requirements)",
        "--allow-empty accepts a file without requirements",
        where="out",
    ),
    # --- silent wrong answers: sane ranges -----------------------------------------------------
    C(
        "catalogue-5e-324-Bps",
        "links --catalogue {h}/corpus-catalogue-denormal.yaml",
        2,
        "'5e-324 B/s' is out of range: allowed 1 MB/s",
        "a denormal bandwidth is refused at load",
    ),
    C(
        "catalogue-1e-300-GBps",
        "links --catalogue {h}/corpus-catalogue-tiny-gbps.yaml",
        2,
        "'1e-300 GB/s' is out of range",
        "a 1e-300 GB/s bandwidth is refused at load",
    ),
    C(
        "catalogue-efficiency",
        "links --catalogue {h}/corpus-catalogue-efficiency.yaml",
        2,
        "efficiency: 1e-300 is out of range: allowed 0.01 to 1",
        "an efficiency of 1e-300 is refused",
    ),
    C(
        "catalogue-latency-5s",
        "links --catalogue {h}/corpus-catalogue-latency.yaml",
        2,
        "allowed 0 to 1 s",
        "a 5 s link latency is refused",
    ),
    C(
        "cli-oversubscription-1e40",
        "allreduce -s 1GB --oversubscription 1e40",
        2,
        "'1e40' is more than 64:1",
        "--oversubscription 1e40 is refused",
    ),
    C(
        "cli-oversubscription-nan",
        "allreduce -s 1GB --oversubscription nan",
        2,
        "'nan' is not a finite ratio",
        "--oversubscription nan is refused",
    ),
    C(
        "cli-cross-leaf-2",
        "allreduce -s 1GB --cross-leaf 2",
        2,
        "out of range (0..1; see",
        "--cross-leaf above 1 is refused",
    ),
    C(
        "cli-size-2PiB",
        "allreduce -s 2PiB",
        2,
        "the limit is 1 PiB",
        "a size above 1 PiB is refused",
    ),
    C("cli-size-nan", "allreduce -s nan", 2, "NaN", "a NaN size is refused"),
    C(
        "cli-nccl-version-nan",
        "allreduce -s 1GB --nccl-version nan",
        2,
        "--nccl-version 'nan' is not a release number",
        "--nccl-version takes a release number only",
    ),
    C(
        "cli-nccl-version-long",
        ["sweep", "allreduce", "--nccl-version", "2." + "9" * 4000],
        2,
        "...' is not a release number",
        "a 4,000-digit --nccl-version is refused with its text cut",
    ),
    C(
        "design-time-1e-300",
        "check {h}/corpus-time-tiny.yaml",
        2,
        "allowed 1 ns to 1 year",
        "a max_time of 1e-300 s is refused",
    ),
    C(
        "design-busbw-denormal",
        "check {h}/corpus-busbw-denormal.yaml",
        2,
        "allowed 1 kB/s to 1 PB/s",
        "a min_busbw of 5e-324 B/s is refused",
    ),
    C(
        "design-size-400-digits",
        "check {h}/corpus-size-400-digits.yaml",
        2,
        "corpus-size-400-digits.yaml:5:17: requirements[0].allreduce.size: size '1000",
        "a size of 400 digits, beyond a float, is absurdly large (float() had raised "
        "OverflowError, a traceback and exit 1: a failed gate to CI)",
    ),
    C(
        "design-ratio-400-digits",
        "check {h}/corpus-ratio-400-digits.yaml",
        2,
        "corpus-ratio-400-digits.yaml:4:37: fabric.oversubscription:",
        "a spine ratio of 400 digits is refused, not an OverflowError",
    ),
    C(
        "train-seq-len-311-digits",
        f"train --model llama3-8b --seq-len {DIGITS_311}",
        2,
        f"--seq-len '{DIGITS_311[:200]}...' is out of range (1..100000000; see",
        "an option's range error quotes an int beyond a float as typed (its {:g} had raised)",
    ),
    C(
        "infer-batch-311-digits",
        f"infer --model llama3-8b --batch {DIGITS_311}",
        2,
        f"--batch '{DIGITS_311[:200]}...' is out of range (1..10000000; see",
        "the same for infer's counts",
    ),
    C(
        "design-gap-1e300",
        "check {h}/corpus-gap-huge.yaml",
        2,
        "must be at most 10000",
        "a gap target of 1e300 is refused",
    ),
    C(
        "design-dtype-fp33",
        "check {h}/corpus-dtype-fp33.yaml",
        2,
        "unknown dtype 'fp33' (did you mean fp32?)",
        "dtype fp33 is refused (the schema refuses it too)",
    ),
    # --- hangs and unbounded reads -------------------------------------------------------------
    C(
        "fifo-design",
        "check {tmp}/fifo.yaml",
        2,
        "is a FIFO (named pipe), not a regular file",
        "a FIFO as a design file does not hang",
        setup="fifo",
    ),
    C(
        "fifo-catalogue",
        "links --catalogue {tmp}/fifo.yaml",
        2,
        "is a FIFO",
        "a FIFO as --catalogue does not hang",
        setup="fifo",
    ),
    C(
        "fifo-env-catalogue",
        "links",
        2,
        "(named by IBCALC_CATALOGUE)",
        "a FIFO in IBCALC_CATALOGUE does not hang",
        setup="fifo",
        env={"IBCALC_CATALOGUE": "{tmp}/fifo.yaml"},
    ),
    # review BN: a blank entry had been read as a file named ' ' ('error:  : no such file')
    C(
        "blank-env-catalogue",
        "links --kind wan",
        0,
        "wan-10g",
        "a blank IBCALC_CATALOGUE names no file",
        where="out",
        env={"IBCALC_CATALOGUE": " ", "IBCALC_COST_PARAMS": " " + os.pathsep + " "},
    ),
    # review BN: a readable file of another kind had not said where it came from
    C(
        "design-file-in-env-catalogue",
        "links",
        2,
        "aws-p5-efa.yaml:1:1: a cluster-design file, not a catalogue file (named by "
        "IBCALC_CATALOGUE)",
        "a design file in IBCALC_CATALOGUE is named as the variable's",
        env={"IBCALC_CATALOGUE": "{ex}/aws-p5-efa.yaml"},
    ),
    C(
        "fifo-cost-params",
        "allreduce -s 1GB --cost-params {tmp}/fifo.yaml",
        2,
        "is a FIFO",
        "a FIFO as --cost-params does not hang",
        setup="fifo",
    ),
    C(
        "fifo-env-cost-params",
        "allreduce -s 1GB",
        2,
        "(named by IBCALC_COST_PARAMS)",
        "a FIFO in IBCALC_COST_PARAMS does not hang",
        setup="fifo",
        env={"IBCALC_COST_PARAMS": "{tmp}/fifo.yaml"},
    ),
    C(
        "fifo-measured",
        [*SWEEP, "--plot", "{tmp}/s.png", "--measured", "{tmp}/fifo.yaml"],
        2,
        "is a FIFO",
        "a FIFO as --measured does not hang",
        setup="fifo",
    ),
    C(
        "dev-zero-design",
        "check /dev/zero",
        2,
        "is a character device, not a regular file",
        "/dev/zero as a design is not read without end",
    ),
    C(
        "dev-urandom-catalogue",
        "links --catalogue /dev/urandom",
        2,
        "is a character device",
        "/dev/urandom as --catalogue is not read without end",
    ),
    C(
        "dev-zero-cost-params",
        "allreduce -s 1GB --cost-params /dev/zero",
        2,
        "character device",
        "/dev/zero as --cost-params is not read",
    ),
    C(
        "dev-zero-measured",
        [*SWEEP, "--plot", "{tmp}/s.png", "--measured", "/dev/zero"],
        2,
        "character device",
        "/dev/zero as --measured is not read",
    ),
    C(
        "directory-catalogue",
        "links --catalogue {tmp}",
        2,
        "is a directory, not a file",
        "a directory as --catalogue is refused",
    ),
    C(
        "big-flow-list-4MiB",
        "check {tmp}/big-flow.yaml",
        2,
        "more than 100000 YAML nodes",
        "a 4 MiB list of 2.1 million items is refused fast, with the true reason (no alias)",
        setup="big_flow",
        absent="alias",
    ),
    C(
        "big-block-list-600KB",
        "check {tmp}/big-block.yaml",
        2,
        "more than 100000 YAML nodes",
        "a 600 KB block list is refused fast",
        setup="big_block",
        absent="alias",
    ),
    C(
        "recursive-alias",
        "check {h}/corpus-recursive-alias.yaml",
        2,
        ":1:4: recursive alias",
        "an alias inside its own anchor is refused",
    ),
    # --- files the tool writes -----------------------------------------------------------------
    C(
        "junit-to-dev-null",
        f"check {PASSING} --format junit -o /dev/null",
        0,
        "",
        "-o /dev/null is written directly, the device node stays",
        setup="dev_null_check",
    ),
    C(
        "schema-to-dev-full",
        "schema -o /dev/full",
        2,
        "cannot write /dev/full: No space left on device",
        "a full disk is exit 2, not 0",
    ),
    C(
        "check-to-dev-full",
        f"check {PASSING} -o /dev/full",
        2,
        "No space left on device",
        "a full report target is exit 2",
    ),
    C(
        "schema-to-dev-stdout",
        "schema -o /dev/stdout",
        0,
        '"$schema"',
        "-o /dev/stdout writes to stdout, no rename over the device",
        where="out",
        run="sub",
    ),
    C(
        "output-is-catalogue",
        f"check {PASSING} --catalogue {{tmp}}/cat.txt -o {{tmp}}/cat.txt",
        2,
        "it is also an input of this run",
        "-o never overwrites --catalogue",
        setup="catalogue",
    ),
    C(
        "output-is-catalogue-link",
        f"check {PASSING} --catalogue {{tmp}}/cat.txt -o {{tmp}}/link.txt",
        2,
        "also an input",
        "-o through a symlink to an input is refused",
        setup="catalogue",
    ),
    C(
        "output-is-env-catalogue",
        f"check {PASSING} -o {{tmp}}/cat.txt",
        2,
        "also an input",
        "-o never overwrites an IBCALC_CATALOGUE file",
        setup="catalogue",
        env={"IBCALC_CATALOGUE": "{tmp}/cat.txt"},
    ),
    C(
        "output-is-design",
        "check {tmp}/d.txt -o {tmp}/d.txt",
        2,
        "also an input",
        "-o never overwrites the design it checks",
        setup="design_txt",
    ),
    C(
        "plot-is-measured",
        [*SWEEP, "--measured", "{tmp}/m.png", "--plot", "{tmp}/m.png"],
        2,
        "also an input",
        "--plot never overwrites --measured",
        setup="measured_png",
    ),
    C(
        "output-empty-name",
        ["schema", "-o", ""],
        2,
        "the file name is empty",
        "-o '' is one error line",
    ),
    # an empty input name: Path("") is ".", which had been reported as ".: is a directory"
    C(
        "input-empty-name-design",
        ["train", "--model", "llama3-8b", "--design", ""],
        2,
        "Invalid value for '--design': the file name is empty",
        "--design '' names the option, not '.'",
        absent="is a directory",
    ),
    C(
        "input-empty-name-check",
        ["check", ""],
        2,
        "the file name is empty",
        "check '' is one error line",
        absent="is a directory",
    ),
    C(
        "input-empty-name-catalogue",
        ["links", "--catalogue", ""],
        2,
        "Invalid value for '--catalogue': the file name is empty",
        "--catalogue '' (a list option) is refused per item",
        absent="is a directory",
    ),
    C(
        "input-empty-name-log",
        ["nccl-check", ""],
        2,
        "error: the file name is empty",
        "nccl-check '' has no empty name before a colon",
    ),
    C(
        "output-name-too-long",
        ["schema", "-o", "{tmp}/" + "a" * 300],
        2,
        "longer than 255 bytes",
        "a too long -o name is one error line",
    ),
    C(
        "output-no-directory",
        "schema -o {tmp}/no/such/dir/s.json",
        2,
        "no directory",
        "-o into a missing folder is refused before work",
    ),
    C(
        "output-trailing-slash",
        "schema -o {tmp}/newdir/",
        2,
        "it names a directory; give the file's name",
        "-o ending in a slash names a directory: it had written a file of that name (review DH)",
    ),
    C(
        "output-trailing-dot",
        "schema -o {tmp}/newdir/.",
        2,
        "it names a directory; give the file's name",
        "-o ending in /. names a directory: it had written a file newdir (review DK)",
    ),
    C(
        "output-plot-trailing-dot",
        "gap --system dgx-h100 --plot {tmp}/z.png/.",
        2,
        "cannot write {tmp}/z.png/.: it names a directory; give the file's name",
        "--plot is a typed Path, which dropped the /. before any check: z.png was written (DL)",
    ),
    C(
        "output-sweep-plot-trailing-slash",
        "sweep allreduce --system dgx-h100 -b 1M -e 2M --plot {tmp}/s.png/",
        2,
        "cannot write {tmp}/s.png/: it names a directory",
        "sweep --plot ending in a slash had written s.png (review DL)",
    ),
    C(
        "output-nccl-check-plot-dotdot",
        "nccl-check {h}/corpus-log-small-sizes.txt --plot {tmp}/n.png/..",
        2,
        "cannot write {tmp}/n.png/..: it names a directory",
        "nccl-check --plot ending in /.. had written n.png (review DL)",
    ),
    C(
        "calibrate-output-trailing-dot",
        "calibrate {h}/corpus-log-small-sizes.txt -o {tmp}/c.yaml/.",
        2,
        "cannot write {tmp}/c.yaml/.: it names a directory",
        "calibrate -o ending in /. had written c.yaml and its .cost-params file (review DL)",
    ),
    C(
        "output-fifo-no-reader",
        "schema -o {tmp}/fifo.json",
        2,
        "it is a FIFO that no process reads",
        "-o onto a FIFO nobody reads does not hang",
        setup="fifo",
    ),
    C(
        "output-unwritable-dir",
        "schema -o /proc/ibcalc-schema.json",
        2,
        "cannot write /proc/",
        "-o where no file can be created is refused before work, even as root",
    ),
    C(
        "plot-is-a-directory",
        "gap --plot {tmp}/dir.svg",
        2,
        "it is a directory",
        "--plot onto a directory is refused before work",
        setup="dir_svg",
    ),
    C(
        "plot-cannot-be-written",
        "gap --plot /proc/ibcalc-gap.svg",
        2,
        "cannot write",
        "a --plot that fails leaves stdout empty (the picture is written before the table)",
    ),
    # --- stdout --------------------------------------------------------------------------------
    C(
        "closed-pipe-check",
        f"check {PASSING}",
        141,
        "",
        "check | true ends quietly with 141, not 1 (a failing requirement)",
        run="sub",
        stdout="closed",
    ),
    C(
        "closed-pipe-links",
        "links",
        141,
        "",
        "links | head -1 ends quietly",
        run="sub",
        stdout="closed",
    ),
    C(
        "closed-pipe-help",
        "--help",
        141,
        "",
        "ibcalc --help | head -1 ends quietly, not with the toolkit's exit 1",
        run="sub",
        stdout="closed",
    ),
    C(
        "closed-pipe-failing-check",
        "check {ex}/failing-requirement.yaml",
        141,
        "",
        "a failing check | true is 141, told apart from its exit 1",
        run="sub",
        stdout="closed",
    ),
    C(
        "full-stdout-ascii-locale",
        f"check {PASSING}",
        2,
        "cannot write output: No space left",
        "check > /dev/full under an ASCII stdout encoding is exit 2, no traceback",
        run="sub",
        stdout="full",
        env={"PYTHONIOENCODING": "ascii"},
    ),
    C(
        "full-stdout-links",
        "links",
        2,
        "error: cannot write output: No space left on device",
        "links > /dev/full is one error line, exit 2",
        run="sub",
        stdout="full",
    ),
    C(
        "full-stdout-check",
        f"check {PASSING}",
        2,
        "cannot write output: No space left",
        "check > /dev/full is one error line, exit 2",
        run="sub",
        stdout="full",
    ),
    C(
        "full-stdout-json",
        "allreduce -s 1GB --format json",
        2,
        "No space left on device",
        "a JSON estimate > /dev/full is exit 2",
        run="sub",
        stdout="full",
    ),
    # --- echoed user text ----------------------------------------------------------------------
    C(
        "control-char-in-design",
        "check {h}/corpus-control-char.yaml",
        2,
        ":1:8: control character \\x07",
        "a raw control character is one error line with its line and column",
    ),
    C(
        "surrogate-key-position",
        "check {h}/corpus-surrogate-key.yaml",
        2,
        "corpus-surrogate-key.yaml:6:1: '\\ud800' holds a lone UTF-16 surrogate (half of a pair)",
        'a key written "\\ud800" was reported at the document\'s start, not at the key',
    ),
    C(
        "design-name-fakes-fail",
        "check {h}/corpus-name-newline.yaml",
        0,
        "ok\\nFAIL",
        "a newline in a design name cannot fake a FAIL line",
        where="out",
        absent="\nFAIL",
    ),
    C(
        "design-name-escape-code",
        "check {h}/corpus-name-newline.yaml",
        0,
        "\\x1b[32m",
        "an escape code in a design name is shown escaped",
        where="out",
        absent=ESC,
    ),
    C(
        "file-name-with-newline",
        ["check", "{tmp}/a\nFAIL x.yaml"],
        2,
        "a\\nFAIL x.yaml: no such file",
        "a newline in a file name stays in one error line",
    ),
    C(
        "escape-in-fabric",
        ["allreduce", "-s", "1GB", "--fabric", ESC + "[2Jndr"],
        2,
        "\\x1b[2Jndr",
        "an escape code in a value is echoed escaped",
        absent=ESC,
    ),
    C(
        "long-size-cut",
        ["allreduce", "-s", LONG],
        2,
        "...' is 100,000 characters long: no quantity is written in more than 100",
        "a 100,000-character size is echoed cut to 200 characters",
        absent="1" * 201,
    ),
    C(
        "long-fabric-cut",
        ["allreduce", "-s", "1GB", "--fabric", "x" * 100_000],
        2,
        "...'",
        "a 100,000-character name is echoed cut",
        absent="x" * 201,
    ),
    C(
        "catalogue-escape-code",
        "links --catalogue {h}/corpus-catalogue-escape.yaml",
        2,
        "control character \\x1b",
        "an escape code in a catalogue's text is refused at load",
    ),
    # --- numbers and settings the toolkit would take as they are ---------------------------------
    C(
        "train-tflops-0",
        "train --model llama3-8b --tflops 0",
        2,
        "--tflops '0' is out of range (0.001..1000000; see",
        "an out-of-range workload option is one line naming its flag, not pydantic's traceback",
    ),
    C(
        "train-tflops-nan",
        "train --model llama3-8b --tflops nan",
        2,
        "--tflops 'nan' is not a finite number",
        "NaN is named as such, not as 'less than or equal to 1000000'",
    ),
    C(
        "infer-batch-huge",
        "infer --model llama3-8b --batch 100000000",
        2,
        "--batch '100000000' is out of range (1..10000000; see",
        "infer's batch above its range",
    ),
    C(
        "checkpoint-part-1B",
        "checkpoint --storage aws-s3 --model llama3-8b --part-size 1B",
        2,
        "--part-size '1B' is out of range (at least 4 KiB; see",
        "a 1-byte object-store part (16e9 requests) is refused, as typed",
    ),
    # review BS: a ratio Fraction had built exactly (1e99999999), a count whose pattern
    # backtracked, a time field of zeros: each refused at once
    C(
        "ratio-huge-exponent",
        ["allreduce", "-s", "1GB", "-N", "4", "--oversubscription", "1e99999999:1"],
        2,
        "'1e99999999:1' is more than 64:1",
        "a 13-character ratio had run past a minute",
    ),
    # a ratio in digits past any float: too large, as its range says, where it had read "is not
    # a finite ratio" ('1e400') or "is not a down:up ratio" ('1e400:1'); 'inf' is no digits
    C(
        "ratio-past-a-float",
        ["allreduce", "-s", "1GB", "-N", "4", "--oversubscription", "1e400"],
        2,
        "'1e400' is more than 64:1",
        "a ratio written in digits past any float is too large",
    ),
    C(
        "ratio-past-a-float-down-up",
        ["allreduce", "-s", "1GB", "-N", "4", "--oversubscription", "1e400:1"],
        2,
        "'1e400:1' is more than 64:1",
        "a down:up ratio past any float is too large, not malformed",
    ),
    C(
        "ratio-inf-word",
        ["allreduce", "-s", "1GB", "-N", "4", "--oversubscription", "inf"],
        2,
        "'inf' is not a finite ratio",
        "the word inf stays not finite",
    ),
    C(
        "params-long",
        ["train", "--model", "llama3-8b", "--params", "1" * 120_000],
        2,
        "is 120,000 characters long: no quantity is written in more than 100",
        "a 120,000-character count had taken 7 s",
    ),
    # review BN: a time that rounds to nothing had read '0 ns: must be at least 1 ns'
    C(
        "train-backward-time-tiny",
        "train --model llama3-70b --backward-time 1e-30s",
        2,
        "--backward-time '1e-30s' is out of range (at least 1 ns; see",
        "a time far below the bound is shown as given, not as 0 ns",
    ),
    C(
        "nodes-underscore",
        "allreduce -s 1GB -N 1_000",
        2,
        "'1_000' is not a plain number",
        "the toolkit's int() reads 1_000 as 1000; ibcalc refuses separators everywhere",
    ),
    C(
        "nodes-fullwidth",
        ["allreduce", "-s", "1GB", "-N", "\uff14"],
        2,
        "is not a plain number",
        "a fullwidth digit (U+FF14) is not read as 4",
    ),
    C(
        "size-fullwidth",
        ["allreduce", "-s", "\uff15GB"],
        2,
        "is not understood",
        "the size parser takes ASCII digits only",
    ),
    C(
        "nccl-version-fullwidth",
        ["allreduce", "-s", "1GB", "--nccl-version", "\uff12.21.5"],
        2,
        "is not a release number",
        "a release number in ASCII digits only",
    ),
    C(
        "fabric-list-empty-name",
        [*SWEEP[:4], "--fabric", "ndr,,hdr"],
        2,
        "has an empty name between commas",
        "ndr,,hdr is a typo, not two fabrics",
    ),
    C(
        "gpus-per-process-3-of-8",
        "allreduce -s 1GB --gpus-per-process 3",
        2,
        "--gpus-per-process '3' does not divide the 8 GPUs of a node",
        "nccl-tests -g must divide a node's GPUs",
    ),
    C(
        "nccl-check-cut-device-lines-2MB",
        "nccl-check {tmp}/cut.txt",
        2,
        "no nccl-tests result rows found",
        "device lines cut by 400 KB of other output are not completed at every cut (quadratic)",
        setup="cut_device_lines",
    ),
    C(
        "nccl-check-dtype-fp33",
        "nccl-check {h}/corpus-log-implausible.txt --dtype fp33",
        2,
        "--dtype 'fp33' is not a known dtype",
        "a dtype the user names is refused as allreduce -d refuses it (the log's own is a note)",
    ),
    C(
        "nccl-check-implausible-row",
        "nccl-check {h}/corpus-log-implausible.txt",
        0,
        "faster than 1 PB/s, not a measurement; dropped",
        "a 0.001 us row (1 PB/s) is dropped with a note, not judged 6977803 % above expectation",
        where="out",
    ),
    C(
        "nccl-check-gpus-per-process-given",
        "nccl-check {h}/corpus-log-implausible.txt --gpus-per-process 1",
        0,
        "gpus_per_process = 1 [flag]: given by the caller (the log's header says nGpus 4)",
        "-g 1 was dropped as the default; -g 2 was listed beside the log's nGpus 4, which a "
        "finding then named as the cause of slow small sizes",
        where="out",
        absent="-g 4",
    ),
    C(
        "nccl-check-size-overflow-row",
        "nccl-check {h}/corpus-log-size-overflow.txt",
        0,
        "note: row at line 211: size 1e400 overflows to infinity, not a byte count; dropped",
        "a row whose size 1e400 overflows to infinity was skipped without a note",
        where="out",
    ),
    C(
        "design-ratio-overflow",
        "check {h}/corpus-ratio-overflow.yaml",
        2,
        "'1e400:1' is more than 64:1",
        "1e400:1 overflows float(); one line at file:line:col, not OverflowError, and it says the "
        "ratio is too large (it had read 'is not a down:up ratio such as 2:1')",
    ),
    C(
        "measured-busbw-1e300",
        [*SWEEP, "--plot", "{tmp}/p.png", "--measured", "{h}/corpus-measured-huge.csv"],
        2,
        "busbw_GBps '1e300' is above 1e+06, not a measurement",
        "a measured busbw of 1e300 GB/s is refused (it made matplotlib warn on stderr)",
    ),
    C(
        "one-node-network-options",
        "allreduce -s 1GB -N 1 --sharp --oversubscription 2",
        0,
        "--oversubscription not priced: one scale-up domain, no network for a ratio to taper",
        "network options on one node are named as unused, not dropped silently",
        where="out",
    ),
    C(
        "check-reads-cost-params-env",
        f"check {PASSING}",
        2,
        "no such file (named by IBCALC_COST_PARAMS)",
        "check honours IBCALC_COST_PARAMS as the estimate commands do",
        env={"IBCALC_COST_PARAMS": "{tmp}/missing.yaml"},
    ),
    C(
        "catalogue-pcie-host-unknown",
        "links --catalogue {h}/corpus-catalogue-pcie-host.yaml",
        2,
        "pcie_host 'pcie9' is not a link id (did you mean",
        "a link's pcie_host is checked against the catalogue (links show printed pcie9)",
    ),
    C(
        "rtt-1e-30s",
        "allreduce -s 1GB -N 2 --sites 2 --rtt 1e-30s",
        2,
        "--rtt '1e-30s' is under 1 ns",
        "a WAN round trip of 1e-30 s is a slip, not a latency",
    ),
    C(
        "distance-0km",
        "allreduce -s 1GB -N 2 --sites 2 --distance 0km",
        2,
        "--distance '0km' is under 1 m",
        "0 km between sites was taken while --rtt 0 was refused",
    ),
    C(
        "min-efficiency-nan",
        "nccl-check {h}/corpus-log-implausible.txt --min-efficiency nan",
        2,
        "--min-efficiency 'nan' is not a finite number (0..10; see",
        "NaN is named as such, not as 'less than or equal to 10'",
    ),
    C(
        "min-efficiency-overflow",
        "nccl-check {h}/corpus-log-implausible.txt --min-efficiency 1e999",
        2,
        "--min-efficiency '1e999' is not a finite number (0..10; see",
        "1e999 reads as infinity: named as not finite, as typed, not as out of range",
    ),
    C(
        "storage-link-slip",
        "checkpoint --storage ndr --model llama3-8b",
        2,
        "--storage 'ndr' is not a known storage: ndr is a scale-out link, not a storage entry "
        "(storage: nvmeof-target, ddn-ai400x2, aws-s3; give --storage-link ndr; "
        "see 'ibcalc checkpoint --help')",
        "a link's id where storage goes says what it is and the option it goes to",
    ),
    C(
        "storage-unknown",
        "checkpoint --storage zfs --model llama3-8b",
        2,
        "--storage 'zfs' is not a known storage (known: nvmeof-target, ddn-ai400x2, aws-s3; "
        "see 'ibcalc checkpoint --help')",
        "with no close storage name, the short storage catalogue is listed",
    ),
    C(
        "nccl-check-collective-given",
        "nccl-check {h}/corpus-log-implausible.txt --collective alltoall",
        2,
        "alltoall (given; the log says all_reduce)",
        "the report's headline names the collective the rows were judged as, not the log's; "
        "the option the log contradicts is wrong (exit 2, one error line)",
        where="out",
        reported=True,
    ),
    C(
        "cost-params-given-a-design",
        f"allreduce -s 1GB --cost-params {PASSING}",
        2,
        "aws-p5-efa.yaml:1:1: a cluster-design file, not a cost-parameter file",
        "a file of the wrong kind is one line, not one per unknown key",
    ),
    C(
        "catalogue-given-cost-params",
        "links --catalogue {ex}/../data/cost_params.yaml",
        2,
        "a cost-parameter file, not a catalogue file",
        "the cost parameters given as a catalogue",
    ),
    C(
        "design-given-json-schema",
        "check {ex}/ibcalc-design.schema.json",
        2,
        "ibcalc-design.schema.json:1:1: a JSON Schema (what ibcalc schema writes), not a "
        "cluster-design file",
        "the design's JSON Schema given as a design was one line per unknown key ($schema ...)",
    ),
    C(
        "catalogue-given-switches",
        "links --catalogue {ex}/../data/switches.yaml",
        2,
        "a switch list (the layout of data/switches.yaml), not a catalogue file",
        "the switch list given as a catalogue was one line per unknown key",
    ),
    C(
        "cost-params-given-pairings",
        "allreduce -s 1GB --cost-params {ex}/../data/pairings.yaml",
        2,
        "a pairings table for ibcalc gap (the layout of data/pairings.yaml), not a "
        "cost-parameter file",
        "the gap's pairings given as cost parameters was one line per unknown key",
    ),
    C(
        "cost-params-1-over-1e400",
        "allreduce -s 1GB --cost-params {h}/corpus-cost-params-ratio-tiny.yaml",
        2,
        "'1/1e400' is not a plain number",
        "1/1e400 was read as 0 (1 / inf)",
    ),
    C(
        "catalogue-bandwidth-without-unit",
        "links --catalogue {h}/corpus-catalogue-no-unit.yaml",
        2,
        "bandwidth 400 has no unit: write 400Gb/s or 50GB/s",
        "a bare 400 was refused as out of range, which hid the missing unit",
    ),
    C(
        "plot-empty-name",
        [*SWEEP, "--plot", ""],
        2,
        "--plot needs a file name ending in .png or .svg",
        "--plot '' reached the writer as '.' ('cannot write a plot to .')",
    ),
    C(
        "gate-judged-nothing",
        "nccl-check {h}/corpus-log-small-sizes.txt --min-efficiency 0.99",
        2,
        "--min-efficiency would judge nothing: no run has a row of 64 MiB or more",
        "a gate over a log without bandwidth rows passed with exit 0 (verdict: unknown)",
        where="err",
    ),
    C(
        "calibrate-output-dash",
        "calibrate {h}/corpus-log-small-sizes.txt -o -",
        2,
        "-o -: overrides are files",
        "-o - wrote files named '-' and '-.cost-params.yaml' in the working directory",
    ),
    C(
        "calibrate-output-unwritable",
        "calibrate {h}/corpus-log-small-sizes.txt -o /proc/ibcalc-calibrate.yaml",
        2,
        "cannot write /proc/ibcalc-calibrate.yaml: No such file or directory",
        "-o where no file can be created: the whole report was printed, then exit 2",
    ),
    C(
        "calibrate-output-name-too-long",
        ["calibrate", "{h}/corpus-log-small-sizes.txt", "-o", "{tmp}/" + "a" * 300],
        2,
        "a name in the path is longer than 255 bytes",
        "a 300-byte -o name was an OSError traceback (File name too long)",
    ),
    C(
        "checkpoint-replicas-over-gpus",
        "checkpoint --storage ddn-ai400x2 --model llama3-70b --replicas 1000 -N 2",
        2,
        "--replicas '1000' is more than the cluster's 16 GPUs",
        "1000 replicas restored on 16 GPUs (140 TB read) was priced",
    ),
    C(
        "train-pp-over-layers",
        "train --model llama3-8b --system dgx-h100 -N 8 --pp 64",
        2,
        "--pp '64' is more than the model's 32 layers",
        "64 pipeline stages of a 32-layer model were priced",
    ),
    C(
        "train-kv-heads-over-heads",
        "train --model llama3-8b --system dgx-h100 -N 2 --kv-heads 64",
        2,
        "--kv-heads '64' is more than llama3-8b's --heads 32",
        "more key/value heads than query heads were accepted",
    ),
    C(
        "train-sequence-parallel-split",
        "train --model llama3-8b --system dgx-h100 -N 2 --tp 8 --seq-len 1001 --sequence-parallel",
        2,
        "--seq-len '1001' does not split over --tp '8'",
        "a sequence that does not split over tp was priced as sequence-parallel",
    ),
    C(
        "infer-pp-over-layers",
        "infer --model llama3-8b --system dgx-h100 -N 5 --pp 33",
        2,
        "--pp '33' is more than the model's 32 layers",
        "33 serving stages of a 32-layer model were priced",
    ),
    C(
        "nccl-version-1x",
        "allreduce -s 1MB --system dgx-h100 --nccl-version 0.0.0",
        2,
        "ibcalc models NCCL 2.0 and later",
        "NCCL 0.0.0 was priced with 2.30.7's constants",
    ),
    C(
        "nccl-version-empty-suffix",
        "allreduce -s 1MB --system dgx-h100 --nccl-version 2.21.5-",
        2,
        "'2.21.5-' is not a release number",
        "a version with an empty suffix was read as 2.21.5",
    ),
    C(
        "pat-before-its-release",
        "allgather -s 1MiB --system aws-p5 -N 4 -g 1 --algo pat --nccl-version 2.21.5",
        2,
        "NCCL 2.21.5 predates pat (first in 2.23.4: NVIDIA/nccl v2.23.4-1 release notes",
        "PAT was priced for a release whose own note said it has no PAT",
    ),
    C(
        "rtt-bare-number",
        "train --model llama3-70b --tp 8 --nodes 16 --system dgx-h100 --sites 2 --rtt 2",
        2,
        "--rtt '2' needs a unit",
        "a bare --rtt 2 was read as 2 s (a 1000 ms WAN hop) while --distance 800 is refused",
    ),
    C(
        "backward-time-bare-number",
        "train --model llama3-70b --nodes 4 --system dgx-h100 --backward-time 2",
        2,
        "--backward-time '2' needs a unit",
        "a bare --backward-time 2 was read as 2 s",
    ),
    C(
        "gb200-other-node-shape",
        "allreduce -s 1GB --system gb200-nvl72 -g 8 -N 9",
        0,
        "its 72-GPU NVLink domain is not assumed",
        "a node shape other than the preset's dropped the rack-wide NVLink domain silently",
        where="out",
    ),
    C(
        "stdout-shut",
        "allreduce -s 1GB",
        2,
        "error: cannot write output: stdout is closed",
        "`>&-`: one line and exit 2, not AttributeError on None",
        run="sub",
        stdout="shut",
    ),
    C(
        "stderr-full-refusal",
        "allreduce --size -1",
        2,
        "",
        "`2>/dev/full`: a refusal whose error line cannot be written is still exit 2, not 1",
        run="sub",
        stderr="full",
    ),
    C(
        "stderr-reader-gone-refusal",
        "check {tmp}/missing.yaml",
        2,
        "",
        "stderr's reader gone (`2>&1 | true`): a refusal is exit 2, not 141",
        run="sub",
        stderr="closed",
    ),
    C(
        "stderr-shut-refusal",
        "allreduce --size -1",
        2,
        "",
        "`2>&-`: a refusal is exit 2",
        run="sub",
        stderr="shut",
    ),
    C(
        "stderr-full-after-a-plot",
        "gap --plot {tmp}/g.svg",
        0,
        "scale-up",
        "the 'plot written to' line failing on a full stderr made a finished run exit 1",
        where="out",
        run="sub",
        stderr="full",
    ),
    C(
        "stdin-shut",
        "nccl-check -",
        2,
        "'-' reads the log from stdin, which is closed",
        "`<&-`: one line and exit 2, not AttributeError on None",
        run="sub",
        stdin="shut",
    ),
    # --- consistency ---------------------------------------------------------------------------
    C(
        "ndr800-is-not-xdr",
        "allreduce -s 1GB --fabric ndr800",
        2,
        "--fabric 'ndr800' is not a known link (did you mean xdr800, ndr400",
        "ndr800 does not silently mean 800G XDR",
    ),
    C(
        "sweep-json-collective",
        "sweep alltoall -b 1M -e 1M --system dgx-h100 -N 2 --format json",
        0,
        '"collective": "alltoall"',
        "sweep JSON names all-to-all as estimate JSON does",
        where="out",
    ),
    C(
        "estimate-json-collective",
        "alltoall -s 1MB --system dgx-h100 -N 2 --format json",
        0,
        '"collective": "alltoall"',
        "estimate JSON names all-to-all as sweep JSON does",
        where="out",
    ),
    C(
        "gap-no-trailing-spaces",
        "gap",
        0,
        "scale-up",
        "gap prints no trailing spaces",
        where="out",
        absent=" \n",
    ),
    C(
        "links-no-trailing-spaces",
        "links",
        0,
        "links (bandwidth",
        "links prints no trailing spaces",
        where="out",
        absent=" \n",
    ),
    C(
        "checkpoint-params-1",
        "checkpoint --storage ddn-ai400x2 --params 1 -N 2",
        2,
        "--params '1' is fewer than a million parameters",
        "a one-parameter model was saved in 3.08e-05 us as a '1e-09B model'",
    ),
    C(
        "train-params-under-a-million",
        "train --params 999999 --system dgx-h100 -N 1",
        2,
        "--params '999999' is fewer than a million parameters",
        "a model of under a million parameters was trained across GPUs",
    ),
    C(
        "infer-ep-not-dividing-experts",
        "infer --model mixtral-8x7b --system dgx-h100 --ep 3",
        2,
        "--ep '3' does not divide the model's 8 experts",
        "infer spread Mixtral's 8 experts over 3 ranks (train refused it)",
    ),
]


# --- setups: files a row needs in {tmp} --------------------------------------------------------


def _fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "fifo.yaml")
    os.mkfifo(tmp / "fifo.json")  # an output target: -o refuses .yaml names before looking


def _big_flow(tmp: Path) -> None:
    # 4 MiB, 2.1 million items, no alias anywhere
    items = ",".join(["1"] * 2_090_000)
    (tmp / "big-flow.yaml").write_text(f"name: big\nnodes: 4\ndescription: [{items}]\n")
    assert (tmp / "big-flow.yaml").stat().st_size > 4_000_000


def _big_block(tmp: Path) -> None:
    (tmp / "big-block.yaml").write_text("name: big\nnodes: 4\nlist:\n" + "- 1\n" * 150_000)
    assert (tmp / "big-block.yaml").stat().st_size == 600_025


def _cut_device_lines(tmp: Path) -> None:
    # device-list lines 'cut by other output', each 400 KB long before its 'rest': every cut of
    # the first had been tried against the second (18.5 s for 5 of them); a real device line
    # is about 100 characters
    head = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n# Using devices\n"
    head += "#  Rank  0 Group  0 Pid 1 on h device  0 [0x1] GPU\n"
    cut = "#  Rank  1 Group  0 Pid 12" + "x" * 400_000 + "\n3 on h device  1 [0x2] GPU\n"
    (tmp / "cut.txt").write_text(head + cut * 5)


def _catalogue(tmp: Path) -> None:
    (tmp / "cat.txt").write_bytes((ROOT / "tests" / "data" / "ndr_override.yaml").read_bytes())
    (tmp / "link.txt").symlink_to(tmp / "cat.txt")


def _design_txt(tmp: Path) -> None:
    (tmp / "d.txt").write_bytes((EXAMPLES / "aws-p5-efa.yaml").read_bytes())


def _measured_png(tmp: Path) -> None:
    (tmp / "m.png").write_text("size_bytes,busbw_GBps\n1048576,10\n")


def _dir_svg(tmp: Path) -> None:
    (tmp / "dir.svg").mkdir()


def _dev_null_check(tmp: Path) -> None:
    del tmp
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


SETUPS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "big_flow": _big_flow,
    "big_block": _big_block,
    "cut_device_lines": _cut_device_lines,
    "catalogue": _catalogue,
    "design_txt": _design_txt,
    "measured_png": _measured_png,
    "dir_svg": _dir_svg,
    "dev_null_check": _dev_null_check,
}


def _fill(text: str, tmp: Path) -> str:
    return text.replace("{h}", str(HERE)).replace("{tmp}", str(tmp)).replace("{ex}", str(EXAMPLES))


def _snapshot(tmp: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in tmp.iterdir()
        if p.is_file() and not stat.S_ISFIFO(p.lstat().st_mode)
    }


def _run_in_process(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    elapsed = time.perf_counter() - start
    out, err = capsys.readouterr()
    return code, out, err, elapsed


def _run_subprocess(
    args: list[str], mode: str, env: dict[str, str], stdin: str = "inherit", stderr: str = "capture"
) -> tuple[int, str, str]:
    command = [sys.executable, "-c", "from ibcalc.cli import main; main()", *args]
    full_env = {**os.environ, **env}
    if stderr != "capture":
        return _run_without_stderr(command, full_env, stderr)
    if mode == "shut" or stdin == "shut":
        # the shell's `>&-` / `<&-`: the descriptor is not open at all in the child
        shut = [fd for fd, how in ((1, mode), (0, stdin)) if how == "shut"]
        done = subprocess.run(
            command,
            stdout=None if 1 in shut else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
            check=False,
            preexec_fn=lambda: [os.close(fd) for fd in shut] and None,
        )
        return done.returncode, done.stdout or "", done.stderr
    if mode == "full":
        with Path("/dev/full").open("w") as full:
            done = subprocess.run(
                command, stdout=full, stderr=subprocess.PIPE, text=True, env=full_env, check=False
            )
        return done.returncode, "", done.stderr
    if mode == "closed":
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first write, as `| true` ends at once
        done = subprocess.run(
            command, stdout=write, stderr=subprocess.PIPE, text=True, env=full_env, check=False
        )
        os.close(write)
        return done.returncode, "", done.stderr
    done = subprocess.run(command, capture_output=True, text=True, env=full_env, check=False)
    return done.returncode, done.stdout, done.stderr


def _run_without_stderr(command: list[str], env: dict[str, str], how: str) -> tuple[int, str, str]:
    """Run with a stderr that cannot be written: ``full`` (``2>/dev/full``), ``closed`` (a pipe
    whose reader is gone) or ``shut`` (``2>&-``); stdout is captured, stderr reads as empty."""
    if how == "shut":
        done = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            check=False,
            preexec_fn=lambda: os.close(2),
        )
        return done.returncode, done.stdout, ""
    if how == "full":
        with Path("/dev/full").open("w") as full:
            done = subprocess.run(
                command, stdout=subprocess.PIPE, stderr=full, text=True, env=env, check=False
            )
        return done.returncode, done.stdout, ""
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=write, text=True, env=env, check=False
    )
    os.close(write)
    return done.returncode, done.stdout, ""


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_case(
    case: Case,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if case.id.startswith(("fifo", "closed", "full")) and not hasattr(os, "mkfifo"):
        pytest.skip("POSIX only")  # pragma: no cover
    if "plot" in " ".join(case.args) or "--plot" in case.args:
        pytest.importorskip("matplotlib")
    if case.setup is not None:
        SETUPS[case.setup](tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "140")
    env = {key: _fill(value, tmp_path) for key, value in case.env.items()}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    args = [_fill(arg, tmp_path) for arg in case.args]
    before = _snapshot(tmp_path)
    if case.run == "sub":
        code, out, err = _run_subprocess(args, case.stdout, env, case.stdin, case.stderr)
        elapsed = 0.0
    else:
        code, out, err, elapsed = _run_in_process(args, capsys)
    assert code == case.code, f"exit {code}\nstdout: {out[:500]}\nstderr: {err[:500]}"
    assert "Traceback" not in out + err
    fragment = _fill(case.fragment, tmp_path)
    # whitespace flattened: where a heading wraps depends on how long the checkout's path is
    said = err if case.where == "err" else out
    assert " ".join(fragment.split()) in " ".join(said.split()), (out[:800], err[:800])
    if case.absent is not None:
        assert case.absent not in out + err
    if code == 2:
        lines = err.splitlines()
        assert lines or case.stderr != "capture", "a refusal says why"
        assert all(line.startswith("error: ") for line in lines), err
        assert case.reported or out == "", "a refusal leaves stdout empty"
        assert elapsed < HANG_GUARD_S, f"{case.id} took {elapsed:.2f} s"
    if case.code == 141:
        assert err == "", "a closed pipe ends quietly"
    # no output ever lands on an input, and no temporary file is left behind
    after = _snapshot(tmp_path)
    assert {name: after.get(name) for name in before} == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


def test_corpus_is_one_line_per_case_and_every_file_is_used() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    assert all(case.guards.strip() for case in CASES)
    used = {Path(arg).name for case in CASES for arg in case.args if "{h}/" in arg}
    present = {p.name for p in HERE.glob("corpus-*")}
    assert present == used


# --- cases that are not one command line ---------------------------------------------------------


_WRITER = """
import signal, sys, time
from pathlib import Path
from ibcalc.fileio import write_output

# the dispositions of ibcalc started from a terminal, whatever this test runner inherited (a
# background job ignores SIGINT, nohup SIGHUP); "nohup" ignores the hang-up
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_IGN if sys.argv[3] == "nohup" else signal.SIG_DFL)

def slow(handle):
    handle.write(b"x" * 1000)
    handle.flush()
    Path(sys.argv[2]).write_text("writing")
    time.sleep(30)

write_output(sys.argv[1], slow)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_during_a_write_leaves_no_temporary_file(tmp_path: Path, signum: int) -> None:
    """Guards: SIGTERM (or Ctrl-C, or a hang-up) while a file is written removes the hidden
    temporary file, keeps the old target, and still ends the process by that signal."""
    target, flag = tmp_path / "out" / "plot.svg", tmp_path / "flag"
    target.parent.mkdir()
    target.write_text("old")
    process = _start_writer(target, flag, "hup")
    assert [p.name for p in target.parent.iterdir() if p.name != "plot.svg"]  # the temp file
    os.kill(process.pid, signum)
    code = process.wait(timeout=30)
    assert sorted(p.name for p in target.parent.iterdir()) == ["plot.svg"]
    assert target.read_text() == "old"
    assert code in (-signum, 128 + signum, 130 if signum == signal.SIGINT else -signum)


def _start_writer(target: Path, flag: Path, hangup: str) -> subprocess.Popen[bytes]:
    """A process in the middle of writing ``target`` (it has written ``flag`` and sleeps)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target), str(flag), hangup],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not flag.exists():
        assert time.monotonic() < deadline, "the writer never started"
        time.sleep(0.02)
    return process


def test_a_hang_up_under_nohup_does_not_stop_a_write(tmp_path: Path) -> None:
    """Guards: a signal the user ignores (``nohup ibcalc ...``) stays ignored while a file is
    written: the hang-up neither ends the process nor removes its temporary file; a SIGTERM
    afterwards still cleans up."""
    target, flag = tmp_path / "out" / "plot.svg", tmp_path / "flag"
    target.parent.mkdir()
    target.write_text("old")
    process = _start_writer(target, flag, "nohup")
    os.kill(process.pid, signal.SIGHUP)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)  # still writing
    assert len(list(target.parent.iterdir())) == 2  # the target and the temporary file
    os.kill(process.pid, signal.SIGTERM)
    assert process.wait(timeout=30) in (-signal.SIGTERM, 128 + signal.SIGTERM)
    assert sorted(p.name for p in target.parent.iterdir()) == ["plot.svg"]
    assert target.read_text() == "old"


def test_the_log_reader_refuses_fifos_devices_and_big_files(tmp_path: Path) -> None:
    """Guards: nccl-check's log reader reads only regular files, capped at 64 MiB."""
    from ibcalc.errors import LogParseError
    from ibcalc.logs import MAX_LOG_BYTES, parse_file

    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    for path, words in (
        (fifo, "not a regular file"),
        (Path("/dev/zero"), "not a regular file"),
        (tmp_path, "is a directory, not a file"),
    ):
        with pytest.raises(LogParseError, match=words):
            parse_file(path)
    big = tmp_path / "big.log"
    with big.open("wb") as handle:
        handle.truncate(MAX_LOG_BYTES + 1)
    with pytest.raises(LogParseError, match="larger than 64 MiB"):
        parse_file(big)


#: A child process that loads one YAML file and prints the refusal, its seconds and the peak of
#: its own memory (VmHWM, kB); ru_maxrss would also count the parent's peak, which Linux
#: carries over fork and exec (pytest's, when it is large)
_LOAD_IN_CHILD = (
    "import sys, time\n"
    "from ibcalc.yamlio import load_yaml\n"
    "from ibcalc.errors import InputFileError\n"
    "start = time.perf_counter()\n"
    "try:\n"
    "    load_yaml(sys.argv[1])\n"
    "except InputFileError as exc:\n"
    "    print(exc)\n"
    "print(time.perf_counter() - start)\n"
    "status = open('/proc/self/status').read()\n"
    "print(next(l.split()[1] for l in status.splitlines() if l.startswith('VmHWM:')))\n"
)


def _load_in_child(path: Path) -> tuple[str, str, str]:
    """(refusal, seconds, peak kB) of :data:`_LOAD_IN_CHILD` on ``path``."""
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_IN_CHILD, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    message, seconds, peak_kib = done.stdout.splitlines()
    return message, seconds, peak_kib


def test_the_4_mib_list_is_refused_within_200_mb(tmp_path: Path) -> None:
    """Guards: the 2.1-million-item list is refused with an accurate reason in less than 200 MB
    (its time is measured by benchmarks/refusals.py)."""
    _big_flow(tmp_path)
    message, seconds, peak_kib = _load_in_child(tmp_path / "big-flow.yaml")
    assert re.search(r":3:\d+: document has more than 100000 YAML nodes$", message)
    assert float(seconds) < HANG_GUARD_S
    assert int(peak_kib) < 200 * 1024


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_reader_gone_mid_write_ends_with_141(unbuffered: str) -> None:
    """`ibcalc links --format json | head -c 4096`: the reader leaves after 4 KiB of about
    100 KB. With an unbuffered stdout (PYTHONUNBUFFERED=1, set on some CI runners) Python's
    text layer passed the write to the file once and dropped what the short write left: the
    output was cut with no error and the run exited 0 (`check`: 1, as for a failing
    requirement) instead of 141."""
    command = [sys.executable, "-c", "from ibcalc.cli import main; main()", "links"]
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    with subprocess.Popen(
        [*command, "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        head = proc.stdout.read(4096)
        proc.stdout.close()
        err = proc.stderr.read()
        code = proc.wait(timeout=60)
    assert head.startswith((b"{", b"["))
    assert (code, err) == (141, b"")


def test_an_unclosed_string_of_escaped_quotes_is_refused_within_200_mb(tmp_path: Path) -> None:
    """Guards: an unclosed double-quoted string of 500,000 escaped quotes (1.5 MB) is refused
    as a syntax error, in linear time and under 200 MB. The flow-depth scan's regular
    expression had backtracked over it from every escaped quote: 80 KB took 20 s, 4 MiB about
    500 MB (a review)."""
    path = tmp_path / "quotes.yaml"
    path.write_text('schema: ibcalc-catalogue/1\nlinks: "' + '\\"x' * 500_000 + "\n")
    message, seconds, peak_kib = _load_in_child(path)
    assert re.search(r":2:8: YAML syntax error: a quoted scalar starts here", message)
    assert float(seconds) < HANG_GUARD_S
    assert int(peak_kib) < 200 * 1024


@pytest.mark.parametrize(
    ("text", "deep"),
    [
        # brackets inside strings and comments do not count; an escaped quote does not end one
        ('a: "[[[[\\"[[[["\nb: 1\n', False),
        ("a: '[[[[' # [[[[\nb: 1\n", False),
        ('a: "\\\\"' + "[" * 70 + "\n", True),  # an escaped backslash, then the string ends
        ("a: " + "[" * 70 + "\n", True),
    ],
)
def test_the_flow_depth_scan_skips_strings_and_comments(text: str, deep: bool) -> None:
    from ibcalc.errors import InputFileError
    from ibcalc.yamlparse import _check_flow_depth

    if deep:
        with pytest.raises(InputFileError, match="nesting deeper than 64 levels"):
            _check_flow_depth("t.yaml", text)
    else:
        _check_flow_depth("t.yaml", text)


def test_an_output_named_from_a_removed_working_directory_is_one_refusal(tmp_path: Path) -> None:
    """A cron or CI job whose directory was removed under it (rm -rf, git clean): `check -o
    out.txt` had ended in a FileNotFoundError traceback and exit 1, the code of a failed gate
    (a review). It is refused in one line, exit 2, before any work."""
    gone = tmp_path / "gone"
    gone.mkdir()
    design = Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml"
    code = (
        "import os, sys\n"
        "os.chdir(sys.argv[1]); os.rmdir(sys.argv[1])\n"
        "from ibcalc.cli import main\n"
        "main(['check', sys.argv[2], '-o', 'out.txt'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(gone), str(design)], capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: cannot write out.txt: the working directory no longer exists (give an absolute "
        "path)\n"
    )
