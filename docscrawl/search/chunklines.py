"""A chunk's JSON line, read where the index found it in chunks.jsonl (schema 15).

The index keeps no copy of the lines it returns (docs/performance.md, "Disk: the search
index"): for each chunk, the line's offset in the text of chunks.jsonl and its CRC-32
(`scan_chunks`), and the file's gzip member starts (`seekjsonl`). A line read back is
checked against its CRC: one that is not there as indexed (a crawl published a new run
since the index was brought up to date, the file edited by hand) is looked for by its
chunk's id in the published chunks.jsonl, so a search returns the chunk's current line or
one clear error, never the text of whatever line is at the old offset now.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from docscrawl.jsonl import UnreadableJsonl, parse_object, read_raw_lines
from docscrawl.runs import published_dir
from docscrawl.search.rawline import chunk_key, leading_id
from docscrawl.seekjsonl import SeekPoints, read_lines_at, scan_lines


class ChunkLine(NamedTuple):
    """A line of chunks.jsonl: its offset in the text, its CRC-32, the line."""
    at: int
    crc: int
    text: str


class LinesGone(ValueError):
    """Lines a search found that the published chunks.jsonl no longer holds (one line)."""


def scan_chunks(files: Path, points: SeekPoints) -> Iterator[ChunkLine]:
    """The lines of `files`/chunks.jsonl that are JSON objects, with their offsets and
    CRCs; where the members of a .gz start go to `points`."""
    for at, raw in scan_lines(files / "chunks.jsonl", points):
        raw = raw.rstrip(b"\n")
        line = raw.decode("utf-8", "replace")
        if line.startswith("{") and line.rstrip().endswith("}"):
            yield ChunkLine(at, zlib.crc32(raw), line)


def read_chunks(out: Path, files: Path, rows: list[tuple[int, int, int, int]],
                points: SeekPoints) -> dict[int, str]:
    """The lines of `rows` (row id, offset, CRC, chunk key) read in `files`/chunks.jsonl;
    those not there as indexed, found by key in `out`'s published chunks.jsonl."""
    try:
        found = read_lines_at(files / "chunks.jsonl", [row[1] for row in rows], points)
    except OSError:  # the run read at the last refresh is gone
        found = {}
    lines: dict[int, str] = {}
    missing: dict[int, int] = {}  # chunk key -> row id
    for rowid, at, crc, key in rows:
        raw = found.get(at)
        if raw is not None and zlib.crc32(raw) == crc:
            lines[rowid] = raw.decode("utf-8", "replace")
        else:
            missing[key] = rowid
    if missing:
        lines.update(_by_key(published_dir(out) / "chunks.jsonl", missing))
    return lines


def _by_key(path: Path, missing: dict[int, int]) -> dict[int, str]:
    """The lines of the chunks whose keys `missing` names, by one pass over `path`."""
    lines: dict[int, str] = {}
    try:
        for raw in read_raw_lines(path):
            chunk_id = leading_id(raw[:120].decode("utf-8", "replace"))
            rowid = missing.get(chunk_key(chunk_id)) if chunk_id is not None else None
            if rowid is not None and parse_object(raw) is not None:
                lines[rowid] = raw.rstrip(b"\n").decode("utf-8", "replace")
    except (OSError, UnreadableJsonl) as exc:
        raise LinesGone(f"{path}: cannot be read ({exc})") from None
    if len(lines) < len(missing):
        raise LinesGone(f"{path} no longer holds {len(missing) - len(lines)} of the chunks "
                        "this search found (a crawl published a new run meanwhile?); "
                        "search again")
    return lines
