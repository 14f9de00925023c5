"""The export stage alone (`ExportPipeline._write_fresh`): CPU per page and a digest of the
files it writes, on a fixed set of extracted pages, to compare two checkouts.

    .venv/bin/python benchmarks/scale/export_probe.py DIR [DIR...] [--pages 300] [--reps 3]
    PYTHONPATH=/other/checkout .venv/bin/python /other/checkout/benchmarks/scale/export_probe.py DIR

DIR is a site written by `gensite.py` (or any folder of `*.html` / `*/index.html`). The
pages are extracted once, untimed, as the crawl's stages before export would (a warm
template table, the template tracker's region verdicts, the dedup stage's content hash);
then each pass opens a new crawl session in a temporary folder and hands every page to a
real `ExportPipeline`, timing only its `process_item` with `time.process_time()`. Printed:
the best pass in ms per page, and the sha256 of pages, structure, chunks, templates and
changes JSONL and of the state's rows, which two checkouts must share (run them
alternately, in separate processes).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))  # its sibling pool_probe: the same pages and warm table

from pool_probe import ORIGIN, pages_of, warm_table  # noqa: E402

from docscrawl.config import CrawlConfig  # noqa: E402
from docscrawl.crawl.items import FetchedPage  # noqa: E402
from docscrawl.crawl.session import CrawlSession  # noqa: E402
from docscrawl.dedup.content import content_hash  # noqa: E402
from docscrawl.discovery.pagetrack import PageTrack  # noqa: E402
from docscrawl.export import pipeline as export_pipeline  # noqa: E402
from docscrawl.export.pipeline import ExportPipeline  # noqa: E402
from docscrawl.extract.links import discovery_links  # noqa: E402
from docscrawl.extract.model import PageExtract  # noqa: E402
from docscrawl.extract.page import extract_page, page_structure  # noqa: E402
from docscrawl.extract.template.tracker import TemplateTracker, apply_reclassifications  # noqa: E402
from docscrawl.extract.tree import html_root  # noqa: E402

# What `--parts` times inside the stage: names in `docscrawl.export.pipeline`, and methods
PARTS = ("page_records", "chunk_page", "dumps_value", "dumps_line", "encode_value",
         "encode_line")
METHODS = (("docscrawl.export.templates", "TemplateWriter", "write"),
           ("docscrawl.dedup.aggregates", "AggregateTracker", "observe"),
           ("docscrawl.incremental.recrawl", "Incremental", "fresh"),
           ("docscrawl.crawl.crawllog", "CrawlLog", "record"),
           ("docscrawl.jsonl", "JsonlWriter", "write_raw"),
           ("docscrawl.jsonl", "JsonlWriter", "write_joined"))
FILES = ("pages.jsonl", "structure.jsonl", "chunks.jsonl", "templates.jsonl", "changes.jsonl")


@dataclass
class Extracted:
    """What the stages before export leave on one page."""

    url: str
    extract: PageExtract
    locators: frozenset[str]
    links: list[tuple[str, str, int]]
    size: int

    def item(self) -> FetchedPage:
        """A new item for the page (export drops the item's extract once written)."""
        track = PageTrack(self.url, self.url, 1, [("sidebar", ORIGIN)])
        return FetchedPage(
            track=track, final_url=self.url, status=200, content_type="text/html",
            etag=None, last_modified=None, fetch_mode="http",
            retrieved_at="2026-12-04T00:00:00.000Z", root=None, elapsed_ms=12.5,
            size=self.size, body_digest=content_hash(self.url), extract=self.extract,
            content_hash=content_hash(self.extract.markdown), canonical_url=self.url,
            found_links=self.links, template_locators=self.locators)


def extracted(sites: list[Path], limit: int) -> list[Extracted]:
    """The pages of `sites`, extracted, with their template verdicts."""
    bodies = [page for site in sites for page in pages_of(site, limit)]
    table = warm_table(bodies)
    tracker = TemplateTracker(min_pages=3)
    out = []
    for url, body in bodies:
        root = html_root(body.decode("utf-8", "replace"), url)
        structure = page_structure(root, url)
        links = [(link.url, link.region, rank) for rank, link in enumerate(
            discovery_links(root, structure.base_url, region_map=structure.regions))]
        ext = extract_page(root, url, structure=structure, template_table=table)
        changes = tracker.observe(url, ext.regions)
        apply_reclassifications(ext, changes)
        out.append(Extracted(url, ext, frozenset(c.locator for c in changes), links,
                             len(body)))
    return out


def one_pass(pages: list[Extracted]) -> tuple[float, dict[str, str]]:
    """CPU seconds of export over the pages, and the digests of what it wrote."""
    with tempfile.TemporaryDirectory(prefix="export-probe-") as tmp:
        session = CrawlSession(CrawlConfig(site=ORIGIN, out_dir=Path(tmp)))
        pipeline = ExportPipeline(session.parts, chunk_tokens=400, chunk_max=None)
        seconds = 0.0
        for page in pages:
            item = page.item()
            start = time.process_time()
            pipeline.process_item(item)
            seconds += time.process_time() - start
        parts = session.parts
        parts.outputs.close()
        parts.outputs.templates.close()
        parts.incremental.changes.close()
        run_dir = parts.outputs.run_dir
        digests = {name: hashlib.sha256((run_dir / name).read_bytes()).hexdigest()[:16]
                   for name in FILES}
        digests["state rows"] = _state_digest(parts.incremental.store.path)
        parts.incremental.close()
        parts.ledger.close()
    return seconds, digests


def _state_digest(path: Path) -> str:
    """sha256 of the state's page rows and aliases, in key order (the run and the time
    each was stored left out: new each pass)."""
    digest = hashlib.sha256()
    with sqlite3.connect(path) as db:
        for query in ("SELECT canonical_url, etag, last_modified, content_hash, body_hash,"
                      " chunk_ids, discovery_links FROM pages ORDER BY canonical_url",
                      "SELECT url, canonical_url FROM url_aliases ORDER BY url"):
            for row in db.execute(query):
                digest.update(repr(row).encode())
    return digest.hexdigest()[:16]


class Parts:
    """Process time spent in each part of the stage (`--parts`), by wrapping it."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return call(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - start
        return timed

    def install(self) -> None:
        for name in PARTS:  # those the checkout's stage calls
            if hasattr(export_pipeline, name):
                setattr(export_pipeline, name, self.wrap(name, getattr(export_pipeline, name)))
        for module, cls, method in METHODS:
            owner = getattr(importlib.import_module(module), cls)
            setattr(owner, method, self.wrap(f"{cls}.{method}", getattr(owner, method)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="+", type=Path)
    parser.add_argument("--pages", type=int, default=300, help="pages per site")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--parts", action="store_true",
                        help="also time the parts of the stage (wrapped: adds overhead)")
    args = parser.parse_args()
    pages = extracted(args.sites, args.pages)
    gc.freeze()  # as the crawl does (`extensions.gctuning`): the pages held are not scanned
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    parts = Parts()
    if args.parts:
        parts.install()
    times: list[float] = []
    digests: dict[str, str] = {}
    for _ in range(args.reps):
        seconds, found = one_pass(pages)
        if digests and found != digests:
            raise SystemExit(f"two passes wrote different files: {digests} {found}")
        digests = found
        times.append(seconds)
    print(f"{len(pages)} pages: export {1000 * min(times) / len(pages):.3f} ms a page "
          f"(best of {args.reps}; all {', '.join(f'{1000 * t / len(pages):.3f}' for t in times)})")
    for name, digest in digests.items():
        print(f"  {name:16s} {digest}")
    for name, seconds in parts.seconds.items():  # nested parts count in each (dumps_value)
        print(f"  {name:30s} {1000 * seconds / len(pages) / args.reps:7.3f} ms a page (mean)")


if __name__ == "__main__":
    main()
