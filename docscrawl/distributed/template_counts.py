"""The template table's counters in Redis, shared by the workers of a distributed crawl.

Every worker adds the pages it extracts and reads the sums back, so all workers judge
pages by one table: the same site template is left out of every page whichever worker
fetched it (`docscrawl.extract.template.table`). A page counts once (its `page_key`, in
a set): a task re-delivered after a worker died, or a duplicate URL, is not counted again.
The keys live beside the shared frontier's (`docscrawl.distributed.KEY_NAMES`), so a
crawl's `reset` deletes them too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["SharedTemplateCounts"]

# KEYS: pages counts settled   ARGV: page key ("" for none), n settled, settled..., signatures...
# -> 1 when the page was new
ADD_SCRIPT = """
local n = tonumber(ARGV[2])
for i = 3, 2 + n do redis.call('SADD', KEYS[3], ARGV[i]) end
if ARGV[1] == '' or redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
for i = 3 + n, #ARGV do redis.call('HINCRBY', KEYS[2], ARGV[i], 1) end
return 1
"""
PRUNE_BATCH = 1000


class SharedTemplateCounts:
    """`add`/`snapshot`/`sample` over four Redis keys: the set of counted
    pages, the hash of counters, the set of settled keys, the warm-up sample (JSON)."""

    def __init__(self, redis: Redis, keys: Mapping[str, str]) -> None:
        """`keys`: the crawl's key names (`SharedFrontier.keys`)."""
        self.redis = redis
        self.pages_key = keys["template_pages"]
        self.counts_key = keys["template_counts"]
        self.settled_key = keys["template_settled"]
        self.sample_key = keys["template_sample"]
        self._add = redis.register_script(ADD_SCRIPT)

    def add(self, key: int | None, signatures: Iterable[int], settles: Iterable[int] = ()
            ) -> bool:
        """Mark `settles` done; count one page's signatures unless that page (`key`) was
        counted. True when counted."""
        settled = [f"{k:016x}" for k in settles]
        args = ["" if key is None else f"{key:016x}", str(len(settled)), *settled,
                *(f"{s:016x}" for s in set(signatures))]
        keys = [self.pages_key, self.counts_key, self.settled_key]
        return bool(self._add(keys=keys, args=args))

    def snapshot(self) -> tuple[set[int], set[int], dict[int, int]]:
        """(pages counted, keys settled, signature -> pages) as every worker added them."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.smembers(self.pages_key)
            pipe.smembers(self.settled_key)
            pipe.hgetall(self.counts_key)
            pages, settled, counts = pipe.execute()
        return ({int(k, 16) for k in pages}, {int(k, 16) for k in settled},
                {int(s, 16): int(n) for s, n in counts.items()})

    def sample(self, urls: list[str] | None = None) -> list[str] | None:
        """The crawl's warm-up sample (`template.warmup`): `urls` is stored unless one
        was stored first; returns the stored one (None when nobody stored one)."""
        if urls is not None:
            self.redis.set(self.sample_key, json.dumps(urls), nx=True)
        stored = self.redis.get(self.sample_key)
        return json.loads(stored) if stored else None

    def forget_below(self, pages: int) -> int:
        """Delete the counters seen on fewer than `pages` pages (bounded memory)."""
        _, _, counts = self.snapshot()
        rare = [f"{s:016x}" for s, n in counts.items() if n < pages]
        for i in range(0, len(rare), PRUNE_BATCH):
            self.redis.hdel(self.counts_key, *rare[i:i + PRUNE_BATCH])
        return len(rare)
