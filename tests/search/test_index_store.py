"""The index sized to its job (issue 26 item 4): search.sqlite3 keeps no plain copy of a
chunk's text (lines read from chunks.jsonl, FTS rows compressed, FTS tables contentless), a
search still returns every result's whole record, and an update deletes a chunk's words
exactly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.index import INDEX_NAME
from docscrawl.search.tokenize import fts_phrase
from tests.conftest import read_jsonl
from tests.search.conftest import copy_output, edit_chunks


def _index_bytes(out: Path) -> bytes:
    db = sqlite3.connect(out / INDEX_NAME)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return (out / INDEX_NAME).read_bytes()


def test_index_keeps_no_plain_copy_of_the_text_and_returns_whole_records(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="none")
    try:
        chunks = {c["id"]: c for c in read_jsonl(out / "chunks.jsonl")}
        hits = Searcher(index).search("configure timeout setting").hits
        assert hits
        for hit in hits:  # the record as chunks.jsonl has it, every field
            assert hit.record == chunks[hit.record["id"]]
        zdict = index.codec().zdict  # the first chunks' FTS rows, as they are: left out
    finally:
        index.close()
    stored = _index_bytes(out)
    long_texts = [c["text"] for c in chunks.values() if len(c["text"]) > 200]
    assert long_texts
    for text in long_texts:
        assert text[40:160].encode("utf-8") not in stored
    # nor a link list: the inbound links' JSON
    linked = [json.dumps(c["metadata"]["inbound_links"][0], ensure_ascii=False,
                         separators=(",", ":")).encode("utf-8")
              for c in chunks.values() if c["metadata"].get("inbound_links")]
    linked = [raw for raw in linked if raw not in zdict]
    assert linked
    for raw in linked:
        assert raw not in stored


def _doc_counts(index: SearchIndex, words: list[str]) -> dict[str, int]:
    return {w: index.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                (fts_phrase(w),)).fetchone()[0] for w in words}


def test_an_update_deletes_a_chunks_words_as_a_fresh_build_would(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="none")
    index.close()
    chunks = len(read_jsonl(out / "chunks.jsonl"))
    gone, _ = edit_chunks(out)
    words = ["zorbleflux", "quintessential", "timeout", "install", "client",
             *gone["markdown"].split()[:12]]
    index = SearchIndex.open(out, embedder="none", update=False)
    try:
        built = index.refresh()
        assert (built.added, built.deleted) == (1, 2)
        updated = _doc_counts(index, words)
        assert updated["zorbleflux"] == 1
    finally:
        index.close()
    fresh_out = copy_output(out, tmp_path / "fresh")
    fresh = SearchIndex.open(fresh_out, embedder="none")
    try:
        assert _doc_counts(fresh, words) == updated
        assert fresh.count() == chunks - 2 + 1
    finally:
        fresh.close()


def test_an_open_index_reads_the_lines_of_an_index_rebuilt_meanwhile(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    """Another process rebuilds the index in place (its tables made anew: a new
    dictionary, learned from other first lines): an index object opened before reads the
    new rows with the new dictionary, never with the one it read first."""
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="none")
    searcher = Searcher(index)
    try:
        assert searcher.search("configure timeout setting").hits
        path = (out / "chunks.jsonl").resolve()
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(reversed(lines)), encoding="utf-8")
        other = sqlite3.connect(out / INDEX_NAME, isolation_level=None)
        other.execute("UPDATE meta SET value='0' WHERE key='schema'")  # an older schema
        other.close()
        SearchIndex.open(out, embedder="none").close()  # the other process's rebuild
        chunks = {c["id"]: c for c in read_jsonl(out / "chunks.jsonl")}
        hits = searcher.search("configure timeout setting").hits
        assert hits and all(hit.record == chunks[hit.record["id"]] for hit in hits)
    finally:
        index.close()


def test_an_index_rebuilt_in_place_gives_back_the_old_tables_pages(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    """An index of an older schema, with a table this schema no longer has, is rebuilt in
    place: that table is dropped too, and the pages of the dropped tables go back to the
    file system (before, the file kept the old table and the old index's pages free,
    beside the new ones), and the rebuilt index searches as a fresh one."""
    out = copy_output(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="none").close()
    fresh = (out / INDEX_NAME).stat().st_size
    other = sqlite3.connect(out / INDEX_NAME, isolation_level=None)
    other.execute("UPDATE meta SET value='0' WHERE key='schema'")  # an older schema
    other.execute("CREATE TABLE old_lines (id INTEGER PRIMARY KEY, line BLOB)")
    other.executemany("INSERT INTO old_lines (line) VALUES (?)",
                      ((bytes(range(256)) * 16,) for _ in range(100)))  # 400 KB
    other.close()
    index = SearchIndex.open(out, embedder="none")
    try:
        free = index.db.execute("PRAGMA freelist_count").fetchone()[0]
        tables = {row[0] for row in index.db.execute("SELECT name FROM sqlite_master")}
        assert free == 0 and "old_lines" not in tables
        assert (out / INDEX_NAME).stat().st_size <= fresh
        assert Searcher(index).search("configure timeout setting").hits
    finally:
        index.close()
