"""The admission seam: who logs a URL's discovery and refusal, and who fetches it.

The spider decides locally (`Frontier.offer` / `admit`: scope, robots, traps, duplicates)
and hands the outcome to an `Admission`, chosen once in the spider's `from_crawler`
(`build_admission`):

- `base`: the `Admission` protocol, the `CrawlHooks` it gets (plain collaborators, never
  the spider) and `build_admission`;
- `local`: `LocalAdmission` (one process): log it, fetch an admitted page here at once;
- `redis`: `RedisAdmission` (`DOCSCRAWL_REDIS_URL`): the first worker of the crawl to
  discover a URL logs it, an admitted page is claimed and queued in Redis for whichever
  worker takes it first (`docscrawl.distributed.worker`).

Each admission brings its redirect waits (`docscrawl.redirects`). Importing this package
imports neither Scrapy nor redis.
"""
