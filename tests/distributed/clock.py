"""Time passing for a shared crawl, without waiting for it.

A lease is the idle time of a task's pending entry, measured by the Redis server's clock;
a worker's silence and the crawl's quiet period are server times stored in hashes. Tests
that slept past a half-second lease failed at random on a loaded machine (a sleep that
must stay *under* a lease has no safe length), so they use long leases and move the
crawl's recorded past back by an exact amount instead: `age(frontier, seconds)`.
"""

from __future__ import annotations

from typing import Any

from docscrawl.distributed.streams import GROUP


def age(frontier: Any, seconds: float, worker: str | None = None) -> None:
    """Make `seconds` pass for `frontier`'s crawl: every pending entry idles that much
    longer (re-claimed by its own consumer with `IDLE`, `JUSTID` so no delivery is
    counted), and the workers' last-seen times and the quiet period's start move back.
    With `worker`, only that worker's leases and last-seen time age (it stopped; the
    others go on living)."""
    redis, keys, stream = frontier.redis, frontier.plans.keys, frontier.plans.stream
    shift_ms = int(seconds * 1000)
    if redis.exists(stream):
        for entry in redis.xpending_range(stream, GROUP, "-", "+", 10_000):
            if worker is not None and entry["consumer"] != worker:
                continue
            redis.execute_command("XCLAIM", stream, GROUP, entry["consumer"], 0,
                                  entry["message_id"], "IDLE",
                                  int(entry["time_since_delivered"]) + shift_ms, "JUSTID")
    for name, seen in redis.hgetall(keys["workers_seen"]).items():
        if worker is None or name == worker:
            redis.hset(keys["workers_seen"], name, f"{float(seen) - seconds:.6f}")
    if worker is not None:
        return
    since = redis.hget(keys["state"], "idle_since")
    if since is not None:
        redis.hset(keys["state"], "idle_since", f"{float(since) - seconds:.6f}")
