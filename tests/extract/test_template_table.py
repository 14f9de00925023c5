"""Site template learning: TemplateTable counts, template blocks left out of the main content.

Two generator families built from hand-written fixtures (tests/template_sites.py): a
Sphinx theme with its header and footer inside the article element, and a book generator
whose menu bar (the book title as h1) and a banner sit inside the chosen main element; and
Node.js 18's own generator (fixtures/sites/nodejs/, real pages), whose header menu list
repeats item by item but not as a whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.extract.markdown import render_main
from docscrawl.extract.model import Block, ExtractionWarning
from docscrawl.extract.page import extract_page, page_structure
from docscrawl.extract.template.content import (
    TEMPLATE_WARNING,
    TemplateNotice,
    content_root,
    locator_css,
    template_elements,
    without_blocks,
)
from docscrawl.extract.template.table import (
    TemplateTable,
    list_items,
    page_signatures,
    sign_blocks,
    template_blocks,
)
from docscrawl.extract.tree import html_root
from tests.template_sites import FAMILIES, SITE_TITLES, site_pages

BASE = "http://docs.example.org/lockstep/"
CHROME_TEXTS = ("Previous:", "Table of contents", "© Copyright", "Print this book",
                "You are reading the edition")


def extract_site(family: str, model: TemplateTable | None):
    return {name: extract_page(html_root(html), BASE + name, template_table=model)
            for name, html in site_pages(family).items()}


def learned(family: str) -> TemplateTable:
    model = TemplateTable()
    for extract in extract_site(family, None).values():
        model.observe(extract.signatures)
    return model


@pytest.mark.parametrize("family", FAMILIES)
def test_cold_extraction_keeps_the_template(family: str) -> None:
    """Without the site's evidence the chrome inside the main element is taken for content."""
    pages = extract_site(family, None)
    assert all(SITE_TITLES[family] in p.markdown for p in pages.values())


@pytest.mark.parametrize("family", FAMILIES)
def test_template_is_left_out_once_learned(family: str) -> None:
    model = learned(family)
    assert model.pages == 10 and model.template_count() >= 2
    pages = extract_site(family, model)
    for name, page in pages.items():
        assert SITE_TITLES[family] not in page.markdown, name
        for chrome in CHROME_TEXTS:
            assert chrome not in page.markdown, (name, chrome)
        assert all(SITE_TITLES[family] not in h.path for h in page.headings)
        assert page.headings[0].path == [page.main_heading], name
        assert page.markdown.lstrip().startswith("#"), page.markdown[:80]
        template = [r for r in page.regions if r.template]
        assert template and all(r.signature for r in template)
        assert "template_in_main" in [w.code for w in page.warnings]
        assert not any(SITE_TITLES[family] in b.markdown for b in page.blocks)
    install = pages["install.html"]
    assert install.main_heading == "Installing Lockstep"
    assert "single binary" in install.markdown and install.code_blocks


def test_sphinx_header_links_are_navigation_not_content() -> None:
    page = extract_site("sphinx_header", learned("sphinx_header"))["config.html"]
    home = [link for link in page.links if link.text == "General index"]
    assert home and all(link.region == "primary_navigation" for link in home)
    steps = [link for link in page.links if link.text.startswith("Next:")]
    assert {link.region for link in steps} == {"primary_navigation", "footer_navigation"}


def block(ordinal: int, md: str, kind: str = "paragraph") -> Block:
    return Block(ordinal, kind, md, [], None, f"/html/body/div/p[{ordinal + 1}]", len(md))


def test_only_edge_runs_are_template_and_never_every_block() -> None:
    model = TemplateTable(min_pages=2)
    for i in range(3):
        shared = [block(0, "Site banner text"), block(1, f"Own text {i}"),
                  block(2, "Site banner text")]
        model.observe(page_signatures(sign_blocks(shared, "/html/body/div")))
    page = [block(0, "Site banner text"), block(1, "Page text"), block(2, "Middle repeat"),
            block(3, "Page text 2"), block(4, "Site banner text")]
    model.observe(page_signatures(sign_blocks([block(0, "Middle repeat")], None)))
    found = template_blocks(page, sign_blocks(page, "/html/body/div"), model)
    assert [(t.block.ordinal, t.at_end) for t in found] == [(0, False), (4, True)]
    alone = shared[:1]  # every block template: the page keeps it
    assert template_blocks(alone, sign_blocks(alone, "/html/body/div"), model) == []


def test_model_is_bounded_and_round_trips() -> None:
    model = TemplateTable(min_pages=2, max_signatures=100)
    for page in range(300):
        model.observe([1, 2, 1000 + page])
    assert len(model) <= 100 and model.is_template(1) and model.is_template(2)
    assert not model.is_template(1299)
    again = TemplateTable.from_json(model.to_json())
    assert again.pages == 300 and again.is_template(1) and again.count(2) == model.count(2)
    with pytest.raises(ValueError, match="bad template table"):
        TemplateTable.from_json({"pages": 1})


def test_a_frozen_model_saves_only_what_can_be_template() -> None:
    """A frozen table counts nothing more: its saved form keeps the template signatures'
    counts and judges every signature as the table did (site_model.json stays small)."""
    model = TemplateTable(min_pages=2)
    for page in range(40):
        model.observe([1, 2, 1000 + page], settles=[5000 + page])
    model.observe([2, 3])
    model.freeze()
    saved = model.to_json()
    assert set(saved["counts"]) == {f"{1:016x}", f"{2:016x}"}
    assert saved["keys"] == saved["settled"] == []
    again = TemplateTable.from_json(saved)
    for signature in (1, 2, 3, 1000, 1039):
        assert again.is_template(signature) == model.is_template(signature)
    assert again.count(1) == model.count(1) == 40 and again.frozen
    assert not again.observe([1, 7]) and again.count(1) == 40


def test_a_cold_model_judges_nothing() -> None:
    model = TemplateTable(min_pages=6)
    for i in range(5):
        model.observe([7, i])
    assert not model.warm and not model.is_template(7)
    model.observe([7, 5])
    assert model.warm and model.is_template(7)


def test_a_page_counts_once_however_often_it_is_seen() -> None:
    """A duplicate URL, a task re-delivered after a worker died, a re-crawl: one page."""
    model = TemplateTable(min_pages=2)
    assert model.observe([7, 1]) and not model.observe([1, 7])
    assert model.pages == 1 and model.count(7) == 1
    again = TemplateTable.from_json(model.to_json())
    assert not again.observe([7, 1]) and again.observe([7, 2]) and again.count(7) == 2


def test_repeated_prose_between_own_blocks_is_template_a_heading_is_not() -> None:
    """rustdoc repeats inherited method docs on every type page, between the page's own
    blocks; a repeated section heading there ("Trait Implementations") stays."""
    inherited = "Returns a copy of the value. Read more"
    model = TemplateTable(min_pages=2)
    for i in range(4):
        page = [block(0, f"# Type {i}", "heading"), block(1, "## Trait Implementations",
                                                          "heading"),
                block(2, inherited), block(3, f"Own text of type {i}")]
        model.observe(page_signatures(sign_blocks(page, None)))
    page = [block(0, "# Type 9", "heading"), block(1, "## Trait Implementations", "heading"),
            block(2, inherited), block(3, "Own text of type 9")]
    found = template_blocks(page, sign_blocks(page, None), model)
    assert [t.block.ordinal for t in found] == [2]


@pytest.mark.parametrize("family", FAMILIES)
def test_taking_blocks_out_equals_rendering_without_them(family: str) -> None:
    """The page is rendered once: template blocks are taken out of that rendering with
    what they rendered, the same as a second rendering that skips their elements."""
    model = learned(family)
    for name, html in site_pages(family).items():
        root = html_root(html)
        structure = page_structure(root, BASE + name)
        kept = dict(base_url=structure.base_url, preamble=structure.title_el)
        once = render_main(structure.main_el, excluded=structure.excluded, **kept)
        dropped = template_elements(root, structure.main_locator, once.blocks,
                                    sign_blocks(once.blocks, structure.main_locator), model)
        assert dropped, name
        again = render_main(structure.main_el, excluded=(*structure.excluded, *dropped), **kept)
        out = without_blocks(once, {verdict.block.ordinal for verdict, _ in dropped.values()})
        for part in ("markdown", "blocks", "headings", "code_blocks", "links", "warnings"):
            assert getattr(out, part) == getattr(again, part), (name, part)


def _type_page(i: int) -> str:
    """A rustdoc-like type page: inherited trait docs repeat on every page, with a link."""
    return (f"<html><head><title>Type{i} in lockstep</title></head><body><nav>"
            f"<a href='index.html'>lockstep</a></nav><main><h1>Struct Type{i}</h1>"
            f"<p>Type{i} holds the {i}th part of a lock and its own long description.</p>"
            f"<h2 id='trait-implementations'>Trait Implementations</h2>"
            f"<p>Returns a copy of the value. <a href='https://doc.example/core/clone/"
            f"trait.Clone.html#tymethod.clone'>Read more</a></p>"
            f"<p>Type{i} implements more traits than <a href='t{i + 1}.html'>Type{i + 1}</a>"
            f", in its own words.</p></main></body></html>")


def test_a_link_in_a_left_out_block_keeps_where_it_sits() -> None:
    """The repeated block leaves the Markdown; its link is still reported once, as the
    template region's, with the heading path it sits under (not a context-free link)."""
    model = TemplateTable()
    for i in range(12):
        model.observe(extract_page(html_root(_type_page(i)), f"{BASE}t{i}.html").signatures)
    cold = extract_page(html_root(_type_page(20)), f"{BASE}t20.html")
    page = extract_page(html_root(_type_page(20)), f"{BASE}t20.html", template_table=model)
    assert "Returns a copy of the value" not in page.markdown
    assert "Type20 implements more traits" in page.markdown
    assert [(link.url, link.text) for link in page.links] == [
        (link.url, link.text) for link in cold.links]
    (read_more,) = [link for link in page.links if link.text == "Read more"]
    assert read_more.region != "main_content"
    assert read_more.heading_path == ["Struct Type20", "Trait Implementations"]
    (own,) = [link for link in page.links if link.text == "Type21"]
    assert own.region == "main_content" and own.heading_path == read_more.heading_path


NODE = Path(__file__).resolve().parents[2] / "fixtures/sites/nodejs/docs/latest-v18.x/api"


def test_a_menu_list_most_of_whose_items_repeat_is_template() -> None:
    """Node.js 18's header list: its items but the page's own TOC picker repeat, so the
    list as a whole repeats nowhere; item by item it is template."""
    pages = {p.name: html_root(p.read_text(encoding="utf-8")) for p in sorted(NODE.glob("*.html"))
             if p.name != "index.html"}
    base = "http://127.0.0.1/docs/latest-v18.x/api/"
    model = TemplateTable()
    for name, root in pages.items():
        model.observe(extract_page(root, base + name).signatures)
    for name, root in pages.items():
        cold, warm = extract_page(root, base + name), extract_page(root, base + name,
                                                                   template_table=model)
        assert "Table of contents" in cold.markdown.split("\n## ", 1)[0], name
        assert warm.markdown.startswith("## "), (name, warm.markdown[:120])
        assert "Other versions" not in warm.markdown and "View as JSON" not in warm.markdown
        assert list_items("- a\n  - b\n\n- [c](x)\n1. d") == ["- a - b", "- [c](x)", "1. d"]


def test_the_content_root_most_pages_share_names_a_main_selector() -> None:
    """The deepest element holding the own content of more than half the pages; a page
    unlike the others (an index that is all menus) does not hide it; none at the main."""
    main = "/html/body/div"
    api = "/html/body/div/div[2]/div"
    assert content_root([api] * 8 + ["/html", None], main) == api
    assert content_root([api + "/section[1]"] * 2 + [api + "/section[2]"] * 2, main) == api
    assert content_root([api, main, main], main) is None
    assert locator_css(api) == "html > body > div:nth-of-type(1) > div:nth-of-type(2)" \
        " > div:nth-of-type(1)"


def test_the_template_notice_speaks_once_most_pages_share_a_content_element() -> None:
    """The crawl's warning: most judged pages had template blocks around one element."""
    def page(locator: str) -> list[Block]:
        words = "Own words of the page"
        return [Block(0, "paragraph", words, [], None, locator + "/p", len(words))]

    api = "/html/body/div/div[2]/div"
    notice = TemplateNotice(min_pages=3)
    warned = [ExtractionWarning(TEMPLATE_WARNING, "left out")]
    for i in range(3):
        notice.add(f"http://d.test/{i}.html", page(api), warned, "/html/body/div")
    notice.add("http://d.test/plain.html", page(api), [], "/html/body/div")
    message = notice.message() or ""
    assert message.startswith("3 of the first 4 pages") and "http://d.test/0.html" in message
    assert '"main": "html > body > div:nth-of-type(1) > div:nth-of-type(2) > ' in message
    quiet = TemplateNotice(min_pages=3)
    for i in range(3):
        quiet.add(f"http://d.test/{i}.html", page("/html/body/div"), warned, "/html/body/div")
    assert quiet.message() is None  # the content is the whole main element: no profile helps


@pytest.mark.parametrize("family", FAMILIES)
def test_links_are_the_same_when_discovery_read_the_page_first(family: str) -> None:
    """The spider's discovery files every anchor under a region first (remembered on the
    region map); the page's links, with template blocks left out and filed as template
    regions, are the same as without it."""
    from docscrawl.extract.links import discovery_links

    model = learned(family)
    for name, html in site_pages(family).items():
        alone = extract_page(html_root(html), BASE + name, template_table=model)
        root = html_root(html)
        structure = page_structure(root, BASE + name)
        discovery_links(root, structure.base_url, region_map=structure.regions, texts=False)
        after = extract_page(root, BASE + name, structure=structure, template_table=model)
        assert any(r.template for r in after.regions), name
        assert after.links == alone.links, name
