"""Run directories of an output folder, and the switch that publishes a finished run.

A crawl (or `docscrawl merge`) never writes the files users read. It writes into a new
run directory, `OUT/.runs/<run>/`, that `OUT/.crawling` points at while it runs; when the
run ends, one atomic rename of the symlink `OUT/current` makes it the published run, and
the previous one is deleted. The files users read, `OUT/pages.jsonl`, `OUT/run.json`...
(`PUBLISHED`), are fixed symlinks to `current/<name>`: a reader sees the previous run or
the new one, whole, never a mix, and a crawl killed at any moment (`kill -9`, power
loss) leaves the previous run as it was. An output folder written by an older docscrawl
(regular files) is moved into a run directory, file by file with its content unchanged,
the first time a run is published over it.

A resumed crawl (JOBDIR) continues the run directory its marker names; a new crawl
deletes the run directories nothing points at (a killed crawl's). A run directory holding
`STATE_PIN` is one a state database reads unchanged pages from
(`docscrawl.incremental.carry`): it is kept when another run is published over it (an
inventory crawl's, say) until that state points at a newer run and `release`s it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from docscrawl.jsonl import GZIP_SUFFIX, current_umask
from docscrawl.vocab import OUTPUT_FILES

__all__ = ["CRAWLING", "CURRENT", "PUBLISHED", "RUNS", "STATE_PIN", "RunDirError",
           "new_run_dir", "pin", "pinned", "publish", "published_dir", "release",
           "remove_stale_runs", "resumable_run_dir", "unfinished_dir"]

RUNS = ".runs"  # the run directories
CURRENT = "current"  # symlink to the published run
CRAWLING = ".crawling"  # symlink to the run being written (left by a killed crawl)
# OUT/<name> -> current/<name>, for the names the published run holds: each JSONL file
# plain or .gz (readers name the plain file and find either: jsonl.resolve_jsonl)
PUBLISHED = (*OUTPUT_FILES, *(name + GZIP_SUFFIX for name in OUTPUT_FILES), "run.json")
LEGACY = "legacy"  # the prefix of the run made of an older docscrawl's files
STATE_PIN = ".state-source"  # in a run directory a state database reads lines from


class RunDirError(OSError):
    """The output folder's run layout is not one docscrawl made (a symlink in its place)."""


def _runs(out: Path) -> Path:
    """`OUT/.runs`, made when missing; refused when it is anything but a real directory
    (a symlink would send every write elsewhere)."""
    runs = out / RUNS
    if runs.is_symlink() or (runs.exists() and not runs.is_dir()):
        raise RunDirError(f"{runs}: not a directory docscrawl made (a symlink or a file); "
                          "remove it")
    runs.mkdir(parents=True, exist_ok=True)
    return runs


def _link_target(link: Path) -> Path | None:
    """Where a symlink docscrawl made points (`.runs/<run>`, relative), else None: a link
    pointing anywhere else is not followed."""
    try:
        target = os.readlink(link)
    except OSError:
        return None
    parts = Path(target).parts
    if len(parts) != 2 or parts[0] != RUNS or parts[1] in ("", ".", ".."):
        return None
    return link.parent / target


def _point(link: Path, target: str) -> None:
    """Make `link` a symlink to `target`, atomically (a unique temporary link renamed over
    whatever `link` was: a file, another link; never followed)."""
    for _ in range(100):
        tmp = link.with_name(f".{link.name}.{os.urandom(6).hex()}.tmp")
        try:
            os.symlink(target, tmp)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random names taken
        raise RunDirError(f"{link}: no free temporary name")
    os.replace(tmp, link)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def new_run_dir(out: Path) -> Path:
    """A new, empty run directory for a crawl or merge, pointed at by `OUT/.crawling`."""
    out.mkdir(parents=True, exist_ok=True)
    run = Path(tempfile.mkdtemp(prefix="run-", dir=_runs(out)))
    os.chmod(run, 0o755 & ~current_umask())
    _point(out / CRAWLING, f"{RUNS}/{run.name}")
    return run


def resumable_run_dir(out: Path, name: str | None) -> Path | None:
    """The run directory `name` (a JOBDIR marker's) when it is still there."""
    if not name or Path(name).name != name or name in (".", ".."):
        return None
    run = out / RUNS / name
    return run if run.is_dir() and not run.is_symlink() else None


def published_dir(out: Path) -> Path:
    """Where the published files of `out` are: its current run directory, resolved once
    (so that a reader reading several files reads one run), or `out` itself (an output of
    an older docscrawl, or a folder of plain files)."""
    target = _link_target(out / CURRENT)
    return target if target is not None and target.is_dir() else out


def unfinished_dir(out: Path) -> Path | None:
    """The run directory a crawl is writing or left unfinished (killed), if any (not the
    published one: a kill right after the switch leaves `.crawling` pointing at it)."""
    target = _link_target(out / CRAWLING)
    if target is None or not target.is_dir() or target == _link_target(out / CURRENT):
        return None
    return target


def publish(out: Path, run: Path) -> None:
    """Make `run` (a directory under `OUT/.runs`) the published run: one atomic rename of
    `OUT/current`, then the previous run is deleted."""
    previous = _link_target(out / CURRENT)
    if previous is None:
        previous = _adopt_legacy(out)
    present = [name for name in PUBLISHED if (run / name).is_file()]
    for name in present:
        link = out / name
        if not (link.is_symlink() and os.readlink(link) == f"{CURRENT}/{name}"):
            _point(link, f"{CURRENT}/{name}")
    _point(out / CURRENT, f"{RUNS}/{run.name}")
    for name in set(PUBLISHED) - set(present):  # a name this run has not (no dangling link)
        link = out / name
        if link.is_symlink() and os.readlink(link) == f"{CURRENT}/{name}":
            link.unlink()
    _fsync_dir(out)
    if _link_target(out / CRAWLING) == run:
        (out / CRAWLING).unlink()
    if previous is not None and previous != run and not (previous / STATE_PIN).exists():
        shutil.rmtree(previous, ignore_errors=True)


def pin(run: Path) -> None:
    """Keep the run directory `run` while a state database reads lines from it."""
    (run / STATE_PIN).touch()


def pinned(out: Path) -> list[Path]:
    """The run directories of `out` a state reads lines from (resolved)."""
    runs = out / RUNS
    if not runs.is_dir() or runs.is_symlink():
        return []
    return [path.resolve() for path in runs.iterdir()
            if path.is_dir() and not path.is_symlink() and (path / STATE_PIN).exists()]


def release(run: Path) -> None:
    """No state reads from `run` any more: unpinned, and deleted unless it is its output
    folder's published run or the run a crawl is writing."""
    (run / STATE_PIN).unlink(missing_ok=True)
    out = run.parent.parent
    live = {target.resolve() for target in (_link_target(out / CURRENT),
                                            _link_target(out / CRAWLING)) if target}
    if run.parent.name == RUNS and run.is_dir() and run.resolve() not in live:
        shutil.rmtree(run, ignore_errors=True)


def _adopt_legacy(out: Path) -> Path | None:
    """Regular output files of an older docscrawl (or a symlink of the user's) at a
    published name: keep serving the regular files from a run directory of their own
    while the names become links, so that readers never see a name missing."""
    legacy = [out / name for name in PUBLISHED
              if (out / name).is_file() and not (out / name).is_symlink()]
    if not legacy:
        return None
    run = Path(tempfile.mkdtemp(prefix=f"{LEGACY}-", dir=_runs(out)))
    os.chmod(run, 0o755 & ~current_umask())
    for path in legacy:
        try:
            os.link(path, run / path.name)
        except OSError:  # a file system without hard links
            shutil.copy2(path, run / path.name)
    _point(out / CURRENT, f"{RUNS}/{run.name}")
    return run


def remove_stale_runs(out: Path, *, keep: Path | None = None) -> list[Path]:
    """Delete the run directories that neither `current` nor `keep` (the run a crawl is
    writing) point at, and no state reads from: runs of crawls killed before their end."""
    runs = out / RUNS
    if not runs.is_dir() or runs.is_symlink():
        return []
    live = {_link_target(out / CURRENT), keep}
    removed = []
    for path in runs.iterdir():
        if (path not in live and path.is_dir() and not path.is_symlink()
                and not (path / STATE_PIN).exists()):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
