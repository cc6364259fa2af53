"""The examples of docs/catalogue.md, docs/ci.md and docs/nccl-check.md are what the tool prints
now: the figures and wording they quote come from running the commands they describe (rerun them
after a model change and paste their output)."""

from __future__ import annotations

import json
import math
import re
import shlex
import statistics
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import check_shown_in_order
from ibcalc.cli import app
from ibcalc.units import format_time, parse_time

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SWEEPS = ROOT / "benchmarks" / "data" / "sweeps"


def _doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _words(text: str) -> str:
    """Text with its line breaks and runs of spaces as single spaces (a report wraps its lines
    where the file names it prints end)."""
    return " ".join(text.split())


def _said(name: str, pattern: str) -> re.Match[str]:
    """The match of ``pattern`` in the words of docs/``name``, which must say it."""
    match = re.search(pattern, _words(_doc(name)))
    assert match is not None, pattern
    return match


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    return result.exit_code, result.output


def test_catalogue_guide_system_override_example_is_current_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/catalogue.md adds a node preset in site-systems.yaml and shows its all-reduce: the
    file as shown loads, and the lines shown are the lines printed, in order and whole."""
    guide = _doc("catalogue.md")
    for body, name in re.findall(r"```yaml\n(# (site-[a-z-]+\.yaml):.*?)```", guide, re.S):
        (tmp_path / name).write_text(body, encoding="utf-8")
    assert (tmp_path / "site-systems.yaml").exists()
    block = re.search(
        r"```console\n(\$ ibcalc allreduce [^\n]*site-systems\.yaml)\n(.*?)```", guide, re.S
    )
    assert block is not None
    shown = [line.rstrip() for line in block.group(2).splitlines()]
    monkeypatch.chdir(tmp_path)
    code, output = _run(shlex.split(block.group(1))[2:])
    assert code == 0, output
    printed = [line.rstrip() for line in output.splitlines()]
    assert printed[: len(shown)] == shown
    # "the first of which names the override file"
    assumptions = output.split("assumptions:\n", 1)[1].splitlines()
    assert assumptions[0] == "  - catalogue overrides loaded: site-systems.yaml"


def test_ci_guide_pessimistic_figures_are_current_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/ci.md quotes `ibcalc check --pessimistic examples/*.yaml`: its summary line, the
    requirements each example fails on, and the SU all-reduce on both ends of its range."""
    guide = _doc("ci.md")
    monkeypatch.chdir(ROOT)
    examples = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.yaml"))
    code, output = _run(["check", "--pessimistic", *examples])
    assert code == 1
    summary = output.rstrip().splitlines()[-1]
    assert _words(f"`{summary}`") in _words(guide), summary
    failing: dict[str, list[str]] = {}
    for match in re.finditer(r"^FAIL  examples/([^:]+):\d+:\d+  ([a-z]+ [^:]+):", output, re.M):
        failing.setdefault(match.group(1), []).append(match.group(2))
    table = dict(re.findall(r"^\| `([a-z0-9-]+\.yaml)` \| ([^|]+) \|$", guide, re.M))
    shown = {
        name: [x.split(" (")[0].strip() for x in items.split(", ")] for name, items in table.items()
    }
    assert shown == failing
    pessimistic = re.search(
        r"^FAIL  \S+su-ndr\.yaml:\S+  allreduce 10 GB: .*  (predicted .*)$", output, re.M
    )
    assert pessimistic is not None
    assert _words(f"`{pessimistic.group(1)}`") in _words(guide), pessimistic.group(1)
    code, central = _run(["check", "examples/dgx-h100-superpod-su-ndr.yaml"])
    passing = re.search(r"^PASS  \S+  allreduce 10 GB: .*  (predicted .*)$", central, re.M)
    assert passing is not None
    assert f"`{passing.group(1)}`" in guide, passing.group(1)


def _text_blocks(guide: str) -> list[str]:
    return re.findall(r"```text\n(.*?)```", guide, re.S)


def test_nccl_check_guide_quotes_are_current_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/nccl-check.md's three quoted report lines: the note on a row whose algbw is not size
    / time (sweep 08's line 44 with its time doubled), the faulty-run warning of calibrating
    log11, and the different-clusters warning of calibrating sweeps 21 and 26 together."""
    edited, faulty, clusters = _text_blocks(_doc("nccl-check.md"))
    lines = (SWEEPS / "08_allgather_2node_16xA100-40GB_net-notstated.txt").read_text("utf-8")
    rows = lines.splitlines(keepends=True)
    assert "   103.2   40.63" in rows[43]
    rows[43] = rows[43].replace("   103.2   40.63", "   203.2   40.63", 1)
    (tmp_path / "08.txt").write_text("".join(rows), encoding="utf-8")
    _, output = _run(["nccl-check", str(tmp_path / "08.txt")])
    assert _words(edited) in _words(output)

    monkeypatch.chdir(SWEEPS)
    log11 = "log11_allreduce_2node_8xGH200_slingshot_nccltests2.17.1_indented_degraded.txt"
    code, output = _run(["calibrate", log11])
    assert code == 0, output
    assert _words(faulty) in _words(output.replace(log11, "log11_....txt"))

    code, output = _run(
        [
            "calibrate",
            "21_sendrecv_1node_8xH100_intranode.txt",
            "26_sendrecv_1node_2xA100-PCIE-40GB_pcie.txt",
        ]
    )
    assert code == 0, output
    assert clusters.rstrip() in output


def test_nccl_check_guide_names_a_run_the_fit_leaves_far_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run docs/nccl-check.md gives as the example of large rows no fitted value reaches is
    warned of, at the figure it quotes, and the healthy run it names is not. It had named the A3
    Mega log read as a DGX H100 on NDR (61 % off), which the fit has reached since (8 % off, no
    warning)."""
    guide = _words(_doc("nccl-check.md"))
    sentence = guide.split("says that no value the fit may move explains them", 1)[1]
    sentence = sentence.split(").", 1)[0]
    figure = re.search(r"log11: ([0-9.]+) % off", sentence)
    assert figure is not None, sentence
    assert "sweep 10 gets no such warning" in sentence
    monkeypatch.chdir(SWEEPS)
    _, output = _run(["calibrate", *(p.name for p in SWEEPS.glob("log11_*.txt"))])
    assert "far from the measurements" in output
    assert f"(run 1) {figure.group(1)}%: beyond 15%" in _words(output)
    _, output = _run(["calibrate", "10_allreduce_2node_8xH100_ib.txt"])
    assert "far from the measurements" not in output


def test_architecture_layout_names_every_module() -> None:
    """docs/architecture.md's package layout names every module of src/ibcalc (it had left out
    defaults.py, the pydantic default factories)."""
    layout = _doc("architecture.md").split("## Package layout", 1)[1].split("```", 2)[1]
    # an entry: a line naming a module or a package, with the lines continuing its description
    # (indented past the names); a module is named as stem.py anywhere, or by its bare name in
    # its package's entry ("algorithms/  ring, tree, ...", "cli/ ... (estimate, catalogue, ...)")
    entries: dict[str, str] = {}
    name = ""
    for line in layout.splitlines():
        indent = len(line) - len(line.lstrip())
        if line.strip() and indent < 20:
            name = line.split()[0]
            entries[name] = line[len(line.split()[0]) + indent :]
        elif name:
            entries[name] += " " + line.strip()
    modules = sorted((ROOT / "src" / "ibcalc").rglob("*.py"))
    missing = [
        str(path.relative_to(ROOT))
        for path in modules
        if path.stem != "__init__"
        and f"{path.stem}.py" not in layout
        and not re.search(rf"\b{path.stem}\b", entries.get(f"{path.parent.name}/", ""))
    ]
    assert modules
    assert missing == []


def _phase_time(args: list[str], phase: str) -> str:
    """The time a phase of ``ibcalc train ARGS`` takes, as its table prints it (``18.2 s``)."""
    code, output = _run(["train", *args])
    assert code == 0, output
    row = re.search(rf"^ {re.escape(phase)} .*?  (\S+ \S+) x 1 ", output, re.M)
    assert row is not None, output
    return row.group(1)


def test_workload_guide_wan_figures_are_current_output() -> None:
    """docs/workload.md's WAN cases quote the times the tool prints: Llama 3 70B at tp 8, dp 16
    on 2 sites of 8 DGX H100, flat against hierarchical over wan-100g at 800 km and at a 0.01 ms
    round trip, and over one wan-10g link a site in bf16 and int8 gradients (int8 had been
    quoted as 67.7 s where the tool prints 67.6 s)."""
    guide = _words(_doc("workload.md"))
    base = ["--model", "llama3-70b", "--tp", "8", "--nodes", "16", "--system", "dgx-h100"]
    base += ["--sites", "2", "--tflops", "400"]
    far = [*base, "--wan", "wan-100g", "--distance", "800km"]
    near = [*base, "--wan", "wan-100g", "--rtt", "0.01ms"]
    flat, hier = (
        _phase_time(far, "dp-allreduce"),
        _phase_time([*far, "--hierarchical"], "dp-ar@wan"),
    )
    site = _phase_time([*far, "--hierarchical"], "dp-rs@site")
    assert site.endswith(" ms")
    total = float(hier.split()[0]) + 2 * float(site.split()[0]) / 1000
    assert f"{flat} of flat DP all-reduce against {total:.1f} s hierarchical ({hier} of it" in guide
    flat = _phase_time(near, "dp-allreduce")
    hier = _phase_time([*near, "--hierarchical"], "dp-ar@wan")
    site = _phase_time([*near, "--hierarchical"], "dp-rs@site")
    assert site.endswith(" ms")
    total = float(hier.split()[0]) + 2 * float(site.split()[0]) / 1000
    assert f"`--rtt 0.01ms` {flat} against {total:.1f} s" in guide
    slow = [*base, "--wan", "wan-10g"]
    assert f"(the tool prints {_phase_time(slow, 'dp-allreduce')}:" in guide
    int8 = _phase_time([*slow, "--grad-dtype", "int8"], "dp-allreduce")
    assert f"(at least 62 s, {int8} printed)" in guide


def test_workload_guide_says_a_hierarchical_zero_step_reduce_scatters_across_the_wan() -> None:
    """docs/workload.md had said a hierarchical reduce-scatter keeps the all-reduce's first two
    steps and an all-gather its last two, an all-reduce of the shard across the WAN, where the
    tool reduce-scatters and all-gathers the shard there, half the WAN bytes: Llama 3 70B at
    tp 8, dp 16 on 2 sites of 8 DGX H100, one wan-100g each: 64 groups a site share its 12.5
    GB/s x 0.9, and the 2,187,500,000 B shard's all-reduce between 2 ranks sends all of it
    (12.4 s), a reduce-scatter or all-gather half (6.22 s)."""
    guide = _words(_doc("workload.md"))
    base = ["--model", "llama3-70b", "--tp", "8", "--nodes", "16", "--system", "dgx-h100"]
    base += ["--sites", "2", "--wan", "wan-100g", "--hierarchical"]
    share = 12.5e9 * 0.9 / 64
    allreduce = _phase_time(base, "dp-ar@wan")
    assert allreduce == "12.4 s"
    assert float(allreduce.split()[0]) == pytest.approx(2.1875e9 / share, rel=0.01)
    zero1 = [*base, "--zero", "1"]
    halves = {_phase_time(zero1, "dp-rs@wan"), _phase_time(zero1, "dp-ag@wan")}
    assert halves == {"6.22 s"}
    assert 2.1875e9 / 2 / share == pytest.approx(6.22, rel=0.01)
    assert (
        "A reduce-scatter (ZeRO) keeps the first step and reduce-scatters the shard between the "
        "counterparts, each keeping its part of the sum; an all-gather all-gathers the shard "
        "between them and keeps the last step: each moves half the WAN bytes of the all-reduce "
        "(Llama 3 70B, tp 8, dp 16 on 2 sites of 8 DGX H100 with one `wan-100g` each: "
        f"`dp-ar@wan` of the 2.19 GB shard takes {allreduce}, ZeRO-1's `dp-rs@wan` and "
        f"`dp-ag@wan` {halves.pop()} each; tested)."
    ) in guide
    assert "a reduce-scatter keeps the first two steps, an all-gather the last two" not in guide


def test_workload_guide_gives_a_storage_transfers_bytes_per_gpu_as_printed() -> None:
    """docs/workload.md called every phase's JSON bytes_per_gpu an integer; a checkpoint's save
    and restore give each rank's share of their bytes, a float (112 GB over 24 ranks is not
    whole bytes). The guide's example is the JSON the tool prints."""
    import json

    guide = _words(_doc("workload.md"))
    said = re.search(r"\(Llama 3 8B with Adam, 112 GB from 24 ranks: `([0-9.]+)`\)", guide)
    assert said is not None
    args = ["checkpoint", "--model", "llama3-8b", "--storage", "aws-s3", "--nodes", "3"]
    code, output = _run([*args, "--system", "dgx-h100", "--optimizer", "--format", "json"])
    assert code == 0, output
    data = json.loads(output)
    assert (data["ranks"], data["save"]["bytes"]) == (24, 112e9)
    (save,) = [p for p in data["phases"] if p["name"] == "save"]
    assert save["collective"] is None
    assert type(save["bytes_per_gpu"]) is float
    assert save["bytes_per_gpu"] == float(said.group(1)) == pytest.approx(112e9 / 24)


def test_workload_guide_says_the_presets_count_their_papers_parameters() -> None:
    """docs/workload.md did not say that a preset's parameter count is the round one its paper
    names (Llama 3 70B: 70e9), while its shape holds more (80 x (2 x 8192^2 + 2 x 8192 x 1024
    + 3 x 8192 x 28672) + 2 x 128,256 x 8192 = 70.55B): the weights and checkpoints follow the
    count. The figures it gives are the presets' counts and shapes, and the checkpoint it
    quotes is what `--params 70.55B` beside the preset saves."""
    import json

    from ibcalc.workload.model import find_model

    said = _said(
        "workload.md",
        r"hold a little more \(([0-9.]+)B, ([0-9.]+)B and ([0-9.]+)B by the count below, "
        r"([0-9.]+) %, ([0-9.]+) % and ([0-9.]+) % more bytes: a Llama 3 70B checkpoint is "
        r"([0-9.]+) GB in bf16, not ([0-9.]+) GB\)",
    )
    llama70 = 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) + 2 * 128_256 * 8192
    assert find_model("llama3-70b").shape_params == llama70
    for i, name in enumerate(("llama3-8b", "llama3-70b", "llama3-405b")):
        model = find_model(name)
        assert model.shape_params is not None
        assert f"{model.shape_params / 1e9:.2f}".rstrip("0") == said.group(1 + i)
        assert f"{(model.shape_params / model.params - 1) * 100:.2f}" == said.group(4 + i)
    args = ["checkpoint", "--model", "llama3-70b", "--storage", "ddn-ai400x2", "--nodes", "2"]
    for extra, figure in (([], said.group(8)), (["--params", "70.55B"], said.group(7))):
        code, output = _run([*args, *extra, "--system", "dgx-h100", "--format", "json"])
        assert code == 0, output
        data = json.loads(output)
        assert data["warnings"] == []
        assert f"{data['save']['bytes'] / 1e9:.1f}".removesuffix(".0") == figure


def test_workload_guide_layout_search_example_is_current_output() -> None:
    """docs/workload.md's example of a --tflops layout search: DeepSeek-V3 on 32 DGX H100 at 300
    TFLOP/s. It had said `tp 8, pp 32, ep 1` ranks first; that layout has the fastest step but
    tight memory, which ranks it after the layouts with room."""
    import json

    said = _said(
        "workload.md",
        r"gives `tp (\d+), pp (\d+), ep (\d+)` the fastest step, ([0-9.]+) s, ranked (\d+)th only "
        r"because its memory is tight, (\d+) %, and `tp (\d+), pp (\d+), ep (\d+)` first at "
        r"([0-9.]+) s",
    )
    args = ["train", "--model", "deepseek-v3", "--system", "dgx-h100", "--nodes", "32"]
    code, output = _run([*args, "--compare", "--tflops", "300", "--format", "json"])
    assert code == 0, output
    layouts = json.loads(output)["layouts"]
    fastest = min(layouts, key=lambda layout: layout["step_s"])
    first = layouts[0]
    assert first["rank"] == 1
    assert [fastest[k] for k in ("tp", "pp", "ep")] == [int(x) for x in said.group(1, 2, 3)]
    assert f"{fastest['step_s']:.2f}" == said.group(4)
    assert fastest["rank"] == int(said.group(5))
    assert (fastest["memory_room"], round(fastest["memory_used_fraction"] * 100)) == (
        "tight",
        int(said.group(6)),
    )
    assert [first[k] for k in ("tp", "pp", "ep")] == [int(x) for x in said.group(7, 8, 9)]
    assert f"{first['step_s']:.2f}" == said.group(10)
    assert all(layout["memory_room"] == "room" for layout in layouts[: fastest["rank"] - 1])


def test_nccl_check_guide_sweep_07_return_figures_are_current_output() -> None:
    """docs/nccl-check.md says sweep 07 alone moves nvlink3.efficiency where NCCL's choice
    changes, lists it as not fitted for that reason, and quotes the fit's bandwidth and rms
    figures: they are what `calibrate` on that sweep prints."""
    guide = _words(_doc("nccl-check.md"))
    sweep = next(SWEEPS.glob("07_allreduce_*.txt"))
    code, output = _run(["calibrate", str(sweep)])
    assert code == 0, output
    text = _words(output)
    assert re.search(
        r"nvlink3\.efficiency: the fit moved it where NCCL's choice of algorithm changes", text
    )
    # the run's row: its rows, then latency and bandwidth error before -> after
    bandwidth = re.search(r" \d+ \S+% -> \S+% (\S+% -> \S+%)", text)
    rms = re.search(r"rms log error of the time over \d+ rows: (\S+ -> \S+)", text)
    assert bandwidth is not None, output
    assert rms is not None, output
    said = re.search(r"the fit prints bandwidth `([^`]+)` and rms `([^`]+)`", guide)
    assert said is not None
    assert said.groups() == (bandwidth.group(1), rms.group(1))


def test_catalogue_guide_grades_its_examples_as_the_entries_do_and_why() -> None:
    """docs/catalogue.md illustrates the confidence grades with NDR, XDR and Ascend 910B HCCS;
    each must carry the entry's grade for the entry's reason. XDR had been said to be medium for
    its sources ('one secondary page for the SerDes, firmware release notes for the rate'),
    while the entry cites the Linux kernel commit defining the XDR rate (800 Gb/s, 850,000 Mb/s
    raw), as NDR's cites the kernel's NDR one, and says 'Rates are H; efficiency is borrowed from
    NDR, hence medium'."""
    from ibcalc.catalogue.load import load_catalogue

    links = {link.id: link for link in load_catalogue(use_env=False).links}
    examples = re.search(r"Examples: (.*?) is low\.", _words(_doc("catalogue.md")))
    assert examples is not None
    ndr, xdr, hccs = (clause.strip() for clause in (examples.group(1) + " is low").split(";"))
    for clause, link_id in ((ndr, "ndr"), (xdr, "xdr"), (hccs, "hccs-910b")):
        assert clause.endswith(f"is {links[link_id].confidence.value}"), clause
    assert links["xdr"].per_direction_Bps * 8 / 1e9 == pytest.approx(800)
    assert any("kernel/commit" in source for source in links["xdr"].sources)
    assert "efficiency is borrowed from NDR, hence medium" in _words(links["xdr"].notes)
    assert "kernel" in xdr
    assert "borrowed from NDR" in xdr
    assert "one secondary page" not in xdr


def test_catalogue_guide_systems_table_is_the_presets() -> None:
    """docs/catalogue.md's table of presets gives each one's GPUs per node, scale-up domain and
    link, NICs x link, NIC PCIe and grade: every preset once, as data/links.yaml has it (DGX H100:
    8 GPUs, nvlink4, 8 x ndr on pcie5, high; AWS p5: 32 x efa-v2)."""
    from ibcalc.catalogue.load import load_catalogue

    systems = {s.id: s for s in load_catalogue(use_env=False).systems}
    seen = []
    for line in _doc("catalogue.md").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        grade = cells[-1]
        if (
            len(cells) != 8
            or not cells[0].startswith("`")
            or grade not in ("high", "medium", "low")
        ):
            continue
        ids = re.findall(r"`([^`]+)`", cells[0])
        nics = [n.replace(" (assumed)", "").strip() for n in cells[5].split("/")]
        for i, system_id in enumerate(ids):
            s = systems[system_id]
            row = (cells[2], cells[3], cells[4], nics[min(i, len(nics) - 1)], cells[6], cells[7])
            nic = "none" if s.nics_per_node == 0 else f"{s.nics_per_node} x {s.inter}"
            assert row == (
                str(s.gpus_per_node),
                str(s.scale_up_domain),
                s.intra,
                nic,
                s.host_pcie,
                s.confidence.value,
            ), system_id
            seen.append(system_id)
    assert sorted(seen) == sorted(systems)
    assert systems["dgx-h100"].nics_per_node == 8
    assert systems["aws-p5"].nics_per_node == 32


def test_nccl_check_guide_override_file_is_what_calibrate_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/nccl-check.md shows the file `ibcalc calibrate 13_...txt -o site.yaml` writes: its
    lines are the file's, in order (dates as dates), the built-in entry's other fields left out
    where a comment says so; and the prose under it names that command."""
    guide = _doc("nccl-check.md")
    block = re.search(r"```yaml\n(# ibcalc calibrate: catalogue override.*?)```", guide, re.S)
    assert block is not None
    log = "13_allreduce_1node_4xH100_intranode.txt"
    assert f"(`ibcalc calibrate {log} -o site.yaml`, run in" in guide
    (tmp_path / log).write_bytes((SWEEPS / log).read_bytes())
    monkeypatch.chdir(tmp_path)
    code, output = _run(["calibrate", log, "-o", "site.yaml"])
    assert code == 0, output
    date = re.compile(r"\d{4}-\d{2}-\d{2}")
    written = [date.sub("DATE", line) for line in (tmp_path / "site.yaml").read_text().splitlines()]
    shown = [date.sub("DATE", line) for line in block.group(1).splitlines()]
    check_shown_in_order(
        shown,
        written,
        "site.yaml",
        is_cut=lambda line: line.lstrip().startswith("# ... "),
        to_end=False,
    )


def _console_lines(guide: str, first: str) -> list[tuple[dict[str, str], list[str], str]]:
    """The commands of the ``console`` block that opens with ``$ <first>``: each one's
    environment assignments, its arguments after ``ibcalc``, and its trailing ``# comment``."""
    block = re.search(rf"```console\n(\$ {re.escape(first)}.*?)```", guide, re.S)
    assert block is not None, first
    commands = []
    for line in block.group(1).splitlines():
        command, _, comment = line.removeprefix("$ ").partition("  # ")
        words = shlex.split(command)
        env = dict(word.split("=", 1) for word in words[: words.index("ibcalc")])
        commands.append((env, words[words.index("ibcalc") + 1 :], comment))
    return commands


def test_nccl_check_guide_calibration_commands_run_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/nccl-check.md's three commands, calibrate, an estimate on the override and a check
    with both override files, run one after the other on two runs as its logs: calibrate writes
    the cost-parameter file only when it fitted a model constant (4 x H100 on one node and
    2 x 4 H100 on NDR200 fit none, so the third command, as shown, had ended 'no such file
    (named by IBCALC_COST_PARAMS)'), and the page says when to give it. With the A3 Mega run as
    the 2-node log it bounds calibrated.nvls_tree_factor, writes that file, and all three run."""
    (calibrate, estimate, check) = _console_lines(_doc("nccl-check.md"), "ibcalc calibrate")
    assert calibrate[1][:3] == ["calibrate", "1node.log", "2node.log"]
    assert check[0] == {"IBCALC_COST_PARAMS": "my-cluster.cost-params.yaml"}
    assert check[2] == "if calibrate wrote that file too"
    monkeypatch.chdir(tmp_path)
    one_node = "13_allreduce_1node_4xH100_intranode.txt"
    for two_node, fits_a_constant in (
        ("10_allreduce_2node_8xH100_ib.txt", False),
        ("log06_allreduce_2node_16xH100_gcp_a3mega.txt", True),
    ):
        for path in tmp_path.iterdir():
            path.unlink()
        for name, source in (("1node", one_node), ("2node", two_node), ("new", two_node)):
            (tmp_path / f"{name}.log").write_bytes((SWEEPS / source).read_bytes())
        code, output = _run(calibrate[1])
        assert code == 0, output
        written = (tmp_path / "my-cluster.cost-params.yaml").exists()
        assert written == fits_a_constant
        assert ("wrote my-cluster.cost-params.yaml" in output) == written
        code, output = _run(estimate[1])
        assert code == 0, output
        if written:
            result = CliRunner().invoke(app, check[1], env={**check[0], "COLUMNS": "100"})
            assert result.exit_code == 0, result.output


def test_nccl_check_guide_error_conventions_read_one_run_as_it_says() -> None:
    """docs/nccl-check.md gives one run read both ways: calibrate's exp(|ln(measured /
    predicted)|) - 1 at 400 % and the table's |predicted / measured - 1| at 80 %. Both hold of a
    run 5x slower than predicted (log13's latency rows, 564.5 us measured at 1 KiB against
    110.1 us predicted); of a run 5x faster, as the page had it, the table's reads 400 % too."""
    said = _said(
        "nccl-check.md",
        r"a run 5x (faster|slower) than predicted reads 4\.0 \(400 %\).*?"
        r"`\|predicted / measured - 1\|` instead, which reads the same run as ([0-9]+) %",
    )
    measured_over_predicted = 5.0 if said.group(1) == "slower" else 1 / 5.0
    assert math.expm1(abs(math.log(measured_over_predicted))) == pytest.approx(4.0)
    assert abs(1 / measured_over_predicted - 1) == pytest.approx(int(said.group(2)) / 100)


def _json_of(args: list[str]) -> Any:
    """What a command prints on stdout with ``--format json`` (its 'wrote' lines are stderr's)."""
    result = CliRunner().invoke(app, [*args, "--format", "json"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _median_off(rows: list[dict[str, Any]], regime: str) -> str:
    """The median |predicted / measured - 1| of nccl-check's rows of ``regime``, as the page
    prints it (``2.7 %``)."""
    off = [
        abs(r["expected_time_us"] / r["measured_time_us"] - 1)
        for r in rows
        if r["regime"] == regime
    ]
    return f"{statistics.median(off):.1%}".replace("%", " %")


def _fit_then_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fit: str, check: str, options: list[str]
) -> tuple[dict[str, Any], list[list[dict[str, Any]]], str]:
    """The sweep ``fit`` calibrated into fit.yaml, the sweep ``check`` checked without and with
    it (``options`` given to both; with fit.cost-params.yaml too where calibrate wrote one):
    calibrate's JSON, nccl-check's rows of each, and the table's
    three cells of docs/nccl-check.md's 'Fitted on one collective' (``2.7 % -> 55.4 % | ...``)."""
    for name in (fit, check):
        (tmp_path / name).write_bytes((SWEEPS / name).read_bytes())
    monkeypatch.chdir(tmp_path)
    fitted = _json_of(["calibrate", fit, *options, "-o", "fit.yaml"])
    override = ["--catalogue", "fit.yaml"]
    if (tmp_path / "fit.cost-params.yaml").exists():  # a model constant was fitted too
        override += ["--cost-params", "fit.cost-params.yaml"]
    runs = [
        _json_of(["nccl-check", check, *options, *extra])["runs"][0]["rows"]
        for extra in ([], override)
    ]
    cells = " | ".join(
        f"{_median_off(runs[0], regime)} -> {_median_off(runs[1], regime)}"
        if any(r["regime"] == regime for r in runs[0])
        else "-"  # the run has no row of that regime
        for regime in ("latency", "mid", "bandwidth")
    )
    return fitted, runs, cells


def test_nccl_check_guide_one_collective_fit_figures_are_current_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/nccl-check.md's first row of 'Fitted on one collective, used for every one': the
    whole 1 x 4 H100 reduce_scatter sweep fitted, its all_reduce sweep checked with and without
    the file. The fitted NVLink latency is 2.49 us (the page had 2.44 us, the calibrate-on-half
    table's fit on half the sizes), the medians are those of nccl-check's rows, and the 4 B row
    is 17.3 -> 26.0 us predicted, 17.1 us measured."""
    calibration, runs, cells = _fit_then_check(
        tmp_path,
        monkeypatch,
        "14_reducescatter_1node_4xH100_intranode.txt",
        "13_allreduce_1node_4xH100_intranode.txt",
        [],
    )
    fitted = {p["name"]: p for p in calibration["parameters"]}
    latency_us = fitted["nvlink4-mesh4.transport_latency"]["value"] / 1e-6
    assert latency_us == pytest.approx(2.49, abs=0.005)
    assert cells == "2.7 % -> 55.4 % | 5.0 % -> 48.9 % | 7.9 % -> 17.4 %"
    _said("nccl-check.md", rf"\| 13 all_reduce, same node \| {re.escape(cells)} \|")
    four = [next(r for r in rows if r["size_bytes"] == 4) for rows in runs]
    _said(
        "nccl-check.md",
        rf"puts {latency_us:.2f} us on each NVLink step \(`nvlink4-mesh4` transport latency 0 -> "
        rf"{latency_us:.2f} us\); the all-reduce takes twice the steps and its 4 B row goes from "
        rf"{four[0]['expected_time_us']:.1f} us predicted to {four[1]['expected_time_us']:.1f} us, "
        rf"measured {four[0]['measured_time_us']:.1f} us\.",
    )


def test_nccl_check_guide_one_collective_fit_second_row_is_current_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table's second row, every cell: the 2 x A100 PCIe all_reduce sweep fitted, the
    sendrecv sweep of the same pair checked with and without the file (small sizes closer,
    37.1 -> 19.0 %, large ones further off, 3.2 -> 23.0 %). The row had shown the bandwidth cell
    alone, which hid that the same fit helps the small sizes."""
    _, _, cells = _fit_then_check(
        tmp_path,
        monkeypatch,
        "25_allreduce_1node_2xA100-PCIE-40GB_pcie.txt",
        "26_sendrecv_1node_2xA100-PCIE-40GB_pcie.txt",
        ["--system", "a100-pcie-pair", "-N", "1"],
    )
    assert cells == "37.1 % -> 19.0 % | 12.3 % -> 13.0 % | 3.2 % -> 23.0 %"
    _said("nccl-check.md", rf"\| 26 sendrecv, same pair \| {re.escape(cells)} \|")


def test_nccl_check_guide_three_run_override_figures_are_current_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/nccl-check.md gives the rms of the override sweeps 13, log06 and 20 write together
    beside the rms with every value as fitted; it had kept 0.145 as today's after the model's
    changes made it 0.089, then 0.127 (the all-to-all's share of the scale-up rate)."""
    monkeypatch.chdir(SWEEPS)
    logs = [
        "13_allreduce_1node_4xH100_intranode.txt",
        "log06_allreduce_2node_16xH100_gcp_a3mega.txt",
        "20_alltoall_1node_8xH100_intranode.txt",
    ]
    code, output = _run(["calibrate", *logs, "--format", "json"])
    assert code == 0, output
    fit = json.loads(output)
    assert (
        f"today they write {fit['rms_written']:.3f}, against {fit['rms_after']:.3f} with every "
        "value as fitted" in _words(_doc("nccl-check.md"))
    )


@pytest.mark.parametrize(
    ("fit", "check", "row"),
    [
        (
            "20_alltoall_1node_8xH100_intranode.txt",
            "21_sendrecv_1node_8xH100_intranode.txt",
            "| 20 alltoall, 1 x 8 H100 | 21 sendrecv, same node | ",
        ),
        (
            "01_allreduce_1node_8xMI355X_intranode-rccl.txt",
            "02_alltoall_1node_8xMI355X_intranode-rccl.txt",
            "| 01 all_reduce, 1 x 8 MI355X | 02 alltoall, same node | ",
        ),
    ],
)
def test_nccl_check_guide_one_collective_fit_all_to_all_rows_are_current_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fit: str, check: str, row: str
) -> None:
    """The table's rows with an all-to-all, every cell: they had kept the figures of before an
    all-to-all took its share of the scale-up rate (20 -> 21 had moved the send/recv's busbw
    10.9 % -> 22.9 % through NVLink 4's efficiency; the all-to-all's fit now writes only
    calibrated.alltoall_efficiency, which a send/recv does not read)."""
    _, _, cells = _fit_then_check(tmp_path, monkeypatch, fit, check, [])
    assert f"{row}{cells} |" in _doc("nccl-check.md").splitlines(), cells


def test_nccl_check_guide_counts_the_one_collective_table_it_shows() -> None:
    """The sentence under 'Fitted on one collective' counts the table's cells (it had kept 7
    worse, 5 better and 2 the same after the all-to-all rows changed)."""
    table = _doc("nccl-check.md").split("| fitted on | checked on |", 1)[1].split("\n\n", 1)[0]
    moves = re.findall(r"([0-9.]+) % -> ([0-9.]+) %", table)
    worse = sum(float(a) > float(b) for b, a in moves)
    better = sum(float(a) < float(b) for b, a in moves)
    same = len(moves) - worse - better
    _said(
        "nccl-check.md",
        rf"Of the {len(moves)} cells, {worse} get worse, {better} better and {same} stay;",
    )


def test_architecture_times_print_as_it_says() -> None:
    """docs/architecture.md's rule for printed times holds: every "X prints as `Y`" it gives is
    what format_time prints for X. It had said times print in us, ms or s while a time under
    0.1 us prints in ns (the data of a reduce of 8 B, 6.27 ns), and that 999.7 us prints as
    `1 ms` where it is `1.00 ms`."""
    rule = _said("architecture.md", r"\* \*\*Times\*\*: (.*?) \* \*\*nccl-tests").group(1)
    assert "most readable of ns, us, ms and s" in rule
    pairs = re.findall(r"([\d,.]+) (ns|us|s)(?: prints)? as `([^`]+)`", rule)
    assert {unit for _, unit, _ in pairs} == {"ns", "us", "s"}
    for number, unit, shown in pairs:
        assert format_time(parse_time(f"{number.replace(',', '')} {unit}")) == shown
