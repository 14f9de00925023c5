"""Download failures turned into the crawl log's `reason` vocabulary."""

from __future__ import annotations

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from twisted.internet import error as twisted_error
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

from docscrawl.crawl.headlimit import head_too_large

BROWSER_UNAVAILABLE = "browser_unavailable"


class RenderError(Exception):
    """A render that timed out or crashed on every attempt (crawl log: `render_error`)."""


class NoBrowserError(Exception):
    """The page needed rendering and no browser could run (`browser_unavailable`)."""


FAILURE_REASONS: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((CannotResolveHostError, twisted_error.DNSLookupError), "dns"),
    ((DownloadTimeoutError, twisted_error.TimeoutError, twisted_error.TCPTimedOutError),
     "timeout"),
    ((DownloadConnectionRefusedError, twisted_error.ConnectionRefusedError,
      twisted_error.ConnectError, twisted_error.ConnectionLost, twisted_error.ConnectionDone,
      ResponseNeverReceived, ResponseFailed, ResponseDataLossError, DownloadFailedError),
     "connection"),
    ((IgnoreRequest,), "ignored"),
    ((RenderError,), "render_error"),
    ((NoBrowserError,), BROWSER_UNAVAILABLE),
)


def classify_failure(failure: Failure) -> tuple[str, str]:
    """(reason, one-line detail) for a failed download."""
    exc = failure.value
    detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    if isinstance(exc, DownloadCancelledError) and ("max size" in str(exc) or not str(exc)):
        # Scrapy cancels without a message when a body outgrows DOWNLOAD_MAXSIZE mid-stream.
        return "too_large", detail
    if isinstance(exc, IgnoreRequest) and "DOWNLOAD_MAXSIZE" in str(exc):
        return "too_large", detail  # decompressed body (a gzip bomb) over the limit
    if (too_large := head_too_large(exc)) is not None:
        return "too_large", str(too_large)
    for types, reason in FAILURE_REASONS:
        if isinstance(exc, types):
            return reason, str(exc) if isinstance(exc, RenderError | NoBrowserError) else detail
    return "error", detail
