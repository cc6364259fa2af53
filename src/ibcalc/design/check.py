"""Check a cluster-design file: load, resolve, and evaluate its requirements into findings.

:func:`check_design` reads one file (:mod:`ibcalc.yamlio`, validated against
:class:`~ibcalc.design.schema.Design`), checks the names it uses (system, links, switch),
resolves the cluster (:func:`~ibcalc.cluster.resolve.resolve_cluster`), sizes its fabric
(:mod:`ibcalc.fabric.sizing`), runs the engine for every requirement and returns one
:class:`Finding` per target. Findings are numbers (target, prediction, margin, the estimate or
fabric figures behind it, ``file:line:col``); their wording lives in :mod:`ibcalc.render.check`.
The library does no printing: every problem it finds in a file is raised at once as
:class:`~ibcalc.errors.DesignError` with ``file:line:col``, and a cluster the library refuses
(:class:`~ibcalc.errors.ClusterError`) is reported at the YAML key of the field at fault, named
as the file names it (``fabric.sharp``, never ``--sharp``).

Choices (docs/architecture.md#design-choices):

* the engine gets the end-to-end oversubscription (product of the built tiers' down:up ratios)
  and the crossing fraction that makes its slowdown the worst tier's (:func:`engine_fraction`),
  the ``oversubscription`` requirement checks the worst single tier;
* ``gap`` is the ratio of per-GPU line rates per direction: scale-up link over the GPU's share of
  its domain's NICs (DGX H100: 450 GB/s / 50 GB/s = 9), from
  :func:`~ibcalc.cluster.bandwidths.per_gpu_bandwidths`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from ibcalc.booleans import expect_bool
from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.load import find_link, find_system, link_role_problem
from ibcalc.catalogue.models import Catalogue, LinkKind
from ibcalc.cluster.bandwidths import PerGpuBandwidths, per_gpu_bandwidths
from ibcalc.cluster.resolve import (
    LINK_CARRIES_NO_COLLECTIVE,
    NETWORK_OPTIONS_IGNORED,
    OVERSUBSCRIPTION_NOT_PRICED,
    ClusterSpec,
    ResolvedCluster,
    gpu_fed_nic_Bps,
    prices_oversubscription,
    resolve_cluster,
)
from ibcalc.cluster.spec import MAX_OVERSUBSCRIPTION
from ibcalc.design.schema import (
    DESIGN_KEYS,
    ELSEWHERE_KEYS,
    FIELD_PATHS,
    KNOWN_KEYS,
    WAN_WORDS,
    CollectiveTarget,
    Design,
    GapTarget,
    OversubscriptionTarget,
    SwitchesTarget,
    json_schema,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Estimate
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    ClusterError,
    DesignError,
    FabricError,
    IbcalcError,
    InputFileError,
    UnknownNameError,
    ValidationProblem,
    WrongTypeError,
    expect_type,
    fill_fields,
)
from ibcalc.fabric.sizing import CheaperSplit, FabricSizing, inexact_split, size_fat_tree
from ibcalc.fabric.switches import SwitchModel, find_switch, node_cages
from ibcalc.facade import (
    NCCL_TESTS_BUFFERS,
    estimate_on,
    message_extrapolation_notes,
    nccl_tests_cap,
    simple_extrapolation_notes,
)
from ibcalc.units import (
    format_oversubscription,
    format_oversubscription_apart,
    format_ratio,
    format_share,
    format_size,
    format_slowdown,
    memory_size,
    plural,
)
from ibcalc.yamlio import Document, by_position, load_yaml, validate, wrong_kind_problem

__all__ = [
    "DESIGN_KEYS",
    "NO_NETWORK_TO_SIZE",
    "Basis",
    "CollectiveBasis",
    "Comparison",
    "DesignCheck",
    "Finding",
    "GapBasis",
    "OversubscriptionBasis",
    "ResolvedDesign",
    "SwitchesBasis",
    "check_design",
    "cluster_problem",
    "cross_leaf_fraction",
    "design_warnings",
    "domain_nodes_of",
    "evaluate",
    "field_keys",
    "field_location",
    "json_schema",
    "judge",
    "load_design",
    "name_problems",
    "resolve_design",
    "unused_fabric",
]

Loc = tuple[str | int, ...]
#: Which way a target passes: at most (``max_*``) or at least (``min_*``) the required value.
Comparison = Literal["<=", ">="]


# --- problems ----------------------------------------------------------------------------------


class _Problems:
    """Problems of one file, each at the YAML position of ``loc`` and prefixed with its path."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.items: list[ValidationProblem] = []

    def add(
        self, loc: Sequence[str | int], message: str, *, where: Sequence[str | int] = ()
    ) -> None:
        """Add ``message`` at ``loc``, prefixed with ``where`` (default: ``loc``) as a path."""
        line, col = self.doc.locate(loc)
        path = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in (where or loc))
        path = path.replace(".[", "[")
        text = f"{path}: {message}" if path else message
        self.items.append(ValidationProblem(self.doc.path, line, col, text))

    def raise_if_any(self) -> None:
        if self.items:
            raise DesignError(by_position(self.items))


# --- field names and locations -----------------------------------------------------------------


def _present(doc: Document, path: Sequence[str | int]) -> bool:
    return tuple(path) in doc.marks


def field_location(doc: Document, name: str) -> tuple[str, ...] | None:
    """The YAML path that sets ClusterSpec field ``name`` in this file, or None if none does."""
    for path in FIELD_PATHS.get(name, ()):
        if _present(doc, path):
            return path
    return None


#: ClusterSpec fields a design never states: the fabric layout derives them.
_DERIVED = frozenset(
    {"cross_leaf_fraction", "neighbour_cross_leaf_fraction", "unaligned_cross_leaf_fraction"}
)


def field_keys(doc: Document) -> dict[str, str]:
    """How this file names each ClusterSpec field: the key it used (``inter`` or
    ``fabric.link``), else :data:`~ibcalc.design.schema.DESIGN_KEYS`."""
    keys = dict(DESIGN_KEYS)
    for name in FIELD_PATHS:
        path = field_location(doc, name)
        if path is not None and name not in _DERIVED:
            keys[name] = ".".join(path)
    return keys


#: CLI flags the engine's messages may name, and what a design file says instead.
_FLAG = re.compile(r"--(no-)?([a-z][a-z-]*)")
_FLAG_KEYS = {"algo": "algo", "dtype": "dtype", "size": "size", "protocol": "protocol"}


def _without_flags(message: str, keys: Mapping[str, str]) -> str:
    """``message`` with every ``--flag`` the engine wrote for the CLI named as the design key.

    ``--no-nvls`` becomes ``nvls: false``; a flag a design file has no key for is kept.
    """

    def key(match: re.Match[str]) -> str:
        name = match.group(2).replace("-", "_")
        text = keys.get(name) or _FLAG_KEYS.get(name)
        if text is None:
            return match.group(0)
        return f"{text}: false" if match.group(1) else text

    return _FLAG.sub(key, message)


def cluster_problem(
    doc: Document, exc: IbcalcError, keys: Mapping[str, str] | None = None
) -> ValidationProblem:
    """A cluster the library refused, as a problem of the design file.

    A :class:`ClusterError` is placed at the YAML key of its field (``sharp`` at
    ``fabric.sharp``, ``inter`` at ``inter`` or ``fabric.link``, whichever the file used), or at
    the first field its message names that the file sets; a field the file does not set is
    named by its key and placed at ``nodes``. Fields in the message are named as the file names
    them (``keys``, default :func:`field_keys`), never as command-line flags.
    """
    keys = field_keys(doc) if keys is None else keys
    if isinstance(exc, ClusterError):
        fields = exc.fields
        template = exc.template
        # "{oversubscription} 128 is out of range" under the key's own prefix: name it once
        lead = f"{{{exc.field}}} "
        if exc.field is not None and template.startswith(lead):
            template = template[len(lead) :]
        message = _without_flags(fill_fields(template, keys), keys)
    else:
        message, fields = _without_flags(str(exc), keys), []
    at_fault = fields[0] if fields else "nodes"
    problems = _Problems(doc)
    for name in fields:
        path = field_location(doc, name)
        if path is not None:
            where = path if name == at_fault else (keys.get(at_fault, at_fault),)
            problems.add(path, message, where=where)
            return problems.items[0]
    problems.add(("nodes",), message, where=(keys.get(at_fault, at_fault),))
    return problems.items[0]


# --- load and names ----------------------------------------------------------------------------


def _read(source: str | Path, text: str | None) -> Document:
    """The file's YAML, refused unless it is a mapping; yamlio's refusals become DesignError."""
    try:
        # duplicate keys are reported with the schema's problems (the first had stopped the
        # file there, hiding every other problem until the next run: a review)
        doc = load_yaml(source, text=text, defer_duplicates=True)
    except InputFileError as exc:
        raise DesignError(exc.problems) from None
    if not isinstance(doc.data, dict):
        line, col = doc.locate(())
        kinds = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}
        what = kinds.get(type(doc.data), "null" if doc.data is None else type(doc.data).__name__)
        raise DesignError(
            [
                ValidationProblem(
                    doc.path,
                    line,
                    col,
                    f"a design file must be a mapping (name:, nodes:, system: ...), not a {what}",
                )
            ]
        )
    problem = wrong_kind_problem(doc, "cluster-design")
    if problem is not None:
        raise DesignError([problem])
    return doc


#: The file's link keys and the role (catalogue.load.LINK_ROLES) each plays.
_LINK_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("intra",), "intra"),
    (("inter",), "inter"),
    (("fabric", "link"), "inter"),
    (("host_pcie",), "host_pcie"),
)


def _raw(data: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def name_problems(doc: Document, catalogue: Catalogue | None) -> list[ValidationProblem]:
    """Every unknown or misplaced name of the file, read from its YAML (so that they are found
    even when the schema fails): the switch always, the system and links when ``catalogue`` is
    given, and a scale-out link given twice (``inter`` and ``fabric.link``)."""
    problems = _Problems(doc)
    switch = _raw(doc.data, ("fabric", "switch"))
    if isinstance(switch, str):
        try:
            find_switch(switch)
        except UnknownNameError as exc:
            problems.add(("fabric", "switch"), str(exc))
    if _raw(doc.data, ("inter",)) is not None and _raw(doc.data, ("fabric", "link")) is not None:
        problems.add(("fabric", "link"), "give the scale-out link once: inter or fabric.link")
    if catalogue is None:
        return problems.items
    system = _raw(doc.data, ("system",))
    if isinstance(system, str):
        try:
            find_system(catalogue, system)
        except UnknownNameError as exc:
            problems.add(("system",), str(exc))
    for path, role in _LINK_KEYS:
        name = _raw(doc.data, path)
        if not isinstance(name, str):
            continue
        try:
            link = find_link(catalogue, name, role=role)
        except UnknownNameError as exc:
            problems.add(path, str(exc))
            continue
        problem = link_role_problem(link, role)
        if problem and role == "inter" and link.kind is LinkKind.WAN:
            # 'inter: wan-100g' told only that a WAN joins sites, with no word that a design
            # file has none, as 'sites: 2' is told
            problem += "; " + WAN_WORDS
        if problem:
            problems.add(path, problem)
    return problems.items


def _validated(doc: Document, catalogue: Catalogue | None) -> Design:
    names = name_problems(doc, catalogue)
    try:
        design = validate(
            doc, Design, known_keys=KNOWN_KEYS, elsewhere=ELSEWHERE_KEYS, indent_hint=True
        )
    except InputFileError as exc:
        # one report: schema problems and unknown names, one per position
        taken = {(p.line, p.col) for p in exc.problems}
        merged = exc.problems + [p for p in names if (p.line, p.col) not in taken]
        raise DesignError(by_position(merged)) from None
    if names:
        raise DesignError(by_position(names))
    return design


def load_design(
    source: str | Path, *, text: str | None = None, catalogue: Catalogue | None = None
) -> tuple[Design, Document]:
    """Read and validate one design file (or ``text`` labelled with ``source``).

    With ``catalogue``, the system and link names are checked too. Every problem is raised at
    once as :class:`DesignError` with ``file:line:col``.
    """
    _expect_arguments(source, catalogue, text=text)
    doc = _read(source, text)
    return _validated(doc, catalogue), doc


def _expect_arguments(
    source: object, catalogue: object, *, text: object = None, params: object = None
) -> None:
    """The caller's arguments checked before the file is read: a wrong one had failed on an
    attribute, or been reported as a problem of the design file at its line and column
    (``check_design(path, None)`` read 'aws-p5-efa.yaml:8:1: nodes: catalogue must be a
    Catalogue'; a review)."""
    if not isinstance(source, str | bytes | os.PathLike):
        raise WrongTypeError(f"source must be a str, bytes or Path, not {type(source).__name__}")
    if catalogue is not None:
        expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")
    if text is not None:
        expect_type(text, str, "text")
    elif isinstance(source, str) and "\n" in source:
        # a design's YAML given as its file name had been read as a path of 660 characters
        # and refused whole, "... no such file" (review DR)
        raise WrongTypeError(
            "source holds a line break: it looks like a design's text, not a file name; pass "
            "the text as text=, with a name for it as source"
        )
    if params is not None:
        expect_type(params, CostParams, "params", "ibcalc.load_cost_params() makes one")


# --- resolve -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedDesign:
    """A validated design with its cluster resolved and its fabric sized.

    ``oversubscription`` is what the engine was given (end to end); ``cross_leaf_fraction`` the
    share of all-to-all traffic crossing leaves when the sized layout set it (else None);
    ``keys`` how the file names each ClusterSpec field (for the cluster's assumptions).
    """

    path: str
    design: Design
    cluster: ResolvedCluster
    switch: SwitchModel | None
    radix: int | None
    fabric: FabricSizing | None
    oversubscription: float
    cross_leaf_fraction: float | None = None
    keys: Mapping[str, str] = field(default_factory=lambda: dict(DESIGN_KEYS))

    @property
    def fabric_asked(self) -> bool:
        """True when the file asks for sizing (``fabric.switch`` or ``fabric.radix``)."""
        fabric = self.design.fabric
        return fabric is not None and (fabric.switch is not None or fabric.radix is not None)


#: Why a design's fabric is not sized on one scale-up domain: design show's fabric line and the
#: ``fabric_not_sized`` of its JSON.
NO_NETWORK_TO_SIZE = "one scale-up domain: no network to size"
#: What a switch or radix does on one scale-up domain, and why: check's refusal of a switch
#: count says the same reason.
_SIZES_NOTHING = (
    "sizes nothing",
    "the whole cluster is one scale-up domain, with no network to size",
)


def unused_fabric(resolved: ResolvedDesign) -> list[tuple[str, str, tuple[str, str]]]:
    """The fabric keys written for a cluster of one scale-up domain, which has no network for
    them: (key, value as written, (what it does, why)), as ``("link", "ndr", ("carries no
    collective", "one scale-up domain, no network between GPUs"))``; none where the cluster has
    a scale-out tier. Check warns at each key with both parts; design show's fabric line names
    each with the first, after the reason it gives once (one rack with ``fabric.link: ndr`` had
    been noted by design show and passed check without a word)."""
    fabric = resolved.design.fabric
    if fabric is None or resolved.cluster.topology.out is not None:
        return []
    radix = None if fabric.radix is None else str(fabric.radix)
    written = (
        ("link", fabric.link, LINK_CARRIES_NO_COLLECTIVE),
        ("switch", fabric.switch, _SIZES_NOTHING),
        ("radix", radix, _SIZES_NOTHING),
    )
    return [(key, value.strip(), words) for key, value, words in written if value is not None]


def cross_leaf_fraction(sizing: FabricSizing, *, domain_nodes: int = 1) -> float:
    """Share of a node's rail-aligned network peers that sit behind another leaf.

    Rail-optimized: a leaf serves one rail of a whole scalable unit, so peers in the same SU are
    one hop away. Otherwise a leaf serves ``leaf_down / rails`` whole nodes
    (docs/design-files.md#oversubscription-and-cross-leaf-fraction). With scale-up domains of
    ``domain_nodes`` nodes (GB200 NVL72: 18 trays), peers in a node's own domain talk over
    NVLink, not the network: its network peers are the ``nodes - domain_nodes`` others, and a
    leaf group that shares nodes with the domain holds fewer of them (:func:`_domain_fraction`).
    """
    if sizing.tiers < 2 or sizing.nodes < 2:
        return 0.0
    if _by_domain(sizing, domain_nodes):
        return _domain_fraction(sizing.nodes, sizing.leaf_group, domain_nodes)
    return sizing.cross_leaf_share


def _by_domain(sizing: FabricSizing, domain_nodes: int) -> bool:
    """Whether :func:`cross_leaf_fraction` counts network peers outside multi-node domains:
    domains of several nodes, more nodes than one domain, more than one leaf group."""
    return domain_nodes > 1 and sizing.nodes > max(domain_nodes, sizing.leaf_group)


def _rails_used(sizing: FabricSizing, gpus_per_node: int | None) -> int:
    """The rails one GPU's channels use: its node's NICs, at most one per GPU."""
    return max(1, min(sizing.rails, gpus_per_node or sizing.rails))


def _domain_fraction(nodes: int, group: int, domain: int) -> float:
    """The cross-leaf share of the worst full leaf group when nodes ``i`` sit in domain
    ``i // domain`` and group ``i // group``: a node's network peers are the ``nodes - domain``
    outside its domain, of which ``group - c`` share its leaf, ``c`` being its domain's nodes in
    the group; the group's share is the mean of its nodes'. Four NVL72 racks of 18 trays on
    leaf groups of 42 (racks 0-1 and 6 trays of rack 2): a rack-0 tray has 24 of its 54 network
    peers in the group, a rack-2 tray 36: (36 x 30/54 + 6 x 18/54) / 42 = 0.524, where counting
    every tray as a peer gave (72 - 42) / 71 = 0.423 (a fabric architect's review)."""
    net = nodes - domain
    worst = 0.0
    for start in range(0, nodes - group + 1, group):
        end = start + group
        total = 0.0
        for first in range(start - start % domain, end, domain):
            inside = min(end, first + domain) - max(start, first)
            total += inside * (1.0 - (group - inside) / net)
        worst = max(worst, total / group)
    return worst


def domain_nodes_of(cluster: ResolvedCluster) -> int:
    """Nodes in one scale-up domain of ``cluster`` (18 GB200 trays in an NVL72 rack; 1 for a
    node that is its own domain)."""
    return max(1, cluster.topology.m // max(1, cluster.gpus_per_node))


def pod_fraction(sizing: FabricSizing, *, domain_nodes: int = 1) -> float:
    """Share of a node's rail-aligned peers outside its pod (three tiers; 0 otherwise): the
    traffic to them also crosses the spines' uplinks to the core. A pod holds ``spine_down``
    leaves, so ``spine_down`` leaf groups of nodes (docs/design-files.md). With scale-up domains
    of several nodes (NVL72 racks) a node's network peers are those outside its domain, counted
    as for a leaf group (:func:`_domain_fraction` over pods): 8 racks of 18 trays on pods of 64
    trays, (144 - 64) / 143 = 0.559 had counted a rack's own trays as peers; 0.625."""
    if sizing.tiers < 3 or sizing.nodes < 2:
        return 0.0
    pod_nodes = min(sizing.nodes, sizing.spine_down * sizing.leaf_group)
    if domain_nodes > 1 and sizing.nodes > max(domain_nodes, pod_nodes):
        return _domain_fraction(sizing.nodes, pod_nodes, domain_nodes)
    return max(0.0, (sizing.nodes - pod_nodes) / (sizing.nodes - 1))


def engine_fraction(sizing: FabricSizing, *, domain_nodes: int = 1) -> float:
    """The crossing fraction the engine gets beside the end-to-end ratio ``K``.

    Each tier slows the traffic that crosses its uplinks by the ratios up to it: the leaves'
    by ``k1 x f1``, the spines' (three tiers) by ``k1 x k2 x f2`` with ``f2`` the
    :func:`pod_fraction`; the worst sets the pace (the bisection argument per tier). The engine
    takes one ``max(1, K x f)``, so ``f = max(k1 f1, k1 k2 f2) / K``. With two tiers that is the
    :func:`cross_leaf_fraction`.
    """
    return _per_tier(
        sizing,
        cross_leaf_fraction(sizing, domain_nodes=domain_nodes),
        pod_fraction(sizing, domain_nodes=domain_nodes),
    )


def unaligned_fraction(
    sizing: FabricSizing, *, domain_nodes: int = 1, gpus_per_node: int | None = None
) -> float:
    """The crossing fraction of traffic off its rail (an all-to-all without PXN: each GPU's own
    NIC to the destination GPU's) the engine gets beside ``K``.

    Rail-optimized, a leaf serves one rail, so bytes to a peer GPU on another rail leave the
    leaf even inside the SU; with ``r`` rails a GPU uses (its node's NICs, at most one per GPU:
    NCCL's channels pick among a GPU's nearest NICs alike at both ends, so a lone GPU's bytes
    stay on their rail), ``1/r`` of a peer node's GPUs sit on the sender's rail:
    ``f1 = 1 - (1 - f)/r`` (NVIDIA, 'Doubling all2all Performance with NCCL 2.12', 2022:
    without PXN such traffic crosses the spines). With three tiers the pods are per rail too
    (:mod:`ibcalc.fabric.sizing`), so the spines' share is ``1 - (1 - f2)/r``. Otherwise a leaf
    (and a pod) holds every rail of its nodes and it is :func:`engine_fraction`.
    """
    f1 = cross_leaf_fraction(sizing, domain_nodes=domain_nodes)
    f2 = pod_fraction(sizing, domain_nodes=domain_nodes)
    r = _rails_used(sizing, gpus_per_node)
    if (
        sizing.rail_optimized
        and sizing.su_nodes
        and sizing.tiers >= 2
        and sizing.nodes >= 2
        and r > 1
    ):
        # f + (1 - f)(r - 1)/r, never below f by a rounding step (one rail: f itself)
        f1 = max(f1, 1.0 - (1.0 - f1) / r)
        f2 = max(f2, 1.0 - (1.0 - f2) / r) if sizing.tiers >= 3 else f2
    return _per_tier(sizing, f1, f2)


def _per_tier(sizing: FabricSizing, f1: float, f2: float) -> float:
    """``max(k1 f1, k1 k2 f2) / K`` with ``f2`` the share beyond the pod (three tiers), else
    ``f1``."""
    ratios = sizing.oversubscription
    if sizing.tiers < 3 or len(ratios) < 2:
        return f1
    k1, k2 = ratios[0], ratios[1]
    return max(k1 * f1, k1 * k2 * f2) / (k1 * k2)


def _split_nodes(sizing: FabricSizing) -> int:
    """Nodes whose NICs the port-by-port fill of leaves (``ceil(E / d)``) splits over two."""
    d, rails, ports = sizing.leaf_down, sizing.rails, sizing.nodes * sizing.rails
    return sum(1 for j in range(1, sizing.leaf_switches) if d * j < ports and d * j % rails)


def whole_leaf_group(sizing: FabricSizing) -> int | None:
    """The consecutive nodes one leaf group holds whole (a rail-optimized SU, else a leaf's
    whole nodes), for the workload commands' groups; None where the fill splits a node's NICs
    over two leaves, so that a group may straddle a boundary the count does not show (42 DGX on
    4 NICs each: nodes 10 and 30 span two leaves; a review)."""
    if sizing.rail_optimized and sizing.su_nodes:
        return max(1, sizing.leaf_group)
    return None if _split_nodes(sizing) else max(1, sizing.leaf_group)


def neighbour_fraction(sizing: FabricSizing, *, domain_nodes: int = 1) -> float:
    """The crossing fraction of neighbour traffic (ring, tree, SHARP's aggregation tree,
    send/recv) the engine gets beside the end-to-end ratio ``K``.

    With nodes placed leaf by leaf (the scheduler's topology order), a leaf group of ``g``
    nodes is one stretch of each ring, and of each tree a subtree or two: one edge per channel
    leaves it, one flow against the uplinks of ``g`` nodes' rails, ``1/g`` of them (cost_models
    3.7: rings and trees keep most traffic between neighbours). With scale-up domains of ``d``
    nodes (an NVL72 rack's 18 trays) a ring crosses the network only between domains: node
    ``i``'s network edge goes to node ``(i + d) mod N``, the same place in the next domain
    (the last domain's to the first), and the share is that of the worst full group's nodes
    whose edge leaves it (:func:`_ring_share`): ``1/g`` for ``d = 1``; ``d/g`` where the ring
    does not wrap into the group (48-tray leaf groups of NVL72 racks: 18/48, where counting
    trays had given 1/48, a fabric architect's review); 6/48 on 54 trays, whose last rack's
    edges come back into the first group (``min(1, d/g)`` had given 18/48, above the every-peer
    share; a review). A pod (three tiers) likewise, over its spines' uplinks. As
    :func:`engine_fraction`: ``max(k1 f1, k1 k2 f2) / K``; 0 where one leaf group (one pod), or
    one domain, holds every node.
    """
    group = sizing.leaf_group
    span = max(1, domain_nodes)
    if sizing.tiers < 2 or sizing.nodes <= max(group, span):
        return 0.0
    f1 = _ring_share(sizing.nodes, group, span)
    ratios = sizing.oversubscription
    if sizing.tiers < 3 or len(ratios) < 2:
        return f1
    k1, k2 = ratios[0], ratios[1]
    pod = min(sizing.nodes, sizing.spine_down * group)
    f2 = 0.0 if sizing.nodes <= pod else _ring_share(sizing.nodes, pod, span)
    return max(k1 * f1, k1 * k2 * f2) / (k1 * k2)


def _ring_share(nodes: int, group: int, span: int) -> float:
    """The largest share, over the full groups of ``group`` consecutive nodes, of a group's
    nodes ``i`` whose ring edge, to ``(i + span) mod nodes``, leaves the group."""
    worst = 0.0
    for start in range(0, nodes - group + 1, group):
        end = start + group
        out = sum(1 for i in range(start, end) if not start <= (i + span) % nodes < end)
        worst = max(worst, out / group)
    return worst


def cross_leaf_derivation(
    sizing: FabricSizing, *, domain_nodes: int = 1, gpus_per_node: int | None = None
) -> str:
    """How :func:`cross_leaf_fraction` was worked out, in words (for the design's notes)."""
    f = cross_leaf_fraction(sizing, domain_nodes=domain_nodes)
    if sizing.tiers < 2 or sizing.nodes < 2:
        return f"cross-leaf fraction {format_share(f)}: one tier (every node on one leaf)"
    group = sizing.leaf_group
    behind = max(0, sizing.nodes - group)
    if sizing.rail_optimized and sizing.su_nodes:
        how = f"a rail-optimized leaf serves one rail of an SU of {group} nodes"
    elif sizing.leaf_down < sizing.rails:
        how = f"a node's {sizing.rails} NICs span several leaves of {sizing.leaf_down} ports"
    else:
        how = (
            f"a leaf serves {sizing.leaf_down} // {sizing.rails} = {group} whole "
            f"node{'s' if group != 1 else ''}"
        )
        # the sizing fills leaves port by port (ceil(E / d)): a leaf boundary inside a node's
        # NICs splits it; the fraction counts whole nodes, the pessimistic reading
        split = _split_nodes(sizing)
        if split:
            how += (
                f"; the {sizing.leaf_switches} leaves are filled port by port, so {split} "
                f"node{'s' if split != 1 else ''} span two leaves"
            )
    # the formula's share for a node whose group is full (a node of a partial group has more
    # peers behind other leaves)
    share = f"(nodes - group) / (nodes - 1) = {behind}/{sizing.nodes - 1}"
    if _by_domain(sizing, domain_nodes):
        # scale-up domains of several nodes: their peers inside talk over NVLink
        share = (
            f"the worst leaf group's mean share of network peers (the {sizing.nodes - domain_nodes}"
            f" outside a node's {domain_nodes}-node scale-up domain) behind other leaves"
        )
    ratios = sizing.oversubscription
    # with three tapered tiers the leaves' share f1 is not the cross-leaf fraction the engine
    # gets (f, said last): 200 DGX H100 at [1, 4] had read "cross-leaf fraction 84%" here and
    # 21% (JSON cross_leaf_fraction 0.211) a line above
    three = sizing.tiers >= 3 and len(ratios) >= 2
    text = (
        ("at the leaf tier: leaf share f1 " if three else "cross-leaf fraction ")
        + f"{format_share(f)} = {share}, the rail-aligned peers outside a node's group "
        f"of {group} ({how}); "
        "it stands for traffic to every peer (all-to-all with PXN, recursive halving-doubling, "
        "PAT); "
        "neighbour traffic (ring, tree, SHARP, send/recv), placed leaf by leaf, leaves a group "
        + _neighbour_words(sizing, domain_nodes)
    )
    r = _rails_used(sizing, gpus_per_node)
    if sizing.rail_optimized and sizing.su_nodes and sizing.nodes > 1 and r > 1:
        pods = " (and, with three tiers, its pod: pods are per rail)" if sizing.tiers >= 3 else ""
        text += (
            f"; traffic off its rail (an all-to-all without PXN, each GPU's NIC to the "
            f"destination GPU's) leaves a rail's leaf{pods} for the {r - 1} of {r} peer GPUs on "
            f"other rails even inside the SU: 1 - (1 - {f:.3g})/{r} = {1 - (1 - f) / r:.3g} of "
            "it crosses the leaves"
        )
        if sizing.tiers >= 3:
            fu = unaligned_fraction(sizing, domain_nodes=domain_nodes, gpus_per_node=gpus_per_node)
            text += (
                f", 1 - (1 - f2)/{r} of it the spines, so the engine gets {fu:.3g} for it "
                "beside the end-to-end ratio"
            )
    if three:
        k1, k2 = ratios[0], ratios[1]
        pod = min(sizing.nodes, sizing.spine_down * group)
        f2 = pod_fraction(sizing, domain_nodes=domain_nodes)
        text += (
            f"; at the spine tier: pod share f2 {format_share(f2)}, the peers outside the node's "
            f"pod of {pod} nodes, across the {format_oversubscription(k2)} spine uplinks as well: "
            f"the leaves slow traffic x{format_slowdown(k1 * f)} (k1 x f1), "
            f"the spines x{format_slowdown(k1 * k2 * f2)} (k1 x k2 x f2), so the engine, given "
            f"{format_oversubscription(k1 * k2)} end to end, gets the cross-leaf fraction f = "
            f"{engine_fraction(sizing, domain_nodes=domain_nodes):.3g} (neighbour "
            f"traffic {neighbour_fraction(sizing, domain_nodes=domain_nodes):.3g}: as out of "
            f"a leaf group, out of a pod of {pod} nodes)"
        )
    return text


def _neighbour_words(sizing: FabricSizing, domain_nodes: int) -> str:
    """How :func:`neighbour_fraction`'s leaf share was worked out, in words."""
    group = sizing.leaf_group
    if sizing.nodes <= group:
        return "only to other groups, and there is one: none of it crosses"
    if domain_nodes <= 1:
        return f"over one edge per channel: 1/{group} of it ({format_share(1 / group)}) crosses"
    if sizing.nodes <= domain_nodes:
        return "only between scale-up domains, and there is one: none of it crosses the network"
    share = _ring_share(sizing.nodes, group, domain_nodes)
    return (
        f"only between {domain_nodes}-node scale-up domains, each node to its place in the "
        f"next domain (the last domain to the first): {format_share(share)} of it crosses (the "
        "worst leaf group's nodes whose edge leaves it)"
    )


def _spec(
    design: Design,
    oversubscription: float,
    cross_leaf: tuple[float, float, float, int | None] | None = None,
) -> ClusterSpec:
    # the fractions (uniform, neighbour, unaligned) are set only where the layout derived them:
    # else the engine's default (1) is said to be one
    derived: dict[str, object] = (
        {}
        if cross_leaf is None
        else {
            "cross_leaf_fraction": cross_leaf[0],
            "neighbour_cross_leaf_fraction": cross_leaf[1],
            "unaligned_cross_leaf_fraction": cross_leaf[2],
            # the stretch of nodes a workload's group may stay inside (the shares are the
            # whole cluster's: a 2-node expert group on one SU's leaves had paid the 4:1 taper
            # of a 256-node cluster, x3.26)
            "leaf_group_nodes": cross_leaf[3],
        }
    )
    # SHARP only where the file states it: a checkpoint names a stated one as ignored
    if design.fabric is not None and "sharp" in design.fabric.model_fields_set:
        derived["sharp"] = design.fabric.sharp
    return ClusterSpec(
        nodes=design.nodes,
        gpus_per_node=design.gpus_per_node,
        nics_per_node=design.nics_per_node,
        intra=design.intra,
        inter=design.inter_link,
        system=design.system,
        host_pcie=design.host_pcie,
        host_cpu=design.host_cpu,
        nvls=design.nvls,
        scale_up_domain=design.scale_up_domain,
        oversubscription=oversubscription,
        **derived,
    )


def _cluster(
    catalogue: Catalogue,
    design: Design,
    problems: _Problems,
    keys: Mapping[str, str],
    oversubscription: float,
    *,
    cross_leaf: tuple[float, float, float, int | None] | None = None,
) -> ResolvedCluster:
    try:
        return resolve_cluster(catalogue, _spec(design, oversubscription, cross_leaf))
    except IbcalcError as exc:
        problems.items.append(cluster_problem(problems.doc, exc, keys))
        problems.raise_if_any()
        raise  # pragma: no cover - raise_if_any raised


def _size(
    design: Design, cluster: ResolvedCluster, problems: _Problems
) -> tuple[SwitchModel | None, int | None, FabricSizing | None]:
    """Size the fat tree when the file gives a switch or a radix and the cluster has a
    scale-out tier; every refusal is a problem at the fabric key that caused it."""
    fabric = design.fabric
    if fabric is None or (fabric.switch is None and fabric.radix is None):
        return None, None, None
    if cluster.inter is None:
        return None, None, None
    port_Bps = cluster.inter.per_direction_Bps
    switch: SwitchModel | None = None
    ppc: int | None = None
    if fabric.switch is not None:
        switch = find_switch(fabric.switch)
        wrong_network = switch.network_problem(cluster.inter.family, cluster.inter.id)
        if wrong_network is not None:
            problems.add(("fabric", "switch"), wrong_network)
            problems.raise_if_any()
        try:
            mode = switch.mode_for(port_Bps)
        except FabricError as exc:
            problems.add(("fabric", "switch"), f"{exc} (the NICs are {cluster.inter.id})")
            problems.raise_if_any()
            raise  # pragma: no cover
        radix = mode.ports
        ppc = switch.ports_per_cage(mode)
    else:
        assert fabric.radix is not None
        radix = fabric.radix
    cages_per_node = None
    if cluster.system is not None:
        known = node_cages().get(cluster.system.id)
        # the layout its source states: that system named by its id (an HGX board of another
        # maker, named by an alias, has its own NIC cards: review BO) and the NICs the cages
        # hold (two 400G NDR NICs a twin-port cage: 8 x 800G NICs on a dgx-h100, or a
        # catalogue giving dgx-h100 XDR, had been counted 4 cages a node: reviews BL, BO)
        named = (design.system or "").strip().lower() == cluster.system.id
        if (
            known is not None
            and named
            and known.nics == cluster.nics_per_node
            and cluster.inter is not None
            and cluster.inter.id == known.nic_link
        ):
            cages_per_node = known.cages
    try:
        sizing = size_fat_tree(
            cluster.nodes,
            cluster.nics_per_node,
            radix,
            oversubscription=fabric.oversubscription,
            rail_optimized=fabric.rail_optimized,
            tiers=fabric.tiers,
            extra_endpoints=fabric.extra_endpoints,
            port_Bps=port_Bps,
            ports_per_cage=ppc,
            node_cages_per_node=cages_per_node,
        )
    except FabricError as exc:
        problems.add(("fabric", "tiers") if fabric.tiers is not None else ("fabric",), str(exc))
        problems.raise_if_any()
        raise  # pragma: no cover
    return switch, radix, sizing


def resolve_design(design: Design, doc: Document, catalogue: Catalogue) -> ResolvedDesign:
    """Check the names, resolve the cluster and size the fabric; every problem is raised at
    once as :class:`DesignError`, located at its YAML key."""
    problems = _Problems(doc)
    problems.items += name_problems(doc, catalogue)
    problems.raise_if_any()
    return _resolve(design, doc, catalogue)


def _resolve(design: Design, doc: Document, catalogue: Catalogue) -> ResolvedDesign:
    problems = _Problems(doc)
    keys = field_keys(doc)
    declared = design.declared_oversubscription
    if design.fabric is not None and declared > MAX_OVERSUBSCRIPTION:
        # each tier's ratio passed its own check: say that their product is what is refused
        tiers = design.fabric.oversubscription
        problems.add(
            ("fabric", "oversubscription"),
            f"the tiers' ratios ({ratios_text(tiers)}) "
            f"multiply to {format_oversubscription(declared)} end to end, above the "
            f"{format_oversubscription(MAX_OVERSUBSCRIPTION)} accepted",
        )
        problems.raise_if_any()
    cluster = _cluster(catalogue, design, problems, keys, declared)
    switch, radix, sizing = _size(design, cluster, problems)
    oversubscription = declared
    cross_leaf: float | None = None
    if sizing is not None:
        oversubscription = sizing.end_to_end_oversubscription
        domain_nodes = domain_nodes_of(cluster)
        fraction = engine_fraction(sizing, domain_nodes=domain_nodes)
        if oversubscription != declared or oversubscription > 1:
            # the fractions act only on tapered leaves: on a 1:1 fabric the cluster is not
            # given them (they would be noted as options given and ignored); on tapered ones
            # they are given even where the share of traffic to every peer is 1, which left
            # the neighbour share the layout derived to the engine's default (1, every byte)
            cluster = _cluster(
                catalogue,
                design,
                problems,
                keys,
                oversubscription,
                cross_leaf=(
                    (
                        fraction,
                        neighbour_fraction(sizing, domain_nodes=domain_nodes),
                        unaligned_fraction(
                            sizing,
                            domain_nodes=domain_nodes,
                            gpus_per_node=cluster.gpus_per_node,
                        ),
                        whole_leaf_group(sizing),
                    )
                    if oversubscription > 1
                    else None
                ),
            )
            cross_leaf = fraction
    return ResolvedDesign(
        path=doc.path,
        design=design,
        cluster=cluster,
        switch=switch,
        radix=radix,
        fabric=sizing,
        # design show had said 'oversubscription fed to the engine 2:1' of one NVL72 rack
        # above 'ignored'
        oversubscription=oversubscription if prices_oversubscription(cluster) else 1.0,
        cross_leaf_fraction=cross_leaf,
        keys=keys,
    )


# --- findings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectiveBasis:
    """What a collective finding rests on: the request and the engine's estimate for it."""

    collective: Collective
    size_bytes: float
    algorithm: Algorithm | None
    dtype: str
    estimate: Estimate


@dataclass(frozen=True)
class GapBasis:
    """Per-GPU line rates per direction (bytes per second) behind a gap finding; where the host
    PCIe link caps the NICs below their achievable rate, that link and the achievable gap (the
    gate stays on line rates, as documented; the cap is said beside it)."""

    up_line_Bps: float
    out_line_per_gpu_Bps: float
    capped_by: str | None = None
    achievable_gap: float | None = None


@dataclass(frozen=True)
class OversubscriptionBasis:
    """Where the worst tier ratio came from: the sized fabric (``tiers`` levels), the file's
    declared ratios, or no fabric at all (non-blocking); ``end_to_end``, the tiers' ratios
    multiplied, is what the collectives are priced at (the report's "as priced" line). A cluster
    of one scale-up domain has no finding: its ratio is not priced (:func:`evaluate`)."""

    source: Literal["sized", "declared", "none"]
    tiers: int | None = None
    end_to_end: float = 1.0
    #: the ``max`` of every oversubscription requirement of the design, this one's among them:
    #: the report prints the worst tier one way beside all of them (its header too)
    limits: tuple[float, ...] = ()


@dataclass(frozen=True)
class SwitchesBasis:
    """Switch counts per level behind a switch-count finding, with the narrower leaf split of
    the same ratio that needs fewer switches (not taken for the traffic it slows) and the
    bisection it is weighed against."""

    leaf: int
    spine: int
    core: int
    cheaper: CheaperSplit | None = None
    bisection_Bps: float | None = None
    #: (extra endpoints, the switches they add) where they add any
    #: (:attr:`~ibcalc.fabric.sizing.FabricSizing.switches_without_extra`), else None
    extra: tuple[int, int] | None = None


Basis = CollectiveBasis | GapBasis | OversubscriptionBasis | SwitchesBasis


@dataclass(frozen=True)
class Finding:
    """The outcome of one requirement target, as numbers.

    ``kind`` is the requirement key (``allreduce``, ``gap`` ...), ``target`` the target key
    (``max_time``, ``min_busbw``, ``max_ratio``, ``max``). ``required`` and ``predicted`` are in SI
    units named by ``unit`` (``s``, ``B/s``, ``x`` for the gap ratio, ``down:up`` for
    oversubscription, ``switches``); ``comparison`` says which way passes. ``margin`` is the
    headroom as a fraction of ``required`` (see :func:`judge`): positive passes, negative fails.
    ``basis`` holds the estimate or fabric figures used; ``file:line:col`` is the target's key.
    """

    design: str
    kind: str
    target: str
    comparison: Comparison
    required: float
    unit: str
    predicted: float
    margin: float
    passed: bool
    basis: Basis
    file: str
    line: int | None
    col: int | None
    #: True when ``predicted`` is the pessimistic end of the estimate's error band
    #: (``ibcalc check --pessimistic``): the slow time, the low bandwidth.
    pessimistic: bool = False
    #: (low, high) of the compared figure a measurement is likely to show, in ``unit``: the
    #: estimate's time range, or the busbw or algbw it gives (None: no band, or not a collective)
    predicted_range: tuple[float, float] | None = None
    #: the target's value as the file wrote it (``'300GiB/s'``), where it is text: a rate prints
    #: in the unit family it was written in, binary or decimal
    written: str | None = None


def judge(predicted: float, required: float, comparison: Comparison) -> tuple[bool, float]:
    """Pass/fail and margin of ``predicted`` against ``required``.

    ``<=``: passes when ``predicted <= required``, margin ``(required - predicted) / required``;
    ``>=``: passes when ``predicted >= required``, margin ``(predicted - required) / required``.
    A zero ``required`` (``switches: {max: 0}``) gives margin 0 when passing, -1 when not.
    """
    if comparison == "<=":
        passed = predicted <= required
        margin = (required - predicted) / required if required else (0.0 if passed else -1.0)
    else:
        passed = predicted >= required
        margin = (predicted - required) / required if required else 0.0
    return passed, margin


def _finding(
    resolved: ResolvedDesign,
    doc: Document,
    loc: Loc,
    *,
    kind: str,
    target: str,
    predicted: float,
    required: float,
    comparison: Comparison,
    unit: str,
    basis: Basis,
    pessimistic: bool = False,
    predicted_range: tuple[float, float] | None = None,
) -> Finding:
    passed, margin = judge(predicted, required, comparison)
    line, col = doc.locate(loc)
    return Finding(
        design=resolved.design.name,
        kind=kind,
        target=target,
        comparison=comparison,
        required=required,
        unit=unit,
        predicted=predicted,
        margin=margin,
        passed=passed,
        basis=basis,
        file=doc.path,
        line=line,
        col=col,
        pessimistic=pessimistic,
        predicted_range=predicted_range,
        written=_written_at(doc.data, loc),
    )


def _written_at(data: object, loc: Loc) -> str | None:
    """The value at ``loc`` of a file's data as written, where it is text."""
    for key in loc:
        if isinstance(data, dict) and key in data:
            data = data[key]
            continue
        if not (isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data)):
            return None
        data = data[key]
    return data if isinstance(data, str) else None


#: Collective targets: the estimate's figure each compares, which way passes, and its unit.
_COLLECTIVE_MEASURES: dict[str, tuple[str, Comparison, str]] = {
    "max_time": ("time_s", "<=", "s"),
    "min_busbw": ("busbw_Bps", ">=", "B/s"),
    "min_algbw": ("algbw_Bps", ">=", "B/s"),
}


def _collective_findings(
    resolved: ResolvedDesign,
    doc: Document,
    loc: Loc,
    *,
    collective: Collective,
    target: CollectiveTarget,
    problems: _Problems,
    pessimistic: bool = False,
    params: CostParams | None = None,
    estimates: dict[tuple[object, ...], Estimate] | None = None,
) -> list[Finding]:
    """The findings of one collective requirement; ``estimates`` holds the file's estimates by
    request, so that a request repeated is priced once."""
    request = (collective, target.size, target.dtype, target.algo)
    try:
        est = estimates.get(request) if estimates is not None else None
        if est is None:
            est = estimate_on(
                resolved.cluster,
                collective,
                target.size,
                dtype=target.dtype,
                algorithm=target.algo,
                params=params,
                sharp_what_if=False,
            )
            # a finding keeps the estimate it rests on, not the candidates ranked below it
            # (a file of 10,000 requirements had held 450 MB, and each file's stayed held
            # until the report: review BN)
            est = est.model_copy(update={"alternatives": []})
            if estimates is not None:
                estimates[request] = est
    except AlgorithmNotApplicableError as exc:
        # its reason may name a setting as a {field} mark: the file's key for it
        text = exc.render(lambda f: resolved.keys.get(f, f))
        problems.add((*loc, "algo"), _without_flags(text, resolved.keys))
        return []
    except IbcalcError as exc:
        problems.add((*loc, "size"), _without_flags(str(exc), resolved.keys))
        return []
    basis = CollectiveBasis(collective, target.size, target.algo, target.dtype, est)
    found: list[Finding] = []
    for name, (figure, comparison, unit) in _COLLECTIVE_MEASURES.items():
        required = getattr(target, name)
        if required is None:
            continue
        predicted = float(getattr(est, figure))
        band: tuple[float, float] | None = None
        if est.time_s_range is not None:
            fast_s, slow_s = est.time_s_range
            # a rate scales as 1 / time: its low end is at the slow time
            band = (
                (fast_s, slow_s)
                if figure == "time_s"
                else (predicted * est.time_s / slow_s, predicted * est.time_s / fast_s)
            )
        if pessimistic and band is not None:
            predicted = band[1] if figure == "time_s" else band[0]
        found.append(
            _finding(
                resolved,
                doc,
                (*loc, name),
                kind=str(loc[-1]),
                target=name,
                predicted=predicted,
                required=required,
                comparison=comparison,
                unit=unit,
                basis=basis,
                pessimistic=pessimistic and est.time_s_range is not None,
                predicted_range=band,
            )
        )
    return found


def _no_gap(resolved: ResolvedDesign) -> str:
    """Why a gap target has no gap to judge, naming the tier the cluster lacks (review CC: "this
    cluster lacks one" had not said which, for 1 x DGX H100 or 18 GB200 trays alike)."""
    cluster = resolved.cluster
    topo = cluster.topology
    if topo.out is None or topo.domains < 2:
        whole = (
            "its one node is" if cluster.nodes == 1 else f"its {plural(cluster.nodes, 'node')} are"
        )
        return (
            f"the gap needs a scale-up and a scale-out tier; this cluster has no scale-out tier: "
            f"{whole} one scale-up domain of {plural(topo.m, 'GPU')}"
        )
    return (
        "the gap needs a scale-up and a scale-out tier; this cluster has no scale-up tier: "
        f"{plural(cluster.gpus_per_node, 'GPU')} per node"
    )


def _no_taper(resolved: ResolvedDesign) -> str:
    """Why an oversubscription target has no ratio to judge: the cluster is one scale-up domain
    (:func:`~ibcalc.cluster.resolve.prices_oversubscription`), with the declared ratio it does
    not use."""
    limit = "an oversubscription limit needs a scale-out fabric"
    unpriced = unpriced_ratio(resolved)
    if unpriced is not None:
        return f"{limit}; fabric.oversubscription {unpriced}"
    return (
        f"{limit}: the whole cluster is one scale-up domain, with no network for a ratio to taper"
    )


def unpriced_ratio(resolved: ResolvedDesign) -> str | None:
    """The file's fabric.oversubscription where the cluster does not price it (one scale-up
    domain: :func:`~ibcalc.cluster.resolve.prices_oversubscription`), as check's warning at the
    key, its refusal of a gate and design show's engine line say it (``2:1 not priced: ...``);
    None where the ratio is priced or the file gives none above 1:1."""
    design = resolved.design
    if prices_oversubscription(resolved.cluster) or design.declared_oversubscription <= 1:
        return None
    assert design.fabric is not None  # a ratio above 1:1 is a fabric's
    return f"{ratios_text(design.fabric.oversubscription)} {OVERSUBSCRIPTION_NOT_PRICED}"


def ratios_text(ratios: Sequence[float]) -> str:
    """Declared tier ratios as the file gives them: ``2:1``, ``2:1 x 2:1`` (the words of
    check's warning and of design show)."""
    return " x ".join(format_oversubscription(r) for r in ratios)


def _gap_finding(
    resolved: ResolvedDesign, doc: Document, loc: Loc, target: GapTarget
) -> Finding | None:
    bws = per_gpu_bandwidths(resolved.cluster.topology)
    if bws.gap is None or bws.up_line_Bps is None or bws.out_line_per_gpu_Bps is None:
        return None
    return _finding(
        resolved,
        doc,
        (*loc, "max_ratio"),
        kind="gap",
        target="max_ratio",
        predicted=bws.gap,
        required=target.max_ratio,
        comparison="<=",
        unit="x",
        basis=GapBasis(bws.up_line_Bps, bws.out_line_per_gpu_Bps, *_gap_cap(resolved, bws)),
    )


#: The least share of a NIC's achievable rate a host-link cap must take off to be said in a
#: gap target's warning: a threshold of what is worth saying, not a fit (1 %: PCIe Gen6's
#: 96.8 GB/s under XDR's 97.5 is 0.7 %).
CAP_WORTH_SAYING = 0.01


def _gap_cap(resolved: ResolvedDesign, bws: PerGpuBandwidths) -> tuple[str | None, float | None]:
    """The host PCIe link that caps the NICs below their own achievable rate, and the
    achievable gap it leaves (scale-up over scale-out, per GPU, from ``bws``, the cluster's
    :func:`per_gpu_bandwidths`); (None, None) uncapped, or capped by less than 1 % of the
    NIC's achievable rate (DGX B300: PCIe Gen6 at 96.8 GB/s under XDR's 97.5, which had put a
    warning on every B300 gap target whose "achievable" ratio read as the cap's doing: a
    review)."""
    out = resolved.cluster.topology.out
    if out is None or out.nic_cap is None:
        return None, None
    inter = resolved.cluster.inter
    if inter is not None and out.nic_bw_Bps >= (1 - CAP_WORTH_SAYING) * inter.achievable_Bps:
        return None, None
    if bws.up_Bps is None or not bws.out_per_gpu_Bps:
        return out.nic_cap, None
    return out.nic_cap, bws.up_Bps / bws.out_per_gpu_Bps


def _cap_words(resolved: ResolvedDesign, host: str) -> str:
    """What caps the NICs below their own rate, each cap the engine applies that is worth saying
    (:data:`CAP_WORTH_SAYING`): the host link each NIC sits on, and a node's NICs beyond what
    its GPUs' links feed (every GPU reaches its NICs through its own x16 link:
    :func:`~ibcalc.cluster.resolve.gpu_fed_nic_Bps`). 16 NDR NICs on a DGX H100 had read 'pcie5
    caps each NIC below its own rate', where one NDR NIC fits Gen5 (review DJ L1); 16 XDR NICs
    there are capped both ways, and 16 on a DGX B300 by the feed alone (review DY 1)."""
    cluster = resolved.cluster
    link, inter = cluster.host_pcie, cluster.inter
    # the GPUs' own PCIe link where they meet over PCIe: GPUDirect RDMA crosses it (review DY 6)
    name = f"the GPUs' own {host} link" if cluster.host_pcie_is_gpu_bus else host
    each = f"{name} caps each NIC below its own rate"
    if link is None or inter is None:
        return each
    nics, gpus = cluster.nics_per_node, cluster.gpus_per_node
    per_nic = link.achievable_Bps < (1 - CAP_WORTH_SAYING) * inter.achievable_Bps
    nic_Bps = min(link.achievable_Bps, inter.achievable_Bps)
    fed = gpu_fed_nic_Bps(nic_Bps, link, nics, gpus) is not None
    said = [each] if per_nic else []
    if fed:
        said.append(
            f"{nics} NICs for {plural(gpus, 'GPU')} exceed what each GPU's {host} link can feed"
        )
    return " and ".join(said) or each


def _oversubscription_finding(
    resolved: ResolvedDesign, doc: Document, loc: Loc, target: OversubscriptionTarget
) -> Finding:
    fabric = resolved.design.fabric
    limits = tuple(
        item.target.max
        for item in resolved.design.requirements
        if isinstance(item.target, OversubscriptionTarget)
    )
    basis: OversubscriptionBasis
    if resolved.fabric is not None:
        worst = resolved.fabric.worst_oversubscription
        basis = OversubscriptionBasis(
            "sized", resolved.fabric.tiers, resolved.fabric.end_to_end_oversubscription, limits
        )
    elif fabric is not None:
        worst = max(fabric.oversubscription)
        basis = OversubscriptionBasis(
            "declared", end_to_end=resolved.design.declared_oversubscription, limits=limits
        )
    else:
        worst = 1.0
        basis = OversubscriptionBasis("none", limits=limits)
    return _finding(
        resolved,
        doc,
        (*loc, "max"),
        kind="oversubscription",
        target="max",
        predicted=worst,
        required=target.max,
        comparison="<=",
        unit="down:up",
        basis=basis,
    )


def _switches_finding(
    resolved: ResolvedDesign, doc: Document, loc: Loc, target: SwitchesTarget
) -> Finding | None:
    fab = resolved.fabric
    if fab is None:
        return None
    return _finding(
        resolved,
        doc,
        (*loc, "max"),
        kind="switches",
        target="max",
        predicted=float(fab.total_switches),
        required=float(target.max),
        comparison="<=",
        unit="switches",
        basis=SwitchesBasis(
            fab.leaf_switches,
            fab.spine_switches,
            fab.core_switches,
            cheaper=fab.cheaper_split,
            bisection_Bps=fab.bisection_Bps,
            extra=(
                (fab.extra_endpoints, fab.total_switches - fab.switches_without_extra)
                if fab.switches_without_extra is not None
                and fab.total_switches > fab.switches_without_extra
                else None
            ),
        ),
    )


def evaluate(
    resolved: ResolvedDesign,
    doc: Document,
    *,
    pessimistic: bool = False,
    params: CostParams | None = None,
) -> list[Finding]:
    """One :class:`Finding` per requirement target, in file order; collectives are estimated
    with ``params`` (the built-in cost parameters when None).

    A requirement that cannot be evaluated (a forced algorithm that does not apply, a size too
    small for the ranks, a gap without two tiers, a switch count without a sized fabric, an
    oversubscription limit on one scale-up domain) is a problem of the file: all of them are
    raised together as :class:`DesignError`.
    """
    problems = _Problems(doc)
    findings: list[Finding] = []
    estimates: dict[tuple[object, ...], Estimate] = {}  # one per distinct request in the file
    for index, item in enumerate(resolved.design.requirements):
        loc: Loc = ("requirements", index, item.kind)
        target = item.target
        collective = item.collective
        if collective is not None and isinstance(target, CollectiveTarget):
            findings += _collective_findings(
                resolved,
                doc,
                loc,
                collective=collective,
                target=target,
                problems=problems,
                pessimistic=pessimistic,
                params=params,
                estimates=estimates,
            )
        elif isinstance(target, GapTarget):
            gap = _gap_finding(resolved, doc, loc, target)
            if gap is None:
                problems.add(loc, _no_gap(resolved))
            else:
                findings.append(gap)
        elif isinstance(target, OversubscriptionTarget):
            if prices_oversubscription(resolved.cluster):
                findings.append(_oversubscription_finding(resolved, doc, loc, target))
            else:
                # one NVL72 rack with a 2:1 fabric had failed a 1:1 gate 'as declared' beside
                # the warning that the ratio is not used; a gap or a switch count with no
                # network is refused so, not judged
                problems.add(loc, _no_taper(resolved))
        elif isinstance(target, SwitchesTarget):
            switches = _switches_finding(resolved, doc, loc, target)
            if switches is None:
                # with no scale-out tier, switch named or not, as design show says: one rack
                # with only fabric.link had been told to name a switch, which sizes nothing
                problems.add(
                    loc,
                    f"a switch count needs a scale-out fabric: {_SIZES_NOTHING[1]}"
                    if resolved.cluster.topology.out is None
                    else "a switch count needs a sized fabric: give fabric.switch or fabric.radix "
                    "(and more than one scale-up domain)",
                )
            else:
                findings.append(switches)
    problems.raise_if_any()
    return findings


def design_warnings(resolved: ResolvedDesign, doc: Document) -> list[ValidationProblem]:
    """Settings of the file the cluster cannot honour, each at its key: ``fabric.sharp: true``
    on a fabric without SHARP, ``fabric.link``, ``fabric.switch``, ``fabric.radix`` and
    ``fabric.oversubscription`` on one scale-up domain (no network),
    a leaf ratio in ``fabric.oversubscription`` on a fabric of one switch level, a spine ratio
    on a fabric sized to fewer than three levels, a tier's ratio the switch cannot split
    exactly (built smaller), ``nvls: true`` on a scale-up link without NVLink SHARP. The
    check still runs (without them), but a setting silently dropped would make a passing CI
    gate claim something about a cluster that is not the one written."""
    problems = _Problems(doc)
    design, cluster = resolved.design, resolved.cluster
    fabric = design.fabric
    if fabric is not None and fabric.sharp:
        out = cluster.topology.out
        if out is None or cluster.inter is None:
            # in the words design show's assumptions and an estimate with --sharp on one node
            # use ('true, but the cluster has no scale-out fabric: ... is not used' had been
            # check's own)
            problems.add(("fabric", "sharp"), f"true {NETWORK_OPTIONS_IGNORED}")
        elif not out.sharp:
            problems.add(
                ("fabric", "sharp"),
                f"true, but {cluster.inter.id} has no SHARP (in-network reduction): not used; "
                "the predictions are without it",
            )
    for key, value, (does, why) in unused_fabric(resolved):
        problems.add(("fabric", key), f"{value} {does}: {why}")
    sizing = resolved.fabric
    ratios = fabric.oversubscription if fabric is not None else ()
    unpriced = unpriced_ratio(resolved)
    if unpriced is not None:
        # one NVL72 rack with a 2:1 fabric had read 'as priced: oversubscription 2:1, ...
        # every byte crosses the tapered uplinks' in check, 'ignored' in design show
        problems.add(("fabric", "oversubscription"), unpriced)
    if sizing is not None and sizing.tiers == 1 and ratios and ratios[0] != 1 and not unpriced:
        # one switch has no uplinks: a leaf ratio had been dropped with a line in the text
        # header only, so a JSON or GitHub report passed 'oversubscription: {max: 1}' silently
        # on a file that asked for 3:1, as the spine ratio below had
        problems.add(
            ("fabric", "oversubscription"),
            f"the leaf ratio {format_oversubscription(ratios[0])} is not used: the sized fabric "
            "has 1 switch level, no uplinks; the predictions are without it (fabric.tiers: 2 "
            "builds a spine)",
        )
    if sizing is not None and sizing.tiers < 3 and len(ratios) > 1 and ratios[1] != 1:
        problems.add(
            ("fabric", "oversubscription"),
            f"the spine ratio {format_oversubscription(ratios[1])} is not used: the sized fabric "
            f"has {sizing.tiers} switch level{'s' if sizing.tiers != 1 else ''}, no spine uplinks; "
            "the predictions are without it (fabric.tiers: 3 builds a core)",
        )
    if sizing is not None and ratios:
        # a ratio the switch cannot split exactly is built smaller (20:1 on 8 ports as 7:1),
        # and the collectives are priced at what is built: said, as for the spine ratio above
        for tier, index, d, u, built in (
            ("leaf", 0, sizing.leaf_down, sizing.leaf_up, sizing.tiers > 1),
            ("spine", 1, sizing.spine_down, sizing.spine_up, sizing.tiers == 3),
        ):
            if built and index < len(ratios):
                words = inexact_split(tier, sizing.radix, ratios[index], d, u)
                if words is not None:
                    problems.add(
                        ("fabric", "oversubscription"),
                        f"{words}; the predictions use "
                        f"{format_oversubscription_apart(d / u, ratios[index])}",
                    )
    bws = per_gpu_bandwidths(cluster.topology)
    host, achievable = _gap_cap(resolved, bws)
    for index, item in enumerate(design.requirements):
        # (a cluster without both tiers has no gap: its finding says so)
        if isinstance(item.target, GapTarget) and host is not None and bws.gap is not None:
            problems.add(
                ("requirements", index, item.kind, "max_ratio"),
                f"judges line rates ({format_ratio(bws.gap)}), but {_cap_words(resolved, host)}"
                + (f": {format_ratio(achievable)} at the achievable rates" if achievable else "")
                + "; the collective requirements are priced at the capped rate",
            )
    system, capped = cluster.system, nccl_tests_cap(cluster.system)
    for index, item in enumerate(design.requirements):
        # a size nccl-tests would not run on these GPUs: a passing check of a run that cannot
        # be measured (a 100 GB all-reduce on DGX H100 had passed without a word; a review)
        size = item.target.size if isinstance(item.target, CollectiveTarget) else None
        if system is not None and capped is not None and size is not None and size > capped[1]:
            problems.add(
                ("requirements", index, item.kind, "size"),
                f"{format_size(size, typed=True)} is past the about "
                f"{memory_size(capped[1])} nccl-tests runs on {system.id}'s GPUs "
                f"({NCCL_TESTS_BUFFERS}): no run of this size exists, so no measurement can "
                "confirm the requirement",
            )
    preset = cluster.system
    if (
        preset is not None
        and design.gpus_per_node is not None
        and design.gpus_per_node not in (preset.gpus_per_node, preset.scale_up_domain)
        and preset.scale_up_domain > preset.gpus_per_node
    ):
        # gb200-nvl72 with gpus_per_node: 8 had been checked as 8-GPU nodes on the network,
        # the file's NVL72 premise dropped, with no word in check's report (review DJ)
        problems.add(
            ("gpus_per_node",),
            f"{design.gpus_per_node} is not {preset.id}'s {preset.gpus_per_node}: its "
            f"{preset.scale_up_domain}-GPU NVLink domain is not assumed; the predictions are "
            f"for {design.gpus_per_node}-GPU nodes joined by the network",
        )
    gpus, nics = cluster.gpus_per_node, cluster.nics_per_node
    if nics and gpus % nics and nics % gpus:
        # 5 NICs on 8 GPUs had been priced as 5/8 of a NIC per GPU, with no word (review DJ);
        # a count the preset's share gives too (aws-p4d on 5 GPUs: 3 NICs; review DK)
        # at the key that set the count: nics_per_node, else the GPUs per node that resized a
        # preset's share
        key = "nics_per_node" if design.nics_per_node is not None else "gpus_per_node"
        problems.add(
            (key,),
            f"{nics} NICs on {gpus} GPUs: priced as an even share ({nics}/{gpus} of a NIC per "
            "GPU), which is optimistic where NCCL pairs each GPU with whole NICs and some "
            "carry more GPUs than others",
        )
    up = cluster.topology.up
    if design.nvls and (up is None or up.nvls_bw_Bps is None):
        link = cluster.intra.id if cluster.intra is not None else "this scale-up link"
        problems.add(
            ("nvls",),
            f"true, but {link} here has no NVLink SHARP: not used; the predictions are without it",
        )
    # in file order, as a file's errors are (they had come in the order of the rules above:
    # a requirement's size at line 6 before nics_per_node at line 4)
    return by_position(problems.items)


@dataclass(frozen=True)
class DesignCheck:
    """One checked design file: the resolved design, its findings, and its warnings (settings
    of the file that the cluster cannot honour, located at their keys)."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    path: str
    resolved: ResolvedDesign
    findings: list[Finding]
    warnings: list[ValidationProblem] = field(default_factory=list)
    #: what the findings' figures rest on that a line cannot say: where a likely range
    #: reaches down to Simple's per-step reading past the ranks it is fitted on (review DM)
    notes: list[str] = field(default_factory=list)

    @property
    def design(self) -> Design:
        """The validated design."""
        return self.resolved.design

    @property
    def passed(self) -> bool:
        """True when every finding passed."""
        return all(f.passed for f in self.findings)


def check_design(
    source: str | Path,
    catalogue: Catalogue,
    *,
    text: str | None = None,
    pessimistic: bool = False,
    allow_empty: bool = True,
    params: CostParams | None = None,
) -> DesignCheck:
    """Load, resolve and evaluate one design file (or ``text`` labelled with ``source``, as
    :func:`load_design` takes it: a script had to write a file to check a design it built);
    with ``pessimistic``, collective targets are judged against the pessimistic end of each
    estimate's error band; ``params``: the cost parameters collectives are estimated with (the
    built-in ones when None).

    Raises :class:`DesignError` (every problem of the file, ``file:line:col``) when the file
    cannot be read, validated, resolved or evaluated, and, unless ``allow_empty``, when it has
    no requirements (a CI gate over it would pass having checked nothing).
    """
    expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")
    _expect_arguments(source, catalogue, text=text, params=params)
    # "no" is truthy: pessimistic="no" had judged the pessimistic end (review CH)
    pessimistic = expect_bool(pessimistic, "pessimistic")
    allow_empty = expect_bool(allow_empty, "allow_empty")
    design, doc = load_design(source, text=text, catalogue=catalogue)
    resolved = _resolve(design, doc, catalogue)
    if not allow_empty and not design.requirements:
        problems = _Problems(doc)
        where = ("requirements",) if _present(doc, ("requirements",)) else ()
        problems.add(
            where,
            "none given: nothing to check, so the check would pass vacuously (add "
            "requirements, or give --allow-empty)",
            where=("requirements",),
        )
        problems.raise_if_any()
    findings = evaluate(resolved, doc, pessimistic=pessimistic, params=params)
    return DesignCheck(
        path=doc.path,
        resolved=resolved,
        findings=findings,
        warnings=design_warnings(resolved, doc),
        notes=_range_notes(resolved, findings, params),
    )


def _range_notes(
    resolved: ResolvedDesign, findings: Sequence[Finding], params: CostParams | None
) -> list[str]:
    """The design's word, once, on likely ranges that reach down to Simple's per-step reading
    (:func:`~ibcalc.facade.simple_extrapolation_notes`): a 16 x p5 all-gather's busbw range
    had read 87.8-232 GB/s, 174 without the reading, with no word of it (review DM); and to an
    all-to-all's message term held at its fitted runs' (:func:`~ibcalc.facade.
    message_extrapolation_notes`): the 140-node DGX A100 example's 256 MB all-to-all, 1119
    messages a rank at 3.37 us, read 14.2 ms (10.4-17.1) with no word of either."""
    said: dict[str, list[str]] = {}
    topo = resolved.cluster.topology
    cost = params if params is not None else builtin_cost_params()
    for f in findings:
        if isinstance(f.basis, CollectiveBasis):
            messages = (
                message_extrapolation_notes(topo, cost)
                if f.basis.collective is Collective.ALL_TO_ALL
                else []
            )
            for note in messages + simple_extrapolation_notes(
                topo,
                params,
                f.basis.collective,
                [f.basis.estimate],
                rows="requirements",
            ):
                # the requirements whose ranges moved, by name (review DP: the note had not
                # said which of the file's five it was)
                name = f"{f.kind} {format_size(f.basis.size_bytes, typed=True)}"
                names = said.setdefault(note, [])
                if name not in names:
                    names.append(name)
    return [f"{', '.join(names)}: {note}" for note, names in said.items()]
