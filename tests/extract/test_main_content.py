"""Main-content detection: profile selectors, landmarks, then the scored fallback."""

from __future__ import annotations

import json
from pathlib import Path

import parsel
import pytest
from lxml import etree

from docscrawl.extract.generator import detect_profile
from docscrawl.extract.main_content import find_main_content, scored_fallback

FIXTURES = Path(__file__).parents[2] / "fixtures" / "pages" / "generators"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


def parse(html: str) -> etree._Element:
    return parsel.Selector(text=html, type="html").root


def text_of(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_main_content(name: str) -> None:
    expected = EXPECTED[name]
    root = parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))
    before = etree.tostring(root)
    main, locator, warnings = find_main_content(root, generator=detect_profile(root))
    assert warnings == []
    text = text_of(main)
    assert expected["main_text"] in text
    for chrome in expected["absent"]:
        assert chrome not in text, chrome
    assert root.getroottree().xpath(locator) == [main]
    assert etree.tostring(root) == before  # the input tree is never modified


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_main_content_without_generator_hint(name: str) -> None:
    """Distinctive selectors and landmarks still find the article when detection fails."""
    expected = EXPECTED[name]
    root = parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))
    main, _, _ = find_main_content(root, generator=None)
    assert expected["main_text"] in text_of(main)


def test_landmark_descends_into_single_article() -> None:
    root = parse(
        "<html><body><main><div class='crumbs'><a href='/a'>A</a></div>"
        "<article><h1>Title</h1><p>The real article text lives here, long enough.</p>"
        "</article></main></body></html>"
    )
    main, locator, warnings = find_main_content(root)
    assert main.tag == "article"
    assert locator == "/html/body/main/article"
    assert warnings == []


def test_empty_profile_match_is_skipped() -> None:
    root = parse(
        "<html><body><div class='vp-doc'></div>"
        "<main><p>Server-rendered fallback text of the page.</p></main></body></html>"
    )
    main, _, warnings = find_main_content(root, generator="vitepress")
    assert main.tag == "main"
    assert warnings == []


FALLBACK_PAGE = """
<html><body>
  <div id="top"><a href="/">Home</a> <a href="/docs">Docs</a> <a href="/blog">Blog</a></div>
  <div id="left-column">
    <ul><li><a href="/a">First sidebar topic</a></li><li><a href="/b">Second sidebar topic</a></li>
    <li><a href="/c">Third sidebar topic with a longer label</a></li></ul>
  </div>
  <div id="right-column">
    <div class="inner">
      <h1>Configuring the frobnicator</h1>
      <p>The frobnicator reads its configuration from a single file at start-up.</p>
      <p>Every option has a default, so an empty file is a valid configuration.</p>
      <pre>frob --config /etc/frob.toml</pre>
    </div>
  </div>
  <div class="footer"><a href="/legal">Legal</a> <a href="/privacy">Privacy</a></div>
</body></html>
"""


def test_scored_fallback_picks_text_block_and_warns() -> None:
    root = parse(FALLBACK_PAGE)
    main, locator, warnings = find_main_content(root)
    text = text_of(main)
    assert "reads its configuration" in text
    assert "sidebar topic" not in text
    assert "Legal" not in text
    assert [w.code for w in warnings] == ["main_content_fallback"]
    assert locator in warnings[0].detail


def test_fallback_on_empty_body_returns_body() -> None:
    root = parse("<html><body></body></html>")
    main, _, warnings = find_main_content(root)
    assert main.tag == "body"
    assert warnings[0].code == "main_content_fallback"


TITLES = Path(__file__).parents[2] / "fixtures" / "pages" / "titles"


@pytest.mark.parametrize(("name", "title", "bar", "own"), [
    # erl_docgen: the top bar's h1 names the application, the title page's h1 the guide.
    ("erl_docgen_users_guide", "Lockstep -- Lockstep Replication", "Lockstep Replication",
     "Lockstep Replication User's Guide"),
    # zzzeeksphinx: the site title h1 in `#docs-header` repeats on every page and is the
    # longest part of the `<title>`; the page's h1 opens `#docs-body`.
    ("zzzeeksphinx_header_h1", "Quorum Writes — Lockstep 4.2 Documentation",
     "Lockstep 4.2 Documentation", "Quorum Writes"),
])
def test_fallback_leaves_a_bar_h1_above_content_that_opens_with_its_own(
        name: str, title: str, bar: str, own: str) -> None:
    root = parse((TITLES / f"{name}.html").read_text(encoding="utf-8"))
    main = scored_fallback(root, title)
    h1s = [" ".join("".join(h.itertext()).split()).rstrip(" ¶") for h in main.iter("h1")]
    assert h1s == [own]
    assert bar not in h1s


def test_fallback_keeps_a_title_above_content_that_opens_with_text() -> None:
    # gi-docgen's page title h1 is in a <header> above a section opening with an h4 and
    # text (a Markdown h1 deeper in the docblock does not make it a bar).
    root = parse((TITLES / "gi_docgen.html").read_text(encoding="utf-8"))
    main = scored_fallback(root, "Lks.Replica")
    assert main.find("header") is not None
