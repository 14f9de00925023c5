"""Temporary disk-queue directories: one per crawl process, stale ones swept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docscrawl.scheduler import QUEUE_PREFIX, make_queue_dir, remove_stale_queue_dirs


def test_queue_dirs_of_dead_processes_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / f"{QUEUE_PREFIX}{dead.stdout.strip()}-abc"
    live = tmp_path / f"{QUEUE_PREFIX}{os.getpid()}-def"
    foreign = tmp_path / f"{QUEUE_PREFIX}nopid"
    for path in (stale, live, foreign):
        (path / "requests.queue").mkdir(parents=True)
    assert remove_stale_queue_dirs(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and foreign.exists()


def test_make_queue_dir_names_the_process(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    made = Path(make_queue_dir())
    assert made.parent == tmp_path and made.name.startswith(f"{QUEUE_PREFIX}{os.getpid()}-")
