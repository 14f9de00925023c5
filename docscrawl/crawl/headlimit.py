"""A bound on a response's head for Scrapy's HTTP/1.1 client.

`DOWNLOAD_MAXSIZE` bounds a body only: Twisted keeps every header line a server sends (each
up to 16 KiB), so a server answering with 100 MB of headers grows the crawl by as much. The
parser Scrapy gives each response (`_LenientHTTPClientParser`, a private name that
tests/test_private_apis.py watches) is replaced by one that counts the bytes of the status
line and headers and gives up past `DOCSCRAWL_MAX_HEADER_BYTES` (256 KiB by default, as
Chromium's own limit): the download fails with `HeadersTooLarge`, logged `skipped`
`too_large`. A rendered page's head is bounded by Chromium and by the guard proxy.
"""

from __future__ import annotations

from scrapy.core.downloader.handlers import http11
from twisted.web._newclient import HEADER, STATUS

__all__ = ["DEFAULT_MAX_HEADER_BYTES", "HeadersTooLarge", "install_head_limit"]

DEFAULT_MAX_HEADER_BYTES = 256 * 1024
_LENIENT = http11._LenientHTTPClientParser


class HeadersTooLarge(Exception):
    """A response head over the limit; the message names the limit."""


class _BoundedHeadParser(_LENIENT):
    """Scrapy's lenient parser that counts the head's bytes (the count is the only state it
    adds; Scrapy swaps the class of a parser Twisted made, so it lives in `__dict__`)."""

    max_head_bytes = DEFAULT_MAX_HEADER_BYTES

    def lineReceived(self, line: bytes) -> None:
        if self.state in (STATUS, HEADER):
            seen = self.__dict__.get("_head_bytes", 0) + len(line) + 2
            self.__dict__["_head_bytes"] = seen
            if seen > self.max_head_bytes:
                raise HeadersTooLarge(f"response headers over DOCSCRAWL_MAX_HEADER_BYTES "
                                      f"({self.max_head_bytes})")
        super().lineReceived(line)


def install_head_limit(max_bytes: int) -> None:
    """Bound every response head this process's Scrapy reads to `max_bytes`."""
    _BoundedHeadParser.max_head_bytes = max_bytes
    http11._LenientHTTPClientParser = _BoundedHeadParser  # type: ignore[misc]


def head_too_large(exc: BaseException | None) -> HeadersTooLarge | None:
    """The HeadersTooLarge inside a failed download's exception, if that was its cause."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc] if exc is not None else []
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, HeadersTooLarge):
            return current
        for reason in getattr(current, "reasons", None) or ():  # Twisted's ResponseFailed
            value = getattr(reason, "value", None)
            if isinstance(value, BaseException):
                pending.append(value)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
    return None
