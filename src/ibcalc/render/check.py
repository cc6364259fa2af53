"""Rendering of ``ibcalc check`` and ``ibcalc design show``: text, JSON, GitHub, JUnit.

Plain strings only (no rich), so that CI logs and files stay byte-stable. Writers of files go
through :func:`write_atomic` (temp file in the target directory, then rename).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ibcalc.design.check import (
    DESIGN_KEYS,
    DesignCheck,
    Finding,
    ResolvedDesign,
    cluster_bandwidths,
    format_quantity,
)
from ibcalc.errors import ValidationProblem, fill_fields
from ibcalc.units import BITS_PER_BYTE, format_bandwidth, gbps_from_Bps

__all__ = [
    "FORMATS",
    "FileOutcome",
    "design_dict",
    "exit_code",
    "render_check",
    "render_design_json",
    "render_design_text",
    "render_github",
    "render_json",
    "render_junit",
    "render_text",
    "schema_text",
    "write_atomic",
]

#: Output formats of ``ibcalc check``.
FORMATS = ("text", "json", "github", "junit")
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class FileOutcome:
    """One file given to ``ibcalc check``: its checked design, or the problems that stopped it."""

    path: str
    check: DesignCheck | None = None
    problems: list[ValidationProblem] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        """Findings of the file (empty when it could not be checked)."""
        return self.check.findings if self.check is not None else []


def _counts(outcomes: Sequence[FileOutcome]) -> tuple[int, int, int, int]:
    findings = [f for o in outcomes for f in o.findings]
    failed = sum(not f.passed for f in findings)
    errors = sum(bool(o.problems) for o in outcomes)
    return len(findings), len(findings) - failed, failed, errors


def exit_code(outcomes: Sequence[FileOutcome]) -> int:
    """2 if any file could not be checked, else 1 if any requirement failed, else 0."""
    _, _, failed, errors = _counts(outcomes)
    if errors:
        return 2
    return 1 if failed else 0


def _where(path: str, line: int | None, col: int | None) -> str:
    return f"{path}:{line}:{col or 1}" if line is not None else path


def _summary(outcomes: Sequence[FileOutcome]) -> str:
    total, passed, failed, errors = _counts(outcomes)
    files = len(outcomes)
    text = (
        f"{total} requirement{'s' if total != 1 else ''} in {files} file{'s' if files != 1 else ''}"
        f": {passed} passed, {failed} failed"
    )
    if errors:
        text += f"; {errors} file{'s' if errors != 1 else ''} could not be checked"
    return text


def _header(check: DesignCheck) -> str:
    cluster = check.resolved.cluster
    system = f", {cluster.system.id}" if cluster.system is not None else ""
    links = " / ".join(x.id for x in (cluster.intra, cluster.inter) if x is not None)
    return (
        f"{check.path}: {check.design.name} ({cluster.nodes} nodes x {cluster.gpus_per_node} "
        f"GPUs{system}; {links})"
    )


def _line(f: Finding) -> str:
    word = "PASS" if f.passed else "FAIL"
    return (
        f"{word}  {_where(f.file, f.line, f.col)}  {f.requirement}  "
        f"predicted {format_quantity(f.predicted, f.unit)}  margin {f.margin:+.1%}"
    )


def render_text(outcomes: Sequence[FileOutcome]) -> str:
    """One line per requirement target (PASS/FAIL, predicted vs required, margin), a summary.

    Returns "" when no file could be checked (the errors go to stderr).
    """
    if all(o.check is None for o in outcomes):
        return ""
    lines: list[str] = []
    for outcome in outcomes:
        if outcome.check is None:
            continue
        lines.append(_header(outcome.check))
        for f in outcome.findings:
            lines.append(_line(f))
            if not f.passed:
                lines.append(f"      {f.message}")
        if not outcome.findings:
            lines.append("      (no requirements)")
    lines.append(_summary(outcomes))
    return "\n".join(lines) + "\n"


def _problem_dict(p: ValidationProblem) -> dict[str, Any]:
    return {"file": p.path, "line": p.line, "col": p.col, "message": p.message}


def render_json(outcomes: Sequence[FileOutcome]) -> str:
    """Every finding and file problem as JSON (keys keep their meaning across versions)."""
    total, passed, failed, errors = _counts(outcomes)
    files = []
    for outcome in outcomes:
        entry: dict[str, Any] = {"file": outcome.path}
        if outcome.check is not None:
            cluster = outcome.check.resolved.cluster
            entry.update(
                design=outcome.check.design.name,
                nodes=cluster.nodes,
                gpus_per_node=cluster.gpus_per_node,
                passed=outcome.check.passed,
            )
        entry["findings"] = [
            {
                **asdict(f),
                "predicted_text": format_quantity(f.predicted, f.unit),
                "required_text": format_quantity(f.required, f.unit),
            }
            for f in outcome.findings
        ]
        entry["errors"] = [_problem_dict(p) for p in outcome.problems]
        files.append(entry)
    data = {
        "passed": exit_code(outcomes) == 0,
        "exit_code": exit_code(outcomes),
        "summary": {
            "requirements": total,
            "passed": passed,
            "failed": failed,
            "files": len(outcomes),
            "files_with_errors": errors,
        },
        "files": files,
    }
    return json.dumps(data, indent=2) + "\n"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _gh_command(
    kind: str, path: str, line: int | None, col: int | None, title: str, msg: str
) -> str:
    props = [f"file={_gh_prop(path)}"]
    if line is not None:
        props += [f"line={line}", f"col={col or 1}"]
    props.append(f"title={_gh_prop(title)}")
    return f"::{kind} {','.join(props)}::{_gh_data(msg)}"


def render_github(outcomes: Sequence[FileOutcome]) -> str:
    """GitHub Actions workflow commands: ``::error`` for failures and bad files, PASS lines."""
    lines: list[str] = []
    for outcome in outcomes:
        for p in outcome.problems:
            lines.append(
                _gh_command("error", p.path, p.line, p.col, "ibcalc: invalid design", p.message)
            )
        for f in outcome.findings:
            if f.passed:
                lines.append(_line(f))
            else:
                lines.append(
                    _gh_command(
                        "error",
                        f.file,
                        f.line,
                        f.col,
                        f"ibcalc check: {f.requirement}",
                        f"{f.design}: {f.message}",
                    )
                )
    lines.append(_summary(outcomes))
    return "\n".join(lines) + "\n"


def _xml_text(text: str) -> str:
    return _XML_INVALID.sub("?", text)


def render_junit(outcomes: Sequence[FileOutcome]) -> str:
    """JUnit XML: a testsuite per file, a testcase per requirement target."""
    total, _, failed, errors = _counts(outcomes)
    root = ET.Element(
        "testsuites",
        name="ibcalc check",
        tests=str(total + errors),
        failures=str(failed),
        errors=str(errors),
    )
    for outcome in outcomes:
        findings = outcome.findings
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml_text(outcome.path),
            tests=str(len(findings) + (1 if outcome.problems else 0)),
            failures=str(sum(not f.passed for f in findings)),
            errors=str(1 if outcome.problems else 0),
            skipped="0",
        )
        for f in findings:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=_xml_text(f"ibcalc.{f.design}"),
                name=_xml_text(f.requirement),
                file=_xml_text(f.file),
            )
            if f.line is not None:
                case.set("line", str(f.line))
            if f.passed:
                ET.SubElement(case, "system-out").text = _xml_text(f.message)
            else:
                failure = ET.SubElement(case, "failure", message=_xml_text(f.message), type="FAIL")
                failure.text = _xml_text(f"{_where(f.file, f.line, f.col)}: {f.message}")
        if outcome.problems:
            case = ET.SubElement(
                suite,
                "testcase",
                classname="ibcalc.load",
                name=_xml_text(f"read and validate {outcome.path}"),
                file=_xml_text(outcome.path),
            )
            error = ET.SubElement(
                case, "error", message=_xml_text(str(outcome.problems[0])), type="InputFileError"
            )
            error.text = _xml_text("\n".join(str(p) for p in outcome.problems))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def render_check(outcomes: Sequence[FileOutcome], fmt: str) -> str:
    """Render outcomes in one of :data:`FORMATS`."""
    renderers = {
        "text": render_text,
        "json": render_json,
        "github": render_github,
        "junit": render_junit,
    }
    return renderers[fmt](outcomes)


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same directory and a rename.

    Readers never see a half-written file; on error the temp file is removed and the target is
    left as it was. A new file gets the umask's permissions, an existing one keeps its mode.
    Raises OSError.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with tmp.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        if target.exists():
            shutil.copymode(target, tmp)
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def schema_text(schema: dict[str, Any]) -> str:
    """The JSON Schema as written to ``examples/ibcalc-design.schema.json``."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _tbps(bw_Bps: float) -> str:
    return f"{gbps_from_Bps(bw_Bps) * BITS_PER_BYTE / 1000:.4g} Tb/s"


def _gbit(bw_Bps: float) -> str:
    return f"{gbps_from_Bps(bw_Bps) * BITS_PER_BYTE:.4g} Gb/s"


def design_dict(resolved: ResolvedDesign) -> dict[str, Any]:
    """The JSON object of ``ibcalc design show``: cluster tiers, gap, fabric sizing."""
    cluster = resolved.cluster
    bws = cluster_bandwidths(cluster)
    data: dict[str, Any] = {
        "file": resolved.path,
        "design": resolved.design.name,
        "nodes": cluster.nodes,
        "gpus_per_node": cluster.gpus_per_node,
        "gpus": cluster.ranks,
        "system": cluster.system.id if cluster.system is not None else None,
        "intra": cluster.intra.id if cluster.intra is not None else None,
        "inter": cluster.inter.id if cluster.inter is not None else None,
        "nics_per_node": cluster.nics_per_node,
        "bandwidths_per_direction": {
            "gpus_per_domain": bws.gpus_per_domain,
            "domains": bws.domains,
            "scale_up_line_per_gpu_Bps": bws.up_line_Bps,
            "scale_up_per_gpu_Bps": bws.up_Bps,
            "nvls_per_gpu_Bps": bws.nvls_Bps,
            "nic_line_Bps": bws.nic_line_Bps,
            "nic_Bps": bws.nic_Bps,
            "nics_per_domain": bws.nics_per_domain,
            "scale_out_line_per_gpu_Bps": bws.out_line_per_gpu_Bps,
            "scale_out_per_gpu_Bps": bws.out_per_gpu_Bps,
        },
        "gap": bws.gap,
        "bottleneck": bws.bottleneck,
        "sharp": cluster.topology.out.sharp if cluster.topology.out is not None else False,
        "oversubscription": resolved.oversubscription,
        "assumptions": [
            fill_fields(n, DESIGN_KEYS) for n in (*cluster.assumptions, *resolved.notes)
        ],
    }
    fab = resolved.fabric
    if fab is None:
        data["fabric"] = None
    else:
        data["fabric"] = {
            "switch": resolved.switch.id if resolved.switch is not None else None,
            "switch_source": resolved.switch.source if resolved.switch is not None else None,
            "radix": fab.radix,
            "tiers": fab.tiers,
            "rail_optimized": fab.rail_optimized,
            "scalable_units": fab.scalable_units,
            "su_nodes": fab.su_nodes,
            "leaf_down_ports": fab.leaf_down,
            "leaf_up_ports": fab.leaf_up,
            "oversubscription_per_tier": list(fab.oversubscription),
            "leaf_switches": fab.leaf_switches,
            "spine_switches": fab.spine_switches,
            "core_switches": fab.core_switches,
            "total_switches": fab.total_switches,
            "node_leaf_cables": fab.node_leaf_cables,
            "leaf_spine_cables": fab.leaf_spine_cables,
            "spine_core_cables": fab.spine_core_cables,
            "total_cables": fab.total_cables,
            "switch_transceivers": fab.switch_transceivers,
            "node_transceivers": fab.node_transceivers,
            "bisection_per_direction_Bps": fab.bisection_Bps,
            "notes": list(fab.notes),
        }
    return data


def render_design_json(resolved: ResolvedDesign) -> str:
    """``ibcalc design show --format json``."""
    return json.dumps(design_dict(resolved), indent=2) + "\n"


def _bw(value: float | None) -> str:
    return format_bandwidth(value) if value is not None else "-"


def render_design_text(resolved: ResolvedDesign) -> str:
    """``ibcalc design show``: the resolved cluster, then the fabric sizing."""
    cluster = resolved.cluster
    bws = cluster_bandwidths(cluster)
    out = cluster.topology.out
    lines = [f"design {resolved.design.name} ({resolved.path})"]
    system = f" ({cluster.system.id})" if cluster.system is not None else ""
    lines.append(
        f"cluster: {cluster.nodes} nodes x {cluster.gpus_per_node} GPUs = {cluster.ranks} GPUs"
        + system
    )
    lines.append("  per GPU, per direction:")
    if bws.up_line_Bps is not None and cluster.intra is not None:
        nvls = f", NVLS {_bw(bws.nvls_Bps)}" if bws.nvls_Bps is not None else ""
        lines.append(
            f"    scale-up   {cluster.intra.id}, {bws.gpus_per_domain} GPUs per domain: "
            f"{_bw(bws.up_line_Bps)} line, {_bw(bws.up_Bps)} achievable{nvls}"
        )
    if out is not None and cluster.inter is not None:
        lines.append(
            f"    scale-out  {cluster.inter.id}, {bws.domains} domains x {bws.nics_per_domain} "
            f"NICs: {_bw(bws.out_line_per_gpu_Bps)} line, {_bw(bws.out_per_gpu_Bps)} achievable "
            f"(per NIC {_bw(bws.nic_line_Bps)} line, {_bw(bws.nic_Bps)} achievable)"
        )
    if bws.gap is not None:
        lines.append(f"  gap (scale-up / scale-out line rate per GPU): {bws.gap:.3g}x")
    lines.append(f"  bottleneck: {bws.bottleneck}")
    sharp = out.sharp if out is not None else False
    lines.append(
        f"  SHARP {'on' if sharp else 'off'}; oversubscription fed to the engine "
        f"{resolved.oversubscription:.3g}:1"
    )
    fab = resolved.fabric
    if fab is None:
        lines.append("fabric: not sized (give fabric.switch or fabric.radix)")
    else:
        switch = (
            f"{resolved.switch.id} as {fab.radix} x {_gbit(fab.port_Bps)} ports"
            if resolved.switch is not None and fab.port_Bps is not None
            else f"radix {fab.radix}"
        )
        levels = f"{fab.tiers} switch level{'s' if fab.tiers != 1 else ''}"
        rail = ", rail-optimized" if fab.rail_optimized else ""
        lines.append(f"fabric: fat tree, {levels}, {switch}{rail}")
        if fab.scalable_units is not None and fab.su_nodes is not None:
            lines.append(
                f"  scalable units: {fab.scalable_units} x {fab.su_nodes} nodes "
                f"({fab.rails} leaves per SU)"
            )
        if fab.tiers > 1:
            ratios = ", ".join(f"{r:.3g}:1" for r in fab.oversubscription)
            lines.append(
                f"  leaf ports: {fab.leaf_down} down / {fab.leaf_up} up; down:up per tier {ratios}"
            )
        lines.append(
            f"  switches: {fab.leaf_switches} leaf + {fab.spine_switches} spine + "
            f"{fab.core_switches} core = {fab.total_switches}"
        )
        lines.append(
            f"  cables: {fab.node_leaf_cables} node-leaf + {fab.leaf_spine_cables} leaf-spine + "
            f"{fab.spine_core_cables} spine-core = {fab.total_cables}"
        )
        sw = (
            f"{fab.switch_transceivers} switch (occupied cages)"
            if fab.switch_transceivers is not None
            else "switch: cage layout unknown"
        )
        node = (
            f", {fab.node_transceivers} node" if fab.node_transceivers is not None else ", node: -"
        )
        lines.append(f"  transceivers: {sw}{node}")
        if fab.bisection_Bps is not None:
            lines.append(
                f"  bisection: {format_bandwidth(fab.bisection_Bps)} per direction "
                f"({_tbps(fab.bisection_Bps)})"
            )
        lines.extend(f"  - {note}" for note in fab.notes)
    notes = [fill_fields(n, DESIGN_KEYS) for n in (*cluster.assumptions, *resolved.notes)]
    if notes:
        lines.append("assumptions:")
        lines.extend(f"  - {note}" for note in notes)
    return "\n".join(lines) + "\n"
