"""The page's own title as main heading whatever its level or wrapper (hand-written
fixtures of Texinfo, gi-docgen, Doxygen and Haddock shapes in fixtures/pages/titles)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl.extract.page import extract_page, page_heading
from docscrawl.extract.tree import html_root

TITLES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "titles"
EXPECTED = json.loads((TITLES / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_main_heading_and_root(name: str) -> None:
    expected = EXPECTED[name]
    html = (TITLES / f"{name}.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), expected["url"])
    assert page.main_heading == expected["main_heading"]
    assert page.headings[0].path[0] == expected["root"]


def test_gi_docgen_kicker_is_no_heading_and_header_title_is_in_main() -> None:
    html = (TITLES / "gi_docgen.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), EXPECTED["gi_docgen"]["url"])
    assert "Class" not in [h.text for h in page.headings]
    assert "**Class**" in page.markdown and "# LksReplica" in page.markdown  # plain headings
    assert "Stops the replica" in page.markdown


def test_haddock_heading_wrapped_in_its_permalink_is_a_heading() -> None:
    html = (TITLES / "haddock.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), EXPECTED["haddock"]["url"])
    assert [h.text for h in page.headings] == ["Starting and stopping", "Queries"]
    assert "# Queries" in page.markdown


def test_a_heading_sharing_a_word_with_the_title_loses_to_the_exact_title() -> None:
    from docscrawl.extract.model import Block, Heading
    headings = [Heading(1, "List transformations", None, ["List transformations"])]
    blocks = [Block(0, "paragraph", "Data.List", [], None, "/p", 9)]
    assert page_heading(headings, blocks, "Data.List") == "Data.List"
    assert page_heading(headings, [], "Data.List") == "List transformations"
    h2 = [Heading(2, "Chapter 2. Installing", None, ["Chapter 2. Installing"])]
    assert page_heading(h2, [], "Chapter 2. Installing Lockstep") == "Chapter 2. Installing"
    assert page_heading(h2, [], "Unrelated") is None


@pytest.mark.parametrize(("name", "title"), [
    ("hscolour_source", "src/Lockstep/Replica.hs"),
    ("plain_text_page", "lockstep-replica(8) - manual page"),
])
def test_a_page_without_any_heading_is_named_by_its_title(name: str, title: str) -> None:
    html = (TITLES.parent / "titles_none" / f"{name}.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), f"http://docs.test/{name}.html")
    assert page.headings == []
    assert page.main_heading == title
    assert "main_heading_from_title" in [w.code for w in page.warnings]


def test_a_page_with_headings_never_falls_back_to_its_title() -> None:
    html = (TITLES / "haddock.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), EXPECTED["haddock"]["url"])
    assert "main_heading_from_title" not in [w.code for w in page.warnings]
