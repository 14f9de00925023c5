"""Pipeline step 1: run the pure extraction over the page's one parsed tree.

The crawl's `TemplateTable` (`site_model.template`) is passed to extraction
read-only. Until it is frozen, pages are held (their trees kept, at most MAX_HELD) while
the table learns from the crawl's warm-up sample (`docscrawl.extract.template.warmup`); then the
held pages and every page after them are judged by the same frozen table. Held pages are
released early when the crawl has nothing else to fetch (a site smaller than the sample).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Self

from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, task

from docscrawl.crawl.items import FetchedPage, PageEnded
from docscrawl.crawl.stage import CrawlParts
from docscrawl.extract.model import PageExtract
from docscrawl.extract.page import extract_page
from docscrawl.extract.quality import soft_404_reason
from docscrawl.extract.template.content import TemplateNotice
from docscrawl.extract.template.table import TemplateTable
from docscrawl.extract.template.warmup import Warmup
from docscrawl.extract.worker import site_signals
from docscrawl.vocab import Event, FailReason

logger = logging.getLogger(__name__)

QUIET_SECONDS = 2.0  # held pages are released when no page arrived for this long...
CHECK_SECONDS = 0.5  # ... and the downloader is idle (checked this often)
MAX_HELD = 48  # pages held at most while the sample is incomplete (then: give up)
TEMPLATE_WARN_AFTER = 12  # pages judged by the frozen table before the template warning
SAVE_EVERY = 50  # pages between two saves of the site model


class ExtractPipeline:
    """FetchedPage -> FetchedPage with `.extract` filled; a crash is a `parse_error`."""

    def __init__(self, crawler: Crawler, parts: CrawlParts, *, warmup: bool = True) -> None:
        self.crawler = crawler  # its engine: is the downloader idle (held pages)
        self.parts = parts
        self.warmup = warmup
        self._held: list[defer.Deferred[None]] = []
        self._last_arrival = 0.0
        self._loop: task.LoopingCall | None = None
        self._warmup: Warmup | None = None
        self._notice: TemplateNotice | None = None  # the first pages the frozen table judged

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, CrawlParts.of(crawler),
                   warmup=crawler.settings.getbool("DOCSCRAWL_TEMPLATE_WARMUP", True))

    def close_spider(self) -> None:
        if self._held:
            self.warm.give_up()
        self._release()
        if self._notice is not None and self._notice.judged < TEMPLATE_WARN_AFTER:
            self._template_warning()

    @property
    def template_table(self) -> TemplateTable:
        return self.parts.site_model.template

    @property
    def warm(self) -> Warmup:
        if self._warmup is None:
            self._warmup = Warmup(self.template_table)
            self.parts.log.terminal_hooks.append(self._warmup.settle)
        return self._warmup

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, FetchedPage):
            return item
        model = self.template_table
        self._last_arrival = time.monotonic()
        if item.pooled:  # a worker extracted it, with the frozen table
            if item.extract_error is not None:
                raise self._failed(item, item.extract_error)
        elif self.warmup and not model.frozen:
            first = self._extract(item, None)  # cold: only its signatures are kept
            warm = self.warm
            warm.offer((item.track.url, item.track.key, item.final_url), first.signatures,
                       self.parts.template_sample)
            if len(self._held) >= MAX_HELD:
                warm.give_up()
            if warm.check():
                self._release()
            else:
                waiter: defer.Deferred[None] = defer.Deferred()
                self._held.append(waiter)
                self.parts.report.pages_held = len(self._held)
                self._watch()
                await maybe_deferred_to_future(waiter)
        if not item.pooled:
            item.extract = self._extract(item, model)
        assert item.extract is not None
        if model.frozen and (self._notice is None or self._notice.judged < TEMPLATE_WARN_AFTER):
            self._note_template(item.extract, item.final_url)
        self._site_version(item, item.extract)
        item.root = item.structure = item.signals = None  # no longer needed: free them early
        extract = item.extract
        soft = soft_404_reason(extract.title, extract.main_heading, extract.markdown)
        if soft:
            raise PageEnded(f"soft 404 {item.final_url}", Event.FAILED,
                            reason=FailReason.SOFT_404, rule=soft, status=item.status,
                            fetch_mode=item.fetch_mode)
        return item

    def _note_template(self, extract: PageExtract, url: str) -> None:
        """Feed the template notice the first pages judged by the frozen table; warn once
        (after TEMPLATE_WARN_AFTER pages, or at the end of a smaller crawl)."""
        notice = self._notice = self._notice or TemplateNotice(self.template_table.min_pages)
        notice.add(url, extract.blocks, extract.warnings, extract.main_locator)
        if notice.judged == TEMPLATE_WARN_AFTER:
            self._template_warning()

    def _template_warning(self) -> None:
        if self._notice is not None and (message := self._notice.message()):
            logger.warning("docscrawl: %s", message)

    def _site_version(self, item: FetchedPage, extract: PageExtract) -> None:
        """Feed the page's version signals to the site's model, then add what every page
        shares to this page's version (`docscrawl.extract.site_versions`). A page a worker
        extracted brings its signals (`extract.worker`); else they are read from its tree."""
        model = self.parts.site_model
        site = model.versions
        url = item.final_url
        # a worker's page was sampled when it was sent (`PagePool.facts`): its signals
        # came with it, or it was not sampled
        signals = item.signals if item.pooled else (
            site_signals(item.root, item.structure, extract, url, site.home, site.scope)
            if site.wants(url) else None)
        if signals is not None:
            site.observe(signals, home=url in site.home)
        extract.version, extract.warnings = site.apply(extract.version, extract.warnings)
        # a page extracted before the site's version evidence was known is completed at
        # the end (`ColdPages`); the site model is saved now and then
        self.parts.cold.note(url, site)
        if site.offered % SAVE_EVERY == 0:
            model.save()

    def _extract(self, item: FetchedPage, model: TemplateTable | None) -> PageExtract:
        try:
            return extract_page(item.root, item.final_url, structure=item.structure,
                                template_table=model)
        except Exception as exc:
            logger.exception("docscrawl: extraction failed for %s", item.final_url)
            raise self._failed(item, f"{type(exc).__name__}: {exc}"[:300]) from None

    @staticmethod
    def _failed(item: FetchedPage, rule: str) -> PageEnded:
        """The page's extraction raised (here or in a worker): it ends `parse_error`."""
        return PageEnded(f"parse_error {item.final_url}", Event.FAILED,
                         reason=FailReason.PARSE_ERROR, rule=rule, status=item.status,
                         fetch_mode=item.fetch_mode)

    def _watch(self) -> None:
        if self._loop is None:
            self._loop = task.LoopingCall(self._check_quiet)
            self._loop.start(CHECK_SECONDS, now=False)

    def _check_quiet(self) -> None:
        """Release held pages once the table is frozen (other workers count too), or
        when the crawl has gone quiet before the sample was complete."""
        if self.warm.check():
            self._release()
            return
        engine = self.crawler.engine
        downloading = bool(engine is not None and engine.downloader.active)
        if not downloading and time.monotonic() - self._last_arrival >= QUIET_SECONDS:
            self.warm.give_up()
            self._release()

    def _release(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None
        held, self._held = self._held, []
        self.parts.report.pages_held = 0
        for waiter in held:
            waiter.callback(None)
