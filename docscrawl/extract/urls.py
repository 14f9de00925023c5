"""One memoized `urljoin` shared by the extractors (regions, Markdown links, page links).

Each anchor's href is resolved by several extractors; sharing one cache makes the later
ones dictionary lookups. The cache is bounded (`JOIN_CACHE` entries, least recently used
dropped) and the function is pure, so results never depend on earlier pages.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import SplitResult, urljoin, urlsplit

JOIN_CACHE = 65536
SPLIT_CACHE = 256

__all__ = ["join", "split"]


@lru_cache(maxsize=JOIN_CACHE)
def join(base_url: str, href: str) -> str | None:
    """`urljoin(base_url, href)`, or None when the href is malformed (`http://[::1`)."""
    try:
        return urljoin(base_url, href)
    except ValueError:
        return None


@lru_cache(maxsize=SPLIT_CACHE)
def split(url: str) -> SplitResult:
    """`urlsplit`, memoized for the few URLs split again and again (a page's base URL)."""
    return urlsplit(url)
