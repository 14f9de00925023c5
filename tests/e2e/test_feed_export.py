"""Scrapy's own feed flag (`-O FILE` / `FEEDS`) writes the page records, as a Scrapy user
expects: the spider's items are the records written to pages.jsonl."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docscrawl.crawl.updaters import UPDATED_AT_END
from docscrawl.demo.server import FixtureServer
from tests.conftest import ROOT, read_jsonl

pytestmark = pytest.mark.e2e


def test_dash_o_feed_carries_the_page_records(demo_site: FixtureServer, tmp_path: Path) -> None:
    out, feed = tmp_path / "out", tmp_path / "feed.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={demo_site.url}/docs/",
         "-a", f"out={out}", "-O", str(feed), "-s", "LOG_LEVEL=WARNING",
         "-s", "DOWNLOAD_MAXSIZE=100000"],
        cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    pages = {p["fetched_url"]: p for p in read_jsonl(out / "pages.jsonl")}
    items = read_jsonl(feed)
    assert len(items) == len(pages) > 5
    for item in items:
        page = pages[item["fetched_url"]]
        # the same record, except what the end of the crawl may update in pages.jsonl
        later = set(UPDATED_AT_END)
        assert {k: v for k, v in item.items() if k not in later} == \
               {k: v for k, v in page.items() if k not in later}
        assert item["markdown"] and item["content_hash"].startswith("sha256:")
