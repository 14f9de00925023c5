"""Page tracks and seen URLs that leave memory (`docscrawl.discovery.trackstore`,
`docscrawl.discovery.seenurls`)
come back unchanged: a crawl that keeps one of each in memory writes the same records as
one that keeps them all."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from docscrawl.demo.server import FixtureServer
from tests.conftest import CrawlOutput, assert_log_invariants, crawl
from tests.support.faultserver import FAULT_SETTINGS, FaultServer, RunningFaultServer

pytestmark = pytest.mark.e2e
SERIAL = {"CONCURRENT_REQUESTS": "1", "DOWNLOAD_MAXSIZE": "100000"}


def _records(output: CrawlOutput, base: str = "") -> dict[str, dict[str, Any]]:
    """What a page record takes from its track, by canonical URL (order-free lists; the
    site's `base` URL replaced, when given)."""
    if base:
        return json.loads(json.dumps(_records(output)).replace(base, "BASE"))
    return {
        page["canonical_url"]: {
            "observed_urls": sorted(page["observed_urls"]),
            "discovery": sorted((d["reason"], d["from"] or "") for d in page["discovery"]),
            "discovery_truncated": page.get("discovery_truncated"),
            "sitemap_lastmod": page.get("sitemap_lastmod"),
            "fetched_url": page.get("fetched_url"),
            "redirect_chain": page.get("redirect_chain"),
            "content_hash": page["content_hash"],
        }
        for page in output.pages
    }


SHORT = {"DOCSCRAWL_TRACKS_IN_MEMORY": "1", "DOCSCRAWL_SEEN_URLS_IN_MEMORY": "1"}


def _stat(output: CrawlOutput, name: str) -> int:
    found = re.search(rf"'docscrawl/{name}': (\d+)", output.result.stderr)
    assert found, output.result.stderr[-2000:]
    return int(found.group(1))


def _spilled(output: CrawlOutput, what: str = "tracks") -> int:
    return _stat(output, f"{what}_spilled")


@pytest.fixture(scope="module")
def pair(demo_site: FixtureServer,
         tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlOutput, CrawlOutput]:
    base = tmp_path_factory.mktemp("spill")
    kept = crawl(f"{demo_site.url}/docs/", base / "kept", settings=SERIAL)
    spilled = crawl(f"{demo_site.url}/docs/", base / "spilled",
                    settings={**SERIAL, **SHORT})
    return kept, spilled


def test_tracks_went_to_disk_only_when_memory_is_short(
        pair: tuple[CrawlOutput, CrawlOutput]) -> None:
    kept, spilled = pair
    assert _spilled(kept) == 0 and _spilled(kept, "seen_urls") == 0
    assert _spilled(spilled) >= len(spilled.pages)
    assert _spilled(spilled, "seen_urls") >= len(spilled.pages)
    assert _stat(spilled, "discovery_deferred") > 0
    # every page's story ended, so no track is still held in memory for it
    assert "'docscrawl/tracks_pinned_at_end': 0" in spilled.result.stderr


def test_records_are_the_same_either_way(pair: tuple[CrawlOutput, CrawlOutput]) -> None:
    kept, spilled = pair
    assert_log_invariants(spilled)
    assert spilled.run["status"] == "finished"
    assert len(kept.pages) > 5
    assert _records(spilled) == _records(kept)


@pytest.fixture(scope="module")
def fault_pair(fault_site_crawl: tuple[CrawlOutput, FaultServer],
               tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlOutput, CrawlOutput]:
    """The fault site (redirect chains, aliases, session ids, a 100,000-link page): the
    session's crawl (tests/e2e/conftest.py), and one of a fresh site with SHORT memory."""
    kept, _ = fault_site_crawl
    with RunningFaultServer() as server:
        spilled = crawl(f"{server.url}/docs/", tmp_path_factory.mktemp("spill-faults") / "out",
                        settings={**FAULT_SETTINGS, **SHORT}, timeout=300)
    spilled.base = server.url  # type: ignore[attr-defined]
    return kept, spilled


def test_fault_site_records_are_the_same_either_way(
        fault_pair: tuple[CrawlOutput, CrawlOutput]) -> None:
    kept, spilled = fault_pair
    assert _spilled(spilled) > 0 and _spilled(spilled, "seen_urls") > 0
    assert_log_invariants(spilled)
    kept_records = _records(kept, kept.base)  # type: ignore[attr-defined]
    spilled_records = _records(spilled, spilled.base)  # type: ignore[attr-defined]
    # A page that only answers after retries may fail in one crawl on a loaded machine
    # (a download timeout): compare the pages both crawls wrote.
    # Pages behind a trap (the endless calendar): which of them are found from where before
    # the trap rule stops the pattern depends on fetch order, not on the track store.
    trapped = _trap_patterns(kept) | _trap_patterns(spilled)
    both = {url for url in kept_records.keys() & spilled_records.keys()
            if _pattern(url) not in trapped}
    assert len(both) > 20
    assert len({url for url in kept_records.keys() ^ spilled_records.keys()
                if _pattern(url) not in trapped}) <= 2
    assert ({url: _without_race(spilled_records[url]) for url in both}
            == {url: _without_race(kept_records[url]) for url in both})


def _pattern(url: str) -> str:
    """The URL's path with digit runs as {n} (record keys spell the site as `BASE`)."""
    return re.sub(r"\d+", "{n}", urlsplit(url.replace("BASE", "http://base", 1)).path)


def _trap_patterns(output: CrawlOutput) -> set[str]:
    """Path patterns (digit runs as {n}) of the URLs the crawl skipped as traps."""
    return {_pattern(e["url"]) for e in output.log
            if e["event"] == "skipped" and e["reason"] == "trap"}


def _without_race(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what concurrency decides: when several URLs serve one page (the
    fault site's `paged?page=N`), whichever is fetched first writes the record, so its
    `fetched_url` is one of the record's observed URLs, not always the same one."""
    fetched = record["fetched_url"]
    if fetched is not None and fetched in record["observed_urls"]:
        return {**record, "fetched_url": "one of observed_urls"}
    return record
