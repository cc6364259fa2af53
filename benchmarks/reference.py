"""Read published nccl-tests measurements and infer, by written rules, the cluster each ran on.

The rules only read the CSV's own columns (gpu, nodes, gpus_per_node, intra_fabric, inter_fabric,
algo_proto, note), so the same code runs on any file with the columns of
``benchmarks/data/measurements.csv`` (each row names its public source). Every row gets a status:

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
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ibcalc.cluster.resolve import ClusterSpec
from ibcalc.engine.types import Algorithm, Collective

__all__ = [
    "BANDWIDTH_MIN_BYTES",
    "DEFAULT_CSV",
    "LARGE_SIZE_BYTES",
    "LATENCY_MAX_BYTES",
    "Point",
    "load_points",
]

DEFAULT_CSV = Path(__file__).resolve().parent / "data" / "measurements.csv"
#: Bandwidth regime: sizes of 64 MiB and more (docs/model.md#accuracy).
BANDWIDTH_MIN_BYTES = 64 * 2**20
#: Latency regime: sizes of 64 KiB and less (docs/model.md#accuracy).
LATENCY_MAX_BYTES = 64 * 2**10
#: Size used for statements such as "peak busbw" with no size: a large message.
LARGE_SIZE_BYTES = 8 * 2**30

_COLLECTIVES = {c.value: c for c in Collective}


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
    nccl_version: str | None = None

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
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _short_source(source: str) -> str:
    match = re.search(r"github\.com/([^/ ]+/[^@ /]+)", source)
    base = match.group(1) if match else (source.split() or ["(no source)"])[0]
    issue = re.search(r"(issue|PR) #?(\d+)", source)
    if issue:
        base += f"#{issue.group(2)}"
    if "aws-batch" in source:
        base += "/aws-batch"
    return base


#: Instance types and named machines, matched anywhere in the GPU, fabric or source text.
_NAMED_SYSTEMS = (
    (("p5en",), "aws-p5en"),
    (("p5e.",), "aws-p5e"),
    (("p5.48xlarge", "(p5", " p5 "), "aws-p5"),
    (("p4de",), "aws-p4de"),
    (("p4d",), "aws-p4d"),
    (("a3 mega", "a3-mega", "megagpu"), "gcp-a3-mega"),
    (("a3 high", "a3-high", "highgpu"), "gcp-a3-high"),
    (("nd h100 v5", "ndv5", "nd96isr_h100", "nd-h100-v5"), "azure-nd-h100-v5"),
    (("nd a100 v4", "ndm a100", "ndv4", "nd96asr", "nd96amsr"), "azure-nd-a100-v4"),
    (("bm.gpu.h100",), "oci-bm-gpu-h100"),
    (("gb200", "nvl72"), "gb200-nvl72"),
    (("dgx-1", "dgx1"), "dgx-1v"),
)
#: Presets picked from the GPU generation alone (they do not state the node's NICs).
_GENERIC = (
    (("h800",), None, "nvlink4-h800"),
    (("h100", "h200", "h20 "), "dgx-h100", None),
    (("b200", "b300"), "dgx-b200", None),
    (("a100", "a800"), "dgx-a100", None),
    (("v100",), "dgx-1v", None),
    (("mi300x",), "mi300x-8", None),
    (("mi325x",), "mi325x-8", None),
)


def _intra(row: dict[str, str], reasons: list[str]) -> tuple[str | None, str | None, bool]:
    """Return (system preset, intra link, named) from the row's GPU, fabric and source text.

    ``named`` is True when an instance type or machine was recognised (its NIC count is known).
    """
    g, i = row["gpu"].lower(), row["intra_fabric"].lower()
    everything = " ".join(row[k].lower() for k in ("gpu", "intra_fabric", "inter_fabric", "source"))
    for keys, system in _NAMED_SYSTEMS:
        if any(k in everything for k in keys):
            return system, None, True
    if "p2p not supported" in i or ("rtx" in g and "pcie" in i and "nvlink" not in i):
        return "rtx2080ti-2", None, True
    if ("h100 pcie" in g or "h100 nvl" in g) and "bridge" in i:
        return "h100-pcie-nvl-pair", None, True
    for keys, system, link in _GENERIC:
        if not any(k in g for k in keys):
            continue
        hopper_or_later = system in ("dgx-h100", "dgx-b200")
        if hopper_or_later and "nvswitch" not in i and ("gh200" in g or "nvlink" in i):
            reasons.append("no NVSwitch stated: NVLink modelled as a direct mesh without NVLS")
            return None, "nvlink4-mesh4" if system == "dgx-h100" else "nvlink5", False
        if "pcie" in g and "nvlink" not in i:
            reasons.append("PCIe card without NVLink: PCIe Gen4 x16 between GPUs assumed")
            return None, "pcie4", False
        return system, link, False
    return None, None, False


_LINK_RATE_GBPS = {
    "efa-100g": 100,
    "efa-v2": 100,
    "efa-v3": 200,
    "gcp-tcpx": 200,
    "gcp-tcpxo": 200,
    "slingshot-11": 200,
    "roce-100g": 100,
    "roce-200g": 200,
    "roce-400g": 400,
    "roce-800g": 800,
    "edr": 100,
    "hdr": 200,
    "ndr": 400,
    "xdr": 800,
}


def _inter(
    text: str, gpu: str, gpn: int, reasons: list[str]
) -> tuple[str | None, int | None, bool]:
    """Return (link id, NICs per node or None when not stated, SHARP) from the inter text."""
    t = text.lower()
    sharp = "sharp" in t
    if not t or t.startswith("none") or "intra-node" in t:
        return None, None, False
    link: str | None = None
    if "efa v3" in t or "efav3" in t or "efa-v3" in t:
        link = "efa-v3"
    elif "efa v2" in t or "efa-v2" in t or "efav2" in t:
        link = "efa-v2"
    elif "efa" in t:
        link = "efa-100g"
    elif "tcpxo" in t:
        link = "gcp-tcpxo"
    elif "tcpx" in t:
        link = "gcp-tcpx"
    elif "slingshot" in t:
        link = "slingshot-11"
    elif "roce" in t or "ethernet" in t or "spectrum" in t:
        speed = re.search(r"(100|200|400|800)\s*g", t)
        link = f"roce-{speed.group(1) if speed else '400'}g"
    elif "infiniband" in t or " ib" in f" {t}" or "hca" in t or "connectx" in t:
        for gen, ib in (
            ("xdr", "xdr"),
            ("ndr", "ndr"),
            ("800g", "xdr"),
            ("400g", "ndr"),
            ("hdr", "hdr"),
            ("200g", "hdr"),
            ("edr", "edr"),
            ("100g", "edr"),
        ):
            if gen in t:
                link = ib
                break
        else:
            link = "ndr" if any(k in gpu.lower() for k in ("h100", "h200", "b200")) else "hdr"
            reasons.append(f"IB generation not stated: {link} assumed from the GPU generation")
    if link is None:
        reasons.append(f"unknown scale-out fabric {text!r}")
        return None, None, sharp
    count: int | None = None
    for pattern in (
        r"(\d+)\s*x\s*\d+\s*g",  # 8x200G, 4x100G
        r"(\d+)\s*x\s*(?:ndr|hdr|xdr|edr|cx-?\d|connectx|ib\b|hca|nic|efa)",
        r"(\d+)\s*(?:efa interfaces|efa devices|nics|hcas|network cards|rails)",
    ):
        match = re.search(pattern, t)
        if match:
            count = int(match.group(1))
            break
    if count is None:
        total = re.search(r"(\d+)\s*(?:gbps|gb/s|gbit/s)\s*(?:per|/)\s*(?:node|instance|host)", t)
        if total and link in _LINK_RATE_GBPS:
            count = max(1, round(int(total.group(1)) / _LINK_RATE_GBPS[link]))
    return link, count, sharp


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


_COLUMNS = (
    "source",
    "gpu",
    "nodes",
    "gpus_per_node",
    "intra_fabric",
    "inter_fabric",
    "collective",
    "dtype",
    "size_bytes",
    "algbw_GBps",
    "busbw_GBps",
    "time_us",
    "nccl_version",
    "algo_proto",
    "note",
)


def _point(index: int, raw: dict[str, str | None]) -> Point:
    # tolerate missing columns and empty cells: every rule reads plain strings
    row = {key: (raw.get(key) or "").strip() for key in _COLUMNS}
    reasons: list[str] = []
    status = "validated"
    excluded: list[str] = []
    collective = _COLLECTIVES.get(row["collective"].lower().replace("-", "_"))
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
    system, intra, named = _intra(row, reasons)
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
        if nics is None and not named:
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
    version: str | None = None
    if row["nccl_version"].strip() and row["nccl_version"].strip() != "not stated":
        version = row["nccl_version"].split()[0]
        if re.match(r"^\d+\.\d+", version):
            group += f" nccl{version}"
        else:
            version = None
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
        nccl_version=version,
        nics_stated=nics_stated,
    )


def load_points(path: Path = DEFAULT_CSV, *, first_row: int = 2) -> list[Point]:
    """Every row of a measurements CSV as a :class:`Point`; row numbers count the header as 1
    (``first_row`` shifts them so that rows of several files stay distinct)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [_point(i + first_row, row) for i, row in enumerate(csv.DictReader(handle))]
