"""The package's public names (src/ibcalc/__init__.py): each loads its module on first use.

``import ibcalc`` (which every CLI call does) must not import the engine, the catalogue or
pydantic; every name of ``__all__`` is still there, the same object as in its module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import ibcalc

#: Where each public name is defined (the package re-exports it).
HOMES = {
    "Algorithm": "ibcalc.engine.types",
    "Catalogue": "ibcalc.catalogue.models",
    "ClusterSpec": "ibcalc.cluster.spec",
    "Collective": "ibcalc.engine.types",
    "CollectivePlan": "ibcalc.facade",
    "CostParams": "ibcalc.engine.params",
    "DType": "ibcalc.engine.types",
    "Estimate": "ibcalc.engine.types",
    # the estimate with its figures in its JSON (model_dump keeps time_s, busbw_GBps ...)
    "EstimateResult": "ibcalc.results",
    "IbcalcError": "ibcalc.errors",
    # its subclasses, so that a caller can tell a bad size from an unknown name without
    # importing ibcalc.errors (a review)
    "AlgorithmNotApplicableError": "ibcalc.errors",
    "CatalogueError": "ibcalc.errors",
    "ClusterError": "ibcalc.errors",
    "DesignError": "ibcalc.errors",
    "FieldError": "ibcalc.errors",
    "InputFileError": "ibcalc.errors",
    "SizeTooSmallError": "ibcalc.errors",
    "UnitError": "ibcalc.errors",
    "UnknownNameError": "ibcalc.errors",
    "WorkloadError": "ibcalc.errors",
    "WrongTypeError": "ibcalc.errors",
    "FabricError": "ibcalc.errors",
    "LogParseError": "ibcalc.errors",
    "OutputError": "ibcalc.errors",
    "PlotError": "ibcalc.errors",
    "Link": "ibcalc.catalogue.models",
    "Protocol": "ibcalc.engine.types",
    "QuickEstimate": "ibcalc.facade",
    # what resolve_cluster returns and estimate_on and CollectivePlan take
    "ResolvedCluster": "ibcalc.cluster.resolve",
    "System": "ibcalc.catalogue.models",
    "check_design": "ibcalc.design.check",
    "common_pairings": "ibcalc.gap",
    "estimate": "ibcalc.facade",
    "estimate_many": "ibcalc.facade",
    "estimate_on": "ibcalc.facade",
    "fill_fields": "ibcalc.errors",
    "find_link": "ibcalc.catalogue.load",
    "find_system": "ibcalc.catalogue.load",
    "load_catalogue": "ibcalc.catalogue.load",
    "load_cost_params": "ibcalc.catalogue.cost_params",
    "load_design": "ibcalc.design.check",
    "parse_bandwidth": "ibcalc.units",
    "parse_size": "ibcalc.units",
    "parse_time": "ibcalc.units",
    "resolve_cluster": "ibcalc.cluster.resolve",
    "size_fat_tree": "ibcalc.fabric.sizing",
    "tp_whatif": "ibcalc.gap",
    # the types the public functions return (review CB)
    "Cost": "ibcalc.engine.types",
    "Design": "ibcalc.design.schema",
    "DesignCheck": "ibcalc.design.check",
    "FabricSizing": "ibcalc.fabric.sizing",
    "GapResult": "ibcalc.gap",
    "HostCpu": "ibcalc.engine.types",
    "TpWhatIf": "ibcalc.gap",
    "ValidationProblem": "ibcalc.errors",
    "for_release": "ibcalc.catalogue.releases",
}


def test_all_names_every_public_name() -> None:
    assert sorted(ibcalc.__all__) == sorted([*HOMES, "__version__"])


@pytest.mark.parametrize("name", sorted(HOMES))
def test_public_name_is_its_module_s_object(name: str) -> None:
    assert getattr(ibcalc, name) is getattr(import_module(HOMES[name]), name)
    assert name in dir(ibcalc)


def test_from_import_of_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec("from ibcalc import *", namespace)
    assert set(HOMES) <= set(namespace)


def test_dir_lists_the_public_names_not_the_helpers() -> None:
    """dir(ibcalc), what a notebook completes, had listed annotations, import_module, Any and
    TYPE_CHECKING beside the public names: the names this file imports for itself. Its names
    without dunders are __all__'s and the subpackages loaded (errors, after a public error is
    read), nothing else."""
    ibcalc.IbcalcError  # noqa: B018  loads ibcalc.errors
    plain = [name for name in dir(ibcalc) if not name.startswith("__")]
    public = sorted(name for name in ibcalc.__all__ if not name.startswith("__"))
    assert "errors" in plain
    assert [name for name in plain if name in public] == public
    leftover = [name for name in plain if name not in public]
    assert all(isinstance(getattr(ibcalc, name), type(ibcalc)) for name in leftover), leftover
    assert {"annotations", "import_module", "Any", "TYPE_CHECKING"}.isdisjoint(plain)
    assert "__version__" in dir(ibcalc)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'estimat'"):
        _ = ibcalc.estimat  # type: ignore[attr-defined]


def test_import_and_version_load_nothing_heavy() -> None:
    code = (
        "import json, sys\n"
        "import ibcalc\n"
        "assert ibcalc.__version__\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    imported = set(json.loads(done.stdout))
    assert sorted(m for m in imported if m.startswith("ibcalc")) == ["ibcalc"]
    assert {"pydantic", "yaml", "rich", "typer"}.isdisjoint(imported)


def test_fill_fields_writes_an_estimates_marks_as_the_readme_says() -> None:
    """README: est.assumptions marks fields as {field}; ibcalc.fill_fields names them."""
    cluster = ibcalc.resolve_cluster(
        ibcalc.load_catalogue(use_env=False), ibcalc.ClusterSpec(system="dgx-h100", nodes=2)
    )
    est = ibcalc.estimate_on(cluster, ibcalc.Collective.ALL_REDUCE, 1e9)
    note = (
        "ndr supports SHARP (CollNet); {sharp} would not change this all-reduce: NCCL's tuner "
        "keeps nvlstree/Simple here"
    )
    assert note in est.assumptions
    assert ibcalc.fill_fields(note, {"sharp": "--sharp"}) == (
        "ndr supports SHARP (CollNet); --sharp would not change this all-reduce: NCCL's tuner "
        "keeps nvlstree/Simple here"
    )


def test_a_type_checker_sees_the_public_names_and_no_other(tmp_path: Path) -> None:
    """mypy reads ibcalc's names from its imports: a misspelt one is an error in a user's
    script, not Any (the module's __getattr__, which makes every name Any to a type checker,
    had let `from ibcalc import ClusterSpce` pass --strict: review CB), a public type
    annotates as itself, and ClusterSpec takes a ratio as text, as it does at run time (review
    CD: its fields' signature had refused oversubscription='2:1'). ibcalc is read from MYPYPATH
    alone, as a user's checker without pydantic's plugin reads it, so its own files are checked
    too (a directory on PYTHONPATH counts as installed, whose errors mypy hides: a relative one,
    missing from the script's directory, had shown tree.py's pipeline tier typed as str)."""
    script = tmp_path / "user.py"
    script.write_text(
        "import ibcalc\n"
        "from ibcalc import ClusterSpce\n"
        "def f(c: ibcalc.Cost, t: ibcalc.TpWhatIf) -> float:\n"
        "    return c.latency_s + t.across.time_s\n"
        "spec = ibcalc.ClusterSpec(system='dgx-h100', nodes=2, oversubscription='2:1')\n",
        encoding="utf-8",
    )
    src = Path(ibcalc.__file__).resolve().parent.parent
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", os.devnull, str(script)],
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "MYPYPATH": str(src)},
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 1, run.stdout
    assert 'Module "ibcalc" has no attribute "ClusterSpce"' in run.stdout
    # ClusterSpec takes what its fields read at run time ('2:1'), not only their types
    assert "Found 1 error in 1 file" in run.stdout
