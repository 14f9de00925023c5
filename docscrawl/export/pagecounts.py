"""How many pages reference each id, counted in a private temporary SQLite file.

The end of a crawl counts the pages of every templates.jsonl block (`TemplateWriter.finish`).
A dict of every block id grew with the site: 2.5 MB of Python memory at 10,000 generated
pages (20,198 blocks), five times that at 50,000. SQLite deletes the file at once (a kill
leaves nothing) and keeps `CACHE_KB` of it in memory.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

__all__ = ["PageCounts"]

CACHE_KB = 2048


class PageCounts:
    """id -> the number of times `ids` gave it; each count taken once (`take`)."""

    def __init__(self, ids: Iterable[str]) -> None:
        self._db = sqlite3.connect("", isolation_level=None)  # "": a private temp file
        for pragma in ("journal_mode = OFF", "synchronous = OFF", f"cache_size = -{CACHE_KB}"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.execute("CREATE TABLE counts (id TEXT PRIMARY KEY, n INTEGER NOT NULL) "
                         "WITHOUT ROWID")
        self._db.execute("BEGIN")
        self._db.executemany("INSERT INTO counts (id, n) VALUES (?, 1) "
                             "ON CONFLICT (id) DO UPDATE SET n = n + 1",
                             ((value,) for value in ids))

    def any(self) -> bool:
        """True when at least one id was counted."""
        return self._db.execute("SELECT 1 FROM counts LIMIT 1").fetchone() is not None

    def take(self, value: object) -> int:
        """The count of `value`, once: 0 afterwards (a block listed twice is kept once),
        and for anything never counted."""
        if not isinstance(value, str):
            return 0
        row = self._db.execute("DELETE FROM counts WHERE id = ? RETURNING n",
                               (value,)).fetchone()
        return int(row[0]) if row is not None else 0

    def close(self) -> None:
        """Close the database (SQLite removes its file)."""
        self._db.close()
