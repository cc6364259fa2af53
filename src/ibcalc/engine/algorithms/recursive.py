"""Recursive halving-doubling (Rabenseifner) and NCCL's PAT.

* Recursive halving-doubling (Thakur, Rabenseifner, Gropp, IJHPCA 19(1), 2005;
  docs/model.md#recursive-halving-doubling): all-reduce = reduce-scatter by recursive halving +
  all-gather by recursive doubling; all-gather or reduce-scatter alone is one of the two phases. For
  p = 2^k ranks step j exchanges S/2^(j+1) with the partner at distance p/2^(j+1). Taking the far
  (cross-domain) partners first puts ``(N-1)/N x S`` of each phase on the network, at the GPU's NIC
  share ``nics x B_nic / m``, and ``(m-1)/(m N) x S`` on the scale-up link. With s sites the first
  steps cross the WAN: ``(s-1)/s x S`` at the GPU's share of its site's WAN. Latency: ``lg p`` steps
  per phase, each a WAN, network or intra-domain hop. A non-power-of-two count folds the surplus
  ranks in before and out after (:func:`fold_in_factor`) and runs on the power-of-two core
  (:func:`rhd_core`; docs/model.md#recursive-halving-doubling).
* PAT (Jeaugey, arXiv:2506.20252; NCCL 2.30.7; docs/model.md#pat): all-gather and
  reduce-scatter with one GPU per node only, Simple; bandwidth x 0.75;
  latency ``8 us + log2(N) x net / 3.5 + 2.8 us x n``.
"""

from __future__ import annotations

import math

from ibcalc.engine.base import (
    Timing,
    Topology,
    base_latency,
    base_term,
    gbps,
    hop_terms,
    intra_hop_latency,
    latency_words,
    make_cost,
    net_hop_detail,
    net_hop_latency,
    network_words,
    us,
    wan_hop_latency,
)
from ibcalc.engine.params import CostParams
from ibcalc.engine.types import Algorithm, Collective, Cost, Protocol, Term
from ibcalc.units import format_number, format_size

__all__ = ["core_scales", "fold_in_bw", "fold_in_factor", "pat_timing", "rhd_core", "rhd_timing"]


def core_scales(collective: Collective, topo: Topology) -> tuple[float, float]:
    """How much more the core of an all-gather or reduce-scatter moves over the network and
    over the scale-up link than its even share, ``(N'-1)/N' x S`` and ``(m-1)/(m N') x S``, once
    the surplus has folded in: the surplus ranks' partners hold two blocks of S/n, and each
    exchange lasts as long as the larger side's holding.

    On one tier (one domain, or one GPU per domain) the best placement of the doubled ranks
    gives, at step j of lg p', ceil(n / 2^j) blocks on one side (3 ranks: 2S/3, so S/3 + 2S/3 +
    S = 2S, review BI; 5 ranks: (3 + 2)/5 = S, review BJ). Across domains of m GPUs whole
    surplus domains fold into core domains, so the first r = n - p' core ranks hold two: at
    step j (near partners first for the all-gather's doubling, the reduce-scatter's halving the
    mirror) a side holds 2^(j-1) + min(2^(j-1), r) blocks, the first lg m steps inside the
    domain and the rest over the network (5 x 8 GPUs: S over the network, where the even
    share scaled alike had given 0.77 S, review BK). An all-reduce's fold-in reduces the
    vectors first, so its core's blocks are even: (1, 1)."""
    core_m, core_n, narrowed = rhd_core(topo)
    n = topo.ranks
    if not narrowed or collective is Collective.ALL_REDUCE:
        return 1.0, 1.0
    pow2 = core_m * core_n
    steps = int(math.log2(pow2))
    if core_m == 1 or core_n == 1:  # one tier
        blocks = sum(-(-n // (1 << j)) for j in range(1, steps + 1))
        scale = (blocks / n) / ((pow2 - 1) / pow2)
        return scale, scale
    r = n - pow2
    held = [(1 << (j - 1)) + min(1 << (j - 1), r) for j in range(1, steps + 1)]
    inside = int(math.log2(core_m))
    intra_even = (core_m - 1) / (core_m * core_n)
    net_even = (core_n - 1) / core_n
    return (sum(held[inside:]) / n) / net_even, (sum(held[:inside]) / n) / intra_even


def fold_in_bw(topo: Topology, narrowed: bool, net_share: float, up_bw: float) -> float:
    """The rate a surplus rank folds in at: whole domains over the GPU's NIC share, GPUs of one
    domain over the scale-up link (:func:`rhd_core`); the slower of the two where the core is
    not narrowed (several sites, or m no power of two)."""
    if narrowed:
        return net_share if topo.domains > 1 else up_bw
    return min(net_share, up_bw)


def fold_in_factor(collective: Collective, n: int) -> float:
    """Bytes a surplus rank and its partner exchange, in units of S, folding in before the
    core runs and out after: an all-reduce's whole vector each way (2), an all-gather's S/n
    piece in and the gathered S back, a reduce-scatter's S in and its S/n block back (1 + 1/n;
    it had been 2 for every collective, review BH)."""
    return 2.0 if collective is Collective.ALL_REDUCE else 1.0 + 1.0 / n


def rhd_core(topo: Topology) -> tuple[int, int, bool]:
    """The core recursive halving-doubling runs on once the surplus ranks of a count that is
    not a power of two have folded in (Thakur, Rabenseifner and Gropp 2005, section 4.1): its
    GPUs per domain and domains, and whether it is smaller than the whole. On one site with a
    power-of-two m that is pow2 / m whole domains (the surplus domains fold in over the
    network), on one domain pow2 of its GPUs (over the scale-up link); elsewhere (several
    sites, or m no power of two) every domain stays in the core. The core had not been
    narrowed, so the surplus counted twice: 3 x 1 GPU took 73.5 ms for 1 GiB, not 66 (review
    BD)."""
    m, big_n, n = topo.m, topo.domains, topo.ranks
    pow2 = 1 << int(math.log2(n))
    if pow2 != n and topo.sites == 1 and (big_n == 1 or m & (m - 1) == 0):
        return (m, pow2 // m, True) if big_n > 1 else (pow2, 1, True)
    return m, big_n, False


def rhd_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of recursive halving-doubling (all-reduce, all-gather, reduce-scatter).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if protocol is not Protocol.SIMPLE or topo.ranks < 2:
        return None
    if collective not in (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    m, big_n, n = topo.m, topo.domains, topo.ranks
    phases = 2 if collective is Collective.ALL_REDUCE else 1
    pow2 = 1 << int(math.log2(n))
    net_share = topo.domain_bw_Bps("uniform") / m
    up_bw = topo.up_bw_Bps()
    sites = topo.sites
    core_m, core_n, narrowed = rhd_core(topo)
    local_n = core_n // sites  # domains per site (of the core)
    net_scale, intra_scale = core_scales(collective, topo)
    wan_bytes = (sites - 1) / sites * size_bytes
    net_bytes = net_scale * (local_n - 1) / local_n * size_bytes / sites if local_n > 1 else 0.0
    intra_bytes = intra_scale * (core_m - 1) / (core_m * core_n) * size_bytes if core_m > 1 else 0.0
    wan_share = min(topo.wan_bw_Bps(params) / (n // sites), net_share)
    transfer = phases * (wan_bytes / wan_share + net_bytes / net_share + intra_bytes / up_bw)
    wan_steps = math.ceil(math.log2(sites)) if sites > 1 else 0
    net_steps = math.ceil(math.log2(local_n)) if local_n > 1 else 0
    intra_steps = math.ceil(math.log2(core_m)) if core_m > 1 else 0
    latency = base_latency(Algorithm.RING, protocol, params) + phases * (
        wan_steps * wan_hop_latency(topo, Algorithm.RING, protocol, params)
        + net_steps
        * (
            net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
            if big_n > 1
            else 0.0
        )
        + intra_steps * intra_hop_latency(topo, Algorithm.RING, protocol, params)
    )
    if pow2 != n:
        # whole domains fold in over the network, GPUs of one domain over the scale-up link
        slowest = fold_in_bw(topo, narrowed, net_share, up_bw)
        transfer += fold_in_factor(collective, n) * size_bytes / slowest
        hop = (
            net_hop_latency(topo, Algorithm.RING, protocol, size_bytes, params)
            if big_n > 1
            else (intra_hop_latency(topo, Algorithm.RING, protocol, params))
        )
        latency += 2 * hop

    def explain() -> Cost:
        where = (
            f"network (NIC share per GPU{network_words(topo, 'uniform', inside=True)})"
            if net_bytes / net_share >= intra_bytes / up_bw
            else ("scale-up")
        )
        if wan_bytes / wan_share > max(net_bytes / net_share, intra_bytes / up_bw):
            where = "WAN between sites (share per GPU)"
        times = f"{phases} phases x " if phases > 1 else ""
        step = "steps per phase" if phases > 1 else "steps"

        def hops(rows: list[tuple[str, float, str]]) -> list[Term]:
            return hop_terms(
                rows,
                topo,
                algorithm=Algorithm.RING,
                protocol=protocol,
                size_bytes=size_bytes,
                params=params,
            )

        terms = [base_term(Algorithm.RING, protocol, params)]
        for name, count, kind, words in (
            ("WAN steps", wan_steps, "wan", f"lg s = {wan_steps} {step}"),
            (
                "network steps",
                net_steps,
                "net",
                f"lg N = {net_steps} {step}"
                if sites == 1 and core_n == big_n
                else f"lg {core_n} = {net_steps} {step} (the core of {core_n} {topo.node}s)"
                if sites == 1
                else f"lg(N/s) = lg {local_n} = {net_steps} {step} ({topo.node}s of a site)",
            ),
            (
                f"steps inside {topo.node}s",
                intra_steps,
                "intra",
                f"lg m = {intra_steps} {step}"
                if core_m == m
                else f"lg {core_m} = {intra_steps} {step} (the core of {core_m} GPUs)",
            ),
        ):
            for found in hops([(name, phases * count, kind)]):
                terms.append(found.model_copy(update={"detail": f"{times}{words}; {found.detail}"}))
        nics = (
            f"{topo.out.nics_per_domain} x {topo.out.link_id} / {m}" if topo.out is not None else ""
        )
        net_words = (
            ("(N-1)/N x S" if core_n == big_n else f"({core_n}-1)/{core_n} x S")
            if sites == 1
            else f"(N/s-1)/(N/s) x S/s (N/s {topo.node}s per site)"
        )
        for name, moved, bw, words, scale in (
            ("WAN transfer", wan_bytes, wan_share, "(s-1)/s x S crosses the WAN", 1.0),
            (
                "network transfer",
                net_bytes,
                net_share,
                f"{net_words} goes to the far partners over the GPU's share of the NICs ({nics})",
                net_scale,
            ),
            (
                f"transfer inside {topo.node}s",
                intra_bytes,
                up_bw,
                (
                    "(m-1)/(mN) x S"
                    if (core_m, core_n) == (m, big_n)
                    else f"({core_m}-1)/({core_m} x {core_n}) x S"
                )
                + f" goes to the partners inside the {topo.node}",
                intra_scale,
            ),
        ):
            if moved > 0:
                terms.append(
                    Term(
                        name=name,
                        seconds=phases * moved / bw,
                        detail=f"{times}{words}"
                        + (
                            f", x {format_number(scale)} (after the fold-in the core's blocks "
                            "are uneven: each exchange lasts as long as the larger holding)"
                            if scale != 1.0
                            else ""
                        )
                        + f": {format_size(moved)} per GPU"
                        f"{' per phase' if phases > 1 else ''} at {gbps(bw)}",
                    )
                )
        if pow2 != n:
            kind = "net" if big_n > 1 else "intra"
            terms += hops([("fold-in hops", 2, kind)])
            terms.append(
                Term(
                    name="fold-in transfer",
                    seconds=fold_in_factor(collective, n) * size_bytes / slowest,
                    detail=f"{n} ranks is not a power of two: the {n - pow2} surplus "
                    + ("ranks fold " if n - pow2 > 1 else "rank folds ")
                    + {
                        Collective.ALL_REDUCE: "S in before, and S comes back after",
                        Collective.ALL_GATHER: "S/n in before, and the gathered S comes back after",
                        Collective.REDUCE_SCATTER: "S in before, and an S/n block comes back after",
                    }[collective]
                    + f", {format_number(fold_in_factor(collective, n))} x "
                    f"{format_size(size_bytes)} at {gbps(slowest)} "
                    + (
                        "(the slower tier)"
                        if (core_m, core_n) == (m, big_n)
                        else f"(the core runs on the other {pow2})"
                    ),
                )
            )
        return make_cost(
            Algorithm.RHD,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=where,
            terms=terms,
            latency_words=latency_words(topo, protocol, size_bytes, params),
            formula=(
                "phases x ((N-1)/N S / (nics B_nic/m) + (m-1)/(mN) S / B_up) + lg p hops per phase"
            ),
            # across domains the far steps put (N-1)/N S on the network and only (m-1)/(mN) S
            # on the scale-up link, so busbw's (n-1)/n factor is a node-level equivalent for
            # every collective (a property test found RS busbw above min(B_up, nics B_nic));
            # with one GPU per domain every step is on the network, 2(n-1)/n S as a ring's
            equivalent=big_n > 1 and topo.m > 1,
        )

    return Timing(Algorithm.RHD, protocol, latency, transfer, explain)


def pat_timing(
    collective: Collective,
    size_bytes: float,
    topo: Topology,
    protocol: Protocol,
    params: CostParams,
) -> Timing | None:
    """Cost of PAT all-gather / reduce-scatter (one GPU per node, Simple).

    Returns its numbers; the explanation (``Timing.cost()``) is built on demand.
    """
    if collective not in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER):
        return None
    if protocol is not Protocol.SIMPLE or topo.m != 1 or topo.domains < 2 or topo.wan is not None:
        return None
    n = topo.ranks
    bw = topo.domain_bw_Bps("uniform") * params.nccl_tuner.pat_factor
    latency = (
        base_latency(Algorithm.PAT, protocol, params)
        + math.log2(topo.domains)
        * net_hop_latency(topo, Algorithm.PAT, protocol, size_bytes, params)
        / params.nccl_tuner.pat_net_divisor
        + params.nccl_tuner.pat_per_rank_s * n
    )
    transfer = (n - 1) / n * size_bytes / bw

    def explain() -> Cost:
        tuner = params.nccl_tuner
        steps = math.log2(topo.domains)
        net = net_hop_latency(topo, Algorithm.PAT, protocol, size_bytes, params)
        terms = [
            base_term(Algorithm.PAT, protocol, params),
            Term(
                name="network steps",
                seconds=steps * net / tuner.pat_net_divisor,
                detail=f"log2(N) = {steps:.3g} steps x {us(net)} / {tuner.pat_net_divisor:g} "
                "(NCCL's PAT model: its steps overlap); "
                + net_hop_detail(topo, Algorithm.PAT, protocol, size_bytes, params),
            ),
            Term(
                name="per rank",
                seconds=tuner.pat_per_rank_s * n,
                detail=f"{n} ranks x {us(tuner.pat_per_rank_s)} (NCCL's PAT model)",
            ),
            Term(
                name="transfer",
                seconds=transfer,
                detail=f"(n-1)/n x S = {format_size((n - 1) / n * size_bytes)} per GPU at "
                f"{gbps(bw)}: the {topo.node}'s network {gbps(topo.domain_bw_Bps('uniform'))} x "
                f"{tuner.pat_factor:g} (NCCL's PAT bandwidth factor)",
            ),
        ]
        return make_cost(
            Algorithm.PAT,
            protocol,
            latency_s=latency,
            transfer_s=transfer,
            bottleneck=(
                f"network (one GPU per {topo.node}{network_words(topo, 'uniform', inside=True)})"
            ),
            formula="(n-1)/n S / (0.75 B_nic) + 8 us + log2(N) net/3.5 + 2.8 us x n",
            terms=terms,
            latency_words=latency_words(topo, protocol, size_bytes, params),
        )

    return Timing(Algorithm.PAT, protocol, latency, transfer, explain)
