"""Playwright's side of rendering, imported only when a page is rendered.

`LazyPlaywrightHandler` is scrapy-playwright's download handler, except that the Node
driver starts on the first request that needs the browser instead of when the engine
starts. `wait_for_content` is the page method that waits for the main content. Chromium is
launched behind the crawl's guard proxy (`docscrawl.discovery.browserproxy`), started in
the same asyncio loop just before it: every request it makes is checked where it connects.

scrapy-playwright's private `_launch`, `_download_request` and `_close` are overridden; the
pinned version in pyproject.toml is the one tested (tests/render/test_private_apis.py
fails loudly when either disappears).
"""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
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

__all__ = ["LazyPlaywrightHandler", "wait_for_content"]


# How long the main content had to stay unchanged, in JavaScript: resolves (never
# rejects) when the main content has text and the DOM has been quiet for `settle` ms,
# when the DOM has been quiet for five times that, or after `limit` ms.
_WAIT_JS = """
async ([selector, settle, limit, minChars]) => {
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  observer.observe(document.documentElement,
                   {subtree: true, childList: true, characterData: true});
  const ready = () => {
    const el = selector ? document.querySelector(selector)
      : (document.querySelector("main, [role=main], article") || document.body);
    const text = el ? (el.innerText || "").trim().length : 0;
    return selector ? text > 0 : text >= minChars;
  };
  return await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now(), quiet = now - last;
      const done = (ready() && quiet >= settle) || now - start >= limit
        || (!selector && quiet >= settle * 5);
      if (done) { observer.disconnect(); resolve(Math.round(now - start)); }
      else { setTimeout(tick, 50); }
    };
    tick();
  });
}
"""


async def wait_for_content(
    page: Page, selector: str | None, settle_ms: int, limit_ms: int, min_chars: int
) -> int | None:
    """Wait for the main content (profile selector) or for the DOM to settle, bounded.

    Used as a scrapy-playwright `PageMethod`. A navigation inside the page (a client
    redirect) restarts the wait once; the wait never fails the render by itself.
    """
    for _ in range(2):
        try:
            return await page.evaluate(_WAIT_JS, [selector, settle_ms, limit_ms, min_chars])
        except PlaywrightError as exc:
            if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
                raise
            await page.wait_for_load_state("load", timeout=limit_ms)
    return None


class LazyPlaywrightHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler that starts Playwright at its first browser request."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._started: asyncio.Lock | None = None
        self._launched = False
        self.proxy: GuardProxy | None = None
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
        return await super()._download_request(request, spider)

    async def _close(self) -> None:
        await super()._close()
        if self.proxy is not None:
            await self.proxy.close()
