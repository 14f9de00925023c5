"""End to end: links that must not spoil a crawl. An over-long URL is a logged skip that
leaves the run complete; a user name and password inside a link, a redirect or a
sitemap are never sent and never written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import SITES, assert_log_invariants, crawl

pytestmark = pytest.mark.e2e

SECRET = "s3cr3t-pa55"


def _demo_with(tmp_path: Path, extra_links: str) -> Path:
    """The demo site with `extra_links` added to the install page's article body."""
    site = tmp_path / "site"
    shutil.copytree(SITES / "demo", site)
    page = site / "docs" / "guide" / "install.html"
    text = page.read_text(encoding="utf-8")
    marker = "<p>Use Homebrew's Python 3.11 or newer.</p>"
    assert marker in text
    page.write_text(text.replace(marker, marker + extra_links), encoding="utf-8")
    return site


def test_an_over_long_link_is_skipped_and_the_run_stays_complete(tmp_path: Path) -> None:
    long_path = "/docs/guide/" + "a" * 2100 + ".html"
    site = _demo_with(tmp_path, f'<p><a href="{long_path}">too long</a></p>')
    with StaticSite(site) as server:
        output = crawl(f"{server.url}/docs/", tmp_path / "out")
        assert long_path not in server.paths
    end = output.terminal(long_path)
    assert (end["event"], end["reason"]) == ("skipped", "trap")
    assert end["rule"].startswith("URLLENGTH_LIMIT=2083")
    assert output.run["complete"] is True
    assert output.run["counts"]["skip_reasons"]["trap"] == 1
    assert output.run["counts"]["open_at_end"] == 0
    assert_log_invariants(output)


def test_credentials_in_links_are_dropped_never_sent_nor_written(tmp_path: Path) -> None:
    """A page's link, a redirect's Location, a robots.txt Sitemap line and a sitemap entry
    carrying `user:password@`: the page is crawled under its URL without them."""
    site = _demo_with(tmp_path, '<p><a href="USERINFO_LINK">orphan</a> '
                                '<a href="/docs/go-private">private</a></p>')
    (site / "llms.txt").unlink()  # it lists extra.html: the sitemap alone must find it
    routes = {"/docs/go-private": {"status": 302, "location": "set below"}}
    with StaticSite(site, routes=routes) as server:
        hostport = server.url.split("://", 1)[1]
        install = site / "docs" / "guide" / "install.html"
        install.write_text(install.read_text(encoding="utf-8").replace(
            "USERINFO_LINK", f"http://reader:{SECRET}@{hostport}/docs/guide/orphan.html"),
            encoding="utf-8")
        server.routes["/docs/go-private"]["location"] = (
            f"http://hop:{SECRET}@{hostport}/docs/guide/index.html")
        (site / "robots.txt").write_text(
            f"User-agent: *\nAllow: /\nSitemap: http://bot:{SECRET}@{hostport}/secret-map.xml\n",
            encoding="utf-8")
        (site / "secret-map.xml").write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"<url><loc>http://map:{SECRET}@{hostport}/docs/guide/extra.html</loc></url>\n"
            "</urlset>\n", encoding="utf-8")
        output = crawl(f"{server.url}/docs/", tmp_path / "out",
                       settings={"LOG_LEVEL": "DEBUG"})
        paths = server.paths
    assert "/secret-map.xml" in paths and "/docs/go-private" in paths
    # every request is logged by Scrapy at DEBUG with its URL: none carried the password
    assert SECRET not in output.result.stderr and SECRET not in output.result.stdout
    for name in ("crawl_log.jsonl", "pages.jsonl", "chunks.jsonl", "structure.jsonl",
                 "run.json", "changes.jsonl"):
        assert SECRET not in (output.out / name).read_text(encoding="utf-8"), name
    assert not [e for e in output.log if "@" in e["url"]]
    for path in ("/docs/guide/orphan.html", "/docs/guide/extra.html"):
        assert output.page(path)
    hop = output.terminal("/docs/go-private")  # redirected to the guide without the hop's
    assert hop["event"] == "duplicate" and hop["reason"] == "redirect", hop
    sitemap_found = [e for e in output.log if e["event"] == "discovered"
                     and ((e["discovery"] or {}).get("from") or "").endswith("/secret-map.xml")]
    assert [e["url"] for e in sitemap_found] == [f"{server.url}/docs/guide/extra.html"]
    install_links = {link["url"] for link in output.page("/docs/guide/install.html")["links"]}
    assert f"{server.url}/docs/guide/orphan.html" in install_links
    assert output.run["complete"] is True
    assert_log_invariants(output)
