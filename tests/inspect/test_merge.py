"""`docscrawl merge`: part outputs of several workers into one contract-valid output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docscrawl.inspect.merge import merge_outputs
from docscrawl.inspect.output import OutputDir
from tests.conftest import CONTRACT_CHECK
from tests.inspect.conftest import docscrawl, event, page

SITE = "http://docs.example/v2/"


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def contract_holds(out: Path) -> None:
    if CONTRACT_CHECK.exists():
        check = subprocess.run([sys.executable, str(CONTRACT_CHECK), str(out)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout


def terminal_counts(log: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in log:
        if line["event"] in {"extracted", "duplicate", "unchanged", "skipped", "failed"}:
            counts[line["url"]] = counts.get(line["url"], 0) + 1
    return counts


@pytest.mark.e2e
def test_merging_two_copies_of_a_crawl_keeps_every_page_once(
    demo_out: Path, tmp_path: Path,
) -> None:
    part_b = tmp_path / "worker-b"
    shutil.copytree(demo_out, part_b)
    merged = tmp_path / "merged"
    result = docscrawl("merge", str(demo_out), str(part_b), "-o", str(merged))
    assert result.returncode == 0, result.stderr
    pages = read(merged / "pages.jsonl")
    assert sorted(p["canonical_url"] for p in pages) == sorted(
        p["canonical_url"] for p in read(demo_out / "pages.jsonl"))
    log = read(merged / "crawl_log.jsonl")
    discovered = [e["url"] for e in log if e["event"] == "discovered"]
    assert len(discovered) == len(set(discovered))
    assert all(terminal_counts(log).get(url) == 1 for url in discovered)
    timestamps = [e["ts"] for e in log]
    assert timestamps == sorted(timestamps)
    assert {e["part"] for e in log if e["event"] == "fetched"} == {"out", "worker-b"}
    run = json.loads((merged / "run.json").read_text())
    assert run["pages_written"] == len(pages) and run["complete"] is True
    assert len(run["merged_from"]) == 2
    contract_holds(merged)
    assert docscrawl("log", str(merged)).returncode == 0


def test_pages_deduplicated_by_canonical_url_and_content_hash(make_output, tmp_path) -> None:
    a_page = page(f"{SITE}a.html")
    same_canonical = page(f"{SITE}a.html", observed_urls=[f"{SITE}a.html", f"{SITE}a.html?x=1"],
                          discovery=[{"reason": "sidebar", "from": f"{SITE}c.html"}])
    same_content = page(f"{SITE}b.html", content_hash=a_page["content_hash"])
    c_page = page(f"{SITE}c.html")
    part1 = make_output("w1", pages=[a_page], log=[
        event(f"{SITE}a.html", "discovered", "2026-01-01T00:00:01.000Z",
              discovery={"reason": "seed", "from": None}),
        event(f"{SITE}a.html", "extracted", "2026-01-01T00:00:03.000Z", page_id=a_page["id"]),
        event(f"{SITE}d.html", "discovered", "2026-01-01T00:00:04.000Z",
              discovery={"reason": "in_page", "from": f"{SITE}a.html"}),
    ], chunks=[{"id": "ch-a", "page_id": a_page["id"], "text": "t", "markdown": "t",
                "metadata": {}}],
        run={"started_at": "2026-01-01T00:00:00.000Z", "complete": True})
    part2 = make_output("w2", pages=[same_canonical, same_content, c_page], log=[
        event(f"{SITE}a.html", "discovered", "2026-01-01T00:00:02.000Z",
              discovery={"reason": "sidebar", "from": f"{SITE}c.html"}),
        event(f"{SITE}a.html", "extracted", "2026-01-01T00:00:02.500Z",
              page_id=same_canonical["id"]),
        event(f"{SITE}b.html", "discovered", "2026-01-01T00:00:02.600Z",
              discovery={"reason": "sidebar", "from": f"{SITE}c.html"}),
        event(f"{SITE}b.html", "extracted", "2026-01-01T00:00:02.700Z",
              page_id=same_content["id"]),
        event(f"{SITE}c.html", "discovered", "2026-01-01T00:00:02.800Z",
              discovery={"reason": "seed", "from": None}),
        event(f"{SITE}c.html", "extracted", "2026-01-01T00:00:02.900Z", page_id=c_page["id"]),
        event(f"{SITE}d.html", "discovered", "2026-01-01T00:00:05.000Z",
              discovery={"reason": "in_page", "from": f"{SITE}c.html"}),
        event(f"{SITE}d.html", "failed", "2026-01-01T00:00:06.000Z", reason="http_404",
              status=404),
    ], chunks=[{"id": "ch-b", "page_id": same_content["id"], "text": "t", "markdown": "t",
                "metadata": {}},
               {"id": "ch-c", "page_id": c_page["id"], "text": "t", "markdown": "t",
                "metadata": {}}])
    dest = tmp_path / "merged"
    run = merge_outputs([OutputDir(part1), OutputDir(part2)], dest)
    pages = read(dest / "pages.jsonl")
    assert [p["canonical_url"] for p in pages] == [f"{SITE}a.html", f"{SITE}c.html"]
    kept = pages[0]
    assert set(kept["observed_urls"]) == {f"{SITE}a.html", f"{SITE}a.html?x=1", f"{SITE}b.html"}
    assert {"reason": "sidebar", "from": f"{SITE}c.html"} in kept["discovery"]
    assert [c["id"] for c in read(dest / "chunks.jsonl")] == ["ch-a", "ch-c"]
    log = read(dest / "crawl_log.jsonl")
    assert [e["ts"] for e in log] == sorted(e["ts"] for e in log)
    a_events = [(e["event"], e["part"]) for e in log if e["url"] == f"{SITE}a.html"]
    # discovered first by w1 (t=1), w2's extraction at 2.5 is a copy of w1's page
    assert a_events[0] == ("discovered", "w1")
    assert [k for k, _ in a_events].count("extracted") == 1
    b_terminal = [e for e in log if e["url"] == f"{SITE}b.html" and e["event"] != "discovered"]
    assert b_terminal[0]["event"] == "duplicate"
    assert b_terminal[0]["duplicate_of"] == f"{SITE}a.html"
    d_events = [(e["event"], e.get("reason")) for e in log if e["url"] == f"{SITE}d.html"]
    assert d_events == [("discovered", None), ("failed", "http_404")]
    assert run["counts"]["events"]["discovered"] == 4
    assert run["pages_written"] == 2 and run["chunks_written"] == 2


def test_url_left_open_by_a_killed_worker_ends_crawl_closed(make_output, tmp_path) -> None:
    part1 = make_output("w1", log=[event(f"{SITE}x.html", "discovered",
                                         discovery={"reason": "seed", "from": None})],
                        run={"status": "running", "complete": False})
    part2 = make_output("w2", log=[event(f"{SITE}y.html", "discovered",
                                         discovery={"reason": "seed", "from": None}),
                                   event(f"{SITE}y.html", "failed", reason="crawl_closed",
                                         rule="crawl ended first")])
    part3 = make_output("w3", log=[event(f"{SITE}y.html", "discovered",
                                         discovery={"reason": "seed", "from": None}),
                                   event(f"{SITE}y.html", "failed", reason="http_500",
                                         status=500)])
    dest = tmp_path / "merged"
    run = merge_outputs([OutputDir(part1), OutputDir(part2), OutputDir(part3)], dest)
    log = read(dest / "crawl_log.jsonl")
    ends = {e["url"]: e["reason"] for e in log if e["event"] == "failed"}
    assert ends == {f"{SITE}x.html": "crawl_closed", f"{SITE}y.html": "http_500"}
    assert run["complete"] is False


def test_merge_refuses_a_non_empty_destination(make_output, tmp_path) -> None:
    part = make_output("w1", log=[])
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    result = docscrawl("merge", str(part), "-o", str(dest))
    assert result.returncode == 2 and "not empty" in result.stderr
    assert docscrawl("merge", str(part), "-o", str(dest), "--force").returncode == 0
    assert (dest / "keep.txt").read_text() == "x"  # --force replaces the output only
    assert len(read(dest / "pages.jsonl")) == len(read(part / "pages.jsonl"))
    result = docscrawl("merge", str(part), str(tmp_path / "missing"), "-o", str(dest), "--force")
    assert result.returncode == 2 and "no such output directory" in result.stderr


@pytest.mark.e2e
def test_merge_refuses_a_destination_that_is_holds_or_lies_in_a_part(
    demo_out: Path, tmp_path: Path,
) -> None:
    """`merge OUT/part-1 -o OUT --force` deleted its own input and exited 0."""
    out = tmp_path / "OUT"
    part = out / "part-1"
    shutil.copytree(demo_out, part, symlinks=True)
    before = {path.relative_to(out): path.read_bytes()
              for path in out.rglob("*") if path.is_file() and not path.is_symlink()}
    for dest, says in ((out, "contains part"), (part, "is also one of the parts"),
                       (part / "merged", "is inside part")):
        result = docscrawl("merge", str(part), "-o", str(dest), "--force")
        assert result.returncode == 2, (dest, result.stderr)
        assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    after = {path.relative_to(out): path.read_bytes()
             for path in out.rglob("*") if path.is_file() and not path.is_symlink()}
    assert after == before
    assert len(read(part / "pages.jsonl")) == len(read(demo_out / "pages.jsonl"))


@pytest.mark.e2e
def test_merging_two_real_worker_parts_covers_the_site_once(
    demo_site, demo_out: Path, tmp_path: Path,
) -> None:
    from tests.conftest import crawl

    site = f"{demo_site.url}/docs/"
    settings = {"DOWNLOAD_MAXSIZE": "100000"}
    part_a = crawl(site, tmp_path / "worker-a", "deny=/docs/api/", settings=settings).out
    part_b = crawl(site, tmp_path / "worker-b", "deny=/docs/guide/", settings=settings).out
    merged = tmp_path / "merged"
    result = docscrawl("merge", str(part_a), str(part_b), "-o", str(merged))
    assert result.returncode == 0, result.stderr
    pages = [p["canonical_url"] for p in read(merged / "pages.jsonl")]
    assert len(pages) == len(set(pages))
    full = {p["canonical_url"] for p in read(demo_out / "pages.jsonl")}
    assert set(pages) == full
    log = read(merged / "crawl_log.jsonl")
    client = [e for e in log if e["url"] == f"{site}api/client.html"
              and e["event"] in {"extracted", "skipped", "duplicate", "failed", "unchanged"}]
    assert [(e["event"], e["part"]) for e in client] == [("extracted", "worker-b")]
    contract_holds(merged)
    check = docscrawl("check", str(merged))
    assert check.returncode == 0, check.stdout


@pytest.mark.e2e
def test_a_page_a_killed_worker_wrote_without_its_chunks_is_taken_from_another_part(
    demo_out: Path, tmp_path: Path,
) -> None:
    """kill -9 between a page's pages line and its chunk lines and `extracted` event: the
    page is fetched again by another worker; the merge keeps that worker's whole record,
    not the killed part's record without chunks (first listed, so otherwise kept)."""
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    shutil.copytree(demo_out, killed)
    shutil.copytree(demo_out, whole)
    files = OutputDir(killed).files
    log = read(files / "crawl_log.jsonl")
    last = max(i for i, e in enumerate(log) if e["event"] == "extracted")
    victim = log[last]["canonical_url"]
    del log[last:]  # killed before its event; nothing after it was written
    chunks = read(files / "chunks.jsonl")
    assert any(c["metadata"]["canonical_url"] == victim for c in chunks)
    for name, records in (("crawl_log.jsonl", log), ("chunks.jsonl", [
            c for c in chunks if c["metadata"]["canonical_url"] != victim])):
        (files / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    run = json.loads((files / "run.json").read_text())
    (files / "run.json").write_text(json.dumps({**run, "status": "running"}))

    merged = tmp_path / "merged"
    result = docscrawl("merge", str(killed), str(whole), "-o", str(merged))
    assert result.returncode == 0, result.stderr
    assert "killed died; 1 page record(s) without a logged outcome left out" in result.stderr
    want = read(demo_out / "chunks.jsonl")
    got = read(merged / "chunks.jsonl")
    assert len(got) == len(want)
    assert sorted(c["id"] for c in got) == sorted(c["id"] for c in want)
    assert json.loads((merged / "run.json").read_text())["chunks_written"] == len(want)
    pages = [p["canonical_url"] for p in read(merged / "pages.jsonl")]
    assert pages.count(victim) == 1
    contract_holds(merged)


def test_a_dead_part_keeps_pages_renamed_before_its_log_was(make_output, tmp_path) -> None:
    """Killed at the end of its crawl between rewriting pages.jsonl with a better canonical
    URL and rewriting its log: the renamed record still has its logged outcome (under the
    URL it was fetched at), so it is kept; a record with no outcome at all is not."""
    renamed = page(f"{SITE}b.html", fetched_url=f"{SITE}a.html", final_url=f"{SITE}a.html",
                   observed_urls=[f"{SITE}a.html", f"{SITE}b.html"])
    unlogged = page(f"{SITE}c.html")
    part = make_output("w1", pages=[renamed, unlogged], log=[
        event(f"{SITE}a.html", "discovered", "2026-01-01T00:00:01.000Z",
              discovery={"reason": "seed", "from": None}),
        event(f"{SITE}a.html", "extracted", "2026-01-01T00:00:02.000Z",
              page_id=page(f"{SITE}a.html")["id"], canonical_url=f"{SITE}a.html"),
        event(f"{SITE}c.html", "discovered", "2026-01-01T00:00:03.000Z",
              discovery={"reason": "in_page", "from": f"{SITE}a.html"}),
    ], chunks=[{"id": "ch-b", "page_id": renamed["id"], "text": "t", "markdown": "t",
                "metadata": {"canonical_url": f"{SITE}b.html"}},
               {"id": "ch-c", "page_id": unlogged["id"], "text": "t", "markdown": "t",
                "metadata": {"canonical_url": f"{SITE}c.html"}}],
        run={"status": "running", "complete": False})
    dest = tmp_path / "merged"
    run = merge_outputs([OutputDir(part)], dest)
    pages = read(dest / "pages.jsonl")  # its canonical URL is the merge's own choice
    assert len(pages) == 1 and {f"{SITE}a.html", f"{SITE}b.html"} <= set(pages[0]["observed_urls"])
    assert [(c["id"], c["page_id"]) for c in read(dest / "chunks.jsonl")] == [
        ("ch-b", pages[0]["id"])]
    ends = {e["url"]: (e["event"], e["reason"]) for e in read(dest / "crawl_log.jsonl")
            if e["event"] in ("extracted", "failed")}
    assert ends == {f"{SITE}a.html": ("extracted", None),
                    f"{SITE}c.html": ("failed", "crawl_closed")}
    assert run["pages_written"] == 1 and run["complete"] is False
