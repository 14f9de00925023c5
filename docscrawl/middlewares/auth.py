"""Credentials go to the site's own origin only, never to redirects or other hosts.

`-a http_user=... -a http_pass=...` (HTTP Basic) and `-a auth_header="Name: value"` are
added to requests whose scheme, host and port equal the seed's; any such header on a
request for another origin is removed. Scrapy's HttpAuthMiddleware, which also sends
credentials to subdomains, is disabled.
"""

from __future__ import annotations

import base64
from typing import Self

from scrapy.crawler import Crawler
from scrapy.http import Request

from docscrawl.discovery.frontier import origin_of


class SiteCredentialsMiddleware:
    """Adds the user's credentials to same-origin requests only."""

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
            headers: dict[str, str] = {}
            if config is not None:
                self._origin = origin_of(config.site)
                if config.http_user is not None:
                    pair = f"{config.http_user}:{config.http_pass or ''}".encode()
                    headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
                if config.auth_header:
                    headers[config.auth_header[0]] = config.auth_header[1]
            self._headers = headers
        return self._headers

    def process_request(self, request: Request, spider: object = None) -> None:
        headers = self._setup()
        if not headers:
            return
        if origin_of(request.url) == self._origin:
            for name, value in headers.items():
                request.headers[name] = value
        else:
            for name in headers:
                request.headers.pop(name, None)
