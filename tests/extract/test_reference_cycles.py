"""A page's work leaves no reference cycles: its tree, region map and links are freed when
their last reference goes, not when the cyclic collector next runs.

The crawl runs that collector rarely (`collector.tune`: every 50,000 allocations, in the
worker too), and it does not count lxml's memory, so a cycle holding a parsed page keeps
its tree alive across many pages. The compiled build (docs/compiled.md) once made such a
cycle of a closure (`links.discovery_links`): its worker held 40-80 MB more. The
compiled-build test runs this file against the C extensions too.
"""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

from docscrawl.chunking.chunker import chunk_page
from docscrawl.extract.page import extract_page
from docscrawl.extract.template.table import TemplateTable
from docscrawl.extract.tree import html_root
from docscrawl.extract.worker import PageJob, Worker, WorkerSetup, page_facts
from tests.conftest import ROOT

PAGES = sorted((ROOT / "fixtures").glob("**/*.html"))
SITE = "http://127.0.0.1:8000/docs/"


def _url(path: Path) -> str:
    return SITE + path.relative_to(ROOT / "fixtures").as_posix()


def _table() -> dict[str, object]:
    """A frozen template table learned from the fixture pages, as a crawl's warm-up does."""
    table = TemplateTable()
    for path in PAGES[:12]:
        url = _url(path)
        table.observe(extract_page(html_root(path.read_text(errors="replace"), url),
                                   url).signatures)
    table.freeze()
    return table.to_json()


def test_a_page_leaves_no_reference_cycles() -> None:
    assert len(PAGES) > 100
    worker = Worker(WorkerSetup(site_url=SITE, profile=None, template=_table()))
    jobs = [PageJob(_url(p), p.read_text(errors="replace"), _url(p), p.stat().st_size, True)
            for p in PAGES]
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds stays in gc.garbage
    try:
        extracted = 0
        for job in jobs:
            facts = page_facts(job, worker)
            if facts.extract is not None:
                extracted += 1
                chunk_page(facts.extract, page_id="p", canonical_url=job.url, title=None,
                           version=None, breadcrumbs=[], retrieved_at="2026-12-05T00:00:00Z",
                           content_hash="h")
            del facts
        found = gc.collect()
        kinds = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    assert extracted > 100
    assert found == 0, kinds.most_common(12)
