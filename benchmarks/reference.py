"""Read published nccl-tests measurements and infer, by written rules, the cluster each ran on.

The rules only read the CSV's own columns (gpu, nodes, gpus_per_node, intra_fabric, inter_fabric,
algo_proto, note), so the same code runs on any file with the columns of
``shared/reference/measurements.csv`` (``benchmarks/data/measurements.csv`` is a copy; each row
names its source). Every row gets a status:

* ``validated``: the configuration is stated by the source (or by a named instance type);
* ``inferred``: something was filled in by a rule below (said in ``reasons``);
* ``excluded``: no number to compare, configuration not stated or ambiguous, a run the source
  itself flags as unexplained/degraded, or a launch mode the model does not cover (CUDA graphs).

``nics_stated`` is False when the source does not give the NIC count (a preset picked from the
GPU name alone, e.g. "A100 -> dgx-a100", does not count as stating it). ``accuracy.py`` then
re-runs the prediction with half the NICs: if the result moves by more than 2 % the row depends
on the unknown and is reported but kept out of the bandwidth targets.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from ibcalc.models import Algorithm, Collective
from ibcalc.topology import ClusterSpec

__all__ = [
    "BANDWIDTH_MIN_BYTES",
    "DEFAULT_CSV",
    "EXTRA_CSV",
    "HOLDOUT_CSV",
    "LARGE_SIZE_BYTES",
    "LATENCY_MAX_BYTES",
    "Point",
    "load_points",
]

DEFAULT_CSV = Path(__file__).resolve().parent / "data" / "measurements.csv"
#: Rows extracted from shared/reference/nccl_logs (real logs not in measurements.csv).
EXTRA_CSV = Path(__file__).resolve().parent / "data" / "extra.csv"
#: Published rows never read by any fit (held out).
HOLDOUT_CSV = Path(__file__).resolve().parent / "data" / "holdout.csv"
#: Bandwidth regime: sizes of 64 MiB and more (issue 3).
BANDWIDTH_MIN_BYTES = 64 * 2**20
#: Latency regime: sizes of 64 KiB and less (issue 3).
LATENCY_MAX_BYTES = 64 * 2**10
#: Size used for statements such as "peak busbw" with no size: a large message.
LARGE_SIZE_BYTES = 8 * 2**30

_COLLECTIVES = {c.value: c for c in Collective}
#: Presets named by an instance type or an exact machine: they state the NIC count.
_INSTANCE_SYSTEMS = frozenset(
    {"aws-p4d", "aws-p4de", "aws-p5", "aws-p5en", "rtx2080ti-2", "h100-pcie-nvl-pair"}
)


@dataclass
class Point:
    """One measured row and what the model should be asked to reproduce it."""

    row: int
    source: str
    group: str
    collective: Collective
    size_bytes: float
    dtype: str
    nodes: int
    gpus_per_node: int
    spec: ClusterSpec | None
    algorithm: Algorithm | None
    busbw_GBps: float | None
    time_us: float | None
    status: str
    reasons: list[str] = field(default_factory=list)
    nics_stated: bool = True

    @property
    def regime(self) -> str | None:
        """``bandwidth``, ``latency`` or None (mid sizes are in neither target)."""
        if self.size_bytes >= BANDWIDTH_MIN_BYTES:
            return "bandwidth" if self.busbw_GBps is not None else None
        if self.size_bytes <= LATENCY_MAX_BYTES:
            return "latency" if self.time_us is not None else None
        return None


def _float(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _short_source(source: str) -> str:
    match = re.search(r"github\.com/([^/ ]+/[^@ /]+)", source)
    base = match.group(1) if match else source.split()[0]
    issue = re.search(r"(issue|PR) #?(\d+)", source)
    if issue:
        base += f"#{issue.group(2)}"
    if "aws-batch" in source:
        base += "/aws-batch"
    return base


def _intra(gpu: str, intra: str, reasons: list[str]) -> tuple[str | None, str | None]:
    """Return (system preset, intra link) from the GPU and intra-fabric text."""
    g, i = gpu.lower(), intra.lower()
    if "p5en" in g:
        return "aws-p5en", None
    if "p5." in g or "(p5" in g:
        return "aws-p5", None
    if "p4de" in g:
        return "aws-p4de", None
    if "p4d" in g:
        return "aws-p4d", None
    if "mi300x" in g:
        return "mi300x-8", None
    if "p2p not supported" in i or ("rtx" in g and "pcie" in i):
        return "rtx2080ti-2", None
    if "h100 pcie" in g and "bridge" in i:
        return "h100-pcie-nvl-pair", None
    if "h800" in g:
        return None, "nvlink4-h800"
    if any(k in g for k in ("h100", "h200", "gh200")):
        if "nvswitch" in i:
            return "dgx-h100", None
        reasons.append("H100 node without NVSwitch: NVLink 4 modelled as a full mesh")
        return None, "nvlink4-mesh4"
    if "a100" in g:
        return "dgx-a100", None
    if "b200" in g or "b300" in g:
        return "dgx-b200", None
    return None, None


def _inter(
    text: str, gpu: str, gpn: int, reasons: list[str]
) -> tuple[str | None, int | None, bool]:
    """Return (link id, NICs per node or None when not stated, SHARP) from the inter text."""
    t = text.lower()
    sharp = "sharp" in t
    if not t or t.startswith("none") or "intra-node" in t:
        return None, None, False
    count: int | None = None
    for pattern in (
        r"(\d+)\s*x\s*\d+\s*g",  # 8x200G, 4x100G
        r"(\d+)\s*efa interfaces",
        r"(\d+)x ib",
        r"(\d+)\s*x\s*(?:ib|hca)",
    ):
        match = re.search(pattern, t)
        if match:
            count = int(match.group(1))
            break
    if "efa v2" in t or "efa-v2" in t:
        if count is None and "3200" in t:
            count = 32
        return "efa-v2", count, sharp
    if "efa" in t:
        return "efa-100g", count, sharp
    if "tcpx" in t:
        return "gcp-tcpxo", count, sharp
    if "slingshot" in t:
        return "slingshot-11", count, sharp
    if "roce" in t:
        speed = re.search(r"(100|200|400|800)\s*g", t)
        return f"roce-{speed.group(1) if speed else '400'}g", count, sharp
    if "infiniband" in t or " ib" in f" {t}" or "hca" in t:
        for gen, link in (
            ("xdr", "xdr"),
            ("ndr", "ndr"),
            ("400g", "ndr"),
            ("hdr", "hdr"),
            ("200g", "hdr"),
            ("edr", "edr"),
        ):
            if gen in t:
                return link, count, sharp
        link = "ndr" if "h100" in gpu.lower() else "hdr"
        reasons.append(f"IB generation not stated: {link} assumed from the GPU generation")
        return link, count, sharp
    reasons.append(f"unknown scale-out fabric {text!r}")
    return None, count, sharp


def _algorithm(algo: str, reasons: list[str]) -> tuple[Algorithm | None, bool | None, str | None]:
    """Return (forced algorithm, NVLS allowed, exclusion reason) from the algo_proto text."""
    a = algo.lower()
    if "graph" in a or "-g 10" in a:
        return None, None, "CUDA-graph launches (-G) are not modelled"
    if "nvls disabled" in a or "nvls off" in a or "non-nvls" in a:
        return None, False, None
    if "nccl_algo=ring" in a or a.startswith("ring"):
        return Algorithm.RING, None, None
    if "nccl_algo=nvls" in a:
        return Algorithm.NVLS, True, None
    if "collnetchain" in a:
        return Algorithm.COLLNET_CHAIN, None, None
    if "nccl_algo" in a:
        reasons.append(f"unrecognised forced algorithm {algo!r}; auto used")
    return None, None, None


_EXCLUDE_NOTES = (
    ("ambiguous", "the source says the configuration is ambiguous"),
    ("config and size not given", "configuration and size not stated"),
    ("range only", "the source gives a range, not a number"),
)


def _point(index: int, row: dict[str, str]) -> Point:
    reasons: list[str] = []
    status = "validated"
    excluded: list[str] = []
    collective = _COLLECTIVES.get(row["collective"].strip())
    if collective is None:
        excluded.append(f"collective {row['collective']!r} is not modelled")
        collective = Collective.ALL_REDUCE
    busbw = _float(row["busbw_GBps"])
    time_us = _float(row["time_us"])
    if busbw is None and time_us is None:
        excluded.append("no measured number")
    size = _float(row["size_bytes"])
    if size is None:
        note = row["note"].lower()
        size = 4 * 2**30 if "2g-4g" in note else LARGE_SIZE_BYTES
        reasons.append(f"size not given: {size / 2**30:g} GiB assumed (a 'large/peak' statement)")
        status = "inferred"
    gpn = int(_float(row["gpus_per_node"]) or 0)
    nodes_value = _float(row["nodes"])
    inter_text = row["inter_fabric"].strip()
    single = not inter_text or inter_text.lower().startswith("none") or "intra-node" in inter_text
    if nodes_value is None:
        if single:
            nodes_value = 1
        elif "ring" in row["algo_proto"].lower():
            nodes_value = 8
            reasons.append(
                "node count not stated: 8 nodes assumed (ring busbw barely depends on it)"
            )
            status = "inferred"
        else:
            excluded.append("node count not stated")
    if gpn == 0:
        excluded.append("GPUs per node not stated")
    for key, why in _EXCLUDE_NOTES:
        if key in row["note"].lower() or key in row["inter_fabric"].lower():
            excluded.append(why)
    # A bandwidth plateau the source itself calls unexplained says nothing about the hardware's
    # bandwidth; its small-message times are still usable.
    if "cause not explained" in row["note"].lower() and size >= BANDWIDTH_MIN_BYTES:
        excluded.append("the source flags the bandwidth plateau as unexplained (degraded run)")
    algorithm, nvls, skip = _algorithm(row["algo_proto"], reasons)
    if skip:
        excluded.append(skip)
    nodes = int(nodes_value or 1)
    system, intra = _intra(row["gpu"], row["intra_fabric"], reasons)
    if intra == "nvlink4-mesh4":
        intra, nvls = "nvlink4", False
    if system is None and intra is None and gpn > 1:
        excluded.append(f"scale-up fabric of {row['gpu']!r} not recognised")
    inter, nics, sharp = (None, None, False)
    nics_stated = True
    if nodes > 1:
        inter, nics, sharp = _inter(inter_text, row["gpu"], gpn, reasons)
        if inter is None:
            excluded.append("scale-out fabric not recognised")
        if nics is None and system not in _INSTANCE_SYSTEMS:
            nics_stated = False
            reasons.append("NICs per node not stated: one per GPU assumed")
            status = "inferred"
        if "derived" in row["note"].lower():
            status = "inferred"
            reasons.append("rank or node count derived by the CSV's author")
    if sharp or "sharp" in row["algo_proto"].lower():
        sharp = "no sharp" not in row["algo_proto"].lower()
    spec = None
    if not excluded:
        spec = ClusterSpec(
            nodes=nodes,
            gpus_per_node=gpn,
            nics_per_node=nics,
            intra=intra,
            inter=inter,
            system=system,
            sharp=sharp,
            nvls=nvls,
        )
    group = f"{_short_source(row['source'])} {collective.value} {nodes}x{gpn}"
    if algorithm is not None:
        group += f" {algorithm.value}"
    elif nvls is False:
        group += " no-nvls"
    if row["nccl_version"].strip() and row["nccl_version"].strip() != "not stated":
        version = row["nccl_version"].split()[0]
        if re.match(r"^\d+\.\d+", version):
            group += f" nccl{version}"
    return Point(
        row=index,
        source=row["source"],
        group=group,
        collective=collective,
        size_bytes=size,
        dtype="fp32",
        nodes=nodes,
        gpus_per_node=gpn,
        spec=spec,
        algorithm=algorithm,
        busbw_GBps=busbw,
        time_us=time_us,
        status="excluded" if excluded else status,
        reasons=excluded + reasons,
        nics_stated=nics_stated,
    )


def load_points(path: Path = DEFAULT_CSV, *, first_row: int = 2) -> list[Point]:
    """Every row of a measurements CSV as a :class:`Point`; row numbers count the header as 1
    (``first_row`` shifts them so that rows of several files stay distinct)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [_point(i + first_row, row) for i, row in enumerate(csv.DictReader(handle))]
