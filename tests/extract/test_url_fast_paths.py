"""The string fast paths of link classification agree with the `urlsplit` readings."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from docscrawl.extract.links import SKIP_SCHEMES, resolve
from docscrawl.extract.main_links import ASSET_EXTENSIONS, DEFAULT_PORTS, WEB_SCHEMES, link_target
from docscrawl.extract.urls import join

BASES = (
    "http://127.0.0.1:17104/cmake/help/v3.25/genindex.html",
    "https://docs.example.test/guide/page.html?x=1",
    "https://docs.example.test",
    "HTTP://Docs.Example.test/a/",
    "ftp://files.example.test/pub/",
)
HREFS = (
    "#top", "  #x", "other.html", "other.html#frag", "genindex.html#A", "?x=1#f", "#",
    "/", "/guide/page.html?x=1#sec", "../img/logo.PNG", "file.tar.gz", "http://other.test/",
    "https://docs.example.test:443/guide/page.html?x=1#s", "//docs.example.test/a.pdf",
    "http://127.0.0.1:17104/cmake/help/v3.25/genindex.html#B", "mailto:a@b.test",
    "javascript:void(0)", "JavaScript:alert(1)", "http://[::1", "a\tb.html", "x:y",
    "data:text/plain,hi", "http://127.0.0.1:17104@evil.test/", "http://127.0.0.1:171045/",
    ":odd", "C++:thing", "\x01javascript:alert(1)",
)


def _port(parts):  # type: ignore[no-untyped-def]
    try:
        port = parts.port
    except ValueError:
        return None
    return port or DEFAULT_PORTS.get(parts.scheme)


def reference_target(href: str, url: str, base_url: str) -> str:
    """`link_target` as written with `urlsplit` only (before the prefix fast path)."""
    if href.strip().startswith("#"):
        return "fragment"
    try:
        parts, base = urlsplit(url), urlsplit(base_url)
    except ValueError:
        return "external"
    if parts.scheme and parts.scheme not in WEB_SCHEMES:
        return "external"
    same_host = (parts.hostname, _port(parts)) == (base.hostname, _port(base))
    if same_host and parts.fragment and (parts.path or "/", parts.query) == (
        base.path or "/", base.query,
    ):
        return "fragment"
    if parts.path.lower().endswith(ASSET_EXTENSIONS):
        return "asset"
    return "internal" if same_host else "external"


def reference_resolve(href: str | None, base_url: str) -> str | None:
    href = (href or "").strip()
    if not href:
        return None
    try:
        if urlsplit(href).scheme.lower() in SKIP_SCHEMES:
            return None
        return join(base_url, href)
    except ValueError:
        return None


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("href", HREFS)
def test_link_target_matches_urlsplit_reading(base: str, href: str) -> None:
    url = join(base, href.strip()) or href
    assert link_target(href, url, base) == reference_target(href, url, base)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("href", (*HREFS, "", "   ", None))
def test_resolve_matches_urlsplit_reading(base: str, href: str | None) -> None:
    assert resolve(href, base) == reference_resolve(href, base)
