"""Aggregate pages (print views, single-page builds), crawled over a real HTTP server.

fixtures/sites/aggregates/ (hand-written): an mdBook book whose print.html holds every
chapter, and a Sphinx site with a single-page build next to its split pages, whose index
quotes the first paragraph of each page (a summary, not an aggregate).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer, StaticSite
from tests.conftest import SITES, CrawlOutput, read_jsonl, run_crawl


@pytest.fixture(scope="module")
def site() -> Iterator[FixtureServer]:
    with StaticSite(SITES / "aggregates") as server:
        yield server


def crawl(server: FixtureServer, path: str, out: Path, *args: str) -> CrawlOutput:
    result = run_crawl(server.url + path, out, "render=never", *args)
    assert result.returncode == 0, result.stderr[-2000:]
    return CrawlOutput(out, result)


@pytest.mark.parametrize(("path", "aggregate"), [
    ("/mdbook/book/", "print.html"),
    ("/sphinx/docs/", "singlehtml/index.html"),
])
def test_a_page_made_of_other_pages_is_recorded_and_kept_out_of_chunks(
        site: FixtureServer, tmp_path: Path, path: str, aggregate: str) -> None:
    base = site.url + path
    out = crawl(site, path, tmp_path / "out")
    page = out.page(aggregate)
    assert page["aggregate_of"] == [base + n for n in ("intro.html", "install.html", "usage.html")]
    assert [p["canonical_url"] for p in out.pages if p.get("aggregate_of")] == [base + aggregate]
    chunks = read_jsonl(tmp_path / "out" / "chunks.jsonl")
    assert {c["metadata"]["canonical_url"] for c in chunks} == {
        p["canonical_url"] for p in out.pages if not p.get("aggregate_of")}
    assert out.run["chunks_written"] == len(chunks)


def test_an_argument_keeps_the_aggregate_chunks(site: FixtureServer, tmp_path: Path) -> None:
    out = crawl(site, "/mdbook/book/", tmp_path / "out", "keep_aggregates=on")
    assert out.page("print.html")["aggregate_of"]
    chunks = read_jsonl(tmp_path / "out" / "chunks.jsonl")
    assert any(c["metadata"]["canonical_url"].endswith("print.html") for c in chunks)
