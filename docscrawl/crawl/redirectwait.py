"""Redirect sources end with the outcome of the page their redirect chain leads to.

A URL that redirects is only a `duplicate` of a page that exists. So its terminal event
waits until the URL it redirects to has ended: a page (`extracted`, `unchanged`, or a
`duplicate` of a page) makes it a `duplicate` of that page; a failure or a skip is passed
back along the chain with the source's own `redirect_chain` (`failed` `http_404`,
`redirect_loop`, `too_many_redirects`...). Sources waiting on each other in a circle
(`a -> b` and `b -> a` fetched as two pages) are a `redirect_loop`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

__all__ = ["Outcome", "RedirectWaits", "Waiter", "merged_chain", "source_outcome"]

PAGE_EVENTS = frozenset({"extracted", "unchanged", "fetched"})  # fetched: inventory crawl


@dataclass(frozen=True, slots=True)
class Waiter:
    """A redirect source waiting for its target's outcome."""

    source: str
    reason: str  # redirect, meta_refresh
    status: int | None
    chain: tuple[str, ...]  # the URLs fetched from the first one to the source, in order


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a source needs of its target's terminal event."""

    url: str
    event: str
    reason: str | None = None
    rule: str | None = None
    status: int | None = None
    page: str | None = None  # the page it is or duplicates (its canonical URL)
    chain: tuple[str, ...] = ()

    @classmethod
    def of_line(cls, line: Mapping[str, Any]) -> Outcome:
        """The outcome a crawl-log line states."""
        event = line["event"]
        page = None
        if event in PAGE_EVENTS:
            page = line.get("canonical_url") or line["url"]
        elif event == "duplicate":
            page = line.get("duplicate_of") or None
        return cls(line["url"], event, line.get("reason"), line.get("rule"),
                   line.get("status"), page, tuple(line.get("redirect_chain") or ()))


def merged_chain(first: Iterable[str], then: Iterable[str]) -> tuple[str, ...]:
    """`first` followed by the URLs of `then` it does not hold yet."""
    chain = tuple(first)
    return chain + tuple(url for url in dict.fromkeys(then) if url not in chain)


class SourceEnd(TypedDict, total=False):
    """The crawl-log fields (`CrawlLog.record`'s) a redirect's source ends with."""

    reason: str | None
    rule: str | None
    status: int | None
    redirect_chain: tuple[str, ...]
    duplicate_of: str
    redirect_to: str


def source_outcome(waiter: Waiter, target: Outcome) -> tuple[str, SourceEnd]:
    """The terminal event (and its fields) of a source whose target ended as `target`."""
    if target.page is not None:
        return "duplicate", {"reason": waiter.reason, "duplicate_of": target.page,
                             "status": waiter.status, "redirect_chain": waiter.chain}
    event = target.event if target.event in ("failed", "skipped") else "failed"
    return event, {"reason": target.reason, "rule": target.rule, "status": target.status,
                   "redirect_chain": merged_chain(waiter.chain, (target.url, *target.chain)),
                   "redirect_to": target.url}


class RedirectWaits:
    """Which sources wait for which target; at most one target per source."""

    def __init__(self) -> None:
        self._by_target: dict[str, list[Waiter]] = {}
        self._target_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._target_of)

    def loop(self, source: str, target: str) -> tuple[str, ...] | None:
        """The circle `source -> target` would close (source first), or None."""
        path, node = [source], target
        while node not in path:
            path.append(node)
            following = self._target_of.get(node)
            if following is None:
                return None
            node = following
        return tuple(path) if node == source else None

    def wait(self, target: str, waiter: Waiter) -> None:
        """`waiter.source` ends when `target` does."""
        self._by_target.setdefault(target, []).append(waiter)
        self._target_of[waiter.source] = target

    def release(self, target: str) -> list[Waiter]:
        """The sources waiting for `target`, which just ended; they wait no more."""
        waiters = self._by_target.pop(target, [])
        for waiter in waiters:
            self._target_of.pop(waiter.source, None)
        return waiters

    def forget(self, source: str) -> None:
        """`source` ended by itself (the crawl closed first): it waits no more."""
        target = self._target_of.pop(source, None)
        if target is None:
            return
        left = [w for w in self._by_target.get(target, ()) if w.source != source]
        if left:
            self._by_target[target] = left
        else:
            self._by_target.pop(target, None)
