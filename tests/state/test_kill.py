"""After kill -9 mid-write the state database opens, is consistent, and lost nothing
that was committed; the interrupted run can be resumed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from docscrawl.incremental.state import DB_NAME, StateStore

ROOT = Path(__file__).resolve().parents[2]


def run_and_kill(directory: Path, run_id: str, start: int, commits: int) -> int:
    """Start the writer, kill -9 it after `commits` acknowledged commits; last index."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.state.writer", str(directory), run_id, str(start)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None
    last = -1
    try:
        for _ in range(commits):
            line = child.stdout.readline()
            assert line, "writer exited early"
            last = int(line)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    return last


def check_consistent(directory: Path, run_id: str, acknowledged: list[int]) -> None:
    with StateStore.open(directory) as store:  # opens: quick_check passed, schema intact
        count = store.count()
        for i in acknowledged:
            row = store.get(f"https://docs.example.test/p{i}/index.html")
            assert row is not None, f"committed page {i} lost"
            assert row.content_hash == f"sha256:h{i}" and row.last_seen_run == run_id
            assert row.discovery_links is not None and len(row.discovery_links) == 40
            assert len(row.chunk_ids) == i % 7 + 1
        assert not store.unseen(run_id)
        assert count >= len(acknowledged)
    conn = sqlite3.connect(directory / DB_NAME)
    orphans = conn.execute(
        "SELECT COUNT(*) FROM url_aliases WHERE canonical_url NOT IN (SELECT canonical_url"
        " FROM pages)"
    ).fetchone()[0]
    assert orphans == 0
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


@pytest.mark.parametrize("commits", [1, 40, 250])
def test_kill_9_leaves_consistent_state_and_run_resumes(tmp_path: Path, commits: int) -> None:
    first = run_and_kill(tmp_path, "run-a", 0, commits)
    check_consistent(tmp_path, "run-a", list(range(first + 1)))
    second = run_and_kill(tmp_path, "run-a", first + 1, commits)  # resumed, same run
    check_consistent(tmp_path, "run-a", list(range(second + 1)))
    with StateStore.open(tmp_path) as store:
        run = store.get_run("run-a")
        assert run is not None and run.finished_at is None  # killed: never finished
        assert store.finish_run("run-a", complete=False).complete is False
