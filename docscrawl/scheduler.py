"""Scrapy's scheduler, with its pending requests on disk even without JOBDIR.

A site's sitemap can name every page at once: Scrapy's memory queue would then hold one
Request per page of the site, and the crawl's memory would grow with the site. Scrapy
keeps pending requests in disk queues only when JOBDIR is set; this scheduler gives it a
temporary queue directory otherwise (deleted when the crawl closes; one left behind by a
crawl killed with `kill -9` is removed by the next crawl), so pending requests cost disk,
not memory. `DOCSCRAWL_DISK_QUEUE = False` restores Scrapy's memory queue.
Requests that cannot be serialized still go to the memory queue (Scrapy's own fallback).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Self

from scrapy.core.scheduler import Scheduler
from scrapy.crawler import Crawler

from docscrawl.scratch import make_scratch_dir, remove_stale_dirs

QUEUE_PREFIX = "docscrawl-queue-"


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

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Scrapy's scheduler; without JOBDIR, its disk queues in a temporary directory
        (the queues are opened later, in `open`, from `dqdir`)."""
        scheduler = super().from_crawler(crawler)
        settings = crawler.settings
        if scheduler.dqdir is None and settings.getbool("DOCSCRAWL_DISK_QUEUE", True):
            scheduler.temporary_dir = make_queue_dir()
            scheduler.dqdir = scheduler._dqdir(scheduler.temporary_dir)
        return scheduler

    def close(self, reason: str) -> Any:
        """Close as Scrapy does, then delete the temporary queue directory."""
        try:
            return super().close(reason)
        finally:
            if self.temporary_dir is not None:
                shutil.rmtree(self.temporary_dir, ignore_errors=True)
                self.temporary_dir = None
