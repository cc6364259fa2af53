"""What a log's ``NCCL_ALGO`` and ``NCCL_PROTO`` let NCCL choose from, for one collective.

NCCL's environment-variable documentation: each is a comma-separated list of the algorithms
(``Ring``, ``Tree``, ``CollnetDirect``, ``CollnetChain``, ``NVLS``, ``NVLSTree``, ``PAT``) or
protocols (``LL``, ``LL128``, ``Simple``) NCCL may use, in any case; a list that starts with
``^`` names those it may not use instead. Newer releases also take a list per collective,
``allreduce:tree,ring;allgather:ring``: a collective the setting does not name keeps every one.

:func:`nccl_selection` reads one setting for one collective; :func:`select` turns settings into
the tuner-view entries that switch off what they rule out (``nccl_tuner.algorithms``,
``nccl_tuner.protocols``: the model then chooses among what is left, as NCCL does) and the words
that say so, for nccl-check and calibrate (:func:`run_selection`, a log's settings) and for
estimates (``--nccl-algo``, ``--nccl-proto``). Pure functions: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from ibcalc.engine.params import SCHEMA as COST_PARAMS_SCHEMA
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.logs.env import LogEnvironment
from ibcalc.logs.results import Assumption
from ibcalc.textsafe import closest_hint

__all__ = [
    "NCCL_ALGO_NAMES",
    "NCCL_PROTO_NAMES",
    "RunSelection",
    "Selection",
    "collective_named",
    "nccl_selection",
    "run_selection",
    "select",
    "setting_entries",
    "with_selection",
]

_T = TypeVar("_T")

#: NCCL_ALGO's names (lower case, without ``_`` or ``-``) of the algorithms the engine models.
NCCL_ALGO_NAMES: Mapping[str, Algorithm] = {
    "ring": Algorithm.RING,
    "tree": Algorithm.TREE,
    "nvls": Algorithm.NVLS,
    "nvlstree": Algorithm.NVLS_TREE,
    "collnetdirect": Algorithm.COLLNET_DIRECT,
    # NCCL 2.9-2.13's one CollNet algorithm, the direct one (split in two from 2.14)
    "collnet": Algorithm.COLLNET_DIRECT,
    "collnetchain": Algorithm.COLLNET_CHAIN,
    "pat": Algorithm.PAT,
}
#: NCCL_PROTO's names (lower case) of the protocols.
NCCL_PROTO_NAMES: Mapping[str, Protocol] = {
    "ll": Protocol.LL,
    "ll128": Protocol.LL128,
    "simple": Protocol.SIMPLE,
}
#: NCCL's names of the collectives a per-collective list may name (``ncclFuncStr``, any case).
_FUNCTIONS: Mapping[str, Collective] = {
    "broadcast": Collective.BROADCAST,
    "reduce": Collective.REDUCE,
    "allgather": Collective.ALL_GATHER,
    "reducescatter": Collective.REDUCE_SCATTER,
    "allreduce": Collective.ALL_REDUCE,
}


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "").replace("-", "")


def collective_named(op: str) -> Collective | None:
    """The collective NCCL's name ``op`` (``allreduce``, any case) in a per-collective prefix
    names, else None."""
    return _FUNCTIONS.get(_key(op))


def setting_entries(value: str) -> list[tuple[list[str] | None, str]]:
    """The entries of a setting ``value``, separated by ``;``, in order: the names of an
    ``ops:`` prefix as written between its commas (None for a plain list) and the list after it,
    stripped; empty entries (``;;``) left out."""
    entries: list[tuple[list[str] | None, str]] = []
    for entry in value.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        head, sep, tail = entry.partition(":")
        entries.append((head.split(","), tail.strip()) if sep else (None, entry))
    return entries


#: NCCL's spelling of each algorithm (its ``ncclAlgoStr``), for what is said to the user.
_NCCL_SPELLING: Mapping[Algorithm, str] = {
    Algorithm.RING: "Ring",
    Algorithm.TREE: "Tree",
    Algorithm.COLLNET_DIRECT: "CollnetDirect",
    Algorithm.COLLNET_CHAIN: "CollnetChain",
    Algorithm.NVLS: "NVLS",
    Algorithm.NVLS_TREE: "NVLSTree",
    Algorithm.PAT: "PAT",
}


def nccl_name(item: Algorithm | Protocol) -> str:
    """NCCL's name of an algorithm or a protocol (``NVLSTree``, ``LL128``)."""
    return _NCCL_SPELLING.get(item, item.value) if isinstance(item, Algorithm) else item.value


@dataclass(frozen=True)
class Selection(Generic[_T]):
    """What one setting leaves NCCL for one collective.

    ``allowed``: the algorithms or protocols NCCL may use (``None``: the setting does not bear
    on this collective); ``listed``: the list that applies, as the log gives it; ``unknown``:
    names in it, or collectives in its prefixes, NCCL's lists have not (matching nothing);
    ``unknown_ops``: those of ``unknown`` written in a prefix, where a collective belongs."""

    allowed: frozenset[_T] | None
    listed: str
    unknown: tuple[str, ...] = ()
    unknown_ops: tuple[str, ...] = ()


def nccl_selection(value: str, names: Mapping[str, _T], collective: Collective) -> Selection[_T]:
    """What the setting ``value`` (``NCCL_ALGO`` with :data:`NCCL_ALGO_NAMES`, ``NCCL_PROTO``
    with :data:`NCCL_PROTO_NAMES`) leaves NCCL for ``collective``.

    A plain list applies to every collective; ``ops:list`` entries, separated by ``;``, to the
    collectives their prefix names (``allreduce,allgather:ring``; where two entries name one,
    the last is read, as is a plain list after it: NCCL's documentation gives each collective one
    list and says nothing of two, so the command line refuses them, and a log's setting, the
    run's, is read so). The point-to-point collectives (all-to-all, send/recv) are named by
    none."""
    listed: str | None = None
    unknown: list[str] = []
    tails: list[str] = []
    for prefix, tail in setting_entries(value):
        tails.append(tail)
        if prefix is None:
            listed = tail
            continue
        ops = [op for op in prefix if op.strip()]
        unknown += [op.strip() for op in ops if collective_named(op) is None]
        if any(collective_named(op) is collective for op in ops):
            listed = tail
    ops_unknown = tuple(unknown)
    # a name no list of NCCL's has is one in any entry, the collective's or another's
    # ('allgather:rng' had been taken for an all-reduce, where 'allreduce:rng' is refused)
    for tail in tails:
        unknown += [n for n in _names_in(tail) if _key(n) not in names and n not in unknown]
    if listed is None:
        return Selection(None, "", tuple(unknown), ops_unknown)
    excluded = listed.startswith("^")
    known = {names[_key(n)] for n in _names_in(listed) if _key(n) in names}
    everything = frozenset(names.values())
    allowed = everything - known if excluded else frozenset(known)
    return Selection(allowed, listed, tuple(unknown), ops_unknown)


def _names_in(listed: str) -> list[str]:
    """The names of a list (``^Tree,Ring``), stripped: one leading ^ excludes; a second is part
    of the first name, which then matches nothing (NCCL reads ^^Tree so: '^Tree' names no
    algorithm)."""
    return [n.strip() for n in listed.removeprefix("^").split(",") if n.strip()]


#: The settings that narrow NCCL's choice, the names each takes and the tuner-view table that
#: switches off what it rules out.
_SELECTIONS: tuple[tuple[str, Mapping[str, Algorithm | Protocol], str, str], ...] = (
    ("NCCL_ALGO", NCCL_ALGO_NAMES, "algorithms", "algorithm"),
    ("NCCL_PROTO", NCCL_PROTO_NAMES, "protocols", "protocol"),
)
#: Why neither setting is applied to the point-to-point collectives.
_P2P_REASON = {
    "NCCL_ALGO": "which choose no collective algorithm",
    "NCCL_PROTO": "whose protocol the model chooses by size, as NCCL does for them",
}


@dataclass(frozen=True)
class RunSelection:
    """What a run's ``NCCL_ALGO`` and ``NCCL_PROTO`` leave NCCL (:func:`run_selection`).

    ``overlay``: the tuner-view entries that switch off what they rule out (None: nothing);
    ``forced``: the one algorithm NCCL_ALGO leaves (nccl-check expects that algorithm's
    figures); ``ll128_named``: how the NCCL_PROTO that leaves LL128 on is named, which NCCL then
    runs even where its own default keeps it off (its tuning.cc skips the hardware check for a
    protocol the setting enables)."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    overlay: dict[str, Any] | None = None
    forced: Algorithm | None = None
    ll128_named: str | None = None


#: (field, value, words) of what a selection says: the algorithm or protocol, what it leaves,
#: and why.
Said = tuple[str, str | None, str]


def _unknown_names(
    where: str, selection: Selection[Any], names: Mapping[str, Algorithm | Protocol]
) -> str:
    """What is said of names a setting gives that NCCL does not list (the CLI refuses it), with
    the closest of NCCL's names where one is given (``rng``: did you mean Ring?): a
    collective's for a name in a prefix, ``names``' for one in the list (``allreduce`` alone
    had been offered allreduce, and ``reduc`` in --nccl-proto reduce)."""
    unknown = selection.unknown
    verb = "is not a name" if len(unknown) == 1 else "are not names"
    listed = (
        list(_FUNCTIONS)
        if selection.unknown_ops
        else sorted({nccl_name(item) for item in names.values()})
    )
    hint = closest_hint(unknown[0], listed) if len(unknown) == 1 else ""
    return f"{where}: {', '.join(unknown)} {verb} NCCL lists{hint}"


def select(
    settings: Mapping[str, tuple[str, str]],
    collective: Collective,
    params: CostParams,
    *,
    subject: str | None = "the expectation",
    source: str = "the log's ",
    ll128_priced: bool = True,
    printed_script: bool = True,
) -> tuple[RunSelection, list[Said]]:
    """What ``settings`` (variable -> (its value, how to name it: ``NCCL_ALGO=^NVLS (line
    4)``)) rule out for ``collective``, as the tuner-view entries that switch it off
    (:func:`with_selection` lays them over ``params``: the model then chooses among the rest,
    as NCCL does), the one algorithm NCCL_ALGO leaves, and what is said of each (``subject``:
    what the model's figure is called; None: NCCL's choice is said, not the figure's, where an
    option may force another algorithm). ``params``: whose tuner view a release may have
    narrowed already (what it lacks is neither said to be left nor ruled out again).
    All-to-all and send/recv are NCCL's point-to-point operations, which read neither: not
    applied there. ``ll128_priced`` False: the model does not price LL128 on the cluster, and
    a setting that leaves it on says the figure sets it aside. ``printed_script`` False: the
    settings were typed, not printed by a job script, so a ``$`` or a backquote in one is a
    name like any other, not a value a shell may have expanded (the command line's)."""
    overlay: dict[str, Any] = {}
    forced: Algorithm | None = None
    ll128_named: str | None = None
    said: list[Said] = []
    tuner = params.tuner_view().nccl_tuner
    for variable, names, table, field in _SELECTIONS:
        if variable not in settings:
            continue
        value, where = settings[variable]

        def say(text: str, value: str | None = None, field: str = field) -> None:
            said.append((field, value, text))

        selection = nccl_selection(value, names, collective)
        unexpanded = printed_script and ("$" in value or "`" in value)
        if collective in (Collective.ALL_TO_ALL, Collective.SEND_RECV):
            if selection.unknown and not unexpanded:
                # a typo is one whatever the collective (--nccl-proto foo had been refused on
                # all-reduce and taken on all-to-all, review BD)
                say(_unknown_names(where, selection, names))
            say(
                f"{where} is not applied: {collective.value} is made of NCCL's point-to-point "
                f"sends and receives, {_P2P_REASON[variable]}"
            )
            continue
        if unexpanded:
            # a job script printed as written ('NCCL_PROTO=$p ./all_reduce_perf' in a loop): the
            # setting is there, its value is not, so no expectation can be chosen for it
            # (single-quoted, or as NCCL prints it, the value is literal: no name either way)
            say(
                f"{where}: {value} is no name NCCL lists; where a shell expanded it, the log "
                "does not show to what"
            )
        elif selection.unknown:
            say(_unknown_names(where, selection, names))
        if selection.allowed is None:
            say(f"{where} gives no list for {collective.value}: NCCL's own choice")
            continue
        on: Mapping[Algorithm | Protocol, int] = getattr(tuner, table)
        present = [n for n in dict.fromkeys(names.values()) if on.get(n, 1)]
        kept = [n for n in present if n in selection.allowed]
        off = [n for n in present if n not in selection.allowed]
        shown = ", ".join(nccl_name(n) for n in kept)
        aside = table == "protocols" and Protocol.LL128 in kept
        if aside:
            ll128_named = where
        aside = aside and not ll128_priced
        if not off:
            change = (
                "NCCL may now choose LL128, which the model does not price here"
                if aside
                else "no change"
            )
            say(f"{where} rules out none of the {field}s NCCL has here: {change}")
            continue
        ruled = ", ".join(nccl_name(n) for n in off)
        prior = params.tuner_view().provenance.get(f"nccl_tuner.{table}")
        before = (
            f"; {prior.text}" if prior is not None and prior.origin != params.origins[0] else ""
        )
        overlay[table] = {
            "source": f"{source}{where} rules out {ruled}{before}",
            "value": {n.value: 0 for n in off},
        }
        uses = (
            ": the model does not price it here"
            if aside
            else f": {subject} uses it"
            if subject is not None
            else ""
        )
        chooses = (
            f"{subject}{', LL128 aside,' if aside else ''} chooses among the {{}}, as NCCL does"
            if subject is not None
            else "NCCL chooses among the {}"
        )
        if len(kept) == 1 and isinstance(kept[0], Algorithm):
            forced = kept[0]
            say(f"{where} leaves NCCL only {shown}{uses}", kept[0].value)
        elif len(kept) == 1:
            say(f"{where} leaves NCCL only {shown}{uses}", shown)
        elif not kept:
            nothing = f": no {subject.removeprefix('the ')}" if subject is not None else ""
            say(f"{where} leaves NCCL no {field} for {collective.value}{nothing}")
        elif selection.listed.startswith("^"):
            say(f"{where} rules out {ruled}: {chooses.format('rest')}")
        else:
            say(f"{where} leaves NCCL {shown}: {chooses.format('ones left')}", shown)
    return RunSelection(overlay or None, forced, ll128_named), said


def run_selection(
    env: LogEnvironment,
    collective: Collective,
    params: CostParams,
    assumptions: list[Assumption],
    *,
    ll128_priced: bool = True,
) -> RunSelection:
    """:func:`select` with the log's ``NCCL_ALGO`` and ``NCCL_PROTO``, each said in
    ``assumptions`` (from the log's environment; ``ll128_priced`` as :func:`select`'s). A list
    had been noted and not applied: a run with NCCL_PROTO=Simple was expected at LL's speed at
    small sizes."""
    settings = {
        variable: (fact.value, f"{variable}={fact.value} (line {fact.line})")
        for variable in ("NCCL_ALGO", "NCCL_PROTO")
        if (fact := env.settings.get(variable)) is not None
    }
    selection, said = select(settings, collective, params, ll128_priced=ll128_priced)
    assumptions += [
        Assumption(field=field, value=value, source="environment", evidence=text)
        for field, value, text in said
    ]
    return selection


def with_selection(
    params: CostParams, overlay: Mapping[str, Any] | None, label: str = "the log's NCCL settings"
) -> CostParams:
    """``params`` with the tuner-view entries of :func:`select` laid over them (``label``: how
    an estimate names the change among its assumptions)."""
    if not overlay:
        return params
    return params.with_overrides(
        {"schema": COST_PARAMS_SCHEMA, "tuner_view": {"nccl_tuner": overlay}},
        label=label,
    )
