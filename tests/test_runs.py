"""Run directories and the switch (`docscrawl.runs`), and output files that never write
through a link (`docscrawl.jsonl`), on the real file system."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docscrawl.jsonl import JsonlWriter, write_json_atomic
from docscrawl.runs import (
    CRAWLING,
    CURRENT,
    RUNS,
    RunDirError,
    new_run_dir,
    pin,
    pinned,
    publish,
    published_dir,
    release,
    remove_stale_runs,
    unfinished_dir,
)


def write_run(out: Path, text: str) -> Path:
    run = new_run_dir(out)
    for name in ("pages.jsonl", "chunks.jsonl"):
        (run / name).write_text(f'{{"{name}":"{text}"}}\n', encoding="utf-8")
    return run


def test_publish_switches_every_file_at_once_and_drops_the_previous_run(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_run(out, "one")
    assert unfinished_dir(out) == first and not (out / "pages.jsonl").exists()
    publish(out, first)
    assert published_dir(out) == first and unfinished_dir(out) is None
    second = write_run(out, "two")
    assert "one" in (out / "pages.jsonl").read_text()  # still the published run
    publish(out, second)
    assert {(out / n).read_text() for n in ("pages.jsonl", "chunks.jsonl")} == {
        '{"pages.jsonl":"two"}\n', '{"chunks.jsonl":"two"}\n'}
    assert not first.exists() and os.readlink(out / CURRENT) == f"{RUNS}/{second.name}"


def test_a_pinned_run_outlives_publishing_and_clean_up_until_released(
        tmp_path: Path) -> None:
    """The run a state reads lines from stays when another run is published over it
    (an inventory crawl's) and when a new crawl removes stale runs; released, it goes."""
    out = tmp_path / "out"
    first = write_run(out, "one")
    publish(out, first)
    pin(first)
    second = write_run(out, "two")
    publish(out, second)
    assert first.is_dir() and "two" in (out / "pages.jsonl").read_text()
    remove_stale_runs(out, keep=write_run(out, "three"))
    assert first.is_dir() and pinned(out) == [first.resolve()]
    release(first)
    assert not first.exists() and pinned(out) == []
    pin(second)
    release(second)  # the published run is unpinned but kept
    assert second.is_dir() and pinned(out) == []


def test_plain_files_of_an_older_docscrawl_are_adopted_then_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "pages.jsonl").write_text('{"old":1}\n', encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    run = write_run(out, "new")
    publish(out, run)
    assert (out / "pages.jsonl").is_symlink() and "new" in (out / "pages.jsonl").read_text()
    assert (out / "notes.txt").read_text() == "mine"
    assert [p.name for p in (out / RUNS).iterdir()] == [run.name]


def test_stale_runs_go_and_foreign_links_are_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    kept = write_run(out, "a")
    publish(out, kept)
    stale = write_run(out, "killed")
    assert remove_stale_runs(out) == [stale] and kept.exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / CRAWLING).unlink(missing_ok=True)
    (out / CRAWLING).symlink_to(elsewhere)
    assert unfinished_dir(out) is None
    (out / RUNS).rename(tmp_path / "moved")
    (out / RUNS).symlink_to(elsewhere)
    with pytest.raises(RunDirError, match="not a directory docscrawl made"):
        new_run_dir(out)
    assert list(elsewhere.iterdir()) == []


def test_output_files_never_write_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("precious\n", encoding="utf-8")
    (tmp_path / "crawl_log.jsonl").symlink_to(target)
    with pytest.raises(OSError, match="is a symlink"):
        JsonlWriter(tmp_path / "crawl_log.jsonl")
    (tmp_path / "run.json").symlink_to(target)
    write_json_atomic(tmp_path / "run.json", {"status": "running"})
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "run.json").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "crawl_log.jsonl", "run.json", "target.txt"]  # no temporary file left
