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
