"""The search index beside a crawl's output: `OUT/search.sqlite3`.

Built from chunks.jsonl and pages.jsonl on the first search (or `docscrawl index OUT`),
and brought up to date when the output changed: only chunks whose id appeared or went
away (the ids changes.jsonl lists; diffing them also covers several crawls between two
searches) and chunks whose inbound links changed are touched, so an unchanged re-crawl
costs one pass over the chunk ids.

Tables: `chunks` (one row per chunk: its JSON line and FTS rows, compressed (`store`),
version, page, flags, vector),
`pages` (canonical URL, byte offset of its line in pages.jsonl, aggregate_of),
`aliases` (observed URL -> canonical), `fts` (FTS5 over code-aware terms: version token,
title, heading path and breadcrumbs, inbound anchor text, body; one row per
window of a long chunk, rowid = chunk rowid * WINDOW_SLOTS + window), `vocab` (FTS5: what
the site's indexes and summary tables call a chunk, `sitevocab`; rowid = chunk rowid; a
table of its own so its words do not change the rarity of the chunks' own words) and
`meta`. Both FTS tables are contentless (`content=''`): ranking reads only their index,
and a chunk's text is read from its compressed line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docscrawl.export.templates import TemplateLinks
from docscrawl.jsonl import (
    UnreadableJsonl,
    jsonl_path,
    open_jsonl,
    read_raw_lines,
    replacing,
)
from docscrawl.runs import published_dir
from docscrawl.search.embed import (
    Embedder,
    EmbedderError,
    load_embedder,
    load_section_embedder,
)
from docscrawl.search.fields import (
    EMBED_CHARS,
    WINDOW_SLOTS,
    SiteAffixes,
    Vocab,
    index_fields,
)
from docscrawl.search.sections import LEAD_CHARS, section_text, starts_section, text_sig
from docscrawl.search.sitevocab import SiteVocabulary
from docscrawl.search.store import LineCodec, pack_chunk, unpack_line, unpack_rows
from docscrawl.search.versions import choose_default, default_aliases
from docscrawl.search.vocabassign import ChunkView, assign
from docscrawl.search.vocabread import might_hold

logger = logging.getLogger(__name__)

INDEX_NAME = "search.sqlite3"
SCHEMA = 12  # 11: lines compressed, FTS contentless (docs/performance.md, the search index);
# 12: Javadoc's index-all read as an index (its entries never answers)
BATCH = 512
# bm25 weights per FTS column: version token, title, headings, anchors, body.
BM25_WEIGHTS = (0.0, 2.0, 3.0, 1.5, 1.0)
_DECODER = json.JSONDecoder()
_TABLES = frozenset({"fts", "vocab", "chunks", "pages", "aliases", "sections", "meta"})
VECTOR_FILES = ("rowids", "versions", "coarse", "full")
SECTION_FILES = ("sections", "chunksec", "secfirst")  # see `docscrawl.search.sections`


class IndexError_(ValueError):
    """A missing or malformed output directory, or a version the index does not hold."""


def _raw_field(line: str, name: str) -> tuple[Any, str]:
    """A key's value decoded alone from a compact JSON line, and its raw text."""
    at = line.find(f'"{name}":')
    if at < 0:
        return None, ""
    start = at + len(name) + 3
    while line[start:start + 1] in (" ", "\t"):
        start += 1
    try:
        value, end = _DECODER.raw_decode(line, start)
    except ValueError:
        return None, ""
    return value, line[start:end]


def _inbound_sig(line: str) -> str:
    """A short hash of a chunk line's inbound links (what the anchors field is made of)."""
    _, raw = _raw_field(line, "inbound_links")
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest() if raw else ""


def _vocab_sig(vocab: Vocab | None) -> str:
    """A short hash of a chunk's vocabulary: a change re-indexes the chunk on update."""
    if vocab is None or vocab == Vocab():
        return ""
    raw = f"{int(vocab.site_index)}{vocab.text}".encode()
    return "/" + hashlib.blake2b(raw, digest_size=8).hexdigest()


def _chunk_anchors(meta: dict[str, Any]) -> list[str]:
    """Anchors of the sections a chunk holds: its own and its listed sections'."""
    source = str(meta.get("source_url") or "")
    found = [str(meta.get("anchor") or (source.split("#", 1)[1] if "#" in source else ""))]
    found += [str(s.get("anchor")) for s in meta.get("sections") or ()
              if isinstance(s, dict) and s.get("anchor")]
    return [a for a in found if a]


def _leading_id(line: str) -> str | None:
    value, _ = _raw_field(line[:120], "id")
    return value if isinstance(value, str) else None


@dataclass
class Built:
    """What a build or update did."""
    added: int = 0
    deleted: int = 0
    relinked: int = 0
    total: int = 0
    full: bool = False


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
        self._codec: tuple[str, LineCodec] | None = None  # the `meta` table's, as stored
        self.embedded_sections = 0  # section texts embedded by this object

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
        try:
            model = load_embedder(embedder)
        except EmbedderError as exc:
            if embedder:
                raise IndexError_(str(exc)) from None
            logger.warning("docscrawl: %s; searching without semantic scores", exc)
            model = None
        try:
            sections = load_section_embedder(embedder) if model is not None else None
        except EmbedderError as exc:
            if embedder:
                raise IndexError_(str(exc)) from None
            logger.warning("docscrawl: %s; searching without section vectors", exc)
            sections = None
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
            if schema == str(SCHEMA) and embedder == current and tables >= _TABLES:
                return
            for name in sorted(_TABLES):
                db.execute(f"DROP TABLE IF EXISTS {name}")
        db.executescript(f"""
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE chunks(rowid INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE,
                page_url TEXT, version TEXT, inbound_sig TEXT, line BLOB, vec BLOB,
                heading_terms TEXT, has_code INTEGER, region TEXT, section_key TEXT);
            CREATE INDEX chunks_page ON chunks(page_url);
            CREATE TABLE pages(url TEXT PRIMARY KEY, offset INTEGER, version TEXT,
                title TEXT, aggregate_of TEXT);
            CREATE TABLE aliases(url TEXT PRIMARY KEY, canonical TEXT);
            CREATE TABLE sections(section_key TEXT PRIMARY KEY, sig TEXT, vec BLOB);
            CREATE VIRTUAL TABLE fts USING fts5(ver, title, headings, anchors, body,
                content='', tokenize="porter unicode61 remove_diacritics 2");
            CREATE VIRTUAL TABLE vocab USING fts5(ver, terms,
                content='', tokenize="porter unicode61 remove_diacritics 2");
            INSERT INTO fts(fts, rank) VALUES('rank', 'bm25({", ".join(map(str, BM25_WEIGHTS))})');
        """)
        self.set_meta("schema", str(SCHEMA))
        self.set_meta("embedder", self._embedder_key())

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
        if self.meta("signature") == signature:
            if self.embedder is not None and not self._vector_files_exist():
                self._write_vector_files()  # deleted by hand, or an older docscrawl's index
            return Built(total=self.count())
        # the write lock first (waiting for another process's update), then look again:
        # that update may have been this one
        self.db.execute("BEGIN IMMEDIATE")
        if self.meta("signature") == signature:
            self.db.execute("COMMIT")
            return Built(total=self.count())
        full = self.meta("signature") is None
        try:
            learned = self._index_pages()
            self.vocab = self._assign_vocabulary(learned)
            built = self._sync_chunks()
            built.full = full
            if self.embedder is not None and (built.added or built.deleted or built.relinked
                                              or full or not self._vector_files_exist()):
                self._write_vector_files()
            self.set_meta("signature", signature)
            self.db.execute("COMMIT")
        except UnreadableJsonl as exc:  # a truncated .jsonl.gz: one line naming it
            self._rollback()
            raise IndexError_(str(exc)) from None
        except BaseException:
            self._rollback()
            raise
        logger.info("docscrawl: search index %s: %d added, %d deleted, %d relinked",
                    self.out, built.added, built.deleted, built.relinked)
        return built

    def _rollback(self) -> None:
        self.db.execute("ROLLBACK")
        self._codec = None  # a dictionary learned in the transaction is not kept

    def vector_files(self) -> dict[str, Path]:
        """The numpy files a search maps: row ids, version ids, coarse and full vectors."""
        names = VECTOR_FILES + (SECTION_FILES if self.sections is not None else ())
        return {name: self.out / f"search.{name}.npy" for name in names}

    def _vector_files_exist(self) -> bool:
        return all(path.exists() for path in self.vector_files().values())

    def _write_vector_files(self) -> None:
        """Rewrite the vector files from the chunks table (written to temporary names and
        renamed, so a search that maps the old ones keeps working)."""
        import numpy as np

        rows = self.db.execute("SELECT rowid, version, vec FROM chunks "
                               "WHERE vec IS NOT NULL ORDER BY rowid").fetchall()
        names = sorted({r[1] or "" for r in rows})
        position = {name: i for i, name in enumerate(names)}
        full = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float16)
                .reshape(len(rows), -1) if rows else np.zeros((0, 1), dtype=np.float16))
        arrays: dict[str, np.ndarray] = {"rowids": np.array([r[0] for r in rows], dtype=np.int64),
                  "versions": np.array([position[r[1] or ""] for r in rows], dtype=np.int32),
                  "coarse": np.ascontiguousarray(full[:, :self._coarse_dims(full)],
                                                 dtype=np.float32),
                  "full": full}
        if self.sections is not None:
            arrays.update(self._section_arrays([r[0] for r in rows]))
        for name, path in self.vector_files().items():
            with replacing(path, binary=True) as handle:
                np.save(handle, arrays[name])
        self.set_meta("vector_versions", json.dumps(names))

    def _section_arrays(self, rowids: list[int]) -> dict[str, Any]:
        """The section matrix (float32, one row per section), each chunk's section row
        (in `rowids` order) and each section's first chunk (a position in `rowids`)."""
        import numpy as np

        rows = self.db.execute("SELECT section_key, vec FROM sections "
                               "WHERE vec IS NOT NULL ORDER BY section_key").fetchall()
        at = {key: i for i, (key, _) in enumerate(rows)}
        matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16)
                  .reshape(len(rows), -1).astype(np.float32)
                  if rows else np.zeros((0, 1), dtype=np.float32))
        keys = dict(self.db.execute("SELECT rowid, section_key FROM chunks"))
        chunksec = np.array([at.get(keys.get(r), -1) for r in rowids], dtype=np.int32)
        first = np.zeros(len(rows) + 1, dtype=np.int32)  # 0 for a section no chunk holds
        for position, row in reversed(list(enumerate(chunksec.tolist()))):
            first[row] = position
        # a chunk whose section has no vector reads the last row, zeros: cosine 0; so
        # does a section no chunk holds (its `first` would be no chunk of it)
        matrix = np.vstack([matrix, np.zeros((1, matrix.shape[1]), dtype=np.float32)])
        chunksec[chunksec < 0] = len(rows)
        held = np.zeros(len(rows) + 1, dtype=bool)
        held[chunksec] = True
        matrix[~held] = 0.0
        return {"sections": matrix, "chunksec": chunksec, "secfirst": first}

    def _coarse_dims(self, full: Any) -> int:
        """How many leading dimensions the first search stage scans (see `Embedder`)."""
        dims = getattr(self.embedder, "coarse_dims", 0)
        return dims if 0 < dims < full.shape[1] else full.shape[1]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def _index_pages(self) -> SiteVocabulary:
        """Pages table (offsets for get_page, aggregate_of), the default version, and
        what the site's indexes and summary tables call its sections (`sitevocab`)."""
        db = self.db
        db.execute("DELETE FROM pages")
        db.execute("DELETE FROM aliases")
        versions: Counter[str] = Counter()
        titles: list[str] = []
        page_urls: list[tuple[str | None, list[str]]] = []
        seed = self._seed_url()
        seed_version: str | None = None
        vocabulary = SiteVocabulary()
        offset = 0
        for raw in read_raw_lines(self.files / "pages.jsonl"):
            line_offset, offset = offset, offset + len(raw)
            line = raw.decode("utf-8", "replace")
            url, _ = _raw_field(line, "canonical_url")
            if not isinstance(url, str):
                continue
            observed, _ = _raw_field(line, "observed_urls")
            version_obj, _ = _raw_field(line, "version")
            version = version_obj.get("value") if isinstance(version_obj, dict) else None
            title, _ = _raw_field(line, "title")
            aggregate, _ = _raw_field(line, "aggregate_of")
            db.execute("INSERT OR REPLACE INTO pages VALUES(?,?,?,?,?)",
                       (url, line_offset, version, title,
                        json.dumps(aggregate) if aggregate else None))
            for alias in [url, *(observed or [])]:
                db.execute("INSERT OR IGNORE INTO aliases VALUES(?,?)", (str(alias), url))
            if version:
                versions[str(version)] += 1
            if isinstance(title, str):
                titles.append(title)
            page_urls.append((str(version) if version else None,
                              [url, *map(str, observed or [])]))
            if seed and (url == seed or seed in (observed or ())):
                seed_version = version
            page = {"canonical_url": url, "observed_urls": observed or [], "title": title,
                    "main_heading": _raw_field(line, "main_heading")[0],
                    "headings": _raw_field(line, "headings")[0] or []}
            if might_hold(line):
                page["markdown"] = _raw_field(line, "markdown")[0]
                page["fragment_ids"] = _raw_field(line, "fragment_ids")[0]
            vocabulary.add_page(page)
        default = choose_default(seed_version, versions)
        self.set_meta("default_version", default or "")
        self.set_meta("default_aliases", json.dumps(sorted(default_aliases(page_urls, default))))
        self.set_meta("versions", json.dumps(sorted(versions)))
        self._learn_affixes(titles)
        return vocabulary

    def _assign_vocabulary(self, learned: SiteVocabulary) -> dict[str, Vocab]:
        """Chunk id -> what the site's indexes and summaries say of it, and whether it is
        part of an index itself. Only the chunks of pages something points at, or of
        index pages, are parsed (a page's chunks are consecutive in chunks.jsonl)."""
        terms = learned.finish()
        parts = learned.index_parts
        found: dict[str, Vocab] = {}
        page: str | None = None
        group: list[ChunkView] = []

        def flush() -> None:
            if page is not None and page in terms:
                anchors = learned.anchor_paths.get(page, {})
                labels = {f: learned.labels.get((page, f), set()) for f in terms[page]}
                for chunk_id, text in assign(group, terms[page], anchors, labels).items():
                    found[chunk_id] = Vocab(text, found.get(chunk_id, Vocab()).site_index)

        for line in self._chunk_lines():
            url, _ = _raw_field(line, "canonical_url")
            if url not in terms and url not in parts:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            meta = record.get("metadata") or {}
            if url != page:
                flush()
                page, group = url, []
            path = tuple(str(h) for h in meta.get("heading_path") or ())
            chunk_id = str(record.get("id"))
            group.append(ChunkView(chunk_id, path, _chunk_anchors(meta),
                                   str(record.get("markdown") or "")))
            if any(path[:len(p)] == p for p in parts.get(url, ())):
                found[chunk_id] = Vocab("", True)
        flush()
        return found

    def _learn_affixes(self, titles: list[str]) -> None:
        """The site's title affixes; when they changed, every chunk's fields are stale."""
        self.affixes = SiteAffixes.learn(titles)
        learned = json.dumps(sorted(self.affixes.segments))
        if self.meta("title_affixes") != learned:
            self.db.execute("INSERT INTO fts(fts) VALUES('delete-all')")
            self.db.execute("INSERT INTO vocab(vocab) VALUES('delete-all')")
            self.db.execute("DELETE FROM chunks")
            self.db.execute("DELETE FROM sections")
            self.set_meta("title_affixes", learned)

    def _seed_url(self) -> str | None:
        try:
            run = json.loads((self.files / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        site = run.get("site") if isinstance(run, dict) else None
        return site if isinstance(site, str) else None

    def _sync_chunks(self) -> Built:
        db = self.db
        known = dict(db.execute("SELECT chunk_id, inbound_sig FROM chunks"))
        built = Built()
        seen: set[str] = set()
        pending: list[tuple[str, str, bool]] = []  # (line, inbound signature, indexed before)
        for line in self._chunk_lines():
            chunk_id = _leading_id(line)
            if chunk_id is None or chunk_id in seen:
                continue
            seen.add(chunk_id)
            sig = _inbound_sig(line) + _vocab_sig(self.vocab.get(chunk_id))
            old = known.get(chunk_id)
            if old is None:
                pending.append((line, sig, False))
                built.added += 1
            elif old != sig:
                pending.append((line, sig, True))
                built.relinked += 1
            if len(pending) >= BATCH:
                self._write(pending)
                pending = []
        self._write(pending)
        gone = [cid for cid in known if cid not in seen]
        for cid in gone:
            self._delete(cid)
        if gone:
            db.execute("DELETE FROM sections WHERE section_key NOT IN "
                       "(SELECT section_key FROM chunks)")
        built.deleted = len(gone)
        built.total = len(seen)
        return built

    def _chunk_lines(self) -> Iterator[str]:
        for raw in read_raw_lines(self.files / "chunks.jsonl"):
            line = raw.decode("utf-8", "replace")
            if line.startswith("{") and line.rstrip().endswith("}"):
                yield line.rstrip("\n")

    def _progress(self, embedded: int) -> None:
        """A stderr line every `progress_every` chunks embedded, for a slow model's long
        build (wordllama names none: a whole site takes it seconds)."""
        every = getattr(self.embedder, "progress_every", 0)
        before, self.embedded = self.embedded, self.embedded + embedded
        if every and self.embedded // every > before // every:
            print(f"docscrawl: {self.out.name}: {self.embedded:,} chunks embedded "
                  f"({self.embedder.name if self.embedder else ''})", file=sys.stderr, flush=True)

    def _delete(self, chunk_id: str) -> None:
        """A chunk's row and its FTS rows (a contentless table deletes a row given the
        values it was indexed with: the ones `_write` kept)."""
        row = self.db.execute("SELECT rowid FROM chunks WHERE chunk_id=?",
                              (chunk_id,)).fetchone()
        if row is None:
            return
        rowid = row[0]
        rows, vocab = self.fts_values(rowid)
        first = rowid * WINDOW_SLOTS
        self.db.executemany(
            "INSERT INTO fts(fts, rowid, ver, title, headings, anchors, body) "
            "VALUES('delete',?,?,?,?,?,?)", [(first + i, *r) for i, r in enumerate(rows)])
        if vocab:
            self.db.execute("INSERT INTO vocab(vocab, rowid, ver, terms) "
                            "VALUES('delete',?,?,?)", (rowid, rows[0][0], vocab))
        self.db.execute("DELETE FROM chunks WHERE rowid=?", (rowid,))

    def codec(self) -> LineCodec:
        """The compression of the stored lines: the `meta` table's dictionary (read in
        the caller's transaction: another process's rebuild makes a new one), or, on an
        index's first build, one learned from chunks.jsonl's first lines."""
        stored = self.meta("line_dict")
        if stored is None:
            codec = LineCodec.learn(self._chunk_lines())
            stored = codec.dump()
            self.set_meta("line_dict", stored)
            self._codec = (stored, codec)
        elif self._codec is None or self._codec[0] != stored:
            self._codec = (stored, LineCodec.load(stored))
        return self._codec[1]

    def fts_values(self, rowid: int) -> tuple[list[tuple[str, ...]], str]:
        """What chunk `rowid` was indexed with: its FTS rows (one per window) and its
        `vocab` terms ("": none)."""
        row = self.db.execute("SELECT line FROM chunks WHERE rowid=?", (rowid,)).fetchone()
        return unpack_rows(self.codec(), row[0]) if row else ([], "")

    def lines(self, rowids: list[int]) -> dict[int, str]:
        """The JSON lines of the chunks `rowids` (a search's results)."""
        codec = self.codec()
        return {rowid: unpack_line(codec, blob) for rowid, blob in self.db.execute(
            f"SELECT rowid, line FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})",
            rowids)}

    def _write(self, pending: list[tuple[str, str, bool]]) -> None:
        if not pending:
            return
        records = []
        for line, sig, known in pending:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            vocab = self.vocab.get(str(record.get("id"))) or Vocab()
            records.append((record, line, sig, known, index_fields(record, self.affixes, vocab)))
        vectors = None
        if self.embedder is not None:
            vectors = self.embedder.embed([fields.embed for *_, fields in records])
            vectors = vectors.astype("float16")
            self._progress(len(records))
        if self.sections is not None:
            self._embed_sections(records)
        codec = self.codec()
        for i, (record, line, sig, known, fields) in enumerate(records):
            meta = record.get("metadata") or {}
            if known:
                self._delete(str(record.get("id")))
            blob = vectors[i].tobytes() if vectors is not None else None
            cur = self.db.execute(
                "INSERT INTO chunks(chunk_id, page_url, version, inbound_sig, line, vec, "
                "heading_terms, has_code, region, section_key) VALUES(?,?,?,?,?,?,?,?,?,?)",
                (record.get("id"), meta.get("canonical_url"), meta.get("version"), sig,
                 pack_chunk(codec, line, fields.rows, fields.vocab), blob, *fields.rank))
            first = int(cur.lastrowid or 0) * WINDOW_SLOTS
            self.db.executemany(
                "INSERT INTO fts(rowid, ver, title, headings, anchors, body) "
                "VALUES(?,?,?,?,?,?)",
                [(first + i, *row) for i, row in enumerate(fields.rows)])
            if fields.vocab:
                self.db.execute("INSERT INTO vocab(rowid, ver, terms) VALUES(?,?,?)",
                                (cur.lastrowid, fields.rows[0][0], fields.vocab))

    def _embed_sections(self, records: list[Any]) -> None:
        """Vectors of the sections these chunks belong to that have none, or whose text
        changed (their opening chunk is among them): one text per section (`sections`)."""
        texts: dict[str, tuple[str, bool]] = {}   # section key -> text, from its opener
        for record, *_, fields in records:
            meta = record.get("metadata") or {}
            markdown = str(record.get("markdown") or "")
            key, opener = fields.rank[3], starts_section(markdown)
            if key not in texts or (opener and not texts[key][1]):
                title = self.affixes.without(str(meta.get("title") or ""))
                texts[key] = (section_text(title, meta.get("heading_path") or [], markdown),
                              opener)
        marks = ",".join("?" * len(texts))
        known = dict(self.db.execute(
            f"SELECT section_key, sig FROM sections WHERE section_key IN ({marks})",
            list(texts)))
        wanted = [(key, text) for key, (text, opener) in texts.items()
                  if key not in known or (opener and known[key] != text_sig(text))]
        if not wanted:
            return
        model = self.sections
        assert model is not None  # called only when the index has section vectors
        vectors = model.embed([text for _, text in wanted]).astype("float16")
        self.db.executemany("INSERT OR REPLACE INTO sections VALUES(?,?,?)",
                            [(key, text_sig(text), vectors[i].tobytes())
                             for i, (key, text) in enumerate(wanted)])
        every = getattr(model, "progress_every", 0)
        before, self.embedded_sections = (self.embedded_sections,
                                          self.embedded_sections + len(wanted))
        if every and self.embedded_sections // every > before // every:
            print(f"docscrawl: {self.out.name}: {self.embedded_sections:,} sections embedded "
                  f"({model.name})", file=sys.stderr, flush=True)

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
        try:
            with open_jsonl(self.files / "pages.jsonl") as handle:
                handle.seek(offset)  # uncompressed offset: a .gz is read up to it
                record = json.loads(handle.readline())
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict):
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


def remove_index(out: Path) -> None:
    """Delete an index (its WAL files and vector files) so the next search rebuilds it."""
    paths = [Path(str(index_path(out)) + suffix) for suffix in ("", "-wal", "-shm")]
    paths += [Path(out) / f"search.{name}.npy" for name in VECTOR_FILES + SECTION_FILES]
    for path in paths:
        if path.exists():
            os.remove(path)
