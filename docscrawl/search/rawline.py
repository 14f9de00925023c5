"""What an index update reads of a chunk line without parsing all of it (`jsonfields.field`),
and the signatures it compares: a chunk is re-indexed when its inbound links or its site
vocabulary changed, and only the lines that need it are parsed whole."""

from __future__ import annotations

import hashlib

from docscrawl.jsonfields import field, field_at
from docscrawl.search.fields import Vocab


def inbound_sig(line: str) -> str:
    """A short hash of a chunk line's inbound links (what the anchors field is made of)."""
    _, start, end = field_at(line, "inbound_links")
    raw = line[start:end]
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest() if raw else ""


def vocab_sig(vocab: Vocab | None) -> str:
    """A short hash of a chunk's vocabulary: a change re-indexes the chunk on update."""
    if vocab is None or vocab == Vocab():
        return ""
    raw = f"{int(vocab.site_index)}{vocab.text}".encode()
    return "/" + hashlib.blake2b(raw, digest_size=8).hexdigest()


def chunk_key(chunk_id: str) -> int:
    """What the index keeps of a chunk's id: 8 bytes of its hash, as a signed integer
    (the id itself, 71 bytes, is in the chunk's stored line; two ids of one crawl share a
    key with odds of about n^2 / 2^65)."""
    return int.from_bytes(hashlib.blake2b(chunk_id.encode(), digest_size=8).digest(),
                          "big", signed=True)


def leading_id(line: str) -> str | None:
    value = field(line[:120], "id")
    return value if isinstance(value, str) else None


