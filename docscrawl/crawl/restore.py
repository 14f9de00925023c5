"""Resuming an interrupted JOBDIR run: what its files say, as data, and the resume state.

`docscrawl.crawl.resume` reads and writes the JOBDIR files (crawl log replay, frontier
journal, pages). Here: `read_resume` gathers what they say into one `ResumeData`, which
each part of the new crawl takes back on its own (the crawl log, the frontier, the output
files, deduplication, the incremental state); `written_tracks` gives the page tracks of the
pages already written; `ResumeState` is the resume's own part: the journal this run
writes, and the URLs the interrupted run left without an outcome.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docscrawl.crawl.resume import (
    FRONTIER_JOURNAL,
    RUN_MARKER,
    JobJournal,
    JournalReplay,
    LogReplay,
    PageSummary,
    cut_torn_tail,
    records_of,
    replay_journal,
    replay_log,
    replay_pages,
    reported_changes,
    roll_back_unlogged,
)
from docscrawl.discovery.pagetrack import PageTrack, track_fields
from docscrawl.discovery.urls import normalize_url
from docscrawl.jsonl import expand_jsonl, read_json_object, read_jsonl
from docscrawl.vocab import OUTPUT_FILES

if TYPE_CHECKING:
    from docscrawl.discovery.frontier import Frontier
    from docscrawl.incremental.recrawl import Incremental

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


@dataclass
class ResumeData:
    """Everything the interrupted run's files say that the resumed crawl takes back."""

    started_at: str | None
    resumes: int  # this resume's number
    log: LogReplay
    journal: JournalReplay
    pages: dict[str, PageSummary]  # written page records by canonical URL
    reported: set[str]  # canonical URLs already in changes.jsonl
    change_counts: Counter[str]
    chunk_lines: int
    structure_lines: int
    offers: dict[str, dict[str, Any]] = field(default_factory=dict)  # open URL -> offer

    @property
    def open(self) -> list[str]:
        """URLs the interrupted run left without an outcome, in discovery order."""
        return self.log.open


def read_resume(run_dir: Path, jobdir: Path, replay: LogReplay) -> ResumeData:
    """What the interrupted run's files (already `prepare_resume`d) say."""
    previous = read_json_object(run_dir / "run.json")
    marker = read_json_object(jobdir / RUN_MARKER)
    journal = replay_journal(jobdir / FRONTIER_JOURNAL)
    reported, counts = reported_changes(run_dir / "changes.jsonl")
    return ResumeData(
        started_at=marker.get("started_at") or previous.get("started_at"),
        resumes=int(marker.get("resumes") or 0) + 1,
        log=replay, journal=journal,
        pages=replay_pages(run_dir / "pages.jsonl"),
        reported=reported, change_counts=counts,
        chunk_lines=sum(1 for _ in read_jsonl(run_dir / "chunks.jsonl")),
        structure_lines=sum(1 for _ in read_jsonl(run_dir / "structure.jsonl")),
        offers={url: journal.offers[url] for url in replay.open if url in journal.offers},
    )


def written_tracks(frontier: Frontier, data: ResumeData) -> list[PageTrack]:
    """Mark the tracks of the pages the interrupted run wrote as written (with the URLs
    and discovery their records list); returns the tracks made for pages the frontier
    does not hold (`restored_tracks`: the end of the crawl reads them too)."""
    restored: list[PageTrack] = []
    for url, (_, canonical) in data.log.written.items():
        summary = data.pages.get(canonical)
        if summary is None:
            continue
        track = frontier.track_for(url)
        if track is None:
            track = PageTrack(url, normalize_url(url), 0)
            restored.append(track)
        for observed in summary.observed_urls:
            track.observe(observed)
        for entry in summary.discovery:
            track.add_discovery(entry.get("reason") or "", entry.get("from"))
        track.sitemap_lastmod = track.sitemap_lastmod or summary.sitemap_lastmod
        track.mark_written(canonical, listed=(
            len(summary.observed_urls), len(summary.discovery), summary.sitemap_lastmod))
    for url, target in data.log.redirects:  # the target's page gained the source's URLs
        source, page = frontier.track_for(url), frontier.track_for(target)
        if source is not None and page is not None and page is not source:
            page.absorb(source)
    return restored


def merged_tracks(frontier: Frontier, data: ResumeData,
                  renames: dict[str, str]) -> list[tuple[str, PageTrack]]:
    """The content duplicates the interrupted run logged: (the canonical URL of the
    record they joined, their track)."""
    merged = []
    for url, duplicate_of in data.log.same_content:
        track = frontier.track_for(url)
        if track is not None:
            track.observe(track.key)  # the URL it was fetched at
            merged.append((renames.get(duplicate_of, duplicate_of), track))
    return merged


def repair_state(incremental: Incremental, run_dir: Path, data: ResumeData) -> None:
    """A page whose outcome was logged but whose state row or changes line was not
    written before the kill gets them now."""
    run_id = incremental.run.run_id
    todo: dict[str, tuple[str, str]] = {}
    for url, (event, canonical) in data.log.written.items():
        row = incremental.row_for(canonical)
        if (row is None or row.last_seen_run != run_id
                or not incremental.was_reported(canonical)):
            todo[canonical] = (event, url)
    if not todo:
        return
    records, chunks = records_of(run_dir, set(todo))
    for canonical, (event, url) in todo.items():
        record = records.get(canonical)
        if record is None:
            continue
        row = incremental.row_for(canonical)
        if event == "unchanged" and row is not None:
            incremental.unchanged(row, etag=None, last_modified=None,
                                  observed_urls=data.pages[canonical].observed_urls,
                                  body_digest=None)
        else:
            incremental.fresh(record, chunks.get(canonical, []),
                              body_digest=record.get("body_hash"),
                              extra_urls=[normalize_url(url)])
    logger.info("docscrawl: resume: state brought up to date for %d page(s)", len(todo))


class ResumeState:
    """Pause and resume (JOBDIR): the journal this run writes (none without a JOBDIR),
    and, after a resume, what the interrupted run left open."""

    def __init__(self, jobdir: Path | None, *, append: bool) -> None:
        self.jobdir = jobdir
        self.journal = JobJournal(jobdir, append=append) if jobdir is not None else None
        self.resumed = False
        self.open: list[str] = []  # URLs the interrupted run left without an outcome
        self.offers: dict[str, dict[str, Any]] = {}  # their frontier journal lines
        self.restored_tracks: list[PageTrack] = []  # written, not in the frontier

    def take(self, data: ResumeData, restored_tracks: list[PageTrack]) -> None:
        """What a resume found that the spider still has to finish."""
        self.resumed = True
        self.open, self.offers = data.open, data.offers
        self.restored_tracks = restored_tracks

    def journal_offer(self, url: str, reason: str, source: str | None, depth: int,
                      lastmod: str | None, inherit: PageTrack | None) -> None:
        """JOBDIR: a first-seen URL, before its `discovered` event."""
        if self.journal is not None:
            self.journal.offer(url, reason, source, depth, lastmod,
                               track_fields(inherit) if inherit else None)

    def journal_claim(self, track: PageTrack, *, inherited: bool) -> None:
        """JOBDIR: a claimed page fetch, before its request exists."""
        if self.journal is not None:
            self.journal.claim(track_fields(track), inherited=inherited)

    def journal_group(self, canonical: str, declared: bool) -> None:
        """JOBDIR: whether a content group's canonical URL came from a rel=canonical."""
        if self.journal is not None:
            self.journal.group(canonical, declared)

    def journal_rename(self, old: str, new: str, fields: dict[str, Any]) -> None:
        """JOBDIR: a written page's better canonical URL (`DedupState.rename_canonical`)."""
        if self.journal is not None:
            self.journal.rename(old, new, fields)

    def mark(self, marker: dict[str, Any]) -> None:
        """JOBDIR: write the run marker (run id, directories, status)."""
        if self.journal is not None:
            self.journal.mark(marker)

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
