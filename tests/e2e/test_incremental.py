"""End to end: re-crawls redo only what changed; changes.jsonl says what to add and delete."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.inspect.summary import summarize
from tests.conftest import SITES, CrawlOutput, assert_log_invariants, crawl, read_jsonl, run_crawl

pytestmark = pytest.mark.e2e


def changes(output: CrawlOutput) -> dict[str, dict]:
    return {line["canonical_url"].split("/docs/", 1)[-1]: line
            for line in read_jsonl(output.out / "changes.jsonl")}


def demo_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the demo site to edit between crawls, and an output directory."""
    site = tmp_path / "site"
    shutil.copytree(SITES / "demo", site)
    return site, tmp_path / "out"


def touch_later(path: Path) -> None:
    later = time.time() + 10  # past the second-precision Last-Modified of the last crawl
    os.utime(path, (later, later))


def test_recrawl_reports_added_unchanged_changed_removed(tmp_path: Path) -> None:
    site, out = demo_copy(tmp_path)
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        first_changes = changes(first)
        assert {c["change"] for c in first_changes.values()} == {"added"}
        first_chunks = {c["id"] for c in read_jsonl(out / "chunks.jsonl")}
        assert first_chunks
        first_structure = sorted(read_jsonl(out / "structure.jsonl"),
                                 key=lambda record: record["page_id"])
        assert len(first_structure) == len(first.pages)

        before = len(server.requests)
        second = crawl(seed, out)
        assert {c["change"] for c in changes(second).values()} == {"unchanged"}
        assert second.run["counts"]["events"].get("extracted", 0) == 0
        assert second.run["counts"]["events"]["unchanged"] == len(first.pages)
        assert {c["id"] for c in read_jsonl(out / "chunks.jsonl")} == first_chunks
        assert len(second.pages) == len(first.pages)
        # carried-over pages keep their structure records, as written by the first crawl
        assert sorted(read_jsonl(out / "structure.jsonl"),
                      key=lambda record: record["page_id"]) == first_structure
        assert len(server.requests) > before
        assert_log_invariants(second)

        configure = site / "docs" / "guide" / "configure.html"
        configure.write_text(configure.read_text().replace(
            "Worker processes.", "Worker processes (one per core)."), encoding="utf-8")
        touch_later(configure)
        (site / "docs" / "guide" / "orphan.html").unlink()
        third = crawl(seed, out)
        third_changes = changes(third)
        kinds = {path: c["change"] for path, c in third_changes.items()}
        assert kinds.pop("guide/configure.html") == "changed"
        assert kinds.pop("guide/orphan.html") == "removed"
        assert set(kinds.values()) == {"unchanged"}
        structure_ids = [r["page_id"] for r in read_jsonl(out / "structure.jsonl")]
        assert sorted(structure_ids) == sorted(p["id"] for p in third.pages)
        changed = third_changes["guide/configure.html"]
        assert changed["chunk_ids_to_add"] and changed["chunk_ids_to_delete"]
        configure_chunks = {c["id"] for c in read_jsonl(out / "chunks.jsonl")
                            if c["metadata"]["canonical_url"].endswith("/configure.html")}
        assert set(changed["chunk_ids_to_add"]) <= configure_chunks
        assert set(changed["chunk_ids_to_delete"]) <= first_chunks
        assert not set(changed["chunk_ids_to_delete"]) & configure_chunks
        removed = third_changes["guide/orphan.html"]
        assert removed["chunk_ids_to_delete"] and not removed["chunk_ids_to_add"]
        assert removed["removed_reason"] == "http_404"
        assert third.run["removed_reasons"] == {"http_404": 1}
        summary = [line for line in summarize(out).splitlines() if "changes:" in line]
        assert summary == ["  changes:  changed 1, removed 1 (http_404 1), unchanged 9"]
        assert_log_invariants(third)

        limited = crawl(seed, out, "max_pages=2")
        assert "removed" not in {c["change"] for c in changes(limited).values()}


def chunk_lines(out: Path) -> list[str]:
    return sorted((out / "chunks.jsonl").read_text(encoding="utf-8").splitlines())


def inbound_texts(out: Path, suffix: str) -> set[str]:
    return {link["anchor_text"] for chunk in read_jsonl(out / "chunks.jsonl")
            if chunk["metadata"]["canonical_url"].endswith(suffix)
            for link in chunk["metadata"].get("inbound_links") or ()}


def test_an_unchanged_recrawl_keeps_the_inbound_links_a_changed_one_ranks_them(
        tmp_path: Path) -> None:
    """Every page and chunk carried over from the published run, no page with a new URL:
    the chunks keep the inbound links that run gave them (the same lines, no ranking);
    a page with a new URL it is linked by, a new link or a page gone ranks them again."""
    site, out = demo_copy(tmp_path)
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        assert "inbound links on" in first.result.stderr
        lines = chunk_lines(out)
        assert any('"inbound_links":[{' in line for line in lines)

        second = crawl(seed, out)
        assert second.run["counts"]["events"]["unchanged"] == len(first.pages)
        assert "inbound links kept as" in second.result.stderr
        assert "inbound links on" not in second.result.stderr
        assert chunk_lines(out) == lines  # every chunk as the first run wrote it
        assert_log_invariants(second)

        sitemap = site / "sitemap-guide.xml"  # a URL a page is linked by, new
        sitemap.write_text(sitemap.read_text().replace("</urlset>", (
            "  <url><loc>{{ORIGIN}}/docs/guide/install.html?utm_source=feed</loc></url>\n"
            "</urlset>")), encoding="utf-8")
        aliased = crawl(seed, out)
        assert {c["change"] for c in changes(aliased).values()} == {"unchanged"}
        assert "install.html?utm_source=feed" in str(
            aliased.page("/docs/guide/install.html")["observed_urls"])
        assert "inbound links on" in aliased.result.stderr

        configure = site / "docs" / "guide" / "configure.html"
        configure.write_text(configure.read_text().replace(
            "Worker processes.",
            'Worker processes (<a href="install.html">the installer walkthrough</a>).'),
            encoding="utf-8")
        touch_later(configure)
        third = crawl(seed, out)
        assert changes(third)["guide/configure.html"]["change"] == "changed"
        assert "inbound links kept as" not in third.result.stderr
        assert "the installer walkthrough" in inbound_texts(out, "/docs/guide/install.html")

        fourth = crawl(seed, out)  # unchanged again: kept as the third run ranked them
        assert "inbound links kept as" in fourth.result.stderr
        assert "the installer walkthrough" in inbound_texts(out, "/docs/guide/install.html")

        (site / "docs" / "guide" / "orphan.html").unlink()
        fifth = crawl(seed, out)
        assert changes(fifth)["guide/orphan.html"]["change"] == "removed"
        assert "inbound links on" in fifth.result.stderr
        assert_log_invariants(fifth)


SPHINX_DOC = Path("/usr/share/doc/sphinx-doc/html")


def test_unchanged_sphinx_site_recrawled_removes_nothing(tmp_path: Path) -> None:
    """Sphinx links `genindex.html` (and `_modules/` pages, through `[source]` anchors the
    Markdown drops) in ways a page record's links do not keep (`<link rel="index">` in
    the head): a re-crawl carrying pages over follows the links the pages had when
    parsed, so an unchanged site loses no page."""
    if not SPHINX_DOC.is_dir():
        pytest.skip(f"{SPHINX_DOC} is not installed")
    out = tmp_path / "out"
    with StaticSite(SPHINX_DOC) as server:
        first = crawl(f"{server.url}/", out, timeout=600)
        genindex = first.terminal(f"{server.url}/genindex.html")
        assert genindex["event"] == "extracted"
        second = crawl(f"{server.url}/", out, timeout=600)
    kinds = [line["change"] for line in read_jsonl(out / "changes.jsonl")]
    assert kinds.count("removed") == 0, [
        line["canonical_url"] for line in read_jsonl(out / "changes.jsonl")
        if line["change"] == "removed"][:5]
    assert kinds.count("unchanged") == len(first.pages) == len(second.pages)
    assert second.terminal(f"{server.url}/genindex.html")["event"] == "unchanged"
    assert second.run["removed_reasons"] == {}
    assert_log_invariants(second)


def test_corrupt_state_is_refused_in_one_line(demo_site: StaticSite, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "state.sqlite3").write_bytes(b"this is not a database" * 100)
    result = run_crawl(f"{demo_site.url}/docs/", out)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("docscrawl: error: argument state:")
    assert (out / "state.sqlite3").read_bytes() == b"this is not a database" * 100


def _no_validator_site(changed: str = "") -> dict[str, dict]:
    """Three pages served from routes: no ETag, no Last-Modified (nothing to ask a 304 for)."""
    nav = '<nav><a href="/docs/">Home</a> <a href="/docs/a.html">A</a> ' \
          '<a href="/docs/b.html">B</a></nav>'

    def page(title: str, text: str) -> dict:
        return {"body": f"<html><head><title>{title}</title></head><body>{nav}<main>"
                        f"<h1>{title}</h1><p>{text}</p></main></body></html>"}
    return {"/docs/": page("Home", "Start here with the guide to the widget."),
            "/docs/a.html": page("A", "The A page explains widgets in depth." + changed),
            "/docs/b.html": page("B", "The B page explains gadgets in depth.")}


def test_unchanged_body_is_not_parsed_again(tmp_path: Path) -> None:
    """Without validators a re-crawl fetches every page again; a byte-identical body is
    carried over from its stored `body_hash` without being parsed (`parsed: false`)."""
    out = tmp_path / "out"
    site = tmp_path / "empty"
    site.mkdir()
    with StaticSite(site, routes=_no_validator_site()) as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        fetched = [e for e in first.log if e["event"] == "fetched"]
        assert fetched and len(first.pages) == 3
        assert all(p["body_hash"] and p["body_hash"].startswith("sha256:")
                   for p in first.pages)
        server.routes.update(_no_validator_site(changed=" Now with gizmos."))
        second = crawl(seed, out)
    unchanged = [e for e in second.log if e["event"] == "unchanged"]
    assert sorted(e["url"].rsplit("/", 1)[-1] for e in unchanged) == ["", "b.html"]
    assert {e["reason"] for e in unchanged} == {"same_content"}
    assert [e["parsed"] for e in unchanged] == [False, False]  # the body shortcut
    assert second.terminal("/docs/a.html")["event"] == "extracted"
    assert {p["body_hash"] for p in second.pages} >= {p["body_hash"] for p in first.pages
                                                      if not p["canonical_url"].endswith("a.html")}
    assert_log_invariants(second)


def test_an_unchanged_page_gets_the_sitemap_lastmod_this_crawl_read(tmp_path: Path) -> None:
    """A site rebuilt with new sitemap dates (MkDocs writes the build date into every
    `lastmod`) and its pages the same: each page is carried over, and its record says
    the lastmod this crawl's sitemap gives, whether the sitemap was read before the page
    was carried over or after."""
    site, out = demo_copy(tmp_path)
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        assert first.page("/docs/guide/")["sitemap_lastmod"] == "2026-11-20"
        assert first.page("/docs/guide/orphan.html")["sitemap_lastmod"] == "2026-10-02"
        sitemap = site / "sitemap-guide.xml"
        sitemap.write_text(sitemap.read_text().replace("2026-11-20", "2026-12-05").replace(
            "2026-10-02", "2026-12-04"), encoding="utf-8")
        touch_later(sitemap)
        second = crawl(seed, out)
        assert {c["change"] for c in changes(second).values()} == {"unchanged"}
        for path in ("/docs/", "/docs/guide/"):
            assert second.page(path)["sitemap_lastmod"] == "2026-12-05", path
        # found from the sitemap alone: always read before the page is carried over
        assert second.page("/docs/guide/orphan.html")["sitemap_lastmod"] == "2026-12-04"
        assert (second.page("/docs/guide/install.html")["sitemap_lastmod"]
                == "2026-11-21T08:00:00+00:00")
        assert_log_invariants(second)
