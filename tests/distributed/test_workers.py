"""Two worker processes share one crawl; one of them is killed with SIGKILL mid-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from docscrawl.distributed import SharedFrontier
from tests.conftest import ROOT
from tests.distributed.clock import age
from tests.distributed.conftest import LEASE, RedisServer
from tests.distributed.worker import discover, page_task, page_url

PAGES = 300


class Crawl:
    """A shared crawl, its worker processes and what they recorded."""

    def __init__(self, server: RedisServer, crawl_key: str) -> None:
        self.server = server
        self.key = crawl_key
        self.record = f"record:{crawl_key}"
        self.shared = SharedFrontier(server.url, crawl_key, lease_seconds=LEASE)
        self.shared.reset()
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, worker: str, *args: str) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "tests.distributed.worker", "--redis-url",
                   self.server.url, "--crawl-key", self.key, "--worker", worker,
                   "--record", self.record, "--lease", str(LEASE), *args]
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.procs[worker] = proc
        return proc

    def wait(self, worker: str, timeout: float = 40) -> None:
        proc = self.procs[worker]
        output, _ = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, f"{worker} exited {proc.returncode}: {output}"

    def entries(self, name: str) -> list[tuple[int, str]]:
        rows = self.shared.redis.lrange(f"{self.record}:{name}", 0, -1)
        return [(int(n), worker) for n, worker in (row.split() for row in rows)]

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.shared.redis.delete(f"{self.record}:started", f"{self.record}:completed")
        self.shared.reset()
        self.shared.close()


@pytest.fixture
def crawl(redis_server: RedisServer, crawl_key: str) -> Iterator[Crawl]:
    state = Crawl(redis_server, crawl_key)
    try:
        yield state
    finally:
        state.close()


def assert_all_done_once(crawl: Crawl) -> Counter[int]:
    completed = crawl.entries("completed")
    per_page = Counter(n for n, _ in completed)
    assert set(per_page) == set(range(PAGES)), f"missing {set(range(PAGES)) - set(per_page)}"
    assert max(per_page.values()) == 1, [n for n, c in per_page.items() if c > 1]
    counts = crawl.shared.counts()
    assert (counts["pending"], counts["leased"], counts["dead"]) == (0, 0, 0)
    assert counts["done"] == PAGES
    assert counts["finished"] is True
    return Counter(worker for _, worker in completed)


@pytest.mark.parametrize("mode", ["queue", "graph"])
def test_two_live_workers_process_every_task_exactly_once(crawl: Crawl, mode: str) -> None:
    if mode == "queue":  # 300 tasks queued up front
        for n in range(PAGES):
            crawl.shared.first_discovery(page_url(n))
            crawl.shared.claim_and_push(page_url(n), "seed", page_task(n, 0, None))
        extra: tuple[str, ...] = ()
    else:  # one seed; the workers discover the other 299 pages from each other's pages
        discover(crawl.shared, "seed", 0, 0, None)
        extra = ("--pages", str(PAGES))
    crawl.start("w1", *extra)
    crawl.start("w2", *extra)
    crawl.wait("w1")
    crawl.wait("w2")
    by_worker = assert_all_done_once(crawl)
    started = Counter(n for n, _ in crawl.entries("started"))
    assert max(started.values()) == 1  # no lease expired: each page fetched exactly once
    assert sum(by_worker.values()) == PAGES
    assert crawl.shared.counts()["requeued"] == 0


def test_a_worker_killed_with_sigkill_loses_nothing(crawl: Crawl) -> None:
    discover(crawl.shared, "seed", 0, 0, None)
    victim = crawl.start("victim", "--pages", str(PAGES), "--batch", "5", "--work", "0.02")
    crawl.start("survivor", "--pages", str(PAGES), "--batch", "2")
    held: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done_by_victim = sum(1 for _, w in crawl.entries("completed") if w == "victim")
        if done_by_victim >= 40 and crawl.shared.leases_of("victim"):
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            held = crawl.shared.leases_of("victim")
            age(crawl.shared, LEASE + 1, worker="victim")  # its leases run out now
            break
        time.sleep(0.005)
    assert victim.returncode == -signal.SIGKILL, "the victim was not killed mid-crawl"
    assert held, "the victim held no lease when it was killed"
    held_pages = {task["n"] for task in crawl.shared.read_tasks(held)}
    crawl.wait("survivor")
    by_worker = assert_all_done_once(crawl)
    assert by_worker["survivor"] > 0 and by_worker["victim"] >= 40
    started = Counter(n for n, _ in crawl.entries("started"))
    refetched = {n for n, count in started.items() if count > 1}
    assert refetched <= held_pages  # only the killed worker's leases were delivered again
    assert crawl.shared.counts()["requeued"] >= len(held)
    assert crawl.shared.leases_of("victim") == []
