"""Credentials go to the site's own origin only, never to redirects or other hosts, and
never to disk.

`http_user` with `http_pass` (HTTP Basic) and `auth_header` ("Name: value"; each secret
also from a file or the environment, `docscrawl.config`) are added to requests whose
scheme, host and port equal the seed's; any such header on a request for another origin
is removed. Scrapy's HttpAuthMiddleware, which also sends credentials to subdomains, is
disabled.

The headers are added at the last step before the download (priority 950, after every
other downloader middleware) and taken off the request again as soon as it is answered
or fails (`process_response` and `process_exception` run here first). A retry, a render
re-issue or any other copy of the request therefore leaves without them: requests go
back to the scheduler, whose disk queue (`JOBDIR`, or a temporary one) pickles them.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Self

from scrapy.crawler import Crawler
from scrapy.http import Request, Response

from docscrawl.discovery.frontier import origin_of

if TYPE_CHECKING:
    from docscrawl.config import CrawlConfig


class SiteCredentialsMiddleware:
    """Adds the user's credentials to same-origin requests only, for their download only."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._headers: dict[str, str] | None = None
        self._origin: str | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _setup(self) -> dict[str, str]:
        if self._headers is None:
            config = getattr(self.crawler.spider, "config", None)
            self._headers = site_credentials(config)
            self._origin = origin_of(config.site) if config is not None else None
        return self._headers

    def process_request(self, request: Request, spider: object = None) -> None:
        headers = self._setup()
        if not headers:
            return
        if origin_of(request.url) == self._origin and not request.meta.get("playwright"):
            for name, value in headers.items():
                request.headers[name] = value
        else:
            self._take_off(request)

    def process_response(self, request: Request, response: Response,
                         spider: object = None) -> Response:
        self._take_off(request)
        return response

    def process_exception(self, request: Request, exception: BaseException,
                          spider: object = None) -> None:
        self._take_off(request)

    def _take_off(self, request: Request) -> None:
        for name in self._setup():
            request.headers.pop(name, None)


def site_credentials(config: CrawlConfig | None) -> dict[str, str]:
    """The headers that carry the crawl's credentials (none without a config). A rendered
    page gets them from the browser guard (`docscrawl.render.middleware`), request by
    request, never through the Scrapy request that Playwright would carry across redirects."""
    headers: dict[str, str] = {}
    if config is None:
        return headers
    if config.http_user is not None:
        pair = f"{config.http_user}:{config.http_pass or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    if config.auth_header:
        headers[config.auth_header[0]] = config.auth_header[1]
    return headers
