"""Less garbage-collector work during a crawl (a Scrapy extension).

When the engine starts, `collector.tune` freezes everything allocated so far out of the
collector's scans and raises the youngest generation's threshold to
`DOCSCRAWL_GC_GEN0_THRESHOLD` allocations (why: `docscrawl.collector`); both are undone
when the engine stops. 0 leaves the collector alone. Extraction workers apply the same
setting in their own processes (`crawl.pool`).
"""

from __future__ import annotations

from typing import Self

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from docscrawl.collector import DEFAULT_GEN0_THRESHOLD, Thresholds, restore, tune


def gen0_threshold(settings: BaseSettings) -> int:
    """`DOCSCRAWL_GC_GEN0_THRESHOLD` (0: the collector left alone)."""
    return max(0, settings.getint("DOCSCRAWL_GC_GEN0_THRESHOLD", DEFAULT_GEN0_THRESHOLD))


class GcTuning:
    """Freeze start-up objects and raise the first-generation threshold for the crawl."""

    def __init__(self, gen0_threshold: int) -> None:
        self.gen0_threshold = gen0_threshold
        self.saved: Thresholds | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        threshold = gen0_threshold(crawler.settings)
        if not threshold:
            raise NotConfigured("DOCSCRAWL_GC_GEN0_THRESHOLD is 0")
        extension = cls(threshold)
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_started(self) -> None:
        """Collect once, freeze what survives, then collect the young generation rarely."""
        self.saved = tune(self.gen0_threshold)

    def engine_stopped(self) -> None:
        """Give the process its collector settings back."""
        if self.saved is not None:
            restore(self.saved)
            self.saved = None
