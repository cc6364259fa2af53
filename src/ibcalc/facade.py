"""The library facade: one call from a cluster description and a collective to an Estimate.

``estimate`` resolves the cluster (``cluster.resolve.resolve_cluster``), applies nccl-tests' size
conventions (``--size`` is the total buffer for all-gather, reduce-scatter and all-to-all, and
per-rank counts are rounded as nccl-tests rounds them), runs the cost engine and returns an
:class:`~ibcalc.engine.types.Estimate` with every assumption it made. The cost model's constants
are a :class:`~ibcalc.engine.params.CostParams`: the built-in ``data/cost_params.yaml`` unless the
caller passes others (``ibcalc.catalogue.cost_params.load_cost_params`` reads override files).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import NamedTuple, SupportsFloat, cast

from ibcalc.booleans import expect_bool
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import suggest
from ibcalc.catalogue.models import Catalogue, System
from ibcalc.catalogue.releases import RELEASE_NOTE_START, newest_release
from ibcalc.cluster.resolve import (
    INTRA_ONLY,
    TWO_NODE_TREE_NOTE,
    ClusterSpec,
    ResolvedCluster,
    require_collectives,
    resolve_cluster,
    sharp_hint,
)
from ibcalc.engine.algorithms.alltoall import alltoall_messages, message_cost_s, ties_pairwise
from ibcalc.engine.band import regime_of, time_range, transport_class, wire_floor_s
from ibcalc.engine.base import Timing, Topology, simple_count, simple_floor
from ibcalc.engine.params import CostParams
from ibcalc.engine.plan import (
    REDUCTIONS,
    UNTUNED,
    Candidate,
    Plan,
    applies_but_for_dtype,
    dtype_allows,
    plan_for,
    switch_dtypes_words,
    through_ib_sharp,
)
from ibcalc.engine.select import NCCL_ALGORITHMS, refuse, select_on
from ibcalc.engine.types import (
    COST_PARAMETERS_NOTE,
    MESSAGE_EXTRAPOLATION_HINT,
    SIMPLE_EXTRAPOLATION_HINT,
    SIMPLE_PER_STEP_NOTE,
    Algorithm,
    Collective,
    Cost,
    DType,
    Estimate,
    Protocol,
    algorithm_key,
    busbw_factor,
)
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    SizeTooSmallError,
    UnitError,
    UnknownNameError,
    WrongTypeError,
    expect_type,
)
from ibcalc.memo import IdentityMemo
from ibcalc.textsafe import shown
from ibcalc.units import (
    BITS_PER_BYTE,
    MAX_ENGINE_BYTES,
    GiB,
    MiB,
    format_share,
    format_size,
    format_time,
    memory_size,
    sizes_like,
)

__all__ = [
    "MEASURED_DROP_MAX",
    "CollectivePlan",
    "QuickEstimate",
    "as_collective",
    "dtype_suggestions",
    "effective_size",
    "estimate",
    "estimate_many",
    "estimate_on",
    "parse_collective",
    "parse_dtype",
]


def parse_dtype(dtype: DType | str) -> DType:
    """``dtype`` as a :class:`DType`; :class:`~ibcalc.errors.UnitError` naming them if unknown."""
    if isinstance(dtype, DType):
        return dtype
    if not isinstance(dtype, str):
        # None or 4 had raised AttributeError from deep inside
        raise UnitError(
            f"dtype {dtype!r} is not a type name (use one of {', '.join(DType.names())})"
        )
    try:
        return DType.parse(dtype)
    except ValueError:
        close = dtype_suggestions(dtype, n=1)
        if close:
            hint = f"did you mean {' or '.join(close)}?"
        else:
            hint = f"use one of {', '.join(DType.names())}"
        raise UnitError(f"unknown dtype {shown(dtype)} ({hint})") from None


#: Bit widths an element type's name may carry (``float8``, ``int64``).
_DTYPE_WIDTHS = frozenset(t.bytes * BITS_PER_BYTE for t in DType)


def dtype_suggestions(name: str, n: int = 3) -> list[str]:
    """The element type names closest to ``name``, at most ``n``: where it carries a width in
    bits that types have, the types of that width first, of its kind where it says one (int,
    or float: ``f``, ``half``, ``double``, ``bf``), the members before nccl-tests' spellings
    ('float8' had been offered float, which is fp32: it is fp8; 'half8' fp8, not half); else
    the closest of all the names in their sorted order ('fp33': fp32, 'int4': int64, 'fp':
    fp16). An empty list for a blank name."""
    key = name.strip().lower()
    if not key:
        return []
    members = [t.value for t in DType]
    names = members + [spelt for spelt in DType.names() if spelt not in members]
    digits = re.search(r"\d{1,3}", key)
    width = int(digits.group()) if digits is not None else None
    same: list[str] = []
    if width in _DTYPE_WIDTHS:
        integer = "int" in key
        floating = not integer and any(word in key for word in ("f", "half", "double", "bf"))
        same = [
            spelt
            for spelt in names
            if (kind := DType.parse(spelt)).bytes * BITS_PER_BYTE == width
            and (not integer or "int" in kind.value)
            and (not floating or "int" not in kind.value)
        ]
    ranked = suggest(key, same, n=n) + same if same else suggest(key, DType.names(), n=n)
    return list(dict.fromkeys(ranked))[:n]


def _choice(
    what: str, value: object, kind: type[Algorithm] | type[Protocol]
) -> Algorithm | Protocol | None:
    """``value`` as a member of ``kind``: a member or None as given, a name in any case
    (``"ring"``, ``"ll128"``); :class:`~ibcalc.errors.UnknownNameError` otherwise."""
    if value is None or isinstance(value, kind):
        return value
    names = [member.value for member in kind]
    if isinstance(value, str) and value.strip().lower() == "auto":
        # the command line's default, NCCL's choice: None here ('auto' had been refused with
        # "did you mean pat?": review DR)
        return None
    if isinstance(value, str):
        # NCCL's own names too: CollnetDirect, collnet_chain, NVLS_TREE (CollnetDirect had been
        # refused where CollnetChain was taken: a library user's review)
        # separators only where NCCL's names have them ('r_i_n_g' had been taken as ring)
        key = algorithm_key(value)
        for member in kind:
            if member.value.lower() == key:
                return member
        lower = {name.lower(): name for name in names}
        close = [lower[c] for c in suggest(value.strip().lower(), list(lower), n=1)]
        raise UnknownNameError(what, value, close or names, close=bool(close))
    raise UnknownNameError(what, str(value), names, close=False)


def as_algorithm(value: object) -> Algorithm | None:
    """``value`` as an algorithm: a member or None as given, a name in any case as
    :func:`estimate_on` reads ``algorithm``; :class:`~ibcalc.errors.UnknownNameError` otherwise."""
    return cast(Algorithm | None, _choice("algorithm", value, Algorithm))


def as_collective(value: object) -> Collective:
    """``value`` as a collective: a member as given, a name as :func:`parse_collective` reads;
    :class:`~ibcalc.errors.UnknownNameError` for anything else."""
    if isinstance(value, Collective):
        return value
    if isinstance(value, str):
        return parse_collective(value)
    raise UnknownNameError("collective", str(value), [c.command for c in Collective], close=False)


def parse_collective(name: str) -> Collective:
    """The collective ``name`` means: ``allreduce``, ``all_reduce`` (nccl-tests), any case.

    :class:`~ibcalc.errors.UnknownNameError` with the closest names if none.
    """
    found = Collective.lookup(name)
    if found is None:
        names = [*(c.command for c in Collective), *(c.value for c in Collective)]
        close = suggest(name.lower(), names)
        if not close:  # 'foo': say what the names are
            raise UnknownNameError("collective", name, [c.command for c in Collective], close=False)
        # one name per collective: 'allreduc' had been offered 'allreduce, all_reduce' (a review)
        by_command = {c.value: c.command for c in Collective}
        raise UnknownNameError(
            "collective", name, list(dict.fromkeys(by_command.get(n, n) for n in close))
        )
    return found


#: numpy's kinds of real numbers (signed, unsigned, float): what a size held in an array may be.
_REAL_KINDS = ("i", "u", "f")
#: What a numpy array of another kind holds, for its refusal.
_KIND_WORDS = {"b": "booleans", "c": "complex numbers", "U": "text", "S": "bytes", "O": "objects"}


def check_size(size_bytes: object) -> float:
    """``size_bytes`` as a float, refused as ``parse_size`` refuses on the command line
    (:class:`~ibcalc.errors.UnitError`, in its words) when it is not a number of bytes (a
    str, a bool), NaN, negative, infinite or over 10^21 B (``units.MAX_ENGINE_BYTES``; the
    command line stops a size it reads at 1 PiB). Numbers of
    any kind are read (int, float, numpy's, Fraction, Decimal). Zero is left to the rounding,
    which says it is smaller than one element."""
    # numpy's bool_ too, by its name: it converts to 1.0 and had been read as 1 B (review DR);
    # and numpy's complex, which converts too, dropping its imaginary part (np.complex128(1e9)
    # had been priced as 1 GB, and a plan's quick had raised TypeError: a library user's review)
    # (a real number is asked first: the SupportsFloat protocol's check takes ~3 us)
    if (
        isinstance(size_bytes, bool)
        or type(size_bytes).__name__ in ("bool", "bool_")
        or (
            not isinstance(size_bytes, numbers.Real)
            and (
                not isinstance(size_bytes, SupportsFloat) or isinstance(size_bytes, numbers.Complex)
            )
        )
    ):
        raise UnitError(
            f"size {shown(size_bytes)} is not a number of bytes (parse_size reads '10GB')"
        )
    dtype = getattr(size_bytes, "dtype", None)
    if getattr(dtype, "kind", "f") not in _REAL_KINDS:
        # a numpy array of one element converts whatever it holds: a bool, text or an object
        # (np.array(True) had been read as 1 B, np.array('1e9') priced as 1 GB)
        held = _KIND_WORDS.get(str(getattr(dtype, "kind", "")), "values that are no real numbers")
        raise UnitError(
            f"size {shown(size_bytes)} is not a number of bytes (a numpy array of {held})"
        )
    try:
        value = float(size_bytes)
    except OverflowError:  # an int of more digits than a float holds
        raise UnitError(
            f"size {shown(size_bytes)} B is absurdly large (the limit is 1e21 B)"
        ) from None
    except (TypeError, ValueError):
        # a numpy array of one size has __float__ but refuses it ('only 0-dimensional arrays
        # can be converted'), a notebook's df.size.values[i:i+1]; a review
        raise UnitError(
            f"size {shown(size_bytes)} is not a number of bytes (one size: give an element, "
            "not an array)"
        ) from None
    if value != value:
        raise UnitError("size is not a number (NaN)")
    if value < 0:
        raise UnitError(f"size {value:g} B is negative")
    if value > MAX_ENGINE_BYTES:
        what = "infinite" if value == float("inf") else "absurdly large (the limit is 1e21 B)"
        raise UnitError(f"size {value:g} B is {what}")
    return value


def effective_size(
    collective: Collective, size_bytes: float, ranks: int, dtype: DType | str
) -> float:
    """The size nccl-tests actually runs for a requested ``size_bytes``.

    See docs/model.md#size-and-count-rounding. Counts are whole elements; for all-gather,
    reduce-scatter and all-to-all the per-rank count is ``floor(S / elt / n)``, rounded down to a
    multiple of 16 bytes for all-gather and reduce-scatter (all-to-all runs print sizes that are
    not: 64 B on 16 ranks).
    """
    size_bytes = check_size(size_bytes)
    dt = parse_dtype(dtype)
    elt = dt.bytes
    count = int(size_bytes // elt)
    if collective.per_rank_buffer:
        per_rank = count // ranks
        if collective is not Collective.ALL_TO_ALL:
            # all-gather and reduce-scatter align each rank's share to 16 bytes; all-to-all does
            # not (published 16-rank alltoall runs print 64 B: one 4-byte element per peer)
            per_rank -= per_rank % max(1, 16 // elt)
        size = float(per_rank * elt * ranks)
    else:
        size = float(count * elt)
    if count == 0:
        raise SizeTooSmallError(
            f"size {format_size(size_bytes)} is smaller than one {dt.value} element ({elt} B)"
        )
    if size <= 0:
        raise SizeTooSmallError(
            f"size {format_size(size_bytes)} is too small for {collective.value} of {dt.value} "
            f"over {ranks} ranks (nccl-tests rounds it to 0 bytes)"
        )
    return size


def _why_equivalent(cost: Cost, topo: Topology, collective: Collective) -> str:
    if cost.algorithm is Algorithm.TREE:
        # 2 NVL72 domains of 9 trays each had read "on 2 nodes" under a headline of 18 nodes
        node = topo.node
        return f"on 2 {node}s (or 2 sites) the tree sends only S per {node} over the network"
    if cost.algorithm in (Algorithm.HIERARCHICAL, Algorithm.RHD):
        # an all-reduce's two phases send twice an all-gather's (N-1)/N (docs/model.md, the
        # equivalent-busbw table); the note had said (N-1)/N for both
        share = "2(N-1)/N" if collective is Collective.ALL_REDUCE else "(N-1)/N"
        return (
            f"each {topo.node} sends {share} of its data over its NICs, while busbw's factor "
            f"counts ranks, not {topo.node}s"
        )
    if cost.algorithm is Algorithm.NVLS and through_ib_sharp(cost.algorithm, topo.domains):
        # NVLS across domains runs only on SHARP (innetwork.nvls): its note had named the
        # NVSwitch alone, where the bottleneck line says "network into the SHARP switch tree"
        return (
            f"the NVSwitch reduces the data in each {topo.node} (NVLink SHARP) and the network "
            "switches between them (SHARP)"
        )
    if cost.algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE):
        return "the NVSwitch reduces or multicasts the data (NVLink SHARP)"
    return "the network switches reduce the data (SHARP)"


#: The deepest drop in time at an algorithm switch that a steady published sweep shows: 2 x p5
#: on EFA, all-reduce at 64 KiB -> 1 MiB, 135.8 -> 125.7 us (KeitaW/p5-nccl-test) and 135 -> 123
#: us (awsome-distributed-training), 7-9 % (docs/model.md, "time falls"; NREL Kestrel's noisy
#: 16-node all-gather, whose two columns differ by over 10 % at 8 sizes from 4 KiB, falls 22 %
#: and is not counted). tests/reference/test_published_figures.py re-derives it from those rows.
MEASURED_DROP_MAX = 0.09

#: How an estimate's note that nccl-tests' rounding changed the size begins (``gap --tp`` passes
#: its all-reduce's on).
SIZE_ROUNDED_NOTE = "size rounded to"

#: What an estimate that SHARP (CollNet) carries says of the evidence behind it.
#: tests/reference/test_published_figures.py re-derives its figures from the published rows.
SHARP_EVIDENCE_NOTE = (
    "IB SHARP (CollNet, and NVLS across scale-up domains) is checked against two published "
    "CollNet clusters only: 8 x H100 within 6 % from "
    "512 MiB up, and 4 x A100 (NCCL not stated, of the 2.12 era) slower than modelled at every "
    "size, 1.8-2.5x from 64 KiB to 16 MiB; read this estimate as the optimistic end "
    "(docs/model.md#collnet-direct-and-chain)"
)


def estimate_on(
    cluster: ResolvedCluster,
    collective: Collective | str,
    size_bytes: float,
    *,
    dtype: DType | str = DType.FP32,
    algorithm: Algorithm | str | None = None,
    protocol: Protocol | str | None = None,
    params: CostParams | None = None,
    sharp_what_if: bool = True,
) -> Estimate:
    """Estimate ``collective`` of ``size_bytes`` on an already resolved cluster, with the cost
    parameters ``params`` (default: the built-in ones). The collective, algorithm and protocol
    may be given by name (``"allreduce"``, ``"ring"``, ``"LL128"``, any case).

    ``size_bytes`` is nccl-tests' size in bytes: the whole buffer of an all-gather,
    reduce-scatter or all-to-all (not one rank's share), rounded as nccl-tests rounds it to
    whole elements per rank (:func:`effective_size`; ``Estimate.size_bytes`` is the size run).
    The estimate's times are in seconds (``time_s``, ``time_s_range``), its bandwidths in bytes
    per second (``algbw_Bps``, ``busbw_Bps``), per direction.

    ``sharp_what_if``: on a fabric with SHARP left off, an all-reduce's assumptions say what
    turning it on would do at this size (a second selection; callers that read no assumptions,
    such as a sweep, pass False and keep the plain hint).

    Raises (every one an :class:`~ibcalc.errors.IbcalcError`): :class:`~ibcalc.errors.UnitError`
    for a size that is no number of bytes, negative, NaN or past 1e21 B, and for an unknown
    dtype, :class:`~ibcalc.errors.SizeTooSmallError` for one that rounds to no element,
    :class:`~ibcalc.errors.UnknownNameError` for an unknown collective, algorithm or protocol,
    :class:`~ibcalc.errors.AlgorithmNotApplicableError` for a forced algorithm or protocol that
    does not apply, :class:`~ibcalc.errors.WrongTypeError` for a cluster or
    parameters of the wrong type."""
    _expect_cluster(cluster, params)
    # "no" is truthy: sharp_what_if="no" had run the what-if (a review)
    sharp_what_if = expect_bool(sharp_what_if, "sharp_what_if")
    params = params if params is not None else builtin_cost_params()
    dt = parse_dtype(dtype)
    coll, algo, proto = by_name(collective, algorithm, protocol)
    plan = plan_for(coll, cluster.topology, params, dtype=dt)
    return _estimate(cluster, plan, size_bytes, algo, proto, what_if=sharp_what_if)


def _expect_cluster(cluster: object, params: object) -> None:
    """A resolved cluster that runs collectives and cost parameters (or None), or
    :class:`WrongTypeError` (:class:`ClusterError` for a cluster resolved for none)."""
    expect_type(
        cluster,
        ResolvedCluster,
        "cluster",
        "resolve_cluster(catalogue, spec) makes one; estimate() takes a ClusterSpec",
    )
    assert isinstance(cluster, ResolvedCluster)
    require_collectives(cluster)
    if params is not None:
        expect_type(
            params,
            CostParams,
            "params",
            "ibcalc.load_cost_params() makes one",
        )


def by_name(
    collective: Collective | str,
    algorithm: Algorithm | str | None = None,
    protocol: Protocol | str | None = None,
) -> tuple[Collective, Algorithm | None, Protocol | None]:
    """The collective, algorithm and protocol as members, each given as one or by name
    (``"allreduce"``, ``"ring"``, ``"LL128"``, any case);
    :class:`~ibcalc.errors.UnknownNameError` with the closest names for a name that is none."""
    return (
        as_collective(collective),
        as_algorithm(algorithm),
        cast(Protocol | None, _choice("protocol", protocol, Protocol)),
    )


def cluster_notes(cluster: ResolvedCluster, collective: Collective) -> list[str]:
    """What was assumed of ``cluster``, as it bears on ``collective``: in-network reduction
    (CollNet, NVLS across nodes) serves all-reduce only, so another collective is not offered
    SHARP, and is told that ``--sharp`` is not used (it was offered SHARP, and --sharp then
    changed nothing, unsaid); a torus's bisection bounds all-to-all alone, so only all-to-all
    is told of it (``ResolvedCluster.alltoall_notes``)."""
    notes = [*cluster.assumptions, *cluster.process_notes]
    if collective is not Collective.ALL_TO_ALL:
        # a torus's bisection bounds all-to-all alone (the note had shown on every estimate)
        notes = [n for n in notes if n not in cluster.alltoall_notes]
    if collective is Collective.SEND_RECV:
        # a partial mesh's pair rate prices send/recv alone
        notes += cluster.p2p_notes
    if collective is Collective.ALL_REDUCE or cluster.inter is None:
        return notes
    # SHARP and NCCL's two-node tree serve all-reduce only
    notes = [n for n in notes if n not in (sharp_hint(cluster.inter.id), TWO_NODE_TREE_NOTE)]
    out = cluster.topology.out
    if out is not None and out.sharp:
        notes.append(
            f"SHARP ({{sharp}}) is not used: ibcalc prices in-network reduction (CollNet, "
            f"NVLS across nodes) for all-reduce only, not {collective.value}"
        )
    return notes


#: The algorithms SHARP brings to an all-reduce across domains: CollNet direct and chain, and NVLS
#: (NCCL runs NVLS across nodes only with IB SHARP; the what-if runs only across domains).
SHARP_ALGORITHMS = (Algorithm.COLLNET_DIRECT, Algorithm.COLLNET_CHAIN, Algorithm.NVLS)


def _sharp_what_if(
    link_id: str,
    plan: Plan,
    size_bytes: float,
    best: Cost,
    *,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
) -> str:
    """The SHARP hint of an all-reduce on a fabric with SHARP left off, with what turning it on
    would do at this size: the same selection on the same topology with SHARP on. A bare "enable
    with --sharp" had been shown where SHARP gains nothing (16 x DGX H100, 10 GB: nvls/Simple
    51.3 ms against nvlstree/Simple 51.5 ms; 2 nodes: NCCL's tuner keeps nvlstree)."""
    with_sharp, others = select_on(_with_sharp(plan), size_bytes, algorithm, protocol)
    lead = f"{link_id} supports SHARP (CollNet); {{sharp}} "
    pick = f"{with_sharp.algorithm.value}/{with_sharp.protocol.value}"
    if pick == f"{best.algorithm.value}/{best.protocol.value}":
        if algorithm is not None:
            return lead + _FORCED_UNCHANGED
        # the reason is what rules SHARP out at every size where there is one, not the tuner
        why = _sharp_ruled_out(plan, [with_sharp, *others], protocol)
        return _sharp_unchanged(link_id, why or f"NCCL's tuner keeps {pick} here")
    ratio = with_sharp.time_s / best.time_s
    within = plan.params.reporting.notably_faster
    at = f"{pick}, {format_time(with_sharp.time_s)}"
    if ratio < 1 - within:
        return lead + f"would make this all-reduce {1 / ratio:.2f}x faster ({at})"
    # within the tie threshold, said as faster or slower ('would change ... by -1.9%' had left
    # the sign's meaning to the reader: review DG)
    if ratio <= 1:
        return (
            lead + f"would make this all-reduce {format_share(1 - ratio)} faster, a near tie ({at})"
        )
    # NCCL's tuner and the model disagreeing: the tuner's pick priced slower
    return lead + (
        f"would make this all-reduce {format_share(ratio - 1)} slower: NCCL's tuner ranks {pick} "
        f"first, the model prices it slower ({at})"
    )


#: the SHARP hint's words where an algorithm is forced (``{algorithm}``: the option's name)
_FORCED_UNCHANGED = "would not change this all-reduce ({algorithm} forced)"


def _with_sharp(plan: Plan) -> Plan:
    """``plan`` on the same topology with SHARP turned on."""
    return plan_for(plan.collective, _sharp_on(plan.topo), plan.params, dtype=plan.dtype)


def _sharp_on(topo: Topology) -> Topology:
    """``topo`` with SHARP turned on across its domains."""
    assert topo.out is not None
    return replace(topo, out=topo.out.model_copy(update={"sharp": True}))


def _sharp_ruled_out(
    plan: Plan, with_sharp: Sequence[Cost | Timing], protocol: Protocol | None
) -> str | None:
    """Why turning SHARP on changes no size of this all-reduce (``with_sharp``: the candidates
    with SHARP on), or None where it may; the estimate's hint and a sweep's say the same, the
    first of: a protocol forced other than Simple, the element type, a setting that switches
    Simple off, then, where no SHARP algorithm is a candidate, a setting that switches one off
    or the cluster (a sweep had named another reason than its estimates, a review)."""
    enabled = plan.tuner.nccl_tuner
    if protocol is not None and protocol is not Protocol.SIMPLE:
        return f"{protocol.value} forced ({{protocol}}), and SHARP runs Simple"
    # SHARP reduces 16- and 32-bit types; with those, the cluster is what rules it out (CollNet
    # takes at most 8 GPUs per domain; NVLS across nodes needs NVLS on): the type had been
    # blamed for 36 GB200 trays with --no-nvls
    if not dtype_allows(Algorithm.COLLNET_DIRECT, plan.collective, plan.dtype, plan.topo.domains):
        return f"SHARP does not reduce {plan.dtype.value}"
    if not enabled.protocols.get(Protocol.SIMPLE, 1):
        return plan.tuner.provenance["nccl_tuner.protocols"].text + "; SHARP runs Simple"
    if any(c.algorithm in SHARP_ALGORITHMS for c in with_sharp):
        return None
    if any(not enabled.algorithms.get(a, 1) for a in SHARP_ALGORITHMS):
        # the settings' words where they switched SHARP's algorithms off: the cluster had been
        # blamed for --nccl-algo ^collnetdirect,... (a review)
        return plan.tuner.provenance["nccl_tuner.algorithms"].text
    if plan.topo.wan is not None:
        # across sites the all-reduce crosses the WAN, which no SHARP tree spans: the
        # collnet and NVLS limits had been named for 2 sites of DGX H100 (review CW)
        return "a SHARP tree does not span sites (the all-reduce crosses the WAN between them)"
    return (
        "no SHARP algorithm applies to this cluster (CollNet takes at most "
        f"{plan.params.nccl_tuner.collnet_max_local_ranks} GPUs per scale-up domain; NVLS "
        "across nodes needs NVLS inside them)"
    )


def sharp_unused_reason(
    cluster: ResolvedCluster,
    dtype: DType | str,
    *,
    params: CostParams | None = None,
    algorithm: Algorithm | None = None,
) -> str | None:
    """Why no all-reduce of ``dtype`` runs on SHARP on ``cluster`` at any size, with SHARP on (a
    cluster with it off is asked as if it were on: why turning it on would change nothing): an
    algorithm forced other than a SHARP one, or the first reason :func:`_sharp_ruled_out` gives
    (the element type, a setting, the cluster). None where a SHARP algorithm is a candidate, so
    that NCCL's tuner decides size by size: nccl-check's and train's notes had blamed the tuner
    where fp64 or int8 ruled SHARP out (review CR)."""
    if algorithm is not None and algorithm not in SHARP_ALGORITHMS:
        return f"{algorithm.value} forced"
    params = params if params is not None else builtin_cost_params()
    topo = cluster.topology
    if topo.out is not None and not topo.out.sharp:
        # asked as if SHARP were on; the plan is built for this one question, not kept in the
        # plans' cache (a layout search asks it of each search's whole cluster: kept, those
        # plans had made its garbage collection about 10 % of its time slower)
        plan = Plan(Collective.ALL_REDUCE, _sharp_on(topo), params, dtype=parse_dtype(dtype))
    else:
        plan = plan_for(Collective.ALL_REDUCE, topo, params, dtype=parse_dtype(dtype))
    # which algorithms apply does not depend on the size: the candidates at one size say
    return _sharp_ruled_out(plan, [c.timing for c in plan.scored(float(MiB))], None)


def _sharp_unchanged(link_id: str, why: str) -> str:
    """The SHARP hint where turning SHARP on would not change an all-reduce, and why (the
    estimate's what-if and a sweep's type note say it alike)."""
    return f"{link_id} supports SHARP (CollNet); {{sharp}} would not change this all-reduce: {why}"


def _fp8_ring_words(plan: Plan, algorithm: Algorithm) -> str:
    """Why NCCL ranks a ring of an FP8 reduction lower, where it does (NCCL 2.30.7 multiplies
    its estimate by ``fp8_ring_penalty`` above ``fp8_ring_penalty_above_ranks``): a 2 x DGX H100
    fp8 all-reduce of 1 GiB had said ring/Simple would be 1.27x faster without saying why."""
    nccl = plan.tuner.nccl_tuner
    if (
        algorithm is not Algorithm.RING
        or not plan.dtype.is_fp8
        or plan.collective not in REDUCTIONS
        or plan.topo.ranks <= nccl.fp8_ring_penalty_above_ranks
    ):
        return ""
    return (
        f" (it multiplies its ring estimate of an {plan.dtype.value} reduction on more than "
        f"{nccl.fp8_ring_penalty_above_ranks} ranks by {nccl.fp8_ring_penalty:g}, keeping long "
        "lossy chains a last resort)"
    )


def _switch_dtype_notes(plan: Plan) -> list[str]:
    """In-switch reductions (NVLS, NVLS-tree) the cluster offers but the element type rules
    out, said once: an fp8 or int8 all-reduce on DGX H100 had left NVLS out of its candidates
    without a word (a review)."""
    topo, collective = plan.topo, plan.collective
    shut = [
        a
        # CollNet too: with --sharp an fp8 all-reduce had dropped it unsaid (a review)
        for a in (
            Algorithm.NVLS,
            Algorithm.NVLS_TREE,
            Algorithm.COLLNET_DIRECT,
            Algorithm.COLLNET_CHAIN,
        )
        if not dtype_allows(a, collective, plan.dtype, topo.domains)
        and applies_but_for_dtype(a, collective, topo, plan.params)
    ]
    across_sites = (
        [
            "SHARP ({sharp}) is not used: a SHARP tree does not span sites (the all-reduce "
            "crosses the WAN between them)"
        ]
        # SHARP on and the all-reduce across sites: said, as train says it (the estimate and
        # the sweep had said nothing: review CX)
        if collective is Collective.ALL_REDUCE
        and topo.out is not None
        and topo.out.sharp
        and topo.wan is not None
        else []
    )
    if not shut:
        return across_sites
    # each in its own words: NVLS across nodes reduces in IB SHARP, NVLS-tree in NVLink SHARP
    # (one sentence for both had blamed IB SHARP for NVLS-tree under --sharp, a review)
    words: dict[str, list[str]] = {}
    for a in shut:
        words.setdefault(switch_dtypes_words(a, topo.domains), []).append(a.value)
    return [
        f"{' and '.join(names)} {'are' if len(names) > 1 else 'is'} not offered: {why} "
        f"({plan.dtype.value} given)"
        for why, names in words.items()
    ] + across_sites


def _estimate(
    cluster: ResolvedCluster,
    plan: Plan,
    size_bytes: float,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    *,
    what_if: bool = True,
) -> Estimate:
    # its derivation writes the sizes it works out in the units the size came in (GiB for 4 GiB;
    # a size that is no number is refused first, as it was)
    with sizes_like(check_size(size_bytes)):
        return _estimate_sized(cluster, plan, size_bytes, algorithm, protocol, what_if=what_if)


def _estimate_sized(
    cluster: ResolvedCluster,
    plan: Plan,
    size_bytes: float,
    algorithm: Algorithm | None,
    protocol: Protocol | None,
    *,
    what_if: bool,
) -> Estimate:
    collective, dt, params = plan.collective, plan.dtype, plan.params
    size = effective_size(collective, size_bytes, cluster.ranks, dt)
    topo = cluster.topology
    try:
        best, others = select_on(plan, size, algorithm, protocol)
    except AlgorithmNotApplicableError as exc:
        # only where the reason is the node count: nvls on NVLink 3, a tree broadcast, a ring
        # all-to-all need no second node, and had been told to add one (review DQ)
        reason = exc.template
        up = topo.up.link_id if topo.up is not None else ""
        if (
            cluster.nodes == 1
            and ("several nodes" in reason or "two nodes" in reason)
            # PXN on a link that is no NVLink: no second node lifts it (review DS)
            and not ("over NVLink" in reason and not up.startswith("nvlink"))
            and any(a.startswith(INTRA_ONLY) for a in cluster.assumptions)
        ):
            # --intra alone is one node: a forced multi-node algorithm (hierarchical, PXN,
            # CollNet) had been priced on 2 NDR-joined nodes before; say why it has none now
            # (review DP); PAT needs one GPU per node as well (review DS)
            also = ", {gpus_per_node} 1" if "one GPU per node" in reason else ""
            raise AlgorithmNotApplicableError(
                f"{exc.template}; 1 node was assumed, as only a scale-up link is given "
                "({nodes}" + also + " and {inter} to join more)",
                field=exc.field,
            ) from None
        raise
    notes = cluster_notes(cluster, collective)
    if not params.tuner_view().nccl_tuner.algorithms.get(Algorithm.TREE, 1):
        # no tree to halve anything: a release before trees (--nccl-version 2.2 had said both
        # "without tree" and "2 nodes let NCCL's tree halve network traffic"), or a log's
        # NCCL_ALGO without it
        notes = [n for n in notes if n != TWO_NODE_TREE_NOTE]
    if what_if and cluster.inter is not None and topo.out is not None:
        hint = sharp_hint(cluster.inter.id)
        if hint in notes:
            notes[notes.index(hint)] = _sharp_what_if(
                cluster.inter.id, plan, size, best, algorithm=algorithm, protocol=protocol
            )
    # what was laid over the built-in cost parameters: override files, an NCCL release
    notes += cost_parameter_notes(params)
    if size != size_bytes:
        whole = (
            f"into whole 16-byte shares for {cluster.ranks} ranks"
            if collective.per_rank_buffer and collective is not Collective.ALL_TO_ALL
            else f"into whole elements for each of {cluster.ranks} ranks"
            if collective.per_rank_buffer
            else f"to whole {dt.value} elements ({dt.bytes} B)"
        )
        notes.append(f"{SIZE_ROUNDED_NOTE} {size:.0f} B as nccl-tests does: {whole}")
    # the candidates NCCL's tuner ranks within the tie threshold of its choice: which of them a
    # real run gets turns on details of its tuner this model does not carry (a near tie, said as
    # one, and the likely range covers them); none when the caller forced a choice
    within = params.reporting.notably_faster
    forced = algorithm is not None or protocol is not None
    # NCCL does not tune point-to-point work: its paths are a near tie only where their times
    # as priced are (a tapered rail-optimized fabric slows pairwise x3.5 beside PXN, 1.7 %
    # apart in the tuner's view without the taper, had widened the range to x4.2)
    untuned = collective in UNTUNED

    def tie_time(c: Cost) -> float:
        return c.time_s if untuned else c.selection_time_s

    # NCCL's pick far behind a candidate it also runs (the least sure estimate, below): the
    # likely range reaches down to that candidate too, as a real run may switch to it sooner
    premature: list[Cost] = []
    ties = (
        []
        if forced
        else [
            c
            for c in others
            if c.algorithm in NCCL_ALGORITHMS and 0 <= tie_time(c) / tie_time(best) - 1 < within
        ]
    )
    if algorithm is None or protocol is None:
        # with the protocol (or the algorithm) forced, NCCL's pick is among the candidates of
        # that protocol (algorithm), and so is any faster one worth naming (--proto simple had
        # named tree/LL128 'ranked lower', which NCCL ranks first, and left out nvlstree/Simple,
        # faster and ranked second)
        pool = [
            c
            for c in others
            if (protocol is None or c.protocol is protocol)
            and (algorithm is None or c.algorithm is algorithm)
        ]
        # NCCL does not tune point-to-point work (all-to-all, send/recv): whether PXN carries it
        # follows the topology and NCCL_PXN_DISABLE, and ibcalc takes the faster path (it had
        # said "the one NCCL's tuner would pick", a tuner that does not exist there)
        p2p = collective in (Collective.ALL_TO_ALL, Collective.SEND_RECV)
        chosen = f"{best.algorithm.value}/{best.protocol.value}"
        named_release = any(o.startswith(RELEASE_NOTE_START) for o in params.origins[1:])
        if collective is Collective.ALL_TO_ALL and algorithm is not None:
            # the algorithm forced, the protocol is what was picked (it had read 'the faster
            # of the paths' for pairwise forced where PXN ties it)
            pick = (
                f"{chosen}, the faster of {best.algorithm.value}'s protocols here (NCCL does "
                "not tune point-to-point work)"
            )
        elif collective is Collective.ALL_TO_ALL and ties_pairwise(best, others):
            # the same messages and the network's bytes bound alike: no faster path, and PXN
            # is the one NCCL takes where it can (NCCL_P2P_PXN_LEVEL's default, 2)
            pick = (
                f"{chosen}, as fast here as pairwise/{best.protocol.value} and the path NCCL "
                "takes where it can (NCCL does not tune point-to-point work; whether PXN "
                "carries it follows the topology and NCCL_PXN_DISABLE)"
            )
        elif collective is Collective.ALL_TO_ALL and not any(
            c.algorithm is Algorithm.PXN for c in (best, *others)
        ):
            # one node, GPUs on PCIe, a release before PXN: there is no other path to be
            # faster than (it had read 'the faster of the paths NCCL can take here')
            pick = (
                f"{chosen}, NCCL's one path here (PXN does not apply; NCCL does not tune "
                "point-to-point work)"
            )
        elif collective is Collective.ALL_TO_ALL:
            pick = (
                f"{chosen}, the faster of the paths NCCL can take here (NCCL does not tune "
                "point-to-point work; whether PXN carries it follows the topology and "
                "NCCL_PXN_DISABLE)"
            )
        elif p2p:
            pick = f"{chosen}, NCCL's path (it does not tune point-to-point work)"
        elif named_release:
            pick = f"{chosen}, the one NCCL's tuner would pick here"  # the release is a note
        else:
            # which NCCL's tuner, where no release was named: its choice is 2.30.7's, and an
            # older one's may differ (a review: only JSON and --explain had said so)
            pick = f"{chosen}, the one NCCL {newest_release()}'s tuner would pick here"
        if protocol is not None:
            note = f"algorithm: {pick} among {protocol.value} ones ({{protocol}} forced; "
            note += "{algorithm} to force another)"
        elif algorithm is None:
            note = f"algorithm: {pick} ({{algorithm}} to force another"
            note += ")" if named_release or p2p else "; {nccl_version} for your release)"
        elif algorithm in NCCL_ALGORITHMS:
            note = f"protocol: {pick} for {algorithm.value} ({{algorithm}} forced; {{protocol}} "
            note += "to force another)"
        else:
            # a what-if NCCL does not run: its protocol is the tuner formulas' fastest
            note = f"protocol: {best.protocol.value}, the fastest of {algorithm.value}'s by "
            note += "NCCL's tuner formulas ({algorithm} forced, a what-if; {protocol} to force "
            note += "another)"
        notes.append(note)
        # an alternative within the model's own error of the choice is not called faster
        faster = [c for c in pool if c.time_s < best.time_s * (1 - within)]
        # the fastest NCCL runs, and the fastest what-if where it is faster still: a what-if
        # alone (16 x DGX H100, 1 MiB all-gather: rhd 5.94x) had hidden ring/LL128 at 1.9x
        real = [c for c in faster if c.algorithm in NCCL_ALGORITHMS][:1]
        whatif = [c for c in faster if c.algorithm not in NCCL_ALGORITHMS][:1]
        shown_faster = [*real, *(w for w in whatif if not real or w.time_s < real[0].time_s)]
        for alt in shown_faster:
            apart = tie_time(alt) / tie_time(best) - 1
            # NCCL's pick this far behind one it also runs is a drop no published sweep shows
            # at a switch: allgather 2 MiB on 16 x DGX H100, ring/LL 569 us, 4 MiB 309 us
            unsure = (
                alt.algorithm in NCCL_ALGORITHMS
                and alt.time_s < best.time_s * (1 - MEASURED_DROP_MAX)
                and not 0 <= apart < within
            )
            if unsure and not forced:
                premature.append(alt)
            notes.append(
                f"{alt.algorithm.value}/{alt.protocol.value} would be "
                f"{best.time_s / alt.time_s:.2f}x faster, but "
                + (
                    # NCCL has no estimate of a what-if to rank it by
                    "NCCL does not implement it (a what-if)"
                    if alt.algorithm in (Algorithm.HIERARCHICAL, Algorithm.RHD)
                    else f"NCCL's point-to-point rules (not a tuner) take {chosen} here"
                    if p2p
                    else "NCCL's own estimate ranks it lower" + _fp8_ring_words(plan, alt.algorithm)
                )
                + (
                    f"; published sweeps show time falling by at most {MEASURED_DROP_MAX:.0%} "
                    "where NCCL switches, so an estimate this far behind the faster choice is "
                    "the least sure"
                    + ("; the likely range reaches down to it" if not forced else "")
                    if unsure
                    else ""
                )
                + (
                    f" by only {format_share(apart)}, a near tie a real run may break either way"
                    + (" (the likely range covers both)" if any(c is alt for c in ties) else "")
                    if alt.algorithm not in (Algorithm.HIERARCHICAL, Algorithm.RHD)
                    and 0 <= apart < within
                    else ""
                )
            )
        # a slower candidate NCCL ranks as nearly as good: the range covers it too
        slower = [c for c in ties if c.time_s > best.time_s]
        if len(slower) == 1:
            tie = slower[0]
            apart = tie_time(tie) / tie_time(best) - 1
            notes.append(
                f"{tie.algorithm.value}/{tie.protocol.value} would take "
                f"{format_time(tie.time_s)}, within {format_share(apart)} of it: a near tie, "
                "and which path NCCL takes follows its topology, not a tuner (the likely range "
                "covers both)"
                if p2p
                else f"NCCL's own estimate ranks {tie.algorithm.value}/{tie.protocol.value} "
                f"within {format_share(apart)} of its choice, a near tie a real run may break "
                f"either way: it would take {format_time(tie.time_s)} (the likely range covers "
                "both)"
            )
        elif slower:
            # every one the range covers, named: the top of a range set by tree/Simple at
            # 12.6 ms read as unexplained where the note named collnet/Simple alone
            named = [
                f"{c.algorithm.value}/{c.protocol.value} ({format_time(c.time_s)})" for c in slower
            ]
            apart = max(c.selection_time_s / best.selection_time_s - 1 for c in slower)
            notes.append(
                f"NCCL's own estimate ranks {', '.join(named[:-1])} and {named[-1]} within "
                f"{format_share(apart)} of its choice, near ties a real run may break any way "
                "(the likely range covers them all)"
            )
    if algorithm in (Algorithm.HIERARCHICAL, Algorithm.RHD):
        notes.append(f"{algorithm.value} is a what-if: NCCL does not implement it")
    if through_ib_sharp(best.algorithm, topo.domains):
        # CollNet, and NVLS across domains, which runs only on SHARP (innetwork.nvls), priced
        # by the same term
        # the published SHARP runs are few, and one disagrees: said where SHARP is the answer
        # (a 4 x A100 run on an older NCCL took 1.8-2.5x the model's time at 64 KiB-16 MiB
        # inside a narrow range, with no word that SHARP rests on little data: review EB 4)
        notes.append(SHARP_EVIDENCE_NOTE)
    if algorithm is None:
        notes += _switch_dtype_notes(plan)
    if best.equivalent_busbw:
        notes.append(
            "busbw is an equivalent figure, not a wire rate: "
            + _why_equivalent(best, topo, collective)
        )
    covered: list[Candidate] = [
        (c.time_s, c.algorithm, c.protocol) for c in (best, *ties, *premature)
    ]
    time_s_range, wire_floor, per_step = _likely_range(
        topo, params, collective, size, covered, dtype=dt
    )
    if per_step is not None:
        notes.append(_simple_extrapolation_note(topo, params, size, best.time_s, per_step))
    lopsided = _lopsided_note(best.time_s, time_s_range, size, topo)
    if lopsided:
        notes.append(lopsided)
    if collective is Collective.ALL_TO_ALL:
        notes += message_extrapolation_notes(topo, params)
    notes += memory_notes(cluster, size)
    count = int(size // dt.bytes)
    if collective.per_rank_buffer:
        count //= cluster.ranks
    return Estimate(
        collective=collective,
        size_bytes=size,
        dtype=dt.value,
        count=count,
        nodes=cluster.nodes,
        gpus_per_node=cluster.gpus_per_node,
        ranks=cluster.ranks,
        intra=cluster.intra.id if cluster.intra else None,
        inter=cluster.inter.id if cluster.inter else None,
        nics_per_node=cluster.nics_per_node if topo.out is not None else None,
        best=best,
        alternatives=others,
        assumptions=notes,
        forced_algorithm=algorithm,
        forced_protocol=protocol,
        requested_size_bytes=size_bytes,
        sharp=bool(topo.out is not None and topo.out.sharp),
        oversubscription=topo.out.oversubscription if topo.out is not None else 1.0,
        # one node had given 1.0 for each share, every byte crossing a taper, where no byte
        # crosses a network: null (docs/model.md#oversubscription-and-cross-leaf-traffic)
        cross_leaf_fraction=topo.out.cross_leaf_fraction if topo.out is not None else None,
        neighbour_cross_leaf_fraction=topo.out.neighbour_share if topo.out is not None else None,
        unaligned_cross_leaf_fraction=topo.out.unaligned_share if topo.out is not None else None,
        sites=topo.sites,
        wan=topo.wan.link_id if topo.wan is not None else None,
        wan_links=topo.wan.nics_per_domain if topo.wan is not None else None,
        wan_latency_s=topo.wan.transport_latency_s if topo.wan is not None else None,
        gpus_per_process=topo.gpus_per_process,
        host_pcie=cluster.host_pcie.id if cluster.host_pcie is not None else None,
        domains=topo.domains,
        time_s_range=time_s_range,
        range_covers=[f"{c.algorithm.value}/{c.protocol.value}" for c in ties],
        range_reaches=[f"{c.algorithm.value}/{c.protocol.value}" for c in premature],
        range_wire_floor_s=wire_floor,
        transport_class=transport_class(topo),
        tuner_constants=params.tuner_sources,
    )


def nccl_tests_max_bytes(memory_bytes: float) -> float:
    """The largest size nccl-tests runs on GPUs of ``memory_bytes``: it holds a send, a receive
    and (with its data check, on by default) an expected buffer of the size each, after holding
    back 1 GiB per 16 GiB installed (at most 4 GiB) and 1 GiB more, and cuts a larger ``-e`` to
    that, printing "Reducing maxBytes to N due to memory limitation" (nccl-tests
    ``src/common.cu``; the published 8 x H100 all-to-all of ``benchmarks/data/sweeps/20`` prints
    26549638485, which this gives for the H100's 85,017,624,576 B)."""
    reserve = min(math.ceil(memory_bytes / (16 * GiB)), 4) * GiB
    return (memory_bytes - reserve - GiB) / 3


#: What nccl-tests holds on each GPU, said wherever its size cap is.
NCCL_TESTS_BUFFERS = "a send, a receive and its data check's buffer of the size each"


def nccl_tests_cap(system: System | None) -> tuple[float, float] | None:
    """``(GPU memory, the largest size nccl-tests runs on it)`` for a preset that states its
    GPUs' memory (:func:`nccl_tests_max_bytes`), else None."""
    memory = system.gpu_memory_bytes if system is not None else None
    return None if memory is None else (memory, nccl_tests_max_bytes(memory))


def memory_notes(cluster: ResolvedCluster, size_bytes: float) -> list[str]:
    """Where ``size_bytes`` is more than nccl-tests runs on the GPU memory the cluster's preset
    states (:func:`nccl_tests_max_bytes`), a note that no run of that size exists (1 PiB
    all-reduce on 2 x DGX H100 had priced 4412 s with no word of the 80 GiB a GPU holds; a
    review); none where the preset states no memory."""
    system, capped = cluster.system, nccl_tests_cap(cluster.system)
    if system is None or capped is None or size_bytes <= capped[1]:
        return []
    memory, cap = capped
    return [
        f"nccl-tests runs sizes up to about {memory_size(cap)} on {system.id}'s "
        f"{memory_size(memory)} GPUs ({NCCL_TESTS_BUFFERS}; it prints 'Reducing maxBytes ... "
        "due to memory limitation'): no run of this size exists, and the estimate extrapolates "
        "its rates"
    ]


def sweep_memory_notes(cluster: ResolvedCluster, sizes: Iterable[float]) -> list[str]:
    """:func:`memory_notes` for a sweep: from the first of ``sizes`` past what nccl-tests runs
    on the preset's GPUs (a sweep to 1 PB had priced 50 rows without a word)."""
    system, capped = cluster.system, nccl_tests_cap(cluster.system)
    if system is None or capped is None:
        return []
    memory, cap = capped
    past = [size for size in sizes if size > cap]
    if not past:
        return []
    return [
        f"from {format_size(min(past))} up, the sizes are past the about {memory_size(cap)} "
        f"nccl-tests runs on {system.id}'s {memory_size(memory)} GPUs ({NCCL_TESTS_BUFFERS}; "
        "it cuts -e to that): no run of those sizes exists, and their rows extrapolate the rates"
    ]


def message_extrapolation_notes(topo: Topology, params: CostParams) -> list[str]:
    """Where an all-to-all has more ranks than the rows its per-message cost is fitted on, a
    note that its message term is an extrapolation (else none): 63 messages inside one 64-GPU
    NVLink domain had been priced at 3.1 us each (195 us of 204 us at 448 KiB; 2.4 us now),
    with no word that the rows went to 16 GPUs (a review)."""
    if not _messages_extrapolated(topo, params):
        return []
    cal = params.calibrated
    messages = alltoall_messages(topo)
    each = message_cost_s(topo, params)
    note = (
        f"{messages} messages a rank at {format_time(each, zeros=False)} each "
        f"({format_time(messages * each)} of each all-to-all): {MESSAGE_EXTRAPOLATION_HINT}"
        f"{cal.per_message_fit_ranks} GPUs, so for {topo.ranks} this term is an extrapolation "
        + (
            "(no published run of more is at hand to say how the cost grows)"
            if _builtin_messages(params)
            else "(the runs it was calibrated on go no further)"
        )
    )
    if messages > cal.per_message_fit_ranks - 1:
        note += (
            f"; the likely range reaches down to the time with it held at the "
            f"{cal.per_message_fit_ranks - 1} messages of the largest run it rests on"
        )
    return [note]


#: The collectives whose ring steps carry S / n a rank, the bytes the per-step reading of
#: Simple's handshake count takes (a broadcast's or reduce's chain carries the whole buffer, a
#: tree its chunks, a send/recv its whole message: review DL).
_PER_STEP_COLLECTIVES = (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER)


def simple_count_extrapolated(topo: Topology, params: CostParams, collective: Collective) -> bool:
    """Whether a ring of ``collective`` in Simple on ``topo`` rests on Simple's handshake count
    past the runs it is fitted on: a plugin transport (EFA, TCPX(O), CXI) across domains, more
    ranks than ``calibrated.simple_fit_ranks``, the built-in factor (an override file's rests
    on rows of its own), a collective whose ring steps carry S / n."""
    out, cal = topo.out, params.calibrated
    if collective not in _PER_STEP_COLLECTIVES or out is None or not out.is_plugin:
        return False
    if topo.domains < 2 or topo.ranks <= cal.simple_fit_ranks:
        return False
    given = params.provenance.get("calibrated.simple_transport_factor")
    return given is None or given.previous is None


def simple_extrapolation_hint(
    topo: Topology, params: CostParams, collective: Collective, *, rows: str = "rows"
) -> str:
    """Where :func:`simple_count_extrapolated`, what a sweep or a workload phase says once (its
    rows' likely ranges reach down to the per-step reading, which a single estimate prices and
    names); else empty."""
    if not simple_count_extrapolated(topo, params, collective):
        return ""
    cal = params.calibrated
    link = topo.out.link_id if topo.out is not None else "the network"
    return (
        f"{SIMPLE_EXTRAPOLATION_HINT}{link} exposes its transport latency up to "
        f"{cal.simple_transport_factor:g} times a hop, a count that grows with the collective's "
        f"size (calibrated.simple_transport_factor, fitted on runs of at most "
        f"{cal.simple_fit_ranks} ranks); for {topo.ranks} ranks that is an extrapolation, and "
        f"the likely ranges of such {rows} reach down to the time with the count at the bytes a "
        "step carries (docs/model.md#latency-terms)"
    )


def simple_extrapolation_notes(
    topo: Topology,
    params: CostParams | None,
    collective: Collective,
    estimates: Iterable[Estimate | None],
    *,
    rows: str = "rows",
) -> list[str]:
    """:func:`simple_extrapolation_hint`, once, for outputs of many estimates (a sweep's rows,
    nccl-check's expectations, a layout search's phases) where one's likely range reaches down
    to the per-step reading (its estimate names it); none where no range moved (review DM:
    all-LL sweeps had said it, and check and nccl-check had moved ranges with no word)."""
    if not any(
        a.startswith(SIMPLE_PER_STEP_NOTE)
        for e in estimates
        if e is not None
        for a in e.assumptions
    ):
        return []
    cost = params if params is not None else builtin_cost_params()
    hint = simple_extrapolation_hint(topo, cost, collective, rows=rows)
    return [hint] if hint else []


#: The parameters with Simple's handshake count at a step's bytes, per parameters and ranks.
_PER_STEP: IdentityMemo[CostParams] = IdentityMemo(64)


# enum members as module globals for the layout search's hot paths (engine.types says why)
_SIMPLE, _RING, _ALL_TO_ALL = Protocol.SIMPLE, Algorithm.RING, Collective.ALL_TO_ALL


def simple_per_step_s(
    topo: Topology,
    params: CostParams,
    collective: Collective,
    *,
    dtype: DType,
    size: float,
    choice: Candidate,
) -> float | None:
    """Where a ring all-reduce, all-gather or reduce-scatter in Simple over a plugin transport
    (EFA, TCPX(O), CXI) has more ranks than the runs its handshake count
    (``calibrated.simple_transport_factor``) is fitted on, the choice's time with the count
    following the bytes a step carries (the size over the ranks) rather than the collective's
    size, else None (also where the two agree: the count at its floor either way). On the
    fitted runs, 16 to 64 ranks, the two cannot be told apart; on 512 a 1 GiB all-gather over
    64 x p5 had read 15.9 ms, 10.2 ms of it network steps at 8 latencies each, with no word that
    the per-step reading gives 9.11 ms (review DG). The likely range reaches down to it
    (:func:`likely_range`)."""
    time_s, algorithm, protocol = choice
    if protocol is not _SIMPLE or algorithm is not _RING:
        return None
    if not simple_count_extrapolated(topo, params, collective):
        return None
    cal = params.calibrated
    # the same parameters object for the same ranks, so that the plan is built once (a layout
    # search asks this of every ring phase of its p5 layouts: built each time, the plans had
    # cost the search about 8 %)
    per_step = _PER_STEP.get(
        (id(params), topo.ranks),
        (params,),
        lambda: replace(
            params, calibrated=replace(cal, simple_fill_bytes=cal.simple_fill_bytes * topo.ranks)
        ),
    )
    found = plan_for(collective, topo, per_step, dtype=dtype).choose(size, algorithm, protocol)
    if found is None or found.time_s >= time_s * (1 - 1e-9):
        return None
    return found.time_s


def _simple_extrapolation_note(
    topo: Topology, params: CostParams, size: float, time_s: float, per_step_s: float
) -> str:
    """What :func:`simple_per_step_s` found, said."""
    cal = params.calibrated
    link = topo.out.link_id if topo.out is not None else "the network"
    low = simple_floor(topo, params)
    span = cal.simple_transport_factor - low

    def count(nbytes: float) -> float:
        return simple_count(low, span, nbytes / cal.simple_fill_bytes)

    step = size / topo.ranks
    return (
        f"{SIMPLE_PER_STEP_NOTE}{link} exposes its transport latency "
        f"{count(size):.3g} times at this size, a count that grows with the collective's size up "
        f"to {cal.simple_transport_factor:g} (calibrated.simple_transport_factor, fitted on runs "
        f"of at most {cal.simple_fit_ranks} ranks); for {topo.ranks} ranks that is an "
        f"extrapolation: were it to follow the bytes a step carries ({format_size(step)}: "
        f"{count(step):.3g} time{'s' if count(step) != 1 else ''}), the estimate would be "
        f"{format_time(per_step_s)}, not "
        f"{format_time(time_s)}, and the likely range reaches down to it "
        "(docs/model.md#latency-terms)"
    )


def cost_parameter_notes(params: CostParams | None) -> list[str]:
    """What was laid over the built-in cost parameters (override files, an NCCL release), one
    note each, as every estimate and workload says it (review BY: train and infer had priced with
    a --cost-params file and not named it: 63.1 ms to 80.9 ms unremarked)."""
    if params is None:
        return []
    return [COST_PARAMETERS_NOTE + origin for origin in params.origins[1:]]


def _messages_extrapolated(topo: Topology, params: CostParams) -> bool:
    """Whether an all-to-all on ``topo`` has more ranks than the rows the per-message cost in use
    is fitted on: the built-in one's, or those an override gives with its value
    (:func:`_message_rows_known`)."""
    cal = params.calibrated
    if cal.per_message_s <= 0 or topo.ranks <= cal.per_message_fit_ranks:
        return False
    return _message_rows_known(params)


def _builtin_messages(params: CostParams) -> bool:
    """Whether the per-message cost in use is the built-in one (no override gave it)."""
    given = params.provenance.get("calibrated.per_message_latency")
    return given is None or given.previous is None


def _message_rows_known(params: CostParams) -> bool:
    """Whether the per-message cost in use says how many ranks its rows had: the built-in one,
    or an override that gives ``per_message_fit_ranks`` too (``ibcalc calibrate`` writes both).
    A value given alone rests on rows ibcalc cannot see: no extrapolation is claimed for it
    (a calibration on a 16-GPU log had read, for 256 A100s, 840 us (657-967 us) with no word,
    beside the built-in 874 us (50.8-1005 us) and its note)."""
    ranks = params.provenance.get("calibrated.per_message_fit_ranks")
    return _builtin_messages(params) or (ranks is not None and ranks.previous is not None)


def extrapolated_messages_s(collective: Collective, topo: Topology, params: CostParams) -> float:
    """The part of an all-to-all's message term past what its fit saw: the messages a rank posts
    beyond the ``per_message_fit_ranks - 1`` of the largest fitted run, times the per-message
    cost (0 where none is extrapolated). The likely range reaches down to the time without it:
    whether the cost keeps growing with the peers past 16 GPUs no published run says, and a
    64 KiB all-to-all in one 72-GPU NVL72 domain (71 messages, 227 us) had read 211-264 us,
    beside 45.5-78.6 us for the same GPUs split into 9 domains over InfiniBand, whose PXN was
    then charged 14 messages (review BU; every rank now posts n - 1)."""
    if collective is not _ALL_TO_ALL or not _messages_extrapolated(topo, params):
        return 0.0
    cal = params.calibrated
    beyond = alltoall_messages(topo) - (cal.per_message_fit_ranks - 1)
    return max(0, beyond) * message_cost_s(topo, params)


#: A band whose far end is this many times the estimate, its near end within a tenth of it, is
#: said to be one-sided (an EFA latency estimate at 113 us with a range of 112-630 us)
_LOPSIDED = 2.0
#: ... and "within a tenth": the near end at most this factor from the estimate
_NEAR_END = 1.1


def _lopsided_note(
    time_s: float, band: tuple[float, float], size_bytes: float, topo: Topology
) -> str | None:
    """Why an estimate sits at one end of its likely range: the held-out errors of its regime
    and transport class are one-sided (the model is faster than most published runs there)."""
    low, high = band
    where = f"{transport_class(topo)} transport, {regime_of(size_bytes)} sizes"
    if high >= _LOPSIDED * time_s and low >= time_s / _NEAR_END:
        return (
            f"the estimate is at the fast end of its likely range: published runs the model had "
            f"not seen ({where}) took up to {high / time_s:.1f}x its time (error_band in "
            "data/cost_params.yaml, docs/model.md#error-band)"
        )
    if low <= time_s / _LOPSIDED and high <= time_s * _NEAR_END:
        return (
            f"the estimate is at the slow end of its likely range: published runs the model had "
            f"not seen ({where}) took as little as {low / time_s:.2f}x its time (error_band in "
            "data/cost_params.yaml, docs/model.md#error-band)"
        )
    return None


def likely_range(
    topo: Topology,
    params: CostParams,
    collective: Collective,
    size_bytes: float,
    candidates: Iterable[Candidate],
    *,
    dtype: DType = DType.FP32,
) -> tuple[float, float]:
    """The range a measurement is likely to fall in: the union of ``engine.band.time_range``
    over ``candidates``, the choice first, then those NCCL's tuner ranks within
    ``reporting.notably_faster`` of it and the far faster one of a least sure estimate (none
    when a choice was forced); each band's low end no faster than its candidate's wire
    (``engine.band.wire_floor_s``); and, where the choice's Simple handshake count is an
    extrapolation, the choice's time with the count at a step's bytes
    (:func:`simple_per_step_s`; ``dtype`` prices it)."""
    return _likely_range(topo, params, collective, size_bytes, candidates, dtype=dtype)[0]


def _likely_range(
    topo: Topology,
    params: CostParams,
    collective: Collective,
    size_bytes: float,
    candidates: Iterable[Candidate],
    *,
    dtype: DType = DType.FP32,
) -> tuple[tuple[float, float], float | None, float | None]:
    """:func:`likely_range`, the wire floor that set its low end where one did (the error band
    alone would have gone lower; ``Estimate.range_wire_floor_s``), else None, and the choice's
    per-step time (:func:`simple_per_step_s`) where its range reached down to it, else None
    (the estimate names it: worked out once, here)."""
    low = high = math.nan
    floor_at: float | None = None
    chosen_per_step: float | None = None
    for i, candidate in enumerate(candidates):
        time_s, algorithm, protocol = candidate
        floor = wire_floor_s(collective, algorithm, protocol, size_bytes, topo)
        a, b = time_range(time_s, size_bytes, topo, params, floor)
        beyond = extrapolated_messages_s(collective, topo, params)
        if beyond > 0:
            a = min(a, time_range(time_s - beyond, size_bytes, topo, params, floor)[0])
        if i == 0:
            chosen_per_step = simple_per_step_s(
                topo, params, collective, dtype=dtype, size=size_bytes, choice=candidate
            )
            if chosen_per_step is not None:
                a = min(a, time_range(chosen_per_step, size_bytes, topo, params, floor)[0])
        if math.isnan(low) or a < low:
            low, floor_at = a, (floor if 0 < floor == a else None)
        high = b if math.isnan(high) else max(high, b)
    return (low, high), floor_at, chosen_per_step


class QuickEstimate(NamedTuple):
    """The numbers of an :class:`~ibcalc.engine.types.Estimate` without its explanation: the
    size run, the time, algbw and busbw, and the algorithm and protocol chosen. Each equals the
    full estimate's to the bit (``est.size_bytes``, ``est.time_s``, ``est.algbw_Bps``,
    ``est.busbw_Bps``, ``est.best.algorithm``, ``est.best.protocol``): bytes, seconds, bytes
    per second. A named tuple: the
    cheapest immutable record Python builds."""

    size_bytes: float
    time_s: float
    algbw_Bps: float
    busbw_Bps: float
    algorithm: Algorithm
    protocol: Protocol


_new_tuple = tuple.__new__


class CollectivePlan:
    """Estimates of one collective on one resolved cluster at any number of sizes.

    What does not depend on the size (which algorithms and protocols run, NCCL's tuner view) is
    worked out once. :meth:`estimate` returns exactly what :func:`estimate_on` with the same
    arguments returns; :meth:`quick` and :meth:`time_s` only the numbers, the same to the bit,
    much faster (no explanation is built): the API for throughput (sweeps, layout searches).
    """

    __slots__ = (
        "_algorithm",
        "_align",
        "_cluster",
        "_elt",
        "_factor",
        "_hash",
        "_last",
        "_per_rank",
        "_plan",
        "_protocol",
        "_ranks",
        "_what_if",
    )

    def __init__(
        self,
        cluster: ResolvedCluster,
        collective: Collective | str,
        *,
        dtype: DType | str = DType.FP32,
        algorithm: Algorithm | str | None = None,
        protocol: Protocol | str | None = None,
        params: CostParams | None = None,
        sharp_what_if: bool = True,
    ) -> None:
        _expect_cluster(cluster, params)
        self._what_if = expect_bool(sharp_what_if, "sharp_what_if")
        params = params if params is not None else builtin_cost_params()
        self._cluster = cluster
        collective, self._algorithm, self._protocol = by_name(collective, algorithm, protocol)
        self._plan = plan_for(collective, cluster.topology, params, dtype=parse_dtype(dtype))
        self._factor = busbw_factor(collective, cluster.ranks)
        #: the last QuickEstimate this plan made (time_s_range takes it without pricing again)
        self._last: QuickEstimate | None = None
        # effective_size's rounding, worked out once
        plan = self._plan
        self._elt = plan.dtype.bytes
        self._ranks = cluster.ranks
        self._per_rank = collective.per_rank_buffer
        self._align = (
            max(1, 16 // self._elt)
            if self._per_rank and collective is not Collective.ALL_TO_ALL
            else 1
        )
        # of inputs that equal plans share (__eq__); a layout search keys its memos by plan
        self._hash = hash(
            (collective, plan.dtype, self._algorithm, self._protocol, self._what_if, self._ranks)
        )

    def _inputs(self) -> tuple[object, ...]:
        """What the plan is made from, and all it prices by."""
        plan = self._plan
        return (
            self._cluster,
            plan.collective,
            plan.dtype,
            self._algorithm,
            self._protocol,
            plan.params,  # by value, its tuner view too
            self._what_if,
        )

    def __eq__(self, other: object) -> bool:
        """Plans made from equal inputs (cluster, collective, dtype, forced algorithm and
        protocol, cost parameters by value, ``sharp_what_if``) are equal: they price every
        size the same, to the bit."""
        if other is self:
            return True
        if not isinstance(other, CollectivePlan):
            return NotImplemented
        return self._hash == other._hash and self._inputs() == other._inputs()

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        """What the plan prices, in one line: the collective and element type, the cluster
        (:meth:`ResolvedCluster.describe`), the algorithms and protocols it chooses among (or
        the ones forced), and cost parameters other than the built-in ones."""
        plan = self._plan
        protocols: dict[Algorithm, list[str]] = {}
        for algorithm, protocol in plan.pairs():
            if self._algorithm in (None, algorithm) and self._protocol in (None, protocol):
                protocols.setdefault(algorithm, []).append(protocol.value)
        among = ", ".join(f"{a.value} ({'/'.join(p)})" for a, p in protocols.items())
        forced = [
            f"{what} {value.value} forced"
            for what, value in (("algorithm", self._algorithm), ("protocol", self._protocol))
            if value is not None
        ]
        choice = "; ".join(forced) if forced else f"chooses among {among}"
        parts = [
            f"{plan.collective.value} of {plan.dtype.value} on {self._cluster.describe()}",
            choice,
        ]
        if len(plan.params.origins) > 1:
            # each origin's name, not the sentence a release's adds after it
            names = (origin.partition(": ")[0] for origin in plan.params.origins[1:])
            parts.append(f"cost parameters: {', '.join(names)}")
        if not self._what_if:
            parts.append("sharp_what_if=False")
        return f"CollectivePlan({'; '.join(parts)})"

    def __reduce__(self) -> tuple[Callable[[], CollectivePlan], tuple[()]]:
        """Pickled as the arguments it was made from, rebuilt by its constructor (its size-only
        kernels are closures, which pickle cannot carry): a plan sent to a process pool prices
        there as here, to the bit. The built-in cost parameters go as None, so the rebuilt plan
        takes that process's own (and its cached plans)."""
        plan = self._plan
        rebuild = partial(
            CollectivePlan,
            self._cluster,
            plan.collective,
            dtype=plan.dtype,
            algorithm=self._algorithm,
            protocol=self._protocol,
            params=None if plan.params is builtin_cost_params() else plan.params,
            sharp_what_if=self._what_if,
        )
        return rebuild, ()

    @property
    def collective(self) -> Collective:
        """The collective estimated."""
        return self._plan.collective

    # read-only: what the plan worked out once depends on them (a library user had set
    # plan.cluster to a 64-node cluster and got the 2-node time labelled 64 nodes)
    @property
    def cluster(self) -> ResolvedCluster:
        """The cluster estimated on."""
        return self._cluster

    @property
    def algorithm(self) -> Algorithm | None:
        """The algorithm forced, or None (NCCL-like choice)."""
        return self._algorithm

    def message_notes(self) -> list[str]:
        """An all-to-all's word on its message term where it has more ranks than its per-message
        cost's rows (:func:`message_extrapolation_notes`); none for other collectives."""
        if self._plan.collective is not Collective.ALL_TO_ALL:
            return []
        return message_extrapolation_notes(self._cluster.topology, self._plan.params)

    @property
    def protocol(self) -> Protocol | None:
        """The protocol forced, or None (NCCL-like choice)."""
        return self._protocol

    def type_notes(self) -> list[str]:
        """The in-switch reductions the element type keeps from running at every size, for a
        sweep's notes (an estimate says it beside its own); empty when an algorithm is forced."""
        return [] if self._algorithm is not None else _switch_dtype_notes(self._plan)

    def sharp_type_note(self) -> str | None:
        """The cluster's SHARP hint where SHARP can change no size, worded as every estimate of
        the sweep words it (:func:`_sharp_ruled_out`: a protocol forced or set, the element
        type, settings, the cluster; an algorithm forced): a sweep had kept 'enable with
        --sharp' under --nccl-algo ring, --proto ll, --algo ring or an fp8 type (reviews). None
        where the hint stands."""
        inter = self._cluster.inter
        if (
            inter is None
            or sharp_hint(inter.id) not in self._cluster.assumptions
            or self.collective is not Collective.ALL_REDUCE
        ):
            return None
        if self._algorithm is not None:
            return f"{inter.id} supports SHARP (CollNet); {{sharp}} " + _FORCED_UNCHANGED
        on = _with_sharp(self._plan)
        # which algorithms apply does not depend on the size: the candidates at one size say
        why = _sharp_ruled_out(
            self._plan, [c.timing for c in on.scored(float(MiB))], self._protocol
        )
        return None if why is None else _sharp_unchanged(inter.id, why)

    def estimate(self, size_bytes: float) -> Estimate:
        """The full estimate at ``size_bytes`` (bytes, nccl-tests' size), as :func:`estimate_on`
        gives it."""
        return _estimate(
            self._cluster,
            self._plan,
            size_bytes,
            self._algorithm,
            self._protocol,
            what_if=self._what_if,
        )

    def quick(self, size_bytes: float) -> QuickEstimate:
        """The numbers of :meth:`estimate` at ``size_bytes`` (bytes): the size run in bytes, the
        time in seconds, algbw and busbw in bytes per second; the same errors
        (:class:`~ibcalc.errors.SizeTooSmallError`,
        :class:`~ibcalc.errors.AlgorithmNotApplicableError`)."""
        plan = self._plan
        # effective_size, inlined. A size of any other type is read as it reads it, as a float
        # (an int past 2^53, floor-divided exactly, had run a size a few bytes off estimate_on's;
        # a numpy float16 had been compared with 1e21 in float16, with numpy's overflow
        # warning), or refused (an array of sizes, Decimal('NaN'), a bool, a complex). An int in
        # range and a float's subclass (numpy's float64) are converted as check_size converts
        # them, without its type checks (~0.5 us, 10 % of a quick)
        kind = type(size_bytes)
        if kind is not float:
            if (kind is int and 0 < size_bytes <= MAX_ENGINE_BYTES) or isinstance(
                size_bytes, float
            ):
                size_bytes = float(size_bytes)
            else:
                size_bytes = check_size(size_bytes)
        if not 0 < size_bytes <= MAX_ENGINE_BYTES:
            effective_size(plan.collective, size_bytes, self._ranks, plan.dtype)  # raises
        elt = self._elt
        count = int(size_bytes // elt)
        if self._per_rank:
            ranks = self._ranks
            per_rank = count // ranks
            per_rank -= per_rank % self._align
            size = float(per_rank * elt * ranks)
        else:
            size = float(count * elt)
        if size <= 0:
            effective_size(plan.collective, size_bytes, self._ranks, plan.dtype)  # raises
        picked = plan.pick(size, self._algorithm, self._protocol)
        if picked is None:
            refuse(plan, self._algorithm, self._protocol)
        algorithm, protocol, time = picked
        algbw = size / time
        # QuickEstimate(size, time, algbw, busbw, algorithm, protocol), without the keyword
        # handling of a named tuple's constructor
        quick: QuickEstimate = _new_tuple(
            QuickEstimate, (size, time, algbw, algbw * self._factor, algorithm, protocol)
        )
        self._last = quick
        return quick

    def time_s(self, size_bytes: float) -> float:
        """The time in seconds nccl-tests would report at ``size_bytes`` (bytes;
        :attr:`Estimate.time_s`)."""
        return self.quick(size_bytes)[1]

    def time_s_range(self, quick: QuickEstimate) -> tuple[float, float]:
        """:attr:`Estimate.time_s_range` of the estimate ``quick`` gives the numbers of: a
        :class:`QuickEstimate` of this plan (one of another plan, or made by hand, is refused
        with :class:`~ibcalc.errors.WrongTypeError`, as its range would be another
        collective's or cluster's: review CB)."""
        # the estimate this plan made last is its own (a sweep asks the range of each at once);
        # any other is priced again and compared
        if quick is not self._last:
            expect_type(quick, QuickEstimate, "quick", "plan.quick(size) makes one")
        if quick is not self._last and self.quick(quick.size_bytes) != quick:
            raise WrongTypeError(
                "quick must be this plan's estimate: its numbers are not this plan's at "
                f"{format_size(quick.size_bytes)} (another collective, cluster or setting)"
            )
        plan = self._plan
        forced = self._algorithm is not None or self._protocol is not None
        covered: list[Candidate] = [(quick.time_s, quick.algorithm, quick.protocol)]
        if not forced:
            covered += plan.range_candidates(
                quick.size_bytes,
                quick.time_s,
                within=plan.params.reporting.notably_faster,
                drop=MEASURED_DROP_MAX,
            )
        return likely_range(
            self._cluster.topology,
            plan.params,
            plan.collective,
            quick.size_bytes,
            covered,
            dtype=plan.dtype,
        )


def size_list(sizes: Iterable[float]) -> list[float]:
    """``sizes`` as a list; a single size, or a string (``"1e9"``, which read character by
    character is the sizes 1, e and 9), is refused with :class:`~ibcalc.errors.UnitError`."""
    if isinstance(sizes, str):
        # [sizes] itself is refused ('size '10GB' is not a number of bytes'): what reads it
        raise UnitError(
            f"sizes {sizes!r} is one value: give a list of sizes ([ibcalc.parse_size({sizes!r})])"
        )
    if isinstance(sizes, int | float) and not isinstance(sizes, bool):
        raise UnitError(f"sizes {sizes!r} is one value: give a list of sizes ([{sizes!r}])")
    if isinstance(sizes, bytes) or not isinstance(sizes, Iterable):
        # None had been told to give [None]
        raise UnitError(f"sizes {sizes!r} is not a list of sizes in bytes ([1e6, 1e9], say)")
    return list(sizes)


def estimate_many(
    cluster: ResolvedCluster,
    collective: Collective | str,
    sizes: Iterable[float],
    *,
    dtype: DType | str = DType.FP32,
    algorithm: Algorithm | str | None = None,
    protocol: Protocol | str | None = None,
    params: CostParams | None = None,
    sharp_what_if: bool = True,
) -> list[Estimate]:
    """:func:`estimate_on` at each of ``sizes`` (bytes, nccl-tests' sizes), in their order
    (errors as it raises them; ``sharp_what_if`` as it takes it)."""
    sizes = size_list(sizes)
    plan = CollectivePlan(
        cluster,
        collective,
        dtype=dtype,
        algorithm=algorithm,
        protocol=protocol,
        params=params,
        sharp_what_if=sharp_what_if,
    )
    return [plan.estimate(size) for size in sizes]


def estimate(
    catalogue: Catalogue,
    spec: ClusterSpec,
    collective: Collective | str,
    size_bytes: float,
    *,
    dtype: DType | str = DType.FP32,
    algorithm: Algorithm | str | None = None,
    protocol: Protocol | str | None = None,
    params: CostParams | None = None,
    sharp_what_if: bool = True,
) -> Estimate:
    """Resolve ``spec`` against ``catalogue`` and estimate ``collective`` of ``size_bytes`` (bytes,
    nccl-tests' size, as :func:`estimate_on` reads it), with
    the cost parameters ``params`` (default: the built-in ones): :func:`resolve_cluster`, then
    :func:`estimate_on` (``sharp_what_if`` as it takes it), whose errors it raises, and
    :class:`~ibcalc.errors.ClusterError` (or :class:`~ibcalc.errors.UnknownNameError`) for a
    cluster that cannot be resolved."""
    cluster = resolve_cluster(catalogue, spec)
    return estimate_on(
        cluster,
        collective,
        size_bytes,
        dtype=dtype,
        algorithm=algorithm,
        protocol=protocol,
        params=params,
        sharp_what_if=sharp_what_if,
    )
