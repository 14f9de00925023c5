"""render_main: golden Markdown per fixture, plus focused checks of blocks, links, chrome."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.clean import is_chrome
from docscrawl.extract.markdown import MainRender, render_main
from docscrawl.extract.model import CODE_KINDS, LINK_CONTAINERS, LINK_TARGETS

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "fixtures" / "pages" / "markdown"
BASE = "https://docs.example.com/guide/page.html"
MAIN_SELECTORS = ("main", "article", "[role=main]", "section#main-content", "body")
BLOCK_KINDS = {
    "heading", "paragraph", "list", "table", "code", "blockquote", "callout",
    "definition_list", "image", "rule", "other",
}


def main_of(html: str) -> etree._Element:
    selector = Selector(text=html)
    for css in MAIN_SELECTORS:
        found = selector.css(css)
        if found:
            return found[0].root
    raise AssertionError("no main element")


def render(html: str, base_url: str = BASE) -> MainRender:
    return render_main(main_of(html), base_url=base_url)


def md(html: str) -> str:
    return render(f"<main>{html}</main>").markdown


# ---- golden cases --------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES.glob("*.html")), ids=lambda p: p.stem)
def test_golden_markdown(case: Path) -> None:
    expected = case.with_suffix(".md").read_text(encoding="utf-8")
    assert render(case.read_text(encoding="utf-8")).markdown == expected


@pytest.mark.parametrize("case", sorted(CASES.glob("*.html")), ids=lambda p: p.stem)
def test_golden_structure_is_consistent(case: Path) -> None:
    result = render(case.read_text(encoding="utf-8"))
    assert result.markdown == "" or result.markdown.endswith("\n")
    assert not result.markdown.endswith("\n\n")
    assert "\n\n\n" not in result.markdown
    assert [b.ordinal for b in result.blocks] == list(range(len(result.blocks)))
    assert {b.kind for b in result.blocks} <= BLOCK_KINDS
    assert "\n\n".join(b.markdown for b in result.blocks) + "\n" == result.markdown
    for code in result.code_blocks:
        assert code.kind in CODE_KINDS
        assert code.code in result.blocks[code.block_ordinal].markdown or "<br>" in (
            result.blocks[code.block_ordinal].markdown
        )
    assert [link.position for link in result.links] == list(range(len(result.links)))
    for link in result.links:
        assert link.container in LINK_CONTAINERS and link.target in LINK_TARGETS
        assert link.region == "main_content" and link.url.startswith(("http", "mailto"))
    for heading in result.headings:
        assert heading.path[-1] == heading.text


def test_input_tree_is_not_modified() -> None:
    main = main_of((CASES / "chrome_skipping.html").read_text(encoding="utf-8"))
    before = etree.tostring(main)
    render_main(main, base_url=BASE)
    assert etree.tostring(main) == before


# ---- focused cases -------------------------------------------------------------------


def test_blocks_carry_heading_path_anchor_and_locator() -> None:
    result = render(
        '<main><h1 id="top">Top</h1><p>One.</p><h2>Sub</h2><ul><li>x</li></ul></main>'
    )
    kinds = [(b.kind, b.heading_path, b.anchor) for b in result.blocks]
    assert kinds == [
        ("heading", ["Top"], "top"),
        ("paragraph", ["Top"], "top"),
        ("heading", ["Top", "Sub"], "top"),
        ("list", ["Top", "Sub"], "top"),
    ]
    assert result.blocks[1].locator == "/html/body/main/p"
    assert result.blocks[1].text_chars == len("One.")


def test_wrappers_are_transparent_but_lists_are_one_block() -> None:
    result = render(
        "<main><div><section><p>a</p><p>b</p></section></div><ul><li>c</li></ul></main>"
    )
    assert [b.kind for b in result.blocks] == ["paragraph", "paragraph", "list"]


def test_mixed_inline_and_block_content_in_a_div() -> None:
    assert md("<div>Lead <b>text</b><p>Para</p>tail</div>") == "Lead **text**\n\nPara\n\ntail\n"


def test_whitespace_is_normalized_in_prose_only() -> None:
    result = render("<main><p>  a \n\n  b  </p><pre>  a \n\n  b</pre></main>")
    assert result.markdown.startswith("a b\n\n```\n  a \n\n  b\n```")


def test_inline_code_backticks_are_fenced() -> None:
    assert md("<p><code>``x``</code> and <code>`y</code></p>") == "``` ``x`` ``` and `` `y ``\n"


def test_code_fence_grows_past_fences_in_code() -> None:
    out = md('<pre class="language-md">````\nx\n````</pre>')
    assert out == "`````markdown\n````\nx\n````\n`````\n"


def test_links_are_absolute_and_images_too() -> None:
    out = md('<p><a href="../a b.html">A</a> <img src="i.png" alt="I"></p>')
    assert out == "[A](https://docs.example.com/a%20b.html) ![I](https://docs.example.com/guide/i.png)\n"


def test_empty_links_render_nothing_but_are_recorded_when_they_have_an_image() -> None:
    result = render('<main><p><a href="/x"><img src="/logo.png" alt="Logo"></a> text</p></main>')
    assert result.markdown == (
        "[![Logo](https://docs.example.com/logo.png)](https://docs.example.com/x) text\n"
    )
    assert result.links[0].text == "Logo"


def test_table_colspan_and_rowspan_keep_every_text() -> None:
    out = md(
        "<table><tr><th>a</th><th>b</th><th>c</th></tr>"
        '<tr><td colspan="2">wide</td><td rowspan="2">tall</td></tr>'
        "<tr><td>x</td><td>y</td></tr></table>"
    )
    assert out == "| a | b | c |\n| --- | --- | --- |\n| wide |  | tall |\n| x | y | tall |\n"


def test_table_cells_escape_pipes_and_keep_br() -> None:
    out = md("<table><tr><th>h</th></tr><tr><td>a|b<br>c</td></tr></table>")
    assert out == "| h |\n| --- |\n| a\\|b<br>c |\n"


def test_ordered_list_indentation_follows_marker_width() -> None:
    out = md(
        '<ol start="9"><li>nine<ul><li>sub</li></ul></li><li>ten<ul><li>sub</li></ul></li></ol>'
    )
    assert out == "9. nine\n   - sub\n10. ten\n    - sub\n"


def test_gfm_alert_style_for_admonitions() -> None:
    out = md(
        '<div class="admonition warning"><p class="admonition-title">Warning</p>'
        "<p>Careful.</p></div>"
    )
    assert out == "> [!WARNING]\n> Careful.\n"


@pytest.mark.parametrize(
    ("html", "alert"),
    [
        ('<div class="admonition note"><p>x</p></div>', "NOTE"),
        ('<div class="custom-block danger"><p>x</p></div>', "CAUTION"),
        ('<div class="theme-admonition theme-admonition-tip alert"><p>x</p></div>', "TIP"),
        ('<details class="important"><summary>S</summary><p>x</p></details>', "IMPORTANT"),
        ('<div class="warning"><p>x</p></div>', "WARNING"),
        ('<div class="deprecationBlock"><p>x</p></div>', "WARNING"),
        ('<div class="markdown-alert markdown-alert-caution"><p>x</p></div>', "CAUTION"),
    ],
)
def test_callout_types(html: str, alert: str) -> None:
    result = render(f"<main>{html}</main>")
    assert result.markdown.startswith(f"> [!{alert}]")
    assert result.blocks[0].kind == "callout"


def test_generic_div_with_info_class_is_not_a_callout() -> None:
    assert md('<div class="info"><p>x</p></div>') == "x\n"


def test_code_blocks_get_context_kind_and_ordinal() -> None:
    result = render(
        "<main><h2>Setup</h2><p>Install first:</p><pre>$ pip install x</pre>"
        "<pre>Installed x</pre><h2>Use</h2><pre class='language-python'>import x</pre>"
        "<p>That imports it.</p></main>"
    )
    got = [(c.kind, c.context, c.block_ordinal, c.heading_path) for c in result.code_blocks]
    assert got == [
        ("command", "Install first:", 2, ["Setup"]),
        ("output", "Install first:", 3, ["Setup"]),
        ("source", "That imports it.", 5, ["Use"]),
    ]


def test_code_context_falls_back_to_heading_text() -> None:
    result = render("<main><h2>Only code</h2><pre>x = 1</pre><h2>Next</h2></main>")
    assert result.code_blocks[0].context == "Only code"


def test_code_inside_list_item_uses_the_list_block_ordinal() -> None:
    result = render("<main><p>a</p><ol><li><p>Run:</p><pre>make</pre></li></ol></main>")
    assert result.code_blocks[0].block_ordinal == 1
    assert result.code_blocks[0].context == "Run:"


@pytest.mark.parametrize(
    ("html", "container", "label"),
    [
        ('<p><a href="/x">x</a></p>', "paragraph", None),
        ('<ul><li><strong>Key</strong>: <a href="/x">x</a></li></ul>', "list_item", "Key"),
        ("<table><tr><th>Row</th><td><a href='/x'>x</a></td></tr></table>", "table", "Row"),
        ('<h2>T <a href="/x">x</a></h2>', "heading", None),
        ('<div class="card"><h3>Card</h3><p><a href="/x">x</a></p></div>', "card", "Card"),
        ('<pre><a href="/x">x</a></pre>', "other", None),
    ],
)
def test_link_container(html: str, container: str, label: str | None) -> None:
    link = render(f"<main>{html}</main>").links[0]
    assert (link.container, link.container_label) == (container, label)


@pytest.mark.parametrize(
    ("href", "target"),
    [
        ("#part", "fragment"),
        ("page.html#part", "fragment"),
        ("other.html", "internal"),
        ("https://docs.example.com:443/x", "internal"),
        ("https://elsewhere.org/", "external"),
        ("mailto:a@b.c", "external"),
        ("/dl/tool.tar.gz", "asset"),
        ("img/a.SVG", "asset"),
    ],
)
def test_link_target(href: str, target: str) -> None:
    assert render(f'<main><p><a href="{href}">x</a></p></main>').links[0].target == target


def test_link_heading_path_and_rel() -> None:
    result = render('<main><h1>A</h1><h2>B</h2><p><a rel="nofollow ugc" href="/x">x</a></p></main>')
    assert result.links[0].heading_path == ["A", "B"]
    assert result.links[0].rel == ["nofollow", "ugc"]


def test_permalink_markers_are_not_links_or_text() -> None:
    result = render(
        '<main><h2 id="a">A<a class="headerlink" href="#a">¶</a></h2>'
        '<h2 id="b">B <a href="#b">#</a></h2><h2 id="c">C<a href="#c">🔗</a></h2></main>'
    )
    assert result.markdown == "## A\n\n## B\n\n## C\n"
    assert result.links == []


@pytest.mark.parametrize(
    "html",
    [
        '<a class="headerlink" href="#x">¶</a>',
        '<button class="copybtn">Copy</button>',
        '<div class="copy-button">Copy</div>',
        '<span class="linenos">1</span>',
        '<td class="linenos">1</td>',
        '<pre class="src-line-numbers">1</pre>',
        '<a class="edit-this-page" href="/e">Edit</a>',
        '<a href="/e" title="Edit this page">pencil</a>',
        '<div class="md-content__button">x</div>',
        '<div id="searchbox">x</div>',
        '<div class="version-switcher">x</div>',
        '<div class="cookie-banner">x</div>',
        "<script>x</script>",
        "<template>x</template>",
        "<p hidden>x</p>",
        '<p style="color: red; display:none">x</p>',
        '<span aria-hidden="true">#</span>',
        "<nav>x</nav>",
        '<aside class="toc">x</aside>',
        '<div class="pagination-nav">x</div>',
        '<a href="javascript:void(0)">x</a>',
        '<a class="anchor" href="#x">§</a>',
        '<div class="contents local topic" id="contents"><p>Contents</p></div>',
        '<div class="docsify-pagination-container"><a href="/n">Next</a></div>',
    ],
)
def test_is_chrome(html: str) -> None:
    assert is_chrome(first_element(html))


@pytest.mark.parametrize(
    "html",
    [
        "<p>text</p>",
        '<a href="/page">Editing files</a>',
        '<a href="/x" title="Editing guide">x</a>',
        '<div role="tabpanel" hidden>tab</div>',
        '<div aria-hidden="true"><p>Long visible content</p></div>',
        '<pre class="line-numbers language-js">x</pre>',
        '<h2 class="anchor" id="x">Heading</h2>',
        '<aside class="starlight-aside">x</aside>',
        '<div class="topic"><p>A docutils topic is content.</p></div>',
        '<a class="anchor" href="#/page?id=x"><span>Docsify heading text</span></a>',
    ],
)
def test_is_not_chrome(html: str) -> None:
    assert not is_chrome(first_element(html))


def first_element(html: str) -> etree._Element:
    if html.startswith("<td"):
        return Selector(text=f"<table><tr>{html}</tr></table>").css("td")[0].root
    return Selector(text=f"<div>{html}</div>").css("body > div > *")[0].root


def test_task_list_items_keep_their_state() -> None:
    out = md(
        '<ul><li><input type="checkbox" checked disabled> done</li>'
        '<li><input type="checkbox" disabled> todo</li></ul>'
    )
    assert out == "- [x] done\n- [ ] todo\n"


def test_toc_backref_heading_links_are_unwrapped() -> None:
    result = render('<main><h2><a class="toc-backref" href="#id1">Usage</a></h2></main>')
    assert result.markdown == "## Usage\n"
    assert result.links == []


def test_empty_main_renders_empty_markdown() -> None:
    result = render("<main><script>x</script></main>")
    assert result.markdown == "" and result.blocks == []


# ---- smoke run over real generator output ----------------------------------------------

REAL_DOCS = [
    Path("/usr/share/doc/python-scrapy-doc/html/topics/request-response.html"),
    Path("/usr/share/doc/python-scrapy-doc/html/intro/tutorial.html"),
    Path("/usr/share/doc/sphinx-doc/html/usage/configuration.html"),
    Path("/usr/share/doc/python-flask-doc/html/quickstart.html"),
    Path("/usr/share/doc/python-pytest-doc/html/how-to/fixtures.html"),
    Path("/usr/share/doc/mkdocs/html/user-guide/writing-your-docs.html"),
    Path("/usr/share/doc/cargo/doc/syn/struct.Abi.html"),
    Path("/usr/share/doc/git-doc/git-commit.html"),
    Path("/usr/share/doc/cmake-data/html/manual/cmake.1.html"),
]


@pytest.mark.parametrize("path", REAL_DOCS, ids=lambda p: p.name)
def test_smoke_real_generator_output(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not installed")
    selector = Selector(body=path.read_bytes(), encoding="utf-8", type="html")
    main = next(
        (m for css in ("div[role=main]", "main", "article", "div#content", "body")
         for m in selector.css(css)),
        None,
    )
    assert main is not None
    result = render_main(main.root, base_url="https://docs.example.com/" + path.name)
    assert result.markdown.strip()
    for line in result.markdown.splitlines():
        assert not line.rstrip().endswith("¶"), line
    assert "[¶]" not in result.markdown
    assert "[source]" not in result.markdown


@pytest.mark.parametrize("html", [
    # the heading text is a link to the heading's own anchor (Doxygen, texinfo, hand-written)
    '<main><h2><a href="#installation">Installation</a></h2><p>x</p></main>',
    '<main><h2 id="installation"><a href="https://docs.example.com/guide/#installation">'
    'Installation</a></h2><p>x</p></main>',
    # rustdoc: the heading's text is a link to its own id
    '<main><h2 id="installation"><a href="#installation">Installation</a></h2><p>x</p></main>',
    # BoostBook: a named anchor, then the text as a link to the page itself
    '<main><div class="titlepage"><h2 class="title"><a name="installation"></a>'
    '<a class="link" href="page.html" title="Installation">Installation</a></h2></div></main>',
    # a link inside the heading text, and inline code
    '<main><h2 id="installation"><code>pip</code> <a href="/other">Installation</a></h2></main>',
])
def test_headings_render_as_plain_text_and_keep_their_anchor(html: str) -> None:
    result = render(html)
    heading = result.markdown.split("\n")[0]
    assert heading.startswith("## ") and "](" not in heading and "`" not in heading
    assert heading.endswith("Installation")
    assert result.headings[0].anchor == "installation"
    assert [link.container for link in result.links] == ["heading"]
