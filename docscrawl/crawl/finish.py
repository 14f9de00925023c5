"""The end of a crawl: the one module that closes it, pauses it, or publishes it.

`CrawlEnd.finish` closes the URLs still open, closes the output files, updates the
records already written with what was learned after them, writes run.json and publishes
the run (`docscrawl.runs`); `CrawlEnd.pause` keeps everything for a JOBDIR resume.

What records learn after they were written: aliases and ways found later, a better
canonical URL (`DedupState.renames`), the site's shared version signal (`ColdPages`),
aggregate pages: streamed rewrites (`rewrite_jsonl`: a temporary file replaces the file
atomically, a crash leaves it intact) by the line updaters of `crawl.updaters`, pages.jsonl's
first three in one.

An unchanged re-crawl (every page and chunk line carried over from one published run, no
page with a new URL: `Incremental.carried_whole`) keeps the inbound links that run gave its
chunks instead of ranking the same links again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from docscrawl.crawl.ledger import JsonMap
from docscrawl.crawl.updaters import (
    PAGE_LEADING_FIELDS,
    VERSION_FIELDS,
    Transform,
    aggregate_updater,
    chunk_dropper,
    chunk_version_update,
    chunk_version_updater,
    log_updater,
    page_ref_updater,
    page_updater,
    rewrite_in_turn,
    version_updater,
)
from docscrawl.discovery.pagetrack import Discovery, PageTrack, discovery_records
from docscrawl.export.inbound import add_inbound_links
from docscrawl.extract import compiled
from docscrawl.extract.site_versions import SiteVersions
from docscrawl.jsonl import jsonl_path, read_jsonl, rewrite_jsonl
from docscrawl.runs import CRAWLING, publish
from docscrawl.seekjsonl import compress_jsonl
from docscrawl.vocab import OUTPUT_FILES

if TYPE_CHECKING:
    from docscrawl.crawl.stage import CrawlParts

logger = logging.getLogger(__name__)

MAX_COLD_PAGES = 2000  # pages written before the site's version was known, fixed at the end

class ColdPages:
    """Pages written before the site's shared version signal was known (by final URL),
    to be given it at the end (at most MAX_COLD_PAGES)."""

    def __init__(self) -> None:
        self.urls: set[str] = set()

    def note(self, final_url: str, versions: SiteVersions) -> None:
        """A page was extracted: remember it while the site's version is still unknown."""
        if not versions.evidence() and len(self.urls) < MAX_COLD_PAGES:
            self.urls.add(final_url)


class CrawlEnd:
    """Ends one crawl, once: finished (published), stopped, or paused for a resume."""

    def __init__(self, parts: CrawlParts) -> None:
        self.parts = parts
        self.finished = False
        self.paused = False
        self.removed = 0  # pages the incremental state found gone

    def finish(self, finish_reason: str) -> dict[str, Any]:
        """Close open URLs, update grown or renamed records, write run.json, close files,
        publish the run; with a JOBDIR, a crawl stopped early pauses instead."""
        if self.finished:
            return {}
        self.finished = True
        parts = self.parts
        if parts.resume.jobdir is not None and finish_reason != "finished":
            return self._pause(finish_reason)
        closed = parts.log.close_open("crawl_closed", f"crawl ended ({finish_reason}) first")
        if closed:
            logger.warning("docscrawl: %d URLs were still pending when the crawl ended", closed)
        parts.outputs.close()
        parts.log.close()
        parts.site_model.save()
        # before the rewrites below: whether this run holds the lines of one published run
        carried = (parts.incremental.carried_whole(parts.outputs.run_dir)
                   if parts.config.extract and not parts.resume.resumed else None)
        aggregates: dict[str, list[str]] = {}
        versions: dict[str, dict[str, Any]] = {}
        updated, relinked = _update_records(parts, versions)
        updated += _mark_aggregates(parts, aggregates)
        parts.outputs.templates.finish(parts.outputs.path("pages.jsonl"))  # unused dropped
        if parts.config.extract:  # after aggregates left chunks.jsonl
            graph = parts.outputs.take_link_graph()
            if carried is not None and not (relinked or versions or aggregates):
                # Its chunks hold the inbound links that run's end gave them, from these
                # very pages, links, templates and chunks: the pass would rank the same.
                if graph is not None:
                    graph.close()
                logger.info("docscrawl: inbound links kept as %s gave them (every page and "
                            "chunk carried over from it, no page with a new URL)", carried)
            else:
                add_inbound_links(parts.outputs.run_dir, graph=graph, update=(
                    chunk_version_update(versions) if versions else None))
        elif versions:
            rewrite_jsonl(parts.outputs.path("chunks.jsonl"), chunk_version_updater(versions),
                          fields=("metadata",))
        if parts.stats is not None:
            parts.stats.set_value("docscrawl/tracks_spilled", parts.tracks.spilled)
            parts.stats.set_value("docscrawl/discovery_deferred", parts.tracks.deferred)
            parts.stats.set_value("docscrawl/seen_urls_spilled", parts.seen_urls.spilled)
            parts.stats.set_value("docscrawl/tracks_pinned_at_end", parts.tracks.pinned)
            parts.stats.set_value("docscrawl/extract_compiled", int(compiled()))
        incremental = parts.incremental
        for old, new in parts.dedup.resolved_renames().items():
            incremental.rename(old, new)
        for canonical in aggregates:
            incremental.set_aggregate(canonical, keep_chunks=parts.config.keep_aggregates)
        self.removed = incremental.finish(complete=parts.report.complete(finish_reason))
        parts.resume.close()
        parts.resume.mark(run_marker(parts, "finished"))
        run = parts.report.write("finished", finish_reason, updated=updated)
        parts.ledger.close()
        if self._publish(finish_reason):
            # Once published (never before: a kill in between leaves the state pointing
            # at the previous run, still published), the next crawl's carry-over reads
            # this run's lines.
            incremental.index_published(parts.outputs.run_dir)
        else:
            incremental.close()
        return run

    def _publish(self, finish_reason: str) -> bool:
        """Make this run the output users read. A graceful stop (Ctrl-C, SIGTERM) that cut
        a re-crawl short keeps the previous output: the stopped run stays in
        `OUT/.crawling` to be read, until the next crawl. False when not published."""
        out_dir, run_dir = self.parts.report.out_dir, self.parts.outputs.run_dir
        if finish_reason == "shutdown" and jsonl_path(out_dir, "pages.jsonl").exists():
            logger.warning("docscrawl: crawl stopped (%s) before its end: the previous "
                           "output stays in %s; this run's files are in %s", finish_reason,
                           out_dir, out_dir / CRAWLING)
            return False
        if self.parts.config.compress == "gzip":  # written plain (resumable), published gzipped
            for name in OUTPUT_FILES:
                if (run_dir / name).is_file():
                    compress_jsonl(run_dir / name)
        publish(out_dir, run_dir)
        return True

    def _pause(self, finish_reason: str) -> dict[str, Any]:
        """JOBDIR crawl stopped early (Ctrl-C...): keep everything open for the resume."""
        parts = self.parts
        parts.site_model.save()
        parts.outputs.close()
        parts.outputs.templates.close()
        parts.log.close()
        parts.resume.close()
        parts.incremental.pause()
        self.paused = True
        parts.resume.mark(run_marker(parts, "paused"))
        logger.info("docscrawl: paused (%s); resume with the same JOBDIR and output "
                    "directory", finish_reason)
        run = parts.report.write("paused", finish_reason)
        parts.ledger.close()
        return run


def run_marker(parts: CrawlParts, status: str) -> dict[str, Any]:
    """The JOBDIR run marker's fields (`docscrawl.crawl.resume.RUN_MARKER`)."""
    return {"run_id": parts.incremental.run.run_id, "out_dir": str(parts.report.out_dir),
            "run_dir": parts.outputs.run_dir.name, "status": status,
            "started_at": parts.report.started_at, "resumes": parts.report.resumes}


def record_growth(tracks: list[PageTrack]) -> dict[str, Any]:
    """Fields to update in a written page record whose tracks learned more after it was
    written (`tracks[0]` wrote it; the others are its content duplicates)."""
    first = tracks[0]
    observed: dict[str, None] = {}
    discovery: list[Discovery] = []
    lastmod: str | None = None  # this crawl's sitemap first, else the record's
    for track in tracks:
        observed.update(dict.fromkeys(track.observed))
        lastmod = lastmod or track.sitemap_lastmod
        for item in track.discovery:
            if item not in discovery:
                discovery.append(item)
    lastmod = lastmod or first.written_lastmod
    if (len(observed), len(discovery), lastmod) == (
            first.written_observed, first.written_discovery, first.written_lastmod):
        return {}
    return {"observed_urls": list(observed), "discovery": discovery_records(discovery),
            "sitemap_lastmod": lastmod}


def _update_records(parts: CrawlParts, versions: dict[str, dict[str, Any]]
                    ) -> tuple[int, bool]:
    """Rewrite output files once when written records gained URLs or a new canonical, and
    pages.jsonl (the same pass) when pages written before the site's version signal was
    known get it (`versions`: canonical URL -> version, for `chunk_version_update`).
    Returns how many records changed, and whether a page got a URL it is linked by (a new
    canonical or observed URL: the inbound links then change)."""
    dedup, outputs = parts.dedup, parts.outputs
    renames = dedup.resolved_renames()
    relabels = {new: dedup.relabels[new] for new in set(renames.values())
                if new in dedup.relabels}
    grown, observed = _grown_records(parts, renames)
    updates: list[tuple[Transform, tuple[str, ...]]] = []
    if len(grown) or renames:
        updates.append((page_updater(grown, renames, relabels), PAGE_LEADING_FIELDS))
    site, cold = parts.site_model.versions, parts.cold.urls
    if cold and site.evidence():
        updates.append((version_updater(site, cold, versions), VERSION_FIELDS))
    rewrite_in_turn(outputs.path("pages.jsonl"), updates)
    if renames:
        for name in ("structure.jsonl", "chunks.jsonl"):
            rewrite_jsonl(outputs.path(name), page_ref_updater(renames, relabels))
        rewrite_jsonl(outputs.path("crawl_log.jsonl"), log_updater(renames))
    updated = len(grown) + sum(1 for new in set(renames.values()) if new not in grown)
    return updated + len(versions), observed or bool(renames)


def _mark_aggregates(parts: CrawlParts, found: dict[str, list[str]]) -> int:
    """Pages that concatenate others get `aggregate_of` (collected in `found`); their
    chunks leave chunks.jsonl unless the crawl keeps them (`-a keep_aggregates=on`)."""
    aggregates, outputs = parts.dedup.aggregates, parts.outputs
    verdicts = aggregates.verdicts()
    if not verdicts:
        return 0
    renames = parts.dedup.resolved_renames()
    back = {new: old for old, new in renames.items()}
    written = ((back.get(url, url), r.get("markdown") or "")
               for r in read_jsonl(outputs.path("pages.jsonl"))
               if (url := r.get("canonical_url")) is not None)
    verdicts = aggregates.confirm(verdicts, written)
    if not verdicts:
        return 0
    found.update({renames.get(url, url): [renames.get(p, p) for p in pages]
                  for url, pages in verdicts.items()})
    rewrite_jsonl(outputs.path("pages.jsonl"), aggregate_updater(found))
    if not parts.config.keep_aggregates:
        dropped = [0]
        rewrite_jsonl(outputs.path("chunks.jsonl"), chunk_dropper(found, dropped))
        outputs.chunks.count -= dropped[0]
    if parts.stats is not None:
        parts.stats.set_value("docscrawl/aggregate_pages", len(found))
    logger.info("docscrawl: %d aggregate pages (print views, single-page builds): %s",
                len(found), ", ".join(list(found)[:5]))
    return len(found)


def _grown_records(parts: CrawlParts, renames: dict[str, str]) -> tuple[JsonMap, bool]:
    """Final canonical URL -> the fields to update in each written record that grew
    (from the track that wrote it and its content duplicates'), kept in the ledger:
    the crawl never holds every update, nor every track, at once. And whether any record
    gained an observed URL (not only ways it was found)."""
    duplicates: dict[str, list[PageTrack]] = {}
    for track in _all_tracks(parts):
        if not track.written and track.merged_into is not None:
            canonical = renames.get(track.merged_into, track.merged_into)
            duplicates.setdefault(canonical, []).append(track)
    grown = parts.ledger.json_map("grown_records")
    grown.clear()
    observed = False
    for track in _all_tracks(parts):
        if track.written and track.record_canonical is not None:
            canonical = renames.get(track.record_canonical, track.record_canonical)
            fields = record_growth([track, *duplicates.get(canonical, ())])
            if fields:
                grown[canonical] = fields
                observed = observed or len(fields["observed_urls"]) > (track.written_observed or 0)
            else:  # the last one written counts, as it replaced the record
                grown.pop(canonical, None)
    return grown, observed


def _all_tracks(parts: CrawlParts) -> Iterator[PageTrack]:
    """The frontier's tracks, then those a resume restored outside it (no copy)."""
    yield from parts.frontier.tracks()
    yield from parts.resume.restored_tracks
