"""Distributed mode: several `scrapy crawl docs` workers share one crawl through Redis.

- `streams`: the Redis operations (a Stream with one consumer group is the page queue; its
  pending-entries list is the lease), written once as plans;
- `taskqueue`: the Redis task queue: `SharedFrontier` (blocking client) and
  `AsyncSharedFrontier` (redis.asyncio) run those plans;
- (`RedisAdmission`, the spider's admission in distributed mode, lives beside the local
  one in `docscrawl.admission`; the shared redirect waits in `docscrawl.redirects`);
- `worker`: the worker's side of the queue (taking tasks, heartbeats, acks, the end);
- `status`: figures for the person on call (plans); `cli`: `python -m docscrawl.distributed`;
- `tasks`: page tracks <-> queued tasks.

Importing this package imports neither Scrapy nor redis (`redis_installed()` checks first).
"""

from docscrawl.distributed.cli import main
from docscrawl.distributed.streams import Claim
from docscrawl.distributed.taskqueue import (
    DEFAULT_LEASE_SECONDS,
    REDIS_MISSING,
    AsyncSharedFrontier,
    SharedFrontier,
    redis_installed,
)
from docscrawl.distributed.tasks import task_from_track, track_from_task

__all__ = ["DEFAULT_LEASE_SECONDS", "REDIS_MISSING", "AsyncSharedFrontier", "Claim",
           "SharedFrontier", "main", "redis_installed", "task_from_track", "track_from_task"]
