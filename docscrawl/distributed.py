"""A Redis-backed shared frontier for several `scrapy crawl docs` workers on one site.

Several worker processes (on one machine or many) share one crawl through one Redis
database. Each worker keeps its own local `Frontier` for the policy checks (scope, robots,
traps) and writes its own part directory; this module holds what must be shared: which
URLs were discovered and claimed, the queue of page fetches, and the leases of the fetches
in progress. No Scrapy in here: the spider calls it (see the README section "Several
machines on Redis").

Why not scrapy-redis alone: scrapy-redis pops a request from the shared queue and forgets
it. A worker killed with `kill -9` loses every request it had popped and not finished, and
the first worker to close with `SCHEDULER_PERSIST = False` deletes the whole queue. Here a
popped task is *leased*, not removed:

- `pop()` moves a task from the queue into a lease with a deadline, atomically (one Lua
  script), and returns it with its `task_id`. A task is held by one worker at a time.
- `ack(task_id)` ends the task: the worker logged the URL's terminal event and pushed the
  pages it discovered. Only then does the task leave Redis.
- `heartbeat(worker_id)` (or `extend(task_id)`) pushes the deadlines of a live worker's
  leases forward; call it every `lease_seconds / 3` or so.
- `requeue_expired()` puts every lease past its deadline back at the head of the queue;
  `pop()` runs it first, so a crawl heals itself without a separate sweeper. A worker killed
  with `kill -9` therefore loses nothing: its tasks are delivered again after at most
  `lease_seconds` (plus the time until the next `pop()` by a surviving worker).
- `release_worker(worker_id)` gives a stopping worker's leases back at once (graceful
  shutdown, no waiting for the lease timeout).

Delivery is at-least-once, made effectively-once by the claim set and the ack: a URL is
claimed by one worker (`claim`, or atomically `claim_and_push`), so it is queued once; its
task is held by one worker at a time; it is delivered again only when its holder stopped
acknowledging. The only double fetch left is a worker that did the work but died (or froze
longer than the lease) before its `ack`; `docscrawl merge` keeps one record and the best
terminal event per URL, so the merged output is still exact.

The lease timeout (`lease_seconds`, setting `DOCSCRAWL_REDIS_LEASE`, default 60 s) trades
recovery time against double work:

- Shorter: a dead worker's pages come back sooner, but a live worker whose heartbeat is late
  (a blocked reactor, a stalled machine, a Redis outage longer than the lease) has its tasks
  handed to another worker and both fetch them.
- Longer: fewer false expiries, but pages of a dead worker wait that long, and the crawl
  cannot finish before they are re-delivered.
- With a heartbeat every `lease_seconds / 3`, the lease only has to outlast two missed
  heartbeats, not the slowest page (download timeouts, retries with back-off and browser
  rendering can take minutes); a task with no heartbeat at all (a caller that never calls
  `heartbeat`) must finish within `lease_seconds`.
- Deadlines use the Redis server's clock (`TIME` inside the scripts), so clock skew between
  machines does not matter.
- A task delivered `max_deliveries` times (default 5) without an ack is a poison page (it
  keeps killing its worker): it goes to a dead-letter hash (`dead_tasks()`) instead of the
  queue, so it cannot stall the crawl forever. The crawl log has no terminal event for it
  until someone looks (`python -m docscrawl.distributed dead`).

When is the crawl over? When no task is queued or leased (`pending() == 0`) after the crawl
started (first `push`, or `mark_started()` when the seed was refused). Every worker calls
`mark_done_if_idle(quiet_seconds)` when it is idle itself: it returns True once `pending()`
has stayed 0 for `quiet_seconds` (measured on the server clock, across all workers), and
from then on `is_finished()` is True for everybody. A `push` reopens the crawl. Because a
task is acked only after the pages it discovered were pushed, `pending() == 0` means no
worker holds work that could still produce more; the quiet period covers discoveries that
wait locally for another origin's robots.txt.

All keys of one crawl are `docscrawl:{<crawl_key>}:<name>` (one Redis Cluster hash slot);
`reset()` deletes exactly these keys and nothing of any other crawl. Leases protect against
dying workers, not against a dying Redis: run it with `appendonly yes` when a restart of
Redis must not lose the crawl. Memory grows with the site: one `seen` entry per discovered
URL and one `claims` entry per claimed page (about 100-200 bytes each).

Command line for the person on call::

    python -m docscrawl.distributed status  --redis-url redis://host:6379/0 --crawl-key KEY
    python -m docscrawl.distributed workers|requeue|dead|reset  --redis-url ... --crawl-key KEY
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

    from docscrawl.pagetrack import PageTrack

__all__ = ["REDIS_MISSING", "Admission", "SharedFrontier", "redis_installed",
           "task_from_track", "track_from_task"]

# The one line shown when distributed mode is asked for without the `redis` package.
REDIS_MISSING = ("distributed mode (DOCSCRAWL_REDIS_URL) needs the redis package: "
                 "pip install 'docscrawl[distributed]'")


def redis_installed() -> bool:
    """True when `redis` can be imported (checked without importing it)."""
    return importlib.util.find_spec("redis") is not None


def _connect(redis_url: str) -> Redis:
    """A Redis client; `redis` is imported here, only when distributed mode is used."""
    if not redis_installed():
        raise RuntimeError(REDIS_MISSING)
    from redis import Redis

    return Redis.from_url(redis_url, decode_responses=True)

KEY_NAMES = ("seen", "untold", "claims", "queue", "tasks", "leases", "owners", "deliveries", "dead",
             "seq", "stats", "state", "workers", "workers_seen",
             "template_pages", "template_counts", "template_settled", "template_sample",
             # docscrawl.redirectshare's (reset deletes them too)
             "redirect_outcomes", "redirect_waits", "redirect_targets")
DEFAULT_LEASE_SECONDS = 60.0
DEFAULT_MAX_DELIVERIES = 5
REQUEUE_BATCH = 100  # expired leases moved back per script call (pop repeats it)

# KEYS: seen untold   ARGV: url
FIRST_SCRIPT = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

_NOW = """
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function clock(arg)
  if arg ~= nil and arg ~= '' then return tonumber(arg) end
  return now()
end
"""

# KEYS: queue tasks leases owners deliveries dead stats
_REQUEUE_FN = """
local function requeue(t, max_deliveries, limit)
  local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', t, 'LIMIT', 0, limit)
  local moved = 0
  for _, id in ipairs(ids) do
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
    local body = redis.call('HGET', KEYS[2], id)
    if body then
      local n = tonumber(redis.call('HGET', KEYS[5], id) or '0')
      if n >= max_deliveries then
        redis.call('HSET', KEYS[6], id, body)
        redis.call('HDEL', KEYS[2], id)
        redis.call('HINCRBY', KEYS[7], 'dead', 1)
      else
        redis.call('RPUSH', KEYS[1], id)
        redis.call('HINCRBY', KEYS[7], 'requeued', 1)
        moved = moved + 1
      end
    end
  end
  return {moved, #ids}
end
"""

REQUEUE_SCRIPT = _NOW + _REQUEUE_FN + """
return requeue(clock(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
"""

# ARGV: worker lease max_deliveries now
POP_SCRIPT = _NOW + _REQUEUE_FN + """
local t = clock(ARGV[4])
requeue(t, tonumber(ARGV[3]), REQUEUE_BATCH)
while true do
  local id = redis.call('RPOP', KEYS[1])
  if not id then return false end
  local body = redis.call('HGET', KEYS[2], id)
  if body and not redis.call('ZSCORE', KEYS[3], id) then
    local n = redis.call('HINCRBY', KEYS[5], id, 1)
    redis.call('ZADD', KEYS[3], t + tonumber(ARGV[2]), id)
    redis.call('HSET', KEYS[4], id, ARGV[1])
    return {id, body, n}
  end
end
""".replace("REQUEUE_BATCH", str(REQUEUE_BATCH))

# KEYS: queue tasks seq state stats   ARGV: task json
_PUSH_FN = """
local function push(body)
  local id = 't' .. redis.call('INCR', KEYS[3])
  redis.call('HSET', KEYS[2], id, body)
  redis.call('LPUSH', KEYS[1], id)
  redis.call('HSETNX', KEYS[4], 'started', tostring(now()))
  redis.call('HDEL', KEYS[4], 'idle_since', 'finished')
  redis.call('HINCRBY', KEYS[5], 'pushed', 1)
  return id
end
"""

PUSH_SCRIPT = _NOW + _PUSH_FN + "return push(ARGV[1])"

# KEYS: queue tasks seq state stats claims
# ARGV: normalized owner body max_pages ('' = none) counts ('1' = takes a page slot)
CLAIM_PUSH_SCRIPT = _NOW + _PUSH_FN + """
local owner = redis.call('HGET', KEYS[6], ARGV[1])
if owner then return {'duplicate', owner} end
if ARGV[4] ~= '' and ARGV[5] == '1' then
  local admitted = tonumber(redis.call('HGET', KEYS[5], 'admitted') or '0')
  if admitted >= tonumber(ARGV[4]) then return {'max_pages', ''} end
end
redis.call('HSET', KEYS[6], ARGV[1], ARGV[2])
if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[5], 'admitted', 1) end
return {'queued', push(ARGV[3])}
"""

# KEYS: tasks leases owners deliveries stats   ARGV: task_id
ACK_SCRIPT = """
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if removed == 1 then redis.call('HINCRBY', KEYS[5], 'done', 1) end
return removed
"""

# KEYS: leases owners   ARGV: lease worker ('' = any) task_id...
EXTEND_SCRIPT = _NOW + """
local deadline = now() + tonumber(ARGV[1])
local n = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', KEYS[1], id) and
     (ARGV[2] == '' or redis.call('HGET', KEYS[2], id) == ARGV[2]) then
    redis.call('ZADD', KEYS[1], 'XX', deadline, id)
    n = n + 1
  end
end
return n
"""

# KEYS: leases owners workers_seen   ARGV: worker lease
HEARTBEAT_SCRIPT = _NOW + """
local t = now()
redis.call('HSET', KEYS[3], ARGV[1], tostring(t))
local owners = redis.call('HGETALL', KEYS[2])
local n = 0
for i = 1, #owners, 2 do
  if owners[i + 1] == ARGV[1] and redis.call('ZSCORE', KEYS[1], owners[i]) then
    redis.call('ZADD', KEYS[1], 'XX', t + tonumber(ARGV[2]), owners[i])
    n = n + 1
  end
end
return n
"""

# KEYS: queue tasks leases owners deliveries   ARGV: worker ('' = by id) task_id...
RELEASE_SCRIPT = """
local ids = {}
if ARGV[1] ~= '' then
  local owners = redis.call('HGETALL', KEYS[4])
  for i = 1, #owners, 2 do
    if owners[i + 1] == ARGV[1] then table.insert(ids, owners[i]) end
  end
else
  for i = 2, #ARGV do table.insert(ids, ARGV[i]) end
end
local n = 0
for _, id in ipairs(ids) do
  if redis.call('ZREM', KEYS[3], id) == 1 then
    redis.call('HDEL', KEYS[4], id)
    if redis.call('HEXISTS', KEYS[2], id) == 1 then
      redis.call('HINCRBY', KEYS[5], id, -1)  -- a graceful release is not a failed delivery
      redis.call('RPUSH', KEYS[1], id)
      n = n + 1
    end
  end
end
return n
"""

# KEYS: tasks state   ARGV: quiet_seconds
IDLE_SCRIPT = _NOW + """
if redis.call('HEXISTS', KEYS[2], 'finished') == 1 then return 1 end
if redis.call('HEXISTS', KEYS[2], 'started') == 0 then return 0 end
if redis.call('HLEN', KEYS[1]) > 0 then
  redis.call('HDEL', KEYS[2], 'idle_since')
  return 0
end
local t = now()
local since = tonumber(redis.call('HGET', KEYS[2], 'idle_since') or '')
if not since then
  redis.call('HSET', KEYS[2], 'idle_since', tostring(t))
  since = t
end
if t - since >= tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[2], 'finished', tostring(t))
  return 1
end
return 0
"""


@dataclass(frozen=True, slots=True)
class Admission:
    """The answer of `claim_and_push`."""

    status: str  # "queued", "duplicate" (claimed before) or "max_pages" (limit reached)
    task_id: str | None = None  # when queued
    owner: str | None = None  # when duplicate: the owner string stored by the first claim

    @property
    def queued(self) -> bool:
        return self.status == "queued"


class SharedFrontier:
    """The shared part of one distributed crawl: discovery, claims, task queue and leases."""

    def __init__(
        self, redis_url: str, crawl_key: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_deliveries: int = DEFAULT_MAX_DELIVERIES, client: Redis | None = None,
    ) -> None:
        if not crawl_key or any(c in crawl_key for c in "{}"):
            raise ValueError(f"crawl_key must be non-empty without braces: {crawl_key!r}")
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds must be positive: {lease_seconds}")
        if max_deliveries < 1:
            raise ValueError(f"max_deliveries must be at least 1: {max_deliveries}")
        self.crawl_key = crawl_key
        self.lease_seconds = float(lease_seconds)
        self.max_deliveries = max_deliveries
        self.redis: Redis = client or _connect(redis_url)
        prefix = f"docscrawl:{{{crawl_key}}}:"
        self.keys = {name: prefix + name for name in KEY_NAMES}
        k = self.keys
        self._lease_keys = [k["queue"], k["tasks"], k["leases"], k["owners"], k["deliveries"],
                            k["dead"], k["stats"]]
        self._push_keys = [k["queue"], k["tasks"], k["seq"], k["state"], k["stats"]]
        self._first = self.redis.register_script(FIRST_SCRIPT)
        self._requeue = self.redis.register_script(REQUEUE_SCRIPT)
        self._pop = self.redis.register_script(POP_SCRIPT)
        self._push = self.redis.register_script(PUSH_SCRIPT)
        self._claim_push = self.redis.register_script(CLAIM_PUSH_SCRIPT)
        self._ack = self.redis.register_script(ACK_SCRIPT)
        self._extend = self.redis.register_script(EXTEND_SCRIPT)
        self._heartbeat = self.redis.register_script(HEARTBEAT_SCRIPT)
        self._release = self.redis.register_script(RELEASE_SCRIPT)
        self._idle = self.redis.register_script(IDLE_SCRIPT)

    # -- crawl lifecycle --------------------------------------------------------------

    def reset(self) -> int:
        """Fresh crawl: delete every key of this crawl (and no other). Returns keys deleted."""
        return int(self.redis.delete(*self.keys.values()))

    def mark_started(self) -> None:
        """The crawl has begun even though nothing was pushed (the seed was refused)."""
        self.redis.hsetnx(self.keys["state"], "started", f"{self.server_time():.6f}")

    def mark_done_if_idle(self, quiet_seconds: float = 5.0) -> bool:
        """Call when this worker is idle: True once the whole crawl is over.

        Over means started, and no task queued or leased for `quiet_seconds` in a row (server
        clock, shared by all workers). The first caller that sees it sets `finished`.
        """
        keys = [self.keys["tasks"], self.keys["state"]]
        return bool(self._idle(keys=keys, args=[quiet_seconds]))

    def is_finished(self) -> bool:
        """True once some worker's `mark_done_if_idle` found the crawl over."""
        return bool(self.redis.hexists(self.keys["state"], "finished"))

    # -- discovery and claims ------------------------------------------------------------

    def first_discovery(self, raw_url: str) -> bool:
        """True only for the first worker that ever discovers `raw_url` (log `discovered`).

        The URL is also `untold` until that worker calls `told`: its discovery and outcome
        (or its hand-over to the queue) are written. A worker killed in between leaves it
        untold, and the next worker that meets the URL tells its story (`untold`)."""
        return bool(self._first(keys=[self.keys["seen"], self.keys["untold"]], args=[raw_url]))

    def told(self, raw_url: str) -> None:
        """The story of a URL this worker discovered first is written (see `first_discovery`)."""
        self.redis.srem(self.keys["untold"], raw_url)

    def untold(self, raw_url: str) -> bool:
        """True when the first discoverer of `raw_url` has not written its story (yet)."""
        return bool(self.redis.sismember(self.keys["untold"], raw_url))

    def claim(self, normalized_url: str, owner: str) -> str | None:
        """Claim a normalized URL: None when this call claimed it, else the stored owner."""
        if self.redis.hsetnx(self.keys["claims"], normalized_url, owner):
            return None
        current = self.redis.hget(self.keys["claims"], normalized_url)
        return str(current) if current is not None else owner

    def owner_of(self, normalized_url: str) -> str | None:
        """Who claimed a normalized URL, if anyone."""
        value = self.redis.hget(self.keys["claims"], normalized_url)
        return str(value) if value is not None else None

    def claim_and_push(
        self, normalized_url: str, owner: str, task: dict[str, Any], *,
        max_pages: int | None = None, takes_slot: bool = True,
    ) -> Admission:
        """Claim and queue in one step (a worker dying in between cannot lose the URL).

        `max_pages` is the crawl-wide page budget; `takes_slot=False` for a task that
        continues another page's slot (a redirect target).
        """
        args = [normalized_url, owner, _task_json(task),
                "" if max_pages is None else int(max_pages), "1" if takes_slot else "0"]
        status, value = self._claim_push(keys=[*self._push_keys, self.keys["claims"]],
                                         args=args)
        if status == "queued":
            return Admission("queued", task_id=str(value))
        if status == "duplicate":
            return Admission("duplicate", owner=str(value))
        return Admission("max_pages")

    # -- tasks ----------------------------------------------------------------------------

    def push(self, task: dict[str, Any]) -> str:
        """Queue one page task (JSON: url, key, depth, discovery, lastmod, redirect data).

        Returns its task id. Prefer `claim_and_push` in the admission path.
        """
        return str(self._push(keys=self._push_keys, args=[_task_json(task)]))

    def pop(self, worker_id: str, *, timeout: float = 0.0) -> dict[str, Any] | None:
        """Lease the next task to `worker_id`, or None when none came within `timeout`.

        The returned dict is the pushed task plus `task_id` and `deliveries` (1 on the
        first delivery). Expired leases are requeued first. `timeout > 0` polls and sleeps:
        never use it on the Twisted reactor thread (use 0 there).
        """
        deadline = time.monotonic() + max(0.0, timeout)
        wait = 0.02
        while True:
            result = self._pop(keys=self._lease_keys,
                               args=[worker_id, self.lease_seconds, self.max_deliveries, ""])
            if result:
                task_id, body, deliveries = result
                return {**json.loads(body), "task_id": str(task_id),
                        "deliveries": int(deliveries)}
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            time.sleep(min(wait, remaining))
            wait = min(wait * 2, 0.25)

    def ack(self, task_id: str) -> bool:
        """The task is done: drop it and its lease. False when it was already acked."""
        return bool(self._ack(keys=self._ack_keys(), args=[task_id]))

    def ack_in(self, pipeline: Pipeline, task_id: str) -> None:
        """Queue the ack on a transaction pipeline, to commit it with other Redis writes."""
        self._ack(keys=self._ack_keys(), args=[task_id], client=pipeline)

    def extend(self, task_id: str, *, worker_id: str | None = None) -> bool:
        """Push one lease's deadline to now + lease (only the holder's, given `worker_id`).

        False when the task is not leased (acked, or expired and requeued).
        """
        keys = [self.keys["leases"], self.keys["owners"]]
        return bool(self._extend(keys=keys, args=[self.lease_seconds, worker_id or "", task_id]))

    def requeue_expired(self, now: float | None = None) -> int:
        """Put leases past their deadline back at the head of the queue; how many were.

        `now` is a Redis server time (`server_time()`); default: the server's clock. A task
        delivered `max_deliveries` times goes to the dead-letter hash instead.
        """
        total = 0
        while True:
            moved, handled = self._requeue(keys=self._lease_keys, args=[
                "" if now is None else repr(float(now)), self.max_deliveries, REQUEUE_BATCH])
            total += int(moved)
            if int(handled) < REQUEUE_BATCH:
                return total

    def release(self, *task_ids: str) -> int:
        """Give leases back to the queue at once (a worker that will not finish them)."""
        if not task_ids:
            return 0
        return int(self._release(keys=self._release_keys(), args=["", *task_ids]))

    def release_worker(self, worker_id: str) -> int:
        """Give back every lease a worker holds (graceful stop); how many."""
        return int(self._release(keys=self._release_keys(), args=[worker_id]))

    def leases_of(self, worker_id: str) -> list[str]:
        """Task ids currently leased to a worker."""
        owners = self.redis.hgetall(self.keys["owners"])
        return sorted(task for task, owner in owners.items() if owner == worker_id)

    def dead_tasks(self) -> list[dict[str, Any]]:
        """Tasks given up after `max_deliveries` deliveries without an ack."""
        dead = self.redis.hgetall(self.keys["dead"])
        return [{**json.loads(body), "task_id": task_id} for task_id, body in sorted(dead.items())]

    # -- workers --------------------------------------------------------------------------

    def register_worker(self, worker_id: str, info: dict[str, Any] | None = None) -> int:
        """Record a starting worker (host, pid, output part...) for `workers()` and `status`.

        A starting worker holds nothing: leases still recorded under its id belong to an
        earlier process with the same id (restarted after `kill -9`) and are given back at
        once, else this process's heartbeats would keep them leased forever. Returns how
        many were given back.
        """
        released = self.release_worker(worker_id)
        record = {"registered_at": self.server_time(), **(info or {})}
        self.redis.hset(self.keys["workers"], worker_id, json.dumps(record))
        self.heartbeat(worker_id)
        return released

    def heartbeat(self, worker_id: str) -> int:
        """The worker is alive: extend all its leases. Returns how many were extended."""
        keys = [self.keys["leases"], self.keys["owners"], self.keys["workers_seen"]]
        return int(self._heartbeat(keys=keys, args=[worker_id, self.lease_seconds]))

    def finish_worker(self, worker_id: str) -> None:
        """A worker stopped cleanly (its leases given back): `workers()` shows it finished,
        not silent."""
        raw = self.redis.hget(self.keys["workers"], worker_id)
        record = {**json.loads(raw or "{}"), "finished_at": self.server_time()}
        self.redis.hset(self.keys["workers"], worker_id, json.dumps(record))

    def workers(self) -> dict[str, dict[str, Any]]:
        """Every registered worker: its info, `last_seen`, `silent_seconds`, `leases` and
        `state` (judged by the worker's own lease when it registered one, else this
        frontier's): `finished` (stopped cleanly), `live` (heard from within the lease),
        `silent` (not heard from, holds nothing: nothing waits on it) or `dead_or_stuck`
        (not heard from within the lease and still holding leases: the one to look at)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self.keys["workers"])
        pipe.hgetall(self.keys["workers_seen"])
        pipe.hgetall(self.keys["owners"])
        info, seen, owners = pipe.execute()
        now = self.server_time()
        result: dict[str, dict[str, Any]] = {}
        for worker in sorted(set(info) | set(seen)):
            last = float(seen[worker]) if worker in seen else None
            record = json.loads(info.get(worker) or "{}")
            leases = sum(1 for owner in owners.values() if owner == worker)
            silent = round(now - last, 3) if last is not None else None
            lease = float(record.get("lease") or self.lease_seconds)
            result[worker] = {**record, "last_seen": last, "silent_seconds": silent,
                              "leases": leases,
                              "state": worker_state(record, silent, leases, lease)}
        return result

    # -- counts -----------------------------------------------------------------------------

    def pending(self) -> int:
        """Tasks not yet acked: queued plus leased."""
        return int(self.redis.hlen(self.keys["tasks"]))

    def counts(self) -> dict[str, Any]:
        """Queue figures for progress lines and `status`."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hlen(self.keys["tasks"])
        pipe.zcard(self.keys["leases"])
        pipe.hlen(self.keys["dead"])
        pipe.scard(self.keys["seen"])
        pipe.hlen(self.keys["claims"])
        pipe.hgetall(self.keys["stats"])
        pipe.hgetall(self.keys["state"])
        pipe.hlen(self.keys["workers"])
        pending, leased, dead, seen, claimed, stats, state, workers = pipe.execute()
        return {
            "queued": max(0, int(pending) - int(leased)),
            "leased": int(leased),
            "pending": int(pending),
            "done": int(stats.get("done", 0)),
            "pushed": int(stats.get("pushed", 0)),
            "requeued": int(stats.get("requeued", 0)),
            "dead": int(dead),
            "discovered": int(seen),
            "claimed": int(claimed),
            "admitted": int(stats.get("admitted", 0)),
            "workers": int(workers),
            "started": "started" in state,
            "finished": "finished" in state,
        }

    def server_time(self) -> float:
        """The Redis server's clock, in seconds (the clock of every lease deadline)."""
        seconds, micros = self.redis.time()
        return float(seconds) + float(micros) / 1_000_000

    def close(self) -> None:
        """Close the connection pool."""
        self.redis.close()

    def _ack_keys(self) -> list[str]:
        k = self.keys
        return [k["tasks"], k["leases"], k["owners"], k["deliveries"], k["stats"]]

    def _release_keys(self) -> list[str]:
        k = self.keys
        return [k["queue"], k["tasks"], k["leases"], k["owners"], k["deliveries"]]


def worker_state(info: dict[str, Any], silent: float | None, leases: int,
                 lease_seconds: float) -> str:
    """`finished`, `live`, `silent` or `dead_or_stuck` (see `SharedFrontier.workers`)."""
    if info.get("finished_at") is not None and leases == 0:
        return "finished"
    if silent is not None and silent < lease_seconds:
        return "live"
    return "dead_or_stuck" if leases else "silent"


def _task_json(task: dict[str, Any]) -> str:
    if not isinstance(task.get("url"), str) or not task["url"]:
        raise ValueError(f"a task needs a 'url': {task!r}")
    body = {k: v for k, v in task.items() if k not in ("task_id", "deliveries")}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# -- page tracks <-> tasks --------------------------------------------------------------------


def task_from_track(track: PageTrack) -> dict[str, Any]:
    """The task that lets any worker fetch a claimed page (redirect data included)."""
    return {
        "url": track.url,
        "key": track.key,
        "depth": track.depth,
        "discovery": track.discovery_records(),
        "lastmod": track.sitemap_lastmod,
        "redirect_chain": list(track.redirect_chain),
        "fetched_url": track.fetched_url,
        "observed": list(track.observed),
    }


def track_from_task(task: dict[str, Any]) -> PageTrack:
    """Rebuild, in the worker that popped it, the track of a task made by `task_from_track`."""
    from docscrawl.pagetrack import PageTrack, discovery_entries

    track = PageTrack(url=task["url"], key=task.get("key") or task["url"],
                      depth=int(task.get("depth") or 0),
                      discovery=discovery_entries(task.get("discovery") or ()),
                      sitemap_lastmod=task.get("lastmod"),
                      redirect_chain=list(task.get("redirect_chain") or ()),
                      fetched_url=task.get("fetched_url"))
    for url in task.get("observed") or (task["url"],):
        track.observe(url)
    return track


# -- command line -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """`python -m docscrawl.distributed status|workers|requeue|dead|reset`."""
    parser = argparse.ArgumentParser(prog="python -m docscrawl.distributed",
                                     description="Inspect or repair a distributed crawl.")
    parser.add_argument("action", choices=("status", "workers", "requeue", "dead", "reset"))
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--crawl-key", required=True)
    parser.add_argument("--lease", type=float, default=DEFAULT_LEASE_SECONDS)
    parser.add_argument("--yes", action="store_true", help="confirm `reset`")
    args = parser.parse_args(argv)
    try:
        shared = SharedFrontier(args.redis_url, args.crawl_key, lease_seconds=args.lease)
        if args.action == "reset" and not args.yes:
            print("reset deletes the whole shared state of this crawl: add --yes",
                  file=sys.stderr)
            return 2
        result: Any
        if args.action == "status":
            result = shared.counts()
        elif args.action == "workers":
            result = shared.workers()
        elif args.action == "requeue":
            result = {"requeued": shared.requeue_expired()}
        elif args.action == "dead":
            result = shared.dead_tasks()
        else:
            result = {"deleted_keys": shared.reset()}
    except Exception as exc:  # one clear line for the person on call
        print(f"docscrawl.distributed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
