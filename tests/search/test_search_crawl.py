"""Search over a real crawl of the demo site: inbound links, index, versions, the CLI,
and the incremental update after a re-crawl where only a linking page changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docscrawl.search import Searcher, SearchIndex, VersionError
from tests.conftest import ROOT, crawl, read_jsonl

pytestmark = pytest.mark.e2e


def chunks_of(out: Path, suffix: str) -> list[dict]:
    return [c for c in read_jsonl(out / "chunks.jsonl")
            if c["metadata"]["canonical_url"].endswith(suffix)]


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_inbound_links_name_source_anchor_text_and_region(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    install = chunks_of(out, "/docs/guide/install.html")[0]["metadata"]
    links = install["inbound_links"]
    assert install["inbound_count"] >= len(links) > 0
    assert {"url", "anchor_text", "container_label", "region"} <= set(links[0])
    assert all(not link["url"].endswith("/docs/guide/install.html") for link in links)
    # a link written in prose ranks before the same page's sidebar entries
    regions = [link["region"] for link in links]
    assert regions[0] == "main_content"
    assert "sidebar_navigation" in regions or install["inbound_count"] > len(links)


def test_search_cites_section_and_prefers_default_version(
        demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    searcher = Searcher(SearchIndex.open(out))
    result = searcher.search("configure timeout setting", k=3)
    assert result.version_source == "default" and result.version == "2.0"
    top = result.hits[0].as_json()
    assert top["url"].endswith("/docs/guide/configure.html#configuring-acme")
    assert top["citation"].startswith("Configuring Acme") and "version 2.0" in top["citation"]
    assert set(top) >= {"url", "title", "heading_path", "breadcrumbs", "version",
                        "retrieved_at", "content_hash", "chunk_id", "score", "text"}


def test_no_filter_prefers_the_default_and_its_alias_and_puts_twins_after(
        demo: tuple[Path, Path, str]) -> None:
    """The demo's root serves 2.0; /docs/latest/guide/install.html is the same page as
    /docs/guide/install.html (one page kept, labelled 2.0 whichever copy came first, its
    observed URLs naming `latest`); 3.6 has its own copy."""
    _, out, _ = demo
    install = [p for p in read_jsonl(out / "pages.jsonl")
               if p["canonical_url"].endswith("/docs/guide/install.html")]
    assert [p["version"]["value"] for p in install] == ["2.0"]
    assert "latest" not in install[0]["title"]  # the title of the page at that URL too
    assert {c["metadata"]["title"] for c in chunks_of(out, "/docs/guide/install.html")} == {
        install[0]["title"]}
    assert any("/docs/latest/guide/install.html" in u for u in install[0]["observed_urls"])
    result = Searcher(SearchIndex.open(out)).search("install", k=5)
    assert (result.version, result.version_source, result.aliases) == ("2.0", "default",
                                                                         ["latest"])
    assert "also served as latest" in result.note()
    versions = [h.meta["version"] for h in result.hits]
    assert versions[0] in ("2.0", "latest")
    # the 3.6 install page: after the 2.0/latest results (only those that barely match,
    # like the unversioned filler page, may follow it)
    assert "3.6" in versions
    assert set(versions[:versions.index("3.6")]) <= {"2.0", "latest", None}
    assert "2.0" in versions[:versions.index("3.6")]


def test_version_filter_applies_before_ranking(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    searcher = Searcher(SearchIndex.open(out))
    filtered = searcher.search("install acme on linux", version="3.6", k=5)
    assert filtered.hits and {h.meta["version"] for h in filtered.hits} == {"3.6"}
    named = searcher.search("install acme 3.6 linux", k=5)
    assert named.version_source == "query"
    assert {h.meta["version"] for h in named.hits} == {"3.6"}
    with pytest.raises(VersionError):
        searcher.search("install", version="9.9")


def test_cli_json_fields_and_exit_codes(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    done = docscrawl("search", str(out), "acme.Client timeout", "--json", "-k", "2")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert 1 <= len(lines) <= 2
    assert lines[0]["url"].endswith("/docs/api/client.html#client")
    human = docscrawl("search", str(out), "install acme", "--version", "3.6")
    assert human.returncode == 0 and "1. Installing Acme" in human.stdout
    assert "/docs/3.6/guide/install.html#installing-acme" in human.stdout
    nothing = docscrawl("search", str(out), "zzzqqqxxy", "--json")
    assert nothing.returncode == 0
    bad_version = docscrawl("search", str(out), "install", "--version", "7.7")
    assert bad_version.returncode == 2 and len(bad_version.stderr.strip().splitlines()) == 1
    bad_out = docscrawl("search", str(out / "nope"), "install")
    assert bad_out.returncode == 2 and "not a crawl output directory" in bad_out.stderr


def test_recrawl_updates_index_and_inbound_links_of_unchanged_target(
        demo: tuple[Path, Path, str]) -> None:
    site, out, seed = demo
    index = SearchIndex.open(out)
    assert "frobnicator" not in (site / "docs" / "guide" / "index.html").read_text()
    before = index.count()
    assert index.refresh().added == 0  # nothing changed since the last search
    index.close()
    # Only the linking page changes: the install page gains an inbound link whose anchor
    # text appears nowhere else; its own chunks and ids stay the same.
    guide = site / "docs" / "guide" / "index.html"
    guide.write_text(guide.read_text(encoding="utf-8").replace(
        "</ul>\n</section>", '</ul>\n<p>See the <a href="install.html#linux">frobnicator '
        'setup walkthrough</a>.</p>\n</section>', 1), encoding="utf-8")
    later = time.time() + 10
    os.utime(guide, (later, later))
    install_ids = {c["id"] for c in chunks_of(out, "/docs/guide/install.html")}
    crawl(seed, out)  # the module's server serves the edited file
    changes = {c["canonical_url"]: c["change"] for c in read_jsonl(out / "changes.jsonl")}
    assert changes[seed + "guide/"] == "changed"
    assert changes[seed + "guide/install.html"] == "unchanged"
    assert {c["id"] for c in chunks_of(out, "/docs/guide/install.html")} == install_ids
    linux = [c for c in chunks_of(out, "/docs/guide/install.html")
             if any("frobnicator" in link["anchor_text"]
                    for link in c["metadata"]["inbound_links"])]
    assert linux, "the new section link reached the install page's chunks"
    index = SearchIndex.open(out, update=False)
    built = index.refresh()
    assert built.relinked >= 1 and built.added <= 3 and built.deleted <= 3
    assert index.count() == before - built.deleted + built.added
    hits = Searcher(index).search("frobnicator walkthrough", k=3).hits
    # found by the anchor text other pages give it (the guide page holds the words too)
    assert seed + "guide/install.html" in [h.meta["canonical_url"] for h in hits]
