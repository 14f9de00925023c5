"""AsyncSharedFrontier (redis.asyncio) runs the same plans as SharedFrontier, on a real Redis;
Serial runs a worker's Redis jobs in submission order."""

from __future__ import annotations

import asyncio

from docscrawl.distributed import AsyncSharedFrontier, SharedFrontier
from docscrawl.distributed.serial import Serial
from tests.distributed.clock import age
from tests.distributed.conftest import LEASE, RedisServer


def task(n: int) -> dict:
    return {"url": f"https://docs.example/p{n}", "key": f"https://docs.example/p{n}", "depth": 1}


def test_async_client_shares_the_crawl_with_the_sync_one(
    redis_server: RedisServer, crawl_key: str, shared: SharedFrontier,
) -> None:
    async def run() -> None:
        live = AsyncSharedFrontier(redis_server.url, crawl_key, lease_seconds=LEASE)
        try:
            assert await live.first_discovery("https://docs.example/p1") is True
            claim = await live.claim_and_push("https://docs.example/p1", "w1 u", task(1))
            assert claim.queued
            shared.push(task(2))
            taken = await live.take("w1", 5)
            assert [t["url"] for t in taken] == ["https://docs.example/p1",
                                                 "https://docs.example/p2"]
            assert shared.leases_of("w1") == sorted(t["task_id"] for t in taken)
            age(shared, LEASE * 0.6)
            assert await live.heartbeat("w1") == 2
            age(shared, LEASE * 0.6)  # 1.2 leases after the take, 0.6 after the renewal
            assert shared.take("w2", 5) == []
            assert await live.ack(taken[0]["task_id"]) is True
            assert await live.release_worker("w1") == 1
        finally:
            await live.close()

    asyncio.run(run())
    again = shared.take("w2", 5)
    assert [(t["url"], t["deliveries"]) for t in again] == [("https://docs.example/p2", 1)]
    counts = shared.counts()
    assert (counts["pending"], counts["leased"], counts["done"]) == (1, 1, 1)


def test_serial_runs_jobs_in_order_and_survives_a_failure() -> None:
    done: list[str] = []

    async def job(name: str, delay: float, fail: bool = False) -> None:
        await asyncio.sleep(delay)
        if fail:
            raise ConnectionError(name)
        done.append(name)

    async def run() -> Serial:
        serial = Serial()
        serial.submit(lambda: job("claim", 0.05))
        serial.submit(lambda: job("broken", 0, fail=True))
        serial.submit(lambda: job("ack", 0))
        assert serial.busy
        await serial.drained()
        assert not serial.busy
        return serial

    serial = asyncio.run(run())
    assert done == ["claim", "ack"]
    assert serial.failures == 1
