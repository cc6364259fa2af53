"""Switch models and node-side cages for fabric sizing, read from ``data/switches.yaml``.

The file ships inside the package (``ibcalc/data/switches.yaml``, a symlink to the repository's
``data/switches.yaml``, as ``links.yaml`` is) and is read once, on first use, through
:mod:`ibcalc.yamlio`: every problem is reported as ``file:line:col``. Each switch lists its port
modes (ports at one rate each), its cages where a source gives them, its sources and confidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ibcalc.catalogue.load import suggest
from ibcalc.catalogue.models import Confidence
from ibcalc.errors import CatalogueError, FabricError, InputFileError, UnknownNameError
from ibcalc.errors import ValidationProblem as Problem
from ibcalc.units import BITS_PER_BYTE, GB, parse_bandwidth
from ibcalc.yamlio import Document, load_yaml, validate

__all__ = [
    "BUILTIN_LABEL",
    "NodeCages",
    "PortMode",
    "SwitchCatalogue",
    "SwitchModel",
    "builtin_text",
    "find_switch",
    "load_switches",
    "node_cages",
    "switches",
]

#: How the built-in file is named in messages.
BUILTIN_LABEL = "data/switches.yaml"
#: Relative tolerance when matching a NIC rate to a port mode (400 Gb/s vs 50 GB/s round trips).
_RATE_TOLERANCE = 0.005

#: How a link family or switch network is named in messages.
_NETWORK_WORDS = {
    "infiniband": "InfiniBand",
    "ethernet": "Ethernet",
    "efa": "AWS EFA",
    "slingshot": "HPE Slingshot",
}

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]


def _no_blank(value: tuple[str, ...]) -> tuple[str, ...]:
    if any(not s.strip() for s in value):
        raise ValueError("a source must not be blank")
    return value


_Sources = Annotated[tuple[str, ...], Field(min_length=1), AfterValidator(_no_blank)]


class PortMode(BaseModel):
    """One way to run a switch: ``ports`` ports at ``rate_gbps`` Gb/s per direction."""

    model_config = _FROZEN

    ports: int = Field(ge=1, le=100_000)
    rate_gbps: int = Field(ge=1, le=100_000)

    @property
    def rate_Bps(self) -> float:
        """Port rate in bytes per second, per direction."""
        return parse_bandwidth(f"{self.rate_gbps}Gb/s")


class SwitchModel(BaseModel):
    """A switch the sizing knows: port modes, cages, and the sources of both."""

    model_config = _FROZEN

    id: _Identifier
    aliases: tuple[_Identifier, ...] = ()
    name: str = Field(min_length=1)
    network: Literal["infiniband", "ethernet"] = Field(
        description="What the ports speak: a NIC link of another family cannot plug into it."
    )
    modes: tuple[PortMode, ...] = Field(min_length=1)
    cages: int | None = Field(ge=1, le=100_000)
    cage_type: str | None = None
    sources: _Sources
    confidence: Confidence
    notes: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The id followed by every alias."""
        return (self.id, *self.aliases)

    @property
    def source(self) -> str:
        """Every source in one line, separated by `` ; ``."""
        return " ; ".join(self.sources)

    def describe(self) -> str:
        """Short text such as ``64 x 400 Gb/s or 128 x 200 Gb/s``."""
        return " or ".join(f"{m.ports} x {m.rate_gbps} Gb/s" for m in self.modes)

    def mode_for(self, port_Bps: float) -> PortMode:
        """The port mode whose rate is ``port_Bps``; raise :class:`FabricError` if none."""
        for mode in self.modes:
            if abs(mode.rate_Bps - port_Bps) <= _RATE_TOLERANCE * port_Bps:
                return mode
        nic_gbps = port_Bps * BITS_PER_BYTE / GB
        raise FabricError(
            f"switch {self.id} has no {nic_gbps:g} Gb/s ports (it offers {self.describe()}); "
            "pick another switch or give `radix:` for one not in the catalogue"
        )

    def network_problem(self, family: str, link_id: str) -> str | None:
        """Why NICs of link family ``family`` (data/links.yaml) cannot plug into this switch, or
        None when they can: an InfiniBand NIC into an Ethernet switch, RoCE into InfiniBand, or
        a network no catalogued switch builds (EFA, Slingshot)."""
        if family == self.network:
            return None
        if family == "wan":
            return (
                f"the NICs are {link_id}, a WAN link: the fat-tree sizing builds a site's "
                "scale-out fabric, not a WAN"
            )
        return (
            f"switch {self.id} is an {_NETWORK_WORDS[self.network]} switch and the NICs are "
            f"{link_id} ({_NETWORK_WORDS.get(family, family)}); pick a switch of their network "
            "or give `radix:` for one not in the catalogue"
        )

    def ports_per_cage(self, mode: PortMode) -> int | None:
        """Ports of ``mode`` that share one cage (2 for twin-port OSFP at 400G), if known."""
        if self.cages is None or mode.ports % self.cages:
            return None
        return mode.ports // self.cages


class NodeCages(BaseModel):
    """Network cages of a system preset: ``cages`` transceivers serve ``nics`` compute NICs."""

    model_config = _FROZEN

    system: _Identifier
    cages: int = Field(ge=1, le=1024)
    nics: int = Field(ge=1, le=1024)
    #: the link of the NICs the cages hold, as the source states it (the layout is theirs)
    nic_link: _Identifier
    sources: _Sources
    confidence: Confidence
    notes: str | None = None

    @property
    def source(self) -> str:
        """Every source in one line, separated by `` ; ``."""
        return " ; ".join(self.sources)


class _SwitchFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_: Literal["ibcalc-switches/1"] = Field(alias="schema")
    switches: tuple[SwitchModel, ...] = Field(min_length=1)
    node_cages: tuple[NodeCages, ...] = ()


class SwitchCatalogue(BaseModel):
    """Every switch by id and every known node cage layout by system id."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    switches: dict[str, SwitchModel]
    node_cages: dict[str, NodeCages]
    origin: str

    def find(self, name: str) -> SwitchModel:
        """The switch with this id or alias (any case); UnknownNameError with the closest names."""
        key = name.strip().lower()
        for switch in self.switches.values():
            if key in switch.names:
                return switch
        names = [n for s in self.switches.values() for n in s.names]
        raise UnknownNameError("switch", name, suggest(key, names))


def builtin_text() -> str:
    """The text of the switch catalogue shipped with the package."""
    return resources.files("ibcalc").joinpath("data", "switches.yaml").read_text(encoding="utf-8")


def _check(doc: Document, parsed: _SwitchFile) -> list[Problem]:
    """Names used once across ids and aliases, distinct rates per switch, one entry per system."""
    problems: list[Problem] = []

    def add(loc: Sequence[str | int], message: str) -> None:
        line, col = doc.locate(loc)
        problems.append(Problem(doc.path, line, col, message))

    owner: dict[str, str] = {}
    for i, switch in enumerate(parsed.switches):
        for name in switch.names:
            where = "id" if name == switch.id else "aliases"
            if name in owner:
                add(
                    ("switches", i, where),
                    f"switches[{i}] ({switch.id}): name {name!r} is already used by "
                    f"{owner[name]!r}",
                )
            owner.setdefault(name, switch.id)
        rates = [m.rate_gbps for m in switch.modes]
        for j, rate in enumerate(rates):
            if rate in rates[:j]:
                add(
                    ("switches", i, "modes", j, "rate_gbps"),
                    f"switches[{i}] ({switch.id}): two port modes at {rate} Gb/s",
                )
    systems: set[str] = set()
    for i, cages in enumerate(parsed.node_cages):
        if cages.system in systems:
            add(
                ("node_cages", i, "system"),
                f"node_cages[{i}]: system {cages.system!r} is given twice",
            )
        systems.add(cages.system)
    return problems


def load_switches(source: str | Path | None = None, *, text: str | None = None) -> SwitchCatalogue:
    """Read and check a switch catalogue: ``source`` (or ``text`` labelled with it), or the
    built-in one when neither is given. Raises :class:`CatalogueError` listing every problem
    with ``file:line:col``."""
    if source is None:
        source, text = BUILTIN_LABEL, builtin_text()
    # duplicate keys said with the schema's problems (validate), not in a run before
    doc = load_yaml(source, text=text, defer_duplicates=True)
    if not isinstance(doc.data, dict):
        raise CatalogueError(
            [Problem(doc.path, 1, 1, "a switch catalogue must be a mapping with switches:")]
        )
    try:
        parsed = validate(doc, _SwitchFile)
    except InputFileError as exc:
        raise CatalogueError(exc.problems) from None
    problems = _check(doc, parsed)
    if problems:
        raise CatalogueError(problems)
    return SwitchCatalogue(
        switches={s.id: s for s in parsed.switches},
        node_cages={c.system: c for c in parsed.node_cages},
        origin=doc.path,
    )


@cache
def _builtin() -> SwitchCatalogue:
    return load_switches()


def switches() -> dict[str, SwitchModel]:
    """The built-in switches by id (read on first use)."""
    return dict(_builtin().switches)


def node_cages() -> dict[str, NodeCages]:
    """The built-in node cage layouts by system id (read on first use)."""
    return dict(_builtin().node_cages)


def find_switch(name: str) -> SwitchModel:
    """The built-in switch with this id or alias (any case), or UnknownNameError with the
    closest names."""
    return _builtin().find(name)
