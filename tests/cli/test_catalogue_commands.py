"""The catalogue commands as a user meets them (review BL): names suggested, override files
applied and named, the list's marks, and the numbers the tables round."""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GB, main_error
from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.cli import app
from ibcalc.render.stream import UNITS

runner = CliRunner()

#: A site's NDR entry, as docs/catalogue.md's override example writes it: efficiency 0.88.
SITE_NDR = """\
schema: ibcalc-catalogue/1
links:
  - id: ndr
    aliases: [ib-ndr, ndr400, infiniband-ndr]
    name: "InfiniBand NDR, 4x port (site measurement)"
    kind: scale-out
    family: infiniband
    generation: "NDR"
    scope: per-port
    per_direction: "400 Gb/s"
    efficiency: 0.88
    efficiency_source: "site nccl-tests all_reduce, 8 GiB"
    sources: ["internal benchmark run"]
    confidence: medium
"""

#: A new link only, laid over the built-in catalogue.
EXTRA = """\
schema: ibcalc-catalogue/1
links:
  - id: site-eth
    name: site ethernet
    kind: scale-out
    family: ethernet
    generation: "x"
    scope: per-port
    per_direction: "400 Gb/s"
    efficiency: 0.9
    efficiency_source: "site"
    sources: ["x"]
    confidence: medium
"""


def _gap_note(*catalogues: str | Path, env: dict[str, str] | None = None) -> str:
    """The first assumption of `gap --intra nvlink4 --inter ndr --format json` with these
    ``--catalogue`` files (the override files' note, where there are any)."""
    args = ["gap", "--intra", "nvlink4", "--inter", "ndr", "--format", "json"]
    for path in catalogues:
        args += ["--catalogue", str(path)]
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    first: str = json.loads(result.output)["assumptions"][0]
    return first


def _files(tmp_path: Path) -> tuple[Path, Path]:
    site, extra = tmp_path / "site-links.yaml", tmp_path / "extra.yaml"
    site.write_text(SITE_NDR, encoding="utf-8")
    extra.write_text(EXTRA, encoding="utf-8")
    return site, extra


def test_a_group_catalogue_and_a_show_catalogue_both_apply(tmp_path: Path) -> None:
    site, extra = _files(tmp_path)
    args = ["links", "--catalogue", str(site), "show", "ndr", "--catalogue", str(extra)]
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    # the group's file is read (it had been dropped for the subcommand's): 0.88, not 0.975
    assert json.loads(result.output)["efficiency"] == 0.88
    # and the subcommand's too: its new link is found
    result = runner.invoke(app, [*args[:4], "site-eth", *args[5:]])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("site-eth: site ethernet")


def test_a_broken_group_catalogue_is_refused_under_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _site, extra = _files(tmp_path)
    broken = tmp_path / "c1.yaml"
    broken.write_text(SITE_NDR.replace('"400 Gb/s"', '"400 GB/s"'), encoding="utf-8")
    err = main_error(
        ["links", "--catalogue", str(broken), "show", "hdr", "--catalogue", str(extra)], capsys
    )
    # NDR written in bytes: 3,200 Gb/s is more than 4 lanes of NDR carry
    assert f"{broken}:10:" in err
    assert "400 GB/s per direction" in err


def test_kind_before_show_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = main_error(["links", "--kind", "host", "show", "ndr"], capsys)
    assert err == "error: --kind filters the list; it does not apply to 'show' (drop it)\n"
    err = main_error(["links", "--kind", "bogus", "show", "ndr"], capsys)
    assert err.startswith("error: --kind 'bogus' is not a known kind")


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        # near misses: the kinds the shared suggestion finds, as '--fabric ndrr' is answered
        ("scaleout", "(did you mean scale-out, scale-up?)"),
        ("scale", "(did you mean scale-up, scale-out?)"),
        # far misses and nothing: every kind, as an unknown algorithm's refusal lists them
        ("zzzz", "(known: scale-up, scale-out, host, wan)"),
        ("", "(known: scale-up, scale-out, host, wan)"),
    ],
)
def test_an_unknown_kind_is_refused_as_an_unknown_name_is(
    kind: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--kind's hint had been built by hand, '(did you mean scale-out? use scale-up, scale-out,
    host, wan)', where an unknown link or system is offered the closest names alone ('unknown
    link 'ndrr' (did you mean ndr, ndr200, xdr?)'); the same suggestion answers both now."""
    err = main_error(["links", "--kind", kind], capsys)
    see = " see" if hint.endswith("?)") else "; see"  # with_aside: no ';' after a question
    hinted = hint.replace(")", f"{see} 'ibcalc links --help')")
    assert err == f"error: --kind '{kind}' is not a known kind {hinted}\n"


@pytest.mark.parametrize(
    ("args", "first"),
    [
        # the SXM server, not the PCIe pair ('h100' had offered h100-pcie-nvl-pair, h100-pcie-8)
        (["systems", "show", "h100"], "dgx-h100"),
        (["systems", "show", "b200"], "dgx-b200"),
        # the id where it begins with the name, before its shorter alias dgx-gb200
        (["systems", "show", "gb200"], "gb200-nvl72"),
        # a part of the name that is a GPU's word (difflib alone: h20-8, h800-8, a800-8 for
        # 'h200-8'; mi355x-node, mi325x-node, l40s-node for 'sxm5-node')
        (["systems", "show", "h200-8"], "hgx-h200"),
        (["systems", "show", "h100-sxm5"], "dgx-h100"),
        (["systems", "show", "sxm5-node"], "dgx-h100"),
        (["allreduce", "--size", "1GB", "--system", "a100-sxm4"], "dgx-a100"),
        # a GPU's own link, held as a word of its alias ('a100' had offered wan100g, efa-100g)
        (["links", "show", "a100"], "nvlink-a100"),
        (["links", "show", "h200"], "nvlink-h200"),
        (["links", "show", "v100"], "nvlink-v100"),
        (["links", "show", "b200"], "nvlink-b200"),
    ],
)
def test_a_gpu_name_is_offered_its_own_entries_first(
    args: list[str], first: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = main_error(args, capsys)
    assert f"(did you mean {first}, " in err


def test_gap_names_the_override_files_it_used(tmp_path: Path) -> None:
    site, _ = _files(tmp_path)
    note = f"catalogue overrides loaded: {site}"
    one = runner.invoke(
        app, ["gap", "--intra", "nvlink4", "--inter", "ndr", "--catalogue", str(site)]
    )
    assert one.exit_code == 0, one.output
    assert f"  - {note}" in one.output
    # 8 x 50 GB/s NDR at the site's 0.88: 44.0 GB/s achievable per GPU
    assert "44.0 GB/s" in one.output
    assert _gap_note(site) == note
    table = runner.invoke(app, ["gap", "--catalogue", str(site)], env={"COLUMNS": "120"})
    assert table.exit_code == 0, table.output
    assert note in " ".join(table.output.split())
    rows = json.loads(
        runner.invoke(app, ["gap", "--catalogue", str(site), "--format", "json"]).output
    )
    assert all(row["assumptions"][0] == note for row in rows)
    # without an override nothing is said
    plain = runner.invoke(app, ["gap", "--intra", "nvlink4", "--inter", "ndr"])
    assert "overrides" not in plain.output


def test_gap_on_a_mesh_link_takes_the_mesh_size() -> None:
    # nvlink4-mesh4 joins 4 GPUs each to each: 8 GPUs a node, a default nobody gave, had been
    # refused; the node is 4 GPUs and 4 NICs, and says why
    result = runner.invoke(
        app, ["gap", "--intra", "nvlink4-mesh4", "--inter", "ndr", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["gpus_per_node"], data["nics_per_node"]) == (4, 4)
    assert (
        "4 GPUs per node assumed (--gpus-per-node): the most nvlink4-mesh4 joins"
        in data["assumptions"]
    )
    mesh = find_link(load_catalogue(), "nvlink4-mesh4")
    assert data["intra_GBps"] == pytest.approx(mesh.per_direction_Bps / GB)  # 3 x 150 GB/s
    # the estimates take the same node
    result = runner.invoke(
        app,
        [
            "allreduce",
            "--size",
            "1GB",
            "--intra",
            "nvlink4-mesh4",
            "--inter",
            "ndr",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["ranks"] == 2 * 4


def test_links_marks_a_one_way_achievable_rate() -> None:
    result = runner.invoke(app, ["links", "--kind", "scale-up"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    mi300x = find_link(load_catalogue(), "xgmi-mi300x")
    one_way = mi300x.achievable_Bps / GB  # 448 x 0.8 = 358.4
    both = one_way * mi300x.duplex_efficiency  # x 0.875 = 313.6, the measured 312.9 one-node
    assert (round(one_way), round(both)) == (358, 314)
    row = next(
        line for line in result.output.splitlines() if line.lstrip().startswith("xgmi-mi300x")
    )
    assert " 358* " in row
    text = " ".join(result.output.split())
    assert "xgmi-mi300x 314" in text
    assert "achievable x duplex_efficiency" in text
    # NVLink is full duplex: no mark
    row = next(line for line in result.output.splitlines() if line.lstrip().startswith("nvlink4 "))
    assert "*" not in row


def test_storage_show_labels_lose_the_unit_their_value_shows() -> None:
    result = runner.invoke(app, ["storage", "show", "aws-s3"])
    assert result.exit_code == 0, result.output
    rows = (re.match(r"  (\S+) {2,}(\S.*)$", line) for line in result.output.splitlines())
    labels = {m[1]: m[2] for m in rows if m is not None}
    assert labels["latency"] == "100 ms"  # had read 'latency_s  100 ms'
    # three significant figures, as every bandwidth figure (had read '85 MB/s')
    assert labels["per_request"] == "85.0 MB/s"
    # the keys of the catalogue file (data/links.yaml: max_write_part: "5 GiB")
    assert (labels["max_write_part"], labels["min_write_part"]) == ("5 GiB", "5 MiB")
    assert labels["max_write_parts"] == "10,000 parts"
    # per_s keys keep theirs: their value says requests/s
    assert not any(key.endswith(("_Bps", "_bytes")) or key == "latency_s" for key in labels)


def test_one_figure_reads_the_same_in_every_command() -> None:
    """A half rounds up in every table and sentence (review BO: links had read Gaudi 2's 262.5
    GB/s as 263 and EFA v2's 11.25 GB/s as 11.3, gap and the estimates 262 and 11.2)."""
    gaudi = find_link(load_catalogue(), "gaudi2-rocev2")
    efa = find_link(load_catalogue(), "efa-v2")
    assert (gaudi.per_direction_Bps / GB, efa.achievable_Bps / GB) == (262.5, 11.25)
    listed = runner.invoke(app, ["links"], env={"COLUMNS": "100"}).output
    gaudi_row = next(r for r in listed.splitlines() if r.lstrip().startswith("gaudi2-rocev2"))
    efa_row = next(r for r in listed.splitlines() if r.lstrip().startswith("efa-v2 "))
    assert " 263 " in gaudi_row
    assert " 11.3 " in efa_row
    gap = runner.invoke(app, ["gap", "--intra", "gaudi2-rocev2", "--inter", "roce-100g"]).output
    assert re.search(r"scale-up \(gaudi2-rocev2\) +263 GB/s", gap)
    gap = runner.invoke(
        app, ["gap", "--intra", "nvlink4", "--inter", "efa-v2", "--nics-per-node", "8"]
    ).output
    assert re.search(r"scale-out \(efa-v2\) +12\.5 GB/s +11\.3 GB/s", gap)
    ring = runner.invoke(
        app, ["allreduce", "--system", "aws-p5", "--size", "8G", "--algo", "ring"]
    ).output
    assert "32 x efa-v2 per node (11.3 GB/s achievable each)" in ring


def test_one_override_file_given_twice_is_loaded_and_named_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BO: 'catalogue overrides loaded: s.yaml, s.yaml'."""
    site, _ = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    # named last, so loaded last
    assert _gap_note("site-links.yaml", site) == f"catalogue overrides loaded: {site}"
    by_env = _gap_note(site, env={"IBCALC_CATALOGUE": "site-links.yaml"})
    assert by_env == f"catalogue overrides loaded: {site}"


def test_a_problem_across_files_names_the_variable_that_gave_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BP: a system naming no link, checked against the other files after the files are
    read, had not said its file came from IBCALC_CATALOGUE."""
    bad = tmp_path / "badsys.yaml"
    bad.write_text(
        "schema: ibcalc-catalogue/1\nsystems:\n  - id: my-node\n    name: x\n    gpu: H100\n"
        "    gpu_arch: hopper\n    gpus_per_node: 8\n    scale_up_domain: 8\n"
        "    intra: nvlink4\n    inter: nosuchlink\n    nics_per_node: 8\n"
        "    sources: [x]\n    confidence: low\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("IBCALC_CATALOGUE", str(bad))
    err = main_error(["links"], capsys)
    assert err == (
        f"error: {bad}:10:5: systems[0] (my-node): inter 'nosuchlink' is not a link id "
        "(named by IBCALC_CATALOGUE)\n"
    )


@pytest.mark.parametrize(
    ("dtype", "offered"), [("fp", "fp16"), ("int", "int32"), ("uint", "uint32")]
)
def test_a_list_in_its_own_order_keeps_it_in_suggestions(
    dtype: str, offered: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # review BO: the catalogue's shortest-first rule had reached the element types (fp8 first)
    err = main_error(["allreduce", "--size", "1GB", "--dtype", dtype], capsys)
    assert err == (
        f"error: --dtype '{dtype}' is not a known dtype (did you mean {offered}? "
        "see 'ibcalc allreduce --help')\n"
    )


def test_a_file_named_again_wins_where_it_was_named_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BQ: IBCALC_CATALOGUE=a.yaml:b.yaml with --catalogue a.yaml loads b, then a (a
    named last wins, as when it was loaded twice); kept at its first naming, b had won."""
    monkeypatch.chdir(tmp_path)
    for name, efficiency in (("a.yaml", "0.88"), ("b.yaml", "0.5")):
        (tmp_path / name).write_text(SITE_NDR.replace("0.88", efficiency), encoding="utf-8")
    result = runner.invoke(
        app,
        ["links", "show", "ndr", "--catalogue", "a.yaml", "--format", "json"],
        env={"IBCALC_CATALOGUE": os.pathsep.join(["a.yaml", "b.yaml"])},
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["efficiency"] == 0.88
    note = _gap_note("a.yaml", env={"IBCALC_CATALOGUE": os.pathsep.join(["a.yaml", "b.yaml"])})
    assert note == "catalogue overrides loaded: b.yaml, a.yaml"


def test_a_cost_parameter_file_named_twice_loads_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BQ: a cost-parameter file given by IBCALC_COST_PARAMS and --cost-params had been
    loaded and listed twice, as catalogue files had."""
    from ibcalc.catalogue.cost_params import load_cost_params

    cp = tmp_path / "cp.yaml"
    cp.write_text("schema: ibcalc-cost-params/1\n", encoding="utf-8")
    monkeypatch.setenv("IBCALC_COST_PARAMS", str(cp))
    params = load_cost_params([cp, str(cp)])
    assert list(params.origins[1:]) == [str(cp)]
    result = runner.invoke(app, ["allreduce", "-s", "1GB", "--cost-params", str(cp)])
    assert result.output.count(f"cost parameters: {cp}") == 1


def _ring_ll_base(tmp_path: Path, name: str, value: str) -> Path:
    """A cost-parameter file raising NCCL's ring LL base latency (6.6 us built in) to
    ``value``."""
    path = tmp_path / name
    path.write_text(
        "schema: ibcalc-cost-params/1\nnccl_tuner:\n  base_latency:\n"
        f'    value: {{ring: {{LL: "{value}"}}}}\n    source: a test\n',
        encoding="utf-8",
    )
    return path


def test_a_cost_parameter_file_named_last_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BR: IBCALC_COST_PARAMS=a:b with --cost-params a loads b, then a, so a's ring LL
    base latency wins: 16.6 us against b's 56.6 us, 10 us above the built-in 6.6 us."""
    from ibcalc.catalogue.cost_params import load_cost_params

    a = _ring_ll_base(tmp_path, "a.yaml", "16.6 us")
    b = _ring_ll_base(tmp_path, "b.yaml", "56.6 us")
    monkeypatch.setenv("IBCALC_COST_PARAMS", os.pathsep.join([str(a), str(b)]))
    params = load_cost_params([a])
    assert list(params.origins[1:]) == [str(b), str(a)]
    args = ["allreduce", "-s", "8B", "--system", "dgx-h100", "--nodes", "1"]
    args += ["--algo", "ring", "--proto", "LL", "--format", "json"]
    mine = json.loads(runner.invoke(app, [*args, "--cost-params", str(a)]).output)["time_s"]
    monkeypatch.delenv("IBCALC_COST_PARAMS")
    plain = json.loads(runner.invoke(app, args).output)["time_s"]
    assert mine - plain == pytest.approx(10e-6, rel=1e-6)


def test_the_variable_is_named_only_where_its_naming_is_the_one_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review BR: a broken file named by IBCALC_CATALOGUE and again by --catalogue had been
    said to be the variable's or not by how its path was spelled; it is read where named last,
    the flag's."""
    broken = tmp_path / "c1.yaml"
    broken.write_text(SITE_NDR.replace('"400 Gb/s"', '"400 GB/s"'), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IBCALC_CATALOGUE", "c1.yaml")
    for spelling in ("c1.yaml", str(broken)):
        err = main_error(["links", "--catalogue", spelling], capsys)
        assert "named by" not in err
    monkeypatch.setenv("IBCALC_CATALOGUE", str(broken))
    err = main_error(["links"], capsys)
    assert err.rstrip().endswith("(named by IBCALC_CATALOGUE)")


def test_systems_show_gives_the_rates_the_list_sends_it_for() -> None:
    """The systems table drops columns on a narrow page (the rate per NIC first), names them and
    sends the reader to "ibcalc systems show ID", which had printed no rate at all (review DO).
    aws-p5: NVLink 4, 18 x 25 = 450 GB/s per GPU per direction; 32 EFA interfaces of 100 Gb/s =
    12.5 GB/s each, 32 x 12.5 / 8 = 50 GB/s per GPU. The JSON of show and of the list carries
    the same three figures."""
    result = CliRunner().invoke(app, ["systems", "show", "aws-p5"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "intra per GPU 450 GB/s per direction (nvlink4, line rate)" in lines
    assert "inter per NIC 12.5 GB/s per direction (efa-v2, line rate)" in lines
    assert "inter per GPU 50.0 GB/s per direction (32 NICs over 8 GPUs)" in lines
    assert "nvswitch yes" in lines
    shown = json.loads(
        CliRunner().invoke(app, ["systems", "show", "aws-p5", "--format", "json"]).stdout
    )
    listed = json.loads(CliRunner().invoke(app, ["systems", "--format", "json"]).stdout)
    (entry,) = [s for s in listed if s["id"] == "aws-p5"]
    for data in (shown, entry):
        assert (data["intra_per_gpu_GBps"], data["nic_GBps"], data["net_per_gpu_GBps"]) == (
            pytest.approx(450),
            pytest.approx(12.5),
            pytest.approx(32 * 12.5 / 8),
        )
    # one NIC is one NIC (review DP: '1 NICs over 8 GPUs'); 12.5 GB/s / 8 per GPU
    pcie = CliRunner().invoke(app, ["systems", "show", "pcie-8gpu"], env={"COLUMNS": "120"})
    assert "(1 NIC over 8 GPUs)" in pcie.stdout
    narrow = CliRunner().invoke(app, ["systems"], env={"COLUMNS": "80"}).stdout
    assert "the GB/s per NIC" in narrow
    assert "(every field of one: ibcalc systems show ID)" in narrow


def test_catalogue_sizes_are_whole_bytes_in_json() -> None:
    """A catalogue size is read as whole bytes ("80GiB", "5MiB": a fraction of a byte is
    refused) and JSON printed it as a float, 85899345920.0, which a consumer reading the field
    as an integer (Go's int64, serde's u64) refuses; sizes elsewhere (size_bytes) are integers.
    DGX H100: 80 GiB per GPU (NVIDIA's 80GB, in GiB); S3 multipart parts: 5 MiB to 5 GiB (AWS
    S3 user guide). train's memory capacity is the same figure, and a layout search's too."""
    shown = runner.invoke(app, ["systems", "show", "dgx-h100", "--format", "json"])
    assert shown.exit_code == 0, shown.stderr
    memory = json.loads(shown.stdout)["gpu_memory_bytes"]
    assert type(memory) is int
    assert memory == 80 * 2**30
    listed = runner.invoke(app, ["systems", "--format", "json"])
    for system in json.loads(listed.stdout):
        for key in ("gpu_memory_bytes", "gpu_memory_largest_bytes"):
            assert system[key] is None or type(system[key]) is int, (system["id"], key)
    stored = runner.invoke(app, ["storage", "show", "aws-s3", "--format", "json"])
    s3 = json.loads(stored.stdout)
    assert (s3["min_write_part_bytes"], s3["max_write_part_bytes"]) == (5 * 2**20, 5 * 2**30)
    assert type(s3["min_write_part_bytes"]) is type(s3["max_write_part_bytes"]) is int
    args = ["--model", "llama3-8b", "--system", "dgx-h100", "--format", "json"]
    train = runner.invoke(app, ["train", "--dp", "8", *args])
    capacity = json.loads(train.stdout)["memory"]["capacity_bytes"]
    assert type(capacity) is int
    assert capacity == memory
    compare = runner.invoke(app, ["train", "--compare", "-N", "1", "--seq-len", "4096", *args])
    assert compare.exit_code == 0, compare.stderr
    assert type(json.loads(compare.stdout)["memory_capacity_bytes"]) is int
    served = runner.invoke(app, ["infer", "--tp", "8", *args])
    assert type(json.loads(served.stdout)["memory"]["capacity_bytes"]) is int


def _parted_figures(text: str) -> list[str]:
    """The places where a line ends in a number and the next begins with its unit."""
    lines = [line.strip() for line in text.splitlines()]
    return [
        f"{before!r} / {after!r}"
        for before, after in itertools.pairwise(lines)
        if re.search(r"(?<![\w/.-])\d[\d.,]*$", before)
        and after.split(" ", 1)[0].rstrip(",;:).") in UNITS
    ]


@pytest.mark.parametrize("width", ["40", "80"])
def test_no_show_parts_a_number_from_its_unit(width: str) -> None:
    """Every entry's ``show``, title and rows, at 80 columns and on a narrow 40-column page:
    the rows had kept "200 Gb/s" whole, but the title, wrapped by rich, had put gcp-tcpx's
    "Google Cloud GPUDirect-TCPX NIC, one 200" over "Gb/s interface (A3 High)" at 40."""
    catalogue = load_catalogue()
    groups = (
        ("links", catalogue.links),
        ("systems", catalogue.systems),
        ("storage", catalogue.storage),
    )
    parted = {}
    for group, entries in groups:
        for entry in entries:
            result = runner.invoke(app, [group, "show", entry.id], env={"COLUMNS": width})
            assert result.exit_code == 0, (group, entry.id, result.output)
            if found := _parted_figures(result.stdout):
                parted[f"{group} {entry.id}"] = found
    assert parted == {}


@pytest.mark.parametrize(
    ("link_id", "figure"),
    [
        # the notes' own units: AMD's lane rate in GT/s, Google's ICI rate in Gbps, light in
        # fibre at about 5 us per km
        ("xgmi-mi355x", "~38.4 GT/s"),
        ("tpu-v5p-ici", "4800 Gbps"),
        ("wan-10g", "4.9-5 us/km"),
    ],
)
def test_a_rate_in_the_notes_own_unit_stays_whole_on_a_narrow_page(
    link_id: str, figure: str
) -> None:
    """The notes write rates in units no figure of ibcalc's is printed in (GT/s, Gbps, us/km),
    which the wrap did not know: at 40 columns 'ibcalc links show xgmi-mi355x' had put "The ~38.4"
    over "GT/s lane rate", tpu-v5p-ici "wrote 4800" over "Gbps"."""
    shown = runner.invoke(app, ["links", "show", link_id], env={"COLUMNS": "40"})
    assert shown.exit_code == 0, shown.output
    assert any(figure in " ".join(line.split()) for line in shown.stdout.splitlines())
