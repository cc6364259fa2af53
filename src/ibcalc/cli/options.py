"""Options shared by the commands, each declared once, and their parsing into library objects.

The options that describe a cluster are declared here once per
:class:`~ibcalc.cluster.spec.ClusterSpec` field (flag from :data:`FIELD_FLAGS`, default and range
from ``ClusterSpec`` itself). A command takes them with :func:`cluster_options`: it declares one
parameter ``cluster: ClusterSpec`` and receives the spec, built once from the options it lists.
One field is derived rather than given: ``wan_latency_s``, from ``--distance 800km`` (fibre) or
``--rtt 12ms`` (a measured round trip).
Choice lists come from the library's enums (``--algo`` from ``Algorithm``, ``--proto`` from
``Protocol``, ``--format`` from :class:`~ibcalc.render.console.Format`).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from ibcalc.catalogue.load import find_link, load_catalogue
from ibcalc.catalogue.models import Catalogue
from ibcalc.cli.boundary import FIELD_FLAGS, CliUsageError, as_typed
from ibcalc.cli.numbers import field_count, field_number, field_range, range_words, whole
from ibcalc.cluster.spec import (
    MAX_GPUS_PER_NODE,
    MAX_WAN_LATENCY_S,
    MIN_TP_GPUS,
    ClusterSpec,
    parse_ratio,
)
from ibcalc.engine.params import SCHEMA as COST_PARAMS_SCHEMA
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import HOST_CPUS, Algorithm, Collective, DType, Protocol, algorithm_key
from ibcalc.errors import ClusterError, IbcalcError, UnitError
from ibcalc.fileio import directory_name_error, names_directory
from ibcalc.render.console import Format
from ibcalc.textsafe import shown
from ibcalc.units import MAX_SIZE_BYTES, parse_distance, parse_time
from ibcalc.workload.wan import one_way_latency

__all__ = [
    "ALGO_AUTO",
    "AUTO",
    "ESTIMATE_FIELDS",
    "FORMAT_TABLE",
    "PROTO_AUTO",
    "SWEEP_TABLE",
    "AlgoOpt",
    "CatalogueOpt",
    "DesignOpt",
    "DtypeOpt",
    "FactorOpt",
    "FormatOpt",
    "MaxBytesOpt",
    "MinBytesOpt",
    "NcclAlgoOpt",
    "NcclProtoOpt",
    "NcclVersionOpt",
    "OutputFormat",
    "ProtoChoice",
    "ProtoOpt",
    "SizeOpt",
    "StepBytesOpt",
    "SweepFormat",
    "SweepFormatOpt",
    "TpOpt",
    "TpSizeOpt",
    "algorithm_of",
    "catalogue_of",
    "choices",
    "cluster_options",
    "design_cluster",
    "design_origins",
    "fabrics_of",
    "plot_target",
    "protocol_of",
    "selection_of",
    "typed",
]

R = TypeVar("R")

#: ``--algo auto`` / ``--proto auto``: leave the choice to the model (NCCL-like).
AUTO = "auto"


def choices(name: str, values: Iterable[str]) -> type[StrEnum]:
    """A StrEnum of ``values``: typer lists them in ``--help`` and refuses any other value."""
    return cast(type[StrEnum], StrEnum(name, [(value, value) for value in values]))


# The choice enums are built from the library's own lists. mypy cannot see members of an enum
# built at run time, so it is told only that each is a StrEnum.
if TYPE_CHECKING:
    ProtoChoice = StrEnum
    OutputFormat = StrEnum
    SweepFormat = StrEnum
    HostCpu = StrEnum
else:
    ProtoChoice = choices("ProtoChoice", [AUTO, *Protocol])
    OutputFormat = choices("OutputFormat", [Format.TABLE, Format.JSON])
    SweepFormat = choices("SweepFormat", list(Format))
    HostCpu = choices("HostCpu", HOST_CPUS)


#: The defaults of those options (module-level: a default is evaluated once anyway).
ALGO_AUTO = AUTO
PROTO_AUTO = ProtoChoice(AUTO)
FORMAT_TABLE = OutputFormat(Format.TABLE)
SWEEP_TABLE = SweepFormat(Format.TABLE)


def algorithm_of(choice: str) -> Algorithm | None:
    """``--algo`` as the library takes it: None for auto."""
    return None if choice == AUTO else Algorithm(choice)


def protocol_of(choice: str) -> Protocol | None:
    """``--proto`` as the library takes it: None for auto."""
    return None if choice == AUTO else Protocol(choice)


def _flag(field: str) -> str:
    return FIELD_FLAGS[field]


def _limits(field: str) -> str:
    """``low..high`` of a numeric ClusterSpec field, read from the model (never retyped)."""
    return range_words(*field_range(ClusterSpec, field))


def _count_range(field: str) -> tuple[int, int]:
    """The bounds of a ClusterSpec count (every one has both)."""
    low, high = field_range(ClusterSpec, field)
    assert low is not None, field
    assert high is not None, field
    return int(low), int(high)


def _count(field: str) -> Callable[[str | int], int]:
    """The parser of a ClusterSpec count: its text refused as typed, out of the field's range
    too (``--nodes '0' is out of range (1..1000000)``)."""
    return field_count(ClusterSpec, field)


def _share(field: str) -> Callable[[str | float], float]:
    """The parser of a ClusterSpec fraction (``--cross-leaf '50%'`` is answered with 0.5)."""
    return field_number(ClusterSpec, field, fraction=True)


def _ratio(value: str) -> float:
    """``--oversubscription`` as design files write it: ``2``, ``1.5``, ``2:1`` or ``4:3``,
    with their hint for a ratio written up:down (``0.5``: did you mean 2:1?)."""
    try:
        return parse_ratio(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("oversubscription ")) from None


# --- the cluster -----------------------------------------------------------------------------


def _gpus_option(low: int, high: int) -> Any:
    """The ``--gpus-per-node`` option from ``low`` to ``high``, its help stating them."""
    return Annotated[
        int | None,
        typer.Option(
            _flag("gpus_per_node"),
            "-g",
            help=f"GPUs per node ({range_words(low, high)}); not nccl-tests' -g, which counts "
            "GPUs per process.",
            parser=whole(low, high),
        ),
    ]


#: One option per ClusterSpec field: (annotation, help). Defaults are ClusterSpec's own.
_CLUSTER_OPTIONS: dict[str, Any] = {
    "nodes": Annotated[
        int | None,
        typer.Option(
            _flag("nodes"),
            "-N",
            help=f"Number of nodes ({_limits('nodes')}).",
            parser=_count("nodes"),
        ),
    ],
    "gpus_per_node": _gpus_option(*_count_range("gpus_per_node")),
    "nics_per_node": Annotated[
        int | None,
        typer.Option(
            _flag("nics_per_node"),
            help=f"Scale-out NICs per node ({_limits('nics_per_node')}).",
            parser=_count("nics_per_node"),
        ),
    ],
    "intra": Annotated[
        str | None, typer.Option(_flag("intra"), help="Scale-up link id (e.g. nvlink4).")
    ],
    "inter": Annotated[
        str | None,
        typer.Option(_flag("inter"), "--fabric", help="Scale-out link id (e.g. ndr, roce-400g)."),
    ],
    "system": Annotated[
        str | None, typer.Option(_flag("system"), help="System preset (e.g. dgx-h100).")
    ],
    "host_pcie": Annotated[
        str | None,
        typer.Option(
            _flag("host_pcie"), help="PCIe link each NIC sits on; caps its rate (e.g. pcie5)."
        ),
    ],
    "host_cpu": Annotated[
        HostCpu | None,
        typer.Option(
            _flag("host_cpu"),
            help="Host CPU family; NCCL charges 2 us per network ring step on AMD hosts, 1 us "
            "elsewhere (default: the system's, else 1 us).",
            case_sensitive=False,
        ),
    ],
    "sharp": Annotated[
        bool, typer.Option(f"{_flag('sharp')}/--no-sharp", help="Enable IB SHARP (CollNet).")
    ],
    "nvls": Annotated[
        bool | None,
        typer.Option(
            f"{_flag('nvls')}/--no-nvls", help="Allow NVLink SHARP (default: when present)."
        ),
    ],
    "scale_up_domain": Annotated[
        int | None,
        typer.Option(
            _flag("scale_up_domain"),
            help="GPUs per NVLink domain across nodes: whole nodes dividing the system's "
            "domain (gb200-nvl72: 4, 8, 12, 24, 36 or 72; default: the system's).",
            parser=_count("scale_up_domain"),
        ),
    ],
    "oversubscription": Annotated[
        float,
        typer.Option(
            _flag("oversubscription"),
            help=f"Oversubscription of the uplinks, end to end (down:up: 2 or 2:1; a design "
            "file's [leaf, spine] ratios multiply), "
            f"{_limits('oversubscription')}.",
            parser=_ratio,
            metavar="RATIO",
        ),
    ],
    "cross_leaf_fraction": Annotated[
        float,
        typer.Option(
            _flag("cross_leaf_fraction"),
            help=f"Fraction ({_limits('cross_leaf_fraction')}) of each node's network traffic "
            "crossing the oversubscribed uplinks (1, every byte, unless given; a design file "
            "with a sized fabric derives it from the switch layout).",
            parser=_share("cross_leaf_fraction"),
        ),
    ],
    "neighbour_cross_leaf_fraction": Annotated[
        float | None,
        typer.Option(
            _flag("neighbour_cross_leaf_fraction"),
            help=f"The same ({_limits('neighbour_cross_leaf_fraction')}) for neighbour traffic "
            "(ring, tree, SHARP, send/recv; --cross-leaf covers all-to-all with PXN and recursive "
            "halving-doubling): placed leaf by leaf, 1 / nodes per leaf (default: --cross-leaf; a "
            "sized design derives it).",
            parser=_share("neighbour_cross_leaf_fraction"),
        ),
    ],
    "unaligned_cross_leaf_fraction": Annotated[
        float | None,
        typer.Option(
            _flag("unaligned_cross_leaf_fraction"),
            help=f"The same ({_limits('unaligned_cross_leaf_fraction')}) for traffic off its "
            "rail (all-to-all without PXN, each GPU's NIC to the destination GPU's): on a "
            "rail-optimized fabric 1 - (1 - cross-leaf) / rails (default: --cross-leaf; a sized "
            "design derives it).",
            parser=_share("unaligned_cross_leaf_fraction"),
        ),
    ],
    "leaf_group_nodes": Annotated[
        int | None,
        typer.Option(
            _flag("leaf_group_nodes"),
            help=f"Consecutive nodes ({_limits('leaf_group_nodes')}) whose rail-aligned traffic "
            "stays under one leaf (a rail-optimized SU, else one leaf's whole nodes): a group of "
            "the job inside one such stretch is priced clear of the taper (default: not known, "
            "every group takes the cluster's --cross-leaf shares; a sized design derives it).",
            parser=_count("leaf_group_nodes"),
        ),
    ],
    "sites": Annotated[
        int,
        typer.Option(
            _flag("sites"),
            help=f"Sites joined by a WAN ({_limits('sites')}).",
            parser=_count("sites"),
        ),
    ],
    "wan": Annotated[
        str | None, typer.Option(_flag("wan"), help="WAN link id between sites (wan-100g).")
    ],
    "wan_links": Annotated[
        int,
        typer.Option(
            _flag("wan_links"),
            help=f"WAN links per site ({_limits('wan_links')}).",
            parser=_count("wan_links"),
        ),
    ],
    "gpus_per_process": Annotated[
        int,
        typer.Option(
            _flag("gpus_per_process"),
            help="GPUs one process drives, as nccl-tests -g: a divisor of the GPUs per node "
            "(launches are serial on the host).",
            parser=_count("gpus_per_process"),
        ),
    ],
}

DistanceOpt = Annotated[
    str | None,
    typer.Option(
        FIELD_FLAGS["wan_latency_s"],
        help="Fibre distance between sites, e.g. 800km: the WAN latency at 5 us/km one way.",
    ),
]
RttOpt = Annotated[
    str | None,
    typer.Option(
        "--rtt", help="Measured round trip between sites, e.g. 12ms (instead of --distance)."
    ),
]

#: Fields derived from options of their own: field -> its options (parameter name, annotation).
_DERIVED_OPTIONS: dict[str, tuple[tuple[str, Any], ...]] = {
    "wan_latency_s": (("distance", DistanceOpt), ("rtt", RttOpt)),
}


#: What each WAN option's value is, and the option that takes the other's kind: a time given
#: to --distance is a round trip's (--rtt), a distance given to --rtt a fibre route's.
_SIBLINGS = {
    "--distance": ("a time", "--rtt", "a round trip"),
    "--rtt": ("a distance", "--distance", "the fibre route"),
}


def _sibling(parse: Callable[[], float], flag: str, text: str) -> float:
    """``parse()``; where it refuses ``text``, that it is the other WAN option's kind if it
    reads as one (``--distance 800ms``: "is a time: give it to --rtt"; it had been told only
    the units of a distance), else the refusal as it is. A bare ``m`` given to ``--rtt`` keeps
    the refusal, whose units name ``min``: ``5m`` may be minutes as well as metres (it had been
    sent to ``--distance`` as 5 metres)."""
    try:
        return parse()
    except UnitError as refused:
        kind, other, what = _SIBLINGS[flag]
        unit = text.strip().lower()
        if flag == "--rtt" and unit.endswith("m") and not unit.endswith("km"):
            raise
        try:
            if flag == "--distance":
                parse_time(text, unit_required=True, what=other)
            else:
                parse_distance(text, what=other)
        except UnitError:
            raise refused from None
        raise CliUsageError(
            f"{flag} {shown(text)} is {kind}: give it to {other} ({what})"
        ) from None


def _wan_latency_s(distance: str | None, rtt: str | None) -> float | None:
    """The one-way WAN latency ``--distance`` or ``--rtt`` gives (None: neither given)."""
    if distance is None and rtt is None:
        return None
    if distance is not None and rtt is not None:
        raise CliUsageError("give --distance or --rtt, not both")
    distance_m = (
        _sibling(lambda: parse_distance(distance, what="--distance"), "--distance", distance)
        if distance is not None
        else None
    )
    rtt_s = (
        _sibling(
            lambda: parse_time(rtt, allow_zero=False, unit_required=True, what="--rtt"),
            "--rtt",
            rtt,
        )
        if rtt is not None
        else None
    )
    # sites a WAN joins are apart: below 1 m or 1 ns the value is a slip of the unit
    if distance_m is not None and distance_m < 1.0:
        raise CliUsageError(f"--distance {shown(distance)} is under 1 m: WAN sites are apart")
    if rtt_s is not None and rtt_s < 1e-9:
        raise CliUsageError(f"--rtt {shown(rtt)} is under 1 ns")
    latency = one_way_latency(distance_m=distance_m, rtt_s=rtt_s)
    assert latency is not None
    if latency > MAX_WAN_LATENCY_S:
        # said in the user's terms: ClusterSpec would name the one-way latency in seconds
        flag, given = ("--rtt", rtt) if rtt is not None else ("--distance", distance)
        raise CliUsageError(
            f"{flag} {shown(given)} is a WAN latency of {latency:g} s one way; at most "
            f"{MAX_WAN_LATENCY_S:g} s is accepted"
        )
    return latency


#: The cluster options of the collective commands, in ``--help`` order.
ESTIMATE_FIELDS: tuple[str, ...] = (
    "nodes",
    "gpus_per_node",
    "nics_per_node",
    "intra",
    "inter",
    "system",
    "sharp",
    "nvls",
    "scale_up_domain",
    "oversubscription",
    "cross_leaf_fraction",
    "neighbour_cross_leaf_fraction",
    "unaligned_cross_leaf_fraction",
    "sites",
    "wan",
    "wan_links",
    "wan_latency_s",
    "gpus_per_process",
    "host_pcie",
    "host_cpu",
)


def cluster_options(
    *fields: str,
    own: Collection[str] = (),
    min_gpus_per_node: int | None = None,
    from_log: bool = False,
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give a command the options of ``fields`` (ClusterSpec fields) as one ``ClusterSpec``.

    The command declares a parameter ``cluster: ClusterSpec``; in its place typer sees one
    option per field, in the order given, and the command is called with
    ``cluster=ClusterSpec(...)`` built from them (out-of-range values raise
    :class:`~ibcalc.errors.ClusterError` naming the field, inside the command's boundary).
    A field in ``own`` is an option the command declares itself (``sweep``'s ``--inter`` takes a
    list of fabrics): it is shown at that field's place and passed to the command as is.
    ``min_gpus_per_node``: the command's own lower bound of ``--gpus-per-node`` (it checks it),
    stated in the option's help instead of ClusterSpec's. ``from_log``: the command reads the
    rest from a log, so ``--gpus-per-process`` defaults to what the log says, not to 1.
    """
    options = dict(_CLUSTER_OPTIONS)
    if min_gpus_per_node is not None:
        options["gpus_per_node"] = _gpus_option(min_gpus_per_node, MAX_GPUS_PER_NODE)
    if from_log:
        # the log's header says it (nccl-tests' nGpus): the flag's default is not 1 there
        options["gpus_per_process"] = Annotated[
            int,
            typer.Option(
                _flag("gpus_per_process"),
                help="GPUs one process drove, as nccl-tests -g: a divisor of the GPUs per node "
                "(default: the log header's nGpus, else 1).",
                show_default=False,
                parser=_count("gpus_per_process"),
            ),
        ]
    unknown = [f for f in fields if f not in _CLUSTER_OPTIONS and f not in _DERIVED_OPTIONS]
    if unknown:
        raise ValueError(f"not ClusterSpec options: {unknown}")
    spec_fields = [f for f in fields if f not in own and f not in _DERIVED_OPTIONS]
    derived = [f for f in fields if f in _DERIVED_OPTIONS]

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command, eval_str=True)
        declared = signature.parameters
        if "cluster" not in declared or not set(own) <= declared.keys():
            raise TypeError(f"{command.__name__} must declare cluster and {sorted(own)}")
        keyword = inspect.Parameter.KEYWORD_ONLY
        # the toolkit's context says which options the command line gave (`-g 1` is given,
        # though it is the default); the command's own context parameter, else a hidden one
        context = next((p.name for p in declared.values() if p.annotation is typer.Context), None)
        parameters: list[inspect.Parameter] = []
        if context is None:
            parameters.append(inspect.Parameter(_CONTEXT, keyword, annotation=typer.Context))
        for parameter in declared.values():
            if parameter.name in own:
                continue
            if parameter.name != "cluster":
                parameters.append(parameter.replace(kind=keyword))
                continue
            for field in fields:
                if field in own:
                    parameters.append(declared[field].replace(kind=keyword))
                elif field in _DERIVED_OPTIONS:
                    parameters.extend(
                        inspect.Parameter(name, keyword, annotation=annotation, default=None)
                        for name, annotation in _DERIVED_OPTIONS[field]
                    )
                else:
                    parameters.append(
                        inspect.Parameter(
                            field,
                            keyword,
                            annotation=options[field],
                            default=ClusterSpec.model_fields[field].default,
                        )
                    )

        @functools.wraps(command)
        def with_cluster(**kwargs: Any) -> R:
            # only the options given are set: a spec's fields_set is what the user said, which
            # commands that infer the rest (nccl-check) rely on
            ctx = kwargs.pop(_CONTEXT, None) if context is None else kwargs.get(context)
            values = {field: kwargs.pop(field) for field in spec_fields}
            given = {
                # a choice option gives its enum member; the spec takes the plain value
                field: value.value if isinstance(value, StrEnum) else value
                for field, value in values.items()
                if _given(ctx, field, value)
            }
            gpus = given.get("gpus_per_node")
            # the command's own range, in the words its --help uses (-g 0 said 1..1024)
            if (
                min_gpus_per_node is not None
                and isinstance(gpus, int)
                and not min_gpus_per_node <= gpus <= MAX_GPUS_PER_NODE
            ):
                raise ClusterError(
                    f"{{gpus_per_node}} {gpus} is out of range "
                    f"({min_gpus_per_node}..{MAX_GPUS_PER_NODE})",
                    field="gpus_per_node",
                )
            for field in derived:
                options = {name: kwargs.pop(name) for name, _ in _DERIVED_OPTIONS[field]}
                if any(value is not None for value in options.values()):
                    given[field] = _wan_latency_s(**options)
            return command(cluster=ClusterSpec(**given), **kwargs)

        # typer reads the signature and the annotations: show it the options, not `cluster`
        with_cluster.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters
        )
        with_cluster.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_cluster

    return decorate


#: The name of the context parameter :func:`cluster_options` adds to a command without one.
_CONTEXT = "_ibcalc_context"


def _given(ctx: typer.Context | None, field: str, value: Any) -> bool:
    """Whether the option of ``field`` was given: by the command line (or the environment),
    whatever its value; without a context (a direct call), when it is not the default."""
    if ctx is None or ctx.get_parameter_source(field) is None:
        return bool(value != ClusterSpec.model_fields[field].default)
    return typed(ctx, field)


def typed(ctx: typer.Context, name: str) -> bool:
    """Whether the command line (or the environment) gave the option of parameter ``name``,
    whatever its value, rather than its default leaving it so."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def fabrics_of(inter: str | None) -> list[str]:
    """``--inter ndr,hdr`` -> ``["ndr", "hdr"]``: duplicates dropped, order kept, a trailing
    comma allowed (``ndr,``: a list built in a shell loop); an empty name between commas
    (``ndr,,hdr``) is refused as the typo it likely is."""
    if inter is None:
        return []
    items = [name.strip() for name in inter.split(",")]
    if len(items) > 1 and not items[-1]:
        items.pop()
    if not any(items):
        raise ClusterError(
            f"{{inter}} {shown(inter)} names no link (e.g. {{inter}} ndr,hdr)", field="inter"
        )
    if not all(items):
        raise ClusterError(
            f"{{inter}} {shown(inter)} has an empty name between commas (e.g. {{inter}} ndr,hdr)",
            field="inter",
        )
    return list(dict.fromkeys(items))


# --- everything else -------------------------------------------------------------------------


def file_name(value: str | Path) -> Path:
    """An input file's name as a Path, refusing an empty name: ``Path("")`` is ``.``, which
    had been reported as "'.': is a directory" for ``--design ''``. (``--plot`` and
    ``calibrate -o`` refuse '' themselves, with what the name must be.)"""
    if not str(value):
        raise typer.BadParameter("the file name is empty")
    return Path(value)


def output_name(value: str | Path) -> Path:
    """An output file's name as a Path, refusing one that names a directory ('o/x/',
    'o/x/.'): a typed Path option drops the slash and the dot before any check reads the
    name, so calibrate -o and --plot had written 'o/x' (review DL). An empty name passes,
    for the option's own message."""
    name = str(value)
    if name and names_directory(name):
        # in check -o's words (fileio's), not click's "Invalid value for ..." (review DP)
        raise directory_name_error(name)
    return Path(name)


CatalogueOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalogue",
        help="Extra catalogue YAML (adds or overrides entries).",
        metavar="FILE",
        parser=file_name,
    ),
]
NcclVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--nccl-version",
        help="NCCL release the cluster runs (e.g. 2.21.5): NCCL's algorithm and protocol choice "
        "follows that release's tuner constants (releases read: 2.18.3 to 2.30.7).",
        metavar="X.Y[.Z]",
    ),
]
CostParamsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--cost-params",
        help="Cost-parameter override YAML (e.g. written by ibcalc calibrate); also "
        "IBCALC_COST_PARAMS.",
        metavar="FILE",
        parser=file_name,
    ),
]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain", help="Show the derivation term by term, and why NCCL picks the algorithm."
    ),
]
DesignOpt = Annotated[
    Path | None,
    typer.Option(
        "--design",
        help="Take the cluster from a cluster-design file.",
        metavar="FILE",
        parser=file_name,
    ),
]
FormatOpt = Annotated[
    OutputFormat, typer.Option("--format", help="table or json.", case_sensitive=False)
]
SweepFormatOpt = Annotated[
    SweepFormat, typer.Option("--format", help="table, json or csv.", case_sensitive=False)
]


def _algo(value: str) -> str:
    """``--algo`` in any case, NCCL's own names too (``NCCL_ALGO=CollnetDirect``, which ibcalc
    calls collnet), as the library takes them; the choices listed stay ibcalc's."""
    key = algorithm_key(value)
    names = [AUTO, *(a.value for a in Algorithm)]
    if key in names:
        return key
    # said as typer says a choice it refuses (the CLI's boundary adds the closest name)
    listed = ", ".join(repr(name) for name in names)
    raise typer.BadParameter(f"{shown(value)} is not one of {listed}.")


AlgoOpt = Annotated[
    str,
    typer.Option(
        "--algo",
        help="Algorithm, or auto (NCCL-like choice); NCCL's names (CollnetDirect ...) too.",
        parser=_algo,
        metavar=f"<{'|'.join([AUTO, *(a.value for a in Algorithm)])}>",
    ),
]
NcclAlgoOpt = Annotated[
    str | None,
    typer.Option(
        "--nccl-algo",
        help="NCCL_ALGO as NCCL reads it: the algorithms NCCL may use (ring,tree), ^ for those "
        "it may not (^nvls), or per collective (allreduce:tree;allgather:ring); NCCL's choice "
        "among what is left.",
        metavar="LIST",
    ),
]
NcclProtoOpt = Annotated[
    str | None,
    typer.Option(
        "--nccl-proto",
        help="NCCL_PROTO as NCCL reads it (simple, ^ll128 ...); NCCL's choice among what is left.",
        metavar="LIST",
    ),
]
ProtoOpt = Annotated[
    ProtoChoice, typer.Option("--proto", help="Protocol, or auto.", case_sensitive=False)
]
DtypeOpt = Annotated[
    str,
    typer.Option(
        "--dtype",
        "-d",
        help=f"Element type: {', '.join(DType)}; nccl-tests' names (float, half ...) too.",
    ),
]
SizeOpt = Annotated[
    str,
    typer.Option(
        _flag("size_bytes"),
        "-s",
        help="Size: 10GB (10^10 B), 1GiB, 1e9 ...; 8M alone is 8 MiB, as nccl-tests reads it.",
    ),
]
MinBytesOpt = Annotated[
    str, typer.Option(_flag("min_bytes"), "-b", help="Smallest size (8M alone is 8 MiB).")
]
MaxBytesOpt = Annotated[
    str, typer.Option(_flag("max_bytes"), "-e", help="Largest size (8G alone is 8 GiB).")
]
#: The largest ``-f`` (2^50): nccl-tests multiplies the size by ``-f`` while it stays within
#: ``-e``, and a sweep's sizes run from 1 B to 1 PiB (``units.MAX_SIZE_BYTES``), so a larger factor
#: never reaches a second size (``-b 1 -e 1PiB -f 2^50`` is the widest series of two). Above it
#: the option had taken any count (a 20-digit factor, a sweep of one size) where every other count
#: option has a stated range (review EK 1).
MAX_STEP_FACTOR = int(MAX_SIZE_BYTES)

FactorOpt = Annotated[
    int,
    typer.Option(
        _flag("factor"),
        "-f",
        help=f"Size multiplier ({range_words(1, MAX_STEP_FACTOR)}: 2^50, as a larger one never "
        "reaches a second size between 1 B and 1 PiB); 1: add --stepbytes each step "
        "(nccl-tests).",
        parser=whole(
            1,
            MAX_STEP_FACTOR,
            note="1 adds --stepbytes each step, as nccl-tests' -f 1; a factor past 2^50, 1 PiB "
            "over 1 B, reaches no second size",
        ),
    ),
]
StepBytesOpt = Annotated[
    str | None,
    typer.Option(
        _flag("step_bytes"),
        "-i",
        help="Size increment with -f 1, as nccl-tests' -i (default then 1M); -f 2 or more "
        "ignores it, as nccl-tests does.",
    ),
]
TpOpt = Annotated[
    int | None,
    typer.Option(
        _flag("tp"),
        help=f"Tensor-parallel degree T ({range_words(MIN_TP_GPUS, MAX_GPUS_PER_NODE)}): one "
        "all-reduce inside vs across.",
        parser=whole(MIN_TP_GPUS, MAX_GPUS_PER_NODE),
    ),
]
TpSizeOpt = Annotated[
    str | None, typer.Option(_flag("tp_size_bytes"), help="Size of that all-reduce.")
]


def catalogue_of(files: Iterable[Path] | None) -> Catalogue:
    """The built-in catalogue with ``--catalogue`` files (and ``IBCALC_CATALOGUE``) applied."""
    return load_catalogue(list(files or []))


def params_of(files: Iterable[Path] | None, nccl_version: str | None = None) -> CostParams:
    """The built-in cost parameters with ``--cost-params`` files (and ``IBCALC_COST_PARAMS``),
    and the tuner constants of ``--nccl-version`` over NCCL's tuner view."""
    from ibcalc.catalogue.cost_params import load_cost_params

    params = load_cost_params(list(files or []))
    if nccl_version is None:
        return params
    from ibcalc.catalogue.releases import for_release

    return for_release(params, nccl_version)


def selection_of(
    nccl_algo: str | None,
    nccl_proto: str | None,
    collective: Collective,
    params: CostParams,
    ll128_priced: Callable[[], bool] = lambda: True,
) -> CostParams:
    """``params`` with what ``--nccl-algo`` and ``--nccl-proto`` (NCCL_ALGO's and NCCL_PROTO's
    syntax) rule out switched off in NCCL's tuner view, and what they say among the estimate's
    assumptions: NCCL's choice is then among the rest (one left is NCCL's choice, not a forced
    one: ``--algo`` may still force a what-if). A name NCCL does not list is refused (a log's
    is noted: it is the run's, not a typo to mend). ``ll128_priced``: whether the model prices
    LL128 on the cluster, asked where the setting leaves LL128 on (NCCL then may choose it even
    where its default keeps it off)."""
    if nccl_algo is None and nccl_proto is None:
        return params
    from ibcalc.logs.selection import select, with_selection

    for flag, value, example, pair in (
        ("--nccl-algo", nccl_algo, "^NVLS or Ring,Tree", "Ring,Tree"),
        ("--nccl-proto", nccl_proto, "^LL128 or Simple", "LL128,Simple"),
    ):
        if value is None:
            continue
        if not re.sub(r"[\s^,;:]", "", value):
            # '^', ';;;' or '' name nothing: NCCL reads them as no setting, and the estimate had
            # been NCCL's own choice without a word (review DH)
            raise CliUsageError(
                f"{flag} {shown(value)} names nothing: NCCL reads it as no setting; drop the "
                f"option or give names (e.g. {example})"
            )
        _refuse_unclear_setting(flag, value, pair)
    settings = {
        variable: (value, f"{flag} {value}")
        for variable, flag, value in (
            ("NCCL_ALGO", "--nccl-algo", nccl_algo),
            ("NCCL_PROTO", "--nccl-proto", nccl_proto),
        )
        if value is not None
    }
    selection, said = select(
        settings, collective, params, subject=None, source="", printed_script=False
    )
    for _field, _value, text in said:
        if " NCCL lists" in text:
            raise CliUsageError(_quoted_setting(text, settings.values()))
    label = "; ".join(text for _field, _value, text in said)
    if selection.ll128_named is not None and not ll128_priced():
        label += (
            f"; NCCL, its protocols set, may choose LL128, which {selection.ll128_named} leaves "
            "on, even where its default keeps it off, as here (PCIe, networks other than verbs); "
            "the model prices LL128 only where NCCL's default allows it"
        )
    if selection.overlay is None:
        return params.with_overrides({"schema": COST_PARAMS_SCHEMA}, label=label)
    return with_selection(params, selection.overlay, label=label)


def _quoted_setting(text: str, settings: Iterable[tuple[str, str]]) -> str:
    """``text``, which refuses a setting's names (``--nccl-algo rng: rng is not a name NCCL
    lists``), with the setting quoted as typed, as every refusal of one option's value is, so
    that it ends with the command's --help hint as they do: ``--nccl-algo 'rng': rng is not a
    name NCCL lists (see 'ibcalc allreduce --help')``. ``settings``: (value, flag and value)."""
    for value, where in settings:
        if text.startswith(f"{where}: "):
            return f"{where.partition(' ')[0]} {shown(value)}{text.removeprefix(where)}"
    return text


def _empty_between_names(items: list[str]) -> bool:
    """Whether a comma list's ``items`` hold an empty one between two names (``ring,,tree``);
    empty ones at its ends (``ll,,``) are NCCL's syntax, which drops them (review DH)."""
    named = [i for i, item in enumerate(items) if item.strip()]
    return bool(named) and not all(items[i].strip() for i in range(named[0], named[-1] + 1))


def _refuse_unclear_setting(flag: str, value: str, pair: str) -> None:
    """Refuse what ``value`` (``--nccl-algo``'s or ``--nccl-proto``'s) leaves unclear: an empty
    name between two names (``ring,,tree``, the typo ``--inter ndr,,hdr`` is refused as; NCCL's
    reading would drop it unsaid), a ``^`` past a list's start (``ll,^simple``: NCCL reads
    ``^simple`` as a name, which matches nothing), and two lists for one collective
    (``allreduce:tree;allreduce:ring``; two plain lists, ``ring;tree``, for every one), which
    NCCL's documentation (``[^]<algo>[,<algo>...][;<coll>:[^]<algo>...]``) gives one each and
    this repository has no source for which NCCL keeps (review EK 2). A log's setting is the
    run's and is read as it is (:func:`ibcalc.logs.selection.nccl_selection`)."""
    from ibcalc.logs.selection import collective_named, setting_entries

    given: dict[Collective | None, tuple[str, str]] = {}  # -> (its name as written, its list)
    for prefix, listed in setting_entries(value):
        lists = [listed.removeprefix("^").split(","), *([prefix] if prefix is not None else [])]
        if any(_empty_between_names(names) for names in lists):
            raise CliUsageError(
                f"{flag} {shown(value)} has an empty name between commas (e.g. {flag} {pair})"
            )
        items = [item.strip() for item in listed.removeprefix("^").split(",")]
        if any(item.startswith("^") for item in items):
            # 'll,^simple' had been offered Simple for '^simple', a name NCCL reads as no
            # protocol: its '^' negates the list it begins, and nowhere else
            whole = "^" + ",".join(name for item in items if (name := item.lstrip("^")))
            raise CliUsageError(
                f"{flag} {shown(value)} has '^' inside a list: '^' negates the whole list and "
                f"goes only at its start ({whole} rules out every name in it)"
            )
        # the collectives NCCL lists the entry names (a name it does not list is refused with
        # the setting's other unknown names); a plain list is every collective's, and meets
        # any list given before it (NCCL's syntax puts it first)
        named = (
            {c: op.strip() for op in (prefix or []) if (c := collective_named(op)) is not None}
            if prefix is not None
            else {None: "every collective", **{c: op for c, (op, _) in given.items()}}
        )
        for collective, op in named.items():
            if collective in given:
                raise CliUsageError(
                    f"{flag} {shown(value)} gives {op} two lists ({given[collective][1]}, "
                    f"{listed}); NCCL's documentation does not say which it keeps: give one"
                )
            given[collective] = (op, listed)


def plot_target(plot: Path | None, inputs: Iterable[str | Path] = ()) -> Path | None:
    """Check a ``--plot`` target (not one of ``inputs``, the files the run reads), and that
    matplotlib is importable, before any work is done."""
    if plot is None:
        return None
    if plot == Path():  # the toolkit turns an empty --plot '' into '.'
        raise CliUsageError("--plot needs a file name ending in .png or .svg")
    from ibcalc.render.plot import check_target, require_matplotlib

    target, _fmt = check_target(plot, inputs=inputs)
    require_matplotlib()
    return target


def _design_spec(design: Path, catalogue: Catalogue) -> tuple[ClusterSpec, dict[str, str]]:
    """The design's cluster, and the cluster fields its file states (field -> its YAML key)."""
    from ibcalc.design.check import load_design, resolve_design

    loaded, doc = load_design(design, catalogue=catalogue)
    # a key written as null leaves the field open
    stated: dict[str, str] = {
        f: f
        for f in ("host_pcie", "host_cpu", "nvls", "scale_up_domain")
        if getattr(loaded, f) is not None
    }
    fabric = loaded.fabric
    if fabric is not None:
        if "sharp" in fabric.model_fields_set:
            stated["sharp"] = "fabric.sharp"
        sized = fabric.switch is not None or fabric.radix is not None
        if sized:
            stated["oversubscription"] = "fabric layout"
            stated["cross_leaf_fraction"] = "fabric layout"
            stated["neighbour_cross_leaf_fraction"] = "fabric layout"
            stated["unaligned_cross_leaf_fraction"] = "fabric layout"
            stated["leaf_group_nodes"] = "fabric layout"
        elif "oversubscription" in fabric.model_fields_set:
            stated["oversubscription"] = "fabric.oversubscription"
    return resolve_design(loaded, doc, catalogue).cluster.spec, stated


#: The fields that describe the nodes (what a design file gives).
_NODE_FIELDS = ("nodes", "gpus_per_node", "nics_per_node", "intra", "inter", "system")


def design_cluster(
    cluster: ClusterSpec,
    design: Path | None,
    catalogue: Catalogue,
    *,
    unread: frozenset[str] = frozenset(),
) -> tuple[ClusterSpec, dict[str, str]]:
    """The cluster of ``--design FILE`` with the other cluster options given (sites, WAN ...),
    and how a workload's notes name its fields (:func:`_design_names`); the file is read once.

    Without a design, ``cluster`` itself. Options that describe the nodes too are refused: the
    design and the flags would both describe them; so are options the file itself states
    (``--sharp`` against ``fabric.sharp``, ``--host-pcie`` against ``host_pcie`` ...), which
    would otherwise replace the file's value unsaid. Options the file leaves open are laid over
    it (``--sharp`` on a design without ``fabric.sharp``: a what-if), and so are the ``unread``
    fields, which the command does not use and names as ignored (checkpoint's SHARP).
    """
    if design is None:
        return cluster, as_typed(FIELD_FLAGS)
    both = [FIELD_FLAGS[f] for f in _NODE_FIELDS if f in cluster.model_fields_set]
    if both:
        # 'both' for two flags, 'all' for more (three had read 'both'; a review)
        together = "both" if len(both) == 1 else "all"
        raise CliUsageError(f"{', '.join(both)} and --design {together} describe the cluster")
    spec, stated = _design_spec(design, catalogue)
    clash = [
        f
        for f in sorted((cluster.model_fields_set & stated.keys()) - unread)
        if not _same(catalogue, getattr(cluster, f), getattr(spec, f))
    ]
    if clash:
        many = len(clash) > 1
        flags = ", ".join(_flag_given(f, getattr(cluster, f)) for f in clash)
        keys = ", ".join(dict.fromkeys(stated[f] for f in clash))
        raise CliUsageError(
            f"{flags}: the design already sets {'them' if many else 'it'} ({keys}); change the "
            f"file or drop the option{'s' if many else ''}"
        )
    given = {f: getattr(cluster, f) for f in cluster.model_fields_set}
    return spec.replace(**given), _design_names(cluster, stated)


def _flag_given(field: str, value: object) -> str:
    """The option as the caller wrote it: ``--no-sharp`` for a switch turned off."""
    flag = FIELD_FLAGS[field]
    return f"--no-{flag[2:]}" if value is False else flag


def _same(catalogue: Catalogue, given: object, stated: object) -> bool:
    """Whether an option says what the design does: link names by catalogue id (case and
    aliases aside: --host-pcie PCIe5 is pcie5), numbers at the 2 digits the notes print them
    with (--cross-leaf 0.35 against a derived 0.3465)."""
    if isinstance(given, float) and isinstance(stated, float):
        return abs(given - stated) <= 0.005 * max(1.0, abs(stated))
    if isinstance(given, str) and isinstance(stated, str):
        try:
            return find_link(catalogue, given).id == find_link(catalogue, stated).id
        except IbcalcError:
            return given.lower() == stated.lower()
    return given == stated


def _design_names(cluster: ClusterSpec, stated: Mapping[str, str]) -> dict[str, str]:
    """How a workload's notes name each field: as flags, except a field the design file states
    (``stated``: field -> its key) and no option gave, which is named by its key
    (``fabric.sharp``; "the design's fabric layout" for a cross-leaf fraction it derives): the
    notes said "SHARP (--sharp)" for a design's ``fabric.sharp: true``, and "from
    --cross-leaf", neither given."""
    from_file = {
        f: "the design's fabric layout" if key == "fabric layout" else key
        for f, key in stated.items()
        if f not in cluster.model_fields_set
    }
    # the node fields come from the file alone (their options are refused beside it): '4 GPUs
    # per node of dgx-h100's 8 (--gpus-per-node)' had named an option --design refuses
    nodes = {f: f"the design's {f}" for f in _NODE_FIELDS}
    return {**as_typed(FIELD_FLAGS), **nodes, **from_file}


def design_error_names(names: Mapping[str, str], design: Path | None) -> dict[str, str]:
    """``names`` for a refusal: with ``--design``, the node fields are the file's ("the design's
    nodes"), so that "change --dp or --nodes" does not offer an option --design refuses."""
    if design is None:
        return dict(names)
    return {**names, **{f: f"the design's {f}" for f in _NODE_FIELDS}}


def _node_shape(cluster: ClusterSpec, spec: ClusterSpec) -> ClusterSpec:
    """The node shape of a design's cluster ``spec`` (not its node count) with the options
    given laid over it; only what the two give is set (the rest is left to be inferred, from a
    log)."""
    # a key the design leaves unset (None) is left to the log: set, it had been listed as
    # 'gpus_per_node [flag]: given by the caller' with no value
    values = {
        f: value
        for f in spec.model_fields_set
        if f != "nodes" and (value := getattr(spec, f)) is not None
    }
    values.update({f: getattr(cluster, f) for f in cluster.model_fields_set})
    return ClusterSpec(**values)


def design_origins(
    cluster: ClusterSpec, design: Path | None, catalogue: Catalogue
) -> tuple[ClusterSpec, dict[str, str], dict[str, str]]:
    """For nccl-check and calibrate with ``--design FILE``, the file read once: its node shape
    (:func:`_node_shape`);
    where each field the file gives (and no option overrides) came from, with ``nodes`` the
    file's node count, which a check replaces by the log's; and the ``names`` to render marks
    with, the file's keys for those fields. Its values had been listed as '[flag]: given by
    the caller', and the advice for a system the log contradicts said 're-run without
    --system' to a caller who gave none (a review)."""
    if design is None:
        return cluster, {}, as_typed(FIELD_FLAGS)
    from ibcalc.design.schema import DESIGN_KEYS

    spec, stated = _design_spec(design, catalogue)
    where = design.name
    # what the file states: its node fields, and the rest only where written (a design with no
    # fabric section had been listed as stating 'oversubscription = 1.0' (a review)
    fields = [
        f
        for f in type(spec).model_fields  # declaration order: a set's changed from run to run
        if f in spec.model_fields_set
        and f != "nodes"
        and (f in _NODE_FIELDS or f in stated)
        and getattr(spec, f) is not None
        and f not in cluster.model_fields_set
    ]
    keys = {f: stated.get(f) or DESIGN_KEYS.get(f, f) for f in fields}
    origins = {f: f"from the design file {where} ({keys[f]})" for f in fields}
    if spec.nodes is not None and "nodes" not in cluster.model_fields_set:
        # a node count given with --nodes is the flag's (it had been tagged the design's, with
        # the design's unused count as its evidence: review DF)
        origins["nodes"] = str(spec.nodes)
    names = {**as_typed(FIELD_FLAGS), **{f: f"{where}'s {keys[f]}" for f in fields}}
    return _node_shape(cluster, spec), origins, names
