"""End to end with real headless Chromium: `scrapy crawl docs` against the SPA fixture.

`fixtures/sites/spa/` is a client-rendered site: HTML shells whose script fetches Markdown
and builds the article after the load event, a history-routed guide (`/guide/...`), a
hash-routed Docsify-style reference (`/hash/#/...`), two static pages, and `/broken/`
(a page that stays empty, a page that never finishes loading).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer, StaticSite
from docscrawl.render.browser import DEBIAN_CHROMIUM
from tests.conftest import SITES, CrawlOutput, assert_log_invariants, crawl, run_crawl

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not os.access(DEBIAN_CHROMIUM, os.X_OK) and
                       not os.environ.get("DOCSCRAWL_CHROMIUM_PATH"),
                       reason="no Chromium: `make system-deps` installs Debian's"),
]

SPA_PAGES = {  # canonical URL suffix -> (main heading, other headings, code languages)
    "/guide/": ("Widget user guide", ["What you need", "Quick start"], ["bash"]),
    "/guide/install/": ("Installing Widget", ["With pip", "Checking the installation"],
                        ["bash", None]),
    "/guide/configure/": ("Configuring Widget", ["The configuration file",
                                                 "Environment variables"], ["toml", "bash"]),
    "/hash/": ("Widget reference", ["Conventions"], []),
    "/hash/?_hashroute=/cli": ("Command line", ["widget build", "widget serve"],
                               ["bash", "bash"]),
    "/hash/?_hashroute=/api/python": ("Python API", ["Building a site", "Checking links"],
                                      ["python", "python"]),
}
NEVER_REQUESTED = ("/app/img/", "/app/fonts/", "/app/track", "/popup.html", "/outside/")


@pytest.fixture(scope="module")
def spa_site() -> Iterator[FixtureServer]:
    with StaticSite(SITES / "spa") as server:
        yield server


@pytest.fixture(scope="module")
def spa_crawl(spa_site: FixtureServer, tmp_path_factory: pytest.TempPathFactory) -> CrawlOutput:
    return crawl(f"{spa_site.url}/", tmp_path_factory.mktemp("spa") / "out")


def test_every_spa_page_is_rendered_and_extracted(spa_crawl: CrawlOutput) -> None:
    for suffix, (title, headings, languages) in SPA_PAGES.items():
        page = spa_crawl.page(suffix)
        assert page["fetch_mode"] == "browser", suffix
        assert page["main_heading"] == title
        assert [h["text"] for h in page["headings"]] == [title, *headings]
        assert [c["language"] for c in page["code_blocks"]] == languages
        assert page["generator"] == "docsify"
        assert not [w for w in page["warnings"] if w["code"] == "sparse_after_render"]
    opened = re.search(r"'playwright/page_count': (\d+)", spa_crawl.result.stderr)
    closed = re.search(r"'playwright/page_count/closed': (\d+)", spa_crawl.result.stderr)
    assert opened and closed and opened.group(1) == closed.group(1)  # every page closed
    install = spa_crawl.page("/guide/install/")
    assert ".venv/bin/pip install widget-docs==4.2.0" in install["markdown"]
    assert_log_invariants(spa_crawl)


def test_rendered_events_say_why(spa_crawl: CrawlOutput) -> None:
    rendered = {e["url"]: e for e in spa_crawl.log if e["event"] == "rendered"}
    assert rendered[spa_crawl.page("/guide/")["canonical_url"]]["reason"] == "client_generator"
    cli = spa_crawl.page("/hash/?_hashroute=/cli")["canonical_url"]
    assert rendered[cli]["reason"] == "hash_route"
    assert all(e["fetch_mode"] == "browser" for e in rendered.values())
    fetched = [e for e in spa_crawl.events("/guide/install/") if e["event"] == "fetched"]
    assert [e["fetch_mode"] for e in fetched] == ["browser"]


def test_hash_routes_are_discovered_from_the_rendered_dom(spa_crawl: CrawlOutput) -> None:
    discovered = {e["url"] for e in spa_crawl.log if e["event"] == "discovered"}
    assert {u for u in discovered if "_hashroute" in u} >= {
        u for u in (spa_crawl.page(s)["canonical_url"] for s in SPA_PAGES) if "_hashroute" in u}


def test_static_pages_of_the_site_are_not_rendered(spa_site: FixtureServer,
                                                   spa_crawl: CrawlOutput) -> None:
    for suffix in (f"{spa_site.url}/", "/about.html"):
        assert spa_crawl.page(suffix)["fetch_mode"] == "http"
        assert not [e for e in spa_crawl.events(suffix) if e["event"] == "rendered"]


def test_browser_downloads_no_media_and_stays_in_scope(spa_site: FixtureServer,
                                                       spa_crawl: CrawlOutput) -> None:
    paths = spa_site.paths
    assert "/guide/content/install.md" in paths  # the app's own fetches go through
    for forbidden in NEVER_REQUESTED:
        assert not [p for p in paths if p.startswith(forbidden)], forbidden
    hosts = {host.split(":")[0] for _, _, _, host in spa_site.requests}
    assert hosts == {"127.0.0.1"}
    # the configure page tried to leave; it was kept, not replaced by an error page
    assert spa_crawl.page("/guide/configure/")["final_url"].endswith("/guide/configure/")


def test_render_failures(spa_site: FixtureServer, tmp_path: Path) -> None:
    output = crawl(f"{spa_site.url}/broken/", tmp_path / "out",
                   settings={"PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": "2500"})
    empty = output.page("/broken/empty.html")
    assert empty["fetch_mode"] == "browser"
    assert "sparse_after_render" in [w["code"] for w in empty["warnings"]]
    hang = output.terminal("/broken/hang.html")
    assert (hang["event"], hang["reason"]) == ("failed", "render_error")
    assert "after 2 attempts" in hang["rule"]
    assert [p for p in spa_site.paths if p == "/broken/hang.html"] == ["/broken/hang.html"] * 3
    assert_log_invariants(output)


def test_render_never_leaves_spa_pages_sparse(spa_site: FixtureServer, tmp_path: Path) -> None:
    output = crawl(f"{spa_site.url}/guide/", tmp_path / "out", "render=never")
    page = output.page("/guide/")
    assert page["fetch_mode"] == "http"
    assert page["headings"] == [] and page["code_blocks"] == []
    assert not [e for e in output.log if e["event"] == "rendered"]
    assert "Starting download handler" not in output.result.stderr  # no browser, no driver


def test_static_demo_is_never_rendered(demo_site: FixtureServer, tmp_path: Path) -> None:
    output = crawl(f"{demo_site.url}/docs/", tmp_path / "out")
    assert output.pages
    assert {p["fetch_mode"] for p in output.pages} == {"http"}
    assert not [e for e in output.log if e["event"] == "rendered"]
    assert "Starting download handler" not in output.result.stderr  # the driver never started


def test_render_always_renders_the_demo(demo_site: FixtureServer, tmp_path: Path) -> None:
    output = crawl(f"{demo_site.url}/docs/", tmp_path / "out", "render=always")
    assert output.pages
    assert {p["fetch_mode"] for p in output.pages} == {"browser"}
    rendered = [e for e in output.log if e["event"] == "rendered"]
    assert rendered and {e["reason"] for e in rendered} == {"render_always"}
    assert output.page("/docs/guide/install.html")["main_heading"]
    assert_log_invariants(output)


def test_a_bad_browser_path_stops_the_crawl_with_one_line(demo_site: FixtureServer,
                                                          tmp_path: Path) -> None:
    before = len(demo_site.requests)
    result = run_crawl(f"{demo_site.url}/docs/", tmp_path / "out",
                       env={"DOCSCRAWL_CHROMIUM_PATH": "/nonexistent/chromium"})
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert errors == [
        "docscrawl: error: browser: Chromium not found at /nonexistent/chromium; install "
        "Debian's Chromium (apt-get install chromium), set DOCSCRAWL_CHROMIUM_PATH to a "
        "Chromium binary, or crawl with -a render=never"]
    assert len(demo_site.requests) == before
    assert not (tmp_path / "out").exists()
    # without rendering, no browser is needed at all
    fine = run_crawl(f"{demo_site.url}/docs/", tmp_path / "never", "render=never",
                     "max_pages=2", env={"DOCSCRAWL_CHROMIUM_PATH": "/nonexistent/chromium"})
    assert fine.returncode == 0, fine.stderr[-2000:]


def test_a_browser_that_fails_to_launch(spa_site: FixtureServer, tmp_path: Path) -> None:
    """render=auto goes on, failing the pages that need the browser; render=always stops."""
    fake = tmp_path / "chromium"
    fake.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "Chromium 1.0" && exit 0\nexit 1\n')
    fake.chmod(0o755)
    env = {"DOCSCRAWL_CHROMIUM_PATH": str(fake)}
    result = run_crawl(f"{spa_site.url}/guide/", tmp_path / "auto", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    warnings = [line for line in result.stderr.splitlines() if "Chromium did not start" in line]
    assert len(warnings) == 1 and "browser_unavailable" in warnings[0]
    output = CrawlOutput(tmp_path / "auto", result)
    assert output.run["finish_reason"] == "finished" and output.run["complete"] is False
    assert output.terminal("/guide/")["reason"] == "browser_unavailable"
    assert_log_invariants(output)

    result = run_crawl(f"{spa_site.url}/guide/", tmp_path / "always", "render=always", env=env)
    errors = [line for line in result.stderr.splitlines() if "docscrawl: error" in line]
    assert len(errors) == 1 and "Chromium did not start" in errors[0]
    assert result.returncode == 1  # the crawl could not do its job
    output = CrawlOutput(tmp_path / "always", result)
    assert output.run["finish_reason"] == "browser_unavailable"
    assert output.terminal("/guide/")["reason"] == "browser_unavailable"


def test_server_rendered_landing_pages_are_not_rendered(tmp_path: Path) -> None:
    """A VitePress and a Docusaurus home page (little text, all of it server-rendered) are
    kept as fetched; the empty Vite app root next to them is rendered."""
    with StaticSite(SITES / "ssr_home") as server:
        output = crawl(f"{server.url}/", tmp_path / "out")
    for suffix in ("/vitepress/", "/docusaurus/"):
        page = output.page(suffix)
        assert page["fetch_mode"] == "http", suffix
        assert not [e for e in output.events(suffix) if e["event"] == "rendered"], suffix
        fetched = [e for e in output.events(suffix) if e["event"] == "fetched"]
        assert [e["fetch_mode"] for e in fetched] == ["http"], suffix
    app = output.page("/vite-app/")
    assert app["fetch_mode"] == "browser"
    assert app["main_heading"] == "Trellis user guide"
    rendered = [e for e in output.events("/vite-app/") if e["event"] == "rendered"]
    assert [e["reason"] for e in rendered] == ["empty_app_root"]


def test_browser_pages_are_reused(spa_site: FixtureServer, tmp_path: Path) -> None:
    """Two browser pages serve every render of the site (each goes back to the pool after
    a clean render) and are closed at the end; every page is still read whole."""
    output = crawl(f"{spa_site.url}/", tmp_path / "out",
                   settings={"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": "2"})
    rendered = [e for e in output.log if e["event"] == "rendered"]
    opened = re.search(r"'playwright/page_count': (\d+)", output.result.stderr)
    closed = re.search(r"'playwright/page_count/closed': (\d+)", output.result.stderr)
    assert opened and closed
    assert len(rendered) >= len(SPA_PAGES)
    assert int(opened.group(1)) <= 2
    assert closed.group(1) == opened.group(1)
    for suffix, (title, headings, _) in SPA_PAGES.items():
        page = output.page(suffix)
        assert page["main_heading"] == title
        assert [h["text"] for h in page["headings"]] == [title, *headings]


def test_small_static_pages_and_a_redirect_stub_are_not_rendered(tmp_path: Path) -> None:
    """mike's version root (a meta refresh in `<noscript>` beside `location.replace`) and
    RDoc's pages (an exception class, a one-paragraph README: little text, scripts) are
    all in the HTML: the refresh is followed and no page goes to the browser."""
    with StaticSite(SITES / "static_small") as server:
        output = crawl(f"{server.url}/", tmp_path / "out")
    assert not [e for e in output.log if e["event"] == "rendered"]
    assert "Starting download handler" not in output.result.stderr  # no browser started
    assert output.page("/latest/Acme/Timeout.html")["main_heading"] == "class Acme::Timeout"
    assert output.page("/latest/")["main_heading"] == "Acme"
    assert {p["fetch_mode"] for p in output.pages} == {"http"}
    refresh = [e for e in output.log if e["url"] == f"{server.url}/"
               and e["event"] == "duplicate"]
    assert [e["reason"] for e in refresh] == ["meta_refresh"]
    assert_log_invariants(output)


ERLANG_DOC = Path("/usr/share/doc/erlang-doc/doc")


def test_short_pages_of_a_static_site_are_not_rendered(tmp_path: Path) -> None:
    """Real erl_docgen output (Debian's erlang-doc): every page loads the same menu scripts;
    each application's User's Guide title page has little text. Its scripts are those of
    the chapters, complete as fetched, so no page needs a browser."""
    if not ERLANG_DOC.is_dir():
        pytest.skip(f"{ERLANG_DOC} is not installed")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "doc").symlink_to(ERLANG_DOC)
    with StaticSite(tmp_path / "site") as server:
        result = run_crawl(server.url + "/doc/", tmp_path / "out", "render=auto",
                           "max_pages=40")
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    guides = [p for p in out.pages if p["final_url"].endswith("/users_guide.html")]
    assert len(out.pages) >= 35 and len(guides) >= 3  # a copy of a page is a duplicate
    assert [p["final_url"] for p in out.pages if p["fetch_mode"] != "http"] == []
    assert [e for e in out.log if e["event"] == "rendered"] == []
