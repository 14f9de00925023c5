"""The crawl log keeps one terminal event per discovered URL and counts reasons."""

from __future__ import annotations

import json
from pathlib import Path

from docscrawl.crawllog import CrawlLog
from docscrawl.jsonl import JsonlWriter


def test_terminal_invariant_and_counts(tmp_path: Path) -> None:
    log = CrawlLog(JsonlWriter(tmp_path / "log.jsonl"))
    log.discovered("https://d.example/a", {"reason": "seed", "from": None})
    log.discovered("https://d.example/b", {"reason": "in_page", "from": "https://d.example/a"})
    assert log.record("https://d.example/a", "fetched", status=200)
    assert log.record("https://d.example/a", "extracted", status=200)
    assert not log.record("https://d.example/a", "failed", reason="http_500")
    log.record("https://d.example/b", "skipped", reason="robots", rule="Disallow: /b")
    log.discovered("https://d.example/c", {"reason": "in_page", "from": None})
    assert log.close_open("crawl_closed", "crawl ended first") == 1
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [e["event"] for e in lines] == ["discovered", "discovered", "fetched", "extracted",
                                          "skipped", "discovered", "failed"]
    summary = log.summary()
    assert summary["skip_reasons"] == {"robots": 1}
    assert summary["failure_reasons"] == {"crawl_closed": 1}
    assert summary["open_at_end"] == 0
    assert set(lines[0]) >= {"ts", "url", "event", "reason", "rule", "discovery", "status",
                             "redirect_chain", "fetch_mode", "parser", "duplicate_of",
                             "elapsed_ms", "bytes"}


def test_dumps_line_with_pre_encoded_values_is_the_same_line() -> None:
    from docscrawl.jsonl import dumps_line, dumps_value

    shared = [{"url": "https://d.example/ü", "text": 'say "hi"\n'}]
    record = {"id": "p", "links": shared, "n": 1.5, "none": None, "nested": {"a": [1]}}
    encoded = {"links": dumps_value(shared)}
    assert dumps_line(record, encoded) == dumps_line(record)
    assert json.loads(dumps_line(record, encoded)) == record
