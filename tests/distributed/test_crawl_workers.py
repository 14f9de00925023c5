"""Two real `scrapy crawl docs` workers share one crawl through a real redis-server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.distributed import SharedFrontier
from docscrawl.runs import CRAWLING
from tests.conftest import CONTRACT_CHECK, ROOT
from tests.distributed.clock import age

pytestmark = pytest.mark.e2e
PAGES = 300
LEASE = 120  # no live worker's lease can run out on a loaded machine; a killed one's is aged


def make_site(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    for n in range(PAGES):
        links = "".join(f"<a href='p{(n * k + 1) % PAGES}.html'>link {k}</a> " for k in (1, 3, 7))
        (root / "docs" / f"p{n}.html").write_text(
            f"<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
            f"<p>Text of page number {n}. {'More words here. ' * 20}</p>{links}</main>"
            "</body></html>", encoding="utf-8")
    (root / "docs" / "index.html").write_text(
        "<html><head><title>Index</title></head><body><main><h1>Index</h1>"
        "<a href='p0.html'>start</a></main></body></html>", encoding="utf-8")
    return root


def worker(site: str, out: Path, redis_url: str, key: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}", "-s", f"DOCSCRAWL_REDIS_URL={redis_url}",
               "-s", f"DOCSCRAWL_REDIS_CRAWL_KEY={key}", "-s", f"DOCSCRAWL_REDIS_LEASE={LEASE}",
               "-s", "DOCSCRAWL_REDIS_QUIET=2", "-s", "CONCURRENT_REQUESTS=4",
               "-s", "DOWNLOAD_DELAY=0.01", "-s", "LOG_LEVEL=WARNING"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def merged_pages(parts: list[Path], out: Path) -> list[dict]:
    result = subprocess.run([str(Path(sys.executable).parent / "docscrawl"), "-q", "merge",
                             *map(str, parts), "-o", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    if CONTRACT_CHECK.exists():
        check = subprocess.run([sys.executable, str(CONTRACT_CHECK), str(out)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout
    return [json.loads(line) for line in (out / "pages.jsonl").open(encoding="utf-8")]


def page_numbers(pages: list[dict]) -> Counter[str]:
    return Counter(p["canonical_url"].rsplit("/", 1)[-1] for p in pages)


def test_two_workers_fetch_every_page_exactly_once(redis_server, tmp_path: Path) -> None:
    key = f"crawl-{uuid.uuid4().hex[:8]}"
    with StaticSite(make_site(tmp_path / "site")) as server:
        site = f"{server.url}/docs/"
        workers = [worker(site, tmp_path / f"part-{n}", redis_server.url, key) for n in (1, 2)]
        for process in workers:
            _, err = process.communicate(timeout=240)
            assert process.returncode == 0, err.decode()[-2000:]
        fetched = Counter(p for p in server.paths if p.startswith("/docs/p"))
    assert len(fetched) == PAGES
    assert set(fetched.values()) == {1}, [p for p, n in fetched.items() if n > 1][:5]
    per_worker = [sum(1 for _ in (tmp_path / f"part-{n}" / "pages.jsonl").open()) for n in (1, 2)]
    assert sum(per_worker) == PAGES + 1
    counts = page_numbers(merged_pages([tmp_path / "part-1", tmp_path / "part-2"],
                                       tmp_path / "merged"))
    assert len(counts) == PAGES + 1 and set(counts.values()) == {1}


def test_a_killed_worker_loses_nothing(redis_server, tmp_path: Path) -> None:
    key = f"crawl-{uuid.uuid4().hex[:8]}"
    with StaticSite(make_site(tmp_path / "site")) as server:
        site = f"{server.url}/docs/"
        victim = worker(site, tmp_path / "part-1", redis_server.url, key)
        survivor = worker(site, tmp_path / "part-2", redis_server.url, key)
        pages = tmp_path / "part-1" / CRAWLING / "pages.jsonl"  # the run being written
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if pages.exists() and pages.read_text(encoding="utf-8").count("\n") >= 20:
                break
            time.sleep(0.05)
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        shared = SharedFrontier(redis_server.url, key, lease_seconds=LEASE)
        try:
            (dead,) = [name for name, info in shared.workers().items()
                       if info.get("pid") == victim.pid]
            age(shared, LEASE + 1, worker=dead)  # its leases run out now
        finally:
            shared.close()
        _, err = survivor.communicate(timeout=240)
        assert survivor.returncode == 0, err.decode()[-2000:]
        fetched = Counter(p for p in server.paths if p.startswith("/docs/p"))
    assert victim.returncode == -signal.SIGKILL
    assert len(fetched) == PAGES  # every page was fetched; the victim's leases came back
    counts = page_numbers(merged_pages([tmp_path / "part-1", tmp_path / "part-2"],
                                       tmp_path / "merged"))
    assert len(counts) == PAGES + 1 and set(counts.values()) == {1}
