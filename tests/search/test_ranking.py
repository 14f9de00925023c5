"""Ranking rules on a small hand-made output directory (the files a crawl writes):
identifiers match whole, print views stay below the pages they copy, sections are cited,
versions filter before ranking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docscrawl.search import Searcher, SearchIndex

SITE = "http://docs.test/"


def page(path: str, title: str, version: str | None, **extra: Any) -> dict[str, Any]:
    return {"id": path, "canonical_url": SITE + path, "observed_urls": [SITE + path],
            "title": title, "version": {"value": version}, "markdown": f"# {title}",
            "headings": [], "links": [], "retrieved_at": "2026-01-02T03:04:05Z",
            "content_hash": "sha256:" + path, **extra}


def chunk(path: str, title: str, markdown: str, version: str | None = "2.0", *,
          heading_path: list[str] | None = None, **meta: Any) -> dict[str, Any]:
    heading_path = heading_path or [title]
    return {"id": f"sha256:{path}:{heading_path[-1]}", "page_id": path,
            "text": " > ".join(heading_path) + "\n" + markdown, "markdown": markdown,
            "metadata": {"source_url": SITE + path, "canonical_url": SITE + path,
                         "title": title, "version": version, "heading_path": heading_path,
                         "breadcrumbs": ["Docs"], "region": "main_content",
                         "retrieved_at": "2026-01-02T03:04:05Z",
                         "content_hash": "sha256:" + path, "has_code": False, **meta}}


def write_output(out: Path, pages: list[dict[str, Any]], chunks: list[dict[str, Any]]) -> None:
    """A crawl output directory holding just what the index reads."""
    (out / "pages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pages))
    (out / "chunks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chunks))
    (out / "run.json").write_text(json.dumps({"site": SITE}))


@pytest.fixture
def out(tmp_path: Path) -> Path:
    pages = [page("json.html", "Serializing", "2.0"), page("words.html", "Words", "2.0"),
             page("print.html", "Print view", "2.0", aggregate_of=[SITE + "json.html"]),
             page("old.html", "Serializing", "1.0"), page("", "Home", "2.0")]
    chunks = [
        chunk("json.html", "Serializing", "Call `json.dumps(obj)` to write JSON text.",
              heading_path=["Serializing", "Writing"], anchor="writing",
              sections=[{"heading_path": ["Serializing", "Writing"], "anchor": "writing"},
                        {"heading_path": ["Serializing", "Options"], "anchor": "options"}]),
        chunk("words.html", "Words", "Some json here. The dumps of a truck are elsewhere. "
              "json json dumps dumps."),
        chunk("print.html", "Print view", "Call `json.dumps(obj)` to write JSON text. "
              "json.dumps json.dumps"),
        chunk("old.html", "Serializing", "Call `json.dumps(obj)` in the old release.",
              version="1.0"),
    ]
    write_output(tmp_path, pages, chunks)
    return tmp_path


def test_identifier_whole_beats_its_parts_and_print_view_stays_below(out: Path) -> None:
    result = Searcher(SearchIndex.open(out, embedder="none")).search("json.dumps", k=5)
    urls = [hit.url() for hit in result.hits]
    assert urls[0] == SITE + "json.html#writing"  # the section's anchor is cited
    assert urls.index(SITE + "print.html") > 0
    assert SITE + "old.html" in urls  # another version: kept, but after the default's
    assert urls.index(SITE + "old.html") > urls.index(SITE + "json.html#writing")
    assert result.version_source == "default" and result.version == "2.0"
    cited = result.hits[0].as_json()
    assert cited["sections"][1]["anchor"] == "options"
    assert cited["citation"] == ("Serializing › Writing, version 2.0, "
                                 "http://docs.test/json.html#writing, retrieved 2026-01-02")


def test_version_filter_never_returns_another_version(out: Path) -> None:
    searcher = Searcher(SearchIndex.open(out, embedder="none"))
    hits = searcher.search("json.dumps", version="1.0", k=5).hits
    assert [h.meta["version"] for h in hits] == ["1.0"]
    assert searcher.search("in 1.0 how do I call json.dumps", k=5).version_source == "query"


def test_index_follows_removed_and_added_chunks(out: Path) -> None:
    index = SearchIndex.open(out, embedder="none")
    assert index.count() == 4
    lines = (out / "chunks.jsonl").read_text().splitlines()
    extra = chunk("words.html", "Words", "A brand new zyxwv paragraph.", heading_path=["New"])
    (out / "chunks.jsonl").write_text("\n".join([*lines[1:], json.dumps(extra)]) + "\n")
    built = index.refresh()
    assert (built.added, built.deleted, built.total) == (1, 1, 4)
    assert Searcher(index).search("zyxwv", k=1).hits[0].meta["heading_path"] == ["New"]
    assert index.refresh().added == 0  # unchanged files: nothing to do


@pytest.mark.parametrize(("query", "known", "expected"), [
    ("use async views in Flask 2.2", ["2.2.x", "2.1.x"], "2.2.x"),
    ("cmake --build in 3.25", ["v3.25", "v3.24"], "v3.25"),
    ("scrapy 2.8 log format", ["2.8", "2.7"], "2.8"),
    ("the 2.80 release", ["2.8"], None),
    ("fixed in 2.8.1", ["2.8"], None),
    ("the latest docs", ["latest", "2.8"], None),
])
def test_version_named_in_query(query: str, known: list[str], expected: str | None) -> None:
    from docscrawl.search.versions import version_named

    assert version_named(query, known) == expected


@pytest.mark.parametrize(("query", "version", "expected"), [
    ("report a vulnerability in requests 2.28", "2.28", "report a vulnerability in requests"),
    ("cmake --build in v3.25 please", "v3.25", "cmake --build in please"),
    ("Flask 2.2 async views", "2.2.x", "Flask async views"),
    ("fixed in 2.28.1", "2.28", "fixed in 2.28.1"),  # another version: kept
])
def test_without_version(query: str, version: str, expected: str) -> None:
    from docscrawl.search.versions import without_version

    assert without_version(query, version) == expected


def test_a_version_named_in_the_query_filters_and_is_not_searched_for(tmp_path: Path) -> None:
    pages = [page("faq.html", "FAQ", "2.28"), page("security.html", "Security", "2.28"),
             page("old.html", "Security", "2.27")]
    topics = ["sessions", "cookies", "timeouts", "proxies", "streaming", "adapters"]
    pages += [page(f"{t}.html", t.title(), "2.28") for t in topics]
    chunks = [chunk(f"{t}.html", t.title(), f"How requests handles {t}.", version="2.28")
              for t in topics] + [
        chunk("faq.html", "FAQ", "Requests 2.28 still runs on Python 2.7; 2.28 is the "
              "last release for Python 2.", version="2.28"),
        chunk("security.html", "Security", "Report a vulnerability to the maintainers "
              "by mail; the process is below.", version="2.28"),
        chunk("old.html", "Security", "Report a vulnerability to the maintainers.",
              version="2.27"),
    ]
    write_output(tmp_path, pages, chunks)  # filler pages: bm25 needs word rarities
    result = Searcher(SearchIndex.open(tmp_path, embedder="none")).search(
        "report a vulnerability in requests 2.28", k=5)
    assert result.version_source == "query"
    urls = [hit.url() for hit in result.hits]
    assert urls[0] == SITE + "security.html" and SITE + "old.html" not in urls


@pytest.mark.parametrize(("query_term", "heading_term", "matches"), [
    ("remot", "remoteli", True),        # "remote" / "Remotely": the stemmer keeps -ly
    ("debug", "debugger", True),
    ("class", "classification", False),  # a longer word of its own
    ("test", "testabl", False),          # too short to match by prefix
    ("json.dumps", "json.dumpsx", False),  # identifiers match whole only
])
def test_heading_match_takes_near_forms(query_term: str, heading_term: str,
                                        matches: bool) -> None:
    from docscrawl.search.structure import heading_match

    assert heading_match({query_term: 2.0, "other": 1.0}, {heading_term}) == (
        2.0 if matches else 0.0)


def _support_output(out: Path, filler_chunks: int) -> None:
    """A guide page where two sections each hold part of the question, and a one-section
    page holding a little more of it in one place; `filler_chunks` more sections on the
    guide page make it a long page (a changelog, a configuration reference)."""
    filler = " ".join(f"word{i}" for i in range(40))
    pages = [page("guide.html", "Guide", "2.0"), page("misc.html", "Misc", "2.0")]
    chunks = [
        chunk("guide.html", "Guide", f"Rotate the logs. {filler}",
              heading_path=["Guide", "Part one"], anchor="one"),
        chunk("guide.html", "Guide", f"Archive the logs. {filler}",
              heading_path=["Guide", "Part two"], anchor="two"),
        *[chunk("guide.html", "Guide", f"Unrelated text {i}. {filler}",
                heading_path=["Guide", f"Other {i}"], anchor=f"other-{i}")
          for i in range(filler_chunks)],
        chunk("misc.html", "Misc", f"Rotate and archive logs. {filler} {filler}",
              heading_path=["Misc", "Notes"], anchor="notes"),
    ]
    write_output(out, pages, chunks)


@pytest.mark.parametrize(("filler_chunks", "first"), [(0, "guide.html"), (60, "misc.html")])
def test_a_page_two_sections_of_which_match_comes_first_unless_it_is_long(
        tmp_path: Path, filler_chunks: int, first: str) -> None:
    """Page support (`structure.page_support`): the short guide, where two sections
    match, outranks the page matching a little better in one section; a long page's second
    match is likely chance, and its support is scaled down."""
    _support_output(tmp_path, filler_chunks)
    result = Searcher(SearchIndex.open(tmp_path, embedder="none")).search(
        "rotate archive logs", k=3)
    assert result.hits[0].url().split("#")[0] == SITE + first
