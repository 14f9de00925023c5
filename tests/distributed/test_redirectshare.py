"""Shared redirect waits on a real redis-server: two workers' crawl logs, one Redis, each
worker's script calls run as its `Serial` jobs on the asyncio client (as in a crawl)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from redis.asyncio import Redis

from docscrawl.crawl.crawllog import CrawlLog
from docscrawl.distributed.serial import Serial
from docscrawl.jsonl import JsonlWriter
from docscrawl.redirects.redis import SharedRedirects

A, B, C, D = (f"https://d.example/{name}" for name in "abcd")


class Side:
    """One worker: its crawl log, its Serial, its side of the shared waits."""

    def __init__(self, tmp_path: Path, name: str, redis_url: str, key: str) -> None:
        self.client = Redis.from_url(redis_url, decode_responses=True)
        self.serial = Serial()
        self.log = CrawlLog(JsonlWriter(tmp_path / f"{name}.jsonl"))
        self.shared = SharedRedirects(self.client, key, self.log, key_of=lambda url: url,
                                      submit=self.serial.submit)

    async def done(self) -> None:
        await self.serial.drained()
        assert self.serial.failures == 0

    async def run(self, job: Callable[[], Awaitable[object]]) -> object:
        await self.done()
        result = await job()
        await self.done()
        return result


def with_sides(tmp_path: Path, redis_url: str, key: str,
               test: Callable[[Side, Side], Awaitable[None]]) -> None:
    async def main() -> None:
        one, two = (Side(tmp_path, name, redis_url, key) for name in ("one", "two"))
        try:
            await test(one, two)
        finally:
            await one.client.aclose()
            await two.client.aclose()
    asyncio.run(main())


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
    async def test(one: Side, two: Side) -> None:
        for side, url in ((one, A), (two, B), (one, C)):
            side.log.adopt(url)
            side.shared.fetching(url, url)
        one.shared.redirected(A, A, B, reason="redirect", status=301, chain=(A,))  # waits
        await one.done()
        two.shared.redirected(B, B, C, reason="redirect", status=302, chain=(A, B))  # waits
        await two.done()
        assert not one.log.is_open(A) and not two.log.is_open(B)
        one.log.record(C, "extracted", status=200, canonical_url=C)  # ends B, which ends A
        await one.done()
        found = ends(tmp_path)
        assert (found[B]["event"], found[B]["duplicate_of"], found[B]["status"]) == (
            "duplicate", C, 302)
        assert (found[A]["event"], found[A]["duplicate_of"], found[A]["redirect_chain"]) == (
            "duplicate", C, [A])
        two.shared.redirected(D, D, C, reason="redirect", status=301, chain=(D,))  # C ended
        await two.done()
        assert ends(tmp_path)[D]["duplicate_of"] == C
    with_sides(tmp_path, redis_server.url, crawl_key, test)


def test_a_circle_of_pages_fails_as_a_loop(redis_server, crawl_key, tmp_path) -> None:
    async def test(one: Side, two: Side) -> None:
        one.shared.fetching(A, A)
        two.shared.fetching(B, B)
        one.shared.redirected(A, A, B, reason="redirect", status=301, chain=(A,))
        await one.done()
        two.shared.redirected(B, B, A, reason="redirect", status=301, chain=(B,))
        await two.done()
        assert not one.shared.asking and not two.shared.asking
        found = ends(tmp_path)
        assert (found[B]["event"], found[B]["reason"], found[B]["redirect_chain"]) == (
            "failed", "redirect_loop", [B, A])
        assert (found[A]["event"], found[A]["reason"]) == ("failed", "redirect_loop")
    with_sides(tmp_path, redis_server.url, crawl_key, test)


def test_failures_pass_back_and_leftovers_fail(redis_server, crawl_key, tmp_path) -> None:
    async def test(one: Side, two: Side) -> None:
        one.shared.fetching(A, A)
        one.shared.redirected(A, A, B, reason="redirect", status=301, chain=(A,))
        await one.done()
        await two.run(lambda: two.shared.refused_target(B, "robots", "Disallow: /b"))
        one.shared.fetching(C, C)
        one.shared.redirected(C, C, D, reason="meta_refresh", status=200, chain=(C,))
        await one.done()
        assert await two.run(two.shared.leftovers) == 1
        assert await one.run(one.shared.leftovers) == 0
        found = ends(tmp_path)
        assert (found[A]["event"], found[A]["reason"], found[A]["rule"]) == (
            "skipped", "robots", "Disallow: /b")
        assert (found[C]["event"], found[C]["reason"], found[C]["redirect_to"]) == (
            "failed", "redirect_target_failed", D)
    with_sides(tmp_path, redis_server.url, crawl_key, test)
