"""render/console.py: an Estimate as a table (a unit on every number) and as JSON (its fields).

The estimate and the link are built here by hand, so every figure is worked out below: 1.6 GB
all-reduced in 10 ms over 16 ranks is algbw 1.6e9 B / 0.01 s = 160 GB/s, and busbw 160 x
2 (16 - 1) / 16 = 160 x 1.875 = 300 GB/s (nccl-tests' all-reduce factor).
"""

from __future__ import annotations

import io
import json
import re

import pytest
from typer.testing import CliRunner

from ibcalc.catalogue.models import Link
from ibcalc.cli import app
from ibcalc.engine.types import Algorithm, Collective, Cost, Estimate, Protocol
from ibcalc.render.console import Format, _gbps, render_estimate, render_links
from ibcalc.render.logs import _value
from ibcalc.render.stream import unit_wrap

BEST = Cost(
    algorithm=Algorithm.RING,
    protocol=Protocol.SIMPLE,
    latency_s=50e-6,
    transfer_s=9.95e-3,
    bottleneck="ndr NICs",
)
# 0.5 ms + 12 ms = 12.5 ms: algbw 1.6e9 / 0.0125 = 128 GB/s, busbw 128 x 1.875 = 240 GB/s
RUNNER_UP = Cost(
    algorithm=Algorithm.TREE,
    protocol=Protocol.LL128,
    latency_s=0.5e-3,
    transfer_s=12e-3,
    bottleneck="ndr NICs",
)
ESTIMATE = Estimate(
    collective=Collective.ALL_REDUCE,
    size_bytes=1.6e9,
    dtype="fp32",
    count=400_000_000,  # 1.6e9 B / 4 B per fp32 element
    nodes=2,
    gpus_per_node=8,
    ranks=16,
    intra="nvlink4",
    inter="ndr",
    nics_per_node=8,
    domains=2,
    best=BEST,
    alternatives=[RUNNER_UP],
    assumptions=["2 nodes assumed ({nodes})"],
)
NAMES = {"nodes": "--nodes"}


def _table(est: Estimate, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The table's lines with runs of spaces folded to one (cells are padded)."""
    monkeypatch.setenv("COLUMNS", "160")
    out = io.StringIO()
    render_estimate(est, Format.TABLE, names=NAMES, stream=out)
    return [" ".join(line.split()) for line in out.getvalue().splitlines() if line.strip()]


def test_table_shows_the_worked_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _table(ESTIMATE, monkeypatch)
    assert lines[0] == "all_reduce of 1.6 GB (fp32) on 2 nodes x 8 GPUs"
    for row in (
        # three figures, as the alternatives' column prints them (review DG: "21 ms" had sat
        # beside "19.3 ms")
        "time 10.0 ms",
        "algbw 160 GB/s",
        "busbw 300 GB/s [busbw = algbw x 1.875]",
        "algorithm ring / Simple",
        "bottleneck ndr NICs",
        "terms latency 50.0 us + transfer 9.95 ms",
        "ranks 16 (nvlink4 inside, ndr between)",
        # runner-up: 12.5 ms, 240 GB/s busbw, 12.5 / 10 = 1.25 x the chosen time
        "tree LL128 12.5 ms 240 GB/s 1.25x",
        "assumptions:",
        "- 2 nodes assumed (--nodes)",  # the {nodes} mark named as the caller names it
    ):
        assert row in lines, row


def test_an_overlapping_choice_says_its_time_is_back_to_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chosen chain whose operations overlap (one alone 10 ms, back to back every 2 ms) beside
    an alternative that does not: the table says the times are each as nccl-tests measures
    them (review EB 10); without the overlap it says nothing."""
    chain = BEST.model_copy(update={"period_s": 2e-3, "measured_s": 2e-3})
    est = ESTIMATE.model_copy(update={"best": chain})
    note = (
        "note: times as nccl-tests measures them back to back: ring/Simple starts the next "
        "operation before the last ends (ring/Simple alone: 10.0 ms); tree/LL128 does not "
        "overlap (docs/model.md)"
    )
    assert " ".join(" ".join(_table(est, monkeypatch)).split()).count(note) == 1
    assert not any(line.startswith("note: times") for line in _table(ESTIMATE, monkeypatch))
    # the overlapping one an alternative, beside a chosen (forced) one that does not (EE 6)
    chain_alt = RUNNER_UP.model_copy(update={"period_s": 1e-3, "measured_s": 1e-3})
    forced = ESTIMATE.model_copy(update={"alternatives": [chain_alt]})
    assert (
        " ".join(" ".join(_table(forced, monkeypatch)).split()).count(
            "note: times as nccl-tests measures them back to back: tree/LL128 starts the next "
            "operation before the last ends (tree/LL128 alone: 12.5 ms); ring/Simple does not "
            "overlap (docs/model.md)"
        )
        == 1
    )


#: Units a number in an estimate table may carry (counts of nodes and GPUs, the busbw factor
#: after "x", and the ratio to the chosen time "1.25x" are the only unit-less figures).
_UNIT = re.compile(r"\s?(us|ms|s|GB/s|MB/s|GB|x|nodes?|GPUs?)\b|x(?=\s|$)")


def test_every_number_in_the_table_has_a_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    for line in _table(ESTIMATE, monkeypatch):
        if line.startswith(("ranks ", "- ")):  # a rank count; assumptions are prose
            continue
        for number in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", line):
            after = line[number.end() :]
            factor = line[: number.start()].endswith("x ")  # "algbw x 1.875"
            assert factor or _UNIT.match(after), f"{number.group()!r} without a unit in {line!r}"


def test_table_shows_the_likely_range_in_the_value_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    est = ESTIMATE.model_copy(update={"time_s_range": (8e-3, 12.5e-3)})
    lines = _table(est, monkeypatch)
    # busbw 1.6e9 / 0.0125 x 1.875 = 240 GB/s and 1.6e9 / 0.008 x 1.875 = 375 GB/s
    assert "time 10.0 ms (8.00-12.5) likely range of a measurement" in lines
    assert "busbw 300 GB/s (240-375) [busbw = algbw x 1.875]" in lines


def test_table_states_the_busbw_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "busbw 300 GB/s [busbw = algbw x 1.875]" in _table(ESTIMATE, monkeypatch)


@pytest.mark.parametrize(
    ("collective", "factor"),
    [
        # 800,000 ranks: an all-reduce's 2 (n - 1) / n = 1.9999975, an all-to-all's (n - 1) / n
        # = 0.99999875; four figures had printed them as 2 and 1 (a review)
        (Collective.ALL_REDUCE, "1.999998"),
        (Collective.ALL_TO_ALL, "0.999999"),
        (Collective.BROADCAST, "1"),  # exactly 1
    ],
)
def test_a_busbw_factor_not_whole_never_reads_whole(
    collective: Collective, factor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    est = ESTIMATE.model_copy(update={"collective": collective, "nodes": 100_000, "ranks": 800_000})
    (line,) = [line for line in _table(est, monkeypatch) if line.startswith("busbw ")]
    assert line.endswith(f"[busbw = algbw x {factor}]")


def _json(est: Estimate) -> dict[str, object]:
    out = io.StringIO()
    render_estimate(est, Format.JSON, names=NAMES, stream=out)
    data: dict[str, object] = json.loads(out.getvalue())
    return data


def test_json_keys_are_the_published_ones_in_order() -> None:
    assert list(_json(ESTIMATE)) == [
        "collective",
        "size_bytes",
        "dtype",
        "count",
        "nodes",
        "gpus_per_node",
        "ranks",
        "domains",
        "intra",
        "inter",
        "nics_per_node",
        "requested_size_bytes",
        "sharp",
        "oversubscription",
        "cross_leaf_fraction",
        "neighbour_cross_leaf_fraction",
        "unaligned_cross_leaf_fraction",
        "sites",
        "wan",
        "wan_links",
        "wan_latency_s",
        "gpus_per_process",
        "host_pcie",
        "tuner_constants",
        "algorithm",
        "protocol",
        "time_s",
        "time_s_range",
        "range_covers",
        "range_reaches",
        "range_wire_floor_s",
        "latency_s",
        "transfer_s",
        "fill_s",
        "one_operation_s",
        "measurement",
        "algbw_GBps",
        "busbw_GBps",
        "busbw_GBps_range",
        "busbw_equivalent",
        "busbw_factor",
        "bottleneck",
        "formula",
        "assumptions",
        "alternatives",
    ]


def test_json_values_are_the_estimate_fields_and_worked_figures() -> None:
    data = _json(ESTIMATE)
    for key in (
        "size_bytes",
        "dtype",
        "nodes",
        "gpus_per_node",
        "ranks",
        "intra",
        "inter",
        "nics_per_node",
        "requested_size_bytes",
        "sharp",
        "oversubscription",
        "cross_leaf_fraction",
        "neighbour_cross_leaf_fraction",
        "unaligned_cross_leaf_fraction",
        "sites",
        "wan",
        "time_s_range",
    ):
        assert data[key] == getattr(ESTIMATE, key), key
    assert data["collective"] == "all_reduce"
    assert (data["algorithm"], data["protocol"]) == ("ring", "Simple")
    assert data["time_s"] == pytest.approx(0.01)
    assert (data["latency_s"], data["transfer_s"], data["fill_s"]) == (50e-6, 9.95e-3, 0.0)
    # the terms add up to one operation; time_s is that here (nothing overlaps or waits)
    assert data["one_operation_s"] == pytest.approx(50e-6 + 9.95e-3)
    assert data["measurement"] == "one operation's time (no overlap across iterations)"
    assert data["algbw_GBps"] == pytest.approx(160)
    assert data["busbw_GBps"] == pytest.approx(300)
    assert data["busbw_factor"] == pytest.approx(1.875)
    assert data["busbw_equivalent"] is False
    assert data["bottleneck"] == "ndr NICs"
    assert data["assumptions"] == ["2 nodes assumed (--nodes)"]
    (alternative,) = data["alternatives"]  # type: ignore[misc]
    assert alternative == {
        "algorithm": "tree",
        "protocol": "LL128",
        "time_s": pytest.approx(0.0125),
        "latency_s": 0.5e-3,
        "transfer_s": 12e-3,
        "fill_s": 0.0,
        "one_operation_s": pytest.approx(0.5e-3 + 12e-3),
        "algbw_GBps": pytest.approx(128),
        "busbw_GBps": pytest.approx(240),
        "busbw_equivalent": False,
    }


def test_json_range_in_seconds_and_gigabytes() -> None:
    data = _json(ESTIMATE.model_copy(update={"time_s_range": (8e-3, 12.5e-3)}))
    assert data["time_s_range"] == [8e-3, 12.5e-3]
    assert data["busbw_GBps_range"] == [pytest.approx(240), pytest.approx(375)]


LINK = Link.model_validate(
    {
        "id": "test-ib",
        "name": "a 400G test port",
        "kind": "scale-out",
        "family": "infiniband",
        "generation": "test",
        "scope": "per-port",
        "per_direction": "400 Gb/s",
        "efficiency": 0.9,
        "efficiency_source": "a round number for the test",
        "sources": ["this test"],
        "confidence": "low",
    }
)


def test_links_table_gives_rates_in_both_units(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    out = io.StringIO()
    render_links([LINK], Format.TABLE, stream=out)
    rows = [" ".join(line.split()) for line in out.getvalue().splitlines()]
    # 400 Gb/s / 8 = 50 GB/s line; x 0.9 = 45 GB/s achievable; the units in the headers
    assert "test-ib scale-out per-port 50.0 400 0.9 45.0 low a 400G test port" in rows
    assert "id kind scope GB/s Gb/s eff GB/s conf name" in rows
    # at 80 columns both units fit (a fixed rule had dropped Gb/s below 90 without a word)
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    render_links([LINK], Format.TABLE, stream=out)
    rows = [" ".join(line.split()) for line in out.getvalue().splitlines()]
    assert "test-ib scale-out per-port 50.0 400 0.9 45.0 low" in rows
    # at 50 the Gb/s column goes first (the table is 53 wide with it), and the footnote says so
    monkeypatch.setenv("COLUMNS", "50")
    out = io.StringIO()
    render_links([LINK], Format.TABLE, stream=out)
    text = out.getvalue()
    rows = [" ".join(line.split()) for line in text.splitlines()]
    assert "test-ib scale-out per-port 50.0 0.9 45.0 low" in rows
    assert "the line Gb/s column is left out at 50 columns" in " ".join(text.split())


def test_links_json_gives_rates_in_gigabytes_and_gigabits() -> None:
    out = io.StringIO()
    render_links([LINK], Format.JSON, stream=out)
    (data,) = json.loads(out.getvalue())
    assert data["per_direction_GBps"] == pytest.approx(50)
    assert data["per_direction_Gbps"] == pytest.approx(400)
    assert data["achievable_GBps"] == pytest.approx(45)
    assert data["efficiency"] == 0.9


@pytest.mark.parametrize(
    ("unit", "value", "text"),
    [
        ("s", 476e-6, "476 us"),  # was '476. us'
        ("s", 1234e-6, "1,234 us"),  # was '1.23e+03 us'
        ("s", 999.7e-6, "1,000 us"),  # rounds up: not '1.00e+03 us'
        ("s", 999.4e-6, "999 us"),
        ("s", 1.01e-6, "1.01 us"),
        ("s", 0.0, "0.00 us"),
        ("", 0.9, "0.900"),
        ("", 0.0183, "0.0183"),
        ("B/s", 1.15e9, "1.15 GB/s"),
    ],
)
def test_calibrated_values_read_as_plain_numbers(unit: str, value: float, text: str) -> None:
    assert _value(unit, value) == text


@pytest.mark.parametrize(
    "argv",
    [
        ["allreduce", "--size", "10GB", "--fabric", "ndr"],
        ["allreduce", "--size", "25MiB", "--system", "dgx-h100", "--nodes", "4", "--explain"],
        ["allreduce", "--size", "1GB", "--sites", "2", "-N", "4"],
        ["sweep", "allreduce", "-b", "64K", "-e", "64M", "--system", "dgx-h100", "--nodes", "16"],
        ["gap"],
        ["train", "--model", "llama3-70b", "--tp", "8", "--pp", "2", "--nodes", "16"],
        ["infer", "--model", "llama3-70b", "--tp", "8", "--system", "dgx-h100"],
    ],
)
def test_every_line_fits_an_80_column_page(argv: list[str]) -> None:
    """Assumptions, notes, the sweep's footnote, gap's conventions and --explain's prose were
    printed as single lines of up to 266 columns, which a terminal breaks mid-word; tables cut
    cells. At COLUMNS=80 every line fits, and no cell is cut."""
    from typer.testing import CliRunner

    from ibcalc.cli import app

    result = CliRunner().invoke(app, argv, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert "…" not in result.stdout


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_systems_table_never_splits_an_id(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    """Every preset id reads whole in its row's first cell at 80, 100 and 160 columns (80 had
    printed 'gb200-nvl' over '72', 100 'slingshot-1' over '1' in the NICs column), and no line
    is wider than the terminal."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.render.console import render_systems

    monkeypatch.setenv("COLUMNS", str(columns))
    catalogue = load_catalogue()
    out = io.StringIO()
    render_systems(catalogue.systems, catalogue, stream=out)
    lines = out.getvalue().splitlines()
    table = [line for line in lines if not line.startswith("other names")]
    firsts = {line.split()[0] for line in table if line.strip()}
    assert {s.id for s in catalogue.systems} <= firsts
    assert max(len(line) for line in table) <= columns
    # every NIC link id is whole somewhere (it may wrap under its count: '8 x' over 'roce-400g')
    words = {w for line in table for w in line.split()}
    assert {s.inter for s in catalogue.systems if s.inter} <= words


def test_nccl_check_says_which_columns_a_narrow_page_leaves_out() -> None:
    """A page narrower than the rows table drops the regime, then the algorithm column, and
    says so with the width that shows them all; it had done so without a word. The table's
    full width is read from a wide page (it follows the cells: a latency row's time band)."""
    from pathlib import Path

    from typer.testing import CliRunner

    from ibcalc.cli import app

    log = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
    log /= "13_allreduce_1node_4xH100_intranode.txt"

    def check(columns: int) -> tuple[str, list[str], list[str]]:
        result = CliRunner().invoke(app, ["nccl-check", str(log)], env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        head = next(i for i, line in enumerate(lines) if line.split()[:1] == ["size"])
        end = next(i for i in range(head, len(lines)) if lines[i].startswith("eff."))
        return " ".join(result.stdout.split()), lines[head - 1 : head + 1], lines[head - 1 : end]

    _, _, table = check(200)
    full = max(len(line) for line in table)
    flat, header, _ = check(full)
    assert "left out at" not in flat
    assert "regime" in " ".join(header)
    flat, header, table = check(full - 1)
    assert f"the regime column left out at {full - 1} columns ({full} or more show it;" in flat
    assert "regime" not in " ".join(header)
    assert max(len(line) for line in table) <= full - 1
    flat, header, table = check(80)
    assert f"columns left out at 80 columns ({full} or more show them;" in flat
    assert "regime" not in " ".join(header)
    assert max(len(line) for line in table) <= 80
    # narrower than the table without its aid columns: the latency rows' time bands go too
    flat, header, table = check(60)
    assert max(len(line) for line in table) <= 60
    assert (
        "the regime, algorithm and line columns and the latency rows' time bands left out at 60"
        f" columns ({full} or more show them;" in flat
    )


def test_unit_wrap_never_parts_a_number_from_its_unit() -> None:
    text = "each TP all_reduce takes 513 us, against 246 us (2.09x slower; 65.7 ms vs 31.5 ms)"
    for width in range(12, len(text) + 1):
        lines = unit_wrap(text, width).split("\n")
        # every line fits, the words are the text's own, and no line starts with a unit
        assert all(len(line) <= width for line in lines)
        assert " ".join(lines) == text
        assert not any(line.split(" ")[0].rstrip(",;:)") in ("us", "ms") for line in lines)
    # sizes print kB (4ac3ec6), which had been missing from the units kept with their number
    # (review CW)
    sized = "an all-reduce of 1.5 kB takes 20.1 us"
    for width in range(10, len(sized) + 1):
        lines = unit_wrap(sized, width).split("\n")
        assert not any(line.startswith("kB") for line in lines), width


def test_a_warning_keeps_its_figures_whole_at_any_width() -> None:
    # the tp-64 warning had printed "(2.09x slower; 65.7" and "ms vs 31.5 ms" at 160 columns
    args = ["train", "--model", "llama3-8b", "--system", "dgx-h100", "--nodes", "8", "--tp", "64"]
    for columns in ("80", "120", "160", "200"):
        out = CliRunner().invoke(app, args, env={"COLUMNS": columns}).stdout
        lines = [line.strip() for line in out.splitlines()]
        assert not any(re.match(r"(us|ms|GiB|MiB)\b", line) for line in lines), columns
        assert all(len(line) <= int(columns) for line in out.splitlines())


def test_the_terms_show_a_fill_the_total_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """122 us + 776 ms + 1.42 ms = 777.5 ms, printed 778 ms: the fill, 0.18 % of it, had been
    left out of the terms (under 0.5 %), and latency plus transfer did not make the total (2
    nodes of an 8-GPU PCIe box, 8 GiB all-reduce; an auditor's review). A fill the total does
    not show (0.1 us on 10 ms) is still left out."""
    shown = BEST.model_copy(update={"latency_s": 122e-6, "transfer_s": 776e-3, "fill_s": 1.42e-3})
    lines = _table(ESTIMATE.model_copy(update={"best": shown}), monkeypatch)
    assert "terms latency 122 us + transfer 776 ms + pipeline fill 1.42 ms" in lines
    assert "time 778 ms" in lines
    hidden = BEST.model_copy(update={"fill_s": 0.1e-6})
    lines = _table(ESTIMATE.model_copy(update={"best": hidden}), monkeypatch)
    assert "terms latency 50.0 us + transfer 9.95 ms" in lines


@pytest.mark.parametrize(
    ("columns", "width"), [("100", 100), ("abc", 160), ("0", 160), ("-5", 160), ("", 160)]
)
def test_columns_that_are_no_width_are_ignored(
    columns: str, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """COLUMNS=0 and COLUMNS=-5 had been taken as a narrow page where COLUMNS=abc was ignored
    (a review)."""
    from ibcalc.render.stream import env_columns

    monkeypatch.setenv("COLUMNS", columns)
    assert env_columns(160) == width


@pytest.mark.parametrize(
    ("value_GBps", "shown"),
    [
        (21 * 12.5, "263"),  # Gaudi 2: 21 x 12.5 GB/s; a tie had rounded to even, '262'
        (12.5 * 0.9, "11.3"),  # EFA v2 achievable, 11.25
        (0.625 * 0.9, "0.563"),  # 0.5625 had read 0.562 beside 0.1125 read 0.113
        (0.125 * 0.9, "0.113"),
        (448 * 0.8, "358"),
        (48.75, "48.8"),
        (9.995, "10.0"),  # a carry into a new digit keeps three significant digits
        (99.96, "100"),
        (1.0, "1.00"),
        (0.9996, "1.00"),  # rounded into the rows from 1 up, written as they are (review BQ)
        (0.9994, "0.999"),
        (0.5, "0.5"),
    ],
)
def test_table_bandwidths_round_half_up(value_GBps: float, shown: str) -> None:
    assert _gbps(value_GBps) == shown


def test_the_ranking_is_set_off_from_the_range_above_it() -> None:
    """--explain printed 'why this algorithm: ...' on the line after the likely range's
    paragraph, where the derivation and the alternatives each stand after a blank line. 64 MiB
    broadcast on 2 x DGX H100 (ring/Simple: 8.4 us base + 14 x 3.4 us nvlink hops + 14 us NET
    hop + 16 x 0.6 us proxy operations = 79.6 us, and 64 MiB at 450 GB/s x 0.824 = 181 us)."""
    args = ["broadcast", "--size", "64MiB", "--system", "dgx-h100", "--nodes", "2", "--explain"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("why this algorithm"))
    assert lines[start - 1] == ""
    assert lines[start - 2].endswith("(error_band in data/cost_params.yaml)")
    assert "latency 79.6 us + transfer 181 us" in result.output
