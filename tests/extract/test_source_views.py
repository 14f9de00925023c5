"""Source views (a generator's page of one source file) extract as one code block.

Fixtures in fixtures/pages/source_views/ have the markup of each generator's source view
(HsColour and Haddock's hyperlinker `src/` pages, javadoc `src-html/`, Sphinx viewcode
`_modules/`, rustdoc `src/`, Doxygen's source browser `*_source.html`) around our own
short code. Each page must give the file as one code block, with its language, without
line numbers or "[docs]" links, and none of its lines as prose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.extract.code_blocks import code_info, is_code_div, source_view_language
from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "source_views"

HASKELL = """-- | Pairs ordered by their first field.
module Data.Pair ( byFirst ) where

byFirst :: Ord a => (a, b) -> Ordering
byFirst = compare `on` fst"""
JAVA = """package org.example.pairs;

/** Pairs ordered by their first field. */
public final class Pairs {
    static int byFirst(int[] a, int[] b) {
        return Integer.compare(a[0], b[0]);
    }
}"""
PYTHON = '''"""Pairs ordered by their first field."""


def by_first(pairs):
    return sorted(pairs, key=lambda p: p[0])'''
C = """/* Pairs ordered by their first field. */
struct pair {
    int first, second;
};"""
RUST = """/// Pairs ordered by their first field.
pub fn by_first(pairs: &mut [(i32, i32)]) {
    pairs.sort_by_key(|p| p.0);
}"""

CASES: dict[str, tuple[str | None, str]] = {
    "hscolour.html": ("haskell", HASKELL),
    "haddock_hyperlinker.html": ("haskell", HASKELL.replace("( byFirst )", "(byFirst)")),
    "javadoc_src.html": ("java", JAVA),
    "sphinx_viewcode.html": ("python", PYTHON),
    "rustdoc_src.html": ("rust", RUST),
    "doxygen_source.html": (None, C),  # Doxygen's markup names no language
}


def _extract(name: str):  # type: ignore[no-untyped-def]
    url = f"http://example.test/src/{name}"
    return extract_page(html_root((FIXTURES / name).read_text(encoding="utf-8"), url), url)


@pytest.mark.parametrize("name", sorted(CASES))
def test_source_view_is_one_code_block(name: str) -> None:
    language, code = CASES[name]
    page = _extract(name)
    assert [(c.language, c.code) for c in page.code_blocks] == [(language, code)]
    assert page.code_blocks[0].kind == "source"
    assert f"```{language or ''}\n{code}\n```" in page.markdown
    prose = [b.markdown for b in page.blocks if b.type != "code"]
    assert not [md for md in prose if "first" in md]  # no line of the code as prose


def test_language_of_source_view_classes_only() -> None:
    """Pygments' own token classes name no language; a plain `pre` has none either."""
    root = html_root("<pre><span class='k'>def</span> f(): pass</pre>"
                     "<pre>plain</pre>", "http://example.test/")
    assert [source_view_language(pre) for pre in root.iter("pre")] == [None, None]


def test_declared_language_wins_over_source_view_classes() -> None:
    root = html_root("<div class='highlight-cython'><pre><div class='viewcode-block'>"
                     "<span class='k'>cdef</span> int x</div></pre></div>",
                     "http://example.test/")
    assert code_info(next(root.iter("pre"))).language == "cython"


def test_line_div_holder_is_code_only_with_line_divs() -> None:
    """Doxygen's `div.fragment > div.line` is code; a reveal.js-style `.fragment` is not."""
    root = html_root("<div class='fragment'><div class='line'>int x;</div></div>"
                     "<div class='fragment'><p>Shown on the next click.</p></div>",
                     "http://example.test/")
    assert [is_code_div(div) for div in root.iter("div") if "fragment" in div.get("class", "")
            ] == [True, False]


def test_viewcode_docs_link_is_recorded_though_not_code() -> None:
    page = _extract("sphinx_viewcode.html")
    assert "[docs]" not in page.code_blocks[0].code
    assert [link.text for link in page.links if "api.html#" in link.url] == ["[docs]"]
