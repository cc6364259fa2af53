"""ibcalc.workload.checkpoint: bytes, bounds and which one sets the time, worked by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import DType
from ibcalc.errors import UnknownNameError, WorkloadError
from ibcalc.workload.checkpoint import CheckpointResult, CheckpointSpec, checkpoint
from ibcalc.workload.model import find_model

#: A 400 Gb/s client NIC at full rate (50 GB/s) and a 200 GB/s storage system, as in the issue.
OVERRIDE = """\
schema: ibcalc-catalogue/1
links:
  - id: client-400g
    name: "test client NIC, 400 Gb/s at line rate"
    kind: scale-out
    family: ethernet
    generation: test
    scope: per-port
    per_direction: "400 Gb/s"
    efficiency: 1.0
    efficiency_source: "test value"
    sources: ["test"]
    confidence: low
storage:
  - id: test-200
    name: "test storage, 200 GB/s"
    kind: parallel-fs
    aggregate_read: "200 GB/s"
    aggregate_write: "200 GB/s"
    aggregate_source: "test value"
    sources: ["test"]
    confidence: low
"""


@pytest.fixture
def test_catalogue(tmp_path: Path) -> Catalogue:
    path = tmp_path / "override.yaml"
    path.write_text(OVERRIDE, encoding="utf-8")
    return load_catalogue([path], use_env=False)


def _to_test_storage(
    cat: Catalogue,
    model_id: str,
    *,
    nodes: int = 16,
    host_pcie: str | None = None,
    **job: object,
) -> CheckpointResult:
    """``model_id``'s checkpoint from ``nodes`` DGX H100 nodes through one 400 Gb/s client NIC
    each to the 200 GB/s test storage."""
    cluster = resolve_cluster(cat, ClusterSpec(system="dgx-h100", nodes=nodes, host_pcie=host_pcie))
    spec = CheckpointSpec(
        model=find_model(model_id),
        storage="test-200",
        client_link="client-400g",
        **job,  # type: ignore[arg-type]
    )
    return checkpoint(cat, cluster, spec)


def test_405b_to_200_GBps_storage_is_storage_bound(test_catalogue: Catalogue) -> None:
    # 405e9 x 2 bytes = 810 GB; 16 nodes x 1 x 50 GB/s = 800 GB/s of client NICs -> 1.0125 s;
    # storage 200 GB/s -> 4.05 s: storage-bound, 4.05 s
    cluster = resolve_cluster(test_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    spec = CheckpointSpec(
        model=find_model("llama3-405b"), storage="test-200", client_link="client-400g"
    )
    result = checkpoint(test_catalogue, cluster, spec)
    assert result.save.bytes == 810e9
    bounds = {b.name: b for b in result.save.bounds}
    assert bounds["client NICs"].bw_Bps == pytest.approx(800e9)
    assert bounds["client NICs"].time_s == pytest.approx(1.0125)
    assert bounds["storage"].time_s == pytest.approx(4.05)
    assert result.save.bound == "storage"
    assert result.save.time_s == pytest.approx(4.05)
    assert result.phases[0].name == "save"
    assert result.phases[0].tier == "storage"
    assert result.phases[0].time_s == pytest.approx(4.05)


def test_more_storage_units_move_the_bound_to_the_clients(test_catalogue: Catalogue) -> None:
    # 5 x 200 = 1000 GB/s of storage > 800 GB/s of clients: client-bound, 810 / 800 = 1.0125 s
    cluster = resolve_cluster(test_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    spec = CheckpointSpec(
        model=find_model("llama3-405b"),
        storage="test-200",
        client_link="client-400g",
        storage_units=5,
    )
    result = checkpoint(test_catalogue, cluster, spec)
    assert result.save.bound == "client NICs"
    assert result.save.time_s == pytest.approx(1.0125)


def test_fabric_bound(test_catalogue: Catalogue) -> None:
    # a 100 GB/s path to storage: 810 / 100 = 8.1 s
    cluster = resolve_cluster(test_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    spec = CheckpointSpec(
        model=find_model("llama3-405b"),
        storage="test-200",
        client_link="client-400g",
        fabric_Bps=100e9,
    )
    result = checkpoint(test_catalogue, cluster, spec)
    assert result.save.bound == "fabric"
    assert result.save.time_s == pytest.approx(8.1)


def test_fabric_limit_is_quoted_bare() -> None:
    # a limit keeps its bare form ('at least 1 MB/s'), where a figure prints '1.00 MB/s'
    with pytest.raises(WorkloadError) as err:
        CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3", fabric_Bps=5e5)
    assert str(err.value) == "fabric_Bps 500 kB/s: must be at least 1 MB/s"


def test_optimizer_state_and_restore_replicas(test_catalogue: Catalogue) -> None:
    # + 12 bytes per parameter: 405e9 x 12 = 4.86 TB; restore reads the weights per replica
    result = _to_test_storage(test_catalogue, "llama3-405b", optimizer=True, replicas=4)
    assert result.optimizer_bytes == pytest.approx(4.86e12)
    assert result.save.bytes == pytest.approx(810e9 + 4.86e12)
    assert result.restore.bytes == pytest.approx(4 * 810e9 + 4.86e12)
    assert result.restore.time_s == pytest.approx((4 * 810e9 + 4.86e12) / 200e9)
    said = "restore: the weights are read by each of 4 data-parallel replicas"
    assert f"{said}, the optimizer state once" in result.assumptions
    # without optimizer state none is read, and none is said to be (review CZ 3): 4 x 810 GB
    bare = _to_test_storage(test_catalogue, "llama3-405b", replicas=4)
    assert (bare.optimizer_bytes, bare.restore.bytes) == (0, pytest.approx(4 * 810e9))
    assert said in bare.assumptions
    assert not [n for n in bare.assumptions if "optimizer state" in n]


def test_client_nics_are_capped_by_the_host_pcie(test_catalogue: Catalogue) -> None:
    # PCIe 3.0 x16: 15.75 GB/s per direction x 0.8 = 12.6 GB/s achievable, under the 50 GB/s of
    # the 400 Gb/s client NIC. 8 nodes x 1 NIC x 12.6 GB/s = 100.8 GB/s; 405e9 x 2 = 810 GB
    # takes 810 / 100.8 = 8.036 s, slower than the 200 GB/s storage (4.05 s): client-bound
    result = _to_test_storage(test_catalogue, "llama3-405b", nodes=8, host_pcie="pcie3")
    client = next(b for b in result.save.bounds if b.name == "client NICs")
    assert client.bw_Bps == pytest.approx(8 * 15.75e9 * 0.8)
    assert client.time_s == pytest.approx(810e9 / 100.8e9)
    assert client.detail.endswith("at 12.6 GB/s each (capped by pcie3)")
    assert result.save.bound == "client NICs"
    # on PCIe 5.0 (63 GB/s x 0.8 = 50.4 GB/s) the 50 GB/s NIC is not capped: 8 x 50 = 400 GB/s
    fast = _to_test_storage(test_catalogue, "llama3-405b", nodes=8, host_pcie="pcie5")
    client = next(b for b in fast.save.bounds if b.name == "client NICs")
    assert client.bw_Bps == pytest.approx(400e9)
    assert "capped" not in client.detail


def test_client_nics_on_a_pcie_gpu_host_are_capped_by_its_generation(
    test_catalogue: Catalogue,
) -> None:
    """GPUs on PCIe Gen4 (--intra pcie4), no host link named: the host's slots are Gen4, so the
    50 GB/s client NIC moves 31.5 x 0.8 = 25.2 GB/s; 8 nodes: 201.6 GB/s, 810 GB in 4.018 s.
    The option is read, so it is not listed as ignored, and the note says why it caps."""
    spec = ClusterSpec(nodes=8, gpus_per_node=8, intra="pcie4", inter="ndr")
    cluster = resolve_cluster(test_catalogue, spec)
    job = CheckpointSpec(
        model=find_model("llama3-405b"), storage="test-200", client_link="client-400g"
    )
    result = checkpoint(test_catalogue, cluster, job)
    client = next(b for b in result.save.bounds if b.name == "client NICs")
    assert client.bw_Bps == pytest.approx(8 * 31.5e9 * 0.8)
    assert client.time_s == pytest.approx(810e9 / 201.6e9)
    assert client.detail.endswith("(capped by pcie4)")
    assert (
        "each storage NIC capped by pcie4, the GPUs' own PCIe link ({intra}): a save copies "
        "every shard across it, and a host built for it has slots of its generation (only a "
        "slower {host_pcie} caps them further)"
    ) in result.assumptions
    assert not any("scale-up link" in a and "ignored" in a for a in result.assumptions)


def test_a_checkpoint_is_not_told_the_gpu_clock_its_hops_would_take(
    test_catalogue: Catalogue,
) -> None:
    """A checkpoint prices no hop: on GPUs named by their PCIe link alone (--intra pcie4) it
    had repeated the estimates' 'pcie4 names no GPU: its hops are priced at a Hopper GPU's
    clock'. The NICs' bound stays 8 nodes x 25.2 GB/s = 201.6 GB/s, 810 GB in 4.018 s."""
    spec = ClusterSpec(nodes=8, gpus_per_node=8, intra="pcie4", inter="ndr")
    cluster = resolve_cluster(test_catalogue, spec, collectives=False)
    clock = "pcie4 names no GPU: its hops and all-to-all messages are priced at a Hopper GPU's"
    assert any(a.startswith(clock) for a in cluster.assumptions)  # an estimate's, still
    job = CheckpointSpec(
        model=find_model("llama3-405b"), storage="test-200", client_link="client-400g"
    )
    result = checkpoint(test_catalogue, cluster, job)
    client = next(b for b in result.save.bounds if b.name == "client NICs")
    assert client.time_s == pytest.approx(810e9 / (8 * 31.5e9 * 0.8))
    assert not [a for a in result.assumptions if a.startswith(clock)]


def test_fp32_weights_keep_no_master_copy(test_catalogue: Catalogue) -> None:
    # Llama 3 70B, fp32 weights: 70e9 x 4 = 280 GB; Adam m and v in fp32: 70e9 x (4 + 4) =
    # 560 GB (not 840 GB: the fp32 weights are the master copy). bf16 weights keep the fp32
    # master: 70e9 x 2 = 140 GB + 70e9 x 12 = 840 GB.
    fp32 = _to_test_storage(test_catalogue, "llama3-70b", optimizer=True, weights_dtype=DType.FP32)
    assert fp32.weights_bytes == pytest.approx(280e9)
    assert fp32.optimizer_bytes == pytest.approx(560e9)
    assert fp32.save.bytes == pytest.approx(840e9)
    # 840 GB to 200 GB/s of storage (the 16 x 50 GB/s NICs take 1.05 s): 4.2 s
    assert fp32.save.time_s == pytest.approx(4.2)
    assert any("8 bytes per parameter" in a for a in fp32.assumptions)
    bf16 = _to_test_storage(test_catalogue, "llama3-70b", optimizer=True)
    assert (bf16.weights_bytes, bf16.optimizer_bytes) == (
        pytest.approx(140e9),
        pytest.approx(840e9),
    )
    assert any("12 bytes per parameter" in a for a in bf16.assumptions)


def test_every_byte_of_a_parameter_with_adam_is_named(test_catalogue: Catalogue) -> None:
    """fp8 weights with Adam are 1 + 12 = 13 bytes per parameter, as bf16's are 2 + 12 = 14:
    the weights as saved, beside the fp32 master copy they are cast from and Adam's m and v
    (4 + 4 + 4, ZeRO section 3.1). The note had said '12 bytes per parameter (fp32 weights,
    Adam m and v)' beside '70 GB of fp8 weights', which read as fp32 weights; it now names the
    master copy and the sum. Llama 3 70B: 70e9 x 1 = 70 GB + 70e9 x 12 = 840 GB = 910 GB, to
    200 GB/s of storage 4.55 s; bf16 980 GB; fp32 70e9 x (4 + 8) = 840 GB."""
    cat = test_catalogue
    fp8 = _to_test_storage(cat, "llama3-70b", optimizer=True, weights_dtype=DType.FP8)
    assert (fp8.weights_bytes, fp8.optimizer_bytes) == (pytest.approx(70e9), pytest.approx(840e9))
    assert fp8.save.bytes == pytest.approx(910e9)
    assert fp8.save.time_s == pytest.approx(4.55)
    assert (
        "optimizer state: 12 bytes per parameter (fp32 master weights, Adam m and v), beside "
        "the fp8 weights' 1: 13 bytes per parameter in all"
    ) in fp8.assumptions
    bf16 = _to_test_storage(cat, "llama3-70b", optimizer=True)
    assert bf16.save.bytes == pytest.approx(980e9)
    assert any(
        a.endswith("beside the bf16 weights' 2: 14 bytes per parameter in all")
        for a in bf16.assumptions
    )
    fp32 = _to_test_storage(cat, "llama3-70b", optimizer=True, weights_dtype=DType.FP32)
    assert fp32.save.bytes == pytest.approx(840e9)
    assert any(
        a.endswith("beside the fp32 weights' 4: 12 bytes per parameter in all")
        for a in fp32.assumptions
    )


def test_compute_fabric_options_are_named_as_ignored(builtin_catalogue: Catalogue) -> None:
    # Llama 3 70B in bf16, 140 GB, from 2 DGX H100 nodes to one DDN appliance (65 GB/s write):
    # 140 / 65 = 2.154 s either way. Oversubscription 4:1 of the compute fabric does not slow the
    # storage path (--storage-fabric bounds that), and SHARP, NVLS and the scale-up link carry no
    # checkpoint traffic: all four are named as ignored, and the cluster's notes on collectives
    # ("x4 slower", "enable with --sharp") are left out. The compute NICs' count is read: the
    # storage path runs through them here, and it is the most --storage-nics may be (it had been
    # named ignored beside the refusal it set).
    spec = CheckpointSpec(model=find_model("llama3-70b"), storage="ddn-ai400x2")
    plain_cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    given_cluster = resolve_cluster(
        builtin_catalogue,
        ClusterSpec(
            system="dgx-h100",
            nodes=2,
            sharp=True,
            nvls=False,
            intra="nvlink4",
            oversubscription=4,
            nics_per_node=4,
        ),
    )
    plain = checkpoint(builtin_catalogue, plain_cluster, spec)
    given = checkpoint(builtin_catalogue, given_cluster, spec)
    assert given.save.time_s == plain.save.time_s == pytest.approx(140e9 / 65e9)
    assert given.assumptions[0] == (
        "the cluster's scale-up link ({intra}), SHARP ({sharp}), "
        "NVLS ({nvls}), oversubscription ({oversubscription}) ignored: a checkpoint runs no "
        "collective on the compute fabric; each node reaches storage through {client_nics} x "
        "{client_link}, on a path {fabric_Bps} bounds"
    )
    for result in (plain, given):
        assert not any("slower" in a or "SHARP (CollNet)" in a for a in result.assumptions)
    assert not any("ignored" in a for a in plain.assumptions)


def test_the_scale_out_link_assumed_is_named_only_where_storage_goes_through_it(
    builtin_catalogue: Catalogue,
) -> None:
    # 2 nodes of 8 GPUs on pcie4 without --inter: NDR is assumed between them. Through storage
    # NICs of their own (roce-100g: 12.5 GB/s x 0.962 = 12.0 GB/s each, 2 x 12.0 = 24 GB/s
    # against the appliance's 65 GB/s write) the save never touches NDR and the note goes;
    # through the compute NICs (NDR) it stays, beside the note of the storage path.
    cluster = resolve_cluster(
        builtin_catalogue, ClusterSpec(intra="pcie4", gpus_per_node=8, nodes=2)
    )
    assumed = "scale-out link ndr assumed ({inter})"
    assert assumed in cluster.assumptions
    model = find_model("llama3-70b")
    own = CheckpointSpec(model=model, storage="ddn-ai400x2", client_link="roce-100g")
    through = CheckpointSpec(model=model, storage="ddn-ai400x2")
    own_result = checkpoint(builtin_catalogue, cluster, own)
    assert assumed not in own_result.assumptions
    assert own_result.save.bounds[0].bw_Bps == pytest.approx(2 * 12.5e9 * 0.962)
    assert assumed in checkpoint(builtin_catalogue, cluster, through).assumptions


def test_one_node_reaches_storage_through_the_fabric_given(builtin_catalogue: Catalogue) -> None:
    # one DGX H100 with --fabric hdr: no collective crosses a network, but the node's storage
    # NIC is the HDR one given (25 GB/s x the catalogue's efficiency), not the preset's NDR; the
    # preset's own link when none is given
    spec = CheckpointSpec(model=find_model("llama3-8b"), storage="ddn-ai400x2")
    hdr = find_link(builtin_catalogue, "hdr")
    given = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1, inter="hdr"))
    assert given.inter is None
    assert "{inter} hdr carries no collective: one scale-up domain, no network between GPUs" in (
        given.assumptions
    )
    client = next(b for b in checkpoint(builtin_catalogue, given, spec).save.bounds)
    assert client.name == "client NICs"
    assert client.bw_Bps == pytest.approx(hdr.achievable_Bps)
    assert " x hdr at " in client.detail
    preset = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    client = next(b for b in checkpoint(builtin_catalogue, preset, spec).save.bounds)
    assert client.bw_Bps == pytest.approx(find_link(builtin_catalogue, "ndr").achievable_Bps)


def test_object_store_request_bound(builtin_catalogue: Catalogue) -> None:
    # 810 GB over 128 ranks = 6.328 GB each = 396 parts of 16 MB; 128 x 396 = 50,688 PUTs at
    # 3,500 per second per prefix = 14.48 s, slower than the NICs (810 GB / (16 x 47 GB/s))
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=16))
    spec = CheckpointSpec(model=find_model("llama3-405b"), storage="s3")
    result = checkpoint(builtin_catalogue, cluster, spec)
    requests = next(b for b in result.save.bounds if b.name == "requests")
    assert requests.time_s == pytest.approx(128 * 396 / 3500)
    assert result.save.bound == "requests"
    # S3's 100 ms first-byte latency is added once
    assert result.save.time_s == pytest.approx(128 * 396 / 3500 + 0.1)
    assert requests.detail.startswith("50,688 parts of 16 MB at 3,500 PUT requests/s per prefix")
    # parts larger than a rank's share (6.328 GB) make one part per rank, which holds the
    # share; 6.328 GB is more than S3 takes in one PUT (5 GiB = 5.369 GB)
    with pytest.raises(WorkloadError) as err:
        checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 8e9}))
    assert "8 GB is more than aws-s3 takes" in str(err.value)
    # ten prefixes cut it tenfold
    ten = checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"prefixes": 10}))
    assert next(b for b in ten.save.bounds if b.name == "requests").time_s == pytest.approx(
        128 * 396 / 35000
    )


def test_prefixes_beyond_the_parts_are_capped(builtin_catalogue: Catalogue) -> None:
    # Llama 3 70B in bf16, 140 GB from 2 DGX H100 nodes (16 ranks): 8.75 GB per rank is
    # ceil(8.75e9 / 16e6) = 547 parts, 16 x 547 = 8752 parts. A million prefixes cannot beat one
    # part per prefix: 8752 / (8752 x 3500) = 1 / 3500 s, not 8752 / (1e6 x 3500).
    assert 16 * -(-8.75e9 // 16e6) == 8752
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    spec = CheckpointSpec(model=find_model("llama3-70b"), storage="aws-s3", prefixes=1_000_000)
    result = checkpoint(builtin_catalogue, cluster, spec)
    requests = next(b for b in result.save.bounds if b.name == "requests")
    assert requests.time_s == pytest.approx(1 / 3500)
    assert requests.detail.endswith("x 8,752 prefixes (of 1,000,000 given)")
    # restore at 5,500 GET/s: 1 / 5500 s
    read = next(b for b in result.restore.bounds if b.name == "requests")
    assert read.time_s == pytest.approx(1 / 5500)
    (note,) = [a for a in result.assumptions if a.startswith("{prefixes}")]
    assert "(8,752 for the save, 8,752 for the restore)" in note
    # 100 prefixes, fewer than the parts, are used as given: 8752 / (100 x 3500) = 25.0 ms
    some = checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"prefixes": 100}))
    requests = next(b for b in some.save.bounds if b.name == "requests")
    assert requests.time_s == pytest.approx(8752 / 350_000)
    assert not any(a.startswith("{prefixes}") for a in some.assumptions)


def test_object_store_options_on_a_file_system_are_said_to_be_ignored(
    builtin_catalogue: Catalogue,
) -> None:
    # a DDN appliance has no request-rate limit: parts and prefixes change nothing, and say so
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    spec = CheckpointSpec(model=find_model("llama3-70b"), storage="ddn-ai400x2")
    plain = checkpoint(builtin_catalogue, cluster, spec)
    given = checkpoint(
        builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 64e6, "prefixes": 4})
    )
    assert given.save.time_s == plain.save.time_s
    assert all(b.name != "requests" for b in given.save.bounds)
    (note,) = [a for a in given.assumptions if "ignored" in a]
    # field marks the command line names as flags (--part-size and --prefixes)
    assert note.startswith("{part_bytes} and {prefixes} ignored: ddn-ai400x2 has no request-rate")
    assert not any("ignored" in a for a in plain.assumptions)


def test_unknown_storage(builtin_catalogue: Catalogue) -> None:
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    with pytest.raises(UnknownNameError) as err:
        checkpoint(
            builtin_catalogue, cluster, CheckpointSpec(model=find_model("llama3-8b"), storage="s4")
        )
    assert "s3" in str(err.value)


def test_a_part_larger_than_s3_takes_is_refused(builtin_catalogue: Catalogue) -> None:
    """S3 takes at most 5 GiB in one PUT or multipart part (AWS S3 user guide, multipart upload
    limits; data/links.yaml aws-s3 max_write_part)."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4))
    spec = CheckpointSpec(model=find_model("llama3-405b"), storage="aws-s3", optimizer=True)
    # 5.67 TB over 32 ranks = 177 GB a rank: 5 GiB parts pass, one byte more does not
    at_limit = checkpoint(
        builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 5 * 2**30})
    )
    # one request moves about 85 MB/s (AWS's guideline): a 5 GiB part takes 63.2 s, longer
    # than the 4 nodes' NICs take for the whole save (5.67 TB / (4 x 47.0 GB/s) = 30.2 s)
    assert at_limit.save.bound == "one request"
    assert at_limit.save.time_s == pytest.approx(5 * 2**30 / 85e6 + 0.1)
    with pytest.raises(WorkloadError) as err:
        checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 6 * 2**30}))
    assert err.value.field == "part_bytes"
    assert "is more than aws-s3 takes in one write request (5 GiB)" in str(err.value)
    # a rank's share below the limit is its one part, whatever --part-size says:
    # llama3-8b, 16 GB over 32 ranks = 500 MB a rank
    small = CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3", part_bytes=8 * 2**30)
    requests = next(
        b for b in checkpoint(builtin_catalogue, cluster, small).save.bounds if b.name == "requests"
    )
    assert requests.detail.startswith("32 parts of 500 MB")


def test_one_s3_request_moves_at_most_85_mb_per_s(builtin_catalogue: Catalogue) -> None:
    """AWS's S3 guideline: one concurrent request per 85-90 MB/s of wanted throughput
    (data/links.yaml aws-s3 per_request, 85 MB/s). Llama-3-8B (16 GB) from 2 DGX H100 in parts
    as large as a rank's share (1 GB) had saved in 270 ms, 5.9 GB/s a request; each 1 GB part
    now takes 1e9 / 85e6 = 11.8 s however many are in flight. The default 16 MB parts take
    0.19 s each, below the request rate's 1,008 / 3,500 = 0.288 s."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    big = CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3", part_bytes=6 * 2**30)
    result = checkpoint(builtin_catalogue, cluster, big)
    assert result.save.bound == result.restore.bound == "one request"
    assert result.save.time_s == pytest.approx(16e9 / 16 / 85e6 + 0.1)
    default = checkpoint(builtin_catalogue, cluster, big.model_copy(update={"part_bytes": None}))
    one = next(b for b in default.save.bounds if b.name == "one request")
    assert one.time_s == pytest.approx(16e6 / 85e6)
    assert default.save.bound == "requests"
    assert default.save.time_s == pytest.approx(1008 / 3500 + 0.1)


def test_a_rank_s_object_has_at_most_the_parts_s3_takes_in_one_upload(
    builtin_catalogue: Catalogue,
) -> None:
    """S3 takes at most 10,000 parts in one multipart upload (AWS S3 user guide, multipart
    upload limits; data/links.yaml aws-s3 max_write_parts). llama3-405b with Adam on 4 x DGX
    H100: 810 GB + 4.86 TB = 5.67 TB over 32 ranks = 177.2 GB a rank, which the default 16 MB
    parts cut into ceil(177.2e9 / 16e6) = 11,075 parts: an upload S3 refuses."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4))
    spec = CheckpointSpec(model=find_model("llama3-405b"), storage="aws-s3", optimizer=True)
    share = (405e9 * 2 + 405e9 * 12) / 32
    assert math.ceil(share / 16e6) == 11_075
    # the default part size is raised to the smallest that fits, 177.2 GB / 10,000 rounded up
    # to four digits: 17.72 MB, so each rank's object has exactly 10,000 parts
    result = checkpoint(builtin_catalogue, cluster, spec)
    requests = next(b for b in result.save.bounds if b.name == "requests")
    assert requests.detail.startswith(
        "320,000 parts of 17.72 MB at 3,500 PUT requests/s per prefix"
    )
    assert requests.time_s == pytest.approx(320_000 / 3500)
    assert (
        "parts of 17.72 MB: the default 16 MB would cut each rank's 177.2 GB into 11,075 "
        "parts, more than aws-s3 takes in one upload (10,000); {part_bytes} to change"
    ) in result.assumptions
    # a part size given is not changed behind the caller's back: refused, naming one that fits
    with pytest.raises(WorkloadError) as err:
        checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 16e6}))
    assert err.value.field == "part_bytes"
    assert str(err.value).endswith("give a part_bytes of at least 17.72 MB")
    fits = checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 17.72e6}))
    assert fits.save.time_s == pytest.approx(result.save.time_s)
    # a size given that prints as the least that fits is shown in bytes, not as the same figure
    with pytest.raises(WorkloadError) as err:
        checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 17.718e6}))
    assert "part_bytes 17,718,000 B cuts each rank's 177.2 GB into 10,001 parts" in str(err.value)
    # a share past 10,000 parts of 5 GiB (53.69 TB) fits no part size: more ranks are the fix.
    # 100T parameters with Adam on one DGX H100: 1.4e15 B / 8 ranks = 175 TB a rank
    huge = spec.model_copy(update={"model": spec.model.model_copy(update={"params": 100e12})})
    one_node = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    for part in (None, 5 * 2**30):
        with pytest.raises(WorkloadError) as err:
            checkpoint(builtin_catalogue, one_node, huge.model_copy(update={"part_bytes": part}))
        assert err.value.field == "nodes"
        assert str(err.value) == (
            "each rank's 175 TB is more than aws-s3 takes in one upload (10,000 parts of at most "
            "5 GiB, 53.69 TB): spread the checkpoint over more ranks (nodes, gpus_per_node)"
        )
    # a model whose shares fit keeps the default: llama3-70b, 140 GB over 32 ranks = 4.4 GB
    small = checkpoint(
        builtin_catalogue, cluster, spec.model_copy(update={"model": find_model("llama3-70b")})
    )
    assert not any(a.startswith("parts of") for a in small.assumptions)


def test_a_part_smaller_than_s3_takes_in_an_upload_of_several_is_refused(
    builtin_catalogue: Catalogue,
) -> None:
    """S3's parts are 5 MiB to 5 GiB, the last part may be smaller (AWS S3 user guide,
    multipart upload limits; data/links.yaml aws-s3 min_write_part). llama3-8b in bf16 on 1,000
    DGX H100 nodes: 16.06 GB / 8,000 ranks = 2.0 MB a rank."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1000))
    spec = CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3")
    # 1 MB parts cut each 2 MB share in two: the first is under 5 MiB
    with pytest.raises(WorkloadError) as err:
        checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 1e6}))
    assert err.value.field == "part_bytes"
    assert str(err.value) == (
        "part_bytes 1 MB is less than aws-s3 takes as a part of a larger upload (5 MiB; only the "
        "last part may be smaller): give a part_bytes of at least 5 MiB"
    )
    # 4 MB parts hold the whole share: one part, which may be any size
    one = checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"part_bytes": 4e6}))
    requests = next(b for b in one.save.bounds if b.name == "requests")
    assert requests.detail.startswith("8,000 parts of 2 MB (a rank's whole share")


def test_a_checkpoint_says_why_it_has_no_likely_range(test_catalogue: Catalogue) -> None:
    """Its JSON printed time_s_range null with no word why, where every estimate has one."""
    cluster = resolve_cluster(test_catalogue, ClusterSpec(system="dgx-h100", nodes=4))
    spec = CheckpointSpec(
        model=find_model("llama3-405b"), storage="test-200", client_link="client-400g"
    )
    result = checkpoint(test_catalogue, cluster, spec)
    assert all(p.time_s_range is None for p in result.phases)
    assert any(a.startswith("no likely range: ") for a in result.assumptions)


def test_a_per_client_cap_names_the_bound(tmp_path: Path) -> None:
    """A storage system whose per-client write limit (10 GB/s) is below the 50 GB/s client
    NIC: the save was reported "client NICs"-bound with the cap only in the detail. 16 nodes
    x 10 GB/s = 160 GB/s against 200 GB/s of storage: 810 GB / 160 GB/s = 5.0625 s, bound by
    the cap; reads are not capped, so the restore's client bound keeps its name."""
    capped = OVERRIDE.replace(
        '    aggregate_source: "test value"\n',
        '    aggregate_source: "test value"\n'
        '    per_client_write: "10 GB/s"\n'
        '    per_client_source: "test value"\n',
    )
    path = tmp_path / "capped.yaml"
    path.write_text(capped, encoding="utf-8")
    cat = load_catalogue([path], use_env=False)
    result = _to_test_storage(cat, "llama3-405b")
    assert result.save.bound == "per-client cap"
    assert result.save.time_s == pytest.approx(810e9 / (16 * 10e9))
    (cap,) = (b for b in result.save.bounds if b.name == "per-client cap")
    assert "capped by test-200 at 10.0 GB/s per client" in cap.detail
    assert result.restore.bounds[0].name == "client NICs"


def test_an_object_store_through_infiniband_is_warned_of(builtin_catalogue: Catalogue) -> None:
    """S3 is an HTTPS service, reached over a node's front-end Ethernet, not its InfiniBand
    verbs NICs: a save to it through the DGX H100's NDR NICs warns (a review: priced without a
    word); through a RoCE NIC given as the storage link, or to an NVMe-oF target over NDR, it
    does not."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    spec = CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3")
    (warning,) = checkpoint(builtin_catalogue, cluster, spec).warnings
    assert warning.startswith("aws-s3 is an object store reached over IP (HTTPS), and ndr is ")
    roce = spec.model_copy(update={"client_link": "roce-400g"})
    assert checkpoint(builtin_catalogue, cluster, roce).warnings == []
    nvme = spec.model_copy(update={"storage": "nvmeof-target"})
    assert checkpoint(builtin_catalogue, cluster, nvme).warnings == []


def test_the_request_bound_shows_the_rate_it_leaves(builtin_catalogue: Catalogue) -> None:
    """The request-rate bound, the one that sets an S3 save's time, shows the rate it leaves
    the transfer (it had shown none): llama3-8b's 16 GB in 16 MB parts from 2 DGX H100 is
    1,008 parts at 3,500 a second, 0.288 s, so 16e9 / (1008 / 3500) = 55.6 GB/s."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    spec = CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3")
    requests = next(
        b for b in checkpoint(builtin_catalogue, cluster, spec).save.bounds if b.name == "requests"
    )
    assert requests.bw_Bps == pytest.approx(16e9 / (1008 / 3500))


def test_bounds_within_five_percent_are_said_to_tie(builtin_catalogue: Catalogue) -> None:
    """An NDR client (48.75 GB/s achievable) writing to one NVMe-oF target (48.1 GB/s) binds on
    the target by 1 - 48.1 / 48.75 = 1.3 %, closer than the rates are known: the note says
    either may bind. Two targets leave the client NICs alone, and nothing is said."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    spec = CheckpointSpec(model=find_model("llama3-8b"), storage="nvmeof-target")
    result = checkpoint(builtin_catalogue, cluster, spec)
    assert result.save.bound == "storage"
    assert (
        "save: storage (333 ms) and client NICs (328 ms) are within 1.3%: either may bind"
        in result.assumptions
    )
    two = checkpoint(builtin_catalogue, cluster, spec.model_copy(update={"storage_units": 2}))
    assert not [n for n in two.assumptions if "either may bind" in n]


def test_a_cluster_spec_is_refused_with_ibcalcs_own_error(builtin_catalogue: Catalogue) -> None:
    """checkpoint() and infer() given a ClusterSpec had raised AttributeError ('no attribute
    spec', 'no attribute ranks' at tp 1: a review); WrongTypeError names what they take."""
    from ibcalc.errors import WrongTypeError
    from ibcalc.workload.infer import InferSpec, infer

    spec = ClusterSpec(system="dgx-h100", nodes=2)
    job = CheckpointSpec(model=find_model("llama3-8b"), storage="aws-s3")
    with pytest.raises(WrongTypeError, match="cluster must be a ResolvedCluster"):
        checkpoint(builtin_catalogue, spec, job)
    with pytest.raises(WrongTypeError, match="cluster must be a ResolvedCluster"):
        infer(builtin_catalogue, spec, InferSpec(model=find_model("llama3-8b")))


def test_cluster_builders_and_find_model_refuse_no_spec(builtin_catalogue: Catalogue) -> None:
    """fit_cluster(catalogue, None) and serving_cluster(catalogue, None, 8), the calls that
    build a training or serving cluster, had failed on "'NoneType' object has no attribute
    'nodes'", and find_model(None) on "... no attribute 'strip'"; they are refused as
    resolve_cluster and find_link refuse them."""
    from ibcalc.errors import UnknownNameError, WrongTypeError
    from ibcalc.workload.infer import serving_cluster
    from ibcalc.workload.train import fit_cluster

    wrong_spec = (
        "spec must be a ClusterSpec, not NoneType (ClusterSpec(system='dgx-h100', nodes=2), say)"
    )
    with pytest.raises(WrongTypeError) as info:
        fit_cluster(builtin_catalogue, None, tp=8)  # type: ignore[arg-type]
    assert str(info.value) == wrong_spec
    with pytest.raises(WrongTypeError) as info:
        serving_cluster(builtin_catalogue, None, 8)  # type: ignore[arg-type]
    assert str(info.value) == wrong_spec
    with pytest.raises(WrongTypeError) as info:
        fit_cluster(None, ClusterSpec(system="dgx-h100"), tp=8)  # type: ignore[arg-type]
    assert (
        str(info.value)
        == "catalogue must be a Catalogue, not NoneType (load_catalogue() makes one)"
    )
    with pytest.raises(UnknownNameError) as info:
        find_model(None)  # type: ignore[arg-type]
    assert str(info.value) == (
        "unknown model 'None' (known: llama3-8b, llama3-70b, llama3-405b, mixtral-8x7b, "
        "deepseek-v3)"
    )
