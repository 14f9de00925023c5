"""benchmarks/bytes.py on a real crawl: the figures of an output and, with `--as-gzip`,
of the same output as `compress=gzip` publishes it (a compressed copy; the output itself
left as it was)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bytes as bytes_bench
from docscrawl.demo.server import StaticSite
from docscrawl.runs import published_dir
from docscrawl.search import SearchIndex
from tests.conftest import crawl


def test_as_gzip_measures_a_compressed_copy_of_the_output(
        demo_site: StaticSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    crawl(f"{demo_site.url}/docs/", out)
    run = published_dir(out)
    before = {p.name: p.stat().st_size for p in run.iterdir()}
    plain = bytes_bench.measure(out)
    packed = bytes_bench.measure_gzipped(out)
    assert {p.name: p.stat().st_size for p in run.iterdir()} == before  # untouched
    assert plain["html"] == packed["html"] > 0 and plain["pages"] == packed["pages"]
    for name in ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl"):
        assert name in plain["files"] and name + ".gz" in packed["files"]
        assert packed["files"][name + ".gz"] < plain["files"][name] / 2
    assert packed["fields"] == plain["fields"]  # the same records, read through gzip
    assert bytes_bench.main(["--outputs", str(tmp_path), "--as-gzip", "demo"]) == 0
    assert "pages.jsonl.gz" in capsys.readouterr().out


def test_index_parts_are_the_index_per_chunk(
        demo_site: StaticSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    crawl(f"{demo_site.url}/docs/", out)
    SearchIndex.open(out, embedder="none").close()
    parts = bytes_bench.index_parts(out)
    per, chunks = parts["per_chunk"], parts["chunks"]
    assert chunks > 1 and per["chunk rows"] > per["of chunk rows: the FTS rows"] > 0
    assert per["FTS index"] > 0 and "vector files" not in per  # no embedder, no files
    tables = sum(size for name, size in per.items() if name != "of chunk rows: the FTS rows")
    size = (out / "search.sqlite3").stat().st_size
    assert size * 0.8 <= tables * chunks <= size + len(per) * chunks  # every page, rounded
    assert not (out / "search.sqlite3-shm").exists()  # nothing left beside it to count
    figures = bytes_bench.measure(out)
    state = sum(figures["state"].values())
    assert state and figures["ratio_no_index"] == round(
        (figures["output"] + state) / figures["html"], 2) < figures["ratio_all"]
    assert bytes_bench.main(["--outputs", str(tmp_path), "--index-parts", "demo"]) == 0
    assert "index per chunk" in capsys.readouterr().out
