"""Carrying an unchanged page over from the previous published output, not from a copy.

The state database keeps no copy of the lines a crawl writes. Once a run is published,
`index_output` reads its pages, structure and chunks files once and points each state row
at its page's lines (byte offset and length, and a CRC-32 of them, `LinePointer`). The
next crawl reads an unchanged page's lines back from that run (`PreviousOutput`), which
stays published, and readable, until that crawl publishes its own. Whatever a line holds
is copied as it is: the carry-over assumes no field but the few that name the page.

The run the state points at is pinned (`docscrawl.runs.pin`): a run published over it
without indexing it (an inventory crawl's) does not delete it; the next index releases
it. A published file compressed since (`NAME.gz`) is decompressed once into a scratch file
next to the state database. A run directory gone, or a file of another size, or a line
whose CRC does not match, is never read as the page: the page is fetched and extracted
again (one log line per source, never a silent wrong page).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import sqlite3
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from io import BufferedIOBase
from pathlib import Path
from typing import Any

from docscrawl.incremental.rows import LinePointer, StateRow
from docscrawl.incremental.state import StateStore
from docscrawl.jsonl import BadGzip
from docscrawl.runs import pin, pinned, release
from docscrawl.seekjsonl import scan_lines

logger = logging.getLogger(__name__)

PAGES, STRUCTURE, CHUNKS = "pages.jsonl", "structure.jsonl", "chunks.jsonl"
FILES = (PAGES, STRUCTURE, CHUNKS)
_HEAD = 16384  # bytes of a line read to find the fields that name its page
_DECODER = json.JSONDecoder()
CACHE_KB = 2048  # the indexing table's page cache: its whole memory


@dataclass(frozen=True, slots=True)
class CarriedLines:
    """A page's lines as the previous output holds them, each ending in a newline
    (`chunks` holds `chunk_count` lines)."""

    page: str
    structure: str
    chunks: str
    chunk_count: int

    def record(self) -> dict[str, Any]:
        """The page record (parsed once, for the few fields the crawl reads)."""
        value = json.loads(self.page)
        return value if isinstance(value, dict) else {}


def copied_lines(row: StateRow) -> CarriedLines | None:
    """The lines a row of an older schema holds itself (None when it holds none)."""
    if not row.has_copy:
        return None
    assert row.page_record_json is not None and row.chunk_records_jsonl is not None
    chunks = [line + "\n" for line in row.chunk_records_jsonl.split("\n") if line]
    return CarriedLines(row.page_record_json.rstrip("\n") + "\n",
                        (row.structure_record_json or "").rstrip("\n") + "\n",
                        "".join(chunks), len(chunks))


# ---- indexing a published run --------------------------------------------------------


def _lines(path: Path, sizes: dict[str, int]) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line) of every whole line of a run's file (`NAME` or `NAME.gz`); a
    torn last line is left out (it names no page the crawl finished). Once read to its
    end, `sizes[NAME]` is the file's uncompressed size (a .gz decompressed once). A
    damaged .gz raises `BadGzip` after the lines before the damage."""
    size = 0
    for at, line in scan_lines(path):
        size = at + len(line)
        if line.endswith(b"\n"):
            yield at, line
    sizes[path.name] = size


def _leading(line: bytes, keys: tuple[str, ...]) -> tuple[str, ...] | None:
    """The string values of `keys` opening a compact JSON line, in that order."""
    text = line[:_HEAD].decode("utf-8", "ignore")
    values: list[str] = []
    at = 1
    if not text.startswith("{"):
        return None
    try:
        for key in keys:
            name = f'"{key}":'
            if not text.startswith(name, at):
                return None
            value, at = _DECODER.raw_decode(text, at + len(name))
            if not isinstance(value, str):
                return None
            values.append(value)
            at += 1  # the comma
    except ValueError:
        return None
    return tuple(values)


class _Found:
    """Every page's lines while a run is indexed, in a private temporary SQLite file: a
    dict of them grew with the site (about 0.7 KB a page, 35 MB at 50,000 pages, at the
    end of the crawl). `crc` runs over a page's lines in file order; `carried` is 0 when
    its lines are not one run per file (it is then not carried)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("", isolation_level=None)  # "": deleted when closed
        for pragma in ("journal_mode = OFF", "synchronous = OFF", f"cache_size = -{CACHE_KB}"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.create_function("crc32", 2, zlib.crc32, deterministic=True)
        self._db.execute(
            "CREATE TABLE found (id TEXT UNIQUE NOT NULL, canonical TEXT NOT NULL,"
            " page_at INTEGER, page_len INTEGER, structure_at INTEGER DEFAULT 0,"
            " structure_len INTEGER DEFAULT 0, chunks_at INTEGER DEFAULT 0,"
            " chunks_len INTEGER DEFAULT 0, chunk_count INTEGER DEFAULT 0,"
            " crc INTEGER NOT NULL, carried INTEGER DEFAULT 1)")
        self._db.execute("BEGIN")

    def add_pages(self, rows: Iterable[tuple[str, str, int, int, int]]) -> None:
        """(page id, canonical URL, offset, length, CRC of the page line); a later line
        of the same id replaces an earlier one (in the earlier one's place)."""
        self._db.executemany(
            "INSERT INTO found (id, canonical, page_at, page_len, crc) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET canonical = excluded.canonical,"
            " page_at = excluded.page_at, page_len = excluded.page_len, crc = excluded.crc",
            rows)

    def add_structure(self, page_id: str, at: int, line: bytes) -> None:
        """A page's structure line; a second one makes the page not carried."""
        self._db.execute(
            "UPDATE found SET carried = carried AND structure_len = 0, structure_at = ?,"
            " structure_len = ?, crc = crc32(?, crc) WHERE id = ?",
            (at, len(line), line, page_id))

    def add_chunks(self, page_id: str, at: int, lines: bytes, count: int) -> None:
        """`count` consecutive chunk lines of one page at `at`. A page's chunks split by
        another page's lines are not one run: the page is not carried."""
        self._db.execute(
            "UPDATE found SET chunks_at = :at, chunks_len = :len,"
            " carried = carried AND chunk_count = 0, chunk_count = chunk_count + :count,"
            " crc = crc32(:lines, crc) WHERE id = :id",
            {"at": at, "len": len(lines), "count": count, "lines": lines, "id": page_id})

    def pointers(self) -> Iterator[tuple[str, LinePointer, int]]:
        """(canonical URL, pointer, chunk lines) of every carried page with a structure
        line, as `StateStore.set_lines` takes them."""
        for row in self._db.execute(
                "SELECT canonical, page_at, page_len, structure_at, structure_len, chunks_at,"
                " chunks_len, crc, chunk_count FROM found"
                " WHERE carried AND structure_len != 0 ORDER BY rowid"):
            yield row[0], LinePointer(0, *row[1:8]), row[8]

    def close(self) -> None:
        """Close the database (SQLite removes its file)."""
        self._db.close()


def index_output(store: StateStore, run_dir: Path) -> int:
    """Point the state's rows at their pages' lines in the published run `run_dir`; one
    sequential read of its three files. Returns how many rows point at it. A damaged
    `.jsonl.gz` among them: one warning naming it, and the state points at nothing of
    this run (its rows keep what they pointed at; the next crawl fetches the rest)."""
    run_dir = run_dir.resolve()
    found = _Found()
    sizes = dict.fromkeys(FILES, 0)
    try:
        unnamed = _add_pages(found, run_dir / PAGES, sizes)
        if unnamed:
            logger.warning("docscrawl: %d line(s) of %s do not open with the page's id and "
                           "canonical_url: those pages are extracted again by the next "
                           "crawl", unnamed, run_dir / PAGES)
        for at, line in _lines(run_dir / STRUCTURE, sizes):
            names = _leading(line, ("page_id",))
            if names:
                found.add_structure(names[0], at, line)
        _add_chunks(found, run_dir / CHUNKS, sizes)
        pin(run_dir)  # before the state points at it: a run it points at is always pinned
        pointed, older = store.set_lines(run_dir, sizes, found.pointers())
    except BadGzip as exc:
        logger.warning("docscrawl: %s: the next crawl does not carry this run's pages over",
                       exc)
        return 0
    finally:
        found.close()
    if not pointed:  # nothing to read here (an inventory crawl's own state): others' pins stay
        release(run_dir)
        return 0
    # The runs it pointed at before, and any other run of this output left pinned (by a
    # kill between the pin and the index, say), are read no more.
    for previous in {*older, *pinned(run_dir.parent.parent)} - {run_dir}:
        release(previous)
    return pointed


def _add_pages(found: _Found, path: Path, sizes: dict[str, int]) -> int:
    """Every page line of `path` into `found`; returns how many name no page."""
    unnamed = 0

    def rows() -> Iterator[tuple[str, str, int, int, int]]:
        nonlocal unnamed
        for at, line in _lines(path, sizes):
            names = _leading(line, ("id", "canonical_url"))
            if names is None:
                unnamed += 1
            else:
                yield names[0], names[1], at, len(line), zlib.crc32(line)

    found.add_pages(rows())
    return unnamed


def _add_chunks(found: _Found, path: Path, sizes: dict[str, int]) -> None:
    """Every chunk line of `path` into `found`, consecutive lines of one page together
    (a page no page line named is left out by the table)."""
    run_id, run_at, run_lines = "", 0, list[bytes]()
    for at, line in _lines(path, sizes):
        names = _leading(line, ("id", "page_id"))
        page_id = names[1] if names else ""
        if run_lines and page_id == run_id:
            run_lines.append(line)
            continue
        if run_lines:
            found.add_chunks(run_id, run_at, b"".join(run_lines), len(run_lines))
        run_id, run_at, run_lines = page_id, at, [line] if page_id else []
    if run_lines:
        found.add_chunks(run_id, run_at, b"".join(run_lines), len(run_lines))


class _Reader:
    """Random reads from one file of a run (the scratch copy of a compressed one)."""

    def __init__(self, run_dir: Path, name: str, scratch: Path) -> None:
        path = run_dir / name
        self._scratch: Path | None = None
        if not path.is_file() and path.with_name(name + ".gz").is_file():
            path = self._scratch = _decompressed(path.with_name(name + ".gz"), scratch)
        self._handle: BufferedIOBase | None = path.open("rb") if path.is_file() else None

    def size(self) -> int:
        return 0 if self._handle is None else os.fstat(self._handle.fileno()).st_size

    def read(self, at: int, length: int) -> bytes:
        if self._handle is None:
            return b""
        self._handle.seek(at)
        return self._handle.read(length)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._scratch is not None:
            self._scratch.unlink(missing_ok=True)
            self._scratch = None

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _decompressed(packed: Path, directory: Path) -> Path:
    """A scratch, uncompressed copy of a `.jsonl.gz` file (removed by its reader)."""
    fd, name = tempfile.mkstemp(prefix=".carry-", suffix=".jsonl", dir=directory)
    with os.fdopen(fd, "wb") as out, gzip.open(packed, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
    return Path(name)


# ---- reading lines back --------------------------------------------------------------


class PreviousOutput:
    """The published runs the state's rows point at, opened on first use."""

    def __init__(self, store: StateStore, scratch: Path) -> None:
        """`scratch`: where a compressed source is decompressed (the state directory)."""
        self._store = store
        self._scratch = scratch
        self._sources: dict[int, dict[str, _Reader] | None] = {}

    def usable(self, row: StateRow) -> bool:
        """True when the row's lines can be read: its source is there, unchanged in size
        (the CRC of the lines themselves is checked when they are read)."""
        return row.lines is not None and self._open(row.lines.source) is not None

    def lines_for(self, row: StateRow) -> CarriedLines | None:
        """The page's lines from the output that published them, or the copy an older
        schema kept; None when neither can be read as this page."""
        pointer = row.lines
        if pointer is None:
            return copied_lines(row)
        readers = self._open(pointer.source)
        if readers is None:
            return None
        page = readers[PAGES].read(pointer.page_at, pointer.page_len)
        structure = readers[STRUCTURE].read(pointer.structure_at, pointer.structure_len)
        chunks = readers[CHUNKS].read(pointer.chunks_at, pointer.chunks_len)
        crc = zlib.crc32(chunks, zlib.crc32(structure, zlib.crc32(page)))
        if crc != pointer.crc or not page.endswith(b"\n"):
            logger.warning("docscrawl: the lines of %s in the previous output changed since "
                           "it was published: the page is extracted again", row.canonical_url)
            return None
        return CarriedLines(page.decode(), structure.decode(), chunks.decode(),
                            chunks.count(b"\n"))

    def _open(self, source: int) -> dict[str, _Reader] | None:
        if source in self._sources:
            return self._sources[source]
        found = self._store.source(source)
        readers: dict[str, _Reader] | None = None
        if found is None:
            logger.warning("docscrawl: the state points at an output it no longer knows: "
                           "its pages are extracted again")
        elif not found[0].is_dir():
            logger.warning("docscrawl: the previous output %s is gone: its unchanged pages "
                           "are extracted again", found[0])
        else:
            readers = {name: _Reader(found[0], name, self._scratch) for name in FILES}
            sizes = {name: reader.size() for name, reader in readers.items()}
            if sizes != found[1]:
                logger.warning("docscrawl: the previous output %s changed since it was "
                               "published (%s): its unchanged pages are extracted again",
                               found[0], ", ".join(n for n in FILES if sizes[n] != found[1][n]))
                for reader in readers.values():
                    reader.close()
                readers = None
        self._sources[source] = readers
        return readers

    def close(self) -> None:
        for readers in self._sources.values():
            for reader in (readers or {}).values():
                reader.close()
        self._sources.clear()
