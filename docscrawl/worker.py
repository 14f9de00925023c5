"""Distributed mode: one `scrapy crawl docs` worker sharing a crawl through Redis.

Enabled by `DOCSCRAWL_REDIS_URL`. The spider keeps its local frontier for the policy checks;
this class does the shared part through `docscrawl.distributed.SharedFrontier`: a URL is
logged `discovered` by the first worker that finds it, claimed and queued once, leased to
one worker at a time and acknowledged when its terminal event is logged. Each worker writes
its own output directory (`-a out=OUT/part-N`); `docscrawl merge` combines them.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from typing import TYPE_CHECKING, Any

from twisted.internet import task

from docscrawl.distributed import SharedFrontier, task_from_track, track_from_task
from docscrawl.frontier import origin_of
from docscrawl.pagetrack import PageTrack
from docscrawl.redirectshare import SharedRedirects
from docscrawl.template_share import SharedTemplateCounts

if TYPE_CHECKING:
    from docscrawl.spiders.docs import DocsSpider

logger = logging.getLogger(__name__)


def default_worker_id() -> str:
    """`host-pid-random`: unique per process, readable in `distributed workers`."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def default_crawl_key(site: str) -> str:
    """The shared key of a crawl when `DOCSCRAWL_REDIS_CRAWL_KEY` is not set: the seed."""
    return site.replace("{", "%7B").replace("}", "%7D")


class Worker:
    """The shared side of one worker process (see module docstring)."""

    def __init__(self, spider: DocsSpider, shared: SharedFrontier, worker_id: str, *,
                 quiet_seconds: float, max_pages: int | None, concurrency: int) -> None:
        self.spider = spider
        self.shared = shared
        self.worker_id = worker_id
        self.quiet_seconds = quiet_seconds
        self.max_pages = max_pages
        self.concurrency = max(1, concurrency)
        self._task_of: dict[str, str] = {}  # URL being fetched here -> its task id
        self._loop: task.LoopingCall | None = None
        self._last_heartbeat = 0.0
        self.redirects: SharedRedirects | None = None

    def open(self) -> None:
        """Register, take over the page budget, start pulling tasks."""
        session = self.spider.session
        session.frontier.max_pages = None  # the budget is crawl-wide, kept in Redis
        session.log.terminal_hooks.append(self._terminal)
        session.set_worker(self.worker_id)
        self.redirects = SharedRedirects(self.shared.redis, self.shared.crawl_key,
                                         session.log, session.frontier.page_key)
        self.shared.register_worker(self.worker_id, {"pid": os.getpid(),
                                                     "out": str(session.out_dir),
                                                     "lease": self.shared.lease_seconds})
        self.shared.mark_started()
        session.site_model.template.share_with(  # one template table for all workers
            SharedTemplateCounts(self.shared.redis, self.shared.keys))
        self._loop = task.LoopingCall(self.pull)
        self._loop.start(0.5, now=False)

    def first_discovery(self, url: str) -> bool:
        """True when this worker is the first of the crawl to discover `url`."""
        return self.shared.first_discovery(url)

    def claim_site_resources(self) -> bool:
        """Only one worker reads the sitemaps and llms.txt."""
        return self.shared.claim("resource:site", self.worker_id) is None

    def told(self, url: str) -> None:
        """This worker discovered `url` first and has written its story."""
        self.shared.told(url)

    def must_tell(self, url: str, discovery: dict[str, Any]) -> bool:
        """For a URL another worker discovered first: True when that worker never wrote
        its story (killed in between); this worker then logs its discovery and outcome."""
        if not self.shared.untold(url):
            return False
        self.spider.session.log.discovered(url, discovery)
        return True

    def hand_over(self, url: str, track: PageTrack, *, redirected: bool,
                  quiet: bool = False, discovery: dict[str, Any] | None = None) -> None:
        """Claim and queue an admitted page for whichever worker pops it first. `quiet`:
        another worker discovered the URL and logs its outcome (unless nobody claimed it,
        or it died before writing it: `must_tell`)."""
        admission = self.shared.claim_and_push(
            track.key, f"{self.worker_id} {url}", task_from_track(track),
            max_pages=self.max_pages, takes_slot=not redirected,
        )
        telling = quiet and self.must_tell(url, discovery or {"reason": "in_page", "from": None})
        if quiet and not telling and admission.status != "queued":
            return
        self._after_hand_over(url, admission, track)
        if not quiet or telling:
            self.told(url)

    def _after_hand_over(self, url: str, admission: Any, track: PageTrack) -> None:
        log = self.spider.session.log
        if admission.status == "duplicate" and (admission.owner or "").endswith(" " + url):
            log.hand_off(url)  # the same URL, claimed by a worker that found it too
        elif admission.status == "duplicate":
            log.record(url, "skipped", reason="duplicate_url", rule=track.key)
        elif admission.status == "max_pages":
            self.spider.session.frontier.limited = True
            log.record(url, "skipped", reason="max_pages", rule=f"max_pages={self.max_pages}")
        else:
            log.hand_off(url)

    def redirected(self, track: PageTrack, target: str, *, reason: str, status: int | None,
                   chain: tuple[str, ...]) -> None:
        """The page of `track` redirects to `target`, which any worker may end: its source
        ends with the target's outcome, through Redis (`docscrawl.redirectshare`)."""
        assert self.redirects is not None, "open() first"
        self.redirects.redirected(track.url, track.key, target, reason=reason, status=status,
                                  chain=chain)

    def refused_target(self, url: str, reason: str | None, rule: str | None) -> None:
        """A redirect target was refused by a policy here: its sources end with that."""
        if self.redirects is not None:
            self.redirects.refused_target(url, reason, rule)

    def pull(self) -> int:
        """Lease tasks up to the concurrency and schedule their requests."""
        now = time.monotonic()
        if now - self._last_heartbeat > self.shared.lease_seconds / 3:
            self.shared.heartbeat(self.worker_id)
            self._last_heartbeat = now
        engine = self.spider.crawler.engine
        if engine is None or not self._robots_ready(engine):
            return 0
        pulled = 0
        while len(self._task_of) - self.spider.session.pages_held < self.concurrency:
            leased = self.shared.pop(self.worker_id, timeout=0)
            if leased is None:
                break
            track = track_from_task(leased)
            session = self.spider.session
            session.frontier.adopt(track)
            session.log.adopt(track.url)
            if self.redirects is not None:
                self.redirects.fetching(track.url, track.key)
            self._task_of[track.url] = leased["task_id"]
            engine.crawl(self.spider.page_request(track, track.key))
            pulled += 1
        return pulled

    def _robots_ready(self, engine: Any) -> bool:
        """Pop nothing before the site's robots.txt is known here: links found on a popped
        page would otherwise wait in this worker, and be lost with it if it died."""
        spider = self.spider
        origin = origin_of(spider.config.site)
        if origin in spider.session.frontier.robots:
            return True
        for request in spider.robots_request_once(origin):
            engine.crawl(request)
        return False

    def keep_open(self) -> bool:
        """Called when this worker is idle: True while the crawl may still bring work."""
        if self.pull():
            return True
        if self._task_of:  # idle engine but unacknowledged tasks: their requests were lost
            for url in list(self._task_of):
                self.spider.session.log.record(url, "failed", reason="task_dropped",
                                               rule="request dropped before an outcome")
            return True
        if not self.shared.mark_done_if_idle(self.quiet_seconds):
            return True
        if self.redirects is not None:
            self.redirects.leftovers()
        return False

    def close(self) -> None:
        """Give unfinished tasks back at once; stop pulling."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for url in self._task_of:
            self.spider.session.log.hand_off(url)
        self.shared.release_worker(self.worker_id)
        self._task_of.clear()
        self.shared.finish_worker(self.worker_id)
        self.shared.close()

    def _terminal(self, url: str) -> None:
        task_id = self._task_of.pop(url, None)
        if task_id is not None:
            self.shared.ack(task_id)


def build_worker(spider: DocsSpider, settings: Any) -> Worker | None:
    """A Worker when `DOCSCRAWL_REDIS_URL` is set, else None."""
    url = settings.get("DOCSCRAWL_REDIS_URL")
    if not url:
        return None
    key = settings.get("DOCSCRAWL_REDIS_CRAWL_KEY") or default_crawl_key(spider.config.site)
    shared = SharedFrontier(url, key, lease_seconds=settings.getfloat("DOCSCRAWL_REDIS_LEASE"))
    return Worker(spider, shared, settings.get("DOCSCRAWL_WORKER_ID") or default_worker_id(),
                  quiet_seconds=settings.getfloat("DOCSCRAWL_REDIS_QUIET"),
                  max_pages=spider.config.max_pages,
                  concurrency=settings.getint("CONCURRENT_REQUESTS"))
