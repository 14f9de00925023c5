"""Several workers, one answer: two real workers on a real redis-server, one killed with
SIGKILL at some point and replaced on a new part directory, merged; the merged output must
equal a single-process crawl of the same site, field by field (`tests.distributed.compare`).

Written against the outputs only (files and the `docscrawl` command), so that it proves any
rebuild of the distributed mode.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer, StaticSite
from docscrawl.runs import CRAWLING
from tests.conftest import CONTRACT_CHECK, ROOT
from tests.distributed.aliasite import make_alias_site
from tests.distributed.compare import Output, differences

pytestmark = pytest.mark.e2e
PACE = {"CONCURRENT_REQUESTS": "2", "DOWNLOAD_DELAY": "0.05", "LOG_LEVEL": "WARNING"}
# kill points: crawl-log lines the victim has written when it is killed (None: no kill)
KILL_POINTS = {"no-kill": None, "at-start": 2, "early": 12, "middle": 40, "late": 80,
               "middle-pooled": 40}  # "-pooled": each crawl extracts in a worker process
if os.environ.get("DOCSCRAWL_TEST_KILL_POINTS"):  # a longer soak: e.g. "3,7,19,23,51"
    KILL_POINTS = {f"at-{n}": int(n) for n in os.environ["DOCSCRAWL_TEST_KILL_POINTS"].split(",")}
POOLED = {"DOCSCRAWL_EXTRACT_WORKERS": "1", "LOG_LEVEL": "INFO"}  # INFO: the stats dump


def crawl_command(site: str, out: Path, settings: dict[str, str]) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}"]
    for name, value in {**PACE, **settings}.items():
        command += ["-s", f"{name}={value}"]
    return command


def start(site: str, out: Path, settings: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(crawl_command(site, out, settings), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "docscrawl"), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def alias_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureServer]:
    with StaticSite(make_alias_site(tmp_path_factory.mktemp("alias-site"))) as server:
        yield server


@pytest.fixture(scope="module")
def single(alias_site: FixtureServer, tmp_path_factory: pytest.TempPathFactory) -> Output:
    out = tmp_path_factory.mktemp("single") / "out"
    result = subprocess.run(crawl_command(f"{alias_site.url}/docs/", out, {}), cwd=ROOT,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    return Output(out)


def wait_for_lines(path: Path, lines: int, process: subprocess.Popen[bytes]) -> int:
    """Wait until `path` has `lines` lines or the process ended; the lines it has."""
    deadline = time.monotonic() + 60
    count = 0
    while time.monotonic() < deadline and process.poll() is None:
        count = path.read_bytes().count(b"\n") if path.exists() else 0
        if count >= lines:
            break
        time.sleep(0.005)
    return count


@pytest.mark.parametrize("kill_point", list(KILL_POINTS))
def test_merged_output_equals_a_single_process_crawl(
    kill_point: str, alias_site: FixtureServer, single: Output, redis_server, tmp_path: Path,
) -> None:
    site = f"{alias_site.url}/docs/"
    key = f"equal-{uuid.uuid4().hex[:8]}"
    shared = {"DOCSCRAWL_REDIS_URL": redis_server.url, "DOCSCRAWL_REDIS_CRAWL_KEY": key,
              "DOCSCRAWL_REDIS_LEASE": "2", "DOCSCRAWL_REDIS_QUIET": "2",
              **(POOLED if kill_point.endswith("-pooled") else {})}
    workers = {f"part-{n}": start(site, tmp_path / f"part-{n}",
                                  {**shared, "DOCSCRAWL_WORKER_ID": f"w{n}"}) for n in (1, 2)}
    lines = KILL_POINTS[kill_point]
    killed_at = None
    if lines is not None:
        victim = workers["part-1"]
        killed_at = wait_for_lines(tmp_path / "part-1" / CRAWLING / "crawl_log.jsonl",
                                   lines, victim)
        if victim.poll() is None:
            os.killpg(victim.pid, signal.SIGKILL)
            victim.wait(timeout=30)
            workers["part-1b"] = start(site, tmp_path / "part-1b",
                                       {**shared, "DOCSCRAWL_WORKER_ID": "w1b"})
    pooled = 0
    for name, process in workers.items():
        _, err = process.communicate(timeout=180)
        if process.returncode != -signal.SIGKILL:
            assert process.returncode == 0, (name, err.decode()[-2000:])
        pooled += b"'docscrawl/pages_in_workers'" in err
    finished = sum(process.returncode == 0 for process in workers.values())
    assert pooled == (finished if kill_point.endswith("-pooled") else 0)  # stats dumped
    died = [name for name, p in workers.items() if p.returncode == -signal.SIGKILL]
    print(f"kill point {kill_point}: victim killed after {killed_at} log lines; died {died}")

    merged = tmp_path / "merged"
    result = docscrawl("-q", "merge", *(str(tmp_path / name) for name in workers),
                       "-o", str(merged))
    assert result.returncode == 0, result.stderr
    if CONTRACT_CHECK.exists():
        check = subprocess.run([sys.executable, str(CONTRACT_CHECK), str(merged)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout
    found = differences(single, Output(merged))
    assert not found, "\n".join(found[:40])

    backwards = tmp_path / "merged-backwards"  # the parts in the other order: the same
    result = docscrawl("-q", "merge", *(str(tmp_path / name) for name in reversed(workers)),
                       "-o", str(backwards))
    assert result.returncode == 0, result.stderr
    found = differences(single, Output(backwards))
    assert not found, "parts reversed:\n" + "\n".join(found[:40])

    for alias in (f"{site}p5.html?utm_source=footer", f"{site}old/p2"):  # a tracking
        why = docscrawl("why", alias, str(merged), "--json")   # variant, a 301 source
        assert [p["canonical_url"] for p in json.loads(why.stdout)["pages"]] == \
               [single.page_of(alias)], why.stdout[-2000:]

    run = json.loads((merged / "run.json").read_text(encoding="utf-8"))
    assert run["complete"] is True
    assert [p["part"] for p in run["merged_from"]] == list(workers)
    assert run["workers_died"] == [{"part": name, "worker": "w1"} for name in died]
    assert run["started_at"] < run["finished_at"] and run["elapsed_s"] > 0
    summary = docscrawl("summary", str(merged)).stdout
    assert "complete=True" in summary and "None s" not in summary

    status = subprocess.run(
        [sys.executable, "-m", "docscrawl.distributed", "workers", "--redis-url",
         redis_server.url, "--crawl-key", key],  # each worker registered its lease
        capture_output=True, text=True, timeout=60)
    states = {name: info["state"] for name, info in json.loads(status.stdout).items()}
    survivors = {"w2", "w1b"} if died else {"w1", "w2"}
    assert {states[w] for w in survivors} == {"finished"}, states
    assert "dead_or_stuck" not in states.values(), states  # the dead one holds nothing now
