"""One crawl's shared state and output files: the spider and the pipelines both use it.

Output files are opened when the crawl starts and written line by line. When the crawl
ends, page records that gained aliases or discovery reasons after they were written (a
later duplicate, a redirect to an already written page), or whose canonical URL changed
because a preferred alias turned up, are updated (`docscrawl.finalize`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from docscrawl import __version__
from docscrawl.config import CrawlConfig
from docscrawl.crawllog import CrawlLog, utc_now
from docscrawl.discovery.netguard import AddressGuard
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.traps import TrapGuard
from docscrawl.finalize import (
    log_updater,
    page_ref_updater,
    page_updater,
    resolve_renames,
    rewrite_jsonl,
)
from docscrawl.frontier import Frontier, PageTrack
from docscrawl.incremental import Incremental
from docscrawl.jsonl import JsonlWriter, write_json_atomic

logger = logging.getLogger(__name__)

OUTPUT_FILES = ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                "changes.jsonl")


@dataclass(slots=True)
class WrittenPage:
    """What a written page record said about its URLs, to spot later growth."""

    tracks: list[PageTrack]
    observed: int
    discovery: int
    lastmod: str | None

    def growth(self) -> dict[str, Any]:
        """Fields to update when the page's tracks learned more after it was written."""
        observed: dict[str, None] = {}
        discovery: list[dict[str, Any]] = []
        lastmod = self.lastmod
        for track in self.tracks:
            observed.update(track.observed)
            lastmod = lastmod or track.sitemap_lastmod
            for item in track.discovery:
                if item not in discovery:
                    discovery.append(item)
        if (len(observed), len(discovery), lastmod) == (
            self.observed, self.discovery, self.lastmod
        ):
            return {}
        return {"observed_urls": list(observed), "discovery": discovery,
                "sitemap_lastmod": lastmod}


class CrawlSession:
    """Config, frontier, crawl log and output writers of one crawl."""

    def __init__(self, config: CrawlConfig, *, stats: Any = None,
                 trap_limits: tuple[int, int] = (1000, 100), run_id: str | None = None) -> None:
        self.config = config
        self.out_dir = config.out_dir
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.started_at = utc_now()
        self._t0 = time.monotonic()
        self.stats = stats
        self.log = CrawlLog(JsonlWriter(self.out_dir / "crawl_log.jsonl"), stats=stats)
        self.pages = JsonlWriter(self.out_dir / "pages.jsonl")
        self.chunks = JsonlWriter(self.out_dir / "chunks.jsonl")
        self.structure = JsonlWriter(self.out_dir / "structure.jsonl")
        self.incremental = Incremental(config.state_dir or self.out_dir,
                                       self.out_dir / "changes.jsonl", run_id=run_id)
        self.frontier = Frontier(
            Scope(config.site, allow=config.allow, deny=config.deny),
            AddressGuard(_host_of(config.site)),
            max_pages=config.max_pages,
            max_depth=config.max_depth,
            traps=TrapGuard(per_pattern=trap_limits[0], per_path_queries=trap_limits[1]),
        )
        self.written: dict[str, WrittenPage] = {}  # canonical URL -> what was written
        self.renames: dict[str, str] = {}  # canonical URL written -> better one found later
        self.removed = 0
        self.finished = False
        self._write_run("running", None)

    def record_written(self, canonical_url: str, track: PageTrack) -> None:
        """Remember a written page record and the track it came from."""
        track.record_canonical = canonical_url
        self.written[canonical_url] = WrittenPage(
            [track], len(track.observed), len(track.discovery), track.sitemap_lastmod
        )

    def record_merged(self, canonical_url: str, track: PageTrack) -> None:
        """A content duplicate joins a written record: its URLs count for that record."""
        track.merged_into = canonical_url
        entry = self.written.get(canonical_url)
        if entry is not None:
            entry.tracks.append(track)

    def elapsed_s(self) -> float:
        """Seconds since the crawl started."""
        return time.monotonic() - self._t0

    def rename_canonical(self, old: str, new: str) -> None:
        """A better URL for a written page turned up: its records follow at the end."""
        self.renames[old] = new
        entry = self.written.pop(old, None)
        if entry is not None:
            self.written[new] = entry

    def finish(self, finish_reason: str) -> dict[str, Any]:
        """Close open URLs, update grown or renamed records, write run.json, close files."""
        if self.finished:
            return {}
        self.finished = True
        closed = self.log.close_open("crawl_closed", f"crawl ended ({finish_reason}) first")
        if closed:
            logger.warning("docscrawl: %d URLs were still pending when the crawl ended", closed)
        for writer in (self.pages, self.chunks, self.structure):
            writer.close()
        self.log.close()
        updated = self._update_written_records()
        for old, new in resolve_renames(self.renames).items():
            self.incremental.rename(old, new)
        self.removed = self.incremental.finish(complete=self._complete(finish_reason))
        return self._write_run("finished", finish_reason, updated=updated)

    def _complete(self, finish_reason: str | None) -> bool:
        """A crawl that ran to its natural end, limited by neither max_pages nor max_depth."""
        return finish_reason == "finished" and not self.frontier.limited

    def _update_written_records(self) -> int:
        """Rewrite output files once when written records gained URLs or a new canonical."""
        grown = {canonical: update for canonical, entry in self.written.items()
                 if (update := entry.growth())}
        renames = resolve_renames(self.renames)
        if grown or renames:
            rewrite_jsonl(self.out_dir / "pages.jsonl", page_updater(grown, renames))
        if renames:
            for name in ("structure.jsonl", "chunks.jsonl"):
                rewrite_jsonl(self.out_dir / name, page_ref_updater(renames))
            rewrite_jsonl(self.out_dir / "crawl_log.jsonl", log_updater(renames))
        return len(set(grown) | set(renames.values()))

    def _write_run(self, status: str, finish_reason: str | None, *,
                   updated: int = 0) -> dict[str, Any]:
        counts = self.log.summary()
        run = {
            "site": self.config.site,
            "arguments": self.config.as_arguments(),
            "status": status,
            "finish_reason": finish_reason,
            "complete": status == "finished" and self._complete(finish_reason),
            "started_at": self.started_at,
            "finished_at": utc_now() if status == "finished" else None,
            "elapsed_s": round(self.elapsed_s(), 3),
            "docscrawl_version": __version__,
            "pages_written": self.pages.count,
            "chunks_written": self.chunks.count,
            "changes": dict(sorted(self.incremental.counts.items())),
            "state": str(self.incremental.store.path),
            "run_id": self.incremental.run.run_id,
            "records_updated_at_end": updated,
            "counts": counts,
            "skip_examples": {
                reason: {"url": url, "rule": rule}
                for reason, (url, rule) in sorted(self.log.skip_examples.items())
            },
            "output": {name: str(self.out_dir / name) for name in OUTPUT_FILES},
        }
        write_json_atomic(self.out_dir / "run.json", run)
        return run


def _host_of(url: str) -> str:
    return urlsplit(url).hostname or ""
