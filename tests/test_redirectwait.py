"""Redirect sources end with their target's outcome (docscrawl.redirects, CrawlLog)."""

from __future__ import annotations

import json
from pathlib import Path

from docscrawl.crawl.crawllog import CrawlLog
from docscrawl.jsonl import JsonlWriter

SITE = "http://docs.example/"


def _log(tmp_path: Path) -> tuple[CrawlLog, Path]:
    path = tmp_path / "crawl_log.jsonl"
    return CrawlLog(JsonlWriter(path)), path


def _terminal(log: CrawlLog, path: Path) -> dict[str, dict]:
    log.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {e["url"]: e for e in lines if e["event"] not in ("discovered", "fetched")}


def test_a_source_waits_for_its_page_and_then_points_at_it(tmp_path: Path) -> None:
    log, path = _log(tmp_path)
    a, b, c = SITE + "a", SITE + "b", SITE + "c"
    for url in (a, b, c):
        log.discovered(url, {"reason": "seed", "from": None})
    log.redirected(a, b, reason="redirect", status=301, chain=(a,))
    log.redirected(b, c, reason="redirect", status=302, chain=(a, b))
    assert log.is_open(a) and log.is_open(b)  # nothing ends before the page does
    log.record(c, "extracted", canonical_url=SITE + "c/")
    ended = _terminal(log, path)
    assert ended[a]["duplicate_of"] == ended[b]["duplicate_of"] == SITE + "c/"
    assert ended[a]["redirect_chain"] == [a]


def test_a_failure_goes_back_along_the_chain(tmp_path: Path) -> None:
    log, path = _log(tmp_path)
    a, b = SITE + "a", SITE + "b"
    for url in (a, b):
        log.discovered(url, {"reason": "seed", "from": None})
    log.redirected(a, b, reason="redirect", status=301, chain=(a,))
    log.record(b, "failed", reason="http_404", status=404)
    ended = _terminal(log, path)
    assert (ended[a]["event"], ended[a]["reason"], ended[a]["status"]) == (
        "failed", "http_404", 404)
    assert ended[a]["redirect_chain"] == [a, b]


def test_two_pages_redirecting_to_each_other_are_a_loop(tmp_path: Path) -> None:
    log, path = _log(tmp_path)
    a, b = SITE + "a", SITE + "b"
    for url in (a, b):
        log.discovered(url, {"reason": "in_page", "from": SITE})
    log.redirected(a, b, reason="redirect", status=302, chain=(a,))
    log.redirected(b, a, reason="redirect", status=302, chain=(b,))
    ended = _terminal(log, path)
    assert {e["reason"] for e in ended.values()} == {"redirect_loop"}
    assert ended[b]["redirect_chain"] == [b, a] and ended[a]["redirect_chain"] == [a, b]
    assert log.open_urls == frozenset()


def test_a_redirect_to_a_url_that_already_ended(tmp_path: Path) -> None:
    log, path = _log(tmp_path)
    a, b, c = SITE + "a", SITE + "b", SITE + "c"
    for url in (a, b, c):
        log.discovered(url, {"reason": "seed", "from": None})
    log.record(b, "skipped", reason="robots", rule="Disallow: /b")
    log.redirected(a, b, reason="redirect", status=301, chain=(a,))
    log.redirected(c, SITE + "page", reason="redirect", status=301, chain=(c,),
                   page=SITE + "page")  # written long ago, its outcome forgotten
    ended = _terminal(log, path)
    assert (ended[a]["event"], ended[a]["reason"], ended[a]["rule"]) == (
        "skipped", "robots", "Disallow: /b")
    assert ended[c]["duplicate_of"] == SITE + "page"


def test_the_crawl_closing_ends_waiting_sources_once(tmp_path: Path) -> None:
    log, path = _log(tmp_path)
    a, b = SITE + "a", SITE + "b"
    for url in (a, b):
        log.discovered(url, {"reason": "seed", "from": None})
    log.redirected(a, b, reason="redirect", status=301, chain=(a,))
    log.close_open("crawl_closed", "crawl ended first")
    ended = _terminal(log, path)
    assert {e["reason"] for e in ended.values()} == {"crawl_closed"}
