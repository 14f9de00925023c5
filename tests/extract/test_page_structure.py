"""extract_page fidelity: block tree, unresolved TOC fragments, title outside main."""

from __future__ import annotations

from pathlib import Path

import parsel
import pytest

from docscrawl.extract.code_blocks import code_info
from docscrawl.extract.page import extract_page


def extract(html: str, url: str = "https://d.test/docs/page.html"):
    return extract_page(parsel.Selector(text=html, type="html").root, url)


TOC = """<html><body>
<nav class="toc"><ul>
  <li><a href="#intro">Intro</a></li><li><a href="#usage">Usage</a></li>
  <li><a href="#gone">Removed section</a></li><li><a href="#named">Named</a></li>
</ul></nav>
<main><h1 id="intro">Intro</h1><p>Text.</p>
<section id="usage"><h2>Usage</h2><p>More.</p></section>
<h2><a name="named"></a>Named</h2><p>End.</p></main></body></html>"""


def test_unresolved_toc_fragments_are_warned() -> None:
    page = extract(TOC)
    toc = [link for link in page.links if link.region == "table_of_contents"]
    assert len(toc) == 4
    details = [w.detail for w in page.warnings if w.code == "unresolved_fragment"]
    assert len(details) == 1
    assert "#gone" in details[0] and "Removed section" in details[0]


def test_ids_of_other_main_content_elements_are_fragment_targets() -> None:
    page = extract("""<html><body><nav id="side"><a href="#def_stash">stash</a></nav>
      <main><h1 id="glossary">Glossary</h1><dl><dt id="def_stash">stash</dt><dd>x</dd>
      <dt id="def_tree">tree</dt><dd>y</dd><dt><a name="def_blob"></a>blob</dt><dd>z</dd>
      </dl><h2 id="see">See</h2></main></body></html>""")
    # DocBook's `<a name>` too; not the headings' anchors, not the navigation's ids
    assert page.fragment_ids == ["def_stash", "def_tree", "def_blob"]
    assert not [w for w in page.warnings if w.code == "unresolved_fragment"]


def test_block_tree_follows_headings() -> None:
    page = extract("""<html><body><main>
      <p>Lead.</p><h1>Top</h1><p>One.</p><h2>Sub</h2><p>Two.</p><ul><li>x</li></ul>
      <h4>Deep</h4><p>Three.</p><h2>Next</h2><p>Four.</p></main></body></html>""")
    tree = [(b.id, b.type, b.parent, b.region) for b in page.blocks]
    assert tree == [
        ("b0", "paragraph", None, "main_content"),
        ("b1", "heading", None, "main_content"),
        ("b2", "paragraph", 1, "main_content"),
        ("b3", "heading", 1, "main_content"),
        ("b4", "paragraph", 3, "main_content"),
        ("b5", "list", 3, "main_content"),
        ("b6", "heading", 3, "main_content"),  # h2 -> h4: the observed parent, no invention
        ("b7", "paragraph", 6, "main_content"),
        ("b8", "heading", 1, "main_content"),
        ("b9", "paragraph", 8, "main_content"),
    ]
    assert [b.ordinal for b in page.blocks] == list(range(10))
    assert all(b.locator and b.text_chars >= 0 for b in page.blocks)


ASCIIDOC = """<html><head><meta name="generator" content="AsciiDoc 10.2.0">
<title>git-add(1)</title></head><body class="manpage">
<div id="header"><h1>git-add(1) Manual Page</h1><h2>NAME</h2>
<div class="sectionbody"><p>git-add - Add file contents to the index</p></div></div>
<div id="content"><div class="sect1"><h2 id="_synopsis">SYNOPSIS</h2>
<div class="sectionbody"><p>Run it.</p></div></div></div>
<div id="footer"><div id="footer-text">Last updated 2024-05-31</div></div>
</body></html>"""


def test_title_block_before_main_is_rendered_first() -> None:
    page = extract(ASCIIDOC)
    assert page.main_heading == "git-add(1) Manual Page"
    assert [h.text for h in page.headings] == ["git-add(1) Manual Page", "NAME", "SYNOPSIS"]
    assert page.markdown.startswith("# git-add(1) Manual Page\n\n## NAME\n\ngit-add - Add")
    assert "Last updated" not in page.markdown
    assert "identity_mismatch" not in [w.code for w in page.warnings]


def test_no_title_block_when_main_has_its_own_h1() -> None:
    page = extract("""<html><body><div class="hero"><h1>Site</h1></div>
    <main><h1>Page</h1><p>Text.</p></main></body></html>""")
    assert [h.text for h in page.headings] == ["Page"]


def test_layout_table_with_heading_is_not_a_data_table() -> None:
    page = extract("""<html><head><meta name="generator" content="GTK-Doc V1.33.1 (XML mode)">
    </head><body><div class="refentry">
    <div class="refnamediv"><table width="100%"><tr><td valign="top">
    <h2><span class="refentrytitle">Arrays</span></h2>
    <p>Arrays — arrays of arbitrary elements</p></td><td class="gallery_image"></td></tr>
    </table></div><h2>Functions</h2><p>Text.</p></div></body></html>""")
    assert [h.text for h in page.headings] == ["Arrays", "Functions"]
    assert "| ---" not in page.markdown


def _pre(html: str):
    root = parsel.Selector(text=html, type="html").root
    return next(root.iter("pre"))


def test_sphinx_default_language_is_python_when_pygments_highlighted_it() -> None:
    highlighted = _pre('<div class="highlight-default notranslate"><div class="highlight">'
                       '<pre><span></span><span class="kn">import</span> <span class="nn">'
                       'scrapy</span>\n</pre></div></div>')
    plain = _pre('<div class="highlight-default notranslate"><div class="highlight">'
                 '<pre><span></span>2023-01-01 [scrapy] INFO: done\n</pre></div></div>')
    session = _pre('<div class="highlight-default notranslate"><div class="highlight">'
                   '<pre><span></span><span class="gp">&gt;&gt;&gt; </span>1\n</pre></div></div>')
    assert code_info(highlighted).language == "python"
    assert code_info(plain).language is None
    assert code_info(session).language == "pycon"


GENERATORS = Path(__file__).parents[2] / "fixtures" / "pages" / "generators"


@pytest.mark.parametrize(("name", "url", "chrome"), [
    ("python_docs_theme", "https://docs.python.org/3/library/json.html", ["¶", "Show source"]),
    ("pydata", "https://panelkit.example.org/docs/2.1/user_guide/indexing.html",
     ["Copy", "Link to this heading"]),
    ("starlight", "https://orbit.example.dev/guides/routes/",
     ["Edit page", "Last updated", "Section titled", "Previous"]),
    ("redoc_rendered", "https://api.kennel.example/docs/", ["Copy", "collapse"]),
])
def test_chrome_inside_main_stays_out_of_markdown(name: str, url: str, chrome: list[str]) -> None:
    page = extract((GENERATORS / f"{name}.html").read_text(encoding="utf-8"), url)
    for text in chrome:
        assert text not in page.markdown, text


def test_redoc_rendered_keeps_responses_and_json_samples() -> None:
    page = extract((GENERATORS / "redoc_rendered.html").read_text(encoding="utf-8"),
                   "https://api.kennel.example/docs/")
    assert "Pet created" in page.markdown
    assert [(c.language, c.code) for c in page.code_blocks] == [("json", '{"name": "doggie"}')]
    assert [h.text for h in page.headings][:3] == ["Kennel API (1.4.0)", "pets", "Add a new pet"]


def test_new_generator_fixtures_give_trails_and_versions() -> None:
    python = extract((GENERATORS / "python_docs_theme.html").read_text(encoding="utf-8"),
                     "https://docs.python.org/3/library/json.html")
    assert [c.label for c in python.breadcrumbs] == [
        "Python", "3.13.1 Documentation", "The Python Standard Library",
        "Internet Data Handling", "json — JSON encoder and decoder"]
    assert python.version.value == "3.13.1"
    antora = extract((GENERATORS / "antora.html").read_text(encoding="utf-8"),
                     "https://docs.harbor.example/harbor/3.2/playbook/configure.html")
    assert (antora.version.value, antora.version.status) == ("3.2", "consistent")
    assert [c.label for c in antora.breadcrumbs] == ["Harbor", "Playbooks", "Configure a playbook"]
    pydata = extract((GENERATORS / "pydata.html").read_text(encoding="utf-8"),
                     "https://panelkit.example.org/docs/2.1/user_guide/indexing.html")
    sidebar = {link.text: link.region for link in pydata.links}
    assert sidebar["Sidebar basics entry"] == "sidebar_navigation"  # not "toc" by class name
