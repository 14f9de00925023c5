"""End to end: robots.txt failures, scope rules, the private-address guard."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import SITES, assert_log_invariants, crawl

pytestmark = pytest.mark.e2e


def test_robots_5xx_disallows_everything_and_says_so_once(tmp_path: Path) -> None:
    with StaticSite(SITES / "demo", routes={"/robots.txt": {"status": 503}}) as server:
        output = crawl(f"{server.url}/docs/", tmp_path / "out", settings={"RETRY_TIMES": "0"})
        paths = server.paths
    assert paths == ["/robots.txt"]
    seed = output.terminal("/docs/")
    assert (seed["event"], seed["reason"]) == ("skipped", "robots")
    assert "503" in seed["rule"] and "disallow all" in seed["rule"]
    notices = [e for e in output.log if e.get("reason") == "robots_unreachable"]
    assert len(notices) == 1
    assert output.pages == []
    assert_log_invariants(output)


def test_robots_404_allows_everything(tmp_path: Path) -> None:
    with StaticSite(SITES / "demo", routes={"/robots.txt": {"status": 404}}) as server:
        output = crawl(f"{server.url}/docs/", tmp_path / "out", settings={"RETRY_TIMES": "0"})
    assert output.terminal("/docs/private/secret.html")["event"] == "extracted"
    # Without robots.txt Sitemap lines, /sitemap.xml is tried (404 here) and links still run.
    assert output.page("/docs/guide/install.html")


def test_deny_and_allow_rules(demo_site: StaticSite, tmp_path: Path) -> None:
    output = crawl(f"{demo_site.url}/docs/", tmp_path / "deny", r"deny=/api/")
    denied = output.terminal("/docs/api/client.html")
    assert (denied["reason"], denied["rule"]) == ("denied_by_rule", "/api/")
    assert not [p for p in output.pages if "/api/" in p["canonical_url"]]
    assert_log_invariants(output)

    narrowed = crawl(f"{demo_site.url}/docs/", tmp_path / "allow",
                     r"allow=/docs/$,/docs/guide/")
    refused = narrowed.terminal("/docs/api/")
    assert (refused["reason"], refused["rule"]) == ("not_allowed_by_rule",
                                                    "/docs/$,/docs/guide/")
    assert narrowed.page("/docs/guide/install.html")
    outside = narrowed.terminal("/blog/post.html")
    assert outside["reason"] == "out_of_scope"


def test_max_pages_and_max_depth(demo_site: StaticSite, tmp_path: Path) -> None:
    limited = crawl(f"{demo_site.url}/docs/", tmp_path / "pages", "max_pages=3")
    assert len(limited.pages) <= 3
    assert limited.run["counts"]["skip_reasons"]["max_pages"] >= 1
    assert limited.run["complete"] is False
    assert_log_invariants(limited)
    shallow = crawl(f"{demo_site.url}/docs/", tmp_path / "depth", "max_depth=1")
    assert any(e["reason"] == "max_depth" and e["rule"] == "max_depth=1" for e in shallow.log)
    assert_log_invariants(shallow)


def test_private_addresses_are_refused_for_a_public_seed(tmp_path: Path) -> None:
    with StaticSite(SITES / "guard") as server:
        proxy = server.url
        output = crawl(
            "http://docs.example.test/docs/", tmp_path / "out",
            r"allow=^http://docs\.example\.test/docs/,^http://127\.0\.0\.1:1/,"
            r"^http://localhost:1/,^http://169\.254\.169\.254/",
            env={"http_proxy": proxy, "HTTP_PROXY": proxy, "no_proxy": "", "NO_PROXY": ""},
        )
        hosts = {host for _, _, _, host in server.requests}
    assert hosts == {"docs.example.test"}
    for suffix in ("127.0.0.1:1/admin/", "localhost:1/debug", "169.254.169.254/latest/meta-data/"):
        event = output.terminal(suffix)
        assert (event["event"], event["reason"]) == ("skipped", "private_address"), event
    redirect = output.terminal("/docs/to-loopback")
    assert (redirect["event"], redirect["reason"]) == ("skipped", "private_address")
    assert output.page("/docs/ok.html")["final_url"] == "http://docs.example.test/docs/ok.html"
    assert_log_invariants(output)
    assert output.run["politeness"]["autothrottle"] is True  # a remote site: polite pacing


def test_loopback_seed_may_crawl_itself(demo_site: StaticSite, tmp_path: Path) -> None:
    output = crawl(f"{demo_site.url}/docs/", tmp_path / "out", "max_pages=2")
    assert not [e for e in output.log if e.get("reason") == "private_address"]
    assert output.run["politeness"]["autothrottle"] is False  # loopback: full speed
    forced = crawl(f"{demo_site.url}/docs/", tmp_path / "forced", "max_pages=2",
                   settings={"DOCSCRAWL_AUTOTHROTTLE": "on"})
    assert forced.run["politeness"]["autothrottle"] is True
    explicit = crawl(f"{demo_site.url}/docs/", tmp_path / "explicit", "max_pages=2",
                     settings={"DOCSCRAWL_AUTOTHROTTLE": "on", "AUTOTHROTTLE_ENABLED": "False"})
    assert explicit.run["politeness"]["autothrottle"] is False  # -s AUTOTHROTTLE_ENABLED wins


def test_docscrawl_group_and_crawl_delay_are_honoured(tmp_path: Path) -> None:
    robots = ("User-agent: *\nDisallow: /\n\n"
              "User-agent: docscrawl\nCrawl-delay: 0.4\nDisallow: /docs/api/\n")
    routes = {"/robots.txt": {"status": 200, "content_type": "text/plain", "body": robots}}
    with StaticSite(SITES / "demo", routes=routes) as server:
        output = crawl(f"{server.url}/docs/", tmp_path / "out", "max_pages=5")
        page_times = [t for (_, path, _, _), t in zip(server.requests, server.times, strict=True)
                      if path.startswith("/docs/")]
    api = output.terminal("/docs/api/")
    assert (api["reason"], api["rule"]) == ("robots", "Disallow: /docs/api/")
    assert output.page("/docs/guide/install.html")
    gaps = [b - a for a, b in itertools.pairwise(page_times)]
    assert len(gaps) >= 3
    assert min(gaps) >= 0.35, gaps  # a lower bound only: a slow machine makes gaps longer
