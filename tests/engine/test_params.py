"""The cost model's constants as data: data/cost_params.yaml, CostParams, overrides, tuner view.

Expected numbers are NCCL 2.30.7's constants as published in its src/graph/tuning.cc (restated in
docs/model.md#tuner-constants) or worked out by hand in the test; none is read from the file
under test and compared with itself.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import round_topology
from ibcalc.catalogue.cost_params import (
    BUILTIN_LABEL,
    ENV_VAR,
    builtin_cost_params,
    builtin_text,
    load_cost_params,
)
from ibcalc.catalogue.load import load_catalogue
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.base import net_hop_latency
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Protocol
from ibcalc.errors import CatalogueError, InputFileError
from ibcalc.facade import estimate
from ibcalc.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[2]
US = 1e-6
GB = 1e9

_HEADER = "schema: ibcalc-cost-params/1\n"


def _write(tmp_path: Path, text: str, name: str = "override.yaml") -> Path:
    path = tmp_path / name
    path.write_text(_HEADER + text, encoding="utf-8")
    return path


def _fits_module() -> Any:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    return importlib.import_module("fits")


# --- the built-in file ----------------------------------------------------------------------


def test_builtin_file_loads_with_nccl_2_30_7_values() -> None:
    params = load_cost_params(use_env=False)
    assert params == builtin_cost_params()
    assert params.origins == (BUILTIN_LABEL,)
    nccl = params.nccl_tuner
    # NCCL 2.30.7 baseLat (us): Ring LL 6.6, Tree Simple 8.4, PAT 8
    assert nccl.base_latency_s[Algorithm.RING][Protocol.LL] == pytest.approx(6.6 * US)
    assert nccl.base_latency_s[Algorithm.TREE][Protocol.SIMPLE] == pytest.approx(8.4 * US)
    assert nccl.base_latency_s[Algorithm.PAT][Protocol.SIMPLE] == pytest.approx(8.0 * US)
    # hwLat: NET Ring Simple 14, NVLink NVLS 25, NET NVLSTree 20.9 (2.28.9 and later)
    assert nccl.hop_latency_s["net"][Algorithm.RING][Protocol.SIMPLE] == pytest.approx(14 * US)
    assert nccl.hop_latency_s["nvlink"][Algorithm.NVLS][Protocol.SIMPLE] == pytest.approx(25 * US)
    assert nccl.hop_latency_s["net"][Algorithm.NVLS_TREE][Protocol.SIMPLE] == pytest.approx(
        20.9 * US
    )
    # llMaxBws: Hopper on one node 141 GB/s; Intel hosts on >= 3 nodes 20.4 GB/s
    assert nccl.ll_max_busbw_Bps["hopper"] == pytest.approx((141 * GB, 39 * GB, 20.4 * GB))
    # Tree + LL128 on one node: 7/9 exactly; several nodes 120/128
    assert nccl.tree_ll128_factor_one_node == 7 / 9
    assert nccl.tree_ll128_factor_multi_node == 120 / 128
    # treeCorrectionFactor: 23 buckets from 64 B; Simple at 64 B is 0.9, LL at 128 KiB is 0.5
    assert all(len(row) == 23 for row in nccl.tree_correction.values())
    assert nccl.tree_correction[Protocol.SIMPLE][0] == 0.9
    assert nccl.tree_correction[Protocol.LL][11] == 0.5  # 64 x 2^11 = 128 KiB
    assert nccl.tree_correction_first_bucket_bytes == 64
    # the WAN in-flight limit: 2 channels x NCCL's 4 MiB Simple buffer
    assert params.assumptions.wan_channels * params.nccl_runtime.simple_buffer_bytes == 8 * 2**20


def test_builtin_is_parsed_once() -> None:
    assert builtin_cost_params() is builtin_cost_params()
    assert load_cost_params(use_env=False) is builtin_cost_params()


def test_every_value_has_a_source() -> None:
    params = builtin_cost_params()
    names = set(params.flat())
    assert names == set(params.provenance)
    counts = {"source": 0, "derived_by": 0, "assumed": 0}
    fitted_names = {fit.name.rpartition(".")[2] for fit in _fits_module().FITS}
    for name, prov in params.provenance.items():
        counts[prov.kind] += 1
        assert prov.text.strip(), name
        assert prov.origin == BUILTIN_LABEL, name
        group = name.split(".")[0]
        if group.startswith("nccl_"):
            # NCCL's own constants cite NCCL's version and source file (nccl-tests' defaults
            # cite nccl-tests)
            assert prov.kind == "source", name
            assert "NCCL 2.30.7 src/" in prov.text or "nccl-tests" in prov.text, name
        elif group == "pipeline":
            # how NCCL splits work: NCCL's own rules, or the modelling choice said as such
            assert prov.kind in ("source", "assumed"), name
            if prov.kind == "source":
                assert "NCCL 2.30.7 src/" in prov.text, name
        elif group == "gpu":
            # facts of the GPUs themselves, from their data sheets
            assert prov.kind == "source", name
            assert "data sheet" in prov.text, name
        elif group == "calibrated" and prov.kind == "derived_by":
            script, function = prov.text.split("::")
            assert script == "benchmarks/fits.py", name
            assert function in fitted_names, name
            assert prov.rows, name
        elif group == "error_band" and prov.kind == "derived_by":
            # the band comes from the cross-validation itself (tests/reference/test_band.py)
            assert prov.text == "benchmarks/accuracy.py::error_band", name
            assert prov.rows, name
        else:
            # assumptions (including calibrated values no fit sets) say why they are what they are
            assert prov.kind == "assumed", name
            assert len(prov.text) > 80, name
    # the tuner view's values are NCCL's, so each cites NCCL
    tuner = params.tuner_view()
    for name in (
        "calibrated.simple_transport_factor",
        "calibrated.ll_net_bandwidth",
        "calibrated.proxy_op_latency",
        "assumptions.amd_host_ll_cap",
    ):
        assert tuner.provenance[name].kind == "source"
        assert "NCCL 2.30.7" in tuner.provenance[name].text
        assert tuner.provenance[name].previous is params.provenance[name]
    assert counts == {"source": 42, "derived_by": 11, "assumed": 12}


def test_shipped_file_is_the_repository_file() -> None:
    assert builtin_text() == (ROOT / "data" / "cost_params.yaml").read_text(encoding="utf-8")


def test_builtin_file_passes_the_strict_reader() -> None:
    """The built-in file is read with libyaml for speed; the strict reader (duplicate keys,
    tags, ...) that reads user files reads the same mapping from it."""
    doc = load_yaml(BUILTIN_LABEL, text=builtin_text())
    strict = CostParams.from_mapping(doc.data, label=doc.path, locate=doc.locate)
    assert strict == builtin_cost_params()
    assert strict.document == builtin_cost_params().document


def test_per_message_cost_is_fitted_with_its_rows_named() -> None:
    """The per-message all-to-all cost is fitted to small all-to-all rows, and says which."""
    prov = builtin_cost_params().provenance["calibrated.per_message_latency"]
    assert prov.kind == "derived_by"
    assert prov.text == "benchmarks/fits.py::per_message_latency"
    assert prov.rows is not None
    assert "all-to-all" in prov.rows


# --- overrides ------------------------------------------------------------------------------


def _ring_ll_8b(params: CostParams | None) -> tuple[float, float]:
    est = estimate(
        load_catalogue(use_env=False),
        ClusterSpec(system="dgx-h100", nodes=1),
        Collective.ALL_REDUCE,
        8,
        algorithm=Algorithm.RING,
        protocol=Protocol.LL,
        params=params,
    )
    return est.best.latency_s, est.best.transfer_s


def test_override_file_replaces_one_value_and_the_estimate_moves_by_that_much(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path,
        "nccl_tuner:\n"
        "  base_latency:\n"
        "    value:\n"
        "      ring: {LL: 16.6 us}\n"
        "    source: NCCL 6.6 us plus 10 us, for a test\n",
    )
    params = load_cost_params([path], use_env=False)
    assert params.origins == (BUILTIN_LABEL, str(path))
    table = params.nccl_tuner.base_latency_s
    assert table[Algorithm.RING][Protocol.LL] == pytest.approx(16.6 * US)
    # the other cells keep NCCL's values
    assert table[Algorithm.RING][Protocol.LL128] == pytest.approx(14.0 * US)
    assert table[Algorithm.TREE][Protocol.LL] == pytest.approx(6.8 * US)
    # ...and so does the tuner view, which lays its own section over these
    assert params.tuner_view().nccl_tuner.base_latency_s[Algorithm.RING][Protocol.LL] == (
        pytest.approx(16.6 * US)
    )
    prov = params.provenance["nccl_tuner.base_latency"]
    assert prov.origin == f"{path}:3"  # the line of base_latency
    assert prov.previous is builtin_cost_params().provenance["nccl_tuner.base_latency"]

    # 8 GPUs on NVLink 4, ring LL all-reduce of 8 B: base + 2(n-1) = 14 NVLink hops of 0.6 us
    before_latency, before_transfer = _ring_ll_8b(None)
    after_latency, after_transfer = _ring_ll_8b(params)
    assert before_latency == pytest.approx((6.6 + 14 * 0.6) * US)
    assert after_latency == pytest.approx((16.6 + 14 * 0.6) * US)
    assert after_latency - before_latency == pytest.approx(10 * US, rel=1e-9)
    assert after_transfer == before_transfer


def test_override_named_by_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(
        tmp_path,
        "reporting:\n  notably_faster: {value: 0.05, assumed: a test wants a wider margin here}\n",
    )
    monkeypatch.setenv(ENV_VAR, str(path))
    assert load_cost_params().reporting.notably_faster == 0.05
    assert load_cost_params(use_env=False).reporting.notably_faster == 0.02


def test_override_of_a_list_replaces_it_whole_and_a_tuner_view_section_moves_only_the_tuner(
    tmp_path: Path,
) -> None:
    ones = ", ".join(["1.0"] * 23)
    path = _write(
        tmp_path,
        "nccl_tuner:\n"
        "  tree_correction:\n"
        f"    value: {{Simple: [{ones}]}}\n"
        "    source: a flat table, for a test\n"
        "tuner_view:\n"
        "  calibrated:\n"
        "    simple_transport_factor: {value: 3, assumed: a tuner plugin that counts 3}\n",
    )
    params = load_cost_params([path], use_env=False)
    assert params.nccl_tuner.tree_correction[Protocol.SIMPLE] == (1.0,) * 23
    assert params.nccl_tuner.tree_correction[Protocol.LL][11] == 0.5
    assert (
        params.calibrated.simple_transport_factor
        == builtin_cost_params().calibrated.simple_transport_factor
    )
    assert params.tuner_view().calibrated.simple_transport_factor == 3
    # the tuner view keeps its other entry
    assert params.tuner_view().calibrated.ll_net_Bps is None


def test_the_documented_override_example_loads(tmp_path: Path) -> None:
    """The example in ibcalc.catalogue.cost_params' docstring is a valid override file."""
    import textwrap

    from ibcalc.catalogue import cost_params

    doc = cost_params.__doc__ or ""
    block = doc.split("Override file format")[1].split("::\n\n", 1)[1].split("\n\n")[0]
    path = tmp_path / "example.yaml"
    path.write_text(textwrap.dedent(block) + "\n", encoding="utf-8")
    params = load_cost_params([path], use_env=False)
    assert params.nccl_tuner.base_latency_s[Algorithm.RING][Protocol.LL] == pytest.approx(16.6 * US)
    assert params.calibrated.simple_transport_factor == 6.5
    assert params.tuner_view().calibrated.simple_transport_factor == 2


def test_overrides_apply_in_order(tmp_path: Path) -> None:
    first = _write(
        tmp_path, "calibrated:\n  p2p_efficiency: {value: 0.7, assumed: first}\n", "a.yaml"
    )
    second = _write(
        tmp_path, "calibrated:\n  p2p_efficiency: {value: 0.6, assumed: second}\n", "b.yaml"
    )
    params = load_cost_params([first, second], use_env=False)
    assert params.calibrated.p2p_efficiency == 0.6
    prov = params.provenance["calibrated.p2p_efficiency"]
    assert prov.text == "second"
    assert prov.previous is not None
    assert prov.previous.text == "first"


# --- bad override files ---------------------------------------------------------------------


def _error(path: Path) -> CatalogueError:
    with pytest.raises(CatalogueError) as info:
        load_cost_params([path], use_env=False)
    return info.value


@pytest.mark.parametrize(
    ("body", "needle", "message"),
    [
        (
            "nccl_tuner:\n  base_latncy:\n    value: {ring: {LL: 7 us}}\n    source: x\n",
            "base_latncy",
            "unknown parameter 'base_latncy' (did you mean base_latency?)",
        ),
        (
            "nccl_tuner:\n  base_latency:\n    value: {ring: {ll: 7 us}}\n    source: x\n",
            "ll: 7 us",
            "unknown protocol 'll' (did you mean LL?)",
        ),
        (
            "calibrated:\n  simple_fil: {value: 32 MiB, assumed: x}\n",
            "simple_fil",
            "did you mean simple_fill?",
        ),
        (
            "nccl_tuner:\n  base_latency:\n    value: {ring: {LL: 16.6 GB/s}}\n    source: x\n",
            "LL: 16.6 GB/s",
            "time '16.6 GB/s' is not understood",
        ),
        (
            "nccl_tuner:\n  base_latency:\n    value: {ring: {LL: -1 us}}\n    source: x\n",
            "LL: -1 us",
            "time '-1 us' is negative",
        ),
        (
            "nccl_tuner:\n  net_overhead: {value: 1, source: x}\n",
            "value: 1,",
            "1 is not a time with its unit (write e.g. '6.8 us')",
        ),
        # a number YAML reads as text has a letter, but no unit: it had been read as seconds
        (
            "nccl_tuner:\n  net_overhead: {value: 3e-6, source: x}\n",
            "value: 3e-6",
            "time '3e-6' needs a unit (e.g. 2ms, 1.5s, 250us)",
        ),
        (
            "calibrated:\n  p2p_efficiency: {value: 80 %, assumed: x}\n",
            "value: 80 %",
            "factors and counts carry no unit",
        ),
        (
            "calibrated:\n  p2p_efficiency: {value: 1.2, assumed: x}\n",
            "value: 1.2",
            "out of range: must be in (0, 1]",
        ),
        # a whole number of 309 digits or more overflows a float: it had ended in an internal
        # error, exit 3 (review DH M2); 1e400 had been called no number
        (
            "calibrated:\n  simple_transport_factor: {value: 1" + "0" * 400 + ", assumed: x}\n",
            "value: 1",
            "a whole number of 401 digits is out of range: must be in [0, 100]",
        ),
        (
            "calibrated:\n  simple_transport_factor: {value: 1e400, assumed: x}\n",
            "value: 1e400",
            "'1e400' is out of range: must be in [0, 100]",
        ),
        (
            "calibrated:\n  p2p_efficiency: {value: 0.7}\n",
            "p2p_efficiency",
            "needs source:, derived_by: or assumed:",
        ),
        (
            "calibrated:\n  p2p_efficiency: {value: 0.7, derived_by: my_fit}\n",
            "derived_by",
            "derived_by names a function",
        ),
        (
            "calibrated:\n  simple_transport_factor: {value: 7, sorce: x}\n",
            "sorce",
            "unknown key 'sorce' (did you mean source?)",
        ),
        (
            "nccl_tunr:\n  net_overhead: {value: 1 us, source: x}\n",
            "nccl_tunr",
            "unknown key 'nccl_tunr' (did you mean nccl_tuner?)",
        ),
        # 1e-300 GB/s had priced a 1 KiB all-reduce at 2.8e284 hours: below the catalogue's
        # 1 MB/s floor no rate is plausible
        (
            "calibrated:\n  ll_net_bandwidth: {value: 1e-300 GB/s, assumed: x}\n",
            "value: 1e-300",
            "'1e-300 GB/s' must be at least 1 MB/s (8 Mb/s)",
        ),
        (
            "nccl_tuner:\n  ll_max_busbw:\n    value: {ampere: {one_node: 0.5 MB/s}}\n"
            "    source: x\n",
            "one_node: 0.5",
            "must be at least 1 MB/s",
        ),
        # a band whose 10th percentile is above its 90th had collapsed every range to a point
        (
            "error_band:\n  time_error_quantiles:\n    value: {bandwidth: {fabric: [0.5, -0.5]}}\n"
            "    assumed: x\n",
            "fabric: [0.5",
            "quantiles (10th, 90th) [0.5, -0.5]: the first is above the second (low end first)",
        ),
    ],
)
def test_bad_override_is_reported_at_its_line_and_column(
    tmp_path: Path,
    locate: Callable[..., tuple[int, int]],
    body: str,
    needle: str,
    message: str,
) -> None:
    path = _write(tmp_path, body)
    error = _error(path)
    line, col = locate(_HEADER + body, needle)
    assert str(error.problems[0]).startswith(f"{path}:{line}:{col}: "), str(error)
    assert message in str(error.problems[0])


def test_a_wrong_schema_line_says_what_it_found(tmp_path: Path) -> None:
    """A newer schema had read 'schema: schema: ibcalc-cost-params/1 is required', the key
    twice and nothing of what the file gave."""
    path = tmp_path / "newer.yaml"
    path.write_text("schema: ibcalc-cost-params/2\n", encoding="utf-8")
    assert str(_error(path).problems[0]) == (
        f"{path}:1:1: schema: 'ibcalc-cost-params/2' is not 'ibcalc-cost-params/1', the one "
        "this reads"
    )
    path.write_text("schema: null\n", encoding="utf-8")
    assert str(_error(path).problems[0]) == (
        f"{path}:1:1: schema: no text is not 'ibcalc-cost-params/1', the one this reads"
    )
    path.write_text("calibrated: {}\n", encoding="utf-8")
    assert str(_error(path).problems[0]) == (
        f"{path}:1:1: schema: ibcalc-cost-params/1 is required"
    )


def test_every_problem_of_every_file_is_reported(tmp_path: Path) -> None:
    first = _write(
        tmp_path,
        "nccl_tuner:\n  net_overhead: {value: -1 us, source: x}\n"
        "  pat_factor: {value: 2, source: x}\n",
        "a.yaml",
    )
    second = tmp_path / "b.yaml"
    second.write_text("reporting: {}\n", encoding="utf-8")  # no schema
    with pytest.raises(CatalogueError) as info:
        load_cost_params([first, second], use_env=False)
    text = [str(p) for p in info.value.problems]
    assert len(text) == 3, text
    assert text[0].startswith(f"{first}:3:")
    assert "negative" in text[0]
    assert text[1].startswith(f"{first}:4:")
    assert "out of range" in text[1]
    assert text[2].startswith(f"{second}:")
    assert "schema: ibcalc-cost-params/1" in text[2]


def test_file_named_by_the_environment_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "reporting:\n  notably_faster: {value: 2 %, assumed: x}\n")
    monkeypatch.setenv(ENV_VAR, str(path))
    with pytest.raises(CatalogueError, match=f"named by {ENV_VAR}"):
        load_cost_params()
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing.yaml"))
    with pytest.raises(InputFileError, match="no such file"):
        load_cost_params()


def test_incomplete_mapping_is_refused_with_every_missing_key() -> None:
    document = {k: v for k, v in builtin_cost_params().document.items() if k != "reporting"}
    nccl = dict(document["nccl_tuner"])
    del nccl["pat_factor"]
    latency = dict(nccl["base_latency"])
    latency["value"] = {k: v for k, v in latency["value"].items() if k != "pat"}
    nccl["base_latency"] = latency
    with pytest.raises(CatalogueError) as info:
        CostParams.from_mapping({**document, "nccl_tuner": nccl})
    text = " | ".join(str(p) for p in info.value.problems)
    assert "missing group reporting" in text
    assert "nccl_tuner: missing pat_factor" in text
    assert "nccl_tuner.base_latency: missing algorithm pat" in text


# --- the tuner view -------------------------------------------------------------------------


def test_tuner_view_differs_from_the_physical_values_exactly_where_documented() -> None:
    params = builtin_cost_params()
    tuner = params.tuner_view()
    assert tuner is params.tuner_view()  # built once
    assert tuner.tuner_view() is tuner
    assert tuner.is_tuner_view
    assert not params.is_tuner_view
    physical_values, tuner_values = params.flat(), tuner.flat()
    differ = {name for name in physical_values if physical_values[name] != tuner_values[name]}
    documented = {
        f"{group}.{name}"
        for group, entries in params.document["tuner_view"].items()
        for name in entries
    }
    assert (
        differ
        == documented
        == {
            "calibrated.simple_transport_factor",
            "calibrated.ll_net_bandwidth",
            "calibrated.proxy_op_latency",
            "calibrated.alltoall_efficiency",
            "pipeline.model_fill",
            "pipeline.trim_channels",
            "assumptions.link_simple_floor",
            "assumptions.tree_net_overhead",
            "assumptions.clock_scaled_hops",
            "assumptions.amd_host_ll_cap",
        }
    )
    # NCCL's tuner prices every size with all channels, its hop latencies are the same on
    # every GPU generation, and its LL cap on several nodes follows the host's CPU vendor
    assert tuner.pipeline.trim_channels == 0
    assert tuner.assumptions.clock_scaled_hops == 0
    assert (params.assumptions.amd_host_ll_cap, tuner.assumptions.amd_host_ll_cap) == (0, 1)
    # NCCL counts the transport latency twice per Simple hop (the hop and the flush), at every
    # size; it knows no small-message LL network limit
    assert tuner.calibrated.simple_transport_factor == 2
    assert tuner.calibrated.ll_net_Bps is None
    # and no per-channel term in its time
    assert tuner.calibrated.proxy_op_s == 0
    assert (
        params.calibrated.simple_transport_factor
        == builtin_cost_params().calibrated.simple_transport_factor
    )


def test_the_model_doc_tables_every_difference_of_the_tuner_view() -> None:
    """docs/model.md#how-auto-picks says the two views differ only where its table lists; four
    of the nine differences had been missing from it (a review)."""
    params = builtin_cost_params()
    text = (Path(__file__).resolve().parents[2] / "docs" / "model.md").read_text("utf-8")
    section = text.split("\n## How auto picks\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    named = {line.split("`")[1] for line in rows}
    documented = {
        f"{group}.{name}"
        for group, entries in params.document["tuner_view"].items()
        for name in entries
    }
    assert documented <= named, documented - named


def test_tuner_view_of_a_simple_network_hop_on_a_proxy_transport() -> None:
    """EFA-like transport with 20 us one-way latency: NCCL's tuner counts 2 of them per Simple
    hop at any size; physically NCCL's 2 for small messages too (simple_transport_floor), growing
    linearly to the fitted factor at 64 MiB."""
    params = builtin_cost_params()
    topo = round_topology(2, 1, nics=1, transport_latency_s=20 * US)
    hop = 14.0 * US  # NCCL NET Ring Simple
    ring, simple = Algorithm.RING, Protocol.SIMPLE
    tuner = params.tuner_view()
    assert net_hop_latency(topo, ring, simple, 2**30, tuner) == pytest.approx(hop + 2 * 20 * US)
    factor = params.calibrated.simple_transport_factor
    assert net_hop_latency(topo, ring, simple, 2**30, params) == pytest.approx(
        hop + factor * 20 * US
    )
    half = 32 * 2**20  # half way to the 64 MiB fill: 2 + (factor - 2) / 2 latencies
    assert params.assumptions.simple_transport_floor == 2
    assert net_hop_latency(topo, ring, simple, half, params) == pytest.approx(
        hop + (2 + (factor - 2) / 2) * 20 * US
    )
    assert net_hop_latency(topo, ring, simple, 8, params) == pytest.approx(
        hop + (2 + (factor - 2) * 8 / 2**26) * 20 * US
    )


def test_a_link_with_its_own_simple_floor_keeps_it_physically_not_in_the_tuner_view() -> None:
    """GPUDirect-TCPXO-like link stating 0 exposed latencies for a small Simple message: at 8 MiB
    (1/8 of the 64 MiB fill) a hop carries 0 + factor x 1/8 one-way latencies, not NCCL's
    2 + (factor - 2) x 1/8; NCCL's tuner still counts 2."""
    params = builtin_cost_params()
    ring, simple = Algorithm.RING, Protocol.SIMPLE
    factor = params.calibrated.simple_transport_factor
    eight_mib = 8 * 2**20
    own = round_topology(2, 1, nics=1, transport_latency_s=48.9 * US, simple_floor=0.0)
    assert net_hop_latency(own, ring, simple, eight_mib, params) == pytest.approx(
        (14.0 + factor / 8 * 48.9) * US
    )
    assert net_hop_latency(
        round_topology(2, 1, nics=1, transport_latency_s=48.9 * US), ring, simple, eight_mib, params
    ) == pytest.approx((14.0 + (2 + (factor - 2) / 8) * 48.9) * US)
    assert net_hop_latency(own, ring, simple, eight_mib, params.tuner_view()) == pytest.approx(
        (14.0 + 2 * 48.9) * US
    )


# --- purity ---------------------------------------------------------------------------------


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
@pytest.mark.parametrize(
    ("module", "where"),
    [
        ("yaml", "src/ibcalc/engine/params.py"),
        ("pathlib", "src/ibcalc/engine/algorithms/ring.py"),
        ("ibcalc.catalogue.load", "src/ibcalc/engine/base.py"),
        ("ibcalc.facade", "src/ibcalc/engine/select.py"),
        ("typer", "src/ibcalc/engine/types.py"),
    ],
)
def test_engine_imports_nothing_that_does_io(module: str, where: str) -> None:
    """The nested ruff.toml of the engine bans these imports there (and only there)."""
    source = f"import {module}\n\nprint({module})\n"
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--stdin-filename", where, "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert "TID251" in run.stdout, run.stdout + run.stderr
    if not module.startswith("typer"):
        outside = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "check",
                "--no-cache",
                "--stdin-filename",
                "src/ibcalc/catalogue/x.py",
                "-",
            ],
            input=source,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert "TID251" not in outside.stdout, outside.stdout


@pytest.mark.parametrize("zero", ["0", '"0"', "-0", "0.0", "0e0", '"0 us"'])
def test_a_zero_time_needs_no_unit(zero: str) -> None:
    """A time of 0 is 0 in every unit: cost-parameter files had refused "0" where catalogues
    take it (a review); any other number still needs its unit."""
    override = "schema: ibcalc-cost-params/1\nnccl_tuner:\n  net_overhead: {value: %s, source: x}\n"
    params = builtin_cost_params().with_overrides(yaml.safe_load(override % zero))
    assert params.nccl_tuner.net_overhead_s == 0.0


def test_cost_parameters_pickle_for_a_process_pool() -> None:
    """Fitted parameters could not go to a process pool's workers: their read-only tables and
    provenance had failed to pickle ('cannot pickle mappingproxy'; a review). They round-trip,
    equal, with their tuner view and provenance, and price a collective alike."""
    import pickle

    from ibcalc.catalogue.load import load_catalogue
    from ibcalc.cluster.resolve import resolve_cluster
    from ibcalc.cluster.spec import ClusterSpec
    from ibcalc.engine.types import Collective
    from ibcalc.facade import estimate_on

    params = builtin_cost_params()
    copy = pickle.loads(pickle.dumps(params))
    assert copy == params
    assert copy.tuner_view() == params.tuner_view()
    assert dict(copy.provenance) == dict(params.provenance)
    cluster = resolve_cluster(load_catalogue(), ClusterSpec(system="dgx-h100", nodes=4))
    assert (
        estimate_on(cluster, Collective.ALL_REDUCE, 1e9, params=copy).time_s
        == estimate_on(cluster, Collective.ALL_REDUCE, 1e9, params=params).time_s
    )


def test_cost_parameter_files_are_paths_and_a_wrong_one_is_said(tmp_path: Path) -> None:
    """A file name in bytes is one (it had failed as a bare TypeError), and anything else is
    said to be no path, as load_catalogue says it (a review)."""
    import os

    from ibcalc.catalogue.cost_params import load_cost_params
    from ibcalc.errors import WrongTypeError

    override = tmp_path / "p.yaml"
    override.write_text(
        "schema: ibcalc-cost-params/1\n"
        "calibrated:\n  per_message_latency: {value: 2 us, assumed: a test}\n",
        encoding="utf-8",
    )
    for given in (os.fsencode(override), [os.fsencode(override)]):
        params = load_cost_params(given, use_env=False)
        assert params.calibrated.per_message_s == pytest.approx(2e-6)
    bad: Any = 5
    for wrong, said in ((bad, "paths must be a path or paths"), ([bad], "a cost-parameter file")):
        with pytest.raises(WrongTypeError, match=said):
            load_cost_params(wrong, use_env=False)


def test_groups_an_override_leaves_are_built_once_and_never_from_another_document() -> None:
    """engine/params.py keeps the parameter groups it built by their document: an override of
    one group leaves the others' objects as they were (calibrate lays values over the
    parameters at every fit step). A document whose repr is not its content (a Mapping class
    without a repr of its own shows its address, which a later one may reuse) is built anew:
    keyed by that repr, 70 of 200 builds had returned another document's values."""
    import copy
    import gc
    from collections.abc import Iterator, Mapping

    from ibcalc.engine import params as P

    base = builtin_cost_params()
    # from an empty cache, as the first run of a process: the cache clears itself at 512 groups,
    # so after the rest of the suite in one process base's groups may have left it (the test
    # had failed so under -n 1)
    P._BUILT.clear()

    def override(value: float) -> CostParams:
        return base.with_overrides(
            {
                "schema": P.SCHEMA,
                "reporting": {"notably_faster": {"source": "a test", "value": value}},
            },
            label="test",
        )

    first, moved = override(0.3), override(0.2)
    assert moved.reporting.notably_faster == 0.2
    assert first.reporting.notably_faster == 0.3
    assert moved.gpu is first.gpu  # the group the overrides left, not parsed again

    class Group(Mapping[str, Any]):
        def __init__(self, data: Mapping[str, Any]) -> None:
            self._data = dict(data)

        def __getitem__(self, key: str) -> Any:
            return self._data[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self._data)

        def __len__(self) -> int:
            return len(self._data)

    for i in range(40):
        wanted = 0.01 + i * 0.004
        document: dict[str, Any] = {g: copy.deepcopy(dict(base.document[g])) for g in P._GROUPS}
        document["schema"] = P.SCHEMA
        reporting = dict(document["reporting"])
        reporting["notably_faster"] = {**reporting["notably_faster"], "value": wanted}
        document["reporting"] = Group(reporting)
        built = P.CostParams.from_mapping(document)
        assert built.reporting.notably_faster == wanted
        del built
        gc.collect()


def test_cost_parameters_print_their_origins_in_one_line() -> None:
    """The dataclass's repr had listed every constant (about 6,500 characters); a notebook
    sees where the values come from: the built-in file, then each file or release laid over
    it by its name (a release's origin goes on to say what it changes)."""
    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.catalogue.releases import for_release

    builtin = builtin_cost_params()
    assert repr(builtin) == "CostParams(data/cost_params.yaml)"
    assert repr(builtin.tuner_view()) == "CostParams(data/cost_params.yaml, NCCL's tuner view)"
    older = for_release(builtin, "2.21.5")
    assert older.origins[1].startswith("NCCL 2.21.5: ")
    assert repr(older) == "CostParams(data/cost_params.yaml + NCCL 2.21.5)"


def test_equal_cost_parameters_choose_alike() -> None:
    """Equality is 'prices and chooses the same': NCCL 2.21.5's parameters keep the built-in
    physical values but their tuner view turns PAT off (NCCL added it in 2.23), so they are not
    equal to the built-in ones (the tuner view had been left out of equality); the same values
    built again, and a release whose tuner constants are the built-in ones, are equal."""
    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.catalogue.releases import for_release

    builtin = builtin_cost_params()
    older = for_release(builtin, "2.21.5")
    assert older.nccl_tuner == builtin.nccl_tuner  # the same physical values
    assert builtin.tuner_view().nccl_tuner.algorithms[Algorithm.PAT] == 1
    assert older.tuner_view().nccl_tuner.algorithms[Algorithm.PAT] == 0
    assert older != builtin
    assert for_release(builtin, "2.21.5") == older
    assert CostParams.from_mapping(builtin.document) == builtin
    assert for_release(builtin, "2.30.7") == builtin
