"""Version detection: evidence per source, normalisation and the status verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.version import detect_version
from docscrawl.extract.version_token import versions_agree

PAGES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "version"
SCRAPY_SPIDERS = Path("/usr/share/doc/python-scrapy-doc/html/topics/spiders.html")

Evidence = list[tuple[str, str]]


def _root(html: str) -> etree._Element:
    return Selector(text=html).root


def _detect(root: etree._Element, url: str, canonical: str | None = None):
    info, warnings = detect_version(root, url, canonical)
    return info, [(e.source, e.value) for e in info.evidence], [w.code for w in warnings]


FIXTURE_CASES: list[tuple[str, str, str | None, str, str | None, Evidence, list[str]]] = [
    # (fixture, url, canonical, status, value, evidence, warning codes)
    (
        "rtd_versioned",
        "https://widget.readthedocs.io/en/3.1/usage/config.html",
        None,
        "consistent",
        "3.1",
        [("url", "3.1"), ("selector", "3.1"), ("sidebar", "3.1"), ("title", "3.1.0")],
        [],
    ),
    (
        "docusaurus_banner",
        "https://acme.test/docs/2.x/intro",
        "https://acme.test/docs/2.x/intro",
        "consistent",
        "2.x",
        [
            ("url", "2.x"),
            ("canonical", "2.x"),
            ("selector", "2.x"),
            ("banner", "2.x"),
            ("meta", "2.x"),
        ],
        [],
    ),
    (
        "mike_selector",
        "https://sprocket.test/1.4/guide/",
        None,
        "consistent",
        "1.4",
        [("url", "1.4"), ("selector", "1.4")],
        [],
    ),
    (
        "conflicting",
        "http://127.0.0.1:17101/en/2.8/topics/spiders.html",
        None,
        "conflicting",
        None,
        [("url", "2.8"), ("sidebar", "3.0"), ("title", "3.0.0")],
        ["version_conflict"],
    ),
    ("unversioned", "https://gadget.test/glossary.html", None, "unversioned", None, [], []),
    (
        "latest_alias",
        "https://widget.readthedocs.io/en/latest/install.html",
        None,
        "inferred",
        "4.1.0",
        [("url", "latest"), ("selector", "latest"), ("title", "4.1.0")],
        [],
    ),
    (
        "sphinx_inline_options",
        "https://legacy.test/tutorial.html",
        None,
        "consistent",
        "1.7.9",
        [("meta", "1.7.9"), ("title", "1.7.9")],
        [],
    ),
]


@pytest.mark.parametrize(
    ("name", "url", "canonical", "status", "value", "evidence", "codes"),
    FIXTURE_CASES,
    ids=[c[0] for c in FIXTURE_CASES],
)
def test_fixture_pages(
    name: str,
    url: str,
    canonical: str | None,
    status: str,
    value: str | None,
    evidence: Evidence,
    codes: list[str],
) -> None:
    root = _root((PAGES / f"{name}.html").read_text(encoding="utf-8"))
    before = etree.tostring(root)
    info, found, warned = _detect(root, url, canonical)
    assert (info.status, info.value) == (status, value)
    assert found == evidence
    assert warned == codes
    assert etree.tostring(root) == before


def test_conflict_warning_lists_every_piece_of_evidence() -> None:
    root = _root((PAGES / "conflicting.html").read_text(encoding="utf-8"))
    _, warnings = detect_version(root, "http://h/en/2.8/topics/spiders.html", None)
    assert warnings[0].detail == "url=2.8, sidebar=3.0, title=3.0.0"


EMPTY = "<html><head><title>Page</title></head><body></body></html>"


@pytest.mark.parametrize(
    ("url", "canonical", "status", "value", "evidence"),
    [
        ("https://s.test/docs/v2/auth/tokens", None, "inferred", "v2", [("url", "v2")]),
        ("https://s.test/7.2.x/ref/", None, "inferred", "7.2.x", [("url", "7.2.x")]),
        ("https://s.test/en/stable/x.html", None, "inferred", "stable", [("url", "stable")]),
        (
            "https://s.test/en/latest/x.html",
            "https://s.test/en/3.1/x.html",
            "inferred",
            "3.1",
            [("url", "latest"), ("canonical", "3.1")],
        ),
        (
            "https://s.test/v2/x",
            "https://s.test/2.3/x",
            "consistent",
            "v2",
            [("url", "v2"), ("canonical", "2.3")],
        ),
        (
            "https://s.test/2.8/x",
            "https://s.test/2.9/x",
            "conflicting",
            None,
            [("url", "2.8"), ("canonical", "2.9")],
        ),
        # Not versions: bare integers, years, the page's own file name, "current" in a path.
        ("https://s.test/chapter/2/x.html", None, "unversioned", None, []),
        ("https://s.test/blog/2024/05/x", None, "unversioned", None, []),
        ("https://s.test/releases/3.8", None, "unversioned", None, []),
        ("https://s.test/current/x.html", None, "unversioned", None, []),
        # Aliases only where version aliases live.
        ("https://s.test/dev/library/os.html", None, "inferred", "dev", [("url", "dev")]),
        ("https://s.test/en/dev/x.html", None, "inferred", "dev", [("url", "dev")]),
        ("https://s.test/docs/dev/policies.html", None, "unversioned", None, []),
        ("https://s.test/docs/next/intro", None, "inferred", "next", [("url", "next")]),
        ("https://s.test/guide/next/steps.html", None, "unversioned", None, []),
        ("https://s.test/p/foo/en/latest/x.html", None, "inferred", "latest", [("url", "latest")]),
    ],
)
def test_url_and_canonical_rules(
    url: str, canonical: str | None, status: str, value: str | None, evidence: Evidence
) -> None:
    info, found, _ = _detect(_root(EMPTY), url, canonical)
    assert (info.status, info.value, found) == (status, value, evidence)


@pytest.mark.parametrize(
    ("head", "body", "evidence"),
    [
        ('<meta name="docsearch:version" content="3.2">', "", [("meta", "3.2")]),
        (
            '<script id="documentation_options" data-version="5.0.1"></script>',
            "",
            [("meta", "5.0.1")],
        ),
        ("<title>CMake 3.25.1 Documentation</title>", "", [("title", "3.25.1")]),
        ("<title>View Decorators — Flask Documentation (2.2.x)</title>", "", [("title", "2.2.x")]),
        ("<title>pytest documentation</title>", "", []),
        (
            "",
            '<select id="version"><option>3.0</option><option selected>2.9</option></select>',
            [("selector", "2.9")],
        ),
        (
            "",
            '<button class="version-switcher__button">v2.1 (stable)</button>',
            [("selector", "v2.1")],
        ),
        (
            "",
            '<div class="VPNavBarMenuGroup"><button><span class="text">v1.6</span></button></div>',
            [("selector", "v1.6")],
        ),
        (
            "",
            '<div class="version-banner">You are viewing docs for version 0.9. See latest.</div>',
            [("banner", "0.9")],
        ),
        (
            "",
            '<div class="sphinxsidebar"><p class="version">Version 4.2</p></div>',
            [("sidebar", "4.2")],
        ),
        # "versionadded" notes and prose mentioning versions are not evidence.
        ("", '<div class="versionadded"><p>New in version 1.3.</p></div>', []),
    ],
    ids=[
        "meta-docsearch",
        "data-version",
        "title-cmake",
        "title-flask",
        "title-none",
        "select",
        "pydata-switcher",
        "vitepress-nav",
        "banner-phrase",
        "sphinx-sidebar",
        "versionadded-ignored",
    ],
)
def test_page_sources(head: str, body: str, evidence: Evidence) -> None:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    _, found, _ = _detect(_root(html), "https://s.test/page.html")
    assert found == evidence


def test_differing_aliases_are_uncertain_not_conflicting() -> None:
    html = '<html><head><meta name="docsearch:version" content="current"></head></html>'
    info, _, codes = _detect(_root(html), "https://s.test/en/latest/x.html")
    assert (info.status, info.value, codes) == ("inferred", "latest", ["version_uncertain"])


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("2.8", "2.8.0", True),
        ("2.8", "2.8.1", True),
        ("v2", "2.3", True),
        ("V2", "v2.0", True),
        ("2.2.x", "2.2.3", True),
        ("2.x", "2", True),
        ("2.8", "2.9", False),
        ("3.0", "3.10", False),
        ("2", "2.0", True),
        ("3", "v2", False),
        ("2.0rc1", "2.0", True),
        ("2.0rc1", "2.0rc2", False),
        ("latest", "Latest", True),
        ("latest", "2.8", False),
    ],
)
def test_agreement_rule(a: str, b: str, agree: bool) -> None:
    assert versions_agree(a, b) is agree
    assert versions_agree(b, a) is agree


@pytest.mark.skipif(not SCRAPY_SPIDERS.exists(), reason="python-scrapy-doc not installed")
def test_real_scrapy_rtd_page() -> None:
    root = _root(SCRAPY_SPIDERS.read_text(encoding="utf-8"))
    info, found, codes = _detect(root, "http://127.0.0.1:17101/en/2.8/topics/spiders.html")
    # The Debian build has no Read the Docs flyout, so no "selector" evidence here;
    # the RTD theme's static `div.version` is sidebar text.
    assert found == [("url", "2.8"), ("sidebar", "2.8"), ("title", "2.8.0")]
    assert (info.status, info.value, codes) == ("consistent", "2.8", [])
