"""The `docs` spider's life cycle: its signals (opened, idle, headers, closed) and the
resume of a JOBDIR run.

A mixin of `DocsSpider`, as `SiteResources` is: Scrapy connects these handlers on the
spider. What they need of the spider is the admission, the session and `page_request`;
the crawl's policy stays in `docscrawl.spiders.docs`.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.exceptions import DontCloseSpider, StopDownload
from scrapy.http import Request
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.job import job_dir

from docscrawl.crawl.parse import is_html_type
from docscrawl.crawl.politeness import politeness_summary
from docscrawl.crawl.resume import read_marker
from docscrawl.crawl.session import CrawlSession, SessionOptions
from docscrawl.discovery.budget import BODY
from docscrawl.discovery.frontier import Action
from docscrawl.discovery.netguard import ALLOW_LINK_LOCAL_SETTING
from docscrawl.discovery.pagetrack import PageTrack, track_from_fields
from docscrawl.discovery.urls import normalize_url
from docscrawl.runs import resumable_run_dir
from docscrawl.spiders.admission import CrawlHooks
from docscrawl.vocab import Event, Meta, SkipReason

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from docscrawl.config import CrawlConfig
    from docscrawl.spiders.admission import Admission

logger = logging.getLogger(__name__)


class CrawlLifecycle:
    """Signal handlers and JOBDIR resume of the `docs` spider (a mixin)."""

    crawler: Crawler
    config: CrawlConfig
    session: CrawlSession
    admission: Admission
    _resume_retried: set[str]
    _jobdir: Path | None
    _resume_run: tuple[str | None, bool]

    if TYPE_CHECKING:  # from the spider and SiteResources
        def page_request(self, track: PageTrack, url: str) -> Request: ...
        def _admit_or_park(self, url: str, reason: str, source: str | None, depth: int,
                           lastmod: str | None, inherit: PageTrack | None,
                           rank: int) -> list[Request]: ...
        def _release_when_idle(self) -> list[Request]: ...
        def robots_request_once(self, origin: str) -> list[Request]: ...

    # -- resume (JOBDIR) ---------------------------------------------------------------

    def _live_track(self, track: PageTrack) -> PageTrack | None:
        """The frontier's track for a page request; None when a resumed crawl already
        has the page's outcome (a request replayed from JOBDIR after it was re-issued).

        Requests that went through Scrapy's disk queue (docscrawl.crawl.scheduler) carry an
        unpickled copy of their track: the frontier's own one is the one later discoveries
        and aliases update."""
        session = self.session
        owner = session.frontier.owner_of(track.key)
        if owner is not None and owner.url == track.url:
            track = owner
            session.frontier.pin(track)  # in memory until the page's story ends
        if not session.resumed:
            return track
        if session.log.is_closed(track.url):
            logger.debug("docscrawl: %s already ended before the resume: ignored", track.url)
            return None
        return track

    def _resume_requests(self) -> list[Request]:
        """URLs the interrupted run left without an outcome: requests in flight at a kill
        are not in Scrapy's queue, so their pages are requested again, and URLs that were
        between two steps finish them."""
        session = self.session
        frontier, log = session.frontier, session.log
        requests: list[Request] = []
        for url in session.resume_open:
            if url in self._resume_retried or not log.is_open(url):
                continue
            self._resume_retried.add(url)
            owner = frontier.owner_of(normalize_url(url))
            if owner is not None and owner.url == url:
                requests.append(self.page_request(owner, owner.key))
                continue
            if owner is not None:  # its duplicate_url skip was lost
                owner.observe(url)
                log.record(url, Event.SKIPPED, reason=SkipReason.DUPLICATE_URL, rule=owner.key)
                continue
            offer = session.resume_offers.get(url, {})
            depth = offer.get("depth")
            verdict = frontier.check(url, depth)
            if verdict.action == Action.SKIP:
                self.admission.refused(url, verdict, {"reason": "in_page", "from": None})
                continue
            inherit = track_from_fields(offer["inherit"]) if offer.get("inherit") else None
            requests.extend(self._admit_or_park(
                url, offer.get("reason") or "resume", offer.get("source"),
                depth if depth is not None else 1, offer.get("lastmod"), inherit, BODY))
        return requests

    # -- signals ----------------------------------------------------------------------

    def _on_opened(self, spider: scrapy.Spider) -> None:
        settings = self.crawler.settings
        state = getattr(self, "state", None)  # Scrapy's JOBDIR spider state
        run_id, resume = self._resume_run
        options = SessionOptions.from_settings(
            settings, jobdir=self._jobdir, run_id=run_id, resume=resume)
        self.session = CrawlSession(self.config, options, stats=self.crawler.stats)
        self.session.frontier.guard.allow_link_local = settings.getbool(
            ALLOW_LINK_LOCAL_SETTING)
        self.session.politeness = politeness_summary(settings)
        if isinstance(state, dict):
            state["docscrawl_run_id"] = self.session.incremental.run.run_id
        self.admission.open(self.session, CrawlHooks(
            schedule=self._schedule, page_request=lambda track: self.page_request(track, track.key),
            robots_known=self._robots_known))
        logger.info("docscrawl: crawling %s into %s", self.config.site, self.config.out_dir)

    def _prepare_jobdir(self, crawler: Crawler) -> None:
        """Before Scrapy's scheduler opens JOBDIR: find the unfinished run it holds (its
        marker survives a kill -9; Scrapy's spider.state does not) and keep Scrapy's request
        queue only after a clean pause. After a kill the queue files are torn (Scrapy
        writes their index at close) and the resumed run requests the open pages itself."""
        if crawler.settings.get("JOBDIR"):
            make_private_jobdir(Path(crawler.settings["JOBDIR"]))
        setting = job_dir(crawler.settings) if self.admission.resumable else None
        if not setting:
            return
        jobdir = self._jobdir = Path(setting)
        marker = read_marker(jobdir) or {}
        status = marker.get("status")
        resume = bool(marker.get("run_id")) and status in ("running", "paused")
        if resume and marker.get("out_dir") != str(self.config.out_dir):
            logger.warning("docscrawl: JOBDIR %s belongs to a crawl into %s, not %s: "
                           "starting a new run", jobdir, marker.get("out_dir"),
                           self.config.out_dir)
            resume = False
        if resume and resumable_run_dir(self.config.out_dir, marker.get("run_dir")) is None:
            logger.warning("docscrawl: JOBDIR %s: the interrupted run's directory is gone "
                           "from %s: starting a new run", jobdir, self.config.out_dir)
            resume = False
        self._resume_run = (str(marker["run_id"]), True) if resume else (None, False)
        queue = jobdir / "requests.queue"
        if queue.exists() and not (resume and status == "paused"):
            logger.info("docscrawl: JOBDIR %s: dropping Scrapy's request queue (%s)", jobdir,
                        "interrupted run" if resume else "new run")
            shutil.rmtree(queue)

    def _on_idle(self, spider: scrapy.Spider) -> None:
        """Distributed mode: an idle worker stays open while the shared crawl has work.
        A max_pages crawl hands out the candidates that waited for the pages in flight.
        A resumed crawl requests the pages the interrupted run left open, once idle."""
        if self.admission.keep_open():
            raise DontCloseSpider
        budgeted = self._release_when_idle()  # max_pages: the next rank's turn
        if budgeted:
            for request in budgeted:
                self._schedule(request)
            raise DontCloseSpider
        if self.session.resumed:
            requests = self._resume_requests()
            if requests:
                for request in requests:
                    self._schedule(request)
                raise DontCloseSpider

    def _on_headers(self, headers: Any, body_length: int, request: Request,
                    spider: scrapy.Spider) -> None:
        """Stop downloading a page body as soon as its headers say it is not HTML."""
        if Meta.TRACK not in request.meta:
            return
        content_type = (headers.get("Content-Type") or b"").decode("latin-1")
        if content_type and not is_html_type(content_type):
            raise StopDownload(fail=False)

    async def _on_closed(self, spider: scrapy.Spider, reason: str) -> None:
        """The admission closes first (distributed: its last Redis calls may still log),
        then the session writes run.json."""
        closing = self.admission.close()
        if closing is not None:
            await maybe_deferred_to_future(closing)
        self._finish(reason)

    def _finish(self, reason: str) -> None:
        summary = self.session.finish(reason)
        counts = summary.get("counts", {})
        logger.info(
            "docscrawl: %s pages written to %s (events %s, skipped %s)",
            summary.get("pages_written"), self.session.out_dir,
            _plain(counts.get("events")), _plain(counts.get("skip_reasons")),
        )

    def _schedule(self, request: Request) -> None:
        engine = self.crawler.engine
        assert engine is not None
        engine.crawl(request)

    def _robots_known(self, origin: str) -> bool:
        """True when the origin's robots.txt is known here; else request it (once)."""
        if origin in self.session.frontier.robots:
            return True
        for request in self.robots_request_once(origin):
            self._schedule(request)
        return False


def make_private_jobdir(path: Path) -> None:
    """Create JOBDIR for this user alone (mode 0700), before Scrapy does (with the umask's
    mode). Scrapy pickles requests and spider state into it and loading a pickle runs
    code: whoever may write there may run code as the crawl. An existing JOBDIR that other
    users may write to, or that belongs to another user, is named in a warning."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_mode & 0o022:
        logger.warning("docscrawl: JOBDIR %s is writable by other users (mode %o): whoever "
                       "writes its pickled queue runs code as this crawl; chmod 700 it",
                       path, stat.S_IMODE(info.st_mode))
    if info.st_uid != os.geteuid():
        logger.warning("docscrawl: JOBDIR %s belongs to another user (uid %d): whoever "
                       "writes its pickled queue runs code as this crawl", path, info.st_uid)


def _plain(counts: dict[str, int] | None) -> dict[str, int]:
    """Counts keyed by plain strings (a vocabulary `StrEnum` key would print its repr)."""
    return {str(key): value for key, value in (counts or {}).items()}
