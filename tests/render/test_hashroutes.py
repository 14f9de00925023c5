"""The hash-route rule: `#/path` links become crawlable `?_hashroute=` URLs and back."""

from __future__ import annotations

import pytest
from lxml import html

from docscrawl.discovery.hashroutes import browser_url, crawlable_url, hash_route_links, route_of


@pytest.mark.parametrize(("url", "expected"), [
    ("https://d.example/docs/#/guide/install", "https://d.example/docs/?_hashroute=/guide/install"),
    ("https://d.example/docs/index.html#!/guide", "https://d.example/docs/index.html?_hashroute=!/guide"),
    ("https://d.example/docs/#/guide?id=setup", "https://d.example/docs/?_hashroute=/guide"),
    ("https://d.example/docs/?v=2#/a", "https://d.example/docs/?v=2&_hashroute=/a"),
    ("https://d.example/docs/?_hashroute=/a#/b", "https://d.example/docs/?_hashroute=/b"),
    ("https://d.example/docs/#/", "https://d.example/docs/?_hashroute=/"),
    ("https://d.example/docs/#install", None),  # an in-page anchor
    ("https://d.example/docs/", None),
    ("mailto:x@d.example#/a", None),
])
def test_crawlable_url(url: str, expected: str | None) -> None:
    assert crawlable_url(url) == expected


@pytest.mark.parametrize("url", ["https://d.example/docs/#/guide/install",
                                 "https://d.example/docs/?v=2#!/a/b"])
def test_browser_url_inverts_crawlable_url(url: str) -> None:
    crawlable = crawlable_url(url)
    assert crawlable is not None
    assert browser_url(crawlable) == url
    assert route_of(crawlable) == url.split("#", 1)[1]


def test_plain_urls_go_to_the_browser_unchanged() -> None:
    assert browser_url("https://d.example/docs/a.html?x=1") == "https://d.example/docs/a.html?x=1"
    assert route_of("https://d.example/docs/") is None


def test_hash_route_links_of_a_rendered_page() -> None:
    root = html.fromstring(
        "<html><body><a href='#/cli'>CLI</a><a href='#/cli?id=build'>build</a>"
        "<a href='#section'>anchor</a><a href='/other/'>path</a><a href='#/api/python'>py</a>"
        "<a href='#/guide'>self</a></body></html>")
    links = hash_route_links(root, "http://h/docs/?_hashroute=/guide")
    assert links == [("http://h/docs/?_hashroute=/cli", "unknown"),
                     ("http://h/docs/?_hashroute=/api/python", "unknown")]
