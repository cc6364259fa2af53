"""Save and restore time of a checkpoint (docs/workload.md, "Checkpoints").

Bytes: ``P x bytes(weights)``, plus ``12 x P`` with the optimizer state of mixed-precision Adam
(fp32 master weights, momentum and variance, 4 + 4 + 4 bytes per parameter: Rajbhandari et al.,
SC'20, arXiv:1910.02054, section 3.1); ``8 x P`` when the weights are fp32 themselves, which
need no master copy. fp8 weights with Adam are 1 + 12 = 13 bytes per parameter, as bf16's are
2 + 12 = 14: the weights as saved beside the fp32 master copy they are cast from. The save is
fully sharded and deduplicated: every node writes ``1 / nodes`` of it (as
torch.distributed.checkpoint's planner does). A restore reads the optimizer state once and the
weights once per data-parallel replica (``replicas``), each rank reading what it holds.

The time is the largest of its bounds, plus one storage latency:

* client NICs: ``bytes / (nodes x min(storage NICs x NIC rate, the storage's per-client cap))``
  (named ``per-client cap`` where the storage's cap is the smaller);
* storage: ``bytes / (units x the unit's aggregate rate)`` (read or write);
* fabric: ``bytes / fabric bandwidth`` between clients and storage, when given;
* requests (object stores): ``parts / (prefixes x requests per second)``, where every rank's
  share is cut into parts of ``part_size``;
* one request (object stores): ``part / per-request rate``, the time of the largest part at
  what one request moves (S3: about 85 MB/s), every part in flight at once (as many
  connections as parts: the most favourable case; fewer take longer).

The result names the bound that sets the time.
"""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.catalogue.load import find_link, link_role_refusal
from ibcalc.catalogue.models import Catalogue, Storage, StorageKind
from ibcalc.cluster.resolve import ResolvedCluster, inter_assumed_note, nics_of
from ibcalc.cluster.spec import MAX_NICS_PER_NODE
from ibcalc.engine.types import DType
from ibcalc.errors import WorkloadError, expect_type
from ibcalc.units import format_bandwidth, format_size, format_time
from ibcalc.workload.memory import ADAM_STATE_BYTES_PER_PARAM, FP32_MASTER_BYTES_PER_PARAM
from ibcalc.workload.model import CheckedSpec, ModelSpec, expect_job
from ibcalc.workload.phases import Phase

__all__ = [
    "ADAM_STATE_BYTES_PER_PARAM",
    "FP32_MASTER_BYTES_PER_PARAM",
    "UNREAD_FIELDS",
    "Bound",
    "CheckpointResult",
    "CheckpointSpec",
    "Transfer",
    "checkpoint",
]

#: Default object-store part size: AWS's guidelines name 8 MB or 16 MB as typical (S3 entry).
DEFAULT_PART_BYTES = 16e6

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class CheckpointSpec(CheckedSpec):
    """What is saved, where, and through which client NICs."""

    model_config = _FROZEN

    model: ModelSpec
    storage: str
    weights_dtype: DType = DType.BF16
    optimizer: bool = False
    storage_units: int = Field(default=1, ge=1, le=100_000)
    client_link: str | None = None
    client_nics: int = Field(default=1, ge=1, le=MAX_NICS_PER_NODE)
    replicas: int = Field(default=1, ge=1, le=1_000_000)
    #: at least 1 MB/s: a storage fabric slower than that is no fabric
    fabric_Bps: float | None = Field(default=None, ge=1e6, le=1e15)
    #: at least 4 KiB (a page), at most 1 TiB: a part is one request to the object store
    #: None: 16 MB (``DEFAULT_PART_BYTES``); only a store with a request rate uses it
    part_bytes: float | None = Field(default=None, ge=4096, le=2**40)
    #: None: 1; only a store with a request rate uses it
    prefixes: int | None = Field(default=None, ge=1, le=1_000_000)

    @property
    def part_size_bytes(self) -> float:
        """Bytes per object-store part (the default when not given)."""
        return self.part_bytes if self.part_bytes is not None else DEFAULT_PART_BYTES

    @property
    def prefix_count(self) -> int:
        """Object-store prefixes written in parallel (1 when not given)."""
        return self.prefixes if self.prefixes is not None else 1


class Bound(BaseModel):
    """One limit on a transfer: its name, rate (None for a request limit) and time."""

    model_config = _FROZEN

    name: str
    bw_Bps: float | None
    time_s: float
    detail: str


class Transfer(BaseModel):
    """A save or a restore: bytes, every bound, and the one that sets the time."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    name: str
    bytes: float
    bounds: list[Bound]
    bound: str
    latency_s: float
    time_s: float


class CheckpointResult(BaseModel):
    """Save and restore of one checkpoint, as transfers and as phases (for JSON)."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    spec: CheckpointSpec
    storage_id: str
    nodes: int
    ranks: int
    weights_bytes: float
    optimizer_bytes: float
    save: Transfer
    restore: Transfer
    phases: list[Phase]
    #: what makes the figures doubtful (an object store priced through InfiniBand NICs)
    warnings: list[str] = []
    assumptions: list[str]


def _part_words(share_bytes: float, part_bytes: float) -> str:
    """``4 MB``, or, where a rank's share is smaller than a part, what a part then holds:
    ``1.09 GB (a rank's whole share; parts of up to 6 GB)`` (it said 128 parts of 6 GB for
    140 GB)."""
    if share_bytes >= part_bytes:
        return format_size(part_bytes)
    return (
        f"{format_size(share_bytes)} (a rank's whole share; parts of up to "
        f"{format_size(part_bytes)})"
    )


def _check_part_size(storage: Storage, spec: CheckpointSpec, share_bytes: float) -> None:
    """Refuse a save whose parts are larger than the store takes in one request (S3: 5 GiB a
    PUT or multipart part). A rank's share smaller than the part size is its one part."""
    limit = storage.max_write_part_bytes
    if limit is None or storage.write_requests_per_s is None:
        return
    part = min(spec.part_size_bytes, share_bytes)
    if part > limit:
        value = format_size(spec.part_size_bytes)
        given = "{part_bytes} " + value
        if spec.part_bytes is None:
            given = f"the default part size {value}"
        raise WorkloadError(
            f"{given} is more than {storage.id} takes in one write request "
            f"({format_size(limit)}): give a smaller {{part_bytes}}",
            field="part_bytes",
            value=value,
        )


def _fit_part_count(storage: Storage, spec: CheckpointSpec, share_bytes: float) -> CheckpointSpec:
    """``spec`` with parts large enough that one rank's object has no more parts than
    ``storage`` takes in one upload (S3 multipart: 10,000). The default part size is raised to
    the smallest that fits, and said so in :func:`_part_count_note`; a part size given is
    refused."""
    if storage.write_requests_per_s is None:
        return spec
    least_part = storage.min_write_part_bytes
    if (
        least_part is not None
        and spec.part_bytes is not None
        and spec.part_bytes < least_part
        and spec.part_bytes < share_bytes
    ):
        # a share of one part may be any size; cut into several, every part but the last must
        # be at least this (S3: 5 MiB)
        value = format_size(spec.part_bytes)
        raise WorkloadError(
            f"{{part_bytes}} {value} is less than {storage.id} takes as a part of a larger "
            f"upload ({format_size(least_part)}; only the last part may be smaller): give a "
            f"{{part_bytes}} of at least {format_size(least_part)}",
            field="part_bytes",
            value=value,
        )
    limit = storage.max_write_parts
    if limit is None:
        return spec
    parts = math.ceil(share_bytes / spec.part_size_bytes)
    if parts <= limit:
        return spec
    # the smallest part that fits, rounded up to the 4 digits a size prints with: the figure
    # the refusal names must itself pass
    exact = share_bytes / limit
    step = 10 ** max(0, math.floor(math.log10(exact)) - 3)
    least = math.ceil(exact / step) * step
    largest = storage.max_write_part_bytes
    if largest is not None and least > largest:
        # no part size serves: the share is more than the store takes in one object
        raise WorkloadError(
            f"each rank's {format_size(share_bytes)} is more than {storage.id} takes in one "
            f"upload ({limit:,} parts of at most {format_size(largest)}, "
            f"{format_size(limit * largest)}): spread the checkpoint over more ranks "
            "({nodes}, {gpus_per_node})",
            field="nodes",
        )
    if spec.part_bytes is not None:
        given = format_size(spec.part_bytes)
        if given == format_size(least):  # the same 4 digits: say the bytes
            given = f"{spec.part_bytes:,.0f} B"
        raise WorkloadError(
            f"{{part_bytes}} {given} cuts each rank's {format_size(share_bytes)} into "
            f"{parts:,} parts, more than {storage.id} takes in one upload ({limit:,}): give a "
            f"{{part_bytes}} of at least {format_size(least)}",
            field="part_bytes",
            value=given,
        )
    return spec.model_copy(update={"part_bytes": float(least)})


def _part_count_note(storage: Storage, share_bytes: float, part_bytes: float) -> str:
    """Why the default part size was raised (see :func:`_fit_part_count`)."""
    parts = math.ceil(share_bytes / DEFAULT_PART_BYTES)
    return (
        f"parts of {format_size(part_bytes)}: the default {format_size(DEFAULT_PART_BYTES)} "
        f"would cut each rank's {format_size(share_bytes)} into {parts:,} parts, more than "
        f"{storage.id} takes in one upload ({storage.max_write_parts:,}); {{part_bytes}} to change"
    )


def _parts(total_bytes: float, ranks: int, part_bytes: float) -> int:
    """Object-store parts (requests) of ``total_bytes``: every rank cuts its share into parts
    of ``part_bytes``."""
    return ranks * math.ceil(total_bytes / ranks / part_bytes)


def _transfer(
    name: str,
    total: float,
    *,
    nodes: int,
    ranks: int,
    client_Bps: float,
    client_detail: str,
    storage: Storage,
    units: int,
    write: bool,
    spec: CheckpointSpec,
) -> Transfer:
    bounds: list[Bound] = []
    per_client = storage.per_client_write_Bps if write else storage.per_client_read_Bps
    node_rate = client_Bps if per_client is None else min(client_Bps, per_client)
    detail = client_detail
    client_bound = "client NICs"
    if per_client is not None and per_client < client_Bps:
        # the storage's own limit per client binds, not the NICs: the bound says so (it was
        # named "client NICs" with the cap only in its detail)
        client_bound = "per-client cap"
        detail += (
            f", capped by {storage.id} at {format_bandwidth(per_client, past_gb=True)} per client"
        )
    bounds.append(Bound(name=client_bound, bw_Bps=nodes * node_rate, time_s=0.0, detail=detail))
    unit = storage.aggregate_write_Bps if write else storage.aggregate_read_Bps
    if unit is not None:
        bounds.append(
            Bound(
                name="storage",
                bw_Bps=units * unit,
                time_s=0.0,
                detail=f"{units:,} x {storage.id} at {format_bandwidth(unit, past_gb=True)} "
                f"{'write' if write else 'read'}",
            )
        )
    if spec.fabric_Bps is not None:
        bounds.append(
            Bound(
                name="fabric",
                bw_Bps=spec.fabric_Bps,
                time_s=0.0,
                detail=f"{format_bandwidth(spec.fabric_Bps, past_gb=True)} between clients "
                "and storage",
            )
        )
    bounds = [b.model_copy(update={"time_s": total / (b.bw_Bps or 1.0)}) for b in bounds]
    rate = storage.write_requests_per_s if write else storage.read_requests_per_s
    if rate is not None:
        parts = _parts(total, ranks, spec.part_size_bytes)
        # a part is one request to one prefix: prefixes beyond the parts carry nothing
        prefixes = min(spec.prefix_count, parts)
        bounds.append(
            Bound(
                name="requests",
                # the rate the request limit leaves the transfer (it had shown none, on the
                # row that sets the time: a review)
                bw_Bps=total * prefixes * rate / parts,
                time_s=parts / (prefixes * rate),
                detail=f"{parts:,} parts of {_part_words(total / ranks, spec.part_size_bytes)} "
                f"at {rate:,g} {'PUT' if write else 'GET'} requests/s per prefix x "
                f"{prefixes:,} prefix{'es' if prefixes != 1 else ''}"
                + (f" (of {spec.prefix_count:,} given)" if prefixes < spec.prefix_count else ""),
            )
        )
    if storage.per_request_Bps is not None:
        part = min(spec.part_size_bytes, total / ranks)
        one = part / storage.per_request_Bps
        parts = _parts(total, ranks, spec.part_size_bytes)
        bounds.append(
            Bound(
                name="one request",
                bw_Bps=total / one,
                time_s=one,
                detail=f"a part of {format_size(part)} at "
                f"{format_bandwidth(storage.per_request_Bps, past_gb=True)} per request, all "
                f"{parts:,} in flight at once (the rate is theirs together)",
            )
        )
    worst = max(bounds, key=lambda b: b.time_s)
    latency = storage.latency_s or 0.0
    return Transfer(
        name=name,
        bytes=total,
        bounds=bounds,
        bound=worst.name,
        latency_s=latency,
        time_s=worst.time_s + latency,
    )


#: bounds closer than this (relative time) are said to be a tie: the catalogue's rates are not
#: known that closely (an NDR client at 48.8 GB/s and a 48.1 GB/s target)
NEAR_TIE = 0.05


def _near_tie(transfer: Transfer) -> str | None:
    """A note where another bound's time is within :data:`NEAR_TIE` of the binding one's:
    which binds then rests on rates not known that closely."""
    times = sorted(transfer.bounds, key=lambda b: b.time_s, reverse=True)
    if len(times) < 2 or times[0].time_s <= 0:
        return None
    first, second = times[0], times[1]
    gap = 1 - second.time_s / first.time_s
    if gap > NEAR_TIE:
        return None
    return (
        f"{transfer.name}: {first.name} ({format_time(first.time_s)}) and {second.name} "
        f"({format_time(second.time_s)}) are within {gap:.1%}: either may bind"
    )


def checkpoint(
    catalogue: Catalogue, cluster: ResolvedCluster, spec: CheckpointSpec
) -> CheckpointResult:
    """Save and restore times of ``spec``'s checkpoint from ``cluster``'s nodes.

    Every node writes through ``client_nics`` NICs of ``client_link`` (default: the cluster's
    scale-out link). Raises :class:`~ibcalc.errors.WorkloadError` or
    :class:`~ibcalc.errors.UnknownNameError` for unknown storage or links.
    """
    from ibcalc.catalogue.load import find_storage

    # a ClusterSpec had raised AttributeError ('no attribute spec': a review)
    expect_type(cluster, ResolvedCluster, "cluster", "resolve_cluster(catalogue, spec) makes one")
    expect_job(catalogue, spec, CheckpointSpec)
    storage = find_storage(catalogue, spec.storage)
    notes: list[str] = []
    if storage.write_requests_per_s is None and storage.read_requests_per_s is None:
        given = [
            flag
            for flag, value in (("{part_bytes}", spec.part_bytes), ("{prefixes}", spec.prefixes))
            if value is not None
        ]
        if given:
            notes.append(
                f"{' and '.join(given)} ignored: {storage.id} has no request-rate limit (they "
                "apply to object stores)"
            )
    ignored_at = len(notes)  # the options a checkpoint does not read, said here (below)
    link_name = spec.client_link
    if link_name is None:
        if cluster.inter is not None:
            link_name = cluster.inter.id
        elif cluster.spec.inter is not None:  # one node: the fabric given joins no GPUs
            link_name = cluster.spec.inter
        elif cluster.system is not None and cluster.system.inter is not None:
            link_name = cluster.system.inter
        else:
            # why it is asked for: 'checkpoint --system rtx5090-8' had been told only to give it;
            # a node given by its shape alone may have a NIC that no option names
            why = (
                f"{cluster.system.id} has no scale-out NIC to reach storage through"
                if cluster.system is not None
                else "no scale-out NIC is named to reach storage through ({inter} or {system} "
                "names the cluster's)"
            )
            raise WorkloadError(
                f"{why}: give the client NIC for storage ({{client_link}})", field="client_link"
            )
        notes.append(
            f"each node reaches storage through {spec.client_nics} x {link_name} "
            "(the cluster's scale-out NIC; {client_link}, {client_nics} to change)"
        )
    link = find_link(catalogue, link_name, role="client_link")
    refused = link_role_refusal(
        link, "client_link", "client_link", spec.client_link, kind=WorkloadError
    )
    if refused:
        raise refused
    warnings: list[str] = []
    if storage.kind is StorageKind.OBJECT and link.family == "infiniband":
        # an object store is an HTTPS service: nodes reach it over their front-end Ethernet
        # (or an IP gateway), not the InfiniBand verbs fabric (a review: S3 had been priced
        # through 16 x NDR without a word)
        warnings.append(
            f"{storage.id} is an object store reached over IP (HTTPS), and {link.id} is "
            "InfiniBand: the client bound takes its NICs' rate as a stand-in for the path the "
            "nodes really use (their front-end Ethernet, or IP over InfiniBand through a "
            "gateway); give that NIC with {client_link} and {client_nics}"
        )
    # through a link the node's NICs are counted for, it has no more of them (100 had been
    # priced, 9.75 TB/s from two DGX H100; infer caps --kv-nics alike); a storage link of its
    # own is the caller's to count
    compute = link.id == cluster.node_nics_link
    count = nics_of(cluster, link.id)
    if count is not None and spec.client_nics > count:
        raise WorkloadError(
            f"{{client_nics}} {spec.client_nics} is more than the {count} {link.id} NICs of a node"
            + (
                " (give {client_link} for storage NICs of their own)"
                if spec.client_link is None
                else ""
            ),
            field="client_nics",
            value=str(spec.client_nics),
        )
    notes[ignored_at:ignored_at] = _ignored_cluster_options(cluster, compute_nics=compute)
    unread = set(cluster.fabric_notes)
    if not compute and cluster.inter is not None:
        # storage NICs of their own: the scale-out link assumed between nodes carries nothing
        # of the checkpoint ('scale-out link ndr assumed' had been listed beside roce-100g)
        unread.add(inter_assumed_note(cluster.inter.id))
    # a storage NIC sits on the host's PCIe as a compute NIC does: the cluster's cap applies
    host = cluster.host_pcie
    cap = host if host is not None and host.achievable_Bps < link.achievable_Bps else None
    nic_Bps = cap.achievable_Bps if cap is not None else link.achievable_Bps
    client_Bps = spec.client_nics * nic_Bps
    client_detail = (
        f"{cluster.nodes:,} node{'s' if cluster.nodes != 1 else ''} x {spec.client_nics} x "
        f"{link.id} at {format_bandwidth(nic_Bps, past_gb=True)} each"
        + (f" (capped by {cap.id})" if cap is not None else "")
    )
    if cap is not None and cluster.host_pcie_is_gpu_bus:
        notes.append(
            f"each storage NIC capped by {cap.id}, the GPUs' own PCIe link ({{intra}}): a "
            "save copies every shard across it, and a host built for it has slots of its "
            "generation (only a slower {host_pcie} caps them further)"
        )
    gpus = cluster.nodes * cluster.gpus_per_node
    if spec.replicas > gpus:
        raise WorkloadError(
            f"{{replicas}} {spec.replicas} is more than the cluster's {gpus} GPUs: a "
            "data-parallel replica holds at least one GPU",
            field="replicas",
            value=str(spec.replicas),
        )
    weights = spec.model.params * spec.weights_dtype.bytes
    # fp32 weights are their own master copy: only Adam's m and v are added
    master = spec.weights_dtype.bytes < DType.FP32.bytes
    per_param = ADAM_STATE_BYTES_PER_PARAM - (0 if master else FP32_MASTER_BYTES_PER_PARAM)
    optimizer = spec.model.params * per_param if spec.optimizer else 0.0
    save_bytes = weights + optimizer
    restore_bytes = weights * spec.replicas + optimizer
    fitted = _fit_part_count(storage, spec, save_bytes / cluster.ranks)
    if fitted is not spec:
        notes.append(_part_count_note(storage, save_bytes / cluster.ranks, fitted.part_size_bytes))
        spec = fitted
    save, restore = (
        _transfer(
            name,
            total,
            nodes=cluster.nodes,
            ranks=cluster.ranks,
            client_Bps=client_Bps,
            client_detail=client_detail,
            storage=storage,
            units=spec.storage_units,
            write=write,
            spec=spec,
        )
        for name, total, write in (("save", save_bytes, True), ("restore", restore_bytes, False))
    )
    _check_part_size(storage, spec, save_bytes / cluster.ranks)
    rates = {"save": storage.write_requests_per_s, "restore": storage.read_requests_per_s}
    over = {
        t.name: parts
        for t in (save, restore)
        if rates[t.name] is not None
        and (parts := _parts(t.bytes, cluster.ranks, spec.part_size_bytes)) < spec.prefix_count
    }
    if over:
        counts = ", ".join(f"{parts:,} for the {name}" for name, parts in over.items())
        notes.append(
            f"{{prefixes}} {spec.prefix_count:,} is more than the parts ({counts}): each part is "
            "one request to one prefix, so no more prefixes than parts are used"
        )
    if storage.aggregate_write_Bps is None and storage.aggregate_read_Bps is None:
        note = f"{storage.id} states no aggregate limit: it scales with the clients"
        if spec.storage_units != 1:
            # 4 units of S3 had been accepted without a word and titled '4 x aws-s3'
            note += (
                f"; {{storage_units}} {spec.storage_units} changes nothing (units multiply an "
                "aggregate rate)"
            )
        notes.append(note)
    if spec.optimizer:
        # every byte of a parameter named: fp8 weights with Adam are 1 + 12 = 13, as bf16's
        # are 2 + 12 = 14 (the weights beside the fp32 master copy they are cast from)
        held = spec.weights_dtype.bytes
        notes.append(
            (
                f"optimizer state: {per_param} bytes per parameter (fp32 master weights, Adam m "
                "and v)"
                if master
                else f"optimizer state: {per_param} bytes per parameter (Adam m and v in fp32; "
                "the fp32 weights need no master copy)"
            )
            + f", beside the {spec.weights_dtype.value} weights' {held}: {held + per_param} "
            "bytes per parameter in all"
        )
    notes.append(
        "fully sharded save: every node writes 1/nodes of the checkpoint; blocking (an "
        "asynchronous save hides it behind training)"
    )
    notes.append(
        "no likely range: the times are the catalogue's storage and NIC rates, and no published "
        "checkpoint measurement is in ibcalc's data to derive one from (collective estimates "
        "carry theirs)"
    )
    if spec.replicas > 1:
        # no optimizer state saved: none is read (it had been said to be read once: review CZ)
        notes.append(
            f"restore: the weights are read by each of {spec.replicas:,} data-parallel replicas"
            + (", the optimizer state once" if spec.optimizer else "")
        )
    for transfer in (save, restore):
        if (close := _near_tie(transfer)) is not None:
            notes.append(close)
    phases = [
        Phase(
            name=t.name,
            collective=None,
            bytes_per_gpu=t.bytes / cluster.ranks,
            ranks=cluster.ranks,
            tier="storage",
            time_s=t.time_s,
            count=1,
            per="checkpoint",
            exposed_s=t.time_s,
            assumptions=[f"bound: {t.bound}"],
        )
        for t in (save, restore)
    ]
    return CheckpointResult(
        spec=spec,
        storage_id=storage.id,
        nodes=cluster.nodes,
        ranks=cluster.ranks,
        weights_bytes=weights,
        optimizer_bytes=optimizer,
        save=save,
        restore=restore,
        phases=phases,
        warnings=warnings,
        # the cluster's notes on how collectives cross its fabric do not apply here
        assumptions=[*notes, *(n for n in cluster.assumptions if n not in unread)],
    )


#: The cluster fields a checkpoint does not read (it runs no collective on the compute fabric),
#: with how its notes name them.
UNREAD_FIELDS = {
    "intra": "scale-up link",
    "nics_per_node": "compute NICs",
    "host_cpu": "host CPU",
    "sharp": "SHARP",
    "nvls": "NVLS",
    "scale_up_domain": "scale-up domain",
    "oversubscription": "oversubscription",
    "cross_leaf_fraction": "cross-leaf fraction",
    "neighbour_cross_leaf_fraction": "neighbour cross-leaf fraction",
    "unaligned_cross_leaf_fraction": "unaligned cross-leaf fraction",
    "leaf_group_nodes": "leaf group",
}


def _ignored_cluster_options(cluster: ResolvedCluster, *, compute_nics: bool) -> list[str]:
    """The cluster options given that a checkpoint does not read, named as ignored
    (``compute_nics``: the storage path runs through the compute NICs, whose count it reads
    as the most ``client_nics`` may be).

    They shape collectives on the compute fabric (its scale-up link and domain, compute NICs,
    host CPU, SHARP, NVLS, leaf oversubscription); a checkpoint runs none: each node reaches storage
    through its own storage NICs, on a path the storage fabric bounds (``fabric_Bps``). The
    compute fabric's oversubscription is not applied to that path: storage networks are
    commonly built apart from it (DGX SuperPOD's storage fabric), and a limited path is what
    ``--storage-fabric`` says.
    """
    spec = cluster.spec
    differs = {
        # a PCIe scale-up link is read: it caps the storage NICs (host_pcie_is_gpu_bus)
        "intra": spec.intra is not None and not cluster.host_pcie_is_gpu_bus,
        "nics_per_node": spec.nics_per_node is not None and not compute_nics,
        "host_cpu": spec.host_cpu is not None,
        "sharp": True,  # on or off, a checkpoint never uses it
        "nvls": spec.nvls is not None,
        "scale_up_domain": spec.scale_up_domain is not None,
        "oversubscription": spec.oversubscription > 1,
        "cross_leaf_fraction": spec.cross_leaf_fraction != 1,
        "neighbour_cross_leaf_fraction": spec.neighbour_cross_leaf_fraction is not None,
        "unaligned_cross_leaf_fraction": spec.unaligned_cross_leaf_fraction is not None,
        "leaf_group_nodes": spec.leaf_group_nodes is not None,
    }
    ignored = [
        f"{what} ({{{name}}})"
        for name, what in UNREAD_FIELDS.items()
        if name in spec.model_fields_set and differs[name]
    ]
    if not ignored:
        return []
    return [
        f"the cluster's {', '.join(ignored)} ignored: a checkpoint runs no collective on the "
        "compute fabric; each node reaches storage through {client_nics} x {client_link}, on "
        "a path {fabric_Bps} bounds"
    ]
