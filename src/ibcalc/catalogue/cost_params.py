"""Load the cost-model constants: the built-in ``data/cost_params.yaml`` plus user override files.

The built-in file ships inside the package (``ibcalc/data/cost_params.yaml``) and is parsed once
per process, with libyaml when it is there (a few ms, where the positioned parser takes about
50): the CLI reads it on every call. Only if it does not validate is it parsed again with
positions, to report ``file:line:col``.

Override files, named by ``IBCALC_COST_PARAMS`` (several joined with the path separator, ``:``
on Linux) and then by the ``paths`` argument, are applied in that order; each may change any
value and gives only the entries it changes. Every problem is reported as ``file:line:col`` in
one :class:`~ibcalc.errors.CatalogueError`.

Override file format (the layout of ``data/cost_params.yaml``, partial)::

    schema: ibcalc-cost-params/1
    nccl_tuner:
      base_latency:
        value:
          ring: {LL: 16.6 us}         # one cell of a table; the other cells keep their values
        source: our 4 x DGX H100 sweep, ring LL at 8 B (2025-06)
    calibrated:
      simple_transport_factor:
        value: 6.5
        derived_by: benchmarks/calibrate.py::simple_transport_terms
        rows: our EFA rows of 1 MiB and more
    tuner_view:                       # what NCCL's tuner assumes, if a tuner plugin changes it
      calibrated:
        simple_transport_factor: {value: 2, source: NCCL's own count}

Rules: group and parameter names are those of the built-in file (an unknown name is refused with
the closest known one); every entry gives ``value`` and exactly one of ``source`` (a public
source), ``derived_by`` (``script.py::function``, with ``rows``: the data it reads) or
``assumed`` (why); times, bandwidths and sizes carry their unit (``us``, ``GB/s`` or ``Gb/s``,
``MiB``), factors and counts are plain numbers (``7/9`` allowed); a table may give some of its
cells, a list (``tree_correction``) is replaced whole. ``null`` for
``calibrated.ll_net_bandwidth`` means no LL network limit.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from ibcalc.booleans import expect_bool
from ibcalc.engine.params import SCHEMA, CostParams
from ibcalc.errors import CatalogueError, InputFileError, ValidationProblem
from ibcalc.fileio import env_paths, last_naming
from ibcalc.yamlio import (
    Document,
    input_paths,
    load_yaml,
    shipped_data,
    wrong_kind_problem,
    yaml_error,
)

__all__ = [
    "BUILTIN_LABEL",
    "ENV_VAR",
    "SCHEMA",
    "builtin_cost_params",
    "builtin_text",
    "load_cost_params",
]

ENV_VAR = "IBCALC_COST_PARAMS"
BUILTIN_LABEL = "data/cost_params.yaml"


def builtin_text() -> str:
    """Return the text of the cost parameters shipped with the package."""
    return (
        resources.files("ibcalc").joinpath("data", "cost_params.yaml").read_text(encoding="utf-8")
    )


@functools.cache
def builtin_cost_params() -> CostParams:
    """The built-in cost parameters alone (parsed and checked once per process)."""
    text = builtin_text()
    try:
        data = shipped_data("cost_params.yaml", text)
        return CostParams.from_mapping(data, label=BUILTIN_LABEL)
    except (yaml_error(), CatalogueError):
        # a broken built-in file: parse it again, strictly and with positions, to say where
        doc = load_yaml(BUILTIN_LABEL, text=text)
        return CostParams.from_mapping(_mapping(doc), label=doc.path, locate=doc.locate)


def _mapping(doc: Document) -> dict[str, object]:
    if not isinstance(doc.data, dict):
        raise CatalogueError(
            [
                ValidationProblem(
                    doc.path,
                    1,
                    1,
                    f"a cost-parameter file is a mapping: schema: {SCHEMA}, then groups",
                )
            ]
        )
    problem = wrong_kind_problem(doc, "cost-parameter")
    if problem is not None:
        raise CatalogueError([problem])
    return doc.data


def load_cost_params(
    paths: Sequence[str | Path] | str | Path = (), *, use_env: bool = True
) -> CostParams:
    """The built-in cost parameters with each override file laid over them, in order:
    ``IBCALC_COST_PARAMS`` first (when ``use_env``), then ``paths`` (one path, or several).

    Raises :class:`~ibcalc.errors.CatalogueError` listing every problem of every file, each as
    ``file:line:col``. ``origins`` of the result lists the files applied, built-in first.
    """
    given = input_paths(paths, argument="paths", each="a cost-parameter file")
    use_env = expect_bool(use_env, "use_env")  # "no" is truthy (review CI)
    # a file named twice loads once, where named last, and is the variable's only if that
    # naming is (as catalogue files: reviews BQ, BR)
    named: list[tuple[str | Path, bool]] = [(p, True) for p in env_paths(ENV_VAR) if use_env]
    files = last_naming([*named, *((p, False) for p in given)], path=lambda item: item[0])
    params = builtin_cost_params()
    problems: list[ValidationProblem] = []
    for path, from_env in files:
        try:
            doc = load_yaml(path)
            params = params.with_overrides(_mapping(doc), label=doc.path, locate=doc.locate)
        except InputFileError as exc:
            if from_env:
                for problem in exc.problems:
                    problem.message += f" (named by {ENV_VAR})"
            problems.extend(exc.problems)
    if problems:
        raise CatalogueError(problems)
    return params
