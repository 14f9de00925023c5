"""The chunk vector stored once (schema 13): the vector files are its only copy, an update
rebuilds them from themselves (only new chunks embedded), the coarse matrix is derived at
load, and an older index or vector files that are not the index's make it rebuild. A
chunk's id is kept as an 8-byte key, the line dictionary as a blob."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docscrawl.search import Searcher, SearchIndex
from docscrawl.search import index as index_module
from docscrawl.search.index import INDEX_NAME
from docscrawl.search.schema import SCHEMA
from docscrawl.search.vectors import load_vectors
from tests.search.counting import Counting

pytest.importorskip("wordllama")

QUERIES = ("configure timeout setting", "install the client", "retry a failed request")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path / "cache"))


def _copy(out: Path, to: Path) -> Path:
    shutil.copytree(out, to, symlinks=True)
    for path in to.glob("search.*"):
        path.unlink()
    return to


def _vectors_by_id(index: SearchIndex) -> dict[str, Any]:
    rowids, _, _, full = load_vectors(index)
    lines = index.lines([int(r) for r in rowids])
    return {json.loads(lines[int(r)])["id"]: np.array(full[i]) for i, r in enumerate(rowids)}


def _results(index: SearchIndex) -> list[list[tuple[str, float]]]:
    searcher = Searcher(index)
    return [[(hit.record["id"], round(hit.score, 6)) for hit in searcher.search(q).hits]
            for q in QUERIES]


def _edit_chunks(out: Path) -> tuple[str, str]:
    """One chunk gone, one changed (a new id): (the gone id, the new id)."""
    path = (out / "chunks.jsonl").resolve()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    gone = json.loads(lines[1])["id"]
    changed = json.loads(lines[2])
    changed["id"] += "-changed"
    changed["text"] += " zorbleflux quintessential"
    changed["markdown"] += " zorbleflux quintessential"
    path.write_text("".join([lines[0], json.dumps(changed) + "\n", *lines[3:]]),
                    encoding="utf-8")
    return gone, changed["id"]


def test_the_vector_is_stored_once_and_the_coarse_matrix_derived(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = _copy(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="wordllama")
    try:
        columns = [row[1] for row in index.db.execute("PRAGMA table_info(chunks)")]
        assert "vec" not in columns and "chunk_id" not in columns
        indexes = [row[1] for row in index.db.execute("PRAGMA index_list(chunks)")]
        assert indexes == ["chunks_page"]  # no index of chunk ids
        assert index.db.execute("SELECT typeof(value) FROM meta "
                                "WHERE key='line_dict'").fetchone() == ("blob",)
        zdict = index.codec().zdict  # the site's first lines, ids and all
        ids = [json.loads(line)["id"] for line in index.chunk_lines()]
        ids = [chunk_id for chunk_id in ids if chunk_id.encode() not in zdict]
        assert sorted(p.name for p in out.glob("search.*.npy")) == [
            "search.full.npy", "search.rowids.npy", "search.versions.npy"]
        rowids, versions, coarse, full = load_vectors(index)
        assert full.dtype == np.float16 and full.shape == (index.count(), 256)
        assert len(rowids) == len(versions) == index.count()
        dims = index.embedder.coarse_dims if index.embedder else 0
        assert coarse.dtype == np.float32 and coarse.shape == (index.count(), dims)
        assert np.array_equal(coarse, full[:, :dims].astype(np.float32))
        assert _results(index)[0]
    finally:
        index.close()
    db = sqlite3.connect(out / INDEX_NAME)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    stored = (out / INDEX_NAME).read_bytes()
    assert all(np.asarray(full[i]).tobytes() not in stored for i in range(0, len(full), 7))
    assert ids and not any(chunk_id.encode() in stored for chunk_id in ids)


def test_an_update_embeds_only_new_chunks_and_ranks_as_a_fresh_build(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = _copy(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="wordllama")
    before = _vectors_by_id(index)
    index.close()
    gone, new = _edit_chunks(out)
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
    fresh = SearchIndex.open(_copy(out, tmp_path / "fresh"), embedder="wordllama")
    try:
        assert _results(fresh) == updated
        rebuilt = _vectors_by_id(fresh)
        assert rebuilt.keys() == after.keys()
        assert all(np.array_equal(rebuilt[key], after[key]) for key in after)
    finally:
        fresh.close()


def test_an_older_index_is_rebuilt_once(demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = _copy(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama").close()
    results = _results_of(out)
    # a schema 12 index: the vector in `chunks.vec` too, and a coarse file
    db = sqlite3.connect(out / INDEX_NAME, isolation_level=None)
    db.execute("UPDATE meta SET value='12' WHERE key='schema'")
    db.execute("ALTER TABLE chunks ADD COLUMN vec BLOB")
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
    out = _copy(demo[1], tmp_path / "out")
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
    out = _copy(demo[1], tmp_path / "out")
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
    out = _copy(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama").close()
    full = np.load(out / "search.full.npy")
    np.save(out / "search.full.npy", full[::-1].copy())
    _edit_chunks(out)
    index = SearchIndex.open(out, embedder="wordllama", update=False)
    try:
        updated = _rebuilt(index, caplog)
    finally:
        index.close()
    assert _results_of(_copy(out, tmp_path / "fresh")) == updated


def test_an_update_that_dies_after_writing_the_files_is_rebuilt_next_time(
        demo: tuple[Path, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The vector files are renamed in place before the update commits: when it then
    fails, the index rolls back and the files are ahead of it; the next update sees
    that and rebuilds, instead of taking the rolled-back update's vectors as its own."""
    out = _copy(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama").close()
    _edit_chunks(out)
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
    assert _results_of(_copy(out, tmp_path / "fresh")) == updated
