"""Regressions found by trying the tool as a user (each expected value is worked out here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.cli import app, main
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.errors import IbcalcError
from ibcalc.units import parse_size

runner = CliRunner()
CAT = load_catalogue(use_env=False)


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ")
    return err


def test_fewer_gpus_on_a_preset_keeps_its_nics_per_gpu() -> None:
    # dgx-h100: 8 NDR for 8 GPUs -> one GPU per node gets one NIC, not eight
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", gpus_per_node=1, nodes=8))
    assert cluster.nics_per_node == 1
    assert cluster.topology.domain_bw_Bps() == pytest.approx(find_link(CAT, "ndr").achievable_Bps)


def test_nics_beyond_what_pcie_feeds_add_nothing() -> None:
    # 256 NICs for 8 GPUs: each GPU reaches its NICs through one PCIe Gen5 x16 link
    cluster = resolve_cluster(CAT, ClusterSpec(system="dgx-h100", nodes=8, nics_per_node=256))
    pcie5 = find_link(CAT, "pcie5").achievable_Bps
    assert cluster.topology.domain_bw_Bps() == pytest.approx(8 * pcie5)


def test_presets_without_nics_stay_in_one_box(capsys: pytest.CaptureFixture[str]) -> None:
    cluster = resolve_cluster(CAT, ClusterSpec(system="rtx2080ti-2"))
    assert cluster.nodes == 1
    assert "no scale-out NIC" in _error(
        ["allreduce", "-s", "1GB", "--system", "rtx2080ti-2", "-N", "2"], capsys
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-g", "0"], "--gpus-per-node 0"),
        (["--sites", "0"], "--sites 0"),
        (["--intra", ""], "--intra is empty"),
        (["-g", "1000"], "--nics-per-node"),
    ],
)
def test_bad_cluster_flags_are_refused(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert words in _error(["allreduce", "-s", "1GB", *args], capsys)


def test_bare_size_letters_follow_nccl_tests() -> None:
    assert parse_size("1M") == 2**20
    assert parse_size("1MB") == 10**6
    result = runner.invoke(
        app,
        ["sweep", "allreduce", "-b", "1M", "-e", "1G", "-f", "2", "-N", "1", "--format", "json"],
    )
    assert result.exit_code == 0
    (group,) = json.loads(result.stdout)
    sizes = [row["size_bytes"] for row in group["rows"]]
    assert sizes == [2**20 * 2**i for i in range(11)]  # 1 MiB .. 1 GiB, as all_reduce_perf


def test_design_quantities_need_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design = tmp_path / "bare.yaml"
    design.write_text(
        "name: bare\nnodes: 4\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 1000000000, min_busbw: 300}\n"
        "  - allreduce: {size: 1GB, max_time: '45'}\n"
    )
    err = _error(["check", str(design)], capsys)
    lines = err.splitlines()
    assert len(lines) == 2  # both problems, each with its position
    assert f"{design}:5:" in lines[0]
    assert "needs a unit" in lines[0]
    assert f"{design}:6:" in lines[1]


def test_check_will_not_write_over_a_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "aws-p5-efa.yaml"
    target = tmp_path / "a.yaml"
    target.write_text(example.read_text())
    before = target.read_text()
    assert "looks like a design file" in _error(["check", "-o", str(target), str(example)], capsys)
    assert target.read_text() == before


def test_catalogue_refuses_gigabits_written_as_gigabytes(tmp_path: Path) -> None:
    text = (
        "schema: ibcalc-catalogue/1\nlinks:\n  - id: myib\n    name: x\n    kind: scale-out\n"
        "    family: infiniband\n    generation: NDR\n    scope: per-port\n"
        '    per_direction: "400 GB/s"\n    efficiency: 0.9\n    efficiency_source: test\n'
        "    sources: [t]\n    confidence: low\n"
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(IbcalcError, match="Gb/s written as GB/s"):
        load_catalogue([path], use_env=False)


def test_cross_leaf_fraction_scales_the_oversubscription_penalty() -> None:
    # cost_models.md 3.7: the network term grows by max(1, k f)
    times = {}
    for f in (1.0, 0.5, 0.25):
        result = runner.invoke(
            app,
            [
                "alltoall",
                "-s",
                "1GB",
                "-N",
                "4",
                "--oversubscription",
                "2",
                "--cross-leaf",
                str(f),
                "--format",
                "json",
            ],
        )
        assert result.exit_code == 0
        times[f] = json.loads(result.stdout)["transfer_s"]
    assert times[1.0] == pytest.approx(2 * times[0.5])
    assert times[0.25] == pytest.approx(times[0.5])  # k f = 0.5 < 1: no slowdown


def test_design_problems_of_every_kind_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    design = tmp_path / "multi.yaml"
    design.write_text(
        "name: multi\nnodes: 4\nsystem: dgx-h10\nfabric: {link: ndrr, colour: blue}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 45}\n"
    )
    lines = _error(["check", str(design)], capsys).splitlines()
    assert [line.split(":")[2] for line in lines] == ["3", "4", "4", "6"]  # sorted by line
    assert "unknown system 'dgx-h10'" in lines[0]
    assert "unknown link 'ndrr'" in lines[1]
    assert "unknown key" in lines[2]
    assert "needs a unit" in lines[3]
