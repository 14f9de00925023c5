"""End to end: the template's links written once in templates.jsonl, joined back for
every reader, on a site whose template changes half-way (a section with its own chrome
and sidebar, two generator families' templates), and across an incremental re-crawl."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.export.inbound import add_inbound_links
from docscrawl.inspect.output import OutputDir
from docscrawl.runs import published_dir
from tests.conftest import assert_log_invariants, crawl, read_jsonl
from tests.template_sites import site_pages

pytestmark = pytest.mark.e2e

ONE_AT_A_TIME = {"CONCURRENT_REQUESTS": "1"}  # the same page order in both crawls


def build(root: Path) -> Path:
    """/docs/a/: the Sphinx-header template; /docs/b/: the book menubar template, each
    with its own sidebar (and its own page titles, so no page is a duplicate)."""
    for family, section in (("sphinx_header", "a"), ("book_menubar", "b")):
        directory = root / "docs" / section
        directory.mkdir(parents=True)
        for name, html in site_pages(family).items():
            if section == "b":
                html = html.replace("Lockstep", "Lockstep Book")
            (directory / name).write_text(html, encoding="utf-8")
    (root / "docs" / "index.html").write_text(
        "<html><head><title>Docs</title></head><body><main><h1>Docs</h1>"
        "<p>Two manuals.</p><a href='a/index.html'>Manual</a> <a href='b/index.html'>Book</a>"
        "</main></body></html>", encoding="utf-8")
    return root


def full_links(out: Path) -> dict[str, list]:
    """Every page's links as the inspection commands read them (templates joined)."""
    return {page["canonical_url"]: page["links"]
            for page in OutputDir(out).records("pages.jsonl")}


def test_template_links_written_once_and_joined_back(tmp_path: Path) -> None:
    site = build(tmp_path / "site")
    inline, out = tmp_path / "inline", tmp_path / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, inline, settings={**ONE_AT_A_TIME, "DOCSCRAWL_TEMPLATE_LINKS": "False"})
        first = crawl(seed, out, settings=ONE_AT_A_TIME)
        second = crawl(seed, out, settings=ONE_AT_A_TIME)  # carried over
    assert not (published_dir(inline) / "templates.jsonl").exists()
    templates = read_jsonl(out / "templates.jsonl")
    by_section = {section: [t for t in templates
                            if all(f"/docs/{section}/" in link["url"] for link in t["links"])]
                  for section in ("a", "b")}
    assert by_section["a"] and by_section["b"], [t["region"] for t in templates]
    assert all(t["pages"] >= 2 and t["links"] for t in templates)
    assert len({t["template_id"] for t in templates}) == len(templates)
    # lossless: every page reads exactly the links it had inline
    expected = full_links(inline)
    assert full_links(out) == expected
    assert any(page.get("template_ids") for page in first.pages)
    inline_bytes = (published_dir(inline) / "pages.jsonl").stat().st_size
    assert (published_dir(out) / "pages.jsonl").stat().st_size < 0.8 * inline_bytes
    structure = {r["canonical_url"]: r for r in OutputDir(out).records("structure.jsonl")}
    assert {url: r["links"] for url, r in structure.items()} == expected
    assert_log_invariants(first)
    # the re-crawl carries every page over, and writes the blocks they reference again
    assert second.run["counts"]["events"].get("extracted", 0) == 0
    assert full_links(out) == expected
    assert sorted(json.dumps(t, sort_keys=True) for t in read_jsonl(out / "templates.jsonl")
                  ) == sorted(json.dumps(t, sort_keys=True) for t in templates)
    assert_log_invariants(second)
    # inbound links (chunk metadata, read by the search index and the loaders) are the
    # same: the inline crawl's from the links it fed as it wrote its pages, the re-crawl's
    # kept as the first crawl gave them (every page carried over), and the pass over the
    # re-crawl's files, reading every page's links back from pages.jsonl and
    # templates.jsonl (as a re-crawl with a page changed does)
    def inbound_of(output: Path) -> dict[str, tuple[list, int]]:
        return {c["id"]: (c["metadata"]["inbound_links"], c["metadata"]["inbound_count"])
                for c in read_jsonl(output / "chunks.jsonl")}
    inbound = inbound_of(out)
    assert inbound == inbound_of(inline)
    assert any(count for _links, count in inbound.values())
    pages = len(first.pages)
    assert f"(links of {pages} pages kept from the crawl" in first.result.stderr
    assert "inbound links kept as" in second.result.stderr
    again = tmp_path / "again"
    shutil.copytree(published_dir(out), again)
    assert add_inbound_links(again) == sum(1 for links, _ in inbound.values() if links)
    assert inbound_of(again) == inbound
