"""The state database is no second copy of the output: an unchanged page is carried over
from its lines in the previous published run (plain or gzip), located by the state; lines
that cannot be read as the page (a run gone, a line changed) make it extracted again, and
a kill -9 during a re-crawl loses nothing. Real crawls of a real HTTP server."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.export.templates import TemplateLinks
from docscrawl.incremental.carry import FILES
from docscrawl.incremental.state import DB_NAME
from docscrawl.runs import CRAWLING, CURRENT
from tests.conftest import ROOT, SITES, CrawlOutput, assert_log_invariants, crawl, read_jsonl
from tests.e2e.test_resume import crawl_and_kill, line_count, make_site

pytestmark = pytest.mark.e2e


def lines(out: Path, name: str) -> list[bytes]:
    """The published lines of one output file, sorted."""
    return sorted((out / name).read_bytes().splitlines(keepends=True))


def chunks_of(out: Path) -> list[dict]:
    """The published chunks by id, without the inbound links each crawl computes again
    at its end over the whole site (their order follows the crawl's page order)."""
    chunks = read_jsonl(out / "chunks.jsonl")
    for chunk in chunks:
        chunk["metadata"].pop("inbound_links", None)
    return sorted(chunks, key=lambda chunk: chunk["id"])


def state_rows(state: Path) -> list[tuple]:
    db = sqlite3.connect(state / DB_NAME)
    try:
        return db.execute("SELECT canonical_url, page_record, chunk_records, structure_record,"
                          " source FROM pages").fetchall()
    finally:
        db.close()


def events(output: CrawlOutput) -> dict[str, int]:
    return output.run["counts"]["events"]


def test_state_holds_no_copy_and_unchanged_pages_come_from_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with StaticSite(SITES / "demo") as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        rows = state_rows(out)
        assert len(rows) == len(first.pages)
        assert all(copy is None for row in rows for copy in row[1:4])  # no copy of a line
        assert all(row[4] is not None for row in rows)  # each points at the output
        written = {name: lines(out, name) for name in FILES}
        first_chunks = chunks_of(out)
        markdown = first.pages[0]["markdown"][:200].encode()
        assert markdown and markdown not in (out / DB_NAME).read_bytes()

        second = crawl(seed, out)
        assert events(second).get("extracted", 0) == 0
        assert events(second)["unchanged"] == len(first.pages)
        assert lines(out, "structure.jsonl") == written["structure.jsonl"]  # byte for byte
        assert chunks_of(out) == first_chunks
        assert sorted(p["id"] for p in second.pages) == sorted(p["id"] for p in first.pages)
        assert_log_invariants(second)

        # The published run compressed since (`.jsonl.gz`): still read through.
        run = (out / CURRENT).resolve()
        for name in FILES:
            with (run / name).open("rb") as src, gzip.open(run / f"{name}.gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            (run / name).unlink()
        third = crawl(seed, out)
    assert events(third).get("extracted", 0) == 0
    assert events(third)["unchanged"] == len(first.pages)
    assert lines(out, "structure.jsonl") == written["structure.jsonl"]
    assert chunks_of(out) == first_chunks
    assert not list(out.glob(".carry-*"))  # the scratch copies are gone
    assert {c["change"] for c in read_jsonl(out / "changes.jsonl")} == {"unchanged"}


def test_lines_changed_or_gone_make_the_page_extracted_again(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with StaticSite(SITES / "demo") as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        chunks = (out / CURRENT).resolve() / "chunks.jsonl"
        data = chunks.read_bytes()
        assert b"Worker processes" in data
        chunks.write_bytes(data.replace(b"Worker processes", b"Worker Processes"))  # same size

        second = crawl(seed, out)
        configure = [e["event"] for e in second.log
                     if e.get("canonical_url") == f"{server.url}/docs/guide/configure.html"]
        assert configure == ["extracted"]  # its 304 was fetched again in full
        assert events(second)["unchanged"] == len(first.pages) - 1
        assert b"Worker processes" in (out / "chunks.jsonl").read_bytes()
        assert b"Worker Processes" not in (out / "chunks.jsonl").read_bytes()
        assert {c["change"] for c in read_jsonl(out / "changes.jsonl")} == {"unchanged"}
        assert "changed since it was published" in second.result.stderr
        assert_log_invariants(second)

        shutil.rmtree((out / CURRENT).resolve())  # the published run deleted by hand
        third = crawl(seed, out)
    assert events(third).get("unchanged", 0) == 0
    assert events(third)["extracted"] == len(first.pages) == len(third.pages)
    assert "is gone: its unchanged pages are extracted again" in third.result.stderr
    # Extracted afresh, the same contents (which of a page's copies in three versions
    # names it follows the order of the responses, as in any first crawl).
    assert {p["content_hash"] for p in third.pages} == {p["content_hash"] for p in first.pages}
    assert_log_invariants(third)


def test_schema_3_state_is_carried_over_from_its_copies_then_dropped(tmp_path: Path) -> None:
    """A state written before schema 4 holds a copy of every line: the first crawl after
    the upgrade carries unchanged pages over from it (even with the old output gone),
    then points the state at its own output and gives the copies' space back."""
    out = tmp_path / "out"
    with StaticSite(SITES / "demo") as server:
        seed = f"{server.url}/docs/"
        first = crawl(seed, out)
        first_structure = joined(out, "structure.jsonl")
        first_chunks = chunks_of(out)
        _back_to_schema_3(out)
        shutil.rmtree((out / CURRENT).resolve())  # only the copies are left
        old_size = (out / DB_NAME).stat().st_size

        second = crawl(seed, out)
        assert events(second).get("extracted", 0) == 0
        assert events(second)["unchanged"] == len(first.pages)
        assert joined(out, "structure.jsonl") == first_structure
        assert chunks_of(out) == first_chunks
        assert all(row[1] is None and row[4] is not None for row in state_rows(out)), [
            (row[0], row[1] is None, row[4]) for row in state_rows(out)]
        assert (out / DB_NAME).stat().st_size < old_size / 2
        third = crawl(seed, out)
    assert events(third)["unchanged"] == len(first.pages)
    assert chunks_of(out) == first_chunks


def joined(out: Path, name: str) -> list[dict]:
    """The records of one output file with their template links joined back."""
    blocks = TemplateLinks((out / CURRENT).resolve())
    records = [blocks.join(record) for record in read_jsonl(out / name)]
    return sorted(records, key=lambda record: record["canonical_url"])  # response order


def _inline(line: bytes, blocks: TemplateLinks) -> str:
    """A record line as a docscrawl before templates.jsonl wrote it: every link inline."""
    return json.dumps(blocks.join(json.loads(line)), ensure_ascii=False, separators=(",", ":"))


def _back_to_schema_3(state: Path) -> None:
    """The state as docscrawl's schema 3 wrote it: each row with a copy of its lines
    (written before templates.jsonl existed: their links inline)."""
    run = (state / CURRENT).resolve()
    files = {name: (run / name).read_bytes() for name in FILES}
    blocks = TemplateLinks(run)
    db = sqlite3.connect(state / DB_NAME)
    rows = db.execute("SELECT canonical_url, page_at, page_len, structure_at, structure_len,"
                      " chunks_at, chunks_len FROM pages").fetchall()
    for url, p_at, p_len, s_at, s_len, c_at, c_len in rows:
        copies = (_inline(files["pages.jsonl"][p_at:p_at + p_len], blocks),
                  files["chunks.jsonl"][c_at:c_at + c_len].decode(),
                  _inline(files["structure.jsonl"][s_at:s_at + s_len], blocks))
        db.execute("UPDATE pages SET page_record = ?, chunk_records = ?, structure_record = ?,"
                   " discovery_links = ? WHERE canonical_url = ?", (
                       *copies, _links_text(db, url), url))
    db.execute("DROP TABLE sources")
    for column in ("source", "page_at", "page_len", "structure_at", "structure_len",
                   "chunks_at", "chunks_len", "lines_crc"):
        db.execute(f"ALTER TABLE pages DROP COLUMN {column}")
    db.execute("UPDATE docscrawl_schema SET version = 3")
    db.commit()
    db.execute("VACUUM")
    db.close()


def _links_text(db: sqlite3.Connection, url: str) -> str:
    """Schema 3 kept discovery links as JSON text."""
    stored = db.execute("SELECT discovery_links FROM pages WHERE canonical_url = ?",
                        (url,)).fetchone()[0]
    return zlib.decompress(stored).decode()


@pytest.mark.parametrize("jobdir", [False, True])
def test_kill_9_during_a_recrawl_loses_nothing(tmp_path: Path, jobdir: bool) -> None:
    """A re-crawl killed (SIGKILL) midway: the previous run stays published, byte for
    byte, and the state still reads its lines; the next crawl (a new run, or the resumed
    JOBDIR run) ends with every page once, the edited one as edited."""
    site = make_site(tmp_path)
    out, job = tmp_path / "out", tmp_path / "job"
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", "site=SEED",
               "-a", f"out={out}", "-s", "CONCURRENT_REQUESTS=1", "-s", "LOG_LEVEL=INFO",
               "-s", "DOWNLOAD_DELAY=0.02"]
    with StaticSite(site) as server:
        command[command.index("site=SEED")] = f"site={server.url}/docs/"
        first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        published = {name: (out / name).read_bytes() for name in FILES}
        edited = site / "docs" / "p150.html"
        edited.write_text(edited.read_text().replace("More about page 150.",
                                                     "Changed text of 150."))
        later = os.stat(edited).st_mtime + 10
        os.utime(edited, (later, later))
        if jobdir:
            command += ["-s", f"JOBDIR={job}"]
        crawl_and_kill(command, out, 200)
        assert line_count(out / CRAWLING / "pages.jsonl") >= 200
        for name in FILES:  # the previous run is still what readers read
            assert (out / name).read_bytes() == published[name]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    output = CrawlOutput(out, result)
    assert output.run["status"] == "finished" and output.run["complete"]
    assert output.run["resumed"] is jobdir
    canonicals = [p["canonical_url"] for p in output.pages]
    assert len(canonicals) == len(set(canonicals)) == 301
    chunks = read_jsonl(out / "chunks.jsonl")
    assert len({c["id"] for c in chunks}) == len(chunks)
    assert {c["metadata"]["canonical_url"] for c in chunks} == set(canonicals)
    text = (out / "chunks.jsonl").read_text(encoding="utf-8")
    assert "Changed text of 150." in text and "More about page 150." not in text
    assert _others((out / "structure.jsonl").read_bytes()) == _others(
        published["structure.jsonl"])  # the pages carried over: their lines as they were
    changes = read_jsonl(out / "changes.jsonl")
    assert sorted(c["canonical_url"] for c in changes) == sorted(canonicals)
    assert not [e for e in output.log if e["event"] == "failed"]
    assert_log_invariants(output)


def _others(data: bytes) -> list[bytes]:
    """The structure lines of every page but the edited one, sorted."""
    return sorted(line for line in data.splitlines() if b"/p150.html" not in line[:400])
