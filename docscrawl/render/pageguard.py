"""The guard of a page rendered in Chromium: what the page may load, and how.

Before each navigation (`prepare`, scrapy-playwright's page init callback) the page gets
its guard, a route on every request it makes: images, fonts and media are aborted;
navigations leaving the crawl scope, subresources from outside the site's origin (unless
an `allow` rule admits them), addresses the guard refuses and requests robots.txt
disallows are aborted (an aborted navigation is answered 204: the page stays where it
is); requests for the seed's origin are fetched here with the credentials, redirects not
followed (`route.fetch(max_redirects=0)`), so a redirect hop is a new request without
them. `window.open` is disabled and pop-ups closed. See `docscrawl.render.middleware`.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from docscrawl.discovery.frontier import origin_of
from docscrawl.discovery.urls import strip_fragment

if TYPE_CHECKING:
    from playwright.async_api import Page, Route
    from playwright.async_api import Request as BrowserRequest
    from scrapy.http import Request

    from docscrawl.discovery.frontier import Frontier

BLOCKED_RESOURCES = frozenset({"image", "font", "media"})
DISABLE_POPUPS_JS = "window.open = () => null;"
GUARD_PATTERN = "**/*"  # the per-render request guard's route


class PageGuard:
    """Each rendered page's request guard (see module docstring)."""

    def __init__(self, stats: Any, frontier: Frontier, *, site: str,
                 credentials: dict[str, str], timeout_ms: float) -> None:
        self.stats = stats
        self.frontier = frontier  # scope, address guard and robots.txt of the crawl
        self.site = site  # the seed: its origin's requests get the credentials
        self.credentials = credentials
        self.timeout_ms = timeout_ms  # PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT
        self._prepared: weakref.WeakSet[Page] = weakref.WeakSet()  # pages with init scripts

    async def prepare(self, page: Page, request: Request) -> None:
        """Before navigation: abort heavy and out-of-scope requests, no pop-ups; requests
        for the seed's origin fetched with the credentials, redirects not followed.

        A pooled page comes back here for each render: its init scripts and pop-up
        handler stay (added once), the last render's guard is replaced by this one's.
        scrapy-playwright only logs an exception raised here and navigates anyway: a page
        that could not get its guard is closed instead, so the render fails."""
        try:
            await self._guard_page(page, request)
        except BaseException:
            with contextlib.suppress(Exception):
                await page.close()
            raise

    async def _guard_page(self, page: Page, request: Request) -> None:
        from docscrawl.render.playwright_handler import TRACK_REQUESTS_JS

        if page not in self._prepared:
            await page.add_init_script(DISABLE_POPUPS_JS)
            await page.add_init_script(TRACK_REQUESTS_JS)
            page.on("popup", _close_popup)
            self._prepared.add(page)
        else:
            await page.unroute(GUARD_PATTERN)
        origin = origin_of(request.url)
        credentials = self.credentials
        site_origin = origin_of(self.site) if credentials else None
        user_agent = (request.headers.get("User-Agent") or b"").decode("latin-1")
        timeout = self.timeout_ms

        async def guard(route: Route, browser_request: BrowserRequest) -> None:
            if browser_request.resource_type in BLOCKED_RESOURCES:
                self.stats.inc_value("docscrawl/render/aborted/resource")
                await route.abort()
            elif not self._browser_request_allowed(browser_request, page, origin):
                self.stats.inc_value("docscrawl/render/aborted/out_of_scope")
                if _is_page_navigation(browser_request, page):
                    # an aborted navigation shows Chromium's error page; a 204 answered
                    # in the browser leaves the page where it is (HTML: "no content")
                    await route.fulfill(status=204, body=b"")
                else:
                    await route.abort()
            elif site_origin is not None and origin_of(browser_request.url) == site_origin:
                await _fetch_with_credentials(route, browser_request, credentials,
                                              user_agent, timeout)
            else:
                await route.fallback()

        await page.route(GUARD_PATTERN, guard)

    def _browser_request_allowed(self, browser_request: BrowserRequest, page: Page,
                                 origin: str) -> bool:
        url = browser_request.url
        if not url.startswith(("http://", "https://")):
            return True
        frontier = self.frontier
        if frontier.guard.check(urlsplit(url).hostname or ""):
            return False
        if not frontier.robots_allows(strip_fragment(url)):
            return False
        in_scope = frontier.scope.decide(strip_fragment(url)).allowed
        if _is_page_navigation(browser_request, page):
            return in_scope
        return in_scope or origin_of(url) == origin


async def _fetch_with_credentials(route: Route, browser_request: BrowserRequest,
                                  credentials: dict[str, str], user_agent: str,
                                  timeout_ms: float) -> None:
    """Fetch one request for the seed's origin with the credentials and hand its answer to
    the page as it came: a 3xx stays a 3xx, whose next hop Chromium makes without them."""
    from playwright.async_api import Error as PlaywrightError

    headers = {**browser_request.headers, **credentials}
    if user_agent:
        headers["user-agent"] = user_agent
    try:
        answer = await route.fetch(headers=headers, max_redirects=0, timeout=timeout_ms)
        await route.fulfill(response=answer)
    except PlaywrightError:
        with contextlib.suppress(PlaywrightError):
            await route.abort()


def _is_page_navigation(browser_request: BrowserRequest, page: Page) -> bool:
    return browser_request.is_navigation_request() and browser_request.frame == page.main_frame


async def _close_popup(popup: Page) -> None:
    await popup.close()
