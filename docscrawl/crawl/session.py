"""One crawl, opened: builds its parts (`docscrawl.crawl.stage.CrawlParts`) and hands
them out.

Each part has one job: the output files (`crawl.outputs`), deduplication's state
(`dedup.state`), pause and resume (`crawl.restore`), the counters and run.json
(`crawl.runreport`), the end of the crawl (`crawl.finish`); besides them the crawl log,
the frontier and the incremental state. Output files are opened when the crawl starts, in
a new run directory of the output folder (`docscrawl.runs`), and written line by line; the
run is published (made the one users read) only when the crawl ends, so a crawl killed
midway leaves the previous output whole. The item pipelines get the parts they need from
the crawler (`CrawlParts.of`), the spider from its session.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docscrawl.config import CrawlConfig
from docscrawl.crawl.crawllog import CrawlLog
from docscrawl.crawl.finish import ColdPages, CrawlEnd, run_marker
from docscrawl.crawl.ledger import ContentGroup, Ledger
from docscrawl.crawl.outputs import OutputFiles
from docscrawl.crawl.restore import (
    ResumeData,
    ResumeState,
    merged_tracks,
    prepare_resume,
    read_resume,
    repair_state,
    written_tracks,
)
from docscrawl.crawl.resume import read_marker
from docscrawl.crawl.runreport import RunReport
from docscrawl.crawl.stage import CrawlParts
from docscrawl.dedup.state import DedupState, record_merged
from docscrawl.discovery.frontier import Frontier
from docscrawl.discovery.netguard import AddressGuard, install_connect_guard
from docscrawl.discovery.pagetrack import PageTrack
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.seenurls import DEFAULT_KEEP as SEEN_KEEP
from docscrawl.discovery.seenurls import SeenUrls
from docscrawl.discovery.trackstore import DEFAULT_KEEP, TrackStore
from docscrawl.discovery.traps import TrapGuard
from docscrawl.extract.version import evidence_of, page_version_key
from docscrawl.incremental.recrawl import Incremental
from docscrawl.incremental.site_model import SiteModel
from docscrawl.jsonl import JsonlWriter
from docscrawl.runs import new_run_dir, remove_stale_runs, resumable_run_dir

logger = logging.getLogger(__name__)

INVENTORY_STATE = "inventory-state"  # the state directory of an extract=off crawl


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """How one crawl session runs, besides the crawl's arguments (`CrawlConfig`)."""

    # DOCSCRAWL_TRAP_PATTERN_LIMIT, _QUERY_LIMIT, _CHAIN_LIMIT (`TrapGuard`'s order)
    trap_limits: tuple[int, int, int] = (1000, 100, 200)
    # page tracks kept in memory besides those in use (the others wait in the ledger,
    # `docscrawl.discovery.trackstore`), and the same for seen URLs (`docscrawl.discovery.seenurls`)
    tracks_in_memory: int = DEFAULT_KEEP
    seen_in_memory: int = SEEN_KEEP
    url_limit: int = 2083  # Scrapy's URLLENGTH_LIMIT: longer URLs are skipped (0: none)
    jobdir: Path | None = None  # Scrapy's JOBDIR (pause and resume)
    # `resume` with `run_id`: continue the unfinished run whose files are in the output
    # directory (`docscrawl.crawl.resume`)
    run_id: str | None = None
    resume: bool = False

    @classmethod
    def from_settings(cls, settings: Any, **fields: Any) -> SessionOptions:
        """The options Scrapy settings give, plus `fields` (jobdir, run_id, resume)."""
        return cls(
            trap_limits=(settings.getint("DOCSCRAWL_TRAP_PATTERN_LIMIT"),
                         settings.getint("DOCSCRAWL_TRAP_QUERY_LIMIT"),
                         settings.getint("DOCSCRAWL_TRAP_CHAIN_LIMIT")),
            tracks_in_memory=settings.getint("DOCSCRAWL_TRACKS_IN_MEMORY"),
            seen_in_memory=settings.getint("DOCSCRAWL_SEEN_URLS_IN_MEMORY"),
            url_limit=settings.getint("URLLENGTH_LIMIT"),
            **fields,
        )


class CrawlSession:
    """One crawl's parts, built from its arguments and options; what the spider calls."""

    def __init__(self, config: CrawlConfig, options: SessionOptions | None = None, *,
                 stats: Any = None, parts: CrawlParts | None = None) -> None:
        """`options`: how this crawl runs besides its arguments (`SessionOptions`);
        `stats`: Scrapy's stats collector, when there is one; `parts`: the holder to fill
        (the crawler's, `CrawlParts.of`), else a new one."""
        options = options or SessionOptions()
        jobdir, run_id = options.jobdir, options.run_id
        self.config = config
        self.out_dir = config.out_dir  # the output folder (state, published run)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.stats = stats
        # where this run's files are written (`docscrawl.runs`): the interrupted run's
        # directory when resuming, else a new one
        resumed_dir = (resumable_run_dir(self.out_dir, (read_marker(jobdir) or {}).get(
            "run_dir")) if options.resume and run_id and jobdir is not None else None)
        if resumed_dir is None:
            remove_stale_runs(self.out_dir)
        self.run_dir = resumed_dir or new_run_dir(self.out_dir)
        append = resumed_dir is not None
        replay = prepare_resume(self.run_dir, jobdir) if append and jobdir else None
        # What grows with the site is kept on disk (docscrawl.crawl.ledger), not in memory.
        ledger = Ledger.open()
        log = CrawlLog(JsonlWriter(self.run_dir / "crawl_log.jsonl", append=append),
                       stats=stats, open_urls=ledger.url_set("open_urls"),
                       closed=ledger.url_set("closed_urls"))
        outputs = OutputFiles(self.out_dir, self.run_dir, append=append, ledger=ledger)
        resume = ResumeState(jobdir, append=append)
        # An inventory crawl (extract=off) keeps its own throwaway state: it must neither
        # carry pages over from, nor report pages removed to, the state of full crawls.
        state_dir = (config.state_dir or self.out_dir) if config.extract else (
            self.out_dir / INVENTORY_STATE)
        incremental = Incremental(state_dir, self.run_dir / "changes.jsonl",
                                  run_id=run_id if append else None,
                                  reported=ledger.url_set("reported_pages"))
        # Carried-over pages reference the blocks of the run their lines come from, which
        # an inventory crawl may since have replaced as the published one.
        outputs.templates.also_previous(incremental.store.source_dirs())
        # What the crawl learns about the site (versions, fragment-like parameters,
        # template), kept with the crawl state for resumed and incremental crawls.
        site_model = SiteModel.load(state_dir, config.site)
        tracks = TrackStore(ledger.track_table(), keep=options.tracks_in_memory)
        seen_urls = SeenUrls(ledger.seen_table(), keep=options.seen_in_memory)
        per_pattern, per_query, per_chain = options.trap_limits
        frontier = Frontier(
            Scope(config.site, allow=config.allow, deny=config.deny),
            AddressGuard(_host_of(config.site)),
            max_pages=config.max_pages,
            max_depth=config.max_depth,
            url_limit=options.url_limit,
            traps=TrapGuard(per_pattern=per_pattern, per_path_queries=per_query,
                            per_chain=per_chain),
            tracks=tracks,
            seen=seen_urls,
            params=site_model.fragment_params,
        )
        install_connect_guard(frontier.guard)  # checked again at every connection
        log.terminal_hooks.append(frontier.release)
        built = CrawlParts(
            config=config, stats=stats, ledger=ledger, log=log, frontier=frontier,
            tracks=tracks, seen_urls=seen_urls, outputs=outputs, dedup=DedupState(ledger),
            resume=resume, incremental=incremental, site_model=site_model,
            cold=ColdPages(), report=RunReport(config, self.out_dir, log=log, outputs=outputs,
                                               incremental=incremental, frontier=frontier))
        if parts is not None:
            parts.fill(built)
        self.parts = parts or built
        self.end = CrawlEnd(self.parts)
        if replay is not None and jobdir is not None:
            self._resume(read_resume(self.run_dir, jobdir, replay))
        resume.mark(run_marker(self.parts, "running"))
        self.parts.report.write("running", None)

    def _resume(self, data: ResumeData) -> None:
        """Each part takes back what the interrupted run's files say (`read_resume`)."""
        parts = self.parts
        report = parts.report
        report.started_at = data.started_at or report.started_at
        report.resumes = data.resumes
        replay = data.log
        parts.log.restore(open_urls=replay.open, closed=replay.closed, events=replay.events,
                          skip_reasons=replay.skip_reasons,
                          failure_reasons=replay.failure_reasons,
                          skip_examples=replay.skip_examples)
        parts.incremental.restore_reported(data.reported, data.change_counts)
        journal = data.journal
        parts.frontier.restore(
            replay.discovered,
            ((fields, key in journal.inherited) for key, fields in journal.claims.items()),
            limited=replay.limited,
        )
        for url, key in replay.duplicate_urls:
            parts.frontier.restore_alias(url, key, replay.discovered.get(url))
        parts.outputs.recount(pages=len(data.pages), chunks=data.chunk_lines,
                              structure=data.structure_lines)
        repair_state(parts.incremental, self.run_dir, data)  # before merges mark rows seen
        restored = written_tracks(parts.frontier, data)
        parts.resume.take(data, restored)
        dedup = parts.dedup
        for old, new in journal.renames:
            dedup.renames[old] = new
        dedup.relabels.update(journal.relabels)
        for canonical, track in merged_tracks(parts.frontier, data, dedup.resolved_renames()):
            record_merged(parts.incremental, canonical, track)
        resolved = dedup.resolved_renames()
        for summary in data.pages.values():
            canonical = resolved.get(summary.canonical_url, summary.canonical_url)
            dedup.content_groups.setdefault(
                (page_version_key(evidence_of(summary.version), summary.final_url),
                 summary.content_hash),
                ContentGroup(canonical, journal.declared.get(canonical, True)))
            dedup.canonicals_taken.add(canonical)
        logger.info("docscrawl: resuming run %s (resume %d): %d pages written, %d URLs open",
                    parts.incremental.run.run_id, data.resumes, len(data.pages),
                    len(data.open))

    # -- what the spider (and a distributed worker) call --------------------------------

    @property
    def log(self) -> CrawlLog:
        return self.parts.log

    @property
    def frontier(self) -> Frontier:
        return self.parts.frontier

    @property
    def incremental(self) -> Incremental:
        return self.parts.incremental

    @property
    def site_model(self) -> SiteModel:
        return self.parts.site_model

    @property
    def templates(self) -> Any:
        """The templates.jsonl writer (`OutputFiles.templates`)."""
        return self.parts.outputs.templates

    @property
    def resumed(self) -> bool:
        return self.parts.resume.resumed

    @property
    def resume_open(self) -> list[str]:
        return self.parts.resume.open

    @property
    def resume_offers(self) -> dict[str, dict[str, Any]]:
        return self.parts.resume.offers

    @property
    def template_sample(self) -> list[str] | None:
        return self.parts.template_sample

    @template_sample.setter
    def template_sample(self, sample: list[str] | None) -> None:
        self.parts.template_sample = sample

    @property
    def pages_held(self) -> int:
        return self.parts.report.pages_held

    @property
    def politeness(self) -> dict[str, Any]:
        return self.parts.report.politeness

    @politeness.setter
    def politeness(self, summary: dict[str, Any]) -> None:
        self.parts.report.politeness = summary

    def journal_offer(self, url: str, reason: str, source: str | None, depth: int,
                      lastmod: str | None, inherit: PageTrack | None) -> None:
        """JOBDIR: a first-seen URL, before its `discovered` event."""
        self.parts.resume.journal_offer(url, reason, source, depth, lastmod, inherit)

    def journal_claim(self, track: PageTrack, *, inherited: bool) -> None:
        """JOBDIR: a claimed page fetch, before its request exists."""
        self.parts.resume.journal_claim(track, inherited=inherited)

    def set_worker(self, worker_id: str) -> None:
        """Distributed mode: name this part's worker in run.json from the start, so that
        `docscrawl merge` can tell which worker a killed part belonged to."""
        self.parts.report.worker_id = worker_id
        self.parts.report.write("running", None)

    def elapsed_s(self) -> float:
        """Seconds since the crawl started."""
        return self.parts.report.elapsed_s()

    def finish(self, finish_reason: str) -> dict[str, Any]:
        """End the crawl (`CrawlEnd.finish`): run.json's contents, {} when already ended."""
        return self.end.finish(finish_reason)


def _host_of(url: str) -> str:
    return urlsplit(url).hostname or ""
