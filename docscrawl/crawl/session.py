"""One crawl's shared state and output files: the spider and the pipelines both use it.

Output files are opened when the crawl starts, in a new run directory of the output folder
(`docscrawl.runs`), and written line by line; the run is published (made the one users
read) only when the crawl ends, so a crawl killed midway leaves the previous output whole.
When the crawl ends, page records that gained aliases or discovery reasons after they
were written (a later duplicate, a redirect to an already written page), or whose
canonical URL changed because a preferred alias turned up, are updated (`docscrawl.crawl.finalize`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docscrawl import __version__
from docscrawl.config import CrawlConfig
from docscrawl.crawl.crawllog import CrawlLog, utc_now
from docscrawl.crawl.failures import BROWSER_UNAVAILABLE
from docscrawl.crawl.finalize import resolve_renames
from docscrawl.crawl.ledger import Ledger
from docscrawl.crawl.restore import prepare_resume, restore_session
from docscrawl.crawl.resume import FRONTIER_JOURNAL, RUN_MARKER, read_marker
from docscrawl.crawl.wrapup import update_written_records
from docscrawl.dedup.aggregates import AggregateTracker
from docscrawl.discovery.frontier import Frontier
from docscrawl.discovery.netguard import AddressGuard, install_connect_guard
from docscrawl.discovery.pagetrack import PageTrack, track_fields
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.seenurls import DEFAULT_KEEP as SEEN_KEEP
from docscrawl.discovery.seenurls import SeenUrls
from docscrawl.discovery.trackstore import DEFAULT_KEEP, TrackStore
from docscrawl.discovery.traps import TrapGuard
from docscrawl.export.linkgraph import add_inbound_links
from docscrawl.export.templates import TemplateWriter
from docscrawl.incremental.recrawl import Incremental
from docscrawl.incremental.site_model import SiteModel
from docscrawl.jsonl import JsonlWriter, compress_jsonl, jsonl_path, write_json_atomic
from docscrawl.render.browser import INSTALL_HINT
from docscrawl.runs import (
    CRAWLING,
    new_run_dir,
    publish,
    published_dir,
    remove_stale_runs,
    resumable_run_dir,
)
from docscrawl.vocab import OUTPUT_FILES

logger = logging.getLogger(__name__)

MAX_COLD_PAGES = 2000  # pages written before the site's version was known, fixed at the end
SAVE_EVERY = 50  # pages between two saves of the site model
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
    """Config, frontier, crawl log and output writers of one crawl."""

    def __init__(self, config: CrawlConfig, options: SessionOptions | None = None, *,
                 stats: Any = None) -> None:
        """`options`: how this crawl runs besides its arguments (`SessionOptions`);
        `stats`: Scrapy's stats collector, when there is one."""
        options = options or SessionOptions()
        jobdir, run_id = options.jobdir, options.run_id
        self.config = config
        self.out_dir = config.out_dir  # the output folder (state, published run)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.started_at = utc_now()
        self._t0 = time.monotonic()
        self.stats = stats
        self.jobdir = jobdir
        self.resumed = bool(options.resume and run_id and jobdir is not None)
        self.resumes = 0
        self.resume_open: list[str] = []  # URLs the interrupted run left without an outcome
        self.resume_offers: dict[str, dict[str, Any]] = {}  # their frontier journal lines
        # where this run's files are written (`docscrawl.runs`): the interrupted run's
        # directory when resuming, else a new one
        resumed_dir = (resumable_run_dir(self.out_dir, (read_marker(jobdir) or {}).get(
            "run_dir")) if self.resumed and jobdir is not None else None)
        self.resumed = resumed_dir is not None
        if resumed_dir is None:
            remove_stale_runs(self.out_dir)
        self.run_dir = resumed_dir or new_run_dir(self.out_dir)
        replay = (prepare_resume(self.run_dir, jobdir)
                  if self.resumed and jobdir is not None else None)
        append = self.resumed
        # What grows with the site is kept on disk (docscrawl.crawl.ledger), not in memory.
        self.ledger = Ledger.open()
        self.content_groups = self.ledger.content_groups()  # deduplication
        self.canonicals_taken = self.ledger.url_set("canonicals_taken")
        self.log = CrawlLog(JsonlWriter(self.run_dir / "crawl_log.jsonl", append=append),
                            stats=stats, open_urls=self.ledger.url_set("open_urls"),
                            closed=self.ledger.url_set("closed_urls"))
        self.pages = JsonlWriter(self.run_dir / "pages.jsonl", append=append)
        self.chunks = JsonlWriter(self.run_dir / "chunks.jsonl", append=append)
        self.structure = JsonlWriter(self.run_dir / "structure.jsonl", append=append)
        previous = published_dir(self.out_dir)
        self.templates = TemplateWriter(  # the previous run's blocks, for carried pages
            self.run_dir, append=append,
            previous=previous if previous != self.out_dir else None)
        self.journal = (JsonlWriter(jobdir / FRONTIER_JOURNAL, append=append)
                        if jobdir is not None else None)
        # An inventory crawl (extract=off) keeps its own throwaway state: it must neither
        # carry pages over from, nor report pages removed to, the state of full crawls.
        state_dir = (config.state_dir or self.out_dir) if config.extract else (
            self.out_dir / INVENTORY_STATE)
        self.incremental = Incremental(state_dir,
                                       self.run_dir / "changes.jsonl",
                                       run_id=run_id if self.resumed else None,
                                       reported=self.ledger.url_set("reported_pages"))
        # Carried-over pages reference the blocks of the run their lines come from, which
        # an inventory crawl may since have replaced as the published one.
        self.templates.also_previous(self.incremental.store.source_dirs())
        # What the crawl learns about the site (versions, fragment-like parameters,
        # template), kept with the crawl state for resumed and incremental crawls.
        self.site_model = SiteModel.load(state_dir, config.site)
        self.pages_held = 0  # pages the extract pipeline holds until the template is warm
        # The template warm-up sample, chosen when the seed is parsed (template_warmup)
        self.template_sample: list[str] | None = None
        self.version_cold: set[str] = set()
        self.aggregates = AggregateTracker()
        self.aggregates_found: dict[str, list[str]] = {}
        self.tracks = TrackStore(self.ledger.track_table(), keep=options.tracks_in_memory)
        self.seen_urls = SeenUrls(self.ledger.seen_table(), keep=options.seen_in_memory)
        per_pattern, per_query, per_chain = options.trap_limits
        self.frontier = Frontier(
            Scope(config.site, allow=config.allow, deny=config.deny),
            AddressGuard(_host_of(config.site)),
            max_pages=config.max_pages,
            max_depth=config.max_depth,
            url_limit=options.url_limit,
            traps=TrapGuard(per_pattern=per_pattern, per_path_queries=per_query,
                            per_chain=per_chain),
            tracks=self.tracks,
            seen=self.seen_urls,
            params=self.site_model.fragment_params,
        )
        install_connect_guard(self.frontier.guard)  # checked again at every connection
        self.log.terminal_hooks.append(self.frontier.release)
        self.politeness: dict[str, Any] = {}  # request pacing, for run.json
        self.restored_tracks: list[PageTrack] = []  # resume: written, not in the frontier
        self.renames: dict[str, str] = {}  # canonical URL written -> better one found later
        # that better URL -> its page's `version` and `title` (`rename_canonical`)
        self.relabels: dict[str, dict[str, Any]] = {}
        self.removed = 0
        self.worker_id: str | None = None  # distributed mode: this part's worker
        self.finished = False
        self.paused = False
        if replay is not None:
            restore_session(self, replay)
        self._write_marker("running")
        self._write_run("running", None)

    # -- pause and resume (JOBDIR) -----------------------------------------------------

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
            "run_dir": self.run_dir.name,
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
        if not self.site_model.versions.evidence() and len(self.version_cold) < MAX_COLD_PAGES:
            self.version_cold.add(final_url)
        if self.site_model.versions.offered % SAVE_EVERY == 0:
            self.site_model.save()

    def rename_canonical(self, old: str, new: str, fields: dict[str, Any]) -> None:
        """A better URL for a written page turned up: its records follow at the end, and
        take the `version` and `title` of the page at that URL (`fields`, kept in
        `relabels`), so that which copy of a page was fetched first decides neither its
        URL nor what it is called."""
        self.renames[old] = new
        self.relabels[new] = fields
        if self.journal is not None:
            self.journal.write({"kind": "rename", "old": old, "new": new, "fields": fields})

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
        updated = update_written_records(self)
        self.templates.finish(self.run_dir / "pages.jsonl")  # page counts; unused dropped
        if self.config.extract:
            add_inbound_links(self.run_dir)  # after aggregates left chunks.jsonl
        if self.stats is not None:
            self.stats.set_value("docscrawl/tracks_spilled", self.tracks.spilled)
            self.stats.set_value("docscrawl/discovery_deferred", self.tracks.deferred)
            self.stats.set_value("docscrawl/seen_urls_spilled", self.seen_urls.spilled)
            self.stats.set_value("docscrawl/tracks_pinned_at_end", self.tracks.pinned)
        for old, new in resolve_renames(self.renames).items():
            self.incremental.rename(old, new)
        for canonical in self.aggregates_found:
            self.incremental.set_aggregate(canonical, keep_chunks=self.config.keep_aggregates)
        self.removed = self.incremental.finish(complete=self._complete(finish_reason))
        if self.journal is not None:
            self.journal.close()
        self._write_marker("finished")
        run = self._write_run("finished", finish_reason, updated=updated)
        self.ledger.close()
        if self._publish(finish_reason):
            # Once published (never before: a kill in between leaves the state pointing
            # at the previous run, still published), the next crawl's carry-over reads
            # this run's lines.
            self.incremental.index_published(self.run_dir)
        else:
            self.incremental.close()
        return run

    def _publish(self, finish_reason: str) -> bool:
        """Make this run the output users read. A graceful stop (Ctrl-C, SIGTERM) that cut
        a re-crawl short keeps the previous output: the stopped run stays in
        `OUT/.crawling` to be read, until the next crawl. False when not published."""
        if finish_reason == "shutdown" and jsonl_path(self.out_dir, "pages.jsonl").exists():
            logger.warning("docscrawl: crawl stopped (%s) before its end: the previous "
                           "output stays in %s; this run's files are in %s", finish_reason,
                           self.out_dir, self.out_dir / CRAWLING)
            return False
        if self.config.compress == "gzip":  # written plain (resumable), published gzipped
            for name in OUTPUT_FILES:
                if (self.run_dir / name).is_file():
                    compress_jsonl(self.run_dir / name)
        publish(self.out_dir, self.run_dir)
        return True

    def _pause(self, finish_reason: str) -> dict[str, Any]:
        """JOBDIR crawl stopped early (Ctrl-C...): keep everything open for the resume."""
        self.site_model.save()
        for writer in (self.pages, self.chunks, self.structure, self.templates):
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
            "removed_reasons": dict(sorted(self.incremental.removed_reasons.items())),
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
        write_json_atomic(self.run_dir / "run.json", run)
        return run


def _host_of(url: str) -> str:
    return urlsplit(url).hostname or ""
