"""`pageparts`: a page's Markdown in capped parts and by section."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root
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


def test_headings_in_callouts_are_sections() -> None:
    markdown = "# Config\n\n> [!NOTE]\n> **theme**\n>\n> #### name\n>\n> The name.\n\n## Next\n"
    found = sections(markdown, [{"level": 1, "text": "Config", "anchor": "config"},
                                {"level": 4, "text": "name", "anchor": "name"},
                                {"level": 2, "text": "Next", "anchor": "next"}])
    assert [s.anchor for s in found] == ["config", "name", "next"]
    assert markdown[found[1].start:found[1].end] == "> #### name\n>\n> The name.\n\n"


REAL_PAGES = [  # Sphinx, MkDocs (headings inside admonitions), Go's hand-written spec
    Path("/usr/share/doc/python-scrapy-doc/html/topics/request-response.html"),
    Path("/usr/share/doc/mkdocs/html/user-guide/configuration.html"),
    Path("/usr/share/doc/golang-1.19-doc/html/go_spec.html"),
]


@pytest.mark.parametrize("path", REAL_PAGES, ids=lambda p: p.name)
def test_every_heading_of_real_generator_output_is_a_section(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not installed")
    page = extract_page(html_root(path.read_text(encoding="utf-8")),
                        f"https://docs.example.com/{path.name}")
    headings = [{"level": h.level, "text": h.text, "anchor": h.anchor} for h in page.headings]
    found = sections(page.markdown, headings)
    assert len(headings) > 20 and [s.text for s in found] == [h["text"] for h in headings]
    for section in found:
        assert page.markdown[section.start:].lstrip("> ").startswith(
            "#" * section.level + " " + section.text)
