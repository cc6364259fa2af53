"""errors.py: one exception tree under IbcalcError, and ``{field}`` marks each caller names.

The library names a field of a cluster as ``{field}``; the CLI renders it as its flag
(``--nodes``), a design file as the YAML key the file used (``fabric.link``). Expected strings are
written out here, not read from the program.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import ibcalc
from conftest import main_error
from ibcalc import errors
from ibcalc.catalogue.load import load_catalogue
from ibcalc.cli.boundary import FIELD_FLAGS
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.design.schema import DESIGN_KEYS
from ibcalc.errors import (
    AlgorithmNotApplicableError,
    CatalogueError,
    ClusterError,
    DesignError,
    FabricError,
    FieldError,
    IbcalcError,
    InputFileError,
    LogParseError,
    OutputError,
    PlotError,
    SizeTooSmallError,
    UnitError,
    UnknownNameError,
    ValidationProblem,
    WorkloadError,
    WrongTypeError,
    fill_fields,
)

# --- the tree -------------------------------------------------------------------------------

#: Each class of the tree, its parent in the tree and the builtin it also is (module docstring).
TREE: list[tuple[type[Exception], type[Exception], type[Exception]]] = [
    (UnitError, IbcalcError, ValueError),
    (SizeTooSmallError, UnitError, ValueError),
    (UnknownNameError, IbcalcError, KeyError),
    (FieldError, IbcalcError, ValueError),
    (ClusterError, FieldError, ValueError),
    (WorkloadError, ClusterError, ValueError),
    (AlgorithmNotApplicableError, FieldError, ValueError),
    (FabricError, IbcalcError, ValueError),
    (InputFileError, IbcalcError, ValueError),
    (CatalogueError, InputFileError, ValueError),
    (DesignError, InputFileError, ValueError),
    (PlotError, IbcalcError, ValueError),
    (OutputError, IbcalcError, OSError),
    (LogParseError, IbcalcError, ValueError),
    (WrongTypeError, IbcalcError, TypeError),
]


def test_every_exception_of_errors_py_is_in_the_tree() -> None:
    defined = {
        obj
        for obj in vars(errors).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__ == "ibcalc.errors"
    }
    assert defined == {IbcalcError, *(cls for cls, _, _ in TREE)}
    assert all(issubclass(cls, IbcalcError) for cls in defined)
    assert not issubclass(ValidationProblem, BaseException)  # a value, not an error


#: Exceptions that never reach a caller of the library: each is caught inside the package and
#: turned into an IbcalcError or an exit (private classes, leading underscore, are skipped too).
INTERNAL = {
    "ibcalc.fileio.ReadRefused",  # read_regular's refusal; each caller raises its own IbcalcError
    "ibcalc.cli.output.StdoutError",  # a failed write to stdout; the CLI boundary reports it
}


def test_every_public_exception_of_the_package_derives_from_ibcalc_error() -> None:
    outside = []
    for info in pkgutil.walk_packages(ibcalc.__path__, "ibcalc."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
                and not name.startswith("_")
                and not issubclass(obj, IbcalcError)
            ):
                outside.append(f"{info.name}.{name}")
    assert sorted(outside) == sorted(INTERNAL)


@pytest.mark.parametrize(("cls", "parent", "builtin"), TREE, ids=[c.__name__ for c, _, _ in TREE])
def test_each_error_has_its_parent_and_builtin(
    cls: type[Exception], parent: type[Exception], builtin: type[Exception]
) -> None:
    assert cls.__mro__[1] is parent  # the direct parent drawn in the docstring's tree
    assert issubclass(cls, IbcalcError)
    assert issubclass(cls, builtin)  # callers catching ValueError / KeyError / OSError still do


# --- messages ---------------------------------------------------------------------------------


def test_unknown_name_quotes_the_name_and_suggests() -> None:
    error = UnknownNameError("link", "ndrr", ["ndr", "hdr"])
    assert str(error) == "unknown link 'ndrr' (did you mean ndr, hdr?)"
    assert str(UnknownNameError("system", "x", [])) == "unknown system 'x'"
    # a newline in the name cannot start a second line
    assert str(UnknownNameError("link", "a\nb", [])) == "unknown link 'a\\nb'"


def test_input_file_error_shows_the_first_problem_and_counts_the_rest() -> None:
    problems = [
        ValidationProblem("d.yaml", 3, 5, "nodes: must be at least 1"),
        ValidationProblem("d.yaml", 4, None, "unknown key"),
        ValidationProblem("d.yaml", None, None, "no requirements"),
    ]
    assert [str(p) for p in problems] == [
        "d.yaml:3:5: nodes: must be at least 1",
        "d.yaml:4:1: unknown key",  # no column: the line's first
        "d.yaml: no requirements",
    ]
    error = InputFileError(problems)
    assert str(error) == "d.yaml:3:5: nodes: must be at least 1 (+2 more problems)"
    assert str(InputFileError(problems[:2])).endswith(" (+1 more problem)")
    assert error.problems == problems


def test_a_problem_of_a_file_named_by_no_name_begins_with_no_colon() -> None:
    """load_catalogue('') had said ': the file name is empty', and a design given as text
    under the name '' ':2:1: nodes: ...': nothing before the colon."""
    assert str(ValidationProblem("", None, None, "the file name is empty")) == (
        "the file name is empty"
    )
    assert str(ValidationProblem("", 2, None, "nodes: 'foo' is not an integer")) == (
        "line 2, column 1: nodes: 'foo' is not an integer"
    )
    with pytest.raises(InputFileError) as info:
        load_catalogue("", use_env=False)
    assert str(info.value) == "the file name is empty"


def test_log_parse_error_is_one_line() -> None:
    assert str(LogParseError("bad line in a\nb.txt\r")) == "bad line in a\\nb.txt\\r"


# --- {field} marks ----------------------------------------------------------------------------


def test_fill_fields_with_a_mapping_or_a_function() -> None:
    template = "{nodes} 0 is out of range (1..1000000)"
    assert fill_fields(template, {"nodes": "--nodes"}) == "--nodes 0 is out of range (1..1000000)"
    assert fill_fields(template, lambda f: f"`{f}:`") == "`nodes:` 0 is out of range (1..1000000)"
    # a field the mapping does not name is shown as itself, without braces
    assert fill_fields("{wan} and {sites}", {"sites": "--sites"}) == "wan and --sites"
    # only lower-case identifiers are marks: other braces stay as written
    assert fill_fields("{Nodes} {0} {a-b}", {}) == "{Nodes} {0} {a-b}"


def test_fill_fields_refuses_a_name_that_is_no_text() -> None:
    """fill_fields(note, {"sharp": 3}) had failed inside re.sub ("sequence item 0: expected str
    instance, int found"), a function returning None likewise: a WrongTypeError names the field
    whose name is no text. A field without a mark is not looked up."""
    from ibcalc.errors import WrongTypeError

    note = "{sharp} would make this all-reduce 1.03x faster"
    for name in ({"sharp": 3}, lambda field: None):
        with pytest.raises(WrongTypeError) as info:
            fill_fields(note, name)  # type: ignore[arg-type]
        kind = "int" if isinstance(name, dict) else "NoneType"
        assert str(info.value) == f"name gives {kind} for the field 'sharp', not a str"
    assert fill_fields("no marks", {"sharp": 3}) == "no marks"  # type: ignore[dict-item]


def test_field_error_renders_for_each_caller() -> None:
    error = ClusterError("give {inter} and {nics_per_node} to join 2 of them", field="nodes")
    assert error.field == "nodes"
    assert error.fields == ["nodes", "inter", "nics_per_node"]  # the one at fault first
    assert str(error) == "give inter and nics_per_node to join 2 of them"
    assert error.render(FIELD_FLAGS) == "give --inter and --nics-per-node to join 2 of them"
    assert (
        error.render(DESIGN_KEYS)
        == "give inter (or fabric.link) and nics_per_node to join 2 of them"
    )
    repeated = FieldError("{nodes} 3 x {gpus_per_node} 8; {nodes} again", field="nodes")
    assert repeated.fields == ["nodes", "gpus_per_node"]  # each once


def test_the_same_cluster_error_as_a_flag_and_as_a_yaml_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # rtx2080ti-2 has no NIC: joining 2 of them needs an inter link and a NIC count
    with pytest.raises(ClusterError) as info:
        resolve_cluster(load_catalogue(use_env=False), ClusterSpec(system="rtx2080ti-2", nodes=2))
    assert info.value.field == "nodes"
    err = main_error(["allreduce", "-s", "1GB", "--system", "rtx2080ti-2", "-N", "2"], capsys)
    assert err == (
        "error: rtx2080ti-2 has no scale-out NIC; give --inter and --nics-per-node to join 2 "
        "of them\n"
    )
    design = tmp_path / "d.yaml"
    design.write_text(
        "name: x\nnodes: 2\nsystem: rtx2080ti-2\n"
        "requirements:\n  - allreduce: {size: 1GB, max_time: 45ms}\n"
    )
    err = main_error(["check", str(design)], capsys)
    # placed at the key of the field at fault (nodes, line 2), other fields named as keys
    assert err == (
        f"error: {design}:2:1: nodes: rtx2080ti-2 has no scale-out NIC; give inter (or "
        "fabric.link) and nics_per_node to join 2 of them\n"
    )


@pytest.mark.parametrize(
    "error",
    [
        UnknownNameError("system", "dgx-h10O", ["dgx-h100"], close=False, listing="ibcalc systems"),
        UnknownNameError("link", "dgx-h100", [], elsewhere="dgx-h100 is a system preset"),
        ClusterError("{nodes} 0 is out of range", field="nodes"),
        WorkloadError("{tp} 3 does not divide the heads", field="tp"),
        AlgorithmNotApplicableError("nvls needs {nvls}"),
        InputFileError([ValidationProblem("a.yaml", 1, 2, "bad")]),
        DesignError(
            [ValidationProblem("a.yaml", 1, 2, "bad"), ValidationProblem("a.yaml", 3, 4, "worse")]
        ),
        UnitError("size -1 B is negative"),
        LogParseError("x\ny"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_a_pickle_whole(error: IbcalcError) -> None:
    """A worker of a process pool raises an error to its caller through pickle: each comes back
    as the same kind with the same message and attributes (UnknownNameError, whose
    constructor takes more than its message, had failed to unpickle, breaking the pool:
    review CB; the others pin that they still do)."""
    import copy
    import pickle

    error.add_note("raised in worker 3")  # notes travel too (review CD)
    for back in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error)):
        assert type(back) is type(error)
        assert str(back) == str(error)
        assert {k: str(v) for k, v in vars(back).items()} == {
            k: str(v) for k, v in vars(error).items()
        }
