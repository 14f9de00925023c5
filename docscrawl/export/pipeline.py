"""Pipeline step 3: chunk the page, write its lines, log the outcome, update the state.

This stage writes the terminal event of every page that entered the pipelines: `extracted`
or `unchanged` for the pages it writes, and the event an earlier stage ended a page with
(`PageEnded`: failed, duplicate), on Scrapy's `item_dropped` signal.

A fresh page is chunked (`docscrawl.chunking.chunker`) and written to pages, structure and chunks,
then logged `extracted` and stored in the incremental state. A carried-over page (304, an
identical body, or an unchanged normalized content hash, decided upstream) is written from
its lines in the previous output (`docscrawl.incremental.carry`) and logged `unchanged`.

The item a page yields is its page record as written, so `scrapy crawl docs -O pages.jsonl`
(or `FEEDS`) gives page records too; only pages.jsonl gets the end-of-crawl updates
(`docscrawl.crawl.finish`: aliases found later, a better canonical URL).
"""

from __future__ import annotations

from typing import Any, Self

from scrapy import signals
from scrapy.crawler import Crawler

from docscrawl.chunking.chunker import chunk_page
from docscrawl.crawl.items import CarriedPage, FetchedPage, PageEnded
from docscrawl.crawl.stage import CrawlParts
from docscrawl.export.records import SHARED_FIELDS, PageRecord, page_id, page_records
from docscrawl.incremental.rows import StateRow
from docscrawl.jsonl import encode_line, encode_value
from docscrawl.vocab import Event, UnchangedReason


class ExportPipeline:
    """Appends one line per page (and per chunk), flushed at once; writes each page's
    terminal event."""

    def __init__(self, parts: CrawlParts, *, chunk_tokens: int, chunk_max: int | None,
                 template_links: bool = True) -> None:
        self.parts = parts
        self.chunk_tokens = chunk_tokens
        self.chunk_max = chunk_max
        self.template_links = template_links  # False: every link inline, no templates.jsonl

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        pipeline = cls(CrawlParts.of(crawler),
                       chunk_tokens=settings.getint("DOCSCRAWL_CHUNK_TOKENS"),
                       chunk_max=settings.getint("DOCSCRAWL_CHUNK_MAX_TOKENS") or None,
                       template_links=settings.getbool("DOCSCRAWL_TEMPLATE_LINKS", True))
        crawler.signals.connect(pipeline.dropped, signal=signals.item_dropped)
        return pipeline

    def dropped(self, item: Any, exception: BaseException) -> None:
        """Scrapy's `item_dropped`: a page an earlier stage ended gets its event."""
        if isinstance(exception, PageEnded) and isinstance(item, FetchedPage | CarriedPage):
            self.ended(item, exception)

    def ended(self, item: FetchedPage | CarriedPage, end: PageEnded) -> None:
        """Write the terminal event of a page a stage ended (`PageEnded`)."""
        self.parts.log.record(item.track.url, end.event, **end.fields)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CarriedPage):
            return self._carry_over(item, item.row, item.etag, item.last_modified)
        if not isinstance(item, FetchedPage):
            return item
        return self._write_fresh(item)

    def _write_fresh(self, item: FetchedPage) -> PageRecord:
        outputs = self.parts.outputs
        keep = outputs.templates.keep(item.template_locators) if self.template_links else None
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
        # Each record is serialized once (the state keeps no copy: it points at the output),
        # without the walk that would find it plain (its types say so), to UTF-8 written
        # as it is (`jsonenc`).
        shared: dict[str, str | bytes] = {key: encode_value(record[key], plain=True)
                                          for key in SHARED_FIELDS if key in record}
        record_line = encode_line(record, shared, plain=True)
        outputs.templates.write(blocks)  # before the first line that references them
        outputs.pages.write_raw(record_line)
        outputs.feed_links(record["canonical_url"], record["links"], blocks,
                           record.get("template_offsets") or [])
        structure_line = encode_line(structure, shared, plain=True)
        del structure, shared  # a big page's records are tens of MB: one copy at a time
        outputs.structure.write_raw(structure_line)
        chunk_text = b"".join(encode_line(chunk, plain=True) for chunk in chunks)
        outputs.chunks.write_joined(chunk_text, len(chunks))
        item.track.mark_written(record["canonical_url"])
        self.parts.dedup.aggregates.observe(record["canonical_url"], ext.markdown)
        self.parts.log.record(
            item.track.url, Event.EXTRACTED, status=item.status,
            redirect_chain=item.track.redirect_chain, fetch_mode=item.fetch_mode,
            parser=ext.generator or "html", elapsed_ms=item.elapsed_ms,
            size=item.size, page_id=record["id"], canonical_url=record["canonical_url"],
            chunks=len(chunks),
        )
        self.parts.incremental.fresh(record, chunks, body_digest=item.body_digest,
                                  extra_urls=[item.track.key], links=item.found_links)
        item.extract = None  # nothing per page stays in memory after it is written
        return record  # the item is the page record: Scrapy's -O / FEEDS write it

    def _carry_over(self, item: CarriedPage, row: StateRow,
                    etag: str | None, last_modified: str | None) -> dict[str, Any]:
        """Write the page's lines again as the previous output holds them; log
        `unchanged`."""
        outputs = self.parts.outputs
        lines = item.lines
        record = getattr(item, "record", None) or lines.record()
        track = item.track
        outputs.templates.carry(lines.page)  # its blocks, before the line
        outputs.stop_feeding_links()
        outputs.pages.write_raw(lines.page)  # written as they are, whatever they hold
        if lines.structure:
            outputs.structure.write_raw(lines.structure)
        outputs.chunks.write_joined(lines.chunks, lines.chunk_count)
        track.mark_carried(row.canonical_url, record.get("observed_urls") or [],
                           record.get("sitemap_lastmod"))
        self.parts.log.record(
            track.url, Event.UNCHANGED, status=item.status, redirect_chain=track.redirect_chain,
            fetch_mode=item.fetch_mode, elapsed_ms=item.elapsed_ms, size=item.size,
            page_id=page_id(row.canonical_url), canonical_url=row.canonical_url,
            reason=(UnchangedReason.NOT_MODIFIED if item.status == 304
                    else UnchangedReason.SAME_CONTENT),
            parsed=item.parsed,
        )
        self.parts.incremental.unchanged(row, etag=etag, last_modified=last_modified,
                                      observed_urls=list(track.observed),
                                      body_digest=item.body_digest, links=item.found_links)
        return record or {"id": page_id(row.canonical_url), "canonical_url": row.canonical_url}
