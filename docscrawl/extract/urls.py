"""One memoized `urljoin` shared by the extractors (regions, Markdown links, page links).

Each anchor's href is resolved by several extractors; sharing one cache makes the later
ones dictionary lookups. The cache is bounded (`JOIN_CACHE` entries, least recently used
dropped) and the function is pure, so results never depend on earlier pages.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import SplitResult, urljoin, urlsplit

from docscrawl.discovery.urls import without_userinfo

JOIN_CACHE = 8192
SPLIT_CACHE = 256

__all__ = ["fast_join", "join", "split"]


@lru_cache(maxsize=JOIN_CACHE)
def join(base_url: str, href: str) -> str | None:
    """`urljoin(base_url, href)`, or None when the href is malformed (`http://[::1`).
    A `user:password@` in the href is dropped: no record keeps it (the crawl never sends
    it, `docscrawl.discovery.urls.without_userinfo`).

    A path href (no scheme, query or fragment first, nothing `urlsplit` strips) is
    resolved against the base's directory: the same answer, shared by the pages of one
    directory (a sidebar's hrefs are the same on each of them)."""
    if href and href[0] not in _PAGE_BOUND and _UNSAFE.isdisjoint(href):
        parts = _base_parts(base_url)
        if parts is not None:
            origin, path, _ = parts
            return _join_in(origin + path[: path.rfind("/") + 1], href)
    return _resolve(base_url, href)


# First characters with which an href's answer depends on more than the base's directory:
# a query or fragment alone, and what `urlsplit` strips before reading it (C0 and space).
_PAGE_BOUND = frozenset("#?" + "".join(map(chr, range(33))))


# A site's directories and their hrefs: half of `join`'s entries kept the same hit rate on
# 900 corpus pages (the sizes of the new memos cost peak memory, docs/performance.md).
DIRECTORY_JOIN_CACHE = 4096


@lru_cache(maxsize=DIRECTORY_JOIN_CACHE)
def _join_in(directory: str, href: str) -> str | None:
    """`_resolve` of a path href against a directory URL (`join`)."""
    return _resolve(directory, href)


def _resolve(base_url: str, href: str) -> str | None:
    joined = fast_join(base_url, href)
    if joined is None:
        try:
            joined = urljoin(base_url, href)
        except ValueError:
            return None
    return without_userinfo(joined)


@lru_cache(maxsize=SPLIT_CACHE)
def split(url: str) -> SplitResult:
    """`urlsplit`, memoized for the few URLs split again and again (a page's base URL)."""
    return urlsplit(url)


# Characters that send an href to `urljoin`: a scheme or port (`:`), params (`;`), and what
# `urlsplit` strips or reads specially.
_UNSAFE = frozenset("\t\r\n\\ ;:")


@lru_cache(maxsize=SPLIT_CACHE)
def _base_parts(base: str) -> tuple[str, str, str] | None:
    """(scheme://netloc, path, query) of an http(s) base URL; None for anything else."""
    parts = split(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or ";" in parts.path:
        return None
    return parts.scheme + "://" + parts.netloc, parts.path, parts.query


def fast_join(base: str, href: str) -> str | None:
    """`urljoin(base, href)` for the common hrefs of documentation pages (relative paths,
    `../`, absolute paths, fragments), in plain string operations; None when the href
    needs `urljoin` itself (a scheme, `//`, whitespace, `;`, an empty query or fragment).
    Same result as `urljoin` (tests compare them on real sites' hrefs)."""
    if not href or href[0] == "?" or href.startswith("//") or not _UNSAFE.isdisjoint(href):
        return None
    parts = _base_parts(base)
    if parts is None:
        return None
    origin, bpath, bquery = parts
    cut = len(href)
    for sep in "?#":
        i = href.find(sep)
        if i != -1 and i < cut:
            cut = i
    path, rest = href[:cut], href[cut:]
    if not path:  # "#frag" on the base page; "#" alone names no fragment
        return origin + bpath + ("?" + bquery if bquery else "") + (rest if rest != "#" else "")
    if rest.endswith(("?", "#")) or "?#" in rest:
        return None  # an empty query or fragment, which urljoin drops
    if path[0] == "/":
        segments = path.split("/")
    else:
        base_parts = bpath.split("/")
        if base_parts[-1] != "":
            del base_parts[-1]
        segments = base_parts + path.split("/")
        segments[1:-1] = filter(None, segments[1:-1])
    resolved: list[str] = []
    for seg in segments:
        if seg == "..":
            if resolved:
                resolved.pop()
        elif seg == ".":
            continue
        else:
            resolved.append(seg)
    if segments[-1] in (".", ".."):
        resolved.append("")
    joined = "/".join(resolved) or "/"
    if joined[0] != "/":  # `..` climbed past the root: urlunsplit puts the slash back
        joined = "/" + joined
    return origin + joined + rest
