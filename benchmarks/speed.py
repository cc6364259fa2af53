"""Speed figures: catalogue load, one estimate, a 32-size sweep, and the CLI end to end.

    python benchmarks/speed.py

Prints medians over repeated runs; nothing is asserted (targets live here, not in tests):
one estimate well under 10 ms once the catalogue is loaded, a CLI call under 1 s.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from ibcalc.catalogue.load import load_catalogue
from ibcalc.cluster.resolve import ClusterSpec, resolve_cluster
from ibcalc.engine.types import Collective
from ibcalc.facade import estimate_on


def _median_s(function: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    """Print the figures."""
    load = _median_s(lambda: load_catalogue(use_env=False), 5)
    catalogue = load_catalogue(use_env=False)
    cluster = resolve_cluster(catalogue, ClusterSpec(system="aws-p5", nodes=16))
    one = _median_s(lambda: estimate_on(cluster, Collective.ALL_REDUCE, 1e9), 50)
    sizes = [8.0 * 2**i for i in range(32)]
    sweep = _median_s(lambda: [estimate_on(cluster, Collective.ALL_REDUCE, s) for s in sizes], 5)
    cli = _median_s(
        lambda: subprocess.run(
            [
                sys.executable,
                "-m",
                "ibcalc",
                "allreduce",
                "-s",
                "1GB",
                "--fabric",
                "ndr",
                "--format",
                "json",
            ],
            check=True,
            capture_output=True,
        ),
        3,
    )
    print(f"catalogue load (built-in YAML, checked)  {load * 1e3:8.1f} ms")
    print(f"one all-reduce estimate (16 x aws-p5)    {one * 1e3:8.2f} ms")
    print(f"32-size sweep                            {sweep * 1e3:8.1f} ms")
    print(f"CLI call end to end (python -m ibcalc)   {cli * 1e3:8.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
