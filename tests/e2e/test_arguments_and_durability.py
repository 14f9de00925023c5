"""End to end: bad arguments stop before any request; kill -9 leaves only valid lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.runs import CRAWLING
from tests.conftest import ROOT, run_crawl

pytestmark = pytest.mark.e2e


def test_bad_autothrottle_setting_stops_before_any_request(
    demo_site: StaticSite, tmp_path: Path,
) -> None:
    before = len(demo_site.requests)
    result = run_crawl(f"{demo_site.url}/docs/", tmp_path / "out",
                       settings={"DOCSCRAWL_AUTOTHROTTLE": "sometimes"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["docscrawl: error: DOCSCRAWL_AUTOTHROTTLE must be one of remote|on|off,"
                     " got 'sometimes'"]
    assert len(demo_site.requests) == before


@pytest.mark.parametrize(("site", "extra", "names"), [
    ("not a url", [], "argument site"),
    ("ftp://example.org/docs/", [], "argument site"),
    ("http://127.0.0.1:99999/", [], "argument site"),
    (None, ["allow=(unclosed"], "argument allow"),
    (None, ["deny=[z-a]"], "argument deny"),
    (None, ["render=sometimes"], "argument render"),
    (None, ["config=/nonexistent/profile.json"], "argument config"),
    (None, ["max_pages=0"], "argument max_pages"),
    (None, ["max_pages=lots"], "argument max_pages"),
    (None, ["colour=blue"], "argument colour"),
    (None, ["extract=sometimes"], "argument extract"),
])
def test_bad_argument_stops_before_any_request(
    demo_site: StaticSite, tmp_path: Path, site: str | None, extra: list[str], names: str,
) -> None:
    before = len(demo_site.requests)
    result = run_crawl(site or f"{demo_site.url}/docs/", tmp_path / "out", *extra)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("docscrawl: error: " + names)
    assert len(demo_site.requests) == before
    assert not (tmp_path / "out").exists()


def test_kill_9_mid_crawl_leaves_only_complete_valid_lines(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    for n in range(300):
        (site / "docs" / f"p{n}.html").write_text(
            f"<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
            f"<p>{'Text of the page. ' * 40}</p><a href='p{n + 1}.html'>next</a>"
            f"<a href='p{(n * 7) % 300}.html'>jump</a></main></body></html>",
            encoding="utf-8")
    (site / "docs" / "index.html").write_text("<a href='p0.html'>start</a>", encoding="utf-8")
    out = tmp_path / "out"
    with StaticSite(site) as server:
        command = [sys.executable, "-m", "scrapy", "crawl", "docs",
                   "-a", f"site={server.url}/docs/", "-a", f"out={out}",
                   "-s", "CONCURRENT_REQUESTS=1", "-s", "DOWNLOAD_DELAY=0.02"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            live = out / CRAWLING  # the run being written (published at its end)
            pages = live / "pages.jsonl"
            while time.monotonic() < deadline:
                if pages.exists() and pages.read_text(encoding="utf-8").count("\n") >= 5:
                    break
                time.sleep(0.05)
            os.killpg(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    written = 0
    for name in ("pages.jsonl", "structure.jsonl", "crawl_log.jsonl"):
        text = (live / name).read_text(encoding="utf-8")
        complete = text.split("\n")[:-1]  # the part after the last newline may be torn
        for line in complete:
            json.loads(line)
        written += len(complete)
    assert len((live / "pages.jsonl").read_text(encoding="utf-8").split("\n")[:-1]) >= 5
    assert json.loads((live / "run.json").read_text(encoding="utf-8"))["status"] == "running"
    assert not (out / "pages.jsonl").exists()  # nothing published: a first crawl, killed
    assert written > 10
