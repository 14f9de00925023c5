"""What both redirect waits share: the protocol, a waiting source, a target's outcome,
and the source's terminal event made from it (see the package docstring)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Outcome", "Redirects", "Waiter", "merged_chain", "source_outcome"]

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


def source_outcome(waiter: Waiter, target: Outcome) -> tuple[str, dict[str, Any]]:
    """The terminal event (and its fields) of a source whose target ended as `target`."""
    if target.page is not None:
        return "duplicate", {"reason": waiter.reason, "duplicate_of": target.page,
                             "status": waiter.status, "redirect_chain": waiter.chain}
    event = target.event if target.event in ("failed", "skipped") else "failed"
    return event, {"reason": target.reason, "rule": target.rule, "status": target.status,
                   "redirect_chain": merged_chain(waiter.chain, (target.url, *target.chain)),
                   "redirect_to": target.url}


class Redirects(Protocol):
    """Where a redirect source waits for the outcome of the page its chain leads to."""

    def redirected(self, source: str, source_key: str, target: str, *, reason: str,
                   status: int | None, chain: tuple[str, ...]) -> None:
        """`source` (the page of `source_key`) redirects to `target`, already offered:
        it ends with the target's outcome, now or once the target ends."""
