"""Inbound links per chunk, computed when a crawl ends (seed 000's chunk contract).

Each chunk gets the links that point at its page (no fragment) or at one of its sections
(a fragment naming a heading inside the chunk), from other pages (`export.linkgraph`),
capped at `cap`, and `inbound_count` counts them all. pages.jsonl is a full snapshot after
every run (unchanged pages are written again), so recomputing from it keeps the links
right on incremental re-crawls, also when only the linking page changed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from docscrawl.chunking.chunker import chunk_anchors
from docscrawl.export.linkgraph import DEFAULT_CAP, LinkGraph
from docscrawl.jsonl import IO_BUFFER, encode_line, encode_value, parse_object, replacing

logger = logging.getLogger(__name__)

_DECODER = json.JSONDecoder()


# Changes a chunk's metadata in place; True when it changed it.
MetaUpdate = Callable[[dict[str, Any]], bool]


def add_inbound_links(out_dir: Path, *, cap: int = DEFAULT_CAP,
                      update: MetaUpdate | None = None, graph: LinkGraph | None = None) -> int:
    """Give every chunk in `out_dir/chunks.jsonl` its `inbound_links` and
    `inbound_count`; returns the number of chunks with at least one inbound link.

    `update` changes a chunk's metadata first, in the same pass (the end of the crawl's
    version backfill, `crawl.finish`): one rewrite of chunks.jsonl instead of two, with
    the lines the two would have written. `graph`: the crawl's own, holding the links
    of the pages it wrote (`LinkGraph.feed`; closed here), instead of a new one."""
    pages, chunks = out_dir / "pages.jsonl", out_dir / "chunks.jsonl"
    if not pages.exists() or not chunks.exists():
        if graph is not None:
            graph.close()
        return 0
    graph = graph if graph is not None else LinkGraph()
    graph.cap = cap
    with graph:
        graph.add_run(out_dir)
        targets = graph.rank()
        try:
            linked = _by_page(graph, chunks, update)
        except _NotAsWritten:  # the graph's own pass over the chunks first, then the rewrite
            graph.fragment_owners(chunks)
            linked = _by_chunk(graph, chunks, update)
        fed = graph.fed
    logger.info("docscrawl: inbound links on %d chunks from %d link targets (links of %d"
                " pages kept from the crawl, the others read from pages.jsonl)",
                linked, targets, fed)
    return linked


class _NotAsWritten(Exception):
    """chunks.jsonl is not as the crawl writes it: a line to parse whole, or a page whose
    chunks are not one run of lines."""


def _by_page(graph: LinkGraph, chunks: Path, update: MetaUpdate | None) -> int:
    """The rewrite in one pass over chunks.jsonl as the crawl writes it (every line
    `_opened`, each page's chunks one after another): which chunk holds each linked
    section (`LinkGraph.page_owners`) is found from a page's chunks as they come, with
    the lines `fragment_owners` and `_by_chunk` write. Raises `_NotAsWritten` (the
    rewrite left undone) at the first line or page it cannot take."""
    graph.db.execute("CREATE TABLE IF NOT EXISTS rewritten (canonical TEXT PRIMARY KEY)")
    page: list[tuple[bytes, _Opened]] = []
    owners: dict[str, list[str]] = {}  # the page's: chunk id -> the linked fragments it holds
    inbound = _Inbound(graph, lambda _canonical, chunk_id: owners.get(chunk_id, []))

    def flush(dst: IO[bytes]) -> None:
        if not page:
            return
        owners.clear()
        owners.update(graph.page_owners(str(page[0][1][0]["canonical_url"]), [
            (list(meta.get("heading_path") or []), chunk_id) for _, (meta, _, chunk_id) in page]))
        for line, opened in page:
            dst.write(_spliced(line, opened, inbound, update) or _whole(line, inbound, update))
        page.clear()

    with chunks.open("rb", buffering=IO_BUFFER) as src, replacing(chunks, binary=True) as dst:
        for line in src:
            opened = _opened(line)
            canonical = opened[0].get("canonical_url") if opened else None
            if (opened is None or not isinstance(canonical, str) or not canonical
                    or line.find(b'"metadata":') != opened[1] + 1):  # as `_field` finds it
                raise _NotAsWritten
            if page and canonical != page[0][1][0]["canonical_url"]:
                flush(dst)
            if not page and graph.db.execute("INSERT OR IGNORE INTO rewritten VALUES (?)",
                                             (canonical,)).rowcount == 0:
                raise _NotAsWritten  # the page's chunks met before
            page.append((line, opened))
        flush(dst)
    return inbound.linked


def _by_chunk(graph: LinkGraph, chunks: Path, update: MetaUpdate | None) -> int:
    """The rewrite of any chunks.jsonl, after `LinkGraph.fragment_owners`."""
    inbound = _Inbound(graph, graph.owned)
    with chunks.open("rb", buffering=IO_BUFFER) as src, replacing(chunks, binary=True) as dst:
        for line in src:
            opened = _opened(line)
            updated = _spliced(line, opened, inbound, update) if opened else None
            dst.write(updated if updated is not None else _whole(line, inbound, update))
    return inbound.linked


class _Inbound:
    """A chunk's inbound links and their count (both rewrites), and how many chunks got
    any. `owned(canonical, chunk_id)`: the linked fragments the chunk holds beyond those
    it names (`LinkGraph.page_owners` / `owned`)."""

    def __init__(self, graph: LinkGraph, owned: Callable[[str, str], list[str]]) -> None:
        self.graph = graph
        self.owned = owned
        self.linked = 0
        self._encoded: tuple[list[dict[str, Any]], bytes] = ([], b"[]")

    def __call__(self, meta: dict[str, Any], chunk_id: str) -> tuple[list[dict[str, Any]], int]:
        canonical = str(meta.get("canonical_url") or "")
        anchors = chunk_anchors(meta) + self.owned(canonical, chunk_id)
        links, count = self.graph.for_chunk(canonical, list(dict.fromkeys(anchors)))
        self.linked += count > 0
        return links, count

    def encoded(self, links: list[dict[str, Any]]) -> bytes:
        """`links` as JSON (UTF-8). They are plain by construction (`linkrows._scalar`): no walk
        to find it out. A page's chunks mostly get the same list (`LinkGraph.for_chunk`
        gives it again): the last one's text is kept, by identity (the list is held, so
        its id is not reused)."""
        if links is not self._encoded[0]:
            self._encoded = (links, encode_value(links, plain=True))
        return self._encoded[1]


Inbound = Callable[[dict[str, Any], str], tuple[list[Any], int]]
# A chunk line's metadata, where it opens (`,"metadata":{`) and the chunk's id.
_Opened = tuple[dict[str, Any], int, str]


def _whole(line: bytes, inbound: Inbound, update: MetaUpdate | None) -> bytes:
    """A line not as the crawl writes it, parsed and encoded whole; a torn one: nothing
    (dropped, as `rewrite_jsonl` does)."""
    record = parse_object(line)
    if record is None:
        return b""
    meta = record.get("metadata")
    if isinstance(meta, dict):
        if update is not None:
            update(meta)
        meta["inbound_links"], meta["inbound_count"] = inbound(meta, str(record.get("id")))
    return encode_line(record)


_INBOUND = b',"inbound_links":'
ID_HEAD = 256  # bytes of a line decoded to read its id (a chunk id is 71 characters)


def _opened(line: bytes) -> _Opened | None:
    """A chunk line as the crawl writes it (`id` first, `metadata` last): its metadata,
    where the metadata opens and its id; None for any other line. Only the metadata and
    the id are decoded: the text and Markdown (most of the line) stay bytes."""
    if not line.startswith(b'{"id":') or not line.endswith(b"}}\n"):
        return None
    at = line.rfind(b',"metadata":{')
    if at < 0:
        return None
    try:
        tail = line[at + 12:].decode("utf-8")
        meta, end = _DECODER.raw_decode(tail)
        chunk_id = _leading_value(line)
    except ValueError:  # UnicodeDecodeError too
        return None
    if end != len(tail) - 2 or not isinstance(meta, dict) or not meta:
        return None
    return meta, at, str(chunk_id)


def _leading_value(line: bytes) -> Any:
    """The line's first value (its `id`), from its first `ID_HEAD` bytes, else the
    whole line (an id that long, or a character cut at the edge)."""
    try:
        return _DECODER.raw_decode(line[6:ID_HEAD].decode("utf-8"))[0]
    except ValueError:
        return _DECODER.raw_decode(line.decode("utf-8"), 6)[0]


def _spliced(line: bytes, opened: _Opened, inbound: _Inbound,
             update: MetaUpdate | None = None) -> bytes | None:
    """A chunk line with its inbound links set (and its metadata `update`d), without
    parsing or encoding its text and Markdown (most of the line): the inbound fields are
    the last of the metadata, or not there yet. The same line as parsing, updating and
    encoding it whole; None when the metadata's fields are laid out otherwise."""
    meta, at, chunk_id = opened
    changed = update is not None and update(meta)
    keys = list(meta)
    if keys[-2:] == ["inbound_links", "inbound_count"] and len(keys) > 2:
        cut = line.rfind(_INBOUND)  # no link item holds the key: the metadata's own
    elif "inbound_links" not in meta and "inbound_count" not in meta:
        cut = len(line) - 3
    else:
        return None
    links, count = inbound(meta, chunk_id)
    if changed:  # the whole metadata encoded again, as `rewrite_jsonl` would
        meta["inbound_links"], meta["inbound_count"] = links, count
        return b"%s%s}\n" % (line[:at + 12], encode_value(meta))
    counted = b"%d" % count if type(count) is int else encode_value(count)  # JSON's int
    return b'%s%s%s,"inbound_count":%s}}\n' % (line[:cut], _INBOUND, inbound.encoded(links),
                                                counted)
