"""DNS rebinding: a host that looked public when its URL was admitted and answers a
private address when connected to is refused at the connection (tests/e2e/rebinding.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.rebinding import run_rebinding

pytestmark = pytest.mark.e2e


def test_a_dns_answer_turning_private_is_refused_at_connection(tmp_path: Path) -> None:
    report = run_rebinding(tmp_path)
    if report is None:
        pytest.skip("network namespaces (unshare -n -m, root) are not available here")
    assert report["exit"] == 0, report["stderr"]
    answers = report["dns_answers"]
    for name in ("rebind.test", "rebind2.test"):  # the window was really there
        assert [a for n, a in answers if n == name][:2] == ["11.0.0.1", "127.0.0.1"], answers
    assert report["private_requests"] == [], report["private_requests"]
    port = report["port"]
    log = [json.loads(line) for line in
           (tmp_path / "crawl" / "crawl_log.jsonl").read_text().splitlines()]

    def terminal(url: str) -> dict:
        found = [e for e in log if e["url"] == url and e["event"] in
                 ("extracted", "duplicate", "unchanged", "skipped", "failed")]
        assert len(found) == 1, (url, found)
        return found[0]

    for url in (f"http://rebind.test:{port}/docs/secret",  # a link
                f"http://rebind2.test:{port}/docs/secret",  # a redirect target
                f"http://docs.test:{port}/docs/rebind-redirect"):  # and its source
        event = terminal(url)
        assert (event["event"], event["reason"]) == ("skipped", "private_address"), event
        assert "127.0.0.1 when connecting" in event["rule"], event
    assert terminal(f"http://docs.test:{port}/docs/rebind")["event"] == "extracted"


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's Chromium")
def test_the_browser_never_reaches_a_rebound_address(tmp_path: Path) -> None:
    """The rendered page's script fetches, and its iframe shows, names whose second answer
    is 127.0.0.1. The route guard lets them through (their first answer was public); the
    browser's guard proxy resolves them again where it connects, and refuses: the intranet
    server gets no request at all, and the page is kept without the intranet's text."""
    report = run_rebinding(tmp_path, browser=True)
    if report is None:
        pytest.skip("network namespaces (unshare -n -m, root) are not available here")
    assert report["exit"] == 0, report["stderr"]
    for name in ("rebind3.test", "rebind4.test"):  # the route guard, then the proxy
        assert [a for n, a in report["dns_answers"] if n == name][:2] == [
            "11.0.0.1", "127.0.0.1"], report["dns_answers"]
        assert f"browser request to {name} refused" in report["stderr"], report["stderr"]
    assert report["private_requests"] == [], report["private_requests"]
    crawl = tmp_path / "crawl"
    assert "Only for the intranet." not in (crawl / "pages.jsonl").read_text()
    log = [json.loads(line) for line in (crawl / "crawl_log.jsonl").read_text().splitlines()]
    page = [e for e in log if e["url"].endswith("/docs/rebind-js") and e["event"] in
            ("extracted", "skipped", "failed")]
    assert [e["event"] for e in page] == ["extracted"], page
    late = [e for e in log if e["url"].startswith("http://rebind5.test") and e["event"] in
            ("extracted", "skipped", "failed")]  # private only when the browser rendered it
    assert [(e["event"], e["reason"]) for e in late] == [("skipped", "private_address")], late
    assert "127.0.0.1 when connecting" in late[0]["rule"], late
