"""One name for each thing in every output: collectives, links; and no padding in tables.

Regressions: sweep JSON said ``alltoall`` where estimate JSON said ``all_to_all``; ``ndr800``
resolved to XDR; tables were padded with trailing spaces to ~157 columns.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ibcalc.catalogue.load import find_link
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import app
from ibcalc.engine.types import Collective
from ibcalc.errors import UnknownNameError

runner = CliRunner()
CLUSTER = ["--system", "dgx-h100", "-N", "2"]


@pytest.mark.parametrize("collective", list(Collective), ids=[c.value for c in Collective])
def test_every_json_output_names_a_collective_by_the_enum_value(collective: Collective) -> None:
    """Estimate JSON, sweep JSON and nccl-tests-style sweep output all say Collective.value."""
    estimate = runner.invoke(app, [collective.command, "-s", "64MB", *CLUSTER, "--format", "json"])
    assert estimate.exit_code == 0, estimate.stderr
    assert json.loads(estimate.stdout)["collective"] == collective.value
    for spelling in (collective.command, collective.value):
        sweep = runner.invoke(
            app, ["sweep", spelling, "-b", "1M", "-e", "2M", *CLUSTER, "--format", "json"]
        )
        assert sweep.exit_code == 0, sweep.stderr
        assert {group["collective"] for group in json.loads(sweep.stdout)} == {collective.value}


def test_alltoall_has_one_spelling() -> None:
    # the value NCCL's tests use (alltoall_perf) is the one name; the engine enum carries it
    assert Collective.ALL_TO_ALL.value == "alltoall"
    assert Collective.ALL_TO_ALL.command == "alltoall"
    sweep = runner.invoke(app, ["sweep", "alltoall", "-b", "1M", "-e", "1M", *CLUSTER])
    assert "all_to_all" not in sweep.stdout


def test_ndr800_is_not_xdr(builtin_catalogue: Catalogue) -> None:
    """NDR is 400 Gb/s per port; "800G" NDR parts are twin-port cages of two NDR ports. The
    name is ambiguous, so it is refused, and the hint offers both readings."""
    assert find_link(builtin_catalogue, "ndr").per_direction_Bps == 400e9 / 8
    assert find_link(builtin_catalogue, "xdr").per_direction_Bps == 800e9 / 8
    with pytest.raises(UnknownNameError) as info:
        find_link(builtin_catalogue, "ndr800")
    assert "ndr400" in str(info.value)
    assert "xdr800" in str(info.value)
    result = runner.invoke(app, ["allreduce", "-s", "1GB", "--fabric", "ndr800"])
    assert result.exit_code == 2
    assert "--fabric 'ndr800' is not a known link (did you mean xdr800, ndr400" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["gap"],
        ["links"],
        ["links", "show", "ndr"],
        ["systems"],
        ["systems", "show", "dgx-h100"],
        ["gap", "--intra", "nvlink4", "--inter", "ndr", "--tp", "8"],
        ["allreduce", "-s", "1GB", *CLUSTER, "--explain"],
        ["sweep", "allreduce", "-b", "1K", "-e", "1M", *CLUSTER],
    ],
    ids=lambda a: " ".join(a),
)
@pytest.mark.parametrize("columns", [80, 140])
def test_tables_have_no_trailing_spaces_and_fit_the_width(
    args: list[str], columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []
    # rule and table lines fit; prose notes are printed unwrapped (one line each, for grep)
    table_lines = [line for line in lines if "─" in line or "  " in line.strip()]
    assert table_lines
    assert max(len(line) for line in table_lines) <= columns


@pytest.mark.parametrize(("columns", "line_rates"), [(80, False), (100, True), (160, True)])
def test_gap_table_keeps_every_figure_whole(
    columns: int, line_rates: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nvlink4 vs ndr: 450 GB/s line, 371 achievable per GPU (x 0.824, the catalogue's efficiency);
    # ndr 50 line, 48.8 achievable; the 1 GB all-reduce across 8 nodes of one GPU takes 36.2 ms
    # (ring transfer 2 x 7/8 x 1 GB / 48.75 GB/s = 35.9 ms, tests/test_gap.py, plus the Simple
    # ring's 14 network steps). The figures only locate the row: the test is about the layout.
    # Below 98 columns the line-rate columns give way; no figure is ever cut or folded.
    monkeypatch.setenv("COLUMNS", str(columns))
    result = runner.invoke(app, ["gap"])
    assert result.exit_code == 0, result.stderr
    assert "…" not in result.stdout
    cells = next(
        cells
        for cells in (line.split() for line in result.stdout.splitlines())
        if cells[:1] == ["nvlink4"] and "ndr" in cells
    )
    assert ("450" in cells) is line_rates
    assert ("9.00x" in cells) is line_rates  # line ratio 450 / 50
    assert "371" in cells
    assert "36.2" in cells  # across: 36.2 ms (the unit follows as its own word)


def test_sweep_csv_has_no_padding() -> None:
    result = runner.invoke(
        app, ["sweep", "allreduce", "-b", "1K", "-e", "4K", *CLUSTER, "--format", "csv"]
    )
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert all(cell == cell.strip() for row in rows for cell in row)


def test_sweep_csv_gives_each_bound_of_the_range_its_own_column() -> None:
    """The range was one cell, "[88.33, 199.2]"; a spreadsheet reads two numbers now, and they
    bracket the row's time."""
    result = runner.invoke(
        app, ["sweep", "allreduce", "-b", "1K", "-e", "4K", *CLUSTER, "--format", "csv"]
    )
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows
    for row in rows:
        assert "time_us_range" not in row
        low, time, high = (
            float(row[k]) for k in ("time_us_range_low", "time_us", "time_us_range_high")
        )
        assert low <= time <= high


def test_a_link_of_the_wrong_kind_is_refused_in_the_same_words_everywhere(tmp_path: Path) -> None:
    """--host-pcie wan-1g was refused three ways: 'give the PCIe link the NICs sit on' (estimates),
    'use a PCIe (host) link' (design files) and 'use a host link' (gap). The command line
    quotes the name as typed and ends with the command's hint, as a refusal of a value does."""
    why = "is a wan link; give the PCIe link the NICs sit on (e.g. pcie5"
    hint = f"wan-1g {why})"
    for args in (
        ["allreduce", "-s", "1GB", *CLUSTER, "--host-pcie", "wan-1g"],
        ["gap", "--system", "dgx-h100", "--host-pcie", "wan-1g"],
        ["train", "--system", "dgx-h100", "-N", "2", "--params", "7e9", "--host-pcie", "wan-1g"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, args
        assert result.stderr == (
            f"error: --host-pcie 'wan-1g' {why}; see 'ibcalc {args[0]} --help')\n"
        ), args
    design = tmp_path / "d.yaml"
    design.write_text(
        "name: x\nnodes: 2\nsystem: dgx-h100\nfabric: {link: ndr}\nhost_pcie: wan-1g\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 45}\n"
    )
    result = runner.invoke(app, ["check", str(design)])
    assert result.exit_code == 2
    assert f"{design}:5:1: host_pcie: {hint}" in result.stderr
    # the scale-out place: --inter and the design's fabric.link
    inter_hint = "use a scale-out link"
    result = runner.invoke(app, ["allreduce", "-s", "1GB", "-N", "2", "--inter", "nvlink4"])
    assert result.stderr == (
        f"error: --inter 'nvlink4' is a scale-up link; {inter_hint} (see 'ibcalc allreduce "
        "--help')\n"
    )
    # a WAN between nodes would skip the WAN model (1 GB over 8 x wan-100g per node: 27.2 ms,
    # where --sites 2 --wan wan-100g --wan-links 8 gives 31.9 ms): refused
    for nodes in ("2", "1"):  # on one node too, where the link would go unused
        result = runner.invoke(app, ["allreduce", "-s", "1GB", "-N", nodes, "--inter", "wan-100g"])
        assert result.stderr == (
            f"error: --inter 'wan-100g' is a wan link; {inter_hint} (a WAN joins sites, not "
            "nodes; see 'ibcalc allreduce --help')\n"
        )
    design.write_text(
        "name: x\nnodes: 2\nsystem: dgx-h100\nfabric: {link: nvlink4}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 45}\n"
    )
    result = runner.invoke(app, ["check", str(design)])
    assert f"fabric.link: nvlink4 is a scale-up link; {inter_hint}" in result.stderr
    design.write_text(
        "name: x\nnodes: 2\nsystem: dgx-h100\nfabric: {link: wan-10g}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 45}\n"
    )
    result = runner.invoke(app, ["check", str(design)])
    assert f"fabric.link: wan-10g is a wan link; {inter_hint} (a WAN joins" in result.stderr


@pytest.mark.parametrize("command", ["broadcast", "reduce"])
def test_a_rooted_collectives_help_gives_its_size_convention(command: str) -> None:
    """algbw is --size over the time, and the help of all-gather, reduce-scatter, all-to-all and
    sendrecv each says which size it is; broadcast's and reduce's said only 'Estimate a
    broadcast'. Each rank's buffer, as nccl-tests' broadcast_perf and reduce_perf print it:
    64 MiB on 2 x DGX H100 is algbw 67108864 B over the time, busbw the same (factor 1)."""
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "--size is each rank's buffer (nccl-tests convention)" in result.output
    est = json.loads(
        runner.invoke(app, [command, "-s", "64MiB", *CLUSTER, "--format", "json"]).output
    )
    assert est["algbw_GBps"] == pytest.approx(67108864 / est["time_s"] / 1e9, rel=1e-12)
    assert est["busbw_GBps"] == pytest.approx(est["algbw_GBps"], rel=1e-12)
