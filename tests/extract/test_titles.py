"""The page's own title as main heading whatever its level or wrapper (hand-written
fixtures of Texinfo, gi-docgen, Doxygen and Haddock shapes in fixtures/pages/titles), read
from the page and never chosen to agree with the `<title>` (issue 27).

Fixtures whose `<title>` and top heading differ, in their generator's real markup:
`javadoc17_class.html` (JDK 17 javadoc `ClassWriterImpl`, as Debian's openjdk-17-doc
`java/lang/Object.html`: `h1.title` "Class Kettle", the constructor's `h3` "Kettle"),
`mkdocs_nav_title.html` (the `mkdocs` theme as Debian's mkdocs package builds it: the
nav title "Installation" in `<title>`, the page's `h1` "Installing"), `vitepress_
frontmatter_title.html` (VitePress 1.x `.vp-doc` headings with their `header-anchor`; a
frontmatter title naming an `h2`), `nodejs18_v8.html` (Node.js 18.20.4's `doc/api/v8.html`
from Debian's nodejs-doc, trimmed: its site title `h1` in the banner header, the module's
`h2` "V8"), `titles_none/doxygen_empty_file.html` (Doxygen 1.9.4, as libsdl2-doc's
README pages: a title div and no heading), `doxygen_globals_index.html` (Doxygen 1.9.4's
globals index, as libsdl2-doc's `globals_d.html`: an intro, a letter `h3`, the list).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl.extract.main_heading import page_heading
from docscrawl.extract.model import Block
from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root

TITLES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "titles"
EXPECTED = json.loads((TITLES / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_main_heading_and_root(name: str) -> None:
    expected = EXPECTED[name]
    html = (TITLES / f"{name}.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), expected["url"])
    assert page.main_heading == expected["main_heading"]
    assert page.headings[0].path[0] == expected["root"]


@pytest.mark.parametrize(("name", "mismatch"), [
    ("javadoc17_class", False), ("mkdocs_nav_title", True), ("vitepress_frontmatter_title", True),
])
def test_a_title_disagreeing_with_the_heading_is_a_warning_not_a_choice(
        name: str, mismatch: bool) -> None:
    expected = EXPECTED[name]
    html = (TITLES / f"{name}.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), expected["url"])
    assert page.main_heading == expected["main_heading"]
    assert ("identity_mismatch" in [w.code for w in page.warnings]) is mismatch


NODE_V8 = "https://nodejs.org/docs/latest-v18.x/api/v8.html"


def test_nodejs_module_heading_not_the_site_title_in_the_banner() -> None:
    html = (TITLES / "nodejs18_v8.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), NODE_V8)
    assert page.title == "V8 | Node.js v18.20.4 Documentation"
    assert page.main_heading == "V8"


def test_a_two_letter_module_heading_names_the_page() -> None:
    # Node's header h1 is left out as template in a crawl: "V8" and "OS" remain, words
    # too short to share with the title, and still name the page.
    blocks = [_heading(0, 2, "V8"), _heading(1, 3, "v8.cachedDataVersionTag()")]
    assert page_heading(blocks, "V8 | Node.js v18.20.4 Documentation") == "V8"
    assert page_heading([_heading(0, 2, "OS")], "OS | Node.js v18.20.4 Documentation") == "OS"


def test_gi_docgen_kicker_is_no_heading_and_header_title_is_in_main() -> None:
    html = (TITLES / "gi_docgen.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), EXPECTED["gi_docgen"]["url"])
    assert "Class" not in [h.text for h in page.headings]
    assert "**Class**" in page.markdown and "# LksReplica" in page.markdown  # plain headings
    assert "Stops the replica" in page.markdown


def test_haddock_heading_wrapped_in_its_permalink_is_a_heading() -> None:
    html = (TITLES / "haddock.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), EXPECTED["haddock"]["url"])
    assert [h.text for h in page.headings] == ["Starting and stopping", "Queries"]
    assert "# Queries" in page.markdown


def _heading(ordinal: int, level: int, text: str) -> Block:
    return Block(ordinal, "heading", f"{'#' * level} {text}", [text], None, f"/h{ordinal}",
                 len(text))


def test_a_title_block_before_the_headings_names_the_page() -> None:
    blocks = [Block(0, "paragraph", "Data.List", [], None, "/p", 9),
              _heading(1, 1, "List transformations")]
    assert page_heading(blocks, "Data.List") == "Data.List"
    assert page_heading(blocks[1:], "Data.List") == "List transformations"


def test_the_title_never_picks_among_the_headings() -> None:
    # The first heading of the highest rank names the page, whatever the <title> says.
    blocks = [_heading(0, 1, "Installing"), _heading(1, 2, "Installation methods")]
    assert page_heading(blocks, "Installation - Lockstep") == "Installing"
    blocks = [_heading(0, 1, "Class Kettle"), _heading(1, 3, "Kettle")]
    assert page_heading(blocks, "Kettle (Brewhouse API 2.0)") == "Class Kettle"
    h2 = [_heading(0, 2, "Chapter 2. Installing"), _heading(1, 3, "2.1. Requirements")]
    assert page_heading(h2, "Unrelated") == "Chapter 2. Installing"
    assert page_heading(h2, None) == "Chapter 2. Installing"
    assert page_heading([], "Unrelated") is None


@pytest.mark.parametrize(("name", "title"), [
    ("hscolour_source", "src/Lockstep/Replica.hs"),
    ("plain_text_page", "lockstep-replica(8) - manual page"),
])
def test_a_page_without_any_heading_is_named_by_its_title(name: str, title: str) -> None:
    html = (TITLES.parent / "titles_none" / f"{name}.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), f"http://docs.test/{name}.html")
    assert page.headings == []
    assert page.main_heading == title
    assert "main_heading_from_title" in [w.code for w in page.warnings]


def test_a_title_div_names_a_page_without_headings_not_the_head_title() -> None:
    # Doxygen 1.9.4's page for a file with no members (as libsdl2-doc's README pages):
    # with <body> as the main element, the <head> before it is no title block.
    html = (TITLES.parent / "titles_none" / "doxygen_empty_file.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), "https://docs.example.org/lockstep/d7/d21/"
                                         "_r_e_a_d_m_e-replica_8md.html")
    assert page.title == "Lockstep: README-replica.md File Reference"
    assert page.main_heading == "README-replica.md File Reference"
    assert "main_heading_from_title" not in [w.code for w in page.warnings]


def test_a_fallback_main_keeps_a_heading_with_its_content() -> None:
    # Doxygen 1.9.4's globals index (as libsdl2-doc's globals_*.html): no landmark, and the
    # text-density fallback descended into the intro text (or the member list), leaving
    # the letter h3 out; the page's own heading and its whole list are kept.
    html = (TITLES / "doxygen_globals_index.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), "https://docs.example.org/lockstep/globals_l.html")
    assert page.main_heading == "- lks_r -"
    assert "Here is a list of all functions" in page.markdown
    assert "lks_replica_open()" in page.markdown
    assert "main_heading_from_title" not in [w.code for w in page.warnings]


def test_a_page_with_headings_never_falls_back_to_its_title() -> None:
    html = (TITLES / "haddock.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), EXPECTED["haddock"]["url"])
    assert "main_heading_from_title" not in [w.code for w in page.warnings]


@pytest.mark.parametrize(("name", "bar"), [
    ("erl_docgen_users_guide", "Lockstep Replication"), ("erl_docgen_chapter", None),
])
def test_erl_docgen_top_bar_h1_is_not_the_page_heading(name: str, bar: str | None) -> None:
    # erl_docgen repeats an h1 in `div.topbar-title` on every page: the application's name
    # on a User's Guide title page, a copy of the chapter's h1 elsewhere. The main content
    # is the content below the bar, whose own h1 names the page once.
    expected = EXPECTED[name]
    html = (TITLES / f"{name}.html").read_text(encoding="utf-8")
    page = extract_page(html_root(html), expected["url"])
    h1s = [h.text for h in page.headings if h.level == 1]
    assert h1s == [expected["main_heading"]]
    assert bar is None or bar not in [h.text for h in page.headings]
    assert page.markdown.count(expected["main_heading"]) == 1
    assert "Copyright" not in page.markdown.split(expected["main_heading"])[0]
