"""Separators CSS draws (extract/css_separators.py): where they are written, and where
spans stay glued (the golden cases are fixtures/pages/markdown/css_separators_*.html)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.extract.markdown import render_main
from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root


def md(body: str) -> str:
    root = html_root(f"<html><body><main>{body}</main></body></html>")
    return render_main(root.find(".//main"), base_url="http://example.test/").markdown


def test_classifier_in_a_table_cell_and_a_paragraph() -> None:
    assert md('<p><strong>n</strong><span class="classifier">int</span></p>') == "**n** : int\n"
    table = ('<table><tr><th>name</th></tr><tr><td>size<span class="classifier">int</span>'
             "</td></tr></table>")
    assert "| size : int |" in md(table)


def test_span_rows_get_a_space_only_between_words() -> None:
    assert md("<div><span>Added in: v1.0</span><span>Removed in: v2.0</span></div>") == (
        "Added in: v1.0 Removed in: v2.0\n")
    assert md("<div><span>Deprecated</span><span>: use x</span></div>") == "Deprecated: use x\n"


def test_spans_inside_inline_markup_stay_glued() -> None:
    katex = ('<p>where <span class="katex"><span class="katex-html">'
             '<span class="base"><span class="mord mathnormal">x</span>'
             '<span class="mord mathnormal">y</span></span></span></span> holds</p>')
    assert md(katex) == "where xy holds\n"
    assert md('<p><em class="property"><span class="pre">List</span><span class="p">[</span>'
              '<span class="pre">str</span><span class="p">]</span></em></p>') == "*List[str]*\n"
    assert md("<p>a<span>b</span><span>c</span>d</p>") == "abcd\n"


SCIPY_PAGE = Path("/usr/share/doc/python-scipy-doc/html/reference/generated/"
                  "scipy.sparse.lil_array.todense.html")


@pytest.mark.skipif(not SCIPY_PAGE.is_file(), reason="Debian python-scipy-doc not installed")
def test_installed_scipy_parameters_read_name_colon_type() -> None:
    """Sphinx + numpydoc + pydata theme, real output (Debian python-scipy-doc)."""
    url = "http://127.0.0.1/reference/generated/scipy.sparse.lil_array.todense.html"
    page = extract_page(html_root(SCIPY_PAGE.read_text(encoding="utf-8"), url), url)
    assert "**order** : {‘C’, ‘F’}, optional" in page.markdown
    assert "**out** : ndarray, 2-D, optional" in page.markdown
    assert "**arr** : numpy.matrix, 2-D" in page.markdown
