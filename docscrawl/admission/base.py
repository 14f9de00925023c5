"""The admission protocol, the hooks it gets, and the one place it is chosen
(`build_admission`, from the spider's `from_crawler`); see the package docstring."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scrapy.http import Request
    from scrapy.settings import Settings

    from docscrawl.config import CrawlConfig
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.frontier import Verdict
    from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack
    from docscrawl.redirects.base import Redirects


@dataclass(frozen=True, slots=True)
class CrawlHooks:
    """What an admission may do in the crawl besides logging."""

    schedule: Callable[[Request], None]  # hand a request to the engine
    page_request: Callable[[PageTrack], Request]  # the request fetching a claimed page
    robots_known: Callable[[str], bool]  # an origin's robots.txt known here (else asks once)


class Admission(Protocol):
    """Where a URL the local frontier has judged goes next (see module docstring)."""

    resumable: bool  # JOBDIR pause/resume applies
    budget_here: bool  # max_pages is counted in this process (candidates ranked here)
    @property
    def redirects(self) -> Redirects:
        """Where redirect sources wait (once opened)."""
        ...


    def open(self, session: CrawlSession, hooks: CrawlHooks) -> None: ...

    def discovered(self, url: str, discovery: DiscoveryRecord) -> None:
        """`url` was seen for the first time by this process."""

    def refused(self, url: str, verdict: Verdict, discovery: DiscoveryRecord) -> None:
        """The frontier refused `url` (a skip)."""

    def admitted(self, url: str, track: PageTrack, *, inherited: bool,
                 discovery: DiscoveryRecord) -> list[Request]:
        """The frontier admitted `url` (claimed as `track`): requests to fetch it here."""

    def site_resources(self, requests: Callable[[], Iterable[Request]]) -> Iterable[Request]:
        """The seed origin's sitemaps and llms.txt: read by one process of the crawl."""

    def keep_open(self) -> bool:
        """The engine is idle: True while the crawl may still bring work here."""

    def close(self) -> Any:
        """The crawl stops here; may return a Deferred to wait for."""


def build_admission(settings: Settings, config: CrawlConfig) -> Admission:
    """`RedisAdmission` when `DOCSCRAWL_REDIS_URL` is set, else `LocalAdmission`."""
    if not settings.get("DOCSCRAWL_REDIS_URL"):
        from docscrawl.admission.local import LocalAdmission

        return LocalAdmission()
    from docscrawl.admission.redis import build_redis_admission

    return build_redis_admission(settings, config)
