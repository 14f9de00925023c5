"""Render sparse pages in Chromium: re-issue them with `meta["playwright"]`.

Every page is fetched plainly first. A 200 HTML page that `render_policy.sparse_reason`
finds sparse (or any page with `-a render=always`, or a `_hashroute` URL) is re-issued to
scrapy-playwright's download handler; `-a render=never` turns this off. The rendered
response replaces the plain one, so the spider and the pipelines see the rendered DOM,
and the crawl log gets a `rendered` event with the `reason`.

In the browser, images, fonts and media are not downloaded; navigations leaving the crawl
scope, subresources from outside the site's origin (unless an `allow` rule admits them)
and requests robots.txt disallows are aborted; `window.open` is disabled and pop-ups
closed; downloads are refused (`docscrawl.render.pageguard`, each rendered page's request
guard). Every request Chromium makes goes through the crawl's guard
proxy (`docscrawl.discovery.browserproxy`), which checks the address it connects to: a
page whose own request it refused is not kept (`RenderError`, then `skipped`
`private_address`).

Credentials (`http_user`/`http_pass`, `auth_header`) never ride on the Scrapy request that
Playwright turns into the navigation: Chromium would keep such headers across a redirect
to another origin, and its redirects never reach the guard. Instead the guard fetches each
request for the seed's own origin itself, credentials added, without following redirects
(`route.fetch(max_redirects=0)`), and hands the answer to the page: a redirect hop is then
a new request without them. A rendered page whose navigation ends outside the scope (a
script, a redirect in the browser) ends `skipped` `offsite_redirect` like a plain one, and
a rendered DOM over `DOWNLOAD_MAXSIZE` ends `skipped` `too_large`.

A render that times out or crashes is retried `DOCSCRAWL_RENDER_RETRIES` times (default
1), then the page fails with `render_error`. A page still sparse after rendering carries
a `sparse_after_render` warning (`render_warnings` in the request meta). The browser is
asked unconditionally: the conditional headers of the plain request (`If-None-Match`,
`If-Modified-Since`) are dropped, since a 304 would leave the browser with an empty page.

Without a usable browser (no Chromium, no Playwright, or a Chromium that does not start),
`render=always` stops before any request with one line; `render=auto` crawls on: one
warning at the start, and each page that needs rendering fails `browser_unavailable`
(the run is then incomplete). Playwright itself is imported only when a page is rendered.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any, Self
from urllib.parse import urlsplit

from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request, Response

from docscrawl.crawl.failures import NoBrowserError, RenderError
from docscrawl.crawl.parse import response_root
from docscrawl.discovery.browserproxy import REFUSED_HEADER
from docscrawl.discovery.hashroutes import browser_url, crawlable_url, route_of
from docscrawl.discovery.urls import strip_fragment
from docscrawl.extract.worker import SparseCheck
from docscrawl.middlewares.auth import site_credentials
from docscrawl.render.browser import (
    CONTEXT_KWARGS,
    INSTALL_HINT,
    BrowserUnavailable,
    check_chromium,
    configured_path,
    is_launch_failure,
    locate_chromium,
)
from docscrawl.render.pageguard import PageGuard
from docscrawl.render.policy import main_text_chars
from docscrawl.vocab import Event, FailReason, Meta

logger = logging.getLogger(__name__)

TRACK = Meta.TRACK  # the spider's page-request marker
CONTEXT_NAME = "docscrawl"
CONDITIONAL_HEADERS = ("If-None-Match", "If-Modified-Since")
LEARN_PAGES = 20  # complete pages whose scripts are learned as inert (a bounded cost)
MAX_INERT_SCRIPTS = 256
DEFER_PRIORITY = 100  # a deferred page waits behind the pages queued with it
MAX_DEFERRED = 200


class RenderMiddleware:
    """Downloader middleware: plain fetch first, Chromium only for sparse pages."""

    def __init__(self, crawler: Crawler, *, mode: str, min_text_chars: int, settle_ms: int,
                 wait_ms: int, retries: int, browser_problem: str | None = None) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.mode = mode
        self.min_text_chars = min_text_chars
        self.settle_ms = settle_ms
        self.wait_ms = wait_ms
        self.retries = retries
        # Why no browser can render (None: one can): pages needing it fail with this.
        self.browser_problem = browser_problem
        self._credentials: dict[str, str] | None = None
        self._page_guard: PageGuard | None = None
        # Scripts of the site's pages complete as fetched (`policy.sparse_reason` rule 9),
        # learned from the first LEARN_PAGES such pages.
        self.inert_scripts: set[str] = set()
        self._learned = 0
        self._deferred = 0  # little-text pages fetched again later (`_defer`)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        config = getattr(crawler.spider, "config", None)
        mode = getattr(config, "render", "never")
        problem = _browser_problem(settings, mode) if mode != "never" else None
        return cls(
            crawler, mode=mode, browser_problem=problem,
            min_text_chars=settings.getint("DOCSCRAWL_RENDER_MIN_TEXT_CHARS", 200),
            settle_ms=settings.getint("DOCSCRAWL_RENDER_SETTLE_MS", 100),
            wait_ms=settings.getint("DOCSCRAWL_RENDER_WAIT_MS", 10_000),
            retries=settings.getint("DOCSCRAWL_RENDER_RETRIES", 1),
        )

    # -- the spider's view ------------------------------------------------------------

    @property
    def _spider(self) -> Any:
        return self.crawler.spider

    @property
    def credentials(self) -> dict[str, str]:
        """The crawl's credential headers, for the seed's origin only."""
        if self._credentials is None:
            self._credentials = site_credentials(getattr(self._spider, "config", None))
        return self._credentials

    @property
    def page_guard(self) -> PageGuard:
        """The guard of every rendered page (made once the spider's session exists)."""
        if self._page_guard is None:
            spider = self._spider
            self._page_guard = PageGuard(
                self.stats, spider.session.frontier, site=spider.config.site,
                credentials=self.credentials,
                timeout_ms=float(self.crawler.settings.getint(
                    "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", 20_000)))
        return self._page_guard

    @property
    def _main_selector(self) -> str | None:
        profile = getattr(self._spider.config, "profile", None) or {}
        selectors = profile.get("selectors") if isinstance(profile, dict) else None
        main = selectors.get("main") if isinstance(selectors, dict) else None
        return main if isinstance(main, str) and main.strip() else None

    # -- downloader middleware API -----------------------------------------------------------

    def process_request(self, request: Request, spider: Any = None) -> None:
        """Attach the per-page browser guard (kept out of meta until download time); a
        browser request carries no credential header (the guard adds them)."""
        if request.meta.get("playwright"):
            for name in self.credentials:
                request.headers.pop(name, None)
            if TRACK in request.meta:
                request.meta["playwright_page_init_callback"] = self.page_guard.prepare

    def process_response(self, request: Request, response: Response,
                         spider: Any = None) -> Request | Response:
        if TRACK not in request.meta or self.mode == "never":
            return response
        if "playwright" in response.flags:
            return self._rendered(request, response)
        if request.meta.get("playwright"):
            return response
        reason = self._reason(request, response)
        if reason is None:
            return response
        return self.verdict(request, reason, frozenset()) or response

    def process_exception(self, request: Request, exception: BaseException,
                          spider: Any = None) -> Request | None:
        if not request.meta.get("playwright") or TRACK not in request.meta:
            return None
        detail = f"{type(exception).__name__}: {exception}".splitlines()[0][:300]
        if is_launch_failure(exception):
            self._stop_for_browser(detail)
            raise NoBrowserError(f"browser did not start: {detail}")
        attempt = request.meta.get("render_attempt", 1)
        if attempt <= self.retries:
            self.stats.inc_value("docscrawl/render/retried")
            logger.info("docscrawl: render of %s failed (%s); retrying", request.url, detail)
            return request.replace(meta={**request.meta, "render_attempt": attempt + 1},
                                   dont_filter=True)
        self.stats.inc_value("docscrawl/render/failed")
        raise RenderError(f"{detail} (after {attempt} attempts)")

    # -- deciding and re-issuing ----------------------------------------------------------------

    def _reason(self, request: Request, response: Response) -> str | None:
        if response.status != 200 or not isinstance(response, HtmlResponse):
            return None
        if self.mode == "always":
            return "render_always"
        if route_of(request.url) is not None:
            return "hash_route"
        pool = getattr(self._spider, "pool", None)
        if pool is not None and pool.ready():  # a worker parses it: it checks it there
            request.meta[Meta.SPARSE_IN_WORKER] = True
            return None
        try:
            root = response_root(response)
        except Exception:  # unparsable: the spider reports it
            return None
        reason, complete = self.sparse_check().judge(root, body_bytes=len(response.body))
        self._learn(complete)
        return reason

    def _learn(self, names: frozenset[str]) -> None:
        """Scripts a complete page loads join the inert ones (LEARN_PAGES pages at most)."""
        if (names and self._learned < LEARN_PAGES
                and len(self.inert_scripts | names) <= MAX_INERT_SCRIPTS):
            self.inert_scripts |= names
            self._learned += 1

    # -- the check done in an extraction worker (`crawl.pool`, `-a workers=N`) ---------------

    def sparse_check(self) -> SparseCheck:
        """What a worker needs to judge a page as `_reason` does."""
        return SparseCheck(main_selector=self._main_selector,
                           min_text_chars=self.min_text_chars,
                           inert_scripts=frozenset(self.inert_scripts),
                           learn=self._learned < LEARN_PAGES)

    def verdict(self, request: Request, reason: str | None,
                complete: frozenset[str]) -> Request | None:
        """A worker's verdict on a plain page: None to keep it as fetched, else the request
        that fetches it again (deferred, or in the browser); raises NoBrowserError."""
        if reason is None:
            self._learn(complete)
            return None
        if self._defer(request, reason):
            return request.replace(dont_filter=True, priority=request.priority - DEFER_PRIORITY,
                                   meta={**request.meta, "render_deferred": True})
        if self.browser_problem is not None:
            self.stats.inc_value("docscrawl/render/browser_unavailable")
            raise NoBrowserError(f"needs rendering ({reason}); {self.browser_problem}")
        return self._render_request(request, reason)

    def _defer(self, request: Request, reason: str) -> bool:
        """Fetch a `little_text` page again later, once, instead of rendering it now, while
        the site's inert scripts are still being learned from its complete pages (at least
        one seen): a short page found in the first wave (erl_docgen's User's Guide title
        pages, linked from the home page beside the chapters) is judged when the chapters
        have taught the scripts they share. A site with no complete page defers nothing."""
        if (reason != "little_text" or request.meta.get("render_deferred")
                or not 0 < self._learned < LEARN_PAGES or self._deferred >= MAX_DEFERRED):
            return False
        self._deferred += 1
        self.stats.inc_value("docscrawl/render/deferred")
        return True

    def _render_request(self, request: Request, reason: str) -> Request:
        from scrapy_playwright.page import PageMethod

        from docscrawl.render.playwright_handler import wait_for_content

        self.stats.inc_value(f"docscrawl/render/reason/{reason}")
        method = PageMethod(wait_for_content, self._main_selector, self.settle_ms,
                            self.wait_ms, self.min_text_chars)
        meta = {
            **request.meta,
            "playwright": True,
            "playwright_context": CONTEXT_NAME,
            "playwright_context_kwargs": dict(CONTEXT_KWARGS),
            "playwright_page_methods": [method],
            "render_reason": reason,
            "render_url": request.url,
            "render_plain_latency": request.meta.get("download_latency"),
            "render_attempt": 1,
        }
        headers = request.headers.copy()
        for name in (*CONDITIONAL_HEADERS, *self.credentials):
            headers.pop(name, None)
        return request.replace(url=browser_url(request.url), meta=meta, headers=headers,
                               dont_filter=True)

    def _rendered(self, request: Request, response: Response) -> Response:
        if refused := response.headers.get(REFUSED_HEADER):  # by the browser's proxy
            raise RenderError(f"browser refused a private address: {refused.decode()}")
        original = request.meta.get("render_url", request.url)
        final = response.url
        if strip_fragment(final) == strip_fragment(browser_url(original)):
            final = original
        else:
            final = crawlable_url(final) or strip_fragment(final)
            if self._leaves_scope(final):
                return _as_redirect(response, original, final)
        limit = request.meta.get("download_maxsize",
                                 self.crawler.settings.getint("DOWNLOAD_MAXSIZE"))
        if limit and len(response.body) > limit:
            self.stats.inc_value("docscrawl/render/too_large")
            raise IgnoreRequest(f"rendered page of {len(response.body)} bytes is over "
                                f"DOWNLOAD_MAXSIZE ({limit})")
        response = response.replace(url=final)
        track = request.meta[TRACK]
        reason = request.meta.get("render_reason")
        latency = request.meta.get("download_latency")
        self._spider.session.log.record(
            track.url, Event.RENDERED, reason=reason, status=response.status,
            fetch_mode="browser", elapsed_ms=latency * 1000 if latency is not None else None,
            size=len(response.body), attempts=request.meta.get("render_attempt", 1),
        )
        self.stats.inc_value("docscrawl/render/rendered")
        if response.status == 200 and isinstance(response, HtmlResponse):
            chars = main_text_chars(response_root(response), self._main_selector)
            if chars < self.min_text_chars:
                request.meta["render_warnings"] = [{
                    "code": "sparse_after_render",
                    "detail": f"{chars} characters of main-content text after rendering "
                              f"(reason: {reason})",
                }]
        return response

    def _leaves_scope(self, url: str) -> bool:
        """True when a rendered page that ended at `url` must not be kept as the page: off
        the scope, or at an address the guard refuses (the spider then says which)."""
        frontier = self._spider.session.frontier
        if not url.startswith(("http://", "https://")):
            return True
        return (not frontier.scope.decide(url).allowed
                or frontier.guard.check(urlsplit(url).hostname or "") is not None)

    def _stop_for_browser(self, detail: str) -> None:
        """Chromium did not start. `render=always` stops the crawl; `render=auto` goes on,
        failing each page that needs the browser."""
        if self.browser_problem is not None:
            return
        self.browser_problem = f"Chromium did not start ({detail}); {INSTALL_HINT}"
        if self.mode != "always":
            logger.warning("docscrawl: %s; pages that need rendering fail "
                           "browser_unavailable", self.browser_problem)
            return
        logger.error("docscrawl: error: browser: %s", self.browser_problem)
        engine = self.crawler.engine
        if engine is not None:
            self._closing = asyncio.ensure_future(
                engine.close_spider_async(reason=FailReason.BROWSER_UNAVAILABLE))


def _browser_problem(settings: Any, mode: str) -> str | None:
    """Why no browser can render, checked once at start (None: one can). With
    `render=always`, or a `DOCSCRAWL_CHROMIUM_PATH` that names no working browser, this
    stops the crawl before any request, with one line."""
    configured = configured_path(settings)
    try:
        path = locate_chromium(configured)
        version = check_chromium(path)
    except BrowserUnavailable as exc:
        if mode == "always" or configured:
            print(f"docscrawl: error: browser: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        logger.warning("docscrawl: no browser for rendering: %s. The crawl goes on; pages "
                       "that need rendering fail browser_unavailable", exc)
        return str(exc)
    logger.info("docscrawl: rendering sparse pages with %s (%s)", version,
                path or "Playwright's browser")
    return None


def _as_redirect(response: Response, original: str, final: str) -> Response:
    """A rendered page that ended at `final`, seen by the spider as the redirect it was:
    the target is checked like any redirect, and nothing of its page is kept."""
    return Response(url=original, status=302, headers={"Location": final},
                    flags=[*response.flags], request=response.request)
