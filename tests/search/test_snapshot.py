"""A search reads one state of the index: another process's update committed between
two of its statements is not seen half (issue 25: "never a half-written index read")."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from docscrawl.search.index import INDEX_NAME, SearchIndex
from docscrawl.search.rank import Searcher


def test_an_update_committed_during_a_search_is_not_seen_half(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    _, out, _ = demo
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    index = SearchIndex.open(copy)
    searcher = Searcher(index)
    before = [hit.url() for hit in searcher.search("configure timeout setting").hits]
    assert before
    committed = []

    def other_process_updates(statement: str) -> None:
        """When the search reads its results' lines (ranked from the rank columns), a
        second connection, as another process's refresh would, deletes every chunk and
        commits."""
        if statement.startswith("SELECT rowid, line_at") and not committed:
            writer = sqlite3.connect(copy / INDEX_NAME, isolation_level=None)
            writer.execute("BEGIN IMMEDIATE")
            writer.execute("DELETE FROM chunks")
            writer.execute("COMMIT")
            writer.close()
            committed.append(True)

    index.db.set_trace_callback(other_process_updates)
    during = [hit.url() for hit in searcher.search("configure timeout setting").hits]
    assert committed and during == before  # the state the search started from, whole
    index.db.set_trace_callback(None)
    assert searcher.search("configure timeout setting").hits == []  # the next one: the new
