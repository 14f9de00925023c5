"""Incremental crawl state: one SQLite database per state directory (see the README).

Per canonical URL: validators (ETag, Last-Modified), content hash, raw-body hash, chunk
ids, the links discovery followed from the page, the run that last saw it, and where the
page's lines are in the published output that last wrote them (`LinePointer`; the lines
themselves are not copied here, `docscrawl.incremental.carry` reads them back); every
observed URL maps to its canonical URL. WAL journal, one transaction per write, so a
`kill -9` leaves the database consistent. A corrupt or foreign file is refused with
`StateError`, never overwritten; an older schema is migrated in one transaction
(`docscrawl.incremental.schema`). What a row holds, as values: `docscrawl.incremental.rows`.
Pure stdlib: no Scrapy.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from docscrawl.incremental.rows import (
    CHUNK_COUNT_SQL,
    PAGE_COLUMNS,
    POINTER_COLUMNS,
    FoundLink,
    LinePointer,
    Run,
    StateRow,
    StoredLinks,
    pack_chunk_ids,
    pack_links,
)
from docscrawl.incremental.schema import StateError, check_and_migrate, check_header, transaction

DB_NAME = "state.sqlite3"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class StateStore:
    """The state database of one state directory. Open with `StateStore.open(dir)`."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    # ---- opening ----------------------------------------------------------------------

    @classmethod
    def open(cls, directory: str | Path) -> Self:
        """Open or create `<directory>/state.sqlite3`; refuse what is not ours."""
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(f"state directory {directory} cannot be created: {exc}") from exc
        path = directory / DB_NAME
        check_header(path)
        try:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        except sqlite3.Error as exc:
            raise StateError(f"state database {path} cannot be opened: {exc}") from exc
        try:
            check_and_migrate(conn, path)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            conn.close()
            raise StateError(f"state database {path} cannot be used: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return cls(conn, path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One committed transaction; rolled back on error."""
        with transaction(self._conn):
            yield self._conn

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("SELECT version FROM docscrawl_schema").fetchone()[0])

    # ---- pages ------------------------------------------------------------------------

    def canonical_for(self, url: str) -> str | None:
        """The canonical URL a requested or observed URL belongs to, if known."""
        row = self._conn.execute(
            "SELECT canonical_url FROM pages WHERE canonical_url = ? UNION ALL "
            "SELECT canonical_url FROM url_aliases WHERE url = ? LIMIT 1", (url, url)
        ).fetchone()
        return row[0] if row else None

    def get(self, url: str) -> StateRow | None:
        """The row of a canonical URL, or of the canonical URL an observed URL maps to."""
        canonical = self.canonical_for(url)
        if canonical is None:
            return None
        row = self._conn.execute(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE canonical_url = ?", (canonical,)
        ).fetchone()
        return StateRow.from_sql(row) if row else None

    def upsert_page(
        self,
        canonical_url: str,
        *,
        run_id: str,
        etag: str | None,
        last_modified: str | None,
        content_hash: str,
        chunk_ids: list[str],
        observed_urls: Iterable[str] = (),
        body_hash: str | None = None,
        discovery_links: Iterable[FoundLink] | None = None,
        discovery_links_stored: StoredLinks | None = None,
    ) -> None:
        """Store a freshly extracted page, seen in `run_id`, in one transaction.

        Its lines are not stored: the index of the output that publishes them points the
        row at them (`set_lines`); until then the row has no lines, and a previous
        pointer or copy is dropped (it holds another content). `discovery_links` (or
        their stored form) are the links discovery followed from the page."""
        if discovery_links_stored is None and discovery_links is not None:
            discovery_links_stored = pack_links(discovery_links)
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO pages (canonical_url, etag, last_modified,"
                " content_hash, body_hash, chunk_ids, last_seen_run, updated_at,"
                " discovery_links) VALUES (?,?,?,?,?,?,?,?,?)",
                (canonical_url, etag, last_modified, content_hash, body_hash,
                 pack_chunk_ids(list(chunk_ids)), run_id, _now(), discovery_links_stored),
            )
            _add_aliases(conn, canonical_url, observed_urls)

    def mark_seen(
        self,
        canonical_url: str,
        run_id: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        observed_urls: Iterable[str] = (),
        body_hash: str | None = None,
        discovery_links: Iterable[FoundLink] | None = None,
    ) -> bool:
        """Record that an unchanged page was seen in `run_id` (new validators and
        discovery links kept when given). False when the canonical URL is unknown."""
        links = None if discovery_links is None else pack_links(discovery_links)
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE pages SET last_seen_run = ?, etag = COALESCE(?, etag),"
                " last_modified = COALESCE(?, last_modified), body_hash = COALESCE(?, body_hash),"
                " discovery_links = COALESCE(?, discovery_links)"
                " WHERE canonical_url = ?",
                (run_id, etag, last_modified, body_hash, links, canonical_url),
            )
            if cursor.rowcount:
                _add_aliases(conn, canonical_url, observed_urls)
        return bool(cursor.rowcount)

    def move(self, old: str, new: str, run_id: str) -> None:
        """A page's canonical URL changed (seen in `run_id`): its row and aliases follow,
        the old URL becomes an alias, and its lines are looked up again (under `new`)."""
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM pages WHERE canonical_url = ?",
                            (old,)).fetchone() is None:
                return
            conn.execute("DELETE FROM pages WHERE canonical_url = ?", (new,))
            conn.execute(
                "UPDATE pages SET canonical_url = ?, last_seen_run = ?, updated_at = ?,"
                " page_record = NULL, chunk_records = NULL, structure_record = NULL,"
                + ", ".join(f" {column} = NULL" for column in POINTER_COLUMNS)
                + " WHERE canonical_url = ?", (new, run_id, _now(), old))
            conn.execute("UPDATE url_aliases SET canonical_url = ? WHERE canonical_url = ?",
                         (new, old))
            conn.execute("DELETE FROM url_aliases WHERE url = ?", (new,))
            _add_aliases(conn, new, [old])

    def set_chunk_ids(self, canonical_url: str, chunk_ids: list[str]) -> None:
        """The page's chunks changed at the end of the crawl (an aggregate page's dropped)."""
        with self._write() as conn:
            conn.execute("UPDATE pages SET chunk_ids = ? WHERE canonical_url = ?",
                         (pack_chunk_ids(list(chunk_ids)), canonical_url))

    def set_lines(self, run_dir: Path, sizes: dict[str, int],
                  found: Iterable[tuple[str, LinePointer, int]]) -> tuple[int, list[Path]]:
        """Point pages at their lines in the published run `run_dir` (`found`: canonical
        URL, pointer with any `source`, number of chunk lines), in one transaction; a row
        whose chunk ids do not count as many chunks is left without lines. The copies
        older schemas kept of those pages are dropped; rows pointing at an older run lose
        their pointer (that run is no longer the output: they are extracted again), and
        older runs are forgotten. Returns how many rows point at `run_dir`, and the older
        runs' directories."""
        with self._write() as conn:
            conn.execute("DELETE FROM sources WHERE run_dir = ?", (str(run_dir),))
            source = conn.execute(
                "INSERT INTO sources (run_dir, sizes, indexed_at) VALUES (?, ?, ?)",
                (str(run_dir), _dumps(sizes), _now())).lastrowid
            conn.executemany(
                "UPDATE pages SET source = ?, page_at = ?, page_len = ?, structure_at = ?,"
                " structure_len = ?, chunks_at = ?, chunks_len = ?, lines_crc = ?,"
                " page_record = NULL, chunk_records = NULL, structure_record = NULL"
                f" WHERE canonical_url = ? AND {CHUNK_COUNT_SQL} = ?",
                ((source, p.page_at, p.page_len, p.structure_at, p.structure_len,
                  p.chunks_at, p.chunks_len, p.crc, url, chunks) for url, p, chunks in found))
            conn.execute("UPDATE pages SET "
                         + ", ".join(f"{column} = NULL" for column in POINTER_COLUMNS)
                         + " WHERE source IS NOT NULL AND source != ?", (source,))
            older = [Path(row[0]) for row in conn.execute(
                "SELECT run_dir FROM sources WHERE id != ?", (source,))]
            conn.execute("DELETE FROM sources WHERE id != ?", (source,))
            pointed = conn.execute("SELECT COUNT(*) FROM pages WHERE source = ?",
                                   (source,)).fetchone()[0]
        return int(pointed), older

    def source_dirs(self) -> list[Path]:
        """The run directories the rows point at (their lines are carried from there)."""
        return [Path(run_dir) for (run_dir,) in self._conn.execute(
            "SELECT run_dir FROM sources ORDER BY id")]

    def source(self, source: int) -> tuple[Path, dict[str, int]] | None:
        """The run directory of a source and the sizes of its files when indexed."""
        row = self._conn.execute("SELECT run_dir, sizes FROM sources WHERE id = ?",
                                 (source,)).fetchone()
        return None if row is None else (Path(row[0]), json.loads(row[1]))

    def copies(self) -> int:
        """Rows still holding a copy of their lines (stored by schema 3 or older)."""
        return int(self._conn.execute(
            "SELECT COUNT(*) FROM pages WHERE page_record IS NOT NULL"
            " OR chunk_records IS NOT NULL OR structure_record IS NOT NULL").fetchone()[0])

    def compact(self) -> None:
        """Give the space of dropped copies back to the file system (VACUUM)."""
        self._conn.execute("VACUUM")

    def free_share(self) -> float:
        """The share of the file's pages that are free (rows rewritten or deleted)."""
        free = int(self._conn.execute("PRAGMA freelist_count").fetchone()[0])
        return free / max(int(self._conn.execute("PRAGMA page_count").fetchone()[0]), 1)

    def unseen(self, run_id: str) -> list[StateRow]:
        """Known pages not seen in `run_id`, in URL order."""
        rows = self._conn.execute(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE last_seen_run IS NOT ? "
            "ORDER BY canonical_url", (run_id,)
        ).fetchall()
        return [StateRow.from_sql(row) for row in rows]

    def unseen_canonicals(self, run_id: str) -> list[str]:
        """Canonical URLs known in state but not seen in `run_id`."""
        return [row.canonical_url for row in self.unseen(run_id)]

    def forget(self, canonical_urls: Iterable[str]) -> int:
        """Delete pages (and their aliases) reported removed; returns how many existed."""
        urls = list(canonical_urls)
        with self._write() as conn:
            deleted = 0
            for url in urls:
                deleted += conn.execute(
                    "DELETE FROM pages WHERE canonical_url = ?", (url,)
                ).rowcount
                conn.execute("DELETE FROM url_aliases WHERE canonical_url = ?", (url,))
        return deleted

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0])

    # ---- runs -------------------------------------------------------------------------

    def begin_run(self, run_id: str | None = None) -> Run:
        """Start a run, or resume the unfinished run `run_id` (after a kill and JOBDIR
        resume). Resuming a finished run is refused."""
        if run_id is not None:
            existing = self.get_run(run_id)
            if existing is not None:
                if existing.finished_at is not None:
                    raise StateError(f"run {run_id} already finished; start a new run")
                return existing
        run = Run(run_id or _new_run_id(), _now(), None, None)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO runs (run_id, started_at) VALUES (?, ?)",
                (run.run_id, run.started_at),
            )
        return run

    def finish_run(self, run_id: str, *, complete: bool) -> Run:
        """Mark a run finished; `complete` is False for interrupted or limited crawls."""
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE runs SET finished_at = ?, complete = ? WHERE run_id = ?",
                (_now(), int(complete), run_id),
            )
        if not cursor.rowcount:
            raise StateError(f"unknown run {run_id}")
        run = self.get_run(run_id)
        assert run is not None
        return run

    def get_run(self, run_id: str) -> Run | None:
        row = self._conn.execute(
            "SELECT run_id, started_at, finished_at, complete FROM runs WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            return None
        return Run(row[0], row[1], row[2], None if row[3] is None else bool(row[3]))


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def _add_aliases(conn: sqlite3.Connection, canonical_url: str, urls: Iterable[str]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO url_aliases (url, canonical_url) VALUES (?, ?)",
        [(url, canonical_url) for url in urls if url != canonical_url],
    )
