"""Classify a link found inside the main content: its target and its container.

Pure helpers for `markdown.render_main`, which records every `a[href]` it walks past.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import SplitResult, urlsplit

from lxml import etree

from docscrawl.extract.clean import visible_text
from docscrawl.extract.headings import heading_level
from docscrawl.extract.urls import SPLIT_CACHE, split

ASSET_EXTENSIONS = (
    ".pdf", ".zip", ".tar.gz", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".rar", ".whl", ".jar",
    ".exe", ".dmg", ".msi", ".deb", ".rpm", ".apk", ".iso", ".epub", ".png", ".svg", ".jpg",
    ".jpeg", ".gif", ".webp", ".ico", ".bmp", ".mp4", ".webm", ".mov", ".mp3", ".wav",
    ".csv", ".txt", ".ps", ".woff", ".woff2", ".ttf",
)
WEB_SCHEMES = frozenset({"http", "https"})
# Characters `urlsplit` removes before parsing: URLs holding them take the slow path.
UNSAFE_URL_CHARS = ("\t", "\r", "\n")
DEFAULT_PORTS = {"http": 80, "https": 443}
# Class-attribute substrings that make a container card-like (it also needs a title).
CARD_CLASS_PARTS = ("card", "tile")
TITLE_CLASS_PARTS = ("title", "heading")
EMPHASIS_TAGS = frozenset({"strong", "b"})
# Nearest block ancestors that make a link "other" rather than prose.
OTHER_CONTAINERS = frozenset({"pre", "dt", "figcaption", "caption", "summary"})
GRID_CELL_CLASSES = frozenset({"col-first", "col-second", "col-last", "col-constructor-name"})
OTHER_CLASSES = frozenset({"member-signature", "sig", "sig-object", "item-decl"})
INLINE_TAGS = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "i", "ins", "kbd",
    "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var",
    "tt", "font", "label",
})
# How far above a paragraph we still look for an enclosing card.
CARD_SEARCH_LEVELS = 4


def link_target(href: str, url: str, base_url: str) -> str:
    """`fragment`, `asset`, `internal` or `external` (see LINK_TARGETS)."""
    if href.strip().startswith("#"):
        return "fragment"
    local = _same_origin_rest(url, base_url)
    if local is not None:  # most links: same scheme and host as the page, no urlsplit
        path, query, fragment = local
        base = split(base_url)
        if fragment and (path or "/", query) == (base.path or "/", base.query):
            return "fragment"
        return "asset" if path.lower().endswith(ASSET_EXTENSIONS) else "internal"
    try:
        parts, base = urlsplit(url), split(base_url)
    except ValueError:  # a malformed URL such as http://[::1 is nobody's page
        return "external"
    if parts.scheme and parts.scheme not in WEB_SCHEMES:
        return "external"  # mailto:, tel:, ftp: ...
    same_host = (parts.hostname, _port(parts)) == (base.hostname, _port(base))
    if same_host and parts.fragment and (parts.path or "/", parts.query) == (
        base.path or "/",
        base.query,
    ):
        return "fragment"
    if parts.path.lower().endswith(ASSET_EXTENSIONS):
        return "asset"
    return "internal" if same_host else "external"


@lru_cache(maxsize=SPLIT_CACHE)
def _origin(base_url: str) -> str | None:
    """`scheme://netloc` of a web base URL as `urlsplit` reads it, or None."""
    try:
        base = split(base_url)
    except ValueError:
        return None
    if base.scheme not in WEB_SCHEMES or not base.netloc:
        return None
    origin = f"{base.scheme}://{base.netloc}"
    return origin if base_url.startswith(origin) else None


def _same_origin_rest(url: str, base_url: str) -> tuple[str, str, str] | None:
    """(path, query, fragment) of `url` when it starts with the base URL's origin (so its
    scheme and host are the base's) and `urlsplit` would read it plainly; else None."""
    origin = _origin(base_url)
    if origin is None or not url.startswith(origin):
        return None
    rest = url[len(origin):]
    if rest[:1] not in ("", "/", "?", "#") or any(c in url for c in UNSAFE_URL_CHARS):
        return None
    rest, _, fragment = rest.partition("#")
    path, _, query = rest.partition("?")
    return path, query, fragment


def _port(parts: SplitResult) -> int | None:
    try:
        port = parts.port
    except ValueError:
        return None
    return port or DEFAULT_PORTS.get(parts.scheme)


Container = tuple[str, str | None]  # (container, container_label)


def link_container(a: etree._Element, main: etree._Element,
                   memo: dict[etree._Element | None, Container] | None = None) -> Container:
    """(container, container_label) of a link inside `main`.

    Past the link itself, the answer depends only on its parent and what lies above it:
    `memo` (one per walk of `main`) remembers it per parent, for the links sharing one (a
    paragraph's, a table row's)."""
    if is_card(a):
        return "card", _title_text(a)
    parent = a.getparent()
    if memo is None:
        return _container_above(parent, main)
    found = memo.get(parent)
    if found is None:
        found = memo[parent] = _container_above(parent, main)
    return found


def _container_above(node: etree._Element | None, main: etree._Element) -> Container:
    """`link_container` of a link whose parent is `node`, the link itself aside."""
    paragraph_seen = 0
    while node is not None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if heading_level(node) is not None:
            return "heading", None
        if is_card(node):
            return "card", _title_text(node)
        if paragraph_seen:
            paragraph_seen += 1
            if paragraph_seen > CARD_SEARCH_LEVELS:
                return "paragraph", None
        elif tag == "li":
            return "list_item", _leading_strong(node)
        elif tag in {"td", "th"}:
            return "table", _row_label(node)
        elif GRID_CELL_CLASSES.intersection((node.get("class") or "").split()):
            return "table", None
        elif tag in OTHER_CONTAINERS or OTHER_CLASSES.intersection(
            (node.get("class") or "").split()
        ):
            return "other", None
        elif tag not in INLINE_TAGS:
            paragraph_seen = 1  # p, or a div/dd/blockquote holding a run of text
        if node is main:
            break
        node = node.getparent()
    return ("paragraph", None) if paragraph_seen else ("other", None)


def is_card(el: etree._Element) -> bool:
    """A card-like container: card/tile class and a title of its own."""
    cls = el.get("class")
    if not cls:
        return False
    cls = cls.lower()
    return any(part in cls for part in CARD_CLASS_PARTS) and card_title(el) is not None


def card_title(el: etree._Element) -> etree._Element | None:
    """The heading (or title-classed / leading strong element) of a card."""
    for child in el.iterchildren():
        if not isinstance(child.tag, str):
            continue
        if heading_level(child) is not None or child.tag in EMPHASIS_TAGS:
            return child
        cls = (child.get("class") or "").lower()
        if any(part in cls for part in TITLE_CLASS_PARTS):
            return child
    return None


def _title_text(el: etree._Element) -> str | None:
    title = card_title(el)
    return (visible_text(title) or None) if title is not None else None


def _leading_strong(li: etree._Element) -> str | None:
    """Text of a `strong`/`b` that opens a list item (also inside its first `p`)."""
    node = li
    for _ in range(2):
        if (node.text or "").strip() or not len(node):
            return None
        first = node[0]
        if not isinstance(first.tag, str):
            return None
        if first.tag in EMPHASIS_TAGS:
            return visible_text(first) or None
        if first.tag != "p":
            return None
        node = first
    return None


def _row_label(cell: etree._Element) -> str | None:
    """The row header of a table cell: a `th` in its row, else the row's first cell."""
    row = cell.getparent()
    if row is None:
        return None
    cells = [c for c in row if isinstance(c.tag, str) and c.tag in {"td", "th"}]
    for other in cells:
        if other is not cell and other.tag == "th":
            return visible_text(other) or None
    if cells and cells[0] is not cell:
        return visible_text(cells[0]) or None
    return None


__all__ = ["card_title", "is_card", "link_container", "link_target"]
