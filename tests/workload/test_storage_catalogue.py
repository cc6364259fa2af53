"""Storage in the catalogue: entries, sources and loader checks (file:line:col)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcalc.catalogue.load import find_link, find_storage, load_catalogue
from ibcalc.catalogue.models import Catalogue, StorageKind
from ibcalc.errors import CatalogueError, UnknownNameError


def test_builtin_storage_entries(builtin_catalogue: Catalogue) -> None:
    nvme = find_storage(builtin_catalogue, "nvme-of")
    assert nvme.kind is StorageKind.NVME_OF
    # 4 x 100 GbE ports at roce-100g's achievable rate, derated as the clients' NICs are (the
    # line rate's 50 GB/s had made a 400 Gb/s client look the bound: a review)
    port = find_link(builtin_catalogue, "roce-100g").achievable_Bps
    assert nvme.aggregate_write_Bps == nvme.aggregate_read_Bps == pytest.approx(4 * port, rel=1e-3)
    assert nvme.aggregate_write_Bps == pytest.approx(48.1e9)
    assert nvme.confidence.value == "low"
    ddn = find_storage(builtin_catalogue, "ai400x2")
    assert ddn.kind is StorageKind.PARALLEL_FS
    assert (ddn.aggregate_read_Bps, ddn.aggregate_write_Bps) == (90e9, 65e9)
    s3 = find_storage(builtin_catalogue, "s3")
    assert s3.kind is StorageKind.OBJECT
    # AWS: 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD per second per prefix
    assert (s3.write_requests_per_s, s3.read_requests_per_s) == (3500, 5500)
    assert s3.request_scope == "per-prefix"
    assert s3.aggregate_write_Bps is None
    for entry in builtin_catalogue.storage:
        assert entry.sources


def test_unknown_storage_suggests(builtin_catalogue: Catalogue) -> None:
    with pytest.raises(UnknownNameError) as err:
        find_storage(builtin_catalogue, "ddn-ai400")
    assert "ddn-ai400x2" in str(err.value)


HEAD = "schema: ibcalc-catalogue/1\nstorage:\n"


def _load(tmp_path: Path, body: str) -> Catalogue:
    path = tmp_path / "extra.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    return load_catalogue([path], use_env=False)


def test_override_replaces_by_id(tmp_path: Path) -> None:
    cat = _load(
        tmp_path,
        """\
  - id: nvmeof-target
    name: "my target"
    kind: nvme-of
    aggregate_read: "100 GB/s"
    aggregate_write: "80 GB/s"
    aggregate_source: "our datasheet"
    sources: ["ours"]
    confidence: high
""",
    )
    assert find_storage(cat, "nvmeof-target").aggregate_write_Bps == 80e9
    # the built-in aliases went with the replaced entry
    with pytest.raises(UnknownNameError):
        find_storage(cat, "nvme-of")


def test_a_number_without_its_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError) as err:
        _load(
            tmp_path,
            """\
  - id: mine
    name: "mine"
    kind: parallel-fs
    aggregate_read: "100 GB/s"
    aggregate_write: "80 GB/s"
    sources: ["ours"]
    confidence: high
""",
        )
    text = str(err.value)
    assert "aggregate_source" in text
    assert "extra.yaml:6:" in text  # aggregate_read's line


def test_client_faster_than_the_unit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError) as err:
        _load(
            tmp_path,
            """\
  - id: mine
    name: "mine"
    kind: parallel-fs
    aggregate_read: "10 GB/s"
    aggregate_write: "10 GB/s"
    aggregate_source: "x"
    per_client_write: "20 GB/s"
    per_client_source: "x"
    sources: ["ours"]
    confidence: high
""",
        )
    assert "per_client_write 20 GB/s is more than" in str(err.value)


def test_gb_written_for_gbits_is_caught(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError) as err:
        _load(
            tmp_path,
            """\
  - id: mine
    name: "mine"
    kind: nvme-of
    aggregate_read: "40000 GB/s"
    aggregate_write: "40000 GB/s"
    aggregate_source: "x"
    sources: ["ours"]
    confidence: high
""",
        )
    assert "more than 10 TB/s" in str(err.value)


def test_non_object_storage_needs_a_write_rate(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError) as err:
        _load(
            tmp_path,
            """\
  - id: mine
    name: "mine"
    kind: parallel-fs
    sources: ["ours"]
    confidence: high
""",
        )
    assert "needs aggregate_write" in str(err.value)


def test_request_rates_need_a_scope_and_ids_are_unique(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError) as err:
        _load(
            tmp_path,
            """\
  - id: obj
    name: "obj"
    kind: object
    write_requests_per_s: 100
    requests_source: "x"
    sources: ["ours"]
    confidence: low
  - id: obj
    name: "obj again"
    kind: object
    sources: ["ours"]
    confidence: low
""",
        )
    problems = [p.message for p in err.value.problems]
    assert any("request_scope" in m for m in problems)
    assert any("used twice" in m for m in problems)


def test_a_part_limit_needs_its_source_and_a_unit(tmp_path: Path) -> None:
    entry = """\
  - id: obj
    name: "obj"
    kind: object
    max_write_part: {size}
    sources: ["ours"]
    confidence: low
"""
    with pytest.raises(CatalogueError) as err:
        _load(tmp_path, entry.format(size='"5 GiB"'))
    assert "max_write_part needs max_write_part_source" in str(err.value)
    with pytest.raises(CatalogueError) as err:
        _load(tmp_path, entry.format(size="5368709120"))
    assert "size 5368709120 has no unit" in str(err.value)


def test_a_part_limit_needs_a_write_request_rate(tmp_path: Path) -> None:
    """Only a store priced per request cuts a save into parts: elsewhere the limit would be
    skipped without a word."""
    with pytest.raises(CatalogueError) as err:
        _load(
            tmp_path,
            """\
  - id: fs
    name: "fs"
    kind: parallel-fs
    aggregate_read: "10 GB/s"
    aggregate_write: "10 GB/s"
    aggregate_source: "x"
    max_write_part: "1 MiB"
    max_write_part_source: "x"
    sources: ["ours"]
    confidence: low
""",
        )
    assert "max_write_part needs write_requests_per_s" in str(err.value)


@pytest.mark.parametrize(
    ("key", "value"), [("max_write_parts", "100"), ("min_write_part", '"5 MiB"')]
)
def test_a_part_limit_of_an_upload_needs_its_source_and_a_write_request_rate(
    tmp_path: Path, key: str, value: str
) -> None:
    """max_write_parts (S3: 10,000) and min_write_part (S3: 5 MiB) take their source from
    max_write_part_source and apply only to a store priced per request."""
    entry = f"""\
  - id: obj
    name: "obj"
    kind: parallel-fs
    aggregate_read: "10 GB/s"
    aggregate_write: "10 GB/s"
    aggregate_source: "x"
    {key}: {value}
    sources: ["ours"]
    confidence: low
"""
    with pytest.raises(CatalogueError) as err:
        _load(tmp_path, entry)
    problems = " ".join(str(p) for p in err.value.problems)
    assert f"{key} needs max_write_part_source" in problems
    assert f"{key} needs write_requests_per_s" in problems
