"""Issue 26's bad input, end to end through a real crawl and every reader of the template
links (the inspection commands, the search index's get_page): a cut-short
templates.jsonl.gz costs one line naming it and the links it held, nothing else; a page
whose sidebar holds 100,000 links (kept to the first MAX_LINKS, as inline) is written
once and read back as written inline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.extract.page import MAX_LINKS
from docscrawl.runs import published_dir
from docscrawl.search import SearchIndex
from tests.conftest import ROOT, crawl, read_jsonl
from tests.e2e.test_template_links import ONE_AT_A_TIME, build, full_links

pytestmark = pytest.mark.e2e


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_a_cut_short_templates_gz_costs_one_line_and_its_links_only(tmp_path: Path) -> None:
    site = build(tmp_path / "site")
    out = tmp_path / "out"
    with StaticSite(site) as server:
        crawl(f"{server.url}/docs/", out, "compress=gzip", settings=ONE_AT_A_TIME)
    expected = full_links(out)
    raw_pages = {p["canonical_url"]: p for p in read_jsonl(out / "pages.jsonl")}
    chunks = len(read_jsonl(out / "chunks.jsonl"))
    templates = published_dir(out) / "templates.jsonl.gz"
    blocks = read_jsonl(templates)
    assert len(blocks) >= 2
    data = templates.read_bytes()
    templates.write_bytes(data[:len(data) // 2])  # cut short half-way: a gzip stream torn

    damaged = full_links(out)
    assert damaged.keys() == expected.keys()
    for url, links in damaged.items():  # its own links always, template links it can
        own = raw_pages[url]["links"]
        assert all(link in links for link in own)
        assert all(link in expected[url] for link in links)
    assert damaged != expected  # the blocks past the damage are gone, and only those

    named = {}
    for command in (("summary", str(out)), ("check", str(out)),
                    ("search", "--embedder", "none", str(out), "sidebar")):
        result = docscrawl(*command)
        assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
        named[command[0]] = [line for line in result.stderr.splitlines()
                             if "templates.jsonl.gz" in line]
    # check reads every page's links: one line names the file; the others never read them
    assert [len(lines) for lines in named.values()] == [0, 1, 0], named
    index = SearchIndex.open(out, embedder="none")
    try:
        assert index.count() == chunks  # every chunk indexed: nothing else lost
        url = next(iter(expected))
        page = index.page_line(url)
        assert page is not None and "template_ids" not in page
        assert all(link in page["links"] for link in raw_pages[url]["links"])
    finally:
        index.close()


def sidebar_site(root: Path, links: int) -> Path:
    """Three pages sharing one sidebar of `links` links (to anchors of one page: the
    frontier gets one URL, the extraction every link)."""
    sidebar = "".join(f'<li><a href="ref.html#s{i}">Entry {i}</a></li>' for i in range(links))
    root.mkdir(parents=True)
    for name, title in (("index", "Home"), ("guide", "Guide"), ("ref", "Reference")):
        others = "".join(f'<a href="{n}.html">{n}</a> ' for n in ("index", "guide", "ref"))
        (root / f"{name}.html").write_text(
            f"<html><head><title>{title}</title></head><body>"
            f"<nav class='sidebar' aria-label='Index'><ul>{sidebar}</ul></nav>"
            f"<main><h1>{title}</h1><p>The {title.lower()} page of the manual. {others}</p>"
            "</main></body></html>", encoding="utf-8")
    return root


def test_a_sidebar_of_100000_links_is_written_once_and_read_back(tmp_path: Path) -> None:
    site = sidebar_site(tmp_path / "site", 100_000)
    inline, out = tmp_path / "inline", tmp_path / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/index.html"
        crawl(seed, inline, settings={**ONE_AT_A_TIME, "DOCSCRAWL_TEMPLATE_LINKS": "False"},
              timeout=600)
        crawl(seed, out, settings=ONE_AT_A_TIME, timeout=600)
    expected = full_links(inline)  # a page keeps its first MAX_LINKS links
    assert len(expected) == 3 and all(len(v) == MAX_LINKS for v in expected.values())
    assert full_links(out) == expected
    blocks = read_jsonl(out / "templates.jsonl")
    assert sorted(len(b["links"]) for b in blocks)[-1] >= MAX_LINKS - 10  # once, shared
    written = (published_dir(out) / "pages.jsonl").stat().st_size
    # the first page keeps the block inline (nothing learned yet), the others reference it
    assert written < 0.75 * (published_dir(inline) / "pages.jsonl").stat().st_size
