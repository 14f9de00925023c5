"""Pipeline step 3: write the page's lines (pages, structure) and log `extracted`."""

from __future__ import annotations

from typing import Any, Self

from scrapy.crawler import Crawler

from docscrawl.items import FetchedPage
from docscrawl.records import page_record, structure_record
from docscrawl.session import CrawlSession


class ExportPipeline:
    """Appends one line per page to pages.jsonl and structure.jsonl, flushed at once."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    @property
    def session(self) -> CrawlSession:
        return self.crawler.spider.session  # type: ignore[union-attr]

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, FetchedPage):
            return item
        session = self.session
        record = page_record(item)
        session.pages.write(record)
        session.structure.write(structure_record(item))
        session.record_written(record["canonical_url"], item.track)
        session.log.record(
            item.track.url, "extracted", status=item.status,
            redirect_chain=item.track.redirect_chain, fetch_mode=item.fetch_mode,
            parser=item.extract.generator or "html", elapsed_ms=item.elapsed_ms,
            size=item.size, page_id=record["id"], canonical_url=record["canonical_url"],
        )
        item.extract = None  # nothing per page stays in memory after it is written
        return {"page_id": record["id"], "canonical_url": record["canonical_url"]}
