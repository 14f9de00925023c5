"""The render middleware with extraction workers (`-a workers=N`): the sparse check moves
to the worker (`extract.worker.page_facts`), and the middleware acts on its verdict as on
its own (`RenderMiddleware.verdict`): the same re-issued request, the same scripts learned."""

from __future__ import annotations

from types import SimpleNamespace

from scrapy.http import Request

from docscrawl.extract.worker import PageJob, Worker, WorkerSetup
from docscrawl.render.middleware import RenderMiddleware
from docscrawl.vocab import Meta
from tests.render.test_render_middleware import SHELL, STATIC, middleware, page


def pooled(mw: RenderMiddleware) -> RenderMiddleware:
    """`mw` in a crawl whose pages go to workers now."""
    mw.crawler.spider.pool = SimpleNamespace(ready=lambda: True)  # type: ignore[union-attr]
    return mw


def in_worker(mw: RenderMiddleware, url: str, body: bytes) -> tuple[str | None, frozenset[str]]:
    """The worker's verdict on the page, asked with the middleware's check."""
    text = body.decode("utf-8")
    job = PageJob(url=url, text=text, base_url=url, body_bytes=len(body), extract=True,
                  sparse=mw.sparse_check())
    facts = Worker(WorkerSetup(site_url="http://h/", profile=None, template=None)).run(job)
    return facts.sparse, facts.complete_scripts


def test_a_sparse_page_found_by_the_worker_is_rendered_as_before() -> None:
    alone, with_pool = middleware(), pooled(middleware())
    request, response = page("http://h/guide/", SHELL)
    expected = alone.process_response(request, response)
    request, response = page("http://h/guide/", SHELL)
    assert with_pool.process_response(request, response) is response  # left to the worker
    assert request.meta[Meta.SPARSE_IN_WORKER] is True
    reason, scripts = in_worker(with_pool, request.url, SHELL)
    again = with_pool.verdict(request, reason, scripts)
    assert isinstance(expected, Request) and isinstance(again, Request)
    assert again.meta["render_reason"] == expected.meta["render_reason"] == "client_generator"
    assert (again.url, again.meta["playwright"], again.dont_filter) == (
        expected.url, True, True)


def test_a_complete_page_teaches_the_same_scripts() -> None:
    alone, with_pool = middleware(), pooled(middleware())
    request, response = page("http://h/about.html", STATIC)
    assert alone.process_response(request, response) is response
    request, response = page("http://h/about.html", STATIC)
    assert with_pool.process_response(request, response) is response
    reason, scripts = in_worker(with_pool, request.url, STATIC)
    assert with_pool.verdict(request, reason, scripts) is None
    assert with_pool.inert_scripts == alone.inert_scripts
    assert with_pool._learned == alone._learned
