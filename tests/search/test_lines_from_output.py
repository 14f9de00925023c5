"""The index keeps no copy of a chunk's line (schema 15): it reads it in chunks.jsonl at
the offset it found it, checked by its CRC-32 -- a plain file by a seek, a .jsonl.gz by
decompressing the one member that holds it. Lines moved by a re-crawl are found at their
new offsets; an edited or replaced file gives the current line or one clear error, never
another chunk's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl import seekjsonl
from docscrawl.runs import published_dir
from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.index import IndexError_
from docscrawl.seekjsonl import compress_jsonl
from docscrawl.vocab import OUTPUT_FILES
from tests.search.conftest import copy_output

QUERY = "configure timeout setting"


def _gzipped(out: Path) -> Path:
    """`out` as `compress=gzip` publishes it: each file compressed, its link renamed."""
    run = published_dir(out)
    for name in OUTPUT_FILES:
        if (run / name).is_file():
            compress_jsonl(run / name)
            (out / name).unlink()
            (out / f"{name}.gz").symlink_to(f"current/{name}.gz")
    return out


def _chunk_lines(out: Path) -> dict[str, str]:
    index = SearchIndex.open(out, embedder="none", update=False)
    try:
        return {json.loads(line.text)["id"]: line.text for line in index.chunk_lines()}
    finally:
        index.close()


def test_every_line_is_read_from_a_gzip_file_of_many_members(
        demo: tuple[Path, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seekjsonl, "MEMBER_BYTES", 2000)
    out = _gzipped(copy_output(demo[1], tmp_path / "out"))
    expected = _chunk_lines(out)
    index = SearchIndex.open(out, embedder="none")
    try:
        members = json.loads(index.meta("chunk_members") or "[]")
        assert len(members) > 5  # the lines are in many members
        rowids = [r for (r,) in index.db.execute("SELECT rowid FROM chunks")]
        read = index.lines(rowids)
        assert sorted(read.values()) == sorted(expected.values())
        hits = Searcher(index).search(QUERY).hits
        assert hits and all(hit.record == json.loads(expected[hit.record["id"]])
                            for hit in hits)
        page = index.page_line(hits[0].record["metadata"]["canonical_url"])
        assert page is not None and page["canonical_url"] == hits[0].url().split("#")[0]
    finally:
        index.close()


def test_a_rewritten_file_moves_the_lines_without_reindexing_them(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="none").close()
    path = (out / "chunks.jsonl").resolve()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(reversed(lines)), encoding="utf-8")  # as a re-crawl may order
    index = SearchIndex.open(out, embedder="none", update=False)
    try:
        built = index.refresh()
        assert (built.added, built.deleted, built.relinked) == (0, 0, 0)
        stored = dict(index.db.execute("SELECT line_at, line_crc FROM chunks"))
        assert stored == {line.at: line.crc for line in index.chunk_lines()}
        hits = Searcher(index).search(QUERY).hits
        by_id = {json.loads(line)["id"]: json.loads(line) for line in lines}
        assert hits and all(hit.record == by_id[hit.record["id"]] for hit in hits)
    finally:
        index.close()


def test_an_edited_file_gives_the_current_line_or_one_clear_error(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    index = SearchIndex.open(out, embedder="none")
    try:
        hits = Searcher(index).search(QUERY).hits
        assert len(hits) >= 2
        first, second = hits[0].record, hits[1].record
        path = (out / "chunks.jsonl").resolve()
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        # the file edited by hand, the index not refreshed: the first hit's line now holds
        # other words, and the second hit's line is swapped with it (each at the other's
        # offset): each hit is still its own chunk's line, as the file has it now
        edited = dict(first, text=first["text"] + " (edited)")
        swapped = [json.dumps(edited) + "\n" if json.loads(line)["id"] == second["id"]
                   else json.dumps(second) + "\n" if json.loads(line)["id"] == first["id"]
                   else line for line in lines]
        path.write_text("".join(swapped), encoding="utf-8")
        again = {hit.record["id"]: hit.record
                 for hit in Searcher(index).search(QUERY).hits}
        assert again[first["id"]] == edited and again[second["id"]] == second
        # the first hit's chunk gone from the file: one line naming it
        path.write_text("".join(line for line in swapped
                                if json.loads(line)["id"] != first["id"]), encoding="utf-8")
        with pytest.raises(IndexError_) as raised:
            Searcher(index).search(QUERY)
        message = str(raised.value)
        assert "chunks.jsonl" in message and "\n" not in message
    finally:
        index.close()
