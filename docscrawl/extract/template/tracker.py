"""Cross-page template detection: a region with the same link set on many pages is template.

Pure and bounded: `TemplateTracker` keeps one counter per region signature (the link-set
digest `Region.signature`), at most `max_signatures` of them; when full it forgets the
least-seen half. It never sees a tree, only the `Region` records of each page.

    tracker = TemplateTracker(min_pages=3)
    for page in pages:                        # in crawl order
        changes = tracker.observe(page.url, page.extract.regions)
        apply_reclassifications(page.extract, changes)   # relabel regions and links

A signature counts as template once it has been seen on `min_pages` distinct pages
(pages seen before that threshold are not revisited: `observe` only ever answers about
the page it is given). A template region classified `unknown` is reclassified to the
kind most pages gave it, else `primary_navigation` (or `sidebar_navigation` when it has
`sidebar_links` links or more). Template regions already classified as navigation are
confirmed (`Reclassification.confirmed`), not changed; `main_content` is never changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from docscrawl.extract.model import PageExtract, Region

__all__ = ["Reclassification", "TemplateTracker", "apply_reclassifications"]

UNKNOWN = "unknown"
NEVER_TEMPLATE = frozenset({"main_content"})


@dataclass(frozen=True, slots=True)
class Reclassification:
    """One region of the observed page that repeats across the crawl."""

    locator: str
    signature: str
    old_region: str
    new_region: str
    pages_seen: int

    @property
    def confirmed(self) -> bool:
        """True when the page's own classification already was this region."""
        return self.old_region == self.new_region


@dataclass(slots=True)
class _Entry:
    pages: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    last_url: str | None = None


class TemplateTracker:
    """Counts region signatures across pages; see the module docstring."""

    def __init__(self, *, min_pages: int = 3, min_links: int = 2, sidebar_links: int = 15,
                 max_signatures: int = 20_000) -> None:
        if min_pages < 2 or max_signatures < 2:
            raise ValueError("min_pages and max_signatures must be at least 2")
        self.min_pages = min_pages
        self.min_links = min_links
        self.sidebar_links = sidebar_links
        self.max_signatures = max_signatures
        self._entries: dict[str, _Entry] = {}
        self.pages_observed = 0

    def __len__(self) -> int:
        return len(self._entries)

    def observe(self, page_url: str, regions: Iterable[Region]) -> list[Reclassification]:
        """Count this page's region signatures; return its regions that are template."""
        self.pages_observed += 1
        candidates = [
            r for r in regions
            if r.signature and r.region not in NEVER_TEMPLATE and r.link_count >= self.min_links
        ]
        for region in candidates:
            signature = region.signature or ""  # never empty here: candidates have one
            entry = self._entries.get(signature)
            if entry is None:
                entry = self._entries[signature] = _Entry()
            if entry.last_url != page_url:  # one page counts once per signature
                entry.pages += 1
                entry.last_url = page_url
            if region.region != UNKNOWN:
                entry.kinds[region.region] += 1
        changes = [
            change for region in candidates if (change := self._verdict(region)) is not None
        ]
        if len(self._entries) > self.max_signatures:
            self._forget()
        return changes

    def is_template(self, signature: str | None) -> bool:
        """True when `signature` has been seen on at least `min_pages` pages."""
        entry = self._entries.get(signature or "")
        return entry is not None and entry.pages >= self.min_pages

    def templates(self) -> dict[str, int]:
        """Template signatures and the number of pages each was seen on."""
        return {s: e.pages for s, e in self._entries.items() if e.pages >= self.min_pages}

    def _verdict(self, region: Region) -> Reclassification | None:
        entry = self._entries[region.signature or ""]
        if entry.pages < self.min_pages:
            return None
        if region.region != UNKNOWN:
            new = region.region
        elif entry.kinds:
            new = entry.kinds.most_common(1)[0][0]
        elif region.link_count >= self.sidebar_links:
            new = "sidebar_navigation"
        else:
            new = "primary_navigation"
        return Reclassification(region.locator, region.signature or "", region.region, new,
                                entry.pages)

    def _forget(self) -> None:
        """Drop the least-seen half of the signatures (bounded memory)."""
        keep = sorted(self._entries.items(), key=lambda item: item[1].pages, reverse=True)
        self._entries = dict(keep[: self.max_signatures // 2])


def apply_reclassifications(extract: PageExtract, changes: Iterable[Reclassification]) -> int:
    """Relabel a page's regions and their links (by locator) with template verdicts.

    Confirmations change nothing. Links of a relabelled region get the new region and,
    for a navigation kind, the `navigation` container. Returns how many regions changed.
    """
    new_kind = {c.locator: c.new_region for c in changes if not c.confirmed}
    if not new_kind:
        return 0
    changed = 0
    for region in extract.regions:
        if region.locator in new_kind:
            region.region = new_kind[region.locator]
            changed += 1
    for link in extract.links:
        if link.region_locator in new_kind:
            link.region = new_kind[link.region_locator]
            link.container = "navigation"
    return changed
