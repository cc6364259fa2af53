"""Figures docs/model.md quotes from a benchmark script, re-counted (review BM had found the
switch-drop counts two presets out of date: 560 sweeps quoted, 602 walked)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from switch_drops import walk  # noqa: E402


def test_switch_drop_counts_are_the_ones_docs_quote() -> None:
    text = " ".join((ROOT / "docs" / "model.md").read_text(encoding="utf-8").split())
    found = walk()
    sweeps, with_drop, drops, under10, over30, over50 = found.counts()
    assert found.off_switch == 0  # a time falls only where NCCL's tuner switches
    assert f"8 B to 8 GiB by factors of 2 ({sweeps} sweeps), {with_drop} sweeps show" in text
    middle = drops - under10 - over30
    assert (
        f"Of the {drops} drops, {under10} are under 10 %, {middle} from 10 to 30 % and "
        f"{over30} over 30 % ({over50} over 50 %)" in text
    )
    assert f"against the {over30} modelled drops over 30 %" in text
    # the deepest, as the paragraph names it
    deepest = [t for _, t in sorted(found.drops)[:1]]
    assert re.search(
        r"gcp-a3-mega x 4 all_reduce at 2097152 B: tree/LL 546\.0 us -> nvlstree/Simple "
        r"328\.7 us",
        deepest[0],
    )
    assert "for NVLS-tree at 2 MiB (546 -> 329 us;" in text
