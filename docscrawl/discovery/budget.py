"""Spending a `max_pages` budget on the pages the site's own navigation puts first.

Without a budget, every admitted URL is fetched at once and discovery order does not
matter. With one, the first N URLs admitted would be the N pages fetched: on a Sphinx site
the general index, reached early, lists thousands of API entries, and they took the budget
before the tutorial pages further down the navigation were found. So a limited crawl holds
the URLs that pass every other policy as candidates and hands them out in the order the
site's navigation suggests. Each link has a *navigation rank*, from the evidence of the
link that found it:

0. the site's navigation: sidebar, table of contents, primary navigation, breadcrumb,
   pagination (`rel=next/prev`), a redirect's target;
1. links in a page's body, its canonical URL, llms.txt;
2. sitemaps and footers (they list everything, in no order);
3. entries of an index page: the body links of a page the site declares its index
   (`<link rel="index">`) or whose main content is mostly links (a general index).

Candidates go out by (phase, depth, rank): ranks 0 and 1 first, by depth (a page the seed
links, in its navigation or its body, before the pages those link), then sitemap and
footer links, then index entries. A candidate goes out only when no page in flight can
still find a better one: one of the first phase when its depth is at most one below every
page in flight, one of a later phase when every page in flight is of its phase or later.
A URL found again by a better link moves up. Pure bookkeeping, no Scrapy.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Generic, TypeVar

from lxml import etree

NAVIGATION, BODY, LISTING, INDEX_ENTRY = 0, 1, 2, 3
RANK_OF_REASON = {
    "seed": NAVIGATION, "redirect": NAVIGATION, "sidebar": NAVIGATION,
    "table_of_contents": NAVIGATION, "primary_navigation": NAVIGATION,
    "breadcrumb": NAVIGATION, "pagination": NAVIGATION,
    "in_page": BODY, "canonical": BODY, "llms_txt": BODY,
    "sitemap": LISTING, "robots_sitemap": LISTING, "footer_navigation": LISTING,
}
# A page whose main content holds at least this many links, and whose text is mostly their
# text, is an index (Sphinx's genindex: 0.80 of its text is link text; CMake's 0.61; the
# landing pages of the same sites 0.48 and 0.34).
INDEX_MIN_LINKS = 100
INDEX_LINK_TEXT_SHARE = 0.55


def link_rank(reason: str, *, on_index_page: bool = False) -> int:
    """The navigation rank of a link found for `reason` (lower is fetched first)."""
    rank = RANK_OF_REASON.get(reason, BODY)
    if on_index_page and rank == BODY:
        return INDEX_ENTRY
    return rank


def declared_indexes(root: etree._Element) -> list[str]:
    """The hrefs of the head's `<link rel="index">`: the page the site calls its index."""
    head = root.find("head")
    if head is None:
        return []
    return [link.get("href") or "" for link in head.iter("link")
            if "index" in (link.get("rel") or "").lower().split() and link.get("href")]


def is_link_listing(main: etree._Element) -> bool:
    """True when the main content is mostly links: an index, not a page to read."""
    links, link_chars = link_text_chars(main)
    if links < INDEX_MIN_LINKS:
        return False
    return link_chars >= INDEX_LINK_TEXT_SHARE * max(collapsed_text_chars(main), 1)


def link_text_chars(main: etree._Element) -> tuple[int, int]:
    """The links under `main` (not to a fragment) and their text's length, stripped. An
    anchor without children has its text alone: read as `a.text`, not joined from
    `itertext` (most anchors; an index page has thousands)."""
    links = link_chars = 0
    for a in main.iter("a"):
        href = a.get("href")
        if href and href[0] != "#":
            links += 1
            if len(a):
                link_chars += len("".join(a.itertext()).strip())
            elif a.text:
                link_chars += len(a.text.strip())
    return links, link_chars


def collapsed_text_chars(main: etree._Element) -> int:
    """The length of `main`'s text with whitespace runs as one space and none at the ends
    (`" ".join(text.split())`, without making it): the text serialized by lxml, as
    `itertext` joins it."""
    words = etree.tostring(main, method="text", encoding="unicode", with_tail=False).split()
    return sum(map(len, words)) + len(words) - 1 if words else 0


def phase_of(rank: int) -> int:
    """0 for navigation and body links, 1 for listings, 2 for index entries."""
    return max(rank - 1, 0)


Offer = TypeVar("Offer")


class Budget(Generic[Offer]):
    """Candidates waiting for a `max_pages` slot, and the pages in flight; `Offer` is what
    the caller admits a candidate with, handed back as it was given."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, int, int, str]] = []
        self._best: dict[str, tuple[int, int]] = {}  # url -> (rank, depth) now
        self._offers: dict[str, Offer] = {}  # url -> what to admit it with
        self._seq = itertools.count()
        self._flying: dict[Hashable, tuple[int, int]] = {}  # page key -> (phase, depth)
        self.held_total = 0

    def __len__(self) -> int:
        return len(self._offers)

    def __contains__(self, url: str) -> bool:
        return url in self._offers

    def hold(self, url: str, rank: int, depth: int, offer: Offer) -> None:
        """Keep `url` as a candidate (`offer`: what `take` gives back to admit it)."""
        if url in self._offers:
            self.promote(url, rank, depth)
            return
        self._offers[url] = offer
        self._push(url, rank, depth)
        self.held_total += 1

    def promote(self, url: str, rank: int, depth: int) -> bool:
        """A held URL found again by a better link moves up; True when it moved."""
        current = self._best.get(url)
        if current is None or _order(rank, depth) >= _order(*current):
            return False
        self._push(url, rank, depth)
        return True

    def _push(self, url: str, rank: int, depth: int) -> None:
        self._best[url] = (rank, depth)
        heapq.heappush(self._heap, (*_order(rank, depth), next(self._seq), url))

    def take(self) -> tuple[tuple[int, int], Offer] | None:
        """The next candidate to admit, as ((phase, depth), offer), or None while the
        best one left must wait for the pages in flight."""
        while self._heap:
            phase, depth, rank, _, url = self._heap[0]
            if self._best.get(url) != (rank, depth):
                heapq.heappop(self._heap)  # moved up since, or taken
                continue
            if not self._may_go(phase, depth):
                return None
            heapq.heappop(self._heap)
            del self._best[url]
            return (phase, depth), self._offers.pop(url)
        return None

    def _may_go(self, phase: int, depth: int) -> bool:
        flying = self._flying.values()
        if not flying:
            return True
        if phase == 0:
            return depth <= min(d for _, d in flying) + 1
        return all(p >= phase for p, _ in flying)

    def drain(self) -> list[Offer]:
        """Every candidate left (the budget is spent: they are refused), best first."""
        flying, self._flying = self._flying, {}
        offers: list[Offer] = []
        while (taken := self.take()) is not None:
            offers.append(taken[1])
        self._flying = flying
        return offers

    def started(self, key: Hashable, place: tuple[int, int]) -> None:
        """A candidate was admitted and its page requested (`place`: from `take`)."""
        self._flying[key] = place

    def answered(self, key: Hashable) -> None:
        """A page's response (or download failure) arrived: its links are known."""
        self._flying.pop(key, None)

    def settle(self) -> None:
        """The crawl is idle: nothing is in flight, whatever was not answered."""
        self._flying.clear()


def _order(rank: int, depth: int) -> tuple[int, int, int]:
    return phase_of(rank), depth, rank
