"""Fragment-like query parameters, with real Chromium over a real HTTP server.

fixtures/sites/docsify/ (hand-written) is a Docsify-like site in history mode: 31 client-
rendered pages whose sidebar lists every page and every heading, each heading linked as
`page/?id=slug` (151 such links on every page). Each variant serves the page it names.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer, StaticSite
from docscrawl.render.browser import DEBIAN_CHROMIUM
from tests.conftest import SITES, CrawlOutput, assert_log_invariants, run_crawl

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not os.access(DEBIAN_CHROMIUM, os.X_OK) and
                       not os.environ.get("DOCSCRAWL_CHROMIUM_PATH"),
                       reason="no Chromium: `make system-deps` installs Debian's"),
]
PAGES = 31


@pytest.fixture(scope="module")
def docsify_site() -> Iterator[FixtureServer]:
    with StaticSite(SITES / "docsify") as server:
        yield server


def test_docsify_anchor_parameters_are_skipped_before_any_render(
        docsify_site: FixtureServer, tmp_path: Path) -> None:
    result = run_crawl(docsify_site.url + "/", tmp_path / "out", "render=auto")
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    assert_log_invariants(out)
    assert len(out.pages) == PAGES
    assert all(p["fetch_mode"] == "browser" and p["generator"] == "docsify" for p in out.pages)
    events = Counter(e["event"] for e in out.log)
    assert events["rendered"] <= 1.1 * PAGES, events
    variants = [e for e in out.log if "?id=" in e["url"] and e["event"] != "discovered"]
    assert len(variants) >= 5 * PAGES  # every heading of every page was linked
    assert {(e["event"], e["reason"]) for e in variants} == {("skipped", "duplicate_url")}
    assert {e["param_rule"] for e in variants} == {
        "query parameter id is an in-page anchor of docsify"}
    assert all("?id=" not in e["rule"] for e in variants)  # the page it belongs to
    # What made such a crawl slow (0.12-0.3 pages/s) was fetching and rendering every
    # variant: none reaches the server, and each page is fetched at most twice (the plain
    # fetch that finds it sparse, then the browser's).
    paths = docsify_site.paths
    assert not [path for path in paths if "?id=" in path]
    fetched = Counter(e["url"] for e in out.log if e["event"] == "fetched")
    assert fetched and max(fetched.values()) <= 2, fetched.most_common(3)
