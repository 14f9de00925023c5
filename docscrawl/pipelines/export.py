"""Pipeline step 3: chunk the page, write its lines, log the outcome, update the state.

A fresh page is chunked (`docscrawl.chunking.chunker`) and written to pages, structure and chunks,
then logged `extracted` and stored in the incremental state. A carried-over page (304, an
identical body, or an unchanged normalized content hash, decided upstream) is written from
its lines in the previous output (`docscrawl.incremental.carry`) and logged `unchanged`.

The item a page yields is its page record as written, so `scrapy crawl docs -O pages.jsonl`
(or `FEEDS`) gives page records too; only pages.jsonl gets the end-of-crawl updates
(`docscrawl.crawl.finalize`: aliases found later, a better canonical URL).
"""

from __future__ import annotations

from typing import Any, Self

from scrapy.crawler import Crawler

from docscrawl.chunking.chunker import chunk_page
from docscrawl.crawl.items import CarriedPage, FetchedPage
from docscrawl.export.records import SHARED_FIELDS, PageRecord, page_id, page_records
from docscrawl.incremental.state import StateRow
from docscrawl.jsonl import dumps_line, dumps_value
from docscrawl.pipelines.base import SessionPipeline
from docscrawl.vocab import Event, UnchangedReason


class ExportPipeline(SessionPipeline):
    """Appends one line per page (and per chunk), flushed at once."""

    def __init__(self, crawler: Crawler, *, chunk_tokens: int, chunk_max: int | None,
                 template_links: bool = True) -> None:
        super().__init__(crawler)
        self.chunk_tokens = chunk_tokens
        self.chunk_max = chunk_max
        self.template_links = template_links  # False: every link inline, no templates.jsonl

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        return cls(crawler, chunk_tokens=settings.getint("DOCSCRAWL_CHUNK_TOKENS"),
                   chunk_max=settings.getint("DOCSCRAWL_CHUNK_MAX_TOKENS") or None,
                   template_links=settings.getbool("DOCSCRAWL_TEMPLATE_LINKS", True))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CarriedPage):
            return self._carry_over(item, item.row, item.etag, item.last_modified)
        if not isinstance(item, FetchedPage):
            return item
        return self._write_fresh(item)

    def _write_fresh(self, item: FetchedPage) -> PageRecord:
        session = self.session
        keep = session.templates.keep(item.template_locators) if self.template_links else None
        record, structure, blocks = page_records(item, keep)
        record["body_hash"] = item.body_digest
        ext = item.extracted
        chunks = chunk_page(
            ext, page_id=record["id"], canonical_url=record["canonical_url"],
            title=ext.title, version=ext.version.value,
            breadcrumbs=[crumb.label for crumb in ext.breadcrumbs],
            retrieved_at=item.retrieved_at, content_hash=record["content_hash"],
            target_tokens=self.chunk_tokens, max_tokens=self.chunk_max,
        )
        # Each record is serialized once (the state keeps no copy: it points at the output).
        shared: dict[str, str] = {key: dumps_value(record[key])  # encoded once
                  for key in SHARED_FIELDS if key in record}
        record_line = dumps_line(record, shared)
        session.templates.write(blocks)  # before the first line that references them
        session.pages.write_raw(record_line)
        structure_line = dumps_line(structure, shared)
        del structure, shared  # a big page's records are tens of MB: one copy at a time
        session.structure.write_raw(structure_line)
        chunk_text = "".join(dumps_line(chunk) for chunk in chunks)
        session.chunks.write_joined(chunk_text, len(chunks))
        session.record_written(record["canonical_url"], item.track)
        session.aggregates.observe(record["canonical_url"], ext.markdown)
        session.log.record(
            item.track.url, Event.EXTRACTED, status=item.status,
            redirect_chain=item.track.redirect_chain, fetch_mode=item.fetch_mode,
            parser=ext.generator or "html", elapsed_ms=item.elapsed_ms,
            size=item.size, page_id=record["id"], canonical_url=record["canonical_url"],
            chunks=len(chunks),
        )
        session.incremental.fresh(record, chunks, body_digest=item.body_digest,
                                  extra_urls=[item.track.key], links=item.found_links)
        item.extract = None  # nothing per page stays in memory after it is written
        return record  # the item is the page record: Scrapy's -O / FEEDS write it

    def _carry_over(self, item: CarriedPage, row: StateRow,
                    etag: str | None, last_modified: str | None) -> dict[str, Any]:
        """Write the page's lines again as the previous output holds them; log
        `unchanged`."""
        session = self.session
        lines = item.lines
        record = getattr(item, "record", None) or lines.record()
        track = item.track
        for url in record.get("observed_urls") or []:
            track.observe(url)
        session.templates.carry(lines.page)  # its blocks, before the line
        session.pages.write_raw(lines.page)  # written as they are, whatever they hold
        if lines.structure:
            session.structure.write_raw(lines.structure)
        session.chunks.write_joined(lines.chunks, lines.chunk_count)
        session.record_written(row.canonical_url, track)
        session.log.record(
            track.url, Event.UNCHANGED, status=item.status, redirect_chain=track.redirect_chain,
            fetch_mode=item.fetch_mode, elapsed_ms=item.elapsed_ms, size=item.size,
            page_id=page_id(row.canonical_url), canonical_url=row.canonical_url,
            reason=(UnchangedReason.NOT_MODIFIED if item.status == 304
                    else UnchangedReason.SAME_CONTENT),
            parsed=item.parsed,
        )
        session.incremental.unchanged(row, etag=etag, last_modified=last_modified,
                                      observed_urls=list(track.observed),
                                      body_digest=item.body_digest, links=item.found_links)
        return record or {"id": page_id(row.canonical_url), "canonical_url": row.canonical_url}
