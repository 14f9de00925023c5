"""`scrapy crawl`, with docscrawl's arguments validated before anything else starts.

Scrapy picks this command over its own through `COMMANDS_MODULE`. A bad argument prints one
line naming it on stderr and exits with status 2, before the crawler process (and its
logging) exists and before any request is made.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scrapy import Spider
from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.crawler import Crawler

from docscrawl.config import ConfigError, build_config
from docscrawl.crawl.politeness import apply_politeness
from docscrawl.distributed import REDIS_MISSING, redis_installed
from docscrawl.distributed.connect import connection_problem
from docscrawl.incremental.state import DB_NAME, StateError, StateStore

DOCS_SPIDER = "docs"


# Finish reasons that mean the crawl could not do its job: the process exits with status 1.
FAILED_FINISH_REASONS = frozenset({"browser_unavailable", "shutdown", "start_error"})


class Command(ScrapyCrawlCommand):
    """Scrapy's crawl command plus an up-front check of the `docs` spider's arguments, and
    a non-zero exit status when the crawl ended for a reason that is a failure."""

    _docs_crawler: Crawler | None = None  # Scrapy's own `_crawler` is typed as never None

    def _create_crawler(self, spidercls: type[Spider] | str) -> Crawler:
        self._docs_crawler = super()._create_crawler(spidercls)
        return self._docs_crawler

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        super().run(args, opts)
        stats = self._docs_crawler.stats if self._docs_crawler is not None else None
        reason = stats.get_value("finish_reason") if stats is not None else None
        if reason in FAILED_FINISH_REASONS and not self.exitcode:
            self.exitcode = 1

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        if args and args[0] == DOCS_SPIDER:
            assert self.settings is not None
            try:
                config = build_config(opts.spargs,
                                      output_root=self.settings.get("DOCSCRAWL_OUTPUT_ROOT"))
                check_state(config.state_dir or config.out_dir)
                if self.settings.get("DOCSCRAWL_REDIS_URL") and not redis_installed():
                    raise ConfigError(f"setting DOCSCRAWL_REDIS_URL: {REDIS_MISSING}")
                if self.settings.get("DOCSCRAWL_REDIS_URL") and (problem := connection_problem(
                        self.settings.get("DOCSCRAWL_REDIS_URL"))):  # password redacted
                    raise ConfigError(f"setting DOCSCRAWL_REDIS_URL: {problem}")
                apply_politeness(self.settings, config.site)
            except (ConfigError, ValueError) as exc:
                print(f"docscrawl: error: {exc}", file=sys.stderr)
                sys.exit(2)


def check_state(directory: Path) -> None:
    """Refuse a corrupt or foreign state database before anything starts."""
    if not (directory / DB_NAME).exists():
        return
    try:
        StateStore.open(directory).close()
    except StateError as exc:
        raise ConfigError(f"argument state: {exc}") from None
