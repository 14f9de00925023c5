"""The `docs` spider: discovery and fetching for one documentation site.

It only finds URLs, asks the frontier whether to fetch them, follows redirects itself (so
that every hop passes the same policy) and hands parsed HTML pages to the pipelines.
Extraction, deduplication and export happen in each stage's `pipeline` module
(`docscrawl.extract.pipeline`, `docscrawl.dedup.pipeline`, `docscrawl.export.pipeline`).

The spider is the glue that composes its parts, each with public methods and the
collaborators it is given (none reaches into another): `Offers` (a discovered URL through
the frontier, the max_pages budget and the admission), `SiteResources` (robots.txt,
sitemaps, llms.txt), `PageLinks` (a parsed page's links), `Resume` (page tracks, what a
resumed crawl asks for again) and the `Admission` chosen once in `from_crawler`. Scrapy
calls back methods of the spider, which hand each response to its part.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any, Self
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Request, Response, TextResponse
from scrapy.utils.response import get_base_url
from twisted.python.failure import Failure

from docscrawl.admission.base import Admission, CrawlHooks, build_admission
from docscrawl.config import CrawlConfig, build_config
from docscrawl.crawl.crawllog import install_log_redaction, utc_now
from docscrawl.crawl.failures import NoBrowserError, classify_failure
from docscrawl.crawl.items import FetchedPage
from docscrawl.crawl.parse import response_root
from docscrawl.crawl.pool import WorkerCrashed
from docscrawl.crawl.session import CrawlSession
from docscrawl.discovery.budget import Budget
from docscrawl.discovery.frontier import origin_of
from docscrawl.discovery.pagetrack import PageTrack
from docscrawl.discovery.refresh import meta_refresh_target
from docscrawl.discovery.urls import strip_fragment, without_userinfo
from docscrawl.extract.page import page_structure
from docscrawl.extract.worker import PageFacts
from docscrawl.incremental.carry import CarriedLines
from docscrawl.incremental.rows import StateRow
from docscrawl.spiders.decision import (
    CarryOver,
    End,
    FollowRedirect,
    Inventory,
    Parse,
    Refetch,
    ResponseDecision,
    ResponseFacts,
    decide_parsed,
    decide_response,
)
from docscrawl.spiders.lifecycle import (
    JobRun,
    Resume,
    close_crawl,
    open_session,
    prepare_jobdir,
    stop_non_html,
)
from docscrawl.spiders.links import PageLinks
from docscrawl.spiders.offers import Offer, Offers
from docscrawl.spiders.pooled import PagePool, as_failure, pool_size
from docscrawl.spiders.recrawl import carry_over, header, refetch, response_facts
from docscrawl.spiders.site_resources import ResourceCallbacks, SiteResources, latency_ms
from docscrawl.vocab import Event, FailReason, Meta

logger = logging.getLogger(__name__)

TRACK = Meta.TRACK
STATE_CANONICAL = Meta.STATE_CANONICAL


class DocsSpider(scrapy.Spider):
    """Crawl one documentation site (`-a site=URL`) into the contract's files."""

    name = "docs"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.raw_args = {k: v for k, v in kwargs.items() if k != "_job"}
        super().__init__(*args)
        self.config: CrawlConfig
        self.admission: Admission
        self.job = JobRun()
        # made once the spider is opened (`_on_opened`): the session and the parts
        self.session: CrawlSession
        self.resources: SiteResources
        self.offers: Offers
        self.links: PageLinks
        self.resume: Resume
        self.workers = 0  # extraction worker processes (`spiders.pooled`)
        self.pool: PagePool

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        install_log_redaction()  # no log line shows a URL's user:password
        config = build_config(
            spider.raw_args, output_root=crawler.settings.get("DOCSCRAWL_OUTPUT_ROOT")
        )
        spider.config = config
        spider.admission = build_admission(crawler.settings, config)
        spider.job = prepare_jobdir(crawler.settings, config,
                                    resumable=spider.admission.resumable)
        spider.workers = pool_size(config, crawler.settings)
        crawler.signals.connect(spider._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(stop_non_html, signal=signals.headers_received)
        crawler.signals.connect(spider._on_closed, signal=signals.spider_closed)
        return spider

    # -- the parts, and the signals -----------------------------------------------------

    def _on_opened(self, spider: scrapy.Spider) -> None:
        """The session opens; the parts are composed around it."""
        session = self.session = open_session(self.crawler, self.config, self.job,
                                              getattr(self, "state", None))
        self.resources = SiteResources(session, self.admission, self.crawler, ResourceCallbacks(
            robots=self.parse_robots, robots_failed=self.robots_failed,
            sitemap=self.parse_sitemap, llms_txt=self.parse_llms_txt,
            failed=self.resource_failed))
        budget = (Budget[Offer]() if self.config.max_pages is not None and not session.resumed
                  and self.admission.budget_here else None)
        self.offers = Offers(session, self.admission, self.resources.park, budget=budget)
        self.links = PageLinks(session, template_warmup=self.settings.getbool(
            "DOCSCRAWL_TEMPLATE_WARMUP", True))
        self.resume = Resume(session, self.admission, self.offers, self.page_request)
        self.pool = PagePool(self.crawler, session, self.workers)
        self.admission.open(session, CrawlHooks(
            schedule=self._schedule, page_request=self.page_request,
            robots_known=self._robots_known))

    def _on_idle(self, spider: scrapy.Spider) -> None:
        """Distributed mode: an idle worker stays open while the shared crawl has work.
        A max_pages crawl hands out the candidates that waited for the pages in flight.
        A resumed crawl requests the pages the interrupted run left open, once idle."""
        if self.admission.keep_open():
            raise DontCloseSpider
        requests = self.offers.release_when_idle() or self.resume.requests()
        if requests:
            for request in requests:
                self._schedule(request)
            raise DontCloseSpider

    async def _on_closed(self, spider: scrapy.Spider, reason: str) -> None:
        self.pool.close()
        await close_crawl(self.admission, self.session, reason)

    def _schedule(self, request: Request) -> None:
        engine = self.crawler.engine
        assert engine is not None
        engine.crawl(request)

    def _robots_known(self, origin: str) -> bool:
        """True when the origin's robots.txt is known here; else request it (once)."""
        asking = self.resources.robots_known(origin)
        for request in asking or ():
            self._schedule(request)
        return asking is None

    async def start(self) -> AsyncIterator[Request]:
        """Seed the crawl; robots.txt of the seed's origin is fetched first."""
        seed = strip_fragment(self.session.config.site)
        if self.session.resumed:  # robots.txt is not kept: fetch it again (and sitemaps)
            for request in self.resources.robots_request_once(origin_of(seed)):
                yield request
        for request in self.offers.offer(seed, "seed", None, 0):
            yield request

    # -- site resources: Scrapy calls back the spider, its part answers -------------------

    def parse_robots(self, response: Response) -> Iterable[Request]:
        return self.resources.parse_robots(response)

    def robots_failed(self, failure: Failure) -> Iterable[Request]:
        return self.resources.robots_failed(failure)

    def parse_sitemap(self, response: Response) -> Iterable[Request]:
        return self.resources.parse_sitemap(response, self.offers.offer)

    def parse_llms_txt(self, response: Response) -> Iterable[Request]:
        return self.resources.parse_llms_txt(response, self.offers.offer)

    def resource_failed(self, failure: Failure) -> None:
        self.resources.resource_failed(failure)

    def page_request(self, track: PageTrack) -> Request:
        """The request fetching a claimed page, at its key (conditional when the state
        knows it)."""
        url = track.key
        meta: dict[str, Any] = {TRACK: track, "handle_httpstatus_all": True,
                                "dont_redirect": True}
        row = self.session.incremental.row_for(url)
        headers = self.session.incremental.conditional_headers(row)
        if row is not None and row.can_carry_over:
            meta[STATE_CANONICAL] = row.canonical_url
        sample = self.session.template_sample or ()  # fetched first: pages wait for them
        callback = self.parse_page_pooled if self.workers else self.parse_page
        return Request(url, callback=callback, errback=self.page_failed,
                       priority=-track.depth + (track.key in sample), meta=meta,
                       headers=headers)

    # -- pages ------------------------------------------------------------------------

    def parse_page(self, response: Response) -> Iterable[Any]:
        """A page response: redirect, HTTP error, non-HTML, or an HTML page to extract.
        With a max_pages budget, the candidates whose turn came follow its links."""
        track = self.resume.live_track(response.meta[TRACK])
        if track is None:
            return
        yield from self._parse_page(track, response, *self._decide(response))
        yield from self.offers.answered(track.key)

    async def parse_page_pooled(self, response: Response) -> list[Any]:
        """`parse_page`, with an HTML page's parse and extraction in a worker process
        (`-a workers=N`, `spiders.pooled`). A page the worker finds sparse goes back to
        the render middleware; a page whose worker died ends `failed` `worker_crashed`."""
        track = self.resume.live_track(response.meta[TRACK])
        if track is None:
            return []
        facts, decision, row, lines = self._decide(response)
        worked: PageFacts | None = None
        if isinstance(decision, Parse) and self.pool.takes(response):
            assert isinstance(response, TextResponse)
            try:
                worked, again = await self.pool.facts(response)
            except WorkerCrashed as exc:
                decision = End(Event.FAILED, FailReason.WORKER_CRASHED, str(exc),
                               name_fetch_mode=True, name_chain=False)
            except NoBrowserError as exc:  # sparse, and no browser: as a download fails
                return self.page_failed(as_failure(exc, response))
            else:
                if again is not None:  # sparse: fetched again (rendered, or deferred)
                    return [again]
        return [*self._parse_page(track, response, facts, decision, row, lines, worked),
                *self.offers.answered(track.key)]

    def _decide(self, response: Response) -> tuple[ResponseFacts, ResponseDecision,
                                                   StateRow | None, CarriedLines | None]:
        facts, row, lines = response_facts(self.session, response)
        return facts, decide_response(facts), row, lines

    def _parse_page(self, track: PageTrack, response: Response, facts: ResponseFacts,
                    decision: ResponseDecision, row: StateRow | None, lines: CarriedLines | None,
                    worked: PageFacts | None = None) -> Iterable[Any]:
        """The glue: record the fetch, then act on `decide_response` / `decide_parsed`."""
        log = self.session.log
        fetch_mode = "browser" if "playwright" in response.flags else "http"
        log.record(track.url, Event.FETCHED, status=response.status, fetch_mode=fetch_mode,
                   redirect_chain=track.redirect_chain, elapsed_ms=latency_ms(response),
                   size=len(response.body), response_url=response.url)
        if isinstance(decision, Parse):
            assert isinstance(response, TextResponse)  # Parse: decide_response saw is_text
            yield from self._parse_html(track, response, facts.content_type, fetch_mode,
                                        decision.digest, worked)
        elif isinstance(decision, CarryOver):
            assert row is not None and lines is not None
            yield from carry_over(self.offers, track, response, row, decision.digest, lines)
        elif isinstance(decision, Refetch):
            yield refetch(response)
        elif isinstance(decision, FollowRedirect):
            yield from self._follow_redirect(track, response, decision.target)
        else:
            self._end(track, response, decision, fetch_mode)

    def _parse_html(self, track: PageTrack, response: TextResponse, content_type: str,
                    fetch_mode: str, digest: str, worked: PageFacts | None) -> Iterable[Any]:
        """An HTML page, parsed once (here, or in a worker: `worked`): links, then the item."""
        root = response_root(response) if worked is None else None
        refresh = (worked.refresh if worked is not None
                   else meta_refresh_target(root, get_base_url(response)))
        after = decide_parsed(response.url, refresh, extract=self.config.extract)
        if isinstance(after, FollowRedirect):
            yield from self._follow_redirect(track, response, after.target,
                                             reason=after.reason)
            return
        track.observe(response.url)
        structure, error = None, worked.error if worked is not None else None
        if root is not None:
            try:
                structure = page_structure(root, response.url, profile=self.config.profile)
            except Exception as exc:  # one broken page must not stop the crawl
                logger.exception("docscrawl: cannot analyse %s", response.url)
                error = f"{type(exc).__name__}: {exc}"[:300]
        if error is not None:
            self._end(track, response, End(Event.FAILED, FailReason.PARSE_ERROR, error,
                                           name_fetch_mode=True, name_chain=False), fetch_mode)
            return
        # Links first: in distributed mode they must be queued before the page's outcome.
        if structure is not None:
            self.session.frontier.params.learn_generator(structure.profile)
            found = self.links.found(track, root, structure, rendered=fetch_mode == "browser")
        else:
            assert worked is not None and worked.links is not None
            self.session.frontier.params.learn_generator(worked.generator)
            found = self.links.found_from(track, worked.links)
        # The pages it links to keep its URL as their `from` until the crawl ends: one
        # string object, the track's own, rather than one more per page.
        page_url = track.url if response.url == track.url else response.url
        follow = self.offers.follow(found, page_url, track.depth + 1)
        if isinstance(after, Inventory):  # the `fetched` event ends the page
            self.session.log.settle(track.url)
            yield from follow
            return
        page = FetchedPage(
            track=track,
            final_url=response.url,
            status=response.status,
            content_type=content_type,
            etag=header(response, "ETag"),
            last_modified=header(response, "Last-Modified"),
            fetch_mode=fetch_mode,
            retrieved_at=utc_now(),
            root=root,
            elapsed_ms=latency_ms(response),
            size=len(response.body),
            body_digest=digest,
            render_reason=response.meta.get("render_reason"),
            structure=structure,
            warnings=list(response.meta.get("render_warnings") or ()),
            found_links=found,
        )
        if worked is not None:  # extracted in the worker, with the frozen table
            page.pooled, page.extract = True, worked.extract
            page.extract_error, page.signals = worked.extract_error, worked.signals
        # The item holds the tree now, and the extraction pipeline lets it go: nothing here
        # may keep it alive while the pipelines run (the response lives on until then).
        del root, structure
        response._cached_selector = None
        yield page
        yield from follow

    def _end(self, track: PageTrack, response: Response, end: End, fetch_mode: str) -> None:
        """The one way a page response ends without a page: its terminal event, and what
        the incremental state does with the page."""
        self.session.log.record(
            track.url, end.event, reason=end.reason, rule=end.rule, status=response.status,
            redirect_chain=track.redirect_chain if end.name_chain else (),
            fetch_mode=fetch_mode if end.name_fetch_mode else None)
        if end.state == "gone":
            self.session.incremental.gone(track.key, end.reason)
        elif end.state == "kept":
            self.session.incremental.kept(track.key)

    def _follow_redirect(self, track: PageTrack, response: Response, location: str, *,
                         reason: str = "redirect") -> Iterable[Request]:
        """Every hop (HTTP 3xx or meta refresh) is checked like a discovered link. The
        source ends with the outcome of the page the chain leads to (CrawlLog.redirected):
        never a `duplicate` of a URL that has no page. At most REDIRECT_MAX_TIMES hops."""
        log = self.session.log
        target = without_userinfo(strip_fragment(location))
        chain = (*track.redirect_chain, response.url)
        limit = self.crawler.settings.getint("REDIRECT_MAX_TIMES")
        if target in chain or len(chain) > limit:
            reason = "redirect_loop" if target in chain else "too_many_redirects"
            log.record(track.url, Event.FAILED, reason=reason,
                       rule=f"{len(chain)} hops (limit {limit}), next {target}",
                       status=response.status, redirect_chain=chain)
            return
        refusal = self.offers.redirect_refusal(target)
        if refusal is not None:
            reason, rule = refusal
            self.session.incremental.gone(track.key, reason)
            log.record(track.url, Event.SKIPPED, reason=reason, rule=rule, status=response.status,
                       redirect_chain=chain, redirect_to=target)
            return
        track.redirect_chain = chain
        follow = self.offers.offer(target, "redirect", response.url, track.depth,
                                   inherit=track)
        self.admission.redirects.redirected(track.url, track.key, target, reason=reason,
                                            status=response.status, chain=chain)
        yield from follow

    def page_failed(self, failure: Failure) -> list[Request]:
        """Download errors: too large, DNS, timeouts, refused connections..."""
        request = failure.request  # type: ignore[attr-defined]
        track = self.resume.live_track(request.meta[TRACK])
        if track is None:
            return []
        reason, rule = classify_failure(failure)
        event = "skipped" if reason == "too_large" else "failed"
        refused = (self.session.frontier.guard.refused_at_connect(
            urlsplit(request.url).hostname or "") if reason in ("dns", "render_error")
            else None)
        if refused:  # its DNS answer turned private after the URL was admitted
            event, reason, rule = "skipped", "private_address", refused
        if reason == "too_large" and "DOCSCRAWL_MAX_HEADER_BYTES" not in rule:
            rule = f"DOWNLOAD_MAXSIZE={self.crawler.settings.getint('DOWNLOAD_MAXSIZE')}"
        self.session.log.record(track.url, event, reason=reason, rule=rule,
                                redirect_chain=track.redirect_chain)
        self.session.incremental.kept(track.key)
        return self.offers.answered(track.key)

