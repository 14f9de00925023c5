"""Inbound links per chunk, computed when a crawl ends (seed 000's chunk contract).

Every page record lists the links it holds (`links`: url, text, region, container label).
Turned around, they say how the rest of the site refers to a page and to each of its
sections: anchor text written by someone else, the "see also" in a tutorial, the sidebar
entry. Each chunk gets the links that point at its page (no fragment) or at one of its
sections (a fragment naming a heading inside the chunk), from other pages, ranked by how
much the link says (prose and "see also" links before navigation), capped at `cap`, and
`inbound_count` counts them all.

pages.jsonl is a full snapshot after every run (unchanged pages are written again), so
recomputing from it keeps the links right on incremental re-crawls, also when only the
linking page changed. Two streaming passes: page identities and heading anchors, then
links; only a bounded best list per target is held.
"""

from __future__ import annotations

import heapq
import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from docscrawl.export.templates import TemplateLinks, join_links
from docscrawl.jsonl import rewrite_jsonl

logger = logging.getLogger(__name__)

DEFAULT_CAP = 8

# How much a link from each region says about its target: a link written into prose or a
# "see also" is chosen by an author for this target; navigation repeats on every page.
REGION_WEIGHT = {
    "main_content": 4.0, "related_content": 3.5, "table_of_contents": 2.0,
    "sidebar_navigation": 1.5, "breadcrumb": 1.0, "pagination": 1.0,
    "primary_navigation": 0.8, "footer_navigation": 0.5, "unknown": 1.0,
}
CONTAINER_WEIGHT = {"paragraph": 1.0, "card": 0.9, "table": 0.8, "list_item": 0.7,
                    "heading": 0.6, "other": 0.5, "navigation": 0.3}
_DECODER = json.JSONDecoder()
# The link fields the graph reads (`add_links`, `_add`, `link_score`; `position` orders a
# page's links when its template blocks are joined back).
GRAPH_LINK_FIELDS = ("url", "text", "region", "container", "container_label", "target",
                     "position")


@dataclass(slots=True)
class _Target:
    """The links seen to one page or one section: a count and the best `cap`."""
    count: int = 0
    best: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)


def _field(line: str, name: str) -> Any:
    """The value of a top-level key of a compact JSON line, decoded alone (a page line's
    Markdown is most of it and need not be parsed). None when absent."""
    at = line.find(f'"{name}":')
    if at < 0:
        return None
    start = at + len(name) + 3
    while line[start:start + 1] in (" ", "\t"):
        start += 1
    try:
        return _DECODER.raw_decode(line, start)[0]
    except ValueError:
        return None


def _page_lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("{") and line.endswith("}\n"):
                yield line


def link_score(link: dict[str, Any]) -> float:
    """Rank of one inbound link: region, then container, then labelled anchor text."""
    score = REGION_WEIGHT.get(str(link.get("region")), 1.0)
    score *= CONTAINER_WEIGHT.get(str(link.get("container")), 0.5)
    text = str(link.get("text") or "").strip()
    return score + (0.1 if link.get("container_label") else 0.0) + (0.05 if text else -1.0)


class LinkGraph:
    """The site's internal links, turned into inbound lists per page and section."""

    def __init__(self, *, cap: int = DEFAULT_CAP) -> None:
        self.cap = cap
        self.canonical: dict[str, str] = {}          # any observed URL -> canonical URL
        self.anchor_paths: dict[str, dict[str, list[str]]] = {}  # canonical -> anchor -> path
        self.targets: dict[tuple[str, str], _Target] = {}
        self._order = 0
        # One object per distinct string kept (anchor texts, fragments, regions repeat on
        # every page: a sidebar's entries), as a crawl's end holds them all at once.
        self._strings: dict[Any, Any] = {}

    def add_identities(self, pages: Path) -> None:
        """Pass 1: every URL a page was seen under, and its heading anchors."""
        for line in _page_lines(pages):
            canonical = _field(line, "canonical_url")
            if not isinstance(canonical, str):
                continue
            self.canonical[canonical] = canonical
            for url in _field(line, "observed_urls") or ():
                self.canonical.setdefault(urldefrag(str(url))[0], canonical)
            anchors = {str(h["anchor"]): list(h.get("path") or [])
                       for h in _field(line, "headings") or ()
                       if isinstance(h, dict) and h.get("anchor")}
            if anchors:
                self.anchor_paths[canonical] = anchors

    def add_links(self, pages: Path, templates: Mapping[str, list[dict[str, Any]]] | None = None
                  ) -> None:
        """Pass 2: every internal link from one page to another (its template blocks'
        links joined back from `templates`: `export.templates`)."""
        for line in _page_lines(pages):
            source = _field(line, "canonical_url")
            links = _field(line, "links")
            if not isinstance(source, str) or not isinstance(links, list):
                continue
            ids = _field(line, "template_ids") if templates is not None else None
            if ids and templates is not None:
                links = join_links({"links": links, "template_ids": ids,
                                    "template_offsets": _field(line, "template_offsets")},
                                   templates)
            for link in links:
                if isinstance(link, dict) and link.get("target") == "internal":
                    self._add(source, link)

    def _add(self, source: str, link: dict[str, Any]) -> None:
        url, fragment = urldefrag(str(link.get("url") or ""))
        target = self.canonical.get(url)
        if target is None or target == source:
            return
        shared = self._strings.setdefault
        key = (target, shared(fragment, fragment))
        entry = self.targets.get(key)
        if entry is None:
            entry = self.targets[key] = _Target()
        entry.count += 1
        text = " ".join(str(link.get("text") or "").split())
        text = shared(text, text)
        lowered = text.lower()
        dedup = (source, shared(lowered, lowered))
        if dedup in entry.seen:
            return
        if len(entry.seen) < 4 * self.cap:
            entry.seen.add(dedup)
        label, region = link.get("container_label"), link.get("region")
        item = {"url": source, "anchor_text": text,
                "container_label": shared(label, label) if isinstance(label, str) else label,
                "region": shared(region, region) if isinstance(region, str) else region}
        self._order += 1
        ranked = (link_score(link), -self._order, item)
        if len(entry.best) < self.cap:
            heapq.heappush(entry.best, ranked)
        elif ranked[:2] > entry.best[0][:2]:
            heapq.heapreplace(entry.best, ranked)

    def for_chunk(self, canonical: str, anchors: list[str]) -> tuple[list[dict[str, Any]], int]:
        """The ranked, capped inbound links of one chunk and the count of them all:
        links to its sections (anchors the chunk holds) first, then links to its page."""
        section_keys = [(canonical, a) for a in anchors if a]
        ranked: list[tuple[float, int, dict[str, Any]]] = []
        count = 0
        for bonus, key in [(1.0, k) for k in section_keys] + [(0.0, (canonical, ""))]:
            entry = self.targets.get(key)
            if entry is not None:
                count += entry.count
                ranked.extend((score + bonus, order, item) for score, order, item in entry.best)
        ranked.sort(key=lambda r: (r[0], r[1]), reverse=True)
        links, seen = [], set()
        for _score, _order, item in ranked:
            dedup = (item["url"], item["anchor_text"].lower())
            if dedup not in seen:
                seen.add(dedup)
                links.append(item)
        return links[: self.cap], count

    @staticmethod
    def chunk_anchors(metadata: dict[str, Any]) -> list[str]:
        """Anchors of the sections a chunk names: its own and its listed sections'."""
        found = []
        own = metadata.get("anchor") or urldefrag(str(metadata.get("source_url") or ""))[1]
        if own:
            found.append(own)
        found += [str(s.get("anchor")) for s in metadata.get("sections") or ()
                  if isinstance(s, dict) and s.get("anchor")]
        return found


def _section_owner(chunks: list[tuple[list[str], str]], path: list[str]) -> int | None:
    """Index of the chunk whose heading path is the longest prefix of `path`."""
    best, best_len = None, -1
    for index, (heading_path, _) in enumerate(chunks):
        n = len(heading_path)
        if n > best_len and path[:n] == heading_path:
            best, best_len = index, n
    return best


def add_inbound_links(out_dir: Path, *, cap: int = DEFAULT_CAP) -> int:
    """Give every chunk in `out_dir/chunks.jsonl` its `inbound_links` and
    `inbound_count`; returns the number of chunks with at least one inbound link."""
    pages, chunks = out_dir / "pages.jsonl", out_dir / "chunks.jsonl"
    if not pages.exists() or not chunks.exists():
        return 0
    graph = LinkGraph(cap=cap)
    graph.add_identities(pages)
    graph.add_links(pages, TemplateLinks(out_dir, fields=GRAPH_LINK_FIELDS))
    owners = _fragment_owners(graph, chunks)
    linked = 0

    def update(record: dict[str, Any]) -> dict[str, Any]:
        nonlocal linked
        meta = record.get("metadata")
        if not isinstance(meta, dict):
            return record
        canonical = str(meta.get("canonical_url") or "")
        anchors = graph.chunk_anchors(meta) + owners.get(str(record.get("id")), [])
        links, count = graph.for_chunk(canonical, list(dict.fromkeys(anchors)))
        meta["inbound_links"], meta["inbound_count"] = links, count
        linked += count > 0
        return record

    rewrite_jsonl(chunks, update)
    logger.info("docscrawl: inbound links on %d chunks from %d link targets",
                linked, len(graph.targets))
    return linked


def _fragment_owners(graph: LinkGraph, chunks: Path) -> dict[str, list[str]]:
    """Chunk id -> linked fragments that name a heading inside the chunk rather than the
    chunk's own anchor (a subsection merged into its parent's chunk)."""
    linked: dict[str, set[str]] = {}
    for target, fragment in graph.targets:
        if fragment:
            linked.setdefault(target, set()).add(fragment)
    if not linked:
        return {}
    by_page: dict[str, list[tuple[list[str], str]]] = {}
    with chunks.open(encoding="utf-8") as handle:
        for line in handle:
            meta = _field(line, "metadata")
            chunk_id = _field(line, "id")
            if isinstance(meta, dict) and meta.get("canonical_url") in linked:
                by_page.setdefault(meta["canonical_url"], []).append(
                    (list(meta.get("heading_path") or []), str(chunk_id)))
    owners: dict[str, list[str]] = {}
    for canonical, fragments in linked.items():
        page_chunks = by_page.get(canonical, [])
        paths = graph.anchor_paths.get(canonical, {})
        for fragment in fragments:
            path = paths.get(fragment)
            owner = _section_owner(page_chunks, path) if path is not None else None
            if owner is not None:
                owners.setdefault(page_chunks[owner][1], []).append(fragment)
    return owners
