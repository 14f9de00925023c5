"""The chunk vector stored once (schema 13): the vector files are its only copy, an update
rebuilds them from themselves (only new chunks embedded), the coarse matrix is derived at
load, and an older index or vector files that are not the index's make it rebuild. A
chunk's id is kept as an 8-byte key, the line dictionary as a blob."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docscrawl.search import Searcher, SearchIndex
from docscrawl.search import index as index_module
from docscrawl.search.fields import Vocab, index_fields
from docscrawl.search.index import INDEX_NAME
from docscrawl.search.schema import SCHEMA
from docscrawl.search.vectors import load_vectors, quantize
from tests.search.conftest import copy_output, edit_chunks
from tests.search.counting import Counting

pytest.importorskip("wordllama")

QUERIES = ("configure timeout setting", "install the client", "retry a failed request")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path / "cache"))


def _vectors_by_id(index: SearchIndex) -> dict[str, Any]:
    rowids, _, _, full = load_vectors(index)
    lines = index.lines([int(r) for r in rowids])
    return {json.loads(lines[int(r)])["id"]: np.array(full[i]) for i, r in enumerate(rowids)}


def _results(index: SearchIndex) -> list[list[tuple[str, float]]]:
    searcher = Searcher(index)
    return [[(hit.record["id"], round(hit.score, 6)) for hit in searcher.search(q).hits]
            for q in QUERIES]


def test_the_vector_is_stored_once_and_the_coarse_matrix_derived(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="wordllama")
    try:
        columns = [row[1] for row in index.db.execute("PRAGMA table_info(chunks)")]
        assert not {"vec", "chunk_id", "page_url", "section_key"} & set(columns)
        indexes = [row[1] for row in index.db.execute("PRAGMA index_list(chunks)")]
        assert indexes == []  # no index of chunk ids nor of pages
        stored_dict = index.db.execute("SELECT value FROM meta WHERE key='rows_dict'"
                                       ).fetchone()[0]
        zdict = index.codec().zdict  # the site's first FTS rows
        assert isinstance(stored_dict, bytes) and len(stored_dict) * 2 < len(zdict)
        ids = [json.loads(line.text)["id"] for line in index.chunk_lines()]
        assert sorted(p.name for p in out.glob("search.*.npy")) == [
            "search.full.npy", "search.rowids.npy", "search.scales.npy", "search.versions.npy"]
        rowids, versions, coarse, full = load_vectors(index)
        stored_full = np.load(out / "search.full.npy")
        assert stored_full.dtype == np.int8 and stored_full.shape == (index.count(), 256)
        assert len(rowids) == len(versions) == len(full) == index.count()
        dims = index.embedder.coarse_dims if index.embedder else 0
        assert coarse.dtype == np.float32 and coarse.shape == (index.count(), dims)
        assert np.array_equal(coarse, full[:, :dims])
        assert _results(index)[0]
    finally:
        index.close()
    db = sqlite3.connect(out / INDEX_NAME)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    stored = (out / INDEX_NAME).read_bytes()
    assert all(stored_full[i].tobytes() not in stored for i in range(0, len(full), 7))
    assert ids and not any(chunk_id.encode() in stored for chunk_id in ids)  # nor the lines
    assert ids and not any(chunk_id.encode() in stored for chunk_id in ids)


def test_a_page_url_is_stored_once_and_read_back_whole(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    """Schema 14: a chunk row holds its page's `urls` id and its anchor; `chunk_pages`
    gives back the page URL, section key and region ranking reads, and a page whose
    chunks all went away leaves no URL behind."""
    out = copy_output(demo[1], tmp_path / "out")
    records = [json.loads(line) for line in (out / "chunks.jsonl").read_text().splitlines()]
    with closing(SearchIndex.open(out, embedder="none")) as index:
        urls = [url for (url,) in index.db.execute("SELECT url FROM urls")]
        assert sorted(urls) == sorted({r["metadata"]["canonical_url"] for r in records})
        keys = index.db.execute("SELECT page_url, section_key FROM chunk_pages").fetchall()
        assert len(keys) == len(records) and all(
            key.startswith(f"{page}#") and page in urls for page, key in keys)
        assert all(not anchor.startswith("http") for (anchor,) in
                   index.db.execute("SELECT anchor FROM chunks"))
        # the main-content region is stored as NULL and read back by name
        assert index.db.execute("SELECT count(*) FROM chunks WHERE region IS NOT NULL "
                                "AND region='main_content'").fetchone() == (0,)
        regions = {r for (r,) in index.db.execute("SELECT region FROM chunk_pages")}
        assert "main_content" in regions and None not in regions
    gone = records[-1]["metadata"]["canonical_url"]
    kept = [r for r in records if r["metadata"]["canonical_url"] != gone]
    (out / "chunks.jsonl").resolve().write_text(
        "".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    with closing(SearchIndex.open(out, embedder="none")) as index:
        left = {url for (url,) in index.db.execute("SELECT url FROM urls")}
        assert left == {r["metadata"]["canonical_url"] for r in kept} and gone not in left


def test_the_int8_vectors_read_back_as_the_model_gave_them(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    """Schema 14 stores a vector as int8 and a scale per row: read back, each is within
    half a step of the model's float vector, and its cosines to another within 1e-3."""
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="wordllama")
    try:
        rowids, _, _, full = load_vectors(index)
        lines = index.lines([int(r) for r in rowids])
        texts = [index_fields(json.loads(lines[int(r)]), index.affixes,
                              index.vocab.get(json.loads(lines[int(r)])["id"]) or Vocab()).embed
                 for r in rowids]
        assert index.embedder is not None
        exact = np.asarray(index.embedder.embed(texts), dtype=np.float32)
    finally:
        index.close()
    read = full[np.arange(len(full))]
    steps = np.abs(exact).max(axis=1) / 127
    assert np.all(np.abs(read - exact) <= steps[:, None] / 2 + 1e-6)
    assert np.abs(read @ exact[0] - exact @ exact[0]).max() < 1e-3
    rows, scales = quantize(exact)
    assert rows.dtype == np.int8 and np.abs(rows).max() == 127 and scales.dtype == np.float32


def test_an_update_embeds_only_new_chunks_and_ranks_as_a_fresh_build(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="wordllama")
    before = _vectors_by_id(index)
    index.close()
    gone, new = (chunk["id"] for chunk in edit_chunks(out))
    index = SearchIndex.open(out, embedder="wordllama", update=False)
    index.embedder = counting = Counting(index.embedder)
    try:
        built = index.refresh()
        assert (built.added, built.deleted, built.full) == (1, 2, False)
        assert len(counting.texts) == 1 and "zorbleflux" in counting.texts[0]
        after = _vectors_by_id(index)
        assert gone not in after and new in after
        for chunk_id, vector in after.items():  # unchanged chunks: the same vector
            if chunk_id != new:
                assert np.array_equal(vector, before[chunk_id]), chunk_id
        updated = _results(index)
    finally:
        index.close()
    fresh = SearchIndex.open(copy_output(out, tmp_path / "fresh"), embedder="wordllama")
    try:
        assert _results(fresh) == updated
        rebuilt = _vectors_by_id(fresh)
        assert rebuilt.keys() == after.keys()
        assert all(np.array_equal(rebuilt[key], after[key]) for key in after)
    finally:
        fresh.close()


def test_an_older_index_is_rebuilt_once(demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama").close()
    results = _results_of(out)
    # an older index: the vector in `chunks.vec` too and a coarse file (schema 12), the
    # page URL in each chunk row and no `chunk_pages` view (13)
    db = sqlite3.connect(out / INDEX_NAME, isolation_level=None)
    db.execute("UPDATE meta SET value='13' WHERE key='schema'")
    db.execute("ALTER TABLE chunks ADD COLUMN vec BLOB")
    db.execute("ALTER TABLE chunks ADD COLUMN page_url TEXT")
    db.execute("DROP VIEW chunk_pages")
    db.close()
    np.save(out / "search.coarse.npy", np.zeros((3, 64), dtype=np.float32))
    index = SearchIndex.open(out, embedder="wordllama", update=False)
    index.embedder = counting = Counting(index.embedder)
    try:
        built = index.refresh()
        assert built.full and built.added == index.count() == len(counting.texts)
        assert not (out / "search.coarse.npy").exists()
        counting.texts.clear()
        assert not index.refresh().full and counting.texts == []
    finally:
        index.close()
    again = SearchIndex.open(out, embedder="wordllama", update=False)
    try:
        assert again.meta("schema") == str(SCHEMA)
        built = again.refresh()
        assert (built.full, built.added) == (False, 0)
    finally:
        again.close()
    assert _results_of(out) == results


def _results_of(out: Path) -> list[list[tuple[str, float]]]:
    index = SearchIndex.open(out, embedder="wordllama")
    try:
        return _results(index)
    finally:
        index.close()


def test_vector_files_deleted_make_the_index_rebuild(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    results = _results_of(out)
    (out / "search.full.npy").unlink()
    index = SearchIndex.open(out, embedder="wordllama", update=False)
    try:
        built = index.refresh()
        assert built.full and built.added == index.count()
        assert _results(index) == results
    finally:
        index.close()


@pytest.mark.parametrize("damage", ["garbage", "cut", "other_rows"])
def test_damaged_vector_files_make_the_index_rebuild(
        demo: tuple[Path, Path, str], tmp_path: Path, damage: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """A vector file overwritten, cut short, or of another row count: the search that
    meets it rebuilds the index (one warning) instead of failing in numpy."""
    out = copy_output(demo[1], tmp_path / "out")
    results = _results_of(out)
    path = out / ("search.versions.npy" if damage == "other_rows" else "search.full.npy")
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"garbage")
    elif damage == "cut":
        path.write_bytes(data[:len(data) // 2])
    else:
        np.save(path, np.load(path)[:-1])
    with caplog.at_level(logging.WARNING, logger="docscrawl"):
        index = SearchIndex.open(out, embedder="wordllama")
    try:
        assert "rebuilding it" in caplog.text
        assert _results(index) == results
    finally:
        index.close()


def _rebuilt(index: SearchIndex, caplog: pytest.LogCaptureFixture) -> list[list[tuple[str, float]]]:
    """Refresh `index`, which must rebuild every chunk and say why; its results after."""
    with caplog.at_level(logging.WARNING):
        built = index.refresh()
    assert built.full and built.added == index.count()
    assert "vector files are not this index's" in caplog.text
    return _results(index)


def test_vector_files_an_update_did_not_commit_make_the_index_rebuild(
        demo: tuple[Path, Path, str], tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """Files renamed in place by an update whose transaction then rolled back (a crash):
    the same row ids, other vectors. The next update finds them out and rebuilds."""
    out = copy_output(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama").close()
    full = np.load(out / "search.full.npy")
    np.save(out / "search.full.npy", full[::-1].copy())
    edit_chunks(out)
    index = SearchIndex.open(out, embedder="wordllama", update=False)
    try:
        updated = _rebuilt(index, caplog)
    finally:
        index.close()
    assert _results_of(copy_output(out, tmp_path / "fresh")) == updated


def test_an_update_that_dies_after_writing_the_files_is_rebuilt_next_time(
        demo: tuple[Path, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The vector files are renamed in place before the update commits: when it then
    fails, the index rolls back and the files are ahead of it; the next update sees
    that and rebuilds, instead of taking the rolled-back update's vectors as its own."""
    out = copy_output(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama").close()
    edit_chunks(out)
    real = index_module.write_vector_files

    def dies_after(index: SearchIndex) -> None:
        real(index)
        raise OSError("disk full")

    monkeypatch.setattr(index_module, "write_vector_files", dies_after)
    index = SearchIndex.open(out, embedder="wordllama", update=False)
    try:
        with pytest.raises(OSError, match="disk full"):
            index.refresh()
        monkeypatch.setattr(index_module, "write_vector_files", real)
        updated = _rebuilt(index, caplog)
    finally:
        index.close()
    assert _results_of(copy_output(out, tmp_path / "fresh")) == updated
