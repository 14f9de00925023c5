"""Scrapy's scheduler, with its pending requests on disk even without JOBDIR.

A site's sitemap can name every page at once: Scrapy's memory queue would then hold one
Request per page of the site, and the crawl's memory would grow with the site. Scrapy
keeps pending requests in disk queues only when JOBDIR is set; this scheduler gives it a
temporary queue directory otherwise (deleted when the crawl closes; one left behind by a
crawl killed with `kill -9` is removed by the next crawl), so pending requests cost disk,
not memory. `DOCSCRAWL_DISK_QUEUE = False` restores Scrapy's memory queue.
Requests that cannot be serialized still go to the memory queue (Scrapy's own fallback).

A request whose meta holds `NOT_BEFORE` (a retry after `Retry-After` or a backoff) waits
here until then, outside the downloader: no download slot is held while it waits. When
its time comes it is handed to the engine (`engine.crawl`), which wakes at once. A crawl
closing (a pause) puts the waiting requests into the queue, so a JOBDIR keeps them.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any, Self

from scrapy.core.scheduler import Scheduler
from scrapy.crawler import Crawler
from scrapy.http import Request
from twisted.internet.base import DelayedCall

from docscrawl.crawl.scratch import make_scratch_dir, remove_stale_dirs
from docscrawl.vocab import Meta

QUEUE_PREFIX = "docscrawl-queue-"
NOT_BEFORE = Meta.NOT_BEFORE  # request meta: time.time() before which it waits


def make_queue_dir() -> str:
    """A new temporary queue directory named after this process; directories of processes
    that no longer run (a crawl killed with `kill -9`) are removed first."""
    return make_scratch_dir(QUEUE_PREFIX)


def remove_stale_queue_dirs(parent: Path) -> list[Path]:
    """Remove `docscrawl-queue-<pid>-*` directories under `parent` whose process is gone."""
    return remove_stale_dirs(parent, QUEUE_PREFIX)


class DiskQueueScheduler(Scheduler):
    """`scrapy.core.scheduler.Scheduler` with a temporary disk-queue directory."""

    temporary_dir: str | None = None
    _waiting: dict[int, tuple[Request, DelayedCall]]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Scrapy's scheduler; without JOBDIR, its disk queues in a temporary directory
        (the queues are opened later, in `open`, from `dqdir`)."""
        scheduler = super().from_crawler(crawler)
        scheduler._waiting = {}
        settings = crawler.settings
        if scheduler.dqdir is None and settings.getbool("DOCSCRAWL_DISK_QUEUE", True):
            scheduler.temporary_dir = make_queue_dir()
            scheduler.dqdir = scheduler._dqdir(scheduler.temporary_dir)
        return scheduler

    def enqueue_request(self, request: Request) -> bool:
        """Queue `request`, or keep it aside until its `NOT_BEFORE` time."""
        wait = request.meta.get(NOT_BEFORE, 0.0) - time.time()
        if wait <= 0:
            return super().enqueue_request(request)
        from twisted.internet import reactor  # the crawl's reactor, installed by now

        call = reactor.callLater(wait, self._release, request)
        self._waiting[id(request)] = (request, call)
        return True

    def _release(self, request: Request) -> None:
        self._waiting.pop(id(request), None)
        engine = self.crawler.engine if self.crawler is not None else None
        if engine is None:  # closed meanwhile
            return
        engine.crawl(request)  # queued now (its time has come); the engine wakes at once

    def has_pending_requests(self) -> bool:
        """Waiting requests count: the crawl is not over while one waits."""
        return bool(self._waiting) or super().has_pending_requests()

    def __len__(self) -> int:
        return super().__len__() + len(self._waiting)

    @property
    def waiting(self) -> int:
        """Requests waiting for their `NOT_BEFORE` time."""
        return len(self._waiting)

    def close(self, reason: str) -> Any:
        """Close as Scrapy does, then delete the temporary queue directory. Requests still
        waiting go into the queue first (kept by a JOBDIR)."""
        for request, call in self._waiting.values():
            if call.active():
                call.cancel()
            super().enqueue_request(request)
        self._waiting.clear()
        try:
            return super().close(reason)
        finally:
            if self.temporary_dir is not None:
                shutil.rmtree(self.temporary_dir, ignore_errors=True)
                self.temporary_dir = None
