"""Where a URL the spider found goes: the frontier's verdict, then the admission.

`Offers` is a part of the `docs` spider (composed by it, not inherited): every discovered
URL (a link, a sitemap entry, a redirect target, a URL a resumed crawl left open) is
offered to the frontier (`Frontier.offer`); one whose origin's robots.txt is not known
yet, by the frontier's own `robots_verdict`, waits for it (`SiteResources.park`); with a
`max_pages` budget a candidate waits for its turn (`docscrawl.discovery.budget`); then
`Frontier.admit` has the last word and the `Admission` logs it or fetches it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from docscrawl.discovery.budget import Budget, link_rank
from docscrawl.discovery.frontier import Action, origin_of
from docscrawl.discovery.urls import is_crawlable_url, without_userinfo

if TYPE_CHECKING:
    from scrapy.http import Request

    from docscrawl.admission.base import Admission
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.frontier import Verdict
    from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack
    from docscrawl.incremental.rows import FoundLink

# An origin and the offer to make again once its robots.txt is known: the requests to make
# now (its robots.txt, the first time).
# what a held candidate is admitted with: url, reason, source, depth, lastmod
Offer = tuple[str, str, "str | None", int, "str | None"]

Park = Callable[[str, Callable[[], list["Request"]]], list["Request"]]


class Offers:
    """Discovered URLs to requests, through the frontier, the budget and the admission."""

    def __init__(self, session: CrawlSession, admission: Admission, park: Park, *,
                 budget: Budget[Offer] | None) -> None:
        self.session = session
        self.frontier = session.frontier
        self.admission = admission
        self.park = park
        self.budget = budget  # max_pages in one process: candidates go out by rank

    def offer(
        self, url: str, reason: str, source: str | None, depth: int, *,
        lastmod: str | None = None, inherit: PageTrack | None = None,
        rank: int | None = None,
    ) -> list[Request]:
        """Offer one discovered URL to the frontier and act on its verdict. A
        `user:password@` in it is dropped first: never sent, never logged."""
        url = without_userinfo(url)
        verdict = self.frontier.offer(url, reason, source, depth, lastmod=lastmod,
                                      inherit=inherit)
        if verdict.first:
            self.session.journal_offer(url, reason, source, depth, lastmod, inherit)
            self.admission.discovered(url, {"reason": reason, "from": source})
        if rank is None:
            rank = link_rank(reason)
        if verdict.action == Action.KNOWN:
            if self.budget is not None and self.budget.promote(url, rank, depth):
                return self.release()
            return []
        if verdict.action == Action.SKIP:
            self.admission.refused(url, verdict, {"reason": reason, "from": source})
            return []
        return self.admit_or_park(url, reason, source, depth, lastmod, inherit, rank)

    def follow(self, found: Iterable[FoundLink], page_url: str, depth: int) -> list[Request]:
        """Offer each link found on a page; the requests to make."""
        follow: list[Request] = []
        for url, reason, rank in found:
            if is_crawlable_url(url):
                follow.extend(self.offer(url, reason, page_url, depth, rank=rank))
        return follow

    def admit_or_park(
        self, url: str, reason: str, source: str | None, depth: int,
        lastmod: str | None, inherit: PageTrack | None, rank: int,
    ) -> list[Request]:
        """A URL the policies that need no robots.txt passed: it waits for its origin's
        robots.txt (the frontier's `wait_robots`), or for a `max_pages` slot, or goes."""
        robots = self.frontier.robots_verdict(url)
        if robots is not None and robots.action == Action.WAIT_ROBOTS:
            return self.park(origin_of(url), lambda: self.admit_or_park(
                url, reason, source, depth, lastmod, inherit, rank))
        if self.budget is not None and inherit is None and self._needs_slot(url, robots):
            self.budget.hold(url, rank, depth, (url, reason, source, depth, lastmod))
            return self.release()
        return self._admit(url, reason, source, depth, lastmod, inherit)

    def _admit(
        self, url: str, reason: str, source: str | None, depth: int,
        lastmod: str | None, inherit: PageTrack | None = None,
        place: tuple[int, int] | None = None,
    ) -> list[Request]:
        """The frontier's last word on `url`: a skip, or the requests fetching it."""
        verdict = self.frontier.admit(
            url, reason, source, depth, lastmod=lastmod, inherit=inherit
        )
        discovery: DiscoveryRecord = {"reason": reason, "from": source}
        if verdict.action == Action.SKIP:
            self.admission.refused(url, verdict, discovery)
            return []
        assert verdict.track is not None
        if place is not None and self.budget is not None:
            self.budget.started(verdict.track.key, place)
        return self.admission.admitted(url, verdict.track, inherited=inherit is not None,
                                       discovery=discovery)

    def redirect_refusal(self, target: str) -> tuple[str, str] | None:
        """Why a redirect target may not be followed: offsite, private address, bad URL
        (checked before it is offered: its source ends `skipped` with the reason)."""
        frontier = self.frontier
        if not is_crawlable_url(target):
            return "offsite_redirect", f"redirect to a non-http URL: {target}"
        decision = frontier.scope.decide(target)
        if not decision.allowed:
            return "offsite_redirect", f"{decision.rule} (redirect to {target})"
        blocked = frontier.guard.check(urlsplit(target).hostname or "")
        if blocked:
            return "private_address", f"{blocked} (redirect to {target})"
        return None

    # -- the max_pages budget (docscrawl.discovery.budget) ------------------------------

    def _needs_slot(self, url: str, robots: Verdict | None) -> bool:
        """True when admitting `url` now would take a max_pages slot (the frontier's robots
        verdict allows it, no page claimed its key, slots are left): it waits instead."""
        frontier = self.frontier
        if frontier.max_pages is None or frontier.admitted >= frontier.max_pages:
            return False
        if robots is not None:
            return False
        try:
            return frontier.owner_of(frontier.page_key(url)) is None
        except ValueError:
            return False

    def release(self) -> list[Request]:
        """Hand out the candidates whose turn came, while slots are left; once the budget
        is spent, every candidate left is refused (`max_pages`)."""
        budget = self.budget
        if budget is None or not len(budget):
            return []
        frontier = self.frontier
        requests: list[Request] = []
        while frontier.max_pages is not None and frontier.admitted < frontier.max_pages:
            taken = budget.take()
            if taken is None:
                return requests
            place, offer = taken
            requests.extend(self._admit(*offer, place=place))
        for offer in budget.drain():
            requests.extend(self._admit(*offer))
        return requests

    def answered(self, key: str) -> list[Request]:
        """A page in flight got its answer: the candidates whose turn came with it."""
        if self.budget is None:
            return []
        self.budget.answered(key)
        return self.release()

    def release_when_idle(self) -> list[Request]:
        """The engine is idle: no page is in flight any more; the next rank may go."""
        if self.budget is None:
            return []
        self.budget.settle()
        return self.release()
