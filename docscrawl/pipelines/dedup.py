"""Pipeline step 2: canonical URL and content hash; identical pages become one record.

Pages are the same when their normalized Markdown hashes the same *and* they belong to the
same documentation version (`docscrawl.dedup.content.url_version`): `/x/`, `/x/index.html`
and `/latest/x/` merge, `/3.6/x/` and `/x/` never do.
"""

from __future__ import annotations

from typing import Any, Self

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from docscrawl.dedup.canonical import choose_canonical
from docscrawl.dedup.content import content_hash, url_version
from docscrawl.discovery.urls import normalize_url
from docscrawl.items import FetchedPage
from docscrawl.session import CrawlSession


class DedupPipeline:
    """Sets `canonical_url` and `content_hash`; drops content duplicates as `duplicate`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._by_content: dict[tuple[str | None, str], str] = {}
        self._hash_of_canonical: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    @property
    def session(self) -> CrawlSession:
        return self.crawler.spider.session  # type: ignore[union-attr]

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, FetchedPage):
            return item
        digest = content_hash(item.extract.markdown)
        item.content_hash = digest
        key = (url_version(item.final_url), digest)
        existing = self._by_content.get(key)
        if existing is not None:
            self._merge_duplicate(item, existing)
            raise DropItem(f"duplicate of {existing}", log_level="DEBUG")
        choice = choose_canonical(item.final_url, item.extract.canonical_href,
                                  self.session.frontier.scope)
        canonical = choice.url
        if choice.warning:
            item.warnings.append({"code": choice.warning[0], "detail": choice.warning[1]})
        if canonical in self._hash_of_canonical:  # named by another page with other content
            own = normalize_url(item.final_url)
            item.warnings.append({"code": "canonical_conflict", "detail":
                                  f"{canonical} already names a page with other content"})
            canonical = own
            if canonical in self._hash_of_canonical:
                self.session.log.record(item.track.url, "failed", reason="canonical_conflict",
                                        rule=f"canonical URL {canonical} already taken",
                                        status=item.status, fetch_mode=item.fetch_mode)
                raise DropItem(f"canonical conflict {canonical}", log_level="DEBUG")
        item.canonical_url = canonical
        self._by_content[key] = canonical
        self._hash_of_canonical[canonical] = digest
        return item

    def _merge_duplicate(self, item: FetchedPage, canonical: str) -> None:
        track = item.track
        track.observe(item.final_url)
        self.session.record_merged(canonical, track)
        self.session.log.record(
            track.url, "duplicate", reason="same_content", duplicate_of=canonical,
            status=item.status, redirect_chain=track.redirect_chain,
            fetch_mode=item.fetch_mode,
        )
