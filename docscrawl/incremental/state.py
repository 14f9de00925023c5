"""Incremental crawl state: one SQLite database per state directory (see the README).

Per canonical URL: validators (ETag, Last-Modified), content hash, chunk ids, the last page
record and chunk records, and the run that last saw it; every observed URL maps to its
canonical URL. WAL journal, one transaction per write, so a `kill -9` leaves the database
consistent. A corrupt or foreign file is refused with `StateError`, never overwritten; an
older schema is migrated in one transaction (`docscrawl.incremental.schema`). Pure stdlib: no
Scrapy.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from docscrawl.incremental.schema import StateError, check_and_migrate, check_header, transaction

DB_NAME = "state.sqlite3"
_PAGE_COLUMNS = (
    "canonical_url, etag, last_modified, content_hash, body_hash, chunk_ids, page_record,"
    " chunk_records, last_seen_run, updated_at, structure_record, discovery_links"
)
# One link a page leads discovery to: (URL, discovery reason such as `sidebar`, navigation
# rank, `docscrawl.discovery.budget`).
FoundLink = tuple[str, str, int]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _jsonl(records: list[dict[str, Any]]) -> str:
    """One compact JSON object per line (JSON escapes every newline inside strings)."""
    return "".join(_dumps(record) + "\n" for record in records)


@dataclass(frozen=True, slots=True)
class StateRow:
    """What the state knows about one canonical URL.

    The last page record and chunk records are kept as stored text (compact JSON, and JSON
    Lines with one chunk record per line) so that carrying an unchanged page over can copy
    them to pages.jsonl / chunks.jsonl without parsing; `page_record` and `chunk_records`
    parse them on access.
    """

    canonical_url: str
    etag: str | None
    last_modified: str | None
    content_hash: str | None
    body_hash: str | None  # hash of the raw response body, when the caller stored one
    chunk_ids: list[str]
    page_record_json: str | None
    chunk_records_jsonl: str | None
    last_seen_run: str | None
    updated_at: str | None
    structure_record_json: str | None = None  # schema 2; None in rows stored before
    discovery_links_json: str | None = None  # schema 3; None in rows stored before

    @property
    def page_record(self) -> dict[str, Any] | None:
        return None if self.page_record_json is None else json.loads(self.page_record_json)

    @property
    def structure_record(self) -> dict[str, Any] | None:
        if self.structure_record_json is None:
            return None
        return json.loads(self.structure_record_json)

    @property
    def discovery_links(self) -> list[FoundLink] | None:
        """The links discovery followed from the page when it was parsed, head links
        included (`[url, reason, rank]`), or None for rows stored without them."""
        if self.discovery_links_json is None:
            return None
        return [(url, reason, rank) for url, reason, rank in json.loads(self.discovery_links_json)]

    @property
    def chunk_records(self) -> list[dict[str, Any]] | None:
        if self.chunk_records_jsonl is None:
            return None
        return [json.loads(line) for line in self.chunk_records_jsonl.split("\n") if line]

    @property
    def can_carry_over(self) -> bool:
        """True when the record, structure and chunks can be re-emitted without
        re-extraction (rows stored by older schemas lack some: such pages are fetched and
        extracted in full once)."""
        return (self.page_record_json is not None and self.chunk_records_jsonl is not None
                and self.structure_record_json is not None
                and self.discovery_links_json is not None)

    @classmethod
    def from_sql(cls, row: tuple[Any, ...]) -> StateRow:
        (url, etag, modified, digest, body, ids, record, chunks, seen, updated, structure,
         links) = row
        return cls(url, etag, modified, digest, body, json.loads(ids or "[]"), record, chunks,
                   seen, updated, structure, links)


@dataclass(frozen=True, slots=True)
class Run:
    """One crawl run; `complete` is None until it finishes."""

    run_id: str
    started_at: str
    finished_at: str | None
    complete: bool | None


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
            f"SELECT {_PAGE_COLUMNS} FROM pages WHERE canonical_url = ?", (canonical,)
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
        page_record: dict[str, Any] | None,
        chunk_records: list[dict[str, Any]] | None,
        observed_urls: Iterable[str] = (),
        body_hash: str | None = None,
        page_record_json: str | None = None,
        chunk_records_jsonl: str | None = None,
        structure_record_json: str | None = None,
        structure_record: dict[str, Any] | None = None,
        discovery_links: Iterable[FoundLink] | None = None,
        discovery_links_json: str | None = None,
    ) -> None:
        """Store a freshly extracted page, seen in `run_id`, in one transaction.

        `page_record_json` / `chunk_records_jsonl` / `structure_record_json`, when given,
        are the records already serialized (one JSON object per line) and stored as is;
        `structure_record` is the page's structure.jsonl record; `discovery_links` (or
        its stored text) the links discovery followed from the page."""
        if discovery_links_json is None and discovery_links is not None:
            discovery_links_json = _dumps([list(link) for link in discovery_links])
        if page_record_json is None and page_record is not None:
            page_record_json = _dumps(page_record)
        if chunk_records_jsonl is None and chunk_records is not None:
            chunk_records_jsonl = _jsonl(chunk_records)
        if structure_record_json is None and structure_record is not None:
            structure_record_json = _dumps(structure_record)
        with self._write() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO pages ({_PAGE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    canonical_url, etag, last_modified, content_hash, body_hash,
                    _dumps(list(chunk_ids)),
                    None if page_record_json is None else page_record_json.rstrip("\n"),
                    chunk_records_jsonl,
                    run_id, _now(),
                    None if structure_record_json is None else structure_record_json.rstrip("\n"),
                    discovery_links_json,
                ),
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
        links = (None if discovery_links is None
                 else _dumps([list(link) for link in discovery_links]))
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

    def unseen(self, run_id: str) -> list[StateRow]:
        """Known pages not seen in `run_id`, in URL order."""
        rows = self._conn.execute(
            f"SELECT {_PAGE_COLUMNS} FROM pages WHERE last_seen_run IS NOT ? "
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
