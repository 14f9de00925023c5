"""Scrapy settings for docscrawl. Every `DOCSCRAWL_*` setting is documented in the README."""

import os

from docscrawl import __version__

BOT_NAME = "docscrawl"
SPIDER_MODULES = ["docscrawl.spiders"]
NEWSPIDER_MODULE = "docscrawl.spiders"
COMMANDS_MODULE = "docscrawl.commands"

# The robots.txt token is "docscrawl"; the full User-Agent says who we are.
USER_AGENT = f"docscrawl/{__version__} (+documentation crawler)"

# docscrawl applies robots.txt, redirects and duplicate filtering itself, so that every
# decision lands in the crawl log with its rule.
ROBOTSTXT_OBEY = False
REDIRECT_ENABLED = False  # the spider follows redirects itself (every hop is checked),
REDIRECT_MAX_TIMES = 20  # at most this many hops: then `failed` `too_many_redirects`
METAREFRESH_ENABLED = False
DUPEFILTER_CLASS = "scrapy.dupefilters.BaseDupeFilter"
# Pending requests live in disk queues, with or without JOBDIR (docscrawl.crawl.scheduler): a
# sitemap naming 50,000 pages must not put 50,000 Requests in memory.
SCHEDULER = "docscrawl.crawl.scheduler.DiskQueueScheduler"
DOCSCRAWL_DISK_QUEUE = True
COOKIES_ENABLED = False

CONCURRENT_REQUESTS = 8
# One item per response: Scrapy's default of 100 starts 100 asyncio tasks per response.
CONCURRENT_ITEMS = 8
# Scrapy re-parses a callback's source per response to warn about `return` in generators
# (its cache misses on bound methods); docscrawl's callbacks return nothing.
WARN_ON_GENERATOR_RETURN_VALUE = False
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_DELAY = 0
# AutoThrottle (docscrawl.crawl.politeness): `remote` = on unless the site is a loopback host;
# `on`, `off`. When on, it adapts the delay to the server's latency, starting here:
DOCSCRAWL_AUTOTHROTTLE = "remote"
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_MAX_DELAY = 10.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 4.0
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 20 * 1024 * 1024
DOWNLOAD_WARNSIZE = 5 * 1024 * 1024
# Bytes of a response's status line and headers (docscrawl.crawl.headlimit); more: too_large.
DOCSCRAWL_MAX_HEADER_BYTES = 256 * 1024
RETRY_ENABLED = True
RETRY_TIMES = 2
# Seconds before retry n: DOCSCRAWL_RETRY_BACKOFF * 2**n; Retry-After (429/503) wins
# when it asks for at most DOCSCRAWL_RETRY_AFTER_MAX seconds.
DOCSCRAWL_RETRY_BACKOFF = 0.5
DOCSCRAWL_RETRY_AFTER_MAX = 60.0

TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
LOG_LEVEL = "INFO"
LOGSTATS_INTERVAL = 0

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "docscrawl.middlewares.retry.BackoffRetryMiddleware": 550,
    "scrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware": None,
    # last before the download (after HttpCache, 900): credentials are added to the request
    # there and taken off once it is answered, so no retry or re-issue carries them back to
    # the scheduler's disk queue (JOBDIR)
    "docscrawl.middlewares.auth.SiteCredentialsMiddleware": 950,
    # below HttpCompression (590): sees decoded bodies; re-issues sparse pages to Chromium
    "docscrawl.render.middleware.RenderMiddleware": 585,
}

# Rendering (docscrawl.render.middleware, docscrawl.render.browser): scrapy-playwright's handler,
# started lazily on the first page that needs the browser; plain requests use HTTP/1.1.
DOWNLOAD_HANDLERS = {
    "http": "docscrawl.render.download.DownloadHandler",
    "https": "docscrawl.render.download.DownloadHandler",
}
PLAYWRIGHT_BROWSER_TYPE = "chromium"
PLAYWRIGHT_MAX_CONTEXTS = 1
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 4  # browser pages at once: more buys nothing on 2 cores
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 20_000  # ms per page navigation
PLAYWRIGHT_DOWNLOAD_TIMEOUT = 5_000  # ms; downloads are refused anyway
# Chromium binary; empty: $DOCSCRAWL_CHROMIUM_PATH, /usr/bin/chromium, Playwright's own.
DOCSCRAWL_CHROMIUM_PATH = ""
DOCSCRAWL_RENDER_MIN_TEXT_CHARS = 200  # less main-content text than this: sparse
DOCSCRAWL_RENDER_SETTLE_MS = 100  # quiet this long (content there, no fetch in flight) = rendered
DOCSCRAWL_RENDER_WAIT_MS = 10_000  # longest wait for main content after the page loads
DOCSCRAWL_RENDER_RETRIES = 1  # a timed-out or crashed render is retried this often

ITEM_PIPELINES = {
    "docscrawl.extract.pipeline.ExtractPipeline": 100,
    "docscrawl.extract.template.pipeline.TemplatePipeline": 150,
    "docscrawl.dedup.pipeline.DedupPipeline": 200,
    "docscrawl.export.pipeline.ExportPipeline": 900,
}
EXTENSIONS = {
    "scrapy.extensions.logstats.LogStats": None,
    "docscrawl.extensions.progress.Progress": 500,
    "docscrawl.extensions.gctuning.GcTuning": 10,
}
# Garbage collector during a crawl (docscrawl.extensions.gctuning): first-generation threshold; 0 =
# off.
DOCSCRAWL_GC_GEN0_THRESHOLD = 50_000

# Where `output/<host>/` lives (Scrapyd jobs set an absolute root).
DOCSCRAWL_OUTPUT_ROOT = "output"
# Crawler-trap caps (docscrawl.discovery.traps): URLs fetched per digit-pattern, and
# distinct query strings fetched per path, URLs in one counting chain (a calendar).
DOCSCRAWL_TRAP_PATTERN_LIMIT = 1000
DOCSCRAWL_TRAP_QUERY_LIMIT = 100
DOCSCRAWL_TRAP_CHAIN_LIMIT = 200
# Page tracks (how each page was found, its URLs) kept in memory besides those of pages in
# progress; the others wait in the crawl's scratch ledger on disk.
DOCSCRAWL_TRACKS_IN_MEMORY = 2048
DOCSCRAWL_SEEN_URLS_IN_MEMORY = 16_384  # the same for the URLs seen
# A region whose link set repeats on this many pages is template navigation.
DOCSCRAWL_TEMPLATE_MIN_PAGES = 3
# The links of those regions written once per site, in templates.jsonl (export.templates);
# False keeps every link inline in pages.jsonl and structure.jsonl.
DOCSCRAWL_TEMPLATE_LINKS = True
# Hold the first pages until the template table learned from its warm-up sample (template.warmup).
DOCSCRAWL_TEMPLATE_WARMUP = True
# Extraction worker processes (docscrawl.crawl.pool; `-a workers=N` wins); 0: in the crawler;
# auto: one when the crawl may use two or more CPUs, else 0.
DOCSCRAWL_EXTRACT_WORKERS = "auto"
# Retrieval chunks: target size in approximate tokens (see README), hard maximum (0: 2x target).
DOCSCRAWL_CHUNK_TOKENS = 400
DOCSCRAWL_CHUNK_MAX_TOKENS = 0
# Distributed mode (docscrawl.distributed): on when DOCSCRAWL_REDIS_URL is set. The environment
# variable of that name is the default: a password in it stays off the command line (ps).
DOCSCRAWL_REDIS_URL = os.environ.get("DOCSCRAWL_REDIS_URL", "")
DOCSCRAWL_REDIS_CRAWL_KEY = ""  # default: the seed URL
DOCSCRAWL_REDIS_LEASE = 60.0  # seconds before a silent worker's pages go back to the queue
DOCSCRAWL_REDIS_QUIET = 10.0  # seconds with nothing queued or leased before workers stop
DOCSCRAWL_WORKER_ID = ""  # default: host-pid-random
# Seconds between progress lines in the log.
DOCSCRAWL_PROGRESS_INTERVAL = 5.0

# Every DNS answer is checked against the SSRF guard: the address connected to is the one
# checked (docscrawl.discovery.resolver).
TWISTED_DNS_RESOLVER = "docscrawl.discovery.resolver.GuardedResolver"
# A crawl whose seed is private or loopback may also reach link-local and cloud metadata
# addresses (169.254.169.254...) when True (docscrawl.discovery.netguard).
DOCSCRAWL_ALLOW_LINK_LOCAL = False
