"""Discovery links (cheap, labelled by region) and contract links (merged with main links)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import parsel
import pytest
from lxml import etree

from docscrawl.extract.generator import detect_profile
from docscrawl.extract.links import discovery_links, link_target, page_links
from docscrawl.extract.model import Link
from docscrawl.extract.regions import classify

FIXTURES = Path(__file__).parents[2] / "fixtures" / "pages" / "generators"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


def parse(html: str) -> etree._Element:
    return parsel.Selector(text=html, type="html").root


def load(name: str) -> etree._Element:
    return parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_discovery_labels(name: str) -> None:
    url = EXPECTED[name]["url"]
    found = discovery_links(load(name), url)
    labelled = {(link.text, link.region) for link in found}
    for text, region in EXPECTED[name]["links"]:
        assert (text, region) in labelled, (text, region)
    for link in found:
        parts = urlsplit(link.url)
        assert parts.scheme in ("http", "https")
        assert not parts.fragment
        assert link.url != url


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_discovery_with_shared_region_map(name: str) -> None:
    root = load(name)
    url = EXPECTED[name]["url"]
    rmap = classify(root, generator=detect_profile(root), base_url=url)
    assert discovery_links(root, url, region_map=rmap) == discovery_links(root, url)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_discovery_without_texts_finds_the_same_links(name: str) -> None:
    """The crawl's discovery skips the anchors' text: same URLs and regions, in order."""
    root = load(name)
    url = EXPECTED[name]["url"]
    full = discovery_links(root, url)
    bare = discovery_links(root, url, texts=False)
    assert [(link.url, link.region) for link in bare] == [(link.url, link.region) for link in full]


DISCOVERY_PAGE = """
<html><head>
  <base href="https://example.org/docs/v2/">
  <link rel="next" href="next-page.html" title="Next page">
  <link rel="stylesheet" href="style.css">
</head><body>
  <nav class="sidebar"><a href="a.html">A</a> <a href="a.html#part">A again</a>
    <a href="mailto:team@example.org">Mail</a> <a href="javascript:void(0)">JS</a>
    <a href="#top">Top</a> <a href="">Self</a></nav>
  <main><p>Read <a href="a.html">A</a> and
    <a href="files/guide.pdf" download>the PDF</a>.</p></main>
</body></html>
"""


def test_discovery_resolves_filters_and_dedupes() -> None:
    found = discovery_links(parse(DISCOVERY_PAGE), "https://example.org/docs/v2/page.html")
    assert [(link.url, link.region) for link in found] == [
        ("https://example.org/docs/v2/a.html", "sidebar_navigation"),
        ("https://example.org/docs/v2/a.html", "main_content"),
        ("https://example.org/docs/v2/next-page.html", "pagination"),
    ]


@pytest.mark.parametrize(
    ("url", "href", "expected"),
    [
        ("https://example.org/docs/page.html#intro", "#intro", "fragment"),
        ("https://example.org/docs/page.html", "#", "fragment"),
        ("https://example.org/docs/other.html", "other.html", "internal"),
        ("https://example.org/docs/other.html#x", "other.html#x", "internal"),
        ("https://example.org/files/manual.pdf", "/files/manual.pdf", "asset"),
        ("https://cdn.example.net/pkg.tar.gz", "https://cdn.example.net/pkg.tar.gz", "asset"),
        ("https://github.com/example/repo", "https://github.com/example/repo", "external"),
        ("mailto:team@example.org", "mailto:team@example.org", "external"),
        # another netloc, the same host (case, credentials): internal, by hostname
        ("https://EXAMPLE.org/docs/a.html", "https://EXAMPLE.org/docs/a.html", "internal"),
        ("http://u@example.org/docs/a.html", "http://u@example.org/docs/a.html", "internal"),
        ("https://example.org:8443/a.html", "https://example.org:8443/a.html", "internal"),
        ("https://docs.example.org/a.html", "https://docs.example.org/a.html", "external"),
    ],
)
def test_link_target(url: str, href: str, expected: str) -> None:
    for _ in range(2):  # the second time from `_url_facts`' memo
        assert link_target(url, "https://example.org/docs/page.html", href) == expected


MERGE_PAGE = """
<html><body>
  <nav class="sidebar"><p class="caption">Guides</p>
    <ul><li><a href="/docs/a">Alpha</a></li><li><a href="/docs/b">Beta</a></li></ul></nav>
  <main>
    <div class="breadcrumbs"><a href="/docs/">Docs</a> / <a href="/docs/guides/">Guides</a></div>
    <h1>Title<a class="headerlink" href="#title">¶</a></h1>
    <p>See <a href="/docs/a">alpha</a> and <a href="https://other.example/x">elsewhere</a>.</p>
  </main>
  <footer><a href="/legal">Legal</a></footer>
</body></html>
"""


def _main_link(url: str, text: str) -> Link:
    return Link(url, text, [], "main_content", "paragraph", None, ["Title"], "internal", 99)


def test_page_links_merge_main_links_in_document_order() -> None:
    root = parse(MERGE_PAGE)
    base = "https://example.org/docs/guides/page"
    rmap = classify(root, base_url=base)
    main_links = [
        _main_link("https://example.org/docs/a", "alpha"),
        _main_link("https://other.example/x", "elsewhere"),
    ]
    links = page_links(root, base, regions=rmap, main_el=rmap.main, main_links=main_links)
    assert [(link.text, link.region) for link in links] == [
        ("Alpha", "sidebar_navigation"),
        ("Beta", "sidebar_navigation"),
        ("Docs", "breadcrumb"),
        ("Guides", "breadcrumb"),
        ("alpha", "main_content"),  # the permalink the renderer dropped stays dropped
        ("elsewhere", "main_content"),
        ("Legal", "footer_navigation"),
    ]
    assert [link.position for link in links] == list(range(len(links)))
    assert links[4].heading_path == ["Title"]
    sidebar = links[0]
    assert (sidebar.container, sidebar.container_label, sidebar.heading_path) == (
        "navigation", "Guides", []
    )
    assert links[-1].target == "internal"


def test_page_links_keep_unmatched_main_links() -> None:
    root = parse(MERGE_PAGE)
    base = "https://example.org/docs/guides/page"
    rmap = classify(root, base_url=base)
    extra = _main_link("https://example.org/docs/generated", "generated")
    links = page_links(root, base, regions=rmap, main_el=rmap.main, main_links=[extra])
    assert "generated" in [link.text for link in links]
    assert [link.text for link in links][-1] == "Legal"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_page_links_without_renderer(name: str) -> None:
    root = load(name)
    url = EXPECTED[name]["url"]
    rmap = classify(root, generator=detect_profile(root), base_url=url)
    links = page_links(root, url, regions=rmap, main_el=rmap.main, main_links=[])
    assert links, name
    for link in links:
        assert link.region != "main_content"
        assert link.heading_path == []
        assert link.target in ("internal", "external", "fragment", "asset")
        assert link.container in (
            "paragraph", "list_item", "table", "card", "heading", "navigation", "other"
        )


def test_malformed_hrefs_are_skipped() -> None:
    root = parse(
        '<html><body><nav><a href="http://[::1">bad</a> <a href=" /x\n">x</a>'
        '<a>no href</a></nav><main><p>Body text.</p></main></body></html>'
    )
    found = discovery_links(root, "https://example.org/a")
    assert [(link.url, link.text) for link in found] == [("https://example.org/x", "x")]


def test_head_document_links_are_followed_but_not_search() -> None:
    html = ('<html><head><link rel="index" href="genindex.html"><link rel="search" '
            'href="search.html"><link rel="next" href="b.html"><link rel="stylesheet" '
            'href="s.css"></head><body><p>x</p></body></html>')
    found = {(d.url.rsplit("/", 1)[-1], d.region)
             for d in discovery_links(parsel.Selector(text=html).root, "https://d.example/a.html")}
    assert found == {("genindex.html", "primary_navigation"), ("b.html", "pagination")}


def test_discovery_follows_the_schemes_urlsplit_reads() -> None:
    """Discovery reads a joined URL's scheme without splitting it (`_scheme`): the URLs it
    follows are those whose `urlsplit` scheme is http or https."""
    from docscrawl.extract.urls import join

    base = "https://example.org/docs/a.html"
    hrefs = ["HTTPS://Example.org/x", "Http://example.org/y", "ftp://example.org/f",
             "//cdn.example.org/p", "data:text/html,x", "b.html", "/c", "../d?q=1#f",
             "mailto:x@example.org", "tel:+1", "git+ssh://example.org/r", "h1:2"]
    html = "<html><body><nav>" + "".join(f'<a href="{h}">{i}</a>' for i, h in enumerate(hrefs))
    found = {link.url for link in discovery_links(parse(html + "</nav></body></html>"), base)}
    expected = set()
    for href in hrefs:
        url = join(base, href)
        if url and urlsplit(url).scheme.lower() in ("http", "https"):
            expected.add(url.partition("#")[0])
    assert found == expected and len(found) == 6
