"""Shared fixtures: the built-in catalogue, sourced facts about links, helpers for fixture files.

Every number here comes from the vendor or standards source cited next to each entry (conventions
in docs/catalogue.md) or from a formula worked out in the comment next to it; none is copied from
the program's output.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pytest

from ibcalc.catalogue.cost_params import ENV_VAR as COST_PARAMS_ENV_VAR
from ibcalc.catalogue.load import ENV_VAR, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import main
from ibcalc.engine.base import Topology
from ibcalc.engine.types import ScaleOutTier, ScaleUpTier

DATA_DIR = Path(__file__).parent / "data"

# Output goes to a pipe in every test, which ibcalc gives a 160-column page unless $COLUMNS says
# otherwise. pytest-xdist's workers inherit COLUMNS=80/LINES=24 from execnet, and a developer's
# shell may export its own: tests that want a width set it themselves (monkeypatch or env=).
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

GB = 10**9  # GB/s = 10^9 bytes per second (docs/catalogue.md#units-and-conventions)
BITS = 8  # 1 GB/s = 8 Gb/s (docs/catalogue.md#units-and-conventions)

#: Link ids the catalogue must carry.
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

#: System presets the catalogue must carry.
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


#: Round-number tiers the hand-worked engine tests use: 100 GB/s per GPU inside a node, 10 GB/s
#: per NIC between nodes.
B_UP = 100e9
B_NIC = 10e9


def round_topology(
    nodes: int,
    gpus: int,
    nics: int = 8,
    *,
    nvls: float | None = None,
    sharp: bool = False,
    transport_latency_s: float = 0.0,
    path: Literal["nvlink", "pci"] = "nvlink",
    gpu_arch: str = "",
    simple_floor: float | None = None,
) -> Topology:
    """A cluster on :data:`B_UP` and :data:`B_NIC` tiers, so a test's arithmetic is checkable."""
    up = None
    if gpus > 1:
        up = ScaleUpTier(
            link_id="up", gpus=gpus, line_Bps=B_UP, bw_Bps=B_UP, nvls_bw_Bps=nvls, path=path
        )
    out = None
    if nodes > 1:
        out = ScaleOutTier(
            link_id="net",
            domains=nodes,
            nics_per_domain=nics,
            nic_line_Bps=B_NIC,
            nic_bw_Bps=B_NIC,
            sharp=sharp,
            transport_latency_s=transport_latency_s,
            simple_floor=simple_floor,
        )
    return Topology(
        ranks_per_domain=gpus, domains=nodes, up=up, out=out, arch="hopper", gpu_arch=gpu_arch
    )


def _gbit(gbps: float) -> float:
    """Bytes per second of a rate given in Gb/s."""
    return gbps * GB / BITS


def _pcie_x16(gt_per_s: float, efficiency: float) -> float:
    """Bytes per second of a PCIe x16 link: GT/s x 16 lanes x encoding efficiency / 8 bits."""
    return gt_per_s * GB * 16 * efficiency / BITS


#: Per-direction data rate in bytes/s, each worked from a published figure.
PER_DIRECTION_BPS: dict[str, float] = {
    # NVLink 1.0 (P100; Microway, "NVIDIA Tesla P100 NVLink 16GB GPU Accelerator"):
    # 4 links x 20 GB/s per direction = 80 GB/s per GPU
    "nvlink1": 4 * 20 * GB,
    # NVLink 2.0 (V100; NVIDIA NVLink page, 2017): 6 links x 25 GB/s = 150 GB/s per GPU
    "nvlink2": 6 * 25 * GB,
    # NVLink 3.0 (A100; NVIDIA NVLink page): 12 links x 25 GB/s = 300 GB/s per GPU
    "nvlink3": 12 * 25 * GB,
    # NVLink 4.0 (H100; NVIDIA Hopper architecture page, "900 GB/s" bidirectional):
    # 18 links x 25 GB/s = 450 GB/s per GPU per direction
    "nvlink4": 18 * 25 * GB,
    # NVLink 5.0 (B200; NVIDIA NVLink page, "1.8 TB/s" bidirectional):
    # 18 links x 50 GB/s = 900 GB/s per GPU per direction
    "nvlink5": 18 * 50 * GB,
    # PCI-SIG base specifications (PCIe 3.0-6.0): 8 GT/s x 16 lanes, 128b/130b -> 15.75 GB/s
    "pcie3": _pcie_x16(8, 128 / 130),
    # PCIe 4.0: 16 GT/s x 16 lanes, 128b/130b -> 31.5 GB/s
    "pcie4": _pcie_x16(16, 128 / 130),
    # PCIe 5.0: 32 GT/s x 16 lanes, 128b/130b -> 63.0 GB/s
    "pcie5": _pcie_x16(32, 128 / 130),
    # PCIe 6.0: 64 GT/s PAM4 x 16 lanes, FLIT 242/256 -> 121 GB/s
    "pcie6": _pcie_x16(64, 242 / 256),
    # InfiniBand 4x ports (IBTA data rates, as in the Linux kernel's IB speed table), Gb/s / 8
    "edr": _gbit(100),
    "hdr": _gbit(200),
    "ndr": _gbit(400),
    "xdr": _gbit(800),
    # N GbE carries N Gb/s = N/8 GB/s per direction (IEEE 802.3;
    # docs/catalogue.md#units-and-conventions)
    "roce-100g": _gbit(100),
    "roce-200g": _gbit(200),
    "roce-400g": _gbit(400),
    "roce-800g": _gbit(800),
    # AWS EC2 instance network bandwidth page: p4d has 4 x 100 Gb/s EFA v1, p5 32 x 100 Gb/s
    # EFA v2; one interface per entry
    "efa-100g": _gbit(100),
    "efa-v2": _gbit(100),
    # HPE Slingshot 11: the Cassini NIC is sold as the "HPE Slingshot 200Gb NIC" (200 Gb/s per port)
    "slingshot-11": _gbit(200),
    # AMD MI300X (as quoted in github.com/stas00/ml-engineering network/README.md): 7 xGMI links x
    # 64 GB/s per peer = 448 GB/s ("896" is bidir)
    "xgmi-mi300x": 7 * 64 * GB,
    # Google Cloud TPU v5p page: 1,200 GB/s bidirectional ICI per chip = 600 GB/s per direction
    "tpu-v5p-ici": 1200 * GB / 2,
    # UALink 200G 1.0 specification (UALink consortium): x4 port = 800 Gb/s = 100 GB/s per direction
    "ualink-200g": _gbit(800),
    # nominal WAN tiers, named by their Gb/s rate (an assumption, not a product)
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


def pair_sendrecv_s(catalogue: Catalogue, intra: str, size_bytes: float) -> float:
    """nccl-tests sendrecv of ``size_bytes`` (bf16) between 2 GPUs on one ``intra`` link: what a
    workload's stage boundary inside one scale-up domain must cost."""
    from ibcalc.cluster.spec import ClusterSpec
    from ibcalc.engine.types import Collective
    from ibcalc.facade import estimate

    spec = ClusterSpec(nodes=1, gpus_per_node=2, intra=intra)
    return estimate(catalogue, spec, Collective.SEND_RECV, size_bytes, dtype="bf16").time_s


def ndr_sendrecv_by_hand_s(size_bytes: float) -> float:
    """nccl-tests sendrecv of ``size_bytes`` between GPUs of two DGX H100s over NDR, worked by
    hand (seconds): the ring/Simple base 8.4 us and one NET hop of 14 us (data/cost_params.yaml
    base_latency, hop_latency), then S through the GPU's own NIC at 400 Gb/s = 50 GB/s x 0.975
    (data/links.yaml ndr)."""
    return (8.4 + 14.0) * 1e-6 + size_bytes / (50 * GB * 0.975)


def tp_whatif_by_hand_s(size_bytes: float, tp: int) -> tuple[float, float]:
    """The gap command's TP what-if worked by hand: an all-reduce of ``size_bytes`` over ``tp``
    H100s inside one nvlink4 node, and over ``tp`` one-GPU nodes of one NDR NIC each (seconds,
    inside and across). Constants: data/links.yaml (nvlink4 450 GB/s, nvls_efficiency 0.686; ndr
    400 Gb/s = 50 GB/s, efficiency 0.975) and data/cost_params.yaml (NCCL 2.30.7's tuner rows)."""
    us = 1e-6
    # inside: NVLS moves S (m+1)/m per GPU at 450 GB/s x 0.686, after one NVLink NVLS hop of
    # 25 us (hop_latency nvlink nvls Simple; NVLS base latency 0) (docs/model.md, NVLS)
    inside = 25.0 * us + size_bytes * (tp + 1) / tp / (450 * GB * 0.686)
    # across: a ring/Simple over n = tp ranks moves 2 (n-1)/n x S per rank at 50 GB/s x 0.975;
    # its latency is the Simple ring base 8.4 us + 2 (n-1) network steps of 14 us (the NET Tree
    # row, one GPU per node), x 1.4 (ring_plateau_factor), + 2 channels x 0.6 us of proxy
    # start-up (calibrated proxy_op_latency: one NIC per node runs 2 channels)
    n = tp
    latency = (8.4 + 2 * (n - 1) * 14.0) * 1.4 * us + 2 * 0.6 * us
    across = latency + 2 * (n - 1) / n * size_bytes / (50 * GB * 0.975)
    return inside, across


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


def check_left_out_below(page: Callable[[int], tuple[list[str], str]], full: int) -> None:
    """A table's footnote that names ``full`` columns as the width from which every column
    shows holds: at ``full`` nothing is left out and every line fits, and one column narrower
    the footnote says so. ``page(columns)`` gives the output's lines and its text on one line."""
    lines, flat = page(full)
    assert "left out at" not in flat
    assert max(len(line) for line in lines) <= full
    _, flat = page(full - 1)
    assert f"left out at {full - 1} columns ({full} or more show" in flat


def check_shown_in_order(
    shown: list[str],
    printed: list[str],
    where: str,
    *,
    is_cut: Callable[[str], bool] = lambda line: line.strip() == "...",
    to_end: bool = True,
) -> None:
    """A page's copy of some output holds: each line ``shown`` is one of the lines ``printed``,
    in order; a printed line left out between two shown ones is blank unless a line ``is_cut``
    (a ``...``) marks the cut; with ``to_end`` the same holds after the last shown line."""
    position = 0
    cut = False
    for line in shown:
        if is_cut(line):
            cut = True
            continue
        start = position
        while position < len(printed) and printed[position] != line:
            position += 1
        assert position < len(printed), f"{where}: not printed (in this order): {line!r}"
        left_out = [x for x in printed[start:position] if x.strip()]
        assert cut or not left_out, f"{where}: {left_out[0]!r} left out, no ..."
        cut = False
        position += 1
    left_out = [x for x in printed[position:] if x.strip()]
    assert not to_end or cut or not left_out or not shown, (
        f"{where}: ends before {left_out[0]!r}, no ..."
    )


def check_refusals(refusals: list[tuple[Callable[[], object], type[Exception], str]]) -> None:
    """Each call raises its exception with that very message (a library call given a wrong
    argument)."""
    for call, kind, message in refusals:
        with pytest.raises(kind) as info:
            call()
        assert str(info.value) == message
