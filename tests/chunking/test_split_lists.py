"""Lists and definition lists over the hard maximum split between items (extraction as it
really runs: an AsciiDoc man page's OPTIONS `dl`, a Sphinx toctree `ul`)."""

from __future__ import annotations

import parsel

from docscrawl.chunking.chunker import chunk_page
from docscrawl.chunking.units import split_items
from docscrawl.extract.page import extract_page

URL = "http://d.example/docs/git-commit.html"


def _chunks(body: str, target: int = 120) -> list[dict]:
    html = (f"<html><head><title>Cmd</title></head><body><main><h1>Cmd</h1>{body}</main>"
            "</body></html>")
    extract = extract_page(parsel.Selector(text=html).root, URL)
    return chunk_page(extract, page_id="sha256:p", canonical_url=URL, title="Cmd",
                      version=None, breadcrumbs=[], retrieved_at="2026-01-01T00:00:00Z",
                      content_hash="sha256:h", target_tokens=target)


def _sentence(n: int) -> str:
    return " ".join(f"word{n}x{i}" for i in range(30))


def test_a_long_option_list_splits_between_options() -> None:
    items = "".join(f"<dt><strong>--opt{n}</strong></dt><dd><p>{_sentence(n)}</p></dd>"
                    for n in range(20))
    records = _chunks(f"<h2 id='options'>OPTIONS</h2><dl>{items}</dl>")
    holding = [r for r in records if "--opt" in r["markdown"]]
    assert len(holding) > 3 and not any(r["oversized"] for r in holding)
    for n in range(20):  # each option whole, with its description, in exactly one chunk
        (chunk,) = [r for r in holding if f"**--opt{n}**" in r["markdown"]]
        assert f"word{n}x0" in chunk["markdown"] and f"word{n}x29" in chunk["markdown"]
        meta = chunk["metadata"]  # the page's heading may share the first part's chunk
        assert ["Cmd", "OPTIONS"] in [meta["heading_path"],
                                      *(s["heading_path"] for s in meta.get("sections", []))]
    parts = [r["metadata"]["block_part"] for r in holding]
    assert parts == [[i, len(holding)] for i in range(1, len(holding) + 1)]
    assert all(r["metadata"]["table_part"] is None for r in holding)


def test_a_long_bullet_list_keeps_nested_items_with_their_parent() -> None:
    items = "".join(f"<li><a href='p{n}.html'>Page {n}</a> {_sentence(n)}"
                    f"<ul><li>child of {n}</li></ul></li>" for n in range(20))
    records = _chunks(f"<ul>{items}</ul>")
    holding = [r for r in records if "Page " in r["markdown"]]
    assert len(holding) > 3 and not any(r["oversized"] for r in holding)
    for n in range(20):
        (chunk,) = [r for r in holding if f"[Page {n}](" in r["markdown"]]
        assert f"child of {n}" in chunk["markdown"]


def test_a_list_under_the_maximum_and_a_code_block_stay_whole() -> None:
    code = "\n".join(f"line_{i} = compute({i})" for i in range(200))
    records = _chunks(f"<ul><li>one</li><li>two</li></ul><pre><code>{code}</code></pre>")
    assert sum("line_0 =" in r["markdown"] for r in records) == 1
    assert any(code in r["markdown"] for r in records)
    assert any("- one\n- two" in r["markdown"] for r in records)


def test_split_items_keeps_ordered_numbers_and_continuations() -> None:
    markdown = "\n".join(f"{n}. item {n}\n   more of {n}" for n in range(1, 7))
    groups = split_items(markdown, limit=8)
    assert len(groups) > 1 and "\n".join(groups) == markdown
    assert all(group.split("\n")[1].startswith("   more of") for group in groups)
    assert split_items("just one paragraph\nof two lines", limit=1) == [
        "just one paragraph\nof two lines"]


def test_a_label_over_the_title_is_cited_under_the_title() -> None:
    """gi-docgen puts the kind of the symbol ("Method") over the page's h1: the chunk
    holding both is cited under the h1, not under no heading at all."""
    body = ("<header><p><strong>Method</strong></p><h1 id='unref'>Transform.unref</h1>"
            "</header><h4 id='declaration'>Declaration</h4><pre><code>void unref (Transform*"
            " self)</code></pre><h4 id='description'>Description</h4><p>Releases a reference"
            " on the given transform.</p>")
    html = (f"<html><head><title>Transform.unref</title></head><body><main>{body}</main>"
            "</body></html>")
    extract = extract_page(parsel.Selector(text=html).root, URL)
    (chunk,) = chunk_page(extract, page_id="sha256:p", canonical_url=URL, title="T",
                          version=None, breadcrumbs=[], retrieved_at="2026-01-01T00:00:00Z",
                          content_hash="sha256:h")
    assert chunk["markdown"].startswith("**Method**\n\n# Transform.unref")
    assert chunk["metadata"]["heading_path"] == ["Transform.unref"]
    assert chunk["metadata"]["source_url"] == URL + "#unref"


def test_an_introduction_before_the_first_heading_keeps_its_own_place() -> None:
    intro = " ".join(f"intro{i}" for i in range(60))
    html = (f"<html><head><title>T</title></head><body><main><p>{intro}</p><h1 id='a'>A</h1>"
            f"<p>{_sentence(1)}</p></main></body></html>")
    extract = extract_page(parsel.Selector(text=html).root, URL)
    records = chunk_page(extract, page_id="sha256:p", canonical_url=URL, title="T",
                         version=None, breadcrumbs=[], retrieved_at="2026-01-01T00:00:00Z",
                         content_hash="sha256:h", target_tokens=50)
    (first,) = [r for r in records if "intro0" in r["markdown"]]
    assert first["metadata"]["heading_path"] == []  # an introduction, not a label
