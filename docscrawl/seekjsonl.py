"""JSON Lines compressed (`compress_jsonl`, `-a compress=gzip`) and read back by offset,
from a plain file or a compressed one.

The search index does not keep a copy of the lines it returns: it keeps where each line is
in the published file (its offset in the uncompressed text, as `pages.offset` always was)
and reads it there. A plain file is a seek. A `.jsonl.gz` is written as a series of gzip
members (`write_members`: a new member at the first line end after every `MEMBER_BYTES`
of text), which gzip, zcat and Python's gzip read as one file; a reader that knows where
each member starts (`SeekPoints`, found by `scan_lines` while it reads the file anyway)
decompresses only the member holding a line. A file compressed in one member (by an older
docscrawl, or by hand) is read the same way, from its start: slower, never wrong.

Measured (docs/performance.md, "Disk: the search index"): members of 256 KB cost 2-3% of
the compressed bytes of chunks.jsonl (64 KB: 8-12%), and reading a line decompresses at
most 256 KB (about 1 ms).
"""

from __future__ import annotations

import bisect
import gzip
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from docscrawl.jsonl import GZIP_SUFFIX, IO_BUFFER, BadGzip, replacing, resolve_jsonl

GZIP_LEVEL = 6  # zlib's default: 9 costs about twice the CPU for 1-2% fewer bytes
MEMBER_BYTES = 256 * 1024
# the files whose lines the search index reads by offset: compressed in members
SEEKABLE = frozenset({"chunks.jsonl", "pages.jsonl"})
_BLOCK = 1 << 16


def compress_jsonl(path: Path) -> Path:
    """Replace a plain JSONL file with its gzip-compressed copy `path.gz` (written under a
    temporary name and renamed: a kill leaves the plain file, whole); returns the new path.
    The files the index reads lines of are written in members (`SEEKABLE`)."""
    target = path.with_name(path.name + GZIP_SUFFIX)
    member = MEMBER_BYTES if path.name in SEEKABLE else 1 << 62
    with path.open("rb", buffering=IO_BUFFER) as src, replacing(target, binary=True) as dst:
        write_members(src, dst, GZIP_LEVEL, member)
    path.unlink()
    return target


def write_members(src: BinaryIO, dst: BinaryIO, level: int,
                  member: int = MEMBER_BYTES) -> None:
    """`src`'s text gzip-compressed into `dst`, a new member at the first line end after
    each `member` bytes of text (a line is never split between two members; an empty
    text is one empty member)."""
    packer: zlib._Compress | None = None
    size = 0  # text in the current member
    ended = 0  # members written
    while block := src.read(1 << 20):
        while block:
            if packer is None:
                packer, size = _packer(level), 0
            end = block.find(b"\n", max(member - size - 1, 0)) \
                if size + len(block) >= member else -1
            if end < 0:
                dst.write(packer.compress(block))
                size += len(block)
                break
            dst.write(packer.compress(block[:end + 1]) + packer.flush())
            block, packer, ended = block[end + 1:], None, ended + 1
    if packer is not None or not ended:
        dst.write((packer or _packer(level)).flush())


def _packer(level: int) -> zlib._Compress:
    return zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: a gzip member, mtime 0


@dataclass
class SeekPoints:
    """Where a .gz file's members start: (offset in the text, offset in the file) pairs,
    the first (0, 0). Empty for a plain file."""

    starts: list[tuple[int, int]] = field(default_factory=list)

    def member(self, offset: int) -> tuple[int, int]:
        """The start of the member holding text offset `offset`."""
        at = bisect.bisect_right(self.starts, (offset, float("inf"))) - 1
        return self.starts[max(at, 0)] if self.starts else (0, 0)

    def to_json(self) -> list[list[int]]:
        return [list(pair) for pair in self.starts]

    @classmethod
    def from_json(cls, value: object) -> SeekPoints:
        pairs = value if isinstance(value, list) else []
        return cls([(int(p[0]), int(p[1])) for p in pairs
                    if isinstance(p, list) and len(p) == 2])


def scan_lines(path: Path, points: SeekPoints | None = None) -> Iterator[tuple[int, bytes]]:
    """Every line of a JSONL file (plain or .gz) with its offset in the text; a .gz's
    member starts are added to `points` as they are met (when given). A damaged gzip stream raises
    `BadGzip` after the lines before the damage; a missing file: nothing."""
    path = resolve_jsonl(path)
    if not path.is_file():
        return
    if not path.name.endswith(GZIP_SUFFIX):
        offset = 0
        with path.open("rb", buffering=IO_BUFFER) as handle:
            for raw in handle:
                yield offset, raw
                offset += len(raw)
        return
    text_at = 0
    lineno = 0
    pending = b""
    with path.open("rb") as handle:
        try:
            for member_at, data in _members(handle):
                if member_at is not None and points is not None:
                    points.starts.append((text_at + len(pending), member_at))
                pending += data
                lines = pending.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    yield text_at, line + b"\n"
                    text_at += len(line) + 1
                    lineno += 1
        except (EOFError, zlib.error) as exc:
            raise BadGzip(path, lineno, exc) from None
    if pending:
        yield text_at, pending


def _members(handle: BinaryIO) -> Iterator[tuple[int | None, bytes]]:
    """The decompressed text of a gzip file in pieces, each member's first piece with the
    member's offset in the file (the other pieces: None)."""
    file_at = 0
    data = handle.read(_BLOCK)
    while data:
        unpacker = zlib.decompressobj(31)
        start: int | None = file_at
        while True:
            text = unpacker.decompress(data)
            if text or unpacker.eof:
                yield start, text
                start = None
            if unpacker.eof:
                used = len(data) - len(unpacker.unused_data)
                file_at += used
                data = unpacker.unused_data or handle.read(_BLOCK)
                break
            file_at += len(data)
            data = handle.read(_BLOCK)
            if not data:
                raise EOFError("compressed file ended before the end-of-stream marker")
        while data and not data.strip(b"\0"):  # gzip's trailing zero padding
            file_at += len(data)
            data = handle.read(_BLOCK)


def read_lines_at(path: Path, offsets: Iterable[int], points: SeekPoints,
                  ) -> dict[int, bytes]:
    """The lines at text offsets `offsets` (without their newline), each member
    decompressed once up to the last line wanted in it. An offset past the end or a
    damaged member: left out (the caller checks what it got)."""
    path = resolve_jsonl(path)
    wanted = sorted(set(offsets))
    found: dict[int, bytes] = {}
    if not wanted:
        return found
    with path.open("rb") as handle:
        if not path.name.endswith(GZIP_SUFFIX):
            for offset in wanted:
                handle.seek(offset)
                found[offset] = handle.readline().rstrip(b"\n")
            return found
        groups: dict[tuple[int, int], list[int]] = {}
        for offset in wanted:
            groups.setdefault(points.member(offset), []).append(offset)
        for (text_at, file_at), group in groups.items():
            try:
                found.update(_member_lines(handle, file_at, [o - text_at for o in group],
                                           text_at))
            except (EOFError, zlib.error, gzip.BadGzipFile):
                continue
    return found


def _member_lines(handle: BinaryIO, file_at: int, wanted: list[int], base: int,
                  ) -> dict[int, bytes]:
    """Lines at offsets `wanted` (sorted, relative to the member's start) of the member
    at `file_at` (or of the members after it: a file in one member holds them all)."""
    handle.seek(file_at)
    text = bytearray()
    unpacker = zlib.decompressobj(31)
    last = wanted[-1]
    while text.find(b"\n", last) < 0:
        data = unpacker.unused_data or handle.read(_BLOCK)
        if unpacker.eof:  # the member ended: the lines may be in the next one
            unpacker = zlib.decompressobj(31)
        if not data:
            break
        text += unpacker.decompress(data)
    found = {}
    for offset in wanted:
        end = text.find(b"\n", offset)
        end = len(text) if end < 0 else end  # the last line may have no newline
        if end > offset and (offset == 0 or text[offset - 1:offset] == b"\n"):
            found[base + offset] = bytes(text[offset:end])
    return found
