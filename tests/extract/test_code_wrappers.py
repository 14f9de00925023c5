"""Code language wherever a generator's markup states it (issue 27): mdBook's playground
`pre` inside pulldown-cmark's `pre`, and the wrappers of Sphinx, Jekyll/Rouge, Asciidoctor,
Docusaurus, Hugo, MkDocs, highlight.js, Pandoc, erl_docgen, rustdoc, Prism, gi-docgen and
SyntaxHighlighter (fixtures/pages/code/mdbook.html, wrappers.html: each case names its
expected language)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from docscrawl.extract.code_blocks import code_info, named_language
from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root

CODE = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "code"
MDBOOK = CODE / "mdbook.html"
WRAPPERS = CODE / "wrappers.html"


def _cases(path: Path) -> list[tuple[str, etree._Element]]:
    root = html_root(path.read_text(encoding="utf-8"), "http://example.test/")
    return [(section.get("data-expect") or "", next(section.iter("pre")))
            for section in root.iter("section")]


CASES = [(path.stem, *case) for path in (MDBOOK, WRAPPERS) for case in _cases(path)]


@pytest.mark.parametrize(("fixture", "expected", "pre"), CASES,
                         ids=[f"{f}-{i}-{e or 'none'}" for i, (f, e, _) in enumerate(CASES)])
def test_language_of_each_wrapper(fixture: str, expected: str, pre: etree._Element) -> None:
    assert code_info(pre).language == (expected or None)


BARE_ONLY = ("rust-example-rendered", "sourceCode")  # a bare name, no prefix: not counted


@pytest.mark.parametrize(("fixture", "expected", "pre"), CASES,
                         ids=[f"{f}-{i}-{e or 'none'}" for i, (f, e, _) in enumerate(CASES)])
def test_named_language_agrees(fixture: str, expected: str, pre: etree._Element) -> None:
    """The check's reading names a language on every block whose markup states one by a
    prefix or an attribute, and none on plain-text blocks."""
    bare = any(marker in (pre.get("class") or "") for marker in BARE_ONLY)
    assert (named_language(pre) is not None) == bool(expected and not bare)


def test_mdbook_nested_playground_pre_is_named_and_read() -> None:
    """`<pre><pre class="playground"><code class="language-rust">`: the outer `pre` is
    what the renderer meets; the language is two elements down."""
    _, pre = _cases(MDBOOK)[0]
    assert pre[0].tag == "pre" and "playground" in pre[0].get("class")
    assert named_language(pre) == "language-rust"
    info = code_info(pre)
    assert info.language == "rust"
    assert info.code.startswith("#![allow(unused)]\nfn main() {\nlet guess: u32")


def test_mdbook_page_renders_rust_fences_without_unread_warnings() -> None:
    root = html_root(MDBOOK.read_text(encoding="utf-8"), "http://example.test/book/ch03.html")
    page = extract_page(root, "http://example.test/book/ch03.html")
    languages = [block.language for block in page.code_blocks]
    assert languages.count("rust") == 10 and None in languages
    assert "```rust\nfn main() {\n    let x = 2.0; // f64\n}\n```" in page.markdown
    assert not [w for w in page.warnings if w.code == "code_language_unread"]
    # book.js's buttons are not code
    rendered = page.code_blocks[-2]
    assert rendered.code.startswith("#![allow(unused)]") and "Copy" not in rendered.code


def test_unread_language_is_warned_with_its_markup() -> None:
    """A wrapper names Python, the code says text: the record keeps no language and the
    warning names the markup (what `docscrawl check` counts)."""
    html = ('<html><body><main><h1>T</h1><div class="language-python"><pre>'
            '<code class="language-text">x = 1</code></pre></div></main></body></html>')
    page = extract_page(html_root(html, "http://example.test/"), "http://example.test/")
    assert page.code_blocks[0].language is None
    warnings = [w.detail for w in page.warnings if w.code == "code_language_unread"]
    assert len(warnings) == 1 and "(language-python)" in warnings[0]


ERLANG_PAGE = Path("/usr/share/doc/erlang-doc/doc/design_principles/statem.html")


@pytest.mark.skipif(not ERLANG_PAGE.is_file(), reason="Debian erlang-doc not installed")
def test_installed_erlang_docs_code_is_erlang() -> None:
    """erl_docgen's real output (Debian erlang-doc): `div.example.example-erl` blocks."""
    url = "http://127.0.0.1/doc/design_principles/statem.html"
    page = extract_page(html_root(ERLANG_PAGE.read_text(encoding="utf-8"), url), url)
    languages = [block.language for block in page.code_blocks]
    assert languages.count("erlang") >= 10
    assert "```erlang\n-module(code_lock)." in page.markdown
    assert not [w for w in page.warnings if w.code == "code_language_unread"]
