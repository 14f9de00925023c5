"""One crawl's shared state and output files: the spider and the pipelines both use it.

Output files are opened when the crawl starts and written line by line. When the crawl
ends, page records that gained aliases or discovery reasons after they were written (a
later duplicate, a redirect to an already written page) are updated in one pass that
rewrites pages.jsonl through a temporary file and an atomic rename.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from docscrawl import __version__
from docscrawl.config import CrawlConfig
from docscrawl.crawllog import CrawlLog, utc_now
from docscrawl.discovery.netguard import AddressGuard
from docscrawl.discovery.scope import Scope
from docscrawl.frontier import Frontier, PageTrack
from docscrawl.jsonl import JsonlWriter, dumps_line, write_json_atomic

logger = logging.getLogger(__name__)

OUTPUT_FILES = ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl")


@dataclass(slots=True)
class WrittenPage:
    """What a written page record said about its URLs, to spot later growth."""

    tracks: list[PageTrack]
    observed: int
    discovery: int
    extra: dict[str, Any] = field(default_factory=dict)


class CrawlSession:
    """Config, frontier, crawl log and output writers of one crawl."""

    def __init__(self, config: CrawlConfig, *, stats: Any = None) -> None:
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
        self.frontier = Frontier(
            Scope(config.site, allow=config.allow, deny=config.deny),
            AddressGuard(_host_of(config.site)),
            max_pages=config.max_pages,
            max_depth=config.max_depth,
        )
        self.written: dict[str, WrittenPage] = {}  # canonical URL -> what was written
        self.finished = False
        self._write_run("running", None)

    def record_written(self, canonical_url: str, track: PageTrack) -> None:
        """Remember a written page record and the track it came from."""
        track.record_canonical = canonical_url
        self.written[canonical_url] = WrittenPage(
            [track], len(track.observed), len(track.discovery)
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

    def finish(self, finish_reason: str) -> dict[str, Any]:
        """Close open URLs, update grown records, write run.json, close every file."""
        if self.finished:
            return {}
        self.finished = True
        closed = self.log.close_open("crawl_closed", f"crawl ended ({finish_reason}) first")
        if closed:
            logger.warning("docscrawl: %d URLs were still pending when the crawl ended", closed)
        for writer in (self.pages, self.chunks, self.structure):
            writer.close()
        updated = self._update_grown_records()
        self.log.close()
        summary = self._write_run("finished", finish_reason, updated=updated)
        return summary

    def _update_grown_records(self) -> int:
        """Rewrite pages.jsonl once when records gained URLs after being written."""
        grown: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
        for canonical, entry in self.written.items():
            observed: dict[str, None] = {}
            discovery: list[dict[str, Any]] = []
            for track in entry.tracks:
                observed.update(track.observed)
                for item in track.discovery:
                    if item not in discovery:
                        discovery.append(item)
            if len(observed) != entry.observed or len(discovery) != entry.discovery:
                grown[canonical] = (list(observed), discovery)
        if not grown:
            return 0
        path = self.out_dir / "pages.jsonl"
        tmp = path.with_name("pages.jsonl.tmp")
        with path.open(encoding="utf-8") as src, tmp.open("w", encoding="utf-8") as dst:
            for raw in src:
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue  # a torn last line from an earlier crash: drop it
                update = grown.get(record.get("canonical_url"))
                if update is not None:
                    record["observed_urls"], record["discovery"] = update
                dst.write(dumps_line(record))
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, path)
        return len(grown)

    def _write_run(self, status: str, finish_reason: str | None, *,
                   updated: int = 0) -> dict[str, Any]:
        counts = self.log.summary()
        run = {
            "site": self.config.site,
            "arguments": self.config.as_arguments(),
            "status": status,
            "finish_reason": finish_reason,
            "complete": status == "finished" and finish_reason == "finished"
            and not self.frontier.limited,
            "started_at": self.started_at,
            "finished_at": utc_now() if status == "finished" else None,
            "elapsed_s": round(self.elapsed_s(), 3),
            "docscrawl_version": __version__,
            "pages_written": self.pages.count,
            "chunks_written": self.chunks.count,
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
