"""Resuming an interrupted JOBDIR run: the session rebuilt from the files it left.

`docscrawl.crawl.resume` reads those files (crawl log, frontier journal, pages); this module
puts what they say back into a new `CrawlSession`: its crawl log, frontier, written
records, deduplication groups and incremental state.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docscrawl.crawl.finalize import resolve_renames
from docscrawl.crawl.ledger import ContentGroup
from docscrawl.crawl.resume import (
    FRONTIER_JOURNAL,
    RUN_MARKER,
    LogReplay,
    cut_torn_tail,
    records_of,
    replay_journal,
    replay_log,
    replay_pages,
    reported_changes,
    roll_back_unlogged,
)
from docscrawl.discovery.pagetrack import PageTrack
from docscrawl.discovery.urls import normalize_url
from docscrawl.extract.version import evidence_of, page_version_key
from docscrawl.jsonl import expand_jsonl, read_json_object, read_jsonl
from docscrawl.vocab import OUTPUT_FILES

if TYPE_CHECKING:
    from docscrawl.crawl.session import CrawlSession

logger = logging.getLogger(__name__)


def prepare_resume(out_dir: Path, jobdir: Path) -> LogReplay:
    """Cut torn last lines and roll back a page whose outcome was never logged; the
    interrupted run's crawl log, replayed."""
    for name in OUTPUT_FILES:
        expand_jsonl(out_dir / name)  # a kill while `compress=gzip` compressed it
        cut_torn_tail(out_dir / name)
    cut_torn_tail(jobdir / FRONTIER_JOURNAL)
    replay = replay_log(out_dir / "crawl_log.jsonl")
    rolled_back = roll_back_unlogged(out_dir, replay.written_canonicals)
    if rolled_back:
        logger.info("docscrawl: resume: %d page(s) without a logged outcome are fetched "
                    "again", len(rolled_back))
    return replay


def restore_session(session: CrawlSession, replay: LogReplay) -> None:
    """Rebuild the crawl log, frontier, written records, dedup groups and state of the
    interrupted run from its files."""
    assert session.jobdir is not None
    previous = read_json_object(session.run_dir / "run.json")
    marker = read_json_object(session.jobdir / RUN_MARKER)
    session.started_at = (marker.get("started_at") or previous.get("started_at")
                          or session.started_at)
    session.resumes = int(marker.get("resumes") or 0) + 1
    session.log.restore(open_urls=replay.open, closed=replay.closed, events=replay.events,
                     skip_reasons=replay.skip_reasons,
                     failure_reasons=replay.failure_reasons,
                     skip_examples=replay.skip_examples)
    reported, counts = reported_changes(session.run_dir / "changes.jsonl")
    session.incremental.restore_reported(reported, counts)
    journal = replay_journal(session.jobdir / FRONTIER_JOURNAL)
    session.frontier.restore(
        replay.discovered,
        ((fields, key in journal.inherited) for key, fields in journal.claims.items()),
        limited=replay.limited,
    )
    for url, key in replay.duplicate_urls:
        session.frontier.restore_alias(url, key, replay.discovered.get(url))
    session.resume_open = replay.open
    session.resume_offers = {url: journal.offers[url] for url in replay.open
                          if url in journal.offers}
    pages = replay_pages(session.run_dir / "pages.jsonl")
    session.pages.count = len(pages)
    session.chunks.count = sum(1 for _ in read_jsonl(session.run_dir / "chunks.jsonl"))
    session.structure.count = sum(1 for _ in read_jsonl(session.run_dir / "structure.jsonl"))
    _repair_state(session, replay, pages)  # before replayed merges mark rows seen
    for url, (_, canonical) in replay.written.items():
        summary = pages.get(canonical)
        if summary is None:
            continue
        track = session.frontier.track_for(url)
        if track is None:
            track = PageTrack(url, normalize_url(url), 0)
            session.restored_tracks.append(track)
        for observed in summary.observed_urls:
            track.observe(observed)
        for entry in summary.discovery:
            track.add_discovery(entry.get("reason") or "", entry.get("from"))
        track.sitemap_lastmod = track.sitemap_lastmod or summary.sitemap_lastmod
        track.mark_written(canonical, listed=(
            len(summary.observed_urls), len(summary.discovery), summary.sitemap_lastmod))
    for old, new in journal.renames:
        session.renames[old] = new
    session.relabels.update(journal.relabels)
    for url, target in replay.redirects:  # the target's page gained the source's URLs
        source, page = session.frontier.track_for(url), session.frontier.track_for(target)
        if source is not None and page is not None and page is not source:
            page.absorb(source)
    resolved = resolve_renames(session.renames)
    for url, duplicate_of in replay.same_content:
        track = session.frontier.track_for(url)
        if track is not None:
            track.observe(track.key)  # the URL it was fetched at
            session.record_merged(resolved.get(duplicate_of, duplicate_of), track)
    for summary in pages.values():
        canonical = resolved.get(summary.canonical_url, summary.canonical_url)
        session.content_groups.setdefault(
            (page_version_key(evidence_of(summary.version), summary.final_url),
             summary.content_hash),
            ContentGroup(canonical, journal.declared.get(canonical, True)))
        session.canonicals_taken.add(canonical)
    logger.info("docscrawl: resuming run %s (resume %d): %d pages written, %d URLs open",
                session.incremental.run.run_id, session.resumes, len(pages), len(replay.open))


def _repair_state(session: CrawlSession, replay: LogReplay, pages: dict[str, Any]) -> None:
    """A page whose outcome was logged but whose state row or changes line was not
    written before the kill gets them now."""
    incremental = session.incremental
    run_id = incremental.run.run_id
    todo: dict[str, tuple[str, str]] = {}
    for url, (event, canonical) in replay.written.items():
        row = incremental.row_for(canonical)
        if (row is None or row.last_seen_run != run_id
                or not incremental.was_reported(canonical)):
            todo[canonical] = (event, url)
    if not todo:
        return
    records, chunks = records_of(session.run_dir, set(todo))
    for canonical, (event, url) in todo.items():
        record = records.get(canonical)
        if record is None:
            continue
        row = incremental.row_for(canonical)
        if event == "unchanged" and row is not None:
            incremental.unchanged(row, etag=None, last_modified=None,
                                  observed_urls=pages[canonical].observed_urls,
                                  body_digest=None)
        else:
            incremental.fresh(record, chunks.get(canonical, []),
                              body_digest=record.get("body_hash"),
                              extra_urls=[normalize_url(url)])
    logger.info("docscrawl: resume: state brought up to date for %d page(s)", len(todo))
