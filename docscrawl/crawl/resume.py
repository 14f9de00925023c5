"""Pause and resume with Scrapy's `-s JOBDIR=DIR`: rebuild a crawl's memory from its files.

Scrapy keeps the queued requests and `spider.state` in JOBDIR only when the crawl stops
cleanly; after a `kill -9` neither survives (its queue index and state are written at
close). docscrawl therefore keeps what it needs in its own files, written line by line:

- the output files (`crawl_log.jsonl`, `pages.jsonl`, `chunks.jsonl`, `structure.jsonl`,
  `changes.jsonl`), opened in append mode when a run resumes;
- `JOBDIR/docscrawl_run.json`: the run id, output directory and status of the run;
- `JOBDIR/docscrawl_frontier.jsonl`: one `offer` line per first-seen URL (its discovery and
  depth, written before its `discovered` event) and one `claim` line per claimed page fetch
  (the page track), plus `rename` lines when a page got a better canonical URL.

Everything here is pure and streaming (one line in memory at a time, plus small per-URL
summaries); no Scrapy.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from docscrawl.chunking.chunker import ChunkRecord
from docscrawl.discovery.pagetrack import TrackFields
from docscrawl.export.records import PageRecord
from docscrawl.jsonl import JsonlWriter, dumps_line, read_jsonl, replacing, write_json_atomic
from docscrawl.vocab import TERMINAL, WRITTEN

RUN_MARKER = "docscrawl_run.json"
FRONTIER_JOURNAL = "docscrawl_frontier.jsonl"


def cut_torn_tail(path: Path) -> int:
    """Drop the part after the last newline (a line torn by a kill); bytes removed."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as handle:
        block = 65536
        end = size
        while end > 0:
            start = max(0, end - block)
            handle.seek(start)
            chunk = handle.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            end = start
        else:
            keep = 0
        if keep < size:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        return size - keep


def filter_jsonl(path: Path, keep: Callable[[dict[str, Any]], bool]) -> int:
    """Rewrite a JSONL file without the records `keep` refuses (temp file + atomic
    rename); returns how many were dropped."""
    if not path.exists():
        return 0
    dropped = 0
    with replacing(path) as dst:
        for record in read_jsonl(path):
            if keep(record):
                dst.write(dumps_line(record))
            else:
                dropped += 1
    return dropped


# ---- crawl log --------------------------------------------------------------------------


@dataclass
class LogReplay:
    """What crawl_log.jsonl says about the URLs of the interrupted run."""

    discovered: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # url -> discovery
    closed: set[str] = field(default_factory=set)
    events: Counter[str] = field(default_factory=Counter)
    skip_reasons: Counter[str] = field(default_factory=Counter)
    failure_reasons: Counter[str] = field(default_factory=Counter)
    skip_examples: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # url -> (event, canonical_url) for pages written (extracted / unchanged)
    written: dict[str, tuple[str, str]] = field(default_factory=dict)
    duplicate_urls: list[tuple[str, str]] = field(default_factory=list)  # (url, normalized)
    same_content: list[tuple[str, str]] = field(default_factory=list)  # (url, duplicate_of)
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (url, target)
    limited: bool = False  # max_pages / max_depth refused a URL

    @property
    def open(self) -> list[str]:
        """Discovered URLs without a terminal event, in discovery order."""
        return [url for url in self.discovered if url not in self.closed]

    @property
    def written_canonicals(self) -> set[str]:
        return {canonical for _, canonical in self.written.values()}


def replay_log(path: Path) -> LogReplay:
    """Stream crawl_log.jsonl into a `LogReplay` (counts as CrawlLog keeps them)."""
    replay = LogReplay()
    for line in read_jsonl(path):
        url, event = line.get("url"), line.get("event")
        if not isinstance(url, str) or not isinstance(event, str):
            continue
        reason, rule = line.get("reason"), line.get("rule")
        replay.events[event] += 1
        if event == "skipped" and reason:
            replay.skip_reasons[reason] += 1
            replay.skip_examples.setdefault(reason, (url, rule))
        elif event == "failed" and reason:
            replay.failure_reasons[reason] += 1
        if event == "discovered":
            replay.discovered.setdefault(url, line.get("discovery"))
            continue
        if event not in TERMINAL or url not in replay.discovered or url in replay.closed:
            continue  # resources (robots.txt, sitemaps) are not discovered pages
        replay.closed.add(url)
        if event in WRITTEN and line.get("canonical_url"):
            replay.written[url] = (event, line["canonical_url"])
        elif event == "skipped" and reason == "duplicate_url" and rule:
            replay.duplicate_urls.append((url, rule))
        elif event == "skipped" and reason in ("max_pages", "max_depth"):
            replay.limited = True
        elif event == "duplicate" and reason == "same_content" and line.get("duplicate_of"):
            replay.same_content.append((url, line["duplicate_of"]))
        elif event == "duplicate" and line.get("duplicate_of"):  # redirect, meta_refresh
            replay.redirects.append((url, line["duplicate_of"]))
    return replay


# ---- pages ------------------------------------------------------------------------------


@dataclass(slots=True)
class PageSummary:
    """The fields of a written page record that resuming needs (not its content)."""

    canonical_url: str
    final_url: str
    content_hash: str
    observed_urls: list[str]
    discovery: list[dict[str, Any]]
    sitemap_lastmod: str | None
    version: dict[str, Any] | None = None  # the record's version (content deduplication)


def replay_pages(path: Path) -> dict[str, PageSummary]:
    """Written page records by canonical URL, in file order."""
    pages: dict[str, PageSummary] = {}
    for record in read_jsonl(path):
        canonical = record.get("canonical_url")
        if not isinstance(canonical, str):
            continue
        pages[canonical] = PageSummary(
            canonical_url=canonical,
            final_url=record.get("final_url") or canonical,
            content_hash=record.get("content_hash") or "",
            observed_urls=list(record.get("observed_urls") or []),
            discovery=list(record.get("discovery") or []),
            sitemap_lastmod=record.get("sitemap_lastmod"),
            version=record.get("version"),
        )
    return pages


def _record_canonical(record: dict[str, Any]) -> str | None:
    return record.get("canonical_url") or (record.get("metadata") or {}).get("canonical_url")


def roll_back_unlogged(out_dir: Path, logged: set[str]) -> set[str]:
    """Remove the lines of pages whose outcome never reached the crawl log.

    A page's lines are written in order pages, structure, chunks, then its `extracted` (or
    `unchanged`) event: a kill in between leaves a page without its outcome (at most the
    last one). Its lines are removed from all three files; the page is fetched again.
    Returns the canonical URLs rolled back.
    """
    partial: set[str] = {
        canonical for record in read_jsonl(out_dir / "pages.jsonl")
        if (canonical := record.get("canonical_url")) is not None and canonical not in logged}
    # structure/chunk lines of a page whose pages line was torn off count too
    for name in ("structure.jsonl", "chunks.jsonl"):
        for record in read_jsonl(out_dir / name):
            canonical = _record_canonical(record)
            if canonical is not None and canonical not in logged:
                partial.add(canonical)
    if partial:
        for name in ("pages.jsonl", "structure.jsonl", "chunks.jsonl"):
            filter_jsonl(out_dir / name, lambda r: _record_canonical(r) not in partial)
    return partial


def records_of(out_dir: Path, canonicals: set[str]) -> tuple[
        dict[str, PageRecord], dict[str, list[ChunkRecord]]]:
    """Full page records and chunk records of a few canonical URLs (state repair): the
    lines this run wrote, read back."""
    pages = {r["canonical_url"]: cast(PageRecord, r)
             for r in read_jsonl(out_dir / "pages.jsonl")
             if r.get("canonical_url") in canonicals}
    chunks: dict[str, list[ChunkRecord]] = {c: [] for c in canonicals}
    for record in read_jsonl(out_dir / "chunks.jsonl"):
        canonical = _record_canonical(record)
        if canonical in chunks:
            chunks[canonical].append(cast(ChunkRecord, record))
    return pages, chunks


def reported_changes(path: Path) -> tuple[set[str], Counter[str]]:
    """Canonical URLs already in changes.jsonl for this run, and counts by change."""
    reported: set[str] = set()
    counts: Counter[str] = Counter()
    for line in read_jsonl(path):
        canonical = line.get("canonical_url")
        if isinstance(canonical, str) and canonical not in reported:
            reported.add(canonical)
            counts[line.get("change") or "unknown"] += 1
    return reported, counts


# ---- frontier journal -------------------------------------------------------------------


@dataclass
class JournalReplay:
    """The frontier journal of the interrupted run."""

    offers: dict[str, dict[str, Any]] = field(default_factory=dict)  # url -> offer line
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> track fields
    inherited: set[str] = field(default_factory=set)  # keys claimed by a redirect target
    renames: list[tuple[str, str]] = field(default_factory=list)
    relabels: dict[str, dict[str, Any]] = field(default_factory=dict)  # new -> its fields
    declared: dict[str, bool] = field(default_factory=dict)  # canonical -> rel=canonical


def replay_journal(path: Path) -> JournalReplay:
    """Stream the frontier journal."""
    replay = JournalReplay()
    for line in read_jsonl(path):
        kind = line.get("kind")
        if kind == "offer" and isinstance(line.get("url"), str):
            replay.offers.setdefault(line["url"], line)
        elif kind == "claim" and isinstance(line.get("track"), dict):
            track = line["track"]
            if isinstance(track.get("key"), str):
                replay.claims[track["key"]] = track
                if line.get("inherited"):
                    replay.inherited.add(track["key"])
        elif kind == "rename" and line.get("old") and line.get("new"):
            replay.renames.append((line["old"], line["new"]))
            if isinstance(line.get("fields"), dict):
                replay.relabels[line["new"]] = line["fields"]
        elif kind == "group" and line.get("canonical"):
            replay.declared[line["canonical"]] = bool(line.get("declared"))
    return replay


def read_marker(jobdir: Path) -> dict[str, Any] | None:
    """The run marker of a JOBDIR, or None when absent or unreadable."""
    path = jobdir / RUN_MARKER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ---- writing the JOBDIR files -------------------------------------------------------------


class JobJournal:
    """The JOBDIR files this run writes as it goes: the frontier journal (one line per
    first-seen URL, claimed fetch, content group and rename) and the run marker."""

    def __init__(self, jobdir: Path, *, append: bool) -> None:
        self.jobdir = jobdir
        self._journal = JsonlWriter(jobdir / FRONTIER_JOURNAL, append=append)

    def offer(self, url: str, reason: str, source: str | None, depth: int,
              lastmod: str | None, inherit: TrackFields | None) -> None:
        """A first-seen URL, before its `discovered` event (`inherit`: track fields)."""
        self._journal.write({"kind": "offer", "url": url, "reason": reason,
                             "source": source, "depth": depth, "lastmod": lastmod,
                             "inherit": inherit})

    def claim(self, track: TrackFields, *, inherited: bool) -> None:
        """A claimed page fetch (its track's fields), before its request exists."""
        self._journal.write({"kind": "claim", "track": track, "inherited": inherited})

    def group(self, canonical: str, declared: bool) -> None:
        """Whether a content group's canonical URL came from a rel=canonical."""
        self._journal.write({"kind": "group", "canonical": canonical, "declared": declared})

    def rename(self, old: str, new: str, fields: dict[str, Any]) -> None:
        """A written page's better canonical URL, and the fields its records take."""
        self._journal.write({"kind": "rename", "old": old, "new": new, "fields": fields})

    def mark(self, marker: dict[str, Any]) -> None:
        """Write the run marker (`RUN_MARKER`), atomically."""
        self.jobdir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.jobdir / RUN_MARKER, marker)

    def close(self) -> None:
        self._journal.close()
