"""The `docs` spider's site resources: robots.txt, sitemaps and llms.txt.

`SiteResources` is a part of the spider (composed by it, not inherited): each origin's
robots.txt is fetched before any page of it (offers made meanwhile are parked until the
frontier knows it), and the seed origin's sitemaps and llms.txt once it is known. Its
requests call back the spider's methods (`ResourceCallbacks`: Scrapy stores a request's
callback by its name on the spider in a JOBDIR), which hand the response back here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urljoin, urlsplit

from scrapy.http import Request, Response
from twisted.python.failure import Failure

from docscrawl.crawl.failures import classify_failure
from docscrawl.discovery.frontier import Action, origin_of
from docscrawl.discovery.robots import RobotsPolicy
from docscrawl.discovery.sitemaps import SitemapError, iter_sitemap, parse_llms_txt
from docscrawl.discovery.urls import is_crawlable_url, strip_fragment, without_userinfo
from docscrawl.spiders.decision import REDIRECT_STATUSES
from docscrawl.vocab import Event, FailReason

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from docscrawl.admission.base import Admission
    from docscrawl.crawl.session import CrawlSession

logger = logging.getLogger(__name__)

MAX_ROBOTS_REDIRECTS = 5  # RFC 9309 2.3.1.2: follow at least five
MAX_SITEMAP_DEPTH = 4
MAX_SITEMAPS = 1000

Parked = Callable[[], list[Request]]


class Offer(Protocol):
    """Where a URL listed by a sitemap or llms.txt goes (`Offers.offer`)."""

    def __call__(self, url: str, reason: str, source: str | None, depth: int, *,
                 lastmod: str | None = None) -> list[Request]: ...


def latency_ms(response: Response) -> float | None:
    """The response's download latency in milliseconds, when Scrapy measured it."""
    latency = response.meta.get("download_latency")
    return latency * 1000 if latency is not None else None


@dataclass(frozen=True, slots=True)
class ResourceCallbacks:
    """The spider's callbacks for the requests of this part (each hands back here)."""

    robots: Callable[[Response], Iterable[Request]]
    robots_failed: Callable[[Failure], Iterable[Request]]
    sitemap: Callable[[Response], Iterable[Request]]
    llms_txt: Callable[[Response], Iterable[Request]]
    failed: Callable[[Failure], None]


class SiteResources:
    """robots.txt, sitemaps and llms.txt of one crawl (see module docstring)."""

    def __init__(self, session: CrawlSession, admission: Admission, crawler: Crawler,
                 callbacks: ResourceCallbacks) -> None:
        self.session = session
        self.admission = admission
        self.crawler = crawler  # its downloader honours Crawl-delay
        self.callbacks = callbacks
        self._parked: dict[str, list[Parked]] = {}  # origin -> offers waiting for robots
        self._robots_requested: set[str] = set()
        self._sitemaps_requested: set[str] = set()
        self._site_resources_started = False

    def park(self, origin: str, retry: Parked) -> list[Request]:
        """`retry` runs once the origin's robots.txt is known; its request, the first time."""
        self._parked.setdefault(origin, []).append(retry)
        return self.robots_request_once(origin)

    def robots_known(self, origin: str) -> list[Request] | None:
        """None when the frontier knows the origin's robots.txt; else the requests asking
        for it (none when it was asked for already)."""
        if self.session.frontier.robots_known(origin):
            return None
        return self.robots_request_once(origin)

    def robots_request_once(self, origin: str) -> list[Request]:
        """The request for an origin's robots.txt, the first time it is asked for."""
        if origin in self._robots_requested:
            return []
        self._robots_requested.add(origin)
        return [self._robots_request(origin + "/robots.txt", origin, hops=0)]

    def _robots_request(self, url: str, origin: str, *, hops: int) -> Request:
        return Request(
            url,
            callback=self.callbacks.robots,
            errback=self.callbacks.robots_failed,
            priority=1000,
            meta={"robots_origin": origin, "robots_hops": hops,
                  "handle_httpstatus_all": True, "dont_redirect": True},
        )

    def parse_robots(self, response: Response) -> Iterable[Request]:
        """Adopt the origin's robots.txt (following up to five redirects)."""
        origin = response.meta["robots_origin"]
        self._log_resource(response, "robots")
        location = response.headers.get("Location")
        hops = response.meta["robots_hops"]
        if response.status in REDIRECT_STATUSES and location and hops < MAX_ROBOTS_REDIRECTS:
            target = without_userinfo(urljoin(response.url, location.decode("latin-1")))
            if is_crawlable_url(target):
                yield self._robots_request(target, origin, hops=hops + 1)
                return
        status: int | None = response.status
        if response.status in REDIRECT_STATUSES:
            status = 404  # RFC 9309: too many redirects is "unavailable", i.e. allow all
        yield from self._adopt_robots(origin, RobotsPolicy.from_response(status, response.body))

    def robots_failed(self, failure: Failure) -> Iterable[Request]:
        """Unreachable robots.txt: RFC 9309 says disallow everything."""
        request = failure.request  # type: ignore[attr-defined]
        reason, rule = classify_failure(failure)
        refused = self.session.frontier.guard.refused_at_connect(
            urlsplit(request.url).hostname or "")
        if refused:  # its host's DNS answer turned private: its pages are refused too
            reason, rule = "private_address", refused
        self.session.log.record(request.url, Event.FAILED, reason=reason, rule=rule,
                                parser="robots")
        yield from self._adopt_robots(
            request.meta["robots_origin"], RobotsPolicy.from_response(None, b"")
        )

    def _adopt_robots(self, origin: str, policy: RobotsPolicy) -> Iterable[Request]:
        self.session.frontier.robots[origin] = policy
        if policy.state == "unreachable":
            rule = policy.decide(origin + "/").rule
            logger.warning("docscrawl: %s/robots.txt: %s", origin, rule)
            self.session.log.record(origin + "/robots.txt", Event.FAILED,
                                    reason=FailReason.ROBOTS_UNREACHABLE, rule=rule,
                                    parser="robots")
        if policy.crawl_delay:
            self._apply_crawl_delay(origin, policy.crawl_delay)
        if origin == origin_of(self.session.config.site) and not self._site_resources_started:
            self._site_resources_started = True
            yield from self.admission.site_resources(
                lambda: self._site_resource_requests(origin, policy))
        for parked in self._parked.pop(origin, []):
            yield from parked()

    def _apply_crawl_delay(self, origin: str, delay: float) -> None:
        """Honour Crawl-delay for this host's download slot."""
        downloader = self.crawler.engine.downloader if self.crawler.engine else None
        if downloader is None:
            return
        host = urlsplit(origin).hostname or ""
        current = downloader.per_slot_settings.get(host, {})
        # Crawl-delay is a minimum: no random jitter below it, one request at a time.
        downloader.per_slot_settings[host] = {**current, "delay": delay, "concurrency": 1,
                                              "jitter": 0.0}
        slot = downloader.slots.get(host)
        if slot is not None:
            slot.delay, slot.concurrency, slot.jitter = delay, 1, 0.0
        logger.info("docscrawl: honouring Crawl-delay %.2fs for %s", delay, host)

    # -- sitemaps and llms.txt ------------------------------------------------------------

    def _site_resource_requests(self, origin: str, policy: RobotsPolicy) -> Iterable[Request]:
        prefix = self.session.frontier.scope.prefix
        if policy.sitemaps:
            for url in policy.sitemaps:
                yield from self._sitemap_request(url, "robots_sitemap", depth=0)
        else:
            for url in dict.fromkeys([origin + "/sitemap.xml", prefix + "sitemap.xml"]):
                yield from self._sitemap_request(url, "sitemap", depth=0)
        for url in dict.fromkeys([origin + "/llms.txt", prefix + "llms.txt"]):
            if self._resource_allowed(url):
                yield Request(url, callback=self.callbacks.llms_txt,
                              errback=self.callbacks.failed,
                              priority=500, meta={"handle_httpstatus_all": True})

    def _resource_allowed(self, url: str) -> bool:
        """Site resources (sitemaps, llms.txt) obey the address guard and the frontier's
        robots verdict (a resource on an origin whose robots.txt is not known yet goes)."""
        if not is_crawlable_url(url):
            return False
        if self.session.frontier.guard.check(urlsplit(url).hostname or ""):
            return False
        verdict = self.session.frontier.robots_verdict(url)
        return verdict is None or verdict.action == Action.WAIT_ROBOTS

    def _sitemap_request(self, url: str, reason: str, *, depth: int) -> Iterable[Request]:
        url = without_userinfo(strip_fragment(url))
        if url in self._sitemaps_requested or len(self._sitemaps_requested) >= MAX_SITEMAPS:
            return
        if depth > MAX_SITEMAP_DEPTH or not self._resource_allowed(url):
            return
        self._sitemaps_requested.add(url)
        yield Request(url, callback=self.callbacks.sitemap,
                      errback=self.callbacks.failed,
                      priority=500, meta={"handle_httpstatus_all": True,
                                          "sitemap_reason": reason, "sitemap_depth": depth})

    def parse_sitemap(self, response: Response, offer: Offer) -> Iterable[Request]:
        """Sitemaps are hints: every entry is offered like any discovered link."""
        self._log_resource(response, "sitemap")
        if response.status != 200:
            return
        reason = response.meta["sitemap_reason"]
        depth = response.meta["sitemap_depth"]
        try:  # streamed: entries are offered while the XML is read
            sitemap = iter_sitemap(response.body, base_url=response.url)
            for entry in sitemap:
                if sitemap.kind == "sitemapindex":
                    yield from self._sitemap_request(entry.loc, reason, depth=depth + 1)
                else:
                    yield from offer(strip_fragment(entry.loc), reason, response.url, 1,
                                          lastmod=entry.lastmod)
        except SitemapError as exc:  # entries read before the error are kept: hints
            self.session.log.record(response.url, Event.FAILED, reason=FailReason.PARSE_ERROR,
                                    rule=str(exc), parser="sitemap", status=response.status)

    def parse_llms_txt(self, response: Response, offer: Offer) -> Iterable[Request]:
        """Links listed in /llms.txt."""
        self._log_resource(response, "llms_txt")
        if response.status != 200:
            return
        text = response.body.decode("utf-8", errors="replace")
        for url in parse_llms_txt(text, base_url=response.url):
            if is_crawlable_url(url):
                yield from offer(strip_fragment(url), "llms_txt", response.url, 1)

    def resource_failed(self, failure: Failure) -> None:
        """A sitemap or llms.txt that could not be fetched (not a page: no terminal)."""
        request = failure.request  # type: ignore[attr-defined]
        reason, rule = classify_failure(failure)
        parser = "sitemap" if "sitemap_reason" in request.meta else "llms_txt"
        self.session.log.record(request.url, Event.FAILED, reason=reason, rule=rule, parser=parser)

    def _log_resource(self, response: Response, parser: str) -> None:
        self.session.log.record(
            response.url, Event.FETCHED, status=response.status, fetch_mode="http", parser=parser,
            elapsed_ms=latency_ms(response), size=len(response.body),
        )
