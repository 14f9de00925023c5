"""Notes the main content links to but does not hold (Texinfo's footnotes after a node)."""

from __future__ import annotations

from pathlib import Path

import parsel

from docscrawl.extract.page import extract_page

NOTES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "notes"
URL = "https://d.test/manual/Comma-Separated-Lists.html"


def extract(html: str):
    return extract_page(parsel.Selector(text=html).root, URL)


def test_footnotes_after_the_node_are_its_content() -> None:
    page = extract((NOTES / "texinfo_footnote.html").read_text(encoding="utf-8"))
    assert page.markdown.rstrip().endswith(
        "Comma-separated lists are also sometimes informally referred to as *cs-lists*.")
    assert page.markdown.count("Previous:") == 1  # the navigation after the notes is not in
    assert [h.path for h in page.headings][-2:] == [
        ["6.4 Comma Separated Lists", "Footnotes"],
        ["6.4 Comma Separated Lists", "Footnotes", "(2)"]]


def test_blocks_the_content_does_not_link_into_stay_out() -> None:
    """A comment thread after the article, a header the content links back to, a block
    bigger than the content: none is a note of it."""
    html = """<html><body><header id="top"><p>Site header with words</p></header>
      <article><h1>Page</h1><p>Body text of the page, long enough to matter here.</p>
      <p><a href="#top">Back to top</a> and <a href="#big">the appendix</a>.</p></article>
      <div id="comments"><p>Comments nobody links to.</p></div>
      <div id="big"><p>""" + "Much more text than the article has. " * 20 + """</p></div>
      </body></html>"""
    page = extract(html)
    assert "Site header" not in page.markdown
    assert "Comments nobody" not in page.markdown
    assert "Much more text" not in page.markdown


def test_the_id_shortcut_finds_what_the_full_search_finds() -> None:
    """`linked_notes(index=...)` skips the search for named elements only when no fragment
    link names an id or an `<a name>` anywhere: the same notes either way."""
    from docscrawl.extract.docindex import DocIndex
    from docscrawl.extract.main_content import find_main_content
    from docscrawl.extract.notes import linked_notes

    body = "<article><h1>Page</h1><p>Body text of the page, long enough to count here.</p>" \
           "<p><a href='#n1'>(1)</a> <a href='#dead'>dead</a></p></article>{after}"
    afters = ["<div id='n1'><p>The note by id.</p></div>",
              "<div><a name='n1'></a><p>The note by anchor name.</p></div>",
              "<div><input id='' name='n1'><p>The note by an empty id's name.</p></div>",
              "<div id='other'><p>Nothing links here.</p></div>",
              "<p>No named element at all.</p>"]
    texinfo = (NOTES / "texinfo_footnote.html").read_text(encoding="utf-8")
    pages = [f"<html><body>{body.format(after=after)}</body></html>" for after in afters]
    found = []
    for html in [*pages, texinfo]:
        root = parsel.Selector(text=html).root
        main = find_main_content(root)[0]
        inside = frozenset(str(n) for n in main.xpath(".//@id | .//a/@name"))
        full = linked_notes(root, main, inside)
        assert linked_notes(root, main, inside, index=DocIndex.of(root)) == full
        found.append(len(full))
    assert found[:2] == [1, 1] and found[3:5] == [0, 0] and found[5] > 0
