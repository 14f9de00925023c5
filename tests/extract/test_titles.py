"""The page's own title as main heading whatever its level or wrapper (hand-written
fixtures of Texinfo, gi-docgen, Doxygen and Haddock shapes in fixtures/pages/titles)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl.extract.main_heading import page_heading
from docscrawl.extract.model import Block
from docscrawl.extract.page import extract_page
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


def _heading(ordinal: int, level: int, text: str) -> Block:
    return Block(ordinal, "heading", f"{'#' * level} {text}", [text], None, f"/h{ordinal}",
                 len(text))


def test_a_title_block_before_the_headings_names_the_page() -> None:
    blocks = [Block(0, "paragraph", "Data.List", [], None, "/p", 9),
              _heading(1, 1, "List transformations")]
    assert page_heading(blocks, "Data.List") == "Data.List"
    assert page_heading(blocks[1:], "Data.List") == "List transformations"


def test_the_title_never_picks_among_the_headings() -> None:
    # The first heading of the highest rank names the page, whatever the <title> says.
    blocks = [_heading(0, 1, "Installing"), _heading(1, 2, "Installation methods")]
    assert page_heading(blocks, "Installation - Lockstep") == "Installing"
    blocks = [_heading(0, 1, "Class Kettle"), _heading(1, 3, "Kettle")]
    assert page_heading(blocks, "Kettle (Brewhouse API 2.0)") == "Class Kettle"
    h2 = [_heading(0, 2, "Chapter 2. Installing"), _heading(1, 3, "2.1. Requirements")]
    assert page_heading(h2, "Unrelated") == "Chapter 2. Installing"
    assert page_heading(h2, None) == "Chapter 2. Installing"
    assert page_heading([], "Unrelated") is None


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
