"""What a log's ``NCCL_ALGO`` and ``NCCL_PROTO`` let NCCL choose from, for one collective.

NCCL's environment-variable documentation: each is a comma-separated list of the algorithms
(``Ring``, ``Tree``, ``CollnetDirect``, ``CollnetChain``, ``NVLS``, ``NVLSTree``, ``PAT``) or
protocols (``LL``, ``LL128``, ``Simple``) NCCL may use, in any case; a list that starts with
``^`` names those it may not use instead. Newer releases also take a list per collective,
``allreduce:tree,ring;allgather:ring``: a collective the setting does not name keeps every one.

:func:`nccl_selection` reads one setting for one collective. nccl-check lays what it rules out
over the tuner view (``nccl_tuner.algorithms``, ``nccl_tuner.protocols``: the model then
chooses among what is left, as NCCL does), or forces the one algorithm it leaves. A pure
function of the text: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ibcalc.engine.params import SCHEMA as COST_PARAMS_SCHEMA
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.logs.env import LogEnvironment
from ibcalc.logs.results import Assumption

__all__ = [
    "NCCL_ALGO_NAMES",
    "NCCL_PROTO_NAMES",
    "Selection",
    "nccl_selection",
    "run_selection",
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


@dataclass(frozen=True)
class Selection(Generic[_T]):
    """What one setting leaves NCCL for one collective.

    ``allowed``: the algorithms or protocols NCCL may use (``None``: the setting does not bear
    on this collective); ``listed``: the list that applies, as the log gives it; ``unknown``:
    names in it NCCL's list has not (ignored)."""

    allowed: frozenset[_T] | None
    listed: str
    unknown: tuple[str, ...] = ()


def nccl_selection(value: str, names: Mapping[str, _T], collective: Collective) -> Selection[_T]:
    """What the setting ``value`` (``NCCL_ALGO`` with :data:`NCCL_ALGO_NAMES`, ``NCCL_PROTO``
    with :data:`NCCL_PROTO_NAMES`) leaves NCCL for ``collective``.

    A plain list applies to every collective; ``func:list`` entries, separated by ``;``, to the
    collective named (the last entry that names it wins, as a plain list after it does). The
    point-to-point collectives (all-to-all, send/recv) are named by none."""
    listed: str | None = None
    for entry in value.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        head, sep, tail = entry.partition(":")
        if not sep:
            listed = entry
        elif _FUNCTIONS.get(_key(head)) is collective:
            listed = tail.strip()
    if listed is None:
        return Selection(None, "")
    excluded = listed.startswith("^")
    given = [n for n in listed.lstrip("^").split(",") if n.strip()]
    known = {names[_key(n)] for n in given if _key(n) in names}
    unknown = tuple(n.strip() for n in given if _key(n) not in names)
    everything = frozenset(names.values())
    allowed = everything - known if excluded else frozenset(known)
    return Selection(allowed, listed, unknown)


#: The settings that narrow NCCL's choice, the names each takes and the tuner-view table that
#: switches off what it rules out.
_SELECTIONS: tuple[tuple[str, Mapping[str, Algorithm | Protocol], str, str], ...] = (
    ("NCCL_ALGO", NCCL_ALGO_NAMES, "algorithms", "algorithm"),
    ("NCCL_PROTO", NCCL_PROTO_NAMES, "protocols", "protocol"),
)


def run_selection(
    env: LogEnvironment,
    collective: Collective,
    params: CostParams,
    assumptions: list[Assumption],
) -> tuple[dict[str, Any] | None, Algorithm | None]:
    """What the log's ``NCCL_ALGO`` and ``NCCL_PROTO`` rule out for ``collective``, as the
    tuner-view entries that switch it off (None: nothing; :func:`with_selection` lays them over
    ``params``: the model then chooses among the rest, as NCCL does), and the algorithm
    NCCL_ALGO leaves alone (forced, as ``--algo`` does), each said in ``assumptions``
    (``params``: whose tuner view a release may have narrowed already, said beside). A list had
    been noted and not applied: a run with NCCL_PROTO=Simple was expected at LL's speed at
    small sizes. All-to-all and send/recv are NCCL's point-to-point operations, which choose
    no collective algorithm: not applied there."""
    overlay: dict[str, Any] = {}
    forced: Algorithm | None = None
    for variable, names, table, field in _SELECTIONS:
        fact = env.settings.get(variable)
        if fact is None:
            continue
        where = f"{variable}={fact.value} (line {fact.line})"

        def say(text: str, value: str | None = None, field: str = field) -> None:
            assumptions.append(
                Assumption(field=field, value=value, source="environment", evidence=text)
            )

        if collective in (Collective.ALL_TO_ALL, Collective.SEND_RECV):
            say(
                f"{where} is not applied: {collective.value} is made of NCCL's point-to-point "
                "sends and receives, whose protocol the model chooses as NCCL does by size"
            )
            continue
        selection = nccl_selection(fact.value, names, collective)
        if selection.unknown:
            say(f"{where}: {', '.join(selection.unknown)} is not a name NCCL lists; ignored")
        if selection.allowed is None:
            say(f"{where} gives no list for {collective.value}: NCCL's own choice")
            continue
        only = next(iter(selection.allowed)) if len(selection.allowed) == 1 else None
        if isinstance(only, Algorithm):
            forced = only
            say(f"{where} leaves NCCL {only.value} alone: the expectation uses it", only.value)
            continue
        off = [n for n in names.values() if n not in selection.allowed]
        if not off:
            say(f"{where} rules out none of NCCL's {field}s")
            continue
        ruled = ", ".join(v.value for v in off)
        prior = params.tuner_view().provenance.get(f"nccl_tuner.{table}")
        before = (
            f"; {prior.text}" if prior is not None and prior.origin != params.origins[0] else ""
        )
        overlay[table] = {
            "source": f"the log's {where} rules out {ruled}{before}",
            "value": {v.value: 0 for v in off},
        }
        kept = ", ".join(sorted(a.value for a in selection.allowed))
        if only is not None:
            said = f"leaves NCCL {kept} alone: the expectation uses it"
        elif not kept:
            said = f"leaves NCCL no {field} for {collective.value}: no expectation"
        elif selection.listed.startswith("^"):
            said = f"rules out {ruled}: the expectation chooses among the rest, as NCCL does"
        else:
            said = f"leaves NCCL {kept}: the expectation chooses among them, as NCCL does"
        say(f"{where} {said}", kept or None)
    return (overlay or None), forced


def with_selection(params: CostParams, overlay: Mapping[str, Any] | None) -> CostParams:
    """``params`` with the tuner-view entries of :func:`run_selection` laid over them."""
    if not overlay:
        return params
    return params.with_overrides(
        {"schema": COST_PARAMS_SCHEMA, "tuner_view": {"nccl_tuner": overlay}},
        label="the log's NCCL settings",
    )
