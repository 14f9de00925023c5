"""How the search index stores what ranking does not read: compressed.

A chunk's FTS rows are read only to delete them from the contentless FTS tables (FTS5
`content=''` keeps no copy of the text it indexes; deleting a row takes the values it was
indexed with, and the output they came from is gone by then). They are stored in one
zlib stream per chunk (`pack_rows`) with a preset dictionary (`RowCodec`): the site's own
first chunks' rows, so that the words every chunk repeats cost a few bytes each. (A
chunk's JSON line is not stored: the index reads it from chunks.jsonl, `seekjsonl`.)

The dictionary is made once per index (the first build), kept in the `meta` table (a blob,
itself compressed, `pack_dict`) and used for every row after, so an incremental update
never needs to recompress.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

# zlib's window: a preset dictionary longer than this is not used
DICT_BYTES = 32 * 1024
LEVEL = 6


class RowCodec:
    """zlib with the index's preset dictionary, for one text at a time."""

    def __init__(self, zdict: bytes) -> None:
        self.zdict = zdict
        # a compressor with the dictionary loaded, copied per text (made at the first
        # `pack`: a search only unpacks): loading 32 KB of dictionary per chunk was half
        # of packing one (Flask's 833 chunks: 0.061 s of CPU against 0.035 s copied; the
        # same bytes)
        self._primed: Any = None

    @classmethod
    def learn(cls, texts: Iterable[str]) -> RowCodec:
        """A dictionary from the first chunks' texts (`rows_text`; their last DICT_BYTES
        bytes: zlib finds a match nearer the end of the dictionary cheaper)."""
        taken: list[bytes] = []
        size = 0
        for text in texts:
            raw = text.encode("utf-8")
            taken.append(raw)
            size += len(raw) + 1
            if size >= 2 * DICT_BYTES:
                break
        return cls(b"\n".join(taken)[-DICT_BYTES:])

    def pack(self, text: str) -> bytes:
        if self._primed is None:
            self._primed = zlib.compressobj(LEVEL, zdict=self.zdict) if self.zdict else \
                zlib.compressobj(LEVEL)
        packer = self._primed.copy()
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


def rows_text(rows: Sequence[tuple[str, ...]], vocab: str) -> str:
    """The FTS rows and vocabulary terms a chunk was indexed with, as one text."""
    return json.dumps([rows, vocab], ensure_ascii=False, separators=(",", ":"))


def unpack_rows(codec: RowCodec, blob: bytes) -> tuple[FtsRows, str]:
    rows, vocab = json.loads(codec.unpack(blob))
    return [tuple(row) for row in rows], str(vocab)
