"""The end of a crawl: records already written get what was learned after them.

Aliases and ways found after a page was written, a better canonical URL, the site's
shared version signal, aggregate pages: each is one streamed rewrite of the output files
(`docscrawl.crawl.finalize`), made once when the crawl ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from docscrawl.crawl.finalize import (
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
from docscrawl.crawl.ledger import JsonMap
from docscrawl.discovery.pagetrack import Discovery, PageTrack, discovery_records
from docscrawl.jsonl import read_jsonl

if TYPE_CHECKING:
    from docscrawl.crawl.session import CrawlSession

logger = logging.getLogger(__name__)


def update_written_records(session: CrawlSession) -> int:
    """Every end-of-crawl update of written records; returns how many records changed."""
    return (_update_grown_records(session) + _backfill_versions(session)
            + _mark_aggregates(session))


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


def _update_grown_records(session: CrawlSession) -> int:
    """Rewrite output files once when written records gained URLs or a new canonical."""
    renames = resolve_renames(session.renames)
    relabels = {new: session.relabels[new] for new in set(renames.values())
                if new in session.relabels}
    grown = _grown_records(session, renames)
    if len(grown) or renames:
        rewrite_jsonl(session.run_dir / "pages.jsonl",
                      page_updater(grown, renames, relabels), leading=PAGE_LEADING_FIELDS)
    if renames:
        for name in ("structure.jsonl", "chunks.jsonl"):
            rewrite_jsonl(session.run_dir / name, page_ref_updater(renames, relabels))
        rewrite_jsonl(session.run_dir / "crawl_log.jsonl", log_updater(renames))
    return len(grown) + sum(1 for new in set(renames.values()) if new not in grown)


def _backfill_versions(session: CrawlSession) -> int:
    """Pages written before the site's shared version signal was known get it now
    (pages.jsonl, then their chunks' `metadata.version`)."""
    if not session.version_cold or not session.site_model.versions.evidence():
        return 0
    updated: dict[str, dict[str, Any]] = {}
    rewrite_jsonl(session.run_dir / "pages.jsonl",
                  version_updater(session.site_model.versions, session.version_cold, updated))
    if updated:
        rewrite_jsonl(session.run_dir / "chunks.jsonl", chunk_version_updater(updated))
    return len(updated)


def _mark_aggregates(session: CrawlSession) -> int:
    """Pages that concatenate others get `aggregate_of`; their chunks leave
    chunks.jsonl unless the crawl keeps them (`-a keep_aggregates=on`)."""
    verdicts = session.aggregates.verdicts()
    if not verdicts:
        return 0
    renames = resolve_renames(session.renames)
    back = {new: old for old, new in renames.items()}
    written = ((back.get(url, url), r.get("markdown") or "")
               for r in read_jsonl(session.run_dir / "pages.jsonl")
               if (url := r.get("canonical_url")) is not None)
    verdicts = session.aggregates.confirm(verdicts, written)
    if not verdicts:
        return 0
    found = {renames.get(url, url): [renames.get(p, p) for p in parts]
             for url, parts in verdicts.items()}
    rewrite_jsonl(session.run_dir / "pages.jsonl", aggregate_updater(found))
    if not session.config.keep_aggregates:
        dropped = [0]
        rewrite_jsonl(session.run_dir / "chunks.jsonl", chunk_dropper(found, dropped))
        session.chunks.count -= dropped[0]
    if session.stats is not None:
        session.stats.set_value("docscrawl/aggregate_pages", len(found))
    logger.info("docscrawl: %d aggregate pages (print views, single-page builds): %s",
                len(found), ", ".join(list(found)[:5]))
    session.aggregates_found = found
    return len(found)


def _grown_records(session: CrawlSession, renames: dict[str, str]) -> JsonMap:
    """Final canonical URL -> the fields to update in each written record that grew
    (from the track that wrote it and its content duplicates'), kept in the ledger:
    the crawl never holds every update, nor every track, at once."""
    duplicates: dict[str, list[PageTrack]] = {}
    for track in _all_tracks(session):
        if not track.written and track.merged_into is not None:
            canonical = renames.get(track.merged_into, track.merged_into)
            duplicates.setdefault(canonical, []).append(track)
    grown = session.ledger.json_map("grown_records")
    grown.clear()
    for track in _all_tracks(session):
        if track.written and track.record_canonical is not None:
            canonical = renames.get(track.record_canonical, track.record_canonical)
            fields = record_growth([track, *duplicates.get(canonical, ())])
            if fields:
                grown[canonical] = fields
            else:  # the last one written counts, as it replaced the record
                grown.pop(canonical, None)
    return grown


def _all_tracks(session: CrawlSession) -> Iterator[PageTrack]:
    """The frontier's tracks, then those a resume restored outside it (no copy)."""
    yield from session.frontier.tracks()
    yield from session.restored_tracks
