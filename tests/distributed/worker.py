"""A stand-in crawl worker for the multi-process tests: `python -m tests.distributed.worker`.

It pops page tasks in batches (like a Scrapy worker with several requests in flight),
records that it started each one, "fetches" it (sleeps), discovers its links (claim and
push in one step, before the ack) and commits its completion together with the ack.
Graph: page i links to pages (7i+1), (13i+5), (2i+1) and (i+1), modulo the page count.
"""

from __future__ import annotations

import argparse
import os
import time

from docscrawl.distributed import SharedFrontier


def page_url(n: int) -> str:
    return f"https://docs.example/p{n}"


def links(n: int, pages: int) -> list[int]:
    return [(7 * n + 1) % pages, (13 * n + 5) % pages, (2 * n + 1) % pages, (n + 1) % pages]


def page_task(n: int, depth: int, source: str | None) -> dict:
    return {"url": page_url(n), "key": page_url(n), "n": n, "depth": depth,
            "discovery": [{"reason": "in_page", "from": source}]}


def discover(shared: SharedFrontier, worker: str, n: int, depth: int,
             source: str | None) -> None:
    """The admission path of the spider: discovered once, claimed and queued once."""
    url = page_url(n)
    if shared.first_discovery(url):
        shared.claim_and_push(url, f"{worker} {url}", page_task(n, depth, source))


def run(args: argparse.Namespace) -> None:
    shared = SharedFrontier(args.redis_url, args.crawl_key, lease_seconds=args.lease)
    shared.register_worker(args.worker, {"pid": os.getpid()})
    started_key, done_key = f"{args.record}:started", f"{args.record}:completed"
    idle_since = None
    while True:
        batch = []
        for _ in range(args.batch):
            task = shared.pop(args.worker, timeout=0 if batch else 0.1)
            if task is None:
                break
            batch.append(task)
        if not batch:
            if shared.mark_done_if_idle(args.quiet):
                return
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > args.max_idle:
                raise SystemExit(f"{args.worker}: idle for {args.max_idle}s, crawl not over")
            continue
        idle_since = None
        for task in batch:
            shared.redis.rpush(started_key, f"{task['n']} {args.worker}")
            time.sleep(args.work)
            if args.pages:
                for child in links(task["n"], args.pages):
                    discover(shared, args.worker, child, task["depth"] + 1, task["url"])
            with shared.redis.pipeline(transaction=True) as pipe:
                pipe.rpush(done_key, f"{task['n']} {args.worker}")
                shared.ack_in(pipe, task["task_id"])
                pipe.execute()
            shared.heartbeat(args.worker)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--crawl-key", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--record", required=True, help="key prefix for started/completed")
    parser.add_argument("--pages", type=int, default=0, help="follow links of a graph")
    parser.add_argument("--lease", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--work", type=float, default=0.01)
    parser.add_argument("--quiet", type=float, default=0.5)
    parser.add_argument("--max-idle", type=float, default=30.0)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
