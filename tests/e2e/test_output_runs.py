"""A crawl writes a new run beside the published one and switches at its end
(`docscrawl.runs`): a re-crawl killed with `kill -9` leaves the previous output whole and
searchable, and nothing a crawl writes lands outside its output folder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.runs import CRAWLING, CURRENT, PUBLISHED, RUNS
from tests.conftest import CONTRACT_CHECK, ROOT, SITES, crawl
from tests.inspect.conftest import docscrawl

WORD = "quokkalantern"  # in the seed page only once the site changed


def published_bytes(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in PUBLISHED if (out / name).exists()}


def search(out: Path, query: str) -> list[dict]:
    result = docscrawl("search", str(out), query, "--json", "-k", "3")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def unchanged(path: Path) -> int:
    """Pages a re-crawl carried over (`unchanged`) in a crawl log being written."""
    if not path.exists():
        return 0
    return path.read_text(encoding="utf-8").count('"event":"unchanged"')


def contract_holds(out: Path) -> None:
    if CONTRACT_CHECK.exists():
        check = subprocess.run([sys.executable, str(CONTRACT_CHECK), str(out)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout


@pytest.mark.e2e
def test_a_killed_recrawl_leaves_the_previous_output_and_its_search(tmp_path: Path) -> None:
    site, out = tmp_path / "site", tmp_path / "out"
    shutil.copytree(SITES / "demo", site)
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        before = published_bytes(out)
        answer = search(out, "install acme")
        assert answer and WORD not in json.dumps(search(out, WORD))
        # the site changes, and its re-crawl is killed midway
        index = site / "docs" / "index.html"
        index.write_text(index.read_text(encoding="utf-8").replace(
            "</h1>", f"</h1><p>The {WORD} is new in this release of the docs.</p>", 1),
            encoding="utf-8")
        command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={seed}",
                   "-a", f"out={out}", "-s", "CONCURRENT_REQUESTS=1",
                   "-s", "DOWNLOAD_DELAY=1", "-s", "LOG_LEVEL=INFO"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            while process.poll() is None and unchanged(out / CRAWLING / "crawl_log.jsonl") < 2:
                time.sleep(0.02)
            assert process.poll() is None, "the re-crawl ended before it could be killed"
            os.killpg(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=30)
        # what users read is the previous run, whole; the killed run is there, apart
        assert published_bytes(out) == before
        live = out / CRAWLING
        assert unchanged(live / "crawl_log.jsonl") >= 2
        assert WORD in (live / "pages.jsonl").read_text(encoding="utf-8")
        assert json.loads((live / "run.json").read_text())["status"] == "running"
        contract_holds(out)
        assert search(out, "install acme") == answer
        assert WORD not in json.dumps(search(out, WORD))
        # a complete re-crawl switches, and the killed run's directory goes
        second = crawl(seed, out)
    assert second.run["run_id"] != first.run["run_id"] and second.run["complete"]
    assert not (out / CRAWLING).exists()
    assert [path.name for path in (out / RUNS).iterdir()] == [os.readlink(out / CURRENT)
                                                             .split("/")[-1]]
    assert len(second.pages) == len(first.pages)
    contract_holds(out)
    hits = search(out, WORD)
    assert WORD in json.dumps(hits[0]) and hits[0]["url"].split("#")[0].endswith("/docs/")


@pytest.mark.e2e
def test_a_recrawl_stopped_with_ctrl_c_keeps_the_previous_output(tmp_path: Path) -> None:
    """A graceful stop (Ctrl-C without JOBDIR) writes a consistent but cut-short run: it
    is kept apart, not published over the complete previous one."""
    site, out = tmp_path / "site", tmp_path / "out"
    shutil.copytree(SITES / "demo", site)
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, out)
        before = published_bytes(out)
        command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={seed}",
                   "-a", f"out={out}", "-s", "CONCURRENT_REQUESTS=1",
                   "-s", "DOWNLOAD_DELAY=1", "-s", "LOG_LEVEL=INFO"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            while process.poll() is None and unchanged(out / CRAWLING / "crawl_log.jsonl") < 2:
                time.sleep(0.02)
            assert process.poll() is None, "the re-crawl ended before it could be stopped"
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    assert "the previous output stays in" in err
    assert published_bytes(out) == before
    stopped = json.loads((out / CRAWLING / "run.json").read_text(encoding="utf-8"))
    assert stopped["finish_reason"] == "shutdown" and not stopped["complete"]


@pytest.mark.e2e
def test_a_symlinked_output_file_is_replaced_not_written_through(
    demo_site, tmp_path: Path,
) -> None:
    """A `crawl_log.jsonl` linked to a file outside the output: the crawl truncated and
    filled the file; now the link is replaced and the file left as it was."""
    out, victim = tmp_path / "out", tmp_path / "elsewhere" / "notes.txt"
    victim.parent.mkdir()
    victim.write_text("precious\n", encoding="utf-8")
    out.mkdir()
    (out / "crawl_log.jsonl").symlink_to(victim)
    result = crawl(f"{demo_site.url}/docs/", out)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert os.readlink(out / "crawl_log.jsonl") == f"{CURRENT}/crawl_log.jsonl"
    assert len(result.log) > 10 and result.run["complete"]
    contract_holds(out)


@pytest.mark.e2e
def test_a_dot_dot_seed_host_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """`site=http://../docs/` named the output folder `output/..`: the root's parent."""
    root = tmp_path / "root"
    root.mkdir()
    for host in ("..", "."):
        result = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site=http://{host}/docs/",
             "-s", f"DOCSCRAWL_OUTPUT_ROOT={root / 'output'}", "-s", "LOG_LEVEL=INFO"],
            cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.strip().splitlines() == [
            f"docscrawl: error: argument site: not a host name: {host!r} in "
            f"'http://{host}/docs/'"]
    assert list(root.iterdir()) == []
    assert list(tmp_path.iterdir()) == [root]

