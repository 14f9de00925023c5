"""`RedisAdmission`: the spider's admission in distributed mode (see `docscrawl.admission`).

A URL is logged `discovered` by the first worker of the crawl that finds it (the others
stay *quiet* about it), claimed and queued once (`max_pages` is one crawl-wide budget), and
fetched by whichever worker takes its task (`docscrawl.distributed.worker`). A first
discoverer killed before it wrote the URL's story leaves it *untold*: the next worker that
meets the URL tells it. Every Redis call goes through the worker's `Serial` jobs, in order.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from docscrawl.distributed.connect import redact_logs
from docscrawl.distributed.serial import Serial
from docscrawl.distributed.taskqueue import AsyncSharedFrontier
from docscrawl.distributed.tasks import task_from_track
from docscrawl.distributed.worker import Worker
from docscrawl.vocab import Event, SkipReason

if TYPE_CHECKING:
    from scrapy.http import Request
    from scrapy.settings import Settings

    from docscrawl.admission.base import CrawlHooks
    from docscrawl.config import CrawlConfig
    from docscrawl.crawl.crawllog import EventExtras
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.frontier import Verdict
    from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack
    from docscrawl.distributed.streams import Claim
    from docscrawl.redirects.redis import SharedRedirects

SITE_RESOURCES = "resource:site"  # claimed by the one worker that reads sitemaps, llms.txt


def default_worker_id() -> str:
    """`host-pid-random`: unique per process, readable in `distributed workers`."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def default_crawl_key(site: str) -> str:
    """The shared key of a crawl when `DOCSCRAWL_REDIS_CRAWL_KEY` is not set: the seed."""
    return site.replace("{", "%7B").replace("}", "%7D")


class RedisAdmission:
    """Admission through the shared crawl in Redis (see module docstring)."""

    resumable = False  # the shared crawl is the resume: no JOBDIR
    budget_here = False  # max_pages is one crawl-wide budget, counted in Redis

    def __init__(self, shared: AsyncSharedFrontier, worker_id: str, *, max_pages: int | None,
                 quiet_seconds: float, concurrency: int, url_limit: int = 0) -> None:
        self.shared = shared
        self.worker_id = worker_id
        self.max_pages = max_pages
        self.quiet_seconds = quiet_seconds
        self.concurrency = concurrency
        self.url_limit = url_limit  # URLLENGTH_LIMIT, re-applied to the tasks taken
        self._quiet: set[str] = set()  # URLs another worker discovered first
        self.serial: Serial
        self.worker: Worker

    def open(self, session: CrawlSession, hooks: CrawlHooks) -> None:
        self.session = session
        self.serial = Serial()
        self.worker = Worker(self.shared, self.worker_id, session, hooks, self.serial,
                             quiet_seconds=self.quiet_seconds, concurrency=self.concurrency,
                             url_limit=self.url_limit)
        self.worker.open()

    def discovered(self, url: str, discovery: DiscoveryRecord) -> None:
        async def job() -> None:
            if await self.shared.first_discovery(url):
                self.session.log.discovered(url, discovery)
            else:  # another worker logs its story; it may have died before claiming it,
                self._quiet.add(url)  # so this worker still tries to, silently
        self.serial.submit(job)

    def refused(self, url: str, verdict: Verdict, discovery: DiscoveryRecord) -> None:
        async def job() -> None:
            redirects = self.worker.redirects
            if (redirects is not None and discovery.get("reason") == "redirect"
                    and verdict.reason != "duplicate_url"):  # its sources end with this
                await redirects.refused_target(url, verdict.reason, verdict.rule)
            if url in self._quiet and not await self._must_tell(url, discovery):
                return
            extra: EventExtras = {"param_rule": verdict.detail} if verdict.detail else {}
            self.session.log.record(url, Event.SKIPPED, reason=verdict.reason, rule=verdict.rule,
                                    **extra)
            await self.shared.told(url)
        self.serial.submit(job)

    def admitted(self, url: str, track: PageTrack, *, inherited: bool,
                 discovery: DiscoveryRecord) -> list[Request]:
        task = task_from_track(track)  # now: the track may change before the job runs

        async def job() -> None:
            claim = await self.shared.claim_and_push(
                track.key, f"{self.worker_id} {url}", task, max_pages=self.max_pages,
                takes_slot=not inherited)
            quiet = url in self._quiet
            telling = quiet and await self._must_tell(url, discovery)
            if quiet and not telling and claim.status != "queued":
                return
            self._log_claim(url, track.key, claim)
            if not quiet or telling:
                await self.shared.told(url)
        self.serial.submit(job)
        return []

    async def _must_tell(self, url: str, discovery: DiscoveryRecord) -> bool:
        """For a URL another worker discovered first: True when that worker never wrote
        its story (killed in between); this worker then logs its discovery and outcome."""
        if not await self.shared.untold(url):
            return False
        self.session.log.discovered(url, discovery)
        return True

    def _log_claim(self, url: str, key: str, claim: Claim) -> None:
        log = self.session.log
        if claim.status == "duplicate" and (claim.owner or "").endswith(" " + url):
            log.hand_off(url)  # the same URL, claimed by a worker that found it too
        elif claim.status == "duplicate":
            log.record(url, Event.SKIPPED, reason=SkipReason.DUPLICATE_URL, rule=key)
        elif claim.status == "max_pages":
            self.session.frontier.limited = True
            log.record(url, Event.SKIPPED, reason=SkipReason.MAX_PAGES,
                       rule=f"max_pages={self.max_pages}")
        else:
            log.hand_off(url)  # queued: whichever worker takes it ends it

    @property
    def redirects(self) -> SharedRedirects:
        """Another worker may end a redirect target: its sources wait for it in Redis."""
        assert self.worker.redirects is not None, "open() first"
        return self.worker.redirects

    def site_resources(self, requests: Callable[[], Iterable[Request]]) -> Iterable[Request]:
        async def job() -> None:
            if await self.shared.claim(SITE_RESOURCES, self.worker_id) is None:
                for request in requests():
                    self.worker.hooks.schedule(request)
        self.serial.submit(job)
        return ()

    def keep_open(self) -> bool:
        return self.worker.keep_open()

    def close(self) -> Any:
        return self.worker.close()


def build_redis_admission(settings: Settings, config: CrawlConfig) -> RedisAdmission:
    """The admission of one worker, from the `DOCSCRAWL_REDIS_*` settings. From now on the
    log shows a Redis URL's password as `***`, whoever logs it."""
    redact_logs()
    key = settings.get("DOCSCRAWL_REDIS_CRAWL_KEY") or default_crawl_key(config.site)
    shared = AsyncSharedFrontier(settings.get("DOCSCRAWL_REDIS_URL"), key,
                                 lease_seconds=settings.getfloat("DOCSCRAWL_REDIS_LEASE"))
    return RedisAdmission(shared, settings.get("DOCSCRAWL_WORKER_ID") or default_worker_id(),
                          max_pages=config.max_pages,
                          quiet_seconds=settings.getfloat("DOCSCRAWL_REDIS_QUIET"),
                          concurrency=settings.getint("CONCURRENT_REQUESTS"),
                          url_limit=settings.getint("URLLENGTH_LIMIT"))
