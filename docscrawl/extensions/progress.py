"""A progress line in the log every few seconds: pages done, queued, skipped, failed, rate."""

from __future__ import annotations

import logging
from typing import Self

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

logger = logging.getLogger(__name__)


def progress_line(*, done: int, queued: int, skipped: int, failed: int,
                  elapsed_s: float) -> str:
    """The progress message (pure, for tests)."""
    rate = done / elapsed_s * 60 if elapsed_s > 0 else 0.0
    return (f"docscrawl progress: {done} pages done, {queued} queued, {skipped} skipped, "
            f"{failed} failed, {rate:.0f} pages/min")


class Progress:
    """Logs `progress_line` every DOCSCRAWL_PROGRESS_INTERVAL seconds (0 disables)."""

    def __init__(self, crawler: Crawler, interval: float) -> None:
        self.crawler = crawler
        self.interval = interval
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        interval = crawler.settings.getfloat("DOCSCRAWL_PROGRESS_INTERVAL")
        if interval <= 0:
            raise NotConfigured
        ext = cls(crawler, interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self) -> None:
        self._loop = task.LoopingCall(self.log_progress)
        self._loop.start(self.interval, now=False)

    def spider_closed(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.log_progress()

    def log_progress(self) -> None:
        session = getattr(self.crawler.spider, "session", None)
        if session is None:
            return
        events = session.log.events
        engine = self.crawler.engine
        queued = 0
        scheduler = engine.scheduler if engine is not None else None
        if scheduler is not None:
            queued = len(scheduler) if hasattr(scheduler, "__len__") else 0
            queued += len(engine.downloader.active)
        logger.info(progress_line(
            done=events.get("extracted", 0) + events.get("duplicate", 0),
            queued=queued, skipped=events.get("skipped", 0),
            failed=events.get("failed", 0), elapsed_s=session.elapsed_s(),
        ))
