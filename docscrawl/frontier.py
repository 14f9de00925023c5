"""The crawl frontier: which discovered URLs get fetched, and why the others do not.

Pure bookkeeping with no Scrapy in it: the spider offers every discovered URL and turns
the returned `Verdict` into a request or a crawl-log event. Policies run in a fixed order
before any fetch: scope (default, `allow`, `deny`), private-address guard, file extensions
that are never HTML, `max_depth`, then (once the origin's robots.txt is known) robots.txt,
duplicate normalized URL, `max_pages` and crawler-trap caps.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from docscrawl.discovery.netguard import AddressGuard
from docscrawl.discovery.robots import RobotsPolicy
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.traps import TrapGuard
from docscrawl.discovery.urls import normalize_url

NON_HTML_EXTENSIONS = frozenset({
    ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar", ".rar", ".whl", ".egg",
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".bmp", ".tiff",
    ".mp3", ".mp4", ".webm", ".ogg", ".wav", ".avi", ".mov",
    ".css", ".js", ".mjs", ".map", ".json", ".xml", ".rss", ".atom", ".txt", ".csv",
    ".woff", ".woff2", ".ttf", ".otf", ".eot",
    ".exe", ".dmg", ".deb", ".rpm", ".msi", ".apk", ".jar", ".epub", ".mobi",
    ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods",
})


# Ways a page was found that its record lists: the first ones, and then only new reasons
# and redirects (a page in a large site's sidebar is linked from every page; listing them
# all would grow memory and output with the site; a redirect source is an alias of the
# page, as bounded as its observed URLs). `discovery_truncated` counts the rest.
MAX_DISCOVERY_ENTRIES = 10
ALWAYS_LISTED = frozenset({"redirect"})

Discovery = tuple[str, str | None]  # (reason, URL of the page it was found on)


_PAIRS: dict[Discovery, Discovery] = {}
_PAIRS_KEPT = 512


def shared_pair(reason: str, source: str | None) -> Discovery:
    """One tuple object for equal (reason, source) pairs found close together: the 50
    sidebar links of a page give 50 tracks the same pair (a small memo, emptied when
    full: sharing matters within a page and the next few, not across the crawl)."""
    pair = (reason, source)
    known = _PAIRS.get(pair)
    if known is None:
        if len(_PAIRS) >= _PAIRS_KEPT:
            _PAIRS.clear()
        _PAIRS[pair] = known = pair
    return known


def discovery_entries(records: Iterable[dict[str, Any]]) -> list[Discovery]:
    """`{"reason", "from"}` records (as in pages.jsonl) as compact entries."""
    return [(d.get("reason") or "", d.get("from")) for d in records]


def discovery_records(entries: Iterable[Discovery]) -> list[dict[str, Any]]:
    """Compact entries as pages.jsonl `discovery` records."""
    return [{"reason": reason, "from": source} for reason, source in entries]


class PageTrack:
    """One claimed page fetch: the URL it started from and everything seen serving it.

    A large crawl holds one per page until it ends, so it is kept small: slots, the ways
    found as a tuple of shared (reason, source) pairs (`shared_pair`), the observed URLs
    as a short tuple (both rebuilt on the rare change: a few entries each)."""

    __slots__ = (
        "_found",
        "_observed",
        "depth",
        "discovery_dropped",
        "fetched_url",
        "key",
        "merged_into",
        "record_canonical",
        "redirect_chain",
        "sitemap_lastmod",
        "url",
        "written_discovery",
        "written_lastmod",
        "written_observed",
    )

    def __init__(
        self, url: str, key: str, depth: int, discovery: Iterable[Discovery] = (), *,
        sitemap_lastmod: str | None = None, redirect_chain: Iterable[str] = (),
        fetched_url: str | None = None,
    ) -> None:
        self.url = url
        self.key = url if key == url else key  # one string object when they are equal
        self.depth = depth
        self._found: tuple[Discovery, ...] = tuple(shared_pair(*pair) for pair in discovery)
        # the URLs that serve it (an ordered set); None stands for `(url,)`, the usual case
        self._observed: tuple[str, ...] | None = ()
        self.sitemap_lastmod = sitemap_lastmod
        self.redirect_chain: tuple[str, ...] = tuple(redirect_chain)
        self.fetched_url = fetched_url  # first URL requested, when a redirect led here
        self.record_canonical: str | None = None  # set once its page record is written
        self.merged_into: str | None = None  # canonical URL of the record it duplicated
        self.discovery_dropped = 0  # ways found past MAX_DISCOVERY_ENTRIES, counted only
        # what its page record listed when written: observed URLs and ways found (-1: not
        # written), and the sitemap lastmod
        self.written_observed = -1
        self.written_discovery = 0
        self.written_lastmod: str | None = None

    def __repr__(self) -> str:
        return f"<PageTrack {self.url} depth={self.depth}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PageTrack) and self.__getstate__() == other.__getstate__()

    __hash__ = None  # type: ignore[assignment]  # mutable: compared by value, not hashed

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)

    @property
    def observed(self) -> tuple[str, ...]:
        """The URLs that serve (or lead to) this page, in the order seen."""
        return (self.url,) if self._observed is None else self._observed

    @property
    def discovery(self) -> list[Discovery]:
        """The ways this page was found, as (reason, source) pairs (a copy)."""
        return list(self._found)

    @property
    def discovery_count(self) -> int:
        """How many ways found are listed."""
        return len(self._found)

    def observe(self, url: str) -> None:
        """Remember a URL that serves (or leads to) this page."""
        observed = self.observed
        if url not in observed:
            observed += (url,)
            self._observed = None if observed == (self.url,) else observed

    def add_discovery(self, reason: str, source: str | None) -> None:
        """Add one way this page was found, once. Past MAX_DISCOVERY_ENTRIES only a new
        reason (or a redirect) is still listed; the others are counted."""
        found = self._found
        if (reason, source) in found:
            return
        if (len(found) >= MAX_DISCOVERY_ENTRIES and reason not in ALWAYS_LISTED
                and any(known == reason for known, _ in found)):
            self.discovery_dropped += 1
            return
        self._found = (*found, shared_pair(reason, source))

    def discovery_records(self) -> list[dict[str, Any]]:
        """The ways this page was found, as pages.jsonl `discovery` records."""
        return discovery_records(self.discovery)

    def absorb(self, other: PageTrack) -> None:
        """Take over the URLs and discovery reasons of a track that turned out to be this page."""
        for url in other.observed:
            self.observe(url)
        for reason, source in other.discovery:
            self.add_discovery(reason, source)
        if other.sitemap_lastmod and not self.sitemap_lastmod:
            self.sitemap_lastmod = other.sitemap_lastmod

    def mark_written(self, canonical_url: str, *,
                     listed: tuple[int, int, str | None] | None = None) -> None:
        """Its page record was written: remember what the record listed (observed URLs and
        ways found counted, sitemap lastmod; by default what the track holds now), to spot
        growth at the end of the crawl."""
        observed, discovery, lastmod = listed or (
            len(self.observed), self.discovery_count, self.sitemap_lastmod)
        # the same text as its key is kept as one string
        self.record_canonical = self.key if canonical_url == self.key else canonical_url
        self.written_observed, self.written_discovery = observed, discovery
        self.written_lastmod = lastmod

    @property
    def written(self) -> bool:
        """True once this track's page record was written."""
        return self.written_observed >= 0


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with an offered URL."""

    action: str  # "fetch", "skip", "known", "wait_robots", "ignore"
    reason: str | None = None
    rule: str | None = None
    track: PageTrack | None = None
    first: bool = False  # True when the URL had never been seen: log `discovered`


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
        traps: TrapGuard | None = None,
    ) -> None:
        self.scope = scope
        self.guard = guard
        self.traps = traps or TrapGuard()
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.robots: dict[str, RobotsPolicy] = {}
        self.admitted = 0
        self.limited = False  # True once max_pages/max_depth refused a URL: crawl incomplete
        # Every URL seen -> its track (claimed or merged as an alias), else None: one
        # table for both, since a large crawl holds one entry per URL it ever saw.
        self._seen: dict[str, PageTrack | None] = {}
        # Normalized URL -> the track that owns it, when that is not its own first URL:
        # usually it is, and `_seen` already holds it (see `owner_of`).
        self._claims: dict[str, PageTrack] = {}

    def track_for(self, url: str) -> PageTrack | None:
        """The track a raw URL belongs to, if it was claimed or merged as an alias."""
        return self._seen.get(url)

    def owner_of(self, normalized: str) -> PageTrack | None:
        """The track that claimed a normalized URL."""
        owner = self._claims.get(normalized)
        if owner is None:
            owner = self._seen.get(normalized)
            if owner is not None and owner.key != normalized:
                owner = None
        return owner

    def tracks(self) -> Iterator[PageTrack]:
        """Every claimed track, once each (as it is found: no list of them all)."""
        for url, track in self._seen.items():
            if track is not None and url == track.url and self.owner_of(track.key) is track:
                yield track
        for track in self._claims.values():
            if self._seen.get(track.url) is not track:
                yield track

    def adopt(self, track: PageTrack) -> None:
        """Take over a track claimed by another worker (distributed mode)."""
        if self.owner_of(track.key) is None:
            self._claim(track)
        for url in (track.url, *track.observed):
            if self._seen.get(url) is None:
                self._seen[url] = track

    def _claim(self, track: PageTrack) -> None:
        """Make `track` the owner of its normalized URL."""
        if self._seen.get(track.key) is track:
            self._claims.pop(track.key, None)
        else:
            self._claims[track.key] = track

    def offer(self, url: str, reason: str, source: str | None, depth: int) -> Verdict:
        """Policy checks that need no robots.txt; `wait_robots` when they pass."""
        if url in self._seen:
            track = self._seen[url]
            if track is not None:
                track.add_discovery(reason, source)
            return Verdict("known", track=track)
        self._seen[url] = None
        return self.check(url, depth)

    def check(self, url: str, depth: int | None) -> Verdict:
        """The policies of `offer` for a URL, seen or not (a resumed crawl re-checks the
        URLs the interrupted run left open). `depth` None skips the max_depth check."""
        decision = self.scope.decide(url)
        if not decision.allowed:
            return Verdict("skip", decision.reason, decision.rule, first=True)
        blocked = self.guard.check(urlsplit(url).hostname or "")
        if blocked:
            return Verdict("skip", "private_address", blocked, first=True)
        ext = extension_of(url)
        if ext in NON_HTML_EXTENSIONS:
            return Verdict("skip", "non_html", f"file extension {ext}", first=True)
        if self.max_depth is not None and depth is not None and depth > self.max_depth:
            self.limited = True
            return Verdict("skip", "max_depth", f"max_depth={self.max_depth}", first=True)
        return Verdict("wait_robots", first=True)

    def admit(
        self, url: str, reason: str, source: str | None, depth: int, *,
        lastmod: str | None = None, inherit: PageTrack | None = None,
    ) -> Verdict:
        """Robots.txt, duplicate normalized URL and max_pages; claims the URL on `fetch`."""
        robots = self.robots.get(origin_of(url))
        if robots is None:
            return Verdict("wait_robots")
        decision = robots.decide(url)
        if not decision.allowed:
            return Verdict("skip", "robots", decision.rule or "robots.txt")
        key = normalize_url(url)
        owner = self.owner_of(key)
        if owner is not None:
            owner.observe(url)
            owner.add_discovery(reason, source)
            if inherit is not None:
                owner.absorb(inherit)
            self._seen[url] = owner
            return Verdict("skip", "duplicate_url", key, track=owner)
        if inherit is None and self.max_pages is not None and self.admitted >= self.max_pages:
            self.limited = True
            return Verdict("skip", "max_pages", f"max_pages={self.max_pages}")
        if inherit is None and (trap := self.traps.admit(key)):
            return Verdict("skip", "trap", trap)
        if inherit is None:
            self.admitted += 1  # a redirect target continues its source's page slot
        track = PageTrack(url, key, depth, sitemap_lastmod=lastmod)
        if inherit is not None:
            track.fetched_url = inherit.fetched_url or inherit.key
            track.redirect_chain = inherit.redirect_chain
            track.absorb(inherit)
        track.add_discovery(reason, source)
        track.observe(url)
        self._seen[url] = track
        self._claim(track)
        return Verdict("fetch", track=track)

    def restore(
        self, seen: Iterable[str], claims: Iterable[tuple[dict[str, Any], bool]], *,
        limited: bool = False,
    ) -> None:
        """Resume (JOBDIR): take back the URLs seen and the tracks claimed by the
        interrupted run (`claims`: track fields and whether a redirect target claimed it,
        which takes no `max_pages` slot)."""
        for url in seen:
            self._seen.setdefault(url, None)
        for fields, inherited in claims:
            track = track_from_fields(fields)
            self._seen[track.url] = track
            self._claim(track)
            for url in track.observed:
                if self._seen.get(url) is None:
                    self._seen[url] = track
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
        self._seen[url] = owner


def track_fields(track: PageTrack) -> dict[str, Any]:
    """A track as JSON-able fields (the frontier journal of a JOBDIR crawl)."""
    return {
        "url": track.url, "key": track.key, "depth": track.depth,
        "discovery": track.discovery_records(), "observed": list(track.observed),
        "sitemap_lastmod": track.sitemap_lastmod, "redirect_chain": list(track.redirect_chain),
        "fetched_url": track.fetched_url,
        "discovery_dropped": track.discovery_dropped,
    }


def track_from_fields(fields: dict[str, Any]) -> PageTrack:
    """The inverse of `track_fields`."""
    track = PageTrack(
        url=fields["url"], key=fields.get("key") or normalize_url(fields["url"]),
        depth=int(fields.get("depth") or 0),
        discovery=discovery_entries(fields.get("discovery") or []),
        sitemap_lastmod=fields.get("sitemap_lastmod"),
        redirect_chain=fields.get("redirect_chain") or (),
        fetched_url=fields.get("fetched_url"),
    )
    for url in fields.get("observed") or []:
        track.observe(url)
    if fields.get("discovery_dropped"):
        track.discovery_dropped = int(fields["discovery_dropped"])
    return track
