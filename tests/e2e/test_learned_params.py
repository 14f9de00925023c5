"""A query parameter whose variants keep serving the same page is learned as a fragment.

fixtures/sites/params/ (hand-written Sphinx pages): search-result links add
`?highlight=word`. The first two variants (depth 1) are fetched and found `same_content`;
the three met later (depth 3) are skipped as `duplicate_url` before any fetch.
"""

from __future__ import annotations

from pathlib import Path

from docscrawl.demo.server import StaticSite
from tests.conftest import SITES, CrawlOutput, assert_log_invariants, run_crawl


def test_highlight_variants_are_learned_then_skipped(tmp_path: Path) -> None:
    with StaticSite(SITES / "params") as server:
        result = run_crawl(server.url + "/docs/", tmp_path / "out", "render=never",
                           settings={"CONCURRENT_REQUESTS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    assert_log_invariants(out)
    fetched = {e["url"].rsplit("/", 1)[1] for e in out.log if e["event"] == "fetched"}
    assert {"a.html?highlight=install", "b.html?highlight=config"} <= fetched
    assert not [u for u in fetched if "highlight" in u and u[0] in "ef"]
    skipped = {e["url"].rsplit("/", 1)[1]: e for e in out.log
               if e["event"] == "skipped" and e["reason"] == "duplicate_url"}
    assert set(skipped) == {"e.html?highlight=deploy", "f.html?highlight=tuning",
                            "f.html?highlight=cache"}
    rule = "query parameter highlight: 2 values served the same content"
    assert {e["param_rule"] for e in skipped.values()} == {rule}
    assert {e["rule"].rsplit("/", 1)[1] for e in skipped.values()} == {"e.html", "f.html"}
    assert len(out.pages) == 7
