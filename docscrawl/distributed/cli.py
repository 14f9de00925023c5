"""The operator's command line for a shared crawl (figures from `status`, run by the task queue).

    python -m docscrawl.distributed status  --redis-url redis://host:6379/0 --crawl-key KEY
    python -m docscrawl.distributed workers|requeue|dead|reset  --redis-url ... --crawl-key KEY

`--redis-url` defaults to `$DOCSCRAWL_REDIS_URL`; errors show its password as `***`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from docscrawl.distributed.connect import redact
from docscrawl.distributed.taskqueue import DEFAULT_LEASE_SECONDS, SharedFrontier


def main(argv: list[str] | None = None) -> int:
    """`python -m docscrawl.distributed status|workers|requeue|dead|reset`."""
    parser = argparse.ArgumentParser(prog="python -m docscrawl.distributed",
                                     description="Inspect or repair a distributed crawl.")
    parser.add_argument("action", choices=("status", "workers", "requeue", "dead", "reset"))
    parser.add_argument("--redis-url", default=os.environ.get("DOCSCRAWL_REDIS_URL") or None,
                        required=not os.environ.get("DOCSCRAWL_REDIS_URL"),
                        help="default: $DOCSCRAWL_REDIS_URL (keeps a password off the "
                             "command line)")
    parser.add_argument("--crawl-key", required=True)
    parser.add_argument("--lease", type=float, default=DEFAULT_LEASE_SECONDS)
    parser.add_argument("--yes", action="store_true", help="confirm `reset`")
    args = parser.parse_args(argv)
    try:
        shared: SharedFrontier = SharedFrontier(args.redis_url, args.crawl_key,
                                                lease_seconds=args.lease)
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
        print(redact(f"docscrawl.distributed: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0
