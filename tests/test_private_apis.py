"""Private names of dependencies that docscrawl relies on, checked on the installed versions.

pyproject.toml pins Protego and scrapy-playwright to the versions tested; when an upgrade
drops or renames one of these, this file fails first, naming what disappeared, instead of a
crawl failing somewhere in the middle.
"""

from __future__ import annotations

import importlib

import pytest
from protego import Protego

ROBOTS = "User-agent: docscrawl\nDisallow: /private/\nAllow: /private/ok$\nSitemap: /s.xml\n"


@pytest.mark.parametrize(("module", "name"), [
    ("protego._ruleset", "_RuleSet"),
    ("protego._urlpattern", "_URLPattern"),
    ("protego._utils", "_quote_path"),
    ("scrapy_playwright.handler", "ScrapyPlaywrightDownloadHandler"),
    ("scrapy_playwright.page", "PageMethod"),
    # docscrawl.crawl.headlimit replaces it with a parser that bounds the response head
    ("scrapy.core.downloader.handlers.http11", "_LenientHTTPClientParser"),
    ("twisted.web._newclient", "HTTPClientParser"),
])
def test_private_module_names_exist(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} disappeared"


def test_protego_parser_internals_used_by_robots_rules() -> None:
    """docscrawl.discovery.robots reads the matching rule's text from these."""
    parser = Protego.parse(ROBOTS)
    groups = parser._user_agents
    assert isinstance(groups, dict) and "docscrawl" in groups, "Protego._user_agents changed"
    group = groups["docscrawl"]
    rules = group._rules
    assert [rule.field for rule in rules], "_RuleSet._rules changed"
    patterns = parser._url_patterns
    assert isinstance(patterns, dict) and patterns, "Protego._url_patterns changed"
    assert all(isinstance(p._pattern, str) for p in patterns.values()), "_URLPattern._pattern"


def test_scrapy_playwright_handler_hooks_overridden_by_docscrawl() -> None:
    """docscrawl.render.playwright_handler overrides these to start the browser lazily (and its
    guard proxy with it, stopped in `_close`) and to pool pages (`_create_page`; a page kept
    open with `playwright_include_page`)."""
    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

    for name in ("_launch", "_download_request", "_maybe_launch_in_thread", "_close",
                 "_create_page"):
        assert callable(getattr(ScrapyPlaywrightDownloadHandler, name, None)), (
            f"ScrapyPlaywrightDownloadHandler.{name} disappeared")
