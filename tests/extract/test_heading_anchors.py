"""Section anchors that generators put beside the heading, not on it.

The markup reproduces each generator's real output (tags, attributes, nesting and the
whitespace between them; the words are ours): DocBook (PostgreSQL 15), gtk-doc (GLib),
Doxygen (SDL2), texinfo (R manuals), Haddock (base), and the template ids that must never
name a section (erl_docgen, AsciiDoc).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.headings import extract_headings
from docscrawl.extract.markdown import render_main
from docscrawl.extract.page import extract_page

DOCBOOK = (  # PostgreSQL 15: the main content element is the sect1 itself
    '<div class="sect1" id="TABLE-REPAIR"><div class="titlepage"><div><div>'
    '<h2 class="title" style="clear: both">25.1. Table Repair</h2></div></div></div>'
    '<p>Intro.</p><div class="sect2" id="REPAIR-BASICS"><div class="titlepage"><div><div>'
    '<h3 class="title">25.1.1. Repair Basics</h3></div></div></div><p>Text.</p>'
    '<div class="sect3" id="id-1.6.2.3"><div class="titlepage"><div><div>'
    '<h4 class="title">25.1.1.1. Generated</h4></div></div></div></div></div>'
    '<div class="sect2" id="TABLE-REPAIR-OPTIONS"><div class="titlepage"><div><div>'
    '<h3 class="title">25.1.2. Options</h3></div></div></div></div></div>'
)
GTKDOC = (
    '<div class="refentry">\n<a name="glib-Spoons"></a><div class="titlepage"></div>\n'
    '<div class="refsect1">\n<a name="glib-Spoons.functions"></a><h2>Functions</h2>\n'
    '<p>Text.</p>\n</div>\n<div class="refsect1">\n'
    '<a name="glib-Spoons.functions_details"></a><h2>Functions</h2>\n'
    '<div class="refsect2">\n<a name="g-spoon-bend"></a><h3>g_spoon_bend ()</h3>\n'
    '<pre class="programlisting">void g_spoon_bend (void);</pre>\n</div>\n</div>\n</div>'
)
DOXYGEN = (
    '<table class="memberdecls"><tr><td>x</td></tr></table>\n'
    '<a name="details" id="details"></a><h2 class="groupheader">Detailed Description</h2>\n'
    '<div class="textblock"><p >Text.</p>\n</div><h2 class="groupheader">Macro Definition '
    'Documentation</h2>\n<a id="a1b2c3" name="a1b2c3"></a>\n<h2 class="memtitle">'
    '<span class="permalink"><a href="#a1b2c3">&#9670;&nbsp;</a></span>SPOON_BEND</h2>\n\n'
    '<div class="memitem"><p>Doc.</p></div>'
)
TEXINFO = (
    '<p>Comments are welcome.\n</p>\n<span id="Notes-for-readers"></span>'
    '<h4 class="subheading">Notes for readers</h4>\n\n<p>Most readers start here.</p>\n'
)
HADDOCK = (
    '<div id="interface"><a href="#g:1" id="g:1"><h1>Spoon functors</h1></a>'
    '<div class="top"><p class="src">x</p></div>'
    '<a href="#g:2" id="g:2"><h1>Forks</h1></a><div class="top"><p>y</p></div></div>'
)
ERL_DOCGEN = (  # the same div#content on every page, around the users_guide h1
    '<div id="content">\n<div class="innertube">\n<div class="frontpage"></div>\n'
    "<center><h1>Spoon Guide User's Guide</h1></center>\n"
    '<center><h4>Version 1.0</h4></center>\n</div></div>'
)


def anchors(html: str, url: str = "http://127.0.0.1/page.html",
            wrap: bool = True) -> list[tuple[str, str | None]]:
    """Anchors of the headings of `html` as the main content (wrapped in `<main>`, or
    itself the main element)."""
    body = f"<main>{html}</main>" if wrap else html
    root = Selector(text=f"<html><body>{body}</body></html>", type="html").root
    main_el = root.find("body")[0]
    headings, _ = extract_headings(main_el, url)
    assert render_main(main_el, base_url=url).headings == headings  # one rule, two walks
    return [(h.text, h.anchor) for h in headings]


def test_docbook_section_ids_on_wrappers_several_levels_up() -> None:
    found = anchors(DOCBOOK)
    assert found == [
        ("25.1. Table Repair", "TABLE-REPAIR"),
        ("25.1.1. Repair Basics", "REPAIR-BASICS"),
        ("25.1.1.1. Generated", None),  # a generated id spells nothing of the section
        ("25.1.2. Options", "TABLE-REPAIR-OPTIONS"),
    ]


def test_main_element_id_counts_when_it_names_the_page() -> None:
    assert anchors(DOCBOOK, wrap=False)[0] == ("25.1. Table Repair", "TABLE-REPAIR")
    page = "http://127.0.0.1/table-repair.html"
    other = DOCBOOK.replace('id="TABLE-REPAIR"', 'id="content"', 1)
    assert anchors(other, page, wrap=False)[0] == ("25.1. Table Repair", None)
    named = DOCBOOK.replace('id="TABLE-REPAIR"', 'id="TBLREPAIR"', 1)
    assert anchors(named, "http://127.0.0.1/tblrepair.html", wrap=False)[0][1] == "TBLREPAIR"


def test_gtkdoc_named_anchor_before_the_heading() -> None:
    assert anchors(GTKDOC) == [
        ("Functions", "glib-Spoons.functions"),
        ("Functions", "glib-Spoons.functions_details"),
        ("g_spoon_bend ()", "g-spoon-bend"),
    ]


def test_doxygen_anchor_before_the_heading_and_nothing_for_the_bare_one() -> None:
    assert anchors(DOXYGEN) == [
        ("Detailed Description", "details"),
        ("Macro Definition Documentation", None),
        ("SPOON_BEND", "a1b2c3"),
    ]


def test_texinfo_empty_span_before_the_heading() -> None:
    assert anchors(TEXINFO) == [("Notes for readers", "Notes-for-readers")]


def test_haddock_link_around_the_heading() -> None:
    assert anchors(HADDOCK) == [("Spoon functors", "g:1"), ("Forks", "g:2")]


def test_template_ids_never_name_a_section() -> None:
    assert anchors(ERL_DOCGEN)[0] == ("Spoon Guide User's Guide", None)
    asciidoc = '<div id="header">\n<h1>git-spoon(1) Manual Page</h1>\n</div>'
    assert anchors(asciidoc, wrap=False) == [("git-spoon(1) Manual Page", None)]


@pytest.mark.parametrize(
    ("html", "anchor"),
    [
        ('<a name="x"></a>text<h2>A</h2>', None),  # text between: names something else
        ('<a name="x">words</a><h2>A</h2>', None),  # not empty: a link, not a target
        ('<div id="w"><h2>Earlier</h2><div><h3>A</h3></div></div>', None),
        ('<div><a name="x"></a><div>\n<h3>A</h3></div></div>', "x"),  # before the wrapper
        ('<div><a name="x"></a><div>lead<h3>A</h3></div></div>', None),
    ],
)
def test_preceding_and_wrapper_limits(html: str, anchor: str | None) -> None:
    found = [a for text, a in anchors(html) if text == "A"]
    assert found == [anchor]


def _page(path: Path, url: str) -> list[tuple[str, str | None]]:
    html = path.read_text(encoding="utf-8", errors="replace")
    tree = Selector(text=html, type="html").root
    names = set(etree.XPath("//@id | //a/@name")(tree))
    extract = extract_page(tree, url, html=html)
    assert all(h.anchor in names for h in extract.headings if h.anchor)  # exists on the page
    return [(h.text, h.anchor) for h in extract.headings]


POSTGRES = Path("/usr/share/doc/postgresql-doc-15/html/routine-vacuuming.html")
GLIB = Path("/usr/share/doc/libglib2.0-doc/glib/glib-String-Utility-Functions.html")


@pytest.mark.skipif(not POSTGRES.exists(), reason="postgresql-doc-15 is not installed")
def test_installed_postgresql_page_has_every_section_anchor() -> None:
    found = _page(POSTGRES, "http://127.0.0.1/routine-vacuuming.html")
    assert found[0] == ("25.1. Routine Vacuuming", "ROUTINE-VACUUMING")
    assert ("25.1.1. Vacuuming Basics", "VACUUM-BASICS") in found
    assert all(anchor for _, anchor in found)


@pytest.mark.skipif(not GLIB.exists(), reason="libglib2.0-doc is not installed")
def test_installed_glib_page_has_every_section_anchor() -> None:
    found = _page(GLIB, "http://127.0.0.1/glib-String-Utility-Functions.html")
    assert ("g_strdup ()", "g-strdup") in found
    assert all(anchor for _, anchor in found)
