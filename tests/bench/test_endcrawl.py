"""The end-of-crawl benchmark (`benchmarks/scale/endcrawl.py`) runs the steps on a copy:
the output it is given is left as it was, and chunks.jsonl is put back as the crawl leaves
it before the inbound pass."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from docscrawl.export.inbound import add_inbound_links
from docscrawl.incremental.state import StateStore
from tests.export.test_linkgraph import _write_site

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "scale"))

import endcrawl  # noqa: E402


def _output(tmp_path: Path) -> Path:
    """A published output of 20 pages with their inbound links and a state."""
    out = tmp_path / "out"
    run = out / ".runs" / "run-a"
    run.mkdir(parents=True)
    _write_site(run, 20)
    add_inbound_links(run)
    (run / "structure.jsonl").write_text("", encoding="utf-8")
    os.symlink(".runs/run-a", out / "current")
    StateStore.open(out).close()
    return out


def _sums(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_stripped_chunks_get_the_same_lines_back(tmp_path: Path) -> None:
    run = _output(tmp_path) / "current"
    chunks = run / "chunks.jsonl"
    finished = chunks.read_bytes()
    endcrawl._strip_inbound(chunks)
    assert b"inbound" not in chunks.read_bytes()
    add_inbound_links(run.resolve())
    assert chunks.read_bytes() == finished


def test_the_steps_run_on_a_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _output(tmp_path)
    before = _sums(out)
    assert endcrawl.main([str(out), "--scratch", str(tmp_path / "scratch"),
                          "--steps", "inbound,index", "--cold", "0"]) == 0
    printed = capsys.readouterr().out
    assert "| inbound |" in printed and "| index |" in printed
    assert "sha256 chunks.jsonl: " + before[".runs/run-a/chunks.jsonl"][:16] in printed
    assert _sums(out) == before
    assert not (tmp_path / "scratch" / "copy-0").exists()
