"""Shared fixtures: the built-in catalogue, sourced facts about links, helpers for fixture files.

Every number here comes from /work/shared/reference/link_specs.md (section cited per entry) or from
a formula worked out in the comment next to it; none is copied from the program's output.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ibcalc.catalogue.cost_params import ENV_VAR as COST_PARAMS_ENV_VAR
from ibcalc.catalogue.load import ENV_VAR, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import main

DATA_DIR = Path(__file__).parent / "data"

GB = 10**9  # GB/s = 10^9 bytes per second (link_specs.md section 0)
BITS = 8  # 1 GB/s = 8 Gb/s (link_specs.md section 0)

#: Link ids the catalogue must carry (issue brief).
REQUIRED_LINK_IDS = (
    "nvlink1",
    "nvlink2",
    "nvlink3",
    "nvlink4",
    "nvlink5",
    "pcie3",
    "pcie4",
    "pcie5",
    "pcie6",
    "edr",
    "hdr",
    "ndr",
    "xdr",
    "roce-100g",
    "roce-200g",
    "roce-400g",
    "roce-800g",
    "efa-100g",
    "efa-v2",
    "slingshot-11",
    "xgmi-mi300x",
    "tpu-v5p-ici",
    "ualink-200g",
    "wan-10g",
    "wan-100g",
)

#: System presets the catalogue must carry (issue brief).
REQUIRED_SYSTEM_IDS = (
    "dgx-a100",
    "dgx-h100",
    "hgx-h200",
    "dgx-b200",
    "gb200-nvl72",
    "aws-p4d",
    "aws-p5",
    "azure-nd-h100-v5",
    "mi300x-8",
    "pcie-8gpu",
)


def _gbit(gbps: float) -> float:
    """Bytes per second of a rate given in Gb/s."""
    return gbps * GB / BITS


def _pcie_x16(gt_per_s: float, efficiency: float) -> float:
    """Bytes per second of a PCIe x16 link: GT/s x 16 lanes x encoding efficiency / 8 bits."""
    return gt_per_s * GB * 16 * efficiency / BITS


#: Per-direction data rate in bytes/s, each worked from a published figure.
PER_DIRECTION_BPS: dict[str, float] = {
    # link_specs.md 1.1: NVLink 1.0, 4 links x 20 GB/s per direction = 80 GB/s per GPU
    "nvlink1": 4 * 20 * GB,
    # link_specs.md 1.1: NVLink 2.0, 6 links x 25 GB/s = 150 GB/s per GPU
    "nvlink2": 6 * 25 * GB,
    # link_specs.md 1.1: NVLink 3.0, 12 links x 25 GB/s = 300 GB/s per GPU
    "nvlink3": 12 * 25 * GB,
    # link_specs.md 1.1: NVLink 4.0, 18 links x 25 GB/s = 450 GB/s per GPU ("900 GB/s" is bidir)
    "nvlink4": 18 * 25 * GB,
    # link_specs.md 1.1: NVLink 5.0, 18 links x 50 GB/s = 900 GB/s per GPU ("1.8 TB/s" is bidir)
    "nvlink5": 18 * 50 * GB,
    # link_specs.md 3: 8 GT/s x 16 lanes, 128b/130b -> 15.75 GB/s
    "pcie3": _pcie_x16(8, 128 / 130),
    # link_specs.md 3: 16 GT/s x 16 lanes, 128b/130b -> 31.5 GB/s
    "pcie4": _pcie_x16(16, 128 / 130),
    # link_specs.md 3: 32 GT/s x 16 lanes, 128b/130b -> 63.0 GB/s
    "pcie5": _pcie_x16(32, 128 / 130),
    # link_specs.md 3: 64 GT/s PAM4 x 16 lanes, FLIT 242/256 -> 121 GB/s
    "pcie6": _pcie_x16(64, 242 / 256),
    # link_specs.md 4.1: InfiniBand 4x ports, Gb/s data rate / 8
    "edr": _gbit(100),
    "hdr": _gbit(200),
    "ndr": _gbit(400),
    "xdr": _gbit(800),
    # link_specs.md 5.1: "per-direction = N/8 GB/s" for N GbE
    "roce-100g": _gbit(100),
    "roce-200g": _gbit(200),
    "roce-400g": _gbit(400),
    "roce-800g": _gbit(800),
    # link_specs.md 5.5: p4d has 4 x 100 Gb/s EFA v1, p5 has 32 x 100 Gb/s EFA v2; one interface
    # per entry
    "efa-100g": _gbit(100),
    "efa-v2": _gbit(100),
    # HPE Slingshot 11: the Cassini NIC is sold as the "HPE Slingshot 200Gb NIC" (200 Gb/s per port)
    "slingshot-11": _gbit(200),
    # link_specs.md 6: MI300X, 7 xGMI links x 64 GB/s per peer = 448 GB/s ("896" is bidir)
    "xgmi-mi300x": 7 * 64 * GB,
    # link_specs.md 6 and 8.12: TPU v5p 1,200 GB/s bidirectional per chip = 600 GB/s per direction
    "tpu-v5p-ici": 1200 * GB / 2,
    # link_specs.md 6: UALink 200G x4 port = 800 Gb/s = 100 GB/s per direction
    "ualink-200g": _gbit(800),
    # link_specs.md 7.2: nominal WAN tiers, named by their Gb/s rate
    "wan-10g": _gbit(10),
    "wan-100g": _gbit(100),
}

#: Relative tolerance for facts derived with rounded encoding ratios (63.0 vs 63.015 GB/s is 0.02%).
FACT_REL = 1e-3


@pytest.fixture(autouse=True)
def _no_user_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a developer's IBCALC_CATALOGUE and IBCALC_COST_PARAMS from leaking into any test."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv(COST_PARAMS_ENV_VAR, raising=False)


@pytest.fixture(scope="session")
def builtin_catalogue() -> Catalogue:
    """The built-in catalogue alone (no user files, no environment)."""
    return load_catalogue(use_env=False)


@pytest.fixture
def data_dir() -> Path:
    """Directory of fixture files (tests/data)."""
    return DATA_DIR


def position_of(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based (line, col) of the ``occurrence``-th line of ``text`` containing ``needle``."""
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number, line.index(needle) + 1
    raise AssertionError(f"{needle!r} (occurrence {occurrence}) not in the text")


def main_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``ibcalc ARGS`` through the console entry point, which must refuse them: exit 2,
    nothing on stdout, stderr starting with ``error:``. Returns stderr (one line per problem)."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ")
    return err


@pytest.fixture
def locate() -> Callable[..., tuple[int, int]]:
    """The :func:`position_of` helper, as a fixture."""
    return position_of


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-golden`` rewrites tests/golden/*.txt from the current output."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files of tests/golden/test_golden.py from the current output",
    )
