"""Redirect waits shared by the workers of a distributed crawl (Redis).

In one process, a redirect source waits in the crawl log for the outcome of the page its
chain leads to (`docscrawl.redirects.local`). With several workers, the target may be
fetched by another worker, before or after the source: the wait moves to Redis, keyed by
the target's page key (its normalized URL, the key pages are claimed under), so each
source ends once, with the same event and fields as in one process:

- `redirected` asks Redis, in one script: the target's outcome when it already ended (the
  source ends now), a `redirect_loop` when the wait would close a circle of sources
  waiting on each other, else it leaves the source waiting there. A waiting source is
  passed on: its task is acknowledged, and whichever worker ends the target ends it.
- `ended` (an outcome hook of the crawl log) publishes the outcome of every page key a
  worker ends (its tasks, the sources it ends, the redirect targets it refuses) and ends
  the sources that waited for it, which publishes theirs in turn, along the chain. The
  crawl log calls it before the task is acknowledged, and the waiters leave Redis only
  once their events are written: a worker killed in between leaves them to the worker
  that fetches the page again (at worst a source ends twice, in two parts, which
  `docscrawl merge` reduces to one).
- `leftovers`, once the whole crawl is over: a source whose target never ended fails
  `redirect_target_failed`, as in one process.

The scripts run on the worker's asyncio client, as jobs of its `Serial`
(`docscrawl.distributed.serial`): never blocking the reactor, in order with its other calls.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from docscrawl.redirects.base import Outcome, Waiter, source_outcome
from docscrawl.vocab import Event, FailReason

if TYPE_CHECKING:
    from docscrawl.crawl.crawllog import CrawlLog

__all__ = ["KEY_NAMES", "SharedRedirects"]

KEY_NAMES = ("redirect_outcomes", "redirect_waits", "redirect_targets")
MAX_CIRCLE = 64  # sources followed when looking for a circle
RULE_CHARS = 300  # of a published outcome's rule
Job = Callable[[], Awaitable[object]]

# KEYS: outcomes waits targets  ARGV: target_key source_key source_url waiter max_steps
WAIT_SCRIPT = """
local done = redis.call('HGET', KEYS[1], ARGV[1])
if done then return {'outcome', done} end
local circle = {ARGV[3]}
local node = ARGV[1]
for i = 1, tonumber(ARGV[5]) do
  if node == ARGV[2] then return {'loop', cjson.encode(circle)} end
  local edge = redis.call('HGET', KEYS[3], node)
  if not edge then break end
  edge = cjson.decode(edge)
  table.insert(circle, edge['u'])
  node = edge['t']
end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return {'waiting', ''} end
redis.call('HSET', KEYS[3], ARGV[2], cjson.encode({t = ARGV[1], u = ARGV[3]}))
local list = redis.call('HGET', KEYS[2], ARGV[1])
list = list and cjson.decode(list) or {}
table.insert(list, ARGV[4])
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(list))
return {'waiting', ''}
"""

# KEYS: outcomes waits  ARGV: key outcome. The waiters stay until `RELEASED_SCRIPT`.
ENDED_SCRIPT = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local list = redis.call('HGET', KEYS[2], ARGV[1])
if not list then return {} end
return cjson.decode(list)
"""

# KEYS: waits targets  ARGV: key
RELEASED_SCRIPT = """
local list = redis.call('HGET', KEYS[1], ARGV[1])
if not list then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
for _, w in ipairs(cjson.decode(list)) do redis.call('HDEL', KEYS[2], cjson.decode(w)['k']) end
return 1
"""

# KEYS: waits targets
LEFTOVERS_SCRIPT = """
local all = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
local found = {}
for i = 2, #all, 2 do
  for _, w in ipairs(cjson.decode(all[i])) do table.insert(found, w) end
end
return found
"""


class SharedRedirects:
    """`Redirects` of one worker: its side of the shared waits (see module docstring).

    `client` is an asyncio Redis client: the script calls are coroutines, run as jobs of the
    worker's `Serial` (`submit`), so none blocks the reactor and they keep the order of the
    crawl's other Redis calls (an outcome is published before its task's ack)."""

    def __init__(self, client: Any, crawl_key: str, log: CrawlLog,
                 key_of: Callable[[str], str], submit: Callable[[Job], None]) -> None:
        prefix = f"docscrawl:{{{crawl_key}}}:"
        self._keys = [prefix + name for name in KEY_NAMES]
        self._log = log
        self._key_of = key_of
        self._submit = submit
        self._page_keys: dict[str, str] = {}  # URL this worker will end -> its page key
        self._unpublished: deque[tuple[str, Outcome]] = deque()
        self.asking: set[str] = set()  # sources whose wait is not answered yet
        self._wait = client.register_script(WAIT_SCRIPT)
        self._ended = client.register_script(ENDED_SCRIPT)
        self._released = client.register_script(RELEASED_SCRIPT)
        self._leftovers = client.register_script(LEFTOVERS_SCRIPT)
        log.outcome_hooks.append(self.ended)

    def fetching(self, url: str, key: str) -> None:
        """This worker fetches `url`, the page of `key`: it publishes how it ends."""
        self._page_keys[url] = key

    def redirected(self, source: str, source_key: str, target: str, *, reason: str,
                   status: int | None, chain: tuple[str, ...]) -> None:
        """`source` (the page of `source_key`) redirects to `target`: end it with the
        target's outcome, now or when some worker ends the target."""
        self.asking.add(source)

        async def job() -> None:
            try:
                await self._ask(Waiter(source, reason, status, chain), source_key, target)
            finally:
                self.asking.discard(source)
        self._submit(job)

    async def _ask(self, waiter: Waiter, source_key: str, target: str) -> None:
        source = waiter.source
        known = self._log.outcome_of(target)  # ended here, recently (not as an alias)
        if known is not None and known.reason != "duplicate_url":
            await self._end(waiter, source_key, known)
            return
        data = json.dumps({"s": source, "k": source_key, "t": target, "r": waiter.reason,
                           "st": waiter.status, "c": list(waiter.chain)})
        kind, value = await self._wait(keys=self._keys, args=[
            self._key_of(target), source_key, source, data, MAX_CIRCLE])
        if kind == "outcome":
            await self._end(waiter, source_key, _outcome(value))
        elif kind == "loop":
            circle = json.loads(value)
            self._page_keys[source] = source_key
            self._log.record(source, Event.FAILED, reason=FailReason.REDIRECT_LOOP,
                             rule=f"{len(circle)} URLs redirect in a circle",
                             status=waiter.status, redirect_chain=circle)
            await self.flush()
        else:
            self._page_keys.pop(source, None)
            self._log.passed_on(source)

    async def refused_target(self, url: str, reason: str | None, rule: str | None) -> None:
        """A redirect target refused by a policy (robots.txt, file type...): publish it,
        whether this worker or the one that discovered it first logs the refusal."""
        await self._publish(self._key_of(url), Outcome(url, "skipped", reason, rule))

    def ended(self, outcome: Outcome) -> None:
        """Crawl-log outcome hook: publish the outcome of a page key this worker ends (a
        job submitted before the terminal hooks submit the task's ack)."""
        key = self._page_keys.pop(outcome.url, None)
        if key is not None:
            self._unpublished.append((key, outcome))
            self._submit(self.flush)

    async def flush(self) -> None:
        """Publish the outcomes ended here and not published yet."""
        while self._unpublished:
            await self._publish(*self._unpublished.popleft())

    async def leftovers(self) -> int:
        """The crawl is over: sources whose target never ended fail. Returns how many."""
        waiters = await self._leftovers(keys=self._keys[1:])
        for data in waiters:
            waiter, key, target = _waiter(data)
            await self._end(waiter, key, Outcome(
                target, "failed", "redirect_target_failed",
                "the redirect target ended without a page"))
        return len(waiters)

    async def _publish(self, key: str, outcome: Outcome) -> None:
        data = json.dumps({"u": outcome.url, "e": outcome.event, "r": outcome.reason,
                           "ru": (outcome.rule or "")[:RULE_CHARS] or None,
                           "st": outcome.status, "p": outcome.page, "c": list(outcome.chain)})
        waiting = await self._ended(keys=self._keys[:2], args=[key, data])
        for entry in waiting:
            waiter, source_key, _ = _waiter(entry)
            await self._end(waiter, source_key, outcome)
        if waiting:  # only now: a worker killed before this leaves them to the next one
            await self._released(keys=self._keys[1:], args=[key])

    async def _end(self, waiter: Waiter, source_key: str, outcome: Outcome) -> None:
        """End a source with its target's outcome and publish the source's own (along the
        chain, before the waiters it ends leave Redis)."""
        self._page_keys[waiter.source] = source_key
        event, fields = source_outcome(waiter, outcome)
        if not self._log.record(waiter.source, event, **fields):
            self._page_keys.pop(waiter.source, None)
        await self.flush()


def _outcome(data: str) -> Outcome:
    d = json.loads(data)
    return Outcome(d["u"], d["e"], d["r"], d["ru"], d["st"], d["p"], tuple(d["c"]))


def _waiter(data: str) -> tuple[Waiter, str, str]:
    """A waiter, its page key and its target."""
    d = json.loads(data)
    return Waiter(d["s"], d["r"], d["st"], tuple(d["c"])), d["k"], d["t"]
