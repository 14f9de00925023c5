"""Retries with exponential backoff, honouring `Retry-After` on 429 and 503.

Scrapy's RetryMiddleware retries at once; a struggling server deserves a pause. The pause
for retry n is `DOCSCRAWL_RETRY_BACKOFF * 2**n` seconds, or the server's `Retry-After`
(seconds or an HTTP date) when it sends one. A `Retry-After` longer than
`DOCSCRAWL_RETRY_AFTER_MAX` is not waited for: the response stands and the page fails
with its status (`http_429`).

Nothing waits here: the retry leaves at once with a `NOT_BEFORE` time and waits in the
scheduler (`docscrawl.crawl.scheduler`), so the download slot is free meanwhile. A server that
asked for a pause gets it from every retry to its origin until then, also from one whose
connection failed before an answer came.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Self

from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.http import Request, Response
from scrapy.settings import BaseSettings

from docscrawl.crawl.scheduler import NOT_BEFORE
from docscrawl.discovery.frontier import origin_of

RETRY_AFTER_STATUSES = frozenset({429, 503})


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked for by a `Retry-After` header (delta-seconds or HTTP-date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def backoff_delay(retries_so_far: int, *, base: float, cap: float) -> float:
    """Exponential backoff: base, 2*base, 4*base... never above cap."""
    return min(cap, base * (2 ** retries_so_far))


class BackoffRetryMiddleware(RetryMiddleware):
    """RetryMiddleware that waits before each retry (see module docstring)."""

    def __init__(self, settings: BaseSettings, *, backoff: float,
                 retry_after_max: float) -> None:
        super().__init__(settings)
        self.backoff = backoff
        self.retry_after_max = retry_after_max
        self._paused_until: dict[str, float] = {}  # origin -> time.time() it asked for

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls(
            crawler.settings,
            backoff=crawler.settings.getfloat("DOCSCRAWL_RETRY_BACKOFF"),
            retry_after_max=crawler.settings.getfloat("DOCSCRAWL_RETRY_AFTER_MAX"),
        )
        middleware.crawler = crawler
        return middleware

    async def process_response(  # type: ignore[override]
        self, request: Request, response: Response, spider: object = None,
    ) -> Request | Response:
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        delay = self._delay(request, response)
        if delay is None:
            return response
        retry = self._retry(request, f"HTTP {response.status}")
        if retry is None:
            return response
        return self._later(retry, delay)

    async def process_exception(  # type: ignore[override]
        self, request: Request, exception: Exception, spider: object = None,
    ) -> Request | None:
        if not isinstance(exception, self.exceptions_to_retry) or request.meta.get(
            "dont_retry", False
        ):
            return None
        retry = self._retry(request, exception)
        return None if retry is None else self._later(retry, self._backoff(request))

    def _later(self, retry: Request, delay: float) -> Request:
        """`retry`, to leave `delay` seconds from now, and not before its origin's pause."""
        at = max(time.time() + delay, self._paused_until.get(origin_of(retry.url), 0.0))
        retry.meta[NOT_BEFORE] = at
        return retry

    def _backoff(self, request: Request) -> float:
        return backoff_delay(request.meta.get("retry_times", 0), base=self.backoff,
                             cap=self.retry_after_max)

    def _delay(self, request: Request, response: Response) -> float | None:
        """Seconds to wait before retrying, or None when the server asks for too long."""
        if response.status in RETRY_AFTER_STATUSES:
            header = response.headers.get("Retry-After")
            asked = retry_after_seconds(header.decode("latin-1") if header else None)
            if asked is not None:
                if asked > self.retry_after_max:
                    return None
                origin = origin_of(request.url)
                self._paused_until[origin] = max(self._paused_until.get(origin, 0.0),
                                                 time.time() + asked)
                return asked
        return self._backoff(request)
