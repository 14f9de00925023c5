"""Heading levels, text, anchors and the heading-path stack."""

from __future__ import annotations

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.headings import (
    HeadingStack,
    extract_headings,
    heading_anchor,
    heading_level,
    heading_text,
)
from docscrawl.extract.markdown import render_main


def element(html: str) -> etree._Element:
    return Selector(text=f"<div>{html}</div>").css("body > div > *")[0].root


def main(html: str) -> etree._Element:
    return Selector(text=f"<main>{html}</main>").css("main")[0].root


@pytest.mark.parametrize(
    ("html", "level"),
    [
        ("<h1>a</h1>", 1),
        ("<h6>a</h6>", 6),
        ('<div role="heading" aria-level="3">a</div>', 3),
        ('<div role="heading">a</div>', None),  # no level given: never invented
        ('<div role="heading" aria-level="9">a</div>', None),
        ("<p>a</p>", None),
    ],
)
def test_heading_level(html: str, level: int | None) -> None:
    assert heading_level(element(html)) == level


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ('<h2>Install<a class="headerlink" href="#i">¶</a></h2>', "Install"),
        ('<h2>Run<a class="hash-link" href="#run">&#8203;</a></h2>', "Run"),
        ('<h2>Build <a href="#b">#</a></h2>', "Build"),
        ('<h2><code>pip</code>  install\n now</h2>', "pip install now"),
        ("<h2>Section §</h2>", "Section"),
        ('<h2>Copy<button class="copy">Copy</button></h2>', "Copy"),
    ],
)
def test_heading_text_drops_permalink_markers(html: str, text: str) -> None:
    assert heading_text(element(html)) == text


@pytest.mark.parametrize(
    ("html", "anchor"),
    [
        ('<h2 id="own">A</h2>', "own"),
        ('<section id="sec"><span id="alias"></span><h2>A</h2></section>', "sec"),
        ('<div class="section" id="old-sphinx"><h2>A</h2></div>', "old-sphinx"),
        ('<h2><a name="named"></a>A</h2>', "named"),
        ('<h2><a id="aid"></a>A</h2>', "aid"),
        ('<h2>A<a class="headerlink" href="#from-link">¶</a></h2>', "from-link"),
        ("<h2>A</h2>", None),
    ],
)
def test_heading_anchor(html: str, anchor: str | None) -> None:
    root = element(html)
    heading = root if heading_level(root) else next(e for e in root.iter() if heading_level(e))
    assert heading_anchor(heading) == anchor


def test_section_id_only_names_its_first_heading() -> None:
    root = element('<section id="s"><h2>First</h2><h3>Second</h3></section>')
    second = root.findall("h3")[0]
    assert heading_anchor(second) is None


def test_stack_replaces_level_and_clears_deeper_levels() -> None:
    stack = HeadingStack()
    stack.push(1, "Guide", "guide")
    stack.push(2, "Install", None)
    stack.push(3, "Linux", "linux")
    heading, warning = stack.push(2, "Usage", None)
    assert heading.path == ["Guide", "Usage"]
    assert warning is None
    assert stack.anchor == "guide"


def test_level_gap_is_kept_as_observed_and_warned() -> None:
    stack = HeadingStack()
    stack.push(1, "Guide", None)
    stack.push(2, "Install", None)
    heading, warning = stack.push(4, "Linux", None)
    assert heading.path == ["Guide", "Install", "Linux"]  # no placeholder for h3
    assert warning is not None
    assert warning.code == "heading_level_gap"
    assert warning.detail == 'h2 "Install" -> h4 "Linux"'
    heading, _ = stack.push(3, "Mac", None)
    assert heading.path == ["Guide", "Install", "Mac"]


def test_first_heading_below_h1_is_not_a_gap() -> None:
    _, warning = HeadingStack().push(3, "Deep start", None)
    assert warning is None


def test_extract_headings_skips_chrome_and_empty_headings() -> None:
    headings, warnings = extract_headings(main(
        '<nav><h2>Menu</h2></nav><h1 id="t">Title</h1><h2></h2>'
        '<div><h3 id="d">Deep</h3></div><aside class="toc"><h2>On this page</h2></aside>'
    ))
    assert [(h.level, h.text, h.anchor, h.path) for h in headings] == [
        (1, "Title", "t", ["Title"]),
        (3, "Deep", "d", ["Title", "Deep"]),
    ]
    assert [w.detail for w in warnings] == ['h1 "Title" -> h3 "Deep"']


def test_render_main_headings_match_extract_headings() -> None:
    html = '<h1 id="a">A</h1><h2>B</h2><h4 id="c">C</h4><h2 role="x">D</h2>'
    rendered = render_main(main(html), base_url="https://x.org/")
    assert rendered.headings == extract_headings(main(html))[0]
    assert [w.code for w in rendered.warnings] == ["heading_level_gap"]
    assert rendered.markdown == "# A\n\n## B\n\n#### C\n\n## D\n"


def test_every_block_code_and_link_carries_the_path() -> None:
    html = (
        "<h1>A</h1><p>p <a href='/x'>x</a></p><h2>B</h2><pre>code</pre>"
        "<h3>C</h3><ul><li><a href='/y'>y</a></li></ul>"
    )
    rendered = render_main(main(html), base_url="https://x.org/")
    assert [b.heading_path for b in rendered.blocks] == [
        ["A"], ["A"], ["A", "B"], ["A", "B"], ["A", "B", "C"], ["A", "B", "C"],
    ]
    assert rendered.code_blocks[0].heading_path == ["A", "B"]
    assert [link.heading_path for link in rendered.links] == [["A"], ["A", "B", "C"]]


def test_rdoc_heading_markers_are_not_heading_text() -> None:
    """RDoc's darkfish writes `<span><a href="#label-X">¶</a> <a href="#top">↑</a></span>`
    after every heading (fixtures/sites/static_small/, RDoc 6.4's own output): both are
    markers, the heading is its words, its anchor the label."""
    from pathlib import Path

    from docscrawl.extract.page import extract_page
    from docscrawl.extract.tree import html_root

    page = Path(__file__).resolve().parents[2] / "fixtures/sites/static_small/latest/index.html"
    html = page.read_text(encoding="utf-8")
    ext = extract_page(html_root(html), "http://127.0.0.1/latest/index.html", html=html)
    assert ext.main_heading == "Acme"
    assert [(h.text, h.anchor) for h in ext.headings] == [("Acme", "label-Acme")]
    assert "↑" not in ext.markdown and "¶" not in ext.markdown
