"""Tables on narrow pages: no figure cut or broken, no word split (render.stream.fit_columns)."""

from __future__ import annotations

import copy
import io
import json
import re
from typing import Any
from unittest import mock

import pytest
from rich import box
from rich.table import Table
from typer.testing import CliRunner

from conftest import check_left_out_below
from ibcalc.catalogue.load import load_catalogue
from ibcalc.cli import app
from ibcalc.render.stream import Drop, PipeConsole, drop_columns, text_width, unit_wrap
from ibcalc.units import format_number, format_ratio

runner = CliRunner()


def _print(table: Table, width: int) -> list[str]:
    out = io.StringIO()
    PipeConsole(file=out, width=width, highlight=False).print(table)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def _table() -> Table:
    table = Table("link", "rate", "time", "note", box=box.SIMPLE_HEAD)
    table.add_row("nvlink4-bridge", "450 GB/s", "39.3 ms (36.7-48.5)", "a note that can wrap")
    table.add_row("ndr", "50.0 GB/s", "1,707x", "short")
    return table


def test_a_table_that_fits_is_left_as_rich_prints_it() -> None:
    wide = _print(_table(), 200)
    assert max(len(line) for line in wide) < 80
    assert any("39.3 ms (36.7-48.5)" in line for line in wide)


@pytest.mark.parametrize("width", [40, 50, 60])
def test_narrow_pages_wrap_words_but_keep_figures_and_ids_whole(width: int) -> None:
    """rich had cut 450 GB/s to "45" at 60 columns: every figure and id must appear whole on
    one line, whatever the width, while the note wraps between its words."""
    lines = _print(_table(), width)
    text = "\n".join(lines)
    for whole in ("nvlink4-bridge", "450 GB/s", "50.0 GB/s", "39.3 ms (36.7-48.5)", "1,707x"):
        assert whole in text, (whole, text)
    # the note wraps between words instead of widening the table further
    assert not any("a note that can wrap" in line for line in lines) or width >= 60


def test_a_table_wider_than_the_page_even_whole_is_printed_whole_past_the_edge() -> None:
    lines = _print(_table(), 20)
    assert any("39.3 ms (36.7-48.5)" in line for line in lines)
    assert max(len(line) for line in lines) > 20


@pytest.mark.parametrize("command", [["links"], ["systems"], ["storage"], ["gap"]])
def test_listings_at_60_columns_print_every_rate_whole(command: list[str]) -> None:
    """At 60 columns `systems` printed nvlink4's 450 GB/s as "45", `links` 80.0 as "80." and
    `gap` 1,707x as "1,70": a cut figure reads as another value. The columns a 60-column page
    leaves out are named under the table (test_narrow_pages_leave_out_columns_and_say_which)."""
    result = runner.invoke(app, command, env={"COLUMNS": "60"})
    assert result.exit_code == 0
    tokens = set(result.output.split())
    cat = load_catalogue(use_env=False)
    if command == ["links"]:
        # each row as at 80 columns, the line Gb/s and the efficiency (achievable / line) left
        # out
        wide = runner.invoke(app, command, env={"COLUMNS": "80"}).stdout
        rows: dict[str, dict[str, list[str]]] = {"wide": {}, "narrow": {}}
        for page, text in (("wide", wide), ("narrow", result.stdout)):
            for line in text.splitlines():
                if line.split():  # a row first, then the footnotes that name its id
                    rows[page].setdefault(line.split()[0], line.split())
        for link in cat.links:
            row = rows["wide"][link.id]
            assert row[4] == format_number(link.per_direction_Bps * 8 / 1e9)
            assert row[5] == f"{link.efficiency:.3g}"
            assert rows["narrow"][link.id] == row[:4] + row[6:]
    if command == ["systems"]:
        for system in cat.systems:
            assert system.id in tokens
        assert {"450", "900"} <= tokens
    if command == ["storage"]:
        for storage in cat.storage:
            assert storage.id in tokens
    if command == ["gap"]:
        rows = json.loads(runner.invoke(app, ["gap", "--format", "json"]).stdout)
        assert {format_ratio(row["slowdown"]) for row in rows} <= tokens  # 1,080x whole


#: For each listing: what a 60-column page leaves out, as its footnote names it
_LEFT_OUT_AT_60 = {
    "links": "the line Gb/s and eff columns are",
    "systems": "the GB/s per NIC, domain, conf and GPUs columns are",
    "storage": "the per client read / write and conf columns are",
    "gap": "the line-rate columns and the line ratio (the gap ibcalc check gates), the achv. "
    "ratio column and the 1 GB inside column are",
    "sweep": "the count column (elements), the type column (fp32 throughout) and the algbw "
    "column (size / time) are",
}
_NARROW_COMMANDS = {
    "links": ["links"],
    "systems": ["systems"],
    "storage": ["storage"],
    "gap": ["gap"],
    "sweep": ["sweep", "allreduce", "--system", "dgx-h100", "-N", "2", "-b", "1M", "-e", "64M"],
}


@pytest.mark.parametrize("name", list(_NARROW_COMMANDS))
def test_narrow_pages_leave_out_columns_and_say_which(name: str) -> None:
    """At COLUMNS=60 `links` printed lines of 78 characters, `systems` 80, `storage` 75, `gap`
    75 and the sweep 70, which a terminal wraps into a jumble (review EL). Every line now fits
    60 columns: the table closes up, then leaves out its least telling columns, and one
    footnote names them with the width that shows them all. At that width every column is
    back and nothing is said to be left out; a column narrower, the same footnote names the
    first of them."""
    command = _NARROW_COMMANDS[name]

    def page(columns: int) -> tuple[list[str], str]:
        result = runner.invoke(app, command, env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines(), " ".join(result.stdout.split())

    lines, flat = page(60)
    assert max(len(line) for line in lines) <= 60, max(lines, key=len)
    said = re.search(
        re.escape(_LEFT_OUT_AT_60[name]) + r" left out at 60 columns \((\d+) or more show them",
        flat,
    ) or re.search(
        re.escape(_LEFT_OUT_AT_60[name]) + r" left out at 60 columns \((\d+) or more show it", flat
    )
    assert said is not None, flat
    full = int(said[1])
    check_left_out_below(page, full)


@pytest.mark.parametrize(
    "command",
    [
        ["sweep", "allreduce", "-b", "8", "-e", "8G", "-f", "16", "--system", "aws-p5"],
        ["sweep", "allreduce", "-b", "1K", "-e", "16G", "-N", "4", "--system", "dgx-h100"],
    ],
)
def test_a_sweep_to_gigabytes_fits_60_columns(command: list[str]) -> None:
    """With its count, type and algbw columns left out, a sweep to 8 GiB (the README's own,
    on 2 x p5) still printed 61 columns on a 60-column page, and one to 16 GiB on 4 x DGX
    H100 65: its ten- and eleven-digit sizes keep the columns two spaces apart. Where nothing
    else is left to leave out, the columns close up to one space, every figure whole."""
    result = runner.invoke(app, command, env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 60, max(lines, key=len)
    rows = [line.split() for line in lines if line.split()[:1] and line.split()[0].isdigit()]
    assert int(rows[-1][0]) >= 2**31, rows[-1]
    assert rows[-1][-1] == "nvlstree/Simple", rows[-1]
    assert "left out at 60 columns" in " ".join(result.stdout.split())


def test_an_estimate_across_sites_fits_60_columns() -> None:
    """An estimate's ranks line across a WAN, '128 (nvlink4 inside, ndr between nodes,
    wan-100g between 2 sites)', had been taken for one figure (a number and a range in
    parentheses) and kept whole: the summary printed 76 columns on a 60-column page, its
    time and ranks lines past the edge. Its words now wrap; the time's figure stays whole."""
    command = ["allreduce", "--size", "1GiB", "--system", "dgx-h100", "-N", "16"]
    wan = ["--sites", "2", "--wan", "wan-100g", "--distance", "800km"]
    result = runner.invoke(app, [*command, *wan], env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 60, max(lines, key=len)
    assert any(line.startswith("  time         136 ms (135-164)") for line in lines), lines
    assert "wan-100g between 2 sites" in " ".join(result.stdout.split())


def test_prose_keeps_a_number_with_its_unit() -> None:
    """gap's conventions at 120 columns broke '(nvlink4: 900' from 'GB/s bidirectional': a
    paragraph (render.console.prose) wrapped as rich does, where assumptions and titles keep
    a figure whole (unit_wrap). It now wraps as they do."""
    result = runner.invoke(app, ["gap", "--system", "dgx-h100"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120, max(lines, key=len)
    assert any("900 GB/s bidirectional" in line for line in lines), lines[-4:]
    assert not [line for line in lines if line.rstrip().endswith(": 900")], lines[-4:]


def test_systems_at_60_columns_keep_the_network_rate_per_gpu() -> None:
    """At 60 columns `systems` had left out exactly its bandwidth columns, so the scale-out
    side read only "8 x ndr" (review EL): the rate per NIC (the network's per GPU x GPUs /
    NICs) and the less telling columns give way, the network's rate per GPU stays."""
    result = runner.invoke(app, ["systems"], env={"COLUMNS": "60"})
    row = next(
        line.split() for line in result.stdout.splitlines() if line.split()[:1] == ["dgx-h100"]
    )
    assert row == ["dgx-h100", "nvlink4", "450", "8", "x", "ndr", "50.0"]


def test_gap_says_where_its_line_rate_columns_went() -> None:
    """At 80 columns `gap` left out the line-rate columns and the line ratio (9.00x for NVLink 4
    over NDR, the figure `check` gates) without a word, showing the achievable 7.9x alone."""

    def ndr_row(output: str) -> list[str]:
        return next(
            line.split()
            for line in output.splitlines()
            if line.split()[:3] == ["nvlink4", "371", "ndr"]
            or line.split()[:4] == ["nvlink4", "450", "371", "ndr"]
        )

    narrow = runner.invoke(app, ["gap"], env={"COLUMNS": "80"}).output
    assert f"{450 / 50:.2f}x" not in ndr_row(narrow)
    assert (
        "the line-rate columns and the line ratio (the gap ibcalc check gates) are left out at "
        "80 columns (90 or more show them; --format json has them)" in " ".join(narrow.split())
    )
    wide = runner.invoke(app, ["gap"], env={"COLUMNS": "120"}).output
    assert f"{450 / 50:.2f}x" in ndr_row(wide)
    assert "left out" not in wide


def test_no_color_gives_plain_text_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR (no-color.org): rich drops colour but had still written bold and italic escapes
    on a terminal (`ibcalc links` titles in italics; a hostile-input review)."""
    from rich.text import Text

    def printed() -> str:
        out = io.StringIO()
        console = PipeConsole(file=out, force_terminal=True)
        console.print(Text("links", style="italic"), Text("id", style="bold red"))
        return out.getvalue()

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" in printed()
    monkeypatch.setenv("NO_COLOR", "1")
    assert printed() == "links id\n"


def test_a_long_header_is_broken_over_two_lines_before_a_column_goes() -> None:
    """drop_columns' ``headers``: a header wider than its cells is broken over lines before any
    column is left out, and kept whole again where a drop leaves room for it."""
    table = Table(box=box.SIMPLE_HEAD)
    for header in ("phase", "per step (likely range)", "algorithm"):
        table.add_column(header, no_wrap=True)
    table.add_row("dp-allreduce", "718 ms (711-865)", "ring/Simple")
    whole, broken = "per step (likely range)", "per step\n(likely range)"
    drops = [Drop(("algorithm",), name="algorithm")]
    # 12 + 23 + 11 characters, a space either side of each, a divider between them and an edge
    # each side: 56; the header broken, the middle column is as wide as its 16-character cell
    for width, header, dropped in (
        (56, whole, []),
        (55, broken, []),
        (49, broken, []),
        (48, whole, drops),
        (42, whole, drops),
        (41, broken, drops),
    ):
        fitted = copy.deepcopy(table)
        console = PipeConsole(file=io.StringIO(), width=width)
        left, full = drop_columns(
            console, fitted, drops, close_up=False, measure=text_width, headers={whole: broken}
        )
        assert (left, full) == (dropped, 49 if dropped else 0), width
        assert [column.header for column in fitted.columns][1] == header, width
        assert text_width(console, fitted) <= width


def test_a_table_leaves_out_a_column_before_it_squeezes_prose_to_a_sliver() -> None:
    """drop_columns' measure keeps a column of prose (one that wraps, a line wider than
    PROSE_ROOM, 28) at least 28 wide; it had asked only for its longest word, so a table kept
    its optional columns and wrapped its prose a word or two a line (an S3 checkpoint's limit,
    10 wide at 60 columns). A wrapping column no wider than 28 may still narrow to its longest
    word."""
    prose = "8,752 parts of 16 MB at 3,500 PUT requests/s per prefix x 1 prefix"
    drops = [Drop(("rate",), name="rate")]

    def fitted(note: str, width: int) -> tuple[list[Drop], int, list[str]]:
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("link", no_wrap=True)
        table.add_column("rate", no_wrap=True)
        table.add_column("limit")
        table.add_row("nvlink4-bridge", "450 GB/s", note)
        console = PipeConsole(file=io.StringIO(), width=width)
        left, full = drop_columns(console, table, drops)
        return left, full, [str(column.header) for column in table.columns]

    # 14 + 8 + 28 characters and what a SIMPLE_HEAD box adds to three columns: a space either
    # side of each (6), a divider between them (2) and an edge each side (2): 60; closed up to
    # one space (3 + 2 + 2): 57, to none: 54, wider than 50; without the rate, 14 + 28 and
    # 4 + 1 + 2 = 49 (the longest word, requests/s, had asked for 14 + 8 + 10 + 10 = 42)
    assert fitted(prose, 50) == (drops, 54, ["link", "limit"])
    assert fitted(prose, 54) == ([], 0, ["link", "rate", "limit"])
    # "a note that can wrap" (20) is no prose: 14 + 8 + 5 (the header, limit) + 4 fits 31
    assert fitted("a note that can wrap", 31) == ([], 0, ["link", "rate", "limit"])


def test_a_layout_search_is_laid_out_from_its_text() -> None:
    """The search's table (59 layouts here) is sized from its cells' text, not by rich's
    measure of every cell: at 60 columns rich had measured it twice, the probe that sizes the
    notes and the fitting; dropping or closing up its columns measures it again for each try."""
    calls: list[int] = []
    measure = Table.__rich_measure__

    def counted(self: Table, console: Any, options: Any) -> Any:
        calls.append(len(self.rows))
        return measure(self, console, options)

    argv = ["train", "--model", "deepseek-v3", "--system", "gb200-nvl72", "-N", "18", "--compare"]
    for columns in ("60", "80", "160"):
        with mock.patch.object(Table, "__rich_measure__", counted):
            result = runner.invoke(app, argv, env={"COLUMNS": columns})
        assert result.exit_code == 0, result.output
        assert sum(1 for line in result.stdout.splitlines() if line.split()[:1] == ["59"]) == 1
    assert calls == []


def test_emoji_codes_in_a_cell_print_as_written() -> None:
    """A cell's text prints as it is written, and as wide as its text says: rich's emoji codes
    are off as its markup is (``gpu:100:a :x: ok`` had printed as ``gpu💯a ❌ ok``, narrower than
    the width worked out from the text; review ET 5)."""
    stream = io.StringIO()
    console = PipeConsole(file=stream, width=80, highlight=False)
    table = Table("host", "note", box=box.SIMPLE_HEAD)
    table.add_row("gpu:100:a", ":x: ok [b]")
    console.print(table)
    out = stream.getvalue()
    assert "gpu:100:a" in out
    assert ":x: ok [b]" in out
    assert max(len(line) for line in out.splitlines()) == text_width(console, table)


def test_unit_wrap_counts_display_cells() -> None:
    """A wide character takes two cells on the page, and unit_wrap counts it so: at 10 cells,
    "クラスタ ab cd" (8 + 1 + 2 + 1 + 2 = 14 cells, 10 characters) breaks after its first word,
    where counting characters had kept it on one line, which rich then wrapped again (review
    ET 4)."""
    assert unit_wrap("クラスタ ab cd", 10) == "クラスタ\nab cd"
    assert unit_wrap("abcdefgh ab cd", 10) == "abcdefgh\nab cd"
    assert unit_wrap("at 65.7 ms then", 8) == "at\n65.7 ms\nthen"


def test_unit_wrap_keeps_the_phrases_given_whole() -> None:
    """unit_wrap(keep=...) never breaks a kept phrase (a path with spaces), and counts its
    spaces as the cells they are, in ASCII and wide text alike."""
    assert unit_wrap("wrote /a b/c d.yaml now", 12) == "wrote /a b/c\nd.yaml now"
    assert unit_wrap("wrote /a b/c d.yaml now", 12, ["/a b/c d.yaml"]) == (
        "wrote\n/a b/c d.yaml\nnow"
    )
    assert unit_wrap("wrote /a b now", 10, ["/a b"]) == "wrote /a b\nnow"
    assert unit_wrap("クラ /a b now", 10, ["/a b"]) == "クラ /a b\nnow"


def test_architecture_quotes_the_links_footnote_at_60_columns() -> None:
    """docs/architecture.md quotes the footnote `links` prints at 60 columns as its example of
    columns_left_out; 671a5d96 changed it ('the line Gb/s and eff columns ... 70 or more') and
    the doc had kept the old one ('the eff column ... 65 or more show it')."""
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
    result = runner.invoke(app, ["links"], env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    printed = " ".join(result.stdout.split())
    footnote = printed[printed.index("the line Gb/s") : printed.index("every field)") + 12]
    assert f'("{footnote}")' in " ".join(doc.read_text().split())
