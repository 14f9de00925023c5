"""How the search index stores what ranking does not read: compressed.

A chunk's JSON line is read only for the results a search returns, and its FTS rows
only to delete them from the contentless FTS tables (FTS5 `content=''` keeps no copy of
the text it indexes; deleting a row takes the values it was indexed with). Both are
stored in one zlib stream (`pack_chunk`) with a preset dictionary (`LineCodec`): the
site's own first lines, so that the field names, URLs and template words every chunk
line repeats cost a few bytes each instead of their length. One chunk line compresses
about 3.5x alone and 5-6x with the dictionary (four corpus sites, docs/performance.md).

The dictionary is made once per index (the first build), kept in the `meta` table (a blob,
itself compressed: 32 KB of JSON lines take 5-8 KB, `pack_dict`) and used for every row
after, so an incremental update never needs to recompress.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence

# zlib's window: a preset dictionary longer than this is not used
DICT_BYTES = 32 * 1024
LEVEL = 6


class LineCodec:
    """zlib with the index's preset dictionary, for one text at a time."""

    def __init__(self, zdict: bytes) -> None:
        self.zdict = zdict

    @classmethod
    def learn(cls, lines: Iterable[str]) -> LineCodec:
        """A dictionary from the first lines of chunks.jsonl (their last DICT_BYTES
        bytes: zlib finds a match nearer the end of the dictionary cheaper)."""
        taken: list[bytes] = []
        size = 0
        for line in lines:
            raw = line.encode("utf-8")
            taken.append(raw)
            size += len(raw) + 1
            if size >= 2 * DICT_BYTES:
                break
        return cls(b"\n".join(taken)[-DICT_BYTES:])

    def pack(self, text: str) -> bytes:
        packer = zlib.compressobj(LEVEL, zdict=self.zdict) if self.zdict else \
            zlib.compressobj(LEVEL)
        return packer.compress(text.encode("utf-8")) + packer.flush()

    def unpack(self, blob: bytes) -> str:
        unpacker = zlib.decompressobj(zdict=self.zdict) if self.zdict else \
            zlib.decompressobj()
        return (unpacker.decompress(blob) + unpacker.flush()).decode("utf-8")


def pack_dict(zdict: bytes) -> bytes:
    """The dictionary as the `meta` table keeps it (schema 13 kept it raw: 32 KB an index,
    more than a small site's other rows)."""
    return zlib.compress(zdict, 9)


def unpack_dict(stored: bytes) -> bytes:
    return zlib.decompress(stored)


FtsRows = list[tuple[str, ...]]


def pack_chunk(codec: LineCodec, line: str, rows: Sequence[tuple[str, ...]], vocab: str) -> bytes:
    """A chunk's JSON line, then (after a newline, which a JSON line never holds) the FTS
    rows and vocabulary terms it was indexed with, in one compressed blob: the rows repeat
    the line's text, which the one stream stores once."""
    extra = json.dumps([rows, vocab], ensure_ascii=False, separators=(",", ":"))
    return codec.pack(line + "\n" + extra)


def unpack_line(codec: LineCodec, blob: bytes) -> str:
    return codec.unpack(blob).split("\n", 1)[0]


def unpack_rows(codec: LineCodec, blob: bytes) -> tuple[FtsRows, str]:
    rows, vocab = json.loads(codec.unpack(blob).split("\n", 1)[1])
    return [tuple(row) for row in rows], str(vocab)
