"""Breadcrumb extraction: visible trails, structured trails, and the preferred one."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.breadcrumbs import extract_breadcrumbs, trails_agree, visible_text
from docscrawl.extract.docindex import DocIndex
from docscrawl.extract.model import Breadcrumb

PAGES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "breadcrumbs"
BASE = "https://docs.example.test/en/latest/usage/config.html"
SCRAPY_SPIDERS = Path("/usr/share/doc/python-scrapy-doc/html/topics/spiders.html")

Trail = list[tuple[str, str | None]]


def _load(name: str) -> tuple[etree._Element, str]:
    html = (PAGES / f"{name}.html").read_text(encoding="utf-8")
    return Selector(text=html).root, html


def _pairs(trail: list[Breadcrumb]) -> Trail:
    assert [c.position for c in trail] == list(range(1, len(trail) + 1))
    return [(c.label, c.url) for c in trail]


D = "https://docs.example.test"
CASES: list[tuple[str, str, Trail, Trail, list[str]]] = [
    # (fixture, source, preferred trail, jsonld observation, warning codes)
    (
        "rtd",
        "visible",
        [("Usage", f"{D}/en/latest/usage/index.html"), ("Configuration", None)],
        [],
        ["breadcrumb_unlabelled_item"],  # the icon-only home link has no name at all
    ),
    (
        "docusaurus_jsonld",
        "visible-and-jsonld",
        [
            ("Home page", f"{D}/"),
            ("Guides", f"{D}/docs/category/guides"),
            ("Installation", None),
        ],
        [
            ("Guides", "https://docs.acme.test/docs/category/guides"),
            ("Installation", "https://docs.acme.test/docs/guides/installation"),
        ],
        [],
    ),
    (
        "pydata",
        "visible",
        [
            ("Home", f"{D}/en/latest/index.html"),
            ("User Guide", f"{D}/en/latest/usage/index.html"),
            ("Theming", None),
        ],
        [],
        [],
    ),
    (
        "mkdocs_material",
        "visible",
        [("Home", f"{D}/en/"), ("Setup", f"{D}/en/latest/")],
        [],
        [],
    ),
    (
        "microdata",
        "visible-and-jsonld",
        [
            ("Documentation", f"{D}/docs/"),
            ("Security", f"{D}/docs/security/"),
            ("Rotate keys", None),
        ],
        [
            ("Documentation", f"{D}/docs/"),
            ("Security", f"{D}/docs/security/"),
            ("Rotate keys", None),
        ],
        [],
    ),
    (
        "disagreeing",
        "visible",
        [
            ("Guides", f"{D}/v2/"),
            ("Authentication", f"{D}/v2/auth/"),
            ("Access tokens", None),
        ],
        [
            ("Documentation", f"{D}/"),
            ("API", f"{D}/api/"),
            ("Access tokens", f"{D}/v2/auth/tokens"),
        ],
        ["breadcrumb_disagreement"],
    ),
    (
        "jsonld_only",
        "jsonld",
        [("Reference", f"{D}/reference/")],
        [("Reference", f"{D}/reference/")],
        [],
    ),
    (
        "pallets_related",
        "visible",
        [
            ("Flasky Documentation (2.2.x)", f"{D}/en/latest/index.html"),
            ("Patterns", f"{D}/en/latest/usage/index.html"),
            ("Caching", None),
        ],
        [],
        [],
    ),
    ("no_trail", "none", [], [], []),
    (
        "antora",
        "visible",
        [
            ("Orbit", f"{D}/en/latest/index.html"),
            ("Getting started", None),
            ("Install the CLI", f"{D}/en/latest/usage/install.html"),
        ],
        [],
        [],
    ),
    (
        "inline_links",
        "visible",
        [("Docs", f"{D}/docs/"), ("Integrations", f"{D}/docs/integrations/"), ("Webhooks", None)],
        [],
        [],
    ),
]


@pytest.mark.parametrize(
    ("name", "source", "trail", "jsonld", "codes"), CASES, ids=[c[0] for c in CASES]
)
def test_fixture_trails(
    name: str, source: str, trail: Trail, jsonld: Trail, codes: list[str]
) -> None:
    root, html = _load(name)
    result = extract_breadcrumbs(root, html, BASE)
    assert result.source == source
    assert _pairs(result.breadcrumbs) == trail
    assert _pairs(result.observations["jsonld"]) == jsonld
    assert [w.code for w in result.warnings] == codes


def test_disagreement_keeps_both_and_names_them() -> None:
    root, html = _load("disagreeing")
    result = extract_breadcrumbs(root, html, BASE)
    assert result.observations["visible"][0].label == "Guides"
    assert result.observations["jsonld"][0].label == "Documentation"
    detail = result.warnings[0].detail
    assert "Guides > Authentication > Access tokens" in detail
    assert "Documentation > API > Access tokens" in detail


@pytest.mark.parametrize("name", sorted(p.stem for p in PAGES.glob("*.html")))
def test_input_tree_is_not_mutated(name: str) -> None:
    root, html = _load(name)
    before = etree.tostring(root)
    extract_breadcrumbs(root, html, BASE)
    assert etree.tostring(root) == before


def _page(head: str = "", body: str = "") -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"


def _jsonld(data: str) -> str:
    return f'<script type="application/ld+json">{data}</script>'


STRUCTURED = [
    (
        "list-int-positions",
        '{"@type":"BreadcrumbList","itemListElement":['
        '{"@type":"ListItem","position":1,"name":"A","item":"/a/"},'
        '{"@type":"ListItem","position":2,"name":"B"}]}',
        [("A", "https://s.test/a/"), ("B", None)],
    ),
    (
        "single-dict-string-position",
        '{"@type":"BreadcrumbList","itemListElement":'
        '{"@type":"ListItem","position":"1","name":"Only","item":"https://s.test/o"}}',
        [("Only", "https://s.test/o")],
    ),
    (
        "out-of-order-item-objects",
        '{"@type":"BreadcrumbList","itemListElement":['
        '{"position":"3","item":{"@id":"/c","name":"C"}},'
        '{"position":"1","item":{"url":"/a","name":"A"}},'
        '{"position":"2","name":"B","item":{"@id":"/b"}}]}',
        [("A", "https://s.test/a"), ("B", "https://s.test/b"), ("C", "https://s.test/c")],
    ),
    (
        "graph-and-schema-type-url",
        '{"@graph":[{"@type":"WebSite"},{"@type":"http://schema.org/BreadcrumbList",'
        '"itemListElement":[{"position":1,"name":"  Docs \\n Home "}]}]}',
        [("Docs Home", None)],
    ),
    (
        "nested-in-webpage",
        '[{"@type":"WebPage","breadcrumb":{"@type":"BreadcrumbList","itemListElement":['
        '{"position":1,"name":"X","item":"/x"}]}}]',
        [("X", "https://s.test/x")],
    ),
]


@pytest.mark.parametrize(("case", "data", "trail"), STRUCTURED, ids=[s[0] for s in STRUCTURED])
def test_structured_shapes(case: str, data: str, trail: Trail) -> None:
    html = _page(head=_jsonld(data))
    result = extract_breadcrumbs(Selector(text=html).root, html, "https://s.test/page")
    assert result.source == "jsonld", case
    assert _pairs(result.breadcrumbs) == trail


def test_structured_from_html_text_when_no_tree() -> None:
    html = _page(
        head=_jsonld('{"@type":"BreadcrumbList","itemListElement":[{"position":1,"name":"T"}]}')
    )
    result = extract_breadcrumbs(None, html, "https://s.test/")
    assert result.source == "jsonld"
    assert _pairs(result.breadcrumbs) == [("T", None)]


def test_unnamed_structured_item_is_dropped_with_warning() -> None:
    html = _page(
        head=_jsonld(
            '{"@type":"BreadcrumbList","itemListElement":[{"position":1,"item":"/a"},'
            '{"position":2,"name":"B"}]}'
        )
    )
    result = extract_breadcrumbs(Selector(text=html).root, html, "https://s.test/")
    assert _pairs(result.breadcrumbs) == [("B", None)]
    assert [w.code for w in result.warnings] == ["breadcrumb_unlabelled_item"]


def test_broken_json_ld_is_a_warning_not_a_crash() -> None:
    html = _page(head=_jsonld("{not json at all"), body='<ol class="breadcrumb"><li>Only</li></ol>')
    result = extract_breadcrumbs(Selector(text=html).root, html, "https://s.test/")
    assert result.source == "visible"
    assert [w.code for w in result.warnings] == ["structured_data_error"]


def test_short_visible_trail_yields_to_disagreeing_jsonld() -> None:
    body = '<nav aria-label="Breadcrumbs"><ol><li>Page</li></ol></nav>'
    data = (
        '{"@type":"BreadcrumbList","itemListElement":'
        '[{"position":1,"name":"Docs"},{"position":2,"name":"Guide"}]}'
    )
    html = _page(head=_jsonld(data), body=body)
    result = extract_breadcrumbs(Selector(text=html).root, html, "https://s.test/")
    assert result.source == "jsonld"
    assert [c.label for c in result.breadcrumbs] == ["Docs", "Guide"]
    assert [w.code for w in result.warnings] == ["breadcrumb_disagreement"]


@pytest.mark.parametrize(
    ("body", "labels"),
    [
        (
            '<nav aria-label="breadcrumb"><ol><li><a href="/">Docs</a> &raquo;</li>'
            "<li>› Guide ›</li></ol></nav>",
            ["Docs", "Guide"],
        ),
        (
            '<ol class="breadcrumb"><li><a href="/">A</a><i class="fa fa-chevron-right"></i></li>'
            '<li><span class="visually-hidden">Current:</span>B</li></ol>',
            ["A", "B"],
        ),
        (
            '<nav class="breadcrumbs"><ul><li><a href="/">A</a></li><li>B</li>'
            '<li><a href="https://github.com/x/edit">Edit this page</a></li></ul></nav>',
            ["A", "B"],
        ),
        (
            '<div class="related"><ul><li class="right"><a href="a.html">previous</a> |</li>'
            "</ul></div>",
            [],
        ),
        (
            '<div class="related"><ul><li><a href="index.html">Project</a> &#187;</li>'
            '<li><a href="next.html">next</a></li></ul></div>',
            ["Project"],
        ),
        (
            '<div class="layout-with-breadcrumbs"><ul>'
            + "".join(f'<li><a href="/p{i}">Page {i}</a></li>' for i in range(30))
            + "</ul></div>",
            [],
        ),
    ],
    ids=[
        "separators",
        "icons-and-sr-only",
        "edit-link",
        "relbar-only",
        "old-relbar-no-classes",
        "page-wrapper-is-not-a-trail",
    ],
)
def test_visible_label_cleaning(body: str, labels: list[str]) -> None:
    html = _page(body=body)
    result = extract_breadcrumbs(Selector(text=html).root, html, "https://s.test/")
    assert [c.label for c in result.breadcrumbs] == labels


@pytest.mark.parametrize(
    ("visible", "structured", "agree"),
    [
        (["Docs", "Guide"], ["docs", "GUIDE"], True),
        (["Home", "Docs"], ["Docs"], True),
        (["Docs"], ["Home", "Docs"], True),
        (["Home", "Docs"], ["home page", "Docs"], True),
        (["Docs", "Guide"], ["Docs"], False),
        (["Start", "Docs"], ["Docs"], False),
        (["Docs"], ["Documentation"], False),
    ],
)
def test_agreement_rule(visible: list[str], structured: list[str], agree: bool) -> None:
    def trail(labels: list[str]) -> list[Breadcrumb]:
        return [Breadcrumb(i, label, None) for i, label in enumerate(labels, 1)]

    assert trails_agree(trail(visible), trail(structured)) is agree


def test_visible_text_skips_hidden_but_keeps_tails() -> None:
    root = Selector(text='<p>a <span aria-hidden="true">x</span>b<script>s()</script> c</p>').root
    assert visible_text(root.find(".//p")) == "a b c"


@pytest.mark.skipif(not SCRAPY_SPIDERS.exists(), reason="python-scrapy-doc not installed")
def test_real_scrapy_rtd_page() -> None:
    html = SCRAPY_SPIDERS.read_text(encoding="utf-8")
    url = "http://127.0.0.1:17101/en/2.8/topics/spiders.html"
    result = extract_breadcrumbs(Selector(text=html).root, html, url)
    assert result.source == "visible"
    assert _pairs(result.breadcrumbs) == [
        ("Home", "http://127.0.0.1:17101/en/2.8/index.html"),
        ("Spiders", None),
    ]
    assert result.warnings == []


def test_microdata_list_nested_in_another_item() -> None:
    body = (
        '<div itemscope itemtype="https://schema.org/WebPage"><p itemprop="name">Page</p>'
        '<ol itemprop="breadcrumb" itemscope itemtype="https://schema.org/BreadcrumbList">'
        '<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem">'
        '<a itemprop="item" href="/b/"><span itemprop="name">B</span></a>'
        '<meta itemprop="position" content="2"></li>'
        '<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem">'
        '<a itemprop="item" href="/a/"><span itemprop="name">A</span></a>'
        '<meta itemprop="position" content="1"></li></ol></div>'
    )
    html = _page(body=body)
    result = extract_breadcrumbs(Selector(text=html).root, html, "https://s.test/x")
    assert _pairs(result.observations["jsonld"]) == [
        ("A", "https://s.test/a/"),
        ("B", "https://s.test/b/"),
    ]
    # The visible list is in document order, so the two disagree.
    assert [c.label for c in result.observations["visible"]] == ["B", "A"]
    assert result.source == "visible"



@pytest.mark.parametrize("name", ["microdata", "jsonld_only", "disagreeing",
                                  "docusaurus_jsonld", "rtd", "no_trail"])
def test_the_page_index_changes_no_trail(name: str) -> None:
    """With the page's DocIndex, the microdata query is skipped on pages without a
    BreadcrumbList `itemtype` (and JSON-LD without its script): the same result."""
    root, html = _load(name)
    alone = extract_breadcrumbs(root, html, BASE)
    indexed = extract_breadcrumbs(root, html, BASE, index=DocIndex.of(root))
    assert indexed == alone
    if name in ("microdata", "jsonld_only"):
        assert indexed.observations["jsonld"]  # the structured trail was read
