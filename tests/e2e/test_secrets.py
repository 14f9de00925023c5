"""Credentials from the environment or a file, and never on disk: not in the JOBDIR request
queue (a retried request goes back to the scheduler, and a paused crawl pickles it there),
not in the outputs, not on the process's command line."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, CrawlOutput, assert_log_invariants, crawl
from tests.support.authserver import (
    API_KEY,
    PASSWORD,
    SECRETS,
    USER,
    AuthServer,
    running_auth_server,
    secret_hits,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def auth_server() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


@pytest.mark.parametrize("given", ["environment_and_file", "arguments"])
def test_no_secret_reaches_the_jobdir_queue_or_the_outputs(
    auth_server: AuthServer, tmp_path: Path, given: str,
) -> None:
    """A crawl paused while a retried request waits in Scrapy's queue: the queue is kept
    in JOBDIR, without the credentials; the resumed crawl sends them again."""
    out, jobdir = tmp_path / "out", tmp_path / "job"
    env = dict(os.environ)
    if given == "arguments":
        credentials = [f"http_user={USER}", f"http_pass={PASSWORD}",
                       f"auth_header=X-Api-Key: {API_KEY}"]
    else:
        header_file = tmp_path / "api-key"
        header_file.write_text(f"X-Api-Key: {API_KEY}\n", encoding="utf-8")
        header_file.chmod(0o600)
        credentials = [f"http_user={USER}", f"auth_header_file={header_file}"]
        env["DOCSCRAWL_HTTP_PASS"] = PASSWORD
    command = [sys.executable, "-m", "scrapy", "crawl", "docs",
               "-a", f"site={auth_server.url}/docs/", "-a", f"out={out}", "-a", "render=never",
               *(part for arg in credentials for part in ("-a", arg)),
               "-s", f"JOBDIR={jobdir}", "-s", "CONCURRENT_REQUESTS=1",
               "-s", "DOCSCRAWL_TEMPLATE_WARMUP=False", "-s", "LOG_LEVEL=DEBUG"]
    log_path = tmp_path / "paused.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                   stderr=log)
        try:
            deadline = time.monotonic() + 120
            while not auth_server.holding.wait(0.1):
                assert process.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, "the crawl never asked for both pages"
            cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes()
            process.send_signal(signal.SIGINT)  # pause while the retry waits in the queue
        finally:
            auth_server.release.set()
            process.wait(timeout=120)
    paused_log = log_path.read_text()
    assert process.returncode == 1, paused_log[-3000:]
    assert (jobdir / "requests.queue" / "active.json").exists(), "nothing was left queued"
    paths = [path for path, _ in auth_server.requests]
    assert auth_server.failed is not None and paths.count(auth_server.failed) == 1, paths
    assert secret_hits(jobdir, out) == []
    if given != "arguments":  # nothing secret on the command line (`ps`)
        assert not [s for s in SECRETS if s.encode() in cmdline], cmdline
    assert stat.S_IMODE(jobdir.stat().st_mode) == 0o700

    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    output = CrawlOutput(out, result)
    assert {p["canonical_url"].rsplit("/", 1)[1] for p in output.pages} == {
        "", "a.html", "b.html"}
    assert_log_invariants(output)
    retried = [ok for path, ok in auth_server.requests if path == auth_server.failed]
    assert retried == [True, True], auth_server.requests  # the 503, then the resumed retry
    assert all(ok for _, ok in auth_server.requests), auth_server.requests
    assert secret_hits(jobdir, out) == []
    assert not [s for s in SECRETS if s in paused_log + result.stderr]


def test_a_world_writable_jobdir_is_named_in_a_warning(demo_site: Any, tmp_path: Path) -> None:
    """JOBDIR holds pickles, which run code when loaded: a JOBDIR other users may write to
    is named in a warning (the crawl goes on)."""
    jobdir = tmp_path / "shared-job"
    jobdir.mkdir()
    jobdir.chmod(0o777)
    output = crawl(f"{demo_site.url}/docs/", tmp_path / "out", "max_pages=1",
                   settings={"JOBDIR": str(jobdir)})
    assert f"JOBDIR {jobdir} is writable by other users" in output.result.stderr
