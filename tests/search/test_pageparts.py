"""`pageparts`: a page's Markdown in capped parts and by section."""

from __future__ import annotations

import pytest

from docscrawl.search.index import IndexError_
from docscrawl.search.pageparts import (
    MAX_PAGE_CHARS,
    find_section,
    page_part,
    sections,
)

MARKDOWN = ("# Guide\n\nIntro.\n\n## Install\n\n```console\n# Install\n$ pip install x\n```\n\n"
            "### Linux\n\nApt.\n\n## Install\n\nAgain.\n\n# Appendix\n\nEnd.\n")
HEADINGS = [{"level": 1, "text": "Guide", "anchor": "guide"},
            {"level": 2, "text": "Install", "anchor": "install"},
            {"level": 3, "text": "Linux", "anchor": None},
            {"level": 2, "text": "Install", "anchor": "install-1"},
            {"level": 1, "text": "Appendix", "anchor": "appendix"}]


def test_sections_follow_the_records_headings_outside_code() -> None:
    found = sections(MARKDOWN, HEADINGS)
    assert [(s.text, s.anchor) for s in found] == [(h["text"], h["anchor"]) for h in HEADINGS]
    spans = {s.anchor: MARKDOWN[s.start:s.end] for s in found}
    assert spans["install"].startswith("## Install\n\n```console\n# Install\n")
    assert spans["install"].endswith("Apt.\n\n")          # ends at the next level-2 heading
    assert spans["install-1"] == "## Install\n\nAgain.\n\n"
    assert spans["guide"] == MARKDOWN[:MARKDOWN.index("# Appendix")]
    assert MARKDOWN[found[2].start:found[2].end] == "### Linux\n\nApt.\n\n"


@pytest.mark.parametrize(("wanted", "anchor"), [
    ("install-1", "install-1"), ("#install-1", "install-1"),
    ("http://x/guide.html#appendix", "appendix"), ("  LINUX ", None), ("install", "install")])
def test_find_section_by_anchor_fragment_or_text(wanted: str, anchor: str | None) -> None:
    section = find_section(sections(MARKDOWN, HEADINGS), wanted)
    assert section is not None and section.anchor == anchor
    assert find_section(sections(MARKDOWN, HEADINGS), "nowhere") is None


def test_parts_are_capped_cut_at_line_ends_and_add_up() -> None:
    markdown = "".join(f"line {i:05d} of the page\n" for i in range(20_000))
    parts, offset = [], 0
    while True:
        part = page_part(markdown, offset=offset, limit=10_000)
        parts.append(part)
        if not part.left:
            break
        offset = part.end
    assert all(p.end - p.start <= 10_000 and markdown[p.end - 1] == "\n" for p in parts)
    assert "".join(markdown[p.start:p.end] for p in parts) == markdown
    assert MAX_PAGE_CHARS - 23 < page_part(markdown, limit=10**9).end <= MAX_PAGE_CHARS


def test_a_section_part_stays_in_its_section() -> None:
    install = sections(MARKDOWN, HEADINGS)[1]
    part = page_part(MARKDOWN, offset=0, section=install)
    assert (part.start, part.end, part.left) == (install.start, install.end, 0)
    with pytest.raises(IndexError_, match="outside the section"):
        page_part(MARKDOWN, offset=install.end, section=install)
    with pytest.raises(IndexError_, match="outside the page"):
        page_part(MARKDOWN, offset=len(MARKDOWN))
    assert page_part("", offset=0).end == 0
