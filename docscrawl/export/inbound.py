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
from typing import Any

from docscrawl.export.linkgraph import DEFAULT_CAP, LinkGraph
from docscrawl.jsonl import dumps_line, dumps_value, parse_object, replacing

logger = logging.getLogger(__name__)

_DECODER = json.JSONDecoder()


# Changes a chunk's metadata in place; True when it changed it.
MetaUpdate = Callable[[dict[str, Any]], bool]


def add_inbound_links(out_dir: Path, *, cap: int = DEFAULT_CAP,
                      update: MetaUpdate | None = None) -> int:
    """Give every chunk in `out_dir/chunks.jsonl` its `inbound_links` and
    `inbound_count`; returns the number of chunks with at least one inbound link.

    `update` changes a chunk's metadata first, in the same pass (the end of the crawl's
    version backfill, `crawl.finish`): one rewrite of chunks.jsonl instead of two, with
    the lines the two would have written."""
    pages, chunks = out_dir / "pages.jsonl", out_dir / "chunks.jsonl"
    if not pages.exists() or not chunks.exists():
        return 0
    linked = 0
    with LinkGraph(cap=cap) as graph:
        graph.add_run(out_dir)
        targets = graph.rank()
        graph.fragment_owners(chunks)

        def inbound(meta: dict[str, Any], chunk_id: str) -> tuple[list[dict[str, Any]], int]:
            nonlocal linked
            canonical = str(meta.get("canonical_url") or "")
            anchors = graph.chunk_anchors(meta) + graph.owned(canonical, chunk_id)
            links, count = graph.for_chunk(canonical, list(dict.fromkeys(anchors)))
            linked += count > 0
            return links, count

        with chunks.open(encoding="utf-8") as src, replacing(chunks) as dst:
            for line in src:
                updated = _spliced(line, inbound, update)
                if updated is None:  # not a chunk line as the crawl writes it: parsed whole
                    record = parse_object(line)
                    if record is None:  # torn: dropped, as `rewrite_jsonl` does
                        continue
                    meta = record.get("metadata")
                    if isinstance(meta, dict):
                        if update is not None:
                            update(meta)
                        meta["inbound_links"], meta["inbound_count"] = inbound(
                            meta, str(record.get("id")))
                    updated = dumps_line(record)
                dst.write(updated)
    logger.info("docscrawl: inbound links on %d chunks from %d link targets",
                linked, targets)
    return linked


_INBOUND = ',"inbound_links":'


def _spliced(line: str, inbound: Callable[[dict[str, Any], str], tuple[list[Any], int]],
             update: MetaUpdate | None = None) -> str | None:
    """A chunk line with its inbound links set (and its metadata `update`d), without
    parsing or encoding its text and Markdown (most of the line): the crawl writes `id`
    first and `metadata` last, and the inbound fields are the last of the metadata, or
    not there yet. The same line as parsing, updating and encoding it whole; None for any
    other line."""
    if not line.startswith('{"id":') or not line.endswith("}}\n"):
        return None
    at = line.rfind(',"metadata":{')
    if at < 0:
        return None
    try:
        meta, end = _DECODER.raw_decode(line, at + 12)
        chunk_id = _DECODER.raw_decode(line, 6)[0]
    except ValueError:
        return None
    if end != len(line) - 2 or not isinstance(meta, dict) or not meta:
        return None
    changed = update is not None and update(meta)
    keys = list(meta)
    if keys[-2:] == ["inbound_links", "inbound_count"] and len(keys) > 2:
        cut = line.rfind(_INBOUND)  # no link item holds the key: the metadata's own
    elif "inbound_links" not in meta and "inbound_count" not in meta:
        cut = len(line) - 3
    else:
        return None
    links, count = inbound(meta, str(chunk_id))
    if changed:  # the whole metadata encoded again, as `rewrite_jsonl` would
        meta["inbound_links"], meta["inbound_count"] = links, count
        return f"{line[:at + 12]}{dumps_value(meta)}}}\n"
    return (f"{line[:cut]}{_INBOUND}{dumps_value(links)},"
            f'"inbound_count":{dumps_value(count)}}}}}\n')
