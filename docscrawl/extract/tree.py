"""Parse HTML into the plain lxml tree every extractor works on (no Scrapy needed).

`lxml.html.HTMLParser` (what `parsel` and Scrapy's `response.selector` use) looks up
each element's Python class with a Python function whenever an element is touched from
Python: on a large documentation page (16,000 elements) that lookup costs several times
the walk itself. `etree.HTMLParser` builds the same tree (libxml2 parses in both cases)
with plain `etree._Element` proxies, which is all the extractors need.
"""

from __future__ import annotations

from lxml import etree

__all__ = ["html_root"]


def html_root(text: str, base_url: str | None = None) -> etree._Element:
    """The root element of an HTML document (never None: an empty one is `<html/>`)."""
    body = text.strip().replace("\x00", "").encode("utf-8") or b"<html/>"
    parser = etree.HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:  # only comments or a doctype
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    return root
