"""The switch catalogue (data/switches.yaml): loaded through yamlio, validated, sourced.

Port counts are the vendors' (NVIDIA QM97X0 "Interfaces" page: 32 twin-port OSFP = 64 x NDR
400 Gb/s or 128 x NDR200; Spectrum SN5000 "data interfaces": SN5600 64 x 800GbE = 128 x 400GbE;
Broadcom Tomahawk 5 launch: 64 x 800GbE, 128 x 400GbE, 256 x 200GbE); problem positions are
counted by hand in each test's YAML text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcalc.catalogue.models import Confidence
from ibcalc.errors import CatalogueError, UnknownNameError
from ibcalc.fabric import sizing
from ibcalc.fabric.switches import (
    BUILTIN_LABEL,
    SwitchModel,
    builtin_text,
    find_switch,
    load_switches,
    node_cages,
    switches,
)

ROOT = Path(__file__).resolve().parents[2]
GB = 10**9


def test_builtin_file_is_the_repository_file() -> None:
    """src/ibcalc/data/switches.yaml is a symlink to data/switches.yaml, as links.yaml is."""
    link = ROOT / "src" / "ibcalc" / "data" / "switches.yaml"
    assert link.is_symlink()
    assert link.resolve() == (ROOT / "data" / "switches.yaml").resolve()
    assert builtin_text() == (ROOT / "data" / "switches.yaml").read_text(encoding="utf-8")


def test_every_switch_is_sourced() -> None:
    catalogue = load_switches()
    assert catalogue.origin == BUILTIN_LABEL
    for switch in catalogue.switches.values():
        assert switch.sources
        assert all(s.startswith(("https://", "arXiv:", "NVIDIA ")) for s in switch.sources)
        assert isinstance(switch.confidence, Confidence)
        # rates are distinct, so a NIC rate picks one mode
        rates = [m.rate_gbps for m in switch.modes]
        assert len(rates) == len(set(rates))
    for cages in catalogue.node_cages.values():
        assert cages.sources


def test_vendor_port_counts() -> None:
    qm9700 = find_switch("qm9700")
    ndr = qm9700.mode_for(400 * GB / 8)
    assert (qm9700.cages, ndr.ports, qm9700.ports_per_cage(ndr)) == (32, 64, 2)
    assert qm9700.mode_for(200 * GB / 8).ports == 128
    # 64 x 800, 128 x 400, 256 x 200 and (a quarter of the capacity) 256 x 100 GbE
    assert [m.ports for m in find_switch("sn5600").modes] == [64, 128, 256, 256]
    assert find_switch("sn5600").ports_per_cage(find_switch("sn5600").modes[1]) == 2
    # an ASIC has no cages: transceivers are not counted
    th5 = find_switch("tomahawk5")
    assert th5.cages is None
    assert th5.ports_per_cage(th5.modes[0]) is None
    # DGX H100: four OSFP cages serve eight ConnectX-7 (RA-11333-001)
    assert (node_cages()["dgx-h100"].cages, node_cages()["dgx-h100"].nics) == (4, 8)


def test_aliases_and_suggestions() -> None:
    assert find_switch("TH5").id == "tomahawk5"
    assert find_switch(" Q3400-RA ").id == "q3400"
    assert find_switch("bcm78900").id == "tomahawk5"
    with pytest.raises(UnknownNameError) as info:
        find_switch("sn560")
    assert info.value.suggestions[0] == "sn5600"
    assert "did you mean sn5600" in str(info.value)


def test_sizing_keeps_its_names() -> None:
    """fabric.sizing still offers SWITCHES and NODE_CAGES (read from the data file)."""
    assert switches() == sizing.SWITCHES
    assert node_cages() == sizing.NODE_CAGES
    assert isinstance(sizing.SWITCHES["qm9700"], SwitchModel)
    with pytest.raises(AttributeError):
        _ = sizing.NOT_THERE


GOOD = """\
schema: ibcalc-switches/1
switches:
  - id: a
    name: A
    network: infiniband
    modes: [{ports: 64, rate_gbps: 400}]
    cages: 32
    sources: ["https://example.invalid/a"]
    confidence: high
"""


def test_a_switch_states_its_network() -> None:
    """Quantum switches are InfiniBand, Spectrum and Tomahawk Ethernet (their product lines);
    a file without ``network`` is refused at the switch's line."""
    nets = {s.id: s.network for s in switches().values()}
    assert {k for k, v in nets.items() if v == "infiniband"} == {
        "qm8700",
        "qm8790",
        "qm9700",
        "qm9790",
        "q3400",
    }
    assert {k for k, v in nets.items() if v == "ethernet"} == {
        "sn5600",
        "sn5400",
        "sn4600c",
        "tomahawk5",
        "tomahawk4",
    }
    with pytest.raises(CatalogueError) as info:
        load_switches("s.yaml", text=GOOD.replace("    network: infiniband\n", ""))
    assert "network" in str(info.value)
    qm9700 = find_switch("qm9700")
    assert qm9700.network_problem("infiniband", "ndr") is None
    assert qm9700.network_problem("wan", "wan-100g") == (
        "the NICs are wan-100g, a WAN link: the fat-tree sizing builds a site's scale-out "
        "fabric, not a WAN"
    )
    assert qm9700.network_problem("ethernet", "roce-400g") == (
        "switch qm9700 is an InfiniBand switch and the NICs are roce-400g (Ethernet); pick a "
        "switch of their network or give `radix:` for one not in the catalogue"
    )


def test_items_that_fail_are_not_also_too_few() -> None:
    """Pydantic counts only a tuple's items that passed, so a switch's two modes with a typo
    each had also been 'modes: needs at least 1 item', and its one switch 'switches: needs at
    least 1 item' (review CH); a list short of its minimum is still said to be."""
    text = GOOD.replace(
        "    modes: [{ports: 64, rate_gbps: 400}]\n",
        "    modes:\n      - {ports: 40, rate_gbps: 200, rate: 1}\n"
        "      - {port: 80, rate_gbps: 100}\n",
    )
    with pytest.raises(CatalogueError) as info:
        load_switches("s.yaml", text=text)
    assert [str(p) for p in info.value.problems] == [
        "s.yaml:7:37: switches[0].modes[0].rate: unknown key (did you mean rate_gbps?)",
        "s.yaml:8:10: switches[0].modes[1].port: unknown key (did you mean ports?)",
    ]
    with pytest.raises(CatalogueError) as info:
        load_switches("s.yaml", text=GOOD.replace("[{ports: 64, rate_gbps: 400}]", "[]"))
    assert [str(p) for p in info.value.problems] == [
        "s.yaml:6:5: switches[0].modes: needs at least 1 item"
    ]


def test_a_minimal_file_loads() -> None:
    catalogue = load_switches("s.yaml", text=GOOD)
    assert catalogue.find("A").modes[0].rate_Bps == 50 * GB
    assert catalogue.node_cages == {}


def test_problems_are_located() -> None:
    text = """\
schema: ibcalc-switches/1
switches:
  - id: a
    aliases: [b]
    name: A
    network: infiniband
    modes:
      - {ports: 64, rate_gbps: 400}
      - {ports: 128, rate_gbps: 400}
    cages: 32
    sources: ["https://example.invalid/a"]
    confidence: high
  - id: b
    name: B
    network: ethernet
    modes: [{ports: 64, rate_gbps: 400}]
    cages: null
    sources: []
    confidence: sure
    colour: red
"""
    with pytest.raises(CatalogueError) as info:
        load_switches("s.yaml", text=text)
    # schema problems first: sources (line 18), confidence (19), unknown key (20)
    problems = [(p.line, p.col, p.message) for p in info.value.problems]
    assert [(line, col) for line, col, _ in problems] == [(18, 5), (19, 5), (20, 5)]
    assert "sources" in problems[0][2]
    assert "confidence" in problems[1][2]
    assert "unknown key" in problems[2][2]
    fixed = text.replace("sources: []", 'sources: ["x"]').replace("sure", "low")
    fixed = fixed.replace("    colour: red\n", "")
    with pytest.raises(CatalogueError) as info:
        load_switches("s.yaml", text=fixed)
    # then the cross checks: a rate given twice (line 9, "      - {ports: 128, " is 21
    # characters), name 'b' taken by a's alias (line 13)
    problems = [(p.line, p.col, p.message) for p in info.value.problems]
    assert [(line, col) for line, col, _ in problems] == [(9, 22), (13, 5)]
    assert "two port modes at 400 Gb/s" in problems[0][2]
    assert "name 'b' is already used by 'a'" in problems[1][2]
