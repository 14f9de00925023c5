"""Redirect waits in one process: the crawl log holds them (`RedirectWaits`), and
`LocalRedirects` hands it each source with the page its target already is, if any."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.redirects.base import Waiter

__all__ = ["LocalRedirects", "RedirectWaits"]


class LocalRedirects:
    """`Redirects` in one process: the crawl log ends the source (`CrawlLog.redirected`)."""

    def __init__(self, session: CrawlSession) -> None:
        self.session = session

    def redirected(self, source: str, source_key: str, target: str, *, reason: str,
                   status: int | None, chain: tuple[str, ...]) -> None:
        owner = self.session.frontier.track_for(target)
        page = (owner.record_canonical or owner.merged_into) if owner is not None else None
        self.session.log.redirected(source, owner.url if owner is not None else target,
                                    reason=reason, status=status, chain=chain, page=page)


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
