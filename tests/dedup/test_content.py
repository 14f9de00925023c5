"""Content hashing, URL versions and the canonical rule."""

from __future__ import annotations

import pytest

from docscrawl.dedup.canonical import choose_canonical
from docscrawl.dedup.content import content_hash, normalize_markdown
from docscrawl.discovery.scope import Scope
from docscrawl.extract.version_token import url_version, version_key


def test_whitespace_noise_does_not_change_the_hash() -> None:
    a = "# Title\r\n\r\n\r\nText   \nMore\n\n"
    b = "\n# Title\n\nText\nMore"
    assert normalize_markdown(a) == "# Title\n\nText\nMore"
    assert content_hash(a) == content_hash(b)
    assert content_hash(a) != content_hash("# Title\n\nText more")


@pytest.mark.parametrize(("url", "version", "key"), [
    ("https://d.example/docs/3.6/x", "3.6", "3.6"),
    ("https://d.example/v2/x", "v2", "2"),
    ("https://d.example/en/2.2.x/", "2.2.x", "2.2"),
    ("https://d.example/docs/x", None, None),
    ("https://d.example/docs/latest/x", "latest", None),
    ("https://d.example/en/stable/x", "stable", None),
    ("https://d.example/docs/next/x", "next", "next"),
    ("https://d.example/cmake/help/v3.25/", "v3.25", "3.25"),
    ("https://d.example/doc/libs/1_81_0/doc/html/x.html", "1_81_0", "1.81.0"),
    ("https://d.example/docs/16/x.html", None, None),  # a bare number is no URL version
])
def test_url_version_and_its_dedup_key(url: str, version: str | None, key: str | None) -> None:
    """One rule reads a URL's version; deduplication compares its key."""
    assert url_version(url) == version
    assert version_key(version) == key


SCOPE = Scope("https://d.example/docs/")


@pytest.mark.parametrize(("final", "href", "expected", "warning"), [
    ("https://d.example/docs/x/index.html", None, "https://d.example/docs/x/index.html", None),
    ("https://d.example/docs/x/index.html", "https://d.example/docs/x/",
     "https://d.example/docs/x/", None),
    ("https://d.example/docs/x/", "file:///build/x.html", "https://d.example/docs/x/",
     "canonical_ignored"),
    ("https://d.example/docs/x/", "https://other.example/x/", "https://d.example/docs/x/",
     "canonical_ignored"),
    ("https://d.example/docs/3.6/x/", "https://d.example/docs/x/",
     "https://d.example/docs/3.6/x/", "canonical_ignored"),
])
def test_choose_canonical(final: str, href: str | None, expected: str,
                          warning: str | None) -> None:
    choice = choose_canonical(final, href, SCOPE)
    assert choice.url == expected
    assert (choice.warning[0] if choice.warning else None) == warning


def test_link_destinations_do_not_change_the_hash() -> None:
    a = "See [the settings](https://d.example/latest/configure.html#s) and ![logo](/l.png)."
    b = 'See [the settings](https://d.example/configure.html#s "t") and ![logo](/x/l.png).'
    assert content_hash(a) == content_hash(b)
    assert content_hash(a) != content_hash("See [other settings](https://d.example/c.html).")


@pytest.mark.parametrize(("markdown", "normalized"), [
    ("[f](https://d.example/f_(x)_y.html) end", "[f] end"),  # one level of parentheses
    ('[t](a.html  "A title") end', "[t] end"),
    ("[open](a.html b) end", "[open](a.html b) end"),  # no destination: kept as written
    ("[deep](a(b(c))) end", "[deep](a(b(c))) end"),
    ("[cut](" + "x" * 5000, "[cut](" + "x" * 5000),  # unclosed: no time lost backtracking
    ("a\n\n\n\nb \n", "a\n\nb"),
])
def test_normalized_markdown(markdown: str, normalized: str) -> None:
    assert normalize_markdown(markdown) == normalized
