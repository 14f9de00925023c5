"""The queue side of one distributed worker: take tasks, renew leases, ack, stop together.

It works with plain collaborators: the shared crawl (`AsyncSharedFrontier`), this process's
`CrawlSession` (crawl log and local frontier) and `CrawlHooks` (schedule a request, build a
page request for a track, make sure robots.txt is known); never the spider. Redis calls run
as `Serial` jobs on the reactor's asyncio loop, so none of them blocks the reactor.

The queue is not trusted: a task is fetched only when it is a task (`track_from_task`) and
the crawl's admission policy admits it here (`docscrawl.distributed.taskcheck`); any other
ends `skipped` and is acknowledged unfetched. A task whose origin's robots.txt is not known
here yet is held (its lease renewed) until it is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro
from twisted.internet import task

from docscrawl.discovery.frontier import Action, origin_of
from docscrawl.distributed.connect import redact
from docscrawl.distributed.taskcheck import TaskCheck
from docscrawl.distributed.taskqueue import CLIENT_OPTIONS
from docscrawl.distributed.tasks import BadTask, track_from_task
from docscrawl.distributed.template_counts import SharedTemplateCounts
from docscrawl.redirects.redis import SharedRedirects
from docscrawl.vocab import Event, FailReason

if TYPE_CHECKING:
    from docscrawl.admission.base import CrawlHooks
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.pagetrack import PageTrack
    from docscrawl.distributed.serial import Serial
    from docscrawl.distributed.taskqueue import AsyncSharedFrontier

logger = logging.getLogger(__name__)

PULL_EVERY = 0.5  # seconds between two looks at the queue
LOGGED_URL_CHARS = 300  # of a task's URL in a log line (the crawl log has all of it)


class Worker:
    """Takes page tasks up to the concurrency and acks each when its URL's story ends."""

    def __init__(self, shared: AsyncSharedFrontier, worker_id: str, session: CrawlSession,
                 hooks: CrawlHooks, serial: Serial, *, quiet_seconds: float,
                 concurrency: int, url_limit: int = 0) -> None:
        self.shared = shared
        self.worker_id = worker_id
        self.session = session
        self.hooks = hooks
        self.serial = serial
        self.quiet_seconds = quiet_seconds
        self.concurrency = max(1, concurrency)
        self._task_of: dict[str, str] = {}  # URL being fetched here -> its task id
        self._held: list[tuple[str, PageTrack]] = []  # tasks waiting for a robots.txt here
        self.check = TaskCheck(session.frontier, url_limit=url_limit)
        self._loop: task.LoopingCall | None = None
        self._last_heartbeat = 0.0
        self._heartbeat: asyncio.Future[Any] | None = None
        self._pull_queued = False
        self._closing = False
        self.finished = False  # the whole crawl is over (seen by this worker)
        self.redirects: SharedRedirects | None = None
        self._template_client: Any = None  # blocking client of the template counters

    def open(self) -> None:
        """Take over the page budget (crawl-wide, in Redis), register, start pulling."""
        session = self.session
        session.frontier.max_pages = None
        session.log.terminal_hooks.append(self._terminal)
        session.set_worker(self.worker_id)
        session.site_model.template.share_with(self._template_counts())
        self.redirects = SharedRedirects(self.shared.redis, self.shared.crawl_key, session.log,
                                         session.frontier.page_key, self.serial.submit)
        info = {"pid": os.getpid(), "out": str(session.out_dir),
                "lease": self.shared.lease_seconds}
        self.serial.submit(lambda: self.shared.register_worker(self.worker_id, info))
        self.serial.submit(self.shared.mark_started)
        self._last_heartbeat = time.monotonic()
        self._loop = task.LoopingCall(self._tick)
        self._loop.start(PULL_EVERY, now=False)
        logger.info("docscrawl: distributed: worker %s, crawl key %s, Redis %s", self.worker_id,
                    self.shared.crawl_key, redact(self.shared.redis_url))

    def _template_counts(self) -> SharedTemplateCounts:
        """One template table for all workers (`docscrawl.distributed.template_counts`). Its calls
        are
        blocking: they happen only while the warm-up sample is counted (a dozen pages),
        before the table is frozen, and the extract pipeline needs their answer at once."""
        from redis import Redis

        self._template_client = Redis.from_url(self.shared.redis_url, **CLIENT_OPTIONS)
        return SharedTemplateCounts(self._template_client, self.shared.keys)

    def _tick(self) -> None:
        """Every PULL_EVERY: renew the leases when due, look for tasks."""
        now = time.monotonic()
        if (now - self._last_heartbeat > self.shared.lease_seconds / 3
                and (self._heartbeat is None or self._heartbeat.done())):
            self._last_heartbeat = now  # not a Serial job: it must not wait behind them
            self._heartbeat = asyncio.ensure_future(self.shared.heartbeat(self.worker_id))
            self._heartbeat.add_done_callback(_log_failure)
        self._retry_held()
        self._queue_pull()

    def _queue_pull(self) -> None:
        if not self._pull_queued and not self._closing:
            self._pull_queued = True
            self.serial.submit(self._pull)

    async def _pull(self) -> int:
        """Lease tasks up to the concurrency and schedule their requests."""
        self._pull_queued = False
        # pages the extract pipeline holds until the template is warm do not count
        busy = len(self._task_of) + len(self._held) - self.session.pages_held
        wanted = self.concurrency - busy
        seed = origin_of(self.session.config.site)
        if self._closing or wanted <= 0 or not self.hooks.robots_known(seed):
            # Nothing is taken before the site's robots.txt is known here: links found on a
            # taken page would otherwise wait in this worker, and be lost if it died.
            return 0
        tasks = await self.shared.take(self.worker_id, wanted)
        for leased in tasks:
            await self._start(leased)
        return len(tasks)

    async def _start(self, leased: dict[str, Any]) -> None:
        """A taken task: fetch it, hold it for its robots.txt, or end it unfetched."""
        try:
            track = track_from_task(leased)
        except BadTask as bad:
            await self._drop(leased["task_id"], bad)
            return
        await self._admit(leased["task_id"], track)

    async def _admit(self, task_id: str, track: PageTrack) -> None:
        url = track.url
        if self._task_of.get(url, task_id) != task_id or self.session.log.is_closed(url):
            # a second task for a URL taken or ended here: its story is (being) told
            logger.info("docscrawl: distributed: task %s for %s, already taken here: dropped",
                        task_id, url[:LOGGED_URL_CHARS])
            await self.shared.ack(task_id)
            return
        verdict = self.check.verdict(track)
        if verdict.action == Action.WAIT_ROBOTS:
            for origin in self.check.origins(track):
                self.hooks.robots_known(origin)  # asks for it, once
            self._held.append((task_id, track))
            return
        self._task_of[url] = task_id
        self.session.log.adopt(url)
        if self.redirects is not None:  # a redirect's source may wait for its outcome
            self.redirects.fetching(url, track.key)
        if verdict.action == Action.SKIP:  # its terminal event acks the task
            logger.warning("docscrawl: distributed: task for %s refused, not fetched: %s (%s)",
                           url[:LOGGED_URL_CHARS], verdict.reason, verdict.rule)
            self.session.log.record(url, Event.SKIPPED, reason=verdict.reason, rule=verdict.rule)
            return
        self.session.frontier.adopt(track)
        self.hooks.schedule(self.hooks.page_request(track))

    async def _drop(self, task_id: str, bad: BadTask) -> None:
        """A payload that is no task: acknowledged unfetched; `skipped` `untrusted_task`
        when it names a URL (else there is no URL to log it under)."""
        logger.warning("docscrawl: distributed: task %s is malformed, dropped unfetched: %s",
                       task_id, bad.problem)
        if self.session.stats is not None:
            self.session.stats.inc_value("docscrawl/distributed/malformed_tasks")
        url = bad.url
        if url is None or url in self._task_of or self.session.log.is_closed(url):
            await self.shared.ack(task_id)
            return
        self._task_of[url] = task_id
        self.session.log.adopt(url)
        self.session.log.record(url, Event.FAILED, reason=FailReason.UNTRUSTED_TASK,
                                rule=f"malformed task: {bad.problem}")

    def _retry_held(self) -> None:
        """Admit the held tasks whose robots.txt became known (a Serial job: in order)."""
        frontier = self.session.frontier
        ready: list[tuple[str, PageTrack]] = []
        waiting: list[tuple[str, PageTrack]] = []
        for held in self._held:
            known = all(frontier.robots_known(origin) for origin in self.check.origins(held[1]))
            (ready if known else waiting).append(held)
        if not ready:
            return
        self._held = waiting

        async def job() -> None:
            for task_id, track in ready:
                await self._admit(task_id, track)
        self.serial.submit(job)

    def keep_open(self) -> bool:
        """Called when this worker's engine is idle: True while the crawl may bring work."""
        if self.finished:
            return False
        if self._held:  # waiting for a robots.txt (requested, or just parsed)
            self._retry_held()
            return True
        asking = self.redirects.asking if self.redirects is not None else set()
        if self._task_of:  # idle engine but unacknowledged tasks: their requests were lost
            for url in [url for url in self._task_of if url not in asking]:
                self.session.log.record(url, Event.FAILED, reason=FailReason.TASK_DROPPED,
                                        rule="request dropped before an outcome")
            return True
        if not self.serial.busy:
            self.serial.submit(self._check_end)
        return True

    async def _check_end(self) -> None:
        if await self._pull() or self._task_of:
            return
        if not await self.shared.mark_done_if_idle(self.quiet_seconds):
            return
        if self.redirects is not None:  # sources whose target never ended fail now
            await self.redirects.leftovers()
        self.finished = True

    def _terminal(self, url: str) -> None:
        task_id = self._task_of.pop(url, None)
        if task_id is not None:  # after the jobs queueing the links this page produced
            self.serial.submit(lambda: self.shared.ack(task_id))

    def close(self) -> Any:
        """Give unfinished tasks back at once; stop pulling. A Deferred firing when the
        last Redis jobs (pending claims and acks first) are done: the session is still
        open for what they log."""
        self._closing = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for url in self._task_of:
            self.session.log.hand_off(url)
        self._task_of.clear()
        self._held.clear()  # given back with the worker's other leases
        return deferred_from_coro(self._close())

    async def _close(self) -> None:
        self.serial.submit(lambda: self.shared.release_worker(self.worker_id))
        self.serial.submit(lambda: self.shared.finish_worker(self.worker_id))
        await self.serial.drained()
        if self._heartbeat is not None and not self._heartbeat.done():
            await asyncio.wait([self._heartbeat])
        if self.serial.failures:
            logger.warning("docscrawl: distributed: %d Redis calls failed in this worker",
                           self.serial.failures)
        await self.shared.close()
        if self._template_client is not None:
            self._template_client.close()


def _log_failure(future: asyncio.Future[Any]) -> None:
    """A failed heartbeat is logged (the next one comes lease/3 later)."""
    if not future.cancelled() and future.exception() is not None:
        logger.warning("docscrawl: distributed: heartbeat failed: %s", future.exception())
