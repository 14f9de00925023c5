"""Parse a page once, into a plain lxml tree, and share it through the response.

Scrapy's `response.selector` parses with `lxml.html.HTMLParser`, whose element classes
are looked up by a Python function each time an element is touched from Python: on a
large documentation page (16,000 elements) that lookup costs several times the walk
itself. `etree.HTMLParser` builds the same tree (libxml2 does the parsing in both cases)
with plain `etree._Element` proxies, which the extractors need nothing more than.
"""

from __future__ import annotations

from lxml import etree
from scrapy.http import TextResponse
from scrapy.selector import Selector
from scrapy.utils.response import get_base_url

__all__ = ["html_root", "response_root"]


def html_root(text: str, base_url: str | None = None) -> etree._Element:
    """The root element of an HTML document (never None: an empty one is `<html/>`)."""
    body = text.strip().replace("\x00", "").encode("utf-8") or b"<html/>"
    parser = etree.HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:  # only comments or a doctype
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    return root


def response_root(response: TextResponse) -> etree._Element:
    """The parsed tree of `response`, parsed on first use and then shared: the render
    middleware, the spider and anything reading `response.selector` see one tree."""
    cached = response._cached_selector  # Scrapy's own cache slot for `response.selector`
    if cached is None:
        root = html_root(response.text, get_base_url(response))
        cached = response._cached_selector = Selector(root=root, type="html")
    return cached.root
