"""The max_pages budget's order: navigation by depth, then listings, then index entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html

from docscrawl.discovery.budget import (
    BODY,
    INDEX_ENTRY,
    LISTING,
    NAVIGATION,
    Budget,
    collapsed_text_chars,
    declared_indexes,
    is_link_listing,
    link_rank,
    link_text_chars,
)
from docscrawl.extract.page import page_structure

SPHINX_DOC = Path("/usr/share/doc/sphinx-doc/html")


def test_ranks_by_link_evidence() -> None:
    assert link_rank("sidebar") == link_rank("pagination") == NAVIGATION
    assert link_rank("in_page") == link_rank("canonical") == BODY
    assert link_rank("sitemap") == link_rank("footer_navigation") == LISTING
    assert link_rank("in_page", on_index_page=True) == INDEX_ENTRY
    assert link_rank("sidebar", on_index_page=True) == NAVIGATION  # an index's own nav


def test_index_entries_wait_for_the_navigation_found_later() -> None:
    budget = Budget()
    budget.hold("entry", INDEX_ENTRY, 2, "entry")
    budget.hold("map", LISTING, 1, "map")
    budget.hold("part", BODY, 2, "part")
    place, offer = budget.take() or (None, None)
    assert offer == "part" and place == (0, 2)
    budget.started("part", place)
    assert budget.take() is None  # `part` may still link better pages
    budget.hold("step", NAVIGATION, 3, "step")  # ... and does
    budget.answered("part")
    assert [budget.take()[1] for _ in range(3)] == ["step", "map", "entry"]  # type: ignore[index]
    assert budget.take() is None and len(budget) == 0


def test_a_url_found_again_by_better_evidence_moves_up() -> None:
    budget = Budget()
    budget.hold("a", INDEX_ENTRY, 2, "a")
    budget.hold("b", LISTING, 1, "b")
    assert budget.promote("a", NAVIGATION, 3)
    assert not budget.promote("a", BODY, 4)  # not better
    assert budget.drain() == ["a", "b"]


def test_shallow_navigation_goes_while_deeper_pages_fly() -> None:
    budget = Budget()
    budget.started("seed", (0, 0))
    budget.hold("d1", BODY, 1, "d1")
    budget.hold("d2", NAVIGATION, 2, "d2")
    assert budget.take() == ((0, 1), "d1")  # one below the page in flight
    assert budget.take() is None  # two below: it waits
    budget.settle()
    assert budget.take() == ((0, 2), "d2")


def test_index_pages_are_recognized_on_two_generators() -> None:
    """Sphinx declares its general index in every head; a page that is all links (Sphinx's
    genindex, found again by shape) is an index; a landing page with a table of contents
    is not."""
    if not SPHINX_DOC.is_dir():
        pytest.skip(f"{SPHINX_DOC} is not installed")
    landing = html.fromstring((SPHINX_DOC / "index.html").read_bytes())
    assert declared_indexes(landing) == ["genindex.html"]
    for name, listing in (("genindex.html", True), ("index.html", False),
                          ("usage/quickstart.html", False)):
        root = html.fromstring((SPHINX_DOC / name).read_bytes())
        main = page_structure(root, f"http://127.0.0.1/{name}").main_el
        assert is_link_listing(main) is listing, name


def test_the_listing_measures_are_their_definitions_on_real_pages() -> None:
    """The link count, link text and collapsed text `is_link_listing` compares, read the
    fast way (an anchor's `text`, lxml's text serializer), equal their definitions (every
    anchor's `itertext`, the joined and collapsed text) on every page of a real Sphinx
    manual, whose anchors hold markup (`<code>`, `<span>`) and whose text has comments."""
    if not SPHINX_DOC.is_dir():
        pytest.skip(f"{SPHINX_DOC} is not installed")
    pages = sorted(SPHINX_DOC.rglob("*.html"))
    assert len(pages) > 50
    nested = 0
    for path in pages:
        main = html.fromstring(path.read_bytes())
        anchors = [a for a in main.iter("a")
                   if (href := a.get("href")) and not href.startswith("#")]
        nested += sum(1 for a in anchors if len(a))
        expected = (len(anchors), sum(len("".join(a.itertext()).strip()) for a in anchors))
        assert link_text_chars(main) == expected, path
        assert collapsed_text_chars(main) == len(" ".join("".join(main.itertext()).split()))
    assert nested > 100  # anchors with markup inside were met
