"""Would a process pool for extraction win? Per-page CPU of the work that could move to a
second core, and what moving it costs in the crawler's own process.

    .venv/bin/python benchmarks/scale/pool_probe.py DIR [--pages 400] [--workers 1]

DIR is a site written by `gensite.py` (or any folder of `*.html` / `*/index.html`). For
each page, in one process: parse (`html_root`), `page_structure`, discovery links and
`extract_page` with a warm template table: the work a worker would take over (parse once,
then links and extraction from the same tree). Then the cost of the hand-off: pickling
what a worker must return (the `PageExtract` and the found links) and unpickling it in the
crawler. Last, the same pages through a real `ProcessPoolExecutor`, measuring the parent's
CPU (what stays on the crawler's core), the workers' CPU and the wall time, beside the
same pages done in-process and through a thread pool (the GIL lets only libxml2's parse
overlap). Prints ms per page; compare with `run.py`'s bare Scrapy CPU
per page: the crawler's share must come under bare's for a pool to beat it on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from docscrawl.extract.links import discovery_links  # noqa: E402
from docscrawl.extract.page import extract_page, page_structure  # noqa: E402
from docscrawl.extract.template.table import TemplateTable  # noqa: E402
from docscrawl.extract.tree import html_root  # noqa: E402

_TABLE: TemplateTable | None = None
ORIGIN = "http://127.0.0.1:8000/"


def pages_of(site: Path, limit: int) -> list[tuple[str, bytes]]:
    """(URL, body) of up to `limit` pages, in a stable order."""
    files = sorted(site.rglob("*.html"))[:limit]
    return [(ORIGIN + str(path.relative_to(site)), path.read_bytes()) for path in files]


def columns(pages: list[tuple[str, bytes]]) -> tuple[list[str], list[bytes]]:
    """URLs and bodies, as `Executor.map` takes them."""
    return [url for url, _ in pages], [body for _, body in pages]


def warm_table(pages: list[tuple[str, bytes]]) -> TemplateTable:
    """A template table learned from the first 12 pages and frozen, as a crawl's is."""
    table = TemplateTable()
    for url, body in pages[:12]:
        table.observe(extract_page(html_root(body.decode("utf-8", "replace"), url),
                                   url).signatures)
    table.freeze()
    return table


def _init(table: TemplateTable) -> None:
    global _TABLE
    _TABLE = table


def work(url: str, body: bytes) -> tuple[list[tuple[str, str]], Any]:
    """What a worker would do for one page: parse once, links and extraction."""
    root = html_root(body.decode("utf-8"), url)
    structure = page_structure(root, url)
    links = [(link.url, link.region) for link in
             discovery_links(root, structure.base_url, region_map=structure.regions)]
    return links, extract_page(root, url, structure=structure, template_table=_TABLE)


def work_pickled(url: str, body: bytes) -> bytes:
    return pickle.dumps(work(url, body), protocol=pickle.HIGHEST_PROTOCOL)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stages(pages: list[tuple[str, bytes]], table: TemplateTable) -> dict[str, float]:
    """Median ms per page of each stage, in this process."""
    times: dict[str, list[float]] = {k: [] for k in (
        "parse", "structure", "links", "extract", "pickle", "unpickle", "result_kb")}
    for url, body in pages:
        t0 = time.process_time()
        root = html_root(body.decode("utf-8"), url)
        t1 = time.process_time()
        structure = page_structure(root, url)
        t2 = time.process_time()
        links = [(link.url, link.region) for link in
                 discovery_links(root, structure.base_url, region_map=structure.regions)]
        t3 = time.process_time()
        extract = extract_page(root, url, structure=structure, template_table=table)
        t4 = time.process_time()
        blob = pickle.dumps((links, extract), protocol=pickle.HIGHEST_PROTOCOL)
        t5 = time.process_time()
        pickle.loads(blob)
        t6 = time.process_time()
        for key, value in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5),
                              strict=False):
            times[key].append(1000 * value)
        times["result_kb"].append(len(blob) / 1024)
    return {key: statistics.mean(values) for key, values in times.items()}


def pooled(pages: list[tuple[str, bytes]], table: TemplateTable,
           workers: int) -> dict[str, float]:
    """The pages through a process pool: parent CPU, worker CPU, wall, per page."""
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(table,)) as pool:
        list(pool.map(work_pickled, *columns(pages[:workers * 4])))  # start the workers
        c0, k0, w0 = cpu(), children_cpu(), time.monotonic()
        for blob in pool.map(work_pickled, *columns(pages), chunksize=1):
            pickle.loads(blob)
        wall = time.monotonic() - w0
        parent = cpu() - c0
    worker = children_cpu() - k0  # counted when the workers are reaped
    n = len(pages)
    return {"parent_ms": 1000 * parent / n, "workers_ms": 1000 * worker / n,
            "wall_ms": 1000 * wall / n}


def threaded(pages: list[tuple[str, bytes]], table: TemplateTable,
             workers: int) -> dict[str, float]:
    """The pages through a thread pool (what Scrapy's reactor thread pool would give):
    only the GIL-free part (libxml2's parse) can overlap."""
    _init(table)
    with ThreadPoolExecutor(workers) as pool:
        c0, w0 = cpu(), time.monotonic()
        list(pool.map(work, *columns(pages)))
        wall = time.monotonic() - w0
    n = len(pages)
    return {"cpu_ms": 1000 * (cpu() - c0) / n, "wall_ms": 1000 * wall / n}


def inline(pages: list[tuple[str, bytes]], table: TemplateTable) -> dict[str, float]:
    _init(table)
    c0, w0 = cpu(), time.monotonic()
    for url, body in pages:
        work(url, body)
    n = len(pages)
    return {"cpu_ms": 1000 * (cpu() - c0) / n, "wall_ms": 1000 * (time.monotonic() - w0) / n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--reps", type=int, default=2, help="alternating inline/pool pairs")
    args = parser.parse_args(argv)
    pages = pages_of(args.site, args.pages)
    table = warm_table(pages)
    print(f"{len(pages)} pages, load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cpus")
    for key, value in stages(pages, table).items():
        print(f"  {key:10} {value:7.2f}")
    for rep in range(args.reps):
        order = ("inline", "pool", "threads")
        for kind in order if rep % 2 == 0 else reversed(order):
            result = (inline(pages, table) if kind == "inline"
                      else pooled(pages, table, args.workers) if kind == "pool"
                      else threaded(pages, table, max(2, args.workers)))
            print(f"  {kind:6} " + "  ".join(f"{k} {v:.2f}" for k, v in result.items()),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
