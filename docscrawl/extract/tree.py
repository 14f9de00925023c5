"""Parse HTML into the plain lxml tree every extractor works on (no Scrapy needed).

`lxml.html.HTMLParser` (what `parsel` and Scrapy's `response.selector` use) looks up
each element's Python class with a Python function whenever an element is touched from
Python: on a large documentation page (16,000 elements) that lookup costs several times
the walk itself. `etree.HTMLParser` builds the same tree (libxml2 parses in both cases)
with plain `etree._Element` proxies, which is all the extractors need.

libxml2 silently drops content in two cases, which are repaired here rather than lost:
- text after a stray `</html>` (browsers, following HTML5, put it in the body): the
  `</html>` end tags are removed before parsing when content follows one;
- elements nested past its depth limit (2048 with `huge_tree`): it stops with a
  resource-limit error, and the page is parsed again with the tags nested deeper than
  MAX_DEPTH dropped (their text stays, in the element at that depth).
Either repair is noted on the root (PARSE_NOTE) for the page's `parse_recovered`
warning; content still missing after the repair gives `parse_truncated`.
"""

from __future__ import annotations

import re

from lxml import etree

__all__ = ["MAX_DEPTH", "PARSE_NOTE", "document_position", "flatten_deep", "html_root"]

PARSE_NOTE = "data-docscrawl-parse"  # on the root: how the parse was repaired
MAX_DEPTH = 1024  # tags nested deeper are dropped when libxml2's limit was hit
_HTML_END = re.compile(rb"</html\s*>", re.IGNORECASE)
_TAG = re.compile(rb"<(/?)([A-Za-z][A-Za-z0-9:-]*)\b[^>]*?(/?)>")
_VOID = frozenset({b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input",
                   b"link", b"meta", b"param", b"source", b"track", b"wbr"})


def html_root(text: str, base_url: str | None = None) -> etree._Element:
    """The root element of an HTML document (never None: an empty one is `<html/>`)."""
    body = text.strip().replace("\x00", "").encode("utf-8") or b"<html/>"
    notes = []
    stray = _HTML_END.search(body)
    if stray is not None and body[stray.end():].strip():
        body = _HTML_END.sub(b"", body)
        notes.append("content after a stray </html> kept")
    root, too_deep = _parse(body, base_url)
    if too_deep:
        flat, dropped = flatten_deep(body)
        root, still = _parse(flat, base_url)
        notes.append(f"{dropped} tags nested deeper than {MAX_DEPTH} dropped, their text kept"
                     + ("; content past the parser's depth limit is missing" if still else ""))
    if notes:
        root.set(PARSE_NOTE, "; ".join(notes))
    return root


def _parse(body: bytes, base_url: str | None) -> tuple[etree._Element, bool]:
    """The root, and whether libxml2 stopped at its depth limit."""
    parser = etree.HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:  # only comments or a doctype
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    log = parser.error_log
    too_deep = bool(log) and any(error.type_name == "ERR_RESOURCE_LIMIT"
                                 and "depth" in error.message for error in log)
    return root, too_deep


def flatten_deep(body: bytes, limit: int = MAX_DEPTH) -> tuple[bytes, int]:
    """`body` without the tags nested deeper than `limit` (a tag scan, not a parse: used
    only on the rare page that defeated the parser), and how many open tags were dropped."""
    out: list[bytes] = []
    depth = dropped = pending = 0
    last = 0
    for tag in _TAG.finditer(body):
        closing, name, self_closing = tag.groups()
        if name.lower() in _VOID or self_closing:
            continue
        if not closing and depth < limit:
            depth += 1
            continue
        if closing and not pending:
            depth = max(0, depth - 1)
            continue
        out.append(body[last:tag.start()])
        out.append(b" ")
        last = tag.end()
        if closing:
            pending -= 1
        else:
            pending += 1
            dropped += 1
    out.append(body[last:])
    return b"".join(out), dropped


def document_position(el: etree._Element) -> tuple[int, ...]:
    """Sort key of `el` in document order: its child index at each level from the root."""
    key: list[int] = []
    node = el
    parent = node.getparent()
    while parent is not None:
        key.append(parent.index(node))
        node, parent = parent, parent.getparent()
    key.reverse()
    return tuple(key)
