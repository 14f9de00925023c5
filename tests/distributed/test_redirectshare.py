"""Shared redirect waits on a real redis-server: two workers' crawl logs, one Redis."""

from __future__ import annotations

import json
from pathlib import Path

from redis import Redis

from docscrawl.crawllog import CrawlLog
from docscrawl.jsonl import JsonlWriter
from docscrawl.redirectshare import SharedRedirects

A, B, C, D = (f"https://d.example/{name}" for name in "abcd")


def worker(tmp_path: Path, name: str, redis_url: str, key: str) -> tuple[CrawlLog, SharedRedirects]:
    log = CrawlLog(JsonlWriter(tmp_path / f"{name}.jsonl"))
    return log, SharedRedirects(Redis.from_url(redis_url, decode_responses=True), key, log,
                                key_of=lambda url: url)


def ends(tmp_path: Path) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for path in tmp_path.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["event"] in ("extracted", "duplicate", "skipped", "failed"):
                assert event["url"] not in found, (event, found[event["url"]])
                found[event["url"]] = event
    return found


def test_a_chain_across_workers_ends_with_its_page(redis_server, crawl_key, tmp_path) -> None:
    one, shared_one = worker(tmp_path, "one", redis_server.url, crawl_key)
    two, shared_two = worker(tmp_path, "two", redis_server.url, crawl_key)
    for log, shared, url in ((one, shared_one, A), (two, shared_two, B), (one, shared_one, C)):
        log.adopt(url)
        shared.fetching(url, url)
    shared_one.redirected(A, A, B, reason="redirect", status=301, chain=(A,))  # waits
    shared_two.redirected(B, B, C, reason="redirect", status=302, chain=(A, B))  # waits
    assert not one.is_open(A) and not two.is_open(B)
    one.record(C, "extracted", status=200, canonical_url=C)  # ends B, which ends A
    found = ends(tmp_path)
    assert (found[B]["event"], found[B]["duplicate_of"], found[B]["status"]) == (
        "duplicate", C, 302)
    assert (found[A]["event"], found[A]["duplicate_of"], found[A]["redirect_chain"]) == (
        "duplicate", C, [A])
    shared_two.redirected(D, D, C, reason="redirect", status=301, chain=(D,))  # C ended
    assert ends(tmp_path)[D]["duplicate_of"] == C


def test_a_circle_of_pages_fails_as_a_loop(redis_server, crawl_key, tmp_path) -> None:
    _, shared_one = worker(tmp_path, "one", redis_server.url, crawl_key)
    _, shared_two = worker(tmp_path, "two", redis_server.url, crawl_key)
    shared_one.fetching(A, A)
    shared_two.fetching(B, B)
    shared_one.redirected(A, A, B, reason="redirect", status=301, chain=(A,))
    shared_two.redirected(B, B, A, reason="redirect", status=301, chain=(B,))
    found = ends(tmp_path)
    assert (found[B]["event"], found[B]["reason"], found[B]["redirect_chain"]) == (
        "failed", "redirect_loop", [B, A])
    assert (found[A]["event"], found[A]["reason"]) == ("failed", "redirect_loop")


def test_failures_pass_back_and_leftovers_fail(redis_server, crawl_key, tmp_path) -> None:
    _, shared_one = worker(tmp_path, "one", redis_server.url, crawl_key)
    _, shared_two = worker(tmp_path, "two", redis_server.url, crawl_key)
    shared_one.fetching(A, A)
    shared_one.redirected(A, A, B, reason="redirect", status=301, chain=(A,))
    shared_two.refused_target(B, "robots", "Disallow: /b")
    shared_one.fetching(C, C)
    shared_one.redirected(C, C, D, reason="meta_refresh", status=200, chain=(C,))
    assert shared_two.leftovers() == 1 and shared_one.leftovers() == 0
    found = ends(tmp_path)
    assert (found[A]["event"], found[A]["reason"], found[A]["rule"]) == (
        "skipped", "robots", "Disallow: /b")
    assert (found[C]["event"], found[C]["reason"], found[C]["redirect_to"]) == (
        "failed", "redirect_target_failed", D)
