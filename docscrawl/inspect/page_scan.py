"""The one pass over pages.jsonl that `docscrawl check`'s page checks read
(breadcrumbs, link ambiguity, template detection, identity, fragment resolution)."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from typing import Any
from urllib.parse import unquote

from docscrawl.discovery.urls import is_crawlable_url, normalize_url
from docscrawl.inspect.identity import identity_status
from docscrawl.inspect.output import EXAMPLES

__all__ = ["GENERIC_LINK_TEXT", "PageScan", "norm_url"]

GENERIC_LINK_TEXT = frozenset({
    "", "here", "click here", "click", "this", "this page", "this link", "link", "more",
    "read more", "learn more", "see more", "more info", "more information", "details",
    "continue", "continue reading", "go", "see", "see here", "read", "view", "open",
    "info", "¶", "#", "§", "source", "[source]", "->", "→", "»",
})


# A main-content link set repeated across pages counts as template from this many links:
# two links that every method page of an API reference shares (its type, its namespace)
# are what those pages are about, not chrome.
MAIN_MIN_LINKS = 3

class PageScan:
    """What the checks need from pages.jsonl, gathered in one pass."""

    def __init__(self) -> None:
        self.pages = 0
        self.breadcrumbs: Counter[str] = Counter()
        self.no_breadcrumb: list[str] = []
        self.links = 0
        self.ambiguous = 0
        self.ambiguous_texts: Counter[str] = Counter()
        self.ambiguous_examples: list[dict[str, Any]] = []
        self.identity: Counter[str] = Counter()
        self.identity_examples: list[dict[str, Any]] = []
        # (region, digest of its sorted link targets) -> [pages, example page, links]
        self.region_signatures: dict[tuple[str, bytes], list[Any]] = {}
        self.anchors: dict[int, frozenset[str]] = {}
        self.url_index: dict[str, int] = {}
        # same-page targets are resolved while scanning; other pages' once all are read
        self.fragments = {"resolved": 0, "unresolved": 0, "outside_crawl": 0, "skip_links": 0}
        self.fragment_examples: list[dict[str, Any]] = []
        self.cross_page_fragments: list[tuple[str, str, str]] = []
        self.fragment_warnings = 0
        self.fallback_pages: list[str] = []

    def add(self, page: dict[str, Any]) -> None:
        index = self.pages
        self.pages += 1
        url = str(page.get("canonical_url") or "")
        source = str(page.get("breadcrumb_source") or "none")
        self.breadcrumbs[source] += 1
        if source == "none" and len(self.no_breadcrumb) < EXAMPLES:
            self.no_breadcrumb.append(url)
        status, detail = identity_status(page.get("title"), page.get("main_heading"), url)
        self.identity[status] += 1
        if status != "agree" and len(self.identity_examples) < 50:
            self.identity_examples.append({"url": url, "status": status, "detail": detail,
                                           "title": page.get("title"),
                                           "main_heading": page.get("main_heading")})
        for warning in page.get("warnings") or ():
            code = warning.get("code") if isinstance(warning, dict) else None
            if code == "unresolved_fragment":
                self.fragment_warnings += 1
            elif code == "main_content_fallback" and len(self.fallback_pages) < EXAMPLES:
                self.fallback_pages.append(url)
        own = self._index_urls(page, index)
        anchors = frozenset([*(str(h["anchor"]) for h in page.get("headings") or ()
                               if isinstance(h, dict) and h.get("anchor")),
                             *map(str, page.get("fragment_ids") or ())])
        self.anchors[index] = anchors
        by_region: dict[str, set[str]] = defaultdict(set)
        for number, link in enumerate(page.get("links") or ()):
            if not isinstance(link, dict):
                continue
            self._link(link, url, own, anchors, first=number == 0)
            by_region[str(link.get("region"))].add(str(link.get("url", "")).partition("#")[0])
        for region, targets in by_region.items():
            if len(targets) < (MAIN_MIN_LINKS if region == "main_content" else 2):
                continue
            digest = hashlib.sha1("\n".join(sorted(targets)).encode(), usedforsecurity=False)
            entry = self.region_signatures.setdefault((region, digest.digest()),
                                                      [0, url, len(targets)])
            entry[0] += 1

    def _index_urls(self, page: dict[str, Any], index: int) -> set[str]:
        """Index the page's URLs (normalized); returns them."""
        own = {norm_url(str(page[name])) for name in ("canonical_url", "final_url", "fetched_url")
               if page.get(name)}
        own.update(norm_url(str(alias)) for alias in page.get("observed_urls") or ())
        for key in own:
            self.url_index.setdefault(key, index)
        return own

    def resolve_fragment(self, page_url: str, base: str, fragment: str,
                         anchors: frozenset[str] | None) -> None:
        """Count one fragment target against the anchors of the page it points to: as
        written or percent-decoded, as a browser tries it (rustdoc's ids hold `%3C`)."""
        if anchors is None:
            self.fragments["outside_crawl"] += 1
        elif fragment in anchors or unquote(fragment) in anchors:
            self.fragments["resolved"] += 1
        else:
            fragment = unquote(fragment)
            self.fragments["unresolved"] += 1
            if len(self.fragment_examples) < EXAMPLES:
                self.fragment_examples.append({"page": page_url, "target": f"{base}#{fragment}",
                                               "fragment": fragment})

    def _link(self, link: dict[str, Any], page_url: str, own: set[str],
              anchors: frozenset[str], *, first: bool = False) -> None:
        self.links += 1
        text = " ".join(str(link.get("text") or "").split()).lower()
        if (text in GENERIC_LINK_TEXT and not link.get("container_label")
                and not link.get("heading_path")):
            self.ambiguous += 1
            self.ambiguous_texts[text or "(empty)"] += 1
            if len(self.ambiguous_examples) < EXAMPLES:
                self.ambiguous_examples.append({"page": page_url, "text": link.get("text"),
                                                "url": link.get("url"),
                                                "region": link.get("region")})
        target = str(link.get("url", ""))
        base, hash_, fragment = target.partition("#")
        if (hash_ and fragment and fragment != "top"
                and (link.get("region") == "table_of_contents"
                     or link.get("target") == "fragment")):
            same_page = not base or norm_url(base) in own
            if first and same_page and link.get("region") not in CONTENT_REGIONS:
                # A skip link (WCAG's bypass block: the page's first link, jumping past
                # the template): its target is a marker in the template (Javadoc's empty
                # `span#skip-navbar-top` closing the top `nav`), no content to resolve.
                self.fragments["skip_links"] += 1
            elif same_page:
                self.resolve_fragment(page_url, base, fragment, anchors)
            else:
                self.cross_page_fragments.append((page_url, base, fragment))


CONTENT_REGIONS = frozenset({"main_content", "table_of_contents"})


def norm_url(url: str) -> str:
    try:
        return normalize_url(url) if is_crawlable_url(url) else url
    except ValueError:
        return url
