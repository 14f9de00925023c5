"""Hostile and broken input, against a real fault-injecting server on 127.0.0.1."""

from __future__ import annotations

import base64
import itertools
import json
import re
from pathlib import Path

import pytest

from docscrawl.inspect.invariants import duplicate_targets
from docscrawl.inspect.output import OutputDir
from tests.conftest import CrawlOutput, assert_log_invariants, crawl
from tests.support.faultserver import (
    CP1252_TEXT,
    FAULT_SETTINGS,
    FAULTS,
    SHIFT_JIS_TEXT,
    FaultServer,
    RunningFaultServer,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def faults(
    fault_site_crawl: tuple[CrawlOutput, FaultServer],
) -> tuple[CrawlOutput, FaultServer]:
    """The session's crawl of the fault site (tests/e2e/conftest.py)."""
    return fault_site_crawl


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.path)
def test_each_fault_ends_in_its_outcome(faults: tuple[CrawlOutput, FaultServer],
                                        fault: object) -> None:
    output, _ = faults
    event = output.terminal(output.base + fault.path)  # type: ignore[attr-defined]
    assert (event["event"], event["reason"]) == (fault.event, fault.reason), event  # type: ignore[attr-defined]


def test_crawl_goes_on_and_every_line_is_valid(
    faults: tuple[CrawlOutput, FaultServer],
) -> None:
    output, _ = faults
    assert_log_invariants(output)
    for name in ("pages.jsonl", "structure.jsonl", "chunks.jsonl", "crawl_log.jsonl"):
        for line in (output.out / name).read_text(encoding="utf-8").splitlines():
            json.loads(line)
    assert output.run["status"] == "finished"


def test_the_whole_hostile_site_stays_under_500_mb(
    faults: tuple[CrawlOutput, FaultServer],
) -> None:
    """A 60 MB page, a gzip bomb, 100,000 links, deep trees... in one crawl (issue 17)."""
    output, _ = faults
    assert output.peak_mb < 500, output.peak_mb  # type: ignore[attr-defined]


def test_redirects_end_with_the_page_they_lead_to(
    faults: tuple[CrawlOutput, FaultServer],
) -> None:
    output, _ = faults
    base = output.base  # type: ignore[attr-defined]
    for start, other in (("/docs/loop-a", "/docs/loop-b"), ("/docs/loop-b", "/docs/loop-a")):
        event = output.terminal(base + start)
        assert event["redirect_chain"][:2] == [base + start, base + other], event
    chain = output.terminal(base + "/docs/chain/0")
    assert chain["redirect_chain"] == [f"{base}/docs/chain/{n}" for n in range(21)], chain
    followed = output.terminal(base + "/docs/hops/0")
    assert followed["duplicate_of"] == base + "/docs/hops/13"
    assert output.page("/docs/hops/13")["canonical_url"] == base + "/docs/hops/13"
    missing = output.terminal(base + "/docs/to-missing")
    assert missing["redirect_chain"][0] == base + "/docs/to-missing"
    assert missing["status"] == 404
    check = duplicate_targets(OutputDir(output.out))
    assert check["passed"] and check["details"]["duplicates"] >= 12, check


def _retry_reasons(output: CrawlOutput) -> dict[str, int]:
    """The crawl's `retry/reason_count/...` stats: why requests were retried."""
    return {reason: int(count) for reason, count in
            re.findall(r"'retry/reason_count/([^']+)': (\d+)", output.result.stderr)}


def test_retry_after_is_honoured(faults: tuple[CrawlOutput, FaultServer]) -> None:
    output, server = faults
    reasons = _retry_reasons(output)
    honoured = 0
    for path, status in (("/docs/retry-after-429", 429), ("/docs/retry-after-503", 503)):
        requests = [(t, h) for p, h, t in server.requests if p == path]
        story = output.events(path)
        hits = [t for t, _ in requests]
        assert len(hits) == 2, (requests, story, reasons)
        if not reasons.get(f"HTTP {status}"):
            # The crawler never received this error answer: the connection failed first,
            # and that retry waits the plain backoff (seen in about 1 suite run in 10).
            continue
        assert hits[1] - hits[0] >= 0.9, (path, requests, story, reasons)  # Retry-After: 1
        honoured += 1
    assert honoured, reasons
    long_waits = [(h, t) for p, h, t in server.requests if p == "/docs/retry-after-long"]
    assert len(long_waits) == 1, long_waits


def test_a_retry_waits_without_holding_a_download_slot(tmp_path: Path) -> None:
    """One download slot in all: while a 503 page waits for its Retry-After, the other
    pages are fetched (a retry sleeping in the downloader would hold the only slot).
    The hub's first and last links answer 503: whichever is fetched first has ten pages
    queued behind it, fetched within the second it waits."""
    with RunningFaultServer() as server:
        output = crawl(f"{server.url}/docs/busy/", tmp_path / "out",  # plain Scrapy order:
                       settings={**FAULT_SETTINGS, "CONCURRENT_REQUESTS": "1",  # no template
                                 "DOCSCRAWL_TEMPLATE_WARMUP": "false"})  # sample first
        requests = [(p, t) for p, _, t in server.requests]
    meanwhile = []
    for path in ("/docs/busy/a", "/docs/busy/b"):
        hits = [t for p, t in requests if p == path]
        assert len(hits) == 2 and hits[1] - hits[0] >= 0.95, (path, hits)  # Retry-After: 1
        meanwhile.append([p for p, t in requests if hits[0] < t < hits[0] + 0.9])
        assert output.terminal(path)["event"] == "extracted"
    assert max(len(paths) for paths in meanwhile) >= 5, meanwhile


def test_backoff_grows_between_retries(tmp_path: Path) -> None:
    """A crawl of the one failing page: in the whole fault crawl, the server's threads also
    build the hostile pages (a 60 MB page, 100,000 links), and an attempt can time out
    waiting for the server, which shows as a missing hit, not as a shorter backoff."""
    with RunningFaultServer() as server:
        crawl(f"{server.url}/docs/always-500", tmp_path / "out", settings=FAULT_SETTINGS)
    hits = [t for path, _, t in server.requests if path == "/docs/always-500"]
    assert len(hits) == 3
    gaps = [b - a for a, b in itertools.pairwise(hits)]
    assert gaps[0] >= 0.09 and gaps[1] >= 0.19  # 0.1 s, then 0.2 s


def test_text_is_decoded_right(faults: tuple[CrawlOutput, FaultServer]) -> None:
    output, _ = faults
    assert SHIFT_JIS_TEXT in output.page("/docs/shift-jis")["markdown"]
    assert CP1252_TEXT in output.page("/docs/cp1252")["markdown"]
    bom = output.page("/docs/bom")["markdown"]
    assert bom.startswith("# Byte order mark") and "Ünïcödé" in bom


def test_deep_and_malformed_pages_keep_their_text(
    faults: tuple[CrawlOutput, FaultServer],
) -> None:
    output, _ = faults
    deep = output.page("/docs/deep")
    assert "bottom" in deep["markdown"]  # 20,000 levels down
    malformed = output.page("/docs/malformed")
    assert "After a stray end tag." in malformed["markdown"] and "open" in malformed["markdown"]
    for page in (deep, malformed):
        assert "parse_recovered" in {w["code"] for w in page["warnings"]}, page["warnings"]


def test_base_href_and_session_ids(faults: tuple[CrawlOutput, FaultServer]) -> None:
    output, _ = faults
    target = output.page("/docs/based/target.html")
    assert {"reason": "in_page", "from": f"{output.base}/docs/base"} in target["discovery"]  # type: ignore[attr-defined]
    assert output.page("/docs/session")["fetched_url"].endswith("/docs/session")


def test_non_http_links_are_never_requested(
    faults: tuple[CrawlOutput, FaultServer],
) -> None:
    output, server = faults
    urls = {e["url"] for e in output.log}
    assert not [u for u in urls if not u.startswith("http://")]
    assert not [p for p, _, _ in server.requests if "passwd" in p]


def test_traps_are_capped_with_their_pattern(
    faults: tuple[CrawlOutput, FaultServer],
) -> None:
    output, _ = faults
    calendar = [p for p in output.pages if "/docs/calendar/" in p["canonical_url"]]
    assert len(calendar) == 5
    traps = [e for e in output.log if e["reason"] == "trap"]
    assert any(e["rule"] == "more than 5 URLs match /docs/calendar/{n}/{n}" for e in traps)
    assert any(e["rule"] == "more than 5 URLs match /docs/paged?page" for e in traps)


def test_an_endless_calendar_stops_within_500_requests(tmp_path: Path) -> None:
    """Default limits: the counting chain (months into years, both ways) stops it."""
    with RunningFaultServer() as server:
        output = crawl(f"{server.url}/docs/cal/2026/1/", tmp_path / "out",
                       rf"allow=^{re.escape(server.url)}/docs/cal/",
                       settings={"DOWNLOAD_TIMEOUT": "3"}, timeout=300)
        requests = [p for p, _, _ in server.requests if p.startswith("/docs/cal/")]
    assert 200 < len(requests) <= 500, len(requests)
    traps = [e for e in output.log if e["reason"] == "trap"]
    assert traps and {e["rule"] for e in traps} == {
        "a chain of more than 200 URLs of /docs/cal/{n}/{n}/, each found on the one before, "
        "its numbers counting"}
    assert_log_invariants(output)


def test_credentials_go_to_the_site_origin_only(tmp_path: Path) -> None:
    skip_slow = ("deny=stall|reset|always-500|retry-after|huge|gzip-bomb|many-links|calendar"
                 "|chain|loop|paged")
    with RunningFaultServer() as server:
        port = server.server_address[1]
        output = crawl(
            f"{server.url}/docs/", tmp_path / "out", "http_user=alice", "http_pass=s3cret-pw",
            "auth_header=X-Api-Key: k3y-value", skip_slow,
            rf"allow=^http://127\.0\.0\.1:{port}/docs/,^http://localhost:{port}/docs/",
            settings=FAULT_SETTINGS,
        )
        requests = list(server.requests)
    basic = "Basic " + base64.b64encode(b"alice:s3cret-pw").decode()
    own = [h for _, h, _ in requests if h.get("Host") == f"127.0.0.1:{port}"]
    other = [h for _, h, _ in requests if h.get("Host") == f"localhost:{port}"]
    assert own and other, "the crawl reached both names of the server"
    assert all(h.get("Authorization") == basic and h.get("X-Api-Key") == "k3y-value"
               for h in own)
    assert not [h for h in other if "Authorization" in h or "X-Api-Key" in h]
    for path in tmp_path.joinpath("out").rglob("*"):  # the state database included
        if not path.is_file():
            continue
        data = path.read_bytes()
        for secret in ("s3cret-pw", "k3y-value", basic.split()[1]):
            assert secret.encode() not in data, (path.name, secret)
    assert output.run["arguments"]["http_pass"] == "***"
    assert output.result.stderr.count("s3cret-pw") == 0


def test_hostile_sitemaps_and_redirected_robots(tmp_path: Path) -> None:
    with RunningFaultServer(robots="redirect", sitemap_urls=20000) as server:
        output = crawl(f"{server.url}/docs/", tmp_path / "out", "max_pages=30",
                       "deny=stall|reset|always-500|retry-after|huge|gzip-bomb|many-links",
                       settings={"DOWNLOAD_TIMEOUT": "3"}, timeout=300)
        paths = [p for p, _, _ in server.requests]
    base = server.url
    forbidden = output.terminal(f"{base}/docs/forbidden/secret.html")  # robots-real.txt rules
    assert (forbidden["reason"], forbidden["rule"]) == ("robots", "Disallow: /docs/forbidden/")
    laughs = [e for e in output.log if e["url"].endswith("/sitemap-laughs.xml")
              and e["event"] == "failed"]
    assert laughs and laughs[0]["reason"] == "parse_error"
    assert not [e for e in output.log if "root:" in e["url"]]  # no external entity resolved
    offhost = output.terminal("http://other.example/docs/x")
    assert offhost["reason"] == "out_of_scope"
    assert not [p for p in paths if "passwd" in p]
    generated = [e for e in output.log if "/docs/gen/" in e["url"] and e["event"] == "discovered"]
    assert len(generated) == 20000
    assert len(output.pages) <= 30
    assert output.run["counts"]["skip_reasons"]["max_pages"] >= 19000
    assert output.run["complete"] is False
    assert_log_invariants(output)


def test_huge_robots_txt_is_read_up_to_500_kib(tmp_path: Path) -> None:
    with RunningFaultServer(robots="huge") as server:
        output = crawl(f"{server.url}/docs/", tmp_path / "out", "max_pages=5",
                       settings=FAULT_SETTINGS)
    assert output.terminal(f"{server.url}/docs/")["event"] == "extracted"  # rule past 500 KiB
    secret = output.terminal(f"{server.url}/docs/forbidden/secret.html")
    assert secret["reason"] == "robots"
