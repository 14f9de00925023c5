"""End to end on real generator output: Debian's packaged Sphinx sites, served on 127.0.0.1.

Skipped when the packages are absent (`.ci/run` installs python-scrapy-doc and
python-pytest-doc). A robots.txt route is added so that robots handling is checked on a
real site: nothing disallowed is fetched, and every disallowed URL found is logged with
its rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import assert_log_invariants, crawl
from tests.support.sitecoverage import html_files, linked_from_start, reached_paths, with_index

pytestmark = pytest.mark.e2e

REAL_SITES = {
    "scrapy": Path("/usr/share/doc/python-scrapy-doc/html"),
    "pytest": Path("/usr/share/doc/python-pytest-doc/html"),
}
ROBOTS = "User-agent: *\nDisallow: /topics/\nDisallow: /how-to/\nAllow: /topics/spiders.html\n"


@pytest.mark.parametrize("name", sorted(REAL_SITES))
def test_real_sphinx_site_is_covered_and_robots_obeyed(name: str, tmp_path: Path) -> None:
    root = REAL_SITES[name]
    if not root.is_dir():
        pytest.skip(f"{root} is not installed")
    routes = {"/robots.txt": {"status": 200, "content_type": "text/plain", "body": ROBOTS}}
    with StaticSite(root, routes=routes) as server:
        output = crawl(f"{server.url}/", tmp_path / "out", timeout=600)
        fetched = set(server.paths)
    assert_log_invariants(output)

    def disallowed(path: str) -> bool:
        return path.startswith(("/topics/", "/how-to/")) and path != "/topics/spiders.html"

    assert not [p for p in fetched if disallowed(p)]
    robot_skips = {e["url"] for e in output.log
                   if e["event"] == "skipped" and e["reason"] == "robots"}
    discovered_disallowed = {e["url"] for e in output.log if e["event"] == "discovered"
                             and disallowed(e["url"].split(server.url, 1)[-1])}
    assert discovered_disallowed, "the site links to disallowed pages"
    assert discovered_disallowed == robot_skips
    assert all(e["rule"].startswith("Disallow: /") for e in output.log
               if e["reason"] == "robots")

    files = {path: f for path, f in html_files(f"{server.url}/", "/", root).items()
             if not disallowed(path)}
    linked = linked_from_start(f"{server.url}/", files)
    reached, _ = reached_paths(output.out)
    reached = with_index(reached)
    assert len(linked & reached) >= 0.99 * len(linked), sorted(linked - reached)[:20]
    canonicals = [p["canonical_url"] for p in output.pages]
    assert len(canonicals) == len(set(canonicals))
    for page in output.pages:  # /x/ and /x/index.html: one record, canonical /x/
        directory = page["canonical_url"].removesuffix("index.html")
        if directory != page["canonical_url"]:
            assert directory not in page["observed_urls"], page["observed_urls"]
