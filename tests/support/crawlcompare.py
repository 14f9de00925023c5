"""Two crawls of one site compared: a generated docs site to crawl (also served to Scrapyd
in tests/ops/test_scrapyd.py), and a crawl's records without what crawl order and the
clock decide (tests/e2e/test_extract_workers.py, tests/e2e/test_compiled_build.py)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from docscrawl.demo.server import FixtureServer, StaticSite
from docscrawl.export.templates import join_links, template_blocks
from tests.conftest import ROOT, CrawlOutput, read_jsonl

SCALE = ROOT / "benchmarks" / "scale"
PAGES = 60
FILES = ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "changes.jsonl")
ORDER_DEPENDENT = {"retrieved_at", "discovery", "discovery_truncated", "inbound_links"}


@contextmanager
def generated_site(root: Path, pages: int = PAGES, seed: int = 8) -> Iterator[FixtureServer]:
    """A generated docs site of `pages` pages (`benchmarks/scale/gensite.py`), served."""
    if str(SCALE) not in sys.path:
        sys.path.insert(0, str(SCALE))
    import gensite

    gensite.generate(root, pages, seed=seed)
    with StaticSite(root) as server:
        gensite.write_site_files(root, pages, server.url)
        yield server


def stat(output: CrawlOutput, name: str) -> int:
    """The crawl's `docscrawl/NAME` stat (0 when absent)."""
    found = re.search(rf"'docscrawl/{name}': (\d+)", output.result.stderr)
    return int(found.group(1)) if found else 0


def records(output: CrawlOutput, name: str) -> list[str]:
    """The file's records as sorted lines, without what crawl order and the clock decide
    even between two in-crawler crawls: `retrieved_at`, the ways a page was found, its
    inbound links, and which of its links the template learner moved to templates.jsonl
    (joined back here: the page's full link list is compared)."""
    blocks = dict(template_blocks(output.out / "templates.jsonl"))

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            if "template_ids" in value or "links" in value:
                value = {**value, "links": join_links(value, blocks)}
                value.pop("template_ids", None)
                value.pop("template_offsets", None)
            return {k: plain(v) for k, v in value.items() if k not in ORDER_DEPENDENT}
        return [plain(v) for v in value] if isinstance(value, list) else value
    return sorted(json.dumps(plain(record), sort_keys=True)
                  for record in read_jsonl(output.out / name))
