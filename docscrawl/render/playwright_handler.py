"""Playwright's side of rendering, imported only when a page is rendered.

`LazyPlaywrightHandler` is scrapy-playwright's download handler, except that the Node
driver starts on the first request that needs the browser instead of when the engine
starts, and that browser pages are reused. `wait_for_content` is the page method that
waits for the main content. Chromium is launched behind the crawl's guard proxy
(`docscrawl.discovery.browserproxy`), started in the same asyncio loop just before it:
every request it makes is checked where it connects.

Pages are pooled: opening and closing a page costs about as much as rendering one, so a
page that rendered without error goes back to the pool (first sent to `about:blank`, which
stops the last page's scripts) and serves the next render, up to `PAGE_USES` renders. At
most `PLAYWRIGHT_MAX_PAGES_PER_CONTEXT` pages exist; each render re-installs its own
request guard on the page (`docscrawl.render.pageguard`, `PageGuard.prepare`). Pooled pages
are closed when the spider closes.

scrapy-playwright's private `_launch`, `_create_page`, `_download_request` and `_close` are
overridden; the pinned version in pyproject.toml is the one tested
(tests/test_private_apis.py fails loudly when one disappears).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from docscrawl.discovery.browserproxy import GuardProxy
from docscrawl.render.browser import (
    BrowserUnavailable,
    configured_path,
    launch_options,
    locate_chromium,
)

__all__ = ["PAGE_USES", "TRACK_REQUESTS_JS", "LazyPlaywrightHandler", "wait_for_content"]

PAGE_USES = 10  # renders per pooled page before it is closed: its renderer grows with use
BUSY_FACTOR = 10  # quiet time, in settle times, that counts while a fetch is in flight
LEASE = "docscrawl_page"  # request meta: the pooled page this render holds

# Added to every render page before its scripts run: counts the page's own fetch() and
# XMLHttpRequest calls in flight, and when that count last changed, for `_WAIT_JS`.
TRACK_REQUESTS_JS = """
(() => {
  if (window.__docscrawlNet) return;
  const net = {pending: 0, at: 0};
  Object.defineProperty(window, "__docscrawlNet", {value: net});
  const begin = () => { net.pending += 1; net.at = performance.now(); };
  const end = () => { net.pending = Math.max(0, net.pending - 1); net.at = performance.now(); };
  const fetch = window.fetch;
  if (fetch) {
    window.fetch = function (...args) {
      begin();
      let result;
      try { result = fetch.apply(this, args); } catch (error) { end(); throw error; }
      result.then(end, end);
      return result;
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    begin();
    this.addEventListener("loadend", end, {once: true});
    try { return send.apply(this, args); } catch (error) { end(); throw error; }
  };
})();
"""

# The wait for the main content, in JavaScript; resolves (never rejects) with the ms
# waited. "Quiet" is the time since the DOM last changed or a fetch/XHR started or ended;
# the page is "busy" while one is in flight. Done when the main content is there (the
# profile selector has text, else `minChars` of main text) and it has been quiet for
# `settle` ms, not busy (`busy` ms if busy: a slow fetch is awaited, a poller that never
# ends is not); or, without a selector, quiet for 10x that with no content (an empty
# page); or after `limit` ms.
_WAIT_JS = """
async ([selector, settle, busy, limit, minChars]) => {
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  observer.observe(document.documentElement,
                   {subtree: true, childList: true, characterData: true});
  const net = window.__docscrawlNet || {pending: 0, at: 0};
  const ready = () => {
    const el = selector ? document.querySelector(selector)
      : (document.querySelector("main, [role=main], article") || document.body);
    const text = el ? (el.innerText || "").trim().length : 0;
    return selector ? text > 0 : text >= minChars;
  };
  return await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now(), quiet = now - Math.max(last, net.at);
      const enough = net.pending === 0 ? settle : busy;
      const done = (quiet >= enough && ready()) || now - start >= limit
        || (!selector && quiet >= enough * 10);
      if (done) { observer.disconnect(); resolve(Math.round(now - start)); }
      else { setTimeout(tick, 25); }
    };
    tick();
  });
}
"""


async def wait_for_content(
    page: Page, selector: str | None, settle_ms: int, limit_ms: int, min_chars: int,
    busy_ms: int | None = None,
) -> int | None:
    """Wait for the main content (profile selector) and a quiet page, bounded (`_WAIT_JS`);
    `busy_ms` (default `BUSY_FACTOR` x `settle_ms`) is the quiet time that counts while a
    fetch is in flight.

    Used as a scrapy-playwright `PageMethod`. A navigation inside the page (a client
    redirect) restarts the wait once; the wait never fails the render by itself.
    """
    busy = busy_ms if busy_ms is not None else settle_ms * BUSY_FACTOR
    for _ in range(2):
        try:
            return await page.evaluate(_WAIT_JS, [selector, settle_ms, busy, limit_ms,
                                                  min_chars])
        except PlaywrightError as exc:
            if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
                raise
            await page.wait_for_load_state("load", timeout=limit_ms)
    return None


class LazyPlaywrightHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler that starts Playwright at its first browser request and
    reuses its pages."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._started: asyncio.Lock | None = None
        self._launched = False
        self.proxy: GuardProxy | None = None
        self._leases: asyncio.Semaphore | None = None  # pages in use or in the pool
        self._idle: list[Page] = []
        self._uses: dict[Page, int] = {}
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)
        if "executable_path" not in self.config.launch_options:
            try:
                path = locate_chromium(configured_path(crawler.settings))
            except BrowserUnavailable:
                path = None  # the render middleware reports it when rendering is on
            self.config.launch_options = {**launch_options(path),
                                          **self.config.launch_options}

    async def _maybe_launch_in_thread(self) -> None:
        """engine_started: do nothing yet (see `_ensure_launched`)."""

    def _engine_started(self) -> Any:  # Scrapy < 2.14 hook, kept inert the same way
        return None

    async def _ensure_launched(self) -> None:
        if self._started is None:
            self._started = asyncio.Lock()
        async with self._started:
            if not self._launched:
                self.proxy = await GuardProxy().start()
                options = self.config.launch_options
                options["args"] = [*options.get("args", ()), *self.proxy.chromium_args()]
                options["proxy"] = self.proxy.launch_proxy()
                await self._launch()
                self._launched = True

    async def _download_request(self, request: Request, spider: Any = None) -> Response:
        await self._ensure_launched()
        request.meta["playwright_include_page"] = True  # the pool closes pages, not it
        reuse = False
        try:
            response = await super()._download_request(request, spider)
            reuse = True
            return response
        finally:
            await self._give_back(request, reuse=reuse)

    # -- the page pool --------------------------------------------------------------------

    async def _create_page(self, request: Request, spider: Any) -> Page:
        """A pooled page, else a new one; at most `max_pages_per_context` exist."""
        await self._give_back(request, reuse=False)  # a retry after the page's target closed
        if self._leases is None:
            self._leases = asyncio.Semaphore(self.config.max_pages_per_context)
        await self._leases.acquire()
        try:
            page = None
            while page is None and self._idle:
                page = self._idle.pop()
                if page.is_closed():  # crashed or closed while pooled
                    await self._discard(page)
                    page = None
            if page is None:
                page = await super()._create_page(request, spider)
                self._uses[page] = 0
        except BaseException:
            self._leases.release()
            raise
        request.meta[LEASE] = page
        return page

    async def _give_back(self, request: Request, *, reuse: bool) -> None:
        """Return the render's page to the pool (after a clean render), else close it."""
        page = request.meta.pop(LEASE, None)
        request.meta.pop("playwright_page", None)
        if page is None:
            return
        try:
            uses = self._uses.get(page, 0) + 1
            if reuse and uses < PAGE_USES and not page.is_closed():
                await page.goto("about:blank")
                self._uses[page] = uses
                self._idle.append(page)
            else:
                await self._discard(page)
        except PlaywrightError:
            await self._discard(page)
        finally:
            if self._leases is not None:
                self._leases.release()

    async def _discard(self, page: Page) -> None:
        """Close a page of the pool for good (it may be closed already) and count it."""
        if page not in self._uses:
            return
        del self._uses[page]
        if not page.is_closed():
            with contextlib.suppress(PlaywrightError):
                await page.close()
        self.stats.inc_value("playwright/page_count/closed")

    async def _drain(self) -> None:
        """Close the pooled pages (before the crawl's stats are written)."""
        while self._idle:
            await self._discard(self._idle.pop())

    async def _spider_closed(self) -> None:
        await self._drain()

    async def _close(self) -> None:
        await self._drain()
        await super()._close()
        if self.proxy is not None:
            await self.proxy.close()
