"""Incremental re-crawls: the crawl's side of `docscrawl.incremental.state` and changes.jsonl.

One object per crawl, owned by the session. It answers the spider (conditional request
headers, what state knows about a URL) and records what each page turned out to be
(added, changed, unchanged, gone), one changes.jsonl line per canonical URL per run.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections import Counter
from collections.abc import MutableSet
from dataclasses import replace
from pathlib import Path

from docscrawl.chunking.chunker import ChunkRecord
from docscrawl.export.records import PageRecord
from docscrawl.incremental.carry import (
    CHUNKS,
    PAGES,
    CarriedLines,
    PreviousOutput,
    index_output,
)
from docscrawl.incremental.changes import ChangeRecord, compute_change, removed_pages
from docscrawl.incremental.rows import FoundLink, Run, StateRow
from docscrawl.incremental.state import StateStore
from docscrawl.jsonl import JsonlWriter

logger = logging.getLogger(__name__)

# A published run's index rewrites every row it points (its overflow pages freed and taken
# again): a first crawl left a third of go-spec's state free. Above this share the state
# is compacted (VACUUM: 10-100 ms for 1-2 MB states).
COMPACT_FREE_SHARE = 0.1


def body_hash(body: bytes) -> str:
    """Hash of a raw response body: a byte-identical page needs no extraction at all."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


class Incremental:
    """State store, current run and changes.jsonl of one crawl."""

    def __init__(self, state_dir: Path, changes_path: Path, *, run_id: str | None = None,
                 reported: MutableSet[str] | None = None) -> None:
        """`reported`: where to keep the canonical URLs reported in this run (the crawl's
        ledger; a set in memory by default)."""
        self.store = StateStore.open(state_dir)
        self.previous = PreviousOutput(self.store, self.store.path.parent)
        self.run: Run = self.store.begin_run(run_id)
        self.changes = JsonlWriter(changes_path, append=run_id is not None)
        self._reported: MutableSet[str] = reported if reported is not None else set()
        self.counts: Counter[str] = Counter()
        self.removed_reasons: Counter[str] = Counter()  # why the `removed` pages went
        # bytes of page and chunk lines carried over, by the source they came from (None:
        # a copy an older schema kept): `carried_whole` reads it
        self._carried: dict[int | None, list[int]] = {}

    def was_reported(self, canonical_url: str) -> bool:
        """True when the canonical URL has a changes line in this run."""
        return canonical_url in self._reported

    def restore_reported(self, reported: set[str], counts: Counter[str]) -> None:
        """Resume (JOBDIR): the canonical URLs this run already has a changes line for."""
        self._reported |= set(reported)
        self.counts.update(counts)

    def pause(self) -> None:
        """The crawl stops to be resumed later (JOBDIR): the run stays unfinished."""
        self.changes.close()
        self.close()

    def close(self) -> None:
        self.previous.close()
        self.store.close()

    def row_for(self, url: str) -> StateRow | None:
        """What state knows about a URL (canonical or any URL observed for it); a row
        whose lines are in an output gone or changed since is given without them (it is
        not carried over, so no conditional request is sent for it)."""
        row = self.store.get(url)
        if row is not None and row.lines is not None and not self.previous.usable(row):
            row = replace(row, lines=None)
        return row

    def lines_for(self, row: StateRow) -> CarriedLines | None:
        """The lines to write again for an unchanged page, or None when they cannot be
        read (the page is then extracted again)."""
        return self.previous.lines_for(row)

    def conditional_headers(self, row: StateRow | None) -> dict[str, str]:
        """If-None-Match / If-Modified-Since for a page that can be carried over."""
        if row is None or not row.can_carry_over:
            return {}
        headers = {}
        if row.etag:
            headers["If-None-Match"] = row.etag
        if row.last_modified:
            headers["If-Modified-Since"] = row.last_modified
        return headers

    def fresh(self, record: PageRecord, chunks: list[ChunkRecord], *,
              body_digest: str | None, extra_urls: list[str],
              links: list[FoundLink] | None = None) -> ChangeRecord:
        """A newly extracted page: compare with state, write its changes line, store it.
        (A page that moved to a new canonical URL reports the old one `moved`.)

        `links`: the links discovery followed from the page; without them the page cannot
        be carried over by the next crawl: it is extracted again. Its lines are found in
        the output once published (`index_published`)."""
        canonical = record["canonical_url"]
        fetched = record["fetched_url"]
        old = self.store.get(canonical)
        if old is None and fetched != canonical:  # (the same URL asked once)
            old = self.store.get(fetched)
        chunk_ids = [chunk["id"] for chunk in chunks]
        change = compute_change(old, record["content_hash"], chunk_ids, canonical_url=canonical)
        if old is not None and old.canonical_url != canonical:
            self._report(compute_change(old, None, [], removed_reason="moved"))
            self.store.forget([old.canonical_url])
        self._report(change)
        http = record["http"]
        self.store.upsert_page(
            canonical, run_id=self.run.run_id, etag=http.get("etag"),
            last_modified=http.get("last_modified"), content_hash=record["content_hash"],
            chunk_ids=chunk_ids, observed_urls=[*record["observed_urls"], *extra_urls],
            body_hash=body_digest, discovery_links=links,
        )
        return change

    def unchanged(self, row: StateRow, *, etag: str | None, last_modified: str | None,
                  observed_urls: list[str], body_digest: str | None,
                  links: list[FoundLink] | None = None) -> None:
        """A 304, or a page whose content hash did not change: carried over from state
        (`links`: the links of a page parsed again, kept for the next crawl)."""
        self._report(compute_change(row, row.content_hash, row.chunk_ids))
        pointer = row.lines
        carried = self._carried.setdefault(pointer.source if pointer else None, [0, 0])
        if pointer is not None:
            carried[0] += pointer.page_len
            carried[1] += pointer.chunks_len
        self.store.mark_seen(row.canonical_url, self.run.run_id, etag=etag,
                             last_modified=last_modified, observed_urls=observed_urls,
                             body_hash=body_digest, discovery_links=links)

    def carried_whole(self, run_dir: Path) -> Path | None:
        """The published run whose every page and chunk line this run's `run_dir` holds,
        and nothing else: all its lines carried over, as they were, from that one run
        (`unchanged`) and none written fresh. None otherwise. Asked before the end of the
        crawl rewrites any file; it reads the files' sizes only."""
        if len(self._carried) != 1:
            return None
        [(source, (page_bytes, chunk_bytes))] = self._carried.items()
        found = self.store.source(source) if source is not None else None  # None: copies
        if found is None:
            return None
        previous, sizes = found
        if (sizes.get(PAGES), sizes.get(CHUNKS)) != (page_bytes, chunk_bytes):
            return None  # some of its pages were not carried over
        written = [_size(run_dir / name) for name in (PAGES, CHUNKS)]
        return previous if written == [page_bytes, chunk_bytes] else None

    def add_aliases(self, canonical_url: str, urls: list[str]) -> None:
        """URLs found serving a page already stored: the next crawl maps them to it."""
        self.store.mark_seen(canonical_url, self.run.run_id, observed_urls=urls)

    def gone(self, url: str, reason: str) -> bool:
        """A known page answered 404/410 or redirected away (`reason`: `http_404`, or
        the skip reason of the redirect): report it removed."""
        row = self.store.get(url)
        if row is None:
            return False
        self._report(compute_change(row, None, [], removed_reason=reason))
        self.store.forget([row.canonical_url])
        return True

    def kept(self, url: str) -> None:
        """A known page failed for a passing reason (5xx, timeout): not removed."""
        row = self.store.get(url)
        if row is not None:
            self.store.mark_seen(row.canonical_url, self.run.run_id)

    def rename(self, old: str, new: str) -> None:
        """A written page got a better canonical URL at the end of the crawl: its row
        follows (its lines are found under the new URL once the run is published)."""
        self.store.move(old, new, self.run.run_id)

    def set_aggregate(self, canonical_url: str, *, keep_chunks: bool) -> None:
        """A written page aggregates others (`docscrawl.dedup.aggregates`): unless kept,
        its chunks left the output, and its chunk ids the state."""
        if not keep_chunks:
            self.store.set_chunk_ids(canonical_url, [])

    def finish(self, *, complete: bool) -> int:
        """Report pages no complete crawl reached as removed; close the run. Returns how many."""
        removed = [line for line in removed_pages(self.store, self.run, complete)
                   if line["canonical_url"] not in self._reported]
        for line in removed:
            self._report(line)
        self.store.forget(line["canonical_url"] for line in removed)
        self.store.finish_run(self.run.run_id, complete=complete)
        self.changes.close()
        return len(removed)

    def index_published(self, run_dir: Path) -> int:
        """The run `run_dir` is published: point the state at its pages' lines (what the
        next crawl carries over), drop the copies older schemas kept, and close. Returns
        how many pages it points at."""
        self.previous.close()
        copies = self.store.copies()
        pointed = index_output(self.store, run_dir)
        if copies > self.store.copies():
            self.store.compact()
            logger.info("docscrawl: state %s: the copies of %d pages an older docscrawl "
                        "kept were dropped (the output holds them)", self.store.path, copies)
        elif self.store.free_share() > COMPACT_FREE_SHARE:
            try:  # bytes only: a reader holding the file (busy) leaves it as it is
                self.store.compact()
            except sqlite3.OperationalError as exc:
                logger.info("docscrawl: state %s not compacted (%s)", self.store.path, exc)
        self.close()
        return pointed

    def _report(self, line: ChangeRecord) -> None:
        if line["canonical_url"] in self._reported:
            return
        self._reported.add(line["canonical_url"])
        self.counts[line["change"]] += 1
        if line["change"] == "removed":
            self.removed_reasons[line["removed_reason"]] += 1
        self.changes.write(line)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None
