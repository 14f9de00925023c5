"""Redirects in distributed mode end as in one process (docscrawl.redirects.redis): two real
workers on a real redis-server crawl the fault server's redirect cases (loops, a 25-hop
chain, 13 hops to a page, redirects to a 404, to a forbidden page, to a page linked
directly, offsite); each URL ends once, in the outcome FAULTS states and the single-process
crawl of the same site gives."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from docscrawl.inspect.invariants import duplicate_targets
from docscrawl.inspect.output import OutputDir
from tests.conftest import ROOT
from tests.distributed.compare import Output, differences
from tests.support.faultserver import REDIRECT_FAULTS, RunningFaultServer

pytestmark = pytest.mark.e2e


def crawl_command(site: str, allow: str, out: Path, *settings: str) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"allow={allow}", "-a", f"out={out}", "-s", "CONCURRENT_REQUESTS=2",
               "-s", "DOCSCRAWL_RETRY_BACKOFF=0.1", "-s", "LOG_LEVEL=WARNING"]
    for setting in settings:
        command += ["-s", setting]
    return command


def test_two_workers_end_each_redirect_as_one_process_does(
        redis_server, tmp_path: Path) -> None:
    key = f"redirects-{uuid.uuid4().hex[:8]}"
    with RunningFaultServer() as server:
        base = server.url
        site, allow = f"{base}/docs/redirects/", rf"^{base}/docs/"
        single = subprocess.run(crawl_command(site, allow, tmp_path / "single"), cwd=ROOT,
                                capture_output=True, text=True, timeout=240)
        assert single.returncode == 0, single.stderr[-2000:]
        shared = (f"DOCSCRAWL_REDIS_URL={redis_server.url}", f"DOCSCRAWL_REDIS_CRAWL_KEY={key}",
                  "DOCSCRAWL_REDIS_LEASE=120", "DOCSCRAWL_REDIS_QUIET=2")
        workers = [subprocess.Popen(crawl_command(site, allow, tmp_path / f"part-{n}", *shared),
                                    cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                   for n in (1, 2)]
        for process in workers:
            _, err = process.communicate(timeout=240)
            assert process.returncode == 0, err.decode()[-2000:]
    merged = tmp_path / "merged"
    result = subprocess.run([str(Path(sys.executable).parent / "docscrawl"), "-q", "merge",
                             str(tmp_path / "part-1"), str(tmp_path / "part-2"), "-o",
                             str(merged)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    one, both = Output(tmp_path / "single"), Output(merged)
    ends = both.terminals()
    for fault in REDIRECT_FAULTS:
        events = ends[base + fault.path]
        assert len(events) == 1, events
        assert (events[0]["event"], events[0]["reason"]) == (fault.event, fault.reason), events
    assert differences(one, both) == []
    check = duplicate_targets(OutputDir(merged))
    assert check["passed"] and check["details"]["duplicates"] >= 14, check
