"""`SharedFrontier`: the shared part of one distributed crawl, for the sync and asyncio clients.

Both classes run the same plans (`docscrawl.distributed.streams`): `SharedFrontier` with
`redis.Redis` (the operator's command line, tests, scripts), `AsyncSharedFrontier` with
`redis.asyncio.Redis` (the Scrapy worker: no Redis round trip blocks the reactor). Every
method of the base class returns the answer (sync) or an awaitable of it (asyncio).

Delivery is at-least-once, made effectively-once by the claim set and the ack: a URL is
claimed by one worker (`claim_and_push`), so it is queued once; its task is held by one
worker at a time (the stream's pending-entries list); it is delivered again only when its
holder stopped renewing the lease. The only double fetch left is a worker that did the work
but died (or froze longer than the lease) before its `ack`; `docscrawl merge` keeps one
record and the best terminal event per URL, so the merged output is still exact.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docscrawl.distributed import status
from docscrawl.distributed.streams import Claim, Plan, Plans, Step

if TYPE_CHECKING:
    from redis import Redis
    from redis.asyncio import Redis as AsyncRedis

# The one line shown when distributed mode is asked for without the `redis` package.
REDIS_MISSING = ("distributed mode (DOCSCRAWL_REDIS_URL) needs the redis package: "
                 "pip install 'docscrawl[distributed]'")
DEFAULT_LEASE_SECONDS = 60.0
DEFAULT_MAX_DELIVERIES = 5
# Every client of the shared crawl: text replies; bytes that are not UTF-8 (written by
# someone else) read as U+FFFD instead of failing the whole reply they are in.
CLIENT_OPTIONS: dict[str, Any] = {"decode_responses": True, "encoding_errors": "replace"}


def redis_installed() -> bool:
    """True when `redis` can be imported (checked without importing it)."""
    return importlib.util.find_spec("redis") is not None


def _check(crawl_key: str, lease_seconds: float, max_deliveries: int) -> None:
    if not crawl_key or any(c in crawl_key for c in "{}"):
        raise ValueError(f"crawl_key must be non-empty without braces: {crawl_key!r}")
    if lease_seconds <= 0:
        raise ValueError(f"lease_seconds must be positive: {lease_seconds}")
    if max_deliveries < 1:
        raise ValueError(f"max_deliveries must be at least 1: {max_deliveries}")
    if not redis_installed():
        raise RuntimeError(REDIS_MISSING)


class _Shared:
    """Every operation of the shared crawl, once; subclasses say how a plan runs."""

    redis: Any

    def __init__(self, crawl_key: str, lease_seconds: float, max_deliveries: int) -> None:
        _check(crawl_key, lease_seconds, max_deliveries)
        self.crawl_key = crawl_key
        self.lease_seconds = float(lease_seconds)
        self.max_deliveries = max_deliveries
        self.plans = Plans(crawl_key, self.lease_seconds, max_deliveries)
        self.keys = self.plans.keys

    def _run(self, plan: Plan[Any]) -> Any:
        raise NotImplementedError

    def _one(self, command: Any) -> Any:
        return self._run(self.plans.one(command))

    # -- crawl lifecycle --------------------------------------------------------------

    def reset(self) -> Any:
        """Fresh crawl: delete every key of this crawl (and no other). Returns keys deleted."""
        return self._run(self.plans.reset())

    def mark_started(self) -> Any:
        """The crawl has begun even though nothing was pushed (the seed was refused)."""
        return self._run(_mark_started(self.keys["state"]))

    def mark_done_if_idle(self, quiet_seconds: float = 5.0) -> Any:
        """Call when this worker is idle: True once the whole crawl is over (started, and
        nothing pending for `quiet_seconds` in a row on the server clock)."""
        return self._run(self.plans.mark_done_if_idle(quiet_seconds))

    def is_finished(self) -> Any:
        """True once some worker's `mark_done_if_idle` found the crawl over."""
        return self._one(lambda p: p.hexists(self.keys["state"], "finished"))

    # -- discovery and claims ----------------------------------------------------------

    def first_discovery(self, raw_url: str) -> Any:
        """True only for the first worker that ever discovers `raw_url` (it logs
        `discovered`). The URL stays `untold` until that worker calls `told`; a worker
        killed in between leaves it untold, and the next worker meeting it tells its story."""
        return self._run(self.plans.first_discovery(raw_url))

    def told(self, raw_url: str) -> Any:
        """The story of a URL this worker discovered first is written."""
        return self._one(lambda p: p.srem(self.keys["untold"], raw_url))

    def untold(self, raw_url: str) -> Any:
        """True when the first discoverer of `raw_url` has not written its story (yet)."""
        return self._one(lambda p: p.sismember(self.keys["untold"], raw_url))

    def claim(self, normalized_url: str, owner: str) -> Any:
        """Claim a key without queueing anything (e.g. `resource:site`): None when this call
        claimed it, else the stored owner."""
        return self._run(_claim(self.keys["claims"], normalized_url, owner))

    def owner_of(self, normalized_url: str) -> Any:
        """Who claimed a normalized URL, if anyone."""
        return self._one(lambda p: p.hget(self.keys["claims"], normalized_url))

    def claim_and_push(self, normalized_url: str, owner: str, task: Mapping[str, Any], *,
                       max_pages: int | None = None, takes_slot: bool = True) -> Any:
        """Claim and queue in one step (a `Claim`). `max_pages` is the crawl-wide page
        budget; `takes_slot=False` for a task that continues another page's slot."""
        return self._run(self.plans.claim_and_push(normalized_url, owner, task, max_pages,
                                                   takes_slot))

    # -- tasks -----------------------------------------------------------------------------

    def push(self, task: Mapping[str, Any]) -> Any:
        """Queue one page task; its task id. Prefer `claim_and_push` in the admission path."""
        return self._run(self.plans.push(task))

    def take(self, worker_id: str, count: int = 1) -> Any:
        """Lease up to `count` tasks (expired and given-back ones first), each the pushed
        task plus `task_id` and `deliveries` (1 on the first delivery)."""
        return self._run(self.plans.take(worker_id, count))

    def ack(self, task_id: str) -> Any:
        """The task is done: out of the lease and the queue. False when already acked."""
        return self._run(self.plans.ack(task_id))

    def ack_in(self, pipeline: Any, task_id: str) -> None:
        """Queue the ack on a transaction pipeline, to commit it with other writes."""
        for command in self.plans.ack_commands(task_id):
            command(pipeline)

    def extend(self, task_id: str, *, worker_id: str | None = None) -> Any:
        """Renew one lease (only the holder's, given `worker_id`); False when not leased."""
        return self._run(self.plans.extend(task_id, worker_id))

    def heartbeat(self, worker_id: str) -> Any:
        """The worker is alive: renew all its leases. Returns how many were renewed."""
        return self._run(self.plans.heartbeat(worker_id))

    def requeue_expired(self, now: float | None = None) -> Any:
        """Give expired leases back (taken before new tasks); how many. `now` is a Redis
        server time (`server_time()`); default the server's clock."""
        return self._run(self.plans.requeue_expired(now))

    def release(self, *task_ids: str) -> Any:
        """Give leases back at once (a worker that will not finish them)."""
        return self._run(self.plans.release(task_ids, None))

    def release_worker(self, worker_id: str) -> Any:
        """Give back every lease a worker holds (graceful stop); how many."""
        return self._run(self.plans.release((), worker_id))

    def leases_of(self, worker_id: str) -> Any:
        """Task ids currently leased to a worker."""
        return self._run(self.plans.leases_of(worker_id))

    def read_tasks(self, task_ids: list[str]) -> Any:
        """The tasks of these ids that are still queued or leased."""
        return self._run(self.plans.read_tasks(task_ids))

    def dead_tasks(self) -> Any:
        """Tasks given up after `max_deliveries` deliveries without an ack."""
        return self._run(self.plans.dead_tasks())

    # -- workers ---------------------------------------------------------------------------

    def register_worker(self, worker_id: str, info: dict[str, Any] | None = None) -> Any:
        """Record a starting worker. Leases still held under its id belong to an earlier
        process with the same id (restarted after `kill -9`): given back at once (their
        count is returned), else this process's heartbeats would keep them forever."""
        return self._run(_register(self, worker_id, info or {}))

    def finish_worker(self, worker_id: str) -> Any:
        """A worker stopped cleanly: `workers()` shows it finished, not silent."""
        return self._run(_finish(self, worker_id))

    def pending(self) -> Any:
        """Tasks not yet acked: queued plus leased."""
        return self._one(lambda p: p.xlen(self.keys["tasks"]))

    def counts(self) -> Any:
        """Queue figures for progress lines and `status`."""
        return self._run(status.counts(self.plans))

    def workers(self) -> Any:
        """Every registered worker and its state (see `status.worker_state`)."""
        return self._run(status.workers(self.plans, self.lease_seconds))

    def server_time(self) -> Any:
        """The Redis server's clock, in seconds (the clock of every lease)."""
        return self._run(_server_time())


def _mark_started(state: str) -> Plan[None]:
    now = yield from _server_time()
    yield Step([lambda p: p.hsetnx(state, "started", f"{now:.6f}")])


def _server_time() -> Plan[float]:
    ((seconds, micros),) = yield Step([lambda p: p.time()])
    return float(seconds) + float(micros) / 1_000_000


def _claim(claims: str, key: str, owner: str) -> Plan[str | None]:
    claimed, current = yield Step([lambda p: p.hsetnx(claims, key, owner),
                                   lambda p: p.hget(claims, key)], atomic=True)
    return None if claimed else str(current)


def _register(shared: _Shared, worker: str, info: dict[str, Any]) -> Plan[int]:
    released = yield from shared.plans.release((), worker)
    now = yield from _server_time()
    record = json.dumps({"registered_at": now, **info})
    yield Step([lambda p: p.hset(shared.keys["workers"], worker, record)])
    yield from shared.plans.heartbeat(worker)
    return int(released)


def _finish(shared: _Shared, worker: str) -> Plan[None]:
    raw = yield from shared.plans.one(lambda p: p.hget(shared.keys["workers"], worker))
    now = yield from _server_time()
    record = json.dumps({**json.loads(raw or "{}"), "finished_at": now})
    yield Step([lambda p: p.hset(shared.keys["workers"], worker, record)])


class SharedFrontier(_Shared):
    """The shared crawl on a blocking `redis.Redis` client (never on the reactor thread)."""

    def __init__(self, redis_url: str, crawl_key: str, *,
                 lease_seconds: float = DEFAULT_LEASE_SECONDS,
                 max_deliveries: int = DEFAULT_MAX_DELIVERIES,
                 client: Redis | None = None) -> None:
        super().__init__(crawl_key, lease_seconds, max_deliveries)
        from redis import Redis

        self.redis: Redis = client or Redis.from_url(redis_url, **CLIENT_OPTIONS)

    def _run(self, plan: Plan[Any]) -> Any:
        reply: list[Any] | None = None
        error: Exception | None = None
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(reply)  # type: ignore[arg-type]
            except StopIteration as done:
                return done.value
            reply, error = None, None
            with self.redis.pipeline(transaction=step.atomic) as pipe:
                for command in step.commands:
                    command(pipe)
                try:
                    reply = pipe.execute()
                except Exception as exc:  # redis.ResponseError: the plan decides
                    error = exc

    def pop(self, worker_id: str, *, timeout: float = 0.0) -> dict[str, Any] | None:
        """Lease one task, waiting up to `timeout` seconds (polling) for one to come."""
        deadline = time.monotonic() + max(0.0, timeout)
        wait = 0.02
        while True:
            tasks = self.take(worker_id, 1)
            if tasks:
                return dict(tasks[0])
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            time.sleep(min(wait, remaining))
            wait = min(wait * 2, 0.25)

    def close(self) -> None:
        """Close the connection pool."""
        self.redis.close()


class AsyncSharedFrontier(_Shared):
    """The shared crawl on `redis.asyncio`: every method returns an awaitable."""

    def __init__(self, redis_url: str, crawl_key: str, *,
                 lease_seconds: float = DEFAULT_LEASE_SECONDS,
                 max_deliveries: int = DEFAULT_MAX_DELIVERIES,
                 client: AsyncRedis | None = None) -> None:
        super().__init__(crawl_key, lease_seconds, max_deliveries)
        from redis.asyncio import Redis as AsyncRedis

        self.redis_url = redis_url
        self.redis: AsyncRedis = client or AsyncRedis.from_url(redis_url,
                                                                  **CLIENT_OPTIONS)

    async def _run(self, plan: Plan[Any]) -> Any:
        reply: list[Any] | None = None
        error: Exception | None = None
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(reply)  # type: ignore[arg-type]
            except StopIteration as done:
                return done.value
            reply, error = None, None
            async with self.redis.pipeline(transaction=step.atomic) as pipe:
                for command in step.commands:
                    command(pipe)
                try:
                    reply = await pipe.execute()
                except Exception as exc:  # redis.ResponseError: the plan decides
                    error = exc

    async def close(self) -> None:
        """Close the connection pool."""
        await self.redis.aclose()


__all__ = ["DEFAULT_LEASE_SECONDS", "REDIS_MISSING", "AsyncSharedFrontier", "Claim",
           "SharedFrontier", "redis_installed"]
