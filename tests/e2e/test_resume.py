"""Pause and resume with `-s JOBDIR=DIR`: kill -9 mid-crawl, resume, nothing twice or lost.

The unit tests of `docscrawl.crawl.resume` (pure functions) come first; the end-to-end tests run
`scrapy crawl docs` in subprocesses against a generated site.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from docscrawl.crawl.resume import (
    cut_torn_tail,
    replay_journal,
    replay_log,
    reported_changes,
    roll_back_unlogged,
)
from docscrawl.demo.server import StaticSite
from docscrawl.jsonl import dumps_line
from docscrawl.runs import CRAWLING
from tests.conftest import ROOT, CrawlOutput, assert_log_invariants, crawl, read_jsonl

PAGES = 300


# ---- docscrawl.crawl.resume --------------------------------------------------------------------


def write_lines(path: Path, records: list[dict], tail: str = "") -> None:
    path.write_text("".join(dumps_line(r) for r in records) + tail, encoding="utf-8")


def test_cut_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_lines(path, [{"a": 1}, {"b": 2}], tail='{"c": ')
    assert cut_torn_tail(path) == len('{"c": ')
    assert read_jsonl(path) == [{"a": 1}, {"b": 2}]
    assert cut_torn_tail(path) == 0
    path.write_text('{"only": "torn', encoding="utf-8")
    assert cut_torn_tail(path) > 0 and path.read_text() == ""
    assert cut_torn_tail(tmp_path / "missing.jsonl") == 0


def test_replay_log_open_closed_written_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "crawl_log.jsonl"
    write_lines(path, [
        {"url": "http://h/r.txt", "event": "fetched", "parser": "robots"},
        {"url": "http://h/a", "event": "discovered", "discovery": {"reason": "seed"}},
        {"url": "http://h/b", "event": "discovered", "discovery": {"reason": "in_page"}},
        {"url": "http://h/c", "event": "discovered", "discovery": {"reason": "in_page"}},
        {"url": "http://h/d?utm_source=x", "event": "discovered"},
        {"url": "http://h/e", "event": "discovered"},
        {"url": "http://h/a", "event": "fetched"},
        {"url": "http://h/a", "event": "extracted", "canonical_url": "http://h/a"},
        {"url": "http://h/d?utm_source=x", "event": "skipped", "reason": "duplicate_url",
         "rule": "http://h/d"},
        {"url": "http://h/c", "event": "duplicate", "reason": "same_content",
         "duplicate_of": "http://h/a"},
        {"url": "http://h/e", "event": "skipped", "reason": "max_pages", "rule": "max_pages=3"},
        {"url": "http://h/s.xml", "event": "failed", "reason": "http_404", "parser": "sitemap"},
    ])
    replay = replay_log(path)
    assert replay.open == ["http://h/b"]
    assert replay.written == {"http://h/a": ("extracted", "http://h/a")}
    assert replay.duplicate_urls == [("http://h/d?utm_source=x", "http://h/d")]
    assert replay.same_content == [("http://h/c", "http://h/a")]
    assert replay.limited
    assert replay.events["discovered"] == 5 and replay.failure_reasons["http_404"] == 1
    assert replay.skip_examples["max_pages"] == ("http://h/e", "max_pages=3")
    assert "http://h/s.xml" not in replay.closed


def test_roll_back_removes_the_page_without_outcome(tmp_path: Path) -> None:
    write_lines(tmp_path / "pages.jsonl", [{"canonical_url": "http://h/a"},
                                           {"canonical_url": "http://h/b"}])
    write_lines(tmp_path / "structure.jsonl", [{"canonical_url": "http://h/a"},
                                               {"canonical_url": "http://h/b"}])
    write_lines(tmp_path / "chunks.jsonl", [
        {"id": "1", "metadata": {"canonical_url": "http://h/a"}},
        {"id": "2", "metadata": {"canonical_url": "http://h/b"}},
        {"id": "3", "metadata": {"canonical_url": "http://h/c"}},  # its pages line was torn
    ])
    assert roll_back_unlogged(tmp_path, {"http://h/a"}) == {"http://h/b", "http://h/c"}
    assert read_jsonl(tmp_path / "pages.jsonl") == [{"canonical_url": "http://h/a"}]
    assert read_jsonl(tmp_path / "structure.jsonl") == [{"canonical_url": "http://h/a"}]
    assert [c["id"] for c in read_jsonl(tmp_path / "chunks.jsonl")] == ["1"]


def test_replay_journal_and_changes(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    write_lines(journal, [
        {"kind": "offer", "url": "http://h/a", "depth": 2, "reason": "in_page"},
        {"kind": "claim", "track": {"url": "http://h/a", "key": "http://h/a"}},
        {"kind": "claim", "track": {"url": "http://h/t", "key": "http://h/t"},
         "inherited": True},
        {"kind": "group", "canonical": "http://h/a", "declared": False},
        {"kind": "rename", "old": "http://h/a", "new": "http://h/"},
    ])
    replay = replay_journal(journal)
    assert replay.offers["http://h/a"]["depth"] == 2
    assert set(replay.claims) == {"http://h/a", "http://h/t"}
    assert replay.inherited == {"http://h/t"}
    assert replay.renames == [("http://h/a", "http://h/")]
    assert replay.declared == {"http://h/a": False}
    changes = tmp_path / "changes.jsonl"
    write_lines(changes, [{"canonical_url": "http://h/a", "change": "added"},
                          {"canonical_url": "http://h/b", "change": "unchanged"}])
    reported, counts = reported_changes(changes)
    assert reported == {"http://h/a", "http://h/b"}
    assert counts == Counter({"added": 1, "unchanged": 1})


# ---- end to end ----------------------------------------------------------------------------


def make_site(root: Path) -> Path:
    site = root / "site"
    (site / "docs").mkdir(parents=True)
    for n in range(PAGES):
        (site / "docs" / f"p{n}.html").write_text(
            f"<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
            f"<h2>Intro {n}</h2><p>{f'Text of page {n}. ' * 40}</p>"
            f"<h2>More {n}</h2><p>{f'More about page {n}. ' * 60}</p>"
            f"<a href='p{(n + 1) % PAGES}.html'>next</a>"
            f"<a href='p{(n * 7) % PAGES}.html?utm_source=x'>jump</a>"
            f"<a href='p{(n * 13) % PAGES}.html'>other</a></main></body></html>",
            encoding="utf-8")
    (site / "docs" / "index.html").write_text(
        "<html><head><title>Docs</title></head><body><main><h1>Docs</h1>"
        "<p>Start reading the generated documentation here.</p>"
        "<a href='p0.html'>start</a></main></body></html>", encoding="utf-8")
    return site


def crawl_command(seed: str, out: Path, jobdir: Path) -> list[str]:
    return [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={seed}",
            "-a", f"out={out}", "-s", f"JOBDIR={jobdir}", "-s", "CONCURRENT_REQUESTS=1",
            "-s", "DOWNLOAD_DELAY=0.01", "-s", "LOG_LEVEL=INFO"]


def line_count(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n") if path.exists() else 0


def crawl_and_kill(command: list[str], out: Path, pages_at_least: int, *,
                   group: bool = True) -> list[int]:
    """Start a crawl and kill -9 its process group (or the crawler alone) once enough pages
    are written; the extraction workers (`-a workers=N`) it had then."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if line_count(out / CRAWLING / "pages.jsonl") >= pages_at_least:
                break
            time.sleep(0.02)
        assert process.poll() is None, "the crawl ended before it could be killed"
        workers = [pid for pid in _children(process.pid)
                   if b"docscrawl.crawl.pool" in _cmdline(pid)]
        if group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return workers


def _children(pid: int) -> list[int]:
    return [int(child) for task in Path(f"/proc/{pid}/task").glob("*/children")
            for child in task.read_text().split()]


def assert_everything_once(out: Path, result: subprocess.CompletedProcess[str]) -> None:
    output = CrawlOutput(out, result)
    assert output.run["status"] == "finished" and output.run["complete"], output.run
    canonicals = [p["canonical_url"] for p in output.pages]
    assert len(canonicals) == len(set(canonicals)), Counter(canonicals).most_common(3)
    expected = {f"p{n}.html" for n in range(PAGES)} | {""}
    assert {url.rsplit("/docs/", 1)[1] for url in canonicals} == expected
    assert len({p["id"] for p in output.pages}) == len(output.pages)
    chunks = read_jsonl(out / "chunks.jsonl")
    assert len({c["id"] for c in chunks}) == len(chunks)
    assert {c["metadata"]["canonical_url"] for c in chunks} == set(canonicals)
    structure = [s["canonical_url"] for s in read_jsonl(out / "structure.jsonl")]
    assert sorted(structure) == sorted(canonicals)
    assert output.run["pages_written"] == len(canonicals)
    assert output.run["chunks_written"] == len(chunks)
    assert_log_invariants(output)  # one terminal event per discovered URL; contract check
    outcomes = Counter(e["event"] for e in output.log
                       if e["event"] in {"extracted", "unchanged"})
    assert outcomes["extracted"] == len(canonicals)
    changes = read_jsonl(out / "changes.jsonl")
    assert sorted(c["canonical_url"] for c in changes) == sorted(canonicals)
    assert {c["change"] for c in changes} == {"added"}
    db = sqlite3.connect(out / "state.sqlite3")
    try:
        rows = db.execute("SELECT canonical_url, last_seen_run FROM pages").fetchall()
        runs = db.execute("SELECT run_id, finished_at, complete FROM runs").fetchall()
    finally:
        db.close()
    assert sorted(url for url, _ in rows) == sorted(canonicals)
    assert {seen for _, seen in rows} == {output.run["run_id"]}
    assert runs == [(output.run["run_id"], runs[0][1], 1)] and runs[0][1]


@pytest.mark.e2e
def test_kill_9_twice_then_resume_writes_every_page_once(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with StaticSite(site) as server:
        command = crawl_command(f"{server.url}/docs/", out, jobdir)
        crawl_and_kill(command, out, 20)
        first_run = json.loads((out / CRAWLING / "run.json").read_text(encoding="utf-8"))
        assert first_run["status"] == "running" and not first_run["resumed"]
        crawl_and_kill(command, out, line_count(out / CRAWLING / "pages.jsonl") + 40)
        killed = line_count(out / CRAWLING / "pages.jsonl")
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    assert killed < PAGES + 1
    assert_everything_once(out, result)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["resumed"] is True and run["resumes"] == 2
    assert run["run_id"] == first_run["run_id"]
    assert run["started_at"] == first_run["started_at"]
    assert "second terminal event" not in result.stderr


@pytest.mark.e2e
def test_resume_repairs_a_kill_between_the_files_and_the_state(tmp_path: Path) -> None:
    """A kill can fall between a page's lines and its crawl-log outcome, or between the
    outcome and its state row / changes line: the resume rolls back the first and brings
    the state up to date for the second."""
    site = make_site(tmp_path)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with StaticSite(site) as server:
        command = crawl_command(f"{server.url}/docs/", out, jobdir)
        crawl_and_kill(command, out, 20)
        live = out / CRAWLING  # the killed run, resumed below
        for name in ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                     "changes.jsonl"):
            cut_torn_tail(live / name)
        last = [e for e in read_jsonl(live / "crawl_log.jsonl") if e["event"] == "extracted"][-1]
        canonical = last["canonical_url"]
        db = sqlite3.connect(out / "state.sqlite3")
        with db:
            db.execute("DELETE FROM pages WHERE canonical_url = ?", (canonical,))
        db.close()
        changes = [c for c in read_jsonl(live / "changes.jsonl") if c["canonical_url"] != canonical]
        write_lines(live / "changes.jsonl", changes)
        # The kill itself may have left a page between its lines and its logged outcome
        # (the crawl is killed right after a pages line): those are rolled back too.
        logged = {e["canonical_url"] for e in read_jsonl(live / "crawl_log.jsonl")
                  if e["event"] in ("extracted", "unchanged") and e.get("canonical_url")}
        in_flight = {record.get("canonical_url") or record["metadata"]["canonical_url"]
                     for name in ("pages.jsonl", "structure.jsonl", "chunks.jsonl")
                     for record in read_jsonl(live / name)} - logged
        ghost = f"{server.url}/docs/p299.html"  # lines written, outcome never logged
        with (live / "pages.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(dumps_line({"canonical_url": ghost, "id": "sha256:x"}))
        with (live / "chunks.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(dumps_line({"id": "ghost", "metadata": {"canonical_url": ghost}}))
            handle.write('{"id": "torn", "metad')
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    assert "resume: state brought up to date for 1 page(s)" in result.stderr
    rolled_back = len(in_flight | {ghost})
    assert f"resume: {rolled_back} page(s) without a logged outcome" in result.stderr
    assert_everything_once(out, result)
    assert "ghost" not in {c["id"] for c in read_jsonl(out / "chunks.jsonl")}
    db = sqlite3.connect(out / "state.sqlite3")
    repaired = db.execute("SELECT structure_at, structure_len FROM pages"
                          " WHERE canonical_url = ?", (canonical,)).fetchone()
    db.close()  # the state points at the page's structure line in the published output
    assert repaired is not None and repaired[1]
    with (out / "structure.jsonl").open("rb") as handle:
        handle.seek(repaired[0])
        assert json.loads(handle.read(repaired[1]))["canonical_url"] == canonical


@pytest.mark.e2e
def test_ctrl_c_pauses_and_the_resume_uses_scrapys_queue(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with StaticSite(site) as server:
        command = crawl_command(f"{server.url}/docs/", out, jobdir)
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            live = out / CRAWLING / "pages.jsonl"
            while time.monotonic() < deadline and line_count(live) < 30:
                time.sleep(0.02)
            process.send_signal(signal.SIGINT)
        finally:
            process.wait(timeout=60)
        paused = json.loads((out / CRAWLING / "run.json").read_text(encoding="utf-8"))
        assert paused["status"] == "paused" and not paused["complete"]
        assert "crawl_closed" not in paused["counts"]["failure_reasons"]
        assert (jobdir / "requests.queue" / "active.json").exists()
        before = len(server.requests)
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        fetched = [path for _, path, *_ in server.requests[before:] if "/docs/p" in path]
    assert_everything_once(out, result)
    assert len(fetched) == len(set(fetched)), "a page was fetched twice after the pause"


@pytest.mark.e2e
def test_jobdir_after_a_finished_crawl_starts_a_new_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    for n in range(3):
        (site / "docs" / f"p{n}.html").write_text(
            f"<html><head><title>P{n}</title></head><body><main><h1>P{n}</h1>"
            f"<p>{f'Words of page {n}. ' * 30}</p><a href='p{(n + 1) % 3}.html'>n</a>"
            "</main></body></html>", encoding="utf-8")
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/p0.html"
        first = crawl(seed, out, settings={"JOBDIR": str(jobdir)})
        second = crawl(seed, out, settings={"JOBDIR": str(jobdir)})
    assert len(first.pages) == len(second.pages) == 3
    assert second.run["run_id"] != first.run["run_id"] and not second.run["resumed"]
    assert {c["change"] for c in read_jsonl(out / "changes.jsonl")} == {"unchanged"}
    assert_log_invariants(second)


@pytest.mark.e2e
def test_crawl_without_jobdir_overwrites_its_outputs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "docs" / "index.html").write_text(
        "<html><head><title>Only</title></head><body><main><h1>Only</h1>"
        f"<p>{'The only page of this site. ' * 30}</p></main></body></html>",
        encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    for name in ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                 "changes.jsonl"):
        (out / name).write_text('{"stale": true}\n{"torn', encoding="utf-8")
    with StaticSite(site) as server:
        first = crawl(f"{server.url}/docs/", out)
        second = crawl(f"{server.url}/docs/", out)
    for output in (first, second):
        assert len(output.pages) == 1
        assert not output.run["resumed"]
    for name in ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                 "changes.jsonl"):
        assert "stale" not in (out / name).read_text(encoding="utf-8")
    assert len(read_jsonl(out / "changes.jsonl")) == 1
    assert_log_invariants(second)


@pytest.mark.e2e
def test_kill_9_with_extraction_workers_then_resume_writes_every_page_once(
        tmp_path: Path) -> None:
    """`-a workers=1`: kill -9 of the crawler alone ends its worker too (the pipe closes),
    and the resumed crawl (with a new worker) writes every page once."""
    site = make_site(tmp_path)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with StaticSite(site) as server:
        command = [*crawl_command(f"{server.url}/docs/", out, jobdir), "-a", "workers=1"]
        workers = crawl_and_kill(command, out, 60, group=False)
        assert workers, "no extraction worker was running when the crawl was killed"
        deadline = time.monotonic() + 120  # a bound for a failure, not a timing
        for pid in workers:  # gone with its crawler, not left reading a dead socket
            while b"docscrawl.crawl.pool" in _cmdline(pid):
                assert time.monotonic() < deadline, f"worker {pid} outlived its crawler"
                time.sleep(0.05)
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    assert_everything_once(out, result)
    assert "'docscrawl/pages_in_workers'" in result.stderr
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["resumed"] is True and run["resumes"] == 1


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
