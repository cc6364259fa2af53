"""Every published measurement the project has, as one list of samples to fit and to score.

Two kinds of input, both copied into the repository with their sources beside them:

* ``benchmarks/data/measurements.csv``: single rows quoted from public nccl-tests results, read by
  :mod:`reference` (written rules infer the cluster of each row);
* ``benchmarks/data/sweeps/``: complete published sweeps (``SOURCES.md``), parsed with
  :mod:`ibcalc.logs`, their clusters described in ``manifest.yaml`` with the provenance of every
  field.

Each :class:`Sample` carries its **source group** (one repository, issue thread or cluster):
leave-one-source-out cross-validation holds out a whole group at once, so no constant fitted to a
group ever scores that group. ``fit`` says whether a sample may be read by a fit at all: a sweep's
manifest ``use`` decides; every CSV row may be (the efficiency fits still skip rows whose NIC
count the source does not state, ``Sample.nics_stated``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Algorithm, Collective, DType
from ibcalc.logs import parse_file
from reference import DEFAULT_CSV, Point, load_points

__all__ = [
    "BANDWIDTH_MIN_BYTES",
    "LATENCY_MAX_BYTES",
    "SWEEPS",
    "Sample",
    "load_samples",
    "regime_of",
]

SWEEPS = Path(__file__).resolve().parent / "data" / "sweeps"
#: Latency regime: sizes of 64 KiB and less, scored on time.
LATENCY_MAX_BYTES = 64 * 2**10
#: Bandwidth regime: sizes of 64 MiB and more, scored on busbw.
BANDWIDTH_MIN_BYTES = 64 * 2**20


def regime_of(size_bytes: float) -> str:
    """``latency`` (<= 64 KiB), ``bandwidth`` (>= 64 MiB) or ``mid``."""
    if size_bytes <= LATENCY_MAX_BYTES:
        return "latency"
    if size_bytes >= BANDWIDTH_MIN_BYTES:
        return "bandwidth"
    return "mid"


@dataclass(frozen=True)
class Sample:
    """One measured (collective, size) on one cluster, and how it may be used."""

    key: str  # unique: file or CSV row
    group: str  # source group for leave-one-source-out
    label: str  # reporting group (source, collective, shape)
    spec: ClusterSpec
    collective: Collective
    size_bytes: float
    dtype: DType
    time_us: float | None
    busbw_GBps: float | None
    fit: bool  # may a fit read it
    algorithm: Algorithm | None = None
    gpus_per_process: int = 1
    nics_stated: bool = True
    regimes: tuple[str, ...] = ("latency", "mid", "bandwidth")
    notes: tuple[str, ...] = field(default_factory=tuple)
    nccl_version: str | None = None  # as the source states it (None: not stated)
    library: str | None = None  # "nccl" or "rccl" when the source states it

    @property
    def regime(self) -> str:
        """The size regime of this sample."""
        return regime_of(self.size_bytes)

    @property
    def scored(self) -> bool:
        """True when the sample's regime is one its source can be scored in."""
        if self.regime not in self.regimes:
            return False
        if self.regime == "bandwidth":
            return self.busbw_GBps is not None and self.busbw_GBps > 0
        return self.time_us is not None and self.time_us > 0


def _csv_group(point: Point) -> str:
    # reference.Point.group is "<source> <collective> <shape>"; the source is its first word
    return point.group.split(" ")[0]


def _from_csv(path: Path, *, fit: bool) -> list[Sample]:
    out = []
    for p in load_points(path):
        if p.spec is None or p.status == "excluded":
            continue
        try:
            dtype = DType.parse(p.dtype)
        except ValueError:
            continue
        out.append(
            Sample(
                key=f"{path.name}:{p.row}",
                group=_csv_group(p),
                label=p.group,
                spec=p.spec,
                collective=p.collective,
                size_bytes=p.size_bytes,
                dtype=dtype,
                time_us=p.time_us,
                busbw_GBps=p.busbw_GBps,
                fit=fit,
                algorithm=p.algorithm,
                nics_stated=p.nics_stated,
                notes=tuple(p.reasons),
                nccl_version=p.nccl_version,
            )
        )
    return out


_SPEC_FIELDS = (
    "system",
    "intra",
    "inter",
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "sharp",
    "nvls",
)


def _from_manifest() -> list[Sample]:
    manifest = yaml.safe_load((SWEEPS / "manifest.yaml").read_text(encoding="utf-8"))
    out = []
    for entry in manifest["files"]:
        if entry["use"] == "exclude":
            continue
        cluster = entry["cluster"]
        kwargs = {}
        for name in _SPEC_FIELDS:
            value = cluster.get(name, {}).get("value")
            if value is not None:
                kwargs[name] = value
        nics = cluster.get("nics_per_node", {})
        nics_stated = nics.get("provenance") == "stated" or nics.get("value") is None
        gpp = cluster.get("gpus_per_process", {}).get("value") or 1
        spec = ClusterSpec(**kwargs, gpus_per_process=gpp)
        collective = Collective(entry["collective"])
        parsed = parse_file(SWEEPS / entry["file"])
        runs = [r for r in parsed.runs if r.rows]
        label = f"{entry['source_group']} {collective.value} {spec.nodes}x{spec.gpus_per_node}"
        for run in runs:
            kept = 0.0
            for row in run.rows:
                if row.size_bytes <= 0:
                    continue
                if run.step_bytes and row.size_bytes < 2 * kept:
                    # a linear-step sweep (one file has 103 rows 10 MiB apart) would outweigh
                    # every other source: keep rows about a factor of 2 apart, as -f 2 sweeps
                    continue
                kept = float(row.size_bytes)
                out.append(
                    Sample(
                        key=f"{entry['file']}:{row.line}",
                        group=entry["source_group"],
                        label=label,
                        spec=spec,
                        collective=collective,
                        size_bytes=float(row.size_bytes),
                        dtype=DType.parse(entry.get("dtype") or "fp32"),
                        time_us=row.oop.time_us,
                        busbw_GBps=row.oop.busbw_GBps,
                        fit=entry["use"] == "fit_and_test",
                        gpus_per_process=int(gpp),
                        nics_stated=nics_stated,
                        regimes=tuple(entry.get("regimes") or ()),
                        nccl_version=entry.get("nccl_version"),
                        library=entry.get("library"),
                    )
                )
    return out


@cache
def load_samples() -> tuple[Sample, ...]:
    """Every sample: the CSV rows and the published sweeps."""
    samples = [*_from_csv(DEFAULT_CSV, fit=True), *_from_manifest()]
    return tuple(samples)


if __name__ == "__main__":
    from collections import Counter

    samples = load_samples()
    print(f"{len(samples)} samples, {sum(s.fit for s in samples)} fit-eligible")
    by = Counter((s.group, s.regime) for s in samples if s.scored)
    for (group, regime), n in sorted(by.items()):
        print(f"  {group:45s} {regime:10s} {n}")
