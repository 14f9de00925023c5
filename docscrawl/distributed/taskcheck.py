"""The crawl's admission policy, applied again to every task a worker takes from the queue.

Anyone who can write to Redis can add a task. A worker therefore fetches a task only when
the policy of a local crawl admits it here, with this worker's own frontier (the seed's
scope with `allow`/`deny`, the private-address guard, file types, `max_depth`: `check`;
robots.txt: `robots_verdict`), Scrapy's `URLLENGTH_LIMIT` and the crawler-trap caps. Both
the task's URL and the URL it requests (its `key`) are checked. A refused task is logged
`skipped` with the policy's reason and acknowledged, never fetched. So whoever can write to
the queue can make workers fetch in-scope URLs, and nothing else.

The trap caps count the tasks this worker takes, in a `TrapGuard` of their own: the local
frontier's already counts the URLs this worker discovered, and one URL must not count twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docscrawl.discovery.frontier import Action, Verdict, origin_of
from docscrawl.discovery.traps import TrapGuard
from docscrawl.vocab import SkipReason

if TYPE_CHECKING:
    from docscrawl.discovery.frontier import Frontier
    from docscrawl.discovery.pagetrack import PageTrack

FETCH = Verdict(Action.FETCH)
WAIT_ROBOTS = Verdict(Action.WAIT_ROBOTS)


class TaskCheck:
    """`verdict(track)` for a task's track: fetch, skip (reason, rule) or wait for robots.txt."""

    def __init__(self, frontier: Frontier, *, url_limit: int) -> None:
        """`url_limit`: Scrapy's `URLLENGTH_LIMIT` (0: none)."""
        self.frontier = frontier
        self.url_limit = url_limit
        caps = frontier.traps
        self.traps = TrapGuard(per_pattern=caps.per_pattern,
                               per_path_queries=caps.per_path_queries, per_chain=caps.per_chain)

    def verdict(self, track: PageTrack) -> Verdict:
        """FETCH, a SKIP, or WAIT_ROBOTS while a robots.txt it needs is unknown here (see
        `origins`). Nothing asks for robots.txt before the policies that need none passed,
        so an off-scope task makes no request at all."""
        frontier = self.frontier
        urls = (track.url,) if track.key == track.url else (track.url, track.key)
        for url in urls:
            if self.url_limit and len(url) > self.url_limit:
                return Verdict(Action.SKIP, SkipReason.TRAP,
                               f"URLLENGTH_LIMIT={self.url_limit} ({len(url)} characters)")
        for url in urls:
            verdict = frontier.check(url, track.depth)
            if verdict.action == Action.SKIP:
                return verdict
        for url in urls:
            refused = frontier.robots_verdict(url)
            if refused is not None:
                return refused
        source = track.discovery[0][1] if track.discovery_count else None
        trap = self.traps.admit(track.key, source)
        if trap:
            return Verdict(Action.SKIP, SkipReason.TRAP, trap)
        return FETCH

    @staticmethod
    def origins(track: PageTrack) -> list[str]:
        """The origins whose robots.txt the verdict on `track` needs."""
        return list(dict.fromkeys(origin_of(url) for url in (track.url, track.key)))
