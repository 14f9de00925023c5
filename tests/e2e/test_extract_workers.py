"""End to end: `-a workers=N` (extraction in worker processes, `docscrawl.crawl.pool`)
writes what the in-crawler extraction writes; a worker killed mid-crawl costs at most the
page it held, and the crawl goes on with a new one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer
from tests.conftest import ROOT, CrawlOutput, assert_log_invariants, crawl, read_jsonl
from tests.support.crawlcompare import FILES, PAGES, generated_site, records, stat

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureServer]:
    """A generated 60-page docs site."""
    with generated_site(tmp_path_factory.mktemp("gensite")) as server:
        yield server


def test_workers_write_what_the_crawler_writes(site: FixtureServer, tmp_path: Path) -> None:
    inside = crawl(f"{site.url}/", tmp_path / "w0", "workers=0")
    pooled = crawl(f"{site.url}/", tmp_path / "w1", "workers=1")
    assert stat(inside, "pages_in_workers") == 0
    assert stat(pooled, "pages_in_workers") > 0  # those that came after the warm-up
    assert stat(pooled, "extract_workers_started") == 1
    assert_log_invariants(pooled)
    for name in FILES:
        assert records(inside, name) == records(pooled, name), name
    assert len(inside.pages) == PAGES


def children(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                kids = [int(p) for p in task.read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def test_a_killed_worker_fails_its_page_and_the_crawl_goes_on(site: FixtureServer,
                                                               tmp_path: Path) -> None:
    """The worker is stopped while it waits, then killed once the crawler has sent it a
    page: that page ends `failed` `worker_crashed`, a new worker takes the rest."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site.url}/",
               "-a", f"out={out}", "-a", "workers=1", "-s", "LOG_LEVEL=INFO",
               "-s", "DOWNLOAD_DELAY=0.2"]
    log = tmp_path / "stderr"
    with log.open("w") as stderr_file:  # a file: a pipe nobody reads would fill up
        crawler = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=stderr_file)
    try:
        worker = None
        while worker is None and crawler.poll() is None:  # it starts after the warm-up
            named = [pid for pid in children(crawler.pid) if _is_worker(pid)]
            worker = named[0] if named and _idle(named[0]) else None
            time.sleep(0.02)
            if worker is not None:
                os.kill(worker, signal.SIGSTOP)  # stopped in its read: a page sent stays
                if not _idle(worker):  # unread; it took one just before: let it go on
                    os.kill(worker, signal.SIGCONT)
                    worker = None
        assert worker is not None, "the crawl ended before a worker started"
        while not _page_sent(worker) and crawler.poll() is None:
            time.sleep(0.02)
        os.kill(worker, signal.SIGKILL)
        crawler.wait(timeout=300)
    finally:
        if crawler.poll() is None:
            crawler.kill()
    stderr = log.read_text()
    assert crawler.returncode == 0, stderr[-3000:]
    output = CrawlOutput(out, subprocess.CompletedProcess(command, 0, "", stderr))
    assert_log_invariants(output)
    crashed = [e for e in output.log if e.get("reason") == "worker_crashed"]
    assert len(crashed) == 1 and crashed[0]["event"] == "failed"
    assert "died" in crashed[0]["rule"]
    assert stat(output, "extract_workers_started") == 2
    assert stat(output, "extract_workers_crashed") == 1
    assert len(output.pages) == PAGES - 1
    assert output.run["status"] == "finished"


def _is_worker(pid: int) -> bool:
    """An extraction worker (`python -P -c BOOT ROOT FD`, BOOT importing `docscrawl.crawl.pool`)."""
    try:
        return b"docscrawl.crawl.pool" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _sockets(pid: int) -> dict[str, int]:
    """Socket inode -> fd number, of the process's open sockets."""
    found = {}
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found[target[8:-1]] = int(fd.name)
    return found


def _idle(pid: int) -> bool:
    """True when the worker waits for a page: blocked in read(2) on its pipe (a socket)."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(call) > 1 and call[0] == "0" and int(call[1], 16) in _sockets(pid).values()


def _page_sent(pid: int) -> bool:
    """True once the stopped worker's pipe holds a page for it: bytes unread in one of its
    sockets (`ss`'s Recv-Q)."""
    inodes = _sockets(pid)
    listing = subprocess.run(["ss", "-xa"], capture_output=True, text=True).stdout
    for row in listing.splitlines()[1:]:
        cells = row.split()
        if len(cells) >= 6 and cells[5] in inodes and int(cells[2]) > 0:
            return True
    return False


def test_a_recrawl_with_workers_redoes_only_what_changed(tmp_path: Path) -> None:
    """An incremental re-crawl through the pool: unchanged pages are carried over, the one
    changed page goes through a worker, and the output is what a fresh in-crawler crawl of
    the changed site writes."""
    root = tmp_path / "site"
    with generated_site(root, seed=9) as server:
        out = tmp_path / "out"
        first = crawl(f"{server.url}/", out, "workers=1")
        assert stat(first, "pages_in_workers") > 0
        page = sorted(root.glob("*/*.html"))[7]
        html = page.read_text(encoding="utf-8")
        page.write_text(html.replace("</p>", " Now with gizmos.</p>", 1), encoding="utf-8")
        later = time.time() + 10  # past the second-precision Last-Modified of the first crawl
        os.utime(page, (later, later))
        second = crawl(f"{server.url}/", out, "workers=1")
        fresh = crawl(f"{server.url}/", tmp_path / "fresh", "workers=0")
    kinds: dict[str, int] = {}
    for line in read_jsonl(out / "changes.jsonl"):
        kinds[line["change"]] = kinds.get(line["change"], 0) + 1
    assert kinds == {"changed": 1, "unchanged": PAGES - 1}, kinds
    changed = next(line for line in read_jsonl(out / "changes.jsonl")
                   if line["change"] == "changed")
    assert changed["canonical_url"].endswith(f"/{page.parent.name}/{page.name}")
    assert second.run["counts"]["events"].get("extracted") == 1
    assert stat(second, "pages_in_workers") == 1  # the table comes frozen from the first run
    assert_log_invariants(second)
    for name in ("pages.jsonl", "chunks.jsonl", "structure.jsonl"):
        assert records(second, name) == records(fresh, name), name
