"""Temporary per-process directories for what a crawl keeps on disk instead of in memory.

Each is named `<prefix><pid>-<random>` under the system temp directory and deleted when the
crawl closes; one left behind by a crawl killed with `kill -9` is removed by the next
crawl that makes a directory with the same prefix.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def make_scratch_dir(prefix: str) -> str:
    """A new temporary directory named after this process; directories with the same
    prefix whose process no longer runs are removed first."""
    remove_stale_dirs(Path(tempfile.gettempdir()), prefix)
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")


def remove_stale_dirs(parent: Path, prefix: str) -> list[Path]:
    """Remove `<prefix><pid>-*` directories under `parent` whose process is gone."""
    removed = []
    for path in parent.glob(f"{prefix}*-*"):
        pid = path.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
