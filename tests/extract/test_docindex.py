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


def test_may_match_reads_each_part_once_parsed() -> None:
    """`may_match` through the memoized parse of a selector part (`_needs`): a class, id,
    tag or attribute test the page lacks rules the part out; an XPath is always asked."""
    index = DocIndex.of(html_root(PAGE.replace("<nav", '<nav role="navigation" id="top"')))
    verdicts = {
        "nav.menu": True, "NAV.menu": True, "nav#top.menu": True, "div.sidebar li.current": True,
        "nav[role=navigation]": True, "nav[role=banner]": False, "[aria-label]": False,
        "a[class*=curr]": True, "a[class*=absent]": False, "section.menu": False,
        "nav#absent": False, ".menu.absent": False, ".absent, nav.menu": True,
        "//section": True,
    }
    assert {selector: index.may_match(selector) for selector in verdicts} == verdicts
    assert {selector: index.may_match(selector) for selector in verdicts} == verdicts  # memo
