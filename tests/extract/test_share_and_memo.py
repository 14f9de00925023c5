"""Early-exit share test and the chrome memo answer like the plain computations."""

from __future__ import annotations

import itertools

import lxml.html
import pytest

from docscrawl.extract.clean import ChromeMemo, is_chrome
from docscrawl.extract.regions import _fragment_share_at_least, _is_self_fragment

BASE = "https://docs.example.test/page.html"
HREFS = ("#a", "other.html", "page.html#b", "#c", "/x")


@pytest.mark.parametrize("share", (0.0, 0.5, 0.9, 1.0))
@pytest.mark.parametrize("size", range(0, 5))
def test_fragment_share_at_least_matches_share(share: float, size: int) -> None:
    for hrefs in itertools.product(HREFS, repeat=size):
        root = lxml.html.fromstring(
            "<ul>" + "".join(f'<li><a href="{h}">x</a></li>' for h in hrefs) + "</ul>"
        )
        links = list(root.iter("a"))
        plain = sum(_is_self_fragment(a.get("href", ""), BASE) for a in links) / len(links) \
            if links else 0.0
        assert _fragment_share_at_least(links, BASE, share) == (plain >= share)


def test_chrome_memo_answers_like_is_chrome_and_honours_excluded() -> None:
    root = lxml.html.fromstring(
        '<div><nav>n</nav><p class="x">p</p><a class="headerlink" href="#s">¶</a>'
        '<span hidden>h</span><p>keep</p></div>'
    )
    kept = root[4]
    memo = ChromeMemo([kept])
    for el in root.iter():
        expected = True if el is kept else is_chrome(el)
        assert memo(el) == expected
        assert memo(el) == expected  # the repeat comes from the dict
