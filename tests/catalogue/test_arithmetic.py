"""The catalogue's arithmetic, read from data/links.yaml's own text and worked by hand here (not
through the loader's models, whose checks it re-does independently): where an entry gives the
parts of a rate, the parts multiply out to it, and the commands print the file's figures.

Conventions (data/links.yaml's header, docs/catalogue.md): rates per direction unless the field
says ``bidirectional``; ``"400 Gb/s"`` is bits, ``"50 GB/s"`` bytes, G = 10^9, 1 GB/s = 8 Gb/s.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ibcalc.cli import app

DATA = Path(__file__).resolve().parents[2] / "data"

#: The loader's tolerance for the lane product (docs/catalogue.md#loader-checks): 1.5 %.
LANE_TOLERANCE = 0.015


def _gbytes(text: str) -> float:
    """A catalogue rate ("400 Gb/s", "15.75 GB/s") in GB/s, read here without ibcalc.units."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*(Gb/s|GB/s)\s*", text)
    assert match is not None, text
    value = float(match[1])
    return value / 8 if match[2] == "Gb/s" else value


@pytest.fixture(scope="module")
def entries() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DATA / "links.yaml").read_text(encoding="utf-8"))
    return data


def test_bidirectional_is_twice_per_direction_as_written(entries: dict[str, Any]) -> None:
    """Every entry that writes both figures: nvlink4 "450 GB/s" and "900 GB/s", ndr "400 Gb/s"
    and "800 Gb/s" (NVIDIA's "900 GB/s" and InfiniBand's port rates)."""
    both = [e for e in entries["links"] if "bidirectional" in e]
    assert len(both) >= 40
    off = {
        e["id"]: (e["per_direction"], e["bidirectional"])
        for e in both
        if _gbytes(e["bidirectional"]) != pytest.approx(2 * _gbytes(e["per_direction"]), rel=1e-9)
    }
    assert off == {}


def test_lanes_multiply_out_to_the_rate_as_written(entries: dict[str, Any]) -> None:
    """links x lanes_per_link x lane_signalling x encoding_efficiency == per_direction within
    1.5 %: NDR 1 x 4 x 106.25 Gb/s x 0.9412 = 400 Gb/s; PCIe 4 16 x 16 GT/s x 128/130 = 252
    Gb/s = 31.5 GB/s; NVLink 4 18 x 2 x 106.25 Gb/s x 0.9412 = 3600 Gb/s = 450 GB/s."""
    laned = [e for e in entries["links"] if "lane_signalling" in e]
    assert len(laned) >= 30
    off = {}
    for e in laned:
        derived = (
            e.get("links", 1)
            * e.get("lanes_per_link", 1)
            * _gbytes(e["lane_signalling"])
            * e["encoding_efficiency"]
        )
        rate = _gbytes(e["per_direction"])
        if abs(derived - rate) > LANE_TOLERANCE * rate:
            off[e["id"]] = (round(derived, 3), rate)
    assert off == {}


def test_a_link_count_in_the_name_is_the_entrys(entries: dict[str, Any]) -> None:
    """A per-GPU entry named with its link count ("NVLink 4.0, H100/H200 SXM (18 links)") has
    that many links, each per_direction / links: NVLink 1-5 per link per direction 20, 25, 25,
    25 and 50 GB/s (NVIDIA's NVLink pages)."""
    named = {}
    for e in entries["links"]:
        match = re.search(r"\((\d+) links\)", e["name"])
        if match is not None:
            assert e["scope"] == "per-gpu", e["id"]
            assert e["links"] == int(match[1]), e["id"]
            named[e["id"]] = _gbytes(e["per_direction"]) / e["links"]
    expected = {"nvlink1": 20, "nvlink2": 25, "nvlink3": 25, "nvlink4": 25, "nvlink5": 50}
    assert {k: named[k] for k in expected} == pytest.approx(expected, rel=1e-9)


#: A product a note states: "25 GB/s per link per direction x 18 = 450 GB/s", "4 x 100 Gb/s =
#: 50 GB/s", each factor a number with an optional unit or words before the next "x"
_FACTOR = r"(\d[\d,]*(?:\.\d+)?)((?:\s+(?!x\b)[A-Za-z/]+)*)"
_PRODUCT = re.compile(rf"{_FACTOR}((?:\s+x\s+{_FACTOR})+)\s+=\s+~?(\d[\d,]*(?:\.\d+)?)\s*(\S*)")
#: units of bits (a factor of 8 from a result in GB/s)
_BITS = ("Gb/s", "GT/s", "Gbps", "GbE")


def _stated_products(text: str) -> list[tuple[str, float, float]]:
    """Each "A x B [x C] = D" in ``text``: the words, the product worked here (bits turned to
    bytes where the result is in GB/s) and D."""
    found = []
    for match in _PRODUCT.finditer(text):
        left, _, right = match[0].partition("=")
        numbers = [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", left)]
        product = 1.0
        for number in numbers:
            product *= number
        if any(unit in left for unit in _BITS) and match.groups()[-1].rstrip(",;:).") == "GB/s":
            product /= 8
        stated = float(re.findall(r"\d[\d,]*(?:\.\d+)?", right)[0].replace(",", ""))
        found.append((match[0], product, stated))
    return found


def test_the_products_the_notes_state_hold(entries: dict[str, Any]) -> None:
    """Every "A x B = C" a note, an encoding or a source states of a link, a system or a storage
    entry works out (within the 1 % a note's rounded figure carries): "7 x 76.8 = 537.6 GB/s"
    (xgmi-mi355x), "25 GT/s x 16 = 50 GB/s" (AMD's convention), "4 x 100 Gb/s = 50 GB/s"
    (nvmeof-target)."""
    checked = []
    off = []
    for section in ("links", "systems", "storage"):
        for e in entries.get(section, []):
            texts = [v for v in e.values() if isinstance(v, str)] + list(e.get("sources", []))
            for text in texts:
                for words, product, stated in _stated_products(" ".join(text.split())):
                    checked.append(words)
                    if product != pytest.approx(stated, rel=0.01):
                        off.append((e["id"], words, product))
    assert len(checked) >= 10
    assert off == []


def test_the_commands_print_the_files_figures(entries: dict[str, Any]) -> None:
    """``links --format json`` gives each link's per_direction, bidirectional and lane rates as
    the file writes them, ``links show`` prints them with their unit, and ``systems --format
    json`` works each preset's rates out of its links: NICs x the port's rate / GPUs per GPU
    (aws-p5: 32 x 100 Gb/s / 8 = 50 GB/s), the scale-up link's rate per GPU."""
    runner = CliRunner()
    listed = {
        e["id"]: e for e in json.loads(runner.invoke(app, ["links", "--format", "json"]).stdout)
    }
    file_links = {e["id"]: e for e in entries["links"]}
    assert listed.keys() == file_links.keys()
    for link_id, e in file_links.items():
        shown = listed[link_id]
        assert shown["per_direction_GBps"] == pytest.approx(_gbytes(e["per_direction"]), rel=1e-12)
        assert shown["per_direction_Gbps"] == pytest.approx(8 * shown["per_direction_GBps"])
        if "bidirectional" in e:
            assert shown["bidirectional_GBps"] == pytest.approx(_gbytes(e["bidirectional"]))
        if "lane_signalling" in e:
            assert shown["lane_signalling_Gbps"] == pytest.approx(8 * _gbytes(e["lane_signalling"]))
        assert shown["achievable_GBps"] == pytest.approx(
            _gbytes(e["per_direction"]) * e["efficiency"]
        )
    table = runner.invoke(app, ["links", "show", "edr"], env={"COLUMNS": "100"}).stdout
    rows = {" ".join(line.split()) for line in table.splitlines()}
    # EDR: 4 lanes of 25.78125 Gb/s with 64b/66b coding carry 100 Gb/s = 12.5 GB/s
    for row in (
        "per_direction_GBps 12.5 GB/s",
        "per_direction_Gbps 100 Gb/s",
        "bidirectional_GBps 25 GB/s",
        "lane_signalling_Gbps 25.78125 Gb/s",
    ):
        assert row in rows
    systems = json.loads(runner.invoke(app, ["systems", "--format", "json"]).stdout)
    for system in systems:
        intra = file_links[system["intra"]]
        assert system["intra_per_gpu_GBps"] == pytest.approx(_gbytes(intra["per_direction"]))
        if system["inter"] is not None:
            port = _gbytes(file_links[system["inter"]]["per_direction"])
            per_gpu = port * system["nics_per_node"] / system["gpus_per_node"]
            assert system["nic_GBps"] == pytest.approx(port), system["id"]
            assert system["net_per_gpu_GBps"] == pytest.approx(per_gpu), system["id"]
    (p5,) = [s for s in systems if s["id"] == "aws-p5"]
    assert p5["net_per_gpu_GBps"] == pytest.approx(32 * 100 / 8 / 8)
