"""A crawl needs only what it uses: no Chromium, no Playwright, no redis unless asked for.

Each crawl runs `tests/setup/crawl_blocked.py` in a subprocess: `scrapy crawl docs` with the
named packages unimportable (`sys.modules[name] = None`), reporting which optional packages
were imported. "No Chromium" is a PATH holding no `chromium` and an empty Playwright
browser folder, as on a machine where none was installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer, StaticSite
from docscrawl.inspect.summary import summarize
from docscrawl.render.browser import INSTALL_HINT
from tests.conftest import ROOT, SITES, CrawlOutput, assert_log_invariants

pytestmark = pytest.mark.e2e
RUNNER = Path(__file__).with_name("crawl_blocked.py")


@pytest.fixture(scope="module")
def spa_site() -> Iterator[FixtureServer]:
    with StaticSite(SITES / "spa") as server:
        yield server


@pytest.fixture
def no_chromium(tmp_path: Path) -> dict[str, str]:
    """An environment in which no Chromium can be found."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "browsers").mkdir()
    return {"PATH": str(tmp_path / "bin"), "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "browsers"),
            "DOCSCRAWL_CHROMIUM_PATH": ""}


def crawl_blocked(site: str, out: Path, *args: str, blocked: str = "",
                  env: dict[str, str] | None = None, settings: dict[str, str] | None = None,
                  ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The crawl's process result and the optional packages it imported."""
    command = [sys.executable, str(RUNNER), blocked, "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}", "-s", "LOG_LEVEL=INFO"]
    for arg in args:
        command += ["-a", arg]
    for name, value in (settings or {}).items():
        command += ["-s", f"{name}={value}"]
    base = {"PYTHONPATH": str(ROOT), "HOME": str(out.parent)}
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240,
                            env={**base, **(env or {})})
    lines = [line for line in result.stdout.splitlines() if line.startswith("LOADED ")]
    assert lines, result.stderr[-3000:]
    return result, json.loads(lines[-1][len("LOADED "):])


def test_a_crawl_runs_with_redis_and_playwright_uninstalled(demo_site: FixtureServer,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "out"
    result, loaded = crawl_blocked(f"{demo_site.url}/docs/", out, "render=never",
                                   blocked="redis,playwright,scrapy_playwright")
    assert result.returncode == 0, result.stderr[-3000:]
    output = CrawlOutput(out, result)
    assert len(output.pages) >= 10 and output.run["complete"] is True
    assert_log_invariants(output)
    assert loaded == []


def test_a_crawl_that_renders_nothing_never_imports_playwright_or_redis(
        demo_site: FixtureServer, tmp_path: Path) -> None:
    """render=auto with a browser at hand: the demo's pages are static, nothing loads."""
    out = tmp_path / "out"
    result, loaded = crawl_blocked(f"{demo_site.url}/docs/", out, "render=auto",
                                   env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert CrawlOutput(out, result).pages
    assert loaded == []


def test_the_demo_crawls_with_no_chromium_on_the_path(demo_site: FixtureServer,
                                                      tmp_path: Path,
                                                      no_chromium: dict[str, str]) -> None:
    out = tmp_path / "out"
    result, _ = crawl_blocked(f"{demo_site.url}/docs/", out, env=no_chromium)
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if "no browser for rendering" in line]
    assert len(warnings) == 1 and INSTALL_HINT in warnings[0]
    output = CrawlOutput(out, result)
    assert len(output.pages) >= 10
    assert output.run["complete"] is True  # no page of the demo needed the browser
    assert output.run["browser_unavailable"] is None
    assert_log_invariants(output)


def test_a_page_that_needs_rendering_fails_browser_unavailable(
        spa_site: FixtureServer, tmp_path: Path, no_chromium: dict[str, str]) -> None:
    out = tmp_path / "out"
    result, loaded = crawl_blocked(f"{spa_site.url}/", out, env=no_chromium)
    assert result.returncode == 0, result.stderr[-3000:]
    output = CrawlOutput(out, result)
    # static pages are fetched and extracted as usual
    for suffix in (f"{spa_site.url}/", "/about.html"):
        assert output.page(suffix)["fetch_mode"] == "http"
    # the client-rendered guide needs the browser: failed, with how to get one
    guide = output.terminal("/guide/")
    assert (guide["event"], guide["reason"]) == ("failed", "browser_unavailable")
    assert INSTALL_HINT in guide["rule"]
    failed = output.run["counts"]["failure_reasons"]["browser_unavailable"]
    assert failed >= 2
    assert output.run["complete"] is False
    assert output.run["browser_unavailable"] == {"pages": failed, "hint": INSTALL_HINT}
    summary = [line for line in summarize(out).splitlines() if "browser:" in line]
    assert summary == [f"  browser:  {failed} pages needed rendering and no browser was "
                       f"available: {INSTALL_HINT}"]
    assert "playwright" not in loaded
    assert_log_invariants(output)


def test_render_always_without_a_browser_stops_before_any_request(
        demo_site: FixtureServer, tmp_path: Path, no_chromium: dict[str, str]) -> None:
    before = len(demo_site.requests)
    result, _ = crawl_blocked(f"{demo_site.url}/docs/", tmp_path / "out", "render=always",
                              env=no_chromium)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert errors == [f"docscrawl: error: browser: no Chromium found for rendering; "
                      f"{INSTALL_HINT}"]
    assert len(demo_site.requests) == before


def test_distributed_mode_without_redis_is_one_line_naming_the_extra(
        demo_site: FixtureServer, tmp_path: Path) -> None:
    before = len(demo_site.requests)
    result, _ = crawl_blocked(f"{demo_site.url}/docs/", tmp_path / "out", blocked="redis",
                              settings={"DOCSCRAWL_REDIS_URL": "redis://127.0.0.1:9/0"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "docscrawl: error: setting DOCSCRAWL_REDIS_URL: distributed mode "
        "(DOCSCRAWL_REDIS_URL) needs the redis package: pip install 'docscrawl[distributed]'"]
    assert len(demo_site.requests) == before
