"""The crawl frontier: which discovered URLs get fetched, and why the others do not.

Pure bookkeeping with no Scrapy in it: the spider offers every discovered URL and turns
the returned `Verdict` into a request or a crawl-log event. Policies run in a fixed order
before any fetch: scope (default, `allow`, `deny`), URL length, private-address guard,
file extensions that are never HTML, `max_depth`, then (once the origin's robots.txt is
known) robots.txt, duplicate normalized URL, `max_pages` and crawler-trap caps.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from docscrawl.discovery.fragment_params import FragmentParams
from docscrawl.discovery.netguard import AddressGuard
from docscrawl.discovery.pagetrack import PageTrack, track_from_fields
from docscrawl.discovery.robots import RobotsPolicy
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.seenurls import ABSENT, SeenUrls
from docscrawl.discovery.trackstore import TrackStore
from docscrawl.discovery.traps import TrapGuard
from docscrawl.discovery.urls import normalize_url
from docscrawl.vocab import SkipReason

NON_HTML_EXTENSIONS = frozenset({
    ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar", ".rar", ".whl", ".egg",
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".bmp", ".tiff",
    ".mp3", ".mp4", ".webm", ".ogg", ".wav", ".avi", ".mov",
    ".css", ".js", ".mjs", ".map", ".json", ".xml", ".rss", ".atom", ".txt", ".csv",
    ".woff", ".woff2", ".ttf", ".otf", ".eot",
    ".exe", ".dmg", ".deb", ".rpm", ".msi", ".apk", ".jar", ".epub", ".mobi",
    ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods",
})


class Action(StrEnum):
    """What the frontier says to do with an offered URL."""

    FETCH = "fetch"  # a new page: its track is claimed
    SKIP = "skip"  # refused by a policy: log `skipped` with the reason and rule
    KNOWN = "known"  # already seen: the way found was added to its track
    WAIT_ROBOTS = "wait_robots"  # its origin's robots.txt is not known yet


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with an offered URL."""

    action: Action
    reason: str | None = None
    rule: str | None = None
    track: PageTrack | None = None
    first: bool = False  # True when the URL had never been seen: log `discovered`
    detail: str | None = None  # duplicate_url by a fragment-like parameter: the rule


DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL: lowercased, default port dropped, no userinfo."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    return f"{scheme}://{host}" + (f":{port}" if port and port != DEFAULT_PORTS.get(scheme) else "")


def extension_of(url: str) -> str:
    """The lowercase file extension of the URL path (`.pdf`), or ''."""
    path = urlsplit(url).path
    leaf = path.rsplit("/", 1)[-1]
    dot = leaf.rfind(".")
    return leaf[dot:].lower() if dot > 0 else ""


class Frontier:
    """Admission policy and URL bookkeeping for one crawl."""

    def __init__(
        self,
        scope: Scope,
        guard: AddressGuard,
        *,
        max_pages: int | None = None,
        max_depth: int | None = None,
        url_limit: int = 0,
        traps: TrapGuard | None = None,
        tracks: TrackStore | None = None,
        seen: SeenUrls | None = None,
        params: FragmentParams | None = None,
    ) -> None:
        self.scope = scope
        self.params = params if params is not None else FragmentParams()
        self.guard = guard
        self.traps = traps or TrapGuard()
        self.max_pages = max_pages
        self.max_depth = max_depth
        # Scrapy's URLLENGTH_LIMIT (0: none): a longer URL is skipped here, with its reason,
        # rather than dropped by Scrapy's UrlLengthMiddleware after it was logged discovered
        # (it then stayed open and the crawl ended incomplete).
        self.url_limit = url_limit
        self.robots: dict[str, RobotsPolicy] = {}
        self.admitted = 0
        self.limited = False  # True once max_pages/max_depth refused a URL: crawl incomplete
        # Every URL seen -> the key of the track it belongs to (claimed or merged as an
        # alias), else None; the tracks themselves are in `tracks`. A crawl's session keeps
        # the URLs and tracks not used lately on disk (`seen`, `tracks`).
        self._seen = seen if seen is not None else SeenUrls()
        self._tracks = tracks if tracks is not None else TrackStore()

    def track_for(self, url: str) -> PageTrack | None:
        """The track a raw URL belongs to, if it was claimed or merged as an alias."""
        key = self._seen.get(url)
        return None if key is None else self._tracks.get(key)

    def page_key(self, url: str) -> str:
        """The key `url`'s page is claimed under: its normalized URL, without the
        parameters found to be fragment-like."""
        return normalize_url(self.params.identify(url)[0])

    def owner_of(self, normalized: str) -> PageTrack | None:
        """The track that claimed a normalized URL."""
        return self._tracks.get(normalized)

    def tracks(self) -> Iterator[PageTrack]:
        """Every claimed track, once each, in the order claimed (no list of them all)."""
        return iter(self._tracks)

    def pin(self, track: PageTrack) -> None:
        """Keep a page's track in memory while the page is fetched and written."""
        self._tracks.pin(track)

    def release(self, url: str) -> None:
        """A URL's crawl-log story ended: its track may leave memory."""
        key = self._seen.get(url)
        if key is not None:
            self._tracks.release(key)

    def adopt(self, track: PageTrack) -> None:
        """Take over a track claimed by another worker (distributed mode)."""
        if self.owner_of(track.key) is None:
            self._tracks.put(track)
        for url in (track.url, *track.observed):
            if self._seen.get(url) is None:
                self._seen[url] = track.key

    def offer(
        self, url: str, reason: str, source: str | None, depth: int, *,
        lastmod: str | None = None, inherit: PageTrack | None = None,
    ) -> Verdict:
        """Policy checks that need no robots.txt; `wait_robots` when they pass. A known
        URL's page learns the way found (and the sitemap `lastmod`, and the URLs of the
        page a redirect came from: `inherit`); the verdict carries its track when it is
        in memory."""
        key = self._seen.lookup(url)
        if key is not ABSENT:
            if key is None:
                return Verdict(Action.KNOWN)
            if inherit is None and not lastmod:
                return Verdict(Action.KNOWN, track=self._tracks.add_discovery(key, reason, source))
            track = self._tracks.get(key)
            if track is not None:
                track.add_discovery(reason, source)
                if inherit is not None:
                    track.absorb(inherit)
                if lastmod and not track.sitemap_lastmod:
                    track.sitemap_lastmod = lastmod
            return Verdict(Action.KNOWN, track=track)
        self._seen[url] = None
        return self.check(url, depth)

    def check(self, url: str, depth: int | None) -> Verdict:
        """The policies of `offer` for a URL, seen or not (a resumed crawl re-checks the
        URLs the interrupted run left open). `depth` None skips the max_depth check."""
        decision = self.scope.decide(url)
        if not decision.allowed:
            return Verdict(Action.SKIP, decision.reason, decision.rule, first=True)
        if self.url_limit and len(url) > self.url_limit:
            return Verdict(Action.SKIP, SkipReason.TRAP,
                           f"URLLENGTH_LIMIT={self.url_limit} ({len(url)} characters)",
                           first=True)
        blocked = self.guard.check(urlsplit(url).hostname or "")
        if blocked:
            return Verdict(Action.SKIP, SkipReason.PRIVATE_ADDRESS, blocked, first=True)
        ext = extension_of(url)
        if ext in NON_HTML_EXTENSIONS:
            return Verdict(Action.SKIP, SkipReason.NON_HTML, f"file extension {ext}", first=True)
        if self.max_depth is not None and depth is not None and depth > self.max_depth:
            self.limited = True
            return Verdict(Action.SKIP, SkipReason.MAX_DEPTH, f"max_depth={self.max_depth}",
                           first=True)
        return Verdict(Action.WAIT_ROBOTS, first=True)

    def admit(
        self, url: str, reason: str, source: str | None, depth: int, *,
        lastmod: str | None = None, inherit: PageTrack | None = None,
    ) -> Verdict:
        """Robots.txt, duplicate normalized URL and max_pages; claims the URL on `fetch`."""
        refused = self.robots_verdict(url)
        if refused is not None:
            return refused
        stripped, param_rule = self.params.identify(url)
        key = normalize_url(stripped)
        owner = self.owner_of(key)
        if owner is not None:
            owner.observe(url)
            owner.add_discovery(reason, source)
            if inherit is not None:
                owner.absorb(inherit)
            self._seen[url] = owner.key
            return Verdict(Action.SKIP, SkipReason.DUPLICATE_URL, key, track=owner,
                           detail=param_rule)
        if inherit is None and self.max_pages is not None and self.admitted >= self.max_pages:
            self.limited = True
            return Verdict(Action.SKIP, SkipReason.MAX_PAGES, f"max_pages={self.max_pages}")
        if inherit is None and (trap := self.traps.admit(key, source)):
            return Verdict(Action.SKIP, SkipReason.TRAP, trap)
        if inherit is None:
            self.admitted += 1  # a redirect target continues its source's page slot
        track = PageTrack(url, key, depth, sitemap_lastmod=lastmod)
        if inherit is not None:
            track.fetched_url = inherit.fetched_url or inherit.key
            track.redirect_chain = inherit.redirect_chain
            track.absorb(inherit)
        track.add_discovery(reason, source)
        track.observe(url)
        self._seen[url] = track.key
        self._tracks.put(track)
        return Verdict(Action.FETCH, track=track)

    def robots_verdict(self, url: str) -> Verdict | None:
        """The rules of `admit` that need the origin's robots.txt: `wait_robots` while it
        is not known here, a skip (robots.txt, or a host a connection proved private), or
        None when they allow `url`. Nothing is counted (a distributed worker re-checks the
        tasks it takes with `check` and this)."""
        robots = self.robots.get(origin_of(url))
        if robots is None:
            return Verdict(Action.WAIT_ROBOTS)
        refused = self.guard.refused_at_connect(urlsplit(url).hostname or "")
        if refused:  # admitted when its host looked public; a connection proved otherwise
            return Verdict(Action.SKIP, SkipReason.PRIVATE_ADDRESS, refused)
        decision = robots.decide(url)
        if not decision.allowed:
            return Verdict(Action.SKIP, SkipReason.ROBOTS, decision.rule or "robots.txt")
        return None

    def robots_known(self, origin: str) -> bool:
        """True once the origin's robots.txt is known here (adopted, or unreachable)."""
        return origin in self.robots

    def robots_allows(self, url: str) -> bool:
        """False only when the origin's robots.txt, known here, disallows `url` (a rendered
        page's own requests: one of an origin not known yet goes)."""
        robots = self.robots.get(origin_of(url))
        return robots is None or robots.decide(url).allowed

    def restore(
        self, seen: Iterable[str], claims: Iterable[tuple[dict[str, Any], bool]], *,
        limited: bool = False,
    ) -> None:
        """Resume (JOBDIR): take back the URLs seen and the tracks claimed by the
        interrupted run (`claims`: track fields and whether a redirect target claimed it,
        which takes no `max_pages` slot)."""
        self._seen.add_all(seen)
        for fields, inherited in claims:
            track = track_from_fields(fields)
            self._seen[track.url] = track.key
            self._tracks.put(track)
            for url in track.observed:
                if self._seen.get(url) is None:
                    self._seen[url] = track.key
            if not inherited:
                self.admitted += 1
                self.traps.admit(track.key)
        self.limited = self.limited or limited

    def restore_alias(self, url: str, key: str, discovery: dict[str, Any] | None) -> None:
        """Resume: a URL the interrupted run skipped as `duplicate_url` of `key`."""
        owner = self.owner_of(key)
        if owner is None:
            return
        owner.observe(url)
        if discovery:
            owner.add_discovery(discovery.get("reason") or "", discovery.get("from"))
        self._seen[url] = owner.key
