"""Region classification: profiles, landmarks, vocabulary, fragment lists, pagination."""

from __future__ import annotations

import json
from pathlib import Path

import parsel
import pytest
from lxml import etree

from docscrawl.extract.generator import detect_profile
from docscrawl.extract.model import REGIONS
from docscrawl.extract.regions import RegionMap, classify, classify_regions, region_signature

FIXTURES = Path(__file__).parents[2] / "fixtures" / "pages" / "generators"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


def parse(html: str) -> etree._Element:
    return parsel.Selector(text=html, type="html").root


def load(name: str) -> etree._Element:
    return parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_regions(name: str) -> None:
    root = load(name)
    regions = classify_regions(root, generator=detect_profile(root), base_url=EXPECTED[name]["url"])
    kinds = [r.region for r in regions]
    assert set(EXPECTED[name]["regions"]) <= set(kinds)
    assert set(kinds) <= set(REGIONS)
    assert kinds.count("main_content") == 1
    tree = root.getroottree()
    for region in regions:
        assert len(tree.xpath(region.locator)) == 1
        assert region.link_count >= 0 and region.text_chars >= 0


def test_regions_in_document_order() -> None:
    root = load("sphinx_rtd")
    rmap = classify(root, generator="sphinx")
    order = {el: i for i, el in enumerate(root.iter())}
    positions = [order[el] for el in rmap.kinds]
    assert positions == sorted(positions)


LANDMARKS = """
<html><body>
<header><a href="/">Logo</a><nav><a href="/docs">Docs</a><a href="/blog">Blog</a></nav></header>
<nav aria-label="Breadcrumb"><ol><li><a href="/docs">Docs</a></li><li><a href="/docs/x">X</a></li>
</ol></nav>
<div class="layout">
  <aside class="docs-sidebar"><ul>
    <li><a href="/docs/a">A</a><ul><li><a href="/docs/a/1">A1</a></li></ul></li>
    <li><a href="/docs/b">B</a></li></ul></aside>
  <main>
    <h1>Page</h1><p>Body text of the page, long enough to be the main content.</p>
    <div class="sidebar"><p class="sidebar-title">Note</p><p>An rst sidebar callout with a
      <a href="/docs/c">link</a> inside prose that stays content.</p></div>
    <ul><li><a href="#one">One</a></li><li><a href="#two">Two</a></li><li><a href="#three">Three</a>
    </li></ul>
    <h2 id="one">One</h2><p>Text.</p>
    <div class="see-also"><ul><li><a href="/docs/related">Related page</a></li></ul></div>
  </main>
  <div class="page-toc"><a href="#one">One</a><a href="#two">Two</a></div>
</div>
<div class="nav-buttons"><a rel="prev" href="/docs/w">Back</a><a rel="next" href="/docs/y">On</a>
</div>
<footer><a href="/legal">Legal</a></footer>
</body></html>
"""


@pytest.mark.parametrize(
    ("xpath", "kind"),
    [
        ("/html/body/header", "primary_navigation"),
        ("/html/body/nav", "breadcrumb"),
        ("/html/body/div[1]/aside", "sidebar_navigation"),
        ("/html/body/div[1]/main", "main_content"),
        ("/html/body/div[1]/main/ul", "table_of_contents"),  # fragment links atop the article
        ("/html/body/div[1]/main/div[2]", "related_content"),
        ("/html/body/div[1]/div", "table_of_contents"),
        ("/html/body/div[2]", "pagination"),  # rel=prev/next
        ("/html/body/footer", "footer_navigation"),
    ],
)
def test_generic_landmarks(xpath: str, kind: str) -> None:
    root = parse(LANDMARKS)
    rmap = classify(root, generator=None, base_url="https://example.org/docs/x")
    (el,) = root.getroottree().xpath(xpath)
    assert rmap.kinds.get(el) == kind


def test_rst_sidebar_callout_in_content_is_not_navigation() -> None:
    root = parse(LANDMARKS)
    rmap = classify(root, generator=None)
    (callout,) = root.getroottree().xpath("/html/body/div[1]/main/div[1]")
    assert callout not in rmap.kinds
    link = callout.find(".//a")
    assert rmap.region_of(link) == "main_content"


def test_region_of_is_innermost_classified_ancestor() -> None:
    root = load("sphinx_rtd")
    rmap = classify(root, generator="sphinx", base_url=EXPECTED["sphinx_rtd"]["url"])
    by_text = {"".join(a.itertext()).strip(): a for a in root.iter("a")}
    assert rmap.region_of(by_text["Sidebar overview entry"]) == "sidebar_navigation"
    assert rmap.region_of(by_text["Requirements"]) == "table_of_contents"  # page toc in sidebar
    assert rmap.region_of(by_text["configuring"]) == "main_content"


def test_signature_depends_on_link_set_only() -> None:
    a = parse("<ul><li><a href='/x#frag'>X</a></li><li><a href='y'>Y</a></li></ul>")
    b = parse("<nav><a href='/y'>why</a> <a href='/x'>ex</a></nav>")
    c = parse("<nav><a href='/z'>Z</a></nav>")
    base = "https://example.org/"
    assert region_signature(a, base) == region_signature(b, base)
    assert region_signature(a, base) != region_signature(c, base)


def test_overrides_relabel_by_locator() -> None:
    root = parse(LANDMARKS)
    rmap = classify(root, overrides={"/html/body/div[1]/aside": "primary_navigation"})
    (aside,) = root.getroottree().xpath("/html/body/div[1]/aside")
    assert rmap.kinds[aside] == "primary_navigation"
    assert any(
        r.locator == "/html/body/div[1]/aside" and r.region == "primary_navigation"
        for r in rmap.regions
    )


def test_classification_does_not_modify_tree() -> None:
    root = load("docusaurus")
    before = etree.tostring(root)
    classify(root, generator="docusaurus")
    assert etree.tostring(root) == before


# Small DOM shapes of generators without a full fixture page.
PROFILE_SNIPPETS = {
    "antora": (
        '<html><head><meta name="generator" content="Antora 3.1.7"></head><body class="article">'
        '<header class="header"><nav class="navbar"><a class="navbar-item" href="/">Docs</a>'
        "</nav></header><div class='body'><div class='nav-container' data-component='w'>"
        "<aside class='nav'><nav class='nav-menu'><h3 class='title'><a href='index.html'>W</a>"
        "</h3><ul class='nav-list'><li class='nav-item'><a class='nav-link' href='install.html'>"
        "Menu install</a></li></ul></nav></aside></div><main class='article'>"
        "<div class='toolbar' role='navigation'><nav class='breadcrumbs' aria-label='breadcrumbs'>"
        "<ul><li><a href='index.html'>W</a></li><li><a href='config.html'>Config</a></li></ul>"
        "</nav></div><div class='content'><aside class='toc sidebar'><div class='toc-menu'>"
        "<ul><li><a href='#_keys'>Keys</a></li></ul></div></aside><article class='doc'>"
        "<h1 class='page'>Config</h1><p>Article body text about keys.</p>"
        "<nav class='pagination'><span class='next'><a href='next.html'>Next page</a></span></nav>"
        "</article></div></main></div></body></html>",
        {
            "Menu install": "sidebar_navigation",
            "Config": "breadcrumb",
            "Keys": "table_of_contents",
            "Next page": "pagination",
        },
    ),
    "starlight": (
        '<html><head><meta name="generator" content="Astro v4.3.5">'
        '<meta name="generator" content="Starlight v0.19.0"></head><body>'
        "<div class='page sl-flex'><header class='header'><a href='/' class='site-title'>Site</a>"
        "</header><nav class='sidebar' aria-label='Main'><div id='starlight__sidebar'>"
        "<ul class='top-level'><li><details open><summary>Guides</summary><ul><li>"
        "<a href='/guides/example/'>Example guide</a></li></ul></details></li></ul></div></nav>"
        "<div class='main-frame'><aside class='right-sidebar-container'><starlight-toc>"
        "<nav aria-labelledby='starlight__on-this-page'><h2 id='starlight__on-this-page'>On this "
        "page</h2><ul><li><a href='#_top'>Overview</a></li></ul></nav></starlight-toc></aside>"
        "<main data-pagefind-body><h1 id='_top'>Example</h1><div class='sl-markdown-content'>"
        "<p>Guide body text.</p></div><footer><div class='pagination-links'>"
        "<a href='/reference/example/' rel='next'>Next reference</a></div></footer></main>"
        "</div></div></body></html>",
        {
            "Example guide": "sidebar_navigation",
            "Overview": "table_of_contents",
            "Next reference": "pagination",
            "Site": "primary_navigation",
        },
    ),
    "gitbook": (
        '<html><head><meta name="generator" content="GitBook 3.2.3"></head><body>'
        "<div class='book'><div class='book-summary'><nav role='navigation'><ul class='summary'>"
        "<li class='chapter active'><a href='./'>Introduction</a></li><li class='chapter'>"
        "<a href='setup.html'>Summary setup</a></li></ul></nav></div><div class='book-body'>"
        "<div class='body-inner'><div class='book-header' role='navigation'><h1>"
        "<a href='.'>Header link</a></h1></div><div class='page-wrapper' role='main'>"
        "<div class='page-inner'><section class='normal markdown-section'><h1>Intro</h1>"
        "<p>Book body text.</p></section></div></div></div>"
        "<a href='setup.html' class='navigation navigation-next' aria-label='Next page: Setup'>"
        "<i class='fa fa-angle-right'></i></a></div></div></body></html>",
        {
            "Summary setup": "sidebar_navigation",
            "Header link": "primary_navigation",
            "Next page: Setup": "pagination",
        },
    ),
}


@pytest.mark.parametrize("name", sorted(PROFILE_SNIPPETS))
def test_profile_snippets(name: str) -> None:
    html, expected = PROFILE_SNIPPETS[name]
    root = parse(html)
    assert detect_profile(root) == name
    rmap = classify(root, generator=name, base_url=f"https://docs.example.org/{name}/page.html")
    assert "body text" in "".join(rmap.main.itertext())
    for a in root.iter("a"):
        text = " ".join("".join(a.itertext()).split()) or a.get("aria-label")
        if text in expected:
            assert rmap.region_of(a) == expected.pop(text), text
    assert expected == {}  # every expected link was seen


def test_every_pagination_text_passes_the_candidate_prefilter() -> None:
    from docscrawl.extract.profiles import PAGINATION_TEXTS
    from docscrawl.extract.regions import is_pagination_anchor, paging_anchors

    anchors = "".join(f'<a href="/p{i}">« {text.upper()} »</a>'
                      for i, text in enumerate(sorted(PAGINATION_TEXTS)))
    root = etree.fromstring(f"<html><body>{anchors}<a href='/x'>Install</a></body></html>",
                            etree.HTMLParser())
    paging = paging_anchors(root)
    assert len(paging) == len(PAGINATION_TEXTS) and all(paging.values())
    every = root.findall(".//a")
    assert [a for a in every if is_pagination_anchor(a)] == list(paging)


NESTED_ORPHANS = """<html><body>
<div class="doc"><main><h1>T</h1><p>Text <a href="/in">in</a>.</p></main></div>
<div><p><a href="/o1">outer orphan</a></p>
  <div><a href="/o2">inner orphan</a><nav><a href="/n1">n1</a><a href="/n2">n2</a></nav></div>
  <a href="/o3">after</a></div>
<a href="/top">top-level</a>
</body></html>"""


def _walked(rmap: RegionMap, a: etree._Element) -> etree._Element | None:
    """`region_element` as a walk up from the anchor, without `classify`'s anchor table."""
    return RegionMap(rmap.main, rmap.kinds, []).region_element(a)


@pytest.mark.parametrize("name", [*sorted(EXPECTED), "nested-orphans"])
def test_anchor_table_is_the_walk_up(name: str) -> None:
    """`classify` lists every anchor's innermost region once (`_anchor_owners`), unknown
    containers (nested ones too) added after the orphan search: the same answer as the
    walk up from each anchor."""
    if name == "nested-orphans":
        root, base = parse(NESTED_ORPHANS), "https://example.org/p.html"
    else:
        root, base = load(name), EXPECTED[name]["url"]
    rmap = classify(root, generator=detect_profile(root), base_url=base)
    anchors = list(root.iter("a", "area"))
    assert anchors
    for a in anchors:
        assert rmap.region_element(a) is _walked(rmap, a), etree.tostring(a)
    if name == "nested-orphans":
        unknown = [el for el, kind in rmap.kinds.items() if kind == "unknown"]
        assert len(unknown) >= 2  # a container of orphans inside another


def test_paging_candidates_by_rel_and_accesskey_without_words() -> None:
    from docscrawl.extract.regions import paging_anchors

    root = parse('<html><body><a rel="next" href="/2">2</a><a accesskey="p" href="/0">0</a>'
                 '<a href="/x">Install</a><a href="/y"><span>NEXT</span> page</a></body></html>')
    paging = paging_anchors(root)
    assert [a.get("href") for a in paging] == ["/2", "/0", "/y"]


def _fixture_values() -> set[str]:
    values: set[str] = set()
    for page in FIXTURES.parent.rglob("*.html"):
        root = parse(page.read_text(encoding="utf-8", errors="replace"))
        for el in root.iter():
            values.update(v for k, v in el.items() if k in ("class", "id", "aria-label"))
    return values


def test_may_name_region_never_hides_a_region_word() -> None:
    """`_generic_kind` skips the tokens of values `may_name_region` rules out: none of
    their tokens may be a region or navigation word (`vocabulary_region`, NAV_TOKENS)."""
    from docscrawl.extract.profiles import (
        NAV_TOKENS,
        may_name_region,
        vocabulary_region,
        vocabulary_tokens,
    )

    values = _fixture_values() | {
        "md-sidebar--primary", "BreadCrumbList", "wy-nav-side", "x_TOC_y", "onThisPage",
        "page-Outline", "navLinks", "prevNext", "related", "section", "s-1", "menuItem",
        "résumé-nav", "a\u00a0b", "",
    }
    assert len(values) > 500
    for value in values:
        tokens = vocabulary_tokens(value)
        names = vocabulary_region(tokens) is not None or bool(tokens & NAV_TOKENS)
        if names:
            assert may_name_region(value), value
    assert not may_name_region("section") and not may_name_region("timeout-index-4")


AFTER_MAIN = """
<html><body>
<nav class="topics"><a href="/docs/a">Guides</a><a href="/docs/b">Reference</a></nav>
{open}<h1>Page</h1><p>Body text of the page, long enough to be the main content of it,
and a second sentence so that nothing else on the page holds more text.</p>{close}
<nav class="more"><a href="/docs/c">Related guide</a><a href="/docs/d">Other page</a></nav>
</body></html>
"""


@pytest.mark.parametrize("main", [
    ('<div class="document">', "</div>"), ("<main>", "</main>"), ("<article>", "</article>"),
])
def test_a_small_nav_after_the_main_content_is_no_primary_navigation(
    main: tuple[str, str],
) -> None:
    """The same unnamed two-link `nav` is the site's navigation before the main content and
    not after it, whatever the main element's tag (with `main` or `article`, whose tags are
    no region tags, every nav was taken as before it)."""
    root = parse(AFTER_MAIN.format(open=main[0], close=main[1]))
    rmap = classify(root, base_url="https://example.org/docs/page")
    before, after = root.iter("nav")
    assert rmap.main.tag == main[0][1:].split()[0].rstrip(">")
    assert rmap.kinds.get(before) == "primary_navigation"
    assert rmap.kinds.get(after) != "primary_navigation"


def test_mdbook_page_navigation_without_its_profile_is_pagination() -> None:
    """mdBook's markup under a theme the generator detection does not know: its two
    `nav aria-label="Page navigation"` blocks follow `<main>` and hold the prev/next
    links, so they are pagination, not the site's primary navigation."""
    root = load("mdbook")
    rmap = classify(root, generator=None, base_url=EXPECTED["mdbook"]["url"])
    navs = [el for el in root.iter("nav") if el.get("aria-label") == "Page navigation"]
    assert len(navs) == 2
    assert [rmap.kinds.get(el) for el in navs] == ["pagination", "pagination"]
