"""What the item pipelines are handed: the parts of the running crawl, one job each.

A pipeline takes `CrawlParts.of(crawler)` in its `from_crawler` and uses only the parts
it needs (the extract stage: the site model and the crawl log; dedup: its own state, the
frontier's URL policy, the incremental state and the JOBDIR journal; export: the output
files, the incremental state). The parts are built when the crawl opens (`CrawlSession`,
on `spider_opened`, after the pipelines were built): the holder is filled then, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from docscrawl.config import CrawlConfig
    from docscrawl.crawl.crawllog import CrawlLog
    from docscrawl.crawl.finish import ColdPages
    from docscrawl.crawl.ledger import Ledger
    from docscrawl.crawl.outputs import OutputFiles
    from docscrawl.crawl.restore import ResumeState
    from docscrawl.crawl.runreport import RunReport
    from docscrawl.dedup.state import DedupState
    from docscrawl.discovery.frontier import Frontier
    from docscrawl.discovery.seenurls import SeenUrls
    from docscrawl.discovery.trackstore import TrackStore
    from docscrawl.incremental.recrawl import Incremental
    from docscrawl.incremental.site_model import SiteModel

PARTS_ATTRIBUTE = "docscrawl_parts"  # where a crawler keeps its CrawlParts


@dataclass(eq=False, repr=False)
class CrawlParts:
    """The parts of one crawl. Filled by `CrawlSession` when the crawl opens."""

    config: CrawlConfig
    stats: Any  # Scrapy's stats collector, or None
    ledger: Ledger  # the crawl's throwaway SQLite (what grows with the site)
    log: CrawlLog
    frontier: Frontier
    tracks: TrackStore
    seen_urls: SeenUrls
    outputs: OutputFiles
    dedup: DedupState
    resume: ResumeState
    incremental: Incremental
    site_model: SiteModel
    cold: ColdPages
    report: RunReport
    # The template warm-up sample, chosen when the seed is parsed (`template.warmup`)
    template_sample: list[str] | None = None

    @staticmethod
    def of(crawler: Crawler) -> CrawlParts:
        """The crawler's parts: the same holder for every pipeline and the spider; its
        fields are set when the crawl session opens (`fill`)."""
        parts = getattr(crawler, PARTS_ATTRIBUTE, None)
        if parts is None:
            parts = CrawlParts.__new__(CrawlParts)
            parts.template_sample = None
            setattr(crawler, PARTS_ATTRIBUTE, parts)
        return parts

    def fill(self, other: CrawlParts) -> None:
        """Take the parts of the crawl that just opened."""
        self.__dict__.update(other.__dict__)
