"""extract_page end to end: generator fixtures and a smoke run over installed real docs."""

from __future__ import annotations

import json
from pathlib import Path

import parsel
import pytest
from lxml import etree

from docscrawl.extract.model import REGIONS, PageExtract
from docscrawl.extract.page import extract_page, identity_warning, significant_words

FIXTURES = Path(__file__).parents[2] / "fixtures" / "pages" / "generators"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


def parse(html: str) -> etree._Element:
    return parsel.Selector(text=html, type="html").root


@pytest.fixture(scope="module")
def extracted() -> dict[str, tuple[etree._Element, bytes, PageExtract]]:
    pages = {}
    for name, expected in EXPECTED.items():
        root = parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))
        before = etree.tostring(root)
        pages[name] = (root, before, extract_page(root, expected["url"]))
    return pages


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_page(name: str, extracted: dict) -> None:
    expected = EXPECTED[name]
    root, before, page = extracted[name]
    assert etree.tostring(root) == before
    assert page.generator == expected["generator"]
    assert page.main_heading == expected["main_heading"]
    assert "main_content_fallback" not in [w.code for w in page.warnings]
    assert expected["main_text"] in " ".join(page.markdown.split())
    for chrome in expected["absent"]:
        assert chrome not in page.markdown, chrome
    assert root.getroottree().xpath(page.main_locator)
    assert set(expected["regions"]) <= {r.region for r in page.regions}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_links(name: str, extracted: dict) -> None:
    _, _, page = extracted[name]
    assert [link.position for link in page.links] == list(range(len(page.links)))
    assert {link.region for link in page.links} <= set(REGIONS)
    main_links = [link for link in page.links if link.region == "main_content"]
    assert main_links, "the article's own links come through the renderer"
    for link in page.links:
        assert link.url.startswith(("http://", "https://", "mailto:")), link.url
        if link.region != "main_content":
            assert link.heading_path == []
    expected_pairs = {tuple(pair) for pair in EXPECTED[name]["links"]}
    outside = {(t, r) for t, r in expected_pairs if r != "main_content"}
    assert outside <= {(link.text, link.region) for link in page.links}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_navigation_path_prefers_breadcrumbs(name: str, extracted: dict) -> None:
    _, _, page = extracted[name]
    crumbs = [crumb.label for crumb in page.breadcrumbs]
    assert page.navigation_path == (crumbs or page.section_path)


@pytest.mark.parametrize(
    ("title", "heading", "warns"),
    [
        ("Installing the widget — Widgetry 3.1 documentation", "Installing the widget", False),
        ("Plugins - Harborline", "Plugins", False),
        ("Getting started with Foo", "Release notes", True),
        ("Page not found", "Kettle", True),
        (None, "Anything", False),
        ("Anything", None, False),
        ("Documentation", "Guide", False),  # nothing significant to compare
    ],
)
def test_identity_warning(title: str | None, heading: str | None, warns: bool) -> None:
    warning = identity_warning(title, heading)
    assert (warning is not None) == warns
    if warning:
        assert warning.code == "identity_mismatch"


def test_identity_mismatch_reaches_page_warnings() -> None:
    html = "<html><head><title>Pricing plans</title></head><body><main><h1>Release notes</h1>"
    html += "<p>Version 2 ships today with many changes.</p></main></body></html>"
    page = extract_page(parse(html), "https://example.org/notes")
    assert "identity_mismatch" in [w.code for w in page.warnings]
    assert significant_words("The Release notes") == {"release", "notes"}


# Real documentation installed by Debian packages; each set is skipped when absent.
REAL_DOCS = {
    "scrapy": ("/usr/share/doc/python-scrapy-doc/html", "**/*.html"),
    "sphinx": ("/usr/share/doc/sphinx-doc/html", "**/*.html"),
    "flask": ("/usr/share/doc/python-flask-doc/html", "**/*.html"),
    "cmake": ("/usr/share/doc/cmake-data/html", "*/*.html"),
    "pytest": ("/usr/share/doc/python-pytest-doc/html", "*.html"),
    "mkdocs": ("/usr/share/doc/mkdocs/html", "**/*.html"),
    "git": ("/usr/share/doc/git-doc", "*.html"),
    "gtk-doc": ("/usr/share/gtk-doc/html", "*/*.html"),
    "cargo-rustdoc": ("/usr/share/doc/cargo/doc", "*/*.html"),
}
# Generators whose pages always match a profile selector (redirect stubs carry no generator).
NO_FALLBACK = ("sphinx", "mkdocs", "rustdoc")
SAMPLE = 25  # files per set, in sorted order, to keep the run short


def _sample(root: str, pattern: str) -> list[Path]:
    base = Path(root)
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob(pattern) if p.is_file())[:SAMPLE]


@pytest.mark.parametrize("docs", sorted(REAL_DOCS))
def test_real_docs_smoke(docs: str) -> None:
    files = _sample(*REAL_DOCS[docs])
    if not files:
        pytest.skip(f"{REAL_DOCS[docs][0]} not installed")
    for path in files:
        html = path.read_text(encoding="utf-8", errors="replace")
        page = extract_page(parse(html), f"https://docs.example.org/{docs}/{path.name}")
        codes = [w.code for w in page.warnings]
        if page.generator in NO_FALLBACK:
            assert "main_content_fallback" not in codes, path
        assert page.main_locator


def test_malformed_urls_do_not_break_a_page() -> None:
    html = ('<html><head><title>T</title></head><body><main><h1>T</h1><p>'
            '<a href="http://[::1">bad</a> <img src="http://[x" alt="pic"></p>'
            '<nav class="breadcrumb"><a href="http://[::1">x</a></nav></main></body></html>')
    page = extract_page(parsel.Selector(text=html).root, "http://d.example/a")
    assert "bad" in page.markdown
    assert page.main_heading == "T"
