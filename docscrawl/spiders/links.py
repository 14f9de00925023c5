"""The links discovery follows from a parsed page, with their navigation rank.

`PageLinks` is a part of the `docs` spider: it reads a page's declared canonical URL and
its links by region (`docscrawl.extract.links`), ranks them (`docscrawl.discovery.budget`:
the body links of an index page rank last) and, on the seed, picks the template warm-up
sample (`docscrawl.extract.template.warmup`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from docscrawl.discovery.budget import link_rank
from docscrawl.discovery.hashroutes import hash_route_links
from docscrawl.discovery.urls import is_crawlable_url, normalize_url, strip_fragment
from docscrawl.extract.template.warmup import sample_of
from docscrawl.extract.worker import LinkFacts, link_facts

if TYPE_CHECKING:
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.pagetrack import PageTrack
    from docscrawl.extract.page import PageStructure
    from docscrawl.incremental.rows import FoundLink

REGION_TO_DISCOVERY = {
    "sidebar_navigation": "sidebar",
    "table_of_contents": "table_of_contents",
    "main_content": "in_page",
    "pagination": "pagination",
    "breadcrumb": "breadcrumb",
    "primary_navigation": "primary_navigation",
    "footer_navigation": "footer_navigation",
    "related_content": "in_page",
    "unknown": "in_page",
}


class PageLinks:
    """A parsed page's links as (URL, discovery reason, navigation rank)."""

    def __init__(self, session: CrawlSession, *, template_warmup: bool) -> None:
        self.session = session
        self.frontier = session.frontier
        self.template_warmup = template_warmup  # DOCSCRAWL_TEMPLATE_WARMUP
        self._index_keys: set[str] = set()  # pages some page declares its index

    def found(self, track: PageTrack, root: Any, structure: PageStructure, *,
              rendered: bool) -> list[FoundLink]:
        """The declared canonical URL, then every link by region (head links included);
        in a rendered DOM, client-side router links too."""
        routes = (hash_route_links(root, structure.base_url, region_map=structure.regions)
                  if rendered else ())  # client-side router links: in a rendered DOM only
        return self.found_from(track, link_facts(root, structure), routes)

    def found_from(self, track: PageTrack, facts: LinkFacts,
                   routes: Iterable[tuple[str, str]] = ()) -> list[FoundLink]:
        """`found`, from what a worker read of the tree (`extract.worker.LinkFacts`)."""
        base_url = facts.base_url
        found: list[FoundLink] = []
        for href in facts.declared_indexes:
            target = urljoin(base_url, href)
            if is_crawlable_url(target):
                self._index_keys.add(self._page_key(target))
        on_index = track.key in self._index_keys or facts.link_listing
        canonical = facts.canonical
        if canonical and is_crawlable_url(canonical):
            found.append((strip_fragment(canonical), "canonical", link_rank("canonical")))
        links = facts.links
        if track.depth == 0 and self.session.template_sample is None and self.template_warmup:
            self.session.template_sample = sample_of(track.key, [url for url, _ in links],
                                                     self.sample_key)
        for url, region in links:
            reason = REGION_TO_DISCOVERY.get(region, "in_page")
            found.append((url, reason, link_rank(reason, on_index_page=on_index)))
        for url, region in routes:
            reason = REGION_TO_DISCOVERY.get(region, "in_page")
            found.append((url, reason, link_rank(reason)))
        return found

    def sample_key(self, url: str) -> str | None:
        """The frontier's key of an in-scope URL (template warm-up sample), else None."""
        if not self.frontier.scope.decide(url).allowed:
            return None
        try:
            return normalize_url(self.frontier.params.identify(url)[0])
        except ValueError:
            return None

    def _page_key(self, url: str) -> str:
        try:
            return self.frontier.page_key(url)
        except ValueError:
            return url
