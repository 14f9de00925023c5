"""What docscrawl's own extraction pool (`crawl.pool.ExtractPool`) costs the crawler's
process per page: its CPU (the pickling, the socket, the event loop's hand-offs) and its
context switches, beside the worker's CPU and the wall time.

    .venv/bin/python benchmarks/scale/pool_io.py DIR [--pages 400] [--waiting 8]
    PYTHONPATH=OTHER_CHECKOUT .venv/bin/python benchmarks/scale/pool_io.py DIR   # another code

DIR is a site written by `gensite.py` (or any folder of `*.html`: `pool_probe.pages_of`'s
pages). Alternate two checkouts run for run: the host's speed drifts by more than the
difference.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path

try:  # PYTHONPATH names the checkout to measure; else the installed one, else this one
    import docscrawl  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pool_probe import ORIGIN, pages_of  # after docscrawl: the checkout chosen above stays

from docscrawl.crawl import pool as pool_module
from docscrawl.extract.worker import PageJob, WorkerSetup


def jobs_of(site: Path, limit: int) -> list[PageJob]:
    """The jobs of `pages_of`'s pages (every `*.html`, not only the directory indexes: on a
    generated site of 2,000 pages those are 21 large pages)."""
    jobs = []
    for url, body in pages_of(site, limit):
        text = body.decode("utf-8", errors="replace")
        jobs.append(PageJob(url=url, text=text, base_url=url, body_bytes=len(body),
                            extract=True, signals=False))
    return jobs


async def measure(jobs: list[PageJob], waiting: int) -> str:
    pool = pool_module.ExtractPool(1, WorkerSetup(site_url=ORIGIN, profile=None,
                                                  template=None))
    try:
        await pool.run(jobs[0])  # the worker started
        room = asyncio.Semaphore(waiting)

        async def one(job: PageJob) -> None:
            async with room:
                await pool.run(job)

        before, began = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        await asyncio.gather(*(one(job) for job in jobs))
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - began
    finally:
        pool.close()
    worker = resource.getrusage(resource.RUSAGE_CHILDREN)  # its whole life, start-up too
    n = len(jobs)
    own = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return (f"{Path(pool_module.__file__).parents[2]}: crawler {1000 * own / n:.3f} ms a page "
            f"(kernel {1000 * (after.ru_stime - before.ru_stime) / n:.3f}), "
            f"context switches {after.ru_nvcsw - before.ru_nvcsw}"
            f"+{after.ru_nivcsw - before.ru_nivcsw}, worker "
            f"{1000 * (worker.ru_utime + worker.ru_stime) / n:.2f} ms a page, "
            f"wall {1000 * wall / n:.2f} ms a page")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--waiting", type=int, default=8, help="pages awaiting at once")
    args = parser.parse_args(argv)
    jobs = jobs_of(args.site, args.pages)
    if not jobs:
        parser.error(f"no *.html under {args.site}")
    print(asyncio.run(measure(jobs, args.waiting)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
