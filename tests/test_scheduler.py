"""Temporary disk-queue directories: one per crawl process, stale ones swept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docscrawl.crawl.scheduler import QUEUE_PREFIX, make_queue_dir, remove_stale_queue_dirs


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


def test_scheduler_gets_a_queue_dir_without_jobdir_only(tmp_path: Path) -> None:
    """Scrapy opens its disk queues in `dqdir` (the demo crawl's stats show every request
    queued on disk: tests/e2e/test_demo_crawl.py)."""
    import shutil

    from scrapy.utils.test import get_crawler

    from docscrawl.crawl.scheduler import DiskQueueScheduler

    scheduler = DiskQueueScheduler.from_crawler(get_crawler())
    try:
        assert scheduler.temporary_dir is not None and scheduler.dqdir is not None
        queue_dir = Path(scheduler.temporary_dir)
        assert Path(scheduler.dqdir) == queue_dir / "requests.queue"
        assert Path(scheduler.dqdir).is_dir()
        assert queue_dir.name.startswith(f"{QUEUE_PREFIX}{os.getpid()}-")
    finally:
        shutil.rmtree(scheduler.temporary_dir or tmp_path / "none", ignore_errors=True)

    off = get_crawler(settings_dict={"DOCSCRAWL_DISK_QUEUE": False})
    assert DiskQueueScheduler.from_crawler(off).dqdir is None
    jobdir = get_crawler(settings_dict={"JOBDIR": str(tmp_path / "job")})
    kept = DiskQueueScheduler.from_crawler(jobdir)
    assert kept.temporary_dir is None
    assert Path(kept.dqdir) == tmp_path / "job" / "requests.queue"
