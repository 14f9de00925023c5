"""The crawler's path around extraction, stage by stage, on a fixed set of pages: CPU per
page and a digest of what each stage gives, to compare two checkouts side by side.

    .venv/bin/python benchmarks/scale/path_probe.py DIR [DIR...] [--pages 300] [--reps 3]
    PYTHONPATH=/other/checkout .venv/bin/python /other/checkout/benchmarks/scale/path_probe.py DIR

DIR is a site written by `gensite.py` (or any folder of `*.html` / `*/index.html`). For
each page, in one process: parse (`html_root`), `page_structure` (and `classify` alone on
its inputs), the discovery links (`link_facts`), `extract_page` with a warm template
table (md30's stage, for scale), then the export stage's records (`page_records`),
`chunk_page` and the JSON lines. Each stage's `time.process_time()` is summed over the
pages; the best of `--reps` passes is printed in ms per page. The digest of each stage's
output (links, record lines, chunk lines) must be the same for two checkouts: run the
old and the new one alternately, in separate processes, and compare both.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))  # its sibling pool_probe: the same pages and warm table

from pool_probe import ORIGIN, pages_of, warm_table  # noqa: E402

from docscrawl.chunking.chunker import chunk_page  # noqa: E402
from docscrawl.crawl.items import FetchedPage  # noqa: E402
from docscrawl.discovery.pagetrack import PageTrack  # noqa: E402
from docscrawl.export.records import SHARED_FIELDS, page_id, page_records  # noqa: E402
from docscrawl.extract.page import extract_page, page_structure  # noqa: E402
from docscrawl.extract.regions import classify  # noqa: E402
from docscrawl.extract.template.table import TemplateTable  # noqa: E402
from docscrawl.extract.tree import html_root  # noqa: E402
from docscrawl.extract.worker import link_facts  # noqa: E402
from docscrawl.jsonl import dumps_line, dumps_value  # noqa: E402

STAGES = ("parse", "page_structure", "classify", "link_facts", "extract_page", "records",
          "chunk_page", "json")


class Clock:
    """Process time and an output digest per stage."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.digests = {stage: hashlib.sha256() for stage in STAGES}

    def run(self, stage: str, call: Callable[[], Any], digest: Callable[[Any], str] | None = None,
            ) -> Any:
        start = time.process_time()
        value = call()
        self.seconds[stage] += time.process_time() - start
        if digest is not None:
            self.digests[stage].update(digest(value).encode())
        return value


def one_page(clock: Clock, url: str, text: str, table: TemplateTable) -> None:
    """Every stage of the path for one page."""
    root = clock.run("parse", lambda: html_root(text, url))
    structure = clock.run("page_structure", lambda: page_structure(root, url))
    clock.run("classify", lambda: classify(
        root, generator=structure.profile, main_el=structure.main_el,
        base_url=structure.base_url, index=structure.index),
        lambda rmap: repr(rmap.regions))
    clock.run("link_facts", lambda: link_facts(root, structure), repr)
    ext = clock.run("extract_page", lambda: extract_page(root, url, structure=structure,
                                                         template_table=table))
    page = FetchedPage(track=PageTrack(url, url, 1, [("sidebar", ORIGIN)]), final_url=url,
                       status=200, content_type="text/html", etag=None, last_modified=None,
                       fetch_mode="http", retrieved_at="2026-12-04T00:00:00Z", root=None,
                       extract=ext, content_hash=page_id(ext.markdown), canonical_url=url)
    keep_all = (lambda locator, block: True)  # noqa: E731
    record, structure_record, blocks = clock.run("records", lambda: page_records(page, keep_all))

    def lines() -> str:
        shared = {key: dumps_value(record[key]) for key in SHARED_FIELDS if key in record}
        return dumps_line(record, shared) + dumps_line(structure_record, shared) + "".join(
            block.line(0) for block in blocks)

    chunks = clock.run("chunk_page", lambda: chunk_page(
        ext, page_id=record["id"], canonical_url=url, title=ext.title,
        version=ext.version.value, breadcrumbs=[c.label for c in ext.breadcrumbs],
        retrieved_at=page.retrieved_at, content_hash=record["content_hash"],
        target_tokens=400, max_tokens=None))
    clock.run("json", lambda: lines() + "".join(dumps_line(chunk) for chunk in chunks),
              lambda text: text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="+", type=Path)
    parser.add_argument("--pages", type=int, default=300, help="pages per site")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    bodies = [page for site in args.sites for page in pages_of(site, args.pages)]
    table = warm_table(bodies)
    pages = [(url, body.decode("utf-8", "replace")) for url, body in bodies]
    best: dict[str, float] = {}
    digests: dict[str, str] = {}
    for _ in range(args.reps):
        clock = Clock()
        for url, text in pages:
            one_page(clock, url, text, table)
        for stage, seconds in clock.seconds.items():
            best[stage] = min(best.get(stage, seconds), seconds)
        digests = {stage: h.hexdigest()[:12] for stage, h in clock.digests.items()}
    print(f"{len(pages)} pages, best of {args.reps}: ms per page (output digest)")
    for stage in STAGES:
        print(f"  {stage:15s} {1000 * best[stage] / len(pages):7.3f}  {digests[stage]}")
    mine = sum(best[s] for s in ("page_structure", "link_facts", "records", "chunk_page", "json"))
    print(f"  {'path (no parse, extract, classify twice)':15s} {1000 * mine / len(pages):7.3f}")


if __name__ == "__main__":
    main()
