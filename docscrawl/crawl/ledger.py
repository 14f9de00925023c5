"""Per-crawl sets and maps that grow with the site, kept in SQLite instead of memory.

A crawl of 50,000 pages must not hold 50,000 entries of everything it checks once per page:
which URLs have their terminal crawl-log event, which content hashes and canonical URLs are
taken, which pages have their changes.jsonl line, the page tracks not in use
(`docscrawl.discovery.trackstore`) and the end of the crawl's record updates. They live in one
scratch database (a temporary directory named after the process, `docscrawl.crawl.scratch`;
deleted at close). It is not durable and need not be: a resumed crawl rebuilds it from its
output files.

    ledger = Ledger.open()
    closed = ledger.url_set("closed_urls")
    closed.add(url); url in closed; closed |= more_urls
    groups = ledger.content_groups()
    ledger.close()
"""

from __future__ import annotations

import json
import marshal
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, MutableMapping, MutableSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docscrawl.crawl.scratch import make_scratch_dir

LEDGER_PREFIX = "docscrawl-ledger-"
CACHE_KIB = 4096  # SQLite's page cache: the ledger's whole memory


class Ledger:
    """One scratch SQLite database; hands out the tables below."""

    def __init__(self, directory: Path, *, temporary: bool) -> None:
        self.directory = directory
        self._temporary = temporary
        self._conn = sqlite3.connect(directory / "ledger.sqlite3", isolation_level=None)
        # One connection owns the file, and nothing needs to survive a crash: an exclusive
        # lock and one transaction for the whole crawl spare a lock, a header check and a
        # page write per statement (file-system calls that cost more than the statements).
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = MEMORY",
                       f"cache_size = -{CACHE_KIB}", "locking_mode = EXCLUSIVE"):
            self._conn.execute(f"PRAGMA {pragma}")
        self._conn.execute("BEGIN")

    @classmethod
    def open(cls, directory: Path | None = None) -> Ledger:
        """A ledger in `directory`, or in a new temporary directory deleted at close."""
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            return cls(directory, temporary=False)
        return cls(Path(make_scratch_dir(LEDGER_PREFIX)), temporary=True)

    def url_set(self, name: str) -> SqlSet:
        """A persistent set of strings in table `name` (created when missing)."""
        return SqlSet(self._conn, name)

    def content_groups(self) -> ContentGroups:
        """The (version, content hash) -> canonical URL map of deduplication."""
        return ContentGroups(self._conn)

    def track_table(self) -> TrackTable:
        """The page tracks not kept in memory (`docscrawl.discovery.trackstore`)."""
        return TrackTable(self._conn)

    def seen_table(self) -> SeenTable:
        """The seen URLs not kept in memory (`docscrawl.discovery.seenurls`)."""
        return SeenTable(self._conn)

    def json_map(self, name: str) -> JsonMap:
        """A persistent map of strings to JSON values in table `name` (created when missing)."""
        return JsonMap(self._conn, name)

    def close(self) -> None:
        """Close the database; a temporary ledger's directory is deleted."""
        if self._conn.in_transaction:
            self._conn.execute("COMMIT")
        self._conn.close()
        if self._temporary:
            shutil.rmtree(self.directory, ignore_errors=True)


class SqlSet(MutableSet[str]):
    """A set of strings in one table: a `MutableSet` (`in`, `add`, `discard`, `len`,
    iteration, `|=` in one statement)."""

    def __init__(self, conn: sqlite3.Connection, table: str) -> None:
        self._conn = _create_table(conn, table, "value TEXT PRIMARY KEY")
        self._has = f"SELECT 1 FROM {table} WHERE value = ?"
        self._add = f"INSERT OR IGNORE INTO {table} (value) VALUES (?)"
        self._discard = f"DELETE FROM {table} WHERE value = ?"
        self._count = f"SELECT count(*) FROM {table}"
        self._all = f"SELECT value FROM {table}"
        self._clear = f"DELETE FROM {table}"

    def __contains__(self, value: object) -> bool:
        return self._conn.execute(self._has, (value,)).fetchone() is not None

    def add(self, value: str) -> None:
        """Add one value (no-op when present)."""
        self._conn.execute(self._add, (value,))

    def __ior__(self, values: Iterable[str]) -> SqlSet:  # type: ignore[override,misc]
        """Add many values (any iterable, as `set.update` takes)."""
        self._conn.executemany(self._add, ((value,) for value in values))
        return self

    def discard(self, value: str) -> None:
        """Remove one value if present."""
        self._conn.execute(self._discard, (value,))

    def clear(self) -> None:
        """Remove every value, in one statement (`MutableSet.clear` pops one at a time)."""
        self._conn.execute(self._clear)

    def __len__(self) -> int:
        return int(self._conn.execute(self._count).fetchone()[0])

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self._conn.execute(self._all).fetchall())


class TrackTable:
    """Normalized URL -> a page track's frozen state (`docscrawl.discovery.trackstore.freeze`); rows
    keep the order they were first stored in."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        conn.execute("CREATE TABLE IF NOT EXISTS tracks "
                     "(key TEXT PRIMARY KEY, state BLOB NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS late_found (key TEXT NOT NULL, "
                     "seq INTEGER NOT NULL, pairs BLOB NOT NULL, "
                     "PRIMARY KEY (key, seq)) WITHOUT ROWID")

    def get(self, key: str) -> bytes | None:
        """The state stored for `key`, if any."""
        row = self._conn.execute("SELECT state FROM tracks WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put_many(self, rows: list[tuple[str, bytes]]) -> None:
        """Store (key, state) rows; a stored key keeps its place in the order."""
        self._conn.executemany(
            "INSERT INTO tracks (key, state) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET state = excluded.state", rows)

    def add_late(self, rows: list[tuple[str, int, list[tuple[str, str | None]]]]) -> None:
        """Store (key, sequence number, [(reason, source), ...]) rows: ways found not yet in
        their track, one row per key and batch (marshalled: a row per way found made the
        table the main cost of a large crawl's spilled tracks)."""
        self._conn.executemany(
            "INSERT INTO late_found (key, seq, pairs) VALUES (?, ?, ?)",
            [(key, seq, marshal.dumps(pairs)) for key, seq, pairs in rows])

    def late_for(self, key: str) -> Iterator[tuple[str, str | None]]:
        """The ways found stored for `key`, in order, read a batch at a time as they go (a
        page linked from every page has one per page); `drop_late` removes them once read."""
        for (pairs,) in self._conn.execute(
                "SELECT pairs FROM late_found WHERE key = ? ORDER BY seq", (key,)):
            yield from marshal.loads(pairs)

    def drop_late(self, key: str) -> None:
        """Remove the ways found stored for `key`."""
        self._conn.execute("DELETE FROM late_found WHERE key = ?", (key,))

    def late_keys(self, limit: int) -> list[str]:
        """Up to `limit` keys that have ways found stored for them."""
        return [row[0] for row in self._conn.execute(
            "SELECT DISTINCT key FROM late_found LIMIT ?", (limit,))]

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        """Every (key, state), in the order first stored, read as it goes."""
        return ((key, bytes(state)) for key, state in
                self._conn.execute("SELECT key, state FROM tracks ORDER BY rowid"))

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM tracks").fetchone()[0])


class SeenTable:
    """URL -> the key of its page track, or NULL (seen, no track); '' when the key is the
    URL itself."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        conn.execute("CREATE TABLE IF NOT EXISTS seen_urls (url TEXT PRIMARY KEY, key TEXT) "
                     "WITHOUT ROWID")

    def lookup(self, url: str) -> tuple[bool, str | None]:
        """(seen, key) for a URL."""
        row = self._conn.execute("SELECT key FROM seen_urls WHERE url = ?", (url,)).fetchone()
        if row is None:
            return False, None
        return True, (url if row[0] == "" else row[0])

    def put_many(self, rows: list[tuple[str, str | None]]) -> None:
        """Store (url, key) rows, replacing what a URL had."""
        self._conn.executemany(
            "INSERT OR REPLACE INTO seen_urls (url, key) VALUES (?, ?)",
            [(url, "" if key == url else key) for url, key in rows])

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM seen_urls").fetchone()[0])


class JsonMap(MutableMapping[str, Any]):
    """A map of strings to JSON values in one table: a `MutableMapping`."""

    def __init__(self, conn: sqlite3.Connection, table: str) -> None:
        self._conn = _create_table(conn, table, "key TEXT PRIMARY KEY, value TEXT NOT NULL")
        self._get = f"SELECT value FROM {table} WHERE key = ?"
        self._set = f"INSERT OR REPLACE INTO {table} (key, value) VALUES (?, ?)"
        self._delete = f"DELETE FROM {table} WHERE key = ?"
        self._count = f"SELECT count(*) FROM {table}"
        self._keys = f"SELECT key FROM {table}"

    def __getitem__(self, key: str) -> Any:
        row = self._conn.execute(self._get, (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return json.loads(row[0])

    def __setitem__(self, key: str, value: Any) -> None:
        self._conn.execute(self._set, (key, json.dumps(value, ensure_ascii=False)))

    def __delitem__(self, key: str) -> None:
        if self._conn.execute(self._delete, (key,)).rowcount == 0:
            raise KeyError(key)

    def __len__(self) -> int:
        return int(self._conn.execute(self._count).fetchone()[0])

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self._conn.execute(self._keys))


@dataclass(slots=True)
class ContentGroup:
    """The pages sharing one (version, content hash): one record."""

    canonical: str
    declared: bool  # the canonical came from a rel=canonical


GroupKey = tuple[str | None, str | None]  # (documentation version or None, content hash)


class ContentGroups:
    """(version, content hash) -> ContentGroup; `put` stores a new or changed group."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        conn.execute("CREATE TABLE IF NOT EXISTS content_groups (version TEXT NOT NULL, "
                     "hash TEXT NOT NULL, canonical TEXT NOT NULL, declared INTEGER NOT NULL, "
                     "PRIMARY KEY (version, hash)) WITHOUT ROWID")

    def get(self, key: GroupKey) -> ContentGroup | None:
        """The group of a (version, hash), if one was stored."""
        row = self._conn.execute(
            "SELECT canonical, declared FROM content_groups WHERE version = ? AND hash = ?",
            (_version_column(key[0]), key[1])).fetchone()
        return ContentGroup(row[0], bool(row[1])) if row is not None else None

    def put(self, key: GroupKey, group: ContentGroup) -> None:
        """Store a group (replacing the key's previous one)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO content_groups (version, hash, canonical, declared) "
            "VALUES (?, ?, ?, ?)",
            (_version_column(key[0]), key[1], group.canonical, int(group.declared)))

    def setdefault(self, key: GroupKey, group: ContentGroup) -> None:
        """Store a group unless the key has one."""
        self._conn.execute(
            "INSERT OR IGNORE INTO content_groups (version, hash, canonical, declared) "
            "VALUES (?, ?, ?, ?)",
            (_version_column(key[0]), key[1], group.canonical, int(group.declared)))

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM content_groups").fetchone()[0])


def _create_table(conn: sqlite3.Connection, table: str, columns: str) -> sqlite3.Connection:
    """Create a WITHOUT ROWID table named by the caller, once its name is checked."""
    if not table.isidentifier():
        raise ValueError(f"bad table name {table!r}")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns}) WITHOUT ROWID")
    return conn


def _version_column(version: str | None) -> str:
    """NULL is never equal in SQL: an unversioned page is stored under a marker."""
    return "\x00" if version is None else version
