"""End to end: section anchors of installed DocBook (PostgreSQL 15) and gtk-doc (GLib) pages
reach pages.jsonl and the chunks' `source_url`, and each exists on its page."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.demo.server import StaticSite
from tests.conftest import assert_log_invariants, crawl, read_jsonl

pytestmark = pytest.mark.e2e

SITES = {
    "postgresql": (Path("/usr/share/doc/postgresql-doc-15/html"), "routine-vacuuming.html",
                   "VACUUM-BASICS"),
    "glib": (Path("/usr/share/doc/libglib2.0-doc/glib"), "glib-String-Utility-Functions.html",
             "g-strdup"),
}
NAMES = etree.XPath("//@id | //a/@name")


@pytest.mark.parametrize("name", sorted(SITES))
def test_crawled_sections_carry_anchors_that_exist(name: str, tmp_path: Path) -> None:
    root, start, expected = SITES[name]
    if not (root / start).is_file():
        pytest.skip(f"{root} is not installed")
    with StaticSite(root) as server:
        output = crawl(f"{server.url}/{start}", tmp_path / "out", "max_pages=4", timeout=300)
    assert_log_invariants(output)
    page = output.page(start)
    anchors = [h["anchor"] for h in page["headings"]]
    assert expected in anchors
    assert all(anchors), [h["text"] for h in page["headings"] if not h["anchor"]]
    names = set(NAMES(Selector(text=(root / start).read_text(encoding="utf-8"),
                               type="html").root))
    assert set(anchors) <= names
    chunks = read_jsonl(output.out / "chunks.jsonl")
    cited = {c["metadata"]["source_url"].split("#", 1)[1] for c in chunks
             if c["metadata"]["source_url"].split("#", 1)[0].endswith(start)
             and "#" in c["metadata"]["source_url"]}
    assert cited <= set(anchors)
    assert cited - {anchors[0]}, cited  # chunks cite sections below the page's top
