"""RenderMiddleware without a browser: which responses are re-issued, and how."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from docscrawl.config import CrawlConfig
from docscrawl.crawl.failures import RenderError
from docscrawl.render.middleware import TRACK, RenderMiddleware
from tests.conftest import SITES

SHELL = (SITES / "spa" / "guide" / "index.html").read_bytes()
STATIC = (SITES / "spa" / "about.html").read_bytes()


class Log:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def record(self, url: str, event: str, **fields: Any) -> bool:
        self.events.append((url, event, fields))
        return True


def middleware(mode: str = "auto", profile: dict[str, Any] | None = None) -> RenderMiddleware:
    crawler = get_crawler()
    crawler.stats = MemoryStatsCollector(crawler)
    crawler.spider = SimpleNamespace(  # type: ignore[assignment]
        config=CrawlConfig(site="https://docs.example/", out_dir=Path("out"), render=mode,
                           profile=profile or {}),
        session=SimpleNamespace(log=Log()),
    )
    return RenderMiddleware(crawler, mode=mode, min_text_chars=200, settle_ms=300,
                            wait_ms=10_000, retries=1)


def page(url: str, body: bytes, status: int = 200) -> tuple[Request, HtmlResponse]:
    request = Request(url, meta={TRACK: SimpleNamespace(url=url)})
    return request, HtmlResponse(url, body=body, status=status, request=request)


def test_a_sparse_page_is_reissued_to_the_browser() -> None:
    mw = middleware()
    request, response = page("http://h/guide/", SHELL)
    again = mw.process_response(request, response)
    assert isinstance(again, Request)
    assert again.dont_filter is True  # otherwise the dupefilter drops it silently
    assert again.meta["playwright"] is True
    assert again.meta["render_reason"] == "client_generator"
    assert again.meta["playwright_context_kwargs"]["accept_downloads"] is False
    assert again.meta["playwright_page_methods"]
    assert mw.stats.get_value("docscrawl/render/reason/client_generator") == 1


def test_the_browser_is_asked_unconditionally() -> None:
    request, response = page("http://h/guide/", SHELL)
    request.headers["If-None-Match"] = '"abc"'
    again = middleware().process_response(request, response)
    assert isinstance(again, Request)
    assert "If-None-Match" not in again.headers


@pytest.mark.parametrize(("url", "body", "status"), [
    ("http://h/about.html", STATIC, 200),   # complete as fetched
    ("http://h/guide/", SHELL, 404),        # errors are not rendered
])
def test_complete_and_failed_pages_are_not_rendered(url: str, body: bytes, status: int) -> None:
    request, response = page(url, body, status)
    assert middleware().process_response(request, response) is response


def test_render_never_and_always() -> None:
    request, response = page("http://h/guide/", SHELL)
    assert middleware("never").process_response(request, response) is response
    request, response = page("http://h/about.html", STATIC)
    again = middleware("always").process_response(request, response)
    assert isinstance(again, Request) and again.meta["render_reason"] == "render_always"


def test_non_page_requests_are_left_alone() -> None:
    response = HtmlResponse("http://h/guide/", body=SHELL, request=Request("http://h/guide/"))
    assert middleware().process_response(response.request, response) is response


def test_hash_route_urls_are_opened_with_their_fragment() -> None:
    request, response = page("http://h/hash/?_hashroute=/cli", STATIC)
    again = middleware().process_response(request, response)
    assert isinstance(again, Request)
    assert again.url == "http://h/hash/#/cli"
    assert again.meta["render_reason"] == "hash_route"


def test_rendered_response_is_logged_and_mapped_back_to_the_crawl_url() -> None:
    mw = middleware()
    request, response = page("http://h/hash/?_hashroute=/cli", STATIC)
    again = mw.process_response(request, response)
    assert isinstance(again, Request)
    rendered = HtmlResponse("http://h/hash/#/cli", body=b"<html><body><p>tiny</p></body></html>",
                            request=again, flags=["playwright"])
    out = mw.process_response(again, rendered)
    assert out.url == "http://h/hash/?_hashroute=/cli"
    (url, event, fields), = mw._spider.session.log.events
    assert (url, event, fields["reason"], fields["fetch_mode"]) == (
        "http://h/hash/?_hashroute=/cli", "rendered", "hash_route", "browser")
    assert [w["code"] for w in again.meta["render_warnings"]] == ["sparse_after_render"]


def test_a_failed_render_is_retried_once_then_is_a_render_error() -> None:
    mw = middleware()
    request, response = page("http://h/guide/", SHELL)
    first = mw.process_response(request, response)
    assert isinstance(first, Request)
    second = mw.process_exception(first, TimeoutError("Page.goto: Timeout 20000ms exceeded."))
    assert isinstance(second, Request) and second.meta["render_attempt"] == 2
    with pytest.raises(RenderError, match="after 2 attempts"):
        mw.process_exception(second, TimeoutError("Page.goto: Timeout 20000ms exceeded."))


def test_profile_main_selector_is_awaited() -> None:
    mw = middleware(profile={"selectors": {"main": "article.markdown-section"}})
    request, response = page("http://h/guide/", SHELL)
    again = mw.process_response(request, response)
    assert isinstance(again, Request)
    assert again.meta["render_reason"] == "main_selector_missing"
    assert again.meta["playwright_page_methods"][0].args[0] == "article.markdown-section"
