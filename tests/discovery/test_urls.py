"""docscrawl.discovery.urls: normalization, tracking parameters, crawlable URLs."""

from __future__ import annotations

import random

import pytest

from docscrawl.discovery.urls import (
    TRACKING_PARAMS,
    is_crawlable_url,
    is_tracking_param,
    normalize_url,
    redact_userinfo,
    strip_fragment,
    without_userinfo,
)

NORMALIZE_CASES = [
    # scheme and host case, default ports, empty path
    ("HTTP://Example.COM", "http://example.com/"),
    ("https://Docs.Example.com:443/A/B", "https://docs.example.com/A/B"),
    ("http://example.com:80/x", "http://example.com/x"),
    ("http://example.com:443/x", "http://example.com:443/x"),
    ("https://example.com:80/x", "https://example.com:80/x"),
    ("https://example.com:8443/x", "https://example.com:8443/x"),
    ("https://example.com?x=1", "https://example.com/?x=1"),
    # IDNA hosts to punycode
    ("https://Bücher.example/ä", "https://xn--bcher-kva.example/%C3%A4"),
    ("https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"),
    # IPv6 literal
    ("http://[::0:1]:8080/x", "http://[::1]:8080/x"),
    ("http://[2001:DB8::1]/", "http://[2001:db8::1]/"),
    # trailing slashes are kept
    ("https://d.example/x", "https://d.example/x"),
    ("https://d.example/x/", "https://d.example/x/"),
    # dot segments
    ("https://d.example/a/./b/../c", "https://d.example/a/c"),
    ("https://d.example/a/b/..", "https://d.example/a/"),
    ("https://d.example/a/b/.", "https://d.example/a/b/"),
    ("https://d.example/../../x", "https://d.example/x"),
    ("https://d.example/a/%2E%2E/b", "https://d.example/b"),
    ("https://d.example/a..b/.c", "https://d.example/a..b/.c"),
    # percent-encoding: uppercase hex, decode unreserved, encode what must be
    ("https://d.example/%7euser/%2f", "https://d.example/~user/%2F"),
    ("https://d.example/%41%62%2D%5f", "https://d.example/Ab-_"),
    ("https://d.example/a%3Ab", "https://d.example/a%3Ab"),
    ("https://d.example/a b", "https://d.example/a%20b"),
    ("https://d.example/100%", "https://d.example/100%25"),
    ("https://d.example/%zz", "https://d.example/%25zz"),
    ("https://d.example/résumé", "https://d.example/r%C3%A9sum%C3%A9"),
    ("https://d.example/r%c3%a9sum%c3%a9", "https://d.example/r%C3%A9sum%C3%A9"),
    ("https://d.example/?q=a+b", "https://d.example/?q=a+b"),
    ("https://d.example/?q=a%2bb&r=%26", "https://d.example/?q=a%2Bb&r=%26"),
    # fragment dropped
    ("https://d.example/a#sec", "https://d.example/a"),
    ("https://d.example/a?b=1#sec?c=2", "https://d.example/a?b=1"),
    # tracking parameters dropped, others sorted (stable for repeated names)
    ("https://d.example/a?utm_source=x&b=1", "https://d.example/a?b=1"),
    ("https://d.example/a?UTM_Medium=x&gclid=1&fbclid=2", "https://d.example/a"),
    ("https://d.example/a?utm%5Fsource=x&b=1", "https://d.example/a?b=1"),
    ("https://d.example/a?c=3&a=2&b=1", "https://d.example/a?a=2&b=1&c=3"),
    ("https://d.example/a?b=2&a=9&b=1", "https://d.example/a?a=9&b=2&b=1"),
    ("https://d.example/a?ref=1&ref_src=tw", "https://d.example/a?ref=1"),
    ("https://d.example/a?utm=1", "https://d.example/a?utm=1"),
    ("https://d.example/a?x&&y=", "https://d.example/a?x&y="),
    ("https://d.example/a?", "https://d.example/a"),
    # surrounding whitespace; userinfo kept as written
    ("  https://d.example/a \n", "https://d.example/a"),
    ("http://User:Pw@D.example/", "http://User:Pw@d.example/"),
    # other schemes lose only their fragment
    ("mailto:Someone@Example.com#x", "mailto:Someone@Example.com"),
]

EQUIVALENT = [
    ("https://D.example:443/a?b=2&a=1", "https://d.example/a?a=1&b=2&utm_campaign=z#top"),
    ("https://d.example/%7Ea", "https://d.example/~a"),
    ("https://d.example", "https://d.example/"),
]

DIFFERENT = [
    ("https://d.example/x", "https://d.example/x/"),
    ("https://d.example/X", "https://d.example/x"),
    ("https://d.example/?a=1&a=2", "https://d.example/?a=2&a=1"),
    ("https://d.example/a%2Fb", "https://d.example/a/b"),
    ("http://d.example/", "https://d.example/"),
    ("https://d.example:8443/", "https://d.example/"),
]


@pytest.mark.parametrize(("url", "expected"), NORMALIZE_CASES)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize("url", [url for url, _ in NORMALIZE_CASES])
def test_normalize_url_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


@pytest.mark.parametrize(("first", "second"), EQUIVALENT)
def test_equivalent_urls_normalize_equal(first: str, second: str) -> None:
    assert normalize_url(first) == normalize_url(second)


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_distinct_urls_stay_distinct(first: str, second: str) -> None:
    assert normalize_url(first) != normalize_url(second)


def test_normalize_url_idempotent_on_random_urls() -> None:
    rng = random.Random(9309)
    alphabet = "aZ09-._~%2f%41%e9 /?&=#+:@!$'()*,;[]é."
    for _ in range(2000):
        path = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        url = f"https://D.example/{path}"
        once = normalize_url(url)
        assert normalize_url(once) == once, url


@pytest.mark.parametrize(
    "url", ["http://d.example:port/", "https:///nohost", "http://exa mple.com/"]
)
def test_normalize_url_rejects_unparsable_http_urls(url: str) -> None:
    with pytest.raises(ValueError):
        normalize_url(url)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        *((name, True) for name in sorted(TRACKING_PARAMS)),
        ("utm_source", True),
        ("utm_whatever", True),
        ("UTM_SOURCE", True),
        ("GCLID", True),
        ("utm", False),
        ("utmsource", False),
        ("ref", False),
        ("page", False),
        ("q", False),
        ("ga", False),
    ],
)
def test_is_tracking_param(name: str, expected: bool) -> None:
    assert is_tracking_param(name) is expected


def test_tracking_params_list_is_the_documented_one() -> None:
    assert {
        "gclid", "fbclid", "msclkid", "dclid", "gbraid", "wbraid", "yclid", "mc_cid",
        "mc_eid", "_ga", "_gl", "igshid", "_hsenc", "_hsmi", "mkt_tok", "ref_src",
    } == TRACKING_PARAMS  # fmt: skip


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://d.example/a#b", "https://d.example/a"),
        ("https://d.example/a#", "https://d.example/a"),
        ("https://d.example/a?x=1#b#c", "https://d.example/a?x=1"),
        ("https://d.example/a", "https://d.example/a"),
        ("#only", ""),
    ],
)
def test_strip_fragment(url: str, expected: str) -> None:
    assert strip_fragment(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://d.example/", True),
        ("http://d.example", True),
        ("HTTPS://D.EXAMPLE/x", True),
        ("http://127.0.0.1:8000/a", True),
        ("http://[::1]/", True),
        ("https://bücher.example/", True),
        ("mailto:a@d.example", False),
        ("javascript:void(0)", False),
        ("data:text/html,hi", False),
        ("file:///etc/passwd", False),
        ("ftp://d.example/file", False),
        ("tel:+123", False),
        ("/relative/path", False),
        ("//d.example/scheme-relative", False),
        ("https://", False),
        ("http:///x", False),
        ("http://d.example:99999/", False),
        ("http://d.example:abc/", False),
        ("http://exa mple.com/", False),
        ("", False),
    ],
)
def test_is_crawlable_url(url: str, expected: bool) -> None:
    assert is_crawlable_url(url) is expected


@pytest.mark.parametrize(("url", "expected"), [
    ("https://d.example/docs/page.html;jsessionid=ABC123?x=1", "https://d.example/docs/page.html?x=1"),
    ("https://d.example/docs/?PHPSESSID=77&b=2", "https://d.example/docs/?b=2"),
    ("https://d.example/docs/?sessionid=1", "https://d.example/docs/"),
    ("https://d.example/docs/?sid=1", "https://d.example/docs/?sid=1"),
])
def test_session_ids_are_normalized_away(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(("url", "stripped", "redacted"), [
    ("http://u:pw@docs.example/a", "http://docs.example/a", "http://***@docs.example/a"),
    ("https://u:p@ss@docs.example:8443/a?x=y@z", "https://docs.example:8443/a?x=y@z",
     "https://***@docs.example:8443/a?x=y@z"),  # the authority's last @ ends the userinfo
    ("HTTP://token@docs.example/", "HTTP://docs.example/", "HTTP://***@docs.example/"),
    ("https://docs.example/a?mail=a@b.example", "https://docs.example/a?mail=a@b.example",
     "https://docs.example/a?mail=a@b.example"),
    ("mailto:team@docs.example", "mailto:team@docs.example", "mailto:team@docs.example"),
])
def test_userinfo_is_dropped_from_urls_and_redacted_from_text(
    url: str, stripped: str, redacted: str,
) -> None:
    assert without_userinfo(url) == stripped
    assert redact_userinfo(url) == redacted
    assert redact_userinfo(f"redirect to {url} (from https://a:b@x.example/)") == (
        f"redirect to {redacted} (from https://***@x.example/)")
