"""One crawl of the fault site for the session: test_faults checks its outcomes and
test_track_spill compares it with a crawl that keeps its page tracks on disk. Both files
run on one xdist worker (`SHARE_A_WORKER` in tests/conftest.py), so it is crawled once."""

from __future__ import annotations

import pytest

from tests.conftest import CrawlOutput, crawl
from tests.support.faultserver import FAULT_SETTINGS, FaultServer, RunningFaultServer


@pytest.fixture(scope="session")
def fault_site_crawl(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[CrawlOutput, FaultServer]:
    """(output, stopped server) of a crawl of a fresh fault site with FAULT_SETTINGS: the
    output's `base` is the site's URL, its `peak_mb` the crawl's peak RSS (its largest
    process: the crawler, or a worker or browser it started); the server keeps the
    requests it answered."""
    out = tmp_path_factory.mktemp("faults") / "out"
    peak = out.with_name("peak_rss_kib")
    with RunningFaultServer() as server:
        output = crawl(f"{server.url}/docs/", out, settings=FAULT_SETTINGS, timeout=300,
                       peak_rss=peak)
    output.base = server.url  # type: ignore[attr-defined]
    output.peak_mb = int(peak.read_text()) / 1024  # type: ignore[attr-defined]
    return output, server
