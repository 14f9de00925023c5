"""Parse a page once (`extract.tree.html_root`) and share the tree through the response."""

from __future__ import annotations

from lxml import etree
from scrapy.http import TextResponse
from scrapy.selector import Selector
from scrapy.utils.response import get_base_url

from docscrawl.extract.tree import html_root

__all__ = ["html_root", "response_root"]


def response_root(response: TextResponse) -> etree._Element:
    """The parsed tree of `response`, parsed on first use and then shared: the render
    middleware, the spider and anything reading `response.selector` see one tree."""
    cached = response._cached_selector  # Scrapy's own cache slot for `response.selector`
    if cached is None:
        root = html_root(response.text, get_base_url(response))
        cached = response._cached_selector = Selector(root=root, type="html")
    return cached.root
