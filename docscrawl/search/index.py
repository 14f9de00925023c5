"""The search index beside a crawl's output: `OUT/search.sqlite3`.

Built from chunks.jsonl and pages.jsonl on the first search (or `docscrawl index OUT`),
and brought up to date when the output changed: only chunks whose id appeared or went
away (the ids changes.jsonl lists; diffing them also covers several crawls between two
searches) and chunks whose inbound links changed are touched, so an unchanged re-crawl
costs one pass over the chunk ids.

The tables: `docscrawl.search.schema`.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from docscrawl.export.templates import TemplateLinks
from docscrawl.jsonl import UnreadableJsonl, jsonl_path, parse_object
from docscrawl.runs import published_dir
from docscrawl.search.chunklines import ChunkLine, LinesGone, read_chunks, scan_chunks
from docscrawl.search.chunkrows import Built, sync_chunks
from docscrawl.search.embed import (
    Embedder,
    EmbedderError,
    load_embedder,
    load_section_embedder,
)
from docscrawl.search.fields import (
    EMBED_CHARS,
    SiteAffixes,
    Vocab,
)
from docscrawl.search.pagetable import assign_vocabulary, index_pages
from docscrawl.search.schema import SCHEMA, TABLES, VIEWS, create_tables
from docscrawl.search.sections import LEAD_CHARS
from docscrawl.search.store import RowCodec, pack_dict, unpack_dict, unpack_rows
from docscrawl.search.vectors import (
    OLD_FILES,
    SECTION_FILES,
    VECTOR_FILES,
    StaleVectors,
    vector_paths,
    vectors_sound,
    write_vector_files,
)
from docscrawl.seekjsonl import SeekPoints, read_lines_at

logger = logging.getLogger(__name__)

INDEX_NAME = "search.sqlite3"


class IndexError_(ValueError):
    """A missing or malformed output directory, or a version the index does not hold."""


class SearchIndex:
    """One output directory's index; open with `SearchIndex.open(out)`."""

    def __init__(self, out: Path, db: sqlite3.Connection, embedder: Embedder | None,
                 sections: Embedder | None = None) -> None:
        self.out = out
        # the published run's directory, resolved once per refresh: the index never mixes
        # two runs' files, nor reads a run still being written (`docscrawl.runs`)
        self.files = published_dir(out)
        self.db = db
        self.embedder = embedder
        self.sections = sections if embedder is not None else None  # section vectors' model
        self.affixes = SiteAffixes()
        self.vocab: dict[str, Vocab] = {}   # chunk id -> its vocabulary, while refreshing
        self.identity: tuple[int, int] | None = None  # the index file's, when opened
        self.embedded = 0  # chunks embedded by this object (progress lines)
        self._codec: tuple[bytes, RowCodec] | None = None  # the `meta` table's, as stored
        self.fresh: dict[int, Any] = {}  # row id -> (int8 vector, scale) of a chunk written,
        # until the vector files are (`docscrawl.search.vectors`: they are the only copy)
        self.embedded_sections = 0  # section texts embedded by this object
        self.fresh_sections: dict[str, Any] = {}  # section key -> vector, likewise

    def replaced(self) -> bool:
        """True when the index file is gone or another one is at its path (`docscrawl
        index --rebuild`, the output directory made anew): this connection is stale."""
        return _identity(self.out / INDEX_NAME) != self.identity

    # -- opening ---------------------------------------------------------------
    @classmethod
    def open(cls, out: Path, *, embedder: str | None = None, update: bool = True,
             ) -> SearchIndex:
        """Open (building or updating as needed) the index of output directory `out`."""
        out = Path(out)
        if not (jsonl_path(out, "chunks.jsonl").is_file()
                and jsonl_path(out, "pages.jsonl").is_file()):
            raise IndexError_(f"{out}: not a crawl output directory "
                              "(no chunks.jsonl and pages.jsonl)")
        model = _optional_model(load_embedder, embedder, "semantic scores")
        sections = (_optional_model(load_section_embedder, embedder, "section vectors")
                    if model is not None else None)
        try:
            index = cls._connect(out, model, sections)
        except sqlite3.DatabaseError as exc:
            if _busy(exc):
                raise IndexError_(f"{out}/{INDEX_NAME} is locked by another process "
                                  "(an index build?); try again") from None
            logger.warning("docscrawl: %s/%s is unreadable (%s): rebuilding it",
                           out, INDEX_NAME, exc)
            remove_index(out)
            index = cls._connect(out, model, sections)
        if update:
            index.refresh()
        return index

    @classmethod
    def _connect(cls, out: Path, model: Embedder | None,
                 sections: Embedder | None = None) -> SearchIndex:
        """The index file opened and its schema made current (raises on a corrupt file)."""
        db = sqlite3.connect(out / INDEX_NAME, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            index = cls(out, db, model, sections)
            index.identity = _identity(out / INDEX_NAME)
            index._ensure_schema()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return index

    def close(self) -> None:
        self.db.close()

    def _ensure_schema(self) -> None:
        db = self.db
        found = db.execute("SELECT name FROM sqlite_master WHERE name='meta'").fetchone()
        if found:
            schema = self.meta("schema")
            embedder = self.meta("embedder")
            current = self._embedder_key()
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if schema == str(SCHEMA) and embedder == current and tables >= TABLES | VIEWS:
                return
        self._reset()

    def _reset(self) -> None:
        """The tables dropped and made anew, empty: the next refresh builds them. Every
        table and view goes, also those of an older schema that this one no longer has."""
        for kind in ("view", "table"):
            # a virtual table first: dropping it drops its shadow tables (`fts_data`...)
            for (name,) in self.db.execute(
                    "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE"
                    " 'sqlite_%' ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC", (kind,)).fetchall():
                self.db.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        create_tables(self.db)
        self.set_meta("schema", str(SCHEMA))
        self.set_meta("embedder", self._embedder_key())
        self._codec = None
        self.fresh = {}

    def _embedder_key(self) -> str:
        """The embedder and what it is fed: a change rebuilds the vectors."""
        if self.embedder is None:
            return "none"
        key = f"{self.embedder.key}/{EMBED_CHARS}"
        return f"{key}+{self.sections.key}/{LEAD_CHARS}" if self.sections else key

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    # -- keeping it up to date ---------------------------------------------------
    def _signature(self) -> str:
        """The published run and its files' identity: a run published, a file replaced,
        grown or touched changes it."""
        parts = [self.files.name]
        for name in ("chunks.jsonl", "pages.jsonl", "run.json"):
            try:
                stat = jsonl_path(self.files, name).stat()
                parts.append(f"{name}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}")
            except FileNotFoundError:
                parts.append(f"{name}:-")
        return "|".join(parts)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees one committed state of the index (a read transaction:
        with WAL, an update another process commits meanwhile is not seen, nor half of
        it: a search never ranks rows of one state and reads their lines in another)."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def refresh(self) -> Built:
        """Bring the index up to date with the output files; a no-op when unchanged."""
        self.files = published_dir(self.out)
        signature = self._signature()
        if self.meta("signature") == signature and vectors_sound(self):
            return Built(total=self.count())
        # the write lock first (waiting for another process's update), then look again:
        # that update may have been this one
        self.db.execute("BEGIN IMMEDIATE")
        if self.meta("signature") == signature and vectors_sound(self):
            self.db.execute("COMMIT")
            return Built(total=self.count())
        try:
            if not vectors_sound(self, whole=True):
                # deleted by hand, or written by an update that did not commit: the
                # vectors are in no other place, so every chunk is embedded again
                logger.warning("docscrawl: %s: the vector files are not this index's: "
                               "rebuilding it", self.out)
                self._reset()
            full = self.meta("signature") is None
            learned = index_pages(self)
            self.vocab = assign_vocabulary(self, learned)
            built = sync_chunks(self)
            built.full = full
            if self.embedder is not None and (built.added or built.deleted or built.relinked
                                              or full):
                write_vector_files(self)
            self.set_meta("signature", signature)
            self.db.execute("COMMIT")
        except StaleVectors as exc:  # cannot happen after `vectors_sound`; said, not hidden
            self._rollback()
            raise IndexError_(f"{self.out}: {exc}; run `docscrawl index --rebuild`") from None
        except UnreadableJsonl as exc:  # a truncated .jsonl.gz: one line naming it
            self._rollback()
            raise IndexError_(str(exc)) from None
        except BaseException:
            self._rollback()
            raise
        if built.full:
            self._give_back_free_pages()
        logger.info("docscrawl: search index %s: %d added, %d deleted, %d relinked",
                    self.out, built.added, built.deleted, built.relinked)
        return built

    def _give_back_free_pages(self) -> None:
        """After a full build: the pages of the tables a rebuild dropped (an index of an
        older schema rebuilt in place kept its old size: 720 KB against 410 KB built
        fresh on go-spec) and those FTS5's merges freed go back to the file system.
        Every table keys its rows explicitly, so VACUUM keeps the row ids the vector
        files hold."""
        if self.db.execute("PRAGMA freelist_count").fetchone()[0]:
            self.db.execute("VACUUM")  # written to the WAL; the checkpoint shrinks the file
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # (later if a reader holds it)

    def _rollback(self) -> None:
        self.db.execute("ROLLBACK")
        self._codec = None  # a dictionary learned in the transaction is not kept
        self.fresh = {}
        self.fresh_sections = {}

    def vector_files(self) -> dict[str, Path]:
        """The numpy files a search maps: row ids, version ids, vectors (`vectors`)."""
        return vector_paths(self.out, self.sections is not None)

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def chunk_lines(self, points: SeekPoints | None = None) -> Iterator[ChunkLine]:
        """chunks.jsonl's JSON object lines, with where each is (`chunklines.scan_chunks`)."""
        return scan_chunks(self.files, points or SeekPoints())

    def codec(self, sample: Iterable[str] = ()) -> RowCodec:
        """The compression of the stored FTS rows: the `meta` table's dictionary (read in
        the caller's transaction: another process's rebuild makes a new one), or, on an
        index's first build, one learned from `sample` (the first chunks' `rows_text`)."""
        row = self.db.execute("SELECT value FROM meta WHERE key='rows_dict'").fetchone()
        if row is None:  # kept as a compressed blob (`store.pack_dict`)
            codec = RowCodec.learn(sample)
            stored = pack_dict(codec.zdict)
            self.db.execute("INSERT OR REPLACE INTO meta VALUES('rows_dict', ?)", (stored,))
            self._codec = (stored, codec)
        elif self._codec is None or self._codec[0] != row[0]:
            self._codec = (bytes(row[0]), RowCodec(unpack_dict(bytes(row[0]))))
        return self._codec[1]

    def fts_values(self, rowid: int) -> tuple[list[tuple[str, ...]], str]:
        """What chunk `rowid` was indexed with: its FTS rows (one per window) and its
        `vocab` terms ("": none)."""
        row = self.db.execute("SELECT rows FROM chunks WHERE rowid=?", (rowid,)).fetchone()
        return unpack_rows(self.codec(), row[0]) if row else ([], "")

    def lines(self, rowids: list[int]) -> dict[int, str]:
        """The JSON lines of the chunks `rowids` (a search's results), read in chunks.jsonl
        where the index found them (`chunklines.read_chunks`)."""
        rows = self.db.execute(
            "SELECT rowid, line_at, line_crc, chunk_key FROM chunks WHERE rowid IN "
            f"({','.join('?' * len(rowids))})", rowids).fetchall()
        points = SeekPoints.from_json(json.loads(self.meta("chunk_members") or "[]"))
        try:
            return read_chunks(self.out, self.files, rows, points)
        except LinesGone as exc:
            raise IndexError_(str(exc)) from None

    # -- reading -------------------------------------------------------------------
    def versions(self) -> list[str]:
        return list(json.loads(self.meta("versions") or "[]"))

    def default_version(self) -> str | None:
        return self.meta("default_version") or None

    def default_aliases(self) -> list[str]:
        """Versions that are other names for the default (see `versions`)."""
        return list(json.loads(self.meta("default_aliases") or "[]"))

    def page_line(self, url: str) -> dict[str, Any] | None:
        """The pages.jsonl record of a page, by canonical or any observed URL. The line at
        the indexed offset must be that page's: when pages.jsonl changed since the index
        was brought up to date, it is brought up to date and the page read again."""
        base = url.split("#", 1)[0]
        for attempt in range(2):
            row = self.db.execute(
                "SELECT p.url, p.offset FROM aliases a JOIN pages p ON p.url=a.canonical "
                "WHERE a.url IN (?, ?, ?)",
                (base, base.rstrip("/"), base.rstrip("/") + "/")).fetchone()
            if row is None:
                return None
            if self.files != published_dir(self.out):  # a newer run was published since
                self.refresh()
                continue
            record = self._page_at(int(row[1]))
            if record is not None and record.get("canonical_url") == row[0]:
                return record
            if attempt == 0:
                self.refresh()
        raise IndexError_(f"{self.out}/pages.jsonl changed while it was read "
                          "(a crawl writing it?); try again")

    def _page_at(self, offset: int) -> dict[str, Any] | None:
        """The JSON object on the pages.jsonl line at byte `offset`, or None."""
        points = SeekPoints.from_json(json.loads(self.meta("pages_members") or "[]"))
        try:
            raw = read_lines_at(self.files / "pages.jsonl", [offset], points).get(offset)
        except OSError:
            return None
        record = parse_object(raw) if raw is not None else None
        if record is None:
            return None
        return TemplateLinks(self.files).join(record)  # its full link list


def _busy(exc: sqlite3.DatabaseError) -> bool:
    """A lock another connection holds: the file is sound, only busy."""
    return "locked" in str(exc) or "busy" in str(exc)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def index_path(out: Path) -> Path:
    """Where the index of output directory `out` lives."""
    return Path(out) / INDEX_NAME


def _optional_model(load: Callable[[str | None], Embedder | None], embedder: str | None,
                    without: str) -> Embedder | None:
    """A model `load` gives for `embedder`: one the user named and cannot have is an error;
    the default missing is a warning, and the search goes on `without` it."""
    try:
        return load(embedder)
    except EmbedderError as exc:
        if embedder:
            raise IndexError_(str(exc)) from None
        logger.warning("docscrawl: %s; searching without %s", exc, without)
        return None


def remove_index(out: Path) -> None:
    """Delete an index (its WAL files and vector files) so the next search rebuilds it."""
    paths = [Path(str(index_path(out)) + suffix) for suffix in ("", "-wal", "-shm")]
    paths += [Path(out) / f"search.{name}.npy"
              for name in VECTOR_FILES + SECTION_FILES + OLD_FILES]
    for path in paths:
        if path.exists():
            os.remove(path)
