"""`DocIndex.live`: a selector group without the parts that cannot match selects the same."""

from __future__ import annotations

import dataclasses
import os
import random
from functools import partial
from pathlib import Path

import pytest
from lxml import etree

from docscrawl.extract.breadcrumbs import VISIBLE_TRAILS
from docscrawl.extract.classmatch import compounds
from docscrawl.extract.docindex import INDEXED_VALUES, DocIndex, select_all
from docscrawl.extract.profiles import PROFILES, select
from docscrawl.extract.section_path import SIDEBARS
from docscrawl.extract.tree import html_root
from docscrawl.extract.version import BANNERS
from docscrawl.extract.version import SELECTORS as VERSION_SELECTORS

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


# Manuals of three generator families Debian installs for the tests (`make test`).
MANUALS = (Path("/usr/share/doc/sphinx-doc/html"), Path("/usr/share/doc/git-doc"),
           Path("/usr/share/doc/libglib2.0-doc"))
SHAPES = """<!-- banner --><html lang="en" xml:lang="en"><head><meta name="x" content="y">
<link rel="stylesheet" href="s.css"></head><body class=" A  b " id="top">
<div role="main" aria-label="Main" itemtype="https://schema.org/Article" class="">
<a name="n1" href="#n1" data-x="1">x</a><!-- c --><?pi y?><span id="" class="b c">t</span>
<svg viewBox="0 0 1 1"><path d="M0"/></svg></div></body></html>"""


def _as_xpath_read_them(root: etree._Element) -> tuple[frozenset[str], frozenset[str],
                                                      dict[str, frozenset[str]]]:
    """Classes, ids and kept values as the `//@name` queries the pass replaced select."""
    strings = partial(etree.XPath, smart_strings=False)
    classes = frozenset(" ".join(strings("//@class")(root)).split())
    values = {name: frozenset(strings(f"//@{name}")(root)) for name in INDEXED_VALUES}
    return classes, frozenset(strings("//@id")(root)), values


def _agrees(root: etree._Element) -> None:
    index = DocIndex.of(root)
    assert (index.classes, index.ids, index.values) == _as_xpath_read_them(root)
    # a name with a colon (`xml:lang`, kept as written by the HTML parser) is a prefixed
    # name to XPath: no caller asks for one
    for name in {*(n for n in index.attributes if ":" not in n), "class", "id", "name",
                 "aria-current", "selected", "data-version-switcher", "absent", "lang"}:
        assert index.has_attr(name) is etree.XPath(f"boolean(//@{name})")(root), name


def test_the_attribute_pass_reads_what_the_xpath_queries_select() -> None:
    """`DocIndex.of` reads every attribute in one pass over the elements: the same class
    tokens, ids, kept values and attribute names as one `//@name` query each, asked of any
    element of the document (a subtree's index covers the whole document, as `//` does)."""
    root = html_root(SHAPES)
    _agrees(root)
    index = DocIndex.of(root)
    assert index.classes == {"A", "b", "c"} and index.ids == {"top", ""}
    assert index.has_attr("data-x") and index.has_attr("name") and not index.has_attr("src")
    body = root.find("body")
    assert body is not None and DocIndex.of(body).attributes == index.attributes


@pytest.mark.parametrize("manual", MANUALS, ids=lambda path: path.parts[4])
def test_the_attribute_pass_agrees_on_real_manuals(manual: Path) -> None:
    if not manual.is_dir():
        pytest.skip(f"{manual} is not installed (make system-deps)")
    found = sorted(Path(folder, name) for folder, _, names in os.walk(manual, followlinks=True)
                   for name in names if name.endswith(".html"))  # glib's folders are links
    pages = found[:: max(1, len(found) // 30)]
    assert len(pages) >= 10
    for page in pages:
        _agrees(html_root(page.read_text(encoding="utf-8", errors="replace")))


def test_anchor_names_are_read_once_and_only_when_a_name_exists() -> None:
    root = html_root(SHAPES)
    index = DocIndex.of(root)
    assert index.anchor_names() == {"n1"} == set(etree.XPath("//a/@name")(root))
    assert index.anchor_names() is index.anchor_names()
    bare = DocIndex.of(html_root("<html><body><a href='#x'>x</a><p id='x'>p</p></body></html>"))
    assert not bare.has_attr("name") and bare.anchor_names() == frozenset()


def test_a_selector_asked_again_is_answered_from_the_page_memo() -> None:
    """`css` (the profiles' path) and `select_in` (the index's) share answers: the same
    elements as a walk each time, the second answer without one."""
    root = html_root(PAGE)
    index = DocIndex.of(root)
    first = index.css(root, "li.current > a")
    assert [a.get("href") for a in first] == ["b.html"]
    assert index.select_in(root, "li.current > a") is first
    assert index.css(root, "li.current > a") is first
    group = index.select(".absent, a.current, li.current > a")
    assert group == select_all(root, ".absent, a.current, li.current > a")
    assert index.select(".absent, a.current, li.current > a") is group
    sidebar = root.find(".//div")
    assert sidebar is not None and index.css(sidebar, "a.current") == []  # per element
    assert index.select("//nav") == select_all(root, "//nav")  # XPath: asked as written


def _selectors() -> list[str]:
    """Every CSS selector the extractors ask of a page: the generator profiles', the
    sidebar containers and markers, the visible breadcrumb trails, the version labels."""
    found = [css for profile in PROFILES.values() for field in dataclasses.fields(profile)
             for css in getattr(profile, field.name)]
    found += [css for _, container, markers in SIDEBARS for css in (container, *markers)]
    found += [css for _, css in VISIBLE_TRAILS] + [*VERSION_SELECTORS, *BANNERS]
    return list(dict.fromkeys(found))


def _same_as_the_walk(root: etree._Element, selectors: list[str]) -> int:
    """Every selector through the page index (`css`, `select_in`) against a walk each,
    from the root and from each element the root's walk found; returns the checks made."""
    index = DocIndex.of(root)
    checked = 0
    for css in selectors:
        walked = select(root, css)
        assert index.css(root, css) == walked, css
        if index.may_match(css):
            assert index.select(css) == select_all(root, css), css
        for context in walked[:3]:  # a subtree: its own matches, itself included
            assert index.css(context, css) == select(context, css), css
            assert index.select_in(context, css) == select_all(context, css), css
        checked += 1 + len(walked[:3])
    return checked


def test_class_selectors_from_the_class_attributes_select_what_the_walk_selects() -> None:
    """`classmatch`: one-compound class selectors (and groups of them) answered from the
    page's class attributes; anything else walked. Nested matches, a class as a substring
    of another, whitespace of every kind in the attribute, attribute tests, case."""
    page = """<html><body><div class="related x"><div class="related">
    <a class="current" href="a">a</a><a class="currently" href="b">b</a>
    <a class="xcurrent\tcurrent" href="c">c</a><a class="Current" href="d">d</a>
    <a class="x\u00a0current" href="h">h</a><a class="y\r\ncurrent\n" href="i">i</a></div></div>
    <div class="body" role="main"><div class="body"><p class="related">p</p></div></div>
    <ul><li class="toctree-l1 current"><ul><li class="current"><a href="f">f</a></li></ul>
    <a href="e">e</a><a class="current" href="g">g</a></li></ul></body></html>"""
    root = html_root(page)
    selectors = ["div.related", "a.current", "div.body[role=main]", "li.toctree-l1.current",
                 ".related", "a.current, div.related", "li.current > a", "a.Current",
                 "p.related, .body[role=main]", "div.related a.current",
                 "li.toctree-l1.current > a, li.current > a, a.current", ".current > A",
                 "ul > li.current"]
    assert _same_as_the_walk(root, selectors) > len(selectors)
    assert compounds("div.related a.current") is None and compounds("a:first-child") is None
    assert compounds("li.current > a, a.current") is not None
    index = DocIndex.of(root)
    # a no-break space is no separator to XPath's `normalize-space`; CR and LF are
    assert [a.get("href") for a in index.css(root, "a.current")] == ["a", "c", "i", "g"]
    # a nested item's link comes before its parent's own links, once each
    assert [a.get("href") for a in index.css(root, "li.current > a, a.current")] == [
        "a", "c", "i", "f", "e", "g"]


@pytest.mark.parametrize("manual", MANUALS, ids=lambda path: path.parts[4])
def test_class_selectors_select_what_the_walk_selects_on_real_manuals(manual: Path) -> None:
    if not manual.is_dir():
        pytest.skip(f"{manual} is not installed (make system-deps)")
    found = sorted(Path(folder, name) for folder, _, names in os.walk(manual, followlinks=True)
                   for name in names if name.endswith(".html"))
    selectors = _selectors()
    checked = sum(_same_as_the_walk(html_root(page.read_text(encoding="utf-8",
                                                             errors="replace")), selectors)
                  for page in found[:: max(1, len(found) // 12)])
    assert checked > 12 * len(selectors)


def _random_markup(rng: random.Random, depth: int = 0) -> str:
    """Nested elements with classes that overlap as substrings, every kind of whitespace
    between them, case variants and `role` values."""
    tag = rng.choice(["div", "li", "a", "span", "ul", "p", "nav", "section"])
    attributes = ""
    if rng.random() < 0.7:
        names = ["current", "cur", "rent", "toctree-l1", "body", "Body", "related", "x",
                 "a-b", "menu"]
        spaces = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", " \u2003 "]
        attributes += ' class="' + "".join(rng.choice(spaces) + rng.choice(names)
                                           for _ in range(rng.randint(0, 3))) + '"'
    if rng.random() < 0.2:
        attributes += f' role="{rng.choice(["main", "navigation", "Main"])}"'
    inside = ("".join(_random_markup(rng, depth + 1) for _ in range(rng.randint(0, 3)))
              if depth < 5 else "t")
    return f"<{tag}{attributes}>{inside}</{tag}>"


def test_class_selectors_agree_with_the_walk_on_random_markup() -> None:
    rng = random.Random(7)
    selectors = ["div.current", ".current", "li.current > a", "div.body[role=main]",
                 "a.current, li.toctree-l1.current > a", ".Body", "span.x.a-b", "p.rent",
                 "li.current > a, li.current > span, a.current", "div.cur > p", ".menu > a",
                 "ul > li.current", "li.current a", "DIV.current", "li.current > A"]
    for _ in range(120):
        root = html_root("<html><body>" + "".join(_random_markup(rng) for _ in range(4))
                         + "</body></html>")
        index = DocIndex.of(root)
        elements = list(root.iter())
        for css in selectors:
            for context in [root, *rng.sample(elements, min(3, len(elements)))]:
                assert index.css(context, css) == select(context, css), css
                if index.may_match(css):
                    assert index.select_in(context, css) == select_all(context, css), css
