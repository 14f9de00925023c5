"""One parse per page: a plain lxml tree, shared through the response."""

from __future__ import annotations

from pathlib import Path

import parsel
from lxml import etree
from scrapy.http import HtmlResponse

from docscrawl.crawl.parse import response_root
from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_html_root_builds_plain_elements() -> None:
    root = html_root("<html><body><main><h1>Title</h1><p>Text</p></main></body></html>")
    assert type(root) is etree._Element
    assert [el.tag for el in root.iter()] == ["html", "body", "main", "h1", "p"]


def test_html_root_of_empty_or_comment_only_documents_is_an_html_element() -> None:
    for text in ("", "   ", "<!-- nothing -->", "\x00\x00"):
        assert html_root(text).tag == "html"


def test_response_root_is_parsed_once_and_shared_with_the_selector() -> None:
    response = HtmlResponse(
        "http://127.0.0.1/docs/", body=b"<html><body><p>caf\xc3\xa9</p></body></html>",
        encoding="utf-8",
    )
    root = response_root(response)
    assert response_root(response) is root
    assert response.selector.root is root
    assert response.css("p::text").get() == "café"


def test_extraction_is_identical_on_a_plain_tree_and_on_parsel_s_tree() -> None:
    pages = sorted(FIXTURES.glob("pages/generators/*.html"))
    assert len(pages) >= 10
    for page in pages:
        html = page.read_text(encoding="utf-8")
        url = f"http://127.0.0.1/docs/{page.name}"
        plain = extract_page(html_root(html), url, html=html)
        lxml_html = extract_page(parsel.Selector(text=html, type="html").root, url, html=html)
        assert plain == lxml_html, page.name


def test_text_after_a_stray_html_end_tag_is_kept() -> None:
    from docscrawl.extract.tree import PARSE_NOTE, html_root

    root = html_root("<html><body><p>one<ul><li>two</html><p>After the end.</p>")
    assert "After the end." in "".join(root.itertext())
    assert root.get(PARSE_NOTE) == "content after a stray </html> kept"
    clean = html_root("<html><body><p>one</p></body></html>\n")
    assert clean.get(PARSE_NOTE) is None


def test_nesting_past_the_parser_limit_is_flattened_not_lost() -> None:
    from docscrawl.extract.tree import MAX_DEPTH, PARSE_NOTE, flatten_deep, html_root

    deep = ("<html><body><main><h1>Deep</h1>" + "<div><span>" * 5000 + "bottom"
            + "</span></div>" * 5000 + "<p>After the deep part.</p></main></body></html>")
    root = html_root(deep)
    text = "".join(root.itertext())
    assert "bottom" in text and "After the deep part." in text
    assert root.get(PARSE_NOTE) == "8979 tags nested deeper than 1024 dropped, their text kept"
    assert max(len(list(el.iterancestors())) for el in root.iter()) <= MAX_DEPTH + 1
    flat, dropped = flatten_deep(b"<a><b><br><c>x</c></b></a>", limit=1)
    assert (flat, dropped) == (b"<a> <br> x  </a>", 2)
