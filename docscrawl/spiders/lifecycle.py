"""The `docs` spider's life cycle: a JOBDIR run found and resumed, the session opened,
page bodies that are not HTML stopped, the crawl's end.

The spider connects its signals and composes the parts; what they do lives here, as
functions of plain values and `Resume`, a part holding what a resumed crawl retries.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import StopDownload
from scrapy.http import Request
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.job import job_dir

from docscrawl.crawl.politeness import politeness_summary
from docscrawl.crawl.resume import read_marker
from docscrawl.crawl.session import CrawlSession, SessionOptions
from docscrawl.crawl.stage import CrawlParts
from docscrawl.discovery.budget import BODY
from docscrawl.discovery.frontier import Action
from docscrawl.discovery.netguard import ALLOW_LINK_LOCAL_SETTING
from docscrawl.discovery.pagetrack import PageTrack, track_from_fields
from docscrawl.discovery.urls import normalize_url
from docscrawl.runs import resumable_run_dir
from docscrawl.spiders.decision import is_html_type
from docscrawl.vocab import Event, Meta, SkipReason

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import Settings

    from docscrawl.admission.base import Admission
    from docscrawl.config import CrawlConfig
    from docscrawl.spiders.offers import Offers

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobRun:
    """The run a crawl continues: its JOBDIR (None without one, or in distributed mode),
    and the unfinished run's id when it resumes one."""

    jobdir: Path | None = None
    run_id: str | None = None

    @property
    def resume(self) -> bool:
        return self.run_id is not None


def prepare_jobdir(settings: Settings, config: CrawlConfig, *, resumable: bool) -> JobRun:
    """Before Scrapy's scheduler opens JOBDIR: find the unfinished run it holds (its
    marker survives a kill -9; Scrapy's spider.state does not) and keep Scrapy's request
    queue only after a clean pause. After a kill the queue files are torn (Scrapy
    writes their index at close) and the resumed run requests the open pages itself."""
    if settings.get("JOBDIR"):
        make_private_jobdir(Path(settings["JOBDIR"]))
    setting = job_dir(settings) if resumable else None
    if not setting:
        return JobRun()
    jobdir = Path(setting)
    marker = read_marker(jobdir) or {}
    status = marker.get("status")
    resume = bool(marker.get("run_id")) and status in ("running", "paused")
    if resume and marker.get("out_dir") != str(config.out_dir):
        logger.warning("docscrawl: JOBDIR %s belongs to a crawl into %s, not %s: "
                       "starting a new run", jobdir, marker.get("out_dir"), config.out_dir)
        resume = False
    if resume and resumable_run_dir(config.out_dir, marker.get("run_dir")) is None:
        logger.warning("docscrawl: JOBDIR %s: the interrupted run's directory is gone "
                       "from %s: starting a new run", jobdir, config.out_dir)
        resume = False
    queue = jobdir / "requests.queue"
    if queue.exists() and not (resume and status == "paused"):
        logger.info("docscrawl: JOBDIR %s: dropping Scrapy's request queue (%s)", jobdir,
                    "interrupted run" if resume else "new run")
        shutil.rmtree(queue)
    return JobRun(jobdir, str(marker["run_id"]) if resume else None)


def open_session(crawler: Crawler, config: CrawlConfig, job: JobRun,
                 state: Any) -> CrawlSession:
    """The crawl's session, once the spider is opened (`state`: Scrapy's JOBDIR spider
    state, which learns the run's id)."""
    settings = crawler.settings
    options = SessionOptions.from_settings(settings, jobdir=job.jobdir, run_id=job.run_id,
                                           resume=job.resume)
    session = CrawlSession(config, options, stats=crawler.stats,
                           parts=CrawlParts.of(crawler))
    session.frontier.guard.allow_link_local = settings.getbool(ALLOW_LINK_LOCAL_SETTING)
    session.politeness = politeness_summary(settings)
    if isinstance(state, dict):
        state["docscrawl_run_id"] = session.incremental.run.run_id
    logger.info("docscrawl: crawling %s into %s", config.site, config.out_dir)
    return session


def stop_non_html(headers: Any, body_length: int, request: Request, spider: Any) -> None:
    """`headers_received`: stop downloading a page body as soon as its headers say it is
    not HTML."""
    if Meta.TRACK not in request.meta:
        return
    content_type = (headers.get("Content-Type") or b"").decode("latin-1")
    if content_type and not is_html_type(content_type):
        raise StopDownload(fail=False)


async def close_crawl(admission: Admission, session: CrawlSession, reason: str) -> None:
    """The admission closes first (distributed: its last Redis calls may still log),
    then the session writes run.json."""
    closing = admission.close()
    if closing is not None:
        await maybe_deferred_to_future(closing)
    summary = session.finish(reason)
    counts = summary.get("counts", {})
    logger.info(
        "docscrawl: %s pages written to %s (events %s, skipped %s)",
        summary.get("pages_written"), session.out_dir,
        _plain(counts.get("events")), _plain(counts.get("skip_reasons")),
    )


class Resume:
    """The tracks of page responses, and what a resumed crawl asks for again (a part of
    the spider: it gets the session, the admission, the offers and the page requests)."""

    def __init__(self, session: CrawlSession, admission: Admission, offers: Offers,
                 page_request: Callable[[PageTrack], Request]) -> None:
        self.session = session
        self.admission = admission
        self.offers = offers
        self.page_request = page_request
        self._retried: set[str] = set()

    def live_track(self, track: PageTrack) -> PageTrack | None:
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

    def requests(self) -> list[Request]:
        """URLs the interrupted run left without an outcome: requests in flight at a kill
        are not in Scrapy's queue, so their pages are requested again, and URLs that were
        between two steps finish them."""
        session = self.session
        if not session.resumed:
            return []
        frontier, log = session.frontier, session.log
        requests: list[Request] = []
        for url in session.resume_open:
            if url in self._retried or not log.is_open(url):
                continue
            self._retried.add(url)
            owner = frontier.owner_of(normalize_url(url))
            if owner is not None and owner.url == url:
                requests.append(self.page_request(owner))
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
            requests.extend(self.offers.admit_or_park(
                url, offer.get("reason") or "resume", offer.get("source"),
                depth if depth is not None else 1, offer.get("lastmod"), inherit, BODY))
        return requests


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
