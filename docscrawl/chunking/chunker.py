"""Page -> retrieval chunks along its structure (rules in the README, "Chunks").

One chunk per heading section, so a chunk cites its exact section: a section whose whole
subtree fits the target is one chunk; otherwise no chunk spans two sibling sections, except
runs of tiny ones (listed in `metadata.sections` under their common parent); long sections
are split at block boundaries, never inside a block; a code block stays with the prose
before it; a table over the hard maximum is split by rows with its header repeated.
Pure: no Scrapy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from docscrawl.chunking.units import (
    Piece,
    Section,
    blocks_from_markdown,
    count_tokens,
    section_tree,
)
from docscrawl.chunking.volatile import normalize_for_hash
from docscrawl.dedup.content import normalize_markdown, sha256_id
from docscrawl.extract.model import PageExtract

__all__ = ["DEFAULT_TARGET_TOKENS", "ChunkMetadata", "ChunkRecord", "ChunkSection", "chunk_id",
           "chunk_label", "chunk_page", "count_tokens", "section_citation"]

DEFAULT_TARGET_TOKENS = 400
MAX_FACTOR = 2  # default hard maximum: MAX_FACTOR * target
TAIL_FRACTION = 4  # a last split part under target/4 joins the previous one when it fits
TINY_FRACTION = 10  # a section under target/10 tokens may share a chunk with its neighbours
_FENCE_LANG = re.compile(r"^(?:`{3,}|~{3,})([^\s`]+)", re.M)


class ChunkSection(TypedDict):
    """One section a chunk holds (`metadata.sections`, when it holds more than one)."""

    heading_path: list[str]
    anchor: str | None
    block_range: list[int]  # [first, last] block ordinal


class ChunkMetadata(TypedDict):
    """A chunk's `metadata`: where it comes from and what it cites (the contract's names)."""

    source_url: str  # the canonical URL, with the section's anchor when it has one
    canonical_url: str
    title: str | None
    version: str | None
    heading_path: list[str]
    breadcrumbs: list[str]
    region: str
    chunk_index: int
    block_range: list[int]  # [first, last] block ordinal
    retrieved_at: str
    content_hash: str
    has_code: bool
    code_languages: list[str]
    table_part: list[int] | None  # [part, of] when the chunk is part of a split table
    block_part: list[int] | None  # [part, of] when it is part of any split block
    anchor: str | None
    sections: NotRequired[list[ChunkSection]]
    # added to the written line at the end of the crawl (`docscrawl.export.inbound`)
    inbound_links: NotRequired[list[dict[str, Any]]]
    inbound_count: NotRequired[int]


class ChunkRecord(TypedDict):
    """One chunks.jsonl line."""

    id: str
    page_id: str
    text: str
    markdown: str
    token_count: int
    oversized: bool
    metadata: ChunkMetadata


@dataclass(slots=True)
class _Group:
    """Pieces that become one chunk, with the heading path and anchor they sit under."""

    path: list[str]
    anchor: str | None
    pieces: list[Piece]

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)


# ---- planning -------------------------------------------------------------------------


def _units(pieces: list[Piece], hard_max: int) -> list[list[Piece]]:
    """Pieces glued together: a heading to what follows it, a code block to the block
    before it (its introducing prose, or the command it is the output of). A glued unit over
    `hard_max` is re-packed piece by piece within `hard_max`, a heading still with the piece
    after it (a chunk holding a heading alone cites nothing)."""
    units: list[list[Piece]] = []
    for piece in pieces:
        if units and (units[-1][-1].kind == "heading" or piece.kind == "code"):
            units[-1].append(piece)
        else:
            units.append([piece])
    out: list[list[Piece]] = []
    for unit in units:
        if len(unit) > 1 and sum(p.tokens for p in unit) > hard_max:
            parts: list[list[Piece]] = []
            for piece in unit:
                if parts and parts[-1][-1].kind == "heading":
                    parts[-1].append(piece)
                else:
                    parts.append([piece])
            out.extend(_pack(parts, hard_max, hard_max))
        else:
            out.append(unit)
    return out


def _pack(units: list[list[Piece]], target: int, hard_max: int) -> list[list[Piece]]:
    """Units packed in order into about equal chunks: as many chunks as `target` requires,
    a chunk closed once it reaches its even share and never grown past `target` (a unit
    alone may be larger). A small tail joins the previous chunk within `hard_max` unless
    it continues a split block."""
    sizes = [sum(p.tokens for p in unit) for unit in units]
    share = -(-sum(sizes) // max(1, -(-sum(sizes) // target)))  # ceil(total / n_chunks)
    chunks: list[list[Piece]] = []
    size = 0
    for unit, unit_tokens in zip(units, sizes, strict=True):
        if chunks and size < share and size + unit_tokens <= target:
            chunks[-1].extend(unit)
            size += unit_tokens
        else:
            chunks.append(list(unit))
            size = unit_tokens
    if len(chunks) > 1 and chunks[-1][0].part is None:
        tail = sum(p.tokens for p in chunks[-1])
        before = sum(p.tokens for p in chunks[-2])
        if tail < target // TAIL_FRACTION and before + tail <= hard_max:
            chunks[-2].extend(chunks.pop())
    return chunks


def _plan(section: Section, target: int, hard_max: int,
          sizes: dict[int, int] | None = None) -> list[_Group]:
    """Groups of a section: whole when it fits, else its own content and its children,
    each a group of its own; only tiny groups share (see `_join_tiny`). `sizes`: each
    section's subtree tokens by `id` (`_subtree_sizes`), counted once for the page."""
    sizes = sizes if sizes is not None else _subtree_sizes(section)
    if sizes[id(section)] <= target:
        return [_whole(section)]
    items: list[_Group] = []
    if section.pieces:
        if section.own_tokens <= target:
            items.append(_Group(section.path, section.anchor, list(section.pieces)))
        else:
            for pieces in _pack(_units(section.pieces, hard_max), target, hard_max):
                items.append(_Group(section.path, section.anchor, pieces))
    for child in section.children:
        if sizes[id(child)] <= target:
            items.append(_whole(child))
        else:
            items.extend(_plan(child, target, hard_max, sizes))
    return _join_tiny(items, section, target, hard_max)


def _subtree_sizes(section: Section, sizes: dict[int, int] | None = None) -> dict[int, int]:
    """`Section.subtree_tokens` of the section and of every section under it, by `id`,
    each subtree summed once (asked level by level, a deep page summed its leaves again at
    every level above them)."""
    sizes = sizes if sizes is not None else {}
    total = section.own_tokens
    for child in section.children:
        _subtree_sizes(child, sizes)
        total += sizes[id(child)]
    sizes[id(section)] = total
    return sizes


def _whole(section: Section) -> _Group:
    """A whole subtree as one group, under the deepest heading common to all its content."""
    filled = [s for s in _walk(section) if s.pieces]
    if not filled:
        return _Group(section.path, section.anchor, [])
    path = filled[0].path
    for other in filled[1:]:
        path = _common_prefix(path, other.path)
    anchor = next((s.anchor for s in filled if s.path == path), section.anchor)
    return _Group(path, anchor, section.subtree_pieces())


def _walk(section: Section) -> list[Section]:
    out = [section]
    for child in section.children:
        out.extend(_walk(child))
    return out


def _join_tiny(items: list[_Group], parent: Section, target: int, hard_max: int) -> list[_Group]:
    """A section's groups, each a chunk, except tiny ones (under target / TINY_FRACTION):
    the section's own tiny intro (a bare heading, one line) joins the group after it, and a
    run of tiny neighbours is packed into about equal chunks within `target`. A shared
    chunk takes the heading path common to its parts and lists each in `sections`."""
    tiny = max(1, target // TINY_FRACTION)
    if (parent.path and parent.pieces and len(items) > 1 and items[0].tokens < tiny
            and items[0].pieces[0] is parent.pieces[0]
            and items[0].tokens + items[1].tokens <= hard_max):
        items = [_joined(items[0], items[1], parent), *items[2:]]
    out: list[_Group] = []
    run: list[_Group] = []
    for group in [*items, None]:
        if group is not None and group.tokens < tiny:
            run.append(group)
            continue
        if run:
            out.extend(_pack_run(run, parent, target))
            run = []
        if group is not None:
            out.append(group)
    return out


def _pack_run(run: list[_Group], parent: Section, target: int) -> list[_Group]:
    """Consecutive tiny groups in about equal chunks, each within `target`."""
    total = sum(g.tokens for g in run)
    share = -(-total // max(1, -(-total // target)))  # ceil(total / n_chunks)
    out = [run[0]]
    for group in run[1:]:
        if out[-1].tokens < share and out[-1].tokens + group.tokens <= target:
            out[-1] = _joined(out[-1], group, parent)
        else:
            out.append(group)
    return out


def _joined(first: _Group, second: _Group, parent: Section) -> _Group:
    """Two neighbouring groups as one, under the heading path common to both."""
    path = _common_prefix(first.path, second.path)
    anchor = first.anchor if path == first.path else parent.anchor
    return _Group(path, anchor, first.pieces + second.pieces)


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


# ---- records --------------------------------------------------------------------------


def chunk_label(breadcrumbs: list[str], heading_path: list[str]) -> str:
    """`A > B | H1 > H2`: breadcrumb labels, ` | `, heading path; empty parts omitted."""
    parts = [" > ".join(p for p in part if p) for part in (breadcrumbs, heading_path)]
    return " | ".join(p for p in parts if p)


def chunk_id(canonical_url: str, heading_path: list[str], text: str, occurrence: int = 0) -> str:
    """`sha256:<hex>` of the canonical URL, the heading path and the normalized chunk text
    (volatile text ignored, see `docscrawl.chunking.volatile`); `occurrence` > 0 tells apart chunks
    of one page that would otherwise be identical."""
    normalized = normalize_markdown(normalize_for_hash(text, mask_links=False))
    key = "\x1e".join([canonical_url, "\x1f".join(heading_path), normalized])
    if occurrence:
        key += f"\x1e{occurrence}"
    return sha256_id(key)


def _code_languages(pieces: list[Piece], extract: PageExtract) -> tuple[bool, list[str]]:
    ordinals = {p.ordinal for p in pieces}
    found = [c for c in extract.code_blocks if c.block_ordinal in ordinals]
    languages = [c.language for c in found if c.language]
    if not found:  # extraction listed no code blocks: read the fences
        for piece in pieces:
            languages += _FENCE_LANG.findall(piece.markdown) if piece.kind == "code" else []
    has_code = bool(found) or any(p.kind == "code" for p in pieces)
    return has_code, list(dict.fromkeys(languages))


def chunk_page(
    extract: PageExtract,
    *,
    page_id: str,
    canonical_url: str,
    title: str | None,
    version: str | None,
    breadcrumbs: list[str],
    retrieved_at: str,
    content_hash: str,
    target_tokens: int = DEFAULT_TARGET_TOKENS,
    max_tokens: int | None = None,
) -> list[ChunkRecord]:
    """The page's chunks.jsonl records, in page order (fields as in the contract, plus
    `token_count`, `oversized`, `metadata.table_part` and `metadata.block_part`)."""
    if target_tokens < 1:
        raise ValueError(f"target_tokens must be positive, got {target_tokens}")
    hard_max = max(max_tokens or MAX_FACTOR * target_tokens, target_tokens)
    blocks = extract.blocks or blocks_from_markdown(extract.markdown)
    tree = section_tree(blocks, target=target_tokens, hard_max=hard_max)
    groups = [g for g in _plan(tree, target_tokens, hard_max) if g.pieces]
    owner = {p.ordinal: s for s in _walk(tree) for p in s.pieces}
    records: list[ChunkRecord] = []
    seen: dict[str, int] = {}
    for index, group in enumerate(groups):
        markdown = "\n\n".join(p.markdown for p in group.pieces)
        label = chunk_label(breadcrumbs, group.path)
        text = f"{label}\n{markdown}" if label else markdown
        base = chunk_id(canonical_url, group.path, text)
        occurrence = seen.get(base, 0)
        seen[base] = occurrence + 1
        has_code, languages = _code_languages(group.pieces, extract)
        tokens = sum(p.tokens for p in group.pieces)  # = count_tokens(markdown): additive
        parts = {p.part for p in group.pieces if p.part}
        part = list(parts.pop()) if len(parts) == 1 else None
        table = part is not None and any(p.kind == "table" for p in group.pieces if p.part)
        records.append({
            "id": chunk_id(canonical_url, group.path, text, occurrence) if occurrence else base,
            "page_id": page_id,
            "text": text,
            "markdown": markdown,
            "token_count": tokens,
            "oversized": tokens > hard_max,
            "metadata": {
                "source_url": f"{canonical_url}#{group.anchor}" if group.anchor else canonical_url,
                "canonical_url": canonical_url,
                "title": title,
                "version": version,
                "heading_path": list(group.path),
                "breadcrumbs": list(breadcrumbs),
                "region": "main_content",
                "chunk_index": index,
                "block_range": [group.pieces[0].ordinal, group.pieces[-1].ordinal],
                "retrieved_at": retrieved_at,
                "content_hash": content_hash,
                "has_code": has_code,
                "code_languages": languages,
                "table_part": part if table else None,
                "block_part": part,
                "anchor": group.anchor,
            },
        })
        held = _sections(group.pieces, owner)
        if len(held) > 1:
            records[-1]["metadata"]["sections"] = held
    return records


def _sections(pieces: list[Piece], owner: dict[int, Section]) -> list[ChunkSection]:
    """The sections a chunk holds, in order: heading path, anchor, block range."""
    held: dict[int, ChunkSection] = {}
    for piece in pieces:
        section = owner[piece.ordinal]
        entry = held.get(id(section))
        if entry is None:
            held[id(section)] = {"heading_path": list(section.path), "anchor": section.anchor,
                                 "block_range": [piece.ordinal, piece.ordinal]}
        else:
            entry["block_range"][1] = piece.ordinal
    return list(held.values())


def chunk_anchors(metadata: dict[str, Any]) -> list[str]:
    """Anchors of the sections a chunk holds: its own (or its source URL's fragment) and
    its listed sections'. The inbound-link pass and the search index both ask this."""
    source = str(metadata.get("source_url") or "")
    found = [str(metadata.get("anchor") or (source.split("#", 1)[1] if "#" in source else ""))]
    found += [str(s.get("anchor")) for s in metadata.get("sections") or ()
              if isinstance(s, dict) and s.get("anchor")]
    return [a for a in found if a]


def section_citation(record: dict[str, Any], block_ordinal: int) -> tuple[list[str], str]:
    """(heading path, URL) to cite for a block a search matched in a chunk: the listed
    section whose `block_range` holds it, else the chunk's own label and `source_url`."""
    meta = record["metadata"]
    for section in meta.get("sections") or ():
        first, last = section["block_range"]
        if first <= block_ordinal <= last:
            anchor = section["anchor"]
            url = meta["canonical_url"] + (f"#{anchor}" if anchor else "")
            return list(section["heading_path"]), url
    return list(meta["heading_path"]), meta["source_url"]
