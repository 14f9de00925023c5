"""The end-of-crawl inbound links (`export.linkgraph`): what a chunk gets, and that the
graph lives in a scratch database, not in memory, and leaves no file behind."""

from __future__ import annotations

import contextlib
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from docscrawl.export import linkgraph
from docscrawl.export.inbound import add_inbound_links
from docscrawl.export.linkgraph import LinkGraph
from docscrawl.jsonl import dumps_line, read_jsonl

SITE = "http://d"


def _link(url: str, text: str, region: str, container: str = "paragraph") -> dict[str, Any]:
    return {"url": url, "text": text, "region": region, "container": container,
            "container_label": None, "target": "internal", "position": 0}


def _write_site(out: Path, pages: int) -> None:
    """`pages` pages, each linking to the next page and its second section from prose and
    to ten pages from a sidebar (the same number of links per page at any size); each
    page has two chunks."""
    page_lines, chunk_lines = [], []
    for n in range(pages):
        url = f"{SITE}/p{n}"
        nxt = f"{SITE}/p{(n + 1) % pages}"
        links = [_link(nxt, f"Next page {n}", "main_content"),
                 _link(nxt + "#detail", "the details", "main_content"),
                 *(_link(f"{SITE}/p{k}", f"Page {k}", "sidebar_navigation", "navigation")
                   for k in range(0, pages, max(1, pages // 10)))]
        headings = [{"anchor": "intro", "path": [f"P{n}"]},
                    {"anchor": "usage", "path": [f"P{n}", "Usage"]},
                    {"anchor": "detail", "path": [f"P{n}", "Usage", "Detail"]}]
        page_lines.append(dumps_line({"canonical_url": url, "observed_urls": [url + "/"],
                                      "headings": headings, "links": links}))
        for index, path in enumerate(([f"P{n}"], [f"P{n}", "Usage"])):
            chunk_lines.append(dumps_line({"id": f"c{n}-{index}", "metadata": {
                "canonical_url": url, "heading_path": path,
                "anchor": "intro" if index == 0 else "usage"}}))
    (out / "pages.jsonl").write_text("".join(page_lines), encoding="utf-8")
    (out / "chunks.jsonl").write_text("".join(chunk_lines), encoding="utf-8")


def test_chunks_get_their_sections_links_first_and_every_count(tmp_path: Path) -> None:
    _write_site(tmp_path, 30)
    assert add_inbound_links(tmp_path, cap=3) == 60
    chunks = {c["id"]: c["metadata"] for c in read_jsonl(tmp_path / "chunks.jsonl")}
    usage = chunks["c5-1"]  # holds #detail (a subsection merged into it)
    assert [link["anchor_text"] for link in usage["inbound_links"]] == [
        "the details", "Next page 4"]
    assert usage["inbound_links"][0] == {"url": f"{SITE}/p4", "anchor_text": "the details",
                                         "container_label": None, "region": "main_content"}
    assert usage["inbound_count"] == 2
    intro = chunks["c9-0"]  # page 9 is in every sidebar: prose first, capped at 3
    assert intro["inbound_links"][0]["anchor_text"] == "Next page 8"
    assert len(intro["inbound_links"]) == 3
    assert intro["inbound_count"] == 1 + 29  # from page 8's prose and every other sidebar


def _python_peak(out: Path) -> int:
    tracemalloc.start()
    try:
        add_inbound_links(out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_graph_holds_nothing_per_page_in_memory(tmp_path: Path) -> None:
    peaks = {}
    for pages in (200, 3200):
        out = tmp_path / str(pages)
        out.mkdir()
        _write_site(out, pages)
        peaks[pages] = _python_peak(out)
    # sixteen times the pages and 38,000 more links, about the same Python memory: the
    # graph held in dicts took several megabytes more. The margin is Python's free lists
    # (up to 2,000 freed tuples of each size stay allocated for reuse, and how full they
    # are depends on the order of the work, not on the site's size).
    assert peaks[3200] < peaks[200] + 512 * 1024, peaks


def _open_files() -> dict[str, str]:
    fds = Path("/proc/self/fd")
    found = {}
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed
            found[fd.name] = os.readlink(fd)
    return found


def test_the_scratch_database_leaves_no_file(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # a page cache of 16 KB: the database goes to its file at once (below its cache
    # size, SQLite keeps a temporary database in memory)
    monkeypatch.setattr(linkgraph, "CACHE_KB", 16)
    _write_site(tmp_path, 200)
    before = _open_files()
    with LinkGraph() as graph:
        graph.add_run(tmp_path)
        graph.rank()
        assert sum(1 for _ in graph.targets()) > 200
        scratch = [name for fd, name in _open_files().items()
                   if fd not in before and name.startswith("/")]
        # SQLite unlinks its private temporary files as it opens them: a kill -9 leaves
        # none behind
        assert scratch and all(name.endswith("(deleted)") for name in scratch), scratch


def test_chunk_lines_are_spliced_as_encoding_them_whole_would_write_them(
        tmp_path: Path) -> None:
    _write_site(tmp_path, 30)
    chunks = tmp_path / "chunks.jsonl"
    with chunks.open("a", encoding="utf-8") as handle:
        handle.write('{"id":"torn","metadata":{"canonical_url":"http://d/p1"')  # a kill
    add_inbound_links(tmp_path)
    first = chunks.read_text(encoding="utf-8")
    lines = first.splitlines(keepends=True)
    assert len(lines) == 60 and all(line == dumps_line(json.loads(line)) for line in lines)
    assert all('"inbound_count":' in line for line in lines)
    add_inbound_links(tmp_path)  # lines that hold inbound links already (a carry-over)
    assert chunks.read_text(encoding="utf-8") == first


def test_chunk_lines_read_as_bytes_keep_non_ascii_text_and_any_id(tmp_path: Path) -> None:
    """The rewrite decodes only a line's metadata and id: text around them in any script,
    inbound anchor texts that are not ASCII, an id longer than the bytes read for it, or
    with a character cut at their edge, give the lines encoding them whole gives."""
    _write_site(tmp_path, 12)
    pages = tmp_path / "pages.jsonl"
    pages.write_text(pages.read_text(encoding="utf-8").replace("Next page", "Página siguiente"),
                     encoding="utf-8")
    chunks = tmp_path / "chunks.jsonl"
    records = [json.loads(line) for line in chunks.read_text(encoding="utf-8").splitlines()]
    for n, record in enumerate(records):
        record["text"] = record["markdown"] = f"日本語の説明 {n} ✓ \"quoted\" ]}}"
    records[0]["id"] = "x" * 400  # past the bytes read for an id
    records[1]["id"] = "a" * 247 + "é" * 10  # a two-byte character across their edge
    chunks.write_text("".join(dumps_line(r) for r in records), encoding="utf-8")
    add_inbound_links(tmp_path)
    lines = chunks.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 24 and all(line == dumps_line(json.loads(line)) for line in lines)
    got = [json.loads(line) for line in lines]
    assert [r["id"] for r in got] == [r["id"] for r in records]
    assert [r["text"] for r in got] == [r["text"] for r in records]
    texts = {link["anchor_text"] for r in got for link in r["metadata"]["inbound_links"]}
    assert any(text.startswith("Página siguiente") for text in texts)


def test_a_metadata_update_in_the_same_pass_writes_what_two_passes_wrote(
        tmp_path: Path) -> None:
    """The version backfill's chunk update (`crawl.updaters.chunk_version_update`) rides on
    the inbound pass's rewrite: the lines are those of `rewrite_jsonl` with the update,
    then the inbound pass, for fresh lines, lines holding inbound links already, lines
    without a `version` and lines that are not as the crawl writes them."""
    from docscrawl.crawl.updaters import chunk_version_update, chunk_version_updater
    from docscrawl.jsonl import rewrite_jsonl

    for carried in (False, True):
        one, two = tmp_path / f"one{carried}", tmp_path / f"two{carried}"
        for out in (one, two):
            out.mkdir()
            _write_site(out, 30)
            if carried:
                add_inbound_links(out)
            chunks = out / "chunks.jsonl"
            lines = chunks.read_text(encoding="utf-8").splitlines(keepends=True)
            lines = [line.replace('"metadata":{', '"metadata":{"version":null,', 1)
                     if n % 3 else line for n, line in enumerate(lines)]
            lines.append('{ "id": "odd", "metadata": {"canonical_url": "http://d/p2"}}\n')
            chunks.write_text("".join(lines), encoding="utf-8")
        updated = {f"{SITE}/p{n}": {"value": f"{n}.0"} for n in (1, 2, 7)}
        rewrite_jsonl(two / "chunks.jsonl", chunk_version_updater(updated),
                      fields=("metadata",))
        add_inbound_links(two)
        add_inbound_links(one, update=chunk_version_update(updated))
        expected = (two / "chunks.jsonl").read_text(encoding="utf-8")
        assert '"version":"2.0"' in expected and '"version":null' in expected
        assert (one / "chunks.jsonl").read_text(encoding="utf-8") == expected


def test_one_pass_by_page_writes_what_the_owners_pass_then_the_rewrite_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """chunks.jsonl as the crawl writes it (a page's chunks one after another) is
    rewritten in one pass; a page whose chunks are split (or any line not as the crawl
    writes it) takes the two passes. The same lines either way ("detail" is linked and
    held by each page's second chunk, which does not name it)."""
    owner_passes = []
    real = LinkGraph.fragment_owners
    monkeypatch.setattr(LinkGraph, "fragment_owners",
                        lambda graph, chunks: (owner_passes.append(chunks),
                                               real(graph, chunks))[1])
    results = []
    for split in (False, True):
        out = tmp_path / f"split{split}"
        out.mkdir()
        _write_site(out, 40)
        chunks = out / "chunks.jsonl"
        if split:  # page 3's first chunk moved after page 4's chunks
            lines = chunks.read_text(encoding="utf-8").splitlines(keepends=True)
            lines.insert(9, lines.pop(6))
            chunks.write_text("".join(lines), encoding="utf-8")
        linked = add_inbound_links(out)
        assert len(owner_passes) == int(split)
        results.append((linked, sorted(chunks.read_text(encoding="utf-8").splitlines())))
    assert results[0] == results[1]
    details = [json.loads(line)["metadata"]["inbound_links"] for line in results[0][1]
               if '"id":"c5-1"' in line]
    assert (details[0][0]["url"], details[0][0]["anchor_text"]) == (f"{SITE}/p4", "the details")


def _fed_graph(out: Path, order: list[int] | None = None) -> LinkGraph:
    """A graph given the links of pages.jsonl's pages as a crawl gives them while it writes
    them (`LinkGraph.feed`), in `order` (line numbers; default: the file's)."""
    records = list(read_jsonl(out / "pages.jsonl"))
    graph = LinkGraph()
    for n in order if order is not None else range(len(records)):
        graph.feed(records[n]["canonical_url"], records[n]["links"], [], [])
    return graph


@pytest.mark.parametrize(("order", "kept"), [
    (None, 30),  # the pages the file holds, in its order: their links are not read again
    (list(range(29, -1, -1)), 0),  # another order: every line's links read from the file
    (list(range(29)), 0),  # a page the crawl did not write (carried over): read
    ([*range(30), 3], 0),  # a page fed twice: read
])
def test_fed_links_give_the_chunks_reading_pages_jsonl_gives(
        tmp_path: Path, order: list[int] | None, kept: int) -> None:
    read, fed = tmp_path / "read", tmp_path / "fed"
    for out in (read, fed):
        out.mkdir()
        _write_site(out, 30)
    add_inbound_links(read, cap=3)
    graph = _fed_graph(fed, order)
    add_inbound_links(fed, cap=3, graph=graph)
    assert graph.fed == kept
    assert (fed / "chunks.jsonl").read_bytes() == (read / "chunks.jsonl").read_bytes()
    assert b'"inbound_count":30' in (fed / "chunks.jsonl").read_bytes()
