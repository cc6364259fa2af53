"""NCCL releases: the tuner constants of the release a user runs, laid over NCCL's tuner view.

``data/nccl_releases.yaml`` lists, for each NCCL release ibcalc has read, the tuner constants
that differ from NCCL 2.30.7's (which ``data/cost_params.yaml`` restates). :func:`for_release`
picks the nearest read release at or before the one given and lays its cells over the *tuner
view* of a :class:`~ibcalc.engine.params.CostParams` only: NCCL's choice of algorithm and
protocol follows that release, while the physical times keep 2.30.7's hops, since a tuner
constant is NCCL's estimate, not the hardware's time
(docs/model.md#tuner-constants-across-releases).

The release applied is recorded in the parameters' ``origins``, which every estimate lists among
its assumptions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ibcalc.engine.params import SCHEMA, CostParams, release_predates
from ibcalc.engine.types import Algorithm
from ibcalc.errors import FieldError, expect_type
from ibcalc.textsafe import shown
from ibcalc.yamlio import shipped_data

__all__ = [
    "RELEASE_NOTE_START",
    "Release",
    "for_release",
    "for_stated_release",
    "introduced",
    "nccl_release",
    "newest",
    "newest_release",
    "older_than_compared",
    "oldest",
    "oldest_compared",
    "parse_release",
    "releases",
]

#: NCCL's release numbers as logs and tags write them: ``2.21.5``, ``2.22.3+cuda12.4``, the git
#: tag ``v2.18.3-1`` (its "v" had been refused, while the log parser and ``2.18.3-1`` took it)
_VERSION = re.compile(
    r"^\s*[vV]?(\d{1,2})\.(\d{1,3})(?:\.(\d{1,3}))?(?:[-+][\w.+-]+)?\s*$", re.ASCII
)
#: A version given without its patch number stands for every patch of that release line: the
#: nearest read release at or before its last patch applies.
_ANY_PATCH = 999


@dataclass(frozen=True)
class Release:
    """One read NCCL release: its version, the source and the tuner-view cells it changes."""

    version: tuple[int, int, int]
    source: str
    tuner_view: Mapping[str, Any]
    not_modelled: tuple[str, ...]

    @property
    def name(self) -> str:
        """``2.21.5``."""
        return _dotted(self.version)


#: How every label :func:`for_release` lays over the cost parameters begins (``NCCL 2.21.5: ...``),
#: so that an estimate can tell a named release from the default one
RELEASE_NOTE_START = "NCCL "


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in version)


def parse_release(text: str) -> tuple[int, int, int]:
    """``(major, minor, patch)`` of ``2.21.5``, ``2.22.3+cuda12.4`` or ``2.21`` (every patch);
    a one-line :class:`~ibcalc.errors.FieldError` (field ``nccl_version``) otherwise, which
    names the field as ``{nccl_version}`` before the text quoted, as a refusal of any option's
    value does (``--nccl-version '2.x' is not ...`` on the command line, with its ``--help``
    hint, which 'NCCL version' had gone without)."""
    match = _VERSION.match(text)
    # the text quoted as written (textsafe.shown): repr had doubled a backslash ('2\\21') and
    # put a text holding a quote in double quotes
    if match is None:
        raise FieldError(
            f"{{nccl_version}} {shown(text, 40)} is not a release number such as 2.21.5 or 2.21",
            field="nccl_version",
        )
    major, minor, patch = match.groups()
    if int(major) < 2:
        # NCCL 1.x was a single-node library; 2.0 (2017) added the network transports
        raise FieldError(
            f"{{nccl_version}} {shown(text.strip())}: ibcalc models NCCL 2.0 and later",
            field="nccl_version",
        )
    if int(major) > 2:
        # no NCCL 3 exists; a ROCm or RCCL package number (6.2.0) had passed as a NCCL "newer
        # than 2.30.7"
        raise FieldError(
            f"{{nccl_version}} {shown(text.strip())}: NCCL releases are 2.x; a ROCm or RCCL "
            "package number is not one (RCCL reports a 2.x version: rccl-tests prints "
            "'rccl-library=22707' for 2.27.7)",
            field="nccl_version",
        )
    return int(major), int(minor), int(patch) if patch is not None else _ANY_PATCH


@functools.cache
def _data() -> Mapping[str, Any]:
    text = resources.files("ibcalc").joinpath("data", "nccl_releases.yaml").read_text("utf-8")
    data: Mapping[str, Any] = shipped_data("nccl_releases.yaml", text)
    return data


def newest() -> tuple[int, int, int]:
    """The newest release read (``newest`` in ``data/nccl_releases.yaml``): the one whose
    constants ``data/cost_params.yaml`` restates."""
    return parse_release(str(_data()["newest"]))


def newest_release() -> str:
    """:func:`newest` as its number, ``2.30.7``: the release whose tuner an estimate follows
    where none is named."""
    return _dotted(newest())


def oldest() -> tuple[int, int, int]:
    """The oldest release read."""
    return releases()[0].version


@functools.cache
def releases() -> tuple[Release, ...]:
    """The read releases, oldest first (``data/nccl_releases.yaml``)."""
    data = _data()
    out = []
    for entry in data["releases"]:
        version = parse_release(str(entry["release"]))
        out.append(
            Release(
                version=version,
                source=str(entry["source"]),
                tuner_view=entry["tuner_view"] or {},
                not_modelled=tuple(entry["not_modelled"] or ()),
            )
        )
    return tuple(sorted(out, key=lambda r: r.version))


@functools.cache
def introduced() -> Mapping[Algorithm, tuple[tuple[int, int, int], str]]:
    """The release that added each later algorithm, with its source (``introduced``)."""
    return {
        Algorithm(name): (parse_release(str(entry["release"])), str(entry["source"]))
        for name, entry in _data()["introduced"].items()
    }


def _absent(wanted: tuple[int, int, int], shown: str) -> dict[str, Any]:
    """The ``nccl_tuner.algorithms`` override entry of the algorithms release ``wanted``
    predates, each with the release notes that added it ({} when it has them all)."""
    missing = {a: v for a, v in introduced().items() if wanted < v[0]}
    if not missing:
        return {}
    source = release_predates(
        shown, {a.value: (_dotted(version), notes) for a, (version, notes) in missing.items()}
    )
    return {"source": source, "value": {a.value: 0 for a in missing}}


def _with_source(groups: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The release's cells as override entries, each with the release's source."""
    return {
        group: {name: {**entry, "source": source} for name, entry in entries.items()}
        for group, entries in groups.items()
    }


def for_release(params: CostParams, version: str) -> CostParams:
    """``params`` with the tuner constants of NCCL ``version`` laid over its tuner view.

    The nearest read release at or before ``version`` applies; before the oldest read one, and
    after the newest, the built-in (2.30.7) constants stay, and the label says so. The label,
    in the result's ``origins``, is what an estimate lists among its assumptions. The library's
    form of the command line's ``--nccl-version`` (an estimate's ``{nccl_version}`` mark):
    ``estimate_on(..., params=for_release(load_cost_params(), "2.21.5"))``.
    """
    expect_type(params, CostParams, "params", "ibcalc.load_cost_params() makes one")
    expect_type(version, str, "version")
    wanted = parse_release(version)
    known, last = releases(), newest()
    # as the release's number, not its tag ("NCCL v2.18.3-1: ..." had read oddly)
    number, builtin = version.strip().lstrip("vV"), _dotted(last)
    overlay: dict[str, Any] = {}
    if wanted < known[0].version:
        label = (
            f"NCCL {number} is older than {known[0].name}, the oldest release whose tuner "
            f"constants ibcalc has read: NCCL {builtin}'s are used; runs of releases this old "
            "are predicted worse (held out: docs/model.md#accuracy-by-nccl-release)"
        )
    elif (wanted[:2] > last[:2]) if wanted[2] == _ANY_PATCH else (wanted > last):
        label = (
            f"NCCL {number} is newer than {builtin}, the newest release whose tuner constants "
            "ibcalc has read: those are used"
        )
    else:
        release = [r for r in known if r.version <= wanted][-1]
        if not release.tuner_view:
            label = (
                f"NCCL {number}: NCCL {builtin}'s tuner constants (unchanged since {release.name})"
            )
        else:
            label = (
                f"NCCL {number}: algorithm and protocol chosen with NCCL {release.name}'s tuner "
                f"constants ({release.source}); times keep {builtin}'s hops"
            )
            if release.not_modelled:
                label += "; not modelled: " + "; ".join(release.not_modelled)
            overlay = _with_source(release.tuner_view, release.source)
    absent = _absent(wanted, number)
    if absent:
        label += f"; without {', '.join(absent['value'])} (added in later releases)"
        overlay.setdefault("nccl_tuner", {})["algorithms"] = absent
    if not overlay:
        return params.with_overrides({"schema": SCHEMA}, label=label)
    return params.with_overrides({"schema": SCHEMA, "tuner_view": overlay}, label=label)


def for_stated_release(params: CostParams, version: str | None, library: str | None) -> CostParams:
    """:func:`for_release` for a run that states its library and release (a log, a published
    sweep): ``params`` itself for RCCL, whose releases are not NCCL's, and when no release
    number is given."""
    if library == "rccl" or version is None:
        return params
    try:
        return for_release(params, version)
    except FieldError:  # a version string that is not a release number
        return params


def nccl_release(version: str | None) -> tuple[int, int] | None:
    """``(major, minor)`` of a version string such as ``2.8.4`` or ``2.22.3+cuda12.4``; None when
    it does not start with two numbers."""
    match = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def oldest_compared() -> tuple[int, int]:
    """``(major, minor)`` of the oldest NCCL release whose tuner constants the model was
    compared with: the oldest in ``data/nccl_releases.yaml`` (docs/model.md, "Tuner constants
    across releases"). Older releases chose algorithms and protocols with other constants."""
    major, minor, _patch = oldest()
    return major, minor


def older_than_compared(version: str | None) -> bool:
    """True for an NCCL release older than :func:`oldest_compared`."""
    release = nccl_release(version)
    return release is not None and release < oldest_compared()
