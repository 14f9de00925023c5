"""Cross-page template detection: repeated link sets become template navigation."""

from __future__ import annotations

import pytest

from docscrawl.extract.model import Region
from docscrawl.extract.template.tracker import TemplateTracker


def region(kind: str, signature: str | None, links: int = 5, locator: str = "/html/body/div[1]"
           ) -> Region:
    return Region(kind, locator, links, 100, signature)


def test_unknown_region_repeated_on_many_pages_becomes_navigation() -> None:
    tracker = TemplateTracker(min_pages=3)
    assert tracker.observe("u1", [region("unknown", "sig:a")]) == []
    assert tracker.observe("u2", [region("unknown", "sig:a")]) == []
    [change] = tracker.observe("u3", [region("unknown", "sig:a")])
    assert (change.old_region, change.new_region, change.pages_seen) == (
        "unknown", "primary_navigation", 3)
    assert not change.confirmed
    assert tracker.is_template("sig:a")
    assert tracker.templates() == {"sig:a": 3}


def test_reclassified_as_the_kind_other_pages_gave() -> None:
    tracker = TemplateTracker(min_pages=2)
    tracker.observe("u1", [region("sidebar_navigation", "sig:s", 40)])
    [change] = tracker.observe("u2", [region("unknown", "sig:s", 40)])
    assert change.new_region == "sidebar_navigation"


def test_big_unknown_template_is_a_sidebar() -> None:
    tracker = TemplateTracker(min_pages=2)
    tracker.observe("u1", [region("unknown", "sig:b", 30)])
    [change] = tracker.observe("u2", [region("unknown", "sig:b", 30)])
    assert change.new_region == "sidebar_navigation"


def test_known_navigation_is_confirmed_and_main_content_never_template() -> None:
    tracker = TemplateTracker(min_pages=2)
    regions = [region("footer_navigation", "sig:f"), region("main_content", "sig:m")]
    tracker.observe("u1", regions)
    changes = tracker.observe("u2", regions)
    assert [(c.signature, c.confirmed) for c in changes] == [("sig:f", True)]


def test_same_page_counts_once_and_small_or_unsigned_regions_are_ignored() -> None:
    tracker = TemplateTracker(min_pages=2, min_links=2)
    for _ in range(3):
        assert tracker.observe("same", [region("unknown", "sig:x")]) == []
    for url in ("a", "b", "c"):
        assert tracker.observe(url, [region("unknown", None), region("unknown", "s", 1)]) == []
    assert tracker.templates() == {}


def test_memory_is_bounded() -> None:
    tracker = TemplateTracker(min_pages=2, max_signatures=100)
    for i in range(1000):
        tracker.observe(f"u{i}", [region("unknown", f"sig:{i}"), region("unknown", "sig:all")])
    assert len(tracker) <= 100
    assert tracker.is_template("sig:all")


def test_bad_limits_refused() -> None:
    with pytest.raises(ValueError):
        TemplateTracker(min_pages=1)


def test_region_signatures_come_with_extraction() -> None:
    import parsel

    from docscrawl.extract.page import extract_page

    html = """<html><body><nav><a href="/a">A</a><a href="/b">B</a></nav>
    <main><h1>T</h1><p>Body text.</p></main></body></html>"""
    pages = [
        extract_page(parsel.Selector(text=html, type="html").root, f"https://d.test/{name}")
        for name in ("x", "y")
    ]
    signatures = [{r.region: r.signature for r in page.regions} for page in pages]
    assert signatures[0]["main_content"] is None
    assert signatures[0]["primary_navigation"] == signatures[1]["primary_navigation"]


def test_apply_reclassifications_relabels_regions_and_their_links() -> None:
    import parsel

    from docscrawl.extract.page import extract_page
    from docscrawl.extract.template.tracker import apply_reclassifications

    html = """<html><body><div class="zone"><span><a href="/a">A</a> <a href="/b">B</a>
    <a href="/c">C</a></span></div><main><h1>T</h1><p>Body text.</p></main></body></html>"""
    tracker = TemplateTracker(min_pages=2)
    pages = [
        extract_page(parsel.Selector(text=html, type="html").root, f"https://d.test/{n}")
        for n in ("x", "y")
    ]
    unknown = [r for r in pages[0].regions if r.region == "unknown"]
    assert unknown, "the link cluster is unclassified on its own"
    assert tracker.observe("https://d.test/x", pages[0].regions) == []
    changes = tracker.observe("https://d.test/y", pages[1].regions)
    assert apply_reclassifications(pages[1], changes) == 1
    relabelled = {r.locator: r.region for r in pages[1].regions}
    assert relabelled[unknown[0].locator] == "primary_navigation"
    outside = [link for link in pages[1].links if link.text in {"A", "B", "C"}]
    assert {(link.region, link.container) for link in outside} == {
        ("primary_navigation", "navigation")}
