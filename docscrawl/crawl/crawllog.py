"""The crawl log: one JSON line per event about one URL, and the counts for run.json.

It is the one place that records events. It keeps the invariant of the contract: a URL
logged as `discovered` ends in exactly one terminal event (`extracted`, `duplicate`,
`unchanged`, `skipped`, `failed`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, MutableSet
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from docscrawl.discovery.pagetrack import DiscoveryRecord
from docscrawl.discovery.urls import redact_userinfo
from docscrawl.jsonl import JsonlWriter
from docscrawl.redirects.base import Outcome, Waiter, source_outcome
from docscrawl.redirects.local import RedirectWaits
from docscrawl.vocab import TERMINAL, Event, FailReason

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

RECENT_OUTCOMES = 4096  # terminal outcomes kept for redirects to URLs that already ended


class EventExtras(TypedDict, total=False):
    """Fields some events carry besides the contract's (additions: v1 readers ignore them);
    `CrawlLog.record` takes no other."""

    page_id: str  # extracted, unchanged: the page record written
    canonical_url: str  # extracted, unchanged
    chunks: int  # extracted: how many chunks were written
    parsed: bool  # unchanged: parsed before its content hash was found unchanged
    param_rule: str  # skipped: the fragment-parameter rule behind the verdict
    response_url: str  # fetched: the URL that answered
    redirect_to: str  # a redirect's source that ended with its target's outcome
    attempts: int  # rendered: browser attempts it took


class CrawlEvent(EventExtras):
    """One crawl_log.jsonl line (the contract's fields, always present, then the extras
    of its kind of event)."""

    ts: str
    url: str
    event: str  # vocab.Event
    reason: str | None
    rule: str | None
    discovery: DiscoveryRecord | None
    status: int | None
    redirect_chain: list[str]
    fetch_mode: str | None  # http, browser
    parser: str | None
    duplicate_of: str | None
    elapsed_ms: float | None
    bytes: int | None


def utc_now() -> str:
    """ISO 8601 UTC timestamp with milliseconds and a `Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class CrawlLog:
    """Writes crawl_log.jsonl and counts events, skip reasons and failure reasons."""

    def __init__(self, writer: JsonlWriter, *, stats: StatsCollector | None = None,
                 open_urls: MutableSet[str] | None = None,
                 closed: MutableSet[str] | None = None) -> None:
        """`open_urls`, `closed`: where to keep the URLs discovered without and with their
        terminal event (the crawl's ledger, on disk, since a sitemap can open every URL of
        the site at once; sets in memory by default)."""
        self._writer = writer
        self._stats = stats
        self._open: MutableSet[str] = open_urls if open_urls is not None else set()
        self._closed: MutableSet[str] = closed if closed is not None else set()
        self.events: Counter[str] = Counter()
        self.skip_reasons: Counter[str] = Counter()
        self.failure_reasons: Counter[str] = Counter()
        self.skip_examples: dict[str, tuple[str, str | None]] = {}
        # Called with each URL whose story ends: the frontier lets its track leave memory,
        # a distributed worker acks its task.
        self.terminal_hooks: list[Callable[[str], None]] = []
        # Called with each terminal outcome (a distributed worker publishes redirect targets').
        self.outcome_hooks: list[Callable[[Outcome], None]] = []
        self.resumed = False  # JOBDIR resume: a late second response is expected, not a bug
        self._waits = RedirectWaits()
        self._recent: dict[str, Outcome] = {}

    def restore(self, *, open_urls: Iterable[str], closed: Iterable[str],
                events: Counter[str], skip_reasons: Counter[str],
                failure_reasons: Counter[str],
                skip_examples: dict[str, tuple[str, str | None]]) -> None:
        """Resume (JOBDIR): take back the open and ended URLs and the counts of the
        interrupted run, as read from its crawl_log.jsonl."""
        self.resumed = True
        self._open |= set(open_urls)
        self._closed |= set(closed)
        self.events.update(events)
        self.skip_reasons.update(skip_reasons)
        self.failure_reasons.update(failure_reasons)
        for reason, example in skip_examples.items():
            self.skip_examples.setdefault(reason, example)

    def is_closed(self, url: str) -> bool:
        """True when `url` already has its terminal event."""
        return url in self._closed

    @property
    def open_urls(self) -> frozenset[str]:
        """Discovered URLs that have no terminal event yet."""
        return frozenset(self._open)

    def is_open(self, url: str) -> bool:
        """True when `url` was discovered and has no terminal event yet."""
        return url in self._open

    def hand_off(self, url: str) -> None:
        """Another worker may end this URL (distributed mode): no longer open here."""
        self._open.discard(url)

    def passed_on(self, url: str) -> None:
        """Another worker ends this URL (a redirect source waiting in Redis): no longer
        open here, and its work here is over (the terminal hooks run)."""
        self._open.discard(url)
        self._ended(url)

    def outcome_of(self, url: str) -> Outcome | None:
        """The outcome of `url` when it ended recently, here."""
        return self._recent.get(url)

    def adopt(self, url: str) -> None:
        """This worker took over a URL another worker discovered (distributed mode)."""
        if url not in self._closed:
            self._open.add(url)

    def settle(self, url: str) -> None:
        """End an open URL with the event already written for it (an inventory crawl's
        `fetched`): no line is added, and no later terminal event is accepted."""
        if url in self._open:
            self._open.discard(url)
            self._closed.add(url)
            self._release(url, Outcome(url, "fetched", page=url))
            self._ended(url)

    def redirected(self, source: str, target: str, *, reason: str, status: int | None,
                   chain: Iterable[str], page: str | None = None) -> None:
        """`source` redirects to `target` (the URL whose page the redirect leads to): it
        ends with `target`'s outcome (`docscrawl.redirects`), now when `target` has
        ended, else when it does. `page`: the canonical URL of `target`'s page, when the
        caller knows it was written."""
        waiter = Waiter(source, reason, status, tuple(chain))
        if target in self._open:
            circle = self._waits.loop(source, target)
            if circle is None:
                self._waits.wait(target, waiter)
            else:
                self.record(source, Event.FAILED, reason=FailReason.REDIRECT_LOOP,
                            rule=f"{len(circle)} URLs redirect in a circle", status=status,
                            redirect_chain=circle)
            return
        outcome = self._recent.get(target)
        if outcome is None:
            outcome = (Outcome(target, "extracted", page=page) if page else Outcome(
                target, "failed", "redirect_target_failed",
                "the redirect target ended earlier without a page"))
        event, fields = source_outcome(waiter, outcome)
        self.record(source, event, **fields)

    def discovered(self, url: str, discovery: DiscoveryRecord) -> None:
        """Log the first discovery of `url`."""
        self._open.add(url)
        self.record(url, Event.DISCOVERED, discovery=discovery)

    def record(
        self,
        url: str,
        event: str,
        *,
        reason: str | None = None,
        rule: str | None = None,
        discovery: DiscoveryRecord | None = None,
        status: int | None = None,
        redirect_chain: Iterable[str] = (),
        fetch_mode: str | None = None,
        parser: str | None = None,
        duplicate_of: str | None = None,
        elapsed_ms: float | None = None,
        size: int | None = None,
        **extra: Unpack[EventExtras],
    ) -> bool:
        """Write one event. Returns False (and writes nothing) for a second terminal event."""
        if event in TERMINAL:
            if url in self._closed:
                # after a resume, a page the interrupted run ended may answer once more
                log = logger.debug if self.resumed else logger.error
                log("docscrawl: second terminal event %s for %s ignored", event, url)
                self._ended(url)  # the work is over all the same: let it be acked
                return False
            if url in self._open:
                self._open.discard(url)
                self._closed.add(url)
        line: CrawlEvent = {
            "ts": utc_now(),
            "url": url,
            "event": event,
            "reason": reason,
            "rule": rule,
            "discovery": discovery,
            "status": status,
            "redirect_chain": list(redirect_chain),
            "fetch_mode": fetch_mode,
            "parser": parser,
            "duplicate_of": duplicate_of,
            "elapsed_ms": round(elapsed_ms, 1) if elapsed_ms is not None else None,
            "bytes": size,
            **extra,
        }
        self._writer.write(_redacted(line))
        self._count(event, reason, url, rule)
        if event in TERMINAL:  # outcome first: a worker publishes it before its task's ack
            self._release(url, Outcome.of_line(line))
            self._ended(url)
        return True

    def _release(self, url: str, outcome: Outcome) -> None:
        """Remember a terminal outcome; end the redirect sources that waited for it."""
        self._waits.forget(url)
        recent = self._recent
        if len(recent) >= RECENT_OUTCOMES:
            del recent[next(iter(recent))]
        recent[url] = outcome
        for hook in self.outcome_hooks:
            hook(outcome)
        for waiter in self._waits.release(url):
            if waiter.source not in self._closed:
                event, fields = source_outcome(waiter, outcome)
                self.record(waiter.source, event, **fields)

    def _ended(self, url: str) -> None:
        for hook in self.terminal_hooks:
            hook(url)

    def close_open(self, reason: str, rule: str) -> int:
        """End every still-open URL with a `failed` event; returns how many."""
        pending = sorted(self._open)
        for url in pending:
            if url in self._open:  # not ended meanwhile by the redirect it waited for
                self.record(url, Event.FAILED, reason=reason, rule=rule)
        return len(pending)

    def summary(self) -> dict[str, Any]:
        """Counts for run.json."""
        return {
            "events": dict(sorted(self.events.items())),
            "skip_reasons": dict(sorted(self.skip_reasons.items())),
            "failure_reasons": dict(sorted(self.failure_reasons.items())),
            "discovered": self.events.get("discovered", 0),
            "open_at_end": len(self._open),
        }

    def close(self) -> None:
        """Flush and close the underlying file."""
        self._writer.close()

    def _count(self, event: str, reason: str | None, url: str, rule: str | None) -> None:
        self.events[event] += 1
        if self._stats is not None:
            self._stats.inc_value(f"docscrawl/events/{event}")
        if event == "skipped" and reason:
            self.skip_reasons[reason] += 1
            self.skip_examples.setdefault(reason, (url, rule))
            if self._stats is not None:
                self._stats.inc_value(f"docscrawl/skipped/{reason}")
        elif event == "failed" and reason:
            self.failure_reasons[reason] += 1
            if self._stats is not None:
                self._stats.inc_value(f"docscrawl/failed/{reason}")


def _redacted(value: Any) -> Any:
    """A crawl-log line with the `user:password` of every URL in it replaced by `***`
    (discovery drops them from the URLs it follows; this keeps any other text clean)."""
    if isinstance(value, str):
        return redact_userinfo(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts URL credentials from every message it passes, so no
    log line (docscrawl's or Scrapy's) shows a `user:password@`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args or "@" in str(record.msg):
            message = record.getMessage()
            if "@" in message:
                record.msg, record.args = redact_userinfo(message), None
        return True


def install_log_redaction() -> None:
    """Put a `RedactingFilter` on every handler of the root logger (Scrapy's included)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
