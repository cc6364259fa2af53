"""Design files: validation with file:line:col, resolution, findings, and the ``check`` CLI.

Expected numbers are sourced or hand-worked in the comments (public sources; docs/model.md,
docs/design-files.md#fabric-sizing); collective times are compared against the engine called
directly (the check must report what the engine predicts) and against hand-worked lower bounds.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import main_error
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import main
from ibcalc.cluster.bandwidths import per_gpu_bandwidths
from ibcalc.cluster.resolve import ClusterSpec
from ibcalc.design.check import (
    check_design,
    evaluate,
    json_schema,
    load_design,
    resolve_design,
)
from ibcalc.engine.types import Collective
from ibcalc.errors import InputFileError
from ibcalc.facade import estimate
from ibcalc.render.check import finding_message

GB = 10**9
NDR_Bps = 400 * GB / 8  # NDR 400 Gb/s per direction (IBTA rate, Linux kernel IB speed table)
NVLINK4_Bps = 18 * 25 * GB  # 450 GB/s per GPU per direction (NVIDIA Hopper page)

SU_DESIGN = """\
name: su
nodes: 31
system: dgx-h100
fabric:
  switch: qm9700
  extra_endpoints: 4
requirements:
  - allreduce: {size: 10GB, max_time: 1s}
  - gap: {max_ratio: 12}
  - oversubscription: {max: 1}
  - switches: {max: 12}
"""


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``ibcalc ARGS`` in-process; return (exit code, stdout, stderr)."""
    code: int = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- validation --------------------------------------------------------------------------------


def test_units_are_parsed() -> None:
    text = """\
name: units
nodes: 4
system: dgx-h100
fabric: {switch: qm9700, oversubscription: "3:1"}
requirements:
  - allgather: {size: 4GiB, min_busbw: 400Gb/s, min_algbw: 1GB/s, max_time: 250us}
"""
    design, _ = load_design("units.yaml", text=text)
    target = design.requirements[0].allgather
    assert target is not None
    assert target.size == 4 * 2**30
    assert target.min_busbw == 400 * GB / 8
    assert target.min_algbw == GB
    assert target.max_time == pytest.approx(250e-6)
    assert design.fabric is not None
    assert design.fabric.oversubscription == (3.0,)


def test_every_problem_is_reported_at_once(locate: Callable[..., tuple[int, int]]) -> None:
    text = """\
name: bad
nodes: 0
sytem: dgx-h100
fabric:
  switch: qm970
  oversubscription: 0.5
requirements:
  - allredcue: {size: 10GB, max_time: 40ms}
  - allgather: {size: 4GB}
  - alltoall: {size: 10Gb, max_time: 25ms}
  - gap: {max_ratio: 12}
    switches: {max: 3}
"""
    with pytest.raises(InputFileError) as info:
        load_design("bad.yaml", text=text)
    problems = info.value.problems
    by_line = {p.line: p for p in problems}
    assert len(problems) == 8
    assert all(p.path == "bad.yaml" for p in problems)
    assert by_line[locate(text, "nodes: 0")[0]].message.startswith("nodes:")
    assert "did you mean system?" in by_line[locate(text, "sytem")[0]].message
    assert "did you mean" in by_line[locate(text, "qm970")[0]].message
    assert "did you mean 2:1?" in by_line[locate(text, "0.5")[0]].message
    line, col = locate(text, "allredcue")
    assert (by_line[line].col, "did you mean allreduce?" in by_line[line].message) == (col, True)
    assert "at least one target" in by_line[locate(text, "allgather")[0]].message
    assert "lower-case 'b'" in by_line[locate(text, "10Gb")[0]].message
    assert "one requirement per list item" in by_line[locate(text, "- gap")[0]].message
    # sorted by position, so the report reads top to bottom
    assert [p.line for p in problems] == sorted(p.line or 0 for p in problems)


def test_a_flat_requirement_gets_one_line_that_shows_the_form() -> None:
    # {collective: allgather, size: ..., max_time: ...}: one problem, not one per key, and the
    # message shows the one-key form with the collective the user wrote
    text = """\
name: flat
nodes: 2
system: dgx-h100
requirements:
  - collective: allgather
    size: 1GB
    max_time: 10ms
"""
    with pytest.raises(InputFileError) as info:
        load_design("flat.yaml", text=text)
    (problem,) = info.value.problems
    assert problem.line == 5
    assert "'- allgather: {size: 1GB, max_time: 10ms}'" in problem.message


@pytest.mark.parametrize("key", ["sites: 2", "wan: wan-100g", "distance: 800km"])
def test_a_wan_key_says_sites_are_a_command_line_what_if(key: str) -> None:
    """'sites: 2' had been offered 'did you mean inter?'; design files have no WAN keys."""
    text = f"name: x\nnodes: 4\nsystem: dgx-h100\n{key}\n"
    with pytest.raises(InputFileError) as info:
        load_design("wan.yaml", text=text)
    (problem,) = info.value.problems
    assert (problem.line, problem.col) == (4, 1)
    assert problem.message == (
        f"{key.split(':')[0]}: unknown key: design files have no WAN keys: sites are a what-if "
        "of the estimate and workload commands (ibcalc allreduce ... --sites N --wan LINK, with "
        "--wan-links, --distance or --rtt)"
    )


@pytest.mark.parametrize(
    ("key", "where"),
    [("inter: wan-100g", "4:1: inter"), ("fabric: {link: wan10g}", "4:10: fabric.link")],
)
def test_a_wan_link_as_the_scale_out_link_says_sites_are_a_command_line_what_if(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, where: str
) -> None:
    """Two sites written as 'inter: wan-100g' had been told only that a WAN joins sites, not
    nodes, with no word that a design file has no sites, as 'sites: 2' is told; design show
    too."""
    path = tmp_path / "two-sites.yaml"
    path.write_text(
        f"name: x\nnodes: 2\nsystem: dgx-h100\n{key}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 1s}\n"
    )
    link = "wan-100g" if "100g" in key else "wan-10g"  # an alias is said by its id
    for command in (["check"], ["design", "show"]):
        code, _, err = run([*command, str(path)], capsys)
        assert code == 2
        assert err == (
            f"error: {path}:{where}: {link} is a wan link; use a scale-out link (a WAN joins "
            "sites, not nodes); design files have no WAN keys: sites are a what-if of the "
            "estimate and workload commands (ibcalc allreduce ... --sites N --wan LINK, with "
            "--wan-links, --distance or --rtt)\n"
        )


@pytest.mark.parametrize("where", ["fabric:\n  rails: 8\n", "rails: 8\n"])
def test_rails_are_told_to_be_nics_per_node(where: str) -> None:
    """'fabric.rails' had been offered "did you mean radix?" (review DJ): a rail is a NIC of
    each node, which a design gives as nics_per_node."""
    text = f"name: x\nnodes: 4\nsystem: dgx-h100\n{where}"
    with pytest.raises(InputFileError) as info:
        load_design("rails.yaml", text=text)
    (problem,) = info.value.problems
    assert problem.message.endswith(
        "rails: unknown key: a rail is one NIC of each node: give nics_per_node (top level); "
        "fabric.rail_optimized says whether each rail has leaves of its own (true by default)"
    )


def test_a_key_at_the_wrong_level_is_not_told_to_mean_itself() -> None:
    # 'size' is a key of a requirement's target, not of the design: no "did you mean size?"
    text = "name: x\nnodes: 2\nsystem: dgx-h100\nsize: 1GB\n"
    with pytest.raises(InputFileError) as info:
        load_design("level.yaml", text=text)
    (problem,) = info.value.problems
    assert problem.line == 4
    assert "did you mean" not in problem.message
    assert "a key of another section" in problem.message


def test_a_key_of_another_section_names_what_this_section_takes() -> None:
    """'gap: {max_ratio: 12, min_busbw: 1GB/s}': the indent is right and min_busbw belongs to a
    collective's requirement; the message had said only to check the indent (a hostile-input
    review). It names the keys the section takes."""
    text = (
        "name: x\nnodes: 2\nsystem: dgx-h100\nrequirements:\n"
        "  - gap: {max_ratio: 12, min_busbw: 1GB/s}\n"
    )
    with pytest.raises(InputFileError) as info:
        load_design("gap.yaml", text=text)
    (problem,) = info.value.problems
    assert (problem.line, problem.col) == (5, 26)
    assert problem.message == (
        "requirements[0].gap.min_busbw: unknown key here (this section takes max_ratio): a key "
        "of another section (check its indent)"
    )


@pytest.mark.parametrize(
    ("snippet", "needle", "message"),
    [
        ("nodes: 4\nsystem: dgx-h10\n", "dgx-h10", "unknown system 'dgx-h10'"),
        ("nodes: 4\nsystem: dgx-h100\ninter: nvlink4\n", "inter:", "is a scale-up link"),
        (
            "nodes: 4\nsystem: dgx-h100\nfabric: {link: hdr, switch: qm9700}\n"
            "requirements:\n  - gap: {max_ratio: 20}\n",
            None,
            None,
        ),
        ("nodes: 4\nsystem: dgx-h100\nfabric:\n  switch: qm8790\n", "switch:", "no 400 Gb/s ports"),
        ("nodes: 512\nsystem: dgx-h100\nfabric:\n  switch: qm9700\n  tiers: 2\n", "tiers:", "fit"),
        # 20 trays x 4 GPUs = 80 GPUs: not whole 72-GPU NVLink domains
        ("nodes: 20\nsystem: gb200-nvl72\n", "nodes:", "scale-up domains"),
        # a domain of 6 GPUs is not whole 4-GPU trays
        (
            "nodes: 18\nsystem: gb200-nvl72\nscale_up_domain: 6\n",
            "scale_up_domain:",
            "scale_up_domain: 6 is not a whole number of 4-GPU nodes",
        ),
        (
            "nodes: 4\nsystem: dgx-a100\nrequirements:\n  - allreduce: {size: 1GB, "
            "max_time: 1s, algo: nvls}\n",
            "allreduce",
            "nvls does not apply",
        ),
        (
            "nodes: 4\nsystem: dgx-h100\nrequirements:\n  - switches: {max: 3}\n",
            "switches",
            "needs a sized fabric",
        ),
        (
            "nodes: 4\nsystem: dgx-h100\ninter: ndr\nfabric: {link: ndr}\n",
            "link: ndr",
            "give the scale-out link once",
        ),
    ],
)
def test_semantic_problems_are_located(
    tmp_path: Path,
    builtin_catalogue: Catalogue,
    locate: Callable[..., tuple[int, int]],
    snippet: str,
    needle: str | None,
    message: str | None,
) -> None:
    text = "name: semantic\n" + snippet
    path = write(tmp_path, "d.yaml", text)
    if needle is None:  # a valid design: hdr links are not ndr ports, but qm9700 has 200G ports
        check_design(path, builtin_catalogue)
        return
    with pytest.raises(InputFileError) as info:
        check_design(path, builtin_catalogue)
    (problem,) = info.value.problems
    assert message is not None
    assert message in problem.message
    assert problem.line == locate(text, needle)[0]


# --- resolution and findings -------------------------------------------------------------------


def test_superpod_su_findings(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    result = check_design(write(tmp_path, "su.yaml", SU_DESIGN), builtin_catalogue)
    gap, oversub, switches = result.findings[1:]
    # 450 GB/s NVLink 4 vs 8 x 50 GB/s NDR shared by 8 GPUs
    assert gap.predicted == pytest.approx(NVLINK4_Bps / NDR_Bps) == pytest.approx(9.0)
    assert gap.margin == pytest.approx((12 - 9) / 12)
    assert (oversub.predicted, oversub.passed, oversub.margin) == (1.0, True, 0.0)
    # NVIDIA RA-11333-001 Table 4, 1 SU: 8 leaf + 4 spine
    assert (switches.predicted, switches.passed) == (12.0, True)
    assert result.passed
    fabric = result.resolved.fabric
    assert fabric is not None
    assert (fabric.node_leaf_cables, fabric.leaf_spine_cables) == (252, 256)


def test_collective_finding_is_the_engine_estimate(
    tmp_path: Path, builtin_catalogue: Catalogue, locate: Callable[..., tuple[int, int]]
) -> None:
    result = check_design(write(tmp_path, "su.yaml", SU_DESIGN), builtin_catalogue)
    finding = result.findings[0]
    direct = estimate(
        builtin_catalogue, ClusterSpec(nodes=31, system="dgx-h100"), Collective.ALL_REDUCE, 1e10
    )
    assert finding.predicted == pytest.approx(direct.time_s)
    assert finding.unit == "s"
    assert finding.margin == pytest.approx(1.0 - direct.time_s)
    line, col = locate(SU_DESIGN, "max_time: 1s")
    assert (finding.file, finding.line, finding.col) == (str(tmp_path / "su.yaml"), line, col)


def test_failing_requirement_respects_the_nic_bound(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """All-reduce lower bound without in-network reduction (docs/model.md#lower-bounds): each node
    sends 2 S (N-1)/N through its 8 NICs: 2 x 10 GB x 31/32 / (8 x 50 GB/s) = 48.4 ms > 40 ms."""
    text = "name: f\nnodes: 32\nsystem: dgx-h100\nrequirements:\n"
    text += "  - allreduce: {size: 10GB, max_time: 40ms}\n"
    (finding,) = check_design(write(tmp_path, "f.yaml", text), builtin_catalogue).findings
    bound = 2 * 10 * GB * 31 / 32 / (8 * NDR_Bps)
    assert bound == pytest.approx(48.4375e-3)
    assert finding.predicted >= bound
    assert not finding.passed
    assert finding.margin == pytest.approx((0.040 - finding.predicted) / 0.040)
    assert "over the required <= 40 ms" in finding_message(finding)


def test_oversubscription_slows_alltoall(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    """docs/model.md#oversubscription-and-cross-leaf-traffic: the network term of a cross-leaf
    all-to-all grows by max(1, k f).

    QM9700 at 2:1 keeps 42 of 64 ports down. Not rail-optimized, a leaf serves 42 // 8 = 5 whole
    DGX nodes, so f = (32 - 5) / 31 of a node's peers sit behind other leaves and the transfer
    grows by 2 f; the latency, the same in both, is NCCL's ring/Simple base 8.4 us + one NET hop
    of 14 us + 255 messages x 2.4 us (calibrated.per_message_latency, an H100 at Hopper's
    clock). Rail-optimized, one leaf carries a rail for the whole 32-node unit: f = 0."""

    def alltoall(ratio: str, rail: bool) -> float:
        text = (
            f"name: o\nnodes: 32\nsystem: dgx-h100\nfabric: {{switch: qm9700, "
            f"oversubscription: {ratio}, rail_optimized: {str(rail).lower()}}}\n"
            "requirements:\n  - alltoall: {size: 1GB, max_time: 1s}\n"
        )
        result = check_design(write(tmp_path, f"o{ratio}{rail}.yaml", text), builtin_catalogue)
        assert result.resolved.oversubscription == float(ratio)
        return result.findings[0].predicted

    f = (32 - 42 // 8) / 31
    latency = (8.4 + 14 + 255 * 2.4) * 1e-6
    flat, blocked = alltoall("1", False), alltoall("2", False)
    assert (blocked - latency) / (flat - latency) == pytest.approx(2 * f, rel=1e-9)
    assert alltoall("2", True) == pytest.approx(alltoall("1", True), rel=1e-9)


def test_per_gpu_bandwidths_gb200(builtin_catalogue: Catalogue) -> None:
    """GB200 NVL72: 72-GPU NVLink 5 domain (900 GB/s per GPU), 4 NDR NICs per 4-GPU tray, so
    50 GB/s per GPU: gap 18 (NVIDIA NVLink page; docs/design-files.md#dgx-gb200-superpod)."""
    text = "name: g\nnodes: 144\nsystem: gb200-nvl72\n"
    design, doc = load_design("g.yaml", text=text)
    resolved = resolve_design(design, doc, builtin_catalogue)
    bws = per_gpu_bandwidths(resolved.cluster.topology)
    assert (bws.gpus_per_domain, bws.domains, bws.nics_per_domain) == (72, 8, 72)
    assert bws.out_line_per_gpu_Bps == pytest.approx(NDR_Bps)
    assert bws.gap == pytest.approx(18.0)
    assert evaluate(resolved, doc) == []


def test_a_design_splits_the_nvl72_domain(builtin_catalogue: Catalogue) -> None:
    """144 trays as NVL36 halves: 16 domains of 36 GPUs, 9 trays x 4 NICs each; the gap stays
    18 (900 GB/s NVLink 5 against 50 GB/s of NDR per GPU)."""
    text = "name: g\nnodes: 144\nsystem: gb200-nvl72\nscale_up_domain: 36\n"
    design, doc = load_design("g.yaml", text=text)
    resolved = resolve_design(design, doc, builtin_catalogue)
    bws = per_gpu_bandwidths(resolved.cluster.topology)
    assert (bws.gpus_per_domain, bws.domains, bws.nics_per_domain) == (36, 16, 36)
    assert bws.gap == pytest.approx(18.0)


# --- CLI ---------------------------------------------------------------------------------------


def test_check_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], locate: Callable[..., tuple[int, int]]
) -> None:
    good = write(tmp_path, "good.yaml", SU_DESIGN)
    failing = write(tmp_path, "fail.yaml", SU_DESIGN.replace("max: 12}", "max: 11}"))
    broken = write(tmp_path, "broken.yaml", "name: x\nnodes: [\n")
    assert run(["check", str(good)], capsys)[0] == 0
    code, out, err = run(["check", str(good), str(failing)], capsys)
    assert code == 1
    assert err == ""
    line, col = locate(SU_DESIGN, "max: 12")
    assert f"FAIL  {failing}:{line}:{col}  switches <= 11" in out
    assert "8 requirements in 2 files: 7 passed, 1 failed" in out
    code, out, err = run(["check", str(broken), str(failing), str(good)], capsys)
    assert code == 2
    assert err.startswith(f"error: {broken}:3:1: YAML syntax error")
    assert len(err.splitlines()) == 1
    assert "1 file could not be checked" in out
    assert "Traceback" not in out + err


def test_check_json_gives_every_file_every_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that could not be resolved had only file, findings, warnings and errors, while the
    docs list passed, design, nodes and gpus_per_node for every file (f["passed"] raised)."""
    good = write(tmp_path, "su.yaml", SU_DESIGN)
    bad = write(tmp_path, "bad.yaml", "name: x\nnodes: -1\n")
    code, out, _ = run(["check", str(bad), str(good), "--format", "json"], capsys)
    assert code == 2
    files = json.loads(out)["files"]
    keys = [
        "file",
        "design",
        "nodes",
        "gpus_per_node",
        "passed",
        "findings",
        "warnings",
        "notes",
        "errors",
    ]
    assert [list(f) for f in files] == [keys, keys]
    assert (files[0]["passed"], files[0]["design"], files[0]["nodes"]) == (False, None, None)
    assert files[0]["errors"][0]["line"] == 2
    assert files[1]["passed"] is True


def test_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "su.yaml", SU_DESIGN)
    code, out, _ = run(["check", str(path), "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert data["passed"] is True
    assert data["summary"] == {
        "requirements": 4,
        "passed": 4,
        "failed": 0,
        "files": 1,
        "files_with_errors": 0,
    }
    gap = data["files"][0]["findings"][1]
    assert (gap["kind"], gap["predicted"], gap["required"], gap["line"]) == ("gap", 9.0, 12.0, 9)


def test_check_github(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "fail.yaml", SU_DESIGN.replace("max_ratio: 12", "max_ratio: 8"))
    code, out, _ = run(["check", str(path), "--format", "github"], capsys)
    assert code == 1
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1
    # properties escape ':' and ',' (GitHub workflow-command rules)
    assert errors[0].startswith(f"::error file={path},line=9,col=")
    assert "title=ibcalc check%3A gap%3A intra/inter per GPU <= 8x::" in errors[0]


def test_check_junit_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.yaml", SU_DESIGN)
    failing = write(tmp_path, "fail.yaml", SU_DESIGN.replace("max: 12}", "max: 11}"))
    report = tmp_path / "out" / "junit.xml"
    report.parent.mkdir()
    args = ["check", str(good), str(failing), "--format", "junit", "--output", str(report)]
    code, out, _ = run(args, capsys)
    assert (code, out) == (1, "")
    root = ET.parse(report).getroot()
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites",
        "8",
        "1",
        "0",
    )
    failures = root.findall(".//failure")
    assert len(failures) == 1
    assert "switches" in (failures[0].get("message") or "")
    assert sorted(p.name for p in report.parent.iterdir()) == ["junit.xml"]  # no temp left


def test_junit_shows_separators_and_bidi_controls_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review BP: a design name or path holding U+2028, U+2029 or U+202E went out raw in JUnit
    alone (the text, GitHub and JSON reports show them escaped)."""
    text = SU_DESIGN.replace("name: su", 'name: "a\\u2028FAKE\\u2029b\\u202ec"', 1)
    assert text != SU_DESIGN
    path = write(tmp_path, "x\u2028y.yaml", text)
    code, out, _ = run(["check", str(path), "--format", "junit"], capsys)
    assert code == 0
    assert not set(out) & {"\u2028", "\u2029", "\u202e"}
    root = ET.fromstring(out)
    case = root.find(".//testcase")
    assert case is not None
    assert case.get("classname") == "ibcalc.a\\u2028FAKE\\u2029b\\u202ec"
    assert (case.get("file") or "").endswith("x\\u2028y.yaml")


def test_output_to_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "su.yaml", SU_DESIGN)
    code, out, err = run(["check", str(path), "-o", str(tmp_path / "no" / "r.txt")], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error: ")
    assert "cannot write" in err
    assert len(err.splitlines()) == 1


def test_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["schema"], capsys)
    assert code == 0
    schema = json.loads(out)
    assert schema == json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["required"]) == {"name", "nodes"}
    assert schema["additionalProperties"] is False


def test_design_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "su.yaml", SU_DESIGN)
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    assert "switches: 8 leaf + 4 spine + 0 core = 12" in out
    assert "cables: 252 node-leaf + 256 leaf-spine + 0 spine-core = 508" in out
    assert "gap (scale-up / scale-out line rate per GPU): 9.00x" in out
    code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    data = json.loads(out)
    assert data["fabric"]["total_switches"] == 12
    # 248 compute ports, half of them at 400 Gb/s (docs/design-files.md#bisection-bandwidth)
    assert data["fabric"]["bisection_per_direction_Bps"] == pytest.approx(124 * NDR_Bps)


def test_design_show_reports_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bad.yaml", "name: b\nnodes: -1\nsystem: 3\n")
    code, out, err = run(["design", "show", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {path}:2:1: nodes: must be at least 1",
        f"error: {path}:3:1: system: 3 is a number, not text: quote it to mean the text, '3'",
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # a number where text belongs had been told to "write a name" (review CV)
        (
            "description: 5\n",
            "2:1: description: 5 is a number, not text: quote it to mean the text, '5'",
        ),
        # Python's True had been echoed (review CV)
        (
            "fabric: {oversubscription: true}\n",
            "2:10: fabric.oversubscription: oversubscription true is not a ratio (write 2 or 2:1)",
        ),
        # a quoted false had read "'false' is not true or false" (review CV)
        (
            'fabric: {rail_optimized: "false"}\n',
            "2:10: fabric.rail_optimized: 'false' is quoted text: write false without quotes",
        ),
        # a quoted count had read "'8' is not an integer", beside "is text, not a number: write
        # it without quotes" for a quoted gap ratio
        (
            'gpus_per_node: "8"\n',
            "2:1: gpus_per_node: '8' is text, not an integer: write it without quotes",
        ),
        (
            "fabric: {radix: ' 64', tiers: 2}\n",
            "2:10: fabric.radix: ' 64' is text, not an integer: write it without quotes",
        ),
        # a quoted whole number YAML would read unquoted had read "'6.4e+1' is not an
        # integer", which it is, as a quoted "8" had; a quoted fraction is no integer
        (
            "fabric: {radix: '6.4e+1', tiers: 2}\n",
            "2:10: fabric.radix: '6.4e+1' is text, not an integer: write it without quotes",
        ),
        (
            'gpus_per_node: "8.0"\n',
            "2:1: gpus_per_node: '8.0' is text, not an integer: write it without quotes",
        ),
        ("gpus_per_node: '1.5'\n", "2:1: gpus_per_node: '1.5' is not an integer"),
        # a space float() does not take before the number (an information separator, which \s
        # matches) had been an internal error, exit 3
        (
            'gpus_per_node: "\\x1c8.0"\n',
            "2:1: gpus_per_node: '\\x1c8.0' is text, not an integer: write it without quotes",
        ),
        # a count written with a power of ten, which YAML leaves text, had read "'8e0' is not
        # an integer", where a ratio's field says why
        (
            "gpus_per_node: 8e0\n",
            "2:1: gpus_per_node: '8e0' is text, not an integer: YAML reads an exponent as text "
            "unless the number has a point and the exponent a sign; write the count in digits",
        ),
        # a requirement key with nothing under it had read "empty requirement: use one of
        # allreduce, ...", which named the key written; beside another key it had been dropped
        (
            "requirements:\n  - gap:\n",
            "3:5: requirements[0].gap: nothing is given under it: give its target, e.g. "
            "'- gap: {max_ratio: 12}', or remove it",
        ),
        (
            "requirements:\n  - allreduce: {size: 1GB, max_time: 1s}\n    broadcast:\n",
            "4:5: requirements[0].broadcast: nothing is given under it: give its target, e.g. "
            "'- broadcast: {size: 1GB, max_time: 10ms}', or remove it",
        ),
        # a mapping had read pydantic's "Input should be a valid boolean" (review CU)
        ("fabric: {sharp: {}}\n", "2:10: fabric.sharp: a mapping is not true or false"),
        # a quantity given true had read Python's True (review CW)
        (
            "requirements:\n  - allreduce: {size: 1GB, max_time: true}\n",
            "3:28: requirements[0].allreduce.max_time: true is not a quantity",
        ),
    ],
)
def test_a_value_of_the_wrong_kind_is_named_in_yaml_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: str
) -> None:
    path = write(tmp_path, "w.yaml", "name: w\n" + text + "nodes: 2\nsystem: dgx-h100\n")
    code, out, err = run(["design", "show", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"error: {path}:{line}"]


def test_a_ratio_per_tier_says_how_many_it_got(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three ratios for three tiers had read "takes one ratio, or a list [leaf, spine]" alone,
    which did not say why three are one too many."""
    path = write(
        tmp_path,
        "t.yaml",
        "name: t\nnodes: 256\nsystem: dgx-h100\n"
        "fabric:\n  switch: qm9700\n  tiers: 3\n  oversubscription: [2, 2, 2]\n",
    )
    code, out, err = run(["design", "show", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {path}:7:3: fabric.oversubscription: oversubscription takes one ratio, or a "
        "list [leaf, spine]: 3 given (the top tier has no uplinks to taper)"
    ]


def test_design_quantities_need_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design = tmp_path / "bare.yaml"
    design.write_text(
        "name: bare\nnodes: 4\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 1000000000, min_busbw: 300}\n"
        "  - allreduce: {size: 1GB, max_time: '45'}\n"
    )
    err = main_error(["check", str(design)], capsys)
    lines = err.splitlines()
    assert len(lines) == 2  # both problems, each with its position
    assert f"{design}:5:" in lines[0]
    assert "needs a unit" in lines[0]
    assert f"{design}:6:" in lines[1]


def test_a_target_past_a_floats_range_is_said_infinite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """YAML reads 1.0e+400 as inf, which had been refused as "time inf needs a unit"."""
    design = tmp_path / "inf.yaml"
    design.write_text(
        "name: i\nnodes: 4\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 1GB, max_time: 1.0e+400}\n"
    )
    (line,) = main_error(["check", str(design)], capsys).splitlines()
    assert line == (
        f"error: {design}:5:28: requirements[0].allreduce.max_time: time inf is not a finite "
        "number (YAML reads a number too large for a float as inf or -inf)"
    )


def test_design_problems_of_every_kind_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    design = tmp_path / "multi.yaml"
    design.write_text(
        "name: multi\nnodes: 4\nsystem: dgx-h10\nfabric: {link: ndrr, colour: blue}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 45}\n"
    )
    lines = main_error(["check", str(design)], capsys).splitlines()
    assert [line.split(":")[2] for line in lines] == ["3", "4", "4", "6"]  # sorted by line
    assert "unknown system 'dgx-h10'" in lines[0]
    assert "unknown link 'ndrr'" in lines[1]
    assert "unknown key" in lines[2]
    assert "needs a unit" in lines[3]


def show_example_at(
    name: str, width: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """``design show`` of ``examples/name`` on a page ``width`` columns wide, every line of it
    within the page."""
    example = Path(__file__).resolve().parents[2] / "examples" / name
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, err = run(["design", "show", str(example)], capsys)
    assert code == 0, err
    # a single word longer than the page (the file's path, from a deep checkout) stays whole
    assert all(len(line) <= width or len(line.split()) == 1 for line in out.splitlines())
    return out


def test_design_show_is_laid_out_for_the_page(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """design show printed lines of up to 150 columns whatever the page; at 80 each line fits,
    a bullet's text continues under its text, and no number parts from its unit."""
    out = show_example_at("roce-400g-2to1.yaml", 80, capsys, monkeypatch)
    lines = out.splitlines()
    # 16 leaves x 40 uplinks over 5 spines: 8 links per leaf-spine pair
    assert "8 links per leaf-spine pair" in " ".join(out.split())
    # the bisection is the uplinks' 640 / 2 x 50 GB/s, for any traffic: rail-aligned traffic
    # inside an SU never reaches them, and the line says so
    assert (
        "bisection: 16000 GB/s per direction (128 Tb/s; the narrowest tier boundary, for any "
        "traffic; rail-aligned traffic inside an SU stays on its leaves)"
    ) in " ".join(out.split())
    units = ("GB/s", "Gb/s", "Tb/s", "us", "ms")
    for line in lines:
        assert not line.strip().startswith(units), line  # a unit never starts a line
    # "  - leaf uses ..." continues on the next line, under the bullet's text
    (i,) = [i for i, line in enumerate(lines) if line.startswith("  - leaf uses 80 down")]
    assert lines[i + 1].startswith("    ")
    assert not lines[i + 1].startswith("     ")


def test_design_show_continues_a_wrapped_line_inside_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 60 columns a wrapped line that is not a bullet continues four columns in from its
    start: under its start, the rest of 'fabric: fat tree, 2 switch levels, qm9700 as 64 x'
    had stood at the margin like a line of its own ('400 Gb/s ports, rail-optimized'), and
    the scale-up row's rest at the rows' own indent."""
    lines = show_example_at("dgx-h100-superpod-su-ndr.yaml", 60, capsys, monkeypatch).splitlines()
    (i,) = [i for i, line in enumerate(lines) if line.startswith("fabric: fat tree")]
    assert lines[i + 1] == "    400 Gb/s ports, rail-optimized"
    (j,) = [j for j, line in enumerate(lines) if line.startswith("    scale-up   nvlink4")]
    assert lines[j + 1] == "        line, 371 GB/s achievable, NVLS 309 GB/s"
    (k,) = [k for k, line in enumerate(lines) if line.startswith("  bisection: ")]
    assert lines[k + 1].startswith("      narrowest tier boundary")


def test_design_show_words_for_one_leaf_one_switch_and_a_large_bisection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review's wording: '1 leaves per SU', a one-switch fabric called 'rail-optimized' (one
    switch has no rails to align), and a bisection of 8192 x DGX H100 as '1.311e+04 Tb/s'."""
    one_leaf = (
        "name: g\nnodes: 288\nsystem: gb200-nvl72\nnics_per_node: 1\n"
        "fabric: {switch: qm9700, oversubscription: 4}\n"
    )
    code, out, _ = run(["design", "show", str(write(tmp_path, "g.yaml", one_leaf))], capsys)
    assert code == 0
    assert "(1 leaf per SU)" in out
    one_switch = "name: o\nnodes: 8\nsystem: dgx-h100\nfabric: {switch: qm9700}\n"
    code, out, _ = run(["design", "show", str(write(tmp_path, "o.yaml", one_switch))], capsys)
    assert "fabric: fat tree, 1 switch level, qm9700 as 64 x 400 Gb/s ports\n" in out
    # 8192 nodes x 8 x 400 Gb/s, half of them across the narrowest boundary: 13,107 Tb/s
    big = "name: b\nnodes: 8192\nsystem: dgx-h100\nfabric: {switch: qm9700, tiers: 3}\n"
    code, out, _ = run(["design", "show", str(write(tmp_path, "b.yaml", big))], capsys)
    assert code == 0
    assert f"({8192 * 8 * 400 / 2 / 1000:,.0f} Tb/s;" in out
    # check's header counts one node as design show does ('1 nodes x 8 GPUs' had read)
    single = (
        "name: s\nnodes: 1\nsystem: dgx-h100\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 1s}\n"
    )
    code, out, _ = run(["check", str(write(tmp_path, "s.yaml", single))], capsys)
    assert code == 0
    assert ": s (1 node x 8 GPUs, dgx-h100; nvlink4)" in out
    # a preset named by an alias is shown as written, beside the id it stands for: the sizing
    # counts an HGX server's NICs as its own cards, and the header had read plain dgx-h100
    # (review DJ L3); the id in another case is the id
    for written, shown in (("HGX-H100", "HGX-H100 as dgx-h100"), ("DGX-H100", "dgx-h100")):
        alias = single.replace("dgx-h100", written)
        code, out, _ = run(["check", str(write(tmp_path, "a.yaml", alias))], capsys)
        assert code == 0
        assert f": s (1 node x 8 GPUs, {shown}; nvlink4)" in out
        code, out, _ = run(["design", "show", str(write(tmp_path, "a.yaml", alias))], capsys)
        assert f"cluster: 1 node x 8 GPUs = 8 GPUs ({shown})\n" in out
        code, out, _ = run(
            ["design", "show", str(write(tmp_path, "a.yaml", alias)), "--format", "json"], capsys
        )
        data = json.loads(out)
        assert (data["system"], data["system_as_written"]) == ("dgx-h100", written)


@pytest.mark.parametrize(
    ("system", "inter", "switch", "node_transceivers"),
    [
        # RA-11333-001: four twin-port OSFP cages serve the DGX H100's eight 400G NDR ports
        ("dgx-h100", "ndr", "qm9700", 64 * 4),
        ("DGX-H100", "ib-ndr", "qm9700", 64 * 4),  # the id in any case, the link by an alias
        ("dgx-b200", "ndr", "qm9700", 64 * 4),
        # 8 x 800G NICs are no longer two to a 400G cage: not counted (had been 4 a node)
        ("dgx-h100", "roce-800g", "sn5600", None),
        # nor other NICs than the ones the source states
        ("dgx-h100", "roce-400g", "sn5600", None),
        # nor another maker's HGX server, named by an alias of the DGX preset (review BO)
        ("hgx-h100", "ndr", "qm9700", None),
        ("hgx-b200", "ndr", "qm9700", None),
    ],
)
def test_node_cages_are_the_presets_own_nics_only(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    system: str,
    inter: str,
    switch: str,
    node_transceivers: int | None,
) -> None:
    text = f"name: n\nnodes: 64\nsystem: {system}\ninter: {inter}\nfabric:\n  switch: {switch}\n"
    code, out, _ = run(
        ["design", "show", str(write(tmp_path, "n.yaml", text)), "--format", "json"], capsys
    )
    assert code == 0
    assert json.loads(out)["fabric"]["node_transceivers"] == node_transceivers


@pytest.mark.parametrize(
    ("inter", "switch", "mode", "figures"),
    [
        # MegaScale (arXiv:2402.15627 section 3.6) splits each Tomahawk 4 400G port into 2 x
        # 200G: 128 ports, a leaf 64 down and 64 up; 64 nodes x 8 rails fill one SU of 64 nodes,
        # one leaf a rail, and 512 uplinks need 4 spines of 128; 512 + 512 cables; an ASIC has
        # no cages, so no transceivers are counted
        ("roce-200g", "tomahawk4", "tomahawk4 as 128 x 200 Gb/s ports", (64, 64, 512, 512, None)),
        # NVIDIA's SN5000 data interfaces: also 100GbE, 256 ports (four a cage): a leaf 128 down
        # and 128 up, an SU of 128 nodes half used, whose 8 leaves keep all 1,024 uplinks, on 4
        # spines of 256; cages: 8 leaves x (64 + 128) / 4 + 4 spines x 256 / 4 = 384 + 256
        ("roce-100g", "sn5600", "sn5600 as 256 x 100 Gb/s ports", (128, 128, 512, 1024, 640)),
    ],
)
def test_split_port_modes_size_a_fabric(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    inter: str,
    switch: str,
    mode: str,
    figures: tuple[int, int, int, int, int | None],
) -> None:
    text = f"name: a\nnodes: 64\nsystem: dgx-h100\ninter: {inter}\nfabric:\n  switch: {switch}\n"
    path = write(tmp_path, "a.yaml", text)
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    assert mode in out
    assert "switches: 8 leaf + 4 spine + 0 core = 12" in out
    code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    fabric = json.loads(out)["fabric"]
    keys = ("su_nodes", "leaf_down_ports", "node_leaf_cables", "leaf_spine_cables")
    assert tuple(fabric[k] for k in (*keys, "switch_transceivers")) == figures


def test_check_github_gives_the_notes_as_notices(capsys: pytest.CaptureFixture[str]) -> None:
    """The text report's 'note:' lines (what a figure rests on: here an all-gather over EFA v2
    beyond the ranks its transport count was fitted on) are file-level notices in the github
    format, which had dropped them; ':' and ',' in the title escaped, '%' in the message."""
    path = Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml"
    _, text, _ = run(["check", str(path)], capsys)
    notes = [line.strip().removeprefix("note: ") for line in text.splitlines() if "note: " in line]
    assert notes
    assert notes[0].startswith("allgather 1 GB: a ring in Simple over efa-v2")
    code, out, _ = run(["check", str(path), "--format", "github"], capsys)
    assert code == 0
    notices = [line for line in out.splitlines() if line.startswith("::notice ")]
    assert notices == [
        f"::notice file={path},title=ibcalc check%3A note::{note.replace('%', '%25')}"
        for note in notes
    ]


def test_check_junit_gives_the_notes_as_the_suite_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The text report's 'note:' lines are its testsuite's system-out in JUnit, which had
    dropped them (the github format gives them as notices, JSON as notes)."""
    path = Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml"
    _, text, _ = run(["check", str(path)], capsys)
    notes = [line.strip() for line in text.splitlines() if line.strip().startswith("note: ")]
    assert len(notes) == 2
    code, out, _ = run(["check", str(path), "--format", "junit"], capsys)
    assert code == 0
    (suite,) = ET.fromstring(out).findall("testsuite")
    assert [child.tag for child in suite][-1] == "system-out"
    assert (suite.findtext("system-out") or "").splitlines() == notes
