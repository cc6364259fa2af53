"""Every relative link in README.md and docs/*.md reaches a file of the checkout, and every
#anchor a heading of the page it names (GitHub's heading ids: lower case, punctuation but `-`
and `_` dropped, spaces as `-`, a repeated heading numbered `-1`, `-2` ...)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def _prose(page: Path) -> list[tuple[int, str]]:
    """The page's lines outside fenced code blocks, with their numbers."""
    out, fenced = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append((number, line))
    return out


def anchors(page: Path) -> set[str]:
    """The ids GitHub gives the page's headings (inline code keeps its text)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose(page):
        heading = HEADING.match(line)
        if heading is None:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """The page's relative links that reach no file, or no heading of the page they name."""
    broken = []
    for number, line in _prose(page):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):  # not code
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.name}:{number}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.name}:{number}: {target} (no such heading)")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Two words\n\n## Two `words`\n", "utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#two-words) [ok](other.md#two-words-1) [ok](#page)\n"
        "[gone](missing.md) [gone](other.md#three-words) `[code](nowhere.md)`\n"
        "```\n[in a block](nowhere.md)\n```\n[web](https://example.com/x#y)\n",
        "utf-8",
    )
    assert broken_links(page) == [
        "page.md:4: missing.md (no such file)",
        "page.md:4: other.md#three-words (no such heading)",
    ]
