"""What the incremental state holds, as values: a page's row (`StateRow`), where its lines
are in a published run (`LinePointer`), a run (`Run`), and the links discovery followed
from a page (`FoundLink`, stored compressed). The database is `docscrawl.incremental.state`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from docscrawl.jsonl import dumps_value

# The `pages` columns a `LinePointer` is read from, and every column a `StateRow` is.
POINTER_COLUMNS = ("source", "page_at", "page_len", "structure_at", "structure_len",
                   "chunks_at", "chunks_len", "lines_crc")
PAGE_COLUMNS = (
    "canonical_url, etag, last_modified, content_hash, body_hash, chunk_ids, page_record,"
    " chunk_records, last_seen_run, updated_at, structure_record, discovery_links, "
    + ", ".join(POINTER_COLUMNS)
)
# One link a page leads discovery to: (URL, discovery reason such as `sidebar`, navigation
# rank, `docscrawl.discovery.budget`).
FoundLink = tuple[str, str, int]
# Discovery links as stored: zlib-compressed JSON (bytes), or JSON text in older rows.
StoredLinks = bytes | str


def pack_links(links: Iterable[FoundLink]) -> bytes:
    """Discovery links as stored: a page's links repeat the site's navigation, which
    compresses about tenfold."""
    # the compact JSON `json.dumps` wrote, through the one encoder (orjson when installed):
    # a found link's types are plain (`jsonenc.dumps_value`)
    text = dumps_value(links if isinstance(links, list) else list(links), plain=True)
    return deflate(text)


# A page's links are a few KB: zlib's default 32 KB window and 8 memory level cost most of
# a `zlib.compress` in setting up its tables (78 us for 6 KB of links, 21 us with these, to
# the same 450 bytes); what repeats in them (the site's URL prefixes) is close together.
# `zlib.decompress` reads any window size the stream's header names.
DEFLATE_WINDOW_BITS = 13
DEFLATE_MEMORY_LEVEL = 5


def deflate(text: str) -> bytes:
    """`text` zlib-compressed (level 6) with a window sized to a page's links."""
    packer = zlib.compressobj(6, zlib.DEFLATED, DEFLATE_WINDOW_BITS, DEFLATE_MEMORY_LEVEL)
    return packer.compress(text.encode()) + packer.flush()


def unpack_links(stored: StoredLinks) -> list[FoundLink]:
    text = zlib.decompress(stored).decode() if isinstance(stored, bytes) else stored
    return [(url, reason, rank) for url, reason, rank in json.loads(text)]


# A page's chunk ids as stored (schema 5): each `sha256:` id as its 32 raw bytes, one
# BLOB (a one-page site of 269 chunks: 20 KB of JSON text before, 8.6 KB); a list with
# any other id, and rows of older schemas, as JSON text.
StoredChunkIds = bytes | str
_CHUNK_ID = re.compile(r"sha256:[0-9a-f]{64}")
_DIGEST = 32
# how many ids a stored `chunk_ids` column holds, in SQL
CHUNK_COUNT_SQL = (f"(CASE WHEN typeof(chunk_ids) = 'blob' THEN length(chunk_ids) / {_DIGEST}"
                   " ELSE json_array_length(chunk_ids) END)")


def pack_chunk_ids(ids: list[str]) -> StoredChunkIds:
    if ids and all(_CHUNK_ID.fullmatch(chunk_id) for chunk_id in ids):
        return b"".join(bytes.fromhex(chunk_id[7:]) for chunk_id in ids)
    return dumps_value(ids)


def unpack_chunk_ids(stored: StoredChunkIds | None) -> list[str]:
    if isinstance(stored, bytes):
        return ["sha256:" + stored[at:at + _DIGEST].hex()
                for at in range(0, len(stored), _DIGEST)]
    return list(json.loads(stored or "[]"))


@dataclass(frozen=True, slots=True)
class LinePointer:
    """Where a page's lines are in a published run (`source`, a row of `sources`): its
    pages.jsonl line, structure.jsonl line and chunks.jsonl lines (contiguous), each as a
    byte offset and length in the uncompressed file; `crc` is the CRC-32 of the three,
    in that order, so that a file changed since is never taken for the page."""

    source: int
    page_at: int
    page_len: int
    structure_at: int
    structure_len: int
    chunks_at: int
    chunks_len: int
    crc: int


@dataclass(frozen=True, slots=True)
class StateRow:
    """What the state knows about one canonical URL.

    `lines`: where the page's lines are in the output that last published it. Rows
    stored by schema 3 or older hold a copy of the lines instead (`page_record_json`,
    `chunk_records_jsonl`, `structure_record_json`), read until the next published crawl
    points them at its output.
    """

    canonical_url: str
    etag: str | None
    last_modified: str | None
    content_hash: str | None
    body_hash: str | None  # hash of the raw response body, when the caller stored one
    chunk_ids: list[str]
    page_record_json: str | None
    chunk_records_jsonl: str | None
    last_seen_run: str | None
    updated_at: str | None
    structure_record_json: str | None = None  # schema 2 and 3 only
    discovery_links_stored: StoredLinks | None = None  # schema 3; None in rows before
    lines: LinePointer | None = None  # schema 4

    @property
    def discovery_links(self) -> list[FoundLink] | None:
        """The links discovery followed from the page when it was parsed, head links
        included (`[url, reason, rank]`), or None for rows stored without them."""
        if self.discovery_links_stored is None:
            return None
        return unpack_links(self.discovery_links_stored)

    @property
    def has_copy(self) -> bool:
        """A row of an older schema holding its page's lines itself."""
        return (self.page_record_json is not None and self.chunk_records_jsonl is not None
                and self.structure_record_json is not None)

    @property
    def can_carry_over(self) -> bool:
        """True when the page's lines can be written again without re-extraction, and its
        links followed (rows of older schemas lack some: such pages are fetched and
        extracted in full once)."""
        return (self.lines is not None or self.has_copy) and (
            self.discovery_links_stored is not None)

    @classmethod
    def from_sql(cls, row: tuple[Any, ...]) -> StateRow:
        (url, etag, modified, digest, body, ids, record, chunks, seen, updated, structure,
         links, *pointer) = row
        lines = None if pointer[0] is None or None in pointer else LinePointer(*pointer)
        return cls(url, etag, modified, digest, body, unpack_chunk_ids(ids), record, chunks,
                   seen, updated, structure, links, lines)


@dataclass(frozen=True, slots=True)
class Run:
    """One crawl run; `complete` is None until it finishes."""

    run_id: str
    started_at: str
    finished_at: str | None
    complete: bool | None
