"""Code text (exact), language detection and kind classification."""

from __future__ import annotations

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.code_blocks import (
    classify_kind,
    code_info,
    code_text,
    is_code_table,
    normalize_language,
)


def first(html: str, css: str) -> etree._Element:
    return Selector(text=f"<main>{html}</main>").css(css)[0].root


# ---- exact text ----------------------------------------------------------------------


def test_whitespace_is_kept_exactly() -> None:
    pre = first("<pre>def f():\n\tif x:\n        return  1   \n\n\n    pass</pre>", "pre")
    assert code_text(pre) == "def f():\n\tif x:\n        return  1   \n\n\n    pass"


def test_leading_newline_after_pre_and_trailing_newlines_are_dropped() -> None:
    assert code_text(first("<pre>\n  indented\n\n</pre>", "pre")) == "  indented"


def test_prompts_are_kept_as_shown() -> None:
    pre = first(
        '<pre><span class="gp">$ </span>ls -la\n<span class="gp">&gt;&gt;&gt; </span>1 + 1</pre>',
        "pre",
    )
    assert code_text(pre) == "$ ls -la\n>>> 1 + 1"


def test_inline_line_numbers_and_buttons_are_removed() -> None:
    pre = first(
        '<pre><span class="linenos"> 9</span>a = 1\n<span class="linenos">10</span>b = 2'
        '<button class="copybtn">Copy</button></pre>',
        "pre",
    )
    assert code_text(pre) == "a = 1\nb = 2"


def test_line_number_table_uses_the_code_cell() -> None:
    table = first(
        '<table class="highlighttable"><tr><td class="linenos"><div class="linenodiv">'
        '<pre>1\n2</pre></div></td><td class="code"><div class="highlight"><pre>'
        "x = 1\ny = 2\n</pre></div></td></tr></table>",
        "table",
    )
    assert is_code_table(table)
    assert code_info(table).code == "x = 1\ny = 2"


def test_hugo_lntable_is_a_code_table() -> None:
    table = first(
        '<table class="lntable"><tr><td class="lntd"><pre><code><span class="lnt">1\n</span>'
        '</code></pre></td><td class="lntd"><pre><code class="language-go">package main\n'
        "</code></pre></td></tr></table>",
        "table",
    )
    assert is_code_table(table)
    assert code_info(table).code == "package main"
    assert code_info(table).language == "go"


def test_data_table_is_not_a_code_table() -> None:
    assert not is_code_table(first("<table><tr><td>a</td><td>b</td></tr></table>", "table"))


def test_token_lines_with_br_are_joined_exactly() -> None:
    pre = first(
        '<pre><code><span class="token-line"><span>  a</span><br></span>'
        '<span class="token-line"><span>b  </span><br></span></code></pre>',
        "pre",
    )
    assert code_text(pre) == "  a\nb  "


def test_line_spans_without_newlines_get_one_per_line() -> None:
    pre = first(
        '<pre><code><div class="ec-line"><div>one</div></div>'
        '<div class="ec-line"><div>  two</div></div></code></pre>',
        "pre",
    )
    assert code_text(pre) == "one\n  two"


def test_shiki_lines_separated_by_newline_text() -> None:
    pre = first(
        '<pre class="shiki"><code><span class="line"><span>a</span></span>\n'
        '<span class="line"></span>\n<span class="line"><span>  b</span></span></code></pre>',
        "pre",
    )
    assert code_text(pre) == "a\n\n  b"


def test_chroma_line_number_spans_are_removed() -> None:
    pre = first(
        '<pre><code><span class="line"><span class="ln">1</span><span class="cl">a\n</span>'
        '</span><span class="line"><span class="ln">2</span><span class="cl">b\n</span></span>'
        "</code></pre>",
        "pre",
    )
    assert code_text(pre) == "a\nb"


# ---- language ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "language"),
    [
        ('<pre><code class="language-python">x</code></pre>', "python"),
        ('<pre class="lang-js">x</pre>', "javascript"),
        ('<div class="highlight-python"><div class="highlight"><pre>x</pre></div></div>',
         "python"),
        ('<div class="highlight-console"><div class="highlight"><pre>$ x</pre></div></div>',
         "console"),
        ('<div class="highlight-default"><div class="highlight"><pre>x</pre></div></div>', None),
        ('<pre data-lang="yml">x</pre>', "yaml"),
        ('<pre data-language="sh">x</pre>', "bash"),
        ('<pre class="sourceCode python"><code class="sourceCode python">x</code></pre>',
         "python"),
        ('<pre class="rust item-decl"><code>x</code></pre>', "rust"),
        ('<div class="language-ts vp-adaptive-theme"><span class="lang">ts</span>'
         '<pre class="shiki"><code>x</code></pre></div>', "typescript"),
        ('<pre><code class="language-text">x</code></pre>', None),
        ('<pre><code class="language-none">x</code></pre>', None),
        ('<pre class="prism-code language-shell">x</pre>', "bash"),
        ('<pre><code class="hljs language-py">x</code></pre>', "python"),
        ("<pre>x</pre>", None),
    ],
)
def test_language_detection(html: str, language: str | None) -> None:
    assert code_info(first(html, "pre")).language == language


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("py", "python"), ("sh", "bash"), ("shell", "bash"), ("js", "javascript"),
        ("ts", "typescript"), ("yml", "yaml"), ("text", None), ("none", None),
        ("default", None), ("Python", "python"), ("shell-session", "console"), ("", None),
        ("go", "go"),
    ],
)
def test_normalize_language(raw: str, name: str | None) -> None:
    assert normalize_language(raw) == name


# ---- kind ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "language", "raw", "after", "kind"),
    [
        ("ls", "console", "console", False, "command"),
        ("$ pip install x\nCollecting x", None, None, False, "command"),
        (">>> import x", "python", "python", False, "command"),
        ("PS> Get-Item .", "powershell", "powershell", False, "command"),
        ("PS C:\\> dir", None, None, False, "command"),
        ("# apt-get install foo", None, None, False, "command"),
        ("# a comment\nx = 1", "python", "python", False, "source"),
        ("pip install docscrawl", None, None, False, "command"),
        ("npm install\nnpm run build", "bash", "bash", False, "command"),
        ("curl -X POST https://x \\\n  -d 'a=1'", "bash", "bash", False, "command"),
        ("for f in *; do echo $f; done", "bash", "bash", False, "source"),
        ("Successfully installed x", None, None, True, "output"),
        ("Successfully installed x", None, "text", True, "output"),
        ("anything", None, "output", False, "output"),
        ("Successfully installed x", None, None, False, "unknown"),
        ("key: value\nother: 2", "yaml", "yaml", False, "config"),
        ('[tool.x]\nname = "y"', "toml", "toml", False, "config"),
        ('{"a": 1}', "json", "json", False, "config"),
        ("server { listen 80; }", "nginx", "nginx", False, "config"),
        ("FROM python:3.11", "dockerfile", "dockerfile", False, "config"),
        ("[section]\nkey = value", None, None, False, "config"),
        ("def f():\n    return 1", "python", "python", False, "source"),
        ("fn main() {}", "rust", "rust", False, "source"),
        ("int x = f(1);", None, None, False, "source"),
        ("just some words", None, None, False, "unknown"),
        ("", None, None, False, "unknown"),
    ],
)
def test_classify_kind(
    code: str, language: str | None, raw: str | None, after: bool, kind: str
) -> None:
    assert classify_kind(code, language, raw, after_command=after) == kind


def test_the_code_markup_prefilter_covers_every_chrome_and_line_class() -> None:
    from docscrawl.extract.code_blocks import (
        CODE_CHROME_CLASSES,
        CODE_MARKUP_NEEDLES,
        LINE_CLASSES,
    )

    for token in CODE_CHROME_CLASSES | LINE_CLASSES:
        assert any(needle in token for needle in CODE_MARKUP_NEEDLES), token


@pytest.mark.parametrize("inner, expected", [
    ('<span class="k">def</span> <span class="nf">f</span>():<!-- x -->\n    pass',
     "def f():\n    pass"),
    ('<span class="LineNos">1</span>x = 1', "x = 1"),
    ('a<br>b<button>Copy</button>', "a\nb"),
    ('<span class="line">a</span><span class="line">b</span>', "a\nb"),
    ('<span hidden>secret</span>shown', "shown"),
])
def test_code_text_fast_and_slow_paths_agree_with_what_is_shown(inner: str, expected: str) -> None:
    from docscrawl.extract.code_blocks import code_text

    pre = etree.fromstring(f"<pre>{inner}</pre>", etree.HTMLParser()).find(".//pre")
    assert code_text(pre) == expected
