"""The spider's admission seam: who logs a URL's discovery and refusal, and who fetches it.

The spider decides locally (`Frontier.offer` / `admit`: scope, robots, traps, duplicates)
and hands the outcome to an `Admission`:

- `LocalAdmission` (one process): log it, and fetch an admitted page here at once;
- `docscrawl.distributed.admission.RedisAdmission` (`DOCSCRAWL_REDIS_URL`): the first
  worker of the crawl to discover a URL logs it, an admitted page is claimed and queued in
  Redis for whichever worker takes it first.

The admission gets plain collaborators (`CrawlHooks`), never the spider.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from docscrawl.vocab import Event

if TYPE_CHECKING:
    from scrapy.http import Request
    from scrapy.settings import Settings

    from docscrawl.config import CrawlConfig
    from docscrawl.crawl.crawllog import EventExtras
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.frontier import Verdict
    from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack


@dataclass(frozen=True, slots=True)
class CrawlHooks:
    """What an admission may do in the crawl besides logging."""

    schedule: Callable[[Request], None]  # hand a request to the engine
    page_request: Callable[[PageTrack], Request]  # the request fetching a claimed page
    robots_known: Callable[[str], bool]  # an origin's robots.txt known here (else asks once)


class Admission(Protocol):
    """Where a URL the local frontier has judged goes next (see module docstring)."""

    resumable: bool  # JOBDIR pause/resume applies

    def open(self, session: CrawlSession, hooks: CrawlHooks) -> None: ...

    def discovered(self, url: str, discovery: DiscoveryRecord) -> None:
        """`url` was seen for the first time by this process."""

    def refused(self, url: str, verdict: Verdict, discovery: DiscoveryRecord) -> None:
        """The frontier refused `url` (a skip)."""

    def admitted(self, url: str, track: PageTrack, *, inherited: bool,
                 discovery: DiscoveryRecord) -> list[Request]:
        """The frontier admitted `url` (claimed as `track`): requests to fetch it here."""

    def redirected(self, track: PageTrack, target: str, *, reason: str, status: int,
                   chain: tuple[str, ...]) -> None:
        """`track`'s URL redirects to `target` (already offered): log the source's end."""

    def site_resources(self, requests: Callable[[], Iterable[Request]]) -> Iterable[Request]:
        """The seed origin's sitemaps and llms.txt: read by one process of the crawl."""

    def keep_open(self) -> bool:
        """The engine is idle: True while the crawl may still bring work here."""

    def close(self) -> Any:
        """The crawl stops here; may return a Deferred to wait for."""


class LocalAdmission:
    """One process: every decision is final here."""

    resumable = True

    def open(self, session: CrawlSession, hooks: CrawlHooks) -> None:
        self.session = session
        self.hooks = hooks

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

    def redirected(self, track: PageTrack, target: str, *, reason: str, status: int,
                   chain: tuple[str, ...]) -> None:
        owner = self.session.frontier.track_for(target)
        page = (owner.record_canonical or owner.merged_into) if owner is not None else None
        self.session.log.redirected(track.url, owner.url if owner is not None else target,
                                    reason=reason, status=status, chain=chain, page=page)

    def site_resources(self, requests: Callable[[], Iterable[Request]]) -> Iterable[Request]:
        return requests()

    def keep_open(self) -> bool:
        return False

    def close(self) -> None:
        return None


def build_admission(settings: Settings, config: CrawlConfig) -> Admission:
    """`RedisAdmission` when `DOCSCRAWL_REDIS_URL` is set, else `LocalAdmission`."""
    if not settings.get("DOCSCRAWL_REDIS_URL"):
        return LocalAdmission()
    from docscrawl.distributed.admission import build_redis_admission

    return build_redis_admission(settings, config)
