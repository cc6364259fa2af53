"""The cluster a measured run ran on, worked out from its log: node rules and network inference.

:func:`infer_spec` (and :func:`infer_cluster`, which also returns what the check needs beyond the
spec) read one parsed :class:`~ibcalc.logs.records.Run` and NCCL's debug output around it
(docs/nccl-check.md, "What is inferred"):

The cluster
    Nodes and ranks per node from the device list; the node type from the GPU name by the table
    :data:`NODE_RULES` (each rule with the evidence it rests on); the network from NCCL's own
    output when the log has it (``Using network IB``, the aws-ofi-nccl platform and provider, the
    NICs carrying channels, see :mod:`ibcalc.logs.env`). Flags (a :class:`ClusterSpec`) override
    every inferred value. Each value that does not come from a flag is listed as an
    :class:`~ibcalc.logs.results.Assumption` with its evidence; a network taken from a preset
    because the log does not show one is said to be assumed, and diagnoses that rest on it get
    low confidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ibcalc.catalogue.load import find_link, find_system
from ibcalc.catalogue.models import Catalogue, System
from ibcalc.cluster.resolve import DEFAULT_NODES, ClusterSpec, ResolvedCluster, resolve_cluster
from ibcalc.errors import ClusterError
from ibcalc.logs.env import LogEnvironment
from ibcalc.logs.records import Run
from ibcalc.logs.results import GIVEN, Assumption
from ibcalc.units import plural

__all__ = [
    "NODE_RULES",
    "Inferred",
    "NodeRule",
    "gpus_per_process_said",
    "gpus_per_process_words",
    "infer_cluster",
    "infer_spec",
    "log_preset",
    "match_rule",
    "overridden_gpus_per_process",
    "resolve_log_cluster",
    "with_header_gpus_per_process",
]

# ------------------------------------------------------------------------------- node rules


@dataclass(frozen=True)
class NodeRule:
    """A GPU name (as nccl-tests prints it) -> the system preset whose node it most likely is.

    ``ranks_per_node`` restricts the rule to runs with that many ranks per node (None: any);
    ``efa`` names the preset to use instead when the log shows AWS EFA (aws-ofi-nccl); ``inter``
    replaces the preset's scale-out link (the GPU's node has other NICs than the preset's).
    """

    pattern: re.Pattern[str]
    system: str
    evidence: str
    ranks_per_node: int | None = None
    efa: str | None = None
    inter: str | None = None


def _rule(
    pattern: str,
    system: str,
    evidence: str,
    *,
    rpn: int | None = None,
    efa: str | None = None,
    inter: str | None = None,
) -> NodeRule:
    return NodeRule(
        re.compile(pattern, re.IGNORECASE),
        system,
        evidence,
        ranks_per_node=rpn,
        efa=efa,
        inter=inter,
    )


#: First match wins. Each rule names the evidence that a GPU name means that node.
NODE_RULES: tuple[NodeRule, ...] = (
    _rule(
        r"MI355X|AMD Radeon Graphics",
        "mi355x-8",
        "rccl-tests prints 'AMD Radeon Graphics' for MI355X (gfx950) in the published runs of "
        "prasad-nair-amd/alibaba, whose ib_write_bw names the part 'AMD Instinct MI355X'; the "
        "name is generic to ROCm, so another AMD GPU is possible",
    ),
    _rule(r"MI300X", "mi300x-8", "'MI300X' names the AMD Instinct MI300X 8-GPU platform"),
    _rule(
        r"MI325X",
        "mi325x-8",
        "'MI325X' names the AMD Instinct MI325X 8-GPU platform: the MI300X's 7 xGMI links per GPU "
        "(catalogue xgmi-mi300x, alias xgmi-mi325x) with 256 GB per GPU",
    ),
    _rule(
        r"GB200",
        "gb200-nvl72",
        "'GB200' is the B200 GPU of a Grace Blackwell superchip: 4 per compute tray, the trays "
        "of an NVL72 rack in one NVLink domain (the gb200-nvl72 preset)",
    ),
    _rule(
        r"GB300",
        "gb200-nvl72",
        "'GB300' is the B300 GPU of a Grace Blackwell Ultra superchip, in NVL72 racks with GB200's "
        "NVLink 5 (the gb200-nvl72 preset); its ConnectX-8 NICs run XDR, 800 Gb/s, where the "
        "preset's run NDR",
        inter="xdr",
    ),
    _rule(r"\bB200\b", "dgx-b200", "'B200' in 8-GPU nodes is an HGX/DGX B200 board"),
    _rule(
        r"\bB300\b",
        "dgx-b300",
        "'B300' (nvidia-smi: 'NVIDIA B300 SXM6 AC') in 8-GPU nodes is an HGX/DGX B300 board: "
        "NVLink 5 as B200, one 800 Gb/s NIC per GPU",
    ),
    _rule(
        r"GH200",
        "alps-gh200",
        "GH200 nodes of 4 (HPE Cray EX quad-GH200 blades, joined by NVLink between the 4 "
        "modules: the alps-gh200 preset); its Slingshot network is an assumption",
    ),
    _rule(
        r"H200 NVL|H800 PCIe",
        "h100-pcie-8",
        "'H200 NVL'/'H800 PCIe' are PCIe cards: NVLink bridges join 2 or 4 of them at most, so a "
        "collective over a node of 8 crosses PCIe Gen5 (the h100-pcie-8 preset)",
    ),
    _rule(r"H200", "hgx-h200", "'H200' in 8-GPU nodes is an HGX H200 board", efa="aws-p5en"),
    _rule(
        r"H800",
        "hgx-h800",
        "'H800' is the export H100 SXM with 8 NVLinks (200 GB/s per direction), on an HGX board "
        "with NVSwitch; its network is the preset's assumption",
    ),
    _rule(
        r"\bH20\b",
        "hgx-h20",
        "'H20' is the export Hopper with the H100's 18 NVLink 4 links, on an HGX board with "
        "NVSwitch; its network is the preset's assumption",
    ),
    _rule(
        r"H100 (?:80GB HBM3|SXM)|H100-SXM",
        "dgx-h100",
        "'H100 80GB HBM3' is the SXM5 part, shipped only on HGX boards with NVSwitch (8 GPUs)",
        rpn=8,
        efa="aws-p5",
    ),
    _rule(
        r"^(?:NVIDIA )?H100$|H100 (?:80GB HBM3|SXM)|H100-SXM",
        "snellius-h100",
        "4 H100 SXM per node are joined by NVLink without NVSwitch (the 4-GPU HGX board, as on "
        "Snellius, whose GPUs print as 'NVIDIA H100')",
        rpn=4,
    ),
    _rule(r"^(?:NVIDIA )?H100$", "dgx-h100", "'NVIDIA H100' in 8-GPU nodes: an HGX H100 board"),
    _rule(
        r"H100 (?:PCIe|NVL)",
        "h100-pcie-nvl-pair",
        "'H100 PCIe'/'H100 NVL' in pairs joined by an NVLink bridge",
        rpn=2,
    ),
    _rule(
        r"H100 (?:PCIe|NVL)",
        "h100-pcie-8",
        "'H100 PCIe'/'H100 NVL' cards: NVLink bridges join pairs at most, so a collective over "
        "more than two crosses PCIe Gen5",
    ),
    _rule(
        r"A800-SXM4",
        "hgx-a800",
        "'A800-SXM4' is the export A100 SXM with 8 NVLinks (200 GB/s per direction), on an HGX "
        "board with NVSwitch; its network is the preset's assumption",
    ),
    _rule(
        r"A100-SXM4-80GB",
        "dgx-a100",
        "'A100-SXM4-80GB' is the SXM part, shipped only on HGX/DGX A100 boards (8 GPUs, NVSwitch)",
        efa="aws-p4de",
    ),
    _rule(
        r"A100-SXM4-40GB",
        "dgx-a100",
        "'A100-SXM4-40GB' is the SXM part, shipped only on HGX/DGX A100 boards (8 GPUs, NVSwitch)",
        efa="aws-p4d",
    ),
    _rule(
        r"A100[- ]PCI-?E|A100 80GB PCIe",
        "a100-pcie-pair",
        "'A100-PCIE' / 'A100 80GB PCIe' cards talk over PCIe Gen4",
    ),
    _rule(r"RTX 5090", "rtx5090-8", "'GeForce RTX 5090' cards talk over PCIe Gen5"),
    _rule(r"RTX 2080 Ti", "rtx2080ti-2", "'GeForce RTX 2080 Ti' cards without peer-to-peer"),
    _rule(r"L40S", "l40s-pcie", "'L40S' cards talk over PCIe Gen4 (no NVLink)"),
    _rule(
        r"\bL40\b|\bL4\b|\bA40\b|\bA30\b|\bA10G?\b|RTX A6000|RTX 6000 Ada|A800 .*PCIe|A800-PCIE",
        "pcie-8gpu",
        "a data-centre or workstation PCIe Gen4 card (no NVSwitch; an NVLink bridge joins two "
        "cards at most): the generic PCIe Gen4 node",
    ),
    _rule(r"V100-SXM2", "dgx-1v", "'V100-SXM2' in 8-GPU nodes: the DGX-1 hybrid cube mesh"),
)


#: aws-ofi-nccl's "Running on <platform> platform" -> the preset (aws-ofi-nccl sets the topology
#: file by it, so the log states the instance type).
_PLATFORMS = {
    "p5.48xlarge": "aws-p5",
    "p5e.48xlarge": "aws-p5e",
    "p5en.48xlarge": "aws-p5en",
    "p4d": "aws-p4d",
    "p4d.24xlarge": "aws-p4d",
    "p4de.24xlarge": "aws-p4de",
}


#: The node an AMD GPU no rule knows is judged on: AMD's 8-GPU OAM platform, an xGMI mesh
#: without NVLink SHARP, rather than the resolver's NVIDIA default.
AMD_STAND_IN = "mi300x-8"
_AMD_NAME = re.compile(r"\bAMD\b|Instinct|Radeon|\bgfx\d", re.IGNORECASE)


def _amd_gpu(run: Run) -> str | None:
    """Why ``run`` is on AMD GPUs (its GPU name, or the rccl-tests library), or None."""
    if run.gpu_model and _AMD_NAME.search(run.gpu_model):
        return f"{run.gpu_model!r} is an AMD GPU"
    if run.library == "rccl":
        return "the log is rccl-tests', on AMD GPUs"
    return None


def platform_preset(env: LogEnvironment | None) -> str | None:
    """The preset of the instance aws-ofi-nccl names (``Running on p5.48xlarge platform``),
    or None."""
    if env is None or env.platform is None:
        return None
    return _PLATFORMS.get(env.platform.value.lower())


def log_preset(
    run: Run, env: LogEnvironment | None, given: Mapping[str, Any] | None = None
) -> str | None:
    """The preset a log gives its node, as :func:`infer_cluster` takes it: the platform
    aws-ofi-nccl names, else the GPU's node rule (its EFA instance where the log shows EFA's
    provider) for the ranks per node the inference reads (:func:`_rule_ranks_per_node`, with
    the caller's ``given`` fields), else None."""
    named = platform_preset(env)
    if named is not None or not run.gpu_model:
        return named
    given = given or {}
    nccl = _nccl_recount(run, env, given) if env is not None else None
    rule = match_rule(run.gpu_model, _rule_ranks_per_node(run, nccl, given))
    if rule is None:
        return None
    efa = env is not None and env.provider is not None and env.provider.value == "efa"
    return rule.efa if efa and rule.efa else rule.system


def match_rule(gpu: str, rpn: int | None) -> NodeRule | None:
    """The first node rule for GPU name ``gpu`` with ``rpn`` ranks per host (None: any rule
    without a count, or one of 8), else None."""
    name = gpu.strip()
    for rule in NODE_RULES:
        if rule.ranks_per_node is not None and rpn is not None and rule.ranks_per_node != rpn:
            continue
        if rule.ranks_per_node is not None and rpn is None and rule.ranks_per_node != 8:
            continue
        if rule.pattern.search(name):
            return rule
    return None


# ------------------------------------------------------------------------------- inference


@dataclass(frozen=True)
class Inferred:
    """What :func:`infer_cluster` works out: the spec, the assumptions behind it, and whether
    the network and its NIC count are known (not only from a preset or a default). What the
    log's ``NCCL_ALGO`` and ``NCCL_PROTO`` allow is the checker's (:mod:`ibcalc.logs.selection`)."""

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    spec: ClusterSpec
    assumptions: list[Assumption]
    network_known: bool
    nics_known: bool


def infer_spec(
    run: Run,
    catalogue: Catalogue,
    *,
    env: LogEnvironment | None = None,
    flags: ClusterSpec | None = None,
    origins: Mapping[str, str] | None = None,
) -> tuple[ClusterSpec, list[Assumption], bool]:
    """The cluster a run ran on, from the log and the caller's flags (``origins``: where fields
    of ``flags`` came from when not from the caller, as :func:`infer_cluster`'s).

    Returns the spec, the assumptions behind each value (flags included, marked ``flag``) and
    whether the network is known (from a flag or from NCCL's output, not only from a preset).
    """
    inferred = infer_cluster(
        run, catalogue, env or LogEnvironment(), flags, as_run=True, origins=origins
    )
    return inferred.spec, inferred.assumptions, inferred.network_known


def _given(flags: ClusterSpec | None) -> dict[str, Any]:
    if flags is None:
        return {}
    # in the spec's field order: a set's order had changed the listing from run to run
    return {k: v for k, v in flags.model_dump().items() if k in flags.model_fields_set}


def with_header_gpus_per_process(
    spec: ClusterSpec, run: Run, flags: ClusterSpec | None
) -> ClusterSpec:
    """``spec`` with the GPUs per process the log's header states (nGpus, nccl-tests ``-g``)
    unless the caller gave a count: the expectation then has that process's serial launches,
    as ``--gpus-per-process``'s help says. A count above the GPUs per node the caller gave is
    left to the rank check, which names those flags; above a count the log or a preset gave it
    is applied, for the cluster to refuse in the log's words (nGpus 8 on a 4-GPU node had been
    listed as the log's and priced as 1)."""
    stated = run.gpus_per_process
    given = flags is not None and "gpus_per_process" in flags.model_fields_set
    placed = flags is not None and "gpus_per_node" in flags.model_fields_set
    fits = spec.gpus_per_node is None or (stated or 1) <= spec.gpus_per_node
    if given or stated is None or stated <= 1:
        return spec
    if placed and not fits:
        ranks = (spec.nodes or 1) * (spec.gpus_per_node or 1)
        if run.ranks is not None and ranks != run.ranks:
            return spec  # another run than the log's: the rank check names the flags
        # the same ranks re-placed: priced as one GPU per process, the log's count had been
        # listed as applied (nGpus 8 with --gpus-per-node 4, a review's finding)
        raise ClusterError(
            f"{{gpus_per_node}} {spec.gpus_per_node} is fewer than {gpus_per_process_words(run)} "
            f"{stated}: one process drives GPUs of its own node only ({{gpus_per_process}} "
            "prices another count)",
            field="gpus_per_node",
            value=str(spec.gpus_per_node),
        )
    return spec.model_copy(update={"gpus_per_process": stated})


def _from_device_list(run: Run) -> bool:
    """Whether the log's GPUs per process come from its device list (no usable nGpus)."""
    return any(i.field == "gpus_per_process" for i in run.inferences)


def gpus_per_process_words(run: Run) -> str:
    """How a refusal names the GPUs per process the log gave: its header's nGpus, or its
    device list's ranks per process where it has no usable header count."""
    return "the log's ranks per process" if _from_device_list(run) else "the log's nGpus"


def gpus_per_process_said(run: Run) -> str:
    """Where the log states its GPUs per process: the header's nGpus, or (without that line)
    the device list's ranks per process (``run.gpus_per_process`` must be set)."""
    if _from_device_list(run):
        return f"the log's device list shows {run.gpus_per_process} ranks per process"
    return f"the log's header says nGpus {run.gpus_per_process}"


def overridden_gpus_per_process(run: Run, flags: ClusterSpec | None) -> int | None:
    """The GPUs per process the log's header states (nGpus, nccl-tests ``-g``) when the caller
    gave another count, which replaces it; None otherwise."""
    if flags is None or "gpus_per_process" not in flags.model_fields_set:
        return None
    stated = run.gpus_per_process
    return stated if stated is not None and stated != flags.gpus_per_process else None


#: Link families (data/links.yaml) each transport a log names can be: a --inter of another
#: family overrides what the log shows (and nccl-check's network_mismatch reads a libfabric
#: provider by it: logs/diagnose.py).
TRANSPORT_FAMILIES: dict[str, tuple[str, ...]] = {
    "ib": ("infiniband", "ethernet"),  # NCCL's verbs transport: InfiniBand or RoCE
    "efa": ("efa",),
    "cxi": ("slingshot",),
}


def _env_evidence(
    field: str, flags: ClusterSpec, env: LogEnvironment, catalogue: Catalogue | None
) -> str | None:
    """What NCCL's output says of a network field the caller's flag replaces, or None."""
    if field == "nics_per_node":
        if env.provider is not None and env.provider_nics is not None:
            if env.provider_nics != flags.nics_per_node:
                return (
                    f"'Selected Provider is {env.provider.value} (found {env.provider_nics} "
                    f"nics)', line {env.provider.line}"
                )
        elif env.network is not None and env.net_devices:
            count = len(env.net_devices)
            if count != flags.nics_per_node:
                return (
                    f"channels run over {plural(count, 'network device')}, first at line "
                    f"{env.net_devices_line}"
                )
    if field == "system" and flags.system and catalogue is not None:
        # a preset other than the instance aws-ofi-nccl names, or whose network is not the
        # transport the log shows (--system dgx-h100 on a p5 log had replaced its EFA with
        # NDR without a word, and calibrate had fitted EFA's latency as NDR's, review BF)
        platform, named = env.platform, platform_preset(env)
        if platform is not None and named is not None and named != flags.system:
            return (
                f"the log shows 'Running on {platform.value} platform', line {platform.line}: "
                f"the {named} preset"
            )
        system = find_system(catalogue, flags.system)
        if system.inter is not None and not flags.inter:
            return _transport_contradicted(find_link(catalogue, system.inter).family, env)
    if field == "inter" and flags.inter and catalogue is not None:
        return _transport_contradicted(find_link(catalogue, flags.inter).family, env)
    return None


def _transport_contradicted(family: str, env: LogEnvironment) -> str | None:
    """What the log says of its transport where a link of ``family`` cannot be it, or None."""
    for fact in (env.provider, env.network):
        if fact is None:
            continue
        families = TRANSPORT_FAMILIES.get(fact.value.lower())
        if families is not None and family not in families:
            said = (
                f"'Selected Provider is {fact.value}'"
                if fact is env.provider
                else f"'Using network {fact.value}'"
            )
            return f"the log shows {said}, line {fact.line}"
    return None


def _given_evidence(
    run: Run,
    field: str,
    flags: ClusterSpec | None,
    env: LogEnvironment | None = None,
    catalogue: Catalogue | None = None,
) -> str:
    """GIVEN, or GIVEN with what the log states when the flag replaces another value (the
    table lists those: `-N 2` on a log of one host ran on 2 nodes without a word)."""
    if flags is not None and env is not None:
        said_env = _env_evidence(field, flags, env, catalogue)
        if said_env is not None:
            return f"{GIVEN} ({said_env})"
    if field == "gpus_per_process":
        stated = overridden_gpus_per_process(run, flags)
        return GIVEN if stated is None else f"{GIVEN} ({gpus_per_process_said(run)})"
    logged = {
        "nodes": (run.nodes, "host", ""),
        "gpus_per_node": (run.ranks_per_node, "rank", " per host"),
    }
    if flags is not None and field in logged:
        value, noun, per = logged[field]
        if value is not None and value != getattr(flags, field):
            return f"{GIVEN} (the device list shows {plural(value, noun)}{per})"
    if field == "nvls" and flags is not None and flags.nvls and env is not None:
        said = env.nvls_unavailable
        if said is not None:
            return f"{GIVEN} (NCCL says '{said.value}', line {said.line})"
    named = flags is not None and platform_preset(env) == flags.system
    if field == "system" and flags is not None and flags.system and run.gpu_model and not named:
        # (the instance aws-ofi-nccl names is the given preset: the GPU's generic node is no
        # better a guess; --system aws-p5 on a p5 log had been told dgx-h100)
        rule = match_rule(run.gpu_model, flags.gpus_per_node or run.ranks_per_node)
        if rule is not None and rule.system != flags.system:
            return f"{GIVEN} (the log's GPU {run.gpu_model!r} suggests {rule.system})"
    return GIVEN


def _design_evidence(origin: str, given: str) -> str:
    """A design file's value's evidence: where in the file (``origin``), then, where it replaces
    what the log states, that (``given`` is a flag's evidence, "given by the caller (the log
    shows ...)"): "from the design file r.yaml (system); the log shows ..."."""
    said = given.removeprefix(GIVEN)
    if said.startswith(" (") and said.endswith(")"):
        return f"{origin}; {said[2:-1]}"
    return origin


def _has_nvls(system: System | None, catalogue: Catalogue) -> bool:
    """Whether a system preset is built with NVLink SHARP: one node of it, as the engine
    resolves it, runs NVLS (NVSwitch, an NVLS link, a Hopper or Blackwell GPU)."""
    if system is None or system.gpus_per_node < 2:
        return False
    try:
        node = resolve_cluster(catalogue, ClusterSpec(system=system.id, nodes=1)).topology.up
    except ClusterError:
        return False
    return node is not None and node.nvls_bw_Bps is not None


def infer_cluster(
    run: Run,
    catalogue: Catalogue,
    env: LogEnvironment,
    flags: ClusterSpec | None,
    *,
    as_run: bool = False,
    origins: Mapping[str, str] | None = None,
) -> Inferred:
    """The cluster a run ran on, with everything a check needs beyond the spec (see
    :class:`Inferred`); ``flags`` override every inferred value. A check judges a run against
    what its system should do, so NCCL's "NVLS multicast support is not available" on a system
    built with NVLS keeps NVLS expected; ``as_run`` (calibrate, which fits the run as it ran)
    takes the line as the run's configuration."""
    given = _given(flags)
    # a design file's values are the design's, not flags "given by the caller" (a review)
    origins = origins or {}
    # either says what the log states where the value replaces it (a design's NDR over a p5
    # log's EFA had been said as the design's alone, where --inter ndr named the log's
    # provider: review CO)
    notes: list[Assumption] = [
        Assumption(
            field=k,
            value=v,
            source="design" if k in origins else "flag",
            evidence=(
                _design_evidence(origins[k], _given_evidence(run, k, flags, env, catalogue))
                if k in origins
                else _given_evidence(run, k, flags, env, catalogue)
            ),
        )
        for k, v in given.items()
    ]
    values: dict[str, Any] = dict(given)

    def note(field: str, value: Any, source: Any, evidence: str) -> None:
        notes.append(Assumption(field=field, value=value, source=source, evidence=evidence))

    def log_evidence(field: str) -> str:
        for inf in run.inferences:
            if inf.field == field and inf.value is not None:
                return inf.evidence
        return "printed in the log"

    def no_node(why: str) -> str | None:
        """No node type: the links the caller gave make the node, else the default one (an
        AMD GPU's: :data:`AMD_STAND_IN`, returned)."""
        nodes = given.get("nodes") or run.nodes
        gpn = given.get("gpus_per_node") or run.ranks_per_node
        if gpn is None and nodes and run.ranks and run.ranks % nodes == 0:
            gpn = run.ranks // nodes  # -N 1 on a table of 4 ranks: 4 GPUs on the node
        shaped = gpn is not None
        if nodes is None and gpn and run.ranks:
            nodes = run.ranks // gpn if run.ranks % gpn == 0 else None
        one_node = nodes == 1
        if "intra" in given and shaped and ("inter" in given or one_node):
            # every link given, and the node's GPU count known (Kestrel's 16 x 4 H100 with
            # -g 4, --intra, --inter and --nics-per-node had still been judged 'against a
            # default node: give --system', which has no preset to give; a review). Without the
            # GPU count the node's shape is the default's, and said so (a review of the first
            # form, which took 8 x 8 for the links given)
            note(
                "system",
                None,
                "flag",
                f"{why}; no preset: the node is the links given, with a default host "
                "({host_pcie}, {host_cpu}) and GPU clock (docs/model.md#gpu-clock)",
            )
            return None
        amd = _amd_gpu(run)
        if amd is not None and "intra" not in given:
            # not the resolver's NVIDIA node: an MI250X run had been judged with NVLink SHARP
            # and told to check NCCL_NVLS_ENABLE and the fabric manager (review BF)
            note(
                "system",
                AMD_STAND_IN,
                "default",
                f"{why}; {amd}: the {AMD_STAND_IN} node stands in for it (xGMI, no NVLink "
                "SHARP), where the resolver's default node is NVIDIA's; give the node to judge it "
                "({system}, {gpus_per_node}, {intra})",
            )
            return AMD_STAND_IN
        note(
            "system",
            None,
            "default",
            f"{why}; the resolver's default node is used ({{system}}, {{gpus_per_node}}, "
            "{intra})",
        )
        return None

    # NCCL's own count ('nRanks 16 nNodes 2 localRanks 8') where hostnames disagree with it:
    # containers sharing one hostname list two machines' ranks under one name
    nccl = _nccl_recount(run, env, given)

    # node type: the platform aws-ofi-nccl names, else the GPU name
    efa = env.provider is not None and env.provider.value == "efa"
    if "system" not in given:
        system: str | None = None
        named = platform_preset(env)
        if env.platform is not None and named is not None:
            system = named
            note(
                "system",
                system,
                "environment",
                f"aws-ofi-nccl reports 'Running on {env.platform.value} platform' "
                f"(line {env.platform.line})",
            )
        elif run.gpu_model:
            rule = match_rule(run.gpu_model, _rule_ranks_per_node(run, nccl, given))
            if rule is not None:
                system = rule.efa if efa and rule.efa else rule.system
                why = rule.evidence
                if system != rule.system:
                    assert env.provider is not None
                    why += (
                        f"; the log shows AWS EFA ('Selected Provider is efa', line "
                        f"{env.provider.line}), so {system}"
                    )
                note("system", system, "log", f"GPU {run.gpu_model!r}: {why}")
                if rule.inter is not None and "inter" not in given:
                    values["inter"] = rule.inter
                    note(
                        "inter",
                        rule.inter,
                        "log",
                        f"GPU {run.gpu_model!r}: the node's NICs are {rule.inter}, not "
                        f"{system}'s ({{inter}})",
                    )
            else:
                system = no_node(f"GPU {run.gpu_model!r} matches no node rule")
        else:
            system = no_node("the log names no GPU (no device list)")
        if system is not None:
            find_system(catalogue, system)
            values["system"] = system

    system_obj = find_system(catalogue, values["system"]) if values.get("system") else None

    # placement: ranks per node and nodes from the device list
    ranks = run.ranks
    # NCCL's own count wins over hostnames that disagree with it
    recount = nccl is not None
    if nccl is not None:
        said = f"NCCL's communicator line says nNodes {nccl[0]} localRanks {nccl[1]} (line " + (
            f"{env.nccl_nodes_line}), where the device list's hostnames count {run.nodes} "
            "(a hostname shared by several machines)"
            if run.nodes is not None
            else f"{env.nccl_nodes_line}); the log has no device list"
        )
        values["gpus_per_node"], values["nodes"] = nccl[1], nccl[0]
        note("gpus_per_node", nccl[1], "environment", said)
        note("nodes", nccl[0], "environment", said)
    if "gpus_per_node" not in given and not recount:
        if run.ranks_per_node is not None:
            values["gpus_per_node"] = run.ranks_per_node
            note("gpus_per_node", run.ranks_per_node, "log", log_evidence("ranks_per_node"))
        elif "nodes" in given and ranks and ranks % given["nodes"] == 0:
            # a results table alone (no device list) with the node count given: its ranks
            # over those nodes, not the default node's 8 (4 ranks with -N 1 had been refused
            # as 1 x 8; a review)
            values["gpus_per_node"] = ranks // given["nodes"]
            note(
                "gpus_per_node",
                values["gpus_per_node"],
                "log",
                f"the log's {ranks} ranks over the {plural(given['nodes'], 'node')} given "
                "({nodes})",
            )
        elif system_obj is not None:
            # a complete device list whose hosts hold different counts is not elided (it had
            # been said to be, beside a note listing them)
            listed = "elided" if ranks or run.devices_listed else "absent"
            why = (
                "ranks per host differ in the device list"
                if run.hosts and ranks
                else f"ranks per node not in the log (device list {listed})"
            )
            note(
                "gpus_per_node",
                system_obj.gpus_per_node,
                "preset",
                f"{why}; {system_obj.id} has {system_obj.gpus_per_node} ({{gpus_per_node}})",
            )
    gpn = values.get("gpus_per_node") or (system_obj.gpus_per_node if system_obj else 8)
    uneven = bool(run.hosts) and run.ranks_per_node is None
    if "nodes" not in given and not recount:
        if run.nodes is not None and not (
            uneven
            and "gpus_per_node" not in given
            and ranks is not None
            and run.nodes * gpn != ranks
            and ranks % gpn == 0
        ):
            values["nodes"] = run.nodes
            # a design's node count is the cluster's, not the run's: said where it differs
            judged = "calibrate fits" if as_run else "a check judges"
            replaced = (
                f"; the design's {origins['nodes']} nodes not used: {judged} the run as it ran"
                if origins.get("nodes", str(run.nodes)) != str(run.nodes)
                else ""
            )
            note("nodes", run.nodes, "log", log_evidence("nodes") + replaced)
        elif ranks is not None and ranks % gpn == 0 and ranks >= gpn:
            values["nodes"] = ranks // gpn
            # the GPUs per node are the caller's, the log's, a preset's or the default node's
            per_node = (
                "flag"
                if "gpus_per_node" in given
                else "log"
                if "gpus_per_node" in values
                else "preset"
                if system_obj is not None
                else "default"
            )
            whose = {
                "flag": ", as given with --gpus-per-node",
                "log": "",
                "preset": f" ({system_obj.id}'s, not the log's)" if system_obj else "",
                "default": " (the default node's, not the log's)",
            }[per_node]
            note(
                "nodes",
                ranks // gpn,
                per_node,
                f"{ranks} ranks ({log_evidence('ranks')}) at {gpn} per node{whose}"
                + (
                    f"; the device list's {run.nodes} hosts hold different counts, which ibcalc "
                    "does not model: judged as equal nodes of the preset's size"
                    if uneven and run.nodes is not None
                    else ""
                )
                + " ({nodes})",
            )
    single = system_obj is not None and not system_obj.nics_per_node  # one node, no NIC
    # the node count and the GPUs per node, each from the log, a flag, a design or a preset
    # (-N 1 alone had judged a 2-GPU table as 1 x 8 and failed it: review DE)
    shaped = "nodes" in values and ("gpus_per_node" in values or system_obj is not None)
    if ranks is None and not recount and not shaped and not single:
        # a sendrecv, broadcast or reduce table alone (busbw = algbw, no device list) gives no
        # rank count: the expectation's node count is the default's, said as such, and no gate
        # judges it (a healthy 2-GPU sendrecv had failed --min-efficiency as 2 x 8: review DC;
        # a preset or the GPUs per node alone leave the node count a guess: review DD)
        nodes = values.get("nodes") or DEFAULT_NODES  # the resolver's default node count
        # what is missing: the GPUs per node where the nodes are known (-N alone had been told
        # to give --nodes: review DF)
        give = (
            "{gpus_per_node} or {system}"
            if "nodes" in values
            else "{nodes} (with {gpus_per_node} or {system})"
        )
        note(
            "ranks",
            nodes * gpn,
            "default",
            f"the log does not give the rank count (no device list, and its busbw equals its "
            f"algbw): {plural(nodes, 'node')} x {gpn} GPUs assumed; give {give} to judge it",
        )
    said_off = env.setting("NCCL_NVLS_ENABLE") == "0"
    if "nvls" not in given and env.nvls_unavailable is not None and not said_off:
        said = f"NCCL says '{env.nvls_unavailable.value}' (line {env.nvls_unavailable.line})"
        if _has_nvls(system_obj, catalogue) and not as_run:
            # a system built with NVLink SHARP that NCCL cannot use is the fault, not the
            # expectation: NVLS off is diagnosed against the system's own figures
            assert system_obj is not None
            note(
                "nvls",
                True,
                "preset",
                f"{said}, but {system_obj.id} has NVLink SHARP: expected with it, and a run "
                "without it is diagnosed (the fabric manager, IMEX channels or the driver)",
            )
        else:
            values["nvls"] = False
            note("nvls", False, "environment", said)
    if "nvls" not in given and said_off:
        fact = env.settings["NCCL_NVLS_ENABLE"]
        values["nvls"] = False
        note("nvls", False, "environment", f"NCCL_NVLS_ENABLE=0 (line {fact.line})")

    # the network
    multi = (values.get("nodes") or 1) > 1 or (run.nodes or 1) > 1
    domain_evidence = _one_node_domains(
        env, system_obj, gpn, multi=multi, total=(values.get("nodes") or run.nodes or 1) * gpn
    )
    if "scale_up_domain" not in given and domain_evidence is not None:
        values["scale_up_domain"] = gpn
        note("scale_up_domain", gpn, "environment", domain_evidence)
    network_known = nics_known = not multi
    if multi:
        network_known, nics_known = _infer_network(
            env, values, given, system_obj=system_obj, catalogue=catalogue, note=note
        )

    return Inferred(ClusterSpec(**values), notes, network_known, nics_known)


def _rule_ranks_per_node(
    run: Any, nccl: tuple[int, int] | None, given: Mapping[str, Any]
) -> int | None:
    """The ranks per node a GPU's node rule is matched with: a given ``gpus_per_node``, else
    NCCL's own count (:func:`_nccl_recount`), else the device list's."""
    rpn: int | None = given.get("gpus_per_node") or (
        nccl[1] if nccl is not None else run.ranks_per_node
    )
    return rpn


def _nccl_recount(
    run: Any, env: LogEnvironment, given: Mapping[str, Any]
) -> tuple[int, int] | None:
    """NCCL's (nodes, ranks per node) where its communicator line accounts for every rank and
    the device list's hostnames disagree with it or are missing (neither given by a flag), else
    None. A log stripped of its ``#`` lines (2 x 4 H100, 'nNodes 2 localRanks 4') had been read
    as one node of 8 GPUs, and its NVLink called faulty."""
    nccl = env.nccl_nodes
    if (
        nccl is None
        or run.ranks is None
        or nccl[0] * nccl[1] != run.ranks
        or nccl[0] == run.nodes
        or (run.nodes is None and run.ranks_per_node is not None)
        or "nodes" in given
        or "gpus_per_node" in given
    ):
        return None
    return nccl


def _one_node_domains(
    env: LogEnvironment, system: Any, gpn: int, *, multi: bool, total: int
) -> str | None:
    """Why a preset's NVLink domain across nodes (GB200 NVL72) did not join this run's nodes,
    or None: NCCL's ``MNNVL 0``, else (no such line) channels over the network between nodes
    whose GPUs would fit one domain."""
    if (
        system is None
        or not multi
        or system.scale_up_domain <= system.gpus_per_node
        or gpn != system.gpus_per_node  # a resized node is one node per domain anyway
    ):
        return None
    domain = f"{system.id}'s NVLink domain of {system.scale_up_domain} GPUs"
    if env.mnnvl is not None:
        if env.mnnvl.value != "0":
            return None
        return (
            f"NCCL reports 'MNNVL 0' (line {env.mnnvl.line}): no multi-node NVLink, so "
            f"{domain} does not join the nodes; one node per domain ({{scale_up_domain}})"
        )
    if total <= system.scale_up_domain and env.net_devices:
        return (
            f"NCCL's channels join the nodes over the network (NET/, first at line "
            f"{env.net_devices_line}), not over {domain}: one node per domain "
            "({scale_up_domain})"
        )
    return None


def _infer_network(
    env: LogEnvironment,
    values: dict[str, Any],
    given: Mapping[str, Any],
    *,
    system_obj: Any,
    catalogue: Catalogue,
    note: Callable[[str, Any, Any, str], None],
) -> tuple[bool, bool]:
    """Fill the network fields from NCCL's output; return whether the network, and its NIC
    count, are known (from a flag or NCCL's output, not only from a preset or a default)."""
    known = "inter" in given or "system" in given
    platform = platform_preset(env) is not None
    nics_known = "nics_per_node" in given or "system" in given or platform
    # a node rule's NICs (GB300's XDR on the GB200 preset) stand in for the preset's
    rule_inter = values.get("inter") if "inter" not in given else None
    preset_inter = values.get("inter") or (system_obj.inter if system_obj is not None else None)
    # a flag that names a network the log's transport cannot be (--system dgx-h100 on an EFA
    # log): the log's NIC count is of the other transport, not of the flag's (it had joined
    # 32 EFA devices to the preset's NDR: '32 x ndr per node', review BF)
    replaced = (
        preset_inter is not None
        and ("inter" in given or "system" in given)
        and _transport_contradicted(find_link(catalogue, preset_inter).family, env) is not None
    )
    if "nics_per_node" not in given and not replaced:
        nics_known = nics_known or env.provider_nics is not None or bool(env.net_devices)
        # the instance type aws-ofi-nccl names fixes the NIC count: fewer found is a fault to
        # find (a p5.48xlarge log edited to 'found 16 nics' and slowed 1.38x read 'ok' against
        # 16 NICs, where the same timings against 32 name half the NICs missing)
        platform_nics = system_obj.nics_per_node if platform and system_obj is not None else None
        if (
            env.provider_nics is not None
            and env.provider is not None
            and platform_nics is not None
            and env.provider_nics < platform_nics
        ):
            assert env.platform is not None  # platform_nics comes from it
            values["nics_per_node"] = platform_nics
            note(
                "nics_per_node",
                platform_nics,
                "environment",
                f"a {env.platform.value} has {platform_nics} (line {env.platform.line}); "
                f"aws-ofi-nccl found {env.provider_nics} ('Selected Provider is "
                f"{env.provider.value} (found {env.provider_nics} nics)', line "
                f"{env.provider.line}): the expectation keeps {platform_nics}, and a run on "
                "fewer is a fault to look for",
            )
        elif env.provider_nics is not None and env.provider is not None:
            values["nics_per_node"] = env.provider_nics
            note(
                "nics_per_node",
                env.provider_nics,
                "environment",
                f"'Selected Provider is {env.provider.value} (found {env.provider_nics} nics)' "
                f"(line {env.provider.line})",
            )
        elif len(env.net_devices) >= 1 and env.network is not None:
            count = len(env.net_devices)
            values["nics_per_node"] = count
            devices = ", ".join(str(d) for d in env.net_devices)
            note(
                "nics_per_node",
                count,
                "environment",
                f"channels run over {count} network device{'s' if count > 1 else ''} "
                f"(NET/{env.network.value}/{devices}, first at line {env.net_devices_line})",
            )
    if known or platform:  # a platform names the instance type, so its preset's network
        return True, nics_known
    if env.network is not None:
        kind = env.network.value
        if env.socket_network is not None:
            note(
                "inter",
                None,
                "environment",
                f"NCCL uses its TCP socket transport ('Using network Socket', line "
                f"{env.network.line}); no catalogue link models it, so the expectation uses "
                f"{preset_inter or 'the default link'} ({{inter}})",
            )
            return False, nics_known
        family = None
        if preset_inter is not None:
            family = find_link(catalogue, preset_inter).family
        layer = _channel_layer(env)
        wanted = {"IB": "infiniband", "RoCE": "ethernet"}.get(layer or "")
        if (
            kind.upper() == "IB"
            and family in ("infiniband", "ethernet")
            and wanted in (None, family)
        ):
            if rule_inter is None:  # a node rule's NICs are noted with their reason already
                note(
                    "inter",
                    preset_inter,
                    "environment",
                    f"NCCL uses verbs ('Using network IB', line {env.network.line}); the link "
                    f"speed is {preset_inter}'s, from the preset ({{inter}})",
                )
            return True, nics_known
        if env.provider is not None and env.provider.value == "efa" and family == "efa":
            return True, nics_known
        by_host = (
            _verbs_link_of_host(catalogue, system_obj, wanted or "infiniband")
            if preset_inter is None or wanted not in (None, family)
            else None
        )
        if kind.upper() == "IB" and by_host is not None:
            values["inter"] = by_host.id
            port = "InfiniBand" if by_host.family == "infiniband" else "RoCE"
            why = (
                f"{system_obj.id} names no NIC"
                if preset_inter is None
                else f"its channels run on {layer} ports (line {env.port_layers_line}), not "
                f"{system_obj.id}'s {preset_inter}"
            )
            note(
                "inter",
                by_host.id,
                "environment",
                f"NCCL uses verbs ('Using network IB', line {env.network.line}) and {why}: "
                f"{by_host.id}, the {port} port built for the host's {system_obj.host_pcie} "
                "(catalogue pcie_host), is assumed ({inter})",
            )
            return False, nics_known
    if preset_inter is not None and rule_inter is None:
        note(
            "inter",
            preset_inter,
            "preset",
            f"the log does not show the network; {preset_inter}"
            + ("" if nics_known else f", {system_obj.nics_per_node} per node,")
            + f" assumed from the {system_obj.id} preset ({{inter}}, {{nics_per_node}}, "
            "{system})",
        )
    return False, nics_known


def _channel_layer(env: LogEnvironment) -> str | None:
    """``IB`` or ``RoCE`` when every port NCCL's network channels use has that link layer in its
    ``NET/IB : Using`` list; None when the log does not say, or they differ."""
    layers = {env.port_layers.get(device) for device in env.net_devices}
    if len(layers) != 1:
        return None
    return layers.pop()


def _verbs_link_of_host(catalogue: Catalogue, system_obj: Any, family: str) -> Any:
    """The fastest verbs link of ``family`` (``infiniband``, or ``ethernet`` for RoCE) whose
    ``pcie_host`` is the preset's host PCIe generation (NDR or RoCE 400G on a PCIe Gen5 host,
    HDR or RoCE 200G on Gen4), or None: the guess for a verbs network on a preset that names no
    NIC, or names one of the other link layer than the log's ports."""
    if system_obj is None or system_obj.host_pcie is None:
        return None
    fits = [
        link
        for link in catalogue.links
        if link.family == family
        and link.transport == "verbs"
        and link.pcie_host == system_obj.host_pcie
    ]
    return max(fits, key=lambda link: link.per_direction_Bps, default=None)


def _socket_evidence(env: LogEnvironment | None) -> str | None:
    """Where the log shows NCCL on its TCP socket transport ('Using network Socket', or
    ``NCCL_IB_DISABLE=1`` with no other network named), as words with the line, else None."""
    if env is None:
        return None
    if (socket := env.socket_network) is not None:
        return f"'Using network {socket.value}' on line {socket.line}"
    if env.network is not None or (disabled := env.ib_disabled) is None:
        return None  # another network named, or verbs not turned off
    return f"NCCL_IB_DISABLE={disabled.value} on line {disabled.line}"


def resolve_log_cluster(
    catalogue: Catalogue,
    spec: ClusterSpec,
    source: str,
    *,
    gpus_said: str | None = None,
    env: LogEnvironment | None = None,
) -> ResolvedCluster:
    """:func:`~ibcalc.cluster.resolve.resolve_cluster` for the run of the log ``source``: a
    refusal names the log, as :func:`check_rank_count`'s does (with several logs, flags that
    suit one may not suit another), and with ``gpus_said`` (the GPUs per process came from the
    log, no flag: :func:`gpus_per_process_words`) names that value in those words: 'nGpus 3'
    had been refused as '--gpus-per-process 3', a flag nobody gave. Nodes of a preset with no
    NIC that the log (``env``) shows joined by NCCL's TCP sockets are refused as such: no
    catalogue link is that transport, and '--inter' would price another (sweep 27, two L40S
    hosts with NCCL_IB_DISABLE=1, had been told to give --inter and --nics-per-node)."""
    sockets = _socket_evidence(env)
    if sockets is not None and spec.system is not None and spec.inter is None:
        system = find_system(catalogue, spec.system)
        if system.nics_per_node == 0 and (spec.nodes or 1) > 1:
            prefix = f"{source}: " if source else ""
            raise ClusterError(
                f"{prefix}{spec.nodes} {system.id} nodes joined by NCCL's TCP socket transport "
                f"(the log's {sockets}), which no catalogue link models: the run cannot be "
                "priced",
                field="inter",
            )
    try:
        return resolve_cluster(catalogue, spec)
    except ClusterError as exc:
        template = exc.template
        if gpus_said is not None:
            template = template.replace("{gpus_per_process}", gpus_said)
        if not source and template == exc.template:
            raise
        prefix = f"{source}: " if source else ""
        raise ClusterError(f"{prefix}{template}", field=exc.field) from None


def check_rank_count(
    ranks: int, nodes: int, gpus_per_node: int, run_ranks: int | None, source: str
) -> None:
    """Refuse a cluster whose rank count is not the log's: the flags (``--nodes``, ``-g``) or a
    design describe another run than the one measured (nccl-check and calibrate alike)."""
    if run_ranks is not None and ranks != run_ranks:
        raise ClusterError(
            f"{source + ': ' if source else ''}"
            f"the cluster has {plural(nodes, 'node')} x {plural(gpus_per_node, 'GPU')} = "
            f"{ranks} ranks, but the log ran {run_ranks} ranks ({{nodes}}, {{gpus_per_node}})",
            field="nodes",
        )
