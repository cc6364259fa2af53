"""``ibcalc nccl-check`` and ``ibcalc calibrate``: read nccl-tests logs, check or calibrate.

Each reads its logs (:func:`ibcalc.logs.read_log`; ``-`` is standard input, at most 64 MiB),
takes the cluster options (flags override what the log says; ``--design`` gives the node shape),
calls :func:`ibcalc.logs.check.check_log` or :func:`ibcalc.logs.calibrate.calibrate_logs`, and
hands the result to :mod:`ibcalc.render.logs` (docs/nccl-check.md). The library is imported when
a command runs: it is the heaviest part of the package, and most commands do not need it.

Exit codes: ``nccl-check`` exits 0, or 1 when ``--min-efficiency`` is given and a size of
64 MiB or more falls below it (or a row fails validation, ``#wrong`` > 0), or 2 when a file
cannot be read, an option is wrong or the log contradicts it, or the gate has no run to judge
(the other files are still checked). ``calibrate`` exits 0, or 2 on unreadable input, a log
that contradicts an option, no run to fit, or an output it refuses to write.
"""

from __future__ import annotations

import math
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from ibcalc.cli.boundary import (
    FIELD_FLAGS,
    CliUsageError,
    as_typed,
    boundary,
    guard,
    say,
    say_wrapped,
)
from ibcalc.cli.numbers import range_words, real
from ibcalc.cli.options import (
    FORMAT_TABLE,
    CatalogueOpt,
    CostParamsOpt,
    DesignOpt,
    FormatOpt,
    NcclVersionOpt,
    catalogue_of,
    cluster_options,
    design_origins,
    output_name,
    params_of,
    plot_target,
)
from ibcalc.cli.output import emit, once, run_inputs
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.errors import FieldError, fill_fields
from ibcalc.listing import listed
from ibcalc.textsafe import printable

if TYPE_CHECKING:
    from ibcalc.catalogue.models import Catalogue
    from ibcalc.logs.parse import LogInput
    from ibcalc.logs.results import RowCheck, RunCheck

__all__ = ["CheckFormat", "register"]

#: The cluster options of both commands: what a log may not say, or may say wrongly.
LOG_FIELDS = (
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "intra",
    "inter",
    "system",
    "host_pcie",
    "host_cpu",
    "nvls",
    "sharp",
    "scale_up_domain",
    "gpus_per_process",
)
#: The fractions of the expected busbw ``--min-efficiency`` takes.
MIN_EFFICIENCY_RANGE = (0.0, 10.0)


class CheckFormat(StrEnum):
    """Output formats of ``nccl-check`` (:data:`ibcalc.render.logs.CHECK_FORMATS`)."""

    TABLE = "table"
    JSON = "json"
    GITHUB = "github"


FilesArg = Annotated[
    list[str],
    typer.Argument(help="nccl-tests / rccl-tests logs ('-' reads stdin).", metavar="FILE"),
]


CollectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--collective",
        help="Collective of every run, in place of what its log says (for logs that do not "
        "say; all_gather ...).",
    ),
]


def _stdin(path: str) -> BinaryIO | None:
    """stdin's byte stream for a log named ``-``; a one-line refusal when stdin is closed."""
    if path != "-":
        return None
    if sys.stdin is None or getattr(sys.stdin, "buffer", None) is None:
        raise CliUsageError("'-' reads the log from stdin, which is closed")
    stream: BinaryIO = sys.stdin.buffer
    return stream


def _distinct(logs: list[LogInput]) -> list[LogInput]:
    """``logs`` without a log whose text an earlier one already holds (``cat L | calibrate - L``
    weighed L's rows twice under two names); a note on stderr names what was dropped."""
    seen: dict[str, str] = {}
    kept: list[LogInput] = []
    for log in logs:
        first = seen.setdefault(log.text, log.label)
        if first != log.label:
            again, first = printable(log.label, None), printable(first, None)
            say_wrapped(f"note: {again} holds the same text as {first}; read once", again, first)
            continue
        kept.append(log)
    return kept


def _read_logs(files: list[str]) -> tuple[list[LogInput], list[dict[str, str]]]:
    """The logs of ``files`` that can be read (:func:`_distinct`), and each error line of those
    that cannot (source and message, as stderr has them) for a JSON report: each file is read
    inside its own boundary, so every unreadable one is named (its line printed on stderr)."""
    from ibcalc.logs import read_log

    logs: list[LogInput] = []
    errors: list[dict[str, str]] = []
    for path in files:
        lines: list[str] = []
        try:
            with boundary(lines):
                logs.append(read_log(path, stdin=_stdin(path)))
        except typer.Exit:
            errors += [{"source": str(path), "message": line} for line in lines]
    return _distinct(logs), errors


def _refuse_unknown_names(spec: ClusterSpec, catalogue: Catalogue) -> None:
    """Refuse a system or link the options (or ``--design``) name that the catalogue does not
    know, before any log is read: it is wrong whatever a log says, and each log's check had
    refused it again, one identical line per log."""
    from ibcalc.catalogue.load import find_link, find_system

    if spec.system is not None:
        find_system(catalogue, spec.system)
    for role in ("intra", "inter", "host_pcie"):
        name = getattr(spec, role)
        if name is not None:
            find_link(catalogue, name, role=role)


def _is_stdout(path: Path) -> bool:
    """True when ``path`` is the file stdout writes to (``-o /dev/stdout``, a terminal)."""
    try:
        return os.path.samestat(path.stat(), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):
        return False


def _plot_path(base: Path, index: int) -> Path:
    """``check.png``, then ``check-2.png`` ... for the runs after the first."""
    if index == 0:
        return base
    return base.with_name(f"{base.stem}-{index + 1}{base.suffix}")


@guard
@cluster_options(*LOG_FIELDS, from_log=True)
def nccl_check(
    files: FilesArg,
    *,
    cluster: ClusterSpec,
    design: DesignOpt = None,
    collective: CollectiveOpt = None,
    dtype: Annotated[
        str | None, typer.Option("--dtype", help="Element type, when the log does not say.")
    ] = None,
    min_efficiency: Annotated[
        float | None,
        typer.Option(
            "--min-efficiency",
            help="Gate: exit 1 when a size of 64 MiB or more reaches less than this fraction "
            f"of the expected busbw (e.g. 0.85; {range_words(*MIN_EFFICIENCY_RANGE)}), or when "
            "any row's #wrong (or the trailer's out-of-bounds count) is non-zero, whatever its "
            "size.",
            parser=real(*MIN_EFFICIENCY_RANGE, fraction=True),
        ),
    ] = None,
    fmt: Annotated[
        CheckFormat, typer.Option("--format", help="table, json or github.", case_sensitive=False)
    ] = CheckFormat.TABLE,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Write measured vs expected busbw to FILE (.png/.svg).",
            metavar="FILE",
            parser=output_name,
        ),
    ] = None,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    nccl_version: NcclVersionOpt = None,
) -> None:
    """Is my number normal? Compare nccl-tests / rccl-tests results with the model, per size,
    and say why they differ.

    The cluster comes from the log (nodes, ranks per node, GPU model, NCCL's own network
    output); flags and --design override it, and every inferred value is listed as an
    assumption. Exit 0; 1 when --min-efficiency fails; 2 when a file cannot be read, when a
    log contradicts --collective, --dtype or --system outright (reported, with an error line),
    or when --min-efficiency has no run to judge (no row of 64 MiB or more, none the model
    prices, or a rank count the log does not give).
    """
    from ibcalc.facade import parse_collective, parse_dtype
    from ibcalc.logs.check import check_log
    from ibcalc.logs.results import BANDWIDTH_MIN_BYTES
    from ibcalc.render.logs import plot_check, render_check_report

    # options first (--min-efficiency's range is its parser's): a wrong one stops the command
    # before any file is read
    cat = catalogue_of(catalogue)
    params = params_of(cost_params)
    if nccl_version is not None:
        params_of(cost_params, nccl_version)  # a release that is no release stops here
    spec, origins, names = design_origins(cluster, design, cat)
    _refuse_unknown_names(spec, cat)
    coll = parse_collective(collective) if collective is not None else None
    # nccl-tests' names (half, float ...) are reported under ibcalc's (fp16, fp32 ...)
    dtype = parse_dtype(dtype).value if dtype is not None else None
    files = once(files)
    inputs = run_inputs(files, catalogue, cost_params, design)
    target = plot_target(plot, inputs)
    checks: list[RunCheck] = []
    logs, errors = _read_logs(files)
    unreadable = bool(errors)
    rows = [r for log in logs for run in log.parsed.runs for r in run.rows]
    # a gate that would judge nothing must not pass (as check refuses a design without
    # requirements): refused before any work or report
    if (
        min_efficiency is not None
        and not unreadable
        and not any(r.size_bytes >= BANDWIDTH_MIN_BYTES for r in rows)
    ):
        raise CliUsageError(
            "--min-efficiency would judge nothing: no run has a row of 64 MiB or more"
        )
    for log in logs:
        lines: list[str] = []
        try:
            with boundary(lines):
                checks += check_log(
                    log.parsed,
                    log.text,
                    catalogue=cat,
                    params=params,
                    flags=spec,
                    collective=coll,
                    dtype=dtype,
                    nccl_version=nccl_version,
                    origins=origins,
                )
        except typer.Exit:
            unreadable = True
            errors += [{"source": log.label, "message": line} for line in lines]
    plotted = [c for c in checks if c.rows]
    # every picture's file (check.png, check-2.png ...) is checked before the first is written
    pictures: list[Path] = []
    for i in range(len(plotted) if target is not None else 0):
        assert target is not None
        checked = plot_target(_plot_path(target, i), inputs)
        assert checked is not None
        pictures.append(checked)
    # a flag the log contradicts outright (--collective, --system): every expectation of that
    # run is for something else, so it is an option that is wrong, as calibrate refuses it (it
    # had exited 0 beside its own high-confidence error; a review). Its error goes with the
    # unreadable files' in a JSON report, and it passes no gate
    contradicted: list[dict[str, str]] = []
    for check in checks:
        for finding in check.findings:
            if finding.kind == "flag_mismatch" and finding.severity == "error":
                remedy = f"; {finding.evidence[-1]}" if len(finding.evidence) > 1 else ""
                said = fill_fields(finding.cause.split(":")[0] + remedy, names)
                contradicted.append(
                    {"source": check.source, "message": f"run {check.run_index + 1}: {said}"}
                )
    errors += contradicted
    failed = _gate(checks, min_efficiency) if min_efficiency is not None else []
    # runs the gate does not judge, with why: not checked, or no row of 64 MiB or more with an
    # expectation (a log's NCCL_PROTO leaving no protocol the model prices had passed unsaid)
    failing = {id(c) for c, _ in failed}
    unjudged = {
        id(c): why for c in checks if id(c) not in failing and (why := _not_judged(c)) is not None
    }
    gate = None
    if min_efficiency is not None:
        # a file that could not be read passes no gate (exit 2), as a run not judged does not
        judged = [c for c in checks if id(c) not in unjudged]
        gate = {
            "min_efficiency": min_efficiency,
            "passed": bool(judged) and not failed and not unreadable and not contradicted,
            "failed_runs": [
                {"source": c.source, "run_index": c.run_index, "reasons": why} for c, why in failed
            ],
            "not_judged_runs": [
                {
                    "source": c.source,
                    "run_index": c.run_index,
                    # the flags' names, as the note on stderr has them (review DF)
                    "reason": fill_fields(unjudged[id(c)], as_typed(FIELD_FLAGS)),
                }
                for c in checks
                if id(c) in unjudged
            ],
        }
    report = render_check_report(checks, fmt, names=names, errors=errors, gate=gate)
    emit(report, None)
    for picture, check in zip(pictures, plotted, strict=False):
        picture_path = printable(plot_check(picture, check), None)
        say_wrapped(f"wrote {picture_path}", picture_path)
    if unreadable:
        # the runs that contradict an option are said too (their lines had been dropped)
        for error in contradicted:
            say(f"error: {printable(error['source'], None)} {error['message']}")
        raise typer.Exit(2)
    if min_efficiency is not None:
        for check in checks:
            if id(check) in unjudged:
                run = f"{printable(check.source, None)} run {check.run_index + 1}"
                say_wrapped(
                    f"note: {run} is not judged by "
                    f"--min-efficiency: {fill_fields(unjudged[id(check)], as_typed(FIELD_FLAGS))}",
                    run,
                )
        if all(c.verdict == "not_checked" for c in checks):
            raise CliUsageError("--min-efficiency would judge nothing: no run could be checked")
        if not judged:
            raise CliUsageError(
                "--min-efficiency would judge nothing: no run could be judged (the notes above "
                "say why for each)"
            )
        for check, reasons in failed:
            # the run's path and number stay on the verdict's line: grep '^FAIL .* run' finds it
            run = f"{printable(check.source, None)} run {check.run_index + 1}:"
            sizes = listed(reasons, "size")
            say_wrapped(f"FAIL {run} --min-efficiency {min_efficiency:g} fails at {sizes}", run)
    for error in contradicted:
        say(f"error: {printable(error['source'], None)} {error['message']}")
    if contradicted:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)


def _why_failed(row: RowCheck) -> str:
    """Why a row fails the gate: its efficiency, or that it is no valid measurement."""
    # one decimal: a gate of 0.8 failed "at 80%" for a row at 79.6 %
    if (row.wrong or 0) > 0:
        # the data check fails it, not its rate (review DH: "4.0% of the expected busbw, but
        # #wrong = 18134" had read as a rate failing, for a row above the gate)
        return f"#wrong = {row.wrong}"
    if row.implausible:
        return f"{row.efficiency:.3g}x the expected busbw: implausibly fast"
    # rounded down, as the verdict's whole percentage is: rounded to nearest, a row at 91.98 %
    # had read '92.0%' failing a gate of 0.92, beside a verdict of 91 % (review EC 4)
    return f"{math.floor(row.efficiency * 1000 + 1e-9) / 10:.1f}% of the expected busbw"


def _not_judged(check: RunCheck) -> str | None:
    """Why ``--min-efficiency`` cannot judge a run (None: it can): not checked, or no row of 64
    MiB or more with an expectation."""
    if check.verdict == "not_checked":
        return check.findings[0].cause if check.findings else "not checked"
    guessed = _ranks_guessed(check)
    if guessed is not None:
        return guessed
    if any(r.regime == "bandwidth" for r in check.rows):
        return None
    return next(
        (
            n
            for n in check.notes
            if n.startswith(("no expectation for any row", "no row of 64 MiB or more"))
        ),
        "no row of 64 MiB or more has an expectation",
    )


def _ranks_guessed(check: RunCheck) -> str | None:
    """Why ``check``'s rank count is the default's, where the log does not give it."""
    guessed = next(
        (a for a in check.assumptions if a.field == "ranks" and a.source == "default"), None
    )
    return None if guessed is None else f"{guessed.value} ranks assumed: {guessed.evidence}"


def _gate(checks: list[RunCheck], min_efficiency: float) -> list[tuple[RunCheck, list[str]]]:
    """Each run that fails ``--min-efficiency``, with why at each size."""
    from ibcalc.logs.results import fmt_size, gate_failures

    failed = []
    for check in checks:
        guessed = _ranks_guessed(check) is not None
        if guessed and not any(f.kind in ("data_corruption", "unmeasured") for f in check.findings):
            # judged against a rank count the log does not give: not judged. Wrong results
            # and rows that are no measurement fail whatever the cluster; rows implausibly
            # fast for the guessed one do not (a healthy 1 x 8 sendrecv table had failed as
            # 'corrupt' against 2 x 8: review DD)
            continue
        rows = gate_failures(check, min_efficiency)
        if guessed:
            # wrong results fail it, but its efficiencies are against a guessed cluster: only
            # the rows nccl-tests found wrong are named, without an efficiency (review DE)
            rows = [r for r in rows if (r.wrong or 0) > 0]
        # a run nccl-tests itself found wrong (its trailer's out-of-bounds count) passes no gate
        corrupt = check.verdict == "corrupt" and not rows and not check.unmeasured
        if not rows and not check.unmeasured and not corrupt:
            continue
        why = [
            f"{fmt_size(r.size_bytes)} (#wrong = {r.wrong})"
            if guessed
            else f"{fmt_size(r.size_bytes)} ({_why_failed(r)})"
            for r in rows
        ]
        why += [
            f"{fmt_size(size)} (line {line}: no measurement)" for size, line in check.unmeasured
        ]
        if corrupt:
            why.append("every size (nccl-tests' own check found wrong results)")
        failed.append((check, why))
    return failed


@guard
@cluster_options(*LOG_FIELDS, from_log=True)
def calibrate_command(
    files: FilesArg,
    *,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the override: links to FILE (a --catalogue file), model constants to "
            "FILE's name with .cost-params (an IBCALC_COST_PARAMS file).",
            metavar="FILE",
            parser=output_name,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite existing output files.")
    ] = False,
    cluster: ClusterSpec,
    design: DesignOpt = None,
    fmt: FormatOpt = FORMAT_TABLE,
    catalogue: CatalogueOpt = None,
    cost_params: CostParamsOpt = None,
    collective: CollectiveOpt = None,
    nccl_version: NcclVersionOpt = None,
) -> None:
    """Fit the model to your own nccl-tests runs: transport latencies, link efficiencies, NVLS
    efficiency, an all-to-all's cost per message; report the fit and what the runs cannot
    determine; write an override file.

    Exit 0; 2 when a file cannot be read, when a log contradicts --collective, --system or
    --inter (its GPU or its network) outright, or does not give a run's rank count (nothing is
    fitted), when no run can be fitted, or when the output cannot be written or would overwrite
    a file (use --force; an input is never overwritten).
    """
    from ibcalc.facade import parse_collective
    from ibcalc.logs.calibrate import (
        calibrate_logs,
        check_override_target,
        cost_params_path,
        special_target_refusal,
        write_override,
    )
    from ibcalc.logs.parse import STDIN, STDIN_LABEL
    from ibcalc.render.logs import render_calibration_report, render_unfitted_calibration

    # every file the run reads (logs, --catalogue, --cost-params, --design and the files the
    # environment names) is an input an override must never replace; a log given twice would
    # weigh its rows twice in the fit
    files = once(files)
    inputs = run_inputs(files, catalogue, cost_params, design)
    if output is not None:
        if output == Path():  # the toolkit turns an empty -o '' into '.'
            raise CliUsageError("-o needs a file name (the catalogue override to write)")
        # refused before the fit, not after it
        check_override_target(output, force=force, inputs=inputs)
    cat = catalogue_of(catalogue)
    params = params_of(cost_params)
    if nccl_version is not None:
        params_of(cost_params, nccl_version)  # a release that is no release stops here
    # a design file's values are listed as the design's, not as flags (as nccl-check lists them)
    spec, origins, names = design_origins(cluster, design, cat)
    _refuse_unknown_names(spec, cat)
    coll = parse_collective(collective) if collective is not None else None
    logs, errors = _read_logs(files)
    if errors:
        # nothing is fitted on the rest (a fit without a file's runs is not the one asked for),
        # but a JSON report still says which files could not be read, as nccl-check's does (it
        # had printed nothing, the errors on stderr alone)
        if fmt == "json":
            # the inputs named as a fitted report names them ('<stdin>' for '-')
            named = [STDIN_LABEL if f == STDIN else f for f in files]
            emit(render_unfitted_calibration(named, errors), None)
        raise typer.Exit(2)
    try:
        result = calibrate_logs(
            logs,
            spec,
            params,
            cat,
            collective=coll,
            origins=origins,
            nccl_version=nccl_version,
        )
    except FieldError as exc:
        # a refusal's advice names the design's keys where they set a field ('re-run without
        # r.yaml's system', as nccl-check says; it had said 're-run without --system')
        raise FieldError(exc.render(as_typed(names)), field=exc.field) from None
    written: list[Path] = []
    to_stdout = output is not None and _is_stdout(output)
    # an earlier run's constants beside -o, which write_override removes with --force where
    # this fit has none
    companion = cost_params_path(output) if output is not None and not to_stdout else None
    had_companion = companion is not None and (companion.is_file() or companion.is_symlink())
    if output is not None and to_stdout:
        # -o /dev/stdout: the override follows the report on the same stream (written first,
        # a file stdout was redirected to would have it overwritten by the report); a fit with
        # constants is refused first, not after a report that said the file was written
        # (review CF)
        if result.cost_entries:
            raise special_target_refusal(output)
        emit(render_calibration_report(result, fmt, names=names, written=[output]), None)
        written = write_override(result, output, force=force, inputs=inputs, names=names)
    else:
        # the files before the report: what only the write itself can find (a full disk, a
        # special file where a second file must go beside it) is a refusal with stdout empty
        if output is not None:
            written = write_override(result, output, force=force, inputs=inputs, names=names)
        # the JSON names the files written (a script had to know them from its own -o)
        emit(render_calibration_report(result, fmt, names=names, written=written), None)
    for target in written:
        said = printable(target, None)
        say_wrapped(f"wrote {said}", said)
    if companion is not None and had_companion and not companion.exists() and written:
        said = printable(companion, None)
        say_wrapped(
            f"removed {said}: an earlier run's cost-parameter override; this fit fitted no "
            "constant, and it would not belong with the new file",
            said,
        )
    if written and not result.link_entries and not result.cost_entries and not to_stdout:
        # the file is written all the same (a script may expect it), but says nothing new; on
        # stdout the override is there to read
        said = printable(written[0], None)
        say_wrapped(
            f"note: no fitted value was written: {said} holds the fit's header and no link (the "
            "table's notes say why each value was kept)",
            said,
        )
    if output is None and fmt != "json":
        say_wrapped("note: nothing written; -o FILE saves the fitted values as an override")


def register(app: typer.Typer) -> None:
    """Add ``nccl-check`` and ``calibrate`` to ``app``."""
    app.command("nccl-check")(nccl_check)
    app.command("calibrate")(calibrate_command)
