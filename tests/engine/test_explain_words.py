"""Words of the derivation that name where a constant comes from."""

from __future__ import annotations

import dataclasses
import re

import pytest

from ibcalc.catalogue.cost_params import builtin_cost_params
from ibcalc.catalogue.models import Catalogue
from ibcalc.cluster.resolve import resolve_cluster
from ibcalc.cluster.spec import ClusterSpec
from ibcalc.engine.types import Collective
from ibcalc.errors import IbcalcError
from ibcalc.facade import CollectivePlan, estimate_on


def _terms(catalogue: Catalogue, system: str) -> str:
    cluster = resolve_cluster(catalogue, ClusterSpec(system=system, nodes=1))
    est = estimate_on(cluster, Collective.ALL_REDUCE, 1e6)
    return " ".join(term.detail for term in est.best.terms)


def test_a_link_priced_on_the_tuners_nvlink_row_is_named(builtin_catalogue: Catalogue) -> None:
    """MI300X's xGMI takes NCCL's (and RCCL's) NVLink hop latency: the derivation had said
    'NCCL nvlink hop' with no word of xGMI. NVLink and PCIe links keep the plain wording."""
    assert "xgmi-mi300x is priced on that row" in _terms(builtin_catalogue, "mi300x-8")
    assert "priced on that row" not in _terms(builtin_catalogue, "dgx-a100")
    assert "priced on that row" not in _terms(builtin_catalogue, "pcie-8gpu")


def test_levels_and_steps_across_sites_say_what_they_count(builtin_catalogue: Catalogue) -> None:
    """4 x DGX H100 on 2 sites: the tree's node levels read '2 x 1 level (log2 of 4 nodes)'
    though log2 4 = 2 (one of the two is the WAN level, its own term); halving-doubling's
    network steps read 'lg N = 1' with N = 4 (they are lg of the 2 nodes of a site), and its
    transfers gave a phase's bytes beside both phases' time (500 MB at 0.524 GB/s beside
    1.91 s). Each now says what it counts, and the seconds match the words."""
    spec = ClusterSpec(
        system="dgx-h100", nodes=4, sites=2, wan="wan-100g", wan_links=8, wan_latency_s=4e-3
    )
    cluster = resolve_cluster(builtin_catalogue, spec)
    tree = estimate_on(cluster, Collective.ALL_REDUCE, 2**20, algorithm="tree")
    terms = {t.name: t for t in tree.best.terms}
    assert "2 x 1 level (log2 of 4 nodes = 2, less 1 across sites)" in (
        terms["tree levels across nodes"].detail
    )
    assert terms["tree levels across sites"].detail.startswith("2 x 1 level (log2 of 2 sites)")
    rhd = estimate_on(cluster, Collective.ALL_REDUCE, 1e9, algorithm="rhd")
    terms = {t.name: t for t in rhd.best.terms}
    assert "lg(N/s) = lg 2 = 1 steps per phase (nodes of a site)" in terms["network steps"].detail
    wan = terms["WAN transfer"]
    assert "2 phases x (s-1)/s x S crosses the WAN: 500 MB per GPU per phase at" in wan.detail
    rate_Bps = float(wan.detail.rsplit(" at ", 1)[1].split(" GB/s")[0]) * 1e9
    assert wan.seconds == pytest.approx(2 * 0.5e9 / rate_Bps, rel=1e-2)


def test_a_wan_bound_transfer_reads_as_one_clause_list(builtin_catalogue: Catalogue) -> None:
    """A transfer bound by a short WAN's links (not by NCCL's buffers in flight) had an empty
    clause appended: '(11.25 GB/s usable); ; a collective this small gets 1 of the 16 channels'.
    16 x A3 Mega on 2 sites, 1 x wan-100g each, 20 us round trip: 11.25 GB/s usable a site."""
    spec = ClusterSpec(system="gcp-a3-mega", nodes=16, sites=2, wan="wan-100g", wan_latency_s=1e-5)
    cluster = resolve_cluster(builtin_catalogue, spec)
    ring = estimate_on(cluster, Collective.BROADCAST, 512 * 1024, algorithm="ring", protocol="ll")
    (transfer,) = [t for t in ring.best.terms if t.name == "transfer"]
    assert "WAN: 1 x wan-100g per site (11.25 GB/s usable); a collective this small gets" in (
        transfer.detail
    )
    tree = estimate_on(cluster, Collective.ALL_REDUCE, 512 * 1024, algorithm="tree")
    assert not [t for t in tree.best.terms if "; ;" in t.detail]


def test_the_channel_share_is_printed_so_that_the_rate_chain_multiplies_out() -> None:
    """One of 8 channels is x 0.125 of the bandwidth, not 'x 0.12' (2 digits), which left the
    stated chain 4 % off the printed rate; one of 16 is x 0.0625, not 'x 0.062'."""
    from ibcalc.engine.pipeline import ChannelUnit, trimmed_text

    unit = ChannelUnit(512, 8)
    assert trimmed_text(1, 8, unit).endswith("bandwidth x 0.125)")
    assert trimmed_text(1, 16, unit).endswith("bandwidth x 0.0625)")
    assert trimmed_text(8, 8, unit) == ""


def test_the_channel_unit_multiplies_out_with_the_rings_rank_factor(
    builtin_catalogue: Catalogue,
) -> None:
    """A ring/LL all-reduce of 8 B on 2 x DGX H100 (16 ranks) gets a channel per 64 KiB: NCCL's
    512 LL threads x 8 B per thread x 16 ranks (its ring LL threshold is multiplied by the rank
    count) = 65536 B. The derivation had said 'one per 64 KiB = threads x bytes-per-thread
    threshold', which multiplies out to 4 KiB; a tree/LL one gets a channel per 512 x 8 B =
    4 KiB, with no rank factor."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    ring = estimate_on(cluster, Collective.ALL_REDUCE, 8, algorithm="ring", protocol="LL")
    (transfer,) = [t for t in ring.best.terms if t.name == "transfer"]
    assert 512 * 8 * 16 == 64 * 1024
    assert (
        "gets 1 of the 16 channels (NCCL gives one per 64 KiB = 512 threads x 8 B per thread "
        "x 16 ranks (the ring's LL threshold is multiplied by the rank count); "
        "bandwidth x 0.0625)"
    ) in transfer.detail
    tree = estimate_on(cluster, Collective.ALL_REDUCE, 8, algorithm="tree", protocol="LL")
    (transfer,) = [t for t in tree.best.terms if t.name == "transfer"]
    assert "(NCCL gives one per 4 KiB = 512 threads x 8 B per thread; bandwidth x 0.0625)" in (
        transfer.detail
    )


def test_the_ring_plateau_is_listed_before_the_terms_it_does_not_scale(
    builtin_catalogue: Catalogue,
) -> None:
    """4 x DGX H100, 8 GiB ring/Simple all-reduce: NCCL's x1.4 plateau scales base and steps
    (8.4 + 56 x 3.4 + 6 x 14 = 282.8 us -> 113.1 us more), not the proxy operations (16
    channels x 0.6 us); listed after them, it had read as if it covered them (a review)."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=4))
    est = estimate_on(
        cluster, Collective.ALL_REDUCE, 8 * 2**30, algorithm="ring", protocol="simple"
    )
    names = [t.name for t in est.best.terms]
    plateau = names.index("ring plateau")
    assert names[plateau + 1] == "proxy operations"
    before = sum(t.seconds for t in est.best.terms[:plateau])
    assert before == pytest.approx((8.4 + 56 * 3.4 + 6 * 14) * 1e-6, rel=1e-3)
    assert est.best.terms[plateau].seconds == pytest.approx(0.4 * before, rel=1e-9)
    # the term multiplies out from what it prints: (1.4 - 1) x 283 us = 113 us ('x1.4 on the
    # latency above' had read as 1.4 x 283 us = 396 us beside a 113 us term)
    assert est.best.terms[plateau].seconds == pytest.approx(0.4 * 282.8e-6, rel=1e-3)
    assert est.best.terms[plateau].detail == (
        "(1.4 - 1) x 283 us, the latency above: NCCL's ring plateau, x1.4 on several nodes, "
        "Simple, once a channel's share reaches 64 B (nccl_tuner.ring_plateau_factor)"
    )


def test_the_ring_plateau_is_nccls_1_9_on_gpus_before_sm80(builtin_catalogue: Catalogue) -> None:
    """NCCL's ring plateau is x1.4 from SM80 and x1.9 on older GPUs (NCCL 2.30.7
    ncclTopoGetAlgoTime); the model had applied 1.4 to Volta and Turing too (an audit). On 4 x
    DGX-1V (Volta) a 1 MiB ring/Simple all-reduce's plateau is 0.9 x the latency above it, on
    4 x DGX A100 0.4 x, and the same quick path gives the same time."""
    for system, extra in (("dgx-1v", 0.9), ("dgx-a100", 0.4)):
        cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system=system, nodes=4))
        est = estimate_on(
            cluster, Collective.ALL_REDUCE, 2**20, algorithm="ring", protocol="simple"
        )
        names = [t.name for t in est.best.terms]
        plateau = names.index("ring plateau")
        before = sum(t.seconds for t in est.best.terms[:plateau])
        assert est.best.terms[plateau].seconds == pytest.approx(extra * before, rel=1e-9), system
        detail = est.best.terms[plateau].detail
        assert detail.startswith(f"({1 + extra:g} - 1) x "), system
        assert detail.endswith("_pre_sm80)" if system == "dgx-1v" else "_factor)"), system
        plan = CollectivePlan(cluster, Collective.ALL_REDUCE, algorithm="ring", protocol="simple")
        assert plan.quick(2**20).time_s == est.time_s


def test_a_simple_hop_below_one_transport_latency_says_one(builtin_catalogue: Catalogue) -> None:
    """GPUDirect-TCPXO's own Simple count is 0, held at one below 8 MiB: the explanation says
    so (review CF: it had read "Simple exposes 0 for a small message" beside "1 x 47.7 us");
    EFA's NCCL count of 2 reads as before."""
    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.engine.base import net_hop_detail
    from ibcalc.engine.types import Algorithm, Protocol

    params = builtin_cost_params()
    a3 = resolve_cluster(builtin_catalogue, ClusterSpec(system="gcp-a3-mega", nodes=2)).topology
    said = net_hop_detail(a3, Algorithm.RING, Protocol.SIMPLE, 8.0, params)
    assert said == (
        "NCCL NET hop 14 us (ring/Simple, hwLat) + 1 x 47.7 us gcp-tcpxo transport latency "
        "(fitted; Simple exposes 1 for a message up to 8 MiB (at least one: the link's own count "
        "is 0), rising to 8 at a 64 MiB collective)"
    )
    p5 = resolve_cluster(builtin_catalogue, ClusterSpec(system="aws-p5", nodes=2)).topology
    assert "(fitted; Simple exposes 2 for a small message (NCCL's count), rising to 8 at a" in (
        net_hop_detail(p5, Algorithm.RING, Protocol.SIMPLE, 8.0, params)
    )


def test_a_simple_hop_floor_is_said_in_binary_units_and_its_direction(
    builtin_catalogue: Catalogue,
) -> None:
    """A link's own floor between 0 and 1 says the size its count reaches one at in MiB, as the
    64 MiB beside it (review CG: '4.474 MB'), and a floor above the factor says the count falls
    to it (review CG: 'exposes 12 ..., rising to 8')."""
    import dataclasses

    from ibcalc.catalogue.cost_params import builtin_cost_params
    from ibcalc.engine.base import net_hop_detail
    from ibcalc.engine.types import Algorithm, Protocol

    params = builtin_cost_params()
    a3 = resolve_cluster(builtin_catalogue, ClusterSpec(system="gcp-a3-mega", nodes=2)).topology
    assert a3.out is not None

    def said(floor: float) -> str:
        assert a3.out is not None
        topo = dataclasses.replace(a3, out=a3.out.model_copy(update={"simple_floor": floor}))
        return net_hop_detail(topo, Algorithm.RING, Protocol.SIMPLE, 8.0, params)

    # 64 MiB x (1 - 0.5) / (8 - 0.5) = 4.27 MiB
    assert "exposes 1 for a message up to 4.27 MiB (at least one: the link's own count is 0.5)" in (
        said(0.5)
    )
    assert "exposes 12 for a small message (the link's own count), falling to 8 at a 64 MiB" in (
        said(12.0)
    )


def test_a_worked_time_in_prose_keeps_its_zeros_and_a_constant_its_own_form(
    builtin_catalogue: Catalogue,
) -> None:
    """2 x DGX A100 send/recv of 1 GB: the pair across nodes moves 1 GB through one HDR NIC at
    25 x 0.975 = 24.4 GB/s, 41.0 ms, which the term column prints as 41.0 ms and the prose had
    printed '41 ms' (review DS); NCCL's NET hop, a constant, reads as its source gives it."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-a100", nodes=2))
    est = estimate_on(cluster, Collective.SEND_RECV, 1e9)
    (transfer,) = [t for t in est.best.terms if t.name == "transfer"]
    assert f"{1e9 / (25e9 * 0.975) * 1e3:.1f}" == "41.0"
    assert transfer.detail.endswith("at 24.4 GB/s: 41.0 ms")
    ring = estimate_on(cluster, Collective.ALL_REDUCE, 1e9, algorithm="ring", protocol="simple")
    assert any("NCCL NET hop 14 us (ring/Simple, hwLat)" in t.detail for t in ring.best.terms)


@pytest.mark.parametrize("algorithm", ["nvls", "collnet"])
def test_a_sharp_transfer_behind_tapered_uplinks_says_so(
    builtin_catalogue: Catalogue, algorithm: str
) -> None:
    """16 x DGX H100 on SHARP with 2:1 uplinks: the SHARP tree's rate, 8 x ndr = 390 GB/s at
    NCCL's 0.5 = 195 GB/s, halves again to 97.5 GB/s behind the taper; the derivation gave 97.5
    with only 'half its bus bandwidth' (CollNet's: '8 x ndr, 195 GB/s', which 8 x ndr is not)
    and the bottleneck no taper, where the tree's says 'tapered uplinks x2 slower'."""
    spec = ClusterSpec(system="dgx-h100", nodes=16, sharp=True, oversubscription=2.0)
    cluster = resolve_cluster(builtin_catalogue, spec)
    best = estimate_on(cluster, Collective.ALL_REDUCE, 4 * 2**30, algorithm=algorithm).best
    assert best.bottleneck == "network into the SHARP switch tree (tapered uplinks x2 slower)"
    (transfer,) = [t for t in best.terms if t.name == "transfer"]
    assert "97.5 GB/s" in transfer.detail
    # once: the bottleneck at the term's end is the bare one (nvls had named the taper twice)
    assert transfer.detail.count("tapered uplinks x2 slower") == 1
    assert transfer.seconds == pytest.approx(4 * 2**30 / 97.5e9, rel=1e-3)
    plain = resolve_cluster(builtin_catalogue, spec.model_copy(update={"oversubscription": 1.0}))
    alone = estimate_on(plain, Collective.ALL_REDUCE, 4 * 2**30, algorithm=algorithm).best
    assert alone.bottleneck == "network into the SHARP switch tree"


def test_the_ll_cap_row_is_named_by_domains_where_a_domain_spans_nodes(
    builtin_catalogue: Catalogue,
) -> None:
    """16 GB200 NVL72 trays (64 GPUs) make one NVLink domain, and NCCL's LL cap takes its
    one-domain row, 282 GB/s for Blackwell; the derivation had said 'blackwell on one node' under
    a headline of 16 nodes. The row is named by what it counts; one-node systems keep 'node'."""
    spec = ClusterSpec(system="gb200-nvl72", nodes=16)
    cluster = resolve_cluster(builtin_catalogue, spec)
    ring = estimate_on(cluster, Collective.BROADCAST, 2**20, algorithm="ring", protocol="ll")
    (transfer,) = [t for t in ring.best.terms if t.name == "transfer"]
    assert "capped at 282 GB/s (NCCL's LL bus-bandwidth cap, blackwell on one domain;" in (
        transfer.detail
    )
    assert "on one node" not in transfer.detail
    halves = resolve_cluster(
        builtin_catalogue, ClusterSpec(system="gb200-nvl72", nodes=4, scale_up_domain=8)
    )
    ring = estimate_on(halves, Collective.ALL_GATHER, 2**20, algorithm="ring", protocol="ll")
    (transfer,) = [t for t in ring.best.terms if t.name == "transfer"]
    assert "blackwell on 2 domains; nccl_tuner.ll_max_busbw" in transfer.detail
    single = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    ring = estimate_on(single, Collective.BROADCAST, 2**20, algorithm="ring", protocol="ll")
    (transfer,) = [t for t in ring.best.terms if t.name == "transfer"]
    assert "hopper on one node; nccl_tuner.ll_max_busbw" in transfer.detail


def test_a_multicast_transfer_says_where_its_rate_comes_from(builtin_catalogue: Catalogue) -> None:
    """An NVLS all-gather of 4 MiB on one DGX H100 multicasts S per GPU at nvlink4's 450 GB/s
    x its nvls_efficiency 0.686 (data/links.yaml) = 308.7 GB/s: 4194304 B / 308.7 GB/s =
    13.6 us. The term had said 'by multicast at 309 GB/s' with no link nor factor, where the
    all-reduce's names both."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    est = estimate_on(cluster, Collective.ALL_GATHER, 4 * 2**20, algorithm="nvls")
    (transfer,) = [t for t in est.best.terms if t.name == "transfer"]
    assert transfer.seconds == pytest.approx(4 * 2**20 / (450e9 * 0.686), rel=1e-9)
    assert transfer.detail.startswith(
        "S = 4 MiB per GPU by multicast at 309 GB/s (NVLS bandwidth: nvlink4's line rate "
        "450 GB/s x its nvls_efficiency 0.686); NVLink SHARP in the NVSwitch"
    )


def test_an_all_to_all_scale_up_rate_names_its_link_and_factors(
    builtin_catalogue: Catalogue,
) -> None:
    """An all-to-all of 64 MiB on one MI300X node sends (m-1)/n x S = 7/8 x 64 MiB = 56 MiB per
    GPU over xGMI at 448 GB/s x efficiency 0.8 x duplex_efficiency 0.875 (data/links.yaml,
    xgmi-mi300x) x 0.935 for seven streams at once (calibrated.alltoall_efficiency) = 293.2
    GB/s: 58720256 B / 293.2 GB/s = 200.3 us. The term had said 'at 314 GB/s' with neither the
    link nor its factors (257 of the audited all-to-all cases)."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="mi300x-8", nodes=1))
    est = estimate_on(cluster, Collective.ALL_TO_ALL, 64 * 2**20, algorithm="pairwise")
    (transfer,) = [t for t in est.best.terms if t.name == "transfer"]
    rate = 448e9 * 0.8 * 0.875 * 0.935
    assert transfer.seconds == pytest.approx(7 / 8 * 64 * 2**20 / rate, rel=1e-9)
    assert (
        "56 MiB per GPU at 293 GB/s (xgmi-mi300x's line rate 448 GB/s x efficiency 0.8 x "
        "duplex_efficiency 0.875 x 0.935, calibrated.alltoall_efficiency for n-1 streams at "
        "once, fitted by benchmarks/fits.py to one-node H100 and MI355X all-to-alls): 200 us"
        in transfer.detail
    )


@pytest.mark.parametrize(
    ("system", "nodes", "messages", "clocks"),
    [
        ("dgx-a100", 2, 15, (1980, 1410)),
        ("mi355x-8", 2, 15, (1980, 2400)),
        ("mi300x-8", 1, 7, (1980, 2100)),
        ("rtx2080ti-2", 1, 1, (1980, 1545)),
    ],
)
def test_an_all_to_alls_message_term_multiplies_out_as_written(
    builtin_catalogue: Catalogue, system: str, nodes: int, messages: int, clocks: tuple[int, int]
) -> None:
    """The message term's words multiply out to its seconds: n-1 messages x 2.4 us (Hopper's,
    calibrated.per_message_latency) x Hopper's 1980 MHz over the GPU's clock (gpu.clock_mhz).
    The ratio had been printed to two places, which did not: 2 x 8 A100, 15 x 2.4 us x 1.40 =
    50.4 us beside 50.6 us (1980/1410 = 1.404); 2 x 8 MI355X x 0.82 for 0.825 (29.5 against
    29.7 us); 2 x RTX 2080 Ti '1 messages'."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system=system, nodes=nodes))
    est = estimate_on(cluster, Collective.ALL_TO_ALL, 1024)
    (term,) = [t for t in est.best.terms if t.name == "messages"]
    noun = "message" if messages == 1 else "messages"
    hopper, gpu = clocks
    assert term.detail.startswith(f"n-1 = {messages} {noun} (one per peer")
    assert f") x 2.4 us x {hopper}/{gpu} (Hopper's clock over the " in term.detail
    assert term.seconds == pytest.approx(messages * 2.4e-6 * hopper / gpu, rel=1e-12)


def test_an_all_to_alls_share_of_the_nics_names_each_nics_achievable_rate(
    builtin_catalogue: Catalogue,
) -> None:
    """2 x AWS p5, 64 MiB all-to-all: each GPU's share of the NICs read '32 x efa-v2 / 8 =
    45 GB/s', which a reader works out at the line rate as 32 x 12.5 / 8 = 50 GB/s. The rate
    is each NIC's achievable one, 100 Gb/s = 12.5 GB/s x efficiency 0.9 = 11.25 GB/s
    (data/links.yaml efa-v2), so 32 x 11.25 / 8 = 45 GB/s, and the words now give it."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(system="aws-p5", nodes=2))
    est = estimate_on(cluster, Collective.ALL_TO_ALL, 64 * 2**20)
    transfer = next(t for t in est.best.terms if t.name == "transfer")
    assert "32 x efa-v2 (11.3 GB/s achievable each) / 8 = 45 GB/s" in transfer.detail
    # (n-m)/n x S = 8/16 x 64 MiB = 32 MiB leaves each GPU at 45 GB/s, the slower path
    assert transfer.seconds == pytest.approx(32 * 2**20 / 45e9, rel=1e-9)


def test_a_rings_formula_names_every_term_its_sum_holds(builtin_catalogue: Catalogue) -> None:
    """2 x DGX H100, 64 MiB broadcast on the ring: the terms are 8.4 us base + 14 x 3.4 us
    nvlink hops + 1 x 14 us NET hop + 16 channels x 0.6 us proxy operations (calibrated
    .proxy_op_latency) + the transfer, but the formula read 'S/B_ring + base + (n-N) x intra
    + (N-1) x net', no word of the 9.6 us of proxy operations; a Simple ring all-reduce's left
    out its plateau too. One node starts no network operation and keeps the shorter formula."""
    two = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=2))
    cost = estimate_on(two, Collective.BROADCAST, 64 * 2**20, algorithm="ring").best
    proxy = next(t for t in cost.terms if t.name == "proxy operations")
    assert proxy.seconds == pytest.approx(16 * 0.6e-6, rel=1e-9)
    assert cost.formula == ("S/B_ring + base + (n-N) x intra + (N-1) x net + channels x proxy_op")
    latency = sum(t.seconds for t in cost.terms if t.name != "transfer")
    assert latency == pytest.approx((8.4 + 14 * 3.4 + 14 + 16 * 0.6) * 1e-6, rel=1e-9)
    reduce = estimate_on(
        two, Collective.ALL_REDUCE, 64 * 2**20, algorithm="ring", protocol="Simple"
    ).best
    assert reduce.formula.endswith("s_net x net + ring plateau + channels x proxy_op")
    one = resolve_cluster(builtin_catalogue, ClusterSpec(system="dgx-h100", nodes=1))
    alone = estimate_on(one, Collective.BROADCAST, 64 * 2**20).best
    assert alone.formula == "S/B_ring + base + (n-N) x intra + (N-1) x net"


#: The symbol each term of a ring, tree or NVLS-tree stands under in the estimate's formula,
#: by the start of the term's name ("steps inside nodes", "chain inside the domain" ...).
_FORMULA_SYMBOLS = (
    ("base latency", "base"),
    ("steps inside ", "intra"),
    ("hops inside ", "intra"),
    ("chain inside the ", "intra"),
    ("network steps", "net"),
    ("network hops", "net"),
    ("tree levels across sites", "wan"),
    ("tree levels across ", "net"),
    ("WAN steps", "wan"),
    ("WAN hops", "wan"),
    ("NVLS latency", "NVLS"),
    ("ring plateau", "ring plateau"),
    ("proxy posts across ", "post"),
    ("proxy operations", "proxy_op"),
    ("pipeline fill", "fill"),
    ("transfer", "S"),
)

_FORMULA_GRID = (
    ClusterSpec(system="dgx-h100", nodes=1),
    ClusterSpec(system="dgx-h100", nodes=2),
    ClusterSpec(system="dgx-h100", nodes=16),
    ClusterSpec(system="dgx-a100", nodes=8),
    ClusterSpec(system="mi300x-8", nodes=4),
    ClusterSpec(system="gb200-nvl72", nodes=36),
    ClusterSpec(system="dgx-h100", nodes=8, sites=2, wan="wan-100g"),
)


@pytest.mark.parametrize(
    "spec", _FORMULA_GRID, ids=lambda s: f"{s.system}-{s.nodes}-nodes-{s.sites}-sites"
)
def test_a_formula_names_every_term_its_sum_holds(
    builtin_catalogue: Catalogue, spec: ClusterSpec
) -> None:
    """Each term of a ring, tree or NVLS-tree all-reduce stands in its formula: the tree's had
    left out its proxy posts and operations and its WAN levels (2 x DGX H100, 1 KiB, LL: 2 x 1
    us of posts and 16 x 0.6 us of operations in the time, not in 'max(...) / (0.92 f_p) +
    fill + base + 2((m-1) intra + log2(N) net)'), the NVLS-tree's its posts, WAN levels and
    WAN transfer."""
    cluster = resolve_cluster(builtin_catalogue, spec)
    checked = 0
    for algorithm in ("ring", "tree", "nvlstree"):
        for protocol in ("LL", "LL128", "Simple"):
            for size in (2**10, 2**20, 2**26, 2**32):
                try:
                    cost = estimate_on(
                        cluster,
                        Collective.ALL_REDUCE,
                        size,
                        algorithm=algorithm,
                        protocol=protocol,
                    ).best
                except IbcalcError:
                    continue  # not on this cluster (NVLS-tree on one node or an AMD GPU ...)
                for term in cost.terms:
                    symbol = next(s for start, s in _FORMULA_SYMBOLS if term.name.startswith(start))
                    assert re.search(rf"(?<![\w']){re.escape(symbol)}(?!\w)", cost.formula), (
                        f"{algorithm}/{protocol} at {size} B: {term.name!r} ({symbol}) is not in "
                        f"{cost.formula!r}"
                    )
                checked += 1
    assert checked >= 12  # ring and tree at least, on every protocol and size


def test_a_torus_all_to_all_says_the_bisection_binds_only_where_it_does(
    builtin_catalogue: Catalogue,
) -> None:
    """A 3-chip TPU v5e slice (3 x 1, two ports a chip at 90 GB/s achievable each): 1 GiB's
    bisection term is m/2 x m/2 x S/n = 768 MiB over 2 links of 45 GB/s = 8.95 ms, its own
    links' (m-1)/n x S = 682.7 MiB at 90 GB/s x the all-to-all share. At the fitted 0.935 that is
    8.51 ms and the bisection binds; at 0.85 (a calibrated override) 682.7 MiB / 76.5 GB/s =
    9.36 ms, the chip's links bind, and the words say so. They had kept saying the bisection
    binds, against the link's rate without the share, beside a time it did not multiply out to."""
    cluster = resolve_cluster(builtin_catalogue, ClusterSpec(intra="tpu-v5e-ici", gpus_per_node=3))
    size = 2**30
    fitted = builtin_cost_params()
    low = dataclasses.replace(
        fitted, calibrated=dataclasses.replace(fitted.calibrated, alltoall_efficiency=0.85)
    )
    for params, seconds, bisected in (
        (fitted, 3 / 2 * 3 / 2 * size / 3 / (2 * 45e9), True),
        (low, 2 / 3 * size / (90e9 * 0.85), False),
    ):
        est = estimate_on(cluster, Collective.ALL_TO_ALL, size, params=params)
        (transfer,) = [t for t in est.best.terms if t.name == "transfer"]
        assert transfer.seconds == pytest.approx(seconds, rel=1e-6)
        assert ("the torus's bisection binds" in transfer.detail) is bisected
        assert ("bisection" in est.best.bottleneck) is bisected
    # in the binary units of the 1 GiB asked for, as S is
    assert "715.8 MB (682.7 MiB) per GPU at 76.5 GB/s" in transfer.detail
