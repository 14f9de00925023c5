"""What every docscrawl pipeline shares: the crawler, and the crawl session through it."""

from __future__ import annotations

from typing import Self

from scrapy.crawler import Crawler

from docscrawl.crawl.session import CrawlSession


class SessionPipeline:
    """Base of the item pipelines: built from the crawler, reads the spider's session."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    @property
    def session(self) -> CrawlSession:
        """The running crawl's session (created when the spider opens)."""
        return self.crawler.spider.session  # type: ignore[union-attr]
