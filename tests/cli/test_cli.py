"""CLI contract: exit codes, stdout vs stderr, JSON shape and nccl-tests relations.

Success paths run ``ibcalc.cli.app`` through typer's CliRunner; error paths call
``ibcalc.cli.main`` (the console entry point and single error boundary) with capsys.
Expected numbers are the sourced facts of conftest.py or relations worked in the test.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from importlib.metadata import version
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ibcalc
from conftest import (
    FACT_REL,
    GB,
    PER_DIRECTION_BPS,
    REQUIRED_LINK_IDS,
    REQUIRED_SYSTEM_IDS,
    main_error,
    position_of,
)
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import ENV_VAR, find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue, Link, LinkKind
from ibcalc.cli import app, main

runner = CliRunner()

COLLECTIVES = {
    # command -> (nccl-tests name, busbw factor F(n)); nccl-tests doc/PERFORMANCE.md
    # (docs/model.md#algbw-and-busbw)
    "allreduce": ("all_reduce", lambda n: 2 * (n - 1) / n),
    "reducescatter": ("reduce_scatter", lambda n: (n - 1) / n),
    "allgather": ("all_gather", lambda n: (n - 1) / n),
    "alltoall": ("alltoall", lambda n: (n - 1) / n),
    "broadcast": ("broadcast", lambda n: 1.0),
    "reduce": ("reduce", lambda n: 1.0),
    "sendrecv": ("sendrecv", lambda n: 1.0),
}

ESTIMATE_KEYS = {
    "collective",
    "size_bytes",
    "nodes",
    "gpus_per_node",
    "ranks",
    "intra",
    "inter",
    "nics_per_node",
    "algorithm",
    "protocol",
    "time_s",
    "algbw_GBps",
    "busbw_GBps",
    "bottleneck",
    "assumptions",
    "alternatives",
}
ALTERNATIVE_KEYS = {"algorithm", "protocol", "time_s", "busbw_GBps"}

CLUSTERS = {
    "ndr-default": ["--fabric", "ndr"],
    "p5-4-nodes": ["--system", "aws-p5", "--nodes", "4"],
    "a100-1-node": ["--system", "dgx-a100", "--nodes", "1"],
}


def _ok(*args: str, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, list(args), env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def _json(*args: str, env: dict[str, str] | None = None) -> Any:
    return json.loads(_ok(*args, "--format", "json", env=env))


# =========================================================================== version


def test_version() -> None:
    out = _ok("--version")
    assert out == f"ibcalc {ibcalc.__version__}\n"
    assert ibcalc.__version__ == version("ibcalc")


# =========================================================================== links


def test_links_json_lists_every_required_id_with_facts() -> None:
    data = _json("links")
    by_id = {entry["id"]: entry for entry in data}
    assert set(REQUIRED_LINK_IDS) <= set(by_id)
    for link_id in REQUIRED_LINK_IDS:
        entry = by_id[link_id]
        assert entry["sources"], link_id
        assert all(s.strip() for s in entry["sources"]), link_id
        assert entry["per_direction_Gbps"] == pytest.approx(8 * entry["per_direction_GBps"])
        assert entry["bidirectional_GBps"] == pytest.approx(2 * entry["per_direction_GBps"])
    for link_id, expected_Bps in PER_DIRECTION_BPS.items():
        assert by_id[link_id]["per_direction_GBps"] == pytest.approx(
            expected_Bps / GB, rel=FACT_REL
        ), link_id


@pytest.mark.parametrize(
    ("link_id", "gbytes"),
    [
        ("ndr", 50),
        ("hdr", 25),
        ("xdr", 100),
        ("nvlink3", 300),
        ("nvlink4", 450),
        ("nvlink5", 900),
        ("pcie5", 63.0),
        ("pcie4", 31.5),
    ],
)
def test_links_json_headline_facts(link_id: str, gbytes: float) -> None:
    # NVLink, PCIe and InfiniBand rates (see conftest.py for the sources and the arithmetic)
    by_id = {entry["id"]: entry for entry in _json("links")}
    assert by_id[link_id]["per_direction_GBps"] == pytest.approx(gbytes, rel=FACT_REL)


def test_links_kind_filter(builtin_catalogue: Catalogue) -> None:
    data = _json("links", "--kind", "scale-out")
    ids = {entry["id"] for entry in data}
    assert all(entry["kind"] == "scale-out" for entry in data)
    expected = {link.id for link in builtin_catalogue.links if link.kind is LinkKind.SCALE_OUT}
    assert ids == expected
    assert {"ndr", "hdr", "roce-400g", "efa-v2"} <= ids
    assert "nvlink4" not in ids
    assert "pcie5" not in ids


def test_links_table_lists_links() -> None:
    out = _ok("links")
    for link_id in ("ndr", "nvlink4", "pcie5", "roce-400g"):
        assert link_id in out


def test_links_show_ndr_has_sources_and_confidence(builtin_catalogue: Catalogue) -> None:
    out = _ok("links", "show", "ndr")
    assert "sources:" in out
    for source in find_link(builtin_catalogue, "ndr").sources:
        assert source in out
    assert "confidence" in out
    assert "high" in out  # NDR is graded high (docs/catalogue.md#confidence-grades)
    assert "50 GB/s" in out  # 400 Gb/s / 8


def test_links_show_prints_latencies_in_their_unit(builtin_catalogue: Catalogue) -> None:
    """efa-v2's transport latency read '1.84e-05 s'; it reads in us, the JSON in seconds."""
    link = find_link(builtin_catalogue, "efa-v2")
    us = link.transport_latency_s * 1e6
    assert 10 < us < 100
    lines = _ok("links", "show", "efa-v2").splitlines()
    (row,) = [x.split() for x in lines if x.split()[:1] == ["transport_latency"]]
    assert row == ["transport_latency", f"{us:.3g}", "us"]
    assert _json("links", "show", "efa-v2")["transport_latency_s"] == link.transport_latency_s


def test_links_show_prints_every_digit_of_the_catalogue_figure() -> None:
    """EDR's lanes signal at 25.78125 Gb/s (4 x 25.78125 = 103.125 Gb/s on the wire for a
    100 Gb/s port, 64b/66b: 100 x 66/64); 'g' formatting had printed 25.7812. Its achievable
    figure is 12.5 GB/s x 0.975 = 12.1875 GB/s, per direction as the line rate it derates (it
    printed a bare 'GB/s' below bidirectional_GBps)."""
    rows = {
        x.split()[0]: x.split()[1:]
        for x in _ok("links", "show", "edr").splitlines()
        if len(x.split()) >= 2
    }
    assert rows["lane_signalling_Gbps"] == [f"{100 * 66 / 64 / 4:.12g}", "Gb/s"]
    assert rows["lane_signalling_Gbps"][0] == "25.78125"
    assert rows["achievable_GBps"] == [f"{12.5 * 0.975:.12g}", "GB/s", "per", "direction"]
    assert rows["bidirectional_GBps"] == ["25", "GB/s"]


def test_links_show_publishes_every_catalogue_field() -> None:
    """mesh_gpus, which sets a switchless mesh's per-peer rate (MI300X: 7 links, one to each of
    7 peers), had been left out of links show and its JSON (a review)."""
    renamed = {
        "per_direction_Bps": "per_direction_GBps",
        "bidirectional_Bps": "bidirectional_GBps",
        "lane_signalling_Bps": "lane_signalling_Gbps",
    }
    missing = [f for f in Link.model_fields if renamed.get(f, f) not in Link.json_keys]
    assert missing == []
    assert _json("links", "show", "xgmi-mi300x")["mesh_gpus"] == 8
    rows = [x.split() for x in _ok("links", "show", "xgmi-mi300x").splitlines()]
    assert ["mesh_gpus", "8"] in rows


def test_links_show_json_by_alias() -> None:
    entry = _json("links", "show", "IB-NDR")
    assert entry["id"] == "ndr"
    assert entry["sources"]
    assert entry["confidence"] == "high"
    assert entry["per_direction_GBps"] == pytest.approx(400 / 8)


def test_links_show_honours_catalogue_override(data_dir: Path) -> None:
    # tests/data/ndr_override.yaml sets ndr's efficiency to 0.5
    override = str(data_dir / "ndr_override.yaml")
    entry = _json("links", "show", "ndr", "--catalogue", override)
    assert entry["efficiency"] == 0.5
    assert entry["achievable_GBps"] == pytest.approx(0.5 * 50)


def test_env_var_catalogue_reaches_the_cli(data_dir: Path) -> None:
    entry = _json("links", "show", "ndr", env={ENV_VAR: str(data_dir / "ndr_override.yaml")})
    assert entry["efficiency"] == 0.5


# =========================================================================== systems


def test_systems_table_lists_presets() -> None:
    out = _ok("systems")
    for system_id in REQUIRED_SYSTEM_IDS:
        assert system_id in out


@pytest.mark.parametrize("columns", [100, 110])
def test_systems_table_keeps_ids_and_rates_whole(columns: int) -> None:
    """At 110 columns ids were split ('azure-nd-h1' over '00-v5'), names users copy, and at 100
    every rate ('50.0' over 'GB/s'); the rates now carry their unit in the header. At 100 the
    grades were cut ('medi'): there the NIC rates had given way; the columns close up to one space
    instead, and keep them (review EL)."""
    result = runner.invoke(app, ["systems"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    rows = {
        line.split()[0]: line.split() for line in lines if line.startswith(" ") and line.split()
    }
    cat = load_catalogue(use_env=False)
    for system in cat.systems:
        row = rows[system.id]  # the whole id starts its row
        assert row[3] == (system.intra or "-")
        assert row[-1] == system.confidence.value  # the grade whole, last
    # dgx-h100: 450 GB/s per GPU on NVLink 4, 8 NDR NICs of 50 GB/s, 50 GB/s of network per GPU
    # (at 100 the columns close up to one space and keep the NIC rates: review EL)
    rates = ["50.0", "50.0"]
    assert rows["dgx-h100"][1:] == ["8", "8", "nvlink4", "450", "8", "x", "ndr", *rates, "high"]
    assert all(len(line) <= columns for line in lines)


@pytest.mark.parametrize("columns", [80, 120])
def test_storage_table_fits_the_page(columns: int) -> None:
    """At 80 columns the storage rows took 81 characters and the rule 82, so every line
    wrapped; the columns now close up to one space where the page is narrow. Each row still
    reads whole: id, kind, the catalogue's rates and the grade."""
    result = runner.invoke(app, ["storage"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert all(len(line) <= columns for line in lines)
    rows = {line.split()[0]: line for line in lines if line.startswith("  ") and line.split()}
    for entry in load_catalogue(use_env=False).storage:
        row = rows[entry.id].split()
        assert row[1] == entry.kind.value
        assert row[-1] == entry.confidence.value
        if entry.aggregate_read_Bps is not None:
            assert row[2:4] == [f"{entry.aggregate_read_Bps / 1e9:.1f}", "GB/s"]


@pytest.mark.parametrize(
    ("listing", "command", "typo", "alias"),
    [
        ("systems", ["allreduce", "-s", "1GB", "--system"], "dgx1-v10", "dgx1-v100"),
        ("links", ["allreduce", "-s", "1GB", "--inter"], "infiniband-nd", "infiniband-ndr"),
        ("storage", ["checkpoint", "--model", "llama3-70b", "--storage"], "ai400x", "ai400x2"),
    ],
)
def test_every_name_a_hint_offers_is_in_the_listing(
    listing: str, command: list[str], typo: str, alias: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The did-you-mean hint offers aliases too (dgx1-v100 for dgx-1v); the listing must show
    them, or a user cannot find the name they were offered."""
    err = main_error([*command, typo], capsys)
    offered = err.split("did you mean ", 1)[1].split("?")[0].split(", ")
    assert alias in offered
    shown = set(re.split(r"[\s,;:]+", _ok(listing)))
    assert set(offered) <= shown, set(offered) - shown


def test_systems_json() -> None:
    data = _json("systems")
    by_id = {entry["id"]: entry for entry in data}
    assert set(REQUIRED_SYSTEM_IDS) <= set(by_id)
    assert by_id["dgx-h100"]["intra"] == "nvlink4"
    # 32 x 100 Gb/s EFA v2 (AWS EC2 instance network bandwidth page)
    assert by_id["aws-p5"]["nics_per_node"] == 32


def test_storage_lists_the_checkpoint_targets_with_units(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    out = _ok("storage")
    # DDN AI400X2 datasheet: up to 90 GB/s read, 65 GB/s write per appliance
    row = next(line.split() for line in out.splitlines() if "ddn-ai400x2" in line)
    assert row[:6] == ["ddn-ai400x2", "parallel-fs", "90.0", "GB/s", "65.0", "GB/s"]
    # an object store states no aggregate limit: shown as '-', never as 0
    s3 = next(line.split() for line in out.splitlines() if "aws-s3" in line)
    assert s3[2:4] == ["-", "-"]
    data = _json("storage")
    by_id = {entry["id"]: entry for entry in data}
    assert by_id["ddn-ai400x2"]["aggregate_read_Bps"] == 90e9
    assert by_id["ddn-ai400x2"]["aggregate_write_Bps"] == 65e9
    assert by_id["aws-s3"]["aggregate_read_Bps"] is None


def test_storage_show_by_alias_and_unknown_name() -> None:
    out = _ok("storage", "show", "s3")
    assert "aws-s3" in out
    # AWS S3 user guide: 5,500 GET/HEAD and 3,500 PUT requests per second per prefix
    assert "5,500 requests/s" in out
    assert "3,500 requests/s" in out
    assert "sources:" in out
    result = runner.invoke(app, ["storage", "show", "ddn-ai400"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        "error: name 'ddn-ai400' is not a known storage (did you mean ddn-ai400x2? "
        "see 'ibcalc storage show --help')"
    )


def test_a_busbw_under_a_megabyte_per_second_has_its_range_in_its_unit() -> None:
    """8 B all-reduce on one DGX H100: busbw 933 kB/s, whose range had printed in GB/s without
    a unit, '(0.000599-0.00105)'."""
    from ibcalc.units import format_number

    args = ("allreduce", "-s", "8B", "--system", "dgx-h100", "-N", "1")
    data = _json(*args)
    low, high = data["busbw_GBps_range"]
    kBps = data["busbw_GBps"] * 1e6
    assert kBps < 1000
    (line,) = [x for x in _ok(*args).splitlines() if x.strip().startswith("busbw")]
    assert (
        f"{format_number(kBps)} kB/s ({format_number(low * 1e6)}-{format_number(high * 1e6)})"
        in line
    )


def test_rccl_note_does_not_contradict_a_release_given() -> None:
    """MI300X with --nccl-version 2.21.5 had said both 'priced here with NCCL 2.30.7's tuner
    constants' and 'chosen with NCCL 2.21.5's tuner constants'."""
    args = ("allreduce", "-s", "1GB", "--system", "mi300x-8", "-N", "2")
    notes = _json(*args, "--nccl-version", "2.21.5")["assumptions"]
    (rccl,) = [n for n in notes if n.startswith("AMD GPUs run RCCL")]
    assert "2.30.7's, or the release --nccl-version names" in rccl
    assert any("chosen with NCCL 2.21.5's tuner constants" in n for n in notes)
    assert not any("with NCCL 2.30.7's tuner constants" in n for n in notes)


def test_every_catalogue_entry_fits_80_columns() -> None:
    """A source's URL or repository path is no word to keep whole: it had widened
    ``systems show azure-nd-h100-v5`` to 118 columns and ``links show gcp-tcpxo`` to 104 on an
    80-column page (the entries' sources list already folded them). The URL is all there."""
    env = {"COLUMNS": "80"}
    unit = re.compile(r"^\s*(?:-\s+)?(?:GB/s|Gb/s|TB/s|MB/s|kB/s|us|ms)\b")
    for kind in ("links", "systems"):
        for entry in _json(kind):
            lines = _ok(kind, "show", entry["id"], env=env).splitlines()
            assert max(len(line) for line in lines) <= 80, (kind, entry["id"])
            # and no number parted from its unit ("not 400" over "GB/s.", "8 x 200" over "Gb/s")
            parted = [(a, b) for a, b in pairwise(lines) if a[-1:].isdigit() and unit.match(b)]
            assert parted == [], (kind, entry["id"])
    out = _ok("systems", "show", "azure-nd-h100-v5", env=env)
    url = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/"
    assert url in "".join(line.strip() for line in out.splitlines())


def test_systems_show_dgx_h100() -> None:
    out = _ok("systems", "show", "dgx-h100")
    assert "dgx-h100" in out
    assert "nvlink4" in out
    assert "ndr" in out
    assert "sources:" in out
    entry = _json("systems", "show", "dgx-h100")
    # DGX H100 SuperPOD RA-11333-001: 8 H100 SXM on NVLink 4, 8 x 400 Gb/s NICs
    assert (entry["gpus_per_node"], entry["intra"], entry["nics_per_node"], entry["inter"]) == (
        8,
        "nvlink4",
        8,
        "ndr",
    )
    assert entry["sources"]


# =========================================================================== collectives


@pytest.mark.parametrize("cluster", sorted(CLUSTERS))
@pytest.mark.parametrize("command", sorted(COLLECTIVES))
def test_collective_json_contract(command: str, cluster: str) -> None:
    name, factor = COLLECTIVES[command]
    data = _json(command, "--size", "1GB", *CLUSTERS[cluster])
    assert set(data) >= ESTIMATE_KEYS
    assert data["collective"] == name
    n = data["ranks"]
    assert n == data["nodes"] * data["gpus_per_node"]
    assert n >= 2
    # 1 GB = 10^9 B is a multiple of 16 B x n for every n used here, so no rounding
    assert data["size_bytes"] == 10**9
    assert data["time_s"] > 0
    assert math.isfinite(data["time_s"])
    # nccl-tests: algbw = S / t, busbw = algbw x F(n); GB/s = 10^9 B/s
    assert data["algbw_GBps"] == pytest.approx(data["size_bytes"] / data["time_s"] / 1e9, rel=1e-9)
    assert data["busbw_GBps"] == pytest.approx(data["algbw_GBps"] * factor(n), rel=1e-9)
    assert isinstance(data["assumptions"], list)
    assert data["assumptions"]
    assert isinstance(data["bottleneck"], str)
    assert data["bottleneck"]
    assert isinstance(data["alternatives"], list)
    for alt in data["alternatives"]:
        assert set(alt) >= ALTERNATIVE_KEYS
        alt_algbw = data["size_bytes"] / alt["time_s"] / 1e9
        assert alt["busbw_GBps"] == pytest.approx(alt_algbw * factor(n), rel=1e-9)
        assert alt["time_s"] > 0


def test_allreduce_json_on_one_a100_node_is_worked_by_hand() -> None:
    """The contract above holds the figures to one another; this holds one estimate's time to
    its value. 8 A100s on nvlink3 run ring/Simple: 2 x 7/8 x 1e9 B at 300 GB/s x 0.8 = 240 GB/s
    (data/links.yaml nvlink3) = 7291.67 us, after NCCL's ring/Simple base 8.4 us and 14 NVLink
    ring/Simple hops of 3.4 us (data/cost_params.yaml base_latency, hop_latency), each x
    1980/1410 for the A100's clock against Hopper's (clock_scaled_hops, gpu_clock_mhz):
    8.4 + 66.84 = 75.24 us; 7366.91 us in all, busbw 1e9 / t x 1.75 = 237.55 GB/s."""
    data = _json("allreduce", "--size", "1GB", *CLUSTERS["a100-1-node"])
    assert (data["algorithm"], data["protocol"]) == ("ring", "Simple")
    latency = (8.4 + 14 * 3.4 * 1980 / 1410) * 1e-6
    by_hand = latency + 2 * 7 / 8 * 1e9 / (300e9 * 0.8)
    assert by_hand * 1e6 == pytest.approx(7366.91, rel=1e-6)
    assert data["time_s"] == pytest.approx(by_hand, rel=1e-9)
    assert data["busbw_GBps"] == pytest.approx(237.548, rel=1e-5)


# A100's NVLink ring/Simple hop, 3.4 us x 1980/1410 for its clock against Hopper's
# (data/cost_params.yaml hop_latency, gpu_clock_mhz); nvlink3 300 GB/s x 0.8 and NDR
# 400 Gb/s = 50 GB/s x 0.975 (data/links.yaml)
_A100_HOP_US = 3.4 * 1980 / 1410
_NVLINK3_BPS = 300e9 * 0.8
_NDR_BPS = 50e9 * 0.975
_A100_RING_US = 8.4 + 7 * _A100_HOP_US

WORKED_BY_HAND = {
    # (command, cluster): (algorithm, latency us, bytes through the bottleneck, its rate B/s,
    # the sum in us). One DGX A100, ring/Simple: base 8.4 us + 7 NVLink steps; (n-1)/n S for
    # reduce-scatter and all-gather, S for broadcast and reduce (a pipelined chain moves the
    # buffer once).
    ("reducescatter", "a100-1-node"): ("ring", _A100_RING_US, 7 / 8 * 1e9, _NVLINK3_BPS, 3687.65),
    ("allgather", "a100-1-node"): ("ring", _A100_RING_US, 7 / 8 * 1e9, _NVLINK3_BPS, 3687.65),
    ("broadcast", "a100-1-node"): ("ring", _A100_RING_US, 1e9, _NVLINK3_BPS, 4208.49),
    ("reduce", "a100-1-node"): ("ring", _A100_RING_US, 1e9, _NVLINK3_BPS, 4208.49),
    # pairwise: base + one hop + n-1 = 7 messages x 2.4 us (calibrated.per_message_latency,
    # Hopper's) x 1980/1410 for the A100's clock (clock_scaled_messages), (m-1)/n S over NVLink
    # at 0.935 of its rate (calibrated.alltoall_efficiency: seven streams at once)
    ("alltoall", "a100-1-node"): (
        "pairwise",
        8.4 + _A100_HOP_US + 7 * 2.4 * 1980 / 1410,
        7 / 8 * 1e9,
        _NVLINK3_BPS * 0.935,
        3936.05,
    ),
    # send/recv: base + one hop, S at NVLink x 0.89 (calibrated.p2p_efficiency)
    ("sendrecv", "a100-1-node"): ("p2p", 8.4 + _A100_HOP_US, 1e9, _NVLINK3_BPS * 0.89, 4694.82),
    # 2 x DGX H100 on NDR: base + one NET hop of 14 us (hop_latency); the pair across nodes
    # sends S through its GPU's own NIC
    ("sendrecv", "ndr-default"): ("p2p", 8.4 + 14, 1e9, _NDR_BPS, 20535.22),
    # PXN: base + NET hop + n-1 = 15 messages x 2.4 us (an H100 at Hopper's clock: x 1); (n-m)/n
    # S = 500 MB a GPU over its NIC
    ("alltoall", "ndr-default"): ("pxn", 8.4 + 14 + 15 * 2.4, 0.5e9, _NDR_BPS, 10314.81),
}


@pytest.mark.parametrize(("command", "cluster"), sorted(WORKED_BY_HAND))
def test_collective_json_time_is_worked_by_hand(command: str, cluster: str) -> None:
    """The contract holds the figures to one another; this holds one case per collective
    (and two across NDR nodes) to its time, latency + bytes / rate from the constants above."""
    algorithm, latency_us, size, rate, total_us = WORKED_BY_HAND[command, cluster]
    by_hand = latency_us * 1e-6 + size / rate
    assert by_hand * 1e6 == pytest.approx(total_us, abs=0.005)
    data = _json(command, "--size", "1GB", *CLUSTERS[cluster])
    assert (data["algorithm"], data["protocol"]) == (algorithm, "Simple")
    assert data["time_s"] == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize("command", sorted(COLLECTIVES))
def test_collective_table_output(command: str) -> None:
    out = _ok(command, "--size", "1GB", "--fabric", "ndr")
    assert COLLECTIVES[command][0] in out
    assert "busbw" in out
    assert "assumptions" in out


def test_allreduce_states_its_assumptions() -> None:
    data = _json("allreduce", "--size", "10GB", "--fabric", "ndr")
    assert data["size_bytes"] == 10 * 10**9  # 10GB is decimal
    # no node shape given: a DGX H100 (8 GPUs, NVLink 4, 8 x NDR) and 2 nodes are assumed
    assert (data["nodes"], data["gpus_per_node"], data["ranks"]) == (2, 8, 16)
    assert (data["intra"], data["inter"], data["nics_per_node"]) == ("nvlink4", "ndr", 8)
    notes = " | ".join(data["assumptions"])
    assert "dgx-h100" in notes
    assert "2 nodes" in notes
    assert "--system" in notes  # how to change the node shape
    assert "--nodes" in notes  # how to change the node count


def test_allreduce_table_states_its_assumptions() -> None:
    out = _ok("allreduce", "--size", "10GB", "--fabric", "ndr")
    assert "assumptions" in out
    assert "dgx-h100" in out
    assert "--nodes" in out


def test_size_rounding_is_reported() -> None:
    # 1000 B fp32 = 250 elements; 250 // 8 ranks = 31, rounded down to a multiple of 4 -> 28;
    # 28 x 4 B x 8 = 896 B
    data = _json("allgather", "--size", "1000", "--system", "dgx-a100", "--nodes", "1")
    assert data["ranks"] == 8
    assert data["size_bytes"] == 896
    # a whole number of bytes, printed as one (as sweep's JSON prints its sizes), not 896.0
    assert type(data["size_bytes"]) is int
    # the size asked for is whole bytes too: 1000, not 1000.0
    assert data["requested_size_bytes"] == 1000
    assert type(data["requested_size_bytes"]) is int
    sweep = _json(
        "sweep", "allgather", "-b", "1000", "-e", "1000", "--system", "dgx-a100", "-N", "1"
    )
    assert sweep[0]["rows"][0]["size_bytes"] == 896
    assert type(sweep[0]["rows"][0]["size_bytes"]) is int
    assert (
        "size rounded to 896 B as nccl-tests does: into whole 16-byte shares for 8 ranks"
        in data["assumptions"]
    )
    # an all-reduce rounds to whole elements only (it said "for 8 ranks" too): 1001 B -> 1000 B
    data = _json("allreduce", "--size", "1001", "--system", "dgx-a100", "--nodes", "1")
    assert (
        "size rounded to 1000 B as nccl-tests does: to whole fp32 elements (4 B)"
        in (data["assumptions"])
    )


def test_a_refused_protocol_lists_the_protocols_that_apply() -> None:
    # it listed algorithms ("applicable: hierarchical, rhd, ring, tree") for a --proto refusal
    result = runner.invoke(
        app, ["allreduce", "-s", "1GB", "--system", "pcie-8gpu", "--proto", "ll128"]
    )
    assert result.exit_code == 2
    assert result.stderr.endswith("; applicable: LL, Simple\n")


def test_sizes_in_binary_units() -> None:
    data = _json("broadcast", "--size", "1GiB", "--fabric", "ndr")
    assert data["size_bytes"] == 2**30


def test_non_equivalent_busbw_stays_below_the_wire_rate() -> None:
    # DGX H100: every GPU has 450 GB/s of NVLink per direction (NVIDIA Hopper page); a ring's busbw
    # is a wire rate and cannot exceed it (NVLS/tree results are flagged as equivalent instead)
    data = _json("allreduce", "--size", "8GB", "--system", "dgx-h100", "--nodes", "2")
    results = [data, *data["alternatives"]]
    for result in results:
        if not result["busbw_equivalent"]:
            assert result["busbw_GBps"] <= 450 * (1 + 1e-9), result["algorithm"]


def test_an_estimate_at_one_end_of_its_range_says_why() -> None:
    """On EFA the held-out small-message errors are one-sided (10th/90th percentile -82 % / +1 %
    in data/cost_params.yaml): 113 us with a range of 112-630 us read as a central figure. The
    note gives the far end as a multiple of the estimate; a band around its estimate gets none."""
    data = _json("allreduce", "--size", "8", "--system", "aws-p5", "-N", "4")
    low, high = data["time_s_range"]
    assert high >= 2 * data["time_s"] >= 2 * low / 1.1
    (note,) = [n for n in data["assumptions"] if "fast end of its likely range" in n]
    assert f"took up to {high / data['time_s']:.1f}x its time" in note
    assert "(plugin transport, latency sizes)" in note
    central = _json("allreduce", "--size", "1GB", "--system", "dgx-h100", "-N", "2")
    assert not any("end of its likely range" in n for n in central["assumptions"])


def test_link_kinds_are_taken_in_any_case() -> None:
    upper = runner.invoke(app, ["links", "--kind", "WAN", "--format", "json"])
    lower = runner.invoke(app, ["links", "--kind", "wan", "--format", "json"])
    assert upper.exit_code == lower.exit_code == 0
    assert upper.output == lower.output
    assert {link["kind"] for link in json.loads(upper.output)} == {"wan"}


def test_two_ranks_across_two_nodes_print_a_wire_rate() -> None:
    """One GPU on each of 2 nodes: F(2) = 1 and tree, ring and recursive halving-doubling each
    send S over the NDR NIC, so busbw is the rate on the wire (it was flagged 'equivalent' for
    the tree and halving-doubling), and none exceeds the NIC's 50 GB/s per direction."""
    data = _json("allreduce", "--size", "1GB", "--inter", "ndr", "-g", "1", "-N", "2")
    results = [data, *data["alternatives"]]
    assert {r["algorithm"] for r in results} >= {"tree", "ring", "rhd"}
    for result in results:
        assert result["busbw_equivalent"] is False, result["algorithm"]
        assert result["busbw_GBps"] <= 50 * (1 + 1e-9), result["algorithm"]


def test_nvls_all_gather_and_reduce_scatter_print_a_wire_rate() -> None:
    """One DGX H100, 4 GiB by NVLS: an all-gather's busbw, 7/8 x S / t, is the rate each GPU
    receives, and a reduce-scatter's the rate it sends, so neither is an equivalent figure
    (both had been marked 'equivalent, not a wire rate', review BD); the NVLS all-reduce, which
    moves S(m+1)/m per GPU, still is. Each stays under NVLink 4's 450 GB/s per direction."""
    for command, equivalent in (
        ("allgather", False),
        ("reducescatter", False),
        ("allreduce", True),
    ):
        data = _json(command, "--size", "4GiB", "--system", "dgx-h100", "-N", "1", "--algo", "nvls")
        assert (data["algorithm"], data["busbw_equivalent"]) == ("nvls", equivalent), command
        if not equivalent:
            assert data["busbw_GBps"] <= 450, command


def test_the_bottleneck_names_the_host_launches_where_they_set_the_time() -> None:
    """--gpus-per-process 8 (nccl-tests' -g 8): one process launches 8 GPUs' kernels in turn,
    8 x calibrated.launch_per_gpu (4.2 us) = 33.6 us per operation, longer than an 8 B
    all-reduce's 27.7 us: the time printed is the launches' (35.0 us over nccl-tests'
    iterations), and the bottleneck line had said "latency: 27.7 us of 27.7 us". The JSON
    echoes gpus_per_process."""
    launch = builtin_cost_params().calibrated.launch_per_gpu_s
    data = _json(
        "allreduce", "--size", "8", "--system", "dgx-h100", "-N", "2", "--gpus-per-process", "8"
    )
    assert data["gpus_per_process"] == 8
    assert data["bottleneck"].startswith(
        f"host launches: one process drives 8 GPUs and launches each operation in "
        f"{8 * launch * 1e6:.3g} us"
    )
    assert data["time_s"] > data["one_operation_s"]
    # the host launches the first iteration too: t = (H + T + 19 H) / 20 = H + T / 20, never
    # below the launch period the bottleneck names (it printed 34.2 us beside 35.2 us)
    host = 8 * launch
    assert data["time_s"] == pytest.approx(host + data["one_operation_s"] / 20, rel=1e-9)
    assert data["time_s"] > host
    plain = _json("allreduce", "--size", "8", "--system", "dgx-h100", "-N", "2")
    assert plain["gpus_per_process"] == 1
    assert plain["bottleneck"].startswith("latency")
    # past the floor only the first launch shows: 1 GB, one operation T, t = (H + 20 T) / 20
    big = _json(
        "allreduce", "--size", "1GB", "--system", "dgx-h100", "-N", "2", "--gpus-per-process", "8"
    )
    assert big["time_s"] == pytest.approx(big["one_operation_s"] + host / 20, rel=1e-9)


#: 16 x DGX H100 all-reduce of 2 MiB with only the protocol forced, and 16 x p5 of 32 MiB with
#: only the algorithm, each on Gen4 NIC slots
_PROTO_SIMPLE = ("allreduce", "--size", "2MiB", "--system", "dgx-h100", "-N", "32")
_PROTO_SIMPLE += ("--proto", "simple", "--host-pcie", "pcie4")
_ALGO_RING = ("allreduce", "--size", "32MiB", "--system", "aws-p5", "-N", "16")
_ALGO_RING += ("--algo", "ring", "--host-pcie", "pcie4")


def test_with_one_of_algorithm_and_protocol_forced_nccl_picks_among_the_rest() -> None:
    """--proto simple: NCCL picks among Simple candidates (tree/Simple here), and the faster one
    worth naming is nvlstree/Simple; the notes had called tree/Simple 'the one NCCL's tuner would
    pick' and named tree/LL128 as ranked lower, which NCCL ranks first. --algo ring: NCCL picks
    the protocol, and ring/LL, faster than its ring/Simple here, is named (nothing was)."""
    proto = _json(*_PROTO_SIMPLE)
    notes = proto["assumptions"]
    assert (proto["algorithm"], proto["protocol"]) == ("tree", "Simple")
    assert (
        "algorithm: tree/Simple, the one NCCL 2.30.7's tuner would pick here among Simple ones "
        "(--proto forced; --algo to force another)"
    ) in notes
    assert any(n.startswith("nvlstree/Simple would be") for n in notes)
    assert not any(n.startswith("tree/LL128 would be") for n in notes)
    algo = _json(*_ALGO_RING)
    assert (
        "protocol: ring/Simple, the one NCCL 2.30.7's tuner would pick here for ring "
        "(--algo forced; --proto to force another)"
    ) in algo["assumptions"]
    assert any(n.startswith("ring/LL would be") for n in algo["assumptions"])
    # --explain says the same (it had said 'was forced' and named tree/LL128 and nvlstree/Simple)
    explained = _json(*_PROTO_SIMPLE, "--explain")["explanation"]
    why = explained["why_chosen"]
    # the tree's fill, per tier, as fields beside its words (review DT 5)
    (fill,) = [t for t in explained["terms"] if t["name"] == "pipeline fill"]
    assert [p["tier"] for p in fill["parts"]] == ["up", "net"]
    assert sum(p["seconds"] for p in fill["parts"]) == pytest.approx(fill["seconds"])
    for part in fill["parts"]:
        assert part["seconds"] == pytest.approx(
            part["count"] * part["size_bytes"] / part["rate_Bps"]
        )
    assert why.startswith(
        "NCCL's tuner ranks tree/Simple first among the Simple candidates (--proto forced)"
    )
    assert "nvlstree/Simple would take" in why
    ring = _json(*_ALGO_RING, "--explain")["explanation"]["why_chosen"]
    assert ring.startswith("NCCL's tuner ranks ring/Simple first among ring's protocols")
    assert "ring/LL would take" in ring
    # a forced what-if is not something NCCL's tuner would pick
    rhd = _json("allreduce", "--size", "1GB", "--system", "dgx-h100", "-N", "4", "--algo", "rhd")
    assert (
        "protocol: Simple, the fastest of rhd's by NCCL's tuner formulas (--algo forced, a "
        "what-if; --proto to force another)"
    ) in rhd["assumptions"]


@pytest.mark.parametrize(
    ("given", "algorithm"),
    [("CollnetDirect", "collnet"), ("collnet_chain", "collnetchain"), ("NVLS_TREE", "nvlstree")],
)
def test_algo_takes_nccls_own_names(given: str, algorithm: str) -> None:
    # NCCL_ALGO's names, as the library takes them: CollnetDirect had been refused where
    # CollnetChain was taken (its ibcalc name, collnetchain, differs only in case)
    args = ("allreduce", "--size", "1GB", "--system", "dgx-h100", "-N", "4", "--sharp")
    assert _json(*args, "--algo", given)["algorithm"] == algorithm


def test_host_launches_are_compared_with_a_chains_spacing() -> None:
    """An LL broadcast chain on 16 x DGX H100, -g 8: operations overlap, one every 16.2 us, and
    the 33.6 us of launches set the pace; the bottleneck had said 'more than one operation's
    121 us', which is not so. The figures in it are printed as times (a 4,280 us spacing had
    read '4.28e+03 us')."""
    explained = _json(
        "broadcast",
        "--size",
        "8KiB",
        "--system",
        "dgx-h100",
        "-N",
        "16",
        "--gpus-per-process",
        "8",
        "--proto",
        "ll",
        "--explain",
    )
    assert "between a chain's operations" in explained["bottleneck"]
    assert "one operation's" not in explained["bottleneck"]
    # the derivation names the chain's overlap too: the printed time, (33.6 + T + 19 x 33.6) /
    # 20 us with T the whole chain (121 us), had been explained by the launches alone, as if
    # each operation took T + 33.6 us
    measurement = explained["explanation"]["measurement"]
    assert measurement.startswith("one-way chain: back-to-back operations complete every ")
    assert "longer than that stage: the launches set the period" in measurement
    launches = 8 * 4.2e-6
    chain = explained["one_operation_s"]
    assert chain > 100e-6
    assert explained["time_s"] == pytest.approx((launches + chain + 19 * launches) / 20)
    big = _json(
        "allreduce",
        "--size",
        "1GiB",
        "--system",
        "dgx-h100",
        "-N",
        "2",
        "--gpus-per-process",
        "8",
        "--explain",
    )
    assert "e+0" not in big["explanation"]["measurement"]


def test_a_chains_period_names_the_stage_that_sets_it() -> None:
    """An LL chain's back-to-back period is base + its slowest stage + proxy operations, and
    the words say which stage and why: across a WAN of 1 ms one way (--rtt 2ms) the WAN hop is
    NCCL's NET hop + 1 ms = 1002.7 us, of which the stage holds 2 x 1002.7 / 8 = 250.675 us (8
    buffer slots in flight, each free a round trip later). The data crosses inside that round
    trip: 1 KiB at 131 MB/s (LL's half of the 4.19 GB/s WAN link, on 1 of 16 channels) is
    7.8 us, so the period of a 1 KiB broadcast is 6.6 + 250.675 + 0.6 (one proxy operation) =
    257.9 us. It had said 'one stage' alone, beside a 1 ms hop; then it had added the data to
    the stage, counting the slots twice (the WAN's rate is those slots' window): 64 KiB had a
    758 us period."""
    args = ("--system", "dgx-h100", "-N", "4", "--sites", "2", "--wan", "wan-100g")
    args += ("--rtt", "2ms", "--proto", "ll", "--explain")
    wan = _json("broadcast", "-s", "1KiB", *args)
    note = wan["explanation"]["measurement"]
    assert "(one stage: base 6.6 us + the WAN stage 251 us + proxy operations 0.600 us;" in note
    assert "the WAN stage is 2 x its hop / 8 = 2 x 1.0027 ms / 8" in note
    assert "pipeline.steps = 8 buffer slots of the connection in flight" in note
    assert "the data, 7.81 us, crosses inside that time" in note
    assert "complete every 258 us" in note
    rate = 4.19e9 / 16 * 0.5
    period = 6.6e-6 + 2 * 1002.7e-6 / 8 + 0.6e-6
    assert period == pytest.approx(257.9e-6, rel=2e-3)
    assert wan["time_s"] == pytest.approx((wan["one_operation_s"] + 19 * period) / 20, rel=2e-3)
    # 64 KiB, still one channel (an LL ring channel takes 512 x 8 B x 32 ranks = 128 KiB): the
    # data, 500 us, and the GPU's 0.6 us NVLink hop outlast the WAN stage, so the period is
    # 6.6 + 0.6 + 500 + 0.6 = 508 us, not 6.6 + 250.7 + 0.6 + 500 = 758 us
    big = _json("broadcast", "-s", "64KiB", *args)
    period = (6.6e-6 + 0.6e-6 + 65536 / rate) + 0.6e-6
    assert period == pytest.approx(508e-6, rel=2e-3)
    assert big["time_s"] == pytest.approx((big["one_operation_s"] + 19 * period) / 20, rel=2e-3)
    note = big["explanation"]["measurement"]
    assert "base 6.6 us + a hop inside a node 0.6 us and the data 500 us + proxy operations" in note
    assert (
        "holds its stage whole, with the data at the chain's slowest rate; the WAN stage, " in note
    )
    # four nodes of 8 A100: the NVLink hop at the A100's clock, 0.6 x 1980 / 1410 = 0.843 us,
    # is above the network stage's 2 x 2.7 / 8 = 0.675 us, and is named as the stage instead
    a100 = _json(
        "reduce", "-s", "8B", "--system", "dgx-a100", "-N", "4", "--proto", "ll", "--explain"
    )
    note = a100["explanation"]["measurement"]
    assert "(one stage: base 6.6 us + a hop inside a node 0.843 us and the data " in note
    assert "the hop is the GPU's own work and holds its stage whole, with the data" in note
    assert (
        "the network stage, 2 x its hop / 8 (buffer slots in flight), holds 0.675 us, less" in note
    )


def test_a_chains_period_on_one_node_names_no_proxy_operations() -> None:
    """On one node no proxy starts a network operation, so an LL chain's period is base + the
    hop inside the node + the data: 1 KiB on 8 H100 at NCCL's LL cap on one Hopper node,
    141 GB/s, on 1 of 24 channels (5.88 GB/s), is 0.174 us, so 6.6 + 0.6 + 0.174 = 7.37 us.
    The words had added "+ proxy operations 0 us", a term that is not there."""
    one = _json(
        "broadcast", "-s", "1KiB", "--system", "dgx-h100", "-N", "1", "--proto", "ll", "--explain"
    )
    note = one["explanation"]["measurement"]
    assert "proxy operations" not in note
    transfer = 1024 / (141e9 / 24)
    assert one["transfer_s"] == pytest.approx(transfer, rel=2e-3)
    assert "(one stage: base 6.6 us + a hop inside a node 0.6 us and the data 0.174 us; " in note
    period = 6.6e-6 + 0.6e-6 + transfer
    assert period == pytest.approx(7.37e-6, rel=2e-3)
    assert "complete every 7.37 us" in note
    assert one["time_s"] == pytest.approx((one["one_operation_s"] + 19 * period) / 20, rel=1e-6)


def test_a_latency_bottleneck_beside_a_launch_delayed_time_says_whose_time_it_splits() -> None:
    """A 4 KiB all-reduce on 2 x DGX H100, -g 8, runs tree/LL: latency 6.8 + 8.4 + 10 + 2 + 0.6
    = 27.8 us, transfer 4096 B at 19.5 GB/s / 16 channels = 3.36 us, fill 2 x 4096 B at the same
    rate = 6.72 us: one operation 37.9 us. The 8 x 4.2 = 33.6 us of launches delay only the
    first, so nccl-tests prints (33.6 + 20 x 37.9) / 20 = 39.6 us. The bottleneck had said
    '34.5 us of 37.9 us' beside that 39.6 us time; it names the 37.9 us one operation's, as it
    does beside a chain's period. One GPU per process keeps '34.5 us of 37.9 us'."""
    args = ("allreduce", "--size", "4KiB", "--system", "dgx-h100", "-N", "2")
    launched = _json(*args, "--gpus-per-process", "8")
    single = (6.8 + 8.4 + 10 + 2 + 0.6) * 1e-6 + 3 * 4096 / (19.5e9 / 16)
    assert launched["one_operation_s"] == pytest.approx(single)
    assert launched["time_s"] == pytest.approx((8 * 4.2e-6 + 20 * single) / 20)
    assert launched["bottleneck"].startswith(
        "latency and pipeline fill: 34.5 us of one operation's 37.9 us (steps, hops, launches)"
    )
    plain = _json(*args)
    assert plain["bottleneck"].startswith("latency and pipeline fill: 34.5 us of 37.9 us (")


def test_a_per_link_scale_up_figure_is_said_to_be_one() -> None:
    """xgmi-mi250x is one 16-wide link, 50 GB/s (scope per-link; an MI250X has several): used as
    the GPU's whole scale-up bandwidth, the estimate says so. Per-GPU figures (NVLink 4) and
    PCIe (one link per GPU) need no such note."""
    words = "is a per-link figure (50.0 GB/s per direction), used as each GPU's whole"
    data = _json("allreduce", "--size", "1GB", "--intra", "xgmi-mi250x", "-N", "1")
    assert any(words in note for note in data["assumptions"])
    for args in (["--system", "dgx-h100", "-N", "1"], ["--system", "a100-pcie-pair"]):
        plain = _json("allreduce", "--size", "1GB", *args)
        assert not any("per-link figure" in note for note in plain["assumptions"]), args


# =========================================================================== errors


@dataclass
class Outcome:
    code: int | str | None
    out: str
    err: str


def _fail_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    """Run the console entry point, which must end the process with SystemExit."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    captured = capsys.readouterr()
    return Outcome(info.value.code, captured.out, captured.err)


BAD_SIZES = ["-1", "0", "nan", "inf", "10Gb", "10XB", "1e30"]

#: A 1 GB fp64 all-reduce on DGX H100 nodes (the element-type refusals below).
_FP64_H100 = ["allreduce", "-s", "1GB", "--system", "dgx-h100", "-d", "fp64"]
# (id, argv, substrings the one-line message must contain)
ERRORS: list[tuple[str, list[str], list[str]]] = [
    ("unknown-fabric", ["allreduce", "--size", "1GB", "--fabric", "ndrr"], ["'ndrr'", "ndr"]),
    # a byte of another encoding, as argv holds it: said in plain words, not pydantic's
    (
        "non-utf8-system",
        ["allreduce", "--size", "1GB", "--system", "dgx-h100\udce9"],
        ["--system 'dgx-h100\\udce9' is not UTF-8 text (it holds an undecodable byte"],
    ),
    # an invisible zero-width space in the name is shown escaped ('ndr' had looked like ndr)
    (
        "unknown-fabric-invisible",
        ["allreduce", "--size", "1GB", "--fabric", "ndr\u200b"],
        ["--fabric 'ndr\\u200b' is not a known link (did you mean ndr"],
    ),
    # so are the line and paragraph separators, which some viewers break a line at (review BN)
    (
        "unknown-system-line-separator",
        ["allreduce", "--size", "1GB", "--system", "dgx\u2028h100\u2029"],
        ["--system 'dgx\\u2028h100\\u2029' is not a known system"],
    ),
    # traffic off its rail crosses at least as often as rail-aligned traffic
    (
        "unaligned-below-aligned",
        [
            *("alltoall", "--size", "1GB", "-N", "32", "--oversubscription", "2"),
            *("--cross-leaf", "0.5", "--cross-leaf-unaligned", "0.1"),
        ],
        ["--cross-leaf-unaligned '0.1' is below --cross-leaf '0.5'"],
    ),
    # given alone, the default it is below is said (every byte crosses)
    (
        "unaligned-alone",
        [
            *("alltoall", "--size", "1GB", "-N", "32", "--oversubscription", "2"),
            "--cross-leaf-unaligned",
            "0.3",
        ],
        ["below --cross-leaf 1 (its default: every byte; give it too)"],
    ),
    # nothing close: the message says where the names are listed (it had said only "unknown")
    (
        "unknown-fabric-far",
        ["allreduce", "--size", "1GB", "--fabric", "zzz"],
        ["--fabric 'zzz' is not a known link (ibcalc links lists the known ones; see 'ibcalc"],
    ),
    (
        "unknown-system-far",
        ["allreduce", "--size", "1GB", "--system", "zzz"],
        ["--system 'zzz' is not a known system (ibcalc systems lists the known ones; see"],
    ),
    (
        "unknown-model-far",
        ["train", "--model", "gpt4"],
        ["--model 'gpt4' is not a known model (known: llama3-8b, llama3-70b, llama3-405b,"],
    ),
    # fp64 across 4 nodes: NVLS would reduce in IB SHARP, which takes 16/32-bit types
    (
        "nvls-fp64-across-nodes",
        [*_FP64_H100, "-N", "4", "--sharp", "--algo", "nvls"],
        ["switch reductions do not take fp64: NVLS across nodes reduces in IB SHARP", "nvlstree"],
    ),
    # on one node CollNet fails for want of nodes before the type matters (it had blamed fp64)
    (
        "collnet-fp64-one-node",
        [*_FP64_H100, "-N", "1", "--algo", "collnet"],
        ["CollNet needs several nodes"],
    ),
    *[
        (f"size={size}", ["allreduce", f"--size={size}", "--fabric", "ndr"], [repr(size)])
        for size in BAD_SIZES
    ],
    *[
        (f"size {size}", ["allreduce", "--size", size, "--fabric", "ndr"], [repr(size)])
        for size in ("-1", "10Gb")
    ],
    (
        "nvls-on-a100",
        ["allreduce", "--size", "1GB", "--algo", "nvls", "--system", "dgx-a100"],
        ["nvls"],
    ),
    # the shared suggestion's cutoff (difflib 0.5) finds host in 'fast', as it would for a link
    ("unknown-kind", ["links", "--kind", "fast"], ["'fast'", "did you mean host?"]),
    ("unknown-link", ["links", "show", "ndrr"], ["'ndrr'", "ndr"]),
    ("unknown-system", ["systems", "show", "dgx-h10"], ["dgx-h100"]),
    ("unknown-dtype", ["allreduce", "--size", "1GB", "--dtype", "fp33"], ["'fp33'"]),
    ("unknown-option", ["allreduce", "--size", "1GB", "--bogus"], ["--bogus"]),
    ("missing-size", ["allreduce", "--fabric", "ndr"], ["--size"]),
    ("bad-int", ["allreduce", "--size", "1GB", "--nodes", "two"], ["--nodes"]),
    ("unknown-command", ["allreduse", "--size", "1GB"], ["allreduse"]),
    # the words of a QA pass: each says what is wrong with what was given
    (
        "sweep-below-one-element",
        ["sweep", "allreduce", "-b", "1", "-e", "1", "--fabric", "ndr"],
        ["size 1 B is smaller than one fp32 element (4 B)"],
    ),
    ("digit-separator", ["allreduce", "--size", "1_000", "--fabric", "ndr"], ["--size '1_000'"]),
    (
        "cross-leaf-nan",
        ["allreduce", "--size", "1GB", "--fabric", "ndr", "--cross-leaf", "nan"],
        ["--cross-leaf 'nan' is not a finite number"],
    ),
    ("empty-system", ["allreduce", "--size", "1GB", "--system", ""], ["give a preset name"]),
    ("empty-link", ["allreduce", "--size", "1GB", "--inter", " "], ["give a link name"]),
    (
        "unknown-collective",
        ["sweep", "foo"],
        ["'foo'", "known: allreduce, reducescatter, allgather, broadcast, reduce, alltoall"],
    ),
]


def _assert_one_line_error(outcome: Outcome, needles: list[str]) -> None:
    assert outcome.code == 2
    assert outcome.out == ""
    assert "Traceback" not in outcome.err
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(
    ("argv", "needles"),
    [pytest.param(argv, needles, id=name) for name, argv, needles in ERRORS],
)
def test_error_exits_2_with_one_line_on_stderr(
    argv: list[str], needles: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _assert_one_line_error(_fail_main(argv, capsys), needles)


ROOT = Path(__file__).resolve().parents[2]
#: Files of another kind than the one expected: (path under the repository, how it is named)
OTHER_KINDS = [
    ("examples/ibcalc-design.schema.json", "a JSON Schema (what ibcalc schema writes)"),
    ("data/switches.yaml", "a switch list (the layout of data/switches.yaml)"),
    ("data/pairings.yaml", "a pairings table for ibcalc gap (the layout of data/pairings.yaml)"),
    ("data/nccl_releases.yaml", "a table of NCCL releases (the layout of data/nccl_releases.yaml)"),
]
EXPECTING = [
    (["check"], "a cluster-design file"),
    (["links", "--catalogue"], "a catalogue file"),
    (["allreduce", "-s", "1GB", "--cost-params"], "a cost-parameter file"),
]


@pytest.mark.parametrize(("name", "kind"), OTHER_KINDS, ids=[n for n, _ in OTHER_KINDS])
@pytest.mark.parametrize(("args", "expected"), EXPECTING, ids=["design", "catalogue", "params"])
def test_a_file_of_another_kind_is_one_line_naming_both_kinds(
    name: str, kind: str, args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(ROOT / name)
    outcome = _fail_main([*args, path], capsys)
    _assert_one_line_error(outcome, [f"{path}:1:1: {kind}, not {expected}"])


def test_an_nccl_check_report_given_as_a_design_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = ROOT / "benchmarks" / "data" / "sweeps" / "13_allreduce_1node_4xH100_intranode.txt"
    report = tmp_path / "report.json"
    main(["nccl-check", str(log), "--format", "json"])
    report.write_text(capsys.readouterr().out)
    outcome = _fail_main(["check", str(report)], capsys)
    _assert_one_line_error(
        outcome, ["an nccl-check report (ibcalc nccl-check --format json), not a cluster-design"]
    )


def test_a_check_report_given_as_a_design_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check's own JSON report (no schema line) fed back to check had given seven lines of
    missing and unknown keys; it is told by its summary's keys, in one line."""
    report = tmp_path / "report.json"
    main(["check", str(ROOT / "examples" / "aws-p5-efa.yaml"), "--format", "json"])
    report.write_text(capsys.readouterr().out)
    outcome = _fail_main(["check", str(report)], capsys)
    _assert_one_line_error(
        outcome,
        [f"{report}:1:1: a check report (ibcalc check --format json), not a cluster-design"],
    )


def test_a_design_show_report_given_as_a_design_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """design show's JSON (no schema line) saved beside the designs it shows and fed to check
    (``ibcalc check designs/*``) had given 17 lines of missing and unknown keys: it has a
    design's ``nodes`` and ``fabric``, which had kept it from being told by its own keys. It is
    told by the two only it writes, in one line; given as a catalogue, it is named too."""
    report = tmp_path / "shown.json"
    main(["design", "show", str(ROOT / "examples" / "roce-400g-2to1.yaml"), "--format", "json"])
    report.write_text(capsys.readouterr().out)
    what = "a design show report (ibcalc design show --format json)"
    outcome = _fail_main(["check", str(report)], capsys)
    _assert_one_line_error(outcome, [f"{report}:1:1: {what}, not a cluster-design file"])
    outcome = _fail_main(["links", "--catalogue", str(report)], capsys)
    _assert_one_line_error(outcome, [f"{report}:1:1: {what}, not a catalogue file"])


@pytest.mark.parametrize(
    ("argv", "needles"),
    [pytest.param(argv, needles, id=name) for name, argv, needles in ERRORS],
)
def test_error_exits_2_inside_the_app(argv: list[str], needles: list[str]) -> None:
    # without main()'s boundary, usage errors keep the toolkit's own multi-line format
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_success_through_main_returns_normally(capsys: pytest.CaptureFixture[str]) -> None:
    # the console script does sys.exit(main()): returning None means exit status 0
    main(["links", "show", "ndr", "--format", "json"])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["id"] == "ndr"
    assert captured.err == ""


def test_unknown_fabric_suggests_ndr(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = _fail_main(["allreduce", "--size", "1GB", "--fabric", "ndrr"], capsys)
    assert "did you mean" in outcome.err
    assert "ndr," in outcome.err or "ndr?" in outcome.err


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # a name of the other catalogue says what it is, not names close to it (a review: links
        # show dgx-h100 had suggested ib-hdr100, systems show ndr ndv5 and ndv4)
        (
            ["links", "show", "dgx-h100"],
            "error: name 'dgx-h100' is not a known link: dgx-h100 is a system preset, not a link "
            "(see 'ibcalc links show --help')",
        ),
        (
            ["systems", "show", "ndr"],
            "error: name 'ndr' is not a known system: ndr is a scale-out link, not a system "
            "preset (see 'ibcalc systems show --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--inter", "hgx-h100"],
            "error: --inter 'hgx-h100' is not a known link: dgx-h100 is a system preset, not a "
            "link (give --system dgx-h100; see 'ibcalc allreduce --help')",
        ),
        # the storage catalogue too, both ways (storage show ndr had listed the storage)
        (
            ["storage", "show", "ndr"],
            "error: name 'ndr' is not a known storage: ndr is a scale-out link, not a storage "
            "entry (storage: nvmeof-target, ddn-ai400x2, aws-s3; see 'ibcalc storage show --help')",
        ),
        (
            ["checkpoint", "--storage", "dgx-h100", "--model", "llama3-8b"],
            "error: --storage 'dgx-h100' is not a known storage: dgx-h100 is a system preset, "
            "not a storage entry (storage: nvmeof-target, ddn-ai400x2, aws-s3; "
            "give --system dgx-h100; see 'ibcalc checkpoint --help')",
        ),
        (
            ["links", "show", "aws-s3"],
            "error: name 'aws-s3' is not a known link: aws-s3 is a storage entry, not a link (see "
            "'ibcalc links show --help')",
        ),
        (
            ["systems", "show", "ddn-ai400x2"],
            "error: name 'ddn-ai400x2' is not a known system: ddn-ai400x2 is a storage entry, not "
            "a system preset (see 'ibcalc systems show --help')",
        ),
        # a comma list where one name belongs says so, not "did you mean ndr, hdr?", the very
        # list given; only --fabric, which a sweep takes as a list, points there
        (
            ["allreduce", "--size", "1GB", "--fabric", "ndr,hdr"],
            "error: --fabric 'ndr,hdr' is not a known link: a list of 2 names, where one link is "
            "taken (ibcalc sweep takes a comma list of fabrics; see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--intra", "nvlink4, NVLink3"],
            "error: --intra 'nvlink4, NVLink3' is not a known link: a list of 2 names, where one "
            "link is taken (see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--system", "dgx-h100,dgx-a100"],
            "error: --system 'dgx-h100,dgx-a100' is not a known system: a list of 2 names, where "
            "one system is taken (see 'ibcalc allreduce --help')",
        ),
        # a name that begins one comes first (difflib had put hgx-b200 before gb200-nvl72)
        (
            ["allreduce", "--size", "1GB", "--system", "gb200"],
            "error: --system 'gb200' is not a known system (did you mean gb200-nvl72, hgx-b200, "
            "hgx-h200? see 'ibcalc allreduce --help')",
        ),
        # one letter is close to nothing ('--inter a' had listed three links holding an 'a'); two
        # may be held in a name
        (
            ["allreduce", "--size", "1GB", "--inter", "a"],
            "error: --inter 'a' is not a known link (ibcalc links lists the known ones; see "
            "'ibcalc allreduce --help')",
        ),
        (
            ["links", "show", "r"],
            "error: name 'r' is not a known link (ibcalc links lists the known ones; see 'ibcalc "
            "links show --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--system", "a3"],
            "error: --system 'a3' is not a known system (did you mean a3-mega, a3-high? see "
            "'ibcalc allreduce --help')",
        ),
        # a GPU named where a link belongs: the presets with it, not links of another kind
        # ('--fabric h100' had offered nvlink-h100, a scale-up link --fabric refuses) or vendor
        # ('--fabric gb300' had offered xgmi-mi300x, AMD's)
        (
            ["allreduce", "--size", "1GB", "--fabric", "h100"],
            "error: --fabric 'h100' is not a known link: h100 names a GPU or system, not a link "
            "(system presets with it: dgx-h100, azure-nd-h100-v5, h100-pcie-nvl-pair and 7 more "
            "presets; see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--inter", "gh200"],
            "error: --inter 'gh200' is not a known link: gh200 names a GPU or system, not a link "
            "(a system preset with it: alps-gh200; see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--fabric", "gb300"],
            "error: --fabric 'gb300' is not a known link: no link is close to gb300; close system "
            "presets: hgx-b300 (see 'ibcalc allreduce --help')",
        ),
        # a dash-separated part names the GPU; presets that only look alike are not offered
        # ('b300-8' had been offered mi300x-8, h800-8, a800-8: review BW); an argument is
        # named as the command's help names it (links show's name)
        (
            ["links", "show", "b300-8"],
            "error: name 'b300-8' is not a known link: b300-8 names a GPU or system, not a link "
            "(a system preset with it: dgx-b300; see 'ibcalc links show --help')",
        ),
        # a slip of a link's name keeps the link, though a part of it names a GPU (review BX:
        # 'nvlnk-h100' had been told it named the H100)
        (
            ["allreduce", "--size", "1GB", "--intra", "nvlnk-h100"],
            "error: --intra 'nvlnk-h100' is not a known link (did you mean nvlink-h100, "
            "nvlink-v100, nvlink-p100? see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--host-pcie", "pie-gen4"],
            "error: --host-pcie 'pie-gen4' is not a known link (did you mean pcie-gen4, "
            "pcie-gen7, pcie-gen6? see 'ibcalc allreduce --help')",
        ),
        # presets by likeness share the model number's letter and three digits (review BX:
        # 'gb300-8' had been offered mi300x-8, 'dgx-b3000' nothing of NVIDIA's)
        (
            ["allreduce", "--size", "1GB", "--fabric", "gb300-8"],
            "error: --fabric 'gb300-8' is not a known link: no link is close to gb300-8; close "
            "system presets: hgx-b300 (see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--fabric", "rtx4090"],
            "error: --fabric 'rtx4090' is not a known link: no link is close to rtx4090; close "
            "system presets: rtx5090-8 (see 'ibcalc allreduce --help')",
        ),
        # a short model number keeps its presets (review BZ: 'p5a' and 'l40spcie' had lost
        # them to the three-digit rule)
        (
            ["allreduce", "--size", "1GB", "--fabric", "p5a"],
            "error: --fabric 'p5a' is not a known link: no link is close to p5a; close system "
            "presets: p5, p5e, p5en (see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--fabric", "l40spcie"],
            "error: --fabric 'l40spcie' is not a known link: no link is close to l40spcie; close "
            "system presets: l40s-pcie (see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--fabric", "cornelis400"],
            "error: --fabric 'cornelis400' is not a known link (did you mean roce400? see 'ibcalc "
            "allreduce --help')",
        ),
        # a word of a link of another kind is that link ('--fabric mi250x' had been told no link
        # was close), and a link of another kind that begins with the name comes first
        # ('--fabric wan-100' had offered efa-100g, ainic-400g, roce-100g; '--fabric tpu7x' tcpx,
        # tcpxo: review BW)
        (
            ["allreduce", "--size", "1GB", "--fabric", "mi250x"],
            "error: --fabric 'mi250x' is not a known link (did you mean xgmi-mi250x, xgmi-mi350x, "
            "xgmi-mi325x? see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--fabric", "wan-100"],
            "error: --fabric 'wan-100' is not a known link (did you mean wan-100g, efa-100g, "
            "ainic-400g? see 'ibcalc allreduce --help')",
        ),
        (
            ["allreduce", "--size", "1GB", "--fabric", "tpu7x"],
            "error: --fabric 'tpu7x' is not a known link (did you mean tpu7x-ici, tcpx, tcpxo? "
            "see 'ibcalc allreduce --help')",
        ),
        (
            [
                "checkpoint",
                "--model",
                "llama3-70b",
                "--storage",
                "ddn-ai400x2",
                "--storage-link",
                "h100",
            ],
            "error: --storage-link 'h100' is not a known link: h100 names a GPU or system, not a "
            "link (system presets with it: dgx-h100, azure-nd-h100-v5, h100-pcie-nvl-pair and 7 "
            "more presets; see 'ibcalc checkpoint --help')",
        ),
        # where the role takes it, the link of that GPU is the right suggestion
        (
            ["allreduce", "--size", "1GB", "--intra", "a100"],
            "error: --intra 'a100' is not a known link (did you mean nvlink-a100? see 'ibcalc "
            "allreduce --help')",
        ),
        (
            ["links", "show", "h100"],
            "error: name 'h100' is not a known link (did you mean nvlink-h100, h100-nvl-bridge, "
            "nvlink-h100-4gpu? see 'ibcalc links show --help')",
        ),
        # a slip of another kind's name is still named (then refused for its kind)
        (
            ["gap", "--intra", "ndr4", "--inter", "ndr"],
            "error: --intra 'ndr4' is not a known link (did you mean ndr400, ndr200, xdr? see "
            "'ibcalc gap --help')",
        ),
        # a link named past a prefix: the link first, once ('ib-ndr400' had offered ib-ndr200
        # first)
        (
            ["allreduce", "--size", "1GB", "--fabric", "ib-ndr400"],
            "error: --fabric 'ib-ndr400' is not a known link (did you mean ndr, ib-ndr200, "
            "ib-hdr100? see 'ibcalc allreduce --help')",
        ),
    ],
)
def test_an_unknown_name_says_what_it_is_or_what_is_close(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    outcome = _fail_main(args, capsys)
    assert outcome.err.strip() == line


def test_bits_size_hint_names_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = _fail_main(["allreduce", "--size", "10Gb", "--fabric", "ndr"], capsys)
    assert "10GB" in outcome.err


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["allreduce", "--size", "10XB"], "error: --size '10XB' has an unknown unit 'XB'"),
        (["sweep", "allreduce", "-b", "-8"], "error: --minbytes '-8' is negative"),
        (["sweep", "allreduce", "-e", "nan"], "error: --maxbytes 'nan' is not a number (NaN; see"),
        (["gap", "--tp-size", "1mB"], "error: --tp-size '1mB' has the prefix 'm' (milli)"),
        (
            ["allreduce", "--size", "1GB", "--sites", "2", "--distance", "5"],
            "error: --distance '5' is",
        ),
    ],
)
def test_a_bad_quantity_names_its_flag(
    args: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # with three sizes on one command line (sweep -b/-e, gap's --tp-size beside a cluster's),
    # "size '-8' is negative" would leave the user to guess which one
    outcome = _fail_main([*args, "--fabric", "ndr"], capsys)
    assert outcome.err.startswith(line)
    assert outcome.err.count("\n") == 1


def test_nvls_on_a100_explains_why(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = _fail_main(
        ["allreduce", "--size", "1GB", "--algo", "nvls", "--system", "dgx-a100"], capsys
    )
    # DGX A100 has second-generation NVSwitch without NVLink SHARP (A100 whitepaper;
    # docs/catalogue.md#nvls-efficiency)
    assert "NVSwitch" in outcome.err or "NVLink SHARP" in outcome.err


def _broken_catalogue(tmp_path: Path) -> tuple[Path, int, int]:
    text = (
        "schema: ibcalc-catalogue/1\n"
        "links:\n"
        "  - id: testport\n"
        "    name: test\n"
        "    kind: scale-out\n"
        "    family: infiniband\n"
        "    generation: test\n"
        "    scope: per-port\n"
        '    per_direction: "400 Gb/s"\n'
        "    efficiency: 0.9\n"
        "    efficiency_source: test value\n"
        "    sources: [test fixture]\n"
        "    confidence: low\n"
        "    colour: blue\n"
    )
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    line, col = position_of(text, "colour:")
    return path, line, col


@pytest.mark.parametrize(
    "argv",
    [
        ["allreduce", "--size", "1GB", "--fabric", "ndr"],
        ["links"],
        ["links", "show", "ndr"],
        ["systems"],
    ],
)
def test_broken_catalogue_exits_2_with_file_line_col(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    path, line, col = _broken_catalogue(tmp_path)
    outcome = _fail_main([*argv, "--catalogue", str(path)], capsys)
    _assert_one_line_error(outcome, ["unknown key"])
    assert outcome.err.startswith(f"error: {path}:{line}:{col}:")


def test_broken_env_catalogue_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, line, col = _broken_catalogue(tmp_path)
    monkeypatch.setenv(ENV_VAR, str(path))
    outcome = _fail_main(["links"], capsys)
    _assert_one_line_error(outcome, [])
    assert outcome.err.startswith(f"error: {path}:{line}:{col}:")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-g", "0"], "--gpus-per-node '0'"),
        (["--sites", "0"], "--sites '0'"),
        (["--intra", ""], "--intra is empty"),
        (["-g", "1000"], "--nics-per-node"),
    ],
)
def test_bad_cluster_flags_are_refused(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert words in main_error(["allreduce", "-s", "1GB", *args], capsys)


def test_check_will_not_write_over_a_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml"
    target = tmp_path / "a.yaml"
    target.write_text(example.read_text())
    before = target.read_text()
    assert "looks like a design file" in main_error(
        ["check", "-o", str(target), str(example)], capsys
    )
    assert target.read_text() == before
    # schema reads no design, but -o cluster.yaml replaced one with JSON all the same
    assert main_error(["schema", "-o", str(target)], capsys) == (
        f"error: --output {target} looks like a design file; the schema is JSON "
        "(e.g. -o design.schema.json)\n"
    )
    assert target.read_text() == before


def test_cross_leaf_fraction_scales_the_oversubscription_penalty() -> None:
    # docs/model.md#oversubscription-and-cross-leaf-traffic: the network term grows by max(1, k f)
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


def test_json_cross_leaf_fractions_are_null_without_a_network() -> None:
    # one node has no scale-out tier, so no byte crosses a leaf: each share had read 1.0 (every
    # byte crossing a taper), the worst case, beside design show's null for the same cluster
    one = _json("allreduce", "-s", "1GB", "--system", "dgx-h100", "-N", "1")
    two = _json("allreduce", "-s", "1GB", "--system", "dgx-h100", "-N", "2")
    shares = ("cross_leaf_fraction", "neighbour_cross_leaf_fraction")
    assert [one[k] for k in (*shares, "unaligned_cross_leaf_fraction")] == [None, None, None]
    assert [two[k] for k in (*shares, "unaligned_cross_leaf_fraction")] == [1.0, 1.0, 1.0]
    assert one["oversubscription"] == 1.0


def test_json_carries_both_cross_leaf_fractions() -> None:
    # the neighbour share defaults to --cross-leaf (the command line knows no leaf size) and is
    # reported beside it. At 2:1 a ring pays max(1, 2 x fn): with fn 0.25 (or 0.5) that is 1,
    # so its transfer is the untapered one; with the default fn 1.0 its network runs 2x slower
    # and the ring (NVLink-bound untapered) becomes network-bound
    base = ["allreduce", "-s", "1GB", "-N", "32", "--algo", "ring", "--proto", "Simple"]
    flat = _json(*base)
    same = _json(*base, "--oversubscription", "2", "--cross-leaf", "0.5")
    split = _json(
        *base, "--oversubscription", "2", "--cross-leaf", "1", "--cross-leaf-neighbour", "0.25"
    )
    worst = _json(*base, "--oversubscription", "2", "--cross-leaf", "1")
    assert (flat["cross_leaf_fraction"], flat["neighbour_cross_leaf_fraction"]) == (1.0, 1.0)
    assert (same["cross_leaf_fraction"], same["neighbour_cross_leaf_fraction"]) == (0.5, 0.5)
    assert (split["cross_leaf_fraction"], split["neighbour_cross_leaf_fraction"]) == (1.0, 0.25)
    assert split["transfer_s"] == pytest.approx(flat["transfer_s"])
    assert same["transfer_s"] == pytest.approx(flat["transfer_s"])
    assert "tapered uplinks x2 slower" in worst["bottleneck"]
    assert "tapered uplinks" not in split["bottleneck"]
    assert worst["transfer_s"] > 1.5 * flat["transfer_s"]


def test_host_cpu_option_sets_nccls_network_overhead() -> None:
    # 2 x 8 A100 over HDR, all-gather of 1 KiB, ring/LL: 14 intra-node steps each cost NCCL's
    # per-step network overhead, 1 us on Intel hosts and 2 us on AMD ones (more than the 0.84 us
    # clock-scaled NVLink hop), so the AMD host takes 14 us longer
    base = ["allgather", "-s", "1KiB", "--intra", "nvlink3", "--inter", "hdr", "-N", "2", "-g", "8"]
    intel = _json(*base, "--host-cpu", "intel")
    amd = _json(*base, "--host-cpu", "amd")
    assert (intel["algorithm"], amd["algorithm"]) == ("ring", "ring")
    assert amd["time_s"] - intel["time_s"] == pytest.approx(14e-6, rel=1e-6)
    # not given: NCCL's default, as on Intel
    assert _json(*base)["time_s"] == pytest.approx(intel["time_s"])


def test_a_misspelt_required_key_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'node: 31' for 'nodes: 31' gave two lines, 'nodes: Field required' and 'node: unknown key
    # (did you mean nodes?)'; the second says it all
    text = (ROOT / "examples" / "dgx-h100-superpod-su-ndr.yaml").read_text(encoding="utf-8")
    assert "\nnodes: 31\n" in text
    path = tmp_path / "renamed.yaml"
    path.write_text(text.replace("\nnodes: 31\n", "\nnode: 31\n"), encoding="utf-8")
    err = main_error(["check", str(path)], capsys)
    assert err.count("\n") == 1
    assert err.endswith(": node: unknown key (did you mean nodes?)\n")
    # a key missing with no misspelling nearby is still reported as missing
    path.write_text(text.replace("\nnodes: 31\n", "\n"), encoding="utf-8")
    assert "nodes: missing: this key is required" in main_error(["check", str(path)], capsys)


def test_refusals_name_the_option_that_would_allow_them() -> None:
    """CollNet on a SHARP-capable fabric without --sharp said 'needs ... a SHARP-capable
    fabric' (ndr is one); the option is named now. A sendrecv of 1 B of fp32 said it was too
    small 'over 512 ranks': it is smaller than one element, whatever the ranks."""
    result = runner.invoke(app, ["allreduce", "-s", "1G", "--algo", "collnet"])
    assert result.exit_code == 2
    assert "CollNet needs IB SHARP, turned on with --sharp on a fabric that has it" in result.stderr
    result = runner.invoke(app, ["sendrecv", "--system", "aws-p5", "-N", "64", "-s", "1"])
    assert result.exit_code == 2
    assert result.stderr == "error: size 1 B is smaller than one fp32 element (4 B)\n"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        # SHARP on, ndr has it, 8 GPUs per node: the collective is the reason, not those
        (["allgather", "--sharp", "--algo", "collnet"], "CollNet runs all-reduce only"),
        (["broadcast", "--sharp", "--algo", "nvls"], "NVLS runs all-reduce, all-gather and "),
        (["allgather", "--sharp", "--algo", "nvls"], "NVLS across nodes runs all-reduce only"),
        (["alltoall", "--proto", "LL128"], "alltoall runs LL, Simple here"),
        # 4 GPUs per node over PCIe: under the 8-GPU limit, but CollNet direct needs NVLink
        (
            ["allreduce", "--sharp", "--algo", "collnet", "-g", "4", "--intra", "pcie5"],
            "CollNet direct needs NVLink inside the node; collnetchain runs over PCIe",
        ),
    ],
)
def test_a_refusal_gives_the_condition_that_fails(args: list[str], reason: str) -> None:
    """'CollNet needs several nodes, SHARP ... (--sharp) and at most 8 GPUs per node' was said
    of an all-gather on 4 DGX H100 with --sharp, where all three held."""
    result = runner.invoke(
        app, [args[0], "-s", "64MB", "--system", "dgx-h100", "-N", "4", *args[1:]]
    )
    assert result.exit_code == 2
    assert f"({reason}" in result.stderr


def test_collective_commands_take_the_host_pcie_link_their_notes_name() -> None:
    """One GPU per node with 4 NDR NICs: the note says to give --host-pcie, which the
    collective commands lacked; with it the GPU's Gen5 link caps the four NICs."""
    args = ["allreduce", "-s", "1GB", "-N", "8", "-g", "1", "--nics-per-node", "4"]
    free = json.loads(runner.invoke(app, [*args, "--format", "json"]).stdout)
    assert any("--host-pcie" in a for a in free["assumptions"])
    result = runner.invoke(app, [*args, "--host-pcie", "pcie5", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    capped = json.loads(result.stdout)
    pcie5 = find_link(load_catalogue(use_env=False), "pcie5").achievable_Bps
    # the ring's busbw cannot pass what one Gen5 link feeds (it was 4 x 47 GB/s before)
    assert capped["busbw_GBps"] <= pcie5 / 1e9 * 1.001
    assert free["busbw_GBps"] > 2 * capped["busbw_GBps"]


@pytest.mark.parametrize(
    ("group", "name"), [("links", "ndr"), ("systems", "dgx-h100"), ("storage", "aws-s3")]
)
def test_show_takes_the_group_s_format(group: str, name: str) -> None:
    """`links --format json show ndr` printed a table (the group's --catalogue was passed on,
    its --format was not); show's own --format still wins."""
    result = runner.invoke(app, [group, "--format", "json", "show", name])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["id"] == name
    own = runner.invoke(app, [group, "--format", "json", "show", name, "--format", "table"])
    assert own.stdout.startswith(f"{name}: ")
    plain = runner.invoke(app, [group, "show", name])
    assert plain.stdout.startswith(f"{name}: ")


def test_check_names_the_overrides_it_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check --catalogue with ndr at half its efficiency moved a prediction from 5.43 to
    10.1 ms and the report never said a catalogue had been edited."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv("IBCALC_COST_PARAMS", raising=False)
    example = str(ROOT / "examples" / "aws-p5-efa.yaml")
    cat = tmp_path / "cat.yaml"
    cat.write_text("schema: ibcalc-catalogue/1\nlinks: []\n")
    params = tmp_path / "params.yaml"
    params.write_text("schema: ibcalc-cost-params/1\n")
    extra = ["--catalogue", str(cat), "--cost-params", str(params)]
    names = f"catalogue {cat}, cost parameters {params}"
    plain = runner.invoke(app, ["check", example])
    assert "overrides" not in plain.stdout
    text = runner.invoke(app, ["check", example, *extra])
    assert text.stdout.splitlines()[-1].endswith(f"; overrides applied: {names}")
    data = json.loads(runner.invoke(app, ["check", example, *extra, "--format", "json"]).stdout)
    assert data["overrides"] == [f"catalogue {cat}", f"cost parameters {params}"]
    assert (
        json.loads(runner.invoke(app, ["check", example, "--format", "json"]).stdout)["overrides"]
        == []
    )
    github = runner.invoke(app, ["check", example, *extra, "--format", "github"])
    assert github.stdout.splitlines()[-1].endswith(f"; overrides applied: {names}")
    junit = runner.invoke(app, ["check", example, *extra, "--format", "junit"]).stdout
    assert f'<property name="override" value="catalogue {cat}" />' in junit


def test_check_counts_a_file_given_twice_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check a.yaml a.yaml` reported '2 requirements in 2 files' for one design of one target."""
    (tmp_path / "a.yaml").write_text((ROOT / "examples" / "aws-p5-efa.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "a.yaml", "./a.yaml", str(tmp_path / "a.yaml")])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "5 requirements in 1 file: 5 passed, 0 failed"
    assert result.stderr.splitlines() == [
        "note: a.yaml is given again; read once",
        f"note: {tmp_path / 'a.yaml'} is the file a.yaml again; read once",
    ]
    # one note for each way a file is written, however often (300 copies had printed 299)
    result = runner.invoke(app, ["check", *["a.yaml"] * 300, *[str(tmp_path / "a.yaml")] * 2])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "note: a.yaml is given 300 times; read once",
        f"note: {tmp_path / 'a.yaml'} is the file a.yaml again (2 times); read once",
    ]


def _explain_gh200_ring_ll(size: str) -> str:
    """``allreduce --explain`` of ``size`` in ring/LL on 2 x 4 GH200 (Slingshot), one line."""
    args = ["allreduce", "-s", size, "--system", "alps-gh200", "-N", "2"]
    result = CliRunner().invoke(
        app, [*args, "--algo", "ring", "--proto", "ll", "--explain"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0
    return " ".join(result.output.split())


def test_explain_says_when_lls_network_rate_sets_the_transfer() -> None:
    """A 64 KiB ring/LL all-reduce on 2 x 4 GH200 over Slingshot (a plugin transport): the
    transfer term read '112 KiB per rank at 9.75 GB/s' beside 57 us, which is 11.8 us of
    arithmetic; the 57 us is LL's network rate, 64 KiB / ll_net_bandwidth, and the text says so."""
    ll_net = builtin_cost_params().calibrated.ll_net_Bps
    assert ll_net is not None
    held_us = 65536 / ll_net * 1e6  # 54.6 us at 1.2 GB/s
    assert (
        f"held to {held_us:.3g} us, longer: LL across a plugin transport moves min(S, 64 KiB) = "
        f"64 KiB at {ll_net / 1e9:.3g} GB/s"
    ) in _explain_gh200_ring_ll("64KiB")
    # not said where the bytes at the bottleneck take longer (1 GiB on the same ring)
    assert "held to" not in _explain_gh200_ring_ll("1GiB")


def test_explain_does_not_credit_nccls_tuner_with_point_to_point_choices() -> None:
    """sendrecv and all-to-all said 'NCCL's tuner ranks p2p/LL first by its own estimate
    (... tuning.cc)': NCCL schedules point-to-point work without its tuner."""
    runner = CliRunner()
    for command in ("sendrecv", "alltoall"):
        args = [command, "-s", "256KiB", "--system", "dgx-h100", "-N", "2", "--explain"]
        result = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0
        text = " ".join(result.output.split())
        assert "why this algorithm and protocol: a tuner-style estimate" in text
        assert "NCCL does not tune point-to-point work" in text
        assert "tuning.cc" not in text
    # a collective NCCL does tune keeps its ranking's name
    result = runner.invoke(app, ["allreduce", "-s", "256KiB", "--system", "dgx-h100", "--explain"])
    assert "why this algorithm: NCCL's tuner ranks by its own estimate" in result.output


def test_explain_names_the_release_whose_tuner_constants_ranked() -> None:
    """--nccl-version 2.18 ranks with 2.18.3's constants, and --explain said 'NCCL 2.30.7
    tuning.cc' all the same; the constants named are the tuner view's base-latency source, and
    what the release lays over it. A release's missing algorithms are a clause of their own (it
    had read 'algorithms from NCCL 2.18 predates pat'; an auditor's review)."""
    runner = CliRunner()
    args = ["allreduce", "-s", "25MiB", "--system", "dgx-h100", "-N", "4", "--explain"]
    builtin = "NCCL 2.30.7 src/graph/tuning.cc"
    for extra, source in (
        (
            ["--nccl-version", "2.18"],
            f"{builtin}, except base_latency, hop_latency from NVIDIA/nccl tag v2.18.3-1, "
            "src/graph/tuning.cc; NCCL 2.18 predates pat",
        ),
        # 2.27.5 changed only the hops: the base latencies are still 2.30.7's
        (
            ["--nccl-version", "2.27"],
            f"{builtin}, except hop_latency from NVIDIA/nccl tag v2.27.5-1, src/graph/tuning.cc",
        ),
        ([], builtin),
    ):
        result = runner.invoke(app, [*args, *extra], env={"COLUMNS": "400"})
        assert result.exit_code == 0
        text = " ".join(result.output.split())
        assert f"bytes / its bandwidth; constants: {source}); this model reports" in text


def test_a_source_longer_than_the_line_stays_beside_its_bullet() -> None:
    """gb200-nvl72's 125-character source URL wrapped whole onto the next line at 110 columns,
    leaving a bare '-' above it."""
    cat = load_catalogue(use_env=False)
    sources = next(s for s in cat.systems if s.id == "gb200-nvl72").sources
    url = max(sources, key=len)
    assert len(url) > 110
    assert " " not in url
    result = runner.invoke(app, ["systems", "show", "gb200-nvl72"], env={"COLUMNS": "110"})
    lines = result.output.splitlines()
    start = lines.index("sources:")
    bullets = [line for line in lines[start + 1 :] if line.startswith("  -")]
    assert all(line.strip() != "-" for line in bullets)
    assert len(bullets) == len(sources)
    (first,) = [line for line in bullets if line.startswith(f"  - {url[:60]}")]
    assert len(first) <= 110


def test_a_ranking_never_shows_two_estimates_alike_that_differ() -> None:
    """25 MiB on 4 x DGX H100: NCCL's estimates of tree/LL128 and nvlstree/Simple both printed
    '248 us', and the first was 'chosen' with no visible reason; neighbours that would print
    alike get two more digits."""
    args = ["allreduce", "--size", "25MiB", "--system", "dgx-h100", "--nodes", "4", "--explain"]
    result = runner.invoke(app, args, env={"COLUMNS": "100"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("why this algorithm"))
    rows = [line.split() for line in lines[start + 3 : start + 10] if " / " in line]
    estimates = [f"{row[3]} {row[4]}" for row in rows]
    assert len(set(estimates)) == len(estimates), estimates
    first, second = (float(e.split()[0]) for e in estimates[:2])
    assert first < second  # the chosen one is lower, as the ranking says
    assert rows[0][-1] == "chosen"


def test_a_rounded_size_is_headed_as_asked_and_given_exactly() -> None:
    """A 1 GiB reduce-scatter on 36 GB200 trays (144 ranks) is rounded, as nccl-tests does, to
    whole 16-byte shares per rank: floor(2^30 / (144 x 16)) x 144 x 16 = 1073740032 B. It was
    headed '1.074 GB', which read as another size than the 1 GiB asked."""
    rounded = (2**30 // (144 * 16)) * 144 * 16
    assert rounded == 1073740032
    result = runner.invoke(
        app, ["reducescatter", "--system", "gb200-nvl72", "-N", "36", "--size", "1GiB"]
    )
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "reduce_scatter of 1 GiB (fp32) on 36 nodes x 4 GPUs"
    assert f"  size         {rounded} B, 1 GiB rounded as nccl-tests does" in lines
    # a size that needs no rounding has no such row
    plain = runner.invoke(app, ["allreduce", "--size", "10GB", "--fabric", "ndr"]).output
    assert not any(line.startswith("  size") for line in plain.splitlines())


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # pydantic's words had come through: 'Input should be a valid list'
        (
            "name: x\nsystem: dgx-h100\nnodes: 2\nrequirements:\n  allreduce: {size: 1GB}\n",
            "4:1: requirements: a mapping is not a list: give its items below it, each after '- '",
        ),
        # 'String should have at most 200 characters'
        (
            f"name: {'a' * 201}\nsystem: dgx-h100\nnodes: 2\nrequirements: []\n",
            "1:1: name: 201 characters, more than the 200 taken",
        ),
        (
            'name: ""\nsystem: dgx-h100\nnodes: 2\nrequirements: []\n',
            "1:1: name: is empty: write at least one character",
        ),
        # 'Keys should be strings'
        (
            "name: x\nsystem: dgx-h100\nnodes: 2\nrequirements: []\n1: 2\n",
            "5:1: [1]: the key 1 is not a name: keys are words such as nodes",
        ),
    ],
)
def test_design_file_shape_errors_are_in_plain_words(
    text: str, line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(text, encoding="utf-8")
    err = main_error(["check", str(path)], capsys)
    assert err == f"error: {path}:{line}\n"


@pytest.mark.parametrize("command", [["design", "show"], ["check"], ["nccl-check"], ["calibrate"]])
def test_an_error_about_a_very_long_path_keeps_its_reason(command: list[str]) -> None:
    """A 100,000-character path: design show, nccl-check and calibrate cut their one error line
    at 2,000 characters from the start, so only 'error: xxxx...' was left, without the reason;
    check printed all 100,046 bytes on one line. The line is cut in the middle, keeping both
    ends: at most 2,000 characters of the message, the count of those left out, the reason."""
    path = "x" * 100_000
    result = runner.invoke(app, [*command, path])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: xxxx")
    assert line.endswith(": cannot read file: File name too long")
    assert "...(98," in line
    assert len(line) < 2_100


def test_a_preset_resized_by_gpus_per_node_says_so(tmp_path: Path) -> None:
    """nccl-tests' -g counts GPUs per process; ibcalc's counts GPUs per node, so a pasted
    '-g 4' resized a DGX H100 unsaid (a review). The note names the option on the command
    line and the file's field with --design; nccl-check, whose log gives the ranks per node
    ('[log]'), leaves it out."""
    out = _ok("allreduce", "--size", "8", "--system", "dgx-h100", "-N", "1", "-g", "4")
    assert "4 GPUs per node of dgx-h100's 8 (--gpus-per-node)" in out
    assert "not nccl-tests' -g" in _ok("sweep", "--help")
    design = tmp_path / "d.yaml"
    design.write_text("name: resized\nsystem: dgx-h100\ngpus_per_node: 4\nnodes: 2\n")
    trained = _ok("train", "--model", "llama3-8b", "--design", str(design), "--tp", "4")
    assert "4 GPUs per node of dgx-h100's 8 (the design's gpus_per_node)" in trained
    log = (
        ROOT / "benchmarks/data/sweeps/log12_allreduce_2node_2xGH200_slingshot_nccltests2.18.2.txt"
    )
    checked = _ok("nccl-check", str(log))
    assert "gpus_per_node = 1 [log]" in checked
    assert "per node of alps-gh200's" not in checked
    # a table without a rank list: the flag resized the preset, and that is said, as given
    table = (
        ROOT
        / "benchmarks/data/sweeps"
        / "log13_allgather_16node_64xH100_slingshot_kestrel_table_only_crlf.txt"
    )
    flagged = _ok("nccl-check", str(table), "--system", "dgx-h100", "-N", "16", "-g", "4")
    assert "cluster [flag]: 4 GPUs per node of dgx-h100's 8 (--gpus-per-node)" in flagged


def test_a_partial_meshs_all_to_all_note_follows_the_designs_requirements(tmp_path: Path) -> None:
    """design show said a DGX-1's all-to-all is priced as if every pair were linked for every
    design, then (a review) for none: it says so where the design requires an all-to-all."""
    head = "name: x\nnodes: 1\nsystem: dgx-1v\ngpus_per_node: 2\nrequirements:\n"
    need = "  - allreduce: {size: 1GB, max_time: 40ms}\n"
    plain, a2a = tmp_path / "plain.yaml", tmp_path / "a2a.yaml"
    plain.write_text(head + need)
    a2a.write_text(head + need + "  - alltoall: {size: 1GB, max_time: 40ms}\n")
    note = "nvlink2 is a partial mesh: an all-to-all is priced"
    assert note not in _ok("design", "show", str(plain))
    assert note in _ok("design", "show", str(a2a)).replace("\n ", " ")
    # nccl-check with the design: the node was resized by the file, and says so
    log = tmp_path / "sr.log"
    rows = "".join(
        f"{s:>12} {s // 4:>12}  float  none  -1  {s / 9e3:8.1f}  0.0  0.0  0  {s / 9e3:8.1f}  "
        "0.0  0.0  0\n"
        for s in (2**20, 2**24, 2**28)
    )
    log.write_text(
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n" + rows
    )
    checked = _ok("nccl-check", str(log), "--design", str(plain), "--collective", "sendrecv")
    assert "cluster [design]: 2 GPUs per node of dgx-1v's 8 (plain.yaml's gpus_per_node)" in checked


def test_the_train_header_names_the_activations_type() -> None:
    """TP, CP, PP and EP messages are sized in bf16 activations: the header says so beside the
    gradients' type (review BV: only 'bf16 gradients' had been said)."""
    out = _ok("train", "--model", "llama3-8b", "--system", "dgx-h100", "--tp", "8")
    assert "bf16 activations, bf16 gradients on " in " ".join(out.split())


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["allreduce", "-s"],
            "error: Option '-s' requires an argument. (see 'ibcalc allreduce --help')",
        ),
        (
            ["sweep", "allreduce", "-b"],
            "error: Option '-b' requires an argument. (see 'ibcalc sweep --help')",
        ),
        # a group's command: its own help, which lists the option (review BZ)
        (
            ["design", "show", "--format"],
            "error: Option '--format' requires an argument. (see 'ibcalc design show --help')",
        ),
        (
            ["links", "--format"],
            "error: Option '--format' requires an argument. (see 'ibcalc links --help')",
        ),
        # the group's command past the group's own option and its value (review CA)
        (
            ["links", "--format", "json", "show", "ndr", "--format"],
            "error: Option '--format' requires an argument. (see 'ibcalc links show --help')",
        ),
    ],
)
def test_an_option_missing_its_value_names_the_commands_help(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    """The toolkit raises this refusal before the command's context exists, and it had come
    without the '--help' hint every other usage error carries."""
    outcome = _fail_main(args, capsys)
    assert outcome.err.strip() == line


def test_sweep_and_gap_stderr_notes_wrap_at_columns(tmp_path: Path) -> None:
    """sweep's CSV notes and the 'plot written to' lines of sweep and gap break at $COLUMNS as
    nccl-check's notes do (they had run past a narrow page); without $COLUMNS, on a pipe, one
    line each, for scripts."""
    args = ["sweep", "allreduce", "-b", "1M", "-e", "4M", "--system", "dgx-h100", "-N", "2"]
    narrow = runner.invoke(app, [*args, "--format", "csv"], env={"COLUMNS": "40"})
    one = runner.invoke(app, [*args, "--format", "csv"], env={"COLUMNS": ""})
    assert narrow.exit_code == one.exit_code == 0
    # 'assumption: ndr supports SHARP (CollNet); enable with --sharp' is 61 characters
    assert one.stderr.splitlines() == [
        "assumption: ndr supports SHARP (CollNet); enable with --sharp"
    ]
    assert narrow.stderr.splitlines() == [
        "assumption: ndr supports SHARP",
        "  (CollNet); enable with --sharp",
    ]
    png = tmp_path / "a_long_enough_name_to_need_a_second_line.png"
    gap = runner.invoke(
        app, ["gap", "--system", "dgx-h100", "--plot", str(png)], env={"COLUMNS": "40"}
    )
    assert gap.exit_code == 0
    assert gap.stderr.splitlines() == ["plot written to", f"  {png}"]


#: What one node says of the scale-out link it was given.
NO_NETWORK = "ndr carries no collective: one scale-up domain, no network between GPUs"


@pytest.mark.parametrize(
    "argv",
    [
        ["allreduce", "--size", "1GB", "-N", "1"],
        ["allreduce", "--size", "1GB", "-N", "1", "--format", "json"],
        ["sweep", "allreduce", "-N", "1", "--format", "csv"],
        ["train", "--model", "llama3-8b", "-N", "1"],
        ["infer", "--model", "llama3-8b", "-N", "1"],
    ],
)
@pytest.mark.parametrize("spelling", ["--fabric", "--inter"])
def test_a_note_names_the_link_option_as_typed(argv: list[str], spelling: str) -> None:
    """Notes name an option by the alias typed, as errors do: '--fabric ndr -N 1' had been
    noted '--inter ndr carries no collective', an option the user never typed."""
    result = runner.invoke(app, [*argv, spelling, "ndr"])
    assert result.exit_code == 0, result.stderr
    said = result.stdout + result.stderr
    assert f"{spelling} {NO_NETWORK}" in said
    other = "--inter" if spelling == "--fabric" else "--fabric"
    assert other not in said


@pytest.mark.parametrize(
    ("typed", "header"),
    [
        # a size typed is headed as typed: 10.755 GB had read '10.76 GB', 1000.5 GiB
        # '1.074 TB' and 1.0625 GiB '1.141 GB' (four figures, of the other family)
        ("10.755GB", "all_reduce of 10.755 GB (fp32)"),
        ("1000.5GiB", "all_reduce of 1000.5 GiB (fp32)"),
        ("1.0625GiB", "all_reduce of 1.0625 GiB (fp32)"),
        ("4GiB", "all_reduce of 4 GiB (fp32)"),
    ],
)
def test_an_estimate_is_headed_with_the_size_as_typed(typed: str, header: str) -> None:
    result = runner.invoke(app, ["allreduce", "-s", typed, "--system", "dgx-h100", "-N", "3"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(header)


def test_gap_echoes_the_tp_size_as_typed() -> None:
    # --tp-size 10.755GB had been echoed '10.76 GB' in the title, the slowdown line and a note
    args = ["gap", "--system", "dgx-h100", "--tp", "8", "--tp-size", "10.755GB"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "(TP=8 rows: 10.755 GB in bf16)" in flat
    assert "TP=8 all-reduce of 10.755 GB in bf16: " in flat
    assert "the same all-reduce of 10.755 GB (bf16) over 8 GPUs: " in flat
    assert "10.76 GB" not in flat


#: Every way a command names a file it reads (a NUL byte cannot reach argv from a shell, but
#: main() and the app are called with any list of strings).
NUL_NAMED = [
    ["check"],
    ["nccl-check"],
    ["calibrate"],
    ["design", "show"],
    ["links", "--catalogue"],
    ["systems", "--catalogue"],
    ["allreduce", "-s", "1GB", "--cost-params"],
    ["train", "--model", "llama3-8b", "--design"],
]


@pytest.mark.parametrize("args", NUL_NAMED, ids=[" ".join(a) for a in NUL_NAMED])
def test_a_file_name_with_a_nul_byte_is_one_line_of_bad_input(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A NUL byte in the name of a file read had been an internal error (exit 3) where the
    file's name is compared with the others' (check, nccl-check, --catalogue, --cost-params)."""
    outcome = _fail_main([*args, "a\x00b.yaml"], capsys)
    _assert_one_line_error(outcome, ["a\\x00b.yaml: file name holds a NUL byte"])
