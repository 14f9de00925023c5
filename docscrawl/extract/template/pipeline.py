"""Pipeline step 1b: template navigation across pages of the same crawl.

A region whose link set (its `signature`) repeats on several pages is template navigation
(`docscrawl.extract.template.tracker.TemplateTracker`); regions left `unknown` by the page alone
are relabelled. Memory is bounded by the tracker's signature cap.
"""

from __future__ import annotations

from typing import Any, Self

from scrapy.crawler import Crawler

from docscrawl.crawl.items import FetchedPage
from docscrawl.extract.template.tracker import TemplateTracker, apply_reclassifications


class TemplatePipeline:
    """Feeds every extracted page's regions to one TemplateTracker."""

    def __init__(self, crawler: Crawler, *, min_pages: int) -> None:
        self.crawler = crawler  # its stats
        self.tracker = TemplateTracker(min_pages=min_pages)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, min_pages=crawler.settings.getint("DOCSCRAWL_TEMPLATE_MIN_PAGES"))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, FetchedPage) and item.extract is not None:
            changes = self.tracker.observe(item.final_url, item.extract.regions)
            item.template_locators = frozenset(change.locator for change in changes)
            relabelled = apply_reclassifications(item.extract, changes)
            if relabelled and self.crawler.stats is not None:
                self.crawler.stats.inc_value("docscrawl/templates/reclassified", relabelled)
        return item
