"""Content hashing, URL versions and the canonical rule."""

from __future__ import annotations

import pytest

from docscrawl.dedup.canonical import choose_canonical
from docscrawl.dedup.content import content_hash, normalize_markdown, url_version
from docscrawl.discovery.scope import Scope


def test_whitespace_noise_does_not_change_the_hash() -> None:
    a = "# Title\r\n\r\n\r\nText   \nMore\n\n"
    b = "\n# Title\n\nText\nMore"
    assert normalize_markdown(a) == "# Title\n\nText\nMore"
    assert content_hash(a) == content_hash(b)
    assert content_hash(a) != content_hash("# Title\n\nText more")


@pytest.mark.parametrize(("url", "version"), [
    ("https://d.example/docs/3.6/x", "3.6"),
    ("https://d.example/v2/x", "2"),
    ("https://d.example/en/2.2.x/", "2.2.x"),
    ("https://d.example/docs/x", None),
    ("https://d.example/docs/latest/x", None),
    ("https://d.example/en/stable/x", None),
    ("https://d.example/cmake/help/v3.25/", "3.25"),
])
def test_url_version(url: str, version: str | None) -> None:
    assert url_version(url) == version


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
