"""Render the model's estimates as nccl-tests output: a synthetic log with known parameters.

Used to test the checker and the calibrator end to end (a log made from known link values must
be read back, checked as healthy, and calibrated back to those values) and to show what the
model predicts in the form people compare against. The layout is that of nccl-tests 2.13 and
later (``src/common.cu``): the ``nThread`` header, the device list, the two-line column header,
one row per size with times printed as nccl-tests prints them (``%7.2f`` below 100 us, ``%7.1f``
below 10 ms, ``%7.0f`` above), and the ``Out of bounds`` / ``Avg bus bandwidth`` trailer.
Nothing here claims to be a measurement: the first line says the log is synthetic.
"""

from __future__ import annotations

from collections.abc import Sequence

from ibcalc.engine.types import Collective, DType, Estimate, busbw_factor

__all__ = ["NCCL_TESTS_TYPES", "synthesize_log"]

#: nccl-tests' type names (``test_typenames`` in ``src/common.cu``) for ibcalc's dtypes.
NCCL_TESTS_TYPES: dict[str, str] = {
    "int8": "int8",
    "uint8": "uint8",
    "int32": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "uint64": "uint64",
    "fp16": "half",
    "fp32": "float",
    "fp64": "double",
    "bf16": "bfloat16",
    "fp8": "f8e4m3",
    "fp8_e4m3": "f8e4m3",
    "fp8_e5m2": "f8e5m2",
}

_REDUCING = (Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.REDUCE)
_ROOTED = (Collective.BROADCAST, Collective.REDUCE)
_UNCHECKED_IN_PLACE = (Collective.ALL_TO_ALL, Collective.SEND_RECV)


def _time(us: float) -> str:
    if us >= 10000.0:
        return f"{us:7.0f}"
    if us >= 100.0:
        return f"{us:7.1f}"
    return f"{us:7.2f}"


def synthesize_log(
    estimates: Sequence[Estimate],
    *,
    gpu_name: str = "NVIDIA H100 80GB HBM3",
    hosts: Sequence[str] | None = None,
    note: str = "synthetic nccl-tests output rendered from ibcalc's model, not a measurement",
) -> str:
    """nccl-tests text for ``estimates`` (one collective, one cluster, increasing sizes).

    Each estimate becomes a row whose out-of-place and in-place times are the estimate's time;
    algbw and busbw follow from it as nccl-tests computes them. ``hosts`` names the nodes
    (default ``node0``, ``node1`` ...); ranks are placed ``gpus_per_node`` to a host.
    """
    if not estimates:
        raise ValueError("synthesize_log needs at least one estimate")
    first = estimates[0]
    collective = first.collective
    if any(e.collective is not collective or e.ranks != first.ranks for e in estimates):
        raise ValueError("synthesize_log renders one collective on one cluster")
    ranks, per_node = first.ranks, first.gpus_per_node
    names = list(hosts) if hosts is not None else [f"node{i}" for i in range(first.nodes)]
    if len(names) * per_node < ranks:
        raise ValueError(f"{len(names)} hosts cannot hold {ranks} ranks at {per_node} per node")
    dtype = DType.parse(first.dtype)
    type_name = NCCL_TESTS_TYPES[dtype.value]
    redop = "sum" if collective in _REDUCING or collective is Collective.SEND_RECV else "none"
    root = 0 if collective in _ROOTED else -1
    sizes = [int(e.size_bytes) for e in estimates]
    lines = [
        f"# {note}",
        f"# nThread 1 nGpus 1 minBytes {min(sizes)} maxBytes {max(sizes)} step: 2(factor) "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for rank in range(ranks):
        host = names[rank // per_node]
        device = rank % per_node
        lines.append(
            f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} on {host:>10s} device "
            f"{device:2d} [0000:{device + 1:02x}:00] {gpu_name}"
        )
    lines += [
        "#",
        "#                                                              out-of-place"
        "                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
        "     (us)  (GB/s)  (GB/s)       ",
    ]
    factor = busbw_factor(collective, ranks)
    busbws: list[float] = []
    for est in estimates:
        time_us = est.time_s * 1e6
        algbw = est.size_bytes / est.time_s / 1e9
        busbw = algbw * factor
        busbws.append(busbw)
        timing = f"{_time(time_us)} {algbw:7.2f} {busbw:7.2f}"
        wrong_ip = "N/A" if collective in _UNCHECKED_IN_PLACE else "0"
        lines.append(
            f"{int(est.size_bytes):12d} {est.count:13d} {type_name:>9s} {redop:>7s} {root:7d} "
            f"{timing} {0:6d} {timing} {wrong_ip:>6s}"
        )
    lines += [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.6g} ",
        "#",
        "",
    ]
    return "\n".join(lines)
