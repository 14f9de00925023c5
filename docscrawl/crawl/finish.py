"""The end of a crawl: the one module that closes it, pauses it, or publishes it.

`CrawlEnd.finish` closes the URLs still open, closes the output files, updates the
records already written with what was learned after them, writes run.json and publishes
the run (`docscrawl.runs`); `CrawlEnd.pause` keeps everything for a JOBDIR resume.

What records learn after they were written: aliases and ways found later, a better
canonical URL (`DedupState.renames`), the site's shared version signal (`ColdPages`),
aggregate pages: streamed rewrites (`rewrite_jsonl`: a temporary file replaces the file
atomically, a crash leaves it intact), pages.jsonl's first three in one. The line updaters
are shared with `docscrawl merge`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docscrawl.crawl.ledger import JsonMap
from docscrawl.dedup.content import sha256_id
from docscrawl.discovery.pagetrack import Discovery, PageTrack, discovery_records
from docscrawl.export.inbound import add_inbound_links
from docscrawl.export.records import as_dict
from docscrawl.extract.model import VersionInfo
from docscrawl.extract.site_versions import SiteVersions
from docscrawl.extract.version import evidence_of
from docscrawl.jsonl import jsonl_path, read_jsonl, rewrite_jsonl
from docscrawl.runs import CRAWLING, publish
from docscrawl.seekjsonl import compress_jsonl
from docscrawl.vocab import OUTPUT_FILES

if TYPE_CHECKING:
    from docscrawl.crawl.stage import CrawlParts

logger = logging.getLogger(__name__)

MAX_COLD_PAGES = 2000  # pages written before the site's version was known, fixed at the end

Transform = Callable[[dict[str, Any]], dict[str, Any]]
Filter = Callable[[dict[str, Any]], dict[str, Any] | None]  # None drops the line

# The pages.jsonl fields `page_updater` reads and changes (`records.page_records`: first)
PAGE_LEADING_FIELDS = ("id", "canonical_url", "observed_urls", "discovery", "sitemap_lastmod")
# Every pages.jsonl field the end of the crawl may change: the leading ones, the version and
# title (the page at a better canonical URL's; the site's version signal for pages written
# before it was known), `aggregate_of`. A feed (`-O`) carries records as first written.
UPDATED_AT_END = (*PAGE_LEADING_FIELDS, "version", "title", "aggregate_of")
# The pages.jsonl fields `version_updater` reads and changes (before Markdown and links)
VERSION_FIELDS = ("canonical_url", "final_url", "version")


def page_updater(grown: Mapping[str, dict[str, Any]], renames: dict[str, str],
                 relabels: Mapping[str, dict[str, Any]] | None = None) -> Transform:
    """pages.jsonl: new canonical URL and id (and the version and title of the page at
    that URL, `relabels`), grown observed URLs and discovery."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        old = record.get("canonical_url")
        if old is None:
            return record
        new = renames.get(old, old)
        if new != old:
            record["canonical_url"], record["id"] = new, sha256_id(new)
            if relabels and new in relabels:
                record.update(relabels[new])
        record.update(grown.get(new, {}))
        return record
    return update


def chunk_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's `metadata` fields for changed page fields (`version` is the value there)."""
    out = {"version": (fields["version"] or {}).get("value")} if "version" in fields else {}
    return {**out, "title": fields["title"]} if "title" in fields else out


def page_ref_updater(renames: dict[str, str],
                     relabels: Mapping[str, dict[str, Any]] | None = None) -> Transform:
    """structure.jsonl and chunks.jsonl: follow the page's new canonical URL and id (and a
    chunk its page's new version and title)."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        meta = record.get("metadata")
        old = record.get("canonical_url") or (meta or {}).get("canonical_url")
        new = renames.get(old) if old is not None else None
        if old is None or new is None:
            return record
        record["page_id"] = sha256_id(new)
        if "canonical_url" in record:
            record["canonical_url"] = new
        if meta:
            meta["canonical_url"] = new
            if relabels and new in relabels:
                meta.update(chunk_fields(relabels[new]))
            source = meta.get("source_url") or ""
            if source == old or source.startswith(old + "#"):
                meta["source_url"] = new + source[len(old):]
        return record
    return update


def log_updater(renames: dict[str, str]) -> Transform:
    """crawl_log.jsonl: `duplicate_of` and `extracted` references follow renames."""
    def update(event: dict[str, Any]) -> dict[str, Any]:
        for key in ("duplicate_of", "canonical_url"):
            value = event.get(key)
            if value in renames:
                event[key] = renames[value]
                if key == "canonical_url" and "page_id" in event:
                    event["page_id"] = sha256_id(renames[value])
        return event
    return update


def version_updater(site: SiteVersions, cold: set[str],
                    updated: dict[str, dict[str, Any]]) -> Transform:
    """pages.jsonl: pages written before the site's version evidence was known (`cold`,
    by final URL) get it now; `updated` collects their canonical URL -> new version."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("final_url") not in cold:
            return record
        old = record.get("version") or {}
        info = VersionInfo(old.get("value"), old.get("status") or "unversioned",
                           evidence_of(old))
        new, _ = site.apply(info, [])
        if new is not info:
            record["version"] = as_dict(new)
            updated[record.get("canonical_url") or ""] = record["version"]
        return record
    return update


def chunk_version_update(updated: Mapping[str, dict[str, Any]]
                         ) -> Callable[[dict[str, Any]], bool]:
    """A chunk's metadata: the `version` of the pages `version_updater` changed (True
    when it was one of theirs)."""
    def update(meta: dict[str, Any]) -> bool:
        if meta.get("canonical_url") not in updated:
            return False
        meta.update(chunk_fields({"version": updated[meta["canonical_url"]]}))
        return True
    return update


def chunk_version_updater(updated: Mapping[str, dict[str, Any]]) -> Transform:
    """chunks.jsonl: `metadata.version` of the pages `version_updater` changed."""
    update_meta = chunk_version_update(updated)
    def update(record: dict[str, Any]) -> dict[str, Any]:
        meta = record.get("metadata")
        if meta:
            update_meta(meta)
        return record
    return update


def aggregate_updater(aggregates: Mapping[str, list[str]]) -> Transform:
    """pages.jsonl: `aggregate_of` on the pages that concatenate others."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        parts = aggregates.get(record.get("canonical_url") or "")
        if parts is not None:
            record["aggregate_of"] = parts
        return record
    return update


def chunk_dropper(pages: Mapping[str, Any], dropped: list[int]) -> Filter:
    """chunks.jsonl: drop the chunks of `pages` (by canonical URL); counts in `dropped`."""
    def update(record: dict[str, Any]) -> dict[str, Any] | None:
        if (record.get("metadata") or {}).get("canonical_url") in pages:
            dropped[0] += 1
            return None
        return record
    return update


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
        aggregates: dict[str, list[str]] = {}
        versions: dict[str, dict[str, Any]] = {}
        updated = _update_records(parts, versions) + _mark_aggregates(parts, aggregates)
        parts.outputs.templates.finish(parts.outputs.path("pages.jsonl"))  # unused dropped
        if parts.config.extract:  # after aggregates left chunks.jsonl
            add_inbound_links(parts.outputs.run_dir,
                              update=chunk_version_update(versions) if versions else None,
                              graph=parts.outputs.take_link_graph())
        elif versions:
            rewrite_jsonl(parts.outputs.path("chunks.jsonl"), chunk_version_updater(versions),
                          fields=("metadata",))
        if parts.stats is not None:
            parts.stats.set_value("docscrawl/tracks_spilled", parts.tracks.spilled)
            parts.stats.set_value("docscrawl/discovery_deferred", parts.tracks.deferred)
            parts.stats.set_value("docscrawl/seen_urls_spilled", parts.seen_urls.spilled)
            parts.stats.set_value("docscrawl/tracks_pinned_at_end", parts.tracks.pinned)
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


def _update_records(parts: CrawlParts, versions: dict[str, dict[str, Any]]) -> int:
    """Rewrite output files once when written records gained URLs or a new canonical, and
    pages.jsonl (the same pass) when pages written before the site's version signal was
    known get it (`versions`: canonical URL -> version, for `chunk_version_update`)."""
    dedup, outputs = parts.dedup, parts.outputs
    renames = dedup.resolved_renames()
    relabels = {new: dedup.relabels[new] for new in set(renames.values())
                if new in dedup.relabels}
    grown = _grown_records(parts, renames)
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
    return len(grown) + sum(1 for new in set(renames.values()) if new not in grown) + len(versions)


def rewrite_in_turn(path: Path, updates: list[tuple[Transform, tuple[str, ...]]]) -> None:
    """`rewrite_jsonl` with each (transform, fields) of `updates` in turn, in one pass: the
    lines the rewrites one after the other write (the fields of them all read)."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        for transform, _ in updates:
            record = transform(record)
        return record
    if updates:
        rewrite_jsonl(path, update, fields=tuple(dict.fromkeys(
            field for _, fields in updates for field in fields)))


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


def _grown_records(parts: CrawlParts, renames: dict[str, str]) -> JsonMap:
    """Final canonical URL -> the fields to update in each written record that grew
    (from the track that wrote it and its content duplicates'), kept in the ledger:
    the crawl never holds every update, nor every track, at once."""
    duplicates: dict[str, list[PageTrack]] = {}
    for track in _all_tracks(parts):
        if not track.written and track.merged_into is not None:
            canonical = renames.get(track.merged_into, track.merged_into)
            duplicates.setdefault(canonical, []).append(track)
    grown = parts.ledger.json_map("grown_records")
    grown.clear()
    for track in _all_tracks(parts):
        if track.written and track.record_canonical is not None:
            canonical = renames.get(track.record_canonical, track.record_canonical)
            fields = record_growth([track, *duplicates.get(canonical, ())])
            if fields:
                grown[canonical] = fields
            else:  # the last one written counts, as it replaced the record
                grown.pop(canonical, None)
    return grown


def _all_tracks(parts: CrawlParts) -> Iterator[PageTrack]:
    """The frontier's tracks, then those a resume restored outside it (no copy)."""
    yield from parts.frontier.tracks()
    yield from parts.resume.restored_tracks
