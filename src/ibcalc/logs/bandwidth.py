"""Why the large sizes of a checked run are slow: a cause re-run through the model, or a fit.

:func:`bandwidth_findings` is the bandwidth part of :func:`ibcalc.logs.diagnose.diagnose`. Each
named cause (one NIC, half the NICs, NICs behind PCIe Gen4 or Gen3, NVLS or NVLS-tree off, GPU
peer-to-peer off, a slow transport) is decided by re-running the model under it and asking whether
it explains the measured bandwidth rows within the error band (the estimate's band, or half of
:data:`~ibcalc.logs.results.BANDWIDTH_TOLERANCE` where that is wider). When none does, the
network (or
scale-up, or NVLS) rate that does is fitted and compared with one NIC. See docs/nccl-check.md,
"Diagnoses".
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ibcalc.catalogue.load import find_link
from ibcalc.catalogue.models import Catalogue, Link
from ibcalc.catalogue.releases import older_than_compared
from ibcalc.cluster.resolve import ResolvedCluster, resolve_cluster
from ibcalc.engine.types import Algorithm, Collective, Estimate
from ibcalc.errors import IbcalcError
from ibcalc.facade import QuickEstimate
from ibcalc.listing import first_of
from ibcalc.logs.expect import RunContext, catalogue_with_link, predict_times
from ibcalc.logs.fit import minimize_scalar
from ibcalc.logs.results import (
    BANDS,
    BANDWIDTH_TOLERANCE,
    FASTER_WARN,
    PUBLISHED_SPEEDUP,
    Band,
    Confidence,
    Finding,
    RowCheck,
    Severity,
    eff_pct,
    fmt_size,
    pct,
    size_span,
)
from ibcalc.textsafe import printable
from ibcalc.units import GB, fixed, plural

__all__ = [
    "LATE_RAMP",
    "LIBRARY_CHOICE",
    "RING_INSTEAD",
    "bandwidth_findings",
    "names_library_choice",
]

#: Share of the bandwidth rows a hypothesis must explain.
_EXPLAIN_SHARE = 0.7
_FIT_FLOOR = 2e-3  # a fitted efficiency this low sits on the search bound: not a fit
_MODEST = 0.6  # a fitted rate at least this fraction of the catalogue's is "below", not "broken"
#: What a cause says of a rate below the catalogue's that is no fault: calibrating is what
#: mends it, and ``calibrate`` does not warn of a run whose likeliest cause says it
NOT_BROKEN = "below the catalogue's figure, not broken"
#: What the finding of a late ramp says (only the smallest large sizes low): not a fault, so its
#: rows count as ``low`` at worst in the run's verdict (``check_run``)
LATE_RAMP = "busbw ramps up later than the model expects"
#: The key of the cause "the library ran ring where the model expects a tree", and how its words
#: end: a choice of the library, not a fault; where it alone explains the rows, calibrate warns
#: that a fit would price the tree at the ring's speed
RING_INSTEAD = "algorithm=ring"
LIBRARY_CHOICE = "a choice of the library, not a fault of the cluster"
#: Algorithms whose all-reduce busbw across nodes exceeds a ring's (the 2-node tree sends S per
#: node, in-network reduction), so that a run NCCL drove as a ring reads slow against them
_ABOVE_RING = frozenset(
    {Algorithm.TREE, Algorithm.NVLS_TREE, Algorithm.COLLNET_DIRECT, Algorithm.COLLNET_CHAIN}
)
#: Least median efficiency a missing network port is named as the cause of: the channels of its
#: GPUs share another NIC at half its rate, and every channel carries the same bytes, so one
#: port down leaves the collective at about half speed; further below, something else is wrong
_PORT_LOSS_FLOOR = 0.4
#: Most median efficiency at which a port the log shows missing is named beside another cause
#: that fits the rows: one port down leaves about half speed, and a run at three quarters of
#: the expectation or more is not that (a policy value between half and the ok band's 0.85)
_PORT_LOSS_CEILING = 0.75


@dataclass(frozen=True)
class _Hypothesis:
    key: str
    cause: str
    changes: Mapping[str, Any]
    about_network: bool
    catalogue: Catalogue | None = None  # a link changed, rather than the cluster's shape
    algorithm: Algorithm | None = None  # NCCL's choice replaced, the cluster unchanged


@dataclass(frozen=True)
class _Scored:
    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    hypothesis: _Hypothesis
    curve: list[tuple[int, float]]  # (size, busbw GB/s) at every checked size
    error: float  # median |relative error| over the bandwidth rows
    share: float  # share of bandwidth rows within the band
    predicted: float  # median predicted busbw over the bandwidth rows, GB/s
    #: whether it moves any large size's time: one that does not is scored (as the expectation
    #: it equals, a run slower than it is flagged) but not listed among the causes ruled out
    changed: bool


def _off(error: float) -> str:
    """How far a hypothesis' prediction is from the measurement, in words that do not call a
    poor fit one: ``within 4% of the measurement``, or ``83% off the measurement``."""
    if error <= BANDWIDTH_TOLERANCE:
        return f"within {pct(error)} of the measurement"
    return f"{pct(error)} off the measurement"


def bandwidth_findings(
    ctx: RunContext, latency_fit: tuple[Link, float, float] | None
) -> list[Finding]:
    """Findings about the bandwidth rows: the cause that explains them, else a fitted rate;
    and a late ramp under a run whose larger sizes are low.

    ``latency_fit`` is the per-hop latency fitted to the small sizes (link, added seconds,
    median error), re-run as a slow-transport hypothesis."""
    # rows that failed validation are reported as corruption, not diagnosed as slow
    bw = [r for r in ctx.rows if r.regime == "bandwidth" and not r.invalid]
    if not bw:
        return []
    findings = _bandwidth_causes(ctx, latency_fit, bw)
    ramp = _ramp_under_low_run(ctx, bw)
    return findings if ramp is None else [*findings, ramp]


def _ramp_under_low_run(ctx: RunContext, bw: Sequence[RowCheck]) -> Finding | None:
    """The smallest large sizes under the ``bad`` threshold of a run whose median is under the
    ``ok`` one, where busbw climbs from the size before the regime through them to a size that
    reaches ``ok`` and no larger size is bad: a late ramp on top of the run's own shortfall,
    not a fault of its own. Sweep 22 (10 x 8 H100, healthy as published: 64 MiB at 53 %, 128
    at 67, 256 at 81, 512 MiB at 87) had read ``bad`` from its 64 MiB row beside the one cause
    named, a network 'below the catalogue's figure, not broken' (a review). A run with a
    median at ``ok`` or more has its own late-ramp finding (:func:`_some_rows_low`)."""
    band = BANDS["bandwidth"]
    if statistics.median(r.efficiency for r in bw) >= band.ok:
        return None
    lead = list(itertools.takewhile(lambda r: r.efficiency < band.low, bw))
    rest = bw[len(lead) :]
    reach = next((i for i, r in enumerate(rest) if r.efficiency >= band.ok), None)
    # the smallest sizes only, a minority: 6 of 9 sizes at 47-57 % had been called a ramp
    # beside an error finding (a review)
    if not lead or 2 * len(lead) >= len(bw) or reach is None:
        return None
    if any(r.efficiency < band.low for r in rest):
        return None
    before = [r for r in ctx.rows if r.regime != "bandwidth" and not r.invalid][-1:]
    climb = [r.measured_busbw_GBps for r in [*before, *lead, *rest[: reach + 1]]]
    if any(b <= a for a, b in itertools.pairwise(climb)):
        return None
    return Finding(
        kind="low_bandwidth",
        cause=(
            "the smallest of the large sizes falls "
            if len(lead) == 1
            else f"the smallest {len(lead)} of {len(bw)} large sizes fall "
        )
        + f"under {pct(band.low)} of the expected busbw and busbw climbs from "
        f"{'it' if len(lead) == 1 else 'them'} to {fmt_size(rest[reach].size_bytes)}, at "
        f"{eff_pct(rest[reach].efficiency)}: {LATE_RAMP} on top of the run's shortfall, not a "
        "fault of its own",
        confidence="medium",
        severity="info",
        evidence=first_of(
            [
                f"{fmt_size(r.size_bytes)}: {r.measured_busbw_GBps:.1f} GB/s against "
                f"{r.expected_busbw_GBps:.1f} GB/s expected ({eff_pct(r.efficiency)}, "
                f"line {r.line})"
                for r in [*lead, *rest[: reach + 1]]
            ],
            "size",
        ),
        lines=[r.line for r in lead],
    )


def _bandwidth_causes(
    ctx: RunContext, latency_fit: tuple[Link, float, float] | None, bw: list[RowCheck]
) -> list[Finding]:
    """The cause that explains the bandwidth rows, else a fitted rate."""
    band = BANDS["bandwidth"]
    median_eff = statistics.median(r.efficiency for r in bw)
    measured = statistics.median(r.measured_busbw_GBps for r in bw)
    expected = statistics.median(r.expected_busbw_GBps for r in bw)
    lines = [r.line for r in bw]
    span = size_span(bw)
    findings: list[Finding] = []
    if not ctx.network_known and ctx.multi:
        inter_id = ctx.cluster.inter.id if ctx.cluster.inter else "?"
        # a log naming NCCL's socket transport shows the network, not its rate (it had been
        # told 'the log does not show the network' below the line quoting it: a review)
        # nor one naming its transport alone: 'Using network IB' with no preset to give the
        # link (a log without its device list) names verbs, not the link's speed
        network = ctx.env.network
        if ctx.env.socket_network is not None and network is not None:
            shown = (
                f"the log shows NCCL's TCP socket transport (line {network.line}), which no "
                "catalogue link models"
            )
        elif network is not None:
            shown = (
                f"the log shows NCCL's transport ('Using network {printable(network.value)}', "
                f"line {network.line}), not the link or its speed"
            )
        else:
            shown = "the log does not show the network"
        findings.append(
            Finding(
                kind="network_assumed",
                cause=f"{shown}: the expectation assumes "
                f"{ctx.cluster.nics_per_node} x {inter_id} per node; give the network "
                "({inter}, {nics_per_node} or {system}) to judge it",
                confidence="high",
                severity="info",
                evidence=[],
            )
        )
    below = [r for r in bw if r.efficiency < band.ok]
    low = [r for r in below if not r.within_band]
    # every row below the verdict band is inside the model's error band: the model cannot tell
    # such a run from a healthy one by its numbers alone, only by a cause that fits it closely
    banded = bool(below) and not low
    if median_eff > band.above:
        # beyond every published run's speed-up over the model the cluster given is likely
        # wrong: a warning, so that a gate and the github output show it
        beyond = median_eff > FASTER_WARN
        findings.append(
            Finding(
                kind="faster_than_expected",
                cause="faster than the model expects at large sizes: the cluster differs from "
                "the one assumed ("
                + (
                    "more NICs, in-network reduction"
                    if ctx.multi
                    else "a faster scale-up link"
                    # NVLink SHARP only where the node could have it (not an AMD node's xGMI)
                    + (", NVLink SHARP" if not _amd_node(ctx) else "")
                )
                + (
                    f"; no published run is more than {PUBLISHED_SPEEDUP:g}x faster than the "
                    "model: check the cluster given)"
                    if beyond
                    else "), or the model underestimates it"
                ),
                confidence="high" if beyond else "medium",
                severity="warning" if beyond else "info",
                evidence=[
                    f"busbw {measured:.1f} GB/s against {expected:.1f} GB/s expected at {span} "
                    f"(median efficiency {eff_pct(median_eff)})"
                ],
                lines=lines,
            )
        )
    if median_eff >= band.ok or not below:
        if below:
            # the largest valid size below the regime: a ramp climbs from it; busbw more than
            # _DIP_FRACTION under it is a dip (64-256 MiB slowed 2x on a p5 log read 'ramps up
            # later')
            before = [r for r in ctx.rows if r.regime != "bandwidth" and not r.invalid]
            findings.append(_some_rows_low(bw, below, low, band, before[-1] if before else None))
        return findings
    headline = (
        f"busbw {measured:.1f} GB/s against {expected:.1f} GB/s expected at {span} "
        f"(median efficiency {eff_pct(median_eff)}, {plural(ctx.cluster.nodes, 'node')})"
    )
    hypotheses = _hypotheses(ctx)
    if latency_fit is not None and latency_fit[1] > 0:
        # the latency the small sizes need, if the transport also pays it at every pipeline
        # step of a large message, may account for the large sizes as well
        link, added, _error = latency_fit
        hypotheses.append(
            _Hypothesis(
                f"{link.id}.transport_latency += {added * 1e6:.1f} us",
                "a slow transport: the latency per network hop that explains the small sizes "
                "(fitted from them) accounts for the large sizes too, since every pipeline step "
                "pays it (a proxy-driven network plugin, or its CPU threads starved)",
                {},
                ctx.multi,
                catalogue_with_link(
                    ctx.catalogue, link.id, transport_latency_s=link.transport_latency_s + added
                ),
            )
        )
    scored = [s for h in hypotheses if (s := _score(ctx, h)) is not None]
    # a cause must also bring the rows' median within the tolerance: inside a wide band (the
    # model's error reaches -48 % on some systems) 'PCIe Gen3' had been named for 2 x p5 at
    # 30 % of the expected busbw while its own re-run was 40 % off the measurement
    explaining = sorted(
        (
            s
            for s in scored
            if s.share >= _EXPLAIN_SHARE and s.error <= BANDWIDTH_TOLERANCE and s.changed
        ),
        key=lambda s: s.error,
    )
    # a run slower than a named fault would leave it is no healthier than that fault, band or
    # not: one 8 x H100 node at 49 % of the NVLS rate (236 GB/s where NVLS off gives 366) had
    # been 'not judged a fault' while one at 77 % was flagged as NVLS off. No margin: a cause
    # fitting within half the tolerance is named above its prediction, so no speed between the
    # two goes unflagged (with a margin of half the tolerance on the median busbw, where the fit
    # takes the median row, a p5 run slowed 1.3x was 'not a fault' between 1.25x, named PCIe
    # Gen4, and 1.35x, named NVLS-tree off)
    slower = [s for s in scored if measured < s.predicted]
    if banded and not slower:
        explaining = [s for s in explaining if s.error <= BANDWIDTH_TOLERANCE / 2]
        if not explaining:
            findings.append(_inside_band(bw, headline))
            return findings
    severity: Severity = "error" if median_eff < band.low else "warning"
    if explaining:
        best = explaining[0]
        # hypotheses whose predictions the measurement cannot tell apart from the best one
        twins = [
            s
            for s in explaining[1:]
            if abs(math.log(s.predicted / best.predicted)) <= math.log1p(BANDWIDTH_TOLERANCE / 2)
        ]
        others = [s for s in explaining[1:] if s not in twins]
        cause = best.hypothesis.cause
        if twins:
            cause += "; or " + "; or ".join(s.hypothesis.cause for s in twins)
        short = ctx.env.port_shortfall
        port = (
            short is not None
            and ctx.multi
            and _PORT_LOSS_FLOOR <= median_eff <= _PORT_LOSS_CEILING
            and "port missing" not in cause
        )
        if port:
            # the log shows a port missing, which leaves about half speed: named beside the
            # cause that fits best (at 54 % it had been only evidence under 'PCIe Gen3', which
            # nothing in the log supports: review DC)
            assert short is not None
            cause += (
                f"; or a network port missing: {short.value} (line {short.line}), down or "
                "excluded (the channels of its GPUs share another NIC, and the collective runs "
                "at the slowest channel's pace: about half speed)"
            )
        confidence: Confidence = "high" if best.error <= BANDWIDTH_TOLERANCE / 2 else "medium"
        if twins or port:
            confidence = "medium"
        if best.hypothesis.about_network and not ctx.network_known:
            confidence = "low"
        if best.hypothesis.key == RING_INSTEAD and not twins:
            severity = "info"  # the library's choice, not a fault: a note
        evidence = [
            headline,
            f"re-run with {best.hypothesis.key}: {best.predicted:.1f} GB/s expected, "
            f"{_off(best.error)} (median over {plural(len(bw), 'row')})",
        ]
        evidence += [
            f"re-run with {s.hypothesis.key}: {s.predicted:.1f} GB/s, also within {pct(s.error)}"
            for s in twins
        ]
        evidence += ctx.env_evidence(best.hypothesis.changes)
        if "nics_per_node" in best.hypothesis.changes and not ctx.nics_known:
            confidence = "low"
            evidence.append(
                f"the NIC count ({ctx.cluster.nics_per_node} per node) is assumed, not read from "
                "the log ({nics_per_node})"
            )
        findings.append(
            Finding(
                kind="low_bandwidth",
                cause=cause,
                confidence=confidence,
                severity=severity,
                evidence=evidence,
                lines=lines,
                hypothesis=best.hypothesis.key,
                fit_error=best.error,
                curve=best.curve,
            )
        )
        for s in others[:2]:
            findings.append(
                Finding(
                    kind="low_bandwidth",
                    cause=s.hypothesis.cause + " (less likely)",
                    confidence="low",
                    severity="info",
                    evidence=[
                        f"re-run with {s.hypothesis.key}: {s.predicted:.1f} GB/s, {_off(s.error)}"
                    ],
                    lines=lines,
                    hypothesis=s.hypothesis.key,
                    fit_error=s.error,
                    curve=s.curve,
                )
            )
        return findings
    findings.append(_rate_finding(ctx, bw, headline, scored, severity, median_eff=median_eff))
    return findings


def _hypotheses(ctx: RunContext) -> list[_Hypothesis]:
    cluster = ctx.cluster
    out: list[_Hypothesis] = []
    topo = cluster.topology
    uses_nvls = any(
        e.best.algorithm in (Algorithm.NVLS, Algorithm.NVLS_TREE)
        for e, r in zip(ctx.estimates, ctx.rows, strict=True)
        if r.regime == "bandwidth"
    )
    if ctx.multi:
        nics = cluster.nics_per_node
        # the log's channel lines show how many NICs carried traffic: fewer is ruled out
        seen = len(ctx.env.net_devices)
        if nics > 1 and seen <= 1:
            gdr = ""
            if ctx.env.gdr is False:
                gdr = " (the log's network channels run without GDRDMA)"
            out.append(
                _Hypothesis(
                    "nics_per_node=1",
                    f"busbw near one NIC's rate: one NIC in use, or GPUDirect RDMA off{gdr}",
                    {"nics_per_node": 1},
                    True,
                )
            )
        if nics >= 4 and seen <= nics // 2:
            out.append(
                _Hypothesis(
                    f"nics_per_node={nics // 2}",
                    f"half of the NICs carry the traffic ({nics // 2} of {nics}): NICs down, "
                    "excluded (NCCL_IB_HCA) or not matched to the GPUs",
                    {"nics_per_node": nics // 2},
                    True,
                )
            )
        host = cluster.host_pcie
        host_bw = host.achievable_Bps if host is not None else math.inf
        for pcie, words in (
            (
                "pcie4",
                "NICs on PCIe links at Gen4 x16 speed, about half of Gen5 (a link trained "
                "down, a riser or a Gen4 slot: lspci shows the link's speed)",
            ),
            (
                "pcie3",
                "NICs on PCIe links at Gen3 x16 (or Gen4 x8) speed (a link trained down, a "
                "riser or an older slot: lspci shows the link's speed)",
            ),
        ):
            try:
                link = find_link(ctx.catalogue, pcie)
            except IbcalcError:
                continue
            if link.achievable_Bps < host_bw * 0.9:
                out.append(_Hypothesis(f"host_pcie={pcie}", words, {"host_pcie": pcie}, True))
    if uses_nvls:
        where = "NVLS-tree (NVLink SHARP inside each node)" if ctx.multi else "NVLS (NVLink SHARP)"
        out.append(
            _Hypothesis(
                "nvls=False",
                f"{where} is not in use: NCCL_NVLS_ENABLE=0, the fabric manager or multicast "
                "support missing, or NCCL chose another algorithm",
                {"nvls": False},
                False,
            )
        )
    if topo.m > cluster.gpus_per_node:
        # an NVLink domain across nodes (GB200 NVL72): without multi-node NVLink, NCCL joins
        # the nodes over the network (the preset's fabric)
        out.append(
            _Hypothesis(
                f"scale_up_domain={cluster.gpus_per_node}",
                "NVLink does not join the nodes (multi-node NVLink not set up, or disabled with "
                "NCCL_MNNVL_ENABLE=0): traffic between nodes goes over the network",
                {"scale_up_domain": cluster.gpus_per_node},
                True,
            )
        )
    expected = _expected_above_ring(ctx)
    why = _ring_evidence(ctx) if expected else None
    if why is not None and ctx.multi and ctx.algorithm is None:
        # the library's choice, not the cluster: a 2 x p4d all-reduce on NCCL 2.9.9 reads 43.8
        # GB/s at 4 GiB, 91 % of the ring this model also prices and 53 % of the 2-node tree
        # 2.30.7's tuner picks; it had been told to check its ports' speed (a review)
        names = "/".join(sorted(a.value for a in expected))
        out.append(
            _Hypothesis(
                RING_INSTEAD,
                f"the library ran ring where the model expects {names} at these sizes ({why}): "
                + LIBRARY_CHOICE,
                {},
                True,  # as much a guess as any network cause where the network is assumed
                algorithm=Algorithm.RING,
            )
        )
    intra = cluster.intra
    if (
        intra is not None
        and intra.family == "nvlink"
        and topo.m > 1
        and cluster.host_pcie is not None
    ):
        out.append(
            _Hypothesis(
                f"intra={cluster.host_pcie.id}",
                "GPU-to-GPU traffic inside the node goes over PCIe instead of NVLink "
                "(peer-to-peer over NVLink disabled or NVLink down)",
                {"intra": cluster.host_pcie.id, "nvls": False},
                False,
            )
        )
    return out


def names_library_choice(finding: Finding) -> bool:
    """Whether ``finding`` puts the large sizes down to the library running ring, alone (no
    fault as likely beside it, whose words would follow): ``calibrate`` then warns that a fit
    would price the tree at the ring's speed."""
    return finding.hypothesis == RING_INSTEAD and finding.cause.endswith(LIBRARY_CHOICE)


def _expected_above_ring(ctx: RunContext) -> set[Algorithm]:
    """The algorithms above a ring (``_ABOVE_RING``) the model expects at the bandwidth rows of
    an all-reduce: where NCCL may have run ring instead (none for other collectives)."""
    if ctx.collective is not Collective.ALL_REDUCE:
        return set()
    return {
        e.best.algorithm
        for e, r in zip(ctx.estimates, ctx.rows, strict=True)
        if r.regime == "bandwidth" and e.best.algorithm in _ABOVE_RING
    }


def _ring_evidence(ctx: RunContext) -> str | None:
    """What in the log says the library ran ring where the model expects a tree, in words: an
    NCCL release older than those whose tuner the model reads (the one --nccl-version names,
    else the log's); None otherwise, and where NCCL_ALGO rules ring out. An NCCL_ALGO that rules
    out the tree and keeps ring (``^Tree``) needs no cause: the expectation honours it
    (``check_run``), so it is ring's already. Without evidence ring is not offered: a healthy
    tree run slowed 1.5x by a fault fits it as well as a run NCCL drove as a ring, and had been
    excused as the library's choice (a review: 2 x 4 H100 on NCCL 2.22.3, slowed 1.5x at 64 MiB
    and more, read 'low'). The cause explains; it lifts no verdict (``check_run``)."""
    # the log's NCCL_ALGO is in the tuner view the check priced with (check_run)
    if not ctx.params.tuner_view().nccl_tuner.algorithms.get(Algorithm.RING, 1):
        return None
    if ctx.run.library != "rccl" and older_than_compared(ctx.release):
        return f"NCCL {ctx.release} is older than the releases whose tuner this model reads"
    return None


def _score(ctx: RunContext, hyp: _Hypothesis) -> _Scored | None:
    catalogue = hyp.catalogue if hyp.catalogue is not None else ctx.catalogue
    try:
        alt = resolve_cluster(catalogue, ctx.cluster.spec.replace(**hyp.changes))
    except IbcalcError:
        return None
    plan, quick = ctx.quick_under(alt, hyp.algorithm)
    errors: list[float] = []
    within = 0
    predicted: list[float] = []
    changed = False
    for row, q in zip(ctx.rows, quick, strict=True):
        if row.regime != "bandwidth" or q is None or plan is None or row.invalid:
            continue
        changed = changed or abs(q.time_s / (row.expected_time_us * 1e-6) - 1) > _SAME_TIME
        measured_s = row.measured_time_us * 1e-6
        errors.append(abs(math.log(measured_s / q.time_s)))
        within += _within(q.time_s, plan.time_s_range(q), measured_s, BANDWIDTH_TOLERANCE)
        predicted.append(q.busbw_Bps / GB)
    if not errors:
        return None
    return _Scored(
        hyp,
        _curve(ctx.rows, quick),
        math.expm1(statistics.median(errors)),
        within / len(errors),
        statistics.median(predicted),
        changed=changed,
    )


#: A re-run whose every large-size time is within this of the expectation's changes nothing.
_SAME_TIME = 1e-6


def _misfit(s: _Scored, rows: int) -> str:
    """Why a re-run does not explain the rows: its median is off, or too few rows sit near it
    (a re-run 2 % from the measured median had been 'does not fit' without a word of why: 3
    of its 8 rows were 19-24 % off; a review)."""
    if s.error > BANDWIDTH_TOLERANCE:
        return f"its median {pct(s.error)} off the measurement"
    near = round(s.share * rows)
    return (
        f"{near} of {plural(rows, 'large size')} near it, {pct(_EXPLAIN_SHARE)} needed, though "
        f"its median is within {pct(s.error)}"
    )


def _within(time_s: float, band: tuple[float, float], measured_s: float, tolerance: float) -> bool:
    """Whether a re-run explains a row: the measurement lies in the estimate's error band, or
    within half the tolerance of the estimate. The band's fast side is narrow (3 % on verbs
    networks): a healthy 2 x 8 MI355X run has 3 of its 9 large rows just outside it, and every
    cause re-run on that run, the right one too, then fell short of the share a cause must
    explain (benchmarks/diagnosis.py)."""
    if band[0] <= measured_s <= band[1]:
        return True
    return abs(math.log(measured_s / time_s)) <= math.log1p(tolerance / 2)


def _curve(
    rows: Sequence[RowCheck], ests: Sequence[Estimate | QuickEstimate | None]
) -> list[tuple[int, float]]:
    return [
        (r.size_bytes, e.busbw_Bps / GB) for r, e in zip(rows, ests, strict=True) if e is not None
    ]


def _inside_band(bw: Sequence[RowCheck], headline: str) -> Finding:
    """Large sizes below the verdict band but inside the model's error band, no cause fitting."""
    spans = [r.expected_busbw_GBps_range for r in bw if r.expected_busbw_GBps_range is not None]
    likely = (
        f"; a measurement is likely to show {min(s[0] for s in spans):.1f}-"
        f"{max(s[1] for s in spans):.1f} GB/s"
        if spans
        else ""
    )
    return Finding(
        kind="low_bandwidth",
        cause="below the expected busbw (so 'low': at 64 MiB and more the error band lifts no "
        "row to 'ok'), but inside the model's error band and explained by no cause it re-runs: "
        "within what published runs of this kind measure, not judged a fault",
        confidence="low",
        severity="info",
        evidence=[headline + likely],
        lines=[r.line for r in bw],
    )


#: busbw at the smallest large size more than this fraction under the largest smaller size is a
#: dip, not a late ramp: no published healthy run falls there by more than 1.6 % (2 x DGX A100
#: all-gather, 127.8 -> 125.8 GB/s from 32 to 64 MiB; a ramp never falls), a p5 run slowed 2x at
#: 64-256 MiB falls 24 %.
_DIP_FRACTION = 0.1
#: busbw rising this much per doubling of the size, from the last low row to the first that
#: reaches the band, and _STEP_OVER_RAMP times the rise per doubling just before it, is a step,
#: not a late ramp: a start-up cost a (t = a + S/B) makes the rise per doubling, 2(a + x) /
#: (a + 2x), fall as the size x grows, never rise. At that point the published healthy runs rise
#: under 1.5x where they rise over 1.25x the step before (ALCF's all-gather 1.29x after 0.98x,
#: Snellius 1.27x after 1.08x), and over it only after a larger rise (8 x H100 send/recv 1.84x
#: after 1.99x); tests/logs/test_nccl_check.py re-derives it. A p5 run slowed 1.6x at 64-512 MiB
#: rises 1.80x to 1 GiB after 1.14x.
_STEP_RISE = 1.5
_STEP_OVER_RAMP = 1.25


def _rise(low: RowCheck, high: RowCheck) -> float:
    """busbw's rise from ``low`` to ``high``, per doubling of the size."""
    doublings = math.log2(high.size_bytes / low.size_bytes)
    if doublings <= 0 or low.measured_busbw_GBps <= 0:
        return 1.0
    return float((high.measured_busbw_GBps / low.measured_busbw_GBps) ** (1 / doublings))


def _amd_node(ctx: RunContext) -> bool:
    """Whether the run is judged on an AMD node (CDNA GPUs: xGMI, no NVLink SHARP)."""
    system = ctx.cluster.system
    return system is not None and system.gpu_arch.startswith("cdna")


def _some_rows_low(
    bw: Sequence[RowCheck],
    below: Sequence[RowCheck],
    low: Sequence[RowCheck],
    band: Band,
    before: RowCheck | None = None,
) -> Finding:
    """Most large sizes fine, some (``below``) under the ok threshold (``low``: those of them
    outside the error band): a late ramp, rows the model's error covers, or an unsteady run.
    Every row below the threshold is counted and listed, inside the band or not: sendrecv on 8
    H100 (sweep 21) had
    been told 'the larger ones reach it' of its 64 MiB row while 128 MiB, inside the band, read
    51 %, and rows inside the band had been left without any finding."""
    evidence = first_of(
        [
            f"{fmt_size(r.size_bytes)}: {r.measured_busbw_GBps:.1f} GB/s against "
            f"{r.expected_busbw_GBps:.1f} GB/s expected ({eff_pct(r.efficiency)}, line {r.line})"
            for r in below
        ],
        "size",
        limit=4,
    )
    lines = [r.line for r in below]
    dips = before is not None and below[0].measured_busbw_GBps < before.measured_busbw_GBps * (
        1 - _DIP_FRACTION
    )
    smallest = (
        "the smallest of the large sizes falls below "
        if len(below) == 1
        else f"the smallest {len(below)} of {len(bw)} large sizes fall below "
    ) + f"{pct(band.ok)} of the expected busbw"
    if list(below) == list(bw[: len(below)]) and dips:
        assert before is not None  # dips says so
        return Finding(
            kind="low_bandwidth",
            cause=f"{smallest} and under the "
            f"{before.measured_busbw_GBps:.1f} GB/s of {fmt_size(before.size_bytes)}, the larger "
            "ones reach it: a dip, not a late ramp (interference, congestion or a transport "
            "stalling at those sizes)",
            confidence="low",
            severity="warning",
            evidence=evidence,
            lines=lines,
        )
    ramp = [*([before] if before is not None else []), *below]
    if list(below) == list(bw[: len(below)]) and len(below) < len(bw) and len(ramp) >= 2:
        reached = bw[len(below)]
        step, rising = _rise(below[-1], reached), _rise(ramp[-2], ramp[-1])
        if step >= _STEP_RISE and step > rising * _STEP_OVER_RAMP:
            return Finding(
                kind="low_bandwidth",
                cause=f"{smallest}, then busbw steps up {step:.2f}x per doubling of the size "
                f"from {fmt_size(below[-1].size_bytes)} to {fmt_size(reached.size_bytes)}, "
                f"after {rising:.2f}x just before: a step, not a late ramp (a start-up cost "
                "makes busbw rise less at each doubling, not more); the low sizes ran slow "
                "(interference, congestion or a transport stalling at those sizes)",
                confidence="low",
                severity="warning",
                evidence=[
                    *evidence,
                    f"{fmt_size(reached.size_bytes)}: {reached.measured_busbw_GBps:.1f} GB/s "
                    f"({eff_pct(reached.efficiency)}, line {reached.line})",
                ],
                lines=lines,
            )
    if list(below) == list(bw[: len(below)]):
        # only the smallest sizes of the regime: NCCL switches protocol or algorithm later
        # than the model (its tuner constants differ between versions), not a fault
        return Finding(
            kind="low_bandwidth",
            cause=f"{smallest}, the larger ones reach it: {LATE_RAMP} ("
            + (
                "NCCL's protocol and algorithm switch points differ from its tuner model"
                if len({r.choice for r in bw}) > 1
                else f"the model has {bw[0].choice} at every one of them, so no switch point "
                "explains it: the start-up is slower than modelled"
            )
            + "), not a configuration fault",
            confidence="medium",
            severity="info",
            evidence=evidence,
            lines=lines,
        )
    count = f"{len(below)} of {len(bw)} large sizes below {pct(band.ok)} of the expected busbw, "
    if not low:
        return Finding(
            kind="low_bandwidth",
            cause=count + "scattered among sizes that reach it and inside the model's error "
            "band: within what published runs of this kind measure, not judged a fault",
            confidence="low",
            severity="info",
            evidence=evidence,
            lines=lines,
        )
    return Finding(
        kind="low_bandwidth",
        cause=count + "scattered among sizes that reach it: an unsteady run (other jobs, "
        "throttling, a congested link) more than a configuration fault",
        confidence="low",
        severity="warning",
        evidence=evidence,
        lines=lines,
    )


def _rate_finding(
    ctx: RunContext,
    bw: Sequence[RowCheck],
    headline: str,
    scored: Sequence[_Scored],
    severity: Severity,
    *,
    median_eff: float,
) -> Finding:
    """No named fault explains the rows: fit the rate of the limiting link instead
    (``median_eff``: the rows' median efficiency, as the headline gives it)."""
    cluster = ctx.cluster
    ruled_out = [
        f"re-run with {s.hypothesis.key}: {s.predicted:.1f} GB/s (does not fit: "
        f"{_misfit(s, len(bw))})"
        for s in scored
        # a what-if that moves no time tests nothing: it had been listed as 'host_pcie=pcie4:
        # 139.4 GB/s (does not fit)', the expectation's own figure. It still counts where a
        # run slower than it is flagged (dropping it there had silenced 2 x GH200 slowed
        # 1.25-1.6x: a review)
        if s.changed
    ]
    candidates: list[tuple[str, Link, str]] = []
    if ctx.multi and cluster.inter is not None:
        candidates.append(("network", cluster.inter, "efficiency"))
    if cluster.intra is not None and cluster.topology.m > 1:
        candidates.append(("scale-up", cluster.intra, "efficiency"))
        up = cluster.topology.up
        if cluster.intra.nvls_efficiency is not None and up is not None and up.nvls_bw_Bps:
            candidates.append(("nvls", cluster.intra, "nvls_efficiency"))
    fits: list[tuple[float, str, Link, str, float, list[QuickEstimate | None]]] = []
    for what, link, field in candidates:
        fitted = _fit_scale(ctx, link, field, bw)
        if fitted is not None and fitted[0] > _FIT_FLOOR:
            value, error, ests = fitted
            fits.append((error, what, link, field, value, ests))
    if not fits:
        return Finding(
            kind="low_bandwidth",
            cause="large sizes well below the expected busbw, and no modelled fault explains it",
            confidence="low",
            severity=severity,
            evidence=[headline, *ruled_out],
            lines=[r.line for r in bw],
        )
    # a fit that sits on the search bound or misses the rows explains nothing
    good = [f for f in fits if f[0] <= BANDWIDTH_TOLERANCE]
    if not good:
        best_fit = min(fits, key=lambda f: f[0])
        return Finding(
            kind="low_bandwidth",
            cause="large sizes well below the expected busbw, and no modelled fault explains it",
            confidence="low",
            severity=severity,
            evidence=[
                headline,
                *ruled_out,
                f"the closest single rate change ({best_fit[2].id} {best_fit[3]} = "
                f"{best_fit[4]:.3g}) still misses the rows by {pct(best_fit[0])}",
            ],
            lines=[r.line for r in bw],
        )
    # the smallest departure from the catalogue that reproduces the rows is the likeliest
    good.sort(key=lambda f: abs(math.log(f[4] / float(getattr(f[2], f[3])))))
    error, what, link, field, value, ests = good[0]
    current = getattr(link, field)
    assert isinstance(current, float)
    evidence = [headline, *ruled_out]
    confidence: Confidence = "medium" if error <= BANDWIDTH_TOLERANCE else "low"
    if what == "network":
        nic_GBps = link.per_direction_Bps * value / GB
        nics = cluster.nics_per_node
        one_nic = min(link.achievable_Bps, _host_cap(cluster)) / GB
        evidence.append(
            f"the rows fit a network of {nic_GBps:.2f} GB/s per NIC ({nics} per node: "
            f"{nic_GBps * nics:.1f} GB/s per node) where the catalogue gives "
            f"{fixed(link.achievable_Bps / GB, 1)} GB/s per NIC (the fit within {pct(error)} of "
            "the rows, median)"
        )
        evidence += ctx.env_evidence()
        short = ctx.env.port_shortfall
        if nic_GBps * nics < one_nic * 0.9:
            cause = (
                "less than one NIC's worth of network bandwidth per node: the traffic is not "
                "on the RDMA NICs (NCCL fell back to its TCP socket transport: the network "
                "plugin not loaded, NCCL_IB_DISABLE, or a container without the NIC devices), "
                "or GPUDirect RDMA is off"
            )
        elif short is not None and _PORT_LOSS_FLOOR <= median_eff <= _PORT_LOSS_CEILING:
            cause = (
                f"a network port missing: {short.value} (line {short.line}), down or excluded; "
                "the channels of its GPUs share another NIC, and the collective runs at the "
                f"slowest channel's pace (the rows fit {pct(value / current)} of the expected "
                "rate per NIC)"
            )
        elif value / current >= _MODEST:
            cause = (
                f"the network delivers {pct(value / current)} of the rate per NIC the model "
                f"expects: {NOT_BROKEN} (fewer channels or QPs per "
                "NIC, an older NCCL or plugin, MTU, congestion)"
            )
        else:
            cause = (
                f"the network delivers {pct(value / current)} of the expected rate per NIC: "
                "slower links (check the port speed), link errors, congestion, or an older "
                "NCCL or network plugin"
            )
        # the socket transport's own diagnosis does not rest on the assumed network: the log
        # shows it
        socket = ctx.env.socket_network is not None
        if not ctx.network_known and not (socket and nic_GBps * nics < one_nic * 0.9):
            confidence = "low"
    elif what == "nvls":
        cause = (
            f"NVLS reductions run at {pct(value / current)} of the expected rate: NVLink "
            "or NVSwitch degraded, or NCCL using fewer channels"
        )
        evidence.append(
            f"the rows fit an NVLS efficiency of {value:.3f} where the catalogue gives "
            f"{current:.3f} (the fit within {pct(error)} of the rows, median)"
        )
    else:
        per_gpu = link.per_direction_Bps * value / GB
        if value / current >= _MODEST:
            cause = (
                f"the scale-up fabric delivers {pct(value / current)} of the rate the model "
                f"expects ({per_gpu:.0f} GB/s per GPU instead of "
                f"{fixed(link.achievable_Bps / GB, 0)} GB/s): {NOT_BROKEN} "
                "(fewer channels, clocks, GPUs on different sockets, one process driving "
                "several GPUs)"
            )
        else:
            cause = (
                f"the scale-up fabric delivers {pct(value / current)} of the expected rate "
                f"({per_gpu:.0f} GB/s per GPU instead of {fixed(link.achievable_Bps / GB, 0)} "
                "GB/s): "
                "links down or degraded, or traffic through the host"
            )
        evidence.append(
            f"the rows fit {link.id} at {per_gpu:.1f} GB/s per GPU per direction "
            f"(the fit within {pct(error)} of the rows, median)"
        )
    network = next((f for f in good if f[1] == "network"), None)
    if what != "network" and network is not None and not ctx.network_known:
        # the unseen network reproduces the rows too: a 2 x MI355X run slowed 2x throughout,
        # its network assumed, had been put down to the xGMI links at medium confidence
        confidence = "low"
        nic = network[2].per_direction_Bps * network[4] / GB
        evidence.append(
            f"the network, which the log does not show, fits them as well: {nic:.2f} GB/s per "
            f"{network[2].id} NIC (within {pct(network[0])})"
        )
    return Finding(
        kind="low_bandwidth",
        cause=cause,
        confidence=confidence,
        severity=severity,
        evidence=evidence,
        lines=[r.line for r in bw],
        hypothesis=f"{link.id}.{field}={value:.3g}",
        fit_error=error,
        curve=_curve(ctx.rows, ests),
    )


def _fit_scale(
    ctx: RunContext, link: Link, field: str, rows: Sequence[RowCheck]
) -> tuple[float, float, list[QuickEstimate | None]] | None:
    """The value of ``link.<field>`` (an efficiency) that best reproduces ``rows``' times:
    (value, median relative error, the model's numbers at every checked size)."""
    measured = [r.measured_time_us * 1e-6 for r in rows]
    sizes = [r.size_bytes for r in rows]

    def cost(value: float) -> float:
        cat = catalogue_with_link(ctx.catalogue, link.id, **{field: value})
        try:
            cluster = resolve_cluster(cat, ctx.cluster.spec)
        except IbcalcError:
            return math.inf
        times = predict_times(
            cluster,
            ctx.collective,
            sizes,
            dtype=ctx.dtype,
            params=ctx.params,
            algorithm=ctx.algorithm,
        )
        total = 0.0
        for m, t in zip(measured, times, strict=True):
            if t is None:
                return math.inf
            total += math.log(m / t) ** 2
        return total

    best = minimize_scalar(cost, 1e-3, 1.0, log_scale=True)
    if not math.isfinite(best.cost):
        return None
    cat = catalogue_with_link(ctx.catalogue, link.id, **{field: best.x})
    cluster = resolve_cluster(cat, ctx.cluster.spec)
    _, ests = ctx.quick_under(cluster)
    errors = [
        abs(math.log(r.measured_time_us * 1e-6 / e.time_s))
        for r, e in zip(ctx.rows, ests, strict=True)
        if e is not None and r.regime == "bandwidth"
    ]
    return best.x, math.expm1(statistics.median(errors)) if errors else math.nan, ests


def _host_cap(cluster: ResolvedCluster) -> float:
    return cluster.host_pcie.achievable_Bps if cluster.host_pcie is not None else math.inf
