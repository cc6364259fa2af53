"""Pictures: files written (PNG magic, SVG root), atomically; sweep over several fabrics; the
measured-points CSV; and the path without matplotlib (exit 2 with the install hint).
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from ibcalc.catalogue.load import load_catalogue
from ibcalc.cli import app, main
from ibcalc.engine.types import Collective
from ibcalc.errors import IbcalcError
from ibcalc.gap import gap
from ibcalc.render.plot import (
    INSTALL_HINT,
    PlotError,
    PlotUnavailableError,
    check_target,
    load_measured,
    plot_gap,
    require_matplotlib,
    sweep_series,
)
from ibcalc.units import format_number

runner = CliRunner()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SWEEP = ["sweep", "allreduce", "-b", "1M", "-e", "64M", "-f", "4", "-N", "2"]


def _is_png(path: Path) -> bool:
    data = path.read_bytes()
    return len(data) > 10_000 and data.startswith(PNG_MAGIC)


def _is_svg(path: Path) -> bool:
    root = ET.parse(path).getroot()  # our own output, not untrusted XML
    return root.tag in ("svg", "{http://www.w3.org/2000/svg}svg")


def _only(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    captured = capsys.readouterr()
    assert info.value.code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    return lines[0]


# ------------------------------------------------------------------- without matplotlib


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import matplotlib`` (and its submodules) fail, as when the extra is absent."""
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.usefixtures("no_matplotlib")
def test_require_matplotlib_raises_install_hint() -> None:
    with pytest.raises(PlotUnavailableError) as info:
        require_matplotlib()
    assert str(info.value) == INSTALL_HINT
    assert isinstance(info.value, IbcalcError)
    assert isinstance(info.value, ImportError)


@pytest.mark.usefixtures("no_matplotlib")
@pytest.mark.parametrize(
    "argv",
    [
        ["gap", "--plot", "{dir}/gap.png"],
        ["gap", "--intra", "nvlink4", "--inter", "ndr", "--plot", "{dir}/gap.svg"],
        [*SWEEP, "--inter", "ndr", "--plot", "{dir}/sweep.png"],
    ],
)
def test_no_matplotlib_exits_2_with_hint_before_any_output(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _fail([a.format(dir=tmp_path) for a in argv], capsys)
    assert line == (
        "error: plotting needs matplotlib: pip install 'matplotlib>=3.8' (or, in the checkout, "
        "pip install '.[plot]')"
    )
    assert _only(tmp_path) == []


@pytest.mark.usefixtures("no_matplotlib")
def test_no_matplotlib_other_commands_still_work() -> None:
    result = runner.invoke(app, ["gap", "--intra", "nvlink4", "--inter", "ndr"])
    assert result.exit_code == 0, result.stderr
    assert "9.00x" in result.stdout


# ---------------------------------------------------------------------- target checks


@pytest.mark.parametrize("name", ["x.pdf", "x", "x.png.txt", "x.jpeg"])
def test_refuses_other_suffixes(name: str, tmp_path: Path) -> None:
    with pytest.raises(PlotError, match=r"\.png or \.svg"):
        check_target(tmp_path / name)


@pytest.mark.parametrize("name", [".png", ".SVG"])
def test_a_bare_suffix_is_refused_as_a_name_with_nothing_before_it(
    name: str, tmp_path: Path
) -> None:
    # Python reads '.png' as a hidden file without a suffix; "must end in .png" was wrong
    with pytest.raises(PlotError, match=rf"the file name has nothing before \{name}"):
        check_target(tmp_path / name)


def test_a_symlink_into_a_missing_directory_names_that_directory(tmp_path: Path) -> None:
    link = tmp_path / "plot.png"
    link.symlink_to(tmp_path / "nowhere" / "plot.png")
    with pytest.raises(PlotError, match=f"no directory '{tmp_path / 'nowhere'}', where"):
        check_target(link)


def test_suffix_is_case_insensitive(tmp_path: Path) -> None:
    assert check_target(tmp_path / "X.PNG")[1] == "png"
    assert check_target(tmp_path / "x.Svg")[1] == "svg"


def test_cli_bad_plot_targets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _fail(["gap", "--plot", str(tmp_path / "gap.pdf")], capsys)
    assert ".png or .svg" in line
    line = _fail(["gap", "--plot", str(tmp_path / "missing" / "gap.png")], capsys)
    assert "no directory" in line
    line = _fail([*SWEEP, "--plot-time"], capsys)
    assert "--plot" in line
    line = _fail([*SWEEP, "--measured", str(tmp_path / "m.csv")], capsys)
    assert "--plot" in line
    assert _only(tmp_path) == []


# ------------------------------------------------------------------------- gap pictures


def test_gap_png_and_svg(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "gap.png", tmp_path / "gap.svg"
    result = runner.invoke(app, ["gap", "--plot", str(png)])
    assert result.exit_code == 0, result.stderr
    assert "plot written to" in result.stderr
    assert _is_png(png)
    result = runner.invoke(app, ["gap", "--intra", "nvlink4", "--inter", "ndr", "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    assert _is_svg(svg)
    text = svg.read_text(encoding="utf-8")
    assert "nvlink4" in text
    assert "per direction" in text
    assert _only(tmp_path) == ["gap.png", "gap.svg"]


def test_gap_plot_keeps_table_output(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    args = ["gap", "--intra", "nvlink4", "--inter", "ndr"]
    plain = runner.invoke(app, args)
    plotted = runner.invoke(app, [*args, "--plot", str(tmp_path / "g.png")])
    assert plain.exit_code == plotted.exit_code == 0
    assert plain.stdout == plotted.stdout


def test_same_picture_same_bytes(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cat = load_catalogue(use_env=False)
    result = gap(cat, "nvlink4", "ndr", 8, 8)
    for suffix in (".png", ".svg"):
        first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
        plot_gap(first, [result])
        plot_gap(second, [result])
        assert first.read_bytes() == second.read_bytes()


def test_failed_write_leaves_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    target = tmp_path / "gap.png"
    target.write_bytes(b"old picture")

    def broken(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", broken)
    cat = load_catalogue(use_env=False)
    with pytest.raises(PlotError, match="No space left"):
        plot_gap(target, [gap(cat, "nvlink4", "ndr", 8, 8)])
    assert target.read_bytes() == b"old picture"
    assert _only(tmp_path) == ["gap.png"]


# ----------------------------------------------------------------------- sweep pictures


def test_sweep_plot_keeps_table_output(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    args = [*SWEEP, "--inter", "ndr"]
    plain = runner.invoke(app, args)
    target = tmp_path / "sweep.png"
    plotted = runner.invoke(app, [*args, "--plot", str(target), "--plot-time"])
    assert plain.exit_code == plotted.exit_code == 0, plotted.stderr
    assert plain.stdout == plotted.stdout
    assert _is_png(target)


def test_sweep_several_fabrics_png_and_svg(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "fabrics.png", tmp_path / "fabrics.svg"
    args = [*SWEEP, "--inter", "ndr,hdr,roce-400g"]
    result = runner.invoke(app, [*args, "--plot", str(png)])
    assert result.exit_code == 0, result.stderr
    assert _is_png(png)
    # One nccl-tests table per fabric.
    assert result.stdout.count("sweep on") == 3
    for fabric in ("ndr between", "hdr between", "roce-400g between"):
        assert fabric in result.stdout
    result = runner.invoke(app, [*args, "--plot", str(svg), "--plot-time", "--algo", "ring"])
    assert result.exit_code == 0, result.stderr
    assert _is_svg(svg)
    assert "roce-400g" in svg.read_text(encoding="utf-8")


def test_sweep_several_fabrics_json_and_csv_share_the_node() -> None:
    result = runner.invoke(app, [*SWEEP, "--inter", "ndr,hdr", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    groups = json.loads(result.stdout)
    assert [g["inter"] for g in groups] == ["ndr", "hdr"]
    # The second fabric goes into the node the first resolved to (DGX H100: 8 GPUs, 8 NICs).
    assert {(g["nodes"], g["gpus_per_node"], g["nics_per_node"]) for g in groups} == {(2, 8, 8)}
    ndr, hdr = (g["rows"] for g in groups)
    assert len(ndr) == len(hdr)
    # HDR has half NDR's rate, so the largest size cannot be faster on it.
    assert hdr[-1]["time_us"] >= ndr[-1]["time_us"]
    result = runner.invoke(app, [*SWEEP, "--inter", "ndr,hdr", "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("inter,size_bytes,")
    assert {line.split(",")[0] for line in lines[1:]} == {"ndr", "hdr"}


def test_sweep_single_fabric_output_unchanged_by_comma_syntax() -> None:
    one = runner.invoke(app, [*SWEEP, "--inter", "ndr", "--format", "json"])
    same = runner.invoke(app, [*SWEEP, "--inter", "ndr,", "--format", "json"])
    assert one.exit_code == same.exit_code == 0
    assert one.stdout == same.stdout
    groups = json.loads(one.stdout)
    assert isinstance(groups, list)
    assert len(groups) == 1  # same shape as a multi-fabric sweep: one group per fabric
    assert groups[0]["inter"] == "ndr"
    assert "size_bytes" in groups[0]["rows"][0]


def test_sweep_fabric_errors(capsys: pytest.CaptureFixture[str]) -> None:
    line = _fail([*SWEEP, "--inter", "ndr,hdrr"], capsys)
    assert line.endswith(
        "--inter 'hdrr' is not a known link "
        "(did you mean hdr, hdr100, xdr? see 'ibcalc sweep --help')"
    )
    line = _fail(["sweep", "allreduce", "-N", "1", "--inter", "ndr,hdr"], capsys)
    assert "more than one node" in line
    line = _fail([*SWEEP, "--inter", ","], capsys)
    assert "names no link" in line


# ----------------------------------------------------------------------- measured points


def _csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_load_measured_filters_to_the_sweep(tmp_path: Path) -> None:
    source = _csv(
        tmp_path / "m.csv",
        "size_bytes,busbw_GBps,collective,nodes,gpus_per_node,time_us,label\n"
        "1048576,20.5,all_reduce,2,8,95.0,cluster A\n"
        "67108864,300.0,all_reduce,2,8,,cluster A\n"
        "67108864,310.0,all_gather,2,8,,cluster A\n"
        "67108864,150.0,all_reduce,4,8,,cluster B\n"
        "8,0.00,all_reduce,2,8,,cluster A\n",
    )
    points, total = load_measured(
        source, collective=Collective.ALL_REDUCE, nodes=2, gpus_per_node=8
    )
    assert total == 5
    assert [(p.size_bytes, p.busbw_GBps) for p in points] == [(1048576, 20.5), (67108864, 300.0)]
    assert points[0].time_s == pytest.approx(95e-6)
    assert points[1].time_s is None
    assert {p.label for p in points} == {"cluster A"}
    # Without filter columns every row with a positive busbw is kept, under the file's name.
    bare = _csv(tmp_path / "bare.csv", "size_bytes,busbw_GBps\n1000,1.5\n2000,2.5\n")
    points, total = load_measured(bare, collective=Collective.ALL_REDUCE, nodes=2)
    assert (len(points), total) == (2, 2)
    assert points[0].label == "measured (bare.csv)"
    # Without a label column, the reference file's gpu column tells the series apart.
    by_gpu = _csv(tmp_path / "gpu.csv", "size_bytes,busbw_GBps,gpu\n1000,1.5,H100\n1000,1,A100\n")
    assert {p.label for p in load_measured(by_gpu)[0]} == {"measured: H100", "measured: A100"}


def test_a_measured_label_with_control_characters_is_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A label holding ESC and BEL (an OSC title sequence) had been drawn raw, and matplotlib's
    warning of the glyphs its font lacks had carried them, with this module's path, to stderr
    in several lines (review CU): the label is escaped, and stderr says nothing of glyphs."""
    source = _csv(
        tmp_path / "m.csv",
        "size_bytes,busbw_GBps,gpu\n1024,5,\x1b]0;pwned\x07\n",
    )
    ((point,), _) = load_measured(source)
    assert point.label == "measured: \\x1b]0;pwned\\x07"
    target = tmp_path / "p.png"
    # a label of glyphs the font lacks (CJK in DejaVu Sans): a box drawn, no warning raised
    cjk = _csv(tmp_path / "cjk.csv", "size_bytes,busbw_GBps,label\n1024,5,\u6d4b\u8bd5\n")
    for measured in (source, cjk):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            main(
                [
                    "sweep",
                    "allreduce",
                    "-b",
                    "1K",
                    "-e",
                    "4K",
                    "--system",
                    "dgx-h100",
                    "--plot",
                    str(target),
                    "--measured",
                    str(measured),
                ]
            )
        assert [str(w.message) for w in seen if "Glyph" in str(w.message)] == []
    captured = capsys.readouterr()
    assert target.stat().st_size > 0
    assert "\x1b" not in captured.err


def test_a_measured_csv_ending_lines_in_carriage_returns_reads_as_rows(tmp_path: Path) -> None:
    """Lines ended by a lone carriage return (an old Mac export) had stopped the command with
    an internal error, exit 3 ('new-line character seen in unquoted field'): they read as the
    rows they are, and a bad value is placed at its line."""
    source = tmp_path / "cr.csv"
    source.write_bytes(b"size_bytes,busbw_GBps\r1048576,20.5\r4194304,60\r")
    points, total = load_measured(source)
    assert total == 2
    assert [(p.size_bytes, p.busbw_GBps) for p in points] == [(1048576, 20.5), (4194304, 60.0)]
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"size_bytes,busbw_GBps\r1048576,20.5\r4194304,fast\r")
    with pytest.raises(PlotError, match=r"bad.csv:3: busbw_GBps 'fast' is not a number$"):
        load_measured(bad)


def test_a_measured_csv_field_past_the_csv_limit_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field longer than the csv module's 131072 characters had escaped as an internal
    error (exit 3): it is refused at its line, in one line, with exit 2."""
    long_label = "x" * 200_000
    source = _csv(
        tmp_path / "long.csv",
        f'size_bytes,busbw_GBps,label\n1024,5,a\n2048,6,"two\nlines"\n4096,7,{long_label}\n',
    )
    with pytest.raises(PlotError, match=r"long.csv:5: not readable as CSV \(field larger"):
        load_measured(source)
    header = _csv(tmp_path / "head.csv", f"size_bytes,busbw_GBps,{long_label}\n1024,5,a\n")
    with pytest.raises(PlotError, match=r"head.csv:1: not readable as CSV"):
        load_measured(header)
    pytest.importorskip("matplotlib")
    line = _fail([*SWEEP, "--plot", str(tmp_path / "x.png"), "--measured", str(source)], capsys)
    assert "long.csv:5: not readable as CSV" in line


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("size,busbw\n1,2\n", "missing columns size_bytes, busbw_GBps"),
        ("size_bytes,busbw_GBps\n1000,fast\n", ":2: busbw_GBps 'fast' is not a number"),
        ("size_bytes,busbw_GBps\n1000,1\n-5,2\n", ":3: size_bytes '-5'"),
        ("size_bytes,busbw_GBps\nnan,1\n", "not a finite"),
    ],
)
def test_load_measured_errors(text: str, needle: str, tmp_path: Path) -> None:
    with pytest.raises(PlotError) as info:
        load_measured(_csv(tmp_path / "bad.csv", text))
    assert needle in str(info.value)
    assert "bad.csv" in str(info.value)


def test_load_measured_refuses_binary_and_missing(tmp_path: Path) -> None:
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"size_bytes,busbw_GBps\n\x00\x01")
    with pytest.raises(PlotError, match="binary"):
        load_measured(binary)
    with pytest.raises(PlotError, match="cannot read"):
        load_measured(tmp_path / "absent.csv")


def test_sweep_with_measured_overlay(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    source = _csv(
        tmp_path / "m.csv",
        "size_bytes,busbw_GBps,collective,nodes,gpus_per_node\n"
        "1048576,20.5,all_reduce,2,8\n"
        "16777216,180.0,all_reduce,2,8\n"
        "16777216,90.0,all_reduce,4,8\n",
    )
    target = tmp_path / "m.png"
    result = runner.invoke(
        app,
        [*SWEEP, "--inter", "ndr", "--plot", str(target), "--measured", str(source)],
    )
    assert result.exit_code == 0, result.stderr
    assert "measured: 2 of 3 rows" in result.stderr
    assert _is_png(target)


def test_sweep_measured_problems_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    bad = _csv(tmp_path / "bad.csv", "size,busbw\n1,2\n")
    line = _fail([*SWEEP, "--plot", str(tmp_path / "x.png"), "--measured", str(bad)], capsys)
    assert "bad.csv:1: missing columns" in line
    other = _csv(
        tmp_path / "other.csv",
        "size_bytes,busbw_GBps,collective,nodes\n1000,1,all_gather,2\n1000,1,all_reduce,16\n",
    )
    line = _fail([*SWEEP, "--plot", str(tmp_path / "y.png"), "--measured", str(other)], capsys)
    assert "no row of" in line
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("log", "tests"),
    [
        ("13_allreduce_1node_4xH100_intranode.txt", "nccl-tests"),
        ("01_allreduce_1node_8xMI355X_intranode-rccl.txt", "rccl-tests"),
    ],
)
def test_sweep_measured_log_points_to_nccl_check(
    log: str, tests: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An nccl-tests log given to --measured had been refused as a CSV without its columns
    ('LOG.txt:1: missing columns size_bytes, busbw_GBps (found: # Collective test starting:
    ...)'): the one-line error now says it is such a log and names the command that plots it."""
    pytest.importorskip("matplotlib")
    sweeps = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
    given = tmp_path / "my run.txt"
    given.write_bytes((sweeps / log).read_bytes())
    picture = tmp_path / "x.png"
    line = _fail([*SWEEP, "--plot", str(picture), "--measured", str(given)], capsys)
    assert line == (
        f"error: {given} is an {tests} log; --measured reads a CSV of size_bytes,busbw_GBps: "
        f"ibcalc nccl-check '{given}' --plot {picture} reads logs and plots one over the "
        "model's expectation"
    )
    assert not picture.exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-N", "1", "--system", "dgx-h100"], "(nvlink4 inside)"),
        (
            ["-N", "4", "--system", "dgx-h100", "--sites", "2"],
            "(nvlink4 inside, ndr between nodes, wan-100g between 2 sites)",
        ),
    ],
)
def test_the_plot_title_names_the_links_the_ranks_use(
    tmp_path: Path, args: list[str], words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It read '(nvlink4 inside; - between)' on one node and left the WAN out, unlike the
    table's title. (The title wraps at 100 characters, where its words fall.)"""
    pytest.importorskip("matplotlib")
    figures = _drawn(monkeypatch)
    svg = tmp_path / "title.svg"
    result = runner.invoke(
        app, ["sweep", "allreduce", "-b", "1M", "-e", "4M", *args, "--plot", str(svg)]
    )
    assert result.exit_code == 0, result.stderr
    assert words in result.stdout
    assert words in " ".join(figures[-1].axes[0].get_title().split())


def test_the_check_plot_title_names_the_collective_the_rows_were_judged_as(
    tmp_path: Path,
) -> None:
    """With --collective the picture's title still named the log's collective, unlike the
    report's title."""
    pytest.importorskip("matplotlib")
    log = (
        Path(__file__).resolve().parents[2]
        / "benchmarks/data/sweeps/13_allreduce_1node_4xH100_intranode.txt"
    )
    svg = tmp_path / "check.svg"
    result = runner.invoke(
        app, ["nccl-check", str(log), "--collective", "alltoall", "--plot", str(svg)]
    )
    # the flag the log contradicts is an option that is wrong: exit 2, the report and picture
    # written all the same
    assert result.exit_code == 2, result.stderr
    words = "alltoall (given; the log says all_reduce)"
    # The heading wraps at the terminal's width, and where depends on how long the log's path is.
    assert words in " ".join(result.stdout.split())
    assert f"{words}: measured vs expected busbw" in svg.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("inter", "words", "absent"),
    [
        (
            "wan-10g",
            ["WAN, achievable", "1 x wan-10g per site", "2,880x at line rate", "across sites"],
            ["scale-out", "NICs per node", "across nodes"],
        ),
        (
            "ndr",
            ["scale-out, achievable", "8 NICs per node", "9.00x at line rate", "across nodes"],
            ["WAN"],
        ),
    ],
)
def test_the_gap_plot_names_a_wan_as_the_report_does(
    tmp_path: Path, inter: str, words: list[str], absent: list[str]
) -> None:
    """A WAN's bar was a 'scale-out' one 'across nodes', and the ratio read '2880.0x', where the
    text report says WAN, sites and 2,880x."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "gap.svg"
    result = runner.invoke(app, ["gap", "--intra", "nvlink4", "--inter", inter, "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")
    assert all(w in text for w in words), [w for w in words if w not in text]
    assert not any(w in text for w in absent), [w for w in absent if w in text]


def test_the_gap_plot_title_gives_the_all_reduce_dtype_as_the_report_does(tmp_path: Path) -> None:
    """DGX H100: the 1 GB all-reduce in fp32 takes 3.67 ms inside a node and 36.2 ms across 8
    (tests/cli/test_consistency.py), 9.86x. The report said "1 GB all-reduce in fp32", the
    title "a 1 GB all-reduce is 9.86x slower" without the element type the time depends on."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "gap.svg"
    result = runner.invoke(app, ["gap", "--system", "dgx-h100", "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    assert "slowdown across nodes: 9.86x (1 GB all-reduce in fp32)" in result.stdout
    assert "a 1 GB all-reduce in fp32 is 9.86x slower across nodes" in svg.read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (["--system", "dgx-1v"], "edr (100 Gb/s, 4 per 8-GPU node)"),
        (
            ["--intra", "nvlink4", "--inter", "wan-100g", "--nics-per-node", "2"],
            "wan-100g (100 Gb/s, 2 per 8-GPU site)",
        ),
        (["--intra", "nvlink4", "--inter", "efa-v2"], "efa-v2 (100 Gb/s, 4 per GPU)"),
    ],
)
def test_the_gap_plot_bar_counts_the_nics_the_title_counts(
    tmp_path: Path, args: list[str], label: str
) -> None:
    """A node with fewer NICs than GPUs was labelled '1 per 8-GPU node' whatever its count
    (DGX-1V has 4 EDR NICs for 8 GPUs)."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "gap.svg"
    result = runner.invoke(app, ["gap", *args, "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    assert label in svg.read_text(encoding="utf-8")


def test_a_narrow_range_is_labelled_in_plain_numbers_without_font_noise(tmp_path: Path) -> None:
    """1 MiB to 1 GiB on 2 x DGX H100 spans 27-478 GB/s: matplotlib labelled the minor ticks in
    math text ('4 x 10^2' beside '100') and its font lookup wrote 21 'findfont' lines to
    stderr. Labels are plain now: 20, 50, 100, 200, 500 (2 and 5 under two decades)."""
    target = tmp_path / "y.svg"
    args = ["sweep", "allreduce", "-b", "1M", "-e", "1G", "-f", "32", "--system", "dgx-h100"]
    result = CliRunner().invoke(app, [*args, "-N", "2", "--plot", str(target)])
    assert result.exit_code == 0
    assert result.stderr == f"plot written to {target}\n"  # and not a line of font lookups


def test_the_sweep_plot_shades_each_size_likely_range(tmp_path: Path) -> None:
    """Every estimate carries its range, and the plot drew none: the chosen line's band is now
    shaded, from each estimate's busbw and time ranges."""
    pytest.importorskip("matplotlib")
    from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
    from ibcalc.facade import estimate_on

    catalogue = load_catalogue(use_env=False)
    cluster = resolve_cluster(catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    estimates = [estimate_on(cluster, Collective.ALL_REDUCE, float(2**k)) for k in (10, 20, 30)]
    series = sweep_series("choice", estimates)
    assert series.busbw_band is not None
    assert series.time_band is not None
    for est, (low, high), times in zip(estimates, series.busbw_band, series.time_band, strict=True):
        assert est.time_s_range is not None
        assert times == est.time_s_range
        # busbw's range is the time range inverted: S / t x F(n)
        factor = est.busbw_Bps / est.algbw_Bps
        assert low == pytest.approx(est.size_bytes / est.time_s_range[1] * factor / 1e9)
        assert high == pytest.approx(est.size_bytes / est.time_s_range[0] * factor / 1e9)
    svg = tmp_path / "band.svg"
    result = runner.invoke(app, [*SWEEP, "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    assert "shaded: likely range of a measurement" in svg.read_text(encoding="utf-8")
    # one size has no area to shade: its range is a bar
    one = tmp_path / "one.svg"
    result = runner.invoke(
        app, ["sweep", "allreduce", "-N", "2", "-b", "1G", "-e", "1G", "--plot", str(one)]
    )
    assert result.exit_code == 0, result.stderr
    assert "bar: likely range of a measurement" in one.read_text(encoding="utf-8")


def test_the_all_to_all_plot_draws_its_own_network_ceiling(tmp_path: Path) -> None:
    """An all-to-all's busbw crossed the 'per-GPU share' line and sat under an unreachable node
    ceiling. Across 2 x 8 GPUs a GPU sends 8/16 of its buffer over its NIC share (ndr: 50 GB/s
    x 0.975 = 48.75 GB/s), and busbw = algbw x 15/16: the ceiling is 48.75 x 15/8 = 91.4 GB/s."""
    pytest.importorskip("matplotlib")
    from ibcalc.catalogue.load import find_link

    share = find_link(load_catalogue(use_env=False), "ndr").achievable_Bps / 1e9
    assert share == pytest.approx(48.75)

    def plot(nodes: str, *extra: str) -> str:
        svg = tmp_path / f"a2a-{nodes}{'-'.join(extra)}.svg"
        args = ["sweep", "alltoall", "-b", "1M", "-e", "1G", "-f", "32", "-N", nodes]
        result = runner.invoke(app, [*args, "--system", "dgx-h100", *extra, "--plot", str(svg)])
        assert result.exit_code == 0, result.stderr
        return svg.read_text(encoding="utf-8")

    text = plot("2")
    assert f"ndr all-to-all ceiling, share x 15/8: {share * 15 / 8:.1f} GB/s" in text
    # its tag at the line's end says what it is, a GPU's all-to-all ceiling, not the node's
    # rate (the tag had been derived from its kind and read 'ndr per node 91.4 GB/s')
    assert f"<!-- ndr all-to-all {share * 15 / 8:.1f} GB/s -->" in text
    assert "ndr per node" not in text
    assert "ring ceiling" not in text
    assert "per-GPU share (the scale-out side of the gap)" not in text
    # 2:1 leaves with every peer across them (the default cross-leaf fraction on 4 nodes, as the
    # engine prices it: its explanation says 'tapered uplinks x2 slower'): 48.75 x 31/24 / 2
    tapered = plot("4", "--oversubscription", "2")
    ceiling = share * 31 / 24 / 2
    assert (
        f"ndr all-to-all ceiling, share x 31/24, tapered uplinks x2 slower: {ceiling:.1f} GB/s"
        in tapered
    )


def test_the_gap_plot_bar_labels_carry_their_unit(tmp_path: Path) -> None:
    """'300 line / 240 achievable' printed two numbers without a unit."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "gap.svg"
    result = runner.invoke(app, ["gap", "--intra", "nvlink3", "--inter", "hdr", "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")
    # nvlink3: 12 links x 25 GB/s = 300 GB/s line, x 0.8 (NCCL's SM80 20 of 25) = 240 achievable
    assert "<!-- 300 GB/s line -->" in text
    assert "<!-- 240 GB/s achievable -->" in text


def test_a_measured_csv_with_a_column_twice_or_a_part_byte_is_refused(tmp_path: Path) -> None:
    """A repeated size_bytes column (which one a point took was unsaid) and 1024.5 bytes had
    been plotted without a word (a hostile-input review)."""
    twice = tmp_path / "twice.csv"
    twice.write_text("size_bytes,busbw_GBps,size_bytes\n1024,5,9\n", encoding="utf-8")
    with pytest.raises(PlotError, match=r"twice.csv:1: column size_bytes given twice$"):
        load_measured(twice)
    part = tmp_path / "part.csv"
    part.write_text("size_bytes,busbw_GBps\n1024.5,5\n", encoding="utf-8")
    with pytest.raises(PlotError, match=r"part.csv:2: size_bytes '1024.5' is not a whole number"):
        load_measured(part)
    whole = tmp_path / "whole.csv"
    whole.write_text("size_bytes,busbw_GBps\n1024.0,5\n", encoding="utf-8")
    assert load_measured(whole)[0][0].size_bytes == 1024


@pytest.mark.parametrize(
    ("low", "high", "ticks"),
    [
        # -b 1M -e 16M -f 4: every power of two (powers of ten had put '1 MB' left of 1 MiB)
        (2**20, 2**24, [2**k for k in range(20, 25)]),
        # 8 B to 8 GiB: 32 doublings, a tick every 5 (a dozen at most): 32 B, 1 KiB ... 1 GiB
        (8, 2**33, [2**k for k in range(5, 31, 5)]),
    ],
)
def test_size_ticks_are_the_powers_of_two_swept(low: int, high: int, ticks: list[int]) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ibcalc.render.plot import _size_ticks

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    _size_ticks(ax, low, high)
    assert list(ax.xaxis.get_majorticklocs()) == ticks
    plt.close(fig)


def test_a_sweep_plot_marks_where_nccl_switches_and_by_how_much_time_falls(
    tmp_path: Path,
) -> None:
    """The table marks a switch '>' and the drop in time there, the JSON and CSV carry both; the
    picture had shown an unexplained dip (a review). 8 x DGX B200 all-reduce, 32 KiB-1 MiB:
    tree/LL to tree/LL128 at 256 KiB; the new pick and the fall are written at that point, and
    the legend says what the diamond marks."""
    pytest.importorskip("matplotlib")
    argv = ["sweep", "allreduce", "-b", "32K", "-e", "1M", "-f", "2", "--system", "dgx-b200"]
    argv += ["-N", "8"]
    rows = json.loads(runner.invoke(app, [*argv, "--format", "json"]).stdout)[0]["rows"]
    (switch,) = [r for r in rows if r["switch"]]
    drop = switch["time_drop_fraction"]
    assert drop is not None
    svg = tmp_path / "switch.svg"
    result = runner.invoke(app, [*argv, "--plot", str(svg), "--plot-time"])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")
    pick = f"{switch['algorithm']}/{switch['protocol']}"
    assert f"{pick}, time -{format_number(100 * drop)}%" in text
    assert "diamond: NCCL's tuner switches (the table's &gt;), with the new pick" in text
    # no switch, no diamond
    flat = tmp_path / "flat.svg"
    result = runner.invoke(app, [*argv[:3], "256M", "-e", "1G", *argv[8:], "--plot", str(flat)])
    assert result.exit_code == 0, result.stderr
    assert "diamond" not in flat.read_text(encoding="utf-8")


def _svg_text_at(svg: str, text: str) -> tuple[float, float]:
    """Where matplotlib's SVG draws ``text`` (the translate of the group after its comment)."""
    import re

    found = re.search(rf"<!-- {re.escape(text)} -->\s*<g [^>]*translate\(([\d.]+) ([\d.]+)\)", svg)
    assert found, text
    return float(found.group(1)), float(found.group(2))


def test_ceilings_a_few_per_cent_apart_are_tagged_apart(tmp_path: Path) -> None:
    """2 x DGX H100: NVLink 4's 371 GB/s per GPU (450 x 0.824) and 8 NDR's 390 GB/s per node
    (8 x 48.75) are 5 % apart and had drawn as one line, told apart in the legend alone (review
    DO). Each line now carries its tag at its left end: the higher one's above its line, the
    lower one's below (SVG y grows downwards, so the 390 tag sits higher on the page)."""
    pytest.importorskip("matplotlib")

    svg = tmp_path / "s.svg"
    args = ["sweep", "allreduce", "--system", "dgx-h100", "-N", "2", "-b", "8", "-e", "1G"]
    result = runner.invoke(app, [*args, "-f", "4", "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")

    def tag_y(tag: str) -> float:
        return _svg_text_at(text, tag)[1]

    assert f"{450 * 0.824:.0f}" == "371"
    assert f"{8 * 48.75:.0f}" == "390"
    up, node = tag_y("nvlink4 per GPU 371 GB/s"), tag_y("ndr per node 390 GB/s")
    assert node < up
    assert tag_y("ndr per GPU 48.8 GB/s") > up


def test_labels_of_three_close_ceilings_sit_side_by_side(tmp_path: Path) -> None:
    """4 x DGX H100 on ndr, roce-400g and hdr: ceilings at 390 (8 x 48.75), 385 (8 x 48.1) and
    371 GB/s (NVLink 4, 450 x 0.824) lie within 15 % of each other; their labels had been put
    below lines 4 % apart, one on the other (review ED 12). They sit side by side, the highest
    first, each starting past the one before it (7-point glyphs are at least 0.45 em wide)."""
    pytest.importorskip("matplotlib")

    svg = tmp_path / "s.svg"
    args = ["sweep", "allreduce", "-N", "4", "--inter", "ndr,roce-400g,hdr", "-b", "1K", "-e", "8G"]
    result = runner.invoke(app, [*args, "-f", "8", "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")

    def tag_x(tag: str) -> float:
        return _svg_text_at(text, tag)[0]

    tags = ["ndr per node 390 GB/s", "roce-400g per node 385 GB/s", "nvlink4 per GPU 371 GB/s"]
    xs = [tag_x(tag) for tag in tags]
    for (tag, x), after in zip(zip(tags, xs, strict=True), xs[1:], strict=False):
        assert after > x + len(tag) * 7 * 0.45, (tag, x, after)
    # a line 15 % or more below starts its own group, at the left edge
    assert tag_x("hdr per node 195 GB/s") == pytest.approx(xs[0])


def test_a_missing_directory_with_a_control_character_is_escaped_once(tmp_path: Path) -> None:
    """ESC in the missing directory's name reads \\x1b, as in the path before it; repr() of the
    escaped text had doubled the backslash, '\\\\x1b' (review EC 13)."""
    target = tmp_path / "no\x1b[2J" / "plot.png"
    with pytest.raises(PlotError) as info:
        check_target(target)
    where = str(tmp_path) + "/no\\x1b[2J"
    assert str(info.value).endswith(f"no directory '{where}'")


def test_a_row_of_ceiling_labels_stops_at_the_axes_width(tmp_path: Path) -> None:
    """Eight fabrics on 16 NICs of 200-400 Gb/s put nine ceilings within 40 % of each other:
    their labels had run off the picture in one row and shrunk the plot to a strip (review EE
    3). The row stops where the axes end and counts the rest, which the legend names."""
    pytest.importorskip("matplotlib")
    import re

    svg = tmp_path / "s.svg"
    fabrics = "hdr,ndr200,roce-200g,efa-v3,gcp-tcpx,gcp-tcpxo,slingshot-11,ndr"
    args = ["sweep", "allreduce", "-N", "4", "--system", "dgx-h100", "--nics-per-node", "16"]
    result = runner.invoke(app, [*args, "--inter", fabrics, "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")
    more = re.findall(r"<!-- \+(\d+) more \(legend\) -->", text)
    assert len(more) == 1
    shown = len(re.findall(r"<!-- [\w-]+ per (?:node|GPU) \d+ GB/s -->", text))
    assert shown + int(more[0]) == 9  # 8 fabrics' ceilings and NVLink 4's


def test_a_missing_directory_with_an_apostrophe_is_quoted_as_repr_would(tmp_path: Path) -> None:
    """'it's' in double quotes, with no backslash the path does not hold (review EE 9)."""
    with pytest.raises(PlotError) as info:
        check_target(tmp_path / "it's" / "plot.png")
    assert str(info.value).endswith(f'no directory "{tmp_path}/it\'s"')


def test_the_time_panel_labels_a_decade_without_trailing_zeros(tmp_path: Path) -> None:
    """The time panel of sweep --plot-time labelled its decades '100 us', '1.00 ms', '10.0 ms'
    and '100 ms': the zeros a column of times keeps, on ticks that are round. All-reduce over
    4 x DGX H100, 1 MiB-16 GiB, spans about 100 us to 90 ms: its ticks read '1 ms' and '10 ms'."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "time.svg"
    argv = ["sweep", "allreduce", "-b", "1M", "-e", "16G", "-f", "4", "-N", "4"]
    result = runner.invoke(app, [*argv, "--plot", str(svg), "--plot-time"])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")
    assert "<!-- 1 ms -->" in text
    assert "<!-- 10 ms -->" in text
    assert "<!-- 100 ms -->" in text
    assert "1.00 ms" not in text
    assert "10.0 ms" not in text


def test_a_busbw_axis_below_a_ten_thousandth_is_labelled_without_an_exponent(
    tmp_path: Path,
) -> None:
    """All-reduce of 4-64 B on 16 x DGX H100 draws busbw down to about 2e-5 GB/s (ring and the
    hierarchical what-if): the axis had read '0.0001' above '1e-05', one tick in exponent form
    among plain numbers. It reads '0.00001'."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "small.svg"
    argv = ["sweep", "allreduce", "-b", "4", "-e", "64", "-f", "4", "-N", "16"]
    result = runner.invoke(app, [*argv, "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    text = svg.read_text(encoding="utf-8")
    assert "<!-- 0.00001 -->" in text
    assert "<!-- 0.0001 -->" in text
    assert not re.search(r"<!-- [\d.]+e-\d+ -->", text)


def test_the_gap_plot_rounds_a_bar_label_as_the_table_does(tmp_path: Path) -> None:
    """gap --intra nvlink4 --inter efa-v2 --nics-per-node 8: one EFA v2 per GPU achieves
    11.25 GB/s, which the table prints 11.3 (half up) and the bar's label had written 11.2 (the
    float's own rounding of a tie)."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "efa.svg"
    argv = ["gap", "--intra", "nvlink4", "--inter", "efa-v2", "--nics-per-node", "8"]
    result = runner.invoke(app, [*argv, "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    assert "11.3 GB/s achievable" in result.stdout
    assert "<!-- 11.3 GB/s achievable -->" in svg.read_text(encoding="utf-8")


def _check_svg(name: str, tmp_path: Path) -> str:
    """The SVG nccl-check --plot draws for the fixture log ``name``."""
    pytest.importorskip("matplotlib")
    svg = tmp_path / "check.svg"
    log = Path(__file__).parents[1] / "logs" / "fixtures" / name
    result = runner.invoke(app, ["nccl-check", str(log), "--plot", str(svg)])
    assert result.exit_code == 0, result.stderr
    return svg.read_text(encoding="utf-8")


def test_a_check_plot_legend_too_wide_for_two_columns_takes_one(tmp_path: Path) -> None:
    """nccl-check of log 13 (all-gather on 64 H100s) names its expected line '8 x 8 GPUs
    (dgx-h100) nvlink4 + ...' and its points by the log's 72-character file name: in two columns
    the legend was wider than the picture, both ends cut off (the left column's line samples,
    the file name's '.txt)'). It is drawn in one column, every label starting at one x."""
    name = "13_allgather_16node_64xH100_slingshot_kestrel_table_only_crlf.txt"
    text = _check_svg(name, tmp_path)
    expected_x, expected_y = _svg_text_at(
        text, "expected: 8 x 8 GPUs (dgx-h100) nvlink4 + 8 x ndr per node with NVLS"
    )
    measured_x, measured_y = _svg_text_at(text, f"measured ({name})")
    assert measured_x == expected_x
    assert measured_y > expected_y
    # a legend that fits in two keeps them: a sweep's first entry and its last side by side
    two = tmp_path / "two.svg"
    result = runner.invoke(app, [*SWEEP, "--plot", str(two)])
    assert result.exit_code == 0, result.stderr
    text = two.read_text(encoding="utf-8")
    first_x, _ = _svg_text_at(text, "shaded: likely range of a measurement")
    last_x, _ = _svg_text_at(text, "hollow: equivalent busbw, not a wire rate")
    assert last_x > first_x + 100


def test_the_check_plot_names_its_expected_line_without_nested_parentheses(
    tmp_path: Path,
) -> None:
    """nccl-check of log 10 (all-reduce on 128 A100s) had named its line 'expected (16 x 8 GPUs
    (dgx-a100) nvlink3 + 8 x hdr per node)', parentheses within parentheses; it reads as the
    sweep plot names a fabric, with a colon."""
    text = _check_svg("10_allreduce_OLD_FORMAT_128rank_A100-80GB_ib_coreweave.txt", tmp_path)
    assert "<!-- expected: 16 x 8 GPUs (dgx-a100) nvlink3 + 8 x hdr per node -->" in text
    assert "expected (" not in text


def _drawn(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """The figures the plot functions draw, kept as they are saved."""
    from ibcalc.render import plot

    figures: list[Figure] = []
    save = plot._save

    def keep(fig: Figure, target: Path, fmt: str) -> None:
        figures.append(fig)
        save(fig, target, fmt)

    monkeypatch.setattr(plot, "_save", keep)
    return figures


@pytest.mark.parametrize(
    ("pairs", "log"),
    [([("nvlink4", "ndr")], False), ([("nvlink5", "ndr"), ("nvlink4", "wan-10g")], True)],
)
def test_the_gap_plot_axis_ends_where_its_labels_do(
    pairs: list[tuple[str, str]], log: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gap plot's x axis had run to 200x its largest bar on a log scale (nvlink5's 900 GB/s
    on an axis to 180,000 GB/s) and 1.75x on a linear one. It ends 3 % past the label that
    reaches furthest, every label inside the axes. nvlink5: 18 links x 50 GB/s = 900 GB/s per
    direction; nvlink4 18 x 25 = 450; the axis starts at half the smallest bar, wan-10g's 10 Gb/s
    = 1.25 GB/s per GPU (8 links for 8 GPUs) x 0.9 efficiency = 1.125 GB/s achievable."""
    pytest.importorskip("matplotlib")
    figures = _drawn(monkeypatch)
    cat = load_catalogue(use_env=False)
    plot_gap(tmp_path / "gap.png", [gap(cat, up, out, 8, 8) for up, out in pairs])
    (fig,) = figures
    (ax,) = fig.axes
    assert (ax.get_xscale() == "log") is log
    largest = 900.0 if log else 450.0
    low, high = ax.get_xlim()
    assert low == pytest.approx(1.125 / 2 if log else 0.0)
    assert high < largest * (20 if log else 1.5)
    frame = ax.get_window_extent()
    ends = [t.get_window_extent().x1 for t in ax.texts]
    assert len(ends) == 2 * len(pairs)  # a scale-up and a scale-out bar each
    assert max(ends) <= frame.x1
    assert max(ends) == pytest.approx(frame.x0 + 0.97 * frame.width, abs=1.0)


def test_coinciding_fabric_lines_differ_in_dash_and_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ndr and roce-400g (8 x 400 Gb/s each, 390 and 385 GB/s per node) draw one curve at
    latency-bound sizes: the later fabric's line had covered the earlier one, told apart by
    colour alone. Each fabric now has its own dash pattern and marker, thinner ones drawn above
    (3.8, 2.7, 1.6 points), and the legend shows both."""
    pytest.importorskip("matplotlib")
    figures = _drawn(monkeypatch)
    argv = ["sweep", "allreduce", "-b", "1K", "-e", "1M", "-f", "32", "-N", "4"]
    result = runner.invoke(
        app, [*argv, "--inter", "ndr,roce-400g,hdr", "--plot", str(tmp_path / "f.png")]
    )
    assert result.exit_code == 0, result.stderr
    (fig,) = figures
    ax = fig.axes[0]
    names = ("ndr: 8 x 400 Gb/s per node", "roce-400g: 8 x 400 Gb/s per node")
    names += ("hdr: 8 x 200 Gb/s per node",)
    lines = [next(line for line in ax.lines if line.get_label() == name) for name in names]
    # the same busbw at 1 KiB on ndr and roce-400g: the curves coincide there
    assert lines[0].get_ydata()[0] == pytest.approx(lines[1].get_ydata()[0], rel=1e-3)
    assert [line.get_linewidth() for line in lines] == pytest.approx([3.8, 2.7, 1.6])
    order = [ax.lines.index(line) for line in lines]
    assert order == sorted(order)  # the thinner drawn later, above
    assert lines[0].get_linestyle() == "-"
    assert [line.get_linestyle() for line in lines[1:]] == ["--", "--"]  # custom dashes
    patterns = {tuple(line._unscaled_dash_pattern[1] or ()) for line in lines}
    assert len(patterns) == 3
    (legend,) = fig.legends
    shown = dict(
        zip([t.get_text() for t in legend.get_texts()], legend.legend_handles, strict=True)
    )
    markers = [shown[name].get_marker() for name in names]
    assert markers == ["o", "s", "^"]
    assert [shown[name].get_linestyle() for name in names] == ["-", "--", "--"]


def test_the_check_plot_draws_the_sweep_plot_s_band_switches_and_time_panel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nccl-check --plot drew the model's band as two grey lines ('model band, low/high'),
    no switch markers and no time panel, where the sweep plot shades the band, marks where the
    algorithm/protocol changes and has a time panel. Log 11 (all-reduce on 2 x 4 GH200 over a
    degraded Slingshot): one shaded band on each panel, spanning every row's expected range, a
    diamond at each size whose expected choice differs from the size before, and the top
    finding's what-if on the time panel at t = S x F / busbw, F = expected busbw x time / S."""
    pytest.importorskip("matplotlib")
    from matplotlib.collections import PolyCollection

    from ibcalc.logs.check import check_log
    from ibcalc.logs.parse import parse_file
    from ibcalc.render.logs import plot_check

    log = Path(__file__).parents[1] / "logs" / "fixtures"
    log /= "11_allreduce_2node_8xGH200_slingshot_nccltests2.17.1_indented_degraded.txt"
    text = log.read_text(encoding="utf-8")
    (check,) = check_log(parse_file(log), text, catalogue=load_catalogue(use_env=False))
    figures = _drawn(monkeypatch)
    plot_check(tmp_path / "check.png", check)
    (fig,) = figures
    ax, ax_time = fig.axes
    rows = check.rows
    for axis, ranges, scale in (
        (ax, [r.expected_busbw_GBps_range for r in rows], 1.0),
        (ax_time, [r.expected_time_us_range for r in rows], 1e-6),
    ):
        (band,) = [c for c in axis.collections if isinstance(c, PolyCollection)]
        ys = band.get_paths()[0].vertices[:, 1]
        assert all(r is not None for r in ranges)
        assert min(ys) == pytest.approx(min(r[0] for r in ranges if r) * scale)
        assert max(ys) == pytest.approx(max(r[1] for r in ranges if r) * scale)
    switches = [r for before, r in itertools.pairwise(rows) if r.choice != before.choice]
    assert switches
    for axis in (ax, ax_time):
        (diamonds,) = [line for line in axis.lines if line.get_marker() == "D"]
        assert list(diamonds.get_xdata()) == [float(r.size_bytes) for r in switches]
    # the busbw panel's diamonds sit on the expected busbw, the time panel's on the time
    (diamonds,) = [line for line in ax_time.lines if line.get_marker() == "D"]
    assert list(diamonds.get_ydata()) == pytest.approx(
        [r.expected_time_us * 1e-6 for r in switches]
    )
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not [name for name in legend if name.startswith("model band")]
    assert "shaded: likely range of a measurement" in legend
    top = next(f for f in check.findings if f.curve and f.hypothesis)
    (what_if,) = [line for line in ax_time.lines if line.get_linestyle() == "--"]
    assert list(what_if.get_xdata()) == [float(s) for s, _ in top.curve]
    by_size = {r.size_bytes: r for r in rows}
    assert list(what_if.get_ydata()) == pytest.approx(
        [
            by_size[s].expected_busbw_GBps * by_size[s].expected_time_us * 1e-6 / busbw
            for s, busbw in top.curve
        ]
    )


def test_the_plot_titles_name_the_element_type_and_the_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep's picture named its element type in the footnote alone, and nccl-check's title
    named the collective alone ('all_gather: measured vs expected busbw (bad)'), the cluster
    only in the legend and the element type nowhere. Both titles say what was estimated."""
    pytest.importorskip("matplotlib")
    figures = _drawn(monkeypatch)
    argv = ["sweep", "allreduce", "-b", "1K", "-e", "1M", "-f", "32", "-N", "2", "--dtype", "bf16"]
    result = runner.invoke(app, [*argv, "--plot", str(tmp_path / "s.png")])
    assert result.exit_code == 0, result.stderr
    assert figures[-1].axes[0].get_title().startswith("all_reduce bf16 busbw, 2 nodes x 8 GPUs")
    log = Path(__file__).parents[1] / "logs" / "fixtures"
    log /= "13_allgather_16node_64xH100_slingshot_kestrel_table_only_crlf.txt"
    result = runner.invoke(app, ["nccl-check", str(log), "--plot", str(tmp_path / "c.png")])
    assert result.exit_code != 2, result.stderr
    title = " ".join(figures[-1].axes[0].get_title().split())
    assert title == (
        "all_gather: measured vs expected busbw, fp32 on 8 x 8 GPUs (dgx-h100) nvlink4 + "
        "8 x ndr per node with NVLS (verdict: bad)"
    )


def test_a_measurement_is_drawn_above_the_switch_diamond_at_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nccl-check of sweep 04 (all-to-all on 2 x 8 MI355X): the expected choice changes to
    pxn/Simple at 2 MiB, and the white diamond marking it had covered the measured point there
    on both panels. The measured markers are drawn above the diamonds."""
    pytest.importorskip("matplotlib")
    figures = _drawn(monkeypatch)
    log = Path(__file__).parents[2] / "benchmarks" / "data" / "sweeps"
    log /= "04_alltoall_2node_16xMI355X_ainic-ethernet-rccl.txt"
    result = runner.invoke(app, ["nccl-check", str(log), "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.stderr
    (fig,) = figures
    for axis in fig.axes:
        (diamonds,) = [line for line in axis.lines if line.get_marker() == "D"]
        assert list(diamonds.get_xdata()) == [2.0 * 2**20]
        (measured,) = [line for line in axis.lines if line.get_marker() == "s"]
        assert 2.0 * 2**20 in list(measured.get_xdata())
        assert measured.get_zorder() > diamonds.get_zorder()


def test_the_footnote_stands_on_a_clear_box_over_a_low_ceiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 1 GiB all-reduce on 2 x 8 H100 over ndr and hdr: hdr's node ceiling (8 x 200 Gb/s x
    0.975 = 195 GB/s) is the lowest line on the axis and ran through the footnote's letters.
    The footnote sits on a half-clear white box, above the ceilings' lines."""
    pytest.importorskip("matplotlib")
    figures = _drawn(monkeypatch)
    argv = ["sweep", "allreduce", "-b", "1G", "-e", "1G", "-N", "2", "--inter", "ndr,hdr"]
    result = runner.invoke(app, [*argv, "--plot", str(tmp_path / "one.png")])
    assert result.exit_code == 0, result.stderr
    ax = figures[-1].axes[0]
    (note,) = [t for t in ax.texts if t.get_text().startswith("ibcalc ")]
    box = note.get_bbox_patch()
    assert box is not None
    assert box.get_facecolor()[:3] == (1.0, 1.0, 1.0)
    low = min(
        ax.lines, key=lambda line: line.get_ydata()[0] if line.get_linestyle() == "--" else 1e9
    )
    assert low.get_ydata()[0] == pytest.approx(195.0)
    assert note.get_zorder() > low.get_zorder()


@pytest.mark.parametrize(
    ("log", "library", "tuner"),
    [
        (
            "04_alltoall_2node_16xMI355X_ainic-ethernet-rccl.txt",
            "rccl",
            "NCCL's tuner, standing in for RCCL's,",
        ),
        ("10_allreduce_2node_8xH100_ib.txt", "nccl", "NCCL's tuner"),
    ],
)
def test_the_check_plot_says_whose_tuner_its_diamonds_are_and_where_the_table_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: str, library: str, tuner: str
) -> None:
    """The switch diamonds mark where NCCL's tuner, as the model prices it, changes the
    expected pick. An rccl-tests log (all-to-all on 2 x 8 MI355X) is expected with NCCL's tuner
    constants too, as its report's note says ("RCCL's own constants are not modelled"), so
    its diamonds are NCCL's picks standing in for RCCL's: the legend had called them "RCCL's
    tuner switches". And nccl-check's table marks no switch with '>' (the sweep table's mark,
    which the legend had pointed to): its algorithm column changes there (log 10: tree/LL to
    ring/LL at 128 KiB)."""
    pytest.importorskip("matplotlib")
    from ibcalc.logs.check import check_log
    from ibcalc.logs.parse import parse_file
    from ibcalc.render.logs import plot_check

    path = Path(__file__).parents[2] / "benchmarks" / "data" / "sweeps" / log
    text = path.read_text(encoding="utf-8")
    (check,) = check_log(parse_file(path), text, catalogue=load_catalogue(use_env=False))
    assert check.library == library
    if library == "rccl":
        assert "RCCL's own constants are not modelled" in " ".join(
            a.evidence for a in check.assumptions
        )
    else:
        picks = [r.choice for r in check.rows]
        assert picks[picks.index("ring/LL") - 1] == "tree/LL"
    figures = _drawn(monkeypatch)
    plot_check(tmp_path / "check.png", check)
    (fig,) = figures
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert (
        f"diamond: {tuner} switches (the table's algorithm column changes), with the new pick "
        "and time's fall"
    ) in legend
    assert not any("RCCL's tuner" in line or "table's >" in line for line in legend)


def test_the_check_plot_draws_the_cluster_s_ceilings_as_the_sweep_plot_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nccl-check's plot had drawn no bandwidth ceiling where the sweep plot draws the scale-up
    link's per GPU and the network's per node; the check carries them as numbers. Log 10, 2 x 4
    H100 (snellius-h100) over 4 x NDR200 per node: 4 x 200 Gb/s / 8 x 0.975 (NDR's catalogue
    efficiency) = 97.5 GB/s per node, 24.4 GB/s per GPU; log 13, one node: the scale-up line
    alone."""
    pytest.importorskip("matplotlib")
    from ibcalc.logs.check import check_log
    from ibcalc.logs.parse import parse_file
    from ibcalc.render.logs import plot_check

    sweeps = Path(__file__).parents[2] / "benchmarks" / "data" / "sweeps"
    catalogue = load_catalogue(use_env=False)
    expected = {
        "10_allreduce_2node_8xH100_ib.txt": [
            "ndr200 achievable per node (4 NICs, ring ceiling): 97.5 GB/s",
            "ndr200 per-GPU share (the scale-out side of the gap): 24.4 GB/s",
        ],
        "13_allreduce_1node_4xH100_intranode.txt": [],
    }
    for name, network in expected.items():
        path = sweeps / name
        (check,) = check_log(
            parse_file(path), path.read_text(encoding="utf-8"), catalogue=catalogue
        )
        ceilings = check.ceilings
        assert ceilings is not None
        assert ceilings.scale_up_link == "nvlink4-mesh4"
        assert ceilings.scale_up_GBps is not None
        if network:
            assert ceilings.network_GBps == pytest.approx(4 * 200 / 8 * 0.975)
            assert check.model_dump(mode="json")["ceilings"]["network_GBps"] == 97.5
        else:
            assert ceilings.network_GBps is None
        figures = _drawn(monkeypatch)
        plot_check(tmp_path / "check.png", check)
        (fig,) = figures
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        drawn = [t for t in legend if "achievable per" in t or "per-GPU share" in t]
        up = f"nvlink4-mesh4 achievable per GPU: {ceilings.scale_up_GBps:.0f} GB/s"
        assert drawn == [up, *network]
