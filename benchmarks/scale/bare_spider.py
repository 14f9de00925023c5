"""The bare reference spider: follow every same-host link, keep nothing.

    cd /tmp && scrapy runspider /work/main/benchmarks/scale/bare_spider.py \
        -a site=http://127.0.0.1:PORT/ -a summary=/tmp/bare.json

It is what "a crawl of this site" costs with Scrapy alone: Scrapy's `LinkExtractor` on
every page, one `Request` per extracted link (fragments kept, as `LinkExtractor` returns
them; the duplicate filter drops the repeats), and docscrawl's concurrency (settings.py:
CONCURRENT_REQUESTS 8 per domain, no delay, robots.txt off, cookies off). Run it from a
directory outside any Scrapy project, or a project's settings leak in; the settings below
are `custom_settings`, so they win over a project's anyway. Writes pages/requests counts
to `-a summary=FILE` (JSON) when the spider closes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Request, Response, TextResponse
from scrapy.linkextractors import LinkExtractor


class BareSpider(scrapy.Spider):
    name = "bare"
    custom_settings: ClassVar[dict[str, Any]] = {
        "CONCURRENT_REQUESTS": 8,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": False,
        "AUTOTHROTTLE_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 0,
        "ITEM_PIPELINES": {},
        "SPIDER_MIDDLEWARES": {},
        "DOWNLOADER_MIDDLEWARES": {},
        "DOWNLOAD_HANDLERS": {},
        "EXTENSIONS": {"scrapy.extensions.logstats.LogStats": None},
    }

    def __init__(self, site: str, summary: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.site = site
        self.summary = summary
        parts = urlsplit(site)
        self.origin = f"{parts.scheme}://{parts.netloc}/"
        # allow_domains/allowed_domains compare hosts with ports and miss 127.0.0.1:PORT
        self.links = LinkExtractor()
        self.pages = 0
        self.requests = 0

    async def start(self) -> AsyncIterator[Request]:
        yield Request(self.site, callback=self.parse)

    def parse(self, response: Response) -> Iterator[Request]:
        if response.status != 200 or not isinstance(response, TextResponse):
            return
        self.pages += 1
        for link in self.links.extract_links(response):
            if not link.url.startswith(self.origin):
                continue
            self.requests += 1
            yield Request(link.url, callback=self.parse)

    def closed(self, reason: str) -> None:
        if self.summary:
            with open(self.summary, "w", encoding="utf-8") as handle:
                json.dump({"pages": self.pages, "requests_built": self.requests,
                           "finish_reason": reason}, handle)
