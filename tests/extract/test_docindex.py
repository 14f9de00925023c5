"""`DocIndex.live`: a selector group without the parts that cannot match selects the same."""

from __future__ import annotations

from docscrawl.extract.docindex import DocIndex, select_all
from docscrawl.extract.tree import html_root

PAGE = """<html><body>
<nav class="menu"><a class="current" href="a.html">A</a></nav>
<div class="sidebar"><ul><li class="current"><a href="b.html">B</a></li></ul></div>
</body></html>"""


def test_live_drops_only_the_parts_that_cannot_match() -> None:
    index = DocIndex.of(html_root(PAGE))
    assert index.live("nav.menu, .theme-doc-sidebar-menu") == "nav.menu"
    assert index.live("li.current > a, a.current") == "li.current > a, a.current"
    assert index.live(".absent, #absent") is None
    assert index.live("//nav") == "//nav"  # XPath: as written
    # a comma that may sit inside a pseudo-class or a quoted value: the group stays whole
    assert index.live('a[title="x, y"], .absent') == 'a[title="x, y"], .absent'


def test_select_gives_what_the_whole_group_selects() -> None:
    root = html_root(PAGE)
    index = DocIndex.of(root)
    sidebar = root.find(".//div")
    assert sidebar is not None
    for selector in ("nav.menu, .theme-doc-sidebar-menu", ".absent, a.current, li.current > a",
                     "li.current > a, .absent, a.current", ".absent"):
        assert index.select(selector) == select_all(root, selector)
        assert index.select_in(sidebar, selector) == select_all(sidebar, selector)
    assert [a.get("href") for a in index.select(".absent, a.current, li.current > a")] == [
        "a.html", "b.html"]
