"""The state database's schema: creating it, recognizing it, migrating older versions.

A file that is not ours (another SQLite database, a corrupt one, a newer schema) is
refused with `StateError`, never overwritten; an older schema is migrated in one
transaction, or left unchanged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from docscrawl.incremental.rows import deflate

SCHEMA_VERSION = 5
APPLICATION_ID = 0x44435354  # "DCST" in the SQLite header: marks the file as ours
# A new file's page size. A row is a few hundred bytes (pointers, hashes, chunk ids) and
# each of the 11 tables and indexes takes at least one page: with SQLite's 4 KB default a
# one-page site's state was 80 KB, mostly empty pages (go-spec: 34 KB with 1 KB pages).
PAGE_SIZE = 1024
SQLITE_MAGIC = b"SQLite format 3\x00"
TABLES: dict[int, frozenset[str]] = {  # our tables, per schema version
    0: frozenset({"docscrawl_schema", "pages"}),
    1: frozenset({"docscrawl_schema", "pages", "url_aliases", "runs"}),
    2: frozenset({"docscrawl_schema", "pages", "url_aliases", "runs"}),
    3: frozenset({"docscrawl_schema", "pages", "url_aliases", "runs"}),
    4: frozenset({"docscrawl_schema", "pages", "url_aliases", "runs", "sources"}),
    5: frozenset({"docscrawl_schema", "pages", "url_aliases", "runs", "sources"}),
}
_PAGES_V1 = """CREATE TABLE pages (
    canonical_url TEXT PRIMARY KEY,
    etag TEXT,
    last_modified TEXT,
    content_hash TEXT,
    body_hash TEXT,
    chunk_ids TEXT NOT NULL DEFAULT '[]',
    page_record TEXT,
    chunk_records TEXT,
    last_seen_run TEXT,
    updated_at TEXT
)"""
_ADDED_IN_V1 = (
    "CREATE INDEX pages_last_seen_run ON pages (last_seen_run)",
    "CREATE TABLE url_aliases (url TEXT PRIMARY KEY, canonical_url TEXT NOT NULL)",
    "CREATE INDEX url_aliases_canonical ON url_aliases (canonical_url)",
    "CREATE TABLE runs (run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT,"
    " complete INTEGER)",
)
# v2: the page's structure.jsonl line, so an unchanged page is carried over whole.
_ADDED_IN_V2 = ("ALTER TABLE pages ADD COLUMN structure_record TEXT",)
# v3: the links the page was found to have (head `<link rel>` included, as discovery
# follows them), so a carried-over page leads the re-crawl where the page itself would.
_ADDED_IN_V3 = ("ALTER TABLE pages ADD COLUMN discovery_links TEXT",)
# v4: the state is no second copy of the output. A page's lines are found in the published
# run that last wrote them (`sources`: its directory and file sizes), by byte offset and
# length, checked by a CRC-32 (`docscrawl.incremental.carry`); the record columns above are
# only read for rows stored by an older schema, until the next crawl's index replaces them.
# Discovery links are stored zlib-compressed (a BLOB; text in older rows).
# v5: chunk ids as raw digests (a BLOB; text in older rows): no new column.
_ADDED_IN_V4 = (
    "CREATE TABLE sources (id INTEGER PRIMARY KEY, run_dir TEXT NOT NULL UNIQUE,"
    " sizes TEXT NOT NULL, indexed_at TEXT)",
    *(f"ALTER TABLE pages ADD COLUMN {column} INTEGER" for column in (
        "source", "page_at", "page_len", "structure_at", "structure_len", "chunks_at",
        "chunks_len", "lines_crc")),
)
_SCHEMA = (
    "CREATE TABLE docscrawl_schema (version INTEGER NOT NULL, updated_at TEXT)",
    _PAGES_V1,
    *_ADDED_IN_V1,
    *_ADDED_IN_V2,
    *_ADDED_IN_V3,
    *_ADDED_IN_V4,
)


class StateError(Exception):
    """The state database cannot be used; the message says why and what to do."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _migrate_0_to_1(conn: sqlite3.Connection) -> None:
    """Schema 0 (prototype): pages without records or run marks, no aliases, no runs."""
    for column in ("body_hash", "page_record", "chunk_records", "last_seen_run", "updated_at"):
        conn.execute(f"ALTER TABLE pages ADD COLUMN {column} TEXT")
    conn.execute("UPDATE pages SET chunk_ids = '[]' WHERE chunk_ids IS NULL")
    conn.execute("ALTER TABLE docscrawl_schema ADD COLUMN updated_at TEXT")
    for statement in _ADDED_IN_V1:
        conn.execute(statement)


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    """Schema 1 kept no structure records: such rows are re-extracted once."""
    for statement in _ADDED_IN_V2:
        conn.execute(statement)


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    """Schema 2 kept only the page record's links (no head links): such rows are
    re-extracted once, so that the re-crawl follows every link the page has."""
    for statement in _ADDED_IN_V3:
        conn.execute(statement)


def _migrate_3_to_4(conn: sqlite3.Connection) -> None:
    """Schema 3 kept a full copy of every page's lines: rows keep it (an unchanged page
    is carried over from it once) until the next published crawl points them at its
    output and drops the copy."""
    for statement in _ADDED_IN_V4:
        conn.execute(statement)
    conn.create_function("docscrawl_pack", 1, deflate, deterministic=True)
    conn.execute("UPDATE pages SET discovery_links = docscrawl_pack(discovery_links)"
                 " WHERE typeof(discovery_links) = 'text'")


def _migrate_4_to_5(conn: sqlite3.Connection) -> None:
    """Schema 5 stores a page's chunk ids as raw digests (`rows.pack_chunk_ids`); rows of
    schema 4 keep their JSON text, read as before, until the page is written again. The
    version says an older docscrawl cannot read the new rows."""




MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    0: _migrate_0_to_1, 1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4,
    4: _migrate_4_to_5,
}


_ADVICE = "move it away, or pass another -a state=DIR; docscrawl never overwrites it"


def check_header(path: Path) -> None:
    if path.is_dir():
        raise StateError(f"state database {path} is a directory; {_ADVICE}")
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_MAGIC))
    if header != SQLITE_MAGIC:
        raise StateError(f"state database {path} is not a SQLite database (corrupt?); {_ADVICE}")


def check_and_migrate(conn: sqlite3.Connection, path: Path) -> None:
    try:
        check = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        tables = {
            row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise StateError(f"state database {path} is corrupt ({exc}); {_ADVICE}") from exc
    if check != ["ok"]:
        raise StateError(
            f"state database {path} is corrupt ({'; '.join(check[:3])}); {_ADVICE}"
        )
    if app_id not in (0, APPLICATION_ID):
        raise StateError(f"{path} belongs to another application (id {app_id}); {_ADVICE}")
    if not tables:
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # only a file still empty takes it
        with transaction(conn):
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute("INSERT INTO docscrawl_schema VALUES (?, ?)", (SCHEMA_VERSION, _now()))
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return
    version = _schema_version(conn, tables, path)
    if version > SCHEMA_VERSION:
        raise StateError(
            f"state database {path} has schema version {version}, newer than this docscrawl "
            f"understands ({SCHEMA_VERSION}): upgrade docscrawl, or pass another -a state=DIR"
        )
    if version < SCHEMA_VERSION:
        _migrate(conn, path, version)


def _schema_version(conn: sqlite3.Connection, tables: set[str], path: Path) -> int:
    known = frozenset().union(*TABLES.values())
    if "docscrawl_schema" not in tables or tables - known:
        foreign = ", ".join(sorted(tables - known)) or ", ".join(sorted(tables))
        raise StateError(
            f"{path} is not a docscrawl state database (tables: {foreign}); {_ADVICE}"
        )
    rows = conn.execute("SELECT version FROM docscrawl_schema").fetchall()
    if len(rows) != 1 or not isinstance(rows[0][0], int):
        raise StateError(f"state database {path} has an unreadable schema version; {_ADVICE}")
    version = rows[0][0]
    if version in TABLES and not TABLES[version] <= tables:
        missing = ", ".join(sorted(TABLES[version] - tables))
        raise StateError(f"state database {path} lacks tables ({missing}); {_ADVICE}")
    return version


def _migrate(conn: sqlite3.Connection, path: Path, version: int) -> None:
    """Run every migration from `version` to SCHEMA_VERSION in one transaction."""
    try:
        with transaction(conn):
            for step in range(version, SCHEMA_VERSION):
                migration = MIGRATIONS.get(step)
                if migration is None:
                    raise StateError(
                        f"state database {path} has schema version {version}, which cannot be "
                        f"migrated: delete {path} for a full re-crawl, or pass another "
                        "-a state=DIR"
                    )
                migration(conn)
            conn.execute("UPDATE docscrawl_schema SET version = ?, updated_at = ?",
                         (SCHEMA_VERSION, _now()))
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    except sqlite3.Error as exc:
        raise StateError(
            f"state database {path} could not be migrated from schema {version} to "
            f"{SCHEMA_VERSION} ({exc}); it was left unchanged: delete it for a full re-crawl, "
            "or pass another -a state=DIR"
        ) from exc


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
