"""The `docs` spider: discovery and fetching for one documentation site.

It only finds URLs, asks the frontier whether to fetch them, follows redirects itself (so
that every hop passes the same policy) and hands parsed HTML pages to the pipelines.
Extraction, deduplication and export happen in `docscrawl.pipelines`.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Self
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, StopDownload
from scrapy.http import Request, Response, TextResponse
from scrapy.utils.job import job_dir
from scrapy.utils.response import get_base_url
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.python.failure import Failure

from docscrawl.config import CrawlConfig, build_config
from docscrawl.crawl.crawllog import utc_now
from docscrawl.crawl.failures import classify_failure
from docscrawl.crawl.items import CarriedPage, FetchedPage
from docscrawl.crawl.parse import response_root
from docscrawl.crawl.politeness import politeness_summary
from docscrawl.crawl.resume import read_marker
from docscrawl.crawl.session import CrawlSession, SessionOptions
from docscrawl.crawl.template_warmup import sample_of
from docscrawl.discovery.frontier import Action, origin_of
from docscrawl.discovery.hashroutes import hash_route_links
from docscrawl.discovery.pagetrack import PageTrack, track_from_fields
from docscrawl.discovery.refresh import meta_refresh_target
from docscrawl.discovery.urls import is_crawlable_url, normalize_url, strip_fragment
from docscrawl.extract.links import discovery_links
from docscrawl.extract.metadata import canonical_href
from docscrawl.extract.page import PageStructure, page_structure
from docscrawl.extract.quality import binary_reason
from docscrawl.incremental.recrawl import body_hash
from docscrawl.incremental.state import StateRow
from docscrawl.spiders.admission import Admission, CrawlHooks, build_admission
from docscrawl.spiders.site_resources import (
    REDIRECT_STATUSES,
    SiteResources,
    latency_ms,
)
from docscrawl.vocab import Event, FailReason, Meta, SkipReason, http_failure

logger = logging.getLogger(__name__)

TRACK = Meta.TRACK
STATE_CANONICAL = Meta.STATE_CANONICAL
HTML_TYPES = ("text/html", "application/xhtml+xml")
REGION_TO_DISCOVERY = {
    "sidebar_navigation": "sidebar",
    "table_of_contents": "table_of_contents",
    "main_content": "in_page",
    "pagination": "pagination",
    "breadcrumb": "breadcrumb",
    "primary_navigation": "primary_navigation",
    "footer_navigation": "footer_navigation",
    "related_content": "in_page",
    "unknown": "in_page",
}


def is_html_type(content_type: str) -> bool:
    """True for HTML and XHTML media types."""
    return content_type.split(";", 1)[0].strip().lower() in HTML_TYPES


class DocsSpider(SiteResources, scrapy.Spider):
    """Crawl one documentation site (`-a site=URL`) into the contract's files."""

    name = "docs"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.raw_args = {k: v for k, v in kwargs.items() if k != "_job"}
        super().__init__(*args)
        self.session: CrawlSession
        self.config: CrawlConfig
        self._resume_retried: set[str] = set()
        self._jobdir: Path | None = None
        self._resume_run: tuple[str | None, bool] = (None, False)
        self.admission: Admission
        self.offer = self._discover

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        config = build_config(
            spider.raw_args, output_root=crawler.settings.get("DOCSCRAWL_OUTPUT_ROOT")
        )
        spider.config = config
        spider.admission = build_admission(crawler.settings, config)
        spider._prepare_jobdir(crawler)
        crawler.signals.connect(spider._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._on_headers, signal=signals.headers_received)
        crawler.signals.connect(spider._on_closed, signal=signals.spider_closed)
        return spider

    async def start(self) -> AsyncIterator[Request]:
        """Seed the crawl; robots.txt of the seed's origin is fetched first."""
        seed = strip_fragment(self.session.config.site)
        if self.session.resumed:  # robots.txt is not kept: fetch it again (and sitemaps)
            for request in self.robots_request_once(origin_of(seed)):
                yield request
        for request in self._discover(seed, "seed", None, 0):
            yield request

    # -- discovery ------------------------------------------------------------------

    def _discover(
        self, url: str, reason: str, source: str | None, depth: int, *,
        lastmod: str | None = None, inherit: PageTrack | None = None,
    ) -> list[Request]:
        """Offer one discovered URL to the frontier and act on its verdict."""
        verdict = self.session.frontier.offer(url, reason, source, depth, lastmod=lastmod,
                                              inherit=inherit)
        if verdict.first:
            self.session.journal_offer(url, reason, source, depth, lastmod, inherit)
            self.admission.discovered(url, {"reason": reason, "from": source})
        if verdict.action == Action.KNOWN:
            return []
        if verdict.action == Action.SKIP:
            self.admission.refused(url, verdict, {"reason": reason, "from": source})
            return []
        return self._admit_or_park(url, reason, source, depth, lastmod, inherit)

    def _admit_or_park(
        self, url: str, reason: str, source: str | None, depth: int,
        lastmod: str | None, inherit: PageTrack | None,
    ) -> list[Request]:
        origin = origin_of(url)
        if origin not in self.session.frontier.robots:
            self._parked.setdefault(origin, []).append(
                lambda: self._admit_or_park(url, reason, source, depth, lastmod, inherit)
            )
            return self.robots_request_once(origin)
        verdict = self.session.frontier.admit(
            url, reason, source, depth, lastmod=lastmod, inherit=inherit
        )
        discovery = {"reason": reason, "from": source}
        if verdict.action == Action.SKIP:
            self.admission.refused(url, verdict, discovery)
            return []
        assert verdict.track is not None
        return self.admission.admitted(url, verdict.track, inherited=inherit is not None,
                                       discovery=discovery)

    def page_request(self, track: PageTrack, url: str) -> Request:
        """The request fetching a claimed page (conditional when the state knows it)."""
        meta: dict[str, Any] = {TRACK: track, "handle_httpstatus_all": True,
                                "dont_redirect": True}
        row = self.session.incremental.row_for(url)
        headers = self.session.incremental.conditional_headers(row)
        if row is not None and row.can_carry_over:
            meta[STATE_CANONICAL] = row.canonical_url
        sample = self.session.template_sample or ()  # fetched first: pages wait for them
        return Request(url, callback=self.parse_page, errback=self.page_failed,
                       priority=-track.depth + (track.key in sample), meta=meta,
                       headers=headers)

    def _sample_key(self, url: str) -> str | None:
        """The frontier's key of an in-scope URL (template warm-up sample), else None."""
        frontier = self.session.frontier
        if not frontier.scope.decide(url).allowed:
            return None
        try:
            return normalize_url(frontier.params.identify(url)[0])
        except ValueError:
            return None

    # -- robots.txt -----------------------------------------------------------------

    # -- pages ------------------------------------------------------------------------

    def parse_page(self, response: Response) -> Iterable[Any]:
        """A page response: redirect, HTTP error, non-HTML, or an HTML page to extract."""
        track = self._live_track(response.meta[TRACK])
        if track is None:
            return
        log = self.session.log
        fetch_mode = "browser" if "playwright" in response.flags else "http"
        log.record(track.url, "fetched", status=response.status, fetch_mode=fetch_mode,
                   redirect_chain=track.redirect_chain, elapsed_ms=latency_ms(response),
                   size=len(response.body), response_url=response.url)
        row = (self.session.incremental.row_for(response.meta[STATE_CANONICAL])
               if STATE_CANONICAL in response.meta else None)
        if response.status == 304 and STATE_CANONICAL in response.meta:
            yield from self._carry_over(track, response, row, None)
            return
        if response.status in REDIRECT_STATUSES and response.headers.get("Location"):
            location = response.headers["Location"].decode("latin-1")
            yield from self._follow_redirect(track, response, urljoin(response.url, location))
            return
        if not 200 <= response.status < 300:
            self._end(track, response, Event.FAILED, http_failure(response.status),
                      fetch_mode=fetch_mode)
            if response.status in (404, 410):
                self.session.incremental.gone(track.key)
            else:
                self.session.incremental.kept(track.key)
            return
        digest = body_hash(response.body)
        if row is not None and row.body_hash == digest:
            yield from self._carry_over(track, response, row, digest)
            return
        content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
        refused = body_refusal(response, content_type)
        if refused is not None:
            self._end(track, response, *refused)
            return
        root = response_root(response)
        base_url = get_base_url(response)
        refresh = meta_refresh_target(root, base_url)
        if refresh and strip_fragment(refresh) != strip_fragment(response.url):
            yield from self._follow_redirect(track, response, refresh, reason="meta_refresh")
            return
        track.observe(response.url)
        try:
            structure = page_structure(root, response.url, profile=self.config.profile)
        except Exception as exc:  # one broken page must not stop the crawl
            logger.exception("docscrawl: cannot analyse %s", response.url)
            self._end(track, response, Event.FAILED, FailReason.PARSE_ERROR,
                      f"{type(exc).__name__}: {exc}"[:300], fetch_mode=fetch_mode, chain=False)
            return
        self.session.frontier.params.learn_generator(structure.profile)
        # The pages it links to keep its URL as their `from` until the crawl ends: one
        # string object, the track's own, rather than one more per page.
        page_url = track.url if response.url == track.url else response.url
        # Links first: in distributed mode they must be queued before the page's outcome.
        follow = list(self._follow_links(track, root, structure, page_url))
        if fetch_mode == "browser":  # client-side router links exist in a rendered DOM only
            for url, region in hash_route_links(root, structure.base_url,
                                                region_map=structure.regions):
                follow.extend(self._discover(url, REGION_TO_DISCOVERY.get(region, "in_page"),
                                             page_url, track.depth + 1))
        if not self.config.extract:  # inventory crawl: the `fetched` event ends the page
            log.settle(track.url)
            yield from follow
            return
        page = FetchedPage(
            track=track,
            final_url=response.url,
            status=response.status,
            content_type=content_type,
            etag=_header(response, "ETag"),
            last_modified=_header(response, "Last-Modified"),
            fetch_mode=fetch_mode,
            retrieved_at=utc_now(),
            root=root,
            elapsed_ms=latency_ms(response),
            size=len(response.body),
            render_reason=response.meta.get("render_reason"),
            structure=structure,
            warnings=list(response.meta.get("render_warnings") or ()),
        )
        # The item holds the tree now, and the extraction pipeline lets it go: nothing here
        # may keep it alive while the pipelines run (the response lives on until then).
        root = structure = None
        response._cached_selector = None
        yield page
        yield from follow

    def _end(self, track: PageTrack, response: Response, event: Event, reason: str,
             rule: str | None = None, *, fetch_mode: str | None = None,
             chain: bool = True) -> None:
        """The one way a page response ends without a page: its terminal event.
        `fetch_mode`, `chain`: whether the line names them (as each exit always did)."""
        self.session.log.record(
            track.url, event, reason=reason, rule=rule, status=response.status,
            redirect_chain=track.redirect_chain if chain else (), fetch_mode=fetch_mode)

    def _carry_over(self, track: PageTrack, response: Response, row: StateRow | None,
                    digest: str | None) -> Iterable[Any]:
        """An unchanged page: its stored record goes out as is; its stored links are
        followed as if the page had been parsed."""
        if row is None or not row.can_carry_over:
            self.session.log.record(track.url, "failed", reason="state_missing",
                                    rule="HTTP 304 for a page the state no longer holds",
                                    status=response.status)
            return
        track.observe(response.url)
        follow: list[Request] = []
        record = row.page_record or {}
        for link in record.get("links") or []:
            url = link.get("url") or ""
            if link.get("target") != "fragment" and is_crawlable_url(url):
                reason = REGION_TO_DISCOVERY.get(link.get("region") or "", "in_page")
                follow.extend(self._discover(strip_fragment(url), reason, response.url,
                                             track.depth + 1))
        yield CarriedPage(
            track=track, row=row, final_url=response.url, status=response.status,
            etag=_header(response, "ETag"), last_modified=_header(response, "Last-Modified"),
            fetch_mode="http", body_digest=digest, elapsed_ms=latency_ms(response),
            size=len(response.body), record=record,
        )
        yield from follow

    def _follow_links(self, track: PageTrack, root: Any, structure: PageStructure,
                      page_url: str) -> Iterable[Request]:
        base_url = structure.base_url
        canonical = canonical_href(root, base_url)
        if canonical and is_crawlable_url(canonical):
            yield from self._discover(strip_fragment(canonical), "canonical", page_url,
                                      track.depth + 1)
        links = discovery_links(root, base_url, region_map=structure.regions)
        if (track.depth == 0 and self.session.template_sample is None  # the seed
                and self.settings.getbool("DOCSCRAWL_TEMPLATE_WARMUP", True)):
            self.session.template_sample = sample_of(track.key, [lk.url for lk in links],
                                                     self._sample_key)
        for link in links:
            reason = REGION_TO_DISCOVERY.get(link.region, "in_page")
            yield from self._discover(link.url, reason, page_url, track.depth + 1)

    def _follow_redirect(self, track: PageTrack, response: Response, location: str, *,
                         reason: str = "redirect") -> Iterable[Request]:
        """Every hop (HTTP 3xx or meta refresh) is checked like a discovered link. The
        source ends with the outcome of the page the chain leads to (CrawlLog.redirected):
        never a `duplicate` of a URL that has no page. At most REDIRECT_MAX_TIMES hops."""
        log = self.session.log
        target = strip_fragment(location)
        chain = (*track.redirect_chain, response.url)
        limit = self.crawler.settings.getint("REDIRECT_MAX_TIMES")
        if target in chain or len(chain) > limit:
            reason = "redirect_loop" if target in chain else "too_many_redirects"
            log.record(track.url, "failed", reason=reason,
                       rule=f"{len(chain)} hops (limit {limit}), next {target}",
                       status=response.status, redirect_chain=chain)
            return
        refusal = self._redirect_refusal(target)
        if refusal is not None:
            reason, rule = refusal
            self.session.incremental.gone(track.key)
            log.record(track.url, "skipped", reason=reason, rule=rule, status=response.status,
                       redirect_chain=chain, redirect_to=target)
            return
        track.redirect_chain = chain
        follow = self._discover(target, "redirect", response.url, track.depth, inherit=track)
        self.admission.redirected(track, target, reason=reason, status=response.status,
                                  chain=chain)
        yield from follow

    def _redirect_refusal(self, target: str) -> tuple[str, str] | None:
        """Why a redirect target may not be followed: offsite, private address, bad URL."""
        frontier = self.session.frontier
        if not is_crawlable_url(target):
            return "offsite_redirect", f"redirect to a non-http URL: {target}"
        decision = frontier.scope.decide(target)
        if not decision.allowed:
            return "offsite_redirect", f"{decision.rule} (redirect to {target})"
        blocked = frontier.guard.check(urlsplit(target).hostname or "")
        if blocked:
            return "private_address", f"{blocked} (redirect to {target})"
        return None

    def page_failed(self, failure: Failure) -> None:
        """Download errors: too large, DNS, timeouts, refused connections..."""
        request = failure.request  # type: ignore[attr-defined]
        track = self._live_track(request.meta[TRACK])
        if track is None:
            return
        reason, rule = classify_failure(failure)
        event = "skipped" if reason == "too_large" else "failed"
        refused = (self.session.frontier.guard.refused_at_connect(
            urlsplit(request.url).hostname or "") if reason in ("dns", "render_error")
            else None)
        if refused:  # its DNS answer turned private after the URL was admitted
            event, reason, rule = "skipped", "private_address", refused
        if reason == "too_large":
            rule = f"DOWNLOAD_MAXSIZE={self.crawler.settings.getint('DOWNLOAD_MAXSIZE')}"
        self.session.log.record(track.url, event, reason=reason, rule=rule,
                                redirect_chain=track.redirect_chain)
        self.session.incremental.kept(track.key)

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
                log.record(url, "skipped", reason="duplicate_url", rule=owner.key)
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
                depth if depth is not None else 1, offer.get("lastmod"), inherit))
        return requests

    # -- signals ----------------------------------------------------------------------

    def _on_opened(self, spider: scrapy.Spider) -> None:
        settings = self.crawler.settings
        state = getattr(self, "state", None)  # Scrapy's JOBDIR spider state
        run_id, resume = self._resume_run
        options = SessionOptions.from_settings(
            settings, jobdir=self._jobdir, run_id=run_id, resume=resume)
        self.session = CrawlSession(self.config, options, stats=self.crawler.stats)
        self.session.politeness = politeness_summary(settings)
        if isinstance(state, dict):
            state["docscrawl_run_id"] = self.session.incremental.run.run_id
        self.admission.open(self.session, CrawlHooks(
            schedule=self._schedule, page_request=lambda track: self.page_request(track, track.key),
            robots_known=self._seed_robots_known))
        logger.info("docscrawl: crawling %s into %s", self.config.site, self.config.out_dir)

    def _prepare_jobdir(self, crawler: Crawler) -> None:
        """Before Scrapy's scheduler opens JOBDIR: find the unfinished run it holds (its
        marker survives a kill -9; Scrapy's spider.state does not) and keep Scrapy's request
        queue only after a clean pause. After a kill the queue files are torn (Scrapy
        writes their index at close) and the resumed run requests the open pages itself."""
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
        self._resume_run = (str(marker["run_id"]), True) if resume else (None, False)
        queue = jobdir / "requests.queue"
        if queue.exists() and not (resume and status == "paused"):
            logger.info("docscrawl: JOBDIR %s: dropping Scrapy's request queue (%s)", jobdir,
                        "interrupted run" if resume else "new run")
            shutil.rmtree(queue)

    def _on_idle(self, spider: scrapy.Spider) -> None:
        """Distributed mode: an idle worker stays open while the shared crawl has work.
        A resumed crawl requests the pages the interrupted run left open, once idle."""
        if self.admission.keep_open():
            raise DontCloseSpider
        if self.session.resumed:
            requests = self._resume_requests()
            if requests:
                engine = self.crawler.engine
                assert engine is not None
                for request in requests:
                    engine.crawl(request)
                raise DontCloseSpider

    def _on_headers(self, headers: Any, body_length: int, request: Request,
                    spider: scrapy.Spider) -> None:
        """Stop downloading a page body as soon as its headers say it is not HTML."""
        if TRACK not in request.meta:
            return
        content_type = (headers.get("Content-Type") or b"").decode("latin-1")
        if content_type and not is_html_type(content_type):
            raise StopDownload(fail=False)

    def _on_closed(self, spider: scrapy.Spider, reason: str) -> Deferred[None]:
        """The admission closes first (distributed: its last Redis calls may still log),
        then the session writes run.json."""
        closing = maybeDeferred(self.admission.close)
        closing.addCallback(lambda _: self._finish(reason))
        return closing

    def _finish(self, reason: str) -> None:
        summary = self.session.finish(reason)
        counts = summary.get("counts", {})
        logger.info(
            "docscrawl: %s pages written to %s (events %s, skipped %s)",
            summary.get("pages_written"), self.session.out_dir,
            counts.get("events"), counts.get("skip_reasons"),
        )

    def _schedule(self, request: Request) -> None:
        engine = self.crawler.engine
        assert engine is not None
        engine.crawl(request)

    def _seed_robots_known(self) -> bool:
        """True when the seed origin's robots.txt is known here; else request it (once)."""
        origin = origin_of(self.config.site)
        if origin in self.session.frontier.robots:
            return True
        for request in self.robots_request_once(origin):
            self._schedule(request)
        return False


def body_refusal(response: Response, content_type: str) -> tuple[Event, str, str] | None:
    """Why a 2xx body is no HTML page (event, reason, rule), or None when it is one."""
    if "download_stopped" in response.flags or not isinstance(response, TextResponse) or (
        content_type and not is_html_type(content_type)
    ):
        return Event.SKIPPED, SkipReason.NON_HTML, f"Content-Type: {content_type or 'unknown'}"
    if not response.body.strip():
        return Event.FAILED, FailReason.EMPTY_BODY, "HTTP 200 with no content"
    binary = binary_reason(response.body)
    if binary:
        return Event.SKIPPED, SkipReason.NON_HTML, binary
    return None


def _header(response: Response, name: str) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
