"""The browser for rendering: which Chromium, how it is launched, how a page is awaited.

Which Chromium (`locate_chromium`), first match wins:

1. the `DOCSCRAWL_CHROMIUM_PATH` setting, else the environment variable of that name;
2. Debian's `chromium` package: `/usr/bin/chromium` (or `chromium` on `PATH`);
3. Playwright's own Chromium when `playwright install chromium` put one in
   `$PLAYWRIGHT_BROWSERS_PATH` or `~/.cache/ms-playwright` (Playwright then picks it).

`check_chromium` runs `<path> --version` once (about 0.2 s) so that a missing or broken
browser stops the crawl at start with one line saying how to install one.

`LazyPlaywrightHandler` is scrapy-playwright's download handler, except that the Node
driver starts on the first request that needs the browser instead of when the engine
starts: a crawl that renders nothing pays nothing for it.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

__all__ = [
    "CONTEXT_KWARGS",
    "DEBIAN_CHROMIUM",
    "INSTALL_HINT",
    "BrowserUnavailable",
    "LazyPlaywrightHandler",
    "check_chromium",
    "configured_path",
    "is_launch_failure",
    "launch_options",
    "locate_chromium",
    "wait_for_content",
]

DEBIAN_CHROMIUM = "/usr/bin/chromium"
PATH_SETTING = "DOCSCRAWL_CHROMIUM_PATH"
INSTALL_HINT = ("install Debian's Chromium (apt-get install chromium), set "
                "DOCSCRAWL_CHROMIUM_PATH to a Chromium binary, or crawl with -a render=never")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-extensions",
               "--mute-audio", "--blink-settings=imagesEnabled=false"]
# The one browser context of a crawl: no downloads, no service workers.
CONTEXT_KWARGS: dict[str, Any] = {"accept_downloads": False, "service_workers": "block",
                                  "java_script_enabled": True}


class BrowserUnavailable(RuntimeError):
    """No usable Chromium; the message is one line that says how to get one."""


def configured_path(settings: Any = None) -> str | None:
    """The explicit Chromium path: the setting, else the environment variable."""
    value = settings.get(PATH_SETTING) if settings is not None else None
    return (value or os.environ.get(PATH_SETTING) or "").strip() or None


def playwright_chromium_installed() -> bool:
    """True when Playwright's own Chromium build was installed (`playwright install`)."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(
        Path.home() / ".cache" / "ms-playwright")
    return bool(glob.glob(os.path.join(root, "chromium*-*")))


def locate_chromium(configured: str | None) -> str | None:
    """Path of the Chromium to launch; None means Playwright's own browser.

    Raises BrowserUnavailable when nothing is found (see the module doc for the order).
    """
    if configured:
        return configured
    for candidate in (DEBIAN_CHROMIUM, shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    if playwright_chromium_installed():
        return None
    raise BrowserUnavailable(f"no Chromium found for rendering; {INSTALL_HINT}")


def check_chromium(path: str | None, *, timeout: float = 30) -> str:
    """Run `<path> --version`; return the version line or raise BrowserUnavailable."""
    if path is None:
        return "Playwright's Chromium"
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise BrowserUnavailable(f"Chromium not found at {path}; {INSTALL_HINT}")
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrowserUnavailable(f"Chromium at {path} does not start ({exc}); "
                                 f"{INSTALL_HINT}") from None
    version = done.stdout.strip().splitlines()[:1]
    if done.returncode != 0 or not version:
        raise BrowserUnavailable(f"Chromium at {path} does not start (exit status "
                                 f"{done.returncode}); {INSTALL_HINT}")
    return version[0]


def launch_options(path: str | None) -> dict[str, Any]:
    """Playwright launch options: headless, no sandbox flag needed as root, no GPU."""
    options: dict[str, Any] = {"headless": True, "args": list(LAUNCH_ARGS)}
    if path is not None:
        options["executable_path"] = path
    return options


def is_launch_failure(exc: BaseException) -> bool:
    """True when an exception says the browser (or Playwright's driver) did not start."""
    text = str(exc)
    return any(needle in text for needle in (
        "BrowserType.launch", "Executable doesn't exist", "Failed to launch",
        "Browser closed.\n==================== Browser output:",
    ))


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
                await self._launch()
                self._launched = True

    async def _download_request(self, request: Request, spider: Any = None) -> Response:
        await self._ensure_launched()
        return await super()._download_request(request, spider)
