"""Load the link catalogue (built-in ``data/links.yaml`` plus user files), check it, look names up.

The built-in file ships inside the package (``ibcalc/data/links.yaml``) and is found through
``importlib.resources``. A user file given with ``--catalogue FILE`` or ``IBCALC_CATALOGUE``
adds entries or replaces entries with the same id; it is validated the same way, and every
problem is reported as ``file:line:col``.
"""

from __future__ import annotations

import difflib
import functools
import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.booleans import expect_bool
from ibcalc.catalogue.models import Catalogue, Link, LinkKind, Storage, StorageKind, System
from ibcalc.defaults import empty_list
from ibcalc.errors import (
    CatalogueError,
    ClusterError,
    InputFileError,
    UnknownNameError,
    ValidationProblem,
    WrongTypeError,
    entry_given,
    expect_type,
)
from ibcalc.fileio import env_paths, last_naming
from ibcalc.listing import listed
from ibcalc.patterns import lazy_pattern
from ibcalc.textsafe import folded, printable, shown
from ibcalc.trusted import trusted
from ibcalc.units import plural, written_in_bits
from ibcalc.yamlio import (
    Document,
    input_paths,
    load_yaml,
    mirror_json,
    read_mirror,
    trusted_document,
    validate,
    wrong_kind_problem,
)

__all__ = [
    "BUILTIN_LABEL",
    "ENV_VAR",
    "LANE_TOLERANCE",
    "LINK_ROLES",
    "MODELS_MIRROR",
    "builtin_text",
    "find_link",
    "find_storage",
    "find_system",
    "link_role_problem",
    "link_role_refusal",
    "load_catalogue",
    "models_mirror_text",
    "suggest",
]

ENV_VAR = "IBCALC_CATALOGUE"
BUILTIN_LABEL = "data/links.yaml"
#: Tolerance of the check links x lanes x lane rate x encoding efficiency == per_direction.
LANE_TOLERANCE = 0.015
_BIDIR_TOLERANCE = 1e-6


class _CatalogueFile(BaseModel):
    # built on first validation, as the entries' models are (catalogue.models): the built-in
    # file is read from its models' mirror (_mirrored), and a run naming no catalogue file of its
    # own validates none
    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    schema_: Literal["ibcalc-catalogue/1"] = Field(alias="schema")
    links: list[Link] = Field(default_factory=empty_list)
    systems: list[System] = Field(default_factory=empty_list)
    storage: list[Storage] = Field(default_factory=empty_list)


#: A storage unit delivering more than this (bytes/s) is more likely Gb/s written as GB/s, or a
#: whole site's storage written as one unit, than one appliance: 10 TB/s.
MAX_STORAGE_UNIT_BPS = 10e12


def _check_storage(doc: Document, storage: Sequence[Storage]) -> list[ValidationProblem]:
    """Each stated number has its source; a client never gets more than the whole unit."""
    problems: list[ValidationProblem] = []

    def add(index: int, key: str, message: str) -> None:
        line, col = doc.locate(("storage", index, key))
        problems.append(ValidationProblem(doc.path, line, col, f"storage[{index}] {message}"))

    for i, entry in enumerate(storage):
        for field_name, source_name, present in (
            (
                "aggregate_read",
                "aggregate_source",
                entry.aggregate_read_Bps is not None or entry.aggregate_write_Bps is not None,
            ),
            (
                "per_client_read",
                "per_client_source",
                entry.per_client_read_Bps is not None or entry.per_client_write_Bps is not None,
            ),
            ("latency", "latency_source", entry.latency_s is not None),
            (
                "read_requests_per_s",
                "requests_source",
                entry.read_requests_per_s is not None or entry.write_requests_per_s is not None,
            ),
            ("max_write_part", "max_write_part_source", entry.max_write_part_bytes is not None),
            ("max_write_parts", "max_write_part_source", entry.max_write_parts is not None),
            ("min_write_part", "max_write_part_source", entry.min_write_part_bytes is not None),
        ):
            if present and not getattr(entry, source_name):
                add(i, field_name, f"({entry.id}): {field_name} needs {source_name}")
        for name, value in (
            ("max_write_part", entry.max_write_part_bytes),
            ("max_write_parts", entry.max_write_parts),
            ("min_write_part", entry.min_write_part_bytes),
        ):
            if value is not None and entry.write_requests_per_s is None:
                # only a store priced per request cuts a save into parts (workload/checkpoint.py)
                add(
                    i,
                    name,
                    f"({entry.id}): {name} needs write_requests_per_s (a part is one write "
                    "request to an object store)",
                )
        for direction in ("read", "write"):
            unit = getattr(entry, f"aggregate_{direction}_Bps")
            client = getattr(entry, f"per_client_{direction}_Bps")
            if unit is not None and client is not None and client > unit:
                add(
                    i,
                    f"per_client_{direction}",
                    f"({entry.id}): per_client_{direction} {client / 1e9:g} GB/s is more than "
                    f"the unit's aggregate_{direction} {unit / 1e9:g} GB/s",
                )
            if unit is not None and unit > MAX_STORAGE_UNIT_BPS:
                add(
                    i,
                    f"aggregate_{direction}",
                    f"({entry.id}): {unit / 1e9:g} GB/s for one unit is more than 10 TB/s; was "
                    "Gb/s written as GB/s, or a whole site given as one unit?",
                )
        if (entry.read_requests_per_s or entry.write_requests_per_s) and not entry.request_scope:
            add(i, "request_scope", f"({entry.id}): request rates need request_scope")
        if entry.kind is not StorageKind.OBJECT and entry.aggregate_write_Bps is None:
            add(
                i,
                "kind",
                f"({entry.id}): a {entry.kind} entry needs aggregate_write (only object stores "
                "scale without a stated limit)",
            )
    return problems


#: What one 4x InfiniBand port carries per direction, by generation (the first three letters of
#: ``generation``): 4 lanes of 25, 50, 100 and 200 Gb/s (IBTA; data/links.yaml's edr, hdr, ndr
#: and xdr give these rates with their sources, and tests/catalogue checks the two agree).
_IB_4X_PORT_BPS = {"EDR": 12.5e9, "HDR": 25e9, "NDR": 50e9, "XDR": 100e9}


def builtin_text() -> str:
    """Return the text of the catalogue shipped with the package."""
    return resources.files("ibcalc").joinpath("data", "links.yaml").read_text(encoding="utf-8")


def _check_links(doc: Document, links: Sequence[Link]) -> list[ValidationProblem]:
    problems: list[ValidationProblem] = []

    def add(index: int, key: str, message: str) -> None:
        line, col = doc.locate(("links", index, key))
        problems.append(ValidationProblem(doc.path, line, col, f"links[{index}] {message}"))

    for i, link in enumerate(links):
        if link.bidirectional_Bps is not None:
            expected = 2 * link.per_direction_Bps
            if abs(link.bidirectional_Bps - expected) > _BIDIR_TOLERANCE * expected:
                add(
                    i,
                    "bidirectional",
                    f"({link.id}): bidirectional {link.bidirectional_Bps / 1e9:g} GB/s is not "
                    f"2 x per_direction {link.per_direction_Bps / 1e9:g} GB/s",
                )
        if link.lane_signalling_Bps is not None:
            if link.encoding_efficiency is None:
                add(i, "lane_signalling", f"({link.id}): lane_signalling needs encoding_efficiency")
            else:
                derived = (
                    (link.links or 1)
                    * (link.lanes_per_link or 1)
                    * link.lane_signalling_Bps
                    * link.encoding_efficiency
                )
                error = abs(derived - link.per_direction_Bps) / link.per_direction_Bps
                if error > LANE_TOLERANCE:
                    add(
                        i,
                        "lane_signalling",
                        f"({link.id}): links x lanes x lane rate x encoding efficiency = "
                        f"{derived / 1e9:.4g} GB/s, but per_direction is "
                        f"{link.per_direction_Bps / 1e9:.4g} GB/s ({error:.1%} apart, "
                        f"tolerance {LANE_TOLERANCE:.1%})",
                    )
        for field_name, source_name, present in (
            ("latency", "latency_source", link.latency_s is not None),
            ("nvls_efficiency", "nvls_efficiency_source", link.nvls_efficiency is not None),
            ("transport_latency", "transport_latency_source", link.transport_latency_s > 0),
            (
                "simple_transport_floor",
                "simple_transport_floor_source",
                link.simple_transport_floor is not None,
            ),
            ("duplex_efficiency", "duplex_efficiency_source", link.duplex_efficiency < 1.0),
        ):
            if present and not getattr(link, source_name):
                add(i, field_name, f"({link.id}): {field_name} needs {source_name}")
        generation = (link.generation or "").strip()
        port = _IB_4X_PORT_BPS.get(generation[:3].upper())
        # a port whose lanes are stated is as wide as they say (8x, 12x, two ports bonded:
        # the lane arithmetic above checks its rate); one without is taken as 4x, or 2x for
        # the split HDR100 and NDR200 ports, times its links
        split = generation.upper().replace(" ", "") in ("HDR100", "NDR200")
        lanes = (link.links or 1) * (link.lanes_per_link or (2 if split else 4))
        too_fast = (
            link.family.lower() == "infiniband"
            and link.scope == "per-port"
            and port is not None
            and link.per_direction_Bps > port * lanes / 4 * 1.001
        )
        # the Gb/s-for-GB/s question is asked of a rate written in bytes only: an NDR200 port
        # written "400 Gb/s" (NDR's rate) had been asked whether Gb/s was written as GB/s
        bits = written_in_bits(_entry_field(doc, "links", i, "per_direction"))
        rate = f"{link.per_direction_Bps / 1e9:g} GB/s per direction" + (
            f" ({link.per_direction_Bps * 8 / 1e9:g} Gb/s)" if bits else ""
        )
        if too_fast and port is not None:
            # a review: an override's NDR port at '200 GB/s' (meant 200 Gb/s) was taken, 4x
            questions = ([] if bits else ["was Gb/s written as GB/s (400 Gb/s is 50 GB/s)"]) + (
                [] if link.lanes_per_link else ["is the port wider (give lanes_per_link)"]
            )
            add(
                i,
                "per_direction",
                f"({link.id}): {rate} is more than {lanes} lanes of {generation} carry "
                f"({port * lanes / 4 / 1e9:g} GB/s = {port * lanes / 4 * 8 / 1e9:g} Gb/s)"
                + (f": {', or '.join(questions)}?" if questions else ""),
            )
        elif link.kind in (LinkKind.SCALE_OUT, LinkKind.WAN) and link.per_direction_Bps > 250e9:
            add(
                i,
                "per_direction",
                f"({link.id}): {rate} is more than any network port (2 Tb/s)"
                + ("" if bits else "; was Gb/s written as GB/s? (400 Gb/s = 50 GB/s)"),
            )
        if "nvls" in link.capabilities and link.nvls_efficiency is None:
            add(i, "capabilities", f"({link.id}): nvls capability needs nvls_efficiency")
    return problems


def _entry_field(doc: Document, section: str, index: int, key: str) -> object:
    """The value of ``key`` in entry ``index`` of ``section`` as the file wrote it (None if
    the document does not hold one there)."""
    entries = doc.data.get(section) if isinstance(doc.data, dict) else None
    entry = entries[index] if isinstance(entries, list) and index < len(entries) else None
    return entry.get(key) if isinstance(entry, dict) else None


def _check_names(
    doc: Document, section: str, entries: Sequence[Link | System | Storage]
) -> list[ValidationProblem]:
    problems: list[ValidationProblem] = []
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.id in ids:
            line, col = doc.locate((section, i, "id"))
            problems.append(
                ValidationProblem(
                    doc.path, line, col, f"{section}[{i}]: id {entry.id!r} is used twice"
                )
            )
            continue
        ids.add(entry.id)
        for name in entry.names:
            if name in seen and seen[name] != entry.id:
                line, col = doc.locate((section, i, "id" if name == entry.id else "aliases"))
                problems.append(
                    ValidationProblem(
                        doc.path,
                        line,
                        col,
                        f"{section}[{i}] ({entry.id}): name {name!r} is already used by "
                        f"{seen[name]!r}",
                    )
                )
            elif name in seen:
                line, col = doc.locate((section, i, "aliases"))
                problems.append(
                    ValidationProblem(
                        doc.path, line, col, f"{section}[{i}] ({entry.id}): {name!r} given twice"
                    )
                )
            seen[name] = entry.id
    return problems


def _check_pcie_hosts(
    doc: Document, file_links: Sequence[Link], links: dict[str, Link]
) -> list[ValidationProblem]:
    """A link's ``pcie_host`` names a host link of the merged catalogue."""
    problems: list[ValidationProblem] = []
    for i, link in enumerate(file_links):
        ref = link.pcie_host
        if ref is None:
            continue
        host = links.get(ref)
        if host is not None and host.kind is LinkKind.HOST:
            continue
        line, col = doc.locate(("links", i, "pcie_host"))
        if host is None:
            close = difflib.get_close_matches(ref, list(links), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            what = f"is not a link id{hint}"
        else:
            what = f"is a {host.kind} link, expected {LinkKind.HOST}"
        problems.append(
            ValidationProblem(
                doc.path, line, col, f"links[{i}] ({link.id}): pcie_host {shown(ref)} {what}"
            )
        )
    return problems


#: Systems of one file that a link redefined in another no longer fits, by (the redefining
#: file, the link, the file of the systems, the system's field): their ids.
_Broken = dict[tuple[str, str, str, str], list[str]]


def _check_systems(
    doc: Document,
    systems: Sequence[System],
    links: dict[str, Link],
    origin_of: dict[str, str] | None = None,
    broken: _Broken | None = None,
) -> list[ValidationProblem]:
    """Every system's links exist and have the kind its place takes. A link another file
    redefined into the wrong kind is collected in ``broken`` (when given), to be reported once
    in that file (:func:`_broken_problems`)."""
    problems: list[ValidationProblem] = []
    # the kinds a link may have in each place, as the cluster resolver takes them
    kinds_for = {role: LINK_ROLES[role][0] for role in ("intra", "inter", "host_pcie")}
    for i, system in enumerate(systems):
        for field_name, kinds in kinds_for.items():
            ref = getattr(system, field_name)
            if ref is None:
                continue
            link = links.get(ref)
            if link is not None and link.kind in kinds:
                continue
            # located only when there is a problem (the built-in file's positions are worked
            # out on demand)
            line, col = doc.locate(("systems", i, field_name))
            if link is None:
                close = difflib.get_close_matches(ref, list(links), n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                problems.append(
                    ValidationProblem(
                        doc.path,
                        line,
                        col,
                        f"systems[{i}] ({system.id}): {field_name} {shown(ref)} is not a link "
                        f"id{hint}",
                    )
                )
            else:
                # a link another file redefined: name that file, the one to fix
                origin = (origin_of or {}).get(link.id, doc.path)
                if origin != doc.path and broken is not None:
                    broken.setdefault((origin, link.id, doc.path, field_name), []).append(system.id)
                    continue
                by = f" (as {printable(origin, None)} defines it)" if origin != doc.path else ""
                problems.append(
                    ValidationProblem(
                        doc.path,
                        line,
                        col,
                        f"systems[{i}] ({system.id}): {field_name} {shown(ref)} is a "
                        f"{link.kind} link{by}, expected {' or '.join(kinds)}",
                    )
                )
        for value_key, source_key, value in (
            ("gpu_memory", "gpu_memory_source", system.gpu_memory_bytes),
            ("gpu_memory_largest", "gpu_memory_largest_source", system.gpu_memory_largest_bytes),
            ("gpu_peak_tflops", "gpu_peak_source", system.gpu_peak_tflops),
        ):
            if (value is None) != (not getattr(system, source_key)):
                key = value_key if value is not None else source_key
                line, col = doc.locate(("systems", i, key))
                problems.append(
                    ValidationProblem(
                        doc.path,
                        line,
                        col,
                        f"systems[{i}] ({system.id}): {value_key} needs {source_key}"
                        if value is not None
                        else f"systems[{i}] ({system.id}): {source_key} without {value_key}",
                    )
                )
        if system.gpu_memory_largest_bytes is not None and system.gpu_memory_bytes is not None:
            # one size stated: there is no largest of several to bound it with
            line, col = doc.locate(("systems", i, "gpu_memory_largest"))
            problems.append(
                ValidationProblem(
                    doc.path,
                    line,
                    col,
                    f"systems[{i}] ({system.id}): gpu_memory_largest is for a preset sold with "
                    "GPUs of several memory sizes; this one states gpu_memory",
                )
            )
        if system.nics_per_node > 0 and system.inter is None:
            line, col = doc.locate(("systems", i, "nics_per_node"))
            problems.append(
                ValidationProblem(
                    doc.path, line, col, f"systems[{i}] ({system.id}): NICs given but no inter link"
                )
            )
        if system.scale_up_domain % system.gpus_per_node and system.scale_up_domain > 1:
            line, col = doc.locate(("systems", i, "scale_up_domain"))
            problems.append(
                ValidationProblem(
                    doc.path,
                    line,
                    col,
                    f"systems[{i}] ({system.id}): scale_up_domain {system.scale_up_domain} is not "
                    f"a multiple of gpus_per_node {system.gpus_per_node}",
                )
            )
    return problems


def _check_across_files(docs: Sequence[tuple[Document, _CatalogueFile]]) -> list[ValidationProblem]:
    """Names that clash with another entry of an earlier file, located in the later file.

    An entry replaces the earlier entry with its id (and that entry's aliases); any other
    name it uses must still be free.
    """
    problems: list[ValidationProblem] = []
    for section in ("links", "systems", "storage"):
        owner: dict[str, str] = {}
        for doc, parsed in docs:
            entries: Sequence[Link | System | Storage] = (
                parsed.links
                if section == "links"
                else parsed.systems
                if section == "systems"
                else parsed.storage
            )
            replaced = {entry.id for entry in entries}
            owner = {name: who for name, who in owner.items() if who not in replaced}
            for i, entry in enumerate(entries):
                for name in entry.names:
                    if name in owner and owner[name] != entry.id:
                        where = "id" if name == entry.id else "aliases"
                        line, col = doc.locate((section, i, where))
                        problems.append(
                            ValidationProblem(
                                doc.path,
                                line,
                                col,
                                f"{section}[{i}] ({entry.id}): name {name!r} is already used "
                                f"by {owner[name]!r}",
                            )
                        )
            for entry in entries:
                for name in entry.names:
                    owner.setdefault(name, entry.id)
    return problems


def _parse(doc: Document) -> _CatalogueFile:
    if not isinstance(doc.data, dict):
        raise CatalogueError(
            [ValidationProblem(doc.path, 1, 1, "a catalogue must be a mapping with links/systems")]
        )
    problem = wrong_kind_problem(doc, "catalogue")
    if problem is not None:
        raise CatalogueError([problem])
    try:
        parsed = validate(doc, _CatalogueFile)
    except InputFileError as exc:
        raise CatalogueError(exc.problems) from None
    problems = _check_links(doc, parsed.links)
    problems += _check_names(doc, "links", parsed.links)
    problems += _check_names(doc, "systems", parsed.systems)
    problems += _check_storage(doc, parsed.storage)
    problems += _check_names(doc, "storage", parsed.storage)
    if problems:
        raise CatalogueError(problems)
    return parsed


#: The built-in catalogue's entries as validating and checking data/links.yaml makes them
#: (``ibcalc/data/<this>``, :func:`models_mirror_text`), with the SHA-256 of the text they were
#: made from; tests/test_shipped.py holds it to its file and rewrites it.
MODELS_MIRROR = "links.yaml.models.json"

_SECTIONS: dict[str, type[Link | System | Storage]] = {
    "links": Link,
    "systems": System,
    "storage": Storage,
}

M = TypeVar("M", bound=BaseModel)


def models_mirror_text(text: str) -> str:
    """The mirror of the built-in catalogue made from ``text``, data/links.yaml's: the file
    validated and checked as any catalogue file is, then each entry's fields as validation made
    them, in their order, with the fields the file gave (``model_fields_set``). JSON keeps a
    float apart from an int; the tuples and enumerations it has no word for are made again on
    reading (:func:`_remade`)."""
    parsed = _parse(trusted_document(BUILTIN_LABEL, text))
    data: dict[str, Any] = {"schema": parsed.schema_, "given": sorted(parsed.model_fields_set)}
    for section in _SECTIONS:
        entries: Sequence[BaseModel] = getattr(parsed, section)
        data[section] = [[entry.__dict__, sorted(entry.model_fields_set)] for entry in entries]
    return mirror_json(text, data)


@functools.cache
def _remade(cls: type[BaseModel]) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """The fields of ``cls`` that JSON gives back as another type than validation makes, each
    with what makes it again: a tuple from a list (of enumeration members from their values,
    where the tuple holds them), an enumeration's member from its value; ``X | None`` as ``X``
    (the caller leaves None as it is). Any other type that JSON would change is refused when the
    module is checked (``tests/test_shipped.py``), not guessed at (review EW 5)."""
    remade: list[tuple[str, Callable[[Any], Any]]] = []
    for name, field in cls.model_fields.items():
        make = _maker(field.annotation)
        if make is not None:
            remade.append((name, make))
    return tuple(remade)


def _maker(kind: Any) -> Callable[[Any], Any] | None:
    """What makes a value of type ``kind`` again from its JSON, None where JSON keeps it."""
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) in (typing.Union, types.UnionType) and len(args) == 1:
        return _maker(args[0])
    if typing.get_origin(kind) is tuple:
        member = _maker(args[0]) if args else None
        return tuple if member is None else lambda value: tuple(map(member, value))
    if isinstance(kind, type) and issubclass(kind, Enum):
        return kind
    return None


def _rebuilt(cls: type[M], values: dict[str, Any], given: list[str]) -> M:
    for name, make in _remade(cls):
        if values[name] is not None:
            values[name] = make(values[name])
    return trusted(cls, values, frozenset(given))


def _mirrored(text: str) -> _CatalogueFile | None:
    """The built-in catalogue from :data:`MODELS_MIRROR` when it was made from ``text``, else
    None. Its entries are built as validating ``text`` built them, without validating again
    (:func:`~ibcalc.trusted.trusted`): an estimate's start-up had spent ~15 ms of CPU time
    building the schemas of the catalogue's models and validating the file with them."""
    mirrored = read_mirror(MODELS_MIRROR, text)
    if mirrored is None:
        return None
    data = mirrored[0]
    try:
        values: dict[str, Any] = {"schema_": data["schema"]}
        for section, cls in _SECTIONS.items():
            values[section] = [_rebuilt(cls, entry, given) for entry, given in data[section]]
        given = frozenset(data["given"])
    except (KeyError, TypeError, ValueError):
        # a mirror of the right text but another shape (edited by hand) is no mirror: the YAML
        # is validated instead (it had ended every command with an internal error: review EW 5)
        return None
    return trusted(_CatalogueFile, values, given)


@functools.cache
def _builtin() -> tuple[Document, _CatalogueFile]:
    """The shipped catalogue, read and validated once per process (its entries are frozen).

    It is read by libyaml without positions (:func:`~ibcalc.yamlio.trusted_document`); they are
    worked out only if a problem is to be reported in it (a user file replacing a link that a
    built-in system names with a link of another kind, say). Validation stays complete: its
    entries come from :data:`MODELS_MIRROR`, made by validating and checking this very text,
    or else (the file edited since) from validating and checking it now."""
    text = builtin_text()
    doc = trusted_document(BUILTIN_LABEL, text, shipped="links.yaml")
    parsed = _mirrored(text)
    return doc, _parse(doc) if parsed is None else parsed


def _broken_problems(
    docs: Sequence[tuple[Document, _CatalogueFile]], links: dict[str, Link], broken: _Broken
) -> list[ValidationProblem]:
    """One problem for each link a file redefined into a kind other files' systems cannot take,
    at that link's ``kind`` in the redefining file: ``--catalogue`` turning ndr into a
    scale-up link had been reported seven times at lines of data/links.yaml, a path that does
    not exist where the user stands (review BN)."""
    by_path = {doc.path: (doc, parsed) for doc, parsed in docs}
    problems: list[ValidationProblem] = []
    for (origin, link_id, systems_path, field_name), ids in broken.items():
        doc, parsed = by_path[origin]
        index = next(i for i, link in enumerate(parsed.links) if link.id == link_id)
        line, col = doc.locate(("links", index, "kind"))
        kinds = " or ".join(LINK_ROLES[field_name][0])
        named = listed(ids, "system", limit=4)
        whose = (
            f"{len(ids)} built-in system{'s' * (len(ids) != 1)}"
            if systems_path == BUILTIN_LABEL
            else f"{plural(len(ids), 'system')} of {printable(systems_path, None)}"
        )
        problems.append(
            ValidationProblem(
                doc.path,
                line,
                col,
                f"links[{index}] ({link_id}): kind {links[link_id].kind}, but {whose} "
                f"({named}) take{'s' * (len(ids) == 1)} it as their {field_name} link, which "
                f"must be {kinds}",
            )
        )
    return problems


def load_catalogue(
    extra: Iterable[str | Path] | str | Path = (), *, use_env: bool = True, builtin: bool = True
) -> Catalogue:
    """Load the built-in catalogue, then each user file in order (``IBCALC_CATALOGUE`` first);
    ``extra`` is one path or several.

    A user entry whose id matches an existing one replaces it. Raises :class:`CatalogueError`
    listing every problem with ``file:line:col``, or :class:`~ibcalc.errors.InputFileError`
    (its parent class) for a file that cannot be read or parsed as YAML.
    """
    extra = input_paths(extra, argument="extra", each="a catalogue file")
    use_env = expect_bool(use_env, "use_env")  # "no" is truthy (review CH)
    builtin = expect_bool(builtin, "builtin")
    # each file with whether the variable named it; one named twice is read where named last,
    # and is the variable's only if that naming is (review BR: the label had followed spelling)
    named: list[tuple[str | Path, bool]] = [(p, True) for p in env_paths(ENV_VAR) if use_env]
    named = last_naming([*named, *((p, False) for p in extra)], path=lambda item: item[0])
    from_env = {str(p) for p, by_env in named if by_env}
    links: dict[str, Link] = {}
    systems: dict[str, System] = {}
    storage: dict[str, Storage] = {}
    origins: list[str] = []
    docs: list[tuple[Document, _CatalogueFile]] = [_builtin()] if builtin else []
    unread: list[InputFileError] = []
    for path, by_env in named:
        try:
            # duplicate keys said with the schema's problems (validate), not in a run before
            doc = load_yaml(path, defer_duplicates=True)
            # a file's contents are the variable's too ('a cluster-design file, not a catalogue
            # file' had not said where the file came from: review BN)
            docs.append((doc, _parse(doc)))
        except InputFileError as exc:
            if by_env:
                for problem in exc.problems:
                    problem.message += f" (named by {ENV_VAR})"
            unread.append(exc)
    if unread:
        # every file's problems at once, as cost-parameter files say theirs (review CU 4: of
        # two missing files only the first had been named)
        if len(unread) == 1:
            raise unread[0]
        kinds = {type(exc) for exc in unread}
        kind = kinds.pop() if len(kinds) == 1 else InputFileError
        raise kind([problem for exc in unread for problem in exc.problems])
    origin_of: dict[str, str] = {}  # link id -> the file that defines it last
    for doc, parsed in docs:
        origins.append(doc.path)
        for link in parsed.links:
            links[link.id] = link
            origin_of[link.id] = doc.path
        for system in parsed.systems:
            systems[system.id] = system
        for entry in parsed.storage:
            storage[entry.id] = entry
    problems = _check_across_files(docs)
    broken: _Broken = {}
    for doc, parsed in docs:
        problems += _check_systems(doc, parsed.systems, links, origin_of, broken)
        problems += _check_pcie_hosts(doc, parsed.links, links)
    problems += _broken_problems(docs, links, broken)
    for problem in problems:
        # a file's problems with the other files' are the variable's too (review BP)
        if problem.path in from_env:
            problem.message += f" (named by {ENV_VAR})"
    if problems:
        raise CatalogueError(problems)
    # what Catalogue(...) makes of these, without building its schema (validation would take
    # the entries as they are and copy the lists, as list() does here)
    values = {
        "links": list(links.values()),
        "systems": list(systems.values()),
        "origins": origins,
        "storage": list(storage.values()),
    }
    return trusted(Catalogue, values)


def _holds(name: str, key: str) -> bool:
    """Whether ``name`` begins with ``key`` or holds it as one of its dash-separated words
    ('gb200' begins gb200-nvl72; 'h100' is a word of dgx-h100)."""
    return name.startswith(key) or f"-{key}-" in f"-{name}-"


def suggest(
    name: str, candidates: Iterable[str], n: int = 3, *, shortest_first: bool = False
) -> list[str]:
    """Closest names to ``name`` (difflib), for error hints; compatibility forms folded
    (full-width U+FF4E U+FF44 U+FF52 is ``ndr``), and none for an empty name (every name has it:
    ``links show ''`` had suggested nvlink1, nvlink2, nvlink3)."""
    key = folded(name)
    if len(key) < 2:
        # one letter is close to too many names ('links show r' had offered xdr, ndr, hdr)
        return []
    pool = list(dict.fromkeys(candidates))
    if not pool:
        # a catalogue with no systems (or no links): difflib refuses n = 0 (review CB)
        return []
    # a name that begins another, or is one of its dash-separated words, comes first ('gb200'
    # is gb200-nvl72's start, and difflib had ranked hgx-b200 above it), in the candidates'
    # order or, for catalogue names, the shortest first ('h100' had been offered
    # h100-pcie-nvl-pair, h100-pcie-8 and oci-h100 before dgx-h100, and 'a100' as a link
    # wan100g, efa-100g, wan10g, not nvlink-a100: review BL; a list in its own order, as the
    # element types, keeps it: 'fp' is fp16 first, not fp8, review BO)
    held = [c for c in pool if _holds(c, key)]
    starts = sorted(held, key=len) if shortest_first else held
    close = difflib.get_close_matches(key, pool, n=n, cutoff=0.5)
    if not close and len(key) >= 2:
        # nothing close: a name held in another (a3 in gcp-a3-mega); one letter is held in too
        # many ('--inter a' had listed three links with an 'a')
        close = [c for c in pool if key in c or c in key]
    return list(dict.fromkeys(starts + close))[:n]


def _suggest_entries(
    name: str, entries: Iterable[tuple[str, Sequence[str]]], n: int = 3
) -> list[str]:
    """Closest names to ``name``, at most one per entry (an id and its alias never both)."""
    owner: dict[str, str] = {}
    for entry_id, names in entries:
        for candidate in names:
            owner.setdefault(candidate, entry_id)
    picked: list[str] = []
    seen: set[str] = set()
    key = folded(name)
    for candidate in suggest(name, owner, n=len(owner), shortest_first=True):
        entry_id = owner[candidate]
        if entry_id not in seen:
            seen.add(entry_id)
            # the entry's id where it begins with the name ('gb200': gb200-nvl72, not its
            # shorter alias dgx-gb200); otherwise the closer alias ('ndr800': ndr400, not ndr)
            picked.append(entry_id if entry_id.startswith(key) else candidate)
    return picked[:n]


#: The link kinds each place of a cluster takes, and what to tell a user who gives another kind.
#: One table for the CLI flags, design files, ``gap`` and checkpoint's client link, so that a WAN
#: link given as --host-pcie is refused in the same words everywhere.
LINK_ROLES: dict[str, tuple[tuple[LinkKind, ...], str]] = {
    "intra": ((LinkKind.SCALE_UP, LinkKind.HOST), "use a scale-up or PCIe link"),
    # a WAN between nodes would skip the WAN model (buffers in flight per round trip)
    "inter": ((LinkKind.SCALE_OUT,), "use a scale-out link"),
    # gap compares a WAN's rate too, and prices its all-reduce across sites (gap.py)
    "gap_inter": ((LinkKind.SCALE_OUT, LinkKind.WAN), "use a scale-out or WAN link"),
    "wan": ((LinkKind.WAN, LinkKind.SCALE_OUT), "use a WAN or scale-out link"),
    "host_pcie": ((LinkKind.HOST,), "give the PCIe link the NICs sit on (e.g. pcie5)"),
    "client_link": ((LinkKind.SCALE_OUT, LinkKind.WAN), "use a scale-out or WAN link"),
}


def link_role_problem(link: Link, role: str, given: str | None = None) -> str | None:
    """``"wan-1g is a wan link; give the PCIe link the NICs sit on (e.g. pcie5)"`` when ``link``
    cannot serve as ``role`` (a key of :data:`LINK_ROLES`), else None. A WAN link is no
    ``inter``: nodes joined by one are sites (``--sites``, ``--wan``), whose model bounds the
    rate by NCCL's buffers in flight per round trip (docs/model.md#wan-sites). ``given``: the
    name the user gave, said beside the id where it is an alias (``nvlink-h100 (nvlink4)``)."""
    kinds, hint = LINK_ROLES[role]
    if link.kind in kinds:
        return None
    if link.kind is LinkKind.WAN and LinkKind.SCALE_OUT in kinds:
        hint += " (a WAN joins sites, not nodes)"
    name = link.id
    if given is not None and given.strip().lower() != link.id:
        name = f"{given.strip()} ({link.id})"
    return f"{name} is a {link.kind.value} link; {hint}"


def link_role_refusal(
    link: Link,
    role: str,
    field: str,
    given: str | None = None,
    kind: type[ClusterError] = ClusterError,
) -> ClusterError | None:
    """:func:`link_role_problem` as a ``kind`` of error naming ``field`` (``{inter} nvlink4 is a
    scale-up link; ...``), else None; its ``value`` is the name as the message begins with it
    (``given``, or the id where that is the name given), which the CLI quotes as typed."""
    problem = link_role_problem(link, role, given)
    if problem is None:
        return None
    named = (given or link.id).strip()
    value = named if named.lower() != link.id else link.id
    return kind(f"{{{field}}} {problem}", field=field, value=value)


def _expect_catalogue(catalogue: object) -> None:
    """A :class:`~ibcalc.errors.WrongTypeError` for a ``catalogue`` that is not one (None, or the
    name and the catalogue swapped, had failed on an attribute or listed the catalogue's repr as
    an unknown name; a review)."""
    expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")


def _name_key(what: str, name: object) -> str:
    """``name`` as the catalogue matches it (stripped, lower case); a name that is no text
    (None, a number) is refused as unknown rather than failing on ``.strip``."""
    if not isinstance(name, str):
        entry = entry_given(name)
        if entry is not None:
            raise WrongTypeError(f"the {what} {entry}")
        raise UnknownNameError(what, repr(name), [], close=False)
    return name.strip().lower()


#: What each catalogue's entries are called in an error: "dgx-h100 is a system preset, not a link".
_ENTRY_WORDS = {"link": "a link", "system": "a system preset", "storage": "a storage entry"}


def _name_list(key: str, entries: Sequence[Link | System], what: str, hint: str = "") -> str | None:
    """``"a list of 2 names, where one link is taken"`` where ``key`` is a comma list of names
    of ``entries`` (each a ``what``), else None: ``allreduce --fabric ndr,hdr`` had been answered
    "did you mean ndr, hdr?", the very list given."""
    parts = [part.strip() for part in key.split(",")]
    if len(parts) < 2 or not all(any(p in e.names for e in entries) for p in parts):
        return None
    return f"a list of {len(parts)} names, where one {what} is taken{hint}"


def _elsewhere(catalogue: Catalogue, key: str, what: str) -> str | None:
    """``"dgx-h100 is a system preset, not a link"`` (``"ndr is a scale-out link, not a system
    preset"``) where ``key``, unknown as a ``what``, names an entry of another catalogue
    (``links show dgx-h100`` had suggested ib-hdr100; ``storage show ndr`` had listed the
    storage), else None."""
    others: tuple[tuple[str, Sequence[Link | System | Storage]], ...] = (
        ("link", catalogue.links),
        ("system", catalogue.systems),
        ("storage", catalogue.storage),
    )
    for kind, entries in others:
        hit = next((e for e in entries if kind != what and key in e.names), None)
        if hit is not None:
            # a link says its kind, which tells the command line the option it goes to
            # ('--system ndr' had been told what ndr is, not where it goes)
            entry = f"a {hit.kind} link" if isinstance(hit, Link) else _ENTRY_WORDS[kind]
            return f"{hit.id} is {entry}, not {_ENTRY_WORDS[what]}"
    return None


#: Names a user may give for NCCL's socket transport, which no link models.
_SOCKET_NAMES = frozenset({"tcp", "socket", "sockets", "tcp-socket", "net-socket", "nccl-socket"})


def find_link(catalogue: Catalogue, name: str, *, role: str | None = None) -> Link:
    """Return the link with this id or alias (case-insensitive), or raise with suggestions;
    with a ``role`` of :data:`LINK_ROLES`, only links that role takes are suggested (a link of
    another kind named exactly is returned, for the caller's :func:`link_role_problem`)."""
    _expect_catalogue(catalogue)
    if role is not None:
        # a role that is none had raised KeyError, or been ignored where the name was found
        # (review CB); one of no hashable kind TypeError (review CD)
        expect_type(role, str, "role")
        if role not in LINK_ROLES:
            raise UnknownNameError("link role", role, list(LINK_ROLES), close=False)
    key = _name_key("link", name)
    for link in catalogue.links:
        if key in link.names:
            return link
    kinds = LINK_ROLES[role][0] if role is not None else tuple(LinkKind)
    # '--fabric h100' had suggested nvlink-h100, a link --fabric refuses
    entries = [(link.id, link.names) for link in catalogue.links if link.kind in kinds]
    every = [(link.id, link.names) for link in catalogue.links]
    # the hints read the name with compatibility forms folded, as find_system does (a
    # full-width dgx-h100 had been offered links, not called a system: review CJ)
    key = folded(key)
    # only a sweep takes several fabrics, and only scale-out ones
    sweep = " (ibcalc sweep takes a comma list of fabrics)" if role == "inter" else ""
    elsewhere = _name_list(key, catalogue.links, "link", sweep) or _elsewhere(
        catalogue, key, "link"
    )
    if key in _SOCKET_NAMES:
        # '--inter tcp' had suggested tcpx and tcpxo, Google's GPUDirect plugins, for a run on
        # NCCL's plain sockets (a published L40S pair with NCCL_IB_DISABLE=1; a review)
        elsewhere = (
            "NCCL's TCP socket transport (NET/Socket, as under NCCL_IB_DISABLE=1) is priced by "
            "no catalogue link; gcp-tcpx and gcp-tcpxo are Google's GPUDirect-TCPX(O) plugins, "
            "not sockets"
        )
    if elsewhere is None:
        elsewhere = _system_word(catalogue, key, entries, every)
    if elsewhere is not None:
        raise UnknownNameError("link", name, [], elsewhere=elsewhere)
    raise UnknownNameError(
        "link", name, _role_suggestions(key, entries, every), listing="ibcalc links"
    )


def _ratio(key: str, names: Iterable[str]) -> float:
    """difflib's best similarity of ``key`` to any of ``names`` (0 for none)."""
    return max((difflib.SequenceMatcher(None, key, n).ratio() for n in names), default=0.0)


#: How much closer (in difflib's ratio) a link of another kind must be than the role's closest
#: to be offered before it: 'wan-100' is 0.93 of wan-100g and 0.53 of efa-100g; a margin of a
#: fifth keeps near ties with the role's own links behind them (a policy; the suggestion tests
#: pin the cases it decides)
_CLOSER = 0.2


def _role_suggestions(
    key: str,
    entries: Sequence[tuple[str, Sequence[str]]],
    every: Sequence[tuple[str, Sequence[str]]],
) -> list[str]:
    """The role's links close to ``key``, after any link of another kind that begins with it,
    holds it as a word or is much closer (by a fifth of difflib's ratio) than the role's best:
    a slip of another kind's name is said so, and its kind refused once the name is right
    ('--fabric wan-100' had offered efa-100g, ainic-400g, roce-100g, not wan-100g; '--fabric
    tpu7x' tcpx and tcpxo, not tpu7x-ici: review BW)."""
    close = _link_suggestions(key, entries)
    held = any(_holds(c, key) for c in close)
    # a role link holding the name ('--intra a100': nvlink-a100) is the answer, however close
    # another kind's name is by ratio (wan100g)
    best = 1.0 if held else _ratio(key, close)
    other = [
        c
        for c in _link_suggestions(key, every)
        if not any(c in names for _, names in entries)
        and (_holds(c, key) or difflib.SequenceMatcher(None, key, c).ratio() >= best + _CLOSER)
    ]
    return list(dict.fromkeys(other + close))[:3] or _link_suggestions(key, every)


def _link_suggestions(key: str, entries: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """Links close to ``key``, a link named past a prefix first: 'ib-ndr400' is ndr400 (an alias
    of ndr) said as InfiniBand's, which difflib had ranked below ib-ndr200."""
    close = _suggest_entries(key, entries)
    for prefix in ("ib-", "infiniband-", "roce-", "rocev2-"):
        bare = key.removeprefix(prefix)
        hit = next((e for e, names in entries if bare != key and bare in names), None)
        if hit is not None:
            # the same link once: ndr, not also its alias ndr400
            same = next(names for e, names in entries if e == hit)
            return [hit, *(c for c in close if c not in same)][:3]
    return close


def _word_in(key: str, text: str) -> bool:
    """``key`` is a whole word of ``text`` (letters and digits; 'h100' in 'H100 SXM5 80GB' and
    in dgx-h100, not in 'gh100')."""
    return re.search(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])", text.lower()) is not None


#: difflib's ratio from which a name is taken for a slip of a link's name rather than a GPU's
#: ('nvlnk-h100' is 0.95 of nvlink-h100; 'b300-8' at most 0.62 of any link's)
_LINK_SLIP = 0.75


def _model_numbers(text: str) -> list[tuple[str, str]]:
    """The letter and digits of each model number in ``text``: 'hgx-b300' is ('b', '300'),
    'rtx5090-8' ('x', '5090')."""
    return re.findall(r"([a-z])([0-9]+)", text)


def _shares_digits(key: str, name: str) -> bool:
    """Whether a model number of ``key`` and one of ``name`` have the same letter and three
    digits in a row in common ('gb300' and hgx-b300, 'dgx-b3000' and dgx-b300, 'rtx4090' and
    rtx5090-8; not 'gb300' and mi300x-8: AMD's part for NVIDIA's, review BX)."""
    numbers = [(letter, digits) for letter, digits in _model_numbers(key) if len(digits) >= 3]
    if not numbers:
        # a short model number (p5, l40s, dgx-1v): the name's digits within the preset's, as
        # before (review BZ: 'p5a' and 'l40spcie' had lost p5 and l40s-pcie to the rule below)
        digits = "".join(c for c in key if c.isdigit())
        return bool(digits) and digits in name
    return any(
        la == lb and a[i : i + 3] in b
        for la, a in numbers
        for lb, b in _model_numbers(name)
        for i in range(len(a) - 2)
    )


def _system_word(
    catalogue: Catalogue,
    key: str,
    entries: Sequence[tuple[str, Sequence[str]]],
    every: Sequence[tuple[str, Sequence[str]]],
) -> str | None:
    """What to say of a GPU or system named where a link belongs: ``--fabric h100`` had
    suggested nvlink-h100, a scale-up link, and ``--fabric gb300`` xgmi-mi300x, an AMD link,
    where the user had named NVIDIA hardware. ``"h100 names a GPU or system, not a link (system
    presets with it: dgx-h100, ...)"`` where a preset's id, alias or GPU holds ``key``, or a
    dash-separated part of it, as a word ('b300-8': dgx-b300); ``"no link is close to gb300;
    close system presets: ..."`` where a preset's name is closer to it than any link's and
    shares its digits; else None (the link suggestions). ``entries`` are the links the role
    takes, ``every`` all links. Only names of three characters or more with a digit are taken
    for hardware ('--inter a' is no GPU, although abci2-a holds it as a word). No flag is named:
    ``links show`` and a design file have no ``--system`` (review BW)."""
    if len(key) < 3 or not any(ch.isdigit() for ch in key):
        return None
    if any(_word_in(key, n) for _, names in entries for n in names):
        return None  # a word of a link's name ('ndr', 'efa'): the link suggestions say more
    link_names = [n for _, names in every for n in names]
    # a dash-separated part names the GPU ('b300-8': dgx-b300) only where no link's name is
    # close to the whole: 'nvlnk-h100' is a slip of nvlink-h100, not the H100 (review BX), and
    # a part is not looked for in the GPU descriptions ('pie-gen4' had found the placeholder
    # 'generic PCIe Gen4 GPU')
    parts = [key]
    if _ratio(key, link_names) < _LINK_SLIP:
        parts += [p for p in key.split("-") if len(p) >= 3 and any(c.isdigit() for c in p)]
    holding = [s for s in catalogue.systems if any(_word_in(p, n) for p in parts for n in s.names)]
    holding += [s for s in catalogue.systems if s not in holding and _word_in(key, s.gpu)]
    if holding:
        ids = listed((s.id for s in holding), "preset", limit=3)
        preset = "system presets" if len(holding) > 1 else "a system preset"
        return f"{key} names a GPU or system, not a link ({preset} with it: {ids})"
    if any(_word_in(key, n) for _, names in every for n in names):
        # a word of a link of another kind ('--fabric mi250x': xgmi-mi250x): the suggestions
        # name it, and its kind is refused once given
        return None
    systems = [(s.id, s.names) for s in catalogue.systems]
    if _ratio(key, (n for _, names in systems for n in names)) > _ratio(key, link_names):
        # only presets whose number shares three digits with the name's ('gb300': hgx-b300;
        # 'dgx-b3000': dgx-b300; 'rtx4090': rtx5090-8), not any close name ('b300-8' had been
        # offered mi300x-8, h800-8, a800-8; 'cornelis400' snellius-h100)
        close = [c for c in _suggest_entries(key, systems) if _shares_digits(key, c)]
        if close:
            return f"no link is close to {key}; close system presets: {', '.join(close)}"
    return None


def find_system(catalogue: Catalogue, name: str) -> System:
    """Return the system preset with this id or alias, or raise with suggestions."""
    _expect_catalogue(catalogue)
    key = _name_key("system", name)
    for system in catalogue.systems:
        if key in system.names:
            return system
    entries = [(system.id, system.names) for system in catalogue.systems]
    # the hints read the name as suggest() does, compatibility forms folded (full-width h200
    # had kept difflib's offers, review CH; full-width ndr had not been called a link, review CI)
    key = folded(key)
    # systems show ndr had suggested ndv5
    elsewhere = _name_list(key, catalogue.systems, "system") or _elsewhere(catalogue, key, "system")
    if elsewhere is not None:
        raise UnknownNameError("system", name, [], elsewhere=elsewhere)
    worded = _gpu_word_systems(catalogue, key)
    owner = {n: system.id for system in catalogue.systems for n in system.names}
    close = _suggest_entries(key, entries)
    # the presets a name holds whole first ('h100-8': bm-gpu-h100-8), then those its parts
    # point at (dgx-h100 ...; difflib had filled the list with h800-8 and h20-8: review CD)
    names = {system.id: system.names for system in catalogue.systems}
    holders = [c for c in close if any(_holds(n, key) for n in names[owner[c]])]
    worded = [w for w in worded if w not in {owner[c] for c in holders}]
    close = [c for c in close if c not in holders and owner[c] not in worded]
    offered = [*holders, *worded, *close][:3]
    # no preset is close, but a link holds the name: said so ('systems show tpu-v5p' had only
    # sent the reader to the list, which has no TPU, while tpu-v5p-ici is a link)
    links = [link.id for link in catalogue.links if any(_holds(n, key) for n in link.names)]
    if not offered and links:
        held = (
            f"{links[0]} is a link"
            if len(links) == 1
            else f"links with the name: {listed(links, 'link', limit=3)}"
        )
        elsewhere = f"no system preset is close (ibcalc systems lists them); {held}"
        raise UnknownNameError("system", name, [], elsewhere=elsewhere)
    raise UnknownNameError("system", name, offered, listing="ibcalc systems")


def _gpu_word_systems(catalogue: Catalogue, key: str) -> list[str]:
    """Presets a name of hardware points at by its parts ('h200-8': hgx-h200; 'h100-sxm5':
    dgx-h100; 'sxm5-node': the H100 SXM5 servers): a model part (three characters or more, with
    a digit, not a memory size) that is a word of a preset's names or GPU. Ranked by the model
    parts held, then the other words held ('pcie'), then the memory sizes ('80gb', '40 GB' in
    the GPU's description), those naming a model in their id or aliases before those whose GPU
    alone does, then the catalogue's order. difflib alone had offered h20-8, h800-8 and a800-8
    for 'h200-8' and mi355x-node for 'sxm5-node'; a name with no model part ('dgx-h1000') is
    left to it. :func:`find_system` puts the presets whose names hold the name whole first."""
    words = [p for p in key.split("-") if len(p) >= 3]
    # a memory size ('80gb', '141g') is no model: H100 SXM5 80GB is not an A800's (review CD:
    # 'a800-80gb' had offered dgx-h100 second)
    models = [p for p in words if any(c.isdigit() for c in p) and not _MEMORY().match(p)]
    # a word without a digit ('pcie', 'sxm') or a memory size only orders presets a model part
    # found ('h100-pcie' is the PCIe card before the SXM server: review CD; 'a100-sxm4-80gb' the
    # 80 GB p4de before the 40 GB p4d: review CF); alone it finds none ('node')
    others = [p for p in words if p not in models and not _MEMORY().match(p)]
    sizes = [p for p in words if _MEMORY().match(p)]
    ranked: list[tuple[int, int, int, int, int, str]] = []
    for i, system in enumerate(catalogue.systems):
        # '40 GB' in a GPU's description is 40gb ('A100 SXM4 (40 GB or 80 GB)': review CG)
        gpu = re.sub(r"(\d)\s+(gib|gb)\b", r"\1\2", system.gpu.lower())

        def held(part: str, system: System = system, gpu: str = gpu) -> bool:
            return any(_word_in(part, n) for n in system.names) or _word_in(part, gpu)

        found = [p for p in models if held(p)]
        if not found:
            continue
        in_names = any(_word_in(p, n) for p in found for n in system.names)
        also = sum(held(p) for p in others)
        memory = sum(held(p) for p in sizes)
        ranked.append((-len(found), -also, -memory, 0 if in_names else 1, i, system.id))
    return [entry for *_, entry in sorted(ranked)]


#: A dash-separated part that is a memory size (``80gb``, ``141g``, ``96gib``), not a model.
_MEMORY = lazy_pattern(r"^\d+(?:gb|g|gib)$")


def find_storage(catalogue: Catalogue, name: str) -> Storage:
    """Return the storage entry with this id or alias, or raise with suggestions."""
    _expect_catalogue(catalogue)
    key = _name_key("storage", name)
    for entry in catalogue.storage:
        if key in entry.names:
            return entry
    entries = [(entry.id, entry.names) for entry in catalogue.storage]
    elsewhere = _elsewhere(catalogue, key, "storage")
    if elsewhere is not None:
        # the short storage catalogue listed too, as for any other unknown name (a review)
        known = ", ".join(e.id for e in catalogue.storage)
        raise UnknownNameError("storage", name, [], elsewhere=f"{elsewhere} (storage: {known})")
    # the storage catalogue is short: with no close name, list it all (a link id such as ndr
    # is a likely slip: the client link is --storage-link)
    close = _suggest_entries(key, entries)
    if close:
        raise UnknownNameError("storage", name, close)
    raise UnknownNameError("storage", name, [e.id for e in catalogue.storage], close=False)
