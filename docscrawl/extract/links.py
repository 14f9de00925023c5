"""Links of a page: cheap discovery links for the crawler, full contract links for output."""

from __future__ import annotations

import dataclasses
import posixpath
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

from lxml import etree

from docscrawl.extract.generator import detect_profile
from docscrawl.extract.metadata import document_base
from docscrawl.extract.model import DiscoveredLink, Link
from docscrawl.extract.profiles import (
    ASSET_EXTENSIONS,
    PAGINATION_RELS,
    vocabulary_tokens,
)
from docscrawl.extract.regions import NAV_KINDS, RegionMap, classify
from docscrawl.extract.urls import join, split

FOLLOW_SCHEMES = frozenset({"http", "https"})
SKIP_SCHEMES = frozenset({"javascript", "data", "vbscript", "about", "blob"})
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LABEL_TOKENS = frozenset({"caption", "title", "label", "heading", "header", "captiontext"})
LABEL_TAGS = frozenset({"summary", "label", "caption", "legend"})
CARD_TOKENS = frozenset({"card", "tile", "box", "feature", "panel", "teaser"})
MAX_LABEL_CHARS = 120
MAX_LABEL_SIBLINGS = 3
MATCH_WINDOW = 25  # how far ahead a main-content anchor is matched in `main_links`


# Elements whose boundaries separate words even without whitespace in the source.
BLOCK_TAGS = frozenset({
    "div", "p", "li", "ul", "ol", "dl", "dt", "dd", "br", "h1", "h2", "h3", "h4", "h5", "h6",
    "section", "article", "header", "footer", "nav", "aside", "table", "tr", "td", "th",
    "blockquote", "pre", "figure", "figcaption", "hr",
})


def _text(el: etree._Element) -> str:
    """Whitespace-normalized text, with a space at block boundaries ("Next" + "Events")."""
    if not len(el):  # most links: their text alone, without the walk
        return " ".join((el.text or "").split())
    parts: list[str] = [el.text or ""]
    for node in el.iterdescendants():
        block = node.tag in BLOCK_TAGS
        if block:
            parts.append(" ")
        if isinstance(node.tag, str) and node.tag not in ("script", "style"):
            parts.append(node.text or "")
        if block:
            parts.append(" ")
        parts.append(node.tail or "")
    return " ".join("".join(parts).split())


def anchor_text(a: etree._Element) -> str:
    """Visible text of a link, else its aria-label, title or image alt."""
    text = _text(a)
    if text:
        return text
    for value in (a.get("aria-label"), a.get("title")):
        if value and value.strip():
            return " ".join(value.split())
    return next((" ".join(img.get("alt", "").split()) for img in a.iter("img")
                 if img.get("alt", "").strip()), "")


def resolve(href: str | None, base_url: str) -> str | None:
    """Absolute URL of an href, fragment kept; None for empty or script-like hrefs."""
    href = (href or "").strip()
    if not href:
        return None
    if _scheme(href) in SKIP_SCHEMES:
        return None
    return join(base_url, href)  # None when malformed, e.g. an unclosed IPv6 bracket


def _scheme(href: str) -> str:
    """`urlsplit(href).scheme.lower()`, read directly in the common cases; "" when
    malformed (`join` then rejects the href too)."""
    colon = href.find(":")
    if colon < 0:
        return ""
    head = href[:colon]
    if head.isascii() and head.isalpha():
        return head.lower()
    try:
        return urlsplit(href).scheme.lower()
    except ValueError:
        return ""


def same_document(url: str, base_url: str) -> bool:
    """True when `url` points into the document at `base_url` (fragment ignored)."""
    return _defrag(url) == _defrag(base_url)


def _defrag(url: str) -> str:
    """`url` without its fragment (`urldefrag` without the parse/unparse round trip)."""
    return url.partition("#")[0]


def link_target(url: str, base_url: str, href: str | None = None) -> str:
    """`fragment`, `asset` (by path extension), `internal` (same host) or `external`."""
    in_page = "#" in url or (href or "").strip().startswith("#")
    if in_page and same_document(url, base_url):
        return "fragment"
    scheme, netloc, asset = _url_facts(url)
    if asset:
        return "asset"
    if scheme not in FOLLOW_SCHEMES:
        return "external"
    base = split(base_url)
    # the same netloc is the same host: most links, without parsing either hostname
    if netloc == base.netloc or (
        (urlsplit(url).hostname or "").lower() == (base.hostname or "").lower()
    ):
        return "internal"
    return "external"


URL_FACTS_CACHE = 2048  # the same hit rate as 4,096 on 900 corpus pages


@lru_cache(maxsize=URL_FACTS_CACHE)
def _url_facts(url: str) -> tuple[str, str, bool]:
    """(scheme, netloc, whether the path names an asset) of `url`: pure, so memoized; a
    site's pages link the same URLs (a sidebar's) again and again."""
    parts = urlsplit(url)
    asset = posixpath.splitext(parts.path)[1].lstrip(".").lower() in ASSET_EXTENSIONS
    return sys.intern(parts.scheme), sys.intern(parts.netloc), asset  # one copy of each


def _anchor_region(a: etree._Element, rmap: RegionMap) -> str:
    """The region a link is filed under, remembered on `rmap`: discovery asks it of every
    anchor, then the page's links again."""
    found = rmap.anchor_regions.get(a)
    if found is None:
        region = rmap.region_of(a)
        if region not in ("breadcrumb", "main_content") and rmap.is_pagination(a):
            region = "pagination"
        found = rmap.anchor_regions[a] = region or "unknown"
    return found


# `<link rel>` values in the head that name other documents of the site (HTML 4 link
# types that Sphinx, DocBook and gtk-doc still emit); `search` pages are left out: they are
# client-side apps without documentation text.
HEAD_NAVIGATION_RELS = frozenset({"index", "contents", "toc", "start", "first", "last", "up",
                                  "top", "home", "glossary", "chapter", "section", "appendix"})


def _head_links(root: etree._Element) -> list[tuple[etree._Element, str]]:
    """Head `<link>`s to other documents, with their region (pagination or navigation)."""
    head = root.find("head")
    if head is None:
        return []
    found = []
    for link in head.iter("link"):
        rels = set((link.get("rel") or "").lower().split())
        if rels & PAGINATION_RELS:
            found.append((link, "pagination"))
        elif rels & HEAD_NAVIGATION_RELS:
            found.append((link, "primary_navigation"))
    return found


def _region_map(root: etree._Element, base_url: str, rmap: RegionMap | None) -> RegionMap:
    if rmap is not None:
        return rmap
    return classify(root, generator=detect_profile(root), base_url=base_url)


def discovery_links(
    root: etree._Element, base_url: str, *, region_map: RegionMap | None = None,
    texts: bool = True,
) -> list[DiscoveredLink]:
    """Links worth following: absolute http(s), fragment dropped, labelled by region.

    One entry per (url, region), in document order; head `link rel=next/prev` come last
    as pagination. Pass the page's `region_map` when it is already built. `texts=False`
    leaves the anchors' text empty, for a caller that reads only URLs and regions (the
    crawl's discovery: extraction reads each anchor's text for the page record).
    """
    base = document_base(root, base_url)
    rmap = _region_map(root, base, region_map)
    self_urls = {_defrag(base_url), _defrag(base)}
    seen: set[tuple[str, str]] = set()
    resolved: dict[str, str | None] = {}
    found: list[DiscoveredLink] = []

    # One closure only, calling no other: compiled (docs/compiled.md), a closure that calls
    # another keeps it in their shared environment, a cycle that would hold the page's
    # tree until the cyclic collector runs.
    def add(el: etree._Element, href: str, region: str | None) -> None:
        """`el`'s link, once per (url, region); its text and (for an anchor, `region`
        None) its region are read only for a link to follow."""
        href = href.strip()
        if not href or href[0] == "#":
            return
        if href in resolved:
            url = resolved[href]
        else:
            url = resolved[href] = _followed(href, base, self_urls)
        if url is None:
            return
        if region is None:
            region = _anchor_region(el, rmap)
        if (url, region) not in seen:
            seen.add((url, region))
            if el.tag == "link":  # a head `<link>`: its title
                text = " ".join((el.get("title") or "").split())
            else:
                text = anchor_text(el) if texts else ""
            found.append(DiscoveredLink(url, text, region))

    for a in root.iter("a", "area"):
        href = a.get("href")
        if href is not None and a.get("download") is None:
            add(a, href, None)
    for link, region in _head_links(root):
        add(link, link.get("href") or "", region)
    return found


def _followed(href: str, base: str, self_urls: set[str]) -> str | None:
    """The absolute URL `href` leads to without its fragment, or None: not http(s), or
    the page itself."""
    url = resolve(href, base)
    if url is None:
        return None
    url = _defrag(url)  # `_scheme`: urlsplit's scheme without the split (joined URLs)
    if _scheme(url) not in FOLLOW_SCHEMES or url in self_urls:
        return None
    return url


def _label_of(el: etree._Element) -> str | None:
    text = _text(el)
    return text[:MAX_LABEL_CHARS] if text else None


def _is_label_element(el: etree._Element) -> bool:
    tag = el.tag
    if tag in HEADING_TAGS or tag in LABEL_TAGS:
        return True
    cls = el.get("class")  # most siblings (a sidebar's items) have none: no token lookup
    if cls and vocabulary_tokens(cls) & LABEL_TOKENS:
        return True
    return el.get("role") == "heading"


def _tree_item_label(li: etree._Element) -> str | None:
    """Label of a tree item: its text outside nested lists and navs."""
    for child in li:
        if not isinstance(child.tag, str) or child.tag in ("ul", "ol", "nav", "input"):
            continue
        label = _label_of(child)
        if label:
            return label
    return None


@dataclass(slots=True)
class LabelMemo:
    """One page's `container_label` answers: the label found above each ancestor, and
    whether each sibling read is a label element (a list item is read as a sibling by
    up to MAX_LABEL_SIBLINGS items after it)."""

    above: dict[tuple[etree._Element, bool], str | None] = field(default_factory=dict)
    is_label: dict[etree._Element, bool] = field(default_factory=dict)


def container_label(
    a: etree._Element, stop: etree._Element | None, memo: LabelMemo | None = None,
) -> str | None:
    """Label of the group a link sits in: enclosing tree item, preceding caption, card title.

    `memo` (one per page) remembers the answer found above each ancestor: links of one
    sidebar list share their ancestors, so each ancestor is read once. The answer above an
    ancestor depends only on it and on whether the link's own list item is behind: any walk
    that reaches it ends at the same region element (`stop`)."""
    own_item: etree._Element | None = None
    walked: list[tuple[etree._Element, bool]] = []
    found: str | None = None
    above = memo.above if memo is not None else None
    is_label = memo.is_label if memo is not None else {}
    for anc in a.iterancestors():
        if above is not None:
            key = (anc, own_item is not None)
            if key in above:
                found = above[key]
                break
            walked.append(key)
        done, found = _label_at(anc, stop, own_item, is_label)
        if done:
            break
        if anc.tag == "li" and own_item is None:
            own_item = anc
    if above is not None:
        for key in walked:
            above[key] = found
    return found


def _label_at(
    anc: etree._Element, stop: etree._Element | None, own_item: etree._Element | None,
    is_label: dict[etree._Element, bool],
) -> tuple[bool, str | None]:
    """(whether the walk ends at `anc`, the label it ends with) for one ancestor;
    `is_label` remembers the siblings read."""
    if anc.tag == "li" and own_item is not None:
        label = _tree_item_label(anc)
        if label:
            return True, label
    cls = anc.get("class")
    if cls and vocabulary_tokens(cls) & CARD_TOKENS:
        heading = next((h for h in anc.iter() if h.tag in HEADING_TAGS), None)
        if heading is not None:
            return True, _label_of(heading)
    sibling = anc.getprevious()
    for _ in range(MAX_LABEL_SIBLINGS):
        if sibling is None:
            break
        labelled = is_label.get(sibling)
        if labelled is None:
            labelled = is_label[sibling] = (
                isinstance(sibling.tag, str) and _is_label_element(sibling))
        if labelled:
            return True, _label_of(sibling)
        sibling = sibling.getprevious()
    if stop is not None and anc is stop:
        aria = (anc.get("aria-label") or "").strip()
        return True, " ".join(aria.split()) or None
    return False, None


def link_container(a: etree._Element, region: str, stop: etree._Element | None) -> str:
    """Contract container kind of a link outside the main content."""
    if region in NAV_KINDS:
        return "navigation"
    for anc in a.iterancestors():
        if anc.tag == "li":
            return "list_item"
        if anc.tag == "p":
            return "paragraph"
        if anc.tag in ("td", "th", "table"):
            return "table"
        if anc.tag in HEADING_TAGS:
            return "heading"
        if vocabulary_tokens(anc.get("class")) & CARD_TOKENS:
            return "card"
        if anc is stop:
            break
    return "other"


def _build_link(a: etree._Element, url: str, region: str, rmap: RegionMap, base: str,
                labels: LabelMemo | None = None) -> Link:
    stop = rmap.region_element(a)
    return Link(
        url=url,
        text=anchor_text(a),
        rel=(a.get("rel") or "").split(),
        region=region,
        container=link_container(a, region, stop),
        container_label=container_label(a, stop, labels),
        heading_path=[],
        target=link_target(url, base, a.get("href")),
        position=0,
        region_locator=rmap.locators.get(stop) if stop is not None else None,
    )


def _match(url: str, pending: list[Link], bare_urls: list[str], start: int) -> int | None:
    stop = min(len(pending), start + MATCH_WINDOW)
    for j in range(start, stop):
        if pending[j].url == url:
            return j
    bare = _defrag(url)
    for j in range(start, stop):
        if bare_urls[j] == bare:
            return j
    return None


def page_links(
    root: etree._Element,
    base_url: str,
    *,
    regions: RegionMap,
    main_el: etree._Element,
    main_links: list[Link],
) -> list[Link]:
    """Every link of the page with contract fields, in document order.

    Links inside `main_el` come from `main_links` (built by the Markdown renderer, with
    heading paths); each keeps its place among the anchors around it. Anchors the renderer
    dropped (permalinks, chrome) are dropped here too, unless a nested region (a
    breadcrumb inside the main element) claims them.
    """
    base = document_base(root, base_url)
    out: list[Link] = []
    next_main = 0
    bare_urls = [_defrag(link.url) for link in main_links]
    in_main = set(main_el.iter("a", "area"))
    labels = LabelMemo()
    main_seen = False
    for a in root.iter("a", "area", main_el.tag):
        if a is main_el:
            main_seen = True
            continue
        if a.tag not in ("a", "area"):
            continue
        if main_seen and a not in in_main:
            # First anchor after the main element: renderer links not matched so far go here.
            out.extend(main_links[next_main:])
            next_main = len(main_links)
        url = resolve(a.get("href"), base)
        if url is None:
            continue
        region = _anchor_region(a, regions)
        if a in in_main:
            j = _match(url, main_links, bare_urls, next_main)
            if j is not None:
                out.extend(main_links[next_main:j])
                matched = main_links[j]
                if region != "main_content" and matched.region != region:
                    container = "navigation" if region in NAV_KINDS else matched.container
                    owner = regions.region_element(a)
                    matched = dataclasses.replace(
                        matched, region=region, container=container,
                        region_locator=regions.locators.get(owner) if owner is not None else None,
                    )
                out.append(matched)
                next_main = j + 1
                continue
            if region == "main_content":
                continue
        out.append(_build_link(a, url, region, regions, base, labels))
    out.extend(main_links[next_main:])
    for i, link in enumerate(out):  # every Link here was made for this page: number in place
        link.position = i
    return out
