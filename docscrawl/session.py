"""One crawl's shared state and output files: the spider and the pipelines both use it.

Output files are opened when the crawl starts and written line by line. When the crawl
ends, page records that gained aliases or discovery reasons after they were written (a
later duplicate, a redirect to an already written page), or whose canonical URL changed
because a preferred alias turned up, are updated (`docscrawl.finalize`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docscrawl import __version__
from docscrawl.aggregates import AggregateTracker
from docscrawl.browser import INSTALL_HINT
from docscrawl.config import CrawlConfig
from docscrawl.crawllog import CrawlLog, utc_now
from docscrawl.discovery.netguard import AddressGuard, install_connect_guard
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.traps import TrapGuard
from docscrawl.discovery.urls import normalize_url
from docscrawl.extract.version import evidence_of, page_version_key
from docscrawl.failures import BROWSER_UNAVAILABLE
from docscrawl.finalize import (
    PAGE_LEADING_FIELDS,
    aggregate_updater,
    chunk_dropper,
    chunk_version_updater,
    log_updater,
    page_ref_updater,
    page_updater,
    resolve_renames,
    rewrite_jsonl,
    version_updater,
)
from docscrawl.frontier import Frontier
from docscrawl.incremental import Incremental
from docscrawl.jsonl import JsonlWriter, dumps_line, write_json_atomic
from docscrawl.ledger import ContentGroup, JsonMap, Ledger
from docscrawl.linkgraph import add_inbound_links
from docscrawl.pagetrack import Discovery, PageTrack, discovery_records, track_fields
from docscrawl.resume import (
    FRONTIER_JOURNAL,
    RUN_MARKER,
    LogReplay,
    cut_torn_tail,
    iter_jsonl,
    records_of,
    replay_journal,
    replay_log,
    replay_pages,
    reported_changes,
    roll_back_unlogged,
)
from docscrawl.seenurls import DEFAULT_KEEP as SEEN_KEEP
from docscrawl.seenurls import SeenUrls
from docscrawl.sitestate import SiteModel
from docscrawl.trackstore import DEFAULT_KEEP, TrackStore

logger = logging.getLogger(__name__)

# In the state directory: what runs learned about the site (versions, fragment parameters).
MAX_COLD_PAGES = 2000  # pages written before the site's version was known, fixed at the end
SAVE_EVERY = 50  # pages between two saves of the site model
OUTPUT_FILES = ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                "changes.jsonl")
INVENTORY_STATE = "inventory-state"  # the state directory of an extract=off crawl


def record_growth(tracks: list[PageTrack]) -> dict[str, Any]:
    """Fields to update in a written page record whose tracks learned more after it was
    written (`tracks[0]` wrote it; the others are its content duplicates)."""
    first = tracks[0]
    observed: dict[str, None] = {}
    discovery: list[Discovery] = []
    lastmod = first.written_lastmod
    for track in tracks:
        observed.update(dict.fromkeys(track.observed))
        lastmod = lastmod or track.sitemap_lastmod
        for item in track.discovery:
            if item not in discovery:
                discovery.append(item)
    if (len(observed), len(discovery), lastmod) == (
            first.written_observed, first.written_discovery, first.written_lastmod):
        return {}
    return {"observed_urls": list(observed), "discovery": discovery_records(discovery),
            "sitemap_lastmod": lastmod}


class CrawlSession:
    """Config, frontier, crawl log and output writers of one crawl."""

    def __init__(self, config: CrawlConfig, *, stats: Any = None,
                 trap_limits: tuple[int, int, int] = (1000, 100, 200), run_id: str | None = None,
                 tracks_in_memory: int = DEFAULT_KEEP, seen_in_memory: int = SEEN_KEEP,
                 jobdir: Path | None = None, resume: bool = False) -> None:
        """`jobdir`: Scrapy's JOBDIR (pause and resume); `resume` with `run_id`: continue
        the unfinished run whose files are in the output directory (`docscrawl.resume`);
        `tracks_in_memory`: page tracks kept in memory besides those in use (the others
        wait in the ledger, `docscrawl.trackstore`); `seen_in_memory`: the same for seen
        URLs (`docscrawl.seenurls`)."""
        self.config = config
        self.out_dir = config.out_dir
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.started_at = utc_now()
        self._t0 = time.monotonic()
        self.stats = stats
        self.jobdir = jobdir
        self.resumed = bool(resume and run_id and jobdir is not None)
        self.resumes = 0
        self.resume_open: list[str] = []  # URLs the interrupted run left without an outcome
        self.resume_offers: dict[str, dict[str, Any]] = {}  # their frontier journal lines
        replay = self._prepare_resume() if self.resumed else None
        append = self.resumed
        # What grows with the site is kept on disk (docscrawl.ledger), not in memory.
        self.ledger = Ledger.open()
        self.content_groups = self.ledger.content_groups()  # deduplication
        self.canonicals_taken = self.ledger.url_set("canonicals_taken")
        self.log = CrawlLog(JsonlWriter(self.out_dir / "crawl_log.jsonl", append=append),
                            stats=stats, open_urls=self.ledger.url_set("open_urls"),
                            closed=self.ledger.url_set("closed_urls"))
        self.pages = JsonlWriter(self.out_dir / "pages.jsonl", append=append)
        self.chunks = JsonlWriter(self.out_dir / "chunks.jsonl", append=append)
        self.structure = JsonlWriter(self.out_dir / "structure.jsonl", append=append)
        self.journal = (JsonlWriter(jobdir / FRONTIER_JOURNAL, append=append)
                        if jobdir is not None else None)
        # An inventory crawl (extract=off) keeps its own throwaway state: it must neither
        # carry pages over from, nor report pages removed to, the state of full crawls.
        state_dir = (config.state_dir or self.out_dir) if config.extract else (
            self.out_dir / INVENTORY_STATE)
        self.incremental = Incremental(state_dir,
                                       self.out_dir / "changes.jsonl",
                                       run_id=run_id if self.resumed else None,
                                       reported=self.ledger.url_set("reported_pages"))
        # What the crawl learns about the site (versions, fragment-like parameters,
        # template), kept with the crawl state for resumed and incremental crawls.
        self.site_model = SiteModel.load(state_dir, config.site)
        self.pages_held = 0  # pages the extract pipeline holds until the template is warm
        # The template warm-up sample, chosen when the seed is parsed (template_warmup)
        self.template_sample: list[str] | None = None
        self._version_cold: set[str] = set()
        self._versions_to_store: dict[str, dict[str, Any]] = {}
        self.aggregates = AggregateTracker()
        self._aggregates_found: dict[str, list[str]] = {}
        self.tracks = TrackStore(self.ledger.track_table(), keep=tracks_in_memory)
        self.seen_urls = SeenUrls(self.ledger.seen_table(), keep=seen_in_memory)
        self.frontier = Frontier(
            Scope(config.site, allow=config.allow, deny=config.deny),
            AddressGuard(_host_of(config.site)),
            max_pages=config.max_pages,
            max_depth=config.max_depth,
            traps=TrapGuard(per_pattern=trap_limits[0], per_path_queries=trap_limits[1],
                           per_chain=trap_limits[2]),
            tracks=self.tracks,
            seen=self.seen_urls,
            params=self.site_model.fragment_params,
        )
        install_connect_guard(self.frontier.guard)  # checked again at every connection
        self.log.terminal_hooks.append(self.frontier.release)
        self.politeness: dict[str, Any] = {}  # request pacing, for run.json
        self._restored_tracks: list[PageTrack] = []  # resume: written, not in the frontier
        self.renames: dict[str, str] = {}  # canonical URL written -> better one found later
        self.removed = 0
        self.worker_id: str | None = None  # distributed mode: this part's worker
        self.finished = False
        self.paused = False
        if replay is not None:
            self._restore(replay)
        self._write_marker("running")
        self._write_run("running", None)

    # -- pause and resume (JOBDIR) -----------------------------------------------------

    def _prepare_resume(self) -> LogReplay:
        """Cut torn last lines and roll back a page whose outcome was never logged."""
        assert self.jobdir is not None
        for name in OUTPUT_FILES:
            cut_torn_tail(self.out_dir / name)
        cut_torn_tail(self.jobdir / FRONTIER_JOURNAL)
        replay = replay_log(self.out_dir / "crawl_log.jsonl")
        rolled_back = roll_back_unlogged(self.out_dir, replay.written_canonicals)
        if rolled_back:
            logger.info("docscrawl: resume: %d page(s) without a logged outcome are fetched "
                        "again", len(rolled_back))
        return replay

    def _restore(self, replay: LogReplay) -> None:
        """Rebuild the crawl log, frontier, written records, dedup groups and state of the
        interrupted run from its files."""
        assert self.jobdir is not None
        previous = _read_json(self.out_dir / "run.json")
        marker = _read_json(self.jobdir / RUN_MARKER)
        self.started_at = marker.get("started_at") or previous.get("started_at") or self.started_at
        self.resumes = int(marker.get("resumes") or 0) + 1
        self.log.restore(open_urls=replay.open, closed=replay.closed, events=replay.events,
                         skip_reasons=replay.skip_reasons,
                         failure_reasons=replay.failure_reasons,
                         skip_examples=replay.skip_examples)
        reported, counts = reported_changes(self.out_dir / "changes.jsonl")
        self.incremental.restore_reported(reported, counts)
        journal = replay_journal(self.jobdir / FRONTIER_JOURNAL)
        self.frontier.restore(
            replay.discovered,
            ((fields, key in journal.inherited) for key, fields in journal.claims.items()),
            limited=replay.limited,
        )
        for url, key in replay.duplicate_urls:
            self.frontier.restore_alias(url, key, replay.discovered.get(url))
        self.resume_open = replay.open
        self.resume_offers = {url: journal.offers[url] for url in replay.open
                              if url in journal.offers}
        pages = replay_pages(self.out_dir / "pages.jsonl")
        self.pages.count = len(pages)
        self.chunks.count = sum(1 for _ in iter_jsonl(self.out_dir / "chunks.jsonl"))
        self.structure.count = sum(1 for _ in iter_jsonl(self.out_dir / "structure.jsonl"))
        self._repair_state(replay, pages)  # before replayed merges mark rows seen
        for url, (_, canonical) in replay.written.items():
            summary = pages.get(canonical)
            if summary is None:
                continue
            track = self.frontier.track_for(url)
            if track is None:
                track = PageTrack(url, normalize_url(url), 0)
                self._restored_tracks.append(track)
            for observed in summary.observed_urls:
                track.observe(observed)
            for entry in summary.discovery:
                track.add_discovery(entry.get("reason") or "", entry.get("from"))
            track.sitemap_lastmod = track.sitemap_lastmod or summary.sitemap_lastmod
            track.mark_written(canonical, listed=(
                len(summary.observed_urls), len(summary.discovery), summary.sitemap_lastmod))
        for old, new in journal.renames:
            self.renames[old] = new
        for url, target in replay.redirects:  # the target's page gained the source's URLs
            source, page = self.frontier.track_for(url), self.frontier.track_for(target)
            if source is not None and page is not None and page is not source:
                page.absorb(source)
        resolved = resolve_renames(self.renames)
        for url, duplicate_of in replay.same_content:
            track = self.frontier.track_for(url)
            if track is not None:
                track.observe(track.key)  # the URL it was fetched at
                self.record_merged(resolved.get(duplicate_of, duplicate_of), track)
        for summary in pages.values():
            canonical = resolved.get(summary.canonical_url, summary.canonical_url)
            self.content_groups.setdefault(
                (page_version_key(evidence_of(summary.version), summary.final_url),
                 summary.content_hash),
                ContentGroup(canonical, journal.declared.get(canonical, True)))
            self.canonicals_taken.add(canonical)
        logger.info("docscrawl: resuming run %s (resume %d): %d pages written, %d URLs open",
                    self.incremental.run.run_id, self.resumes, len(pages), len(replay.open))

    def _repair_state(self, replay: LogReplay, pages: dict[str, Any]) -> None:
        """A page whose outcome was logged but whose state row or changes line was not
        written before the kill gets them now."""
        incremental = self.incremental
        run_id = incremental.run.run_id
        todo: dict[str, tuple[str, str]] = {}
        for url, (event, canonical) in replay.written.items():
            row = incremental.row_for(canonical)
            if (row is None or row.last_seen_run != run_id
                    or not incremental.was_reported(canonical)):
                todo[canonical] = (event, url)
        if not todo:
            return
        records, chunks, structures = records_of(self.out_dir, set(todo))
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
                structure = structures.get(canonical)
                incremental.fresh(record, chunks.get(canonical, []),
                                  body_digest=record.get("body_hash"),
                                  extra_urls=[normalize_url(url)],
                                  structure_line=dumps_line(structure) if structure else None)
        logger.info("docscrawl: resume: state brought up to date for %d page(s)", len(todo))

    def journal_offer(self, url: str, reason: str, source: str | None, depth: int,
                      lastmod: str | None, inherit: PageTrack | None) -> None:
        """JOBDIR: a first-seen URL, before its `discovered` event."""
        if self.journal is not None:
            self.journal.write({"kind": "offer", "url": url, "reason": reason,
                                "source": source, "depth": depth, "lastmod": lastmod,
                                "inherit": track_fields(inherit) if inherit else None})

    def journal_claim(self, track: PageTrack, *, inherited: bool) -> None:
        """JOBDIR: a claimed page fetch, before its request exists."""
        if self.journal is not None:
            self.journal.write({"kind": "claim", "track": track_fields(track),
                                "inherited": inherited})

    def journal_group(self, canonical: str, declared: bool) -> None:
        """JOBDIR: whether a content group's canonical URL came from a rel=canonical."""
        if self.journal is not None:
            self.journal.write({"kind": "group", "canonical": canonical, "declared": declared})

    def _write_marker(self, status: str) -> None:
        if self.jobdir is None:
            return
        self.jobdir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.jobdir / RUN_MARKER, {
            "run_id": self.incremental.run.run_id, "out_dir": str(self.out_dir),
            "status": status, "started_at": self.started_at, "resumes": self.resumes,
        })

    def set_worker(self, worker_id: str) -> None:
        """Distributed mode: name this part's worker in run.json from the start, so that
        `docscrawl merge` can tell which worker a killed part belonged to."""
        self.worker_id = worker_id
        self._write_run("running", None)

    def record_written(self, canonical_url: str, track: PageTrack) -> None:
        """Remember a written page record and the track it came from."""
        track.mark_written(canonical_url)

    def record_merged(self, canonical_url: str, track: PageTrack) -> None:
        """A content duplicate joins a written record: its URLs count for that record."""
        track.merged_into = canonical_url
        self.incremental.add_aliases(canonical_url, list(track.observed))

    def elapsed_s(self) -> float:
        """Seconds since the crawl started."""
        return time.monotonic() - self._t0

    def site_observed(self, final_url: str) -> None:
        """The site model saw one more page (saved now and then); a page extracted before
        the site's version evidence was known is remembered, to be completed at the end."""
        if not self.site_model.versions.evidence() and len(self._version_cold) < MAX_COLD_PAGES:
            self._version_cold.add(final_url)
        if self.site_model.versions.offered % SAVE_EVERY == 0:
            self.site_model.save()

    def rename_canonical(self, old: str, new: str) -> None:
        """A better URL for a written page turned up: its records follow at the end."""
        self.renames[old] = new
        if self.journal is not None:
            self.journal.write({"kind": "rename", "old": old, "new": new})

    def finish(self, finish_reason: str) -> dict[str, Any]:
        """Close open URLs, update grown or renamed records, write run.json, close files."""
        if self.finished:
            return {}
        self.finished = True
        if self.jobdir is not None and finish_reason != "finished":
            return self._pause(finish_reason)
        closed = self.log.close_open("crawl_closed", f"crawl ended ({finish_reason}) first")
        if closed:
            logger.warning("docscrawl: %d URLs were still pending when the crawl ended", closed)
        for writer in (self.pages, self.chunks, self.structure):
            writer.close()
        self.log.close()
        self.site_model.save()
        updated = (self._update_written_records() + self._backfill_versions()
                   + self._mark_aggregates())
        if self.config.extract:
            add_inbound_links(self.out_dir)  # after aggregates left chunks.jsonl
        if self.stats is not None:
            self.stats.set_value("docscrawl/tracks_spilled", self.tracks.spilled)
            self.stats.set_value("docscrawl/discovery_deferred", self.tracks.deferred)
            self.stats.set_value("docscrawl/seen_urls_spilled", self.seen_urls.spilled)
            self.stats.set_value("docscrawl/tracks_pinned_at_end", self.tracks.pinned)
        for old, new in resolve_renames(self.renames).items():
            self.incremental.rename(old, new)
        for canonical, version in self._versions_to_store.items():
            self.incremental.set_version(canonical, version)
        for canonical, parts in self._aggregates_found.items():
            self.incremental.set_aggregate(canonical, parts,
                                           keep_chunks=self.config.keep_aggregates)
        self.removed = self.incremental.finish(complete=self._complete(finish_reason))
        if self.journal is not None:
            self.journal.close()
        self._write_marker("finished")
        run = self._write_run("finished", finish_reason, updated=updated)
        self.ledger.close()
        return run

    def _pause(self, finish_reason: str) -> dict[str, Any]:
        """JOBDIR crawl stopped early (Ctrl-C...): keep everything open for the resume."""
        self.site_model.save()
        for writer in (self.pages, self.chunks, self.structure):
            writer.close()
        self.log.close()
        if self.journal is not None:
            self.journal.close()
        self.incremental.pause()
        self.paused = True
        self._write_marker("paused")
        logger.info("docscrawl: paused (%s); resume with the same JOBDIR and output "
                    "directory", finish_reason)
        run = self._write_run("paused", finish_reason)
        self.ledger.close()
        return run

    def _complete(self, finish_reason: str | None) -> bool:
        """A crawl that ran to its natural end, limited by neither max_pages nor max_depth,
        and with no page left unrendered for want of a browser."""
        return (finish_reason == "finished" and not self.frontier.limited
                and not self.log.failure_reasons.get(BROWSER_UNAVAILABLE))

    def _update_written_records(self) -> int:
        """Rewrite output files once when written records gained URLs or a new canonical."""
        renames = resolve_renames(self.renames)
        grown = self._grown_records(renames)
        if len(grown) or renames:
            rewrite_jsonl(self.out_dir / "pages.jsonl", page_updater(grown, renames),
                          leading=PAGE_LEADING_FIELDS)
        if renames:
            for name in ("structure.jsonl", "chunks.jsonl"):
                rewrite_jsonl(self.out_dir / name, page_ref_updater(renames))
            rewrite_jsonl(self.out_dir / "crawl_log.jsonl", log_updater(renames))
        return len(grown) + sum(1 for new in set(renames.values()) if new not in grown)

    def _backfill_versions(self) -> int:
        """Pages written before the site's shared version signal was known get it now
        (pages.jsonl, then their chunks' `metadata.version`)."""
        if not self._version_cold or not self.site_model.versions.evidence():
            return 0
        updated: dict[str, dict[str, Any]] = {}
        rewrite_jsonl(self.out_dir / "pages.jsonl",
                      version_updater(self.site_model.versions, self._version_cold, updated))
        if updated:
            rewrite_jsonl(self.out_dir / "chunks.jsonl", chunk_version_updater(updated))
        self._versions_to_store = updated  # the state follows once renames are applied
        return len(updated)

    def _mark_aggregates(self) -> int:
        """Pages that concatenate others get `aggregate_of`; their chunks leave
        chunks.jsonl unless the crawl keeps them (`-a keep_aggregates=on`)."""
        verdicts = self.aggregates.verdicts()
        if not verdicts:
            return 0
        renames = resolve_renames(self.renames)
        back = {new: old for old, new in renames.items()}
        written = ((back.get(r.get("canonical_url"), r.get("canonical_url")),
                    r.get("markdown") or "") for r in iter_jsonl(self.out_dir / "pages.jsonl"))
        verdicts = self.aggregates.confirm(verdicts, written)
        if not verdicts:
            return 0
        found = {renames.get(url, url): [renames.get(p, p) for p in parts]
                 for url, parts in verdicts.items()}
        rewrite_jsonl(self.out_dir / "pages.jsonl", aggregate_updater(found))
        if not self.config.keep_aggregates:
            dropped = [0]
            rewrite_jsonl(self.out_dir / "chunks.jsonl", chunk_dropper(found, dropped))
            self.chunks.count -= dropped[0]
        if self.stats is not None:
            self.stats.set_value("docscrawl/aggregate_pages", len(found))
        logger.info("docscrawl: %d aggregate pages (print views, single-page builds): %s",
                    len(found), ", ".join(list(found)[:5]))
        self._aggregates_found = found
        return len(found)

    def _grown_records(self, renames: dict[str, str]) -> JsonMap:
        """Final canonical URL -> the fields to update in each written record that grew
        (from the track that wrote it and its content duplicates'), kept in the ledger:
        the crawl never holds every update, nor every track, at once."""
        duplicates: dict[str, list[PageTrack]] = {}
        for track in self._all_tracks():
            if not track.written and track.merged_into is not None:
                canonical = renames.get(track.merged_into, track.merged_into)
                duplicates.setdefault(canonical, []).append(track)
        grown = self.ledger.json_map("grown_records")
        grown.clear()
        for track in self._all_tracks():
            if track.written and track.record_canonical is not None:
                canonical = renames.get(track.record_canonical, track.record_canonical)
                fields = record_growth([track, *duplicates.get(canonical, ())])
                if fields:
                    grown[canonical] = fields
                else:  # the last one written counts, as it replaced the record
                    grown.pop(canonical, None)
        return grown

    def _all_tracks(self) -> Iterator[PageTrack]:
        """The frontier's tracks, then those a resume restored outside it (no copy)."""
        yield from self.frontier.tracks()
        yield from self._restored_tracks

    def _browser_note(self) -> dict[str, Any] | None:
        """Pages that needed rendering without a browser, and how to get one (or None)."""
        pages = self.log.failure_reasons.get(BROWSER_UNAVAILABLE, 0)
        return {"pages": pages, "hint": INSTALL_HINT} if pages else None

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
            "extract": self.config.extract,
            "politeness": self.politeness,
            "resumed": self.resumes > 0,
            "resumes": self.resumes,
            **({"worker": self.worker_id} if self.worker_id else {}),
            "counts": counts,
            "browser_unavailable": self._browser_note(),
            "skip_examples": {
                reason: {"url": url, "rule": rule}
                for reason, (url, rule) in sorted(self.log.skip_examples.items())
            },
            "output": {name: str(self.out_dir / name) for name in OUTPUT_FILES},
        }
        write_json_atomic(self.out_dir / "run.json", run)
        return run


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _host_of(url: str) -> str:
    return urlsplit(url).hostname or ""
