"""`-a compress=gzip`: the published files are .jsonl.gz, read by every docscrawl command,
the search index and the loaders; a re-crawl, a resume and a truncated file behave."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docscrawl.runs import published_dir
from docscrawl.search.loaders import iter_chunks
from docscrawl.vocab import OUTPUT_FILES
from tests.conftest import ROOT, SITES, assert_log_invariants, crawl, plain_copy, read_jsonl
from tests.e2e.test_resume import (
    assert_everything_once,
    crawl_and_kill,
    crawl_command,
    line_count,
    make_site,
)

pytestmark = pytest.mark.e2e


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_gzip_output_is_read_by_every_command_and_recrawled(demo_site, tmp_path: Path) -> None:
    seed = f"{demo_site.url}/docs/"
    out = tmp_path / "gz"
    zipped = crawl(seed, out, "compress=gzip")
    run = published_dir(out)
    names = {p.name for p in run.glob("*.jsonl*")}
    assert names == {f"{name}.gz" for name in OUTPUT_FILES} & names  # every one compressed
    assert {"pages.jsonl.gz", "chunks.jsonl.gz", "structure.jsonl.gz", "crawl_log.jsonl.gz",
            "changes.jsonl.gz"} <= names
    assert (out / "pages.jsonl.gz").is_file() and not (out / "pages.jsonl").exists()
    assert zipped.run["arguments"]["compress"] == "gzip"
    assert len(zipped.pages) == 11  # every page of the demo site, decompressed
    assert_log_invariants(zipped)  # the contract, on the decompressed files
    plain = plain_copy(out)
    assert (plain / "pages.jsonl").is_file()
    for command in ("summary", "log", "check", "why"):  # the same answers as plain files
        extra = {"why": [seed, "--json"], "summary": []}.get(command, ["--json"])
        result = docscrawl(command, str(out), *extra)
        expected = docscrawl(command, str(plain), *extra)
        assert result.returncode == expected.returncode, (command, result.stderr[-500:])
        assert "Traceback" not in result.stderr and len(result.stdout) > 20
        if command != "summary":  # (summary names the folder's files)
            assert result.stdout == expected.stdout.replace(str(plain), str(out)), command
    found = docscrawl("search", str(out), "configure workers", "--json")
    assert found.returncode == 0, found.stderr[-800:]
    assert found.stdout == docscrawl("search", str(plain), "configure workers",
                                     "--json").stdout
    assert len(list(iter_chunks(out))) == len(read_jsonl(plain / "chunks.jsonl")) > 0

    again = crawl(seed, out, "compress=gzip")  # incremental: every page carried over
    assert again.run["counts"]["events"].get("extracted", 0) == 0
    assert again.run["counts"]["events"]["unchanged"] == len(zipped.pages)
    assert {c["change"] for c in read_jsonl(out / "changes.jsonl")} == {"unchanged"}
    assert not (published_dir(out) / "pages.jsonl").exists()
    assert_log_invariants(again)
    assert docscrawl("search", str(out), "configure workers").returncode == 0


def test_truncated_gzip_is_one_line_naming_the_file(tmp_path: Path) -> None:
    from docscrawl.demo.server import StaticSite

    out = tmp_path / "out"
    with StaticSite(SITES / "demo") as server:
        crawl(f"{server.url}/docs/", out, "compress=gzip")
    chunks = published_dir(out) / "chunks.jsonl.gz"
    data = chunks.read_bytes()
    chunks.write_bytes(data[: len(data) // 2])
    for args in (["check", str(out)], ["search", str(out), "configure workers"]):
        result = docscrawl(*args)
        assert result.returncode != 0, args
        lines = [line for line in result.stderr.splitlines() if "chunks.jsonl.gz" in line]
        assert len(lines) == 1 and "truncated or corrupt gzip" in lines[0], result.stderr
        assert "Traceback" not in result.stderr
    assert docscrawl("summary", str(out)).returncode == 0  # the other files still read
    assert len(read_jsonl(out / "pages.jsonl")) > 0


def test_gzip_crawl_killed_and_resumed_writes_every_page_once(tmp_path: Path) -> None:
    from docscrawl.demo.server import StaticSite

    site = make_site(tmp_path)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with StaticSite(site) as server:
        command = [*crawl_command(f"{server.url}/docs/", out, jobdir), "-a", "compress=gzip"]
        crawl_and_kill(command, out, 20)
        assert line_count(out / ".crawling" / "pages.jsonl") >= 20  # written plain
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    assert (published_dir(out) / "pages.jsonl.gz").is_file()
    assert_everything_once(out, result)
