"""`LocalAdmission`: the admission of a crawl in one process (every decision final here)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from docscrawl.redirects.local import LocalRedirects
from docscrawl.vocab import Event

if TYPE_CHECKING:
    from scrapy.http import Request

    from docscrawl.admission.base import CrawlHooks
    from docscrawl.crawl.crawllog import EventExtras
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.frontier import Verdict
    from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack


class LocalAdmission:
    """One process: every decision is final here."""

    resumable = True
    budget_here = True  # max_pages is counted here: candidates go out by rank

    def open(self, session: CrawlSession, hooks: CrawlHooks) -> None:
        self.session = session
        self.hooks = hooks
        self.redirects = LocalRedirects(session)  # the crawl log ends redirect sources

    def discovered(self, url: str, discovery: DiscoveryRecord) -> None:
        self.session.log.discovered(url, discovery)

    def refused(self, url: str, verdict: Verdict, discovery: DiscoveryRecord) -> None:
        extra: EventExtras = {"param_rule": verdict.detail} if verdict.detail else {}
        self.session.log.record(url, Event.SKIPPED, reason=verdict.reason, rule=verdict.rule,
                                **extra)

    def admitted(self, url: str, track: PageTrack, *, inherited: bool,
                 discovery: DiscoveryRecord) -> list[Request]:
        self.session.journal_claim(track, inherited=inherited)
        return [self.hooks.page_request(track)]

    def site_resources(self, requests: Callable[[], Iterable[Request]]) -> Iterable[Request]:
        return requests()

    def keep_open(self) -> bool:
        return False

    def close(self) -> None:
        return None
