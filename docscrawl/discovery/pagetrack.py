"""A page's track: the URL a fetch started from and everything seen serving that page.

The frontier claims one per page it admits; the spider, pipelines and the end of the crawl
read and extend it (ways found, observed URLs, what its written record listed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from docscrawl.discovery.urls import normalize_url

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


# One way a page was found, as pages.jsonl and the crawl log write it.
DiscoveryRecord = TypedDict("DiscoveryRecord", {"reason": str, "from": str | None})


def discovery_entries(records: Iterable[Mapping[str, Any]]) -> list[Discovery]:
    """`{"reason", "from"}` records (as in pages.jsonl) as compact entries."""
    return [(d.get("reason") or "", d.get("from")) for d in records]


def discovery_records(entries: Iterable[Discovery]) -> list[DiscoveryRecord]:
    """Compact entries as pages.jsonl `discovery` records."""
    return [{"reason": reason, "from": source} for reason, source in entries]


class PageTrack:
    """One claimed page fetch: the URL it started from and everything seen serving it.

    A large crawl holds one per page until it ends, so it is kept small: slots, the ways
    found as a tuple of shared (reason, source) pairs (`shared_pair`), the observed URLs
    as a short tuple (both rebuilt on the rare change: a few entries each)."""

    __slots__ = (
        "_found",
        "depth",
        "discovery_dropped",
        "fetched_url",
        "key",
        "merged_into",
        "observed",
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
        # the URLs that serve (or lead to) this page, in the order seen (an ordered set)
        self.observed: tuple[str, ...] = ()
        self.sitemap_lastmod = sitemap_lastmod
        self.redirect_chain: tuple[str, ...] = tuple(redirect_chain)
        self.fetched_url = fetched_url  # first URL requested, when a redirect led here
        self.record_canonical: str | None = None  # set once its page record is written
        self.merged_into: str | None = None  # canonical URL of the record it duplicated
        self.discovery_dropped = 0  # ways found past MAX_DISCOVERY_ENTRIES, counted only
        # what its page record listed when written (None until it is): observed URLs and
        # ways found counted, and the sitemap lastmod
        self.written_observed: int | None = None
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
    def discovery(self) -> list[Discovery]:
        """The ways this page was found, as (reason, source) pairs (a copy)."""
        return list(self._found)

    @property
    def discovery_count(self) -> int:
        """How many ways found are listed."""
        return len(self._found)

    def observe(self, url: str) -> None:
        """Remember a URL that serves (or leads to) this page."""
        if url not in self.observed:
            self.observed += (url,)

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

    def discovery_records(self) -> list[DiscoveryRecord]:
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

    def mark_carried(self, canonical_url: str, observed_urls: Sequence[str],
                     sitemap_lastmod: str | None) -> None:
        """Its page record was carried over as the previous output wrote it, listing
        `observed_urls` and `sitemap_lastmod`: those URLs are observed, and what the
        record lists is counted as listed, so that what this crawl found before the carry
        (an alias, a new lastmod, in a sitemap read first) is growth the end of the crawl
        writes, as when it is found after."""
        for url in observed_urls:
            self.observe(url)
        self.mark_written(canonical_url, listed=(
            len(set(observed_urls)), self.discovery_count, sitemap_lastmod))

    @property
    def written(self) -> bool:
        """True once this track's page record was written."""
        return self.written_observed is not None


class TrackFields(TypedDict):
    """A track as the frontier journal of a JOBDIR crawl writes it (`track_fields`)."""

    url: str
    key: str
    depth: int
    discovery: list[DiscoveryRecord]
    observed: list[str]
    sitemap_lastmod: str | None
    redirect_chain: list[str]
    fetched_url: str | None
    discovery_dropped: int


def track_fields(track: PageTrack) -> TrackFields:
    """A track as JSON-able fields (the frontier journal of a JOBDIR crawl)."""
    return {
        "url": track.url, "key": track.key, "depth": track.depth,
        "discovery": track.discovery_records(), "observed": list(track.observed),
        "sitemap_lastmod": track.sitemap_lastmod, "redirect_chain": list(track.redirect_chain),
        "fetched_url": track.fetched_url,
        "discovery_dropped": track.discovery_dropped,
    }


def track_from_fields(fields: Mapping[str, Any]) -> PageTrack:
    """The inverse of `track_fields` (read back from the journal: fields may be missing)."""
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
