"""One parse per page: a plain lxml tree, shared through the response."""

from __future__ import annotations

from pathlib import Path

import parsel
from lxml import etree
from scrapy.http import HtmlResponse

from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root
from docscrawl.parse import response_root

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
