"""Where does a sweep's time fall as the size grows? Only where NCCL's tuner switches.

For a fixed algorithm and protocol the engine's time never falls with size (the property tests
check every preset series). NCCL's own choice may: its tuner prices neither the channels it
takes from a small collective nor LL's cost on plugin transports, so it can keep a candidate past
the size where another is already faster, and the time drops where it finally switches. This
script walks every system preset on 1, 2 and 4 nodes, every collective, 8 B to 8 GiB by factors
of 2, and prints how many sweeps show such a drop, how deep the drops are, and the deepest ones
(the figures docs/model.md#how-auto-picks quotes).

    python benchmarks/switch_drops.py [--top N]
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass

from ibcalc.catalogue.load import load_catalogue
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.engine.types import Collective
from ibcalc.errors import IbcalcError
from ibcalc.sweep import sweep, sweep_sizes

NODES = (1, 2, 4)


@dataclass(frozen=True)
class Drops:
    """What the walk finds: sweeps, those whose time falls, and each drop (t_after / t_before,
    where)."""

    sweeps: int
    with_drop: int
    off_switch: int
    drops: list[tuple[float, str]]

    def counts(self) -> tuple[int, int, int, int, int, int]:
        """Sweeps, sweeps with a drop, drops, and drops under 10 %, over 30 %, over 50 %."""
        ratios = [r for r, _ in self.drops]
        return (
            self.sweeps,
            self.with_drop,
            len(ratios),
            sum(r > 0.9 for r in ratios),
            sum(r < 0.7 for r in ratios),
            sum(r < 0.5 for r in ratios),
        )


def walk() -> Drops:
    """Every system preset on :data:`NODES` nodes, every collective, 8 B to 8 GiB by 2x."""
    catalogue = load_catalogue()
    sizes = sweep_sizes(8, 8 * 2**30, 2)
    sweeps = with_drop = off_switch = 0
    drops: list[tuple[float, str]] = []
    for system in catalogue.systems:
        for nodes in NODES:
            try:
                cluster = resolve_cluster(catalogue, ClusterSpec(system=system.id, nodes=nodes))
            except IbcalcError:
                continue  # a preset without a scale-out NIC on several nodes
            for collective in Collective:
                try:
                    rows = sweep(cluster, collective, sizes).groups[0].rows
                except IbcalcError:
                    continue  # a collective the cluster cannot run
                sweeps += 1
                fell = False
                for a, b in itertools.pairwise(rows):
                    if b.time_us >= a.time_us * (1 - 1e-9):
                        continue
                    fell = True
                    before = f"{a.algorithm.value}/{a.protocol.value}"
                    after = f"{b.algorithm.value}/{b.protocol.value}"
                    off_switch += before == after
                    drops.append(
                        (
                            b.time_us / a.time_us,
                            f"{system.id} x {nodes} {collective.value} at {b.size_bytes:.0f} B: "
                            f"{before} {a.time_us:.1f} us -> {after} {b.time_us:.1f} us",
                        )
                    )
                with_drop += fell
    return Drops(sweeps, with_drop, off_switch, drops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="deepest drops to list")
    args = parser.parse_args()
    found = walk()
    sweeps, with_drop, count, under10, over30, over50 = found.counts()
    print(f"sweeps: {sweeps}; with a time that falls: {with_drop}; drops: {count}")
    print(f"drops without an algorithm or protocol switch: {found.off_switch} (must be 0)")
    print(f"drops under 10 %: {under10}; over 30 %: {over30}; over 50 %: {over50}")
    for ratio, text in sorted(found.drops)[: args.top]:
        print(f"  {100 * (1 - ratio):4.1f} %  {text}")


if __name__ == "__main__":
    main()
