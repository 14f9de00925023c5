"""Fields read from a compact JSON line without parsing all of it, and the signatures an
index update compares: a chunk is re-indexed when its inbound links or its site
vocabulary changed, and only the lines that need it are parsed whole."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from docscrawl.search.fields import Vocab

_DECODER = json.JSONDecoder()


def raw_field(line: str, name: str) -> tuple[Any, str]:
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


def inbound_sig(line: str) -> str:
    """A short hash of a chunk line's inbound links (what the anchors field is made of)."""
    _, raw = raw_field(line, "inbound_links")
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
    value, _ = raw_field(line[:120], "id")
    return value if isinstance(value, str) else None


