"""benchmarks/data/sweeps/manifest.yaml: every published run is listed, sourced and describable.

The manifest names catalogue ids for each run and says for each cluster field whether the source
states it, it was inferred, or it is unknown. These tests keep it consistent with the files beside
it and with data/links.yaml; the rank counts are checked against the files' own device lists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ibcalc.catalogue.load import load_catalogue
from ibcalc.catalogue.models import Catalogue, LinkKind
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective, DType

SWEEPS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sweeps"
MANIFEST = SWEEPS / "manifest.yaml"
CLUSTER_FIELDS = (
    "system",
    "intra",
    "inter",
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "gpus_per_process",
    "sharp",
    "nvls",
)
PROVENANCE = {"stated", "inferred", "unknown"}
USES = {"fit_and_test", "test_only", "exclude"}
REGIMES = {"latency", "mid", "bandwidth"}
#: A device-list line of nccl-tests/rccl-tests: "#  Rank  3 Group  0 Pid ..." (old: no Group).
RANK_LINE = re.compile(r"^\s*(?:\[1,\d+\]<stdout>:)?\s*#\s+Rank\s+(\d+)\s")


def _manifest() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _entries() -> list[dict[str, Any]]:
    files = _manifest()["files"]
    assert isinstance(files, list)
    return files


ENTRIES = _entries()
IDS = [entry["file"] for entry in ENTRIES]


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue(use_env=False)


def test_schema_and_one_entry_per_data_file() -> None:
    assert _manifest()["schema"] == "ibcalc-sweeps-manifest/1"
    assert len(IDS) == len(set(IDS))
    on_disk = sorted(p.name for p in SWEEPS.glob("*.txt"))
    # 27 published sweeps plus 5 logs (log06, log10-log13)
    assert len(on_disk) == 32
    assert sorted(IDS) == on_disk


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_entry_is_complete(entry: dict[str, Any]) -> None:
    assert (SWEEPS / entry["file"]).is_file()
    for key in ("source", "source_group", "nccl_version_evidence", "why", "notes"):
        assert isinstance(entry[key], str), key
        assert entry[key].strip(), key
    assert "@" in entry["source"] or "no commit verified" in entry["source"]
    assert entry["library"] in ("nccl", "rccl")
    assert entry["nccl_version"] is None or re.fullmatch(r"2\.\d+\.\d+", entry["nccl_version"])
    Collective(entry["collective"])
    DType(entry["dtype"])
    assert entry["use"] in USES
    assert set(entry["regimes"]) <= REGIMES
    if entry["use"] == "exclude":
        assert entry["regimes"] == []
    else:
        assert entry["regimes"]


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_every_cluster_field_has_provenance_and_evidence(entry: dict[str, Any]) -> None:
    cluster = entry["cluster"]
    assert set(cluster) == set(CLUSTER_FIELDS)
    for name in CLUSTER_FIELDS:
        field = cluster[name]
        assert set(field) == {"value", "provenance", "evidence"}, name
        assert field["provenance"] in PROVENANCE, name
        assert isinstance(field["evidence"], str), name
        assert len(field["evidence"].strip()) >= 10, name
        if field["provenance"] == "unknown":
            assert field["value"] is None, name


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_ids_exist_in_the_catalogue(entry: dict[str, Any], catalogue: Catalogue) -> None:
    cluster = entry["cluster"]
    links = {link.id: link for link in catalogue.links}
    systems = {system.id for system in catalogue.systems}
    system = cluster["system"]["value"]
    assert system is None or system in systems
    intra = cluster["intra"]["value"]
    if intra is not None:
        assert links[intra].kind in (LinkKind.SCALE_UP, LinkKind.HOST)
    inter = cluster["inter"]["value"]
    if inter is not None:
        assert links[inter].kind in (LinkKind.SCALE_OUT, LinkKind.WAN)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_rank_count_matches_the_device_list(entry: dict[str, Any]) -> None:
    cluster = entry["cluster"]
    ranks = cluster["nodes"]["value"] * cluster["gpus_per_node"]["value"]
    text = (SWEEPS / entry["file"]).read_text(encoding="utf-8", errors="replace")
    listed = {int(m.group(1)) for line in text.splitlines() if (m := RANK_LINE.match(line))}
    if entry["file"].startswith("log10"):
        # the README elides the ranks after Rank 4: those shown are the first of the 128
        assert listed == set(range(5))
        assert ranks == 128
    elif entry["file"].startswith("log13"):
        assert not listed  # a table without its header: no device list to compare
    else:
        assert listed == set(range(ranks))


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e["use"] != "exclude"], ids=lambda e: e["file"]
)
def test_usable_runs_resolve_to_a_cluster(entry: dict[str, Any], catalogue: Catalogue) -> None:
    values = {name: field["value"] for name, field in entry["cluster"].items()}
    spec = ClusterSpec(
        system=values["system"],
        intra=values["intra"],
        inter=values["inter"],
        nodes=values["nodes"],
        gpus_per_node=values["gpus_per_node"],
        nics_per_node=values["nics_per_node"],
        sharp=bool(values["sharp"]),
        nvls=values["nvls"],
    )
    cluster = resolve_cluster(catalogue, spec)
    assert cluster.ranks == values["nodes"] * values["gpus_per_node"]


def test_copies_keep_their_published_bytes() -> None:
    # git must not normalise these: log13 was published with CRLF line endings and log11 indented
    # by four spaces (a MkDocs tab); file 24 has trailing spaces on its header lines.
    log13 = next(SWEEPS.glob("log13_*.txt")).read_bytes()
    assert log13.count(b"\r\n") == log13.count(b"\n") > 0
    log11 = next(SWEEPS.glob("log11_*.txt")).read_text(encoding="utf-8")
    assert all(line.startswith("    ") for line in log11.splitlines() if line.strip())
    sweep24 = next(SWEEPS.glob("24_*.txt")).read_text(encoding="utf-8")
    assert any(line.endswith(" ") for line in sweep24.splitlines())


def test_sources_md_covers_every_file() -> None:
    sources = (SWEEPS / "SOURCES.md").read_text(encoding="utf-8")
    for name in IDS:
        assert name in sources, name
