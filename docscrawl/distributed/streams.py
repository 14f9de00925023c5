"""The shared crawl's Redis operations, written once for the sync and the asyncio client.

Every operation is a *plan*: a generator that yields steps (one pipeline each, MULTI/EXEC when
`atomic`) and receives their replies, so `SharedFrontier` (redis) and `AsyncSharedFrontier`
(redis.asyncio) run the same code (`docscrawl.distributed.taskqueue`). No Redis import here.

The page queue is one Redis Stream (`tasks`) read by one consumer group (`workers`):

- a task is an entry `XADD`ed by the claim (`CLAIM_PUSH_SCRIPT`: claim set, page budget and
  queueing in one step, so a worker dying in between cannot lose the URL);
- `XREADGROUP` hands new entries to a worker; the group's pending-entries list (PEL) is the
  lease: an entry stays there, owned by that worker, until `XACK`; `XDEL` then drops it, so
  the stream holds exactly the tasks not yet done (`XLEN` = pending);
- a lease is alive while its PEL entry's idle time is below the lease; heartbeats reset it
  (`XCLAIM ... JUSTID` to the same owner); `XAUTOCLAIM` with the lease as min-idle-time moves
  a dead worker's entries to the worker that asks next (before any new entry);
- the PEL's delivery count is the poison-page rule: an entry claimed again after
  `max_deliveries` deliveries goes to the `dead` hash instead of to a worker;
- tasks given back (graceful stop, operator `requeue`) are moved to the pseudo consumer
  `QUEUE` with a large idle time (and their delivery count lowered for a graceful stop), so
  the next `XAUTOCLAIM` takes them first.

What the stream cannot do atomically on its own stays in three short scripts
(`docscrawl.distributed.scripts`): the first discovery of a URL (seen + untold),
claim-and-queue with the budget, and the end-of-crawl rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from docscrawl.distributed.scripts import (
    CLAIM_PUSH_SCRIPT,
    FIRST_SCRIPT,
    IDLE_SCRIPT,
    PUSH_SCRIPT,
)

T = TypeVar("T")
Command = Callable[[Any], Any]  # queues one command on a (sync or async) pipeline


@dataclass(frozen=True, slots=True)
class Step:
    """One round trip: commands sent on one pipeline (MULTI/EXEC when `atomic`)."""

    commands: list[Command]
    atomic: bool = False


Plan = Generator[Step, list[Any], T]


def _range_of(stream: str, entry_id: str) -> Command:
    """The command reading the one entry `entry_id` of `stream`."""
    return lambda p: p.xrange(stream, entry_id, entry_id, count=1)


GROUP = "workers"
QUEUE = "(queue)"  # pseudo consumer holding tasks given back, taken before new ones
GIVEN_BACK_IDLE_MS = 10 ** 12  # idle time of a given-back task: any XAUTOCLAIM takes it
FIELD = "task"  # the stream entry's one field: the task JSON
SCAN = 10_000  # PEL entries read per XPENDING (more than any worker holds)
MAX_TASK_CHARS = 1_000_000  # a task JSON this long is not one (they are a few hundred)

KEY_NAMES = ("seen", "untold", "claims", "tasks", "dead", "stats", "state", "workers",
             "workers_seen",
             # docscrawl.distributed.template_counts's and docscrawl.redirects.redis's (reset
             # deletes them)
             "template_pages", "template_counts", "template_settled", "template_sample",
             "redirect_outcomes", "redirect_waits", "redirect_targets")

@dataclass(frozen=True, slots=True)
class Claim:
    """The answer of `claim_and_push`."""

    status: str  # "queued", "duplicate" (claimed before) or "max_pages" (limit reached)
    task_id: str | None = None  # when queued
    owner: str | None = None  # when duplicate: the owner string stored by the first claim

    @property
    def queued(self) -> bool:
        return self.status == "queued"


def missing_group(exc: BaseException) -> bool:
    """True for the error of a stream (or its group) that does not exist yet (or any more)."""
    text = str(exc)
    return "NOGROUP" in text or "no such key" in text


def task_json(task: Mapping[str, Any]) -> str:
    """The stored form of a task (its `task_id` and `deliveries` are Redis's, not stored)."""
    if not isinstance(task.get("url"), str) or not task["url"]:
        raise ValueError(f"a task needs a 'url': {task!r}")
    body = {k: v for k, v in task.items() if k not in ("task_id", "deliveries")}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _task(entry_id: str, fields: dict[str, str], deliveries: int) -> dict[str, Any]:
    """A stream entry as a task. Anyone who can write to Redis can add entries: one this
    code cannot read comes back as `{"unreadable": why}` (with its id, to be acked), never
    as an exception that would leave it leased, and renewed, forever."""
    return {**_body(fields.get(FIELD)), "task_id": entry_id, "deliveries": deliveries}


def _body(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, str):
        return {"unreadable": f"no '{FIELD}' field"}
    if len(raw) > MAX_TASK_CHARS:
        return {"unreadable": f"{len(raw)} characters (at most {MAX_TASK_CHARS})"}
    try:
        body = json.loads(raw)
    except ValueError:
        return {"unreadable": "not JSON"}
    return body if isinstance(body, dict) else {"unreadable": "not a JSON object"}


def _seconds(reply: Any) -> float:
    seconds, micros = reply
    return float(seconds) + float(micros) / 1_000_000


class Plans:
    """The operations of one crawl's shared state (keys `docscrawl:{<crawl_key>}:<name>`)."""

    def __init__(self, crawl_key: str, lease_seconds: float, max_deliveries: int) -> None:
        prefix = f"docscrawl:{{{crawl_key}}}:"
        self.keys = {name: prefix + name for name in KEY_NAMES}
        self.stream = self.keys["tasks"]
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.max_deliveries = max_deliveries

    def _script(self, script: str, keys: list[str], args: list[Any]) -> Command:
        return lambda p: p.eval(script, len(keys), *keys, *args)

    # -- discovery, claims, queueing ---------------------------------------------------

    def first_discovery(self, url: str) -> Plan[bool]:
        (first,) = yield Step([self._script(FIRST_SCRIPT, [self.keys["seen"],
                                                           self.keys["untold"]], [url])])
        return bool(first)

    def one(self, command: Command) -> Plan[Any]:
        """A single command."""
        (reply,) = yield Step([command])
        return reply

    def claim_and_push(self, normalized: str, owner: str, task: Mapping[str, Any],
                       max_pages: int | None, takes_slot: bool) -> Plan[Claim]:
        k = self.keys
        args = [normalized, owner, task_json(task), "" if max_pages is None else int(max_pages),
                "1" if takes_slot else "0"]
        ((status, value),) = yield Step([self._script(
            CLAIM_PUSH_SCRIPT, [k["tasks"], k["state"], k["stats"], k["claims"]], args)])
        if status == "queued":
            return Claim("queued", task_id=str(value))
        if status == "duplicate":
            return Claim("duplicate", owner=str(value))
        return Claim("max_pages")

    def push(self, task: Mapping[str, Any]) -> Plan[str]:
        k = self.keys
        (task_id,) = yield Step([self._script(PUSH_SCRIPT, [k["tasks"], k["state"], k["stats"]],
                                              [task_json(task)])])
        return str(task_id)

    # -- the lease queue -----------------------------------------------------------------

    def take(self, worker: str, count: int) -> Plan[list[dict[str, Any]]]:
        """Up to `count` tasks for `worker`: expired or given-back ones first (XAUTOCLAIM),
        then new ones (XREADGROUP). Each has `task_id` and `deliveries`."""
        expired = yield from self._entries(self._pel(idle=self.lease_ms, count=count))
        pending: list[dict[str, Any]] = []
        claimed: list[Any] = [None, []]
        if expired:  # XAUTOCLAIM scans 10 x count entries: start at the first expired one
            first = expired[0]["message_id"]
            try:
                pending, claimed = yield Step([
                    lambda p: p.xpending_range(self.stream, GROUP, first, "+", count,
                                               idle=self.lease_ms),
                    lambda p: p.xautoclaim(self.stream, GROUP, worker, self.lease_ms, first,
                                           count=count),
                ], atomic=True)
            except Exception as exc:
                if not missing_group(exc):
                    raise
        before = {entry["message_id"]: entry for entry in pending}
        tasks: list[dict[str, Any]] = []
        dead: list[tuple[str, str]] = []
        requeued = 0
        for entry_id, fields in claimed[1]:
            if not fields:
                continue
            info = before.get(entry_id)
            deliveries = int(info["times_delivered"]) + 1 if info else 2
            if info is None or info["consumer"] != QUEUE:
                requeued += 1  # an expired lease (`requeue` counted its own; a graceful
                # release is not a failure and is not counted)
            if deliveries > self.max_deliveries:
                dead.append((entry_id, str(fields.get(FIELD, ""))[:MAX_TASK_CHARS]))
            else:
                tasks.append(_task(entry_id, fields, deliveries))
        commands = self._bury(dead)
        if requeued:
            commands.append(lambda p: p.hincrby(self.keys["stats"], "requeued", requeued))
        fresh = count - len(tasks)
        if fresh > 0:
            commands.append(lambda p: p.xreadgroup(GROUP, worker, {self.stream: ">"},
                                                   count=fresh))
        if not commands:
            return tasks
        try:
            replies = yield Step(commands, atomic=True)
        except Exception as exc:
            if missing_group(exc):
                return tasks  # nothing was ever queued (or the crawl was reset)
            raise
        if fresh > 0:
            for _stream, entries in replies[-1] or ():
                tasks.extend(_task(entry_id, fields, 1) for entry_id, fields in entries
                             if fields)
        return tasks

    def _bury(self, dead: list[tuple[str, str]]) -> list[Command]:
        """Commands moving poison tasks to the dead-letter hash (out of the stream)."""
        if not dead:
            return []
        ids = [entry_id for entry_id, _ in dead]
        mapping = dict(dead)
        return [lambda p: p.hset(self.keys["dead"], mapping=mapping),
                lambda p: p.xack(self.stream, GROUP, *ids),
                lambda p: p.xdel(self.stream, *ids),
                lambda p: p.hincrby(self.keys["stats"], "dead", len(ids))]

    def ack(self, task_id: str) -> Plan[bool]:
        """Done: out of the PEL and the stream. False when it was already acked."""
        _acked, deleted = yield Step(self.ack_commands(task_id), atomic=True)
        return bool(deleted)

    def ack_commands(self, task_id: str) -> list[Command]:
        return [lambda p: p.xack(self.stream, GROUP, task_id),
                lambda p: p.xdel(self.stream, task_id)]

    def _pel(self, *, consumer: str | None = None, task_id: str | None = None,
             idle: int | None = None, count: int = SCAN) -> Command:
        start, end = (task_id, task_id) if task_id else ("-", "+")
        return lambda p: p.xpending_range(self.stream, GROUP, start, end, count,
                                          consumername=consumer, idle=idle)

    def _entries(self, command: Command) -> Plan[list[dict[str, Any]]]:
        try:
            (entries,) = yield Step([command])
        except Exception as exc:
            if missing_group(exc):
                return []
            raise
        return list(entries)

    def extend(self, task_id: str, worker: str | None) -> Plan[bool]:
        """Renew one lease (only its holder's when `worker` is given)."""
        entries = yield from self._entries(self._pel(task_id=task_id))
        if not entries or (worker is not None and entries[0]["consumer"] != worker):
            return False
        (renewed,) = yield Step([self._renew(entries[0])])
        return bool(renewed)

    def _renew(self, entry: dict[str, Any]) -> Command:
        # min-idle = the idle time just read: an entry another worker claimed meanwhile has
        # a smaller one and is left alone. JUSTID: a renewal is not a delivery.
        return lambda p: p.xclaim(self.stream, GROUP, entry["consumer"],
                                  int(entry["time_since_delivered"]),
                                  [entry["message_id"]], justid=True)

    def heartbeat(self, worker: str) -> Plan[int]:
        """The worker is alive: note the time, renew its leases; how many were renewed."""
        time_reply, *rest = yield Step([lambda p: p.time(), lambda p: p.exists(self.stream)])
        entries = (yield from self._entries(self._pel(consumer=worker))) if rest[0] else []
        now = f"{_seconds(time_reply):.6f}"
        replies = yield Step([lambda p: p.hset(self.keys["workers_seen"], worker, now),
                              *(self._renew(entry) for entry in entries)])
        return sum(1 for reply in replies[1:] if reply)

    def requeue_expired(self, now: float | None) -> Plan[int]:
        """Give every expired lease back (to `QUEUE`); how many. `now`: a server time to
        judge expiry by (default: the server's clock)."""
        min_idle = self.lease_ms
        if now is not None:
            (time_reply,) = yield Step([lambda p: p.time()])
            min_idle = max(0, self.lease_ms - int((now - _seconds(time_reply)) * 1000))
        entries = yield from self._entries(self._pel(idle=min_idle))
        entries = [entry for entry in entries if entry["consumer"] != QUEUE]
        if not entries:
            return 0
        replies = yield Step([*(self._give_back(entry, min_idle, entry["times_delivered"])
                                for entry in entries),
                              lambda p: p.hincrby(self.keys["stats"], "requeued", len(entries))],
                             atomic=True)
        return sum(1 for reply in replies[:-1] if reply)

    def _give_back(self, entry: dict[str, Any], min_idle: int, deliveries: int) -> Command:
        return lambda p: p.xclaim(self.stream, GROUP, QUEUE, min_idle, [entry["message_id"]],
                                  idle=GIVEN_BACK_IDLE_MS, retrycount=deliveries, justid=True)

    def release(self, task_ids: tuple[str, ...], worker: str | None) -> Plan[int]:
        """Give leases back at once, by id or every one of `worker`; a graceful release is
        not a failed delivery (its count is lowered again)."""
        if worker is not None:
            entries = yield from self._entries(self._pel(consumer=worker))
        else:
            entries = []
            for task_id in task_ids:
                entries.extend((yield from self._entries(self._pel(task_id=task_id))))
        entries = [entry for entry in entries if entry["consumer"] != QUEUE]
        if not entries:
            return 0
        replies = yield Step([self._give_back(entry, 0, max(0, entry["times_delivered"] - 1))
                              for entry in entries], atomic=True)
        return sum(1 for reply in replies if reply)

    def leases_of(self, worker: str) -> Plan[list[str]]:
        entries = yield from self._entries(self._pel(consumer=worker))
        return sorted(entry["message_id"] for entry in entries)

    def read_tasks(self, task_ids: list[str]) -> Plan[list[dict[str, Any]]]:
        """The tasks (still in the stream) of these ids."""
        if not task_ids:
            return []
        replies = yield Step([_range_of(self.stream, i) for i in task_ids])
        return [_task(entry_id, fields, 0) for reply in replies for entry_id, fields in reply]

    def dead_tasks(self) -> Plan[list[dict[str, Any]]]:
        dead = yield from self.one(lambda p: p.hgetall(self.keys["dead"]))
        return [{**_body(body), "task_id": task_id} for task_id, body in sorted(dead.items())]

    # -- end of crawl ----------------------------------------------------------------------

    def mark_done_if_idle(self, quiet_seconds: float) -> Plan[bool]:
        k = self.keys
        (done,) = yield Step([self._script(IDLE_SCRIPT, [k["tasks"], k["state"]],
                                           [quiet_seconds])])
        return bool(done)

    def reset(self) -> Plan[int]:
        (deleted,) = yield Step([lambda p: p.delete(*self.keys.values())])
        return int(deleted)
