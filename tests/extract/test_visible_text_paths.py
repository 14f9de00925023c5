"""`clean.visible_text`'s shortcuts (a leaf's own text; libxml2's text serialization of a
subtree without chrome or line breaks) give what the walk (`clean._walked_text`) gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lxml import etree

from docscrawl.extract.clean import ChromeMemo, _walked_text, visible_text
from docscrawl.extract.tree import html_root

# Manuals of three generator families Debian installs for the tests (`make test`).
MANUALS = (Path("/usr/share/doc/sphinx-doc/html"), Path("/usr/share/doc/git-doc"),
           Path("/usr/share/doc/libglib2.0-doc"))
PAGES_EACH = 40

SHAPES = """<html><body><div id="m">
<p>one <!-- a comment --> two<?pi x?> three &amp; four&nbsp;five</p>
<table><tr><td>a</td><td>b<br>c</td></tr></table>
<ul><li>x <script>var s = 1;</script> y</li><li>z<style>p {}</style></li></ul>
<div>lead <span class="headerlink">\u00b6</span> tail</div>
<p>\u200bzero\u200d <code>code <em>em</em></code>\ttab\n line</p>
<pre>  kept
  lines  </pre>
<span></span><br><a href="#x">\u00b6</a>
</div></body></html>"""


def _every_element_agrees(root: etree._Element) -> int:
    memo = ChromeMemo()
    checked = 0
    for el in root.iter():
        for skip in (True, False):
            walked = _walked_text(el, skip, memo)
            assert visible_text(el, skip_chrome=skip, chrome=memo) == walked, (
                root.getroottree().getpath(el), skip)
        assert visible_text(el) == _walked_text(el, True, ChromeMemo())  # plain `is_chrome`
        checked += 1
    return checked


def test_the_shortcuts_give_the_walked_text_on_every_shape() -> None:
    """Comments and processing instructions (left out, their tails kept), entities,
    chrome (scripts, styles, permalink markers), line breaks, zero-width characters and
    whitespace runs, empty elements."""
    root = html_root(SHAPES, "http://docs.test/")
    assert _every_element_agrees(root) > 20
    main = root.find(".//div")
    assert main is not None
    assert "one two three & four five ab c x yz lead tail" in visible_text(main)
    assert "var s" not in visible_text(main)


def test_the_shortcuts_give_the_walked_text_on_real_manuals() -> None:
    """Every element of the first pages of three real manuals (Sphinx, AsciiDoc, gtk-doc):
    the fast paths answer what the walk answers, with and without chrome skipped."""
    present = [manual for manual in MANUALS if manual.is_dir()]
    if not present:
        pytest.skip("no Debian manual installed")
    checked = 0
    for manual in present:
        found = sorted(Path(folder, name) for folder, _, names
                       in os.walk(manual, followlinks=True)  # glib's folders are links
                       for name in names if name.endswith(".html"))
        assert found, manual
        for path in found[:PAGES_EACH]:
            root = html_root(path.read_text(encoding="utf-8", errors="replace"), path.as_uri())
            checked += _every_element_agrees(root)
    assert checked > 10_000
