"""`fast_join` gives `urljoin`'s answer whenever it answers at all."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import pytest

from docscrawl.discovery.urls import without_userinfo
from docscrawl.extract.urls import fast_join, join

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
HREF = re.compile(r"""(?:href|src)\s*=\s*["']([^"']*)["']""", re.I)
BASES = (
    "http://127.0.0.1:8000/docs/guide/install.html",
    "https://docs.example.com/v2/",
    "https://docs.example.com/v2/a/b/index.html?x=1",
    "http://h:8080/",
    "http://h",
    "https://h/a/b/c/d/e.html#frag",
    "https://user@h/a/",
    # the same directories again: `join` answers path hrefs from its per-directory cache
    "http://127.0.0.1:8000/docs/guide/config.html?v=2#top",
    "https://docs.example.com/v2/a/b/other.html#x",
    "https://docs.example.com/v2/a/b/?q=2",
    "http://h/a/..",
    "http://h/a/../",
    "http://h?x",
)
EDGES = (
    "", ".", "..", "./", "../", "../../../../x", "a/./b/../c", "?q", "#", "##", "#a#b",
    "a?b#c", "/", "//h/x", "a//b", "a/b/", "./a?x=1&y=2#f", "..//a", "/a/../../b", "a/..",
    "a/.", "mailto:x", "javascript:void(0)", "http://x/y", " a", "a b", "%20", "a;b",
    "C:\\x", "a#", "a?#", "a?", "#?x", "a?x#", "a#?", "a?x?y", "a##", "..#", ".?x", "../?",
    "%2e%2e/a", "a%23b", "é.html", "a'b", "?", "?#", "a#b?c", "../../_static/x.js",
)


def _fixture_hrefs() -> set[str]:
    found: set[str] = set()
    for page in FIXTURES.rglob("*.html"):
        found.update(HREF.findall(page.read_text(encoding="utf-8", errors="replace")))
    return found


@pytest.mark.parametrize("base", BASES)
def test_fast_join_agrees_with_urljoin(base: str) -> None:
    hrefs = _fixture_hrefs() | set(EDGES)
    assert len(hrefs) > 200
    answered = 0
    for href in sorted(hrefs):
        got = fast_join(base, href)
        if got is not None:
            answered += 1
            assert got == urljoin(base, href), (base, href)
        # `join` also drops a user:password@ (docscrawl.discovery.urls.without_userinfo)
        assert join(base, href) == without_userinfo(urljoin(base, href)), (base, href)
    assert answered > len(hrefs) // 2  # the fast path takes the common hrefs


def test_join_shares_answers_within_a_directory_only() -> None:
    """Pages of one directory share a path href's answer; a fragment, a query or a
    leading space still depends on the page itself."""
    join.cache_clear()
    pages = ("https://d.example/v2/guide/a.html", "https://d.example/v2/guide/b.html?x=1",
             "https://d.example/v2/guide/", "https://d.example/v2/guide/c.html;p=1",
             "https://d.example/v2/other/c.html")
    hrefs = ("../api/x.html", "y.html#f", "/root.html", "#frag", "?q=1", " #frag", "\t../z",
             "z?", "", "//cdn.example/s.js")
    for _ in range(2):  # the second round from the caches
        for page in pages:
            for href in hrefs:
                assert join(page, href) == without_userinfo(urljoin(page, href)), (page, href)
