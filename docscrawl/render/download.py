"""The crawl's http(s) download handler: Scrapy's HTTP/1.1 handler, and the browser on demand.

Plain requests go to Scrapy's HTTP/1.1 handler; only a request marked `meta["playwright"]`
loads Playwright (`docscrawl.render.playwright_handler`, imported then and not before) and
starts its driver and Chromium. A crawl that renders nothing never imports Playwright, and a
machine without it or without Chromium still crawls every page that needs no browser.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.crawler import Crawler
from scrapy.http import Request, Response

from docscrawl.crawl.headlimit import DEFAULT_MAX_HEADER_BYTES, install_head_limit

if TYPE_CHECKING:
    from docscrawl.render.playwright_handler import LazyPlaywrightHandler

__all__ = ["DownloadHandler"]


class DownloadHandler(HTTP11DownloadHandler):
    """http(s) downloads: Scrapy's HTTP/1.1 handler, and the browser for rendered pages.

    The Playwright handler is built at the first request marked `meta["playwright"]`
    (the render middleware marks only pages that need the browser), so Playwright is
    imported only when a page is rendered. The http and https handlers
    share it: one browser per crawl.
    """

    lazy = False

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler=crawler)  # keeps the crawler as `self._crawler`
        install_head_limit(crawler.settings.getint("DOCSCRAWL_MAX_HEADER_BYTES",
                                                   DEFAULT_MAX_HEADER_BYTES))

    async def download_request(self, request: Request) -> Response:
        if request.meta.get("playwright"):
            return await self.browser().download_request(request)
        return await super().download_request(request)

    def browser(self) -> LazyPlaywrightHandler:
        """The crawl's Playwright handler, imported and built on first use."""
        browser = _BROWSERS.get(self._crawler)
        if browser is None:
            from docscrawl.render.playwright_handler import LazyPlaywrightHandler

            browser = _BROWSERS[self._crawler] = LazyPlaywrightHandler(self._crawler)
        return browser

    async def close(self) -> None:
        await super().close()
        browser = _BROWSERS.pop(self._crawler, None)  # the first handler to close closes it
        if browser is not None:
            await browser.close()


_BROWSERS: weakref.WeakKeyDictionary[Crawler, LazyPlaywrightHandler] = (
    weakref.WeakKeyDictionary())
