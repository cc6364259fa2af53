"""Fat-tree fabric sizing: switch, cable and transceiver counts from nodes, rails and radix.

Pure functions of integers, no I/O (docs/design-files.md#fabric-sizing). The switch models
(``data/switches.yaml``) live in :mod:`ibcalc.fabric.switches`; ``SWITCHES``, ``NODE_CAGES`` and
``find_switch`` are re-exported here. The rules, in the order the
sizing applies them:

* **Leaf port split** (docs/design-files.md#leaf-port-split): a leaf with ``k`` ports at the NIC
  rate and oversubscription ``o = p/q`` (down:up, in lowest terms) uses ``d = p*j`` down and
  ``u = q*j`` up ports with ``j = k // (p + q)``, so the ratio is exactly ``o`` and leftover ports
  stay unused (1:1 gives ``k/2`` and ``k/2``). If ``p + q > k``, ``d = floor(k*o/(1+o))`` and
  ``u = ceil(d/o)``. A tapered leaf also sizes every smaller whole multiple of ``p:q``: the
  widest is kept unless a narrower one needs fewer switches without slowing traffic to every
  peer more (where the widest already slows it, by more than the estimates' 2 % tie), or the
  widest needs more switches than the same nodes at 1:1 (then the widest split within that
  count).
* **Whole scalable units** (docs/design-files.md#scalable-units-and-rails): rail-optimized, an SU
  holds ``d`` nodes (the leaf's down-port count) and one leaf per rail; the node count is rounded
  up to whole SUs, as NVIDIA does ("the fabric should be designed to support the full SU"). Extra
  endpoints (UFM appliances) take free leaf ports and can force another SU (NVIDIA Table 4: 31
  nodes + 4 UFM ports per SU). Not rail-optimized, endpoints fill ``ceil(E/d)`` leaves.
* **Spines share a leaf's uplinks evenly** (NVIDIA rule; docs/design-files.md#spine-count-rule):
  the spine count ``S`` of a group of ``L`` leaves is the smallest divisor of ``u`` with
  ``S >= L*u/k_down``; two tiers use every leaf in one group with ``k_down = k``.
* **Three tiers** (docs/design-files.md#three-tiers): leaves are grouped per rail (rail-optimized)
  into pods of at most ``k_spine_down`` leaves; each pod gets its own spines by the rule above with
  the spine's down ports as capacity (``k/2`` at 1:1), each spine sends up as much as it takes in
  (divided by its own oversubscription), and ``core = ceil(spine uplinks / k)``. A core switch must
  reach every pod, so at most ``k`` pods: ``k^3/4`` endpoints at 1:1
  (docs/design-files.md#fat-tree-limits).
* **Cables**: one per endpoint at node-leaf, every leaf uplink at leaf-spine (NVIDIA cables the full
  SU), every spine uplink at spine-core (docs/design-files.md#cables-and-transceivers).
* **Transceivers** (docs/design-files.md#cables-and-transceivers): switch side, the occupied cages
  per switch (down and up ports in separate cages, unless the switch has too few; a twin-port OSFP
  cage holds two 400G ports); node
  side, the node's cages where a source gives them (DGX H100/B200: 4 twin-port OSFP for 8 NICs).
* **Bisection bandwidth** per direction (docs/design-files.md#bisection-bandwidth): half the
  narrowest tier boundary, ``min(E, leaf uplinks, spine uplinks) / 2`` links at the port rate, a
  leaf's uplinks counted up to the endpoints it holds.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, cast

from ibcalc.booleans import is_boolean
from ibcalc.cluster.spec import MAX_GPUS, MAX_NICS_PER_NODE, MAX_OVERSUBSCRIPTION
from ibcalc.errors import FabricError
from ibcalc.fabric.switches import (
    NodeCages,
    PortMode,
    SwitchModel,
    find_switch,
    node_cages,
    switches,
)
from ibcalc.units import (
    MAX_BANDWIDTH_BPS,
    MIN_BANDWIDTH_BPS,
    MIN_BANDWIDTH_TEXT,
    as_float,
    format_bandwidth,
    format_oversubscription,
    format_oversubscription_apart,
    plural,
)

__all__ = [
    "MAX_EXTRA_ENDPOINTS",
    "MAX_RADIX",
    "MAX_TIERS",
    "CheaperSplit",
    "FabricError",
    "FabricSizing",
    "NodeCages",
    "PortMode",
    "SwitchModel",
    "find_switch",
    "inexact_split",
    "leaf_split",
    "size_fat_tree",
    "smallest_divisor_at_least",
]

#: Deepest fat tree the sizing builds (leaf, spine, core).
MAX_TIERS = 3
#: Most ports per switch at the NIC rate accepted as a radix (a 144-port Quantum-X800 is the
#: largest in data/switches.yaml; beyond a few thousand a number is more likely a typo).
MAX_RADIX = 4096
#: Most non-compute leaf ports (``extra_endpoints``, design files' ``fabric.extra_endpoints``).
MAX_EXTRA_ENDPOINTS = 100_000


def __getattr__(name: str) -> Any:
    """``SWITCHES`` and ``NODE_CAGES``, kept for importers of this module: the switch catalogue
    (``data/switches.yaml``) by id, read on first use. New code calls
    :func:`ibcalc.fabric.switches.switches` and :func:`~ibcalc.fabric.switches.node_cages`."""
    if name == "SWITCHES":
        return switches()
    if name == "NODE_CAGES":
        return node_cages()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def smallest_divisor_at_least(n: int, low: Fraction) -> int | None:
    """Smallest divisor of ``n`` that is ``>= low``, or None when ``low > n``."""
    for candidate in range(max(1, math.ceil(low)), n + 1):
        if n % candidate == 0:
            return candidate
    return None


def _ratio(value: float) -> Fraction:
    if isinstance(value, bool) or not math.isfinite(value) or value < 1:
        raise FabricError(f"oversubscription {value!r} must be a finite down:up ratio >= 1")
    if value > MAX_OVERSUBSCRIPTION:
        # the design files' and command line's limit (1e308 had sized a 63:1 leaf)
        raise FabricError(f"oversubscription {value!r} is more than {MAX_OVERSUBSCRIPTION:g}:1")
    # a ratio written "4:3" arrives as the float nearest 4/3: the simplest fraction that float is
    # the nearest to is the one written (4/3, 33/7; denominators up to 1000, more than a switch
    # has ports, so any leaf split's p:q is covered); else repr keeps the decimal the user wrote
    # (1.5 -> 3/2, 1.33 -> 133/100)
    simplest = Fraction(value).limit_denominator(1000)
    return simplest if float(simplest) == float(value) else Fraction(repr(float(value)))


def leaf_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """Down and up ports of a switch with ``radix`` ports at down:up ``oversubscription``.

    ``o = p/q`` in lowest terms gives ``(p*j, q*j)`` with ``j = radix // (p+q)``, so the ratio is
    exact; when ``p + q > radix`` it is ``d = floor(k o/(1+o))``, ``u = ceil(d/o)`` (ratio <= o).
    """
    if radix < 2:
        raise FabricError(f"switch radix {radix} is too small: a fat tree needs at least 2 ports")
    o = _ratio(oversubscription)
    j = radix // (o.numerator + o.denominator)
    if j >= 1:
        return o.numerator * j, o.denominator * j
    down = math.floor(radix * o / (1 + o))
    down = max(1, min(down, radix - 1))
    up = max(1, math.ceil(down / o))
    return down, up


def inexact_split(tier: str, radix: int, asked: float, down: int, up: int) -> str | None:
    """Words for a ``tier`` (``leaf``, ``spine``) whose ``asked`` down:up ratio has no exact
    split on ``radix`` ports, so that :func:`leaf_split` built ``down`` / ``up``, a smaller ratio;
    None where the split is exact. 20:1 on 8-port switches had been sized and priced as 7:1, and
    1.33:1 on 64 ports as 36 / 28 (9:7), without a word."""
    o = _ratio(asked)
    if Fraction(down, up) == o:
        return None
    return (
        f"the {tier} ratio {format_oversubscription(asked, 6)} has no exact split on "
        f"{radix}-port switches "
        f"({o.numerator} down per {o.denominator} up needs {o.numerator + o.denominator} ports): "
        f"split {down} down / {up} up, {format_oversubscription_apart(down / up, asked)}, the "
        "nearest under it"
    )


@dataclass(frozen=True)
class CheaperSplit:
    """A narrower leaf split of the same ratio that needs fewer switches than the one chosen,
    not taken for the traffic it slows: its ports, its switch count, how much slower it runs
    traffic to every peer (a fraction: 0.024 is 2.4 %) and its bisection."""

    leaf_down: int
    leaf_up: int
    switches: int
    slowdown: float
    bisection_Bps: float | None


@dataclass(frozen=True)
class FabricSizing:
    """Switch, cable and transceiver counts of one fat tree, plus the rules' inputs.

    Counts of a tier that does not exist are 0. ``switch_transceivers`` and
    ``node_transceivers`` are None when the cage layout is not known.
    """

    tiers: int
    radix: int
    nodes: int
    rails: int
    extra_endpoints: int
    rail_optimized: bool
    leaf_down: int
    leaf_up: int
    spine_down: int
    spine_up: int
    scalable_units: int | None
    su_nodes: int | None
    pods: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    node_leaf_cables: int
    leaf_spine_cables: int
    spine_core_cables: int
    switch_transceivers: int | None
    node_transceivers: int | None
    port_Bps: float | None
    bisection_Bps: float | None
    oversubscription: tuple[float, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: the widest narrower split of the same ratio that needs fewer switches, where one does
    cheaper_split: CheaperSplit | None = None
    #: the switches the same fabric takes without its extra endpoints (None: it has none)
    switches_without_extra: int | None = None

    @property
    def su_of_extra(self) -> bool:
        """Whether the extra endpoints, not the nodes, open the last scalable unit (32 DGX H100
        and 4 extra endpoints: 260 leaf ports, 2 SU of 32 nodes where the nodes fill one)."""
        if self.scalable_units is None or not self.su_nodes or not self.extra_endpoints:
            return False
        return self.scalable_units > math.ceil(self.nodes / self.su_nodes)

    @property
    def endpoints(self) -> int:
        """Compute NIC ports attached to the fabric (nodes x rails)."""
        return self.nodes * self.rails

    @property
    def leaf_group(self) -> int:
        """Nodes whose rail-aligned peers share a leaf: an SU when rail-optimized, else the
        ``leaf_down // rails`` whole nodes a leaf serves."""
        if self.rail_optimized and self.su_nodes:
            return self.su_nodes
        return max(1, self.leaf_down // max(1, self.rails))

    @property
    def cross_leaf_share(self) -> float:
        """Share of a node's rail-aligned peers behind another leaf, ``(nodes - group) / (nodes
        - 1)`` (0 with one tier or one node; docs/design-files.md)."""
        if self.tiers < 2 or self.nodes < 2:
            return 0.0
        return max(0.0, (self.nodes - self.leaf_group) / (self.nodes - 1))

    @property
    def total_switches(self) -> int:
        """Leaf + spine + core switches."""
        return self.leaf_switches + self.spine_switches + self.core_switches

    @property
    def total_cables(self) -> int:
        """Cables over every tier boundary."""
        return self.node_leaf_cables + self.leaf_spine_cables + self.spine_core_cables

    @property
    def worst_oversubscription(self) -> float:
        """The largest down:up ratio of any tier (1.0 when non-blocking)."""
        return max(self.oversubscription, default=1.0)

    @property
    def end_to_end_oversubscription(self) -> float:
        """Product of the tier ratios: the slow-down of traffic that crosses the top tier."""
        return math.prod(self.oversubscription) if self.oversubscription else 1.0


@dataclass
class _Plan:
    leaves: int
    su: int | None
    leaf_down_used: list[int]
    groups: list[int]


def _place_leaves(
    nodes: int, rails: int, extra: int, down: int, rail_optimized: bool
) -> _Plan | None:
    endpoints = nodes * rails + extra
    if rail_optimized:
        su = max(math.ceil(nodes / down), math.ceil(endpoints / (down * rails)))
        used: list[int] = []
        for index in range(su):
            in_su = min(down, max(0, nodes - index * down))
            used.extend([in_su] * rails)
        remaining = extra
        while remaining:
            placed = False
            for leaf in range(len(used) - 1, -1, -1):
                if remaining and used[leaf] < down:
                    used[leaf] += 1
                    remaining -= 1
                    placed = True
            if not placed:  # pragma: no cover - su was sized to hold every endpoint
                return None
        return _Plan(len(used), su, used, [su] * rails)
    leaves = math.ceil(endpoints / down)
    used = [down] * (leaves - 1) + [endpoints - down * (leaves - 1)]
    return _Plan(leaves, None, used, [leaves])


def _cages(ports: int, per_cage: int | None) -> int:
    return math.ceil(ports / per_cage) if per_cage else 0


def _split_cages(down: int, up: int, per_cage: int | None, radix: int) -> int:
    """Occupied cages of a switch with ``down`` and ``up`` ports: down and up in cages of their
    own, unless that needs more cages than the switch has (an odd down and an odd up count
    filling all ``radix`` ports: 33 + 31 on a 64-port, 32-cage QM9700); then one cage holds a
    down and an up port."""
    if not per_cage:
        return 0
    apart = _cages(down, per_cage) + _cages(up, per_cage)
    return apart if apart <= radix // per_cage else _cages(down + up, per_cage)


def _real(value: object) -> bool:
    """A real number, not a bool (numpy's floats and integers too)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _whole(
    name: str, value: object, low: int | None, high: int | None = None, limit: str = ""
) -> int:
    """``value`` as an int when it is a whole number from ``low`` to ``high``, else FabricError
    (``limit`` names the bound: "the switch's 64 ports"; by default "the 4,096 accepted")."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        count = int(value)
    elif _real(value) and math.isfinite(real := as_float(cast(float, value))) and real.is_integer():
        count = int(real)
    else:
        raise FabricError(f"{name} {value!r} is not a whole number")
    if low is not None and count < low:
        raise FabricError(f"{name} {count} must be at least {low}")
    if high is not None and count > high:
        # as given: 1e308 as a whole number has 309 digits
        raise FabricError(f"{name} {value!r} is more than {limit or f'the {high:,} accepted'}")
    return count


def _extra_note(sizing: FabricSizing, without: int) -> str | None:
    """What a fabric's extra endpoints cost, where they change its switch count: the SUs they
    open (NVIDIA's rule: 31 nodes + UFM fit one SU of 32, 32 nodes + UFM do not; review DJ L8,
    each SU they open: DY 3), or the switches they add (leaves, a level: DY 2), with the count
    without them; a layout they make smaller is said as such (a 2:1 leaf split the extras
    change took 22 switches where the nodes alone take 25: review DZ 4)."""
    extra, total = sizing.extra_endpoints, sizing.total_switches
    if total == without:
        return None
    them = "them" if extra > 1 else "it"
    count = f"{total} switches, {without} without {them}"
    head = f"the {plural(extra, 'extra endpoint')} (fabric.extra_endpoints)"
    if total < without:
        return (
            f"{head} {'change' if extra > 1 else 'changes'} the layout to one of fewer switches: "
            f"{count}"
        )
    verb = "open" if extra > 1 else "opens"
    if sizing.su_of_extra and sizing.scalable_units is not None and sizing.su_nodes:
        alone = math.ceil(sizing.nodes / sizing.su_nodes)
        su = sizing.scalable_units
        opened = f"SU {su}" if su == alone + 1 else f"SUs {alone + 1}-{su}"
        leaves = alone * sizing.rails
        return (
            f"{head} {verb} {opened}: {plural(sizing.nodes, 'node')} x "
            f"{plural(sizing.rails, 'rail')} + {extra} = {sizing.endpoints + extra} leaf ports, "
            f"more than the {leaves * sizing.su_nodes} of {plural(alone, 'SU')} ({leaves} "
            f"{'leaf' if leaves == 1 else 'leaves'} x {sizing.su_nodes} down): {count}"
        )
    return f"{head} {'add' if extra > 1 else 'adds'} {plural(total - without, 'switch')}: {count}"


def size_fat_tree(
    nodes: int,
    rails: int,
    radix: int,
    *,
    oversubscription: float | Sequence[float] = 1.0,
    rail_optimized: bool = True,
    tiers: int | None = None,
    extra_endpoints: int = 0,
    port_Bps: float | None = None,
    ports_per_cage: int | None = None,
    node_cages_per_node: int | None = None,
) -> FabricSizing:
    """Size a fat tree for ``nodes`` x ``rails`` NIC ports on ``radix``-port switches.

    ``oversubscription`` is the leaf's down:up ratio, or ``[leaf, spine]``. ``tiers`` forces the
    number of switch levels (1..3); by default the smallest that fits. ``extra_endpoints`` are
    non-compute ports on leaves (UFM); where they cost switches, the result says how many
    (:attr:`FabricSizing.switches_without_extra`, and a note). ``port_Bps`` (the NIC rate) gives
    the bisection; ``ports_per_cage`` the switch transceivers; ``node_cages_per_node`` the node
    transceivers. Raises :class:`FabricError` for a fabric the radix cannot build. Rules: module
    docstring.
    """
    # a count is a whole number (numpy's integers and 128.0 too): 12.5 nodes had sized 100.0
    # cables, NaN nodes one switch "for nan endpoints", and a string or a NaN radix failed in
    # TypeError or ValueError
    # the limits a design file and the command line have (review CU: a radix of 1e308 had sized
    # a fabric with a 309-digit radix, a cage of 10**29 ports had been taken)
    nodes = _whole("nodes", nodes, 1, MAX_GPUS)
    rails = _whole("NICs per node", rails, 1, MAX_NICS_PER_NODE)
    # leaf_split says why a radix is too small
    radix = _whole("switch radix", radix, None, MAX_RADIX)
    extra_endpoints = _whole("extra endpoints", extra_endpoints, 0, MAX_EXTRA_ENDPOINTS)
    if not is_boolean(rail_optimized):
        # "no" is truthy: rail_optimized="no" had sized a rail-optimized tree (review CJ);
        # numpy's bool_ is taken as Python's own (review CK)
        raise FabricError(f"rail_optimized {rail_optimized!r} is not True or False")
    rail_optimized = bool(rail_optimized)
    if tiers is not None:
        tiers = _whole("tiers", tiers, 1)
        if not 1 <= tiers <= MAX_TIERS:
            raise FabricError(f"tiers {tiers} is not supported (1 to {MAX_TIERS} switch levels)")
    if ports_per_cage is not None:
        # a cage holds some of one switch's ports
        ports_per_cage = _whole(
            "ports per cage", ports_per_cage, 1, radix, f"the switch's {radix} ports"
        )
    if node_cages_per_node is not None:
        # a node's cage holds one or more of its NIC ports
        node_cages_per_node = _whole(
            "node cages per node", node_cages_per_node, 1, rails, f"the node's {rails} NIC ports"
        )
    if port_Bps is not None:
        if not _real(port_Bps) or not 0 < as_float(port_Bps) < math.inf:
            # a negative rate had given a negative bisection
            raise FabricError(f"port rate {port_Bps!r} B/s is not a positive finite number")
        port_Bps = as_float(port_Bps)
        if not MIN_BANDWIDTH_BPS <= port_Bps <= MAX_BANDWIDTH_BPS:
            # the range the rate parser takes (1.5 B/s had been accepted)
            raise FabricError(
                f"port rate {port_Bps!r} B/s is outside {MIN_BANDWIDTH_TEXT} to 1 PB/s"
            )
    # a numpy array (0-d too) as the plain number or list it holds; a list or tuple of ratios,
    # else one number: anything else (a "2:1" string had been read character by character, a
    # dict by its keys) is refused below
    plain = oversubscription.tolist() if hasattr(oversubscription, "tolist") else oversubscription
    given: list[object] = list(plain) if isinstance(plain, list | tuple) else [plain]
    if not all(_real(v) for v in given):
        raise FabricError(
            f"oversubscription {oversubscription!r} is not a number or a [leaf, spine] list of "
            "numbers (2 for 2:1)"
        )
    ratios = [as_float(cast(float, v)) for v in given]
    if not 1 <= len(ratios) <= MAX_TIERS - 1:
        raise FabricError(
            f"oversubscription takes one ratio per oversubscribable tier (leaf, spine): "
            f"got {len(ratios)}"
        )
    leaf_o = ratios[0]
    spine_o = ratios[1] if len(ratios) > 1 else 1.0
    # each tier's own check first: its words name the ratio at fault
    o = _ratio(leaf_o)
    _ratio(spine_o)
    if leaf_o * spine_o > MAX_OVERSUBSCRIPTION:
        # traffic crossing both tapered tiers sees their product, which a design file caps as
        # it caps one ratio ([32, 32] had been sized: review DA)
        raise FabricError(
            f"oversubscription {format_oversubscription(leaf_o)} x "
            f"{format_oversubscription(spine_o)} is {format_oversubscription(leaf_o * spine_o)} "
            f"end to end, more than {format_oversubscription(MAX_OVERSUBSCRIPTION)}"
        )
    d, u = leaf_split(radix, leaf_o)
    sd, su = leaf_split(radix, spine_o)
    args = _Args(
        nodes=nodes,
        rails=rails,
        k=radix,
        extra=extra_endpoints,
        rail_optimized=rail_optimized,
        d=d,
        u=u,
        sd=sd,
        su=su,
    )
    args_out = _Outputs(port_Bps, ports_per_cage, node_cages_per_node, ratios)
    sizing = _sized(args, args_out, tiers, o)
    inexact = [
        words
        for tier, asked, down, up, built in (
            ("leaf", leaf_o, sizing.leaf_down, sizing.leaf_up, sizing.tiers > 1),
            ("spine", spine_o, sizing.spine_down, sizing.spine_up, sizing.tiers == 3),
        )
        if built and (words := inexact_split(tier, radix, asked, down, up)) is not None
    ]
    if inexact:
        sizing = dataclasses.replace(sizing, notes=(*sizing.notes, *inexact))
    if not extra_endpoints:
        return sizing
    # what the extra endpoints cost: a switch gate failing for them had said nothing of them,
    # whether they open a scalable unit, add leaves or add a switch level (reviews DJ L8, DY 2)
    without = _sized(dataclasses.replace(args, extra=0), args_out, tiers, o).total_switches
    sizing = dataclasses.replace(sizing, switches_without_extra=without)
    note = _extra_note(sizing, without)
    return sizing if note is None else dataclasses.replace(sizing, notes=(*sizing.notes, note))


def _sized(args: _Args, args_out: _Outputs, tiers: int | None, o: Fraction) -> FabricSizing:
    """The fat tree of ``args`` (:func:`size_fat_tree`'s checked inputs; ``o`` the leaf ratio):
    the smallest number of levels that fits, on the widest leaf split of the ratio or a
    narrower one that needs fewer switches."""
    endpoints = args.nodes * args.rails + args.extra
    radix, d, u = args.k, args.d, args.u
    best = _smallest(args, args_out, tiers)
    if best is None:
        raise FabricError(_refusal(args, endpoints, MAX_TIERS if tiers is None else tiers))
    if o <= 1 or d % o.numerator:
        return best
    # a tapered leaf may keep its ratio on fewer ports (some left unused), which changes the SU
    # and so the switch count and the traffic crossing the uplinks. NVIDIA's widest split is
    # kept unless a narrower one needs fewer switches without slowing traffic to every peer
    # more (max(1, k f)); and a taper never costs more switches than the same fabric at 1:1
    # (128 rail-optimized nodes at 2:1 on 64 ports: 42 down / 21 up took 32 leaves + 21 spines,
    # more than the 48 of 1:1, where 40 / 20 takes 32 + 10; a narrower split that only saved
    # switches had slowed a 4:1 all-to-all 2x on 128-port leaves: docs/design-files.md)
    widest = best
    narrower = [
        built
        for j in range(d // o.numerator - 1, 0, -1)
        if (
            built := _smallest(
                dataclasses.replace(args, d=o.numerator * j, u=o.denominator * j), args_out, tiers
            )
        )
        is not None
    ]
    # where the widest already slows that traffic, slower by no more than the estimates' tie
    # (a 0.5 % slowdown had kept 285 switches for 421 DGX H100 at 2:1 where 195 do: review
    # CV); traffic the widest does not slow is not traded for switches
    slowdown = _uniform_slowdown(widest, float(o))
    if slowdown > 1:
        slowdown *= 1 + SLOWDOWN_TIE
    for other in narrower:
        if (
            other.total_switches < best.total_switches
            and _uniform_slowdown(other, float(o)) <= slowdown
        ):
            best = other
    flat_d, flat_u = leaf_split(radix, 1.0)
    flat = _smallest(dataclasses.replace(args, d=flat_d, u=flat_u), args_out, tiers)
    slower = _uniform_slowdown(best, float(o)) / _uniform_slowdown(widest, float(o)) - 1
    why = (
        f"fewer switches, slowing traffic to every peer by {slower:.1%}, within the estimates' "
        f"{SLOWDOWN_TIE:.0%} tie"
        if slower > 0
        else "fewer switches without slowing traffic to every peer more"
    )
    # fewer uplinks in all: the bound on any traffic falls, which the every-peer figure does not
    # say (a 1.3 % slowdown had hidden an 18 % smaller bisection: review CW)
    lost = _bisection_given_up(best.bisection_Bps, widest.bisection_Bps)
    why += f", with {lost}" if lost else ""
    if flat is not None and best.total_switches > flat.total_switches:
        # the widest narrower split within the untapered fabric's switch count
        within = next((x for x in narrower if x.total_switches <= flat.total_switches), None)
        if within is not None:
            best = within
            why = f"no more than the {flat.total_switches} switches of the same nodes at 1:1"
    best = _with_cheaper_note(best, narrower, o)
    if best.leaf_down == widest.leaf_down:
        return best
    unused = radix - best.leaf_down - best.leaf_up
    chosen = (
        f"leaf uses {best.leaf_down} down / {best.leaf_up} up ports; {unused} left unused: the "
        f"{_ratio_text(o)} on fewer ports takes {why} ({d} down / {u} up, the most the ratio "
        f"allows, takes {widest.total_switches}; this {best.total_switches})"
    )
    notes = tuple(chosen if n.startswith("leaf uses ") else n for n in best.notes)
    return dataclasses.replace(best, notes=notes)


#: How much slower traffic to every peer may run on a narrower leaf split that saves switches:
#: the estimates' tie, within which two figures are not told apart (cost parameters'
#: ``reporting.notably_faster``, 2 %; tests/fabric re-derive it from there).
SLOWDOWN_TIE = 0.02


def _with_cheaper_note(
    best: FabricSizing, narrower: list[FabricSizing], o: Fraction
) -> FabricSizing:
    """``best`` with the widest narrower split of the same ratio that needs fewer switches
    (:class:`CheaperSplit`, and a note), where one does and was not taken for the traffic it
    slows (126 DGX H100 at 2:1 take 45 switches where 40 down / 20 up would take 42, and 127
    take 42: a gate on the switch count had failed at 126 nodes and passed at 127 without a
    word: review CV)."""
    # ``narrower`` runs widest first: the first that needs fewer slows traffic least
    other = next((x for x in narrower if x.total_switches < best.total_switches), None)
    if other is None:
        return best
    cheaper = CheaperSplit(
        leaf_down=other.leaf_down,
        leaf_up=other.leaf_up,
        switches=other.total_switches,
        slowdown=_uniform_slowdown(other, float(o)) / _uniform_slowdown(best, float(o)) - 1,
        bisection_Bps=other.bisection_Bps,
    )
    cost = cheaper_cost(cheaper, best.bisection_Bps)
    note = (
        f"a leaf of {other.leaf_down} down / {other.leaf_up} up ports (the same "
        f"{_ratio_text(o)}) would take {other.total_switches} switches, "
        f"{best.total_switches - other.total_switches} fewer, with {cost}: the split is chosen "
        "for speed first (docs/design-files.md#leaf-port-split)"
    )
    return dataclasses.replace(best, notes=(*best.notes, note), cheaper_split=cheaper)


def cheaper_cost(cheaper: CheaperSplit, bisection_Bps: float | None) -> str:
    """What a :class:`CheaperSplit` gives up against a fabric of ``bisection_Bps``: "traffic to
    every peer 2.4% slower", with its smaller bisection where it has one."""
    cost = (
        f"traffic to every peer {cheaper.slowdown:.1%} slower"
        if cheaper.slowdown > 0
        else "no traffic to every peer slower"
    )
    lost = _bisection_given_up(cheaper.bisection_Bps, bisection_Bps)
    return cost + (f", {lost}" if lost else "")


def _bisection_given_up(smaller: float | None, larger: float | None) -> str:
    """ "a bisection of 16000 GB/s against 16800 GB/s" where ``smaller`` is below ``larger``,
    else the empty text; both through :func:`~ibcalc.units.format_bandwidth`, as the fabric's
    own bisection line prints it (``16,000`` here had sat beside ``16000 GB/s`` there)."""
    if smaller is None or larger is None or smaller >= larger:
        return ""
    return f"a bisection of {format_bandwidth(smaller)} against {format_bandwidth(larger)}"


def _uniform_slowdown(sizing: FabricSizing, ratio: float) -> float:
    """``max(1, k f)`` at the leaves for traffic to every peer, ``f`` the sizing's rail-aligned
    :attr:`FabricSizing.cross_leaf_share`."""
    return max(1.0, ratio * sizing.cross_leaf_share)


def _ratio_text(o: Fraction) -> str:
    """``2:1``, ``4:3``, ``1.3:1`` for a ratio, as every text prints one."""
    return format_oversubscription(float(o))


def _smallest(args: _Args, out: _Outputs, tiers: int | None) -> FabricSizing | None:
    """The fabric of ``tiers`` levels, or of the fewest that fit; None when none does."""
    if tiers is not None:
        return _build(tiers, args, out)
    for level in range(1, MAX_TIERS + 1):
        result = _build(level, args, out)
        if result is not None:
            return result
    return None


@dataclass(frozen=True)
class _Args:
    nodes: int
    rails: int
    k: int
    extra: int
    rail_optimized: bool
    d: int
    u: int
    sd: int
    su: int


@dataclass(frozen=True)
class _Outputs:
    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    port_Bps: float | None
    ppc: int | None
    node_cages: int | None
    ratios: list[float]


def _max_endpoints(args: _Args, tiers: int) -> int:
    """Most compute endpoints ``tiers`` levels can hold with this split (rail-agnostic bound)."""
    if tiers == 1:
        return args.k
    if tiers == 2:
        return args.k * args.d
    return args.k * args.sd * args.d


def _refusal(args: _Args, endpoints: int, tiers: int) -> str:
    limit = _max_endpoints(args, tiers)
    what = f"{plural(args.nodes, 'node')} x {plural(args.rails, 'NIC')}"
    if args.extra:
        what += f" + {args.extra} extra ports"
    hint = (
        f"one {args.k}-port switch holds at most {limit} endpoints"
        if tiers == 1
        else f"a {tiers}-level fat tree of {args.k}-port switches holds at most about "
        f"{limit} endpoints with {args.d} down / {args.u} up leaf ports"
    )
    if endpoints <= limit and args.rail_optimized:
        # under the endpoint bound: the rail-optimized layout, not the count, does not fit
        hint = (
            f"rail-optimized, one leaf per rail per scalable unit ({args.rails} leaves of "
            f"{args.u} uplinks) is more leaves than {tiers} levels of {args.k}-port switches "
            f"can join; without rails about {limit} endpoints fit (rail_optimized: false), or "
            "use fewer NICs per node"
        )
    if tiers < MAX_TIERS:
        hint += "; allow more tiers or use a larger switch"
    else:
        hint += f"; more than {MAX_TIERS} tiers is not modelled, use a larger switch"
    return f"{what} = {endpoints} endpoints do not fit: {hint}"


def _build(tiers: int, a: _Args, out: _Outputs) -> FabricSizing | None:
    endpoints = a.nodes * a.rails + a.extra
    notes: list[str] = []
    ppc = out.ppc
    if tiers == 1:
        if endpoints > a.k:
            return None
        notes.append(f"one {a.k}-port switch holds all {endpoints} endpoints; no uplinks")
        return _result(
            tiers=1,
            a=a,
            out=out,
            su=None,
            su_nodes=None,
            pods=0,
            leaves=1,
            spines=0,
            core=0,
            node_leaf=endpoints,
            leaf_spine=0,
            spine_core=0,
            cages=_cages(endpoints, ppc) if ppc else None,
            ratios=(),
            notes=notes,
        )
    if endpoints > _max_endpoints(a, tiers):
        return None  # cheap bound first: never lay out millions of leaves that cannot fit
    plan = _place_leaves(a.nodes, a.rails, a.extra, a.d, a.rail_optimized)
    if plan is None:  # pragma: no cover
        return None
    unused = a.k - a.d - a.u
    if unused:
        notes.append(
            f"leaf uses {a.d} down / {a.u} up ports ({a.d}:{a.u}); {unused} port"
            f"{'s' if unused > 1 else ''} left unused to keep the ratio"
        )
    if a.rail_optimized:
        slots = (plan.su or 1) * a.d  # node slots of the SUs laid out
        notes.append(
            f"rail-optimized: scalable unit of {a.d} nodes and "
            f"{a.rails} {'leaf' if a.rails == 1 else 'leaves'} (one per rail); "
            f"{plan.su} SU for {a.nodes} nodes"
            # a partly filled SU keeps every leaf's uplinks (NVIDIA builds whole SUs): said,
            # as the cable count reads as a bill of materials (8 p5 nodes on radix 64: 1024
            # leaf-spine cables for 256 NICs; a review)
            # (not where other endpoints, UFM, fill the rest: NVIDIA's 31 nodes + UFM; and for
            # several SUs, the last one's: 33 nodes in 2 SUs of 32; a review)
            + (
                f" ({a.nodes} of {'its' if plan.su == 1 else 'their'} {slots} node "
                f"slots used; the leaves keep "
                + (f"all {a.u} uplinks each)" if a.u > 1 else "their uplink)")
                if a.extra == 0 and a.nodes < slots
                else ""
            )
        )
    leaf_cages = sum(_split_cages(x, a.u, ppc, a.k) for x in plan.leaf_down_used) if ppc else None
    if tiers == 2:
        spines = smallest_divisor_at_least(a.u, Fraction(plan.leaves * a.u, a.k))
        if spines is None:
            return None
        spine_ports = plan.leaves * a.u // spines
        fewest = max(1, math.ceil(Fraction(plan.leaves * a.u, a.k)))
        notes.append(
            f"{plural(spines, 'spine')}: smallest divisor of {plural(a.u, 'uplink')} >= "
            f"{plan.leaves} x {a.u} / "
            f"{a.k}; {plural(a.u // spines, 'link')} per leaf-spine pair"
            + (
                # NVIDIA's rule (even links per pair) reproduces its tables; where it costs
                # spines, say what uneven links would need
                f" (the rule keeps links even; {fewest} spines, each with at most "
                f"{math.ceil(plan.leaves * a.u / fewest)} of its {a.k} ports, would do with "
                f"{a.u // fewest} or {a.u // fewest + 1} links per pair)"
                if fewest < spines
                else ""
            )
        )
        cages = None if leaf_cages is None else leaf_cages + spines * _cages(spine_ports, ppc)
        return _result(
            tiers=2,
            a=a,
            out=out,
            su=plan.su,
            su_nodes=a.d if a.rail_optimized else None,
            pods=1,
            leaves=plan.leaves,
            spines=spines,
            core=0,
            node_leaf=endpoints,
            leaf_spine=plan.leaves * a.u,
            spine_core=0,
            cages=cages,
            ratios=(a.d / a.u,),
            notes=notes,
            leaf_used=plan.leaf_down_used,
        )
    # three tiers: pods of at most sd leaves inside each group (one group per rail)
    pods = 0
    spines = 0
    fewest = 0  # with uneven links per leaf-spine pair
    spine_cages = 0
    spine_up_total = 0
    for group in plan.groups:
        remaining = group
        while remaining:
            size = min(remaining, a.sd)
            remaining -= size
            count = smallest_divisor_at_least(a.u, Fraction(size * a.u, a.sd))
            if count is None:  # pragma: no cover - size <= sd guarantees a divisor
                return None
            fewest += max(1, math.ceil(Fraction(size * a.u, a.sd)))
            down = size * a.u // count
            up = math.ceil(down * a.su / a.sd)
            pods += 1
            spines += count
            spine_up_total += count * up
            spine_cages += count * _split_cages(down, up, ppc, a.k)
    if pods > a.k:
        return None
    core = math.ceil(spine_up_total / a.k)
    per_core, extra_ports = divmod(spine_up_total, core)
    core_cages = extra_ports * _cages(per_core + 1, ppc) + (core - extra_ports) * _cages(
        per_core, ppc
    )
    notes.append(
        f"{plural(pods, 'pod')} of up to {a.sd} leaves"
        + (" per rail" if a.rail_optimized else "")
        + f"; {plural(spines, 'spine')}: per pod the smallest divisor of "
        f"{plural(a.u, 'uplink')} >= its leaves x "
        f"{a.u} / {a.sd} spine down ports"
        + (
            # as with two tiers: where the even-links rule costs spines, say what uneven links
            # would need (each pod ceil(leaves x u / spine down ports); the core is unchanged)
            f" (the rule keeps links even; {fewest} spines, {plan.leaves + fewest + core} "
            "switches in all, would do with uneven links per leaf-spine pair)"
            if fewest < spines
            else ""
        )
        + f"; core = ceil({spine_up_total} spine uplinks / {a.k}) = {core}"
    )
    cages = None if leaf_cages is None else leaf_cages + spine_cages + core_cages
    return _result(
        tiers=3,
        a=a,
        out=out,
        su=plan.su,
        su_nodes=a.d if a.rail_optimized else None,
        pods=pods,
        leaves=plan.leaves,
        spines=spines,
        core=core,
        node_leaf=endpoints,
        leaf_spine=plan.leaves * a.u,
        spine_core=spine_up_total,
        cages=cages,
        ratios=(a.d / a.u, a.sd / a.su),
        notes=notes,
        leaf_used=plan.leaf_down_used,
    )


def _result(
    *,
    tiers: int,
    a: _Args,
    out: _Outputs,
    su: int | None,
    su_nodes: int | None,
    pods: int,
    leaves: int,
    spines: int,
    core: int,
    node_leaf: int,
    leaf_spine: int,
    spine_core: int,
    cages: int | None,
    ratios: tuple[float, ...],
    notes: list[str],
    leaf_used: Sequence[int] = (),
) -> FabricSizing:
    compute = a.nodes * a.rails
    # a leaf's uplinks carry no more than its endpoints send: the leaves of a scalable unit
    # filled with one node of 48 had counted their 96 uplinks at 4:1 (4,800 GB/s for 49 nodes
    # where a cut by rails crosses 52 links, 2,600 GB/s: review CV)
    reach = sum(min(used, a.u) for used in leaf_used) if leaf_used else leaf_spine
    narrowest = min(x for x in (compute, min(leaf_spine, reach) or compute, spine_core or compute))
    bisection = out.port_Bps * narrowest / 2 if out.port_Bps is not None else None
    if tiers == 2 and len(out.ratios) > 1 and out.ratios[1] != 1:
        notes.append("spine oversubscription ignored: two tiers have no spine uplinks")
    return FabricSizing(
        tiers=tiers,
        radix=a.k,
        nodes=a.nodes,
        rails=a.rails,
        extra_endpoints=a.extra,
        rail_optimized=a.rail_optimized,
        leaf_down=a.d if tiers > 1 else a.k,
        leaf_up=a.u if tiers > 1 else 0,
        spine_down=a.sd if tiers == 3 else (a.k if tiers == 2 else 0),
        spine_up=a.su if tiers == 3 else 0,
        scalable_units=su,
        su_nodes=su_nodes,
        pods=pods,
        leaf_switches=leaves,
        spine_switches=spines,
        core_switches=core,
        node_leaf_cables=node_leaf,
        leaf_spine_cables=leaf_spine,
        spine_core_cables=spine_core,
        switch_transceivers=cages,
        node_transceivers=a.nodes * out.node_cages if out.node_cages is not None else None,
        port_Bps=out.port_Bps,
        bisection_Bps=bisection,
        oversubscription=ratios,
        notes=tuple(notes),
    )
