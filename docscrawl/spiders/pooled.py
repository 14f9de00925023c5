"""The `docs` spider's part that sends an HTML page to an extraction worker.

With `-a workers=N` (or `DOCSCRAWL_EXTRACT_WORKERS`), N worker processes
(`docscrawl.crawl.pool`) parse each page and do all that reads its tree: the render
middleware's sparse-page check, the meta refresh, links, extraction and the site-version
signals of the pages the site samples for them, decided when a page is sent
(`SiteVersions.wants`; `docscrawl.extract.worker`). The crawler keeps the rest (the frontier, the
pipelines after extraction, the writers), so the two run on two cores.

A page goes to a worker once the template table is frozen (the warm-up's pages are judged
in the crawler, which learns the table from them; the frozen table is handed to every
worker when the pool starts) and only when nothing in the crawler has parsed it already
(a rendered page: the middleware read its text). An inventory crawl (`extract=off`) needs
no table. With `DOCSCRAWL_TEMPLATE_WARMUP = False` the table is never frozen, so every
page stays in the crawler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.http import Request, Response, TextResponse
from scrapy.utils.response import get_base_url
from twisted.python.failure import Failure

from docscrawl.config import AUTO, auto_workers, parse_workers
from docscrawl.crawl.pool import ExtractPool
from docscrawl.extensions.gctuning import gen0_threshold
from docscrawl.extract.worker import PageFacts, PageJob, WorkerSetup
from docscrawl.vocab import Meta

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from docscrawl.config import CrawlConfig
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.render.middleware import RenderMiddleware


def pool_size(config: CrawlConfig, settings: Any) -> int:
    """`-a workers=N`, else the `DOCSCRAWL_EXTRACT_WORKERS` setting (0: in the crawler;
    `auto`, the default: `config.auto_workers`)."""
    workers = config.workers
    if workers is None:
        workers = parse_workers(settings.get("DOCSCRAWL_EXTRACT_WORKERS", AUTO),
                                source="setting")
    if workers == AUTO:
        return auto_workers()
    return workers if isinstance(workers, int) else 0


class PagePool:
    """Pages to extraction workers, when there are workers (`size` > 0)."""

    def __init__(self, crawler: Crawler, session: CrawlSession, size: int) -> None:
        self.crawler = crawler
        self.session = session
        self.config = session.config
        self.size = size
        self._pool: ExtractPool | None = None
        self._render: RenderMiddleware | None = None

    def ready(self) -> bool:
        """True when pages go to the workers now (see the module doc)."""
        return self.size > 0 and (not self.config.extract
                                  or self.session.site_model.template.frozen)

    def takes(self, response: Response) -> bool:
        """True for an HTML response a worker parses (nothing parsed it in the crawler)."""
        return (isinstance(response, TextResponse) and response._cached_selector is None
                and self.ready())

    async def facts(self, response: TextResponse) -> tuple[PageFacts, Request | None]:
        """The page's facts from a worker, and when it found the page sparse the request
        that fetches it again (`RenderMiddleware.verdict`). Raises
        `crawl.pool.WorkerCrashed`, and `NoBrowserError` for a sparse page."""
        render = None
        if response.meta.get(Meta.SPARSE_IN_WORKER) and "playwright" not in response.flags:
            render = self.render
        job = PageJob(url=response.url, text=response.text, base_url=get_base_url(response),
                      body_bytes=len(response.body), extract=self.config.extract,
                      sparse=render.sparse_check() if render is not None else None,
                      signals=self.config.extract and self.session.site_model.versions.wants(
                          response.url))
        self.crawler.stats.inc_value("docscrawl/pages_in_workers")
        facts = await self.pool.run(job)
        if render is None or response.request is None:
            return facts, None
        return facts, render.verdict(response.request, facts.sparse, facts.complete_scripts)

    @property
    def pool(self) -> ExtractPool:
        """The worker processes, started when the first page goes to them."""
        if self._pool is None:
            table = self.session.site_model.template
            self._pool = ExtractPool(self.size, WorkerSetup(
                site_url=self.config.site, profile=self.config.profile,
                template=table.to_json() if self.config.extract else None,
                gc_gen0_threshold=gen0_threshold(self.crawler.settings)))
            self.crawler.stats.set_value("docscrawl/extract_workers", self.size)
        return self._pool

    @property
    def render(self) -> RenderMiddleware | None:
        """The crawl's render middleware (it takes a worker's sparse verdict)."""
        if self._render is None:
            from docscrawl.render.middleware import RenderMiddleware

            engine = self.crawler.engine
            middlewares = engine.downloader.middleware.middlewares if engine else ()
            self._render = next((m for m in middlewares if isinstance(m, RenderMiddleware)),
                                None)
        return self._render

    def close(self) -> None:
        if self._pool is not None:
            stats = self.crawler.stats
            stats.set_value("docscrawl/extract_workers_started", self._pool.started)
            stats.set_value("docscrawl/extract_workers_crashed", self._pool.crashed)
            self._pool.close()


def as_failure(exc: Exception, response: Response) -> Failure:
    """`exc` as the errback's failure of the response's request."""
    failure = Failure(exc)  # type: ignore[no-untyped-call]
    failure.request = response.request  # type: ignore[attr-defined]
    return failure
