"""The `docs` spider: discovery and fetching for one documentation site.

It only finds URLs, asks the frontier whether to fetch them, follows redirects itself (so
that every hop passes the same policy) and hands parsed HTML pages to the pipelines.
Extraction, deduplication and export happen in `docscrawl.pipelines`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Self
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Request, Response, TextResponse
from scrapy.utils.response import get_base_url
from twisted.python.failure import Failure

from docscrawl.config import CrawlConfig, build_config
from docscrawl.crawl.crawllog import install_log_redaction, utc_now
from docscrawl.crawl.failures import classify_failure
from docscrawl.crawl.items import CarriedPage, FetchedPage
from docscrawl.crawl.parse import response_root
from docscrawl.crawl.session import CrawlSession
from docscrawl.crawl.template_warmup import sample_of
from docscrawl.discovery.budget import Budget, declared_indexes, is_link_listing, link_rank
from docscrawl.discovery.frontier import Action, origin_of
from docscrawl.discovery.hashroutes import hash_route_links
from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack
from docscrawl.discovery.refresh import meta_refresh_target
from docscrawl.discovery.urls import (
    is_crawlable_url,
    normalize_url,
    strip_fragment,
    without_userinfo,
)
from docscrawl.extract.links import discovery_links
from docscrawl.extract.metadata import canonical_href
from docscrawl.extract.page import PageStructure, page_structure
from docscrawl.incremental.carry import CarriedLines
from docscrawl.incremental.recrawl import body_hash
from docscrawl.incremental.state import FoundLink, StateRow
from docscrawl.spiders.admission import Admission, LocalAdmission, build_admission
from docscrawl.spiders.decision import (
    CarryOver,
    End,
    FollowRedirect,
    Inventory,
    Parse,
    Refetch,
    ResponseFacts,
    StoredPage,
    decide_parsed,
    decide_response,
)
from docscrawl.spiders.lifecycle import CrawlLifecycle
from docscrawl.spiders.site_resources import SiteResources, latency_ms
from docscrawl.vocab import Event, FailReason, Meta

logger = logging.getLogger(__name__)

# what a held candidate is admitted with: url, reason, source, depth, lastmod
Offer = tuple[str, str, str | None, int, str | None]

TRACK = Meta.TRACK
STATE_CANONICAL = Meta.STATE_CANONICAL
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


class DocsSpider(CrawlLifecycle, SiteResources, scrapy.Spider):
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
        # max_pages: candidates wait here and go out by navigation rank (discovery.budget)
        self._budget: Budget[Offer] | None = None
        self._index_keys: set[str] = set()  # pages some page declares its index

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        install_log_redaction()  # no log line shows a URL's user:password
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
        if (self.config.max_pages is not None and not self.session.resumed
                and isinstance(self.admission, LocalAdmission)):
            self._budget = Budget[Offer]()
        if self.session.resumed:  # robots.txt is not kept: fetch it again (and sitemaps)
            for request in self.robots_request_once(origin_of(seed)):
                yield request
        for request in self._discover(seed, "seed", None, 0):
            yield request

    # -- discovery ------------------------------------------------------------------

    def _discover(
        self, url: str, reason: str, source: str | None, depth: int, *,
        lastmod: str | None = None, inherit: PageTrack | None = None,
        rank: int | None = None,
    ) -> list[Request]:
        """Offer one discovered URL to the frontier and act on its verdict. A
        `user:password@` in it is dropped first: never sent, never logged."""
        url = without_userinfo(url)
        verdict = self.session.frontier.offer(url, reason, source, depth, lastmod=lastmod,
                                              inherit=inherit)
        if verdict.first:
            self.session.journal_offer(url, reason, source, depth, lastmod, inherit)
            self.admission.discovered(url, {"reason": reason, "from": source})
        if rank is None:
            rank = link_rank(reason)
        if verdict.action == Action.KNOWN:
            if self._budget is not None and self._budget.promote(url, rank, depth):
                return self._release()
            return []
        if verdict.action == Action.SKIP:
            self.admission.refused(url, verdict, {"reason": reason, "from": source})
            return []
        return self._admit_or_park(url, reason, source, depth, lastmod, inherit, rank)

    def _admit_or_park(
        self, url: str, reason: str, source: str | None, depth: int,
        lastmod: str | None, inherit: PageTrack | None, rank: int,
    ) -> list[Request]:
        origin = origin_of(url)
        if origin not in self.session.frontier.robots:
            self._parked.setdefault(origin, []).append(
                lambda: self._admit_or_park(url, reason, source, depth, lastmod, inherit, rank)
            )
            return self.robots_request_once(origin)
        if self._budget is not None and inherit is None and self._needs_slot(url):
            self._budget.hold(url, rank, depth, (url, reason, source, depth, lastmod))
            return self._release()
        return self._admit(url, reason, source, depth, lastmod, inherit)

    def _admit(
        self, url: str, reason: str, source: str | None, depth: int,
        lastmod: str | None, inherit: PageTrack | None = None,
        place: tuple[int, int] | None = None,
    ) -> list[Request]:
        """The frontier's last word on `url`: a skip, or the requests fetching it."""
        verdict = self.session.frontier.admit(
            url, reason, source, depth, lastmod=lastmod, inherit=inherit
        )
        discovery: DiscoveryRecord = {"reason": reason, "from": source}
        if verdict.action == Action.SKIP:
            self.admission.refused(url, verdict, discovery)
            return []
        assert verdict.track is not None
        if place is not None and self._budget is not None:
            self._budget.started(verdict.track.key, place)
        return self.admission.admitted(url, verdict.track, inherited=inherit is not None,
                                       discovery=discovery)

    # -- the max_pages budget (docscrawl.discovery.budget) ------------------------------

    def _needs_slot(self, url: str) -> bool:
        """True when admitting `url` now would take a max_pages slot (robots.txt allows
        it, no page claimed its key, slots are left): it waits for its turn instead."""
        frontier = self.session.frontier
        if frontier.max_pages is None or frontier.admitted >= frontier.max_pages:
            return False
        if frontier.robots_verdict(url) is not None:
            return False
        try:
            return frontier.owner_of(frontier.page_key(url)) is None
        except ValueError:
            return False

    def _release(self) -> list[Request]:
        """Hand out the candidates whose turn came, while slots are left; once the budget
        is spent, every candidate left is refused (`max_pages`)."""
        budget = self._budget
        if budget is None or not len(budget):
            return []
        frontier = self.session.frontier
        requests: list[Request] = []
        while frontier.max_pages is not None and frontier.admitted < frontier.max_pages:
            taken = budget.take()
            if taken is None:
                return requests
            place, offer = taken
            requests.extend(self._admit(*offer, place=place))
        for offer in budget.drain():
            requests.extend(self._admit(*offer))
        return requests

    def _release_when_idle(self) -> list[Request]:
        """The engine is idle: no page is in flight any more; the next rank may go."""
        if self._budget is None:
            return []
        self._budget.settle()
        return self._release()

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
        """A page response: redirect, HTTP error, non-HTML, or an HTML page to extract.
        With a max_pages budget, the candidates whose turn came follow its links."""
        track = self._live_track(response.meta[TRACK])
        if track is None:
            return
        yield from self._parse_page(track, response)
        if self._budget is not None:
            self._budget.answered(track.key)
            yield from self._release()

    def _parse_page(self, track: PageTrack, response: Response) -> Iterable[Any]:
        """The glue: record the fetch, then act on `decide_response` / `decide_parsed`."""
        log = self.session.log
        fetch_mode = "browser" if "playwright" in response.flags else "http"
        log.record(track.url, Event.FETCHED, status=response.status, fetch_mode=fetch_mode,
                   redirect_chain=track.redirect_chain, elapsed_ms=latency_ms(response),
                   size=len(response.body), response_url=response.url)
        facts, row, lines = self._response_facts(response)
        decision = decide_response(facts)
        if isinstance(decision, Parse):
            assert isinstance(response, TextResponse)  # Parse: decide_response saw is_text
            yield from self._parse_html(track, response, facts.content_type, fetch_mode,
                                        decision.digest)
        elif isinstance(decision, CarryOver):
            assert row is not None and lines is not None
            yield from self._carry_over(track, response, row, decision.digest, lines)
        elif isinstance(decision, Refetch):
            yield self._refetch(response)
        elif isinstance(decision, FollowRedirect):
            yield from self._follow_redirect(track, response, decision.target)
        else:
            self._end(track, response, decision, fetch_mode)

    def _response_facts(self, response: Response
                        ) -> tuple[ResponseFacts, StateRow | None, CarriedLines | None]:
        """What `decide_response` needs of a response, the state's row it asked about and
        that page's lines in the previous output (None when they are gone)."""
        conditional = STATE_CANONICAL in response.meta
        row = (self.session.incremental.row_for(response.meta[STATE_CANONICAL])
               if conditional else None)
        digest = body_hash(response.body)
        # The previous run's lines, read only when the page can be carried over (a 304, or
        # the body the state holds): a changed page never needs them.
        lines = (self.session.incremental.lines_for(row) if row is not None and (
            response.status == 304 or row.body_hash == digest) else None)
        if lines is not None and not self.session.templates.available(lines.page):
            lines = None  # its template blocks are gone: fetched and extracted in full
        location = response.headers.get("Location")
        facts = ResponseFacts(
            url=response.url, status=response.status, body=response.body, digest=digest,
            content_type=(response.headers.get("Content-Type") or b"").decode("latin-1"),
            location=location.decode("latin-1") if location else None,
            is_text=isinstance(response, TextResponse),
            download_stopped="download_stopped" in response.flags,
            conditional=conditional,
            stored=(StoredPage(row.body_hash, row.can_carry_over and lines is not None)
                    if row is not None else None))
        return facts, row, lines

    def _parse_html(self, track: PageTrack, response: TextResponse, content_type: str,
                    fetch_mode: str, digest: str) -> Iterable[Any]:
        """An HTML page: parse it once, follow its links, hand it to the pipelines."""
        root = response_root(response)
        after = decide_parsed(response.url, meta_refresh_target(root, get_base_url(response)),
                              extract=self.config.extract)
        if isinstance(after, FollowRedirect):
            yield from self._follow_redirect(track, response, after.target,
                                             reason=after.reason)
            return
        track.observe(response.url)
        try:
            structure = page_structure(root, response.url, profile=self.config.profile)
        except Exception as exc:  # one broken page must not stop the crawl
            logger.exception("docscrawl: cannot analyse %s", response.url)
            self._end(track, response, End(
                Event.FAILED, FailReason.PARSE_ERROR, f"{type(exc).__name__}: {exc}"[:300],
                name_fetch_mode=True, name_chain=False), fetch_mode)
            return
        self.session.frontier.params.learn_generator(structure.profile)
        # The pages it links to keep its URL as their `from` until the crawl ends: one
        # string object, the track's own, rather than one more per page.
        page_url = track.url if response.url == track.url else response.url
        # Links first: in distributed mode they must be queued before the page's outcome.
        found = self._found_links(track, root, structure)
        if fetch_mode == "browser":  # client-side router links exist in a rendered DOM only
            for url, region in hash_route_links(root, structure.base_url,
                                                region_map=structure.regions):
                reason = REGION_TO_DISCOVERY.get(region, "in_page")
                found.append((url, reason, link_rank(reason)))
        follow = self._follow(found, page_url, track.depth + 1)
        if isinstance(after, Inventory):  # the `fetched` event ends the page
            self.session.log.settle(track.url)
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
            body_digest=digest,
            render_reason=response.meta.get("render_reason"),
            structure=structure,
            warnings=list(response.meta.get("render_warnings") or ()),
            found_links=found,
        )
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

    @staticmethod
    def _refetch(response: Response) -> Request:
        """A 304 for a page the state or the previous output no longer holds as it was:
        the same request again, in full, without its conditional headers."""
        request = response.request
        assert request is not None  # a response the engine hands a callback has its request
        return request.replace(
            headers={key: value for key, value in request.headers.items()
                     if key.lower() not in (b"if-none-match", b"if-modified-since")},
            meta={key: value for key, value in response.meta.items()
                  if key != STATE_CANONICAL},
            dont_filter=True)

    def _carry_over(self, track: PageTrack, response: Response, row: StateRow,
                    digest: str | None, lines: CarriedLines) -> Iterable[Any]:
        """An unchanged page: its lines go out again as the previous output holds them;
        its stored links are followed as if the page had been parsed."""
        track.observe(response.url)
        # The links the page had when it was parsed, head links included: the re-crawl
        # reaches every page the page itself would lead to.
        follow = self._follow(row.discovery_links or [], response.url, track.depth + 1)
        yield CarriedPage(
            track=track, row=row, lines=lines, final_url=response.url, status=response.status,
            etag=_header(response, "ETag"), last_modified=_header(response, "Last-Modified"),
            fetch_mode="http", body_digest=digest, elapsed_ms=latency_ms(response),
            size=len(response.body),
        )
        yield from follow

    def _found_links(self, track: PageTrack, root: Any,
                     structure: PageStructure) -> list[FoundLink]:
        """The links discovery follows from a parsed page, as (URL, discovery reason,
        navigation rank): the declared canonical URL, then every link by region (head
        links included). The body links of an index page rank last."""
        base_url = structure.base_url
        found: list[FoundLink] = []
        for href in declared_indexes(root):
            target = urljoin(base_url, href)
            if is_crawlable_url(target):
                self._index_keys.add(self._page_key(target))
        on_index = track.key in self._index_keys or is_link_listing(structure.main_el)
        canonical = canonical_href(root, base_url)
        if canonical and is_crawlable_url(canonical):
            found.append((strip_fragment(canonical), "canonical", link_rank("canonical")))
        links = discovery_links(root, base_url, region_map=structure.regions)
        if (track.depth == 0 and self.session.template_sample is None  # the seed
                and self.settings.getbool("DOCSCRAWL_TEMPLATE_WARMUP", True)):
            self.session.template_sample = sample_of(track.key, [lk.url for lk in links],
                                                     self._sample_key)
        for link in links:
            reason = REGION_TO_DISCOVERY.get(link.region, "in_page")
            found.append((link.url, reason, link_rank(reason, on_index_page=on_index)))
        return found

    def _page_key(self, url: str) -> str:
        try:
            return self.session.frontier.page_key(url)
        except ValueError:
            return url

    def _follow(self, found: Iterable[FoundLink], page_url: str,
                depth: int) -> list[Request]:
        """Offer each found link to the frontier; the requests to make."""
        follow: list[Request] = []
        for url, reason, rank in found:
            if is_crawlable_url(url):
                follow.extend(self._discover(url, reason, page_url, depth, rank=rank))
        return follow

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
        refusal = self._redirect_refusal(target)
        if refusal is not None:
            reason, rule = refusal
            self.session.incremental.gone(track.key, reason)
            log.record(track.url, Event.SKIPPED, reason=reason, rule=rule, status=response.status,
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

    def page_failed(self, failure: Failure) -> list[Request]:
        """Download errors: too large, DNS, timeouts, refused connections..."""
        request = failure.request  # type: ignore[attr-defined]
        track = self._live_track(request.meta[TRACK])
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
        if self._budget is None:
            return []
        self._budget.answered(track.key)
        return self._release()


def _header(response: Response, name: str) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
