"""catalogue/models.py: quantities with units become SI floats; bad entries are refused.

Every conversion is worked by hand: 400 Gb/s / 8 bits = 50 GB/s = 5e10 B/s per direction; NVLink
4's "900 GB/s" is the bidirectional figure, 450 GB/s per direction; 5 us = 5e-6 s.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ibcalc.catalogue.models import Catalogue, Link, Storage, System

GB = 1e9


def _link(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "test-ndr",
        "name": "InfiniBand NDR port (test copy)",
        "kind": "scale-out",
        "family": "infiniband",
        "generation": "NDR",
        "scope": "per-port",
        "per_direction": "400 Gb/s",
        "efficiency": 0.9,
        "efficiency_source": "a round number for the test",
        "sources": ["this test"],
        "confidence": "high",
    }
    entry.update(changes)
    return entry


def _system(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "test-node",
        "name": "a test node",
        "gpu": "H100 SXM5",
        "gpu_arch": "hopper",
        "gpus_per_node": 8,
        "scale_up_domain": 8,
        "intra": "nvlink4",
        "nvswitch": True,
        "nics_per_node": 8,
        "inter": "ndr",
        "sources": ["this test"],
        "confidence": "high",
    }
    entry.update(changes)
    return entry


def test_link_rates_in_si_and_published_units() -> None:
    link = Link.model_validate(_link())
    assert link.per_direction_Bps == pytest.approx(50 * GB)  # 400 Gb/s / 8
    assert link.per_direction_GBps == pytest.approx(50)
    assert link.per_direction_Gbps == pytest.approx(400)
    assert link.achievable_Bps == pytest.approx(45 * GB)  # 50 GB/s x 0.9
    assert link.achievable_GBps == pytest.approx(45)
    assert link.bidirectional_GBps is None
    assert link.latency_s is None
    assert link.transport_latency_s == 0.0
    assert link.duplex_efficiency == 1.0
    assert link.names == ["test-ndr"]


def test_link_bidirectional_lane_and_latency_fields() -> None:
    link = Link.model_validate(
        _link(
            kind="scale-up",
            per_direction="450 GB/s",
            bidirectional="900 GB/s",  # NVLink 4: 18 links x 50 GB/s both ways
            lane_signalling="100 Gb/s",
            latency="5 us",
            transport_latency="2 us",
            aliases=["nv4"],
        )
    )
    assert link.per_direction_Bps == pytest.approx(450 * GB)
    assert link.bidirectional_GBps == pytest.approx(900)
    assert link.lane_signalling_Gbps == pytest.approx(100)
    assert link.latency_s == pytest.approx(5e-6)
    assert link.transport_latency_s == pytest.approx(2e-6)
    assert link.names == ["test-ndr", "nv4"]


def test_a_bidirectional_figure_is_bounded_as_both_directions() -> None:
    # review BN: 60 TB/s per direction (under the 100 TB/s bound) had been refused its 120 TB/s
    # bidirectional figure as "out of range ... 100 TB/s per direction"
    link = Link.model_validate(
        _link(kind="scale-up", per_direction="60 TB/s", bidirectional="120 TB/s")
    )
    assert link.bidirectional_GBps == pytest.approx(120_000)
    with pytest.raises(ValidationError) as info:
        Link.model_validate(
            _link(kind="scale-up", per_direction="60 TB/s", bidirectional="300 TB/s")
        )
    assert "allowed 2 MB/s (16 Mb/s) to 200 TB/s, both directions together" in str(info.value)


@pytest.mark.parametrize("value", ["200 TB/s", "2 PB/s", "1e30 GB/s"])
def test_a_catalogue_bandwidth_has_one_upper_limit(value: str) -> None:
    # review EC 11: past 1 PB/s the unit parser's own sanity limit had answered first ("absurdly
    # large (the limit is 1 PB/s)"), so one field was refused under two limits in two wordings
    with pytest.raises(ValidationError) as info:
        Link.model_validate(_link(per_direction=value))
    assert "out of range: allowed 1 MB/s (8 Mb/s) to 100 TB/s per direction" in str(info.value)
    assert "1 PB/s" not in str(info.value)


def test_link_json_keys_carry_units() -> None:
    data = Link.model_validate(_link()).model_dump(mode="json")
    assert list(data) == list(Link.json_keys)
    # no bare rate: every bandwidth key says GB/s or Gb/s, every time key seconds
    assert not [k for k in data if k.endswith(("_Bps", "bidirectional", "per_direction"))]
    assert data["per_direction_GBps"] == pytest.approx(50)
    assert data["per_direction_Gbps"] == pytest.approx(400)
    assert data["achievable_GBps"] == pytest.approx(45)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"per_direction": "5 Mb/s"}, "out of range"),  # 0.625 MB/s < the 1 MB/s floor
        ({"per_direction": "200 TB/s"}, "out of range"),  # above the 100 TB/s ceiling
        (
            {"per_direction": "400"},
            "a number without a unit",
        ),  # bits or bytes? a bare number is refused
        ({"latency": "2 s"}, "out of range"),  # longest link latency accepted: 1 s
        ({"efficiency": 0.0}, "out of range"),
        ({"efficiency": 1.5}, "out of range"),
        ({"efficiency": float("nan")}, "finite"),
        ({"id": "NDR"}, "pattern"),  # ids are lower case
        ({"name": "evil\x1b[2J"}, "control character"),
        ({"sources": []}, "at least 1"),
        ({"sources": [" "]}, "blank"),
        ({"kind": "scale-sideways"}, "scale-up"),
        ({"colour": "blue"}, "Extra inputs"),
    ],
)
def test_bad_link_entries_are_refused(changes: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        Link.model_validate(_link(**changes))


def test_models_are_frozen() -> None:
    link = Link.model_validate(_link())
    with pytest.raises(ValidationError):
        link.efficiency = 0.5  # type: ignore[misc]


def test_system_fields_and_refusals() -> None:
    system = System.model_validate(_system(aliases=["tn"]))
    assert system.names == ["test-node", "tn"]
    assert (system.gpus_per_node, system.scale_up_domain, system.nics_per_node) == (8, 8, 8)
    for changes, words in (
        ({"gpu_arch": "kepler"}, "hopper"),
        ({"nics_per_node": -1}, "greater than or equal to 0"),
        ({"gpus_per_node": 0}, "greater than or equal to 1"),
        ({"nvswitch": "yes"}, "valid boolean"),  # strict: YAML 1.1 "yes" is not a bool here
    ):
        with pytest.raises(ValidationError, match=words):
            System.model_validate(_system(**changes))


def test_storage_rates_convert() -> None:
    storage = Storage.model_validate(
        {
            "id": "test-fs",
            "name": "a test file system",
            "kind": "parallel-fs",
            "aggregate_read": "100 GB/s",
            "aggregate_write": "80 Gb/s",  # 80 / 8 = 10 GB/s
            "latency": "2 ms",
            "sources": ["this test"],
            "confidence": "low",
        }
    )
    assert storage.aggregate_read_Bps == pytest.approx(100 * GB)
    assert storage.aggregate_write_Bps == pytest.approx(10 * GB)
    assert storage.per_client_read_Bps is None
    assert storage.latency_s == pytest.approx(2e-3)


def test_catalogue_holds_links_and_systems() -> None:
    catalogue = Catalogue(
        links=[Link.model_validate(_link())], systems=[System.model_validate(_system())]
    )
    assert [link.id for link in catalogue.links] == ["test-ndr"]
    assert catalogue.origins == []
    assert catalogue.storage == []


def test_catalogue_entries_shared_between_loads_cannot_be_changed() -> None:
    """Every load_catalogue() hands back the same parsed Link and System objects (the built-in
    file is read once). Their aliases, capabilities and sources were lists: clearing one
    link's capabilities took SHARP from every later load (4 x DGX H100 with sharp=True went from
    nvls to nvlstree). They are tuples now, and a later load is untouched."""
    from ibcalc.catalogue.load import find_link, find_system, load_catalogue

    ndr = find_link(load_catalogue(use_env=False), "ndr")
    assert "sharp" in ndr.capabilities
    with pytest.raises(AttributeError):
        ndr.capabilities.clear()
    with pytest.raises(AttributeError):
        ndr.aliases.append("x")
    system = find_system(load_catalogue(use_env=False), "dgx-h100")
    with pytest.raises(AttributeError):
        system.sources.append("x")
    again = find_link(load_catalogue(use_env=False), "ndr")
    assert "sharp" in again.capabilities
    assert "x" not in again.aliases


def test_a_catalogue_prints_in_one_line(builtin_catalogue: Catalogue) -> None:
    """A notebook echoing the catalogue had printed pydantic's repr of every entry (150,829
    characters); it says what it holds and where from. An override file is named after the
    built-in one."""
    cat = builtin_catalogue
    counts = f"{len(cat.links)} links, {len(cat.systems)} systems, {len(cat.storage)} storage"
    assert repr(cat) == str(cat) == f"Catalogue({counts} systems from data/links.yaml)"
    two = cat.model_copy(update={"origins": ["data/links.yaml", "extra.yaml"], "storage": []})
    assert repr(two).endswith(" 0 storage systems from data/links.yaml, extra.yaml)")


def test_catalogue_entries_print_in_one_line(builtin_catalogue: Catalogue) -> None:
    """cat.links in a notebook had printed pydantic's repr of each link, sources and notes
    (3,499 characters for ndr; a system's 1,784, a storage system's about 1,700). Each says
    what it is: NDR is 400 Gb/s = 50 GB/s a direction, NVLink 4 450 GB/s (NVIDIA's 900 GB/s
    bidirectional); a DGX H100 is 8 H100s on NVLink 4 with 8 NDR NICs."""
    from ibcalc.catalogue.load import find_link, find_system

    ndr = find_link(builtin_catalogue, "ndr")
    assert repr(ndr) == str(ndr) == f"Link(ndr: {ndr.name}, scale-out, 50.0 GB/s per direction)"
    nvlink = find_link(builtin_catalogue, "nvlink4")
    assert repr(nvlink) == f"Link(nvlink4: {nvlink.name}, scale-up, 450 GB/s per direction)"
    dgx = find_system(builtin_catalogue, "dgx-h100")
    assert repr(dgx) == f"System(dgx-h100: 8 x {dgx.gpu}, nvlink4 + 8 x ndr)"
    for storage in builtin_catalogue.storage:
        assert repr(storage) == f"Storage({storage.id}: {storage.name}, {storage.kind.value})"
