"""Choosing a page's canonical URL.

Rule (documented in the README): the page's `rel=canonical` when it is an http(s) URL inside
the crawl scope and of the same documentation version as the fetched page; otherwise the
normalized final URL. A canonical that is ignored leaves a warning saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

from docscrawl.dedup.content import url_version
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.urls import is_crawlable_url, normalize_url


@dataclass(frozen=True, slots=True)
class CanonicalChoice:
    url: str
    warning: tuple[str, str] | None = None  # (code, detail)


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
    if url_version(canonical_href) != url_version(final_url):
        return CanonicalChoice(fallback, ("canonical_ignored",
                                          f"rel=canonical names another version: {canonical_href}"))
    return CanonicalChoice(normalize_url(canonical_href))
