"""`carry.index_output` points each state row at its page's lines in a published run:
offsets, lengths and the CRC over the page's lines in file order; a page whose structure
or chunk lines are not one run per file is not pointed at. Its working table is on disk,
so the Python memory it holds does not grow with the pages."""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import tracemalloc
import zlib
from pathlib import Path

import pytest

from docscrawl.incremental.carry import CHUNKS, PAGES, STRUCTURE, index_output
from docscrawl.incremental.recrawl import Incremental
from docscrawl.incremental.rows import LinePointer
from docscrawl.incremental.schema import PAGE_SIZE
from docscrawl.incremental.state import DB_NAME, StateStore
from docscrawl.jsonl import dumps_line
from docscrawl.runs import pinned
from docscrawl.seekjsonl import compress_jsonl


def _url(page: int) -> str:
    return f"https://docs.example.test/section/p{page:06d}/"


def _write_run(run_dir: Path, pages: int, *, split: int | None = None,
               twice: int | None = None) -> None:
    """A published run of `pages` pages, three chunks each, written in page order as the
    crawl writes them; page `split` has its last chunk after the next page's chunks, page
    `twice` two structure lines."""
    run_dir.mkdir(parents=True)
    with (run_dir / PAGES).open("w") as out:
        for page in range(pages):
            out.write(dumps_line({"id": f"page{page}", "canonical_url": _url(page),
                                  "title": f"Page {page}", "markdown": "text " * 40}))
    with (run_dir / STRUCTURE).open("w") as out:
        for page in range(pages):
            for _ in range(2 if page == twice else 1):
                out.write(dumps_line({"page_id": f"page{page}", "headings": [page]}))
    held_back = []
    with (run_dir / CHUNKS).open("w") as out:
        for page in range(pages):
            for chunk in range(3):
                line = dumps_line({"id": f"c{page}-{chunk}", "page_id": f"page{page}",
                                   "text": "words " * 30})
                if page == split and chunk == 2:
                    held_back.append(line)
                else:
                    out.write(line)
            if page == (split or -2) + 1:
                out.writelines(held_back)


def _store(state: Path, pages: int) -> StateStore:
    store = StateStore.open(state)
    run = store.begin_run()
    for page in range(pages):
        store.upsert_page(_url(page), run_id=run.run_id, etag=None, last_modified=None,
                          content_hash=f"sha256:{page}",
                          chunk_ids=[f"c{page}-{k}" for k in range(3)])
    return store


def _expected(run_dir: Path, page: int) -> LinePointer:
    """The pointer worked out from the files directly."""
    def located(name: str, key: str) -> tuple[int, bytes]:
        at, found, start = 0, b"", None
        for line in (run_dir / name).read_bytes().splitlines(keepends=True):
            if f'"{key}":"page{page}"'.encode() in line:
                start = at if start is None else start
                found += line
            at += len(line)
        assert start is not None
        return start, found
    page_at, page_line = located(PAGES, "id")
    structure_at, structure = located(STRUCTURE, "page_id")
    chunks_at, chunks = located(CHUNKS, "page_id")
    return LinePointer(1, page_at, len(page_line), structure_at, len(structure), chunks_at,
                       len(chunks), zlib.crc32(chunks, zlib.crc32(structure,
                                                                  zlib.crc32(page_line))))


def test_each_page_points_at_its_lines_and_broken_runs_are_not_carried(
        tmp_path: Path) -> None:
    run_dir = tmp_path / "out" / ".runs" / "run-a"
    _write_run(run_dir, 6, split=2, twice=4)
    store = _store(tmp_path / "state", 6)
    try:
        assert index_output(store, run_dir) == 4
        for page in (0, 1, 3, 5):
            row = store.get(_url(page))
            assert row is not None and row.lines is not None
            assert dataclasses.replace(row.lines, source=1) == _expected(run_dir, page), page
        for page in (2, 4):  # chunks split by page 3's; two structure lines
            row = store.get(_url(page))
            assert row is not None and row.lines is None, page
    finally:
        store.close()


def _held_during(tmp_path: Path, pages: int) -> int:
    """Peak Python memory while `index_output` indexes a run of `pages` pages."""
    run_dir = tmp_path / f"out{pages}" / ".runs" / "run-a"
    _write_run(run_dir, pages)
    store = _store(tmp_path / f"state{pages}", pages)
    try:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        assert index_output(store, run_dir) == pages
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    finally:
        store.close()
    return peak


def test_indexing_memory_does_not_grow_with_the_pages(tmp_path: Path) -> None:
    grown = _held_during(tmp_path, 4000) - _held_during(tmp_path, 400)
    # a dict of the pages' lines held about 700 bytes a page: 2.5 MB here
    assert grown < 200_000, grown


def _one_long_page(tmp_path: Path) -> tuple[Incremental, Path, str, list[str]]:
    """A first crawl of a one-page site of 269 chunks (go-spec), published in `run`."""
    run_dir, url = tmp_path / "run", "https://docs.example.test/spec"
    ids = [f"sha256:{k:064x}" for k in range(269)]
    run_dir.mkdir()
    (run_dir / PAGES).write_text(dumps_line({"id": "p", "canonical_url": url}))
    (run_dir / STRUCTURE).write_text(dumps_line({"page_id": "p"}))
    (run_dir / CHUNKS).write_text("".join(dumps_line({"id": i, "page_id": "p"}) for i in ids))
    incremental = Incremental(tmp_path / "state", tmp_path / "changes.jsonl")
    incremental.store.upsert_page(url, run_id=incremental.run.run_id, etag=None,
                                  last_modified=None, content_hash="sha256:1", chunk_ids=ids)
    incremental.finish(complete=True)
    return incremental, run_dir, url, ids


def test_a_first_crawl_leaves_a_small_state_without_free_pages(tmp_path: Path) -> None:
    """The index rewrites the row of the page's chunk ids, which freed a third of the
    file; the state is then compacted, in 1 KB pages."""
    incremental, run_dir, url, ids = _one_long_page(tmp_path)
    assert incremental.index_published(run_dir) == 1
    db = sqlite3.connect(tmp_path / "state" / DB_NAME)
    try:
        page_size, free, pages = (db.execute(f"PRAGMA {name}").fetchone()[0]
                                  for name in ("page_size", "freelist_count", "page_count"))
    finally:
        db.close()
    assert (page_size, free) == (PAGE_SIZE, 0) == (1024, 0)
    assert pages * page_size < 40_000  # 80 KB with 4 KB pages and a third of them free
    with StateStore.open(tmp_path / "state") as store:
        row = store.get(url)
        assert row is not None and row.chunk_ids == ids and row.lines is not None


def test_a_state_that_cannot_be_compacted_is_left_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compaction gives bytes back, nothing more: a busy file stays as it was, indexed."""
    def busy(store: StateStore) -> None:
        raise sqlite3.OperationalError("database is locked")
    monkeypatch.setattr(StateStore, "compact", busy)
    incremental, run_dir, url, ids = _one_long_page(tmp_path)
    assert incremental.index_published(run_dir) == 1
    with StateStore.open(tmp_path / "state") as store:
        row = store.get(url)
        assert row is not None and row.chunk_ids == ids and row.lines is not None
        assert store.free_share() > 0.1


def _pointers(store: StateStore, pages: int) -> list[LinePointer | None]:
    rows = [store.get(_url(page)) for page in range(pages)]
    return [dataclasses.replace(row.lines, source=1) if row and row.lines else None
            for row in rows]


def test_a_compressed_run_points_as_the_plain_one_and_a_damaged_one_names_its_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    plain = tmp_path / "plain" / ".runs" / "run-a"
    _write_run(plain, 40, split=2)
    store = _store(tmp_path / "state-plain", 40)
    try:
        assert index_output(store, plain) == 39
        expected = _pointers(store, 40)
    finally:
        store.close()
    for damaged in (False, True):
        run_dir = tmp_path / f"gz{damaged}" / ".runs" / "run-a"
        _write_run(run_dir, 40, split=2)
        for name in (PAGES, STRUCTURE, CHUNKS):
            compress_jsonl(run_dir / name)
        if damaged:  # cut short: the pages before the cut are readable, the rest not
            packed = run_dir / (CHUNKS + ".gz")
            packed.write_bytes(packed.read_bytes()[:-40])
        store = _store(tmp_path / f"state{damaged}", 40)
        caplog.clear()
        try:
            with caplog.at_level(logging.WARNING, logger="docscrawl"):
                pointed = index_output(store, run_dir)
            if not damaged:
                assert pointed == 39 and _pointers(store, 40) == expected
                assert not caplog.records
                continue
            assert pointed == 0 and _pointers(store, 40) == [None] * 40
            assert not pinned(run_dir.parent.parent)
            [record] = caplog.records
            assert str(run_dir / (CHUNKS + ".gz")) in record.getMessage()
        finally:
            store.close()
