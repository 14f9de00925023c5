"""Choosing a page's canonical URL.

Rule (documented in the README): the page's `rel=canonical` when it is an http(s) URL inside
the crawl scope and of the same documentation version as the fetched page; otherwise the
normalized final URL. A canonical that is ignored leaves a warning saying why. When several
URLs serve the same content and none declares a usable canonical, the one with the best
`preference` wins, whatever order they were fetched in. `rank` orders every candidate
(declared ones first, then by preference): one process's deduplication and `docscrawl
merge` of several workers' parts pick the same URL with it, whatever the order.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from docscrawl.discovery.scope import Scope
from docscrawl.discovery.urls import is_crawlable_url, normalize_url
from docscrawl.extract.version_token import url_version, version_key


@dataclass(frozen=True, slots=True)
class CanonicalChoice:
    url: str
    warning: tuple[str, str] | None = None  # (code, detail)
    declared: bool = False  # True when the page's own rel=canonical was used


def choose_canonical(final_url: str, canonical_href: str | None, scope: Scope) -> CanonicalChoice:
    """Pick the canonical URL of a page (see module docstring)."""
    fallback = normalize_url(final_url)
    if not canonical_href:
        return CanonicalChoice(fallback)
    if not is_crawlable_url(canonical_href):
        return CanonicalChoice(fallback, ("canonical_ignored",
                                          f"rel=canonical is not an http(s) URL: {canonical_href}"))
    if not scope.decide(canonical_href).allowed:
        return CanonicalChoice(fallback, ("canonical_ignored",
                                          f"rel=canonical points off-site: {canonical_href}"))
    if version_key(url_version(canonical_href)) != version_key(url_version(final_url)):
        return CanonicalChoice(fallback, ("canonical_ignored",
                                          f"rel=canonical names another version: {canonical_href}"))
    return CanonicalChoice(normalize_url(canonical_href), declared=True)


ALIAS_SEGMENTS = frozenset({"latest", "stable", "current"})
INDEX_FILES = ("index.html", "index.htm", "index.php")


def preference(url: str) -> tuple[int, int, int, int, str]:
    """Sort key among URLs serving the same page (smaller is better).

    Fewer alias segments (`latest`, `stable`, `current`), no query, not an explicit
    `index.html`, shorter path, then the URL itself, so that the choice never depends on
    the order pages happened to be fetched in.
    """
    parts = urlsplit(url)
    segments = [s.lower() for s in parts.path.split("/") if s]
    aliases = sum(1 for s in segments if s in ALIAS_SEGMENTS)
    is_index = int(bool(segments) and segments[-1] in INDEX_FILES)
    return (aliases, int(bool(parts.query)), is_index, len(parts.path), url)


def rank(url: str, *, declared: bool) -> tuple[int, tuple[int, int, int, int, str]]:
    """Sort key among candidate canonical URLs of one page (smaller wins): a URL named by
    a page's own usable rel=canonical beats any other, then `preference` decides."""
    return (0 if declared else 1, preference(url))
