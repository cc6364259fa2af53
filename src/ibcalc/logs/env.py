"""What the NCCL debug output around a run says about how it ran: network, GPUDirect, settings.

The parser (:mod:`ibcalc.logs.parse`) skips NCCL ``INFO`` lines; the checker wants a few facts
from them, because they decide which expectation is fair and what a slow run means:

* the network transport NCCL chose: ``NCCL INFO Using network IB`` (verbs: InfiniBand or RoCE),
  ``Using network Socket`` (NCCL's TCP fallback), ``Using network AWS Libfabric`` or another
  plugin name (``NET/OFI`` lines are the aws-ofi-nccl plugin); ``Selected Provider is efa
  (found 32 nics)`` names the libfabric provider and its NIC count;
* the platform aws-ofi-nccl detects (``Running on p5.48xlarge platform``, ``Running on P4d
  platform``);
* whether the network channels use GPUDirect RDMA: channel lines ``via NET/IB/1/GDRDMA`` (or
  ``via NET/AWS Libfabric/0/GDRDMA``) do, ``via NET/IB/1`` without ``/GDRDMA`` do not; the
  distinct device numbers on those lines are the NICs that carry channels;
* NCCL settings the log shows, from ``NCCL_X set by environment to Y`` lines and from
  ``NCCL_X=Y`` on a command line (``mpirun -x NCCL_IB_DISABLE=1``, ``env NCCL_ALGO=ring``);
  a shell's ``export NCCL_X=Y`` and a batch directive's (``#SBATCH --export=ALL,NCCL_X=Y``)
  also reach every later run of the log, as they reach every later command of the shell or the
  job (:mod:`ibcalc.logs.shell`); a comment (``# export ...``) sets nothing;
* ``NVLS multicast support is not available`` (NCCL could not use NVLink SHARP);
* whether NCCL joined the nodes by multi-node NVLink: ``MNNVL 0`` or ``MNNVL 1`` at the end of
  its ``comm ... nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0`` line (NCCL 2.20.3 and
  2.22.3 print it in the published sweeps 06 and 10-14; older releases may not);
* the PCIe path between two GPUs in NCCL's topology dump (``GPU/81000 :GPU/81000
  (0/5000.000000/LOC) GPU/A1090 (2/24.000000/PHB) ...``): the farthest GPU-to-GPU path type
  it lists, in NCCL's order of distance (``NVL`` NVLink ... ``PIX`` one PCIe switch, ``PXB``
  several, ``PHB`` through a CPU's host bridge, ``SYS`` across CPU sockets; NCCL 2.30.7
  ``src/graph/topo.h``, the values of ``NCCL_P2P_LEVEL`` in NCCL's environment-variable
  documentation).

:func:`scan_environment` reads a line range of the raw text (a run's own lines and the lines
before it back to the previous run) and returns a :class:`LogEnvironment` whose every fact keeps
the line it came from. A pure function of text: no I/O.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ibcalc.listing import listed
from ibcalc.logs.shell import (
    MAX_LINE_CHARS,
    ShellExports,
    allexport_words,
    commands,
    is_binary,
    shell_words,
)

__all__ = ["EnvFact", "GpuPath", "LogEnvironment", "scan_environment"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

_USING_NETWORK = re.compile(r"NCCL INFO Using network\s+(.+?)\s*$")
_PROVIDER = re.compile(r"Selected Provider is (\w+)(?: \(found (\d+) nics\))?")
_PLATFORM = re.compile(r"Running on ([\w.-]+) platform")
#: NCCL's verbs port list, ``NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB``: each index's link
#: layer (InfiniBand or RoCE, the Ethernet one)
_NET_PORTS = re.compile(r"NET/IB : Using ")
_NET_PORT = re.compile(r"\[(\d+)\]([^\s\[\]]*)/(IB|RoCE)\b")
#: the host a line of NCCL's debug output comes from, ``gpu-002:41100:41160 [0] NCCL INFO``,
#: behind whatever launcher prefix (``[1,0]<stdout>:``, ``0: ``, ``[default0]:``) comes first
_DEBUG_HOST = re.compile(r"([\w.-]{1,64}):\d+:\d+ \[\d+\] NCCL INFO")
_CHANNEL_NET = re.compile(r"via NET/([^/\s]+(?: [^/\s]+)*)/(\d+)(?:\(\d+\))?(/GDRDMA)?")
#: the value runs to the next space: NCCL_ALGO=Ring,Tree is a list, and ^NVLS an exclusion
_SET_BY_ENV = re.compile(r"\b(NCCL_[A-Z0-9_]+) set by environment to (\S+)")
#: a plugin setting a variable for NCCL: aws-ofi-nccl's 'NET/OFI Setting NCCL_PROTO to "simple"'
_PLUGIN_SETS = re.compile(r"NET/OFI Setting (NCCL_[A-Z0-9_]+)(?: environment variable)? to (\S+)")
#: a quoted value is read whole, as the shell passes it (NCCL_ALGO="allreduce:ring;allgather:ring")
#: in a comma list (``--export=ALL,NCCL_ALGO=Ring,NCCL_PROTO=Simple,http_proxy=...``,
#: ``#PBS -v``) a comma before the next ``NAME=`` ends the value; one before anything else is
#: the value's own (``NCCL_ALGO=Ring,Tree``, ``NCCL_IB_HCA=mlx5_0,mlx5_1``)
_ASSIGNMENT = re.compile(
    r"(?:^|[\s\"',=])(NCCL_[A-Z0-9_]+)="
    r"(\"[^\"]*\"|'[^']*'|(?:[^\s\"',]|,(?![A-Za-z_][A-Za-z0-9_]*=))+)"
)
_SPACE = re.compile(r"\s")
_NAME_WORD = re.compile(r"NCCL_[A-Z0-9_]+")
#: MPICH's and Intel MPI's ``mpiexec -genv NAME VALUE`` (and ``-env``, one executable's): a
#: setting of that command, its value the next word
_GENV = re.compile(r"(?:^|\s)-g?env\s+(NCCL_[A-Z0-9_]+)\s+(\"[^\"]*\"|'[^']*'|[^\s\"']+)")
#: ``env``'s options that clear the environment (``env -i``, POSIX's ``env -``)
_ENV_CLEARS = re.compile(r"-|-[a-zA-Z]*i[a-zA-Z]*|--ignore-environment")
#: lines joined by a trailing backslash before a run's command that are read with it
_MAX_CONTINUED = 16
#: a line that is one ``NCCL_X=value`` and nothing else
_LONE_ASSIGNMENT = re.compile(r"(NCCL_[A-Z0-9_]+)=(\S*)\s*")
#: a launcher's prefix before a line's own text: mpirun's ``[1,0]<stdout>:``, ``srun -l``'s
#: ``0: ``, torchrun's ``[default0]:``
_LAUNCHER = re.compile(r"\s*(?:\[\d+,\d+\]<\w+>:|\d{1,6}: |\[default\d+\]:)?\s*")
#: a batch system's directive (Slurm, PBS, LSF, Grid Engine, Flux, Fujitsu PJM, Moab, Cobalt): a
#: line starting with '#' that is not a comment, and whose settings are the whole job's
_DIRECTIVE = re.compile(r"#(?:SBATCH|PBS|BSUB|\$|flux:|PJM|MSUB|COBALT)")
_NVLS_UNAVAILABLE = re.compile(r"NVLS multicast support is not available")
_GDR_STATE = re.compile(r"GPU Direct RDMA (Enabled|Disabled)")
_MNNVL = re.compile(r"\bnNodes \d+ localRanks \d+ localRank \d+ MNNVL ([01])\b")
#: NCCL's communicator line, ``nRanks 16 nNodes 2 localRanks 8``: its own count of the nodes
_NODES = re.compile(r"\bnRanks (\d+) nNodes (\d+) localRanks (\d+)\b")
_TOPO_GPU = re.compile(r"NCCL INFO GPU/([\w-]{1,24}) :")
_TOPO_PATH = re.compile(r"\bGPU/([\w-]{1,24}) \(\d+/[\d.]+/([A-Z0-9]{2,4})\)")
#: NCCL's GPU-to-GPU path types from nearest to farthest (``topo.h``); other types are ignored
_PATH_ORDER = ("LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS")
_MAX_SETTINGS = 64  # a log is not a configuration dump: keep the first few dozen settings
#: hosts whose port lists are compared (a 1,000-node log lists as many; a bound on the work)
_MAX_HOSTS = 4096
#: distinct debug lines remembered to skip their repeats from other ranks (a bound on memory)
_MAX_PRINTED = 65536


class EnvFact(BaseModel):
    """One fact read from the log, with the 1-based line it came from."""

    model_config = _FROZEN

    value: str
    line: int


class GpuPath(BaseModel):
    """The farthest path between two GPUs in NCCL's topology dump: its type (``PHB``, ``SYS``
    ...), the two GPUs as NCCL names them (``GPU/81000``), and the 1-based line."""

    model_config = _FROZEN

    kind: str
    first: str
    second: str
    line: int


class LogEnvironment(BaseModel):
    """Facts about how a run ran, read from NCCL's debug output and command lines.

    ``network``: the transport NCCL reports (``IB``, ``Socket``, ``AWS Libfabric`` ...);
    ``provider``: the libfabric provider (``efa``, ``cxi``); ``provider_nics``: its NIC count;
    ``platform``: the instance type aws-ofi-nccl detected; ``gdr``: True when the network
    channels use GPUDirect RDMA, False when channel lines exist without it, None when no channel
    line shows the network; ``net_devices``: the distinct network device numbers carrying
    channels; ``settings``: NCCL variables the log shows (first value wins); ``nvls_unavailable``:
    NCCL said NVLS multicast is not available; ``mnnvl``: ``0`` or ``1`` from NCCL's
    communicator line (the first one); ``gpu_path``: the farthest GPU-to-GPU path of
    NCCL's topology dump, None without a dump.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    model_config = _FROZEN

    network: EnvFact | None = None
    provider: EnvFact | None = None
    provider_nics: int | None = None
    platform: EnvFact | None = None
    gdr: bool | None = None
    gdr_line: int | None = None
    net_devices: list[int] = []
    net_devices_line: int | None = None
    #: each verbs port's link layer, ``IB`` or ``RoCE``, from NCCL's ``NET/IB : Using`` list
    port_layers: dict[int, str] = {}
    port_layers_line: int | None = None
    #: a host whose ``NET/IB : Using`` list lacks a port another host lists, where that port
    #: carries channels (a port down or excluded), with the line of that host's longest list
    port_shortfall: EnvFact | None = None
    settings: dict[str, EnvFact] = {}
    nvls_unavailable: EnvFact | None = None
    mnnvl: EnvFact | None = None
    #: NCCL's (nodes, ranks per node) from its communicator line, and that line
    nccl_nodes: tuple[int, int] | None = None
    nccl_nodes_line: int | None = None
    gpu_path: GpuPath | None = None
    #: what the shell's ``export`` lines and the batch directives up to the end of these lines
    #: leave exported (those of earlier lines passed in, then these lines' own, in order): what
    #: the next run of the log inherits (:func:`scan_environment`'s ``exported``)
    exports: dict[str, EnvFact] = Field(default={}, exclude=True)

    @property
    def socket_network(self) -> EnvFact | None:
        """NCCL's 'Using network Socket' (its TCP fallback), where the log shows it."""
        network = self.network
        return network if network is not None and network.value.lower() == "socket" else None

    @property
    def ib_disabled(self) -> EnvFact | None:
        """``NCCL_IB_DISABLE=1`` (verbs off: sockets unless a plugin is loaded), where set."""
        fact = self.settings.get("NCCL_IB_DISABLE")
        return fact if fact is not None and fact.value.strip(".") == "1" else None

    @property
    def facts(self) -> int:
        """How many facts the log shows, each setting and each network device counting one
        (calibrate fits the copy of a repeated run whose log shows most)."""
        single = (
            self.network,
            self.provider,
            self.platform,
            self.gdr,
            self.nvls_unavailable,
            self.gpu_path,
            self.mnnvl,
        )
        return sum(f is not None for f in single) + len(self.settings) + len(self.net_devices)

    @property
    def empty(self) -> bool:
        """True when the log shows none of these facts (the network devices come with ``gdr``)."""
        return self.facts == len(self.net_devices)

    def setting(self, name: str) -> str | None:
        """The value the log shows for an NCCL variable, or None."""
        fact = self.settings.get(name)
        return None if fact is None else fact.value


#: A host's verbs ports from NCCL's ``NET/IB : Using`` list: index -> name, the line, and
#: index -> link layer (``IB``, ``RoCE``).
_HostPorts = tuple[dict[int, str], int, dict[int, str]]


def _port_shortfall(ports_by_host: dict[str, _HostPorts], used: set[int]) -> EnvFact | None:
    """A host whose port list lacks a port another host lists, where that port carries traffic:
    its index on the fuller host is one the channel lines use (``via NET/IB/<n>``), or no
    channel line says. A management port missing (no channel on it) is not one."""
    if len(ports_by_host) < 2:
        return None
    full, (most, _, most_layers) = max(ports_by_host.items(), key=lambda kv: len(kv[1][0]))
    names = {name: index for index, name in most.items()}
    # the link layers the channels use on the fuller host (every layer when no line says)
    carrying_layers = {most_layers.get(i) for i in (used or most)}
    for host, (ports, line, layers) in sorted(ports_by_host.items(), key=lambda kv: kv[1][1]):
        if len(ports) >= len(most):
            # as many ports under other names (ibp75s0 beside mlx5_12, or port 2 of a dual-port
            # card): none missing; comparing names had read '5 where gcn154 lists 5'
            continue
        lists = f"{host} lists {len(ports)} network ports where {full} lists {len(most)}"
        if set(ports.values()) <= set(names):
            missing = sorted(set(names) - set(ports.values()))
            carrying = [n for n in missing if not used or names[n] in used]
            if carrying:
                return EnvFact(
                    value=f"{lists} ({listed(carrying, 'port', limit=4)} missing)", line=line
                )
        elif any(
            sum(1 for x in layers.values() if x == layer)
            < sum(1 for x in most_layers.values() if x == layer)
            for layer in carrying_layers
        ):
            # named otherwise: fewer ports of a link layer the channels use (a host without its
            # RoCE management port but with every IB port had been read as one IB port short)
            return EnvFact(value=lists, line=line)
    return None


def _passed_on(line: str) -> tuple[frozenset[str] | None, frozenset[str]]:
    """Which of the environment's variables the command that runs the nccl-tests binary on
    ``line`` passes to the run: the names (None: all of them), and names it removes.

    Read from that simple command's words alone (not another command's on the line, nor a
    comment: a review), in order, a later option winning: Slurm's ``--export=NONE`` (none)
    or ``--export=NAME,...`` without ``ALL`` (the names listed; the ``srun`` manual); ``env
    -i`` or ``env -`` (none), ``env -u NAME`` / ``--unset=NAME`` (all but NAME)."""
    prefix = _LAUNCHER.match(line)
    body = line[prefix.end() :] if prefix is not None else line
    removed: set[str] = set()
    return _passes(body, None, removed, depth=0), frozenset(removed)


def _passes(
    body: str, passed: frozenset[str] | None, removed: set[str], *, depth: int
) -> frozenset[str] | None:
    """:func:`_passed_on` for the command of ``body`` that runs the binary, from ``passed``
    (adding to ``removed``); a quoted command string that runs it (``bash -c 'env -u NAME
    ./all_reduce_perf'``, ``sh -c "srun --export=NONE ..."``) is read the same way inside
    (review BI: it had been one word)."""
    run = next((c for c in commands(body) if any(is_binary(w) for w in c)), None)
    words = iter(run or [])
    for word in words:
        if word == "--export" or word.startswith("--export="):
            value = word.partition("=")[2] if "=" in word else next(words, "")
            names = {item.partition("=")[0] for item in value.split(",")}
            passed = None if "ALL" in names else frozenset(names - {"NONE", "NIL"})
        elif word == "env":
            for option in words:
                if not option.startswith("-"):
                    break
                if _ENV_CLEARS.fullmatch(option):
                    passed = frozenset()
                elif option in ("-u", "--unset"):
                    removed.add(next(words, ""))
                elif option.startswith(("-u", "--unset=")):
                    removed.add(option.removeprefix("--unset=").removeprefix("-u"))
                elif option in ("-C", "--chdir", "-S", "--split-string"):
                    next(words, "")  # an option's argument, not the command (review BI)
        elif depth < 2 and _SPACE.search(word) and is_binary(word):
            # inside, an option narrows what the outer command passed on, never widens it
            # ('env -i bash -c "srun --export=ALL ..."' passes none, review BJ)
            inner = _passes(word, None, removed, depth=depth + 1)
            passed = inner if passed is None else passed if inner is None else passed & inner
    return passed


def scan_environment(
    text: str | Sequence[str],
    first_line: int = 1,
    last_line: int | None = None,
    exported: Mapping[str, EnvFact] | None = None,
    run_line: int | None = None,
) -> LogEnvironment:
    """Read the facts of :class:`LogEnvironment` from lines ``first_line..last_line`` (1-based,
    inclusive; ``last_line`` None means to the end) of ``text``.

    ``text``: the log's text, or its lines as ``text.split("\\n")`` gives them, which a caller
    reading every run of one log splits once (:func:`~ibcalc.logs.check.check_log`): each run's
    call had split the whole text and stepped to its first line: a log of 3,000 one-row runs
    spent 17 s here (1,000 runs: 1.5 s), and spends 0.9 s (a review).

    ``exported``: what the shell's ``export`` lines and batch directives before ``first_line``
    left exported (the previous range's :attr:`LogEnvironment.exports`; a log of several runs
    with one ``export NCCL_ALGO=Tree`` at the top had applied it to the first run only). The
    run counts what is exported when its command runs, ``run_line`` (its nccl-tests command
    line, or its first line: exports and unsets after the command on that line, and on later
    lines, reach only later runs), or at the end of the lines without one; a setting of the
    run's own (NCCL's ``set by environment`` lines, the command's ``NCCL_X=Y``) comes first."""
    network: EnvFact | None = None
    provider: EnvFact | None = None
    provider_nics: int | None = None
    platform: EnvFact | None = None
    gdr_yes: int | None = None
    gdr_no: int | None = None
    gdr_stated: tuple[bool, int] | None = None
    devices: dict[int, int] = {}
    layers: dict[int, str] = {}
    layers_line: int | None = None
    ports_by_host: dict[str, _HostPorts] = {}
    settings: dict[str, EnvFact] = {}
    nvls: EnvFact | None = None
    path: GpuPath | None = None
    mnnvl: EnvFact | None = None
    nccl_nodes: tuple[int, int] | None = None
    nccl_nodes_line: int | None = None
    shell = ShellExports({name: (f.value, f.line) for name, f in (exported or {}).items()})
    at_run: dict[str, tuple[str, int]] | None = None
    passed: frozenset[str] | None = None  # the exported names the run's command passes on
    removed: frozenset[str] = frozenset()
    # lines that can change nothing read already: the line before repeated (a shell line run
    # twice in a row, or any other), and NCCL's debug text another rank printed already (each
    # fact here is the first seen or a set, the same from every rank; a host's own port list
    # aside). A log of 50 MB of such lines had taken 12-30 s (review BF)
    previous: str | None = None
    printed: set[str] = set()
    continued: list[str] = []  # lines ending in a backslash just before this one

    def run_starts() -> None:
        nonlocal at_run
        if at_run is None:  # the first nccl-tests command of the line is the run's
            at_run = dict(shell.exports)

    lines = text.split("\n") if isinstance(text, str) else text
    start = max(first_line, 1)
    stop = None if last_line is None else max(last_line, start - 1)
    for lineno, raw in enumerate(itertools.islice(lines, start - 1, stop), start=start):
        line = raw.rstrip("\r").replace("\t", " ")
        if lineno == run_line:
            # the run's command, with the lines a backslash joins to it ('srun --export=NONE \')
            passed, removed = _passed_on(" ".join([*continued, line])[:MAX_LINE_CHARS])
        tail = line.rstrip()
        continued = [*continued[-_MAX_CONTINUED:], tail[:-1]] if tail.endswith("\\") else []
        if (
            "NCCL_" not in line
            and "set" in line
            and len(line) <= MAX_LINE_CHARS
            and allexport_words(line)
        ):
            # 'set -a' / 'set +a': later assignments export, or no longer (also on a line naming
            # NCCL in a comment, which the filter below keeps: a review)
            _settings_of(line, lineno, shell, settings, None)
        if lineno != run_line:
            if line == previous:
                continue
            previous = line
            info = line.find(" NCCL INFO ")
            if info >= 0 and "NET/IB : Using" not in line:
                said = line[info:]
                if said in printed:
                    continue
                if len(printed) < _MAX_PRINTED:
                    printed.add(said)
        if lineno == run_line and "NCCL_" not in line:
            run_starts()  # the run's command changes nothing the shell exports
        if "NCCL" not in line and "via NET/" not in line and "platform" not in line:
            continue
        if network is None and (m := _USING_NETWORK.search(line)):
            network = EnvFact(value=m.group(1)[:60], line=lineno)
        if provider is None and (m := _PROVIDER.search(line)):
            provider = EnvFact(value=m.group(1).lower(), line=lineno)
            if m.group(2):
                provider_nics = int(m.group(2)[:6])
        if platform is None and (m := _PLATFORM.search(line)):
            platform = EnvFact(value=m.group(1)[:40], line=lineno)
        if _NET_PORTS.search(line):
            found = list(_NET_PORT.finditer(line))
            ports = {int(p.group(1)[:6]): p.group(2)[:64] for p in found}
            layer_of = {int(p.group(1)[:6]): p.group(3) for p in found}
            if layers_line is None:
                layers, layers_line = layer_of, (lineno if layer_of else None)
            host = _DEBUG_HOST.search(line)
            if host is not None and ports and len(ports_by_host) < _MAX_HOSTS:
                # each host's longest list: a line cut by another rank's output lists fewer
                name = host.group(1)
                if len(ports) > len(ports_by_host.get(name, ({}, 0, {}))[0]):
                    ports_by_host[name] = (ports, lineno, layer_of)
        if "via NET/" in line:
            for m in _CHANNEL_NET.finditer(line):
                devices.setdefault(int(m.group(2)[:6]), lineno)
                if m.group(3):
                    gdr_yes = gdr_yes or lineno
                else:
                    gdr_no = gdr_no or lineno
        if gdr_stated is None and (m := _GDR_STATE.search(line)):
            gdr_stated = (m.group(1) == "Enabled", lineno)
        if nvls is None and _NVLS_UNAVAILABLE.search(line):
            nvls = EnvFact(value="NVLS multicast support is not available", line=lineno)
        if mnnvl is None and (m := _MNNVL.search(line)):
            mnnvl = EnvFact(value=m.group(1), line=lineno)
        if nccl_nodes is None and (m := _NODES.search(line)):
            nccl_nodes = (int(m.group(2)[:7]), int(m.group(3)[:7]))
            nccl_nodes_line = lineno
        if (m := _TOPO_GPU.search(line)) is not None:
            path = _farther(path, m.group(1), line[m.end() :], lineno)
        if "NCCL_" in line:
            _settings_of(line, lineno, shell, settings, run_starts if lineno == run_line else None)
        if lineno == run_line and at_run is None:
            run_starts()
    for name, (value, line_of) in (shell.exports if at_run is None else at_run).items():
        # what is exported when the run's command runs, where the run sets no value of its own
        # and its command passes the name on ('srun --export=NONE' passes none)
        if (passed is not None and name not in passed) or name in removed:
            continue
        if len(settings) < _MAX_SETTINGS:
            settings.setdefault(name, EnvFact(value=value, line=line_of))
    gdr: bool | None = None
    gdr_line: int | None = None
    if gdr_yes is not None or gdr_no is not None:
        # any channel without GDRDMA means some traffic is staged through host memory
        gdr = gdr_no is None
        gdr_line = gdr_no if gdr_no is not None else gdr_yes
    elif gdr_stated is not None:
        gdr, gdr_line = gdr_stated
    return LogEnvironment(
        network=network,
        provider=provider,
        provider_nics=provider_nics,
        platform=platform,
        gdr=gdr,
        gdr_line=gdr_line,
        net_devices=sorted(devices),
        net_devices_line=min(devices.values()) if devices else None,
        port_layers=layers,
        port_layers_line=layers_line,
        port_shortfall=_port_shortfall(ports_by_host, set(devices)),
        settings=settings,
        nvls_unavailable=nvls,
        gpu_path=path,
        mnnvl=mnnvl,
        nccl_nodes=nccl_nodes,
        nccl_nodes_line=nccl_nodes_line,
        exports={name: EnvFact(value=v, line=n) for name, (v, n) in shell.exports.items()},
    )


def _settings_of(
    line: str,
    lineno: int,
    shell: ShellExports,
    settings: dict[str, EnvFact],
    run_starts: Callable[[], None] | None,
) -> None:
    """Read one line's NCCL settings into ``settings`` (the first value of a name wins) and its
    shell's exports into ``shell``; ``run_starts`` is called where the run's nccl-tests command
    runs, if this line has it."""
    own: list[tuple[str, str]] | None = None  # the line's own assignments, when read as words
    prefix = _LAUNCHER.match(line)
    body = line[prefix.end() :] if prefix is not None else line
    if body.startswith("#"):
        if _DIRECTIVE.match(body):
            # the whole job's environment: this run's and every later one's, through the exports
            found = [(m.group(1), _setting_value(m.group(2))) for m in _ASSIGNMENT.finditer(body)]
            shell.directive(found, lineno)
        # a comment ('# export NCCL_ALGO=Tree', commented out in a job script) sets nothing
        return
    if (lone := _LONE_ASSIGNMENT.fullmatch(body)) is not None:
        # 'NCCL_PROTO=broadcast:ll;allreduce:simple' alone on a line: what 'env | grep NCCL'
        # prints, value whole (read as words, ';' had cut it), or a shell's own assignment
        shell.assign(lone.group(1), _unquoted(lone.group(2)), lineno)
    elif shell_words(body):
        # the shell's own export builtins change what later commands inherit; the rest of the
        # line (an nccl-tests command, mpirun -x ...) keeps its settings for this run, but not
        # a quoted phrase ('echo "to fix: export NCCL_PROTO=Simple"' had set it)
        words = shell.line(body, lineno, run_starts)
        # the words are read as the line is, comma lists and all ('srun --export
        # NCCL_A=1,NCCL_B=2'); a quoted string is read where it is a command that runs the
        # nccl-tests binary (bash -c 'cd /x && NCCL_PROTO=Simple ./all_reduce_perf ...'), or a
        # value with a space (NCCL_ALGO="Ring, Tree"), not as text ('echo "to fix: export
        # NCCL_PROTO=Simple"' had set it)
        text = " ".join(w for w in words if not _SPACE.search(w) or is_binary(w))
        own = [(m.group(1), m.group(2)) for m in _ASSIGNMENT.finditer(text)]
        own += [
            (name, value)
            for word in words
            if _SPACE.search(word) and word.startswith("NCCL_") and not is_binary(word)
            for name, _, value in [word.partition("=")]
        ]
    if len(settings) >= _MAX_SETTINGS:
        return
    found = [
        (m.group(1), m.group(2))
        for m in (*_SET_BY_ENV.finditer(line), *_PLUGIN_SETS.finditer(line))
    ]
    if "env " in line and own is None:  # 'mpiexec -genv NCCL_ALGO Ring'
        found += [(m.group(1), _unquoted(m.group(2))) for m in _GENV.finditer(line)]
    elif own is not None:
        # read as words: not from quoted text ('echo "... -genv NCCL_PROTO Simple"', a review)
        own += [
            (name, value)
            for option, name, value in zip(words, words[1:], words[2:], strict=False)
            if option in ("-genv", "-env") and _NAME_WORD.fullmatch(name)
        ]
    if own is None:
        found += [(m.group(1), m.group(2)) for m in _ASSIGNMENT.finditer(line)]
    for name, raw in [*found, *(own or [])]:
        settings.setdefault(name, EnvFact(value=_setting_value(raw), line=lineno))


def _farther(path: GpuPath | None, source: str, paths: str, lineno: int) -> GpuPath | None:
    """``path`` or the farthest GPU-to-GPU path of one line of NCCL's topology dump, whichever
    is farther (the first of equals wins)."""
    for m in _TOPO_PATH.finditer(paths):
        kind = m.group(2)
        if kind not in _PATH_ORDER or m.group(1) == source:
            continue
        if path is None or _PATH_ORDER.index(kind) > _PATH_ORDER.index(path.kind):
            path = GpuPath(
                kind=kind, first=f"GPU/{source}", second=f"GPU/{m.group(1)}", line=lineno
            )
    return path


def _unquoted(value: str) -> str:
    """``value`` without the quotes a shell would remove around it (``"Simple"``)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _setting_value(raw: str) -> str:
    """A setting's value as a line shows it, without the quotes or trailing punctuation around
    it, at most 120 characters."""
    return raw[:120].rstrip(".,;").strip("\"'").rstrip(".,;")
