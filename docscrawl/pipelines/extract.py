"""Pipeline step 1: run the pure extraction over the page's one parsed tree."""

from __future__ import annotations

import logging
from typing import Any

from scrapy.exceptions import DropItem

from docscrawl.extract.model import PageExtract
from docscrawl.extract.page import extract_page
from docscrawl.extract.site_versions import page_signals
from docscrawl.items import FetchedPage
from docscrawl.pipelines.base import SessionPipeline
from docscrawl.quality import soft_404_reason

logger = logging.getLogger(__name__)


class ExtractPipeline(SessionPipeline):
    """FetchedPage -> FetchedPage with `.extract` filled; a crash is a `parse_error`."""

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, FetchedPage):
            return item
        try:
            item.extract = extract_page(item.root, item.final_url, structure=item.structure)
        except Exception as exc:
            logger.exception("docscrawl: extraction failed for %s", item.final_url)
            self.session.log.record(item.track.url, "failed", reason="parse_error",
                                    rule=f"{type(exc).__name__}: {exc}"[:300],
                                    status=item.status, fetch_mode=item.fetch_mode)
            raise DropItem(f"parse_error {item.final_url}", log_level="DEBUG") from None
        self._site_version(item.root, item.structure, item.extract, item.final_url)
        item.root = item.structure = None  # the tree is no longer needed: free it early
        extract = item.extract
        soft = soft_404_reason(extract.title, extract.main_heading, extract.markdown)
        if soft:
            self.session.log.record(item.track.url, "failed", reason="soft_404", rule=soft,
                                    status=item.status, fetch_mode=item.fetch_mode)
            raise DropItem(f"soft 404 {item.final_url}", log_level="DEBUG")
        return item

    def _site_version(self, root: Any, structure: Any, extract: PageExtract, url: str) -> None:
        """Feed the page's version signals to the site's model, then add what every page
        shares to this page's version (`docscrawl.extract.site_versions`)."""
        site = self.session.site_versions
        if site.wants_page():
            homes = (link.text for link in extract.links if link.url in site.home)
            index = structure.index if structure is not None else None
            site.observe(page_signals(root, homes, site.scope,
                                      classes=index.classes if index is not None else (),
                                      ids=index.ids if index is not None else ()))
        extract.version, extract.warnings = site.apply(extract.version, extract.warnings)
        self.session.site_observed(url)
