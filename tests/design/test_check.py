"""Design checks: findings as numbers, margins, pass/fail boundaries, and problems located at
the YAML key that caused them (line numbers counted by hand in each test's YAML text).

The margin oracle is arithmetic, not the engine: targets are placed just above and below the
prediction the finding reports, and the margin must be (target - predicted) / target.
Hand-worked values: DGX H100 gap 450 GB/s NVLink 4 / (8 x 50 GB/s NDR / 8 GPUs) = 9 (NVIDIA
H100 and Quantum-2 datasheets: 18 NVLinks x 25 GB/s per direction, 400 Gb/s per port); one
DGX H100 SuperPOD scalable unit = 8 leaf + 4 spine QM9700 (NVIDIA RA-11333-001 Table 4).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli import main
from ibcalc.design.check import (
    CollectiveBasis,
    Comparison,
    DesignCheck,
    Finding,
    GapBasis,
    OversubscriptionBasis,
    SwitchesBasis,
    check_design,
    cluster_problem,
    field_keys,
    judge,
    load_design,
    resolve_design,
    unpriced_ratio,
)
from ibcalc.engine.types import Collective, Estimate
from ibcalc.errors import ClusterError, DesignError, ValidationProblem
from ibcalc.facade import estimate_on
from ibcalc.render.check import design_dict, finding_detail, render_design_text
from ibcalc.yamlio import load_yaml


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def only_problem(
    tmp_path: Path, catalogue: Catalogue, text: str, name: str = "d.yaml"
) -> ValidationProblem:
    """The one problem ``check_design`` refuses the design ``text`` with."""
    with pytest.raises(DesignError) as info:
        check_design(write(tmp_path, name, text), catalogue)
    (problem,) = info.value.problems
    return problem


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# --- margins and the pass/fail boundary ---------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "required", "comparison", "passed", "margin"),
    [
        (9.0, 12.0, "<=", True, 0.25),  # (12 - 9) / 12
        (15.0, 12.0, "<=", False, -0.25),  # (12 - 15) / 12
        (12.0, 12.0, "<=", True, 0.0),  # on the boundary: passes
        (300.0, 250.0, ">=", True, 0.2),  # (300 - 250) / 250
        (200.0, 250.0, ">=", False, -0.2),  # (200 - 250) / 250
        (250.0, 250.0, ">=", True, 0.0),
        (0.0, 0.0, "<=", True, 0.0),  # switches: {max: 0} with none
        (1.0, 0.0, "<=", False, -1.0),  # switches: {max: 0} with one
    ],
)
def test_judge(
    predicted: float, required: float, comparison: Comparison, passed: bool, margin: float
) -> None:
    assert judge(predicted, required, comparison) == (passed, pytest.approx(margin))


TWO_NODES = """\
name: two-dgx
nodes: 2
system: dgx-h100
fabric: {link: ndr}
requirements:
  - allreduce: {size: 1GB, max_time: 1s, min_busbw: 1GB/s}
"""


def test_collective_margin_and_boundary(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    first = check_design(write(tmp_path, "a.yaml", TWO_NODES), builtin_catalogue).findings[0]
    assert isinstance(first.basis, CollectiveBasis)
    time_s, busbw = first.predicted, first.basis.estimate.busbw_Bps
    # targets just above and below the prediction; an exact one (repr round-trips in seconds)
    text = TWO_NODES.replace(
        "  - allreduce: {size: 1GB, max_time: 1s, min_busbw: 1GB/s}\n",
        f"  - allreduce: {{size: 1GB, max_time: {time_s * 1.01 * 1e6:.6f}us}}\n"  # line 6
        f"  - allreduce: {{size: 1GB, max_time: {time_s * 0.99 * 1e6:.6f}us}}\n"  # line 7
        f"  - allreduce: {{size: 1GB, min_busbw: {busbw * 0.99 / 1e9:.9f}GB/s}}\n"  # line 8
        f"  - allreduce: {{size: 1GB, min_busbw: {busbw * 1.01 / 1e9:.9f}GB/s}}\n"  # line 9
        f"  - allreduce: {{size: 1GB, max_time: {time_s!r}s}}\n",  # line 10
    )
    above, below, busbw_low, busbw_high, exact = check_design(
        write(tmp_path, "b.yaml", text), builtin_catalogue
    ).findings
    for f in (above, below, exact):
        assert (f.kind, f.target, f.unit, f.comparison) == ("allreduce", "max_time", "s", "<=")
        assert f.predicted == time_s
        assert f.margin == (f.required - f.predicted) / f.required
    for f in (busbw_low, busbw_high):
        assert (f.kind, f.target, f.unit, f.comparison) == ("allreduce", "min_busbw", "B/s", ">=")
        assert f.predicted == busbw
        assert f.margin == (f.predicted - f.required) / f.required
    assert above.required == pytest.approx(1.01 * time_s, rel=1e-6)
    assert (above.passed, above.margin) == (True, pytest.approx(0.01 / 1.01, rel=1e-4))
    assert (below.passed, below.margin) == (False, pytest.approx(-0.01 / 0.99, rel=1e-4))
    assert (busbw_low.passed, busbw_low.margin) == (True, pytest.approx(0.01 / 0.99, rel=1e-4))
    assert (busbw_high.passed, busbw_high.margin) == (False, pytest.approx(-0.01 / 1.01, rel=1e-4))
    assert (exact.required, exact.passed, exact.margin) == (time_s, True, 0.0)
    # each finding sits at its target key: "  - allreduce: {size: 1GB, " is 27 characters
    assert [(f.line, f.col) for f in (above, below, busbw_low, busbw_high, exact)] == [
        (6, 28),
        (7, 28),
        (8, 28),
        (9, 28),
        (10, 28),
    ]


def test_findings_are_numbers(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    (finding,) = check_design(write(tmp_path, "a.yaml", TWO_NODES), builtin_catalogue).findings[:1]
    names = {f.name for f in dataclasses.fields(Finding)}
    assert not names & {"message", "requirement", "detail"}  # wording lives in render.check
    basis = finding.basis
    assert isinstance(basis, CollectiveBasis)
    assert isinstance(basis.estimate, Estimate)
    assert (basis.collective, basis.size_bytes, basis.dtype) == (Collective.ALL_REDUCE, 1e9, "fp32")
    assert basis.algorithm is None
    assert finding.predicted == basis.estimate.time_s  # the estimate used, not a copy
    assert finding.required == 1.0
    assert (finding.file, finding.line, finding.design) == (str(tmp_path / "a.yaml"), 6, "two-dgx")


SU = """\
name: su
nodes: 31
system: dgx-h100
fabric:
  switch: qm9700
  extra_endpoints: 4
requirements:
  - gap: {max_ratio: 9}
  - gap: {max_ratio: 8}
  - switches: {max: 12}
  - switches: {max: 11}
  - oversubscription: {max: 1}
"""


def test_gap_switches_oversubscription(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    gap9, gap8, sw12, sw11, over = check_design(
        write(tmp_path, "su.yaml", SU), builtin_catalogue
    ).findings
    # 450 GB/s / (8 x 50 GB/s / 8) = 9: exactly on the 9x target
    assert (gap9.predicted, gap9.passed, gap9.margin) == (
        pytest.approx(9.0),
        True,
        pytest.approx(0),
    )
    assert (gap8.passed, gap8.margin) == (False, pytest.approx((8 - 9) / 8))
    assert isinstance(gap9.basis, GapBasis)
    assert gap9.basis.up_line_Bps == pytest.approx(450e9)
    assert gap9.basis.out_line_per_gpu_Bps == pytest.approx(50e9)
    # 8 leaf + 4 spine (RA-11333-001 Table 4)
    assert (sw12.predicted, sw12.passed, sw12.margin) == (12.0, True, 0.0)
    assert (sw11.passed, sw11.margin) == (False, pytest.approx((11 - 12) / 11))
    # bisection: 31 x 8 NICs, half of them across the cut at 50 GB/s; no narrower split at 1:1
    assert sw12.basis == SwitchesBasis(leaf=8, spine=4, core=0, bisection_Bps=31 * 8 / 2 * 50e9)
    assert (over.predicted, over.passed, over.unit) == (1.0, True, "down:up")
    assert over.basis == OversubscriptionBasis("sized", 2, limits=(1.0,))
    assert [f.line for f in (gap9, gap8, sw12, sw11, over)] == [8, 9, 10, 11, 12]
    # 32 nodes: the 4 extra endpoints open a second SU (260 leaf ports over one SU's 256), 24
    # switches, and the failing gate says why (review DJ L8); 31 nodes had not said it above
    (thirty_two,) = check_design(
        write(tmp_path, "s32.yaml", SU.replace("nodes: 31", "nodes: 32")), builtin_catalogue
    ).findings[2:3]
    assert (thirty_two.predicted, thirty_two.passed) == (24.0, False)
    assert isinstance(thirty_two.basis, SwitchesBasis)
    assert thirty_two.basis.extra == (4, 24 - 12)
    from ibcalc.render.check import finding_message

    assert finding_message(thirty_two).endswith(
        "16 leaf + 8 spine + 0 core (4 extra endpoints add 12 switches: fabric.extra_endpoints)"
    )
    # extra endpoints that add leaves or a level rather than an SU are said too (review DY 2):
    # 8 DGX H100 not rail-optimized take one 64-port switch; one more port takes 3 leaves of 32
    # down and 2 spines
    flat = (
        "name: f\nnodes: 8\nsystem: dgx-h100\n"
        "fabric: {switch: qm9700, rail_optimized: false, extra_endpoints: 1}\n"
        "requirements:\n  - switches: {max: 1}\n"
    )
    (added,) = check_design(write(tmp_path, "f.yaml", flat), builtin_catalogue).findings
    assert (added.predicted, added.passed) == (5.0, False)
    assert finding_message(added).endswith(
        "3 leaf + 2 spine + 0 core (1 extra endpoint adds 4 switches: fabric.extra_endpoints)"
    )


def test_a_failed_switch_count_names_the_split_that_would_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """126 DGX H100 at 2:1 on QM9700 take 45 switches (42 / 21); a gate of 44 fails, and says
    that 40 / 20 takes 42 (32 leaves + 10 spines) with traffic to every peer 86/84 - 1 = 2.4 %
    slower; a gate of 41 fails without it (42 would fail too), and a passing one says nothing."""
    text = SU.replace("nodes: 31", "nodes: 126").replace(
        "  extra_endpoints: 4\n", "  oversubscription: 2\n"
    )
    extra = (
        "; a leaf of 40 down / 20 up ports (the same ratio) takes 42, with traffic to every peer "
        "2.4% slower"
    )
    for limit, said in ((44, True), (41, False), (45, False)):
        path = write(tmp_path, f"g{limit}.yaml", text.replace("{max: 12}", f"{{max: {limit}}}"))
        code, out, _ = run(["check", str(path)], capsys)
        line = next(x for x in out.splitlines() if x.strip().startswith("total 45 switches"))
        assert line.endswith("24 leaf + 21 spine + 0 core" + (extra if said else ""))
        assert code == 1


def test_whole_numbers_are_json_integers(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    """A switch count and the size nccl-tests runs are whole numbers: JSON carried 12.0 and
    1000000000.0, which a consumer comparing with == against 12 or using as a key trips on."""
    from ibcalc.render.check import finding_dict

    findings = check_design(write(tmp_path, "su.yaml", SU), builtin_catalogue).findings
    sw12 = finding_dict(findings[2])
    assert (sw12["predicted"], sw12["required"]) == (12, 12)  # 8 leaf + 4 spine, as above
    assert type(sw12["predicted"]) is int
    assert type(sw12["required"]) is int
    assert sw12["run_size_bytes"] is None
    (first,) = check_design(write(tmp_path, "a.yaml", TWO_NODES), builtin_catalogue).findings[:1]
    data = finding_dict(first)
    assert data["run_size_bytes"] == 10**9
    assert type(data["run_size_bytes"]) is int
    assert type(data["predicted"]) is float  # a time stays a float


def test_a_ratio_of_whole_numbers_prints_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`max: "4:3"` printed '<= 1.33333333333:1'; a ratio whose decimal ends keeps 'x:1'."""
    text = (
        "name: o\nnodes: 4\nsystem: dgx-h100\nfabric: {oversubscription: '3:2'}\n"
        "requirements:\n  - oversubscription: {max: '4:3'}\n"
        "  - oversubscription: {max: '10:7'}\n  - oversubscription: {max: '3:2'}\n"
        "  - oversubscription: {max: 1.25}\n"
    )
    code, lines, _ = run(["check", str(write(tmp_path, "o.yaml", text))], capsys)
    assert code == 1  # 1.5:1 is over 4:3, 10:7 and 1.25:1
    verdicts = [line for line in lines.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert [line.split("<= ")[1].split()[0] for line in verdicts] == [
        "4:3",
        "10:7",
        "1.5:1",
        "1.25:1",
    ]
    assert "12.5% over the required <= 4:3" in lines  # (1.5 - 4/3) / (4/3)
    # a decimal 12 digits write keeps them (1.015625 had printed as 65:64); one near 4/3 that is
    # not it keeps its digits, and the prediction takes the digits that set it apart (it had
    # printed '<= 4:3' failing against a declared 4:3, 'predicted 1.33:1'); a prediction equal
    # to a ratio of whole numbers reads as it (review CH)
    text = (
        "name: o\nnodes: 4\nsystem: dgx-h100\nfabric: {oversubscription: '4:3'}\n"
        "requirements:\n  - oversubscription: {max: 1.015625}\n"
        "  - oversubscription: {max: 1.333333333333}\n  - oversubscription: {max: '4:3'}\n"
    )
    code, lines, _ = run(["check", str(write(tmp_path, "d.yaml", text))], capsys)
    verdicts = [
        line.split("  ")[2:4] for line in lines.splitlines() if line[:4] in ("PASS", "FAIL")
    ]
    # a prediction of 4/3 prints as every other text prints that ratio, 4:3, which reads back
    # as 4/3 and so never level with a requirement it is not (it had printed 1.33:1 beside one
    # requirement and 1.3333333333333:1 beside another)
    assert verdicts == [
        ["oversubscription (worst tier) <= 1.015625:1", "predicted 4:3"],
        ["oversubscription (worst tier) <= 1.333333333333:1", "predicted 4:3"],
        ["oversubscription (worst tier) <= 4:3", "predicted 4:3"],
    ]


def test_a_ratio_prints_alike_in_the_header_and_every_gate_of_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A declared 2.0149 had read 2.01:1 in the header ('as priced') and beside a max of 2.02,
    but 2.015:1 beside a max of 2.01, where three figures read level with the limit it is over.
    It now reads the fewest figures that sit on its side of every limit of the report, in every
    line: 2.015:1 (over 2.01, under 2.02). A sized leaf of 139 down / 69 up on 208 ports
    (139/69 = 2.014493) beside limits of 2.01 and 2.0145 reads 2.014:1 throughout (over 2.01,
    under 2.0145, which it passes by (2.0145 - 139/69) / 2.0145 = 0.0004 %)."""
    cases = (
        ("fabric: {oversubscription: 2.0149}", "2.02", "2.015:1", ["FAIL", "PASS"]),
        ("fabric: {radix: 208, oversubscription: '139:69'}", "2.0145", "2.014:1", ["FAIL", "PASS"]),
    )
    for index, (fabric, second, shown, verdicts) in enumerate(cases):
        text = (
            f"name: o\nnodes: 32\nsystem: dgx-h100\n{fabric}\nrequirements:\n"
            f"  - oversubscription: {{max: 2.01}}\n  - oversubscription: {{max: {second}}}\n"
        )
        code, out, _ = run(["check", str(write(tmp_path, f"o{index}.yaml", text))], capsys)
        assert code == 1
        lines = out.splitlines()
        assert f"as priced: oversubscription {shown}, " in lines[1]
        gates = [line for line in lines if line[:4] in ("PASS", "FAIL")]
        assert [line[:4] for line in gates] == verdicts
        assert [line.split("predicted ")[1].split()[0] for line in gates] == [shown, shown]
        assert f"worst tier down:up {shown}, 0.2% over the required <= 2.01:1" in out
    assert "margin +0.0004%" in out


def test_one_down_up_ratio_reads_one_way_in_check_and_design_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sized 4:3 fabric had printed its ratio as 1.33333:1 (as priced, the assumptions),
    1.33:1 (the gate's prediction, the ratio fed to the engine, the per-tier ratio) and 4:3
    (a layout note) in one design's check and design show; every text now says 4:3, and JSON
    keeps the number, 4/3."""
    text = (
        "name: r\nnodes: 128\nsystem: mi300x-8\n"
        "fabric: {link: roce-400g, switch: sn5600, rail_optimized: true, oversubscription: '4:3'}\n"
        "requirements:\n  - oversubscription: {max: 1.3}\n"
    )
    path = write(tmp_path, "r.yaml", text)
    code, checked, _ = run(["check", str(path)], capsys)
    assert code == 1  # 4/3 is over 1.3
    _, shown, _ = run(["design", "show", str(path)], capsys)
    said = checked + shown
    assert "as priced: oversubscription 4:3," in checked
    assert "--oversubscription 4:3 " in checked  # the flag reads back as 4/3 to the bit
    assert "<= 1.3:1  predicted 4:3  margin -2.6%" in checked  # (1.3 - 4/3) / 1.3
    assert "oversubscription fed to the engine 4:3" in shown
    assert "down:up per tier 4:3" in shown
    assert "oversubscription 4:3 end to end" in shown
    assert "1.33" not in said
    _, data, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    shown_json = json.loads(data)
    assert shown_json["oversubscription"] == 4 / 3
    assert shown_json["fabric"]["oversubscription_per_tier"] == [4 / 3]


def test_a_margin_of_a_floats_last_place_prints_in_powers_of_ten() -> None:
    """A margin of one ulp had printed '-0.000000000000%' beside a FAIL."""
    from ibcalc.render.check import _margin

    assert _margin(-2.7e-16) == "-3e-14%"
    assert _margin(2.7e-16, signed=False) == "3e-14%"
    assert _margin(-3e-7) == "-0.00003%"  # 12 decimals still print it as before
    assert _margin(0.0) == "+0.0%"


def test_declared_oversubscription(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    text = (
        "name: o\nnodes: 4\nsystem: dgx-h100\nfabric: {oversubscription: '3:2'}\n"
        "requirements:\n  - oversubscription: {max: 1.2}\n"
    )
    (f,) = check_design(write(tmp_path, "o.yaml", text), builtin_catalogue).findings
    assert (f.predicted, f.passed) == (1.5, False)
    assert f.margin == pytest.approx((1.2 - 1.5) / 1.2)
    assert f.basis == OversubscriptionBasis("declared", end_to_end=1.5, limits=(1.2,))


def test_an_oversubscription_line_says_the_taper_the_collectives_are_priced_at(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """[2, 2] tapers each tier 2:1; traffic crossing both sees 2 x 2 = 4:1, which the
    collectives are priced at. The gate judges the worst tier (2:1, passing a max of 2) and
    says the 4:1 beside it (a review: 'as priced: oversubscription 4:1' above a bare 'predicted
    2:1')."""
    from ibcalc.render.check import FileOutcome, finding_message, render_text

    text = (
        "name: o\nnodes: 64\nsystem: dgx-h100\nfabric: {oversubscription: [2, 2]}\n"
        "requirements:\n  - oversubscription: {max: 2}\n  - oversubscription: {max: 1.5}\n"
    )
    path = write(tmp_path, "o.yaml", text)
    result = check_design(path, builtin_catalogue)
    ok, tight = result.findings
    assert (ok.predicted, ok.passed, tight.passed) == (2.0, True, False)
    assert ok.basis == OversubscriptionBasis("declared", end_to_end=4.0, limits=(2.0, 1.5))
    lines = render_text([FileOutcome(path=str(path), check=result)]).splitlines()
    assert any(
        line.startswith("PASS ")
        and "oversubscription (worst tier) <= 2:1  predicted 2:1 (4:1 end to end, as priced)"
        in line
        for line in lines
    )
    assert finding_message(tight).endswith(
        "as declared; traffic crossing every tier sees 4:1 end to end, which the collectives "
        "are priced at"
    )
    # one tier: the worst tier is the end-to-end taper, said once
    single = write(
        tmp_path,
        "p.yaml",
        text.replace("[2, 2]", "[2]").replace("  - oversubscription: {max: 1.5}\n", ""),
    )
    alone = check_design(single, builtin_catalogue)
    (one,) = alone.findings
    assert one.basis == OversubscriptionBasis("declared", end_to_end=2.0, limits=(2.0,))
    one_text = render_text([FileOutcome(path=str(single), check=alone)])
    assert "oversubscription (worst tier) <= 2:1  predicted 2:1  margin" in one_text
    assert "end to end" not in one_text
    # the end-to-end figure keeps the digits the "as priced" line gives it (had read
    # '2:1 (2:1 end to end, as priced)' for [2, 1.001])
    near = write(tmp_path, "n.yaml", text.replace("[2, 2]", "[2, 1.001]"))
    near_text = render_text(
        [FileOutcome(path=str(near), check=check_design(near, builtin_catalogue))]
    )
    assert "predicted 2:1 (2.002:1 end to end, as priced)" in near_text
    # as many digits as tell the end-to-end figure from the tier it exceeds, on the line and
    # in the detail (2.0000002 beside a tier of 2.0000001 had read '2:1')
    hair = write(tmp_path, "h.yaml", text.replace("[2, 2]", "[2.0000001, 1.0000001]"))
    hair_text = render_text(
        [FileOutcome(path=str(hair), check=check_design(hair, builtin_catalogue))]
    )
    assert "(2.0000003:1 end to end, as priced)" in hair_text
    assert "sees 2.0000003:1 end to end" in hair_text
    assert "as priced: oversubscription 2.002:1" in near_text
    # an end-to-end figure that rounds up to the tier's three figures: 2.0051 x 1.00005 is
    # 2.0052005, above the tier of 2.0051, but both print as 2.01:1 at three figures ('2.01:1
    # (2.01:1 end to end, as priced)'); it takes the digits that tell it from the tier
    level = write(tmp_path, "l.yaml", text.replace("[2, 2]", "[2.0051, 1.00005]"))
    level_text = render_text(
        [FileOutcome(path=str(level), check=check_design(level, builtin_catalogue))]
    )
    assert "predicted 2.01:1 (2.0052:1 end to end, as priced)" in level_text
    assert "as priced: oversubscription 2.0052:1" in level_text


def test_tier_ratios_whose_product_is_refused_are_named(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """[64, 64] passes each tier's check but multiplies to 4096:1: the message named '4096.0',
    a value the file never wrote."""
    text = "name: x\nnodes: 4\nsystem: dgx-h100\nfabric: {radix: 64, oversubscription: [64, 64]}\n"
    design, doc = load_design(write(tmp_path, "o.yaml", text), catalogue=builtin_catalogue)
    with pytest.raises(DesignError) as err:
        resolve_design(design, doc, builtin_catalogue)
    (problem,) = err.value.problems
    assert (problem.line, problem.col) == (4, 21)
    assert problem.message == (
        "fabric.oversubscription: the tiers' ratios (64:1 x 64:1) multiply to 4096:1 end to end, "
        "above the 64:1 accepted"
    )


def test_an_unsized_fabric_says_its_cross_leaf_fraction_is_the_default(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    text = "name: x\nnodes: 4\nsystem: dgx-h100\nfabric: {oversubscription: [2, 2]}\n"
    design, doc = load_design(write(tmp_path, "o.yaml", text), catalogue=builtin_catalogue)
    # the text is laid out for the page: compare words, not line breaks
    notes = " ".join(render_design_text(resolve_design(design, doc, builtin_catalogue)).split())
    assert "100% of each node's network traffic assumed to cross the tapered uplinks (the " in notes
    assert (
        "default, every byte, the worst case; the fabric layout sets it; on a rail-optimized "
        "fabric most ring and tree traffic stays inside a leaf: the fabric layout, or a design's "
        "fabric.switch, sets that share): every collective's network term"
    ) in notes


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("rail_optimized", "behind", "how", "effect"),
    [
        # SN5600 run as 128 x 400 GbE at 2:1, 80 down ports (84 / 42 would take 22 switches,
        # 80 / 40 takes 21, both unslowed); rail-optimized, one SU of 80 nodes shares each
        # rail's leaf: f = (128 - 80) / 127 = 38 %, k x f = 0.756 (to every peer); ring, tree
        # and SHARP traffic leaves the SU over one edge per channel: f = 1/80 = 1.25 %, printed
        # to two figures as 1.3 % (it had read 1 %), k x f = 0.025; off its rail
        # 1 - (1 - 48/127)/8 = 0.922, k x f = 1.84
        (
            True,
            48,
            "a rail-optimized leaf serves one rail of an SU of 80 nodes",
            "traffic to every peer (all-to-all with PXN, recursive halving-doubling, PAT) is not "
            "slowed (k x f = 0.756 <= 1); neighbour traffic (ring, tree, SHARP, send/recv; 1.3% "
            "of it crosses) is not slowed (k x f = 0.025 <= 1); traffic off its rail (all-to-all "
            "without PXN; 92% of it crosses) runs x1.84 slower",
        ),
        # otherwise 80 down / 40 up (18 switches, 84 / 42 takes 19): a leaf serves 80 // 8 = 10
        # whole nodes: f = 118 / 127, k x f = 1.86 for all-to-all; a ring leaves each 10-node
        # group once per channel: f = 1/10, k x f = 0.2
        (
            False,
            118,
            "a leaf serves 80 // 8 = 10 whole nodes",
            "traffic to every peer (all-to-all, recursive halving-doubling, PAT) runs x1.86 "
            "slower; neighbour traffic (ring, tree, SHARP, send/recv; 10% of it crosses) is not "
            "slowed (k x f = 0.2 <= 1)",
        ),
    ],
)
def test_design_notes_say_how_the_cross_leaf_fraction_was_derived(
    tmp_path: Path,
    builtin_catalogue: Catalogue,
    rail_optimized: bool,
    behind: int,
    how: str,
    effect: str,
) -> None:
    """The notes said '2:1 slows network-bound all-to-all' beside 'no slowdown' (stale: every
    network term pays max(1, k x f)); they now say where f came from, once."""
    text = (EXAMPLES / "roce-400g-2to1.yaml").read_text(encoding="utf-8")
    if not rail_optimized:
        text = text.replace("rail_optimized: true", "rail_optimized: false")
    design, doc = load_design(write(tmp_path, "r.yaml", text), catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    # the text is laid out for the page: compare words, not line breaks
    notes = " ".join(render_design_text(resolved).split())
    f = behind / 127
    assert f"cross-leaf fraction {f:.0%} = (nodes - group) / (nodes - 1) = {behind}/127" in notes
    assert how in notes
    assert effect in " ".join(notes.split())
    assert "slows network-bound all-to-all" not in notes


THREE_TIERS = """\
name: t
nodes: {nodes}
system: dgx-h100
fabric: {{switch: qm9700, oversubscription: [1, {core}], tiers: 3}}
"""


@pytest.mark.parametrize(("nodes", "behind_pod"), [(200, 0), (2000, 2000 - 48 * 32)])
def test_a_tapered_core_slows_only_the_traffic_that_reaches_it(
    tmp_path: Path, builtin_catalogue: Catalogue, nodes: int, behind_pod: int
) -> None:
    """200 DGX H100 on a rail-optimized 3-tier QM9700 fabric, leaves 1:1 and spines 4:1: every
    rail's 7 SUs sit in one pod (up to 48 leaves, one per SU), so no traffic reaches the core,
    yet the engine was given 4:1 x the 84 % cross-leaf share (1 GB all-reduce 18.3 ms against
    5.64 ms non-blocking). Per tier: the leaves slow traffic by k1 x f1, the spines by
    k1 x k2 x f2, f2 the share of peers outside the node's pod; the worst sets the pace."""
    tapered = write(tmp_path, "t.yaml", THREE_TIERS.format(nodes=nodes, core=4))
    flat = write(tmp_path, "f.yaml", THREE_TIERS.format(nodes=nodes, core=1))
    resolved = {}
    for name, path in (("tapered", tapered), ("flat", flat)):
        design, doc = load_design(path, catalogue=builtin_catalogue)
        resolved[name] = resolve_design(design, doc, builtin_catalogue)
    f1 = (nodes - 32) / (nodes - 1)  # peers outside the node's SU of 32
    f2 = behind_pod / (nodes - 1)  # peers outside its pod of 48 SUs
    assert resolved["tapered"].oversubscription == 4
    assert resolved["tapered"].cross_leaf_fraction == pytest.approx(max(f1, 4 * f2) / 4)
    # both products stay under 1 here, so the taper slows nothing: the times are equal
    assert max(f1, 4 * f2) <= 1
    times = {
        name: estimate_on(r.cluster, Collective.ALL_REDUCE, 1e9).time_s
        for name, r in resolved.items()
    }
    assert times["tapered"] == times["flat"]
    notes = " ".join(render_design_text(resolved["tapered"]).split())
    pod = min(nodes, 48 * 32)
    assert f"pod share f2 {f2:.0%}, the peers outside the node's pod of {pod} nodes" in notes


def test_three_tiers_name_the_leaf_share_apart_from_the_cross_leaf_fraction(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """200 DGX H100 on three tiers at [1, 4]: the leaves' share is f1 = (200 - 32) / 199 = 84 %,
    the engine's cross-leaf fraction f = max(1 x f1, 4 x 0) / 4 = 0.211, which the JSON gives as
    cross_leaf_fraction and the line above the derivation as 21 %. The derivation had opened
    "cross-leaf fraction 84%": two figures under one name in one report."""
    path = write(tmp_path, "t.yaml", THREE_TIERS.format(nodes=200, core=4))
    design, doc = load_design(path, catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    f = 168 / 199 / 4
    assert design_dict(resolved)["cross_leaf_fraction"] == pytest.approx(f)
    notes = " ".join(render_design_text(resolved).split())
    assert "21% of each node's network traffic assumed to cross the tapered uplinks" in notes
    assert "at the leaf tier: leaf share f1 84% = (nodes - group) / (nodes - 1) = 168/199" in notes
    assert "the leaves slow traffic x0.844 (k1 x f1)" in notes
    assert "gets the cross-leaf fraction f = 0.211" in notes
    assert "cross-leaf fraction 84%" not in notes


def test_three_tiers_print_a_leaf_slowdown_just_above_1_as_the_estimate_note_does(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """200 DGX H100 on three tiers at [32:27, 4]: the leaves slow traffic to every peer by
    k1 x f1 = 32/27 x 168/199 = 1.00056, which the note above prints 'runs x1.001 slower' (k x f,
    the same product); the derivation had printed it with :.3g, 'the leaves slow traffic x1'."""
    text = THREE_TIERS.format(nodes=200, core=4).replace("[1, 4]", '["32:27", 4]')
    path = write(tmp_path, "t.yaml", text)
    design, doc = load_design(path, catalogue=builtin_catalogue)
    notes = " ".join(render_design_text(resolve_design(design, doc, builtin_catalogue)).split())
    assert (
        "traffic to every peer (all-to-all with PXN, recursive halving-doubling, PAT) runs "
        "x1.001 slower" in notes
    )
    assert "the leaves slow traffic x1.001 (k1 x f1), the spines x0 (k1 x k2 x f2)" in notes


def test_three_tiers_print_the_neighbour_share_to_two_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """200 DGX H100 on three tiers at [1, 4]: neighbour traffic leaves a 32-node group over one
    edge per channel (f1 = 1/32 = 3.125 %), and the engine gets f = max(1 x 1/32, 4 x 0) / 4 =
    1/128 = 0.78125 % of it crossing. design show had printed '1% of it crosses' a line above
    '1/32 of it (3.12%)'; both are now two figures: 0.78 % and 3.1 %."""
    path = write(tmp_path, "t.yaml", THREE_TIERS.format(nodes=200, core=4))
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "neighbour traffic (ring, tree, SHARP, send/recv; 0.78% of it crosses)" in text
    assert "over one edge per channel: 1/32 of it (3.1%) crosses" in text
    # f = (200 - 32) / 199 / 4 = 21.1 %: whole percent, as before
    assert "21% of each node's network traffic assumed to cross" in text
    assert "; 1% of it crosses" not in text


# --- problems at their keys -------------------------------------------------------------------

FABRIC_LINK = """\
name: m
nodes: 4
system: dgx-h100
fabric:
  link: ndr
  sharp: true
  oversubscription: 2
"""
INTER = """\
name: m
nodes: 4
system: dgx-h100
inter: ndr
"""


@pytest.mark.parametrize(
    ("text", "field", "line", "col", "key"),
    [
        (FABRIC_LINK, "inter", 5, 3, "fabric.link"),
        (FABRIC_LINK, "sharp", 6, 3, "fabric.sharp"),
        (FABRIC_LINK, "oversubscription", 7, 3, "fabric.oversubscription"),
        (FABRIC_LINK, "nodes", 2, 1, "nodes"),
        (FABRIC_LINK, "system", 3, 1, "system"),
        (INTER, "inter", 4, 1, "inter"),
        # not in the file: named by its key, placed at nodes
        (INTER, "sharp", 2, 1, "fabric.sharp"),
        (INTER, "nics_per_node", 2, 1, "nics_per_node"),
    ],
)
def test_cluster_error_fields_map_to_yaml_keys(
    text: str, field: str, line: int, col: int, key: str
) -> None:
    doc = load_yaml("m.yaml", text=text)
    problem = cluster_problem(doc, ClusterError(f"{{{field}}} x is refused", field=field))
    assert (problem.path, problem.line, problem.col) == ("m.yaml", line, col)
    assert problem.message == f"{key}: x is refused"


def test_cluster_error_names_other_fields_as_keys() -> None:
    doc = load_yaml("m.yaml", text=FABRIC_LINK)
    exc = ClusterError("needs {sharp}, {inter} and {nics_per_node}", field="nics_per_node")
    problem = cluster_problem(doc, exc)
    # nics_per_node is not in the file: the first named field it sets (fabric.sharp, line 6)
    assert (problem.line, problem.col) == (6, 3)
    assert problem.message == "nics_per_node: needs fabric.sharp, fabric.link and nics_per_node"
    inter = load_yaml("i.yaml", text="name: i\nnodes: 2\n")
    assert field_keys(inter)["inter"] == "inter (or fabric.link)"
    assert field_keys(load_yaml("m.yaml", text=INTER))["inter"] == "inter"


@pytest.mark.parametrize(
    ("text", "line", "col", "start", "words"),
    [
        # 20 trays x 4 GPUs = 80 GPUs: not whole 72-GPU NVLink domains (line 2: nodes)
        ("name: g\nnodes: 20\nsystem: gb200-nvl72\n", 2, 1, "nodes: ", "multiple of 18 nodes"),
        # 8 x 16 = 128:1 end to end, beyond the 64:1 ClusterSpec accepts (line 5)
        (
            "name: o\nnodes: 4\nsystem: dgx-h100\nfabric:\n  oversubscription: [8, 16]\n",
            5,
            3,
            "fabric.oversubscription: ",
            "multiply to 128:1 end to end, above the 64:1 accepted",
        ),
        # 512 GPUs per node would need 512 NICs: nics_per_node is not in the file
        (
            "name: n\nnodes: 4\ngpus_per_node: 512\nintra: nvlink4\ninter: ndr\n",
            2,
            1,
            "nics_per_node: ",
            "give nics_per_node",
        ),
    ],
)
def test_cluster_errors_from_the_library_are_located(
    tmp_path: Path,
    builtin_catalogue: Catalogue,
    text: str,
    line: int,
    col: int,
    start: str,
    words: str,
) -> None:
    problem = only_problem(tmp_path, builtin_catalogue, text, "c.yaml")
    assert (problem.line, problem.col) == (line, col)
    assert problem.message.startswith(start)
    assert words in problem.message
    assert "--" not in problem.message


def test_every_problem_at_once(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    text = """\
name: all
nodes: 4
system: dgx-h10
intra: ndr
inter: ndr
fabric:
  link: hdr
  switch: qm970
  colour: red
requirements:
  - allreduce: {size: 1GB, max_time: 45}
"""
    with pytest.raises(DesignError) as info:
        check_design(write(tmp_path, "all.yaml", text), builtin_catalogue)
    problems = info.value.problems
    assert [(p.line, p.col) for p in problems] == [(3, 1), (4, 1), (7, 3), (8, 3), (9, 3), (11, 28)]
    messages = [p.message for p in problems]
    assert messages[0].startswith("system: unknown system 'dgx-h10' (did you mean dgx-h100")
    assert messages[1] == "intra: ndr is a scale-out link; use a scale-up or PCIe link"
    assert messages[2] == "fabric.link: give the scale-out link once: inter or fabric.link"
    assert messages[3].startswith("fabric.switch: unknown switch 'qm970' (did you mean")
    assert messages[4].startswith("fabric.colour: unknown key")
    assert "needs a unit" in messages[4 + 1]


def test_duplicate_keys_are_reported_with_the_schemas_problems(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """A duplicate key had stopped the file at the first one: the unknown key and the second
    duplicate showed only on later runs (review CC L6)."""
    text = (
        "name: dup\nnodes: 31\nnodes: 64\nsystem: dgx-h100\nsytem: x\nrequirements:\n"
        "  - allreduce: {size: 1GB, max_time: 6ms, max_time: 7ms}\n"
    )
    with pytest.raises(DesignError) as info:
        check_design(write(tmp_path, "dk.yaml", text), builtin_catalogue)
    assert [(p.line, p.col, p.message) for p in info.value.problems] == [
        (3, 1, "duplicate key 'nodes' (first at line 2)"),
        (5, 1, "sytem: unknown key (did you mean system?)"),
        (7, 43, "duplicate key 'max_time' (first at column 28)"),
    ]


def test_design_show_reports_names_and_schema_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "s.yaml", "name: s\nnodes: 2\nsystem: dgx-h10\nfabrik: {}\n")
    code, out, err = run(["design", "show", str(path)], capsys)
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"error: {path}:3:1: system: unknown system 'dgx-h10'")
    assert lines[1] == (f"error: {path}:4:1: fabrik: unknown key (did you mean fabric?)")


def test_an_enum_typo_gets_the_closest_choice_and_an_empty_key_is_shown_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic lists an enum's choices; the closest is named as unknown names are. An empty
    key was located as "document"."""
    path = write(tmp_path, "e.yaml", "name: e\nnodes: 2\nsystem: dgx-h100\nhost_cpu: amdd\n'': 1\n")
    code, out, err = run(["check", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {path}:4:1: host_cpu: 'amdd' is not one of 'intel', 'amd' or 'arm' "
        "(did you mean amd?)",
        f"error: {path}:5:1: '': unknown key (not allowed here)",
    ]


def test_design_errors_are_design_errors(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    for text, line in [
        ("name: x\nnodes: [\n", 3),  # YAML syntax: the unclosed list is seen on line 3
        ("- a list\n", 1),
        ("name: x\nnodes: 4\nsystem: dgx-h100\nrequirements:\n  - switches: {max: 3}\n", 5),
    ]:
        with pytest.raises(DesignError) as info:
            check_design(write(tmp_path, "e.yaml", text), builtin_catalogue)
        assert info.value.problems[0].line == line


# --- no command-line flags in design messages or notes ------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # RoCE has no SHARP: the request is noted, by key
        (
            "name: r\nnodes: 4\nsystem: mi300x-8\nfabric:\n  link: roce-400g\n  sharp: true\n",
            "SHARP requested but roce-400g has no SHARP capability; not used",
        ),
        (
            "name: r\nnodes: 4\nsystem: mi300x-8\ninter: roce-400g\nfabric: {sharp: true}\n",
            "SHARP requested but roce-400g has no SHARP capability; not used",
        ),
        # NDR has SHARP, not enabled: the hint names the YAML key
        ("name: i\nnodes: 4\nsystem: dgx-h100\n", "enable with fabric.sharp"),
        # no preset: every assumed value names its key
        ("name: p\nnodes: 4\n", "change with system, gpus_per_node, intra"),
        ("name: p\nnodes: 2\ngpus_per_node: 8\nintra: nvlink4\n", "assumed (inter (or fabric"),
    ],
)
def test_design_show_names_keys_not_flags(
    builtin_catalogue: Catalogue, text: str, expected: str
) -> None:
    design, doc = load_design("d.yaml", text=text, catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    shown = render_design_text(resolved)
    assert expected in shown
    assert "--" not in shown
    assert not any("--" in note for note in design_dict(resolved)["assumptions"])


def test_engine_refusal_names_the_design_key(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    text = """\
name: n
nodes: 4
system: dgx-h100
nvls: false
requirements:
  - allreduce: {size: 1GB, max_time: 1s, algo: nvls}
"""
    problem = only_problem(tmp_path, builtin_catalogue, text, "n.yaml")
    # "  - allreduce: {size: 1GB, max_time: 1s, " is 41 characters
    assert (problem.line, problem.col) == (6, 42)
    assert "with nvls not turned off" in problem.message
    assert "--" not in problem.message


@pytest.mark.parametrize(
    ("written", "algorithm"),
    [("NVLSTree", "nvlstree"), ("Ring", "ring"), ("CollnetDirect", "collnet"), ("Tree", "tree")],
)
def test_a_design_takes_ncclss_algorithm_names_as_algo_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, algorithm: str
) -> None:
    """`algo: NVLSTree` had been refused (exit 2) where `--algo NVLSTree` runs (a review): the
    same names, the same figure."""
    text = (
        "name: n\nnodes: 4\nsystem: dgx-h100\nfabric: {link: ndr, sharp: true}\n"
        "requirements:\n"
        f"  - allreduce: {{size: 1GB, max_time: 1s, algo: {written}}}\n"
    )
    path = write(tmp_path, "n.yaml", text)
    code, out, err = run(["check", str(path), "--format", "json"], capsys)
    assert code == 0, err
    (finding,) = json.loads(out)["files"][0]["findings"]
    flags = ["-s", "1GB", "--system", "dgx-h100", "-N", "4", "--fabric", "ndr", "--sharp"]
    flags += ["--algo", written]
    code, cli, err = run(["allreduce", *flags, "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(cli)["algorithm"] == algorithm
    assert finding["predicted"] == json.loads(cli)["time_s"]


def test_pessimistic_check_judges_the_slow_end_of_the_error_band(tmp_path: Path) -> None:
    """--pessimistic: a time target is judged against predicted / (1 + q10), the 10th
    percentile of held-out errors for the estimate's regime and transport class, worked out
    here from the shipped band rather than taken from the engine's own range."""
    from ibcalc.catalogue.cost_params import load_cost_params
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.design.check import check_design

    path = tmp_path / "d.yaml"
    path.write_text(
        "name: pessimistic\nnodes: 2\nsystem: dgx-h100\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 1s}\n",
        encoding="utf-8",
    )
    cat = load_catalogue(use_env=False)
    plain = check_design(path, cat).findings[0]
    slow = check_design(path, cat, pessimistic=True).findings[0]
    q10 = load_cost_params(use_env=False).error_band.time_error_quantiles["bandwidth"]["verbs"][0]
    assert not plain.pessimistic
    assert slow.pessimistic
    assert slow.predicted == pytest.approx(plain.predicted / (1 + q10), rel=1e-9)
    assert slow.predicted > plain.predicted
    # a PASS line and the summary say so: the 6.71 ms of the SU example printed like 5.43 ms
    from ibcalc.render.check import FileOutcome, render_text

    text = render_text(
        [FileOutcome(path=str(path), check=check_design(path, cat, pessimistic=True))]
    )
    lines = text.splitlines()
    assert lines[1].startswith("PASS ")
    # the pessimistic figure is the slow end of the band printed beside it
    from ibcalc.design.check import CollectiveBasis

    assert isinstance(plain.basis, CollectiveBasis)
    band = plain.basis.estimate.time_s_range
    assert band is not None
    assert band[1] == pytest.approx(slow.predicted, rel=1e-9)
    low, high = (f"{t * 1e3:.3g}" for t in band)
    assert f" (pessimistic end of {low}-{high})  margin " in lines[1]
    # without --pessimistic the line shows the estimate and the same range beside it
    (plain_line,) = (
        line
        for line in render_text(
            [FileOutcome(path=str(path), check=check_design(path, cat))]
        ).splitlines()
        if line.startswith("PASS ")
    )
    assert f"predicted {plain.predicted * 1e3:.3g} ms ({low}-{high})  margin " in plain_line
    assert lines[-1].endswith(
        "; collective figures at the pessimistic end of each estimate's error band"
    )
    plain_text = render_text([FileOutcome(path=str(path), check=check_design(path, cat))])
    assert "(pessimistic)" not in plain_text
    assert "pessimistic end" not in plain_text


def test_host_cpu_key_overrides_the_presets(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    # 2 x DGX A100 (AMD hosts): a 1 KiB ring/LL all-gather pays NCCL's 2 us per intra-node
    # step; with host_cpu: intel, 1 us: 14 steps, 14 us less
    body = (
        "nodes: 2\nsystem: dgx-a100\n{extra}requirements:\n"
        "  - allgather: {{size: 1KiB, max_time: 1ms}}\n"
    )
    preset = write(tmp_path, "a.yaml", "name: a\n" + body.format(extra=""))
    intel = write(tmp_path, "b.yaml", "name: b\n" + body.format(extra="host_cpu: intel\n"))
    (amd_finding,) = check_design(preset, builtin_catalogue).findings
    (intel_finding,) = check_design(intel, builtin_catalogue).findings
    assert amd_finding.predicted - intel_finding.predicted == pytest.approx(14e-6, rel=1e-6)


@pytest.mark.parametrize(
    ("system", "fabric", "words"),
    [
        # DGX H100's NICs are NDR InfiniBand; SN5600 is a Spectrum-4 Ethernet switch
        ("dgx-h100", "{switch: sn5600}", "sn5600 is an Ethernet switch and the NICs are ndr"),
        # RoCE NICs into a Quantum-2 InfiniBand switch
        (
            "dgx-h100",
            "{switch: qm9700, link: roce-400g}",
            "qm9700 is an InfiniBand switch and the NICs are roce-400g (Ethernet)",
        ),
        # AWS EFA is no network a catalogued switch builds
        ("aws-p5", "{switch: qm9700}", "the NICs are efa-v2 (AWS EFA)"),
    ],
)
def test_a_switch_of_another_network_is_refused(
    tmp_path: Path, builtin_catalogue: Catalogue, system: str, fabric: str, words: str
) -> None:
    """A DGX H100 design on Spectrum-4 had passed with '12 switches': the sizing matched the
    port speed (400 Gb/s) and never the network."""
    text = (
        f"name: t\nnodes: 64\nsystem: {system}\nfabric: {fabric}\n"
        "requirements: [{switches: {max: 100000}}]\n"
    )
    problem = only_problem(tmp_path, builtin_catalogue, text, "d.yaml")
    assert (problem.line, problem.col) == (4, 10)
    assert words in problem.message


def test_printed_figures_agree_with_the_verdict(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """`max_time: 5.43ms` failed against a prediction printed '5.43 ms' with 'margin -0.1%', and
    `gap: {max_ratio: 8.999}` printed '9.0x, 0.0% over the required <= 9.0x'. The requirement
    keeps the digits it was written with; the prediction takes the digits that put it on the
    side of the requirement its verdict says; a margin under 0.05 % gets the decimals it needs."""
    from ibcalc.render.check import finding_dict, finding_message

    base = check_design(write(tmp_path, "a.yaml", TWO_NODES), builtin_catalogue).findings[0]

    def finding(predicted: float, required: float) -> Finding:
        margin = (required - predicted) / required
        return dataclasses.replace(
            base, predicted=predicted, required=required, passed=margin >= 0, margin=margin
        )

    # 5.4349 ms against <= 5.434 ms: three digits would print 5.43, under the requirement
    late = finding(5.4349e-3, 5.434e-3)
    assert finding_message(late).startswith("time 5.435 ms, 0.02% over the required <= 5.434 ms;")
    # 5.4349 ms against <= 5.43 ms: 5.43 both; four digits tell them apart
    assert finding_message(finding(5.4349e-3, 5.43e-3)).startswith(
        "time 5.435 ms, 0.1% over the required <= 5.43 ms;"
    )
    # 5.4261 ms against <= 5.43 ms passes: printed 5.426, not 5.43
    assert finding_message(finding(5.4261e-3, 5.43e-3)).startswith(
        "time 5.426 ms, required <= 5.43 ms (margin +0.1%)"
    )
    # clear of the requirement: three digits as everywhere else
    assert finding_message(finding(5.52e-3, 45e-3)).startswith(
        "time 5.52 ms, required <= 45 ms (margin +87.7%)"
    )
    data = finding_dict(late)
    assert (data["predicted_text"], data["required_text"]) == ("5.435 ms", "5.434 ms")
    # a requirement written with 9 digits keeps them; the prediction follows
    assert finding_message(finding(53.2345e-3, 53.234485e-3)).startswith(
        "time 53.2345 ms, 0.00003% over the required <= 53.234485 ms;"
    )
    # a requirement 12 digits cannot give back keeps its digits, up to 17 (8.9999999999999
    # had printed as '<= 9x' failing beside 'predicted 9.00x': review CI)
    assert finding_message(finding(53.2345e-3, 51.32505128205128e-3)).startswith(
        "time 53.2 ms, 3.7% over the required <= 51.32505128205128 ms;"
    )
    # ratios print to three figures: 8.951 passing <= 8.96 reads 8.95x
    with_gap = TWO_NODES + "  - gap: {max_ratio: 10}\n"
    gap = check_design(write(tmp_path, "g.yaml", with_gap), builtin_catalogue).findings[-1]
    assert gap.unit == "x"

    def ratio(predicted: float, required: float) -> Finding:
        margin = (required - predicted) / required
        return dataclasses.replace(
            gap, predicted=predicted, required=required, passed=margin >= 0, margin=margin
        )

    assert "8.95x, required <= 8.96x (margin +0.1%)" in finding_message(ratio(8.951, 8.96))
    assert "9.04x, 0.4% over the required <= 9x" in finding_message(ratio(9.04, 9.0))
    assert "9.00x, 0.000000000001% over the required <= 8.9999999999999x" in finding_message(
        ratio(9.0, 8.9999999999999)
    )
    # one ulp under 9 too, and no scaling noise where the unit scales (1057.38 MB/s had
    # printed as 1.0573800000000002 GB/s: review CJ)
    assert "over the required <= 8.999999999999998x" in finding_message(
        ratio(9.0, 8.999999999999998)
    )
    rates = TWO_NODES.replace("min_busbw: 1GB/s", "min_busbw: 1057.38 MB/s")
    rate = check_design(write(tmp_path, "r.yaml", rates), builtin_catalogue).findings[1]
    # in the prefix written, as binary units keep theirs (review CW: 314572800kB/s had
    # printed as 314.5728 GB/s)
    assert finding_dict(rate)["required_text"] == "1057.38 MB/s"
    # the digits are the exact value's, not a float product's (review CK: 73922.90701300688 GB/s
    # had printed as 73922.907013006887)
    rates = TWO_NODES.replace("min_busbw: 1GB/s", "min_busbw: 73922.90701300688 GB/s")
    rate = check_design(write(tmp_path, "r2.yaml", rates), builtin_catalogue).findings[1]
    assert finding_dict(rate)["required_text"] == "73922.90701300688 GB/s"
    # a prediction an ulp or a few from its requirement prints on its side, with the digits
    # that tell them apart (review CL: 'FAIL <= 13.333333333333332 ms  predicted 13.3 ms')
    required = 0.013333333333333332
    late = finding(math.nextafter(math.nextafter(required, 1.0), 1.0), required)
    assert finding_message(late).startswith(
        "time 13.33333333333334 ms, 3e-14% over the required <= 13.333333333333332 ms;"
    )
    # a prediction equal to its requirement prints as it (review CK: 0.7590818048762339 us
    # beside 'predicted 0.759081804876234 us')
    level = finding(0.7590818048762339e-6, 0.7590818048762339e-6)
    assert finding_message(level).startswith(
        "time 0.7590818048762339 us, required <= 0.7590818048762339 us (margin +0.0%)"
    )
    assert "9.00x, 0.01% over the required <= 8.999x" in finding_message(ratio(9.0, 8.999))
    # the label keeps the requirement's digits too (it had read '<= 9x' for 8.99999999)
    from ibcalc.render.check import finding_requirement

    assert finding_requirement(ratio(9.0, 8.99999999)) == (
        "gap: intra/inter per GPU <= 8.99999999x"
    )


def test_messages_name_no_class_and_suggest_keys_of_their_own_section(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """'fabric: 3' said 'Input should be a valid dictionary or instance of FabricSpec', and an
    unknown key of a gap target was offered 'intra', a key the target does not take."""
    text = (
        "name: t\nnodes: 2\nsystem: dgx-h100\nfabric: 3\nrequirements:\n"
        "  - gap: {max_ratio: 10, extra: 1}\n"  # line 6
        "  - allreduce: {size: 1GB, max_tme: 1s}\n"  # line 7
        "  - null\n"  # line 8
    )
    with pytest.raises(DesignError) as info:
        check_design(write(tmp_path, "d.yaml", text), builtin_catalogue)
    messages = {(p.line, p.message) for p in info.value.problems}
    assert messages == {
        (4, "fabric: 3 is not a mapping: give its keys below it"),
        (6, "requirements[0].gap.extra: unknown key (not allowed here)"),
        (
            7,
            "requirements[1].allreduce.max_tme: unknown key (did you mean max_time?)",
        ),
        (8, "requirements[2]: null is not a mapping: give its keys below it"),
    }


@pytest.mark.parametrize(
    ("other", "line", "said"),
    [
        (
            "oversubscription: 0.5",
            7,
            "fabric.oversubscription: oversubscription 0.5 must be >= 1 (down:up; did you mean "
            "2:1?)",
        ),
        ("sharp: 3", 7, "fabric.sharp: 3 is not true or false"),
        (None, 0, ""),
    ],
)
def test_switch_and_radix_together_is_said_beside_the_fabric_s_other_problems(
    tmp_path: Path, builtin_catalogue: Catalogue, other: str | None, line: int, said: str
) -> None:
    """Review DJ M2: the pair was checked after the fabric's fields, so another problem in
    the fabric hid it until mended, where the doc says every problem is reported at once."""
    text = "name: x\nnodes: 4\nsystem: dgx-h100\nfabric:\n  switch: qm9700\n  radix: 64\n"
    text += (f"  {other}\n" if other else "") + "requirements:\n  - gap: {max_ratio: 9}\n"
    with pytest.raises(DesignError) as info:
        check_design(write(tmp_path, "d.yaml", text), builtin_catalogue)
    expected = {(4, "fabric: give either switch or radix, not both")}
    if other:
        expected.add((line, said))
    assert {(p.line, p.message) for p in info.value.problems} == expected


@pytest.mark.parametrize("key", ["tiers: 2", "extra_endpoints: 4", "rail_optimized: false"])
def test_sizing_keys_need_a_switch_or_radix(
    tmp_path: Path, builtin_catalogue: Catalogue, key: str
) -> None:
    """rail_optimized: false and true predicted the same 12.7 ms on an unsized fabric, without a
    word; like tiers and extra_endpoints it needs a fabric to size."""
    text = (
        f"name: t\nnodes: 16\nsystem: dgx-h100\nfabric: {{{key}, oversubscription: 2}}\n"
        "requirements: [{gap: {max_ratio: 10}}]\n"
    )
    problem = only_problem(tmp_path, builtin_catalogue, text, "d.yaml")
    name = key.split(":")[0] if "rail" not in key else key
    assert problem.message == f"fabric: {name} needs switch or radix to size the fabric"


def test_the_default_rail_layout_may_be_written_on_an_unsized_fabric(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    text = (
        "name: t\nnodes: 16\nsystem: dgx-h100\n"
        "fabric: {link: ndr, rail_optimized: true, oversubscription: 2}\n"
        "requirements: [{gap: {max_ratio: 10}}]\n"
    )
    assert check_design(write(tmp_path, "d.yaml", text), builtin_catalogue).passed


def test_a_blank_name_is_refused(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    """name: "  " passed, and every report header showed no name."""
    text = 'name: "  "\nnodes: 2\nsystem: dgx-h100\nrequirements: [{gap: {max_ratio: 10}}]\n'
    problem = only_problem(tmp_path, builtin_catalogue, text, "d.yaml")
    assert (problem.line, problem.message) == (
        1,
        "name: the name is blank: give it a visible character",
    )


@pytest.mark.parametrize(
    "name", ["dgx-h100-superpod-su-ndr.yaml", "dgx-a100-pod-hdr.yaml", "roce-400g-2to1.yaml"]
)
def test_a_sized_fabric_names_no_option_as_ignored(builtin_catalogue: Catalogue, name: str) -> None:
    """A sized 1:1 fabric passed its derived cross-leaf fraction to the cluster, which then
    said 'the fabric layout 0 ignored: the leaves are not oversubscribed' of a fraction nobody
    gave; a tapered one (roce-400g-2to1) keeps its fraction and its slowdown note."""
    from ibcalc.design.check import load_design, resolve_design

    examples = Path(__file__).resolve().parents[2] / "examples"
    design, doc = load_design(examples / name, catalogue=builtin_catalogue)
    notes = resolve_design(design, doc, builtin_catalogue).cluster.assumptions
    assert not any("ignored" in note for note in notes), notes
    if name.startswith("roce"):
        assert any("of each node's network traffic" in note for note in notes)


def test_a_switch_count_on_one_rack_says_there_is_no_network_to_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """18 GB200 trays are one NVL72 domain: with fabric.switch given, the refusal told the user
    to give fabric.switch or fabric.radix."""
    text = (
        "name: gb1\nnodes: 18\nsystem: gb200-nvl72\nfabric: {switch: qm9700}\n"
        "requirements: [switches: {max: 10}]\n"
    )
    path = write(tmp_path, "gb1.yaml", text)
    code, out, err = run(["check", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {path}:5:16: requirements[0].switches: a switch count needs a scale-out "
        "fabric: the whole cluster is one scale-up domain, with no network to size\n"
    )
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    assert "fabric: not sized (one scale-up domain: no network to size)" in out


@pytest.mark.parametrize(
    "cluster",
    ["nodes: 18\nsystem: gb200-nvl72\nfabric: {link: ndr}\n", "nodes: 1\nsystem: dgx-h100\n"],
)
def test_a_switch_count_on_one_domain_without_a_switch_asks_for_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: str
) -> None:
    """One NVL72 rack with only fabric.link, or one DGX H100 node: check's refusal of a switch
    count had said 'give fabric.switch or fabric.radix', which sizes nothing there, beside
    design show's 'one scale-up domain: no network to size'. Four nodes still get the hint
    (tests/design/test_design.py)."""
    path = write(
        tmp_path, "one.yaml", "name: one\n" + cluster + "requirements:\n  - switches: {max: 10}\n"
    )
    code, out, err = run(["check", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.endswith(
        "requirements[0].switches: a switch count needs a scale-out fabric: the whole cluster "
        "is one scale-up domain, with no network to size\n"
    )


@pytest.mark.parametrize(
    "cluster",
    ["nodes: 18\nsystem: gb200-nvl72\nfabric: {link: ndr}\n", "nodes: 1\nsystem: dgx-h100\n"],
)
def test_design_show_of_one_domain_without_a_switch_asks_for_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: str
) -> None:
    """One NVL72 rack with no switch named, or one DGX H100 node, has no network to size: design
    show had said 'fabric: not sized (give fabric.switch or fabric.radix)', and naming one sizes
    nothing (the rack above). Two nodes still get the hint."""
    requirement = "requirements: [allreduce: {size: 1GB, max_time: 1s}]\n"
    path = write(tmp_path, "one.yaml", "name: one\n" + cluster + requirement)
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    assert "fabric: not sized (one scale-up domain: no network to size)" in out
    two = write(tmp_path, "two.yaml", "name: two\nnodes: 2\nsystem: dgx-h100\n" + requirement)
    code, out, _ = run(["design", "show", str(two)], capsys)
    assert code == 0
    assert "fabric: not sized (give fabric.switch or fabric.radix)" in out


def test_design_show_json_gives_the_port_rate_the_text_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The text says 'qm9700 as 64 x 400 Gb/s ports'; the JSON had the 64 and not the rate:
    400 Gb/s = 50e9 B/s per direction."""
    path = Path(__file__).resolve().parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    assert code == 0
    fabric = json.loads(out)["fabric"]
    assert (fabric["switch"], fabric["radix"], fabric["port_Bps"]) == ("qm9700", 64, 400e9 / 8)


NON_RAIL = """\
name: n
nodes: {nodes}
system: dgx-h100
fabric:
  switch: qm9700
  rail_optimized: false
  oversubscription: {k}
  sharp: {sharp}
"""


@pytest.mark.parametrize(("nodes", "sharp"), [(32, False), (128, True)])
def test_neighbour_traffic_crosses_a_tapered_leaf_once_per_channel(
    tmp_path: Path, builtin_catalogue: Catalogue, nodes: int, sharp: bool
) -> None:
    """QM9700 leaves at 2:1 keep 42 of 64 ports down: a non-rail leaf holds 42 // 8 = 5 whole
    DGX H100. Traffic to every peer crosses for (N - 5) / (N - 1) of a node's peers: k x f =
    2 x 27/31 = 1.74 on 32 nodes. A ring (or tree, or SHARP's aggregation tree) placed leaf by
    leaf leaves each 5-node group over one edge per channel, 1/5 of the group's rails' uplinks:
    k x f = 0.4, no slowdown (cost_models 3.7). The ring all-reduce, and the SHARP all-reduce
    of 128 nodes, had paid x1.74-1.9 (5.56 -> 9.51 ms at 1 GB on 32 nodes)."""
    tapered = write(tmp_path, "t.yaml", NON_RAIL.format(nodes=nodes, k=2, sharp=sharp))
    flat = write(tmp_path, "f.yaml", NON_RAIL.format(nodes=nodes, k=1, sharp=sharp))
    resolved = [
        resolve_design(*load_design(p, catalogue=builtin_catalogue), builtin_catalogue)
        for p in (tapered, flat)
    ]
    topo = resolved[0].cluster.topology
    assert topo.contention("uniform") == pytest.approx(2 * (nodes - 5) / (nodes - 1))
    assert topo.contention("neighbour") == 1.0  # max(1, 2 x 1/5)
    allreduce = [estimate_on(r.cluster, Collective.ALL_REDUCE, 1e9) for r in resolved]
    assert allreduce[0].time_s == allreduce[1].time_s
    if sharp:  # NCCL's pick with SHARP on 128 DGX H100: NVLS with CollNet across nodes
        assert allreduce[0].best.algorithm.value == "nvls"
    # all-to-all pays the uniform share: its network term, and so its time, grows
    alltoall = [estimate_on(r.cluster, Collective.ALL_TO_ALL, 1e9) for r in resolved]
    assert alltoall[0].time_s > 1.5 * alltoall[1].time_s


NVL72 = """\
name: r
nodes: 288
system: gb200-nvl72
nics_per_node: {nics}
fabric:
  switch: qm9700
  rail_optimized: {rail}
  oversubscription: {k}
"""


def test_neighbour_traffic_of_nvl72_racks_crosses_leaves_between_racks(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """288 GB200 trays (16 NVL72 racks of 18), one NIC a tray, QM9700 leaves at 4:1: 48 down
    ports, a rail-optimized SU of 48 trays. A ring crosses the network only between racks, tray
    ``i`` to tray ``i + 18``, so the 18 trays at a group's end send out of it: 18/48 = 0.375
    of its neighbour traffic crosses, k x f = 4 x 0.375 = 1.5. Counting trays (one edge per
    channel out of 48 trays, 1/48) had priced no slowdown at all (a fabric architect's review:
    a 4 GB all-gather 8.27 ms where the taper makes it about 9.7 ms)."""
    tapered, flat = (
        resolve_design(
            *load_design(
                write(tmp_path, f"{k}.yaml", NVL72.format(nics=1, rail="true", k=k)),
                catalogue=builtin_catalogue,
            ),
            builtin_catalogue,
        )
        for k in (4, 1)
    )
    assert tapered.cluster.spec.neighbour_cross_leaf_fraction == pytest.approx(18 / 48)
    assert tapered.cluster.topology.contention("neighbour") == pytest.approx(4 * 18 / 48)
    times = [estimate_on(r.cluster, Collective.ALL_GATHER, 4e9).time_s for r in (tapered, flat)]
    assert times[0] > 1.1 * times[1]


def test_a_ring_that_wraps_into_its_leaf_group_crosses_no_more_than_every_peer_traffic(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """54 GB200 trays (3 NVL72 racks), rail-optimized QM9700 SUs of 48 at 4:1: in the first
    group only trays 30-35 send to the third rack outside it; trays 36-47 send to 54-65 mod 54
    = 0-11, back inside. 6/48 of its ring edges cross, the every-peer share; min(1, 18/48) had
    priced rings x1.5 slower where all-to-all was not slowed (a review)."""
    text = (
        "name: n\nnodes: 54\nsystem: gb200-nvl72\n"
        "fabric: {switch: qm9700, rail_optimized: true, oversubscription: 4}\n"
    )
    path = write(tmp_path, "n.yaml", text)
    resolved = resolve_design(*load_design(path, catalogue=builtin_catalogue), builtin_catalogue)
    spec = resolved.cluster.spec
    assert spec.neighbour_cross_leaf_fraction == pytest.approx(6 / 48)
    assert spec.neighbour_cross_leaf_fraction <= spec.cross_leaf_fraction + 1e-12
    assert resolved.cluster.topology.contention("neighbour") == 1.0


def test_a_layout_where_every_peer_crosses_still_gives_its_neighbour_share(
    tmp_path: Path, builtin_catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    """288 GB200 trays with their 4 NICs, not rail-optimized, QM9700 at 4:1: a leaf holds
    48 // 4 = 12 whole trays, less than a rack, so every network peer of a tray is behind another
    leaf (f = 1) and so is every ring edge (to a tray 18 on). The layout's shares had been
    passed to the engine only where f < 1: the neighbour share fell back to the engine's default
    and the notes called the layout's value 'the default'."""
    path = write(tmp_path, "r.yaml", NVL72.format(nics=4, rail="false", k=4))
    resolved = resolve_design(*load_design(path, catalogue=builtin_catalogue), builtin_catalogue)
    assert resolved.cross_leaf_fraction == 1.0
    assert resolved.cluster.spec.neighbour_cross_leaf_fraction == 1.0
    assert resolved.cluster.topology.contention("neighbour") == 4.0
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    assert "assumed to cross the tapered uplinks (from the fabric layout)" in out
    assert "the next domain (the last domain to the first): 100% of it crosses" in out


def test_a_neighbour_fraction_given_on_the_command_line(builtin_catalogue: Catalogue) -> None:
    # 4 x DGX H100 at 2:1: the ring all-reduce of 8 GiB is network-bound at 376/2 GB/s with
    # every byte crossing (docs/model.md); with 10 % of the ring's traffic crossing (k x f =
    # 0.2) it runs as on a non-blocking fabric, and all-to-all still pays x2
    from ibcalc.cluster.resolve import resolve_cluster
    from ibcalc.cluster.spec import ClusterSpec

    def run(coll: Collective, **kw: float) -> float:
        spec = ClusterSpec(system="dgx-h100", nodes=4, **kw)  # type: ignore[arg-type]
        return estimate_on(resolve_cluster(builtin_catalogue, spec), coll, 8 * 2**30).time_s

    flat = run(Collective.ALL_REDUCE)
    assert run(Collective.ALL_REDUCE, oversubscription=2, neighbour_cross_leaf_fraction=0.1) == (
        flat
    )
    assert run(Collective.ALL_REDUCE, oversubscription=2) > 1.5 * flat
    a2a = run(Collective.ALL_TO_ALL, oversubscription=2)
    assert run(Collective.ALL_TO_ALL, oversubscription=2, neighbour_cross_leaf_fraction=0.1) == a2a


def test_a_spine_ratio_on_a_two_level_fabric_is_a_warning_at_its_key(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """64 DGX H100 on QM9700 fit two levels (8 SUs of 32 nodes, 64 leaves, 32 spines): a
    spine ratio has no uplinks to act on. It had been dropped with a note in `design show`
    only, so an `oversubscription: {max: 1}` gate passed a file that asked for 4:1."""
    text = (
        "name: sp\nnodes: 64\nsystem: dgx-h100\n"
        "fabric: {switch: qm9700, oversubscription: [1, 4]}\n"
        "requirements:\n  - oversubscription: {max: 1}\n"
    )
    checked = check_design(write(tmp_path, "sp.yaml", text), builtin_catalogue)
    assert checked.resolved.fabric is not None
    assert checked.resolved.fabric.tiers == 2
    (warning,) = checked.warnings
    assert (warning.line, warning.col) == (4, 26)  # the oversubscription value
    assert "the spine ratio 4:1 is not used" in warning.message
    # the same file at [1, 1]: nothing to warn about
    flat = check_design(
        write(tmp_path, "f.yaml", text.replace("[1, 4]", "[1, 1]")), builtin_catalogue
    )
    assert flat.warnings == []


def test_a_leaf_ratio_on_one_switch_is_a_warning_at_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """4 DGX H100 (32 NDR ports) fit one QM9700: a leaf ratio has no uplinks to act on. It had
    been said in the text report's header only, so a JSON or GitHub report passed an
    `oversubscription: {max: 1}` gate on a file that asked for 3:1 without a word."""
    text = (
        "name: one\nnodes: 4\nsystem: dgx-h100\n"
        "fabric: {switch: qm9700, oversubscription: 3}\n"
        "requirements:\n  - oversubscription: {max: 1}\n"
    )
    warned = []
    for name, body in (
        ("one.yaml", text),
        ("flat.yaml", text.replace(": 3}", ": 1}")),  # 1:1: nothing to warn about
        ("two.yaml", text.replace("qm9700,", "qm9700, tiers: 2,")),  # uplinks: used
    ):
        code, out, _ = run(["check", str(write(tmp_path, name, body)), "--format", "json"], capsys)
        (report,) = json.loads(out)["files"]
        warned.append((code, [(w["line"], w["col"], w["message"]) for w in report["warnings"]]))
    leaf = (
        "fabric.oversubscription: the leaf ratio 3:1 is not used: the sized fabric has 1 switch "
        "level, no uplinks; the predictions are without it (fabric.tiers: 2 builds a spine)"
    )
    assert warned == [(0, [(4, 26, leaf)]), (0, []), (1, [])]


def test_words_of_a_sized_tier_count_and_a_resized_pcie_node(
    tmp_path: Path, builtin_catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    """16 L40S nodes of 8 GPUs (the preset has 1) on RoCE 100G, an SN5600 at 256 x 100 Gb/s
    under 2:1 leaves: 128 endpoints fit one switch, so the ratio has no tier and the gate's
    detail names one level; 64 DGX H100 on QM9700 at 2:1 take two. They had read 'fabric sized
    with 2 switch level(s)' and 'a 8-GPU pcie4 domain is assumed'."""

    def detail(nodes: int, system: str, extra: str) -> str:
        body = f"name: x\nnodes: {nodes}\nsystem: {system}\n{extra}"
        path = write(
            tmp_path, f"{system}.yaml", body + "requirements: [oversubscription: {max: 1}]"
        )
        (finding,) = check_design(path, builtin_catalogue).findings
        return finding_detail(finding)

    l40s = "gpus_per_node: 8\ninter: roce-100g\nfabric: {switch: sn5600, oversubscription: 2}\n"
    assert detail(16, "l40s-pcie", l40s) == "fabric sized with 1 switch level"
    assert detail(64, "dgx-h100", "fabric: {switch: qm9700, oversubscription: 2}\n") == (
        "fabric sized with 2 switch levels"
    )
    code, out, _ = run(["design", "show", str(tmp_path / "l40s-pcie.yaml")], capsys)
    assert code == 0
    assert "8 GPUs per node is more than l40s-pcie's 1: an 8-GPU pcie4 domain is assumed" in out


def test_a_ratio_on_one_scale_up_domain_is_a_warning_not_a_priced_taper(
    tmp_path: Path, builtin_catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    """One GB200 NVL72 rack (18 trays, one 72-GPU NVLink domain) has no network to taper. With
    a 2:1 fabric on QM9700, check's header had said 'as priced: oversubscription 2:1, cross-leaf
    1 (every byte crosses the tapered uplinks, the worst case: no switch is named ...)', a
    switch named and no uplink there, while design show said the ratio was ignored. Now a WARN
    at the key, and no such line; the 1 GB all-reduce stays NVLink's own."""
    path = write(
        tmp_path,
        "rack.yaml",
        "name: rack\nnodes: 18\nsystem: gb200-nvl72\n"
        "fabric: {switch: qm9700, oversubscription: 2}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 10ms}\n",
    )
    checked = check_design(path, builtin_catalogue)
    switch, warning = checked.warnings  # the switch sizes nothing (its own test below)
    assert switch.message.startswith("fabric.switch: qm9700 sizes nothing")
    assert (warning.line, warning.col) == (4, 26)
    assert warning.message == (
        "fabric.oversubscription: 2:1 not priced: one scale-up domain, no network for a ratio to "
        "taper"
    )
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0
    assert "as priced" not in out
    assert "WARN" in out.splitlines()[1]
    flat = path.read_text().replace(", oversubscription: 2", "")
    (finding,) = check_design(write(tmp_path, "flat.yaml", flat), builtin_catalogue).findings
    assert finding.predicted == checked.findings[0].predicted


@pytest.mark.parametrize(
    ("cluster", "sizer"),
    [
        (
            "nodes: 18\nsystem: gb200-nvl72\nfabric:\n  link: ndr\n  switch: qm9700\n",
            "switch: qm9700",
        ),
        ("nodes: 1\nsystem: dgx-h100\nfabric:\n  link: ndr\n  radix: 64\n", "radix: 64"),
    ],
)
def test_check_warns_at_a_fabric_key_one_scale_up_domain_leaves_unused(
    tmp_path: Path,
    builtin_catalogue: Catalogue,
    capsys: pytest.CaptureFixture[str],
    cluster: str,
    sizer: str,
) -> None:
    """One GB200 NVL72 rack (18 trays, one NVLink domain) or one DGX H100 node given fabric.link
    ndr and a switch or radix: design show said the link carries no collective, and check passed
    without a word, where it warns at fabric.oversubscription on the same cluster. Now a WARN at
    each key, in the words of the link's note and of the switch count's refusal."""
    path = write(
        tmp_path,
        "one.yaml",
        "name: one\n" + cluster + "requirements:\n  - allreduce: {size: 1GB, max_time: 10ms}\n",
    )
    checked = check_design(path, builtin_catalogue)
    no_size = "sizes nothing: the whole cluster is one scale-up domain, with no network to size"
    link, sized = checked.warnings
    assert (link.line, link.col, link.message) == (
        5,
        3,
        "fabric.link: ndr carries no collective: one scale-up domain, no network between GPUs",
    )
    assert (sized.line, sized.col, sized.message) == (6, 3, f"fabric.{sizer} {no_size}")
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0
    assert f"{path}:5:3  fabric.link: ndr carries no collective" in out
    # the link's own note is the cluster's, as an estimate with --inter says it
    notes = resolve_design(*load_design(path, catalogue=builtin_catalogue), builtin_catalogue)
    assert "{inter} ndr carries no collective: one scale-up domain, no network between GPUs" in (
        notes.cluster.assumptions
    )


@pytest.mark.parametrize(
    "cluster",
    ["nodes: 18\nsystem: gb200-nvl72\n", "nodes: 1\nsystem: dgx-h100\n"],
)
def test_design_show_says_once_that_one_scale_up_domain_has_no_network(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: str
) -> None:
    """One GB200 NVL72 rack or one DGX H100 node with fabric.link ndr and fabric.switch qm9700:
    design show had said 'one scale-up domain' three times, on the fabric line ('no network to
    size') and in two assumptions ('fabric.link ndr carries no collective: one scale-up domain,
    no network between GPUs', 'the whole cluster is one scale-up domain: no scale-out fabric to
    size'). The fabric line says it once and names the keys that do nothing; the JSON, which
    has no such line, gives the reason and the keys."""
    fabric = "fabric: {link: ndr, switch: qm9700}\n"
    requirement = "requirements: [allreduce: {size: 1GB, max_time: 1s}]\n"
    path = write(tmp_path, "one.yaml", "name: one\n" + cluster + fabric + requirement)
    code, out, _ = run(["design", "show", str(path)], capsys)
    assert code == 0
    assert " ".join(out.split()).count("one scale-up domain") == 1
    assert (
        "fabric: not sized (one scale-up domain: no network to size); fabric.link ndr carries "
        "no collective; fabric.switch qm9700 sizes nothing"
    ) in " ".join(out.split())
    code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["fabric"] is None
    assert data["fabric_not_sized"] == "one scale-up domain: no network to size"
    assert data["fabric_unused"] == {
        "fabric.link": "ndr carries no collective",
        "fabric.switch": "qm9700 sizes nothing",
    }
    assert not any("scale-up domain" in note for note in data["assumptions"])


def test_nics_per_node_is_null_on_one_scale_up_domain_in_design_and_estimate_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One GB200 NVL72 rack (18 trays, each with 4 NDR NICs in the catalogue) had given
    nics_per_node 0 in design show's JSON and in the estimate's, as if the trays had none:
    the field counts the NICs the collectives use, and one scale-up domain uses none, so both
    say null, as they say inter null. Two racks (36 trays) use the tray's 4."""
    requirement = "requirements: [allreduce: {size: 1GB, max_time: 1s}]\n"
    for nodes, nics in ((18, None), (36, 4)):
        text = f"name: r\nnodes: {nodes}\nsystem: gb200-nvl72\nfabric: {{link: ndr}}\n"
        path = write(tmp_path, f"r{nodes}.yaml", text + requirement)
        code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
        assert code == 0
        data = json.loads(out)
        assert data["nics_per_node"] == nics
        assert data["bandwidths_per_direction"]["nics_per_domain"] == (
            None if nics is None else nics * 18  # a rack's 18 trays
        )
        args = ["allreduce", "-s", "1GB", "--system", "gb200-nvl72", "-N", str(nodes)]
        code, out, _ = run([*args, "--format", "json"], capsys)
        assert code == 0
        assert json.loads(out)["nics_per_node"] == nics


def _one_domain_outputs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    system: str,
    nodes: int,
    fabric: str,
    flags: list[str],
) -> tuple[str, str, str]:
    """check's and design show's output of a design of ``nodes`` x ``system`` with ``fabric``,
    and an all-reduce estimate's on the same cluster with the ``flags`` that say the same; each
    exits 0."""
    path = write(
        tmp_path,
        f"{system}.yaml",
        f"name: one\nnodes: {nodes}\nsystem: {system}\nfabric: {fabric}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 10ms}\n",
    )
    args = ["allreduce", "-s", "1GB", "--system", system, "-N", str(nodes), *flags]
    outputs = []
    for command in (["check", str(path)], ["design", "show", str(path)], args):
        code, out, _ = run(command, capsys)
        assert code == 0
        outputs.append(out)
    return outputs[0], outputs[1], outputs[2]


def test_a_ratio_on_one_scale_up_domain_is_said_not_priced_in_one_wording_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One GB200 NVL72 rack and one DGX H100 node with fabric.oversubscription 2 had been told
    of the one fact three ways: check's WARN 'not used; the predictions are without it', design
    show's '(fabric.oversubscription 2:1 not priced)' and, in its assumptions below, 'ignored:
    one scale-up domain, no network', which an estimate with --nodes 1 --oversubscription 2 also
    read. Every line now says 'not priced: one scale-up domain, no network for a ratio to
    taper', and design show says it once, beside the 1:1 the engine is fed."""
    fact = "not priced: one scale-up domain, no network for a ratio to taper"
    for system, nodes, fabric in (
        ("gb200-nvl72", 18, "{link: ndr, switch: qm9700, oversubscription: 2}"),
        ("dgx-h100", 1, "{oversubscription: 2}"),
    ):
        checked, shown, out = _one_domain_outputs(
            tmp_path, capsys, system, nodes, fabric, ["--oversubscription", "2"]
        )
        assert f"fabric.oversubscription: 2:1 {fact}\n" in checked
        assert shown.count("oversubscription") == 2  # the engine's ratio and the file's
        assert f"fed to the engine 1:1 (fabric.oversubscription 2:1 {fact})\n" in shown
        assert f"  - --oversubscription {fact}\n" in out
    for word in ("ignored", "not used"):
        assert word not in out


def test_sharp_on_one_scale_up_domain_is_said_ignored_in_one_wording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fabric.sharp on one GB200 NVL72 rack: check had warned 'true, but the cluster has no
    scale-out fabric: SHARP (in-network reduction in the switches) is not used' where design
    show's assumptions, and an estimate with --sharp on the same cluster, say 'ignored: one
    scale-up domain, no network'. check now says it in those words."""
    fact = "ignored: one scale-up domain, no network"
    checked, shown, out = _one_domain_outputs(
        tmp_path, capsys, "gb200-nvl72", 18, "{sharp: true}", ["--sharp"]
    )
    assert f"fabric.sharp: true {fact}\n" in checked
    assert f"  - fabric.sharp {fact}\n" in shown
    assert f"  - --sharp {fact}\n" in out


def test_an_oversubscription_gate_on_one_scale_up_domain_is_refused_at_its_key(
    tmp_path: Path, builtin_catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rack above with an oversubscription requirement of 1:1 had failed it 'as declared'
    (predicted 2:1) beside the warning that the ratio is not used, then passed it at 1:1; one
    DGX H100 node with no fabric passed it 'non-blocking'. One scale-up domain has no network
    for a ratio to taper, so the ratio is not priced and the gate has nothing to judge: it is
    refused at its key, as a gap or a switch count with no network is (exit 2). Two racks have
    a network: the declared ratio is judged as before (2:1 > 1:1)."""
    gate = "requirements:\n  - oversubscription: {max: 1}\n"
    rack = (
        "name: rack\nnodes: 18\nsystem: gb200-nvl72\n"
        "fabric: {switch: qm9700, oversubscription: 2}\n"
    )
    no_taper = (
        "requirements[0].oversubscription: an oversubscription limit needs a scale-out fabric"
    )
    not_priced = " not priced: one scale-up domain, no network for a ratio to taper"
    cases = (
        (rack, f"; fabric.oversubscription 2:1{not_priced}"),
        (
            rack.replace("oversubscription: 2", "oversubscription: [2, 2]"),
            f"; fabric.oversubscription 2:1 x 2:1{not_priced}",
        ),
        (
            "name: node\nnodes: 1\nsystem: dgx-h100\n",
            ": the whole cluster is one scale-up domain, with no network for a ratio to taper",
        ),
    )
    for index, (cluster, unused) in enumerate(cases):
        path = write(tmp_path, f"one{index}.yaml", cluster + gate)
        with pytest.raises(DesignError) as info:
            check_design(path, builtin_catalogue)
        (problem,) = info.value.problems
        assert (problem.line, problem.col, problem.message) == (
            6 if index < 2 else 5,
            5,
            no_taper + unused,
        )
        code, out, err = run(["check", str(path)], capsys)
        assert (code, out) == (2, "")
        assert err == f"error: {path}:{problem.line}:5: {no_taper}{unused}\n"
    two = write(tmp_path, "two.yaml", rack.replace("nodes: 18", "nodes: 36") + gate)
    (judged,) = check_design(two, builtin_catalogue).findings
    assert judged.predicted == 2.0
    assert not judged.passed


def test_a_product_of_tiers_prints_as_it_is_on_paper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Declared tiers of [1.1, 3] taper 3.3:1 end to end (1.1 x 3), 3.3000000000000003 in
    binary: check had printed 'as priced: oversubscription 3.30:1' and '(3.30:1 end to end, as
    priced)', trailing zeros that say a ratio was rounded. The flag keeps every digit."""
    tiers = "fabric: {oversubscription: [1.1, 3]}\n"
    gate = "requirements:\n  - oversubscription: {max: 4}\n"
    path = write(tmp_path, "p.yaml", f"name: p\nnodes: 4\nsystem: dgx-h100\n{tiers}{gate}")
    code, out, _ = run(["check", str(path)], capsys)
    text = " ".join(out.split())
    assert code == 0
    assert "as priced: oversubscription 3.3:1, cross-leaf 1" in text
    assert "predicted 3:1 (3.3:1 end to end, as priced)" in text
    assert "3.30:1" not in text


@pytest.mark.parametrize(
    ("nodes", "ratios", "said"),
    [
        (18, "2", "2:1"),
        (18, "[2, 2]", "2:1 x 2:1"),
        (18, '["4:3", 1]', "4:3 x 1:1"),  # 4/3 x 1 > 1: said as the file gives its tiers
        (18, "1", None),  # nothing above 1:1 to say
        (36, "2", None),  # two racks: priced
    ],
)
def test_one_scale_up_domain_says_its_ratio_not_priced_in_one_place(
    tmp_path: Path, builtin_catalogue: Catalogue, nodes: int, ratios: str, said: str | None
) -> None:
    """check's warning at fabric.oversubscription, its refusal of an oversubscription gate and
    design show's engine line each built 'fabric.oversubscription 2:1 not priced: ...' under a
    test of their own (the tiers' product above 1 on a cluster that does not price it); one
    function says it for all three."""
    path = write(
        tmp_path,
        "r.yaml",
        f"name: r\nnodes: {nodes}\nsystem: gb200-nvl72\n"
        f"fabric: {{switch: qm9700, oversubscription: {ratios}}}\n",
    )
    design, doc = load_design(path, catalogue=builtin_catalogue)
    expected = (
        None
        if said is None
        else f"{said} not priced: one scale-up domain, no network for a ratio to taper"
    )
    assert unpriced_ratio(resolve_design(design, doc, builtin_catalogue)) == expected


def test_design_show_of_one_scale_up_domain_gives_the_ratio_it_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """design show of one NVL72 rack with a 2:1 fabric had said 'oversubscription fed to the
    engine 2:1' (JSON 2.0) above 'fabric.oversubscription ignored', then 1:1 with the 2:1
    nowhere and a JSON cross_leaf_fraction of 1 (every byte crossing a taper). No byte crosses
    one: 1:1, the declared 2:1 said not priced, the cross-leaf shares null with the reason. Two
    racks keep their 2:1 and the sized layout's shares: a rail-optimized QM9700 leaf at 2:1
    takes 40 nodes (40 down / 20 up of 64 ports), so one SU of 4 leaves (one per NIC rail)
    holds both racks' 36 trays: no rail-aligned byte crosses (0), and an all-to-all off its
    rail goes to the leaves of the 3 other rails (3/4 = 0.75)."""
    text = (
        "name: rack\nnodes: 18\nsystem: gb200-nvl72\n"
        "fabric: {switch: qm9700, oversubscription: 2}\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 10ms}\n"
    )
    keys = (
        "oversubscription",
        "oversubscription_declared",
        "oversubscription_not_priced",
        "cross_leaf_fraction",
        "neighbour_cross_leaf_fraction",
        "unaligned_cross_leaf_fraction",
    )
    no_network = "one scale-up domain, no network for a ratio to taper"
    for nodes, said, shown in (
        (
            18,
            f"1:1 (fabric.oversubscription 2:1 not priced: {no_network})",
            (1.0, 2.0, no_network, None, None, None),
        ),
        (36, "2:1\n", (2.0, 2.0, None, 0.0, 0.0, 0.75)),
    ):
        path = write(tmp_path, f"rack{nodes}.yaml", text.replace("nodes: 18", f"nodes: {nodes}"))
        code, out, _ = run(["design", "show", str(path)], capsys)
        assert code == 0
        assert f"oversubscription fed to the engine {said}" in out
        code, out, _ = run(["design", "show", str(path), "--format", "json"], capsys)
        assert code == 0
        assert tuple(json.loads(out)[key] for key in keys) == shown


def test_a_ratio_the_switch_cannot_split_exactly_is_a_warning_at_its_key(
    tmp_path: Path, builtin_catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    """A leaf ratio p:q with p + q over the radix is built smaller (docs/design-files.md, leaf
    port split: d = floor(k o / (1 + o)), u = ceil(d / o)) and the collectives are priced at
    it. 8 DGX H100 (64 endpoints) at 20:1 on 8-port switches: d = floor(8 x 20/21) = 7, u = 1,
    7:1; 64 of them at 1.33 (133:100) on 64 ports: d = floor(64 x 1.33/2.33) = 36,
    u = ceil(36/1.33) = 28, 9:7 = 1.29:1. Both had been sized and priced so without a word;
    2:1 splits exactly."""

    def checked(nodes: int, radix: int, ratio: str) -> DesignCheck:
        fabric = f"{{radix: {radix}, oversubscription: {ratio}, rail_optimized: false}}"
        body = f"name: x\nnodes: {nodes}\nsystem: dgx-h100\nfabric: {fabric}\n"
        path = write(
            tmp_path,
            f"x{nodes}-{radix}-{ratio}.yaml",
            body + "requirements: [gap: {max_ratio: 100}]",
        )
        return check_design(path, builtin_catalogue)

    narrow = checked(8, 8, "20")
    assert narrow.resolved.fabric is not None
    assert narrow.resolved.fabric.oversubscription[0] == 7.0
    (warning,) = narrow.warnings
    assert (warning.line, warning.col) == (4, 20)  # the oversubscription key
    assert warning.message == (
        "fabric.oversubscription: the leaf ratio 20:1 has no exact split on 8-port switches "
        "(20 down per 1 up needs 21 ports): split 7 down / 1 up, 7:1, the nearest under it; "
        "the predictions use 7:1"
    )
    wide = checked(64, 64, "1.33")  # 512 endpoints: two levels of 64 ports
    assert wide.resolved.fabric is not None
    assert wide.resolved.fabric.oversubscription[0] == 36 / 28
    (warning,) = wide.warnings
    assert "(133 down per 100 up needs 233 ports): split 36 down / 28 up, 9:7" in (warning.message)
    # design show says it among the fabric's notes
    code, out, _ = run(["design", "show", str(tmp_path / "x64-64-1.33.yaml")], capsys)
    assert code == 0
    assert "the leaf ratio 1.33:1 has no exact split on 64-port switches" in out
    assert checked(8, 8, "2").warnings == []
    # a split within three figures of the ratio asked is printed apart from it: 1.06 (53:50)
    # on 36 ports is d = floor(36 x 1.06/2.06) = 18, u = ceil(18/1.06) = 17, 18/17 = 1.0588,
    # which had read 'the leaf ratio 1.06:1 has no exact split ...: split 18 down / 17 up,
    # 1.06:1, the nearest under it; the predictions use 1.06:1'
    near = checked(36, 36, "1.06")
    assert near.resolved.fabric is not None
    assert near.resolved.fabric.oversubscription[0] == 18 / 17
    (warning,) = near.warnings
    assert warning.message.endswith(
        "(53 down per 50 up needs 103 ports): split 18 down / 17 up, 1.059:1, the nearest "
        "under it; the predictions use 1.059:1"
    )


def test_a_resized_nvl72_and_an_uneven_nic_count_are_warnings_at_their_keys(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """Review DJ M3: gb200-nvl72 with gpus_per_node 8 had been checked as 8-GPU nodes on the
    network with no word in check's report (only design show said the NVL72 domain was
    dropped), and 5 NICs on 8 GPUs priced as 5/8 of a NIC per GPU with no word anywhere. Each
    is a WARN at its key; the preset's own count and NIC counts that divide or are divided by
    the GPUs are not."""
    body = "requirements:\n  - allreduce: {size: 1GB, min_busbw: 100GB/s}\n"
    resized = check_design(
        write(
            tmp_path, "g.yaml", "name: g\nnodes: 18\nsystem: gb200-nvl72\ngpus_per_node: 8\n" + body
        ),
        builtin_catalogue,
    )
    (warning,) = resized.warnings
    assert (warning.line, warning.col) == (4, 1)
    assert warning.message == (
        "gpus_per_node: 8 is not gb200-nvl72's 4: its 72-GPU NVLink domain is not assumed; the "
        "predictions are for 8-GPU nodes joined by the network"
    )
    own = check_design(
        write(
            tmp_path, "o.yaml", "name: o\nnodes: 18\nsystem: gb200-nvl72\ngpus_per_node: 4\n" + body
        ),
        builtin_catalogue,
    )
    assert own.warnings == []
    # gpus_per_node 72 on gb200-nvl72 makes each node the whole NVLink domain: no warning (review
    # DK: it had been told its 72-GPU domain was not assumed)
    whole = check_design(
        write(
            tmp_path, "w.yaml", "name: w\nnodes: 2\nsystem: gb200-nvl72\ngpus_per_node: 72\n" + body
        ),
        builtin_catalogue,
    )
    assert whole.warnings == []
    # a count the preset's share gives is warned about too, at gpus_per_node (review DK: aws-p4d
    # on 5 GPUs takes 3 NICs, no warning)
    p4d = check_design(
        write(tmp_path, "p.yaml", "name: p\nnodes: 4\nsystem: aws-p4d\ngpus_per_node: 5\n" + body),
        builtin_catalogue,
    )
    (uneven,) = p4d.warnings
    assert (uneven.line, uneven.message.split(":")[0]) == (4, "gpus_per_node")
    assert "3 NICs on 5 GPUs: priced as an even share (3/5 of a NIC per GPU)" in uneven.message
    for nics, warned in ((5, True), (9, True), (4, False), (16, False), (8, False)):
        text = f"name: n\nnodes: 4\nsystem: dgx-h100\nnics_per_node: {nics}\n" + body
        checked = check_design(write(tmp_path, f"n{nics}.yaml", text), builtin_catalogue)
        assert len(checked.warnings) == warned, nics
        if warned:
            assert checked.warnings[0].message.startswith(
                f"nics_per_node: {nics} NICs on 8 GPUs: priced as an even share ({nics}/8 of a NIC "
                "per GPU)"
            )


def test_a_non_rail_leaf_count_says_which_nodes_span_two_leaves(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """84 DGX H100 on QM9700 at 2:1, not rail-optimized, on leaves of 42 down / 21 up (the
    fewest switches of any 2:1 split here): 672 NIC ports fill ceil(672 / 42) = 16 leaves port
    by port, while the cross-leaf group counts 42 // 8 = 5 whole nodes per leaf (16 x 5 = 80 <
    84 read as a contradiction). A leaf boundary at port 42 j splits a node unless 42 j is a
    multiple of 8 (j = 4, 8, 12): 15 - 3 = 12 nodes span two."""
    text = NON_RAIL.format(nodes=84, k=2, sharp=False)
    design, doc = load_design(write(tmp_path, "n.yaml", text), catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    assert resolved.fabric is not None
    assert resolved.fabric.leaf_down == 42
    assert resolved.fabric.leaf_switches == math.ceil(672 / 42) == 16
    split = sum(1 for j in range(1, 16) if 42 * j % 8)
    assert split == 12
    notes = " ".join(render_design_text(resolved).split())
    assert "the 16 leaves are filled port by port, so 12 nodes span two leaves" in notes


def test_a_gap_gate_on_nics_capped_by_host_pcie_says_so(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """DGX B200 with XDR NICs (100 GB/s line) behind PCIe Gen3: the gap gate judges line rates,
    900 / 100 = 9x, and passes <= 10x, while every NIC is capped at the Gen3 link's rate. The
    finding and a WARN now say so, with the gap at the achievable rates (scale-up achievable
    over the capped scale-out per GPU)."""
    from ibcalc.cluster.bandwidths import per_gpu_bandwidths

    text = (
        "name: g\nnodes: 32\nsystem: dgx-b200\ninter: xdr\nhost_pcie: pcie3\n"
        "requirements:\n  - gap: {max_ratio: 10}\n"
    )
    checked = check_design(write(tmp_path, "g.yaml", text), builtin_catalogue)
    (finding,) = checked.findings
    assert finding.passed
    assert finding.predicted == pytest.approx(900 / 100)
    bws = per_gpu_bandwidths(checked.resolved.cluster.topology)
    assert bws.up_Bps is not None
    assert bws.out_per_gpu_Bps is not None
    pcie3 = checked.resolved.cluster.host_pcie
    assert pcie3 is not None
    assert bws.out_per_gpu_Bps <= pcie3.achievable_Bps * (1 + 1e-9)  # one NIC per GPU, capped
    achievable = bws.up_Bps / bws.out_per_gpu_Bps
    assert isinstance(finding.basis, GapBasis)
    assert finding.basis.capped_by == "pcie3"
    assert finding.basis.achievable_gap == pytest.approx(achievable)
    (warning,) = checked.warnings
    assert f"{achievable:.3g}x at the achievable rates" in warning.message
    assert "but pcie3 caps each NIC below its own rate:" in warning.message
    # 16 NDR NICs on a DGX H100: each one (48.8 GB/s achievable) fits its Gen5 link (50.4), but
    # each GPU's Gen5 link feeds two (review DJ L1): 371 / 50.4 = 7.36x at the achievable rates
    sixteen = check_design(
        write(
            tmp_path,
            "s.yaml",
            "name: s\nnodes: 4\nsystem: dgx-h100\nnics_per_node: 16\n"
            "requirements:\n  - gap: {max_ratio: 10}\n",
        ),
        builtin_catalogue,
    )
    (warning,) = sixteen.warnings
    assert warning.message == (
        "requirements[0].gap.max_ratio: judges line rates (4.50x), but 16 NICs for 8 GPUs exceed "
        "what each GPU's pcie5 link "
        "can feed: 7.36x at the achievable rates; the collective requirements are priced at the "
        "capped rate"
    )
    # each cap the engine applies that is worth saying (review DY 1): 16 XDR NICs on a DGX H100
    # are capped by Gen5 each (50.4 < 97.5 GB/s) and by the 8 GPU links they share (3.68x alone,
    # 7.36x with both); 16 on a DGX B300 by the share alone (Gen6's 96.8 GB/s is within 1 % of
    # XDR's 97.5, no cap worth saying): 8 x 96.8 / 16 = 48.4 GB/s a NIC
    for preset, inter, said in (
        (
            "dgx-h100",
            "xdr",
            "pcie5 caps each NIC below its own rate and 16 NICs for 8 GPUs exceed what each "
            "GPU's pcie5 link can feed: 7.36x",
        ),
        ("dgx-b300", None, "16 NICs for 8 GPUs exceed what each GPU's pcie6 link can feed: 7.46x"),
    ):
        body = f"name: s\nnodes: 4\nsystem: {preset}\nnics_per_node: 16\n"
        body += f"inter: {inter}\n" if inter else ""
        both = check_design(
            write(tmp_path, f"{preset}.yaml", body + "requirements:\n  - gap: {max_ratio: 30}\n"),
            builtin_catalogue,
        )
        (warning,) = both.warnings
        assert f"but {said} at the achievable rates" in warning.message
    # GPUs that meet over PCIe reach their NICs across their own link: named as theirs (DY 6)
    bus = (
        "name: p\nnodes: 4\ngpus_per_node: 8\nintra: pcie4\ninter: ndr\nhost_pcie: pcie5\n"
        "requirements:\n  - gap: {max_ratio: 30}\n"
    )
    (warning,) = check_design(write(tmp_path, "p.yaml", bus), builtin_catalogue).warnings
    assert "but the GPUs' own pcie4 link caps each NIC below its own rate:" in warning.message
    # the preset's own host link (PCIe Gen5) caps an XDR NIC too; its own NDR NICs it does not
    gen5 = check_design(
        write(tmp_path, "x.yaml", text.replace("host_pcie: pcie3\n", "")), builtin_catalogue
    )
    assert len(gen5.warnings) == 1
    ndr = check_design(
        write(tmp_path, "n.yaml", text.replace("inter: xdr\nhost_pcie: pcie3\n", "")),
        builtin_catalogue,
    )
    assert ndr.warnings == []
    # DGX B300's PCIe Gen6 holds its XDR NIC at 121 x 0.8 = 96.8 GB/s under XDR's 100 x 0.975 =
    # 97.5, 0.7 % off: no warning, and the finding names no cap (every B300 gap target had been
    # warned, the 'achievable' ratio lower than the line one by NVLink's efficiency, not the
    # cap: a review); the collectives still run at the capped rate
    requirement = "requirements:\n  - gap: {max_ratio: 10}\n"
    b300 = check_design(
        write(tmp_path, "b.yaml", "name: b\nnodes: 4\nsystem: dgx-b300\n" + requirement),
        builtin_catalogue,
    )
    assert b300.warnings == []
    assert isinstance(b300.findings[0].basis, GapBasis)
    assert b300.findings[0].basis.capped_by is None
    out = b300.resolved.cluster.topology.out
    assert out is not None
    assert out.nic_bw_Bps == pytest.approx(121e9 * 0.8)
    assert out.nic_cap == "pcie6"


def test_the_equivalent_busbw_note_stands_beside_busbw_targets_only(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """31 DGX H100: NCCL's NVLS-tree all-reduce, whose busbw is an equivalent figure. A busbw
    target is told so; a time target had the same note, which it does not read."""
    from ibcalc.render.check import finding_detail

    text = (
        "name: e\nnodes: 31\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 10GB, max_time: 40ms, min_busbw: 300GB/s}\n"
    )
    checked = check_design(write(tmp_path, "e.yaml", text), builtin_catalogue)
    by_target = {f.target: f for f in checked.findings}
    basis = by_target["max_time"].basis
    assert isinstance(basis, CollectiveBasis)
    assert basis.estimate.best.equivalent_busbw
    assert "equivalent figure" not in finding_detail(by_target["max_time"])
    assert "busbw is an equivalent figure" in finding_detail(by_target["min_busbw"])
    # text and GitHub output print no detail for a pass: the PASS line itself says it (only
    # JSON and JUnit, which carry the detail, did)
    from ibcalc.render.check import FileOutcome, render_github, render_text

    outcome = FileOutcome(path="e.yaml", check=checked)
    for render in (render_text, render_github):
        lines = render([outcome]).splitlines()
        busbw = next(line for line in lines if "busbw >=" in line)
        time = next(line for line in lines if "time <=" in line)
        assert busbw.startswith("PASS")
        assert busbw.endswith("(equivalent busbw, not a wire rate)")
        assert "not a wire rate" not in time


def test_each_target_shows_the_range_of_its_own_figure(tmp_path: Path) -> None:
    """An algbw target printed the busbw range beside the algbw ('83.7 GB/s (127-168)'), and
    the JSON carried no range. Each figure's range is the time range turned into that figure:
    time as is, a rate S / t (times the busbw factor for busbw), its low end at the slow time."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.design.check import check_design
    from ibcalc.render.check import FileOutcome, finding_dict, render_text

    path = tmp_path / "d.yaml"
    path.write_text(
        "name: ranges\nnodes: 2\nsystem: dgx-a100\nrequirements:\n"
        "  - allreduce: {size: 1GiB, min_algbw: 1GB/s, min_busbw: 1GB/s, max_time: 1s}\n",
        encoding="utf-8",
    )
    check = check_design(path, load_catalogue(use_env=False))
    by_target = {f.target: f for f in check.findings}
    est = by_target["max_time"].basis.estimate  # type: ignore[union-attr]
    assert est.time_s_range is not None
    fast, slow = est.time_s_range
    size = 2**30
    factor = est.busbw_Bps / est.algbw_Bps  # 2 (n - 1) / n = 1.875 on 16 ranks
    assert factor == pytest.approx(2 * 15 / 16)
    expected = {
        "max_time": (fast, slow),
        "min_algbw": (size / slow, size / fast),
        "min_busbw": (size / slow * factor, size / fast * factor),
    }
    text = render_text([FileOutcome(path=str(path), check=check)])
    for target, (low, high) in expected.items():
        f = by_target[target]
        assert f.predicted_range == pytest.approx((low, high))
        assert low <= f.predicted <= high
        assert finding_dict(f)["predicted_range"] == pytest.approx([low, high])
    line = next(x for x in text.splitlines() if "algbw >=" in x)
    # 3 figures, trailing zeros kept (81.0-99.5, not 81-99.5: a review), no point after 100
    low_text, high_text = (f"{size / t / 1e9:#.3g}".rstrip(".") for t in (slow, fast))
    assert f"({low_text}-{high_text})" in line


def test_a_binary_rate_requirement_prints_its_prediction_in_its_unit(tmp_path: Path) -> None:
    """'busbw >= 350.5 GiB/s  predicted 360 GB/s' beside FAIL read as a wrong verdict (350.5 GiB/s
    is 376.3 GB/s; a review): the prediction and its range print in the requirement's unit."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.render.check import FileOutcome, render_text

    text = (
        "name: t\nnodes: 2\nsystem: dgx-h100\nrequirements:\n"
        "  - allgather: {size: 1GiB, min_busbw: 350.5GiB/s}\n"
    )
    path = write(tmp_path, "b.yaml", text)
    checked = check_design(path, load_catalogue(use_env=False))
    (finding,) = checked.findings
    assert not finding.passed
    assert finding.required == 350.5 * 2**30
    low, high = (x / 2**30 for x in finding.predicted_range or (0.0, 0.0))
    shown = f"{finding.predicted / 2**30:.3g} GiB/s ({low:.3g}-{high:.3g})"
    printed = render_text([FileOutcome(path=str(path), check=checked)])
    assert f"busbw >= 350.5 GiB/s  predicted {shown}" in printed
    # a prediction under 1 GiB/s prints in the binary unit of its size, not as '0 GiB/s', and a
    # KiB/s requirement in KiB/s (a review of the first form)
    small = write(
        tmp_path,
        "s.yaml",
        "name: s\nnodes: 2\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 8, min_busbw: 1KiB/s}\n",
    )
    tiny = check_design(small, load_catalogue(use_env=False))
    (row,) = tiny.findings
    assert 2**10 < row.predicted < 2**20
    printed = render_text([FileOutcome(path=str(small), check=tiny)])
    assert f"busbw >= 1 KiB/s  predicted {row.predicted / 2**10:.3g} KiB/s (" in printed


def test_a_size_nccl_tests_rounds_says_the_size_it_runs(tmp_path: Path) -> None:
    """size: 7 of fp32 is run as one element, 4 B, and priced so; the line had said '7 B' (a
    review); in bytes, as an estimate says it, beside the requirement (whose name, in JSON and
    JUnit, stays as written)."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.render.check import FileOutcome, finding_dict, render_text

    text = (
        "name: t\nnodes: 3\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 7, max_time: 1ms}\n"
        "  - allgather: {size: 10GB, max_time: 1s}\n"
        "  - allgather: {size: 5KiB, max_time: 1s}\n"
    )
    path = write(tmp_path, "r.yaml", text)
    checked = check_design(path, load_catalogue(use_env=False))
    printed = render_text([FileOutcome(path=str(path), check=checked)])
    assert "allreduce 7 B: time <= 1 ms (run as 4 B)  predicted" in printed
    # 5 KiB over 24 ranks in whole 16-byte shares (nccl-tests' alignment), as the estimate
    # command rounds it: 13 x 24 x 16 = 4992 B, 2.5 % less; 10 GB loses 256 B, 3e-8 of it,
    # which no printed digit shows
    assert 5120 // 384 * 384 == 4992
    assert "allgather 5 KiB: time <= 1 s (run as 4992 B)  predicted" in printed
    assert "allgather 10 GB: time <= 1 s  predicted" in printed
    first = checked.findings[0]
    assert isinstance(first.basis, CollectiveBasis)
    assert first.basis.estimate.size_bytes == 4
    assert finding_dict(first)["requirement"] == "allreduce 7 B: time <= 1 ms"
    assert finding_dict(first)["run_size_bytes"] == 4
    # and in the message GitHub annotations and JUnit failures carry (a review: only the text
    # line had said it)
    assert "(run as 4 B)" in finding_dict(first)["message"]


@pytest.mark.parametrize(
    ("requirement", "required"),
    [
        ("max_time: 1ns", "time <= 1 ns"),
        ("max_time: 50ns", "time <= 50 ns"),
        ("min_busbw: 1kB/s", "busbw >= 1 kB/s"),
        ("min_algbw: 250kB/s", "algbw >= 250 kB/s"),
        # a rate written in binary units prints in the unit written (300GiB/s had printed as
        # '322.1225472 GB/s': a review); decimal and bit rates print in decimal
        ("min_busbw: 300GiB/s", "busbw >= 300 GiB/s"),
        ("min_busbw: 300GB/s", "busbw >= 300 GB/s"),
        ("min_busbw: 2000Gb/s", "busbw >= 250 GB/s"),
        ("min_busbw: 1.5GB/s", "busbw >= 1.5 GB/s"),
        # many digits in a binary unit stay in it (review CK: its KiB/s figure past 1e6 had
        # printed 'busbw >= 10229781600.976818 KiB/s')
        ("min_busbw: 9755.8799752968GiB/s", "busbw >= 9755.8799752968 GiB/s"),
        ("min_busbw: 256GB/s", "busbw >= 256 GB/s"),
        ("min_busbw: 2048Gb/s", "busbw >= 256 GB/s"),
        ("min_busbw: 512MB/s", "busbw >= 512 MB/s"),
        ("min_busbw: 2.5MiB/s", "busbw >= 2.5 MiB/s"),
        ("min_busbw: 1.125GiB/s", "busbw >= 1.125 GiB/s"),
        # binary bits print in the binary bytes of their prefix
        ("min_busbw: 17Gib/s", "busbw >= 2.125 GiB/s"),
        # the family and prefix written, not the form of fewer digits, which had swapped them
        # (reviews CR L9, CV D3: 0.5GiB/s had printed as 512 MiB/s, 2000000MiB/s as 2097.152
        # GB/s, 1.024kB/s as 1 KiB/s, 107.3741824GB/s as 100 GiB/s)
        ("min_busbw: 0.5GiB/s", "busbw >= 0.5 GiB/s"),
        ("min_busbw: 2000000MiB/s", "busbw >= 2000000 MiB/s"),
        ("min_busbw: 1048576KiB/s", "busbw >= 1048576 KiB/s"),
        ("min_busbw: 1.024kB/s", "busbw >= 1.024 kB/s"),
        ("min_busbw: 107.3741824GB/s", "busbw >= 107.3741824 GB/s"),
        ("min_busbw: 100.0000000000001GiB/s", "busbw >= 100.0000000000001 GiB/s"),
        ("min_busbw: 2TiB/s", "busbw >= 2 TiB/s"),
        # every spelling of a binary unit the reader takes (review CW: 300GiBps had printed as
        # 322.1225472 GB/s), binary bits in bytes of their prefix, decimal bytes in their prefix
        ("min_busbw: 300GiBps", "busbw >= 300 GiB/s"),
        ("min_busbw: 300 GiB/sec", "busbw >= 300 GiB/s"),
        ("min_busbw: 2400Gibps", "busbw >= 300 GiB/s"),
        ("min_busbw: 314572800kB/s", "busbw >= 314572800 kB/s"),
        ("min_busbw: 0.3TB/s", "busbw >= 0.3 TB/s"),
        ("min_busbw: 0.0003PiB/s", "busbw >= 0.0003 PiB/s"),
        ("min_busbw: 0.0003PB/s", "busbw >= 0.0003 PB/s"),
    ],
)
def test_targets_below_a_microsecond_or_a_megabyte_per_second_print(
    tmp_path: Path, requirement: str, required: str
) -> None:
    """Times print in ns below 0.1 us and rates in kB/s below 1 MB/s; the report's figure
    reader had known neither unit and ended in a ValueError (a traceback, not a line)."""
    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.render.check import FileOutcome, render_text

    text = (
        "name: t\nnodes: 4\nsystem: dgx-h100\nrequirements:\n"
        f"  - allreduce: {{size: 1GB, {requirement}}}\n"
    )
    path = write(tmp_path, "tiny.yaml", text)
    cat = load_catalogue(use_env=False)
    printed = render_text([FileOutcome(path=str(path), check=check_design(path, cat))])
    assert f"allreduce 1 GB: {required}" in printed


def test_a_sized_fabric_says_what_it_feeds_the_engine_as_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/roce-400g-2to1.yaml (128 MI300X nodes, rail-optimized SUs of 80, 2:1) prices
    its all-reduce of 4 GB at 29.6 ms, where --oversubscription 2:1 on the command line gave 48.0
    ms: the sized layout also feeds the engine its cross-leaf fractions, which only `design
    show` named. The report says them as flags: 48/127 = 0.378 of the traffic to every peer,
    1/80 = 0.0125 of neighbour traffic and 1 - (1 - 48/127)/8 = 0.922 of traffic off its rail
    crosses; with those flags the command line agrees, to the bit: the flags are the shortest
    text that reads back as each float (printed to 3 digits they had moved a 1 GB all-to-all on
    100 DGX H100 at 4:1 from 77.5 ms to 77.4 ms, past a 77.45 ms requirement: review CC). A
    design asking 3:1 of a fabric that needs no tapered tier says the 3:1 does not apply."""
    roce = Path(__file__).resolve().parents[2] / "examples" / "roce-400g-2to1.yaml"
    code, out, _ = run(["check", str(roce)], capsys)
    assert code == 0
    assert out.splitlines()[1] == (
        "  the sized fabric as priced: oversubscription 2:1, cross-leaf 0.378 (traffic to every "
        "peer), 0.0125 (neighbour), 0.922 (off its rail: all-to-all without PXN); as flags: "
        "--oversubscription 2:1 --cross-leaf 0.3779527559055118 --cross-leaf-neighbour 0.0125 "
        "--cross-leaf-unaligned 0.922244094488189"
    )
    assert f"{48 / 127:.3g}" == "0.378"
    assert repr(48 / 127) == "0.3779527559055118"
    assert f"{1 / 80:.3g}" == "0.0125"
    assert f"{1 - (1 - 48 / 127) / 8:.3g}" == "0.922"
    assert repr(1 - (1 - 48 / 127) / 8) == "0.922244094488189"
    code, out, _ = run(["check", str(roce), "--format", "json"], capsys)
    predicted = json.loads(out)["files"][0]["findings"][0]["predicted"]
    flags = ["--system", "mi300x-8", "-N", "128", "--fabric", "roce-400g"]
    taper = [
        "--oversubscription",
        "2:1",
        "--cross-leaf",
        "0.3779527559055118",
        "--cross-leaf-neighbour",
        "0.0125",
    ]
    code, out, _ = run(["allreduce", "--size", "4GB", *flags, *taper, "--format", "json"], capsys)
    assert json.loads(out)["time_s"] == predicted
    code, out, _ = run(
        ["allreduce", "--size", "4GB", *flags, *taper[:2], "--format", "json"], capsys
    )
    assert json.loads(out)["time_s"] > 1.5 * predicted
    text = (
        "name: small\nnodes: 8\nsystem: dgx-b200\nfabric: {switch: qm9700, oversubscription: 3}\n"
        "requirements: [{allreduce: {size: 1GB, max_time: 1s}}]\n"
    )
    code, out, _ = run(["check", str(write(tmp_path, "small.yaml", text))], capsys)
    assert out.splitlines()[1] == (
        "  the sized fabric as priced: no oversubscription (1:1): the 3:1 asked has no tapered "
        "tier to apply to at this size"
    )


def test_design_show_json_gives_the_cross_leaf_fractions_it_prices_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`design show --format json` gave the oversubscription fed to the engine but not the
    cross-leaf fractions beside it, which check's report says as flags and an estimate's JSON
    names (cross_leaf_fraction, neighbour_... and unaligned_...): a script had to read them out
    of the assumptions' words ("38%"). examples/roce-400g-2to1.yaml (128 nodes, rail-optimized
    SUs of 80, 2:1): 48/127 of the traffic to every peer, 1/80 of neighbour traffic and
    1 - (1 - 48/127)/8 of traffic off its rail cross the leaves; the same three an estimate
    with check's flags reports. Without a sized fabric every byte crosses: 1."""
    roce = Path(__file__).resolve().parents[2] / "examples" / "roce-400g-2to1.yaml"
    code, out, _ = run(["design", "show", str(roce), "--format", "json"], capsys)
    assert code == 0
    shown = json.loads(out)
    fractions = (48 / 127, 1 / 80, 1 - (1 - 48 / 127) / 8)
    keys = ("cross_leaf_fraction", "neighbour_cross_leaf_fraction", "unaligned_cross_leaf_fraction")
    assert tuple(shown[k] for k in keys) == pytest.approx(fractions, rel=1e-12)
    assert shown["oversubscription"] == 2
    flags = ["--system", "mi300x-8", "-N", "128", "--fabric", "roce-400g"]
    taper = ["--oversubscription", "2:1", "--cross-leaf", repr(shown["cross_leaf_fraction"])]
    taper += ["--cross-leaf-neighbour", repr(shown["neighbour_cross_leaf_fraction"])]
    taper += ["--cross-leaf-unaligned", repr(shown["unaligned_cross_leaf_fraction"])]
    code, out, _ = run(["allreduce", "--size", "4GB", *flags, *taper, "--format", "json"], capsys)
    assert code == 0
    estimated = json.loads(out)
    assert tuple(estimated[k] for k in keys) == tuple(shown[k] for k in keys)
    su = Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml"
    code, out, _ = run(["design", "show", str(su), "--format", "json"], capsys)
    assert tuple(json.loads(out)[k] for k in keys) == (1.0, 1.0, 1.0)


def test_an_alltoall_without_pxn_crosses_a_rail_optimized_taper_inside_one_su(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], builtin_catalogue: Catalogue
) -> None:
    """48 DGX H100 on rail-optimized QM9700 leaves at 4:1 (48 down, 12 up: one SU holds every
    node, so rail-aligned traffic never crosses). Without PXN a GPU sends from its own NIC to
    the destination GPU's, on another rail for 7 of 8 peer GPUs: those bytes leave the rail's
    leaf, 1 - (1 - 0)/8 = 0.875 of them, and at 4:1 run 3.5x slower. The pairwise all-to-all had
    been priced as if it stayed on its rail, equal to the 1:1 design (22.8 ms for 1 GiB; about
    77 ms by hand, a fabric architect's review). PXN keeps its bytes on the rail: unslowed."""
    body = (
        "nodes: 48\nsystem: dgx-h100\n"
        "fabric: {{link: ndr, switch: qm9700, rail_optimized: true, oversubscription: '{k}'}}\n"
        "requirements:\n"
        "  - alltoall: {{size: 1GiB, max_time: 1s, algo: pairwise}}\n"
        "  - alltoall: {{size: 1GiB, max_time: 1s, algo: pxn}}\n"
    )
    tapered = write(tmp_path, "t.yaml", "name: t\n" + body.format(k="4:1"))
    flat = write(tmp_path, "f.yaml", "name: f\n" + body.format(k="1:1"))
    code, out, _ = run(["check", str(tapered)], capsys)
    assert code == 0
    assert (
        "cross-leaf 0 (traffic to every peer), 0 (neighbour), 0.875 (off its rail: all-to-all "
        "without PXN); as flags: --oversubscription 4:1 --cross-leaf 0 --cross-leaf-neighbour 0 "
        "--cross-leaf-unaligned 0.875" in out.splitlines()[1]
    )
    times = {}
    for name, path in (("tapered", tapered), ("flat", flat)):
        code, out, _ = run(["check", str(path), "--format", "json"], capsys)
        findings = json.loads(out)["files"][0]["findings"]
        times[name] = [f["predicted"] for f in findings]
    # the network term (n-m)/n x S over a GPU's NDR port: 376/384 x 2^30 B at 48.75 GB/s
    ndr = find_link(builtin_catalogue, "ndr").achievable_Bps
    assert ndr == pytest.approx(50e9 * 0.975)
    net = 376 / 384 * (2**30 - 2**30 % 384) / ndr
    # pairwise: x3.5 instead of x1, the latency unchanged; PXN: the same at 4:1 and 1:1
    assert times["tapered"][0] - times["flat"][0] == pytest.approx((3.5 - 1) * net, rel=1e-3)
    assert times["tapered"][1] == pytest.approx(times["flat"][1])
    # the flags it prints give the command line the same figure
    flags = ["-s", "1GiB", "--system", "dgx-h100", "-N", "48", "--fabric", "ndr"]
    taper = ["--oversubscription", "4:1", "--cross-leaf", "0", "--cross-leaf-neighbour", "0"]
    code, out, _ = run(
        [
            "alltoall",
            *flags,
            *taper,
            "--cross-leaf-unaligned",
            "0.875",
            "--algo",
            "pairwise",
            "--format",
            "json",
        ],
        capsys,
    )
    assert json.loads(out)["time_s"] == pytest.approx(times["tapered"][0], rel=1e-3)
    assert json.loads(out)["unaligned_cross_leaf_fraction"] == 0.875


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 512 DGX H100, 3 tiers at [1, 2]: SUs of 32, one pod per rail holding all 512 nodes
        # (f2 = 0), f1 = (512 - 32)/511. Off its rail the bytes leave the rail's pod too (pods
        # are per rail): f2u = 1 - (1 - 0)/8 = 0.875 at the 2:1 core, so the engine's share is
        # max(1 x f1u, 2 x 0.875) / 2 = 0.875 (it had taken the aligned f2, 0.496, and passed a
        # pairwise all-to-all of 51.2 ms under 50 ms: a review's finding)
        (
            "nodes: 512\nsystem: dgx-h100\nfabric: {link: ndr, switch: qm9700, "
            "rail_optimized: true, oversubscription: [1, 2]}\n",
            max(1 - (1 - 480 / 511) / 8, 2 * (1 - 1 / 8)) / 2,
        ),
        # one GPU with 2 NICs: NCCL's channels pick among the GPU's NICs alike at both ends, so
        # its bytes stay on their rail: the share is the aligned one, (96 - 48)/95 at 4:1 on
        # leaves of 48 down (it had divided by the 2 NICs, 0.753)
        (
            "nodes: 96\ngpus_per_node: 1\nintra: nvlink4\nnics_per_node: 2\ninter: ndr\n"
            "fabric: {switch: qm9700, rail_optimized: true, oversubscription: '4:1'}\n",
            (96 - 48) / 95,
        ),
        # 16 NICs for 8 GPUs (OCI): a GPU's rails are its 2 NICs' pair, one of 8 pairs, so
        # 1/8 of a peer node's GPUs share them: 1 - (1 - 0)/8 (it had divided by 16, 0.938)
        (
            "nodes: 32\nsystem: oci-bm-gpu-h100\n"
            "fabric: {radix: 64, rail_optimized: true, oversubscription: '2:1'}\n",
            1 - 1 / 8,
        ),
    ],
    ids=["three-tiers", "one-gpu-two-nics", "two-nics-a-gpu"],
)
def test_the_off_rail_share_counts_rails_a_gpu_uses_and_pods_per_rail(
    tmp_path: Path, builtin_catalogue: Catalogue, text: str, expected: float
) -> None:
    path = write(tmp_path, "d.yaml", "name: d\n" + text + "requirements: []\n")
    design, doc = load_design(path, catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    spec = resolved.cluster.spec
    assert spec.unaligned_cross_leaf_fraction == pytest.approx(expected)


@pytest.mark.parametrize("nodes", [69, 78])
def test_one_rail_a_gpu_has_no_off_rail_share_and_no_rounding_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: int
) -> None:
    """DGX H100 with one NIC a node on QM9700 at 2:1: every GPU sends through the same rail, so
    the off-rail share is the aligned one; 1 - (1 - f)/1 had landed a rounding step below f and
    the design was refused ('0.397059 is below the fabric layout 0.397059', a review's
    finding, at 69 and 78 nodes)."""
    text = (
        f"name: r\nnodes: {nodes}\nsystem: dgx-h100\nnics_per_node: 1\n"
        'fabric: {link: ndr, switch: qm9700, rail_optimized: true, oversubscription: "2:1"}\n'
        "requirements: [{alltoall: {size: 1GB, max_time: 1s}}]\n"
    )
    code, out, err = run(["check", str(write(tmp_path, "r.yaml", text))], capsys)
    assert code == 0, err
    assert "off its rail" not in out


def test_trays_of_one_nvlink_rack_are_no_network_peers_in_the_cross_leaf_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], builtin_catalogue: Catalogue
) -> None:
    """4 GB200 NVL72 racks (72 trays of 4 GPUs, 18 a rack) on rail-optimized QM9700 leaves at
    2:1 (42 down: SUs of 42 trays, racks 0-1 and 6 trays of rack 2 in the first). A tray's
    peers in its own rack talk over NVLink: its network peers are the 54 in other racks. A
    rack-0 tray has 42 - 18 = 24 of them in its leaf group, a rack-2 tray 42 - 6 = 36, so the
    group's share behind other leaves is (36 x 30/54 + 6 x 18/54) / 42 = 0.524 and at 2:1 an
    all-to-all slows x1.05; counting every tray a peer gave (72 - 42)/71 = 0.423, no slowdown
    (a fabric architect's review: 15.6 ms, as at 1:1)."""
    body = (
        "nodes: 72\nsystem: gb200-nvl72\n"
        "fabric: {{link: ndr, switch: qm9700, rail_optimized: true, oversubscription: '{k}'}}\n"
        "requirements:\n  - alltoall: {{size: 1GB, max_time: 1s}}\n"
    )
    tapered = write(tmp_path, "t.yaml", "name: t\n" + body.format(k="2:1"))
    design, doc = load_design(tapered, catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    assert resolved.fabric is not None
    assert resolved.fabric.su_nodes == 42
    share = (36 * 30 / 54 + 6 * 18 / 54) / 42
    assert resolved.cluster.spec.cross_leaf_fraction == pytest.approx(share)
    assert f"{share:.3g}" == "0.524"
    flat = write(tmp_path, "f.yaml", "name: f\n" + body.format(k="1:1"))
    times = []
    for path in (tapered, flat):
        code, out, _ = run(["check", str(path), "--format", "json"], capsys)
        assert code == 0
        times.append(json.loads(out)["files"][0]["findings"][0]["predicted"])
    # PXN's network term, (n - m)/n x S over a GPU's NDR port ((288 - 72)/288 x 1 GB at
    # 48.75 GB/s), runs max(1, 2 x 0.524) x at 2:1: the difference is that term x (2f - 1)
    ndr = find_link(builtin_catalogue, "ndr").achievable_Bps
    net = (288 - 72) / 288 * 1e9 / ndr
    assert times[0] - times[1] == pytest.approx((2 * share - 1) * net, rel=1e-2)
    # eight racks: 40 down / 20 up (21 switches, where 42 / 21 takes 23; every-peer traffic
    # 2 x 104/143 = 1.455 against 2 x 102/143 = 1.427, within the 2 % tie), three full groups
    # of 40 (at 0, 40, 80) of which the worst sets the share; racks of 18 cut the group at 0
    # into 18 + 18 + 4: (36 x (1 - 22/126) + 4 x (1 - 36/126)) / 40 = 0.814, where the others
    # give 0.798 and 0.795
    eight_racks = ("name: e\n" + body.format(k="2:1")).replace("nodes: 72", "nodes: 144")
    eight = write(tmp_path, "e.yaml", eight_racks)
    design, doc = load_design(eight, catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    assert resolved.fabric is not None
    assert (resolved.fabric.su_nodes, resolved.fabric.total_switches) == (40, 21)
    worst = (36 * (1 - 22 / 126) + 4 * (1 - 36 / 126)) / 40
    assert resolved.cluster.spec.cross_leaf_fraction == pytest.approx(worst)


def test_trays_of_one_nvlink_rack_are_no_network_peers_in_the_pod_share(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """32 NVL72 racks (576 trays) on three tiers of 32-port switches, rail-optimized, 2:1 at the
    spines: pods of 320 trays (racks 0-16 and 14 trays of rack 17). A tray's network peers are
    the 558 outside its rack; a full rack's tray has 320 - 18 = 302 of them in its pod, a
    rack-17 tray 306, so the pod's share outside is (306 x 256 + 14 x 252) / (320 x 558) =
    0.458, where counting every tray a peer gave (576 - 320) / 575 = 0.445. Off-rail traffic
    (4 rails) crosses the spines for 1 - (1 - f2)/4 of it, which at [1, 2] binds: 0.865, not
    0.861."""
    text = (
        "name: p\nnodes: 576\nsystem: gb200-nvl72\n"
        "fabric: {link: ndr, radix: 32, tiers: 3, oversubscription: [1, 2]}\n"
    )
    design, doc = load_design(write(tmp_path, "p.yaml", text), catalogue=builtin_catalogue)
    resolved = resolve_design(design, doc, builtin_catalogue)
    sizing = resolved.fabric
    assert sizing is not None
    assert (sizing.tiers, sizing.rails, sizing.spine_down * sizing.leaf_group) == (3, 4, 320)
    f2 = (306 * 256 + 14 * 252) / (320 * 558)
    assert f"{f2:.3g}" == "0.458"
    assert resolved.cluster.spec.unaligned_cross_leaf_fraction == pytest.approx(1 - (1 - f2) / 4)
    assert f"{1 - (1 - f2) / 4:.3g}" == "0.865"
    # at [1, 4] the spines bind for every peer's traffic: pods of 384 (racks 0-20 and 6 trays of
    # rack 21), f2 = (378 x 192 + 6 x 180) / (384 x 558) = 0.34375; the engine gets
    # max(k1 f1, k1 k2 f2) / K = max(1, 4 x 0.34375) / 4 = f2 (0.334 before)
    design, doc = load_design(
        write(tmp_path, "q.yaml", text.replace("[1, 2]", "[1, 4]")), catalogue=builtin_catalogue
    )
    resolved = resolve_design(design, doc, builtin_catalogue)
    assert resolved.fabric is not None
    assert resolved.fabric.spine_down * resolved.fabric.leaf_group == 384
    f2 = (378 * 192 + 6 * 180) / (384 * 558)
    assert f2 == pytest.approx(0.34375)
    assert resolved.cluster.spec.cross_leaf_fraction == pytest.approx(f2)


def test_an_unsized_tapered_design_says_every_byte_crosses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """64 DGX H100 on NDR at 2:1 without a switch named: every network byte is taken to cross
    the tapered uplinks (cross-leaf 1, the worst case), so a ring all-reduce's network term
    runs max(1, 2 x 1) = 2x slower than on the same design with its leaves laid out, where
    only one edge per channel leaves a leaf group. Nothing had said so (10.5 ms against 5.41 ms
    with `switch: qm9700`); the report says how it priced the taper."""
    text = (
        "name: unsized\nnodes: 64\nsystem: dgx-h100\n"
        'fabric: {link: ndr, oversubscription: "2:1"}\n'
        "requirements: [{allreduce: {size: 1GB, max_time: 1s}}]\n"
    )
    code, out, _ = run(["check", str(write(tmp_path, "unsized.yaml", text))], capsys)
    assert code == 0
    code, data, _ = run(["check", str(write(tmp_path, "u.yaml", text)), "--format", "json"], capsys)
    tapered_s = json.loads(data)["files"][0]["findings"][0]["predicted"]
    assert out.splitlines()[1] == (
        "  as priced: oversubscription 2:1, cross-leaf 1 (every byte crosses the tapered "
        "uplinks, the worst case: no switch is named to lay out the leaves; fabric.switch or "
        "fabric.radix sizes them and derives the share)"
    )
    flat = text.replace('oversubscription: "2:1"', 'oversubscription: "1:1"')
    code, out, _ = run(["check", str(write(tmp_path, "flat.yaml", flat))], capsys)
    assert out.splitlines()[1].startswith("PASS")  # no taper, nothing to say
    code, data, _ = run(["check", str(write(tmp_path, "f.yaml", flat)), "--format", "json"], capsys)
    flat_s = json.loads(data)["files"][0]["findings"][0]["predicted"]
    # every byte crossing at 2:1 doubles the network term: 2 x S over the node's 8 NDR ports,
    # 2 x 1 GB / (8 x 48.75 GB/s) = 5.13 ms, once more
    assert tapered_s - flat_s == pytest.approx(2 * 1e9 / (8 * 50e9 * 0.975), rel=1e-2)


def test_a_utf16_design_with_its_byte_order_mark_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """YAML may be UTF-16 with a byte-order mark (a Windows editor's 'Unicode'): such a design
    had been refused as 'file is binary, not YAML' for its NUL bytes, while nccl-check reads
    UTF-16 logs. It checks as its UTF-8 copy does, positions included; a broken one says so."""
    example = Path(__file__).resolve().parents[2] / "examples" / "aws-p5-efa.yaml"
    utf8 = tmp_path / "utf8.yaml"
    utf16 = tmp_path / "utf16.yaml"
    utf8.write_bytes(example.read_bytes())
    utf16.write_bytes(example.read_text(encoding="utf-8").encode("utf-16"))
    assert utf16.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    code8, out8, _ = run(["check", str(utf8)], capsys)
    code16, out16, _ = run(["check", str(utf16)], capsys)
    assert (code16, out16.replace("utf16.yaml", "utf8.yaml")) == (code8, out8)
    # UTF-32, whose little-endian mark starts with UTF-16's: read as UTF-32, not as UTF-16 (which
    # had found 'control character \x00 ... at 1:1')
    for codec in ("utf-32-le", "utf-32-be"):
        wide = tmp_path / f"{codec}.yaml"
        mark = "\ufeff".encode(codec)
        wide.write_bytes(mark + example.read_text(encoding="utf-8").encode(codec))
        code32, out32, err32 = run(["check", str(wide)], capsys)
        assert (code32, out32.replace(wide.name, "utf8.yaml"), err32) == (code8, out8, "")
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(b"\xff\xfe" + "name: x\n".encode("utf-16-le") + b"\x00\xd8")
    code, out, err = run(["check", str(broken)], capsys)
    assert (code, out) == (2, "")
    assert err == f"error: {broken}: file is not valid UTF-16 (unexpected end of data)\n"


def test_a_switch_budget_of_none_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No sized fabric has 0 switches: `switches: {max: 0}` had failed with '100.0% over' and a
    margin of -100 %, (24 - 0) / 0 being no percentage (a hostile-input review)."""
    path = write(
        tmp_path,
        "s.yaml",
        "name: s\nnodes: 32\nsystem: dgx-h100\nfabric: {switch: qm9700}\n"
        "requirements:\n  - switches: {max: 0}\n",
    )
    code, out, err = run(["check", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == f"error: {path}:6:16: requirements[0].switches.max: must be at least 1\n"


def test_a_report_file_named_for_another_format_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --format json -o report.xml` wrote JSON into the file a CI job uploads as JUnit
    (a hostile-input review): the suffix names the report, and --format must agree."""
    design = Path(__file__).resolve().parents[2] / "examples" / "dgx-h100-superpod-su-ndr.yaml"
    report = tmp_path / "report.xml"
    code, out, err = run(["check", str(design), "--format", "json", "-o", str(report)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"error: --output {report} names a junit report, but --format is json; give --format "
        "junit, or another file name\n"
    )
    assert not report.exists()
    code, _, _ = run(["check", str(design), "--format", "junit", "-o", str(report)], capsys)
    assert code == 0
    assert report.read_text(encoding="utf-8").startswith("<?xml")


def test_no_leaf_group_is_claimed_where_the_fill_splits_a_node(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """42 DGX H100 on 4 NICs each, QM9700 at 2:1, not rail-optimized: a leaf has 42 ports
    down, and the fill puts half of node 10 on the second leaf. 'A leaf serves 10 whole nodes'
    had let a 2-node group on nodes 10-11 be priced clear of the taper (a review); the layout
    gives the workload commands no leaf group, and a rail-optimized SU does."""
    text = (
        "name: s\nnodes: 42\nsystem: dgx-h100\nnics_per_node: 4\n"
        "fabric: {{switch: qm9700, rail_optimized: {rail}, oversubscription: 2}}\n"
    )
    split, su = (
        resolve_design(
            *load_design(
                write(tmp_path, f"{r}.yaml", text.format(rail=r)), catalogue=builtin_catalogue
            ),
            builtin_catalogue,
        )
        for r in ("false", "true")
    )
    assert split.cluster.spec.oversubscription == 2
    assert split.cluster.spec.leaf_group_nodes is None
    assert su.cluster.spec.leaf_group_nodes is not None


def test_a_number_where_true_or_false_belongs_is_said_in_plain_words(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """'nvls: 1' had read pydantic's 'Input should be a valid boolean'; it is said as the
    file's other type errors are. A fractional count keeps its own words."""
    problem = only_problem(
        tmp_path, builtin_catalogue, "name: d\nnodes: 2\nsystem: dgx-h100\nnvls: 1\n"
    )
    assert str(problem).endswith("nvls: 1 is not true or false")
    problem = only_problem(tmp_path, builtin_catalogue, "name: d\nnodes: 2.5\nsystem: dgx-h100\n")
    assert str(problem).endswith("nodes: 2.5 is not a whole number")


def test_a_size_nccl_tests_would_not_run_is_a_warning(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    """DGX H100 states 80 GiB: nccl-tests runs up to (80 - 4 - 1) / 3 = 25 GiB (its send,
    receive and data-check buffers); a 100 GB all-reduce requirement had passed without a word
    of a run that cannot be measured (a review)."""
    text = (
        "name: big\nsystem: dgx-h100\nnodes: 2\nrequirements:\n"
        "  - allreduce: {size: 100GB, max_time: 10s}\n"
        "  - allreduce: {size: 25GiB, max_time: 10s}\n"
    )
    checked = check_design(write(tmp_path, "big.yaml", text), builtin_catalogue)
    assert [f.passed for f in checked.findings] == [True, True]
    (warning,) = checked.warnings
    assert (warning.line, warning.col) == (5, 17)  # the size key of the first requirement
    assert warning.message.startswith(
        "requirements[0].allreduce.size: 100 GB is past the about 25.0 GiB nccl-tests runs on "
        "dgx-h100's GPUs"
    )


def test_a_request_repeated_is_priced_once_and_kept_without_its_alternatives(
    tmp_path: Path, builtin_catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BN: 10,000 requirements took 8 s and 450 MB a file, held until the report."""
    import ibcalc.design.check as check_module

    calls: list[float] = []
    real = check_module.estimate_on

    def counted(*args: Any, **kwargs: Any) -> Estimate:
        calls.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(check_module, "estimate_on", counted)
    text = TWO_NODES + "  - allreduce: {size: 1GB, max_time: 2s}\n" * 3
    text += "  - allreduce: {size: 2GB, max_time: 2s}\n"
    findings = check_design(write(tmp_path, "a.yaml", text), builtin_catalogue).findings
    assert len(findings) == 2 + 3 + 1  # max_time and min_busbw, then one each
    assert calls == [1e9, 2e9]  # 1 GB priced once for four requirements
    first = findings[0].basis
    assert isinstance(first, CollectiveBasis)
    assert first.estimate.alternatives == []
    # the same estimate behind each 1 GB finding, and its best is the full one's
    assert all(
        isinstance(f.basis, CollectiveBasis) and f.basis.estimate is first.estimate
        for f in findings[:5]
    )
    # what is kept is the full estimate's best, time and band
    design, doc = check_module.load_design(write(tmp_path, "b.yaml", TWO_NODES))
    resolved = check_module.resolve_design(design, doc, builtin_catalogue)
    full = real(resolved.cluster, Collective.ALL_REDUCE, 1e9, sharp_what_if=False)
    assert full.alternatives
    assert (first.estimate.best, first.estimate.time_s_range) == (full.best, full.time_s_range)


def test_requirements_past_the_bound_are_refused(
    tmp_path: Path, builtin_catalogue: Catalogue
) -> None:
    text = TWO_NODES + "  - allreduce: {size: 1GB, max_time: 2s}\n" * 1000
    with pytest.raises(DesignError) as info:
        check_design(write(tmp_path, "a.yaml", text), builtin_catalogue)
    assert "requirements: 1,001 items, more than the 1,000 taken" in str(info.value)


def test_optional_keys_given_as_null_are_the_keys_omitted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/design-files.md: an optional key given as null is the key omitted. Keys whose
    default is not null (sharp, rail_optimized, topology, extra_endpoints, oversubscription,
    dtype, requirements) had been refused as "Input should be a valid boolean" or "null is not
    a list" (review CC: a file with every requirement commented out failed even with
    --allow-empty); the file with them null prices as the file without them. A required key
    given as null is refused in the file's words, not Python's ('None')."""
    head = "name: b\nnodes: 4\nsystem: dgx-h100\n"
    nulls = write(
        tmp_path,
        "nulls.yaml",
        head + "fabric:\n  switch: qm9700\n  topology:\n  rail_optimized:\n  sharp:\n"
        "  extra_endpoints:\n  oversubscription:\nrequirements:\n"
        "  - allreduce: {size: 1GB, max_time: 1s, dtype: , algo: , min_busbw: }\n",
    )
    plain = write(
        tmp_path,
        "plain.yaml",
        head + "fabric:\n  switch: qm9700\nrequirements:\n"
        "  - allreduce: {size: 1GB, max_time: 1s}\n",
    )
    code, out, err = run(["check", str(nulls), "--format", "json"], capsys)
    assert (code, err) == (0, "")
    keys = ("predicted", "predicted_range", "required", "margin", "message")
    given = [{k: f[k] for k in keys} for f in json.loads(out)["files"][0]["findings"]]
    code, out, _ = run(["check", str(plain), "--format", "json"], capsys)
    assert code == 0
    assert given == [{k: f[k] for k in keys} for f in json.loads(out)["files"][0]["findings"]]
    empty = write(tmp_path, "empty.yaml", head + "requirements:\n")
    assert run(["check", str(empty), "--allow-empty"], capsys)[0] == 0
    ratio = write(tmp_path, "ratio.yaml", head + "requirements:\n  - oversubscription: {max: }\n")
    code, _, err = run(["check", str(ratio)], capsys)
    assert code == 2
    assert err == (
        f"error: {ratio}:5:24: requirements[0].oversubscription.max: oversubscription null is "
        "not a ratio (write 2 or 2:1)\n"
    )


def test_the_header_names_the_settings_that_change_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two GB200 designs of 72- and 4-GPU scale-up domains print different headers (review CC:
    the same header, 2.16 ms against 10.6 ms for a 1 GB all-reduce), and SHARP, NVLS switched
    off, NICs and their PCIe link apart from the preset's are said; a plain design says none of
    them."""
    head = "name: g\nnodes: 144\nsystem: gb200-nvl72\n"
    reqs = "requirements: [{allreduce: {size: 1GB, max_time: 1s}}]\n"
    cases = {
        "": "(144 nodes x 4 GPUs, gb200-nvl72; nvlink5 / ndr; 72-GPU scale-up domains)",
        "scale_up_domain: 4\n": (
            "(144 nodes x 4 GPUs, gb200-nvl72; nvlink5 / ndr; 4-GPU scale-up domains "
            "(gb200-nvl72's: 72))"
        ),
        "scale_up_domain: 36\nnvls: false\nfabric: {switch: qm9700, sharp: true}\n": (
            "(144 nodes x 4 GPUs, gb200-nvl72; nvlink5 / ndr; 36-GPU scale-up domains "
            "(gb200-nvl72's: 72); SHARP; NVLS off)"
        ),
    }
    for i, (extra, said) in enumerate(cases.items()):
        path = write(tmp_path, f"g{i}.yaml", head + extra + reqs)
        code, out, _ = run(["check", str(path)], capsys)
        assert code == 0
        assert out.splitlines()[0] == f"{path}: g {said}"
    # NICs and their PCIe link set apart from the preset's are said (review CD: 2 NICs a DGX
    # H100 node, 20.7 ms against 5.33 ms, had read as the preset's 8); NVLS off only where the
    # link has NVLS (DGX A100 has none)
    others = {
        "system: dgx-h100\nnics_per_node: 2\n": "dgx-h100; nvlink4 / ndr; 2 NICs per node)",
        "system: dgx-h100\nhost_pcie: pcie4\n": "dgx-h100; nvlink4 / ndr; NICs on pcie4)",
        "system: dgx-a100\nnvls: false\n": "dgx-a100; nvlink3 / hdr)",
        "gpus_per_node: 8\nintra: nvlink4\ninter: ndr\n": "nvlink4 / ndr; 8 NICs per node)",
        # a domain cut below the preset's, and a host CPU not the preset's (review CF)
        "system: gb200-nvl72\nscale_up_domain: 4\n": (
            "nvlink5 / ndr; 4-GPU scale-up domains (gb200-nvl72's: 72))"
        ),
        "system: dgx-h100\nhost_cpu: amd\n": "dgx-h100; nvlink4 / ndr; amd host CPU)",
        "system: dgx-a100\nhost_cpu: amd\n": "dgx-a100; nvlink3 / hdr)",
        # fewer GPUs than the preset's domain: one domain of them all, not a cut (review CG)
        "system: gb200-nvl72\n": "gb200-nvl72; nvlink5; one 64-GPU scale-up domain)",
    }
    for i, (extra, said) in enumerate(others.items()):
        path = write(tmp_path, f"h{i}.yaml", "name: h\nnodes: 16\n" + extra + reqs)
        code, out, _ = run(["check", str(path)], capsys)
        assert code == 0
        assert out.splitlines()[0].endswith(said), out


def test_unknown_keys_are_offered_their_sections_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key made of its section's key and a word is offered that key ('sharp_enabled': sharp,
    'max_count': max), and 'switch' in a requirement is offered switches, not told to check an
    indent because fabric takes 'switch' (review CC: the first two had been offered nothing).
    The missing key a slip stands for is not said again; one of another section still is, and
    so is one a key with words added is offered ('max_count': max; review CD: 'nodes_per_su',
    an SU's size, had been offered nodes with the missing nodes left unsaid)."""
    text = (
        "name: l2\nnodes: 4\nsystem: dgx-h100\n"
        "fabric: {switch: qm9700, sharp_enabled: true}\n"
        "requirements:\n"
        "  - switches: {max_count: 12}\n"
        "  - switch: {max: 12}\n"
        "  - switches: {max_time: 1s}\n"
        "  - gap: {max: 9}\n"
        "  - allreduce: {size: 1GB, min: 1GB/s}\n"
    )
    path = write(tmp_path, "l2.yaml", text)
    code, _, err = run(["check", str(path)], capsys)
    assert code == 2
    assert err.splitlines() == [
        f"error: {path}:4:26: fabric.sharp_enabled: unknown key (did you mean sharp?)",
        f"error: {path}:6:5: requirements[0].switches.max: missing: this key is required",
        f"error: {path}:6:16: requirements[0].switches.max_count: unknown key (did you mean max?)",
        f"error: {path}:7:5: requirements[1].switch: unknown key (did you mean switches?)",
        f"error: {path}:8:5: requirements[2].switches.max: missing: this key is required",
        f"error: {path}:8:16: requirements[2].switches.max_time: unknown key here (this section "
        "takes max): a key of another section (check its indent)",
        # a key its section's key begins, though another section takes it (review CD)
        f"error: {path}:9:11: requirements[3].gap.max: unknown key (did you mean max_ratio?)",
        # every key it begins (review CF: min_busbw had not been offered)
        f"error: {path}:10:28: requirements[4].allreduce.min: unknown key (did you mean "
        "min_algbw or min_busbw?)",
    ]


def test_a_key_with_words_added_leaves_the_missing_key_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'nodes_per_su' (a scalable unit's size) is offered nodes, and nodes, missing, is said so:
    only a slip of a key ('node') stands for it (review CD)."""
    added = write(tmp_path, "su.yaml", "name: x\nnodes_per_su: 32\nsystem: dgx-h100\n")
    code, _, err = run(["check", str(added)], capsys)
    assert code == 2
    assert err.splitlines() == [
        f"error: {added}:1:1: nodes: missing: this key is required",
        f"error: {added}:2:1: nodes_per_su: unknown key (did you mean nodes?)",
    ]
    # so is a key with a short word added ('nodes_count': review CH found it hidden there)
    count = write(tmp_path, "count.yaml", "name: x\nnodes_count: 32\nsystem: dgx-h100\n")
    code, _, err = run(["check", str(count)], capsys)
    assert err.splitlines() == [
        f"error: {count}:1:1: nodes: missing: this key is required",
        f"error: {count}:2:1: nodes_count: unknown key (did you mean nodes?)",
    ]
    slip = write(tmp_path, "slip.yaml", "name: x\nnode: 32\nsystem: dgx-h100\n")
    code, _, err = run(["check", str(slip)], capsys)
    assert err.splitlines() == [f"error: {slip}:2:1: node: unknown key (did you mean nodes?)"]


def test_junit_names_two_requirements_that_print_alike_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two requirements printed alike (51.3ms and 0.0513s are both 'time <= 51.3 ms') become
    two JUnit testcases with their lines in their names, where they had shared one name that a
    consumer keying cases by name merges (review CC); a name used once keeps its plain form."""
    text = (
        "name: j\nnodes: 2\nsystem: dgx-h100\nrequirements:\n"
        "  - allreduce: {size: 1GB, max_time: 51.3ms}\n"
        "  - allreduce: {size: 1GB, max_time: 0.0513s}\n"
        "  - allgather: {size: 1GB, max_time: 1s}\n"
    )
    path = write(tmp_path, "j.yaml", text)
    code, out, _ = run(["check", str(path), "--format", "junit"], capsys)
    assert code == 0
    import xml.etree.ElementTree as ET

    names = [case.get("name") for case in ET.fromstring(out).iter("testcase")]
    assert names == [
        "allreduce 1 GB: time <= 51.3 ms (line 5)",
        "allreduce 1 GB: time <= 51.3 ms (line 6)",
        "allgather 1 GB: time <= 1 s",
    ]
    # on one line (a flow-style list) they take their columns; in two files whose designs share
    # a name, their files (review CF: both had kept one name)
    flow = write(
        tmp_path,
        "flow.yaml",
        "name: f\nnodes: 2\nsystem: dgx-h100\nrequirements: [{allreduce: {size: 1GB, "
        "max_time: 51.3ms}}, {allreduce: {size: 1GB, max_time: 0.0513s}}]\n",
    )
    twin = write(tmp_path, "twin.yaml", text)
    code, out, _ = run(["check", str(flow), str(path), str(twin), "--format", "junit"], capsys)
    assert code == 0
    cases = [(c.get("classname"), c.get("name")) for c in ET.fromstring(out).iter("testcase")]
    assert cases[:2] == [
        ("ibcalc.f", "allreduce 1 GB: time <= 51.3 ms (line 4, col 40)"),
        ("ibcalc.f", "allreduce 1 GB: time <= 51.3 ms (line 4, col 84)"),
    ]
    assert cases[2:] == [
        ("ibcalc.j", f"{req} ({file}, line {line}, col 28)")
        for file in (path, twin)
        for req, line in (
            ("allreduce 1 GB: time <= 51.3 ms", 5),
            ("allreduce 1 GB: time <= 51.3 ms", 6),
            ("allgather 1 GB: time <= 1 s", 7),
        )
    ]
    assert len(set(cases)) == len(cases)
    # a requirement repeated through an alias is at the alias's line (it had shared its
    # anchor's place, and was numbered: review CL); names are told apart as the XML writes them
    # (U+2028 and the text '\u2028' are written alike: review CI)
    alias = write(
        tmp_path,
        "alias.yaml",
        "name: a\nnodes: 2\nsystem: dgx-h100\nrequirements:\n"
        "  - &r {allreduce: {size: 1GB, max_time: 1s}}\n  - *r\n  - *r\n",
    )
    line_sep = write(tmp_path, "ls.yaml", TWO_NODES.replace("two-dgx", '"x\\u2028y"'))
    text_sep = write(tmp_path, "ts.yaml", TWO_NODES.replace("two-dgx", "'x\\u2028y'"))
    code, out, _ = run(
        ["check", str(alias), str(line_sep), str(text_sep), "--format", "junit"], capsys
    )
    cases = [(c.get("classname"), c.get("name")) for c in ET.fromstring(out).iter("testcase")]
    assert len(set(cases)) == len(cases) == 3 + 4
    assert [name for _, name in cases[:3]] == [
        f"allreduce 1 GB: time <= 1 s (line {line})" for line in (5, 6, 7)
    ]
    # findings alike to the place are numbered, the last resort
    from dataclasses import replace

    from ibcalc.render.check import _junit_names

    findings = check_design(alias, load_catalogue(use_env=False)).findings
    alike = [replace(f, line=5, col=5) for f in findings]
    assert sorted(_junit_names(alike).values()) == [
        f"allreduce 1 GB: time <= 1 s ({alias}, line 5, col 5) #{n}" for n in (1, 2, 3)
    ]


@pytest.mark.parametrize(
    ("cluster", "said"),
    [
        (
            "nodes: 1\nsystem: dgx-h100\n",
            "this cluster has no scale-out tier: its one node is one scale-up domain of 8 GPUs",
        ),
        (
            "nodes: 18\nsystem: gb200-nvl72\n",
            "this cluster has no scale-out tier: its 18 nodes are one scale-up domain of 72 GPUs",
        ),
        (
            "nodes: 4\ngpus_per_node: 1\ninter: ndr\n",
            "this cluster has no scale-up tier: 1 GPU per node",
        ),
    ],
)
def test_a_gap_target_without_a_gap_names_the_tier_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: str, said: str
) -> None:
    """A gap requirement on a cluster with one tier says which it lacks (review CC: "this
    cluster lacks one" for 1 x DGX H100 and 18 GB200 trays alike)."""
    path = write(
        tmp_path, "g.yaml", f"name: g\n{cluster}requirements:\n  - gap: {{max_ratio: 10}}\n"
    )
    code, _, err = run(["check", str(path)], capsys)
    line = len(cluster.splitlines()) + 3
    assert (code, err) == (
        2,
        f"error: {path}:{line}:5: requirements[0].gap: the gap needs a scale-up and a scale-out "
        f"tier; {said}\n",
    )


def test_a_pessimistic_figure_is_said_once_with_its_digits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--pessimistic near a threshold prints the figure with the digits that tell it apart, and
    the range's end it is with the same digits (review CC: '62.02 ms (pessimistic end of
    50.3-62)'); a bandwidth target's end is the low one."""
    text = (
        "name: p\nnodes: 31\nsystem: dgx-h100\nfabric: {switch: qm9700, sharp: true}\n"
        "requirements:\n  - allreduce: {size: 10GB, max_time: 62.01ms}\n"
        "  - allgather: {size: 4GB, min_busbw: 300GB/s}\n"
    )
    path = write(tmp_path, "p.yaml", text)
    code, out, _ = run(["check", str(path), "--pessimistic"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert "predicted 62.02 ms (pessimistic end of 50.8-62.02)  margin -0.02%" in lines[1]
    assert "predicted 277 GB/s (pessimistic end of 277-338)  margin -7.5%" in lines[3]


def test_a_design_is_checked_from_its_text(tmp_path: Path, builtin_catalogue: Catalogue) -> None:
    """check_design takes text= as load_design does (review DR: a script had to write a file),
    and a design's text given as its file name is refused as such in one line, where it had been
    read as a path of 660 characters and refused whole, '... no such file'."""
    from ibcalc.errors import WrongTypeError

    from_file = check_design(write(tmp_path, "a.yaml", TWO_NODES), builtin_catalogue)
    from_text = check_design("a.yaml", builtin_catalogue, text=TWO_NODES)
    assert [f.predicted for f in from_text.findings] == [f.predicted for f in from_file.findings]
    assert from_text.path == "a.yaml"
    with pytest.raises(WrongTypeError) as info:
        check_design(TWO_NODES, builtin_catalogue)
    assert str(info.value) == (
        "source holds a line break: it looks like a design's text, not a file name; pass the "
        "text as text=, with a name for it as source"
    )


def test_an_all_to_all_requirement_past_the_fitted_ranks_names_its_message_term(
    builtin_catalogue: Catalogue,
) -> None:
    """The 140-node DGX A100 example's 256 MB all-to-all: 1120 GPUs post 1119 messages a rank
    at 2.4 us x 1980/1410 = 3.37 us (3.77 ms of 14.2 ms), past the 16 GPUs the per-message
    cost is fitted on, and the likely range reaches down to the time with 15 messages. The
    estimate, a sweep, a workload phase and nccl-check say so; the check had said nothing."""
    check = check_design(EXAMPLES / "dgx-a100-pod-hdr.yaml", builtin_catalogue)
    (note,) = [n for n in check.notes if "messages a rank" in n]
    each = 2.4e-6 * 1980 / 1410
    assert note.startswith(
        f"alltoall 256 MB: 1119 messages a rank at 3.37 us each ({1119 * each * 1e3:.2f} ms of "
        "each all-to-all): the per-message cost (calibrated.per_message_latency) comes from "
        "all-to-alls of at most 16 GPUs, so for 1120 this term is an extrapolation"
    )
    (finding,) = [f for f in check.findings if f.kind == "alltoall"]
    assert isinstance(finding.basis, CollectiveBasis)
    assert finding.basis.estimate.time_s_range is not None
    low = finding.basis.estimate.time_s_range[0]
    assert low < finding.basis.estimate.time_s - (1119 - 15) * each


def test_warnings_read_in_file_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file's warnings come top to bottom, as its errors do: a requirement's size past what
    nccl-tests runs (line 6) had been warned of before nics_per_node (line 4), and
    fabric.sharp (line 5) before nvls (line 4); every report reads the one list."""
    path = write(
        tmp_path,
        "w.yaml",
        "name: w\nnodes: 4\nsystem: mi300x-8\nnics_per_node: 5\nnvls: true\n"
        "fabric: {sharp: true}\n"
        "requirements:\n  - allreduce: {size: 100GB, max_time: 10s}\n",
    )
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0
    warned = [line.split()[1] for line in out.splitlines() if line.startswith("WARN")]
    assert warned == [f"{path}:4:1", f"{path}:5:1", f"{path}:6:10", f"{path}:8:17"]
    code, out, _ = run(["check", str(path), "--format", "json"], capsys)
    places = [(w["line"], w["col"]) for w in json.loads(out)["files"][0]["warnings"]]
    assert places == [(4, 1), (5, 1), (6, 10), (8, 17)]


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        # 99.97 ns rounds to 0.100 us at three figures, but a requirement keeps its digits,
        # in the unit of its own value: it had read '<= 0.09997 us' (times under 0.1 us are ns)
        ("99.97ns", "99.97 ns"),
        ("999.97us", "999.97 us"),  # had read '<= 0.99997 ms'
        ("0.99997s", "999.97 ms"),
        ("1500us", "1.5 ms"),  # a unit changed where the value is 1 or more of the next
        ("5.434ms", "5.434 ms"),
    ],
)
def test_a_time_requirement_prints_in_the_unit_of_its_own_value(
    tmp_path: Path, builtin_catalogue: Catalogue, written: str, shown: str
) -> None:
    from ibcalc.render.check import finding_dict, finding_message

    text = TWO_NODES.replace("max_time: 1s", f"max_time: {written}")
    finding = check_design(write(tmp_path, "t.yaml", text), builtin_catalogue).findings[0]
    assert finding_dict(finding)["required_text"] == shown
    assert f"required <= {shown}" in finding_message(finding)
